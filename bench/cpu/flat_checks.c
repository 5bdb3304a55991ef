/*
 * flat_checks.c — the time of the checks of a flat graph: pr_graph_view_flat_timed (node pass,
 * edge pass, the rest; an unweighted graph's out-strengths by fingerprint) on each thread count,
 * and pr_graph_view_flat (one thread, the out-strengths counted exactly), as the backend checks
 * the graph the GPU service built from a table's rows (src/functions/run.c).
 *
 *   flat_checks [--graph NAME | --rmat SCALE | --file edges.tsv[.gz]] [--threads 1,2,..]
 *               [--repeat R]
 *
 * The graph: the generated graph's unique edges (bench_edges), unweighted, directed, in-edges
 * only, written in flat form.  Each figure is the best of R runs, in milliseconds.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench_util.h"
#include "graph_gen.h"
#include "pr_graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREAD_COUNTS 8

/* The smallest of each part over repeat timed checks on n_threads threads (0: pr_graph_view_flat). */
static PrFlatCheckTimes
best_times(const void *buf, size_t size, int n_threads, int repeat, double *total)
{
	PrFlatCheckTimes best = {0},
				t;
	PrGraph		view;
	PrError		err;

	*total = 0;
	for (int r = 0; r < repeat; r++)
	{
		double		t0 = pr_clock_seconds(),
					elapsed;
		PrStatus	status = n_threads == 0 ? pr_graph_view_flat(buf, size, &view, &err)
			: pr_graph_view_flat_timed(buf, size, n_threads, &view, &t, &err);

		elapsed = pr_clock_seconds() - t0;
		if (status != PR_OK)
		{
			fprintf(stderr, "the check failed: %s\n", err.message);
			exit(1);
		}
		if (n_threads == 0)
			memset(&t, 0, sizeof(t));
		if (r == 0 || elapsed < *total)
			*total = elapsed;
		if (r == 0 || t.nodes < best.nodes)
			best.nodes = t.nodes;
		if (r == 0 || t.edges < best.edges)
			best.edges = t.edges;
		if (r == 0 || t.rest < best.rest)
			best.rest = t.rest;
	}
	return best;
}

int
main(int argc, char **argv)
{
	GenOptions	opts = {"rmat:22", GEN_IDS_NATURAL};
	const char *file = NULL;
	int			threads[MAX_THREAD_COUNTS] = {1, 2};
	int			n_threads = 2;
	int			repeat = 5;
	int64_t    *src,
			   *dst;
	size_t		m,
				size;
	GenSpec		spec;
	char		label[300];
	PrBuildOptions options = {0};
	PrGraph		g;
	PrError		err;
	void	   *buf;
	double		total;

	for (int i = 1; i < argc; i++)
	{
		int			taken = gen_take_option(argc, argv, i, &opts);

		if (taken > 0)
		{
			i += taken - 1;
			continue;
		}
		if (bench_option_string(argc, argv, &i, "--file", &file) ||
			bench_option_int_list(argc, argv, &i, "--threads", threads, MAX_THREAD_COUNTS, &n_threads) ||
			bench_option_int(argc, argv, &i, "--repeat", &repeat))
			continue;
		fprintf(stderr, "usage: %s [--graph NAME | --rmat SCALE | --file PATH] [--threads 1,2,..] "
				"[--repeat R]\n", argv[0]);
		return 2;
	}
	if (file == NULL && !gen_parse(opts.graph, GEN_BENCH_SEED, &spec))
	{
		fprintf(stderr, "unknown graph name \"%s\"\n", opts.graph);
		return 2;
	}
	m = bench_edges(file, &spec, 0, &src, &dst, label, sizeof(label));
	if (m == 0)
	{
		fprintf(stderr, "no edges\n");
		return 1;
	}
	options.n_threads = pr_thread_count(0, 64);
	if (pr_graph_build(src, dst, NULL, m, &options, &pr_malloc_allocator, &g, &err) != PR_OK)
	{
		fprintf(stderr, "build failed: %s\n", err.message);
		return 1;
	}
	free(src);
	free(dst);
	size = pr_graph_flat_size(&g);
	buf = aligned_alloc(8, (size + 7) & ~(size_t) 7);
	if (buf == NULL)
	{
		fprintf(stderr, "no memory for %zu bytes\n", size);
		return 1;
	}
	pr_graph_write_flat_threads(&g, buf, options.n_threads);
	printf("graph: %s, %lld nodes, %lld edges, %lld dangling, flat %zu MB; best of %d, ms\n", label,
		   (long long) g.n_nodes, (long long) g.n_edges, (long long) g.n_dangling, size >> 20, repeat);
	pr_graph_free(&g, &pr_malloc_allocator);

	printf("| check | threads | total | node pass | edge pass | rest |\n|---|---|---|---|---|---|\n");
	best_times(buf, size, 0, repeat, &total);
	printf("| pr_graph_view_flat (counted) | 1 | %.1f | | | |\n", total * 1000.0);
	for (int i = 0; i < n_threads; i++)
	{
		PrFlatCheckTimes t = best_times(buf, size, threads[i], repeat, &total);

		printf("| pr_graph_view_flat_threads (fingerprint) | %d | %.1f | %.1f | %.1f | %.1f |\n",
			   threads[i], total * 1000.0, t.nodes * 1000.0, t.edges * 1000.0, t.rest * 1000.0);
	}
	free(buf);
	return 0;
}
