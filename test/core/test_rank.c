/*
 * test_rank.c — PageRank, personalized PageRank / RWR and HITS through the driver and the CPU
 * engine, against a dense direct solve (reference_pagerank) and dense HITS; plus the driver's
 * contract: multi-column RWR, determinism across runs and thread counts, should_stop,
 * check_every, progress, non-convergence, argument errors and the empty graph.
 */
#include "graph_gen.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A graph plus the reference ids and dense adjacency of its edge list. */
typedef struct Fixture
{
	EdgeList	edges;
	PrGraph		g;
	int64_t    *ids;
	int64_t		n;
	double	   *W;
} Fixture;

/* Builds the fixture from edges (taking ownership). */
static void
fixture_make(Fixture *f, EdgeList edges, bool undirected)
{
	PrBuildOptions opt = {undirected, true, 1, NULL, NULL, NULL};
	PrError		err;

	f->edges = edges;
	if (pr_graph_build(edges.src, edges.dst, edges.weight, edges.m, &opt, &pr_malloc_allocator,
					   &f->g, &err) != PR_OK)
	{
		fprintf(stderr, "build failed: %s\n", err.message);
		exit(2);
	}
	f->n = reference_node_ids(&edges, &f->ids);
	f->W = reference_dense_adjacency(&edges, undirected, f->ids, f->n);
}

/* Frees a fixture. */
static void
fixture_free(Fixture *f)
{
	pr_graph_free(&f->g, &pr_malloc_allocator);
	edges_free(&f->edges);
	free(f->ids);
	free(f->W);
}

/* Runs PageRank with a fresh engine of n_threads; returns the status. */
static PrStatus
run_pagerank(const PrGraph *g, int n_threads, double alpha, const PrRestart *r,
			 const PrIterOptions *o, double *scores, PrRunStats *st, PrError *err)
{
	PrEngine   *e = pr_cpu_engine_create(n_threads, &pr_malloc_allocator, err);
	PrStatus	s;

	if (e == NULL)
		return err->status;
	s = pr_pagerank(e, g, alpha, r, o, scores, st, err);
	e->ops->release(e);
	return s;
}

/* Our scores are in internal order = reference order (both sort the ids): check that too. */
static bool
same_ids(const Fixture *f)
{
	return f->n == f->g.n_nodes &&
		memcmp(f->ids, f->g.node_ids, (size_t) f->n * sizeof(int64_t)) == 0;
}

/* Checks PageRank of a fixture against the dense solve. */
static void
check_pagerank_fixture(Fixture *f, double alpha, const char *what)
{
	PrRestart	r = {true, 1, NULL, NULL, NULL, 0, NULL, NULL};
	PrIterOptions o = test_iter_options(1e-14, 2000);
	double	   *ours = malloc(sizeof(double) * (size_t) f->n);
	double	   *ref = malloc(sizeof(double) * (size_t) f->n);
	PrRunStats	st;
	PrError		err;
	double		sum = 0.0;

	CHECK(same_ids(f));
	CHECK(run_pagerank(&f->g, 2, alpha, &r, &o, ours, &st, &err) == PR_OK);
	CHECKF(st.converged && st.residual < 1e-14, "%s: residual %g", what, st.residual);
	CHECK(strcmp(st.engine, "cpu") == 0 && st.iterations >= 1 && st.seconds >= 0.0);
	reference_pagerank(f->W, f->n, alpha, NULL, ref);
	CHECKF(l1_distance(ours, ref, (size_t) f->n) < 1e-12, "%s: L1 %g", what,
		   l1_distance(ours, ref, (size_t) f->n));
	for (int64_t i = 0; i < f->n; i++)
		sum += ours[i];
	CHECKF(fabs(sum - 1.0) < 1e-12, "%s: sum %.17g", what, sum);
	free(ours);
	free(ref);
}

/* The hand graph of test_graph.c (dangling node, self-loop, parallel edges). */
static EdgeList
hand_edges(bool weighted)
{
	static const int64_t s[] = {10, 10, 20, 30, 40, 40, 30, 20};
	static const int64_t d[] = {20, 30, 30, 10, 30, 30, 30, 50};
	static const double w[] = {1, 2, 3, 4, 0.5, 0.25, 5, 6};
	EdgeList	e;

	e.m = 8;
	e.src = malloc(sizeof(s));
	e.dst = malloc(sizeof(d));
	memcpy(e.src, s, sizeof(s));
	memcpy(e.dst, d, sizeof(d));
	e.weight = NULL;
	if (weighted)
	{
		e.weight = malloc(sizeof(w));
		memcpy(e.weight, w, sizeof(w));
	}
	return e;
}

/* PageRank on small graphs, unweighted and weighted, directed and undirected, several dampings. */
void
test_pagerank_vs_dense(void)
{
	Fixture		f;
	EdgeList	e;

	fixture_make(&f, hand_edges(false), false);
	check_pagerank_fixture(&f, 0.85, "hand");
	check_pagerank_fixture(&f, 0.0, "hand alpha 0");
	check_pagerank_fixture(&f, 0.5, "hand alpha 0.5");
	fixture_free(&f);
	fixture_make(&f, hand_edges(true), false);
	check_pagerank_fixture(&f, 0.85, "hand weighted");
	fixture_free(&f);
	edges_random(&e, 2500, 300, 5, 1, false, 1);
	fixture_make(&f, e, false);
	check_pagerank_fixture(&f, 0.85, "random");
	fixture_free(&f);
	edges_random(&e, 2500, 300, 5, 1, true, 2);
	fixture_make(&f, e, false);
	check_pagerank_fixture(&f, 0.9, "random weighted");
	fixture_free(&f);
	edges_random(&e, 1200, 300, 5, 1, false, 3);
	fixture_make(&f, e, true);
	check_pagerank_fixture(&f, 0.85, "random undirected");
	fixture_free(&f);
}

/* Duplicate rows are parallel edges: the same as one row of weight 2. */
void
test_pagerank_duplicates_are_parallel(void)
{
	const int64_t s1[] = {1, 1, 1, 2, 3};
	const int64_t d1[] = {2, 2, 3, 3, 1};
	const int64_t s2[] = {1, 1, 2, 3};
	const int64_t d2[] = {2, 3, 3, 1};
	const double w2[] = {2, 1, 1, 1};
	PrGraph		g1,
				g2;
	PrError		err;
	PrRestart	r = {true, 1, NULL, NULL, NULL, 0, NULL, NULL};
	PrIterOptions o = test_iter_options(1e-15, 1000);
	double		x1[3],
				x2[3];
	PrRunStats	st;

	CHECK(pr_graph_build(s1, d1, NULL, 5, NULL, &pr_malloc_allocator, &g1, &err) == PR_OK);
	CHECK(pr_graph_build(s2, d2, w2, 4, NULL, &pr_malloc_allocator, &g2, &err) == PR_OK);
	CHECK(run_pagerank(&g1, 1, 0.85, &r, &o, x1, &st, &err) == PR_OK);
	CHECK(run_pagerank(&g2, 1, 0.85, &r, &o, x2, &st, &err) == PR_OK);
	CHECK(l1_distance(x1, x2, 3) < 1e-14);
	/* and it differs from the deduplicated (unweighted) graph, where 1 splits its mass in halves */
	{
		PrGraph		g3;
		double		x3[3];

		CHECK(pr_graph_build(s2, d2, NULL, 4, NULL, &pr_malloc_allocator, &g3, &err) == PR_OK);
		CHECK(run_pagerank(&g3, 1, 0.85, &r, &o, x3, &st, &err) == PR_OK);
		CHECK(l1_distance(x1, x3, 3) > 1e-3);
		pr_graph_free(&g3, &pr_malloc_allocator);
	}
	pr_graph_free(&g1, &pr_malloc_allocator);
	pr_graph_free(&g2, &pr_malloc_allocator);
}

