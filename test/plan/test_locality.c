/*
 * test_locality.c — the planners that keep the graph's own order: the ALIGNED_COO layout
 * (cuda/plan/pr_plan_aligned_coo.c) against the plain CSR product — its invariants, and its product
 * run on the host exactly as the two GPU kernels (cuda/kernels/pr_gpu_aligned_coo.cuh) run it, for
 * several segment lengths (one entry per segment, rows cut everywhere; rows inside segments; one
 * segment); the row-blocks layout (cuda/plan/pr_plan_row_blocks.c) the same way, against the
 * kernels of cuda/kernels/pr_gpu_row_blocks.cuh; the hubs-first order's keys and the locality
 * order (cuda/plan/pr_plan_order.c).
 */
#include "test_locality.h"

#include "pr_plan_aligned_coo.h"
#include "pr_plan_row_blocks.h"
#include "pr_plan_order.h"
#include "graph_gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The product of the two kernels, on the host: segments in any order, then the split rows. */
static void
emulate_product(const PrAlignedCoo *a, const double *z, double *y)
{
	double	   *head = calloc((size_t) a->n_seg, sizeof(double));
	double	   *tail = calloc((size_t) a->n_seg, sizeof(double));

	for (int64_t r = 0; r < a->n; r++)
		y[r] = 0.0;
	for (int64_t t = a->n_seg - 1; t >= 0; t--)
	{
		int64_t		r = a->seg_row[t];
		bool		continued;
		int32_t		row;
		double		sum = 0;

		if (r >= a->n_rows)
			continue;
		continued = (a->seg_flags[t] & PR_ACOO_HEAD_SPLIT) != 0;
		row = a->rows[r];
		for (int64_t j = 0; j < a->seg_len; j++)
		{
			uint32_t	w = a->idx[j * a->n_seg + t];
			double		v = (a->val ? a->val[j * a->n_seg + t] : 1.0) * z[w & PR_ACOO_COL_MASK];

			if ((w & PR_ACOO_ROW_START) && j > 0)
			{
				if (continued)
					head[t] = sum;
				else
					y[row] = sum;
				continued = false;
				row = a->rows[++r];
				sum = 0;
			}
			sum += v;
		}
		if (continued)
			head[t] = sum;
		else if (a->seg_flags[t] & PR_ACOO_TAIL_SPLIT)
			tail[t] = sum;
		else
			y[row] = sum;
	}
	for (int64_t i = 0; i < a->n_split; i++)
	{
		double		sum = tail[a->split_first[i]];

		for (int32_t s = a->split_first[i] + 1; s <= a->split_last[i]; s++)
			sum += head[s];
		y[a->split_row[i]] = sum;
	}
	free(head);
	free(tail);
}

/* The layout's invariants: every entry once in row order, flags and split lists consistent. */
static bool
layout_consistent(const PrAlignedCoo *a, const PrPlanCsr *csr)
{
	int64_t		p = 0;

	if (a->n_seg % 32 != 0 || a->n_seg * a->seg_len < csr->nnz)
		return false;
	for (int64_t t = 0; t < a->n_seg; t++)
		for (int64_t j = 0; j < a->seg_len; j++, p++)
		{
			uint32_t	w = a->idx[j * a->n_seg + t];

			if (p >= csr->nnz)
			{
				if (w != (uint32_t) a->n_cols)
					return false;
				continue;
			}
			if ((int32_t) (w & PR_ACOO_COL_MASK) != csr->col[p])
				return false;
		}
	for (int64_t i = 0; i < a->n_split; i++)
		if (a->split_first[i] >= a->split_last[i] ||
			csr->ptr[a->split_row[i]] / a->seg_len != a->split_first[i])
			return false;
	return true;
}

