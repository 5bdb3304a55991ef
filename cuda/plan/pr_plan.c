/*
 * pr_plan.c — the format planners of the GPU engine (degree order, relabelling, composite tiles,
 * row bins); the performance model lives in pr_plan_model.c.  Pure C11 + POSIX threads: see pr_plan.h.
 *
 * Threads split rows (or edges) into fixed parts; every output position follows from counts
 * summed in part order, so the result is the same bits for any number of threads.
 */
#define _POSIX_C_SOURCE 200809L
#include "pr_plan.h"

#include <stdlib.h>
#include <string.h>

const int	pr_bin_lanes[PR_BIN_COUNT] = {1, 2, 4, 8, 16, 32, 32};

/* Most threads the planners start. */
#define PLAN_MAX_THREADS 64

/* Row lengths below this are sorted by counting; longer rows by comparison (there are few). */
#define PLAN_SORT_BUCKETS 1024

/* Rows up to this long are sorted by insertion in the relabel, longer ones by radix. */
#define PLAN_SHORT_ROW 48

static int	plan_thread_setting = 0;

/* Sets the planners' thread count (<= 0: the online CPUs). */
void
pr_plan_set_threads(int n_threads)
{
	plan_thread_setting = n_threads;
}

/* The planners' thread count. */
int
pr_plan_threads(void)
{
	return pr_thread_count(plan_thread_setting, PLAN_MAX_THREADS);
}

/* Threads for work of the given size (small work runs in the caller). */
static int
pr_plan_parts(int64_t work)
{
	int			t = pr_plan_threads();

	if (work < 200000)
		return 1;
	if ((int64_t) t * 100000 > work)
		t = (int) (work / 100000);
	return t < 1 ? 1 : t;
}


/* Row range [*begin, *end) of part p when rows are split by their entries (plus one per row). */
static void
plan_weighted_range(const int64_t *ptr, int64_t n, int part, int n_parts, int64_t *begin,
					int64_t *end)
{
	int64_t		total = ptr[n] + n;

	*begin = part == 0 ? 0 : pr_csr_row_at(ptr, 0, n, total * part / n_parts, 1);
	*end = part == n_parts - 1 ? n : pr_csr_row_at(ptr, 0, n, total * (part + 1) / n_parts, 1);
}

/* Orders nodes by descending key (ties keep ascending ids); see pr_plan.h. */
PrStatus
pr_plan_degree_order(int64_t n, const int64_t *key, int32_t *new_to_old, int32_t *old_to_new,
					 const PrAllocator *alloc, PrError *err)
{
	if (n < 0 || n > PR_PLAN_MAX_NODES_CHECK)
		return pr_error_set(err, PR_ERR_TOO_LARGE, "degree order: %lld nodes exceed the 32-bit ids",
							(long long) n);
	return pr_order_by_key_desc(n, key, new_to_old, old_to_new, alloc, err);
}

/* Frees a relabelled CSR. */
void
pr_plan_csr_free(PrPlanCsr *csr, const PrAllocator *alloc)
{
	pr_free(alloc, csr->ptr);
	pr_free(alloc, csr->col);
	pr_free(alloc, csr->val);
	memset(csr, 0, sizeof(*csr));
}

/* Allocates the arrays of n_long long rows (see pr_plan.h). */
bool
pr_plan_long_rows_alloc(PrPlanLongRows *longs, int64_t n_long, const PrAllocator *alloc)
{
	longs->n_long = n_long;
	longs->long_row = pr_alloc_array(alloc, (size_t) n_long + 1, sizeof(int32_t));
	longs->chunk_begin = pr_alloc_array(alloc, (size_t) n_long + 1, sizeof(int64_t));
	return longs->long_row != NULL && longs->chunk_begin != NULL;
}

/* Frees the arrays of a PrPlanLongRows and leaves it empty. */
void
pr_plan_long_rows_free(PrPlanLongRows *longs, const PrAllocator *alloc)
{
	pr_free(alloc, longs->long_row);
	pr_free(alloc, longs->chunk_begin);
	memset(longs, 0, sizeof(*longs));
}

/* Shared state of the relabel's parallel steps. */
typedef struct RelabelWork
{
	int64_t		n;
	const int64_t *ptr;
	const int32_t *col;
	const double *val;
	const int32_t *old_to_new;	/* new column ids (and new row ids, through new_to_old) */
	int32_t    *new_to_old;		/* old row of each new row; NULL: rows keep their ids */
	PrPlanCsr  *out;
	bool		failed;			/* a thread could not get scratch memory */
} RelabelWork;

/* Inverse permutation (new_to_old) for a part of the old ids. */
static void
relabel_inverse_part(void *arg, int part, int n_parts)
{
	RelabelWork *w = arg;
	int64_t		b,
				e;

	pr_even_range(w->n, part, n_parts, &b, &e);
	for (int64_t r = b; r < e; r++)
		w->new_to_old[w->old_to_new[r]] = (int32_t) r;
}

/*
 * Relabels the new rows of one part: each row's entries mapped to new columns and sorted by
 * (new column, position in the old row) — a stable sort, the order the two counting sorts of the
 * earlier serial version produced.
 */
