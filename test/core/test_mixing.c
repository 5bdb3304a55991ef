/*
 * test_mixing.c — the driver's Anderson mixing (pr_mixing.c) and its certified top-k: mixed runs
 * against the dense solve within the bound they report, in fewer iterations than plain ones and
 * with the same bits run to run; the safeguard that sends a column whose residual rose back to a
 * plain step; a top-k whose gap is tiny (certified after the tolerance), an exact tie (reported,
 * not iterated on) and the early stop once certified.
 */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph_gen.h"
#include "pr_mixing.h"

/* A graph of an edge list (weighted when the list is), in-edges and out-edges. */
static void
build_graph(const EdgeList *e, PrGraph *g)
{
	PrBuildOptions opt = {false, true, 1, NULL, NULL, NULL};
	PrError		err;

	CHECK(pr_graph_build(e->src, e->dst, e->weight, e->m, &opt, &pr_malloc_allocator, g, &err) ==
		  PR_OK);
}

/*
 * PageRank of g from a fresh CPU engine with the given mixing depth, the engine stating
 * mixed_step_cost (< 0: the CPU engine's own figure); scores into x.
 */
static PrRunStats
pagerank_costing(const PrGraph *g, double alpha, const PrRestart *r, double tol, int depth,
				 double mixed_step_cost, double *x)
{
	PrIterOptions o = test_iter_options(tol, 100000);
	PrRunStats	st;
	PrError		err;
	PrEngine   *e = pr_cpu_engine_create(2, NULL, &err);
	const PrEngineOps *own;
	PrEngineOps costing;

	o.mixing_depth = depth;
	CHECK(e != NULL);
	own = e->ops;
	costing = *own;
	if (mixed_step_cost >= 0.0)
	{
		costing.mixed_step_cost = mixed_step_cost;
		e->ops = &costing;
	}
	CHECKF(pr_pagerank(e, g, alpha, r, &o, x, &st, &err) == PR_OK, "%s", err.message);
	e->ops = own;
	e->ops->release(e);
	return st;
}

/* PageRank of g from a fresh CPU engine with the given mixing depth; scores into x. */
static PrRunStats
pagerank_with(const PrGraph *g, double alpha, const PrRestart *r, double tol, int depth,
			  double *x)
{
	return pagerank_costing(g, alpha, r, tol, depth, -1.0, x);
}

/*
 * A graph on which plain steps contract slowly at damping 0.95: the generator's power-law graph
 * whose edges keep locality (test/common/graph_gen.h), 1024 ids, weighted or not.
 */
static void
slow_graph(EdgeList *e, bool weighted, uint64_t seed)
{
	GenSpec		spec;
	uint64_t	state = seed;

	CHECK(gen_parse("local:10:6:0.9:16", seed, &spec));
	e->m = gen_unique_edges(&spec, 1, &e->src, &e->dst);
	e->weight = weighted ? malloc(sizeof(double) * e->m) : NULL;
	for (size_t i = 0; weighted && i < e->m; i++)
		e->weight[i] = 0.5 + (double) (test_rand(&state) % 100) / 100.0;
}

/*
 * Mixed PageRank (uniform and three personalized columns, unweighted and weighted, damping 0.95
 * on a graph where plain steps contract slowly) lies within its reported bound of the dense
 * solve, takes a third fewer iterations than plain, mixes, and gives the same bits twice; HITS
 * mixed matches the dense power iteration on a random graph.
 */
