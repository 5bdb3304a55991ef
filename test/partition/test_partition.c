/*
 * test_partition.c — unit tests of the multi-GPU row partitioner (pr_partition) and the streaming
 * block planner (pr_stream), on many random and skewed (R-MAT) graphs:
 *  - every row lands in exactly one part, in a contiguous slot range of its part;
 *  - greedy and snake: rows differ by at most 1 and edges by at most the longest row;
 *  - an emulated multi-GPU SpMV (each part its rows from the whole gathered x, then an emulated
 *    all-gather of equal counts) equals plain CSR SpMV exactly (small integer values);
 *  - block plans cover all rows in order, every block fits its buffer and the pinned budget,
 *    tiny budgets give more blocks (an error only when one row cannot fit), an emulated streamed
 *    SpMV through two buffers equals plain CSR, and the model's block count is sensible.
 * Prints the measured imbalance on R-MAT graphs, one failure per line, and last exactly
 * "N passed, N failed"; exits nonzero on failure.
 */
#include "pr_partition.h"
#include "pr_stream.h"
#include "test_graphs.h"
#include "test_harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A star: every node points at node 0 (one row holds all edges), plus a few random edges. */
static void
make_star(TestGraph *g, int64_t n, uint64_t seed)
{
	uint64_t	rng = seed;
	int64_t		m = n + n / 4;
	int32_t    *src = malloc((size_t) m * sizeof(int32_t));
	int32_t    *dst = malloc((size_t) m * sizeof(int32_t));

	for (int64_t e = 0; e < n; e++)
	{
		src[e] = (int32_t) e;
		dst[e] = 0;
	}
	{
		GenSpec		rest = gen_uniform(n, m - n, seed);	/* the other edges: uniform */

		gen_edges32(&rest, src + n, dst + n, 1);
	}
	graph_from_edges(g, n, m, src, dst, false, &rng);
	snprintf(g->name, sizeof(g->name), "star n=%lld", (long long) n);
	free(src);
	free(dst);
}

/* Out-degree of each node (the column lengths of the pull matrix). */
static int64_t *
out_degrees(const TestGraph *g)
{
	int64_t    *d = calloc((size_t) g->n + 1, sizeof(int64_t));

	for (int64_t e = 0; e < g->m; e++)
		d[g->col[e]]++;
	return d;
}

