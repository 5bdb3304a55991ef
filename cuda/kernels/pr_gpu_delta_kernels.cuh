/*
 * pr_gpu_delta_kernels.cuh — a graph delta beside the layout (pr_gpu_delta.cu): its rows' terms
 * added to a product's output, and the rewritten entries of 1 / out-strength.
 */
#ifndef PR_GPU_DELTA_KERNELS_CUH
#define PR_GPU_DELTA_KERNELS_CUH

#include "pr_gpu_primitives.cuh"

/*
 * y[row[r]][j] += sum over the row's entries e of value[e] * in[col[e]][j], for every delta row r
 * and column j of n x k vectors: one thread per row and column, the row's entries added in their
 * order in double, so every run gives the same bits.
 */
template <typename T>
__global__ void __launch_bounds__(PR_THREADS)
k_delta_rows(int64_t rows, int k, const int32_t *__restrict__ row, const int64_t *__restrict__ ptr,
			 const int32_t *__restrict__ col, const double *__restrict__ value, const T *__restrict__ in,
			 T *__restrict__ y)
{
	int64_t		total = rows * k;

	for (int64_t q = (int64_t) blockIdx.x * PR_THREADS + threadIdx.x; q < total;
		 q += (int64_t) gridDim.x * PR_THREADS)
	{
		int64_t		r = q / k;
		int			j = (int) (q % k);
		int64_t		at = (int64_t) row[r] * k + j;
		double		sum = (double) y[at];

		for (int64_t e = ptr[r]; e < ptr[r + 1]; e++)
			sum += value[e] * (double) in[(int64_t) col[e] * k + j];
		y[at] = (T) sum;
	}
}

/* out[pos[i]] = value[i] for i < count (distinct positions). */
template <typename T>
__global__ void __launch_bounds__(PR_THREADS)
k_scatter_values(int64_t count, const int32_t *__restrict__ pos, const double *__restrict__ value,
				 T *__restrict__ out)
{
	for (int64_t i = (int64_t) blockIdx.x * PR_THREADS + threadIdx.x; i < count;
		 i += (int64_t) gridDim.x * PR_THREADS)
		out[pos[i]] = (T) value[i];
}

#endif							/* PR_GPU_DELTA_KERNELS_CUH */
