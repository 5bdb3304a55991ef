/*
 * pr_bench.cu — the GPU engine benchmark: one graph, every kernel, checked against the CPU engine.
 *
 *   pr_bench --graph NAME | --rmat SCALE | --er SCALE | --file EDGES.tsv[.gz]  [--order natural|bfs|shuffled]
 *            [options]
 *   pr_bench --calibrate MODEL.tsv        (measures the performance-model table of this GPU)
 *   pr_bench --h2d-bandwidth MB           (only the pinned host -> device bandwidth, one copy of MB)
 *   pr_bench --rmat SCALE --k 8,16        (the k-column product, SpMM, vs cusparseSpMM and k SpMVs,
 *                                          one RWR iteration (product + update) and one RWR batch
 *                                          as the service runs it (iterations + top 10 of each column);
 *                                          --spmm-variants: also other chunk sizes of long rows;
 *                                          --push-caps N1,N2: RWR batches with push lists of N entries)
 *   pr_bench --rmat SCALE --streamed      (PageRank on the streamed engine, registered and staged:
 *                                          ms per iteration, bytes streamed per iteration, the pinned
 *                                          host -> device bandwidth and the ratio; --stream-blocks B)
 *   pr_bench --rmat SCALE --mixing        (plain against mixed iterations on the auto engine, fp32 and
 *                                          fp64: PageRank and HITS to 1e-6, RWR batches of 8 from the
 *                                          warm start; iterations, ms to the tolerance on the prepared
 *                                          engine, L1 to the CPU engine's answer and the bound)
 *   pr_bench --calibrate-fixed FIXED.tsv  (only the fixed costs: launch l, row r, added row w,
 *                                          merged compact partial m; a few seconds)
 *
 * Generated graphs (test/common/graph_gen.h, on every CPU; deduplicated on the GPU with a CUB sort +
 * unique, so the edges come sorted by (src, dst)), --graph NAME:
 *   rmat:SCALE[:EF]                      R-MAT, Graph500 a=.57 b=.19 c=.19, random ids (--rmat SCALE)
 *   er:SCALE[:EF]                        Erdos-Renyi (uniform ends) (--er SCALE)
 *   local:SCALE[:EF[:P_LOCAL[:WINDOW]]]  power-law sources; a destination within WINDOW ids of its
 *                                        source with probability P_LOCAL, else a popular node
 * 2^SCALE nodes, EF * 2^SCALE edges before deduplication (EF default 16; P_LOCAL 0.9, WINDOW 64;
 * e.g. local:22:16:0.99:16 strong locality, local:22:16:0.5:4096 weak), seed 20261121 + SCALE.
 * --order bfs renumbers the nodes in breadth-first order from node 0 (crawl order), shuffled by a
 * random permutation (hashed ids: whatever locality the ids had is gone); natural (the default)
 * keeps the generated ids.  Then the graph is built with pr_graph_build.  The reference is the fp64 CPU engine through the same driver (pr_pagerank).
 * Each kernel: PageRank to convergence through pr_pagerank (checked: L1 to the reference and the
 * top-100 order), then CUDA-event timings after warm-up (medians): one SpMV, one PageRank
 * iteration (product + fused update).  Floor = (4 B per edge + 12 B per node) / copy bandwidth
 * measured in the same run (device-to-device cudaMemcpy, bytes read + written).
 */
#include "bench_util.h"
#include "pr_gpu_bench.h"
#include "pr_driver.h"
#include "pr_plan.h"
#include "graph_gen.h"

#include <cub/cub.cuh>
#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <vector>

