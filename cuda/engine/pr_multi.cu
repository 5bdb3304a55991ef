/*
 * pr_multi.cu — PageRank over several local GPUs: row partition (pr_partition), local products
 * (CSR kernel, cuSPARSE, or the single-GPU engine's tiled kernels through pr_gpu_tiled.h), the
 * vector exchanged with ncclAllGather after each product (see pr_multi.h).
 */
#include "pr_multi.h"
#include "pr_partition.h"
#include "pr_plan.h"
#include "pr_multi_kernels.cuh"
#include "pr_gpu_tiled.h"
#include "pr_gpu_status.h"

#include <cuda_runtime.h>
#include <cusparse.h>
#include <nccl.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <thread>
#include <vector>

/* Records a failed CUDA call in err and returns from the enclosing function. */
#define PRM_CUDA(call) PR_CUDA_OR_RETURN("multi-GPU", call)

/* Same for NCCL calls. */
#define PRM_NCCL(call) do { \
	ncclResult_t nccl_status_ = (call); \
	if (nccl_status_ != ncclSuccess) \
		return pr_error_set(err, PR_ERR_ENGINE, "multi-GPU: %s failed: %s (%s:%d)", #call, \
							ncclGetErrorString(nccl_status_), __FILE__, __LINE__); \
} while (0)

/* Same for cuSPARSE calls. */
#define PRM_CUSPARSE(call) PR_CUSPARSE_OR_RETURN("multi-GPU", call)

/* Checks the launch just made. */
#define PRM_LAUNCHED() PRM_CUDA(cudaGetLastError())

/*
 * The local product of a GPU's rows (part gpu of the partition): its results go to the slots
 * slot_begin .. slot_begin + rows - 1 of the vector, the block its all-gather sends.
 */
typedef struct MultiRows
{
	int64_t		slot_begin;
	/* CSR kernel: rows [0, n_long) chunked, [n_long, warp_end) a warp each, the rest 4 lanes */
	int64_t		n_long;
	int64_t		warp_end;
	int64_t		n_chunks;
	int64_t    *d_chunk_begin;	/* entry ranges (GPU entry ids) of the long rows' chunks */
	int64_t    *d_chunk_end;
	int64_t    *d_first_chunk;
	void	   *d_partial;		/* [n_chunks] T */
	/* cuSPARSE: the rows as a matrix (rows x n_slots, 0-based 32-bit offsets) */
	int32_t    *d_ptr32;
	cusparseSpMatDescr_t sp_mat;
	cusparseDnVecDescr_t sp_y[2];	/* the rows' slots of x[0] / x[1] */
	void	   *sp_buffer;
	/* tiled kernel: the composite over the GPU's column space */
	TiledMatrix *tiled;
} MultiRows;

/*
 * One GPU's share: its rows' CSR, the whole vector twice (current, next) and the reductions.  Vectors, values and partials are float or double (PrMulti.precision): untyped
 * here, typed by the template functions that use them.
 */
typedef struct MultiGpu
{
	int			dev;
	cudaStream_t stream;		/* column gather / scale, products, updates, reductions, exchange */
	ncclComm_t	nccl;
	cusparseHandle_t sp;
	int64_t		rows;
	int64_t		nnz;
	int64_t    *d_ptr;			/* [rows+1] GPU entry ids */
	int32_t    *d_col;
	void	   *d_val;			/* [nnz] T (fp32), NULL (fp64 / tiled: all 1, scaled on x) */
	void	   *d_x[2];			/* [n_slots] T: the whole vector, current and next */
	void	   *d_z;			/* fp64 CSR: [n_slots] T, x / out_strength (the product's input) */
	double	   *d_inv;			/* fp64 CSR: [n_slots] 1 / out_strength of each slot (0: dangling, padding) */
	uint8_t    *d_dangling;		/* [rows] own rows that are dangling */
	double	   *d_part;			/* [2 nb]: the update's block partials */
	int			nb;				/* blocks of the update */
	double	   *d_red[2];		/* [2] (residual, dangling mass) of x[0] / x[1] */
	cusparseDnVecDescr_t sp_x[2];
	/* tiled kernel: the GPU's column space, map, scale and gathered z */
	int64_t		n_lcols;
	int32_t    *d_col_map;		/* [n_lcols] slot of each local column */
	void	   *d_lscale;		/* [n_lcols] T: 1 / out_strength of each local column */
	void	   *d_zl;			/* [n_lcols + 1] T */
	TiledDevice td;
	/* compact exchange: own slots some GPU reads, packed and all-gathered into xg */
	int32_t    *d_pack;			/* [xg_count] own slot offset of each sent value (-1: padding) */
	void	   *d_send;			/* [xg_count] T */
	void	   *d_xg;			/* [n_gpus xg_count + 1] T: every GPU's packed values, then a 0 */
	void	  **tiled_allocs;	/* the layouts' device arrays */
	int			n_tiled_allocs;
	int			cap_tiled_allocs;
	MultiRows	own;			/* the local product of the GPU's rows */
	size_t		bytes;
} MultiGpu;

struct PrMulti
{
	PrMultiOptions opt;
	int			n_gpus;
	MultiGpu	gpu[PR_MULTI_MAX_GPUS];
	bool		comms;
	bool		prepared;
	PrPartition part;
	PrMultiReport report;
	bool		fp64;
	size_t		value_size;		/* sizeof(T): 4 or 8 */
	bool		compact;		/* compact exchange in use (tiled, several GPUs) */
	int64_t		xg_count;		/* compact: values each GPU sends (the largest packed count) */
};

/* The start of GPU G's vector k, offset by count values (bytes of the precision in use). */
static void *
vec_at(const PrMulti *m, const MultiGpu *G, int k, int64_t count)
{
	return (char *) G->d_x[k] + (size_t) count * m->value_size;
}

/*
 * Restores the caller's current CUDA device when a public entry point returns: this library moves
 * between GPUs, and a caller that also drives a single-GPU engine (the GPU service) expects its
 * device to stay current.
 */
struct DeviceGuard
{
	int			dev = -1;

	DeviceGuard()
	{
		if (cudaGetDevice(&dev) != cudaSuccess)
			dev = -1;
	}
	~DeviceGuard()
	{
		if (dev >= 0)
			cudaSetDevice(dev);
	}
};

/* Fills the defaults. */
void
pr_multi_options_init(PrMultiOptions *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->n_gpus = 0;
	opts->method = PR_PARTITION_GREEDY;
	opts->kernel = PR_MULTI_KERNEL_CSR;
	opts->check_every = 1;
	opts->precision = PR_MULTI_FP64;	/* as powerrank.gpu_precision's default */
	opts->compact_exchange = true;
	opts->tiled_smem_tiles = 8;
	opts->tiled_vec_threshold = 128;
	opts->tiled_compact = true;
	opts->tiled_model = NULL;
}

/* Visible CUDA devices. */
int
pr_multi_device_count(void)
{
	int			n = 0;

	if (cudaGetDeviceCount(&n) != cudaSuccess)
		return 0;
	return n;
}

/* Grid of the row kernels for rows x lanes threads. */
static unsigned
grid_for(int64_t threads)
{
	return (unsigned) ((threads + PRM_THREADS - 1) / PRM_THREADS);
}

/* Blocks of the reduction kernels over n rows. */
static int
reduce_blocks(int64_t n)
{
	int64_t		b = (n + PRM_THREADS - 1) / PRM_THREADS;

	return (int) (b < 1 ? 1 : (b > PRM_REDUCE_BLOCKS ? PRM_REDUCE_BLOCKS : b));
}

