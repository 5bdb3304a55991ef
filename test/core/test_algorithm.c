/*
 * test_algorithm.c — the algorithm descriptors (pr_algorithm.h) against what the driver does: a
 * recording engine (the CPU engine with its prepare and product wrapped) notes the columns, slots
 * and products each run prepares and the products it runs.  Each run prepares exactly its
 * descriptor's slots and products, runs only products it named, the descriptor's count of them per
 * iteration, and fails with one slot fewer (the count is the least the driver needs).
 */
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

/* What the recording engine saw since it was made. */
static struct
{
	const PrEngineOps *inner;	/* the CPU engine's own operations */
	int			prepares;
	int			k;				/* of the last prepare */
	int			n_slots;
	unsigned	needs;
	int			products;		/* product calls */
	unsigned	products_run;	/* PR_NEED_* bits of the products called */
	int			slots_withheld; /* the CPU engine is prepared with this many slots fewer */
} rec;

static PrEngineOps recording_ops;

/* The CPU engine's prepare, recorded. */
static PrStatus
recording_prepare(PrEngine *e, const PrGraph *g, int k, int n_slots, unsigned needs, PrError *err)
{
	rec.prepares++;
	rec.k = k;
	rec.n_slots = n_slots;
	rec.needs = needs;
	return rec.inner->prepare(e, g, k, n_slots - rec.slots_withheld, needs, err);
}

/* The CPU engine's product, recorded. */
static PrStatus
recording_product(PrEngine *e, PrProduct product, int x_slot, int y_slot, PrError *err)
{
	rec.products++;
	rec.products_run |= 1u << product;
	return rec.inner->product(e, product, x_slot, y_slot, err);
}

/* A fresh recording engine (the record cleared) that prepares slots_withheld slots fewer. */
static PrEngine *
recording_engine(int slots_withheld)
{
	PrError		err;
	PrEngine   *e = pr_cpu_engine_create(1, &pr_malloc_allocator, &err);

	if (e == NULL)
	{
		fprintf(stderr, "CPU engine: %s\n", err.message);
		exit(2);
	}
	memset(&rec, 0, sizeof(rec));
	rec.inner = e->ops;
	rec.slots_withheld = slots_withheld;
	recording_ops = *e->ops;
	recording_ops.prepare = recording_prepare;
	recording_ops.product = recording_product;
	e->ops = &recording_ops;
	return e;
}

/* Releases a recording engine. */
static void
recording_release(PrEngine *e)
{
	rec.inner->release(e);
}

/* Checks the record of one run against the descriptor: one prepare of k columns, its slots. */
static void
check_prepared(const char *what, PrAlgorithm kind, bool warm, int k)
{
	const PrAlgorithmInfo *a = pr_algorithm(kind);

	CHECKF(rec.prepares == 1 && rec.k == k, "%s: %d prepares, k %d", what, rec.prepares, rec.k);
	CHECKF(rec.n_slots == pr_algorithm_slots(a, warm), "%s: %d slots, descriptor %d", what,
		   rec.n_slots, pr_algorithm_slots(a, warm));
	CHECKF(rec.needs == a->needs, "%s: needs %#x, descriptor %#x", what, rec.needs, a->needs);
	CHECKF((rec.products_run & ~a->needs) == 0, "%s: ran products %#x, needs %#x", what,
		   rec.products_run, a->needs);
}

/* Checks the products per iteration of a run (one without a warm start) against the descriptor. */
static void
check_products(const char *what, PrAlgorithm kind, const PrRunStats *st)
{
	const PrAlgorithmInfo *a = pr_algorithm(kind);

	CHECKF(st->iterations > 1 && rec.products == a->products * st->iterations,
		   "%s: %d products in %d iterations, descriptor %d per iteration", what, rec.products,
		   st->iterations, a->products);
}

/* A run that was prepared with a slot fewer than the descriptor's failed for want of it. */
static void
check_slot_missing(const char *what, PrStatus status, const PrError *err)
{
	CHECKF(status == PR_ERR_INVALID && strstr(err->message, "vector slot") != NULL,
		   "%s with a slot fewer: %s (%s)", what, pr_status_name(status), err->message);
}

/* The table itself: every algorithm has a row, the helpers read it. */
void
test_algorithm_table(void)
{
	const PrAlgorithmInfo *pagerank = pr_algorithm(PR_ALGORITHM_PAGERANK);
	const PrAlgorithmInfo *hits = pr_algorithm(PR_ALGORITHM_HITS);

	CHECK(pr_algorithm((PrAlgorithm) PR_ALGORITHM_COUNT) == NULL);
	CHECK(pr_algorithm((PrAlgorithm) -1) == NULL);
	for (int kind = 0; kind < PR_ALGORITHM_COUNT; kind++)
	{
		const PrAlgorithmInfo *a = pr_algorithm((PrAlgorithm) kind);

		CHECK(a != NULL && a->name != NULL && a->slots >= 1 && a->warm_slots >= a->slots &&
			  a->needs != 0 && a->products >= 1 && a->results >= 1);
	}
	CHECK(pr_algorithm_columns(pagerank, 5) == 5 && pr_algorithm_columns(hits, 5) == 1);
	CHECK(pr_algorithm_result_rows(pagerank, 10, 3) == 3);
	CHECK(pr_algorithm_result_rows(pagerank, 10, 0) == 10);
	CHECK(pr_algorithm_result_rows(pagerank, 10, 20) == 10);
	CHECK(pr_algorithm_result_rows(hits, 10, 3) == 10);
}

