/*
 * pr_stream.c — the block plan of the streamed product (see pr_stream.h).
 */
#include "pr_stream.h"

#include <string.h>

/* Name of a mode. */
const char *
pr_stream_mode_name(PrStreamMode mode)
{
	switch (mode)
	{
		case PR_STREAM_RESIDENT:
			return "resident";
		case PR_STREAM_PINNED_WHOLE:
			return "pinned";
		case PR_STREAM_STAGED:
			return "staged";
		case PR_STREAM_PAGEABLE:
			return "pageable";
	}
	return "unknown";
}

/* Default parameters. */
void
pr_stream_params_init(PrStreamParams *params)
{
	memset(params, 0, sizeof(*params));
	params->has_val = true;
	params->h2d_bytes_per_s = 50e9;
	params->transfer_latency_s = 10e-6;
	params->edge_s = 20e-12;
	params->row_s = 0.1e-9;
	params->launch_s = 5e-6;
	params->max_blocks = 4096;
}

/* Rounds up to PR_STREAM_ALIGN. */
static size_t
align_up(size_t x)
{
	return (x + PR_STREAM_ALIGN - 1) / PR_STREAM_ALIGN * PR_STREAM_ALIGN;
}

/* The layout of rows [r0, r1) in a buffer, values of val_bytes each (0: none). */
PrStreamLayout
pr_stream_block_layout_values(const int64_t *ptr, int64_t r0, int64_t r1, size_t val_bytes)
{
	PrStreamLayout l;
	size_t		entries = (size_t) (ptr[r1] - ptr[r0]);

	l.ptr_off = 0;
	l.col_off = align_up((size_t) (r1 - r0 + 1) * sizeof(int64_t));
	l.val_off = l.col_off + align_up(entries * sizeof(int32_t));
	l.bytes = val_bytes > 0 ? l.val_off + align_up(entries * val_bytes) : l.val_off;
	if (val_bytes == 0)
		l.val_off = l.col_off;
	l.copy_bytes = (size_t) (r1 - r0 + 1) * sizeof(int64_t) + entries * (sizeof(int32_t) + val_bytes);
	return l;
}

/* The layout of rows [r0, r1) in a buffer (float values when has_val). */
PrStreamLayout
pr_stream_block_layout(const int64_t *ptr, int64_t r0, int64_t r1, bool has_val)
{
	return pr_stream_block_layout_values(ptr, r0, r1, has_val ? sizeof(float) : 0);
}

/* Bytes per value of a plan's parameters (0: no values). */
static size_t
value_bytes(const PrStreamParams *params)
{
	if (!params->has_val)
		return 0;
	return params->val_bytes > 0 ? (size_t) params->val_bytes : sizeof(float);
}

/* Bytes of rows [r0, r1). */
static size_t
block_bytes(const int64_t *ptr, int64_t r0, int64_t r1, size_t vb)
{
	return pr_stream_block_layout_values(ptr, r0, r1, vb).bytes;
}

/* The last row end r1 in (r0, n] with rows [r0, r1) fitting cap bytes; r0 if not even one row does. */
static int64_t
fit_end(const int64_t *ptr, int64_t n, int64_t r0, size_t cap, size_t vb)
{
	int64_t		lo = r0,
				hi = n;			/* invariant: [r0, lo) fits (lo == r0: empty) */

	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo + 1) / 2;

		if (block_bytes(ptr, r0, mid, vb) <= cap)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* The fewest blocks that fit cap (greedy packing: each block as long as fits); -1 if a row cannot. */
static int64_t
count_min_blocks(const int64_t *ptr, int64_t n, size_t cap, size_t vb, int64_t *bad_row)
{
	int64_t		r = 0,
				b = 0;

	if (n == 0)
		return 1;
	while (r < n)
	{
		int64_t		e = fit_end(ptr, n, r, cap, vb);

		if (e == r)
		{
			*bad_row = r;
			return -1;
		}
		r = e;
		b++;
	}
	return b;
}

