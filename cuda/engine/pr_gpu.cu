/*
 * pr_gpu.cu — the GPU engine: PrEngineOps on one CUDA device (see pr_gpu.h).
 *
 * Layout: nodes relabelled by out-degree (pr_plan_degree_order), so the hot entries of x sit
 * together; the pull matrix in the planned format (tile-composite, row-binned, or cuSPARSE CSR);
 * vector slots of (n+1) x k values in the private order whose last row is a zero row that padding
 * entries read.  The normalized product reads z = x / out_strength, written by the previous
 * PageRank update (fused) or by a scale kernel, so the matrix carries no values when unweighted.
 */
#include "pr_gpu.h"
#include "pr_gpu_launch.h"
#include "pr_gpu_status.h"
#include "pr_plan.h"
#include "pr_gpu_tiled.cuh"
#include "pr_gpu_spmm.h"
#include "pr_gpu_binned_kernels.cuh"
#include "pr_gpu_partials.cuh"
#include "pr_gpu_update_kernels.cuh"
#include "pr_gpu_vector_kernels.cuh"
#include "pr_gpu_local_kernels.cuh"
#include "pr_gpu_topk.h"
#include "pr_gpu_push_local.h"

#include <cub/device/device_select.cuh>
#include <cuda_runtime.h>
#include <cusparse.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

/* Records a failed CUDA call in err and returns its status from the enclosing function. */
#define PR_CUDA(call) PR_CUDA_OR_RETURN("GPU engine", call)

/* Same for cuSPARSE calls. */
#define PR_CUSPARSE(call) PR_CUSPARSE_OR_RETURN("GPU engine", call)

/* Checks the launch just made. */
#define PR_LAUNCHED() PR_CUDA(cudaGetLastError())

enum MatrixKind
{
	MATRIX_NONE = 0,
	MATRIX_TILED,
	MATRIX_BINNED,
	MATRIX_CUSPARSE
};

/*
 * One sparse matrix on the device in one format: the tile-composite fields (pr_gpu_tiled.cuh:
 * tiles, partials, compact partials; has_val, bytes and partial serve every
 * format, tiles[0] the binned format's long rows too), then the binned CSR and cuSPARSE.
 */
struct GpuMatrix : TiledMatrix
{
	MatrixKind	kind;
	DevBinned	binned;
	int64_t		binned_blocks;
	/* cuSPARSE */
	cusparseSpMatDescr_t sp_mat;
	void	   *sp_buffer;
	bool		sp_created;
};

/* The engine. */
struct GpuEngine
{
	PrEngine	base;
	PrEngineOps ops;
	PrGpuOptions opt;
	PrModel		model;
	bool		have_model;
	cudaStream_t stream;
	cusparseHandle_t sp;
	bool		sp_ready;
	bool		prepared;
	bool		fp64;
	size_t		elem;
	int64_t		n;
	int64_t		m;
	int			k;
	int			n_slots;
	unsigned	needs;
	std::vector<void *> allocs;
	int32_t    *new_to_old;
	void	   *inv_out;
	std::vector<void *> slots;
	std::vector<bool> dangling_valid;
	void	   *z;
	int			z_owner;
	double	   *stage;
	double	   *partials;
	unsigned int *counter;
	double	   *stats;			/* [n_slots + 2][k][3] */
	int			resid_index;
	void	   *restart_dense;
	int64_t    *restart_pos;	/* [PR_SPARSE_RESTART] sorted non-zero positions of restart_dense, or NULL */
	double	   *restart_w;		/* [PR_SPARSE_RESTART] their weights */
	int64_t		restart_n;		/* non-zeros listed there, or -1: use restart_dense */
	uint64_t	restart_key;
	int32_t    *old_to_new_host;	/* [n] private position of each internal id (restart scatter) */
	void	   *far_field;		/* [n] the far-field vector kept for the warm start, or NULL */
	double	   *coef_dev;		/* [4 * k] coefficients of a combination (warm start), or NULL */
	uint32_t   *local_flags;	/* [2 * (n + 1)] flagged nodes of the restart's steps, then the bits of one, or NULL */
	int32_t    *local_marked;	/* rows a local step reaches (local_step) */
	int		   *local_count;	/* how many */
	void	   *local_temp;		/* CUB's select space */
	size_t		local_temp_bytes;
	int64_t		local_mark_blocks;	/* resident blocks of k_local_mark (with its shared memory) */
	int64_t		local_step_blocks;	/* ... of k_local_step */
	PrGpuTopkWorkspace *topk_ws;	/* scratch of the device top-k, kept between calls */
	PrGpuPushLocal *push_local; /* out-edge lists for the warm start's local part, or NULL */
	bool		push_local_off; /* making them failed for this graph: the two passes instead */
	GpuMatrix	pull;			/* PULL_NORMALIZED (and PULL when it has raw values) */
	GpuMatrix	pull_raw;		/* PULL for cuSPARSE mode (raw weights, binned) */
	GpuMatrix	push;
	PrGpuReport report;
	/* what the device layout was built from, to reuse it when prepare sees the same graph */
	const PrGraph *prep_graph;
	const int64_t *prep_in_ptr;
	const int32_t *prep_in_src;
	int64_t		prep_edges;
	unsigned int smem_grid;		/* blocks of the shared-memory tile kernel */
	bool		l2_window;		/* an L2 access-policy window is set on the stream */
	int64_t		smem_width;
};

/* Default settings. */
void
pr_gpu_options_init(PrGpuOptions *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->device = 0;
	opts->precision = PR_GPU_FP64;	/* as powerrank.gpu_precision's default */
	opts->kernel = PR_GPU_KERNEL_AUTO;
	opts->relabel = true;
	opts->chunk = 4096;
	opts->n_smem_tiles = -1;
	opts->smem_width = 0;
	opts->l2_persist = false;	/* measured: slower on R-MAT 24 (doc/RESULTS.md) */
	opts->compact_partials = -1;
	opts->plan_threads = 0;
	opts->push_local = true;
}

/* Number of CUDA devices. */
int
pr_gpu_device_count(void)
{
	int			count = 0;

	if (cudaGetDeviceCount(&count) != cudaSuccess)
		return 0;
	return count;
}

/*
 * Allocates device memory tracked for release and counted in report.total_bytes (which prepare
 * then sets to its whole plan; later allocations — more slots, the warm start's arrays — add up).
 */
static PrStatus
dev_alloc(GpuEngine *e, void **out, size_t bytes, PrError *err)
{
	cudaError_t st = cudaMalloc(out, bytes == 0 ? 16 : bytes);

	if (st != cudaSuccess)
	{
		*out = NULL;
		cudaGetLastError();
		return pr_error_set(err, PR_ERR_NOMEM, "GPU engine: cannot allocate %zu bytes of device memory: %s",
							bytes, cudaGetErrorString(st));
	}
	e->allocs.push_back(*out);
	e->report.total_bytes += bytes;
	return PR_OK;
}

/* Arrays at least this large go to the device through the staged, threaded copy. */
#define PR_STAGED_UPLOAD_BYTES ((size_t) 64 << 20)

/* Most non-zeros of a restart kept as a list (beyond it, the dense matrix is read). */
#define PR_SPARSE_RESTART 4096

/* Words of a local step's flag bits kept in shared memory (96 KB, two blocks a multiprocessor:
 * 786,432 nodes, the most-read ones). */
#define LOCAL_SHARED_WORDS 24576

/* Values per thread of the vectorized update: 16 bytes. */
#define UPDATE_V(T) ((int) (16 / sizeof(T)))

/* Whether x (> 0) is a power of two. */
static inline bool
pr_is_pow2(int64_t x)
{
	return x > 0 && (x & (x - 1)) == 0;
}

/*
 * Allocates device memory and copies host data into it: large arrays by several host threads
 * through pinned buffers (pr_gpu_copy_to_device), the graph's host arrays being pageable.
 */
static PrStatus
dev_upload(GpuEngine *e, void **out, const void *host, size_t bytes, PrError *err)
{
	PrStatus	st = dev_alloc(e, out, bytes, err);

	if (st != PR_OK)
		return st;
	if (bytes >= PR_STAGED_UPLOAD_BYTES)
		return pr_gpu_copy_to_device(e->opt.device, *out, host, bytes, pr_thread_count(0, 16), err);
	if (bytes > 0)
		PR_CUDA(cudaMemcpy(*out, host, bytes, cudaMemcpyHostToDevice));
	return PR_OK;
}

/* Grid size for a grid-stride loop over count items. */
static unsigned int
grid_for(int64_t count)
{
	return pr_grid_blocks(count, PR_THREADS, 132 * 16);
}

/* Device memory for a composite layout's arrays: tracked for release like every other. */
static PrStatus
tiled_alloc(void *arg, void **out, size_t bytes, PrError *err)
{
	return dev_alloc((GpuEngine *) arg, out, bytes, err);
}

/* The engine's device, stream and allocator for the composite product (pr_gpu_tiled.h). */
static TiledDevice
tiled_device(GpuEngine *e)
{
	TiledDevice d;

	d.device = e->opt.device;
	d.fp64 = e->fp64;
	d.stream = e->stream;
	d.smem_grid = e->smem_grid;
	d.alloc = tiled_alloc;
	d.alloc_arg = e;
	return d;
}

/* Uploads a CSR and its row bins. */
static PrStatus
upload_binned(GpuEngine *e, const PrPlanCsr *csr, const PrBinned *b, GpuMatrix *mat, PrError *err)
{
	DevBinned  *d = &mat->binned;
	void	   *p;
	PrStatus	st;
	int64_t		blocks = 0;

	memset(d, 0, sizeof(*d));
	mat->kind = MATRIX_BINNED;
	mat->has_val = csr->val != NULL;
	mat->bytes = b->device_bytes;
	if ((st = dev_upload(e, &p, csr->ptr, (size_t) (csr->n + 1) * 8, err)) != PR_OK)
		return st;
	d->ptr = (const int64_t *) p;
	if ((st = dev_upload(e, &p, csr->col, (size_t) csr->nnz * 4, err)) != PR_OK)
		return st;
	d->col = (const int32_t *) p;
	if (csr->val != NULL)
	{
		if ((st = dev_upload(e, &p, csr->val, (size_t) csr->nnz * 4, err)) != PR_OK)
			return st;
		d->val = (const float *) p;
	}
	if ((st = dev_upload(e, &p, b->rows, (size_t) b->bin_begin[PR_BIN_COUNT - 1] * 4, err)) != PR_OK)
		return st;
	d->rows = (const int32_t *) p;
	if ((st = dev_upload(e, &p, b->chunk_begin_edge, (size_t) (b->n_chunks + 1) * 8, err)) != PR_OK)
		return st;
	d->chunk_begin_edge = (const int64_t *) p;
	if ((st = dev_upload(e, &p, b->chunk_row, (size_t) b->n_chunks * 4, err)) != PR_OK)
		return st;
	d->chunk_row = (const int32_t *) p;
	mat->tiles[0].n_long = b->longs.n_long;
	if ((st = dev_upload(e, &p, b->longs.long_row, (size_t) b->longs.n_long * 4, err)) != PR_OK)
		return st;
	mat->tiles[0].long_row = (const int32_t *) p;
	if ((st = dev_upload(e, &p, b->longs.chunk_begin, (size_t) (b->longs.n_long + 1) * 8, err)) != PR_OK)
		return st;
	mat->tiles[0].chunk_begin = (const int64_t *) p;
	for (int bin = 0; bin <= PR_BIN_COUNT; bin++)
		d->bin_begin[bin] = b->bin_begin[bin];
	for (int bin = 0; bin < PR_BIN_COUNT - 1; bin++)
	{
		int64_t		rows = b->bin_begin[bin + 1] - b->bin_begin[bin];

		d->block_begin[bin] = blocks;
		blocks += (rows * pr_bin_lanes[bin] + PR_THREADS - 1) / PR_THREADS;
	}
	d->block_begin[PR_BIN_COUNT - 1] = blocks;
	blocks += (b->n_chunks + PR_THREADS / 32 - 1) / (PR_THREADS / 32);
	d->block_begin[PR_BIN_COUNT] = blocks;
	d->n_chunks = b->n_chunks;
	d->chunk = b->chunk;
	mat->binned_blocks = blocks;
	/* chunk partial sums: one per column of each chunk (SpMM: partial[c * k + j]) */
	return dev_alloc(e, &mat->partial, (size_t) (b->n_chunks + 1) * e->k * e->elem, err);
}

