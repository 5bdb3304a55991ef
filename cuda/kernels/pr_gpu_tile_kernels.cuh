/*
 * pr_gpu_tile_kernels.cuh — the tile-composite product's kernels: one column tile read through L2
 * (CSR-vector and ELL workloads), one shared-memory tile (16-bit tile-local column ids).
 */
#ifndef PR_GPU_TILE_KERNELS_CUH
#define PR_GPU_TILE_KERNELS_CUH

#include "pr_gpu_primitives.cuh"
#include "pr_gpu_partials.cuh"

/* One column tile of the composite layout, as device pointers. */
struct DevTile
{
	int64_t		n_vec;
	int64_t		n_ell;
	int64_t		n_long;
	const int32_t *vec_row;
	const int64_t *vec_ptr;
	const int64_t *ell_off;
	const int32_t *ell_row;
	const int32_t *idx;
	const float *val;
	const int32_t *long_row;
	const int64_t *chunk_begin;
	const uint16_t *idx16;		/* shared-memory tile: tile-local column ids */
	int64_t		col_begin;
	int32_t		width;			/* columns of a shared-memory tile (padding id = width) */
	int32_t		local16;
};

#define PR_SMEM_THREADS 1024	/* threads per block of the shared-memory tile kernel */

/* A CSR-vector workload's sum (its lane 0): the row's result, or a long row's chunk partial (row -1). */
template <typename T, int MODE>
__device__ __forceinline__ void
put_workload(T *__restrict__ y, T *__restrict__ part, T *__restrict__ partial, int32_t row,
			 int64_t w, T s)
{
	if (row >= 0)
		put_row<T, MODE>(y, part, row, w, s);
	else
		partial[w] = s;
}

/* One lane of an ELL group: its entries ix[32 * j] (column ids of type I) and vl[32 * j]. */
template <typename I>
struct EllLane
{
	int64_t		height;			/* entries of each lane of the group */
	int32_t		row;			/* the lane's row, or -1 */
	const I    *ix;
	const float *vl;			/* nullptr without values */
};

/* Lane `lane` of ELL group g of tile t, whose column ids are idx (t.idx or t.idx16). */
template <bool VAL, typename I>
__device__ __forceinline__ EllLane<I>
ell_lane(const DevTile &t, const I *idx, int64_t g, int lane)
{
	int64_t		off = t.ell_off[g];
	EllLane<I>	e;

	e.height = (t.ell_off[g + 1] - off) >> 5;
	e.row = t.ell_row[g * 32 + lane];
	e.ix = idx + off + lane;
	e.vl = VAL ? t.val + off + lane : nullptr;
	return e;
}

/*
 * One tile of the composite layout: warps [0, n_vec) take CSR-vector workloads (chunks of long
 * rows go to partial[]), the next n_ell warps take ELL workloads (a thread per row, column-major).
 * part: the tile's compact-partial slots (PR_MODE_PART): workload w's slot is w, ELL group g's
 * lanes n_vec + 32 g + lane, so the ELL writes are coalesced.
 */
template <typename T, bool VAL, int MODE>
__global__ void __launch_bounds__(PR_THREADS)
k_tile(DevTile t, const T *__restrict__ z, T *__restrict__ y, T *__restrict__ partial,
	   T *__restrict__ part)
{
	int64_t		warp = ((int64_t) blockIdx.x * PR_THREADS + threadIdx.x) >> 5;
	int			lane = threadIdx.x & 31;

	if (warp < t.n_vec)
	{
		int64_t		b = t.vec_ptr[warp],
					e = t.vec_ptr[warp + 1];
		int32_t		row = t.vec_row[warp];
		T			s = warp_range_sum<T, VAL>(t.idx, t.val, z, b, e, lane);

		if (lane == 0)
			put_workload<T, MODE>(y, part, partial, row, warp, s);
		return;
	}
	warp -= t.n_vec;
	if (warp < t.n_ell)
	{
		EllLane<int32_t> ell = ell_lane<VAL>(t, t.idx, warp, lane);
		T			acc = 0;
		int64_t		j = 0;

		for (; j + 4 <= ell.height; j += 4)
		{
			int32_t		c0 = ld_stream(ell.ix + 32 * j),
						c1 = ld_stream(ell.ix + 32 * (j + 1)),
						c2 = ld_stream(ell.ix + 32 * (j + 2)),
						c3 = ld_stream(ell.ix + 32 * (j + 3));
			T			v0 = __ldg(z + c0),
						v1 = __ldg(z + c1),
						v2 = __ldg(z + c2),
						v3 = __ldg(z + c3);

			acc += (T) entry_weight<VAL>(ell.vl, 32 * j) * v0 + (T) entry_weight<VAL>(ell.vl, 32 * (j + 1)) * v1 +
				(T) entry_weight<VAL>(ell.vl, 32 * (j + 2)) * v2 + (T) entry_weight<VAL>(ell.vl, 32 * (j + 3)) * v3;
		}
		for (; j < ell.height; j++)
			acc += (T) entry_weight<VAL>(ell.vl, 32 * j) * __ldg(z + ld_stream(ell.ix + 32 * j));
		if (ell.row >= 0)
			put_row<T, MODE>(y, part, ell.row, t.n_vec + warp * 32 + lane, acc);
	}
}

