/*
 * pr_gpu_push_local.h — the warm start's local part r + αPr + α²P²r by pushing along out-edge
 * lists (plain C header; the implementation, pr_gpu_push_local.cu, is built into
 * libpowerrank_gpu.so).
 *
 * The GPU engine keeps the pull CSR (in-edges).  Its first way to the local part read every entry
 * twice, multiplying those that leave flagged nodes: ~3.4 ms a pass at R-MAT 24.  From a batch of
 * sources, two hops touch well under 1% of the entries (doc/RESULTS.md), so this
 * module keeps the out-edge lists too — made once per prepared graph from the pull CSR by a
 * stable radix sort — and pushes: a step takes a sparse list of (node * k + column, value) sorted
 * by position, writes one contribution per out-edge of each listed node at the place an exclusive
 * scan of their out-degrees gives, sorts the contributions by position (stable, so equal positions
 * keep that order) and adds equal positions with a reduce-by-key.  No atomics: the same bits every
 * run.  Sums in double.
 */
#ifndef PR_GPU_PUSH_LOCAL_H
#define PR_GPU_PUSH_LOCAL_H

#include "pr_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Out-edge lists and the scratch of the push steps (device memory, kept with the prepared graph). */
typedef struct PrGpuPushLocal PrGpuPushLocal;

/*
 * Makes the out-edge lists of the pull CSR d_ptr[n + 1] / d_col[m] (sources of each row's entries;
 * d_val[m] their weights, or NULL) on the device: the lists keep, per source, its rows in
 * ascending order and their weights; the push steps get room for lists of cap entries (0: m / 64,
 * at least 64 K, at most 4 M; ~56 bytes each).  The sort's temporary buffers (~16 bytes an entry) are freed
 * before returning.  stream: the engine's cudaStream_t (synchronized).  PR_ERR_UNSUPPORTED when m
 * does not fit the 32-bit sort, PR_ERR_NOMEM when device memory runs out (nothing kept),
 * PR_ERR_ENGINE on another CUDA error.
 */
PrStatus	pr_gpu_push_local_create(const int64_t *d_ptr, const int32_t *d_col, const float *d_val,
									 int64_t n, int64_t m, int64_t cap, void *stream,
									 PrGpuPushLocal **out, PrError *err);

/* What pr_gpu_push_local_run did. */
typedef enum PrGpuPushResult
{
	PR_PUSH_NONE = 0,			/* nothing: the restart has more entries than a step holds */
	PR_PUSH_FIRST,				/* the first step only: d_first and d_flags written */
	PR_PUSH_ALL					/* both steps: d_out written */
} PrGpuPushResult;

/*
 * d_out (n x k, row-major, float or double as fp64) = r + alpha P r + alpha² P² r, where d_r is
 * the dense restart (n x k) with at most restart_entries nonzeros, P the normalized pull product
 * (entry weight times d_inv_out of its source) and k <= 32: *result = PR_PUSH_ALL.  When the
 * second step would need more room than the scratch has (sources whose out-neighbours have
 * hundreds of thousands of out-edges), d_first (n x k) = alpha P r and d_flags[v] (n) = the bits
 * of the columns where d_first's row v may be nonzero, d_out untouched: *result = PR_PUSH_FIRST
 * (the caller makes the second step another way).  PR_PUSH_NONE when the first step does not fit
 * either.  Synchronizes stream.
 */
PrStatus	pr_gpu_push_local_run(PrGpuPushLocal *pl, const void *d_r, const void *d_inv_out, bool fp64,
								  int k, double alpha, int64_t restart_entries, void *d_out,
								  void *d_first, uint32_t *d_flags, void *stream,
								  PrGpuPushResult *result, PrError *err);

/* Entries the second step of the last run would have listed when it did not fit (PR_PUSH_FIRST),
 * else 0: how much of the graph a pass or product has to reach instead. */
int64_t		pr_gpu_push_local_second_entries(const PrGpuPushLocal *pl);

/* Device bytes it holds (0 for NULL). */
size_t		pr_gpu_push_local_bytes(const PrGpuPushLocal *pl);

/* Frees it and its device memory (NULL is fine). */
void		pr_gpu_push_local_free(PrGpuPushLocal *pl);

#ifdef __cplusplus
}
#endif

#endif							/* PR_GPU_PUSH_LOCAL_H */
