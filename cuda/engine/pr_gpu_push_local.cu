/*
 * pr_gpu_push_local.cu — the warm start's local part by pushing along out-edge lists (see
 * pr_gpu_push_local.h).
 */
#include "pr_gpu_push_local.h"
#include "pr_gpu_launch.h"
#include "pr_gpu_status.h"
#include "pr_gpu_push_kernels.cuh"

#include <cuda_runtime.h>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <cuda/std/functional>
#include <thrust/iterator/counting_iterator.h>

#include <stdlib.h>
#include <string.h>

#define PUSH_MAX_K 32

/* Reports a failed CUDA call and jumps to the function's cleanup (status in st). */
#define PUSH_CUDA(call) do { \
	cudaError_t push_status_ = (call); \
	if (push_status_ != cudaSuccess) \
	{ \
		cudaGetLastError(); \
		st = pr_cuda_failed(err, push_status_, "GPU push", #call, __FILE__, __LINE__); \
		goto done; \
	} \
} while (0)

struct PrGpuPushLocal
{
	int64_t		n;
	int64_t	   *out_ptr;		/* [n + 1] */
	int32_t    *out_dst;		/* [m] rows of each source's entries, ascending */
	float	   *out_w;			/* [m] their weights, or NULL */
	int64_t		cap;			/* entries of one step's list */
	int64_t		second_entries; /* the last run's second step when it did not fit, else 0 */
	int64_t    *pos[3];			/* [cap] positions node * k + column */
	double	   *val[3];			/* [cap] */
	int64_t    *off;			/* [cap + 1] exclusive scan of the listed nodes' out-degrees */
	int64_t    *count;			/* [2] the lengths of the lists in pos[0] and pos[1] */
	void	   *temp;			/* CUB's temporary storage */
	size_t		temp_bytes;
	size_t		bytes;
};

/* Blocks for a grid-stride loop over count items. */
static unsigned int
push_grid(int64_t count)
{
	return pr_grid_blocks(count, PUSH_THREADS, 4096);
}

/* Frees the device arrays of pl (not pl). */
static void
push_free_arrays(PrGpuPushLocal *pl)
{
	void	   *arrays[] = {pl->out_ptr, pl->out_dst, pl->out_w, pl->pos[0], pl->pos[1], pl->pos[2],
		pl->val[0], pl->val[1], pl->val[2], pl->off, pl->count, pl->temp};

	for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++)
		if (arrays[i] != NULL)
			cudaFree(arrays[i]);
	cudaGetLastError();
}

/* cudaMalloc that adds to *bytes (NULL: a temporary buffer, not counted). */
static cudaError_t
push_malloc(void **p, size_t size, size_t *bytes)
{
	cudaError_t c = cudaMalloc(p, size == 0 ? 16 : size);

	if (c != cudaSuccess)
		*p = NULL;
	else if (bytes != NULL)
		*bytes += size;
	return c;
}

/* CUB temporary bytes the push steps need for lists of cap entries and restarts of n_pos positions. */
static cudaError_t
push_temp_bytes(int64_t cap, int64_t n_pos, cudaStream_t s, size_t *bytes)
{
	size_t		b;
	cudaError_t c;
	thrust::counting_iterator<int64_t> first(0);
	PushNonzero<double> any = {NULL};

	*bytes = 0;
	if ((c = cub::DeviceSelect::If(NULL, b, first, (int64_t *) NULL, (int64_t *) NULL, n_pos, any, s)) != cudaSuccess)
		return c;
	*bytes = b > *bytes ? b : *bytes;
	if ((c = cub::DeviceScan::ExclusiveSum(NULL, b, (int64_t *) NULL, (int64_t *) NULL, cap + 1, s)) != cudaSuccess)
		return c;
	*bytes = b > *bytes ? b : *bytes;
	if ((c = cub::DeviceRadixSort::SortPairs(NULL, b, (const int64_t *) NULL, (int64_t *) NULL, (const double *) NULL,
											 (double *) NULL, cap, 0, 64, s)) != cudaSuccess)
		return c;
	*bytes = b > *bytes ? b : *bytes;
	if ((c = cub::DeviceReduce::ReduceByKey(NULL, b, (const int64_t *) NULL, (int64_t *) NULL, (const double *) NULL,
											(double *) NULL, (int64_t *) NULL, ::cuda::std::plus<double>(), cap, s)) != cudaSuccess)
		return c;
	*bytes = b > *bytes ? b : *bytes;
	return cudaSuccess;
}

