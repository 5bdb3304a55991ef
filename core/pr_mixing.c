/*
 * pr_mixing.c — Anderson mixing of the driver's fixed-point iterations (pr_mixing.h).
 */
#include "pr_mixing.h"

#include <math.h>
#include <string.h>

/*
 * Mixing begins at the first step whose L1 residual is more than this fraction of the previous
 * step's in some column: below it plain steps already shrink the error fast (RWR from the warm
 * start: ~0.2 a step; PageRank on R-MAT graphs: 9 steps to 1e-6) and mixing would cost its vector
 * passes for at most a step saved.
 */
#define PR_MIX_ENGAGE_RATIO 0.5

/* Relative Tikhonov term added to the Gram matrix's diagonal (nearly dependent f_i late in a run). */
#define PR_MIX_REGULARIZATION 1e-10

/*
 * Largest sum of |a_i| accepted: larger coefficients come from a nearly singular problem and
 * would amplify rounding; the oldest entries are dropped until the solution is below it.
 */
#define PR_MIX_MAX_COEFFICIENTS 1e3

/* Mixed steps without a new smallest residual after which a run gives mixing up. */
#define PR_MIX_PATIENCE 10

/* The engine's mixed_step_cost, or the default when it states none. */
static double
mixed_step_cost(const PrEngineOps *ops)
{
	return ops->mixed_step_cost > 0.0 ? ops->mixed_step_cost : PR_MIX_DEFAULT_STEP_COST;
}

/* Slots a mixing of this depth adds to the algorithm's own. */
static int
extra_slots(int depth)
{
	return 2 * depth + 1;
}

/* Allocates an array of count doubles (NULL when it fails). */
static double *
alloc_doubles(size_t count)
{
	return (double *) pr_alloc_array(&pr_malloc_allocator, count, sizeof(double));
}

/* See pr_mixing.h. */
PrStatus
pr_mixing_begin(PrMixing *mix, PrEngine *engine, const PrGraph *g, int k, int depth, int x_slot,
				int y_slot, int base_slots, unsigned needs, double plain_rate_bound, PrError *err)
{
	const PrEngineOps *ops = engine->ops;

	memset(mix, 0, sizeof(*mix));
	mix->engine = engine;
	mix->g = g;
	mix->needs = needs;
	mix->base_slots = base_slots;
	mix->best = INFINITY;
	mix->judged = plain_rate_bound > 0.0;
	mix->plain_rate = mix->judged ? plain_rate_bound : 0.0;
	mix->k = k;
	mix->x_slot = x_slot;
	mix->y_slot = y_slot;
	mix->newest = -1;
	if (depth < 0 || depth > PR_MIX_MAX_DEPTH)
		return pr_error_set(err, PR_ERR_INVALID, "mixing depth must be 0 to %d, not %d",
							PR_MIX_MAX_DEPTH, depth);
	if (ops->combine == NULL || ops->dots == NULL)
		depth = 0;
	mix->depth = depth;
	mix->ring = depth + 1;
	if (depth == 0)
		return PR_OK;
	mix->g_slot[0] = y_slot;
	for (int i = 1; i < mix->ring; i++)
		mix->g_slot[i] = base_slots + i - 1;
	for (int i = 0; i < mix->ring; i++)
		mix->f_slot[i] = base_slots + depth + i;
	mix->usable = (int *) pr_alloc_array(&pr_malloc_allocator, (size_t) k, sizeof(int));
	mix->last_l1 = alloc_doubles((size_t) k);
	mix->gram = alloc_doubles((size_t) k * (size_t) mix->ring * (size_t) mix->ring);
	mix->coef = alloc_doubles((size_t) k * (size_t) mix->ring);
	mix->dot = alloc_doubles((size_t) k * (size_t) mix->ring);
	if (mix->usable == NULL || mix->last_l1 == NULL || mix->gram == NULL || mix->coef == NULL ||
		mix->dot == NULL)
	{
		pr_mixing_end(mix);
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory for the mixing of %d columns", k);
	}
	for (int j = 0; j < k; j++)
	{
		mix->usable[j] = 0;
		mix->last_l1[j] = NAN;
	}
	return PR_OK;
}

