/*
 * test_change.c — two graphs of one table compared (pr_graph_change.c): the node map, the count
 * of changed edges (hand-counted, and against a brute-force multiset count on random graphs) and
 * scores carried to the newer graph's nodes.
 */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Builds g from rows (weights may be NULL). */
static void
build(PrGraph *g, const int64_t *src, const int64_t *dst, const double *w, size_t m)
{
	PrError		err;

	CHECK(pr_graph_build(src, dst, w, m, NULL, &pr_malloc_allocator, g, &err) == PR_OK);
}

/* Rows removed, added, re-weighted and nodes gone and new, counted by hand. */
void
test_change_hand(void)
{
	/* older: 1->2, 1->3, 2->3, 3->1, 4->1 (w 1, 2, 3, 4, 5) */
	const int64_t s1[] = {1, 1, 2, 3, 4};
	const int64_t d1[] = {2, 3, 3, 1, 1};
	const double w1[] = {1, 2, 3, 4, 5};
	/* newer: 4 gone (4->1 removed), 1->3 re-weighted, 5->2 and 2->3 again added */
	const int64_t s2[] = {1, 1, 2, 3, 5, 2};
	const int64_t d2[] = {2, 3, 3, 1, 2, 3};
	const double w2[] = {1, 7, 3, 4, 1, 3};
	const int32_t expect_map[] = {0, 1, 2, -1};
	PrGraph		older,
				newer;
	int32_t		map[4];
	double		scores[] = {0.4, 0.3, 0.2, 0.1};
	double		start[4];

	build(&older, s1, d1, w1, 5);
	build(&newer, s2, d2, w2, 6);
	pr_graph_node_map(&older, &newer, map);
	CHECK(memcmp(map, expect_map, sizeof(map)) == 0);
	/* 4->1 removed (1), 1->3 re-weighted (2), 5->2 added (1), a second 2->3 added (1) */
	CHECKF(pr_graph_changed_edges(&older, &newer, map, 100, 1, &pr_malloc_allocator) == 5,
		   "changed %lld", (long long) pr_graph_changed_edges(&older, &newer, map, 100, 1,
															  &pr_malloc_allocator));
	CHECK(pr_graph_changed_edges(&older, &newer, map, 100, 4, &pr_malloc_allocator) == 5);
	/* past the limit: some count above it */
	CHECK(pr_graph_changed_edges(&older, &newer, map, 0, 1, &pr_malloc_allocator) > 0);
	/* a graph against itself: nothing changed */
	{
		int32_t		self[4];

		pr_graph_node_map(&older, &older, self);
		CHECK(pr_graph_changed_edges(&older, &older, self, 0, 2, &pr_malloc_allocator) == 0);
	}
	/*
	 * carried: nodes 1, 2, 3 keep 0.4, 0.3, 0.2, node 5 (new) starts at 1/4; sum 1.15, so
	 * 0.4/1.15, 0.3/1.15, 0.2/1.15, 0.25/1.15
	 */
	CHECK(pr_graph_carry_scores(&older, scores, map, &newer, start));
	CHECK(fabs(start[0] - 0.4 / 1.15) < 1e-15 && fabs(start[1] - 0.3 / 1.15) < 1e-15 &&
		  fabs(start[2] - 0.2 / 1.15) < 1e-15 && fabs(start[3] - 0.25 / 1.15) < 1e-15);
	scores[1] = NAN;
	CHECK(!pr_graph_carry_scores(&older, scores, map, &newer, start));
	pr_graph_free(&older, &pr_malloc_allocator);
	pr_graph_free(&newer, &pr_malloc_allocator);
}

/* Compares two (src, dst) rows for qsort. */
static int
compare_rows(const void *a, const void *b)
{
	const int64_t *x = a,
			   *y = b;

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	if (x[1] != y[1])
		return x[1] < y[1] ? -1 : 1;
	return 0;
}