/* Personalized PageRank (restart over three nodes) against the dense solve. */
void
test_personalized_vs_dense(void)
{
	Fixture		f;
	EdgeList	e;
	const int32_t nodes[] = {3, 17, 250};
	const double weights[] = {0.5, 0.3, 0.2};
	const int64_t ptr[] = {0, 3};
	PrRestart	r = {false, 1, ptr, nodes, weights, 0, NULL, NULL};
	PrIterOptions o = test_iter_options(1e-14, 3000);
	double	   *ours,
			   *ref,
			   *rv;
	PrRunStats	st;
	PrError		err;

	edges_random(&e, 2000, 300, 0, 1, true, 11);
	fixture_make(&f, e, false);
	ours = malloc(sizeof(double) * (size_t) f.n);
	ref = malloc(sizeof(double) * (size_t) f.n);
	rv = calloc((size_t) f.n, sizeof(double));
	for (int i = 0; i < 3; i++)
		rv[nodes[i]] = weights[i];
	CHECK(run_pagerank(&f.g, 2, 0.85, &r, &o, ours, &st, &err) == PR_OK);
	CHECK(st.converged);
	reference_pagerank(f.W, f.n, 0.85, rv, ref);
	CHECKF(l1_distance(ours, ref, (size_t) f.n) < 1e-12, "L1 %g", l1_distance(ours, ref, (size_t) f.n));
	free(ours);
	free(ref);
	free(rv);
	fixture_free(&f);
}

/*
 * A dangling distribution (NetworkX's dangling=): the Langville-Meyer example of NetworkX's
 * test_pagerank.py with dangling = {1: 2, 2: 3} gives its G.dangling_pagerank; on a graph of
 * several chunks, one equal to the restart distribution gives the default answer, with 1 or 4
 * threads; ids out of order and an engine that does not take one are refused.
 */
void
test_dangling_distribution(void)
{
	const int64_t src[] = {1, 1, 3, 3, 3, 4, 4, 5, 5, 6};
	const int64_t dst[] = {2, 3, 1, 2, 5, 5, 6, 4, 6, 4};
	const double networkx[] = {0.10844518, 0.18618601, 0.0710892, 0.2683668, 0.15919783,
	0.20671497};
	PrGraph		g;
	PrError		err;
	PrIterOptions o = test_iter_options(1e-14, 3000);
	PrRunStats	st;
	double		x[6];
	int32_t		dnode[2];
	const double dweight[] = {0.4, 0.6};
	PrRestart	r = {true, 1, NULL, NULL, NULL, 2, dnode, dweight};

	CHECK(pr_graph_build(src, dst, NULL, 10, NULL, &pr_malloc_allocator, &g, &err) == PR_OK);
	dnode[0] = (int32_t) pr_graph_find(&g, 1);
	dnode[1] = (int32_t) pr_graph_find(&g, 2);
	CHECK(dnode[0] < dnode[1]);
	CHECK(run_pagerank(&g, 1, 0.85, &r, &o, x, &st, &err) == PR_OK);
	for (int64_t id = 1; id <= 6; id++)
		CHECKF(fabs(x[pr_graph_find(&g, id)] - networkx[id - 1]) < 1e-6, "node %d: %.9f",
			   (int) id, x[pr_graph_find(&g, id)]);
	/* out of order */
	dnode[0] ^= dnode[1];
	dnode[1] ^= dnode[0];
	dnode[0] ^= dnode[1];
	CHECK(run_pagerank(&g, 1, 0.85, &r, &o, x, &st, &err) == PR_ERR_INVALID);
	pr_graph_free(&g, &pr_malloc_allocator);

	{
		Fixture		f;
		EdgeList	e;
		const int32_t nodes[] = {5, 5000, 12000};
		const double weights[] = {0.5, 0.3, 0.2};
		const int64_t ptr[] = {0, 3};
		PrRestart	plain = {false, 1, ptr, nodes, weights, 0, NULL, NULL};
		PrRestart	custom = {false, 1, ptr, nodes, weights, 3, nodes, weights};
		double	   *a,
				   *b;
		PrEngine   *engine;
		PrEngineOps without;

		edges_random(&e, 20000, 16000, 0, 1, false, 5);
		fixture_make(&f, e, false);
		CHECK(f.n > 12000 && f.g.n_dangling > 0);
		a = malloc(sizeof(double) * (size_t) f.n);
		b = malloc(sizeof(double) * (size_t) f.n);
		CHECK(run_pagerank(&f.g, 1, 0.85, &plain, &o, a, &st, &err) == PR_OK);
		for (int threads = 1; threads <= 4; threads += 3)
		{
			CHECK(run_pagerank(&f.g, threads, 0.85, &custom, &o, b, &st, &err) == PR_OK);
			CHECKF(l1_distance(a, b, (size_t) f.n) < 1e-12, "%d threads: L1 %g", threads,
				   l1_distance(a, b, (size_t) f.n));
		}
		engine = pr_cpu_engine_create(1, &pr_malloc_allocator, &err);
		CHECK(engine != NULL && engine->ops->custom_dangling);
		without = *engine->ops;
		without.custom_dangling = false;
		engine->ops = &without;
		CHECK(pr_pagerank(engine, &f.g, 0.85, &custom, &o, b, &st, &err) == PR_ERR_UNSUPPORTED);
		without.release(engine);
		free(a);
		free(b);
		fixture_free(&f);
	}
}

/*
 * A start vector (PrIterOptions.initial): starting from the converged scores, the run stops after
 * a few iterations (at least two, the fewest for a run not started from 1/N; its residuals are
 * rounding, close to the stricter threshold) with the same answer; an arbitrary
 * start still reaches it; an engine without upload refuses one.
 */
void
test_initial_vector(void)
{
	Fixture		f;
	EdgeList	e;
	PrRestart	uniform = {true, 1, NULL, NULL, NULL, 0, NULL, NULL};
	PrIterOptions o = test_iter_options(1e-13, 3000);
	PrRunStats	cold,
				st;
	PrError		err;
	double	   *a,
			   *b,
			   *start;
	double		sum = 0.0;
	PrEngine   *engine;
	PrEngineOps without;

	edges_random(&e, 3000, 2000, 0, 1, false, 11);
	fixture_make(&f, e, false);
	a = malloc(sizeof(double) * (size_t) f.n);
	b = malloc(sizeof(double) * (size_t) f.n);
	start = malloc(sizeof(double) * (size_t) f.n);
	CHECK(run_pagerank(&f.g, 1, 0.85, &uniform, &o, a, &cold, &err) == PR_OK);
	CHECK(cold.converged && cold.iterations > 20);
	o.initial = a;
	CHECK(run_pagerank(&f.g, 1, 0.85, &uniform, &o, b, &st, &err) == PR_OK);
	CHECKF(st.converged && st.iterations >= 2 && st.iterations <= 5, "%d iterations", st.iterations);
	CHECK(l1_distance(a, b, (size_t) f.n) < 1e-12);
	/* all the mass on the first half of the nodes */
	for (int64_t v = 0; v < f.n; v++)
		sum += start[v] = v < f.n / 2 ? (double) (v % 7 + 1) : 0.0;
	for (int64_t v = 0; v < f.n; v++)
		start[v] /= sum;
	o.initial = start;
	CHECK(run_pagerank(&f.g, 1, 0.85, &uniform, &o, b, &st, &err) == PR_OK);
	CHECK(st.converged && st.iterations > 1);
	CHECKF(l1_distance(a, b, (size_t) f.n) < 1e-10, "L1 %g", l1_distance(a, b, (size_t) f.n));
	engine = pr_cpu_engine_create(1, &pr_malloc_allocator, &err);
	CHECK(engine != NULL);
	without = *engine->ops;
	without.upload = NULL;
	engine->ops = &without;
	CHECK(pr_pagerank(engine, &f.g, 0.85, &uniform, &o, b, &st, &err) == PR_ERR_UNSUPPORTED);
	without.release(engine);
	free(a);
	free(b);
	free(start);
	fixture_free(&f);
}

