/*
 * pr_gpu_binned_kernels.cuh — the row-binned CSR product of one column: rows grouped by length,
 * 2^b lanes a row in bin b, a warp per chunk of a long row (the chunks' sums: pr_gpu_partials.cuh).
 */
#ifndef PR_GPU_BINNED_KERNELS_CUH
#define PR_GPU_BINNED_KERNELS_CUH

#include "pr_gpu_primitives.cuh"

/* The row-binned layout over a CSR, as device pointers. */
struct DevBinned
{
	const int64_t *ptr;
	const int32_t *col;
	const float *val;
	const int32_t *rows;
	const int64_t *chunk_begin_edge;
	const int32_t *chunk_row;
	int64_t		bin_begin[8];	/* rows of bin b: rows[bin_begin[b] .. bin_begin[b+1]) */
	int64_t		block_begin[8]; /* first block of bin b; block_begin[6] = first chunk block */
	int64_t		n_chunks;
	int64_t		chunk;
};

/* Rows of one bin, L lanes per row; all 32 lanes of each warp reach the shuffles. */
template <typename T, bool VAL, int L>
__device__ __forceinline__ void
binned_rows(const DevBinned &b, int bin, int64_t block_in_bin, const T *__restrict__ z,
			T *__restrict__ y)
{
	int			group = threadIdx.x / L;
	int			sub = threadIdx.x % L;
	int64_t		i = b.bin_begin[bin] + block_in_bin * (PR_THREADS / L) + group;
	T			acc = 0;
	int32_t		row = -1;

	if (i < b.bin_begin[bin + 1])
	{
		int64_t		e,
					end;

		row = b.rows[i];
		e = b.ptr[row] + sub;
		end = b.ptr[row + 1];
		for (; e + L < end; e += 2 * L)
		{
			int32_t		c0 = ld_stream(b.col + e),
						c1 = ld_stream(b.col + e + L);
			T			v0 = __ldg(z + c0),
						v1 = __ldg(z + c1);

			acc += (T) entry_weight<VAL>(b.val, e) * v0 + (T) entry_weight<VAL>(b.val, e + L) * v1;
		}
		if (e < end)
			acc += (T) entry_weight<VAL>(b.val, e) * __ldg(z + ld_stream(b.col + e));
	}
#pragma unroll
	for (int off = L / 2; off > 0; off >>= 1)
		acc += __shfl_xor_sync(0xffffffffu, acc, off);
	if (row >= 0 && sub == 0)
		y[row] = acc;
}

/* The row-binned product: one launch for all bins, then warps for the chunks of long rows. */
template <typename T, bool VAL>
__global__ void __launch_bounds__(PR_THREADS)
k_binned(DevBinned b, const T *__restrict__ z, T *__restrict__ y, T *__restrict__ partial)
{
	int64_t		blk = blockIdx.x;

	if (blk >= b.block_begin[6])
	{
		int64_t		c = (blk - b.block_begin[6]) * (PR_THREADS / 32) + (threadIdx.x >> 5);
		int			lane = threadIdx.x & 31;

		if (c < b.n_chunks)
		{
			int32_t		row = b.chunk_row[c];
			int64_t		beg = b.chunk_begin_edge[c];
			int64_t		end = min(beg + b.chunk, b.ptr[row + 1]);
			T			s = warp_range_sum<T, VAL>(b.col, b.val, z, beg, end, lane);

			if (lane == 0)
				partial[c] = s;
		}
		return;
	}
	if (blk >= b.block_begin[5])
		binned_rows<T, VAL, 32>(b, 5, blk - b.block_begin[5], z, y);
	else if (blk >= b.block_begin[4])
		binned_rows<T, VAL, 16>(b, 4, blk - b.block_begin[4], z, y);
	else if (blk >= b.block_begin[3])
		binned_rows<T, VAL, 8>(b, 3, blk - b.block_begin[3], z, y);
	else if (blk >= b.block_begin[2])
		binned_rows<T, VAL, 4>(b, 2, blk - b.block_begin[2], z, y);
	else if (blk >= b.block_begin[1])
		binned_rows<T, VAL, 2>(b, 1, blk - b.block_begin[1], z, y);
	else
		binned_rows<T, VAL, 1>(b, 0, blk, z, y);
}

#endif							/* PR_GPU_BINNED_KERNELS_CUH */
