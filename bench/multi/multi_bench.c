/*
 * multi_bench.c — benchmark of the multi-GPU PageRank (NCCL all-gather, cuda/include/pr_multi.h)
 * on a CPU-generated R-MAT graph.  (The streamed single-GPU engine, for graphs larger than the
 * device, is measured by bench/gpu/pr_bench --streamed.)
 *
 *   multi_bench --rmat S [--gpus 1,2,4] [--kernels csr,cusparse,tiled[@G]] [--compact 1,0]
 *               [--method greedy] [--reps N] [--iters K] [--check-cpu] [--tiled-model FILE]
 *       per kernel and GPU count: partition imbalance per GPU, ms of the local product alone, of a
 *       whole PageRank iteration (product + update + all-gather + all-reduce, as pagerank runs
 *       it), the exposed exchange (iteration -
 *       product), the exchange alone, PageRank ms per iteration (K fixed iterations), parallel
 *       efficiency t1 / (G tG) against the kernel's first 1-GPU run, the L1 distance of the scores
 *       to the 1-GPU runs (and to a double-precision CPU PageRank with --check-cpu), the host
 *       preparation's steps.  "kernel@G" runs that kernel at G GPUs only.  tiled = the single-GPU
 *       engine's tile-composite kernels on each GPU's rows (a fixed layout, or the choice of the
 *       model in FILE with --tiled-model); its column gather is timed alone too ("# tiled" notes).
 *   multi_bench --prep-only --rmat S [--gpus ..] [--kernels ..]
 *       the host preparation of each configuration alone, step by step (no GPU needed).
 *
 * R-MAT: gen_rmat of test/common/graph_gen.h (Graph500 a=.57 b=.19 c=.19, random ids), 16 edges
 * per node, generated on every CPU; parallel edges kept (they add, the project's semantics), so m = 16 * 2^S exactly.
 * Output: markdown tables ("| ..." lines) and "# ..." notes.  Exit 1 when a check fails.
 */
#include "bench_util.h"
#include "pr_multi.h"
#include "pr_partition.h"
#include "pr_plan.h"
#include "graph_gen.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The graph: in-edge CSR (rows = destinations) and out-degrees. */
typedef struct Graph
{
	int64_t		n,
				m;
	int64_t    *ptr;
	int32_t    *col;
	double	   *out_strength;
} Graph;

/* Shared state of the threaded CSR build (make_rmat). */
typedef struct CsrBuild
{
	const int32_t *src,
			   *dst;
	Graph	   *g;
	int64_t    *count;			/* [n + 1]: in-degree of row r at count[r + 1], then the fill cursor */
	int64_t    *outdeg;			/* [n] */
	int			pass;			/* 0: count, 1: fill, 2: sort rows, 3: out_strength */
	int			T;
} CsrBuild;

typedef struct CsrTask
{
	CsrBuild   *b;
	int			t;
} CsrTask;

/* Ascending int32 (qsort). */
static int
cmp_i32(const void *a, const void *b)
{
	int32_t		x = *(const int32_t *) a,
				y = *(const int32_t *) b;

	return (x > y) - (x < y);
}

/*
 * Thread t's share of one pass of the CSR build: counts (atomic adds: the sums do not depend on
 * the order), the fill (atomic cursors: an order inside a row that varies run to run), each row
 * sorted (which makes the CSR the same whatever the fill order) or the out-strengths.
 */
