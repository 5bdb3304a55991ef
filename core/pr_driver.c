/*
 * pr_driver.c — the power iterations of PageRank / RWR and HITS, written once over PrEngineOps.
 *
 * The driver never touches vectors itself: it asks the engine for products, updates and
 * residuals, reads the residual only every check_every iterations (a GPU engine then stays on the
 * device in between), polls should_stop before every iteration and fills PrRunStats.  The caller
 * owns the engine: the driver prepares it for the run and leaves it prepared; ops->release frees it.
 */
#include "pr_driver.h"

#include "pr_mixing.h"

#include <math.h>
#include <string.h>

/* Power iterations that make the far-field vector (its error shrinks ~5x per iteration on R-MAT). */
#define PR_FAR_FIELD_ITERATIONS 6

/*
 * Residual checks in a row without a new smallest residual after which a run is stagnant.  With
 * damping < 1 the L1 residual of PageRank shrinks by at least the damping factor every iteration
 * in exact arithmetic (the update is a contraction); once rounding dominates it wanders at a
 * floor and new minima come ever more rarely.  With damping 1 (RWR restart 0) it only never
 * grows: it may stay level for as long as mass travels round a cycle, so no test applies.
 */
#define PR_STAGNANT_CHECKS 50

/*
 * HITS is no contraction: its residual may rise for hundreds of iterations before it falls (two
 * nearly equal leading eigenvalues), so a run without a new minimum is stagnant only once its
 * smallest residual is within this many unit roundoffs of the engine, where rounding explains it.
 */
#define PR_HITS_STAGNANT_ROUNDOFFS 1e3

/* What the stagnation test remembers of the residuals read so far. */
typedef struct StagnationWatch
{
	bool		enabled;		/* the test applies to this run */
	bool		repeat_ends;	/* an exact repeat ends the run (a contraction cannot repeat) */
	double		level;			/* stagnant only once best is at most this */
	double		best;			/* smallest residual so far (+inf before the first) */
	double		last;			/* residual of the last check (NaN before the first) */
	int			since_best;		/* checks since best was set */
} StagnationWatch;

/* Where a run starts, which decides its stopping rule (see "Stopping" in pr_driver.h). */
typedef enum RunStart
{
	RUN_FROM_UNIFORM,			/* 1/N: the plain rule */
	RUN_FROM_VECTOR,			/* a start vector (PrIterOptions.initial): the stricter rule */
	RUN_FROM_WARM_START			/* the warm start of RWR: the stricter rule, its ratios read
								 * below the threshold */
} RunStart;

/* What the stopping rule remembers of the residuals read so far. */
typedef struct StopRule
{
	double		threshold;		/* the tolerance in the chosen norm */
	RunStart	start;
	double		smallest_ratio; /* smallest ratio of a residual to the previous check's, of
								 * those the rule counts (+inf before the first) */
	double		previous;		/* residual of the previous check (NaN before the first) */
} StopRule;

/*
 * Rounding allowance of the certified top-k, in unit roundoffs of the engine: each entry of a
 * step's output may be off its exact value by about this many roundoffs of the vector's sum (1),
 * which the residual does not show.  An estimate, not a proof (doc/DESIGN.md, "Certified top-k").
 */
#define PR_CERTIFY_ROUNDOFFS 16.0

/* What a check of the residuals found (check_convergence). */
typedef struct CheckOutcome
{
	bool		checked;		/* a check was due and the residuals were read */
	bool		stalled;		/* the stagnation watch saw the residual stop decreasing */
	double		worst_l1;		/* the largest L1 residual of the columns */
} CheckOutcome;

/* Largest residual allowed when restart weights are checked to sum to 1. */
#define PR_RESTART_SUM_SLACK 1e-9

/* Parses a stopping norm name. */
bool
pr_norm_parse(const char *text, PrNorm *norm)
{
	if (text == NULL)
		return false;
	if (strcmp(text, "l1") == 0)
		*norm = PR_NORM_L1;
	else if (strcmp(text, "l1_scaled") == 0)
		*norm = PR_NORM_L1_SCALED;
	else if (strcmp(text, "linf") == 0)
		*norm = PR_NORM_LINF;
	else
		return false;
	return true;
}

/* Name of a stopping norm. */
const char *
pr_norm_name(PrNorm norm)
{
	switch (norm)
	{
		case PR_NORM_L1:
			return "l1";
		case PR_NORM_L1_SCALED:
			return "l1_scaled";
		case PR_NORM_LINF:
			return "linf";
	}
	return "unknown";
}

/* Checks the iteration settings shared by every algorithm. */
static PrStatus
validate_iter_options(const PrIterOptions *o, PrError *err)
{
	if (o == NULL)
		return pr_error_set(err, PR_ERR_INVALID, "iteration options are missing");
	if (!(o->tolerance > 0.0) || isinf(o->tolerance))
		return pr_error_set(err, PR_ERR_INVALID, "tolerance must be a positive number, not %g",
							o->tolerance);
	if (o->norm != PR_NORM_L1 && o->norm != PR_NORM_L1_SCALED && o->norm != PR_NORM_LINF)
		return pr_error_set(err, PR_ERR_INVALID, "unknown stopping norm %d", (int) o->norm);
	if (o->max_iterations <= 0)
		return pr_error_set(err, PR_ERR_INVALID, "max_iterations must be positive, not %d",
							o->max_iterations);
	if (o->mixing_depth < 0 || o->mixing_depth > PR_MIX_MAX_DEPTH)
		return pr_error_set(err, PR_ERR_INVALID, "the mixing depth must be 0 to %d, not %d",
							PR_MIX_MAX_DEPTH, o->mixing_depth);
	return PR_OK;
}

/* Checks that the graph looks usable (pointers present for its counts). */
static PrStatus
validate_graph(const PrGraph *g, PrError *err)
{
	if (g == NULL)
		return pr_error_set(err, PR_ERR_INVALID, "graph is missing");
	if (g->n_nodes < 0 || g->n_nodes > PR_MAX_NODES || g->n_edges < 0)
		return pr_error_set(err, PR_ERR_INVALID, "graph has impossible counts");
	if (g->n_nodes > 0 && (g->in_ptr == NULL || g->out_strength == NULL ||
						   (g->n_edges > 0 && g->in_src == NULL)))
		return pr_error_set(err, PR_ERR_INVALID, "graph arrays are missing");
	return PR_OK;
}

