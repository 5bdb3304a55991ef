/*
 * rwr_multi.c — RWR from k sources in one call (k columns, one pass over the edges per iteration)
 * against k single-source calls, on the CPU engine, as rwr(sources => array) runs it.
 *
 *   rwr_multi (--graph NAME | --file edges.tsv[.gz]) [--ks 1,2,4,...] [--tol X[,Y]]
 *             [--restart P] [--threads T] [--repeat R] [--seed S] [--directed] [--phases]
 *
 * The graph is built undirected (every edge both ways, as rwr(..., directed => false)) unless
 * --directed.  --graph takes a graph_gen name; the default, "ego", is an ego-Twitter-sized
 * power-law graph with locality (81,306 nodes, ~1.34 M stored edges).  The sources are 64 nodes
 * drawn with the seed's stream; a run with k sources takes the first k.
 *
 * Every call is what the SQL path does (src/functions/run.c): a new engine, pr_pagerank with a
 * restart of k columns of one node each, alpha = 1 - restart, L1 norm, check_every 1, no warm
 * start, the engine released; its time is the whole call.  For each tolerance and k the table
 * gives the one call's time and iterations (the most any batch of columns took), the k single
 * calls' total time and iterations, the ms per iteration of each (time after prepare / iterations),
 * the ratio one call / k singles, the same for CPU time (every thread's: less disturbed by other
 * load on the machine than wall time), and the largest difference between a column of the one
 * call and the same source's single call.  The one call and the k singles take turns --repeat times;
 * each call's time is its best.
 * --phases also prints, for the largest k, the time of each engine operation per iteration.
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
#include <time.h>
#include <unistd.h>

#define MAX_SOURCES 64
#define MAX_KS 16
#define MAX_TOLS 4

/* ego-Twitter's node count; with 8.25 edges per node drawn, ~1.34 M edges stored undirected. */
#define EGO_NODES 81306
#define EGO_DRAWN_EDGES 700000

/* What one call did. */
typedef struct CallResult
{
	double		seconds;		/* whole call: engine creation, prepare, iterations, release */
	double		cpu_seconds;	/* the same call's CPU time, every thread's */
	double		iterate_seconds;	/* of which after prepare */
	int			iterations;
	bool		converged;
} CallResult;

/* CPU time of the process so far, in seconds (every thread's). */
static double
cpu_clock_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

/* One RWR call over sources[0..k) on a new engine, as the SQL path makes it; scores n*k. */
static CallResult
rwr_call(const PrGraph *g, const int32_t *sources, int k, double alpha, double tol, int threads,
		 double *scores)
{
	int64_t		ptr[MAX_SOURCES + 1];
	double		weight[MAX_SOURCES];
	PrRestart	r;
	PrIterOptions o = bench_iter_options(tol, PR_NORM_L1, 1000, 1);
	PrRunStats	st;
	PrError		err;
	PrEngine   *e;
	CallResult	res;
	double		t0 = pr_clock_seconds();
	double		c0 = cpu_clock_seconds();

	memset(&r, 0, sizeof(r));
	for (int j = 0; j < k; j++)
	{
		ptr[j] = j;
		weight[j] = 1.0;
	}
	ptr[k] = k;
	r.uniform = false;
	r.k = k;
	r.ptr = ptr;
	r.node = sources;
	r.weight = weight;
	e = pr_cpu_engine_create(threads, &pr_malloc_allocator, &err);
	if (e == NULL || pr_pagerank(e, g, alpha, &r, &o, scores, &st, &err) != PR_OK)
	{
		fprintf(stderr, "rwr failed: %s\n", err.message);
		exit(1);
	}
	e->ops->release(e);
	res.seconds = pr_clock_seconds() - t0;
	res.cpu_seconds = cpu_clock_seconds() - c0;
	res.iterate_seconds = st.seconds - st.prepare_seconds;
	res.iterations = st.iterations;
	res.converged = st.converged;
	return res;
}

/* Wraps an engine and times each operation: what the driver spends per iteration, per phase. */
typedef struct TimedEngine
{
	PrEngine	base;
	PrEngine   *inner;
	PrEngineOps ops;
	double		product,
				update,
				residual;
	int			products;
} TimedEngine;

static TimedEngine *timed_self;

/* The product, timed. */
static PrStatus
timed_product(PrEngine *base, PrProduct p, int x, int y, PrError *err)
{
	TimedEngine *t = (TimedEngine *) base;
	double		t0 = pr_clock_seconds();
	PrStatus	s = t->inner->ops->product(t->inner, p, x, y, err);

	t->product += pr_clock_seconds() - t0;
	t->products++;
	return s;
}

/* The update, timed. */
static PrStatus
timed_update(PrEngine *base, int y, int x, double alpha, const PrRestart *r, PrError *err)
{
	TimedEngine *t = (TimedEngine *) base;
	double		t0 = pr_clock_seconds();
	PrStatus	s = t->inner->ops->pagerank_update(t->inner, y, x, alpha, r, err);

	t->update += pr_clock_seconds() - t0;
	return s;
}