static void *
csr_pass(void *p)
{
	CsrTask    *a = p;
	CsrBuild   *b = a->b;
	Graph	   *g = b->g;
	int64_t		eb = g->m * a->t / b->T,
				ee = g->m * (a->t + 1) / b->T,
				rb = g->n * a->t / b->T,
				re = g->n * (a->t + 1) / b->T;

	if (b->pass == 0)
		for (int64_t e = eb; e < ee; e++)
		{
			__atomic_fetch_add(&b->count[b->dst[e] + 1], 1, __ATOMIC_RELAXED);
			__atomic_fetch_add(&b->outdeg[b->src[e]], 1, __ATOMIC_RELAXED);
		}
	else if (b->pass == 1)
		for (int64_t e = eb; e < ee; e++)
			g->col[__atomic_fetch_add(&b->count[b->dst[e]], 1, __ATOMIC_RELAXED)] = b->src[e];
	else if (b->pass == 2)
		for (int64_t r = rb; r < re; r++)
		{
			int32_t    *c = g->col + g->ptr[r];
			int64_t		len = g->ptr[r + 1] - g->ptr[r];

			if (len > 32)
				qsort(c, (size_t) len, sizeof(int32_t), cmp_i32);
			else
				for (int64_t i = 1; i < len; i++)
				{
					int32_t		v = c[i];
					int64_t		j = i - 1;

					for (; j >= 0 && c[j] > v; j--)
						c[j + 1] = c[j];
					c[j + 1] = v;
				}
		}
	else
		for (int64_t r = rb; r < re; r++)
			g->out_strength[r] = (double) b->outdeg[r];
	return NULL;
}

/* Runs one pass of the CSR build on b->T threads. */
static void
csr_run_pass(CsrBuild *b, int pass)
{
	pthread_t	th[256];
	CsrTask		args[256];

	b->pass = pass;
	for (int t = 0; t < b->T; t++)
	{
		args[t] = (CsrTask) {b, t};
		if (pthread_create(&th[t], NULL, csr_pass, &args[t]) != 0)
		{
			fprintf(stderr, "cannot start a thread\n");
			exit(2);
		}
	}
	for (int t = 0; t < b->T; t++)
		pthread_join(th[t], NULL);
}

/*
 * Generates R-MAT scale S on all CPUs and builds the CSR (rows = destinations, each row's sources
 * ascending) by a threaded counting sort.
 */
static void
make_rmat(int scale, Graph *g)
{
	int			T = (int) sysconf(_SC_NPROCESSORS_ONLN);
	GenSpec		spec;
	int32_t    *src,
			   *dst;
	int64_t    *outdeg;
	double		t0 = pr_clock_seconds(),
				t_gen;
	CsrBuild	b;

	if (T > 256)
		T = 256;
	if (T < 1)
		T = 1;
	g->n = (int64_t) 1 << scale;
	g->m = 16 * g->n;
	src = malloc((size_t) g->m * sizeof(int32_t));
	dst = malloc((size_t) g->m * sizeof(int32_t));
	g->ptr = calloc((size_t) g->n + 1, sizeof(int64_t));
	g->col = malloc((size_t) g->m * sizeof(int32_t));
	g->out_strength = calloc((size_t) g->n, sizeof(double));
	outdeg = calloc((size_t) g->n + 1, sizeof(int64_t));
	if (!src || !dst || !g->ptr || !g->col || !g->out_strength || !outdeg)
	{
		fprintf(stderr, "out of memory for R-MAT %d\n", scale);
		exit(2);
	}
	spec = gen_rmat(scale, g->m, 0x5eed, true);
	gen_edges32(&spec, src, dst, T);
	t_gen = pr_clock_seconds() - t0;
	b = (CsrBuild) {src, dst, g, g->ptr, outdeg, 0, T};
	csr_run_pass(&b, 0);		/* ptr[r + 1] = in-degree of r, outdeg */
	for (int64_t r = 0; r < g->n; r++)
		g->ptr[r + 1] += g->ptr[r];
	{
		/* fill with a cursor per row: a copy of ptr, advanced atomically */
		int64_t    *cur = malloc(((size_t) g->n + 1) * sizeof(int64_t));

		if (cur == NULL)
		{
			fprintf(stderr, "out of memory for R-MAT %d\n", scale);
			exit(2);
		}
		memcpy(cur, g->ptr, ((size_t) g->n + 1) * sizeof(int64_t));
		b.count = cur;
		csr_run_pass(&b, 1);
		free(cur);
	}
	csr_run_pass(&b, 2);
	csr_run_pass(&b, 3);
	free(src);
	free(dst);
	free(outdeg);
	printf("# R-MAT scale %d: %lld nodes, %lld edges, generated in %.1f s + CSR in %.1f s on %d threads\n", scale,
		   (long long) g->n, (long long) g->m, t_gen, pr_clock_seconds() - t0 - t_gen, T);
}