void
test_mixing_vs_dense(void)
{
	for (int weighted = 0; weighted <= 1; weighted++)
	{
		EdgeList	edges;
		PrGraph		g;
		int64_t    *ids;
		int64_t		n;
		double	   *W,
				   *dense,
				   *x,
				   *again,
				   *r;
		PrRestart	uniform = {true, 1, NULL, NULL, NULL, 0, NULL, NULL};
		PrRunStats	plain,
					mixed,
					mixed_again;

		slow_graph(&edges, weighted != 0, 7 + (uint64_t) weighted);
		build_graph(&edges, &g);
		n = reference_node_ids(&edges, &ids);
		CHECK(n == g.n_nodes);
		W = reference_dense_adjacency(&edges, false, ids, n);
		dense = malloc(sizeof(double) * (size_t) n * 3);
		x = malloc(sizeof(double) * (size_t) n * 3);
		again = malloc(sizeof(double) * (size_t) n * 3);
		r = calloc((size_t) n, sizeof(double));

		reference_pagerank(W, n, 0.95, NULL, dense);
		plain = pagerank_with(&g, 0.95, &uniform, 1e-10, 0, x);
		mixed = pagerank_with(&g, 0.95, &uniform, 1e-10, 5, x);
		mixed_again = pagerank_with(&g, 0.95, &uniform, 1e-10, 5, again);
		CHECKF(mixed.converged && mixed.mixed_steps > 0, "converged %d, %d mixed steps",
			   mixed.converged, mixed.mixed_steps);
		CHECKF(mixed.iterations * 3 < plain.iterations * 2,
			   "mixed %d iterations (%d mixed, %d fallbacks), plain %d", mixed.iterations,
			   mixed.mixed_steps, mixed.mixing_fallbacks, plain.iterations);
		CHECKF(l1_distance(x, dense, (size_t) n) <= mixed.error_bound,
			   "L1 error %.3g above the bound %.3g", l1_distance(x, dense, (size_t) n),
			   mixed.error_bound);
		CHECKF(mixed.error_bound < 20.0 * 1e-10 && mixed.error_bound > 0.0, "bound %.3g",
			   mixed.error_bound);
		CHECK(memcmp(x, again, sizeof(double) * (size_t) n) == 0);
		CHECK(mixed_again.iterations == mixed.iterations);

		/* three personalized columns, each against its dense solve */
		{
			int64_t		ptr[4] = {0, 1, 3, 4};
			int32_t		node[4] = {0, 5, 17, (int32_t) (n - 1)};
			double		weight[4] = {1.0, 0.25, 0.75, 1.0};
			PrRestart	cols = pr_restart_columns(3, ptr, node, weight);

			mixed = pagerank_with(&g, 0.95, &cols, 1e-10, 3, x);
			CHECK(mixed.converged && mixed.mixed_steps > 0);
			for (int j = 0; j < 3; j++)
			{
				double		err = 0.0;

				memset(r, 0, sizeof(double) * (size_t) n);
				for (int64_t p = ptr[j]; p < ptr[j + 1]; p++)
					r[node[p]] += weight[p];
				reference_pagerank(W, n, 0.95, r, dense);
				for (int64_t v = 0; v < n; v++)
					err += fabs(x[v * 3 + j] - dense[v]);
				CHECKF(err <= mixed.error_bound, "column %d: L1 error %.3g above the bound %.3g",
					   j, err, mixed.error_bound);
			}
		}

		/* HITS, mixed, against the dense power iteration (on a random graph: one leading pair) */
		edges_free(&edges);
		pr_graph_free(&g, &pr_malloc_allocator);
		free(W);
		free(ids);
		edges_random(&edges, 2400, 400, 1, 1, weighted, 7 + (uint64_t) weighted);
		build_graph(&edges, &g);
		n = reference_node_ids(&edges, &ids);
		W = reference_dense_adjacency(&edges, false, ids, n);
		{
			PrIterOptions o = test_iter_options(1e-12, 100000);
			PrError		err;
			PrEngine   *e = pr_cpu_engine_create(2, NULL, &err);
			double	   *hubs = malloc(sizeof(double) * (size_t) n),
					   *auth = malloc(sizeof(double) * (size_t) n),
					   *rh = malloc(sizeof(double) * (size_t) n),
					   *ra = malloc(sizeof(double) * (size_t) n);
			PrRunStats	st;

			o.mixing_depth = 5;
			CHECK(pr_hits(e, &g, &o, hubs, auth, &st, &err) == PR_OK);
			reference_hits(W, n, 3000, rh, ra);
			CHECKF(st.converged, "HITS mixed did not converge (%d iterations)", st.iterations);
			CHECKF(l1_distance(hubs, rh, (size_t) n) < 1e-8 && l1_distance(auth, ra, (size_t) n) < 1e-8,
				   "HITS mixed: hubs %.3g, authorities %.3g from the dense iteration",
				   l1_distance(hubs, rh, (size_t) n), l1_distance(auth, ra, (size_t) n));
			CHECK(isnan(st.error_bound));
			e->ops->release(e);
			free(hubs);
			free(auth);
			free(rh);
			free(ra);
		}
		free(W);
		free(dense);
		free(x);
		free(again);
		free(r);
		free(ids);
		edges_free(&edges);
		pr_graph_free(&g, &pr_malloc_allocator);
	}
}