/* Checks one partition of g: coverage, balance bounds, local CSRs, emulated multi-GPU SpMV. */
static void
check_partition(const TestGraph *g, int G, PrPartitionMethod method, bool use_place_key,
				uint64_t seed)
{
	PrPartitionOptions opt;
	PrPartition part;
	PrError		err;
	char		what[160];
	int64_t    *outdeg = out_degrees(g);
	PrStatus	st;
	const char *mname = pr_partition_method_name(method);

	pr_partition_options_init(&opt);
	opt.n_parts = G;
	opt.method = method;
	opt.place_key = use_place_key ? outdeg : NULL;
	st = pr_partition_build(g->n, g->ptr, &opt, &pr_malloc_allocator, &part, &err);
	snprintf(what, sizeof(what), "%s G=%d%s: build", mname, G, use_place_key ? " outdeg" : "");
	check(st == PR_OK, what, g->name);
	if (st != PR_OK)
	{
		printf("  %s\n", err.message);
		free(outdeg);
		return;
	}

	/* every node in exactly one slot, each part's nodes a contiguous slot range from its start */
	{
		int64_t		seen = 0,
					sum_rows = 0,
					sum_edges = 0;
		bool		bijective = true,
					ranges_ok = true,
					edges_ok = true;
		int64_t		rmin = INT64_MAX,
					rmax = 0,
					emin = INT64_MAX,
					emax = 0;

		for (int p = 0; p < G; p++)
		{
			int64_t		b = pr_partition_slot_begin(&part, p),
						e = 0;

			for (int64_t s = b; s < b + part.stride; s++)
			{
				int32_t		v = part.slot_to_node[s];

				if (s < b + part.rows[p])
				{
					if (v < 0 || v >= g->n || part.node_to_slot[v] != s)
						bijective = false;
					else
					{
						seen++;
						e += g->ptr[v + 1] - g->ptr[v];
					}
				}
				else if (v != -1)
					ranges_ok = false;
			}
			if (e != part.edges[p])
				edges_ok = false;
			sum_rows += part.rows[p];
			sum_edges += part.edges[p];
			rmin = part.rows[p] < rmin ? part.rows[p] : rmin;
			rmax = part.rows[p] > rmax ? part.rows[p] : rmax;
			emin = part.edges[p] < emin ? part.edges[p] : emin;
			emax = part.edges[p] > emax ? part.edges[p] : emax;
		}
		snprintf(what, sizeof(what), "%s G=%d: every row assigned exactly once", mname, G);
		check(bijective && seen == g->n && sum_rows == g->n && part.n_slots == G * part.stride, what, g->name);
		snprintf(what, sizeof(what), "%s G=%d: padding only after each part's rows", mname, G);
		check(ranges_ok, what, g->name);
		snprintf(what, sizeof(what), "%s G=%d: edge counts", mname, G);
		check(edges_ok && sum_edges == g->m && part.nnz == g->m, what, g->name);
		if (method != PR_PARTITION_RANGES)
		{
			snprintf(what, sizeof(what), "%s G=%d: rows differ by <= 1 (%lld..%lld)", mname, G,
					 (long long) rmin, (long long) rmax);
			check(rmax - rmin <= 1 && part.stride == (g->n + G - 1) / G, what, g->name);
			snprintf(what, sizeof(what), "%s G=%d: edges differ by <= longest row (%lld..%lld, row %lld)",
					 mname, G, (long long) emin, (long long) emax, (long long) part.max_row_len);
			check(emax - emin <= part.max_row_len, what, g->name);
		}
		else
		{
			/* ranges keep the id order: slot order is id order */
			bool		monotone = true;
			int64_t		prev = -1;

			for (int64_t s = 0; s < part.n_slots; s++)
				if (part.slot_to_node[s] >= 0)
				{
					if (part.slot_to_node[s] != prev + 1)
						monotone = false;
					prev = part.slot_to_node[s];
				}
			snprintf(what, sizeof(what), "ranges G=%d: contiguous id ranges in order", G);
			check(monotone, what, g->name);
		}
		if (method != PR_PARTITION_RANGES)
		{
			/* inside a part: descending place key */
			bool		sorted = true;

			for (int p = 0; p < G; p++)
				for (int64_t i = 1; i < part.rows[p]; i++)
				{
					int32_t		a = part.slot_to_node[pr_partition_slot_begin(&part, p) + i - 1];
					int32_t		b = part.slot_to_node[pr_partition_slot_begin(&part, p) + i];
					int64_t		ka = use_place_key ? outdeg[a] : g->ptr[a + 1] - g->ptr[a];
					int64_t		kb = use_place_key ? outdeg[b] : g->ptr[b + 1] - g->ptr[b];

					if (ka < kb || (ka == kb && a > b))
						sorted = false;
				}
			snprintf(what, sizeof(what), "%s G=%d: rows placed by descending key", mname, G);
			check(sorted, what, g->name);
		}
	}

	/* emulated multi-GPU SpMV: local products from the gathered x, then an all-gather */
	{
		uint64_t	rng = seed;
		double	   *x = malloc((size_t) (g->n + 1) * sizeof(double));
		double	   *scale = malloc((size_t) (g->n + 1) * sizeof(double));
		double	   *y_ref = malloc((size_t) (g->n + 1) * sizeof(double));
		double	   *x_slots = calloc((size_t) part.n_slots + 1, sizeof(double));
		double	   *y_slots = calloc((size_t) part.n_slots + 1, sizeof(double));
		double	   *send = calloc((size_t) part.stride + 1, sizeof(double));
		bool		equal = true,
					csr_ok = true,
					cols_ok = true;

		for (int64_t v = 0; v < g->n; v++)
		{
			x[v] = (double) (gen_random(&rng) % 17);
			scale[v] = 1.0 / (double) (1 << (v % 3));
		}
		csr_spmv(g, scale, x, y_ref);
		for (int64_t s = 0; s < part.n_slots; s++)
			x_slots[s] = part.slot_to_node[s] >= 0 ? x[part.slot_to_node[s]] : 0.0;
		for (int p = 0; p < G; p++)
		{
			PrPartCsr	lc;
			int32_t    *cols = NULL;
			int64_t		n_cols;

			if (pr_partition_local_csr(&part, p, g->ptr, g->col, g->val, scale,
									   &pr_malloc_allocator, &lc, &err) != PR_OK)
			{
				csr_ok = false;
				printf("  %s\n", err.message);
				continue;
			}
			for (int64_t i = 0; i < lc.n_rows; i++)
				for (int64_t e = lc.ptr[i] + 1; e < lc.ptr[i + 1]; e++)
					if (lc.col[e - 1] > lc.col[e])
						csr_ok = false;
			/* the rank's send buffer: its rows, padding zero */
			memset(send, 0, (size_t) part.stride * sizeof(double));
			for (int64_t i = 0; i < lc.n_rows; i++)
			{
				double		s = 0;

				for (int64_t e = lc.ptr[i]; e < lc.ptr[i + 1]; e++)
				{
					if (lc.col[e] < 0 || lc.col[e] >= lc.n_cols || part.slot_to_node[lc.col[e]] < 0)
						csr_ok = false;
					else
						s += (double) lc.val[e] * x_slots[lc.col[e]];
				}
				send[i] = s;
			}
			/* all-gather: rank p's stride values land at displacement p * stride */
			memcpy(y_slots + pr_partition_slot_begin(&part, p), send, (size_t) part.stride * sizeof(double));
			/* columns the part reads: exactly the distinct sources of its rows */
			n_cols = pr_part_csr_columns(&lc, &cols, &pr_malloc_allocator);
			{
				uint8_t    *mark = calloc((size_t) g->n + 1, 1);
				int64_t		distinct = 0;

				for (int64_t i = 0; i < lc.n_rows; i++)
				{
					int32_t		r = part.slot_to_node[lc.slot_begin + i];

					for (int64_t e = g->ptr[r]; e < g->ptr[r + 1]; e++)
						if (!mark[g->col[e]])
						{
							mark[g->col[e]] = 1;
							distinct++;
						}
				}
				if (n_cols != distinct)
					cols_ok = false;
				for (int64_t k = 0; k < n_cols && cols_ok; k++)
					if ((k > 0 && cols[k - 1] >= cols[k]) || !mark[part.slot_to_node[cols[k]]])
						cols_ok = false;
				free(mark);
			}
			free(cols);
			pr_part_csr_free(&lc, &pr_malloc_allocator);
		}
		for (int64_t v = 0; v < g->n; v++)
			if (y_slots[part.node_to_slot[v]] != y_ref[v])
				equal = false;
		for (int64_t s = 0; s < part.n_slots; s++)
			if (part.slot_to_node[s] < 0 && y_slots[s] != 0.0)
				equal = false;
		snprintf(what, sizeof(what), "%s G=%d: local CSRs (slot columns ascending, in range)", mname, G);
		check(csr_ok, what, g->name);
		snprintf(what, sizeof(what), "%s G=%d: local column sets", mname, G);
		check(cols_ok, what, g->name);
		snprintf(what, sizeof(what), "%s G=%d: emulated multi-GPU SpMV == plain CSR", mname, G);
		check(equal, what, g->name);
		free(x);
		free(scale);
		free(y_ref);
		free(x_slots);
		free(y_slots);
		free(send);
	}
	pr_partition_free(&part, &pr_malloc_allocator);
	free(outdeg);
}