/* Checks the layout of g's CSR at several segment lengths against csr_spmv. */
void
test_aligned_coo(const TestGraph *g, uint64_t seed)
{
	const PrAllocator *alloc = &pr_malloc_allocator;
	int64_t		n = g->n;
	double	   *x = malloc((size_t) (n + 1) * sizeof(double));
	double	   *y_ref = malloc((size_t) (n + 1) * sizeof(double));
	double	   *y = malloc((size_t) (n + 1) * sizeof(double));
	float	   *val = NULL;
	PrPlanCsr	csr;
	uint64_t	rng = seed;
	int64_t		targets[4] = {g->m > 0 ? g->m : 1, 97, 32, 1};

	for (int64_t i = 0; i < n; i++)
		x[i] = (double) (gen_random(&rng) % 9) - 3.0;
	x[n] = 0.0;
	csr_spmv(g, NULL, x, y_ref);
	if (g->val != NULL)
	{
		val = malloc((size_t) (g->m + 1) * sizeof(float));
		for (int64_t p = 0; p < g->m; p++)
			val[p] = (float) g->val[p];
	}
	memset(&csr, 0, sizeof(csr));
	csr.n = n;
	csr.nnz = g->m;
	csr.ptr = g->ptr;
	csr.col = g->col;
	csr.val = val;
	for (int i = 0; i < 4; i++)
	{
		PrAlignedCooOptions opt;
		PrAlignedCoo a;
		PrError		err;
		char		what[96];

		pr_plan_aligned_coo_options_init(&opt, targets[i]);
		opt.min_seg_len = 1;
		opt.mean_rows = i < 3 ? 0 : 2;
		snprintf(what, sizeof(what), "aligned_coo target %lld segments", (long long) targets[i]);
		if (pr_plan_aligned_coo(&csr, &opt, alloc, &a, &err) != PR_OK)
		{
			check(false, what, g->name);
			continue;
		}
		check(layout_consistent(&a, &csr), what, g->name);
		emulate_product(&a, x, y);
		check(same_vectors(y, y_ref, n), what, g->name);
		pr_plan_aligned_coo_free(&a, alloc);
	}
	free(val);
	free(x);
	free(y_ref);
	free(y);
}

/* The hubs-first keys of hand degrees: the largest kept (ties at the threshold join), the rest 0. */
void
test_hubs_first_keys(void)
{
	int64_t		key[10] = {5, 0, 9, 1, 9, 2, 3, 7, 1, 2};
	const int64_t want[10] = {0, 0, 9, 0, 9, 0, 0, 7, 0, 0};
	int64_t		one[3] = {1, 1, 1};
	int64_t		kept = -1;
	PrError		err;
	bool		same = true;

	check(pr_plan_hubs_first_keys(10, key, 3, &kept, &err) == PR_OK, "hubs first: runs", "hand degrees");
	for (int i = 0; i < 10; i++)
		same = same && key[i] == want[i];
	/* 9, 9 and 7 reach three hubs at degree 7: they keep their keys, 5 and below become 0 */
	check(same && kept == 3, "hubs first: the three largest degrees kept", "hand degrees");
	check(pr_plan_hubs_first_keys(3, one, 2, &kept, &err) == PR_OK && kept == 0 &&
		  one[0] == 0 && one[1] == 0 && one[2] == 0, "hubs first: degree 1 is never a hub", "all degree 1");
}

/* Orders 64-bit values (qsort). */
static int
compare_u64(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *) a,
				y = *(const uint64_t *) b;

	return x < y ? -1 : x > y;
}

/*
 * Distinct 32-byte sectors of z (8 fp32 values) that each block of 2048 consecutive entries
 * gathers, per entry, rows and columns renamed by the order (NULL: the ids as they are): the
 * reads a row block of the GPU layout makes, which the locality order is meant to cut.
 */
static double
sectors_per_entry(const TestGraph *g, const int32_t *old_to_new, const int32_t *new_to_old)
{
	uint64_t	block[2048];
	int64_t		used = 0,
				distinct = 0;

	for (int64_t i = 0; i < g->n; i++)
	{
		int64_t		r = new_to_old ? new_to_old[i] : i;

		for (int64_t e = g->ptr[r]; e < g->ptr[r + 1]; e++)
		{
			block[used++] = (uint64_t) (old_to_new ? old_to_new[g->col[e]] : g->col[e]) / 8;
			if (used == 2048 || (i == g->n - 1 && e == g->ptr[r + 1] - 1))
			{
				qsort(block, (size_t) used, sizeof(uint64_t), compare_u64);
				for (int64_t k = 0; k < used; k++)
					distinct += k == 0 || block[k] != block[k - 1];
				used = 0;
			}
		}
	}
	return g->m > 0 ? (double) distinct / (double) g->m : 0.0;
}