/* Fills a slot of the engine with pseudo-random values of about scale. */
static void
upload_random(PrEngine *e, int slot, int64_t n, double scale, uint64_t *state)
{
	double	   *v = malloc(sizeof(double) * (size_t) n);
	PrError		err;

	for (int64_t i = 0; i < n; i++)
		v[i] = scale * (double) (test_rand(state) % 1000 + 1) / 1000.0;
	CHECK(e->ops->upload(e, slot, v, &err) == PR_OK);
	free(v);
}

/*
 * The step-by-step tests' engine: a CPU engine prepared for PageRank on a random graph of 300
 * nodes, its mixing of depth 3 begun with the bound on the plain rate (PageRank's damping; 0: none,
 * as for HITS), a random x in PR_SLOT_X.
 */
static PrEngine *
begin_steps_bounded(EdgeList *edges, PrGraph *g, PrMixing *mix, uint64_t *state, double plain_rate_bound)
{
	PrError		err;
	PrEngine   *e = pr_cpu_engine_create(1, NULL, &err);

	CHECK(e != NULL);
	edges_random(edges, 300, 60, 1, 1, false, 5);
	build_graph(edges, g);
	CHECK(e->ops->prepare(e, g, 1, PR_N_SLOTS_PAGERANK, PR_NEED_PULL_NORMALIZED, &err) == PR_OK);
	CHECK(pr_mixing_begin(mix, e, g, 1, 3, PR_SLOT_X, PR_SLOT_Y, PR_N_SLOTS_PAGERANK,
						  PR_NEED_PULL_NORMALIZED, plain_rate_bound, &err) == PR_OK);
	upload_random(e, PR_SLOT_X, g->n_nodes, 1.0, state);
	return e;
}

/* begin_steps_bounded with PageRank's damping 0.85. */
static PrEngine *
begin_steps(EdgeList *edges, PrGraph *g, PrMixing *mix, uint64_t *state)
{
	return begin_steps_bounded(edges, g, mix, state, 0.85);
}

/* Frees what begin_steps made. */
static void
end_steps(PrEngine *e, EdgeList *edges, PrGraph *g, PrMixing *mix)
{
	pr_mixing_end(mix);
	e->ops->release(e);
	edges_free(edges);
	pr_graph_free(g, &pr_malloc_allocator);
}

/*
 * The safeguard, step by step over the CPU engine: no mixing while steps contract fast, mixing
 * once a residual ratio exceeds one half (the engine's slots grown, keeping the iterates; first a
 * plain step: one entry), a mixed iterate in the x slot on the next step, and a plain step again
 * (counted as a fallback) after a residual rose.
 */
void
test_mixing_safeguard(void)
{
	EdgeList	edges;
	PrGraph		g;
	PrError		err;
	PrMixing	mix;
	uint64_t	state = 3;
	PrEngine   *e = begin_steps(&edges, &g, &mix, &state);
	int			x = PR_SLOT_X,
				next;
	const double residuals[] = {1.0, 0.1, 0.09, 0.08, 0.5, 0.4};
	const int	plain_step[] = {1, 1, 1, 0, 1, 0};

	for (int step = 0; step < 6; step++)
	{
		int			y = pr_mixing_output_slot(&mix, x);
		PrResidual	res = {residuals[step], residuals[step]};

		CHECK(y != x);
		upload_random(e, y, g.n_nodes, 1.0, &state);
		CHECK(pr_mixing_after_step(&mix, x, y, &res, &next, &err) == PR_OK);
		CHECKF((next == y) == (plain_step[step] != 0), "step %d: next slot %d, output %d", step,
			   next, y);
		if (!plain_step[step])
			CHECK(next == PR_SLOT_X);
		x = next;
	}
	/* 0.1 / 1.0: fast, not mixing; 0.09 / 0.1: engaged, one entry; 0.08: mixed; 0.5: rose */
	CHECKF(mix.engaged && mix.mixed_steps == 2 && mix.fallbacks == 1,
		   "engaged %d, %d mixed steps, %d fallbacks", mix.engaged, mix.mixed_steps, mix.fallbacks);
	end_steps(e, &edges, &g, &mix);
}

