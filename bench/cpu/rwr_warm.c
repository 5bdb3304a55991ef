/*
 * rwr_warm.c — RWR from the warm start (PrIterOptions.warm_start) against RWR from 1/N: iterations
 * and distance to the exact answer, source by source, on the CPU engine.
 *
 *   rwr_warm (--graph NAME | --file edges.tsv[.gz]) [--sources S] [--k K] [--tol X] [--norm N]
 *            [--threads T] [--seed S]
 *
 * --graph takes a graph_gen name, or "hubs": the hub graph of the GPU products' tests
 * (gen_hub_edges, seed 13, unweighted).  S sources (default 20) drawn with the seed's stream,
 * ranked K at a time (default 1; S a multiple of K), damping 0.85, check_every 1, on one engine
 * (the far-field vector made once, as a resident engine keeps it).  For each run: the iterations
 * from 1/N and from the warm start to the tolerance (default L1 1e-6), and the largest L1 distance
 * of a column to the answer at L1 1e-13; last, the totals, the runs where the warm start took more
 * iterations, and those where it ended farther from the exact answer.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench_util.h"
#include "graph_gen.h"
#include "pr_driver.h"
#include "pr_engine.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_K 64

/* One ranking of the run's k sources into x; exits on an error. */
static PrRunStats
rank_sources(PrEngine *engine, const PrGraph *g, const PrRestart *restart,
			 const PrIterOptions *options, double *x)
{
	PrRunStats	stats;
	PrError		err;

	if (pr_pagerank(engine, g, 0.85, restart, options, x, &stats, &err) != PR_OK)
	{
		fprintf(stderr, "RWR failed: %s\n", err.message);
		exit(1);
	}
	return stats;
}

/* The largest L1 distance of a column of x to the same column of exact (n x k). */
static double
worst_column_distance(const double *x, const double *exact, int64_t n, int k)
{
	double		worst = 0.0;

	for (int j = 0; j < k; j++)
	{
		double		d = 0.0;

		for (int64_t v = 0; v < n; v++)
			d += fabs(x[v * k + j] - exact[v * k + j]);
		worst = fmax(worst, d);
	}
	return worst;
}

/* The edges of --graph / --file into *src / *dst and their count (0: none); label names them. */
static size_t
read_graph(const char *graph, const char *file, uint64_t seed, int threads, int64_t **src,
		   int64_t **dst, char *label, size_t label_size)
{
	GenSpec		spec;
	size_t		m;

	if (file == NULL && strcmp(graph, "hubs") == 0)
	{
		m = gen_hub_edges(13, false, NULL, NULL, NULL);
		*src = malloc(sizeof(int64_t) * m);
		*dst = malloc(sizeof(int64_t) * m);
		if (*src == NULL || *dst == NULL)
			return 0;
		gen_hub_edges(13, false, *src, *dst, NULL);
		snprintf(label, label_size, "hubs (gen_hub_edges, seed 13)");
		return m;
	}
	if (file == NULL && !gen_parse(graph, seed, &spec))
	{
		fprintf(stderr, "unknown graph name \"%s\"\n", graph);
		exit(2);
	}
	return bench_edges(file, &spec, threads, src, dst, label, label_size);
}

