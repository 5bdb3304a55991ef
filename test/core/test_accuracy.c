/*
 * test_accuracy.c — sums over many terms and the tolerances they allow: a star whose hub gathers
 * a hundred thousand leaves must converge at 1e-12 to its closed-form scores (the hub's row sum,
 * the dangling mass and the residual are compensated sums), the same bits on any thread count;
 * and the driver ends a run whose residual stops decreasing (an engine replaying scripted
 * residuals) instead of iterating to max_iterations.
 */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Leaves of the star tests: about the smallest count where plain sums stall above 1e-12. */
#define STAR_LEAVES 100000

/* The star leaves 1..n -> hub 0: the hub is the only dangling node. */
static void
star_to_hub(PrGraph *g, int64_t leaves)
{
	int64_t    *src = malloc(sizeof(int64_t) * (size_t) leaves);
	int64_t    *dst = malloc(sizeof(int64_t) * (size_t) leaves);
	PrError		err;

	for (int64_t i = 0; i < leaves; i++)
	{
		src[i] = i + 1;
		dst[i] = 0;
	}
	CHECK(pr_graph_build(src, dst, NULL, (size_t) leaves, NULL, &pr_malloc_allocator, g,
						 &err) == PR_OK);
	free(src);
	free(dst);
}

/* PageRank of the star at a tolerance with n_threads; returns the status. */
static PrStatus
star_pagerank(const PrGraph *g, int n_threads, const PrRestart *r, double tolerance, double *x,
			  PrRunStats *st)
{
	PrIterOptions o = test_iter_options(tolerance, 1000);
	PrError		err;
	PrEngine   *e = pr_cpu_engine_create(n_threads, &pr_malloc_allocator, &err);
	PrStatus	status;

	if (e == NULL)
		return err.status;
	status = pr_pagerank(e, g, 0.85, r, &o, x, st, &err);
	e->ops->release(e);
	return status;
}

/*
 * Leaves -> hub, M leaves, N = M + 1, d = 0.85: every leaf gets (1 - d + d h) / N and the hub
 * h = d M l + (1 - d + d h) / N, so h = (1 + M d) / (1 + M + M d).  A plain sum of the hub's
 * in-row wanders by ~3e-12 for ever (the residual never gets below 1e-12, the hub is 4e-13
 * off).  Tolerance 1e-12 and 1e-14 converge (1e-14: within its bound tol * d / (1 - d) of h);
 * 1e-15 is below the rounding floor: the run stops early as stagnant, h within 1e-15.
 */
void
test_star_tight_tolerance(void)
{
	PrGraph		g;
	PrRestart	r = {true, 1, NULL, NULL, NULL, 0, NULL, NULL};
	double	   *x = malloc(sizeof(double) * (STAR_LEAVES + 1));
	double	   *x1 = malloc(sizeof(double) * (STAR_LEAVES + 1));
	const double m = STAR_LEAVES,
				d = 0.85;
	const double hub = (1.0 + m * d) / (1.0 + m + m * d);
	PrRunStats	st;

	star_to_hub(&g, STAR_LEAVES);
	CHECK(star_pagerank(&g, 1, &r, 1e-14, x, &st) == PR_OK);
	CHECKF(st.converged && !st.stagnated && st.residual < 1e-14,
		   "converged %d after %d iterations, residual %g", st.converged, st.iterations,
		   st.residual);
	CHECKF(fabs(x[0] - hub) < 5e-14, "hub %.17g, expected %.17g", x[0], hub);
	CHECKF(fabs(x[1] - (1.0 - hub) / m) < 1e-18, "leaf %.17g, expected %.17g", x[1],
		   (1.0 - hub) / m);
	CHECK(star_pagerank(&g, 1, &r, 1e-15, x, &st) == PR_OK);
	CHECKF(!st.converged && st.stagnated && st.iterations < 400,
		   "converged %d stagnated %d after %d iterations", st.converged, st.stagnated,
		   st.iterations);
	CHECKF(fabs(x[0] - hub) < 1e-15, "hub %.17g, expected %.17g", x[0], hub);
	CHECK(star_pagerank(&g, 1, &r, 1e-12, x1, &st) == PR_OK);
	CHECKF(st.converged && !st.stagnated && st.residual < 1e-12 && st.iterations < 300,
		   "converged %d after %d iterations, residual %g", st.converged, st.iterations,
		   st.residual);
	for (int threads = 2; threads <= 3; threads++)
	{
		CHECK(star_pagerank(&g, threads, &r, 1e-12, x, &st) == PR_OK);
		CHECKF(memcmp(x, x1, sizeof(double) * (STAR_LEAVES + 1)) == 0,
			   "%d threads: other bits", threads);
	}
	free(x);
	free(x1);
	pr_graph_free(&g, &pr_malloc_allocator);
}