/*
 * Two hubs (ids 1 and 2), each linked both ways with 100 leaves of its own (so the iterates
 * approach the answer gradually); with extra_weight > 0 node 300 sends that
 * weight to hub 2 and weight 1 to node 301, so hub 2 leads hub 1 by a tiny margin; with 0, the
 * hubs tie exactly.
 */
static void
two_hubs(double extra_weight, PrGraph *g)
{
	EdgeList	e = {0, NULL, NULL, NULL};
	size_t		cap = 404;

	e.src = malloc(sizeof(int64_t) * cap);
	e.dst = malloc(sizeof(int64_t) * cap);
	e.weight = malloc(sizeof(double) * cap);
	for (int i = 0; i < 100; i++)
	{
		e.src[e.m] = 10 + i, e.dst[e.m] = 1, e.weight[e.m++] = 1.0;
		e.src[e.m] = 200 + i, e.dst[e.m] = 2, e.weight[e.m++] = 1.0;
		e.src[e.m] = 1, e.dst[e.m] = 10 + i, e.weight[e.m++] = 1.0;
		e.src[e.m] = 2, e.dst[e.m] = 200 + i, e.weight[e.m++] = 1.0;
	}
	e.src[e.m] = 300, e.dst[e.m] = 301, e.weight[e.m++] = 1.0;
	if (extra_weight > 0.0)
		e.src[e.m] = 300, e.dst[e.m] = 2, e.weight[e.m++] = extra_weight;
	build_graph(&e, g);
	edges_free(&e);
}

/* pr_pagerank_top (uniform restart, damping 0.85) with the given options on a fresh engine. */
static PrRunStats
top_with(const PrGraph *g, PrIterOptions o, int64_t top, int32_t *index, double *value)
{
	PrRestart	uniform = {true, 1, NULL, NULL, NULL, 0, NULL, NULL};
	PrRunStats	st;
	PrError		err;
	PrEngine   *e = pr_cpu_engine_create(1, NULL, &err);

	CHECKF(pr_pagerank_top(e, g, 0.85, &uniform, &o, top, index, value, &st, &err) == PR_OK, "%s",
		   err.message);
	e->ops->release(e);
	return st;
}

/*
 * A top-2 whose gap (~2e-8) is far below the bound at the tolerance: a run stopped by the tolerance
 * reports the pair uncertified; with stop_when_certified it goes on past the tolerance until the
 * bound is below the gap and certifies hub 2 before hub 1 (mixed and plain).  The exact tie:
 * reported uncertified with one tied pair, ending where the tolerance ends it.
 */
