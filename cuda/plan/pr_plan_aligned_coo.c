/*
 * pr_plan_aligned_coo.c — builds the ALIGNED_COO layout (see pr_plan_aligned_coo.h) on
 * pr_plan_threads() threads; the arrays are the same bits for any thread count.
 */
#include "pr_plan_aligned_coo.h"

#include <string.h>

/* Segments a thread fills together, so that each step of the fill writes one run of words. */
#define ACOO_FILL_BLOCK 16

/* Default options: about the resident threads, segments at least 32 entries and two mean rows long. */
void
pr_plan_aligned_coo_options_init(PrAlignedCooOptions *opt, int64_t resident_threads)
{
	memset(opt, 0, sizeof(*opt));
	opt->target_segments = resident_threads > 0 ? resident_threads : 132 * 2048;
	opt->min_seg_len = 32;
	opt->mean_rows = 2;
}

/* Which rows a compaction pass keeps. */
typedef enum AcooSelect
{
	ACOO_SELECT_NONEMPTY,		/* rows with entries */
	ACOO_SELECT_SPLIT			/* rows spanning two or more segments */
} AcooSelect;

/* A parallel compaction of the rows a predicate keeps: count per part, then write. */
typedef struct AcooSelectJob
{
	const PrPlanCsr *csr;
	AcooSelect	select;
	int64_t		seg_len;
	int64_t		counts[PR_MAX_THREADS];
	int64_t		offsets[PR_MAX_THREADS];
	bool		write;
	int32_t    *rows;			/* out: the kept rows */
	int32_t    *first;			/* out (split): the segment where the row starts */
	int32_t    *last;			/* out (split): the last segment it reaches */
} AcooSelectJob;

/* Whether row r is kept by the job's predicate. */
static inline bool
acoo_row_kept(const AcooSelectJob *job, int64_t r)
{
	int64_t		b = job->csr->ptr[r],
				e = job->csr->ptr[r + 1];

	if (e <= b)
		return false;
	if (job->select == ACOO_SELECT_NONEMPTY)
		return true;
	return b / job->seg_len != (e - 1) / job->seg_len;
}

/* One part of a compaction pass: counts its kept rows, or writes them at its offset. */
static void
acoo_select_part(void *arg, int part, int n_parts)
{
	AcooSelectJob *job = (AcooSelectJob *) arg;
	int64_t		begin,
				end,
				count = 0,
				at;

	pr_even_range(job->csr->n, part, n_parts, &begin, &end);
	if (!job->write)
	{
		for (int64_t r = begin; r < end; r++)
			count += acoo_row_kept(job, r);
		job->counts[part] = count;
		return;
	}
	at = job->offsets[part];
	for (int64_t r = begin; r < end; r++)
	{
		if (!acoo_row_kept(job, r))
			continue;
		job->rows[at] = (int32_t) r;
		if (job->select == ACOO_SELECT_SPLIT)
		{
			job->first[at] = (int32_t) (job->csr->ptr[r] / job->seg_len);
			job->last[at] = (int32_t) ((job->csr->ptr[r + 1] - 1) / job->seg_len);
		}
		at++;
	}
}

/* Counts the kept rows (out_count) or, with rows set, lists them in ascending order. */
static int64_t
acoo_select(AcooSelectJob *job, int n_parts)
{
	int64_t		total = 0;

	job->write = false;
	pr_parallel_run(acoo_select_part, job, n_parts);
	for (int p = 0; p < n_parts; p++)
	{
		job->offsets[p] = total;
		total += job->counts[p];
	}
	if (job->rows != NULL)
	{
		job->write = true;
		pr_parallel_run(acoo_select_part, job, n_parts);
	}
	return total;
}

/* The row holding entry p of csr: the r with ptr[r] <= p < ptr[r + 1]. */
static int64_t
acoo_row_of_entry(const PrPlanCsr *csr, int64_t p)
{
	return pr_lower_bound(csr->ptr, 0, csr->n + 1, p + 1) - 1;
}

