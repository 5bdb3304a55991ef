/*
 * test_engine_delta.c — graph deltas (PrGraphDelta, pr_graph_delta.c) and the CPU engine serving
 * one (apply_delta): a delta made from a patch that kept the node set, merged with a second one,
 * and a CPU engine prepared on the base with the delta giving the scores of an engine prepared on
 * the patched graph (PageRank, RWR over several columns, HITS; weighted and not; a source left
 * dangling, a dangling node given an out-edge), a second delta replacing the first, an empty one
 * serving the base again, and a delta that does not fit refused.
 */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Nodes of the test graphs: 0..59, and 60, whose out-edges the changes delete. */
#define DELTA_NODES 61

/* Room for the test graphs' rows. */
#define DELTA_ROWS 400

/* Rows of a graph under test. */
typedef struct DeltaRows
{
	int64_t		src[DELTA_ROWS];
	int64_t		dst[DELTA_ROWS];
	double		weight[DELTA_ROWS];
	size_t		m;
} DeltaRows;

/* Appends a row. */
static void
add_row(DeltaRows *rows, int64_t src, int64_t dst, double weight)
{
	rows->src[rows->m] = src;
	rows->dst[rows->m] = dst;
	rows->weight[rows->m] = weight;
	rows->m++;
}

/*
 * The base's rows: a ring over 0..49 and 49 -> 0 (every node keeps an in-edge), edges into the
 * dangling nodes 50..59, random edges between 0..49 (from row `random_from` on), and 60 with an
 * in-edge (1 -> 60) and two out-edges (60 -> 2, 60 -> 3).
 */
static void
base_rows(DeltaRows *rows, bool weighted, uint64_t seed, size_t *random_from)
{
	uint64_t	state = seed;

	rows->m = 0;
	for (int64_t v = 0; v < 50; v++)
		add_row(rows, v, (v + 1) % 50, 1.0);
	for (int64_t v = 0; v < 20; v++)
		add_row(rows, v, 50 + v % 10, weighted ? 0.5 + (double) (v % 3) : 1.0);
	add_row(rows, 1, 60, 1.0);
	add_row(rows, 60, 2, weighted ? 2.0 : 1.0);
	add_row(rows, 60, 3, 1.0);
	*random_from = rows->m;
	for (int i = 0; i < 200; i++)
		add_row(rows, (int64_t) (test_rand(&state) % 50), (int64_t) (test_rand(&state) % 50),
				weighted ? 0.25 * (double) (1 + test_rand(&state) % 8) : 1.0);
}

/* Builds a graph (with out-edges, for HITS) of rows. */
static void
build_delta_graph(const DeltaRows *rows, bool weighted, PrGraph *g)
{
	PrBuildOptions options = {0};
	PrError		err;

	options.out_edges = true;
	options.n_threads = 2;
	CHECKF(pr_graph_build(rows->src, rows->dst, weighted ? rows->weight : NULL, rows->m, &options,
						  &pr_malloc_allocator, g, &err) == PR_OK, "build: %s", err.message);
}

/*
 * The changes (and new rows): rows deleted among the random ones, rows inserted between existing
 * nodes, a weight update (weighted), 60's out-edges deleted (60 becomes dangling) and 55 -> 7 and
 * 57 -> 57 inserted (dangling 55 and 57 get out-edges); step picks which.
 */
