/*
 * pr_gpu_topk.cu — the top_k best entries of one column of a device vector (see pr_gpu_topk.h).
 *
 * Three steps on the caller's stream: a scatter kernel writes, for every internal id, the
 * order-preserving unsigned key of its score and its private position; cub::DeviceRadixSort sorts
 * the (key, position) pairs descending — stable, and the input is in id order, so equal scores
 * stay ordered by id; a gather kernel turns the first top_k positions into (id, value) pairs, which
 * are copied to the host.  The sort covers all n keys whatever top_k is: about n x 8 bytes read and
 * written per radix pass (4 passes in fp32), a few hundred microseconds for 9 M nodes on an H100,
 * against ~70 MB of device-to-host copy for the whole vector in double.
 */
#include "pr_gpu_topk.h"

#include <cuda_runtime.h>
#include <cub/device/device_radix_sort.cuh>

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Threads per block of the two kernels. */
#define TOPK_THREADS 256

/* Most blocks of a grid-stride kernel. */
#define TOPK_MAX_BLOCKS 4096

/* Records a failed CUDA call in err and returns its status from the enclosing function. */
#define TOPK_CUDA(call) do { \
	cudaError_t topk_status_ = (call); \
	if (topk_status_ != cudaSuccess) \
		return pr_error_set(err, topk_status_ == cudaErrorMemoryAllocation ? PR_ERR_NOMEM : PR_ERR_ENGINE, \
							"GPU top-k: %s failed: %s (%s:%d)", #call, \
							cudaGetErrorString(topk_status_), __FILE__, __LINE__); \
} while (0)

/* One device buffer and its size in bytes. */
typedef struct TopkBuffer
{
	void	   *ptr;
	size_t		bytes;
} TopkBuffer;

/* The scratch memory (see pr_gpu_topk.h). */
struct PrGpuTopkWorkspace
{
	TopkBuffer	keys[2];		/* sort keys, double-buffered */
	TopkBuffer	pos[2];			/* private positions, double-buffered */
	TopkBuffer	temp;			/* CUB's temporary storage */
	TopkBuffer	out;			/* top_k ids, then top_k values (8-byte aligned) */
};

/* Key of a float that orders like the host ranking: NaN lowest, -0 = +0, then by value. */
__device__ __forceinline__ uint32_t
topk_order_key(float v)
{
	uint32_t	u = __float_as_uint(v);

	if ((u & 0x7fffffffu) > 0x7f800000u)
		return 0u;				/* NaN: after every number */
	if ((u & 0x7fffffffu) == 0u)
		u = 0u;					/* -0 ties with +0 */
	return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

/* The same for a double. */
__device__ __forceinline__ uint64_t
topk_order_key(double v)
{
	uint64_t	u = (uint64_t) __double_as_longlong(v);
	const uint64_t sign = 0x8000000000000000ull;
	const uint64_t inf = 0x7ff0000000000000ull;

	if ((u & ~sign) > inf)
		return 0ull;
	if ((u & ~sign) == 0ull)
		u = 0ull;
	return (u & sign) ? ~u : (u | sign);
}

/* keys[id] = key of x[p][col], pos[id] = p, for every private position p (id = new_to_old[p]). */
template <typename T, typename K>
__global__ void
k_topk_scatter(int64_t n, int k_cols, int col, const T *__restrict__ x,
			   const int32_t *__restrict__ new_to_old, K *__restrict__ keys,
			   int32_t *__restrict__ pos)
{
	for (int64_t p = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; p < n;
		 p += (int64_t) gridDim.x * blockDim.x)
	{
		int32_t		id = new_to_old[p];

		keys[id] = topk_order_key(x[p * k_cols + col]);
		pos[id] = (int32_t) p;
	}
}

/* The first count sorted positions as (internal id, value) pairs. */
template <typename T>
__global__ void
k_topk_gather(int64_t count, int k_cols, int col, const T *__restrict__ x,
			  const int32_t *__restrict__ new_to_old, const int32_t *__restrict__ sorted_pos,
			  int32_t *__restrict__ out_index, double *__restrict__ out_value)
{
	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < count;
		 i += (int64_t) gridDim.x * blockDim.x)
	{
		int64_t		p = sorted_pos[i];

		out_index[i] = new_to_old[p];
		out_value[i] = (double) x[p * k_cols + col];
	}
}

