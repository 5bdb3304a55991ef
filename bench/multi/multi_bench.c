/*
 * multi_bench.c — benchmark of the multi-GPU engine (cuda/include/pr_multi.h) through the one
 * driver (core/pr_driver.h), on a generated graph (test/common/graph_gen.h).  (The streamed
 * single-GPU engine, for graphs larger than one device, is measured by bench/gpu/pr_bench --streamed.)
 *
 *   multi_bench --rmat S | --graph NAME [--order natural|bfs|shuffled] [--gpus 1,2,4]
 *               [--algos pagerank,rwr,hits] [--precisions fp64,fp32] [--iters N] [--rwr-k K]
 *               [--threads T] [--memory-mb M] [--cpu-only] [--cpu-timing]
 *
 * For each algorithm (PageRank; RWR from K = 8 sources, k = K columns; HITS), each precision and
 * each GPU count G (1: the single-GPU engine, pr_gpu.h; G > 1: pr_multi_engine_create over GPUs
 * 0 .. G-1): a fresh engine's prepare time (the first run's), ms per iteration (a run of N
 * iterations and one of 2N on the prepared engine, each less its result's download
 * (PrRunStats.result_seconds): the difference over N, so the start and the download are left out), the speedup over the first GPU count's, and the largest |difference| of
 * the scores (N iterations) from the CPU engine's after the same N iterations (fp64 within 1e-9,
 * fp32 within 1e-5 of the largest score).  Every run does exactly N iterations: the tolerance is
 * tiny and the residual is read only at the end.  A "cpu" row per algorithm gives the CPU engine's
 * reference run: its prepare and ms per iteration from that one run (start and download counted
 * in), or with --cpu-timing measured as the GPUs' are.  --cpu-only: the CPU rows alone (no GPU
 * needed).  --memory-mb M: every GPU engine may take at most M MiB of its device (PrGpuOptions'
 * memory_budget, as powerrank.gpu_memory sets it): a graph that one GPU then streams from host
 * memory may still be resident on several (their parts are smaller).  After each GPU row a "# steps"
 * line splits an iteration: its products through the engine (with the exchanges they need of
 * themselves: HITS' push reads the pull's result whole and sums; a pull product of a whole vector
 * needs none), the same products on every GPU at once without any exchange, and its vector update
 * (each step timed N times on the prepared engine, ms a step); and a "# parts" line each GPU's
 * products alone (the others idle) with the layout its part chose, and the iteration of PageRank or
 * RWR as the driver runs it (with the exchange before each product).
 *
 * The graph: "rmat:S" (R-MAT, Graph500 a=.57 b=.19 c=.19, random ids, 16 edges per node, parallel
 * edges kept: they add, the project's semantics), "er:S", "local:S..." (gen_parse), built with its
 * out-edges on every CPU.  Output: a markdown table ("| ..." lines) and "# ..." notes.  Exit 1 when
 * a run fails or a difference exceeds its bound, 2 on a bad option.
 */
#include "bench_util.h"
#include "graph_gen.h"
#include "pr_driver.h"
#include "pr_gpu.h"
#include "pr_graph.h"
#include "pr_multi.h"
#include "pr_parts.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Most GPU counts one run compares. */
#define MAX_GPU_COUNTS 16

/* Damping of every algorithm (RWR's restart probability is 1 - ALPHA). */
#define ALPHA 0.85

/* The algorithms. */
typedef enum Algo
{
	ALGO_PAGERANK = 0,
	ALGO_RWR,
	ALGO_HITS,
	N_ALGOS
} Algo;

static const char *const algo_names[N_ALGOS] = {"pagerank", "rwr", "hits"};

/* The graph and the restarts of the runs. */
typedef struct Bench
{
	PrGraph		g;
	char		label[160];
	int			iters;
	int			rwr_k;
	size_t		memory_budget;	/* bytes each GPU engine may take (0: what is free) */
	PrRestart	uniform;
	PrRestart	rwr;
	int64_t    *rwr_ptr;
	int32_t    *rwr_node;
	double	   *rwr_weight;
} Bench;

/* What one timed configuration measured. */
typedef struct Measured
{
	double		prepare_seconds;
	double		ms_per_iteration;
	const char *engine;
} Measured;

