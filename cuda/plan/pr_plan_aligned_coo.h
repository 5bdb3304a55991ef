/*
 * pr_plan_aligned_coo.h — the ALIGNED_COO layout of a pull matrix (after Shah & Patel's aligned
 * COO for power-law matrices): pure C11, no CUDA, no PostgreSQL.
 *
 * The entries are taken in row order (the rows keep their ids: no relabelling) and dealt into
 * n_seg segments of seg_len consecutive entries each.  One GPU thread walks one segment, summing
 * while the row stays the same, so a row's entries are read in order and the reads of z follow the
 * graph's own id locality.  The segments are stored column-major — entry j of segment t at
 * idx[j * n_seg + t] — so the 32 threads of a warp read 32 consecutive words at every step.
 *
 * A row that lies inside one segment is written to y by that segment alone.  A row that spans
 * segments t0 .. t1 (a long row, or one cut by a segment boundary) is written as partial sums —
 * tail[t0] by the segment where it starts, head[t] by every later segment it reaches — and a second
 * pass adds them in segment order: y[row] = tail[t0] + head[t0 + 1] + ... + head[t1].  No segment
 * waits for another, and every sum is taken in a fixed order.
 *
 * An entry that starts a row carries PR_ACOO_ROW_START in its column word; the row ids come from
 * the ascending list of the rows that have entries.  Padding entries (the last segment's tail)
 * point at column n_cols, where z holds 0.  Rows without entries are not in the layout: the product
 * clears y first when there are any.
 */
#ifndef PR_PLAN_ALIGNED_COO_H
#define PR_PLAN_ALIGNED_COO_H

#include "pr_plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bit of a column word marking the first entry of a row. */
#define PR_ACOO_ROW_START 0x80000000u

/* Mask of the column id in a column word. */
#define PR_ACOO_COL_MASK 0x7fffffffu

/* Segment flags: the first entry continues a row of the previous segment; the last row goes on. */
#define PR_ACOO_HEAD_SPLIT 1
#define PR_ACOO_TAIL_SPLIT 2

/* How to build the layout. */
typedef struct PrAlignedCooOptions
{
	int64_t		target_segments;	/* segments wanted (about the threads the device keeps
									 * resident); the segment length follows from it */
	int			min_seg_len;	/* shortest segment (>= 1) */
	int			mean_rows;		/* segments at least this many mean rows long, so that most rows lie
								 * inside one segment (default 2; 0: no such floor) */
} PrAlignedCooOptions;

/* The ALIGNED_COO layout of an in-edge CSR. */
typedef struct PrAlignedCoo
{
	int64_t		n;				/* rows */
	int64_t		n_cols;			/* columns; padding entries point at n_cols */
	int64_t		nnz;
	int64_t		n_seg;			/* segments (a multiple of 32) */
	int64_t		seg_len;		/* entries per segment */
	uint32_t   *idx;			/* [n_seg * seg_len] column words, column-major */
	float	   *val;			/* [n_seg * seg_len] weights (padding 0), or NULL */
	int64_t		n_rows;			/* rows with entries */
	int32_t    *rows;			/* [n_rows] their ids, ascending */
	int32_t    *seg_row;		/* [n_seg] position in rows[] of the row of the segment's first
								 * entry; n_rows for a segment of padding only */
	uint8_t    *seg_flags;		/* [n_seg] PR_ACOO_HEAD_SPLIT | PR_ACOO_TAIL_SPLIT */
	int64_t		n_split;		/* rows spanning two or more segments */
	int32_t    *split_row;		/* [n_split] their ids, ascending */
	int32_t    *split_first;	/* [n_split] segment where the row starts (writes tail[]) */
	int32_t    *split_last;		/* [n_split] last segment it reaches (head[] of first+1 .. last) */
	size_t		device_bytes;	/* the arrays above plus head[] and tail[] (float) */
} PrAlignedCoo;

/* Default options for a device keeping `resident_threads` threads. */
void		pr_plan_aligned_coo_options_init(PrAlignedCooOptions *opt, int64_t resident_threads);

/* Builds the ALIGNED_COO layout of csr (rows in their order; columns as they are). */
PrStatus	pr_plan_aligned_coo(const PrPlanCsr *csr, const PrAlignedCooOptions *opt,
								const PrAllocator *alloc, PrAlignedCoo *out, PrError *err);

/* Frees a PrAlignedCoo. */
void		pr_plan_aligned_coo_free(PrAlignedCoo *a, const PrAllocator *alloc);

#ifdef __cplusplus
}
#endif

#endif							/* PR_PLAN_ALIGNED_COO_H */
