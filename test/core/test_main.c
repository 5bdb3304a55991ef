/*
 * test_main.c — runs every core test case and prints "N passed, N failed" as its last line;
 * exits nonzero if any case failed.  An optional argument runs only cases whose name contains it.
 */
#include "test_util.h"

#include <string.h>

#define TEST_CASES(X) \
	X(test_build_hand_unweighted) \
	X(test_build_hand_weighted) \
	X(test_build_parallel_edges_row_order) \
	X(test_build_zero_weight_dangling) \
	X(test_build_undirected) \
	X(test_build_sparse_ids) \
	X(test_build_random_vs_reference) \
	X(test_add_out_edges_threads) \
	X(test_build_vs_qsort_reference) \
	X(test_build_waves_vs_qsort_reference) \
	X(test_build_stops_when_asked) \
	X(test_build_weight_validation) \
	X(test_build_huge_weights_scaled) \
	X(test_build_subnormal_weights_scaled) \
	X(test_build_empty) \
	X(test_build_allocation_failures) \
	X(test_change_hand) \
	X(test_change_random_vs_reference) \
	X(test_change_warm_start_accuracy) \
	X(test_delta_random) \
	X(test_delta_refusals) \
	X(test_delta_placed) \
	X(test_delta_same_ids) \
	X(test_delta_threads) \
	X(test_delta_from_changes) \
	X(test_delta_merge) \
	X(test_delta_extend_random) \
	X(test_delta_extend_cases) \
	X(test_delta_extend_flat) \
	X(test_delta_extend_threads) \
	X(test_delta_extend_large) \
	X(test_delta_extend_allocation_failures) \
	X(test_delta_root_facts) \
	X(test_cpu_engine_delta) \
	X(test_cpu_engine_absent) \
	X(test_flat_round_trip) \
	X(test_flat_parallel_write) \
	X(test_flat_threaded_checks) \
	X(test_flat_corrupt) \
	X(test_flat_fuzz) \
	X(test_flat_fuzz_threaded) \
	X(test_algorithm_table) \
	X(test_algorithm_driver_prepares) \
	X(test_topk_ties) \
	X(test_topk_strided) \
	X(test_topk_vs_sort) \
	X(test_pagerank_vs_dense) \
	X(test_pagerank_duplicates_are_parallel) \
	X(test_personalized_vs_dense) \
	X(test_dangling_distribution) \
	X(test_initial_vector) \
	X(test_rwr_multi_column) \
	X(test_rwr_multi_column_large) \
	X(test_rwr_columns_match_single) \
	X(test_cpu_column_update_matches_single) \
	X(test_rwr_warm_start) \
	X(test_rwr_warm_start_no_edges) \
	X(test_rwr_warm_start_hubs) \
	X(test_hits_vs_dense) \
	X(test_hits_needs_out_edges) \
	X(test_hits_zero_weights) \
	X(test_determinism) \
	X(test_driver_control) \
	X(test_driver_bad_arguments) \
	X(test_empty_graph_runs) \
	X(test_pagerank_top_matches_full) \
	X(test_cpu_prepare_again) \
	X(test_cpu_given_sorted_rows) \
	X(test_cpu_renumbered_part) \
	X(test_star_tight_tolerance) \
	X(test_star_tight_tolerance_columns) \
	X(test_driver_stagnation) \
	X(test_driver_warm_stop) \
	X(test_mixing_vs_dense) \
	X(test_mixing_safeguard) \
	X(test_certified_top_k_tiny_gap) \
	X(test_certified_early_stop) \
	X(test_mixing_gives_up) \
	X(test_mixing_cost_trial) \
	X(test_mixing_cost_runs) \
	X(test_parts_vs_cpu) \
	X(test_parts_edge_cases) \
	X(test_parts_prepare_again) \
	X(test_parts_exchange) \
	X(test_parts_create) \
	X(test_parts_allocation_failures) \
	X(test_igraph_slashdot) \
	X(test_igraph_enron_undirected)

#define DECLARE(name) void name(void);
TEST_CASES(DECLARE)
#undef DECLARE

typedef struct TestCase
{
	const char *name;
	void		(*fn) (void);
} TestCase;

#define ENTRY(name) {#name, name},
static const TestCase cases[] = {TEST_CASES(ENTRY)};
#undef ENTRY

/* Runs the cases and reports. */
int
main(int argc, char **argv)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (argc == 1 || strstr(cases[i].name, argv[1]) != NULL)
			test_run_case(cases[i].name, cases[i].fn);
	return test_summary();
}
