/*
 * accel.c — the driver's iterations side by side on the CPU engine: plain power iteration against
 * Anderson mixing of several depths (PrIterOptions.mixing_depth), and the certified top-k.
 *
 *   accel (--graph NAME | --file edges.tsv[.gz]) [--depths 0,2,3,5,7] [--tol X] [--sources S]
 *         [--top K] [--threads T] [--repeat R] [--seed S] [--undirected]
 *
 * Tables (markdown):
 *  1. PageRank (damping 0.85) from 1/N to the L1 tolerance, per depth: iterations, mixed steps,
 *     milliseconds (best of --repeat, engine creation included), the run's error bound and its
 *     real L1 distance to the answer at 1e-13 (plain).
 *  2. HITS to the same tolerance, per depth: iterations and milliseconds.
 *  3. RWR (restart 0.15) from S random sources, one column each, per depth: mean iterations and
 *     milliseconds.
 *  4. Certified top-k of those sources (the deepest depth of the list, or plain when it is 0):
 *     the exact top-K from a run to 1e-14; then pr_pagerank_top at the tolerance, (a) going on
 *     until certified, (b) stopping as soon as certified (stop_when_certified): certified runs,
 *     certified runs whose top-K differs from the exact (must be 0), uncertified runs, runs that
 *     went past the tolerance and their extra iterations, and the iterations of (b) against the
 *     plain stop at the tolerance.
 *  5. The vector passes of one mixed step (the deepest depth of the list; the default, 5, when it
 *     is 0) against one product, per call on one column (best of 10 x --repeat): the combine of
 *     f = y - x, the dots of the new f with the kept ones, the combine of the kept outputs into x.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench_util.h"
#include "graph_gen.h"
#include "pr_driver.h"
#include "pr_mixing.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_DEPTHS 8
#define MAX_TOP 1000
#define DEFAULT_DEPTH 5			/* powerrank.mixing_depth's default */

/* What one run did, and its time. */
typedef struct Run
{
	PrRunStats	stats;
	double		seconds;
} Run;

/* The benchmark's settings. */
typedef struct Settings
{
	double		tol;
	int			threads;
	int			repeat;
	int64_t		top;
} Settings;

/* Ends the program after a failed call. */
static void
fail(const char *what, const PrError *err)
{
	fprintf(stderr, "%s failed: %s\n", what, err->message);
	exit(1);
}

/*
 * One PageRank-family run on a fresh engine: uniform restart (source < 0) or RWR from source;
 * scores into x (top == 0) or the top list into index / value.
 */
static Run
run_pagerank(const PrGraph *g, double damping, int32_t source, double tol, int depth,
			 bool stop_when_certified, int threads, int64_t top, double *x, int32_t *index,
			 double *value)
{
	int64_t		ptr[2] = {0, 1};
	double		one = 1.0;
	PrRestart	restart = source < 0 ? (PrRestart) {true, 1, NULL, NULL, NULL, 0, NULL, NULL}
		: pr_restart_columns(1, ptr, &source, &one);
	PrIterOptions o = bench_iter_options(tol, PR_NORM_L1, 100000, 1);
	PrError		err;
	PrEngine   *e;
	Run			r;
	double		t0 = pr_clock_seconds();
	PrStatus	status;

	o.mixing_depth = depth;
	o.stop_when_certified = stop_when_certified;
	if ((e = pr_cpu_engine_create(threads, &pr_malloc_allocator, &err)) == NULL)
		fail("engine", &err);
	status = top > 0 ? pr_pagerank_top(e, g, damping, &restart, &o, top, index, value, &r.stats, &err)
		: pr_pagerank(e, g, damping, &restart, &o, x, &r.stats, &err);
	if (status != PR_OK)
		fail("pagerank", &err);
	e->ops->release(e);
	r.seconds = pr_clock_seconds() - t0;
	return r;
}

/* One HITS run on a fresh engine. */
static Run
run_hits(const PrGraph *g, double tol, int depth, int threads, double *hubs, double *auth)
{
	PrIterOptions o = bench_iter_options(tol, PR_NORM_L1, 100000, 1);
	PrError		err;
	PrEngine   *e;
	Run			r;
	double		t0 = pr_clock_seconds();

	o.mixing_depth = depth;
	if ((e = pr_cpu_engine_create(threads, &pr_malloc_allocator, &err)) == NULL)
		fail("engine", &err);
	if (pr_hits(e, g, &o, hubs, auth, &r.stats, &err) != PR_OK)
		fail("hits", &err);
	e->ops->release(e);
	r.seconds = pr_clock_seconds() - t0;
	return r;
}

