/*
 * pr_graph.c — builds the CSR graph from an edge list: the id map (pr_graph_ids.c), the in-CSR by
 * destination, optional out-CSR, out-strengths and the dangling list.
 *
 * Edges: a counting sort by source (input order kept), then a counting sort of that by destination
 * visiting sources in ascending order, so every in-row lists its sources ascending; parallel edges
 * (one source, one destination) are then ordered by weight, so no sum depends on the order of the
 * input rows; the out-CSR is made the same way from the in-CSR.
 *
 * Threads (PrBuildOptions.n_threads): the radix passes, the endpoint lookups and the counting sorts
 * split their input into T contiguous chunks with per-chunk histograms, and chunk t's elements are
 * placed after chunk t-1's, so every array is the same for any thread count.  Only the calling
 * thread allocates.  A step over many elements runs in waves (pr_graph_waves.c: each chunk takes
 * the next part of its range in each wave, in order: the same results); between waves and between
 * steps the calling thread polls PrBuildOptions.should_stop, so a cancel stops the build within
 * about one wave.  A counting sort uses min(T, m / n) chunks (its counters take chunks * n * 8
 * bytes).  The weighted out-strength without out-edges is summed on one thread (addition order).
 *
 * Peak memory beyond the input and the result (m rows, m' stored edges, n nodes, T threads):
 * sparse ids: 48 bytes per row while sorting (two 8-byte key and two 4-byte position buffers of
 * 2m entries), then 8 bytes per row for the endpoint ranks; dense ids: 4 bytes per id in the range
 * (at most 32 per row) plus those 8; CSR: 8 per row + 4 (+8 weighted) per stored edge of scratch,
 * plus chunk counters.
 */
#include "pr_graph_build.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Describes a bad weight for the error message ("NaN", "Infinity", or the number). */
static void
describe_weight(double w, char *buf, size_t len)
{
	if (isnan(w))
		snprintf(buf, len, "NaN");
	else if (isinf(w))
		snprintf(buf, len, "%sInfinity", w < 0 ? "-" : "");
	else
		snprintf(buf, len, "%g", w);
}

/*
 * Checks that every weight is finite and >= 0; reports the first offending row.  Returns the
 * largest weight and the smallest positive one (0 when none is positive) through max and min_pos.
 */
static PrStatus
validate_weights(const double *weight, size_t m, double *max, double *min_pos, PrError *err)
{
	double		largest = 0.0,
				smallest = 0.0;

	for (size_t i = 0; i < m; i++)
	{
		double		w = weight[i];

		if (!(w >= 0.0) || isinf(w))
		{
			char		text[64];

			describe_weight(w, text, sizeof(text));
			return pr_error_set(err, PR_ERR_INVALID,
								"invalid weight %s in edge row %zu: weights must be finite and >= 0",
								text, i);
		}
		if (w > largest)
			largest = w;
		if (w > 0.0 && (smallest == 0.0 || w < smallest))
			smallest = w;
	}
	*max = largest;
	*min_pos = smallest;
	return PR_OK;
}

/* Frees every array of a graph built by pr_graph_build and leaves it empty. */
void
pr_graph_free(PrGraph *g, const PrAllocator *alloc)
{
	pr_free(alloc, g->node_ids);
	pr_free(alloc, g->in_ptr);
	pr_free(alloc, g->in_src);
	pr_free(alloc, g->in_weight);
	pr_free(alloc, g->out_ptr);
	pr_free(alloc, g->out_dst);
	pr_free(alloc, g->out_weight);
	pr_free(alloc, g->out_strength);
	pr_free(alloc, g->dangling);
	memset(g, 0, sizeof(*g));
}

/*
 * A counting sort of edges into CSR rows (pr_count_sort over chunks of the items).  Two inputs:
 * the edge rows (ranks of src/dst, a row adding its reverse when undirected; output grouped by
 * source, input order kept), or a CSR to transpose (output rows visit the input rows in ascending
 * order, so every output row lists them ascending).
 */
typedef struct CountSort
{
	PrCountSort sort;			/* n_keys: the output rows */
	size_t		n_items;		/* edge rows, or input edges of the transpose */
	const int32_t *keys;		/* [n_items] each item's output row: ms, or in_idx */
	/* edge-row input */
	const int32_t *ms;
	const int32_t *md;
	const double *weight;
	bool		undirected;
	/* CSR input */
	const int64_t *in_ptr;
	const int32_t *in_idx;
	const double *in_w;
	/* output */
	int32_t    *out_idx;
	double	   *out_w;
} CountSort;

