/*
 * test_topk.c — pr_top_k: order, ties to the smaller index, k beyond n, strided columns, and
 * agreement with a full sort on random data full of ties.
 */
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

/* Ties go to the smaller index; k > n returns n entries. */
void
test_topk_ties(void)
{
	const double v[] = {0.5, 0.9, 0.5, 0.9, 0.1, 0.7};
	int32_t		out[10];

	CHECK(pr_top_k(v, 6, 1, 0, 3, out, &pr_malloc_allocator) == 3);
	CHECK(out[0] == 1 && out[1] == 3 && out[2] == 5);
	CHECK(pr_top_k(v, 6, 1, 0, 4, out, &pr_malloc_allocator) == 4);
	CHECK(out[3] == 0);
	CHECK(pr_top_k(v, 6, 1, 0, 10, out, &pr_malloc_allocator) == 6);
	CHECK(out[0] == 1 && out[1] == 3 && out[2] == 5 && out[3] == 0 && out[4] == 2 && out[5] == 4);
	CHECK(pr_top_k(v, 6, 1, 0, 0, out, &pr_malloc_allocator) == 0);
	CHECK(pr_top_k(v, 0, 1, 0, 3, out, &pr_malloc_allocator) == 0);
}

/* A column of a row-major n x 3 array. */
void
test_topk_strided(void)
{
	/* column 1 holds 3, 1, 4, 1, 5 */
	const double v[] = {9, 3, 0, 9, 1, 0, 9, 4, 0, 9, 1, 0, 9, 5, 0};
	int32_t		out[5];

	CHECK(pr_top_k(v, 5, 3, 1, 5, out, &pr_malloc_allocator) == 5);
	CHECK(out[0] == 4 && out[1] == 2 && out[2] == 0 && out[3] == 1 && out[4] == 3);
}

/* Values for the qsort comparator below. */
static const double *sort_values;

/* Larger value first, then smaller index. */
static int
compare_rank(const void *a, const void *b)
{
	int32_t		i = *(const int32_t *) a,
				j = *(const int32_t *) b;

	if (sort_values[i] != sort_values[j])
		return sort_values[i] > sort_values[j] ? -1 : 1;
	return (i > j) - (i < j);
}

/* The heap agrees with a full sort for many k on data with many ties. */
void
test_topk_vs_sort(void)
{
	enum {N = 5000};
	double	   *v = malloc(N * sizeof(double));
	int32_t    *order = malloc(N * sizeof(int32_t));
	int32_t    *out = malloc(N * sizeof(int32_t));
	uint64_t	state = 77;
	const int64_t ks[] = {1, 2, 7, 100, 4999, 5000};
	bool		ok = true;

	for (int i = 0; i < N; i++)
	{
		v[i] = (double) (test_rand(&state) % 50);
		order[i] = i;
	}
	sort_values = v;
	qsort(order, N, sizeof(int32_t), compare_rank);
	for (size_t t = 0; t < sizeof(ks) / sizeof(ks[0]); t++)
	{
		int64_t		got = pr_top_k(v, N, 1, 0, ks[t], out, &pr_malloc_allocator);

		if (got != ks[t] || memcmp(out, order, (size_t) got * sizeof(int32_t)) != 0)
			ok = false;
	}
	CHECK(ok);
	free(v);
	free(order);
	free(out);
}
