/*
 * rmat.c — R-MAT generation: counter-based random numbers (so edge i depends only on the seed and
 * i), a Fisher-Yates vertex permutation, deduplication by radix-sorting (src << 32 | dst) keys,
 * and a final shuffle so the builder sees the edges in no particular order.
 */
#include "rmat.h"

#include <stdlib.h>
#include <string.h>

/* splitmix64: the next value of a 64-bit state. */
static inline uint64_t
mix64(uint64_t *state)
{
	uint64_t	z = (*state += UINT64_C(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

/* Uniform integer in [0, bound) (bound small next to 2^64: the bias is negligible here). */
static inline uint64_t
below(uint64_t *state, uint64_t bound)
{
	return mix64(state) % bound;
}

/* Sorts keys ascending (LSD radix, 16-bit digits), using tmp of the same size. */
static uint64_t *
radix_sort(uint64_t *keys, uint64_t *tmp, size_t n)
{
	size_t	   *count = malloc(65536 * sizeof(size_t));
	uint64_t   *from = keys,
			   *to = tmp;

	for (int pass = 0; pass < 4; pass++)
	{
		int			shift = 16 * pass;
		size_t		sum = 0;

		memset(count, 0, 65536 * sizeof(size_t));
		for (size_t i = 0; i < n; i++)
			count[(from[i] >> shift) & 0xffff]++;
		if (count[(from[0] >> shift) & 0xffff] == n)
			continue;
		for (size_t b = 0; b < 65536; b++)
		{
			size_t		c = count[b];

			count[b] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			to[count[(from[i] >> shift) & 0xffff]++] = from[i];
		{
			uint64_t   *t = from;

			from = to;
			to = t;
		}
	}
	free(count);
	return from;
}

/* See rmat.h. */
size_t
rmat_generate(int scale, int edge_factor, uint64_t seed, int64_t **src, int64_t **dst)
{
	const double a = 0.57,
				b = 0.19,
				c = 0.19;
	uint64_t	n = UINT64_C(1) << scale;
	size_t		m = (size_t) edge_factor * n;
	uint64_t   *keys = malloc(m * sizeof(uint64_t));
	uint64_t   *tmp = malloc(m * sizeof(uint64_t));
	uint32_t   *perm = malloc(n * sizeof(uint32_t));
	uint64_t   *sorted;
	uint64_t	state;
	size_t		unique = 0;

	*src = NULL;
	*dst = NULL;
	if (keys == NULL || tmp == NULL || perm == NULL || scale < 1 || scale > 31)
	{
		free(keys);
		free(tmp);
		free(perm);
		return 0;
	}
	state = seed ^ UINT64_C(0x5DEECE66D);
	for (uint64_t i = 0; i < n; i++)
		perm[i] = (uint32_t) i;
	for (uint64_t i = n - 1; i > 0; i--)
	{
		uint64_t	j = below(&state, i + 1);
		uint32_t	t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	for (size_t e = 0; e < m; e++)
	{
		uint64_t	s = seed * UINT64_C(0x2545F4914F6CDD1D) + e * UINT64_C(0x9E3779B97F4A7C15);
		uint64_t	u = 0,
					v = 0;

		for (int level = 0; level < scale; level++)
		{
			double		r = (double) (mix64(&s) >> 11) * (1.0 / 9007199254740992.0);

			u <<= 1;
			v <<= 1;
			if (r < a)
				;
			else if (r < a + b)
				v |= 1;
			else if (r < a + b + c)
				u |= 1;
			else
			{
				u |= 1;
				v |= 1;
			}
		}
		keys[e] = ((uint64_t) perm[u] << 32) | perm[v];
	}
	free(perm);
	sorted = radix_sort(keys, tmp, m);
	for (size_t i = 0; i < m; i++)
		if (i == 0 || sorted[i] != sorted[i - 1])
			sorted[unique++] = sorted[i];
	/* shuffle the edge order */
	for (size_t i = unique - 1; i > 0; i--)
	{
		size_t		j = (size_t) below(&state, i + 1);
		uint64_t	t = sorted[i];

		sorted[i] = sorted[j];
		sorted[j] = t;
	}
	*src = malloc(unique * sizeof(int64_t));
	*dst = malloc(unique * sizeof(int64_t));
	if (*src != NULL && *dst != NULL)
		for (size_t i = 0; i < unique; i++)
		{
			(*src)[i] = (int64_t) (sorted[i] >> 32);
			(*dst)[i] = (int64_t) (sorted[i] & 0xffffffffu);
		}
	free(keys);
	free(tmp);
	if (*src == NULL || *dst == NULL)
	{
		free(*src);
		free(*dst);
		*src = *dst = NULL;
		return 0;
	}
	return unique;
}