static void
relabel_rows_part(void *arg, int part, int n_parts)
{
	RelabelWork *w = arg;
	PrPlanCsr  *out = w->out;
	int64_t		b,
				e,
				max_len = 0;
	uint64_t   *keys,
			   *tmp;
	const uint64_t *sorted;

	plan_weighted_range(out->ptr, w->n, part, n_parts, &b, &e);
	for (int64_t i = b; i < e; i++)
		if (out->ptr[i + 1] - out->ptr[i] > max_len)
			max_len = out->ptr[i + 1] - out->ptr[i];
	keys = malloc((size_t) (max_len + 1) * sizeof(uint64_t));
	tmp = malloc((size_t) (max_len + 1) * sizeof(uint64_t));
	if (keys == NULL || tmp == NULL)
	{
		free(keys);
		free(tmp);
		w->failed = true;
		return;
	}
	for (int64_t i = b; i < e; i++)
	{
		int64_t		r = w->new_to_old ? w->new_to_old[i] : i;
		int64_t		src = w->ptr[r];
		int64_t		len = w->ptr[r + 1] - src;
		int64_t		dst = out->ptr[i];

		for (int64_t k = 0; k < len; k++)
		{
			int32_t		c = w->col[src + k];
			uint64_t	nc = (uint64_t) (uint32_t) (w->old_to_new ? w->old_to_new[c] : c);

			keys[k] = (nc << 32) | (uint64_t) k;
		}
		sorted = keys;
		if (len <= PLAN_SHORT_ROW)
		{
			for (int64_t k = 1; k < len; k++)
			{
				uint64_t	v = keys[k];
				int64_t		j = k - 1;

				while (j >= 0 && keys[j] > v)
				{
					keys[j + 1] = keys[j];
					j--;
				}
				keys[j + 1] = v;
			}
		}
		else
			sorted = pr_radix_sort_u64(keys, tmp, (size_t) len, 4);	/* by column, stable */
		for (int64_t k = 0; k < len; k++)
		{
			out->col[dst + k] = (int32_t) (sorted[k] >> 32);
			if (w->val != NULL)
				out->val[dst + k] = (float) w->val[src + (int64_t) (sorted[k] & 0xffffffffu)];
		}
	}
	free(keys);
	free(tmp);
}

/*
 * Relabels a CSR: new row old_to_new[r] holds row r's entries with columns old_to_new[c], sorted
 * ascending (parallel over new rows, each sorted on its own).
 */
PrStatus
pr_plan_relabel(int64_t n, const int64_t *ptr, const int32_t *col, const double *val,
				const int32_t *old_to_new, const PrAllocator *alloc, PrPlanCsr *out, PrError *err)
{
	int64_t		nnz = ptr[n];
	RelabelWork w;

	memset(out, 0, sizeof(*out));
	if (n > PR_PLAN_MAX_NODES_CHECK)
		return pr_error_set(err, PR_ERR_TOO_LARGE, "relabel: %lld nodes exceed the 32-bit ids",
							(long long) n);
	for (int64_t r = 0; r < n; r++)
		if (ptr[r + 1] - ptr[r] > (int64_t) UINT32_MAX)
			return pr_error_set(err, PR_ERR_TOO_LARGE, "relabel: row %lld has over 2^32 entries",
								(long long) r);
	out->n = n;
	out->nnz = nnz;
	out->ptr = pr_alloc_array(alloc, (size_t) n + 1, sizeof(int64_t));
	out->col = pr_alloc_array(alloc, (size_t) (nnz > 0 ? nnz : 1), sizeof(int32_t));
	if (val != NULL)
		out->val = pr_alloc_array(alloc, (size_t) (nnz > 0 ? nnz : 1), sizeof(float));
	memset(&w, 0, sizeof(w));
	if (old_to_new != NULL)
		w.new_to_old = pr_alloc_array(alloc, (size_t) n + 1, sizeof(int32_t));
	if (out->ptr == NULL || out->col == NULL || (val != NULL && out->val == NULL) ||
		(old_to_new != NULL && w.new_to_old == NULL))
	{
		pr_free(alloc, w.new_to_old);
		pr_plan_csr_free(out, alloc);
		return pr_error_set(err, PR_ERR_NOMEM, "relabel: out of memory for %lld entries",
							(long long) nnz);
	}
	w.n = n;
	w.ptr = ptr;
	w.col = col;
	w.val = val;
	w.old_to_new = old_to_new;
	w.out = out;
	if (old_to_new != NULL)
		pr_parallel_run(relabel_inverse_part, &w, pr_plan_parts(n));
	/* row pointers in the new order */
	out->ptr[0] = 0;
	for (int64_t i = 0; i < n; i++)
	{
		int64_t		r = old_to_new ? w.new_to_old[i] : i;

		out->ptr[i + 1] = out->ptr[i] + (ptr[r + 1] - ptr[r]);
	}
	pr_parallel_run(relabel_rows_part, &w, pr_plan_parts(nnz + n));
	pr_free(alloc, w.new_to_old);
	if (w.failed)
	{
		pr_plan_csr_free(out, alloc);
		return pr_error_set(err, PR_ERR_NOMEM, "relabel: out of memory for a row's sort");
	}
	return PR_OK;
}

/* Transposes a CSR with one counting sort; rows of the result come out with ascending columns. */
PrStatus
pr_plan_transpose(const PrPlanCsr *csr, const PrAllocator *alloc, PrPlanCsr *out, PrError *err)
{
	int64_t		n = csr->n;
	int64_t		nnz = csr->nnz;
	PrCountSort sort;
	int64_t    *cursor;

	memset(out, 0, sizeof(*out));
	out->n = n;
	out->nnz = nnz;
	out->ptr = pr_alloc_array(alloc, (size_t) n + 1, sizeof(int64_t));
	out->col = pr_alloc_array(alloc, (size_t) (nnz > 0 ? nnz : 1), sizeof(int32_t));
	if (csr->val != NULL)
		out->val = pr_alloc_array(alloc, (size_t) (nnz > 0 ? nnz : 1), sizeof(float));
	sort.counts = NULL;
	if (out->ptr == NULL || out->col == NULL || (csr->val != NULL && out->val == NULL) ||
		!pr_count_sort_init(&sort, (size_t) nnz, n, 1, alloc))
	{
		pr_count_sort_free(&sort, alloc);
		pr_plan_csr_free(out, alloc);
		return pr_error_set(err, PR_ERR_NOMEM, "transpose: out of memory for %lld entries",
							(long long) nnz);
	}
	cursor = pr_count_sort_row(&sort, 0);
	pr_count_sort_clear(&sort, 0);
	pr_count_sort_add(&sort, 0, csr->col, 0, (size_t) nnz);
	pr_count_sort_offsets(&sort, false, out->ptr, 1, NULL, NULL);
	for (int64_t r = 0; r < n; r++)
		for (int64_t e = csr->ptr[r]; e < csr->ptr[r + 1]; e++)
		{
			int64_t		pos = cursor[csr->col[e]]++;

			out->col[pos] = (int32_t) r;
			if (csr->val != NULL)
				out->val[pos] = csr->val[e];
		}
	pr_count_sort_free(&sort, alloc);
	return PR_OK;
}

