/*
 * test_parts.c — the parts engine (core/pr_parts.c): 2, 3 and 4 one-thread CPU engines behind one
 * engine against the plain CPU engine, through the same driver calls (PageRank weighted or not,
 * every stopping norm, personalized PageRank, RWR of 3 and of 10 columns, its warm start, a
 * dangling distribution, a start vector, top-k, HITS), on graphs of the tests' generator
 * (graph_gen.h) and on edge cases (fewer nodes than parts, no edges, no nodes, a star whose edges
 * all fall to one part); prepare kept on the same graph and redone on another; its creation,
 * operations and errors; an exchange that does nothing, whose wrong answers show that these
 * comparisons see a broken exchange; every allocation failure.
 */
#include "test_util.h"

#include "graph_gen.h"
#include "pr_parts.h"

#include <stdlib.h>
#include <string.h>

/* Largest L1 distance between the parts engine's answers and the CPU engine's. */
#define PARTS_SLACK 1e-12

/* A one-thread CPU engine over alloc (exits when it cannot be made). */
static PrEngine *
cpu_engine(const PrAllocator *alloc)
{
	PrError		err;
	PrEngine   *e = pr_cpu_engine_create(1, alloc, &err);

	if (e == NULL)
	{
		fprintf(stderr, "CPU engine: %s\n", err.message);
		exit(2);
	}
	return e;
}

/* A parts engine over n_parts one-thread CPU engines, with exchange (NULL: the generic one). */
static PrEngine *
parts_engine(int n_parts, const PrPartsExchange *exchange)
{
	PrEngine   *parts[PR_PARTS_MAX];
	PrError		err;
	PrEngine   *e;

	for (int p = 0; p < n_parts; p++)
		parts[p] = cpu_engine(&pr_malloc_allocator);
	e = pr_parts_engine_create(parts, n_parts, exchange, "cpu", &pr_malloc_allocator, &err);
	if (e == NULL)
	{
		fprintf(stderr, "parts engine: %s\n", err.message);
		exit(2);
	}
	return e;
}

/* Builds g, with out-edges, from m rows (exits on failure). */
static void
build_graph(const int64_t *src, const int64_t *dst, const double *weight, size_t m, PrGraph *g)
{
	PrBuildOptions opt = {false, true, 1, NULL, NULL, NULL};
	PrError		err;

	if (pr_graph_build(src, dst, weight, m, &opt, &pr_malloc_allocator, g, &err) != PR_OK)
	{
		fprintf(stderr, "build failed: %s\n", err.message);
		exit(2);
	}
}

/*
 * The graph of a generator spec; weighted: weights in [0, 2) drawn from the spec's seed, one in
 * eight 0 (more dangling nodes).
 */
static void
generated_graph(const GenSpec *spec, bool weighted, PrGraph *g)
{
	int64_t    *src = malloc(sizeof(int64_t) * (size_t) spec->m);
	int64_t    *dst = malloc(sizeof(int64_t) * (size_t) spec->m);
	double	   *weight = weighted ? malloc(sizeof(double) * (size_t) spec->m) : NULL;
	uint64_t	state = spec->seed;

	gen_edges(spec, src, dst, 1);
	for (int64_t i = 0; weighted && i < spec->m; i++)
		weight[i] = gen_random(&state) % 8 == 0 ? 0.0 : 2.0 * gen_unit(&state);
	build_graph(src, dst, weight, (size_t) spec->m, g);
	free(src);
	free(dst);
	free(weight);
}

/*
 * Runs PageRank (top_k 0) or pr_pagerank_top (top_k > 0) with the same arguments on a fresh CPU
 * engine and on parts; checks that the answers agree within PARTS_SLACK (top-k: the same ids in
 * the same order) after the same iterations with the same outcome.
 */
