/*
 * test_spmm.cu — the GPU engine's products with k columns (the SpMM of pr_gpu_spmm.cuh for k > 1,
 * the k = 1 formats for k = 1) through the public engine (pr_gpu.h: prepare, upload, product,
 * download), against a plain host CSR product in double.  Graphs: a small R-MAT (power-law rows of
 * every bin), the same with weights, and a hub graph whose rows are longer than the chunk sizes
 * (k = 1: 4096, k > 1: 1024) with parallel edges and dangling nodes, unweighted and weighted.
 * For k in 1, 2, 3, 8, 16, 32, 33, fp32 and fp64 (k = 1: the measured choice of auto, and each
 * explicit layout — ALIGNED_COO in the three orders, the composite hubs first and natural, row
 * blocks natural, hubs first and in the locality order, binned and cuSPARSE natural), each of the
 * three products: the
 * output slot is
 * poisoned with NaN first (every entry must be written), the result must be within the rounding
 * bound of the reference (n_entries * eps * sum |terms|), and a second product must give the same
 * bits.  The streamed matrices (pr_gpu_streamed.h) run the same three products, forced by the
 * residency option and by a tiny memory budget under auto, registered and staged, in one block
 * and in several (the hub graph's long rows cut into chunks), and PageRank, personalized
 * PageRank, RWR (k = 1 and 8) and HITS through them against the CPU engine; Anderson mixing
 * (run_mixing_case: PageRank within its bound, the certified top 5 of RWR, HITS) against the CPU
 * engine; the engine serving a graph delta (run_delta_case: prepared on the graph, given the delta
 * of a patch that kept the node set, then the merged delta of a second patch) against the CPU
 * engine prepared on the patched graphs, in every layout, the cuSPARSE layout and the streamed
 * residency refusing it; a delta with absent nodes (run_absent_case: nodes left without any
 * edge, which X lacks) against the CPU engine prepared on X, every absent entry exactly 0; chains
 * of deltas on one engine (run_chain_case: the recent layer over the frozen one, a fold, the empty
 * delta) against X's rows and the CPU engine on X, a second run bit-identical; and the time of
 * apply_delta over 100 growing deltas on R-MAT 20 (run_delta_timing, printed).  Needs a GPU:
 *
 *   make -C cuda check-spmm        (builds build/test_spmm and runs it)
 *   cuda/build/test_spmm delta     (only the delta cases, the chains and the apply timing)
 *
 * Prints a line per case (PASS / FAIL) and "N passed, N failed" last; exits non-zero on a failure.
 */
#include "pr_driver.h"
#include "pr_gpu_bench.h"
#include "pr_graph.h"
#include "pr_residency.h"

#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <vector>

#include "graph_gen.h"
#include "test_harness.h"

