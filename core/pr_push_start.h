/*
 * pr_push_start.h — brings a start vector closer to a PageRank fixed point before the power
 * iterations, by pushing its residual along out-edges (pure C, no PostgreSQL).
 *
 * A start carried from the fixed point of a slightly different graph (the automatic warm start)
 * is wrong mostly near the changed edges.  The power iterations correct every node at once and
 * need as many iterations to shrink the start's residual 30-fold as they would from any other
 * start; pushing the residual of single nodes — largest first — corrects the nodes whose
 * residual is large at the cost of their out-edges only.  Any start converges to the same answer
 * under the same stopping rule, so this changes only the work, never the answer's bound.
 */
#ifndef PR_PUSH_START_H
#define PR_PUSH_START_H

#include "pr_engine.h"
#include "pr_graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* When pr_push_start stops. */
typedef struct PrPushOptions
{
	double		reduction;		/* the start's residual (L1) divided by this: done (> 1) */
	double		floor;			/* or a residual at most this: done (e.g. the run's tolerance) */
	double		max_visits;		/* at most this many edge visits (node scans counted as visits) */
} PrPushOptions;

/* What pr_push_start did. */
typedef struct PrPushStats
{
	double		residual_before;	/* L1 of T(x) - x for the start given */
	double		residual_after; /* the same for the start returned (before its scaling to sum 1) */
	int64_t		pushes;			/* nodes pushed */
	int64_t		visits;			/* edge visits and node scans */
	bool		reached;		/* stopped by reduction or floor, not by max_visits */
} PrPushStats;

/*
 * Improves x (n values summing to 1, internal ids) as a start of one-column PageRank with damping
 * alpha and restart (k = 1; uniform, or a weighted node list; its dangling distribution when
 * given, else dangling mass follows the restart) on g, which must have its out-edges
 * (pr_graph_add_out_edges).  T(x) = alpha (P x + dangling(x) d) + (1 - alpha) r is the map the
 * driver iterates; the residual T(x) - x is pushed node by node: a node takes its residual into
 * its score and hands alpha times it to its out-neighbours' residuals in proportion to the edge
 * weights (a node of out-strength 0, dangling, to d), in rounds of falling thresholds (a node is pushed when its
 * residual exceeds the threshold times its out-degree, so a push costs about what it moves).
 * Stops when the residual's L1 is at most max(before / reduction, floor) or after max_visits;
 * then x is clamped at 0 and scaled to sum 1.  Single-threaded and deterministic: the same x
 * every time.  PR_ERR_NOMEM when the scratch (21 bytes a node) cannot be had (x untouched).
 */
PrStatus	pr_push_start(const PrGraph *g, double alpha, const PrRestart *restart,
						  const PrPushOptions *options, double *x, PrPushStats *stats,
						  const PrAllocator *alloc, PrError *err);

#ifdef __cplusplus
}
#endif

#endif							/* PR_PUSH_START_H */