/* See pr_gpu_push_local.h. */
PrStatus
pr_gpu_push_local_create(const int64_t *d_ptr, const int32_t *d_col, const float *d_val, int64_t n,
						 int64_t m, int64_t cap, void *stream, PrGpuPushLocal **out, PrError *err)
{
	cudaStream_t s = (cudaStream_t) stream;
	PrGpuPushLocal *pl;
	int32_t    *iota = NULL,
			   *sorted_src = NULL,
			   *perm = NULL;
	void	   *sort_temp = NULL;
	size_t		sort_bytes = 0;
	PrStatus	st = PR_OK;

	*out = NULL;
	if (n <= 0 || m < 0 || m >= ((int64_t) 1 << 31) - 1 || n >= ((int64_t) 1 << 31) - 1)
		return pr_error_set(err, PR_ERR_UNSUPPORTED, "GPU push: %lld nodes, %lld entries do not fit 32-bit ids",
							(long long) n, (long long) m);
	pl = (PrGpuPushLocal *) calloc(1, sizeof(PrGpuPushLocal));
	if (pl == NULL)
		return pr_error_set(err, PR_ERR_NOMEM, "GPU push: out of host memory");
	pl->n = n;
	/* one step's list: 1/64 of the entries, at least 64 K, at most 4 M (~56 bytes each) */
	pl->cap = m / 64 < ((int64_t) 1 << 16) ? ((int64_t) 1 << 16) : (m / 64 > ((int64_t) 1 << 22) ? ((int64_t) 1 << 22) : m / 64);
	if (cap > 0)
		pl->cap = cap;

	/* the out-edge lists: sources sorted (stable) with the pull entries' positions */
	PUSH_CUDA(push_malloc((void **) &pl->out_ptr, (size_t) (n + 1) * 8, &pl->bytes));
	PUSH_CUDA(push_malloc((void **) &pl->out_dst, (size_t) m * 4, &pl->bytes));
	if (d_val != NULL)
		PUSH_CUDA(push_malloc((void **) &pl->out_w, (size_t) m * 4, &pl->bytes));
	if (m > 0)
	{
		PUSH_CUDA(push_malloc((void **) &iota, (size_t) m * 4, NULL));
		PUSH_CUDA(push_malloc((void **) &sorted_src, (size_t) m * 4, NULL));
		PUSH_CUDA(push_malloc((void **) &perm, (size_t) m * 4, NULL));
		PUSH_CUDA(cub::DeviceRadixSort::SortPairs(NULL, sort_bytes, d_col, sorted_src, iota, perm, m, 0,
												  pr_bits_below((uint64_t) n), s));
		PUSH_CUDA(push_malloc(&sort_temp, sort_bytes, NULL));
		k_push_iota<<<push_grid(m), PUSH_THREADS, 0, s>>>(m, iota);
		PUSH_CUDA(cudaGetLastError());
		PUSH_CUDA(cub::DeviceRadixSort::SortPairs(sort_temp, sort_bytes, d_col, sorted_src, iota, perm, m, 0,
												  pr_bits_below((uint64_t) n), s));
		k_push_out_entries<<<push_grid(m), PUSH_THREADS, 0, s>>>(m, n, perm, d_ptr, d_val, pl->out_dst, pl->out_w);
		PUSH_CUDA(cudaGetLastError());
	}
	k_push_out_ptr<<<push_grid(n + 1), PUSH_THREADS, 0, s>>>(n, m, sorted_src, pl->out_ptr);
	PUSH_CUDA(cudaGetLastError());

	/* the steps' scratch */
	for (int i = 0; i < 3; i++)
	{
		PUSH_CUDA(push_malloc((void **) &pl->pos[i], (size_t) pl->cap * 8, &pl->bytes));
		PUSH_CUDA(push_malloc((void **) &pl->val[i], (size_t) pl->cap * 8, &pl->bytes));
	}
	PUSH_CUDA(push_malloc((void **) &pl->off, (size_t) (pl->cap + 1) * 8, &pl->bytes));
	PUSH_CUDA(push_malloc((void **) &pl->count, 16, &pl->bytes));
	PUSH_CUDA(push_temp_bytes(pl->cap, n * PUSH_MAX_K, s, &pl->temp_bytes));
	PUSH_CUDA(push_malloc(&pl->temp, pl->temp_bytes, &pl->bytes));
	PUSH_CUDA(cudaStreamSynchronize(s));

done:
	if (iota != NULL)
		cudaFree(iota);
	if (sorted_src != NULL)
		cudaFree(sorted_src);
	if (perm != NULL)
		cudaFree(perm);
	if (sort_temp != NULL)
		cudaFree(sort_temp);
	cudaGetLastError();
	if (st != PR_OK)
	{
		push_free_arrays(pl);
		free(pl);
		return st;
	}
	*out = pl;
	return PR_OK;
}