/* Counts chunk t of the items by their output row (an undirected edge row also by its target). */
static void
sort_count(void *ctx, ChunkPart part)
{
	CountSort  *c = (CountSort *) ctx;

	if (part.first_wave)
		pr_count_sort_clear(&c->sort, part.t);
	if (c->undirected)
	{
		int64_t    *cnt = pr_count_sort_row(&c->sort, part.t);

		for (size_t i = part.lo; i < part.hi; i++)
		{
			int32_t		s = c->ms[i],
						d = c->md[i];

			cnt[s]++;
			if (s != d)
				cnt[d]++;
		}
	}
	else
		pr_count_sort_add(&c->sort, part.t, c->keys, part.lo, part.hi);
}

/* Scatters chunk t of the edge rows into the by-source arrays. */
static void
rows_scatter(void *ctx, ChunkPart part)
{
	CountSort  *c = (CountSort *) ctx;
	int64_t    *cur = pr_count_sort_row(&c->sort, part.t);
	const double *w = c->weight;

	if (!c->undirected && w == NULL)
	{
		for (size_t i = part.lo; i < part.hi; i++)
			c->out_idx[cur[c->ms[i]]++] = c->md[i];
		return;
	}
	for (size_t i = part.lo; i < part.hi; i++)
	{
		int32_t		s = c->ms[i],
					d = c->md[i];
		int64_t		pos = cur[s]++;

		c->out_idx[pos] = d;
		if (w != NULL)
			c->out_w[pos] = w[i];
		if (c->undirected && s != d)
		{
			pos = cur[d]++;
			c->out_idx[pos] = s;
			if (w != NULL)
				c->out_w[pos] = w[i];
		}
	}
}

/* Scatters chunk t of the input CSR's edges into the transposed arrays. */
static void
transpose_scatter(void *ctx, ChunkPart part)
{
	CountSort  *c = (CountSort *) ctx;
	int64_t    *cur = pr_count_sort_row(&c->sort, part.t);
	int64_t		row_lo = 0,
				row_hi = c->sort.n_keys;	/* the input has n rows too */
	int64_t		u;

	if (part.lo >= part.hi)
		return;
	/* the last row whose start is <= part.lo */
	while (row_lo < row_hi)
	{
		int64_t		mid = row_lo + (row_hi - row_lo + 1) / 2;

		if (c->in_ptr[mid] <= (int64_t) part.lo)
			row_lo = mid;
		else
			row_hi = mid - 1;
	}
	u = row_lo;
	for (size_t e = part.lo; e < part.hi;)
	{
		size_t		row_end;

		while (c->in_ptr[u + 1] <= (int64_t) e)
			u++;
		row_end = (size_t) c->in_ptr[u + 1] < part.hi ? (size_t) c->in_ptr[u + 1] : part.hi;
		if (c->in_w != NULL)
		{
			for (; e < row_end; e++)
			{
				int64_t		pos = cur[c->in_idx[e]]++;

				c->out_idx[pos] = (int32_t) u;
				c->out_w[pos] = c->in_w[e];
			}
		}
		else
		{
			for (; e < row_end; e++)
				c->out_idx[cur[c->in_idx[e]]++] = (int32_t) u;
		}
	}
}

/*
 * Starts a counting sort of n_items into n rows: at most n_threads chunks of at least 64k items,
 * fewer where pr_count_sort_init says.  False when out of memory.
 */
static bool
count_sort_start(CountSort *c, size_t n_items, int64_t n, int n_threads, const PrAllocator *alloc)
{
	c->n_items = n_items;
	return pr_count_sort_init(&c->sort, n_items, n, pr_build_chunks_for(n_items, n_threads), alloc);
}

/*
 * Turns the chunk counts into offsets (by row, then by chunk) and fills ptr[0..n] with the rows'
 * starts.  False when options (may be NULL) asked to stop.
 */
static bool
counts_to_offsets(CountSort *c, int64_t *ptr, int n_threads, const PrBuildOptions *options)
{
	return pr_count_sort_offsets(&c->sort, false, ptr, n_threads,
								 options != NULL ? options->should_stop : NULL,
								 options != NULL ? options->stop_arg : NULL);
}