/* Columns of an algorithm's scores. */
static int
algo_columns(const Bench *b, Algo a)
{
	return a == ALGO_RWR ? b->rwr_k : 1;
}

/*
 * Runs algorithm a for exactly `iterations` iterations (tolerance tiny, one residual read at the
 * end) into scores (n * columns; HITS: the hubs, then the authorities, 2n).
 */
static PrStatus
run_fixed(PrEngine *e, const Bench *b, Algo a, int iterations, double *scores, PrRunStats *stats, PrError *err)
{
	PrIterOptions o = bench_iter_options(1e-300, PR_NORM_L1, iterations, iterations);
	PrStatus	st;

	if (a == ALGO_HITS)
		st = pr_hits(e, &b->g, &o, scores, scores + b->g.n_nodes, stats, err);
	else
		st = pr_pagerank(e, &b->g, ALPHA, a == ALGO_PAGERANK ? &b->uniform : &b->rwr, &o, scores, stats, err);
	if (st == PR_OK && stats->iterations != iterations)
		st = pr_error_set(err, PR_ERR_ENGINE, "%s stopped after %d of %d iterations", algo_names[a],
						  stats->iterations, iterations);
	return st;
}

/*
 * Measures an engine on algorithm a: the first run's prepare time, then N and 2N iterations on the
 * prepared engine (ms per iteration from their difference); scores keeps the N-iteration result.
 */
static PrStatus
measure(PrEngine *e, const Bench *b, Algo a, double *scores, double *scratch, Measured *out, PrError *err)
{
	PrRunStats	first,
				single,
				twice;
	PrStatus	st = run_fixed(e, b, a, b->iters, scores, &first, err);

	/* both buffers written once before the timed runs: a first touch of host pages is not timed */
	if (st == PR_OK)
		st = run_fixed(e, b, a, b->iters, scratch, &single, err);
	if (st == PR_OK)
		st = run_fixed(e, b, a, b->iters, scores, &single, err);
	if (st == PR_OK)
		st = run_fixed(e, b, a, 2 * b->iters, scratch, &twice, err);
	if (st != PR_OK)
		return st;
	out->prepare_seconds = first.prepare_seconds;
	/* the result's download (n x k values, a host reordering on several GPUs) varies run to run: left out */
	out->ms_per_iteration = ((twice.seconds - twice.prepare_seconds - twice.result_seconds) -
							 (single.seconds - single.prepare_seconds - single.result_seconds)) / b->iters * 1e3;
	out->engine = first.engine;
	return PR_OK;
}

/* Waits for every GPU of e (each part of a parts engine): reads each one's last residuals. */
static PrStatus
wait_all(PrEngine *e, int k, PrError *err)
{
	PrResidual *r = malloc((size_t) k * sizeof(PrResidual));
	PrStatus	st = r == NULL ? pr_error_set(err, PR_ERR_NOMEM, "out of memory") : PR_OK;
	int			parts = pr_parts_engine_is(e) ? PR_PARTS_MAX : 1;

	for (int p = 0; st == PR_OK && p < parts; p++)
	{
		PrEngine   *part = pr_parts_engine_is(e) ? pr_parts_engine_part(e, p) : e;

		if (part == NULL)
			break;
		st = part->ops->residual(part, r, err);
	}
	free(r);
	return st;
}

/* An iteration's products of an algorithm on slots 0 -> 1 (HITS: the pull, then the push 1 -> 2). */
static PrStatus
algo_products(PrEngine *e, Algo a, PrError *err)
{
	PrStatus	st = e->ops->product(e, a == ALGO_HITS ? PR_PRODUCT_PULL : PR_PRODUCT_PULL_NORMALIZED, 0, 1, err);

	if (st == PR_OK && a == ALGO_HITS)
		st = e->ops->product(e, PR_PRODUCT_PUSH, 1, 2, err);
	return st;
}

/*
 * The time of one iteration's steps on a prepared engine (after measure), N of each timed, in ms
 * a step: the products through the engine with the exchanges they need of themselves (HITS: the
 * pull and the push), the same products on every part at once without any exchange (several
 * GPUs), and the vector update (PageRank and RWR: the update; HITS: two normalisations).  Slots
 * 0..2 are overwritten.
 */
