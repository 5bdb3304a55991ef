/*
 * pr_gpu_reduce.cuh — the fixed-order reductions of the vector kernels: every block writes
 * per-column partials in double; the last block to finish (a counter, not a float atomic) adds
 * them in block order, so the result never depends on timing.
 */
#ifndef PR_GPU_REDUCE_CUH
#define PR_GPU_REDUCE_CUH

#include "pr_gpu_primitives.cuh"

#define PR_RED_BLOCKS 528		/* blocks of the reduction kernels (fixed: fixed summation order) */

/* Block-level fixed-order sum of one value per thread into per-column results by thread j < k. */
__device__ __forceinline__ void
block_column_reduce(double *sh, double v, int k, int rows_per_step, double *out_col_j, bool is_max)
{
	sh[threadIdx.x] = v;
	__syncthreads();
	if ((k & (k - 1)) == 0)
	{
		/* k a power of two: a fixed tree over the rows of the block (stride k) */
		for (int s = PR_THREADS / 2; s >= k; s >>= 1)
		{
			if ((int) threadIdx.x < s)
				sh[threadIdx.x] = is_max ? fmax(sh[threadIdx.x], sh[threadIdx.x + s])
					: sh[threadIdx.x] + sh[threadIdx.x + s];
			__syncthreads();
		}
		if ((int) threadIdx.x < k)
			*out_col_j = sh[threadIdx.x];
		__syncthreads();
		return;
	}
	if ((int) threadIdx.x < k)
	{
		double		s = sh[threadIdx.x];

		for (int r = 1; r < rows_per_step; r++)
		{
			double		w = sh[threadIdx.x + r * k];

			s = is_max ? fmax(s, w) : s + w;
		}
		*out_col_j = s;
	}
	__syncthreads();
}

/*
 * Last-block-done finish: the last block adds the partials [blocks][k][n_vals] in a fixed order
 * (each thread a fixed strided subset, then a fixed tree), so the result never depends on timing.
 */
__device__ __forceinline__ void
finish_partials(const double *partials, int n_vals, const bool *is_max, int k,
				unsigned int *counter, double *result)
{
	__shared__ bool last;
	__shared__ double red[PR_THREADS];

	__threadfence();
	__syncthreads();
	if (threadIdx.x == 0)
		last = (atomicAdd(counter, 1u) == gridDim.x - 1);
	__syncthreads();
	if (!last)
		return;
	__threadfence();
	for (int q = 0; q < k * n_vals; q++)
	{
		bool		mx = is_max[q % n_vals];
		double		s = 0.0;

		for (unsigned int b = threadIdx.x; b < gridDim.x; b += PR_THREADS)
		{
			double		w = ((volatile const double *) partials)[(size_t) b * k * n_vals + q];

			s = mx ? fmax(s, w) : s + w;
		}
		red[threadIdx.x] = s;
		__syncthreads();
		for (int h = PR_THREADS / 2; h > 0; h >>= 1)
		{
			if ((int) threadIdx.x < h)
				red[threadIdx.x] = mx ? fmax(red[threadIdx.x], red[threadIdx.x + h])
					: red[threadIdx.x] + red[threadIdx.x + h];
			__syncthreads();
		}
		if (threadIdx.x == 0)
			result[q] = red[0];
		__syncthreads();
	}
	if (threadIdx.x == 0)
		*counter = 0;
}

/* Block-level fixed-order sums of V values per thread (thread t holds elements t*V .. t*V+V-1 of
 * a block's run of n x k values, so value q of thread t is column (t*V + q) % k; k a power of
 * two, k <= PR_THREADS): a fixed tree over stride k, column j's result to out[j * 3] by thread j. */
template <int V>
__device__ __forceinline__ void
block_column_reduce_vec(double *sh, const double *v, int k, double *out, bool is_max)
{
#pragma unroll
	for (int q = 0; q < V; q++)
		sh[threadIdx.x * V + q] = v[q];
	__syncthreads();
	for (int s = PR_THREADS * V / 2; s >= k; s >>= 1)
	{
		for (int t = threadIdx.x; t < s; t += PR_THREADS)
			sh[t] = is_max ? fmax(sh[t], sh[t + s]) : sh[t] + sh[t + s];
		__syncthreads();
	}
	if ((int) threadIdx.x < k)
		out[threadIdx.x * 3] = sh[threadIdx.x];
	__syncthreads();
}

/* The last block's finish of a column kernel's three values per column (sum, max, sum) in
 * partials[blocks][k][3]: result[j*3 + {0,1,2}]. */
__device__ __forceinline__ void
finish_column_stats(const double *partials, int k, unsigned int *counter, double *result)
{
	const bool	is_max[3] = {false, true, false};

	finish_partials(partials, 3, is_max, k, counter, result);
}

/*
 * The end of a column kernel (thread t serves column t % k, rows_per_step rows of a block at a
 * time): each thread's three values (summed, maxed, summed) reduced per column in a fixed order
 * into result[j*3 + {0,1,2}].
 */
__device__ __forceinline__ void
reduce_column_stats(double sum0, double max1, double sum2, int k, int rows_per_step,
					double *partials, unsigned int *counter, double *result)
{
	__shared__ double sh[PR_THREADS];
	int			j = threadIdx.x % k;

	block_column_reduce(sh, sum0, k, rows_per_step, &partials[((size_t) blockIdx.x * k + j) * 3 + 0], false);
	block_column_reduce(sh, max1, k, rows_per_step, &partials[((size_t) blockIdx.x * k + j) * 3 + 1], true);
	block_column_reduce(sh, sum2, k, rows_per_step, &partials[((size_t) blockIdx.x * k + j) * 3 + 2], false);
	finish_column_stats(partials, k, counter, result);
}

/* reduce_column_stats for V values per thread (block_column_reduce_vec's layout). */
template <int V>
__device__ __forceinline__ void
reduce_column_stats_vec(const double *sum0, const double *max1, const double *sum2, int k,
						double *partials, unsigned int *counter, double *result)
{
	__shared__ double sh[PR_THREADS * V];

	block_column_reduce_vec<V>(sh, sum0, k, &partials[(size_t) blockIdx.x * k * 3 + 0], false);
	block_column_reduce_vec<V>(sh, max1, k, &partials[(size_t) blockIdx.x * k * 3 + 1], true);
	block_column_reduce_vec<V>(sh, sum2, k, &partials[(size_t) blockIdx.x * k * 3 + 2], false);
	finish_column_stats(partials, k, counter, result);
}

#endif							/* PR_GPU_REDUCE_CUH */