static void
check_pagerank_same(PrEngine *parts, const PrGraph *g, double alpha, const PrRestart *r,
					const PrIterOptions *o, int64_t top_k, const char *what)
{
	int			k = r->uniform ? 1 : r->k;
	int64_t		rows = top_k > 0 ? (top_k < g->n_nodes ? top_k : g->n_nodes) : g->n_nodes;
	size_t		count = (size_t) (rows * k);
	double	   *want = calloc(count + 1, sizeof(double));
	double	   *got = calloc(count + 1, sizeof(double));
	int32_t    *want_ids = calloc(count + 1, sizeof(int32_t));
	int32_t    *got_ids = calloc(count + 1, sizeof(int32_t));
	PrEngine   *cpu = cpu_engine(&pr_malloc_allocator);
	PrRunStats	ref,
				st;
	PrError		err;
	PrStatus	status;

	status = top_k > 0 ? pr_pagerank_top(cpu, g, alpha, r, o, top_k, want_ids, want, &ref, &err)
		: pr_pagerank(cpu, g, alpha, r, o, want, &ref, &err);
	CHECKF(status == PR_OK, "%s: CPU engine: %s", what, err.message);
	status = top_k > 0 ? pr_pagerank_top(parts, g, alpha, r, o, top_k, got_ids, got, &st, &err)
		: pr_pagerank(parts, g, alpha, r, o, got, &st, &err);
	CHECKF(status == PR_OK, "%s on %s: %s", what, parts->ops->name, err.message);
	CHECKF(l1_distance(want, got, count) <= PARTS_SLACK, "%s on %s: L1 %g", what,
		   parts->ops->name, l1_distance(want, got, count));
	CHECKF(memcmp(want_ids, got_ids, sizeof(int32_t) * count) == 0, "%s on %s: other top ids",
		   what, parts->ops->name);
	CHECKF(st.iterations == ref.iterations && st.converged == ref.converged &&
		   st.warm_started == ref.warm_started,
		   "%s on %s: %d iterations (converged %d, warm %d), CPU engine %d (%d, %d)", what,
		   parts->ops->name, st.iterations, st.converged, st.warm_started, ref.iterations,
		   ref.converged, ref.warm_started);
	CHECK(strcmp(st.engine, parts->ops->name) == 0);
	cpu->ops->release(cpu);
	free(want);
	free(got);
	free(want_ids);
	free(got_ids);
}

/* HITS on a fresh CPU engine and on parts: the same hubs and authorities after the same iterations. */
static void
check_hits_same(PrEngine *parts, const PrGraph *g, const char *what)
{
	size_t		n = (size_t) g->n_nodes;
	double	   *want = calloc(2 * n + 1, sizeof(double));
	double	   *got = calloc(2 * n + 1, sizeof(double));
	PrEngine   *cpu = cpu_engine(&pr_malloc_allocator);
	PrIterOptions o = test_iter_options(1e-12, 3000);
	PrRunStats	ref,
				st;
	PrError		err;

	CHECKF(pr_hits(cpu, g, &o, want, want + n, &ref, &err) == PR_OK, "%s: %s", what, err.message);
	CHECKF(pr_hits(parts, g, &o, got, got + n, &st, &err) == PR_OK, "%s on %s: %s", what,
		   parts->ops->name, err.message);
	CHECKF(l1_distance(want, got, n) <= PARTS_SLACK && l1_distance(want + n, got + n, n) <= PARTS_SLACK,
		   "%s on %s: hubs L1 %g, authorities L1 %g", what, parts->ops->name,
		   l1_distance(want, got, n), l1_distance(want + n, got + n, n));
	CHECKF(st.iterations == ref.iterations && st.converged == ref.converged,
		   "%s on %s: %d iterations, CPU engine %d", what, parts->ops->name, st.iterations,
		   ref.iterations);
	cpu->ops->release(cpu);
	free(want);
	free(got);
}

/*
 * The split parts reports for g against the rule: ranges in order over every row, each part
 * ceil(n / parts) rows and the last the rest; every edge in one part graph; each part about its
 * share of the edges (within the largest row's in-edges and a quarter of a share: the tail's rows
 * are dealt in turn, whatever their in-edges).
 */
static void
check_split(PrEngine *parts, const PrGraph *g, const char *what)
{
	PrPartsReport r;
	PrError		err;
	int64_t		n = g->n_nodes;
	int64_t		m = g->in_ptr[n];
	int64_t		largest = 0,
				edges = 0;

	for (int64_t v = 0; v < n; v++)
		largest = g->in_ptr[v + 1] - g->in_ptr[v] > largest ? g->in_ptr[v + 1] - g->in_ptr[v] : largest;
	CHECK(pr_parts_engine_report(parts, &r, &err) == PR_OK);
	CHECK(r.row_begin[0] == 0 && r.row_begin[r.n_parts] == n);
	CHECKF(r.rows_owned, "%s: the CPU engine's parts own their rows", what);
	for (int p = 0; p < r.n_parts; p++)
	{
		int64_t		each = (n + r.n_parts - 1) / r.n_parts;
		int64_t		want = n - p * each < 0 ? 0 : n - p * each < each ? n - p * each : each;
		int64_t		share = m / r.n_parts;

		edges += r.edges[p];
		CHECKF(r.row_begin[p + 1] - r.row_begin[p] == want, "%s: part %d of %d has %lld rows, not %lld", what,
			   p, r.n_parts, (long long) (r.row_begin[p + 1] - r.row_begin[p]), (long long) want);
		CHECKF(llabs(r.edges[p] - share) <= largest + share / 4 + 1,
			   "%s: part %d of %d has %lld edges, its share %lld", what, p, r.n_parts,
			   (long long) r.edges[p], (long long) share);
	}
	CHECKF(edges == m, "%s: the parts hold %lld edges of %lld", what, (long long) edges, (long long) m);
}