/* Frees one tile's arrays. */
static void
composite_tile_free(PrCompositeTile *t, const PrAllocator *alloc)
{
	pr_free(alloc, t->vec_row);
	pr_free(alloc, t->vec_ptr);
	pr_plan_long_rows_free(&t->longs, alloc);
	pr_free(alloc, t->ell_off);
	pr_free(alloc, t->ell_row);
	pr_free(alloc, t->idx);
	pr_free(alloc, t->idx16);
	pr_free(alloc, t->val);
	memset(t, 0, sizeof(*t));
}

/* Frees a composite layout. */
void
pr_plan_composite_free(PrComposite *c, const PrAllocator *alloc)
{
	if (c->tiles != NULL)
		for (int t = 0; t < c->n_tiles; t++)
			composite_tile_free(&c->tiles[t], alloc);
	pr_free(alloc, c->tiles);
	pr_free(alloc, c->merge_row);
	pr_free(alloc, c->merge_ptr);
	pr_free(alloc, c->merge_slot);
	memset(c, 0, sizeof(*c));
}

/* Column tile boundaries: the shared-memory tiles, then width-wide tiles; the last tile takes the
 * rest when max_tiles is reached. */
static int
composite_tile_bounds(int64_t n, const PrCompositeOptions *o, int64_t *bounds, int max_tiles)
{
	int64_t		w = o->tile_width < 1 ? n : o->tile_width;
	int			count = 0;
	int64_t		c = 0;

	bounds[0] = 0;
	for (int t = 0; t < o->n_smem_tiles && c < n && count < max_tiles - 1; t++)
	{
		c = (n - c > o->smem_width) ? c + o->smem_width : n;
		bounds[++count] = c;
	}
	while (c < n && count < max_tiles - 1)
	{
		c = (n - c > w) ? c + w : n;
		bounds[++count] = c;
	}
	if (c < n || count == 0)
		bounds[++count] = n;
	return count;
}

/* Rank bucket of a column's offset inside its tile (see PR_RANK_BUCKETS). */
static inline int
rank_bucket(int64_t offset)
{
	return offset <= 0 ? 0 : 64 - __builtin_clzll((unsigned long long) offset);
}

/* Column degrees: one part of the edges. */
typedef struct DegreeWork
{
	const PrPlanCsr *csr;
	int64_t    *deg;
	int64_t    *local;			/* [parts][hot] private counts of the hot columns */
	int64_t		hot;
} DegreeWork;

/* Counts one part's entries: private counts for the hot columns, atomic adds for the rest. */
static void
degree_part(void *arg, int part, int n_parts)
{
	DegreeWork *w = arg;
	int64_t    *local = w->local + (size_t) part * (size_t) w->hot;
	int64_t		b,
				e;

	pr_even_range(w->csr->nnz, part, n_parts, &b, &e);
	for (int64_t p = b; p < e; p++)
	{
		int32_t		c = w->csr->col[p];

		if (c < w->hot)
			local[c]++;
		else if (n_parts == 1)
			w->deg[c]++;
		else
			__atomic_fetch_add(&w->deg[c], 1, __ATOMIC_RELAXED);
	}
}

/* Entries of each column of csr. */
PrStatus
pr_plan_column_degrees(const PrPlanCsr *csr, int64_t *col_degree, PrError *err)
{
	DegreeWork	w;
	int			parts = pr_plan_parts(csr->nnz);

	w.csr = csr;
	w.deg = col_degree;
	w.hot = csr->n < 65536 ? csr->n : 65536;
	w.local = calloc((size_t) parts * (size_t) w.hot + 1, sizeof(int64_t));
	if (w.local == NULL)
		return pr_error_set(err, PR_ERR_NOMEM, "composite plan: out of memory");
	memset(col_degree, 0, (size_t) csr->n * sizeof(int64_t));
	pr_parallel_run(degree_part, &w, parts);
	for (int p = 0; p < parts; p++)
		for (int64_t c = 0; c < w.hot; c++)
			col_degree[c] += w.local[(size_t) p * (size_t) w.hot + (size_t) c];
	free(w.local);
	return PR_OK;
}

/* Per-part totals of the segment pass. */
typedef struct SegmentTotals
{
	int64_t		nnz[PR_PLAN_MAX_TILES];
	int64_t		rank_hist[PR_PLAN_MAX_TILES][2][PR_RANK_BUCKETS];
} SegmentTotals;

/* Shared state of a composite plan's parallel steps. */
typedef struct CompositeWork
{
	const PrPlanCsr *csr;
	const PrCompositeOptions *o;
	int64_t		n;				/* rows */
	int64_t		n_cols;			/* columns: the padding column id */
	int			n_tiles;
	const int64_t *bounds;
	int64_t		vthr;
	int64_t		chunk;
	int32_t    *lens;			/* [n_tiles][n] segment length of each row in each tile */
	int64_t    *cursor;			/* [n] first entry of each row's segment in the current tile */
	int32_t    *order;			/* [n] rows of the current tile by length (desc), then id */
	SegmentTotals *totals;		/* [parts] */
	int			parts;
	/* counting sort of the tile's rows by descending length (key PLAN_SORT_BUCKETS: too long) */
	int			tile;
	bool		first;
	PrCountSort sort;			/* one chunk a part */
	int64_t		sort_starts[PLAN_SORT_BUCKETS + 2];
	int64_t    *big;			/* [rows too long] (len << 32 | row) of the long rows */
	/* fill of the current tile */
	PrCompositeTile *t;
	int64_t    *wl_src;			/* [n_vec] first csr entry of each CSR-vector workload */
	int64_t		n_vec_rows;		/* rows of the tile that are CSR-vector rows */
	/* merge lists */
	PrComposite *out;
	int64_t    *merge_pos;		/* [n] next merge_slot position of each row */
} CompositeWork;