static size_t
make_changes(DeltaRows *rows, size_t random_from, bool weighted, int step, uint64_t seed,
			 PrEdgeChange *changes)
{
	uint64_t	state = seed;
	size_t		n = 0;

	for (int i = 0; i < 6; i++)
	{
		/* delete a random row (swap it with the last, which stays random or inserted) */
		size_t		r = random_from + (size_t) (test_rand(&state) % (rows->m - random_from));

		changes[n++] = (PrEdgeChange) {rows->src[r], rows->dst[r],
			weighted ? rows->weight[r] : 1.0, -1};
		rows->m--;
		rows->src[r] = rows->src[rows->m];
		rows->dst[r] = rows->dst[rows->m];
		rows->weight[r] = rows->weight[rows->m];
	}
	for (int i = 0; i < 6; i++)
	{
		int64_t		s = (int64_t) (test_rand(&state) % 50),
					d = (int64_t) (test_rand(&state) % 60);
		double		w = weighted ? 0.5 * (double) (1 + test_rand(&state) % 4) : 1.0;

		add_row(rows, s, d, w);
		changes[n++] = (PrEdgeChange) {s, d, w, 1};
	}
	if (weighted)
	{
		size_t		r = random_from + (size_t) (test_rand(&state) % (rows->m - random_from));

		changes[n++] = (PrEdgeChange) {rows->src[r], rows->dst[r], rows->weight[r], -1};
		rows->weight[r] += 1.5;
		changes[n++] = (PrEdgeChange) {rows->src[r], rows->dst[r], rows->weight[r], 1};
	}
	if (step == 0)
	{
		/* 60 -> 2 and 60 -> 3 go: 60 keeps its in-edge and becomes dangling */
		for (size_t r = 0; r < rows->m; r++)
			if (rows->src[r] == 60)
			{
				changes[n++] = (PrEdgeChange) {60, rows->dst[r], weighted ? rows->weight[r] : 1.0, -1};
				rows->m--;
				rows->src[r] = rows->src[rows->m];
				rows->dst[r] = rows->dst[rows->m];
				rows->weight[r] = rows->weight[rows->m];
				r--;
			}
		add_row(rows, 55, 7, 1.0);
		changes[n++] = (PrEdgeChange) {55, 7, 1.0, 1};
	}
	else
	{
		add_row(rows, 57, 57, weighted ? 3.0 : 1.0);
		changes[n++] = (PrEdgeChange) {57, 57, weighted ? 3.0 : 1.0, 1};
	}
	return n;
}

/*
 * The delta from base to base plus changes (pr_graph_delta_extend from an empty delta; its
 * out-strengths are X's: the changes' weights are small integers, so the sums are exact).
 */
static void
delta_of_changes(const PrGraph *base, const PrEdgeChange *changes, size_t n_changes,
				 PrGraphDelta *delta)
{
	PrGraphDelta empty = {0};
	int64_t    *degree = NULL;
	PrError		err;

	empty.n_nodes = base->n_nodes;
	if (base->weighted)
	{
		degree = malloc(sizeof(int64_t) * ((size_t) base->n_nodes + 1));
		CHECK(degree != NULL);
		pr_graph_out_degrees(base, 2, degree);
	}
	CHECKF(pr_graph_delta_extend(base, degree, NULL, &empty, changes, n_changes, false, 2,
								 &pr_malloc_allocator, delta, NULL, &err) == PR_OK,
		   "delta: %s", err.message);
	free(degree);
}

/* A base, the graphs of two patches after it, and their deltas (first, second, and merged). */
typedef struct TwoPatches
{
	PrGraph		base,
				x1,
				x2;
	PrGraphDelta first,
				second,
				merged;
} TwoPatches;

/* Builds a base and two patches of it (make_changes' steps 0 and 1) from seeds. */
static void
two_patches(bool weighted, uint64_t seed, TwoPatches *t)
{
	DeltaRows	rows;
	size_t		random_from,
				n1,
				n2;
	PrEdgeChange changes[64];
	PrError		err;

	base_rows(&rows, weighted, seed, &random_from);
	build_delta_graph(&rows, weighted, &t->base);
	n1 = make_changes(&rows, random_from, weighted, 0, seed + 10, changes);
	build_delta_graph(&rows, weighted, &t->x1);
	n2 = make_changes(&rows, random_from, weighted, 1, seed + 20, changes + n1);
	build_delta_graph(&rows, weighted, &t->x2);
	delta_of_changes(&t->base, changes, n1, &t->first);
	delta_of_changes(&t->x1, changes + n1, n2, &t->second);
	CHECKF(pr_graph_delta_merge(&t->first, &t->second, &pr_malloc_allocator, &t->merged, &err) == PR_OK,
		   "merge: %s", err.message);
}