/* Creates the stream of each GPU and the communicators. */
static PrStatus
multi_init(PrMulti *m, PrError *err)
{
	int			devs[PR_MULTI_MAX_GPUS];
	ncclComm_t	comms[PR_MULTI_MAX_GPUS];
	int			visible = 0;
	int			version = 0;

	PRM_CUDA(cudaGetDeviceCount(&visible));
	m->n_gpus = m->opt.n_gpus > 0 ? m->opt.n_gpus : visible;
	if (m->n_gpus < 1 || m->n_gpus > visible || m->n_gpus > PR_MULTI_MAX_GPUS)
		return pr_error_set(err, PR_ERR_INVALID, "multi-GPU: %d GPUs asked, %d visible (at most %d)",
							m->n_gpus, visible, PR_MULTI_MAX_GPUS);
	for (int g = 0; g < m->n_gpus; g++)
	{
		MultiGpu   *G = &m->gpu[g];

		G->dev = devs[g] = g;
		PRM_CUDA(cudaSetDevice(g));
		PRM_CUDA(cudaStreamCreateWithFlags(&G->stream, cudaStreamNonBlocking));
		PRM_CUSPARSE(cusparseCreate(&G->sp));
		PRM_CUSPARSE(cusparseSetStream(G->sp, G->stream));
	}
	/*
	 * A tuning default, never an override: at least 32 channels for the all-gather unless the
	 * environment sets NCCL_MIN_NCHANNELS (on 2 H200s the R-MAT 26 exchange took 0.387 ms instead
	 * of 0.440, doc/RESULTS.md).  Every other NCCL setting is the environment's.
	 */
	if (setenv("NCCL_MIN_NCHANNELS", "32", 0) != 0)
		return pr_error_set(err, PR_ERR_ENGINE, "multi-GPU: setenv NCCL_MIN_NCHANNELS failed");
	PRM_NCCL(ncclCommInitAll(comms, m->n_gpus, devs));
	m->comms = true;
	for (int g = 0; g < m->n_gpus; g++)
		m->gpu[g].nccl = comms[g];
	PRM_NCCL(ncclGetVersion(&version));
	snprintf(m->report.nccl_version, sizeof(m->report.nccl_version), "%d", version);
	{
		cudaDeviceProp prop;

		PRM_CUDA(cudaGetDeviceProperties(&prop, 0));
		snprintf(m->report.device, sizeof(m->report.device), "%.95s", prop.name);
	}
	m->report.n_gpus = m->n_gpus;
	return PR_OK;
}

/* Creates a PrMulti over the local GPUs. */
PrMulti *
pr_multi_create(const PrMultiOptions *opts, PrError *err)
{
	DeviceGuard guard;
	PrMulti    *m = (PrMulti *) calloc(1, sizeof(PrMulti));

	if (m == NULL)
	{
		pr_error_set(err, PR_ERR_NOMEM, "multi-GPU: out of memory");
		return NULL;
	}
	m->opt = *opts;
	if (m->opt.check_every < 1)
		m->opt.check_every = 1;
	m->fp64 = m->opt.precision == PR_MULTI_FP64;
	m->value_size = m->fp64 ? sizeof(double) : sizeof(float);
	if (multi_init(m, err) != PR_OK)
	{
		pr_multi_free(m);
		return NULL;
	}
	return m;
}

/* Allocates device memory counted in the GPU's bytes. */
template <typename T>
static cudaError_t
dev_alloc(MultiGpu *G, T **p, size_t count)
{
	cudaError_t s = cudaMalloc((void **) p, (count > 0 ? count : 1) * sizeof(T));

	if (s == cudaSuccess)
		G->bytes += (count > 0 ? count : 1) * sizeof(T);
	return s;
}

/* Allocates bytes of device memory counted in the GPU's bytes (untyped buffers). */
static cudaError_t
dev_alloc_bytes(MultiGpu *G, void **p, size_t bytes)
{
	cudaError_t s = cudaMalloc(p, bytes > 0 ? bytes : 1);

	if (s == cudaSuccess)
		G->bytes += bytes > 0 ? bytes : 1;
	return s;
}

/* ---- host preparation (no device calls) ---- */

/* One GPU's host side: its rows' CSR (part g of the partition), dangling flags, the tiled plan. */
typedef struct HostGpu
{
	PrPartCsr	csr;
	bool		have_csr;
	std::vector<uint8_t> dangling;	/* [csr.n_rows] */
	/* tiled */
	int32_t    *col_map;		/* [n_lcols] slot of each local column (the GPU's column space) */
	int64_t		n_lcols;
	PrComposite comp;
	bool		planned;
	char		layout[192];
} HostGpu;

/* The whole host preparation of one configuration. */
typedef struct HostPrep
{
	PrPartition part;
	std::vector<HostGpu> gpu;
	std::vector<double> inv_out;	/* [n] 1 / out_strength (0: dangling) */
	std::vector<double> inv_slot;	/* [n_slots] the same per slot (0: padding) */
	double		partition_s;
	double		csr_s;
	double		plan_s;
} HostPrep;

/* Frees a HostPrep's CSRs, plans and maps (not the partition: the caller may keep it). */
static void
host_free(HostPrep *hp)
{
	for (HostGpu &H : hp->gpu)
	{
		if (H.have_csr)
			pr_part_csr_free(&H.csr, &pr_malloc_allocator);
		H.have_csr = false;
		if (H.planned)
		{
			pr_plan_composite_free(&H.comp, &pr_malloc_allocator);
			H.planned = false;
		}
		pr_free(&pr_malloc_allocator, H.col_map);
		H.col_map = NULL;
	}
}

/* Runs fn(begin, end) over [0, n) in even ranges on the online CPUs (results independent of the split). */
template <typename F>
static void
parallel_ranges(int64_t n, F fn)
{
	int			threads = pr_partition_threads();
	std::vector<std::thread> th;

	if (n < 1000000)
		threads = 1;
	for (int t = 1; t < threads; t++)
		th.emplace_back([&, t]() { fn(n * t / threads, n * (t + 1) / threads); });
	fn(0, n / threads);
	for (auto &x : th)
		x.join();
}

/* Shared-memory tile width of the tiled kernel (as the single-GPU engine). */
static int64_t
tiled_smem_width(bool fp64)
{
	return fp64 ? 24576 : 49152;
}

/*
 * Plans GPU H's tiled layout on the host: the columns its rows read relabelled by descending
 * count (its own column space, so one column gather per iteration), then its rows planned as a
 * rectangular composite over that space (fixed options, or the model's choice), with the
 * column degrees of the relabel.
 */
static PrStatus
plan_tiled_gpu(const PrMultiOptions *opt, bool fp64, HostGpu *H, PrError *err)
{
	PrPlanCsr	rect;
	int64_t    *deg = NULL;
	PrStatus	st = PR_OK;
	const PrPartCsr *lc = &H->csr;
	PrCompositeOptions o;
	double		predicted = -1;

	if (lc->n_rows == 0 || lc->nnz == 0)
		return PR_OK;			/* nothing to multiply: n_lcols 0, no plan (the product writes zeros) */
	st = pr_plan_relabel_columns(lc->n_rows, lc->n_cols, lc->ptr, lc->col, lc->val, &pr_malloc_allocator, &rect,
								 &H->col_map, &deg, err);
	if (st != PR_OK)
		return st;
	H->n_lcols = rect.n_cols;
	memset(&o, 0, sizeof(o));
	o.tile_width = rect.n_cols;
	o.chunk = 4096;
	o.smem_width = tiled_smem_width(fp64);
	o.n_smem_tiles = opt->tiled_smem_tiles;
	o.vec_threshold = opt->tiled_vec_threshold > 0 ? opt->tiled_vec_threshold : 32;
	o.compact = opt->tiled_compact;
	if (opt->tiled_model != NULL)
	{
		PrPlanChoice choice;
		char		log[512];
		int			n_cand = 0;

		pr_plan_choice_init(&choice, rect.n_cols);
		choice.composite.tile_width = rect.n_cols;
		choice.composite.chunk = 4096;
		choice.composite.smem_width = tiled_smem_width(fp64);
		choice.allow_binned = false;
		st = pr_plan_choose(&rect, opt->tiled_model, &choice, &predicted, log, sizeof(log), &n_cand,
							&pr_malloc_allocator, err);
		if (st == PR_OK)
			o = choice.composite;
	}
	if (st == PR_OK)
		st = pr_plan_composite_with_degrees(&rect, deg, &o, &pr_malloc_allocator, &H->comp, err);
	if (st == PR_OK)
	{
		int			smem = o.n_smem_tiles < H->comp.n_tiles ? o.n_smem_tiles : H->comp.n_tiles;

		H->planned = true;
		snprintf(H->layout, sizeof(H->layout),
				 "%d smem tile(s) of %lld cols + %d L2 tile(s), CSR-vector rows >= %d%s; %lld of %lld columns read%s",
				 smem, (long long) o.smem_width, H->comp.n_tiles - smem, o.vec_threshold,
				 o.compact ? ", compact partials" : "",
				 (long long) rect.n_cols, (long long) lc->n_cols, opt->tiled_model ? ", model's choice" : ", fixed");
	}
	pr_free(&pr_malloc_allocator, deg);
	pr_plan_csr_free(&rect, &pr_malloc_allocator);
	return st;
}

