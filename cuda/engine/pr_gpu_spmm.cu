/*
 * pr_gpu_spmm.cu — the launches of the k-column product (SpMM) over the row-binned CSR (see
 * pr_gpu_spmm.h; the kernels are in cuda/kernels/pr_gpu_spmm.cuh): the grid of each column block,
 * the kernel picked by padded width and vector width, then the long rows' merge.
 */
#include "pr_gpu_spmm.h"
#include "pr_gpu_spmm.cuh"

#define PR_SPMM_MAX_BLOCK 32	/* columns of one column block (one pass over the matrix) */

/* Smallest power of two >= x (x in 1..32). */
static inline int
spmm_pow2(int x)
{
	int			p = 1;

	while (p < x)
		p <<= 1;
	return p;
}

/* The launch grid of one column block: bin b's rows take rows * G_b / PR_THREADS blocks. */
static inline SpmmGrid
spmm_grid(const DevBinned &bm, int kl)
{
	SpmmGrid	g;
	int64_t		blocks = 0;

	for (int bin = 0; bin < 6; bin++)
	{
		int			lanes = (1 << bin) < 32 / kl ? (1 << bin) : 32 / kl;
		int64_t		rows = bm.bin_begin[bin + 1] - bm.bin_begin[bin];

		g.block_begin[bin] = blocks;
		blocks += (rows * lanes * kl + PR_THREADS - 1) / PR_THREADS;
	}
	g.block_begin[6] = blocks;
	blocks += (bm.n_chunks + PR_THREADS / 32 - 1) / (PR_THREADS / 32);
	g.block_begin[7] = blocks;
	return g;
}

/* Launches k_spmm_binned for a padded width KP, picking the vector width V at run time. */
template <typename T, bool VAL, int KP>
static void
spmm_launch_kp(const DevBinned &bm, int v, int k, int jb, int kc, const T *z, T *y, T *partial,
			   cudaStream_t stream)
{
	SpmmGrid	g = spmm_grid(bm, KP / v);
	unsigned int blocks = (unsigned int) g.block_begin[7];

	if (blocks == 0)
		return;
	if (v >= 4 && KP >= 4 && sizeof(T) == 4)
		k_spmm_binned<T, VAL, KP, (KP >= 4 && sizeof(T) == 4) ? 4 : 1><<<blocks, PR_THREADS, 0, stream>>>(bm, g, k, jb, kc, z, y, partial);
	else if (v >= 2 && KP >= 2)
		k_spmm_binned<T, VAL, KP, KP >= 2 ? 2 : 1><<<blocks, PR_THREADS, 0, stream>>>(bm, g, k, jb, kc, z, y, partial);
	else
		k_spmm_binned<T, VAL, KP, 1><<<blocks, PR_THREADS, 0, stream>>>(bm, g, k, jb, kc, z, y, partial);
}

/* Launches k_spmm_binned for a padded width kp (1, 2, 4, ..., 32; anything else: 32), trying KP
 * and then the next power of two. */
template <typename T, bool VAL, int KP = 1>
static void
spmm_launch_block(const DevBinned &bm, int kp, int v, int k, int jb, int kc, const T *z, T *y,
				  T *partial, cudaStream_t stream)
{
	if constexpr (KP < 32)
	{
		if (kp != KP)
		{
			spmm_launch_block<T, VAL, KP * 2>(bm, kp, v, k, jb, kc, z, y, partial, stream);
			return;
		}
	}
	spmm_launch_kp<T, VAL, KP>(bm, v, k, jb, kc, z, y, partial, stream);
}

/*
 * y = M z for k columns over the binned layout bm (long rows: n_long rows whose chunks are
 * chunk_begin[i] .. chunk_begin[i+1]-1; partial holds n_chunks * k values).  k in 2, 4, 8, 16, 32
 * is one column block at full vector width; other k are padded to a power of two, and k > 32 runs
 * in blocks of 32 columns (one pass over the matrix each).  Returns the first launch error.
 */
template <typename T>
cudaError_t
pr_spmm_binned_run(const DevBinned &bm, bool has_val, int64_t n_long, const int32_t *long_row,
				   const int64_t *chunk_begin, int k, const T *z, T *y, T *partial, cudaStream_t stream)
{
	/* the widest vector whose loads stay aligned: k (the row stride) must be a multiple of it */
	int			vmax = (int) (16 / sizeof(T));

	while (vmax > 1 && k % vmax != 0)
		vmax >>= 1;
	for (int jb = 0; jb < k; jb += PR_SPMM_MAX_BLOCK)
	{
		int			kc = k - jb < PR_SPMM_MAX_BLOCK ? k - jb : PR_SPMM_MAX_BLOCK;
		int			kp = spmm_pow2(kc);
		int			v = vmax < kp ? vmax : kp;
		cudaError_t st;

		if (has_val)
			spmm_launch_block<T, true>(bm, kp, v, k, jb, kc, z, y, partial, stream);
		else
			spmm_launch_block<T, false>(bm, kp, v, k, jb, kc, z, y, partial, stream);
		if ((st = cudaGetLastError()) != cudaSuccess)
			return st;
		if (n_long > 0)
		{
			unsigned int lb = (unsigned int) ((n_long * kc + PR_THREADS - 1) / PR_THREADS);

			k_spmm_long_rows<T><<<lb, PR_THREADS, 0, stream>>>(n_long, k, jb, kc, long_row, chunk_begin, partial, y);
			if ((st = cudaGetLastError()) != cudaSuccess)
				return st;
		}
	}
	return cudaSuccess;
}

/* The two precisions. */
template cudaError_t pr_spmm_binned_run<float>(const DevBinned &, bool, int64_t, const int32_t *, const int64_t *,
											   int, const float *, float *, float *, cudaStream_t);
template cudaError_t pr_spmm_binned_run<double>(const DevBinned &, bool, int64_t, const int32_t *, const int64_t *,
												int, const double *, double *, double *, cudaStream_t);
