/*
 * rwr_convergence.c — how many iterations an RWR batch needs before its top-k is right, against
 * the iterations the stopping rules take (the interactive RWR question, doc/RESULTS.md).
 *
 *   rwr_convergence --rmat SCALE [--batches B] [--top K] [--max-iterations J] [--threads T]
 *
 * Builds the R-MAT graph of cpu_bench (seed 1), picks 8 * B source nodes spread over the ids (as
 * pgbench's random existing sources: dangling ones included) and ranks them 8 at a time, as the
 * GPU service batches them, with the CPU engine in double:
 *   - the exact answer: from 1/N to an L1 change below 1e-13;
 *   - from the warm start (pr_driver.c), stopped after j = 0 .. J iterations: for every j, how
 *     many sources have the exact top-k set, the exact top-k order, their top-k scores within
 *     1e-3 and 1e-5 (relative) of the exact, and the batch's largest L1 change at iteration j;
 *   - the default rule (L1 change < 1e-6) and norm => 'linf' (max change < 1e-6) from the warm
 *     start: iterations per batch and the worst relative score error of the top-k;
 *   - how many out-edges a push (out-edge lists) would read for the warm start's r + M r + M^2 r.
 * One engine serves every run, so the far-field vector is computed once, as in the service.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench_util.h"
#include "pr_driver.h"
#include "pr_engine.h"
#include "graph_gen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BATCH 8					/* sources per batch, as powerrank.service_batch_size */
#define MAX_STEPS 64
#define FLOOR 1e-12			/* exact scores below this count as 0 */

/* Per-iteration tallies over all sources. */
typedef struct StepTally
{
	int			same_set;
	int			same_order;
	int			within_1e3;
	int			within_1e5;
	double		max_change;		/* largest L1 change of a batch at this iteration */
} StepTally;

/* The L1 change the driver reports after each iteration, kept by iteration number. */
typedef struct ChangeLog
{
	double		change[MAX_STEPS + 1];
} ChangeLog;

/* Progress callback: records the residual of each iteration. */
static void
record_change(void *arg, int iteration, double residual)
{
	ChangeLog  *log = arg;

	if (iteration >= 0 && iteration <= MAX_STEPS)
		log->change[iteration] = residual;
}

/* Iteration options: a tolerance in a norm, an iteration cap, warm start on or off. */
static PrIterOptions
iteration_options(double tolerance, PrNorm norm, int max_iterations, bool warm)
{
	PrIterOptions o = bench_iter_options(tolerance, norm, max_iterations, 1);

	o.warm_start = warm;
	return o;
}

/*
 * Compares column j's top k of x with the exact top k.  Exact ties make several orders right, so a
 * position counts as right when its node's exact score equals the exact k-list's score there
 * (relative 1e-12); the set is right when every position is, up to order, in the same sense.
 * Exact scores below FLOOR count as 0: the 1e-13 reference is not more accurate than that (a
 * dangling source's answer is e_s; the run from 1/N leaves ~1e-16 elsewhere).  Returns the worst
 * relative error of x's scores over the exact top k's scores above FLOOR.
 */
static double
compare_top(const double *x, const double *exact, int64_t n, int j, int k, const int32_t *exact_top,
			bool *same_set, bool *same_order)
{
	int32_t    *top = malloc(sizeof(int32_t) * (size_t) k);
	double		worst = 0.0;
	double		kth = fmax(exact[(size_t) exact_top[k - 1] * BATCH + j], FLOOR);

	pr_top_k(x, n, BATCH, j, k, top, &pr_malloc_allocator);
	*same_set = true;
	*same_order = true;
	for (int a = 0; a < k; a++)
	{
		double		want = fmax(exact[(size_t) exact_top[a] * BATCH + j], FLOOR);
		double		got = fmax(exact[(size_t) top[a] * BATCH + j], FLOOR);

		if (fabs(got - want) > 1e-12 * want)
			*same_order = false;
		if (got < kth * (1.0 - 1e-12))
			*same_set = false;
		if (want > FLOOR)
			worst = fmax(worst, fabs(x[(size_t) exact_top[a] * BATCH + j] - want) / want);
	}
	free(top);
	return worst;
}

/*
 * Out-edges a push from the batch's sources would read for r -> M r, M r -> M^2 r and M^2 r -> M^3 r,
 * counted per source (each column pushes its own frontier), as the GPU engine's columns would.
 */
