/*
 * cpu_bench.c — our CPU PageRank against igraph's (PRPACK, optionally ARPACK) on the same graph.
 *
 *   cpu_bench --rmat SCALE [--seed S]        R-MAT graph (Graph500 a,b,c = 0.57,0.19,0.19, edge
 *                                            factor 16, permuted ids, duplicates removed)
 *   cpu_bench --file edges.tsv[.gz]          tab-separated src dst
 *   options: --threads T (default: online cores)  --iterations N (fixed-count run, default 50)
 *            --tol X (default 1e-10, L1)  --repeat R (best of R timings, default 3)
 *            --arpack / --no-arpack (default: ARPACK when the graph has < 2M edges)
 *            --build-only (time pr_graph_build only, with --threads build threads; no ranking)
 *            --out-edges / --undirected (build options, for --build-only timings)
 *            --sparse-ids (replace every id x by x * 0x9E3779B97F4A7C15 mod 2^64 as a signed
 *            bigint: same graph, ids spread over the whole int64 range, so no dense id table)
 *
 * Prints graph size, build time, our ms per iteration (fixed count, check_every = count so no
 * early stop), our time to converge to tol, igraph's times, the ratio igraph/ours and the L1
 * distance between the results.  Damping 0.85, uniform restart and dangling redistribution.
 * Every time is the best of --repeat runs, each from scratch (engine creation and prepare
 * included for ours; igraph_pagerank's whole call, its own graph conversion included).
 */
#define _POSIX_C_SOURCE 200809L

#include "bench_util.h"
#include "pr_driver.h"
#include "graph_gen.h"

#include <float.h>
#include <igraph.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Runs our PageRank once on a fresh engine; returns wall seconds. */
static double
run_ours(const PrGraph *g, int threads, double tol, int max_it, int check_every, double *x,
		 PrRunStats *st)
{
	PrError		err;
	PrRestart	r = {true, 1, NULL, NULL, NULL, 0, NULL, NULL};
	PrIterOptions o = bench_iter_options(tol, PR_NORM_L1, max_it, check_every);
	PrEngine   *e;
	double		t0 = pr_clock_seconds(),
				t;

	e = pr_cpu_engine_create(threads, &pr_malloc_allocator, &err);
	if (e == NULL || pr_pagerank(e, g, 0.85, &r, &o, x, st, &err) != PR_OK)
	{
		fprintf(stderr, "our PageRank failed: %s\n", err.message);
		exit(1);
	}
	e->ops->release(e);
	t = pr_clock_seconds() - t0;
	return t;
}

/* Runs igraph_pagerank once; returns wall seconds (negative on failure). */
static double
run_igraph(const igraph_t *graph, igraph_pagerank_algo_t algo, double *x, int64_t n)
{
	igraph_vector_t result;
	igraph_real_t value;
	igraph_arpack_options_t arpack;
	double		t0,
				t;

	igraph_arpack_options_init(&arpack);
	igraph_vector_init(&result, 0);
	t0 = pr_clock_seconds();
	if (igraph_pagerank(graph, algo, &result, &value, igraph_vss_all(), true, 0.85, NULL,
						algo == IGRAPH_PAGERANK_ALGO_ARPACK ? &arpack : NULL) != IGRAPH_SUCCESS)
	{
		igraph_vector_destroy(&result);
		return -1.0;
	}
	t = pr_clock_seconds() - t0;
	for (int64_t i = 0; i < n; i++)
		x[i] = VECTOR(result)[i];
	igraph_vector_destroy(&result);
	return t;
}