/* The residual read, timed. */
static PrStatus
timed_residual(PrEngine *base, PrResidual *out, PrError *err)
{
	TimedEngine *t = (TimedEngine *) base;
	double		t0 = pr_clock_seconds();
	PrStatus	s = t->inner->ops->residual(t->inner, out, err);

	t->residual += pr_clock_seconds() - t0;
	return s;
}

/* Passes the other operations through. */
static PrStatus
pass_prepare(PrEngine *b, const PrGraph *g, int k, int n_slots, unsigned needs, PrError *err)
{
	return timed_self->inner->ops->prepare(timed_self->inner, g, k, n_slots, needs, err);
	(void) b;
}

static PrStatus
pass_fill(PrEngine *b, int slot, double value, PrError *err)
{
	(void) b;
	return timed_self->inner->ops->fill(timed_self->inner, slot, value, err);
}

static PrStatus
pass_download(PrEngine *b, int slot, double *host, PrError *err)
{
	(void) b;
	return timed_self->inner->ops->download(timed_self->inner, slot, host, err);
}

/* Times the phases of one k-column call: product, update (with residual partials), residual. */
static void
print_phases(const PrGraph *g, const int32_t *sources, int k, double alpha, double tol,
			 int threads, double *scores)
{
	TimedEngine t;
	int64_t		ptr[MAX_SOURCES + 1];
	double		weight[MAX_SOURCES];
	PrRestart	r;
	PrIterOptions o = bench_iter_options(tol, PR_NORM_L1, 1000, 1);
	PrRunStats	st;
	PrError		err;

	memset(&t, 0, sizeof(t));
	memset(&r, 0, sizeof(r));
	for (int j = 0; j < k; j++)
	{
		ptr[j] = j;
		weight[j] = 1.0;
	}
	ptr[k] = k;
	r.k = k;
	r.ptr = ptr;
	r.node = sources;
	r.weight = weight;
	t.inner = pr_cpu_engine_create(threads, &pr_malloc_allocator, &err);
	if (t.inner == NULL)
		exit(1);
	t.ops.name = "timed-cpu";
	t.ops.prepare = pass_prepare;
	t.ops.fill = pass_fill;
	t.ops.download = pass_download;
	t.ops.product = timed_product;
	t.ops.pagerank_update = timed_update;
	t.ops.residual = timed_residual;
	t.base.ops = &t.ops;
	timed_self = &t;
	if (pr_pagerank(&t.base, g, alpha, &r, &o, scores, &st, &err) != PR_OK)
	{
		fprintf(stderr, "rwr failed: %s\n", err.message);
		exit(1);
	}
	printf("phases, k = %d, tol %.0e: %d iterations, prepare %.2f ms; per iteration: product %.3f ms, "
		   "update %.3f ms, residual read %.4f ms\n", k, tol, st.iterations,
		   1000.0 * st.prepare_seconds, 1000.0 * t.product / st.iterations,
		   1000.0 * t.update / st.iterations, 1000.0 * t.residual / st.iterations);
	t.inner->ops->release(t.inner);
}