static void
print_push_entries(const PrGraph *g, const int32_t *sources)
{
	char	   *seen = calloc((size_t) g->n_nodes, 1);
	int32_t    *frontier = malloc(sizeof(int32_t) * (size_t) g->n_nodes);
	int64_t		entries[3] = {0, 0, 0};

	for (int j = 0; j < BATCH; j++)
	{
		int64_t		begin = 0,
					end = 1;

		frontier[0] = sources[j];
		seen[sources[j]] = 1;
		for (int hop = 0; hop < 3; hop++)
		{
			int64_t		next_end = end;

			for (int64_t i = begin; i < end; i++)
				for (int64_t p = g->out_ptr[frontier[i]]; p < g->out_ptr[frontier[i] + 1]; p++)
				{
					entries[hop]++;
					if (!seen[g->out_dst[p]])
					{
						seen[g->out_dst[p]] = 1;
						frontier[next_end++] = g->out_dst[p];
					}
				}
			begin = end;
			end = next_end;
		}
		for (int64_t i = 0; i < end; i++)
			seen[frontier[i]] = 0;
	}
	printf("  push reads %lld + %lld out-edges for r + M r + M^2 r (%.2f%% of the entries); a third hop %lld (%.0f%%)\n",
		   (long long) entries[0], (long long) entries[1],
		   100.0 * (double) (entries[0] + entries[1]) / (double) g->n_edges, (long long) entries[2],
		   100.0 * (double) entries[2] / (double) g->n_edges);
	free(seen);
	free(frontier);
}

