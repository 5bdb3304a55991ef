/*
 * test_delta.c — a graph patched with changed rows (pr_graph_delta.c) against pr_graph_build of
 * the patched rows: every array equal, for inserts, deletes, weight changes, new and vanished
 * nodes, directed and undirected, weighted and not; the plan's arrays written in place in a flat
 * buffer (the cache's segment), its changed-edge count, node map and weight bounds; the patches that move
 * no node id (weight updates, new ids past the largest); and the refusals.  Deltas extended with
 * changed rows (pr_graph_delta_extend) against the builds too: nodes, in-edges, out-strengths,
 * out-degrees, dangling and absent nodes, the graph materialized from them, their flat form, one
 * delta's edges less another's (pr_graph_delta_edges_diff).
 */
#include "test_util.h"

#include "graph_gen.h"
#include "pr_graph_flat.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* True when a and b have equal arrays (contents). */
static bool
same_graph(const PrGraph *a, const PrGraph *b)
{
	if (a->n_nodes != b->n_nodes || a->n_edges != b->n_edges || a->weighted != b->weighted ||
		a->n_dangling != b->n_dangling)
		return false;
	return memcmp(a->node_ids, b->node_ids, (size_t) a->n_nodes * sizeof(int64_t)) == 0 &&
		memcmp(a->in_ptr, b->in_ptr, (size_t) (a->n_nodes + 1) * sizeof(int64_t)) == 0 &&
		memcmp(a->in_src, b->in_src, (size_t) a->n_edges * sizeof(int32_t)) == 0 &&
		(!a->weighted ||
		 memcmp(a->in_weight, b->in_weight, (size_t) a->n_edges * sizeof(double)) == 0) &&
		memcmp(a->out_strength, b->out_strength, (size_t) a->n_nodes * sizeof(double)) == 0 &&
		memcmp(a->dangling, b->dangling, (size_t) a->n_dangling * sizeof(int32_t)) == 0;
}

/*
 * The patched graph in arrays of its own (plan, allocate, write), as pr_graph_build gives one:
 * the plan's status.
 */
static PrStatus
apply_changes_threads(const PrGraph *base, const PrEdgeChange *changes, size_t n_changes,
					  bool undirected, int n_threads, PrGraph *out, PrError *err)
{
	PrGraphPatch plan;
	PrStatus	status;
	size_t		n,
				m;

	memset(out, 0, sizeof(PrGraph));
	status = pr_graph_patch_plan(base, NULL, changes, n_changes, undirected, 2, &pr_malloc_allocator,
								 &plan, err);
	if (status != PR_OK)
		return status;
	n = (size_t) plan.shape.n_nodes;
	m = (size_t) plan.shape.n_edges;
	out->node_ids = malloc(sizeof(int64_t) * n);
	out->in_ptr = malloc(sizeof(int64_t) * (n + 1));
	out->in_src = malloc(sizeof(int32_t) * m);
	out->in_weight = base->weighted ? malloc(sizeof(double) * m) : NULL;
	out->out_strength = malloc(sizeof(double) * n);
	out->dangling = malloc(sizeof(int32_t) * n);
	pr_graph_patch_write(&plan, out, n_threads);
	pr_graph_patch_free(&plan);
	return PR_OK;
}

/* apply_changes_threads with one thread. */
static PrStatus
apply_changes(const PrGraph *base, const PrEdgeChange *changes, size_t n_changes, bool undirected,
			  PrGraph *out, PrError *err)
{
	return apply_changes_threads(base, changes, n_changes, undirected, 1, out, err);
}

/* Builds g from rows (weights may be NULL), directed or not. */
static void
build_rows(PrGraph *g, const int64_t *src, const int64_t *dst, const double *w, size_t m,
		   bool undirected)
{
	PrBuildOptions options = {0};
	PrError		err;

	options.undirected = undirected;
	options.n_threads = 2;
	CHECK(pr_graph_build(src, dst, w, m, &options, &pr_malloc_allocator, g, &err) == PR_OK);
}

/*
 * The patch planned and written in place into a flat buffer laid out for the plan's shape (as the
 * cache's segment is): the buffer passes every check of pr_graph_view_flat and its graph equals
 * expected; its node map is pr_graph_node_map's, its changed-edge count pr_graph_changed_edges's
 * (no more than it, weighted), and its weight bounds hold every weight.
 */
static void
check_placed(const PrGraph *base, const PrEdgeChange *changes, size_t n_changes, bool undirected,
			 const PrGraph *expected)
{
	PrGraphPatch plan;
	PrGraph		shape,
				view;
	PrError		err;
	size_t		size;
	void	   *buffer;
	int32_t    *map;
	int64_t		recounted;

	CHECKF(pr_graph_patch_plan(base, NULL, changes, n_changes, undirected, 2, &pr_malloc_allocator,
							   &plan, &err) == PR_OK, "plan: %s", err.message);
	shape = plan.shape;
	size = pr_graph_flat_size(&shape);
	buffer = aligned_alloc(8, (size + 7) / 8 * 8);
	memset(buffer, 0xab, size);
	pr_graph_flat_place(&shape, buffer);
	pr_graph_patch_write(&plan, &shape, 2);
	pr_graph_flat_place(&shape, buffer);
	CHECKF(pr_graph_view_flat(buffer, size, &view, &err) == PR_OK, "placed patch: %s", err.message);
	CHECK(same_graph(&view, expected));
	map = malloc(sizeof(int32_t) * (size_t) (base->n_nodes + 1));
	pr_graph_node_map(base, expected, map);
	/* the same count, exact; the recount's merge may count parallel edges of other weights twice */
	recounted = pr_graph_changed_edges(base, expected, map, INT64_MAX, 1, &pr_malloc_allocator);
	CHECKF(expected->weighted ? plan.changed_edges <= recounted : plan.changed_edges == recounted,
		   "changed edges %lld, recounted %lld", (long long) plan.changed_edges,
		   (long long) recounted);
	if (plan.map != NULL)
		CHECK(memcmp(plan.map, map, sizeof(int32_t) * (size_t) base->n_nodes) == 0);
	else
		for (int64_t u = 0; u < base->n_nodes; u++)
			CHECK(map[u] == u);
	if (expected->weighted)
	{
		PrWeightRange exact;

		pr_graph_weight_range(expected, &exact);
		CHECK(plan.range.largest >= exact.largest);
		CHECK(plan.range.smallest_positive <= exact.smallest_positive);
	}
	free(map);
	free(buffer);
	pr_graph_patch_free(&plan);
}

/*
 * m random rows over the even ids below 2 span (weights 1..4); then random deletions of existing
 * rows, weight updates (a delete and an insert) and inserts, some with new ids; the patched base,
 * written by n_threads threads, must equal the build of the changed rows.
 */
static void
check_random_rows(unsigned seed, bool weighted, bool undirected, size_t m, int64_t span,
				  int n_threads)
{
	size_t		m_after = 0;
	int64_t    *src = malloc(sizeof(int64_t) * m * 2);
	int64_t    *dst = malloc(sizeof(int64_t) * m * 2);
	double	   *w = malloc(sizeof(double) * m * 2);
	bool	   *gone = calloc(m * 2, sizeof(bool));
	PrEdgeChange changes[400];
	size_t		n_changes = 0;
	PrGraph		base,
				patched,
				fresh;
	PrError		err;

	srand(seed);
	for (size_t i = 0; i < m; i++)
	{
		src[i] = 2 * (rand() % span);
		dst[i] = 2 * (rand() % span);
		w[i] = weighted ? (double) (1 + rand() % 4) : 1.0;
	}
	build_rows(&base, src, dst, weighted ? w : NULL, m, undirected);
	m_after = m;
	for (int k = 0; k < 120; k++)
	{
		int			kind = rand() % 3;

		if (kind == 0 || kind == 1)
		{
			size_t		i = (size_t) rand() % m;

			if (gone[i])
				continue;
			gone[i] = true;
			changes[n_changes++] = (PrEdgeChange) {src[i], dst[i], w[i], -1};
			if (kind == 1 && weighted)
			{
				/* a weight update: the same edge with another weight */
				src[m_after] = src[i];
				dst[m_after] = dst[i];
				w[m_after] = w[i] + 0.5;
				changes[n_changes++] = (PrEdgeChange) {src[m_after], dst[m_after], w[m_after], 1};
				m_after++;
			}
		}
		else
		{
			/* inserts, some with ids new to the graph (odd ids among the old ones, or past them) */
			src[m_after] = rand() % 3 == 0 ? 2 * span + rand() % 10 : 2 * (rand() % span);
			dst[m_after] = rand() % 4 == 0 ? 2 * (rand() % span) + 1 : 2 * (rand() % span);
			w[m_after] = weighted ? (double) (1 + rand() % 4) : 1.0;
			changes[n_changes++] = (PrEdgeChange) {src[m_after], dst[m_after], w[m_after], 1};
			m_after++;
		}
	}
	/* every node 0's edge deleted: node 0 vanishes unless an insert names it */
	for (size_t i = 0; i < m; i++)
		if (!gone[i] && (src[i] == 0 || dst[i] == 0) && n_changes < 400)
		{
			gone[i] = true;
			changes[n_changes++] = (PrEdgeChange) {src[i], dst[i], w[i], -1};
		}
	{
		size_t		kept = 0;

		for (size_t i = 0; i < m_after; i++)
			if (i >= m || !gone[i])
			{
				src[kept] = src[i];
				dst[kept] = dst[i];
				w[kept] = w[i];
				kept++;
			}
		build_rows(&fresh, src, dst, weighted ? w : NULL, kept, undirected);
	}
	CHECKF(apply_changes_threads(&base, changes, n_changes, undirected, n_threads, &patched, &err) == PR_OK,
		   "apply: %s", err.message);
	if (m <= 1000)
		check_placed(&base, changes, n_changes, undirected, &fresh);
	CHECKF(same_graph(&patched, &fresh), "seed %u weighted %d undirected %d: %lld/%lld nodes, %lld/%lld edges",
		   seed, weighted, undirected, (long long) patched.n_nodes, (long long) fresh.n_nodes,
		   (long long) patched.n_edges, (long long) fresh.n_edges);
	{
		/* out-degrees on n_threads threads: the in-edges' sources counted */
		int64_t    *degree = malloc(sizeof(int64_t) * (size_t) fresh.n_nodes);
		int64_t    *counted = calloc((size_t) fresh.n_nodes, sizeof(int64_t));

		pr_graph_out_degrees(&fresh, n_threads, degree);
		for (int64_t e = 0; e < fresh.n_edges; e++)
			counted[fresh.in_src[e]]++;
		CHECK(memcmp(degree, counted, sizeof(int64_t) * (size_t) fresh.n_nodes) == 0);
		free(degree);
		free(counted);
	}
	pr_graph_free(&patched, &pr_malloc_allocator);
	pr_graph_free(&fresh, &pr_malloc_allocator);
	pr_graph_free(&base, &pr_malloc_allocator);
	free(src);
	free(dst);
	free(w);
	free(gone);
}

