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

/* A deterministic 64-bit generator (splitmix64). */
uint64_t
next_random(uint64_t *state)
{
	uint64_t	z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
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
			g->val[p] = (double) (1 + next_random(rng) % 4);
	}
	free(cur);
}

/* Uniform random graph (duplicates kept: parallel entries). */
void
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

/* R-MAT graph, optionally with a random id permutation; see test_graphs.h. */
void
make_rmat(TestGraph *g, int scale, int64_t m, bool weighted, bool permute, uint64_t seed)
{
	uint64_t	rng = seed;
	int64_t		n = (int64_t) 1 << scale;
	int32_t    *perm = malloc((size_t) n * sizeof(int32_t));
	int32_t    *src = malloc((size_t) (m + 1) * sizeof(int32_t));
	int32_t    *dst = malloc((size_t) (m + 1) * sizeof(int32_t));

	for (int64_t i = 0; i < n; i++)
		perm[i] = (int32_t) i;
	for (int64_t i = n - 1; permute && i > 0; i--)
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
	snprintf(g->name, sizeof(g->name), "rmat scale=%d m=%lld%s%s seed=%llu", scale, (long long) m,
			 weighted ? " weighted" : "", permute ? "" : " natural ids", (unsigned long long) seed);
	free(perm);
	free(src);
	free(dst);
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
