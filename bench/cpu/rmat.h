/*
 * rmat.h — a deterministic R-MAT (Graph500 Kronecker) edge-list generator for the benchmarks.
 */
#ifndef BENCH_RMAT_H
#define BENCH_RMAT_H

#include <stddef.h>
#include <stdint.h>

/*
 * Generates edge_factor * 2^scale R-MAT edges over 2^scale vertices with Graph500 probabilities
 * a = 0.57, b = 0.19, c = 0.19, d = 0.05, relabels vertices by a random permutation, removes
 * duplicate (src, dst) pairs (self-loops stay) and shuffles the edge order.  Everything follows
 * from seed.  Returns the edge count; *src and *dst are malloc()ed (NULL and 0 on failure).
 */
size_t		rmat_generate(int scale, int edge_factor, uint64_t seed, int64_t **src, int64_t **dst);

#endif							/* BENCH_RMAT_H */
