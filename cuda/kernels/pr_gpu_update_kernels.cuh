/*
 * pr_gpu_update_kernels.cuh — the PageRank update over n x k slots (scalar and 16-byte forms),
 * the column sums and the normalization, each with its statistics reduced in a fixed order.
 */
#ifndef PR_GPU_UPDATE_KERNELS_CUH
#define PR_GPU_UPDATE_KERNELS_CUH

#include "pr_gpu_primitives.cuh"
#include "pr_gpu_reduce.cuh"
#include "pr_gpu_vector_kernels.cuh"

#include <thrust/binary_search.h>
#include <thrust/execution_policy.h>

/* One element of the PageRank update (both update kernels): the new value alpha*y + r, returned
 * (0 on an absent node of a delta, whose inv_out is -0); *z = new * inv_out (on a dangling node,
 * whose z no product reads: 0, or with carry the new value itself, so that z holds the dangling
 * mass); |new - x| into *l1 and *linf, the new value into *dsum on a dangling node. */
template <typename T>
__device__ __forceinline__ T
update_element(T y, T x, T io, T r, double alpha, bool carry, T *z, double *l1, double *linf, double *dsum)
{
	T			v = signbit(io) ? (T) 0 : (T) alpha * y + r;
	double		d = fabs((double) v - (double) x);

	*z = carry && io == (T) 0 ? v : v * io;
	*l1 += d;
	*linf = fmax(*linf, d);
	if (io == (T) 0)
		*dsum += (double) v;
	return v;
}

/*
 * The PageRank update, per element of rows [row_begin, row_end): y = alpha*y +
 * (alpha*d_j + 1 - alpha) * r; residual |y - x|; z = y * inv_out (the next product's input; carry:
 * see update_element); dangling mass of y for the next update.  r = restart[i*k+j] when
 * restart != NULL, else 1/n_uniform (n_uniform: the nodes served, a delta's absent nodes left
 * out).  result[j*3 + {0,1,2}] = l1, linf, dangling (over those rows).
 */
template <typename T>
__global__ void __launch_bounds__(PR_THREADS)
k_pagerank_update(int64_t n_uniform, int64_t row_begin, int64_t row_end, int k, T *__restrict__ y,
				  const T *__restrict__ x, const T *__restrict__ inv_out, const T *__restrict__ restart,
				  double alpha, const double *__restrict__ dangling_in, int dangling_stride, bool carry,
				  T *__restrict__ z, double *partials, unsigned int *counter, double *result)
{
	int			rows_per_step = PR_THREADS / k;
	int			j = threadIdx.x % k;
	int64_t		r0 = threadIdx.x / k;
	bool		active = r0 < rows_per_step;
	double		l1 = 0,
				linf = 0,
				dsum = 0;

	if (active)
	{
		double		teleport = alpha * dangling_in[j * dangling_stride] + (1.0 - alpha);
		T			uniform = (T) (teleport / (double) n_uniform);

		for (int64_t i = row_begin + (int64_t) blockIdx.x * rows_per_step + r0; i < row_end;
			 i += (int64_t) gridDim.x * rows_per_step)
		{
			int64_t		q = i * k + j;
			T			r = restart ? (T) (teleport * (double) restart[q]) : uniform;
			T			zq;

			y[q] = update_element<T>(y[q], x[q], inv_out[i], r, alpha, carry, &zq, &l1, &linf, &dsum);
			if (z)
				z[q] = zq;
		}
	}
	reduce_column_stats(l1, linf, dsum, k, rows_per_step, partials, counter, result);
}

/* V adjacent values of an n x k vector (16-byte aligned) as one load / one store. */
__device__ __forceinline__ void
vec_load(const float *p, float *v)
{
	float4		a = *(const float4 *) p;

	v[0] = a.x;
	v[1] = a.y;
	v[2] = a.z;
	v[3] = a.w;
}

/* V = 2 doubles. */
__device__ __forceinline__ void
vec_load(const double *p, double *v)
{
	double2		a = *(const double2 *) p;

	v[0] = a.x;
	v[1] = a.y;
}