/* Double-precision CPU PageRank, iters fixed iterations (the reference). */
static void
cpu_pagerank(const Graph *g, double alpha, int iters, double *x)
{
	double	   *y = malloc((size_t) g->n * sizeof(double));

	for (int64_t v = 0; v < g->n; v++)
		x[v] = 1.0 / (double) g->n;
	for (int it = 0; it < iters; it++)
	{
		double		d = 0;

		for (int64_t v = 0; v < g->n; v++)
			if (g->out_strength[v] == 0)
				d += x[v];
		for (int64_t r = 0; r < g->n; r++)
		{
			double		s = 0;

			for (int64_t e = g->ptr[r]; e < g->ptr[r + 1]; e++)
				s += x[g->col[e]] / g->out_strength[g->col[e]];
			y[r] = alpha * s + (alpha * d + 1.0 - alpha) / (double) g->n;
		}
		memcpy(x, y, (size_t) g->n * sizeof(double));
	}
	free(y);
}

/* Whether an L1 distance (-1: not measured) fails the check: over 1e-5, or not a number. */
static bool
l1_bad(double d)
{
	return d != -1 && !(d <= 1e-5);
}

/* One entry of --kernels: a kernel, optionally restricted to one GPU count ("cusparse@4"). */
typedef struct KernelSpec
{
	PrMultiKernel kernel;
	const char *name;
	int			only_gpus;		/* 0: every GPU count of --gpus */
} KernelSpec;

/* Parses "tiled,csr,cusparse@4" into specs; returns the count, -1 on an unknown name. */
static int
parse_kernels(const char *text, KernelSpec *specs, int max)
{
	static const char *names[] = {"csr", "cusparse", "tiled"};
	static const PrMultiKernel kinds[] = {PR_MULTI_KERNEL_CSR, PR_MULTI_KERNEL_CUSPARSE, PR_MULTI_KERNEL_TILED};
	int			k = 0;

	for (const char *p = text; *p && k < max;)
	{
		size_t		len = strcspn(p, ",");
		size_t		name_len = strcspn(p, ",@");
		bool		found = false;

		for (int i = 0; i < 3; i++)
			if (name_len == strlen(names[i]) && strncmp(p, names[i], name_len) == 0)
			{
				specs[k] = (KernelSpec) {kinds[i], names[i], name_len < len ? atoi(p + name_len + 1) : 0};
				found = true;
			}
		if (!found)
			return -1;
		k++;
		p += len + (p[len] == ',');
	}
	return k;
}

/*
 * --prep-only: the host preparation of every configuration (kernel x GPU count) timed step by
 * step, no GPU needed (pr_multi_host_prepare).
 */