/*
 * Cuts n rows into exactly B blocks of about equal bytes, none above cap: block k ends where the
 * raw byte prefix reaches k/B of the total, pulled back when the block would not fit and pushed on
 * to hold at least one row.  False when the cut cannot be made (the last block does not fit).
 */
static bool
cut_blocks(const int64_t *ptr, int64_t n, int64_t B, size_t cap, size_t vb, int64_t *row_begin)
{
	double		entry_bytes = 4.0 + (double) vb;
	double		total = (double) ptr[n] * entry_bytes + 8.0 * (double) n;

	row_begin[0] = 0;
	for (int64_t k = 1; k < B; k++)
	{
		int64_t		prev = row_begin[k - 1];
		double		target = total * (double) k / (double) B;
		int64_t		lo = prev,
					hi = n;
		int64_t		fit;

		/* first r with prefix(r) >= target */
		while (lo < hi)
		{
			int64_t		mid = lo + (hi - lo) / 2;

			if ((double) ptr[mid] * entry_bytes + 8.0 * (double) mid >= target)
				hi = mid;
			else
				lo = mid + 1;
		}
		if (lo <= prev)
			lo = prev + 1;
		/* leave at least one row for each later block */
		if (lo > n - (B - k))
			lo = n - (B - k);
		fit = fit_end(ptr, n, prev, cap, vb);
		if (lo > fit)
			lo = fit;
		if (lo <= prev)
			return false;
		row_begin[k] = lo;
	}
	row_begin[B] = n;
	return block_bytes(ptr, row_begin[B - 1], n, vb) <= cap && (n == 0 || row_begin[B - 1] < n);
}

/* The model's time of the given blocks. */
double
pr_stream_predict(const int64_t *ptr, const int64_t *row_begin, int64_t n_blocks, bool has_val,
				  bool resident, const PrStreamParams *params, double *transfer_s, double *compute_s)
{
	size_t		vb = has_val ? value_bytes(params) : 0;
	double		sum_t = 0,
				sum_c = 0,
				first_t = 0,
				last_c = 0,
				rest_t,
				rest_c;

	for (int64_t b = 0; b < n_blocks; b++)
	{
		int64_t		r0 = row_begin[b],
					r1 = row_begin[b + 1];
		double		t = resident ? 0.0 : params->transfer_latency_s +
			(double) pr_stream_block_layout_values(ptr, r0, r1, vb).copy_bytes / params->h2d_bytes_per_s;
		double		c = params->launch_s + (double) (ptr[r1] - ptr[r0]) * params->edge_s +
			(double) (r1 - r0) * params->row_s;

		if (b == 0)
			first_t = t;
		if (b == n_blocks - 1)
			last_c = c;
		sum_t += t;
		sum_c += c;
	}
	if (transfer_s)
		*transfer_s = sum_t;
	if (compute_s)
		*compute_s = sum_c;
	if (resident)
		return sum_c;
	rest_t = sum_t - first_t;
	rest_c = sum_c - last_c;
	return first_t + (rest_t > rest_c ? rest_t : rest_c) + last_c;
}

/* Plans a matrix that fits one buffer whole: one resident block. */
static PrStatus
plan_resident(int64_t n, const int64_t *ptr, const PrStreamParams *params, size_t whole,
			  size_t whole_raw, const PrAllocator *alloc, PrStreamPlan *out, PrError *err)
{
	out->mode = PR_STREAM_RESIDENT;
	out->n_blocks = out->min_blocks = 1;
	out->row_begin = pr_alloc_array(alloc, 2, sizeof(int64_t));
	if (out->row_begin == NULL)
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory for a block plan");
	out->row_begin[0] = 0;
	out->row_begin[1] = n;
	out->buffer_bytes = out->device_bytes = whole;
	out->matrix_bytes = whole_raw;
	out->n_candidates = 1;
	out->predicted_s = pr_stream_predict(ptr, out->row_begin, 1, params->has_val, true, params,
										 &out->transfer_s, &out->compute_s);
	return PR_OK;
}