/* Checks a sparse restart description against the graph: ids in range, weights summing to 1. */
static PrStatus
validate_restart(const PrRestart *r, int64_t n, PrError *err)
{
	if (r->k <= 0)
		return pr_error_set(err, PR_ERR_INVALID, "restart distribution has %d columns", r->k);
	if (r->ptr == NULL || r->ptr[0] != 0 || (r->ptr[r->k] > 0 && (r->node == NULL || r->weight == NULL)))
		return pr_error_set(err, PR_ERR_INVALID, "restart distribution arrays are malformed");
	for (int j = 0; j < r->k; j++)
	{
		double		sum = 0.0;

		if (r->ptr[j + 1] <= r->ptr[j])
			return pr_error_set(err, PR_ERR_INVALID,
								"restart distribution of column %d is empty", j);
		for (int64_t i = r->ptr[j]; i < r->ptr[j + 1]; i++)
		{
			if (r->node[i] < 0 || r->node[i] >= n)
				return pr_error_set(err, PR_ERR_INVALID,
									"restart node %d of column %d is not in the graph",
									(int) r->node[i], j);
			if (!(r->weight[i] >= 0.0) || isinf(r->weight[i]))
				return pr_error_set(err, PR_ERR_INVALID,
									"restart weight %g of column %d must be finite and >= 0",
									r->weight[i], j);
			sum += r->weight[i];
		}
		if (fabs(sum - 1.0) > PR_RESTART_SUM_SLACK)
			return pr_error_set(err, PR_ERR_INVALID,
								"restart weights of column %d sum to %.17g, not 1", j, sum);
	}
	return PR_OK;
}

/* The residual of one column in the chosen norm. */
static inline double
residual_in_norm(const PrResidual *r, PrNorm norm)
{
	return norm == PR_NORM_LINF ? r->linf : r->l1;
}

/* Reads the k residuals; returns the largest in the chosen norm and the largest L1 one. */
static PrStatus
read_residual(PrEngine *e, int k, PrNorm norm, PrResidual *buf, double *worst, double *worst_l1,
			  PrError *err)
{
	PrStatus	status = e->ops->residual(e, buf, err);
	double		w = 0.0,
				w_l1 = 0.0;

	if (status != PR_OK)
		return status;
	for (int j = 0; j < k; j++)
	{
		double		r = residual_in_norm(&buf[j], norm);

		if (r > w || r != r)
			w = r;
		if (buf[j].l1 > w_l1 || buf[j].l1 != buf[j].l1)
			w_l1 = buf[j].l1;
	}
	*worst = w;
	*worst_l1 = w_l1;
	return PR_OK;
}

/*
 * A watch before the first residual: enabled for runs whose residual must keep decreasing until
 * rounding stops it; repeat_ends where an exact repeat can only come from rounding; level the
 * largest smallest residual that may be called stagnant (INFINITY: any).
 */
static void
stagnation_begin(StagnationWatch *watch, bool enabled, bool repeat_ends, double level)
{
	watch->enabled = enabled;
	watch->repeat_ends = repeat_ends;
	watch->level = level;
	watch->best = INFINITY;
	watch->last = NAN;
	watch->since_best = 0;
}

/*
 * Feeds the largest L1 residual of a check to the watch; true when the run is stagnant: the
 * residual repeats that of the previous check exactly where that can only be rounding (the
 * iterates cycle between two states), or PR_STAGNANT_CHECKS checks in a row found no new
 * smallest one and the smallest is at most the watch's level.
 */
static bool
stagnation_seen(StagnationWatch *watch, double l1)
{
	bool		repeated = watch->repeat_ends && l1 == watch->last;

	if (!watch->enabled)
		return false;
	watch->last = l1;
	if (l1 < watch->best)
	{
		watch->best = l1;
		watch->since_best = 0;
		return false;
	}
	watch->since_best++;
	return repeated || (watch->since_best >= PR_STAGNANT_CHECKS && watch->best <= watch->level);
}

/*
 * The stopping rule before the first residual: threshold the tolerance in the chosen norm (n *
 * tolerance for PR_NORM_L1_SCALED); start where the run starts (1/N, a start vector, the warm
 * start).
 */
static void
stop_rule_begin(StopRule *rule, const PrIterOptions *o, int64_t n, RunStart start)
{
	rule->threshold = o->norm == PR_NORM_L1_SCALED ? o->tolerance * (double) n : o->tolerance;
	rule->start = start;
	rule->smallest_ratio = INFINITY;
	rule->previous = NAN;
}

/*
 * Feeds the largest residual of a check (in the chosen norm) to the rule; true when the run has
 * converged: the residual is below the threshold or, for a run started elsewhere than 1/N, exactly
 * 0 or below the threshold times q, the smallest ratio of a residual to the one before it seen so
 * far (at most 1): from a start vector q / 2, every ratio counted; from the warm start q itself,
 * only the ratios of residuals below the threshold counted.  See "Stopping" in pr_driver.h.
 */
static bool
stop_rule_met(StopRule *rule, double residual)
{
	double		previous = rule->previous;
	bool		counted;

	rule->previous = residual;
	if (rule->start == RUN_FROM_UNIFORM)
		return residual < rule->threshold;
	if (residual == 0.0)
		return true;
	counted = previous > 0.0 &&
		(rule->start != RUN_FROM_WARM_START || residual < rule->threshold);
	if (counted && residual / previous < rule->smallest_ratio)
		rule->smallest_ratio = residual / previous;
	return isfinite(rule->smallest_ratio) &&
		residual < rule->threshold * fmin(rule->smallest_ratio, 1.0) *
		(rule->start == RUN_FROM_WARM_START ? 1.0 : 0.5);
}

/* Polls should_stop before an iteration: PR_ERR_INTERRUPTED when the caller asks to stop. */
static PrStatus
poll_stop(const PrIterOptions *o, const PrRunStats *stats, PrError *err)
{
	if (o->should_stop != NULL && o->should_stop(o->stop_arg))
		return pr_error_set(err, PR_ERR_INTERRUPTED, "ranking interrupted after %d iterations",
							stats->iterations);
	return PR_OK;
}

/*
 * After iteration it: when a check is due (every check_every iterations and after the last one),
 * reads the k residuals into buf and stats (residual; converged by the rule), reports progress and
 * feeds the watch; *out says whether it checked, whether the residual stopped decreasing
 * (stats->stagnated when the run has not converged either: it should stop) and the largest L1
 * residual.
 */
static PrStatus
check_convergence(PrEngine *e, int k, const PrIterOptions *o, int it, int check_every,
				  StopRule *rule, PrResidual *buf, StagnationWatch *watch, PrRunStats *stats,
				  CheckOutcome *out, PrError *err)
{
	PrStatus	status;

	memset(out, 0, sizeof(*out));
	if (it % check_every != 0 && it != o->max_iterations)
		return PR_OK;
	out->checked = true;
	status = read_residual(e, k, o->norm, buf, &stats->residual, &out->worst_l1, err);
	if (status == PR_OK)
		stats->converged = stop_rule_met(rule, stats->residual);
	if (status == PR_OK && o->progress != NULL)
		o->progress(o->progress_arg, it, stats->residual);
	if (status == PR_OK && it < o->max_iterations)
	{
		out->stalled = stagnation_seen(watch, out->worst_l1);
		stats->stagnated = out->stalled && !stats->converged;
	}
	if (status == PR_OK && rule->start != RUN_FROM_UNIFORM && !stats->converged &&
		(stats->stagnated || it == o->max_iterations) &&
		stats->residual < rule->threshold)
	{
		/*
		 * A run started elsewhere that must stop (rounding keeps it from the stricter threshold,
		 * or the iterations ran out) meets the tolerance as a run from 1/N would.
		 */
		stats->stagnated = false;
		stats->converged = true;
	}
	return status;
}

