/*
 * pr_multi.cu — PageRank over several local GPUs: row partition (pr_partition), local products
 * (CSR kernel, cuSPARSE, or the single-GPU engine's tiled kernels through pr_gpu_tiled.h), the
 * vector exchanged with ncclAllGather (see pr_multi.h).
 */
#include "pr_multi.h"
#include "pr_multi_kernels.cuh"
#include "pr_gpu_tiled.h"

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
#define PRM_CUDA(call) do { \
	cudaError_t cuda_status_ = (call); \
	if (cuda_status_ != cudaSuccess) \
		return pr_error_set(err, cuda_status_ == cudaErrorMemoryAllocation ? PR_ERR_NOMEM : PR_ERR_ENGINE, \
							"multi-GPU: %s failed: %s (%s:%d)", #call, \
							cudaGetErrorString(cuda_status_), __FILE__, __LINE__); \
} while (0)

/* Same for NCCL calls. */
#define PRM_NCCL(call) do { \
	ncclResult_t nccl_status_ = (call); \
	if (nccl_status_ != ncclSuccess) \
		return pr_error_set(err, PR_ERR_ENGINE, "multi-GPU: %s failed: %s (%s:%d)", #call, \
							ncclGetErrorString(nccl_status_), __FILE__, __LINE__); \
} while (0)

/* Same for cuSPARSE calls. */
#define PRM_CUSPARSE(call) do { \
	cusparseStatus_t sp_status_ = (call); \
	if (sp_status_ != CUSPARSE_STATUS_SUCCESS) \
		return pr_error_set(err, sp_status_ == CUSPARSE_STATUS_ALLOC_FAILED ? PR_ERR_NOMEM : PR_ERR_ENGINE, \
							"multi-GPU: %s failed: %s (%s:%d)", #call, \
							cusparseGetErrorString(sp_status_), __FILE__, __LINE__); \
} while (0)

/* Checks the launch just made. */
#define PRM_LAUNCHED() PRM_CUDA(cudaGetLastError())

/*
 * One GPU's share: its rows' CSR, the whole vector twice (current, next) and the reductions.
 * Vectors, values and partials are float or double (PrMulti.precision): untyped here, typed by
 * the template functions that use them.
 */
typedef struct MultiGpu
{
	int			dev;
	cudaStream_t stream;
	ncclComm_t	comm;
	cusparseHandle_t sp;
	int64_t		slot_begin;
	int64_t		rows;
	int64_t		nnz;
	int64_t		n_long;			/* rows [0, n_long) are chunked */
	int64_t		warp_end;		/* rows [n_long, warp_end) a warp each, the rest 4 lanes */
	int64_t		long_or_warp_end;	/* planning: end of the rows of 32 entries or more */
	int64_t		n_chunks;
	int64_t    *d_ptr;
	int32_t    *d_col;
	void	   *d_val;			/* [nnz] T (fp32), NULL (fp64: all 1) */
	int64_t    *d_chunk_begin;
	int64_t    *d_chunk_end;
	int64_t    *d_first_chunk;
	void	   *d_partial;		/* [n_chunks] T */
	void	   *d_x[2];			/* [n_slots] T: the whole vector, current and next */
	void	   *d_z;			/* fp64: [n_slots] T, x / out_strength (the product's input) */
	double	   *d_inv;			/* fp64: [n_slots] 1 / out_strength of each slot (0: dangling, padding) */
	uint8_t    *d_dangling;		/* [rows] own rows that are dangling */
	double	   *d_part;			/* [2 PRM_REDUCE_BLOCKS] */
	double	   *d_red[2];		/* [2] (residual, dangling mass) of x[0] / x[1] */
	int32_t    *d_ptr32;		/* cuSPARSE */
	cusparseSpMatDescr_t sp_mat;
	cusparseDnVecDescr_t sp_x[2];
	cusparseDnVecDescr_t sp_y[2];
	void	   *sp_buffer;
	/* tiled kernel: the layout, its column map and scale, the gathered input z (+ a zero entry) */
	TiledMatrix *tiled;
	TiledDevice td;
	int64_t		n_lcols;
	int32_t    *d_col_map;		/* [n_lcols] slot of each local column */
	void	   *d_lscale;		/* [n_lcols] T: 1 / out_strength of each local column */
	void	   *d_zl;			/* [n_lcols + 1] T */
	void	  **tiled_allocs;	/* the layout's device arrays */
	int			n_tiled_allocs;
	int			cap_tiled_allocs;
	size_t		bytes;
} MultiGpu;