/* Uploads a CSR with the values of P (w / out_strength of the column) for cusparseSpMV. */
static PrStatus
upload_cusparse(GpuEngine *e, const PrPlanCsr *csr, const double *inv_out_host, GpuMatrix *mat,
				PrError *err)
{
	void	   *d_ptr,
			   *d_col,
			   *d_val;
	size_t		vbytes = (size_t) csr->nnz * e->elem;
	void	   *hval = malloc(vbytes > 0 ? vbytes : 1);
	size_t		buffer = 0;
	PrStatus	st;
	cudaDataType vt = e->fp64 ? CUDA_R_64F : CUDA_R_32F;
	cusparseDnVecDescr_t vx,
				vy;
	double		one = 1.0,
				zero = 0.0;
	float		onef = 1.0f,
				zerof = 0.0f;

	if (hval == NULL)
		return pr_error_set(err, PR_ERR_NOMEM, "GPU engine: out of host memory");
	for (int64_t r = 0; r < csr->n; r++)
		for (int64_t p = csr->ptr[r]; p < csr->ptr[r + 1]; p++)
		{
			double		w = (csr->val ? csr->val[p] : 1.0) * inv_out_host[csr->col[p]];

			if (e->fp64)
				((double *) hval)[p] = w;
			else
				((float *) hval)[p] = (float) w;
		}
	if (csr->nnz > (int64_t) INT32_MAX - 1)
	{
		free(hval);
		return pr_error_set(err, PR_ERR_TOO_LARGE, "GPU engine: the cuSPARSE baseline takes at most 2^31-1 edges");
	}
	mat->kind = MATRIX_CUSPARSE;
	mat->bytes = (size_t) (csr->n + 1) * 4 + (size_t) csr->nnz * 4 + vbytes;
	{
		/* cuSPARSE wants row offsets and column ids of the same width: 32-bit both */
		std::vector<int32_t> ptr32((size_t) csr->n + 1);

		for (int64_t r = 0; r <= csr->n; r++)
			ptr32[r] = (int32_t) csr->ptr[r];
		st = dev_upload(e, &d_ptr, ptr32.data(), (size_t) (csr->n + 1) * 4, err);
	}
	if (st != PR_OK ||
		(st = dev_upload(e, &d_col, csr->col, (size_t) csr->nnz * 4, err)) != PR_OK ||
		(st = dev_upload(e, &d_val, hval, vbytes, err)) != PR_OK)
	{
		free(hval);
		return st;
	}
	free(hval);
	PR_CUSPARSE(cusparseCreateCsr(&mat->sp_mat, csr->n, csr->n, csr->nnz, d_ptr, d_col, d_val,
								  CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, vt));
	mat->sp_created = true;
	PR_CUSPARSE(cusparseCreateDnVec(&vx, csr->n, e->slots[0], vt));
	PR_CUSPARSE(cusparseCreateDnVec(&vy, csr->n, e->slots[e->n_slots > 1 ? 1 : 0], vt));
	PR_CUSPARSE(cusparseSpMV_bufferSize(e->sp, CUSPARSE_OPERATION_NON_TRANSPOSE,
										e->fp64 ? (const void *) &one : (const void *) &onef,
										mat->sp_mat, vx,
										e->fp64 ? (const void *) &zero : (const void *) &zerof,
										vy, vt, CUSPARSE_SPMV_ALG_DEFAULT, &buffer));
	cusparseDestroyDnVec(vx);
	cusparseDestroyDnVec(vy);
	mat->bytes += buffer;
	return dev_alloc(e, &mat->sp_buffer, buffer, err);
}

/* Runs y = M z on the device (k = 1 formats, or SpMM over the binned CSR when k > 1). */
template <typename T>
static PrStatus
run_matrix(GpuEngine *e, GpuMatrix *mat, const void *zv, void *yv, PrError *err)
{
	const T    *z = (const T *) zv;
	T		   *y = (T *) yv;

	if (e->k > 1)
	{
		/* SpMM over the binned CSR (pr_gpu_spmm.h); long rows' chunk partials merged in order */
		if (e->n == 0)
			return PR_OK;
		PR_CUDA(pr_spmm_binned_run<T>(mat->binned, mat->has_val, mat->tiles[0].n_long, mat->tiles[0].long_row,
								   mat->tiles[0].chunk_begin, e->k, z, y, (T *) mat->partial, e->stream));
		return PR_OK;
	}
	if (mat->kind == MATRIX_TILED)
	{
		TiledDevice d = tiled_device(e);

		return pr_tiled_run<T>(&d, mat, z, y, err);
	}
	if (mat->kind == MATRIX_BINNED)
	{
		const DevTile *d = &mat->tiles[0];
		T		   *partial = (T *) mat->partial;

		if (mat->binned_blocks > 0)
		{
			if (mat->has_val)
				k_binned<T, true><<<(unsigned int) mat->binned_blocks, PR_THREADS, 0, e->stream>>>(mat->binned, z, y, partial);
			else
				k_binned<T, false><<<(unsigned int) mat->binned_blocks, PR_THREADS, 0, e->stream>>>(mat->binned, z, y, partial);
			PR_LAUNCHED();
		}
		if (d->n_long > 0)
		{
			unsigned int lb = (unsigned int) ((d->n_long + PR_THREADS - 1) / PR_THREADS);

			k_long_rows<T, PR_MODE_STORE><<<lb, PR_THREADS, 0, e->stream>>>(d->n_long, d->long_row, d->chunk_begin, partial, y, (T *) NULL);
			PR_LAUNCHED();
		}
		return PR_OK;
	}
	if (mat->kind == MATRIX_CUSPARSE)
	{
		cudaDataType vt = e->fp64 ? CUDA_R_64F : CUDA_R_32F;
		cusparseDnVecDescr_t vx,
					vy;
		T			one = 1,
					zero = 0;
		cusparseStatus_t s;

		PR_CUSPARSE(cusparseCreateDnVec(&vx, e->n, (void *) zv, vt));
		PR_CUSPARSE(cusparseCreateDnVec(&vy, e->n, yv, vt));
		s = cusparseSpMV(e->sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat->sp_mat, vx, &zero, vy, vt,
						 CUSPARSE_SPMV_ALG_DEFAULT, mat->sp_buffer);
		cusparseDestroyDnVec(vx);
		cusparseDestroyDnVec(vy);
		PR_CUSPARSE(s);
		return PR_OK;
	}
	return pr_error_set(err, PR_ERR_UNSUPPORTED, "GPU engine: product not prepared");
}

/* Frees everything the engine allocated on the device (keeps the engine). */
static void
engine_free_device(GpuEngine *e)
{
	GpuMatrix  *mats[3] = {&e->pull, &e->pull_raw, &e->push};

	for (int i = 0; i < 3; i++)
		if (mats[i]->sp_created)
		{
			cusparseDestroySpMat(mats[i]->sp_mat);
			mats[i]->sp_created = false;
		}
	if (e->l2_window)
	{
		cudaStreamAttrValue a;

		memset(&a, 0, sizeof(a));
		cudaStreamSetAttribute(e->stream, cudaStreamAttributeAccessPolicyWindow, &a);
		cudaCtxResetPersistingL2Cache();
		cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0);
		cudaGetLastError();
		e->l2_window = false;
	}
	for (void *p : e->allocs)
		cudaFree(p);
	e->allocs.clear();
	e->restart_dense = NULL;	/* was one of allocs, as these */
	e->restart_pos = NULL;
	e->restart_w = NULL;
	e->restart_n = -1;
	e->far_field = NULL;
	e->coef_dev = NULL;
	e->local_flags = NULL;
	e->local_marked = NULL;
	e->local_count = NULL;
	e->local_temp = NULL;
	e->restart_key = 0;
	pr_gpu_topk_free(e->topk_ws);
	e->topk_ws = NULL;
	pr_gpu_push_local_free(e->push_local);
	e->push_local = NULL;
	e->push_local_off = false;
	free(e->old_to_new_host);
	e->old_to_new_host = NULL;
	e->slots.clear();
	e->dangling_valid.clear();
	memset(&e->pull, 0, sizeof(e->pull));
	memset(&e->pull_raw, 0, sizeof(e->pull_raw));
	memset(&e->push, 0, sizeof(e->push));
	e->prepared = false;
}

/*
 * Adds slots to the engine up to n_slots (cleared), with statistics room for them: prepare's
 * slots, and more on a re-prepare that asks for more (the old statistics array then stays among
 * the allocations until the engine is freed).
 */
static PrStatus
grow_slots(GpuEngine *e, int n_slots, PrError *err)
{
	size_t		bytes = (size_t) (e->n + 1) * e->k * e->elem;
	size_t		stats_bytes = (size_t) (n_slots + 2) * e->k * 3 * 8;
	void	   *p;
	PrStatus	st;

	while ((int) e->slots.size() < n_slots)
	{
		if ((st = dev_alloc(e, &p, bytes, err)) != PR_OK)
			return st;
		e->slots.push_back(p);
		e->dangling_valid.push_back(false);
		PR_CUDA(cudaMemsetAsync(p, 0, bytes, e->stream));
	}
	if ((st = dev_alloc(e, &p, stats_bytes, err)) != PR_OK)
		return st;
	PR_CUDA(cudaMemsetAsync(p, 0, stats_bytes, e->stream));
	e->stats = (double *) p;
	e->n_slots = n_slots;
	return PR_OK;
}

