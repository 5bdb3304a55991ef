/*
 * test_engine_absent.c — the CPU engine serving a delta with absent nodes (PrGraphDelta.absent: the
 * base's nodes that X lacks): an engine prepared on a base R plus apply_delta gives, on the nodes
 * X keeps, the scores of an engine prepared on X itself, and exactly 0 on the absent ones.
 * PageRank, personalized PageRank (its dangling mass following the restart, or a dangling
 * distribution of its own; from 1/N and from the warm start), RWR over three columns; weighted and
 * not; plain and mixed iterations.  R spans several of the engine's node chunks, and its absent
 * nodes lie in each: nodes with in- and out-edges, a self-loop, and dangling nodes of R.  The
 * delta R -> X is made here from the rows deleted and inserted.
 */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Ring nodes 0 .. ABSENT_RING-1 (several CPU engine chunks), then leaves with in-edges only. */
#define ABSENT_RING 9000
#define ABSENT_LEAVES 12
#define ABSENT_NODES (ABSENT_RING + ABSENT_LEAVES)

/* Random rows among the ring nodes, and room for every row. */
#define ABSENT_RANDOM 36000
#define ABSENT_ROWS (ABSENT_RING + ABSENT_LEAVES + ABSENT_RANDOM + 64)

/* Ring nodes of R that X lacks (none the only ring neighbours of a kept node). */
static const int64_t absent_ring[] = {0, 7, 4095, 4098, 5000, 8190, 8999};

/* Leaves of R that X lacks (their one in-edge deleted). */
static const int64_t absent_leaves[] = {ABSENT_RING + 2, ABSENT_RING + 11};

/*
 * Rows in external ids: R's (count -1 when X deletes the row, else 0), or the rows X inserts
 * (count 1).
 */
typedef struct AbsentRows
{
	PrEdgeChange *row;
	size_t		m;
} AbsentRows;

/* Whether an external id is one of X's absent nodes. */
static bool
is_absent(int64_t id)
{
	for (size_t i = 0; i < sizeof(absent_ring) / sizeof(absent_ring[0]); i++)
		if (absent_ring[i] == id)
			return true;
	for (size_t i = 0; i < sizeof(absent_leaves) / sizeof(absent_leaves[0]); i++)
		if (absent_leaves[i] == id)
			return true;
	return false;
}

/*
 * R's rows: a ring over 0 .. ABSENT_RING-1, an edge into each leaf, a self-loop on absent node
 * 4095, random rows between ring nodes; then the changes to X: every row of an absent node
 * deleted, some random rows deleted, rows inserted between kept nodes, one weight changed
 * (weighted).  rows holds R's rows (deleted marked); inserted the rows X adds.
 */