/* Parses the arguments, builds the graph, prints the table. */
int
main(int argc, char **argv)
{
	const char *graph = "ego";
	const char *file = NULL;
	int			ks[MAX_KS] = {1, 2, 4, 8, 16, 32, 64};
	int			n_ks = 7;
	double		tols[MAX_TOLS] = {1e-12, 1e-6};
	int			n_tols = 2;
	double		restart = 0.15;
	int			threads = 0;
	int			repeat = 3;
	uint64_t	seed = 1;
	bool		directed = false;
	bool		phases = false;
	int64_t    *src = NULL,
			   *dst = NULL;
	size_t		m;
	PrGraph		g;
	GenSpec		spec;
	PrError		err;
	PrBuildOptions bopt = {false, false, 1, NULL, NULL, NULL};
	int32_t		sources[MAX_SOURCES];
	char		label[300];
	double	   *multi,
			   *single;

	for (int i = 1; i < argc; i++)
	{
		if (bench_option_string(argc, argv, &i, "--graph", &graph) ||
			bench_option_string(argc, argv, &i, "--file", &file) ||
			bench_option_int_list(argc, argv, &i, "--ks", ks, MAX_KS, &n_ks) ||
			bench_option_double(argc, argv, &i, "--restart", &restart) ||
			bench_option_int(argc, argv, &i, "--threads", &threads) ||
			bench_option_int(argc, argv, &i, "--repeat", &repeat) ||
			bench_option_uint64(argc, argv, &i, "--seed", &seed) ||
			bench_option_double_list(argc, argv, &i, "--tol", tols, MAX_TOLS, &n_tols))
			continue;
		if (bench_flag(argv, i, "--directed"))
			directed = true;
		else if (bench_flag(argv, i, "--phases"))
			phases = true;
		else
		{
			fprintf(stderr, "usage: %s [--graph NAME | --file PATH] [--ks 1,2,..] [--tol X[,Y]] "
					"[--restart P] [--threads T] [--repeat R] [--seed S] [--directed] [--phases]\n",
					argv[0]);
			return 2;
		}
	}
	for (int i = 0; i < n_ks; i++)
		if (ks[i] < 1 || ks[i] > MAX_SOURCES)
		{
			fprintf(stderr, "every k must be in 1..%d\n", MAX_SOURCES);
			return 2;
		}
	if (threads <= 0)
		threads = (int) sysconf(_SC_NPROCESSORS_ONLN);

	if (file == NULL && strcmp(graph, "ego") == 0)
		spec = gen_local(EGO_NODES, EGO_DRAWN_EDGES, 0.9, 64, seed);
	else if (file == NULL && !gen_parse(graph, seed, &spec))
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
	bopt.undirected = !directed;
	if (pr_graph_build(src, dst, NULL, m, &bopt, &pr_malloc_allocator, &g, &err) != PR_OK)
	{
		fprintf(stderr, "build failed: %s\n", err.message);
		return 1;
	}
	free(src);
	free(dst);
	{
		uint64_t	state = seed * 7919 + 17;

		for (int j = 0; j < MAX_SOURCES; j++)
			sources[j] = (int32_t) (gen_random(&state) % (uint64_t) g.n_nodes);
	}
	multi = malloc(sizeof(double) * (size_t) g.n_nodes * MAX_SOURCES);
	single = malloc(sizeof(double) * (size_t) g.n_nodes * MAX_SOURCES);
	if (multi == NULL || single == NULL)
		return 1;

	printf("graph: %s, %s: %lld nodes, %lld stored edges\n", label,
		   directed ? "directed" : "undirected", (long long) g.n_nodes, (long long) g.n_edges);
	printf("CPU engine, %d threads, restart %.2f, L1 norm, best of %d; one call = rwr(sources => "
		   "k nodes), k singles = rwr(source) for each\n", threads, restart, repeat);
	printf("| tolerance | k | one call ms | its. | ms/it | k singles ms | its. (sum) | ms/it "
		   "| ratio | CPU ms one / singles | CPU ratio | max |one - single| |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (int ti = 0; ti < n_tols; ti++)
	{
		int			max_k = 0;

		for (int i = 0; i < n_ks; i++)
			max_k = ks[i] > max_k ? ks[i] : max_k;
		for (int i = 0; i < n_ks; i++)
		{
			int			k = ks[i];
			CallResult	one = {INFINITY, INFINITY, INFINITY, 0, false};
			CallResult	singles[MAX_SOURCES];
			double		sum_s = 0.0,
						sum_it_s = 0.0,
						worst = 0.0;
			int			sum_it = 0;

			/* the one call and the k singles take turns, so both see the same machine load */
			double		best_cpu_one = INFINITY,
						best_cpu_single[MAX_SOURCES],
						sum_cpu = 0.0;

			for (int j = 0; j < k; j++)
				singles[j].seconds = best_cpu_single[j] = INFINITY;
			for (int rep = 0; rep < repeat; rep++)
			{
				CallResult	c = rwr_call(&g, sources, k, 1.0 - restart, tols[ti], threads, multi);

				if (c.seconds < one.seconds)
					one = c;
				best_cpu_one = fmin(best_cpu_one, c.cpu_seconds);
				for (int j = 0; j < k; j++)
				{
					c = rwr_call(&g, sources + j, 1, 1.0 - restart, tols[ti], threads,
								 single + (size_t) j * (size_t) g.n_nodes);
					if (c.seconds < singles[j].seconds)
						singles[j] = c;
					best_cpu_single[j] = fmin(best_cpu_single[j], c.cpu_seconds);
				}
			}
			for (int j = 0; j < k; j++)
			{
				const double *s = single + (size_t) j * (size_t) g.n_nodes;

				for (int64_t v = 0; v < g.n_nodes; v++)
					worst = fmax(worst, fabs(multi[(size_t) v * k + j] - s[v]));
				sum_s += singles[j].seconds;
				sum_cpu += best_cpu_single[j];
				sum_it_s += singles[j].iterate_seconds;
				sum_it += singles[j].iterations;
			}
			printf("| %.0e | %d | %.1f | %d%s | %.2f | %.1f | %d | %.2f | %.2f | %.0f / %.0f | %.2f | %.1e |\n",
				   tols[ti], k, 1000.0 * one.seconds, one.iterations, one.converged ? "" : "*",
				   1000.0 * one.iterate_seconds / fmax(one.iterations, 1), 1000.0 * sum_s, sum_it,
				   1000.0 * sum_it_s / fmax(sum_it, 1), one.seconds / sum_s,
				   1000.0 * best_cpu_one, 1000.0 * sum_cpu, best_cpu_one / sum_cpu, worst);
			fflush(stdout);
		}
		if (phases)
		{
			print_phases(&g, sources, 1, 1.0 - restart, tols[ti], threads, multi);
			print_phases(&g, sources, max_k, 1.0 - restart, tols[ti], threads, multi);
		}
	}
	free(multi);
	free(single);
	pr_graph_free(&g, &pr_malloc_allocator);
	return 0;
}