/* Adds the seconds since *mark to *field and moves the mark to now. */
static void
step_done(double *field, double *mark)
{
	double		now = pr_clock_seconds();

	*field += now - *mark;
	*mark = now;
}

/*
 * Transposes a CSR of n rows and m edges (in_ptr, in_idx, in_w) into (out_ptr, out_idx, out_w),
 * already allocated; in_w and out_w may be NULL.  Adds the steps' seconds to times.
 * PR_ERR_NOMEM, or PR_ERR_INTERRUPTED when options (may be NULL) asks to stop between steps.
 */
static PrStatus
transpose_csr(int64_t n, int64_t m, const int64_t *in_ptr, const int32_t *in_idx,
			  const double *in_w, int64_t *out_ptr, int32_t *out_idx, double *out_w,
			  int n_threads, const PrBuildOptions *options, const PrAllocator *alloc,
			  PrBuildTimes *times)
{
	CountSort	c;
	double		mark = pr_clock_seconds();
	PrStatus	status = PR_ERR_INTERRUPTED;

	memset(&c, 0, sizeof(c));
	if (!count_sort_start(&c, (size_t) m, n, n_threads, alloc))
		return PR_ERR_NOMEM;
	c.keys = in_idx;
	c.in_ptr = in_ptr;
	c.in_idx = in_idx;
	c.in_w = in_w;
	c.out_idx = out_idx;
	c.out_w = out_w;
	step_done(&times->other, &mark);
	if (!pr_build_run_waves(sort_count, &c, c.sort.n_chunks, c.n_items, options) ||
		pr_build_stop_requested(options))
		goto done;
	step_done(&times->count, &mark);
	if (!counts_to_offsets(&c, out_ptr, n_threads, options))
		goto done;
	step_done(&times->offsets, &mark);
	if (pr_build_stop_requested(options) ||
		!pr_build_run_waves(transpose_scatter, &c, c.sort.n_chunks, c.n_items, options))
		goto done;
	step_done(&times->scatter, &mark);
	status = PR_OK;
done:
	pr_count_sort_free(&c.sort, alloc);
	step_done(&times->other, &mark);
	return status;
}

/* qsort order of weights: ascending value. */
static int
weight_order(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return (x > y) - (x < y);
}

/*
 * Orders the parallel edges (runs of one source) of the in-rows of a chunk's part of the nodes of
 * the graph ctx by weight, so that their sums do not depend on the order of the input rows.
 */
static void
parallel_edges_by_weight(void *ctx, ChunkPart part)
{
	PrGraph    *g = (PrGraph *) ctx;

	for (size_t v = part.lo; v < part.hi; v++)
	{
		int64_t		end = g->in_ptr[v + 1];
		int64_t		run_start = g->in_ptr[v];

		for (int64_t e = run_start + 1; e <= end; e++)
		{
			if (e < end && g->in_src[e] == g->in_src[run_start])
				continue;
			if (e - run_start > 1)
				qsort(g->in_weight + run_start, (size_t) (e - run_start), sizeof(double),
					  weight_order);
			run_start = e;
		}
	}
}

/* Sums the out-weights of a chunk's part of the nodes of the graph ctx (each row from 0). */
static void
strength_rows(void *ctx, ChunkPart part)
{
	PrGraph    *g = (PrGraph *) ctx;

	for (size_t u = part.lo; u < part.hi; u++)
	{
		double		s = 0.0;

		for (int64_t e = g->out_ptr[u]; e < g->out_ptr[u + 1]; e++)
			s += g->out_weight[e];
		g->out_strength[u] = s;
	}
}

/*
 * Computes out_strength (already allocated) of a weighted graph: every source adds its weights in
 * ascending destination order, parallel edges by ascending weight (the out-CSR's row order;
 * without out-edges the in-CSR is walked in that same order).
 */
static void
compute_weighted_strength(PrGraph *g, int n_threads)
{
	int64_t		n = g->n_nodes;

	if (g->has_out_edges)
	{
		pr_build_run_waves(strength_rows, g, pr_build_chunks_for((size_t) n, n_threads), (size_t) n,
						   NULL);
		return;
	}
	memset(g->out_strength, 0, (size_t) n * sizeof(double));
	for (int64_t e = 0; e < g->n_edges; e++)
		g->out_strength[g->in_src[e]] += g->in_weight[e];
}