/*
 * Every PageRank variant of the parts engine against the CPU engine on g: uniform with each
 * stopping norm and a residual read every third iteration, personalized, RWR of 3 columns (cold
 * and warm), of 10 columns (two batches), a dangling distribution, a start vector, top-k.
 */
static void
check_pagerank_variants(PrEngine *parts, const PrGraph *g, const char *graph)
{
	int64_t		n = g->n_nodes;
	const int32_t personal_nodes[3] = {0, (int32_t) (n / 2), (int32_t) (n - 1)};
	const double personal_weights[3] = {0.5, 0.3, 0.2};
	const int64_t personal_ptr[2] = {0, 3};
	int32_t		sources[10];
	double		ones[10];
	int64_t		source_ptr[11];
	const int32_t dangling_nodes[2] = {2, 7};
	const double dangling_weights[2] = {0.4, 0.6};
	PrRestart	uniform = {true, 1, NULL, NULL, NULL, 0, NULL, NULL};
	PrRestart	personal = {false, 1, personal_ptr, personal_nodes, personal_weights, 0, NULL, NULL};
	PrRestart	rwr3 = {false, 3, source_ptr, sources, ones, 0, NULL, NULL};
	PrRestart	rwr10 = {false, 10, source_ptr, sources, ones, 0, NULL, NULL};
	PrRestart	dangling = {true, 1, NULL, NULL, NULL, 2, dangling_nodes, dangling_weights};
	PrIterOptions o = test_iter_options(1e-10, 1000);
	double	   *start = malloc(sizeof(double) * (size_t) n);
	double		sum = 0.0;
	char		what[128];

	for (int j = 0; j < 10; j++)
	{
		sources[j] = (int32_t) (n * j / 10);
		ones[j] = 1.0;
		source_ptr[j] = j;
	}
	source_ptr[10] = 10;
	for (int64_t v = 0; v < n; v++)
		sum += start[v] = (double) (v % 5 + 1);
	for (int64_t v = 0; v < n; v++)
		start[v] /= sum;

	for (int norm_number = PR_NORM_L1; norm_number <= PR_NORM_LINF; norm_number++)
	{
		PrNorm		norm = (PrNorm) norm_number;
		PrIterOptions on = o;

		on.norm = norm;
		on.tolerance = norm == PR_NORM_L1 ? 1e-10 : 1e-13;
		on.check_every = norm == PR_NORM_L1_SCALED ? 3 : 1;
		snprintf(what, sizeof(what), "%s: PageRank, %s", graph, pr_norm_name(norm));
		check_pagerank_same(parts, g, 0.85, &uniform, &on, 0, what);
	}
	snprintf(what, sizeof(what), "%s: personalized", graph);
	check_pagerank_same(parts, g, 0.85, &personal, &o, 0, what);
	snprintf(what, sizeof(what), "%s: RWR of 3", graph);
	check_pagerank_same(parts, g, 0.8, &rwr3, &o, 0, what);
	snprintf(what, sizeof(what), "%s: RWR of 10", graph);
	check_pagerank_same(parts, g, 0.8, &rwr10, &o, 0, what);
	snprintf(what, sizeof(what), "%s: dangling distribution", graph);
	check_pagerank_same(parts, g, 0.85, &dangling, &o, 0, what);
	{
		PrIterOptions warm = o;

		warm.warm_start = true;
		snprintf(what, sizeof(what), "%s: RWR of 3, warm start", graph);
		check_pagerank_same(parts, g, 0.8, &rwr3, &warm, 0, what);
	}
	{
		PrIterOptions from = o;

		from.initial = start;
		snprintf(what, sizeof(what), "%s: start vector", graph);
		check_pagerank_same(parts, g, 0.85, &uniform, &from, 0, what);
	}
	{
		PrIterOptions mixed = o;

		/* slow enough to mix: the parts' dots come from part 0, their combines run on every part */
		mixed.mixing_depth = 5;
		snprintf(what, sizeof(what), "%s: PageRank at 0.99, mixed", graph);
		check_pagerank_same(parts, g, 0.99, &uniform, &mixed, 0, what);
		snprintf(what, sizeof(what), "%s: RWR of 3 at 0.95, mixed, top 10", graph);
		check_pagerank_same(parts, g, 0.95, &rwr3, &mixed, 10, what);
	}
	for (int t = 0; t < 4; t++)
	{
		const int64_t top[4] = {1, 10, n, n + 2};

		snprintf(what, sizeof(what), "%s: top %lld", graph, (long long) top[t]);
		check_pagerank_same(parts, g, 0.85, &uniform, &o, top[t], what);
		snprintf(what, sizeof(what), "%s: RWR of 3, top %lld", graph, (long long) top[t]);
		check_pagerank_same(parts, g, 0.8, &rwr3, &o, top[t], what);
	}
	free(start);
}

