/*
 * pr_multi_kernels.cuh — the kernels of the multi-GPU PageRank (pr_multi.cu): a CSR product over
 * rows sorted by descending length, the PageRank update with its fixed-order reductions, and the
 * product's inputs and outputs (the column gather, the scaling by 1 / out_strength, the packing of
 * the compact exchange).  Every sum is taken in a fixed order (same bits run to run).
 * The kernels are static: each .cu that includes this file gets its own copy.  T is the type of
 * the vectors and matrix values: float (fp32) or double (fp64); reductions are double either way.
 */
#ifndef PR_MULTI_KERNELS_CUH
#define PR_MULTI_KERNELS_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#define PRM_THREADS 256
#define PRM_CHUNK 8192			/* rows longer than this are cut into chunks of this many */
#define PRM_REDUCE_BLOCKS 1024	/* blocks of the first pass of a reduction */

/* Sum of v over the L lanes of a group (L divides 32), result in the group's first lane. */
template <int L, typename T>
__device__ __forceinline__ T
group_sum(T v)
{
#pragma unroll
	for (int off = L / 2; off > 0; off /= 2)
		v += __shfl_down_sync(0xffffffffu, v, off, L);
	return v;
}

/*
 * y[i] = sum over entries of row i of val * x[col], i < n_rows, L lanes per row; entries of row i
 * are ptr[i] - base .. ptr[i+1] - base.  val == NULL: all 1.
 */
template <int L, typename T = float>
__global__ void __launch_bounds__(PRM_THREADS)
k_csr_rows(int64_t n_rows, const int64_t *__restrict__ ptr, int64_t base,
		   const int32_t *__restrict__ col, const T *__restrict__ val,
		   const T *__restrict__ x, T *__restrict__ y)
{
	int64_t		t = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
	int64_t		row = t / L;
	int			lane = (int) (t % L);
	T			s = 0;

	if (row < n_rows)
	{
		int64_t		e1 = ptr[row + 1] - base;

		for (int64_t e = ptr[row] - base + lane; e < e1; e += L)
			s += (val ? val[e] : (T) 1) * __ldg(x + col[e]);
	}
	s = group_sum<L, T>(s);		/* every lane takes part: no early exit before the shuffles */
	if (row < n_rows && lane == 0)
		y[row] = s;
}

/* Chunk c of a long row: entries chunk_begin[c] .. chunk_end[c]-1, summed by one block. */
template <typename T>
static __global__ void __launch_bounds__(PRM_THREADS)
k_csr_chunks(int64_t n_chunks, const int64_t *__restrict__ chunk_begin,
			 const int64_t *__restrict__ chunk_end, const int32_t *__restrict__ col,
			 const T *__restrict__ val, const T *__restrict__ x, T *__restrict__ partial)
{
	__shared__ T warp_part[PRM_THREADS / 32];
	int64_t		c = blockIdx.x;
	T			s = 0;

	if (c >= n_chunks)
		return;					/* the whole block leaves together */
	for (int64_t e = chunk_begin[c] + threadIdx.x; e < chunk_end[c]; e += PRM_THREADS)
		s += (val ? val[e] : (T) 1) * __ldg(x + col[e]);
	s = group_sum<32, T>(s);
	if ((threadIdx.x & 31) == 0)
		warp_part[threadIdx.x / 32] = s;
	__syncthreads();
	if (threadIdx.x == 0)
	{
		T			t = 0;

		for (int w = 0; w < PRM_THREADS / 32; w++)
			t += warp_part[w];
		partial[c] = t;
	}
}

/*
 * y[i] = sum of its chunks' partials in chunk order, for long rows i < n_long, compensated
 * (Neumaier): the rounding error of each addition collects in carry, so a row of many chunks is
 * within about one rounding of its exact sum.
 */
template <typename T>
static __global__ void __launch_bounds__(PRM_THREADS)
k_long_rows(int64_t n_long, const int64_t *__restrict__ first_chunk,
			const T *__restrict__ partial, T *__restrict__ y)
{
	int64_t		i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n_long)
	{
		T			s = 0,
					carry = 0;

		for (int64_t c = first_chunk[i]; c < first_chunk[i + 1]; c++)
		{
			T			v = partial[c];
			T			t = s + v;

			carry += fabs(s) >= fabs(v) ? (s - t) + v : (v - t) + s;
			s = t;
		}
		y[i] = s + carry;
	}
}

