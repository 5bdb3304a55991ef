/*
 * test_engine_top.c — pr_pagerank_top (the top_k best nodes of each column, ranked by the engine's
 * top_k operation or, without it, by the driver) against the full ranking of pr_pagerank sorted by
 * qsort, ties included; the CPU engine prepared again on the graph it holds (k changes, another
 * graph) giving the same bits as a fresh engine; and a CPU engine over a renumbered part.
 */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Scores the qsort comparator below ranks, and the column / stride it reads. */
static const double *rank_values;
static int	rank_stride;
static int	rank_col;

/* Larger score first, then the smaller index. */
static int
compare_score(const void *a, const void *b)
{
	int32_t		i = *(const int32_t *) a,
				j = *(const int32_t *) b;
	double		vi = rank_values[(size_t) i * rank_stride + rank_col];
	double		vj = rank_values[(size_t) j * rank_stride + rank_col];

	if (vi != vj)
		return vi > vj ? -1 : 1;
	return (i > j) - (i < j);
}

/* Node order of column col of an n x stride score array, by a full qsort. */
static int32_t *
sorted_order(const double *scores, int64_t n, int stride, int col)
{
	int32_t    *order = malloc(sizeof(int32_t) * (size_t) n);

	for (int64_t i = 0; i < n; i++)
		order[i] = (int32_t) i;
	rank_values = scores;
	rank_stride = stride;
	rank_col = col;
	qsort(order, (size_t) n, sizeof(int32_t), compare_score);
	return order;
}

/*
 * A graph with exact ties: three disjoint 3-cycles over ids 1..9 (every cycle node gets the same
 * score bit for bit) next to a random weighted part over ids 100..2099.
 */
static void
tied_graph(PrGraph *g)
{
	EdgeList	r;
	size_t		m;
	int64_t    *src,
			   *dst;
	double	   *w;
	PrError		err;
	PrBuildOptions opt = {false, false, 1, NULL, NULL, NULL};

	edges_random(&r, 9000, 2000, 100, 1, true, 97);
	m = r.m + 9;
	src = malloc(sizeof(int64_t) * m);
	dst = malloc(sizeof(int64_t) * m);
	w = malloc(sizeof(double) * m);
	for (int c = 0; c < 3; c++)
		for (int i = 0; i < 3; i++)
		{
			src[c * 3 + i] = 1 + c * 3 + i;
			dst[c * 3 + i] = 1 + c * 3 + (i + 1) % 3;
			w[c * 3 + i] = 1.0;
		}
	memcpy(src + 9, r.src, sizeof(int64_t) * r.m);
	memcpy(dst + 9, r.dst, sizeof(int64_t) * r.m);
	memcpy(w + 9, r.weight, sizeof(double) * r.m);
	if (pr_graph_build(src, dst, w, m, &opt, &pr_malloc_allocator, g, &err) != PR_OK)
	{
		fprintf(stderr, "build failed: %s\n", err.message);
		exit(2);
	}
	free(src);
	free(dst);
	free(w);
	edges_free(&r);
}

/*
 * Runs pr_pagerank_top for several top_k and checks each column against the qsort order of the
 * full scores (ids and score bits), and the iterations against the full run's.
 */