/*
 * Every way the driver prepares an engine — PageRank, RWR over several columns from 1/N and from
 * the warm start, pr_pagerank_top, pr_pagerank_prepare, HITS — against the descriptors.
 */
void
test_algorithm_driver_prepares(void)
{
	enum {K = 3, M = 4000, N_IDS = 800};
	PrBuildOptions build = {false, true, 1, NULL, NULL, NULL};
	EdgeList	e;
	PrGraph		g;
	PrError		err;
	PrEngine   *engine;
	PrRunStats	st;
	PrIterOptions cold = test_iter_options(1e-10, 500);
	PrIterOptions warm = cold;
	PrRestart	uniform = {true, 1, NULL, NULL, NULL, 0, NULL, NULL};
	const int32_t sources[K] = {3, 17, 250};
	const double ones[K] = {1, 1, 1};
	const int64_t ptr[K + 1] = {0, 1, 2, 3};
	PrRestart	rwr = {false, K, ptr, sources, ones, 0, NULL, NULL};
	double	   *x,
			   *y;
	int32_t		index[K * 5];
	double		value[K * 5];
	PrStatus	status;

	warm.warm_start = true;
	edges_random(&e, M, N_IDS, 0, 1, false, 23);
	CHECK(pr_graph_build(e.src, e.dst, NULL, e.m, &build, &pr_malloc_allocator, &g, &err) == PR_OK);
	x = malloc(sizeof(double) * (size_t) g.n_nodes * K);
	y = malloc(sizeof(double) * (size_t) g.n_nodes);

	engine = recording_engine(0);
	CHECK(pr_pagerank(engine, &g, 0.85, &uniform, &cold, x, &st, &err) == PR_OK && st.converged);
	check_prepared("pagerank", PR_ALGORITHM_PAGERANK, false, 1);
	check_products("pagerank", PR_ALGORITHM_PAGERANK, &st);
	recording_release(engine);

	engine = recording_engine(0);
	CHECK(pr_pagerank(engine, &g, 0.85, &rwr, &cold, x, &st, &err) == PR_OK && st.converged);
	check_prepared("rwr", PR_ALGORITHM_PAGERANK, false, K);
	check_products("rwr", PR_ALGORITHM_PAGERANK, &st);
	recording_release(engine);

	engine = recording_engine(0);
	CHECK(pr_pagerank(engine, &g, 0.85, &rwr, &warm, x, &st, &err) == PR_OK && st.warm_started);
	check_prepared("rwr warm", PR_ALGORITHM_PAGERANK, true, K);
	recording_release(engine);

	engine = recording_engine(0);
	CHECK(pr_pagerank_top(engine, &g, 0.85, &rwr, &cold, 5, index, value, &st, &err) == PR_OK);
	check_prepared("rwr top", PR_ALGORITHM_PAGERANK, false, K);
	recording_release(engine);

	engine = recording_engine(0);
	CHECK(pr_pagerank_prepare(engine, &g, 2, &err) == PR_OK);
	check_prepared("pr_pagerank_prepare", PR_ALGORITHM_PAGERANK, false, 2);
	recording_release(engine);

	engine = recording_engine(0);
	CHECK(pr_hits(engine, &g, &cold, x, y, &st, &err) == PR_OK && st.converged);
	check_prepared("hits", PR_ALGORITHM_HITS, false, 1);
	check_products("hits", PR_ALGORITHM_HITS, &st);
	recording_release(engine);

	/* one slot fewer than the descriptor's: each run fails */
	engine = recording_engine(1);
	status = pr_pagerank(engine, &g, 0.85, &uniform, &cold, x, &st, &err);
	check_slot_missing("pagerank", status, &err);
	recording_release(engine);

	engine = recording_engine(1);
	status = pr_pagerank(engine, &g, 0.85, &rwr, &warm, x, &st, &err);
	check_slot_missing("rwr warm", status, &err);
	recording_release(engine);

	engine = recording_engine(1);
	status = pr_hits(engine, &g, &cold, x, y, &st, &err);
	check_slot_missing("hits", status, &err);
	recording_release(engine);

	free(x);
	free(y);
	pr_graph_free(&g, &pr_malloc_allocator);
	edges_free(&e);
}
