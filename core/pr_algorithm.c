/*
 * pr_algorithm.c — the table of algorithm descriptors (pr_algorithm.h).
 */
#include "pr_algorithm.h"

#include "pr_engine.h"

/* One row per PrAlgorithm, in its order. */
static const PrAlgorithmInfo algorithms[PR_ALGORITHM_COUNT] = {
	[PR_ALGORITHM_PAGERANK] = {
		.name = "PageRank",
		.slots = PR_N_SLOTS_PAGERANK,
		.warm_slots = PR_N_SLOTS_WARM,
		.needs = PR_NEED_PULL_NORMALIZED,
		.products = 1,
		.restart = true,
		.results = 1,
		.top_k = PR_TOP_K_PER_COLUMN,
	},
	[PR_ALGORITHM_HITS] = {
		.name = "HITS",
		.slots = HITS_N_SLOTS,
		.warm_slots = HITS_N_SLOTS,
		.needs = PR_NEED_PULL | PR_NEED_PUSH,
		.products = 2,			/* a = Aᵀ h (pull), h = A a (push) */
		.restart = false,
		.results = 2,
		.top_k = PR_TOP_K_AFTER_RUN,
	},
};

/* See pr_algorithm.h. */
const PrAlgorithmInfo *
pr_algorithm(PrAlgorithm kind)
{
	if ((int) kind < 0 || (int) kind >= PR_ALGORITHM_COUNT)
		return NULL;
	return &algorithms[kind];
}

/* See pr_algorithm.h. */
int
pr_algorithm_slots(const PrAlgorithmInfo *a, bool warm_start)
{
	return warm_start ? a->warm_slots : a->slots;
}

/* See pr_algorithm.h. */
int
pr_algorithm_columns(const PrAlgorithmInfo *a, int k)
{
	return a->restart ? k : 1;
}

/* See pr_algorithm.h. */
int64_t
pr_algorithm_result_rows(const PrAlgorithmInfo *a, int64_t n, int64_t top_k)
{
	if (a->top_k == PR_TOP_K_PER_COLUMN && top_k > 0 && top_k < n)
		return top_k;
	return n;
}