/* RWR from k sources in one run equals k single-source runs, and each equals the dense solve. */
void
test_rwr_multi_column(void)
{
	enum {K = 5};
	Fixture		f;
	EdgeList	e;
	const int32_t sources[K] = {0, 7, 7, 123, 299};
	const double ones[K] = {1, 1, 1, 1, 1};
	int64_t		ptr[K + 1];
	PrRestart	r;
	PrIterOptions o = test_iter_options(1e-14, 3000);
	double	   *multi,
			   *single,
			   *ref,
			   *rv;
	PrRunStats	st;
	PrError		err;
	double		worst_single = 0.0,
				worst_ref = 0.0;

	edges_random(&e, 2400, 300, 0, 1, false, 21);
	fixture_make(&f, e, false);
	for (int j = 0; j <= K; j++)
		ptr[j] = j;
	memset(&r, 0, sizeof(r));
	r.uniform = false;
	r.k = K;
	r.ptr = ptr;
	r.node = sources;
	r.weight = ones;
	multi = malloc(sizeof(double) * (size_t) f.n * K);
	single = malloc(sizeof(double) * (size_t) f.n);
	ref = malloc(sizeof(double) * (size_t) f.n);
	rv = malloc(sizeof(double) * (size_t) f.n);
	CHECK(run_pagerank(&f.g, 2, 0.85, &r, &o, multi, &st, &err) == PR_OK);
	CHECK(st.converged);
	for (int j = 0; j < K; j++)
	{
		const int64_t p1[] = {0, 1};
		PrRestart	r1 = {false, 1, p1, &sources[j], &ones[j], 0, NULL, NULL};
		PrRunStats	st1;
		double		d_single = 0.0,
					d_ref = 0.0;

		CHECK(run_pagerank(&f.g, 1, 0.85, &r1, &o, single, &st1, &err) == PR_OK);
		CHECK(st1.converged && st1.iterations <= st.iterations);
		memset(rv, 0, sizeof(double) * (size_t) f.n);
		rv[sources[j]] = 1.0;
		reference_pagerank(f.W, f.n, 0.85, rv, ref);
		for (int64_t v = 0; v < f.n; v++)
		{
			d_single += fabs(multi[v * K + j] - single[v]);
			d_ref += fabs(multi[v * K + j] - ref[v]);
		}
		worst_single = fmax(worst_single, d_single);
		worst_ref = fmax(worst_ref, d_ref);
	}
	CHECKF(worst_single < 1e-13, "multi vs single L1 %g", worst_single);
	CHECKF(worst_ref < 1e-12, "multi vs dense L1 %g", worst_ref);
	/* columns 1 and 2 have the same source: identical bits */
	{
		bool		same = true;

		for (int64_t v = 0; v < f.n; v++)
			if (multi[v * K + 1] != multi[v * K + 2])
				same = false;
		CHECK(same);
	}
	free(multi);
	free(single);
	free(ref);
	free(rv);
	fixture_free(&f);
}

/* HITS against dense power iteration, on a weighted random graph and the hand graph. */
void
test_hits_vs_dense(void)
{
	for (int variant = 0; variant < 2; variant++)
	{
		Fixture		f;
		EdgeList	e;
		PrIterOptions o = test_iter_options(1e-14, 5000);
		double	   *h,
				   *a,
				   *rh,
				   *ra;
		PrRunStats	st;
		PrError		err;
		PrEngine   *engine;
		double		sh = 0.0,
					sa = 0.0;

		if (variant == 0)
			edges_random(&e, 1500, 200, 0, 1, true, 31);
		else
			e = hand_edges(false);
		fixture_make(&f, e, false);
		h = malloc(sizeof(double) * (size_t) f.n);
		a = malloc(sizeof(double) * (size_t) f.n);
		rh = malloc(sizeof(double) * (size_t) f.n);
		ra = malloc(sizeof(double) * (size_t) f.n);
		engine = pr_cpu_engine_create(2, &pr_malloc_allocator, &err);
		CHECK(pr_hits(engine, &f.g, &o, h, a, &st, &err) == PR_OK);
		CHECK(st.converged);
		engine->ops->release(engine);
		reference_hits(f.W, f.n, 20000, rh, ra);
		CHECKF(l1_distance(h, rh, (size_t) f.n) < 1e-10, "variant %d hubs L1 %g", variant,
			   l1_distance(h, rh, (size_t) f.n));
		CHECKF(l1_distance(a, ra, (size_t) f.n) < 1e-10, "variant %d authorities L1 %g", variant,
			   l1_distance(a, ra, (size_t) f.n));
		for (int64_t i = 0; i < f.n; i++)
		{
			sh += h[i];
			sa += a[i];
		}
		CHECK(fabs(sh - 1.0) < 1e-12 && fabs(sa - 1.0) < 1e-12);
		free(h);
		free(a);
		free(rh);
		free(ra);
		fixture_free(&f);
	}
}

/* HITS needs the out-edge arrays; a graph without them is refused, not mis-ranked. */
void
test_hits_needs_out_edges(void)
{
	const int64_t s[] = {1, 2};
	const int64_t d[] = {2, 3};
	PrGraph		g;
	PrError		err;
	PrEngine   *engine = pr_cpu_engine_create(1, &pr_malloc_allocator, &err);
	PrIterOptions o = test_iter_options(1e-10, 100);
	double		h[3],
				a[3];
	PrRunStats	st;

	CHECK(pr_graph_build(s, d, NULL, 2, NULL, &pr_malloc_allocator, &g, &err) == PR_OK);
	CHECK(pr_hits(engine, &g, &o, h, a, &st, &err) == PR_ERR_UNSUPPORTED);
	CHECK(strstr(err.message, "out-edge") != NULL);
	/* the engine is reusable after a failed prepare */
	CHECK(pr_graph_add_out_edges(&g, 1, &pr_malloc_allocator, &err) == PR_OK);
	CHECK(pr_hits(engine, &g, &o, h, a, &st, &err) == PR_OK);
	/* path 1->2->3: hub mass on 1 and 2, authority on 2 and 3 */
	CHECK(fabs(h[0] - 0.5) < 1e-12 && fabs(h[1] - 0.5) < 1e-12 && h[2] == 0.0);
	CHECK(a[0] == 0.0 && fabs(a[1] - 0.5) < 1e-12 && fabs(a[2] - 0.5) < 1e-12);
	engine->ops->release(engine);
	pr_graph_free(&g, &pr_malloc_allocator);
}

/*
 * HITS where no edge has a positive weight (A = 0): both vectors uniform 1/n, each summing to 1,
 * converged after 0 iterations (the power iteration would give all zeros).  One positive edge
 * among zero ones gives the ordinary answer.
 */