void
test_certified_top_k_tiny_gap(void)
{
	PrGraph		g;
	int32_t		index[2];
	double		value[2];
	PrIterOptions o = test_iter_options(1e-6, 10000);

	two_hubs(1e-5, &g);
	for (int depth = 0; depth <= 5; depth += 5)
	{
		PrRunStats	plain,
					st;
		double	   *x = malloc(sizeof(double) * (size_t) g.n_nodes);
		PrRestart	uniform = {true, 1, NULL, NULL, NULL, 0, NULL, NULL};

		o.mixing_depth = depth;
		o.stop_when_certified = false;
		plain = pagerank_with(&g, 0.85, &uniform, 1e-6, depth, x);
		/* stopped by the tolerance: the pair is reported, not certified */
		st = top_with(&g, o, 2, index, value);
		CHECKF(st.top_k_certified == PR_CERTIFIED_NO && st.top_k_ties == 1 &&
			   st.iterations == plain.iterations,
			   "depth %d, at the tolerance: certified %d, %lld ties, %d iterations (plain %d)", depth,
			   (int) st.top_k_certified, (long long) st.top_k_ties, st.iterations, plain.iterations);
		/* stop_when_certified: on past the tolerance until certified */
		o.stop_when_certified = true;
		st = top_with(&g, o, 2, index, value);
		CHECKF(st.top_k_certified == PR_CERTIFIED_YES, "depth %d: not certified (%lld ties)", depth,
			   (long long) st.top_k_ties);
		CHECKF(st.iterations > plain.iterations, "depth %d: %d iterations, the tolerance alone %d",
			   depth, st.iterations, plain.iterations);
		CHECK(g.node_ids[index[0]] == 2 && g.node_ids[index[1]] == 1);
		CHECKF(value[0] - value[1] > st.error_bound && value[0] - value[1] < 1e-7,
			   "gap %.3g, bound %.3g", value[0] - value[1], st.error_bound);
		CHECK(st.converged && st.top_k_ties == 0);
		free(x);
	}
	pr_graph_free(&g, &pr_malloc_allocator);

	two_hubs(0.0, &g);
	{
		PrRestart	uniform = {true, 1, NULL, NULL, NULL, 0, NULL, NULL};
		double	   *x = malloc(sizeof(double) * (size_t) g.n_nodes);
		PrRunStats	plain = pagerank_with(&g, 0.85, &uniform, 1e-6, 0, x);
		PrRunStats	st;

		o.mixing_depth = 0;
		o.stop_when_certified = true;
		st = top_with(&g, o, 2, index, value);
		CHECK(value[0] == value[1]);
		CHECKF(st.top_k_certified == PR_CERTIFIED_NO && st.top_k_ties == 1,
			   "tie: certified %d, %lld ties", (int) st.top_k_certified, (long long) st.top_k_ties);
		CHECKF(st.iterations == plain.iterations && st.converged,
			   "tie: %d iterations, the tolerance alone %d", st.iterations, plain.iterations);
		free(x);
	}
	pr_graph_free(&g, &pr_malloc_allocator);
}

/*
 * stop_when_certified on RWR from a hub of a random graph at a tight tolerance: the run ends
 * certified before the tolerance, in fewer iterations than the tolerance needs, with the exact
 * top-5 (from a run to 1e-14); without the option the same top-5, certified, converged.
 */
void
test_certified_early_stop(void)
{
	EdgeList	edges;
	PrGraph		g;
	int64_t		ptr[2] = {0, 1};
	int32_t		source = 0;
	double		one = 1.0;
	PrRestart	r;
	int32_t		exact_index[5],
				index[5];
	double		exact_value[5],
				value[5];
	PrIterOptions o = test_iter_options(1e-14, 10000);
	PrRunStats	exact,
				early,
				full;
	PrError		err;
	PrEngine   *e;

	edges_random(&edges, 3000, 500, 1, 1, false, 11);
	build_graph(&edges, &g);
	r = pr_restart_columns(1, ptr, &source, &one);
	e = pr_cpu_engine_create(1, NULL, &err);
	CHECK(pr_pagerank_top(e, &g, 0.85, &r, &o, 5, exact_index, exact_value, &exact, &err) == PR_OK);
	o.tolerance = 1e-12;
	CHECK(pr_pagerank_top(e, &g, 0.85, &r, &o, 5, index, value, &full, &err) == PR_OK);
	CHECK(full.converged && full.top_k_certified == PR_CERTIFIED_YES);
	CHECK(memcmp(index, exact_index, sizeof(index)) == 0);
	o.stop_when_certified = true;
	CHECK(pr_pagerank_top(e, &g, 0.85, &r, &o, 5, index, value, &early, &err) == PR_OK);
	CHECKF(early.top_k_certified == PR_CERTIFIED_YES && early.stopped_certified && !early.converged,
		   "early: certified %d, stopped certified %d, converged %d",
		   (int) early.top_k_certified, early.stopped_certified, early.converged);
	CHECKF(early.iterations < full.iterations, "early %d iterations, to the tolerance %d",
		   early.iterations, full.iterations);
	CHECK(memcmp(index, exact_index, sizeof(index)) == 0);
	e->ops->release(e);
	edges_free(&edges);
	pr_graph_free(&g, &pr_malloc_allocator);
}