/*
 * The same star with two columns restarting at a leaf each (the k-column sums): both converge at
 * 1e-12, each column sums to 1, the same bits on 1 and 3 threads.
 */
void
test_star_tight_tolerance_columns(void)
{
	PrGraph		g;
	const int64_t ptr[] = {0, 1, 2};
	const int32_t node[] = {1, 2};
	const double weight[] = {1.0, 1.0};
	PrRestart	r = {false, 2, ptr, node, weight, 0, NULL, NULL};
	size_t		n = STAR_LEAVES + 1;
	double	   *x = malloc(sizeof(double) * n * 2);
	double	   *x1 = malloc(sizeof(double) * n * 2);
	PrRunStats	st;

	star_to_hub(&g, STAR_LEAVES);
	CHECK(star_pagerank(&g, 1, &r, 1e-12, x1, &st) == PR_OK);
	CHECKF(st.converged && st.residual < 1e-12, "converged %d after %d iterations, residual %g",
		   st.converged, st.iterations, st.residual);
	for (int j = 0; j < 2; j++)
	{
		long double sum = 0.0L;

		for (size_t v = 0; v < n; v++)
			sum += x1[v * 2 + (size_t) j];
		CHECKF(fabsl(sum - 1.0L) < 1e-14L, "column %d sums to %.17Lg", j, sum);
	}
	CHECK(star_pagerank(&g, 3, &r, 1e-12, x, &st) == PR_OK);
	CHECK(memcmp(x, x1, sizeof(double) * n * 2) == 0);
	free(x);
	free(x1);
	pr_graph_free(&g, &pr_malloc_allocator);
}

/* An engine that does nothing but replay a script of residuals (one per update). */
typedef struct ScriptEngine
{
	PrEngine	base;
	const double *script;
	int			length;
	int			next;
	double		last;
} ScriptEngine;

/* prepare, fill, product, update, normalize: nothing to do. */
static PrStatus
script_prepare(PrEngine *e, const PrGraph *g, int k, int n_slots, unsigned needs, PrError *err)
{
	(void) e, (void) g, (void) k, (void) n_slots, (void) needs, (void) err;
	return PR_OK;
}

static PrStatus
script_fill(PrEngine *e, int slot, double value, PrError *err)
{
	(void) e, (void) slot, (void) value, (void) err;
	return PR_OK;
}

static PrStatus
script_product(PrEngine *e, PrProduct product, int x_slot, int y_slot, PrError *err)
{
	(void) e, (void) product, (void) x_slot, (void) y_slot, (void) err;
	return PR_OK;
}

/* The next residual of the script (the last one again when it runs out). */
static void
script_step(ScriptEngine *s)
{
	s->last = s->script[s->next < s->length ? s->next : s->length - 1];
	s->next++;
}

static PrStatus
script_update(PrEngine *e, int y_slot, int x_slot, double alpha, const PrRestart *restart,
			  PrError *err)
{
	(void) y_slot, (void) x_slot, (void) alpha, (void) restart, (void) err;
	script_step((ScriptEngine *) e);
	return PR_OK;
}