void
test_hits_zero_weights(void)
{
	const int64_t s[] = {1, 2, 3};
	const int64_t d[] = {2, 3, 1};
	double		w[] = {0.0, 0.0, 0.0};
	PrBuildOptions opt = {false, true, 1, NULL, NULL, NULL};
	PrGraph		g;
	PrError		err;
	PrEngine   *engine = pr_cpu_engine_create(1, &pr_malloc_allocator, &err);
	PrIterOptions o = test_iter_options(1e-10, 100);
	double		h[3],
				a[3];
	PrRunStats	st;

	CHECK(pr_graph_build(s, d, w, 3, &opt, &pr_malloc_allocator, &g, &err) == PR_OK);
	CHECK(pr_hits(engine, &g, &o, h, a, &st, &err) == PR_OK);
	CHECK(st.converged && st.iterations == 0);
	for (int i = 0; i < 3; i++)
		CHECKF(h[i] == 1.0 / 3.0 && a[i] == 1.0 / 3.0, "node %d: hub %g authority %g", i, h[i],
			   a[i]);
	pr_graph_free(&g, &pr_malloc_allocator);

	/* 1 -> 2 weighs 2, the others 0: hub 1, authority 2 */
	w[0] = 2.0;
	CHECK(pr_graph_build(s, d, w, 3, &opt, &pr_malloc_allocator, &g, &err) == PR_OK);
	CHECK(pr_hits(engine, &g, &o, h, a, &st, &err) == PR_OK);
	CHECK(st.converged && st.iterations >= 1);
	CHECK(h[0] == 1.0 && h[1] == 0.0 && h[2] == 0.0);
	CHECK(a[0] == 0.0 && a[1] == 1.0 && a[2] == 0.0);
	engine->ops->release(engine);
	pr_graph_free(&g, &pr_malloc_allocator);
}

/* Same input, same bits: twice with 2 threads, and with 1, 3 and 8 threads. */
void
test_determinism(void)
{
	EdgeList	e;
	PrGraph		g;
	PrError		err;
	PrBuildOptions opt = {false, true, 1, NULL, NULL, NULL};
	PrRestart	r = {true, 1, NULL, NULL, NULL, 0, NULL, NULL};
	PrIterOptions o = test_iter_options(1e-12, 500);
	const int	threads[] = {2, 2, 1, 3, 8};
	double	   *x[5];
	PrRunStats	st;

	edges_random(&e, 400000, 60000, 0, 1, true, 41);
	CHECK(pr_graph_build(e.src, e.dst, e.weight, e.m, &opt, &pr_malloc_allocator, &g, &err) == PR_OK);
	for (int i = 0; i < 5; i++)
	{
		x[i] = malloc(sizeof(double) * (size_t) g.n_nodes);
		CHECK(run_pagerank(&g, threads[i], 0.85, &r, &o, x[i], &st, &err) == PR_OK);
		CHECK(st.converged);
	}
	for (int i = 1; i < 5; i++)
		CHECKF(memcmp(x[0], x[i], sizeof(double) * (size_t) g.n_nodes) == 0,
			   "run %d (%d threads) differs, L1 %g", i, threads[i],
			   l1_distance(x[0], x[i], (size_t) g.n_nodes));
	/* HITS too */
	{
		double	   *h1 = malloc(sizeof(double) * (size_t) g.n_nodes);
		double	   *a1 = malloc(sizeof(double) * (size_t) g.n_nodes);
		double	   *h2 = malloc(sizeof(double) * (size_t) g.n_nodes);
		double	   *a2 = malloc(sizeof(double) * (size_t) g.n_nodes);
		PrEngine   *e1 = pr_cpu_engine_create(1, &pr_malloc_allocator, &err);
		PrEngine   *e2 = pr_cpu_engine_create(4, &pr_malloc_allocator, &err);
		PrIterOptions oh = test_iter_options(1e-10, 200);

		CHECK(pr_hits(e1, &g, &oh, h1, a1, &st, &err) == PR_OK);
		CHECK(pr_hits(e2, &g, &oh, h2, a2, &st, &err) == PR_OK);
		CHECK(memcmp(h1, h2, sizeof(double) * (size_t) g.n_nodes) == 0);
		CHECK(memcmp(a1, a2, sizeof(double) * (size_t) g.n_nodes) == 0);
		e1->ops->release(e1);
		e2->ops->release(e2);
		free(h1);
		free(a1);
		free(h2);
		free(a2);
	}
	for (int i = 0; i < 5; i++)
		free(x[i]);
	pr_graph_free(&g, &pr_malloc_allocator);
	edges_free(&e);
}

/* Records progress calls. */
typedef struct ProgressLog
{
	int			calls;
	int			last_iteration;
	bool		multiples;
	int			every;
} ProgressLog;

/* progress callback. */
static void
log_progress(void *arg, int iteration, double residual)
{
	ProgressLog *p = (ProgressLog *) arg;

	(void) residual;
	p->calls++;
	if (iteration % p->every != 0)
		p->multiples = false;
	p->last_iteration = iteration;
}

/* should_stop interrupts between iterations; check_every spaces residual reads; non-convergence. */
void
test_driver_control(void)
{
	EdgeList	e;
	PrGraph		g;
	PrError		err;
	PrRestart	r = {true, 1, NULL, NULL, NULL, 0, NULL, NULL};
	double	   *x;
	PrRunStats	st;

	edges_random(&e, 20000, 3000, 0, 1, false, 51);
	CHECK(pr_graph_build(e.src, e.dst, NULL, e.m, NULL, &pr_malloc_allocator, &g, &err) == PR_OK);
	x = malloc(sizeof(double) * (size_t) g.n_nodes);

	/* interruption: the 6th poll says stop, after 5 iterations */
	{
		PrIterOptions o = test_iter_options(1e-14, 1000);
		StopAfter	s = {0, 6};

		o.should_stop = stop_after;
		o.stop_arg = &s;
		CHECK(run_pagerank(&g, 2, 0.85, &r, &o, x, &st, &err) == PR_ERR_INTERRUPTED);
		CHECK(err.status == PR_ERR_INTERRUPTED && strstr(err.message, "interrupted") != NULL);
		CHECK(st.iterations == 5 && !st.converged);
	}
	/* check_every 7: residual read at multiples of 7 only, converged at one */
	{
		PrIterOptions o = test_iter_options(1e-10, 1000);
		ProgressLog p = {0, 0, true, 7};
		PrRunStats	st1;
		double	   *x1 = malloc(sizeof(double) * (size_t) g.n_nodes);

		CHECK(run_pagerank(&g, 2, 0.85, &r, &o, x1, &st1, &err) == PR_OK);
		o.check_every = 7;
		o.progress = log_progress;
		o.progress_arg = &p;
		CHECK(run_pagerank(&g, 2, 0.85, &r, &o, x, &st, &err) == PR_OK);
		CHECK(st.converged && st.residual < 1e-10);
		CHECK(st.iterations % 7 == 0 && st.iterations >= st1.iterations &&
			  st.iterations < st1.iterations + 7);
		CHECK(p.multiples && p.calls == st.iterations / 7 && p.last_iteration == st.iterations);
		CHECK(l1_distance(x, x1, (size_t) g.n_nodes) < 2e-10);
		free(x1);
	}
	/* non-convergence is reported, not an error; the last iteration's residual is read */
	{
		PrIterOptions o = test_iter_options(1e-14, 3);
		double		sum = 0.0;

		o.check_every = 10;
		CHECK(run_pagerank(&g, 2, 0.85, &r, &o, x, &st, &err) == PR_OK);
		CHECK(!st.converged && st.iterations == 3 && st.residual > 1e-14);
		for (int64_t i = 0; i < g.n_nodes; i++)
			sum += x[i];
		CHECK(fabs(sum - 1.0) < 1e-12);
	}
	/* norms: linf and l1_scaled stop earlier than l1 at the same tolerance */
	{
		PrIterOptions o = test_iter_options(1e-9, 1000);
		int			it_l1,
					it_linf,
					it_scaled;

		CHECK(run_pagerank(&g, 2, 0.85, &r, &o, x, &st, &err) == PR_OK);
		it_l1 = st.iterations;
		o.norm = PR_NORM_LINF;
		CHECK(run_pagerank(&g, 2, 0.85, &r, &o, x, &st, &err) == PR_OK);
		it_linf = st.iterations;
		CHECK(st.residual < 1e-9);
		o.norm = PR_NORM_L1_SCALED;
		CHECK(run_pagerank(&g, 2, 0.85, &r, &o, x, &st, &err) == PR_OK);
		it_scaled = st.iterations;
		CHECK(st.residual < 1e-9 * (double) g.n_nodes);
		CHECK(it_linf < it_l1 && it_scaled < it_l1);
	}
	free(x);
	pr_graph_free(&g, &pr_malloc_allocator);
	edges_free(&e);
}

