/*
 * pr_gpu_primitives.cuh — the device primitives every sparse product shares: the block size, the
 * streamed index load, an entry's weight, warp sums, the compensated sum and a warp's sum over a
 * run of entries.
 *
 * Every product computes y[r] = sum over the row's entries of val * z[col] where z is the
 * pre-scaled vector (x / out_strength for the normalized pull product), so an unweighted matrix
 * carries no values.  z has a zero row at index n that padding entries point at.
 */
#ifndef PR_GPU_PRIMITIVES_CUH
#define PR_GPU_PRIMITIVES_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#define PR_THREADS 256			/* threads per block of every kernel */

/* A load of the streamed index arrays: read once per product, marked evict-first (ld.global.cs)
 * so they do not push the gathered vector out of L2. */
template <typename I>
__device__ __forceinline__ I
ld_stream(const I *p)
{
	return __ldcs(p);
}

/* Weight of entry p (1 when the matrix carries no values). */
template <bool VAL>
__device__ __forceinline__ float
entry_weight(const float *__restrict__ val, int64_t p)
{
	if (VAL)
		return __ldg(val + p);
	return 1.0f;
}

/* Sum over a warp, in a fixed butterfly order. */
template <typename T>
__device__ __forceinline__ T
warp_sum(T v)
{
#pragma unroll
	for (int off = 16; off > 0; off >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, off);
	return v;
}

/*
 * Adds v to the compensated sum s + carry (Neumaier's variant of Kahan summation): the rounding
 * error of each addition collects in carry, so the chunk sums of a row of a million edges add up
 * to within about one rounding, not thousands (the iterates would wander by that much and a
 * tight tolerance never be met).
 */
template <typename T>
__device__ __forceinline__ void
compensated_add(T &s, T &carry, T v)
{
	T			t = s + v;

	carry += fabs(s) >= fabs(v) ? (s - t) + v : (v - t) + s;
	s = t;
}

/* Sum of z over entries [b, e) taken by the 32 lanes of a warp, four loads in flight per lane. */
template <typename T, bool VAL>
__device__ __forceinline__ T
warp_range_sum(const int32_t *__restrict__ idx, const float *__restrict__ val,
			   const T *__restrict__ z, int64_t b, int64_t e, int lane)
{
	T			acc = 0;
	int64_t		p = b + lane;

	for (; p + 96 < e; p += 128)
	{
		int32_t		c0 = ld_stream(idx + p),
					c1 = ld_stream(idx + p + 32),
					c2 = ld_stream(idx + p + 64),
					c3 = ld_stream(idx + p + 96);
		T			v0 = __ldg(z + c0),
					v1 = __ldg(z + c1),
					v2 = __ldg(z + c2),
					v3 = __ldg(z + c3);

		acc += (T) entry_weight<VAL>(val, p) * v0 + (T) entry_weight<VAL>(val, p + 32) * v1 +
			(T) entry_weight<VAL>(val, p + 64) * v2 + (T) entry_weight<VAL>(val, p + 96) * v3;
	}
	for (; p < e; p += 32)
		acc += (T) entry_weight<VAL>(val, p) * __ldg(z + ld_stream(idx + p));
	return warp_sum(acc);
}

#endif							/* PR_GPU_PRIMITIVES_CUH */
