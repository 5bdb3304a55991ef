/*
 * pr_gpu_row_blocks.cuh — the product over the row-blocks layout (cuda/plan/pr_plan_row_blocks.h):
 * a block of threads per row block stages the products of its consecutive rows' entries in shared
 * memory (coalesced reads in row order; each thread loads all its column ids before it gathers, so
 * its gathers are in flight together), then sums each row in entry order — a thread per row, or
 * a warp per row when the block's rows are long; a block per chunk of a longer row writes the
 * chunk's sum to partial[].  Device code only.
 */
#ifndef PR_GPU_ROW_BLOCKS_CUH
#define PR_GPU_ROW_BLOCKS_CUH

#include "pr_gpu_primitives.cuh"
#include "pr_plan_row_blocks.h"

/* The layout's arrays on the device, with its CSR. */
struct DevRowBlocks
{
	const int64_t *ptr;
	const int32_t *col;
	const float *val;
	const int32_t *first_row;
	const int64_t *chunk_edge;
	const int64_t *chunk_slot;
	int64_t		n_blocks;
};

/* Sum over the block's threads in a fixed order: each warp's butterfly, then warp 0 over the warps. */
template <typename T>
__device__ __forceinline__ T
row_blocks_block_sum(T v, T *shared_warps)
{
	int			lane = threadIdx.x & 31,
				warp = threadIdx.x >> 5;

	v = warp_sum(v);
	if (lane == 0)
		shared_warps[warp] = v;
	__syncthreads();
	v = 0;
	if (warp == 0)
	{
		v = lane < PR_THREADS / 32 ? shared_warps[lane] : (T) 0;
		v = warp_sum(v);
	}
	return v;
}

/*
 * Block b: a row block (chunk_edge[b] < 0) writes y for rows first_row[b] .. first_row[b + 1] - 1;
 * a chunk writes partial[chunk_slot[b]] (the chunks of a row are consecutive slots).
 */
template <typename T, bool VAL>
__global__ void __launch_bounds__(PR_THREADS)
k_row_blocks(DevRowBlocks rb, const T *__restrict__ z, T *__restrict__ y, T *__restrict__ partial)
{
	__shared__ T staged[PR_ROW_BLOCK_CAP];
	__shared__ T warps[PR_THREADS / 32];
	int64_t		b = blockIdx.x;
	int64_t		r0 = rb.first_row[b],
				r1 = rb.first_row[b + 1];
	int64_t		ce = rb.chunk_edge[b];

	if (ce >= 0)
	{
		int64_t		end = min(ce + (int64_t) PR_ROW_BLOCK_CHUNK, rb.ptr[r0 + 1]);
		T			s = 0;

		for (int64_t p = ce + threadIdx.x; p < end; p += PR_THREADS)
			s += (T) entry_weight<VAL>(rb.val, p) * __ldg(z + ld_stream(rb.col + p));
		s = row_blocks_block_sum(s, warps);
		if (threadIdx.x == 0)
			partial[rb.chunk_slot[b]] = s;
		return;
	}

	int64_t		e0 = rb.ptr[r0],
				e1 = rb.ptr[r1];

	{
		/* every thread's entries (at most PR_ROW_BLOCK_CAP / PR_THREADS): all column ids loaded,
		 * then all gathers issued, so each thread has that many loads in flight */
		constexpr int per_thread = PR_ROW_BLOCK_CAP / PR_THREADS;
		static_assert(PR_ROW_BLOCK_CAP % PR_THREADS == 0, "a row block's entries split evenly over the threads");
		int32_t		c[per_thread];
		int			n_here = (int) (e1 - e0);

#pragma unroll
		for (int i = 0; i < per_thread; i++)
		{
			int			q = (int) threadIdx.x + i * PR_THREADS;

			c[i] = q < n_here ? ld_stream(rb.col + e0 + q) : -1;
		}
#pragma unroll
		for (int i = 0; i < per_thread; i++)
		{
			int			q = (int) threadIdx.x + i * PR_THREADS;

			if (c[i] >= 0)
				staged[q] = (T) entry_weight<VAL>(rb.val, e0 + q) * __ldg(z + c[i]);
		}
	}
	__syncthreads();
	if ((e1 - e0) > 32 * (r1 - r0))
	{
		/* long rows: a warp per row, lanes strided, the warp's butterfly */
		int			lane = threadIdx.x & 31;

		for (int64_t r = r0 + (threadIdx.x >> 5); r < r1; r += PR_THREADS / 32)
		{
			T			s = 0;

			for (int64_t q = rb.ptr[r] - e0 + lane; q < rb.ptr[r + 1] - e0; q += 32)
				s += staged[q];
			s = warp_sum(s);
			if (lane == 0)
				y[r] = s;
		}
		return;
	}
	for (int64_t r = r0 + threadIdx.x; r < r1; r += PR_THREADS)
	{
		T			s = 0;

		for (int64_t q = rb.ptr[r] - e0; q < rb.ptr[r + 1] - e0; q++)
			s += staged[q];
		y[r] = s;
	}
}

#endif							/* PR_GPU_ROW_BLOCKS_CUH */