/* Stores 4 floats. */
__device__ __forceinline__ void
vec_store(float *p, const float *v)
{
	*(float4 *) p = make_float4(v[0], v[1], v[2], v[3]);
}

/* Stores 2 doubles. */
__device__ __forceinline__ void
vec_store(double *p, const double *v)
{
	*(double2 *) p = make_double2(v[0], v[1]);
}

/*
 * k_pagerank_update with 16-byte loads and stores (V = 4 floats or 2 doubles per thread; k a
 * multiple of V with k / V a power of two), the same values as the scalar kernel.  The restart
 * is dense (restart != NULL), uniform 1/n_uniform (restart == NULL, rs_n < 0), or sparse: the rs_n
 * sorted positions rs_pos with weights rs_w (rs_n >= 0) — the dense matrix's non-zeros, so an RWR
 * update reads no n x k restart matrix.
 */
template <typename T, int V>
__global__ void __launch_bounds__(PR_THREADS)
k_pagerank_update_vec(int64_t n_uniform, int64_t row_begin, int64_t row_end, int k, T *__restrict__ y,
					  const T *__restrict__ x, const T *__restrict__ inv_out, const T *__restrict__ restart,
					  const int64_t *__restrict__ rs_pos, const double *__restrict__ rs_w, int64_t rs_n,
					  double alpha, const double *__restrict__ dangling_in, int dangling_stride, bool carry,
					  T *__restrict__ z, double *partials, unsigned int *counter, double *result)
{
	int			gpr = k / V;	/* threads per row */
	int			rows_per_step = PR_THREADS / gpr;
	int			j0 = ((int) threadIdx.x % gpr) * V;
	int64_t		i = row_begin + (int64_t) blockIdx.x * rows_per_step + (int) threadIdx.x / gpr;
	int64_t		step = (int64_t) gridDim.x * rows_per_step;
	double		teleport[V],
				l1[V],
				linf[V],
				dsum[V];
	T			uniform[V];
	int64_t		cur = 0;

#pragma unroll
	for (int q = 0; q < V; q++)
	{
		teleport[q] = alpha * dangling_in[(j0 + q) * dangling_stride] + (1.0 - alpha);
		uniform[q] = (T) (teleport[q] / (double) n_uniform);
		l1[q] = linf[q] = dsum[q] = 0;
	}
	if (rs_n > 0)				/* first sparse entry at or after this thread's first element */
		cur = thrust::lower_bound(thrust::seq, rs_pos, rs_pos + rs_n, i * k + j0) - rs_pos;
	for (; i < row_end; i += step)
	{
		int64_t		q0 = i * k + j0;
		T			yv[V],
					xv[V],
					rv[V],
					zv[V];
		T			io = inv_out[i];

		vec_load(y + q0, yv);
		vec_load(x + q0, xv);
		if (restart)
			vec_load(restart + q0, rv);
		else
		{
#pragma unroll
			for (int q = 0; q < V; q++)
				rv[q] = 0;
			if (rs_n >= 0)
			{
				while (cur < rs_n && rs_pos[cur] < q0)
					cur++;
				for (int64_t c = cur; c < rs_n && rs_pos[c] < q0 + V; c++)
					rv[rs_pos[c] - q0] = (T) rs_w[c];
			}
		}
#pragma unroll
		for (int q = 0; q < V; q++)
		{
			T			r = (restart || rs_n >= 0) ? (T) (teleport[q] * (double) rv[q]) : uniform[q];

			yv[q] = update_element<T>(yv[q], xv[q], io, r, alpha, carry, &zv[q], &l1[q], &linf[q], &dsum[q]);
		}
		vec_store(y + q0, yv);
		if (z)
			vec_store(z + q0, zv);
	}
	reduce_column_stats_vec<V>(l1, linf, dsum, k, partials, counter, result);
}

/*
 * Column sums (and the dangling mass) of a slot: result[j*3 + {0,1,2}] = sum, unused, dangling.
 * With DANGLING_ONLY, x is read on the dangling rows only, and the sum is theirs too.
 */
