/*
 * pr_gpu_build_kernels.cuh — the kernels of the GPU graph build (pr_gpu_build.cu): the id map by a
 * direct table or by binary search in the sorted ids, the edge keys, the row pointers and the
 * out-strengths.  Grid-stride loops over any block size.  The kernels are static: each .cu that
 * includes this file gets its own copy.
 */
#ifndef PR_GPU_BUILD_KERNELS_CUH
#define PR_GPU_BUILD_KERNELS_CUH

#include <cuda_runtime.h>
#include <stdint.h>
#include <thrust/binary_search.h>
#include <thrust/execution_policy.h>

/* Marks every endpoint's place in the direct id table. */
static __global__ void
k_mark_ids(const int64_t *src, const int64_t *dst, int64_t m, int64_t lo, int32_t *table)
{
	for (int64_t i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; i < m;
		 i += (int64_t) gridDim.x * blockDim.x)
	{
		table[src[i] - lo] = 1;
		table[dst[i] - lo] = 1;
	}
}

/* Node ids from the table's inclusive sums: id lo + r is a node where the sum steps up. */
static __global__ void
k_table_node_ids(const int32_t *sums, int64_t range, int64_t lo, int64_t *node_ids)
{
	for (int64_t r = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; r < range;
		 r += (int64_t) gridDim.x * blockDim.x)
	{
		int32_t		before = r > 0 ? sums[r - 1] : 0;

		if (sums[r] != before)
			node_ids[before] = lo + r;
	}
}

/* Internal ids of the rows' endpoints through the direct table. */
static __global__ void
k_table_ranks(const int64_t *src, const int64_t *dst, int64_t m, int64_t lo, const int32_t *sums,
			  int32_t *rank_src, int32_t *rank_dst)
{
	for (int64_t i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; i < m;
		 i += (int64_t) gridDim.x * blockDim.x)
	{
		rank_src[i] = sums[src[i] - lo] - 1;
		rank_dst[i] = sums[dst[i] - lo] - 1;
	}
}

/* Position of id in the ascending node ids (it is there). */
static __device__ __forceinline__ int32_t
find_id(const int64_t *node_ids, int64_t n, int64_t id)
{
	return (int32_t) (thrust::lower_bound(thrust::seq, node_ids, node_ids + n, id) - node_ids);
}

/* Internal ids of the rows' endpoints by binary search in the sorted node ids. */
static __global__ void
k_search_ranks(const int64_t *src, const int64_t *dst, int64_t m, const int64_t *node_ids,
			   int64_t n, int32_t *rank_src, int32_t *rank_dst)
{
	for (int64_t i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; i < m;
		 i += (int64_t) gridDim.x * blockDim.x)
	{
		rank_src[i] = find_id(node_ids, n, src[i]);
		rank_dst[i] = find_id(node_ids, n, dst[i]);
	}
}

/*
 * The key of each row (destination << bits | source), its reversed key and whether the reverse
 * is stored too (undirected, not a self-loop); counts each stored edge's source.
 */
static __global__ void
k_edge_keys(const int32_t *rank_src, const int32_t *rank_dst, int64_t m, int bits,
			bool undirected, uint64_t *keys, uint64_t *reversed, uint8_t *flags,
			unsigned long long *out_count)
{
	for (int64_t i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; i < m;
		 i += (int64_t) gridDim.x * blockDim.x)
	{
		uint32_t	s = (uint32_t) rank_src[i],
					d = (uint32_t) rank_dst[i];

		keys[i] = ((uint64_t) d << bits) | s;
		atomicAdd(&out_count[s], 1ULL);
		if (undirected)
		{
			bool		both = s != d;

			reversed[i] = ((uint64_t) s << bits) | d;
			flags[i] = both;
			if (both)
				atomicAdd(&out_count[d], 1ULL);
		}
	}
}

/*
 * Row pointers from the sorted keys: position i starts every row after the previous key's
 * destination up to its own (i = stored: up to n).  Also writes the sources.
 */
static __global__ void
k_row_pointers(const uint64_t *keys, int64_t stored, int bits, int64_t n, int64_t *in_ptr,
			   int32_t *in_src)
{
	uint64_t	mask = ((uint64_t) 1 << bits) - 1;

	for (int64_t i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; i <= stored;
		 i += (int64_t) gridDim.x * blockDim.x)
	{
		int64_t		row = i < stored ? (int64_t) (keys[i] >> bits) : n;
		int64_t		before = i > 0 ? (int64_t) (keys[i - 1] >> bits) : -1;

		for (int64_t r = before + 1; r <= row; r++)
			in_ptr[r] = i;
		if (i < stored)
			in_src[i] = (int32_t) (keys[i] & mask);
	}
}

/* Out-strengths (out-degrees) as doubles, and the dangling flags. */
static __global__ void
k_strengths(const unsigned long long *out_count, int64_t n, double *strength, uint8_t *flags)
{
	for (int64_t u = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; u < n;
		 u += (int64_t) gridDim.x * blockDim.x)
	{
		strength[u] = (double) out_count[u];
		flags[u] = out_count[u] == 0;
	}
}

#endif							/* PR_GPU_BUILD_KERNELS_CUH */
