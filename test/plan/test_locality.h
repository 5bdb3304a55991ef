/*
 * test_locality.h — the checks of the planners that keep the graph's own order, run by test_plan.
 */
#ifndef TEST_LOCALITY_H
#define TEST_LOCALITY_H

#include "test_graphs.h"

/* Checks the layout of g and its emulated product at several segment lengths. */
void		test_aligned_coo(const TestGraph *g, uint64_t seed);

/* Checks the row-blocks layout of g and its emulated product. */
void		test_row_blocks(const TestGraph *g, uint64_t seed);

/* Checks the hubs-first order's keys on hand degrees. */
void		test_hubs_first_keys(void);

/* Checks the locality order by hand and on a locality graph with shuffled ids. */
void		test_locality_order(void);

#endif							/* TEST_LOCALITY_H */
