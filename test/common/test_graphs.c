/*
 * test_graphs.c — test graphs and checks shared by the planner unit tests; see test_graphs.h.
 */
#include "test_graphs.h"
#include "test_harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Records one check; see test_graphs.h. */
void
check(bool ok, const char *what, const char *graph)
{
	test_check(ok, "%s on %s", what, graph);
}

/* Builds the CSR (rows = dst) of m edges given as (src, dst) pairs. */
void
graph_from_edges(TestGraph *g, int64_t n, int64_t m, const int32_t *src, const int32_t *dst,
				 bool weighted, uint64_t *rng)
{
	int64_t    *cur = calloc((size_t) n + 1, sizeof(int64_t));

	g->n = n;
	g->m = m;
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
			g->val[p] = (double) (1 + gen_random(rng) % 4);
	}
	free(cur);
}

/* The CSR of a generated graph, named after it; weights drawn from the stream of seed. */
static void
graph_from_spec(TestGraph *g, const GenSpec *spec, bool weighted)
{
	uint64_t	rng = spec->seed;
	int32_t    *src = malloc((size_t) (spec->m + 1) * sizeof(int32_t));
	int32_t    *dst = malloc((size_t) (spec->m + 1) * sizeof(int32_t));

	gen_edges32(spec, src, dst, 1);
	graph_from_edges(g, spec->n, spec->m, src, dst, weighted, &rng);
	gen_describe(spec, g->name, sizeof(g->name));
	if (weighted)
		strncat(g->name, " weighted", sizeof(g->name) - strlen(g->name) - 1);
	free(src);
	free(dst);
}

/* Uniform random graph (duplicates kept: parallel entries). */
void
make_uniform(TestGraph *g, int64_t n, int64_t m, bool weighted, uint64_t seed)
{
	GenSpec		spec = gen_uniform(n, m, seed);

	graph_from_spec(g, &spec, weighted);
}

/* R-MAT graph, optionally with a random id permutation; see test_graphs.h. */
void
make_rmat(TestGraph *g, int scale, int64_t m, bool weighted, bool permute, uint64_t seed)
{
	GenSpec		spec = gen_rmat(scale, m, seed, permute);

	graph_from_spec(g, &spec, weighted);
}

/* Frees a test graph. */
void
graph_free(TestGraph *g)
{
	free(g->ptr);
	free(g->col);
	free(g->val);
}

/* Plain CSR SpMV with an optional column scale; see test_graphs.h. */
void
csr_spmv(const TestGraph *g, const double *scale, const double *x, double *y)
{
	for (int64_t r = 0; r < g->n; r++)
	{
		double		s = 0;

		for (int64_t e = g->ptr[r]; e < g->ptr[r + 1]; e++)
			s += (g->val ? g->val[e] : 1.0) * (scale ? scale[g->col[e]] : 1.0) * x[g->col[e]];
		y[r] = s;
	}
}

/* Exact comparison of two vectors; see test_graphs.h. */
bool
same_vectors(const double *a, const double *b, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return false;
	return true;
}
