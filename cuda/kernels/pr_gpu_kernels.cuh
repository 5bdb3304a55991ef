/*
 * pr_gpu_kernels.cuh — the device code of the GPU engine: sparse products (tile-composite,
 * row-binned; the SpMM for k > 1 is in pr_gpu_spmm.cuh) and the fused vector updates with
 * deterministic reductions.
 * Included once, by pr_gpu.cu.
 *
 * Every product computes y[r] = sum over the row's entries of val * z[col] where z is the
 * pre-scaled vector (x / out_strength for the normalized pull product), so an unweighted matrix
 * carries no values.  z has a zero row at index n that padding entries point at.
 */
#ifndef PR_GPU_KERNELS_CUH
#define PR_GPU_KERNELS_CUH

#include <cuda_runtime.h>
#include <stdint.h>
#include <thrust/binary_search.h>
#include <thrust/execution_policy.h>

#define PR_THREADS 256			/* threads per block of every kernel */
#define PR_RED_BLOCKS 528		/* blocks of the reduction kernels (fixed: fixed summation order) */
#define PR_MAX_K 256			/* most columns the vector kernels handle */

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
#define PR_MARK_THREADS 1024	/* threads per block of k_local_mark */

/* The row-binned layout over a CSR, as device pointers. */
struct DevBinned
{
	const int64_t *ptr;
	const int32_t *col;
	const float *val;
	const int32_t *rows;
	const int64_t *chunk_begin_edge;
	const int32_t *chunk_row;
	int64_t		bin_begin[8];	/* rows of bin b: rows[bin_begin[b] .. bin_begin[b+1]) */
	int64_t		block_begin[8]; /* first block of bin b; block_begin[6] = first chunk block */
	int64_t		n_chunks;
	int64_t		chunk;
};

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

/* How a tile writes its row sums: the first tile stores into y, later tiles add into y or
 * (compact partials) store into their slots of part[]; a merge pass adds those (k_merge). */
#define PR_MODE_STORE 0
#define PR_MODE_ADD 1
#define PR_MODE_PART 2

/* Stores or adds a row's result (PR_MODE_PART: stores slot's partial). */
template <typename T, int MODE>
__device__ __forceinline__ void
put_row(T *__restrict__ y, T *__restrict__ part, int32_t row, int64_t slot, T v)
{
	if (MODE == PR_MODE_PART)
		part[slot] = v;
	else if (MODE == PR_MODE_ADD)
		y[row] += v;
	else
		y[row] = v;
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
		{
			if (row >= 0)
				put_row<T, MODE>(y, part, row, warp, s);
			else
				partial[warp] = s;
		}
		return;
	}
	warp -= t.n_vec;
	if (warp < t.n_ell)
	{
		int64_t		off = t.ell_off[warp];
		int64_t		h = (t.ell_off[warp + 1] - off) >> 5;
		int32_t		row = t.ell_row[warp * 32 + lane];
		const int32_t *ix = t.idx + off + lane;
		const float *vl = VAL ? t.val + off + lane : nullptr;
		T			acc = 0;
		int64_t		j = 0;

		for (; j + 4 <= h; j += 4)
		{
			int32_t		c0 = ld_stream(ix + 32 * j),
						c1 = ld_stream(ix + 32 * (j + 1)),
						c2 = ld_stream(ix + 32 * (j + 2)),
						c3 = ld_stream(ix + 32 * (j + 3));
			T			v0 = __ldg(z + c0),
						v1 = __ldg(z + c1),
						v2 = __ldg(z + c2),
						v3 = __ldg(z + c3);

			acc += (T) entry_weight<VAL>(vl, 32 * j) * v0 + (T) entry_weight<VAL>(vl, 32 * (j + 1)) * v1 +
				(T) entry_weight<VAL>(vl, 32 * (j + 2)) * v2 + (T) entry_weight<VAL>(vl, 32 * (j + 3)) * v3;
		}
		for (; j < h; j++)
			acc += (T) entry_weight<VAL>(vl, 32 * j) * __ldg(z + ld_stream(ix + 32 * j));
		if (row >= 0)
			put_row<T, MODE>(y, part, row, t.n_vec + warp * 32 + lane, acc);
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
			{
				if (row >= 0)
					put_row<T, MODE>(y, part, row, w, acc);
				else
					partial[w] = acc;
			}
		}
		else
		{
			int64_t		g = w - t.n_vec;
			int64_t		off = t.ell_off[g];
			int64_t		h = (t.ell_off[g + 1] - off) >> 5;
			int32_t		row = t.ell_row[g * 32 + lane];
			const uint16_t *ix = t.idx16 + off + lane;
			const float *vl = VAL ? t.val + off + lane : nullptr;
			T			acc = 0;
			int64_t		j = 0;

			for (; j + 8 <= h; j += 8)
			{
				uint16_t	c[8];

#pragma unroll
				for (int q = 0; q < 8; q++)
					c[q] = ld_stream(ix + 32 * (j + q));
#pragma unroll
				for (int q = 0; q < 8; q++)
					acc += (T) entry_weight<VAL>(vl, 32 * (j + q)) * sz[c[q]];
			}
			for (; j < h; j++)
				acc += (T) entry_weight<VAL>(vl, 32 * j) * sz[ld_stream(ix + 32 * j)];
			if (row >= 0)
				put_row<T, MODE>(y, part, row, t.n_vec + g * 32 + lane, acc);
		}
	}
}

