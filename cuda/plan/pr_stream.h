/*
 * pr_stream.h — the block plan for a matrix larger than the GPU memory budget: pure C11, no CUDA,
 * no PostgreSQL.
 *
 * The pull matrix (CSR: int64 row pointers, int32 columns, optional values: float, or double with
 * val_bytes 8 as the single-GPU engine's streamed matrices keep the graph's weights) is cut into B
 * blocks of consecutive rows.  Every iteration the blocks are copied host -> device into two
 * device buffers in turn (double buffering on two CUDA streams) while the previous block is
 * multiplied, so the product runs at the link's speed when transfer-bound.  A block's bytes on
 * the device follow pr_stream_block_layout (each array 256-byte aligned), and every block fits
 * one buffer, i.e. half of the streaming budget.
 *
 * Pinned host memory is bounded by pinned_budget:
 *   - whole:    the CSR arrays fit the budget: they live in pinned memory, each block is copied
 *               as three slices (row pointers, columns, values) into its buffer's layout;
 *   - staged:   it does not: two pinned staging buffers of a block each, filled by the host from
 *               the pageable matrix while the other one is in flight; blocks shrink to fit them;
 *   - pageable: not even a block holding the longest row fits twice in the budget: copies from
 *               pageable memory (slow, no overlap, but it runs: running short never fails).
 * The one error: a single row whose bytes exceed a device buffer (PR_ERR_TOO_LARGE, with the row
 * and the budget needed in the message).
 *
 * Block count: block b costs transfer T_b = latency + bytes_b / bandwidth and compute
 * C_b = launch + edges_b * edge_s + rows_b * row_s; with double buffering one iteration takes
 * T_first + max(sum of the other T, sum of the other C) + C_last (max(sum T, sum C) plus the first
 * transfer and the last compute, which nothing overlaps, with those two not counted twice).
 * Fewer blocks pay less fixed cost; more blocks shrink the unhidden first transfer and last
 * compute.  The planner tries B from the fewest that fit up to max_blocks and keeps the fastest.
 */
#ifndef PR_STREAM_H
#define PR_STREAM_H

#include "pr_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Alignment of each array of a block in a buffer. */
#define PR_STREAM_ALIGN 256

typedef enum PrStreamMode
{
	PR_STREAM_RESIDENT = 0,		/* the whole matrix fits one buffer: one block */
	PR_STREAM_PINNED_WHOLE,		/* blocks copied from a pinned copy of the matrix */
	PR_STREAM_STAGED,			/* blocks staged through two pinned buffers */
	PR_STREAM_PAGEABLE			/* no pinned memory to spare: pageable copies */
} PrStreamMode;

/* Name of a mode ("resident", "pinned", "staged", "pageable"). */
const char *pr_stream_mode_name(PrStreamMode mode);

/* What the planner knows of the machine. */
typedef struct PrStreamParams
{
	bool		has_val;		/* values stored (4 B + val_bytes per entry), else 4 B */
	int			val_bytes;		/* bytes of one value: 4 (float, the default when 0) or 8 (double) */
	size_t		device_budget;	/* device bytes for the matrix (both streaming buffers together) */
	size_t		pinned_budget;	/* pinned host bytes allowed */
	double		h2d_bytes_per_s;	/* host -> device bandwidth (pinned) */
	double		transfer_latency_s; /* fixed cost of one block's copies */
	double		edge_s;			/* compute seconds per entry */
	double		row_s;			/* compute seconds per row */
	double		launch_s;		/* fixed compute cost of one block (launches) */
	int64_t		max_blocks;		/* most blocks to consider (0: 4096) */
	int64_t		force_blocks;	/* > 0: use this many blocks (at least the fewest that fit) */
} PrStreamParams;

/* Fills defaults: values on, budgets 0, H100-like link (50 GB/s, 10 us), 20 ps/edge, 0.1 ns/row. */
void		pr_stream_params_init(PrStreamParams *params);

/* Byte offsets of a block's arrays in a buffer (ptr: rows+1 int64; col: int32; val: the values). */
typedef struct PrStreamLayout
{
	size_t		ptr_off;
	size_t		col_off;
	size_t		val_off;		/* == col_off when no values */
	size_t		bytes;			/* total, aligned: the buffer space the block takes */
	size_t		copy_bytes;		/* bytes copied host -> device (the three slices, unaligned) */
} PrStreamLayout;

/* The layout of rows [r0, r1) of a CSR with row pointers ptr (float values when has_val). */
PrStreamLayout pr_stream_block_layout(const int64_t *ptr, int64_t r0, int64_t r1, bool has_val);

/* The same with values of val_bytes bytes each (0: no values). */
PrStreamLayout pr_stream_block_layout_values(const int64_t *ptr, int64_t r0, int64_t r1, size_t val_bytes);

/* A block plan. */
typedef struct PrStreamPlan
{
	PrStreamMode mode;
	int64_t		n_rows;
	int64_t		nnz;
	bool		has_val;
	int			val_bytes;		/* bytes of one value (0: none) */
	int64_t		n_blocks;
	int64_t		min_blocks;		/* the fewest blocks that fit */
	int64_t    *row_begin;		/* [n_blocks+1] block b = rows row_begin[b] .. row_begin[b+1]-1 */
	size_t		buffer_bytes;	/* capacity of each device buffer (largest block, aligned) */
	size_t		device_bytes;	/* device bytes of the blocks (resident: one block; else 2 buffers) */
	size_t		matrix_bytes;	/* sum of the blocks' copy_bytes: what one iteration transfers */
	size_t		pinned_bytes;	/* pinned host bytes the plan uses */
	double		transfer_s;		/* model: sum of transfers per iteration (0 when resident) */
	double		compute_s;		/* model: sum of computes */
	double		predicted_s;	/* model: one streamed product */
	int			n_candidates;	/* block counts the model compared */
} PrStreamPlan;

/*
 * Plans the blocks of an n-row CSR (ptr[n+1]).  PR_ERR_TOO_LARGE when one row does not fit half
 * of device_budget; PR_ERR_INVALID on a zero budget or bandwidth.
 */
PrStatus	pr_stream_plan(int64_t n, const int64_t *ptr, const PrStreamParams *params,
						   const PrAllocator *alloc, PrStreamPlan *out, PrError *err);

/* The model's time of the given blocks (row_begin[n_blocks+1]); transfers counted unless resident. */
double		pr_stream_predict(const int64_t *ptr, const int64_t *row_begin, int64_t n_blocks,
							  bool has_val, bool resident, const PrStreamParams *params,
							  double *transfer_s, double *compute_s);

/* Frees a plan. */
void		pr_stream_plan_free(PrStreamPlan *plan, const PrAllocator *alloc);

#ifdef __cplusplus
}
#endif

#endif							/* PR_STREAM_H */