/* Table 1: PageRank from 1/N per depth. */
static void
pagerank_table(const PrGraph *g, const Settings *s, const int *depths, int n_depths)
{
	int64_t		n = g->n_nodes;
	double	   *exact = malloc(sizeof(double) * (size_t) n);
	double	   *x = malloc(sizeof(double) * (size_t) n);

	(void) run_pagerank(g, 0.85, -1, 1e-13, 0, false, s->threads, 0, exact, NULL, NULL);
	printf("\n| PageRank, L1 < %.0e, depth | iterations | mixed steps | ms | bound | L1 to the answer |\n",
		   s->tol);
	printf("|---|---|---|---|---|---|\n");
	for (int d = 0; d < n_depths; d++)
	{
		Run			best = run_pagerank(g, 0.85, -1, s->tol, depths[d], false, s->threads, 0, x,
										NULL, NULL);

		for (int r = 1; r < s->repeat; r++)
		{
			Run			again = run_pagerank(g, 0.85, -1, s->tol, depths[d], false, s->threads, 0,
											 x, NULL, NULL);

			best.seconds = fmin(best.seconds, again.seconds);
		}
		printf("| depth %d | %d | %d | %.1f | %.2e | %.2e |\n", depths[d], best.stats.iterations,
			   best.stats.mixed_steps, 1000.0 * best.seconds, best.stats.error_bound,
			   bench_l1(x, exact, n));
	}
	free(exact);
	free(x);
}

/* Table 2: HITS per depth. */
static void
hits_table(const PrGraph *g, const Settings *s, const int *depths, int n_depths)
{
	int64_t		n = g->n_nodes;
	double	   *h = malloc(sizeof(double) * (size_t) n);
	double	   *a = malloc(sizeof(double) * (size_t) n);
	double	   *h_exact = malloc(sizeof(double) * (size_t) n);
	double	   *a_exact = malloc(sizeof(double) * (size_t) n);

	(void) run_hits(g, 1e-13, 0, s->threads, h_exact, a_exact);
	printf("\n| HITS, L1 < %.0e, depth | iterations | mixed steps | fallbacks | ms | L1 of hubs to 1e-13 |\n",
		   s->tol);
	printf("|---|---|---|---|---|---|\n");
	for (int d = 0; d < n_depths; d++)
	{
		Run			r = run_hits(g, s->tol, depths[d], s->threads, h, a);

		printf("| %d | %d%s | %d | %d | %.1f | %.2e |\n", depths[d], r.stats.iterations,
			   r.stats.converged ? "" : " (not converged)", r.stats.mixed_steps,
			   r.stats.mixing_fallbacks, 1000.0 * r.seconds, bench_l1(h, h_exact, n));
	}
	free(h);
	free(a);
	free(h_exact);
	free(a_exact);
}

/* Table 3: RWR from the sources per depth. */
static void
rwr_table(const PrGraph *g, const Settings *s, const int32_t *sources, int n_sources,
		  const int *depths, int n_depths)
{
	double	   *x = malloc(sizeof(double) * (size_t) g->n_nodes);

	printf("\n| RWR from %d sources, L1 < %.0e, depth | mean iterations | mean mixed steps | mean ms |\n",
		   n_sources, s->tol);
	printf("|---|---|---|---|\n");
	for (int d = 0; d < n_depths; d++)
	{
		double		its = 0,
					mixed = 0,
					ms = 0;

		for (int i = 0; i < n_sources; i++)
		{
			Run			r = run_pagerank(g, 0.85, sources[i], s->tol, depths[d], false, s->threads,
										 0, x, NULL, NULL);

			its += r.stats.iterations;
			mixed += r.stats.mixed_steps;
			ms += 1000.0 * r.seconds;
		}
		printf("| %d | %.1f | %.1f | %.2f |\n", depths[d], its / n_sources, mixed / n_sources,
			   ms / n_sources);
	}
	free(x);
}