/* One part's tiled layout, planned on the host (pr_multi_prepare). */
typedef struct TiledPart
{
	PrComposite comp;
	int32_t    *col_map;		/* [comp.n_cols] slot of each local column */
	char		layout[192];
} TiledPart;

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
	opts->precision = PR_MULTI_FP32;
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

/* Creates the communicators (NVLink multicast off) and a stream per GPU. */
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
	/* never NVLink SHARP / multicast: the lent machines require it off */
	if (setenv("NCCL_NVLS_ENABLE", "0", 1) != 0)
		return pr_error_set(err, PR_ERR_ENGINE, "multi-GPU: setenv NCCL_NVLS_ENABLE failed");
	PRM_NCCL(ncclCommInitAll(comms, m->n_gpus, devs));
	m->comms = true;
	for (int g = 0; g < m->n_gpus; g++)
		m->gpu[g].comm = comms[g];
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

/* Allocates GPU g's vectors (whole x twice), its dangling flags and reductions; any kernel. */
static PrStatus
upload_vectors(PrMulti *m, int g, const PrPartCsr *lc, const std::vector<uint8_t> &dangling, PrError *err)
{
	size_t		vs = m->value_size;
	MultiGpu   *G = &m->gpu[g];

	PRM_CUDA(cudaSetDevice(G->dev));
	G->slot_begin = lc->slot_begin;
	G->rows = lc->n_rows;
	G->nnz = lc->nnz;
	PRM_CUDA(dev_alloc_bytes(G, &G->d_x[0], (size_t) m->part.n_slots * vs));
	PRM_CUDA(dev_alloc_bytes(G, &G->d_x[1], (size_t) m->part.n_slots * vs));
	PRM_CUDA(dev_alloc(G, &G->d_dangling, (size_t) lc->n_rows));
	PRM_CUDA(dev_alloc(G, &G->d_part, 2 * (size_t) PRM_REDUCE_BLOCKS));
	PRM_CUDA(dev_alloc(G, &G->d_red[0], 2));
	PRM_CUDA(dev_alloc(G, &G->d_red[1], 2));
	if (lc->n_rows > 0)
		PRM_CUDA(cudaMemcpy(G->d_dangling, dangling.data(), (size_t) lc->n_rows, cudaMemcpyHostToDevice));
	PRM_CUDA(cudaMemset(G->d_x[0], 0, (size_t) m->part.n_slots * vs));
	PRM_CUDA(cudaMemset(G->d_x[1], 0, (size_t) m->part.n_slots * vs));
	PRM_CUDA(cudaMemset(G->d_red[0], 0, 2 * sizeof(double)));
	PRM_CUDA(cudaMemset(G->d_red[1], 0, 2 * sizeof(double)));
	return PR_OK;
}

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

/* Shared-memory tile width of the tiled kernel (as the single-GPU engine). */
static int64_t
tiled_smem_width(const PrMulti *m)
{
	return m->fp64 ? 24576 : 49152;
}

/*
 * Plans part g's tiled layout on the host: the part's columns relabelled by count, then the
 * composite layout (fixed options, or the model's choice).  Runs in the part's host thread.
 */
static PrStatus
plan_tiled_part(const PrMulti *m, const PrPartCsr *lc, TiledPart *tp, PrError *err)
{
	PrPlanCsr	rect;
	int64_t    *deg = NULL;
	PrCompositeOptions o;
	PrStatus	st;
	double		predicted = -1;

	memset(tp, 0, sizeof(*tp));
	st = pr_plan_relabel_columns(lc->n_rows, lc->n_cols, lc->ptr, lc->col, lc->val, &pr_malloc_allocator, &rect,
								 &tp->col_map, &deg, err);
	if (st != PR_OK)
		return st;
	memset(&o, 0, sizeof(o));
	o.tile_width = rect.n_cols;
	o.chunk = 4096;
	o.smem_width = tiled_smem_width(m);
	o.n_smem_tiles = m->opt.tiled_smem_tiles;
	o.vec_threshold = m->opt.tiled_vec_threshold > 0 ? m->opt.tiled_vec_threshold : 32;
	o.compact = m->opt.tiled_compact;
	if (m->opt.tiled_model != NULL)
	{
		PrPlanChoice choice;
		char		log[512];
		int			n_cand = 0;

		pr_plan_choice_init(&choice, rect.n_cols);
		choice.composite.tile_width = rect.n_cols;
		choice.composite.chunk = 4096;
		choice.composite.smem_width = tiled_smem_width(m);
		choice.allow_binned = false;
		choice.blocked_mode = 0;
		st = pr_plan_choose(&rect, m->opt.tiled_model, &choice, &predicted, log, sizeof(log), &n_cand,
							&pr_malloc_allocator, err);
		if (st == PR_OK)
			o = choice.composite;
	}
	if (st == PR_OK)
		st = pr_plan_composite_with_degrees(&rect, deg, &o, &pr_malloc_allocator, &tp->comp, err);
	if (st == PR_OK)
		snprintf(tp->layout, sizeof(tp->layout),
				 "%d smem tile(s) of %lld cols + %d L2 tile(s), CSR-vector rows >= %d%s%s; %lld of %lld columns read%s",
				 o.n_smem_tiles < tp->comp.n_tiles ? o.n_smem_tiles : tp->comp.n_tiles, (long long) o.smem_width,
				 tp->comp.n_tiles - (o.n_smem_tiles < tp->comp.n_tiles ? o.n_smem_tiles : tp->comp.n_tiles),
				 o.vec_threshold, o.compact ? ", compact partials" : "", tp->comp.blocked ? ", blocked" : "",
				 (long long) rect.n_cols, (long long) lc->n_cols, m->opt.tiled_model ? ", model's choice" : ", fixed");
	pr_free(&pr_malloc_allocator, deg);
	pr_plan_csr_free(&rect, &pr_malloc_allocator);
	return st;
}

