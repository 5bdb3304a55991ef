/*
 * pr_gpu_vector_kernels.cuh — element-wise kernels over n x k slots: scale, combine, fill, the
 * far-field column, the restart scatter and the permutations between host and private order.
 */
#ifndef PR_GPU_VECTOR_KERNELS_CUH
#define PR_GPU_VECTOR_KERNELS_CUH

#include "pr_engine.h"
#include "pr_gpu_primitives.cuh"

#define PR_MAX_K 256			/* most columns the vector kernels handle */

/*
 * z = x * inv_out (scale) or z = x (scale == nullptr), n x k; with carry, z = x on the nodes whose
 * inv_out is 0 (dangling: no product reads their z, which then holds their mass).
 */
template <typename T>
__global__ void __launch_bounds__(PR_THREADS)
k_scale(int64_t n, int k, const T *__restrict__ x, const T *__restrict__ inv_out, bool carry, T *__restrict__ z)
{
	int64_t		total = n * k;

	for (int64_t q = (int64_t) blockIdx.x * PR_THREADS + threadIdx.x; q < total;
		 q += (int64_t) gridDim.x * PR_THREADS)
	{
		T			io = inv_out ? inv_out[q / k] : (T) 1;

		z[q] = carry && io == (T) 0 ? x[q] : x[q] * io;
	}
}

/* The input slots of k_combine and k_dots, passed by value. */
template <typename T>
struct CombineTerms
{
	const T    *in[PR_COMBINE_MAX_TERMS];
};

/* Most coefficients (terms x columns) k_combine takes by value rather than from device memory. */
#define PR_COMBINE_INLINE 64

/* Coefficients passed by value (no copy to the device, no synchronisation). */
struct CombineInline
{
	double		c[PR_COMBINE_INLINE];
};

/*
 * out = sum over t < n_terms of coef[t * k + j] * in_t, per column j of n x k slots, in double
 * (the warm start's and the accelerated iteration's combinations; out may be one of the inputs:
 * element by element).  The coefficients come from device memory (coef) or, when coef is NULL,
 * by value (inl).  The by-value parameters are __grid_constant__: indexed in place, where taking
 * their address would copy them into every thread's local memory.
 */
template <typename T>
__global__ void __launch_bounds__(PR_THREADS)
k_combine(int64_t total, int k, int n_terms, const __grid_constant__ CombineTerms<T> terms,
		  const double *__restrict__ coef, const __grid_constant__ CombineInline inl, T *out)
{
	const double *c = coef != NULL ? coef : inl.c;

	for (int64_t q = (int64_t) blockIdx.x * PR_THREADS + threadIdx.x; q < total;
		 q += (int64_t) gridDim.x * PR_THREADS)
	{
		int			j = k == 1 ? 0 : (int) (q % k);
		double		v = c[j] * (double) terms.in[0][q];

		for (int t = 1; t < n_terms; t++)
			v += c[t * k + j] * (double) terms.in[t][q];
		out[q] = (T) v;
	}
}

/* v[i] = x[i][0]: column 0 of an n x k slot (keeping the far-field vector). */
template <typename T>
__global__ void __launch_bounds__(PR_THREADS)
k_take_column0(int64_t n, int k, const T *__restrict__ x, T *__restrict__ v)
{
	for (int64_t i = (int64_t) blockIdx.x * PR_THREADS + threadIdx.x; i < n;
		 i += (int64_t) gridDim.x * PR_THREADS)
		v[i] = x[i * k];
}

/* x[i][j] = v[i] for every column j (filling a slot with the far-field vector). */
template <typename T>
__global__ void __launch_bounds__(PR_THREADS)
k_broadcast_columns(int64_t n, int k, const T *__restrict__ v, T *__restrict__ x)
{
	int64_t		total = n * k;

	for (int64_t q = (int64_t) blockIdx.x * PR_THREADS + threadIdx.x; q < total;
		 q += (int64_t) gridDim.x * PR_THREADS)
		x[q] = v[q / k];
}

/* Sets n x k entries to v. */
template <typename T>
__global__ void __launch_bounds__(PR_THREADS)
k_fill(int64_t total, T *__restrict__ x, T v)
{
	for (int64_t q = (int64_t) blockIdx.x * PR_THREADS + threadIdx.x; q < total;
		 q += (int64_t) gridDim.x * PR_THREADS)
		x[q] = v;
}

/* Private-order slot from host-order doubles: x[i][j] = stage[new_to_old[i]][j]. */
template <typename T>
__global__ void __launch_bounds__(PR_THREADS)
k_permute_in(int64_t n, int k, const int32_t *__restrict__ new_to_old,
			 const double *__restrict__ stage, T *__restrict__ x)
{
	int64_t		total = n * k;

	for (int64_t q = (int64_t) blockIdx.x * PR_THREADS + threadIdx.x; q < total;
		 q += (int64_t) gridDim.x * PR_THREADS)
	{
		int64_t		i = q / k;

		x[q] = (T) stage[(int64_t) new_to_old[i] * k + (q - i * k)];
	}
}

/* Writes the restart entries (dense positions, summed weights) into the cleared dense matrix. */
template <typename T>
__global__ void __launch_bounds__(PR_THREADS)
k_restart_scatter(int64_t m, const int64_t *__restrict__ pos, const double *__restrict__ w,
				  T *__restrict__ dense)
{
	int64_t		i = (int64_t) blockIdx.x * PR_THREADS + threadIdx.x;

	if (i < m)
		dense[pos[i]] = (T) w[i];
}

/* Host-order doubles from a private-order slot: stage[new_to_old[i]][j] = x[i][j]. */
template <typename T>
__global__ void __launch_bounds__(PR_THREADS)
k_permute_out(int64_t n, int k, const int32_t *__restrict__ new_to_old, const T *__restrict__ x,
			  double *__restrict__ stage)
{
	int64_t		total = n * k;

	for (int64_t q = (int64_t) blockIdx.x * PR_THREADS + threadIdx.x; q < total;
		 q += (int64_t) gridDim.x * PR_THREADS)
	{
		int64_t		i = q / k;

		stage[(int64_t) new_to_old[i] * k + (q - i * k)] = (double) x[q];
	}
}

#endif							/* PR_GPU_VECTOR_KERNELS_CUH */
