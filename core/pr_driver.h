/*
 * pr_driver.h — PageRank, personalized PageRank / RWR and HITS, written once over PrEngine.
 *
 * Semantics (the README's contract):
 *  - PageRank, "Google" form as NetworkX: x starts at the uniform 1/N (or at a given vector:
 *    PrIterOptions.initial; or, on request, at the warm start of a restart that is not uniform:
 *    see PrIterOptions.warm_start),
 *    x' = alpha * (P x + d * r) + (1 - alpha) * r, with P the column-stochastic pull operator,
 *    d the dangling mass and r the restart distribution (uniform, or the personalization); with
 *    a dangling distribution q (PrRestart.dangling_count > 0), alpha * d * q replaces
 *    alpha * d * r.  Scores sum to 1.
 *  - RWR from source s is PageRank with r = e_s and alpha = 1 - restart probability; many sources
 *    are k columns computed in one pass per iteration, or in batches of the engine's column_batch
 *    columns one after the other (each batch a run of its own: it stops when its columns meet the
 *    stopping rule).
 *  - HITS: a = Aᵀ h, h = A a, each normalised to sum 1 every iteration (NetworkX's normalisation).
 *  - Stopping: after an iteration, residual = |x' - x| in the chosen norm; converged when
 *    residual < tolerance (PR_NORM_L1_SCALED: residual < n * tolerance, as NetworkX does).
 *    With k columns, every column must meet it.  A run that starts elsewhere than 1/N (a start
 *    vector, the warm start) needs more: a residual of 0, or one below the threshold times q, the
 *    smallest ratio so far of a residual to the one checked before it (at most 1; none before the
 *    second check).  The run from 1/N stops at a residual of at least its last ratio times the
 *    threshold, and the error of either run is about its residual / (1 - rate) once it contracts at
 *    the graph's rate, so the run from elsewhere does not end the less accurate.  From a start
 *    vector q counts every ratio and is halved: the half covers a change whose effect decays slower
 *    at first than the run from 1/N ends.  From the warm start q counts only the ratios of
 *    residuals below the threshold, where the run from 1/N ends: the warm start's error first
 *    falls much faster than the graph's rate, and those ratios would make the stop stricter than
 *    the run from 1/N needs (doc/DESIGN.md, "The warm start's stop", which also says where that
 *    reasoning falls short).  Such a run that must end anyway (stagnant, or at max_iterations)
 *    with a residual below the plain threshold has converged.  A run whose residual stops decreasing before that (50 checks bring no new minimum
 *    of the largest L1 residual, or, for PageRank with alpha < 1, whose residual must shrink every
 *    iteration, it repeats exactly: the tolerance is below what rounding lets the iterates reach)
 *    ends at once, not converged, with stats->stagnated set.  PageRank with alpha = 1 (RWR restart
 *    0) is not watched: its residual may stay level for long and still fall later.
 *  - Iterations: plain power iterations, or with PrIterOptions.mixing_depth > 0 Anderson mixing
 *    (pr_mixing.h); the result is always a step's output G(x), its residual |G(x) - x|.
 *  - Bound: PageRank's map G contracts the L1 distance of two vectors of equal sum by the damping
 *    d, so the result y = G(x) of a run lies within d / (1 - d) * |y - x|_1 of the exact answer
 *    x* (|x* - y| <= d |x* - x| <= d (|x* - y| + |y - x|)), whatever x was (a mixed iterate, a
 *    start vector), plus what rounding adds: PrRunStats.error_bound, the largest over columns.
 *  - Certified top-k (pr_pagerank_top, d < 1): the entries' errors sum to at most the bound B, so
 *    two neighbours of the ranking whose values differ by more than B (plus a rounding allowance)
 *    are in the exact order, and the top_k set and order are exact when every neighbouring pair
 *    among the top_k + 1 best is.  A run ranks its columns where it ends and reports whether they
 *    are certified.  With stop_when_certified it ranks from the first check, ends as soon as every
 *    column is certified and, converged but not certified, goes on until the bound falls below the
 *    closest pair's gap; it ends uncertified where rounding alone can explain a gap (a tie), at
 *    stagnation or at max_iterations (PrRunStats.top_k_ties).
 */
#ifndef PR_DRIVER_H
#define PR_DRIVER_H

#include "pr_algorithm.h"
#include "pr_engine.h"
#include "pr_topk.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The stopping norm. */
typedef enum PrNorm
{
	PR_NORM_L1 = 0,				/* sum |x' - x| < tolerance */
	PR_NORM_L1_SCALED,			/* sum |x' - x| < n * tolerance (NetworkX) */
	PR_NORM_LINF				/* max |x' - x| < tolerance */
} PrNorm;

/* Parses "l1", "l1_scaled", "linf"; false for anything else. */
bool		pr_norm_parse(const char *text, PrNorm *norm);

/* Name of a norm, as pr_norm_parse accepts it. */
const char *pr_norm_name(PrNorm norm);

