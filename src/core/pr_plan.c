/*
 * pr_plan.c — the format planners of the GPU engine (degree order, relabelling, composite tiles,
 * row bins); the performance model lives in pr_plan_model.c.  Pure C11: see pr_plan.h.
 */
#include "pr_plan.h"

#include <stdlib.h>
#include <string.h>

const int	pr_bin_lanes[PR_BIN_COUNT] = {1, 2, 4, 8, 16, 32, 32};

/* Orders nodes by descending key with a counting sort (ties keep ascending ids). */
PrStatus
pr_plan_degree_order(int64_t n, const int64_t *key, int32_t *new_to_old, int32_t *old_to_new,
					 const PrAllocator *alloc, PrError *err)
{
	int64_t		max_key = 0;
	int64_t    *start;

	if (n < 0 || n > PR_PLAN_MAX_NODES_CHECK)
		return pr_error_set(err, PR_ERR_TOO_LARGE, "degree order: %lld nodes exceed the 32-bit ids",
							(long long) n);
	for (int64_t i = 0; i < n; i++)
	{
		if (key[i] < 0)
			return pr_error_set(err, PR_ERR_INVALID, "degree order: negative key at node %lld",
								(long long) i);
		if (key[i] > max_key)
			max_key = key[i];
	}
	start = pr_alloc_array(alloc, (size_t) max_key + 2, sizeof(int64_t));
	if (start == NULL)
		return pr_error_set(err, PR_ERR_NOMEM, "degree order: out of memory");
	memset(start, 0, ((size_t) max_key + 2) * sizeof(int64_t));
	/* bucket b = max_key - key, so that larger keys come first */
	for (int64_t i = 0; i < n; i++)
		start[max_key - key[i] + 1]++;
	for (int64_t b = 0; b <= max_key; b++)
		start[b + 1] += start[b];
	for (int64_t i = 0; i < n; i++)
	{
		int64_t		pos = start[max_key - key[i]]++;

		new_to_old[pos] = (int32_t) i;
		old_to_new[i] = (int32_t) pos;
	}
	pr_free(alloc, start);
	return PR_OK;
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

/*
 * Relabels a CSR with two counting sorts: entries are first bucketed by new column (a CSC), then
 * poured back into their new rows column by column, which leaves every row's columns ascending.
 */
PrStatus
pr_plan_relabel(int64_t n, const int64_t *ptr, const int32_t *col, const double *val,
				const int32_t *old_to_new, const PrAllocator *alloc, PrPlanCsr *out, PrError *err)
{
	int64_t		nnz = ptr[n];
	int64_t    *cptr = NULL;
	int32_t    *crow = NULL;
	float	   *cval = NULL;
	int64_t    *cursor = NULL;

	memset(out, 0, sizeof(*out));
	if (n > PR_PLAN_MAX_NODES_CHECK)
		return pr_error_set(err, PR_ERR_TOO_LARGE, "relabel: %lld nodes exceed the 32-bit ids",
							(long long) n);
	out->n = n;
	out->nnz = nnz;
	out->ptr = pr_alloc_array(alloc, (size_t) n + 1, sizeof(int64_t));
	out->col = pr_alloc_array(alloc, (size_t) (nnz > 0 ? nnz : 1), sizeof(int32_t));
	if (val != NULL)
		out->val = pr_alloc_array(alloc, (size_t) (nnz > 0 ? nnz : 1), sizeof(float));
	cptr = pr_alloc_array(alloc, (size_t) n + 1, sizeof(int64_t));
	cursor = pr_alloc_array(alloc, (size_t) n + 1, sizeof(int64_t));
	crow = pr_alloc_array(alloc, (size_t) (nnz > 0 ? nnz : 1), sizeof(int32_t));
	if (val != NULL)
		cval = pr_alloc_array(alloc, (size_t) (nnz > 0 ? nnz : 1), sizeof(float));
	if (out->ptr == NULL || out->col == NULL || (val != NULL && (out->val == NULL || cval == NULL)) ||
		cptr == NULL || cursor == NULL || crow == NULL)
	{
		pr_free(alloc, cptr);
		pr_free(alloc, cursor);
		pr_free(alloc, crow);
		pr_free(alloc, cval);
		pr_plan_csr_free(out, alloc);
		return pr_error_set(err, PR_ERR_NOMEM, "relabel: out of memory for %lld entries",
							(long long) nnz);
	}

	/* pass 1: CSC in new ids */
	memset(cptr, 0, ((size_t) n + 1) * sizeof(int64_t));
	for (int64_t e = 0; e < nnz; e++)
		cptr[(old_to_new ? old_to_new[col[e]] : col[e]) + 1]++;
	for (int64_t c = 0; c < n; c++)
		cptr[c + 1] += cptr[c];
	memcpy(cursor, cptr, ((size_t) n + 1) * sizeof(int64_t));
	for (int64_t r = 0; r < n; r++)
	{
		int32_t		new_r = old_to_new ? old_to_new[r] : (int32_t) r;

		for (int64_t e = ptr[r]; e < ptr[r + 1]; e++)
		{
			int32_t		c = old_to_new ? old_to_new[col[e]] : col[e];
			int64_t		pos = cursor[c]++;

			crow[pos] = new_r;
			if (val != NULL)
				cval[pos] = (float) val[e];
		}
	}

	/* pass 2: back to rows, columns in ascending order */
	out->ptr[0] = 0;
	for (int64_t r = 0; r < n; r++)
	{
		int32_t		new_r = old_to_new ? old_to_new[r] : (int32_t) r;

		cursor[new_r] = ptr[r + 1] - ptr[r];
	}
	for (int64_t r = 0; r < n; r++)
		out->ptr[r + 1] = out->ptr[r] + cursor[r];
	memcpy(cursor, out->ptr, (size_t) n * sizeof(int64_t));
	for (int64_t c = 0; c < n; c++)
	{
		for (int64_t p = cptr[c]; p < cptr[c + 1]; p++)
		{
			int64_t		pos = cursor[crow[p]]++;

			out->col[pos] = (int32_t) c;
			if (val != NULL)
				out->val[pos] = cval[p];
		}
	}
	pr_free(alloc, cptr);
	pr_free(alloc, cursor);
	pr_free(alloc, crow);
	pr_free(alloc, cval);
	return PR_OK;
}

/* Transposes a CSR with one counting sort; rows of the result come out with ascending columns. */
PrStatus
pr_plan_transpose(const PrPlanCsr *csr, const PrAllocator *alloc, PrPlanCsr *out, PrError *err)
{
	int64_t		n = csr->n;
	int64_t		nnz = csr->nnz;
	int64_t    *cursor;

	memset(out, 0, sizeof(*out));
	out->n = n;
	out->nnz = nnz;
	out->ptr = pr_alloc_array(alloc, (size_t) n + 1, sizeof(int64_t));
	out->col = pr_alloc_array(alloc, (size_t) (nnz > 0 ? nnz : 1), sizeof(int32_t));
	if (csr->val != NULL)
		out->val = pr_alloc_array(alloc, (size_t) (nnz > 0 ? nnz : 1), sizeof(float));
	cursor = pr_alloc_array(alloc, (size_t) n + 1, sizeof(int64_t));
	if (out->ptr == NULL || out->col == NULL || (csr->val != NULL && out->val == NULL) ||
		cursor == NULL)
	{
		pr_free(alloc, cursor);
		pr_plan_csr_free(out, alloc);
		return pr_error_set(err, PR_ERR_NOMEM, "transpose: out of memory for %lld entries",
							(long long) nnz);
	}
	memset(out->ptr, 0, ((size_t) n + 1) * sizeof(int64_t));
	for (int64_t e = 0; e < nnz; e++)
		out->ptr[csr->col[e] + 1]++;
	for (int64_t r = 0; r < n; r++)
		out->ptr[r + 1] += out->ptr[r];
	memcpy(cursor, out->ptr, (size_t) n * sizeof(int64_t));
	for (int64_t r = 0; r < n; r++)
		for (int64_t e = csr->ptr[r]; e < csr->ptr[r + 1]; e++)
		{
			int64_t		pos = cursor[csr->col[e]]++;

			out->col[pos] = (int32_t) r;
			if (csr->val != NULL)
				out->val[pos] = csr->val[e];
		}
	pr_free(alloc, cursor);
	return PR_OK;
}

/* Frees one tile's arrays. */
static void
composite_tile_free(PrCompositeTile *t, const PrAllocator *alloc)
{
	pr_free(alloc, t->vec_row);
	pr_free(alloc, t->vec_ptr);
	pr_free(alloc, t->longs.long_row);
	pr_free(alloc, t->longs.chunk_begin);
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
	memset(c, 0, sizeof(*c));
}

/* Column tile boundaries: width-wide tiles, and by the paper's rule the rest as one sparse tile. */
static int
composite_tile_bounds(const PrPlanCsr *csr, const int64_t *col_degree,
					  const PrCompositeOptions *o, int64_t *bounds, int max_tiles)
{
	int64_t		n = csr->n;
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
		if (o->paper_stop && count > 0 && col_degree[c] <= 1)
			break;
		c = (n - c > w) ? c + w : n;
		bounds[++count] = c;
	}
	if (c < n || count == 0)
		bounds[++count] = n;
	return count;
}