/* check_random_rows on 400 rows over 60 ids, one thread. */
static void
check_random(unsigned seed, bool weighted, bool undirected)
{
	check_random_rows(seed, weighted, undirected, 400, 60, 1);
}

/*
 * Patches of graphs large enough for the write's threads (millions of edges) equal the builds,
 * weighted or not, with 4 threads and with 1.
 */
void
test_delta_threads(void)
{
	check_random_rows(7, true, false, 2500000, 200000, 4);
	check_random_rows(8, false, false, 2500000, 200000, 4);
	check_random_rows(8, false, false, 2500000, 200000, 1);
}

/* Random patches equal the builds of the patched rows. */
void
test_delta_random(void)
{
	for (unsigned seed = 1; seed <= 20; seed++)
	{
		check_random(seed, false, false);
		check_random(seed, true, false);
		check_random(seed, false, true);
		check_random(seed, true, true);
	}
}

/* Deleting an edge the base lacks, or with another weight, and deleting every edge: refused. */
void
test_delta_refusals(void)
{
	const int64_t s[] = {1, 2, 3};
	const int64_t d[] = {2, 3, 1};
	const double w[] = {1, 2, 3};
	PrGraph		base,
				out;
	PrError		err;
	PrEdgeChange missing = {1, 3, 1, -1};
	PrEdgeChange wrong_weight = {1, 2, 5, -1};
	PrEdgeChange all[] = {{1, 2, 1, -1}, {2, 3, 2, -1}, {3, 1, 3, -1}};
	PrEdgeChange huge = {1, 2, 1e308, 1};

	build_rows(&base, s, d, w, 3, false);
	CHECK(apply_changes(&base, &missing, 1, false, &out, &err) == PR_ERR_INVALID);
	CHECK(apply_changes(&base, &wrong_weight, 1, false, &out, &err) == PR_ERR_INVALID);
	CHECK(apply_changes(&base, all, 3, false, &out, &err) == PR_ERR_INVALID);
	CHECK(apply_changes(&base, &huge, 1, false, &out, &err) == PR_ERR_INVALID);
	pr_graph_free(&base, &pr_malloc_allocator);
}

/* Patches written in place into a flat buffer equal the builds (check_placed, in check_random). */
void
test_delta_placed(void)
{
	for (unsigned seed = 101; seed <= 110; seed++)
	{
		check_random(seed, true, false);
		check_random(seed, false, true);
	}
}

/*
 * Patches that move no node id — weight updates only (every row keeps its length), and inserts
 * whose new ids lie past the base's largest — equal the builds, directed and undirected; and a
 * base weight range that says the build may have scaled the base is refused.
 */
void
test_delta_same_ids(void)
{
	enum
	{
		M = 300
	};
	int64_t		src[M + 20],
				dst[M + 20];
	double		w[M + 20];
	PrEdgeChange changes[80];

	for (int undirected = 0; undirected <= 1; undirected++)
		for (int kind = 0; kind < 2; kind++)
		{
			PrGraph		base,
						patched,
						fresh;
			PrGraphPatch plan;
			PrWeightRange huge = {ldexp(1.0, 1015), 1.0};
			PrError		err;
			size_t		m = M,
						n_changes = 0;

			srand(7 + (unsigned) (kind + 2 * undirected));
			for (size_t i = 0; i < M; i++)
			{
				src[i] = rand() % 50;
				dst[i] = rand() % 50;
				w[i] = 1.0 + rand() % 3;
			}
			build_rows(&base, src, dst, w, M, undirected);
			for (size_t i = 0; i < M; i += 9)
			{
				if (kind == 0)
				{
					/* a weight update: the same row with another weight */
					changes[n_changes++] = (PrEdgeChange) {src[i], dst[i], w[i], -1};
					w[i] += 0.25;
					changes[n_changes++] = (PrEdgeChange) {src[i], dst[i], w[i], 1};
				}
				else if (m < M + 20)
				{
					/* an edge from a node past the largest id */
					src[m] = 1000 + (int64_t) i;
					dst[m] = dst[i];
					w[m] = 2.0;
					changes[n_changes++] = (PrEdgeChange) {src[m], dst[m], w[m], 1};
					m++;
				}
			}
			build_rows(&fresh, src, dst, w, m, undirected);
			CHECK(pr_graph_patch_plan(&base, NULL, changes, n_changes, undirected, 2,
									  &pr_malloc_allocator, &plan, &err) == PR_OK);
			CHECK(plan.map == NULL);
			pr_graph_patch_free(&plan);
			CHECK(pr_graph_patch_plan(&base, &huge, changes, n_changes, undirected, 2,
									  &pr_malloc_allocator, &plan, &err) == PR_ERR_INVALID);
			CHECKF(apply_changes(&base, changes, n_changes, undirected, &patched, &err) == PR_OK,
				   "apply: %s", err.message);
			CHECKF(same_graph(&patched, &fresh), "kind %d undirected %d", kind, undirected);
			check_placed(&base, changes, n_changes, undirected, &fresh);
			pr_graph_free(&patched, &pr_malloc_allocator);
			pr_graph_free(&fresh, &pr_malloc_allocator);
			pr_graph_free(&base, &pr_malloc_allocator);
		}
}

/*
 * Whether deltas a and b have equal counts and arrays (out-degrees both or neither, where they
 * have sources: a flat delta without sources has none).
 */
static bool
same_delta(const PrGraphDelta *a, const PrGraphDelta *b)
{
	size_t		sources = (size_t) a->n_sources;

	return a->n_nodes == b->n_nodes && a->n_edges == b->n_edges &&
		a->n_sources == b->n_sources && a->n_absent == b->n_absent &&
		(sources == 0 || (a->out_degree == NULL) == (b->out_degree == NULL)) &&
		memcmp(a->edges, b->edges, sizeof(PrEdgeChange) * (size_t) a->n_edges) == 0 &&
		memcmp(a->sources, b->sources, sizeof(int32_t) * sources) == 0 &&
		memcmp(a->out_strength, b->out_strength, sizeof(double) * sources) == 0 &&
		(sources == 0 || a->out_degree == NULL ||
		 memcmp(a->out_degree, b->out_degree, sizeof(int64_t) * sources) == 0) &&
		memcmp(a->absent, b->absent, sizeof(int32_t) * (size_t) a->n_absent) == 0;
}

/*
 * The extend written straight into a flat buffer (pr_graph_delta_extend_flat) equals the one in
 * arrays of its own (expected, changed edges expected_changed), its header the size of its own
 * flat form; a buffer one word short of pr_graph_delta_extend_size is refused.
 */
static void
check_extend_flat(const PrGraph *root, const int64_t *root_degree, const PrGraphDelta *old,
				  const PrEdgeChange *changes, size_t n_changes, bool undirected,
				  const PrGraphDelta *expected, int64_t expected_changed, const char *what)
{
	size_t		size = pr_graph_delta_extend_size(old, n_changes, undirected);
	void	   *flat = aligned_alloc(8, size);
	PrGraphDelta view,
				again;
	PrError		err;
	int64_t		changed = -1;

	CHECKF(size >= pr_graph_delta_flat_size(expected), "%s: bound %zu below %zu", what, size,
		   pr_graph_delta_flat_size(expected));
	CHECK(pr_graph_delta_extend_flat(root, root_degree, NULL, old, changes, n_changes, undirected,
									 2, &pr_malloc_allocator, flat, size - 8, &view, &changed,
									 &err) == PR_ERR_INVALID);
	CHECKF(pr_graph_delta_extend_flat(root, root_degree, NULL, old, changes, n_changes,
									  undirected, 2, &pr_malloc_allocator, flat, size, &view,
									  &changed, &err) == PR_OK, "%s: flat extend: %s", what,
		   err.message);
	CHECKF(same_delta(&view, expected) && changed == expected_changed,
		   "%s: the flat extend differs", what);
	CHECK(pr_graph_delta_view_flat(flat, pr_graph_delta_flat_size(expected), &again, &err) ==
		  PR_OK && same_delta(&again, expected));
	free(flat);
}

/* Most rows of a TableRows. */
#define TABLE_ROWS (1 << 18)

/*
 * Deltas extended with changed rows (pr_graph_delta_extend) against pr_graph_build of the rows:
 * a table's rows (alive or deleted) over a root graph's nodes, changed in batches.
 */