/* Host-side layouts built during prepare (freed at its end). */
struct HostPlans
{
	PrPlanCsr	pull;
	PrPlanCsr	push;
	PrComposite comp;
	PrBinned	bin_pull;
	PrBinned	bin_push;
	int32_t    *new_to_old;
	int32_t    *old_to_new;
	int64_t    *key;
	double	   *inv_out;
	bool		pull_borrowed;	/* pull is a view of the graph's own in-CSR (not freed) */
};

/* Frees the host layouts. */
static void
host_plans_free(HostPlans *h)
{
	const PrAllocator *a = &pr_malloc_allocator;

	if (h->pull_borrowed)
		memset(&h->pull, 0, sizeof(h->pull));
	pr_plan_csr_free(&h->pull, a);
	pr_plan_csr_free(&h->push, a);
	pr_plan_composite_free(&h->comp, a);
	pr_plan_binned_free(&h->bin_pull, a);
	pr_plan_binned_free(&h->bin_push, a);
	free(h->new_to_old);
	free(h->old_to_new);
	free(h->key);
	free(h->inv_out);
}

/* Scalar type dispatch helpers. */
template <typename T>
static PrStatus
launch_fill(GpuEngine *e, void *x, int64_t total, double v, PrError *err)
{
	k_fill<T><<<grid_for(total), PR_THREADS, 0, e->stream>>>(total, (T *) x, (T) v);
	PR_LAUNCHED();
	return PR_OK;
}

/* The host arrays of gpu_prepare filled by one thread's share of n (see host_arrays_part). */
typedef struct HostArraysJob
{
	int64_t		n;
	const double *out_strength;
	double	   *inv_out;		/* 1 / out-strength (0 for dangling nodes) */
	int32_t    *new_to_old;		/* identity ids (natural order), or NULL */
	int32_t    *old_to_new;
} HostArraysJob;

/* pr_parallel_run's task: part `part` of n_parts of the host arrays. */
static void
host_arrays_part(void *arg, int part, int n_parts)
{
	HostArraysJob *job = (HostArraysJob *) arg;
	int64_t		b,
				end;

	pr_even_range(job->n, part, n_parts, &b, &end);
	for (int64_t i = b; i < end; i++)
	{
		job->inv_out[i] = job->out_strength[i] > 0 ? 1.0 / job->out_strength[i] : 0.0;
		if (job->new_to_old != NULL)
			job->new_to_old[i] = job->old_to_new[i] = (int32_t) i;
	}
}