/* Blocks of a grid-stride launch over items. */
static unsigned int
topk_grid(int64_t items)
{
	int64_t		blocks = (items + TOPK_THREADS - 1) / TOPK_THREADS;

	if (blocks < 1)
		blocks = 1;
	return (unsigned int) (blocks < TOPK_MAX_BLOCKS ? blocks : TOPK_MAX_BLOCKS);
}

/* Makes buf at least bytes long (its old content is dropped when it grows). */
static PrStatus
topk_reserve(TopkBuffer *buf, size_t bytes, PrError *err)
{
	if (buf->bytes >= bytes && buf->ptr != NULL)
		return PR_OK;
	if (buf->ptr != NULL)
	{
		void	   *old = buf->ptr;

		buf->ptr = NULL;
		buf->bytes = 0;
		TOPK_CUDA(cudaFree(old));
	}
	TOPK_CUDA(cudaMalloc(&buf->ptr, bytes > 0 ? bytes : 16));
	buf->bytes = bytes;
	return PR_OK;
}

/* Frees one buffer; the first failure goes to err (when err has no error yet). */
static void
topk_release(TopkBuffer *buf, PrError *err, bool *failed)
{
	if (buf->ptr != NULL)
	{
		cudaError_t st = cudaFree(buf->ptr);

		if (st != cudaSuccess && !*failed)
		{
			pr_error_set(err, PR_ERR_ENGINE, "GPU top-k: cudaFree failed: %s",
						 cudaGetErrorString(st));
			*failed = true;
		}
	}
	buf->ptr = NULL;
	buf->bytes = 0;
}

/* Frees every buffer of a workspace (not the struct); false when a cudaFree failed. */
static bool
topk_release_all(PrGpuTopkWorkspace *ws, PrError *err)
{
	bool		failed = false;

	topk_release(&ws->keys[0], err, &failed);
	topk_release(&ws->keys[1], err, &failed);
	topk_release(&ws->pos[0], err, &failed);
	topk_release(&ws->pos[1], err, &failed);
	topk_release(&ws->temp, err, &failed);
	topk_release(&ws->out, err, &failed);
	return !failed;
}

/* The three steps for vectors of T, with sort keys K (see the file comment). */
template <typename T, typename K>
static PrStatus
topk_typed(PrGpuTopkWorkspace *ws, const T *x, int64_t n, int k_cols, int col,
		   const int32_t *new_to_old, int64_t count, cudaStream_t stream, int32_t *host_index,
		   double *host_value, PrError *err)
{
	size_t		temp_bytes = 0;
	size_t		index_bytes = ((size_t) count * sizeof(int32_t) + 7) & ~(size_t) 7;
	int			num_items = (int) n;
	PrStatus	st;

	if ((st = topk_reserve(&ws->keys[0], (size_t) n * sizeof(K), err)) != PR_OK ||
		(st = topk_reserve(&ws->keys[1], (size_t) n * sizeof(K), err)) != PR_OK ||
		(st = topk_reserve(&ws->pos[0], (size_t) n * sizeof(int32_t), err)) != PR_OK ||
		(st = topk_reserve(&ws->pos[1], (size_t) n * sizeof(int32_t), err)) != PR_OK ||
		(st = topk_reserve(&ws->out, index_bytes + (size_t) count * sizeof(double), err)) != PR_OK)
		return st;
	{
		cub::DoubleBuffer<K> keys((K *) ws->keys[0].ptr, (K *) ws->keys[1].ptr);
		cub::DoubleBuffer<int32_t> pos((int32_t *) ws->pos[0].ptr, (int32_t *) ws->pos[1].ptr);
		int32_t    *out_index = (int32_t *) ws->out.ptr;
		double	   *out_value = (double *) ((char *) ws->out.ptr + index_bytes);

		TOPK_CUDA(cub::DeviceRadixSort::SortPairsDescending(NULL, temp_bytes, keys, pos, num_items,
															0, (int) (sizeof(K) * 8), stream));
		if ((st = topk_reserve(&ws->temp, temp_bytes, err)) != PR_OK)
			return st;
		k_topk_scatter<T, K><<<topk_grid(n), TOPK_THREADS, 0, stream>>>(n, k_cols, col, x, new_to_old,
																		keys.Current(), pos.Current());
		TOPK_CUDA(cudaGetLastError());
		TOPK_CUDA(cub::DeviceRadixSort::SortPairsDescending(ws->temp.ptr, temp_bytes, keys, pos,
															num_items, 0, (int) (sizeof(K) * 8),
															stream));
		k_topk_gather<T><<<topk_grid(count), TOPK_THREADS, 0, stream>>>(count, k_cols, col, x, new_to_old,
																		pos.Current(), out_index, out_value);
		TOPK_CUDA(cudaGetLastError());
		TOPK_CUDA(cudaMemcpyAsync(host_index, out_index, (size_t) count * sizeof(int32_t),
								  cudaMemcpyDeviceToHost, stream));
		TOPK_CUDA(cudaMemcpyAsync(host_value, out_value, (size_t) count * sizeof(double),
								  cudaMemcpyDeviceToHost, stream));
		TOPK_CUDA(cudaStreamSynchronize(stream));
	}
	return PR_OK;
}