typedef struct TableRows
{
	int64_t		src[TABLE_ROWS];
	int64_t		dst[TABLE_ROWS];
	double		w[TABLE_ROWS];
	bool		alive[TABLE_ROWS];
	size_t		n;
} TableRows;

/* Builds the alive rows into g. */
static void
build_alive(const TableRows *t, bool weighted, bool undirected, PrGraph *g)
{
	int64_t    *src = malloc(sizeof(int64_t) * (t->n + 1));
	int64_t    *dst = malloc(sizeof(int64_t) * (t->n + 1));
	double	   *w = malloc(sizeof(double) * (t->n + 1));
	size_t		m = 0;

	for (size_t i = 0; i < t->n; i++)
		if (t->alive[i])
		{
			src[m] = t->src[i];
			dst[m] = t->dst[i];
			w[m] = t->w[i];
			m++;
		}
	build_rows(g, src, dst, weighted ? w : NULL, m, undirected);
	free(src);
	free(dst);
	free(w);
}

/* Alive rows of t. */
static size_t
alive_rows(const TableRows *t)
{
	size_t		count = 0;

	for (size_t i = 0; i < t->n; i++)
		count += t->alive[i];
	return count;
}

/* A random weight: 0 at times, else one that sums with rounding. */
static double
random_weight(bool weighted)
{
	if (!weighted)
		return 1.0;
	if (rand() % 8 == 0)
		return 0.0;
	return 0.1 * (1 + rand() % 30) + (double) rand() / RAND_MAX;
}

/* Adds row (s, d, w) to t and its insert to changes. */
static void
insert_row(TableRows *t, int64_t s, int64_t d, double w, PrEdgeChange *changes, size_t *n_changes)
{
	t->src[t->n] = s;
	t->dst[t->n] = d;
	t->w[t->n] = w;
	t->alive[t->n] = true;
	t->n++;
	changes[(*n_changes)++] = (PrEdgeChange) {s, d, w, 1};
}

/* Deletes row i of t and adds its deletion to changes. */
static void
delete_row(TableRows *t, size_t i, PrEdgeChange *changes, size_t *n_changes)
{
	t->alive[i] = false;
	changes[(*n_changes)++] = (PrEdgeChange) {t->src[i], t->dst[i], t->w[i], -1};
}

/*
 * One batch of random changes of t over root's nodes: deletions, weight updates, inserts (self-
 * loops, parallel edges, zero weights), every edge of a node deleted (it vanishes, or keeps only
 * in-edges when directed), a node of root that X lacks given an edge again.  At least one row
 * stays.
 */
static size_t
random_batch(TableRows *t, const PrGraph *root, const PrGraphDelta *delta, bool weighted,
			 bool undirected, PrEdgeChange *changes)
{
	size_t		n_changes = 0;
	int			n_ops = 1 + rand() % 10;

	for (int op = 0; op < n_ops && t->n < 4000; op++)
	{
		int			kind = rand() % 7;
		size_t		i = (size_t) rand() % t->n;
		int64_t		v = root->node_ids[rand() % root->n_nodes];
		int64_t		u = root->node_ids[rand() % root->n_nodes];

		if ((kind == 0 || kind == 1) && t->alive[i] && alive_rows(t) > 1)
		{
			delete_row(t, i, changes, &n_changes);
			if (kind == 1 && weighted)
				insert_row(t, t->src[i], t->dst[i], random_weight(true), changes, &n_changes);
		}
		else if (kind == 2)
			insert_row(t, v, rand() % 4 == 0 ? v : u, random_weight(weighted), changes, &n_changes);
		else if (kind == 3 && t->alive[i])
			/* a parallel edge of another (or the same) weight */
			insert_row(t, t->src[i], t->dst[i], rand() % 2 ? t->w[i] : random_weight(weighted),
					   changes, &n_changes);
		else if (kind == 4 || kind == 5)
		{
			/* every out-edge of v (kind 4), or every edge of v: v vanishes (kind 5) */
			size_t		left = alive_rows(t);

			for (size_t k = 0; k < t->n; k++)
				if (t->alive[k] && (t->src[k] == v || ((kind == 5 || undirected) && t->dst[k] == v)))
					left--;
			for (size_t k = 0; k < t->n && left > 0; k++)
				if (t->alive[k] && (t->src[k] == v || ((kind == 5 || undirected) && t->dst[k] == v)))
					delete_row(t, k, changes, &n_changes);
		}
		else if (kind == 6 && delta->n_absent > 0)
		{
			/* an absent node comes back */
			int64_t		back = root->node_ids[delta->absent[rand() % delta->n_absent]];

			if (rand() % 2)
				insert_row(t, back, u, random_weight(weighted), changes, &n_changes);
			else
				insert_row(t, u, back, random_weight(weighted), changes, &n_changes);
		}
	}
	return n_changes;
}

/* X's out-strength and out-degree of root node v by root + delta. */
static void
delta_source(const PrGraph *root, const int64_t *root_degree, const PrGraphDelta *delta, int32_t v,
			 double *strength, int64_t *degree)
{
	*strength = root->out_strength[v];
	*degree = root_degree != NULL ? root_degree[v] : (int64_t) root->out_strength[v];
	for (int64_t i = 0; i < delta->n_sources; i++)
		if (delta->sources[i] == v)
		{
			*strength = delta->out_strength[i];
			*degree = delta->out_degree[i];
		}
}

/*
 * root + delta equals x (the build of the rows): X's nodes are root's but the absent ones, each
 * present node's in-edges are root's row plus the delta's counts (as a multiset, in the row's
 * order), its out-strength within 1e-12 (0 exactly where x's is 0), its out-degree x's, the
 * dangling list x's (less the absent nodes); the delta checks; materialized through
 * pr_graph_delta_changes and a patch it is x bit for bit; and its flat form views the same.
 */
static void
check_delta_is(const PrGraph *root, const int64_t *root_degree, const PrGraphDelta *delta,
			   const PrGraph *x, const char *what)
{
	int64_t    *x_degree = malloc(sizeof(int64_t) * (size_t) (x->n_nodes + 1));
	int32_t    *dangling = malloc(sizeof(int32_t) * (size_t) (root->n_dangling + delta->n_sources + 1));
	PrEdgeChange *changes = malloc(sizeof(PrEdgeChange) * (size_t) (delta->n_edges + 1));
	int64_t		xv = 0,
				n_dangling,
				k = 0;
	PrGraph		materialized;
	PrGraphDelta view;
	PrError		err;
	size_t		size = pr_graph_delta_flat_size(delta);
	void	   *flat = aligned_alloc(8, (size + 7) / 8 * 8);

	CHECKF(pr_graph_delta_check(delta, root, &err) == PR_OK, "%s: check: %s", what, err.message);
	pr_graph_out_degrees(x, 2, x_degree);
	for (int32_t v = 0; v < root->n_nodes; v++)
	{
		int64_t		d = 0;
		int64_t		b = root->in_ptr[v];
		int64_t		e_x;
		double		strength;
		int64_t		degree;

		if (pr_graph_delta_absent(delta, v))
		{
			CHECKF(xv >= x->n_nodes || x->node_ids[xv] != root->node_ids[v],
				   "%s: node %lld absent, but in X", what, (long long) root->node_ids[v]);
			continue;
		}
		CHECKF(xv < x->n_nodes && x->node_ids[xv] == root->node_ids[v],
			   "%s: node %lld present, not in X", what, (long long) root->node_ids[v]);
		if (xv >= x->n_nodes || x->node_ids[xv] != root->node_ids[v])
			break;
		/* the in-row: root's merged with the delta's edges to v, in (source, weight) order */
		e_x = x->in_ptr[xv];
		while (d < delta->n_edges && delta->edges[d].dst < v)
			d++;
		while (b < root->in_ptr[v + 1] || (d < delta->n_edges && delta->edges[d].dst == v))
		{
			bool		from_root = !(d < delta->n_edges && delta->edges[d].dst == v) ||
				(b < root->in_ptr[v + 1] &&
				 (root->in_src[b] < delta->edges[d].src ||
				  (root->in_src[b] == delta->edges[d].src &&
				   (root->weighted ? root->in_weight[b] : 1.0) < delta->edges[d].weight)));
			int64_t		src = from_root ? root->in_src[b] : delta->edges[d].src;
			double		w = from_root ? (root->weighted ? root->in_weight[b] : 1.0) :
				delta->edges[d].weight;
			int64_t		copies = 0;

			while (b < root->in_ptr[v + 1] && root->in_src[b] == src &&
				   (root->weighted ? root->in_weight[b] : 1.0) == w)
			{
				copies++;
				b++;
			}
			if (d < delta->n_edges && delta->edges[d].dst == v && delta->edges[d].src == src &&
				delta->edges[d].weight == w)
				copies += delta->edges[d++].count;
			for (int64_t c = 0; c < copies; c++, e_x++)
				CHECKF(e_x < x->in_ptr[xv + 1] &&
					   x->node_ids[x->in_src[e_x]] == root->node_ids[src] &&
					   (!x->weighted || x->in_weight[e_x] == w),
					   "%s: in-edge %lld -> %lld (weight %g) differs", what,
					   (long long) root->node_ids[src], (long long) root->node_ids[v], w);
		}
		CHECKF(e_x == x->in_ptr[xv + 1], "%s: node %lld has more in-edges in X", what,
			   (long long) root->node_ids[v]);
		/* out-strength and out-degree */
		delta_source(root, root_degree, delta, v, &strength, &degree);
		CHECKF(x->out_strength[xv] == 0.0 ? strength == 0.0 :
			   fabs(strength - x->out_strength[xv]) <= 1e-12 * x->out_strength[xv],
			   "%s: out-strength of %lld is %.17g, X's %.17g", what, (long long) root->node_ids[v],
			   strength, x->out_strength[xv]);
		CHECKF(degree == x_degree[xv], "%s: out-degree of %lld is %lld, X's %lld", what,
			   (long long) root->node_ids[v], (long long) degree, (long long) x_degree[xv]);
		xv++;
	}
	CHECKF(xv == x->n_nodes, "%s: %lld of X's %lld nodes present", what, (long long) xv,
		   (long long) x->n_nodes);
	/* the dangling list, less the absent nodes */
	n_dangling = pr_graph_delta_dangling(root, delta, dangling);
	for (int64_t i = 0; i < n_dangling; i++)
		if (!pr_graph_delta_absent(delta, dangling[i]))
		{
			CHECKF(k < x->n_dangling &&
				   x->node_ids[x->dangling[k]] == root->node_ids[dangling[i]],
				   "%s: dangling node %lld", what, (long long) root->node_ids[dangling[i]]);
			k++;
		}
	CHECKF(k == x->n_dangling, "%s: %lld dangling nodes, X has %lld", what, (long long) k,
		   (long long) x->n_dangling);
	/* materialized: X bit for bit */
	pr_graph_delta_changes(root, delta, changes);
	CHECKF(apply_changes(root, changes, (size_t) delta->n_edges, false, &materialized, &err) ==
		   PR_OK, "%s: materialize: %s", what, err.message);
	CHECKF(same_graph(&materialized, x), "%s: materialized graph differs", what);
	pr_graph_free(&materialized, &pr_malloc_allocator);
	/* the flat form */
	memset(flat, 0xab, size);
	pr_graph_delta_write_flat(delta, flat);
	CHECK(pr_graph_delta_view_flat(flat, size, &view, &err) == PR_OK);
	CHECK(view.n_nodes == delta->n_nodes && view.n_edges == delta->n_edges &&
		  view.n_sources == delta->n_sources && view.n_absent == delta->n_absent);
	CHECK(delta->n_edges == 0 ||
		  memcmp(view.edges, delta->edges, sizeof(PrEdgeChange) * (size_t) delta->n_edges) == 0);
	CHECK(delta->n_sources == 0 ||
		  (memcmp(view.sources, delta->sources, sizeof(int32_t) * (size_t) delta->n_sources) == 0 &&
		   memcmp(view.out_strength, delta->out_strength,
				  sizeof(double) * (size_t) delta->n_sources) == 0 &&
		   memcmp(view.out_degree, delta->out_degree,
				  sizeof(int64_t) * (size_t) delta->n_sources) == 0));
	CHECK(delta->n_absent == 0 ||
		  memcmp(view.absent, delta->absent, sizeof(int32_t) * (size_t) delta->n_absent) == 0);
	CHECK(pr_graph_delta_check(&view, root, &err) == PR_OK);
	free(flat);
	free(x_degree);
	free(dangling);
	free(changes);
}