/* The segment length of every row in tile t: row t of lens. */
static inline int32_t *
tile_lens(const CompositeWork *w, int t)
{
	return w->lens + (size_t) t * (size_t) w->n;
}

/*
 * Segment pass: every row's length in every tile, with the per-tile rank histograms.  Columns are
 * ascending within a row, so segment ends and rank-bucket boundaries are found by search: the
 * work per row grows with the buckets it spans, not with its length.
 */
static void
segment_part(void *arg, int part, int n_parts)
{
	CompositeWork *w = arg;
	const PrPlanCsr *csr = w->csr;
	const int32_t *col = csr->col;
	SegmentTotals *tot = &w->totals[part];
	int64_t		b,
				e;

	memset(tot, 0, sizeof(*tot));
	plan_weighted_range(csr->ptr, w->n, part, n_parts, &b, &e);
	for (int64_t r = b; r < e; r++)
	{
		int64_t		p = csr->ptr[r];
		int64_t		end = csr->ptr[r + 1];

		for (int t = 0; t < w->n_tiles; t++)
		{
			int64_t		col_begin = w->bounds[t];
			int64_t		q = pr_lower_bound_i32(col, p, end, w->bounds[t + 1]);
			int64_t    *hist = tot->rank_hist[t][(q - p >= w->vthr) ? 0 : 1];

			tile_lens(w, t)[r] = (int32_t) (q - p);
			tot->nnz[t] += q - p;
			for (int64_t k = p; k < q;)
			{
				int			bucket = rank_bucket(col[k] - col_begin);
				int64_t		next = pr_lower_bound_i32(col, k + 1, q, col_begin + ((int64_t) 1 << bucket));

				hist[bucket] += next - k;
				k = next;
			}
			p = q;
			if (p == end)
			{
				/* the rest of the tiles get nothing from this row */
				for (int t2 = t + 1; t2 < w->n_tiles; t2++)
					tile_lens(w, t2)[r] = 0;
				break;
			}
		}
	}
}

/* Counting-sort counts of one part's rows in the current tile. */
static void
sort_count_part(void *arg, int part, int n_parts)
{
	CompositeWork *w = arg;
	const int32_t *len = tile_lens(w, w->tile);
	int64_t    *count = pr_count_sort_row(&w->sort, part);
	int64_t		b,
				e;

	pr_count_sort_clear(&w->sort, part);
	pr_even_range(w->n, part, n_parts, &b, &e);
	for (int64_t r = b; r < e; r++)
		count[len[r] < PLAN_SORT_BUCKETS ? len[r] : PLAN_SORT_BUCKETS]++;
}

/*
 * Counting-sort scatter of one part's rows (counts already turned into offsets): the long rows
 * into big, the others into order; rows without entries only in the first tile.
 */
static void
sort_scatter_part(void *arg, int part, int n_parts)
{
	CompositeWork *w = arg;
	const int32_t *len = tile_lens(w, w->tile);
	int64_t    *start = pr_count_sort_row(&w->sort, part);
	int64_t		b,
				e;

	pr_even_range(w->n, part, n_parts, &b, &e);
	for (int64_t r = b; r < e; r++)
	{
		int32_t		l = len[r];

		if (l >= PLAN_SORT_BUCKETS)
			w->big[start[PLAN_SORT_BUCKETS]++] = ((int64_t) l << 32) | r;
		else if (l > 0 || w->first)
			w->order[start[l]++] = (int32_t) r;
	}
}

/* Order of the long rows: longer first, then ascending id. */
static int
big_row_cmp(const void *a, const void *b)
{
	int64_t		x = *(const int64_t *) a,
				y = *(const int64_t *) b;
	int64_t		lx = x >> 32,
				ly = y >> 32;

	if (lx != ly)
		return lx > ly ? -1 : 1;
	return (x & 0xffffffff) < (y & 0xffffffff) ? -1 : ((x & 0xffffffff) > (y & 0xffffffff));
}

/*
 * Sorts the current tile's rows by descending length, ties by ascending id (rows without entries
 * only in the first tile, last): a parallel stable counting sort for short rows, a comparison
 * sort for the few long ones.  Returns the number of rows placed, or -1 out of memory.
 */
static int64_t
composite_sort_rows(CompositeWork *w)
{
	int64_t		n_big;

	pr_parallel_run(sort_count_part, w, w->sort.n_chunks);
	pr_count_sort_offsets(&w->sort, true, w->sort_starts, 1, NULL, NULL);
	/* descending keys: the long rows first, the rows without entries last */
	n_big = w->sort_starts[PLAN_SORT_BUCKETS - 1];
	w->big = malloc((size_t) (n_big + 1) * sizeof(int64_t));
	if (w->big == NULL)
		return -1;
	pr_parallel_run(sort_scatter_part, w, w->sort.n_chunks);
	qsort(w->big, (size_t) n_big, sizeof(int64_t), big_row_cmp);
	for (int64_t i = 0; i < n_big; i++)
		w->order[i] = (int32_t) (w->big[i] & 0xffffffff);
	free(w->big);
	w->big = NULL;
	return w->first ? w->sort_starts[PLAN_SORT_BUCKETS + 1] : w->sort_starts[0];
}