/* Iteration settings shared by every algorithm. */
typedef struct PrIterOptions
{
	double		tolerance;		/* > 0 */
	PrNorm		norm;
	int			max_iterations; /* > 0 */
	int			check_every;	/* read the residual every this many iterations (>= 1) */

	/* Polled between iterations; returning true stops the run with PR_ERR_INTERRUPTED. */
	bool		(*should_stop) (void *arg);
	void	   *stop_arg;

	/*
	 * PageRank with a restart that is not uniform (personalized PageRank, RWR): start from the
	 * warm start (pr_driver.c, "The warm start") instead of 1/N when the engine offers the
	 * operations it needs; otherwise ignored.  The stricter stop of a run not started from 1/N
	 * (see "Stopping" above), so the answer is about as accurate as from 1/N (doc/DESIGN.md,
	 * "The warm start's stop"); it needs fewer iterations when the engine keeps the far-field
	 * vector between runs (the GPU service's resident engines).
	 */
	bool		warm_start;

	/*
	 * PageRank: the start vector, n*k values row-major in internal ids (each column summing to
	 * 1), uploaded instead of the uniform 1/N, with the stricter stop (see "Stopping" above);
	 * NULL: the uniform start (or the warm start).  When given, warm_start is ignored.
	 */
	const double *initial;

	/*
	 * Anderson mixing depth (pr_mixing.h): 0 runs plain power iterations; 1 .. PR_MIX_MAX_DEPTH
	 * mixes that many earlier steps once plain steps contract slowly, on engines that offer
	 * combine and dots.  Mixing reads the residual after every iteration (check_every is then 1).
	 */
	int			mixing_depth;

	/*
	 * pr_pagerank_top with damping < 1: stop as soon as the top_k of every column is certified
	 * (PrRunStats.top_k_certified), even before the tolerance is met, and go on past the
	 * tolerance until it is, or until rounding cannot tell the entries apart.  Without it the run
	 * stops by its stopping rule and reports whether its top_k is certified.
	 */
	bool		stop_when_certified;

	/*
	 * PageRank on an engine serving a delta (PrEngineOps.apply_delta): the delta's absent nodes,
	 * which the stopping rule leaves out of n (PR_NORM_L1_SCALED: (n - absent_nodes) *
	 * tolerance), as a run on X itself counts X's nodes; 0 otherwise.
	 */
	int64_t		absent_nodes;

	/* Called after each residual read (may be NULL): iteration number and residual. */
	void		(*progress) (void *arg, int iteration, double residual);
	void	   *progress_arg;
} PrIterOptions;

/* Whether a run's top_k is certified exact (PrRunStats.top_k_certified). */
typedef enum PrCertified
{
	PR_CERTIFIED_NOT_ASKED = 0,	/* no top_k, HITS, or damping 1: no bound to certify with */
	PR_CERTIFIED_NO,			/* some neighbouring entries lie closer than the bound */
	PR_CERTIFIED_YES			/* the top_k set and order are those of the exact answer */
} PrCertified;

/* What one run did. */
typedef struct PrRunStats
{
	int			iterations;		/* iterations performed (in batches: the most of any batch) */
	double		residual;		/* last residual read, in the chosen norm (max over columns and
								 * batches) */
	bool		converged;
	bool		stagnated;		/* not converged, stopped early: the residual stopped decreasing
								 * (see "Stopping" above), so more iterations would not reach
								 * the tolerance */
	double		seconds;		/* wall time in the driver, prepare included */
	double		prepare_seconds;	/* of which the engine's prepare (layout, upload; ~0 when the
									 * engine kept the graph from an earlier run; every batch's) */
	const char *engine;			/* engine name */
	bool		warm_started;	/* the run started from the warm start (PrIterOptions.warm_start) */
	double		warm_seconds;	/* of which the warm start (the far-field vector included) */
	double		result_seconds;	/* of which handing the result over: the scores' download or
								 * the top-k (every batch's) */
	double		error_bound;	/* PageRank with damping d < 1: the L1 distance of the result to
								 * the exact answer is at most this (see "Bound" above); NaN where
								 * no bound is known (HITS, d = 1) */
	int			mixed_steps;	/* iterations whose next iterate was mixed (pr_mixing.h) */
	int			mixing_fallbacks;	/* column steps whose residual rose, sent back to plain */
	PrCertified top_k_certified;
	int64_t		top_k_ties;		/* neighbouring pairs of the ranked entries (the top_k and the
								 * next) closer than the bound at the end (0 when certified) */
	bool		stopped_certified;	/* ended by stop_when_certified before the tolerance */
} PrRunStats;

/*
 * PageRank / personalized PageRank / RWR.  restart describes k columns (uniform: k = 1).
 * scores receives n*k values row-major.  Not converging is not an error: stats->converged says.
 */
PrStatus	pr_pagerank(PrEngine *engine, const PrGraph *g, double alpha, const PrRestart *restart,
						const PrIterOptions *options, double *scores, PrRunStats *stats,
						PrError *err);

/*
 * PageRank / RWR like pr_pagerank, but only the top_k (>= 1) best nodes of each column come back:
 * with t = min(top_k, n), column j's internal node ids go to index[j*t .. j*t+t-1] and their
 * scores to value[j*t ..], best first in pr_top_k's order (ties to the smaller id).  The engine
 * ranks the columns itself when it offers the top_k operation (a GPU engine then copies t values
 * per column instead of n); otherwise the driver downloads the vector and ranks it.
 */
PrStatus	pr_pagerank_top(PrEngine *engine, const PrGraph *g, double alpha,
							const PrRestart *restart, const PrIterOptions *options, int64_t top_k,
							int32_t *index, double *value, PrRunStats *stats, PrError *err);

/*
 * Prepares engine on g exactly as pr_pagerank / pr_pagerank_top with k columns do, ahead of a run:
 * a later run on the same engine and graph then finds the graph prepared (see PrEngineOps.prepare).
 */
PrStatus	pr_pagerank_prepare(PrEngine *engine, const PrGraph *g, int k, PrError *err);

/*
 * HITS; hubs and authorities receive n values each, each summing to 1.  When no edge has a
 * positive weight (A = 0: every node alike), both are uniform 1/n after 0 iterations.
 */
PrStatus	pr_hits(PrEngine *engine, const PrGraph *g, const PrIterOptions *options,
					double *hubs, double *authorities, PrRunStats *stats, PrError *err);

#ifdef __cplusplus
}
#endif

#endif							/* PR_DRIVER_H */