/* Prepare: relabel, plan, check memory, upload. */
static PrStatus
gpu_prepare(PrEngine *base, const PrGraph *g, int k, int n_slots, unsigned needs, PrError *err)
{
	GpuEngine  *e = (GpuEngine *) base;
	HostPlans	h;
	const PrAllocator *a = &pr_malloc_allocator;
	double		t0 = pr_clock_seconds(),
				t1,
				t_setup = 0,
				t_host = 0;
	int64_t		n = g->n_nodes;
	PrStatus	st = PR_OK;
	PrGpuKernel kernel = e->opt.kernel;
	size_t		free_b = 0,
				total_b = 0,
				need;
	char		cand[512] = "";
	int			n_cand = 0;
	double		predicted = -1;
	PrCompositeOptions copt;

	memset(&h, 0, sizeof(h));
	if (e->prepared && e->prep_graph == g && e->prep_in_ptr == g->in_ptr && e->prep_in_src == g->in_src &&
		e->prep_edges == g->n_edges && e->n == n && e->k == k && e->needs == needs)
	{
		/* same graph object and shape: keep the device layout, forget the vector state; a run
		 * asking for more slots gets the missing ones (fewer: it uses the first ones) */
		for (int s = 0; s < e->n_slots; s++)
			e->dangling_valid[s] = false;
		e->z_owner = -1;
		e->resid_index = -1;
		return n_slots > e->n_slots ? grow_slots(e, n_slots, err) : PR_OK;
	}
	if (e->prepared)
		engine_free_device(e);
	memset(&e->report, 0, sizeof(e->report));
	if (k < 1 || k > PR_MAX_K)
		return pr_error_set(err, PR_ERR_UNSUPPORTED, "GPU engine: %d columns (the GPU engine takes 1 to %d)", k, PR_MAX_K);
	if (n_slots < 1)
		return pr_error_set(err, PR_ERR_INVALID, "GPU engine: needs at least one vector slot");
	if (n > PR_PLAN_MAX_NODES_CHECK)
		return pr_error_set(err, PR_ERR_TOO_LARGE, "GPU engine: %lld nodes exceed the 32-bit ids", (long long) n);
	e->n = n;
	e->m = g->n_edges;
	e->k = k;
	e->n_slots = n_slots;
	e->needs = needs;
	e->z_owner = -1;
	e->resid_index = -1;
	e->restart_key = 0;

	/* degree order and 1/out_strength */
	h.new_to_old = (int32_t *) malloc((size_t) (n + 1) * 4);
	h.old_to_new = (int32_t *) malloc((size_t) (n + 1) * 4);
	h.key = (int64_t *) calloc((size_t) (n + 1), 8);
	h.inv_out = (double *) malloc((size_t) (n + 1) * 8);
	if (!h.new_to_old || !h.old_to_new || !h.key || !h.inv_out)
	{
		host_plans_free(&h);
		return pr_error_set(err, PR_ERR_NOMEM, "GPU engine: out of host memory");
	}
	pr_plan_set_threads(e->opt.plan_threads);
	if (e->opt.relabel)
	{
		/* out-degrees = column counts of the in-edge CSR (parallel), for the degree order only */
		PrPlanCsr	in_view;

		memset(&in_view, 0, sizeof(in_view));
		in_view.n = n;
		in_view.nnz = g->n_edges;
		in_view.ptr = g->in_ptr;
		in_view.col = g->in_src;
		st = pr_plan_column_degrees(&in_view, h.key, err);
		if (st != PR_OK)
		{
			host_plans_free(&h);
			return st;
		}
	}
	{
		HostArraysJob job = {n, g->out_strength, h.inv_out, e->opt.relabel ? NULL : h.new_to_old,
							 e->opt.relabel ? NULL : h.old_to_new};

		/* fresh arrays of n entries: their page faults are the cost, taken by several threads */
		pr_parallel_run(host_arrays_part, &job, pr_thread_count(0, 16));
	}
	if (e->opt.relabel)
		st = pr_plan_degree_order(n, h.key, h.new_to_old, h.old_to_new, a, err);
	if (st == PR_OK && !e->opt.relabel && g->in_weight == NULL)
	{
		/*
		 * natural ids, no values: the graph's in-rows already list their sources ascending, which
		 * is what the identity relabel would produce, so the plans read the graph's own arrays
		 * (read only) instead of a sorted copy (the quick layout of a large cached graph)
		 */
		h.pull.n = n;
		h.pull.nnz = g->n_edges;
		h.pull.ptr = (int64_t *) g->in_ptr;
		h.pull.col = (int32_t *) g->in_src;
		h.pull_borrowed = true;
	}
	else if (st == PR_OK)
		st = pr_plan_relabel(n, g->in_ptr, g->in_src, g->in_weight, h.old_to_new, a, &h.pull, err);
	if (st == PR_OK && (needs & PR_NEED_PUSH))
		st = pr_plan_transpose(&h.pull, a, &h.push, err);
	if (st != PR_OK)
	{
		host_plans_free(&h);
		return st;
	}
	/* inv_out in the private order (natural ids: it is already) */
	if (e->opt.relabel)
	{
		double	   *tmp = (double *) malloc((size_t) (n + 1) * 8);

		if (tmp == NULL)
		{
			host_plans_free(&h);
			return pr_error_set(err, PR_ERR_NOMEM, "GPU engine: out of host memory");
		}
		for (int64_t i = 0; i < n; i++)
			tmp[i] = h.inv_out[h.new_to_old[i]];
		free(h.inv_out);
		h.inv_out = tmp;
	}

	/* shared-memory tiles: width, opt-in limit, grid */
	t_setup = pr_clock_seconds();
	{
		PrStatus	sst;

		e->smem_width = e->opt.smem_width > 0 ? e->opt.smem_width : (e->fp64 ? 24576 : 49152);
		if (e->smem_width >= 65535)
			e->smem_width = 65534;
		if ((sst = pr_tiled_smem_setup(e->opt.device, e->fp64, e->smem_width, &e->smem_grid, err)) != PR_OK)
		{
			host_plans_free(&h);
			return sst;
		}
	}

	t_setup = pr_clock_seconds() - t_setup;
	t_host = pr_clock_seconds() - t0 - t_setup;
	/* the pull format */
	if (k > 1 && kernel != PR_GPU_KERNEL_BINNED)
		kernel = PR_GPU_KERNEL_BINNED;	/* SpMM runs over the CSR */
	/* rows longer than this are cut into chunks; SpMM's warps cover fewer entries at a time */
	int			bin_chunk = e->opt.chunk > 0 ? e->opt.chunk : k > 1 ? PR_SPMM_CHUNK : 4096;

	if (kernel == PR_GPU_KERNEL_AUTO || kernel == PR_GPU_KERNEL_TILED)
	{
		PrPlanChoice choice;

		pr_plan_choice_init(&choice, n);
		choice.composite.tile_width = e->opt.tile_width > 0 ? e->opt.tile_width : n;
		choice.composite.chunk = e->opt.chunk > 0 ? e->opt.chunk : 4096;
		choice.composite.smem_width = e->smem_width;
		if (e->opt.n_smem_tiles >= 0)
		{
			choice.n_smem_counts = 1;
			choice.smem_counts[0] = e->opt.n_smem_tiles;
		}
		if (e->opt.vec_threshold > 0)
		{
			choice.n_thresholds = 1;
			choice.thresholds[0] = e->opt.vec_threshold;
		}
		choice.compact_mode = e->opt.compact_partials;
		choice.allow_binned = kernel == PR_GPU_KERNEL_AUTO;
		choice.binned_chunk = e->opt.chunk > 0 ? e->opt.chunk : 4096;
		st = pr_plan_choose(&h.pull, e->have_model ? &e->model : NULL, &choice, &predicted, cand,
							sizeof(cand), &n_cand, a, err);
		if (st == PR_OK)
		{
			kernel = choice.binned ? PR_GPU_KERNEL_BINNED : PR_GPU_KERNEL_TILED;
			copt = choice.composite;
		}
		if (st == PR_OK && kernel == PR_GPU_KERNEL_TILED)
			st = pr_plan_composite(&h.pull, &copt, a, &h.comp, err);
	}
	if (st == PR_OK && (kernel == PR_GPU_KERNEL_BINNED ||
						(kernel == PR_GPU_KERNEL_CUSPARSE && (needs & PR_NEED_PULL))))
	{
		st = pr_plan_binned(&h.pull, bin_chunk, a, &h.bin_pull, err);
		/* the model's figure reads every entry (~1 s at 263 M edges): not for the quick layout
		 * (natural ids), whose point is to be ready soon */
		if (st == PR_OK && kernel == PR_GPU_KERNEL_BINNED && e->have_model && predicted < 0 && e->opt.relabel)
			predicted = pr_model_predict_binned(&e->model, &h.bin_pull, &h.pull) * 1e3;
	}
	if (st == PR_OK && (needs & PR_NEED_PUSH))
		st = pr_plan_binned(&h.push, bin_chunk, a, &h.bin_push, err);
	if (st != PR_OK)
	{
		host_plans_free(&h);
		return st;
	}
	t1 = pr_clock_seconds();

	/* memory check against the plan */
	need = (size_t) n_slots * (size_t) (n + 1) * k * e->elem	/* slots */
		+ (size_t) (n + 1) * k * e->elem	/* z */
		+ (size_t) n * k * 8	/* staging */
		+ (size_t) (n + 1) * (4 + e->elem)	/* new_to_old, inv_out */
		+ (size_t) n * k * e->elem	/* restart (personalized) */
		+ (size_t) n * (e->fp64 ? 24 : 16)	/* device top-k scratch (pr_gpu_topk), made on first use */
		+ (size_t) PR_RED_BLOCKS * k * 3 * 8 + (size_t) (n_slots + 2) * k * 3 * 8;
	if (kernel == PR_GPU_KERNEL_TILED)
		need += h.comp.device_bytes + (size_t) h.comp.n_part * (e->elem - sizeof(float));
	if (kernel == PR_GPU_KERNEL_BINNED || (kernel == PR_GPU_KERNEL_CUSPARSE && (needs & PR_NEED_PULL)))
		need += h.bin_pull.device_bytes;
	if (kernel == PR_GPU_KERNEL_CUSPARSE)
		need += (size_t) (n + 1) * 8 + (size_t) g->n_edges * (4 + e->elem) + ((size_t) 64 << 20);
	if (needs & PR_NEED_PUSH)
		need += h.bin_push.device_bytes;
	PR_CUDA(cudaMemGetInfo(&free_b, &total_b));
	if (need + ((size_t) 256 << 20) > free_b ||
		(e->opt.memory_budget > 0 && need > e->opt.memory_budget))
	{
		host_plans_free(&h);
		return pr_error_set(err, PR_ERR_NOMEM,
							"GPU engine: the graph needs %.1f MiB of device memory; %.1f MiB are free%s",
							need / 1048576.0, free_b / 1048576.0,
							e->opt.memory_budget > 0 ? " (or over the memory budget)" : "");
	}

	/* allocate and upload */
	{
		/* the vector slots (cleared) and their statistics */
		st = grow_slots(e, n_slots, err);
		if (st == PR_OK && (st = dev_alloc(e, &e->z, (size_t) (n + 1) * k * e->elem, err)) == PR_OK)
			if (cudaMemsetAsync(e->z, 0, (size_t) (n + 1) * k * e->elem, e->stream) != cudaSuccess)
				st = pr_error_set(err, PR_ERR_ENGINE, "GPU engine: cudaMemsetAsync failed");
		if (st == PR_OK)
			st = dev_alloc(e, (void **) &e->stage, (size_t) n * k * 8, err);
		if (st == PR_OK)
			st = dev_upload(e, (void **) &e->new_to_old, h.new_to_old, (size_t) n * 4, err);
		if (st == PR_OK)
		{
			/* kept for the restart scatter: the plan's copy is freed at the end of prepare */
			e->old_to_new_host = h.old_to_new;
			h.old_to_new = NULL;
		}
		if (st == PR_OK)
		{
			if (e->fp64)
				st = dev_upload(e, &e->inv_out, h.inv_out, (size_t) n * 8, err);
			else
			{
				float	   *f = (float *) malloc((size_t) (n + 1) * 4);

				if (f == NULL)
					st = pr_error_set(err, PR_ERR_NOMEM, "GPU engine: out of host memory");
				else
				{
					for (int64_t i = 0; i < n; i++)
						f[i] = (float) h.inv_out[i];
					st = dev_upload(e, &e->inv_out, f, (size_t) n * 4, err);
					free(f);
				}
			}
		}
		if (st == PR_OK)
			st = dev_alloc(e, (void **) &e->partials, (size_t) PR_RED_BLOCKS * k * 3 * 8, err);
		if (st == PR_OK && (st = dev_alloc(e, (void **) &e->counter, 64, err)) == PR_OK)
			if (cudaMemset(e->counter, 0, 64) != cudaSuccess)
				st = pr_error_set(err, PR_ERR_ENGINE, "GPU engine: cudaMemset failed");
		if (st == PR_OK && kernel == PR_GPU_KERNEL_TILED)
		{
			TiledDevice d = tiled_device(e);

			e->pull.kind = MATRIX_TILED;
			st = pr_tiled_upload(&d, &h.comp, &e->pull, err);
		}
		if (st == PR_OK && kernel == PR_GPU_KERNEL_BINNED)
			st = upload_binned(e, &h.pull, &h.bin_pull, &e->pull, err);
		if (st == PR_OK && kernel == PR_GPU_KERNEL_CUSPARSE)
		{
			st = upload_cusparse(e, &h.pull, h.inv_out, &e->pull, err);
			if (st == PR_OK && (needs & PR_NEED_PULL))
				st = upload_binned(e, &h.pull, &h.bin_pull, &e->pull_raw, err);
		}
		if (st == PR_OK && (needs & PR_NEED_PUSH))
			st = upload_binned(e, &h.push, &h.bin_push, &e->push, err);
		if (st == PR_OK && cudaStreamSynchronize(e->stream) != cudaSuccess)
			st = pr_error_set(err, PR_ERR_ENGINE, "GPU engine: upload failed: %s", cudaGetErrorString(cudaGetLastError()));
		/* keep the gathered vector z in L2: an access-policy window over its (hottest) front */
		if (st == PR_OK && e->opt.l2_persist && kernel != PR_GPU_KERNEL_CUSPARSE)
		{
			int			max_window = 0,
						persist_max = 0;

			if (cudaDeviceGetAttribute(&max_window, cudaDevAttrMaxAccessPolicyWindowSize, e->opt.device) == cudaSuccess &&
				cudaDeviceGetAttribute(&persist_max, cudaDevAttrMaxPersistingL2CacheSize, e->opt.device) == cudaSuccess &&
				max_window > 0 && persist_max > 0)
			{
				size_t		bytes = (size_t) (n + 1) * k * e->elem;
				size_t		window = bytes < (size_t) max_window ? bytes : (size_t) max_window;
				size_t		carve = window < (size_t) persist_max ? window : (size_t) persist_max;
				cudaStreamAttrValue a;

				memset(&a, 0, sizeof(a));
				a.accessPolicyWindow.base_ptr = e->z;
				a.accessPolicyWindow.num_bytes = window;
				a.accessPolicyWindow.hitRatio = (float) ((double) carve / (double) window);
				a.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
				a.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
				if (cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, carve) == cudaSuccess &&
					cudaStreamSetAttribute(e->stream, cudaStreamAttributeAccessPolicyWindow, &a) == cudaSuccess)
				{
					e->l2_window = true;
					e->report.l2_persist_bytes = carve;
				}
			}
			cudaGetLastError();	/* an unsupported window is not an error: run without it */
		}
	}

	/* report */
	{
		PrGpuReport *r = &e->report;
		cudaDeviceProp prop;

		snprintf(r->engine, sizeof(r->engine), "%s",
				 kernel == PR_GPU_KERNEL_TILED ? "gpu-tiled" : kernel == PR_GPU_KERNEL_BINNED ?
				 (k > 1 ? "gpu-spmm" : "gpu-binned") : "gpu-cusparse");
		if (cudaGetDeviceProperties(&prop, e->opt.device) == cudaSuccess)
		{
			size_t		len = strnlen(prop.name, sizeof(r->device) - 1);

			memcpy(r->device, prop.name, len);
			r->device[len] = '\0';
		}
		r->n_nodes = n;
		r->n_edges = g->n_edges;
		r->predicted_ms = predicted;
		r->n_candidates = n_cand;
		memcpy(r->candidates, cand, sizeof(r->candidates));
		r->candidates[sizeof(r->candidates) - 1] = '\0';
		r->matrix_bytes = e->pull.bytes;
		if (kernel == PR_GPU_KERNEL_TILED)
		{
			r->n_tiles = h.comp.n_tiles;
			r->tile_width = h.comp.options.tile_width;
			r->vec_threshold = h.comp.options.vec_threshold;
			r->n_smem_tiles = h.comp.options.n_smem_tiles;
			r->smem_width = h.comp.options.smem_width;
			r->padding = h.comp.padding;
			snprintf(r->format, sizeof(r->format),
					 "tile-composite: %d smem tile(s) of %lld cols (16-bit ids) + %d L2 tile(s), CSR-vector rows >= %d, ELL padding %.1f%%%s%s",
					 h.comp.options.n_smem_tiles < h.comp.n_tiles ? h.comp.options.n_smem_tiles : h.comp.n_tiles,
					 (long long) h.comp.options.smem_width,
					 h.comp.n_tiles - (h.comp.options.n_smem_tiles < h.comp.n_tiles ? h.comp.options.n_smem_tiles : h.comp.n_tiles),
					 h.comp.options.vec_threshold,
					 g->n_edges > 0 ? 100.0 * h.comp.padding / g->n_edges : 0.0,
					 e->opt.relabel ? ", degree-ordered ids" : "",
					 e->pull.compact ? ", compact partials + merge" : "");
		}
		else if (kernel == PR_GPU_KERNEL_BINNED)
			snprintf(r->format, sizeof(r->format), "%s CSR, %lld long rows chunked%s",
					 k > 1 ? "SpMM over" : "row-binned", (long long) h.bin_pull.longs.n_long,
					 e->opt.relabel ? ", degree-ordered ids" : "");
		else
			snprintf(r->format, sizeof(r->format), "cusparseSpMV CSR with values%s",
					 e->opt.relabel ? ", degree-ordered ids" : ", natural ids");
		r->bytes_per_edge = g->n_edges > 0 ? (double) r->matrix_bytes / (double) g->n_edges : 0.0;
		if (r->l2_persist_bytes > 0)
		{
			size_t		used = strlen(r->format);

			snprintf(r->format + used, sizeof(r->format) - used, ", L2-persist %.0f MB",
					 r->l2_persist_bytes / 1e6);
		}
		r->plan_seconds = t1 - t0;
		r->host_seconds = t_host;
		r->smem_setup_seconds = t_setup;
		r->upload_seconds = pr_clock_seconds() - t1;
		for (void *p : e->allocs)
			(void) p;
		r->total_bytes = need;
	}
	host_plans_free(&h);
	if (st != PR_OK)
	{
		engine_free_device(e);
		return st;
	}
	e->prepared = true;
	e->ops.name = e->report.engine;
	e->prep_graph = g;
	e->prep_in_ptr = g->in_ptr;
	e->prep_in_src = g->in_src;
	e->prep_edges = g->n_edges;
	return PR_OK;
}