/* Bad arguments are refused with PR_ERR_INVALID and a message. */
void
test_driver_bad_arguments(void)
{
	const int64_t s[] = {1, 2, 3};
	const int64_t d[] = {2, 3, 1};
	PrGraph		g;
	PrError		err;
	PrRestart	r = {true, 1, NULL, NULL, NULL, 0, NULL, NULL};
	PrIterOptions o = test_iter_options(1e-10, 100);
	double		x[3];
	PrRunStats	st;

	CHECK(pr_graph_build(s, d, NULL, 3, NULL, &pr_malloc_allocator, &g, &err) == PR_OK);
	CHECK(run_pagerank(&g, 1, 1.5, &r, &o, x, &st, &err) == PR_ERR_INVALID);
	CHECK(strstr(err.message, "damping") != NULL);
	CHECK(run_pagerank(&g, 1, -0.1, &r, &o, x, &st, &err) == PR_ERR_INVALID);
	CHECK(run_pagerank(&g, 1, NAN, &r, &o, x, &st, &err) == PR_ERR_INVALID);
	o.tolerance = 0.0;
	CHECK(run_pagerank(&g, 1, 0.85, &r, &o, x, &st, &err) == PR_ERR_INVALID);
	CHECK(strstr(err.message, "tolerance") != NULL);
	o = test_iter_options(1e-10, 0);
	CHECK(run_pagerank(&g, 1, 0.85, &r, &o, x, &st, &err) == PR_ERR_INVALID);
	CHECK(strstr(err.message, "max_iterations") != NULL);
	o = test_iter_options(1e-10, 100);
	{
		const int64_t ptr[] = {0, 1};
		const int32_t bad_node[] = {3};
		const int32_t node[] = {1};
		const double half[] = {0.5};
		const double one[] = {1.0};
		PrRestart	rb = {false, 1, ptr, bad_node, one, 0, NULL, NULL};

		CHECK(run_pagerank(&g, 1, 0.85, &rb, &o, x, &st, &err) == PR_ERR_INVALID);
		CHECK(strstr(err.message, "not in the graph") != NULL);
		rb.node = node;
		rb.weight = half;
		CHECK(run_pagerank(&g, 1, 0.85, &rb, &o, x, &st, &err) == PR_ERR_INVALID);
		CHECK(strstr(err.message, "sum to") != NULL);
		rb.weight = one;
		CHECK(run_pagerank(&g, 1, 0.85, &rb, &o, x, &st, &err) == PR_OK);
	}
	{
		bool		ok;
		PrNorm		norm;

		ok = pr_norm_parse("l1", &norm) && norm == PR_NORM_L1;
		ok = ok && pr_norm_parse("l1_scaled", &norm) && norm == PR_NORM_L1_SCALED;
		ok = ok && pr_norm_parse("linf", &norm) && norm == PR_NORM_LINF;
		ok = ok && !pr_norm_parse("L2", &norm) && !pr_norm_parse("", &norm);
		ok = ok && strcmp(pr_norm_name(PR_NORM_L1_SCALED), "l1_scaled") == 0;
		CHECK(ok);
		CHECK(strcmp(pr_status_name(PR_ERR_NOMEM), "out of memory") == 0);
	}
	pr_graph_free(&g, &pr_malloc_allocator);
}

/* The empty graph: nothing to rank, converged, no error; HITS likewise. */
void
test_empty_graph_runs(void)
{
	PrGraph		g;
	PrError		err;
	PrRestart	r = {true, 1, NULL, NULL, NULL, 0, NULL, NULL};
	PrIterOptions o = test_iter_options(1e-10, 100);
	PrRunStats	st;
	PrEngine   *e = pr_cpu_engine_create(0, &pr_malloc_allocator, &err);
	PrBuildOptions opt = {false, true, 1, NULL, NULL, NULL};

	CHECK(pr_graph_build(NULL, NULL, NULL, 0, &opt, &pr_malloc_allocator, &g, &err) == PR_OK);
	CHECK(pr_pagerank(e, &g, 0.85, &r, &o, NULL, &st, &err) == PR_OK);
	CHECK(st.converged && st.iterations == 0);
	CHECK(pr_hits(e, &g, &o, NULL, NULL, &st, &err) == PR_OK);
	e->ops->release(e);
	pr_graph_free(&g, &pr_malloc_allocator);
}

/* On a graph large enough for the engine's length-sorted row copy: k-column RWR = k runs. */
void
test_rwr_multi_column_large(void)
{
	enum {K = 3};
	EdgeList	e;
	PrGraph		g;
	PrError		err;
	const int32_t sources[K] = {5, 9000, 15000};	/* internal ids */
	const double ones[K] = {1, 1, 1};
	const int64_t ptr[K + 1] = {0, 1, 2, 3};
	PrRestart	r = {false, K, ptr, sources, ones, 0, NULL, NULL};
	PrIterOptions o = test_iter_options(1e-13, 3000);
	PrRunStats	st;
	double	   *multi,
			   *single;
	double		worst = 0.0;

	edges_random(&e, 150000, 20000, 0, 1, true, 61);
	CHECK(pr_graph_build(e.src, e.dst, e.weight, e.m, NULL, &pr_malloc_allocator, &g, &err) == PR_OK);
	CHECK(g.n_nodes > 15000);
	multi = malloc(sizeof(double) * (size_t) g.n_nodes * K);
	single = malloc(sizeof(double) * (size_t) g.n_nodes);
	CHECK(run_pagerank(&g, 2, 0.85, &r, &o, multi, &st, &err) == PR_OK && st.converged);
	for (int j = 0; j < K; j++)
	{
		const int64_t p1[] = {0, 1};
		PrRestart	r1 = {false, 1, p1, &sources[j], &ones[j], 0, NULL, NULL};
		double		d = 0.0;

		CHECK(run_pagerank(&g, 3, 0.85, &r1, &o, single, &st, &err) == PR_OK && st.converged);
		for (int64_t v = 0; v < g.n_nodes; v++)
			d += fabs(multi[v * K + j] - single[v]);
		worst = fmax(worst, d);
	}
	CHECKF(worst < 1e-12, "multi vs single L1 %g", worst);
	free(multi);
	free(single);
	pr_graph_free(&g, &pr_malloc_allocator);
	edges_free(&e);
}

/* Runs RWR from sources[0..k) with a fresh engine: every score, or the top t of each column. */
static void
run_rwr_columns(const PrGraph *g, int n_threads, const int32_t *sources, int k, int iterations,
				const double *initial, int64_t t, double *scores, int32_t *index, double *value,
				PrRunStats *st)
{
	int64_t		ptr[12];
	double		ones[11];
	PrRestart	r;
	PrIterOptions o = test_iter_options(1e-300, iterations);
	PrEngine   *e;
	PrError		err;

	memset(&r, 0, sizeof(r));
	for (int j = 0; j <= k; j++)
		ptr[j] = j;
	for (int j = 0; j < k; j++)
		ones[j] = 1.0;
	r.k = k;
	r.ptr = ptr;
	r.node = sources;
	r.weight = ones;
	o.initial = initial;
	e = pr_cpu_engine_create(n_threads, &pr_malloc_allocator, &err);
	CHECK(e != NULL);
	if (t > 0)
		CHECK(pr_pagerank_top(e, g, 0.85, &r, &o, t, index, value, st, &err) == PR_OK);
	else
		CHECK(pr_pagerank(e, g, 0.85, &r, &o, scores, st, &err) == PR_OK);
	e->ops->release(e);
}