/*
 * Largest out-weight or in-weight sum of a weighted graph (its out-CSR not built yet), each weight
 * taken times 2^-64 so that no sum can overflow; sums[n] is scratch.
 */
static double
largest_scaled_sum(const PrGraph *g, double *sums)
{
	int64_t		n = g->n_nodes;
	double		largest = 0.0;

	memset(sums, 0, (size_t) n * sizeof(double));
	for (int64_t v = 0; v < n; v++)
	{
		double		in_sum = 0.0;

		for (int64_t e = g->in_ptr[v]; e < g->in_ptr[v + 1]; e++)
		{
			double		w = ldexp(g->in_weight[e], -64);

			in_sum += w;
			sums[g->in_src[e]] += w;
		}
		if (in_sum > largest)
			largest = in_sum;
	}
	for (int64_t u = 0; u < n; u++)
		if (sums[u] > largest)
			largest = sums[u];
	return largest;
}

/*
 * Scales every weight of a weighted graph (in-CSR built, out-CSR not yet) by one power of two so
 * that every positive weight is a normal double (a sum of subnormal weights has a reciprocal that
 * overflows) and every node's out-weight and in-weight sum stays below
 * 2^(PR_STRENGTH_LIMIT_EXP - 1) (see pr_graph.h): up when the smallest positive weight is below
 * the normal range, down when some sum would reach that limit.  Scaling by a power of two is exact
 * and changes no ranking; max is the largest weight, min_pos the smallest positive one (0: none).
 * PR_ERR_INVALID when no factor does both (the weights span too wide a range).
 */
static PrStatus
scale_weights(PrGraph *g, double max, double min_pos, PrError *err)
{
	int			down = 0;
	int			up = 0;
	int			exponent;
	bool		too_wide = false;

	if (g->n_edges == 0)
		return PR_OK;
	if (max * (double) g->n_edges >= ldexp(1.0, PR_STRENGTH_LIMIT_EXP - 1))
	{
		/* the true largest sum is below 2^(exponent + 64) */
		(void) frexp(largest_scaled_sum(g, g->out_strength), &exponent);
		down = exponent + 64 - (PR_STRENGTH_LIMIT_EXP - 1);
		if (down < 0)
			down = 0;
	}
	if (pr_weight_subnormal(min_pos))
	{
		int			min_exponent;
		int			normal_exponent;

		(void) frexp(min_pos, &min_exponent);
		(void) frexp(DBL_MIN, &normal_exponent);
		up = normal_exponent - min_exponent;	/* min_pos * 2^up >= DBL_MIN */
		/* subnormal weights vanish from these sums: too small to matter to the largest */
		if (down == 0)
		{
			double		largest = largest_scaled_sum(g, g->out_strength);

			(void) frexp(largest, &exponent);
			too_wide = largest > 0.0 && exponent + 64 + up > PR_STRENGTH_LIMIT_EXP - 1;
		}
	}
	if (down > 0 && (up > 0 || ldexp(min_pos, -down) < DBL_MIN))
		too_wide = true;
	if (too_wide)
		return pr_error_set(err, PR_ERR_INVALID,
							"edge weights span too wide a range to rank in double precision: "
							"the largest is %g, the smallest positive one %g",
							max, min_pos);
	if (down == 0 && up == 0)
		return PR_OK;
	for (int64_t e = 0; e < g->n_edges; e++)
		g->in_weight[e] = ldexp(g->in_weight[e], up - down);
	return PR_OK;
}

/* Lists the nodes whose out_strength is 0. */
static PrStatus
list_dangling(PrGraph *g, const PrAllocator *alloc, PrError *err)
{
	int64_t		n = g->n_nodes;
	int64_t		n_dangling = 0;

	for (int64_t u = 0; u < n; u++)
		if (g->out_strength[u] == 0.0)
			n_dangling++;
	g->n_dangling = n_dangling;
	g->dangling = ALLOC_ARRAY(alloc, int32_t, n_dangling);
	if (g->dangling == NULL)
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory listing dangling nodes");
	n_dangling = 0;
	for (int64_t u = 0; u < n; u++)
		if (g->out_strength[u] == 0.0)
			g->dangling[n_dangling++] = (int32_t) u;
	return PR_OK;
}