/* Frees what two_patches made. */
static void
two_patches_free(TwoPatches *t)
{
	pr_graph_delta_free(&t->first, &pr_malloc_allocator);
	pr_graph_delta_free(&t->second, &pr_malloc_allocator);
	pr_graph_delta_free(&t->merged, &pr_malloc_allocator);
	pr_graph_free(&t->base, &pr_malloc_allocator);
	pr_graph_free(&t->x1, &pr_malloc_allocator);
	pr_graph_free(&t->x2, &pr_malloc_allocator);
}

/* Scores of PageRank (k = 1), RWR from three sources (k = 3) and HITS on an engine and graph. */
typedef struct DeltaScores
{
	double		pagerank[DELTA_NODES];
	double		rwr[3 * DELTA_NODES];
	double		hubs[DELTA_NODES];
	double		authorities[DELTA_NODES];
} DeltaScores;

/*
 * Runs the three algorithms on engine over g; apply, when not NULL, is applied after each
 * algorithm's prepare (the driver's own prepare then finds the graph laid out and keeps it).
 */
static void
run_scores(PrEngine *engine, const PrGraph *g, const PrGraphDelta *apply, DeltaScores *out)
{
	PrIterOptions o = test_iter_options(1e-13, 1000);
	PrRunStats	st;
	PrError		err;
	PrRestart	uniform = {0};
	int64_t		ptr[4] = {0, 1, 2, 4};
	int32_t		node[4] = {0, 60, 7, 55};
	double		weight[4] = {1.0, 1.0, 0.5, 0.5};
	PrRestart	sources = pr_restart_columns(3, ptr, node, weight);
	const PrAlgorithmInfo *hits = pr_algorithm(PR_ALGORITHM_HITS);

	uniform.uniform = true;
	uniform.k = 1;
	CHECK(g->n_nodes == DELTA_NODES);
	CHECK(pr_pagerank_prepare(engine, g, 1, &err) == PR_OK);
	if (apply != NULL)
		CHECKF(engine->ops->apply_delta(engine, apply, &err) == PR_OK, "apply: %s", err.message);
	CHECKF(pr_pagerank(engine, g, 0.85, &uniform, &o, out->pagerank, &st, &err) == PR_OK,
		   "pagerank: %s", err.message);
	/* RWR prepares 3 columns on the same layout: the delta stays */
	CHECKF(pr_pagerank(engine, g, 0.85, &sources, &o, out->rwr, &st, &err) == PR_OK,
		   "rwr: %s", err.message);
	/* HITS lays the graph out again for its products: the delta stays too */
	CHECK(engine->ops->prepare(engine, g, 1, hits->slots, hits->needs, &err) == PR_OK);
	CHECKF(pr_hits(engine, g, &o, out->hubs, out->authorities, &st, &err) == PR_OK,
		   "hits: %s", err.message);
}

/* Largest difference between two score sets. */
static double
scores_apart(const DeltaScores *a, const DeltaScores *b)
{
	double		worst = 0.0;
	const double *x = (const double *) a;
	const double *y = (const double *) b;

	for (size_t i = 0; i < sizeof(DeltaScores) / sizeof(double); i++)
		if (fabs(x[i] - y[i]) > worst)
			worst = fabs(x[i] - y[i]);
	return worst;
}

