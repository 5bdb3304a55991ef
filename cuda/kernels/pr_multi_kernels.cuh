/*
 * pr_multi_kernels.cuh — the kernel of the multi-GPU exchange (pr_multi.cu): the reordering between
 * a GPU engine's slot in its private order (row i holds node new_to_old[i]) and the exchange's
 * buffer in graph-id order (row v holds node v), both n x k row-major.  Static: the library that
 * includes it has its own copy, apart from libpowerrank_gpu.so's kernels.
 */
#ifndef PR_MULTI_KERNELS_CUH
#define PR_MULTI_KERNELS_CUH

#include "pr_gpu_primitives.cuh"

/*
 * pack = true: buf[v][j] = slot[i][j] for the rows i whose node v = new_to_old[i] is in [lo, hi)
 * (a GPU's own rows, before they are sent); pack = false: slot[i][j] = buf[new_to_old[i]][j] for
 * every row (the whole vector, once every GPU's rows have arrived).
 */
template <typename T>
static __global__ void __launch_bounds__(PR_THREADS)
k_exchange_reorder(int64_t n, int k, const int32_t *__restrict__ new_to_old, int64_t lo, int64_t hi,
				   bool pack, T *__restrict__ slot, T *__restrict__ buf)
{
	int64_t		total = n * k;

	for (int64_t q = (int64_t) blockIdx.x * PR_THREADS + threadIdx.x; q < total;
		 q += (int64_t) gridDim.x * PR_THREADS)
	{
		int64_t		i = q / k;
		int64_t		v = new_to_old[i];
		int64_t		at = v * k + (q - i * k);

		if (!pack)
			slot[q] = buf[at];
		else if (v >= lo && v < hi)
			buf[at] = slot[q];
	}
}

#endif							/* PR_MULTI_KERNELS_CUH */