/* Checks a slot number. */
static PrStatus check_slot(GpuEngine *e, int slot, PrError *err);

/* The top_k best entries of a slot's column, ranked on the device (pr_gpu_topk). */
static PrStatus
gpu_top_k(PrEngine *base, int slot, int col, int64_t top_k, int32_t *index, double *value, PrError *err)
{
	GpuEngine  *e = (GpuEngine *) base;
	PrStatus	st = check_slot(e, slot, err);

	if (st != PR_OK)
		return st;
	if (col < 0 || col >= e->k)
		return pr_error_set(err, PR_ERR_INVALID, "GPU engine: no column %d", col);
	return pr_gpu_topk(&e->topk_ws, e->slots[slot], e->fp64, e->n, e->k, col, e->new_to_old, top_k,
					   (void *) e->stream, index, value, err);
}

/* The top_k best entries of every column of a slot, ranked together (pr_gpu_topk_columns). */
static PrStatus
gpu_top_k_columns(PrEngine *base, int slot, int64_t top_k, int32_t *index, double *value, PrError *err)
{
	GpuEngine  *e = (GpuEngine *) base;
	PrStatus	st = check_slot(e, slot, err);

	if (st != PR_OK)
		return st;
	return pr_gpu_topk_columns(&e->topk_ws, e->slots[slot], e->fp64, e->n, e->k, e->new_to_old, top_k,
							   (void *) e->stream, index, value, err);
}

/* Checks a slot number. */
static PrStatus
check_slot(GpuEngine *e, int slot, PrError *err)
{
	if (!e->prepared)
		return pr_error_set(err, PR_ERR_INVALID, "GPU engine: not prepared");
	if (slot < 0 || slot >= e->n_slots)
		return pr_error_set(err, PR_ERR_INVALID, "GPU engine: no vector slot %d", slot);
	return PR_OK;
}

/* Forgets what is cached about a slot that is being overwritten. */
static void
slot_written(GpuEngine *e, int slot)
{
	e->dangling_valid[slot] = false;
	if (e->z_owner == slot)
		e->z_owner = -1;
}

/* Sets every entry of a slot. */
static PrStatus
gpu_fill(PrEngine *base, int slot, double value, PrError *err)
{
	GpuEngine  *e = (GpuEngine *) base;
	PrStatus	st = check_slot(e, slot, err);

	if (st != PR_OK)
		return st;
	slot_written(e, slot);
	return e->fp64 ? launch_fill<double>(e, e->slots[slot], e->n * e->k, value, err)
		: launch_fill<float>(e, e->slots[slot], e->n * e->k, value, err);
}

/* Copies n*k host values (internal ids) into a slot (private order). */
static PrStatus
gpu_upload(PrEngine *base, int slot, const double *host, PrError *err)
{
	GpuEngine  *e = (GpuEngine *) base;
	PrStatus	st = check_slot(e, slot, err);
	int64_t		total = e->n * e->k;

	if (st != PR_OK)
		return st;
	slot_written(e, slot);
	if (total == 0)
		return PR_OK;
	PR_CUDA(cudaMemcpyAsync(e->stage, host, (size_t) total * 8, cudaMemcpyHostToDevice, e->stream));
	if (e->fp64)
		k_permute_in<double><<<grid_for(total), PR_THREADS, 0, e->stream>>>(e->n, e->k, e->new_to_old, e->stage, (double *) e->slots[slot]);
	else
		k_permute_in<float><<<grid_for(total), PR_THREADS, 0, e->stream>>>(e->n, e->k, e->new_to_old, e->stage, (float *) e->slots[slot]);
	PR_LAUNCHED();
	PR_CUDA(cudaStreamSynchronize(e->stream));
	return PR_OK;
}

/* Copies a slot into n*k host values (internal ids). */
static PrStatus
gpu_download(PrEngine *base, int slot, double *host, PrError *err)
{
	GpuEngine  *e = (GpuEngine *) base;
	PrStatus	st = check_slot(e, slot, err);
	int64_t		total = e->n * e->k;

	if (st != PR_OK)
		return st;
	if (total == 0)
		return PR_OK;
	if (e->fp64)
		k_permute_out<double><<<grid_for(total), PR_THREADS, 0, e->stream>>>(e->n, e->k, e->new_to_old, (const double *) e->slots[slot], e->stage);
	else
		k_permute_out<float><<<grid_for(total), PR_THREADS, 0, e->stream>>>(e->n, e->k, e->new_to_old, (const float *) e->slots[slot], e->stage);
	PR_LAUNCHED();
	PR_CUDA(cudaMemcpyAsync(host, e->stage, (size_t) total * 8, cudaMemcpyDeviceToHost, e->stream));
	PR_CUDA(cudaStreamSynchronize(e->stream));
	return PR_OK;
}

/* y_slot = product(x_slot). */
template <typename T>
static PrStatus
product_typed(GpuEngine *e, PrProduct product, int x_slot, int y_slot, PrError *err)
{
	GpuMatrix  *mat;
	const void *in = e->slots[x_slot];

	if (product == PR_PRODUCT_PULL_NORMALIZED)
	{
		mat = &e->pull;
		if (mat->kind != MATRIX_CUSPARSE)
		{
			if (e->z_owner != x_slot)
			{
				int64_t		total = e->n * e->k;

				k_scale<T><<<grid_for(total), PR_THREADS, 0, e->stream>>>(e->n, e->k, (const T *) e->slots[x_slot],
																	  (const T *) e->inv_out, (T *) e->z);
				PR_LAUNCHED();
				e->z_owner = x_slot;
			}
			in = e->z;
		}
	}
	else if (product == PR_PRODUCT_PULL)
		mat = e->pull.kind == MATRIX_CUSPARSE ? &e->pull_raw : &e->pull;
	else
		mat = &e->push;
	if (mat->kind == MATRIX_NONE)
		return pr_error_set(err, PR_ERR_UNSUPPORTED, "GPU engine: product %d was not asked for in prepare", (int) product);
	slot_written(e, y_slot);
	return run_matrix<T>(e, mat, in, e->slots[y_slot], err);
}

/* The product operation. */
static PrStatus
gpu_product(PrEngine *base, PrProduct product, int x_slot, int y_slot, PrError *err)
{
	GpuEngine  *e = (GpuEngine *) base;
	PrStatus	st;

	if ((st = check_slot(e, x_slot, err)) != PR_OK || (st = check_slot(e, y_slot, err)) != PR_OK)
		return st;
	if (x_slot == y_slot)
		return pr_error_set(err, PR_ERR_INVALID, "GPU engine: product in place (slot %d)", x_slot);
	if (e->n == 0)
		return PR_OK;
	return e->fp64 ? product_typed<double>(e, product, x_slot, y_slot, err)
		: product_typed<float>(e, product, x_slot, y_slot, err);
}

/* A cheap fingerprint of a restart description, to reuse its dense device copy. */
static uint64_t
restart_fingerprint(const PrRestart *r)
{
	uint64_t	h = 1469598103934665603ULL ^ (uint64_t) r->k;
	int64_t		total = r->ptr[r->k];

	for (int j = 0; j <= r->k; j++)
		h = (h ^ (uint64_t) r->ptr[j]) * 1099511628211ULL;
	for (int64_t i = 0; i < total; i++)
	{
		uint64_t	w;

		memcpy(&w, &r->weight[i], 8);
		h = (h ^ (uint64_t) r->node[i]) * 1099511628211ULL;
		h = (h ^ w) * 1099511628211ULL;
	}
	return h | 1;
}

/* Order of restart entries for the sparse upload: by dense position, then by entry number. */
struct RestartEntry
{
	int64_t		pos;
	int64_t		seq;
	double		weight;
};

