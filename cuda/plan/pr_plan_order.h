/*
 * pr_plan_order.h — node orders for the GPU layouts besides the plain degree order of pr_plan.h:
 * pure C11, no CUDA, no PostgreSQL.
 *
 * Hubs first: the nodes read most often (the largest out-degrees, the heads of the pull matrix's
 * busiest columns) move to the front in degree order, where the composite layout's shared-memory
 * tiles and the L2 keep them; every other node keeps its place relative to the others, so the
 * locality of the graph's own ids (insertion, crawl or sign-up order) survives for the rest.
 *
 * Locality: a depth-first walk over the in-edges (pre-order), so the columns a row gathers and
 * those of the rows after it sit close together even when the graph's own ids carry no locality
 * (hashed or randomly assigned ids).  Depth-first keeps a neighbourhood together where a
 * breadth-first walk spreads out along the few long edges of a small-world graph.
 */
#ifndef PR_PLAN_ORDER_H
#define PR_PLAN_ORDER_H

#include "pr_plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Turns out-degrees into the keys of a hubs-first order for pr_plan_degree_order: about n_hubs
 * nodes of the largest degree (at least 2; ties at the threshold all join) keep their degree as
 * key, every other key becomes 0 (pr_plan_degree_order keeps equal keys in id order).  *kept = the
 * number of hubs.
 */
PrStatus	pr_plan_hubs_first_keys(int64_t n, int64_t *key, int64_t n_hubs, int64_t *kept,
									PrError *err);

/*
 * The locality order of the n nodes of a pull CSR in (rows = destinations, columns = their
 * sources): a depth-first walk that starts at the lowest unnumbered id and numbers a node when it
 * first reaches it, going on from each node to its row's first unnumbered source (ascending id);
 * nodes no walk reached start walks of their own.  new_to_old[i] is the old id of new node i,
 * old_to_new its inverse (n entries each).  Sequential: O(n + nnz), the same order on every run;
 * scratch of 12 bytes and a bit a node.
 */
PrStatus	pr_plan_locality_order(const PrPlanCsr *in, int32_t *new_to_old, int32_t *old_to_new,
								   PrError *err);

#ifdef __cplusplus
}
#endif

#endif							/* PR_PLAN_ORDER_H */