/* Table 4: the certified top-k from the sources at one depth. */
static void
certify_table(const PrGraph *g, const Settings *s, const int32_t *sources, int n_sources,
			  int depth)
{
	int64_t		t = s->top < g->n_nodes ? s->top : g->n_nodes;
	int32_t    *ei = malloc(sizeof(int32_t) * (size_t) t),
			   *ci = malloc(sizeof(int32_t) * (size_t) t);
	double	   *ev = malloc(sizeof(double) * (size_t) t),
			   *cv = malloc(sizeof(double) * (size_t) t),
			   *x = malloc(sizeof(double) * (size_t) g->n_nodes);
	int			certified = 0,
				wrong = 0,
				uncertified = 0,
				ties = 0,
				past = 0,
				extra = 0,
				early_certified = 0,
				early_wrong = 0;
	double		plain_its = 0,
				early_its = 0;

	for (int i = 0; i < n_sources; i++)
	{
		Run			exact = run_pagerank(g, 0.85, sources[i], 1e-14, depth, false, s->threads, t,
										 NULL, ei, ev);
		Run			plain = run_pagerank(g, 0.85, sources[i], s->tol, depth, false, s->threads, 0,
										 x, NULL, NULL);
		Run			cont,
					early;

		(void) exact;
		cont = run_pagerank(g, 0.85, sources[i], s->tol, depth, false, s->threads, t, NULL, ci, cv);
		if (cont.stats.top_k_certified == PR_CERTIFIED_YES)
		{
			certified++;
			if (memcmp(ci, ei, sizeof(int32_t) * (size_t) t) != 0)
				wrong++;
		}
		else
		{
			uncertified++;
			ties += cont.stats.top_k_ties > 0;
		}
		if (cont.stats.iterations > plain.stats.iterations)
		{
			past++;
			extra += cont.stats.iterations - plain.stats.iterations;
		}
		early = run_pagerank(g, 0.85, sources[i], s->tol, depth, true, s->threads, t, NULL, ci, cv);
		if (early.stats.top_k_certified == PR_CERTIFIED_YES)
		{
			early_certified++;
			if (memcmp(ci, ei, sizeof(int32_t) * (size_t) t) != 0)
				early_wrong++;
		}
		plain_its += plain.stats.iterations;
		early_its += early.stats.iterations;
	}
	printf("\n| certified top-%lld, %d sources, depth %d | value |\n", (long long) t, n_sources, depth);
	printf("|---|---|\n");
	printf("| certified (going on past the tolerance when needed) | %d |\n", certified);
	printf("| of which a top-%lld other than the exact one | **%d** |\n", (long long) t, wrong);
	printf("| not certified (ties within the bound at the end) | %d (%d with ties) |\n", uncertified,
		   ties);
	printf("| runs that went past the tolerance, extra iterations in all | %d, %d |\n", past, extra);
	printf("| stop_when_certified: certified, of which wrong | %d, **%d** |\n", early_certified,
		   early_wrong);
	printf("| mean iterations: plain stop at the tolerance / stop_when_certified | %.1f / %.1f |\n",
		   plain_its / n_sources, early_its / n_sources);
	free(ei);
	free(ci);
	free(ev);
	free(cv);
	free(x);
}

/* Best time of a call of each of the mixed step's vector passes and of a product (table 5). */
static void
op_table(const PrGraph *g, const Settings *s, int depth)
{
	enum {OP_PRODUCT, OP_DIFFERENCE, OP_DOTS, OP_COMBINE, N_OPS};
	static const char *const names[N_OPS] = {"product (pull, normalised)", "combine f = y - x (2 terms)",
		"dots of f with the kept f (depth + 1 terms)", "combine of the kept outputs (depth + 1 terms)"};
	int			terms = depth + 1;
	int			slots[PR_COMBINE_MAX_TERMS];
	double		coef[PR_COMBINE_MAX_TERMS],
				dots[PR_COMBINE_MAX_TERMS],
				best[N_OPS];
	PrError		err;
	PrEngine   *e;
	PrStatus	status;

	if ((e = pr_cpu_engine_create(s->threads, &pr_malloc_allocator, &err)) == NULL)
		fail("engine", &err);
	status = e->ops->prepare(e, g, 1, 2 * terms + 1, PR_NEED_PULL_NORMALIZED, &err);
	for (int i = 0; status == PR_OK && i < 2 * terms + 1; i++)
		status = e->ops->fill(e, i, 1.0 / (double) (g->n_nodes + i), &err);
	for (int t = 0; t < terms; t++)
	{
		slots[t] = 1 + t;
		coef[t] = t == 0 ? 1.0 : -1.0 / (double) terms;
	}
	for (int op = 0; op < N_OPS; op++)
		best[op] = INFINITY;
	for (int r = 0; status == PR_OK && r < 10 * s->repeat; r++)
		for (int op = 0; status == PR_OK && op < N_OPS; op++)
		{
			double		t0 = pr_clock_seconds();

			if (op == OP_PRODUCT)
				status = e->ops->product(e, PR_PRODUCT_PULL_NORMALIZED, 0, 1, &err);
			else if (op == OP_DIFFERENCE)
				status = e->ops->combine(e, 1 + terms, 2, slots, coef, &err);
			else if (op == OP_DOTS)
				status = e->ops->dots(e, 1 + terms, terms, slots + 0, dots, &err);
			else
				status = e->ops->combine(e, 0, terms, slots, coef, &err);
			best[op] = fmin(best[op], pr_clock_seconds() - t0);
		}
	if (status != PR_OK)
		fail("vector passes", &err);
	e->ops->release(e);
	printf("\n| one mixed step at depth %d, one column | ms per call |\n|---|---|\n", depth);
	for (int op = 0; op < N_OPS; op++)
		printf("| %s | %.3f |\n", names[op], best[op] * 1e3);
}

