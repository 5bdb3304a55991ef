/*
 * pr_topk.h — the k best entries of a score column on the host (pr_topk.c): the order every engine's
 * top-k follows.
 */
#ifndef PR_TOPK_H
#define PR_TOPK_H

#include "pr_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Indices of the k largest values of column col of an n x stride row-major array, best first;
 * ties go to the smaller index.  Writes min(k, n) indices to out and returns that count.
 */
int64_t		pr_top_k(const double *values, int64_t n, int stride, int col, int64_t k,
					 int32_t *out, const PrAllocator *alloc);

/* pr_top_k, and the ranked entries' values (value[i] = the value of out[i]) into value. */
int64_t		pr_top_k_values(const double *values, int64_t n, int stride, int col, int64_t k,
							int32_t *out, double *value, const PrAllocator *alloc);

#ifdef __cplusplus
}
#endif

#endif							/* PR_TOPK_H */