/* Uniform double in [-1, 1). */
static double
signed_unit(uint64_t *state)
{
	return (double) (gen_random(state) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

/* An edge list and, optionally, weights (multiples of 1/4: exact in float, as the engine keeps them). */
struct EdgeList
{
	const char *name;
	std::vector<int64_t> src,
				dst;
	std::vector<double> weight;
};

/* R-MAT (graph_gen.h: a = .57, b = c = .19), 2^scale ids, 16 edges per id, parallel edges kept. */
static EdgeList
rmat_edges(const char *name, int scale, bool weighted, uint64_t seed)
{
	EdgeList	el;
	GenSpec		spec = gen_rmat(scale, (int64_t) 16 << scale, seed, false);

	el.name = name;
	el.src.resize((size_t) spec.m);
	el.dst.resize((size_t) spec.m);
	gen_edges(&spec, el.src.data(), el.dst.data(), 1);
	for (int64_t i = 0; weighted && i < spec.m; i++)
		el.weight.push_back(0.25 * (double) (1 + gen_random(&seed) % 8));
	return el;
}

/* The hub graph (graph_gen.h, gen_hub_edges): rows longer than either chunk size, unweighted or weighted. */
static EdgeList
hub_edges(const char *name, bool weighted, uint64_t seed)
{
	EdgeList	el;
	size_t		m = gen_hub_edges(seed, weighted, NULL, NULL, NULL);

	el.name = name;
	el.src.resize(m);
	el.dst.resize(m);
	if (weighted)
		el.weight.resize(m);
	gen_hub_edges(seed, weighted, el.src.data(), el.dst.data(), weighted ? el.weight.data() : NULL);
	return el;
}

/*
 * Host reference in double: y = product(x) for k columns, and the sum of |terms| of each output
 * (for the rounding bound) and the number of terms.
 */
static void
reference_product(const PrGraph *g, PrProduct product, int k, const std::vector<double> &x,
				  std::vector<double> &y, std::vector<double> &mag, std::vector<int64_t> &terms)
{
	int64_t		n = g->n_nodes;
	bool		push = product == PR_PRODUCT_PUSH;
	const int64_t *ptr = push ? g->out_ptr : g->in_ptr;
	const int32_t *adj = push ? g->out_dst : g->in_src;
	const double *w = push ? g->out_weight : g->in_weight;

	y.assign((size_t) (n * k), 0.0);
	mag.assign((size_t) (n * k), 0.0);
	terms.assign((size_t) n, 0);
	for (int64_t r = 0; r < n; r++)
	{
		terms[r] = ptr[r + 1] - ptr[r];
		for (int64_t p = ptr[r]; p < ptr[r + 1]; p++)
		{
			int64_t		c = adj[p];
			double		scale = w ? w[p] : 1.0;

			if (product == PR_PRODUCT_PULL_NORMALIZED)
				scale *= g->out_strength[c] > 0 ? 1.0 / g->out_strength[c] : 0.0;
			for (int j = 0; j < k; j++)
			{
				double		t = scale * x[(size_t) (c * k + j)];

				y[(size_t) (r * k + j)] += t;
				mag[(size_t) (r * k + j)] += fabs(t);
			}
		}
	}
}

/* Records one case's outcome. */
static void
report(bool ok, const char *graph, const char *prec, int k, const char *what, const char *detail)
{
	printf("%s %s %s k=%d %s%s%s\n", ok ? "PASS" : "FAIL", graph, prec, k, what, detail[0] ? ": " : "", detail);
	test_count(ok);
}

/* One k = 1 layout run besides the default (auto: the measured choice). */
struct Layout
{
	const char *name;
	PrGpuKernel kernel;
	PrGpuOrder	order;
};

/* The layouts every k = 1 case also runs explicitly: each format in each order it is offered in. */
static const Layout layouts[] = {
	{"aligned_coo/natural", PR_GPU_KERNEL_ALIGNED_COO, PR_GPU_ORDER_NATURAL},
	{"aligned_coo/degree", PR_GPU_KERNEL_ALIGNED_COO, PR_GPU_ORDER_DEGREE},
	{"aligned_coo/hubs", PR_GPU_KERNEL_ALIGNED_COO, PR_GPU_ORDER_HUBS},
	{"tiled/hubs", PR_GPU_KERNEL_TILED, PR_GPU_ORDER_HUBS},
	{"tiled/natural", PR_GPU_KERNEL_TILED, PR_GPU_ORDER_NATURAL},
	{"binned/natural", PR_GPU_KERNEL_BINNED, PR_GPU_ORDER_NATURAL},
	{"row_blocks/natural", PR_GPU_KERNEL_ROW_BLOCKS, PR_GPU_ORDER_NATURAL},
	{"row_blocks/hubs", PR_GPU_KERNEL_ROW_BLOCKS, PR_GPU_ORDER_HUBS},
	{"row_blocks/locality", PR_GPU_KERNEL_ROW_BLOCKS, PR_GPU_ORDER_LOCALITY},
	{"cusparse/natural", PR_GPU_KERNEL_CUSPARSE, PR_GPU_ORDER_NATURAL},
};

/* How a case streams its matrices: forced by the residency option or by a tiny budget under
 * auto, registered or staged, the block count (0: the plan's). */
struct Streaming
{
	const char *name;
	bool		by_budget;		/* auto with a budget too small for the resident layouts */
	bool		stage;
	int64_t		blocks;
};

/* The streamed cases every graph runs. */
static const Streaming streamings[] = {
	{"streamed/registered/1", false, false, 1},
	{"streamed/registered/plan", false, false, 0},
	{"streamed/registered/5", false, false, 5},
	{"streamed/staged/1", false, true, 1},
	{"streamed/staged/3", false, true, 3},
	{"streamed/staged/17", false, true, 17},
	{"streamed/auto-budget/4", true, false, 4},
};

/* Sets the options of a streamed case (slots and push as the run prepares them); the budget
 * under auto lies between pr_residency's streamed and resident sizes, a quarter of the way up. */
static void
set_streaming(PrGpuOptions *o, PrGpuBenchOptions *b, const Streaming *sm, const PrGraph *g, int k,
			  int slots, bool push)
{
	PrResidencyInput in;
	PrResidencyChoice c;

	b->stream_stage = sm->stage;
	b->stream_blocks = sm->blocks;
	if (!sm->by_budget)
	{
		b->residency = PR_GPU_RESIDENCY_STREAMED;
		return;
	}
	memset(&in, 0, sizeof(in));
	in.nodes = g->n_nodes;
	in.edges = g->n_edges;
	in.k = k;
	in.slots = slots;
	in.elem = o->precision == PR_GPU_FP64 ? 8 : 4;
	in.weighted = g->in_weight != NULL;
	in.push = push;
	in.free_bytes = (size_t) 1 << 50;
	pr_residency_choose(&in, &c);
	b->residency = PR_GPU_RESIDENCY_AUTO;
	o->memory_budget = c.streamed_bytes + (c.resident_bytes > c.streamed_bytes ? (c.resident_bytes - c.streamed_bytes) / 4 : 0);
}

/* Checks a streamed engine's report: engine, residency, copy mode, blocks, bytes per product. */
static bool
streamed_report_ok(const PrGpuReport *rep, const Streaming *sm, const PrGraph *g, char *detail, size_t size)
{
	const char *mode = sm->stage ? "staged" : "registered";
	size_t		least = (size_t) (g->n_nodes + 1) * 8 + (size_t) g->n_edges * (g->in_weight ? 12 : 4);

	snprintf(detail, size, "engine %s residency %s mode %s blocks %lld (push %lld), %zu bytes a product (at least %zu); %s",
			 rep->engine, rep->residency, rep->stream_mode, (long long) rep->stream_blocks,
			 (long long) rep->stream_push_blocks, rep->stream_bytes, least, rep->format);
	return strcmp(rep->engine, "gpu-streamed") == 0 && strcmp(rep->residency, "streamed") == 0 &&
		strcmp(rep->stream_mode, mode) == 0 && rep->stream_bytes >= least &&
		(sm->blocks <= 0 || sm->blocks == 1 ? rep->stream_blocks >= 1 : rep->stream_blocks > 1);
}

/* Runs the three products of one graph, precision and k through the engine (kernel auto, or the
 * given layout, or a streamed case). */
static void
run_case(const EdgeList &el, const PrGraph *g, PrGpuPrecision precision, int k, uint64_t seed,
		 const Layout *layout = NULL, const Streaming *streaming = NULL)
{
	const char *prec = precision == PR_GPU_FP64 ? "fp64" : "fp32";
	char		graph_name[128];
	const PrProduct products[3] = {PR_PRODUCT_PULL_NORMALIZED, PR_PRODUCT_PULL, PR_PRODUCT_PUSH};
	const char *names[3] = {"pull-normalized", "pull", "push"};
	double		eps = precision == PR_GPU_FP64 ? 1.2e-16 : 6.0e-8;
	int64_t		n = g->n_nodes;
	size_t		total = (size_t) (n * k);
	std::vector<double> x(total), got(total), again(total), ref, mag;
	std::vector<int64_t> terms;
	PrGpuOptions o;
	PrGpuBenchOptions b;
	PrGpuReport rep;
	PrError		err;
	PrEngine   *e;
	PrStatus	st;
	char		detail[256];

	for (size_t i = 0; i < total; i++)
		x[i] = signed_unit(&seed);
	pr_gpu_options_init(&o);
	pr_gpu_bench_options_init(&b);
	o.precision = precision;
	snprintf(graph_name, sizeof(graph_name), "%s%s%s", el.name, layout || streaming ? " " : "",
			 layout ? layout->name : streaming ? streaming->name : "");
	if (layout != NULL)
	{
		o.kernel = layout->kernel;
		o.order = layout->order;
	}
	if (streaming != NULL)
		set_streaming(&o, &b, streaming, g, k, 3, true);
	e = pr_gpu_bench_engine_create(&o, &b, &err);
	if (e == NULL)
	{
		report(false, graph_name, prec, k, "engine", err.message);
		return;
	}
	st = e->ops->prepare(e, g, k, 3, PR_NEED_PULL_NORMALIZED | PR_NEED_PULL | PR_NEED_PUSH, &err);
	if (st == PR_OK)
		st = e->ops->upload(e, 0, x.data(), &err);
	if (st == PR_OK)
		st = pr_gpu_engine_report(e, &rep, &err);
	if (st != PR_OK)
	{
		report(false, graph_name, prec, k, "prepare/upload", err.message);
		e->ops->release(e);
		return;
	}
	if (streaming != NULL)
		report(streamed_report_ok(&rep, streaming, g, detail, sizeof(detail)), graph_name, prec, k, "engine", detail);
	else
	{
		snprintf(detail, sizeof(detail), "engine %s, expected %s", rep.engine, k > 1 ? "gpu-spmm" : "any k = 1 engine");
		report(k == 1 || strcmp(rep.engine, "gpu-spmm") == 0, graph_name, prec, k, "engine", k > 1 ? detail : "");
	}
	for (int pi = 0; pi < 3; pi++)
	{
		double		worst = 0.0;
		int64_t		bad = 0,
					first_bad = -1;
		bool		same;

		reference_product(g, products[pi], k, x, ref, mag, terms);
		/* poison, product, download; twice (the second into the other slot) */
		st = e->ops->fill(e, 1, NAN, &err);
		if (st == PR_OK)
			st = e->ops->product(e, products[pi], 0, 1, &err);
		if (st == PR_OK)
			st = e->ops->download(e, 1, got.data(), &err);
		if (st == PR_OK)
			st = e->ops->fill(e, 2, NAN, &err);
		if (st == PR_OK)
			st = e->ops->product(e, products[pi], 0, 2, &err);
		if (st == PR_OK)
			st = e->ops->download(e, 2, again.data(), &err);
		if (st != PR_OK)
		{
			report(false, graph_name, prec, k, names[pi], err.message);
			continue;
		}
		for (size_t i = 0; i < total; i++)
		{
			double		bound = eps * (double) (terms[i / k] + 4) * mag[i] + 1e-300;
			double		d = fabs(got[i] - ref[i]);

			if (!(d <= bound))	/* NaN (an entry never written) fails too */
			{
				if (first_bad < 0)
					first_bad = (int64_t) i;
				bad++;
			}
			else if (mag[i] > 0)
				worst = fmax(worst, d / mag[i]);
		}
		same = memcmp(got.data(), again.data(), total * sizeof(double)) == 0;
		if (bad > 0)
			snprintf(detail, sizeof(detail), "%lld entries off (first: node %lld col %d got %.17g want %.17g, %lld terms)",
					 (long long) bad, (long long) (first_bad / k), (int) (first_bad % k), got[first_bad],
					 ref[first_bad], (long long) terms[first_bad / k]);
		else
			snprintf(detail, sizeof(detail), "max |err| / sum|terms| %.2e%s", worst,
					 same ? ", bit-identical twice" : ", NOT bit-identical twice");
		report(bad == 0 && same, graph_name, prec, k, names[pi], detail);
	}
	e->ops->release(e);
}

/*
 * RWR from k sources with the warm start (PrIterOptions.warm_start) on the GPU engine: twice on
 * one engine (the second run finds the far-field vector kept), against the CPU engine's answer to
 * 1e-13.  Tolerance 1e-6 (L1): a change below it bounds the error by 1e-6 * 0.85 / 0.15; fp32
 * sums add a little.  Also: the warm start took effect, the same bits twice, and on unweighted
 * graphs fewer iterations than the GPU engine's cold start (1/N).  k = 8 takes the engine's
 * restart_local (binned CSR) in the way asked (checked in the engine's report): both steps pushed
 * along out-edge lists, the first pushed and the second by a pass over the pull CSR (a push list
 * too small for the second step) or by one product (the same, with local_product_entries 1), or two
 * passes; k = 1 the driver's general way when the layout is not binned.
 */
enum WarmLocal
{
	LOCAL_PUSH,
	LOCAL_PUSH_FIRST,
	LOCAL_PUSH_FIRST_PRODUCT,
	LOCAL_TWO_PASSES
};

static void
run_warm_case(const EdgeList &el, const PrGraph *g, PrGpuPrecision precision, int k, WarmLocal local)
{
	const char *prec = precision == PR_GPU_FP64 ? "fp64" : "fp32";
	int64_t		n = g->n_nodes;
	size_t		total = (size_t) (n * k);
	std::vector<int32_t> sources((size_t) k);
	std::vector<double> ones((size_t) k, 1.0), exact(total), warm(total), again(total), cold(total);
	std::vector<int64_t> ptr((size_t) k + 1);
	PrRestart	r;
	PrIterOptions tight, o;
	PrRunStats	st_exact, st_warm, st_again, st_cold;
	PrGpuOptions go;
	PrGpuBenchOptions gb;
	PrGpuReport rep;
	PrError		err;
	PrEngine   *cpu = pr_cpu_engine_create(2, &pr_malloc_allocator, &err);
	const char *what = k == 1 ? "warm-start RWR" :
		(local == LOCAL_PUSH ? "warm-start RWR, push" :
		 (local == LOCAL_PUSH_FIRST ? "warm-start RWR, first step pushed, second by a pass" :
		  (local == LOCAL_PUSH_FIRST_PRODUCT ? "warm-start RWR, first step pushed, second by a product" :
		   "warm-start RWR, two passes")));
	int64_t		first_step = 0;
	bool		way_ok;
	PrEngine   *e;
	bool		ok;
	double		worst = 0.0,
				bound = 1e-6 * 0.85 / 0.15 + (precision == PR_GPU_FP64 ? 0.0 : 2e-6);
	char		detail[256];

	for (int j = 0; j < k; j++)
	{
		int64_t		v = ((int64_t) (j + 1) * 2654435761LL) % n;

		while (g->out_strength[v] == 0.0)
			v = (v + 1) % n;
		sources[(size_t) j] = (int32_t) v;
		ptr[(size_t) j] = j;
	}
	ptr[(size_t) k] = k;
	if (k > 1 && g->n_dangling > 0)
		sources[(size_t) k - 1] = g->dangling[0];
	memset(&r, 0, sizeof(r));
	r.uniform = false;
	r.k = k;
	r.ptr = ptr.data();
	r.node = sources.data();
	r.weight = ones.data();
	memset(&tight, 0, sizeof(tight));
	tight.tolerance = 1e-13;
	tight.norm = PR_NORM_L1;
	tight.max_iterations = 3000;
	tight.check_every = 1;
	o = tight;
	o.tolerance = 1e-6;
	pr_gpu_options_init(&go);
	pr_gpu_bench_options_init(&gb);
	go.precision = precision;
	gb.push_local = local != LOCAL_TWO_PASSES;
	/* first step only: room for the sources' out-edges, not for their out-neighbours' */
	for (int j = 0; j < k; j++)
		first_step += g->out_ptr[sources[(size_t) j] + 1] - g->out_ptr[sources[(size_t) j]];
	if (local == LOCAL_PUSH_FIRST || local == LOCAL_PUSH_FIRST_PRODUCT)
		gb.push_local_cap = first_step;
	gb.local_product_entries = local == LOCAL_PUSH_FIRST_PRODUCT ? 1 : INT64_MAX;
	e = pr_gpu_bench_engine_create(&go, &gb, &err);
	ok = cpu != NULL && e != NULL &&
		pr_pagerank(cpu, g, 0.85, &r, &tight, exact.data(), &st_exact, &err) == PR_OK &&
		pr_pagerank(e, g, 0.85, &r, &o, cold.data(), &st_cold, &err) == PR_OK;
	o.warm_start = true;
	ok = ok && pr_pagerank(e, g, 0.85, &r, &o, warm.data(), &st_warm, &err) == PR_OK &&
		pr_pagerank(e, g, 0.85, &r, &o, again.data(), &st_again, &err) == PR_OK &&
		pr_gpu_engine_report(e, &rep, &err) == PR_OK;
	if (!ok)
		report(false, el.name, prec, k, what, err.message);
	else
	{
		for (int j = 0; j < k; j++)
		{
			double		d = 0.0;

			for (int64_t v = 0; v < n; v++)
				d += fabs(warm[(size_t) v * k + j] - exact[(size_t) v * k + j]);
			worst = fmax(worst, d);
		}
		if (k == 1)
			way_ok = rep.push_local_bytes == 0;
		else if (local == LOCAL_PUSH)
			way_ok = rep.push_local_all == 2 && rep.push_local_first == 0;
		else if (local == LOCAL_PUSH_FIRST)
			way_ok = rep.push_local_first == 2 && rep.push_local_all == 0 && rep.push_local_product == 0;
		else if (local == LOCAL_PUSH_FIRST_PRODUCT)
			way_ok = rep.push_local_first == 2 && rep.push_local_all == 0 && rep.push_local_product == 2;
		else
			way_ok = rep.push_local_bytes == 0;
		snprintf(detail, sizeof(detail), "L1 to the CPU engine's exact answer %.2e (bound %.1e), %d iterations (cold start %d)%s%s; pushed whole %lld, first step %lld",
				 worst, bound, st_warm.iterations, st_cold.iterations,
				 st_warm.warm_started && st_again.warm_started ? "" : ", NOT warm-started",
				 memcmp(warm.data(), again.data(), total * 8) == 0 ? ", bit-identical twice" : ", NOT bit-identical twice",
				 (long long) rep.push_local_all, (long long) rep.push_local_first);
		report(worst <= bound && st_warm.converged && st_warm.warm_started && st_again.warm_started &&
			   (st_warm.iterations < st_cold.iterations || !el.weight.empty()) &&
			   memcmp(warm.data(), again.data(), total * 8) == 0 && way_ok,
			   el.name, prec, k, what, detail);
	}
	if (cpu != NULL)
		cpu->ops->release(cpu);
	if (e != NULL)
		e->ops->release(e);
}

/*
 * One PageRank update (pagerank_update, then residual) on the GPU engine against the CPU engine on
 * the same inputs: x and y positive and random, a restart of `per_col` nodes per column (weights
 * 1 / per_col, one node twice when per_col > 1 so equal positions add up).  One or a few nodes a
 * column take the restart's list of non-zeros, half the nodes or more its dense matrix; k = 8, 16,
 * 32 (and 2 in fp64) the vectorized kernel, the others the scalar one.  Every value within fp32 /
 * fp64 rounding of the CPU's, the residuals too, and the same bits twice.
 */
static void
run_update_case(const EdgeList &el, const PrGraph *g, PrGpuPrecision precision, int k, int64_t per_col,
				uint64_t seed)
{
	const char *prec = precision == PR_GPU_FP64 ? "fp64" : "fp32";
	double		eps = precision == PR_GPU_FP64 ? 1.2e-16 : 6.0e-8;
	int64_t		n = g->n_nodes;
	size_t		total = (size_t) (n * k);
	std::vector<double> x(total), y(total), ref(total), got(total), again(total);
	std::vector<int64_t> ptr((size_t) k + 1);
	std::vector<int32_t> node;
	std::vector<double> weight;
	std::vector<PrResidual> res_cpu((size_t) k), res_gpu((size_t) k);
	PrRestart	r;
	PrGpuOptions o;
	PrError		err;
	PrEngine   *cpu = pr_cpu_engine_create(2, &pr_malloc_allocator, &err);
	PrEngine   *e;
	PrStatus	st = PR_OK;
	int64_t		bad = 0,
				first_bad = -1;
	double		worst_res = 0.0;
	char		what[64],
				detail[256];

	snprintf(what, sizeof(what), "update, restart of %lld node(s) a column", (long long) per_col);
	for (size_t i = 0; i < total; i++)
	{
		x[i] = 0.5 * (signed_unit(&seed) + 1.0) / (double) n;
		y[i] = 0.5 * (signed_unit(&seed) + 1.0) / (double) n;
	}
	for (int j = 0; j < k; j++)
	{
		ptr[(size_t) j] = (int64_t) node.size();
		for (int64_t c = 0; c < per_col; c++)
		{
			int64_t		v = (int64_t) (gen_random(&seed) % (uint64_t) n);

			if (c == 1)
				v = node.back();	/* a node twice: its weights add up */
			node.push_back((int32_t) v);
			weight.push_back(1.0 / (double) per_col);
		}
	}
	ptr[(size_t) k] = (int64_t) node.size();
	memset(&r, 0, sizeof(r));
	r.uniform = false;
	r.k = k;
	r.ptr = ptr.data();
	r.node = node.data();
	r.weight = weight.data();
	pr_gpu_options_init(&o);
	o.precision = precision;
	e = pr_gpu_engine_create(&o, &err);
	if (cpu == NULL || e == NULL)
		st = PR_ERR_ENGINE;
	for (int pass = 0; pass < 3 && st == PR_OK; pass++)
	{
		PrEngine   *en = pass == 0 ? cpu : e;
		std::vector<double> *out = pass == 0 ? &ref : (pass == 1 ? &got : &again);

		st = en->ops->prepare(en, g, k, 2, PR_NEED_PULL_NORMALIZED, &err);
		if (st == PR_OK)
			st = en->ops->upload(en, 0, x.data(), &err);
		if (st == PR_OK)
			st = en->ops->upload(en, 1, y.data(), &err);
		if (st == PR_OK)
			st = en->ops->pagerank_update(en, 1, 0, 0.85, &r, &err);
		if (st == PR_OK)
			st = en->ops->download(en, 1, out->data(), &err);
		if (st == PR_OK)
			st = en->ops->residual(en, pass == 0 ? res_cpu.data() : res_gpu.data(), &err);
	}
	if (st != PR_OK)
		report(false, el.name, prec, k, what, err.message);
	else
	{
		for (size_t i = 0; i < total; i++)
		{
			double		d = fabs(got[i] - ref[i]);

			if (!(d <= 8 * eps * fabs(ref[i]) + 1e-300))
			{
				if (first_bad < 0)
					first_bad = (int64_t) i;
				bad++;
			}
		}
		for (int j = 0; j < k; j++)
		{
			worst_res = fmax(worst_res, fabs(res_gpu[(size_t) j].l1 - res_cpu[(size_t) j].l1) / res_cpu[(size_t) j].l1);
			worst_res = fmax(worst_res, fabs(res_gpu[(size_t) j].linf - res_cpu[(size_t) j].linf) / res_cpu[(size_t) j].linf);
		}
		if (bad > 0)
			snprintf(detail, sizeof(detail), "%lld values off (first: node %lld col %d got %.17g want %.17g)",
					 (long long) bad, (long long) (first_bad / k), (int) (first_bad % k), got[first_bad], ref[first_bad]);
		else
			snprintf(detail, sizeof(detail), "residuals within %.2e of the CPU's%s", worst_res,
					 memcmp(got.data(), again.data(), total * 8) == 0 ? ", bit-identical twice" : ", NOT bit-identical twice");
		report(bad == 0 && worst_res <= 1e4 * eps && memcmp(got.data(), again.data(), total * 8) == 0,
			   el.name, prec, k, what, detail);
	}
	if (cpu != NULL)
		cpu->ops->release(cpu);
	if (e != NULL)
		e->ops->release(e);
}

/* Builds each graph and runs every k and precision. */
/* The L1 distance of column j of two n x k row-major arrays. */
static double
column_l1(const std::vector<double> &a, const std::vector<double> &b, int64_t n, int k, int j)
{
	double		d = 0.0;

	for (int64_t v = 0; v < n; v++)
		d += fabs(a[(size_t) (v * k + j)] - b[(size_t) (v * k + j)]);
	return d;
}

/*
 * PageRank, personalized PageRank (three nodes), RWR from k = 1 and k = 8 sources (one of them
 * dangling) and HITS on a streamed engine against the CPU engine run to 1e-13 (L1): the streamed
 * engine to 1e-12 in fp64, 1e-6 in fp32 (the L1 change bounds PageRank's error by tol * 0.85 /
 * 0.15); its answers within 1e-10 (fp64) or 1e-5 (fp32) of the CPU's in L1 per column, HITS within
 * 1e-8 / 1e-4 (its bound depends on the spectral gap); the streamed report checked too.
 */
static void
run_streamed_algorithms(const EdgeList &el, const PrGraph *g, PrGpuPrecision precision, const Streaming *sm)
{
	const char *prec = precision == PR_GPU_FP64 ? "fp64" : "fp32";
	int64_t		n = g->n_nodes;
	char		name[128],
				detail[512];
	PrError		err;
	PrEngine   *cpu = pr_cpu_engine_create(2, &pr_malloc_allocator, &err);
	PrIterOptions exact,
				o;

	snprintf(name, sizeof(name), "%s %s", el.name, sm->name);
	memset(&exact, 0, sizeof(exact));
	exact.tolerance = 1e-13;
	exact.norm = PR_NORM_L1;
	exact.max_iterations = 5000;
	exact.check_every = 1;
	o = exact;
	o.tolerance = precision == PR_GPU_FP64 ? 1e-12 : 1e-6;
	for (int what = 0; what < 5 && cpu != NULL; what++)
	{
		const char *names[5] = {"streamed PageRank", "streamed personalized PageRank", "streamed RWR",
								"streamed RWR", "streamed HITS"};
		int			k = what == 3 ? 8 : 1;
		size_t		total = (size_t) (n * k);
		std::vector<int64_t> ptr((size_t) k + 1);
		std::vector<int32_t> nodes;
		std::vector<double> weights,
					want(total),
					got(total),
					want_auth((size_t) n),
					got_auth((size_t) n);
		PrRestart	r;
		PrRunStats	s_cpu,
					s_gpu;
		PrGpuOptions go;
		PrGpuBenchOptions gb;
		PrGpuReport rep;
		PrEngine   *e;
		bool		ok;
		double		worst = 0.0,
					bound = what == 4 ? (precision == PR_GPU_FP64 ? 1e-8 : 1e-4) :
			(precision == PR_GPU_FP64 ? 1e-10 : 1e-5);

		memset(&r, 0, sizeof(r));
		r.uniform = what == 0 || what == 4;
		r.k = k;
		if (!r.uniform)
		{
			for (int j = 0; j < k; j++)
			{
				int			count = what == 1 ? 3 : 1;

				ptr[(size_t) j] = (int64_t) nodes.size();
				for (int c = 0; c < count; c++)
				{
					nodes.push_back((int32_t) (((int64_t) (j * 3 + c + 1) * 2654435761LL) % n));
					weights.push_back(1.0 / count);
				}
			}
			ptr[(size_t) k] = (int64_t) nodes.size();
			if (k > 1 && g->n_dangling > 0)
				nodes[nodes.size() - 1] = g->dangling[0];
			r.ptr = ptr.data();
			r.node = nodes.data();
			r.weight = weights.data();
		}
		pr_gpu_options_init(&go);
		pr_gpu_bench_options_init(&gb);
		go.precision = precision;
		set_streaming(&go, &gb, sm, g, k, what == 4 ? 3 : 2, what == 4);
		e = pr_gpu_bench_engine_create(&go, &gb, &err);
		if (what == 4)
		{
			/* staged in 3 blocks: the graph without out-edges (the engine transposes on the host) */
			PrGraph		in_only = *g;

			if (sm->stage && sm->blocks == 3)
			{
				in_only.has_out_edges = false;
				in_only.out_ptr = NULL;
				in_only.out_dst = NULL;
				in_only.out_weight = NULL;
			}
			ok = e != NULL && pr_hits(cpu, g, &exact, want.data(), want_auth.data(), &s_cpu, &err) == PR_OK &&
				pr_hits(e, &in_only, &o, got.data(), got_auth.data(), &s_gpu, &err) == PR_OK;
		}
		else
			ok = e != NULL && pr_pagerank(cpu, g, 0.85, &r, &exact, want.data(), &s_cpu, &err) == PR_OK &&
				pr_pagerank(e, g, 0.85, &r, &o, got.data(), &s_gpu, &err) == PR_OK;
		ok = ok && pr_gpu_engine_report(e, &rep, &err) == PR_OK;
		if (!ok)
		{
			report(false, name, prec, k, names[what], err.message);
			if (e != NULL)
				e->ops->release(e);
			continue;
		}
		for (int j = 0; j < k; j++)
			worst = fmax(worst, column_l1(want, got, n, k, j));
		if (what == 4)
			worst = fmax(worst, column_l1(want_auth, got_auth, n, 1, 0));
		ok = streamed_report_ok(&rep, sm, g, detail, sizeof(detail));
		snprintf(detail + strlen(detail), sizeof(detail) - strlen(detail), "; L1 to the CPU %.2e (bound %.0e), %d / %d iterations",
				 worst, bound, s_gpu.iterations, s_cpu.iterations);
		report(ok && worst <= bound && s_gpu.converged && (what != 4 || rep.stream_push_blocks >= 1),
			   name, prec, k, names[what], detail);
		e->ops->release(e);
	}
	if (cpu != NULL)
		cpu->ops->release(cpu);
}

/*
 * Anderson mixing (PrIterOptions.mixing_depth 5) on the GPU engine: PageRank at damping 0.99 (slow
 * that the hub graphs mix) and RWR of k = 3 at 0.95 with top 5, against the CPU engine's answer
 * to 1e-13: within the run's own error bound, never more iterations than the plain run (where
 * that takes 30 or more: mixed steps taken and fewer iterations), the same bits twice, the certified top 5 the CPU's; HITS mixed within 1e-6 (fp64) of the
 * CPU engine's mixed HITS.  Every layout of the engine gets the mixing through dots and combine.
 */
static void
run_mixing_case(const EdgeList &el, const PrGraph *g, PrGpuPrecision precision)
{
	const char *prec = precision == PR_GPU_FP64 ? "fp64" : "fp32";
	int64_t		n = g->n_nodes;
	const int	k = 3;
	std::vector<double> exact((size_t) n * k), got((size_t) n * k), again((size_t) n * k),
				hubs((size_t) n), auth((size_t) n), cpu_hubs((size_t) n), cpu_auth((size_t) n);
	std::vector<int32_t> sources(k), top(k * 5), cpu_top(k * 5);
	std::vector<double> ones(k, 1.0), top_value(k * 5), cpu_top_value(k * 5);
	int64_t		ptr[k + 1] = {0, 1, 2, 3};
	PrRestart	uniform, r;
	PrIterOptions tight, o, plain;
	PrRunStats	st_exact, st, st_again, st_plain;
	PrGpuOptions go;
	PrError		err;
	PrEngine   *cpu = pr_cpu_engine_create(2, &pr_malloc_allocator, &err);
	PrEngine   *e;
	bool		ok;
	double		l1 = 0.0;
	char		detail[256];

	for (int j = 0; j < k; j++)
		sources[(size_t) j] = (int32_t) (((int64_t) (j + 1) * 2654435761LL) % n);
	memset(&uniform, 0, sizeof(uniform));
	uniform.uniform = true;
	uniform.k = 1;
	r = pr_restart_columns(k, ptr, sources.data(), ones.data());
	memset(&tight, 0, sizeof(tight));
	tight.tolerance = 1e-13;
	tight.norm = PR_NORM_L1;
	tight.max_iterations = 20000;
	tight.check_every = 1;
	o = tight;
	o.tolerance = precision == PR_GPU_FP64 ? 1e-9 : 1e-6;
	o.mixing_depth = 5;
	plain = o;
	plain.mixing_depth = 0;
	pr_gpu_options_init(&go);
	go.precision = precision;
	e = pr_gpu_engine_create(&go, &err);
	ok = cpu != NULL && e != NULL &&
		pr_pagerank(cpu, g, 0.99, &uniform, &tight, exact.data(), &st_exact, &err) == PR_OK &&
		pr_pagerank(e, g, 0.99, &uniform, &o, got.data(), &st, &err) == PR_OK &&
		pr_pagerank(e, g, 0.99, &uniform, &o, again.data(), &st_again, &err) == PR_OK &&
		pr_pagerank(e, g, 0.99, &uniform, &plain, exact.data() + n, &st_plain, &err) == PR_OK;
	if (!ok)
	{
		report(false, el.name, prec, 1, "mixing", err.message);
		if (e != NULL)
			e->ops->release(e);
		if (cpu != NULL)
			cpu->ops->release(cpu);
		return;
	}
	for (int64_t v = 0; v < n; v++)
		l1 += fabs(got[(size_t) v] - exact[(size_t) v]);
	snprintf(detail, sizeof(detail), "PageRank 0.99: L1 %.2e, bound %.2e, %d iterations (%d mixed), plain %d%s",
			 l1, st.error_bound, st.iterations, st.mixed_steps, st_plain.iterations,
			 memcmp(got.data(), again.data(), sizeof(double) * (size_t) n) == 0 ? "" : ", NOT the same bits twice");
	/* where plain iterations are few (R-MAT) the run stays plain: never more iterations */
	report(st.converged && l1 <= st.error_bound && st.iterations <= st_plain.iterations &&
		   (st_plain.iterations < 30 || (st.mixed_steps > 0 && st.iterations < st_plain.iterations)) &&
		   memcmp(got.data(), again.data(), sizeof(double) * (size_t) n) == 0,
		   el.name, prec, 1, "mixing", detail);

	ok = pr_pagerank_top(cpu, g, 0.95, &r, &tight, 5, cpu_top.data(), cpu_top_value.data(), &st_exact, &err) == PR_OK &&
		pr_pagerank_top(e, g, 0.95, &r, &o, 5, top.data(), top_value.data(), &st, &err) == PR_OK;
	snprintf(detail, sizeof(detail), "RWR of %d at 0.95, top 5: certified %d, %lld ties, %d iterations (%d mixed)%s",
			 k, (int) st.top_k_certified, (long long) st.top_k_ties, st.iterations, st.mixed_steps,
			 ok && st.top_k_certified == PR_CERTIFIED_YES && top != cpu_top ? ", certified but NOT the CPU's top 5" : "");
	report(ok && st.converged && st.top_k_certified != PR_CERTIFIED_NOT_ASKED &&
		   (st.top_k_certified != PR_CERTIFIED_YES || top == cpu_top), el.name, prec, k, "mixing", detail);

	o.tolerance = precision == PR_GPU_FP64 ? 1e-12 : 1e-7;
	tight.mixing_depth = 5;
	ok = pr_hits(cpu, g, &tight, cpu_hubs.data(), cpu_auth.data(), &st_exact, &err) == PR_OK &&
		pr_hits(e, g, &o, hubs.data(), auth.data(), &st, &err) == PR_OK;
	l1 = 0.0;
	for (int64_t v = 0; ok && v < n; v++)
		l1 += fabs(hubs[(size_t) v] - cpu_hubs[(size_t) v]) + fabs(auth[(size_t) v] - cpu_auth[(size_t) v]);
	snprintf(detail, sizeof(detail), "HITS: L1 %.2e, %d iterations (%d mixed)", l1, st.iterations, st.mixed_steps);
	report(ok && st.converged && l1 <= (precision == PR_GPU_FP64 ? 1e-6 : 1e-3), el.name, prec, 1, "mixing", detail);
	e->ops->release(e);
	cpu->ops->release(cpu);
}

/*
 * The graph X of base's rows plus changes (pr_graph_patch_plan / write, out-edges added for HITS)
 * and the delta base -> X (pr_graph_delta_extend from an empty delta); false when the patch fails
 * or changed the node set.
 */
static bool
patch_with_delta(const PrGraph *base, const std::vector<PrEdgeChange> &changes, PrGraph *x, PrGraphDelta *delta,
				 PrError *err)
{
	PrGraphPatch plan;
	PrGraphDelta empty;
	std::vector<int64_t> degree((size_t) base->n_nodes + 1);
	bool		ok;

	memset(x, 0, sizeof(*x));
	if (pr_graph_patch_plan(base, NULL, changes.data(), changes.size(), false, 2, &pr_malloc_allocator, &plan, err) !=
		PR_OK)
		return false;
	x->node_ids = (int64_t *) pr_alloc_array(&pr_malloc_allocator, (size_t) plan.shape.n_nodes, 8);
	x->in_ptr = (int64_t *) pr_alloc_array(&pr_malloc_allocator, (size_t) plan.shape.n_nodes + 1, 8);
	x->in_src = (int32_t *) pr_alloc_array(&pr_malloc_allocator, (size_t) plan.shape.n_edges, 4);
	x->in_weight = base->weighted ? (double *) pr_alloc_array(&pr_malloc_allocator, (size_t) plan.shape.n_edges, 8) : NULL;
	x->out_strength = (double *) pr_alloc_array(&pr_malloc_allocator, (size_t) plan.shape.n_nodes, 8);
	x->dangling = (int32_t *) pr_alloc_array(&pr_malloc_allocator, (size_t) plan.shape.n_nodes, 4);
	pr_graph_patch_write(&plan, x, 1);
	pr_graph_patch_free(&plan);
	if (x->n_nodes != base->n_nodes)
		return false;
	memset(&empty, 0, sizeof(empty));
	empty.n_nodes = base->n_nodes;
	if (base->weighted)
		pr_graph_out_degrees(base, 2, degree.data());
	ok = pr_graph_delta_extend(base, base->weighted ? degree.data() : NULL, NULL, &empty, changes.data(),
							   changes.size(), false, 2, &pr_malloc_allocator, delta, NULL, err) == PR_OK &&
		pr_graph_add_out_edges(x, 1, &pr_malloc_allocator, err) == PR_OK;
	return ok;
}

/*
 * Changes that keep g's node set: every 23rd in-edge deleted where its target and source keep
 * other edges, an insert between existing nodes for each, a weight change of every 31st edge
 * (weighted), every out-edge of one node with an in-edge deleted (it becomes dangling, its
 * targets keeping other in-edges) and an out-edge given to a dangling node; salt varies them.
 */
static std::vector<PrEdgeChange>
node_keeping_changes(const PrGraph *g, int salt)
{
	std::vector<PrEdgeChange> c;
	std::vector<int64_t> in_left((size_t) g->n_nodes), out_left((size_t) g->n_nodes);
	uint64_t	seed = 977 + (uint64_t) salt;
	int64_t		leaver = -1;

	for (int64_t v = 0; v < g->n_nodes; v++)
	{
		in_left[(size_t) v] = g->in_ptr[v + 1] - g->in_ptr[v];
		out_left[(size_t) v] = g->out_ptr[v + 1] - g->out_ptr[v];
	}
	/* a node whose out-edges can all go: an in-edge of its own, targets with other in-edges */
	for (int64_t u = salt; u < g->n_nodes && leaver < 0; u++)
	{
		bool		fits = in_left[(size_t) u] > 0 && out_left[(size_t) u] > 0 && out_left[(size_t) u] <= 4;

		for (int64_t e = g->out_ptr[u]; fits && e < g->out_ptr[u + 1]; e++)
			fits = g->out_dst[e] != u && in_left[(size_t) g->out_dst[e]] > 2;
		if (fits)
			leaver = u;
	}
	for (int64_t e = leaver >= 0 ? g->out_ptr[leaver] : 0; leaver >= 0 && e < g->out_ptr[leaver + 1]; e++)
	{
		c.push_back({g->node_ids[leaver], g->node_ids[g->out_dst[e]], g->out_weight ? g->out_weight[e] : 1.0, -1});
		in_left[(size_t) g->out_dst[e]]--;
	}
	for (int64_t v = 0; v < g->n_nodes; v++)
		for (int64_t e = g->in_ptr[v]; e < g->in_ptr[v + 1]; e++)
		{
			int64_t		u = g->in_src[e];
			double		w = g->in_weight ? g->in_weight[e] : 1.0;

			if (u == leaver || (e + salt) % 23 != 0 || in_left[(size_t) v] < 2 || out_left[(size_t) u] < 2)
				continue;
			/* (the weight change below never touches the leaver's edges, deleted already) */
			c.push_back({g->node_ids[u], g->node_ids[v], w, -1});
			in_left[(size_t) v]--;
			out_left[(size_t) u]--;
			c.push_back({g->node_ids[(int64_t) (gen_random(&seed) % (uint64_t) g->n_nodes)],
						 g->node_ids[(int64_t) (gen_random(&seed) % (uint64_t) g->n_nodes)],
						 g->in_weight ? 0.25 * (double) (1 + gen_random(&seed) % 8) : 1.0, 1});
			if (g->in_weight && (e + salt) % 31 == 0 && e + 1 < g->in_ptr[v + 1] && g->in_src[e + 1] != leaver)
			{
				c.push_back({g->node_ids[g->in_src[e + 1]], g->node_ids[v], g->in_weight[e + 1], -1});
				c.push_back({g->node_ids[g->in_src[e + 1]], g->node_ids[v], g->in_weight[e + 1] + 0.25, 1});
			}
		}
	if (g->n_dangling > salt)
		c.push_back({g->node_ids[g->dangling[salt]], g->node_ids[0], 1.0, 1});
	return c;
}

/* Scores of PageRank, RWR (4 columns, warm start) and HITS on an engine over a graph. */
struct DeltaScores
{
	std::vector<double> pagerank, rwr, hubs, auth;
};

/* The uniform restart and the iteration settings (tolerance tol, L1) of the delta cases' runs. */
static void
delta_run_settings(double tol, PrRestart *uniform, PrIterOptions *o)
{
	memset(uniform, 0, sizeof(*uniform));
	uniform->uniform = true;
	uniform->k = 1;
	memset(o, 0, sizeof(*o));
	o->tolerance = tol;
	o->norm = PR_NORM_L1;
	o->max_iterations = 3000;
	o->check_every = 1;
}

/*
 * Runs the three on engine over g (the engine prepared on g first, then given delta when not
 * NULL; the runs' prepares keep it); the status of the first failure.
 */
static PrStatus
delta_scores(PrEngine *engine, const PrGraph *g, const PrGraphDelta *delta, double tol, DeltaScores *out, PrError *err)
{
	int64_t		n = g->n_nodes;
	std::vector<int64_t> ptr = {0, 1, 2, 3, 5};
	std::vector<int32_t> node = {0, (int32_t) (n / 2), (int32_t) (n - 1), 1, (int32_t) (n / 3)};
	std::vector<double> weight = {1.0, 1.0, 1.0, 0.5, 0.5};
	PrRestart	uniform, sources = pr_restart_columns(4, ptr.data(), node.data(), weight.data());
	PrIterOptions o;
	PrRunStats	st;
	PrStatus	s;

	delta_run_settings(tol, &uniform, &o);
	out->pagerank.resize((size_t) n);
	out->rwr.resize((size_t) n * 4);
	out->hubs.resize((size_t) n);
	out->auth.resize((size_t) n);
	if ((s = pr_pagerank_prepare(engine, g, 1, err)) != PR_OK ||
		(delta != NULL && (s = engine->ops->apply_delta(engine, delta, err)) != PR_OK) ||
		(s = pr_pagerank(engine, g, 0.85, &uniform, &o, out->pagerank.data(), &st, err)) != PR_OK)
		return s;
	o.warm_start = true;
	if ((s = pr_pagerank(engine, g, 0.85, &sources, &o, out->rwr.data(), &st, err)) != PR_OK)
		return s;
	o.warm_start = false;
	return pr_hits(engine, g, &o, out->hubs.data(), out->auth.data(), &st, err);
}

/* Largest L1 distance between two runs' columns. */
static double
delta_apart(const DeltaScores &a, const DeltaScores &b)
{
	double		worst = 0.0,
				d = 0.0;
	size_t		n = a.pagerank.size();

	for (size_t v = 0; v < n; v++)
		d += fabs(a.pagerank[v] - b.pagerank[v]);
	worst = fmax(worst, d);
	for (size_t j = 0; j < 4; j++)
	{
		d = 0.0;
		for (size_t v = 0; v < n; v++)
			d += fabs(a.rwr[v * 4 + j] - b.rwr[v * 4 + j]);
		worst = fmax(worst, d);
	}
	d = 0.0;
	for (size_t v = 0; v < n; v++)
		d += fabs(a.hubs[v] - b.hubs[v]) + fabs(a.auth[v] - b.auth[v]);
	return fmax(worst, d);
}

/*
 * The fold bound of the chain case's engines (PrGpuBenchOptions.delta_fold_edges), set by
 * run_chain_case from its deltas so that D2 is served as a recent layer over D1 and the larger D3
 * folds.
 */
static int64_t chain_fold_edges = 32;

/*
 * The GPU engine of a delta case: precision, the layout (NULL: auto) or the streamed case (NULL:
 * none); for a chain case, auto chooses by the model alone (the same layout every run) and the
 * fold bound is chain_fold_edges.
 */
static PrEngine *
delta_case_engine(const PrGraph *g, PrGpuPrecision precision, const Layout *layout, const Streaming *streaming,
				  PrError *err, bool chain = false)
{
	PrGpuOptions go;
	PrGpuBenchOptions gb;

	pr_gpu_options_init(&go);
	pr_gpu_bench_options_init(&gb);
	go.precision = precision;
	if (layout != NULL)
	{
		go.kernel = layout->kernel;
		go.order = layout->order;
	}
	if (streaming != NULL)
		set_streaming(&go, &gb, streaming, g, 4, PR_N_SLOTS_WARM, true);
	if (chain)
	{
		gb.measure_reps = 0;
		gb.delta_fold_edges = chain_fold_edges;
	}
	return pr_gpu_bench_engine_create(&go, &gb, err);
}

/*
 * The GPU engine prepared on g serving g + delta (apply_delta) against the CPU engine prepared on
 * the patched graph: PageRank, RWR of 4 columns (warm start: restart_local refuses beside a delta,
 * the general way runs) and HITS within the precision's bound, after one patch and after a second
 * (the merged delta replacing the first); the cuSPARSE layout and the streamed residency refuse the
 * delta (PR_ERR_UNSUPPORTED) and serve g unchanged.
 */
static void
run_delta_case(const EdgeList &el, const PrGraph *g, PrGpuPrecision precision, const Layout *layout,
			   const Streaming *streaming)
{
	const char *prec = precision == PR_GPU_FP64 ? "fp64" : "fp32";
	double		tol = precision == PR_GPU_FP64 ? 1e-10 : 1e-6;
	double		bound = precision == PR_GPU_FP64 ? 1e-7 : 1e-3;
	bool		refuses = (layout != NULL && layout->kernel == PR_GPU_KERNEL_CUSPARSE) || streaming != NULL;
	PrGraph		x1, x2;
	PrGraphDelta first, second, merged;
	DeltaScores want1, want2, got1, got2, plain;
	PrError		err;
	PrEngine   *cpu = pr_cpu_engine_create(2, &pr_malloc_allocator, &err);
	PrEngine   *e = NULL;
	PrStatus	st;
	char		what[128], detail[256];

	snprintf(what, sizeof(what), "delta %s", layout ? layout->name : streaming ? streaming->name : "auto");
	memset(&merged, 0, sizeof(merged));
	if (!patch_with_delta(g, node_keeping_changes(g, 1), &x1, &first, &err) ||
		!patch_with_delta(&x1, node_keeping_changes(&x1, 2), &x2, &second, &err) ||
		pr_graph_delta_merge(&first, &second, &pr_malloc_allocator, &merged, &err) != PR_OK || cpu == NULL ||
		delta_scores(cpu, &x1, NULL, tol * 1e-3, &want1, &err) != PR_OK ||
		delta_scores(cpu, &x2, NULL, tol * 1e-3, &want2, &err) != PR_OK)
	{
		report(false, el.name, prec, 1, what, err.message);
		return;
	}
	e = delta_case_engine(g, precision, layout, streaming, &err);
	if (e == NULL)
		report(false, el.name, prec, 1, what, err.message);
	else if (refuses)
	{
		/* refused, and the engine still serves g */
		DeltaScores cpu_plain;

		st = delta_scores(e, g, &first, tol, &got1, &err);
		snprintf(detail, sizeof(detail), "status %d (%.200s)", (int) st, err.message);
		if (st == PR_ERR_UNSUPPORTED)
		{
			st = delta_scores(e, g, NULL, tol, &plain, &err);
			if (st == PR_OK && delta_scores(cpu, g, NULL, tol * 1e-3, &cpu_plain, &err) == PR_OK)
				snprintf(detail, sizeof(detail), "refused; the graph's own scores off by %.2e", delta_apart(plain, cpu_plain));
			report(st == PR_OK && delta_apart(plain, cpu_plain) <= bound, el.name, prec, 1, what, detail);
		}
		else
			report(false, el.name, prec, 1, what, detail);
	}
	else
	{
		PrGpuReport rep;
		bool		ok = delta_scores(e, g, &first, tol, &got1, &err) == PR_OK &&
			delta_scores(e, g, &merged, tol, &got2, &err) == PR_OK;

		if (!ok && err.status == PR_ERR_UNSUPPORTED && pr_gpu_engine_report(e, &rep, &err) == PR_OK &&
			(strcmp(rep.engine, "gpu-cusparse") == 0 || strcmp(rep.residency, "streamed") == 0))
		{
			/* auto chose a layout that takes no delta: refused, as it must be */
			snprintf(detail, sizeof(detail), "refused by the chosen %s (%s)", rep.engine, rep.residency);
			report(true, el.name, prec, 1, what, detail);
		}
		else if (!ok)
			report(false, el.name, prec, 1, what, err.message);
		else
		{
			snprintf(detail, sizeof(detail), "%lld + %lld delta edges; L1 to the CPU engine on X1 %.2e, on X2 %.2e (bound %.0e)",
					 (long long) first.n_edges, (long long) second.n_edges, delta_apart(got1, want1),
					 delta_apart(got2, want2), bound);
			report(delta_apart(got1, want1) <= bound && delta_apart(got2, want2) <= bound, el.name, prec, 1, what,
				   detail);
		}
	}
	if (e != NULL)
		e->ops->release(e);
	cpu->ops->release(cpu);
	pr_graph_delta_free(&first, &pr_malloc_allocator);
	pr_graph_delta_free(&second, &pr_malloc_allocator);
	pr_graph_delta_free(&merged, &pr_malloc_allocator);
	pr_graph_free(&x1, &pr_malloc_allocator);
	pr_graph_free(&x2, &pr_malloc_allocator);
}

/* Internal id of an external id in g (node_ids ascending), or -1. */
static int32_t
id_in(const PrGraph *g, int64_t id)
{
	int64_t		i = pr_lower_bound(g->node_ids, 0, g->n_nodes, id);

	return i < g->n_nodes && g->node_ids[i] == id ? (int32_t) i : -1;
}

/* Adds step to the edge count of each neighbour of u for each edge it shares with u (self-loops aside). */
static void
neighbour_edges(const PrGraph *g, int64_t u, int64_t step, std::vector<int64_t> *left)
{
	for (int64_t e = g->in_ptr[u]; e < g->in_ptr[u + 1]; e++)
		if (g->in_src[e] != u)
			(*left)[(size_t) g->in_src[e]] += step;
	for (int64_t e = g->out_ptr[u]; e < g->out_ptr[u + 1]; e++)
		if (g->out_dst[e] != u)
			(*left)[(size_t) g->out_dst[e]] += step;
}

/* changes sorted by (dst, src, weight) and netted: equal ones summed, counts 0 dropped. */
static std::vector<PrEdgeChange>
net_changes(std::vector<PrEdgeChange> changes)
{
	std::vector<PrEdgeChange> netted;

	std::sort(changes.begin(), changes.end(),
			  [](const PrEdgeChange &a, const PrEdgeChange &b) { return pr_edge_change_order(&a, &b) < 0; });
	for (const PrEdgeChange &c : changes)
	{
		if (!netted.empty() && pr_edge_change_order(&netted.back(), &c) == 0)
			netted.back().count += c.count;
		else
			netted.push_back(c);
		if (netted.back().count == 0)
			netted.pop_back();
	}
	return netted;
}

/* g's rows in its internal ids (count 1 each), in its in-CSR order. */
static std::vector<PrEdgeChange>
graph_rows(const PrGraph *g)
{
	std::vector<PrEdgeChange> rows;

	for (int64_t v = 0; v < g->n_nodes; v++)
		for (int64_t e = g->in_ptr[v]; e < g->in_ptr[v + 1]; e++)
			rows.push_back({g->in_src[e], v, g->in_weight ? g->in_weight[e] : 1.0, 1});
	return rows;
}

/*
 * The delta from g to the graph X of rows (g's internal ids, count 1 each), and X built afresh from
 * the rows: g's rows deleted and X's inserted, netted in (dst, src, weight) order; every changed
 * source with X's out-strength and out-degree (0 for a node X lacks: the weights are multiples of
 * 1/4, so the sums are exact); the nodes X lacks as the absent ones.
 */
static bool
delta_to_rows(const PrGraph *g, const std::vector<PrEdgeChange> &rows, PrGraph *x, PrGraphDelta *delta, PrError *err)
{
	int64_t		n = g->n_nodes;
	std::vector<PrEdgeChange> changes(rows), netted;
	std::vector<int64_t> xs, xd;
	std::vector<double> xw;
	std::vector<int32_t> sources, absent;
	PrBuildOptions bo;

	memset(x, 0, sizeof(*x));
	memset(delta, 0, sizeof(*delta));
	for (const PrEdgeChange &r : rows)
	{
		xs.push_back(g->node_ids[r.src]);
		xd.push_back(g->node_ids[r.dst]);
		xw.push_back(r.weight);
	}
	for (PrEdgeChange c : graph_rows(g))
	{
		c.count = -1;
		changes.push_back(c);
	}
	netted = net_changes(changes);
	for (const PrEdgeChange &c : netted)
		sources.push_back((int32_t) c.src);
	std::sort(sources.begin(), sources.end());
	sources.erase(std::unique(sources.begin(), sources.end()), sources.end());
	memset(&bo, 0, sizeof(bo));
	bo.n_threads = 2;
	if (pr_graph_build(xs.data(), xd.data(), g->in_weight ? xw.data() : NULL, xs.size(), &bo, &pr_malloc_allocator, x,
					   err) != PR_OK)
		return false;
	for (int64_t v = 0; v < n; v++)
		if (id_in(x, g->node_ids[v]) < 0)
			absent.push_back((int32_t) v);
	if (!pr_graph_delta_alloc(delta, n, (int64_t) netted.size(), (int64_t) sources.size(), (int64_t) absent.size(),
							  &pr_malloc_allocator))
	{
		pr_error_set(err, PR_ERR_NOMEM, "out of memory for a delta");
		return false;
	}
	memcpy(delta->edges, netted.data(), sizeof(PrEdgeChange) * netted.size());
	delta->n_edges = (int64_t) netted.size();
	std::vector<int64_t> x_degree((size_t) x->n_nodes + 1);
	pr_graph_out_degrees(x, 1, x_degree.data());
	for (size_t i = 0; i < sources.size(); i++)
	{
		int32_t		in_x = id_in(x, g->node_ids[sources[i]]);

		delta->sources[i] = sources[i];
		delta->out_strength[i] = in_x >= 0 ? x->out_strength[in_x] : 0.0;
		delta->out_degree[i] = in_x >= 0 ? x_degree[(size_t) in_x] : 0;
	}
	delta->n_sources = (int64_t) sources.size();
	memcpy(delta->absent, absent.data(), sizeof(int32_t) * absent.size());
	delta->n_absent = (int64_t) absent.size();
	return true;
}

/*
 * A delta of g with absent nodes, and X built afresh from its rows (delta_to_rows): up to 6 nodes
 * spread over the ids (one of them dangling in g when one fits) lose every edge, each only where
 * every neighbour keeps an edge and none of keep[] is touched; 24 rows inserted between the nodes
 * that stay.
 */
static bool
absent_delta(const PrGraph *g, const int32_t *keep, int n_keep, PrGraph *x, PrGraphDelta *delta, PrError *err)
{
	int64_t		n = g->n_nodes;
	std::vector<int64_t> left((size_t) n, 0);
	std::vector<bool> absent((size_t) n, false);
	std::vector<int32_t> chosen;
	std::vector<PrEdgeChange> rows;
	uint64_t	seed = 4242;

	for (int64_t v = 0; v < n; v++)
		for (int64_t e = g->in_ptr[v]; e < g->in_ptr[v + 1]; e++)
			if (g->in_src[e] != v)
			{
				left[(size_t) v]++;
				left[(size_t) g->in_src[e]]++;
			}
	/* candidates: a dangling node first, then one from each sixth of the ids; a candidate's edges
	 * taken from its neighbours' counts, given back when one would be left without an edge */
	for (int t = -1; t < 6; t++)
		for (int64_t u = t < 0 ? (g->n_dangling > 0 ? g->dangling[g->n_dangling / 2] : n) : t * n / 6; u < n; u++)
		{
			bool		eligible = !absent[(size_t) u] && left[(size_t) u] > 0 &&
				std::find(keep, keep + n_keep, (int32_t) u) == keep + n_keep;
			bool		fits = eligible;

			if (eligible)
				neighbour_edges(g, u, -1, &left);
			for (int64_t e = g->in_ptr[u]; fits && e < g->in_ptr[u + 1]; e++)
				fits = absent[(size_t) g->in_src[e]] || left[(size_t) g->in_src[e]] > 0;
			for (int64_t e = g->out_ptr[u]; fits && e < g->out_ptr[u + 1]; e++)
				fits = absent[(size_t) g->out_dst[e]] || left[(size_t) g->out_dst[e]] > 0;
			if (fits)
			{
				absent[(size_t) u] = true;
				chosen.push_back((int32_t) u);
				break;
			}
			if (eligible)
				neighbour_edges(g, u, 1, &left);
			if (t < 0)
				break;			/* that dangling node does not fit: go on without one */
		}
	/* the rows of X: g's but the absent nodes', and the inserted ones */
	for (const PrEdgeChange &r : graph_rows(g))
		if (!absent[(size_t) r.src] && !absent[(size_t) r.dst])
			rows.push_back(r);
	for (int i = 0; i < 24; i++)
	{
		int64_t		u = (int64_t) (gen_random(&seed) % (uint64_t) n),
					v = (int64_t) (gen_random(&seed) % (uint64_t) n);
		double		w = g->in_weight ? 0.25 * (double) (1 + gen_random(&seed) % 8) : 1.0;

		if (!absent[(size_t) u] && !absent[(size_t) v])
			rows.push_back({u, v, w, 1});
	}
	if (!delta_to_rows(g, rows, x, delta, err))
		return false;
	if (delta->n_absent != (int64_t) chosen.size())
	{
		pr_error_set(err, PR_ERR_INVALID, "X lacks %lld nodes, not the %zu chosen", (long long) delta->n_absent,
					 chosen.size());
		return false;
	}
	return true;
}

/* The columns of the absent-node case: PageRank plain and mixed, RWR of 4 (warm start), PPR mixed. */
#define ABSENT_COLUMNS 7

/*
 * Runs the absent-node case's algorithms on engine over g (prepared on g, then given delta when
 * not NULL), the restarts at the external ids of ids[5]; scores[v * ABSENT_COLUMNS + c] in g's ids.
 */
static PrStatus
absent_scores(PrEngine *engine, const PrGraph *g, const PrGraphDelta *delta, const int64_t *ids, double tol,
			  std::vector<double> *scores, PrError *err)
{
	int64_t		n = g->n_nodes;
	std::vector<int64_t> ptr = {0, 1, 2, 3, 5}, one_ptr = {0, 2};
	std::vector<int32_t> node(5);
	std::vector<double> weight = {1.0, 1.0, 1.0, 0.5, 0.5};
	std::vector<double> out((size_t) n * 4);
	PrRestart	uniform, sources = pr_restart_columns(4, ptr.data(), node.data(), weight.data());
	PrRestart	one = pr_restart_columns(1, one_ptr.data(), node.data() + 3, weight.data() + 3);
	PrIterOptions o;
	PrRunStats	st;
	PrStatus	s;

	for (int i = 0; i < 5; i++)
		node[(size_t) i] = id_in(g, ids[i]);
	delta_run_settings(tol, &uniform, &o);
	o.absent_nodes = delta != NULL ? delta->n_absent : 0;
	scores->assign((size_t) n * ABSENT_COLUMNS, 0.0);
	for (int c = 0; c < ABSENT_COLUMNS; c++)
	{
		int			k = c >= 2 && c < 6 ? 4 : 1;

		if (c == 3 || c == 4 || c == 5)
			continue;			/* RWR's other columns, from its run at c = 2 */
		o.mixing_depth = c == 1 || c == 6 ? 5 : 0;
		o.warm_start = c == 2;
		if (c == 0 && ((s = pr_pagerank_prepare(engine, g, 1, err)) != PR_OK ||
					   (delta != NULL && (s = engine->ops->apply_delta(engine, delta, err)) != PR_OK)))
			return s;
		if ((s = pr_pagerank(engine, g, 0.85, c < 2 ? &uniform : c == 2 ? &sources : &one, &o, out.data(), &st,
							 err)) != PR_OK)
			return s;
		for (int64_t v = 0; v < n; v++)
			for (int j = 0; j < k; j++)
				(*scores)[(size_t) (v * ABSENT_COLUMNS + c + j)] = out[(size_t) (v * k + j)];
	}
	return PR_OK;
}

/*
 * The worst column's L1 distance of got (absent_scores on g's engine) to want (on X's) over X's
 * nodes, and the count of g's nodes X lacks whose entries in got are not exactly 0.
 */
static double
absent_apart(const PrGraph *g, const PrGraph *x, const std::vector<double> &got, const std::vector<double> &want,
			 int64_t *nonzero_absent)
{
	double		worst = 0.0;

	*nonzero_absent = 0;
	for (int c = 0; c < ABSENT_COLUMNS; c++)
	{
		double		l1 = 0.0;

		for (int64_t v = 0; v < g->n_nodes; v++)
		{
			int32_t		in_x = id_in(x, g->node_ids[v]);
			double		value = got[(size_t) (v * ABSENT_COLUMNS + c)];

			if (in_x < 0)
				*nonzero_absent += value != 0.0;
			else
				l1 += fabs(value - want[(size_t) ((int64_t) in_x * ABSENT_COLUMNS + c)]);
		}
		worst = fmax(worst, l1);
	}
	return worst;
}

/*
 * The GPU engine prepared on g serving a delta with absent nodes (apply_delta) against the CPU
 * engine prepared on X built afresh: PageRank plain and mixed, RWR of 4 columns (warm start) and
 * personalized PageRank mixed, within the precision's bound per column on X's nodes, and exactly
 * 0 on the absent ones; the delta then replaced by an empty one serves g again (against the CPU
 * engine on g).  A layout that takes no delta (cuSPARSE, streamed) refuses it.
 */
static void
run_absent_case(const EdgeList &el, const PrGraph *g, PrGpuPrecision precision, const Layout *layout)
{
	const char *prec = precision == PR_GPU_FP64 ? "fp64" : "fp32";
	double		tol = precision == PR_GPU_FP64 ? 1e-10 : 1e-6;
	double		bound = precision == PR_GPU_FP64 ? 1e-7 : 1e-3;
	int64_t		n = g->n_nodes;
	const int32_t keep[5] = {0, (int32_t) (n / 2), (int32_t) (n - 1), 1, (int32_t) (n / 3)};
	int64_t		ids[5];
	PrGraph		x;
	PrGraphDelta delta, empty;
	std::vector<double> want, got, plain, cpu_plain;
	PrGpuReport rep;
	PrError		err;
	PrEngine   *cpu = pr_cpu_engine_create(2, &pr_malloc_allocator, &err);
	PrEngine   *e = NULL;
	PrStatus	st;
	char		what[128], detail[320];
	double		worst = 0.0;
	int64_t		nonzero_absent = 0;

	snprintf(what, sizeof(what), "absent %s", layout ? layout->name : "auto");
	memset(&x, 0, sizeof(x));
	memset(&delta, 0, sizeof(delta));
	memset(&empty, 0, sizeof(empty));
	empty.n_nodes = n;
	for (int i = 0; i < 5; i++)
		ids[i] = g->node_ids[keep[i]];
	if (cpu == NULL || !absent_delta(g, keep, 5, &x, &delta, &err) ||
		absent_scores(cpu, &x, NULL, ids, tol * 1e-3, &want, &err) != PR_OK ||
		absent_scores(cpu, g, NULL, ids, tol * 1e-3, &cpu_plain, &err) != PR_OK)
	{
		report(false, el.name, prec, 1, what, err.message);
		if (cpu != NULL)
			cpu->ops->release(cpu);
		pr_graph_delta_free(&delta, &pr_malloc_allocator);
		pr_graph_free(&x, &pr_malloc_allocator);
		return;
	}
	e = delta_case_engine(g, precision, layout, NULL, &err);
	st = e == NULL ? PR_ERR_ENGINE : absent_scores(e, g, &delta, ids, tol, &got, &err);
	if (e == NULL)
		report(false, el.name, prec, 1, what, err.message);
	else if (st == PR_ERR_UNSUPPORTED && pr_gpu_engine_report(e, &rep, &err) == PR_OK &&
			 (strcmp(rep.engine, "gpu-cusparse") == 0 || strcmp(rep.residency, "streamed") == 0))
	{
		snprintf(detail, sizeof(detail), "refused by the chosen %s (%s)", rep.engine, rep.residency);
		report(true, el.name, prec, 1, what, detail);
	}
	else if (st != PR_OK)
		report(false, el.name, prec, 1, what, err.message);
	else
	{
		double		again;

		worst = absent_apart(g, &x, got, want, &nonzero_absent);
		/* an empty delta: g again */
		st = absent_scores(e, g, &empty, ids, tol, &plain, &err);
		again = 0.0;
		for (size_t i = 0; st == PR_OK && i < plain.size(); i++)
			again = fmax(again, fabs(plain[i] - cpu_plain[i]));
		snprintf(detail, sizeof(detail),
				 "%lld absent nodes, %lld delta edges: worst column L1 to the CPU engine on X %.2e (bound %.0e), "
				 "%lld absent entries not 0; empty delta after it: %.60s, off g's by %.2e",
				 (long long) delta.n_absent, (long long) delta.n_edges, worst, bound, (long long) nonzero_absent,
				 st == PR_OK ? "ok" : err.message, again);
		report(delta.n_absent >= 2 && worst <= bound && nonzero_absent == 0 && st == PR_OK && again <= bound, el.name,
			   prec, 1, what, detail);
	}
	if (e != NULL)
		e->ops->release(e);
	cpu->ops->release(cpu);
	pr_graph_delta_free(&delta, &pr_malloc_allocator);
	pr_graph_free(&x, &pr_malloc_allocator);
}

/* The chain's steps: X1, X2, X3 and g again. */
#define CHAIN_STEPS 4

/* Whether row r has an endpoint among nodes. */
static bool
touches(const PrEdgeChange &r, const std::vector<int32_t> &nodes)
{
	return std::find(nodes.begin(), nodes.end(), (int32_t) r.src) != nodes.end() ||
		std::find(nodes.begin(), nodes.end(), (int32_t) r.dst) != nodes.end();
}

/* count rows inserted at random between nodes not in avoid (weights as the graph's: multiples of 1/4). */
static void
insert_rows(const PrGraph *g, int count, const std::vector<int32_t> &avoid, uint64_t *seed, std::vector<PrEdgeChange> *rows)
{
	uint64_t	n = (uint64_t) g->n_nodes;

	for (int i = 0; i < count;)
	{
		PrEdgeChange r = {(int64_t) (gen_random(seed) % n), (int64_t) (gen_random(seed) % n),
						  g->in_weight ? 0.25 * (double) (1 + gen_random(seed) % 8) : 1.0, 1};

		if (touches(r, avoid))
			continue;
		rows->push_back(r);
		i++;
	}
}

/* A node of g with 1 to 6 edges, the first from node from on (wrapping), none of avoid; -1: none. */
static int32_t
sparse_node(const PrGraph *g, int64_t from, const std::vector<int32_t> &avoid)
{
	for (int64_t i = 0; i < g->n_nodes; i++)
	{
		int64_t		v = (from + i) % g->n_nodes;
		int64_t		edges = g->in_ptr[v + 1] - g->in_ptr[v] + g->out_ptr[v + 1] - g->out_ptr[v];

		if (edges >= 1 && edges <= 6 && std::find(avoid.begin(), avoid.end(), (int32_t) v) == avoid.end())
			return (int32_t) v;
	}
	return -1;
}

/*
 * The rows of the chain's graphs in g's ids, keep[5] keeping an edge in each (a ring over them):
 * X1 is g less every 29th row and every edge of two sparse nodes b1 and b2 (absent), with 40 rows
 * inserted; X2 is X1 with a third of those rows back and five of its inserts gone (D1's changes
 * cancelled), b1 back with one edge, every edge of a third sparse node u gone (absent), 60 more
 * inserts; X3 is X2 less every 7th row, with 200 more inserts (past the fold bound); then g.
 */
static std::vector<std::vector<PrEdgeChange>>
chain_rows(const PrGraph *g, const int32_t *keep)
{
	int64_t		n = g->n_nodes;
	std::vector<int32_t> keeps(keep, keep + 5),
				avoid(keeps);
	std::vector<PrEdgeChange> all = graph_rows(g),
				x1,
				x2,
				x3;
	uint64_t	seed = 777;
	int32_t		b1,
				b2,
				u;
	size_t		inserts;

	b1 = sparse_node(g, n / 5, avoid);
	avoid.push_back(b1);
	b2 = sparse_node(g, 2 * n / 5, avoid);
	avoid.push_back(b2);
	u = sparse_node(g, 3 * n / 5, avoid);
	avoid.push_back(u);
	for (size_t i = 0; i < all.size(); i++)
		if (!touches(all[i], {b1, b2}) && (i % 29 != 3 || touches(all[i], keeps)))
			x1.push_back(all[i]);
	inserts = x1.size();
	insert_rows(g, 40, avoid, &seed, &x1);
	for (int i = 0; i < 5; i++)
		x1.push_back({keep[i], keep[(i + 1) % 5], 1.0, 1});
	for (size_t i = 0; i < x1.size(); i++)
		if ((i < inserts || i >= inserts + 5) && !touches(x1[i], {u}))
			x2.push_back(x1[i]);
	for (size_t i = 0; i < all.size(); i++)
		if (i % 87 == 3 && !touches(all[i], keeps) && !touches(all[i], {b1, b2, u}))
			x2.push_back(all[i]);
	if (b1 >= 0)
		x2.push_back({b1, keep[0], 1.0, 1});
	insert_rows(g, 60, avoid, &seed, &x2);
	for (size_t i = 0; i < x2.size(); i++)
		if (i % 7 != 2 || touches(x2[i], keeps))
			x3.push_back(x2[i]);
	insert_rows(g, 200, avoid, &seed, &x3);
	return {x1, x2, x3, all};
}

/*
 * y = product(x) over X's rows in g's numbering (one column; PULL_NORMALIZED by X's
 * out-strengths), the sum of |terms| of each output over X's rows, g's and the edges of the
 * deltas in layers[n_layers] (each |count| times: the terms an engine adds and cancels, which
 * count for the rounding) and the number of those terms.
 */
static void
rows_product(const PrGraph *g, const std::vector<PrEdgeChange> &rows, PrProduct product, const std::vector<double> &x,
			 const PrGraphDelta *const *layers, int n_layers, std::vector<double> *y, std::vector<double> *mag,
			 std::vector<int64_t> *terms)
{
	size_t		n = (size_t) g->n_nodes;
	std::vector<double> strength(n, 0.0);
	std::vector<PrEdgeChange> g_rows = graph_rows(g);
	std::vector<PrEdgeChange> layer_rows;

	for (const PrEdgeChange &r : rows)
		strength[(size_t) r.src] += r.weight;
	for (int l = 0; l < n_layers; l++)
		for (int64_t i = 0; i < layers[l]->n_edges; i++)
			for (int64_t c = 0; c < (layers[l]->edges[i].count < 0 ? -layers[l]->edges[i].count : layers[l]->edges[i].count); c++)
				layer_rows.push_back(layers[l]->edges[i]);
	y->assign(n, 0.0);
	mag->assign(n, 0.0);
	terms->assign(n, 0);
	for (int pass = 0; pass < 3; pass++)
		for (const PrEdgeChange &r : pass == 0 ? rows : pass == 1 ? g_rows : layer_rows)
		{
			bool		push = product == PR_PRODUCT_PUSH;
			size_t		out = (size_t) (push ? r.src : r.dst),
						in = (size_t) (push ? r.dst : r.src);
			double		scale = r.weight;
			double		t;

			if (product == PR_PRODUCT_PULL_NORMALIZED)
				scale *= strength[(size_t) r.src] > 0 ? 1.0 / strength[(size_t) r.src] : 0.0;
			t = scale * x[in];
			if (pass == 0)
				(*y)[out] += t;
			(*mag)[out] += fabs(t);
			(*terms)[out]++;
		}
}

/* One run of a chain on an engine of its own: per step, the three products of x, the scores, the
 * engine's report after the apply and the folds the apply made. */
struct ChainRun
{
	std::vector<std::vector<double>> products;	/* [step * 3 + product] */
	std::vector<std::vector<double>> scores;
	std::vector<PrGpuReport> layers;
	std::vector<int64_t> folds;
};

/* The chain's products: PULL_NORMALIZED, PULL, PUSH. */
static const PrProduct chain_products[3] = {PR_PRODUCT_PULL_NORMALIZED, PR_PRODUCT_PULL, PR_PRODUCT_PUSH};

/*
 * Runs the chain of deltas on a new engine (the layout, or auto by the model: the same choice every
 * run): per step, the engine prepared on g for the three products (the delta before applied again
 * to that layout), given the step's delta, its products of x (slot 1 poisoned first), then
 * absent_scores with the step's delta.
 */
static PrStatus
chain_run(const PrGraph *g, PrGpuPrecision precision, const Layout *layout, const PrGraphDelta *deltas,
		  const std::vector<double> &x, const int64_t *ids, double tol, ChainRun *out, PrError *err)
{
	PrEngine   *e;
	PrStatus	st = PR_OK;

	if ((e = delta_case_engine(g, precision, layout, NULL, err, true)) == NULL)
		return PR_ERR_ENGINE;
	for (int i = 0; i < CHAIN_STEPS && st == PR_OK; i++)
	{
		PrGpuReport before,
					after;
		std::vector<double> scores;

		st = e->ops->prepare(e, g, 1, 3, PR_NEED_PULL_NORMALIZED | PR_NEED_PULL | PR_NEED_PUSH, err);
		if (st == PR_OK)
			st = pr_gpu_engine_report(e, &before, err);
		if (st == PR_OK)
			st = e->ops->apply_delta(e, &deltas[i], err);
		if (st == PR_OK)
			st = pr_gpu_engine_report(e, &after, err);
		if (st == PR_OK)
			st = e->ops->upload(e, 0, x.data(), err);
		for (int p = 0; p < 3 && st == PR_OK; p++)
		{
			std::vector<double> y((size_t) g->n_nodes);

			st = e->ops->fill(e, 1, NAN, err);
			if (st == PR_OK)
				st = e->ops->product(e, chain_products[p], 0, 1, err);
			if (st == PR_OK)
				st = e->ops->download(e, 1, y.data(), err);
			out->products.push_back(y);
		}
		if (st == PR_OK)
		{
			out->layers.push_back(before);
			out->layers.push_back(after);
			out->folds.push_back(after.delta_folds - before.delta_folds);
			st = absent_scores(e, g, &deltas[i], ids, tol, &scores, err);
			out->scores.push_back(scores);
		}
	}
	e->ops->release(e);
	return st;
}

/*
 * A chain of deltas on one GPU engine (apply_delta after apply_delta, its layers: frozen and
 * recent): D1 (g -> X1, absent nodes), D2 (D1 and more changes, some cancelling D1's, an absent
 * node back and another gone: the recent layer over the frozen D1), D3 (past the fold bound: the
 * frozen layer rebuilt), the empty delta (g again).  After each apply: the three products against
 * X's rows (within the precision's rounding bound, every entry written), the layers the report
 * shows (recent = the delta less frozen's edges, or a fold), and absent_scores against the CPU
 * engine prepared on X built afresh (absent entries exactly 0); a second run of the chain on a new
 * engine gives the same bits.  A layout that takes no delta refuses it.
 */
static void
run_chain_case(const EdgeList &el, const PrGraph *g, PrGpuPrecision precision, const Layout *layout)
{
	const char *prec = precision == PR_GPU_FP64 ? "fp64" : "fp32";
	const char *names[3] = {"pull-normalized", "pull", "push"};
	double		tol = precision == PR_GPU_FP64 ? 1e-10 : 1e-6;
	double		bound = precision == PR_GPU_FP64 ? 1e-7 : 1e-3;
	double		eps = precision == PR_GPU_FP64 ? 1.2e-16 : 6.0e-8;
	int64_t		n = g->n_nodes;
	const int32_t keep[5] = {0, (int32_t) (n / 2), (int32_t) (n - 1), 1, (int32_t) (n / 3)};
	int64_t		ids[5];
	std::vector<std::vector<PrEdgeChange>> rows = chain_rows(g, keep);
	PrGraph		xs[CHAIN_STEPS];
	PrGraphDelta deltas[CHAIN_STEPS];
	std::vector<double> want[CHAIN_STEPS];
	std::vector<double> x((size_t) n);
	ChainRun	runs[2];
	PrError		err;
	PrEngine   *cpu = pr_cpu_engine_create(2, &pr_malloc_allocator, &err);
	PrStatus	st;
	bool		ok = cpu != NULL;
	int			layered = 0;
	uint64_t	seed = 31;
	char		what[128], detail[512];

	snprintf(what, sizeof(what), "chain %s", layout ? layout->name : "auto");
	for (int i = 0; i < 5; i++)
		ids[i] = g->node_ids[keep[i]];
	for (int64_t v = 0; v < n; v++)
		x[(size_t) v] = signed_unit(&seed);
	for (int i = 0; i < CHAIN_STEPS; i++)
	{
		memset(&xs[i], 0, sizeof(xs[i]));
		memset(&deltas[i], 0, sizeof(deltas[i]));
	}
	for (int i = 0; i < CHAIN_STEPS && ok; i++)
		ok = delta_to_rows(g, rows[(size_t) i], &xs[i], &deltas[i], &err) &&
			absent_scores(cpu, &xs[i], NULL, ids, tol * 1e-3, &want[i], &err) == PR_OK;
	if (ok)
	{
		/* D2 less D1 just within the bound: D2 layered; D3 (larger) past it */
		std::vector<PrEdgeChange> d21((size_t) (deltas[1].n_edges + deltas[0].n_edges + 1));
		int64_t		recent2 = pr_graph_delta_edges_diff(deltas[1].edges, deltas[1].n_edges, deltas[0].edges,
													deltas[0].n_edges, d21.data());

		chain_fold_edges = recent2 - deltas[0].n_edges / 4 > 1 ? recent2 - deltas[0].n_edges / 4 : 1;
	}
	st = ok ? chain_run(g, precision, layout, deltas, x, ids, tol, &runs[0], &err) : PR_ERR_ENGINE;
	if (!ok)
		report(false, el.name, prec, 1, what, err.message);
	else if (st == PR_ERR_UNSUPPORTED && (strstr(err.message, "cuSPARSE") != NULL || strstr(err.message, "streamed") != NULL))
	{
		snprintf(detail, sizeof(detail), "refused (%.200s)", err.message);
		report(true, el.name, prec, 1, what, detail);
	}
	else if (st != PR_OK)
		report(false, el.name, prec, 1, what, err.message);
	else if ((st = chain_run(g, precision, layout, deltas, x, ids, tol, &runs[1], &err)) != PR_OK)
		report(false, el.name, prec, 1, what, err.message);
	else
	{
		for (int i = 0; i < CHAIN_STEPS; i++)
		{
			const PrGpuReport &before = runs[0].layers[(size_t) (2 * i)];
			const PrGpuReport &after = runs[0].layers[(size_t) (2 * i + 1)];
			std::vector<PrEdgeChange> diff((size_t) (deltas[i].n_edges + before.delta_frozen_edges + 1));
			const PrGraphDelta *frozen = i > 0 ? &deltas[i - 1] : NULL;
			int64_t		recent = frozen == NULL ? deltas[i].n_edges :
				pr_graph_delta_edges_diff(deltas[i].edges, deltas[i].n_edges, frozen->edges, frozen->n_edges, diff.data());
			bool		fold = i == 0 || deltas[i].n_edges == 0 || recent > before.delta_frozen_edges / 4 + chain_fold_edges;
			bool		layers_ok = frozen == NULL || before.delta_frozen_edges == frozen->n_edges;
			int64_t		bad = 0,
						nonzero_absent = 0;
			double		worst_product = 0.0,
						worst;
			bool		same = true;

			layers_ok = layers_ok && runs[0].folds[(size_t) i] == (fold ? 1 : 0) &&
				after.delta_frozen_edges == (fold ? deltas[i].n_edges : before.delta_frozen_edges) &&
				after.delta_recent_edges == (fold ? 0 : recent);
			layered += !fold && recent > 0;
			for (int p = 0; p < 3; p++)
			{
				const std::vector<double> &got = runs[0].products[(size_t) (3 * i + p)];
				std::vector<double> ref, mag;
				std::vector<int64_t> terms;

				/* the engine adds the frozen layer's terms (this delta's, or the previous one's) and the
				 * recent one's (this delta's less the previous one's): at most this delta's once and
				 * the previous one's twice */
				const PrGraphDelta *layers[3] = {&deltas[i], i > 0 ? &deltas[i - 1] : NULL, i > 0 ? &deltas[i - 1] : NULL};

				rows_product(g, rows[(size_t) i], chain_products[p], x, layers, i > 0 ? 3 : 1, &ref, &mag, &terms);
				for (size_t v = 0; v < (size_t) n; v++)
				{
					double		d = fabs(got[v] - ref[v]);

					if (!(d <= eps * (double) (terms[v] + 4) * mag[v] + 1e-300))
						bad++;
					else if (mag[v] > 0)
						worst_product = fmax(worst_product, d / mag[v]);
				}
				same = same && memcmp(got.data(), runs[1].products[(size_t) (3 * i + p)].data(), got.size() * 8) == 0;
			}
			worst = absent_apart(g, &xs[i], runs[0].scores[(size_t) i], want[i], &nonzero_absent);
			same = same && memcmp(runs[0].scores[(size_t) i].data(), runs[1].scores[(size_t) i].data(),
								  runs[0].scores[(size_t) i].size() * 8) == 0;
			snprintf(detail, sizeof(detail),
					 "D%d: %lld edges, %lld absent; layers frozen %lld -> %lld, recent %lld (%s%s); products (%s, %s, %s) "
					 "%lld entries off, worst %.1e of |terms|; scores worst column L1 %.2e (bound %.0e), %lld absent "
					 "entries not 0; second run %s",
					 i + 1, (long long) deltas[i].n_edges, (long long) deltas[i].n_absent,
					 (long long) before.delta_frozen_edges, (long long) after.delta_frozen_edges,
					 (long long) after.delta_recent_edges, fold ? "fold" : "layered", layers_ok ? "" : ": NOT AS EXPECTED",
					 names[0], names[1], names[2], (long long) bad, worst_product, worst, bound,
					 (long long) nonzero_absent, same ? "bit-identical" : "DIFFERS");
			report(layers_ok && bad == 0 && worst <= bound && nonzero_absent == 0 && same, el.name, prec, 1, what,
				   detail);
		}
		snprintf(detail, sizeof(detail), "%d of the applies served a recent layer over the frozen one", layered);
		report(layered > 0, el.name, prec, 1, what, detail);
	}
	if (cpu != NULL)
		cpu->ops->release(cpu);
	for (int i = 0; i < CHAIN_STEPS; i++)
	{
		pr_graph_delta_free(&deltas[i], &pr_malloc_allocator);
		pr_graph_free(&xs[i], &pr_malloc_allocator);
	}
}

/*
 * The delta of g (unweighted) plus inserted edges (g's ids, count 1 each): netted in (dst, src)
 * order, the sources' out-strengths g's plus their inserts (exact), no absent node.
 */
static bool
insert_delta(const PrGraph *g, const std::vector<PrEdgeChange> &inserted, PrGraphDelta *delta)
{
	std::vector<PrEdgeChange> netted = net_changes(inserted);
	std::vector<int32_t> sources;

	for (const PrEdgeChange &c : inserted)
		sources.push_back((int32_t) c.src);
	std::sort(sources.begin(), sources.end());
	if (!pr_graph_delta_alloc(delta, g->n_nodes, (int64_t) netted.size(), (int64_t) sources.size(), 0,
							  &pr_malloc_allocator))
		return false;
	memcpy(delta->edges, netted.data(), sizeof(PrEdgeChange) * netted.size());
	delta->n_edges = (int64_t) netted.size();
	for (size_t i = 0; i < sources.size();)
	{
		size_t		j = i;

		while (j < sources.size() && sources[j] == sources[i])
			j++;
		delta->sources[delta->n_sources] = sources[i];
		delta->out_degree[delta->n_sources] = (int64_t) g->out_strength[sources[i]] + (int64_t) (j - i);
		delta->out_strength[delta->n_sources] = (double) delta->out_degree[delta->n_sources];
		delta->n_sources++;
		i = j;
	}
	return true;
}

/*
 * The cost of apply_delta as a delta grows (printed, not asserted: the lead reads it on the GPU):
 * R-MAT 20 (1 M ids, 8 M edges), the engine prepared for PageRank (fp32, the product's settings),
 * given 100 deltas in turn, each the one before plus 2,000 inserted edges; the time of each of the
 * first and last ten applies, the mean, the folds, and one apply of the last delta onto the
 * prepared graph alone (every row built, as a fold or the whole-delta apply does).
 */
static void
run_delta_timing(void)
{
	GenSpec		spec = gen_rmat(20, (int64_t) 8 << 20, 99, false);
	std::vector<int64_t> src((size_t) spec.m), dst((size_t) spec.m);
	std::vector<PrEdgeChange> inserted;
	std::vector<double> seconds;
	PrBuildOptions bo;
	PrGraph		g;
	PrGraphDelta last;
	PrGpuOptions go;
	PrGpuReport rep;
	PrError		err;
	PrEngine   *e = NULL;
	PrStatus	st;
	uint64_t	seed = 5;
	double		whole = -1.0,
				sum = 0.0;
	char		detail[256];

	gen_edges(&spec, src.data(), dst.data(), 8);
	memset(&bo, 0, sizeof(bo));
	bo.n_threads = 8;
	memset(&last, 0, sizeof(last));
	st = pr_graph_build(src.data(), dst.data(), NULL, src.size(), &bo, &pr_malloc_allocator, &g, &err);
	if (st != PR_OK)
	{
		report(false, "rmat20", "fp32", 1, "delta timing", err.message);
		return;
	}
	pr_gpu_options_init(&go);
	go.precision = PR_GPU_FP32;
	e = pr_gpu_engine_create(&go, &err);
	st = e == NULL ? PR_ERR_ENGINE : pr_pagerank_prepare(e, &g, 1, &err);
	for (int j = 0; j < 100 && st == PR_OK; j++)
	{
		double		t;

		insert_rows(&g, 2000, {}, &seed, &inserted);
		pr_graph_delta_free(&last, &pr_malloc_allocator);
		if (!insert_delta(&g, inserted, &last))
			st = pr_error_set(&err, PR_ERR_NOMEM, "out of memory for a delta");
		t = pr_clock_seconds();
		if (st == PR_OK)
			st = e->ops->apply_delta(e, &last, &err);
		seconds.push_back(pr_clock_seconds() - t);
		sum += seconds.back();
	}
	if (st == PR_OK && (st = e->ops->apply_delta(e, NULL, &err)) == PR_OK)
	{
		double		t = pr_clock_seconds();

		st = e->ops->apply_delta(e, &last, &err);
		whole = pr_clock_seconds() - t;
	}
	if (st == PR_OK)
		st = pr_gpu_engine_report(e, &rep, &err);
	if (st == PR_OK)
	{
		printf("# delta timing (rmat20, %lld nodes, %lld edges, %s): apply_delta of deltas growing by 2,000 edges, ms:\n#  first ten:",
			   (long long) g.n_nodes, (long long) g.n_edges, rep.engine);
		for (size_t j = 0; j < 10; j++)
			printf(" %.2f", seconds[j] * 1e3);
		printf("\n#  last ten: ");
		for (size_t j = seconds.size() - 10; j < seconds.size(); j++)
			printf(" %.2f", seconds[j] * 1e3);
		printf("\n#  mean %.2f ms over %zu applies, %lld folds; the last delta (%lld edges) applied whole: %.2f ms\n",
			   sum * 1e3 / (double) seconds.size(), seconds.size(), (long long) rep.delta_folds - 2,
			   (long long) last.n_edges, whole * 1e3);
	}
	snprintf(detail, sizeof(detail), "%s", st == PR_OK ? "" : err.message);
	report(st == PR_OK, "rmat20", "fp32", 1, "delta timing", detail);
	if (e != NULL)
		e->ops->release(e);
	pr_graph_delta_free(&last, &pr_malloc_allocator);
	pr_graph_free(&g, &pr_malloc_allocator);
}

int
main(int argc, char **argv)
{
	const int	ks[] = {1, 2, 3, 8, 16, 32, 33};
	int			count = 0;
	bool		only_delta = argc > 1 && strcmp(argv[1], "delta") == 0;
	std::vector<EdgeList> lists;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0)
	{
		test_record(false, "no CUDA device");
		return test_summary();
	}
	lists.push_back(rmat_edges("rmat11", 11, false, 11));
	lists.push_back(rmat_edges("rmat11-weighted", 11, true, 12));
	lists.push_back(hub_edges("hubs", false, 13));
	lists.push_back(hub_edges("hubs-weighted", true, 14));
	for (size_t li = 0; li < lists.size(); li++)
	{
		const EdgeList &el = lists[li];
		PrBuildOptions bo;
		PrGraph		g;
		PrError		err;
		int64_t		longest = 0;

		memset(&bo, 0, sizeof(bo));
		bo.out_edges = true;
		bo.n_threads = 2;
		if (pr_graph_build(el.src.data(), el.dst.data(), el.weight.empty() ? NULL : el.weight.data(),
						   el.src.size(), &bo, &pr_malloc_allocator, &g, &err) != PR_OK)
		{
			report(false, el.name, "-", 0, "build", err.message);
			continue;
		}
		for (int64_t r = 0; r < g.n_nodes; r++)
			longest = g.in_ptr[r + 1] - g.in_ptr[r] > longest ? g.in_ptr[r + 1] - g.in_ptr[r] : longest;
		printf("# %s: %lld nodes, %lld edges, %lld dangling, longest in-row %lld\n", el.name,
			   (long long) g.n_nodes, (long long) g.n_edges, (long long) g.n_dangling, (long long) longest);
		if (!only_delta)
		{
			for (size_t ki = 0; ki < sizeof(ks) / sizeof(ks[0]); ki++)
			{
				run_case(el, &g, PR_GPU_FP32, ks[ki], 100 * li + ki);
				run_case(el, &g, PR_GPU_FP64, ks[ki], 100 * li + ki + 50);
			}
			for (const Layout &lay : layouts)
			{
				run_case(el, &g, PR_GPU_FP32, 1, 100 * li + 7, &lay);
				run_case(el, &g, PR_GPU_FP64, 1, 100 * li + 57, &lay);
			}
			for (const Streaming &sm : streamings)
			{
				for (int sk : {1, 3, 8})
				{
					run_case(el, &g, PR_GPU_FP32, sk, 100 * li + 9, NULL, &sm);
					run_case(el, &g, PR_GPU_FP64, sk, 100 * li + 59, NULL, &sm);
				}
				run_streamed_algorithms(el, &g, PR_GPU_FP32, &sm);
				run_streamed_algorithms(el, &g, PR_GPU_FP64, &sm);
			}
			for (int uk : {2, 3, 8, 16, 32})
				for (int64_t per_col : {(int64_t) 1, (int64_t) 3, g.n_nodes / 2 + 1})
				{
					run_update_case(el, &g, PR_GPU_FP32, uk, per_col, 1000 * li + uk);
					run_update_case(el, &g, PR_GPU_FP64, uk, per_col, 1000 * li + uk + 500);
				}
			run_mixing_case(el, &g, PR_GPU_FP32);
			run_mixing_case(el, &g, PR_GPU_FP64);
			for (int wk : {1, 8})
				for (WarmLocal local : {LOCAL_PUSH, LOCAL_PUSH_FIRST, LOCAL_PUSH_FIRST_PRODUCT, LOCAL_TWO_PASSES})
				{
					if (wk == 1 && local != LOCAL_PUSH)
						continue;	/* k = 1: no restart_local either way */
					run_warm_case(el, &g, PR_GPU_FP32, wk, local);
					run_warm_case(el, &g, PR_GPU_FP64, wk, local);
				}
		}
		for (PrGpuPrecision p : {PR_GPU_FP32, PR_GPU_FP64})
		{
			run_delta_case(el, &g, p, NULL, NULL);
			for (const Layout &lay : layouts)
				run_delta_case(el, &g, p, &lay, NULL);
			run_delta_case(el, &g, p, NULL, &streamings[0]);
			run_absent_case(el, &g, p, NULL);
			for (const Layout &lay : layouts)
				run_absent_case(el, &g, p, &lay);
			run_chain_case(el, &g, p, NULL);
			for (const Layout &lay : layouts)
				run_chain_case(el, &g, p, &lay);
		}
		pr_graph_free(&g, &pr_malloc_allocator);
	}
	run_delta_timing();
	return test_summary();
}
