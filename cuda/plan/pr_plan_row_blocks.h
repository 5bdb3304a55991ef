/*
 * pr_plan_row_blocks.h — the row-blocks layout of a pull matrix: pure C11, no CUDA, no PostgreSQL.
 *
 * The rows keep their order and are cut into blocks of consecutive rows holding at most `cap`
 * entries together; one GPU block of threads takes one row block: its threads read the block's
 * entries in order (coalesced column ids; the gathers of z follow the graph's own id locality) and
 * stage the products in shared memory, then sum each row in entry order and write it.  A row longer
 * than cap is cut into chunks of `chunk` entries, one GPU block each, whose sums a second kernel
 * adds in chunk order (the long rows of pr_plan.h).  The layout is the CSR itself plus two arrays
 * per block: no values are stored beyond the CSR's own.
 */
#ifndef PR_PLAN_ROW_BLOCKS_H
#define PR_PLAN_ROW_BLOCKS_H

#include "pr_plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Entries a row block stages in shared memory (and the longest row kept whole). */
#define PR_ROW_BLOCK_CAP 2048

/* Entries of one chunk of a longer row. */
#define PR_ROW_BLOCK_CHUNK 4096

/* The row-blocks layout over a CSR (the CSR's own arrays are used as they are). */
typedef struct PrRowBlocks
{
	int64_t		n;				/* rows */
	int64_t		n_blocks;		/* GPU blocks of the product: row blocks and chunks */
	int32_t    *first_row;		/* [n_blocks + 1] block b: rows first_row[b] .. first_row[b + 1] - 1
								 * (a chunk: its row, and the next block's first row) */
	int64_t    *chunk_edge;		/* [n_blocks] a chunk's first entry; -1 for a row block */
	int64_t    *chunk_slot;		/* [n_blocks] a chunk's partial sum slot (its place among the
								 * chunks); -1 for a row block */
	int64_t		n_chunks;		/* chunk blocks */
	PrPlanLongRows longs;		/* rows cut into chunks: partials chunk_begin[i] .. of long_row[i] */
	size_t		device_bytes;	/* the CSR plus the block arrays */
} PrRowBlocks;

/* Cuts the rows of csr into row blocks and chunks. */
PrStatus	pr_plan_row_blocks(const PrPlanCsr *csr, const PrAllocator *alloc, PrRowBlocks *out,
							   PrError *err);

/* Frees a PrRowBlocks. */
void		pr_plan_row_blocks_free(PrRowBlocks *b, const PrAllocator *alloc);

#ifdef __cplusplus
}
#endif

#endif							/* PR_PLAN_ROW_BLOCKS_H */