static int
run_prep_only(const Graph *g, const int *gpus, int n_gpus, const KernelSpec *specs, int n_specs,
			  PrPartitionMethod method)
{
	int			failures = 0;

	printf("# host preparation only (no GPU): %ld CPUs\n", sysconf(_SC_NPROCESSORS_ONLN));
	printf("| gpus | kernel | partition s | local CSRs s | relabel + plans s | total s | GPU edge / row imb | columns read (GPU 0) |\n");
	printf("| --- | --- | --- | --- | --- | --- | --- | --- |\n");
	for (int k = 0; k < n_specs; k++)
		for (int i = 0; i < n_gpus; i++)
		{
			PrMultiOptions opt;
			PrMultiHostTimes t;
			PrError		err;

			if (specs[k].only_gpus > 0 && gpus[i] != specs[k].only_gpus)
				continue;
			pr_multi_options_init(&opt);
			opt.precision = PR_MULTI_FP32;	/* the benchmark's figures are fp32 */
			opt.n_gpus = gpus[i];
			opt.kernel = specs[k].kernel;
			opt.method = method;
			if (pr_multi_host_prepare(&opt, g->n, g->ptr, g->col, NULL, g->out_strength, &t, &err) != PR_OK)
			{
				printf("# %d GPUs %s: FAILED: %s\n", gpus[i], specs[k].name, err.message);
				failures++;
				continue;
			}
			printf("| %d | %s | %.2f | %.2f | %.2f | %.2f | %.4f / %.4f | %lld |\n", gpus[i],
				   specs[k].name, t.partition_seconds, t.csr_seconds, t.plan_seconds, t.total_seconds,
				   t.edge_imbalance, t.row_imbalance, (long long) t.cols[0]);
		}
	return failures;
}

/*
 * The multi-GPU mode: for each kernel, each compact-exchange setting, each GPU count.
 * Efficiency is against the kernel's first 1-GPU run.
 */