static PrStatus
script_normalize(PrEngine *e, int slot, int old_slot, PrError *err)
{
	(void) slot, (void) err;
	if (old_slot >= 0)
		script_step((ScriptEngine *) e);
	return PR_OK;
}

static PrStatus
script_residual(PrEngine *e, PrResidual *out, PrError *err)
{
	(void) err;
	out->l1 = out->linf = ((ScriptEngine *) e)->last;
	return PR_OK;
}

static PrStatus
script_upload(PrEngine *e, int slot, const double *host, PrError *err)
{
	(void) e, (void) slot, (void) host, (void) err;
	return PR_OK;
}

static PrStatus
script_download(PrEngine *e, int slot, double *host, PrError *err)
{
	(void) e, (void) slot, (void) err;
	host[0] = host[1] = 0.5;
	return PR_OK;
}

static const PrEngineOps script_ops = {
	.name = "script",
	.prepare = script_prepare,
	.fill = script_fill,
	.product = script_product,
	.pagerank_update = script_update,
	.normalize = script_normalize,
	.residual = script_residual,
	.upload = script_upload,
	.download = script_download,
};

/* Runs PageRank with damping alpha (or HITS) on a 2-node graph with the script and options o;
 * returns the statistics. */
static PrRunStats
run_script_options(const double *script, int length, bool hits, double alpha,
				   const PrIterOptions *o)
{
	const int64_t s[] = {1, 2};
	const int64_t d[] = {2, 1};
	ScriptEngine engine = {{&script_ops}, script, length, 0, 0.0};
	PrRestart	r = {true, 1, NULL, NULL, NULL, 0, NULL, NULL};
	PrBuildOptions opt = {false, true, 1, NULL, NULL, NULL};
	PrGraph		g;
	PrError		err;
	PrRunStats	st;
	double		x[2],
				y[2];

	CHECK(pr_graph_build(s, d, NULL, 2, &opt, &pr_malloc_allocator, &g, &err) == PR_OK);
	if (hits)
		CHECK(pr_hits(&engine.base, &g, o, x, y, &st, &err) == PR_OK);
	else
		CHECK(pr_pagerank(&engine.base, &g, alpha, &r, o, x, &st, &err) == PR_OK);
	pr_graph_free(&g, &pr_malloc_allocator);
	return st;
}

/* run_script_options to tolerance 1e-12 (HITS: hits_tolerance), from 1/N, at most 1000 iterations. */
static PrRunStats
run_script(const double *script, int length, bool hits, double alpha, double hits_tolerance)
{
	PrIterOptions o = test_iter_options(hits ? hits_tolerance : 1e-12, 1000);

	return run_script_options(script, length, hits, alpha, &o);
}

/*
 * PageRank (damping 0.85) with the script from a start vector (not 1/N), to tolerance 1e-12 in
 * the L1 norm, at most max_iterations, the residual read every check_every iterations.
 */
static PrRunStats
run_script_from_start(const double *script, int length, int max_iterations, int check_every)
{
	const double start[2] = {0.25, 0.75};
	PrIterOptions o = test_iter_options(1e-12, max_iterations);

	o.initial = start;
	o.check_every = check_every;
	return run_script_options(script, length, false, 0.85, &o);
}

/*
 * The driver's stagnation test: a PageRank residual that repeats exactly (a 2-cycle of the
 * iterates) ends the run at the repeat; HITS (no contraction) only after 50 checks without a new
 * minimum once that minimum is near the rounding level (a HITS residual that rises for hundreds of
 * iterations far above it and then falls converges); one that keeps decreasing, however slowly,
 * runs to convergence or max_iterations; damping 1 (restart 0) is never stagnant.
 */