int
main(int argc, char **argv)
{
	const char *graph = "local:17:12:0.8:64";
	const char *file = NULL;
	int			depths[MAX_DEPTHS] = {0, 2, 3, 5, 7};
	int			n_depths = 5;
	int			n_sources = 20;
	uint64_t	seed = 1;
	bool		undirected = false;
	Settings	s = {1e-6, 0, 3, 10};
	int			top = 10;
	int64_t    *src = NULL,
			   *dst = NULL;
	size_t		m;
	GenSpec		spec;
	char		label[300];
	PrGraph		g;
	PrError		err;
	int32_t    *sources;
	uint64_t	state;

	for (int i = 1; i < argc; i++)
	{
		if (bench_option_string(argc, argv, &i, "--graph", &graph) ||
			bench_option_string(argc, argv, &i, "--file", &file) ||
			bench_option_int_list(argc, argv, &i, "--depths", depths, MAX_DEPTHS, &n_depths) ||
			bench_option_double(argc, argv, &i, "--tol", &s.tol) ||
			bench_option_int(argc, argv, &i, "--sources", &n_sources) ||
			bench_option_int(argc, argv, &i, "--top", &top) ||
			bench_option_int(argc, argv, &i, "--threads", &s.threads) ||
			bench_option_int(argc, argv, &i, "--repeat", &s.repeat) ||
			bench_option_uint64(argc, argv, &i, "--seed", &seed))
			continue;
		if (bench_flag(argv, i, "--undirected"))
			undirected = true;
		else
		{
			fprintf(stderr, "usage: %s [--graph NAME | --file PATH] [--depths 0,2,3,5,7] [--tol X] "
					"[--sources S] [--top K] [--threads T] [--repeat R] [--seed S] [--undirected]\n",
					argv[0]);
			return 2;
		}
	}
	for (int d = 0; d < n_depths; d++)
		if (depths[d] < 0 || depths[d] > PR_MIX_MAX_DEPTH)
		{
			fprintf(stderr, "depths must be 0 to %d\n", PR_MIX_MAX_DEPTH);
			return 2;
		}
	if (top < 1 || top > MAX_TOP || n_sources < 1 || s.repeat < 1)
	{
		fprintf(stderr, "--top must be 1 to %d, --sources and --repeat positive\n", MAX_TOP);
		return 2;
	}
	s.top = top;
	if (s.threads <= 0)
		s.threads = (int) sysconf(_SC_NPROCESSORS_ONLN);
	if (file == NULL && !gen_parse(graph, seed, &spec))
	{
		fprintf(stderr, "unknown graph name \"%s\"\n", graph);
		return 2;
	}
	m = bench_edges(file, &spec, s.threads, &src, &dst, label, sizeof(label));
	if (m == 0)
	{
		fprintf(stderr, "no edges\n");
		return 1;
	}
	{
		PrBuildOptions bopt = {undirected, true, s.threads, NULL, NULL, NULL};

		if (pr_graph_build(src, dst, NULL, m, &bopt, &pr_malloc_allocator, &g, &err) != PR_OK)
			fail("build", &err);
	}
	sources = malloc(sizeof(int32_t) * (size_t) n_sources);
	state = seed * 6364136223846793005u + 1442695040888963407u;
	for (int i = 0; i < n_sources; i++)
		sources[i] = (int32_t) (gen_random(&state) % (uint64_t) g.n_nodes);
	printf("graph: %s (%s), %lld nodes, %lld edges; CPU engine, %d threads, best of %d\n", label,
		   undirected ? "undirected" : "directed", (long long) g.n_nodes, (long long) g.n_edges,
		   s.threads, s.repeat);
	pagerank_table(&g, &s, depths, n_depths);
	hits_table(&g, &s, depths, n_depths);
	rwr_table(&g, &s, sources, n_sources, depths, n_depths);
	certify_table(&g, &s, sources, n_sources, depths[n_depths - 1]);
	op_table(&g, &s, depths[n_depths - 1] > 0 ? depths[n_depths - 1] : DEFAULT_DEPTH);
	free(sources);
	free(src);
	free(dst);
	pr_graph_free(&g, &pr_malloc_allocator);
	return 0;
}
