/*
 * test_flat.c — the flat graph form: round trip, and rejection of truncated or corrupt buffers
 * (which must never crash a reader, checked also by random corruption).
 */
#include "test_util.h"
#include "pr_graph_flat.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Builds a random weighted graph with out-edges into g. */
static void
build_random(PrGraph *g, bool weighted, bool out_edges, uint64_t seed)
{
	EdgeList	e;
	PrBuildOptions opt = {false, out_edges, 1, NULL, NULL, NULL};
	PrError		err;

	edges_random(&e, 500, 120, 1, 3, weighted, seed);
	if (pr_graph_build(e.src, e.dst, e.weight, e.m, &opt, &pr_malloc_allocator, g, &err) != PR_OK)
	{
		fprintf(stderr, "build failed: %s\n", err.message);
		exit(2);
	}
	edges_free(&e);
}

/* Writes g into a fresh 8-byte-aligned buffer. */
static void *
write_flat(const PrGraph *g, size_t *size)
{
	void	   *buf;

	*size = pr_graph_flat_size(g);
	buf = aligned_alloc(8, (*size + 7) & ~(size_t) 7);
	pr_graph_write_flat(g, buf);
	return buf;
}

/* True when two graphs hold the same arrays. */
static bool
graphs_equal(const PrGraph *a, const PrGraph *b)
{
	size_t		n = (size_t) a->n_nodes,
				m = (size_t) a->n_edges;

	if (a->n_nodes != b->n_nodes || a->n_edges != b->n_edges || a->weighted != b->weighted ||
		a->has_out_edges != b->has_out_edges || a->n_dangling != b->n_dangling)
		return false;
	if (memcmp(a->node_ids, b->node_ids, n * 8) != 0 || memcmp(a->in_ptr, b->in_ptr, (n + 1) * 8) != 0 ||
		memcmp(a->in_src, b->in_src, m * 4) != 0 || memcmp(a->out_strength, b->out_strength, n * 8) != 0 ||
		memcmp(a->dangling, b->dangling, (size_t) a->n_dangling * 4) != 0)
		return false;
	if (a->weighted && memcmp(a->in_weight, b->in_weight, m * 8) != 0)
		return false;
	if (a->has_out_edges && (memcmp(a->out_ptr, b->out_ptr, (n + 1) * 8) != 0 ||
							 memcmp(a->out_dst, b->out_dst, m * 4) != 0))
		return false;
	if (a->has_out_edges && a->weighted && memcmp(a->out_weight, b->out_weight, m * 8) != 0)
		return false;
	return true;
}

/*
 * A graph whose edge arrays pass the parallel-copy threshold (64 MB: 17 M weighted edges) writes
 * the same bytes with 1, 3 and 8 copy threads, and views back as the graph.
 */
void
test_flat_parallel_write(void)
{
	EdgeList	e;
	PrBuildOptions opt = {false, false, 2, NULL, NULL, NULL};
	PrGraph		g,
				view;
	PrError		err;
	size_t		size;
	char	   *one;
	const int	threads[] = {3, 8};

	edges_random(&e, (size_t) 17 << 20, 1 << 20, 1, 1, true, 99);
	CHECK(pr_graph_build(e.src, e.dst, e.weight, e.m, &opt, &pr_malloc_allocator, &g, &err) == PR_OK);
	edges_free(&e);
	size = pr_graph_flat_size(&g);
	one = aligned_alloc(8, (size + 7) & ~(size_t) 7);
	pr_graph_write_flat(&g, one);
	for (int i = 0; i < 2; i++)
	{
		char	   *par = aligned_alloc(8, (size + 7) & ~(size_t) 7);

		memset(par, 0xAB, size);
		pr_graph_write_flat_threads(&g, par, threads[i]);
		CHECKF(memcmp(one, par, size) == 0, "%d copy threads", threads[i]);
		free(par);
	}
	CHECK(pr_graph_view_flat(one, size, &view, &err) == PR_OK && graphs_equal(&g, &view));
	free(one);
	pr_graph_free(&g, &pr_malloc_allocator);
}

