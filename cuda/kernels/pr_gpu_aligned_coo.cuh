/*
 * pr_gpu_aligned_coo.cuh — the product over the ALIGNED_COO layout (cuda/plan/pr_plan_aligned_coo.h):
 * a thread per segment walks its entries in row order, four column words and four gathers in
 * flight, and writes each row it finishes; rows spanning segments leave partial sums that a second
 * kernel adds in segment order.  Device code only.
 */
#ifndef PR_GPU_ALIGNED_COO_CUH
#define PR_GPU_ALIGNED_COO_CUH

#include "pr_gpu_primitives.cuh"
#include "pr_plan_aligned_coo.h"

/* The layout's arrays on the device. */
struct DevAlignedCoo
{
	int64_t		n_seg;
	int64_t		seg_len;
	int64_t		n_rows;
	const uint32_t *idx;
	const float *val;
	const int32_t *rows;
	const int32_t *seg_row;
	const uint8_t *seg_flags;
	int64_t		n_split;
	const int32_t *split_row;
	const int32_t *split_first;
	const int32_t *split_last;
};

/* Where a segment's finished row goes: head[] (a row begun by an earlier segment), else y. */
template <typename T>
__device__ __forceinline__ void
aligned_coo_put(T *__restrict__ y, T *__restrict__ head, int64_t seg, int32_t row, bool continued, T sum)
{
	if (continued)
		head[seg] = sum;
	else
		y[row] = sum;
}

/*
 * One thread per segment.  Entry j of segment t is word idx[j * n_seg + t]; a word with
 * PR_ACOO_ROW_START begins the next row in rows[].  The segment's first row goes to head[t] when
 * it began in an earlier segment; its last row to tail[t] when it goes on into the next.
 */
template <typename T, bool VAL>
__global__ void __launch_bounds__(PR_THREADS)
k_aligned_coo(DevAlignedCoo a, const T *__restrict__ z, T *__restrict__ y, T *__restrict__ head,
			  T *__restrict__ tail)
{
	int64_t		t = (int64_t) blockIdx.x * PR_THREADS + threadIdx.x;

	if (t >= a.n_seg)
		return;

	int64_t		r = a.seg_row[t];

	if (r >= a.n_rows)
		return;

	unsigned	flags = a.seg_flags[t];
	bool		continued = (flags & PR_ACOO_HEAD_SPLIT) != 0;
	int32_t		row = a.rows[r];
	T			sum = 0;
	const uint32_t *words = a.idx + t;
	int64_t		stride = a.n_seg;
	int64_t		j = 0;

	for (; j + 4 <= a.seg_len; j += 4)
	{
		uint32_t	w[4];
		T			v[4];

#pragma unroll
		for (int q = 0; q < 4; q++)
			w[q] = ld_stream(words + (j + q) * stride);
#pragma unroll
		for (int q = 0; q < 4; q++)
			v[q] = (T) entry_weight<VAL>(a.val, t + (j + q) * stride) * __ldg(z + (w[q] & PR_ACOO_COL_MASK));
#pragma unroll
		for (int q = 0; q < 4; q++)
		{
			if ((w[q] & PR_ACOO_ROW_START) && j + q > 0)
			{
				aligned_coo_put(y, head, t, row, continued, sum);
				continued = false;
				row = a.rows[++r];
				sum = 0;
			}
			sum += v[q];
		}
	}
	for (; j < a.seg_len; j++)
	{
		uint32_t	w = ld_stream(words + j * stride);
		T			v = (T) entry_weight<VAL>(a.val, t + j * stride) * __ldg(z + (w & PR_ACOO_COL_MASK));

		if ((w & PR_ACOO_ROW_START) && j > 0)
		{
			aligned_coo_put(y, head, t, row, continued, sum);
			continued = false;
			row = a.rows[++r];
			sum = 0;
		}
		sum += v;
	}
	if (continued)
		head[t] = sum;
	else if (flags & PR_ACOO_TAIL_SPLIT)
		tail[t] = sum;
	else
		y[row] = sum;
}

/* Rows spanning segments: y[row] = tail[first] + head[first + 1] + ... + head[last], in that order. */
template <typename T>
__global__ void __launch_bounds__(PR_THREADS)
k_aligned_coo_split_rows(DevAlignedCoo a, T *__restrict__ y, const T *__restrict__ head,
						 const T *__restrict__ tail)
{
	int64_t		i = (int64_t) blockIdx.x * PR_THREADS + threadIdx.x;

	if (i >= a.n_split)
		return;

	int32_t		first = a.split_first[i],
				last = a.split_last[i];
	T			sum = tail[first];

	for (int32_t s = first + 1; s <= last; s++)
		sum += head[s];
	y[a.split_row[i]] = sum;
}

#endif							/* PR_GPU_ALIGNED_COO_CUH */