/* Multiset symmetric difference of two edge lists, by sorting both (independent of the core). */
static int64_t
reference_changed(const EdgeList *a, const EdgeList *b)
{
	int64_t    *ra = malloc(a->m * 2 * sizeof(int64_t));
	int64_t    *rb = malloc(b->m * 2 * sizeof(int64_t));
	size_t		i = 0,
				j = 0;
	int64_t		changed = 0;

	for (size_t e = 0; e < a->m; e++)
	{
		ra[2 * e] = a->src[e];
		ra[2 * e + 1] = a->dst[e];
	}
	for (size_t e = 0; e < b->m; e++)
	{
		rb[2 * e] = b->src[e];
		rb[2 * e + 1] = b->dst[e];
	}
	qsort(ra, a->m, 2 * sizeof(int64_t), compare_rows);
	qsort(rb, b->m, 2 * sizeof(int64_t), compare_rows);
	while (i < a->m && j < b->m)
	{
		int			c = compare_rows(ra + 2 * i, rb + 2 * j);

		if (c < 0)
			i++, changed++;
		else if (c > 0)
			j++, changed++;
		else
			i++, j++;
	}
	changed += (int64_t) (a->m - i) + (int64_t) (b->m - j);
	free(ra);
	free(rb);
	return changed;
}

/* Random graphs and random edits of them: the count equals the brute-force one, any threads. */
void
test_change_random_vs_reference(void)
{
	uint64_t	state = 42;

	for (int round = 0; round < 6; round++)
	{
		EdgeList	a,
					b;
		PrGraph		ga,
					gb;
		int32_t    *map;
		size_t		keep;

		edges_random(&a, 3000, 500, -200, 3, false, 100 + round);
		/* b: a's rows with some dropped, some ends moved, some added */
		b.m = a.m + 40;
		b.src = malloc(b.m * sizeof(int64_t));
		b.dst = malloc(b.m * sizeof(int64_t));
		b.weight = NULL;
		keep = 0;
		for (size_t e = 0; e < a.m; e++)
		{
			uint64_t	r = test_rand(&state) % 100;

			if (r < 3)
				continue;		/* dropped */
			b.src[keep] = a.src[e];
			b.dst[keep] = r < 6 ? a.dst[e] + 3 * (int64_t) (test_rand(&state) % 7) : a.dst[e];
			keep++;
		}
		for (int e = 0; e < 40; e++, keep++)
		{
			b.src[keep] = 5000 + (int64_t) (test_rand(&state) % 50);	/* new nodes too */
			b.dst[keep] = -200 + 3 * (int64_t) (test_rand(&state) % 500);
		}
		b.m = keep;
		build(&ga, a.src, a.dst, NULL, a.m);
		build(&gb, b.src, b.dst, NULL, b.m);
		map = malloc(ga.n_nodes * sizeof(int32_t));
		pr_graph_node_map(&ga, &gb, map);
		{
			int64_t		expect = reference_changed(&a, &b);

			for (int threads = 1; threads <= 5; threads += 2)
				CHECKF(pr_graph_changed_edges(&ga, &gb, map, INT64_MAX, threads,
											  &pr_malloc_allocator) == expect,
					   "round %d, %d threads: expected %lld", round, threads, (long long) expect);
			CHECK(pr_graph_changed_edges(&ga, &gb, map, expect - 1, 3, &pr_malloc_allocator) >
				  expect - 1);
		}
		free(map);
		pr_graph_free(&ga, &pr_malloc_allocator);
		pr_graph_free(&gb, &pr_malloc_allocator);
		edges_free(&a);
		edges_free(&b);
	}
}

/* PageRank (damping 0.85) of g from start (NULL: 1/N) to tolerance in norm; scores into x. */
static PrRunStats
rank_from(const PrGraph *g, const double *start, PrNorm norm, double tolerance, double *x)
{
	PrRestart	uniform = {true, 1, NULL, NULL, NULL, 0, NULL, NULL};
	PrIterOptions o = test_iter_options(tolerance, 1000);
	PrRunStats	st;
	PrError		err;
	PrEngine   *engine = pr_cpu_engine_create(2, &pr_malloc_allocator, &err);

	o.norm = norm;
	o.initial = start;
	CHECK(engine != NULL && pr_pagerank(engine, g, 0.85, &uniform, &o, x, &st, &err) == PR_OK);
	CHECK(st.converged);
	engine->ops->release(engine);
	return st;
}