/* Checks a block plan's structure and runs an emulated streamed SpMV through two buffers. */
static void
check_stream_plan(const TestGraph *g, const PrStreamParams *prm, const char *label)
{
	PrStreamPlan plan;
	PrError		err;
	char		what[200];
	PrStatus	st = pr_stream_plan(g->n, g->ptr, prm, &pr_malloc_allocator, &plan, &err);

	snprintf(what, sizeof(what), "stream %s: plan", label);
	check(st == PR_OK, what, g->name);
	if (st != PR_OK)
	{
		printf("  %s\n", err.message);
		return;
	}
	{
		bool		order_ok = plan.row_begin[0] == 0 && plan.row_begin[plan.n_blocks] == g->n;
		bool		fit_ok = true;
		size_t		sum = 0;

		for (int64_t b = 0; b < plan.n_blocks; b++)
		{
			PrStreamLayout l = pr_stream_block_layout(g->ptr, plan.row_begin[b], plan.row_begin[b + 1], prm->has_val);

			if (plan.row_begin[b + 1] <= plan.row_begin[b] && g->n > 0)
				order_ok = false;
			if (l.bytes > plan.buffer_bytes)
				fit_ok = false;
			sum += l.copy_bytes;
		}
		if (plan.mode == PR_STREAM_RESIDENT)
			fit_ok = fit_ok && plan.n_blocks == 1 && plan.device_bytes <= prm->device_budget;
		else
		{
			fit_ok = fit_ok && plan.buffer_bytes <= prm->device_budget / 2 &&
				plan.device_bytes <= prm->device_budget && plan.n_blocks >= plan.min_blocks;
			if (plan.mode == PR_STREAM_STAGED)
				fit_ok = fit_ok && plan.buffer_bytes <= prm->pinned_budget / 2;
		}
		fit_ok = fit_ok && plan.pinned_bytes <= prm->pinned_budget && sum == plan.matrix_bytes;
		snprintf(what, sizeof(what), "stream %s: %lld blocks cover all rows in order", label,
				 (long long) plan.n_blocks);
		check(order_ok, what, g->name);
		snprintf(what, sizeof(what), "stream %s (%s): every block fits its buffer and budgets", label,
				 pr_stream_mode_name(plan.mode));
		check(fit_ok, what, g->name);
		snprintf(what, sizeof(what), "stream %s: model %.3g s within [max(T,C), T+C]", label, plan.predicted_s);
		check(plan.predicted_s >= (plan.transfer_s > plan.compute_s ? plan.transfer_s : plan.compute_s) * (1 - 1e-12) &&
			  plan.predicted_s <= (plan.transfer_s + plan.compute_s) * (1 + 1e-12), what, g->name);
	}

	/* emulated streamed SpMV: each block copied into buffer b % 2 at its layout, then multiplied */
	{
		uint64_t	rng = 99;
		unsigned char *buf[2];
		double	   *x = calloc((size_t) g->n + 1, sizeof(double));
		double	   *y_ref = calloc((size_t) g->n + 1, sizeof(double));
		double	   *y = calloc((size_t) g->n + 1, sizeof(double));
		bool		equal = true;
		TestGraph	plain = *g;

		buf[0] = malloc(plan.buffer_bytes + 1);
		buf[1] = malloc(plan.buffer_bytes + 1);
		for (int64_t v = 0; v < g->n; v++)
			x[v] = (double) (gen_random(&rng) % 13);
		if (!prm->has_val)
			plain.val = NULL;	/* the plan carries no values: the pattern's product */
		csr_spmv(&plain, NULL, x, y_ref);
		for (int64_t b = 0; b < plan.n_blocks; b++)
		{
			int64_t		r0 = plan.row_begin[b],
						r1 = plan.row_begin[b + 1];
			PrStreamLayout l = pr_stream_block_layout(g->ptr, r0, r1, prm->has_val);
			unsigned char *d = buf[b % 2];
			int64_t    *bp = (int64_t *) (d + l.ptr_off);
			int32_t    *bc = (int32_t *) (d + l.col_off);
			float	   *bv = (float *) (d + l.val_off);
			int64_t		e0 = g->ptr[r0];

			memset(d, 0xff, plan.buffer_bytes);
			memcpy(bp, g->ptr + r0, (size_t) (r1 - r0 + 1) * sizeof(int64_t));
			memcpy(bc, g->col + e0, (size_t) (g->ptr[r1] - e0) * sizeof(int32_t));
			if (prm->has_val)
				for (int64_t e = e0; e < g->ptr[r1]; e++)
					bv[e - e0] = (float) (g->val ? g->val[e] : 1.0);
			for (int64_t i = 0; i < r1 - r0; i++)
			{
				double		s = 0;

				for (int64_t q = bp[i] - bp[0]; q < bp[i + 1] - bp[0]; q++)
					s += (prm->has_val ? (double) bv[q] : 1.0) * x[bc[q]];
				y[r0 + i] = s;
			}
		}
		for (int64_t v = 0; v < g->n; v++)
			if (y[v] != y_ref[v])
				equal = false;
		snprintf(what, sizeof(what), "stream %s: emulated streamed SpMV == plain CSR", label);
		check(equal, what, g->name);
		free(buf[0]);
		free(buf[1]);
		free(x);
		free(y_ref);
		free(y);
	}
	pr_stream_plan_free(&plan, &pr_malloc_allocator);
}

