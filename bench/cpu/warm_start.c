/*
 * warm_start.c — PageRank after a small change of a graph: from 1/N and from the previous graph's
 * scores (the automatic warm start), on the CPU engine, as the SQL path runs them
 * (src/functions/run.c).
 *
 *   warm_start (--graph NAME | --file edges.tsv[.gz]) [--fraction F] [--tol X[,Y]] [--damping D]
 *              [--norm l1[,l1_scaled,linf]] [--threads T] [--repeat R] [--seed S] [--undirected]
 *              [--mixing-depth M]   (PrIterOptions.mixing_depth of every ranking; default 0, plain)
 *
 * Changes (each of F of the stored edges, default 0.001): "insert-near" — copies of sampled edges
 * with the destination moved to a nearby id, one in ten to a node new to the graph (the
 * warm_start_auto regression test's change); "insert-random" — edges between uniformly drawn
 * nodes; "insert-popular" — the source of one sampled edge to the destination of another (new
 * edges lean to popular nodes); "delete-random" — sampled edges removed.  For each change and
 * stopping norm and tolerance: the previous graph ranked from 1/N to that tolerance, its scores
 * carried to the changed graph (pr_graph_carry_scores), then the changed graph ranked from 1/N and
 * from the carried scores.  Columns: iterations and time of each (best of --repeat), their
 * ratios, and each answer's L1 distance to the changed graph's answer at tolerance 1e-13 (L1).
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

#define MAX_TOLS 4
#define MAX_NORMS 3

/* PrIterOptions.mixing_depth of every ranking (--mixing-depth). */
static int	mixing_depth = 0;

/* One ranking: iterations and seconds. */
typedef struct RankResult
{
	int			iterations;
	double		seconds;
} RankResult;

/* Ranks g from start (NULL: 1/N) to tol in norm; scores into x. */
static RankResult
rank(const PrGraph *g, double damping, PrNorm norm, double tol, int threads, const double *start,
	 double *x)
{
	PrRestart	restart = {true, 1, NULL, NULL, NULL, 0, NULL, NULL};
	PrIterOptions it = bench_iter_options(tol, norm, 10000, 1);
	PrRunStats	stats = {0};
	PrError		err;
	RankResult	res = {0, 0.0};
	double		t0 = pr_clock_seconds();
	PrEngine   *e;

	it.initial = start;
	it.mixing_depth = mixing_depth;
	e = pr_cpu_engine_create(threads, &pr_malloc_allocator, &err);
	if (e == NULL || pr_pagerank(e, g, damping, &restart, &it, x, &stats, &err) != PR_OK)
	{
		fprintf(stderr, "pagerank failed: %s\n", err.message);
		exit(1);
	}
	e->ops->release(e);
	res.iterations = stats.iterations;
	res.seconds = pr_clock_seconds() - t0;
	return res;
}

/* The best time of repeat rankings (the iterations and work are the same every time). */
static RankResult
rank_best(const PrGraph *g, double damping, PrNorm norm, double tol, int threads,
		  const double *start, int repeat, double *x)
{
	RankResult	best = rank(g, damping, norm, tol, threads, start, x);

	for (int r = 1; r < repeat; r++)
	{
		RankResult	again = rank(g, damping, norm, tol, threads, start, x);

		best.seconds = fmin(best.seconds, again.seconds);
	}
	return best;
}

/* Builds a graph of m edges (directed unless undirected). */
static void
build(const int64_t *src, const int64_t *dst, size_t m, bool undirected, int threads, PrGraph *g)
{
	PrBuildOptions bopt = {undirected, false, threads, NULL, NULL, NULL};
	PrError		err;

	if (pr_graph_build(src, dst, NULL, m, &bopt, &pr_malloc_allocator, g, &err) != PR_OK)
	{
		fprintf(stderr, "build failed: %s\n", err.message);
		exit(1);
	}
}

/*
 * The changed edge list of kind (see the header) into *out_src / *out_dst (malloc()ed); returns
 * its length.  max_id: the largest id of the graph; ids: its n_ids node ids.
 */
