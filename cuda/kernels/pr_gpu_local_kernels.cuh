/*
 * pr_gpu_local_kernels.cuh — the steps of the restart's neighbourhood (the warm start's local
 * part) over the binned CSR: the restart nodes' flags and their bits, the marking pass, the step
 * over the marked rows and the long rows' sums.
 */
#ifndef PR_GPU_LOCAL_KERNELS_CUH
#define PR_GPU_LOCAL_KERNELS_CUH

#include "pr_gpu_primitives.cuh"
#include "pr_gpu_binned_kernels.cuh"

#define PR_MARK_THREADS 1024	/* threads per block of k_local_mark */

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

/* CUB's select predicate: a row the first pass marked. */
struct MarkedRow
{
	const uint32_t *flags;

	__device__ __forceinline__ bool operator()(int32_t v) const
	{
		return flags[v] != 0;
	}
};

#endif							/* PR_GPU_LOCAL_KERNELS_CUH */
