/*
 * pr_gpu.cu — the GPU engine: PrEngineOps on one CUDA device (see pr_gpu.h): creation and release,
 * the operations on vector slots (fill, copies, products, updates, reductions, the warm start);
 * prepare is in pr_gpu_prepare.cu, the sparse matrices' upload and product in pr_gpu_matrix.cu.
 *
 * Layout: nodes in the private order (by out-degree, natural, or hubs first: pr_gpu_prepare.cu);
 * the pull matrix in the planned format (tile-composite, row-binned, ALIGNED_COO or cuSPARSE CSR);
 * vector slots of (n+1) x k values in the private order whose last row is a zero row that padding
 * entries read.  The normalized product reads z = x / out_strength, written by the previous
 * PageRank update (fused) or by a scale kernel, so the matrix carries no values when unweighted.
 */
#include "pr_gpu_engine.h"
#include "pr_gpu_slot.h"
#include "pr_gpu_streamed.h"
#include "pr_gpu_launch.h"
#include "pr_gpu_buffer.h"
#include "pr_gpu_update_kernels.cuh"
#include "pr_gpu_vector_kernels.cuh"
#include "pr_gpu_local_kernels.cuh"

#include <cub/device/device_select.cuh>
#include <cuda_runtime.h>
#include <cusparse.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

/* Default settings. */
void
pr_gpu_options_init(PrGpuOptions *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->device = 0;
	opts->precision = PR_GPU_FP64;	/* as powerrank.gpu_precision's default */
	opts->kernel = PR_GPU_KERNEL_AUTO;
	opts->order = PR_GPU_ORDER_DEGREE;
}