static void
check_top_against_full(PrEngine *engine, const PrGraph *g, const PrRestart *r, int k,
					   const double *full, int full_iterations, const char *what)
{
	const int64_t n = g->n_nodes;
	const int64_t top_ks[] = {1, 4, 10, 12, 500, n - 1, n, n + 3};
	PrIterOptions o = test_iter_options(1e-13, 1000);
	int32_t   **expected = malloc(sizeof(int32_t *) * (size_t) k);

	for (int j = 0; j < k; j++)
		expected[j] = sorted_order(full, n, k, j);
	for (size_t t = 0; t < sizeof(top_ks) / sizeof(top_ks[0]); t++)
	{
		int64_t		count = top_ks[t] < n ? top_ks[t] : n;
		int32_t    *index = malloc(sizeof(int32_t) * (size_t) (count * k));
		double	   *value = malloc(sizeof(double) * (size_t) (count * k));
		PrRunStats	st;
		PrError		err;
		bool		same_ids = true,
					same_values = true;

		memset(index, 0xff, sizeof(int32_t) * (size_t) (count * k));
		CHECKF(pr_pagerank_top(engine, g, 0.85, r, &o, top_ks[t], index, value, &st, &err) == PR_OK,
			   "%s top %lld: %s", what, (long long) top_ks[t], err.message);
		CHECKF(st.iterations == full_iterations && st.converged, "%s: %d iterations, full run %d",
			   what, st.iterations, full_iterations);
		for (int j = 0; j < k; j++)
			for (int64_t i = 0; i < count; i++)
			{
				int32_t		got = index[j * count + i];

				if (got != expected[j][i])
					same_ids = false;
				else if (memcmp(&value[j * count + i], &full[(size_t) got * k + j], sizeof(double)) != 0)
					same_values = false;
			}
		CHECKF(same_ids, "%s top %lld: ids differ from the full ranking", what, (long long) top_ks[t]);
		CHECKF(same_values, "%s top %lld: scores differ from the full run", what,
			   (long long) top_ks[t]);
		free(index);
		free(value);
	}
	for (int j = 0; j < k; j++)
		free(expected[j]);
	free(expected);
}

/*
 * The top_k path equals the full ranking's first rows, ties to the smaller id, for PageRank and
 * 3-source RWR, with the engine's top_k operation and with the driver's fallback (an engine
 * without it).
 */