/* Copies the entries of one part of the CSR-vector workloads. */
static void
fill_vec_part(void *arg, int part, int n_parts)
{
	CompositeWork *w = arg;
	PrCompositeTile *t = w->t;
	const PrPlanCsr *csr = w->csr;
	int32_t		cb = (int32_t) t->col_begin;
	int64_t		b,
				e;

	pr_even_range(t->n_vec, part, n_parts, &b, &e);
	for (int64_t k = b; k < e; k++)
	{
		int64_t		pos = t->vec_ptr[k];
		int64_t		cnt = t->vec_ptr[k + 1] - pos;
		int64_t		src = w->wl_src[k];

		if (t->idx != NULL)
			memcpy(t->idx + pos, csr->col + src, (size_t) cnt * sizeof(int32_t));
		for (int64_t q = 0; t->idx16 != NULL && q < cnt; q++)
			t->idx16[pos + q] = (uint16_t) (csr->col[src + q] - cb);
		if (t->val != NULL)
			memcpy(t->val + pos, csr->val + src, (size_t) cnt * sizeof(float));
	}
}

/* Writes one part of the ELL groups: rows, and the column-major padded entries. */
static void
fill_ell_part(void *arg, int part, int n_parts)
{
	CompositeWork *w = arg;
	PrCompositeTile *t = w->t;
	const PrPlanCsr *csr = w->csr;
	const int32_t *len = tile_lens(w, w->tile);
	int32_t		cb = (int32_t) t->col_begin;
	int64_t		width = t->col_end - t->col_begin;
	int64_t		b,
				e;

	pr_even_range(t->n_ell, part, n_parts, &b, &e);
	for (int64_t g = b; g < e; g++)
	{
		int64_t		first = w->n_vec_rows + g * PR_PLAN_WARP;
		int64_t		pos = t->ell_off[g];
		int64_t		height = (t->ell_off[g + 1] - pos) / PR_PLAN_WARP;

		for (int lane = 0; lane < PR_PLAN_WARP; lane++)
		{
			int64_t		i = first + lane;
			int32_t		r = (i < t->n_rows) ? w->order[i] : -1;
			int64_t		l = (r >= 0) ? len[r] : 0;
			int64_t		src = (r >= 0) ? w->cursor[r] : 0;

			t->ell_row[g * PR_PLAN_WARP + lane] = r;
			for (int64_t j = 0; (t->idx != NULL || t->idx16 != NULL) && j < height; j++)
			{
				int64_t		slot = pos + j * PR_PLAN_WARP + lane;

				if (t->idx16 != NULL)
					t->idx16[slot] = (uint16_t) ((j < l) ? csr->col[src + j] - cb : width);
				else
					t->idx[slot] = (j < l) ? csr->col[src + j] : (int32_t) w->n_cols;
				if (t->val != NULL)
					t->val[slot] = (j < l) ? csr->val[src + j] : 0.0f;
			}
		}
	}
}

/* Moves one part of the rows' cursors past the current tile. */
static void
advance_part(void *arg, int part, int n_parts)
{
	CompositeWork *w = arg;
	const int32_t *len = tile_lens(w, w->tile);
	int64_t		b,
				e;

	pr_even_range(w->n, part, n_parts, &b, &e);
	for (int64_t r = b; r < e; r++)
		w->cursor[r] += len[r];
}

/* Plans tile w->tile: sort its rows, classify and size the workloads, fill them. */
static bool
composite_plan_tile(CompositeWork *w, const PrAllocator *alloc)
{
	PrCompositeTile *t = w->t;
	const int32_t *len = tile_lens(w, w->tile);
	int64_t		n_rows,
				n_vec = 0,
				n_long = 0,
				vec_entries = 0,
				ell_entries = 0,
				n_ell_rows;
	int64_t		chunk = w->chunk;
	bool		fill;

	n_rows = composite_sort_rows(w);
	if (n_rows < 0)
		return false;
	t->n_rows = n_rows;

	/* classify: CSR-vector rows lead the order */
	w->n_vec_rows = 0;
	while (w->n_vec_rows < n_rows && len[w->order[w->n_vec_rows]] >= w->vthr)
	{
		int64_t		l = len[w->order[w->n_vec_rows]];
		int64_t		pieces = (l + chunk - 1) / chunk;

		n_vec += pieces;
		vec_entries += l;
		if (pieces > 1)
			n_long++;
		w->n_vec_rows++;
	}
	n_ell_rows = n_rows - w->n_vec_rows;
	t->n_vec = n_vec;
	t->n_ell = (n_ell_rows + PR_PLAN_WARP - 1) / PR_PLAN_WARP;
	t->vec_row = pr_alloc_array(alloc, (size_t) (n_vec + 1), sizeof(int32_t));
	t->vec_ptr = pr_alloc_array(alloc, (size_t) (n_vec + 1), sizeof(int64_t));
	t->ell_off = pr_alloc_array(alloc, (size_t) (t->n_ell + 1), sizeof(int64_t));
	t->ell_row = pr_alloc_array(alloc, (size_t) (t->n_ell * PR_PLAN_WARP + 1), sizeof(int32_t));
	w->wl_src = malloc((size_t) (n_vec + 1) * sizeof(int64_t));
	if (!pr_plan_long_rows_alloc(&t->longs, n_long, alloc) || t->vec_row == NULL || t->vec_ptr == NULL ||
		t->ell_off == NULL || t->ell_row == NULL || w->wl_src == NULL)
		return false;

	/* CSR-vector workloads (long rows cut into chunks) */
	{
		int64_t		k = 0,
					pos = 0,
					lr = 0,
					chunks_end = 0;

		for (int64_t i = 0; i < w->n_vec_rows; i++)
		{
			int32_t		r = w->order[i];
			int64_t		l = len[r];
			int64_t		pieces = (l + chunk - 1) / chunk;

			if (pieces > 1)
			{
				t->longs.long_row[lr] = r;
				t->longs.chunk_begin[lr] = k;
				lr++;
			}
			for (int64_t p = 0; p < pieces; p++)
			{
				int64_t		b = p * chunk;
				int64_t		e = (b + chunk < l) ? b + chunk : l;

				t->vec_row[k] = pieces > 1 ? -1 : r;
				t->vec_ptr[k] = pos;
				w->wl_src[k] = w->cursor[r] + b;
				pos += e - b;
				k++;
			}
			if (pieces > 1)
				chunks_end = k;
		}
		t->vec_ptr[k] = pos;
		t->longs.chunk_begin[lr] = chunks_end;

		/* ELL workloads: height = the length of the group's first (longest) row */
		for (int64_t g = 0; g < t->n_ell; g++)
		{
			int64_t		height = len[w->order[w->n_vec_rows + g * PR_PLAN_WARP]];

			t->ell_off[g] = pos;
			ell_entries += PR_PLAN_WARP * height;
			pos += PR_PLAN_WARP * height;
		}
		t->ell_off[t->n_ell] = pos;
	}
	t->n_idx = vec_entries + ell_entries;
	fill = !w->o->shapes_only;
	if (fill)
	{
		if (t->local16)
			t->idx16 = pr_alloc_array(alloc, (size_t) (t->n_idx + 1), sizeof(uint16_t));
		else
			t->idx = pr_alloc_array(alloc, (size_t) (t->n_idx + 1), sizeof(int32_t));
		if (w->csr->val != NULL)
			t->val = pr_alloc_array(alloc, (size_t) (t->n_idx + 1), sizeof(float));
		if ((t->idx == NULL && t->idx16 == NULL) || (w->csr->val != NULL && t->val == NULL))
			return false;
		pr_parallel_run(fill_vec_part, w, pr_plan_parts(vec_entries + n_vec));
	}
	pr_parallel_run(fill_ell_part, w, pr_plan_parts(fill ? ell_entries + n_ell_rows : n_ell_rows));
	free(w->wl_src);
	w->wl_src = NULL;
	pr_parallel_run(advance_part, w, w->parts);
	return true;
}

