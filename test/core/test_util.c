/*
 * test_util.c — helpers and independent dense references for the core tests.
 */
#define _POSIX_C_SOURCE 200809L

#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/* splitmix64 step. */
uint64_t
test_rand(uint64_t *state)
{
	uint64_t	z = (*state += UINT64_C(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

/* Appends one edge, growing the arrays. */
static void
edges_push(EdgeList *edges, size_t *cap, int64_t s, int64_t d)
{
	if (edges->m == *cap)
	{
		*cap = *cap ? *cap * 2 : 1024;
		edges->src = realloc(edges->src, *cap * sizeof(int64_t));
		edges->dst = realloc(edges->dst, *cap * sizeof(int64_t));
		if (edges->src == NULL || edges->dst == NULL)
		{
			fprintf(stderr, "out of memory reading edges\n");
			exit(2);
		}
	}
	edges->src[edges->m] = s;
	edges->dst[edges->m] = d;
	edges->m++;
}

/* Reads "src<TAB>dst" lines through zlib (which also reads plain files). */
bool
edges_read_tsv(const char *path, EdgeList *edges)
{
	gzFile		f = gzopen(path, "rb");
	char		line[256];
	size_t		cap = 0;

	memset(edges, 0, sizeof(*edges));
	if (f == NULL)
		return false;
	gzbuffer(f, 1 << 20);
	while (gzgets(f, line, sizeof(line)) != NULL)
	{
		char	   *end;
		long long	s,
					d;

		if (line[0] == '#' || line[0] == '\n')
			continue;
		s = strtoll(line, &end, 10);
		d = strtoll(end, NULL, 10);
		edges_push(edges, &cap, s, d);
	}
	gzclose(f);
	return true;
}

/* Random edges with duplicates and self-loops possible; weights in [0, 2) with some zeros. */
void
edges_random(EdgeList *edges, size_t m, int64_t n_ids, int64_t id_base, int64_t stride,
			 bool weighted, uint64_t seed)
{
	uint64_t	state = seed;

	edges->m = m;
	edges->src = malloc(m * sizeof(int64_t));
	edges->dst = malloc(m * sizeof(int64_t));
	edges->weight = weighted ? malloc(m * sizeof(double)) : NULL;
	for (size_t i = 0; i < m; i++)
	{
		/* skew the sources so some ids never appear as a source (dangling) */
		uint64_t	a = test_rand(&state) % (uint64_t) n_ids;
		uint64_t	b = test_rand(&state) % (uint64_t) n_ids;

		if (a % 7 == 3)
			a = (a + 1) % (uint64_t) n_ids;
		edges->src[i] = id_base + stride * (int64_t) a;
		edges->dst[i] = id_base + stride * (int64_t) b;
		if (weighted)
			edges->weight[i] = (test_rand(&state) % 10 == 0) ? 0.0
				: (double) (test_rand(&state) % 2000) / 1000.0;
	}
}

/* Frees an edge list. */
void
edges_free(EdgeList *edges)
{
	free(edges->src);
	free(edges->dst);
	free(edges->weight);
	memset(edges, 0, sizeof(*edges));
}

/* Finds a data file in $POWERRANK_DATA_DIR or test/data (seen from test/core or a sibling folder). */
const char *
test_data_path(const char *name, char *buf, size_t len)
{
	const char *dirs[] = {"../data", "../../test/data"};
	const char *env = getenv("POWERRANK_DATA_DIR");

	if (env != NULL)
	{
		snprintf(buf, len, "%s/%s", env, name);
		if (access(buf, R_OK) == 0)
			return buf;
	}
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
	{
		snprintf(buf, len, "%s/%s", dirs[i], name);
		if (access(buf, R_OK) == 0)
			return buf;
	}
	return NULL;
}

/* qsort comparator of int64 values. */
static int
compare_int64(const void *a, const void *b)
{
	int64_t		x = *(const int64_t *) a,
				y = *(const int64_t *) b;

	return (x > y) - (x < y);
}

/* Sorted distinct endpoints by qsort. */
int64_t
reference_node_ids(const EdgeList *edges, int64_t **ids)
{
	int64_t    *all = malloc((2 * edges->m + 1) * sizeof(int64_t));
	int64_t		n = 0;

	for (size_t i = 0; i < edges->m; i++)
	{
		all[2 * i] = edges->src[i];
		all[2 * i + 1] = edges->dst[i];
	}
	qsort(all, 2 * edges->m, sizeof(int64_t), compare_int64);
	for (size_t i = 0; i < 2 * edges->m; i++)
		if (i == 0 || all[i] != all[i - 1])
			all[n++] = all[i];
	*ids = all;
	return n;
}

/* Index of id by bsearch. */
int64_t
reference_index(const int64_t *ids, int64_t n, int64_t id)
{
	const int64_t *p = bsearch(&id, ids, (size_t) n, sizeof(int64_t), compare_int64);

	return p == NULL ? -1 : p - ids;
}

/* Dense adjacency over the reference ids. */
double *
reference_dense_adjacency(const EdgeList *edges, bool undirected, const int64_t *ids, int64_t n)
{
	double	   *W = calloc((size_t) (n * n), sizeof(double));

	for (size_t i = 0; i < edges->m; i++)
	{
		int64_t		u = reference_index(ids, n, edges->src[i]);
		int64_t		v = reference_index(ids, n, edges->dst[i]);
		double		w = edges->weight != NULL ? edges->weight[i] : 1.0;

		W[u * n + v] += w;
		if (undirected && u != v)
			W[v * n + u] += w;
	}
	return W;
}

/* Dense direct solve of the PageRank linear system. */
void
reference_pagerank(const double *W, int64_t n, double alpha, const double *r, double *x)
{
	double	   *M = calloc((size_t) (n * (n + 1)), sizeof(double));	/* augmented [I - alpha G | b] */
	double	   *rv = malloc((size_t) n * sizeof(double));
	int64_t		cols = n + 1;

	for (int64_t v = 0; v < n; v++)
		rv[v] = r != NULL ? r[v] : 1.0 / (double) n;
	/* G[v][u] = W[u][v] / s(u), or r[v] for a dangling u */
	for (int64_t u = 0; u < n; u++)
	{
		double		s = 0.0;

		for (int64_t v = 0; v < n; v++)
			s += W[u * n + v];
		for (int64_t v = 0; v < n; v++)
		{
			double		g = s > 0.0 ? W[u * n + v] / s : rv[v];

			M[v * cols + u] -= alpha * g;
		}
	}
	for (int64_t v = 0; v < n; v++)
	{
		M[v * cols + v] += 1.0;
		M[v * cols + n] = (1.0 - alpha) * rv[v];
	}
	for (int64_t c = 0; c < n; c++)
	{
		int64_t		p = c;

		for (int64_t i = c + 1; i < n; i++)
			if (fabs(M[i * cols + c]) > fabs(M[p * cols + c]))
				p = i;
		if (p != c)
			for (int64_t j = 0; j < cols; j++)
			{
				double		t = M[c * cols + j];

				M[c * cols + j] = M[p * cols + j];
				M[p * cols + j] = t;
			}
		for (int64_t i = c + 1; i < n; i++)
		{
			double		f = M[i * cols + c] / M[c * cols + c];

			if (f == 0.0)
				continue;
			for (int64_t j = c; j < cols; j++)
				M[i * cols + j] -= f * M[c * cols + j];
		}
	}
	for (int64_t i = n - 1; i >= 0; i--)
	{
		double		s = M[i * cols + n];

		for (int64_t j = i + 1; j < n; j++)
			s -= M[i * cols + j] * x[j];
		x[i] = s / M[i * cols + i];
	}
	free(M);
	free(rv);
}

/* Dense HITS power iteration. */
void
reference_hits(const double *W, int64_t n, int iterations, double *hubs, double *auth)
{
	for (int64_t i = 0; i < n; i++)
		hubs[i] = 1.0 / (double) n;
	for (int it = 0; it < iterations; it++)
	{
		double		sa = 0.0,
					sh = 0.0;

		for (int64_t v = 0; v < n; v++)
		{
			auth[v] = 0.0;
			for (int64_t u = 0; u < n; u++)
				auth[v] += W[u * n + v] * hubs[u];
			sa += auth[v];
		}
		for (int64_t v = 0; v < n; v++)
			auth[v] /= sa;
		for (int64_t u = 0; u < n; u++)
		{
			hubs[u] = 0.0;
			for (int64_t v = 0; v < n; v++)
				hubs[u] += W[u * n + v] * auth[v];
			sh += hubs[u];
		}
		for (int64_t u = 0; u < n; u++)
			hubs[u] /= sh;
	}
}

/* L1 distance. */
double
l1_distance(const double *a, const double *b, size_t n)
{
	double		s = 0.0;

	for (size_t i = 0; i < n; i++)
		s += fabs(a[i] - b[i]);
	return s;
}

/* Allocation that fails when the budget is spent. */
static void *
failing_alloc(void *ctx, size_t size)
{
	FailingAlloc *f = (FailingAlloc *) ctx;
	void	   *p;

	if (f->remaining-- <= 0)
		return NULL;
	p = malloc(size);
	if (p != NULL)
		f->live++;
	return p;
}

/* Free that counts live blocks. */
static void
failing_free(void *ctx, void *ptr)
{
	FailingAlloc *f = (FailingAlloc *) ctx;

	if (ptr != NULL)
	{
		f->live--;
		free(ptr);
	}
}

/* The allocator of a budget. */
PrAllocator
failing_allocator(FailingAlloc *f)
{
	PrAllocator a = {failing_alloc, failing_free, f};

	return a;
}

/* Counts a poll; true from poll number stop_at on (never when stop_at is 0). */
bool
stop_after(void *arg)
{
	StopAfter  *s = (StopAfter *) arg;

	s->polls++;
	return s->stop_at > 0 && s->polls >= s->stop_at;
}

/* Iteration options for tests. */
PrIterOptions
test_iter_options(double tol, int max_iterations)
{
	PrIterOptions o;

	memset(&o, 0, sizeof(o));
	o.tolerance = tol;
	o.norm = PR_NORM_L1;
	o.max_iterations = max_iterations;
	o.check_every = 1;
	return o;
}