static PrStatus
breakdown(PrEngine *e, const Bench *b, Algo a, double *product_ms, double *local_ms, double *update_ms,
		  PrError *err)
{
	int			k = algo_columns(b, a);
	bool		parts = pr_parts_engine_is(e);
	double		t0;
	PrStatus	st = wait_all(e, k, err);

	*local_ms = -1.0;
	t0 = pr_clock_seconds();
	for (int i = 0; st == PR_OK && i < b->iters; i++)
		st = algo_products(e, a, err);
	if (st == PR_OK)
		st = wait_all(e, k, err);
	*product_ms = (pr_clock_seconds() - t0) * 1e3 / b->iters;
	t0 = pr_clock_seconds();
	for (int i = 0; st == PR_OK && parts && i < b->iters; i++)
		for (int p = 0; st == PR_OK && pr_parts_engine_part(e, p) != NULL; p++)
			st = algo_products(pr_parts_engine_part(e, p), a, err);
	if (st == PR_OK && parts)
	{
		st = wait_all(e, k, err);
		*local_ms = (pr_clock_seconds() - t0) * 1e3 / b->iters;
	}
	t0 = pr_clock_seconds();
	for (int i = 0; st == PR_OK && i < b->iters; i++)
	{
		if (a == ALGO_HITS)
		{
			st = e->ops->normalize(e, 1, 0, err);
			if (st == PR_OK)
				st = e->ops->normalize(e, 2, 0, err);
		}
		else
			st = e->ops->pagerank_update(e, 1, 0, ALPHA, a == ALGO_PAGERANK ? &b->uniform : &b->rwr, err);
	}
	if (st == PR_OK)
		st = wait_all(e, k, err);
	*update_ms = (pr_clock_seconds() - t0) * 1e3 / b->iters;
	return st;
}

/*
 * Each part's products alone (several GPUs: the others idle), N timed, ms a step, into part_ms
 * (PR_PARTS_MAX entries, -1 past the last part), and each part's engine name into names (its
 * layout): how evenly the split shares the products' time.  Slots 0..2 are overwritten.
 */
static PrStatus
parts_alone(PrEngine *e, const Bench *b, Algo a, double *part_ms, const char **names, PrError *err)
{
	int			k = algo_columns(b, a);
	PrResidual *r = malloc((size_t) k * sizeof(PrResidual));
	PrStatus	st = r == NULL ? pr_error_set(err, PR_ERR_NOMEM, "out of memory") : PR_OK;

	for (int p = 0; p < PR_PARTS_MAX; p++)
	{
		part_ms[p] = -1.0;
		names[p] = NULL;
	}
	for (int p = 0; st == PR_OK && pr_parts_engine_part(e, p) != NULL; p++)
	{
		PrEngine   *part = pr_parts_engine_part(e, p);
		double		t0;

		st = part->ops->residual(part, r, err);
		t0 = pr_clock_seconds();
		for (int i = 0; st == PR_OK && i < b->iters; i++)
			st = algo_products(part, a, err);
		if (st == PR_OK)
			st = part->ops->residual(part, r, err);
		part_ms[p] = (pr_clock_seconds() - t0) * 1e3 / b->iters;
		names[p] = part->ops->name;
	}
	free(r);
	return st;
}

/*
 * PageRank's or RWR's iteration as the driver runs it (the product, then the update, the two slots
 * taking turns), N timed on the prepared engine, ms an iteration: with rows owned, the exchange
 * before each product and the divided update are in it.  Slots 0 and 1 are overwritten.
 */
static PrStatus
iteration_steps(PrEngine *e, const Bench *b, Algo a, double *ms, PrError *err)
{
	int			k = algo_columns(b, a);
	double		t0;
	PrStatus	st = e->ops->fill(e, 0, 1.0 / (double) b->g.n_nodes, err);

	if (st == PR_OK)
		st = wait_all(e, k, err);
	t0 = pr_clock_seconds();
	for (int i = 0; st == PR_OK && i < b->iters; i++)
	{
		int			x = i % 2;

		st = e->ops->product(e, PR_PRODUCT_PULL_NORMALIZED, x, 1 - x, err);
		if (st == PR_OK)
			st = e->ops->pagerank_update(e, 1 - x, x, ALPHA, a == ALGO_PAGERANK ? &b->uniform : &b->rwr, err);
	}
	if (st == PR_OK)
		st = wait_all(e, k, err);
	*ms = (pr_clock_seconds() - t0) * 1e3 / b->iters;
	return st;
}