/* Marks a composite planning failure: frees what was built and records the message. */
static PrStatus
composite_fail(PrComposite *out, const PrAllocator *alloc, int64_t *tmp1, int64_t *tmp2,
			   int64_t *tmp3, int32_t *tmp4, PrError *err)
{
	pr_free(alloc, tmp1);
	pr_free(alloc, tmp2);
	pr_free(alloc, tmp3);
	pr_free(alloc, tmp4);
	pr_plan_composite_free(out, alloc);
	return pr_error_set(err, PR_ERR_NOMEM, "composite plan: out of memory");
}

/* Plans one tile: row segments from cursor (advanced past the tile), sorted by length, packed. */
static bool
composite_plan_tile(const PrPlanCsr *csr, const PrCompositeOptions *o, bool first_tile,
					int64_t col_end, int64_t *cursor, int64_t *len, int64_t *count,
					int32_t *order, const PrAllocator *alloc, PrCompositeTile *t)
{
	int64_t		width = t->col_end - t->col_begin;
	int32_t		cb = (int32_t) t->col_begin;

	int64_t		n = csr->n;
	int64_t		max_len = 0;
	int64_t		n_rows = 0;
	int64_t		n_vec = 0,
				n_long = 0,
				n_ell_rows = 0,
				vec_entries = 0,
				ell_entries = 0;
	int64_t		chunk = o->chunk < PR_PLAN_WARP ? PR_PLAN_WARP : o->chunk;
	int64_t		vthr = o->vec_threshold < 1 ? 1 : o->vec_threshold;

	/* segment lengths of every row in this tile (columns ascending: a contiguous run) */
	for (int64_t r = 0; r < n; r++)
	{
		int64_t		e = cursor[r];
		int64_t		end = csr->ptr[r + 1];
		int64_t		lo = e, hi = end;

		/* binary search for the first entry at or past col_end */
		while (lo < hi)
		{
			int64_t		mid = lo + (hi - lo) / 2;

			if (csr->col[mid] < col_end)
				lo = mid + 1;
			else
				hi = mid;
		}
		len[r] = lo - e;
		t->nnz += len[r];
		if (len[r] > max_len)
			max_len = len[r];
	}

	/* sort rows by descending length, ties by ascending id */
	memset(count, 0, (size_t) (max_len + 2) * sizeof(int64_t));
	for (int64_t r = 0; r < n; r++)
		count[max_len - len[r] + 1]++;
	for (int64_t b = 0; b <= max_len; b++)
		count[b + 1] += count[b];
	for (int64_t r = 0; r < n; r++)
		order[count[max_len - len[r]]++] = (int32_t) r;

	/* classify */
	for (int64_t i = 0; i < n; i++)
	{
		int64_t		l = len[order[i]];

		if (l == 0 && !first_tile)
			break;
		n_rows++;
		if (l >= vthr)
		{
			int64_t		pieces = (l + chunk - 1) / chunk;

			n_vec += pieces;
			vec_entries += l;
			if (pieces > 1)
				n_long++;
		}
		else
			n_ell_rows++;
	}
	t->n_rows = n_rows;
	t->n_vec = n_vec;
	t->n_ell = (n_ell_rows + PR_PLAN_WARP - 1) / PR_PLAN_WARP;
	for (int64_t g = 0; g < t->n_ell; g++)
	{
		int64_t		first = n_rows - n_ell_rows + g * PR_PLAN_WARP;

		ell_entries += PR_PLAN_WARP * len[order[first]];
	}
	t->n_idx = vec_entries + ell_entries;
	t->vec_row = pr_alloc_array(alloc, (size_t) (n_vec + 1), sizeof(int32_t));
	t->vec_ptr = pr_alloc_array(alloc, (size_t) (n_vec + 1), sizeof(int64_t));
	t->longs.n_long = n_long;
	t->longs.long_row = pr_alloc_array(alloc, (size_t) (n_long + 1), sizeof(int32_t));
	t->longs.chunk_begin = pr_alloc_array(alloc, (size_t) (n_long + 1), sizeof(int64_t));
	t->ell_off = pr_alloc_array(alloc, (size_t) (t->n_ell + 1), sizeof(int64_t));
	t->ell_row = pr_alloc_array(alloc, (size_t) (t->n_ell * PR_PLAN_WARP + 1), sizeof(int32_t));
	if (!o->shapes_only)
	{
		if (t->local16)
			t->idx16 = pr_alloc_array(alloc, (size_t) (t->n_idx + 1), sizeof(uint16_t));
		else
			t->idx = pr_alloc_array(alloc, (size_t) (t->n_idx + 1), sizeof(int32_t));
		if (csr->val != NULL)
			t->val = pr_alloc_array(alloc, (size_t) (t->n_idx + 1), sizeof(float));
	}
	if (t->vec_row == NULL || t->vec_ptr == NULL || t->longs.long_row == NULL ||
		t->longs.chunk_begin == NULL || t->ell_off == NULL || t->ell_row == NULL ||
		(!o->shapes_only && ((t->idx == NULL && t->idx16 == NULL) ||
							 (csr->val != NULL && t->val == NULL))))
		return false;

	/* CSR-vector workloads */
	{
		int64_t		w = 0,
					pos = 0,
					lr = 0,
					chunks_end = 0;

		for (int64_t i = 0; i < n_rows - n_ell_rows; i++)
		{
			int32_t		r = order[i];
			int64_t		l = len[r];
			int64_t		pieces = (l + chunk - 1) / chunk;

			if (pieces > 1)
			{
				t->longs.long_row[lr] = r;
				t->longs.chunk_begin[lr] = w;
				lr++;
			}
			for (int64_t p = 0; p < pieces; p++)
			{
				int64_t		b = p * chunk;
				int64_t		e = (b + chunk < l) ? b + chunk : l;

				t->vec_row[w] = pieces > 1 ? -1 : r;
				t->vec_ptr[w] = pos;
				if (t->idx != NULL)
					memcpy(t->idx + pos, csr->col + cursor[r] + b, (size_t) (e - b) * sizeof(int32_t));
				for (int64_t q = 0; t->idx16 != NULL && q < e - b; q++)
					t->idx16[pos + q] = (uint16_t) (csr->col[cursor[r] + b + q] - cb);
				if (t->val != NULL)
					memcpy(t->val + pos, csr->val + cursor[r] + b, (size_t) (e - b) * sizeof(float));
				pos += e - b;
				w++;
			}
			if (pieces > 1)
				chunks_end = w;
		}
		t->vec_ptr[w] = pos;
		t->longs.chunk_begin[lr] = chunks_end;

		/* ELL workloads, column-major, padded with column n */
		for (int64_t g = 0; g < t->n_ell; g++)
		{
			int64_t		first = n_rows - n_ell_rows + g * PR_PLAN_WARP;
			int64_t		height = len[order[first]];

			t->ell_off[g] = pos;
			for (int lane = 0; lane < PR_PLAN_WARP; lane++)
			{
				int64_t		i = first + lane;
				int32_t		r = (i < n_rows) ? order[i] : -1;
				int64_t		l = (r >= 0) ? len[r] : 0;

				t->ell_row[g * PR_PLAN_WARP + lane] = r;
				for (int64_t j = 0; (t->idx != NULL || t->idx16 != NULL) && j < height; j++)
				{
					int64_t		slot = pos + j * PR_PLAN_WARP + lane;

					if (t->idx16 != NULL)
						t->idx16[slot] = (uint16_t) ((j < l) ? csr->col[cursor[r] + j] - cb : width);
					else
						t->idx[slot] = (j < l) ? csr->col[cursor[r] + j] : (int32_t) n;
					if (t->val != NULL)
						t->val[slot] = (j < l) ? csr->val[cursor[r] + j] : 0.0f;
				}
			}
			pos += height * PR_PLAN_WARP;
		}
		t->ell_off[t->n_ell] = pos;
	}
	for (int64_t r = 0; r < n; r++)
		cursor[r] += len[r];
	return true;
}