/* Fills the segments of one part: column words, weights, first row and head flag of each. */
typedef struct AcooFillJob
{
	const PrPlanCsr *csr;
	PrAlignedCoo *out;
} AcooFillJob;

static void
acoo_fill_part(void *arg, int part, int n_parts)
{
	AcooFillJob *job = (AcooFillJob *) arg;
	const PrPlanCsr *csr = job->csr;
	PrAlignedCoo *a = job->out;
	int64_t		n_blocks = a->n_seg / ACOO_FILL_BLOCK,
				b_begin,
				b_end;
	uint32_t	pad = (uint32_t) a->n_cols;

	pr_even_range(n_blocks, part, n_parts, &b_begin, &b_end);
	for (int64_t blk = b_begin; blk < b_end; blk++)
	{
		int64_t		t0 = blk * ACOO_FILL_BLOCK;
		int64_t		row[ACOO_FILL_BLOCK];

		for (int b = 0; b < ACOO_FILL_BLOCK; b++)
		{
			int64_t		t = t0 + b,
						s0 = t * a->seg_len;

			if (s0 >= csr->nnz)
			{
				a->seg_row[t] = (int32_t) a->n_rows;
				a->seg_flags[t] = 0;
				row[b] = -1;
				continue;
			}
			row[b] = acoo_row_of_entry(csr, s0);
			a->seg_row[t] = (int32_t) pr_lower_bound_i32(a->rows, 0, a->n_rows, row[b]);
			a->seg_flags[t] = s0 != csr->ptr[row[b]] ? PR_ACOO_HEAD_SPLIT : 0;
		}
		for (int64_t j = 0; j < a->seg_len; j++)
		{
			uint32_t   *words = a->idx + j * a->n_seg + t0;
			float	   *vals = a->val ? a->val + j * a->n_seg + t0 : NULL;

			for (int b = 0; b < ACOO_FILL_BLOCK; b++)
			{
				int64_t		p = (t0 + b) * a->seg_len + j;

				if (row[b] < 0 || p >= csr->nnz)
				{
					words[b] = pad;
					if (vals)
						vals[b] = 0.0f;
					continue;
				}
				while (p >= csr->ptr[row[b] + 1])
					row[b]++;
				words[b] = (uint32_t) csr->col[p] | (p == csr->ptr[row[b]] ? PR_ACOO_ROW_START : 0u);
				if (vals)
					vals[b] = csr->val[p];
			}
		}
	}
}