/* Adds the chunk partial sums of each long row, in chunk order, compensated (PR_MODE_PART: into
 * the slot of the row's first chunk). */
template <typename T, int MODE>
__global__ void __launch_bounds__(PR_THREADS)
k_long_rows(int64_t n_long, const int32_t *__restrict__ long_row,
			const int64_t *__restrict__ chunk_begin, const T *__restrict__ partial,
			T *__restrict__ y, T *__restrict__ part)
{
	int64_t		i = (int64_t) blockIdx.x * PR_THREADS + threadIdx.x;

	if (i < n_long)
	{
		T			s = 0,
					carry = 0;

		for (int64_t c = chunk_begin[i]; c < chunk_begin[i + 1]; c++)
			compensated_add<T>(s, carry, partial[c]);
		put_row<T, MODE>(y, part, long_row[i], chunk_begin[i], s + carry);
	}
}

/*
 * The merge pass of compact partials: each merge row (ascending) adds its later tiles' partials
 * to y in tile order — the order the add-in-place layout adds them, so the same bits.
 */
template <typename T>
__global__ void __launch_bounds__(PR_THREADS)
k_merge(int64_t n_rows, const int32_t *__restrict__ merge_row, const int64_t *__restrict__ merge_ptr,
		const int32_t *__restrict__ merge_slot, const T *__restrict__ part, T *__restrict__ y)
{
	int64_t		i = (int64_t) blockIdx.x * PR_THREADS + threadIdx.x;

	if (i < n_rows)
	{
		int32_t		row = merge_row[i];
		T			s = y[row];

		for (int64_t q = merge_ptr[i]; q < merge_ptr[i + 1]; q++)
			s += part[ld_stream(merge_slot + q)];
		y[row] = s;
	}
}

/* Rows of one bin, L lanes per row; all 32 lanes of each warp reach the shuffles. */
template <typename T, bool VAL, int L>
__device__ __forceinline__ void
binned_rows(const DevBinned &b, int bin, int64_t block_in_bin, const T *__restrict__ z,
			T *__restrict__ y)
{
	int			group = threadIdx.x / L;
	int			sub = threadIdx.x % L;
	int64_t		i = b.bin_begin[bin] + block_in_bin * (PR_THREADS / L) + group;
	T			acc = 0;
	int32_t		row = -1;

	if (i < b.bin_begin[bin + 1])
	{
		int64_t		e,
					end;

		row = b.rows[i];
		e = b.ptr[row] + sub;
		end = b.ptr[row + 1];
		for (; e + L < end; e += 2 * L)
		{
			int32_t		c0 = ld_stream(b.col + e),
						c1 = ld_stream(b.col + e + L);
			T			v0 = __ldg(z + c0),
						v1 = __ldg(z + c1);

			acc += (T) entry_weight<VAL>(b.val, e) * v0 + (T) entry_weight<VAL>(b.val, e + L) * v1;
		}
		if (e < end)
			acc += (T) entry_weight<VAL>(b.val, e) * __ldg(z + ld_stream(b.col + e));
	}
#pragma unroll
	for (int off = L / 2; off > 0; off >>= 1)
		acc += __shfl_xor_sync(0xffffffffu, acc, off);
	if (row >= 0 && sub == 0)
		y[row] = acc;
}

