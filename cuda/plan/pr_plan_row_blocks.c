/*
 * pr_plan_row_blocks.c — builds the row-blocks layout (see pr_plan_row_blocks.h): one pass over
 * the rows to count, one to fill.
 */
#include "pr_plan_row_blocks.h"

#include <string.h>

/* Most rows a row block takes (many empty rows in a row would otherwise make one block long). */
#define ROW_BLOCK_MAX_ROWS 1024

/* Walks the rows as the layout cuts them; fills the arrays when out's are allocated. */
static void
cut_rows(const PrPlanCsr *csr, PrRowBlocks *out, int64_t *n_blocks, int64_t *n_chunks, int64_t *n_long)
{
	int64_t		b = 0,
				c = 0,
				l = 0,
				r = 0;
	bool		fill = out->first_row != NULL;

	while (r < csr->n)
	{
		int64_t		len = csr->ptr[r + 1] - csr->ptr[r];

		if (len > PR_ROW_BLOCK_CAP)
		{
			/* a long row: chunks of PR_ROW_BLOCK_CHUNK entries */
			if (fill)
			{
				out->longs.long_row[l] = (int32_t) r;
				out->longs.chunk_begin[l] = c;
			}
			for (int64_t p = csr->ptr[r]; p < csr->ptr[r + 1]; p += PR_ROW_BLOCK_CHUNK)
			{
				if (fill)
				{
					out->first_row[b] = (int32_t) r;
					out->chunk_edge[b] = p;
					out->chunk_slot[b] = c;
				}
				b++;
				c++;
			}
			l++;
			r++;
			continue;
		}
		/* a row block: consecutive rows of at most PR_ROW_BLOCK_CAP entries together */
		{
			int64_t		r0 = r,
						entries = 0;

			while (r < csr->n && r - r0 < ROW_BLOCK_MAX_ROWS)
			{
				int64_t		next = csr->ptr[r + 1] - csr->ptr[r];

				if (next > PR_ROW_BLOCK_CAP || entries + next > PR_ROW_BLOCK_CAP)
					break;
				entries += next;
				r++;
			}
			if (fill)
			{
				out->first_row[b] = (int32_t) r0;
				out->chunk_edge[b] = -1;
				out->chunk_slot[b] = -1;
			}
			b++;
		}
	}
	if (fill)
	{
		out->first_row[b] = (int32_t) csr->n;
		out->longs.chunk_begin[l] = c;
	}
	*n_blocks = b;
	*n_chunks = c;
	*n_long = l;
}

/* Cuts the rows of csr into row blocks and chunks. */
PrStatus
pr_plan_row_blocks(const PrPlanCsr *csr, const PrAllocator *alloc, PrRowBlocks *out, PrError *err)
{
	int64_t		n_blocks,
				n_chunks,
				n_long;

	memset(out, 0, sizeof(*out));
	if (csr->n > PR_PLAN_MAX_NODES_CHECK)
		return pr_error_set(err, PR_ERR_TOO_LARGE, "row-blocks layout: %lld rows exceed the 32-bit ids",
							(long long) csr->n);
	out->n = csr->n;
	cut_rows(csr, out, &n_blocks, &n_chunks, &n_long);
	out->first_row = (int32_t *) pr_alloc_array(alloc, (size_t) n_blocks + 1, sizeof(int32_t));
	out->chunk_edge = (int64_t *) pr_alloc_array(alloc, (size_t) n_blocks + 1, sizeof(int64_t));
	out->chunk_slot = (int64_t *) pr_alloc_array(alloc, (size_t) n_blocks + 1, sizeof(int64_t));
	if (!pr_plan_long_rows_alloc(&out->longs, n_long, alloc) || out->first_row == NULL ||
		out->chunk_edge == NULL || out->chunk_slot == NULL)
	{
		pr_plan_row_blocks_free(out, alloc);
		return pr_error_set(err, PR_ERR_NOMEM, "row-blocks layout: out of host memory");
	}
	cut_rows(csr, out, &n_blocks, &n_chunks, &n_long);
	out->n_blocks = n_blocks;
	out->n_chunks = n_chunks;
	out->device_bytes = (size_t) (csr->n + 1) * 8 + (size_t) csr->nnz * (csr->val ? 8 : 4) +
		(size_t) (n_blocks + 1) * 20 + (size_t) (n_long + 1) * 12 + (size_t) (n_chunks + 1) * 8;
	return PR_OK;
}

/* Frees a PrRowBlocks. */
void
pr_plan_row_blocks_free(PrRowBlocks *b, const PrAllocator *alloc)
{
	pr_free(alloc, b->first_row);
	pr_free(alloc, b->chunk_edge);
	pr_free(alloc, b->chunk_slot);
	pr_plan_long_rows_free(&b->longs, alloc);
	memset(b, 0, sizeof(*b));
}
