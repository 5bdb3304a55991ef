/*
 * pr_gpu_spmm.h — the k-column product (SpMM) over the row-binned CSR of the single-GPU engine,
 * as one call that enqueues a whole product (pr_gpu_spmm.cu).  C++ (CUDA) callers only; no
 * kernels here.
 */
#ifndef PR_GPU_SPMM_H
#define PR_GPU_SPMM_H

#include <cuda_runtime.h>
#include <stdint.h>

#define PR_SPMM_CHUNK 1024		/* default chunk of long rows when k > 1 (k = 1: 4096) */

/* The row-binned layout on the device (cuda/kernels/pr_gpu_binned_kernels.cuh). */
struct DevBinned;

/*
 * y = M z for k columns over the binned layout bm (long rows: n_long rows whose chunks are
 * chunk_begin[i] .. chunk_begin[i+1]-1; partial holds n_chunks * k values), enqueued on stream;
 * T = float or double.  Returns the first launch error.
 */
template <typename T>
cudaError_t pr_spmm_binned_run(const DevBinned &bm, bool has_val, int64_t n_long, const int32_t *long_row,
							   const int64_t *chunk_begin, int k, const T *z, T *y, T *partial,
							   cudaStream_t stream);

#endif							/* PR_GPU_SPMM_H */
