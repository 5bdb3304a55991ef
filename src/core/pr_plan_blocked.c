/*
 * pr_plan_blocked.c — the blocked remainder of the composite layout (PrBlockedTail, pr_plan.h):
 * the remainder entries of every row that is not too long leave the last tile and are computed
 * by a scatter pass in column order and a gather pass per row block from shared memory.  Pure
 * C11 + POSIX threads.
 *
 * The passes: rows' gather counts (gptr), the greedy cut of the rows into blocks, the columns'
 * scatter counts (scol_ptr), the placement of each entry in its column, and the buffer positions.
 * Placement: threads take contiguous row ranges; the leading ("hot", most entries) columns get
 * per-part cursors, so their slots follow the rows in order; the other columns take slots from
 * atomic cursors and are then sorted by gather index: the result is the same for any number of
 * threads.  Positions: the scatter order visits the entries of a block in (column, row) order,
 * the order of its positions, so per part and block counters over the scatter order place them.
 */
#define _POSIX_C_SOURCE 200809L
#include "pr_plan_internal.h"

#include <stdlib.h>
#include <string.h>

/* Gather entries per slot of the lookup table from gather index to block: 2^this. */
#define BLOCKED_TABLE_SHIFT 10

/* Most per-part counters (parts x blocks in the position pass, parts x hot columns in the
 * placement); at least 65536 hot columns per part. */
#define BLOCKED_MAX_COUNTERS ((int64_t) 1 << 25)
#define BLOCKED_MIN_HOT 65536

/* Columns up to this long are sorted by insertion, longer ones by radix. */
#define BLOCKED_SHORT_COLUMN 48

/* Most hot columns set by pr_plan_blocked_set_hot_columns (0: the default rule). */
static int64_t blocked_hot_setting = 0;

/* Shared state of the blocked builder's parallel passes. */
typedef struct BlockedWork
{
	const PrPlanCsr *csr;
	int64_t		n;
	int64_t		col_begin;
	const int32_t *blen;		/* [n] gather entries of each row */
	PrBlockedTail *b;
	int64_t    *part_nnz;		/* [parts] gather entries of each part's rows */
	int64_t    *part_rows;		/* [parts] rows with gather entries */
	int			place_parts;	/* parts of the counting and placement passes */
	int64_t		hot;			/* columns [0, hot) of the remainder have per-part cursors */
	int32_t    *part_cursor;	/* [parts][hot] each part's count, then next slot, per hot column */
	int32_t    *cursor;			/* [n_cols - hot] next scatter slot of each other column */
	int32_t    *table;			/* [slots + 1] block of gather entry k << BLOCKED_TABLE_SHIFT */
	int32_t    *counters;		/* [parts][n_blocks] next position of each part in each block */
	bool		failed;			/* a thread could not get scratch memory */
} BlockedWork;

/* Limits the columns with per-part cursors (see pr_plan_internal.h). */
void
pr_plan_blocked_set_hot_columns(int64_t hot)
{
	blocked_hot_setting = hot;
}

/* Frees a blocked remainder. */
void
pr_plan_blocked_free(PrBlockedTail *b, const PrAllocator *alloc)
{
	if (b == NULL)
		return;
	pr_free(alloc, b->scol_ptr);
	pr_free(alloc, b->spos);
	pr_free(alloc, b->sval);
	pr_free(alloc, b->row_begin);
	pr_free(alloc, b->buf_begin);
	pr_free(alloc, b->gptr);
	pr_free(alloc, b->gidx);
	pr_free(alloc, b);
}

/* Device bytes of a blocked remainder: scatter, block and gather arrays, and the fp32 buffer. */
size_t
pr_plan_blocked_device_bytes(const PrBlockedTail *b, bool weighted)
{
	size_t		nnz = (size_t) b->nnz;

	return ((size_t) b->n_cols + 1) * sizeof(int32_t)
		+ nnz * sizeof(int32_t)
		+ (weighted ? nnz * sizeof(float) : 0)
		+ 2 * ((size_t) b->n_blocks + 1) * sizeof(int32_t)
		+ ((size_t) b->matrix_rows + 1) * sizeof(int32_t)
		+ nnz * sizeof(uint16_t)
		+ nnz * sizeof(float);
}

