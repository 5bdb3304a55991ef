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

/* Builds g from the edge list e (with out-edge arrays when asked) on 2 threads, and frees e. */
static void
build_edges(EdgeList *e, bool out_edges, PrGraph *g)
{
	PrBuildOptions opt = {false, out_edges, 2, NULL, NULL, NULL};
	PrError		err;

	if (pr_graph_build(e->src, e->dst, e->weight, e->m, &opt, &pr_malloc_allocator, g, &err) != PR_OK)
	{
		fprintf(stderr, "build failed: %s\n", err.message);
		exit(2);
	}
	edges_free(e);
}

/* Builds a small random graph (weighted and with out-edges when asked) into g. */
static void
build_random(PrGraph *g, bool weighted, bool out_edges, uint64_t seed)
{
	EdgeList	e;

	edges_random(&e, 500, 120, 1, 3, weighted, seed);
	build_edges(&e, out_edges, g);
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

/* The thread counts the threaded checks run on in the tests. */
static const int check_threads[] = {1, 2, 4, 16};

/*
 * Expects every thread count of pr_graph_view_flat_threads to reject buf with a message containing
 * want, and pr_graph_view_flat (counted) with one containing want_exact.
 */
static void
expect_rejected(const void *buf, size_t size, const char *want, const char *want_exact,
				const char *what)
{
	PrGraph		view;
	PrError		err;

	for (size_t i = 0; i < sizeof(check_threads) / sizeof(check_threads[0]); i++)
	{
		memset(&err, 0, sizeof(err));
		CHECKF(pr_graph_view_flat_threads(buf, size, check_threads[i], &view, &err) == PR_ERR_INVALID,
			   "%s accepted on %d threads", what, check_threads[i]);
		CHECKF(strstr(err.message, want) != NULL, "%s on %d threads: message \"%s\"", what,
			   check_threads[i], err.message);
		CHECK(view.n_nodes == 0 && view.in_ptr == NULL);
	}
	memset(&err, 0, sizeof(err));
	CHECKF(pr_graph_view_flat(buf, size, &view, &err) == PR_ERR_INVALID, "%s accepted counted", what);
	CHECKF(strstr(err.message, want_exact) != NULL, "%s counted: message \"%s\"", what, err.message);
}

/* Expects every thread count of pr_graph_view_flat_threads to view buf back as g. */
static void
expect_viewed(const void *buf, size_t size, const PrGraph *g)
{
	PrGraph		view;
	PrError		err;

	for (size_t i = 0; i < sizeof(check_threads) / sizeof(check_threads[0]); i++)
		CHECKF(pr_graph_view_flat_threads(buf, size, check_threads[i], &view, &err) == PR_OK &&
			   graphs_equal(g, &view), "%d threads", check_threads[i]);
}

/* Node index of an id in g, or -1. */
static int64_t
node_of_id(const PrGraph *g, int64_t id)
{
	return reference_index(g->node_ids, g->n_nodes, id);
}

/*
 * The checks of an unweighted graph without out-edge arrays large enough for the threaded passes
 * and the out-degree fingerprint, on 1, 2, 4 and 16 threads: a good graph views back, and every
 * corruption the passes look for is rejected, as pr_graph_view_flat rejects it — out-strengths
 * off by one, moved between two nodes (the sum kept: only the fingerprint sees it), not whole, or
 * negative; a row out of order inside a part and across each part boundary; a source out of
 * range; unsorted ids; bad row pointers; a node without edges (the out-strengths consistent);
 * dangling lists out of order, naming a node with edges, or out of range.  Then a weighted graph
 * with out-edge arrays, whose out-strengths are counted after the passes on any thread count.
 */
void
test_flat_threaded_checks(void)
{
	EdgeList	e;
	PrGraph		g,
				f;
	PrError		err;
	size_t		size;
	char	   *buf,
			   *copy;
	int64_t		n,
				m,
				row = -1,
				lonely,
				target;
	const int64_t lonely_ids[] = {-1000000, 1000000};	/* one edge each, to id 0, and none in */
	int			boundaries = 0;

	edges_random(&e, 200000, 40000, 0, 1, false, 17);
	for (int i = 0; i < 2; i++)
	{
		e.src[i] = lonely_ids[i];
		e.dst[i] = 0;
	}
	build_edges(&e, false, &g);
	n = g.n_nodes;
	m = g.n_edges;
	CHECK(n + m >= ((int64_t) 1 << 16) && g.n_dangling > 2);
	buf = write_flat(&g, &size);
	expect_viewed(buf, size, &g);
	copy = aligned_alloc(8, (size + 7) & ~(size_t) 7);
#define FORGE() (memcpy(copy, buf, size), pr_graph_view_flat_header(copy, size, &f, &err))
#define STRENGTH(u) (((double *) f.out_strength)[u])
#define SRC(i) (((int32_t *) f.in_src)[i])

	/* out-strengths */
	CHECK(FORGE() == PR_OK);
	STRENGTH(n / 2) += 1.0;
	expect_rejected(copy, size, "out-strengths are not the out-degrees",
					"is not the sum of its out-weights", "an out-strength one too large");
	for (int trial = 0; trial < 3; trial++)
	{
		int64_t		a = trial,
					b = n - 1 - trial;

		while (g.out_strength[a] == 0.0)
			a++;
		CHECK(FORGE() == PR_OK);
		STRENGTH(a) -= 1.0;		/* one out-edge moved from a to b: the sum stays m */
		STRENGTH(b) += 1.0;
		expect_rejected(copy, size, "out-strengths are not the out-degrees",
						"is not the sum of its out-weights", "an out-degree moved between two nodes");
	}
	CHECK(FORGE() == PR_OK);
	STRENGTH(3) += 0.5;
	expect_rejected(copy, size, "not an out-degree", "is not the sum of its out-weights",
					"an out-strength that is not whole");
	CHECK(FORGE() == PR_OK);
	STRENGTH(n - 1) = -1.0;
	expect_rejected(copy, size, "invalid out-strength", "invalid out-strength", "a negative out-strength");

	/* rows: the last row with two different sources, then one across each part boundary */
	for (int64_t v = n - 1; v >= 0 && row < 0; v--)
		if (g.in_ptr[v + 1] - g.in_ptr[v] >= 2 && g.in_src[g.in_ptr[v]] != g.in_src[g.in_ptr[v] + 1])
			row = v;
	CHECK(row >= 0);
	CHECK(FORGE() == PR_OK);
	SRC(g.in_ptr[row]) = g.in_src[g.in_ptr[row] + 1];
	SRC(g.in_ptr[row] + 1) = g.in_src[g.in_ptr[row]];
	expect_rejected(copy, size, "unsorted in-edge rows", "unsorted in-edge rows", "a row out of order");
	for (int parts = 2; parts <= 16; parts *= 2)
		for (int t = 1; t < parts; t++)
		{
			int64_t		cut = m * t / parts;	/* where part t starts (pr_even_range) */

			/* the sources at cut - 1 and cut, when they differ within a row, swapped */
			if (pr_csr_row_at(g.in_ptr, 0, n, cut, 0) != pr_csr_row_at(g.in_ptr, 0, n, cut + 1, 0) ||
				g.in_src[cut - 1] == g.in_src[cut])
				continue;
			boundaries++;
			CHECK(FORGE() == PR_OK);
			SRC(cut - 1) = g.in_src[cut];
			SRC(cut) = g.in_src[cut - 1];
			expect_rejected(copy, size, "unsorted in-edge rows", "unsorted in-edge rows",
							"a row out of order at a part boundary");
		}
	CHECKF(boundaries >= 10, "%d of the 26 part boundaries inside a row", boundaries);
	CHECK(FORGE() == PR_OK);
	SRC(m - 1) = (int32_t) n;
	expect_rejected(copy, size, "source out of range", "source out of range", "a source out of range");
	CHECK(FORGE() == PR_OK);
	SRC(m / 3) = -1;
	expect_rejected(copy, size, "source out of range", "source out of range", "a negative source");

	/* ids and row pointers */
	CHECK(FORGE() == PR_OK);
	((int64_t *) f.node_ids)[n / 2] = g.node_ids[n / 2 - 1];
	expect_rejected(copy, size, "unsorted node ids", "unsorted node ids", "two equal ids");
	CHECK(FORGE() == PR_OK);
	((int64_t *) f.in_ptr)[n / 3] = g.in_ptr[n / 3 + 1] + 1;
	expect_rejected(copy, size, "row pointers", "row pointers", "a decreasing row pointer");

	/*
	 * A node without edges, the first node and the last: a lonely node's one out-edge (in the row
	 * of id 0) given to the source beside it in that row, the out-strengths moved with it, so that
	 * they stay right.
	 */
	target = node_of_id(&g, 0);
	for (int k = 0; k < 2; k++)
	{
		lonely = node_of_id(&g, lonely_ids[k]);
		CHECK(lonely == (k == 0 ? 0 : n - 1) && target >= 0 && g.out_strength[lonely] == 1.0 &&
			  g.in_ptr[target + 1] - g.in_ptr[target] >= 3);
		CHECK(FORGE() == PR_OK);
		for (int64_t i = g.in_ptr[target]; i < g.in_ptr[target + 1]; i++)
			if (g.in_src[i] == lonely)
			{
				int32_t		other = i > g.in_ptr[target] ? g.in_src[i - 1] : g.in_src[i + 1];

				SRC(i) = other;
				STRENGTH(lonely) = 0.0;
				STRENGTH(other) += 1.0;
			}
		expect_rejected(copy, size, "without edges", "without edges", "a node without edges");
	}

	/* dangling lists */
	CHECK(FORGE() == PR_OK);
	((int32_t *) f.dangling)[0] = g.dangling[1];
	((int32_t *) f.dangling)[1] = g.dangling[0];
	expect_rejected(copy, size, "dangling list", "dangling list", "a dangling list out of order");
	CHECK(FORGE() == PR_OK);
	((int32_t *) f.dangling)[g.n_dangling - 1] = g.in_src[0];
	expect_rejected(copy, size, "dangling list", "dangling list", "a dangling node with out-edges");
	CHECK(FORGE() == PR_OK);
	((int32_t *) f.dangling)[g.n_dangling / 2] = (int32_t) n;
	expect_rejected(copy, size, "dangling list", "dangling list", "a dangling entry out of range");
	free(copy);
	free(buf);
	pr_graph_free(&g, &pr_malloc_allocator);

	/* a weighted graph with out-edge arrays: its out-strengths counted after the passes */
	edges_random(&e, 100000, 20000, 0, 1, true, 23);
	build_edges(&e, true, &g);
	buf = write_flat(&g, &size);
	expect_viewed(buf, size, &g);
	copy = aligned_alloc(8, (size + 7) & ~(size_t) 7);
	CHECK(FORGE() == PR_OK);
	STRENGTH(g.n_nodes / 2) += 1.0;
	expect_rejected(copy, size, "is not the sum of its out-weights", "is not the sum of its out-weights",
					"a weighted out-strength one too large");
	CHECK(FORGE() == PR_OK);
	((int32_t *) f.out_dst)[g.n_edges / 2] = (int32_t) g.n_nodes;
	expect_rejected(copy, size, "destination out of range", "destination out of range",
					"an out-edge destination out of range");
#undef FORGE
#undef STRENGTH
#undef SRC
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

/*
 * Random bit flips in a graph large enough for the threaded passes and the fingerprint: on 4
 * threads the check gives the verdict of the counted one, and never crashes.
 */
void
test_flat_fuzz_threaded(void)
{
	EdgeList	e;
	PrGraph		g,
				view;
	PrError		err;
	size_t		size;
	char	   *buf,
			   *copy;
	uint64_t	state = 777;
	int			accepted = 0,
				rejected = 0;

	edges_random(&e, 60000, 12000, 0, 1, false, 31);
	build_edges(&e, false, &g);
	CHECK(g.n_nodes + g.n_edges >= ((int64_t) 1 << 16));
	buf = write_flat(&g, &size);
	copy = aligned_alloc(8, (size + 7) & ~(size_t) 7);
	for (int trial = 0; trial < 400; trial++)
	{
		int			flips = (int) (test_rand(&state) % 3);	/* 0: the intact buffer */
		PrStatus	counted,
					threaded;

		memcpy(copy, buf, size);
		for (int i = 0; i < flips; i++)
		{
			size_t		pos = (test_rand(&state) % 4 == 0) ? test_rand(&state) % sizeof(PrFlatHeader)
				: test_rand(&state) % size;

			copy[pos] ^= (char) (1u << (test_rand(&state) % 8));
		}
		counted = pr_graph_view_flat(copy, size, &view, &err);
		threaded = pr_graph_view_flat_threads(copy, size, 4, &view, &err);
		CHECKF(counted == threaded, "trial %d: counted %d, threaded %d (%s)", trial, (int) counted,
			   (int) threaded, err.message);
		if (threaded == PR_OK)
			accepted++;
		else
			rejected++;
	}
	CHECK(accepted > 0 && rejected > 0);
	free(copy);
	free(buf);
	pr_graph_free(&g, &pr_malloc_allocator);
}