/* The engine's unit roundoff (PrEngineOps.unit_roundoff; 0 means double). */
static double
engine_roundoff(const PrEngineOps *ops)
{
	return ops->unit_roundoff > 0.0 ? ops->unit_roundoff : ldexp(1.0, -53);
}

/* Iterations between residual checks: check_every, or 1 when the run may mix (it reads them all). */
static int
check_interval(const PrIterOptions *o)
{
	return o->mixing_depth > 0 ? 1 : o->check_every >= 1 ? o->check_every : 1;
}

/*
 * After a step x -> y at a check or not: the slot of the next iterate (the mixing's, when the
 * residuals were read; else y); when the mixing gave up, the stagnation watch starts again from
 * fresh (the mixed steps' residuals are no measure of plain iteration's stagnation).
 */
static PrStatus
next_iterate(PrMixing *mix, StagnationWatch *watch, const StagnationWatch *fresh, bool checked,
			 int x, int y, const PrResidual *res, int *next, PrError *err)
{
	PrStatus	status = PR_OK;

	if (checked)
		status = pr_mixing_after_step(mix, x, y, res, next, err);
	else
		*next = y;
	if (mix->gave_up)
	{
		*watch = *fresh;
		mix->gave_up = false;
	}
	return status;
}

/* Ends a run's mixing: its counts into the run's statistics, its memory freed. */
static void
mixing_finish(PrMixing *mix, PrRunStats *stats)
{
	stats->mixed_steps = mix->mixed_steps;
	stats->mixing_fallbacks = mix->fallbacks;
	pr_mixing_end(mix);
}

/* Sets the statistics every run reports, whatever its outcome. */
static void
stats_begin(PrRunStats *stats, const PrEngine *e)
{
	memset(stats, 0, sizeof(*stats));
	stats->engine = (e != NULL && e->ops != NULL) ? e->ops->name : "none";
	stats->error_bound = NAN;
}

/*
 * The engine's prepare for a run of algorithm over k columns: the slots (with or without the warm
 * start) and the products its descriptor names.
 */
static PrStatus
prepare_for(PrEngine *engine, const PrGraph *g, PrAlgorithm algorithm, int k, bool warm_start,
			PrError *err)
{
	const PrAlgorithmInfo *a = pr_algorithm(algorithm);

	return engine->ops->prepare(engine, g, k, pr_algorithm_slots(a, warm_start), a->needs, err);
}

/* prepare_for, timed into stats->prepare_seconds. */
static PrStatus
timed_prepare(PrEngine *engine, const PrGraph *g, PrAlgorithm algorithm, int k, bool warm_start,
			  PrRunStats *stats, PrError *err)
{
	double		t0 = pr_clock_seconds();
	PrStatus	status = prepare_for(engine, g, algorithm, k, warm_start, err);

	stats->prepare_seconds = pr_clock_seconds() - t0;
	return status;
}

/* See pr_driver.h. */
PrStatus
pr_pagerank_prepare(PrEngine *engine, const PrGraph *g, int k, PrError *err)
{
	if (engine == NULL || engine->ops == NULL || g == NULL || k < 1)
		return pr_error_set(err, PR_ERR_INVALID, "pr_pagerank_prepare: bad arguments");
	return prepare_for(engine, g, PR_ALGORITHM_PAGERANK, k, false, err);
}

/*
 * What every run checks first: an engine, a usable graph and sane iteration options; also
 * starts the run's statistics.
 */
static PrStatus
begin_run(const PrEngine *engine, const PrGraph *g, const PrIterOptions *options,
		  PrRunStats *stats, PrError *err)
{
	PrStatus	status;

	stats_begin(stats, engine);
	if (engine == NULL || engine->ops == NULL)
		return pr_error_set(err, PR_ERR_INVALID, "no engine given");
	if ((status = validate_graph(g, err)) != PR_OK)
		return status;
	return validate_iter_options(options, err);
}

/*
 * Checks a restart's own dangling distribution (when it has one) against the graph and the
 * engine: ids ascending and in range, weights summing to 1, an engine that takes it.
 */
static PrStatus
validate_dangling(const PrEngine *engine, const PrRestart *r, int64_t n, PrError *err)
{
	double		sum = 0.0;

	if (r->dangling_count == 0)
		return PR_OK;
	if (r->dangling_count < 0 || r->dangling_node == NULL || r->dangling_weight == NULL)
		return pr_error_set(err, PR_ERR_INVALID, "dangling distribution arrays are malformed");
	if (!engine->ops->custom_dangling)
		return pr_error_set(err, PR_ERR_UNSUPPORTED,
							"engine %s does not take a dangling distribution", engine->ops->name);
	for (int64_t i = 0; i < r->dangling_count; i++)
	{
		if (r->dangling_node[i] < 0 || r->dangling_node[i] >= n ||
			(i > 0 && r->dangling_node[i] <= r->dangling_node[i - 1]))
			return pr_error_set(err, PR_ERR_INVALID,
								"dangling node %d is not in the graph or out of order",
								(int) r->dangling_node[i]);
		if (!(r->dangling_weight[i] >= 0.0) || isinf(r->dangling_weight[i]))
			return pr_error_set(err, PR_ERR_INVALID,
								"dangling weight %g must be finite and >= 0",
								r->dangling_weight[i]);
		sum += r->dangling_weight[i];
	}
	if (fabs(sum - 1.0) > PR_RESTART_SUM_SLACK)
		return pr_error_set(err, PR_ERR_INVALID, "dangling weights sum to %.17g, not 1", sum);
	return PR_OK;
}

/*
 * What every PageRank run checks first (engine, graph, options, damping, restart, the operations
 * the iterations need) and its number of columns, through k.
 */
static PrStatus
begin_pagerank(PrEngine *engine, const PrGraph *g, double alpha, const PrRestart *restart,
			   const PrIterOptions *options, PrRunStats *stats, int *k, PrError *err)
{
	const PrEngineOps *ops;
	PrStatus	status;

	if ((status = begin_run(engine, g, options, stats, err)) != PR_OK)
		return status;
	ops = engine->ops;
	if (!(alpha >= 0.0 && alpha <= 1.0))
		return pr_error_set(err, PR_ERR_INVALID, "damping must be in [0, 1], not %g", alpha);
	if (restart == NULL)
		return pr_error_set(err, PR_ERR_INVALID, "restart distribution is missing");
	if (options->absent_nodes < 0 || (options->absent_nodes > 0 && options->absent_nodes >= g->n_nodes))
		return pr_error_set(err, PR_ERR_INVALID, "%lld absent nodes of a graph of %lld",
							(long long) options->absent_nodes, (long long) g->n_nodes);
	if (restart->uniform)
	{
		if (restart->k > 1)
			return pr_error_set(err, PR_ERR_INVALID,
								"a uniform restart has one column, not %d", restart->k);
		*k = 1;
	}
	else
	{
		if ((status = validate_restart(restart, g->n_nodes, err)) != PR_OK)
			return status;
		*k = restart->k;
	}
	if (ops->prepare == NULL || ops->fill == NULL || ops->product == NULL ||
		ops->pagerank_update == NULL || ops->residual == NULL)
		return pr_error_set(err, PR_ERR_UNSUPPORTED,
							"engine %s lacks an operation %s needs", ops->name,
							pr_algorithm(PR_ALGORITHM_PAGERANK)->name);
	if (options->initial != NULL && ops->upload == NULL)
		return pr_error_set(err, PR_ERR_UNSUPPORTED,
							"engine %s cannot take a start vector (no upload)", ops->name);
	return validate_dangling(engine, restart, g->n_nodes, err);
}

