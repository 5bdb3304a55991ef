/*
 * test_graph.c — graph build (ids, CSR, parallel edges, self-loops, undirected, dangling, weight
 * validation), pr_graph_find and pr_graph_add_out_edges, on hand-checked graphs and random ones.
 */
#include "test_util.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The hand-checked directed graph used by several cases (ids 10..50; 40->30 twice; 30->30). */
static const int64_t hand_src[] = {10, 10, 20, 30, 40, 40, 30, 20};
static const int64_t hand_dst[] = {20, 30, 30, 10, 30, 30, 30, 50};
static const double hand_w[] = {1, 2, 3, 4, 0.5, 0.25, 5, 6};

/* Compares an int64 array with expected values. */
static bool
same_i64(const int64_t *a, const int64_t *b, size_t n)
{
	return n == 0 || memcmp(a, b, n * sizeof(int64_t)) == 0;
}

/* Compares an int32 array with expected values. */
static bool
same_i32(const int32_t *a, const int32_t *b, size_t n)
{
	return n == 0 || memcmp(a, b, n * sizeof(int32_t)) == 0;
}

/* Compares a double array with expected values exactly. */
static bool
same_f64(const double *a, const double *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

/* Ids, in-CSR, out-CSR, strengths and dangling of the hand graph, unweighted. */
void
test_build_hand_unweighted(void)
{
	PrBuildOptions opt = {false, true, 1, NULL, NULL, NULL};
	PrGraph		g;
	PrError		err;
	const int64_t ids[] = {10, 20, 30, 40, 50};
	const int64_t in_ptr[] = {0, 1, 2, 7, 7, 8};
	const int32_t in_src[] = {2, 0, 0, 1, 2, 3, 3, 1};
	const int64_t out_ptr[] = {0, 2, 4, 6, 8, 8};
	const int32_t out_dst[] = {1, 2, 2, 4, 0, 2, 2, 2};
	const double strength[] = {2, 2, 2, 2, 0};
	const int32_t dangling[] = {4};

	CHECK(pr_graph_build(hand_src, hand_dst, NULL, 8, &opt, &pr_malloc_allocator, &g, &err) == PR_OK);
	CHECK(g.n_nodes == 5 && g.n_edges == 8 && !g.weighted && g.has_out_edges);
	CHECK(same_i64(g.node_ids, ids, 5));
	CHECK(same_i64(g.in_ptr, in_ptr, 6));
	CHECK(same_i32(g.in_src, in_src, 8));
	CHECK(g.in_weight == NULL && g.out_weight == NULL);
	CHECK(same_i64(g.out_ptr, out_ptr, 6));
	CHECK(same_i32(g.out_dst, out_dst, 8));
	CHECK(same_f64(g.out_strength, strength, 5));
	CHECK(g.n_dangling == 1 && same_i32(g.dangling, dangling, 1));
	pr_graph_free(&g, &pr_malloc_allocator);
	CHECK(g.n_nodes == 0 && g.in_ptr == NULL);
}

/* Weights follow their edges; parallel edges keep both weights, the smaller first whatever the
 * input order; strengths add them. */
void
test_build_hand_weighted(void)
{
	PrBuildOptions opt = {false, false, 1, NULL, NULL, NULL};
	PrGraph		g;
	PrError		err;
	const double in_w[] = {4, 1, 2, 3, 5, 0.25, 0.5, 6};
	const double strength[] = {3, 9, 9, 0.75, 0};
	const double out_w[] = {1, 2, 3, 6, 4, 5, 0.25, 0.5};

	CHECK(pr_graph_build(hand_src, hand_dst, hand_w, 8, &opt, &pr_malloc_allocator, &g, &err) == PR_OK);
	CHECK(g.weighted && !g.has_out_edges && g.out_ptr == NULL);
	CHECK(same_f64(g.in_weight, in_w, 8));
	CHECK(same_f64(g.out_strength, strength, 5));
	CHECK(pr_graph_add_out_edges(&g, 1, &pr_malloc_allocator, &err) == PR_OK);
	CHECK(g.has_out_edges && same_f64(g.out_weight, out_w, 8));
	pr_graph_free(&g, &pr_malloc_allocator);
}

/*
 * Parallel edges whose sum depends on the order of addition (1e16 + 1 + 1 rounds to 1e16 one way,
 * to 1e16 + 2 the other) give the same arrays, bit for bit, whatever the order of the input rows.
 */
void
test_build_parallel_edges_row_order(void)
{
	const int64_t src[] = {1, 1, 2, 1};
	const int64_t dst[] = {2, 2, 1, 2};
	const double w_one[] = {1e16, 1, 1, 1};
	const double w_other[] = {1, 1, 1, 1e16};
	PrBuildOptions opt = {false, true, 1, NULL, NULL, NULL};
	PrGraph		a,
				b;
	PrError		err;

	CHECK(pr_graph_build(src, dst, w_one, 4, &opt, &pr_malloc_allocator, &a, &err) == PR_OK);
	CHECK(pr_graph_build(src, dst, w_other, 4, &opt, &pr_malloc_allocator, &b, &err) == PR_OK);
	CHECK(a.n_edges == 4 && b.n_edges == 4);
	CHECK(same_f64(a.in_weight, b.in_weight, 4) && same_f64(a.out_weight, b.out_weight, 4));
	CHECKF(same_f64(a.out_strength, b.out_strength, 2), "strengths %.17g / %.17g",
		   a.out_strength[0], b.out_strength[0]);
	pr_graph_free(&a, &pr_malloc_allocator);
	pr_graph_free(&b, &pr_malloc_allocator);
}

/* A zero-weight node is dangling even though it has edges. */
void
test_build_zero_weight_dangling(void)
{
	const int64_t s[] = {1, 1, 2};
	const int64_t d[] = {2, 3, 1};
	const double w[] = {0, 0, 1};
	PrGraph		g;
	PrError		err;

	CHECK(pr_graph_build(s, d, w, 3, NULL, &pr_malloc_allocator, &g, &err) == PR_OK);
	CHECK(g.n_nodes == 3 && g.n_dangling == 2);
	CHECK(g.dangling[0] == 0 && g.dangling[1] == 2);
	CHECK(g.out_strength[0] == 0.0 && g.out_strength[1] == 1.0);
	pr_graph_free(&g, &pr_malloc_allocator);
}

/* Undirected: both directions of each row, a self-loop once. */
void
test_build_undirected(void)
{
	const int64_t s[] = {1, 2, 3, 3};
	const int64_t d[] = {2, 3, 3, 1};
	PrBuildOptions opt = {true, true, 1, NULL, NULL, NULL};
	PrGraph		g;
	PrError		err;
	const int64_t in_ptr[] = {0, 2, 4, 7};
	const int32_t in_src[] = {1, 2, 0, 2, 0, 1, 2};
	const double strength[] = {2, 2, 3};

	CHECK(pr_graph_build(s, d, NULL, 4, &opt, &pr_malloc_allocator, &g, &err) == PR_OK);
	CHECK(g.n_nodes == 3 && g.n_edges == 7 && g.n_dangling == 0);
	CHECK(same_i64(g.in_ptr, in_ptr, 4));
	CHECK(same_i32(g.in_src, in_src, 7));
	CHECK(same_i64(g.out_ptr, in_ptr, 4));	/* symmetric */
	CHECK(same_i32(g.out_dst, in_src, 7));
	CHECK(same_f64(g.out_strength, strength, 3));
	pr_graph_free(&g, &pr_malloc_allocator);
}

/* Negative, huge and sparse ids map in ascending order (the sorted id-map path). */
void
test_build_sparse_ids(void)
{
	const int64_t s[] = {INT64_MAX, -5, INT64_MIN, 1000000000000LL, -5};
	const int64_t d[] = {-5, INT64_MIN, 7, INT64_MAX, 7};
	const int64_t ids[] = {INT64_MIN, -5, 7, 1000000000000LL, INT64_MAX};
	PrGraph		g;
	PrError		err;

	CHECK(pr_graph_build(s, d, NULL, 5, NULL, &pr_malloc_allocator, &g, &err) == PR_OK);
	CHECK(g.n_nodes == 5 && same_i64(g.node_ids, ids, 5));
	CHECK(pr_graph_find(&g, INT64_MIN) == 0);
	CHECK(pr_graph_find(&g, 7) == 2);
	CHECK(pr_graph_find(&g, INT64_MAX) == 4);
	CHECK(pr_graph_find(&g, 8) == -1);
	CHECK(pr_graph_find(&g, -6) == -1);
	/* in-row of node 2 (id 7): sources INT64_MIN (0) and -5 (1) */
	CHECK(g.in_ptr[3] - g.in_ptr[2] == 2 && g.in_src[g.in_ptr[2]] == 0 && g.in_src[g.in_ptr[2] + 1] == 1);
	pr_graph_free(&g, &pr_malloc_allocator);
}

/* The dense and the sorted id maps agree with a qsort reference on random graphs. */
void
test_build_random_vs_reference(void)
{
	/* stride 1: dense table; stride 2^40+1: sorted path */
	const int64_t strides[] = {1, (INT64_C(1) << 40) + 1};

	for (int s = 0; s < 2; s++)
	{
		EdgeList	e;
		PrBuildOptions opt = {false, true, 1, NULL, NULL, NULL};
		PrGraph		g;
		PrError		err;
		int64_t    *ids;
		int64_t		n;
		double	   *W;
		bool		ok = true;

		edges_random(&e, 3000, 400, -1000, strides[s], true, 42 + s);
		n = reference_node_ids(&e, &ids);
		CHECK(pr_graph_build(e.src, e.dst, e.weight, e.m, &opt, &pr_malloc_allocator, &g, &err) == PR_OK);
		CHECK(g.n_nodes == n && g.n_edges == 3000);
		CHECK(same_i64(g.node_ids, ids, (size_t) n));
		/* CSR rows re-summed into a dense matrix equal the reference adjacency */
		W = reference_dense_adjacency(&e, false, ids, n);
		{
			double	   *Wg = calloc((size_t) (n * n), sizeof(double));
			double	   *Wo = calloc((size_t) (n * n), sizeof(double));

			for (int64_t v = 0; v < n; v++)
				for (int64_t k = g.in_ptr[v]; k < g.in_ptr[v + 1]; k++)
				{
					Wg[g.in_src[k] * n + v] += g.in_weight[k];
					if (k > g.in_ptr[v] && g.in_src[k] < g.in_src[k - 1])
						ok = false;
				}
			for (int64_t u = 0; u < n; u++)
				for (int64_t k = g.out_ptr[u]; k < g.out_ptr[u + 1]; k++)
				{
					Wo[u * n + g.out_dst[k]] += g.out_weight[k];
					if (k > g.out_ptr[u] && g.out_dst[k] < g.out_dst[k - 1])
						ok = false;
				}
			for (int64_t i = 0; i < n * n; i++)
				if (fabs(Wg[i] - W[i]) > 1e-12 || fabs(Wo[i] - W[i]) > 1e-12)
					ok = false;
			for (int64_t u = 0; u < n; u++)
			{
				double		st = 0.0;

				for (int64_t v = 0; v < n; v++)
					st += W[u * n + v];
				if (fabs(st - g.out_strength[u]) > 1e-12 || ((st == 0.0) != (g.out_strength[u] == 0.0)))
					ok = false;
			}
			free(Wg);
			free(Wo);
		}
		CHECKF(ok, "stride %lld", (long long) strides[s]);
		free(W);
		free(ids);
		pr_graph_free(&g, &pr_malloc_allocator);
		edges_free(&e);
	}
}

/*
 * Whether the out-edge arrays pr_graph_write_out_edges writes into the caller's arrays, on
 * n_threads threads, equal ref's own (built with them).
 */
static bool
written_out_edges_same(const PrGraph *ref, int n_threads)
{
	size_t		n = (size_t) ref->n_nodes;
	size_t		m = (size_t) ref->n_edges;
	int64_t    *out_ptr = malloc(sizeof(int64_t) * (n + 1));
	int32_t    *out_dst = malloc(sizeof(int32_t) * (m + 1));
	double	   *out_weight = malloc(sizeof(double) * (m + 1));
	PrError		err;
	bool		same;

	same = pr_graph_write_out_edges(ref, n_threads, &pr_malloc_allocator, out_ptr, out_dst,
									out_weight, &err) == PR_OK &&
		same_i64(out_ptr, ref->out_ptr, n + 1) &&
		memcmp(out_dst, ref->out_dst, sizeof(int32_t) * m) == 0 &&
		(!ref->weighted || same_f64(out_weight, ref->out_weight, m));
	free(out_ptr);
	free(out_dst);
	free(out_weight);
	return same;
}

/*
 * Out-edges added to a graph built without them, and written into the caller's arrays, on 1, 2
 * and 5 threads, equal the build's own out-edges array by array (weighted and unweighted; graphs
 * large enough for several chunks).
 */
void
test_add_out_edges_threads(void)
{
	for (int weighted = 0; weighted < 2; weighted++)
	{
		EdgeList	e;
		PrBuildOptions with_out = {false, true, 2, NULL, NULL, NULL};
		PrGraph		ref;
		PrError		err;

		edges_random(&e, 400000, 20000, 0, 1, weighted != 0, 7 + weighted);
		CHECK(pr_graph_build(e.src, e.dst, weighted ? e.weight : NULL, e.m, &with_out,
							 &pr_malloc_allocator, &ref, &err) == PR_OK);
		for (int threads = 1; threads <= 5; threads += threads == 1 ? 1 : 3)
		{
			PrBuildOptions no_out = {false, false, 2, NULL, NULL, NULL};
			PrGraph		g;
			bool		same;

			CHECK(pr_graph_build(e.src, e.dst, weighted ? e.weight : NULL, e.m, &no_out,
								 &pr_malloc_allocator, &g, &err) == PR_OK);
			CHECK(!g.has_out_edges);
			CHECK(pr_graph_add_out_edges(&g, threads, &pr_malloc_allocator, &err) == PR_OK);
			same = g.has_out_edges && g.n_edges == ref.n_edges &&
				same_i64(g.out_ptr, ref.out_ptr, (size_t) ref.n_nodes + 1) &&
				memcmp(g.out_dst, ref.out_dst, sizeof(int32_t) * (size_t) ref.n_edges) == 0 &&
				(!weighted || same_f64(g.out_weight, ref.out_weight, (size_t) ref.n_edges));
			CHECKF(same, "weighted %d, %d threads", weighted, threads);
			pr_graph_free(&g, &pr_malloc_allocator);
			CHECKF(written_out_edges_same(&ref, threads), "written, weighted %d, %d threads",
				   weighted, threads);
		}
		pr_graph_free(&ref, &pr_malloc_allocator);
		edges_free(&e);
	}
}

/* Builds with one bad weight at row 2 and checks status, message and an empty graph. */
static void
check_bad_weight(double bad, const char *expected_text)
{
	const int64_t s[] = {1, 2, 3, 4};
	const int64_t d[] = {2, 3, 4, 1};
	double		w[] = {1, 1, 1, 1};
	char		expected[256];
	PrGraph		g;
	PrError		err;

	w[2] = bad;
	memset(&err, 0, sizeof(err));
	CHECK(pr_graph_build(s, d, w, 4, NULL, &pr_malloc_allocator, &g, &err) == PR_ERR_INVALID);
	CHECK(err.status == PR_ERR_INVALID);
	snprintf(expected, sizeof(expected),
			 "invalid weight %s in edge row 2: weights must be finite and >= 0", expected_text);
	CHECKF(strcmp(err.message, expected) == 0, "got \"%s\"", err.message);
	CHECK(g.n_nodes == 0 && g.node_ids == NULL && g.in_ptr == NULL);
}

/* NaN, +-Infinity and negative weights are refused with the row in the message. */
void
test_build_weight_validation(void)
{
	check_bad_weight(NAN, "NaN");
	check_bad_weight(INFINITY, "Infinity");
	check_bad_weight(-INFINITY, "-Infinity");
	check_bad_weight(-1.5, "-1.5");
}

/*
 * Weights whose sums overflow are all scaled by one power of two (2^-6 here: node 1's out-weight
 * sum 1 + 2e308 must fall below 2^1019); weights whose sums fit are kept as given; weights too far
 * apart for the scale are refused.
 */
void
test_build_huge_weights_scaled(void)
{
	const int64_t s[] = {1, 2, 3, 1, 1};
	const int64_t d[] = {2, 3, 1, 3, 4};
	const double w[] = {1, 2, 1, 1e308, 1e308};
	PrBuildOptions opt = {false, true, 1, NULL, NULL, NULL};
	PrGraph		g,
				view;
	PrError		err;
	size_t		size;
	void	   *buf;

	CHECK(pr_graph_build(s, d, w, 5, &opt, &pr_malloc_allocator, &g, &err) == PR_OK);
	/* in-edges by destination: 1<-3 (1), 2<-1 (1), 3<-1 (1e308), 3<-2 (2), 4<-1 (1e308) */
	{
		const double in_w[] = {ldexp(1, -6), ldexp(1, -6), ldexp(1e308, -6), ldexp(2, -6),
		ldexp(1e308, -6)};
		const double out_w[] = {ldexp(1, -6), ldexp(1e308, -6), ldexp(1e308, -6), ldexp(2, -6),
		ldexp(1, -6)};

		CHECK(same_f64(g.in_weight, in_w, 5));
		CHECK(same_f64(g.out_weight, out_w, 5));
	}
	CHECK(g.out_strength[0] == (ldexp(1, -6) + ldexp(1e308, -6)) + ldexp(1e308, -6));
	CHECK(isfinite(g.out_strength[0]) && g.out_strength[0] < ldexp(1, PR_STRENGTH_LIMIT_EXP - 1));
	CHECK(g.n_dangling == 1 && g.dangling[0] == 3);
	buf = aligned_alloc(8, (pr_graph_flat_size(&g) + 7) & ~(size_t) 7);
	size = pr_graph_flat_size(&g);
	pr_graph_write_flat(&g, buf);
	CHECK(pr_graph_view_flat(buf, size, &view, &err) == PR_OK);
	free(buf);
	pr_graph_free(&g, &pr_malloc_allocator);

	{
		const double fits[] = {1, 2, 1, 1e300, 1e300};

		CHECK(pr_graph_build(s, d, fits, 5, NULL, &pr_malloc_allocator, &g, &err) == PR_OK);
		CHECK(g.in_weight[2] == 1e300 && g.out_strength[0] == 1 + 2e300);
		pr_graph_free(&g, &pr_malloc_allocator);
	}
	{
		const double wide[] = {1, 2, 1e-307, 1e308, 1e308};

		CHECK(pr_graph_build(s, d, wide, 5, NULL, &pr_malloc_allocator, &g, &err) == PR_ERR_INVALID);
		CHECK(strstr(err.message, "too wide a range") != NULL);
		CHECK(g.n_nodes == 0 && g.in_ptr == NULL);
	}
}

/*
 * Subnormal weights: scaled up by one power of two until the smallest positive one is normal, so
 * no out-weight sum is subnormal (its reciprocal would overflow); refused when a weight too large
 * leaves no room to scale up.
 */
void
test_build_subnormal_weights_scaled(void)
{
	const int64_t s[] = {1, 1, 2, 3};
	const int64_t d[] = {2, 3, 1, 2};
	const double w[] = {5e-324, 1e-323, 1e-310, 1};
	PrBuildOptions opt = {false, true, 1, NULL, NULL, NULL};
	PrGraph		g;
	PrError		err;

	CHECK(pr_graph_build(s, d, w, 4, &opt, &pr_malloc_allocator, &g, &err) == PR_OK);
	/* in-edges by destination: 1<-2 (1e-310), 2<-1 (5e-324), 2<-3 (1), 3<-1 (1e-323); up 52 */
	{
		const double in_w[] = {ldexp(1e-310, 52), ldexp(5e-324, 52), ldexp(1, 52),
		ldexp(1e-323, 52)};

		CHECK(same_f64(g.in_weight, in_w, 4));
	}
	for (int64_t e = 0; e < g.n_edges; e++)
		CHECK(g.in_weight[e] >= DBL_MIN);
	for (int64_t u = 0; u < g.n_nodes; u++)
		CHECK(g.out_strength[u] >= DBL_MIN && isfinite(1.0 / g.out_strength[u]));
	CHECK(g.out_strength[0] == ldexp(5e-324, 52) + ldexp(1e-323, 52));
	pr_graph_free(&g, &pr_malloc_allocator);

	{
		const double wide[] = {5e-324, 1e-323, 1e-310, 1e300};

		CHECK(pr_graph_build(s, d, wide, 4, &opt, &pr_malloc_allocator, &g, &err) == PR_ERR_INVALID);
		CHECK(strstr(err.message, "too wide a range") != NULL);
		CHECK(g.n_nodes == 0 && g.in_ptr == NULL);
	}
}

/* No rows: an empty graph with a valid row-pointer array. */
void
test_build_empty(void)
{
	PrGraph		g;
	PrError		err;
	PrBuildOptions opt = {false, true, 1, NULL, NULL, NULL};

	CHECK(pr_graph_build(NULL, NULL, NULL, 0, &opt, &pr_malloc_allocator, &g, &err) == PR_OK);
	CHECK(g.n_nodes == 0 && g.n_edges == 0 && g.n_dangling == 0);
	CHECK(g.in_ptr != NULL && g.in_ptr[0] == 0);
	CHECK(pr_graph_find(&g, 1) == -1);
	pr_graph_free(&g, &pr_malloc_allocator);
}

/* Every allocation failure gives PR_ERR_NOMEM, an empty graph and nothing left allocated. */
void
test_build_allocation_failures(void)
{
	PrBuildOptions opt = {false, true, 1, NULL, NULL, NULL};
	bool		ok_once = false;

	for (int budget = 0; budget < 40 && !ok_once; budget++)
	{
		FailingAlloc f = {budget, 0};
		PrAllocator a = failing_allocator(&f);
		PrGraph		g;
		PrError		err;
		PrStatus	st = pr_graph_build(hand_src, hand_dst, hand_w, 8, &opt, &a, &g, &err);

		if (st == PR_OK)
		{
			ok_once = true;
			pr_graph_free(&g, &a);
		}
		else
		{
			CHECKF(st == PR_ERR_NOMEM, "budget %d status %d", budget, (int) st);
			CHECK(g.n_nodes == 0 && g.in_ptr == NULL);
		}
		CHECKF(f.live == 0, "budget %d leaves %d blocks", budget, f.live);
	}
	CHECK(ok_once);
}

/* One stored edge of the reference build: endpoints' ranks, weight and the row it came from. */
typedef struct RefEdge
{
	int32_t		s;
	int32_t		d;
	double		w;
	size_t		row;
} RefEdge;

/* Orders by destination, then source, then weight, then input row (the in-CSR order). */
static int
ref_cmp_in(const void *a, const void *b)
{
	const RefEdge *x = a,
			   *y = b;

	if (x->d != y->d)
		return x->d < y->d ? -1 : 1;
	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	if (x->w != y->w)
		return x->w < y->w ? -1 : 1;
	return x->row < y->row ? -1 : (x->row > y->row);
}

/* Orders by source, then destination, then weight, then input row (the out-CSR order). */
static int
ref_cmp_out(const void *a, const void *b)
{
	const RefEdge *x = a,
			   *y = b;

	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	if (x->d != y->d)
		return x->d < y->d ? -1 : 1;
	if (x->w != y->w)
		return x->w < y->w ? -1 : 1;
	return x->row < y->row ? -1 : (x->row > y->row);
}

/* Orders int64 ids ascending. */
static int
ref_cmp_i64(const void *a, const void *b)
{
	int64_t		x = *(const int64_t *) a,
				y = *(const int64_t *) b;

	return x < y ? -1 : (x > y);
}

/* Rank of id in the sorted distinct ids (present). */
static int32_t
ref_rank(const int64_t *ids, int64_t n, int64_t id)
{
	const int64_t *p = bsearch(&id, ids, (size_t) n, sizeof(int64_t), ref_cmp_i64);

	return (int32_t) (p - ids);
}

/*
 * The straightforward build (qsort ids, bsearch ranks, qsort edges by (dst, src, weight, row) and
 * (src, dst, weight, row), strengths summed along out-rows) compared array by array, exactly, with g.
 */
static bool
same_as_reference_build(const int64_t *src, const int64_t *dst, const double *weight, size_t m,
						bool undirected, const PrGraph *g)
{
	int64_t    *ids = malloc((2 * m + 1) * sizeof(int64_t));
	RefEdge    *edges = malloc((2 * m + 1) * sizeof(RefEdge));
	int64_t    *ptr;
	double	   *strength;
	int64_t		n = 0;
	size_t		ms = 0;
	bool		ok = true;

	for (size_t i = 0; i < m; i++)
	{
		ids[2 * i] = src[i];
		ids[2 * i + 1] = dst[i];
	}
	qsort(ids, 2 * m, sizeof(int64_t), ref_cmp_i64);
	for (size_t i = 0; i < 2 * m; i++)
		if (i == 0 || ids[i] != ids[i - 1])
			ids[n++] = ids[i];
	for (size_t i = 0; i < m; i++)
	{
		int32_t		s = ref_rank(ids, n, src[i]),
					d = ref_rank(ids, n, dst[i]);
		double		w = weight != NULL ? weight[i] : 1.0;

		edges[ms++] = (RefEdge) {s, d, w, i};
		if (undirected && s != d)
			edges[ms++] = (RefEdge) {d, s, w, i};
	}
	ptr = calloc((size_t) n + 1, sizeof(int64_t));
	strength = calloc((size_t) n + 1, sizeof(double));
	ok = ok && g->n_nodes == n && g->n_edges == (int64_t) ms && g->weighted == (weight != NULL);
	ok = ok && same_i64(g->node_ids, ids, (size_t) n);
	/* in-CSR */
	qsort(edges, ms, sizeof(RefEdge), ref_cmp_in);
	for (size_t e = 0; e < ms; e++)
		ptr[edges[e].d + 1]++;
	for (int64_t v = 0; v < n; v++)
		ptr[v + 1] += ptr[v];
	ok = ok && same_i64(g->in_ptr, ptr, (size_t) n + 1);
	for (size_t e = 0; ok && e < ms; e++)
		ok = g->in_src[e] == edges[e].s && (weight == NULL || g->in_weight[e] == edges[e].w);
	ok = ok && (weight != NULL) == (g->in_weight != NULL);
	/* out-CSR and strengths (summed in out-row order) */
	qsort(edges, ms, sizeof(RefEdge), ref_cmp_out);
	memset(ptr, 0, ((size_t) n + 1) * sizeof(int64_t));
	for (size_t e = 0; e < ms; e++)
	{
		ptr[edges[e].s + 1]++;
		strength[edges[e].s] += edges[e].w;
	}
	for (int64_t v = 0; v < n; v++)
		ptr[v + 1] += ptr[v];
	if (ok && g->has_out_edges)
	{
		ok = same_i64(g->out_ptr, ptr, (size_t) n + 1) && (weight != NULL) == (g->out_weight != NULL);
		for (size_t e = 0; ok && e < ms; e++)
			ok = g->out_dst[e] == edges[e].d && (weight == NULL || g->out_weight[e] == edges[e].w);
	}
	if (ok)
	{
		int64_t		k = 0;

		for (int64_t u = 0; ok && u < n; u++)
		{
			ok = memcmp(&g->out_strength[u], &strength[u], sizeof(double)) == 0;
			if (strength[u] == 0.0)
				ok = ok && k < g->n_dangling && g->dangling[k++] == u;
		}
		ok = ok && k == g->n_dangling;
	}
	free(ids);
	free(edges);
	free(ptr);
	free(strength);
	return ok;
}

/* Next value of a splitmix64 generator. */
static uint64_t
test_mix(uint64_t *state)
{
	uint64_t	z = (*state += UINT64_C(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

/*
 * The build equals the qsort reference, array by array, for every thread count: random graphs
 * with duplicates, self-loops, weights (with zeros), undirected or not, out-edges or not, and ids
 * that are dense, negative, spread over 2^40, at both ends of the int64 range, or all equal; the
 * large cases make several chunks per sort, the largest (150k nodes) several row ranges for the
 * offsets too.
 */
void
test_build_vs_qsort_reference(void)
{
	const size_t sizes[] = {1, 7, 1000, 20000, 140000, 600000};
	const int	threads[] = {1, 2, 3, 8};
	uint64_t	state = 2024;

	for (int kind = 0; kind < 6; kind++)
		for (int si = 0; si < 6; si++)
		{
			size_t		m = sizes[si];
			uint64_t	n_ids = m / 4 + 2;
			int64_t    *src,
					   *dst;
			double	   *w;

			if (si == 5 && kind != 0 && kind != 4)
				continue;		/* the largest size: dense and hashed ids only (time) */
			src = malloc(m * sizeof(int64_t));
			dst = malloc(m * sizeof(int64_t));
			w = malloc(m * sizeof(double));

			for (size_t i = 0; i < 2 * m; i++)
			{
				uint64_t	r = test_mix(&state) % n_ids;
				int64_t		id;

				if (kind == 0)		/* dense, from 0 */
					id = (int64_t) r;
				else if (kind == 1) /* dense, negative */
					id = -(int64_t) r - 5;
				else if (kind == 2) /* spread over 2^40: high digits agree */
					id = (int64_t) (r * ((UINT64_C(1) << 40) / n_ids)) - (INT64_C(1) << 39);
				else if (kind == 3) /* both ends of the int64 range */
					id = (r & 1) ? INT64_MAX - (int64_t) (r / 2) : INT64_MIN + (int64_t) (r / 2);
				else if (kind == 4) /* hashed over the whole range */
					id = (int64_t) (r * UINT64_C(0xD6E8FEB86659FD93));
				else			/* one id: all self-loops */
					id = INT64_MIN;
				if (i < m)
					src[i] = id;
				else
					dst[i - m] = id;
			}
			for (size_t i = 0; i < m; i++)
			{
				if (test_mix(&state) % 10 == 0)
					dst[i] = src[i];	/* self-loop */
				if (i > 0 && test_mix(&state) % 10 == 0)
				{
					src[i] = src[i - 1];	/* parallel edge */
					dst[i] = dst[i - 1];
				}
				w[i] = (test_mix(&state) % 8 == 0) ? 0.0 : (double) (test_mix(&state) % 1000) / 7.0;
			}
			for (int variant = 0; variant < 4; variant++)
				for (int ti = 0; ti < 4; ti++)
				{
					if (si == 5 && (ti == 1 || ti == 2))
						continue;	/* largest size: 1 and 8 threads */
					PrBuildOptions opt = {(variant & 1) != 0, (variant & 2) != 0, threads[ti], NULL, NULL, NULL};
					const double *wv = (variant == 1 || variant == 2) ? w : NULL;
					PrGraph		g;
					PrError		err;
					bool		built;

					if (si == 4 && ti == 0 && variant == 3)
						wv = w; /* large and weighted too */
					built = pr_graph_build(src, dst, wv, m, &opt, &pr_malloc_allocator, &g, &err) == PR_OK;
					CHECKF(built && same_as_reference_build(src, dst, wv, m, opt.undirected, &g),
						   "ids kind %d, m %zu, undirected %d, out-edges %d, weighted %d, threads %d",
						   kind, m, (int) opt.undirected, (int) opt.out_edges, wv != NULL, threads[ti]);
					if (built)
						pr_graph_free(&g, &pr_malloc_allocator);
				}
			free(src);
			free(dst);
			free(w);
		}
}

/*
 * Edges with ids from 0..n_ids-1 (dense) or hashed over the int64 range (sparse), from a fixed
 * seed; the caller frees the arrays.
 */
static void
make_test_edges(size_t m, bool sparse, int64_t **src, int64_t **dst, double **weight)
{
	uint64_t	state = 77;
	uint64_t	n_ids = m / 3 + 2;

	*src = malloc(m * sizeof(int64_t));
	*dst = malloc(m * sizeof(int64_t));
	*weight = malloc(m * sizeof(double));
	for (size_t i = 0; i < m; i++)
	{
		uint64_t	a = test_mix(&state) % n_ids,
					b = test_mix(&state) % n_ids;

		(*src)[i] = sparse ? (int64_t) (a * UINT64_C(0xD6E8FEB86659FD93)) : (int64_t) a;
		(*dst)[i] = sparse ? (int64_t) (b * UINT64_C(0xD6E8FEB86659FD93)) : (int64_t) b;
		(*weight)[i] = (double) (test_mix(&state) % 100) / 3.0;
	}
}

/*
 * should_stop is polled between the build's steps and waves: asked to stop at any poll, the build
 * returns PR_ERR_INTERRUPTED with an empty graph and nothing left allocated; never asked, it
 * builds the graph.  Dense and sparse ids, weighted, undirected, with out-edges; the large case
 * (one thread: several waves per step) stops at a few polls among its waves.
 */
void
test_build_stops_when_asked(void)
{
	const size_t sizes[] = {2000, 1200000};

	for (int si = 0; si < 2; si++)
		for (int sparse = 0; sparse < 2; sparse++)
		{
			size_t		m = sizes[si];
			int64_t    *src,
					   *dst;
			double	   *w;
			StopAfter	count = {0, 0};
			PrBuildOptions opt = {true, true, si == 0 ? 2 : 1, NULL, stop_after, &count};
			PrGraph		g;
			PrError		err;
			int			total;

			make_test_edges(m, sparse != 0, &src, &dst, &w);
			CHECK(pr_graph_build(src, dst, w, m, &opt, &pr_malloc_allocator, &g, &err) == PR_OK);
			pr_graph_free(&g, &pr_malloc_allocator);
			total = count.polls;
			CHECKF(total >= (si == 0 ? 8 : 20), "m %zu sparse %d: %d polls", m, sparse, total);
			for (int k = 1; k <= total; k += (si == 0 ? 1 : total / 3))
			{
				StopAfter	stop = {0, k};
				FailingAlloc f = {1 << 30, 0};
				PrAllocator a = failing_allocator(&f);
				PrStatus	st;

				opt.stop_arg = &stop;
				st = pr_graph_build(src, dst, w, m, &opt, &a, &g, &err);
				CHECKF(st == PR_ERR_INTERRUPTED && stop.polls == k,
					   "m %zu sparse %d stop at %d: status %d after %d polls", m, sparse, k,
					   (int) st, stop.polls);
				CHECK(g.n_nodes == 0 && g.in_ptr == NULL);
				CHECKF(f.live == 0, "m %zu sparse %d stop at %d leaves %d blocks", m, sparse, k,
					   f.live);
			}
			free(src);
			free(dst);
			free(w);
		}
}

/*
 * Large builds, whose steps run in several waves per chunk, equal the qsort reference for 1 and 2
 * threads (the waves split each chunk differently): dense ids directed with out-edges, hashed
 * ids undirected and weighted.
 */
void
test_build_waves_vs_qsort_reference(void)
{
	size_t		m = 1100000;

	for (int sparse = 0; sparse < 2; sparse++)
	{
		int64_t    *src,
				   *dst;
		double	   *w;

		make_test_edges(m, sparse != 0, &src, &dst, &w);
		for (int threads = 1; threads <= 2; threads++)
		{
			PrBuildOptions opt = {sparse != 0, sparse == 0, threads, NULL, NULL, NULL};
			const double *wv = sparse != 0 ? w : NULL;
			PrGraph		g;
			PrError		err;
			bool		built;

			built = pr_graph_build(src, dst, wv, m, &opt, &pr_malloc_allocator, &g, &err) == PR_OK;
			CHECKF(built && same_as_reference_build(src, dst, wv, m, opt.undirected, &g),
				   "sparse %d, threads %d", sparse, threads);
			if (built)
				pr_graph_free(&g, &pr_malloc_allocator);
		}
		free(src);
		free(dst);
		free(w);
	}
}