static size_t
change(const char *kind, const int64_t *src, const int64_t *dst, size_t m, size_t count,
	   int64_t max_id, const int64_t *ids, int64_t n_ids, uint64_t seed, int64_t **out_src,
	   int64_t **out_dst)
{
	uint64_t	state = seed * 2654435761u + 11;
	size_t		total = strcmp(kind, "delete-random") == 0 ? m - count : m + count;
	int64_t    *s = malloc(sizeof(int64_t) * total);
	int64_t    *d = malloc(sizeof(int64_t) * total);

	if (strcmp(kind, "delete-random") == 0)
	{
		unsigned char *gone = calloc(m, 1);
		size_t		k = 0;

		for (size_t removed = 0; removed < count;)
		{
			size_t		e = (size_t) (gen_random(&state) % m);

			if (!gone[e])
			{
				gone[e] = 1;
				removed++;
			}
		}
		for (size_t e = 0; e < m; e++)
			if (!gone[e])
			{
				s[k] = src[e];
				d[k] = dst[e];
				k++;
			}
		free(gone);
	}
	else
	{
		memcpy(s, src, sizeof(int64_t) * m);
		memcpy(d, dst, sizeof(int64_t) * m);
		for (size_t i = 0; i < count; i++)
		{
			size_t		a = (size_t) (gen_random(&state) % m);
			size_t		b = (size_t) (gen_random(&state) % m);

			if (strcmp(kind, "insert-near") == 0)
			{
				s[m + i] = src[a];
				d[m + i] = (i + 1) % 10 == 0 ? max_id + 1 + dst[a] : dst[a] + 3;
			}
			else if (strcmp(kind, "insert-random") == 0)
			{
				s[m + i] = ids[gen_random(&state) % (uint64_t) n_ids];
				d[m + i] = ids[gen_random(&state) % (uint64_t) n_ids];
			}
			else
			{
				s[m + i] = src[a];
				d[m + i] = dst[b];
			}
		}
	}
	*out_src = s;
	*out_dst = d;
	return total;
}