/* Bytes of the longest row's own block. */
static size_t
longest_row_block(const TestGraph *g, bool has_val)
{
	size_t		mx = 0;

	for (int64_t r = 0; r < g->n; r++)
	{
		size_t		b = pr_stream_block_layout(g->ptr, r, r + 1, has_val).bytes;

		if (b > mx)
			mx = b;
	}
	return mx;
}

/* Stream planner checks on one graph over a range of budgets. */
static void
check_stream(const TestGraph *g)
{
	PrStreamParams prm;
	size_t		whole = pr_stream_block_layout(g->ptr, 0, g->n, true).bytes;
	size_t		longest = longest_row_block(g, true);
	char		label[96];

	pr_stream_params_init(&prm);
	/* resident, generous streaming, tight, the tightest possible, pinned short, no pinned */
	prm.device_budget = whole;
	prm.pinned_budget = whole;
	check_stream_plan(g, &prm, "resident");
	{
		PrStreamPlan p;
		PrError		err;

		pr_stream_plan(g->n, g->ptr, &prm, &pr_malloc_allocator, &p, &err);
		check(p.mode == PR_STREAM_RESIDENT && p.transfer_s == 0.0, "stream: whole budget is resident", g->name);
		pr_stream_plan_free(&p, &pr_malloc_allocator);
	}
	for (int k = 0; k < 4; k++)
	{
		static const double frac[] = {0.67, 0.3, 0.1, 0.02};

		prm.device_budget = (size_t) ((double) whole * frac[k]);
		if (prm.device_budget < 2 * longest)
			prm.device_budget = 2 * longest;
		prm.pinned_budget = whole;
		snprintf(label, sizeof(label), "budget %.2f pinned", frac[k]);
		check_stream_plan(g, &prm, label);
		prm.pinned_budget = prm.device_budget / 3;
		snprintf(label, sizeof(label), "budget %.2f pinned 1/3", frac[k]);
		check_stream_plan(g, &prm, label);
		prm.pinned_budget = 0;
		snprintf(label, sizeof(label), "budget %.2f no pinned", frac[k]);
		check_stream_plan(g, &prm, label);
	}
	prm.has_val = false;
	prm.device_budget = whole / 5 > 2 * longest_row_block(g, false) ? whole / 5 : 2 * longest_row_block(g, false);
	prm.pinned_budget = whole;
	check_stream_plan(g, &prm, "no values");
	prm.has_val = true;

	if (whole <= 2 * longest)
		return;					/* too small a graph to stream: every budget below is resident */

	/* the tightest budget: exactly two of the longest row's block: runs, in many blocks */
	{
		PrStreamPlan p;
		PrError		err;
		PrStatus	st;

		prm.device_budget = 2 * longest;
		prm.pinned_budget = whole;
		check_stream_plan(g, &prm, "tightest budget");
		/* one byte less: a clear error naming the row and the budget needed */
		prm.device_budget = 2 * longest - 1;
		st = pr_stream_plan(g->n, g->ptr, &prm, &pr_malloc_allocator, &p, &err);
		check(st == PR_ERR_TOO_LARGE && strstr(err.message, "raise the budget") != NULL &&
			  strstr(err.message, "row ") != NULL, "stream: a row too large for a buffer is a clear error", g->name);
		if (st == PR_OK)
			pr_stream_plan_free(&p, &pr_malloc_allocator);
	}

	/* tiny pinned budgets degrade: smaller blocks (staged), or pageable; never an error */
	{
		PrStreamPlan a,
					b;
		PrError		err;
		PrStatus	sa,
					sb;

		prm.device_budget = whole / 4 > 2 * longest ? whole / 4 : 2 * longest;
		prm.pinned_budget = whole;
		sa = pr_stream_plan(g->n, g->ptr, &prm, &pr_malloc_allocator, &a, &err);
		prm.pinned_budget = 2 * longest + 1;
		sb = pr_stream_plan(g->n, g->ptr, &prm, &pr_malloc_allocator, &b, &err);
		check(sa == PR_OK && sb == PR_OK && b.mode == PR_STREAM_STAGED && b.min_blocks >= a.min_blocks &&
			  b.pinned_bytes <= prm.pinned_budget, "stream: short pinned memory gives smaller staged blocks", g->name);
		if (sa == PR_OK)
			pr_stream_plan_free(&a, &pr_malloc_allocator);
		if (sb == PR_OK)
			pr_stream_plan_free(&b, &pr_malloc_allocator);
		prm.pinned_budget = 0;
		sb = pr_stream_plan(g->n, g->ptr, &prm, &pr_malloc_allocator, &b, &err);
		check(sb == PR_OK && b.mode == PR_STREAM_PAGEABLE && b.pinned_bytes == 0,
			  "stream: no pinned memory runs pageable", g->name);
		if (sb == PR_OK)
			pr_stream_plan_free(&b, &pr_malloc_allocator);
	}
}