/* The settings beyond PrGpuOptions that every engine of the product runs with. */
void
pr_gpu_bench_options_init(PrGpuBenchOptions *bench)
{
	memset(bench, 0, sizeof(*bench));
	bench->measure_reps = 5;
	bench->chunk = 4096;
	bench->n_smem_tiles = -1;
	bench->smem_width = 0;
	bench->compact_partials = -1;
	bench->plan_threads = 0;
	bench->push_local = true;
	bench->residency = PR_GPU_RESIDENCY_AUTO;
	bench->delta_fold_edges = 4096;
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
 * Allocates device memory tracked in list for release (the engine's or a matrix's) and counted in
 * report.total_bytes (which prepare then sets to its whole plan; later allocations — more slots,
 * the warm start's arrays — add up).
 */
PrStatus
gpu_dev_alloc_in(GpuEngine *e, std::vector<void *> *list, void **out, size_t bytes, PrError *err)
{
	cudaError_t st = cudaMalloc(out, bytes == 0 ? 16 : bytes);

	if (st != cudaSuccess)
	{
		*out = NULL;
		cudaGetLastError();
		return pr_error_set(err, PR_ERR_NOMEM, "GPU engine: cannot allocate %zu bytes of device memory: %s",
							bytes, cudaGetErrorString(st));
	}
	list->push_back(*out);
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

/*
 * A mixed step's vector work against a plain step (PrEngineOps.mixed_step_cost), from the H200's
 * figures on an 8.4 M-node locality graph, fp32, one column: a plain step is the product and the
 * update (0.275 + 0.066 ms plus the residual read), a mixed step adds f = g - x, the dots with
 * their read-back, the combination and the mixed x's rescaling (0.33 ms): 0.9.  The whole runs
 * give the same (the time a mixed step adds over a plain one): PageRank fp32 0.93, fp64 0.90;
 * RWR of 8 columns fp32 0.87, fp64 0.70; HITS fp32 0.74.  One figure for every k and precision.
 */
#define PR_GPU_MIXED_STEP_COST 0.9

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
PrStatus
gpu_dev_upload_in(GpuEngine *e, std::vector<void *> *list, void **out, const void *host, size_t bytes,
				  PrError *err)
{
	PrStatus	st = gpu_dev_alloc_in(e, list, out, bytes, err);

	if (st != PR_OK)
		return st;
	if (bytes >= PR_STAGED_UPLOAD_BYTES)
		return pr_gpu_copy_to_device(e->opt.device, *out, host, bytes, pr_thread_count(0, 16), err);
	if (bytes > 0)
		PR_CUDA(cudaMemcpy(*out, host, bytes, cudaMemcpyHostToDevice));
	return PR_OK;
}

/* Device memory owned by the engine (freed with it). */
PrStatus
gpu_dev_alloc(GpuEngine *e, void **out, size_t bytes, PrError *err)
{
	return gpu_dev_alloc_in(e, &e->allocs, out, bytes, err);
}

/* Device memory owned by the engine, filled from the host. */
PrStatus
gpu_dev_upload(GpuEngine *e, void **out, const void *host, size_t bytes, PrError *err)
{
	return gpu_dev_upload_in(e, &e->allocs, out, host, bytes, err);
}

/* Grid size for a grid-stride loop over count items. */
static unsigned int
grid_for(int64_t count)
{
	return pr_grid_blocks(count, PR_THREADS, 132 * 16);
}

/* Frees everything the engine allocated on the device (keeps the engine). */
void
gpu_engine_free_device(GpuEngine *e)
{
	gpu_streamed_free(e);
	gpu_matrix_free(&e->pull);
	gpu_matrix_free(&e->pull_raw);
	gpu_matrix_free(&e->push);
	gpu_delta_free_device(e);
	for (void *p : e->allocs)
		cudaFree(p);
	e->allocs.clear();
	/* every pointer into allocs: a later prepare allocates what is NULL and must not reuse freed memory */
	e->new_to_old = NULL;
	e->inv_out = NULL;
	e->z = NULL;
	e->stage = NULL;
	e->partials = NULL;
	e->counter = NULL;
	e->stats = NULL;
	e->restart_dense = NULL;
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
	e->natural_order = false;
	e->prepared = false;
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

/* Checks a slot number and makes the engine's device current. */
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

/*
 * Makes the engine's device the calling thread's current one: every operation that runs CUDA
 * starts with it, as engines on several GPUs take turns on one thread (pr_multi.h).
 */
static PrStatus
use_device(GpuEngine *e, PrError *err)
{
	PR_CUDA(cudaSetDevice(e->opt.device));
	return PR_OK;
}

/* Checks a slot number and makes the engine's device current (use_device). */
static PrStatus
check_slot(GpuEngine *e, int slot, PrError *err)
{
	if (!e->prepared)
		return pr_error_set(err, PR_ERR_INVALID, "GPU engine: not prepared");
	if (slot < 0 || slot >= e->n_slots)
		return pr_error_set(err, PR_ERR_INVALID, "GPU engine: no vector slot %d", slot);
	return use_device(e, err);
}

/* Checks the input and output slots of an operation (input first) and that they differ; what
 * names the operation in the error. */
static PrStatus
check_in_out_slots(GpuEngine *e, int in_slot, int out_slot, const char *what, PrError *err)
{
	PrStatus	st = check_slot(e, in_slot, err);

	if (st == PR_OK)
		st = check_slot(e, out_slot, err);
	if (st == PR_OK && in_slot == out_slot)
		return pr_error_set(err, PR_ERR_INVALID, "GPU engine: %s in place (slot %d)", what, in_slot);
	return st;
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
	PrStatus	st;

	if (product == PR_PRODUCT_PULL_NORMALIZED)
	{
		mat = &e->pull;
		if (mat->kind != MATRIX_CUSPARSE)
		{
			if (e->z_owner != x_slot)
			{
				int64_t		total = e->n * e->k;

				k_scale<T><<<grid_for(total), PR_THREADS, 0, e->stream>>>(e->n, e->k, (const T *) e->slots[x_slot],
																	  (const T *) e->inv_out, e->rows_owned, (T *) e->z);
				PR_LAUNCHED();
				e->z_owner = x_slot;
				e->z_whole = true;
			}
			else if (!e->z_whole)
				return pr_error_set(err, PR_ERR_ENGINE,
									"GPU engine: a product of slot %d, whose scaled copy holds only the owned rows (exchange it first)",
									x_slot);
			in = e->z;
		}
	}
	else if (product == PR_PRODUCT_PULL)
		mat = e->pull.kind == MATRIX_CUSPARSE ? &e->pull_raw : &e->pull;
	else
		mat = &e->push;
	if (e->streamer != NULL)
	{
		slot_written(e, y_slot);
		return gpu_streamed_run<T>(e, product == PR_PRODUCT_PUSH, in, e->slots[y_slot], err);
	}
	if (mat->kind == MATRIX_NONE)
		return pr_error_set(err, PR_ERR_UNSUPPORTED, "GPU engine: product %d was not asked for in prepare", (int) product);
	slot_written(e, y_slot);
	if ((st = gpu_matrix_run<T>(e, mat, in, e->slots[y_slot], err)) != PR_OK)
		return st;
	return gpu_delta_add<T>(e, product, in, e->slots[y_slot], err);
}

/* The product operation. */
static PrStatus
gpu_product(PrEngine *base, PrProduct product, int x_slot, int y_slot, PrError *err)
{
	GpuEngine  *e = (GpuEngine *) base;
	PrStatus	st = check_in_out_slots(e, x_slot, y_slot, "product", err);

	if (st != PR_OK)
		return st;
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
		(st = gpu_dev_alloc(e, &e->restart_dense, (size_t) total * e->elem, err)) != PR_OK)
		return st;
	if (e->restart_pos == NULL &&
		((st = gpu_dev_alloc(e, (void **) &e->restart_pos, (size_t) PR_SPARSE_RESTART * 8, err)) != PR_OK ||
		 (st = gpu_dev_alloc(e, (void **) &e->restart_w, (size_t) PR_SPARSE_RESTART * 8, err)) != PR_OK))
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
	int64_t		n_uniform = n - (int64_t) e->delta_absent.size();	/* a delta's absent nodes take no restart */
	int64_t		row_begin = e->rows_owned ? e->own_begin : 0;
	int64_t		row_end = e->rows_owned ? e->own_end : n;

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
		/* with rows owned, x's scaled copy (made whole by an exchange) holds its dangling values */
		bool		from_z = e->rows_owned && e->z_owner == x_slot && e->pull.kind != MATRIX_CUSPARSE;
		int64_t		first = from_z && e->dangling_tail >= 0 ? e->dangling_tail : 0;

		if (from_z && !e->z_whole)
			return pr_error_set(err, PR_ERR_ENGINE,
								"GPU engine: an update from slot %d, whose scaled copy holds only the owned rows (exchange it first)",
								x_slot);
		if (from_z && e->dangling_tail < 0)	/* dangling rows spread over the order: read z there only */
			k_column_sums<T, true><<<PR_RED_BLOCKS, PR_THREADS, 0, e->stream>>>(n, e->k, (const T *) e->z, (const T *) e->inv_out,
																			  e->partials, e->counter, stats_at(e, x_slot));
		else
			k_column_sums<T><<<PR_RED_BLOCKS, PR_THREADS, 0, e->stream>>>(n - first, e->k, (const T *) (from_z ? e->z : e->slots[x_slot]) + first * e->k,
																		(const T *) e->inv_out + first, e->partials, e->counter,
																		stats_at(e, x_slot));
		PR_LAUNCHED();
		e->dangling_valid[x_slot] = true;
	}
	slot_written(e, y_slot);
	if (e->k % UPDATE_V(T) == 0 && pr_is_pow2(e->k / UPDATE_V(T)))
	{
		/* 16-byte accesses; a restart with few non-zeros from its list, not the dense matrix */
		bool		sparse = r != NULL && e->restart_n >= 0;

		k_pagerank_update_vec<T, UPDATE_V(T)><<<PR_RED_BLOCKS, PR_THREADS, 0, e->stream>>>(n_uniform, row_begin, row_end, e->k, (T *) e->slots[y_slot],
																						(const T *) e->slots[x_slot],
																						(const T *) e->inv_out, sparse ? (const T *) NULL : r,
																						e->restart_pos, e->restart_w, sparse ? e->restart_n : -1,
																						alpha, stats_at(e, x_slot) + 2, 3, e->rows_owned,
																						e->pull.kind == MATRIX_CUSPARSE ? (T *) NULL : (T *) e->z,
																						e->partials, e->counter, stats_at(e, y_slot));
	}
	else
		k_pagerank_update<T><<<PR_RED_BLOCKS, PR_THREADS, 0, e->stream>>>(n_uniform, row_begin, row_end, e->k, (T *) e->slots[y_slot],
																		(const T *) e->slots[x_slot], (const T *) e->inv_out, r, alpha,
																		stats_at(e, x_slot) + 2, 3, e->rows_owned,
																		e->pull.kind == MATRIX_CUSPARSE ? (T *) NULL : (T *) e->z,
																		e->partials, e->counter, stats_at(e, y_slot));
	PR_LAUNCHED();
	e->dangling_valid[y_slot] = !e->rows_owned;	/* owned rows: the dangling mass of those alone */
	if (e->pull.kind != MATRIX_CUSPARSE)
	{
		e->z_owner = y_slot;
		e->z_whole = !e->rows_owned;
	}
	e->resid_index = y_slot;
	return PR_OK;
}

/* The pagerank_update operation. */
static PrStatus
gpu_pagerank_update(PrEngine *base, int y_slot, int x_slot, double alpha, const PrRestart *restart,
					PrError *err)
{
	GpuEngine  *e = (GpuEngine *) base;
	PrStatus	st = check_in_out_slots(e, x_slot, y_slot, "update", err);

	if (st != PR_OK)
		return st;
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
	PrStatus	st;

	if (!e->prepared)
		return pr_error_set(err, PR_ERR_INVALID, "GPU engine: not prepared");
	if (e->resid_index < 0)
		return pr_error_set(err, PR_ERR_INVALID, "GPU engine: no residual yet");
	if ((st = use_device(e, err)) != PR_OK)
		return st;
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

	if (e->coef_dev == NULL && (st = gpu_dev_alloc(e, (void **) &e->coef_dev, (size_t) PR_COMBINE_MAX_TERMS * e->k * 8, err)) != PR_OK)
		return st;
	/* pageable source: the copy is done before cudaMemcpyAsync returns */
	PR_CUDA(cudaMemcpyAsync(e->coef_dev, coef, (size_t) n_terms * e->k * 8, cudaMemcpyHostToDevice, e->stream));
	return PR_OK;
}

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
	if ((st = gpu_dev_alloc(e, (void **) &e->local_marked, (size_t) (n_rows + 1) * 4, err)) != PR_OK ||
		(st = gpu_dev_alloc(e, (void **) &e->local_count, 8, err)) != PR_OK ||
		(st = gpu_dev_alloc(e, &e->local_temp, e->local_temp_bytes + 1, err)) != PR_OK)
		return st;
	return gpu_dev_alloc(e, (void **) &e->local_flags, (size_t) (2 * (e->n + 1) + (e->n + 31) / 32) * 4, err);
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
	if (!e->bench.push_local || e->push_local_off)
		return PR_OK;
	if (e->push_local == NULL)
	{
		st = pr_gpu_push_local_create(bm.ptr, bm.col, e->pull.has_val ? bm.val : NULL, e->n, e->m,
									  e->bench.push_local_cap, e->stream, &e->push_local, err);
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
		(e->bench.local_product_entries > 0 ? e->bench.local_product_entries : e->m / 16))
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
	{
		CombineTerms<T> terms = {{r, h1, out}};

		CombineInline none;

		memset(&none, 0, sizeof(none));
		k_combine<T><<<grid_for(n * e->k), PR_THREADS, 0, e->stream>>>(n * e->k, e->k, 3, terms, e->coef_dev, none, out);
	}
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
	if (gpu_delta_active(e))	/* its out-edge lists and marks are the prepared graph's */
		return pr_error_set(err, PR_ERR_UNSUPPORTED, "GPU engine: restart_local follows no delta");
	if (e->n == 0)
		return PR_OK;
	return e->fp64 ? restart_local_typed<double>(e, out_slot, temp_slot, alpha, restart, err)
		: restart_local_typed<float>(e, out_slot, temp_slot, alpha, restart, err);
}

/* Checks the terms of a combine / dots call: 1 to PR_COMBINE_MAX_TERMS valid slots. */
static PrStatus
check_terms(GpuEngine *e, int n_terms, const int *slots, PrError *err)
{
	PrStatus	st;

	if (n_terms < 1 || n_terms > PR_COMBINE_MAX_TERMS)
		return pr_error_set(err, PR_ERR_INVALID, "GPU engine: combine and dots take 1 to %d slots, not %d",
							PR_COMBINE_MAX_TERMS, n_terms);
	for (int t = 0; t < n_terms; t++)
		if ((st = check_slot(e, slots[t], err)) != PR_OK)
			return st;
	return PR_OK;
}

/*
 * out = sum of coef[t * k + j] * slot_t per column, in type T: the coefficients by value when they
 * are few (no copy, no synchronisation), else copied to coef_dev.
 */
template <typename T>
static PrStatus
combine_typed(GpuEngine *e, int out_slot, int n_terms, const int *slots, const double *coef, PrError *err)
{
	CombineTerms<T> terms;
	CombineInline inl;
	int64_t		total = e->n * e->k;
	const double *coef_dev = NULL;
	PrStatus	st;

	for (int t = 0; t < PR_COMBINE_MAX_TERMS; t++)
		terms.in[t] = t < n_terms ? (const T *) e->slots[slots[t]] : (const T *) NULL;
	memset(&inl, 0, sizeof(inl));
	if ((int64_t) n_terms * e->k <= PR_COMBINE_INLINE)
		memcpy(inl.c, coef, sizeof(double) * (size_t) n_terms * e->k);
	else
	{
		/* a pageable source: cudaMemcpyAsync returns once coef is copied out, the caller may reuse it */
		if ((st = upload_coef(e, coef, n_terms, err)) != PR_OK)
			return st;
		coef_dev = e->coef_dev;
	}
	k_combine<T><<<grid_for(total), PR_THREADS, 0, e->stream>>>(total, e->k, n_terms, terms, coef_dev, inl,
															  (T *) e->slots[out_slot]);
	PR_LAUNCHED();
	return PR_OK;
}

/* out = sum of coef[t * k + j] * slot_t per column (warm start, accelerated iteration). */
static PrStatus
gpu_combine(PrEngine *base, int out_slot, int n_terms, const int *slots, const double *coef, PrError *err)
{
	GpuEngine  *e = (GpuEngine *) base;
	PrStatus	st = check_slot(e, out_slot, err);

	if (st != PR_OK || (st = check_terms(e, n_terms, slots, err)) != PR_OK)
		return st;
	if (e->n * e->k == 0)
		return PR_OK;
	slot_written(e, out_slot);
	return e->fp64 ? combine_typed<double>(e, out_slot, n_terms, slots, coef, err)
		: combine_typed<float>(e, out_slot, n_terms, slots, coef, err);
}

/* Per column: the dot products of a slot with n_terms slots, into stats[n_slots + 2]. */
template <typename T>
static PrStatus
dots_typed(GpuEngine *e, int a_slot, int n_terms, const int *slots, PrError *err)
{
	CombineTerms<T> terms;

	for (int t = 0; t < PR_COMBINE_MAX_TERMS; t++)
		terms.in[t] = t < n_terms ? (const T *) e->slots[slots[t]] : (const T *) NULL;
	k_dots<T><<<PR_RED_BLOCKS, PR_THREADS, 0, e->stream>>>(e->n, e->k, n_terms, (const T *) e->slots[a_slot], terms,
														 e->partials, e->counter, stats_at(e, e->n_slots + 2));
	PR_LAUNCHED();
	return PR_OK;
}

/* Dot products of a slot with each of n_terms slots, per column (accelerated iteration). */
static PrStatus
gpu_dots(PrEngine *base, int a_slot, int n_terms, const int *slots, double *out, PrError *err)
{
	GpuEngine  *e = (GpuEngine *) base;
	PrStatus	st = check_slot(e, a_slot, err);
	std::vector<double> host;

	if (st != PR_OK || (st = check_terms(e, n_terms, slots, err)) != PR_OK)
		return st;
	host.assign((size_t) n_terms * e->k, 0.0);
	if (e->n > 0)
	{
		st = e->fp64 ? dots_typed<double>(e, a_slot, n_terms, slots, err)
			: dots_typed<float>(e, a_slot, n_terms, slots, err);
		if (st != PR_OK)
			return st;
		PR_CUDA(cudaMemcpyAsync(host.data(), stats_at(e, e->n_slots + 2), host.size() * 8,
								cudaMemcpyDeviceToHost, e->stream));
		PR_CUDA(cudaStreamSynchronize(e->stream));
	}
	for (int t = 0; t < n_terms; t++)
		for (int j = 0; j < e->k; j++)
			out[(size_t) t * e->k + j] = host[(size_t) j * n_terms + t];
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
		if (e->far_field == NULL && (st = gpu_dev_alloc(e, &e->far_field, (size_t) (e->n + 1) * e->elem, err)) != PR_OK)
			return st;
		if (e->n > 0)
		{
			if (e->fp64)
				k_take_column0<double><<<grid_for(e->n), PR_THREADS, 0, e->stream>>>(e->n, e->k, (const double *) e->slots[slot], (double *) e->far_field);
			else
				k_take_column0<float><<<grid_for(e->n), PR_THREADS, 0, e->stream>>>(e->n, e->k, (const float *) e->slots[slot], (float *) e->far_field);
			PR_LAUNCHED();
		}
		e->far_field_stale = false;
		*found = true;
		return PR_OK;
	}
	*found = e->far_field != NULL && !e->far_field_stale;
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
	cudaSetDevice(e->opt.device);
	cudaStreamSynchronize(e->stream);
	gpu_engine_free_device(e);
	gpu_delta_forget(e);
	if (e->sp_ready)
		cusparseDestroy(e->sp);
	cudaStreamDestroy(e->stream);
	delete e;
}

