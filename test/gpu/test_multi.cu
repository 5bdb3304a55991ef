/*
 * test_multi.cu — the multi-GPU engine (pr_multi.h: one GPU engine per GPU composed by
 * core/pr_parts.h in the parts' order by out-degree, rows copied between the GPUs after a pull product,
 * partial sums added by NCCL after a push product) on 2 .. N GPUs (N = the visible devices, at
 * most PR_PARTS_MAX) against the CPU engine through the one driver (pr_driver.h): PageRank, RWR
 * from k = 3 sources (one of them dangling), the same RWR with the warm start asked for (whether
 * it started warm is printed), and HITS, on an R-MAT graph (unweighted) and a uniform one
 * (weighted), fp64 and fp32, in two layouts of the parts: the measured choice (auto) and the binned
 * CSR, both in the parts' order (the exchange straight into the slots); and PageRank with the parts streamed from
 * host memory (a memory budget of the largest part's streamed estimate, below every resident need).  Every run
 * converges (fp32 may stop stagnant instead); its scores are within L1 1e-10 (fp64) / 1e-5 (fp32)
 * of the CPU's per column (HITS 1e-8 / 1e-4); PageRank run twice gives the same bits; in fp64 its
 * top 10 through pr_pagerank_top are the CPU's.  The engine's name is "gpu-multi(G)", its split
 * covers the nodes; bad GPU counts are refused.  Needs 2 or more GPUs (fewer: nothing runs,
 * "0 passed, 0 failed"):
 *
 *   make -C cuda -f Makefile.multi check-multi     (NCCL_NVLS_ENABLE=0 in the environment where
 *                                                  NVLink multicast must stay off)
 *
 * Prints a line per case (PASS / FAIL) and "N passed, N failed" last; exits non-zero on a failure.
 */
#include "pr_driver.h"
#include "pr_gpu.h"
#include "pr_graph.h"
#include "pr_multi.h"
#include "pr_parts.h"
#include "pr_residency.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include "graph_gen.h"
#include "test_harness.h"

/* RWR sources of the test, the damping of every run. */
#define RWR_K 3
#define ALPHA 0.85

/* The algorithms a case runs. */
enum Algo
{
	ALGO_PAGERANK = 0,
	ALGO_RWR,
	ALGO_RWR_WARM,
	ALGO_HITS,
	N_ALGOS
};

static const char *const algo_names[N_ALGOS] = {"PageRank", "RWR k=3", "RWR k=3 warm start", "HITS"};

/* A layout of the parts: kernel and order of PrGpuOptions, or the parts streamed. */
struct Layout
{
	const char *name;
	PrGpuKernel kernel;
	PrGpuOrder	order;
	bool		streamed;
};

static const Layout layouts[] = {
	{"auto", PR_GPU_KERNEL_AUTO, PR_GPU_ORDER_DEGREE, false},
	{"binned/natural", PR_GPU_KERNEL_BINNED, PR_GPU_ORDER_NATURAL, false},
	{"streamed", PR_GPU_KERNEL_AUTO, PR_GPU_ORDER_DEGREE, true},
};

/* A graph and the CPU engine's answers on it. */
struct Case
{
	const char *name;
	PrGraph		g;
	std::vector<int64_t> rwr_ptr;
	std::vector<int32_t> rwr_node;
	std::vector<double> rwr_weight;
	PrRestart	uniform;
	PrRestart	rwr;
	std::vector<double> want[N_ALGOS];	/* n * k scores (HITS: hubs) */
	std::vector<double> want_auth;		/* HITS authorities */
	std::vector<int32_t> want_top;		/* PageRank's top 10 */
};

/* Records one case's outcome. */
static void
report(bool ok, const char *graph, const char *what, const char *detail)
{
	printf("%s %s %s%s%s\n", ok ? "PASS" : "FAIL", graph, what, detail[0] ? ": " : "", detail);
	test_count(ok);
}

/* Iteration options: tolerance in L1, checked every iteration (warm start for ALGO_RWR_WARM). */
static PrIterOptions
iter_options(double tolerance, bool warm)
{
	PrIterOptions o;

	memset(&o, 0, sizeof(o));
	o.tolerance = tolerance;
	o.norm = PR_NORM_L1;
	o.max_iterations = 5000;
	o.check_every = 1;
	o.warm_start = warm;
	return o;
}