/* Gather entries and rows with entries of one part of the rows. */
static void
count_rows_part(void *arg, int part, int n_parts)
{
	BlockedWork *w = arg;
	int64_t		b,
				e,
				nnz = 0,
				rows = 0;

	pr_even_range(w->n, part, n_parts, &b, &e);
	for (int64_t r = b; r < e; r++)
	{
		nnz += w->blen[r];
		rows += w->blen[r] > 0;
	}
	w->part_nnz[part] = nnz;
	w->part_rows[part] = rows;
}

/* Row pointers of the gather entries of one part of the rows (part_nnz now holds offsets). */
static void
fill_gptr_part(void *arg, int part, int n_parts)
{
	BlockedWork *w = arg;
	int32_t    *gptr = w->b->gptr;
	int64_t		b,
				e,
				pos = w->part_nnz[part];

	pr_even_range(w->n, part, n_parts, &b, &e);
	for (int64_t r = b; r < e; r++)
	{
		gptr[r] = (int32_t) pos;
		pos += w->blen[r];
	}
}

/*
 * Cuts rows 0..n-1 greedily into blocks of at most cap gather entries and max_rows rows; fills
 * row_begin / buf_begin (n_blocks + 1 each) when given.  Returns the number of blocks and, in
 * *max_entries, the entries of the largest.
 */
static int64_t
blocked_cut(const int32_t *blen, int64_t n, int64_t cap, int64_t max_rows, int32_t *row_begin,
			int32_t *buf_begin, int64_t *max_entries)
{
	int64_t		n_blocks = 0,
				entries = 0,
				rows = 0,
				total = 0;

	*max_entries = 0;
	if (row_begin != NULL)
	{
		row_begin[0] = 0;
		buf_begin[0] = 0;
	}
	for (int64_t r = 0; r < n; r++)
	{
		int64_t		len = blen[r];

		if (rows > 0 && (entries + len > cap || rows >= max_rows))
		{
			n_blocks++;
			if (row_begin != NULL)
			{
				row_begin[n_blocks] = (int32_t) r;
				buf_begin[n_blocks] = (int32_t) total;
			}
			if (entries > *max_entries)
				*max_entries = entries;
			entries = 0;
			rows = 0;
		}
		entries += len;
		total += len;
		rows++;
	}
	if (rows > 0)
	{
		n_blocks++;
		if (row_begin != NULL)
		{
			row_begin[n_blocks] = (int32_t) n;
			buf_begin[n_blocks] = (int32_t) total;
		}
		if (entries > *max_entries)
			*max_entries = entries;
	}
	return n_blocks;
}