int
main(int argc, char **argv)
{
	const char *graph = "local:17:12:0.8:64";
	const char *file = NULL;
	const char *kinds[] = {"insert-near", "insert-random", "insert-popular", "delete-random"};
	double		tols[MAX_TOLS] = {1e-4, 1e-6};
	int			n_tols = 2;
	const char *norm_list = "l1";
	PrNorm		norms[MAX_NORMS];
	int			n_norms = 0;
	double		fraction = 0.001;
	double		damping = 0.85;
	int			threads = 0;
	int			repeat = 3;
	uint64_t	seed = 1;
	bool		undirected = false;
	int64_t    *src = NULL,
			   *dst = NULL,
				max_id = 0;
	size_t		m;
	GenSpec		spec;
	char		label[300];

	for (int i = 1; i < argc; i++)
	{
		if (bench_option_string(argc, argv, &i, "--graph", &graph) ||
			bench_option_string(argc, argv, &i, "--file", &file) ||
			bench_option_string(argc, argv, &i, "--norm", &norm_list) ||
			bench_option_double(argc, argv, &i, "--fraction", &fraction) ||
			bench_option_double(argc, argv, &i, "--damping", &damping) ||
			bench_option_int(argc, argv, &i, "--threads", &threads) ||
			bench_option_int(argc, argv, &i, "--repeat", &repeat) ||
			bench_option_int(argc, argv, &i, "--mixing-depth", &mixing_depth) ||
			bench_option_uint64(argc, argv, &i, "--seed", &seed) ||
			bench_option_double_list(argc, argv, &i, "--tol", tols, MAX_TOLS, &n_tols))
			continue;
		if (bench_flag(argv, i, "--undirected"))
			undirected = true;
		else
		{
			fprintf(stderr, "usage: %s [--graph NAME | --file PATH] [--fraction F] [--tol X[,Y]] "
					"[--damping D] [--norm l1[,l1_scaled,linf]] [--threads T] [--repeat R] [--seed S] "
					"[--mixing-depth M] [--undirected]\n", argv[0]);
			return 2;
		}
	}
	for (const char *p = norm_list; *p != '\0' && n_norms < MAX_NORMS;)
	{
		char		name[16];
		size_t		len = strcspn(p, ",");

		snprintf(name, sizeof(name), "%.*s", (int) len, p);
		if (!pr_norm_parse(name, &norms[n_norms++]))
		{
			fprintf(stderr, "unknown norm \"%s\"\n", name);
			return 2;
		}
		p += len + (p[len] == ',');
	}
	if (threads <= 0)
		threads = (int) sysconf(_SC_NPROCESSORS_ONLN);
	if (file == NULL && !gen_parse(graph, seed, &spec))
	{
		fprintf(stderr, "unknown graph name \"%s\"\n", graph);
		return 2;
	}
	m = bench_edges(file, &spec, threads, &src, &dst, label, sizeof(label));
	if (m == 0)
	{
		fprintf(stderr, "no edges\n");
		return 1;
	}
	for (size_t e = 0; e < m; e++)
		max_id = src[e] > max_id ? src[e] : (dst[e] > max_id ? dst[e] : max_id);

	printf("graph: %s (%s), %zu edges; change: %.2g%% of them; damping %.2f; CPU engine, %d threads, "
		   "best of %d; mixing depth %d\n", label, undirected ? "undirected" : "directed", m,
		   100.0 * fraction, damping, threads, repeat, mixing_depth);
	printf("| change | norm | tolerance | from 1/N its. | ms | from the kept scores its. | ms | ratio its. "
		   "| ratio ms | L1 error from 1/N | from the kept scores |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (size_t ki = 0; ki < sizeof(kinds) / sizeof(kinds[0]); ki++)
	{
		size_t		count = (size_t) ((double) m * fraction);
		int64_t    *s1,
				   *d1;
		PrGraph		g0,
					g1;
		size_t		m1;
		int32_t    *map;
		double	   *x_old,
				   *start,
				   *cold,
				   *warm,
				   *exact;

		build(src, dst, m, undirected, threads, &g0);
		m1 = change(kinds[ki], src, dst, m, count > 0 ? count : 1, max_id, g0.node_ids,
					g0.n_nodes, seed + ki, &s1, &d1);
		build(s1, d1, m1, undirected, threads, &g1);
		map = malloc(sizeof(int32_t) * (size_t) g0.n_nodes);
		x_old = malloc(sizeof(double) * (size_t) g0.n_nodes);
		start = malloc(sizeof(double) * (size_t) g1.n_nodes);
		cold = malloc(sizeof(double) * (size_t) g1.n_nodes);
		warm = malloc(sizeof(double) * (size_t) g1.n_nodes);
		exact = malloc(sizeof(double) * (size_t) g1.n_nodes);
		pr_graph_node_map(&g0, &g1, map);
		(void) rank(&g1, damping, PR_NORM_L1, 1e-13, threads, NULL, exact);
		for (int ni = 0; ni < n_norms; ni++)
			for (int ti = 0; ti < n_tols; ti++)
			{
				RankResult	c,
							w;
				double		error_cold,
							error_warm;

				(void) rank(&g0, damping, norms[ni], tols[ti], threads, NULL, x_old);
				if (!pr_graph_carry_scores(&g0, x_old, map, &g1, start))
				{
					fprintf(stderr, "scores not carried\n");
					return 1;
				}
				c = rank_best(&g1, damping, norms[ni], tols[ti], threads, NULL, repeat, cold);
				w = rank_best(&g1, damping, norms[ni], tols[ti], threads, start, repeat, warm);
				error_cold = bench_l1(cold, exact, g1.n_nodes);
				error_warm = bench_l1(warm, exact, g1.n_nodes);
				printf("| %s | %s | %.0e | %d | %.1f | %d | %.1f | **%.2f** | %.2f | %.2e | %.2e%s |\n",
					   kinds[ki], pr_norm_name(norms[ni]), tols[ti], c.iterations,
					   1000.0 * c.seconds, w.iterations, 1000.0 * w.seconds,
					   (double) w.iterations / c.iterations, w.seconds / c.seconds, error_cold,
					   error_warm, error_warm > error_cold ? " (farther)" : "");
				fflush(stdout);
			}
		free(map);
		free(x_old);
		free(start);
		free(cold);
		free(warm);
		free(exact);
		free(s1);
		free(d1);
		pr_graph_free(&g0, &pr_malloc_allocator);
		pr_graph_free(&g1, &pr_malloc_allocator);
	}
	free(src);
	free(dst);
	return 0;
}