/* PageRank variants and HITS on 2, 3 and 4 parts against the CPU engine on generated graphs. */
void
test_parts_vs_cpu(void)
{
	GenSpec		rmat = gen_rmat(13, 8 << 13, 41, true);
	GenSpec		uniform = gen_uniform(3000, 15000, 42);
	PrGraph		g_rmat,
				g_uniform;

	generated_graph(&rmat, false, &g_rmat);
	generated_graph(&uniform, true, &g_uniform);
	CHECK(g_rmat.n_nodes > 4096 && g_rmat.n_dangling > 0 && !g_rmat.weighted);
	CHECK(g_uniform.n_dangling > 0 && g_uniform.weighted);
	for (int n_parts = 2; n_parts <= 4; n_parts++)
	{
		PrEngine   *parts = parts_engine(n_parts, NULL);

		check_pagerank_variants(parts, &g_rmat, "R-MAT");
		check_split(parts, &g_rmat, "R-MAT");
		check_pagerank_variants(parts, &g_uniform, "uniform weighted");
		check_split(parts, &g_uniform, "uniform weighted");
		check_hits_same(parts, &g_rmat, "R-MAT HITS");
		check_split(parts, &g_rmat, "R-MAT HITS");
		check_hits_same(parts, &g_uniform, "uniform weighted HITS");
		check_split(parts, &g_uniform, "uniform weighted HITS");
		parts->ops->release(parts);
	}
	pr_graph_free(&g_rmat, &pr_malloc_allocator);
	pr_graph_free(&g_uniform, &pr_malloc_allocator);
}

/*
 * Edge cases on 4 parts: 2 nodes (two parts without rows), a graph of nodes without edges
 * (prepared for the push product too), a graph without nodes, a star whose in-edges all fall to
 * one part's row.
 */