/* The model's choice of block count on synthetic bandwidth / compute numbers. */
static void
check_stream_model(const TestGraph *g)
{
	PrStreamParams prm;
	PrStreamPlan p;
	PrError		err;
	size_t		whole = pr_stream_block_layout(g->ptr, 0, g->n, true).bytes;
	int64_t    *trial = malloc(sizeof(int64_t) * 8192);

	pr_stream_params_init(&prm);
	prm.device_budget = whole / 3;	/* at least 6 blocks */
	prm.pinned_budget = whole;

	/* a huge fixed cost per block: the fewest blocks */
	prm.transfer_latency_s = 1.0;
	prm.launch_s = 1.0;
	pr_stream_plan(g->n, g->ptr, &prm, &pr_malloc_allocator, &p, &err);
	check(p.n_blocks == p.min_blocks && p.min_blocks >= 6, "model: large fixed cost -> fewest blocks", g->name);
	pr_stream_plan_free(&p, &pr_malloc_allocator);

	/* no fixed cost: more blocks shrink the unhidden first transfer and last compute */
	prm.transfer_latency_s = 0;
	prm.launch_s = 0;
	pr_stream_plan(g->n, g->ptr, &prm, &pr_malloc_allocator, &p, &err);
	check(p.n_blocks >= 4 * p.min_blocks, "model: no fixed cost -> many blocks", g->name);
	if (p.n_blocks < 4 * p.min_blocks)
		printf("  %lld blocks, fewest %lld, %lld rows, %d candidates\n", (long long) p.n_blocks,
			   (long long) p.min_blocks, (long long) g->n, p.n_candidates);
	pr_stream_plan_free(&p, &pr_malloc_allocator);

	/* realistic: transfer-bound (50 GB/s link, 20 ps/edge compute): time near bytes / bandwidth */
	pr_stream_params_init(&prm);
	prm.device_budget = whole / 3;
	prm.pinned_budget = whole;
	pr_stream_plan(g->n, g->ptr, &prm, &pr_malloc_allocator, &p, &err);
	{
		double		link = (double) p.matrix_bytes / prm.h2d_bytes_per_s;
		bool		best = true;

		check(p.transfer_s > p.compute_s && p.predicted_s >= link && p.predicted_s <= 1.25 * link + 1e-4,
			  "model: transfer-bound time near bytes / bandwidth", g->name);
		/* no block count near the fewest does better than the choice (brute force) */
		for (int64_t B = p.min_blocks; B < p.min_blocks + 32 && B <= g->n; B++)
		{
			PrStreamParams f = prm;
			PrStreamPlan q;

			f.force_blocks = B;
			if (pr_stream_plan(g->n, g->ptr, &f, &pr_malloc_allocator, &q, &err) != PR_OK)
				continue;
			if (q.n_blocks == B && q.predicted_s < p.predicted_s * (1 - 1e-12))
				best = false;
			pr_stream_plan_free(&q, &pr_malloc_allocator);
		}
		check(best, "model: choice is the fastest of the counts near the fewest", g->name);
	}
	pr_stream_plan_free(&p, &pr_malloc_allocator);

	/* compute-bound (a slow kernel): time near the compute sum */
	prm.edge_s = 5e-9;
	pr_stream_plan(g->n, g->ptr, &prm, &pr_malloc_allocator, &p, &err);
	check(p.compute_s > p.transfer_s && p.predicted_s <= 1.25 * p.compute_s,
		  "model: compute-bound time near the compute sum", g->name);
	pr_stream_plan_free(&p, &pr_malloc_allocator);

	/* forced block count */
	prm.force_blocks = 0;
	pr_stream_plan(g->n, g->ptr, &prm, &pr_malloc_allocator, &p, &err);
	{
		int64_t		want = p.min_blocks + 5;
		PrStreamPlan q;

		prm.force_blocks = want;
		pr_stream_plan(g->n, g->ptr, &prm, &pr_malloc_allocator, &q, &err);
		check(q.n_blocks == want, "model: forced block count kept", g->name);
		pr_stream_plan_free(&q, &pr_malloc_allocator);
	}
	pr_stream_plan_free(&p, &pr_malloc_allocator);
	free(trial);
}