/* Writes the merge slots of one part of the current (later) tile's workloads. */
static void
merge_fill_part(void *arg, int part, int n_parts)
{
	CompositeWork *w = arg;
	PrCompositeTile *t = w->t;
	int32_t    *slot = w->out->merge_slot;
	int64_t		total = t->n_vec + t->longs.n_long + t->n_ell * PR_PLAN_WARP;
	int64_t		b,
				e;

	pr_even_range(total, part, n_parts, &b, &e);
	for (int64_t k = b; k < e; k++)
	{
		int32_t		r;
		int64_t		s;

		if (k < t->n_vec)
		{
			r = t->vec_row[k];
			s = k;
		}
		else if (k < t->n_vec + t->longs.n_long)
		{
			r = t->longs.long_row[k - t->n_vec];
			s = t->longs.chunk_begin[k - t->n_vec];
		}
		else
		{
			r = t->ell_row[k - t->n_vec - t->longs.n_long];
			s = t->n_vec + (k - t->n_vec - t->longs.n_long);
		}
		if (r >= 0)
			slot[w->merge_pos[r]++] = (int32_t) (t->part_base + s);
	}
}

/* The merge slots of row r: the tiles after the first in which it has entries. */
static int64_t
row_merge_slots(const CompositeWork *w, int64_t r)
{
	int64_t		c = 0;

	for (int t = 1; t < w->n_tiles; t++)
		c += tile_lens(w, t)[r] > 0;
	return c;
}

/*
 * Compact partials: slot ranges of the later tiles, and for every row they write, its slots in
 * tile order (the merge lists, rows ascending).
 */
static PrStatus
composite_plan_merge(CompositeWork *w, const PrAllocator *alloc, PrError *err)
{
	PrComposite *out = w->out;
	int64_t		n = w->n;
	int64_t		n_part = 0,
				rows = 0,
				slots = 0;

	for (int t = 1; t < out->n_tiles; t++)
	{
		out->tiles[t].part_base = n_part;
		n_part += out->tiles[t].n_vec + PR_PLAN_WARP * out->tiles[t].n_ell;
	}
	if (n_part >= (int64_t) INT32_MAX)
		return pr_error_set(err, PR_ERR_TOO_LARGE, "composite plan: %lld partial slots exceed 32-bit ids",
							(long long) n_part);
	out->n_part = n_part;
	for (int64_t r = 0; r < n; r++)
	{
		int64_t		c = row_merge_slots(w, r);

		rows += c > 0;
		slots += c;
	}
	out->n_merge_rows = rows;
	if (w->o->shapes_only)
		return PR_OK;
	out->merge_row = pr_alloc_array(alloc, (size_t) rows + 1, sizeof(int32_t));
	out->merge_ptr = pr_alloc_array(alloc, (size_t) rows + 1, sizeof(int64_t));
	out->merge_slot = pr_alloc_array(alloc, (size_t) slots + 1, sizeof(int32_t));
	w->merge_pos = malloc((size_t) (n + 1) * sizeof(int64_t));
	if (out->merge_row == NULL || out->merge_ptr == NULL || out->merge_slot == NULL || w->merge_pos == NULL)
	{
		free(w->merge_pos);
		w->merge_pos = NULL;
		return pr_error_set(err, PR_ERR_NOMEM, "composite plan: out of memory for the merge lists");
	}
	rows = 0;
	slots = 0;
	for (int64_t r = 0; r < n; r++)
	{
		int64_t		c = row_merge_slots(w, r);

		w->merge_pos[r] = slots;
		if (c > 0)
		{
			out->merge_row[rows] = (int32_t) r;
			out->merge_ptr[rows++] = slots;
			slots += c;
		}
	}
	out->merge_ptr[rows] = slots;
	for (int t = 1; t < out->n_tiles; t++)
	{
		PrCompositeTile *tile = &out->tiles[t];

		w->t = tile;
		pr_parallel_run(merge_fill_part, w, pr_plan_parts(tile->n_vec + tile->longs.n_long + PR_PLAN_WARP * tile->n_ell));
	}
	free(w->merge_pos);
	w->merge_pos = NULL;
	return PR_OK;
}