/*
 * Every column of a k-column RWR run is the one-column run of its source, bit for bit, after the
 * same iterations: for k = 11 (a batch of 8 columns in node order, then 3 columns of the
 * length-sorted rows as groups of 2 and 1), 3, 4 and 7 on a weighted or unweighted graph with dangling nodes
 * (a dangling source among them), for every score, for the top 5 of each column and from a start
 * vector.
 */
static void
check_columns_match_single(bool weighted)
{
	enum {K = 11, ITERATIONS = 30, TOP = 5};
	const int32_t sources[K] = {0, 17, 4095, 4096, 9000, 9001, 12345, 17, 18999, 3, 250};
	EdgeList	e;
	PrGraph		g;
	PrError		err;
	PrRunStats	st,
				st1;
	double	   *multi,
			   *single,
			   *start,
			   *start1,
			   value[K * TOP],
			   value1[TOP];
	int32_t		index[K * TOP],
				index1[TOP];
	bool		dangling_source = false;
	int64_t		differ = 0;

	edges_random(&e, 120000, 20000, 0, 1, weighted, 67);
	CHECK(pr_graph_build(e.src, e.dst, e.weight, e.m, NULL, &pr_malloc_allocator, &g, &err) == PR_OK);
	CHECKF(g.n_nodes > 19000 && g.n_dangling > 0, "%lld nodes, %lld dangling", (long long) g.n_nodes, (long long) g.n_dangling);
	for (int j = 0; j < K; j++)
		if (g.out_strength[sources[j]] == 0.0)
			dangling_source = true;
	CHECK(dangling_source);
	multi = malloc(sizeof(double) * (size_t) g.n_nodes * K);
	single = malloc(sizeof(double) * (size_t) g.n_nodes);
	start = malloc(sizeof(double) * (size_t) g.n_nodes * K);
	start1 = malloc(sizeof(double) * (size_t) g.n_nodes);

	/* every score: all K columns, then the first 3, 4 and 7 (one batch: length-sorted rows as
	 * groups of 2 and 1, of 4; rows in node order as groups of 4, 2 and 1) */
	run_rwr_columns(&g, 2, sources, K, ITERATIONS, NULL, 0, multi, NULL, NULL, &st);
	CHECK(st.iterations == ITERATIONS && !st.converged);
	for (int j = 0; j < K; j++)
	{
		run_rwr_columns(&g, 1, sources + j, 1, ITERATIONS, NULL, 0, single, NULL, NULL, &st1);
		for (int64_t v = 0; v < g.n_nodes; v++)
			differ += multi[v * K + j] != single[v];
	}
	CHECKF(differ == 0, "%lld scores of 11 columns differ from single runs", (long long) differ);
	for (int c = 0; c < 3; c++)
	{
		const int	cols = (int[]) {3, 4, 7}[c];

		run_rwr_columns(&g, 2, sources, cols, ITERATIONS, NULL, 0, multi, NULL, NULL, &st);
		differ = 0;
		for (int j = 0; j < cols; j++)
		{
			run_rwr_columns(&g, 1, sources + j, 1, ITERATIONS, NULL, 0, single, NULL, NULL, &st1);
			for (int64_t v = 0; v < g.n_nodes; v++)
				differ += multi[v * cols + j] != single[v];
		}
		CHECKF(differ == 0, "%lld scores of %d columns differ from single runs", (long long) differ,
			   cols);
	}

	/* the top 5 of each column */
	run_rwr_columns(&g, 2, sources, K, ITERATIONS, NULL, TOP, NULL, index, value, &st);
	differ = 0;
	for (int j = 0; j < K; j++)
	{
		run_rwr_columns(&g, 1, sources + j, 1, ITERATIONS, NULL, TOP, NULL, index1, value1, &st1);
		for (int i = 0; i < TOP; i++)
			differ += index[j * TOP + i] != index1[i] || value[j * TOP + i] != value1[i];
	}
	CHECKF(differ == 0, "%lld top entries differ from single runs", (long long) differ);

	/* from a start vector: column j starts at its own vector */
	for (int64_t v = 0; v < g.n_nodes; v++)
		for (int j = 0; j < K; j++)
			start[v * K + j] = v % (j + 2) == 0 ? 1.0 : 0.0;
	for (int j = 0; j < K; j++)
	{
		double		sum = 0.0;

		for (int64_t v = 0; v < g.n_nodes; v++)
			sum += start[v * K + j];
		for (int64_t v = 0; v < g.n_nodes; v++)
			start[v * K + j] /= sum;
	}
	run_rwr_columns(&g, 2, sources, K, ITERATIONS, start, 0, multi, NULL, NULL, &st);
	differ = 0;
	for (int j = 0; j < K; j++)
	{
		for (int64_t v = 0; v < g.n_nodes; v++)
			start1[v] = start[v * K + j];
		run_rwr_columns(&g, 1, sources + j, 1, ITERATIONS, start1, 0, single, NULL, NULL, &st1);
		for (int64_t v = 0; v < g.n_nodes; v++)
			differ += multi[v * K + j] != single[v];
	}
	CHECKF(differ == 0, "%lld scores from a start vector differ from single runs",
		   (long long) differ);
	free(multi);
	free(single);
	free(start);
	free(start1);
	pr_graph_free(&g, &pr_malloc_allocator);
	edges_free(&e);
}

/*
 * The update and residual of k columns (groups of 8, 4, 2 and 1: k = 15) are, column by column,
 * those of a one-column engine given the same y, x and restart, bit for bit: the scores after the
 * update, each column's L1 and largest |y - x| (a NaN in one column's y among them, which the
 * largest ignores there as in the one-column engine).
 */
void
test_cpu_column_update_matches_single(void)
{
	enum {K = 15};
	EdgeList	e;
	PrGraph		g;
	PrError		err;
	PrEngine   *multi,
			   *one;
	PrResidual	res[K],
				res1;
	int64_t		ptr[K + 1],
				ptr1[2] = {0, 1};
	int32_t		node[K];
	double		weight[K],
				one_weight = 1.0;
	double	   *x,
			   *y,
			   *out,
			   *x1,
			   *y1,
			   *out1;
	int64_t		differ = 0;
	uint64_t	state = 91;

	edges_random(&e, 60000, 9000, 0, 1, false, 71);
	CHECK(pr_graph_build(e.src, e.dst, NULL, e.m, NULL, &pr_malloc_allocator, &g, &err) == PR_OK);
	x = malloc(sizeof(double) * (size_t) g.n_nodes * K);
	y = malloc(sizeof(double) * (size_t) g.n_nodes * K);
	out = malloc(sizeof(double) * (size_t) g.n_nodes * K);
	x1 = malloc(sizeof(double) * (size_t) g.n_nodes);
	y1 = malloc(sizeof(double) * (size_t) g.n_nodes);
	out1 = malloc(sizeof(double) * (size_t) g.n_nodes);
	for (int64_t i = 0; i < g.n_nodes * K; i++)
	{
		x[i] = (double) (test_rand(&state) >> 11) / 9007199254740992.0 / (double) g.n_nodes;
		y[i] = (double) (test_rand(&state) >> 11) / 9007199254740992.0 / (double) g.n_nodes;
	}
	y[5 * K + 3] = NAN;
	for (int j = 0; j <= K; j++)
		ptr[j] = j;
	for (int j = 0; j < K; j++)
	{
		node[j] = (int32_t) (j * 37 % g.n_nodes);
		weight[j] = 1.0;
	}

	multi = pr_cpu_engine_create(2, &pr_malloc_allocator, &err);
	one = pr_cpu_engine_create(2, &pr_malloc_allocator, &err);
	CHECK(multi != NULL && one != NULL);
	CHECK(multi->ops->prepare(multi, &g, K, 2, PR_NEED_PULL_NORMALIZED, &err) == PR_OK);
	CHECK(one->ops->prepare(one, &g, 1, 2, PR_NEED_PULL_NORMALIZED, &err) == PR_OK);
	{
		PrRestart	r = {false, K, ptr, node, weight, 0, NULL, NULL};

		CHECK(multi->ops->upload(multi, 0, y, &err) == PR_OK);
		CHECK(multi->ops->upload(multi, 1, x, &err) == PR_OK);
		CHECK(multi->ops->pagerank_update(multi, 0, 1, 0.85, &r, &err) == PR_OK);
		CHECK(multi->ops->residual(multi, res, &err) == PR_OK);
		CHECK(multi->ops->download(multi, 0, out, &err) == PR_OK);
	}
	for (int j = 0; j < K; j++)
	{
		PrRestart	r1 = {false, 1, ptr1, node + j, &one_weight, 0, NULL, NULL};

		for (int64_t v = 0; v < g.n_nodes; v++)
		{
			x1[v] = x[v * K + j];
			y1[v] = y[v * K + j];
		}
		CHECK(one->ops->upload(one, 0, y1, &err) == PR_OK);
		CHECK(one->ops->upload(one, 1, x1, &err) == PR_OK);
		CHECK(one->ops->pagerank_update(one, 0, 1, 0.85, &r1, &err) == PR_OK);
		CHECK(one->ops->residual(one, &res1, &err) == PR_OK);
		CHECK(one->ops->download(one, 0, out1, &err) == PR_OK);
		for (int64_t v = 0; v < g.n_nodes; v++)
			differ += memcmp(&out[v * K + j], &out1[v], sizeof(double)) != 0;
		CHECKF(memcmp(&res[j].l1, &res1.l1, sizeof(double)) == 0 &&
			   memcmp(&res[j].linf, &res1.linf, sizeof(double)) == 0,
			   "column %d: residual %.17g / %.17g, one column %.17g / %.17g", j, res[j].l1,
			   res[j].linf, res1.l1, res1.linf);
	}
	CHECKF(differ == 0, "%lld updated scores differ from one-column updates", (long long) differ);
	multi->ops->release(multi);
	one->ops->release(one);
	free(x);
	free(y);
	free(out);
	free(x1);
	free(y1);
	free(out1);
	pr_graph_free(&g, &pr_malloc_allocator);
	edges_free(&e);
}

