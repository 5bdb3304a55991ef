/*
 * multi_bench.c — benchmark of the multi-GPU PageRank (NCCL all-gather) and of the streamed
 * single-GPU product (cuda/pr_multi.h), on a CPU-generated R-MAT graph.
 *
 *   multi_bench --rmat S [--gpus 1,2,4] [--kernels csr,cusparse,tiled] [--method greedy] [--reps N]
 *               [--iters K] [--check-cpu] [--tiled-model FILE]
 *       per GPU count and kernel: partition imbalance, ms of the local product alone and of
 *       product + all-gather, PageRank ms per iteration (K fixed iterations), parallel efficiency
 *       t1 / (G tG) against the 1-GPU run of the same kernel, and the L1 distance of the scores to
 *       the 1-GPU CSR run (and to a double-precision CPU PageRank with --check-cpu).  tiled = the
 *       single-GPU engine's tile-composite kernels on each part (a fixed layout, or the choice of
 *       the model in FILE with --tiled-model); its column gather is timed alone too ("# tiled" notes).
 *   multi_bench --stream --rmat S [--budget-frac F | --budget-mb M] [--pinned-mb P] [--reps N]
 *       block plan for a device budget of F x the matrix bytes (default 0.4: the graph is 2.5x
 *       the budget), streamed product vs the resident product of the same kernel (the results
 *       must be the same bits), achieved host->device bandwidth vs one plain pinned cudaMemcpy of
 *       the same bytes.
 *
 * R-MAT: Graph500 a=.57 b=.19 c=.19, 16 edges per node, ids scrambled by a bijection; parallel
 * edges kept (they add, the project's semantics), so m = 16 * 2^S exactly.
 * Output: markdown tables ("| ..." lines) and "# ..." notes.  Exit 1 when a check fails.
 */
#include "pr_multi.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* splitmix64 finaliser. */
static uint64_t
mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

typedef struct GenArgs
{
	int			scale;
	int64_t		begin,
				end;
	int32_t    *src,
			   *dst;
} GenArgs;

/* Edges [begin, end) of the R-MAT graph, ids scrambled by v -> (v * odd + c) mod 2^scale. */
static void *
gen_edges(void *p)
{
	GenArgs    *a = p;
	uint64_t	mask = ((uint64_t) 1 << a->scale) - 1;

	for (int64_t i = a->begin; i < a->end; i++)
	{
		uint64_t	s = mix64(0x5eed + (uint64_t) i * 0x9e3779b97f4a7c15ULL);
		uint64_t	u = 0,
					v = 0;

		for (int level = 0; level < a->scale; level++)
		{
			double		pr;
			int			bu = 0,
						bv = 0;

			s = mix64(s);
			pr = (double) (s >> 11) * (1.0 / 9007199254740992.0);
			if (pr >= 0.57 && pr < 0.76)
				bv = 1;
			else if (pr >= 0.76 && pr < 0.95)
				bu = 1;
			else if (pr >= 0.95)
				bu = bv = 1;
			u = (u << 1) | (uint64_t) bu;
			v = (v << 1) | (uint64_t) bv;
		}
		a->src[i] = (int32_t) ((u * 0x9e3779b1ULL + 12345) & mask);
		a->dst[i] = (int32_t) ((v * 0x9e3779b1ULL + 12345) & mask);
	}
	return NULL;
}

/* The graph: in-edge CSR (rows = destinations) and out-degrees. */
typedef struct Graph
{
	int64_t		n,
				m;
	int64_t    *ptr;
	int32_t    *col;
	double	   *out_strength;
} Graph;