/* Uploads part g's tiled layout, its column map and scale (1 / out_strength of each column). */
template <typename T>
static PrStatus
upload_tiled_t(PrMulti *m, int g, const TiledPart *tp, const std::vector<double> &inv_slot, PrError *err)
{
	MultiGpu   *G = &m->gpu[g];
	int64_t		nc = tp->comp.n_cols;
	std::vector<T> scale((size_t) nc + 1);
	PrStatus	st;

	PRM_CUDA(cudaSetDevice(G->dev));
	G->n_lcols = nc;
	for (int64_t j = 0; j < nc; j++)
		scale[(size_t) j] = (T) inv_slot[(size_t) tp->col_map[j]];
	PRM_CUDA(dev_alloc(G, &G->d_col_map, (size_t) nc));
	PRM_CUDA(dev_alloc_bytes(G, &G->d_lscale, (size_t) nc * sizeof(T)));
	PRM_CUDA(dev_alloc_bytes(G, &G->d_zl, (size_t) (nc + 1) * sizeof(T)));
	PRM_CUDA(cudaMemcpy(G->d_col_map, tp->col_map, (size_t) nc * sizeof(int32_t), cudaMemcpyHostToDevice));
	PRM_CUDA(cudaMemcpy(G->d_lscale, scale.data(), (size_t) nc * sizeof(T), cudaMemcpyHostToDevice));
	PRM_CUDA(cudaMemset(G->d_zl, 0, (size_t) (nc + 1) * sizeof(T)));	/* z[nc] = 0: the padding column */
	G->td.device = G->dev;
	G->td.fp64 = m->fp64;
	G->td.stream = G->stream;
	G->td.alloc = tiled_alloc;
	G->td.alloc_arg = G;
	if ((st = pr_tiled_smem_setup(G->dev, m->fp64, tiled_smem_width(m), &G->td.smem_grid, err)) != PR_OK)
		return st;
	if ((G->tiled = pr_tiled_new()) == NULL)
		return pr_error_set(err, PR_ERR_NOMEM, "multi-GPU: out of host memory");
	return pr_tiled_upload(&G->td, &tp->comp, G->tiled, err);
}