void
test_pagerank_top_matches_full(void)
{
	PrGraph		g;
	PrError		err;
	PrRunStats	st;
	PrIterOptions o = test_iter_options(1e-13, 1000);
	PrRestart	uniform = {true, 1, NULL, NULL, NULL, 0, NULL, NULL};
	const int64_t ptr[] = {0, 1, 2, 3};
	int32_t		sources[3];
	const double ones[] = {1.0, 1.0, 1.0};
	PrRestart	rwr = {false, 3, ptr, sources, ones, 0, NULL, NULL};
	double	   *pr_full,
			   *rwr_full;
	int			pr_iterations,
				rwr_iterations;

	tied_graph(&g);
	/* node 5 (internal 4) in a cycle: its RWR column is tied on the cycle; two random nodes */
	sources[0] = 4;
	sources[1] = (int32_t) (g.n_nodes / 2);
	sources[2] = (int32_t) (g.n_nodes - 1);
	pr_full = malloc(sizeof(double) * (size_t) g.n_nodes);
	rwr_full = malloc(sizeof(double) * (size_t) g.n_nodes * 3);
	for (int variant = 0; variant < 2; variant++)
	{
		PrEngine   *engine = pr_cpu_engine_create(2, &pr_malloc_allocator, &err);
		PrEngineOps without_top;
		const char *what = variant == 0 ? "engine top_k" : "driver fallback";

		CHECK(engine != NULL && engine->ops->top_k != NULL);
		if (variant == 1)
		{
			without_top = *engine->ops;
			without_top.top_k = NULL;
			engine->ops = &without_top;
		}
		CHECK(pr_pagerank(engine, &g, 0.85, &uniform, &o, pr_full, &st, &err) == PR_OK);
		pr_iterations = st.iterations;
		/* the nine cycle nodes (internal 0..8) tie exactly */
		for (int i = 1; i < 9; i++)
			CHECK(memcmp(&pr_full[i], &pr_full[0], sizeof(double)) == 0);
		check_top_against_full(engine, &g, &uniform, 1, pr_full, pr_iterations, what);
		CHECK(pr_pagerank(engine, &g, 0.85, &rwr, &o, rwr_full, &st, &err) == PR_OK);
		rwr_iterations = st.iterations;
		/* from node 5, the other two cycles are out of reach: what is left of the start, tied */
		for (int i = 1; i < 9; i++)
			if (i < 3 || i > 5)
				CHECK(memcmp(&rwr_full[i * 3], &rwr_full[0], sizeof(double)) == 0);
		CHECK(rwr_full[4 * 3] > rwr_full[0]);
		check_top_against_full(engine, &g, &rwr, 3, rwr_full, rwr_iterations, what);
		engine->ops->release(engine);
	}
	/* with every node asked for, the tied cycle nodes come in id order */
	{
		PrEngine   *engine = pr_cpu_engine_create(1, &pr_malloc_allocator, &err);
		int32_t    *index = malloc(sizeof(int32_t) * (size_t) g.n_nodes);
		double	   *value = malloc(sizeof(double) * (size_t) g.n_nodes);
		int64_t		first = -1;

		CHECK(pr_pagerank_top(engine, &g, 0.85, &uniform, &o, g.n_nodes, index, value, &st,
							  &err) == PR_OK);
		for (int64_t i = 0; i < g.n_nodes && first < 0; i++)
			if (index[i] < 9)
				first = i;
		CHECK(first >= 0 && first + 9 <= g.n_nodes);
		for (int i = 0; first >= 0 && i < 9; i++)
			CHECKF(index[first + i] == i, "position %lld holds %d", (long long) (first + i),
				   (int) index[first + i]);
		engine->ops->release(engine);
		free(index);
		free(value);
	}
	/* bad arguments */
	{
		PrEngine   *engine = pr_cpu_engine_create(1, &pr_malloc_allocator, &err);
		int32_t		index[1];
		double		value[1];

		CHECK(pr_pagerank_top(engine, &g, 0.85, &uniform, &o, 0, index, value, &st, &err) ==
			  PR_ERR_INVALID);
		CHECK(pr_pagerank_top(engine, &g, 0.85, &uniform, &o, 1, NULL, value, &st, &err) ==
			  PR_ERR_INVALID);
		engine->ops->release(engine);
	}
	free(pr_full);
	free(rwr_full);
	pr_graph_free(&g, &pr_malloc_allocator);
}

/*
 * One CPU engine prepared again and again: on the graph it holds with another k and back, then
 * for HITS (other products), then on another graph — every result the same bits as a fresh
 * engine's.
 */