/* What a build carries from step to step besides the graph. */
typedef struct BuildState
{
	const PrBuildOptions *options;
	const PrAllocator *alloc;
	PrBuildTimes *times;
	double		mark;			/* when the current step began */
	int			n_threads;
	int32_t    *ranks;			/* [2m] the endpoints' ranks: sources, then destinations */
	int64_t    *tmp_ptr;		/* [n+1] the rows grouped by source: row pointers */
	int32_t    *tmp_dst;		/* [m'] their destinations */
	double	   *tmp_w;			/* [m'] their weights, or NULL */
} BuildState;

/*
 * The counting sort of the m edge rows by source into the build's scratch, input order kept
 * within a source (an undirected build adds each row's reverse); sets g->n_edges and allocates
 * g->out_strength, filled with the out-degrees when unweighted.  PR_ERR_NOMEM or
 * PR_ERR_INTERRUPTED, without a message.
 */
static PrStatus
group_rows_by_source(BuildState *b, const double *weight, size_t m, PrGraph *g)
{
	int64_t		n = g->n_nodes;
	bool		weighted = (weight != NULL);
	PrStatus	status = PR_ERR_INTERRUPTED;
	CountSort	rows;

	memset(&rows, 0, sizeof(rows));
	b->tmp_ptr = ALLOC_ARRAY(b->alloc, int64_t, n + 1);
	if (b->tmp_ptr == NULL || !count_sort_start(&rows, m, n, b->n_threads, b->alloc))
	{
		status = PR_ERR_NOMEM;
		goto done;
	}
	rows.keys = b->ranks;
	rows.ms = b->ranks;
	rows.md = b->ranks != NULL ? b->ranks + m : NULL;
	rows.weight = weight;
	rows.undirected = b->options->undirected;
	step_done(&b->times->other, &b->mark);
	if (pr_build_stop_requested(b->options))
		goto done;
	if (!pr_build_run_waves(sort_count, &rows, rows.sort.n_chunks, m, b->options) ||
		pr_build_stop_requested(b->options))
		goto done;
	step_done(&b->times->count, &b->mark);
	if (!counts_to_offsets(&rows, b->tmp_ptr, b->n_threads, b->options))
		goto done;
	step_done(&b->times->offsets, &b->mark);
	g->n_edges = b->tmp_ptr[n];
	b->tmp_dst = ALLOC_ARRAY(b->alloc, int32_t, g->n_edges);
	if (weighted)
		b->tmp_w = ALLOC_ARRAY(b->alloc, double, g->n_edges);
	g->out_strength = ALLOC_ARRAY(b->alloc, double, n);
	if (b->tmp_dst == NULL || (weighted && b->tmp_w == NULL) || g->out_strength == NULL)
	{
		status = PR_ERR_NOMEM;
		goto done;
	}
	rows.out_idx = b->tmp_dst;
	rows.out_w = b->tmp_w;
	step_done(&b->times->other, &b->mark);
	if (pr_build_stop_requested(b->options) ||
		!pr_build_run_waves(rows_scatter, &rows, rows.sort.n_chunks, m, b->options))
		goto done;
	step_done(&b->times->scatter, &b->mark);
	if (!weighted)
	{
		/* out-degrees: exact whatever the order */
		for (int64_t u = 0; u < n; u++)
			g->out_strength[u] = (double) (b->tmp_ptr[u + 1] - b->tmp_ptr[u]);
	}
	status = PR_OK;
done:
	pr_count_sort_free(&rows.sort, b->alloc);
	return status;
}

/*
 * The in-CSR from the rows grouped by source: a counting sort by destination visiting sources in
 * ascending order, then parallel edges ordered by weight and the weights scaled (scale_weights).
 * PR_ERR_NOMEM or PR_ERR_INTERRUPTED without a message, or scale_weights' error with its own.
 */
