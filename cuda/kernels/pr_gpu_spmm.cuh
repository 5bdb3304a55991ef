/*
 * pr_gpu_spmm.cuh — the GPU engine's product for k > 1 columns (SpMM) over the row-binned CSR
 * (DevBinned): the kernels; their launches are in cuda/engine/pr_gpu_spmm.cu.
 *
 * Vectors are n x k row-major, so the k values of one gathered row of z are adjacent: for fp32
 * and k = 8 they are one 32-byte sector, the cost of a single value.  Columns are taken in blocks
 * of up to 32; a block of kc columns is padded to KP (a power of two) and each entry of the matrix
 * is read by KL = KP / V "column lanes", each loading V adjacent values with one vector load
 * (V = 4 floats / 2 doubles when k allows the alignment, else smaller).  A row of bin b (its k = 1
 * lane count L_b = 2^b) gets min(L_b, 32 / KL) entry lanes times KL column lanes; the entry lanes'
 * sums are added with a fixed butterfly.  Rows longer than the chunk are cut into chunks, one warp
 * each, whose per-column partial sums (partial[c * k + j]) a second kernel adds in chunk order.
 * No float atomics anywhere: every result is bit-identical run to run.
 *
 * The unweighted matrices carry no values (VAL = false), as for k = 1: the normalized product
 * gathers the pre-scaled z = x / out_strength.
 */
#ifndef PR_GPU_SPMM_CUH
#define PR_GPU_SPMM_CUH

#include "pr_gpu_primitives.cuh"
#include "pr_gpu_binned_kernels.cuh"

#include <cuda_runtime.h>
#include <stdint.h>

/* Blocks of the SpMM launch per bin: block_begin[b] = first block of bin b (bins 0..5), [6] =
 * first block of the chunk warps, [7] = total.  Depends on the column lanes, so made per launch. */
struct SpmmGrid
{
	int64_t		block_begin[8];
};

/* The CUDA type of V adjacent values of T: T itself (V = 1), float2, float4, double2. */
template <typename T, int V>
struct SpmmVecType
{
	typedef T	type;
};
template <>
struct SpmmVecType<float, 2>
{
	typedef float2 type;
};
template <>
struct SpmmVecType<float, 4>
{
	typedef float4 type;
};
template <>
struct SpmmVecType<double, 2>
{
	typedef double2 type;
};

/* V adjacent values of T as one aligned vector load (V = 1, 2, 4 for float; 1, 2 for double), and
 * one vector store marked evict-first (st.global.cs): y is not read again by this product, so its
 * lines should not push the gathered z out of L2. */
template <typename T, int V>
struct SpmmVec
{
	typedef typename SpmmVecType<T, V>::type W;
	static_assert(sizeof(W) == V * sizeof(T), "no vector type of V values of T");

	/* the vector and its values */
	union		Lanes
	{
		W			w;
		T			v[V];
	};

	static __device__ __forceinline__ void load(const T *p, T *out)
	{
		Lanes		a;

		a.w = __ldg((const W *) p);
#pragma unroll
		for (int q = 0; q < V; q++)
			out[q] = a.v[q];
	}
	static __device__ __forceinline__ void store(T *p, const T *v)
	{
		Lanes		a;

#pragma unroll
		for (int q = 0; q < V; q++)
			a.v[q] = v[q];
		__stcs((W *) p, a.w);
	}
};

/* Adds w * z[c][off .. off+V) into acc. */
template <typename T, int V>
__device__ __forceinline__ void
spmm_axpy(T *acc, T w, const T *__restrict__ z, int32_t c, int k, int off)
{
	T			v[V];

	SpmmVec<T, V>::load(z + (int64_t) c * k + off, v);
#pragma unroll
	for (int q = 0; q < V; q++)
		acc[q] += w * v[q];
}

/*
 * One lane's share of entries [b, e) of a row: entries b + eo, b + eo + L, ...; four entries in
 * flight per lane.  active = false (a padded column lane) loads nothing and leaves acc at 0.
 */
