/*
 * pr_plan_internal.h — what the planner files (pr_plan.c, pr_plan_blocked.c) share and nobody
 * else uses: the thread helpers of the planners and the builder of the blocked remainder.  Pure
 * C11, no CUDA, no PostgreSQL.  The interface of the planners is pr_plan.h.
 */
#ifndef PR_PLAN_INTERNAL_H
#define PR_PLAN_INTERNAL_H

#include "pr_plan.h"

/* Parallel parts run through pr_parallel_run (pr_common.h). */

/* Threads for work of the given size (small work runs in the caller). */
int			pr_plan_parts(int64_t work);

/* Stable LSD radix sort of 64-bit keys by their upper 32 bits; the result back in keys (tmp: len). */
void		pr_plan_radix_sort_upper(uint64_t *keys, uint64_t *tmp, int64_t len);

/*
 * Builds the blocked remainder (see PrBlockedTail in pr_plan.h) of a composite layout whose
 * remainder columns are [col_begin, pr_plan_csr_cols(csr)): blen[r] is the number of remainder entries of row r
 * that leave the last tile (0 for long rows and rows without remainder entries); they are the
 * last blen[r] entries of row r of csr.  n_long_rows rows stayed in the last tile.  With
 * o->shapes_only only the counts are filled (arrays NULL).  *out is NULL on failure.
 */
PrStatus	pr_plan_blocked_build(const PrPlanCsr *csr, int64_t col_begin, const int32_t *blen,
								  int64_t n_long_rows, const PrCompositeOptions *o,
								  const PrAllocator *alloc, PrBlockedTail **out, PrError *err);

/* Bytes the blocked remainder takes on the device: its arrays (sval when weighted) and the fp32
 * buffer (the engine adds the fp64 difference). */
size_t		pr_plan_blocked_device_bytes(const PrBlockedTail *b, bool weighted);

/*
 * Limits the remainder columns that get per-part cursors in the blocked builder (the others take
 * atomic cursors and a sort), so that tests reach both paths on small graphs; <= 0: the default.
 */
void		pr_plan_blocked_set_hot_columns(int64_t hot);

/* Frees a blocked remainder built by pr_plan_blocked_build (NULL is fine). */
void		pr_plan_blocked_free(PrBlockedTail *b, const PrAllocator *alloc);

#endif							/* PR_PLAN_INTERNAL_H */
