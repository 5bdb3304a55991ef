/*
 * test_plan.c — unit tests of the GPU format planners: for each layout, an SpMV emulated on the CPU
 * over the planned arrays must equal plain CSR SpMV, on many random and skewed (R-MAT) graphs.
 * Values are small integers so every sum is exact in double and float.
 * Prints one line per failure and, last, exactly "N passed, N failed"; exits nonzero on failure.
 */
#include "pr_plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int	n_passed = 0;
static int	n_failed = 0;

/* Records one check. */
static void
check(bool ok, const char *what, const char *graph)
{
	if (ok)
		n_passed++;
	else
	{
		n_failed++;
		printf("FAIL: %s on %s\n", what, graph);
	}
}

/* A deterministic 64-bit generator (splitmix64). */
static uint64_t
next_random(uint64_t *state)
{
	uint64_t	z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A test graph as an in-edge CSR with optional integer weights. */
typedef struct TestGraph
{
	int64_t		n;
	int64_t    *ptr;
	int32_t    *col;
	double	   *val;
	char		name[96];
} TestGraph;

/* Builds the CSR (rows = dst) of m edges given as (src, dst) pairs. */
static void
graph_from_edges(TestGraph *g, int64_t n, int64_t m, const int32_t *src, const int32_t *dst,
				 bool weighted, uint64_t *rng)
{
	int64_t    *cur = calloc((size_t) n + 1, sizeof(int64_t));

	g->n = n;
	g->ptr = calloc((size_t) n + 1, sizeof(int64_t));
	g->col = malloc((size_t) (m + 1) * sizeof(int32_t));
	g->val = weighted ? malloc((size_t) (m + 1) * sizeof(double)) : NULL;
	for (int64_t e = 0; e < m; e++)
		g->ptr[dst[e] + 1]++;
	for (int64_t r = 0; r < n; r++)
		g->ptr[r + 1] += g->ptr[r];
	memcpy(cur, g->ptr, (size_t) n * sizeof(int64_t));
	for (int64_t e = 0; e < m; e++)
	{
		int64_t		p = cur[dst[e]]++;

		g->col[p] = src[e];
		if (weighted)
			g->val[p] = (double) (1 + next_random(rng) % 4);
	}
	free(cur);
}

/* Uniform random graph (duplicates kept: parallel entries). */
static void
make_uniform(TestGraph *g, int64_t n, int64_t m, bool weighted, uint64_t seed)
{
	uint64_t	rng = seed;
	int32_t    *src = malloc((size_t) (m + 1) * sizeof(int32_t));
	int32_t    *dst = malloc((size_t) (m + 1) * sizeof(int32_t));

	for (int64_t e = 0; e < m; e++)
	{
		src[e] = (int32_t) (next_random(&rng) % (uint64_t) n);
		dst[e] = (int32_t) (next_random(&rng) % (uint64_t) n);
	}
	graph_from_edges(g, n, m, src, dst, weighted, &rng);
	snprintf(g->name, sizeof(g->name), "uniform n=%lld m=%lld%s seed=%llu", (long long) n,
			 (long long) m, weighted ? " weighted" : "", (unsigned long long) seed);
	free(src);
	free(dst);
}

/* R-MAT graph (a=.57, b=.19, c=.19) with a random id permutation: heavy skew. */
static void
make_rmat(TestGraph *g, int scale, int64_t m, bool weighted, uint64_t seed)
{
	uint64_t	rng = seed;
	int64_t		n = (int64_t) 1 << scale;
	int32_t    *perm = malloc((size_t) n * sizeof(int32_t));
	int32_t    *src = malloc((size_t) (m + 1) * sizeof(int32_t));
	int32_t    *dst = malloc((size_t) (m + 1) * sizeof(int32_t));

	for (int64_t i = 0; i < n; i++)
		perm[i] = (int32_t) i;
	for (int64_t i = n - 1; i > 0; i--)
	{
		int64_t		j = (int64_t) (next_random(&rng) % (uint64_t) (i + 1));
		int32_t		t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	for (int64_t e = 0; e < m; e++)
	{
		int64_t		u = 0,
					v = 0;

		for (int level = 0; level < scale; level++)
		{
			double		p = (double) (next_random(&rng) >> 11) / 9007199254740992.0;
			int			bu = 0,
						bv = 0;

			if (p < 0.57)
				;
			else if (p < 0.76)
				bv = 1;
			else if (p < 0.95)
				bu = 1;
			else
				bu = bv = 1;
			u = (u << 1) | bu;
			v = (v << 1) | bv;
		}
		src[e] = perm[u];
		dst[e] = perm[v];
	}
	graph_from_edges(g, n, m, src, dst, weighted, &rng);
	snprintf(g->name, sizeof(g->name), "rmat scale=%d m=%lld%s seed=%llu", scale, (long long) m,
			 weighted ? " weighted" : "", (unsigned long long) seed);
	free(perm);
	free(src);
	free(dst);
}

/* Frees a test graph. */
static void
graph_free(TestGraph *g)
{
	free(g->ptr);
	free(g->col);
	free(g->val);
}

/* Plain CSR SpMV: y[r] = sum val * x[col]. */
static void
csr_spmv(const TestGraph *g, const double *x, double *y)
{
	for (int64_t r = 0; r < g->n; r++)
	{
		double		s = 0;

		for (int64_t e = g->ptr[r]; e < g->ptr[r + 1]; e++)
			s += (g->val ? g->val[e] : 1.0) * x[g->col[e]];
		y[r] = s;
	}
}

/* Exact comparison of two vectors (the sums are of small integers). */
static bool
same_vectors(const double *a, const double *b, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

/* Global column of entry p of a tile (n for padding), from idx or the 16-bit local ids. */
static int64_t
tile_column(const PrCompositeTile *t, int64_t p, int64_t n, bool *ok)
{
	if (t->local16)
	{
		int64_t		local = t->idx16[p];

		if (t->idx != NULL || local > t->col_end - t->col_begin)
			*ok = false;
		return local == t->col_end - t->col_begin ? n : t->col_begin + local;
	}
	return t->idx[p];
}

/* Emulates the composite kernels: tile 0 stores, later tiles add, chunk partials in order. */
static bool
emulate_composite(const PrComposite *c, const double *z, double *y)
{
	int64_t		n = c->n;
	int		   *written = calloc((size_t) n, sizeof(int));
	bool		ok = true;

	for (int64_t i = 0; i < n; i++)
		y[i] = NAN;
	for (int t = 0; t < c->n_tiles && ok; t++)
	{
		const PrCompositeTile *tile = &c->tiles[t];
		double	   *partial = malloc((size_t) (tile->n_vec + 1) * sizeof(double));

		for (int64_t w = 0; w < tile->n_vec; w++)
		{
			double		s = 0;

			for (int64_t p = tile->vec_ptr[w]; p < tile->vec_ptr[w + 1]; p++)
			{
				int64_t		c = tile_column(tile, p, n, &ok);

				if (c < tile->col_begin || c >= tile->col_end)
					ok = false;
				s += (tile->val ? tile->val[p] : 1.0f) * z[c];
			}
			if (tile->vec_row[w] >= 0)
			{
				y[tile->vec_row[w]] = (t == 0) ? s : y[tile->vec_row[w]] + s;
				if (t == 0)
					written[tile->vec_row[w]]++;
			}
			partial[w] = s;
		}
		for (int64_t l = 0; l < tile->longs.n_long; l++)
		{
			double		s = 0;
			int32_t		r = tile->longs.long_row[l];

			for (int64_t w = tile->longs.chunk_begin[l]; w < tile->longs.chunk_begin[l + 1]; w++)
			{
				if (tile->vec_row[w] != -1)
					ok = false;
				s += partial[w];
			}
			y[r] = (t == 0) ? s : y[r] + s;
			if (t == 0)
				written[r]++;
		}
		for (int64_t g = 0; g < tile->n_ell; g++)
		{
			int64_t		h = (tile->ell_off[g + 1] - tile->ell_off[g]) / PR_PLAN_WARP;

			if ((tile->ell_off[g + 1] - tile->ell_off[g]) % PR_PLAN_WARP != 0)
				ok = false;
			for (int lane = 0; lane < PR_PLAN_WARP; lane++)
			{
				int32_t		r = tile->ell_row[g * PR_PLAN_WARP + lane];
				double		s = 0;

				for (int64_t j = 0; j < h; j++)
				{
					int64_t		p = tile->ell_off[g] + j * PR_PLAN_WARP + lane;
					int64_t		c = tile_column(tile, p, n, &ok);

					if (c != n && (c < tile->col_begin || c >= tile->col_end))
						ok = false;
					if (r < 0 && c != n)
						ok = false;
					s += (tile->val ? tile->val[p] : 1.0f) * z[c];
				}
				if (r >= 0)
				{
					y[r] = (t == 0) ? s : y[r] + s;
					if (t == 0)
						written[r]++;
				}
			}
		}
		free(partial);
	}
	for (int64_t i = 0; i < n; i++)
		if (written[i] != 1)
			ok = false;
	free(written);
	return ok;
}

/* Emulates the binned kernel: each bin's rows whole, long rows as chunk partials added in order. */
static bool
emulate_binned(const PrBinned *b, const PrPlanCsr *csr, const double *z, double *y)
{
	int64_t		n = b->n;
	int		   *written = calloc((size_t) n, sizeof(int));
	double	   *partial = malloc((size_t) (b->n_chunks + 1) * sizeof(double));
	bool		ok = true;

	for (int64_t i = 0; i < n; i++)
		y[i] = NAN;
	for (int bin = 0; bin < PR_BIN_COUNT - 1; bin++)
		for (int64_t i = b->bin_begin[bin]; i < b->bin_begin[bin + 1]; i++)
		{
			int32_t		r = b->rows[i];
			int64_t		len = csr->ptr[r + 1] - csr->ptr[r];
			double		s = 0;

			if (len > 4 * pr_bin_lanes[bin] && bin < PR_BIN_COUNT - 2)
				ok = false;
			for (int64_t e = csr->ptr[r]; e < csr->ptr[r + 1]; e++)
				s += (csr->val ? csr->val[e] : 1.0f) * z[csr->col[e]];
			y[r] = s;
			written[r]++;
		}
	for (int64_t c = 0; c < b->n_chunks; c++)
	{
		int32_t		r = b->chunk_row[c];
		int64_t		end = csr->ptr[r + 1];
		int64_t		stop = b->chunk_begin_edge[c] + b->chunk < end ? b->chunk_begin_edge[c] + b->chunk : end;
		double		s = 0;

		for (int64_t e = b->chunk_begin_edge[c]; e < stop; e++)
			s += (csr->val ? csr->val[e] : 1.0f) * z[csr->col[e]];
		partial[c] = s;
	}
	for (int64_t l = 0; l < b->longs.n_long; l++)
	{
		double		s = 0;

		for (int64_t c = b->longs.chunk_begin[l]; c < b->longs.chunk_begin[l + 1]; c++)
		{
			if (b->chunk_row[c] != b->longs.long_row[l])
				ok = false;
			s += partial[c];
		}
		y[b->longs.long_row[l]] = s;
		written[b->longs.long_row[l]]++;
	}
	for (int64_t i = 0; i < n; i++)
		if (written[i] != 1)
			ok = false;
	free(written);
	free(partial);
	return ok;
}

/* Runs every planner on one graph and checks each layout's emulated product against CSR. */
static void
test_graph(const TestGraph *g, uint64_t seed)
{
	int64_t		n = g->n;
	int64_t    *outdeg = calloc((size_t) n, sizeof(int64_t));
	int32_t    *new_to_old = malloc((size_t) n * sizeof(int32_t));
	int32_t    *old_to_new = malloc((size_t) n * sizeof(int32_t));
	double	   *x = malloc((size_t) n * sizeof(double));
	double	   *y_ref = malloc((size_t) n * sizeof(double));
	double	   *z = malloc((size_t) (n + 1) * sizeof(double));
	double	   *y = malloc((size_t) n * sizeof(double));
	double	   *y_back = malloc((size_t) n * sizeof(double));
	uint64_t	rng = seed;
	PrPlanCsr	csr;
	PrError		err;
	bool		ok;

	for (int64_t e = 0; e < g->ptr[n]; e++)
		outdeg[g->col[e]]++;
	for (int64_t i = 0; i < n; i++)
		x[i] = (double) (next_random(&rng) % 9) - 3.0;
	csr_spmv(g, x, y_ref);

	/* degree order: a permutation, keys non-increasing, ties by id */
	check(pr_plan_degree_order(n, outdeg, new_to_old, old_to_new, &pr_malloc_allocator, &err) == PR_OK,
		  "degree order runs", g->name);
	ok = true;
	for (int64_t i = 0; i < n; i++)
	{
		if (old_to_new[new_to_old[i]] != i)
			ok = false;
		if (i > 0 && (outdeg[new_to_old[i - 1]] < outdeg[new_to_old[i]] ||
					  (outdeg[new_to_old[i - 1]] == outdeg[new_to_old[i]] &&
					   new_to_old[i - 1] > new_to_old[i])))
			ok = false;
	}
	check(ok, "degree order is a sorted permutation", g->name);

	/* relabelled CSR: same product in new ids, columns ascending */
	check(pr_plan_relabel(n, g->ptr, g->col, g->val, old_to_new, &pr_malloc_allocator, &csr, &err)
		  == PR_OK, "relabel runs", g->name);
	for (int64_t i = 0; i < n; i++)
		z[old_to_new[i]] = x[i];
	z[n] = 0.0;
	ok = true;
	for (int64_t r = 0; r < n; r++)
	{
		double		s = 0;

		for (int64_t e = csr.ptr[r]; e < csr.ptr[r + 1]; e++)
		{
			s += (csr.val ? csr.val[e] : 1.0f) * z[csr.col[e]];
			if (e > csr.ptr[r] && csr.col[e] < csr.col[e - 1])
				ok = false;
		}
		y[r] = s;
	}
	for (int64_t i = 0; i < n; i++)
		y_back[i] = y[old_to_new[i]];
	check(ok && same_vectors(y_back, y_ref, n), "relabelled CSR product", g->name);

	/* transpose: its product with x equals the push product A x of the original */
	{
		PrPlanCsr	tr;
		double	   *push_ref = calloc((size_t) n, sizeof(double));

		for (int64_t r = 0; r < n; r++)
			for (int64_t e = g->ptr[r]; e < g->ptr[r + 1]; e++)
				push_ref[g->col[e]] += (g->val ? g->val[e] : 1.0) * x[r];
		check(pr_plan_transpose(&csr, &pr_malloc_allocator, &tr, &err) == PR_OK, "transpose runs",
			  g->name);
		ok = true;
		for (int64_t r = 0; r < n; r++)
		{
			double		s = 0;

			for (int64_t e = tr.ptr[r]; e < tr.ptr[r + 1]; e++)
			{
				s += (tr.val ? tr.val[e] : 1.0f) * z[tr.col[e]];
				if (e > tr.ptr[r] && tr.col[e] < tr.col[e - 1])
					ok = false;
			}
			y[r] = s;
		}
		for (int64_t i = 0; i < n; i++)
			y_back[i] = y[old_to_new[i]];
		check(ok && same_vectors(y_back, push_ref, n), "transpose product (push)", g->name);
		pr_plan_csr_free(&tr, &pr_malloc_allocator);
		free(push_ref);
	}

	/* composite layouts over several tile widths, thresholds and chunk sizes */
	{
		const int64_t widths[] = {1, 3, 17, 64, 1000, n};
		const int	thresholds[] = {1, 4, 32, 1 << 30};
		const int	chunks[] = {32, 64, 4096};
		const int	smem_tiles[] = {0, 1, 3};

		for (size_t si = 1; si < sizeof(smem_tiles) / sizeof(smem_tiles[0]); si++)
			for (size_t ti = 0; ti < sizeof(thresholds) / sizeof(thresholds[0]); ti++)
			{
				PrCompositeOptions o = {widths[si + 2], thresholds[ti], 64, false, false,
										smem_tiles[si], 5 + (int64_t) si * 7};
				PrComposite c;
				char		what[160];
				bool		all16 = true;

				snprintf(what, sizeof(what), "composite smem_tiles=%d width=%lld vec>=%d",
						 o.n_smem_tiles, (long long) o.smem_width, o.vec_threshold);
				if (pr_plan_composite(&csr, &o, &pr_malloc_allocator, &c, &err) != PR_OK)
				{
					check(false, what, g->name);
					continue;
				}
				for (int t = 0; t < c.n_tiles; t++)
					if ((t < o.n_smem_tiles) != c.tiles[t].local16)
						all16 = false;
				ok = emulate_composite(&c, z, y);
				for (int64_t i = 0; i < n; i++)
					y_back[i] = y[old_to_new[i]];
				check(ok && all16 && same_vectors(y_back, y_ref, n), what, g->name);
				pr_plan_composite_free(&c, &pr_malloc_allocator);
			}
		for (size_t wi = 0; wi < sizeof(widths) / sizeof(widths[0]); wi++)
			for (size_t ti = 0; ti < sizeof(thresholds) / sizeof(thresholds[0]); ti++)
				for (size_t ci = 0; ci < sizeof(chunks) / sizeof(chunks[0]); ci++)
					for (int stop = 0; stop < 2; stop++)
					{
						PrCompositeOptions o = {widths[wi], thresholds[ti], chunks[ci], stop == 1, false, 0, 0};
						PrComposite c;
						PrStatus	st = pr_plan_composite(&csr, &o, &pr_malloc_allocator, &c, &err);
						char		what[160];

						snprintf(what, sizeof(what), "composite width=%lld vec>=%d chunk=%d stop=%d",
								 (long long) o.tile_width, o.vec_threshold, o.chunk, stop);
						if (st != PR_OK)
						{
							check(false, what, g->name);
							continue;
						}
						ok = emulate_composite(&c, z, y);
						for (int64_t i = 0; i < n; i++)
							y_back[i] = y[old_to_new[i]];
						check(ok && same_vectors(y_back, y_ref, n), what, g->name);
						/* the shapes-only plan has the same workloads, without entries */
						{
							PrComposite s;
							bool		same = true;

							o.shapes_only = true;
							if (pr_plan_composite(&csr, &o, &pr_malloc_allocator, &s, &err) != PR_OK)
								same = false;
							else
							{
								same = s.n_tiles == c.n_tiles;
								for (int t = 0; same && t < c.n_tiles; t++)
									same = s.tiles[t].n_vec == c.tiles[t].n_vec &&
										s.tiles[t].n_ell == c.tiles[t].n_ell &&
										s.tiles[t].n_idx == c.tiles[t].n_idx &&
										s.tiles[t].idx == NULL && s.tiles[t].idx16 == NULL &&
										memcmp(s.tiles[t].ell_off, c.tiles[t].ell_off,
											   (size_t) (c.tiles[t].n_ell + 1) * sizeof(int64_t)) == 0;
								pr_plan_composite_free(&s, &pr_malloc_allocator);
							}
							check(same, "composite shapes-only plan matches", g->name);
						}
						pr_plan_composite_free(&c, &pr_malloc_allocator);
					}
	}

	/* binned layouts */
	{
		const int	chunks[] = {32, 100, 4096};

		for (size_t ci = 0; ci < sizeof(chunks) / sizeof(chunks[0]); ci++)
		{
			PrBinned	b;
			char		what[96];

			snprintf(what, sizeof(what), "binned chunk=%d", chunks[ci]);
			if (pr_plan_binned(&csr, chunks[ci], &pr_malloc_allocator, &b, &err) != PR_OK)
			{
				check(false, what, g->name);
				continue;
			}
			ok = emulate_binned(&b, &csr, z, y);
			for (int64_t i = 0; i < n; i++)
				y_back[i] = y[old_to_new[i]];
			check(ok && same_vectors(y_back, y_ref, n), what, g->name);
			pr_plan_binned_free(&b, &pr_malloc_allocator);
		}
	}
	pr_plan_csr_free(&csr, &pr_malloc_allocator);
	free(outdeg);
	free(new_to_old);
	free(old_to_new);
	free(x);
	free(y_ref);
	free(z);
	free(y);
	free(y_back);
}

/* The model table: parsing, exact values at measured points, interpolation between them. */
static void
test_model(void)
{
	const char *text = "# test table\ndevice Test GPU\n"
		"e 1 1024 10\ne 4 1024 20\ne 1 1048576 30\ne 4 1048576 60\nv 32 1024 40\nl 1 1 3000\n";
	const char *bad = "e 1 x 10\n";
	PrModel		m;
	PrError		err;
	double		mid;

	check(pr_model_parse(text, &m, &err) == PR_OK && m.n_entries == 6, "model parses", "table");
	check(strcmp(m.device, "Test GPU") == 0, "model device name", "table");
	check(pr_model_parse(bad, &m, &err) == PR_ERR_INVALID, "model rejects a bad line", "table");
	pr_model_parse(text, &m, &err);
	check(fabs(pr_model_cost(&m, 'e', 1, 1024) - 10) < 1e-9, "model exact point", "table");
	check(fabs(pr_model_cost(&m, 'e', 4, 1048576) - 60) < 1e-9, "model exact point 2", "table");
	mid = pr_model_cost(&m, 'e', 2, 1024);
	check(mid > 10 && mid < 20, "model interpolates in size", "table");
	mid = pr_model_cost(&m, 'e', 1, 32768);
	check(mid > 10 && mid < 30, "model interpolates in window", "table");
	check(fabs(pr_model_cost(&m, 'v', 64, 1024) - 80) < 1e-9, "model extrapolates in proportion",
		  "table");
	check(pr_model_cost(&m, 'b', 4, 1024) < 0, "model says unknown shape", "table");
}

/* Runs every test and prints the summary line. */
int
main(void)
{
	uint64_t	seed = 12345;

	test_model();
	for (int i = 0; i < 6; i++)
	{
		TestGraph	g;

		make_uniform(&g, 1 + (int64_t) (next_random(&seed) % 700), (int64_t) (next_random(&seed) % 6000),
					 i % 2 == 1, seed + (uint64_t) i);
		test_graph(&g, seed + 100 + (uint64_t) i);
		graph_free(&g);
	}
	for (int i = 0; i < 6; i++)
	{
		TestGraph	g;

		make_rmat(&g, 6 + i, (int64_t) 16 << (6 + i), i % 3 == 2, seed + 1000 + (uint64_t) i);
		test_graph(&g, seed + 200 + (uint64_t) i);
		graph_free(&g);
	}
	{
		TestGraph	g;

		make_uniform(&g, 1, 0, false, 7);	/* one node, no edge */
		test_graph(&g, 8);
		graph_free(&g);
	}
	printf("%d passed, %d failed\n", n_passed, n_failed);
	return n_failed == 0 ? 0 : 1;
}