/* True when a run may start from the warm start: asked for, a damping below 1 (at 1 the fixed
 * point need not be unique, and the answer would depend on the start), a restart that is not
 * uniform and sends the dangling mass where it restarts, and an engine with the operations it
 * needs. */
static bool
warm_start_possible(const PrEngine *engine, double alpha, const PrRestart *restart,
					const PrIterOptions *o)
{
	const PrEngineOps *ops = engine->ops;

	return o->warm_start && alpha < 1.0 && !restart->uniform && restart->dangling_count == 0 &&
		ops->restart_fill != NULL &&
		ops->column_sums != NULL && ops->combine != NULL && ops->far_field != NULL &&
		ops->normalize != NULL;
}

/*
 * The far-field vector phi in slot PR_SLOT_FAR (every column the same): the one the engine kept,
 * or PR_FAR_FIELD_ITERATIONS power iterations of the normalized pull product P (dangling columns
 * empty) from 1/N, each normalized to sum 1 — the dominant eigenvector of P, where the mass of a
 * walk settles after a few steps — which the engine then keeps.
 */
static PrStatus
far_field_vector(PrEngine *e, const PrGraph *g, PrError *err)
{
	const PrEngineOps *ops = e->ops;
	bool		found = false;
	PrStatus	status = ops->far_field(e, PR_SLOT_FAR, false, &found, err);

	if (status != PR_OK || found)
		return status;
	status = ops->fill(e, PR_SLOT_FAR, 1.0 / (double) g->n_nodes, err);
	for (int i = 0; status == PR_OK && i < PR_FAR_FIELD_ITERATIONS; i++)
	{
		int			from = i % 2 == 0 ? PR_SLOT_FAR : PR_SLOT_TEMP;
		int			to = i % 2 == 0 ? PR_SLOT_TEMP : PR_SLOT_FAR;

		status = ops->product(e, PR_PRODUCT_PULL_NORMALIZED, from, to, err);
		if (status == PR_OK)
			status = ops->normalize(e, to, -1, err);
	}
	if (status == PR_OK)
		status = ops->far_field(e, PR_SLOT_FAR, true, &found, err);
	return status;
}

/*
 * The warm start's local part L = r + M r + M² r (M = alpha P) into PR_SLOT_X: by the engine's
 * restart_local when it offers one for this graph and restart, else with r in PR_SLOT_TEMP, P r
 * in PR_SLOT_Y and P² r in PR_SLOT_X, added up.  coef is scratch for 3 * k values.
 */
static PrStatus
warm_start_local(PrEngine *e, double alpha, const PrRestart *restart, int k, double *coef,
				 PrError *err)
{
	const PrEngineOps *ops = e->ops;
	const int	local_slots[3] = {PR_SLOT_TEMP, PR_SLOT_Y, PR_SLOT_X};
	PrStatus	status;

	if (ops->restart_local != NULL)
	{
		status = ops->restart_local(e, PR_SLOT_X, PR_SLOT_Y, alpha, restart, err);
		if (status != PR_ERR_UNSUPPORTED)
			return status;
		err->status = PR_OK;
		err->message[0] = '\0';
	}
	status = ops->restart_fill(e, PR_SLOT_TEMP, restart, err);
	if (status == PR_OK)
		status = ops->product(e, PR_PRODUCT_PULL_NORMALIZED, PR_SLOT_TEMP, PR_SLOT_Y, err);
	if (status == PR_OK)
		status = ops->product(e, PR_PRODUCT_PULL_NORMALIZED, PR_SLOT_Y, PR_SLOT_X, err);
	if (status != PR_OK)
		return status;
	for (int j = 0; j < k; j++)
	{
		coef[j] = 1.0;
		coef[k + j] = alpha;
		coef[2 * k + j] = alpha * alpha;
	}
	return ops->combine(e, PR_SLOT_X, 3, local_slots, coef, err);
}

/*
 * The warm start: a start vector of mass 1 close to the answer, so that the power iterations
 * begin where their error shrinks fastest.
 *
 * With P the normalized pull product without the dangling columns and M = alpha P, the answer is
 * x = c * (r + M r + M² r + ...), where c = 1 - alpha + alpha * (dangling mass of x) (the walk
 * restarts at r, also from dead ends).  The first terms are local to the restart nodes; the later
 * ones approach multiples of phi (far_field_vector).  So x0 = gamma * L + beta * phi with
 * L = r + M r + M² r (two products), beta * |phi| = 1 - gamma * |L| (mass 1) and gamma from the
 * dangling masses (L: warm_start_local): gamma = (1 - alpha + alpha * dphi) /
 * (1 - alpha * dL + alpha * |L| * dphi),
 * dphi = phi's dangling share, dL = L's dangling mass.  Any x0 of mass 1 converges to the same
 * answer (the error has mass 0 and shrinks at the speed of P's second eigenvalue, not alpha);
 * this one saves ~4 of 12 iterations of RWR on R-MAT graphs.  *used = false (the caller then
 * starts from 1/N) when the graph gives no usable phi or coefficients.  Leaves x0 in PR_SLOT_X.
 */
static PrStatus
warm_start(PrEngine *e, const PrGraph *g, double alpha, const PrRestart *restart, int k,
		   bool *used, PrError *err)
{
	const PrEngineOps *ops = e->ops;
	double	   *buf;
	double	   *far_sum,
			   *far_dangling,
			   *local_sum,
			   *local_dangling,
			   *coef;
	PrStatus	status;
	const int	start_slots[2] = {PR_SLOT_X, PR_SLOT_FAR};
	bool		usable = true;

	*used = false;
	buf = (double *) pr_alloc_array(&pr_malloc_allocator, (size_t) k, 7 * sizeof(double));
	if (buf == NULL)
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory for the warm start of %d columns", k);
	far_sum = buf;
	far_dangling = buf + k;
	local_sum = buf + 2 * k;
	local_dangling = buf + 3 * k;
	coef = buf + 4 * k;			/* 3 * k */

	status = far_field_vector(e, g, err);
	if (status == PR_OK)
		status = ops->column_sums(e, PR_SLOT_FAR, far_sum, far_dangling, err);
	for (int j = 0; status == PR_OK && j < k; j++)
		if (!(far_sum[j] > 0.0) || !isfinite(far_sum[j]))
			usable = false;
	if (status == PR_OK && usable)
		status = warm_start_local(e, alpha, restart, k, coef, err);
	if (status == PR_OK && usable)
		status = ops->column_sums(e, PR_SLOT_X, local_sum, local_dangling, err);
	for (int j = 0; status == PR_OK && usable && j < k; j++)
	{
		double		dphi = far_dangling[j] / far_sum[j];
		double		gamma = (1.0 - alpha + alpha * dphi) /
			(1.0 - alpha * local_dangling[j] + alpha * local_sum[j] * dphi);
		double		beta = (1.0 - gamma * local_sum[j]) / far_sum[j];

		if (!(gamma > 0.0) || !isfinite(gamma) || !(beta >= 0.0) || !isfinite(beta))
			usable = false;
		coef[j] = gamma;
		coef[k + j] = beta;
	}
	if (status == PR_OK && usable)
		status = ops->combine(e, PR_SLOT_X, 2, start_slots, coef, err);
	pr_free(&pr_malloc_allocator, buf);
	*used = status == PR_OK && usable;
	return status;
}