int
main(int argc, char **argv)
{
	const char *graph = "hubs";
	const char *file = NULL;
	const char *norm_name = "l1";
	int			n_sources = 20,
				k = 1,
				threads = 2;
	double		tol = 1e-6;
	uint64_t	seed = 1;
	uint64_t	state;
	PrNorm		norm;
	int64_t    *src,
			   *dst;
	size_t		m;
	char		label[300];
	PrGraph		g;
	PrError		err;
	PrEngine   *engine;
	int32_t    *sources;
	double	   *exact,
			   *cold,
			   *warm;
	int			cold_total = 0,
				warm_total = 0,
				more = 0,
				farther = 0;
	double		least_ratio = INFINITY,
				most_ratio = 0.0;

	for (int i = 1; i < argc; i++)
	{
		if (bench_option_string(argc, argv, &i, "--graph", &graph) ||
			bench_option_string(argc, argv, &i, "--file", &file) ||
			bench_option_string(argc, argv, &i, "--norm", &norm_name) ||
			bench_option_int(argc, argv, &i, "--sources", &n_sources) ||
			bench_option_int(argc, argv, &i, "--k", &k) ||
			bench_option_int(argc, argv, &i, "--threads", &threads) ||
			bench_option_uint64(argc, argv, &i, "--seed", &seed) ||
			bench_option_double(argc, argv, &i, "--tol", &tol))
			continue;
		fprintf(stderr, "usage: %s [--graph NAME|hubs | --file PATH] [--sources S] [--k K] "
				"[--tol X] [--norm l1|l1_scaled|linf] [--threads T] [--seed S]\n", argv[0]);
		return 2;
	}
	if (!pr_norm_parse(norm_name, &norm) || k < 1 || k > MAX_K || n_sources < k ||
		n_sources % k != 0 || !(tol > 0.0))
	{
		fprintf(stderr, "bad options: a norm, 1 <= K <= %d, S a multiple of K, tol > 0\n", MAX_K);
		return 2;
	}
	if (threads <= 0)
		threads = (int) sysconf(_SC_NPROCESSORS_ONLN);
	state = seed * 7919 + 17;
	m = read_graph(graph, file, seed, threads, &src, &dst, label, sizeof(label));
	if (m == 0 || pr_graph_build(src, dst, NULL, m, NULL, &pr_malloc_allocator, &g, &err) != PR_OK)
	{
		fprintf(stderr, "no graph built\n");
		return 1;
	}
	free(src);
	free(dst);
	sources = malloc(sizeof(int32_t) * (size_t) n_sources);
	exact = malloc(sizeof(double) * (size_t) g.n_nodes * (size_t) k);
	cold = malloc(sizeof(double) * (size_t) g.n_nodes * (size_t) k);
	warm = malloc(sizeof(double) * (size_t) g.n_nodes * (size_t) k);
	engine = pr_cpu_engine_create(threads, &pr_malloc_allocator, &err);
	if (sources == NULL || exact == NULL || cold == NULL || warm == NULL || engine == NULL)
	{
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	for (int s = 0; s < n_sources; s++)
		sources[s] = (int32_t) (gen_random(&state) % (uint64_t) g.n_nodes);
	printf("%s: %lld nodes, %lld edges, %lld dangling; %d sources, %d a run, %s %g\n", label,
		   (long long) g.n_nodes, (long long) g.n_edges, (long long) g.n_dangling, n_sources, k,
		   pr_norm_name(norm), tol);
	printf("| first source | its. 1/N | its. warm | L1 to exact, 1/N | L1 to exact, warm |\n");
	printf("|---|---|---|---|---|\n");
	for (int s0 = 0; s0 < n_sources; s0 += k)
	{
		double		ones[MAX_K];
		int64_t		ptr[MAX_K + 1];
		PrRestart	restart = {false, k, ptr, sources + s0, ones, 0, NULL, NULL};
		PrIterOptions exact_options = bench_iter_options(1e-13, PR_NORM_L1, 10000, 1);
		PrIterOptions options = bench_iter_options(tol, norm, 10000, 1);
		PrRunStats	st_cold,
					st_warm;
		double		d_cold,
					d_warm;

		for (int j = 0; j <= k; j++)
			ptr[j] = j;
		for (int j = 0; j < k; j++)
			ones[j] = 1.0;
		rank_sources(engine, &g, &restart, &exact_options, exact);
		st_cold = rank_sources(engine, &g, &restart, &options, cold);
		options.warm_start = true;
		st_warm = rank_sources(engine, &g, &restart, &options, warm);
		d_cold = worst_column_distance(cold, exact, g.n_nodes, k);
		d_warm = worst_column_distance(warm, exact, g.n_nodes, k);
		printf("| %d | %d | %d%s | %.2e | %.2e |\n", sources[s0], st_cold.iterations,
			   st_warm.iterations, st_warm.warm_started ? "" : " (not warm-started)", d_cold,
			   d_warm);
		cold_total += st_cold.iterations;
		warm_total += st_warm.iterations;
		more += st_warm.iterations > st_cold.iterations;
		/* a distance below the exact answer's own error (a 1e-13 run) is no distance */
		if (d_cold > 1e-12)
		{
			farther += d_warm > d_cold;
			least_ratio = fmin(least_ratio, d_warm / d_cold);
			most_ratio = fmax(most_ratio, d_warm / d_cold);
		}
	}
	printf("iterations: %d from 1/N, %d from the warm start; the warm start took more in %d of "
		   "%d runs and ended farther from the exact answer in %d (its distance / 1/N's: %.2f .. "
		   "%.2f)\n", cold_total, warm_total, more, n_sources / k, farther, least_ratio,
		   most_ratio);
	engine->ops->release(engine);
	free(sources);
	free(exact);
	free(cold);
	free(warm);
	pr_graph_free(&g, &pr_malloc_allocator);
	return 0;
}