/* A delta from changed rows: its edges in base ids and X's out-strengths; a new node refused. */
void
test_delta_from_changes(void)
{
	DeltaRows	rows;
	size_t		random_from,
				n_changes;
	PrEdgeChange changes[32];
	PrGraph		base,
				x;
	PrGraphDelta delta;
	PrError		err;
	int64_t		dangling[DELTA_NODES + 16];
	int64_t		n_dangling;
	int32_t		list[DELTA_NODES + 16];
	PrEdgeChange fresh = {7, 1000, 1.0, 1};

	base_rows(&rows, true, 5, &random_from);
	build_delta_graph(&rows, true, &base);
	n_changes = make_changes(&rows, random_from, true, 0, 11, changes);
	build_delta_graph(&rows, true, &x);
	delta_of_changes(&base, changes, n_changes, &delta);
	CHECK(delta.n_nodes == base.n_nodes && delta.n_edges > 0 && delta.n_sources > 0);
	CHECK(pr_graph_delta_check(&delta, &base, &err) == PR_OK);
	for (int64_t i = 0; i < delta.n_sources; i++)
		CHECK(delta.out_strength[i] == x.out_strength[delta.sources[i]]);
	for (int64_t i = 0; i < delta.n_edges; i++)
		CHECK(base.node_ids[delta.edges[i].src] >= 0 && delta.edges[i].count != 0);
	/* X's dangling list from the base's and the delta: 60 in, 55 out */
	n_dangling = pr_graph_delta_dangling(&base, &delta, list);
	CHECK(n_dangling == x.n_dangling);
	for (int64_t i = 0; i < n_dangling && i < x.n_dangling; i++)
		dangling[i] = list[i];
	for (int64_t i = 0; i < n_dangling && i < x.n_dangling; i++)
		CHECK(dangling[i] == x.dangling[i]);
	/* out of order, out of range: refused */
	if (delta.n_edges >= 2)
	{
		PrEdgeChange swap = delta.edges[0];

		delta.edges[0] = delta.edges[1];
		delta.edges[1] = swap;
		CHECK(pr_graph_delta_check(&delta, &base, &err) == PR_ERR_INVALID);
		delta.edges[1] = delta.edges[0];
		delta.edges[0] = swap;
	}
	delta.edges[0].dst = DELTA_NODES;
	CHECK(pr_graph_delta_check(&delta, &base, &err) == PR_ERR_INVALID);
	pr_graph_delta_free(&delta, &pr_malloc_allocator);
	/* a new node: no delta describes it */
	{
		PrGraphDelta empty = {0};
		int64_t    *degree = malloc(sizeof(int64_t) * ((size_t) base.n_nodes + 1));

		CHECK(degree != NULL);
		pr_graph_out_degrees(&base, 2, degree);
		empty.n_nodes = base.n_nodes;
		CHECK(pr_graph_delta_extend(&base, degree, NULL, &empty, &fresh, 1, false, 2,
									&pr_malloc_allocator, &delta, NULL, &err) ==
			  PR_ERR_UNSUPPORTED);
		free(degree);
	}
	pr_graph_free(&base, &pr_malloc_allocator);
	pr_graph_free(&x, &pr_malloc_allocator);
}

/*
 * Two deltas merged (B -> X1 then X1 -> X2) equal the delta of both patches' changes at once
 * (B -> X2): the same edges, and out-strengths of X2 for every source.
 */
void
test_delta_merge(void)
{
	for (int weighted = 0; weighted <= 1; weighted++)
	{
		TwoPatches	t;
		DeltaRows	rows;
		size_t		random_from,
					n1;
		PrEdgeChange changes[64];
		PrGraphDelta direct;
		PrError		err;

		two_patches(weighted, 21, &t);
		/* the same changes at once, from the base */
		base_rows(&rows, weighted, 21, &random_from);
		n1 = make_changes(&rows, random_from, weighted, 0, 31, changes);
		n1 += make_changes(&rows, random_from, weighted, 1, 41, changes + n1);
		delta_of_changes(&t.base, changes, n1, &direct);
		CHECK(pr_graph_delta_check(&t.merged, &t.base, &err) == PR_OK);
		CHECKF(t.merged.n_edges == direct.n_edges, "%lld merged edges, %lld direct",
			   (long long) t.merged.n_edges, (long long) direct.n_edges);
		for (int64_t i = 0; i < t.merged.n_edges && i < direct.n_edges; i++)
			CHECK(t.merged.edges[i].src == direct.edges[i].src &&
				  t.merged.edges[i].dst == direct.edges[i].dst &&
				  t.merged.edges[i].weight == direct.edges[i].weight &&
				  t.merged.edges[i].count == direct.edges[i].count);
		CHECK(t.merged.n_sources >= direct.n_sources);
		for (int64_t i = 0; i < t.merged.n_sources; i++)
			CHECK(t.merged.out_strength[i] == t.x2.out_strength[t.merged.sources[i]]);
		pr_graph_delta_free(&direct, &pr_malloc_allocator);
		two_patches_free(&t);
	}
}