/* First row r in [0, n] with gptr[r] + r >= target (rows cut by gather entries plus rows). */
static int64_t
gather_row_at_weight(const int32_t *gptr, int64_t n, int64_t target)
{
	int64_t		lo = 0,
				hi = n;

	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if ((int64_t) gptr[mid] + mid < target)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Row range [*begin, *end) of part p when rows are split by their gather entries plus one each. */
static void
gather_row_range(const BlockedWork *w, int part, int n_parts, int64_t *begin, int64_t *end)
{
	const int32_t *gptr = w->b->gptr;
	int64_t		total = (int64_t) gptr[w->n] + w->n;

	*begin = part == 0 ? 0 : gather_row_at_weight(gptr, w->n, total * part / n_parts);
	*end = part == n_parts - 1 ? w->n : gather_row_at_weight(gptr, w->n, total * (part + 1) / n_parts);
}

/*
 * Scatter entries of each remainder column over one part of the rows: hot columns counted in the
 * part's own counters, the others into scol_ptr[j+1] (atomically when threads share them).
 */
static void
count_columns_part(void *arg, int part, int n_parts)
{
	BlockedWork *w = arg;
	const PrPlanCsr *csr = w->csr;
	int32_t    *count = w->b->scol_ptr + 1;
	int32_t    *local = w->part_cursor + (size_t) part * (size_t) w->hot;
	int64_t		b,
				e;

	memset(local, 0, (size_t) w->hot * sizeof(int32_t));
	gather_row_range(w, part, n_parts, &b, &e);
	for (int64_t r = b; r < e; r++)
		for (int64_t p = csr->ptr[r + 1] - w->blen[r]; p < csr->ptr[r + 1]; p++)
		{
			int64_t		j = csr->col[p] - w->col_begin;

			if (j < w->hot)
				local[j]++;
			else if (n_parts == 1)
				count[j]++;
			else
				__atomic_fetch_add(&count[j], 1, __ATOMIC_RELAXED);
		}
}

/* Totals of one range of the hot columns over the parts' counters (into scol_ptr[j+1]). */
static void
sum_hot_part(void *arg, int part, int n_parts)
{
	BlockedWork *w = arg;
	int64_t		b,
				e;

	pr_even_range(w->hot, part, n_parts, &b, &e);
	for (int64_t j = b; j < e; j++)
	{
		int32_t		total = 0;

		for (int p = 0; p < w->place_parts; p++)
			total += w->part_cursor[(size_t) p * (size_t) w->hot + (size_t) j];
		w->b->scol_ptr[j + 1] = total;
	}
}

/* First slots of each part in one range of the hot columns: the parts in order (rows ascending). */
static void
start_hot_part(void *arg, int part, int n_parts)
{
	BlockedWork *w = arg;
	int64_t		b,
				e;

	pr_even_range(w->hot, part, n_parts, &b, &e);
	for (int64_t j = b; j < e; j++)
	{
		int32_t		pos = w->b->scol_ptr[j];

		for (int p = 0; p < w->place_parts; p++)
		{
			int32_t    *c = &w->part_cursor[(size_t) p * (size_t) w->hot + (size_t) j];
			int32_t		k = *c;

			*c = pos;
			pos += k;
		}
	}
}

/*
 * Places one part of the rows' entries in their columns' scatter slots: spos[q] = the entry's
 * gather index for now, sval[q] its weight.  Hot columns take the part's own slots (rows in
 * order); the others take slots from atomic cursors, ordered by sort_columns_part.
 */
static void
place_part(void *arg, int part, int n_parts)
{
	BlockedWork *w = arg;
	const PrPlanCsr *csr = w->csr;
	PrBlockedTail *bt = w->b;
	int32_t    *local = w->part_cursor + (size_t) part * (size_t) w->hot;
	int64_t		b,
				e;

	gather_row_range(w, part, n_parts, &b, &e);
	for (int64_t r = b; r < e; r++)
	{
		int64_t		first = csr->ptr[r + 1] - w->blen[r];
		int32_t		g = bt->gptr[r];

		for (int64_t k = 0; k < w->blen[r]; k++)
		{
			int64_t		p = first + k;
			int64_t		j = csr->col[p] - w->col_begin;
			int32_t		q;

			if (j < w->hot)
				q = local[j]++;
			else if (n_parts == 1)
				q = w->cursor[j - w->hot]++;
			else
				q = __atomic_fetch_add(&w->cursor[j - w->hot], 1, __ATOMIC_RELAXED);
			bt->spos[q] = g + (int32_t) k;
			if (bt->sval != NULL)
				bt->sval[q] = csr->val[p];
		}
	}
}

/* First column j in [0, n_cols] with scol_ptr[j] >= target. */
static int64_t
column_at_entry(const int32_t *scol_ptr, int64_t n_cols, int64_t target)
{
	int64_t		lo = 0,
				hi = n_cols;

	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (scol_ptr[mid] < target)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Column range [*begin, *end) of part p when columns are split by their scatter entries. */
static void
column_range(const PrBlockedTail *bt, int part, int n_parts, int64_t *begin, int64_t *end)
{
	*begin = part == 0 ? 0 : column_at_entry(bt->scol_ptr, bt->n_cols, bt->nnz * part / n_parts);
	*end = part == n_parts - 1 ? bt->n_cols : column_at_entry(bt->scol_ptr, bt->n_cols, bt->nnz * (part + 1) / n_parts);
}

/* Sorts one column's scatter slots by gather index (weights carried along). */
static void
sort_column(int32_t *spos, float *sval, int64_t len, uint64_t *keys, uint64_t *tmp)
{
	if (len <= BLOCKED_SHORT_COLUMN)
	{
		for (int64_t i = 1; i < len; i++)
		{
			int32_t		g = spos[i];
			float		v = sval != NULL ? sval[i] : 0.0f;
			int64_t		j = i - 1;

			while (j >= 0 && spos[j] > g)
			{
				spos[j + 1] = spos[j];
				if (sval != NULL)
					sval[j + 1] = sval[j];
				j--;
			}
			spos[j + 1] = g;
			if (sval != NULL)
				sval[j + 1] = v;
		}
		return;
	}
	for (int64_t i = 0; i < len; i++)
	{
		uint32_t	bits = 0;

		if (sval != NULL)
			memcpy(&bits, &sval[i], sizeof(bits));
		keys[i] = ((uint64_t) (uint32_t) spos[i] << 32) | bits;
	}
	pr_plan_radix_sort_upper(keys, tmp, len);
	for (int64_t i = 0; i < len; i++)
	{
		uint32_t	bits = (uint32_t) (keys[i] & 0xffffffffu);

		spos[i] = (int32_t) (keys[i] >> 32);
		if (sval != NULL)
			memcpy(&sval[i], &bits, sizeof(bits));
	}
}

/* Puts the scatter slots of one part of the columns in ascending gather order (= row order); the
 * hot columns are in that order already. */
static void
sort_columns_part(void *arg, int part, int n_parts)
{
	BlockedWork *w = arg;
	PrBlockedTail *bt = w->b;
	int64_t		b,
				e,
				max_len = 0;
	uint64_t   *keys = NULL,
			   *tmp = NULL;

	column_range(bt, part, n_parts, &b, &e);
	for (int64_t j = (b > w->hot ? b : w->hot); j < e; j++)
	{
		int64_t		s = bt->scol_ptr[j],
					len = bt->scol_ptr[j + 1] - s;
		bool		sorted = true;

		for (int64_t i = s + 1; i < s + len && sorted; i++)
			sorted = bt->spos[i - 1] < bt->spos[i];
		if (sorted)
			continue;
		if (len > BLOCKED_SHORT_COLUMN && len > max_len)
		{
			free(keys);
			free(tmp);
			max_len = len;
			keys = malloc((size_t) len * sizeof(uint64_t));
			tmp = malloc((size_t) len * sizeof(uint64_t));
			if (keys == NULL || tmp == NULL)
			{
				free(keys);
				free(tmp);
				w->failed = true;
				return;
			}
		}
		sort_column(bt->spos + s, bt->sval ? bt->sval + s : NULL, len, keys, tmp);
	}
	free(keys);
	free(tmp);
}

/* Block holding gather entry g (the largest b with buf_begin[b] <= g; blocks may be empty). */
static inline int64_t
block_of(const BlockedWork *w, int32_t g)
{
	const int32_t *buf_begin = w->b->buf_begin;
	int64_t		lo = w->table[g >> BLOCKED_TABLE_SHIFT],
				hi = w->table[(g >> BLOCKED_TABLE_SHIFT) + 1];

	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo + 1) / 2;

		if (buf_begin[mid] <= g)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* Counts one part of the scatter slots per block. */
static void
count_blocks_part(void *arg, int part, int n_parts)
{
	BlockedWork *w = arg;
	PrBlockedTail *bt = w->b;
	int32_t    *counter = w->counters + (size_t) part * (size_t) bt->n_blocks;
	int64_t		b,
				e;

	memset(counter, 0, (size_t) bt->n_blocks * sizeof(int32_t));
	pr_even_range(bt->nnz, part, n_parts, &b, &e);
	for (int64_t q = b; q < e; q++)
		counter[block_of(w, bt->spos[q])]++;
}

/*
 * Gives one part of the scatter slots their buffer positions (the part's counters hold its first
 * position in each block): spos[q] becomes the position, gidx of the entry its place in the block.
 */
static void
assign_positions_part(void *arg, int part, int n_parts)
{
	BlockedWork *w = arg;
	PrBlockedTail *bt = w->b;
	int32_t    *counter = w->counters + (size_t) part * (size_t) bt->n_blocks;
	int64_t		b,
				e;

	pr_even_range(bt->nnz, part, n_parts, &b, &e);
	for (int64_t q = b; q < e; q++)
	{
		int32_t		g = bt->spos[q];
		int64_t		blk = block_of(w, g);
		int32_t		pos = counter[blk]++;

		bt->gidx[g] = (uint16_t) (pos - bt->buf_begin[blk]);
		bt->spos[q] = pos;
	}
}

/* The buffer positions: the lookup table, per part and block counters, then the assignment. */
static PrStatus
blocked_positions(BlockedWork *w, PrError *err)
{
	PrBlockedTail *bt = w->b;
	int64_t		slots = ((bt->nnz - 1) >> BLOCKED_TABLE_SHIFT) + 1;
	int			parts = pr_plan_parts(bt->nnz);
	int64_t		blk = 0;

	if (bt->nnz == 0)
		return PR_OK;
	if ((int64_t) parts * bt->n_blocks > BLOCKED_MAX_COUNTERS)
		parts = (int) (BLOCKED_MAX_COUNTERS / bt->n_blocks > 1 ? BLOCKED_MAX_COUNTERS / bt->n_blocks : 1);
	w->table = malloc((size_t) (slots + 1) * sizeof(int32_t));
	w->counters = malloc((size_t) parts * (size_t) bt->n_blocks * sizeof(int32_t));
	if (w->table == NULL || w->counters == NULL)
		return pr_error_set(err, PR_ERR_NOMEM, "blocked remainder: out of memory for the positions");
	for (int64_t k = 0; k <= slots; k++)
	{
		int64_t		g = k << BLOCKED_TABLE_SHIFT;

		if (g >= bt->nnz)
			w->table[k] = (int32_t) (bt->n_blocks - 1);
		else
		{
			while (bt->buf_begin[blk + 1] <= g)
				blk++;
			w->table[k] = (int32_t) blk;
		}
	}
	pr_parallel_run(count_blocks_part, w, parts);
	for (int64_t b = 0; b < bt->n_blocks; b++)
	{
		int32_t		pos = bt->buf_begin[b];

		for (int p = 0; p < parts; p++)
		{
			int32_t    *c = &w->counters[(size_t) p * (size_t) bt->n_blocks + (size_t) b];
			int32_t		k = *c;

			*c = pos;
			pos += k;
		}
	}
	pr_parallel_run(assign_positions_part, w, parts);
	return PR_OK;
}

/* Frees the builder's scratch arrays and, on failure, the blocked remainder. */
static PrStatus
blocked_finish(BlockedWork *w, PrBlockedTail **out, const PrAllocator *alloc, PrStatus st)
{
	free(w->part_nnz);
	free(w->part_rows);
	free(w->part_cursor);
	free(w->cursor);
	free(w->table);
	free(w->counters);
	if (st != PR_OK)
	{
		pr_plan_blocked_free(w->b, alloc);
		*out = NULL;
	}
	else
		*out = w->b;
	return st;
}

/* Builds the blocked remainder (see pr_plan_internal.h). */
PrStatus
pr_plan_blocked_build(const PrPlanCsr *csr, int64_t col_begin, const int32_t *blen,
					  int64_t n_long_rows, const PrCompositeOptions *o, const PrAllocator *alloc,
					  PrBlockedTail **out, PrError *err)
{
	int64_t		n = csr->n;
	int64_t		max_rows = o->blocked_max_rows > 0 ? o->blocked_max_rows : PR_BLOCKED_DEFAULT_ROWS;
	int			parts = pr_plan_parts(n);
	int64_t		nnz = 0;
	BlockedWork w;
	PrBlockedTail *bt;

	*out = NULL;
	memset(&w, 0, sizeof(w));
	w.csr = csr;
	w.n = n;
	w.col_begin = col_begin;
	w.blen = blen;
	bt = pr_alloc_array(alloc, 1, sizeof(PrBlockedTail));
	w.part_nnz = malloc((size_t) parts * sizeof(int64_t));
	w.part_rows = malloc((size_t) parts * sizeof(int64_t));
	if (bt == NULL || w.part_nnz == NULL || w.part_rows == NULL)
	{
		pr_free(alloc, bt);
		w.b = NULL;
		blocked_finish(&w, out, alloc, PR_ERR_NOMEM);
		return pr_error_set(err, PR_ERR_NOMEM, "blocked remainder: out of memory");
	}
	memset(bt, 0, sizeof(*bt));
	w.b = bt;
	bt->col_begin = col_begin;
	bt->n_cols = pr_plan_csr_cols(csr) - col_begin;
	bt->matrix_rows = n;
	bt->n_long_rows = n_long_rows;

	/* gather counts: entries, rows, and each part's first gather index */
	pr_parallel_run(count_rows_part, &w, parts);
	for (int p = 0; p < parts; p++)
	{
		int64_t		k = w.part_nnz[p];

		w.part_nnz[p] = nnz;
		nnz += k;
		bt->n_rows += w.part_rows[p];
	}
	if (nnz >= (int64_t) INT32_MAX)
	{
		blocked_finish(&w, out, alloc, PR_ERR_TOO_LARGE);
		return pr_error_set(err, PR_ERR_TOO_LARGE,
							"blocked remainder: %lld entries exceed the 32-bit buffer positions "
							"(use a smaller blocked_cap or more shared-memory tiles)",
							(long long) nnz);
	}
	bt->nnz = nnz;
	bt->n_blocks = blocked_cut(blen, n, o->blocked_cap, max_rows, NULL, NULL, &bt->max_block_entries);
	if (o->shapes_only)
		return blocked_finish(&w, out, alloc, PR_OK);

	bt->scol_ptr = pr_alloc_array(alloc, (size_t) bt->n_cols + 1, sizeof(int32_t));
	bt->spos = pr_alloc_array(alloc, (size_t) (nnz > 0 ? nnz : 1), sizeof(int32_t));
	if (csr->val != NULL)
		bt->sval = pr_alloc_array(alloc, (size_t) (nnz > 0 ? nnz : 1), sizeof(float));
	bt->row_begin = pr_alloc_array(alloc, (size_t) bt->n_blocks + 1, sizeof(int32_t));
	bt->buf_begin = pr_alloc_array(alloc, (size_t) bt->n_blocks + 1, sizeof(int32_t));
	bt->gptr = pr_alloc_array(alloc, (size_t) n + 1, sizeof(int32_t));
	bt->gidx = pr_alloc_array(alloc, (size_t) (nnz > 0 ? nnz : 1), sizeof(uint16_t));
	/* placement threads and the hot columns they count and place on their own */
	w.place_parts = pr_plan_parts(nnz + n);
	w.hot = BLOCKED_MAX_COUNTERS / w.place_parts;
	if (w.hot < BLOCKED_MIN_HOT)
		w.hot = BLOCKED_MIN_HOT;
	if (blocked_hot_setting > 0 && w.hot > blocked_hot_setting)
		w.hot = blocked_hot_setting;
	if (w.hot > bt->n_cols)
		w.hot = bt->n_cols;
	w.part_cursor = malloc(((size_t) w.place_parts * (size_t) w.hot + 1) * sizeof(int32_t));
	w.cursor = malloc(((size_t) (bt->n_cols - w.hot) + 1) * sizeof(int32_t));
	if (bt->scol_ptr == NULL || bt->spos == NULL || (csr->val != NULL && bt->sval == NULL) ||
		bt->row_begin == NULL || bt->buf_begin == NULL || bt->gptr == NULL || bt->gidx == NULL ||
		w.part_cursor == NULL || w.cursor == NULL)
	{
		blocked_finish(&w, out, alloc, PR_ERR_NOMEM);
		return pr_error_set(err, PR_ERR_NOMEM, "blocked remainder: out of memory for %lld entries",
							(long long) nnz);
	}

	/* gather row pointers and the blocks */
	pr_parallel_run(fill_gptr_part, &w, parts);
	bt->gptr[n] = (int32_t) nnz;
	blocked_cut(blen, n, o->blocked_cap, max_rows, bt->row_begin, bt->buf_begin, &bt->max_block_entries);

	/* scatter columns: counts, slots, then each column in gather order */
	memset(bt->scol_ptr, 0, ((size_t) bt->n_cols + 1) * sizeof(int32_t));
	pr_parallel_run(count_columns_part, &w, w.place_parts);
	pr_parallel_run(sum_hot_part, &w, pr_plan_parts(w.hot * w.place_parts));
	for (int64_t j = 0; j < bt->n_cols; j++)
		bt->scol_ptr[j + 1] += bt->scol_ptr[j];
	pr_parallel_run(start_hot_part, &w, pr_plan_parts(w.hot * w.place_parts));
	memcpy(w.cursor, bt->scol_ptr + w.hot, (size_t) (bt->n_cols - w.hot) * sizeof(int32_t));
	pr_parallel_run(place_part, &w, w.place_parts);
	if (w.place_parts > 1 && w.hot < bt->n_cols)
		pr_parallel_run(sort_columns_part, &w, pr_plan_parts(nnz + bt->n_cols));
	if (w.failed)
	{
		blocked_finish(&w, out, alloc, PR_ERR_NOMEM);
		return pr_error_set(err, PR_ERR_NOMEM, "blocked remainder: out of memory for a column's sort");
	}

	/* buffer positions */
	{
		PrStatus	st = blocked_positions(&w, err);

		return blocked_finish(&w, out, alloc, st);
	}
}