/* Parses arguments, runs everything, prints the report. */
int
main(int argc, char **argv)
{
	int			scale = 0;
	const char *file = NULL;
	uint64_t	seed = 1;
	int			threads = 0;
	int			iterations = 50;
	double		tol = 1e-10;
	int			repeat = 3;
	int			arpack = -1;
	bool		build_only = false;
	bool		sparse_ids = false;
	int64_t    *src = NULL,
			   *dst = NULL;
	size_t		m;
	PrGraph		g;
	PrError		err;
	PrBuildOptions bopt = {false, false, 1, NULL, NULL, NULL};
	double		t0,
				t_build,
				t_fixed = INFINITY,
				t_conv = INFINITY,
				t_prpack = INFINITY,
				t_arpack = INFINITY;
	double	   *ours,
			   *prpack,
			   *arpack_x;
	PrRunStats	st_fixed,
				st_conv;
	char		label[300];

	for (int i = 1; i < argc; i++)
	{
		if (bench_option_int(argc, argv, &i, "--rmat", &scale) ||
			bench_option_string(argc, argv, &i, "--file", &file) ||
			bench_option_uint64(argc, argv, &i, "--seed", &seed) ||
			bench_option_int(argc, argv, &i, "--threads", &threads) ||
			bench_option_int(argc, argv, &i, "--iterations", &iterations) ||
			bench_option_double(argc, argv, &i, "--tol", &tol) ||
			bench_option_int(argc, argv, &i, "--repeat", &repeat))
			continue;
		if (bench_flag(argv, i, "--arpack"))
			arpack = 1;
		else if (bench_flag(argv, i, "--no-arpack"))
			arpack = 0;
		else if (bench_flag(argv, i, "--build-only"))
			build_only = true;
		else if (bench_flag(argv, i, "--out-edges"))
			bopt.out_edges = true;
		else if (bench_flag(argv, i, "--undirected"))
			bopt.undirected = true;
		else if (bench_flag(argv, i, "--sparse-ids"))
			sparse_ids = true;
		else
		{
			fprintf(stderr, "usage: %s (--rmat SCALE | --file PATH) [--seed S] [--threads T] "
					"[--iterations N] [--tol X] [--repeat R] [--arpack|--no-arpack] "
					"[--build-only] [--out-edges] [--undirected] [--sparse-ids]\n", argv[0]);
			return 2;
		}
	}
	if ((scale <= 0) == (file == NULL) || repeat < 1 || iterations < 1)
	{
		fprintf(stderr, "give exactly one of --rmat SCALE or --file PATH\n");
		return 2;
	}
	if (threads <= 0)
		threads = (int) sysconf(_SC_NPROCESSORS_ONLN);
	{
		/* igraph's OpenMP parts get the same thread count */
		char		buf[16];

		snprintf(buf, sizeof(buf), "%d", threads);
		setenv("OMP_NUM_THREADS", buf, 1);
	}

	t0 = pr_clock_seconds();
	if (file != NULL)
	{
		m = bench_read_edges(file, &src, &dst);
		snprintf(label, sizeof(label), "%s", strrchr(file, '/') ? strrchr(file, '/') + 1 : file);
	}
	else
	{
		GenSpec		spec = gen_rmat(scale, (int64_t) 16 << scale, seed, true);

		m = gen_unique_edges(&spec, threads, &src, &dst);
		gen_shuffle(src, dst, m, seed);
		snprintf(label, sizeof(label), "R-MAT scale %d (seed %llu)", scale, (unsigned long long) seed);
	}
	if (m == 0)
	{
		fprintf(stderr, "no edges\n");
		return 1;
	}
	if (sparse_ids)
		for (size_t i = 0; i < m; i++)
		{
			src[i] = (int64_t) ((uint64_t) src[i] * UINT64_C(0x9E3779B97F4A7C15));
			dst[i] = (int64_t) ((uint64_t) dst[i] * UINT64_C(0x9E3779B97F4A7C15));
		}
	fprintf(stderr, "input ready in %.2f s\n", pr_clock_seconds() - t0);
	if (build_only)
		bopt.n_threads = threads;

	t_build = INFINITY;
	for (int r = 0; r < repeat; r++)
	{
		double		t;

		t0 = pr_clock_seconds();
		if (pr_graph_build(src, dst, NULL, m, &bopt, &pr_malloc_allocator, &g, &err) != PR_OK)
		{
			fprintf(stderr, "build failed: %s\n", err.message);
			return 1;
		}
		t = pr_clock_seconds() - t0;
		t_build = fmin(t_build, t);
		if (r + 1 < repeat)
			pr_graph_free(&g, &pr_malloc_allocator);
	}

	if (build_only)
	{
		printf("| %s | %lld nodes | %lld edges | build threads %d | undirected %d | out-edges %d "
			   "| build %.3f s (best of %d) |\n",
			   label, (long long) g.n_nodes, (long long) g.n_edges, bopt.n_threads,
			   (int) bopt.undirected, (int) bopt.out_edges, t_build, repeat);
		pr_graph_free(&g, &pr_malloc_allocator);
		free(src);
		free(dst);
		return 0;
	}

	ours = malloc(sizeof(double) * (size_t) g.n_nodes);
	prpack = malloc(sizeof(double) * (size_t) g.n_nodes);
	arpack_x = malloc(sizeof(double) * (size_t) g.n_nodes);
	for (int r = 0; r < repeat; r++)
		t_fixed = fmin(t_fixed, run_ours(&g, threads, DBL_MIN, iterations, iterations, ours, &st_fixed));
	for (int r = 0; r < repeat; r++)
		t_conv = fmin(t_conv, run_ours(&g, threads, tol, 10000, 1, ours, &st_conv));

	{
		igraph_vector_int_t edges;
		igraph_t	graph;

		/* igraph vertex i = our internal node i */
		igraph_vector_int_init(&edges, (igraph_integer_t) (2 * g.n_edges));
		for (int64_t v = 0, k = 0; v < g.n_nodes; v++)
			for (int64_t e = g.in_ptr[v]; e < g.in_ptr[v + 1]; e++, k++)
			{
				VECTOR(edges)[2 * k] = g.in_src[e];
				VECTOR(edges)[2 * k + 1] = v;
			}
		igraph_create(&graph, &edges, (igraph_integer_t) g.n_nodes, true);
		igraph_vector_int_destroy(&edges);
		for (int r = 0; r < repeat; r++)
			t_prpack = fmin(t_prpack, run_igraph(&graph, IGRAPH_PAGERANK_ALGO_PRPACK, prpack, g.n_nodes));
		if (arpack < 0)
			arpack = g.n_edges < 2000000;
		if (arpack)
			for (int r = 0; r < repeat; r++)
				t_arpack = fmin(t_arpack, run_igraph(&graph, IGRAPH_PAGERANK_ALGO_ARPACK, arpack_x, g.n_nodes));
		igraph_destroy(&graph);
	}

	printf("graph: %s\n", label);
	printf("threads: %d (ours; OMP_NUM_THREADS=%d for igraph), best of %d runs\n", threads, threads, repeat);
	printf("| graph | nodes | edges | build (s) | ours ms/iter (%d it) | ours to %.0e L1 (ms, it) "
		   "| igraph PRPACK (ms) | PRPACK/ours | L1 ours-PRPACK | igraph ARPACK (ms) | ARPACK/ours | L1 ours-ARPACK |\n",
		   iterations, tol);
	printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	printf("| %s | %lld | %lld | %.3f | %.3f | %.1f (%d) | %.1f | %.2f | %.2e |",
		   label, (long long) g.n_nodes, (long long) g.n_edges, t_build,
		   1000.0 * t_fixed / iterations, 1000.0 * t_conv, st_conv.iterations,
		   1000.0 * t_prpack, t_prpack / t_conv, bench_l1(ours, prpack, g.n_nodes));
	if (arpack)
		printf(" %.1f | %.2f | %.2e |\n", 1000.0 * t_arpack, t_arpack / t_conv,
			   bench_l1(ours, arpack_x, g.n_nodes));
	else
		printf(" not run | - | - |\n");
	free(ours);
	free(prpack);
	free(arpack_x);
	pr_graph_free(&g, &pr_malloc_allocator);
	free(src);
	free(dst);
	return 0;
}