/*
 * The threaded checks of an unweighted graph without out-edge arrays (rows sorted, out-strengths
 * counted from the in-edges): a good graph views back; a forged out-strength, an unsorted row and a
 * node without edges are rejected as the sequential checks reject them.
 */
void
test_flat_threaded_checks(void)
{
	EdgeList	e;
	PrBuildOptions opt = {false, false, 2, NULL, NULL, NULL};
	PrGraph		g,
				view;
	PrError		err;
	size_t		size;
	char	   *buf,
			   *copy;
	PrGraph		forged;
	int64_t		row = -1;

	edges_random(&e, 200000, 40000, 1, 1, false, 17);
	CHECK(pr_graph_build(e.src, e.dst, NULL, e.m, &opt, &pr_malloc_allocator, &g, &err) == PR_OK);
	edges_free(&e);
	buf = write_flat(&g, &size);
	CHECK(pr_graph_view_flat_threads(buf, size, 4, &view, &err) == PR_OK && graphs_equal(&g, &view));
	copy = malloc(size);

	/* an out-strength one too large */
	memcpy(copy, buf, size);
	CHECK(pr_graph_view_flat_header(copy, size, &forged, &err) == PR_OK);
	((double *) forged.out_strength)[g.n_nodes / 2] += 1.0;
	memset(&err, 0, sizeof(err));
	CHECK(pr_graph_view_flat_threads(copy, size, 4, &view, &err) == PR_ERR_INVALID);
	CHECKF(strstr(err.message, "is not the sum of its out-weights") != NULL, "message \"%s\"", err.message);

	/* a row whose first two sources are swapped */
	for (int64_t v = g.n_nodes - 1; v >= 0 && row < 0; v--)
		if (g.in_ptr[v + 1] - g.in_ptr[v] >= 2 && g.in_src[g.in_ptr[v]] != g.in_src[g.in_ptr[v] + 1])
			row = v;
	CHECK(row >= 0);
	memcpy(copy, buf, size);
	CHECK(pr_graph_view_flat_header(copy, size, &forged, &err) == PR_OK);
	{
		int32_t    *src = (int32_t *) forged.in_src;
		int32_t		t = src[g.in_ptr[row]];

		src[g.in_ptr[row]] = src[g.in_ptr[row] + 1];
		src[g.in_ptr[row] + 1] = t;
	}
	memset(&err, 0, sizeof(err));
	CHECK(pr_graph_view_flat_threads(copy, size, 4, &view, &err) == PR_ERR_INVALID);
	CHECKF(strstr(err.message, "unsorted in-edge rows") != NULL, "message \"%s\"", err.message);
	free(copy);
	free(buf);
	pr_graph_free(&g, &pr_malloc_allocator);
}

/* Write then view gives the same graph, for every combination of weights and out-edges. */
void
test_flat_round_trip(void)
{
	for (int variant = 0; variant < 4; variant++)
	{
		PrGraph		g,
					view;
		PrError		err;
		size_t		size;
		void	   *buf;

		build_random(&g, variant & 1, variant & 2, 7 + variant);
		buf = write_flat(&g, &size);
		CHECK(pr_graph_view_flat(buf, size, &view, &err) == PR_OK);
		CHECKF(graphs_equal(&g, &view), "variant %d", variant);
		CHECK((void *) view.in_ptr > buf && (char *) view.in_ptr < (char *) buf + size);
		free(buf);
		pr_graph_free(&g, &pr_malloc_allocator);
	}
	{
		/* the empty graph round-trips too */
		PrGraph		g,
					view;
		PrError		err;
		size_t		size;
		void	   *buf;

		CHECK(pr_graph_build(NULL, NULL, NULL, 0, NULL, &pr_malloc_allocator, &g, &err) == PR_OK);
		buf = write_flat(&g, &size);
		CHECK(pr_graph_view_flat(buf, size, &view, &err) == PR_OK && view.n_nodes == 0);
		free(buf);
		pr_graph_free(&g, &pr_malloc_allocator);
	}
}