/* qsort comparison of RestartEntry: position, then entry number (the host's summation order). */
static int
restart_entry_cmp(const void *a, const void *b)
{
	const RestartEntry *x = (const RestartEntry *) a,
			   *y = (const RestartEntry *) b;

	if (x->pos != y->pos)
		return x->pos < y->pos ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Builds the dense n x k restart matrix (private order) on the device: cleared on the device, then
 * the few restart entries (summed per node and column on the host, in entry order) scattered into
 * it — no n-sized host array or transfer.  Many entries (a large personalization) go through the
 * staging buffer as a dense host matrix instead.
 */
template <typename T>
static PrStatus
upload_restart(GpuEngine *e, const PrRestart *r, PrError *err)
{
	int64_t		total = e->n * e->k;
	int64_t		m = r->ptr[r->k];
	PrStatus	st = PR_OK;
	cudaError_t c;

	for (int64_t p = 0; p < m; p++)
		if (r->node[p] < 0 || r->node[p] >= e->n)
			return pr_error_set(err, PR_ERR_INVALID, "GPU engine: restart node %d out of range", r->node[p]);
	if (e->restart_dense == NULL &&
		(st = dev_alloc(e, &e->restart_dense, (size_t) total * e->elem, err)) != PR_OK)
		return st;
	if (e->restart_pos == NULL &&
		((st = dev_alloc(e, (void **) &e->restart_pos, (size_t) PR_SPARSE_RESTART * 8, err)) != PR_OK ||
		 (st = dev_alloc(e, (void **) &e->restart_w, (size_t) PR_SPARSE_RESTART * 8, err)) != PR_OK))
		return st;
	e->restart_n = -1;
	if (m <= PR_SPARSE_RESTART && 2 * m <= total && e->old_to_new_host != NULL)
	{
		RestartEntry *ent = (RestartEntry *) malloc((size_t) (m + 1) * sizeof(RestartEntry));
		int64_t    *pos = (int64_t *) malloc((size_t) (m + 1) * 8);
		double	   *w = (double *) malloc((size_t) (m + 1) * 8);
		int64_t		u = 0;

		if (ent == NULL || pos == NULL || w == NULL)
		{
			free(ent);
			free(pos);
			free(w);
			return pr_error_set(err, PR_ERR_NOMEM, "GPU engine: out of host memory");
		}
		for (int j = 0; j < r->k; j++)
			for (int64_t p = r->ptr[j]; p < r->ptr[j + 1]; p++)
			{
				ent[p].pos = (int64_t) e->old_to_new_host[r->node[p]] * e->k + j;
				ent[p].seq = p;
				ent[p].weight = r->weight[p];
			}
		qsort(ent, (size_t) m, sizeof(RestartEntry), restart_entry_cmp);
		for (int64_t p = 0; p < m; p++)
		{
			if (u > 0 && pos[u - 1] == ent[p].pos)
				w[u - 1] += ent[p].weight;
			else
			{
				pos[u] = ent[p].pos;
				w[u] = 0.0 + ent[p].weight;	/* as the dense host sum: 0 + w1 + w2 ... */
				u++;
			}
		}
		c = cudaMemsetAsync(e->restart_dense, 0, (size_t) total * e->elem, e->stream);
		if (c == cudaSuccess && u > 0)
			c = cudaMemcpyAsync(e->stage, pos, (size_t) u * 8, cudaMemcpyHostToDevice, e->stream);
		if (c == cudaSuccess && u > 0)
			c = cudaMemcpyAsync(e->stage + u, w, (size_t) u * 8, cudaMemcpyHostToDevice, e->stream);
		if (c == cudaSuccess && u > 0)
		{
			k_restart_scatter<T><<<grid_for(u), PR_THREADS, 0, e->stream>>>(u, (const int64_t *) e->stage,
																		  e->stage + u, (T *) e->restart_dense);
			c = cudaGetLastError();
		}
		/* the same non-zeros kept as a list, for the updates (no n x k read per iteration) */
		if (c == cudaSuccess && u > 0)
			c = cudaMemcpyAsync(e->restart_pos, e->stage, (size_t) u * 8, cudaMemcpyDeviceToDevice, e->stream);
		if (c == cudaSuccess && u > 0)
			c = cudaMemcpyAsync(e->restart_w, e->stage + u, (size_t) u * 8, cudaMemcpyDeviceToDevice, e->stream);
		if (c == cudaSuccess)
			e->restart_n = u;
		if (c == cudaSuccess)
			c = cudaStreamSynchronize(e->stream);	/* the host arrays are freed next */
		free(ent);
		free(pos);
		free(w);
		if (c != cudaSuccess)
			return pr_error_set(err, PR_ERR_ENGINE, "GPU engine: restart upload failed: %s", cudaGetErrorString(c));
		return PR_OK;
	}
	{
		double	   *host = (double *) calloc((size_t) total + 1, 8);

		if (host == NULL)
			return pr_error_set(err, PR_ERR_NOMEM, "GPU engine: out of host memory");
		for (int j = 0; j < r->k; j++)
			for (int64_t p = r->ptr[j]; p < r->ptr[j + 1]; p++)
				host[(int64_t) r->node[p] * e->k + j] += r->weight[p];
		c = cudaMemcpyAsync(e->stage, host, (size_t) total * 8, cudaMemcpyHostToDevice, e->stream);
		if (c == cudaSuccess)
		{
			k_permute_in<T><<<grid_for(total), PR_THREADS, 0, e->stream>>>(e->n, e->k, e->new_to_old, e->stage, (T *) e->restart_dense);
			c = cudaGetLastError();
		}
		if (c == cudaSuccess)
			c = cudaStreamSynchronize(e->stream);
		if (c != cudaSuccess)
			st = pr_error_set(err, PR_ERR_ENGINE, "GPU engine: restart upload failed: %s", cudaGetErrorString(c));
		free(host);
	}
	return st;
}

/* The dense restart matrix of a restart that is not uniform, uploaded unless it is the last one. */
template <typename T>
static PrStatus
ensure_restart(GpuEngine *e, const PrRestart *restart, PrError *err)
{
	uint64_t	key;

	if (restart->k != e->k)
		return pr_error_set(err, PR_ERR_INVALID, "GPU engine: restart has %d columns, engine %d", restart->k, e->k);
	key = restart_fingerprint(restart);
	if (key != e->restart_key)
	{
		PrStatus	st = upload_restart<T>(e, restart, err);

		if (st != PR_OK)
			return st;
		e->restart_key = key;
	}
	return PR_OK;
}

/* Launches a reduction kernel's statistics into stats[index]. */
static double *
stats_at(GpuEngine *e, int index)
{
	return e->stats + (size_t) index * e->k * 3;
}

/* The PageRank update (see pr_engine.h). */
template <typename T>
static PrStatus
update_typed(GpuEngine *e, int y_slot, int x_slot, double alpha, const PrRestart *restart, PrError *err)
{
	const T    *r = NULL;
	int64_t		n = e->n;

	if (!restart->uniform)
	{
		PrStatus	st = ensure_restart<T>(e, restart, err);

		if (st != PR_OK)
			return st;
		r = (const T *) e->restart_dense;
	}
	else if (e->k != 1)
		return pr_error_set(err, PR_ERR_INVALID, "GPU engine: a uniform restart needs k = 1");
	if (!e->dangling_valid[x_slot])
	{
		k_column_sums<T><<<PR_RED_BLOCKS, PR_THREADS, 0, e->stream>>>(n, e->k, (const T *) e->slots[x_slot], (const T *) e->inv_out,
																	e->partials, e->counter, stats_at(e, x_slot));
		PR_LAUNCHED();
		e->dangling_valid[x_slot] = true;
	}
	slot_written(e, y_slot);
	if (e->k % UPDATE_V(T) == 0 && pr_is_pow2(e->k / UPDATE_V(T)))
	{
		/* 16-byte accesses; a restart with few non-zeros from its list, not the dense matrix */
		bool		sparse = r != NULL && e->restart_n >= 0;

		k_pagerank_update_vec<T, UPDATE_V(T)><<<PR_RED_BLOCKS, PR_THREADS, 0, e->stream>>>(n, e->k, (T *) e->slots[y_slot], (const T *) e->slots[x_slot],
																						(const T *) e->inv_out, sparse ? (const T *) NULL : r,
																						e->restart_pos, e->restart_w, sparse ? e->restart_n : -1,
																						alpha, stats_at(e, x_slot) + 2, 3,
																						e->pull.kind == MATRIX_CUSPARSE ? (T *) NULL : (T *) e->z,
																						e->partials, e->counter, stats_at(e, y_slot));
	}
	else
		k_pagerank_update<T><<<PR_RED_BLOCKS, PR_THREADS, 0, e->stream>>>(n, e->k, (T *) e->slots[y_slot], (const T *) e->slots[x_slot],
																		(const T *) e->inv_out, r, alpha, stats_at(e, x_slot) + 2, 3,
																		e->pull.kind == MATRIX_CUSPARSE ? (T *) NULL : (T *) e->z,
																		e->partials, e->counter, stats_at(e, y_slot));
	PR_LAUNCHED();
	e->dangling_valid[y_slot] = true;
	if (e->pull.kind != MATRIX_CUSPARSE)
		e->z_owner = y_slot;
	e->resid_index = y_slot;
	return PR_OK;
}

/* The pagerank_update operation. */
static PrStatus
gpu_pagerank_update(PrEngine *base, int y_slot, int x_slot, double alpha, const PrRestart *restart,
					PrError *err)
{
	GpuEngine  *e = (GpuEngine *) base;
	PrStatus	st;

	if ((st = check_slot(e, x_slot, err)) != PR_OK || (st = check_slot(e, y_slot, err)) != PR_OK)
		return st;
	if (x_slot == y_slot)
		return pr_error_set(err, PR_ERR_INVALID, "GPU engine: update in place (slot %d)", x_slot);
	return e->fp64 ? update_typed<double>(e, y_slot, x_slot, alpha, restart, err)
		: update_typed<float>(e, y_slot, x_slot, alpha, restart, err);
}

/* Normalization of each column, with the residual against old_slot. */
template <typename T>
static PrStatus
normalize_typed(GpuEngine *e, int slot, int old_slot, PrError *err)
{
	double	   *sums = stats_at(e, e->n_slots);
	double	   *res = stats_at(e, e->n_slots + 1);

	k_column_sums<T><<<PR_RED_BLOCKS, PR_THREADS, 0, e->stream>>>(e->n, e->k, (const T *) e->slots[slot], (const T *) e->inv_out,
																e->partials, e->counter, sums);
	PR_LAUNCHED();
	slot_written(e, slot);
	k_normalize<T><<<PR_RED_BLOCKS, PR_THREADS, 0, e->stream>>>(e->n, e->k, (T *) e->slots[slot],
															  old_slot >= 0 ? (const T *) e->slots[old_slot] : (const T *) NULL,
															  sums, e->partials, e->counter, res);
	PR_LAUNCHED();
	if (old_slot >= 0)
		e->resid_index = e->n_slots + 1;
	return PR_OK;
}

/* The normalize operation. */
static PrStatus
gpu_normalize(PrEngine *base, int slot, int old_slot, PrError *err)
{
	GpuEngine  *e = (GpuEngine *) base;
	PrStatus	st;

	if ((st = check_slot(e, slot, err)) != PR_OK || (old_slot >= 0 && (st = check_slot(e, old_slot, err)) != PR_OK))
		return st;
	return e->fp64 ? normalize_typed<double>(e, slot, old_slot, err) : normalize_typed<float>(e, slot, old_slot, err);
}

/* Reads the residuals of the last update / normalize (the one host synchronization). */
static PrStatus
gpu_residual(PrEngine *base, PrResidual *out, PrError *err)
{
	GpuEngine  *e = (GpuEngine *) base;
	std::vector<double> host((size_t) e->k * 3);

	if (!e->prepared)
		return pr_error_set(err, PR_ERR_INVALID, "GPU engine: not prepared");
	if (e->resid_index < 0)
		return pr_error_set(err, PR_ERR_INVALID, "GPU engine: no residual yet");
	PR_CUDA(cudaMemcpyAsync(host.data(), stats_at(e, e->resid_index), (size_t) e->k * 3 * 8,
							cudaMemcpyDeviceToHost, e->stream));
	PR_CUDA(cudaStreamSynchronize(e->stream));
	for (int j = 0; j < e->k; j++)
	{
		out[j].l1 = host[(size_t) j * 3 + 0];
		out[j].linf = host[(size_t) j * 3 + 1];
	}
	return PR_OK;
}

/* Fills a slot with the dense restart distributions (warm start). */
static PrStatus
gpu_restart_fill(PrEngine *base, int slot, const PrRestart *restart, PrError *err)
{
	GpuEngine  *e = (GpuEngine *) base;
	PrStatus	st = check_slot(e, slot, err);

	if (st != PR_OK)
		return st;
	if (restart == NULL || restart->uniform)
		return pr_error_set(err, PR_ERR_INVALID, "GPU engine: restart_fill needs a restart that is not uniform");
	if (e->n == 0)
		return PR_OK;
	st = e->fp64 ? ensure_restart<double>(e, restart, err) : ensure_restart<float>(e, restart, err);
	if (st != PR_OK)
		return st;
	slot_written(e, slot);
	PR_CUDA(cudaMemcpyAsync(e->slots[slot], e->restart_dense, (size_t) e->n * e->k * e->elem,
							cudaMemcpyDeviceToDevice, e->stream));
	return PR_OK;
}

/* Per column: the sum of a slot and its sum over dangling nodes (warm start). */
static PrStatus
gpu_column_sums(PrEngine *base, int slot, double *sums, double *dangling, PrError *err)
{
	GpuEngine  *e = (GpuEngine *) base;
	PrStatus	st = check_slot(e, slot, err);
	double	   *dev = stats_at(e, e->n_slots);
	std::vector<double> host((size_t) e->k * 3);

	if (st != PR_OK)
		return st;
	if (e->fp64)
		k_column_sums<double><<<PR_RED_BLOCKS, PR_THREADS, 0, e->stream>>>(e->n, e->k, (const double *) e->slots[slot], (const double *) e->inv_out,
																		e->partials, e->counter, dev);
	else
		k_column_sums<float><<<PR_RED_BLOCKS, PR_THREADS, 0, e->stream>>>(e->n, e->k, (const float *) e->slots[slot], (const float *) e->inv_out,
																	   e->partials, e->counter, dev);
	PR_LAUNCHED();
	PR_CUDA(cudaMemcpyAsync(host.data(), dev, (size_t) e->k * 3 * 8, cudaMemcpyDeviceToHost, e->stream));
	PR_CUDA(cudaStreamSynchronize(e->stream));
	for (int j = 0; j < e->k; j++)
	{
		sums[j] = host[(size_t) j * 3 + 0];
		dangling[j] = host[(size_t) j * 3 + 2];
	}
	return PR_OK;
}

/* Copies n_terms * k combination coefficients to the device (coef_dev, made on first use). */
static PrStatus
upload_coef(GpuEngine *e, const double *coef, int n_terms, PrError *err)
{
	PrStatus	st;

	if (e->coef_dev == NULL && (st = dev_alloc(e, (void **) &e->coef_dev, (size_t) 4 * e->k * 8, err)) != PR_OK)
		return st;
	/* pageable source: the copy is done before cudaMemcpyAsync returns */
	PR_CUDA(cudaMemcpyAsync(e->coef_dev, coef, (size_t) n_terms * e->k * 8, cudaMemcpyHostToDevice, e->stream));
	return PR_OK;
}

/* CUB's select predicate: a row the first pass marked. */
struct MarkedRow
{
	const uint32_t *flags;

	__device__ __forceinline__ bool operator()(int32_t v) const
	{
		return flags[v] != 0;
	}
};

/* Blocks of kernel (threads and smem bytes each) that fit on the device at once. */
template <typename K>
static cudaError_t
resident_blocks(GpuEngine *e, K kernel, int threads, size_t smem, int64_t *blocks)
{
	int			sms = 0,
				per_sm = 0;
	cudaError_t c;

	if ((c = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, e->opt.device)) != cudaSuccess ||
		(smem > 48 * 1024 &&
		 (c = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int) smem)) != cudaSuccess) ||
		(c = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem)) != cudaSuccess)
		return c;
	*blocks = (int64_t) sms * (per_sm > 0 ? per_sm : 1);
	return cudaSuccess;
}