/*
 * The edges of to less from's (pr_graph_delta_edges_diff): sorted, netted, their counts' absolute
 * sum changed (when >= 0), from's edges merged with them to's exactly, to less itself nothing.
 */
static void
check_edges_diff(const PrGraphDelta *to, const PrGraphDelta *from, int64_t changed, const char *what)
{
	PrEdgeChange *diff = malloc(sizeof(PrEdgeChange) * (size_t) (to->n_edges + from->n_edges + 1));
	PrGraphDelta from_edges = {0},
				diff_edges = {0},
				merged;
	PrError		err;
	int64_t		n = pr_graph_delta_edges_diff(to->edges, to->n_edges, from->edges, from->n_edges, diff);
	int64_t		moved = 0;

	for (int64_t i = 0; i < n; i++)
	{
		CHECKF(diff[i].count != 0 && (i == 0 || pr_edge_change_order(&diff[i - 1], &diff[i]) < 0),
			   "%s: diff edge %lld is 0 or out of order", what, (long long) i);
		moved += diff[i].count < 0 ? -diff[i].count : diff[i].count;
	}
	CHECKF(changed < 0 || moved == changed, "%s: the diff moves %lld edges, not %lld", what,
		   (long long) moved, (long long) changed);
	from_edges.n_nodes = diff_edges.n_nodes = to->n_nodes;
	from_edges.edges = from->edges;
	from_edges.n_edges = from->n_edges;
	diff_edges.edges = diff;
	diff_edges.n_edges = n;
	CHECK(pr_graph_delta_merge(&from_edges, &diff_edges, &pr_malloc_allocator, &merged, &err) == PR_OK);
	CHECKF(merged.n_edges == to->n_edges &&
		   memcmp(merged.edges, to->edges, sizeof(PrEdgeChange) * (size_t) to->n_edges) == 0,
		   "%s: from's edges plus the diff are not to's", what);
	pr_graph_delta_free(&merged, &pr_malloc_allocator);
	CHECKF(pr_graph_delta_edges_diff(to->edges, to->n_edges, to->edges, to->n_edges, diff) == 0,
		   "%s: a delta less itself is not empty", what);
	free(diff);
}

/*
 * A random table (parallel edges, self-loops, zero weights) built as the root, then a chain of
 * extends, each checked against the build of the rows (check_delta_is), its changed-edge count
 * against the two deltas' counts, its edges less the previous delta's and less step 4's
 * (check_edges_diff).
 */
static void
check_extend_chain(unsigned seed, bool weighted, bool undirected)
{
	TableRows  *t = calloc(1, sizeof(TableRows));
	PrEdgeChange changes[4096];
	PrGraph		root;
	PrGraphDelta delta = {0};
	PrGraphDelta held = {0};	/* the delta of step 4, which later ones are diffed against */
	int64_t    *root_degree = NULL;
	int64_t		span = 12 + seed % 20;

	srand(seed);
	t->n = 20 + (size_t) (rand() % 60);
	for (size_t i = 0; i < t->n; i++)
	{
		t->src[i] = 3 * (rand() % span);
		t->dst[i] = rand() % 6 == 0 ? t->src[i] : 3 * (rand() % span);
		t->w[i] = random_weight(weighted);
		t->alive[i] = true;
		if (i > 0 && rand() % 8 == 0)
		{
			/* a parallel edge */
			t->src[i] = t->src[i - 1];
			t->dst[i] = t->dst[i - 1];
		}
	}
	build_alive(t, weighted, undirected, &root);
	if (weighted)
	{
		root_degree = malloc(sizeof(int64_t) * (size_t) root.n_nodes);
		pr_graph_out_degrees(&root, 2, root_degree);
	}
	delta.n_nodes = root.n_nodes;
	for (int step = 0; step < 12; step++)
	{
		size_t		n_changes = random_batch(t, &root, &delta, weighted, undirected, changes);
		PrGraphDelta next;
		PrGraph		x;
		PrError		err;
		int64_t		changed = -1,
					counted = 0,
					a = 0,
					b = 0;
		char		what[128];

		snprintf(what, sizeof(what), "seed %u weighted %d undirected %d step %d", seed, weighted,
				 undirected, step);
		CHECKF(pr_graph_delta_extend(&root, root_degree, NULL, &delta, changes, n_changes,
									 undirected, 2, &pr_malloc_allocator, &next, &changed,
									 &err) == PR_OK, "%s: extend: %s", what, err.message);
		check_extend_flat(&root, root_degree, &delta, changes, n_changes, undirected, &next,
						  changed, what);
		/* changed edges: the counts that moved between the two deltas */
		while (a < delta.n_edges || b < next.n_edges)
		{
			int			order = a == delta.n_edges ? 1 : b == next.n_edges ? -1 :
				pr_edge_change_order(&delta.edges[a], &next.edges[b]);
			int64_t		before = order <= 0 ? delta.edges[a++].count : 0;
			int64_t		after = order >= 0 ? next.edges[b++].count : 0;

			counted += before > after ? before - after : after - before;
		}
		CHECKF(changed == counted, "%s: %lld changed edges, %lld by the deltas", what,
			   (long long) changed, (long long) counted);
		check_edges_diff(&next, &delta, counted, what);
		if (step >= 4)
			check_edges_diff(&next, &held, -1, what);
		if (step == 4)
			CHECK(pr_graph_delta_copy(&next, &pr_malloc_allocator, &held));
		build_alive(t, weighted, undirected, &x);
		check_delta_is(&root, root_degree, &next, &x, what);
		pr_graph_free(&x, &pr_malloc_allocator);
		if (step > 0)
			pr_graph_delta_free(&delta, &pr_malloc_allocator);
		delta = next;
	}
	pr_graph_delta_free(&delta, &pr_malloc_allocator);
	pr_graph_delta_free(&held, &pr_malloc_allocator);
	pr_graph_free(&root, &pr_malloc_allocator);
	free(root_degree);
	free(t);
}

/* Chains of extends equal the builds of the changed rows, weighted or not, directed or not. */
void
test_delta_extend_random(void)
{
	for (unsigned seed = 1; seed <= 60; seed++)
	{
		check_extend_chain(seed, false, false);
		check_extend_chain(seed, true, false);
		check_extend_chain(seed, false, true);
		check_extend_chain(seed, true, true);
	}
}

/*
 * Extends refused: a deletion of an edge X1 lacks (root has it, the old delta deleted it; another
 * weight; more copies than X1 has), a node root lacks (unsupported), a weight the build would
 * scale, every edge deleted; nothing allocated.  A source left with an edge after its large one
 * goes is recounted exactly (the build's bits), one left with zero weights only is dangling and
 * present, one left without out-edges has out-strength 0 and, with no in-edge, is absent.
 */