/* Views a modified copy of buf and expects PR_ERR_INVALID with a message containing want. */
static void
expect_invalid(const void *buf, size_t size, const char *want, const char *what)
{
	PrGraph		view;
	PrError		err;

	memset(&err, 0, sizeof(err));
	CHECKF(pr_graph_view_flat(buf, size, &view, &err) == PR_ERR_INVALID, "%s accepted", what);
	CHECKF(strstr(err.message, want) != NULL, "%s: message \"%s\"", what, err.message);
	CHECK(view.n_nodes == 0 && view.in_ptr == NULL);
}

/* Truncation, bad magic/version/flags/counts/offsets and bad contents are each rejected. */
void
test_flat_corrupt(void)
{
	PrGraph		g;
	size_t		size;
	void	   *buf;
	void	   *copy;
	PrFlatHeader *h;

	build_random(&g, true, true, 99);
	buf = write_flat(&g, &size);
	copy = aligned_alloc(8, size);

#define FRESH() (memcpy(copy, buf, size), h = (PrFlatHeader *) copy)
	FRESH();
	expect_invalid(copy, size - 8, "declares", "truncated by 8 bytes");
	expect_invalid(copy, sizeof(PrFlatHeader) - 1, "shorter than its header", "shorter than a header");
	expect_invalid((char *) copy + 4, size - 8, "aligned", "misaligned");
	FRESH();
	h->magic ^= 1;
	expect_invalid(copy, size, "magic", "bad magic");
	FRESH();
	h->version = 2;
	expect_invalid(copy, size, "version", "bad version");
	FRESH();
	h->flags |= 8;
	expect_invalid(copy, size, "flags", "unknown flag");
	FRESH();
	h->n_nodes = PR_MAX_NODES + 1;
	expect_invalid(copy, size, "counts", "too many nodes");
	FRESH();
	h->n_edges += 1000000;
	expect_invalid(copy, size, "counts", "too many edges");
	FRESH();
	h->offset[PR_FLAT_IN_SRC] = size - 8;
	expect_invalid(copy, size, "offset", "in_src past the end");
	FRESH();
	h->offset[PR_FLAT_IN_WEIGHT] = UINT64_MAX - 7;
	expect_invalid(copy, size, "offset", "huge offset");
	FRESH();
	h->offset[PR_FLAT_NODE_IDS] += 4;
	expect_invalid(copy, size, "offset", "misaligned offset");
	FRESH();
	h->offset[PR_FLAT_OUT_PTR] = 0;
	expect_invalid(copy, size, "offset", "missing out_ptr");
	FRESH();
	((int64_t *) ((char *) copy + h->offset[PR_FLAT_IN_PTR]))[3] = -1;
	expect_invalid(copy, size, "row pointers", "decreasing in_ptr");
	FRESH();
	((int64_t *) ((char *) copy + h->offset[PR_FLAT_IN_PTR]))[g.n_nodes] -= 1;
	expect_invalid(copy, size, "row pointers", "in_ptr not ending at m");
	FRESH();
	((int32_t *) ((char *) copy + h->offset[PR_FLAT_IN_SRC]))[5] = (int32_t) g.n_nodes;
	expect_invalid(copy, size, "out of range", "in_src out of range");
	FRESH();
	((int32_t *) ((char *) copy + h->offset[PR_FLAT_OUT_DST]))[0] = -1;
	expect_invalid(copy, size, "out of range", "out_dst negative");
	FRESH();
	((int64_t *) ((char *) copy + h->offset[PR_FLAT_NODE_IDS]))[1] = INT64_MIN;
	expect_invalid(copy, size, "unsorted", "unsorted ids");
	FRESH();
	((double *) ((char *) copy + h->offset[PR_FLAT_IN_WEIGHT]))[0] = NAN;
	expect_invalid(copy, size, "weight", "NaN weight");
	FRESH();
	h->n_dangling = 0;
	expect_invalid(copy, size, "layout", "dangling count");
	FRESH();
	h->reserved = 1;
	expect_invalid(copy, size, "layout", "reserved field set");
	FRESH();
	h->offset[PR_FLAT_DANGLING] = h->offset[PR_FLAT_OUT_STRENGTH];
	expect_invalid(copy, size, "layout", "overlapping arrays");
	FRESH();
	{
		/* in-edge 0 is the first out-edge of its source: zero it in both arrays */
		int32_t		u = ((int32_t *) ((char *) copy + h->offset[PR_FLAT_IN_SRC]))[0];
		int64_t		pos = ((int64_t *) ((char *) copy + h->offset[PR_FLAT_OUT_PTR]))[u];

		((double *) ((char *) copy + h->offset[PR_FLAT_IN_WEIGHT]))[0] = 0.0;
		((double *) ((char *) copy + h->offset[PR_FLAT_OUT_WEIGHT]))[pos] = 0.0;
		expect_invalid(copy, size, "out-strength", "weight 0 against its stored sum");
	}
	FRESH();
	((double *) ((char *) copy + h->offset[PR_FLAT_OUT_STRENGTH]))[2] += 1.0;
	expect_invalid(copy, size, "out-strength", "out-strength not the sum");
	FRESH();
	((double *) ((char *) copy + h->offset[PR_FLAT_IN_WEIGHT]))[0] = 1e308;
	expect_invalid(copy, size, "in-weight sum", "weight 1e308");
	FRESH();
	((double *) ((char *) copy + h->offset[PR_FLAT_OUT_WEIGHT]))[0] += 1.0;
	expect_invalid(copy, size, "out-edges do not match", "out-weight unlike its in-weight");
	FRESH();
	{
		int32_t    *dst = (int32_t *) ((char *) copy + h->offset[PR_FLAT_OUT_DST]);
		int64_t    *out_ptr = (int64_t *) ((char *) copy + h->offset[PR_FLAT_OUT_PTR]);
		int64_t		u = 0;

		while (out_ptr[u + 1] - out_ptr[u] < 2 || dst[out_ptr[u]] == dst[out_ptr[u] + 1])
			u++;				/* a row with two different destinations */
		dst[out_ptr[u]] = dst[out_ptr[u] + 1];
		expect_invalid(copy, size, "out-edges do not match", "out-edge destination changed");
	}
	FRESH();
	{
		int32_t    *src = (int32_t *) ((char *) copy + h->offset[PR_FLAT_IN_SRC]);
		int64_t    *in_ptr = (int64_t *) ((char *) copy + h->offset[PR_FLAT_IN_PTR]);
		int64_t		v = 0;
		int32_t		first;

		while (in_ptr[v + 1] - in_ptr[v] < 2 || src[in_ptr[v]] == src[in_ptr[v] + 1])
			v++;				/* a row with two different sources */
		first = src[in_ptr[v]];
		src[in_ptr[v]] = src[in_ptr[v] + 1];
		src[in_ptr[v] + 1] = first;
		expect_invalid(copy, size, "unsorted in-edge rows", "in-edge row descending");
	}
	{
		/*
		 * The only out-edge of a source given weight w in the in- and out-edge arrays and as the
		 * source's out-strength: self-consistent, so only the weight's range can refuse it.  The
		 * smallest normal double is a weight the build can store; 5e-324 (subnormal) is not.
		 */
		int64_t    *out_ptr;
		int32_t    *out_dst;
		int64_t    *in_ptr;
		int32_t    *in_src;
		int64_t		u = 0;
		const double weights[] = {DBL_MIN, 5e-324, DBL_MIN / 2};

		FRESH();
		out_ptr = (int64_t *) ((char *) copy + h->offset[PR_FLAT_OUT_PTR]);
		out_dst = (int32_t *) ((char *) copy + h->offset[PR_FLAT_OUT_DST]);
		in_ptr = (int64_t *) ((char *) copy + h->offset[PR_FLAT_IN_PTR]);
		in_src = (int32_t *) ((char *) copy + h->offset[PR_FLAT_IN_SRC]);
		while (out_ptr[u + 1] - out_ptr[u] != 1)
			u++;
		for (int i = 0; i < 3; i++)
		{
			int32_t		v = out_dst[out_ptr[u]];
			int64_t		e = in_ptr[v];

			FRESH();
			while (in_src[e] != u)
				e++;
			((double *) ((char *) copy + h->offset[PR_FLAT_IN_WEIGHT]))[e] = weights[i];
			((double *) ((char *) copy + h->offset[PR_FLAT_OUT_WEIGHT]))[out_ptr[u]] = weights[i];
			((double *) ((char *) copy + h->offset[PR_FLAT_OUT_STRENGTH]))[u] = weights[i];
			if (i == 0)
			{
				PrGraph		view;
				PrError		err;

				CHECKF(pr_graph_view_flat(copy, size, &view, &err) == PR_OK,
					   "weight DBL_MIN refused: %s", err.message);
			}
			else
				expect_invalid(copy, size, "subnormal", "subnormal weight and out-strength");
		}
	}
#undef FRESH
	free(copy);
	free(buf);
	pr_graph_free(&g, &pr_malloc_allocator);
}