static void
absent_rows(bool weighted, uint64_t seed, AbsentRows *rows, AbsentRows *inserted)
{
	uint64_t	state = seed;
	PrEdgeChange *row = rows->row;
	size_t		m = 0;

	for (int64_t v = 0; v < ABSENT_RING; v++)
		row[m++] = (PrEdgeChange) {v, (v + 1) % ABSENT_RING, weighted ? 1.0 + (double) (v % 3) : 1.0, 0};
	for (int64_t l = 0; l < ABSENT_LEAVES; l++)
		row[m++] = (PrEdgeChange) {l * 101 + 3, ABSENT_RING + l, weighted ? 0.5 : 1.0, 0};
	row[m++] = (PrEdgeChange) {4095, 4095, weighted ? 2.5 : 1.0, 0};
	for (int i = 0; i < ABSENT_RANDOM; i++)
	{
		int64_t		s = (int64_t) (test_rand(&state) % ABSENT_RING),
					d = (int64_t) (test_rand(&state) % ABSENT_RING);

		row[m++] = (PrEdgeChange) {s, d, weighted ? 0.25 * (double) (1 + test_rand(&state) % 8) : 1.0, 0};
	}
	for (size_t r = 0; r < m; r++)
		if (is_absent(row[r].src) || is_absent(row[r].dst) ||
			(r >= (size_t) (ABSENT_RING + ABSENT_LEAVES) && test_rand(&state) % 50 == 0))
			row[r].count = -1;
	rows->m = m;
	inserted->m = 0;
	for (int i = 0; i < 40; i++)
	{
		int64_t		s = (int64_t) (test_rand(&state) % ABSENT_RING),
					d = (int64_t) (test_rand(&state) % ABSENT_NODES);
		double		w = weighted ? 0.5 * (double) (1 + test_rand(&state) % 4) : 1.0;

		if (!is_absent(s) && !is_absent(d))
			inserted->row[inserted->m++] = (PrEdgeChange) {s, d, w, 1};
	}
	if (weighted)
	{
		/* a weight change: the row deleted, the row with its new weight inserted */
		size_t		r = (size_t) ABSENT_RING + ABSENT_LEAVES + 5;

		while (row[r].count != 0)
			r++;
		row[r].count = -1;
		inserted->row[inserted->m++] = (PrEdgeChange) {row[r].src, row[r].dst, row[r].weight + 1.5, 1};
	}
}

/* Builds R (all of rows) or X (the rows it keeps and the inserted ones). */
static void
absent_build(const AbsentRows *rows, const AbsentRows *inserted, bool is_x, bool weighted, PrGraph *g)
{
	size_t		cap = rows->m + inserted->m + 1;
	int64_t    *src = malloc(sizeof(int64_t) * cap);
	int64_t    *dst = malloc(sizeof(int64_t) * cap);
	double	   *weight = malloc(sizeof(double) * cap);
	size_t		m = 0;
	PrBuildOptions options = {0};
	PrError		err;

	for (size_t i = 0; i < rows->m + (is_x ? inserted->m : 0); i++)
	{
		const PrEdgeChange *c = i < rows->m ? &rows->row[i] : &inserted->row[i - rows->m];

		if (is_x && c->count < 0)
			continue;
		src[m] = c->src;
		dst[m] = c->dst;
		weight[m++] = c->weight;
	}
	options.n_threads = 2;
	CHECKF(pr_graph_build(src, dst, weighted ? weight : NULL, m, &options, &pr_malloc_allocator, g,
						  &err) == PR_OK, "build: %s", err.message);
	free(src);
	free(dst);
	free(weight);
}

/* Internal id of an external id in g (its node_ids ascending), or -1. */
static int32_t
internal_id(const PrGraph *g, int64_t id)
{
	int64_t		i = pr_lower_bound(g->node_ids, 0, g->n_nodes, id);

	return i < g->n_nodes && g->node_ids[i] == id ? (int32_t) i : -1;
}

/* Orders changes by (dst, src, weight), as a delta keeps its edges. */
static int
change_cmp(const void *a, const void *b)
{
	return pr_edge_change_order((const PrEdgeChange *) a, (const PrEdgeChange *) b);
}

/* Orders int32 ids. */
static int
id_cmp(const void *a, const void *b)
{
	int32_t		x = *(const int32_t *) a,
				y = *(const int32_t *) b;

	return (x > y) - (x < y);
}

/*
 * The delta R -> X in R's ids: the deleted and inserted rows netted and sorted, every source of a
 * change with X's out-strength (0 for an absent one), R's nodes that X lacks.
 */