/* The row-binned product: one launch for all bins, then warps for the chunks of long rows. */
template <typename T, bool VAL>
__global__ void __launch_bounds__(PR_THREADS)
k_binned(DevBinned b, const T *__restrict__ z, T *__restrict__ y, T *__restrict__ partial)
{
	int64_t		blk = blockIdx.x;

	if (blk >= b.block_begin[6])
	{
		int64_t		c = (blk - b.block_begin[6]) * (PR_THREADS / 32) + (threadIdx.x >> 5);
		int			lane = threadIdx.x & 31;

		if (c < b.n_chunks)
		{
			int32_t		row = b.chunk_row[c];
			int64_t		beg = b.chunk_begin_edge[c];
			int64_t		end = min(beg + b.chunk, b.ptr[row + 1]);
			T			s = warp_range_sum<T, VAL>(b.col, b.val, z, beg, end, lane);

			if (lane == 0)
				partial[c] = s;
		}
		return;
	}
	if (blk >= b.block_begin[5])
		binned_rows<T, VAL, 32>(b, 5, blk - b.block_begin[5], z, y);
	else if (blk >= b.block_begin[4])
		binned_rows<T, VAL, 16>(b, 4, blk - b.block_begin[4], z, y);
	else if (blk >= b.block_begin[3])
		binned_rows<T, VAL, 8>(b, 3, blk - b.block_begin[3], z, y);
	else if (blk >= b.block_begin[2])
		binned_rows<T, VAL, 4>(b, 2, blk - b.block_begin[2], z, y);
	else if (blk >= b.block_begin[1])
		binned_rows<T, VAL, 2>(b, 1, blk - b.block_begin[1], z, y);
	else
		binned_rows<T, VAL, 1>(b, 0, blk, z, y);
}

/* ------------------------------------------------------------------------------------------ */
/* Vector kernels.  Reductions: every block writes per-column partials in double; the last block  */
/* to finish (a counter, not a float atomic) adds them in block order.                            */
/* ------------------------------------------------------------------------------------------ */

/* Which rows of the n x k vector a thread visits: threads t < (256/k)*k take column t % k. */
struct VecLayout
{
	int			k;
	int			rows_per_step;	/* 256 / k */
};

/* Block-level fixed-order sum of one value per thread into per-column results by thread j < k. */
__device__ __forceinline__ void
block_column_reduce(double *sh, double v, int k, int rows_per_step, double *out_col_j, bool is_max)
{
	sh[threadIdx.x] = v;
	__syncthreads();
	if ((k & (k - 1)) == 0)
	{
		/* k a power of two: a fixed tree over the rows of the block (stride k) */
		for (int s = PR_THREADS / 2; s >= k; s >>= 1)
		{
			if ((int) threadIdx.x < s)
				sh[threadIdx.x] = is_max ? fmax(sh[threadIdx.x], sh[threadIdx.x + s])
					: sh[threadIdx.x] + sh[threadIdx.x + s];
			__syncthreads();
		}
		if ((int) threadIdx.x < k)
			*out_col_j = sh[threadIdx.x];
		__syncthreads();
		return;
	}
	if ((int) threadIdx.x < k)
	{
		double		s = sh[threadIdx.x];

		for (int r = 1; r < rows_per_step; r++)
		{
			double		w = sh[threadIdx.x + r * k];

			s = is_max ? fmax(s, w) : s + w;
		}
		*out_col_j = s;
	}
	__syncthreads();
}

/*
 * Last-block-done finish: the last block adds the partials [blocks][k][n_vals] in a fixed order
 * (each thread a fixed strided subset, then a fixed tree), so the result never depends on timing.
 */
__device__ __forceinline__ void
finish_partials(const double *partials, int n_vals, const bool *is_max, int k,
				unsigned int *counter, double *result)
{
	__shared__ bool last;
	__shared__ double red[PR_THREADS];

	__threadfence();
	__syncthreads();
	if (threadIdx.x == 0)
		last = (atomicAdd(counter, 1u) == gridDim.x - 1);
	__syncthreads();
	if (!last)
		return;
	__threadfence();
	for (int q = 0; q < k * n_vals; q++)
	{
		bool		mx = is_max[q % n_vals];
		double		s = 0.0;

		for (unsigned int b = threadIdx.x; b < gridDim.x; b += PR_THREADS)
		{
			double		w = ((volatile const double *) partials)[(size_t) b * k * n_vals + q];

			s = mx ? fmax(s, w) : s + w;
		}
		red[threadIdx.x] = s;
		__syncthreads();
		for (int h = PR_THREADS / 2; h > 0; h >>= 1)
		{
			if ((int) threadIdx.x < h)
				red[threadIdx.x] = mx ? fmax(red[threadIdx.x], red[threadIdx.x + h])
					: red[threadIdx.x] + red[threadIdx.x + h];
			__syncthreads();
		}
		if (threadIdx.x == 0)
			result[q] = red[0];
		__syncthreads();
	}
	if (threadIdx.x == 0)
		*counter = 0;
}