/*
 * Random bit flips: view either rejects the buffer or yields a graph PageRank can run on (nearly
 * every flip breaks a checked invariant, so the intact buffers are most of those accepted).
 */
void
test_flat_fuzz(void)
{
	PrGraph		g;
	size_t		size;
	void	   *buf;
	void	   *copy;
	uint64_t	state = 12345;
	int			accepted = 0,
				rejected = 0;
	PrEngine   *engine;
	PrError		err;
	double	   *scores;

	build_random(&g, true, true, 5);
	buf = write_flat(&g, &size);
	copy = aligned_alloc(8, size);
	engine = pr_cpu_engine_create(2, &pr_malloc_allocator, &err);
	scores = malloc(sizeof(double) * (size_t) g.n_nodes);
	for (int trial = 0; trial < 3000; trial++)
	{
		PrGraph		view;
		size_t		len = size;
		int			flips = (int) (test_rand(&state) % 5);	/* 0: the intact buffer */

		memcpy(copy, buf, size);
		for (int f = 0; f < flips; f++)
		{
			/* favour the header, where damage is most dangerous */
			size_t		pos = (test_rand(&state) % 2) ? test_rand(&state) % sizeof(PrFlatHeader)
				: test_rand(&state) % size;

			((unsigned char *) copy)[pos] ^= (unsigned char) (1u << (test_rand(&state) % 8));
		}
		if (test_rand(&state) % 5 == 0)
			len = test_rand(&state) % size;
		if (pr_graph_view_flat(copy, len, &view, &err) == PR_OK)
		{
			PrRestart	r = {true, 1, NULL, NULL, NULL, 0, NULL, NULL};
			PrIterOptions o = test_iter_options(1e-8, 50);
			PrRunStats	st;

			accepted++;
			if (view.n_nodes <= g.n_nodes)
				CHECK(pr_pagerank(engine, &view, 0.85, &r, &o, scores, &st, &err) == PR_OK);
		}
		else
			rejected++;
	}
	CHECK(accepted > 0 && rejected > 0);
	engine->ops->release(engine);
	free(scores);
	free(copy);
	free(buf);
	pr_graph_free(&g, &pr_malloc_allocator);
}