/* Creates the engine on the requested device. */
PrEngine *
pr_gpu_engine_create(const PrGpuOptions *opts, PrError *err)
{
	return pr_gpu_bench_engine_create(opts, NULL, err);
}

/*
 * The first row of the prepared graph's dangling nodes when they are its last rows (n when it has
 * none), else -1: the rows an update of owned rows sums the dangling mass over.
 */
static int64_t
dangling_tail(const GpuEngine *e)
{
	const PrGraph *g = e->prep_graph;

	if (g->n_dangling == 0)
		return e->n;
	return g->dangling[0] == e->n - g->n_dangling ? e->n - g->n_dangling : -1;
}

/* Owns rows [begin, end) for the updates until the next prepare (see pr_engine.h). */
static PrStatus
gpu_own_rows(PrEngine *base, int64_t begin, int64_t end, PrError *err)
{
	GpuEngine  *e = (GpuEngine *) base;

	if (!e->prepared)
		return pr_error_set(err, PR_ERR_INVALID, "GPU engine: not prepared");
	if (begin < 0 || begin > end || end > e->n)
		return pr_error_set(err, PR_ERR_INVALID, "GPU engine: rows [%lld, %lld) to own of %lld", (long long) begin,
							(long long) end, (long long) e->n);
	e->z_owner = -1;			/* its dangling rows may not hold the values an owned update needs */
	if (begin == 0 && end == e->n)
	{
		e->rows_owned = false;
		return PR_OK;
	}
	if (!e->natural_order)
		return pr_error_set(err, PR_ERR_UNSUPPORTED, "GPU engine: rows to own in an order of its own");
	if (gpu_delta_active(e))
		return pr_error_set(err, PR_ERR_UNSUPPORTED, "GPU engine: rows to own beside a delta");
	e->rows_owned = true;
	e->own_begin = begin;
	e->own_end = end;
	e->dangling_tail = dangling_tail(e);
	return PR_OK;
}