/* See pr_mixing.h. */
int
pr_mixing_output_slot(const PrMixing *mix, int x_slot)
{
	if (!mix->engaged)
		return x_slot == mix->x_slot ? mix->y_slot : mix->x_slot;
	return mix->g_slot[(mix->newest + 1) % mix->ring];
}

/* Gram entry (a, b) of column j, by ring index. */
static inline double *
gram_at(PrMixing *mix, int j, int a, int b)
{
	return &mix->gram[((size_t) j * (size_t) mix->ring + (size_t) a) * (size_t) mix->ring +
					  (size_t) b];
}

/*
 * Solves the u x u system m z = 1 (row-major, overwritten) by Gaussian elimination with partial
 * pivoting into z; false when a pivot vanishes or a value is not finite.
 */
static bool
solve_ones(double *m, int u, double *z)
{
	for (int i = 0; i < u; i++)
		z[i] = 1.0;
	for (int c = 0; c < u; c++)
	{
		int			pivot = c;

		for (int r = c + 1; r < u; r++)
			if (fabs(m[r * u + c]) > fabs(m[pivot * u + c]))
				pivot = r;
		if (!(fabs(m[pivot * u + c]) > 0.0) || !isfinite(m[pivot * u + c]))
			return false;
		if (pivot != c)
		{
			for (int q = 0; q < u; q++)
			{
				double		t = m[c * u + q];

				m[c * u + q] = m[pivot * u + q];
				m[pivot * u + q] = t;
			}
			{
				double		t = z[c];

				z[c] = z[pivot];
				z[pivot] = t;
			}
		}
		for (int r = c + 1; r < u; r++)
		{
			double		f = m[r * u + c] / m[c * u + c];

			for (int q = c; q < u; q++)
				m[r * u + q] -= f * m[c * u + q];
			z[r] -= f * z[c];
		}
	}
	for (int c = u - 1; c >= 0; c--)
	{
		for (int q = c + 1; q < u; q++)
			z[c] -= m[c * u + q] * z[q];
		z[c] /= m[c * u + c];
		if (!isfinite(z[c]))
			return false;
	}
	return true;
}

/*
 * The mixing coefficients of column j over its u newest entries (ring indices newest, newest - 1,
 * ...) into a[0..u-1]: the a summing to 1 that minimise |sum of a_i f_i|_2, i.e. G a = lambda 1.
 * Drops the oldest entries while the problem is ill-posed; returns the entries used (1: the
 * plain step, a[0] = 1).
 */
static int
column_coefficients(PrMixing *mix, int j, int u, double *a)
{
	double		m[PR_COMBINE_MAX_TERMS * PR_COMBINE_MAX_TERMS];

	for (; u > 1; u--)
	{
		double		sum = 0.0,
					size = 0.0,
					largest = 0.0;
		bool		ok;

		for (int r = 0; r < u; r++)
		{
			int			ir = (mix->newest - r + mix->ring) % mix->ring;

			for (int c = 0; c < u; c++)
			{
				int			ic = (mix->newest - c + mix->ring) % mix->ring;

				m[r * u + c] = *gram_at(mix, j, ir, ic);
			}
			if (m[r * u + r] > largest)
				largest = m[r * u + r];
		}
		if (!(largest > 0.0) || !isfinite(largest))
			continue;
		for (int r = 0; r < u; r++)
			m[r * u + r] += PR_MIX_REGULARIZATION * largest;
		ok = solve_ones(m, u, a);
		for (int i = 0; ok && i < u; i++)
			sum += a[i];
		if (!ok || !(fabs(sum) > 0.0) || !isfinite(sum))
			continue;
		for (int i = 0; i < u; i++)
		{
			a[i] /= sum;
			size += fabs(a[i]);
		}
		if (size <= PR_MIX_MAX_COEFFICIENTS)
			return u;
	}
	a[0] = 1.0;
	return 1;
}