/*
 * What top-k certification (see "Certified top-k" in pr_driver.h) remembers between the times it
 * ranks the columns.
 */
typedef struct Certifier
{
	bool		active;			/* a top_k run of PageRank with damping < 1 */
	int			k;				/* columns */
	int64_t		pairs;			/* neighbouring pairs checked per column: min(top_k, n - 1) */
	int64_t		ranked;			/* entries ranked per column: min(top_k + 1, n) */
	double		factor;			/* d / (1 - d) */
	double		allowance;		/* rounding_allowance */
	double	   *need;			/* [k] rank again once the column's bound is below this */
	int32_t    *index;			/* [k * ranked] */
	double	   *value;			/* [k * ranked] */
	bool		certified;		/* every column, at the last ranking */
	bool		unresolvable;	/* some gap is within the rounding allowance */
	int64_t		ties;			/* pairs not certified at the last ranking */
} Certifier;

static PrStatus engine_top_k(PrEngine *engine, int slot, int64_t n, int k, int64_t top_k,
							 int32_t *index, double *value, PrError *err);

/*
 * What rounding may add to the bound: a step's output is off its exact value by about
 * PR_CERTIFY_ROUNDOFFS roundoffs of its sum in L1, which counts once and, through the residual,
 * d / (1 - d) times more.
 */
static double
rounding_allowance(double alpha, double roundoff)
{
	return (alpha / (1.0 - alpha) + 1.0) * PR_CERTIFY_ROUNDOFFS * roundoff;
}

/* Starts certification for a run of k columns on n nodes (inactive unless top_k > 0, d < 1). */
static PrStatus
certifier_begin(Certifier *cert, const PrEngine *engine, int64_t n, int k, double alpha,
				int64_t top_k, PrError *err)
{
	memset(cert, 0, sizeof(*cert));
	if (top_k <= 0 || !(alpha < 1.0))
		return PR_OK;
	cert->active = true;
	cert->k = k;
	cert->ranked = top_k < n ? top_k + 1 : n;
	cert->pairs = cert->ranked - 1;
	cert->factor = alpha / (1.0 - alpha);
	cert->allowance = rounding_allowance(alpha, engine_roundoff(engine->ops));
	cert->need = (double *) pr_alloc_array(&pr_malloc_allocator, (size_t) k, sizeof(double));
	cert->index = (int32_t *) pr_alloc_array(&pr_malloc_allocator,
											 (size_t) k * (size_t) cert->ranked, sizeof(int32_t));
	cert->value = (double *) pr_alloc_array(&pr_malloc_allocator,
											(size_t) k * (size_t) cert->ranked, sizeof(double));
	if (cert->need == NULL || cert->index == NULL || cert->value == NULL)
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory for certifying %d top-k lists", k);
	for (int j = 0; j < k; j++)
		cert->need[j] = INFINITY;
	return PR_OK;
}

/* Frees what certifier_begin allocated. */
static void
certifier_end(Certifier *cert)
{
	pr_free(&pr_malloc_allocator, cert->need);
	pr_free(&pr_malloc_allocator, cert->index);
	pr_free(&pr_malloc_allocator, cert->value);
	cert->need = NULL;
	cert->index = NULL;
	cert->value = NULL;
}

/* Column j's bound from its residual. */
static inline double
column_bound(const Certifier *cert, const PrResidual *res, int j)
{
	return cert->factor * res[j].l1 + cert->allowance;
}

/*
 * Ranks the top_k + 1 best entries of every column of slot and checks each neighbouring pair's
 * gap against the column's bound: certified when every gap exceeds it; else need[j] = the
 * bound to rank again at, unresolvable when a gap is within the rounding allowance.
 */
static PrStatus
certify_ranking(Certifier *cert, PrEngine *engine, int slot, int64_t n, const PrResidual *res,
				PrError *err)
{
	PrStatus	status = engine_top_k(engine, slot, n, cert->k, cert->ranked, cert->index,
									  cert->value, err);

	if (status != PR_OK)
		return status;
	cert->certified = true;
	cert->unresolvable = false;
	cert->ties = 0;
	for (int j = 0; j < cert->k; j++)
	{
		const double *v = cert->value + (size_t) j * (size_t) cert->ranked;
		double		bound = column_bound(cert, res, j);
		double		smallest = INFINITY;

		for (int64_t i = 0; i < cert->pairs; i++)
		{
			double		gap = v[i] - v[i + 1];

			if (gap > bound)
				continue;
			cert->ties++;
			if (!(gap > cert->allowance))
				cert->unresolvable = true;
			if (gap < smallest)
				smallest = gap;
		}
		/* rank again once the bound is below the closest gap, or (a gap near 0) a quarter lower */
		cert->need[j] = smallest < INFINITY ? fmax(smallest, bound / 4.0) : INFINITY;
		if (smallest < INFINITY)
			cert->certified = false;
	}
	return PR_OK;
}

/*
 * At a check of a top_k run, and whether the run is done.  Without stop_when_certified: the run
 * ends as its stopping rule says (*done, or last set true at its last iteration) and its columns
 * are ranked then, once, for the report.  With it: the columns are ranked from the first check,
 * again whenever every column's bound fell below what its last ranking needed; the run ends as soon
 * as every column is certified, converged or not, and a converged run goes on until then unless
 * it can no longer certify (a tie within rounding, the residual stalled).
 */
static PrStatus
certify_at_check(Certifier *cert, PrEngine *engine, int slot, int64_t n, const PrResidual *res,
				 const PrIterOptions *options, PrRunStats *stats, bool stalled, bool last,
				 bool *done, PrError *err)
{
	bool		early = options->stop_when_certified;
	bool		due = early || *done || last;

	for (int j = 0; early && due && j < cert->k; j++)
		if (!(column_bound(cert, res, j) < cert->need[j]))
			due = false;
	if (due)
	{
		PrStatus	status = certify_ranking(cert, engine, slot, n, res, err);

		if (status != PR_OK)
			return status;
	}
	stats->top_k_certified = cert->certified ? PR_CERTIFIED_YES : PR_CERTIFIED_NO;
	stats->top_k_ties = cert->ties;
	if (!early)
		return PR_OK;
	if (cert->certified && due)
	{
		stats->stopped_certified = !stats->converged;
		stats->stagnated = false;
		*done = true;
	}
	else if (stats->converged && !cert->unresolvable && !stalled)
		*done = false;
	return PR_OK;
}