/* One element of the PageRank update (both update kernels): the new value alpha*y + r, returned;
 * *z = new * inv_out; |new - x| into *l1 and *linf, the new value into *dsum on a dangling node. */
template <typename T>
__device__ __forceinline__ T
update_element(T y, T x, T io, T r, double alpha, T *z, double *l1, double *linf, double *dsum)
{
	T			v = (T) alpha * y + r;
	double		d = fabs((double) v - (double) x);

	*z = v * io;
	*l1 += d;
	*linf = fmax(*linf, d);
	if (io == (T) 0)
		*dsum += (double) v;
	return v;
}

/*
 * The PageRank update, per element: y = alpha*y + (alpha*d_j + 1 - alpha) * r; residual |y - x|;
 * z = y * inv_out (the next product's input); dangling mass of y for the next update.
 * r = restart[i*k+j] when restart != NULL, else 1/n.  result[j*3 + {0,1,2}] = l1, linf, dangling.
 */
template <typename T>
__global__ void __launch_bounds__(PR_THREADS)
k_pagerank_update(int64_t n, int k, T *__restrict__ y, const T *__restrict__ x,
				  const T *__restrict__ inv_out, const T *__restrict__ restart, double alpha,
				  const double *__restrict__ dangling_in, int dangling_stride, T *__restrict__ z,
				  double *partials, unsigned int *counter, double *result)
{
	__shared__ double sh[PR_THREADS];
	const bool	is_max[3] = {false, true, false};
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
		T			uniform = (T) (teleport / (double) n);

		for (int64_t i = (int64_t) blockIdx.x * rows_per_step + r0; i < n;
			 i += (int64_t) gridDim.x * rows_per_step)
		{
			int64_t		q = i * k + j;
			T			r = restart ? (T) (teleport * (double) restart[q]) : uniform;
			T			zq;

			y[q] = update_element<T>(y[q], x[q], inv_out[i], r, alpha, &zq, &l1, &linf, &dsum);
			if (z)
				z[q] = zq;
		}
	}
	block_column_reduce(sh, l1, k, rows_per_step, &partials[((size_t) blockIdx.x * k + j) * 3 + 0], false);
	block_column_reduce(sh, linf, k, rows_per_step, &partials[((size_t) blockIdx.x * k + j) * 3 + 1], true);
	block_column_reduce(sh, dsum, k, rows_per_step, &partials[((size_t) blockIdx.x * k + j) * 3 + 2], false);
	finish_partials(partials, 3, is_max, k, counter, result);
}

/* Block-level fixed-order sums of V values per thread (thread t holds elements t*V .. t*V+V-1 of
 * a block's run of n x k values, so value q of thread t is column (t*V + q) % k; k a power of
 * two, k <= PR_THREADS): a fixed tree over stride k, column j's result to out[j * 3] by thread j. */
template <int V>
__device__ __forceinline__ void
block_column_reduce_vec(double *sh, const double *v, int k, double *out, bool is_max)
{
#pragma unroll
	for (int q = 0; q < V; q++)
		sh[threadIdx.x * V + q] = v[q];
	__syncthreads();
	for (int s = PR_THREADS * V / 2; s >= k; s >>= 1)
	{
		for (int t = threadIdx.x; t < s; t += PR_THREADS)
			sh[t] = is_max ? fmax(sh[t], sh[t + s]) : sh[t] + sh[t + s];
		__syncthreads();
	}
	if ((int) threadIdx.x < k)
		out[threadIdx.x * 3] = sh[threadIdx.x];
	__syncthreads();
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
 * is dense (restart != NULL), uniform 1/n (restart == NULL, rs_n < 0), or sparse: the rs_n
 * sorted positions rs_pos with weights rs_w (rs_n >= 0) — the dense matrix's non-zeros, so an RWR
 * update reads no n x k restart matrix.
 */
template <typename T, int V>
__global__ void __launch_bounds__(PR_THREADS)
k_pagerank_update_vec(int64_t n, int k, T *__restrict__ y, const T *__restrict__ x,
					  const T *__restrict__ inv_out, const T *__restrict__ restart,
					  const int64_t *__restrict__ rs_pos, const double *__restrict__ rs_w, int64_t rs_n,
					  double alpha, const double *__restrict__ dangling_in, int dangling_stride,
					  T *__restrict__ z, double *partials, unsigned int *counter, double *result)
{
	__shared__ double sh[PR_THREADS * V];
	const bool	is_max[3] = {false, true, false};
	int			gpr = k / V;	/* threads per row */
	int			rows_per_step = PR_THREADS / gpr;
	int			j0 = ((int) threadIdx.x % gpr) * V;
	int64_t		i = (int64_t) blockIdx.x * rows_per_step + (int) threadIdx.x / gpr;
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
		uniform[q] = (T) (teleport[q] / (double) n);
		l1[q] = linf[q] = dsum[q] = 0;
	}
	if (rs_n > 0)				/* first sparse entry at or after this thread's first element */
		cur = thrust::lower_bound(thrust::seq, rs_pos, rs_pos + rs_n, i * k + j0) - rs_pos;
	for (; i < n; i += step)
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

			yv[q] = update_element<T>(yv[q], xv[q], io, r, alpha, &zv[q], &l1[q], &linf[q], &dsum[q]);
		}
		vec_store(y + q0, yv);
		if (z)
			vec_store(z + q0, zv);
	}
	block_column_reduce_vec<V>(sh, l1, k, &partials[(size_t) blockIdx.x * k * 3 + 0], false);
	block_column_reduce_vec<V>(sh, linf, k, &partials[(size_t) blockIdx.x * k * 3 + 1], true);
	block_column_reduce_vec<V>(sh, dsum, k, &partials[(size_t) blockIdx.x * k * 3 + 2], false);
	finish_partials(partials, 3, is_max, k, counter, result);
}