void
test_driver_stagnation(void)
{
	double		script[1000];
	PrRunStats	st;

	/* 1e-1, 1e-2, ... 1e-10, then 3.6e-11 for ever: stops at the first repeat (iteration 12) */
	for (int i = 0; i < 10; i++)
		script[i] = pow(10.0, -(i + 1));
	script[10] = 3.6e-11;
	st = run_script(script, 11, false, 0.85, 0.0);
	CHECKF(!st.converged && st.stagnated && st.iterations == 12 && st.residual == 3.6e-11,
		   "converged %d stagnated %d iterations %d residual %g", st.converged, st.stagnated,
		   st.iterations, st.residual);
	st = run_script(script, 11, false, 1.0, 0.0);
	CHECK(!st.converged && !st.stagnated && st.iterations == 1000);
	/* HITS at 3.6e-11 for ever: far above double's rounding, runs to max_iterations */
	st = run_script(script, 11, true, 0.0, 1e-12);
	CHECKF(!st.converged && !st.stagnated && st.iterations == 1000,
		   "converged %d stagnated %d iterations %d", st.converged, st.stagnated, st.iterations);
	/* HITS to 1e-15 down to 1e-14, then 3.6e-15 for ever: stagnant 50 checks after the minimum */
	for (int i = 0; i < 14; i++)
		script[i] = pow(10.0, -(i + 1));
	script[14] = 3.6e-15;
	st = run_script(script, 15, true, 0.0, 1e-15);
	CHECKF(!st.converged && st.stagnated && st.iterations == 15 + 50,
		   "converged %d stagnated %d iterations %d", st.converged, st.stagnated, st.iterations);
	/* HITS with two nearly equal leading eigenvalues: 2.1e-3 at iteration 4, rising to 5.4e-3
	 * by iteration 200, then falling below the tolerance 1e-12 near iteration 880: converged */
	for (int i = 0; i < 900; i++)
		script[i] = i < 4 ? pow(10.0, -(i + 1)) * 0.21e2 :
			i < 200 ? 2.1e-3 + 3.3e-3 * (i - 4) / 196.0 : 5.4e-3 * pow(1e-10, (i - 199) / 700.0);
	st = run_script(script, 900, true, 0.0, 1e-12);
	CHECKF(st.converged && !st.stagnated && st.iterations > 800 && st.iterations < 900,
		   "converged %d stagnated %d iterations %d residual %g", st.converged, st.stagnated,
		   st.iterations, st.residual);

	/* down to 1e-11, then alternating 2e-11 / 3e-11 (no exact repeat): 50 checks after the minimum */
	for (int i = 0; i < 11; i++)
		script[i] = pow(10.0, -(i + 1));
	for (int i = 11; i < 1000; i++)
		script[i] = i % 2 == 0 ? 2e-11 : 3e-11;
	st = run_script(script, 1000, false, 0.85, 0.0);
	CHECKF(!st.converged && st.stagnated && st.iterations == 11 + 50,
		   "converged %d stagnated %d iterations %d", st.converged, st.stagnated, st.iterations);

	/* slowly but steadily decreasing: never stagnant, runs to max_iterations */
	for (int i = 0; i < 1000; i++)
		script[i] = 1e-3 * pow(0.999, i);
	st = run_script(script, 1000, false, 0.85, 0.0);
	CHECK(!st.converged && !st.stagnated && st.iterations == 1000);

	/* reaching the tolerance after a plateau shorter than 50 checks: converged */
	for (int i = 0; i < 40; i++)
		script[i] = i % 2 == 0 ? 1e-6 : 2e-6;
	script[40] = 1e-13;
	st = run_script(script, 41, false, 0.85, 0.0);
	CHECK(st.converged && !st.stagnated && st.iterations == 41);
}

/*
 * The stricter stop of a run started elsewhere than 1/N (a start vector here): it needs two
 * checks and a residual below half the tolerance times the smallest ratio of consecutive residuals
 * seen, so that its answer is no less accurate than that of the run from 1/N (pr_driver.h,
 * "Stopping"); the run from 1/N keeps the plain rule.
 */