/*
 * The bound of "Bound" in pr_driver.h into stats->error_bound: d / (1 - d) times the largest L1
 * residual of the columns (worst_l1), plus the rounding of a step (PR_CERTIFY_ROUNDOFFS unit
 * roundoffs of the vector's sum, scaled the same way); NaN for d = 1, where there is none.
 */
static void
pagerank_bound(PrRunStats *stats, double worst_l1, double alpha, double roundoff)
{
	stats->error_bound = alpha < 1.0 ?
		alpha / (1.0 - alpha) * worst_l1 + rounding_allowance(alpha, roundoff) : NAN;
}

/*
 * The power iterations of PageRank over k columns, from the uniform start (or the given start
 * vector, or the warm start), plain or mixed (pr_mixing.h), until every column converged (and,
 * with top_k > 0, its top_k is certified or cannot be: Certifier), max_iterations or a stop;
 * *result_slot receives the slot of the last iterate (the engine stays prepared, the caller reads
 * it).  The graph has nodes.
 */
static PrStatus
iterate_pagerank(PrEngine *engine, const PrGraph *g, double alpha, const PrRestart *restart,
				 const PrIterOptions *options, int k, int64_t top_k, PrRunStats *stats,
				 int *result_slot, PrError *err)
{
	const PrEngineOps *ops = engine->ops;
	const PrAlgorithmInfo *a = pr_algorithm(PR_ALGORITHM_PAGERANK);
	PrStatus	status;
	PrResidual *residuals;
	PrResidual	stack_residuals[64];
	int			check_every = check_interval(options);
	int			x = PR_SLOT_X,
				y = PR_SLOT_Y;
	bool		warm = options->initial == NULL &&
		warm_start_possible(engine, alpha, restart, options);
	StagnationWatch watch,
				fresh_watch;
	StopRule	rule;
	PrMixing	mix;
	Certifier	cert;

	residuals = k <= 64 ? stack_residuals
		: (PrResidual *) pr_alloc_array(&pr_malloc_allocator, (size_t) k, sizeof(PrResidual));
	if (residuals == NULL)
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory for %d residuals", k);

	status = timed_prepare(engine, g, PR_ALGORITHM_PAGERANK, k, warm, stats, err);
	/* a plain step's L1 residual is at most alpha times the previous one (the bound, DESIGN) */
	if (status == PR_OK)
		status = pr_mixing_begin(&mix, engine, g, k, options->mixing_depth, PR_SLOT_X, PR_SLOT_Y,
								 pr_algorithm_slots(a, warm), a->needs, alpha, err);
	else
		memset(&mix, 0, sizeof(mix));
	if (status == PR_OK)
		status = certifier_begin(&cert, engine, g->n_nodes, k, alpha, top_k, err);
	else
		memset(&cert, 0, sizeof(cert));
	if (status == PR_OK && warm)
	{
		double		t0 = pr_clock_seconds();

		status = warm_start(engine, g, alpha, restart, k, &stats->warm_started, err);
		stats->warm_seconds = pr_clock_seconds() - t0;
	}
	if (status == PR_OK && options->initial != NULL)
		status = ops->upload(engine, x, options->initial, err);
	else if (status == PR_OK && !stats->warm_started)
		status = ops->fill(engine, x, 1.0 / (double) g->n_nodes, err);
	stop_rule_begin(&rule, options, g->n_nodes - options->absent_nodes,
					options->initial != NULL ? RUN_FROM_VECTOR :
					stats->warm_started ? RUN_FROM_WARM_START : RUN_FROM_UNIFORM);
	stagnation_begin(&watch, alpha < 1.0, true, INFINITY);
	fresh_watch = watch;
	for (int it = 1; status == PR_OK && it <= options->max_iterations; it++)
	{
		CheckOutcome check;
		bool		done;

		if ((status = poll_stop(options, stats, err)) != PR_OK)
			break;
		y = pr_mixing_output_slot(&mix, x);
		status = ops->product(engine, PR_PRODUCT_PULL_NORMALIZED, x, y, err);
		if (status == PR_OK)
			status = ops->pagerank_update(engine, y, x, alpha, restart, err);
		if (status != PR_OK)
			break;
		stats->iterations = it;
		status = check_convergence(engine, k, options, it, check_every, &rule, residuals,
								   &watch, stats, &check, err);
		if (status != PR_OK)
			break;
		done = stats->converged || stats->stagnated;
		if (check.checked)
		{
			pagerank_bound(stats, check.worst_l1, alpha, engine_roundoff(ops));
			if (cert.active)
				status = certify_at_check(&cert, engine, y, g->n_nodes, residuals, options, stats,
										  check.stalled, it == options->max_iterations, &done,
										  err);
		}
		if (status != PR_OK || done)
		{
			x = y;
			break;
		}
		status = next_iterate(&mix, &watch, &fresh_watch, check.checked, x, y, residuals, &x, err);
	}
	mixing_finish(&mix, stats);
	certifier_end(&cert);
	if (residuals != stack_residuals)
		pr_free(&pr_malloc_allocator, residuals);
	*result_slot = x;
	return status;
}

/*
 * The top_k best entries of each of the k columns of a slot into index / value (column j at
 * j * min(top_k, n)): by the engine's top_k operation, or by downloading the slot and ranking it
 * here with pr_top_k.
 */
static PrStatus
engine_top_k(PrEngine *engine, int slot, int64_t n, int k, int64_t top_k, int32_t *index,
			 double *value, PrError *err)
{
	const PrEngineOps *ops = engine->ops;
	int64_t		count = top_k < n ? top_k : n;
	double	   *all;
	PrStatus	status;

	if (ops->top_k_columns != NULL && k > 1)
		return ops->top_k_columns(engine, slot, top_k, index, value, err);
	if (ops->top_k != NULL)
	{
		for (int j = 0; j < k; j++)
		{
			status = ops->top_k(engine, slot, j, top_k, index + (size_t) j * (size_t) count,
								value + (size_t) j * (size_t) count, err);
			if (status != PR_OK)
				return status;
		}
		return PR_OK;
	}
	if ((uint64_t) n > SIZE_MAX / sizeof(double) / (size_t) k)
		return pr_error_set(err, PR_ERR_TOO_LARGE, "%lld x %d scores do not fit in memory",
							(long long) n, k);
	all = (double *) pr_alloc_array(&pr_malloc_allocator, (size_t) n * (size_t) k, sizeof(double));
	if (all == NULL)
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory for %lld x %d scores",
							(long long) n, k);
	status = ops->download(engine, slot, all, err);
	for (int j = 0; status == PR_OK && j < k; j++)
	{
		pr_top_k_values(all, n, k, j, count, index + (size_t) j * (size_t) count,
						value + (size_t) j * (size_t) count, &pr_malloc_allocator);
	}
	pr_free(&pr_malloc_allocator, all);
	return status;
}