/*
 * A long directed cycle with one chord at damping 0.999999: a limited history cannot follow its slow modes, so
 * mixing stalls; the run gives mixing up and goes on plain (its residual keeps shrinking), instead
 * of stopping as stagnant with a residual far above what rounding explains.
 */
void
test_mixing_gives_up(void)
{
	EdgeList	e = {2001, malloc(sizeof(int64_t) * 2001), malloc(sizeof(int64_t) * 2001), NULL};
	PrGraph		g;
	PrRestart	uniform = {true, 1, NULL, NULL, NULL, 0, NULL, NULL};
	PrIterOptions o = test_iter_options(1e-300, 3000);
	PrRunStats	st;
	PrError		err;
	PrEngine   *engine = pr_cpu_engine_create(1, NULL, &err);
	double	   *x = malloc(sizeof(double) * 2000);

	for (int64_t i = 0; i < 2000; i++)
	{
		e.src[i] = i;
		e.dst[i] = (i + 1) % 2000;
	}
	e.src[2000] = 0;			/* one chord: the start 1/N is not the answer */
	e.dst[2000] = 1000;
	build_graph(&e, &g);
	o.mixing_depth = 5;
	CHECK(pr_pagerank(engine, &g, 0.999999, &uniform, &o, x, &st, &err) == PR_OK);
	CHECKF(!st.stagnated && st.iterations == 3000 && !st.converged,
		   "stagnated %d after %d iterations (%d mixed), residual %.3g", st.stagnated,
		   st.iterations, st.mixed_steps, st.residual);
	engine->ops->release(engine);
	free(x);
	edges_free(&e);
	pr_graph_free(&g, &pr_malloc_allocator);
}

/*
 * Mixing judged against what it costs, step by step over the CPU engine (which states a mixed step
 * at 0.4 plain steps): plain steps contracting by 0.9 engage it; mixed steps shrinking the residual
 * by 0.8 each (more than 1.4 plain steps' 0.9^1.4 = 0.863) keep it; by 0.88 each (less) the run
 * gives it up at its first judgement, PR_MIX_TRIAL steps after the history of depth 3 filled (a
 * plain step: the output is the next iterate) — unless the algorithm bounds no plain rate (HITS),
 * which the rule does not judge: then mixing goes on.
 */
void
test_mixing_cost_trial(void)
{
	for (int mode = 0; mode < 3; mode++)
	{
		bool		paying = mode == 1 || mode == 2;	/* mode 2: not paying, not judged */
		double		mixed_ratio = mode == 1 ? 0.8 : 0.88;
		double		residual = 1.0;
		uint64_t	state = 5;
		EdgeList	edges;
		PrGraph		g;
		PrMixing	mix;
		PrEngine   *e = begin_steps_bounded(&edges, &g, &mix, &state, mode == 2 ? 0.0 : 0.85);
		PrError		err;
		int			x = PR_SLOT_X;
		int			next;

		CHECK(fabs(e->ops->mixed_step_cost - 0.4) < 1e-12);
		for (int step = 0; step < 2 + 3 + 2 * PR_MIX_TRIAL; step++)
		{
			int			y = pr_mixing_output_slot(&mix, x);
			PrResidual	res;

			/* two plain steps (the second engages), then the mixed ones */
			residual *= step == 0 ? 1.0 : step == 1 ? 0.9 : mixed_ratio;
			res.l1 = res.linf = residual;
			upload_random(e, y, g.n_nodes, 1.0, &state);
			CHECK(pr_mixing_after_step(&mix, x, y, &res, &next, &err) == PR_OK);
			if (!paying && step == 1 + 3 + PR_MIX_TRIAL)
				CHECKF(mix.gave_up && mix.depth == 0 && next == y,
					   "step %d: gave up %d, depth %d", step, mix.gave_up, mix.depth);
			else if (step >= 1 && (paying || step < 1 + 3 + PR_MIX_TRIAL))
				CHECKF(!mix.gave_up && mix.engaged, "step %d: gave up %d, engaged %d", step,
					   mix.gave_up, mix.engaged);
			mix.gave_up = false;
			x = next;
		}
		CHECKF(fabs(mix.plain_rate - 0.9) < 1e-12, "plain rate %.3g", mix.plain_rate);
		CHECKF(paying ? mix.engaged && mix.depth == 3 : !mix.engaged && mix.depth == 0,
			   "paying %d: engaged %d, depth %d", paying, mix.engaged, mix.depth);
		end_steps(e, &edges, &g, &mix);
	}
}

