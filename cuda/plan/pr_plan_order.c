/*
 * pr_plan_order.c — the hubs-first and the locality node orders (see pr_plan_order.h).
 */
#include "pr_plan_order.h"

#include <stdlib.h>

/* Degrees at or above this share one histogram bucket when the threshold is sought. */
#define HUB_DEGREE_CAP 65536

/* Keeps the keys of about n_hubs largest-degree nodes, zeroes the rest. */
PrStatus
pr_plan_hubs_first_keys(int64_t n, int64_t *key, int64_t n_hubs, int64_t *kept, PrError *err)
{
	int64_t    *count = (int64_t *) calloc(HUB_DEGREE_CAP + 1, sizeof(int64_t));
	int64_t		threshold = HUB_DEGREE_CAP + 1,
				above = 0;

	*kept = 0;
	if (count == NULL)
		return pr_error_set(err, PR_ERR_NOMEM, "hubs-first order: out of host memory");
	for (int64_t i = 0; i < n; i++)
		count[key[i] < HUB_DEGREE_CAP ? key[i] : HUB_DEGREE_CAP]++;
	/* the smallest degree (>= 2) at which the nodes of that degree or more reach n_hubs */
	for (int64_t d = HUB_DEGREE_CAP; d >= 2 && above < n_hubs; d--)
	{
		above += count[d];
		threshold = d;
	}
	free(count);
	for (int64_t i = 0; i < n; i++)
	{
		if (key[i] >= threshold)
			(*kept)++;
		else
			key[i] = 0;
	}
	return PR_OK;
}

/* Numbers the nodes depth-first along the in-edges; see pr_plan_order.h. */
PrStatus
pr_plan_locality_order(const PrPlanCsr *in, int32_t *new_to_old, int32_t *old_to_new, PrError *err)
{
	int64_t		n = in->n,
				numbered = 0;
	/* the walk's path from its root: a node and the next of its in-edges to try */
	int64_t    *cursor = (int64_t *) malloc((size_t) (n + 1) * sizeof(int64_t));
	int32_t    *stack = (int32_t *) malloc((size_t) (n + 1) * sizeof(int32_t));
	/* numbered nodes as bits: the walk tests every entry's source, and n / 8 bytes stay in cache */
	uint64_t   *seen = (uint64_t *) calloc((size_t) (n / 64 + 1), sizeof(uint64_t));

	if (cursor == NULL || stack == NULL || seen == NULL)
	{
		free(cursor);
		free(stack);
		free(seen);
		return pr_error_set(err, PR_ERR_NOMEM, "locality order: out of host memory");
	}
	for (int64_t root = 0; root < n; root++)
	{
		int64_t		depth = 0;

		if (seen[root >> 6] & ((uint64_t) 1 << (root & 63)))
			continue;
		seen[root >> 6] |= (uint64_t) 1 << (root & 63);
		old_to_new[root] = (int32_t) numbered;
		new_to_old[numbered++] = (int32_t) root;
		stack[depth] = (int32_t) root;
		cursor[depth++] = in->ptr[root];
		while (depth > 0)
		{
			int32_t		v = stack[depth - 1];
			int64_t		e = cursor[depth - 1],
						end = in->ptr[v + 1];
			int32_t		u = -1;

			for (; e < end; e++)
			{
				int32_t		c = in->col[e];

				if (!(seen[c >> 6] & ((uint64_t) 1 << (c & 63))))
				{
					u = c;
					break;
				}
			}
			if (u < 0)
			{
				depth--;
				continue;
			}
			cursor[depth - 1] = e + 1;
			seen[u >> 6] |= (uint64_t) 1 << (u & 63);
			old_to_new[u] = (int32_t) numbered;
			new_to_old[numbered++] = u;
			stack[depth] = u;
			cursor[depth++] = in->ptr[u];
		}
	}
	free(cursor);
	free(stack);
	free(seen);
	return PR_OK;
}
