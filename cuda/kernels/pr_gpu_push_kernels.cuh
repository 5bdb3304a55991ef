/*
 * pr_gpu_push_kernels.cuh — the kernels of the warm start's push along out-edge lists
 * (pr_gpu_push_local.cu): the lists made from the pull CSR, the restart's non-zeros gathered, one
 * step's contributions emitted per out-edge, and the reduced contributions added or kept as the
 * first step.  Grid-stride loops of PUSH_THREADS threads a block.  The kernels are static: each .cu
 * that includes this file gets its own copy.
 */
#ifndef PR_GPU_PUSH_KERNELS_CUH
#define PR_GPU_PUSH_KERNELS_CUH

#include <cuda_runtime.h>
#include <stdint.h>
#include <thrust/binary_search.h>
#include <thrust/execution_policy.h>

#define PUSH_THREADS 256		/* threads per block of every kernel here */

/* Largest i in [0, len) with a[i] <= t (a non-decreasing, a[0] <= t < a[len]). */
static __device__ __forceinline__ int64_t
last_at_most(const int64_t *a, int64_t len, int64_t t)
{
	return thrust::upper_bound(thrust::seq, a, a + len, t) - a - 1;
}

/* a[i] = i. */
static __global__ void
k_push_iota(int64_t m, int32_t *a)
{
	for (int64_t i = (int64_t) blockIdx.x * PUSH_THREADS + threadIdx.x; i < m; i += (int64_t) gridDim.x * PUSH_THREADS)
		a[i] = (int32_t) i;
}

/* out_ptr[u] = first position of source u in the sorted sources (u = 0 .. n). */
static __global__ void
k_push_out_ptr(int64_t n, int64_t m, const int32_t *sorted_src, int64_t *out_ptr)
{
	for (int64_t u = (int64_t) blockIdx.x * PUSH_THREADS + threadIdx.x; u <= n; u += (int64_t) gridDim.x * PUSH_THREADS)
		out_ptr[u] = thrust::lower_bound(thrust::seq, sorted_src, sorted_src + m, (int32_t) u) - sorted_src;
}

/* out-list entry i: the row of pull entry perm[i] (a search in ptr) and its weight. */
static __global__ void
k_push_out_entries(int64_t m, int64_t n, const int32_t *perm, const int64_t *ptr, const float *val,
				   int32_t *dst, float *w)
{
	for (int64_t i = (int64_t) blockIdx.x * PUSH_THREADS + threadIdx.x; i < m; i += (int64_t) gridDim.x * PUSH_THREADS)
	{
		int64_t		p = perm[i];

		dst[i] = (int32_t) last_at_most(ptr, n, p);
		if (w != NULL)
			w[i] = val[p];
	}
}

/* Selects the nonzero positions of the dense restart. */
template <typename T>
struct PushNonzero
{
	const T    *r;

	__device__ __forceinline__ bool operator()(int64_t p) const
	{
		return r[p] != (T) 0;
	}
};

/* val[i] = r[pos[i]] for the selected positions (count on the device). */
template <typename T>
static __global__ void
k_push_gather(const int64_t *count, const int64_t *pos, const T *r, double *val)
{
	for (int64_t i = (int64_t) blockIdx.x * PUSH_THREADS + threadIdx.x; i < *count; i += (int64_t) gridDim.x * PUSH_THREADS)
		val[i] = (double) r[pos[i]];
}

/* deg[i] = out-degree of the node of list entry i; deg[n_in] = 0 (the scan's total). */
static __global__ void
k_push_degrees(int64_t n_in, int k, const int64_t *pos, const int64_t *out_ptr, int64_t *deg)
{
	for (int64_t i = (int64_t) blockIdx.x * PUSH_THREADS + threadIdx.x; i <= n_in; i += (int64_t) gridDim.x * PUSH_THREADS)
	{
		int64_t		u = i < n_in ? pos[i] / k : 0;

		deg[i] = i < n_in ? out_ptr[u + 1] - out_ptr[u] : 0;
	}
}

/*
 * Contribution t (0 <= t < total): list entry i = the last with off[i] <= t, its node u and
 * column j, out-edge q = the (t - off[i])-th of u: position v * k + j, value alpha * x * w(u,v) *
 * inv_out[u] (w * inv_out first, as the pull product's warm start did).
 */
template <typename T>
static __global__ void
k_push_emit(int64_t total, int64_t n_in, int k, const int64_t *off, const int64_t *in_pos,
			const double *in_val, const int64_t *out_ptr, const int32_t *out_dst, const float *out_w,
			const T *inv_out, double alpha, int64_t *c_pos, double *c_val)
{
	for (int64_t t = (int64_t) blockIdx.x * PUSH_THREADS + threadIdx.x; t < total; t += (int64_t) gridDim.x * PUSH_THREADS)
	{
		int64_t		i = last_at_most(off, n_in, t);
		int64_t		u = in_pos[i] / k;
		int64_t		j = in_pos[i] - u * k;
		int64_t		q = out_ptr[u] + (t - off[i]);
		double		w = (out_w != NULL ? (double) out_w[q] : 1.0) * (double) inv_out[u];

		c_pos[t] = (int64_t) out_dst[q] * k + j;
		c_val[t] = alpha * (w * in_val[i]);
	}
}

/* out[pos[i]] += val[i] over a list of distinct positions (count on the device). */
template <typename T>
static __global__ void
k_push_add(const int64_t *count, const int64_t *pos, const double *val, T *out)
{
	for (int64_t i = (int64_t) blockIdx.x * PUSH_THREADS + threadIdx.x; i < *count; i += (int64_t) gridDim.x * PUSH_THREADS)
		out[pos[i]] = (T) ((double) out[pos[i]] + val[i]);
}

/* first[pos[i]] = val[i] and the bit of pos[i]'s column in flags[pos[i]'s node] (count on the device). */
template <typename T>
static __global__ void
k_push_first(const int64_t *count, int k, const int64_t *pos, const double *val, T *first, uint32_t *flags)
{
	for (int64_t i = (int64_t) blockIdx.x * PUSH_THREADS + threadIdx.x; i < *count; i += (int64_t) gridDim.x * PUSH_THREADS)
	{
		int64_t		v = pos[i] / k;

		first[pos[i]] = (T) val[i];
		atomicOr(&flags[v], 1u << (unsigned int) (pos[i] - v * k));	/* an OR: the same bits in any order */
	}
}

#endif							/* PR_GPU_PUSH_KERNELS_CUH */