void
test_delta_extend_cases(void)
{
	const int64_t s[] = {1, 1, 1, 2, 3, 4, 4};
	const int64_t d[] = {2, 3, 3, 3, 1, 1, 2};
	const double w[] = {1e10, 0.3, 0.3, 2.0, 0.7, 0.0, 0.1};
	PrGraph		root,
				x;
	int64_t		degree[4];
	PrGraphDelta empty = {0},
				first,
				second;
	PrError		err;
	int64_t		changed;
	PrEdgeChange drop_big = {1, 2, 1e10, -1};
	PrEdgeChange bad[][2] = {
		{{1, 2, 1e10, -1}, {0}},	/* deleted already (in first) */
		{{2, 3, 2.5, -1}, {0}},		/* another weight */
		{{1, 3, 0.3, -3}, {0}},		/* three of two copies */
		{{1, 9, 1.0, 1}, {0}},		/* a node root lacks */
		{{1, 3, 1e308, 1}, {0}},	/* a weight the build scales */
		{{2, 3, 1e-310, 1}, {0}},	/* a subnormal weight */
	};
	PrStatus	want[] = {PR_ERR_INVALID, PR_ERR_INVALID, PR_ERR_INVALID, PR_ERR_UNSUPPORTED,
	PR_ERR_INVALID, PR_ERR_INVALID};
	/* node 4 keeps only its zero-weight edge; node 2 loses its only out-edge and every in-edge */
	PrEdgeChange more[] = {{4, 2, 0.1, -1}, {2, 3, 2.0, -1}, {4, 1, 0.0, 1}};
	PrEdgeChange all[] = {{1, 3, 0.3, -2}, {3, 1, 0.7, -1}, {4, 1, 0.0, -2}};
	const int64_t s1[] = {1, 1, 2, 3, 4, 4};
	const int64_t d1[] = {3, 3, 3, 1, 1, 2};
	const double w1[] = {0.3, 0.3, 2.0, 0.7, 0.0, 0.1};
	const int64_t s2[] = {1, 1, 3, 4, 4};
	const int64_t d2[] = {3, 3, 1, 1, 1};
	const double w2[] = {0.3, 0.3, 0.7, 0.0, 0.0};

	build_rows(&root, s, d, w, 7, false);
	pr_graph_out_degrees(&root, 1, degree);
	CHECK(degree[0] == 3 && degree[1] == 1 && degree[2] == 1 && degree[3] == 2);
	empty.n_nodes = root.n_nodes;
	/* node 1 keeps two edges of 0.3 beside its 1e10: recounted, the build's bits */
	CHECK(pr_graph_delta_extend(&root, degree, NULL, &empty, &drop_big, 1, false, 1,
								&pr_malloc_allocator, &first, &changed, &err) == PR_OK);
	CHECK(changed == 1 && first.n_edges == 1 && first.n_sources == 1 && first.n_absent == 0);
	build_rows(&x, s1, d1, w1, 6, false);
	CHECKF(first.out_strength[0] == x.out_strength[0] && first.out_degree[0] == 2,
		   "recounted %.17g, built %.17g", first.out_strength[0], x.out_strength[0]);
	check_delta_is(&root, degree, &first, &x, "first");
	pr_graph_free(&x, &pr_malloc_allocator);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
	{
		second.edges = (PrEdgeChange *) &second;
		CHECKF(pr_graph_delta_extend(&root, degree, NULL, &first, bad[i], 1, false, 1,
									 &pr_malloc_allocator, &second, &changed, &err) == want[i],
			   "bad change %zu: %s", i, err.message);
		CHECK(second.edges == NULL && second.n_edges == 0);
	}
	/* a weighted root without its out-degrees, a delta of another node count */
	CHECK(pr_graph_delta_extend(&root, NULL, NULL, &first, more, 3, false, 1, &pr_malloc_allocator,
								&second, &changed, &err) == PR_ERR_INVALID);
	empty.n_nodes = root.n_nodes + 1;
	CHECK(pr_graph_delta_extend(&root, degree, NULL, &empty, more, 3, false, 1,
								&pr_malloc_allocator, &second, &changed, &err) == PR_ERR_INVALID);
	/* node 4 dangling with a zero-weight edge; node 2 absent */
	CHECK(pr_graph_delta_extend(&root, degree, NULL, &first, more, 3, false, 1,
								&pr_malloc_allocator, &second, &changed, &err) == PR_OK);
	CHECK(changed == 3 && second.n_absent == 1 && second.absent[0] == 1);
	CHECK(pr_graph_delta_absent(&second, 1) && !pr_graph_delta_absent(&second, 3));
	build_rows(&x, s2, d2, w2, 5, false);
	check_delta_is(&root, degree, &second, &x, "second");
	pr_graph_free(&x, &pr_malloc_allocator);
	/* every edge deleted: no graph */
	CHECK(pr_graph_delta_extend(&root, degree, NULL, &second, all, 3, false, 1,
								&pr_malloc_allocator, &first, &changed, &err) == PR_ERR_INVALID);
	pr_graph_delta_free(&second, &pr_malloc_allocator);
	pr_graph_free(&root, &pr_malloc_allocator);
}

/*
 * A delta with absent nodes through its flat form: a corrupt header (magic, version, size,
 * counts, offsets, flags), a short or misaligned buffer refused; contents that the view passes
 * but pr_graph_delta_check refuses (absent nodes out of order or with out-edges, an out-degree 0
 * beside an out-strength); merged deltas keep the newer's absent nodes and out-degrees, a delta
 * merged with an empty one its own.
 */
void
test_delta_extend_flat(void)
{
	const int64_t s[] = {1, 2, 3, 3};
	const int64_t d[] = {2, 3, 1, 4};
	PrEdgeChange gone[] = {{3, 4, 1.0, -1}, {1, 2, 1.0, -1}, {2, 1, 1.0, 1}};
	PrGraph		root;
	PrGraphDelta empty = {0},
				delta,
				view,
				merged;
	PrError		err;
	size_t		size;
	uint64_t   *flat;
	uint64_t   *copy;

	build_rows(&root, s, d, NULL, 4, false);
	empty.n_nodes = root.n_nodes;
	CHECK(pr_graph_delta_extend(&root, NULL, NULL, &empty, gone, 3, false, 1, &pr_malloc_allocator,
								&delta, NULL, &err) == PR_OK);
	/* node 4 has no edge left */
	CHECK(delta.n_absent == 1 && delta.absent[0] == 3 && delta.n_sources == 3);
	size = pr_graph_delta_flat_size(&delta);
	CHECK(size % 8 == 0);
	flat = aligned_alloc(8, size + 8);
	copy = aligned_alloc(8, size + 8);
	pr_graph_delta_write_flat(&delta, flat);
	CHECK(pr_graph_delta_view_flat(flat, size, &view, &err) == PR_OK);
	CHECK(pr_graph_delta_check(&view, &root, &err) == PR_OK);
	/* node 1 lost its out-edge, node 2 has two, node 3 one */
	CHECK(view.n_absent == 1 && view.absent[0] == 3 && view.out_degree[0] == 0 &&
		  view.out_degree[1] == 2 && view.out_degree[2] == 1);
	/* the header's words: magic and version, total size, counts, flags, offsets */
	for (size_t word = 0; word < 12; word++)
	{
		memcpy(copy, flat, size);
		if (word == 2)
		{
			/* the node count: the layout holds, the check refuses it */
			copy[word] ^= 1;
			CHECK(pr_graph_delta_view_flat(copy, size, &view, &err) == PR_OK);
			CHECK(pr_graph_delta_check(&view, &root, &err) == PR_ERR_INVALID);
			continue;
		}
		copy[word] ^= word == 1 ? 8 : 1;
		CHECKF(pr_graph_delta_view_flat(copy, size, &view, &err) == PR_ERR_INVALID,
			   "header word %zu changed", word);
	}
	CHECK(pr_graph_delta_view_flat(flat, size - 8, &view, &err) == PR_ERR_INVALID);
	CHECK(pr_graph_delta_view_flat(flat, 16, &view, &err) == PR_ERR_INVALID);
	memcpy((char *) copy + 4, flat, size);
	CHECK(pr_graph_delta_view_flat((char *) copy + 4, size, &view, &err) == PR_ERR_INVALID);
	/* contents the check refuses */
	memcpy(copy, flat, size);
	CHECK(pr_graph_delta_view_flat(copy, size, &view, &err) == PR_OK);
	view.absent[0] = 2;			/* node 3 has out-edges */
	CHECK(pr_graph_delta_check(&view, &root, &err) == PR_ERR_INVALID);
	view.absent[0] = 4;			/* out of range */
	CHECK(pr_graph_delta_check(&view, &root, &err) == PR_ERR_INVALID);
	view.absent[0] = 3;
	view.out_degree[2] = 0;		/* out-degree 0, out-strength 1 */
	CHECK(pr_graph_delta_check(&view, &root, &err) == PR_ERR_INVALID);
	view.out_degree[2] = 2;		/* unweighted: out-strength is the out-degree */
	CHECK(pr_graph_delta_check(&view, &root, &err) == PR_ERR_INVALID);
	view.out_degree[2] = 1;
	CHECK(pr_graph_delta_check(&view, &root, &err) == PR_OK);
	/* merged after the empty delta: the newer's absent nodes and out-degrees */
	CHECK(pr_graph_delta_merge(&empty, &delta, &pr_malloc_allocator, &merged, &err) == PR_OK);
	CHECK(merged.n_absent == 1 && merged.absent[0] == 3 && merged.out_degree != NULL &&
		  merged.n_sources == delta.n_sources &&
		  memcmp(merged.out_degree, delta.out_degree, sizeof(int64_t) * (size_t) delta.n_sources) == 0);
	CHECK(pr_graph_delta_check(&merged, &root, &err) == PR_OK);
	pr_graph_delta_free(&merged, &pr_malloc_allocator);
	/* merged with an empty delta (a copy): its absent nodes kept */
	CHECK(pr_graph_delta_merge(&delta, &empty, &pr_malloc_allocator, &merged, &err) == PR_OK);
	CHECK(merged.n_absent == 1 && merged.absent[0] == 3 && merged.n_edges == delta.n_edges);
	pr_graph_delta_free(&merged, &pr_malloc_allocator);
	/* a delta without out-degrees merged: none in the result */
	view.out_degree = NULL;
	CHECK(pr_graph_delta_merge(&empty, &view, &pr_malloc_allocator, &merged, &err) == PR_OK);
	CHECK(merged.out_degree == NULL && merged.n_absent == 1);
	pr_graph_delta_free(&merged, &pr_malloc_allocator);
	free(flat);
	free(copy);
	pr_graph_delta_free(&delta, &pr_malloc_allocator);
	pr_graph_free(&root, &pr_malloc_allocator);
}