/* Imbalance figures of every method on R-MAT (natural ids: the skew follows the ids). */
static void
report_imbalance(const TestGraph *g)
{
	static const PrPartitionMethod methods[] = {PR_PARTITION_GREEDY, PR_PARTITION_SNAKE, PR_PARTITION_RANGES};

	for (int G = 2; G <= 8; G *= 2)
		for (int k = 0; k < 3; k++)
		{
			PrPartitionOptions opt;
			PrPartition part;
			PrError		err;
			int64_t		emin = INT64_MAX,
						emax = 0;

			pr_partition_options_init(&opt);
			opt.n_parts = G;
			opt.method = methods[k];
			if (pr_partition_build(g->n, g->ptr, &opt, &pr_malloc_allocator, &part, &err) != PR_OK)
			{
				check(false, "imbalance report: build", g->name);
				continue;
			}
			for (int p = 0; p < G; p++)
			{
				emin = part.edges[p] < emin ? part.edges[p] : emin;
				emax = part.edges[p] > emax ? part.edges[p] : emax;
			}
			printf("  imbalance %-22s G=%d %-6s edges max/mean %.6f (spread %lld, longest row %lld) rows max/mean %.6f\n",
				   g->name, G, pr_partition_method_name(methods[k]), pr_partition_edge_imbalance(&part),
				   (long long) (emax - emin), (long long) part.max_row_len, pr_partition_row_imbalance(&part));
			if (methods[k] == PR_PARTITION_GREEDY)
				check(pr_partition_edge_imbalance(&part) < 1.01 && pr_partition_row_imbalance(&part) < 1.001,
					  "greedy on R-MAT: edges within 1%, rows within 0.1%", g->name);
			pr_partition_free(&part, &pr_malloc_allocator);
		}
}