template <typename T, bool VAL, int V, int L>
__device__ __forceinline__ void
spmm_lane_range(const DevBinned &bm, const T *__restrict__ z, int k, int off, int64_t b, int64_t e,
				int eo, bool active, T *acc)
{
	int64_t		p = b + eo;

	if (!active)
		return;
	for (; p + 3 * L < e; p += 4 * L)
	{
		int32_t		c0 = ld_stream(bm.col + p),
					c1 = ld_stream(bm.col + p + L),
					c2 = ld_stream(bm.col + p + 2 * L),
					c3 = ld_stream(bm.col + p + 3 * L);

		spmm_axpy<T, V>(acc, (T) entry_weight<VAL>(bm.val, p), z, c0, k, off);
		spmm_axpy<T, V>(acc, (T) entry_weight<VAL>(bm.val, p + L), z, c1, k, off);
		spmm_axpy<T, V>(acc, (T) entry_weight<VAL>(bm.val, p + 2 * L), z, c2, k, off);
		spmm_axpy<T, V>(acc, (T) entry_weight<VAL>(bm.val, p + 3 * L), z, c3, k, off);
	}
	for (; p < e; p += L)
		spmm_axpy<T, V>(acc, (T) entry_weight<VAL>(bm.val, p), z, ld_stream(bm.col + p), k, off);
}

/* Adds acc over the L entry lanes of a group (lanes KL apart), fixed butterfly order. */
template <typename T, int V, int KL, int L>
__device__ __forceinline__ void
spmm_group_sum(T *acc)
{
#pragma unroll
	for (int off = KL; off < KL * L; off <<= 1)
#pragma unroll
		for (int q = 0; q < V; q++)
			acc[q] += __shfl_xor_sync(0xffffffffu, acc[q], off);
}

/*
 * Rows of bin `bin`: groups of G = L * KL lanes per row (lane = eo * KL + cl); column lane cl
 * covers columns jb + cl * V .. + V of the block; lanes with eo = 0 write the row's values.
 * All 32 lanes of each warp reach the shuffles.
 */
template <typename T, bool VAL, int KP, int V, int L>
__device__ __forceinline__ void
spmm_bin_rows(const DevBinned &bm, int bin, int64_t block_in_bin, int k, int jb, int kc,
			  const T *__restrict__ z, T *__restrict__ y)
{
	constexpr int KL = KP / V;
	constexpr int G = L * KL;
	int			group = threadIdx.x / G;
	int			sub = threadIdx.x % G;
	int			cl = sub % KL;
	int			eo = sub / KL;
	int			off = jb + cl * V;
	bool		active = cl * V < kc;
	int64_t		i = bm.bin_begin[bin] + block_in_bin * (PR_THREADS / G) + group;
	int32_t		row = -1;
	T			acc[V];

#pragma unroll
	for (int q = 0; q < V; q++)
		acc[q] = 0;
	if (i < bm.bin_begin[bin + 1])
	{
		row = bm.rows[i];
		spmm_lane_range<T, VAL, V, L>(bm, z, k, off, bm.ptr[row], bm.ptr[row + 1], eo, active, acc);
	}
	spmm_group_sum<T, V, KL, L>(acc);
	if (row >= 0 && eo == 0 && active)
		SpmmVec<T, V>::store(y + (int64_t) row * k + off, acc);
}

/* Entry lanes of bin b's rows for KL column lanes: the k = 1 count 2^b, at most 32 / KL. */
template <int KL>
__host__ __device__ constexpr int
spmm_entry_lanes(int bin)
{
	return (1 << bin) < 32 / KL ? (1 << bin) : 32 / KL;
}

/*
 * The SpMM over the binned layout for one column block [jb, jb + kc) of a k-column product:
 * blocks [block_begin[b], block_begin[b+1]) take bin b's rows, the rest one chunk of a long row
 * per warp, whose per-column sums go to partial[c * k + jb + j].
 */