/* Words of the flag bits a local step keeps in shared memory. */
static int64_t
local_shared_words(const GpuEngine *e)
{
	int64_t		words = (e->n + 31) / 32;

	return words < LOCAL_SHARED_WORDS ? words : LOCAL_SHARED_WORDS;
}

/*
 * The scratch of the local steps, made once per prepared graph: two flag arrays and the bits of
 * one (local_flags), the marked rows, their count and CUB's select space; and the grids of the
 * two kernels (blocks that fit on the device at once).
 */
template <typename T>
static PrStatus
local_alloc(GpuEngine *e, PrError *err)
{
	const DevBinned &bm = e->pull.binned;
	int			n_rows = (int) (bm.bin_begin[6] - bm.bin_begin[0]);
	PrStatus	st;

	if (e->local_flags != NULL)
		return PR_OK;
	PR_CUDA(resident_blocks(e, k_local_mark, PR_MARK_THREADS, (size_t) local_shared_words(e) * 4, &e->local_mark_blocks));
	PR_CUDA(resident_blocks(e, e->pull.has_val ? k_local_step<T, true> : k_local_step<T, false>, PR_THREADS, 0,
							&e->local_step_blocks));
	PR_CUDA(cub::DeviceSelect::If(NULL, e->local_temp_bytes, bm.rows + bm.bin_begin[0], e->local_marked,
								  e->local_count, n_rows, MarkedRow{NULL}, e->stream));
	if ((st = dev_alloc(e, (void **) &e->local_marked, (size_t) (n_rows + 1) * 4, err)) != PR_OK ||
		(st = dev_alloc(e, (void **) &e->local_count, 8, err)) != PR_OK ||
		(st = dev_alloc(e, &e->local_temp, e->local_temp_bytes + 1, err)) != PR_OK)
		return st;
	return dev_alloc(e, (void **) &e->local_flags, (size_t) (2 * (e->n + 1) + (e->n + 31) / 32) * 4, err);
}

/*
 * One step of the restart's neighbourhood: h = P x over the sources flagged in flags_in,
 * flags_out = their out-neighbours (flags_out is also scratch: cleared here).  Every row of h is
 * written.  Three passes over the binned CSR: k_flag_bits makes the flags' bits; k_local_mark
 * reads every column id against the bits (the product's lanes, the bits' low words in shared
 * memory) and writes flags_out; the marked binned rows are listed (CUB select, in bin order) and
 * k_local_step multiplies their entries that leave flagged nodes, and the long rows' chunks, whose
 * sums k_local_long_rows adds.  The step reads the column ids once, and the rest only where the
 * step reaches: a warp per row over all rows left most warps waiting on a few short rows.
 */
template <typename T>
static cudaError_t
local_step(GpuEngine *e, const uint32_t *flags_in, const T *x, T *h, uint32_t *flags_out)
{
	const DevBinned &bm = e->pull.binned;
	const DevTile &longs = e->pull.tiles[0];
	int			n_rows = (int) (bm.bin_begin[6] - bm.bin_begin[0]);
	int64_t		words = (e->n + 31) / 32;
	int64_t		shared_words = local_shared_words(e);
	uint32_t   *bits = e->local_flags + 2 * (e->n + 1);
	unsigned int step_grid = (unsigned int) e->local_step_blocks;
	cudaError_t c;

	if ((c = cudaMemsetAsync(h, 0, (size_t) e->n * e->k * sizeof(T), e->stream)) != cudaSuccess ||
		(c = cudaMemsetAsync(flags_out, 0, (size_t) e->n * 4, e->stream)) != cudaSuccess)
		return c;
	k_flag_bits<<<pr_grid_blocks(words * 32, PR_THREADS, 4096), PR_THREADS, 0, e->stream>>>(e->n, flags_in, bits);
	if ((c = cudaGetLastError()) != cudaSuccess)
		return c;
	if (bm.block_begin[7] > 0)
	{
		/* the k = 1 grid's blocks, PR_MARK_THREADS / PR_THREADS to a real block */
		k_local_mark<<<pr_grid_blocks(bm.block_begin[7], PR_MARK_THREADS / PR_THREADS, e->local_mark_blocks),
			PR_MARK_THREADS, (size_t) shared_words * 4, e->stream>>>(bm, bits, shared_words, flags_in, flags_out);
		if ((c = cudaGetLastError()) != cudaSuccess)
			return c;
	}
	if ((c = cub::DeviceSelect::If(e->local_temp, e->local_temp_bytes, bm.rows + bm.bin_begin[0], e->local_marked,
								   e->local_count, n_rows, MarkedRow{flags_out}, e->stream)) != cudaSuccess)
		return c;
	if (e->pull.has_val)
		k_local_step<T, true><<<step_grid, PR_THREADS, 0, e->stream>>>(bm, e->local_marked, e->local_count, e->k, bits, flags_in, flags_out, (const T *) e->inv_out, x, h, (T *) e->pull.partial);
	else
		k_local_step<T, false><<<step_grid, PR_THREADS, 0, e->stream>>>(bm, e->local_marked, e->local_count, e->k, bits, flags_in, flags_out, (const T *) e->inv_out, x, h, (T *) e->pull.partial);
	if ((c = cudaGetLastError()) != cudaSuccess || longs.n_long == 0)
		return c;
	k_local_long_rows<T><<<(unsigned int) ((longs.n_long * e->k + PR_THREADS - 1) / PR_THREADS), PR_THREADS, 0, e->stream>>>(longs.n_long, e->k, longs.long_row, longs.chunk_begin, (const T *) e->pull.partial, h);
	return cudaGetLastError();
}

/*
 * The warm start's local part r + alpha P r + alpha² P² r by pushing along out-edge lists (made
 * on the first call for the prepared graph, pr_gpu_push_local.h): into out (PR_PUSH_ALL), or only
 * first = alpha P r with flags = its rows' columns (PR_PUSH_FIRST) when the second step is too
 * large, or nothing (PR_PUSH_NONE: option off, lists impossible here, or too large a restart).
 */
template <typename T>
static PrStatus
restart_push_local(GpuEngine *e, T *out, T *first, uint32_t *flags, double alpha, const PrRestart *restart,
				   PrGpuPushResult *result, PrError *err)
{
	const DevBinned &bm = e->pull.binned;
	PrStatus	st;

	*result = PR_PUSH_NONE;
	if (!e->opt.push_local || e->push_local_off)
		return PR_OK;
	if (e->push_local == NULL)
	{
		st = pr_gpu_push_local_create(bm.ptr, bm.col, e->pull.has_val ? bm.val : NULL, e->n, e->m,
									  e->opt.push_local_cap, e->stream, &e->push_local, err);
		if (st == PR_ERR_NOMEM || st == PR_ERR_UNSUPPORTED)
		{
			e->push_local_off = true;	/* the two passes need no more memory */
			return PR_OK;
		}
		if (st != PR_OK)
			return st;
		e->report.push_local_bytes = pr_gpu_push_local_bytes(e->push_local);
		e->report.total_bytes += e->report.push_local_bytes;
	}
	st = pr_gpu_push_local_run(e->push_local, e->restart_dense, e->inv_out, e->fp64, e->k, alpha,
							   restart->ptr[restart->k], out, first, flags, e->stream, result, err);
	e->report.push_local_all += *result == PR_PUSH_ALL;
	e->report.push_local_first += *result == PR_PUSH_FIRST;
	return st;
}

/*
 * The warm start's local part r + alpha P r + alpha² P² r (see pr_engine.h): pushed along the
 * out-edge lists (restart_push_local), else in passes over the binned CSR that multiply only the
 * entries leaving flagged nodes (k_local_step) — the restart nodes, then their out-neighbours;
 * cheaper than two products, which gather every entry — or the first step pushed and the second
 * by such a pass, or by one product when it reaches at least local_product_entries entries.
 */