/* Whether two CSRs are the same bytes (rows, ptr, col, val). */
static bool
same_csr(const PrPartCsr *a, const PrPartCsr *b)
{
	if (a->n_rows != b->n_rows || a->nnz != b->nnz || a->n_cols != b->n_cols || (a->val == NULL) != (b->val == NULL))
		return false;
	if (memcmp(a->ptr, b->ptr, (size_t) (a->n_rows + 1) * sizeof(int64_t)) != 0 ||
		memcmp(a->col, b->col, (size_t) a->nnz * sizeof(int32_t)) != 0)
		return false;
	return a->val == NULL || memcmp(a->val, b->val, (size_t) a->nnz * sizeof(float)) == 0;
}

/*
 * Each part's CSR (pr_partition_local_csr) of a G-part partition is the same bytes when built
 * with 1, 3 and 8 threads (long rows sorted in threads, weighted and unweighted).
 */
static void
check_csr_threads(const TestGraph *g, int G)
{
	PrPartitionOptions opt;
	PrPartition part;
	PrError		err;
	char		what[160];
	double	   *scale = malloc((size_t) (g->n + 1) * sizeof(double));
	bool		threads_ok = true;

	pr_partition_options_init(&opt);
	opt.n_parts = G;
	snprintf(what, sizeof(what), "CSR threads G=%d: build", G);
	if (pr_partition_build(g->n, g->ptr, &opt, &pr_malloc_allocator, &part, &err) != PR_OK)
	{
		check(false, what, g->name);
		printf("  %s\n", err.message);
		free(scale);
		return;
	}
	for (int64_t v = 0; v < g->n; v++)
		scale[v] = 1.0 / (double) (1 << (v % 3));
	for (int p = 0; p < G; p++)
	{
		PrPartCsr	one;

		pr_partition_set_threads(1);
		if (pr_partition_local_csr(&part, p, g->ptr, g->col, g->val, scale, &pr_malloc_allocator, &one,
								   &err) != PR_OK)
		{
			threads_ok = false;
			printf("  %s\n", err.message);
			continue;
		}
		for (int t = 3; t <= 8; t += 5)
		{
			PrPartCsr	again;

			pr_partition_set_threads(t);
			if (pr_partition_local_csr(&part, p, g->ptr, g->col, g->val, scale, &pr_malloc_allocator,
									   &again, &err) != PR_OK)
				threads_ok = false;
			else
			{
				threads_ok = threads_ok && same_csr(&one, &again) && again.slot_begin == one.slot_begin;
				pr_part_csr_free(&again, &pr_malloc_allocator);
			}
		}
		pr_partition_set_threads(0);
		pr_part_csr_free(&one, &pr_malloc_allocator);
	}
	snprintf(what, sizeof(what), "CSR threads G=%d: same bytes for 1, 3, 8 threads", G);
	check(threads_ok, what, g->name);
	pr_partition_free(&part, &pr_malloc_allocator);
	free(scale);
}