/* A weight that sums exactly (a multiple of 1/8 below 8), or 1 unweighted. */
static double
eighths_weight(bool weighted)
{
	return weighted ? (double) (1 + rand() % 63) / 8.0 : 1.0;
}

/*
 * Whether out-strength a is b: the same bits, or within 1e-12 where b is 2^52 or more (a sum that
 * rounds: an extend adds a source's weights in another order than the build).
 */
static bool
same_strength(double a, double b)
{
	return a == b || (b >= 0x1p52 && fabs(a - b) <= 1e-12 * b);
}

/*
 * delta (root -> X) against x, the build of X's rows, whose weights sum exactly (same_strength):
 * the delta checks; X's rows as changes of root's, patched into root, are x bit for bit; its
 * absent nodes are root's nodes x lacks; every edge's source is a source; each source's out-degree
 * and out-strength are x's (none where x lacks it); and once (first not NULL), a delta made in one
 * go from root has the same edges and absent nodes, and its sources (a subset) the same values.
 */
static void
check_delta_exact(const PrGraph *root, const PrGraphDelta *delta, const PrGraph *x,
				  const PrGraphDelta *first, const char *what)
{
	PrEdgeChange *changes = malloc(sizeof(PrEdgeChange) * (size_t) (delta->n_edges + 1));
	int64_t    *x_degree = malloc(sizeof(int64_t) * (size_t) (x->n_nodes + 1));
	int64_t		n_absent = 0,
				k = 0;
	PrGraph		materialized;
	PrError		err;

	if (pr_graph_delta_check(delta, root, &err) != PR_OK)
	{
		/* nothing more to compare (its ids may be out of range) */
		CHECKF(false, "%s: check: %s", what, err.message);
		free(changes);
		free(x_degree);
		return;
	}
	pr_graph_delta_changes(root, delta, changes);
	CHECKF(apply_changes(root, changes, (size_t) delta->n_edges, false, &materialized, &err) ==
		   PR_OK, "%s: materialize: %s", what, err.message);
	CHECKF(same_graph(&materialized, x), "%s: materialized graph differs", what);
	pr_graph_free(&materialized, &pr_malloc_allocator);
	for (int32_t v = 0; v < root->n_nodes; v++)
		if (pr_graph_find(x, root->node_ids[v]) < 0)
		{
			CHECKF(n_absent < delta->n_absent && delta->absent[n_absent] == v,
				   "%s: node %lld is not absent", what, (long long) root->node_ids[v]);
			n_absent++;
		}
	CHECKF(n_absent == delta->n_absent, "%s: %lld absent nodes, X lacks %lld", what,
		   (long long) delta->n_absent, (long long) n_absent);
	for (int64_t e = 0; e < delta->n_edges; e++)
	{
		int64_t		at = pr_lower_bound_i32(delta->sources, 0, delta->n_sources,
											delta->edges[e].src);

		CHECKF(at < delta->n_sources && delta->sources[at] == delta->edges[e].src,
			   "%s: edge %lld's source is no source", what, (long long) e);
	}
	pr_graph_out_degrees(x, 2, x_degree);
	for (int64_t i = 0; i < delta->n_sources; i++)
	{
		int64_t		xv = pr_graph_find(x, root->node_ids[delta->sources[i]]);
		double		strength = xv >= 0 ? x->out_strength[xv] : 0.0;
		int64_t		degree = xv >= 0 ? x_degree[xv] : 0;

		CHECKF(delta->out_degree[i] == degree && same_strength(delta->out_strength[i], strength),
			   "%s: source %lld: out-degree %lld, out-strength %.17g; X's %lld, %.17g", what,
			   (long long) root->node_ids[delta->sources[i]], (long long) delta->out_degree[i],
			   delta->out_strength[i], (long long) degree, strength);
		if (first != NULL && k < first->n_sources && first->sources[k] == delta->sources[i])
		{
			CHECKF(first->out_degree[k] == delta->out_degree[i] &&
				   same_strength(delta->out_strength[i], first->out_strength[k]),
				   "%s: source %lld differs from the delta made in one go", what,
				   (long long) root->node_ids[delta->sources[i]]);
			k++;
		}
	}
	if (first != NULL)
		CHECKF(k == first->n_sources && first->n_edges == delta->n_edges &&
			   memcmp(first->edges, delta->edges,
					  sizeof(PrEdgeChange) * (size_t) delta->n_edges) == 0 &&
			   first->n_absent == delta->n_absent &&
			   memcmp(first->absent, delta->absent,
					  sizeof(int32_t) * (size_t) delta->n_absent) == 0,
			   "%s: the delta made in one go differs", what);
	free(changes);
	free(x_degree);
}

/* Deletes every alive row of t with an endpoint v, adding the deletions to changes. */
static void
delete_node_rows(TableRows *t, int64_t v, PrEdgeChange *changes, size_t *n_changes)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->alive[i] && (t->src[i] == v || t->dst[i] == v))
			delete_row(t, i, changes, n_changes);
}

/* A random alive row of t at or past `from` (t has one), found by tries, then a scan. */
static size_t
alive_row_from(const TableRows *t, size_t from)
{
	for (int tries = 0; tries < 64; tries++)
	{
		size_t		i = from + (size_t) rand() % (t->n - from);

		if (t->alive[i])
			return i;
	}
	for (size_t i = from; i < t->n; i++)
		if (t->alive[i])
			return i;
	return 0;
}

/*
 * The largest weight and the edge count that an extend of old checks against the scaling limit
 * (largest * edges below 2^(PR_STRENGTH_LIMIT_EXP - 1), as pr_graph_patch_plan), exactly: X1 is
 * X plus a row of weight w (at one place of old's edges or another), X2 is X1 plus two small rows
 * (one a copy of an edge old inserted); X1 -> X2 is refused for the least w that the limit
 * refuses with X2's edges, taken for the one below it.
 */
static void
check_weight_limit(const PrGraph *root, const int64_t *root_degree, const PrGraphDelta *old,
				   bool undirected, const char *what)
{
	int64_t		per_row = undirected ? 2 : 1;
	int64_t		edges = root->n_edges + 3 * per_row;
	double		limit = ldexp(1.0, PR_STRENGTH_LIMIT_EXP - 1);
	double		refused;

	for (int64_t e = 0; e < old->n_edges; e++)
		edges += old->edges[e].count;
	refused = limit / (double) edges;
	while (refused * (double) edges < limit)
		refused = nextafter(refused, INFINITY);
	while (nextafter(refused, 0.0) * (double) edges >= limit)
		refused = nextafter(refused, 0.0);
	for (int trial = 0; trial < 32; trial++)
	{
		int64_t		s = root->node_ids[rand() % root->n_nodes];
		int64_t		d = root->node_ids[rand() % root->n_nodes];
		int64_t		u = root->node_ids[rand() % root->n_nodes];
		PrEdgeChange heavy = {s, s == d ? u : d, trial % 2 ? nextafter(refused, 0.0) : refused, 1};
		const PrEdgeChange *copied = &old->edges[rand() % old->n_edges];
		PrEdgeChange small[2] = {{u, s, 0.5, 1}, {root->node_ids[copied->src],
		root->node_ids[copied->dst], copied->weight, 1}};
		PrGraphDelta x1,
					x2;
		PrError		err;
		PrStatus	status;

		/* the second small row one more copy of an edge old inserted (old's counts added) */
		if (heavy.src == heavy.dst || u == s || copied->count <= 0 || copied->src == copied->dst)
			continue;
		CHECKF(pr_graph_delta_extend(root, root_degree, NULL, old, &heavy, 1, undirected, 2,
									 &pr_malloc_allocator, &x1, NULL, &err) == PR_OK,
			   "%s: the heavy row: %s", what, err.message);
		status = pr_graph_delta_extend(root, root_degree, NULL, &x1, small, 2, undirected, 2,
									   &pr_malloc_allocator, &x2, NULL, &err);
		CHECKF(status == (trial % 2 ? PR_OK : PR_ERR_INVALID),
			   "%s: weight %.17g with %lld edges: status %d", what, heavy.weight,
			   (long long) edges, (int) status);
		if (status == PR_OK)
			pr_graph_delta_free(&x2, &pr_malloc_allocator);
		pr_graph_delta_free(&x1, &pr_malloc_allocator);
	}
}