/* Builds the composite tiled layout (see pr_plan.h). */
PrStatus
pr_plan_composite(const PrPlanCsr *csr, const PrCompositeOptions *options,
				  const PrAllocator *alloc, PrComposite *out, PrError *err)
{
	int64_t		n = csr->n;
	int64_t    *col_degree = NULL;
	int64_t    *cursor = NULL;
	int64_t    *len = NULL;
	int64_t    *count = NULL;
	int32_t    *order = NULL;
	int64_t		bounds[PR_PLAN_MAX_TILES + 1];
	int64_t		max_row = 0;

	memset(out, 0, sizeof(*out));
	out->n = n;
	out->options = *options;
	if (options->vec_threshold < 1 || options->chunk < PR_PLAN_WARP)
		return pr_error_set(err, PR_ERR_INVALID,
							"composite plan: vec_threshold must be >= 1 and chunk >= %d",
							PR_PLAN_WARP);
	if (options->n_smem_tiles > 0 && (options->smem_width < 1 || options->smem_width >= 65535))
		return pr_error_set(err, PR_ERR_INVALID,
							"composite plan: shared-memory tiles need 1 <= smem_width < 65535");
	col_degree = pr_alloc_array(alloc, (size_t) n + 1, sizeof(int64_t));
	cursor = pr_alloc_array(alloc, (size_t) n + 1, sizeof(int64_t));
	len = pr_alloc_array(alloc, (size_t) n + 1, sizeof(int64_t));
	order = pr_alloc_array(alloc, (size_t) n + 1, sizeof(int32_t));
	if (col_degree == NULL || cursor == NULL || len == NULL || order == NULL)
		return composite_fail(out, alloc, col_degree, cursor, len, order, err);
	memset(col_degree, 0, ((size_t) n + 1) * sizeof(int64_t));
	for (int64_t e = 0; e < csr->nnz; e++)
		col_degree[csr->col[e]]++;
	for (int64_t r = 0; r < n; r++)
	{
		cursor[r] = csr->ptr[r];
		if (csr->ptr[r + 1] - csr->ptr[r] > max_row)
			max_row = csr->ptr[r + 1] - csr->ptr[r];
	}
	count = pr_alloc_array(alloc, (size_t) max_row + 2, sizeof(int64_t));
	if (count == NULL)
		return composite_fail(out, alloc, col_degree, cursor, len, order, err);

	out->n_tiles = composite_tile_bounds(csr, col_degree, options, bounds, PR_PLAN_MAX_TILES);
	out->tiles = pr_alloc_array(alloc, (size_t) out->n_tiles, sizeof(PrCompositeTile));
	if (out->tiles == NULL)
	{
		pr_free(alloc, count);
		return composite_fail(out, alloc, col_degree, cursor, len, order, err);
	}
	memset(out->tiles, 0, (size_t) out->n_tiles * sizeof(PrCompositeTile));
	for (int t = 0; t < out->n_tiles; t++)
	{
		PrCompositeTile *tile = &out->tiles[t];

		tile->col_begin = bounds[t];
		tile->col_end = bounds[t + 1];
		tile->local16 = t < options->n_smem_tiles;
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
		if (!composite_plan_tile(csr, options, t == 0, bounds[t + 1], cursor, len, count, order,
								 alloc, tile))
		{
			pr_free(alloc, count);
			return composite_fail(out, alloc, col_degree, cursor, len, order, err);
		}
		out->padding += tile->n_idx - tile->nnz;
		out->device_bytes += (size_t) tile->n_idx * ((tile->local16 ? sizeof(uint16_t) : sizeof(int32_t)) +
													 (csr->val ? sizeof(float) : 0))
			+ (size_t) tile->n_vec * (sizeof(int32_t) + sizeof(int64_t))
			+ (size_t) tile->n_ell * (sizeof(int64_t) + PR_PLAN_WARP * sizeof(int32_t))
			+ (size_t) tile->longs.n_long * (sizeof(int32_t) + sizeof(int64_t));
	}
	pr_free(alloc, count);
	pr_free(alloc, col_degree);
	pr_free(alloc, cursor);
	pr_free(alloc, len);
	pr_free(alloc, order);
	return PR_OK;
}

/* Frees a binned layout. */
void
pr_plan_binned_free(PrBinned *b, const PrAllocator *alloc)
{
	pr_free(alloc, b->rows);
	pr_free(alloc, b->chunk_begin_edge);
	pr_free(alloc, b->chunk_row);
	pr_free(alloc, b->longs.long_row);
	pr_free(alloc, b->longs.chunk_begin);
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
	out->longs.long_row = pr_alloc_array(alloc, (size_t) out->longs.n_long + 1, sizeof(int32_t));
	out->longs.chunk_begin = pr_alloc_array(alloc, (size_t) out->longs.n_long + 1, sizeof(int64_t));
	if (out->rows == NULL || out->chunk_begin_edge == NULL || out->chunk_row == NULL ||
		out->longs.long_row == NULL ||
		out->longs.chunk_begin == NULL)
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