template <typename T, bool DANGLING_ONLY = false>
__global__ void __launch_bounds__(PR_THREADS)
k_column_sums(int64_t n, int k, const T *__restrict__ x, const T *__restrict__ inv_out,
			  double *partials, unsigned int *counter, double *result)
{
	int			rows_per_step = PR_THREADS / k;
	int			j = threadIdx.x % k;
	int64_t		r0 = threadIdx.x / k;
	double		s = 0,
				dsum = 0;

	if (r0 < rows_per_step)
		for (int64_t i = (int64_t) blockIdx.x * rows_per_step + r0; i < n;
			 i += (int64_t) gridDim.x * rows_per_step)
		{
			bool		dangling = inv_out[i] == (T) 0;
			double		v = DANGLING_ONLY && !dangling ? 0.0 : (double) x[i * k + j];

			s += v;
			if (dangling)
				dsum += v;
		}
	reduce_column_stats(s, 0.0, dsum, k, rows_per_step, partials, counter, result);
}

/*
 * Per column j and term t < n_terms: the sum over nodes of a[i][j] * in_t[i][j] into
 * result[j * n_terms + t], in a fixed order; one pass over a and the terms.  partials holds
 * [blocks][k][n_terms].
 */
template <typename T>
__global__ void __launch_bounds__(PR_THREADS)
k_dots(int64_t n, int k, int n_terms, const T *__restrict__ a, CombineTerms<T> terms,
	   double *partials, unsigned int *counter, double *result)
{
	__shared__ double sh[PR_THREADS];
	const bool	sums[PR_COMBINE_MAX_TERMS] = {false, false, false, false, false, false, false, false};
	int			rows_per_step = PR_THREADS / k;
	int			j = threadIdx.x % k;
	int64_t		r0 = threadIdx.x / k;
	double		s[PR_COMBINE_MAX_TERMS] = {0, 0, 0, 0, 0, 0, 0, 0};

	if (r0 < rows_per_step)
		for (int64_t i = (int64_t) blockIdx.x * rows_per_step + r0; i < n;
			 i += (int64_t) gridDim.x * rows_per_step)
		{
			double		av = (double) a[i * k + j];

#pragma unroll
			for (int t = 0; t < PR_COMBINE_MAX_TERMS; t++)
				if (t < n_terms)
					s[t] += av * (double) terms.in[t][i * k + j];
		}
#pragma unroll
	for (int t = 0; t < PR_COMBINE_MAX_TERMS; t++)
		if (t < n_terms)
			block_column_reduce(sh, s[t], k, rows_per_step,
								&partials[((size_t) blockIdx.x * k + j) * n_terms + t], false);
	finish_partials(partials, n_terms, sums, k, counter, result);
}

/* Divides each column by its sum (sums of 0 left alone) and measures |x - old| per column. */
template <typename T>
__global__ void __launch_bounds__(PR_THREADS)
k_normalize(int64_t n, int k, T *__restrict__ x, const T *__restrict__ old,
			const double *__restrict__ sums, double *partials, unsigned int *counter,
			double *result)
{
	int			rows_per_step = PR_THREADS / k;
	int			j = threadIdx.x % k;
	int64_t		r0 = threadIdx.x / k;
	double		l1 = 0,
				linf = 0;

	if (r0 < rows_per_step)
	{
		double		s = sums[j * 3];
		T			scale = (T) (s != 0.0 ? 1.0 / s : 1.0);

		for (int64_t i = (int64_t) blockIdx.x * rows_per_step + r0; i < n;
			 i += (int64_t) gridDim.x * rows_per_step)
		{
			int64_t		q = i * k + j;
			T			v = x[q] * scale;

			x[q] = v;
			if (old)
			{
				double		d = fabs((double) v - (double) old[q]);

				l1 += d;
				linf = fmax(linf, d);
			}
		}
	}
	reduce_column_stats(l1, linf, 0.0, k, rows_per_step, partials, counter, result);
}

#endif							/* PR_GPU_UPDATE_KERNELS_CUH */