void
test_parts_edge_cases(void)
{
	PrEngine   *parts = parts_engine(4, NULL);
	PrPartsReport report;
	PrError		err;

	{
		const int64_t src[] = {10, 20, 10};
		const int64_t dst[] = {20, 10, 10};
		const double weight[] = {1.0, 2.5, 0.5};
		const int32_t source = 1;
		const double one = 1.0;
		const int64_t ptr[] = {0, 1};
		PrRestart	uniform = {true, 1, NULL, NULL, NULL, 0, NULL, NULL};
		PrRestart	rwr = {false, 1, ptr, &source, &one, 0, NULL, NULL};
		PrIterOptions o = test_iter_options(1e-13, 1000);
		PrGraph		g;

		for (int weighted = 0; weighted < 2; weighted++)
		{
			build_graph(src, dst, weighted ? weight : NULL, 3, &g);
			check_pagerank_same(parts, &g, 0.85, &uniform, &o, 0, "2 nodes");
			check_pagerank_same(parts, &g, 0.85, &rwr, &o, 0, "2 nodes, RWR");
			check_hits_same(parts, &g, "2 nodes, HITS");
			check_split(parts, &g, "2 nodes, HITS");
			CHECK(pr_parts_engine_report(parts, &report, &err) == PR_OK);
			CHECK(report.n_parts == 4 && report.row_begin[0] == 0 && report.row_begin[4] == 2);
			for (int p = 0; p < 4; p++)
				CHECK(report.row_begin[p] <= report.row_begin[p + 1]);
			pr_graph_free(&g, &pr_malloc_allocator);
		}
	}
	{
		/*
		 * Ties the parts' order ranks the other way round: nodes 0 and 1 score the same, but 1
		 * (two out-edges) comes before 0 (one) in the parts' order; 2 and 3 tie too.  Top 3 ends
		 * between scores, top 4 inside the tie of 0 and 1, top 2 inside that of 2 and 3: the
		 * caller's ids decide, as on the CPU engine.
		 */
		const int64_t src[] = {0, 1, 1};
		const int64_t dst[] = {4, 2, 3};
		PrRestart	uniform = {true, 1, NULL, NULL, NULL, 0, NULL, NULL};
		PrIterOptions o = test_iter_options(1e-13, 1000);
		PrGraph		g;

		const int32_t sources[2] = {4, 1};
		const double ones[2] = {1.0, 1.0};
		const int64_t source_ptr[3] = {0, 1, 2};
		PrRestart	rwr = pr_restart_columns(2, source_ptr, sources, ones);

		build_graph(src, dst, NULL, 3, &g);
		for (int64_t top = 1; top <= 5; top++)
		{
			check_pagerank_same(parts, &g, 0.85, &uniform, &o, top, "ties across the parts' order");
			check_pagerank_same(parts, &g, 0.85, &rwr, &o, top, "ties across the parts' order, RWR of 2 columns");
		}
		pr_graph_free(&g, &pr_malloc_allocator);
	}
	{
		int64_t		ids[5] = {1, 2, 3, 4, 5};
		int64_t		ptr[6] = {0, 0, 0, 0, 0, 0};
		double		strength[5] = {0, 0, 0, 0, 0};
		int32_t		dangling[5] = {0, 1, 2, 3, 4};
		PrGraph		g = {5, 0, false, false, ids, ptr, NULL, NULL, NULL, NULL, NULL, strength, 5,
		dangling};
		PrRestart	uniform = {true, 1, NULL, NULL, NULL, 0, NULL, NULL};
		const int32_t source = 3;
		const double one = 1.0;
		const int64_t rptr[] = {0, 1};
		PrRestart	rwr = {false, 1, rptr, &source, &one, 0, NULL, NULL};
		PrIterOptions o = test_iter_options(1e-13, 1000);
		double		y[5];

		check_pagerank_same(parts, &g, 0.85, &uniform, &o, 0, "no edges");
		check_pagerank_same(parts, &g, 0.85, &rwr, &o, 0, "no edges, RWR");
		/* the push product needs no out-edge arrays where there are no edges */
		CHECK(parts->ops->prepare(parts, &g, 1, 3, PR_NEED_PULL | PR_NEED_PUSH, &err) == PR_OK);
		CHECK(parts->ops->fill(parts, 0, 1.0, &err) == PR_OK);
		CHECK(parts->ops->product(parts, PR_PRODUCT_PUSH, 0, 1, &err) == PR_OK);
		CHECK(parts->ops->download(parts, 1, y, &err) == PR_OK);
		for (int v = 0; v < 5; v++)
			CHECK(y[v] == 0.0);
	}
	{
		PrGraph		g;
		PrRestart	uniform = {true, 1, NULL, NULL, NULL, 0, NULL, NULL};
		PrIterOptions o = test_iter_options(1e-13, 1000);
		PrRunStats	st;

		build_graph(NULL, NULL, NULL, 0, &g);
		CHECK(pr_pagerank(parts, &g, 0.85, &uniform, &o, NULL, &st, &err) == PR_OK && st.converged);
		CHECK(pr_pagerank_prepare(parts, &g, 1, &err) == PR_OK);
		CHECK(pr_parts_engine_report(parts, &report, &err) == PR_OK);
		CHECK(report.row_begin[0] == 0 && report.row_begin[4] == 0 && report.edges[0] == 0);
		pr_graph_free(&g, &pr_malloc_allocator);
	}
	{
		enum {LEAVES = 5000};
		int64_t    *src = malloc(sizeof(int64_t) * LEAVES);
		int64_t    *dst = malloc(sizeof(int64_t) * LEAVES);
		PrRestart	uniform = {true, 1, NULL, NULL, NULL, 0, NULL, NULL};
		PrIterOptions o = test_iter_options(1e-13, 1000);
		PrGraph		g;
		int			with_edges = 0;

		/* leaves 0..5000 except the hub 2500, each with one edge to the hub */
		for (int i = 0; i < LEAVES; i++)
		{
			src[i] = i < 2500 ? i : i + 1;
			dst[i] = 2500;
		}
		build_graph(src, dst, NULL, LEAVES, &g);
		check_pagerank_same(parts, &g, 0.85, &uniform, &o, 0, "star");
		CHECK(pr_parts_engine_report(parts, &report, &err) == PR_OK);
		for (int p = 0; p < 4; p++)
			if (report.edges[p] > 0)
			{
				with_edges++;
				CHECK(report.edges[p] == LEAVES);
			}
		CHECK(with_edges == 1);
		check_split(parts, &g, "star");
		check_hits_same(parts, &g, "star HITS");
		check_split(parts, &g, "star HITS");
		pr_graph_free(&g, &pr_malloc_allocator);
		free(src);
		free(dst);
	}
	parts->ops->release(parts);
}

/*
 * Prepared again on the same graph the engine keeps its split and its parts keep their state
 * (the far-field vector of the warm start); on another graph it splits again and is still right,
 * also back on the first graph and between PageRank and HITS.
 */