/* Runs one batch of sources; adds to the tallies; prints the batch's line. */
static void
run_batch(PrEngine *engine, const PrGraph *g, const int32_t *sources, int k, int max_steps,
		  StepTally *tally, double *x, double *exact, int32_t *exact_top)
{
	const double ones[BATCH] = {1, 1, 1, 1, 1, 1, 1, 1};
	const int64_t ptr[BATCH + 1] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
	PrRestart	restart = {false, BATCH, ptr, sources, ones, 0, NULL, NULL};
	PrIterOptions exact_options = iteration_options(1e-13, PR_NORM_L1, 5000, false);
	PrRunStats	st;
	PrError		err;
	ChangeLog	log;
	const PrNorm rule_norm[2] = {PR_NORM_L1, PR_NORM_LINF};
	const char *rule_name[2] = {"l1 1e-6", "linf 1e-6"};

	if (pr_pagerank(engine, g, 0.85, &restart, &exact_options, exact, &st, &err) != PR_OK)
	{
		fprintf(stderr, "exact run: %s\n", err.message);
		exit(1);
	}
	for (int j = 0; j < BATCH; j++)
		pr_top_k(exact, g->n_nodes, BATCH, j, k, exact_top + (size_t) j * k, &pr_malloc_allocator);

	for (int step = 1; step <= max_steps; step++)
	{
		PrIterOptions o = iteration_options(1e-300, PR_NORM_L1, step, true);

		memset(&log, 0, sizeof(log));
		o.progress = record_change;
		o.progress_arg = &log;
		if (pr_pagerank(engine, g, 0.85, &restart, &o, x, &st, &err) != PR_OK || !st.warm_started)
		{
			fprintf(stderr, "warm run: %s\n", st.warm_started ? err.message : "did not start warm");
			exit(1);
		}
		tally[step].max_change = fmax(tally[step].max_change, log.change[step]);
		for (int j = 0; j < BATCH; j++)
		{
			bool		same_set,
						same_order;
			double		rel = compare_top(x, exact, g->n_nodes, j, k, exact_top + (size_t) j * k,
										  &same_set, &same_order);

			tally[step].same_set += same_set;
			tally[step].same_order += same_order;
			tally[step].within_1e3 += rel < 1e-3;
			tally[step].within_1e5 += rel < 1e-5;
		}
	}

	printf("batch sources");
	for (int j = 0; j < BATCH; j++)
		printf(" %d", sources[j]);
	printf(":");
	for (int r = 0; r < 2; r++)
	{
		PrIterOptions o = iteration_options(1e-6, rule_norm[r], 1000, true);
		double		worst = 0.0;
		int			wrong_order = 0;

		if (pr_pagerank(engine, g, 0.85, &restart, &o, x, &st, &err) != PR_OK || !st.converged)
		{
			fprintf(stderr, "rule run: %s\n", err.message);
			exit(1);
		}
		for (int j = 0; j < BATCH; j++)
		{
			bool		same_set,
						same_order;

			worst = fmax(worst, compare_top(x, exact, g->n_nodes, j, k, exact_top + (size_t) j * k,
											&same_set, &same_order));
			wrong_order += !same_order;
		}
		printf("  %s: %d iterations, top-%d order wrong for %d, worst rel error %.1e;",
			   rule_name[r], st.iterations, k, wrong_order, worst);
	}
	printf("\n");
	print_push_entries(g, sources);
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	int			scale = 20,
				batches = 2,
				k = 10,
				max_steps = 10,
				threads = (int) sysconf(_SC_NPROCESSORS_ONLN);
	int64_t    *src,
			   *dst;
	size_t		m;
	GenSpec		spec;
	PrGraph		g;
	PrError		err;
	PrBuildOptions bopt;
	PrEngine   *engine;
	StepTally	tally[MAX_STEPS + 1];
	double	   *x,
			   *exact;
	int32_t    *exact_top;

	for (int i = 1; i < argc; i++)
	{
		if (!bench_option_int(argc, argv, &i, "--rmat", &scale) &&
			!bench_option_int(argc, argv, &i, "--batches", &batches) &&
			!bench_option_int(argc, argv, &i, "--top", &k) &&
			!bench_option_int(argc, argv, &i, "--max-iterations", &max_steps) &&
			!bench_option_int(argc, argv, &i, "--threads", &threads))
		{
			fprintf(stderr, "unknown option %s\n", argv[i]);
			return 2;
		}
	}
	if (scale < 4 || batches < 1 || k < 1 || max_steps < 1 || max_steps > MAX_STEPS || threads < 1)
	{
		fprintf(stderr, "usage: rwr_convergence --rmat SCALE [--batches B] [--top K] "
				"[--max-iterations 1..%d] [--threads T]\n", MAX_STEPS);
		return 2;
	}
	spec = gen_rmat(scale, (int64_t) 16 << scale, 1, true);
	m = gen_unique_edges(&spec, threads, &src, &dst);
	gen_shuffle(src, dst, m, 1);
	memset(&bopt, 0, sizeof(bopt));
	bopt.n_threads = threads;
	bopt.out_edges = true;		/* for the push counts */
	if (m == 0 || pr_graph_build(src, dst, NULL, m, &bopt, &pr_malloc_allocator, &g, &err) != PR_OK)
	{
		fprintf(stderr, "build failed\n");
		return 1;
	}
	free(src);
	free(dst);
	printf("R-MAT %d: %lld nodes, %lld edges, %lld dangling; %d batches of %d sources, top %d\n",
		   scale, (long long) g.n_nodes, (long long) g.n_edges, (long long) g.n_dangling,
		   batches, BATCH, k);
	engine = pr_cpu_engine_create(threads, &pr_malloc_allocator, &err);
	x = malloc(sizeof(double) * (size_t) g.n_nodes * BATCH);
	exact = malloc(sizeof(double) * (size_t) g.n_nodes * BATCH);
	exact_top = malloc(sizeof(int32_t) * (size_t) k * BATCH);
	if (engine == NULL || x == NULL || exact == NULL || exact_top == NULL)
	{
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	memset(tally, 0, sizeof(tally));
	for (int b = 0; b < batches; b++)
	{
		int32_t		sources[BATCH];

		for (int j = 0; j < BATCH; j++)
			sources[j] = (int32_t) (((int64_t) (b * BATCH + j + 1) * 2654435761LL) % g.n_nodes);
		run_batch(engine, &g, sources, k, max_steps, tally, x, exact, exact_top);
	}
	printf("iteration  same top-%d set  same order  scores within 1e-3  within 1e-5  max L1 change (of %d sources)\n",
		   k, batches * BATCH);
	for (int s = 1; s <= max_steps; s++)
		printf("%9d  %14d  %10d  %18d  %11d  %.1e\n", s, tally[s].same_set, tally[s].same_order,
			   tally[s].within_1e3, tally[s].within_1e5, tally[s].max_change);
	engine->ops->release(engine);
	free(x);
	free(exact);
	free(exact_top);
	pr_graph_free(&g, &pr_malloc_allocator);
	return 0;
}