/*
 * One shared-memory tile: each block copies the tile's slice of z into shared memory, then its
 * warps take workloads in a grid-stride loop; entries hold 16-bit tile-local column ids.
 */
template <typename T, bool VAL, int MODE>
__global__ void __launch_bounds__(PR_SMEM_THREADS, 1)
k_tile_smem(DevTile t, const T *__restrict__ z, T *__restrict__ y, T *__restrict__ partial,
			T *__restrict__ part)
{
	extern __shared__ __align__(16) unsigned char smem_raw[];
	T		   *sz = (T *) smem_raw;
	int			lane = threadIdx.x & 31;
	int			wpb = PR_SMEM_THREADS / 32;
	int64_t		total = t.n_vec + t.n_ell;

	for (int i = threadIdx.x; i < t.width; i += PR_SMEM_THREADS)
		sz[i] = z[t.col_begin + i];
	if (threadIdx.x == 0)
		sz[t.width] = 0;
	__syncthreads();
	for (int64_t w = (int64_t) blockIdx.x * wpb + (threadIdx.x >> 5); w < total;
		 w += (int64_t) gridDim.x * wpb)
	{
		if (w < t.n_vec)
		{
			int64_t		b = t.vec_ptr[w],
						e = t.vec_ptr[w + 1];
			int32_t		row = t.vec_row[w];
			T			acc = 0;
			int64_t		p = b + lane;

			for (; p + 96 < e; p += 128)
			{
				uint16_t	c0 = ld_stream(t.idx16 + p),
							c1 = ld_stream(t.idx16 + p + 32),
							c2 = ld_stream(t.idx16 + p + 64),
							c3 = ld_stream(t.idx16 + p + 96);

				acc += (T) entry_weight<VAL>(t.val, p) * sz[c0] + (T) entry_weight<VAL>(t.val, p + 32) * sz[c1] +
					(T) entry_weight<VAL>(t.val, p + 64) * sz[c2] + (T) entry_weight<VAL>(t.val, p + 96) * sz[c3];
			}
			for (; p < e; p += 32)
				acc += (T) entry_weight<VAL>(t.val, p) * sz[ld_stream(t.idx16 + p)];
			acc = warp_sum(acc);
			if (lane == 0)
				put_workload<T, MODE>(y, part, partial, row, w, acc);
		}
		else
		{
			int64_t		g = w - t.n_vec;
			EllLane<uint16_t> ell = ell_lane<VAL>(t, t.idx16, g, lane);
			T			acc = 0;
			int64_t		j = 0;

			for (; j + 8 <= ell.height; j += 8)
			{
				uint16_t	c[8];

#pragma unroll
				for (int q = 0; q < 8; q++)
					c[q] = ld_stream(ell.ix + 32 * (j + q));
#pragma unroll
				for (int q = 0; q < 8; q++)
					acc += (T) entry_weight<VAL>(ell.vl, 32 * (j + q)) * sz[c[q]];
			}
			for (; j < ell.height; j++)
				acc += (T) entry_weight<VAL>(ell.vl, 32 * j) * sz[ld_stream(ell.ix + 32 * j)];
			if (ell.row >= 0)
				put_row<T, MODE>(y, part, ell.row, t.n_vec + g * 32 + lane, acc);
		}
	}
}

#endif							/* PR_GPU_TILE_KERNELS_CUH */