void
test_parts_prepare_again(void)
{
	GenSpec		spec1 = gen_uniform(2000, 12000, 51);
	GenSpec		spec2 = gen_rmat(11, 8 << 11, 52, true);
	PrGraph		g1,
				g2;
	PrEngine   *parts = parts_engine(3, NULL);
	const int32_t sources[3] = {5, 700, 1400};
	const double ones[3] = {1, 1, 1};
	const int64_t ptr[4] = {0, 1, 2, 3};
	PrRestart	rwr = {false, 3, ptr, sources, ones, 0, NULL, NULL};
	PrRestart	uniform = {true, 1, NULL, NULL, NULL, 0, NULL, NULL};
	PrIterOptions o = test_iter_options(1e-10, 1000);
	PrIterOptions warm = o;
	PrPartsReport first,
				again;
	PrError		err;
	bool		found = false;

	warm.warm_start = true;
	generated_graph(&spec1, false, &g1);
	generated_graph(&spec2, true, &g2);
	CHECK(pr_parts_engine_report(parts, &first, &err) == PR_ERR_INVALID);
	check_pagerank_same(parts, &g1, 0.8, &rwr, &warm, 0, "first graph, warm");
	CHECK(pr_parts_engine_report(parts, &first, &err) == PR_OK);
	CHECK(pr_pagerank_prepare(parts, &g1, 3, &err) == PR_OK);
	CHECK(pr_parts_engine_report(parts, &again, &err) == PR_OK);
	CHECK(memcmp(first.row_begin, again.row_begin, sizeof(first.row_begin)) == 0 &&
		  memcmp(first.edges, again.edges, sizeof(first.edges)) == 0);
	CHECK(again.split_seconds == 0.0);
	CHECK(parts->ops->far_field(parts, 0, false, &found, &err) == PR_OK && found);
	check_pagerank_same(parts, &g1, 0.8, &rwr, &warm, 0, "first graph again, warm");
	check_pagerank_same(parts, &g1, 0.85, &uniform, &o, 0, "first graph, one column");

	CHECK(pr_pagerank_prepare(parts, &g2, 1, &err) == PR_OK);
	CHECK(parts->ops->far_field(parts, 0, false, &found, &err) == PR_OK && !found);
	CHECK(pr_parts_engine_report(parts, &again, &err) == PR_OK);
	CHECK(memcmp(first.row_begin, again.row_begin, sizeof(first.row_begin)) != 0);
	check_pagerank_same(parts, &g2, 0.85, &uniform, &o, 0, "second graph");
	check_hits_same(parts, &g2, "second graph HITS");
	check_pagerank_same(parts, &g2, 0.85, &uniform, &o, 0, "second graph after HITS");
	check_pagerank_same(parts, &g1, 0.8, &rwr, &warm, 0, "first graph, back");
	/* the same restart on another graph: renumbered by that graph's order, not the last one's */
	check_pagerank_same(parts, &g2, 0.8, &rwr, &warm, 0, "second graph, the first graph's restart");
	check_hits_same(parts, &g1, "first graph HITS");
	parts->ops->release(parts);
	pr_graph_free(&g1, &pr_malloc_allocator);
	pr_graph_free(&g2, &pr_malloc_allocator);
}

/* What a test exchange saw: gathers and sums asked for, releases, and the status they answer. */
typedef struct TestExchange
{
	int			gathers;
	int			sums;
	int			releases;
	PrStatus	answer;
} TestExchange;

/* A gather that moves nothing: every part keeps only its own rows of the product. */
static PrStatus
idle_gather(void *arg, PrEngine *const *parts, int n_parts, const int64_t *row_begin, int k,
			int slot, bool product_input, bool *values_moved, PrError *err)
{
	TestExchange *t = (TestExchange *) arg;

	(void) product_input;
	*values_moved = true;
	(void) parts;
	(void) n_parts;
	(void) row_begin;
	(void) k;
	(void) slot;
	t->gathers++;
	if (t->answer != PR_OK)
		return pr_error_set(err, t->answer, "no link between the parts");
	return PR_OK;
}

/* A sum that adds nothing: every part keeps its own partial sums of the product. */
static PrStatus
idle_sum(void *arg, PrEngine *const *parts, int n_parts, int64_t n, int k, int slot, PrError *err)
{
	TestExchange *t = (TestExchange *) arg;

	(void) parts;
	(void) n_parts;
	(void) n;
	(void) k;
	(void) slot;
	t->sums++;
	if (t->answer != PR_OK)
		return pr_error_set(err, t->answer, "no link between the parts");
	return PR_OK;
}

/* Counts the exchange's release. */
static void
count_release(void *arg)
{
	((TestExchange *) arg)->releases++;
}

/*
 * An exchange that does nothing gives answers far from the CPU engine's (so the comparisons above
 * would catch a broken exchange); its gather runs once per pull product and its sum once per
 * push product (HITS: one of each an iteration), its failure comes back, its release runs once
 * with the engine.
 */