/*
 * One push step: the list in pos[0] / val[0] (n_in entries) times alpha P, reduced into list
 * out_list (0 or 1; pos[1] holds the contributions until they are sorted into pos[2]) and its
 * length into count[out_list] and *n_out.  *fits = false, nothing written, when the step has more
 * contributions than the scratch holds.
 */
template <typename T>
static PrStatus
push_step(PrGpuPushLocal *pl, int64_t n_in, int k, const T *inv_out, double alpha, int out_list,
		  cudaStream_t s, int64_t *n_out, bool *fits, PrError *err)
{
	PrStatus	st = PR_OK;
	int64_t		total = 0;
	size_t		tb = pl->temp_bytes;

	*fits = true;
	*n_out = 0;
	if (n_in > 0)
	{
		k_push_degrees<<<push_grid(n_in + 1), PUSH_THREADS, 0, s>>>(n_in, k, pl->pos[0], pl->out_ptr, pl->off);
		PUSH_CUDA(cudaGetLastError());
		PUSH_CUDA(cub::DeviceScan::ExclusiveSum(pl->temp, tb, pl->off, pl->off, n_in + 1, s));
		PUSH_CUDA(cudaMemcpyAsync(&total, pl->off + n_in, 8, cudaMemcpyDeviceToHost, s));
		PUSH_CUDA(cudaStreamSynchronize(s));
	}
	if (total > pl->cap)
	{
		*fits = false;
		*n_out = total;			/* what it would have listed */
		return PR_OK;
	}
	if (total == 0)
	{
		PUSH_CUDA(cudaMemsetAsync(pl->count + out_list, 0, 8, s));	/* an empty list */
		return PR_OK;
	}
	k_push_emit<T><<<push_grid(total), PUSH_THREADS, 0, s>>>(total, n_in, k, pl->off, pl->pos[0], pl->val[0], pl->out_ptr,
															 pl->out_dst, pl->out_w, inv_out, alpha, pl->pos[1], pl->val[1]);
	PUSH_CUDA(cudaGetLastError());
	tb = pl->temp_bytes;
	PUSH_CUDA(cub::DeviceRadixSort::SortPairs(pl->temp, tb, pl->pos[1], pl->pos[2], pl->val[1], pl->val[2], total, 0,
											  pr_bits_below((uint64_t) pl->n * (uint64_t) k), s));
	tb = pl->temp_bytes;
	PUSH_CUDA(cub::DeviceReduce::ReduceByKey(pl->temp, tb, pl->pos[2], pl->pos[out_list], pl->val[2], pl->val[out_list],
											 pl->count + out_list, ::cuda::std::plus<double>(), total, s));
	PUSH_CUDA(cudaMemcpyAsync(n_out, pl->count + out_list, 8, cudaMemcpyDeviceToHost, s));
	PUSH_CUDA(cudaStreamSynchronize(s));
done:
	return st;
}