/* Generates R-MAT scale S on all CPUs and builds the CSR by a counting sort. */
static void
make_rmat(int scale, Graph *g)
{
	int			T = (int) sysconf(_SC_NPROCESSORS_ONLN);
	pthread_t	th[256];
	GenArgs		args[256];
	int32_t    *src,
			   *dst;
	int64_t    *cur;
	double		t0 = pr_clock_seconds();

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
	cur = malloc(((size_t) g->n + 1) * sizeof(int64_t));
	if (!src || !dst || !g->ptr || !g->col || !g->out_strength || !cur)
	{
		fprintf(stderr, "out of memory for R-MAT %d\n", scale);
		exit(2);
	}
	for (int t = 0; t < T; t++)
	{
		args[t] = (GenArgs) {scale, g->m * t / T, g->m * (t + 1) / T, src, dst};
		pthread_create(&th[t], NULL, gen_edges, &args[t]);
	}
	for (int t = 0; t < T; t++)
		pthread_join(th[t], NULL);
	for (int64_t e = 0; e < g->m; e++)
	{
		g->ptr[dst[e] + 1]++;
		g->out_strength[src[e]] += 1.0;
	}
	for (int64_t r = 0; r < g->n; r++)
		g->ptr[r + 1] += g->ptr[r];
	memcpy(cur, g->ptr, (size_t) g->n * sizeof(int64_t));
	for (int64_t e = 0; e < g->m; e++)
		g->col[cur[dst[e]]++] = src[e];
	free(src);
	free(dst);
	free(cur);
	printf("# R-MAT scale %d: %lld nodes, %lld edges, generated + CSR in %.1f s on %d threads\n", scale,
		   (long long) g->n, (long long) g->m, pr_clock_seconds() - t0, T);
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

/* L1 distance. */
static double
l1(const double *a, const double *b, int64_t n)
{
	double		s = 0;

	for (int64_t i = 0; i < n; i++)
		s += fabs(a[i] - b[i]);
	return s;
}

/* Parses "1,2,4" into out[]; returns the count. */
static int
parse_list(const char *text, int *out, int max)
{
	int			k = 0;
	const char *p = text;

	while (*p && k < max)
	{
		out[k++] = atoi(p);
		p = strchr(p, ',');
		if (!p)
			break;
		p++;
	}
	return k;
}

/* The multi-GPU mode. */
static int
run_multi(const Graph *g, const int *gpus, int n_gpus, const char *kernels, PrPartitionMethod method,
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
	printf("# L1 columns: vs the same kernel's 1-GPU scores, vs the first 1-GPU run's (the first kernel of the list)\n");
	printf("| gpus | kernel | method | edge imb | row imb | product ms | product+allgather ms | pagerank ms/it | efficiency | L1 vs 1-GPU same kernel | L1 vs 1-GPU first kernel | L1 vs CPU | GiB/GPU | partition s |\n");
	printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
	for (const char *kp = kernels; *kp;)
	{
		/* the kernels in the order of the list */
		size_t		klen = strcspn(kp, ",");
		PrMultiKernel kernel = !strncmp(kp, "csr", klen) && klen == 3 ? PR_MULTI_KERNEL_CSR :
			!strncmp(kp, "cusparse", klen) && klen == 8 ? PR_MULTI_KERNEL_CUSPARSE : PR_MULTI_KERNEL_TILED;
		const char *kname = kernel == PR_MULTI_KERNEL_CSR ? "csr" : kernel == PR_MULTI_KERNEL_CUSPARSE ? "cusparse" : "tiled";
		double		t1 = -1;
		double	   *ref1 = NULL;	/* this kernel's 1-GPU scores */
		bool		known = klen == strlen(kname) && !strncmp(kp, kname, klen);

		kp += klen + (kp[klen] == ',');
		if (!known)
		{
			printf("# unknown kernel in %s (csr, cusparse, tiled)\n", kernels);
			failures++;
			continue;
		}
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

			if (gpus[i] > visible)
			{
				printf("# %d GPUs: skipped (%d visible)\n", gpus[i], visible);
				continue;
			}
			pr_multi_options_init(&opt);
			opt.n_gpus = gpus[i];
			opt.kernel = kernel;
			opt.method = method;
			opt.check_every = iters + 1;	/* fixed iterations: no residual reads in between */
			opt.tiled_model = tiled_model;
			m = pr_multi_create(&opt, &err);
			if (m == NULL || pr_multi_prepare(m, g->n, g->ptr, g->col, NULL, g->out_strength, &err) != PR_OK ||
				pr_multi_report(m, &rep, &err) != PR_OK ||
				pr_multi_time(m, reps, &prod_ms, &it_ms, &err) != PR_OK ||
				pr_multi_report(m, &rep, &err) != PR_OK ||	/* again: the gather time */
				pr_multi_pagerank(m, 0.85, 0.0, iters, scores, &run, &err) != PR_OK)
			{
				printf("# %d GPUs %s: FAILED: %s\n", gpus[i], kname, err.message);
				failures++;
				pr_multi_free(m);
				continue;
			}
			if (i == 0 || gpus[i] == 1)
				printf("# device %s, NCCL %s\n", rep.device, rep.nccl_version);
			for (int k = 0; k < rep.n_gpus; k++)
				if (rep.device_bytes[k] > max_bytes)
					max_bytes = rep.device_bytes[k];
			if (gpus[i] == 1)
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
				d_ref = l1(scores, ref, g->n);
			if (ref1)
				d_own = l1(scores, ref1, g->n);
			if (cpu)
				d_cpu = l1(scores, cpu, g->n);
			if ((d_ref > 1e-5) || (d_own > 1e-5) || (d_cpu > 1e-5))
				failures++;
			printf("| %d | %s | %s | %.4f | %.4f | %.3f | %.3f | %.3f | %s%.1f%% | %.2e | %.2e | %.2e | %.2f | %.1f |\n",
				   rep.n_gpus, kname, rep.method, rep.edge_imbalance, rep.row_imbalance, prod_ms, it_ms,
				   run.seconds * 1e3 / run.iterations, t1 > 0 ? "" : "n/a ",
				   t1 > 0 ? 100.0 * t1 / (rep.n_gpus * it_ms) : 0.0, d_own, d_ref, d_cpu,
				   (double) max_bytes / (1 << 30), rep.partition_seconds);
			if (kernel == PR_MULTI_KERNEL_TILED)
			{
				int64_t		cols = 0;

				for (int k = 0; k < rep.n_gpus; k++)
					cols = rep.cols[k] > cols ? rep.cols[k] : cols;
				printf("# tiled %d GPU(s): column gather %.3f ms per product (%.1f%% of the product), at most %lld of %lld slots read by a GPU; GPU 0: %s; plan + partition %.1f s\n",
					   rep.n_gpus, rep.gather_ms, prod_ms > 0 ? 100.0 * rep.gather_ms / prod_ms : 0.0,
					   (long long) cols, (long long) (rep.stride * rep.n_gpus), rep.layout, rep.partition_seconds);
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

/* Plans the streamed product for prm and sets it up with x; NULL (after a message) on failure. */
static PrStreamed *
plan_streamed(const Graph *g, const float *val, const float *x, const PrStreamParams *prm,
			  PrStreamPlan *plan)
{
	PrStreamed *s;
	PrError		err;

	if (pr_stream_plan(g->n, g->ptr, prm, &pr_malloc_allocator, plan, &err) != PR_OK)
	{
		printf("# plan FAILED: %s\n", err.message);
		return NULL;
	}
	s = pr_streamed_create(0, g->n, g->ptr, g->col, val, plan, &err);
	if (s == NULL || pr_streamed_set_x(s, x, &err) != PR_OK)
	{
		printf("# streamed setup FAILED: %s\n", err.message);
		return NULL;
	}
	return s;
}

/*
 * Runs product reps + 1 times (the first is warm-up) and copies its result into y; returns the
 * best time in ms, or -1 (after a message) on failure.
 */
static double
best_product_ms(PrStreamed *s, PrStatus (*product) (PrStreamed *, double *, PrError *),
				const char *what, int reps, float *y)
{
	double		best = 1e30;
	PrError		err;

	for (int r = 0; r < reps + 1; r++)
	{
		double		ms;

		if (product(s, &ms, &err) != PR_OK)
		{
			printf("# %s product FAILED: %s\n", what, err.message);
			return -1;
		}
		if (r > 0 && ms < best)
			best = ms;
	}
	if (pr_streamed_get_y(s, y, &err) != PR_OK)
	{
		printf("# %s result copy FAILED: %s\n", what, err.message);
		return -1;
	}
	return best;
}

/* The streamed mode. */
static int
run_stream(const Graph *g, double budget_frac, double budget_mb, double pinned_mb, int reps)
{
	PrStreamParams prm;
	PrStreamPlan plan;
	PrStreamedReport rep;
	PrStreamed *s;
	PrError		err;
	float	   *val = malloc((size_t) g->m * sizeof(float));
	float	   *x = malloc((size_t) g->n * sizeof(float));
	float	   *y_res = malloc((size_t) g->n * sizeof(float));
	float	   *y_str = malloc((size_t) g->n * sizeof(float));
	size_t		whole;
	double		copy_ms,
				res_ms,
				str_ms,
				plain_ms;
	int64_t		diff = 0;

	for (int64_t e = 0; e < g->m; e++)
		val[e] = (float) (1.0 / g->out_strength[g->col[e]]);
	for (int64_t v = 0; v < g->n; v++)
		x[v] = (float) (1.0 / (double) g->n);
	pr_stream_params_init(&prm);
	whole = pr_stream_block_layout(g->ptr, 0, g->n, true).copy_bytes;
	/* the link: one plain pinned copy of 1 GiB */
	if (pr_streamed_plain_copy_ms(0, (size_t) 1 << 30, &copy_ms, &err) != PR_OK)
	{
		printf("# plain copy FAILED: %s\n", err.message);
		return 1;
	}
	prm.h2d_bytes_per_s = (double) (1 << 30) / (copy_ms * 1e-3);
	prm.device_budget = budget_mb > 0 ? (size_t) (budget_mb * 1048576.0) : (size_t) ((double) whole * budget_frac);
	prm.pinned_budget = pinned_mb >= 0 ? (size_t) (pinned_mb * 1048576.0) : whole + ((size_t) 1 << 20);
	/* the compute rate: measured below on the resident product; a first plan with the default */
	if ((s = plan_streamed(g, val, x, &prm, &plan)) == NULL)
		return 1;
	if ((res_ms = best_product_ms(s, pr_streamed_product_resident, "resident", reps, y_res)) < 0)
		return 1;
	/* re-plan with the measured compute rate, then stream */
	prm.edge_s = res_ms * 1e-3 / (double) g->m;
	prm.row_s = 0;
	pr_streamed_free(s);
	pr_stream_plan_free(&plan, &pr_malloc_allocator);
	if ((s = plan_streamed(g, val, x, &prm, &plan)) == NULL)
		return 1;
	if ((str_ms = best_product_ms(s, pr_streamed_product, "streamed", reps, y_str)) < 0)
		return 1;
	pr_streamed_report(s, &rep);
	for (int64_t v = 0; v < g->n; v++)
		if (memcmp(&y_res[v], &y_str[v], sizeof(float)) != 0)
			diff++;
	if (pr_streamed_plain_copy_ms(0, rep.matrix_bytes, &plain_ms, &err) != PR_OK)
	{
		printf("# plain copy of the matrix bytes FAILED: %s\n", err.message);
		plain_ms = -1;
	}
	printf("# link: plain pinned cudaMemcpy 1 GiB %.3f ms = %.1f GB/s; resident product %.3f ms (%.2f ps/edge)\n",
		   copy_ms, (double) (1 << 30) / copy_ms / 1e6, res_ms, res_ms * 1e9 / (double) g->m);
	printf("| mode | budget MiB | matrix/budget | blocks | fewest | buffer MiB | pinned MiB | streamed ms | predicted ms | achieved GB/s | plain copy GB/s | ratio | rows differing from resident |\n");
	printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
	printf("| %s | %.0f | %.2f | %lld | %lld | %.1f | %.1f | %.3f | %.3f | %.1f | %.1f | %.1f%% | %lld |\n",
		   rep.mode, (double) prm.device_budget / 1048576.0, (double) whole / (double) prm.device_budget,
		   (long long) rep.n_blocks, (long long) plan.min_blocks, (double) rep.buffer_bytes / 1048576.0,
		   (double) rep.pinned_bytes / 1048576.0, str_ms, rep.predicted_ms,
		   (double) rep.matrix_bytes / str_ms / 1e6, plain_ms > 0 ? (double) rep.matrix_bytes / plain_ms / 1e6 : -1.0,
		   plain_ms > 0 ? 100.0 * plain_ms / str_ms : -1.0, (long long) diff);
	pr_streamed_free(s);
	pr_stream_plan_free(&plan, &pr_malloc_allocator);
	free(val);
	free(x);
	free(y_res);
	free(y_str);
	return diff == 0 ? 0 : 1;
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
	const char *model_path = NULL;
	PrModel		model;
	PrPartitionMethod method = PR_PARTITION_GREEDY;
	bool		stream = false,
				check_cpu = false;
	double		budget_frac = 0.4,
				budget_mb = 0,
				pinned_mb = -1;
	Graph		g;
	int			failures;

	for (int i = 1; i < argc; i++)
	{
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--rmat") && v)
			scale = atoi(argv[++i]);
		else if (!strcmp(a, "--gpus") && v)
			n_gpus = parse_list(argv[++i], gpus, 16);
		else if ((!strcmp(a, "--kernels") || !strcmp(a, "--kernel")) && v)
			kernels = argv[++i];
		else if (!strcmp(a, "--tiled-model") && v)
			model_path = argv[++i];
		else if (!strcmp(a, "--method") && v)
		{
			if (!pr_partition_method_parse(argv[++i], &method))
			{
				fprintf(stderr, "unknown method %s\n", argv[i]);
				return 2;
			}
		}
		else if (!strcmp(a, "--reps") && v)
			reps = atoi(argv[++i]);
		else if (!strcmp(a, "--iters") && v)
			iters = atoi(argv[++i]);
		else if (!strcmp(a, "--check-cpu"))
			check_cpu = true;
		else if (!strcmp(a, "--stream"))
			stream = true;
		else if (!strcmp(a, "--budget-frac") && v)
			budget_frac = atof(argv[++i]);
		else if (!strcmp(a, "--budget-mb") && v)
			budget_mb = atof(argv[++i]);
		else if (!strcmp(a, "--pinned-mb") && v)
			pinned_mb = atof(argv[++i]);
		else
		{
			fprintf(stderr, "usage: %s --rmat S [--gpus 1,2,4] [--kernels csr,cusparse,tiled] [--method greedy|snake|ranges] "
					"[--reps N] [--iters K] [--check-cpu] [--tiled-model FILE] | --stream --rmat S [--budget-frac F|--budget-mb M] "
					"[--pinned-mb P] [--reps N]\n", argv[0]);
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (model_path != NULL)
	{
		FILE	   *f = fopen(model_path, "r");
		static char text[1 << 16];
		size_t		len = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
		PrError		err;

		if (f)
			fclose(f);
		text[len] = '\0';
		if (f == NULL || pr_model_parse(text, &model, &err) != PR_OK)
		{
			fprintf(stderr, "cannot read the model %s\n", model_path);
			return 2;
		}
	}
	make_rmat(scale, &g);
	failures = stream ? run_stream(&g, budget_frac, budget_mb, pinned_mb, reps)
		: run_multi(&g, gpus, n_gpus, kernels, method, reps, iters, check_cpu, model_path ? &model : NULL);
	printf("# %s\n", failures == 0 ? "all checks passed" : "CHECKS FAILED");
	free(g.ptr);
	free(g.col);
	free(g.out_strength);
	return failures == 0 ? 0 : 1;
}