static int
run_multi(const Graph *g, const int *gpus, int n_gpus, const KernelSpec *specs, int n_specs,
		  const int *compacts, int n_compacts, PrPartitionMethod method,
		  int reps, int iters, bool check_cpu, const PrModel *tiled_model)
{
	int			visible = pr_multi_device_count();
	double	   *ref = NULL,
			   *cpu = NULL,
			   *scores = malloc((size_t) g->n * sizeof(double));
	int			failures = 0,
				runs = 0;
	const char *ref_kernel = NULL;

	printf("# visible GPUs: %d; PageRank: %d fixed iterations, alpha 0.85\n", visible, iters);
	if (check_cpu)
	{
		double		t0 = pr_clock_seconds();

		cpu = malloc((size_t) g->n * sizeof(double));
		cpu_pagerank(g, 0.85, iters, cpu);
		printf("# CPU reference (fp64, one thread): %.1f s\n", pr_clock_seconds() - t0);
	}
	printf("# columns: product = the local product alone (no update, no exchange); iteration = a timed PageRank\n"
		   "# iteration as pagerank runs it (product + update + all-gather + all-reduce); exposed = iteration - product;\n"
		   "# exchange = the all-gather + all-reduce alone; efficiency = the kernel's first 1-GPU iteration\n"
		   "# / (G x iteration); L1 vs the same kernel's first 1-GPU scores, vs the first 1-GPU run's, vs the CPU; host s = partition +\n"
		   "# local CSRs + relabel/plans\n");
	printf("| gpus | kernel | method | GPU edge / row imb | product ms | iteration ms | exposed ms | exchange ms | pagerank ms/it | efficiency | L1 vs 1-GPU same kernel | L1 vs 1-GPU first kernel | L1 vs CPU | GiB/GPU | host s (partition / CSRs / plans) | upload s |\n");
	printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
	for (int k = 0; k < n_specs; k++)
	{
		const char *kname = specs[k].name;
		PrMultiKernel kernel = specs[k].kernel;
		double		t1 = -1;
		double	   *ref1 = NULL;	/* this kernel's 1-GPU scores */

		for (int cx = 0; cx < n_compacts; cx++)
			for (int i = 0; i < n_gpus; i++)
			{
				PrMultiOptions opt;
				PrMulti    *m;
				PrMultiReport rep;
				PrMultiRun	run;
				PrError		err;
				double		prod_ms = 0,
							it_ms = 0,
							d_ref = -1,
							d_own = -1,
							d_cpu = -1;
				size_t		max_bytes = 0;

				if (specs[k].only_gpus > 0 && gpus[i] != specs[k].only_gpus)
					continue;
				if (cx > 0 && kernel != PR_MULTI_KERNEL_TILED)
					continue;	/* the compact exchange applies to tiled only */
				if (gpus[i] > visible)
				{
					printf("# %d GPUs: skipped (%d visible)\n", gpus[i], visible);
					continue;
				}
				pr_multi_options_init(&opt);
				opt.precision = PR_MULTI_FP32;	/* the benchmark's figures are fp32 */
				opt.n_gpus = gpus[i];
				opt.kernel = kernel;
				opt.method = method;
				opt.compact_exchange = compacts[cx] != 0;
				opt.check_every = iters + 1;	/* fixed iterations: no residual reads in between */
				opt.tiled_model = tiled_model;
				m = pr_multi_create(&opt, &err);
				if (m == NULL || pr_multi_prepare(m, g->n, g->ptr, g->col, NULL, g->out_strength, &err) != PR_OK ||
					pr_multi_time(m, reps, &prod_ms, &it_ms, &err) != PR_OK ||
					pr_multi_report(m, &rep, &err) != PR_OK ||	/* after the timing: gather and exchange ms */
					pr_multi_pagerank(m, 0.85, 0.0, iters, scores, &run, &err) != PR_OK)
				{
					printf("# %d GPUs %s: FAILED: %s\n", gpus[i], kname, err.message);
					failures++;
					pr_multi_free(m);
					continue;
				}
				if (runs == 0)
					printf("# device %s, NCCL %s\n", rep.device, rep.nccl_version);
				for (int q = 0; q < rep.n_gpus; q++)
					if (rep.device_bytes[q] > max_bytes)
						max_bytes = rep.device_bytes[q];
				if (gpus[i] == 1 && t1 < 0)
					t1 = it_ms;
				if (ref == NULL && gpus[i] == 1)
				{
					ref = malloc((size_t) g->n * sizeof(double));
					memcpy(ref, scores, (size_t) g->n * sizeof(double));
					ref_kernel = kname;
				}
				if (ref1 == NULL && gpus[i] == 1)
				{
					ref1 = malloc((size_t) g->n * sizeof(double));
					memcpy(ref1, scores, (size_t) g->n * sizeof(double));
				}
				if (ref)
					d_ref = bench_l1(scores, ref, g->n);
				if (ref1)
					d_own = bench_l1(scores, ref1, g->n);
				if (cpu)
					d_cpu = bench_l1(scores, cpu, g->n);
				if (l1_bad(d_ref) || l1_bad(d_own) || l1_bad(d_cpu))
					failures++;
				printf("| %d | %s | %s | %.4f / %.4f | %.3f | %.3f | %.3f | %.3f | %.3f | %s%.1f%% | %.2e | %.2e | %.2e | %.2f | %.1f (%.1f / %.1f / %.1f) | %.1f |\n",
					   rep.n_gpus, kname, rep.method, rep.edge_imbalance, rep.row_imbalance, prod_ms, it_ms, it_ms - prod_ms, rep.exchange_ms,
					   run.seconds * 1e3 / run.iterations, t1 > 0 ? "" : "n/a ",
					   t1 > 0 ? 100.0 * t1 / (rep.n_gpus * it_ms) : 0.0, d_own, d_ref, d_cpu,
					   (double) max_bytes / (1 << 30), rep.partition_seconds, rep.host_partition_seconds,
					   rep.host_csr_seconds, rep.host_plan_seconds, rep.upload_seconds);
				printf("# exchange: %lld values per GPU per iteration (%s; %lld slots per GPU)\n",
					   (long long) rep.exchange_count,
					   rep.exchange_count < rep.stride ? "compact: the read slots, packed" : "every slot",
					   (long long) rep.stride);
				if (kernel == PR_MULTI_KERNEL_TILED)
				{
					int64_t		cols = 0;

					for (int q = 0; q < rep.n_gpus; q++)
						cols = rep.cols[q] > cols ? rep.cols[q] : cols;
					printf("# tiled %d GPU(s): column gather %.3f ms per iteration (%.1f%% of the product), at most %lld of %lld slots read by a GPU; GPU 0: %s\n",
						   rep.n_gpus, rep.gather_ms, prod_ms > 0 ? 100.0 * rep.gather_ms / prod_ms : 0.0,
						   (long long) cols, (long long) (rep.stride * rep.n_gpus), rep.layout);
				}
				fflush(stdout);
				runs++;
				pr_multi_free(m);
			}
		free(ref1);
	}
	if (ref_kernel != NULL)
		printf("# the first 1-GPU run (column \"first kernel\"): %s\n", ref_kernel);
	free(ref);
	free(cpu);
	free(scores);
	if (runs == 0)
	{
		printf("# no run: no GPU count of the list is available\n");
		failures++;
	}
	return failures;
}