/* Frees a composite plan's work arrays and, on failure, what was built. */
static PrStatus
composite_finish(CompositeWork *w, PrComposite *out, const PrAllocator *alloc, PrStatus st,
				 PrError *err)
{
	free(w->lens);
	free(w->cursor);
	free(w->order);
	free(w->totals);
	pr_count_sort_free(&w->sort, &pr_malloc_allocator);
	free(w->big);
	free(w->wl_src);
	free(w->merge_pos);
	if (st != PR_OK)
	{
		pr_plan_composite_free(out, alloc);
		if (st == PR_ERR_NOMEM)
			return pr_error_set(err, PR_ERR_NOMEM, "composite plan: out of memory");
	}
	return st;
}

/* Builds the composite tiled layout with the column degrees given (see pr_plan.h). */
PrStatus
pr_plan_composite_with_degrees(const PrPlanCsr *csr, const int64_t *col_degree,
							   const PrCompositeOptions *options, const PrAllocator *alloc,
							   PrComposite *out, PrError *err)
{
	int64_t		n = csr->n;
	int64_t		n_cols = csr->n;
	int64_t		bounds[PR_PLAN_MAX_TILES + 1];
	CompositeWork w;
	PrStatus	st = PR_OK;

	memset(out, 0, sizeof(*out));
	memset(&w, 0, sizeof(w));
	out->n = n;
	out->n_cols = n_cols;
	out->options = *options;
	if (options->vec_threshold < 1 || options->chunk < PR_PLAN_WARP)
		return pr_error_set(err, PR_ERR_INVALID,
							"composite plan: vec_threshold must be >= 1 and chunk >= %d",
							PR_PLAN_WARP);
	if (options->n_smem_tiles > 0 && (options->smem_width < 1 || options->smem_width >= 65535))
		return pr_error_set(err, PR_ERR_INVALID,
							"composite plan: shared-memory tiles need 1 <= smem_width < 65535");
	for (int64_t r = 0; r < n; r++)
		if (csr->ptr[r + 1] - csr->ptr[r] > (int64_t) INT32_MAX)
			return pr_error_set(err, PR_ERR_TOO_LARGE, "composite plan: row %lld has over 2^31 entries",
								(long long) r);
	if (n_cols > PR_PLAN_MAX_NODES_CHECK)
		return pr_error_set(err, PR_ERR_TOO_LARGE, "composite plan: %lld columns exceed the 32-bit ids",
							(long long) n_cols);
	out->n_tiles = composite_tile_bounds(n_cols, options, bounds, PR_PLAN_MAX_TILES);
	w.csr = csr;
	w.o = options;
	w.n = n;
	w.n_cols = n_cols;
	w.n_tiles = out->n_tiles;
	w.bounds = bounds;
	w.vthr = options->vec_threshold;
	w.chunk = options->chunk;
	w.out = out;
	w.parts = pr_plan_parts(csr->nnz + n);
	out->tiles = pr_alloc_array(alloc, (size_t) out->n_tiles, sizeof(PrCompositeTile));
	w.lens = malloc(((size_t) out->n_tiles * (size_t) n + 1) * sizeof(int32_t));
	w.cursor = malloc((size_t) (n + 1) * sizeof(int64_t));
	w.order = malloc((size_t) (n + 1) * sizeof(int32_t));
	w.totals = malloc((size_t) w.parts * sizeof(SegmentTotals));
	if (out->tiles == NULL || w.lens == NULL || w.cursor == NULL || w.order == NULL ||
		w.totals == NULL ||
		!pr_count_sort_init(&w.sort, (size_t) w.n, PLAN_SORT_BUCKETS + 1, w.parts,
							&pr_malloc_allocator))
		return composite_finish(&w, out, alloc, PR_ERR_NOMEM, err);
	memset(out->tiles, 0, (size_t) out->n_tiles * sizeof(PrCompositeTile));
	pr_parallel_run(segment_part, &w, w.parts);
	memcpy(w.cursor, csr->ptr, (size_t) n * sizeof(int64_t));

	for (int t = 0; t < out->n_tiles; t++)
	{
		PrCompositeTile *tile = &out->tiles[t];

		tile->col_begin = bounds[t];
		tile->col_end = bounds[t + 1];
		tile->local16 = t < options->n_smem_tiles;
		tile->part_base = -1;
		for (int p = 0; p < w.parts; p++)
		{
			tile->nnz += w.totals[p].nnz[t];
			for (int c = 0; c < 2; c++)
				for (int b = 0; b < PR_RANK_BUCKETS; b++)
					tile->rank_hist[c][b] += w.totals[p].rank_hist[t][c][b];
		}
		{
			double		sum = 0,
						sum2 = 0;

			for (int64_t c = bounds[t]; c < bounds[t + 1]; c++)
			{
				sum += (double) col_degree[c];
				sum2 += (double) col_degree[c] * (double) col_degree[c];
			}
			tile->eff_window = sum2 > 0 ? (int64_t) (sum * sum / sum2) + 1 : 1;
		}
		w.tile = t;
		w.first = t == 0;
		w.t = tile;
		if (!composite_plan_tile(&w, alloc))
			return composite_finish(&w, out, alloc, PR_ERR_NOMEM, err);
		out->padding += tile->n_idx - tile->nnz;
		tile->rank_hist[1][0] += tile->n_idx - tile->nnz;
		out->device_bytes += (size_t) tile->n_idx * ((tile->local16 ? sizeof(uint16_t) : sizeof(int32_t)) +
													 (csr->val ? sizeof(float) : 0))
			+ (size_t) tile->n_vec * (sizeof(int32_t) + sizeof(int64_t))
			+ (size_t) tile->n_ell * (sizeof(int64_t) + PR_PLAN_WARP * sizeof(int32_t))
			+ (size_t) tile->longs.n_long * (sizeof(int32_t) + sizeof(int64_t));
	}
	if (options->compact && out->n_tiles > 1)
	{
		st = composite_plan_merge(&w, alloc, err);
		if (st == PR_OK)
			out->device_bytes += (size_t) out->n_part * sizeof(float)
				+ (size_t) out->n_merge_rows * (sizeof(int32_t) + sizeof(int64_t))
				+ (out->merge_ptr ? (size_t) out->merge_ptr[out->n_merge_rows] * sizeof(int32_t) : 0);
	}
	return composite_finish(&w, out, alloc, st, err);
}

