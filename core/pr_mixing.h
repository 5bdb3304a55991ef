/*
 * pr_mixing.h — Anderson mixing of the driver's fixed-point iterations, over engine slots.
 *
 * The driver's algorithms are fixed-point iterations x -> G(x) (PageRank's update, HITS's two
 * normalised products).  Plain power iteration takes x_(i+1) = G(x_i).  Anderson mixing of depth
 * m keeps the last m + 1 outputs g_i = G(x_i) and residual vectors f_i = g_i - x_i and, per column,
 * takes x_(i+1) = sum of a_i g_i over those entries, the a_i summing to 1 and minimising
 * |sum of a_i f_i|_2 (a small least-squares problem on the Gram matrix of the f_i, which the
 * engine's dots operation fills one row per step).  Every engine gets it through two vector
 * operations (combine, dots); the small problem is solved here, in double, in a fixed order, so a
 * run gives the same bits every time on one engine.
 *
 * Safeguards: mixing begins only once plain steps contract slowly (a residual ratio above
 * PR_MIX_ENGAGE_RATIO: where the plain iteration needs few steps it stays plain and pays nothing);
 * a column whose residual rose from one step to the next takes a plain step and starts its
 * history afresh; an ill-conditioned problem drops its oldest entries until it is well posed.
 * The returned iterate of a run is always a step's output g = G(x), so the stop rule's bound on
 * the distance to the answer (pr_driver.h) holds whatever x was.
 *
 * A run whose mixing stalls (no residual below the run's smallest in PR_MIX_PATIENCE mixed steps: a limited
 * history cannot follow some graphs' slow modes, e.g. a long cycle at damping ~1) gives mixing up and
 * goes on plain.
 *
 * A run whose mixing does not pay for its vector passes gives it up too: a mixed step costs
 * 1 + c plain steps (c = PrEngineOps.mixed_step_cost), so once the history is full (depth steps
 * after mixing began), over every PR_MIX_TRIAL steps the run's smallest residual has to shrink by
 * more than rho^((1 + c) PR_MIX_TRIAL), what plain steps of the same cost would do at the plain
 * rate rho: the larger of a bound the caller knows on a plain step's residual ratio (PageRank's
 * damping) and the largest ratio of the run's plain steps before mixing began.  A run whose caller
 * knows no such bound (HITS) is not judged so.  The test reads residuals only: a run decides the
 * same way every time.
 *
 * Slots: the driver's x slot takes the mixed iterates; the outputs go round a ring of m + 1 slots
 * (the driver's y slot and m more), the f_i round m + 1 more: 2m + 1 slots beyond the algorithm's
 * own (pr_algorithm_slots), added by a prepare of the engine when mixing begins (PrEngineOps.prepare
 * keeps the existing slots); an engine that cannot add them runs on plain.
 */
#ifndef PR_MIXING_H
#define PR_MIXING_H

#include "pr_engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Deepest mixing: its m + 1 entries in one combine / dots call. */
#define PR_MIX_MAX_DEPTH (PR_COMBINE_MAX_TERMS - 1)

/*
 * Steps over which mixing's progress is judged against plain steps' (above): long enough to
 * smooth the swings of single mixed steps (residual ratios from 0.26 to 0.84 in one RWR run on
 * soc-Slashdot0902), short enough to leave a stalling mixing within a few steps.
 */
#define PR_MIX_TRIAL 6

/* A mixed step's extra cost, in plain steps, for an engine that states none: a whole plain step. */
#define PR_MIX_DEFAULT_STEP_COST 1.0

/* The state of one run's mixing. */
typedef struct PrMixing
{
	PrEngine   *engine;
	const PrGraph *g;			/* the graph the engine is prepared on */
	unsigned	needs;			/* the products it was prepared for */
	int			base_slots;		/* the algorithm's own slots */
	int			k;				/* columns */
	int			depth;			/* m (0: plain power iteration) */
	int			ring;			/* m + 1 */
	int			x_slot;			/* the driver's x slot: the mixed iterates */
	int			y_slot;			/* the driver's y slot (plain alternation without mixing) */
	int			g_slot[PR_COMBINE_MAX_TERMS];	/* ring of outputs g_i */
	int			f_slot[PR_COMBINE_MAX_TERMS];	/* ring of residual vectors f_i */
	int			newest;			/* ring index of the newest output, -1 before the first */
	bool		engaged;		/* mixing has begun (entries are being kept) */
	int			stored;			/* entries with their f_i kept since mixing began (<= ring) */
	int		   *usable;			/* [k] newest entries column j may mix */
	double	   *last_l1;		/* [k] L1 residual of the previous step per column (NaN: none) */
	double	   *gram;			/* [k * ring * ring] f_a . f_b per column, by ring index */
	double	   *coef;			/* [ring * k] combination coefficients */
	double	   *dot;			/* [ring * k] scratch for dots */
	double		best;			/* smallest worst-column L1 residual of the run's steps */
	int			since_best;		/* mixed steps since best was set */
	bool		judged;			/* the cost rule applies: the algorithm bounds a plain step's ratio */
	double		plain_rate;		/* plain steps' residual ratio (bound or largest seen) */
	double		trial_factor;	/* most best may keep of its value PR_MIX_TRIAL steps before */
	int			since_engaged;	/* steps since mixing began */
	double		trail[PR_MIX_TRIAL];	/* best at the end of each of the last steps, by
										 * since_engaged % PR_MIX_TRIAL */
	bool		gave_up;		/* the last step gave mixing up (the caller clears it): the
								 * residuals from here are plain iteration's, not comparable */
	int			mixed_steps;	/* steps whose next iterate was mixed */
	int			fallbacks;		/* column steps the residual test sent back to a plain step */
} PrMixing;

/*
 * Starts a run's mixing of depth (0 .. PR_MIX_MAX_DEPTH; 0 or an engine without combine / dots:
 * plain iteration) over k columns of the engine prepared on g with base_slots slots and the
 * products needs: x_slot and y_slot are the algorithm's iterate slots.  plain_rate_bound: a bound
 * on a plain step's L1 residual ratio (PageRank: the damping), 0 when the algorithm has none (HITS):
 * then mixing is not judged by its cost, only by the other safeguards.
 */
PrStatus	pr_mixing_begin(PrMixing *mix, PrEngine *engine, const PrGraph *g, int k, int depth,
							int x_slot, int y_slot, int base_slots, unsigned needs,
							double plain_rate_bound, PrError *err);

/* The slot the next step writes G(x) into, x in x_slot (never x_slot itself). */
int			pr_mixing_output_slot(const PrMixing *mix, int x_slot);

/*
 * After a step x -> y = G(x) (slots x_slot, y_slot) whose residuals res[k] were read: the slot of
 * the next iterate (y for a plain step, the x slot for a mixed one) through *next_x.
 */
PrStatus	pr_mixing_after_step(PrMixing *mix, int x_slot, int y_slot, const PrResidual *res,
								 int *next_x, PrError *err);

/* Frees what pr_mixing_begin allocated. */
void		pr_mixing_end(PrMixing *mix);

#ifdef __cplusplus
}
#endif

#endif							/* PR_MIXING_H */