template <typename T>
static PrStatus
restart_local_typed(GpuEngine *e, int out_slot, int temp_slot, double alpha, const PrRestart *restart,
					PrError *err)
{
	int64_t		n = e->n;
	const T    *r;
	T		   *h1 = (T *) e->slots[temp_slot],
			   *out = (T *) e->slots[out_slot];
	uint32_t   *flags0,
			   *flags1;
	std::vector<double> coef((size_t) 3 * e->k);
	PrGpuPushResult pushed = PR_PUSH_NONE;
	PrStatus	st = ensure_restart<T>(e, restart, err);

	if (st != PR_OK)
		return st;
	if ((st = local_alloc<T>(e, err)) != PR_OK)
		return st;
	r = (const T *) e->restart_dense;
	flags0 = e->local_flags;
	flags1 = e->local_flags + n + 1;
	slot_written(e, temp_slot);
	slot_written(e, out_slot);
	if ((st = restart_push_local<T>(e, out, h1, flags1, alpha, restart, &pushed, err)) != PR_OK ||
		pushed == PR_PUSH_ALL)
		return st;
	if (pushed == PR_PUSH_NONE)
	{
		/* h1 = P r (flags1: the restart nodes' out-neighbours) */
		k_restart_flags<T><<<grid_for(n), PR_THREADS, 0, e->stream>>>(n, e->k, r, flags0);
		PR_LAUNCHED();
		PR_CUDA(local_step<T>(e, flags0, r, h1, flags1));
	}
	/* out = P h1 (h1 = alpha P r when the first step was pushed): one product when the second step
	 * reaches a large part of the graph (then a pass, which also reads every column id, would cost
	 * more), else a pass */
	if (pushed == PR_PUSH_FIRST &&
		pr_gpu_push_local_second_entries(e->push_local) >=
		(e->opt.local_product_entries > 0 ? e->opt.local_product_entries : e->m / 16))
	{
		if ((st = product_typed<T>(e, PR_PRODUCT_PULL_NORMALIZED, temp_slot, out_slot, err)) != PR_OK)
			return st;
		e->report.push_local_product++;
	}
	else
		PR_CUDA(local_step<T>(e, flags1, h1, out, flags0));
	for (int j = 0; j < e->k; j++)
	{
		coef[(size_t) j] = 1.0;
		coef[(size_t) e->k + j] = pushed == PR_PUSH_FIRST ? 1.0 : alpha;
		coef[(size_t) 2 * e->k + j] = pushed == PR_PUSH_FIRST ? alpha : alpha * alpha;
	}
	if ((st = upload_coef(e, coef.data(), 3, err)) != PR_OK)
		return st;
	k_combine<T><<<grid_for(n * e->k), PR_THREADS, 0, e->stream>>>(n * e->k, e->k, 3, r, h1, out, (const T *) NULL, e->coef_dev, out);
	PR_LAUNCHED();
	PR_CUDA(cudaStreamSynchronize(e->stream));	/* coef is freed on return */
	return PR_OK;
}

/* The restart_local operation: the binned CSR (every k > 1 engine), k <= 32, else unsupported. */
static PrStatus
gpu_restart_local(PrEngine *base, int out_slot, int temp_slot, double alpha, const PrRestart *restart,
				  PrError *err)
{
	GpuEngine  *e = (GpuEngine *) base;
	PrStatus	st;

	if ((st = check_slot(e, out_slot, err)) != PR_OK || (st = check_slot(e, temp_slot, err)) != PR_OK)
		return st;
	if (out_slot == temp_slot || restart == NULL || restart->uniform)
		return pr_error_set(err, PR_ERR_INVALID, "GPU engine: restart_local needs two slots and a restart that is not uniform");
	if (e->k > 32 || e->pull.kind != MATRIX_BINNED || e->pull.binned.ptr == NULL)
		return pr_error_set(err, PR_ERR_UNSUPPORTED, "GPU engine: restart_local needs the binned layout and at most 32 columns");
	if (e->n == 0)
		return PR_OK;
	return e->fp64 ? restart_local_typed<double>(e, out_slot, temp_slot, alpha, restart, err)
		: restart_local_typed<float>(e, out_slot, temp_slot, alpha, restart, err);
}

/* out = sum of coef[t * k + j] * slot_t per column (warm start). */
static PrStatus
gpu_combine(PrEngine *base, int out_slot, int n_terms, const int *slots, const double *coef, PrError *err)
{
	GpuEngine  *e = (GpuEngine *) base;
	PrStatus	st = check_slot(e, out_slot, err);
	const void *in[4] = {NULL, NULL, NULL, NULL};
	int64_t		total = e->n * e->k;

	if (st != PR_OK)
		return st;
	if (n_terms < 1 || n_terms > 4)
		return pr_error_set(err, PR_ERR_INVALID, "GPU engine: combine takes 1 to 4 slots, not %d", n_terms);
	for (int t = 0; t < n_terms; t++)
	{
		if ((st = check_slot(e, slots[t], err)) != PR_OK)
			return st;
		in[t] = e->slots[slots[t]];
	}
	if (total == 0)
		return PR_OK;
	if ((st = upload_coef(e, coef, n_terms, err)) != PR_OK)
		return st;
	slot_written(e, out_slot);
	if (e->fp64)
		k_combine<double><<<grid_for(total), PR_THREADS, 0, e->stream>>>(total, e->k, n_terms, (const double *) in[0], (const double *) in[1],
																	   (const double *) in[2], (const double *) in[3], e->coef_dev,
																	   (double *) e->slots[out_slot]);
	else
		k_combine<float><<<grid_for(total), PR_THREADS, 0, e->stream>>>(total, e->k, n_terms, (const float *) in[0], (const float *) in[1],
																	  (const float *) in[2], (const float *) in[3], e->coef_dev,
																	  (float *) e->slots[out_slot]);
	PR_LAUNCHED();
	PR_CUDA(cudaStreamSynchronize(e->stream));	/* coef is the caller's memory */
	return PR_OK;
}

/* Keeps column 0 of a slot as the far-field vector, or fills a slot with the kept one. */
static PrStatus
gpu_far_field(PrEngine *base, int slot, bool keep, bool *found, PrError *err)
{
	GpuEngine  *e = (GpuEngine *) base;
	PrStatus	st = check_slot(e, slot, err);

	if (st != PR_OK)
		return st;
	if (keep)
	{
		if (e->far_field == NULL && (st = dev_alloc(e, &e->far_field, (size_t) (e->n + 1) * e->elem, err)) != PR_OK)
			return st;
		if (e->n > 0)
		{
			if (e->fp64)
				k_take_column0<double><<<grid_for(e->n), PR_THREADS, 0, e->stream>>>(e->n, e->k, (const double *) e->slots[slot], (double *) e->far_field);
			else
				k_take_column0<float><<<grid_for(e->n), PR_THREADS, 0, e->stream>>>(e->n, e->k, (const float *) e->slots[slot], (float *) e->far_field);
			PR_LAUNCHED();
		}
		*found = true;
		return PR_OK;
	}
	*found = e->far_field != NULL;
	if (!*found || e->n == 0)
		return PR_OK;
	slot_written(e, slot);
	if (e->fp64)
		k_broadcast_columns<double><<<grid_for(e->n * e->k), PR_THREADS, 0, e->stream>>>(e->n, e->k, (const double *) e->far_field, (double *) e->slots[slot]);
	else
		k_broadcast_columns<float><<<grid_for(e->n * e->k), PR_THREADS, 0, e->stream>>>(e->n, e->k, (const float *) e->far_field, (float *) e->slots[slot]);
	PR_LAUNCHED();
	return PR_OK;
}

/* Frees the engine. */
static void
gpu_release(PrEngine *base)
{
	GpuEngine  *e = (GpuEngine *) base;

	if (e == NULL)
		return;
	cudaStreamSynchronize(e->stream);
	engine_free_device(e);
	if (e->sp_ready)
		cusparseDestroy(e->sp);
	cudaStreamDestroy(e->stream);
	delete e;
}

/* Creates the engine on the requested device. */
PrEngine *
pr_gpu_engine_create(const PrGpuOptions *opts, PrError *err)
{
	GpuEngine  *e;
	PrGpuOptions defaults;
	int			count = 0;
	cudaError_t c;

	if (opts == NULL)
	{
		pr_gpu_options_init(&defaults);
		opts = &defaults;
	}
	c = cudaGetDeviceCount(&count);
	if (c != cudaSuccess || count == 0)
	{
		pr_error_set(err, PR_ERR_ENGINE, "GPU engine: no CUDA device (%s)",
					 c != cudaSuccess ? cudaGetErrorString(c) : "none found");
		return NULL;
	}
	if (opts->device < 0 || opts->device >= count)
	{
		pr_error_set(err, PR_ERR_INVALID, "GPU engine: device %d does not exist (%d found)", opts->device, count);
		return NULL;
	}
	e = new (std::nothrow) GpuEngine();
	if (e == NULL)
	{
		pr_error_set(err, PR_ERR_NOMEM, "GPU engine: out of host memory");
		return NULL;
	}
	e->opt = *opts;
	e->fp64 = opts->precision == PR_GPU_FP64;
	e->elem = e->fp64 ? 8 : 4;
	e->opt.model_text = NULL;
	{
		PrError		merr;

		e->have_model = pr_model_parse(opts->model_text ? opts->model_text : pr_gpu_model_h100,
									   &e->model, &merr) == PR_OK && e->model.n_entries > 0;
	}
	if ((c = cudaSetDevice(opts->device)) != cudaSuccess ||
		(c = cudaStreamCreateWithFlags(&e->stream, cudaStreamNonBlocking)) != cudaSuccess)
	{
		pr_error_set(err, PR_ERR_ENGINE, "GPU engine: cannot start device %d: %s", opts->device, cudaGetErrorString(c));
		delete e;
		return NULL;
	}
	if (cusparseCreate(&e->sp) != CUSPARSE_STATUS_SUCCESS || cusparseSetStream(e->sp, e->stream) != CUSPARSE_STATUS_SUCCESS)
	{
		pr_error_set(err, PR_ERR_ENGINE, "GPU engine: cusparseCreate failed");
		cudaStreamDestroy(e->stream);
		delete e;
		return NULL;
	}
	e->sp_ready = true;
	e->ops.name = "gpu";
	e->ops.prepare = gpu_prepare;
	e->ops.fill = gpu_fill;
	e->ops.upload = gpu_upload;
	e->ops.download = gpu_download;
	e->ops.product = gpu_product;
	e->ops.pagerank_update = gpu_pagerank_update;
	e->ops.normalize = gpu_normalize;
	e->ops.residual = gpu_residual;
	e->ops.release = gpu_release;
	e->ops.top_k = gpu_top_k;
	e->ops.top_k_columns = gpu_top_k_columns;
	e->ops.restart_fill = gpu_restart_fill;
	e->ops.column_sums = gpu_column_sums;
	e->ops.combine = gpu_combine;
	e->ops.far_field = gpu_far_field;
	e->ops.restart_local = gpu_restart_local;
	e->base.ops = &e->ops;
	return &e->base;
}

/* Copies the report of a prepared engine. */
PrStatus
pr_gpu_engine_report(PrEngine *engine, PrGpuReport *out, PrError *err)
{
	GpuEngine  *e = (GpuEngine *) engine;

	if (e == NULL || !e->prepared)
		return pr_error_set(err, PR_ERR_INVALID, "GPU engine: not prepared");
	*out = e->report;
	return PR_OK;
}

/* The engine's stream. */
void *
pr_gpu_engine_stream(PrEngine *engine)
{
	return (void *) ((GpuEngine *) engine)->stream;
}