static PrStatus
build_in_csr(BuildState *b, PrGraph *g, double max_weight, double min_weight, PrError *err)
{
	int64_t		n = g->n_nodes;
	PrStatus	status;

	g->in_ptr = ALLOC_ARRAY(b->alloc, int64_t, n + 1);
	g->in_src = ALLOC_ARRAY(b->alloc, int32_t, g->n_edges);
	if (g->weighted)
		g->in_weight = ALLOC_ARRAY(b->alloc, double, g->n_edges);
	if (g->in_ptr == NULL || g->in_src == NULL || (g->weighted && g->in_weight == NULL))
		return PR_ERR_NOMEM;
	step_done(&b->times->other, &b->mark);
	if (pr_build_stop_requested(b->options))
		return PR_ERR_INTERRUPTED;
	status = transpose_csr(n, g->n_edges, b->tmp_ptr, b->tmp_dst, b->tmp_w, g->in_ptr, g->in_src,
						   g->in_weight, b->n_threads, b->options, b->alloc, b->times);
	if (status != PR_OK)
		return status;
	b->mark = pr_clock_seconds();
	if (!g->weighted)
		return PR_OK;
	if (!pr_build_run_waves(parallel_edges_by_weight, g,
							pr_build_chunks_for((size_t) n, b->n_threads), (size_t) n,
							b->options))
		return PR_ERR_INTERRUPTED;
	return scale_weights(g, max_weight, min_weight, err);
}

/*
 * The out-CSR: the scratch arrays become it, refilled in destination order (a counting sort of
 * the in-CSR by source).  PR_ERR_NOMEM or PR_ERR_INTERRUPTED, without a message.
 */
static PrStatus
build_out_csr(BuildState *b, PrGraph *g)
{
	PrStatus	status;

	g->out_ptr = b->tmp_ptr;
	g->out_dst = b->tmp_dst;
	g->out_weight = b->tmp_w;
	b->tmp_ptr = NULL;
	b->tmp_dst = NULL;
	b->tmp_w = NULL;
	g->has_out_edges = true;
	if (pr_build_stop_requested(b->options))
		return PR_ERR_INTERRUPTED;
	status = transpose_csr(g->n_nodes, g->n_edges, g->in_ptr, g->in_src, g->in_weight, g->out_ptr,
						   g->out_dst, g->out_weight, b->n_threads, b->options, b->alloc, b->times);
	b->mark = pr_clock_seconds();
	return status;
}

/*
 * Ends a failed build: the message of a step's PR_ERR_NOMEM or PR_ERR_INTERRUPTED (any other
 * status has its message already), every array of g freed.
 */
static PrStatus
build_failed(PrStatus status, size_t m, const PrAllocator *alloc, PrGraph *g, PrError *err)
{
	if (status == PR_ERR_NOMEM)
		status = pr_error_set(err, PR_ERR_NOMEM, "out of memory building a graph of %zu edge rows", m);
	else if (status == PR_ERR_INTERRUPTED)
		status = pr_build_interrupted(err);
	pr_graph_free(g, alloc);
	return status;
}

/* Builds the in-CSR (and optionally the out-CSR) from an edge list; see pr_graph.h. */
PrStatus
pr_graph_build(const int64_t *src, const int64_t *dst, const double *weight, size_t m,
			   const PrBuildOptions *options, const PrAllocator *alloc, PrGraph *g, PrError *err)
{
	PrBuildOptions defaults = {false, false, 1, NULL, NULL, NULL};
	PrBuildTimes local_times = {0};
	BuildState	b;
	IdMap		map;
	PrStatus	status;
	double		max_weight = 0.0,
				min_weight = 0.0;

	memset(&b, 0, sizeof(b));
	b.mark = pr_clock_seconds();
	memset(g, 0, sizeof(*g));
	memset(&map, 0, sizeof(map));
	if (options == NULL)
		options = &defaults;
	b.options = options;
	b.alloc = alloc;
	b.times = options->times != NULL ? options->times : &local_times;
	memset(b.times, 0, sizeof(*b.times));
	b.n_threads = options->n_threads < 1 ? 1 : options->n_threads;
	if (m > 0 && (src == NULL || dst == NULL))
		return pr_error_set(err, PR_ERR_INVALID, "edge list has no source or destination array");
	if (weight != NULL &&
		(status = validate_weights(weight, m, &max_weight, &min_weight, err)) != PR_OK)
		return status;
	if (pr_build_stop_requested(options))
		return pr_build_interrupted(err);

	status = pr_id_map_build(src, dst, m, b.n_threads, options, alloc, &map, &b.ranks, err);
	step_done(&b.times->ids, &b.mark);
	if (status != PR_OK)
		return status;
	g->n_nodes = map.n;
	g->weighted = (weight != NULL);
	g->node_ids = map.node_ids;

	status = group_rows_by_source(&b, weight, m, g);
	pr_free(alloc, b.ranks);
	if (status == PR_OK)
		status = build_in_csr(&b, g, max_weight, min_weight, err);
	if (status == PR_OK && options->out_edges)
		status = build_out_csr(&b, g);
	pr_free(alloc, b.tmp_ptr);
	pr_free(alloc, b.tmp_dst);
	pr_free(alloc, b.tmp_w);
	if (status == PR_OK && pr_build_stop_requested(options))
		status = PR_ERR_INTERRUPTED;
	if (status != PR_OK)
		return build_failed(status, m, alloc, g, err);

	if (g->weighted)
		compute_weighted_strength(g, b.n_threads);
	status = list_dangling(g, alloc, err);
	step_done(&b.times->other, &b.mark);
	if (status != PR_OK)
		pr_graph_free(g, alloc);
	return status;
}