static void
absent_delta(const PrGraph *r, const PrGraph *x, const AbsentRows *rows, const AbsentRows *inserted,
			 PrGraphDelta *delta)
{
	size_t		cap = rows->m + inserted->m + 1;
	PrEdgeChange *changes = malloc(sizeof(PrEdgeChange) * cap);
	int32_t    *sources = malloc(sizeof(int32_t) * cap);
	size_t		n_changes = 0,
				n_edges = 0,
				n_sources = 0,
				n_absent = 0;

	for (size_t i = 0; i < rows->m + inserted->m; i++)
	{
		const PrEdgeChange *c = i < rows->m ? &rows->row[i] : &inserted->row[i - rows->m];

		if (c->count != 0)
			changes[n_changes++] = (PrEdgeChange) {internal_id(r, c->src), internal_id(r, c->dst),
				r->weighted ? c->weight : 1.0, c->count};
	}
	qsort(changes, n_changes, sizeof(PrEdgeChange), change_cmp);
	for (size_t i = 0; i < n_changes; i++)
	{
		if (n_edges > 0 && pr_edge_change_order(&changes[n_edges - 1], &changes[i]) == 0)
			changes[n_edges - 1].count += changes[i].count;
		else
			changes[n_edges++] = changes[i];
		if (changes[n_edges - 1].count == 0)
			n_edges--;
	}
	for (size_t i = 0; i < n_changes; i++)
		sources[i] = (int32_t) changes[i].src;
	qsort(sources, n_changes, sizeof(int32_t), id_cmp);
	for (size_t i = 0; i < n_changes; i++)
		if (n_sources == 0 || sources[n_sources - 1] != sources[i])
			sources[n_sources++] = sources[i];
	for (int64_t v = 0; v < r->n_nodes; v++)
		n_absent += internal_id(x, r->node_ids[v]) < 0;
	CHECK(pr_graph_delta_alloc(delta, r->n_nodes, (int64_t) n_edges, (int64_t) n_sources,
							   (int64_t) n_absent, &pr_malloc_allocator));
	memcpy(delta->edges, changes, sizeof(PrEdgeChange) * n_edges);
	delta->n_edges = (int64_t) n_edges;
	for (size_t i = 0; i < n_sources; i++)
	{
		int32_t		in_x = internal_id(x, r->node_ids[sources[i]]);

		delta->sources[i] = sources[i];
		delta->out_strength[i] = in_x >= 0 ? x->out_strength[in_x] : 0.0;
	}
	delta->n_sources = (int64_t) n_sources;
	for (int64_t v = 0; v < r->n_nodes; v++)
		if (internal_id(x, r->node_ids[v]) < 0)
			delta->absent[delta->n_absent++] = (int32_t) v;
	free(changes);
	free(sources);
}

/* The restarts a case runs, over node ids of one graph. */
typedef enum AbsentRestart
{
	RESTART_UNIFORM,			/* PageRank */
	RESTART_PERSONALIZED,		/* one column over three nodes, dangling mass following it */
	RESTART_DANGLING,			/* the same, the dangling mass to two other nodes */
	RESTART_RWR					/* three columns, one source each */
} AbsentRestart;

/* External ids the restarts name (all kept by X). */
static const int64_t restart_ids[] = {1, 4096, 8000, 3, ABSENT_RING + 1};
static const int64_t dangling_ids[] = {12, 6000};

/*
 * Runs a case on engine over g (the ids of g): PageRank or RWR, plain or mixed (mixing depth),
 * with o's tolerance; apply, when not NULL, is applied after the prepare.  scores gets n * k.
 */