/*
 * Keeps the newest step's residual vector f = y - x in its ring slot and its dot products with
 * every kept f in the Gram matrices.
 */
static PrStatus
record_step(PrMixing *mix, int x_slot, int y_slot, PrError *err)
{
	const PrEngineOps *ops = mix->engine->ops;
	int			h = mix->newest;
	int			slots[2] = {y_slot, x_slot};
	int			kept[PR_COMBINE_MAX_TERMS];
	int			k = mix->k;
	PrStatus	status;

	for (int j = 0; j < k; j++)
	{
		mix->coef[j] = 1.0;
		mix->coef[k + j] = -1.0;
	}
	status = ops->combine(mix->engine, mix->f_slot[h], 2, slots, mix->coef, err);
	if (status != PR_OK)
		return status;
	if (mix->stored < mix->ring)
		mix->stored++;
	for (int t = 0; t < mix->stored; t++)
		kept[t] = mix->f_slot[(h - t + mix->ring) % mix->ring];
	status = ops->dots(mix->engine, mix->f_slot[h], mix->stored, kept, mix->dot, err);
	if (status != PR_OK)
		return status;
	for (int t = 0; t < mix->stored; t++)
	{
		int			other = (h - t + mix->ring) % mix->ring;

		for (int j = 0; j < k; j++)
			*gram_at(mix, j, h, other) = *gram_at(mix, j, other, h) = mix->dot[t * k + j];
	}
	return PR_OK;
}

/* Gives mixing up for the rest of the run: plain steps from here (the slots stay). */
static void
give_up(PrMixing *mix)
{
	mix->depth = 0;
	mix->engaged = false;
	mix->gave_up = true;
}

/*
 * Begins mixing after the step x -> y: adds the mixing's slots to the engine (giving mixing up
 * when it cannot), keeps the step as the first entry (its output moved to the y slot when the
 * plain alternation left it in the x slot).  *ok = false when mixing was given up.
 */
static PrStatus
engage(PrMixing *mix, int x_slot, int y_slot, bool *ok, PrError *err)
{
	const PrEngineOps *ops = mix->engine->ops;
	PrError		grow_err = {PR_OK, ""};
	PrStatus	status;

	*ok = false;
	if (ops->prepare(mix->engine, mix->g, mix->k, mix->base_slots + extra_slots(mix->depth),
					 mix->needs, &grow_err) != PR_OK)
	{
		give_up(mix);
		return PR_OK;
	}
	mix->newest = 0;
	if ((status = record_step(mix, x_slot, y_slot, err)) != PR_OK)
		return status;
	if (y_slot != mix->g_slot[0])
	{
		int			from[1] = {y_slot};

		for (int j = 0; j < mix->k; j++)
			mix->coef[j] = 1.0;
		if ((status = ops->combine(mix->engine, mix->g_slot[0], 1, from, mix->coef, err)) != PR_OK)
			return status;
	}
	mix->engaged = true;
	*ok = true;
	return PR_OK;
}