/* Column sums (and the dangling mass) of a slot: result[j*3 + {0,1,2}] = sum, unused, dangling. */
template <typename T>
__global__ void __launch_bounds__(PR_THREADS)
k_column_sums(int64_t n, int k, const T *__restrict__ x, const T *__restrict__ inv_out,
			  double *partials, unsigned int *counter, double *result)
{
	__shared__ double sh[PR_THREADS];
	const bool	is_max[3] = {false, true, false};
	int			rows_per_step = PR_THREADS / k;
	int			j = threadIdx.x % k;
	int64_t		r0 = threadIdx.x / k;
	double		s = 0,
				dsum = 0;

	if (r0 < rows_per_step)
		for (int64_t i = (int64_t) blockIdx.x * rows_per_step + r0; i < n;
			 i += (int64_t) gridDim.x * rows_per_step)
		{
			double		v = (double) x[i * k + j];

			s += v;
			if (inv_out[i] == (T) 0)
				dsum += v;
		}
	block_column_reduce(sh, s, k, rows_per_step, &partials[((size_t) blockIdx.x * k + j) * 3 + 0], false);
	block_column_reduce(sh, 0.0, k, rows_per_step, &partials[((size_t) blockIdx.x * k + j) * 3 + 1], true);
	block_column_reduce(sh, dsum, k, rows_per_step, &partials[((size_t) blockIdx.x * k + j) * 3 + 2], false);
	finish_partials(partials, 3, is_max, k, counter, result);
}

/* Divides each column by its sum (sums of 0 left alone) and measures |x - old| per column. */
template <typename T>
__global__ void __launch_bounds__(PR_THREADS)
k_normalize(int64_t n, int k, T *__restrict__ x, const T *__restrict__ old,
			const double *__restrict__ sums, double *partials, unsigned int *counter,
			double *result)
{
	__shared__ double sh[PR_THREADS];
	const bool	is_max[3] = {false, true, false};
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
	block_column_reduce(sh, l1, k, rows_per_step, &partials[((size_t) blockIdx.x * k + j) * 3 + 0], false);
	block_column_reduce(sh, linf, k, rows_per_step, &partials[((size_t) blockIdx.x * k + j) * 3 + 1], true);
	block_column_reduce(sh, 0.0, k, rows_per_step, &partials[((size_t) blockIdx.x * k + j) * 3 + 2], false);
	finish_partials(partials, 3, is_max, k, counter, result);
}

/* z = x * inv_out (scale) or z = x (scale == nullptr), n x k. */
template <typename T>
__global__ void __launch_bounds__(PR_THREADS)
k_scale(int64_t n, int k, const T *__restrict__ x, const T *__restrict__ inv_out, T *__restrict__ z)
{
	int64_t		total = n * k;

	for (int64_t q = (int64_t) blockIdx.x * PR_THREADS + threadIdx.x; q < total;
		 q += (int64_t) gridDim.x * PR_THREADS)
		z[q] = inv_out ? x[q] * inv_out[q / k] : x[q];
}

/*
 * out = sum over t < n_terms of coef[t * k + j] * in_t, per column j of n x k slots, in double
 * (the warm start's combinations; out may be one of the inputs: element by element).
 */