/*
 * The locality order: by hand (rows' sources numbered in turn, unreached nodes start walks of
 * their own), a permutation on a generated graph, and on a locality graph whose ids were shuffled
 * it brings the gathered columns of consecutive rows back close together.
 */
void
test_locality_order(void)
{
	/* edges 2->0, 3->0, 0->3, 1->3, 4->2: rows 0: {2, 3}; 2: {4}; 3: {0, 1}; 1, 4 empty */
	int32_t		hs[] = {2, 3, 0, 1, 4},
				hd[] = {0, 0, 3, 3, 2};
	/* walk from 0: its first source 2, then 2's source 4 (empty row), back to 0's next source 3,
	 * then 3's unnumbered source 1 */
	const int32_t want[5] = {0, 2, 4, 3, 1};
	int32_t		new_to_old[5],
				old_to_new[5];
	TestGraph	g;
	PrPlanCsr	in;
	PrError		err;
	uint64_t	rng = 5;
	bool		same = true;

	graph_from_edges(&g, 5, 5, hs, hd, false, &rng);
	memset(&in, 0, sizeof(in));
	in.n = g.n;
	in.nnz = g.m;
	in.ptr = g.ptr;
	in.col = g.col;
	check(pr_plan_locality_order(&in, new_to_old, old_to_new, &err) == PR_OK, "locality order: runs", "hand");
	for (int i = 0; i < 5; i++)
		same = same && new_to_old[i] == want[i] && old_to_new[want[i]] == i;
	check(same, "locality order: depth first along the in-edges", "hand");
	graph_free(&g);
	{
		/* an edge 1->0 and an isolated node 2: the walk from 0 takes 1, node 2 starts its own */
		int32_t		ts[] = {1},
					td[] = {0};

		graph_from_edges(&g, 3, 1, ts, td, false, &rng);
		in.n = g.n;
		in.nnz = g.m;
		in.ptr = g.ptr;
		in.col = g.col;
		check(pr_plan_locality_order(&in, new_to_old, old_to_new, &err) == PR_OK && new_to_old[0] == 0 && new_to_old[1] == 1 && new_to_old[2] == 2, "locality order: unreached nodes last",
			  "hand");
		graph_free(&g);
	}
	{
		GenSpec		spec = gen_local(1 << 14, 16 << 14, 0.9, 64, 21);
		int64_t		n = spec.n,
					m = spec.m;
		int64_t    *s64 = malloc((size_t) m * sizeof(int64_t)),
				   *d64 = malloc((size_t) m * sizeof(int64_t));
		int32_t    *s32 = malloc((size_t) m * sizeof(int32_t)),
				   *d32 = malloc((size_t) m * sizeof(int32_t)),
				   *n2o = malloc((size_t) n * sizeof(int32_t)),
				   *o2n = malloc((size_t) n * sizeof(int32_t));
		char	   *seen = calloc((size_t) n, 1);
		bool		perm = true;
		double		natural,
					shuffled,
					recovered;

		gen_edges(&spec, s64, d64, 1);
		for (int pass = 0; pass < 2; pass++)
		{
			if (pass == 1)
				check(gen_reorder_ids(GEN_IDS_SHUFFLED, s64, d64, (size_t) m, 3), "locality order: shuffled ids",
					  "local:14");
			for (int64_t e = 0; e < m; e++)
			{
				s32[e] = (int32_t) s64[e];
				d32[e] = (int32_t) d64[e];
			}
			graph_from_edges(&g, n, m, s32, d32, false, &rng);
			if (pass == 0)
			{
				natural = sectors_per_entry(&g, NULL, NULL);
				graph_free(&g);
				continue;
			}
			shuffled = sectors_per_entry(&g, NULL, NULL);
			in.n = g.n;
			in.nnz = g.m;
			in.ptr = g.ptr;
			in.col = g.col;
			check(pr_plan_locality_order(&in, n2o, o2n, &err) == PR_OK, "locality order: runs", "local:14 shuffled");
			for (int64_t i = 0; i < n && perm; i++)
			{
				perm = n2o[i] >= 0 && n2o[i] < n && !seen[n2o[i]] && o2n[n2o[i]] == i;
				if (perm)
					seen[n2o[i]] = 1;
			}
			recovered = sectors_per_entry(&g, o2n, n2o);
			graph_free(&g);
		}
		check(perm, "locality order: a permutation", "local:14 shuffled");
		/* natural ids: most of a block's gathers share sectors; shuffled: almost none do */
		check(shuffled > 4 * natural, "locality order: shuffling the ids loses their locality", "local:14");
		check(recovered < 0.7 * shuffled, "locality order: fewer sectors a block than shuffled ids",
			  "local:14 shuffled");
		printf("# sectors per entry on local:14: natural ids %.3f, shuffled %.3f, locality order %.3f\n", natural,
			   shuffled, recovered);
		free(s64);
		free(d64);
		free(s32);
		free(d32);
		free(n2o);
		free(o2n);
		free(seen);
	}
}

