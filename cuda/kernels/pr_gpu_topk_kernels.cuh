/*
 * pr_gpu_topk_kernels.cuh — the kernels of the device top-k (pr_gpu_topk.cu): the order-preserving
 * keys of scores, the scatter of keys and positions, the digit histograms and the candidates above
 * a digit (one column, or a group of columns), the gather of the sorted result.  Grid-stride loops
 * over any block size.
 */
#ifndef PR_GPU_TOPK_KERNELS_CUH
#define PR_GPU_TOPK_KERNELS_CUH

#include <cuda_runtime.h>
#include <limits.h>
#include <stdint.h>

/* Bits of the key digit the candidate histogram counts (2048 bins). */
#define TOPK_DIGIT_BITS 11
#define TOPK_BINS (1 << TOPK_DIGIT_BITS)

/* Key of a float that orders like the host ranking: NaN lowest, -0 = +0, then by value. */
static __device__ __forceinline__ uint32_t
topk_order_key(float v)
{
	uint32_t	u = __float_as_uint(v);

	if ((u & 0x7fffffffu) > 0x7f800000u)
		return 0u;				/* NaN: after every number */
	if ((u & 0x7fffffffu) == 0u)
		u = 0u;					/* -0 ties with +0 */
	return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

/* The same for a double. */
static __device__ __forceinline__ uint64_t
topk_order_key(double v)
{
	uint64_t	u = (uint64_t) __double_as_longlong(v);
	const uint64_t sign = 0x8000000000000000ull;
	const uint64_t inf = 0x7ff0000000000000ull;

	if ((u & ~sign) > inf)
		return 0ull;
	if ((u & ~sign) == 0ull)
		u = 0ull;
	return (u & sign) ? ~u : (u | sign);
}

/* keys[id] = key of x[p][col], pos[id] = p, for every private position p (id = new_to_old[p]). */
template <typename T, typename K>
__global__ void
k_topk_scatter(int64_t n, int k_cols, int col, const T *__restrict__ x,
			   const int32_t *__restrict__ new_to_old, K *__restrict__ keys,
			   int32_t *__restrict__ pos)
{
	for (int64_t p = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; p < n;
		 p += (int64_t) gridDim.x * blockDim.x)
	{
		int32_t		id = new_to_old[p];

		keys[id] = topk_order_key(x[p * k_cols + col]);
		pos[id] = (int32_t) p;
	}
}

/* The first count sorted positions as (internal id, value) pairs. */
template <typename T>
__global__ void
k_topk_gather(int64_t count, int k_cols, int col, const T *__restrict__ x,
			  const int32_t *__restrict__ new_to_old, const int32_t *__restrict__ sorted_pos,
			  int32_t *__restrict__ out_index, double *__restrict__ out_value)
{
	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < count;
		 i += (int64_t) gridDim.x * blockDim.x)
	{
		int64_t		p = sorted_pos[i];

		out_index[i] = new_to_old[p];
		out_value[i] = (double) x[p * k_cols + col];
	}
}

/* Counts the keys' top digits (key >> shift) into hist[TOPK_BINS] (zeroed before). */
template <typename K>
__global__ void
k_topk_histogram(int64_t n, const K *__restrict__ keys, int shift, unsigned int *__restrict__ hist)
{
	__shared__ unsigned int local[TOPK_BINS];

	for (int b = threadIdx.x; b < TOPK_BINS; b += blockDim.x)
		local[b] = 0;
	__syncthreads();
	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < n;
		 i += (int64_t) gridDim.x * blockDim.x)
		atomicAdd(&local[(unsigned int) (keys[i] >> shift)], 1u);
	__syncthreads();
	for (int b = threadIdx.x; b < TOPK_BINS; b += blockDim.x)
		if (local[b] != 0)
			atomicAdd(&hist[b], local[b]);
}

/* Selects the ids whose key's top digit is at least digit. */
template <typename K>
struct TopkDigitAtLeast
{
	const K    *keys;
	int			shift;
	unsigned int digit;