/* Parses the options and runs a mode. */
int
main(int argc, char **argv)
{
	int			scale = 20,
				reps = 20,
				iters = 20,
				n_gpus = 3,
				gpus[16] = {1, 2, 4};
	const char *kernels = "csr,cusparse";
	int			compacts[16] = {1},
				n_compacts = 1;
	bool		prep_only = false;
	const char *model_path = NULL;
	PrModel		model;
	PrPartitionMethod method = PR_PARTITION_GREEDY;
	bool		check_cpu = false;
	Graph		g;
	int			failures;
	KernelSpec	specs[16];
	int			n_specs;

	for (int i = 1; i < argc; i++)
	{
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (bench_option_int(argc, argv, &i, "--rmat", &scale) ||
			bench_option_int(argc, argv, &i, "--reps", &reps) ||
			bench_option_int(argc, argv, &i, "--iters", &iters) ||
			bench_option_string(argc, argv, &i, "--kernels", &kernels) ||
			bench_option_string(argc, argv, &i, "--kernel", &kernels) ||
			bench_option_string(argc, argv, &i, "--tiled-model", &model_path) ||
			bench_option_int_list(argc, argv, &i, "--gpus", gpus, 16, &n_gpus) ||
			bench_option_int_list(argc, argv, &i, "--compact", compacts, 16, &n_compacts))
			continue;
		if (bench_flag(argv, i, "--prep-only"))
			prep_only = true;
		else if (!strcmp(a, "--method") && v)
		{
			if (!pr_partition_method_parse(argv[++i], &method))
			{
				fprintf(stderr, "unknown method %s\n", argv[i]);
				return 2;
			}
		}
		else if (bench_flag(argv, i, "--check-cpu"))
			check_cpu = true;
		else
		{
			fprintf(stderr, "usage: %s --rmat S [--gpus 1,2,4] [--kernels csr,cusparse,tiled] [--method greedy|snake|ranges] "
					"[--compact 1,0] [--reps N] [--iters K] [--check-cpu] [--tiled-model FILE] [--prep-only]\n", argv[0]);
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (model_path != NULL)
	{
		char	   *text = bench_read_file(model_path);
		PrError		err;
		bool		parsed = text != NULL && pr_model_parse(text, &model, &err) == PR_OK;

		free(text);
		if (!parsed)
		{
			fprintf(stderr, "cannot read the model %s\n", model_path);
			return 2;
		}
	}
	n_specs = parse_kernels(kernels, specs, 16);
	if (n_specs < 1)
	{
		fprintf(stderr, "unknown kernel in %s (csr, cusparse, tiled, each optionally @GPUS)\n", kernels);
		return 2;
	}
	make_rmat(scale, &g);
	if (prep_only)
		failures = run_prep_only(&g, gpus, n_gpus, specs, n_specs, method);
	else
		failures = run_multi(&g, gpus, n_gpus, specs, n_specs, compacts, n_compacts, method, reps, iters, check_cpu,
							 model_path ? &model : NULL);
	printf("# %s\n", failures == 0 ? "all checks passed" : "CHECKS FAILED");
	free(g.ptr);
	free(g.col);
	free(g.out_strength);
	return failures == 0 ? 0 : 1;
}