void
test_parts_exchange(void)
{
	GenSpec		spec = gen_uniform(1500, 9000, 61);
	PrGraph		g;
	TestExchange t = {0, 0, 0, PR_OK};
	PrPartsExchange exchange = {idle_gather, idle_sum, count_release, &t, NULL};
	PrEngine   *parts = parts_engine(3, &exchange);
	PrEngine   *cpu = cpu_engine(&pr_malloc_allocator);
	PrRestart	uniform = {true, 1, NULL, NULL, NULL, 0, NULL, NULL};
	PrIterOptions o = test_iter_options(1e-10, 1000);
	PrRunStats	st;
	PrError		err;
	double	   *want,
			   *got;

	generated_graph(&spec, false, &g);
	want = malloc(sizeof(double) * (size_t) g.n_nodes);
	got = malloc(sizeof(double) * (size_t) g.n_nodes);
	CHECK(pr_pagerank(cpu, &g, 0.85, &uniform, &o, want, &st, &err) == PR_OK);
	CHECK(pr_pagerank(parts, &g, 0.85, &uniform, &o, got, &st, &err) == PR_OK);
	CHECKF(t.gathers == st.iterations, "%d gathers, %d iterations", t.gathers, st.iterations);
	CHECKF(l1_distance(want, got, (size_t) g.n_nodes) > 0.1, "L1 %g",
		   l1_distance(want, got, (size_t) g.n_nodes));
	CHECK(t.sums == 0);
	{
		size_t		n = (size_t) g.n_nodes;
		double	   *hubs = malloc(sizeof(double) * 2 * n);
		double	   *hubs_parts = malloc(sizeof(double) * 2 * n);
		PrRunStats	ref;
		int			gathers_before = t.gathers;

		CHECK(hubs != NULL && hubs_parts != NULL);
		CHECK(pr_hits(cpu, &g, &o, hubs, hubs + n, &ref, &err) == PR_OK);
		CHECK(pr_hits(parts, &g, &o, hubs_parts, hubs_parts + n, &st, &err) == PR_OK);
		CHECKF(t.sums == st.iterations && t.gathers - gathers_before == st.iterations,
			   "%d sums, %d gathers, %d iterations", t.sums, t.gathers - gathers_before,
			   st.iterations);
		CHECKF(l1_distance(hubs, hubs_parts, n) > 0.1, "hubs L1 %g", l1_distance(hubs, hubs_parts, n));
		free(hubs);
		free(hubs_parts);
	}
	t.answer = PR_ERR_ENGINE;
	CHECK(pr_pagerank(parts, &g, 0.85, &uniform, &o, got, &st, &err) == PR_ERR_ENGINE);
	CHECKF(strcmp(err.message, "the exchange of a vector's rows: no link between the parts") == 0,
		   "%s", err.message);
	CHECK(t.releases == 0);
	parts->ops->release(parts);
	CHECK(t.releases == 1);
	cpu->ops->release(cpu);
	free(want);
	free(got);
	pr_graph_free(&g, &pr_malloc_allocator);
}

/*
 * Creation: the name, the operations offered (only those every part offers; never
 * restart_local), what the engine answers about itself, refusals that still release what they
 * were given, errors named by their part.
 */