/* See pr_gpu_topk.h. */
PrStatus
pr_gpu_topk(PrGpuTopkWorkspace **ws, const void *d_x, bool fp64, int64_t n, int k_cols, int col,
			const int32_t *d_new_to_old, int64_t top_k, void *stream, int32_t *host_index,
			double *host_value, PrError *err)
{
	PrGpuTopkWorkspace local;
	PrGpuTopkWorkspace *use;
	int64_t		count;
	PrStatus	st;

	if (n < 0 || n > INT_MAX || k_cols < 1 || col < 0 || col >= k_cols || top_k < 1 ||
		(n > 0 && (d_x == NULL || d_new_to_old == NULL || host_index == NULL || host_value == NULL)))
		return pr_error_set(err, PR_ERR_INVALID,
							"GPU top-k: bad arguments (n %lld, column %d of %d, top_k %lld)",
							(long long) n, col, k_cols, (long long) top_k);
	if (n == 0)
		return PR_OK;
	count = top_k < n ? top_k : n;
	if (ws == NULL)
	{
		memset(&local, 0, sizeof(local));
		use = &local;
	}
	else
	{
		if (*ws == NULL)
		{
			*ws = (PrGpuTopkWorkspace *) calloc(1, sizeof(PrGpuTopkWorkspace));
			if (*ws == NULL)
				return pr_error_set(err, PR_ERR_NOMEM, "GPU top-k: out of host memory");
		}
		use = *ws;
	}
	if (fp64)
		st = topk_typed<double, uint64_t>(use, (const double *) d_x, n, k_cols, col, d_new_to_old,
										  count, (cudaStream_t) stream, host_index, host_value, err);
	else
		st = topk_typed<float, uint32_t>(use, (const float *) d_x, n, k_cols, col, d_new_to_old,
										 count, (cudaStream_t) stream, host_index, host_value, err);
	if (ws == NULL)
	{
		/* per-call scratch: wait for the work before freeing (cudaFree does not order on stream) */
		cudaError_t sync = cudaStreamSynchronize((cudaStream_t) stream);

		if (sync != cudaSuccess && st == PR_OK)
			st = pr_error_set(err, PR_ERR_ENGINE, "GPU top-k: cudaStreamSynchronize failed: %s",
							  cudaGetErrorString(sync));
		if (!topk_release_all(&local, st == PR_OK ? err : NULL) && st == PR_OK)
			st = PR_ERR_ENGINE;
	}
	return st;
}

/* See pr_gpu_topk.h. */
size_t
pr_gpu_topk_workspace_bytes(const PrGpuTopkWorkspace *ws)
{
	if (ws == NULL)
		return 0;
	return ws->keys[0].bytes + ws->keys[1].bytes + ws->pos[0].bytes + ws->pos[1].bytes +
		ws->temp.bytes + ws->out.bytes;
}

/* See pr_gpu_topk.h. */
void
pr_gpu_topk_free(PrGpuTopkWorkspace *ws)
{
	if (ws == NULL)
		return;
	(void) topk_release_all(ws, NULL);
	free(ws);
}