template <typename T>
__global__ void __launch_bounds__(PR_THREADS)
k_combine(int64_t total, int k, int n_terms, const T *in0, const T *in1, const T *in2,
		  const T *in3, const double *__restrict__ coef, T *out)
{
	for (int64_t q = (int64_t) blockIdx.x * PR_THREADS + threadIdx.x; q < total;
		 q += (int64_t) gridDim.x * PR_THREADS)
	{
		int			j = (int) (q % k);
		double		v = coef[j] * (double) in0[q];

		if (n_terms > 1)
			v += coef[k + j] * (double) in1[q];
		if (n_terms > 2)
			v += coef[2 * k + j] * (double) in2[q];
		if (n_terms > 3)
			v += coef[3 * k + j] * (double) in3[q];
		out[q] = (T) v;
	}
}

/* flags[u] = the columns j (bit j) whose restart distribution has node u: r[u][j] != 0 (k <= 32). */
template <typename T>
__global__ void __launch_bounds__(PR_THREADS)
k_restart_flags(int64_t n, int k, const T *__restrict__ r, uint32_t *__restrict__ flags)
{
	for (int64_t u = (int64_t) blockIdx.x * PR_THREADS + threadIdx.x; u < n;
		 u += (int64_t) gridDim.x * PR_THREADS)
	{
		uint32_t	m = 0;

		for (int j = 0; j < k; j++)
			if (r[u * k + j] != (T) 0)
				m |= 1u << j;
		flags[u] = m;
	}
}

/*
 * Which nodes have a non-zero flag, one bit each (word u / 32, bit u % 32): the first
 * shared_words words in shared memory (the low ids: the degree order puts the most-read columns
 * there), the rest read from global memory.  A step tests the bit before it reads a node's flags,
 * so most of its entries touch no memory beyond the column ids.
 */
struct LocalBits
{
	const uint32_t *shared;
	const uint32_t *global;
	int64_t		shared_nodes;	/* nodes covered by shared: 32 * shared_words */

	__device__ __forceinline__ bool test(int32_t u) const
	{
		uint32_t	w = u < shared_nodes ? shared[u >> 5] : __ldg(global + (u >> 5));

		return (w >> (u & 31)) & 1u;
	}
};

/* bits[w] = the nodes 32w .. 32w+31 whose flag is not zero (n flags; one thread per node). */
static __global__ void __launch_bounds__(PR_THREADS)
k_flag_bits(int64_t n, const uint32_t *__restrict__ flags, uint32_t *__restrict__ bits)
{
	int64_t		words = (n + 31) / 32;

	for (int64_t u = (int64_t) blockIdx.x * PR_THREADS + threadIdx.x; u < words * 32;
		 u += (int64_t) gridDim.x * PR_THREADS)
	{
		unsigned int b = __ballot_sync(0xffffffffu, u < n && flags[u] != 0);

		if ((threadIdx.x & 31) == 0)
			bits[u >> 5] = b;
	}
}

/*
 * One warp's share of a step of the restart's neighbourhood (the warm start): over entries
 * [b, e) of a row of the pull CSR, lane j < k sums w(u,v) * inv_out[u] * x[u][j] over the
 * entries whose source u has flag bit j — x is nonzero only at flagged nodes, so only those few
 * entries are multiplied, in entry order (the same bits every run).  Sources are tested against
 * the flag bits before their flags are read.
 */
template <typename T, bool VAL>
__device__ __forceinline__ double
local_entries(int64_t b, int64_t e, int k, const int32_t *__restrict__ col,
			  const float *__restrict__ val, const LocalBits &bits, const uint32_t *__restrict__ flags_in,
			  const T *__restrict__ inv_out, const T *__restrict__ x)
{
	int			lane = threadIdx.x & 31;
	double		acc = 0.0;

	for (int64_t base = b; base < e; base += 32)
	{
		int64_t		p = base + lane;
		uint32_t	f = 0;
		int32_t		u = 0;
		double		w = 0.0;
		unsigned int flagged;

		if (p < e)
		{
			u = ld_stream(col + p);
			if (bits.test(u))
				f = flags_in[u];
			if (f != 0)
				w = (VAL ? (double) val[p] : 1.0) * (double) inv_out[u];
		}
		flagged = __ballot_sync(0xffffffffu, f != 0);
		while (flagged != 0)
		{
			int			l = __ffs(flagged) - 1;
			uint32_t	fl = __shfl_sync(0xffffffffu, f, l);
			int32_t		ul = __shfl_sync(0xffffffffu, u, l);
			double		wl = __shfl_sync(0xffffffffu, w, l);

			flagged &= flagged - 1;
			if (lane < k && ((fl >> lane) & 1u))
				acc += wl * (double) x[(int64_t) ul * k + lane];
		}
	}
	return acc;
}