/* Builds a graph (out-edges too) from m generated edges and optional weights (multiples of 1/4). */
static bool
build_graph(const GenSpec *spec, bool weighted, uint64_t seed, PrGraph *g)
{
	std::vector<int64_t> src((size_t) spec->m),
				dst((size_t) spec->m);
	std::vector<double> w;
	PrBuildOptions bo;
	PrError		err;

	gen_edges(spec, src.data(), dst.data(), 2);
	for (int64_t i = 0; weighted && i < spec->m; i++)
		w.push_back(0.25 * (double) (1 + gen_random(&seed) % 8));
	memset(&bo, 0, sizeof(bo));
	bo.out_edges = true;
	bo.n_threads = 2;
	if (pr_graph_build(src.data(), dst.data(), weighted ? w.data() : NULL, src.size(), &bo, &pr_malloc_allocator,
					   g, &err) != PR_OK)
	{
		test_check(false, "pr_graph_build: %s", err.message);
		return false;
	}
	return true;
}

/* The restarts of a case: uniform, and RWR_K random sources (the last a dangling node when there is one). */
static void
make_restarts(Case *c, uint64_t seed)
{
	memset(&c->uniform, 0, sizeof(c->uniform));
	c->uniform.uniform = true;
	c->uniform.k = 1;
	c->rwr_node.resize(RWR_K);
	for (int32_t &v : c->rwr_node)
		v = (int32_t) (gen_random(&seed) % (uint64_t) c->g.n_nodes);
	if (c->g.n_dangling > 0)
		c->rwr_node.back() = c->g.dangling[0];
	c->rwr_weight.assign(RWR_K, 1.0);
	c->rwr_ptr.resize(RWR_K + 1);
	for (int j = 0; j <= RWR_K; j++)
		c->rwr_ptr[(size_t) j] = j;
	memset(&c->rwr, 0, sizeof(c->rwr));
	c->rwr.k = RWR_K;
	c->rwr.ptr = c->rwr_ptr.data();
	c->rwr.node = c->rwr_node.data();
	c->rwr.weight = c->rwr_weight.data();
}

/* Runs one algorithm on an engine into scores (and auth for HITS). */
static PrStatus
run_algo(PrEngine *e, Case *c, Algo a, const PrIterOptions *o, std::vector<double> &scores,
		 std::vector<double> &auth, PrRunStats *stats, PrError *err)
{
	int64_t		n = c->g.n_nodes;

	if (a == ALGO_HITS)
	{
		scores.assign((size_t) n, 0.0);
		auth.assign((size_t) n, 0.0);
		return pr_hits(e, &c->g, o, scores.data(), auth.data(), stats, err);
	}
	scores.assign((size_t) n * (a == ALGO_PAGERANK ? 1 : RWR_K), 0.0);
	return pr_pagerank(e, &c->g, ALPHA, a == ALGO_PAGERANK ? &c->uniform : &c->rwr, o, scores.data(), stats, err);
}

/* The largest L1 distance of a column of two n x k row-major arrays. */
static double
worst_column_l1(const std::vector<double> &a, const std::vector<double> &b, int64_t n, int k)
{
	double		worst = 0.0;

	for (int j = 0; j < k; j++)
	{
		double		d = 0.0;

		for (int64_t v = 0; v < n; v++)
			d += fabs(a[(size_t) (v * k + j)] - b[(size_t) (v * k + j)]);
		worst = fmax(worst, d);
	}
	return worst;
}

/* The CPU engine's answers, run to L1 1e-13. */
static bool
reference(PrEngine *cpu, Case *c)
{
	PrIterOptions o = iter_options(1e-13, false);
	std::vector<double> unused;
	PrRunStats	st;
	PrError		err;
	double		top_value[10];

	for (int a = 0; a < N_ALGOS; a++)
	{
		if (a == ALGO_RWR_WARM)
			continue;			/* the same answer as ALGO_RWR */
		if (run_algo(cpu, c, (Algo) a, &o, c->want[a], a == ALGO_HITS ? c->want_auth : unused, &st, &err) != PR_OK)
		{
			test_check(false, "%s: CPU %s: %s", c->name, algo_names[a], err.message);
			return false;
		}
	}
	c->want[ALGO_RWR_WARM] = c->want[ALGO_RWR];
	c->want_top.assign(10, -1);
	if (pr_pagerank_top(cpu, &c->g, ALPHA, &c->uniform, &o, 10, c->want_top.data(), top_value, &st, &err) != PR_OK)
	{
		test_check(false, "%s: CPU top 10: %s", c->name, err.message);
		return false;
	}
	return true;
}