static void
absent_run(PrEngine *engine, const PrGraph *g, const PrGraphDelta *apply, AbsentRestart kind,
		   int mixing, bool warm, double *scores, PrRunStats *stats)
{
	PrIterOptions o = test_iter_options(1e-13, 1000);
	PrError		err;
	PrRestart	restart = {0};
	int64_t		ptr[4];
	int32_t		node[3];
	double		weight[3] = {0.5, 0.25, 0.25};
	int32_t		dangling_node[2];
	double		dangling_weight[2] = {0.75, 0.25};
	int			k = kind == RESTART_RWR ? 3 : 1;

	o.norm = PR_NORM_L1_SCALED;
	o.mixing_depth = mixing;
	o.warm_start = warm;
	o.absent_nodes = apply != NULL ? apply->n_absent : 0;
	for (int i = 0; i < 3; i++)
		node[i] = internal_id(g, restart_ids[i]);
	for (int i = 0; i < 2; i++)
		dangling_node[i] = internal_id(g, dangling_ids[i]);
	if (kind == RESTART_UNIFORM)
	{
		restart.uniform = true;
		restart.k = 1;
	}
	else if (kind == RESTART_RWR)
	{
		for (int j = 0; j <= 3; j++)
			ptr[j] = j;
		weight[0] = weight[1] = weight[2] = 1.0;
		restart = pr_restart_columns(3, ptr, node, weight);
	}
	else
	{
		ptr[0] = 0;
		ptr[1] = 3;
		/* node ids ascending in a column */
		qsort(node, 3, sizeof(int32_t), id_cmp);
		restart = pr_restart_columns(1, ptr, node, weight);
		if (kind == RESTART_DANGLING)
		{
			restart.dangling_count = 2;
			restart.dangling_node = dangling_node;
			restart.dangling_weight = dangling_weight;
		}
	}
	CHECK(pr_pagerank_prepare(engine, g, k, &err) == PR_OK);
	if (apply != NULL)
		CHECKF(engine->ops->apply_delta(engine, apply, &err) == PR_OK, "apply: %s", err.message);
	CHECKF(pr_pagerank(engine, g, 0.85, &restart, &o, scores, stats, &err) == PR_OK,
		   "pagerank: %s", err.message);
	CHECK(stats->converged);
}

/*
 * Compares a case on R + delta (got, R's ids) with the same case on X (want, X's ids): on X's
 * nodes within the two runs' error bounds (each column's L1 distance), exactly 0 on the absent
 * nodes, mass 1, iterations within one.
 */
static void
absent_compare(const PrGraph *r, const PrGraph *x, int k, const double *got, const PrRunStats *got_stats,
			   const double *want, const PrRunStats *want_stats, const char *what)
{
	double		bound = got_stats->error_bound + want_stats->error_bound;

	for (int j = 0; j < k; j++)
	{
		double		l1 = 0.0,
					absent_sum = 0.0,
					mass = 0.0;

		for (int64_t v = 0; v < r->n_nodes; v++)
		{
			int32_t		in_x = internal_id(x, r->node_ids[v]);
			double		g = got[v * k + j];

			mass += g;
			if (in_x < 0)
				absent_sum += fabs(g);
			else
				l1 += fabs(g - want[(int64_t) in_x * k + j]);
		}
		CHECKF(absent_sum == 0.0, "%s column %d: absent nodes hold %g", what, j, absent_sum);
		CHECKF(l1 <= bound, "%s column %d: %g apart, bound %g", what, j, l1, bound);
		CHECKF(fabs(mass - 1.0) < 1e-9, "%s column %d: mass %.17g", what, j, mass);
	}
	CHECKF(abs(got_stats->iterations - want_stats->iterations) <= 1, "%s: %d iterations against %d",
		   what, got_stats->iterations, want_stats->iterations);
}

/*
 * Every case on R + delta against X: the restarts, plain and mixed, from 1/N and the warm start
 * (personalized), weighted and unweighted; then an empty delta serves R again, which has no absent
 * node.
 */
