/*
 * pr_gpu_topk.h — the top_k best entries of one column of a device vector, ranked on the device
 * (plain C header; the implementation, pr_gpu_topk.cu, is built into libpowerrank_gpu.so).
 *
 * For the GPU engine's top_k operation (core/pr_engine.h): a ranking that wants 10 or 100 rows
 * then copies 10 or 100 (id, score) pairs to the host instead of the whole n x k vector.  The order
 * is pr_top_k's (core/pr_topk.c): larger score first, ties to the smaller internal id, NaN
 * after every number; -0.0 and +0.0 tie.  How: the column is scattered into internal-id order as
 * order-preserving unsigned keys (NaN -> 0, -0 -> +0) with each id's private position, the pairs
 * are sorted descending by cub::DeviceRadixSort (stable, so equal keys stay in id order), and the
 * first top_k positions are gathered into (id, value) pairs and copied down.
 */
#ifndef PR_GPU_TOPK_H
#define PR_GPU_TOPK_H

#include "pr_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Device scratch memory of pr_gpu_topk kept between calls: sort keys and positions (two buffers
 * each), CUB's temporary storage and the output pairs, each grown when a call needs more (never
 * shrunk).  About n x (2 x key + 8) bytes: 16 bytes per node in fp32, 24 in fp64.
 */
typedef struct PrGpuTopkWorkspace PrGpuTopkWorkspace;

/*
 * The top_k best entries of column col of d_x, a device vector of n (+ padding) rows x k_cols
 * columns, row-major, float (fp64 false) or double, in the engine's private order: position p
 * holds internal node d_new_to_old[p] (device array, a permutation of 0..n-1).
 * Writes min(top_k, n) internal ids to host_index and their values (as double, exactly the value
 * a download would give) to host_value, best first.
 *
 * ws: &workspace to keep the scratch memory between calls (*ws NULL before the first call; the
 * workspace is made then, and grown when needed), or NULL to allocate and free it in this call.
 * stream: the engine's cudaStream_t; the call orders its work on it and synchronizes it before
 * returning.  Every CUDA call is checked: PR_ERR_NOMEM when device memory runs out (the workspace
 * stays usable), PR_ERR_ENGINE on another CUDA error, PR_ERR_INVALID on bad arguments.
 */
PrStatus	pr_gpu_topk(PrGpuTopkWorkspace **ws, const void *d_x, bool fp64, int64_t n,
						int k_cols, int col, const int32_t *d_new_to_old, int64_t top_k,
						void *stream, int32_t *host_index, double *host_value, PrError *err);

/*
 * The same for every column of d_x at once (a batch of RWR sources): writes min(top_k, n) ids and
 * values per column to host_index / host_value, column after column.  One pass over the vector
 * counts each column's digit histogram, a second appends each column's candidates (the entries
 * at or above its cut digit), which the host sorts — a few hundred per column for scores that sum
 * to 1, instead of k passes with a device sort each.  A column with very many candidates (ties
 * at the cut) falls back to pr_gpu_topk.  Same results and order as pr_gpu_topk per column.
 * ws must not be NULL.
 */
PrStatus	pr_gpu_topk_columns(PrGpuTopkWorkspace **ws, const void *d_x, bool fp64, int64_t n,
								int k_cols, const int32_t *d_new_to_old, int64_t top_k,
								void *stream, int32_t *host_index, double *host_value,
								PrError *err);

/* Device bytes a workspace holds now (0 for NULL). */
size_t		pr_gpu_topk_workspace_bytes(const PrGpuTopkWorkspace *ws);

/* Frees a workspace and its device memory (NULL is fine). */
void		pr_gpu_topk_free(PrGpuTopkWorkspace *ws);

#ifdef __cplusplus
}
#endif

#endif							/* PR_GPU_TOPK_H */