/* Creates the engine on the requested device with the benchmark's or a test's further settings. */
PrEngine *
pr_gpu_bench_engine_create(const PrGpuOptions *opts, const PrGpuBenchOptions *bench, PrError *err)
{
	GpuEngine  *e;
	PrGpuOptions defaults;
	PrGpuBenchOptions bench_defaults;
	int			count = 0;
	cudaError_t c;

	if (opts == NULL)
	{
		pr_gpu_options_init(&defaults);
		opts = &defaults;
	}
	if (bench == NULL)
	{
		pr_gpu_bench_options_init(&bench_defaults);
		bench = &bench_defaults;
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
	e->bench = *bench;
	e->fp64 = opts->precision == PR_GPU_FP64;
	e->elem = e->fp64 ? 8 : 4;
	e->bench.model_text = NULL;
	{
		PrError		merr;

		e->have_model = pr_model_parse(bench->model_text ? bench->model_text : pr_gpu_model_h100,
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
	e->ops.unit_roundoff = ldexp(1.0, e->fp64 ? -53 : -24);
	e->ops.mixed_step_cost = PR_GPU_MIXED_STEP_COST;
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
	e->ops.dots = gpu_dots;
	e->ops.far_field = gpu_far_field;
	e->ops.own_rows = gpu_own_rows;
	e->ops.restart_local = gpu_restart_local;
	e->ops.apply_delta = gpu_apply_delta;
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
	out->delta_frozen_edges = (int64_t) e->delta_frozen.edges.size();
	out->delta_recent_edges = (int64_t) e->delta_recent.edges.size();
	out->delta_folds = e->delta_folds;
	return PR_OK;
}

/* The engine's stream. */
void *
pr_gpu_engine_stream(PrEngine *engine)
{
	return (void *) ((GpuEngine *) engine)->stream;
}

/* Describes a slot of a prepared engine for the multi-GPU exchange (pr_gpu_slot.h). */
PrStatus
pr_gpu_engine_slot(PrEngine *engine, int slot, PrGpuSlotView *out, PrError *err)
{
	GpuEngine  *e = (GpuEngine *) engine;
	PrStatus	st;

	if (engine == NULL || engine->ops->prepare != gpu_prepare)
		return pr_error_set(err, PR_ERR_INVALID, "GPU engine: not a GPU engine");
	if ((st = check_slot(e, slot, err)) != PR_OK)
		return st;
	out->device = e->opt.device;
	out->stream = e->stream;
	out->data = e->slots[slot];
	out->elem = e->elem;
	out->n = e->n;
	out->k = e->k;
	out->new_to_old = e->natural_order ? NULL : e->new_to_old;
	return PR_OK;
}

/* Describes what a normalized pull product reads of slot when an exchange should move it (pr_gpu_slot.h). */
PrStatus
pr_gpu_engine_product_input(PrEngine *engine, int slot, PrGpuSlotView *out, bool *scaled, PrError *err)
{
	GpuEngine  *e = (GpuEngine *) engine;
	PrStatus	st = pr_gpu_engine_slot(engine, slot, out, err);

	*scaled = false;
	if (st != PR_OK)
		return st;
	if (e->rows_owned && e->z_owner == slot && !e->z_whole && e->pull.kind != MATRIX_CUSPARSE)
	{
		out->data = e->z;
		*scaled = true;
	}
	return PR_OK;
}

/* An exchange completed the rows of slot's scaled copy (pr_gpu_slot.h). */
void
pr_gpu_engine_product_input_changed(PrEngine *engine, int slot)
{
	GpuEngine  *e = (GpuEngine *) engine;

	if (engine != NULL && engine->ops->prepare == gpu_prepare && e->prepared && slot >= 0 && slot < e->n_slots &&
		e->z_owner == slot)
	{
		e->z_whole = true;
		e->dangling_valid[slot] = false;	/* the whole mass, from z, at the next update */
	}
}

/* Forgets what the engine keeps about a slot that the exchange rewrites (pr_gpu_slot.h). */
void
pr_gpu_engine_slot_changed(PrEngine *engine, int slot)
{
	GpuEngine  *e = (GpuEngine *) engine;

	if (engine != NULL && engine->ops->prepare == gpu_prepare && e->prepared && slot >= 0 && slot < e->n_slots)
		slot_written(e, slot);
}
