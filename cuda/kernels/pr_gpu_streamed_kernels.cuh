/*
 * pr_gpu_streamed_kernels.cuh — the device code of the streamed matrix (pr_gpu_streamed.cu): the
 * product of one block of rows copied into a device buffer (row pointers with the host CSR's
 * global offsets, columns, optional double values), its long rows cut into chunks whose sums are
 * added in order.  Every sum is taken in a fixed order: the same bits run to run.
 */
#ifndef PR_GPU_STREAMED_KERNELS_CUH
#define PR_GPU_STREAMED_KERNELS_CUH

#include "pr_gpu_primitives.cuh"
#include "pr_residency.h"

#include <stdint.h>

#define PR_STREAM_LANES 8		/* lanes per row of the one-column kernel */

/* The weight of entry p: the double value in T, or 1 when the matrix has none. */
template <typename T, bool VAL>
__device__ __forceinline__ T
stream_weight(const double *__restrict__ val, int64_t p)
{
	if constexpr (VAL)
		return (T) ld_stream(val + p);
	else
		return (T) 1;
}

/*
 * One column: PR_STREAM_LANES lanes per row of the block (rows row count; ptr the block's row
 * pointers, base the first entry's global offset), each summing a strided share, then a fixed
 * shuffle tree; rows longer than PR_STREAM_CHUNK are left to the chunk kernels.  The grid covers
 * whole warps, so every lane takes part in the shuffles.
 */
template <typename T, bool VAL>
__global__ void
k_stream_rows1(int64_t rows, const int64_t *__restrict__ ptr, int64_t base, const int32_t *__restrict__ col,
			   const double *__restrict__ val, const T *__restrict__ z, T *__restrict__ y)
{
	int64_t		t = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
	int64_t		r = t / PR_STREAM_LANES;
	int			lane = (int) (t % PR_STREAM_LANES);
	bool		active = r < rows;
	int64_t		b = 0,
				e = 0;
	T			sum = 0;

	if (active)
	{
		b = ptr[r] - base;
		e = ptr[r + 1] - base;
		if (e - b > PR_STREAM_CHUNK)
			active = false;
	}
	if (active)
		for (int64_t p = b + lane; p < e; p += PR_STREAM_LANES)
			sum += stream_weight<T, VAL>(val, p) * z[ld_stream(col + p)];
	for (int off = PR_STREAM_LANES / 2; off > 0; off >>= 1)
		sum += __shfl_down_sync(0xffffffffu, sum, off, PR_STREAM_LANES);
	if (active && lane == 0)
		y[r] = sum;
}

/*
 * k columns (interleaved: z[c * k + j]): a thread per row and column, summing the row's entries in
 * order; rows longer than PR_STREAM_CHUNK are left to the chunk kernels.
 */
template <typename T, bool VAL>
__global__ void
k_stream_rows_k(int64_t rows, int k, const int64_t *__restrict__ ptr, int64_t base, const int32_t *__restrict__ col,
				const double *__restrict__ val, const T *__restrict__ z, T *__restrict__ y)
{
	int64_t		t = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
	int64_t		r = t / k;
	int			j = (int) (t % k);
	int64_t		b,
				e;
	T			sum = 0;

	if (r >= rows)
		return;
	b = ptr[r] - base;
	e = ptr[r + 1] - base;
	if (e - b > PR_STREAM_CHUNK)
		return;
	for (int64_t p = b; p < e; p++)
		sum += stream_weight<T, VAL>(val, p) * z[(int64_t) ld_stream(col + p) * k + j];
	y[r * k + j] = sum;
}

/*
 * The chunks c0 .. c0 + n_chunks - 1 of the block's long rows (global entry ranges chunk_start[c]
 * .. chunk_end[c]), each column's sum into partial[c * k + j]: a warp per chunk when k = 1 (lanes
 * strided, a fixed shuffle tree), a thread per chunk and column otherwise.
 */
template <typename T, bool VAL>
__global__ void
k_stream_chunks(int64_t c0, int64_t n_chunks, int k, const int64_t *__restrict__ chunk_start,
				const int64_t *__restrict__ chunk_end, int64_t base, const int32_t *__restrict__ col,
				const double *__restrict__ val, const T *__restrict__ z, T *__restrict__ partial)
{
	int64_t		t = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (k == 1)
	{
		int64_t		c = t / 32;
		int			lane = (int) (t % 32);
		T			sum = 0;

		if (c < n_chunks)
		{
			int64_t		b = chunk_start[c0 + c] - base,
						e = chunk_end[c0 + c] - base;

			for (int64_t p = b + lane; p < e; p += 32)
				sum += stream_weight<T, VAL>(val, p) * z[ld_stream(col + p)];
		}
		for (int off = 16; off > 0; off >>= 1)
			sum += __shfl_down_sync(0xffffffffu, sum, off);
		if (c < n_chunks && lane == 0)
			partial[c0 + c] = sum;
	}
	else
	{
		int64_t		c = t / k;
		int			j = (int) (t % k);
		T			sum = 0;

		if (c >= n_chunks)
			return;
		for (int64_t p = chunk_start[c0 + c] - base; p < chunk_end[c0 + c] - base; p++)
			sum += stream_weight<T, VAL>(val, p) * z[(int64_t) ld_stream(col + p) * k + j];
		partial[(c0 + c) * k + j] = sum;
	}
}

/*
 * The long rows l0 .. l0 + n_long - 1 (global rows long_row[i], chunks first_chunk[i] ..
 * first_chunk[i + 1] - 1): y[row * k + j] = their chunk sums added in order.
 */
template <typename T>
__global__ void
k_stream_long_rows(int64_t l0, int64_t n_long, int k, const int32_t *__restrict__ long_row,
				   const int64_t *__restrict__ first_chunk, const T *__restrict__ partial, T *__restrict__ y)
{
	int64_t		t = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
	int64_t		i = t / k;
	int			j = (int) (t % k);
	T			sum = 0;

	if (i >= n_long)
		return;
	for (int64_t c = first_chunk[l0 + i]; c < first_chunk[l0 + i + 1]; c++)
		sum += partial[c * k + j];
	y[(int64_t) long_row[l0 + i] * k + j] = sum;
}

#endif							/* PR_GPU_STREAMED_KERNELS_CUH */
