/*
 * test_graphs.h — what the planner unit tests (test/plan) share: their check
 * (on the harness of test_harness.h), uniform and R-MAT test graphs (of graph_gen.h) as in-edge CSR,
 * and the plain CSR SpMV every emulated layout is compared with.  Pure C, no GPU.
 */
#ifndef TEST_GRAPHS_H
#define TEST_GRAPHS_H

#include "graph_gen.h"

#include <stdbool.h>
#include <stdint.h>

/* Records one check (test_check); prints "FAIL: what on graph" when ok is false. */
void		check(bool ok, const char *what, const char *graph);

/* A test graph as an in-edge CSR (rows = dst) with optional small integer weights. */
typedef struct TestGraph
{
	int64_t		n;
	int64_t		m;
	int64_t    *ptr;
	int32_t    *col;
	double	   *val;
	char		name[96];
} TestGraph;

/* Builds the CSR of m edges given as (src, dst) pairs; weights 1..4 drawn from rng (gen_random). */
void		graph_from_edges(TestGraph *g, int64_t n, int64_t m, const int32_t *src,
							 const int32_t *dst, bool weighted, uint64_t *rng);

/* Uniform random graph of n nodes and m edges (gen_uniform; duplicates kept: parallel entries). */
void		make_uniform(TestGraph *g, int64_t n, int64_t m, bool weighted, uint64_t seed);

/*
 * R-MAT graph (gen_rmat: Graph500 a=.57, b=.19, c=.19), 2^scale nodes, m edges: heavy skew.
 * permute = true renumbers the nodes by a random permutation.
 */
void		make_rmat(TestGraph *g, int scale, int64_t m, bool weighted, bool permute,
					  uint64_t seed);

/* Frees a test graph. */
void		graph_free(TestGraph *g);

/* Plain CSR SpMV: y[r] = sum over row r of val * scale[col] * x[col] (scale may be NULL). */
void		csr_spmv(const TestGraph *g, const double *scale, const double *x, double *y);

/* Exact comparison of two vectors (the tests' sums are of small integers). */
bool		same_vectors(const double *a, const double *b, int64_t n);

#endif							/* TEST_GRAPHS_H */