/*
 * One lane's share of the marking of a row (or chunk): entries b + eo, b + eo + L, ... of [b, e),
 * four column ids in flight; returns the OR of the flags of the flagged sources among them.
 */
template <int L>
__device__ __forceinline__ uint32_t
mark_lane_range(const int32_t *__restrict__ col, int64_t b, int64_t e, int eo, const LocalBits &bits,
				const uint32_t *__restrict__ flags_in)
{
	uint32_t	f = 0;
	int64_t		p = b + eo;

	for (; p + 3 * L < e; p += 4 * L)
	{
		int32_t		u0 = ld_stream(col + p),
					u1 = ld_stream(col + p + L),
					u2 = ld_stream(col + p + 2 * L),
					u3 = ld_stream(col + p + 3 * L);

		if (bits.test(u0))
			f |= flags_in[u0];
		if (bits.test(u1))
			f |= flags_in[u1];
		if (bits.test(u2))
			f |= flags_in[u2];
		if (bits.test(u3))
			f |= flags_in[u3];
	}
	for (; p < e; p += L)
	{
		int32_t		u = ld_stream(col + p);

		if (bits.test(u))
			f |= flags_in[u];
	}
	return f;
}

/* The marking of bin `bin`'s rows, L lanes a row, for one virtual block's share (block_in_bin;
 * t = the thread's place in the virtual block of PR_THREADS). */
template <int L>
__device__ __forceinline__ void
mark_bin_rows(const DevBinned &bm, int bin, int64_t block_in_bin, int t, const LocalBits &bits,
			  const uint32_t *__restrict__ flags_in, uint32_t *__restrict__ flags_out)
{
	int			eo = t % L;
	int64_t		i = bm.bin_begin[bin] + block_in_bin * (PR_THREADS / L) + t / L;
	int32_t		row = -1;
	uint32_t	f = 0;

	if (i < bm.bin_begin[bin + 1])
	{
		row = bm.rows[i];
		f = mark_lane_range<L>(bm.col, bm.ptr[row], bm.ptr[row + 1], eo, bits, flags_in);
	}
#pragma unroll
	for (int off = 1; off < L; off <<= 1)
		f |= __shfl_xor_sync(0xffffffffu, f, off);
	if (row >= 0 && eo == 0)
		flags_out[row] = f;
}

/*
 * The first pass of a step of the restart's neighbourhood: flags_out[v] = the OR of the flags of
 * v's flagged sources (the nodes the step reaches), over the binned CSR with the product's lanes
 * (2^b a row in bin b, a warp per chunk of a long row: OR-ed in with atomicOr, flags_out cleared
 * before), four entries in flight a lane.  Memory: the column ids, the flag bits (the first
 * shared_words words in shared memory), and the flags of flagged sources only.  The blocks
 * [0, bm.block_begin[7]) of the k = 1 product's launch grid ("virtual blocks" of PR_THREADS) are
 * visited by a grid that fits on the device at once, each real block of PR_MARK_THREADS taking
 * PR_MARK_THREADS / PR_THREADS of them at a time: large blocks, so that each copy of the shared
 * words serves many warps.
 */