	__device__ __forceinline__ bool operator() (const int32_t &id) const
	{
		return (unsigned int) (keys[id] >> shift) >= digit;
	}
};

/* The keys and positions of the selected ids, in their (id) order. */
template <typename K>
__global__ void
k_topk_candidates(int64_t count, const int32_t *__restrict__ ids, const K *__restrict__ keys,
				  const int32_t *__restrict__ pos, K *__restrict__ cand_keys,
				  int32_t *__restrict__ cand_pos)
{
	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < count;
		 i += (int64_t) gridDim.x * blockDim.x)
	{
		int32_t		id = ids[i];

		cand_keys[i] = keys[id];
		cand_pos[i] = pos[id];
	}
}

/* Bits of the per-column digit histograms of pr_gpu_topk_columns (1024 bins per column). */
#define TOPK_COLS_BITS 10
#define TOPK_COLS_BINS (1 << TOPK_COLS_BITS)

/* Columns one histogram launch counts (their bins fit in 32 kB of shared memory). */
#define TOPK_COLS_GROUP 8

/*
 * Digit histograms of columns [c0, c0 + g) of x (n rows of k_cols): hist[j * TOPK_COLS_BINS + d]
 * counts the keys of column j whose top digit is d (hist zeroed before).
 */
template <typename T, typename K>
__global__ void
k_topk_col_histograms(int64_t n, int k_cols, int c0, int g, const T *__restrict__ x,
					  unsigned int *__restrict__ hist)
{
	__shared__ unsigned int local[TOPK_COLS_GROUP * TOPK_COLS_BINS];
	const int	shift = (int) (sizeof(K) * 8) - TOPK_COLS_BITS;

	for (int b = threadIdx.x; b < g * TOPK_COLS_BINS; b += blockDim.x)
		local[b] = 0;
	__syncthreads();
	for (int64_t q = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; q < n * g;
		 q += (int64_t) gridDim.x * blockDim.x)
	{
		int64_t		p = q / g;
		int			j = (int) (q - p * g);
		K			key = topk_order_key(x[p * k_cols + c0 + j]);

		atomicAdd(&local[j * TOPK_COLS_BINS + (unsigned int) (key >> shift)], 1u);
	}
	__syncthreads();
	for (int b = threadIdx.x; b < g * TOPK_COLS_BINS; b += blockDim.x)
		if (local[b] != 0)
			atomicAdd(&hist[(size_t) c0 * TOPK_COLS_BINS + b], local[b]);
}

/*
 * Appends every entry of x whose key's top digit is at least digit[j] (columns with digit[j] =
 * UINT_MAX take none) to its column's candidates: key, internal id, value.  The order of the
 * appends varies run to run; the host sorts each column's candidates by (key, id), so the result
 * does not.
 */
template <typename T, typename K>
__global__ void
k_topk_col_candidates(int64_t n, int k_cols, const T *__restrict__ x,
					  const int32_t *__restrict__ new_to_old, const unsigned int *__restrict__ digit,
					  int64_t cap, unsigned int *__restrict__ fill, K *__restrict__ cand_key,
					  int32_t *__restrict__ cand_id, T *__restrict__ cand_val)
{
	const int	shift = (int) (sizeof(K) * 8) - TOPK_COLS_BITS;

	for (int64_t q = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; q < n * k_cols;
		 q += (int64_t) gridDim.x * blockDim.x)
	{
		int64_t		p = q / k_cols;
		int			j = (int) (q - p * k_cols);
		T			v = x[q];
		K			key = topk_order_key(v);

		if (digit[j] != UINT_MAX && (unsigned int) (key >> shift) >= digit[j])
		{
			unsigned int slot = atomicAdd(&fill[j], 1u);

			if (slot < cap)
			{
				cand_key[(size_t) j * cap + slot] = key;
				cand_id[(size_t) j * cap + slot] = new_to_old[p];
				cand_val[(size_t) j * cap + slot] = v;
			}
		}
	}
}

#endif							/* PR_GPU_TOPK_KERNELS_CUH */