void
test_driver_warm_stop(void)
{
	double		script[200];
	double		threshold;
	PrRunStats	st;

	/* below the tolerance at once: the run from 1/N stops there, the other needs a second check */
	script[0] = 4e-13;
	script[1] = 1e-13;			/* ratio 0.25: below 0.25 * 1e-12 / 2 */
	st = run_script(script, 2, false, 0.85, 0.0);
	CHECKF(st.converged && st.iterations == 1, "from 1/N: %d iterations", st.iterations);
	st = run_script_from_start(script, 2, 1000, 1);
	CHECKF(st.converged && st.iterations == 2 && st.residual == 1e-13, "from a start: %d iterations",
		   st.iterations);

	/* 1e-9, 1e-10 (ratio 0.1), then 0.8 a check: the threshold is 0.1 * 1e-12 / 2 */
	script[0] = 1e-9;
	for (int i = 1; i < 200; i++)
		script[i] = i == 1 ? 1e-10 : script[i - 1] * 0.8;
	st = run_script(script, 200, false, 0.85, 0.0);
	CHECKF(st.converged && st.iterations == 23, "from 1/N: %d iterations", st.iterations);
	st = run_script_from_start(script, 200, 1000, 1);
	threshold = 0.1 * 1e-12 / 2;
	CHECKF(st.converged && st.residual < threshold && script[st.iterations - 2] >= threshold,
		   "from a start: %d iterations, residual %g", st.iterations, st.residual);
	CHECK(st.iterations == 37);
	/* read every 5 iterations: ratios of checks 5 iterations apart (0.8^5 at the smallest) */
	st = run_script_from_start(script, 200, 1000, 5);
	threshold = pow(0.8, 5) * 1e-12 / 2;
	CHECKF(st.converged && st.iterations % 5 == 0 && st.residual < threshold &&
		   script[st.iterations - 6] >= threshold,
		   "every 5: %d iterations, residual %g", st.iterations, st.residual);

	/* a residual of exactly 0 (the start is the fixed point): converged at the first check */
	script[0] = 0.0;
	st = run_script_from_start(script, 1, 1000, 1);
	CHECKF(st.converged && st.iterations == 1, "exact start: %d iterations", st.iterations);

	/*
	 * A rising residual never loosens the rule (ratios above 1 count as 1): 4e-13, 1.2e-12 (ratio
	 * 3: uncapped, the threshold 1.5e-12 would pass), 4e-13 (1/3: the threshold is 1.67e-13), 1e-13
	 * (1/4: below 1.25e-13)
	 */
	script[0] = 4e-13;
	script[1] = 1.2e-12;
	script[2] = 4e-13;
	script[3] = 1e-13;
	st = run_script_from_start(script, 4, 1000, 1);
	CHECKF(st.converged && st.iterations == 4, "rising: %d iterations", st.iterations);

	/*
	 * Below the tolerance but held above the stricter threshold by rounding (1e-9, then 1e-15:
	 * ratio 1e-6; then 5e-13 repeating exactly): stagnant, and the plain rule met, so converged;
	 * likewise when the iterations run out below the tolerance.  Above it: not converged.
	 */
	script[0] = 1e-9;
	script[1] = 1e-15;
	script[2] = 5e-13;
	st = run_script_from_start(script, 3, 1000, 1);
	CHECKF(st.converged && !st.stagnated && st.iterations == 4, "rounding: converged %d, %d iterations",
		   st.converged, st.iterations);
	st = run_script_from_start(script, 3, 3, 1);
	CHECKF(st.converged && st.iterations == 3, "out of iterations: converged %d", st.converged);
	script[2] = 5e-12;
	st = run_script_from_start(script, 3, 1000, 1);
	CHECKF(!st.converged && st.stagnated && st.iterations == 4, "above: converged %d, %d iterations",
		   st.converged, st.iterations);
	st = run_script_from_start(script, 3, 3, 1);
	CHECK(!st.converged && st.iterations == 3);
}