/* Writes g's out-edge arrays into the caller's arrays; see pr_graph.h. */
PrStatus
pr_graph_write_out_edges(const PrGraph *g, int n_threads, const PrAllocator *alloc,
						 int64_t *out_ptr, int32_t *out_dst, double *out_weight, PrError *err)
{
	PrBuildTimes times = {0};

	if (transpose_csr(g->n_nodes, g->n_edges, g->in_ptr, g->in_src, g->in_weight, out_ptr,
					  out_dst, g->weighted ? out_weight : NULL, n_threads > 1 ? n_threads : 1,
					  NULL, alloc, &times) != PR_OK)
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory building the out-edge arrays");
	return PR_OK;
}

/* Builds the out-edge arrays of a graph that lacks them (a no-op when present). */
PrStatus
pr_graph_add_out_edges(PrGraph *g, int n_threads, const PrAllocator *alloc, PrError *err)
{
	if (g->has_out_edges)
		return PR_OK;
	g->out_ptr = ALLOC_ARRAY(alloc, int64_t, g->n_nodes + 1);
	g->out_dst = ALLOC_ARRAY(alloc, int32_t, g->n_edges);
	g->out_weight = g->weighted ? ALLOC_ARRAY(alloc, double, g->n_edges) : NULL;
	if (g->out_ptr == NULL || g->out_dst == NULL || (g->weighted && g->out_weight == NULL) ||
		pr_graph_write_out_edges(g, n_threads, alloc, g->out_ptr, g->out_dst, g->out_weight,
								 err) != PR_OK)
	{
		pr_free(alloc, g->out_ptr);
		pr_free(alloc, g->out_dst);
		pr_free(alloc, g->out_weight);
		g->out_ptr = NULL;
		g->out_dst = NULL;
		g->out_weight = NULL;
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory building the out-edge arrays");
	}
	g->has_out_edges = true;
	return PR_OK;
}

/* Internal id of an external id by binary search over node_ids, or -1. */
int64_t
pr_graph_find(const PrGraph *g, int64_t external_id)
{
	int64_t		lo = pr_lower_bound(g->node_ids, 0, g->n_nodes, external_id);

	if (lo < g->n_nodes && g->node_ids[lo] == external_id)
		return lo;
	return -1;
}

/*
 * One CSR's rows in the new order, each row's edges in order with their ends renumbered (out_idx
 * NULL: the row pointers only).
 */
static void
renumber_rows(int64_t n, const int64_t *ptr, const int32_t *idx, const double *weight,
			  const int32_t *new_to_old, const int32_t *old_to_new, int64_t *out_ptr,
			  int32_t *out_idx, double *out_weight)
{
	out_ptr[0] = 0;
	for (int64_t i = 0; i < n; i++)
	{
		int32_t		v = new_to_old[i];
		int64_t		at = out_ptr[i];

		for (int64_t j = ptr[v]; out_idx != NULL && j < ptr[v + 1]; j++, at++)
		{
			out_idx[at] = old_to_new[idx[j]];
			if (out_weight != NULL)
				out_weight[at] = weight[j];
		}
		out_ptr[i + 1] = out_ptr[i] + (ptr[v + 1] - ptr[v]);
	}
}

/* out's out-strengths and dangling list: g's, their nodes renumbered (out has room for both). */
static void
renumber_strengths(const PrGraph *g, const int32_t *new_to_old, PrGraph *out)
{
	for (int64_t i = 0; i < g->n_nodes; i++)
	{
		out->out_strength[i] = g->out_strength[new_to_old[i]];
		if (out->out_strength[i] == 0.0 && out->n_dangling < g->n_dangling)
			out->dangling[out->n_dangling++] = (int32_t) i;
	}
}