/* The bytes of the largest one-row block, and that row in *row (-1 when no row has any). */
static size_t
longest_row_bytes(const int64_t *ptr, int64_t n, size_t vb, int64_t *row)
{
	size_t		longest = 0;

	*row = -1;
	for (int64_t r = 0; r < n; r++)
	{
		size_t		b = block_bytes(ptr, r, r + 1, vb);

		if (b > longest)
		{
			longest = b;
			*row = r;
		}
	}
	return longest;
}

/*
 * How the host side is held for the pinned budget: the whole matrix pinned, two pinned staging
 * buffers (a block's capacity *cap then at most one of them), or pageable memory.
 */
static PrStreamMode
choose_host_mode(const PrStreamParams *params, size_t whole_raw, size_t longest, size_t *cap)
{
	if (whole_raw <= params->pinned_budget)
		return PR_STREAM_PINNED_WHOLE;
	if (params->pinned_budget / 2 >= longest)
	{
		if (params->pinned_budget / 2 < *cap)
			*cap = params->pinned_budget / 2;
		return PR_STREAM_STAGED;
	}
	return PR_STREAM_PAGEABLE;
}

/* Packs the rows greedily into n_blocks blocks of at most cap bytes (fits at min_blocks). */
static void
pack_blocks(const int64_t *ptr, int64_t n, int64_t n_blocks, size_t cap, size_t vb,
			int64_t *row_begin)
{
	row_begin[0] = 0;
	for (int64_t b = 0; b < n_blocks; b++)
		row_begin[b + 1] = fit_end(ptr, n, row_begin[b], cap, vb);
	row_begin[n_blocks] = n;
}

/*
 * The block count the model predicts fastest, among every count near the fewest and then
 * geometric steps up to max_blocks (or the forced count); counts the candidates in
 * out->n_candidates.  trial holds max_blocks + 1 entries.
 */
static int64_t
best_block_count(int64_t n, const int64_t *ptr, const PrStreamParams *params, size_t cap,
				 size_t vb, int64_t max_blocks, int64_t *trial, PrStreamPlan *out)
{
	int64_t		best_b = -1;
	double		best_s = 0;

	for (int64_t B = out->min_blocks; B <= max_blocks;
		 B = (B < out->min_blocks + 32) ? B + 1 : B + (B / 8 > 1 ? B / 8 : 1))
	{
		double		s;

		if (params->force_blocks > 0 && params->force_blocks > out->min_blocks)
			B = params->force_blocks < max_blocks ? params->force_blocks : max_blocks;
		if (!cut_blocks(ptr, n, B, cap, vb, trial))
		{
			/* an even cut did not fit: the greedy packing always does at min_blocks */
			if (B != out->min_blocks)
			{
				if (params->force_blocks > 0)
					break;
				continue;
			}
			pack_blocks(ptr, n, B, cap, vb, trial);
		}
		out->n_candidates++;
		s = pr_stream_predict(ptr, trial, B, params->has_val, false, params, NULL, NULL);
		if (best_b < 0 || s < best_s)
		{
			best_b = B;
			best_s = s;
		}
		if (params->force_blocks > 0)
			break;
	}
	if (best_b < 0)				/* a forced count whose even cut does not fit */
		best_b = out->min_blocks;
	return best_b;
}

/* Fills a streamed plan's sizes and predicted time from its blocks (out->row_begin). */
static void
measure_blocks(const int64_t *ptr, const PrStreamParams *params, size_t vb, size_t whole_raw,
			   PrStreamPlan *out)
{
	for (int64_t b = 0; b < out->n_blocks; b++)
	{
		PrStreamLayout l = pr_stream_block_layout_values(ptr, out->row_begin[b], out->row_begin[b + 1], vb);

		out->matrix_bytes += l.copy_bytes;
		if (l.bytes > out->buffer_bytes)
			out->buffer_bytes = l.bytes;
	}
	out->device_bytes = 2 * out->buffer_bytes;
	out->pinned_bytes = out->mode == PR_STREAM_PINNED_WHOLE ? whole_raw :
		out->mode == PR_STREAM_STAGED ? 2 * out->buffer_bytes : 0;
	out->predicted_s = pr_stream_predict(ptr, out->row_begin, out->n_blocks, params->has_val,
										 false, params, &out->transfer_s, &out->compute_s);
}