/*
 * The host work of a configuration: the partition into n_gpus parts, 1 / out_strength per node
 * and per slot, every GPU's CSR (values 1 / out_strength folded in only for the fp32 CSR and
 * cuSPARSE kernels), its dangling flags and (tiled) its plan.  Each step uses every CPU
 * (pr_partition_threads, pr_plan_threads) one GPU after another.
 */
static PrStatus
host_prepare(const PrMultiOptions *opt, int n_gpus, bool fp64, int64_t n, const int64_t *ptr,
			 const int32_t *col, const double *val, const double *out_strength, HostPrep *hp, PrError *err)
{
	PrPartitionOptions popt;
	bool		tiled = opt->kernel == PR_MULTI_KERNEL_TILED;
	double		t0 = pr_clock_seconds();
	PrStatus	st;

	pr_partition_options_init(&popt);
	popt.n_parts = n_gpus;
	popt.method = (PrPartitionMethod) opt->method;
	if ((st = pr_partition_build(n, ptr, &popt, &pr_malloc_allocator, &hp->part, err)) != PR_OK)
		return st;
	hp->inv_out.assign((size_t) n + 1, 0.0);
	hp->inv_slot.assign((size_t) hp->part.n_slots + 1, 0.0);
	parallel_ranges(n, [&](int64_t b, int64_t e) {
		for (int64_t v = b; v < e; v++)
			hp->inv_out[(size_t) v] = out_strength[v] > 0 ? 1.0 / out_strength[v] : 0.0;
	});
	parallel_ranges(hp->part.n_slots, [&](int64_t b, int64_t e) {
		for (int64_t s = b; s < e; s++)
			if (hp->part.slot_to_node[s] >= 0)
				hp->inv_slot[(size_t) s] = hp->inv_out[(size_t) hp->part.slot_to_node[s]];
	});
	hp->partition_s = pr_clock_seconds() - t0;

	t0 = pr_clock_seconds();
	hp->gpu.resize((size_t) n_gpus);
	for (int g = 0; g < n_gpus && st == PR_OK; g++)
	{
		HostGpu    &H = hp->gpu[(size_t) g];
		int64_t		slot0 = pr_partition_slot_begin(&hp->part, g);

		/* fp64 and tiled: structure and raw weights (the scale by 1 / out_strength is applied to x) */
		st = pr_partition_local_csr(&hp->part, g, ptr, col, val, fp64 || tiled ? NULL : hp->inv_out.data(),
									&pr_malloc_allocator, &H.csr, err);
		if (st != PR_OK)
			break;
		H.have_csr = true;
		H.dangling.assign((size_t) H.csr.n_rows + 1, 0);
		parallel_ranges(H.csr.n_rows, [&](int64_t b, int64_t e) {
			for (int64_t i = b; i < e; i++)
				H.dangling[(size_t) i] = out_strength[hp->part.slot_to_node[slot0 + i]] > 0 ? 0 : 1;
		});
	}
	hp->csr_s = pr_clock_seconds() - t0;
	t0 = pr_clock_seconds();
	if (tiled)
	{
		pr_plan_set_threads(0);
		for (int g = 0; g < n_gpus && st == PR_OK; g++)
			st = plan_tiled_gpu(opt, fp64, &hp->gpu[(size_t) g], err);
	}
	hp->plan_s = pr_clock_seconds() - t0;
	if (st != PR_OK)
	{
		host_free(hp);
		pr_partition_free(&hp->part, &pr_malloc_allocator);
	}
	return st;
}

/* Host preparation alone, timed. */
PrStatus
pr_multi_host_prepare(const PrMultiOptions *opts, int64_t n, const int64_t *ptr, const int32_t *col,
					  const double *val, const double *out_strength, PrMultiHostTimes *out, PrError *err)
{
	HostPrep	hp{};
	double		t0 = pr_clock_seconds();
	PrStatus	st;

	memset(out, 0, sizeof(*out));
	if (opts->n_gpus < 1 || opts->n_gpus > PR_MULTI_MAX_GPUS)
		return pr_error_set(err, PR_ERR_INVALID, "multi-GPU host preparation: n_gpus must be 1..%d", PR_MULTI_MAX_GPUS);
	st = host_prepare(opts, opts->n_gpus, opts->precision == PR_MULTI_FP64, n, ptr, col, val, out_strength,
					  &hp, err);
	if (st != PR_OK)
		return st;
	out->partition_seconds = hp.partition_s;
	out->csr_seconds = hp.csr_s;
	out->plan_seconds = hp.plan_s;
	out->edge_imbalance = pr_partition_edge_imbalance(&hp.part);
	out->row_imbalance = pr_partition_row_imbalance(&hp.part);
	for (int g = 0; g < opts->n_gpus; g++)
		out->cols[g] = hp.gpu[(size_t) g].n_lcols;
	host_free(&hp);
	pr_partition_free(&hp.part, &pr_malloc_allocator);
	out->total_seconds = pr_clock_seconds() - t0;
	return PR_OK;
}

/* ---- upload ---- */

/* Device memory for a tiled layout's arrays, counted in the GPU's bytes and freed with it. */
static PrStatus
tiled_alloc(void *arg, void **out, size_t bytes, PrError *err)
{
	MultiGpu   *G = (MultiGpu *) arg;

	if (G->n_tiled_allocs == G->cap_tiled_allocs)
	{
		int			cap = G->cap_tiled_allocs > 0 ? 2 * G->cap_tiled_allocs : 64;
		void	  **grown = (void **) realloc(G->tiled_allocs, (size_t) cap * sizeof(void *));

		if (grown == NULL)
			return pr_error_set(err, PR_ERR_NOMEM, "multi-GPU: out of host memory");
		G->tiled_allocs = grown;
		G->cap_tiled_allocs = cap;
	}
	PRM_CUDA(dev_alloc_bytes(G, out, bytes));
	G->tiled_allocs[G->n_tiled_allocs++] = *out;
	return PR_OK;
}

/*
 * Allocates GPU g's vectors (whole x twice), its dangling flags and reductions, and sets its
 * rows' place (rows, entries, slots); any kernel.
 */
static PrStatus
upload_vectors(PrMulti *m, int g, const HostGpu *H, PrError *err)
{
	size_t		vs = m->value_size;
	MultiGpu   *G = &m->gpu[g];

	PRM_CUDA(cudaSetDevice(G->dev));
	G->rows = H->csr.n_rows;
	G->nnz = H->csr.nnz;
	G->own.slot_begin = pr_partition_slot_begin(&m->part, g);
	G->nb = reduce_blocks(G->rows);
	PRM_CUDA(dev_alloc_bytes(G, &G->d_x[0], (size_t) m->part.n_slots * vs));
	PRM_CUDA(dev_alloc_bytes(G, &G->d_x[1], (size_t) m->part.n_slots * vs));
	PRM_CUDA(dev_alloc(G, &G->d_dangling, (size_t) G->rows));
	PRM_CUDA(dev_alloc(G, &G->d_part, 2 * (size_t) G->nb));
	PRM_CUDA(dev_alloc(G, &G->d_red[0], 2));
	PRM_CUDA(dev_alloc(G, &G->d_red[1], 2));
	if (G->rows > 0)
		PRM_CUDA(cudaMemcpy(G->d_dangling, H->dangling.data(), (size_t) G->rows, cudaMemcpyHostToDevice));
	PRM_CUDA(cudaMemset(G->d_x[0], 0, (size_t) m->part.n_slots * vs));
	PRM_CUDA(cudaMemset(G->d_x[1], 0, (size_t) m->part.n_slots * vs));
	PRM_CUDA(cudaMemset(G->d_red[0], 0, 2 * sizeof(double)));
	PRM_CUDA(cudaMemset(G->d_red[1], 0, 2 * sizeof(double)));
	return PR_OK;
}