/*
 * A large delta (n_big rows of a root of n_rows changed in one extend: its edges, sources and
 * absent nodes many runs) extended by small steps, each on 1 thread and compared with 2 and 4
 * threads and a flat buffer (the same delta), with the build of the rows and the delta made in one
 * go from root (check_delta_exact).  Every step deletes rows the large change inserted, updates
 * their weights, deletes root's rows and inserts new ones, some on the first and last nodes (the
 * runs' ends); besides, a source gets an edge of weight 2^60 that its small weights vanish beside,
 * which the next step deletes (a cancellation: recounted, the build's bits), nodes are left
 * without an edge (the first node and a random one: absent) and one comes back, and the last node
 * loses its edges.  Weighted, the last delta is extended at the scaling limit (check_weight_limit).
 */
static void
check_extend_large(unsigned seed, bool weighted, bool undirected, size_t n_rows, size_t n_big)
{
	TableRows  *t = calloc(1, sizeof(TableRows));
	PrEdgeChange *all = malloc(sizeof(PrEdgeChange) * (2 * n_big + 4096));
	PrEdgeChange *changes = malloc(sizeof(PrEdgeChange) * 4096);
	int64_t		n_ids = (int64_t) n_rows / 4;
	size_t		n_all = 0,
				root_rows;
	int64_t    *root_degree = NULL;
	int64_t		heavy_src = 0;
	PrGraph		root,
				x;
	PrGraphDelta empty = {0},
				delta;
	PrError		err;
	char		what[128];

	srand(seed);
	for (size_t i = 0; i < n_rows; i++)
	{
		t->src[i] = rand() % n_ids;
		t->dst[i] = rand() % n_ids;
		t->w[i] = eighths_weight(weighted);
		t->alive[i] = true;
	}
	t->n = root_rows = n_rows;
	build_alive(t, weighted, undirected, &root);
	if (weighted)
	{
		root_degree = malloc(sizeof(int64_t) * (size_t) root.n_nodes);
		pr_graph_out_degrees(&root, 2, root_degree);
	}
	empty.n_nodes = root.n_nodes;
	/* the large change: deletions, weight updates (parallel inserts unweighted), inserts */
	for (size_t k = 0; k < n_big; k++)
	{
		size_t		i = alive_row_from(t, 0);

		if (k % 3 == 0)
			delete_row(t, i, all, &n_all);
		else if (k % 3 == 1)
		{
			if (weighted)
				delete_row(t, i, all, &n_all);
			insert_row(t, t->src[i], t->dst[i], eighths_weight(weighted), all, &n_all);
		}
		else
			insert_row(t, root.node_ids[rand() % root.n_nodes],
					   root.node_ids[rand() % root.n_nodes], eighths_weight(weighted), all,
					   &n_all);
	}
	CHECKF(pr_graph_delta_extend(&root, root_degree, NULL, &empty, all, n_all, undirected, 2,
								 &pr_malloc_allocator, &delta, NULL, &err) == PR_OK,
		   "large extend: %s", err.message);
	build_alive(t, weighted, undirected, &x);
	snprintf(what, sizeof(what), "seed %u weighted %d undirected %d: large", seed, weighted,
			 undirected);
	check_delta_exact(&root, &delta, &x, NULL, what);
	pr_graph_free(&x, &pr_malloc_allocator);
	for (int step = 0; step < 6; step++)
	{
		size_t		n_changes = 0;
		int64_t		first_id = root.node_ids[0],
					last = root.node_ids[root.n_nodes - 1];
		PrGraphDelta next,
					other,
					first;
		int64_t		changed = -1,
					other_changed = -1;

		snprintf(what, sizeof(what), "seed %u weighted %d undirected %d step %d", seed, weighted,
				 undirected, step);
		for (int op = 0; op < 60 + rand() % 200; op++)
		{
			size_t		i = alive_row_from(t, rand() % 2 ? root_rows : 0);

			switch (rand() % 4)
			{
				case 0:
					delete_row(t, i, changes, &n_changes);
					break;
				case 1:
					delete_row(t, i, changes, &n_changes);
					insert_row(t, t->src[i], t->dst[i], eighths_weight(weighted), changes,
							   &n_changes);
					break;
				case 2:
					insert_row(t, root.node_ids[rand() % root.n_nodes],
							   root.node_ids[rand() % root.n_nodes], eighths_weight(weighted),
							   changes, &n_changes);
					break;
				default:
					/* the first and last nodes: the ends of old's runs */
					insert_row(t, rand() % 2 ? first_id : last, rand() % 2 ? first_id : last,
							   eighths_weight(weighted), changes, &n_changes);
					break;
			}
		}
		if (step == 1 && weighted)
		{
			/* a heavy edge beside a source's small ones (one of root's sources, still one) */
			size_t		i = alive_row_from(t, 0);

			heavy_src = t->src[i];
			insert_row(t, heavy_src, t->dst[i], 0x1p60, changes, &n_changes);
		}
		if (step == 2 && weighted)
		{
			/* its small ones cancelled out of its sum: recounted */
			for (size_t i = 0; i < t->n; i++)
				if (t->alive[i] && t->w[i] == 0x1p60)
					delete_row(t, i, changes, &n_changes);
			CHECK(pr_graph_delta_absent(&delta, (int32_t) pr_graph_find(&root, heavy_src)) ==
				  false);
		}
		if (step == 3)
		{
			/* the first node and a random one left without an edge: absent */
			delete_node_rows(t, first_id, changes, &n_changes);
			delete_node_rows(t, t->src[alive_row_from(t, 0)], changes, &n_changes);
		}
		if (step == 5)
		{
			/* an absent node comes back, the last node goes */
			CHECK(delta.n_absent > 0);
			if (delta.n_absent > 0)
				insert_row(t, root.node_ids[delta.absent[rand() % delta.n_absent]],
						   root.node_ids[rand() % root.n_nodes], eighths_weight(weighted),
						   changes, &n_changes);
			delete_node_rows(t, last, changes, &n_changes);
		}
		memcpy(all + n_all, changes, sizeof(PrEdgeChange) * n_changes);
		n_all += n_changes;
		CHECKF(pr_graph_delta_extend(&root, root_degree, NULL, &delta, changes, n_changes,
									 undirected, 1, &pr_malloc_allocator, &next, &changed,
									 &err) == PR_OK, "%s: extend: %s", what, err.message);
		for (int threads = 2; threads <= 4; threads += 2)
		{
			CHECK(pr_graph_delta_extend(&root, root_degree, NULL, &delta, changes, n_changes,
										undirected, threads, &pr_malloc_allocator, &other,
										&other_changed, &err) == PR_OK);
			CHECKF(same_delta(&next, &other) && changed == other_changed, "%s: %d threads", what,
				   threads);
			pr_graph_delta_free(&other, &pr_malloc_allocator);
		}
		check_extend_flat(&root, root_degree, &delta, changes, n_changes, undirected, &next,
						  changed, what);
		CHECK(pr_graph_delta_extend(&root, root_degree, NULL, &empty, all, n_all, undirected, 2,
									&pr_malloc_allocator, &first, NULL, &err) == PR_OK);
		build_alive(t, weighted, undirected, &x);
		check_delta_exact(&root, &next, &x, &first, what);
		if (step == 3)
			CHECKF(pr_graph_delta_absent(&next, 0) && next.n_absent >= 2,
				   "%s: %lld absent nodes", what, (long long) next.n_absent);
		if (step == 5)
			CHECK(pr_graph_delta_absent(&next, (int32_t) (root.n_nodes - 1)));
		pr_graph_free(&x, &pr_malloc_allocator);
		pr_graph_delta_free(&first, &pr_malloc_allocator);
		pr_graph_delta_free(&delta, &pr_malloc_allocator);
		delta = next;
	}
	if (weighted)
		check_weight_limit(&root, root_degree, &delta, undirected, what);
	pr_graph_delta_free(&delta, &pr_malloc_allocator);
	pr_graph_free(&root, &pr_malloc_allocator);
	free(root_degree);
	free(changes);
	free(all);
	free(t);
}

/*
 * Large deltas extended by small steps (check_extend_large), weighted or not, directed or not;
 * the weighted ones with enough edges that their merges run on 2 and 4 threads.
 */
void
test_delta_extend_large(void)
{
	check_extend_large(41, true, false, 150000, 140000);
	check_extend_large(42, true, true, 100000, 70000);
	check_extend_large(43, false, false, 20000, 12000);
	check_extend_large(44, false, true, 20000, 12000);
}

/*
 * Every allocation of an extend failing in turn (one that recounts a source, leaves a node absent
 * and brings one back, into arrays of its own and into a flat buffer): PR_ERR_NOMEM, an empty
 * delta and nothing left allocated, until one is given enough; then the delta that the malloc
 * allocator gives.
 */