/* Ends a run that needs no iteration (no nodes, or no positive weight): converged at once. */
static PrStatus
finish_at_once(PrRunStats *stats, double t0)
{
	stats->converged = true;
	stats->seconds = pr_clock_seconds() - t0;
	return PR_OK;
}

/* Folds the statistics of one batch of columns into those of the whole run. */
static void
merge_batch_stats(PrRunStats *stats, const PrRunStats *batch, bool first)
{
	if (first)
	{
		stats->iterations = batch->iterations;
		stats->residual = batch->residual;
		stats->converged = batch->converged;
		stats->stagnated = batch->stagnated;
		stats->warm_started = batch->warm_started;
		stats->error_bound = batch->error_bound;
		stats->top_k_certified = batch->top_k_certified;
		stats->stopped_certified = batch->stopped_certified;
	}
	else
	{
		if (batch->iterations > stats->iterations)
			stats->iterations = batch->iterations;
		if (batch->residual > stats->residual || batch->residual != batch->residual)
			stats->residual = batch->residual;
		stats->converged = stats->converged && batch->converged;
		stats->stagnated = stats->stagnated || batch->stagnated;
		stats->warm_started = stats->warm_started && batch->warm_started;
		if (batch->error_bound > stats->error_bound || batch->error_bound != batch->error_bound)
			stats->error_bound = batch->error_bound;
		if (batch->top_k_certified < stats->top_k_certified)
			stats->top_k_certified = batch->top_k_certified;
		stats->stopped_certified = stats->stopped_certified || batch->stopped_certified;
	}
	stats->prepare_seconds += batch->prepare_seconds;
	stats->warm_seconds += batch->warm_seconds;
	stats->mixed_steps += batch->mixed_steps;
	stats->mixing_fallbacks += batch->mixing_fallbacks;
	stats->top_k_ties += batch->top_k_ties;
}

/*
 * The iterations and the result of k columns, batch columns at a time (the engine's
 * column_batch): each batch is a run of its own over columns j0 .. j0 + kb - 1 (its slice of the
 * restart and of the start vector), its scores placed in their columns of scores (n x k) or its
 * top_k lists at j0 * min(top_k, n) of index / value.  A column's result does not depend on the
 * others; a batch iterates until its own columns converge.
 */
static PrStatus
iterate_in_batches(PrEngine *engine, const PrGraph *g, double alpha, const PrRestart *restart,
				   const PrIterOptions *options, int k, int batch, bool top, double *scores,
				   int64_t top_k, int32_t *index, double *value, PrRunStats *stats,
				   PrError *err)
{
	double		result_start;
	int64_t		n = g->n_nodes;
	int64_t		count = top_k < n ? top_k : n;
	int64_t    *ptr = (int64_t *) pr_alloc_array(&pr_malloc_allocator, (size_t) batch + 1,
												 sizeof(int64_t));
	double	   *part = NULL;
	double	   *start = NULL;
	PrStatus	status = PR_OK;

	if (!top || options->initial != NULL)
	{
		if ((uint64_t) n > SIZE_MAX / sizeof(double) / (size_t) batch)
			status = pr_error_set(err, PR_ERR_TOO_LARGE, "%lld x %d scores do not fit in memory",
								  (long long) n, batch);
		else
		{
			part = (double *) pr_alloc_array(&pr_malloc_allocator, (size_t) n * (size_t) batch,
											 sizeof(double));
			if (part == NULL)
				status = pr_error_set(err, PR_ERR_NOMEM, "out of memory for %lld x %d scores",
									  (long long) n, batch);
		}
	}
	if (status == PR_OK && options->initial != NULL)
	{
		start = (double *) pr_alloc_array(&pr_malloc_allocator, (size_t) n * (size_t) batch,
										  sizeof(double));
		if (start == NULL)
			status = pr_error_set(err, PR_ERR_NOMEM, "out of memory for a start vector of %d columns",
								  batch);
	}
	if (status == PR_OK && ptr == NULL)
		status = pr_error_set(err, PR_ERR_NOMEM, "out of memory for %d restart columns", batch);
	for (int j0 = 0; status == PR_OK && j0 < k; j0 += batch)
	{
		int			kb = k - j0 < batch ? k - j0 : batch;
		PrRestart	sub = *restart;
		PrIterOptions o = *options;
		PrRunStats	batch_stats;
		int			x;

		for (int j = 0; j <= kb; j++)
			ptr[j] = restart->ptr[j0 + j] - restart->ptr[j0];
		sub.k = kb;
		sub.ptr = ptr;
		sub.node = restart->node + restart->ptr[j0];
		sub.weight = restart->weight + restart->ptr[j0];
		if (start != NULL)
		{
			for (int64_t v = 0; v < n; v++)
				memcpy(start + v * kb, options->initial + v * k + j0, sizeof(double) * (size_t) kb);
			o.initial = start;
		}
		stats_begin(&batch_stats, engine);
		status = iterate_pagerank(engine, g, alpha, &sub, &o, kb, top ? top_k : 0, &batch_stats,
								  &x, err);
		merge_batch_stats(stats, &batch_stats, j0 == 0);
		result_start = pr_clock_seconds();
		if (status == PR_OK && top)
			status = engine_top_k(engine, x, n, kb, top_k, index + (size_t) j0 * (size_t) count,
								  value + (size_t) j0 * (size_t) count, err);
		else if (status == PR_OK)
		{
			status = engine->ops->download(engine, x, part, err);
			for (int64_t v = 0; status == PR_OK && v < n; v++)
				memcpy(scores + v * k + j0, part + v * kb, sizeof(double) * (size_t) kb);
		}
		stats->result_seconds += pr_clock_seconds() - result_start;
	}
	pr_free(&pr_malloc_allocator, ptr);
	pr_free(&pr_malloc_allocator, part);
	pr_free(&pr_malloc_allocator, start);
	return status;
}

/*
 * PageRank / RWR over k columns with its result as every score (top false: scores) or as the
 * top_k best nodes of each column (top true: index, value): pr_pagerank and pr_pagerank_top.
 * More columns than the engine's column_batch go in batches (iterate_in_batches).
 */