/*
 * One run of N iterations into scores, prepare included: ms per iteration from its time less the
 * prepare's (the start and the download counted in: the CPU reference without --cpu-timing).
 */
static PrStatus
run_once(PrEngine *e, const Bench *b, Algo a, double *scores, Measured *out, PrError *err)
{
	PrRunStats	stats;
	PrStatus	st = run_fixed(e, b, a, b->iters, scores, &stats, err);

	if (st != PR_OK)
		return st;
	out->prepare_seconds = stats.prepare_seconds;
	out->ms_per_iteration = (stats.seconds - stats.prepare_seconds) / b->iters * 1e3;
	out->engine = stats.engine;
	return PR_OK;
}

/* Largest |a - b| over count values, and the largest |b| into *scale. */
static double
max_abs_diff(const double *a, const double *b, int64_t count, double *scale)
{
	double		worst = 0.0;

	*scale = 0.0;
	for (int64_t i = 0; i < count; i++)
	{
		double		d = fabs(a[i] - b[i]);

		worst = d > worst || isnan(d) ? d : worst;
		*scale = fabs(b[i]) > *scale ? fabs(b[i]) : *scale;
	}
	return worst;
}

/* The RWR sources: K nodes spread over the ids (the last a dangling node when there is one). */
static bool
make_restarts(Bench *b)
{
	int64_t		n = b->g.n_nodes;

	memset(&b->uniform, 0, sizeof(b->uniform));
	b->uniform.uniform = true;
	b->uniform.k = 1;
	b->rwr_ptr = malloc((size_t) (b->rwr_k + 1) * sizeof(int64_t));
	b->rwr_node = malloc((size_t) b->rwr_k * sizeof(int32_t));
	b->rwr_weight = malloc((size_t) b->rwr_k * sizeof(double));
	if (b->rwr_ptr == NULL || b->rwr_node == NULL || b->rwr_weight == NULL || n == 0)
		return false;
	for (int j = 0; j < b->rwr_k; j++)
	{
		b->rwr_ptr[j] = j;
		b->rwr_node[j] = (int32_t) (((int64_t) (j + 1) * 2654435761LL) % n);
		b->rwr_weight[j] = 1.0;
	}
	b->rwr_ptr[b->rwr_k] = b->rwr_k;
	if (b->g.n_dangling > 0)
		b->rwr_node[b->rwr_k - 1] = b->g.dangling[0];
	memset(&b->rwr, 0, sizeof(b->rwr));
	b->rwr.k = b->rwr_k;
	b->rwr.ptr = b->rwr_ptr;
	b->rwr.node = b->rwr_node;
	b->rwr.weight = b->rwr_weight;
	return true;
}

/* Generates and builds the graph (out-edges too) of a gen_parse name. */
static bool
make_graph(const GenOptions *gopt, int threads, Bench *b)
{
	GenSpec		spec;
	int64_t    *src,
			   *dst;
	PrBuildOptions bo;
	PrError		err;
	double		t0 = pr_clock_seconds();
	bool		ok;

	if (!gen_parse(gopt->graph, GEN_BENCH_SEED, &spec))
	{
		fprintf(stderr, "unknown graph %s (rmat:S[:EF], er:S[:EF], local:S[:EF[:P_LOCAL[:WINDOW]]])\n", gopt->graph);
		return false;
	}
	gen_describe(&spec, b->label, sizeof(b->label));
	src = malloc((size_t) spec.m * sizeof(int64_t));
	dst = malloc((size_t) spec.m * sizeof(int64_t));
	if (src == NULL || dst == NULL)
	{
		fprintf(stderr, "out of memory for %lld edges\n", (long long) spec.m);
		free(src);
		free(dst);
		return false;
	}
	gen_edges(&spec, src, dst, threads);
	ok = gopt->id_order == GEN_IDS_NATURAL ||
		gen_reorder_ids(gopt->id_order, src, dst, (size_t) spec.m, GEN_BENCH_SEED);
	memset(&bo, 0, sizeof(bo));
	bo.out_edges = true;
	bo.n_threads = threads > 0 ? threads : pr_thread_count(0, PR_MAX_THREADS);
	if (ok && pr_graph_build(src, dst, NULL, (size_t) spec.m, &bo, &pr_malloc_allocator, &b->g, &err) != PR_OK)
	{
		fprintf(stderr, "pr_graph_build: %s\n", err.message);
		ok = false;
	}
	free(src);
	free(dst);
	if (ok)
		printf("# graph %s (%s): %lld nodes, %lld edges, %lld dangling, generated and built in %.1f s\n",
			   gopt->graph, b->label, (long long) b->g.n_nodes, (long long) b->g.n_edges, (long long) b->g.n_dangling,
			   pr_clock_seconds() - t0);
	return ok;
}