/* Plans the blocks of the streamed product. */
PrStatus
pr_stream_plan(int64_t n, const int64_t *ptr, const PrStreamParams *params,
			   const PrAllocator *alloc, PrStreamPlan *out, PrError *err)
{
	size_t		vb = value_bytes(params);
	size_t		whole,
				whole_raw,
				cap,
				longest;
	int64_t		max_blocks = params->max_blocks > 0 ? params->max_blocks : 4096;
	int64_t		bad_row,
				best_b;
	int64_t    *trial;

	memset(out, 0, sizeof(*out));
	out->n_rows = n;
	out->nnz = n > 0 ? ptr[n] : 0;
	out->has_val = params->has_val;
	out->val_bytes = (int) vb;
	if (params->device_budget == 0)
		return pr_error_set(err, PR_ERR_INVALID, "streaming needs a device memory budget > 0");
	if (!(params->h2d_bytes_per_s > 0))
		return pr_error_set(err, PR_ERR_INVALID, "streaming needs a host-to-device bandwidth > 0");
	whole = block_bytes(ptr, 0, n, vb);
	whole_raw = pr_stream_block_layout_values(ptr, 0, n, vb).copy_bytes;

	/* resident: the whole matrix fits one buffer (a block never takes more than one) */
	cap = params->device_budget / 2;
	if (whole <= cap)
		return plan_resident(n, ptr, params, whole, whole_raw, alloc, out, err);

	/* the longest row alone must fit one device buffer */
	longest = longest_row_bytes(ptr, n, vb, &bad_row);
	if (longest > cap)
		return pr_error_set(err, PR_ERR_TOO_LARGE,
							"row %lld has %lld entries (%zu bytes), more than one streaming buffer "
							"(%zu bytes, half of the %zu-byte device budget): raise the budget to at "
							"least %zu bytes", (long long) bad_row,
							(long long) (ptr[bad_row + 1] - ptr[bad_row]), longest, cap,
							params->device_budget, 2 * longest);

	/* pinned memory: the whole matrix, two staging buffers, or none */
	out->mode = choose_host_mode(params, whole_raw, longest, &cap);

	out->min_blocks = count_min_blocks(ptr, n, cap, vb, &bad_row);
	if (out->min_blocks < 0)	/* cannot happen: longest <= cap */
		return pr_error_set(err, PR_ERR_TOO_LARGE, "row %lld does not fit a block", (long long) bad_row);
	if (max_blocks < out->min_blocks)
		max_blocks = out->min_blocks;
	if (max_blocks > n)
		max_blocks = n > out->min_blocks ? n : out->min_blocks;

	trial = pr_alloc_array(alloc, (size_t) max_blocks + 1, sizeof(int64_t));
	if (trial == NULL)
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory for a block plan");
	best_b = best_block_count(n, ptr, params, cap, vb, max_blocks, trial, out);

	out->n_blocks = best_b;
	out->row_begin = pr_alloc_array(alloc, (size_t) best_b + 1, sizeof(int64_t));
	if (out->row_begin == NULL)
	{
		pr_free(alloc, trial);
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory for a block plan");
	}
	if (!cut_blocks(ptr, n, best_b, cap, vb, out->row_begin))
		pack_blocks(ptr, n, best_b, cap, vb, out->row_begin);
	pr_free(alloc, trial);
	measure_blocks(ptr, params, vb, whole_raw, out);
	return PR_OK;
}

/* Frees a plan. */
void
pr_stream_plan_free(PrStreamPlan *plan, const PrAllocator *alloc)
{
	pr_free(alloc, plan->row_begin);
	plan->row_begin = NULL;
}