/* g with its nodes renumbered; see pr_graph.h. */
PrStatus
pr_graph_renumber(const PrGraph *g, const int32_t *new_to_old, const int32_t *old_to_new,
				  bool sources, const PrAllocator *alloc, PrGraph *out, PrError *err)
{
	int64_t		n = g->n_nodes;
	int64_t		m = g->n_edges;
	bool		out_edges = g->has_out_edges;
	bool		ok;

	memset(out, 0, sizeof(*out));
	out->n_nodes = n;
	out->n_edges = m;
	out->weighted = g->weighted;
	out->has_out_edges = out_edges;
	out->in_ptr = (int64_t *) pr_alloc_array(alloc, (size_t) n + 1, sizeof(int64_t));
	if (sources)
	{
		out->in_src = (int32_t *) pr_alloc_array(alloc, (size_t) m + 1, sizeof(int32_t));
		out->in_weight = g->in_weight != NULL ?
			(double *) pr_alloc_array(alloc, (size_t) m + 1, sizeof(double)) : NULL;
	}
	if (out_edges)
	{
		out->out_ptr = (int64_t *) pr_alloc_array(alloc, (size_t) n + 1, sizeof(int64_t));
		out->out_dst = (int32_t *) pr_alloc_array(alloc, (size_t) m + 1, sizeof(int32_t));
		out->out_weight = g->out_weight != NULL ?
			(double *) pr_alloc_array(alloc, (size_t) m + 1, sizeof(double)) : NULL;
	}
	out->out_strength = (double *) pr_alloc_array(alloc, (size_t) n + 1, sizeof(double));
	out->dangling = (int32_t *) pr_alloc_array(alloc, (size_t) g->n_dangling + 1, sizeof(int32_t));
	ok = out->in_ptr != NULL && (!sources || out->in_src != NULL) &&
		(!sources || g->in_weight == NULL || out->in_weight != NULL) && out->out_strength != NULL &&
		out->dangling != NULL &&
		(!out_edges || (out->out_ptr != NULL && out->out_dst != NULL &&
						(g->out_weight == NULL || out->out_weight != NULL)));
	if (!ok)
	{
		pr_graph_free(out, alloc);
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory renumbering a graph of %lld nodes",
							(long long) n);
	}
	renumber_rows(n, g->in_ptr, g->in_src, g->in_weight, new_to_old, old_to_new, out->in_ptr,
				  out->in_src, out->in_weight);
	if (out_edges)
		renumber_rows(n, g->out_ptr, g->out_dst, g->out_weight, new_to_old, old_to_new,
					  out->out_ptr, out->out_dst, out->out_weight);
	renumber_strengths(g, new_to_old, out);
	return PR_OK;
}

/* g's in-edge row pointers renumbered; see pr_graph.h. */
void
pr_graph_renumber_row_pointers(const PrGraph *g, const int32_t *new_to_old, int64_t *in_ptr)
{
	renumber_rows(g->n_nodes, g->in_ptr, NULL, NULL, new_to_old, NULL, in_ptr, NULL, NULL);
}

/* g renumbered over row pointers renumbered before; see pr_graph.h. */
PrStatus
pr_graph_renumber_over(const PrGraph *g, const int32_t *new_to_old, const int64_t *in_ptr,
					   const PrAllocator *alloc, PrGraph *out, PrError *err)
{
	int64_t		n = g->n_nodes;

	memset(out, 0, sizeof(*out));
	out->n_nodes = n;
	out->n_edges = g->n_edges;
	out->weighted = g->weighted;
	out->out_strength = (double *) pr_alloc_array(alloc, (size_t) n + 1, sizeof(double));
	out->dangling = (int32_t *) pr_alloc_array(alloc, (size_t) g->n_dangling + 1, sizeof(int32_t));
	if (out->out_strength == NULL || out->dangling == NULL)
	{
		pr_graph_free(out, alloc);
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory renumbering a graph of %lld nodes",
							(long long) n);
	}
	out->in_ptr = (int64_t *) in_ptr;
	renumber_strengths(g, new_to_old, out);
	return PR_OK;
}