void
test_cpu_prepare_again(void)
{
	EdgeList	e1,
				e2;
	PrGraph		g1,
				g2;
	PrError		err;
	PrRunStats	st;
	PrBuildOptions opt = {false, true, 1, NULL, NULL, NULL};
	PrIterOptions o = test_iter_options(1e-12, 1000);
	PrRestart	uniform = {true, 1, NULL, NULL, NULL, 0, NULL, NULL};
	const int64_t ptr[] = {0, 1, 2, 3, 4};
	const int32_t sources[] = {0, 7, 100, 3000};
	const double ones[] = {1.0, 1.0, 1.0, 1.0};
	PrRestart	rwr = {false, 4, ptr, sources, ones, 0, NULL, NULL};
	PrEngine   *reused = pr_cpu_engine_create(2, &pr_malloc_allocator, &err);
	double	   *a,
			   *b,
			   *h1,
			   *h2;
	size_t		n1,
				n2;

	edges_random(&e1, 60000, 9000, 0, 1, true, 5);
	edges_random(&e2, 50000, 9000, 0, 1, false, 6);
	CHECK(pr_graph_build(e1.src, e1.dst, e1.weight, e1.m, &opt, &pr_malloc_allocator, &g1, &err) == PR_OK);
	CHECK(pr_graph_build(e2.src, e2.dst, NULL, e2.m, &opt, &pr_malloc_allocator, &g2, &err) == PR_OK);
	n1 = (size_t) g1.n_nodes;
	n2 = (size_t) g2.n_nodes;
	a = malloc(sizeof(double) * n1 * 4);
	b = malloc(sizeof(double) * n1 * 4);
	h1 = malloc(sizeof(double) * n1);
	h2 = malloc(sizeof(double) * n1);
	for (int round = 0; round < 2; round++)
	{
		PrEngine   *fresh = pr_cpu_engine_create(2, &pr_malloc_allocator, &err);

		CHECK(pr_pagerank(reused, &g1, 0.85, &uniform, &o, a, &st, &err) == PR_OK);
		CHECK(pr_pagerank(fresh, &g1, 0.85, &uniform, &o, b, &st, &err) == PR_OK);
		CHECKF(memcmp(a, b, sizeof(double) * n1) == 0, "round %d pagerank differs", round);
		CHECK(pr_pagerank(reused, &g1, 0.85, &rwr, &o, a, &st, &err) == PR_OK);
		fresh->ops->release(fresh);
		fresh = pr_cpu_engine_create(2, &pr_malloc_allocator, &err);
		CHECK(pr_pagerank(fresh, &g1, 0.85, &rwr, &o, b, &st, &err) == PR_OK);
		CHECKF(memcmp(a, b, sizeof(double) * n1 * 4) == 0, "round %d rwr differs", round);
		fresh->ops->release(fresh);
	}
	/* other products (HITS), then PageRank again, then another graph */
	{
		PrEngine   *fresh = pr_cpu_engine_create(2, &pr_malloc_allocator, &err);

		CHECK(pr_hits(reused, &g1, &o, a, h1, &st, &err) == PR_OK);
		CHECK(pr_hits(fresh, &g1, &o, b, h2, &st, &err) == PR_OK);
		CHECK(memcmp(a, b, sizeof(double) * n1) == 0 && memcmp(h1, h2, sizeof(double) * n1) == 0);
		CHECK(pr_pagerank(reused, &g1, 0.85, &uniform, &o, a, &st, &err) == PR_OK);
		CHECK(pr_pagerank(fresh, &g1, 0.85, &uniform, &o, b, &st, &err) == PR_OK);
		CHECK(memcmp(a, b, sizeof(double) * n1) == 0);
		fresh->ops->release(fresh);
		fresh = pr_cpu_engine_create(2, &pr_malloc_allocator, &err);
		CHECK(n2 <= n1);
		CHECK(pr_pagerank(reused, &g2, 0.85, &uniform, &o, a, &st, &err) == PR_OK);
		CHECK(pr_pagerank(fresh, &g2, 0.85, &uniform, &o, b, &st, &err) == PR_OK);
		CHECK(memcmp(a, b, sizeof(double) * n2) == 0);
		fresh->ops->release(fresh);
	}
	reused->ops->release(reused);
	free(a);
	free(b);
	free(h1);
	free(h2);
	pr_graph_free(&g1, &pr_malloc_allocator);
	pr_graph_free(&g2, &pr_malloc_allocator);
	edges_free(&e1);
	edges_free(&e2);
}

/*
 * CPU engines given a graph's length-sorted rows (pr_cpu_sorted_rows_write into memory of the
 * test's own) rank it to the same bits as an engine that sorts for itself, weighted and not; the
 * rows are the graph's in-rows by descending length, each row's edges in order; rows of another
 * graph are not taken.
 */
