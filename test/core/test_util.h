/*
 * test_util.h — independent reference computations and data helpers for the core tests.
 *
 * The cases use the CHECK / CHECKF macros of the shared harness (test/common/test_harness.h).
 * The references here (dense matrices, a direct linear solve, a separate id map) share no code
 * with core/.
 */
#ifndef TEST_UTIL_H
#define TEST_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pr_driver.h"
#include "test_harness.h"

/* An edge list read from a file or made up by a test. */
typedef struct EdgeList
{
	size_t		m;
	int64_t    *src;
	int64_t    *dst;
	double	   *weight;			/* NULL when unweighted */
} EdgeList;

/* Reads a tab-separated "src dst" edge list, gzip-compressed or not; false if unreadable. */
bool		edges_read_tsv(const char *path, EdgeList *edges);

/* A random edge list over ids id_base + stride * [0, n_ids) (deterministic for a seed). */
void		edges_random(EdgeList *edges, size_t m, int64_t n_ids, int64_t id_base, int64_t stride,
						 bool weighted, uint64_t seed);

/* Frees an edge list. */
void		edges_free(EdgeList *edges);

/* Path of a data file ($POWERRANK_DATA_DIR, else test/data), or NULL. */
const char *test_data_path(const char *name, char *buf, size_t len);

/* A small deterministic random number generator (splitmix64). */
uint64_t	test_rand(uint64_t *state);

/* Sorted distinct endpoints of an edge list, found by qsort (independent of pr_graph.c). */
int64_t		reference_node_ids(const EdgeList *edges, int64_t **ids);

/* Index of id in a sorted array (bsearch), or -1. */
int64_t		reference_index(const int64_t *ids, int64_t n, int64_t id);

/*
 * The dense weighted adjacency W[u*n + v] (sum of weights of rows u->v; both directions when
 * undirected, a self-loop once), over the reference ids.
 */
double	   *reference_dense_adjacency(const EdgeList *edges, bool undirected, const int64_t *ids,
									  int64_t n);

/*
 * PageRank by a direct dense solve: x = alpha * (P x + (d . x) r) + (1 - alpha) r, sum x = 1,
 * with r the restart vector (NULL = uniform).  Solved by Gaussian elimination with partial pivoting.
 */
void		reference_pagerank(const double *W, int64_t n, double alpha, const double *r, double *x);

/* HITS by dense power iteration (a = Wᵀh, h = W a, sum-normalised), iterations times. */
void		reference_hits(const double *W, int64_t n, int iterations, double *hubs, double *auth);

/* Sum of |a[i] - b[i]|. */
double		l1_distance(const double *a, const double *b, size_t n);

/* An allocator's budget: allocations left before it fails, and blocks allocated and not freed. */
typedef struct FailingAlloc
{
	int			remaining;
	int			live;
} FailingAlloc;

/* An allocator over malloc that fails once f->remaining allocations are spent, counting f->live. */
PrAllocator failing_allocator(FailingAlloc *f);

/* Default iteration options: tolerance tol, L1 norm, max_iterations, check every iteration. */
PrIterOptions test_iter_options(double tol, int max_iterations);

/* A should_stop's state: it counts its polls and asks to stop at poll number stop_at (0: never). */
typedef struct StopAfter
{
	int			polls;
	int			stop_at;
} StopAfter;

/* The should_stop of the driver's and the build's tests (arg: a StopAfter). */
bool		stop_after(void *arg);

#endif							/* TEST_UTIL_H */