/* Sum of a double over the block in a fixed tree; result valid in thread 0. */
static __device__ __forceinline__ double
block_sum_double(double v, double *sh)
{
	sh[threadIdx.x] = v;
	__syncthreads();
	for (int s = PRM_THREADS / 2; s > 0; s /= 2)
	{
		if ((int) threadIdx.x < s)
			sh[threadIdx.x] += sh[threadIdx.x + s];
		__syncthreads();
	}
	return sh[0];
}

/*
 * The PageRank update of a GPU's own rows: y = alpha * y + (alpha * d + 1 - alpha) / n, with d =
 * red_in[1] (the whole dangling mass of x); writes per-block partials of |y - x| and of the new
 * dangling mass (rows with dangling[i]) into part[2 * block + {0, 1}].
 */
template <typename T>
static __global__ void __launch_bounds__(PRM_THREADS)
k_pr_update(int64_t n_rows, T *__restrict__ y, const T *__restrict__ x,
			const uint8_t *__restrict__ dangling, double alpha, double inv_n,
			const double *__restrict__ red_in, double *__restrict__ part)
{
	__shared__ double sh[PRM_THREADS];
	double		add = (alpha * red_in[1] + (1.0 - alpha)) * inv_n;
	double		res = 0.0,
				dang = 0.0;

	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < n_rows;
		 i += (int64_t) gridDim.x * blockDim.x)
	{
		T			v = (T) (alpha * (double) y[i] + add);

		y[i] = v;
		res += fabs((double) v - (double) x[i]);
		if (dangling[i])
			dang += (double) v;
	}
	res = block_sum_double(res, sh);
	__syncthreads();
	dang = block_sum_double(dang, sh);
	if (threadIdx.x == 0)
	{
		part[2 * blockIdx.x] = res;
		part[2 * blockIdx.x + 1] = dang;
	}
}

/* Per-block partials of the dangling mass of x (own rows): part[2 b] = 0, part[2 b + 1] = mass. */
template <typename T>
static __global__ void __launch_bounds__(PRM_THREADS)
k_dangling_mass(int64_t n_rows, const T *__restrict__ x, const uint8_t *__restrict__ dangling,
				double *__restrict__ part)
{
	__shared__ double sh[PRM_THREADS];
	double		dang = 0.0;

	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < n_rows;
		 i += (int64_t) gridDim.x * blockDim.x)
		if (dangling[i])
			dang += (double) x[i];
	dang = block_sum_double(dang, sh);
	if (threadIdx.x == 0)
	{
		part[2 * blockIdx.x] = 0.0;
		part[2 * blockIdx.x + 1] = dang;
	}
}

/* red[j] = sum over blocks b < n_blocks of part[2 b + j], j = 0, 1 (one block, fixed order). */
static __global__ void __launch_bounds__(PRM_THREADS)
k_finish_pairs(int n_blocks, const double *__restrict__ part, double *__restrict__ red)
{
	__shared__ double sh[PRM_THREADS];

	for (int j = 0; j < 2; j++)
	{
		double		v = 0.0;

		for (int b = threadIdx.x; b < n_blocks; b += PRM_THREADS)
			v += part[2 * b + j];
		v = block_sum_double(v, sh);
		if (threadIdx.x == 0)
			red[j] = v;
		__syncthreads();
	}
}

/* The tiled kernel's input: z[j] = x[map[j]] * scale[j] for the n columns a part reads. */
template <typename T>
static __global__ void __launch_bounds__(PRM_THREADS)
k_gather_columns(int64_t n, const int32_t *__restrict__ map, const T *__restrict__ scale,
				 const T *__restrict__ x, T *__restrict__ z)
{
	for (int64_t j = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; j < n;
		 j += (int64_t) gridDim.x * blockDim.x)
		z[j] = x[map[j]] * scale[j];
}

/* The compact exchange's send buffer: send[i] = own[pack[i]] (pack[i] < 0: padding, 0). */
template <typename T>
__global__ void __launch_bounds__(PRM_THREADS)
k_pack(int64_t n, const int32_t *__restrict__ pack, const T *__restrict__ own, T *__restrict__ send)
{
	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < n;
		 i += (int64_t) gridDim.x * blockDim.x)
		send[i] = pack[i] >= 0 ? own[pack[i]] : (T) 0;
}

/* z[s] = x[s] * inv[s] over all slots (fp64: the product's input, P's values taken from z). */
template <typename T>
static __global__ void __launch_bounds__(PRM_THREADS)
k_scale(int64_t n, const T *__restrict__ x, const double *__restrict__ inv, T *__restrict__ z)
{
	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < n;
		 i += (int64_t) gridDim.x * blockDim.x)
		z[i] = (T) ((double) x[i] * inv[i]);
}

#endif							/* PR_MULTI_KERNELS_CUH */