/* Bad input is refused with a message. */
static void
check_errors(void)
{
	TestGraph	g;
	PrPartitionOptions opt;
	PrPartition part;
	PrStreamParams prm;
	PrStreamPlan plan;
	PrError		err;

	make_uniform(&g, 100, 400, false, 5);
	pr_partition_options_init(&opt);
	opt.n_parts = 0;
	check(pr_partition_build(g.n, g.ptr, &opt, &pr_malloc_allocator, &part, &err) == PR_ERR_INVALID,
		  "0 parts refused", g.name);
	opt.n_parts = PR_PARTITION_MAX_PARTS + 1;
	check(pr_partition_build(g.n, g.ptr, &opt, &pr_malloc_allocator, &part, &err) == PR_ERR_INVALID,
		  "too many parts refused", g.name);
	pr_stream_params_init(&prm);
	check(pr_stream_plan(g.n, g.ptr, &prm, &pr_malloc_allocator, &plan, &err) == PR_ERR_INVALID,
		  "zero device budget refused", g.name);
	{
		PrPartitionMethod m;

		check(pr_partition_method_parse("snake", &m) && m == PR_PARTITION_SNAKE &&
			  !pr_partition_method_parse("bogus", &m), "method names parse", g.name);
	}
	graph_free(&g);
}

/* Runs every test. */
int
main(void)
{
	static const PrPartitionMethod methods[] = {PR_PARTITION_GREEDY, PR_PARTITION_SNAKE, PR_PARTITION_RANGES};
	uint64_t	seed = 1234;

	check_errors();
	for (int t = 0; t < 14; t++)
	{
		TestGraph	g;

		switch (t % 7)
		{
			case 0:
				make_uniform(&g, 50 + t * 37, 300 + t * 411, t % 2 == 1, seed + (uint64_t) t);
				break;
			case 1:
				make_rmat(&g, 10 + t % 3, (int64_t) 8 << (10 + t % 3), t % 2 == 0, false,
						  seed + (uint64_t) t);
				break;
			case 2:
				make_rmat(&g, 12, (int64_t) 16 << 12, true, false, seed + (uint64_t) t);
				break;
			case 3:
				make_star(&g, 300 + 50 * t, seed + (uint64_t) t);
				break;
			case 4:
				make_uniform(&g, 5, 3, false, seed + (uint64_t) t);	/* fewer rows than parts */
				break;
			case 5:
				make_uniform(&g, 3000, 100, true, seed + (uint64_t) t);	/* mostly empty rows */
				break;
			default:
				make_rmat(&g, 9, (int64_t) 32 << 9, false, false, seed + (uint64_t) t);
				break;
		}
		for (int G = 1; G <= 8; G++)
			for (int k = 0; k < 3; k++)
				check_partition(&g, G, methods[k], false, seed + (uint64_t) (t * 10 + G));
		check_partition(&g, 4, PR_PARTITION_GREEDY, true, seed + 7);
		check_partition(&g, 3, PR_PARTITION_SNAKE, true, seed + 8);
		for (int G = 1; G <= 4; G++)
			check_csr_threads(&g, G);
		if (g.m > 0)
			check_stream(&g);
		if (g.m >= 10000)
			check_stream_model(&g);
		graph_free(&g);
	}
	{
		TestGraph	g;

		make_rmat(&g, 15, (int64_t) 16 << 15, true, false, 76);	/* threaded CSR builds (weighted) */
		for (int G = 1; G <= 4; G *= 2)
			check_csr_threads(&g, G);
		graph_free(&g);
		make_star(&g, 200000, 75);	/* a row of 200000: the long-row sort in threads */
		check_csr_threads(&g, 2);
		graph_free(&g);
		make_rmat(&g, 18, (int64_t) 16 << 18, false, false, 77);
		report_imbalance(&g);
		graph_free(&g);
		make_rmat(&g, 20, (int64_t) 16 << 20, false, false, 78);
		report_imbalance(&g);
		check_csr_threads(&g, 2);
		check_csr_threads(&g, 4);
		graph_free(&g);
	}
	return test_summary();
}