/* Checks the row-blocks layout of g: rows in order, covered once, blocks within their cap, and the
 * product of its two kernels run on the host against csr_spmv. */
void
test_row_blocks(const TestGraph *g, uint64_t seed)
{
	const PrAllocator *alloc = &pr_malloc_allocator;
	int64_t		n = g->n;
	double	   *x = malloc((size_t) (n + 1) * sizeof(double));
	double	   *y_ref = malloc((size_t) (n + 1) * sizeof(double));
	double	   *y = malloc((size_t) (n + 1) * sizeof(double));
	PrPlanCsr	csr;
	PrRowBlocks b;
	PrError		err;
	uint64_t	rng = seed;
	bool		ok = true;

	for (int64_t i = 0; i < n; i++)
		x[i] = (double) (gen_random(&rng) % 9) - 3.0;
	x[n] = 0.0;
	csr_spmv(g, NULL, x, y_ref);
	memset(&csr, 0, sizeof(csr));
	csr.n = n;
	csr.nnz = g->m;
	csr.ptr = g->ptr;
	csr.col = g->col;
	if (pr_plan_row_blocks(&csr, alloc, &b, &err) != PR_OK)
	{
		check(false, "row blocks: plan", g->name);
		free(x);
		free(y_ref);
		free(y);
		return;
	}
	{
		double	   *partial = calloc((size_t) b.n_chunks + 1, sizeof(double));

		for (int64_t r = 0; r < n; r++)
			y[r] = -1e300;		/* every row must be written */
		for (int64_t k = 0; k < b.n_blocks; k++)
		{
			int64_t		r0 = b.first_row[k],
						r1 = b.first_row[k + 1];

			if (b.chunk_edge[k] >= 0)
			{
				int64_t		end = b.chunk_edge[k] + PR_ROW_BLOCK_CHUNK < g->ptr[r0 + 1] ?
					b.chunk_edge[k] + PR_ROW_BLOCK_CHUNK : g->ptr[r0 + 1];
				double		s = 0;

				for (int64_t p = b.chunk_edge[k]; p < end; p++)
					s += (g->val ? g->val[p] : 1.0) * x[g->col[p]];
				partial[b.chunk_slot[k]] = s;
				ok = ok && (r1 == r0 || r1 == r0 + 1);
				continue;
			}
			ok = ok && r1 > r0 && g->ptr[r1] - g->ptr[r0] <= PR_ROW_BLOCK_CAP;
			for (int64_t r = r0; r < r1; r++)
			{
				double		s = 0;

				for (int64_t p = g->ptr[r]; p < g->ptr[r + 1]; p++)
					s += (g->val ? g->val[p] : 1.0) * x[g->col[p]];
				y[r] = s;
			}
		}
		for (int64_t i = 0; i < b.longs.n_long; i++)
		{
			double		s = 0;

			for (int64_t c = b.longs.chunk_begin[i]; c < b.longs.chunk_begin[i + 1]; c++)
				s += partial[c];
			y[b.longs.long_row[i]] = s;
		}
		free(partial);
	}
	ok = ok && b.first_row[0] == 0 && b.first_row[b.n_blocks] == n;
	check(ok, "row blocks: rows in order, blocks within the cap", g->name);
	check(same_vectors(y, y_ref, n), "row blocks: product", g->name);
	pr_plan_row_blocks_free(&b, alloc);
	free(x);
	free(y_ref);
	free(y);
}