void
test_delta_extend_allocation_failures(void)
{
	const int64_t s[] = {1, 1, 1, 2, 3, 4, 4, 5};
	const int64_t d[] = {2, 3, 3, 3, 1, 1, 2, 4};
	const double w[] = {1e10, 0.3, 0.3, 2.0, 0.7, 0.5, 0.1, 1.5};
	/* node 5 loses its only edge (absent); then 1's large edge goes (recounted), 5 comes back */
	PrEdgeChange first_rows[] = {{5, 4, 1.5, -1}, {3, 2, 0.25, 1}, {2, 4, 1.0, 1}};
	PrEdgeChange rows[] = {{1, 2, 1e10, -1}, {5, 1, 0.75, 1}, {4, 2, 0.1, -1}, {3, 2, 0.25, 1}};
	PrGraph		root;
	int64_t		degree[5];
	PrGraphDelta empty = {0},
				old,
				expected;
	PrError		err;
	size_t		size;
	void	   *flat;

	build_rows(&root, s, d, w, 8, false);
	pr_graph_out_degrees(&root, 1, degree);
	empty.n_nodes = root.n_nodes;
	CHECK(pr_graph_delta_extend(&root, degree, NULL, &empty, first_rows, 3, false, 1,
								&pr_malloc_allocator, &old, NULL, &err) == PR_OK);
	CHECK(old.n_absent == 1);
	CHECK(pr_graph_delta_extend(&root, degree, NULL, &old, rows, 4, false, 1,
								&pr_malloc_allocator, &expected, NULL, &err) == PR_OK);
	CHECK(expected.n_absent == 0);
	size = pr_graph_delta_extend_size(&old, 4, false);
	flat = aligned_alloc(8, (size + 7) / 8 * 8);
	for (int into_flat = 0; into_flat < 2; into_flat++)
	{
		bool		ok_once = false;

		for (int budget = 0; budget < 80 && !ok_once; budget++)
		{
			FailingAlloc f = {budget, 0};
			PrAllocator a = failing_allocator(&f);
			PrGraphDelta out;
			PrStatus	status = into_flat ?
				pr_graph_delta_extend_flat(&root, degree, NULL, &old, rows, 4, false, 1, &a, flat,
										   size, &out, NULL, &err) :
				pr_graph_delta_extend(&root, degree, NULL, &old, rows, 4, false, 1, &a, &out, NULL,
									  &err);

			if (status == PR_OK)
			{
				ok_once = true;
				CHECKF(same_delta(&out, &expected), "flat %d, budget %d: another delta",
					   into_flat, budget);
				if (!into_flat)
					pr_graph_delta_free(&out, &a);
			}
			else
				CHECKF(status == PR_ERR_NOMEM && out.edges == NULL && out.n_edges == 0,
					   "flat %d, budget %d: status %d", into_flat, budget, (int) status);
			CHECKF(f.live == 0, "flat %d, budget %d leaves %d blocks", into_flat, budget, f.live);
		}
		CHECK(ok_once);
	}
	free(flat);
	pr_graph_delta_free(&old, &pr_malloc_allocator);
	pr_graph_delta_free(&expected, &pr_malloc_allocator);
	pr_graph_free(&root, &pr_malloc_allocator);
}

/*
 * A root's facts (pr_graph_root_facts) on 1 to 4 threads, with rows of counts per thread and
 * without (graphs with fewer edges per node than threads), against a count of the in-sources and
 * pr_graph_weight_range; an unweighted graph's out-strengths.
 */
void
test_delta_root_facts(void)
{
	GenSpec		spec = gen_rmat(15, (int64_t) 5 << 19, 17, true);
	size_t		m = (size_t) spec.m;
	int64_t    *src = malloc(sizeof(int64_t) * m);
	int64_t    *dst = malloc(sizeof(int64_t) * m);
	double	   *w = malloc(sizeof(double) * m);
	PrGraph		g;

	gen_edges(&spec, src, dst, 2);
	for (size_t e = 0; e < m; e++)
		w[e] = e % 7 == 0 ? 0.0 : 0.25 + (double) (e % 1000) / 8.0;
	/* weighted, then unweighted; many edges a node, then few (src spread over 2^22 ids) */
	for (int kind = 0; kind < 4; kind++)
	{
		int64_t    *expected,
				   *degree;
		PrWeightRange exact,
					range;

		if (kind == 2)
			for (size_t e = 0; e < m; e++)
				src[e] = src[e] * 131 + (int64_t) (e % 128);
		build_rows(&g, src, dst, kind % 2 == 0 ? w : NULL, m, false);
		expected = calloc((size_t) g.n_nodes, sizeof(int64_t));
		degree = malloc(sizeof(int64_t) * (size_t) g.n_nodes);
		for (int64_t e = 0; e < g.n_edges; e++)
			expected[g.in_src[e]]++;
		pr_graph_weight_range(&g, &exact);
		for (int threads = 1; threads <= 4; threads++)
		{
			memset(degree, 0xff, sizeof(int64_t) * (size_t) g.n_nodes);
			memset(&range, 0, sizeof(range));
			pr_graph_root_facts(&g, threads, &pr_malloc_allocator, degree, &range);
			CHECKF(memcmp(degree, expected, sizeof(int64_t) * (size_t) g.n_nodes) == 0,
				   "graph %d, %d threads: out-degrees", kind, threads);
			CHECKF(range.largest == exact.largest &&
				   range.smallest_positive == exact.smallest_positive,
				   "graph %d, %d threads: weights %g..%g, exact %g..%g", kind, threads,
				   range.smallest_positive, range.largest, exact.smallest_positive, exact.largest);
			pr_graph_out_degrees(&g, threads, degree);
			CHECK(memcmp(degree, expected, sizeof(int64_t) * (size_t) g.n_nodes) == 0);
		}
		free(expected);
		free(degree);
		pr_graph_free(&g, &pr_malloc_allocator);
	}
	free(src);
	free(dst);
	free(w);
}

/*
 * An extend of many changed rows (passes split over threads) gives the same delta on 1, 2 and 4
 * threads, in its own arrays or in a flat buffer, and that delta equals the build of the changed
 * rows; rows naming a node the root lacks that cancel each other are no change.
 */
void
test_delta_extend_threads(void)
{
	GenSpec		spec = gen_rmat(13, (int64_t) 16 << 13, 23, true);
	size_t		m = (size_t) spec.m;
	size_t		n_changes = 0;
	int64_t    *src = malloc(sizeof(int64_t) * (m + 8));
	int64_t    *dst = malloc(sizeof(int64_t) * (m + 8));
	double	   *w = malloc(sizeof(double) * (m + 8));
	bool	   *gone = calloc(m, sizeof(bool));
	PrEdgeChange *changes = malloc(sizeof(PrEdgeChange) * (m / 2 + 8));
	int64_t    *src1 = malloc(sizeof(int64_t) * (m + m / 4));
	int64_t    *dst1 = malloc(sizeof(int64_t) * (m + m / 4));
	double	   *w1 = malloc(sizeof(double) * (m + m / 4));
	size_t		m1 = 0;
	uint64_t	state = 99;
	PrGraph		root,
				x;
	int64_t    *degree;
	PrGraphDelta empty = {0},
				one,
				other;
	PrError		err;

	gen_edges(&spec, src, dst, 2);
	for (size_t e = 0; e < m; e++)
		w[e] = (double) (1 + e % 16);
	build_rows(&root, src, dst, w, m, false);
	degree = malloc(sizeof(int64_t) * (size_t) root.n_nodes);
	pr_graph_out_degrees(&root, 2, degree);
	/* a third of the rows changed: deleted, weight changed (parallel rows too), or inserted */
	for (size_t k = 0; k < m / 6; k++)
	{
		size_t		e = (size_t) (gen_random(&state) % m);

		if (gone[e])
			continue;
		gone[e] = true;
		changes[n_changes++] = (PrEdgeChange) {src[e], dst[e], w[e], -1};
		if (k % 3 == 1)
			changes[n_changes++] = (PrEdgeChange) {src[e], dst[e], w[e] + 0.5, 2};
		if (k % 3 == 2)
			changes[n_changes++] = (PrEdgeChange) {src[e], dst[(e + 1) % m], 3.0, 1};
	}
	/* a node the root lacks, inserted and deleted */
	changes[n_changes++] = (PrEdgeChange) {src[0], -5, 1.0, 1};
	changes[n_changes++] = (PrEdgeChange) {src[0], -5, 1.0, -1};
	empty.n_nodes = root.n_nodes;
	CHECK(pr_graph_delta_extend(&root, degree, NULL, &empty, changes, n_changes, false, 1,
								&pr_malloc_allocator, &one, NULL, &err) == PR_OK);
	for (int threads = 2; threads <= 4; threads += 2)
	{
		size_t		size = pr_graph_delta_extend_size(&empty, n_changes, false);
		void	   *flat = aligned_alloc(8, size);

		CHECK(pr_graph_delta_extend(&root, degree, NULL, &empty, changes, n_changes, false,
									threads, &pr_malloc_allocator, &other, NULL, &err) == PR_OK);
		CHECKF(same_delta(&one, &other), "%d threads", threads);
		pr_graph_delta_free(&other, &pr_malloc_allocator);
		CHECK(pr_graph_delta_extend_flat(&root, degree, NULL, &empty, changes, n_changes, false,
										 threads, &pr_malloc_allocator, flat, size, &other, NULL,
										 &err) == PR_OK);
		CHECKF(same_delta(&one, &other), "%d threads, flat", threads);
		free(flat);
	}
	/* the changed rows built */
	for (size_t e = 0; e < m; e++)
		if (!gone[e])
		{
			src1[m1] = src[e];
			dst1[m1] = dst[e];
			w1[m1++] = w[e];
		}
	for (size_t c = 0; c < n_changes; c++)
		for (int64_t k = 0; k < changes[c].count; k++)
		{
			src1[m1] = changes[c].src;
			dst1[m1] = changes[c].dst;
			w1[m1++] = changes[c].weight;
		}
	/* the node the root lacks: its rows cancel */
	m1 -= 1;
	for (size_t e = 0; e < m1; e++)
		CHECK(dst1[e] != -5);
	build_rows(&x, src1, dst1, w1, m1, false);
	check_delta_is(&root, degree, &one, &x, "many rows");
	pr_graph_free(&x, &pr_malloc_allocator);
	pr_graph_delta_free(&one, &pr_malloc_allocator);
	pr_graph_free(&root, &pr_malloc_allocator);
	free(degree);
	free(src);
	free(dst);
	free(w);
	free(gone);
	free(changes);
	free(src1);
	free(dst1);
	free(w1);
}