void
test_cpu_given_sorted_rows(void)
{
	PrBuildOptions opt = {false, true, 1, NULL, NULL, NULL};
	PrIterOptions o = test_iter_options(1e-12, 1000);
	PrRestart	uniform = {true, 1, NULL, NULL, NULL, 0, NULL, NULL};
	PrError		err;
	PrRunStats	st;

	for (int weighted = 0; weighted < 2; weighted++)
	{
		EdgeList	edges,
					other_edges;
		PrGraph		g,
					other;
		PrSortedRows rows;
		void	   *layout;
		double	   *own,
				   *given;
		PrEngine   *sorting = pr_cpu_engine_create(2, &pr_malloc_allocator, &err);
		PrEngine   *borrowing = pr_cpu_engine_create(2, &pr_malloc_allocator, &err);
		bool		sorted = true;

		edges_random(&edges, 80000, 12000, 0, 1, weighted == 1, 11 + weighted);
		edges_random(&other_edges, 70000, 12000, 0, 1, weighted == 1, 21 + weighted);
		CHECK(pr_graph_build(edges.src, edges.dst, edges.weight, edges.m, &opt,
							 &pr_malloc_allocator, &g, &err) == PR_OK);
		CHECK(pr_graph_build(other_edges.src, other_edges.dst, other_edges.weight, other_edges.m,
							 &opt, &pr_malloc_allocator, &other, &err) == PR_OK);
		layout = malloc(pr_cpu_sorted_rows_bytes(&g));
		CHECK(pr_cpu_sorted_rows_write(&g, layout, &pr_malloc_allocator, &rows));
		CHECK(rows.n_nodes == g.n_nodes && rows.n_edges == g.n_edges &&
			  (rows.weight != NULL) == (weighted == 1) && rows.ptr[g.n_nodes] == g.n_edges);
		for (int64_t p = 0; p < g.n_nodes && sorted; p++)
		{
			int32_t		v = rows.row_order[p];
			int64_t		len = g.in_ptr[v + 1] - g.in_ptr[v];

			sorted = rows.ptr[p + 1] - rows.ptr[p] == len &&
				memcmp(rows.src + rows.ptr[p], g.in_src + g.in_ptr[v], len * sizeof(int32_t)) == 0 &&
				(p == 0 || rows.ptr[p] - rows.ptr[p - 1] > len ||
				 (rows.ptr[p] - rows.ptr[p - 1] == len && rows.row_order[p - 1] < v));
		}
		CHECKF(sorted, "weighted %d: rows not sorted by length", weighted);
		own = malloc(sizeof(double) * (size_t) g.n_nodes);
		given = malloc(sizeof(double) * (size_t) g.n_nodes);
		pr_cpu_engine_use_sorted_rows(borrowing, &rows);
		CHECK(pr_pagerank(sorting, &g, 0.85, &uniform, &o, own, &st, &err) == PR_OK);
		CHECK(pr_pagerank(borrowing, &g, 0.85, &uniform, &o, given, &st, &err) == PR_OK);
		CHECKF(memcmp(own, given, sizeof(double) * (size_t) g.n_nodes) == 0,
			   "weighted %d: given rows rank otherwise", weighted);
		/* read in place: rows changed under the engine change its products */
		{
			PrEngine   *reading = pr_cpu_engine_create(2, &pr_malloc_allocator, &err);

			memset((char *) layout + ((const char *) rows.src - (const char *) layout), 0,
				   sizeof(int32_t) * (size_t) g.n_edges);
			pr_cpu_engine_use_sorted_rows(reading, &rows);
			CHECK(pr_pagerank(reading, &g, 0.85, &uniform, &o, given, &st, &err) == PR_OK);
			CHECKF(memcmp(own, given, sizeof(double) * (size_t) g.n_nodes) != 0,
				   "weighted %d: the given rows were not read", weighted);
			reading->ops->release(reading);
		}
		/* another graph: the given rows do not fit, the engine sorts for itself */
		CHECK(pr_pagerank(sorting, &other, 0.85, &uniform, &o, own, &st, &err) == PR_OK);
		CHECK(pr_pagerank(borrowing, &other, 0.85, &uniform, &o, given, &st, &err) == PR_OK);
		CHECKF(memcmp(own, given, sizeof(double) * (size_t) other.n_nodes) == 0,
			   "weighted %d: another graph ranks otherwise", weighted);
		sorting->ops->release(sorting);
		borrowing->ops->release(borrowing);
		free(layout);
		free(own);
		free(given);
		pr_graph_free(&g, &pr_malloc_allocator);
		pr_graph_free(&other, &pr_malloc_allocator);
		edges_free(&edges);
		edges_free(&other_edges);
	}
}

