/*
 * test_igraph.c — agreement with igraph's C library (PRPACK) on the real graphs: soc-slashdot0902
 * (directed, with self-loops and dangling nodes) and email-enron (undirected).  igraph gets its
 * own vertex numbering from an independent id map (qsort + bsearch); results are compared per
 * external id through pr_graph_find.
 */
#include "test_util.h"

#include <igraph.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* PageRank of an edge list by igraph PRPACK; scores[i] for the i-th smallest external id. */
static bool
igraph_reference(const EdgeList *e, const int64_t *ids, int64_t n, bool directed, double *scores)
{
	igraph_t	graph;
	igraph_vector_int_t edge_vec;
	igraph_vector_t result;
	igraph_real_t value;
	bool		ok = true;

	igraph_vector_int_init(&edge_vec, (igraph_integer_t) (2 * e->m));
	for (size_t i = 0; i < e->m; i++)
	{
		VECTOR(edge_vec)[2 * i] = (igraph_integer_t) reference_index(ids, n, e->src[i]);
		VECTOR(edge_vec)[2 * i + 1] = (igraph_integer_t) reference_index(ids, n, e->dst[i]);
	}
	if (igraph_create(&graph, &edge_vec, (igraph_integer_t) n, directed) != IGRAPH_SUCCESS)
		ok = false;
	igraph_vector_int_destroy(&edge_vec);
	if (!ok)
		return false;
	igraph_vector_init(&result, 0);
	if (igraph_pagerank(&graph, IGRAPH_PAGERANK_ALGO_PRPACK, &result, &value, igraph_vss_all(),
						directed, 0.85, NULL, NULL) != IGRAPH_SUCCESS)
		ok = false;
	else
		for (int64_t i = 0; i < n; i++)
			scores[i] = VECTOR(result)[i];
	igraph_vector_destroy(&result);
	igraph_destroy(&graph);
	return ok;
}

/* Our PageRank to 1e-13 (L1) vs igraph's, on one data file. */
static void
check_file(const char *name, bool undirected, double *l1_out)
{
	char		path[512];
	EdgeList	e;
	PrGraph		g;
	PrError		err;
	PrBuildOptions opt = {undirected, false, 1, NULL, NULL, NULL};
	PrRestart	r = {true, 1, NULL, NULL, NULL, 0, NULL, NULL};
	PrIterOptions o = test_iter_options(1e-13, 1000);
	PrRunStats	st;
	PrEngine   *engine;
	int64_t    *ids;
	int64_t		n;
	double	   *ours,
			   *theirs;
	double		l1 = 0.0,
				sum = 0.0;

	*l1_out = INFINITY;
	CHECKF(test_data_path(name, path, sizeof(path)) != NULL, "data file %s not found", name);
	if (test_data_path(name, path, sizeof(path)) == NULL)
		return;
	CHECK(edges_read_tsv(path, &e) && e.m > 0);
	CHECK(pr_graph_build(e.src, e.dst, NULL, e.m, &opt, &pr_malloc_allocator, &g, &err) == PR_OK);
	n = reference_node_ids(&e, &ids);
	CHECK(n == g.n_nodes);
	ours = malloc(sizeof(double) * (size_t) g.n_nodes);
	theirs = malloc(sizeof(double) * (size_t) n);
	engine = pr_cpu_engine_create(0, &pr_malloc_allocator, &err);
	CHECK(pr_pagerank(engine, &g, 0.85, &r, &o, ours, &st, &err) == PR_OK);
	CHECK(st.converged);
	engine->ops->release(engine);
	CHECK(igraph_reference(&e, ids, n, !undirected, theirs));
	for (int64_t i = 0; i < n; i++)
	{
		int64_t		v = pr_graph_find(&g, ids[i]);

		if (v < 0)
		{
			l1 = INFINITY;
			break;
		}
		l1 += fabs(ours[v] - theirs[i]);
		sum += ours[v];
	}
	CHECKF(l1 <= 1e-9, "%s: L1 distance to igraph %g", name, l1);
	CHECK(fabs(sum - 1.0) < 1e-12);
	printf("  %s: %lld nodes, %lld edges, %d iterations, L1 to igraph PRPACK %.3g\n", name,
		   (long long) g.n_nodes, (long long) g.n_edges, st.iterations, l1);
	*l1_out = l1;
	free(ours);
	free(theirs);
	free(ids);
	pr_graph_free(&g, &pr_malloc_allocator);
	edges_free(&e);
}

/* soc-slashdot0902, directed: self-loops kept, dangling mass spread uniformly, as igraph does. */
void
test_igraph_slashdot(void)
{
	double		l1;

	check_file("soc-slashdot0902.tsv.gz", false, &l1);
}

/* email-enron, undirected. */
void
test_igraph_enron_undirected(void)
{
	double		l1;

	check_file("email-enron.tsv.gz", true, &l1);
}