/* Builds the ALIGNED_COO layout of csr. */
PrStatus
pr_plan_aligned_coo(const PrPlanCsr *csr, const PrAlignedCooOptions *opt, const PrAllocator *alloc,
					PrAlignedCoo *out, PrError *err)
{
	int64_t		n_cols = csr->n,
				target = opt->target_segments > 0 ? opt->target_segments : 1,
				seg_len,
				n_seg,
				mean;
	int			n_parts = pr_thread_count(pr_plan_threads(), PR_MAX_THREADS);
	AcooSelectJob sel;
	AcooFillJob fill;

	memset(out, 0, sizeof(*out));
	if (csr->n > PR_PLAN_MAX_NODES_CHECK || n_cols >= (int64_t) PR_ACOO_COL_MASK)
		return pr_error_set(err, PR_ERR_TOO_LARGE, "ALIGNED_COO layout: %lld rows, %lld columns exceed the 31-bit ids",
							(long long) csr->n, (long long) n_cols);
	out->n = csr->n;
	out->n_cols = n_cols;
	out->nnz = csr->nnz;

	/* the rows with entries */
	memset(&sel, 0, sizeof(sel));
	sel.csr = csr;
	sel.select = ACOO_SELECT_NONEMPTY;
	out->n_rows = acoo_select(&sel, n_parts);
	out->rows = (int32_t *) pr_alloc_array(alloc, (size_t) out->n_rows + 1, sizeof(int32_t));
	if (out->rows == NULL)
		goto nomem;
	sel.rows = out->rows;
	acoo_select(&sel, n_parts);

	/* segment length: the target's share of the entries, at least min_seg_len and mean_rows mean rows */
	mean = out->n_rows > 0 ? (csr->nnz + out->n_rows - 1) / out->n_rows : 1;
	seg_len = (csr->nnz + target - 1) / target;
	if (seg_len < opt->min_seg_len)
		seg_len = opt->min_seg_len > 0 ? opt->min_seg_len : 1;
	if (seg_len < opt->mean_rows * mean)
		seg_len = opt->mean_rows * mean;
	n_seg = (csr->nnz + seg_len - 1) / seg_len;
	n_seg = (n_seg + 31) / 32 * 32;
	if (n_seg == 0)
		n_seg = 32;
	if (n_seg > INT32_MAX)
		return pr_error_set(err, PR_ERR_TOO_LARGE, "ALIGNED_COO layout: %lld segments exceed the 32-bit segment ids",
							(long long) n_seg);
	out->seg_len = seg_len;
	out->n_seg = n_seg;

	out->idx = (uint32_t *) pr_alloc_array(alloc, (size_t) (n_seg * seg_len), sizeof(uint32_t));
	out->seg_row = (int32_t *) pr_alloc_array(alloc, (size_t) n_seg, sizeof(int32_t));
	out->seg_flags = (uint8_t *) pr_alloc_array(alloc, (size_t) n_seg, 1);
	if (out->idx == NULL || out->seg_row == NULL || out->seg_flags == NULL)
		goto nomem;
	if (csr->val != NULL &&
		(out->val = (float *) pr_alloc_array(alloc, (size_t) (n_seg * seg_len), sizeof(float))) == NULL)
		goto nomem;
	fill.csr = csr;
	fill.out = out;
	pr_parallel_run(acoo_fill_part, &fill, n_parts);
	for (int64_t t = 0; t + 1 < n_seg; t++)
		if (out->seg_flags[t + 1] & PR_ACOO_HEAD_SPLIT)
			out->seg_flags[t] |= PR_ACOO_TAIL_SPLIT;

	/* the rows spanning segments */
	memset(&sel, 0, sizeof(sel));
	sel.csr = csr;
	sel.select = ACOO_SELECT_SPLIT;
	sel.seg_len = seg_len;
	out->n_split = acoo_select(&sel, n_parts);
	out->split_row = (int32_t *) pr_alloc_array(alloc, (size_t) out->n_split + 1, sizeof(int32_t));
	out->split_first = (int32_t *) pr_alloc_array(alloc, (size_t) out->n_split + 1, sizeof(int32_t));
	out->split_last = (int32_t *) pr_alloc_array(alloc, (size_t) out->n_split + 1, sizeof(int32_t));
	if (out->split_row == NULL || out->split_first == NULL || out->split_last == NULL)
		goto nomem;
	sel.rows = out->split_row;
	sel.first = out->split_first;
	sel.last = out->split_last;
	acoo_select(&sel, n_parts);

	out->device_bytes = (size_t) (n_seg * seg_len) * (csr->val ? 8 : 4) + (size_t) out->n_rows * 4 +
		(size_t) n_seg * (4 + 1 + 2 * 4) + (size_t) out->n_split * 12;
	return PR_OK;

nomem:
	pr_plan_aligned_coo_free(out, alloc);
	return pr_error_set(err, PR_ERR_NOMEM, "ALIGNED_COO layout: out of host memory");
}

/* Frees a PrAlignedCoo. */
void
pr_plan_aligned_coo_free(PrAlignedCoo *a, const PrAllocator *alloc)
{
	pr_free(alloc, a->idx);
	pr_free(alloc, a->val);
	pr_free(alloc, a->rows);
	pr_free(alloc, a->seg_row);
	pr_free(alloc, a->seg_flags);
	pr_free(alloc, a->split_row);
	pr_free(alloc, a->split_first);
	pr_free(alloc, a->split_last);
	memset(a, 0, sizeof(*a));
}