static __global__ void __launch_bounds__(PR_MARK_THREADS, 2)
k_local_mark(DevBinned bm, const uint32_t *__restrict__ bits_in, int64_t shared_words,
			 const uint32_t *__restrict__ flags_in, uint32_t *__restrict__ flags_out)
{
	extern __shared__ uint32_t shared_bits[];
	LocalBits	bits = {shared_bits, bits_in, shared_words * 32};
	constexpr int per_block = PR_MARK_THREADS / PR_THREADS;
	int			t = threadIdx.x % PR_THREADS;

	for (int64_t w = threadIdx.x; w < shared_words; w += PR_MARK_THREADS)
		shared_bits[w] = bits_in[w];
	__syncthreads();
	for (int64_t blk = (int64_t) blockIdx.x * per_block + threadIdx.x / PR_THREADS; blk < bm.block_begin[7];
		 blk += (int64_t) gridDim.x * per_block)
	{
		if (blk >= bm.block_begin[6])
		{
			int64_t		c = (blk - bm.block_begin[6]) * (PR_THREADS / 32) + (t >> 5);
			uint32_t	f = 0;
			int32_t		row = -1;

			if (c < bm.n_chunks)
			{
				int64_t		b = bm.chunk_begin_edge[c];

				row = bm.chunk_row[c];
				f = mark_lane_range<32>(bm.col, b, min(b + bm.chunk, bm.ptr[row + 1]), threadIdx.x & 31, bits, flags_in);
			}
			f = __reduce_or_sync(0xffffffffu, f);
			if (row >= 0 && (threadIdx.x & 31) == 0 && f != 0)
				atomicOr(&flags_out[row], f);
		}
		else if (blk >= bm.block_begin[5])
			mark_bin_rows<32>(bm, 5, blk - bm.block_begin[5], t, bits, flags_in, flags_out);
		else if (blk >= bm.block_begin[4])
			mark_bin_rows<16>(bm, 4, blk - bm.block_begin[4], t, bits, flags_in, flags_out);
		else if (blk >= bm.block_begin[3])
			mark_bin_rows<8>(bm, 3, blk - bm.block_begin[3], t, bits, flags_in, flags_out);
		else if (blk >= bm.block_begin[2])
			mark_bin_rows<4>(bm, 2, blk - bm.block_begin[2], t, bits, flags_in, flags_out);
		else if (blk >= bm.block_begin[1])
			mark_bin_rows<2>(bm, 1, blk - bm.block_begin[1], t, bits, flags_in, flags_out);
		else
			mark_bin_rows<1>(bm, 0, blk, t, bits, flags_in, flags_out);
	}
}

/*
 * The second pass of a step of the restart's neighbourhood: h = P x restricted to flagged sources
 * (see local_entries) on the rows the first pass marked — warps [0, *n_marked) take the listed
 * binned rows (one each), the rest one chunk of a long row each (chunks of unmarked rows give 0),
 * whose sums go to partial[c * k + j] (added in chunk order by k_local_long_rows).  The other rows
 * of h are left as they are (cleared before).  k <= 32.  Any grid: warps stride over the items.
 */
template <typename T, bool VAL>
__global__ void __launch_bounds__(PR_THREADS)
k_local_step(DevBinned bm, const int32_t *__restrict__ marked, const int *__restrict__ n_marked, int k,
			 const uint32_t *__restrict__ bits_in, const uint32_t *__restrict__ flags_in,
			 const uint32_t *__restrict__ flags_out, const T *__restrict__ inv_out,
			 const T *__restrict__ x, T *__restrict__ h, T *__restrict__ partial)
{
	int			lane = threadIdx.x & 31;
	int64_t		n_rows = *n_marked;
	int64_t		items = n_rows + bm.n_chunks;
	int64_t		warps = (int64_t) gridDim.x * (PR_THREADS / 32);
	LocalBits	bits = {NULL, bits_in, 0};

	for (int64_t w = (int64_t) blockIdx.x * (PR_THREADS / 32) + threadIdx.x / 32; w < items; w += warps)
	{
		if (w < n_rows)
		{
			int32_t		v = marked[w];
			double		acc = local_entries<T, VAL>(bm.ptr[v], bm.ptr[v + 1], k, bm.col, bm.val,
												   bits, flags_in, inv_out, x);

			if (lane < k)
				h[(int64_t) v * k + lane] = (T) acc;
		}
		else
		{
			int64_t		c = w - n_rows;
			int32_t		v = bm.chunk_row[c];
			int64_t		b = bm.chunk_begin_edge[c];
			int64_t		e = min(b + bm.chunk, bm.ptr[v + 1]);
			double		acc = flags_out[v] == 0 ? 0.0 :
				local_entries<T, VAL>(b, e, k, bm.col, bm.val, bits, flags_in, inv_out, x);

			if (lane < k)
				partial[c * k + lane] = (T) acc;
		}
	}
}

/* h of the long rows: their chunks' sums added in chunk order, compensated, thread (i, j) for
 * long row i. */
template <typename T>
__global__ void __launch_bounds__(PR_THREADS)
k_local_long_rows(int64_t n_long, int k, const int32_t *__restrict__ long_row,
				  const int64_t *__restrict__ chunk_begin, const T *__restrict__ partial,
				  T *__restrict__ h)
{
	int64_t		t = (int64_t) blockIdx.x * PR_THREADS + threadIdx.x;
	int64_t		i = t / k;
	int			j = (int) (t - i * k);

	if (i < n_long)
	{
		double		s = 0.0,
					carry = 0.0;

		for (int64_t c = chunk_begin[i]; c < chunk_begin[i + 1]; c++)
			compensated_add<double>(s, carry, (double) partial[c * k + j]);
		h[(int64_t) long_row[i] * k + j] = (T) (s + carry);
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

#endif							/* PR_GPU_KERNELS_CUH */