/*
 * The automatic warm start after a small change, as the graph cache does it: soc-Slashdot0902
 * ranked at the default tolerance, 0.1% of its edges deleted, the scores carried to the new graph
 * and used as its start.  Under every stopping norm the answer is no farther (L1) from the exact
 * one (a 1e-13 solve) than the run from 1/N at the same tolerance (pr_driver.h, "Stopping"): in
 * fewer iterations under the L1 norms; under linf, whose threshold the run from 1/N meets early,
 * in at most 4 more.
 */
void
test_change_warm_start_accuracy(void)
{
	const struct
	{
		PrNorm		norm;
		double		tolerance;
	}			cases[] = {
		{PR_NORM_L1, 1e-4}, {PR_NORM_L1, 1e-6}, {PR_NORM_L1, 1e-8}, {PR_NORM_L1_SCALED, 1e-8},
		{PR_NORM_L1_SCALED, 1e-10}, {PR_NORM_LINF, 1e-6}, {PR_NORM_LINF, 1e-8}
	};
	char		path[512];
	EdgeList	e;
	PrGraph		older,
				newer;
	int32_t    *map;
	double	   *old_scores,
			   *start,
			   *exact,
			   *cold,
			   *warm;
	size_t		kept = 0;

	if (test_data_path("soc-slashdot0902.tsv.gz", path, sizeof(path)) == NULL)
	{
		CHECKF(false, "soc-slashdot0902.tsv.gz not found");
		return;
	}
	CHECK(edges_read_tsv(path, &e) && e.m > 0);
	build(&older, e.src, e.dst, NULL, e.m);
	for (size_t i = 0; i < e.m; i++)
		if (i % 1000 != 999)
		{
			e.src[kept] = e.src[i];
			e.dst[kept] = e.dst[i];
			kept++;
		}
	build(&newer, e.src, e.dst, NULL, kept);
	map = malloc(sizeof(int32_t) * (size_t) older.n_nodes);
	old_scores = malloc(sizeof(double) * (size_t) older.n_nodes);
	start = malloc(sizeof(double) * 4 * (size_t) newer.n_nodes);	/* and exact, cold, warm */
	exact = start + newer.n_nodes;
	cold = exact + newer.n_nodes;
	warm = cold + newer.n_nodes;
	(void) rank_from(&older, NULL, PR_NORM_L1, 1e-6, old_scores);
	pr_graph_node_map(&older, &newer, map);
	CHECK(pr_graph_carry_scores(&older, old_scores, map, &newer, start));
	(void) rank_from(&newer, NULL, PR_NORM_L1, 1e-13, exact);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
	{
		PrRunStats	st_cold = rank_from(&newer, NULL, cases[c].norm, cases[c].tolerance, cold);
		PrRunStats	st_warm = rank_from(&newer, start, cases[c].norm, cases[c].tolerance, warm);
		double		error_cold = l1_distance(cold, exact, (size_t) newer.n_nodes);
		double		error_warm = l1_distance(warm, exact, (size_t) newer.n_nodes);

		printf("  %s %g: from 1/N %d iterations, L1 error %.3g; from the carried scores %d, %.3g\n",
			   pr_norm_name(cases[c].norm), cases[c].tolerance, st_cold.iterations, error_cold,
			   st_warm.iterations, error_warm);
		CHECKF(error_warm <= error_cold, "%s %g: error %g from the carried scores, %g from 1/N",
			   pr_norm_name(cases[c].norm), cases[c].tolerance, error_warm, error_cold);
		if (cases[c].norm == PR_NORM_LINF)
			CHECK(st_warm.iterations <= st_cold.iterations + 4);
		else
			CHECK(st_warm.iterations < st_cold.iterations);
	}
	free(map);
	free(old_scores);
	free(start);
	pr_graph_free(&older, &pr_malloc_allocator);
	pr_graph_free(&newer, &pr_malloc_allocator);
	edges_free(&e);
}