/* The parts' layouts ("gpu-binned natural ids | ..."), for the detail of a line. */
static void
describe_parts(PrEngine *e, int n_gpus, char *buf, size_t size)
{
	size_t		used = 0;

	buf[0] = '\0';
	for (int p = 0; p < n_gpus && used < size; p++)
	{
		PrGpuReport rep;
		PrError		err;

		if (pr_gpu_engine_report(pr_parts_engine_part(e, p), &rep, &err) == PR_OK)
		{
			const char *order = strstr(rep.format, "natural ids") ? "natural" : "private order";

			used += (size_t) snprintf(buf + used, size - used, "%s%s %s %s", p > 0 ? " | " : "", rep.engine,
									  rep.residency, order);
		}
	}
}

/*
 * The memory budget that streams every part of a PageRank run on n_gpus GPUs: each part's
 * matrices as the last split said (edges), the largest of the parts' streamed estimates (the
 * tightest budget: the streamed engine allocates what pr_residency_streamed_bytes sizes, so a part
 * fits its estimate exactly); 0 when some part would be resident at it.
 */
static size_t
streaming_budget(const Case *c, const PrPartsReport *split, PrGpuPrecision precision)
{
	size_t		most_streamed = 0,
				least_resident = SIZE_MAX;

	for (int p = 0; p < split->n_parts; p++)
	{
		PrResidencyInput in;
		PrResidencyChoice choice;

		memset(&in, 0, sizeof(in));
		in.nodes = c->g.n_nodes;
		in.edges = split->edges[p];
		in.k = 1;
		in.slots = 2;
		in.elem = precision == PR_GPU_FP64 ? 8 : 4;
		in.weighted = c->g.in_weight != NULL;
		in.free_bytes = (size_t) 1 << 50;
		pr_residency_choose(&in, &choice);
		most_streamed = choice.streamed_bytes > most_streamed ? choice.streamed_bytes : most_streamed;
		least_resident = choice.resident_bytes < least_resident ? choice.resident_bytes : least_resident;
	}
	return least_resident > most_streamed ? most_streamed : 0;
}

/*
 * One engine over n_gpus GPUs with a layout and a precision, every algorithm against the CPU's
 * answers (streamed: PageRank alone, the budget from split, the parts' split of an earlier run).
 */
static void
run_engine(PrMultiComms *comms, Case *c, int n_gpus, PrGpuPrecision precision, const Layout *lay,
		   PrPartsReport *split)
{
	bool		fp64 = precision == PR_GPU_FP64;
	int64_t		n = c->g.n_nodes;
	char		name[160],
				expect[32],
				parts[256],
				detail[512];
	PrGpuOptions go;
	PrEngine   *e;
	PrError		err;

	snprintf(name, sizeof(name), "%s %s G=%d %s", c->name, fp64 ? "fp64" : "fp32", n_gpus, lay->name);
	snprintf(expect, sizeof(expect), "gpu-multi(%d)", n_gpus);
	pr_gpu_options_init(&go);
	go.precision = precision;
	go.kernel = lay->kernel;
	go.order = lay->order;
	if (lay->streamed)
	{
		go.memory_budget = streaming_budget(c, split, precision);
		if (go.memory_budget == 0)
		{
			printf("# %s: no budget streams every part and keeps none resident; skipped\n", name);
			return;
		}
	}
	e = pr_multi_engine_create(comms, &go, n_gpus, &err);
	if (e == NULL)
	{
		report(false, name, "engine", err.message);
		return;
	}
	for (int a = 0; a < N_ALGOS; a++)
	{
		PrIterOptions o = iter_options(fp64 ? 1e-12 : 1e-6, a == ALGO_RWR_WARM);
		std::vector<double> got,
					auth,
					again,
					unused;
		PrRunStats	st;
		int			k = a == ALGO_PAGERANK || a == ALGO_HITS ? 1 : RWR_K;
		double		bound = a == ALGO_HITS ? (fp64 ? 1e-8 : 1e-4) : (fp64 ? 1e-10 : 1e-5);
		double		worst;
		bool		ok;

		if (lay->streamed && a != ALGO_PAGERANK)
			continue;
		if (a == ALGO_RWR_WARM && run_algo(e, c, ALGO_RWR, &o, got, auth, &st, &err) != PR_OK)
		{
			/* a run first, so the warm start finds the far-field vector kept */
			report(false, name, algo_names[a], err.message);
			continue;
		}
		if (run_algo(e, c, (Algo) a, &o, got, auth, &st, &err) != PR_OK)
		{
			report(false, name, algo_names[a], err.message);
			continue;
		}
		worst = worst_column_l1(got, c->want[a], n, k);
		if (a == ALGO_HITS)
			worst = fmax(worst, worst_column_l1(auth, c->want_auth, n, 1));
		describe_parts(e, n_gpus, parts, sizeof(parts));
		ok = worst <= bound && st.engine != NULL && strcmp(st.engine, expect) == 0 && (st.converged || !fp64);
		if (lay->streamed)
			ok = ok && strstr(parts, "resident") == NULL;
		snprintf(detail, sizeof(detail), "L1 to the CPU %.2e (bound %.0e), %d iterations%s%s, engine %s; parts: %s",
				 worst, bound, st.iterations, st.converged ? "" : " (not converged)",
				 a == ALGO_RWR_WARM ? (st.warm_started ? ", warm started" : ", NOT warm started") : "",
				 st.engine ? st.engine : "?", parts);
		report(ok, name, algo_names[a], detail);
		if (a == ALGO_PAGERANK)
		{
			PrRunStats	st2;
			int32_t		top[10];
			double		top_value[10];

			ok = run_algo(e, c, ALGO_PAGERANK, &o, again, unused, &st2, &err) == PR_OK &&
				again.size() == got.size() && memcmp(again.data(), got.data(), got.size() * sizeof(double)) == 0;
			report(ok, name, "PageRank twice, same bits", ok ? "" : err.message);
			if (fp64)
			{
				ok = pr_pagerank_top(e, &c->g, ALPHA, &c->uniform, &o, 10, top, top_value, &st2, &err) == PR_OK &&
					memcmp(top, c->want_top.data(), sizeof(top)) == 0;
				report(ok, name, "PageRank top 10 as the CPU's", ok ? "" : err.message);
			}
			if (!lay->streamed)
			{
				ok = pr_parts_engine_report(e, split, &err) == PR_OK && split->n_parts == n_gpus &&
					split->row_begin[0] == 0 && split->row_begin[n_gpus] == n;
				report(ok, name, "split over the GPUs covers the nodes", ok ? "" : err.message);
			}
		}
	}
	e->ops->release(e);
}