#define CK(call) do { cudaError_t s_ = (call); if (s_ != cudaSuccess) { \
	fprintf(stderr, "CUDA error %s at %s:%d: %s\n", #call, __FILE__, __LINE__, cudaGetErrorString(s_)); exit(2); } } while (0)

#define SP(call) do { cusparseStatus_t s_ = (call); if (s_ != CUSPARSE_STATUS_SUCCESS) { \
	fprintf(stderr, "cuSPARSE error %s at %s:%d: %s\n", #call, __FILE__, __LINE__, cusparseGetErrorString(s_)); exit(2); } } while (0)

/* splitmix64 step, usable on host and device. */
__host__ __device__ static inline uint64_t
mix64(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/*
 * The graph of a spec (graph_gen.h, on every CPU), deduplicated on the GPU (CUB sort + unique of
 * src << 32 | dst): host src/dst arrays sorted by (src, dst).
 */
static void
generate_graph(const GenSpec *spec, std::vector<int64_t> &src, std::vector<int64_t> &dst)
{
	int64_t		m = spec->m;
	uint64_t   *d_keys,
			   *d_keys2;
	int		   *d_count = NULL;
	void	   *tmp = NULL;
	size_t		tmp_bytes = 0,
				need;
	int			count = 0;
	std::vector<uint64_t> host((size_t) m);

	src.resize((size_t) m);
	dst.resize((size_t) m);
	gen_edges(spec, src.data(), dst.data(), 0);
	for (int64_t i = 0; i < m; i++)
		host[i] = ((uint64_t) src[i] << 32) | (uint64_t) dst[i];
	CK(cudaMalloc(&d_keys, m * 8));
	CK(cudaMalloc(&d_keys2, m * 8));
	cub::DeviceRadixSort::SortKeys(NULL, need, d_keys, d_keys2, (int) m);
	tmp_bytes = need;
	cub::DeviceSelect::Unique(NULL, need, d_keys2, d_keys, d_count, (int) m);
	tmp_bytes = std::max(tmp_bytes, need);
	CK(cudaMalloc(&tmp, tmp_bytes));
	CK(cudaMalloc(&d_count, sizeof(int)));
	CK(cudaMemcpy(d_keys, host.data(), (size_t) m * 8, cudaMemcpyHostToDevice));
	CK(cub::DeviceRadixSort::SortKeys(tmp, tmp_bytes, d_keys, d_keys2, (int) m));
	CK(cub::DeviceSelect::Unique(tmp, tmp_bytes, d_keys2, d_keys, d_count, (int) m));
	CK(cudaMemcpy(&count, d_count, sizeof(int), cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(host.data(), d_keys, (size_t) count * 8, cudaMemcpyDeviceToHost));
	src.resize((size_t) count);
	dst.resize((size_t) count);
	for (int64_t i = 0; i < count; i++)
	{
		src[i] = (int64_t) (host[i] >> 32);
		dst[i] = (int64_t) (host[i] & 0xffffffffu);
	}
	cudaFree(d_keys);
	cudaFree(d_keys2);
	cudaFree(tmp);
	cudaFree(d_count);
}

/* Dies with the engine's message. */
static void
die_on(PrStatus st, const PrError &err, const char *what)
{
	if (st != PR_OK)
	{
		fprintf(stderr, "%s failed: %s: %s\n", what, pr_status_name(st), err.message);
		exit(1);
	}
}

/* Device-to-device copy bandwidth (bytes read + written per second). */
static double
copy_bandwidth(void)
{
	size_t		bytes = (size_t) 1 << 30;
	void	   *a,
			   *b;
	cudaEvent_t e0,
				e1;
	std::vector<double> t;

	CK(cudaMalloc(&a, bytes));
	CK(cudaMalloc(&b, bytes));
	CK(cudaMemset(a, 1, bytes));
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	for (int i = 0; i < 23; i++)
	{
		float		ms;

		CK(cudaEventRecord(e0));
		CK(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));
		CK(cudaEventRecord(e1));
		CK(cudaEventSynchronize(e1));
		CK(cudaEventElapsedTime(&ms, e0, e1));
		if (i >= 3)
			t.push_back(ms);
	}
	cudaFree(a);
	cudaFree(b);
	return 2.0 * bytes / (bench_median(t.data(), t.size()) * 1e-3);
}

/* Times ops on the engine's stream: median ms of reps runs of fn after warm-up. */
template <typename F>
static double
time_ms(PrEngine *e, int reps, F fn)
{
	cudaStream_t s = (cudaStream_t) pr_gpu_engine_stream(e);
	cudaEvent_t e0,
				e1;
	std::vector<double> t;

	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	for (int i = 0; i < 5; i++)
		fn();
	CK(cudaStreamSynchronize(s));
	for (int i = 0; i < reps; i++)
	{
		float		ms;

		CK(cudaEventRecord(e0, s));
		fn();
		CK(cudaEventRecord(e1, s));
		CK(cudaEventSynchronize(e1));
		CK(cudaEventElapsedTime(&ms, e0, e1));
		t.push_back(ms);
	}
	cudaEventDestroy(e0);
	cudaEventDestroy(e1);
	return bench_median(t.data(), t.size());
}

/* One kernel configuration of the benchmark. */
struct Config
{
	const char *name;
	PrGpuKernel kernel;
	PrGpuOrder	order;
	int64_t		tile_width;
	int			vec_threshold;
	PrGpuPrecision precision;
	int			n_smem_tiles;	/* -1: model */
	int			compact;		/* compact partials: 1 on, 0 off, -1 model */
	int			measure_reps;	/* auto: timed products per candidate (0: the model alone) */
};

/* One row of the results table. */
struct Row
{
	std::string name;
	std::string format;
	double		spmv_ms,
				iter_ms,
				predicted_ms,
				bytes_per_edge,
				l1;
	int			iterations;
	int			top_mismatch;
	bool		converged;
	bool		ok;
};

/* Positions where the top-100 orders differ, ties (within 1e-6 relative in the reference) aside. */
static int
top_mismatches(const double *ref, const double *got, int64_t n, int64_t k)
{
	std::vector<int32_t> a((size_t) k),
				b((size_t) k);
	int64_t		ka = pr_top_k(ref, n, 1, 0, k, a.data(), &pr_malloc_allocator);
	int64_t		kb = pr_top_k(got, n, 1, 0, k, b.data(), &pr_malloc_allocator);
	int			bad = 0;

	for (int64_t i = 0; i < std::min(ka, kb); i++)
		if (a[i] != b[i] && fabs(ref[a[i]] - ref[b[i]]) > 1e-6 * ref[a[i]])
			bad++;
	return bad;
}

/* Runs the calibration: costs of workload shapes on synthetic matrices, written as a model table. */
static void
calibrate(const char *out_path, const std::vector<int64_t> &windows, bool fixed_only)
{
	FILE	   *out = fopen(out_path, "w");
	const int	ell_h[] = {1, 2, 4, 8, 16, 31};
	const int	vec_w[] = {32, 128, 512, 2048};
	const int	bin_l[] = {1, 4, 16, 64, 512};
	cudaDeviceProp prop;
	double		row_ns = 0;

	CK(cudaGetDeviceProperties(&prop, 0));
	fprintf(out, "# measured by bench/gpu/pr_bench --calibrate: ns per workload (kind size window ns)\n");
	fprintf(out, "device %s\n", prop.name);

	/* one synthetic graph: rows [0, rows) with len random columns in [0, window), the rest empty */
	auto measure = [&](char kind, int len, int64_t window, int64_t rows, int64_t n, int64_t col0 = 0,
					   int64_t tile_width = 0, int compact = 0) -> double
	{
		PrGraph		g;
		std::vector<int64_t> ptr((size_t) n + 1);
		std::vector<int32_t> col(1);
		std::vector<double> strength((size_t) n, 1.0);
		PrGpuOptions o;
		PrGpuBenchOptions b;
		PrError		err;
		PrEngine   *e;
		uint64_t	s = 99 + (uint64_t) len * 7 + (uint64_t) window;
		double		ms;

		memset(&g, 0, sizeof(g));
		/* len < 0: random lengths 1..-len (rows sorted by length then land scattered) */
		int64_t		m_edges = 0;

		col.resize((size_t) (rows * std::abs(len) + 1));
		for (int64_t r = 0; r < n; r++)
		{
			ptr[r] = m_edges;
			if (r < rows)
			{
				s = mix64(s);
				m_edges += len >= 0 ? len : 1 + (int64_t) (s % (uint64_t) (-len));
			}
		}
		ptr[n] = m_edges;
		for (int64_t p = 0; p < m_edges; p++)
		{
			s = mix64(s);
			col[p] = (int32_t) (col0 + (int64_t) (s % (uint64_t) window));
		}
		g.n_nodes = n;
		g.n_edges = m_edges;
		g.in_ptr = ptr.data();
		g.in_src = col.data();
		g.out_strength = strength.data();
		pr_gpu_options_init(&o);
		pr_gpu_bench_options_init(&b);
		o.precision = PR_GPU_FP32;
		o.order = PR_GPU_ORDER_NATURAL;
		o.kernel = kind == 'b' ? PR_GPU_KERNEL_BINNED : PR_GPU_KERNEL_TILED;
		b.tile_width = tile_width > 0 ? tile_width : n;
		b.vec_threshold = (kind == 'v' || kind == 'V') ? 1 : 1 << 30;
		b.n_smem_tiles = (kind == 'E' || kind == 'V') ? 1 : 0;
		b.smem_width = 49152;
		b.chunk = 4096;
		b.compact_partials = compact;
		b.model_text = "";
		e = pr_gpu_bench_engine_create(&o, &b, &err);
		if (e == NULL)
			die_on(PR_ERR_ENGINE, err, "engine");
		die_on(e->ops->prepare(e, &g, 1, 2, PR_NEED_PULL_NORMALIZED, &err), err, "prepare");
		die_on(e->ops->fill(e, 0, 1.0, &err), err, "fill");
		ms = time_ms(e, 15, [&]() { PrError er; die_on(e->ops->product(e, PR_PRODUCT_PULL_NORMALIZED, 0, 1, &er), er, "product"); });
		e->ops->release(e);
		return ms * 1e6;		/* ns */
	};

	{
		double		tiny = measure('e', 1, 32, 32, 32);
		double		empty = measure('e', 0, 1, 0, (int64_t) 1 << 24);

		fprintf(out, "l 1 1 %.1f\n", tiny);
		row_ns = std::max(0.0, (empty - tiny) / (double) ((int64_t) 1 << 24));
		fprintf(out, "r 1 1 %.4f\n", row_ns);
		{
			/* a row added to by a later tile (scattered read-modify-write) */
			int64_t		n = (int64_t) 1 << 23;
			double		one = measure('e', -4, n / 2, n, n, n / 2, n);
			double		two = measure('e', -4, n / 2, n, n, n / 2, n / 2);

			fprintf(out, "w 1 1 %.4f\n", std::max(0.0, (two - one) / (double) n + row_ns));
			/* the same rows as compact partials: a coalesced slot write ('r') + the merge ('m') */
			double		two_c = measure('e', -4, n / 2, n, n, n / 2, n / 2, 1);

			fprintf(out, "W 1 1 %.4f\n", std::max(0.0, (two - one) / (double) n + row_ns));
			fprintf(out, "m 1 1 %.4f\n", std::max(0.0, (two_c - one) / (double) n));
			fflush(out);
		}
		{
			/* gather latency: one CSR-vector row of 4096 entries is 32 dependent rounds */
			double		chain = measure('v', 4096, 4096, 1, 4096);

			fprintf(out, "p 1 1 %.1f\n", std::max(0.0, (chain - tiny) / 32.0));
			fflush(out);
		}
		if (fixed_only)
		{
			fclose(out);
			printf("fixed costs written to %s\n", out_path);
			return;
		}
		/* shared-memory tiles (16-bit ids): the window is the tile width */
		for (int h : ell_h)
		{
			int64_t		rows = std::max((int64_t) 1 << 18, ((int64_t) 1 << 23) / h);
			int64_t		n = std::max(rows, (int64_t) 49152);
			double		ns = measure('E', h, 49152, rows, n) - row_ns * (double) n;

			fprintf(out, "E %d 49152 %.3f\n", h, ns / (double) (rows / 32));
		}
		for (int v : vec_w)
		{
			int64_t		rows = std::max((int64_t) 1 << 12, ((int64_t) 1 << 23) / v);
			int64_t		n = std::max(rows, (int64_t) 49152);
			double		ns = measure('V', v, 49152, rows, n) - row_ns * (double) n;

			fprintf(out, "V %d 49152 %.3f\n", v, ns / (double) rows);
		}
	}
	for (int64_t w : windows)
	{
		for (int h : ell_h)
		{
			int64_t		rows = std::max((int64_t) 1 << 18, ((int64_t) 1 << 23) / h);
			int64_t		n = std::max(rows, w);
			double		ns = measure('e', h, w, rows, n) - row_ns * (double) n;

			fprintf(out, "e %d %lld %.3f\n", h, (long long) w, ns / (double) (rows / 32));
		}
		for (int v : vec_w)
		{
			int64_t		rows = std::max((int64_t) 1 << 12, ((int64_t) 1 << 23) / v);
			int64_t		n = std::max(rows, w);
			double		ns = measure('v', v, w, rows, n) - row_ns * (double) n;

			fprintf(out, "v %d %lld %.3f\n", v, (long long) w, ns / (double) rows);
		}
		for (int l : bin_l)
		{
			int64_t		rows = std::max((int64_t) 1 << 14, ((int64_t) 1 << 23) / l);
			int64_t		n = std::max(rows, w);
			double		ns = measure('b', l, w, rows, n) - row_ns * (double) (n - rows);

			fprintf(out, "b %d %lld %.4f\n", l, (long long) w, ns / (double) rows);
		}
		fflush(out);
	}
	fclose(out);
	printf("calibration written to %s\n", out_path);
}


/* A restart of one node per column (node[j] for column j, weight 1) over caller-owned arrays. */
struct SourceRestart
{
	std::vector<int64_t> ptr;
	std::vector<int32_t> node;
	std::vector<double> weight;
	PrRestart	r;

	explicit SourceRestart(int k) : ptr((size_t) k + 1), node((size_t) k), weight((size_t) k, 1.0)
	{
		for (int j = 0; j <= k; j++)
			ptr[j] = j;
		memset(&r, 0, sizeof(r));
		r.k = k;
		r.ptr = ptr.data();
		r.node = node.data();
		r.weight = weight.data();
	}
};

/* The median of a run's driver time (prepare excluded) over reps runs on a prepared engine. */
static double
mixing_ms(PrEngine *e, PrGraph *g, const PrRestart *r, const PrIterOptions *it, bool hits, int reps,
		  double *x, double *y, PrRunStats *stats)
{
	std::vector<double> ms;
	PrError		err;

	for (int rep = 0; rep < reps; rep++)
	{
		if (hits)
			die_on(pr_hits(e, g, it, x, y, stats, &err), err, "gpu hits");
		else
			die_on(pr_pagerank(e, g, 0.85, r, it, x, stats, &err), err, "gpu pagerank");
		ms.push_back(1e3 * (stats->seconds - stats->prepare_seconds));
	}
	return bench_median(ms.data(), ms.size());
}

/*
 * --mixing: the accelerated iteration against plain power iteration on the auto engine (fp32 and
 * fp64), each on one prepared engine (as the GPU service's resident graphs): PageRank, HITS and a
 * RWR batch of 8 sources from the warm start to L1 1e-6; iterations, mixed steps, median ms of the
 * iterations, the L1 distance to the CPU engine's answer at 1e-12 and the run's bound.  Every
 * result must lie within its bound (PageRank, RWR; HITS within 1e-4 of the CPU's): the exit status.
 */
static bool
bench_mixing(PrGraph *g, int reps, int threads, const char *label)
{
	const int	k = 8;
	int64_t		n = g->n_nodes;
	std::vector<double> pr_ref((size_t) n), h_ref((size_t) n), a_ref((size_t) n),
				r_ref((size_t) n * k), x((size_t) n * k), y((size_t) n);
	SourceRestart src(k);
	PrRestart	uniform;
	PrIterOptions ref_it = bench_iter_options(1e-12, PR_NORM_L1, 3000, 1);
	PrRunStats	st;
	PrError		err;
	bool		ok = true;

	memset(&uniform, 0, sizeof(uniform));
	uniform.uniform = true;
	uniform.k = 1;
	if (!g->has_out_edges && pr_graph_add_out_edges(g, pr_thread_count(0, 64), &pr_malloc_allocator, &err) != PR_OK)
		return false;
	for (int j = 0; j < k; j++)
		src.node[j] = (int32_t) ((n - 1) * j / k);
	{
		PrEngine   *cpu = pr_cpu_engine_create(threads, &pr_malloc_allocator, &err);

		ref_it.mixing_depth = 5;
		die_on(pr_pagerank(cpu, g, 0.85, &uniform, &ref_it, pr_ref.data(), &st, &err), err, "cpu pagerank");
		die_on(pr_hits(cpu, g, &ref_it, h_ref.data(), a_ref.data(), &st, &err), err, "cpu hits");
		die_on(pr_pagerank(cpu, g, 0.85, &src.r, &ref_it, r_ref.data(), &st, &err), err, "cpu rwr");
		cpu->ops->release(cpu);
	}
	printf("\n## mixing: %s, %lld nodes, %lld edges, median of %d runs on a prepared engine\n", label,
		   (long long) n, (long long) g->n_edges, reps);
	printf("| precision | run | depth | engine | iterations | mixed | ms | ms/iteration | L1 to CPU 1e-12 | bound |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|\n");
	for (int prec = 0; prec < 2; prec++)
	{
		PrGpuOptions o;
		PrEngine   *e;

		pr_gpu_options_init(&o);
		o.precision = prec ? PR_GPU_FP64 : PR_GPU_FP32;
		if ((e = pr_gpu_engine_create(&o, &err)) == NULL)
			die_on(PR_ERR_ENGINE, err, "gpu engine");
		for (int run = 0; run < 3; run++)
			for (int depth = 0; depth <= 5; depth += 5)
			{
				PrIterOptions it = bench_iter_options(1e-6, PR_NORM_L1, 3000, 1);
				const char *name = run == 0 ? "PageRank" : run == 1 ? "HITS" : "RWR k=8";
				double		ms,
							l1 = 0;

				it.mixing_depth = depth;
				it.warm_start = run == 2;
				ms = mixing_ms(e, g, run == 2 ? &src.r : &uniform, &it, run == 1, reps, x.data(),
							   y.data(), &st);
				if (run == 0)
					l1 = bench_l1(x.data(), pr_ref.data(), n);
				else if (run == 1)
					l1 = bench_l1(x.data(), h_ref.data(), n);
				else
					for (int j = 0; j < k; j++)
					{
						double		c = 0;

						for (int64_t v = 0; v < n; v++)
							c += fabs(x[(size_t) v * k + j] - r_ref[(size_t) v * k + j]);
						l1 = fmax(l1, c);
					}
				if ((run != 1 && !(l1 <= st.error_bound)) || (run == 1 && !(l1 < 1e-4)) || !st.converged)
					ok = false;
				printf("| %s | %s | %d | %s | %d | %d | %.3f | %.4f | %.2e | %.2e%s |\n",
					   prec ? "fp64" : "fp32", name, depth, st.engine, st.iterations, st.mixed_steps, ms,
					   ms / st.iterations, l1, st.error_bound,
					   (run != 1 && !(l1 <= st.error_bound)) ? " OUTSIDE" : "");
				fflush(stdout);
			}
		e->ops->release(e);
	}
	printf("# mixing checks %s\n", ok ? "passed" : "FAILED");
	return ok;
}

/*
 * HITS and many-source RWR (SpMM, k = 8) on the GPU engine, fp32 and fp64, against the CPU engine:
 * prints the L1 distance per vector; returns false when one is over 1e-5 (fp32) / 1e-9 (fp64).
 */
static bool
check_hits_rwr(PrGraph *g, const std::string &model_text)
{
	const int	k = 8;
	int64_t		n = g->n_nodes;
	std::vector<double> h_ref((size_t) n), a_ref((size_t) n), h((size_t) n), a((size_t) n);
	std::vector<double> r_ref((size_t) n * k), r((size_t) n * k);
	SourceRestart src(k);
	PrRestart  &rs = src.r;
	PrIterOptions it = bench_iter_options(1e-11, PR_NORM_L1, 1000, 1);
	PrRunStats	st;
	PrError		err;
	bool		ok = true;
	PrGraph    &gg = *g;

	if (!g->has_out_edges && pr_graph_add_out_edges(g, pr_thread_count(0, 64), &pr_malloc_allocator, &err) != PR_OK)
		return false;
	for (int j = 0; j < k; j++)
		src.node[j] = (int32_t) ((n - 1) * j / k);
	{
		PrEngine   *cpu = pr_cpu_engine_create(16, &pr_malloc_allocator, &err);

		die_on(pr_hits(cpu, &gg, &it, h_ref.data(), a_ref.data(), &st, &err), err, "cpu hits");
		die_on(pr_pagerank(cpu, &gg, 0.85, &rs, &it, r_ref.data(), &st, &err), err, "cpu rwr");
		cpu->ops->release(cpu);
	}
	for (int variant = 0; variant < 2; variant++)
	{
		/* fp32 and fp64 with the model's layout */
		int			prec = variant == 1;
		PrGpuOptions o;
		PrGpuBenchOptions b;
		PrEngine   *e;
		double		lh = 0, la = 0, lr = 0, tol = prec ? 1e-9 : 1e-5;
		PrIterOptions git = it;

		pr_gpu_options_init(&o);
		pr_gpu_bench_options_init(&b);
		o.precision = prec ? PR_GPU_FP64 : PR_GPU_FP32;
		b.model_text = model_text.empty() ? NULL : model_text.c_str();
		git.tolerance = prec ? 1e-11 : 1e-7;
		git.max_iterations = 300;
		e = pr_gpu_bench_engine_create(&o, &b, &err);
		if (e == NULL)
			die_on(PR_ERR_ENGINE, err, "gpu engine");
		die_on(pr_hits(e, &gg, &git, h.data(), a.data(), &st, &err), err, "gpu hits");
		for (int64_t i = 0; i < n; i++)
		{
			lh += fabs(h[i] - h_ref[i]);
			la += fabs(a[i] - a_ref[i]);
		}
		printf("# HITS %s (%s, %d it): L1 hubs %.2e authorities %.2e\n", prec ? "fp64" : "fp32", st.engine,
			   st.iterations, lh, la);
		die_on(pr_pagerank(e, &gg, 0.85, &rs, &git, r.data(), &st, &err), err, "gpu rwr");
		for (int j = 0; j < k; j++)
		{
			double		l = 0;

			for (int64_t i = 0; i < n; i++)
				l += fabs(r[(size_t) i * k + j] - r_ref[(size_t) i * k + j]);
			lr = std::max(lr, l);
		}
		printf("# RWR k=%d %s (%s, %d it): max L1 per source %.2e\n", k, prec ? "fp64" : "fp32", st.engine,
			   st.iterations, lr);
		if (lh > tol || la > tol || lr > tol)
			ok = false;
		e->ops->release(e);
	}
	return ok;
}

/* cuSPARSE SpMM timing: median ms of the best algorithm on one CSR (P's values), y = P x, row-major
 * n x k; out holds the product of the last algorithm run (for the check); name gets "alg=ms ...". */
static double
cusparse_spmm_ms(const PrPlanCsr &csr, const std::vector<float> &val, int k, const float *d_x, float *d_y,
				 int reps, std::string &names)
{
	const cusparseSpMMAlg_t algs[3] = {CUSPARSE_SPMM_ALG_DEFAULT, CUSPARSE_SPMM_CSR_ALG2, CUSPARSE_SPMM_CSR_ALG3};
	const char *alg_names[3] = {"default", "csr-alg2", "csr-alg3"};
	int64_t		n = csr.n;
	std::vector<int32_t> ptr32((size_t) n + 1);
	int32_t    *d_ptr;
	int32_t    *d_col;
	float	   *d_val;
	cusparseHandle_t h;
	cusparseSpMatDescr_t A;
	cusparseDnMatDescr_t B,
				C;
	cudaStream_t s;
	float		one = 1.0f,
				zero = 0.0f;
	double		best = -1;

	for (int64_t r = 0; r <= n; r++)
		ptr32[r] = (int32_t) csr.ptr[r];
	CK(cudaStreamCreate(&s));
	CK(cudaMalloc(&d_ptr, (n + 1) * 4));
	CK(cudaMalloc(&d_col, csr.nnz * 4));
	CK(cudaMalloc(&d_val, csr.nnz * 4));
	CK(cudaMemcpy(d_ptr, ptr32.data(), (n + 1) * 4, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(d_col, csr.col, csr.nnz * 4, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(d_val, val.data(), csr.nnz * 4, cudaMemcpyHostToDevice));
	SP(cusparseCreate(&h));
	SP(cusparseSetStream(h, s));
	SP(cusparseCreateCsr(&A, n, n, csr.nnz, d_ptr, d_col, d_val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
						 CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
	SP(cusparseCreateDnMat(&B, n, k, k, (void *) d_x, CUDA_R_32F, CUSPARSE_ORDER_ROW));
	SP(cusparseCreateDnMat(&C, n, k, k, d_y, CUDA_R_32F, CUSPARSE_ORDER_ROW));
	for (int a = 0; a < 3; a++)
	{
		size_t		bytes = 0;
		void	   *buf = NULL;
		cusparseStatus_t st;
		cudaEvent_t e0,
					e1;
		std::vector<double> t;

		st = cusparseSpMM_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, B,
									 &zero, C, CUDA_R_32F, algs[a], &bytes);
		if (st == CUSPARSE_STATUS_SUCCESS)
		{
			CK(cudaMalloc(&buf, bytes > 0 ? bytes : 1));
			if (algs[a] == CUSPARSE_SPMM_CSR_ALG3)
				st = cusparseSpMM_preprocess(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
											 A, B, &zero, C, CUDA_R_32F, algs[a], buf);
		}
		if (st != CUSPARSE_STATUS_SUCCESS)
		{
			names += std::string(alg_names[a]) + "=unsupported(" + cusparseGetErrorString(st) + ") ";
			if (buf)
				cudaFree(buf);
			continue;
		}
		CK(cudaEventCreate(&e0));
		CK(cudaEventCreate(&e1));
		for (int i = 0; i < 5 + reps && st == CUSPARSE_STATUS_SUCCESS; i++)
		{
			float		ms;

			CK(cudaEventRecord(e0, s));
			st = cusparseSpMM(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, B, &zero,
							  C, CUDA_R_32F, algs[a], buf);
			CK(cudaEventRecord(e1, s));
			CK(cudaEventSynchronize(e1));
			CK(cudaEventElapsedTime(&ms, e0, e1));
			if (i >= 5)
				t.push_back(ms);
		}
		cudaEventDestroy(e0);
		cudaEventDestroy(e1);
		cudaFree(buf);
		if (st != CUSPARSE_STATUS_SUCCESS)
		{
			names += std::string(alg_names[a]) + "=failed(" + cusparseGetErrorString(st) + ") ";
			continue;
		}
		names += std::string(alg_names[a]) + "=" + std::to_string(bench_median(t.data(), t.size())).substr(0, 6) + " ";
		if (best < 0 || bench_median(t.data(), t.size()) < best)
			best = bench_median(t.data(), t.size());
	}
	cusparseDestroyDnMat(B);
	cusparseDestroyDnMat(C);
	cusparseDestroySpMat(A);
	cusparseDestroy(h);
	cudaFree(d_ptr);
	cudaFree(d_col);
	cudaFree(d_val);
	CK(cudaStreamDestroy(s));
	return best;
}

/* Largest column-wise relative L1 difference of two n x k row-major blocks (got[perm[i]] vs ref[i]
 * when perm is given: got in another node order). */
static double
max_column_rel_l1(const double *got, const double *ref, int64_t n, int k, const int32_t *perm)
{
	double		worst = 0;

	for (int j = 0; j < k; j++)
	{
		double		d = 0,
					r = 0;

		for (int64_t i = 0; i < n; i++)
		{
			double		gv = perm ? got[(size_t) perm[i] * k + j] : got[(size_t) i * k + j];

			d += fabs(gv - ref[(size_t) i * k + j]);
			r += fabs(ref[(size_t) i * k + j]);
		}
		d = r > 0 ? d / r : d;
		if (!(d <= worst))
			worst = d;			/* NaN sticks */
	}
	return worst;
}

/*
 * One RWR iteration of k sources on a prepared k-column engine: the product and the PageRank
 * update with a restart of one node per column (damping 0.85), as the service's batches run it;
 * CUDA-event median over reps.
 */
static double
rwr_iteration_ms(PrEngine *e, const PrGraph *g, int k, int reps)
{
	SourceRestart src(k);
	PrRestart  &r = src.r;
	PrError		err;
	int			x = 0,
				y = 1;

	for (int j = 0; j < k; j++)
		src.node[j] = (int32_t) ((int64_t) (j + 1) * 104729 % g->n_nodes);
	die_on(e->ops->fill(e, 0, 1.0 / (double) g->n_nodes, &err), err, "fill");
	return time_ms(e, reps, [&]() {
		PrError		er;

		die_on(e->ops->product(e, PR_PRODUCT_PULL_NORMALIZED, x, y, &er), er, "product");
		die_on(e->ops->pagerank_update(e, y, x, 0.85, &r, &er), er, "update");
		std::swap(x, y);
	});
}

/*
 * One RWR batch as the service runs it: k sources (existing nodes spread over the ids), restart
 * 0.15, tolerance 1e-6 (L1), the residual read every iteration, then the top 10 of each column
 * (pr_pagerank_top) on a prepared engine, started from 1/N or from the warm start.  Prints the
 * median wall time of 5 batches after a warm-up, the iterations, the warm start's share, and k
 * one-column top-k calls timed on their own (the batch itself ranks its columns together when the
 * engine has top_k_columns).  by_edges: sources drawn as the sources of random edges (a node as
 * often as it has out-edges: how the SQL benchmark samples them, bench_fill_sources), else spread
 * over the ids.
 */
static void
rwr_batch_line(PrEngine *e, const PrGraph *g, int k, const char *name, bool warm, bool by_edges)
{
	SourceRestart src(k);
	std::vector<int32_t> index((size_t) k * 10);
	std::vector<double> value((size_t) k * 10);
	std::vector<double> wall, topk, warm_ms;
	std::vector<int> iters;
	PrIterOptions it = bench_iter_options(1e-6, PR_NORM_L1, 100, 1);
	PrRunStats	stats;
	PrError		err;
	PrGpuReport before;

	die_on(pr_gpu_engine_report(e, &before, &err), err, "report");
	it.warm_start = warm;
	for (int rep = 0; rep < 6; rep++)
	{
		double		t0;

		/* new sources each batch (as the service's batches have), nodes with out-edges */
		for (int j = 0; j < k; j++)
		{
			int64_t		v = ((int64_t) (rep * k + j + 1) * 2654435761LL) % g->n_nodes;

			if (by_edges)
				v = g->in_src[((int64_t) (rep * k + j + 1) * 2654435761LL) % g->n_edges];
			while (g->out_strength[v] == 0)
				v = (v + 1) % g->n_nodes;
			src.node[j] = (int32_t) v;
		}
		t0 = pr_clock_seconds();
		die_on(pr_pagerank_top(e, g, 0.85, &src.r, &it, 10, index.data(), value.data(), &stats, &err), err, "rwr batch");
		if (rep > 0)
		{
			wall.push_back((pr_clock_seconds() - t0) * 1e3);
			warm_ms.push_back(stats.warm_seconds * 1e3);
			iters.push_back(stats.iterations);
		}
		t0 = pr_clock_seconds();
		for (int j = 0; j < k; j++)
			die_on(e->ops->top_k(e, 0, j, 10, index.data(), value.data(), &err), err, "top-k");
		if (rep > 0)
			topk.push_back((pr_clock_seconds() - t0) * 1e3);
	}
	std::sort(iters.begin(), iters.end());
	PrGpuReport rep;

	die_on(pr_gpu_engine_report(e, &rep, &err), err, "report");
	printf("# k=%d %s: RWR batch (tolerance 1e-6, top 10 each, %s start, sources %s) %.2f ms median of %zu (min %.2f), iterations %d..%d, warm start %.2f ms (local part pushed whole %lld times, first step only %lld, of which the second by a product %lld), %d one-column top-k calls %.2f ms\n",
		   k, name, warm ? "warm" : "1/N", by_edges ? "of random edges" : "spread over the ids",
		   bench_median(wall.data(), wall.size()), wall.size(), bench_min(wall.data(), wall.size()), iters.front(),
		   iters.back(), bench_median(warm_ms.data(), warm_ms.size()),
		   (long long) (rep.push_local_all - before.push_local_all),
		   (long long) (rep.push_local_first - before.push_local_first),
		   (long long) (rep.push_local_product - before.push_local_product), k,
		   bench_median(topk.data(), topk.size()));
}

/* The RWR batch line from 1/N, then from the warm start, then warm with sources of random edges. */
static void
rwr_batch_report(PrEngine *e, const PrGraph *g, int k, const char *name)
{
	rwr_batch_line(e, g, k, name, false, false);
	rwr_batch_line(e, g, k, name, true, false);
	rwr_batch_line(e, g, k, name, true, true);
}

/*
 * --k K1,K2..: the k-column product (PULL_NORMALIZED, fp32) of the engine (SpMM over the binned
 * CSR) vs cusparseSpMM on the same matrix (natural and degree-sorted order, best algorithm) vs K x
 * the engine's best single SpMV (auto); our columns checked against the CPU engine's product
 * (relative L1 per column < 1e-5) and bit-identical twice.  Returns false on a failed check.
 */
static bool
bench_spmm(const PrGraph *g, const std::vector<int> &ks, int reps, int threads, const std::string &model_text,
		   const char *label, double bw, bool spmm_variants, const std::vector<int64_t> &push_caps)
{
	int64_t		n = g->n_nodes;
	PrError		err;
	bool		ok = true;
	double		spmv_ms;
	std::string device;
	std::vector<std::string> lines;

	/* the best single SpMV (the engine's auto choice) */
	{
		PrGpuOptions o;
		PrGpuBenchOptions b;
		PrEngine   *e;
		PrGpuReport rep;
		std::vector<double> x((size_t) n, 1.0 / (double) n);

		pr_gpu_options_init(&o);
		pr_gpu_bench_options_init(&b);
		o.precision = PR_GPU_FP32;
		b.plan_threads = threads;
		b.model_text = model_text.empty() ? NULL : model_text.c_str();
		e = pr_gpu_bench_engine_create(&o, &b, &err);
		if (e == NULL)
			die_on(PR_ERR_ENGINE, err, "gpu engine");
		die_on(e->ops->prepare(e, g, 1, 2, PR_NEED_PULL_NORMALIZED, &err), err, "prepare k=1");
		die_on(e->ops->upload(e, 0, x.data(), &err), err, "upload");
		spmv_ms = time_ms(e, reps, [&]() { PrError er; die_on(e->ops->product(e, PR_PRODUCT_PULL_NORMALIZED, 0, 1, &er), er, "product"); });
		die_on(pr_gpu_engine_report(e, &rep, &err), err, "report");
		device = rep.device;
		printf("# SpMV (k = 1, auto: %s): %.4f ms | %s\n", rep.engine, spmv_ms, rep.format);
		e->ops->release(e);
	}
	for (int k : ks)
	{
		size_t		total = (size_t) n * k;
		std::vector<double> x(total), ref(total), got(total), again(total);
		uint64_t	seed = 77 + (uint64_t) k;
		double		ours_ms, nat_ms, sorted_ms, err_ours, err_nat = -1, err_sorted = -1;
		bool		same;
		std::string nat_names, sorted_names, format;

		for (size_t i = 0; i < total; i++)
		{
			seed = mix64(seed);
			x[i] = (double) (seed >> 11) / 9007199254740992.0;
		}
		/* the CPU engine's product: the reference */
		{
			PrEngine   *cpu = pr_cpu_engine_create(threads, &pr_malloc_allocator, &err);
			double		t0 = pr_clock_seconds();

			if (cpu == NULL)
				die_on(PR_ERR_ENGINE, err, "cpu engine");
			die_on(cpu->ops->prepare(cpu, g, k, 2, PR_NEED_PULL_NORMALIZED, &err), err, "cpu prepare");
			die_on(cpu->ops->upload(cpu, 0, x.data(), &err), err, "cpu upload");
			die_on(cpu->ops->product(cpu, PR_PRODUCT_PULL_NORMALIZED, 0, 1, &err), err, "cpu product");
			die_on(cpu->ops->download(cpu, 1, ref.data(), &err), err, "cpu download");
			printf("# k=%d: CPU engine product %.2f s\n", k, pr_clock_seconds() - t0);
			cpu->ops->release(cpu);
		}
		/* ours */
		{
			PrGpuOptions o;
			PrGpuBenchOptions b;
			PrEngine   *e;
			PrGpuReport rep;

			pr_gpu_options_init(&o);
			pr_gpu_bench_options_init(&b);
			o.precision = PR_GPU_FP32;
			b.plan_threads = threads;
			b.model_text = model_text.empty() ? NULL : model_text.c_str();
			e = pr_gpu_bench_engine_create(&o, &b, &err);
			if (e == NULL)
				die_on(PR_ERR_ENGINE, err, "gpu engine");
			die_on(e->ops->prepare(e, g, k, 2, PR_NEED_PULL_NORMALIZED, &err), err, "prepare");
			die_on(pr_gpu_engine_report(e, &rep, &err), err, "report");
			format = std::string(rep.engine) + ": " + rep.format;
			die_on(e->ops->upload(e, 0, x.data(), &err), err, "upload");
			die_on(e->ops->fill(e, 1, NAN, &err), err, "fill");
			die_on(e->ops->product(e, PR_PRODUCT_PULL_NORMALIZED, 0, 1, &err), err, "product");
			die_on(e->ops->download(e, 1, got.data(), &err), err, "download");
			die_on(e->ops->fill(e, 1, NAN, &err), err, "fill");
			die_on(e->ops->product(e, PR_PRODUCT_PULL_NORMALIZED, 0, 1, &err), err, "product");
			die_on(e->ops->download(e, 1, again.data(), &err), err, "download");
			same = memcmp(got.data(), again.data(), total * 8) == 0;
			err_ours = max_column_rel_l1(got.data(), ref.data(), n, k, NULL);
			ours_ms = time_ms(e, reps, [&]() { PrError er; die_on(e->ops->product(e, PR_PRODUCT_PULL_NORMALIZED, 0, 1, &er), er, "product"); });
			printf("# k=%d ours: %.4f ms, max column rel L1 vs CPU %.2e, %s, RWR iteration %.4f ms | %s\n", k, ours_ms, err_ours,
				   same ? "bit-identical twice" : "NOT bit-identical twice", rwr_iteration_ms(e, g, k, reps), format.c_str());
			rwr_batch_report(e, g, k, "ours");
			e->ops->release(e);
			/* the warm start's local part in two passes over the pull CSR instead of pushed */
			b.push_local = false;
			e = pr_gpu_bench_engine_create(&o, &b, &err);
			if (e == NULL)
				die_on(PR_ERR_ENGINE, err, "gpu engine");
			die_on(e->ops->prepare(e, g, k, 2, PR_NEED_PULL_NORMALIZED, &err), err, "prepare");
			rwr_batch_line(e, g, k, "ours, local part in two passes", true, false);
			rwr_batch_line(e, g, k, "ours, local part in two passes", true, true);
			e->ops->release(e);
			/* other sizes of the push lists (--push-caps): sources of random edges overflow the default */
			b.push_local = true;
			for (int64_t cap : push_caps)
			{
				char		name[96];

				b.push_local_cap = cap;
				e = pr_gpu_bench_engine_create(&o, &b, &err);
				if (e == NULL)
					die_on(PR_ERR_ENGINE, err, "gpu engine");
				die_on(e->ops->prepare(e, g, k, 2, PR_NEED_PULL_NORMALIZED, &err), err, "prepare");
				snprintf(name, sizeof(name), "ours, push lists of %lld entries", (long long) cap);
				rwr_batch_line(e, g, k, name, true, true);
				e->ops->release(e);
			}
			b.push_local_cap = 0;
		}
		/* variants of ours (not in the table): other chunk sizes of long rows */
		if (spmm_variants)
		{
			const struct
			{
				const char *name;
				int			chunk;
			}			variants[] = {{"chunk-256", 256}, {"chunk-4096", 4096}};

			for (const auto &v : variants)
			{
				PrGpuOptions o;
				PrGpuBenchOptions b;
				PrEngine   *e;
				std::vector<double> vy(total);
				double		ms,
							rel;

				pr_gpu_options_init(&o);
				pr_gpu_bench_options_init(&b);
				o.precision = PR_GPU_FP32;
				b.plan_threads = threads;
				b.chunk = v.chunk;
				e = pr_gpu_bench_engine_create(&o, &b, &err);
				if (e == NULL)
					die_on(PR_ERR_ENGINE, err, "gpu engine");
				die_on(e->ops->prepare(e, g, k, 2, PR_NEED_PULL_NORMALIZED, &err), err, "prepare");
				die_on(e->ops->upload(e, 0, x.data(), &err), err, "upload");
				die_on(e->ops->product(e, PR_PRODUCT_PULL_NORMALIZED, 0, 1, &err), err, "product");
				die_on(e->ops->download(e, 1, vy.data(), &err), err, "download");
				rel = max_column_rel_l1(vy.data(), ref.data(), n, k, NULL);
				ms = time_ms(e, reps, [&]() { PrError er; die_on(e->ops->product(e, PR_PRODUCT_PULL_NORMALIZED, 0, 1, &er), er, "product"); });
				{
					PrGpuReport vr;

					die_on(pr_gpu_engine_report(e, &vr, &err), err, "report");
					printf("# k=%d ours %s: %.4f ms (%.2fx the default), rel L1 vs CPU %.2e%s, RWR iteration %.4f ms | %s\n",
						   k, v.name, ms, ours_ms / ms, rel, rel < 1e-5 ? "" : " FAILED",
						   rwr_iteration_ms(e, g, k, reps), vr.format);
				}
				if (!(rel < 1e-5))
					ok = false;
				e->ops->release(e);
			}
		}
		/* cuSPARSE SpMM on P (values w / out_strength of the source), natural and degree-sorted */
		{
			PrPlanCsr	nat;
			PrPlanCsr	sorted;
			std::vector<float> nval((size_t) g->n_edges);
			std::vector<double> dval((size_t) g->n_edges);
			std::vector<int64_t> key((size_t) n + 1, 0);
			std::vector<int32_t> new_to_old((size_t) n + 1), old_to_new((size_t) n + 1);
			std::vector<float> xf(total), yf(total);
			std::vector<double> yd(total);
			float	   *d_x,
					   *d_y;

			for (int64_t r = 0; r < n; r++)
				for (int64_t p = g->in_ptr[r]; p < g->in_ptr[r + 1]; p++)
				{
					int32_t		c = g->in_src[p];

					dval[p] = (g->in_weight ? g->in_weight[p] : 1.0) / g->out_strength[c];
					nval[p] = (float) dval[p];
					key[c]++;
				}
			memset(&nat, 0, sizeof(nat));
			nat.n = n;
			nat.nnz = g->n_edges;
			nat.ptr = g->in_ptr;
			nat.col = g->in_src;
			CK(cudaMalloc(&d_x, total * 4));
			CK(cudaMalloc(&d_y, total * 4));
			for (size_t i = 0; i < total; i++)
				xf[i] = (float) x[i];
			CK(cudaMemcpy(d_x, xf.data(), total * 4, cudaMemcpyHostToDevice));
			nat_ms = cusparse_spmm_ms(nat, nval, k, d_x, d_y, reps, nat_names);
			CK(cudaMemcpy(yf.data(), d_y, total * 4, cudaMemcpyDeviceToHost));
			for (size_t i = 0; i < total; i++)
				yd[i] = yf[i];
			if (nat_ms > 0)
				err_nat = max_column_rel_l1(yd.data(), ref.data(), n, k, NULL);
			printf("# k=%d cuSPARSE natural: %s| rel L1 vs CPU %.2e\n", k, nat_names.c_str(), err_nat);
			/* degree-sorted: the engine's order (rows and columns relabelled by out-degree) */
			die_on(pr_plan_degree_order(n, key.data(), new_to_old.data(), old_to_new.data(), &pr_malloc_allocator, &err),
				   err, "degree order");
			die_on(pr_plan_relabel(n, g->in_ptr, g->in_src, dval.data(), old_to_new.data(), &pr_malloc_allocator, &sorted,
								   &err), err, "relabel");
			{
				std::vector<float> sval(sorted.val, sorted.val + sorted.nnz);

				for (int64_t i = 0; i < n; i++)
					for (int j = 0; j < k; j++)
						xf[(size_t) i * k + j] = (float) x[(size_t) new_to_old[i] * k + j];
				CK(cudaMemcpy(d_x, xf.data(), total * 4, cudaMemcpyHostToDevice));
				sorted_ms = cusparse_spmm_ms(sorted, sval, k, d_x, d_y, reps, sorted_names);
			}
			CK(cudaMemcpy(yf.data(), d_y, total * 4, cudaMemcpyDeviceToHost));
			for (size_t i = 0; i < total; i++)
				yd[i] = yf[i];
			if (sorted_ms > 0)
				err_sorted = max_column_rel_l1(yd.data(), ref.data(), n, k, old_to_new.data());
			printf("# k=%d cuSPARSE degree-sorted: %s| rel L1 vs CPU %.2e\n", k, sorted_names.c_str(), err_sorted);
			pr_plan_csr_free(&sorted, &pr_malloc_allocator);
			cudaFree(d_x);
			cudaFree(d_y);
		}
		{
			bool		pass = same && err_ours < 1e-5;
			double		cus = nat_ms > 0 && (sorted_ms <= 0 || nat_ms < sorted_ms) ? nat_ms : sorted_ms;
			/* bytes: 4 per entry (column id), z and y once: 2 * 4k per node */
			double		gbs = (4.0 * g->n_edges + 8.0 * k * n) / (ours_ms * 1e-3) / 1e9;
			char		line[512];

			snprintf(line, sizeof(line), "| %d | %.4f | %.4f | %.4f | %.4f | %.4f | %.2fx | %.2fx | %.2f | %.0f | %.1e | %s |",
					 k, ours_ms, nat_ms, sorted_ms, spmv_ms, k * spmv_ms, cus > 0 ? cus / ours_ms : 0.0,
					 k * spmv_ms / ours_ms, ours_ms / spmv_ms, gbs, err_ours, pass ? "yes" : "NO");
			lines.push_back(line);
			if (!pass)
				ok = false;
		}
	}
	printf("\n### SpMM %s: %lld nodes, %lld edges, fp32 — %s\n\n", label ? label : "graph", (long long) n,
		   (long long) g->n_edges, device.c_str());
	printf("copy bandwidth %.0f GB/s; medians of %d after warm-up (CUDA events); cuSPARSE: best of its SpMM algorithms\n\n",
		   bw / 1e9, reps);
	printf("| k | ours ms | cuSPARSE natural ms | cuSPARSE sorted ms | SpMV ms (auto) | k x SpMV ms | vs best cuSPARSE | vs k x SpMV | ours / SpMV | GB/s (4B/e + 8k B/n) | rel L1 vs CPU | ok |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (const std::string &l : lines)
		printf("%s\n", l.c_str());
	return ok;
}

/* Whether name is one of the comma-separated names of list. */
static bool
in_list(const char *list, const char *name)
{
	size_t		len = strlen(name);

	for (const char *p = list; p && *p; )
	{
		const char *comma = strchr(p, ',');
		size_t		item = comma ? (size_t) (comma - p) : strlen(p);

		if (item == len && strncmp(p, name, len) == 0)
			return true;
		p = comma ? comma + 1 : NULL;
	}
	return false;
}

/* Entry point: see the comment at the top. */
/* Pinned host -> device bandwidth (bytes per second): one plain cudaMemcpy of `bytes` from
 * cudaHostAlloc memory, median of 5 after a warm-up. */
static double
pinned_h2d_bandwidth(size_t bytes)
{
	void	   *h,
			   *d;
	std::vector<double> t;

	CK(cudaHostAlloc(&h, bytes, cudaHostAllocDefault));
	CK(cudaMalloc(&d, bytes));
	memset(h, 1, bytes);
	for (int i = -1; i < 5; i++)
	{
		double		t0 = pr_clock_seconds();

		CK(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice));
		if (i >= 0)
			t.push_back(pr_clock_seconds() - t0);
	}
	CK(cudaFree(d));
	CK(cudaFreeHost(h));
	return (double) bytes / bench_median(t.data(), t.size());
}

/*
 * --streamed: PageRank on the streamed engine (residency forced), registered and staged, fp32 and
 * fp64 (forced block count `blocks`, 0: the plan's): checked against the CPU reference (L1, top 100,
 * the same bits twice), then ms per iteration (product + update), the bytes streamed per
 * iteration, the pinned host -> device bandwidth measured in the same run, and the ratio of the
 * iteration's time to the time those bytes take at that bandwidth (1.0: the link's speed).
 */
static bool
bench_streamed(const PrGraph *g, const PrRestart *restart, const PrIterOptions *it, const double *ref,
			   int reps, int threads, int64_t blocks, const char *label)
{
	struct StreamConfig
	{
		const char *name;
		bool		stage;
		PrGpuPrecision precision;
	};
	const StreamConfig configs[] = {
		{"streamed-registered", false, PR_GPU_FP32},
		{"streamed-staged", true, PR_GPU_FP32},
		{"streamed-registered-fp64", false, PR_GPU_FP64},
	};
	std::vector<double> got((size_t) g->n_nodes),
				again((size_t) g->n_nodes);
	size_t		probe = std::min((size_t) 1 << 30, std::max((size_t) 64 << 20,
																(size_t) (g->n_nodes + 1) * 8 + (size_t) g->n_edges * 4));
	double		h2d = pinned_h2d_bandwidth(probe);
	bool		all_ok = true;

	printf("# pinned host -> device bandwidth %.1f GB/s (one cudaMemcpy of %.0f MB, median of 5)\n", h2d / 1e9, probe / 1e6);
	printf("\n### %s: %lld nodes, %lld edges — streamed engine\n\n", label ? label : "graph",
		   (long long) g->n_nodes, (long long) g->n_edges);
	printf("| config | mode | blocks | MB/iteration | ms/iteration | link ms (bytes / %.1f GB/s) | ratio | %% of link | model ms | iters | L1 vs CPU | top-100 | ok |\n", h2d / 1e9);
	printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (const StreamConfig &c : configs)
	{
		PrGpuOptions o;
		PrGpuBenchOptions b;
		PrGpuReport rep;
		PrRunStats	stats;
		PrIterOptions git = *it;
		PrError		err;
		PrEngine   *e;
		double		iter_ms,
					link_ms,
					l1;
		int			mismatch;
		bool		same,
					ok;

		pr_gpu_options_init(&o);
		pr_gpu_bench_options_init(&b);
		o.precision = c.precision;
		b.residency = PR_GPU_RESIDENCY_STREAMED;
		b.stream_stage = c.stage;
		b.stream_blocks = blocks;
		b.plan_threads = threads;
		e = pr_gpu_bench_engine_create(&o, &b, &err);
		if (e == NULL)
			die_on(PR_ERR_ENGINE, err, "gpu engine");
		git.tolerance = c.precision == PR_GPU_FP64 ? 1e-10 : 1e-7;
		git.max_iterations = 300;
		git.check_every = 1;
		if (pr_pagerank(e, g, 0.85, restart, &git, got.data(), &stats, &err) != PR_OK ||
			pr_gpu_engine_report(e, &rep, &err) != PR_OK)
		{
			printf("# %s: %s\n", c.name, err.message);
			e->ops->release(e);
			all_ok = false;
			continue;
		}
		printf("# %s: %s | plan %.2f s upload %.2f s | %d iterations\n", c.name, rep.format, rep.plan_seconds,
			   rep.upload_seconds, stats.iterations);
		die_on(pr_pagerank(e, g, 0.85, restart, &git, again.data(), &stats, &err), err, "pagerank again");
		same = memcmp(got.data(), again.data(), (size_t) g->n_nodes * 8) == 0;
		l1 = bench_l1(got.data(), ref, g->n_nodes);
		mismatch = top_mismatches(ref, got.data(), g->n_nodes, std::min<int64_t>(100, g->n_nodes));
		ok = l1 <= 1e-5 && mismatch == 0 && same && strcmp(rep.engine, "gpu-streamed") == 0;
		iter_ms = time_ms(e, reps, [&]() {
			PrError		er;

			die_on(e->ops->product(e, PR_PRODUCT_PULL_NORMALIZED, 0, 1, &er), er, "product");
			die_on(e->ops->pagerank_update(e, 1, 0, 0.85, restart, &er), er, "update");
			die_on(e->ops->product(e, PR_PRODUCT_PULL_NORMALIZED, 1, 0, &er), er, "product");
			die_on(e->ops->pagerank_update(e, 0, 1, 0.85, restart, &er), er, "update");
		}) / 2.0;
		link_ms = (double) rep.stream_bytes / h2d * 1e3;
		printf("| %s | %s | %lld | %.1f | %.3f | %.3f | %.3f | %.1f%% | %.3f | %d%s | %.2e | %s | %s |\n", c.name,
			   rep.stream_mode, (long long) rep.stream_blocks, rep.stream_bytes / 1e6, iter_ms, link_ms,
			   iter_ms / link_ms, 100.0 * link_ms / iter_ms, rep.predicted_ms, stats.iterations,
			   stats.converged ? "" : "(max)", l1, mismatch == 0 ? "same" : (std::to_string(mismatch) + " differ").c_str(),
			   ok ? "yes" : (same ? "NO" : "NO (not bit-identical)"));
		all_ok = all_ok && ok;
		e->ops->release(e);
	}
	return all_ok;
}

int
main(int argc, char **argv)
{
	GenOptions	gopt = {"", GEN_IDS_NATURAL};	/* --graph / --rmat / --er / --order (graph_gen.h) */
	const char *file = NULL;
	const char *label = NULL;
	const char *model_path = NULL;
	const char *only = NULL;
	int			reps = 30;
	int			threads = 16;
	bool		skip_extra = false;	/* no HITS / RWR checks */
	std::vector<int> spmm_ks;	/* --k: the k-column product benchmark instead of the kernel table */
	bool		undirected = false;	/* --undirected: every edge both ways (a symmetrised graph) */
	bool		spmm_variants = false;	/* --spmm-variants: also other chunk sizes of long rows */
	std::vector<int64_t> push_caps;	/* --push-caps: RWR batches with push lists of these sizes */
	bool		streamed = false;	/* --streamed: the streamed engine's table instead of the kernels' */
	bool		mixing = false;	/* --mixing: plain against mixed iterations */
	int			stream_blocks = 0;	/* --stream-blocks: its forced block count (0: the plan's) */
	int			list[64],		/* a list option's values */
				n_list;
	std::vector<int64_t> src,
				dst;
	PrGraph		g;
	PrBuildOptions bo;
	PrError		err;
	double		t0,
				bw;
	std::string model_text;

	setvbuf(stdout, NULL, _IOLBF, 0);	/* logs survive a command killed at its time limit */
	for (int i = 1; i < argc; i++)
	{
		if (gen_take_option(argc, argv, i, &gopt) > 0)
		{
			i++;
			continue;
		}
		if (bench_option_string(argc, argv, &i, "--file", &file) ||
			bench_option_string(argc, argv, &i, "--label", &label) ||
			bench_option_string(argc, argv, &i, "--model", &model_path) ||
			bench_option_string(argc, argv, &i, "--only", &only) ||
			bench_option_int(argc, argv, &i, "--reps", &reps) ||
			bench_option_int(argc, argv, &i, "--stream-blocks", &stream_blocks) ||
			bench_option_int(argc, argv, &i, "--threads", &threads))
			continue;
		if (bench_option_int_list(argc, argv, &i, "--k", list, 64, &n_list))
		{
			for (int j = 0; j < n_list; j++)
				if (list[j] >= 1)
					spmm_ks.push_back(list[j]);
		}
		else if (bench_flag(argv, i, "--spmm-variants"))
			spmm_variants = true;
		else if (bench_option_int_list(argc, argv, &i, "--push-caps", list, 64, &n_list))
		{
			for (int j = 0; j < n_list; j++)
				if (list[j] >= 1)
					push_caps.push_back(list[j]);
		}
		else if (bench_flag(argv, i, "--skip-extra"))
			skip_extra = true;
		else if (bench_flag(argv, i, "--mixing"))
			mixing = true;
		else if (bench_flag(argv, i, "--streamed"))
			streamed = true;
		else if (bench_flag(argv, i, "--undirected"))
			undirected = true;
		else if (!strcmp(argv[i], "--calibrate") && i + 1 < argc)
		{
			const char *path = argv[++i];
			std::vector<int64_t> windows = {(int64_t) 1 << 18, (int64_t) 1 << 22, (int64_t) 1 << 24};

			if (i + 2 < argc && !strcmp(argv[i + 1], "--windows"))
			{
				windows.clear();
				for (char *tok = strtok(argv[i + 2], ","); tok; tok = strtok(NULL, ","))
					windows.push_back(atoll(tok));
				i += 2;
			}
			calibrate(path, windows, false);
			return 0;
		}
		else if (!strcmp(argv[i], "--calibrate-fixed") && i + 1 < argc)
		{
			std::vector<int64_t> none;

			calibrate(argv[++i], none, true);
			return 0;
		}
		else if (!strcmp(argv[i], "--h2d-bandwidth") && i + 1 < argc)
		{
			/* only the link: the streamed engine's yardstick for runs outside this program */
			size_t		mb = (size_t) strtoull(argv[++i], NULL, 10);

			printf("# pinned host -> device bandwidth %.1f GB/s (one cudaMemcpy of %zu MB, median of 5)\n",
				   pinned_h2d_bandwidth((mb > 0 ? mb : 1024) << 20) / 1e9, mb > 0 ? mb : 1024);
			return 0;
		}
		else
		{
			fprintf(stderr, "usage: %s --graph rmat:S|er:S[:EF]|local:S[:EF[:P[:W]]] | --rmat S | --er S | --file F [--order natural|bfs|shuffled] [--model M] [--label L] [--reps N] [--only A,B] [--threads T] [--skip-extra] [--undirected] [--k K1,K2.. [--spmm-variants]] [--streamed [--stream-blocks B]] [--mixing]\n"
					"       %s --calibrate OUT.tsv [--windows W1,W2..] | --calibrate-fixed OUT.tsv | --h2d-bandwidth MB\n", argv[0], argv[0]);
			return 2;
		}
	}
	if (model_path)
	{
		char	   *text = bench_read_file(model_path);

		if (text != NULL)
			model_text = text;
		free(text);
	}

	/* the graph */
	t0 = pr_clock_seconds();
	if (file)
	{
		int64_t    *file_src,
				   *file_dst;
		size_t		m = bench_read_edges(file, &file_src, &file_dst);

		if (m == 0)
		{
			fprintf(stderr, "cannot read %s\n", file);
			return 1;
		}
		src.assign(file_src, file_src + m);
		dst.assign(file_dst, file_dst + m);
		free(file_src);
		free(file_dst);
	}
	else if (gopt.graph[0] != '\0')
	{
		GenSpec		spec;
		char		described[160];

		if (!gen_parse(gopt.graph, GEN_BENCH_SEED, &spec))
		{
			fprintf(stderr, "unknown graph %s (rmat:S[:EF], er:S[:EF], local:S[:EF[:P_LOCAL[:WINDOW]]])\n",
					gopt.graph);
			return 2;
		}
		gen_describe(&spec, described, sizeof(described));
		printf("# graph %s: %s\n", gopt.graph, described);
		generate_graph(&spec, src, dst);
	}
	else
	{
		fprintf(stderr, "no graph given\n");
		return 2;
	}
	if (gopt.id_order != GEN_IDS_NATURAL)
	{
		if (!gen_reorder_ids(gopt.id_order, src.data(), dst.data(), src.size(), GEN_BENCH_SEED))
		{
			fprintf(stderr, "--order %s needs ids >= 0 and memory for them\n", gen_id_order_name(gopt.id_order));
			return 2;
		}
		printf("# ids renumbered: --order %s\n", gen_id_order_name(gopt.id_order));
	}
	printf("# generated/read %zu edges in %.1f s\n", src.size(), pr_clock_seconds() - t0);
	memset(&bo, 0, sizeof(bo));
	bo.n_threads = threads;
	bo.undirected = undirected;
	t0 = pr_clock_seconds();
	die_on(pr_graph_build(src.data(), dst.data(), NULL, src.size(), &bo, &pr_malloc_allocator, &g, &err), err, "pr_graph_build");
	printf("# built graph: %lld nodes, %lld edges, %lld dangling in %.1f s\n", (long long) g.n_nodes,
		   (long long) g.n_edges, (long long) g.n_dangling, pr_clock_seconds() - t0);
	std::vector<int64_t>().swap(src);
	std::vector<int64_t>().swap(dst);

	bw = copy_bandwidth();
	double		floor_ms = (4.0 * g.n_edges + 12.0 * g.n_nodes) / bw * 1e3;

	printf("# copy bandwidth %.0f GB/s, floor %.4f ms\n", bw / 1e9, floor_ms);
	if (!spmm_ks.empty())
	{
		bool		ok = bench_spmm(&g, spmm_ks, reps, threads, model_text, label, bw, spmm_variants, push_caps);

		pr_graph_free(&g, &pr_malloc_allocator);
		return ok ? 0 : 1;
	}

	if (mixing)
	{
		bool		ok = bench_mixing(&g, reps < 5 ? reps : 5, threads, label);

		pr_graph_free(&g, &pr_malloc_allocator);
		return ok ? 0 : 1;
	}

	/* the CPU reference */
	PrRestart	restart;
	PrIterOptions it;
	PrRunStats	stats;
	std::vector<double> ref((size_t) g.n_nodes),
				got((size_t) g.n_nodes);

	memset(&restart, 0, sizeof(restart));
	restart.uniform = true;
	restart.k = 1;
	it = bench_iter_options(1e-10, PR_NORM_L1, 1000, 1);
	{
		PrEngine   *cpu = pr_cpu_engine_create(threads, &pr_malloc_allocator, &err);

		if (cpu == NULL)
			die_on(PR_ERR_ENGINE, err, "cpu engine");
		t0 = pr_clock_seconds();
		die_on(pr_pagerank(cpu, &g, 0.85, &restart, &it, ref.data(), &stats, &err), err, "cpu pagerank");
		printf("# CPU fp64 reference: %d iterations, residual %.2e, %.1f s (%.1f ms/iteration)\n", stats.iterations,
			   stats.residual, pr_clock_seconds() - t0, (pr_clock_seconds() - t0) * 1e3 / stats.iterations);
		cpu->ops->release(cpu);
	}
	if (streamed)
	{
		bool		ok = bench_streamed(&g, &restart, &it, ref.data(), reps, threads, stream_blocks, label);

		pr_graph_free(&g, &pr_malloc_allocator);
		return ok ? 0 : 1;
	}

	/* HITS and RWR (SpMM) on graphs up to a few million nodes */
	bool		extra_ok = true;

	if (!skip_extra && g.n_nodes <= ((int64_t) 1 << 22) + 1)
	{
		t0 = pr_clock_seconds();
		extra_ok = check_hits_rwr(&g, model_text);
		printf("# HITS/RWR checks %s (%.1f s)\n", extra_ok ? "passed" : "FAILED", pr_clock_seconds() - t0);
	}

	/* every kernel */
	const Config configs[] = {
		{"cusparse-natural", PR_GPU_KERNEL_CUSPARSE, PR_GPU_ORDER_NATURAL, 0, 0, PR_GPU_FP32, -1, 0, 5},
		{"cusparse-sorted", PR_GPU_KERNEL_CUSPARSE, PR_GPU_ORDER_DEGREE, 0, 0, PR_GPU_FP32, -1, 0, 5},
		{"binned", PR_GPU_KERNEL_BINNED, PR_GPU_ORDER_DEGREE, 0, 0, PR_GPU_FP32, -1, 0, 5},
		{"binned-natural", PR_GPU_KERNEL_BINNED, PR_GPU_ORDER_NATURAL, 0, 0, PR_GPU_FP32, -1, 0, 5},
		{"acoo-natural", PR_GPU_KERNEL_ALIGNED_COO, PR_GPU_ORDER_NATURAL, 0, 0, PR_GPU_FP32, -1, 0, 5},
		{"acoo-sorted", PR_GPU_KERNEL_ALIGNED_COO, PR_GPU_ORDER_DEGREE, 0, 0, PR_GPU_FP32, -1, 0, 5},
		{"acoo-hubs", PR_GPU_KERNEL_ALIGNED_COO, PR_GPU_ORDER_HUBS, 0, 0, PR_GPU_FP32, -1, 0, 5},
		{"rowblocks-natural", PR_GPU_KERNEL_ROW_BLOCKS, PR_GPU_ORDER_NATURAL, 0, 0, PR_GPU_FP32, -1, 0, 5},
		{"rowblocks-hubs", PR_GPU_KERNEL_ROW_BLOCKS, PR_GPU_ORDER_HUBS, 0, 0, PR_GPU_FP32, -1, 0, 5},
		{"rowblocks-locality", PR_GPU_KERNEL_ROW_BLOCKS, PR_GPU_ORDER_LOCALITY, 0, 0, PR_GPU_FP32, -1, 0, 5},
		{"rowblocks-sorted", PR_GPU_KERNEL_ROW_BLOCKS, PR_GPU_ORDER_DEGREE, 0, 0, PR_GPU_FP32, -1, 0, 5},
		{"tiled-hubs", PR_GPU_KERNEL_TILED, PR_GPU_ORDER_HUBS, 0, 0, PR_GPU_FP32, -1, -1, 5},
		{"tiled-natural", PR_GPU_KERNEL_TILED, PR_GPU_ORDER_NATURAL, 0, 0, PR_GPU_FP32, -1, -1, 5},
		{"tiled-L2", PR_GPU_KERNEL_TILED, PR_GPU_ORDER_DEGREE, 0, 32, PR_GPU_FP32, 0, 0, 5},
		{"tiled-L2-w4M", PR_GPU_KERNEL_TILED, PR_GPU_ORDER_DEGREE, (int64_t) 1 << 22, 32, PR_GPU_FP32, 0, 0, 5},
		{"tiled-s1", PR_GPU_KERNEL_TILED, PR_GPU_ORDER_DEGREE, 0, 32, PR_GPU_FP32, 1, 0, 5},
		{"tiled-s2", PR_GPU_KERNEL_TILED, PR_GPU_ORDER_DEGREE, 0, 32, PR_GPU_FP32, 2, 0, 5},
		{"tiled-s4", PR_GPU_KERNEL_TILED, PR_GPU_ORDER_DEGREE, 0, 32, PR_GPU_FP32, 4, 0, 5},
		{"tiled-s8", PR_GPU_KERNEL_TILED, PR_GPU_ORDER_DEGREE, 0, 32, PR_GPU_FP32, 8, 0, 5},
		{"tiled-s16", PR_GPU_KERNEL_TILED, PR_GPU_ORDER_DEGREE, 0, 32, PR_GPU_FP32, 16, 0, 5},
		{"tiled-s2-compact", PR_GPU_KERNEL_TILED, PR_GPU_ORDER_DEGREE, 0, 32, PR_GPU_FP32, 2, 1, 5},
		{"tiled-s4-compact", PR_GPU_KERNEL_TILED, PR_GPU_ORDER_DEGREE, 0, 32, PR_GPU_FP32, 4, 1, 5},
		{"tiled-s8-compact", PR_GPU_KERNEL_TILED, PR_GPU_ORDER_DEGREE, 0, 32, PR_GPU_FP32, 8, 1, 5},
		{"tiled-s16-compact", PR_GPU_KERNEL_TILED, PR_GPU_ORDER_DEGREE, 0, 32, PR_GPU_FP32, 16, 1, 5},
		{"tiled-s12-compact", PR_GPU_KERNEL_TILED, PR_GPU_ORDER_DEGREE, 0, 32, PR_GPU_FP32, 12, 1, 5},
		{"tiled-s8-compact-v16", PR_GPU_KERNEL_TILED, PR_GPU_ORDER_DEGREE, 0, 16, PR_GPU_FP32, 8, 1, 5},
		{"tiled-s8-compact-v64", PR_GPU_KERNEL_TILED, PR_GPU_ORDER_DEGREE, 0, 64, PR_GPU_FP32, 8, 1, 5},
		{"tiled-s8-compact-v128", PR_GPU_KERNEL_TILED, PR_GPU_ORDER_DEGREE, 0, 128, PR_GPU_FP32, 8, 1, 5},
		{"tiled-s8-compact-v256", PR_GPU_KERNEL_TILED, PR_GPU_ORDER_DEGREE, 0, 256, PR_GPU_FP32, 8, 1, 5},
		{"tiled-s8-v128", PR_GPU_KERNEL_TILED, PR_GPU_ORDER_DEGREE, 0, 128, PR_GPU_FP32, 8, 0, 5},
		{"tiled-s4-compact-v128", PR_GPU_KERNEL_TILED, PR_GPU_ORDER_DEGREE, 0, 128, PR_GPU_FP32, 4, 1, 5},
		{"tiled-s12-compact-v128", PR_GPU_KERNEL_TILED, PR_GPU_ORDER_DEGREE, 0, 128, PR_GPU_FP32, 12, 1, 5},
		{"tiled-s16-compact-v128", PR_GPU_KERNEL_TILED, PR_GPU_ORDER_DEGREE, 0, 128, PR_GPU_FP32, 16, 1, 5},
		{"tiled-L2-v128", PR_GPU_KERNEL_TILED, PR_GPU_ORDER_DEGREE, 0, 128, PR_GPU_FP32, 0, 0, 5},
		{"tiled-s2-compact-v128", PR_GPU_KERNEL_TILED, PR_GPU_ORDER_DEGREE, 0, 128, PR_GPU_FP32, 2, 1, 5},
		{"auto-model", PR_GPU_KERNEL_AUTO, PR_GPU_ORDER_DEGREE, 0, 0, PR_GPU_FP32, -1, -1, 0},
		{"auto", PR_GPU_KERNEL_AUTO, PR_GPU_ORDER_DEGREE, 0, 0, PR_GPU_FP32, -1, -1, 5},
		{"auto-fp64", PR_GPU_KERNEL_AUTO, PR_GPU_ORDER_DEGREE, 0, 0, PR_GPU_FP64, -1, -1, 5},
	};
	std::vector<Row> rows;
	std::string device;

	for (const Config &c : configs)
	{
		PrGpuOptions o;
		PrGpuBenchOptions b;
		PrEngine   *e;
		PrGpuReport rep;
		Row			row;
		PrIterOptions git = it;
		PrStatus	st;

		if (only && !in_list(only, c.name))
			continue;
		if (c.tile_width > 0 && c.tile_width * 2 > g.n_nodes)
			continue;			/* one tile anyway */
		if (c.n_smem_tiles > 1 && (int64_t) (c.n_smem_tiles / 2) * 49152 >= g.n_nodes)
			continue;			/* as many shared-memory tiles as columns allow: a smaller count covers it */
		pr_gpu_options_init(&o);
		pr_gpu_bench_options_init(&b);
		o.kernel = c.kernel;
		o.order = c.order;
		b.measure_reps = c.measure_reps;
		/* the two cuSPARSE rows are the library as a user calls it (its default algorithm) */
		b.cusparse_default_alg = c.kernel == PR_GPU_KERNEL_CUSPARSE;
		b.tile_width = c.tile_width;
		b.vec_threshold = c.vec_threshold;
		o.precision = c.precision;
		b.n_smem_tiles = c.n_smem_tiles;
		b.compact_partials = c.compact;
		b.plan_threads = threads;
		b.model_text = model_text.empty() ? NULL : model_text.c_str();
		e = pr_gpu_bench_engine_create(&o, &b, &err);
		if (e == NULL)
			die_on(PR_ERR_ENGINE, err, "gpu engine");
		git.tolerance = c.precision == PR_GPU_FP64 ? 1e-10 : 1e-7;
		git.max_iterations = 300;
		git.check_every = 1;
		t0 = pr_clock_seconds();
		st = pr_pagerank(e, &g, 0.85, &restart, &git, got.data(), &stats, &err);
		if (st != PR_OK)
		{
			printf("# %s: %s: %s\n", c.name, pr_status_name(st), err.message);
			e->ops->release(e);
			continue;
		}
		if (pr_gpu_engine_report(e, &rep, &err) != PR_OK)
		{
			printf("# %s: report: %s\n", c.name, err.message);
			e->ops->release(e);
			continue;
		}
		device = rep.device;
		row.name = c.name;
		row.format = rep.format;
		row.iterations = stats.iterations;
		row.converged = stats.converged;
		row.l1 = bench_l1(got.data(), ref.data(), g.n_nodes);
		row.top_mismatch = top_mismatches(ref.data(), got.data(), g.n_nodes, std::min<int64_t>(100, g.n_nodes));
		row.ok = row.l1 <= 1e-5 && row.top_mismatch == 0;
		row.predicted_ms = rep.predicted_ms;
		row.bytes_per_edge = rep.bytes_per_edge;
		printf("# %-17s %s | plan %.2f s upload %.2f s | run %d it (%.2f s) | %s\n", c.name, rep.format,
			   rep.plan_seconds, rep.upload_seconds, stats.iterations, pr_clock_seconds() - t0,
			   rep.n_candidates ? rep.candidates : "");
		if (rep.measured_ms >= 0)
		{
			printf("# %s measured choice: %s %.3f ms (model %.3f), runner-up %s %.3f ms (model %.3f); timed (measured/model ms): %s\n",
				   c.name, rep.layout, rep.measured_ms, rep.predicted_ms, rep.runner_up[0] ? rep.runner_up : "none",
				   rep.runner_up_ms, rep.runner_up_predicted_ms, rep.measured);
			row.format = std::string(rep.layout) + ": " + row.format;
		}

		/* determinism: a second run gives the same bits */
		{
			std::vector<double> again((size_t) g.n_nodes);

			die_on(pr_pagerank(e, &g, 0.85, &restart, &git, again.data(), &stats, &err), err, "pagerank again");
			if (memcmp(again.data(), got.data(), (size_t) g.n_nodes * 8) != 0)
			{
				printf("# %s: NOT bit-identical run to run%s\n", c.name,
					   c.kernel == PR_GPU_KERNEL_CUSPARSE ? " (cuSPARSE baseline: not required)" : "");
				if (c.kernel != PR_GPU_KERNEL_CUSPARSE)
					row.ok = false;
			}
			else
				printf("# %s: bit-identical run to run\n", c.name);
		}

		/* timings: the engine holds x in slot 0 after the run; alternate slots */
		row.spmv_ms = time_ms(e, reps, [&]() { PrError er; die_on(e->ops->product(e, PR_PRODUCT_PULL_NORMALIZED, 0, 1, &er), er, "product"); });
		row.iter_ms = time_ms(e, reps, [&]() {
			PrError		er;

			die_on(e->ops->product(e, PR_PRODUCT_PULL_NORMALIZED, 0, 1, &er), er, "product");
			die_on(e->ops->pagerank_update(e, 1, 0, 0.85, &restart, &er), er, "update");
			die_on(e->ops->product(e, PR_PRODUCT_PULL_NORMALIZED, 1, 0, &er), er, "product");
			die_on(e->ops->pagerank_update(e, 0, 1, 0.85, &restart, &er), er, "update");
		}) / 2.0;
		rows.push_back(row);
		e->ops->release(e);
	}

	/* the table */
	double		base_nat = 0,
				base_sorted = 0,
				base_nat_spmv = 0;

	for (const Row &r : rows)
	{
		if (r.name == "cusparse-natural")
		{
			base_nat = r.iter_ms;
			base_nat_spmv = r.spmv_ms;
		}
		if (r.name == "cusparse-sorted")
			base_sorted = r.iter_ms;
	}
	printf("\n### %s: %lld nodes, %lld edges — %s\n\n", label ? label : (file ? file : "graph"),
		   (long long) g.n_nodes, (long long) g.n_edges, device.c_str());
	printf("copy bandwidth %.0f GB/s; floor (4 B/edge + 12 B/node) %.4f ms; CPU reference fp64, L1 tol 1e-10\n\n",
		   bw / 1e9, floor_ms);
	printf("| kernel | ms/SpMV | ms/iteration | GB/s (SpMV, 4B/e+12B/n) | %% of floor (iter) | vs cuSPARSE (iter) | vs cuSPARSE-sorted (iter) | SpMV vs cuSPARSE | B/edge | model ms | iters | L1 vs CPU | top-100 | ok |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (const Row &r : rows)
	{
		double		gbs = (4.0 * g.n_edges + 12.0 * g.n_nodes) / (r.spmv_ms * 1e-3) / 1e9;

		printf("| %s | %.4f | %.4f | %.0f | %.1f%% | %.2fx | %.2fx | %.2fx | %.2f | %s | %d%s | %.2e | %s | %s |\n",
			   r.name.c_str(), r.spmv_ms, r.iter_ms, gbs, 100.0 * floor_ms / r.iter_ms,
			   base_nat > 0 ? base_nat / r.iter_ms : 0.0, base_sorted > 0 ? base_sorted / r.iter_ms : 0.0,
			   base_nat_spmv > 0 ? base_nat_spmv / r.spmv_ms : 0.0, r.bytes_per_edge,
			   r.predicted_ms >= 0 ? std::to_string(r.predicted_ms).substr(0, 6).c_str() : "-",
			   r.iterations, r.converged ? "" : "(max)", r.l1, r.top_mismatch == 0 ? "same" : (std::to_string(r.top_mismatch) + " differ").c_str(),
			   r.ok ? "yes" : "NO");
	}
	for (const Row &r : rows)
		printf("# format %s: %s\n", r.name.c_str(), r.format.c_str());
	pr_graph_free(&g, &pr_malloc_allocator);
	for (const Row &r : rows)
		if (!r.ok)
			return 1;
	return extra_ok ? 0 : 1;
}