static PrStatus
run_pagerank(PrEngine *engine, const PrGraph *g, double alpha, const PrRestart *restart,
			 const PrIterOptions *options, bool top, double *scores, int64_t top_k,
			 int32_t *index, double *value, PrRunStats *stats, PrError *err)
{
	double		result_start;
	double		t0 = pr_clock_seconds();
	PrRunStats	local_stats;
	PrStatus	status;
	int			k = 0;
	int			x;

	if (stats == NULL)
		stats = &local_stats;
	if ((status = begin_pagerank(engine, g, alpha, restart, options, stats, &k, err)) != PR_OK)
		return status;
	if (!top && engine->ops->download == NULL)
		return pr_error_set(err, PR_ERR_UNSUPPORTED,
							"engine %s lacks an operation PageRank needs", engine->ops->name);
	if (top && engine->ops->top_k == NULL && engine->ops->download == NULL)
		return pr_error_set(err, PR_ERR_UNSUPPORTED,
							"engine %s can neither rank nor download a vector", engine->ops->name);
	if (top && top_k <= 0)
		return pr_error_set(err, PR_ERR_INVALID, "top_k must be positive, not %lld",
							(long long) top_k);
	if (g->n_nodes == 0)
		return finish_at_once(stats, t0);
	if (!top && scores == NULL)
		return pr_error_set(err, PR_ERR_INVALID, "no score array given");
	if (top && (index == NULL || value == NULL))
		return pr_error_set(err, PR_ERR_INVALID, "no top-k arrays given");
	if (engine->ops->column_batch > 0 && k > engine->ops->column_batch)
	{
		status = iterate_in_batches(engine, g, alpha, restart, options, k,
									engine->ops->column_batch, top, scores, top_k, index, value,
									stats, err);
		stats->seconds = pr_clock_seconds() - t0;
		return status;
	}
	status = iterate_pagerank(engine, g, alpha, restart, options, k, top ? top_k : 0, stats, &x,
							  err);
	result_start = pr_clock_seconds();
	if (status == PR_OK)
		status = top ? engine_top_k(engine, x, g->n_nodes, k, top_k, index, value, err)
			: engine->ops->download(engine, x, scores, err);
	stats->seconds = pr_clock_seconds() - t0;
	stats->result_seconds = pr_clock_seconds() - result_start;
	return status;
}

/* PageRank / personalized PageRank / RWR over k columns; see pr_driver.h. */
PrStatus
pr_pagerank(PrEngine *engine, const PrGraph *g, double alpha, const PrRestart *restart,
			const PrIterOptions *options, double *scores, PrRunStats *stats, PrError *err)
{
	return run_pagerank(engine, g, alpha, restart, options, false, scores, 0, NULL, NULL, stats,
						err);
}

/* PageRank / RWR returning only the top_k best nodes of each column; see pr_driver.h. */
PrStatus
pr_pagerank_top(PrEngine *engine, const PrGraph *g, double alpha, const PrRestart *restart,
				const PrIterOptions *options, int64_t top_k, int32_t *index, double *value,
				PrRunStats *stats, PrError *err)
{
	return run_pagerank(engine, g, alpha, restart, options, true, NULL, top_k, index, value,
						stats, err);
}

/* True when some edge of g has a positive weight (an unweighted edge weighs 1). */
static bool
has_positive_weight(const PrGraph *g)
{
	for (int64_t v = 0; v < g->n_nodes; v++)
		if (g->out_strength[v] > 0.0)
			return true;
	return false;
}

/* HITS by power iteration, hubs and authorities each normalised to sum 1; see pr_driver.h. */
PrStatus
pr_hits(PrEngine *engine, const PrGraph *g, const PrIterOptions *options, double *hubs,
		double *authorities, PrRunStats *stats, PrError *err)
{
	double		result_start;
	double		t0 = pr_clock_seconds();
	PrRunStats	local_stats;
	const PrEngineOps *ops;
	PrStatus	status;
	PrResidual	residual;
	const PrAlgorithmInfo *a = pr_algorithm(PR_ALGORITHM_HITS);
	StagnationWatch watch,
				fresh_watch;
	int			check_every;
	int			h = HITS_SLOT_HUB,
				h_next = HITS_SLOT_HUB_NEXT;
	StopRule	rule;
	PrMixing	mix;

	if (stats == NULL)
		stats = &local_stats;
	if ((status = begin_run(engine, g, options, stats, err)) != PR_OK)
		return status;
	ops = engine->ops;
	if (ops->prepare == NULL || ops->fill == NULL || ops->product == NULL ||
		ops->normalize == NULL || ops->residual == NULL || ops->download == NULL)
		return pr_error_set(err, PR_ERR_UNSUPPORTED,
							"engine %s lacks an operation %s needs", ops->name, a->name);
	if (g->n_nodes == 0)
		return finish_at_once(stats, t0);
	if (hubs == NULL || authorities == NULL)
		return pr_error_set(err, PR_ERR_INVALID, "no hub or authority array given");
	if (!has_positive_weight(g))
	{
		/* A = 0: every node is as good a hub and authority as any other */
		for (int64_t v = 0; v < g->n_nodes; v++)
			hubs[v] = authorities[v] = 1.0 / (double) g->n_nodes;
		return finish_at_once(stats, t0);
	}
	check_every = check_interval(options);
	stop_rule_begin(&rule, options, g->n_nodes, RUN_FROM_UNIFORM);

	status = timed_prepare(engine, g, PR_ALGORITHM_HITS, 1, false, stats, err);
	if (status == PR_OK)
		status = pr_mixing_begin(&mix, engine, g, 1, options->mixing_depth, HITS_SLOT_HUB,
								 HITS_SLOT_HUB_NEXT, pr_algorithm_slots(a, false), a->needs, 0.0,
								 err);
	else
		memset(&mix, 0, sizeof(mix));
	if (status == PR_OK)
		status = ops->fill(engine, h, 1.0 / (double) g->n_nodes, err);
	/* HITS is no contraction: only the test of no new minimum, near the rounding level */
	stagnation_begin(&watch, true, false, PR_HITS_STAGNANT_ROUNDOFFS * engine_roundoff(ops));
	fresh_watch = watch;
	for (int it = 1; status == PR_OK && it <= options->max_iterations; it++)
	{
		CheckOutcome check;

		if ((status = poll_stop(options, stats, err)) != PR_OK)
			break;
		h_next = pr_mixing_output_slot(&mix, h);
		/* a = Aᵀ h, normalised; h' = A a, normalised, residual |h' - h| */
		status = ops->product(engine, PR_PRODUCT_PULL, h, HITS_SLOT_AUTH, err);
		if (status == PR_OK)
			status = ops->normalize(engine, HITS_SLOT_AUTH, -1, err);
		if (status == PR_OK)
			status = ops->product(engine, PR_PRODUCT_PUSH, HITS_SLOT_AUTH, h_next, err);
		if (status == PR_OK)
			status = ops->normalize(engine, h_next, h, err);
		if (status != PR_OK)
			break;
		stats->iterations = it;
		status = check_convergence(engine, 1, options, it, check_every, &rule, &residual,
								   &watch, stats, &check, err);
		if (status != PR_OK || stats->converged || stats->stagnated)
		{
			h = h_next;
			break;
		}
		status = next_iterate(&mix, &watch, &fresh_watch, check.checked, h, h_next, &residual, &h,
							  err);
	}
	mixing_finish(&mix, stats);
	result_start = pr_clock_seconds();
	if (status == PR_OK)
		status = ops->download(engine, h, hubs, err);
	if (status == PR_OK)
		status = ops->download(engine, HITS_SLOT_AUTH, authorities, err);
	stats->seconds = pr_clock_seconds() - t0;
	stats->result_seconds = pr_clock_seconds() - result_start;
	return status;
}