void
test_parts_create(void)
{
	FailingAlloc f = {1 << 30, 0};
	PrAllocator counted = failing_allocator(&f);
	TestExchange t = {0, 0, 0, PR_OK};
	PrPartsExchange exchange = {idle_gather, idle_sum, count_release, &t, NULL};
	PrEngine   *parts[PR_PARTS_MAX + 1];
	PrEngine   *cpu = cpu_engine(&pr_malloc_allocator);
	PrEngineOps lacking;
	PrEngine   *e;
	PrError		err;
	PrGraph		g;
	const int64_t src[] = {1, 2, 3};
	const int64_t dst[] = {2, 3, 1};

	/* too few, too many, a missing part: refused, everything given released */
	parts[0] = cpu_engine(&counted);
	CHECK(pr_parts_engine_create(parts, 1, &exchange, "cpu", &counted, &err) == NULL);
	CHECK(err.status == PR_ERR_INVALID && f.live == 0 && t.releases == 1);
	for (int p = 0; p <= PR_PARTS_MAX; p++)
		parts[p] = cpu_engine(&counted);
	CHECK(pr_parts_engine_create(parts, PR_PARTS_MAX + 1, NULL, "cpu", &counted, &err) == NULL);
	CHECK(err.status == PR_ERR_INVALID && f.live == 0);
	parts[0] = cpu_engine(&counted);
	parts[1] = NULL;
	parts[2] = cpu_engine(&counted);
	CHECK(pr_parts_engine_create(parts, 3, NULL, "cpu", &counted, &err) == NULL);
	CHECKF(err.status == PR_ERR_INVALID && strcmp(err.message, "part 1 of 3 is missing") == 0,
		   "%s", err.message);
	CHECK(f.live == 0);

	/* what it says about itself */
	for (int p = 0; p < 3; p++)
		parts[p] = cpu_engine(&counted);
	e = pr_parts_engine_create(parts, 3, NULL, NULL, &counted, &err);
	CHECK(e != NULL && strcmp(e->ops->name, "cpu(3)") == 0);
	CHECK(pr_parts_engine_is(e) && !pr_parts_engine_is(cpu) && !pr_parts_engine_is(NULL));
	CHECK(pr_parts_engine_part(e, 2) == parts[2] && pr_parts_engine_part(e, 3) == NULL &&
		  pr_parts_engine_part(e, -1) == NULL && pr_parts_engine_part(cpu, 0) == NULL);
	CHECK(e->ops->restart_local == NULL && e->ops->top_k_columns == NULL &&
		  e->ops->top_k != NULL && e->ops->product != NULL && e->ops->custom_dangling &&
		  e->ops->column_batch == cpu->ops->column_batch);
	CHECK(e->ops->fill(e, 0, 1.0, &err) == PR_ERR_ENGINE);

	/* a failing part is named */
	build_graph(src, dst, NULL, 3, &g);
	CHECK(pr_pagerank_prepare(e, &g, 1, &err) == PR_OK);
	CHECK(e->ops->product(e, PR_PRODUCT_PULL_NORMALIZED, 1, 1, &err) == PR_ERR_INVALID);
	CHECKF(strcmp(err.message, "part 0 of 3: a product cannot write its input slot") == 0, "%s",
		   err.message);
	{
		PrGraph		without_out;

		CHECK(pr_graph_build(src, dst, NULL, 3, NULL, &pr_malloc_allocator, &without_out, &err) == PR_OK);
		CHECK(!without_out.has_out_edges);
		CHECK(e->ops->prepare(e, &without_out, 1, 3, PR_NEED_PUSH, &err) == PR_ERR_UNSUPPORTED);
		CHECK(strstr(err.message, "out-edge") != NULL);
		pr_graph_free(&without_out, &pr_malloc_allocator);
	}
	e->ops->release(e);
	CHECK(f.live == 0);

	/* an operation one part lacks is not offered; the product needs download with no exchange */
	lacking = *cpu->ops;
	lacking.column_sums = NULL;
	lacking.download = NULL;
	for (int with_exchange = 0; with_exchange < 2; with_exchange++)
	{
		for (int p = 0; p < 2; p++)
			parts[p] = cpu_engine(&counted);
		parts[1]->ops = &lacking;
		e = pr_parts_engine_create(parts, 2, with_exchange ? &exchange : NULL, "cpu", &counted,
								   &err);
		CHECK(e != NULL && e->ops->column_sums == NULL && e->ops->download == NULL &&
			  e->ops->fill != NULL && (e->ops->product != NULL) == (with_exchange == 1));
		e->ops->release(e);
	}
	CHECK(f.live == 0 && t.releases == 2);
	cpu->ops->release(cpu);
	pr_graph_free(&g, &pr_malloc_allocator);
}

/*
 * Every allocation of the parts engine and its parts failing in turn: PR_ERR_NOMEM from creation,
 * PageRank or HITS (which splits the graph again), never a crash, and nothing left allocated
 * once the engine is released.
 */
void
test_parts_allocation_failures(void)
{
	GenSpec		spec = gen_uniform(300, 1500, 71);
	PrGraph		g;
	PrRestart	uniform = {true, 1, NULL, NULL, NULL, 0, NULL, NULL};
	PrIterOptions o = test_iter_options(1e-10, 1000);
	double	   *x;
	bool		done = false;

	generated_graph(&spec, false, &g);
	x = malloc(sizeof(double) * 2 * (size_t) g.n_nodes);
	for (int budget = 0; budget < 2000 && !done; budget++)
	{
		FailingAlloc f = {budget, 0};
		PrAllocator a = failing_allocator(&f);
		PrEngine   *parts[3];
		PrEngine   *e;
		PrError		err;
		PrRunStats	st;
		PrStatus	status = PR_OK;
		int			made = 0;

		while (made < 3 && (parts[made] = pr_cpu_engine_create(1, &a, &err)) != NULL)
			made++;
		if (made < 3)
		{
			for (int p = 0; p < made; p++)
				parts[p]->ops->release(parts[p]);
			CHECK(f.live == 0);
			continue;
		}
		e = pr_parts_engine_create(parts, 3, NULL, "cpu", &a, &err);
		if (e == NULL)
			status = err.status;
		if (e != NULL)
			status = pr_pagerank(e, &g, 0.85, &uniform, &o, x, &st, &err);
		if (e != NULL && status == PR_OK)
			status = pr_hits(e, &g, &o, x, x + g.n_nodes, &st, &err);
		CHECKF(status == PR_OK || status == PR_ERR_NOMEM, "budget %d: %s", budget, err.message);
		done = status == PR_OK;
		if (e != NULL)
			e->ops->release(e);
		CHECKF(f.live == 0, "budget %d leaves %d blocks", budget, f.live);
	}
	CHECK(done);
	free(x);
	pr_graph_free(&g, &pr_malloc_allocator);
}