/*
 * The compact exchange's host plan (tiled): GPU g sends only its slots that some GPU
 * can read — nodes with out-edges (1 / out_strength > 0); a column of any row is such a node, or
 * one whose weights sum to 0, which is scaled by 0 — packed in slot order into xg_count values
 * (the largest GPU's count; the others padded).  After the all-gather, xg holds GPU g's packed
 * values at g xg_count, and slot_to_xg maps every slot there (the others to the trailing 0).
 */
static void
plan_compact(PrMulti *m, const HostPrep *hp, std::vector<std::vector<int32_t>> &pack,
			 std::vector<int32_t> &slot_to_xg)
{
	int64_t		stride = m->part.stride;
	int64_t		most = 1;

	pack.assign((size_t) m->n_gpus, std::vector<int32_t>());
	for (int g = 0; g < m->n_gpus; g++)
	{
		int64_t		begin = pr_partition_slot_begin(&m->part, g);

		for (int64_t o = 0; o < stride; o++)
			if (hp->inv_slot[(size_t) (begin + o)] > 0)
				pack[(size_t) g].push_back((int32_t) o);
		most = (int64_t) pack[(size_t) g].size() > most ? (int64_t) pack[(size_t) g].size() : most;
	}
	m->xg_count = most;
	slot_to_xg.assign((size_t) m->part.n_slots + 1, (int32_t) (m->n_gpus * most));
	for (int g = 0; g < m->n_gpus; g++)
	{
		int64_t		begin = pr_partition_slot_begin(&m->part, g);

		for (size_t i = 0; i < pack[(size_t) g].size(); i++)
			slot_to_xg[(size_t) (begin + pack[(size_t) g][i])] = (int32_t) (g * most + (int64_t) i);
		pack[(size_t) g].resize((size_t) most, -1);
	}
}

/* Uploads GPU g's compact exchange: its pack list, the send buffer and xg (zeroed). */
static PrStatus
upload_compact(PrMulti *m, int g, const std::vector<int32_t> &pack, PrError *err)
{
	MultiGpu   *G = &m->gpu[g];
	size_t		vs = m->value_size;
	size_t		xg_values = (size_t) (m->n_gpus * m->xg_count + 1);

	PRM_CUDA(cudaSetDevice(G->dev));
	PRM_CUDA(dev_alloc(G, &G->d_pack, (size_t) m->xg_count));
	PRM_CUDA(dev_alloc_bytes(G, &G->d_send, (size_t) m->xg_count * vs));
	PRM_CUDA(dev_alloc_bytes(G, &G->d_xg, xg_values * vs));
	PRM_CUDA(cudaMemcpy(G->d_pack, pack.data(), (size_t) m->xg_count * sizeof(int32_t), cudaMemcpyHostToDevice));
	PRM_CUDA(cudaMemset(G->d_send, 0, (size_t) m->xg_count * vs));
	PRM_CUDA(cudaMemset(G->d_xg, 0, xg_values * vs));
	return PR_OK;
}

/*
 * Uploads GPU g's tiled layout: the column map and scale (1 / out_strength of each column) of
 * its column space, the gathered z, and its composite.  slot_to_xg (compact
 * exchange; empty otherwise): the column map points into xg instead of the slots.
 */
template <typename T>
static PrStatus
upload_tiled_t(PrMulti *m, int g, const HostGpu *H, const std::vector<double> &inv_slot,
			   const std::vector<int32_t> &slot_to_xg, PrError *err)
{
	MultiGpu   *G = &m->gpu[g];
	int64_t		nc = H->n_lcols;
	std::vector<T> scale((size_t) nc + 1);
	std::vector<int32_t> col_map(H->col_map, H->col_map + nc);	/* into x, or into xg */
	PrStatus	st;

	PRM_CUDA(cudaSetDevice(G->dev));
	G->n_lcols = nc;
	for (int64_t j = 0; j < nc; j++)
		scale[(size_t) j] = (T) inv_slot[(size_t) H->col_map[j]];
	if (!slot_to_xg.empty())
		for (int64_t j = 0; j < nc; j++)
			col_map[(size_t) j] = slot_to_xg[(size_t) H->col_map[j]];
	PRM_CUDA(dev_alloc(G, &G->d_col_map, (size_t) nc));
	PRM_CUDA(dev_alloc_bytes(G, &G->d_lscale, (size_t) nc * sizeof(T)));
	PRM_CUDA(dev_alloc_bytes(G, &G->d_zl, (size_t) (nc + 1) * sizeof(T)));
	if (nc > 0)
	{
		PRM_CUDA(cudaMemcpy(G->d_col_map, col_map.data(), (size_t) nc * sizeof(int32_t), cudaMemcpyHostToDevice));
		PRM_CUDA(cudaMemcpy(G->d_lscale, scale.data(), (size_t) nc * sizeof(T), cudaMemcpyHostToDevice));
	}
	PRM_CUDA(cudaMemset(G->d_zl, 0, (size_t) (nc + 1) * sizeof(T)));	/* z[nc] = 0: the padding column */
	G->td.device = G->dev;
	G->td.fp64 = m->fp64;
	G->td.stream = G->stream;
	G->td.alloc = tiled_alloc;
	G->td.alloc_arg = G;
	if ((st = pr_tiled_smem_setup(G->dev, m->fp64, tiled_smem_width(m->fp64), &G->td.smem_grid, err)) != PR_OK)
		return st;
	if (!H->planned)
		return PR_OK;			/* rows without entries: no plan (the rows are set to 0) */
	if ((G->own.tiled = pr_tiled_new()) == NULL)
		return pr_error_set(err, PR_ERR_NOMEM, "multi-GPU: out of host memory");
	return pr_tiled_upload(&G->td, &H->comp, G->own.tiled, err);
}

/*
 * Sets up GPU G's CSR kernel row classes from its CSR (the rows come by descending length;
 * otherwise — the ranges method — a warp per row, correct for any row) and uploads its long rows'
 * chunks (entry ids).
 */
static PrStatus
upload_row_classes(PrMulti *m, MultiGpu *G, const int64_t *lp, PrError *err)
{
	MultiRows  *P = &G->own;
	int64_t		long_or_warp_end = 0;
	std::vector<int64_t> cb,
				ce,
				first(1, 0);

	P->n_long = 0;
	P->warp_end = 0;
	for (int64_t i = 1; i < G->rows; i++)
		if (lp[i + 1] - lp[i] > lp[i] - lp[i - 1])
		{
			P->warp_end = G->rows;
			break;
		}
	for (int64_t i = 0; i < G->rows && P->warp_end == 0; i++)
	{
		int64_t		len = lp[i + 1] - lp[i];

		if (len > PRM_CHUNK)
		{
			P->n_long = i + 1;
			for (int64_t e = lp[i]; e < lp[i + 1]; e += PRM_CHUNK)
			{
				cb.push_back(e);
				ce.push_back(e + PRM_CHUNK < lp[i + 1] ? e + PRM_CHUNK : lp[i + 1]);
			}
			first.push_back((int64_t) cb.size());
		}
		if (len >= 32)
			long_or_warp_end = i + 1;
	}
	if (P->warp_end == 0)
		P->warp_end = long_or_warp_end;
	if (P->warp_end < P->n_long)
		P->warp_end = P->n_long;
	P->n_chunks = (int64_t) cb.size();
	PRM_CUDA(dev_alloc(G, &P->d_chunk_begin, cb.size()));
	PRM_CUDA(dev_alloc(G, &P->d_chunk_end, ce.size()));
	PRM_CUDA(dev_alloc(G, &P->d_first_chunk, first.size()));
	PRM_CUDA(dev_alloc_bytes(G, &P->d_partial, cb.size() * m->value_size));
	if (!cb.empty())
	{
		PRM_CUDA(cudaMemcpy(P->d_chunk_begin, cb.data(), cb.size() * sizeof(int64_t), cudaMemcpyHostToDevice));
		PRM_CUDA(cudaMemcpy(P->d_chunk_end, ce.data(), ce.size() * sizeof(int64_t), cudaMemcpyHostToDevice));
	}
	PRM_CUDA(cudaMemcpy(P->d_first_chunk, first.data(), first.size() * sizeof(int64_t), cudaMemcpyHostToDevice));
	return PR_OK;
}