/* check_columns_match_single on a weighted and on an unweighted graph. */
void
test_rwr_columns_match_single(void)
{
	check_columns_match_single(true);
	check_columns_match_single(false);
}

/*
 * RWR from the k (<= 8) sources at tolerance 1e-6 (L1) from 1/N and from the warm start on engine:
 * the warm run starts warm, converges in fewer iterations than the cold one (fewer) or no more,
 * and lies within its error bound, and the bound of the tolerance, of the exact answer (the
 * sources' columns of exact, n x stride values, from column first on).  Returns the warm run's
 * iterations; the cold run's through *cold_iterations.
 */
static int
check_warm_against_cold(PrEngine *engine, const PrGraph *g, const int32_t *sources, int k,
						const double *exact, int stride, int first, bool fewer, const char *what,
						int *cold_iterations)
{
	const double ones[8] = {1, 1, 1, 1, 1, 1, 1, 1};
	const int64_t ptr[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
	PrRestart	r = {false, k, ptr, sources, ones, 0, NULL, NULL};
	PrIterOptions o = test_iter_options(1e-6, 1000);
	PrRunStats	st_cold,
				st_warm;
	PrError		err;
	double	   *x = malloc(sizeof(double) * (size_t) g->n_nodes * (size_t) k);
	double		worst = 0.0;

	CHECK(x != NULL && k <= 8);
	CHECK(pr_pagerank(engine, g, 0.85, &r, &o, x, &st_cold, &err) == PR_OK && st_cold.converged);
	o.warm_start = true;
	CHECK(pr_pagerank(engine, g, 0.85, &r, &o, x, &st_warm, &err) == PR_OK && st_warm.converged);
	CHECKF(st_warm.warm_started, "%s: not warm-started", what);
	for (int j = 0; j < k; j++)
	{
		double		d = 0.0;

		for (int64_t v = 0; v < g->n_nodes; v++)
			d += fabs(x[(size_t) v * (size_t) k + (size_t) j] -
					  exact[(size_t) v * (size_t) stride + (size_t) (first + j)]);
		worst = fmax(worst, d);
	}
	/* the exact answer's own error (a 1e-13 run) is below 1e-12 */
	CHECKF(worst <= st_warm.error_bound + 1e-12 && worst < 1e-6 * 0.85 / 0.15,
		   "%s: warm start %.3g from the exact answer (bound %.3g)", what, worst,
		   st_warm.error_bound);
	CHECKF(fewer ? st_warm.iterations < st_cold.iterations
		   : st_warm.iterations <= st_cold.iterations,
		   "%s: warm start %d iterations, cold start %d", what, st_warm.iterations,
		   st_cold.iterations);
	free(x);
	*cold_iterations = st_cold.iterations;
	return st_warm.iterations;
}

/*
 * The warm start (PrIterOptions.warm_start) on soc-slashdot0902: RWR from 8 sources in one run
 * meets the same tolerance as the cold start (1/N) in fewer iterations; both lie within the
 * tolerance's error bound of a 1e-13 solve; the engine keeps the far-field vector for the next
 * run, whose answer is the same bits.  A uniform restart ignores the option.
 */
void
test_rwr_warm_start(void)
{
	enum {K = 8};
	char		path[512];
	EdgeList	e;
	PrGraph		g;
	PrError		err;
	int32_t		sources[K];
	const double ones[K] = {1, 1, 1, 1, 1, 1, 1, 1};
	const int64_t ptr[K + 1] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
	PrRestart	r = {false, K, ptr, sources, ones, 0, NULL, NULL};
	PrRestart	uniform = {true, 1, NULL, NULL, NULL, 0, NULL, NULL};
	PrIterOptions cold = test_iter_options(1e-6, 1000);
	PrIterOptions warm = cold;
	PrIterOptions exact = test_iter_options(1e-13, 3000);
	PrRunStats	st_cold,
				st_warm,
				st_again;
	PrEngine   *engine;
	double	   *x_cold,
			   *x_warm,
			   *x_again,
			   *x_exact;
	double		worst_cold = 0.0,
				worst_warm = 0.0,
				worst_pair = 0.0;
	bool		found = false;

	CHECKF(test_data_path("soc-slashdot0902.tsv.gz", path, sizeof(path)) != NULL, "slashdot not found");
	if (test_data_path("soc-slashdot0902.tsv.gz", path, sizeof(path)) == NULL)
		return;
	CHECK(edges_read_tsv(path, &e) && e.m > 0);
	CHECK(pr_graph_build(e.src, e.dst, NULL, e.m, NULL, &pr_malloc_allocator, &g, &err) == PR_OK);
	for (int j = 0; j < K; j++)
	{
		int64_t		v = ((int64_t) (j + 1) * 2654435761LL) % g.n_nodes;

		while (g.out_strength[v] == 0.0)
			v = (v + 1) % g.n_nodes;
		sources[j] = (int32_t) v;
	}
	sources[K - 1] = g.dangling[0];	/* a source without out-edges too */
	warm.warm_start = true;
	x_cold = malloc(sizeof(double) * (size_t) g.n_nodes * K);
	x_warm = malloc(sizeof(double) * (size_t) g.n_nodes * K);
	x_again = malloc(sizeof(double) * (size_t) g.n_nodes * K);
	x_exact = malloc(sizeof(double) * (size_t) g.n_nodes * K);
	engine = pr_cpu_engine_create(2, &pr_malloc_allocator, &err);
	CHECK(engine != NULL);
	CHECK(pr_pagerank(engine, &g, 0.85, &r, &exact, x_exact, &st_cold, &err) == PR_OK && st_cold.converged);
	CHECK(pr_pagerank(engine, &g, 0.85, &r, &cold, x_cold, &st_cold, &err) == PR_OK && st_cold.converged);
	CHECK(!st_cold.warm_started);
	CHECK(engine->ops->far_field(engine, 0, false, &found, &err) == PR_OK && !found);
	CHECK(pr_pagerank(engine, &g, 0.85, &r, &warm, x_warm, &st_warm, &err) == PR_OK && st_warm.converged);
	CHECK(st_warm.warm_started);
	CHECK(engine->ops->far_field(engine, 0, false, &found, &err) == PR_OK && found);
	CHECK(pr_pagerank(engine, &g, 0.85, &r, &warm, x_again, &st_again, &err) == PR_OK && st_again.warm_started);
	CHECK(memcmp(x_warm, x_again, sizeof(double) * (size_t) g.n_nodes * K) == 0);
	for (int j = 0; j < K; j++)
	{
		double		d_cold = 0.0,
					d_warm = 0.0,
					d_pair = 0.0,
					sum = 0.0;

		for (int64_t v = 0; v < g.n_nodes; v++)
		{
			size_t		q = (size_t) v * K + (size_t) j;

			d_cold += fabs(x_cold[q] - x_exact[q]);
			d_warm += fabs(x_warm[q] - x_exact[q]);
			d_pair += fabs(x_warm[q] - x_cold[q]);
			sum += x_warm[q];
		}
		CHECKF(fabs(sum - 1.0) < 1e-12, "column %d sums to %.15g", j, sum);
		worst_cold = fmax(worst_cold, d_cold);
		worst_warm = fmax(worst_warm, d_warm);
		worst_pair = fmax(worst_pair, d_pair);
	}
	/* a change below 1e-6 bounds the error by 1e-6 * 0.85 / 0.15 */
	CHECKF(worst_warm < 1e-6 * 0.85 / 0.15, "warm start: L1 to the exact answer %g", worst_warm);
	CHECKF(worst_cold < 1e-6 * 0.85 / 0.15, "cold start: L1 to the exact answer %g", worst_cold);
	CHECKF(st_warm.iterations < st_cold.iterations, "warm %d iterations, cold %d",
		   st_warm.iterations, st_cold.iterations);
	printf("  slashdot RWR, 8 sources, tolerance 1e-6: cold start %d iterations, warm start %d; "
		   "L1 to the exact answer %.2g (cold), %.2g (warm), warm vs cold %.2g\n",
		   st_cold.iterations, st_warm.iterations, worst_cold, worst_warm, worst_pair);
	/* one source a run: its slow error is about the cold start's, so the stop must not cost more */
	for (int j = 0; j < 3; j++)
	{
		int			cold_its;
		int			warm_its = check_warm_against_cold(engine, &g, &sources[j], 1, x_exact, K, j,
													   false, "slashdot, one source", &cold_its);

		printf("  slashdot RWR from node %d alone: cold start %d iterations, warm start %d\n",
			   sources[j], cold_its, warm_its);
	}
	/* a uniform restart: the option is ignored */
	CHECK(pr_pagerank(engine, &g, 0.85, &uniform, &warm, x_again, &st_again, &err) == PR_OK);
	CHECK(st_again.converged && !st_again.warm_started);
	engine->ops->release(engine);
	free(x_cold);
	free(x_warm);
	free(x_again);
	free(x_exact);
	pr_graph_free(&g, &pr_malloc_allocator);
	edges_free(&e);
}

/*
 * The warm start on the hub graph of the GPU products' tests (gen_hub_edges, seed 13, unweighted)
 * from the sources of their warm-start case: each alone and the 8 in one run (the last a node
 * without out-edges).  Its error first falls ~10x an iteration, then at 0.85 (node 4499's
 * self-loop keeps mass the warm start does not place), about as large as the cold start's: the
 * stop must not count the fast first ratios, or the warm start takes more iterations than 1/N.
 */
void
test_rwr_warm_start_hubs(void)
{
	enum {K = 8};
	size_t		m = gen_hub_edges(13, false, NULL, NULL, NULL);
	int64_t    *src = malloc(sizeof(int64_t) * m);
	int64_t    *dst = malloc(sizeof(int64_t) * m);
	const double ones[K] = {1, 1, 1, 1, 1, 1, 1, 1};
	const int64_t ptr[K + 1] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
	int32_t		sources[K];
	PrRestart	r = {false, K, ptr, sources, ones, 0, NULL, NULL};
	PrIterOptions exact_options = test_iter_options(1e-13, 3000);
	PrRunStats	st;
	PrGraph		g;
	PrError		err;
	PrEngine   *engine = pr_cpu_engine_create(2, &pr_malloc_allocator, &err);
	double	   *exact;
	int			cold_total = 0,
				warm_total = 0,
				cold_its,
				warm_its;

	CHECK(src != NULL && dst != NULL && engine != NULL);
	gen_hub_edges(13, false, src, dst, NULL);
	CHECK(pr_graph_build(src, dst, NULL, m, NULL, &pr_malloc_allocator, &g, &err) == PR_OK);
	for (int j = 0; j < K; j++)
	{
		int64_t		v = ((int64_t) (j + 1) * 2654435761LL) % g.n_nodes;

		while (g.out_strength[v] == 0.0)
			v = (v + 1) % g.n_nodes;
		sources[j] = (int32_t) v;
	}
	sources[K - 1] = g.dangling[0];
	exact = malloc(sizeof(double) * (size_t) g.n_nodes * K);
	CHECK(exact != NULL);
	CHECK(pr_pagerank(engine, &g, 0.85, &r, &exact_options, exact, &st, &err) == PR_OK &&
		  st.converged);
	for (int j = 0; j < K - 1; j++)
	{
		warm_total += check_warm_against_cold(engine, &g, &sources[j], 1, exact, K, j, true,
											  "hubs, one source", &cold_its);
		cold_total += cold_its;
	}
	warm_its = check_warm_against_cold(engine, &g, sources, K, exact, K, 0, true, "hubs, 8 sources",
									   &cold_its);
	printf("  hubs RWR, tolerance 1e-6: 7 sources alone %d iterations cold, %d warm; "
		   "8 in one run %d cold, %d warm\n", cold_total, warm_total, cold_its, warm_its);
	engine->ops->release(engine);
	free(exact);
	free(src);
	free(dst);
	pr_graph_free(&g, &pr_malloc_allocator);
}

/* The warm start on a graph without edges: no far field (P is 0), so the run starts from 1/N. */
void
test_rwr_warm_start_no_edges(void)
{
	const int64_t src[] = {1, 2, 3};
	const int64_t dst[] = {1, 2, 3};
	PrGraph		g;
	PrError		err;
	const int32_t source = 1;
	const double one = 1.0;
	const int64_t ptr[] = {0, 1};
	PrRestart	r = {false, 1, ptr, &source, &one, 0, NULL, NULL};
	PrIterOptions o = test_iter_options(1e-12, 1000);
	PrRunStats	st;
	PrEngine   *engine = pr_cpu_engine_create(1, &pr_malloc_allocator, &err);
	double		x[3];

	/* self-loops only: every node keeps its mass; RWR from node 1 ends at (0, 1, 0) */
	CHECK(pr_graph_build(src, dst, NULL, 3, NULL, &pr_malloc_allocator, &g, &err) == PR_OK);
	o.warm_start = true;
	CHECK(pr_pagerank(engine, &g, 0.85, &r, &o, x, &st, &err) == PR_OK && st.converged);
	CHECK(st.warm_started);
	CHECKF(fabs(x[0]) < 1e-11 && fabs(x[1] - 1.0) < 1e-11 && fabs(x[2]) < 1e-11,
		   "x = (%g, %g, %g)", x[0], x[1], x[2]);
	engine->ops->release(engine);
	pr_graph_free(&g, &pr_malloc_allocator);
}
