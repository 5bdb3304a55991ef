/*
 * pr_gpu_partials.cuh — where a product's row sums go: the write modes of a tile (store, add,
 * compact partial), the long rows' chunk sums added in chunk order, the merge of compact partials.
 */
#ifndef PR_GPU_PARTIALS_CUH
#define PR_GPU_PARTIALS_CUH

#include "pr_gpu_primitives.cuh"

/* How a tile writes its row sums: the first tile stores into y, later tiles add into y or
 * (compact partials) store into their slots of part[]; a merge pass adds those (k_merge). */
#define PR_MODE_STORE 0
#define PR_MODE_ADD 1
#define PR_MODE_PART 2

/* Stores or adds a row's result (PR_MODE_PART: stores slot's partial). */
template <typename T, int MODE>
__device__ __forceinline__ void
put_row(T *__restrict__ y, T *__restrict__ part, int32_t row, int64_t slot, T v)
{
	if (MODE == PR_MODE_PART)
		part[slot] = v;
	else if (MODE == PR_MODE_ADD)
		y[row] += v;
	else
		y[row] = v;
}

/* Adds the chunk partial sums of each long row, in chunk order, compensated (PR_MODE_PART: into
 * the slot of the row's first chunk). */
template <typename T, int MODE>
__global__ void __launch_bounds__(PR_THREADS)
k_long_rows(int64_t n_long, const int32_t *__restrict__ long_row,
			const int64_t *__restrict__ chunk_begin, const T *__restrict__ partial,
			T *__restrict__ y, T *__restrict__ part)
{
	int64_t		i = (int64_t) blockIdx.x * PR_THREADS + threadIdx.x;

	if (i < n_long)
	{
		T			s = 0,
					carry = 0;

		for (int64_t c = chunk_begin[i]; c < chunk_begin[i + 1]; c++)
			compensated_add<T>(s, carry, partial[c]);
		put_row<T, MODE>(y, part, long_row[i], chunk_begin[i], s + carry);
	}
}

/*
 * The merge pass of compact partials: each merge row (ascending) adds its later tiles' partials
 * to y in tile order — the order the add-in-place layout adds them, so the same bits.
 */
template <typename T>
__global__ void __launch_bounds__(PR_THREADS)
k_merge(int64_t n_rows, const int32_t *__restrict__ merge_row, const int64_t *__restrict__ merge_ptr,
		const int32_t *__restrict__ merge_slot, const T *__restrict__ part, T *__restrict__ y)
{
	int64_t		i = (int64_t) blockIdx.x * PR_THREADS + threadIdx.x;

	if (i < n_rows)
	{
		int32_t		row = merge_row[i];
		T			s = y[row];

		for (int64_t q = merge_ptr[i]; q < merge_ptr[i + 1]; q++)
			s += part[ld_stream(merge_slot + q)];
		y[row] = s;
	}
}

#endif							/* PR_GPU_PARTIALS_CUH */