int
main(void)
{
	int			visible = pr_gpu_device_count();
	int			most = visible < PR_PARTS_MAX ? visible : PR_PARTS_MAX;
	const PrGpuPrecision precisions[2] = {PR_GPU_FP64, PR_GPU_FP32};
	Case		cases[2];
	PrMultiComms *comms;
	PrEngine   *cpu;
	PrError		err;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (most < 2)
	{
		printf("# %d GPU(s) visible: the multi-GPU engine needs 2 or more; nothing to run\n", visible);
		return test_summary();
	}
	comms = pr_multi_comms_create(most, &err);
	if (comms == NULL)
	{
		test_check(false, "pr_multi_comms_create(%d): %s", most, err.message);
		return test_summary();
	}
	report(pr_multi_comms_count(comms) == most, "-", "communicators over every visible GPU", "");
	report(pr_multi_engine_create(comms, NULL, 1, &err) == NULL && err.status == PR_ERR_INVALID, "-",
		   "one GPU refused", "");
	report(pr_multi_engine_create(comms, NULL, most + 1, &err) == NULL && err.status == PR_ERR_INVALID, "-",
		   "more GPUs than the communicators refused", "");
	cpu = pr_cpu_engine_create(0, &pr_malloc_allocator, &err);
	{
		GenSpec		rmat = gen_rmat(12, (int64_t) 16 << 12, 41, true);
		GenSpec		uniform = gen_uniform(3000, 24000, 42);

		cases[0].name = "rmat12";
		cases[1].name = "uniform3000-weighted";
		if (cpu == NULL || !build_graph(&rmat, false, 43, &cases[0].g) || !build_graph(&uniform, true, 44, &cases[1].g))
		{
			test_check(false, "CPU engine or graphs: %s", cpu == NULL ? err.message : "build failed");
			return test_summary();
		}
	}
	for (Case &c : cases)
	{
		bool		have_reference;

		make_restarts(&c, 45);
		printf("# %s: %lld nodes, %lld edges, %lld dangling\n", c.name, (long long) c.g.n_nodes,
			   (long long) c.g.n_edges, (long long) c.g.n_dangling);
		have_reference = reference(cpu, &c);
		for (int n_gpus = 2; have_reference && n_gpus <= most; n_gpus++)
			for (PrGpuPrecision precision : precisions)
			{
				PrPartsReport split;

				memset(&split, 0, sizeof(split));
				for (const Layout &lay : layouts)
					run_engine(comms, &c, n_gpus, precision, &lay, &split);
			}
		pr_graph_free(&c.g, &pr_malloc_allocator);
	}
	cpu->ops->release(cpu);
	pr_multi_comms_free(comms);
	return test_summary();
}