template <typename T, bool VAL, int KP, int V>
__global__ void __launch_bounds__(PR_THREADS)
k_spmm_binned(DevBinned bm, SpmmGrid grid, int k, int jb, int kc, const T *__restrict__ z,
			  T *__restrict__ y, T *__restrict__ partial)
{
	constexpr int KL = KP / V;
	int64_t		blk = blockIdx.x;

	if (blk >= grid.block_begin[6])
	{
		constexpr int L = 32 / KL;
		int			lane = threadIdx.x & 31;
		int			cl = lane % KL;
		int			eo = lane / KL;
		int			off = jb + cl * V;
		bool		active = cl * V < kc;
		int64_t		c = (blk - grid.block_begin[6]) * (PR_THREADS / 32) + (threadIdx.x >> 5);
		T			acc[V];

#pragma unroll
		for (int q = 0; q < V; q++)
			acc[q] = 0;
		if (c < bm.n_chunks)
		{
			int32_t		row = bm.chunk_row[c];
			int64_t		beg = bm.chunk_begin_edge[c];
			int64_t		end = min(beg + bm.chunk, bm.ptr[row + 1]);

			spmm_lane_range<T, VAL, V, L>(bm, z, k, off, beg, end, eo, active, acc);
		}
		spmm_group_sum<T, V, KL, L>(acc);
		if (c < bm.n_chunks && eo == 0 && active)
			SpmmVec<T, V>::store(partial + c * k + off, acc);
		return;
	}
	if (blk >= grid.block_begin[5])
		spmm_bin_rows<T, VAL, KP, V, spmm_entry_lanes<KL>(5)>(bm, 5, blk - grid.block_begin[5], k, jb, kc, z, y);
	else if (blk >= grid.block_begin[4])
		spmm_bin_rows<T, VAL, KP, V, spmm_entry_lanes<KL>(4)>(bm, 4, blk - grid.block_begin[4], k, jb, kc, z, y);
	else if (blk >= grid.block_begin[3])
		spmm_bin_rows<T, VAL, KP, V, spmm_entry_lanes<KL>(3)>(bm, 3, blk - grid.block_begin[3], k, jb, kc, z, y);
	else if (blk >= grid.block_begin[2])
		spmm_bin_rows<T, VAL, KP, V, spmm_entry_lanes<KL>(2)>(bm, 2, blk - grid.block_begin[2], k, jb, kc, z, y);
	else if (blk >= grid.block_begin[1])
		spmm_bin_rows<T, VAL, KP, V, spmm_entry_lanes<KL>(1)>(bm, 1, blk - grid.block_begin[1], k, jb, kc, z, y);
	else
		spmm_bin_rows<T, VAL, KP, V, spmm_entry_lanes<KL>(0)>(bm, 0, blk, k, jb, kc, z, y);
}

/* Adds the chunk partials of each long row per column, in chunk order, compensated: thread
 * (i, j) for long row i and column jb + j of the block. */
template <typename T>
__global__ void __launch_bounds__(PR_THREADS)
k_spmm_long_rows(int64_t n_long, int k, int jb, int kc, const int32_t *__restrict__ long_row,
				 const int64_t *__restrict__ chunk_begin, const T *__restrict__ partial,
				 T *__restrict__ y)
{
	int64_t		t = (int64_t) blockIdx.x * PR_THREADS + threadIdx.x;
	int64_t		i = t / kc;
	int			j = jb + (int) (t - i * kc);

	if (i < n_long)
	{
		T			s = 0,
					carry = 0;

		for (int64_t c = chunk_begin[i]; c < chunk_begin[i + 1]; c++)
			compensated_add<T>(s, carry, partial[c * k + j]);
		y[(int64_t) long_row[i] * k + j] = s + carry;
	}
}

#endif							/* PR_GPU_SPMM_CUH */