/* Sets up GPU G's rows for cuSPARSE: a matrix (0-based 32-bit offsets) and output vectors. */
static PrStatus
upload_rows_cusparse(PrMulti *m, MultiGpu *G, const int64_t *ptr, PrError *err)
{
	MultiRows  *P = &G->own;
	std::vector<int32_t> p32((size_t) G->rows + 1);
	float		one = 1.0f,
				zero = 0.0f;
	size_t		buffer = 0;

	if (G->rows == 0)
		return PR_OK;			/* no rows: no matrix, no product */
	if (G->nnz >= INT32_MAX || m->part.n_slots >= INT32_MAX)
		return pr_error_set(err, PR_ERR_TOO_LARGE, "multi-GPU: a cuSPARSE part has %lld entries (32-bit indices)",
							(long long) G->nnz);
	for (int64_t i = 0; i <= G->rows; i++)
		p32[(size_t) i] = (int32_t) ptr[i];
	PRM_CUDA(dev_alloc(G, &P->d_ptr32, p32.size()));
	PRM_CUDA(cudaMemcpy(P->d_ptr32, p32.data(), p32.size() * sizeof(int32_t), cudaMemcpyHostToDevice));
	PRM_CUSPARSE(cusparseCreateCsr(&P->sp_mat, G->rows, m->part.n_slots, G->nnz, P->d_ptr32, G->d_col,
								   (float *) G->d_val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
								   CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
	for (int k = 0; k < 2; k++)
		PRM_CUSPARSE(cusparseCreateDnVec(&P->sp_y[k], G->rows > 0 ? G->rows : 1, vec_at(m, G, k, P->slot_begin),
										 CUDA_R_32F));
	PRM_CUSPARSE(cusparseSpMV_bufferSize(G->sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, P->sp_mat, G->sp_x[0],
										 &zero, P->sp_y[1], CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, &buffer));
	PRM_CUDA(dev_alloc(G, (unsigned char **) &P->sp_buffer, buffer));
	return PR_OK;
}

/* Uploads GPU g's CSR and sets it up for the CSR kernel or cuSPARSE. */
static PrStatus
upload_csr(PrMulti *m, int g, const HostGpu *H, const std::vector<double> &inv_slot, PrError *err)
{
	size_t		vs = m->value_size;
	MultiGpu   *G = &m->gpu[g];
	const PrPartCsr *lc = &H->csr;

	PRM_CUDA(cudaSetDevice(G->dev));
	if (lc->val == NULL && !m->fp64)
		return pr_error_set(err, PR_ERR_INVALID, "multi-GPU: GPU %d's rows have no values", g);
	PRM_CUDA(dev_alloc(G, &G->d_ptr, (size_t) lc->n_rows + 1));
	PRM_CUDA(dev_alloc(G, &G->d_col, (size_t) lc->nnz));
	if (!m->fp64)
		PRM_CUDA(dev_alloc_bytes(G, &G->d_val, (size_t) lc->nnz * vs));
	if (m->fp64)
	{
		PRM_CUDA(dev_alloc_bytes(G, &G->d_z, (size_t) m->part.n_slots * vs));
		PRM_CUDA(dev_alloc(G, &G->d_inv, (size_t) m->part.n_slots));
		PRM_CUDA(cudaMemcpy(G->d_inv, inv_slot.data(), (size_t) m->part.n_slots * sizeof(double),
							cudaMemcpyHostToDevice));
	}
	PRM_CUDA(cudaMemcpy(G->d_ptr, lc->ptr, ((size_t) lc->n_rows + 1) * sizeof(int64_t), cudaMemcpyHostToDevice));
	PRM_CUDA(cudaMemcpy(G->d_col, lc->col, (size_t) lc->nnz * sizeof(int32_t), cudaMemcpyHostToDevice));
	if (!m->fp64)
		PRM_CUDA(cudaMemcpy(G->d_val, lc->val, (size_t) lc->nnz * sizeof(float), cudaMemcpyHostToDevice));
	if (m->opt.kernel == PR_MULTI_KERNEL_CUSPARSE)
		for (int k = 0; k < 2; k++)
			PRM_CUSPARSE(cusparseCreateDnVec(&G->sp_x[k], m->part.n_slots, G->d_x[k], CUDA_R_32F));
	return m->opt.kernel == PR_MULTI_KERNEL_CUSPARSE ? upload_rows_cusparse(m, G, lc->ptr, err)
		: upload_row_classes(m, G, lc->ptr, err);
}

/* Partitions the matrix, builds each GPU's CSR and plans (host, every CPU), uploads them. */
PrStatus
pr_multi_prepare(PrMulti *m, int64_t n, const int64_t *ptr, const int32_t *col, const double *val,
				 const double *out_strength, PrError *err)
{
	HostPrep	hp{};
	bool		tiled = m->opt.kernel == PR_MULTI_KERNEL_TILED;
	double		t0 = pr_clock_seconds();
	PrStatus	st = PR_OK;
	DeviceGuard guard;

	if (m->prepared)
		return pr_error_set(err, PR_ERR_INVALID, "multi-GPU: already prepared");
	if (m->fp64 && val != NULL)
		return pr_error_set(err, PR_ERR_UNSUPPORTED, "multi-GPU: fp64 runs unweighted graphs only");
	if (m->fp64 && m->opt.kernel == PR_MULTI_KERNEL_CUSPARSE)
		return pr_error_set(err, PR_ERR_UNSUPPORTED, "multi-GPU: fp64 runs the CSR or tiled kernel only");
	if ((st = host_prepare(&m->opt, m->n_gpus, m->fp64, n, ptr, col, val, out_strength, &hp, err)) != PR_OK)
		return st;
	m->part = hp.part;			/* the PrMulti owns the partition from here (pr_multi_free frees it) */
	m->report.partition_seconds = pr_clock_seconds() - t0;
	m->report.host_partition_seconds = hp.partition_s;
	m->report.host_csr_seconds = hp.csr_s;
	m->report.host_plan_seconds = hp.plan_s;
	t0 = pr_clock_seconds();
	m->compact = tiled && m->n_gpus > 1 && m->opt.compact_exchange;	/* one GPU: no exchange */
	m->xg_count = m->part.stride;
	std::vector<std::vector<int32_t>> pack;
	std::vector<int32_t> slot_to_xg;

	if (m->compact)
		plan_compact(m, &hp, pack, slot_to_xg);
	for (int g = 0; g < m->n_gpus && st == PR_OK; g++)
	{
		const HostGpu *H = &hp.gpu[(size_t) g];

		st = upload_vectors(m, g, H, err);
		if (st == PR_OK && m->compact)
			st = upload_compact(m, g, pack[(size_t) g], err);
		if (st == PR_OK && tiled)
		{
			st = m->fp64 ? upload_tiled_t<double>(m, g, H, hp.inv_slot, slot_to_xg, err)
				: upload_tiled_t<float>(m, g, H, hp.inv_slot, slot_to_xg, err);
			m->report.cols[g] = H->n_lcols;
		}
		else if (st == PR_OK)
			st = upload_csr(m, g, H, hp.inv_slot, err);
	}
	if (tiled && st == PR_OK)
		memcpy(m->report.layout, hp.gpu[0].layout, sizeof(m->report.layout));
	host_free(&hp);
	if (st != PR_OK)
		return st;
	m->report.upload_seconds = pr_clock_seconds() - t0;
	m->report.kernel = m->opt.kernel == PR_MULTI_KERNEL_CUSPARSE ? "cusparse" : tiled ? "tiled" : "csr";
	m->report.precision = m->fp64 ? "fp64" : "fp32";
	m->report.method = pr_partition_method_name((PrPartitionMethod) m->opt.method);
	m->report.n_nodes = n;
	m->report.n_edges = ptr[n];
	m->report.stride = m->part.stride;
	m->report.exchange_count = m->xg_count;
	m->report.edge_imbalance = pr_partition_edge_imbalance(&m->part);
	m->report.row_imbalance = pr_partition_row_imbalance(&m->part);
	for (int g = 0; g < m->n_gpus; g++)
	{
		m->report.rows[g] = m->gpu[g].rows;
		m->report.edges[g] = m->gpu[g].nnz;
		m->report.device_bytes[g] = m->gpu[g].bytes;
	}
	m->prepared = true;
	return PR_OK;
}

/* The report. */
PrStatus
pr_multi_report(PrMulti *m, PrMultiReport *out, PrError *err)
{
	if (!m->prepared)
		return pr_error_set(err, PR_ERR_INVALID, "multi-GPU: not prepared");
	*out = m->report;
	return PR_OK;
}

/* ---- one iteration ---- */

/*
 * Enqueues GPU G's product input from the whole x[src] on its stream, once per iteration:
 * tiled, the gather of its column space z = x[col_map] / out_strength; fp64 CSR,
 * z = x / out_strength over all slots.  Returns the input the product reads.
 */
template <typename T>
static PrStatus
enqueue_input_t(PrMulti *m, MultiGpu *G, int src, const T **input, PrError *err)
{
	const T    *x = (const T *) G->d_x[src];

	*input = x;
	if (m->opt.kernel == PR_MULTI_KERNEL_TILED)
	{
		if (m->compact)
			x = (const T *) G->d_xg;	/* x[src]'s read slots, as the last exchange left them */
		if (G->n_lcols > 0)
		{
			k_gather_columns<T><<<grid_for(G->n_lcols), PRM_THREADS, 0, G->stream>>>(G->n_lcols, G->d_col_map,
																				 (const T *) G->d_lscale, x,
																				 (T *) G->d_zl);
			PRM_LAUNCHED();
		}
		*input = (const T *) G->d_zl;
	}
	else if (m->fp64)
	{
		/* the matrix has no values: scale the whole x by 1 / out_strength first */
		k_scale<T><<<reduce_blocks(m->part.n_slots), PRM_THREADS, 0, G->stream>>>(m->part.n_slots, x, G->d_inv,
																				  (T *) G->d_z);
		PRM_LAUNCHED();
		*input = (const T *) G->d_z;
	}
	return PR_OK;
}

/* Enqueues GPU G's product on its stream: its rows of x[dst] from input (x[src] or z). */
template <typename T>
static PrStatus
enqueue_product_t(PrMulti *m, MultiGpu *G, int src, int dst, const T *input, PrError *err)
{
	const MultiRows *P = &G->own;
	T		   *y = (T *) vec_at(m, G, dst, P->slot_begin);
	const T    *val = (const T *) G->d_val;

	if (G->rows == 0)
		return PR_OK;
	if (m->opt.kernel == PR_MULTI_KERNEL_TILED)
	{
		if (P->tiled != NULL)
			return pr_tiled_run<T>(&G->td, P->tiled, input, y, err);
		/* rows without entries (no plan): they are 0 */
		PRM_CUDA(cudaMemsetAsync(y, 0, (size_t) G->rows * sizeof(T), G->stream));
		return PR_OK;
	}
	if (m->opt.kernel == PR_MULTI_KERNEL_CUSPARSE)
	{
		float		one = 1.0f,
					zero = 0.0f;

		PRM_CUSPARSE(cusparseSpMV(G->sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, P->sp_mat, G->sp_x[src],
								  &zero, P->sp_y[dst], CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, P->sp_buffer));
		return PR_OK;
	}
	if (P->n_chunks > 0)
	{
		k_csr_chunks<T><<<(unsigned) P->n_chunks, PRM_THREADS, 0, G->stream>>>(P->n_chunks, P->d_chunk_begin,
																			  P->d_chunk_end, G->d_col, val,
																			  input, (T *) P->d_partial);
		PRM_LAUNCHED();
		k_long_rows<T><<<grid_for(P->n_long), PRM_THREADS, 0, G->stream>>>(P->n_long, P->d_first_chunk,
																		   (const T *) P->d_partial, y);
		PRM_LAUNCHED();
	}
	if (P->warp_end > P->n_long)
	{
		int64_t		rows = P->warp_end - P->n_long;

		k_csr_rows<32, T><<<grid_for(rows * 32), PRM_THREADS, 0, G->stream>>>(rows, G->d_ptr + P->n_long,
																			 0, G->d_col, val, input, y + P->n_long);
		PRM_LAUNCHED();
	}
	if (G->rows > P->warp_end)
	{
		int64_t		rows = G->rows - P->warp_end;

		k_csr_rows<4, T><<<grid_for(rows * 4), PRM_THREADS, 0, G->stream>>>(rows, G->d_ptr + P->warp_end,
																		   0, G->d_col, val, input, y + P->warp_end);
		PRM_LAUNCHED();
	}
	return PR_OK;
}

/*
 * Enqueues GPU g's compute of one iteration on its stream, x[cur] -> x[nxt] (the stream holds
 * the previous iteration's exchange: the whole x[cur] and red[cur], the dangling mass the update
 * needs, are there before these kernels run):
 *   the product input (column gather / scale) from x[cur];
 *   the product into its slots of x[nxt]; (update) the PageRank update with per-block partials
 *   in d_part, then their fixed-order sum into red[nxt].
 * update false: the product alone: pr_multi_time's product.
 */
template <typename T>
static PrStatus
enqueue_compute_t(PrMulti *m, int g, int cur, int nxt, bool update, double alpha, PrError *err)
{
	MultiGpu   *G = &m->gpu[g];
	const MultiRows *P = &G->own;
	const T    *input = NULL;
	PrStatus	st;

	PRM_CUDA(cudaSetDevice(G->dev));
	if ((st = enqueue_input_t<T>(m, G, cur, &input, err)) != PR_OK)
		return st;
	if ((st = enqueue_product_t<T>(m, G, cur, nxt, input, err)) != PR_OK)
		return st;
	if (!update)
		return PR_OK;
	k_pr_update<T><<<G->nb, PRM_THREADS, 0, G->stream>>>(G->rows, (T *) vec_at(m, G, nxt, P->slot_begin),
														 (const T *) vec_at(m, G, cur, P->slot_begin),
														 G->d_dangling, alpha, 1.0 / (double) m->part.n,
														 G->d_red[cur], G->d_part);
	PRM_LAUNCHED();
	k_finish_pairs<<<1, PRM_THREADS, 0, G->stream>>>(G->nb, G->d_part, G->d_red[nxt]);
	PRM_LAUNCHED();
	return PR_OK;
}

/* Enqueues GPU g's compute in the precision in use. */
static PrStatus
enqueue_compute(PrMulti *m, int g, int cur, int nxt, bool update, double alpha, PrError *err)
{
	return m->fp64 ? enqueue_compute_t<double>(m, g, cur, nxt, update, alpha, err)
		: enqueue_compute_t<float>(m, g, cur, nxt, update, alpha, err);
}

/*
 * The compact exchange of x[dst] (on each GPU's stream, after its iteration's compute): every
 * GPU packs its read slots of x[dst] into send (k_pack), then one grouped ncclAllGather of send
 * into xg (GPU g's values at g xg_count), with the all-reduce of red[dst] when reductions.  The
 * next product reads xg.
 */
static PrStatus
enqueue_compact_exchange(PrMulti *m, int dst, bool reductions, PrError *err)
{
	ncclDataType_t type = m->fp64 ? ncclDouble : ncclFloat;

	for (int g = 0; g < m->n_gpus; g++)
	{
		MultiGpu   *G = &m->gpu[g];
		const void *own = vec_at(m, G, dst, G->own.slot_begin);

		PRM_CUDA(cudaSetDevice(G->dev));
		if (m->fp64)
			k_pack<double><<<grid_for(m->xg_count), PRM_THREADS, 0, G->stream>>>(m->xg_count, G->d_pack, (const double *) own, (double *) G->d_send);
		else
			k_pack<float><<<grid_for(m->xg_count), PRM_THREADS, 0, G->stream>>>(m->xg_count, G->d_pack, (const float *) own, (float *) G->d_send);
		PRM_LAUNCHED();
	}
	PRM_NCCL(ncclGroupStart());
	for (int g = 0; g < m->n_gpus; g++)
	{
		MultiGpu   *G = &m->gpu[g];

		if (reductions)
			PRM_NCCL(ncclAllReduce(G->d_red[dst], G->d_red[dst], 2, ncclDouble, ncclSum, G->nccl, G->stream));
		PRM_NCCL(ncclAllGather(G->d_send, G->d_xg, (size_t) m->xg_count, type, G->nccl, G->stream));
	}
	PRM_NCCL(ncclGroupEnd());
	return PR_OK;
}

/*
 * Enqueues one iteration's exchange of x[dst] on every GPU's stream (after every GPU's
 * enqueue_compute): one grouped in-place ncclAllGather (GPU g sends its slots at g stride) and
 * the all-reduce of red[dst].
 */
static PrStatus
enqueue_exchange(PrMulti *m, int dst, PrError *err)
{
	ncclDataType_t type = m->fp64 ? ncclDouble : ncclFloat;

	if (m->compact)
		return enqueue_compact_exchange(m, dst, true, err);
	PRM_NCCL(ncclGroupStart());
	for (int g = 0; g < m->n_gpus; g++)
	{
		MultiGpu   *G = &m->gpu[g];

		PRM_NCCL(ncclAllReduce(G->d_red[dst], G->d_red[dst], 2, ncclDouble, ncclSum, G->nccl, G->stream));
		PRM_NCCL(ncclAllGather(vec_at(m, G, dst, G->own.slot_begin), G->d_x[dst], (size_t) m->part.stride, type,
							   G->nccl, G->stream));
	}
	PRM_NCCL(ncclGroupEnd());
	return PR_OK;
}

/* Waits for every GPU's stream. */
static PrStatus
sync_all(PrMulti *m, PrError *err)
{
	for (int g = 0; g < m->n_gpus; g++)
	{
		PRM_CUDA(cudaSetDevice(m->gpu[g].dev));
		PRM_CUDA(cudaStreamSynchronize(m->gpu[g].stream));
	}
	return PR_OK;
}

/* Sets x[k] on every GPU to 1/n in the real slots, 0 in the padding (precision T). */
template <typename T>
static PrStatus
set_uniform_t(PrMulti *m, int k, PrError *err)
{
	std::vector<T> h((size_t) m->part.n_slots);

	for (int64_t s = 0; s < m->part.n_slots; s++)
		h[(size_t) s] = m->part.slot_to_node[s] >= 0 ? (T) (1.0 / (double) m->part.n) : (T) 0;
	for (int g = 0; g < m->n_gpus; g++)
	{
		PRM_CUDA(cudaSetDevice(m->gpu[g].dev));
		PRM_CUDA(cudaMemcpy(m->gpu[g].d_x[k], h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
	}
	return PR_OK;
}

/*
 * The start of a run: x[0] = 1/n on every GPU, red[0] = (0, the dangling mass of x[0]): the
 * partials and their sum on each GPU's stream, then all-reduced.  Returns with every stream idle.
 */
template <typename T>
static PrStatus
start_t(PrMulti *m, PrError *err)
{
	PrStatus	st;

	if ((st = sync_all(m, err)) != PR_OK || (st = set_uniform_t<T>(m, 0, err)) != PR_OK)
		return st;
	for (int g = 0; g < m->n_gpus; g++)
	{
		MultiGpu   *G = &m->gpu[g];

		PRM_CUDA(cudaSetDevice(G->dev));
		k_dangling_mass<T><<<G->nb, PRM_THREADS, 0, G->stream>>>(G->rows, (const T *) vec_at(m, G, 0, G->own.slot_begin),
																 G->d_dangling, G->d_part);
		PRM_LAUNCHED();
		k_finish_pairs<<<1, PRM_THREADS, 0, G->stream>>>(G->nb, G->d_part, G->d_red[0]);
		PRM_LAUNCHED();
	}
	if (m->compact)
	{
		/* red[0] all-reduced and x[0]'s read slots into xg: the first product's input */
		if ((st = enqueue_compact_exchange(m, 0, true, err)) != PR_OK)
			return st;
		return sync_all(m, err);
	}
	PRM_NCCL(ncclGroupStart());
	for (int g = 0; g < m->n_gpus; g++)
		PRM_NCCL(ncclAllReduce(m->gpu[g].d_red[0], m->gpu[g].d_red[0], 2, ncclDouble, ncclSum,
							   m->gpu[g].nccl, m->gpu[g].stream));
	PRM_NCCL(ncclGroupEnd());
	return sync_all(m, err);
}

/* The stop hook: PR_ERR_INTERRUPTED (streams drained) when the caller asks to stop. */
static PrStatus
poll_stop(PrMulti *m, const PrMultiRun *run, PrError *err)
{
	PrStatus	st;

	if (m->opt.should_stop == NULL || !m->opt.should_stop(m->opt.stop_arg))
		return PR_OK;
	if ((st = sync_all(m, err)) != PR_OK)
		return st;
	return pr_error_set(err, PR_ERR_INTERRUPTED, "ranking interrupted after %d iterations",
						run->iterations);
}

/* PageRank over the GPUs in precision T (see pr_multi_pagerank). */
template <typename T>
static PrStatus
pagerank_t(PrMulti *m, double alpha, double tolerance, int max_iterations, double *scores,
		   PrMultiRun *run, PrError *err)
{
	int			cur = 0;
	double		t0 = 0;
	PrStatus	st;

	if ((st = start_t<T>(m, err)) != PR_OK)
		return st;
	t0 = pr_clock_seconds();
	for (int it = 1; it <= max_iterations; it++)
	{
		int			nxt = 1 - cur;

		if ((st = poll_stop(m, run, err)) != PR_OK)
			return st;
		for (int g = 0; g < m->n_gpus; g++)
			if ((st = enqueue_compute_t<T>(m, g, cur, nxt, true, alpha, err)) != PR_OK)
				return st;
		if ((st = enqueue_exchange(m, nxt, err)) != PR_OK)
			return st;
		cur = nxt;
		run->iterations = it;
		if (it % m->opt.check_every == 0 || it == max_iterations)
		{
			double		red[2];

			/* red[cur] is final once GPU 0's stream has run the all-reduce */
			PRM_CUDA(cudaSetDevice(m->gpu[0].dev));
			PRM_CUDA(cudaStreamSynchronize(m->gpu[0].stream));
			PRM_CUDA(cudaMemcpy(red, m->gpu[0].d_red[cur], sizeof(red), cudaMemcpyDeviceToHost));
			run->residual = red[0];
			if (m->opt.progress != NULL)
				m->opt.progress(m->opt.progress_arg, it, red[0]);
			if (red[0] < tolerance)
			{
				run->converged = true;
				break;
			}
		}
	}
	if ((st = sync_all(m, err)) != PR_OK)
		return st;
	run->seconds = pr_clock_seconds() - t0;
	{
		std::vector<T> h((size_t) m->part.n_slots);

		if (m->compact)
		{
			/* every GPU holds only its own slots of x in full: each block from its GPU */
			for (int g = 0; g < m->n_gpus; g++)
			{
				MultiGpu   *G = &m->gpu[g];

				PRM_CUDA(cudaSetDevice(G->dev));
				PRM_CUDA(cudaMemcpy(h.data() + G->own.slot_begin, vec_at(m, G, cur, G->own.slot_begin),
									(size_t) m->part.stride * sizeof(T), cudaMemcpyDeviceToHost));
			}
		}
		else
		{
			PRM_CUDA(cudaSetDevice(m->gpu[0].dev));
			PRM_CUDA(cudaMemcpy(h.data(), m->gpu[0].d_x[cur], h.size() * sizeof(T), cudaMemcpyDeviceToHost));
		}
		for (int64_t v = 0; v < m->part.n; v++)
			scores[v] = (double) h[(size_t) m->part.node_to_slot[v]];
	}
	return PR_OK;
}

/* PageRank over the GPUs. */
PrStatus
pr_multi_pagerank(PrMulti *m, double alpha, double tolerance, int max_iterations, double *scores,
				  PrMultiRun *run, PrError *err)
{
	DeviceGuard guard;

	memset(run, 0, sizeof(*run));
	if (!m->prepared)
		return pr_error_set(err, PR_ERR_INVALID, "multi-GPU: not prepared");
	return m->fp64 ? pagerank_t<double>(m, alpha, tolerance, max_iterations, scores, run, err)
		: pagerank_t<float>(m, alpha, tolerance, max_iterations, scores, run, err);
}

/* What one timed round of pr_multi_time enqueues. */
typedef enum TimedRound
{
	ROUND_PRODUCT,				/* every GPU's products alone */
	ROUND_ITERATION,			/* a PageRank iteration: compute + exchange */
	ROUND_EXCHANGE,				/* the exchange alone */
	ROUND_GATHER				/* tiled: the column gathers alone */
} TimedRound;

/* Enqueues one timed round; *cur alternates with the iterations. */
static PrStatus
enqueue_round(PrMulti *m, TimedRound what, int *cur, PrError *err)
{
	PrStatus	st;
	int			nxt = 1 - *cur;

	switch (what)
	{
		case ROUND_PRODUCT:
			/* x[0] stays the input: products write x[1]'s rows */
			for (int g = 0; g < m->n_gpus; g++)
				if ((st = enqueue_compute(m, g, 0, 1, false, 0.85, err)) != PR_OK)
					return st;
			return PR_OK;
		case ROUND_ITERATION:
			for (int g = 0; g < m->n_gpus; g++)
				if ((st = enqueue_compute(m, g, *cur, nxt, true, 0.85, err)) != PR_OK)
					return st;
			if ((st = enqueue_exchange(m, nxt, err)) != PR_OK)
				return st;
			*cur = nxt;
			return PR_OK;
		case ROUND_EXCHANGE:
			return enqueue_exchange(m, 1, err);
		case ROUND_GATHER:
			for (int g = 0; g < m->n_gpus; g++)
			{
				MultiGpu   *G = &m->gpu[g];

				PRM_CUDA(cudaSetDevice(G->dev));
				if (G->n_lcols == 0)
					continue;
				if (m->fp64)
					k_gather_columns<double><<<grid_for(G->n_lcols), PRM_THREADS, 0, G->stream>>>(G->n_lcols, G->d_col_map, (const double *) G->d_lscale, (const double *) (m->compact ? G->d_xg : G->d_x[0]), (double *) G->d_zl);
				else
					k_gather_columns<float><<<grid_for(G->n_lcols), PRM_THREADS, 0, G->stream>>>(G->n_lcols, G->d_col_map, (const float *) G->d_lscale, (const float *) (m->compact ? G->d_xg : G->d_x[0]), (float *) G->d_zl);
				PRM_LAUNCHED();
			}
			return PR_OK;
	}
	return PR_OK;
}

/* Mean ms of reps rounds of one kind after 3 warm-up rounds (wall clock, streams drained). */
static PrStatus
time_rounds(PrMulti *m, TimedRound what, int reps, double *ms, PrError *err)
{
	PrStatus	st;
	double		t0 = 0;
	int			cur = 0;

	if (what == ROUND_ITERATION)
	{
		if ((st = m->fp64 ? start_t<double>(m, err) : start_t<float>(m, err)) != PR_OK)
			return st;
	}
	for (int r = -3; r < reps; r++)
	{
		if (r == 0)
		{
			if ((st = sync_all(m, err)) != PR_OK)
				return st;
			t0 = pr_clock_seconds();
		}
		if ((st = enqueue_round(m, what, &cur, err)) != PR_OK)
			return st;
	}
	if ((st = sync_all(m, err)) != PR_OK)
		return st;
	*ms = (pr_clock_seconds() - t0) * 1e3 / reps;
	return PR_OK;
}

/* Times the local product alone, a whole iteration, the exchange and the gathers alone. */
PrStatus
pr_multi_time(PrMulti *m, int reps, double *product_ms, double *iteration_ms, PrError *err)
{
	PrStatus	st;
	DeviceGuard guard;

	if (!m->prepared)
		return pr_error_set(err, PR_ERR_INVALID, "multi-GPU: not prepared");
	if (reps < 1)
		reps = 1;
	if ((st = m->fp64 ? set_uniform_t<double>(m, 1, err) : set_uniform_t<float>(m, 1, err)) != PR_OK)
		return st;
	/* the iterations first: they start from x[0] = 1/n, which the products then read */
	if ((st = time_rounds(m, ROUND_ITERATION, reps, iteration_ms, err)) != PR_OK ||
		(st = (m->fp64 ? set_uniform_t<double>(m, 0, err) : set_uniform_t<float>(m, 0, err))) != PR_OK ||
		(st = time_rounds(m, ROUND_PRODUCT, reps, product_ms, err)) != PR_OK ||
		(st = time_rounds(m, ROUND_EXCHANGE, reps, &m->report.exchange_ms, err)) != PR_OK)
		return st;
	m->report.gather_ms = 0;
	if (m->opt.kernel == PR_MULTI_KERNEL_TILED &&
		(st = time_rounds(m, ROUND_GATHER, reps, &m->report.gather_ms, err)) != PR_OK)
		return st;
	return PR_OK;
}

/* Frees everything. */
void
pr_multi_free(PrMulti *m)
{
	DeviceGuard guard;

	if (m == NULL)
		return;
	for (int g = 0; g < m->n_gpus && g < PR_MULTI_MAX_GPUS; g++)
	{
		MultiGpu   *G = &m->gpu[g];
		MultiRows  *P = &G->own;

		if (cudaSetDevice(G->dev) != cudaSuccess)
			continue;
		if (P->sp_mat)
			cusparseDestroySpMat(P->sp_mat);
		for (int k = 0; k < 2; k++)
			if (P->sp_y[k])
				cusparseDestroyDnVec(P->sp_y[k]);
		cudaFree(P->d_ptr32);
		cudaFree(P->sp_buffer);
		cudaFree(P->d_chunk_begin);
		cudaFree(P->d_chunk_end);
		cudaFree(P->d_first_chunk);
		cudaFree(P->d_partial);
		pr_tiled_delete(P->tiled);
		for (int k = 0; k < 2; k++)
		{
			if (G->sp_x[k])
				cusparseDestroyDnVec(G->sp_x[k]);
			cudaFree(G->d_x[k]);
			cudaFree(G->d_red[k]);
		}
		cudaFree(G->d_z);
		cudaFree(G->d_inv);
		cudaFree(G->d_ptr);
		cudaFree(G->d_col);
		cudaFree(G->d_val);
		cudaFree(G->d_dangling);
		cudaFree(G->d_part);
		cudaFree(G->d_col_map);
		cudaFree(G->d_lscale);
		cudaFree(G->d_zl);
		for (int i = 0; i < G->n_tiled_allocs; i++)
			cudaFree(G->tiled_allocs[i]);
		free(G->tiled_allocs);
		if (m->comms && G->nccl)
			ncclCommDestroy(G->nccl);
		if (G->sp)
			cusparseDestroy(G->sp);
		if (G->stream)
			cudaStreamDestroy(G->stream);
	}
	pr_partition_free(&m->part, &pr_malloc_allocator);
	free(m);
}
