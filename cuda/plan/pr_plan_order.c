/*
 * pr_plan_order.c — the hubs-first node order (see pr_plan_order.h).
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