/* See pr_mixing.h. */
PrStatus
pr_mixing_after_step(PrMixing *mix, int x_slot, int y_slot, const PrResidual *res, int *next_x,
					 PrError *err)
{
	int			k = mix->k;
	int			terms = 1;
	int			slots[PR_COMBINE_MAX_TERMS];
	double		a[PR_COMBINE_MAX_TERMS];
	double		worst = 0.0;
	PrStatus	status;

	*next_x = y_slot;
	if (mix->depth == 0)
		return PR_OK;
	for (int j = 0; j < k; j++)
		worst = fmax(worst, res[j].l1);
	if (!mix->engaged)
	{
		bool		slow = false,
					ok;

		/* the smallest residual of the plain steps too: mixing has to beat it */
		mix->best = fmin(mix->best, worst);
		for (int j = 0; j < k; j++)
			if (mix->last_l1[j] > 0.0)
			{
				double		ratio = res[j].l1 / mix->last_l1[j];

				if (ratio > PR_MIX_ENGAGE_RATIO)
					slow = true;
				mix->plain_rate = fmax(mix->plain_rate, ratio);
			}
		for (int j = 0; j < k; j++)
			mix->last_l1[j] = res[j].l1;
		if (!slow)
			return PR_OK;
		if ((status = engage(mix, x_slot, y_slot, &ok, err)) != PR_OK || !ok)
			return status;
		for (int j = 0; j < k; j++)
			mix->usable[j] = 1;
		mix->trial_factor = pow(mix->plain_rate,
								(1.0 + mixed_step_cost(mix->engine->ops)) * PR_MIX_TRIAL);
		mix->since_engaged = 0;
		mix->trail[0] = mix->best;
		*next_x = mix->g_slot[0];
		return PR_OK;
	}
	/* a mixing that finds no new smallest residual for long is given up */
	if (worst < mix->best)
	{
		mix->best = worst;
		mix->since_best = 0;
	}
	else if (++mix->since_best >= PR_MIX_PATIENCE)
	{
		give_up(mix);
		return PR_OK;
	}
	/*
	 * nor is one that shrinks the residual less than plain steps of the same cost would, judged
	 * over the last PR_MIX_TRIAL steps once the history is full (its first depth steps, mixing
	 * few entries, may shrink it less than plain steps did), where the algorithm bounds the plain
	 * steps' ratio
	 */
	mix->since_engaged++;
	if (mix->judged && mix->since_engaged >= mix->depth + PR_MIX_TRIAL &&
		mix->best > mix->trail[mix->since_engaged % PR_MIX_TRIAL] * mix->trial_factor)
	{
		give_up(mix);
		return PR_OK;
	}
	mix->trail[mix->since_engaged % PR_MIX_TRIAL] = mix->best;
	mix->newest = (mix->newest + 1) % mix->ring;	/* y_slot is g_slot[newest] */
	if ((status = record_step(mix, x_slot, y_slot, err)) != PR_OK)
		return status;
	for (int j = 0; j < k; j++)
	{
		/* a residual that rose: a plain step, and this column's history starts again */
		if (!(res[j].l1 <= mix->last_l1[j]))
		{
			mix->usable[j] = 1;
			mix->fallbacks++;
		}
		else if (mix->usable[j] < mix->stored)
			mix->usable[j]++;
		mix->last_l1[j] = res[j].l1;
	}
	memset(mix->coef, 0, sizeof(double) * (size_t) k * (size_t) mix->ring);
	for (int j = 0; j < k; j++)
	{
		int			used = column_coefficients(mix, j, mix->usable[j], a);

		for (int t = 0; t < used; t++)
			mix->coef[t * k + j] = a[t];
		if (used > terms)
			terms = used;
	}
	if (terms == 1)
		return PR_OK;
	for (int t = 0; t < terms; t++)
		slots[t] = mix->g_slot[(mix->newest - t + mix->ring) % mix->ring];
	status = mix->engine->ops->combine(mix->engine, mix->x_slot, terms, slots, mix->coef, err);
	if (status == PR_OK)
	{
		*next_x = mix->x_slot;
		mix->mixed_steps++;
	}
	return status;
}

/* See pr_mixing.h. */
void
pr_mixing_end(PrMixing *mix)
{
	pr_free(&pr_malloc_allocator, mix->usable);
	pr_free(&pr_malloc_allocator, mix->last_l1);
	pr_free(&pr_malloc_allocator, mix->gram);
	pr_free(&pr_malloc_allocator, mix->coef);
	pr_free(&pr_malloc_allocator, mix->dot);
	mix->usable = NULL;
	mix->last_l1 = mix->gram = mix->coef = mix->dot = NULL;
}