/*
 * Whole runs on the graph where plain steps contract slowly (damping 0.95): an engine that states a
 * mixed step at 50 plain steps gives mixing up at its first judgement (depth 5 + PR_MIX_TRIAL
 * steps after it began) and ends plain, within its bound of the dense solve in no more iterations
 * than plain, the same bits twice; the CPU engine's own figure and the default of an engine that
 * states none (a whole plain step) keep mixing to the end, in a third fewer iterations than plain.
 */
void
test_mixing_cost_runs(void)
{
	PrRunStats	plain;
	PrRunStats	costly[2];
	PrRestart	uniform = {true, 1, NULL, NULL, NULL, 0, NULL, NULL};
	EdgeList	edges;
	PrGraph		g;
	int64_t		n;
	int64_t    *ids;
	double	   *W;
	double	   *dense;
	double	   *scores[2];

	slow_graph(&edges, false, 7);
	build_graph(&edges, &g);
	n = reference_node_ids(&edges, &ids);
	W = reference_dense_adjacency(&edges, false, ids, n);
	dense = malloc(sizeof(double) * (size_t) n);
	reference_pagerank(W, n, 0.95, NULL, dense);
	for (int i = 0; i < 2; i++)
		scores[i] = malloc(sizeof(double) * (size_t) n);

	plain = pagerank_with(&g, 0.95, &uniform, 1e-10, 0, scores[0]);
	for (int i = 0; i < 2; i++)
		costly[i] = pagerank_costing(&g, 0.95, &uniform, 1e-10, 5, 50.0, scores[i]);
	CHECKF(costly[0].converged && costly[0].mixed_steps > 0 &&
		   costly[0].mixed_steps < 5 + PR_MIX_TRIAL, "converged %d, %d mixed steps",
		   costly[0].converged, costly[0].mixed_steps);
	CHECKF(costly[0].iterations <= plain.iterations, "given up: %d iterations, plain %d",
		   costly[0].iterations, plain.iterations);
	CHECKF(l1_distance(scores[0], dense, (size_t) n) <= costly[0].error_bound,
		   "L1 error %.3g above the bound %.3g", l1_distance(scores[0], dense, (size_t) n),
		   costly[0].error_bound);
	CHECK(memcmp(scores[0], scores[1], sizeof(double) * (size_t) n) == 0);
	CHECK(costly[1].iterations == costly[0].iterations);

	for (int stated = 0; stated <= 1; stated++)
	{
		PrRunStats	mixed = pagerank_costing(&g, 0.95, &uniform, 1e-10, 5, stated ? -1.0 : 0.0,
											 scores[0]);

		CHECKF(mixed.converged && mixed.mixed_steps > 2 * PR_MIX_TRIAL &&
			   mixed.iterations * 3 < plain.iterations * 2,
			   "cost %s: %d iterations (%d mixed), plain %d", stated ? "the CPU's" : "default",
			   mixed.iterations, mixed.mixed_steps, plain.iterations);
		CHECKF(l1_distance(scores[0], dense, (size_t) n) <= mixed.error_bound,
			   "L1 error %.3g above the bound %.3g", l1_distance(scores[0], dense, (size_t) n),
			   mixed.error_bound);
	}
	for (int i = 0; i < 2; i++)
		free(scores[i]);
	free(W);
	free(dense);
	free(ids);
	edges_free(&edges);
	pr_graph_free(&g, &pr_malloc_allocator);
}