/* pr_gpu_push_local_run for one element type. */
template <typename T>
static PrStatus
push_local_typed(PrGpuPushLocal *pl, const T *r, const T *inv_out, int k, double alpha,
				 int64_t restart_entries, T *out, T *first, uint32_t *flags, cudaStream_t s,
				 PrGpuPushResult *result, PrError *err)
{
	PrStatus	st = PR_OK;
	int64_t		n_pos = pl->n * k,
				n_list = 0,
				n_second = 0;
	size_t		tb = pl->temp_bytes;
	thrust::counting_iterator<int64_t> first_pos(0);
	PushNonzero<T> nonzero = {r};
	bool		fits = true;

	*result = PR_PUSH_NONE;
	pl->second_entries = 0;
	if (restart_entries > pl->cap || k < 1 || k > PUSH_MAX_K)
		return PR_OK;
	/* the list of r's nonzeros, by position */
	PUSH_CUDA(cub::DeviceSelect::If(pl->temp, tb, first_pos, pl->pos[0], pl->count, n_pos, nonzero, s));
	k_push_gather<T><<<push_grid(restart_entries), PUSH_THREADS, 0, s>>>(pl->count, pl->pos[0], r, pl->val[0]);
	PUSH_CUDA(cudaGetLastError());
	PUSH_CUDA(cudaMemcpyAsync(&n_list, pl->count, 8, cudaMemcpyDeviceToHost, s));
	PUSH_CUDA(cudaStreamSynchronize(s));
	/* alpha P r into list 0 */
	if ((st = push_step<T>(pl, n_list, k, inv_out, alpha, 0, s, &n_list, &fits, err)) != PR_OK || !fits)
		return st;
	/* alpha² P² r into list 1, when it fits */
	if ((st = push_step<T>(pl, n_list, k, inv_out, alpha, 1, s, &n_second, &fits, err)) != PR_OK)
		return st;
	if (!fits)
	{
		pl->second_entries = n_second;
		PUSH_CUDA(cudaMemsetAsync(first, 0, (size_t) n_pos * sizeof(T), s));
		PUSH_CUDA(cudaMemsetAsync(flags, 0, (size_t) pl->n * 4, s));
		k_push_first<T><<<push_grid(n_list), PUSH_THREADS, 0, s>>>(pl->count, k, pl->pos[0], pl->val[0], first, flags);
		PUSH_CUDA(cudaGetLastError());
		PUSH_CUDA(cudaStreamSynchronize(s));
		*result = PR_PUSH_FIRST;
		return PR_OK;
	}
	/* out = r + alpha P r + alpha² P² r: r, then list 0, then list 1 */
	PUSH_CUDA(cudaMemcpyAsync(out, r, (size_t) n_pos * sizeof(T), cudaMemcpyDeviceToDevice, s));
	k_push_add<T><<<push_grid(n_list), PUSH_THREADS, 0, s>>>(pl->count, pl->pos[0], pl->val[0], out);
	PUSH_CUDA(cudaGetLastError());
	k_push_add<T><<<push_grid(n_second), PUSH_THREADS, 0, s>>>(pl->count + 1, pl->pos[1], pl->val[1], out);
	PUSH_CUDA(cudaGetLastError());
	PUSH_CUDA(cudaStreamSynchronize(s));
	*result = PR_PUSH_ALL;
done:
	return st;
}

/* See pr_gpu_push_local.h. */
PrStatus
pr_gpu_push_local_run(PrGpuPushLocal *pl, const void *d_r, const void *d_inv_out, bool fp64, int k,
					  double alpha, int64_t restart_entries, void *d_out, void *d_first,
					  uint32_t *d_flags, void *stream, PrGpuPushResult *result, PrError *err)
{
	*result = PR_PUSH_NONE;
	if (pl == NULL)
		return pr_error_set(err, PR_ERR_INVALID, "GPU push: no out-edge lists");
	if (fp64)
		return push_local_typed<double>(pl, (const double *) d_r, (const double *) d_inv_out, k, alpha,
										restart_entries, (double *) d_out, (double *) d_first, d_flags,
										(cudaStream_t) stream, result, err);
	return push_local_typed<float>(pl, (const float *) d_r, (const float *) d_inv_out, k, alpha,
								   restart_entries, (float *) d_out, (float *) d_first, d_flags,
								   (cudaStream_t) stream, result, err);
}

/* See pr_gpu_push_local.h. */
int64_t
pr_gpu_push_local_second_entries(const PrGpuPushLocal *pl)
{
	return pl == NULL ? 0 : pl->second_entries;
}

/* See pr_gpu_push_local.h. */
size_t
pr_gpu_push_local_bytes(const PrGpuPushLocal *pl)
{
	return pl == NULL ? 0 : pl->bytes;
}

/* See pr_gpu_push_local.h. */
void
pr_gpu_push_local_free(PrGpuPushLocal *pl)
{
	if (pl == NULL)
		return;
	push_free_arrays(pl);
	free(pl);
}