/*
 * A CPU engine over a renumbered graph (pr_graph_renumber, pr_cpu_sorted_rows_renumber) gives the
 * products of the graph bit for bit (the same numbering into the caller's memory,
 * pr_graph_renumber_over and pr_cpu_sorted_rows_renumber_at, gives the same arrays); as a part (pr_cpu_engine_own_part) it updates its owned rows
 * as the whole graph's engine does when given the whole graph's dangling sums, refuses an update
 * without them, combines, dots and sums its owned rows only, and normalises them by the column
 * sums given (refusing to without them).
 */
void
test_cpu_renumbered_part(void)
{
	PrBuildOptions opt = {false, true, 1, NULL, NULL, NULL};
	PrRestart	uniform = {true, 1, NULL, NULL, NULL, 0, NULL, NULL};
	PrError		err;

	for (int weighted = 0; weighted < 2; weighted++)
	{
		EdgeList	edges;
		PrGraph		g,
					h;
		PrSortedRows rows,
					renumbered;
		void	   *layout;
		PrEngine   *whole = pr_cpu_engine_create(2, &pr_malloc_allocator, &err);
		PrEngine   *part = pr_cpu_engine_create(2, &pr_malloc_allocator, &err);
		int64_t		n,
					owned;
		int32_t    *new_to_old,
				   *old_to_new;
		double	   *x,
				   *hx,
				   *y,
				   *hy,
					sums,
					dangling,
					dots[2],
					expect[2] = {0.0, 0.0},
					coef[2] = {2.0, -1.0};
		bool		same = true;
		int			slots[2] = {1, 0};

		edges_random(&edges, 90000, 12000, 0, 1, weighted == 1, 31 + weighted);
		CHECK(pr_graph_build(edges.src, edges.dst, edges.weight, edges.m, &opt,
							 &pr_malloc_allocator, &g, &err) == PR_OK);
		n = g.n_nodes;
		owned = n / 3;
		new_to_old = malloc(sizeof(int32_t) * (size_t) n);
		old_to_new = malloc(sizeof(int32_t) * (size_t) n);
		/* every third node first, then the others, each ascending */
		for (int64_t v = 0, at = 0; at < n; v++)
		{
			int64_t		old = v < owned ? 3 * v + 1 : -1;

			if (old < 0)
			{
				for (int64_t u = 0; u < n; u++)
					if (u % 3 != 1 || (u - 1) / 3 >= owned)
						new_to_old[at++] = (int32_t) u;
				break;
			}
			new_to_old[at++] = (int32_t) old;
		}
		for (int64_t i = 0; i < n; i++)
			old_to_new[new_to_old[i]] = (int32_t) i;
		CHECK(pr_graph_renumber(&g, new_to_old, old_to_new, pr_cpu_reads_in_edges(n, 1, PR_NEED_PULL_NORMALIZED),
								&pr_malloc_allocator, &h, &err) == PR_OK);
		CHECK(h.in_src == NULL && h.in_ptr[n] == g.n_edges);
		CHECK(h.n_dangling == g.n_dangling);
		layout = malloc(pr_cpu_sorted_rows_bytes(&g));
		CHECK(pr_cpu_sorted_rows_write(&g, layout, &pr_malloc_allocator, &rows));
		CHECK(pr_cpu_sorted_rows_renumber(&rows, old_to_new, &pr_malloc_allocator, &renumbered));
		pr_cpu_engine_use_sorted_rows(part, &renumbered);
		x = malloc(sizeof(double) * (size_t) n);
		hx = malloc(sizeof(double) * (size_t) n);
		y = malloc(sizeof(double) * (size_t) n);
		hy = malloc(sizeof(double) * (size_t) n);
		for (int64_t v = 0; v < n; v++)
		{
			x[v] = (double) ((v * 7919) % 1000 + 1) / (1000.0 * (double) n);
			hx[old_to_new[v]] = x[v];
		}
		CHECK(whole->ops->prepare(whole, &g, 1, 2, PR_NEED_PULL_NORMALIZED, &err) == PR_OK);
		CHECK(part->ops->prepare(part, &h, 1, 2, PR_NEED_PULL_NORMALIZED, &err) == PR_OK);
		CHECK(whole->ops->upload(whole, 0, x, &err) == PR_OK &&
			  whole->ops->product(whole, PR_PRODUCT_PULL_NORMALIZED, 0, 1, &err) == PR_OK &&
			  whole->ops->download(whole, 1, y, &err) == PR_OK);
		CHECK(part->ops->upload(part, 0, hx, &err) == PR_OK &&
			  part->ops->product(part, PR_PRODUCT_PULL_NORMALIZED, 0, 1, &err) == PR_OK &&
			  part->ops->download(part, 1, hy, &err) == PR_OK);
		for (int64_t v = 0; v < n; v++)
			same = same && memcmp(&y[v], &hy[old_to_new[v]], sizeof(double)) == 0;
		CHECKF(same, "weighted %d: the renumbered graph's product differs", weighted);

		/* the update of the owned rows, given the whole graph's dangling sums */
		CHECK(whole->ops->column_sums(whole, 0, &sums, &dangling, &err) == PR_OK);
		CHECK(pr_cpu_engine_own_part(part, owned, &err) == PR_OK);
		CHECKF(part->ops->pagerank_update(part, 1, 0, 0.85, &uniform, &err) == PR_ERR_INVALID,
			   "weighted %d: an update without the dangling sums ran", weighted);
		CHECK(whole->ops->pagerank_update(whole, 1, 0, 0.85, &uniform, &err) == PR_OK &&
			  whole->ops->download(whole, 1, y, &err) == PR_OK);
		pr_cpu_engine_give_dangling(part, (double) n, &dangling);
		CHECK(part->ops->pagerank_update(part, 1, 0, 0.85, &uniform, &err) == PR_OK &&
			  part->ops->download(part, 1, hy, &err) == PR_OK);
		same = true;
		for (int64_t i = 0; i < owned; i++)
			same = same && memcmp(&y[new_to_old[i]], &hy[i], sizeof(double)) == 0;
		CHECKF(same, "weighted %d: the part's update differs on its owned rows", weighted);

		/* combinations and dot products of the owned rows only */
		CHECK(part->ops->dots(part, 1, 2, slots, dots, &err) == PR_OK);
		for (int64_t i = 0; i < owned; i++)
		{
			expect[0] += hy[i] * hy[i];
			expect[1] += hy[i] * hx[i];
		}
		CHECKF(fabs(dots[0] - expect[0]) <= 1e-12 * expect[0] &&
			   fabs(dots[1] - expect[1]) <= 1e-12 * expect[1],
			   "weighted %d: dots %g %g, owned rows' %g %g", weighted, dots[0], dots[1],
			   expect[0], expect[1]);
		CHECK(part->ops->combine(part, 0, 2, slots, coef, &err) == PR_OK &&
			  part->ops->download(part, 0, y, &err) == PR_OK);
		same = true;
		for (int64_t i = 0; i < n; i++)
			same = same && y[i] == (i < owned ? 2.0 * hy[i] - hx[i] : hx[i]);
		CHECKF(same, "weighted %d: the combination went beyond the owned rows", weighted);

		/* column sums of the owned rows; HITS's normalisation of them by the sums given */
		{
			double		owned_sums,
						owned_dangling,
						expect_sum = 0.0,
						expect_l1 = 0.0,
						given = 4.0;
			double	   *z = malloc(sizeof(double) * (size_t) n);
			PrResidual	res;

			CHECK(part->ops->column_sums(part, 0, &owned_sums, &owned_dangling, &err) == PR_OK);
			for (int64_t i = 0; i < owned; i++)
			{
				expect_sum += y[i];
				expect_l1 += fabs(y[i] / given - hy[i]);
			}
			CHECKF(fabs(owned_sums - expect_sum) <= 1e-12 * fabs(expect_sum),
				   "weighted %d: column sum %g, owned rows' %g", weighted, owned_sums, expect_sum);
			CHECKF(part->ops->normalize(part, 0, 1, &err) == PR_ERR_INVALID,
				   "weighted %d: a normalisation without the column sums ran", weighted);
			pr_cpu_engine_give_sums(part, &given);
			CHECK(part->ops->normalize(part, 0, 1, &err) == PR_OK &&
				  part->ops->residual(part, &res, &err) == PR_OK &&
				  part->ops->download(part, 0, z, &err) == PR_OK);
			same = true;
			for (int64_t i = 0; i < n; i++)
				same = same && z[i] == (i < owned ? y[i] / given : y[i]);
			CHECKF(same, "weighted %d: the normalisation went beyond the owned rows", weighted);
			CHECKF(fabs(res.l1 - expect_l1) <= 1e-12 * expect_l1,
				   "weighted %d: residual %g, owned rows' %g", weighted, res.l1, expect_l1);
			free(z);
		}

		/* the same numbering into memory of the caller's, as a shared segment keeps it */
		{
			int64_t    *in_ptr = malloc(sizeof(int64_t) * (size_t) (n + 1));
			int32_t    *row_order = malloc(sizeof(int32_t) * (size_t) n);
			int32_t    *src = malloc(sizeof(int32_t) * (size_t) g.n_edges);
			PrGraph		over;
			PrSortedRows at;

			pr_graph_renumber_row_pointers(&g, new_to_old, in_ptr);
			CHECK(pr_graph_renumber_over(&g, new_to_old, in_ptr, &pr_malloc_allocator, &over,
										 &err) == PR_OK);
			pr_cpu_sorted_rows_renumber_at(&rows, old_to_new, row_order, src, &at);
			CHECKF(over.in_ptr == in_ptr && over.in_src == NULL && over.weighted == h.weighted &&
				   memcmp(in_ptr, h.in_ptr, sizeof(int64_t) * (size_t) (n + 1)) == 0 &&
				   memcmp(over.out_strength, h.out_strength, sizeof(double) * (size_t) n) == 0 &&
				   over.n_dangling == h.n_dangling &&
				   memcmp(over.dangling, h.dangling, sizeof(int32_t) * (size_t) h.n_dangling) == 0,
				   "weighted %d: the graph renumbered over given row pointers differs", weighted);
			CHECKF(at.row_order == row_order && at.src == src && at.ptr == rows.ptr &&
				   at.weight == rows.weight &&
				   memcmp(row_order, renumbered.row_order, sizeof(int32_t) * (size_t) n) == 0 &&
				   memcmp(src, renumbered.src, sizeof(int32_t) * (size_t) g.n_edges) == 0,
				   "weighted %d: the sorted rows renumbered in place differ", weighted);
			over.in_ptr = NULL;
			pr_graph_free(&over, &pr_malloc_allocator);
			free(in_ptr);
			free(row_order);
			free(src);
		}

		whole->ops->release(whole);
		part->ops->release(part);
		free((void *) renumbered.row_order);
		free((void *) renumbered.src);
		free(layout);
		free(new_to_old);
		free(old_to_new);
		free(x);
		free(hx);
		free(y);
		free(hy);
		pr_graph_free(&g, &pr_malloc_allocator);
		pr_graph_free(&h, &pr_malloc_allocator);
		edges_free(&edges);
	}
}