/* Builds the composite tiled layout (see pr_plan.h). */
PrStatus
pr_plan_composite(const PrPlanCsr *csr, const PrCompositeOptions *options,
				  const PrAllocator *alloc, PrComposite *out, PrError *err)
{
	int64_t    *col_degree = malloc((size_t) (csr->n + 1) * sizeof(int64_t));
	PrStatus	st;

	memset(out, 0, sizeof(*out));
	if (col_degree == NULL)
		return pr_error_set(err, PR_ERR_NOMEM, "composite plan: out of memory");
	st = pr_plan_column_degrees(csr, col_degree, err);
	if (st == PR_OK)
		st = pr_plan_composite_with_degrees(csr, col_degree, options, alloc, out, err);
	free(col_degree);
	return st;
}

/* Frees a binned layout. */
void
pr_plan_binned_free(PrBinned *b, const PrAllocator *alloc)
{
	pr_free(alloc, b->rows);
	pr_free(alloc, b->chunk_begin_edge);
	pr_free(alloc, b->chunk_row);
	pr_plan_long_rows_free(&b->longs, alloc);
	memset(b, 0, sizeof(*b));
}

/* Bin of a row of length len (PR_BIN_COUNT-1 for chunked rows). */
static int
binned_bin_of(int64_t len, int64_t chunk)
{
	if (len > chunk)
		return PR_BIN_COUNT - 1;
	for (int b = 0; b < PR_BIN_COUNT - 2; b++)
		if (len <= 4 * (int64_t) pr_bin_lanes[b])
			return b;
	return PR_BIN_COUNT - 2;
}

/* Builds the row-binned layout (see pr_plan.h). */
PrStatus
pr_plan_binned(const PrPlanCsr *csr, int chunk, const PrAllocator *alloc, PrBinned *out,
			   PrError *err)
{
	int64_t		n = csr->n;
	int64_t		cursor[PR_BIN_COUNT];
	int64_t		n_binned = 0,
				lr = 0,
				c = 0;

	memset(out, 0, sizeof(*out));
	out->n = n;
	out->chunk = chunk < PR_PLAN_WARP ? PR_PLAN_WARP : chunk;
	for (int64_t r = 0; r < n; r++)
	{
		int64_t		len = csr->ptr[r + 1] - csr->ptr[r];
		int			b = binned_bin_of(len, out->chunk);

		out->bin_begin[b + 1]++;
		if (b == PR_BIN_COUNT - 1)
		{
			out->longs.n_long++;
			out->n_chunks += (len + out->chunk - 1) / out->chunk;
		}
		else
			n_binned++;
	}
	for (int b = 0; b < PR_BIN_COUNT; b++)
		out->bin_begin[b + 1] += out->bin_begin[b];
	out->rows = pr_alloc_array(alloc, (size_t) n_binned + 1, sizeof(int32_t));
	out->chunk_begin_edge = pr_alloc_array(alloc, (size_t) out->n_chunks + 1, sizeof(int64_t));
	out->chunk_row = pr_alloc_array(alloc, (size_t) out->n_chunks + 1, sizeof(int32_t));
	if (!pr_plan_long_rows_alloc(&out->longs, out->longs.n_long, alloc) || out->rows == NULL ||
		out->chunk_begin_edge == NULL || out->chunk_row == NULL)
	{
		pr_plan_binned_free(out, alloc);
		return pr_error_set(err, PR_ERR_NOMEM, "binned plan: out of memory");
	}
	for (int b = 0; b < PR_BIN_COUNT; b++)
		cursor[b] = out->bin_begin[b];
	for (int64_t r = 0; r < n; r++)
	{
		int64_t		len = csr->ptr[r + 1] - csr->ptr[r];
		int			b = binned_bin_of(len, out->chunk);

		if (b < PR_BIN_COUNT - 1)
			out->rows[cursor[b]++] = (int32_t) r;
		else
		{
			out->longs.long_row[lr] = (int32_t) r;
			out->longs.chunk_begin[lr++] = c;
			for (int64_t e = csr->ptr[r]; e < csr->ptr[r + 1]; e += out->chunk)
			{
				out->chunk_row[c] = (int32_t) r;
				out->chunk_begin_edge[c++] = e;
			}
		}
	}
	out->longs.chunk_begin[lr] = c;
	/* chunk c covers chunk_begin_edge[c] .. min(that + chunk, end of its row) */
	out->chunk_begin_edge[c] = csr->nnz;
	out->device_bytes = (size_t) (n + 1) * sizeof(int64_t) + (size_t) csr->nnz * sizeof(int32_t)
		+ (csr->val ? (size_t) csr->nnz * sizeof(float) : 0) + (size_t) n_binned * sizeof(int32_t)
		+ (size_t) out->n_chunks * (sizeof(int64_t) + sizeof(int32_t))
		+ (size_t) out->longs.n_long * (sizeof(int32_t) + sizeof(int64_t));
	return PR_OK;
}