void
test_cpu_engine_absent(void)
{
	static const char *const kinds[] = {"pagerank", "personalized", "dangling", "rwr"};

	for (int weighted = 0; weighted <= 1; weighted++)
	{
		AbsentRows	rows,
					inserted;
		PrGraph		r,
					x;
		PrGraphDelta delta,
					empty = {0};
		PrError		err;
		PrEngine   *on_r = pr_cpu_engine_create(2, NULL, &err);
		PrEngine   *fresh = pr_cpu_engine_create(2, NULL, &err);
		double	   *got = malloc(sizeof(double) * 3 * ABSENT_NODES);
		double	   *want = malloc(sizeof(double) * 3 * ABSENT_NODES);
		PrRunStats	got_stats,
					want_stats;

		rows.row = malloc(sizeof(PrEdgeChange) * ABSENT_ROWS);
		inserted.row = malloc(sizeof(PrEdgeChange) * 64);
		CHECK(on_r != NULL && fresh != NULL);
		absent_rows(weighted, 91 + (uint64_t) weighted, &rows, &inserted);
		absent_build(&rows, &inserted, false, weighted, &r);
		absent_build(&rows, &inserted, true, weighted, &x);
		absent_delta(&r, &x, &rows, &inserted, &delta);
		CHECKF(r.n_nodes == ABSENT_NODES && delta.n_absent == 9 && x.n_nodes == r.n_nodes - 9,
			   "%lld nodes, %lld absent, %lld in X", (long long) r.n_nodes,
			   (long long) delta.n_absent, (long long) x.n_nodes);
		CHECKF(pr_graph_delta_check(&delta, &r, &err) == PR_OK, "check: %s", err.message);

		for (int kind = RESTART_UNIFORM; kind <= RESTART_RWR; kind++)
			for (int mixing = 0; mixing <= 5; mixing += 5)
				for (int warm = 0; warm <= (kind == RESTART_PERSONALIZED || kind == RESTART_RWR); warm++)
				{
					int			k = kind == RESTART_RWR ? 3 : 1;
					char		what[96];

					snprintf(what, sizeof(what), "weighted %d %s mixing %d warm %d", weighted,
							 kinds[kind], mixing, warm);
					absent_run(fresh, &x, NULL, (AbsentRestart) kind, mixing, warm, want, &want_stats);
					absent_run(on_r, &r, &delta, (AbsentRestart) kind, mixing, warm, got, &got_stats);
					absent_compare(&r, &x, k, got, &got_stats, want, &want_stats, what);
					/* restarts that are not uniform contract slowly enough here to mix */
					CHECK(mixing == 0 || kind == RESTART_UNIFORM || got_stats.mixed_steps > 0);
				}

		/* the same engine, the delta replaced by an empty one: R's own scores, bit for bit */
		empty.n_nodes = r.n_nodes;
		absent_run(fresh, &r, NULL, RESTART_UNIFORM, 0, false, want, &want_stats);
		absent_run(on_r, &r, &empty, RESTART_UNIFORM, 0, false, got, &got_stats);
		CHECK(memcmp(got, want, sizeof(double) * (size_t) r.n_nodes) == 0);
		CHECK(got_stats.iterations == want_stats.iterations);

		/* a delta leaving no node is refused, and so is a run told of as many absent nodes */
		{
			PrGraphDelta all;
			PrIterOptions o = test_iter_options(1e-11, 1000);
			PrRestart	uniform = {0};

			CHECK(pr_graph_delta_alloc(&all, r.n_nodes, 0, 0, r.n_nodes, &pr_malloc_allocator));
			for (int64_t v = 0; v < r.n_nodes; v++)
				all.absent[all.n_absent++] = (int32_t) v;
			CHECK(on_r->ops->apply_delta(on_r, &all, &err) != PR_OK);
			pr_graph_delta_free(&all, &pr_malloc_allocator);
			uniform.uniform = true;
			uniform.k = 1;
			o.absent_nodes = r.n_nodes;
			CHECK(pr_pagerank(on_r, &r, 0.85, &uniform, &o, got, &got_stats, &err) == PR_ERR_INVALID);
		}
		on_r->ops->release(on_r);
		fresh->ops->release(fresh);
		pr_graph_delta_free(&delta, &pr_malloc_allocator);
		pr_graph_free(&r, &pr_malloc_allocator);
		pr_graph_free(&x, &pr_malloc_allocator);
		free(rows.row);
		free(inserted.row);
		free(got);
		free(want);
	}
}