/*
 * The CPU engine prepared on B serving B + delta gives the scores of an engine prepared on X,
 * within rounding: after one patch, after a second (the merged delta replacing the first), after a
 * failed prepare (the delta kept for the next one), and with an empty delta B's own scores again;
 * weighted and unweighted.
 */
void
test_cpu_engine_delta(void)
{
	for (int weighted = 0; weighted <= 1; weighted++)
	{
		TwoPatches	t;
		PrGraphDelta empty = {0};
		PrError		err;
		PrEngine   *on_base = pr_cpu_engine_create(2, NULL, &err);
		PrEngine   *fresh = pr_cpu_engine_create(2, NULL, &err);
		DeltaScores *want = calloc(1, sizeof(DeltaScores));
		DeltaScores *got = calloc(1, sizeof(DeltaScores));

		CHECK(on_base != NULL && fresh != NULL && on_base->ops->apply_delta != NULL);
		two_patches(weighted, 7 + (uint64_t) weighted, &t);
		/* 60 becomes dangling, 55 stops being dangling */
		CHECK(t.base.out_strength[60] > 0.0 && t.x1.out_strength[60] == 0.0);
		CHECK(t.base.out_strength[55] == 0.0 && t.x1.out_strength[55] > 0.0);

		/* B + first against X1 */
		run_scores(fresh, &t.x1, NULL, want);
		run_scores(on_base, &t.base, &t.first, got);
		CHECKF(scores_apart(want, got) < 1e-12, "weighted %d: first delta off by %g", weighted,
			   scores_apart(want, got));
		/* node 60 is dangling in X1: its hub score is 0 there (its deleted terms cancel B's
		 * within the rounding of their sum) */
		CHECKF(fabs(got->hubs[60]) < 1e-15 && want->hubs[60] == 0.0, "hubs of 60: %g %g",
			   got->hubs[60], want->hubs[60]);

		/* B + merged (replacing first) against X2 */
		run_scores(fresh, &t.x2, NULL, want);
		run_scores(on_base, &t.base, &t.merged, got);
		CHECKF(scores_apart(want, got) < 1e-12, "weighted %d: merged delta off by %g", weighted,
			   scores_apart(want, got));

		/* a prepare that fails leaves the delta pending: the next prepare of B serves X2 again */
		CHECK(on_base->ops->prepare(on_base, &t.base, 0, 2, PR_NEED_PULL_NORMALIZED, &err) ==
			  PR_ERR_INVALID);
		run_scores(on_base, &t.base, NULL, got);
		CHECKF(scores_apart(want, got) < 1e-12, "weighted %d: pending delta off by %g", weighted,
			   scores_apart(want, got));

		/* an empty delta: B again, bit for bit */
		empty.n_nodes = t.base.n_nodes;
		run_scores(fresh, &t.base, NULL, want);
		run_scores(on_base, &t.base, &empty, got);
		CHECKF(scores_apart(want, got) == 0.0, "weighted %d: empty delta off by %g", weighted,
			   scores_apart(want, got));

		/* a delta for another node count is refused */
		empty.n_nodes = t.base.n_nodes + 1;
		CHECK(on_base->ops->apply_delta(on_base, &empty, &err) == PR_ERR_INVALID);

		on_base->ops->release(on_base);
		fresh->ops->release(fresh);
		two_patches_free(&t);
		free(want);
		free(got);
	}
}