/* An engine for G GPUs: the single-GPU engine for 1, the multi-GPU engine otherwise. */
static PrEngine *
gpu_engine(PrMultiComms *comms, PrGpuPrecision precision, int n_gpus, size_t memory_budget, PrError *err)
{
	PrGpuOptions go;

	pr_gpu_options_init(&go);
	go.precision = precision;
	go.memory_budget = memory_budget;
	if (n_gpus == 1)
		return pr_gpu_engine_create(&go, err);
	return pr_multi_engine_create(comms, &go, n_gpus, err);
}

/* The names of the precisions (--precisions) and the engines' values for them. */
static const char *const precision_names[2] = {"fp64", "fp32"};
static const PrGpuPrecision precisions[2] = {PR_GPU_FP64, PR_GPU_FP32};

/*
 * One algorithm: the CPU engine's row (the reference scores), then each wanted precision and GPU
 * count; false when a run failed or a difference exceeds its bound.
 */
static bool
bench_algorithm(const Bench *b, Algo a, PrEngine *cpu, bool cpu_timing, PrMultiComms *comms, const int *gpus,
				int n_counts, const bool *want_precision, bool cpu_only, const char *graph)
{
	int64_t		count = b->g.n_nodes * (a == ALGO_HITS ? 2 : algo_columns(b, a));
	double	   *want = malloc((size_t) count * sizeof(double));
	double	   *got = malloc((size_t) count * sizeof(double));
	double	   *scratch = malloc((size_t) count * sizeof(double));
	bool		passed = true;
	Measured	m;
	PrError		err;

	if (want == NULL || got == NULL || scratch == NULL)
	{
		printf("# %s: out of memory for the scores\n", algo_names[a]);
		passed = false;
	}
	else if (cpu_timing ? measure(cpu, b, a, want, scratch, &m, &err) != PR_OK :
			 run_once(cpu, b, a, want, &m, &err) != PR_OK)
	{
		printf("# cpu %s failed: %s\n", algo_names[a], err.message);
		passed = false;
	}
	else
		printf("| %s | %s | fp64 | 0 | %s | %.2f | %.3f%s | | | | reference |\n", graph, algo_names[a], m.engine,
			   m.prepare_seconds, m.ms_per_iteration, cpu_timing ? "" : " (one run)");
	for (int p = 0; p < 2 && passed && !cpu_only; p++)
	{
		double		first_ms = -1.0;

		for (int c = 0; c < n_counts && want_precision[p]; c++)
		{
			PrEngine   *e = gpu_engine(comms, precisions[p], gpus[c], b->memory_budget, &err);
			double		scale,
						diff,
						bound;
			bool		ok;

			if (e == NULL || measure(e, b, a, got, scratch, &m, &err) != PR_OK)
			{
				printf("| %s | %s | %s | %d | - | | | | | | FAILED: %s |\n", graph, algo_names[a], precision_names[p],
					   gpus[c], err.message);
				passed = false;
				if (e != NULL)
					e->ops->release(e);
				continue;
			}
			diff = max_abs_diff(got, want, count, &scale);
			bound = precisions[p] == PR_GPU_FP64 ? 1e-9 : 1e-5 * scale;
			ok = diff <= bound;
			passed = passed && ok;
			if (first_ms < 0)
				first_ms = m.ms_per_iteration;
			printf("| %s | %s | %s | %d | %s | %.2f | %.3f | %.2f | %.2e | %.1e | %s |\n", graph, algo_names[a],
				   precision_names[p], gpus[c], m.engine, m.prepare_seconds, m.ms_per_iteration,
				   m.ms_per_iteration > 0 ? first_ms / m.ms_per_iteration : 0.0, diff, bound, ok ? "ok" : "EXCEEDED");
			{
				double		product_ms,
							local_ms,
							update_ms;

				if (breakdown(e, b, a, &product_ms, &local_ms, &update_ms, &err) == PR_OK)
					printf("# steps %s %s %s on %d GPU(s), ms: products %.3f (every part's at once, no exchange %.3f), %s %.3f\n",
						   graph, algo_names[a], precision_names[p], gpus[c], product_ms,
						   local_ms >= 0 ? local_ms : product_ms, a == ALGO_HITS ? "normalisations" : "update",
						   update_ms);
				else
					printf("# steps %s %s %s on %d GPU(s): %s\n", graph, algo_names[a], precision_names[p], gpus[c],
						   err.message);
			}
			if (pr_parts_engine_is(e))
			{
				double		part_ms[PR_PARTS_MAX];
				const char *names[PR_PARTS_MAX];

				PrPartsReport report;
				double		iteration_ms = -1.0;

				if (parts_alone(e, b, a, part_ms, names, &err) == PR_OK &&
					pr_parts_engine_report(e, &report, &err) == PR_OK &&
					(a == ALGO_HITS || iteration_steps(e, b, a, &iteration_ms, &err) == PR_OK))
				{
					printf("# parts %s %s %s on %d GPUs (rows owned: %s), each GPU's products alone, ms:", graph,
						   algo_names[a], precision_names[p], gpus[c], report.rows_owned ? "yes" : "no");
					for (int q = 0; q < PR_PARTS_MAX && names[q] != NULL; q++)
						printf(" %s%.3f (%s)", q > 0 ? ", " : "", part_ms[q], names[q]);
					if (iteration_ms >= 0)
						printf("; product and update as the driver runs them %.3f", iteration_ms);
					printf("; rows a part:");
					for (int q = 0; q < report.n_parts; q++)
						printf(" %lld", (long long) (report.row_begin[q + 1] - report.row_begin[q]));
					printf("; gather: %s\n", report.exchange[0] != '\0' ? report.exchange : "none yet");
				}
				else
					printf("# parts %s %s %s on %d GPUs: %s\n", graph, algo_names[a], precision_names[p], gpus[c],
						   err.message);
			}
			e->ops->release(e);
		}
	}
	free(want);
	free(got);
	free(scratch);
	return passed;
}

