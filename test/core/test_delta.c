/*
 * test_delta.c — a graph patched with changed rows (pr_graph_delta.c) against pr_graph_build of
 * the patched rows: every array equal, for inserts, deletes, weight changes, new and vanished
 * nodes, directed and undirected, weighted and not; the plan's arrays written in place in a flat
 * buffer (the cache's segment), its changed-edge count, node map and weight bounds; the patches that move
 * no node id (weight updates, new ids past the largest); and the refusals.
 */
#include "test_util.h"

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