/* Uploads one part's CSR and sets up its kernels' row classes (rows by descending length). */
static PrStatus
upload_part(PrMulti *m, int g, const PrPartCsr *lc, const std::vector<double> &inv_slot, PrError *err)
{
	size_t		vs = m->value_size;

	MultiGpu   *G = &m->gpu[g];
	std::vector<int64_t> cb,
				ce,
				first(1, 0);

	PRM_CUDA(cudaSetDevice(G->dev));
	G->n_long = 0;
	G->warp_end = 0;
	for (int64_t i = 1; i < lc->n_rows; i++)
		if (lc->ptr[i + 1] - lc->ptr[i] > lc->ptr[i] - lc->ptr[i - 1])
		{
			/* not by descending length (the ranges method): a warp per row, correct for any row */
			G->warp_end = lc->n_rows;
			break;
		}
	for (int64_t i = 0; i < lc->n_rows && G->warp_end == 0; i++)
	{
		int64_t		len = lc->ptr[i + 1] - lc->ptr[i];

		if (len > PRM_CHUNK)
		{
			G->n_long = i + 1;
			for (int64_t e = lc->ptr[i]; e < lc->ptr[i + 1]; e += PRM_CHUNK)
			{
				cb.push_back(e);
				ce.push_back(e + PRM_CHUNK < lc->ptr[i + 1] ? e + PRM_CHUNK : lc->ptr[i + 1]);
			}
			first.push_back((int64_t) cb.size());
		}
		if (len >= 32)
			G->long_or_warp_end = i + 1;
	}
	if (G->warp_end == 0)
		G->warp_end = G->long_or_warp_end;
	if (G->warp_end < G->n_long)
		G->warp_end = G->n_long;
	G->n_chunks = (int64_t) cb.size();

	if (lc->val == NULL && !m->fp64)
		return pr_error_set(err, PR_ERR_INVALID, "multi-GPU: part %d has no values", g);
	PRM_CUDA(dev_alloc(G, &G->d_ptr, (size_t) lc->n_rows + 1));
	PRM_CUDA(dev_alloc(G, &G->d_col, (size_t) lc->nnz));
	if (!m->fp64)
		PRM_CUDA(dev_alloc_bytes(G, &G->d_val, (size_t) lc->nnz * vs));
	PRM_CUDA(dev_alloc(G, &G->d_chunk_begin, cb.size()));
	PRM_CUDA(dev_alloc(G, &G->d_chunk_end, ce.size()));
	PRM_CUDA(dev_alloc(G, &G->d_first_chunk, first.size()));
	PRM_CUDA(dev_alloc_bytes(G, &G->d_partial, cb.size() * vs));
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
	if (!cb.empty())
	{
		PRM_CUDA(cudaMemcpy(G->d_chunk_begin, cb.data(), cb.size() * sizeof(int64_t), cudaMemcpyHostToDevice));
		PRM_CUDA(cudaMemcpy(G->d_chunk_end, ce.data(), ce.size() * sizeof(int64_t), cudaMemcpyHostToDevice));
	}
	PRM_CUDA(cudaMemcpy(G->d_first_chunk, first.data(), first.size() * sizeof(int64_t), cudaMemcpyHostToDevice));

	if (m->opt.kernel == PR_MULTI_KERNEL_CUSPARSE)
	{
		std::vector<int32_t> p32((size_t) lc->n_rows + 1);
		float		one = 1.0f,
					zero = 0.0f;
		size_t		buffer = 0;

		if (lc->nnz >= INT32_MAX || m->part.n_slots >= INT32_MAX)
			return pr_error_set(err, PR_ERR_TOO_LARGE, "multi-GPU: cuSPARSE part %d has %lld entries (32-bit indices)",
								g, (long long) lc->nnz);
		for (int64_t i = 0; i <= lc->n_rows; i++)
			p32[(size_t) i] = (int32_t) lc->ptr[i];
		PRM_CUDA(dev_alloc(G, &G->d_ptr32, p32.size()));
		PRM_CUDA(cudaMemcpy(G->d_ptr32, p32.data(), p32.size() * sizeof(int32_t), cudaMemcpyHostToDevice));
		PRM_CUSPARSE(cusparseCreateCsr(&G->sp_mat, lc->n_rows, m->part.n_slots, lc->nnz, G->d_ptr32, G->d_col,
									   G->d_val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
									   CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
		for (int k = 0; k < 2; k++)
		{
			PRM_CUSPARSE(cusparseCreateDnVec(&G->sp_x[k], m->part.n_slots, G->d_x[k], CUDA_R_32F));
			PRM_CUSPARSE(cusparseCreateDnVec(&G->sp_y[k], lc->n_rows > 0 ? lc->n_rows : 1,
											 vec_at(m, G, k, G->slot_begin), CUDA_R_32F));
		}
		PRM_CUSPARSE(cusparseSpMV_bufferSize(G->sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, G->sp_mat,
											 G->sp_x[0], &zero, G->sp_y[1], CUDA_R_32F,
											 CUSPARSE_SPMV_ALG_DEFAULT, &buffer));
		PRM_CUDA(dev_alloc(G, (unsigned char **) &G->sp_buffer, buffer));
	}
	return PR_OK;
}

/* Partitions the matrix, builds each part's CSR (one host thread per part) and uploads them. */
PrStatus
pr_multi_prepare(PrMulti *m, int64_t n, const int64_t *ptr, const int32_t *col, const double *val,
				 const double *out_strength, PrError *err)
{
	PrPartitionOptions popt;
	std::vector<double> inv_out((size_t) n + 1);
	std::vector<PrPartCsr> lcs((size_t) m->n_gpus);
	std::vector<TiledPart> tps((size_t) m->n_gpus);
	bool		tiled = m->opt.kernel == PR_MULTI_KERNEL_TILED;
	std::vector<PrError> errs((size_t) m->n_gpus);
	std::vector<PrStatus> sts((size_t) m->n_gpus, PR_OK);
	std::vector<std::thread> threads;
	double		t0 = pr_clock_seconds();
	PrStatus	st = PR_OK;
	std::vector<double> inv_slot;
	DeviceGuard guard;

	if (m->prepared)
		return pr_error_set(err, PR_ERR_INVALID, "multi-GPU: already prepared");
	if (m->fp64 && val != NULL)
		return pr_error_set(err, PR_ERR_UNSUPPORTED, "multi-GPU: fp64 runs unweighted graphs only");
	if (m->fp64 && m->opt.kernel == PR_MULTI_KERNEL_CUSPARSE)
		return pr_error_set(err, PR_ERR_UNSUPPORTED, "multi-GPU: fp64 runs the CSR or tiled kernel only");
	pr_partition_options_init(&popt);
	popt.n_parts = m->n_gpus;
	popt.method = m->opt.method;
	if ((st = pr_partition_build(n, ptr, &popt, &pr_malloc_allocator, &m->part, err)) != PR_OK)
		return st;
	for (int64_t v = 0; v < n; v++)
		inv_out[(size_t) v] = out_strength[v] > 0 ? 1.0 / out_strength[v] : 0.0;
	if (tiled)
	{
		/* the parts plan at once: share the CPUs among them */
		long		cpus = sysconf(_SC_NPROCESSORS_ONLN);

		pr_plan_set_threads((int) (cpus / m->n_gpus > 1 ? cpus / m->n_gpus : 1));
	}
	for (int g = 0; g < m->n_gpus; g++)
		threads.emplace_back([&, g]() {
			/* fp64 and tiled: structure and raw weights (the scale by 1 / out_strength is applied to x) */
			sts[(size_t) g] = pr_partition_local_csr(&m->part, g, ptr, col, val,
													 m->fp64 || tiled ? NULL : inv_out.data(), &pr_malloc_allocator,
													 &lcs[(size_t) g], &errs[(size_t) g]);
			if (tiled && sts[(size_t) g] == PR_OK)
				sts[(size_t) g] = plan_tiled_part(m, &lcs[(size_t) g], &tps[(size_t) g], &errs[(size_t) g]);
		});
	for (auto &t : threads)
		t.join();
	if (tiled)
		pr_plan_set_threads(0);
	for (int g = 0; g < m->n_gpus; g++)
		if (sts[(size_t) g] != PR_OK)
		{
			*err = errs[(size_t) g];
			st = sts[(size_t) g];
		}
	if ((m->fp64 || tiled) && st == PR_OK)
	{
		inv_slot.assign((size_t) m->part.n_slots, 0.0);
		for (int64_t s = 0; s < m->part.n_slots; s++)
			if (m->part.slot_to_node[s] >= 0)
				inv_slot[(size_t) s] = inv_out[(size_t) m->part.slot_to_node[s]];
	}
	m->report.partition_seconds = pr_clock_seconds() - t0;
	t0 = pr_clock_seconds();
	for (int g = 0; g < m->n_gpus && st == PR_OK; g++)
	{
		std::vector<uint8_t> dang((size_t) lcs[(size_t) g].n_rows + 1);

		for (int64_t i = 0; i < lcs[(size_t) g].n_rows; i++)
			dang[(size_t) i] = out_strength[m->part.slot_to_node[lcs[(size_t) g].slot_begin + i]] > 0 ? 0 : 1;
		st = upload_vectors(m, g, &lcs[(size_t) g], dang, err);
		if (st == PR_OK && tiled)
		{
			st = m->fp64 ? upload_tiled_t<double>(m, g, &tps[(size_t) g], inv_slot, err)
				: upload_tiled_t<float>(m, g, &tps[(size_t) g], inv_slot, err);
			m->report.cols[g] = tps[(size_t) g].comp.n_cols;
		}
		else if (st == PR_OK)
			st = upload_part(m, g, &lcs[(size_t) g], inv_slot, err);
	}
	if (tiled && st == PR_OK)
		memcpy(m->report.layout, tps[0].layout, sizeof(m->report.layout));
	for (int g = 0; g < m->n_gpus; g++)
		if (sts[(size_t) g] == PR_OK)
		{
			pr_part_csr_free(&lcs[(size_t) g], &pr_malloc_allocator);
			pr_plan_composite_free(&tps[(size_t) g].comp, &pr_malloc_allocator);
			pr_free(&pr_malloc_allocator, tps[(size_t) g].col_map);
		}
	if (st != PR_OK)
		return st;
	m->report.upload_seconds = pr_clock_seconds() - t0;
	m->report.kernel = m->opt.kernel == PR_MULTI_KERNEL_CUSPARSE ? "cusparse" : tiled ? "tiled" : "csr";
	m->report.precision = m->fp64 ? "fp64" : "fp32";
	m->report.method = pr_partition_method_name(m->opt.method);
	m->report.n_nodes = n;
	m->report.n_edges = ptr[n];
	m->report.stride = m->part.stride;
	m->report.edge_imbalance = pr_partition_edge_imbalance(&m->part);
	m->report.row_imbalance = pr_partition_row_imbalance(&m->part);
	for (int g = 0; g < m->n_gpus; g++)
	{
		m->report.rows[g] = m->part.rows[g];
		m->report.edges[g] = m->part.edges[g];
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

/* z[s] = x[s] * inv[s] over all slots (fp64: the product's input, P's values taken from z). */
template <typename T>
static __global__ void __launch_bounds__(PRM_THREADS)
k_scale(int64_t n, const T *__restrict__ x, const double *__restrict__ inv, T *__restrict__ z)
{
	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < n;
		 i += (int64_t) gridDim.x * blockDim.x)
		z[i] = (T) ((double) x[i] * inv[i]);
}

/* Enqueues GPU g's local product in precision T: own rows of x[dst] from the whole x[src]. */
template <typename T>
static PrStatus
enqueue_product_t(PrMulti *m, int g, int src, int dst, PrError *err)
{
	MultiGpu   *G = &m->gpu[g];
	T		   *y = (T *) vec_at(m, G, dst, G->slot_begin);
	const T    *x = (const T *) G->d_x[src];
	const T    *val = (const T *) G->d_val;

	PRM_CUDA(cudaSetDevice(G->dev));
	if (G->rows == 0)
		return PR_OK;
	if (m->opt.kernel == PR_MULTI_KERNEL_TILED)
	{
		/* the part's columns from the gathered x, scaled by 1 / out_strength, then the tiles */
		k_gather_columns<T><<<grid_for(G->n_lcols), PRM_THREADS, 0, G->stream>>>(G->n_lcols, G->d_col_map,
																			 (const T *) G->d_lscale, x,
																			 (T *) G->d_zl);
		PRM_LAUNCHED();
		return pr_tiled_run<T>(&G->td, G->tiled, (const T *) G->d_zl, y, err);
	}
	if (m->opt.kernel == PR_MULTI_KERNEL_CUSPARSE)
	{
		float		one = 1.0f,
					zero = 0.0f;

		PRM_CUSPARSE(cusparseSpMV(G->sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, G->sp_mat, G->sp_x[src],
								  &zero, G->sp_y[dst], CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, G->sp_buffer));
		return PR_OK;
	}
	if (m->fp64)
	{
		/* the matrix has no values: scale the whole x by 1 / out_strength first */
		k_scale<T><<<reduce_blocks(m->part.n_slots), PRM_THREADS, 0, G->stream>>>(m->part.n_slots, x, G->d_inv,
																				  (T *) G->d_z);
		PRM_LAUNCHED();
		x = (const T *) G->d_z;
	}
	if (G->n_chunks > 0)
	{
		k_csr_chunks<T><<<(unsigned) G->n_chunks, PRM_THREADS, 0, G->stream>>>(G->n_chunks, G->d_chunk_begin,
																			  G->d_chunk_end, G->d_col, val,
																			  x, (T *) G->d_partial);
		PRM_LAUNCHED();
		k_long_rows<T><<<grid_for(G->n_long), PRM_THREADS, 0, G->stream>>>(G->n_long, G->d_first_chunk,
																		   (const T *) G->d_partial, y);
		PRM_LAUNCHED();
	}
	if (G->warp_end > G->n_long)
	{
		int64_t		rows = G->warp_end - G->n_long;

		k_csr_rows<32, T><<<grid_for(rows * 32), PRM_THREADS, 0, G->stream>>>(rows, G->d_ptr + G->n_long, 0,
																			 G->d_col, val, x, y + G->n_long);
		PRM_LAUNCHED();
	}
	if (G->rows > G->warp_end)
	{
		int64_t		rows = G->rows - G->warp_end;

		k_csr_rows<4, T><<<grid_for(rows * 4), PRM_THREADS, 0, G->stream>>>(rows, G->d_ptr + G->warp_end, 0,
																		   G->d_col, val, x, y + G->warp_end);
		PRM_LAUNCHED();
	}
	return PR_OK;
}

/* Enqueues GPU g's local product in the precision in use. */
static PrStatus
enqueue_product(PrMulti *m, int g, int src, int dst, PrError *err)
{
	return m->fp64 ? enqueue_product_t<double>(m, g, src, dst, err)
		: enqueue_product_t<float>(m, g, src, dst, err);
}

/* One grouped NCCL exchange: optionally the reductions red[dst], then the all-gather of x[dst]. */
static PrStatus
exchange(PrMulti *m, int dst, bool reductions, PrError *err)
{
	ncclDataType_t type = m->fp64 ? ncclDouble : ncclFloat;

	PRM_NCCL(ncclGroupStart());
	for (int g = 0; g < m->n_gpus; g++)
	{
		MultiGpu   *G = &m->gpu[g];

		if (reductions)
			PRM_NCCL(ncclAllReduce(G->d_red[dst], G->d_red[dst], 2, ncclDouble, ncclSum, G->comm, G->stream));
		/* in place: rank g's block already sits at x + g * stride */
		PRM_NCCL(ncclAllGather(vec_at(m, G, dst, G->slot_begin), G->d_x[dst], (size_t) m->part.stride, type,
							   G->comm, G->stream));
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

/* Sets x[k] to the uniform start in the precision in use. */
static PrStatus
set_uniform(PrMulti *m, int k, PrError *err)
{
	return m->fp64 ? set_uniform_t<double>(m, k, err) : set_uniform_t<float>(m, k, err);
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

	if ((st = set_uniform_t<T>(m, 0, err)) != PR_OK)
		return st;
	/* the dangling mass of the start vector into red[0] on every GPU */
	for (int g = 0; g < m->n_gpus; g++)
	{
		MultiGpu   *G = &m->gpu[g];
		int			nb = reduce_blocks(G->rows);

		PRM_CUDA(cudaSetDevice(G->dev));
		k_dangling_mass<T><<<nb, PRM_THREADS, 0, G->stream>>>(G->rows, (const T *) vec_at(m, G, 0, G->slot_begin),
															  G->d_dangling, G->d_part);
		PRM_LAUNCHED();
		k_finish_pairs<<<1, PRM_THREADS, 0, G->stream>>>(nb, G->d_part, G->d_red[0]);
		PRM_LAUNCHED();
	}
	PRM_NCCL(ncclGroupStart());
	for (int g = 0; g < m->n_gpus; g++)
		PRM_NCCL(ncclAllReduce(m->gpu[g].d_red[0], m->gpu[g].d_red[0], 2, ncclDouble, ncclSum,
							   m->gpu[g].comm, m->gpu[g].stream));
	PRM_NCCL(ncclGroupEnd());
	if ((st = sync_all(m, err)) != PR_OK)
		return st;

	t0 = pr_clock_seconds();
	for (int it = 1; it <= max_iterations; it++)
	{
		int			nxt = 1 - cur;

		if ((st = poll_stop(m, run, err)) != PR_OK)
			return st;
		for (int g = 0; g < m->n_gpus; g++)
		{
			MultiGpu   *G = &m->gpu[g];
			int			nb = reduce_blocks(G->rows);

			if ((st = enqueue_product_t<T>(m, g, cur, nxt, err)) != PR_OK)
				return st;
			k_pr_update<T><<<nb, PRM_THREADS, 0, G->stream>>>(G->rows, (T *) vec_at(m, G, nxt, G->slot_begin),
															  (const T *) vec_at(m, G, cur, G->slot_begin),
															  G->d_dangling, alpha, 1.0 / (double) m->part.n,
															  G->d_red[cur], G->d_part);
			PRM_LAUNCHED();
			k_finish_pairs<<<1, PRM_THREADS, 0, G->stream>>>(nb, G->d_part, G->d_red[nxt]);
			PRM_LAUNCHED();
		}
		if ((st = exchange(m, nxt, true, err)) != PR_OK)
			return st;
		cur = nxt;
		run->iterations = it;
		if (it % m->opt.check_every == 0 || it == max_iterations)
		{
			double		red[2];

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

		PRM_CUDA(cudaSetDevice(m->gpu[0].dev));
		PRM_CUDA(cudaMemcpy(h.data(), m->gpu[0].d_x[cur], h.size() * sizeof(T), cudaMemcpyDeviceToHost));
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

/* Times the local product alone and product + all-gather. */
PrStatus
pr_multi_time(PrMulti *m, int reps, double *product_ms, double *iteration_ms, PrError *err)
{
	PrStatus	st;
	double		t0 = 0;
	DeviceGuard guard;

	if (!m->prepared)
		return pr_error_set(err, PR_ERR_INVALID, "multi-GPU: not prepared");
	if (reps < 1)
		reps = 1;
	if ((st = set_uniform(m, 0, err)) != PR_OK || (st = set_uniform(m, 1, err)) != PR_OK)
		return st;
	for (int pass = 0; pass < 2; pass++)
	{
		bool		with_exchange = (pass == 1);

		for (int r = -3; r < reps; r++)	/* 3 warm-up rounds */
		{
			if (r == 0)
			{
				if ((st = sync_all(m, err)) != PR_OK)
					return st;
				t0 = pr_clock_seconds();
			}
			/* x[0] stays the input: products write x[1]'s own rows, the gather fills x[1] */
			for (int g = 0; g < m->n_gpus; g++)
				if ((st = enqueue_product(m, g, 0, 1, err)) != PR_OK)
					return st;
			if (with_exchange && (st = exchange(m, 1, false, err)) != PR_OK)
				return st;
		}
		if ((st = sync_all(m, err)) != PR_OK)
			return st;
		*(with_exchange ? iteration_ms : product_ms) = (pr_clock_seconds() - t0) * 1e3 / reps;
	}
	m->report.gather_ms = 0;
	if (m->opt.kernel == PR_MULTI_KERNEL_TILED)
	{
		/* the column gathers alone: the tiled kernel's per-product overhead */
		for (int r = -3; r < reps; r++)
		{
			if (r == 0)
			{
				if ((st = sync_all(m, err)) != PR_OK)
					return st;
				t0 = pr_clock_seconds();
			}
			for (int g = 0; g < m->n_gpus; g++)
			{
				MultiGpu   *G = &m->gpu[g];

				PRM_CUDA(cudaSetDevice(G->dev));
				if (m->fp64)
					k_gather_columns<double><<<grid_for(G->n_lcols), PRM_THREADS, 0, G->stream>>>(G->n_lcols, G->d_col_map, (const double *) G->d_lscale, (const double *) G->d_x[0], (double *) G->d_zl);
				else
					k_gather_columns<float><<<grid_for(G->n_lcols), PRM_THREADS, 0, G->stream>>>(G->n_lcols, G->d_col_map, (const float *) G->d_lscale, (const float *) G->d_x[0], (float *) G->d_zl);
				PRM_LAUNCHED();
			}
		}
		if ((st = sync_all(m, err)) != PR_OK)
			return st;
		m->report.gather_ms = (pr_clock_seconds() - t0) * 1e3 / reps;
	}
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

		if (cudaSetDevice(G->dev) != cudaSuccess)
			continue;
		if (G->sp_mat)
			cusparseDestroySpMat(G->sp_mat);
		for (int k = 0; k < 2; k++)
		{
			if (G->sp_x[k])
				cusparseDestroyDnVec(G->sp_x[k]);
			if (G->sp_y[k])
				cusparseDestroyDnVec(G->sp_y[k]);
			cudaFree(G->d_x[k]);
			cudaFree(G->d_red[k]);
		}
		cudaFree(G->d_z);
		cudaFree(G->d_inv);
		cudaFree(G->sp_buffer);
		cudaFree(G->d_ptr32);
		cudaFree(G->d_ptr);
		cudaFree(G->d_col);
		cudaFree(G->d_val);
		cudaFree(G->d_chunk_begin);
		cudaFree(G->d_chunk_end);
		cudaFree(G->d_first_chunk);
		cudaFree(G->d_partial);
		cudaFree(G->d_dangling);
		cudaFree(G->d_part);
		cudaFree(G->d_col_map);
		cudaFree(G->d_lscale);
		cudaFree(G->d_zl);
		for (int i = 0; i < G->n_tiled_allocs; i++)
			cudaFree(G->tiled_allocs[i]);
		free(G->tiled_allocs);
		pr_tiled_delete(G->tiled);
		if (m->comms && G->comm)
			ncclCommDestroy(G->comm);
		if (G->sp)
			cusparseDestroy(G->sp);
		if (G->stream)
			cudaStreamDestroy(G->stream);
	}
	pr_partition_free(&m->part, &pr_malloc_allocator);
	free(m);
}