/* Parses a list of names into flags (want[i] for names[i]); false on an unknown name. */
static bool
parse_names(const char *text, const char *const *names, int count, bool *want)
{
	char		buf[256];

	snprintf(buf, sizeof(buf), "%s", text);
	memset(want, 0, (size_t) count * sizeof(bool));
	for (char *tok = strtok(buf, ","); tok != NULL; tok = strtok(NULL, ","))
	{
		int			i = 0;

		while (i < count && strcmp(tok, names[i]) != 0)
			i++;
		if (i == count)
			return false;
		want[i] = true;
	}
	return true;
}

/* Prints the usage and returns the exit status of a bad option. */
static int
usage(const char *prog)
{
	fprintf(stderr, "usage: %s --rmat S | --er S | --graph rmat:S|er:S[:EF]|local:S[:EF[:P[:W]]] [--order natural|bfs|shuffled]\n"
			"       [--gpus 1,2,4] [--algos pagerank,rwr,hits] [--precisions fp64,fp32] [--iters N] [--rwr-k K]\n"
			"       [--threads T] [--memory-mb M] [--cpu-only] [--cpu-timing]\n", prog);
	return 2;
}

int
main(int argc, char **argv)
{
	GenOptions	gopt;
	Bench		b;
	int			gpus[MAX_GPU_COUNTS] = {1},
				n_counts = 1,
				most = 1,
				threads = 0,
				memory_mb = 0,
				visible;
	bool		want_algo[N_ALGOS] = {true, true, true},
				want_precision[2] = {true, true},
				cpu_only = false,
				cpu_timing = false,
				failed = false;
	const char *text;
	PrMultiComms *comms = NULL;
	PrEngine   *cpu;
	PrError		err;

	setvbuf(stdout, NULL, _IOLBF, 0);	/* logs survive a command killed at its time limit */
	memset(&gopt, 0, sizeof(gopt));
	memset(&b, 0, sizeof(b));
	b.iters = 20;
	b.rwr_k = 8;
	for (int i = 1; i < argc; i++)
	{
		if (gen_take_option(argc, argv, i, &gopt) > 0)
			i++;
		else if (bench_option_int_list(argc, argv, &i, "--gpus", gpus, MAX_GPU_COUNTS, &n_counts) ||
				 bench_option_int(argc, argv, &i, "--iters", &b.iters) ||
				 bench_option_int(argc, argv, &i, "--rwr-k", &b.rwr_k) ||
				 bench_option_int(argc, argv, &i, "--threads", &threads) ||
				 bench_option_int(argc, argv, &i, "--memory-mb", &memory_mb))
			continue;
		else if (bench_option_string(argc, argv, &i, "--algos", &text))
		{
			if (!parse_names(text, algo_names, N_ALGOS, want_algo))
				return usage(argv[0]);
		}
		else if (bench_option_string(argc, argv, &i, "--precisions", &text))
		{
			if (!parse_names(text, precision_names, 2, want_precision))
				return usage(argv[0]);
		}
		else if (bench_flag(argv, i, "--cpu-only"))
			cpu_only = true;
		else if (bench_flag(argv, i, "--cpu-timing"))
			cpu_timing = true;
		else
			return usage(argv[0]);
	}
	for (int c = 0; c < n_counts; c++)
	{
		if (gpus[c] < 1)
			return usage(argv[0]);
		most = gpus[c] > most ? gpus[c] : most;
	}
	if (gopt.graph[0] == '\0' || b.iters < 1 || b.rwr_k < 1 || n_counts < 1 || memory_mb < 0)
		return usage(argv[0]);
	b.memory_budget = (size_t) memory_mb << 20;
	visible = cpu_only ? 0 : pr_gpu_device_count();
	if (!cpu_only && most > visible)
	{
		fprintf(stderr, "--gpus asks for %d GPUs, %d visible\n", most, visible);
		return 2;
	}
	if (!make_graph(&gopt, threads, &b) || !make_restarts(&b))
		return 1;
	cpu = pr_cpu_engine_create(threads, &pr_malloc_allocator, &err);
	if (cpu == NULL)
	{
		fprintf(stderr, "CPU engine: %s\n", err.message);
		return 1;
	}
	if (!cpu_only && most > 1 && (comms = pr_multi_comms_create(most, &err)) == NULL)
	{
		fprintf(stderr, "pr_multi_comms_create(%d): %s\n", most, err.message);
		return 1;
	}
	printf("# %d iterations a run; RWR from %d sources; the CPU engine on %s threads; %d GPU(s) visible\n",
		   b.iters, b.rwr_k, threads > 0 ? "the given" : "all", visible);
	printf("| graph | algorithm | precision | GPUs | engine | prepare s | ms / iteration | speedup | max abs diff to CPU | bound | check |\n");
	printf("| --- | --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- |\n");
	for (int a = 0; a < N_ALGOS; a++)
		if (want_algo[a] &&
			!bench_algorithm(&b, (Algo) a, cpu, cpu_timing, comms, gpus, n_counts, want_precision, cpu_only,
							 gopt.graph))
			failed = true;
	cpu->ops->release(cpu);
	pr_multi_comms_free(comms);
	pr_graph_free(&b.g, &pr_malloc_allocator);
	free(b.rwr_ptr);
	free(b.rwr_node);
	free(b.rwr_weight);
	printf("# %s\n", failed ? "FAILED: a run failed or a difference exceeds its bound" : "every difference within its bound");
	return failed ? 1 : 0;
}
