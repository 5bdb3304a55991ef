/*
 * pr_push_start.c — a start vector brought closer to a PageRank fixed point by pushing its
 * residual along out-edges (see pr_push_start.h).
 *
 * The residual is kept as r[v] + spread * d[v]: pushes from dangling nodes add to the one number
 * spread instead of to every node of the dangling distribution d.  Nodes wait in a FIFO queue (each
 * at most once) while their residual exceeds the round's threshold times their out-degree; when
 * the queue runs dry the L1 of the residual is measured and the threshold divided by 8.
 */
#include "pr_push_start.h"

#include <math.h>
#include <string.h>

/* Thresholds below this end the pushing (nothing left that a double can move). */
#define PUSH_MIN_THRESHOLD 1e-300

/* Where a run's restart and dangling mass go, dense or uniform. */
typedef struct PushTargets
{
	double		uniform;		/* 1/n when dense is NULL */
	double	   *dense;			/* [n] the dangling distribution, or NULL (uniform) */
} PushTargets;

/* The dangling distribution's share of node v. */
static inline double
target_share(const PushTargets *t, int64_t v)
{
	return t->dense != NULL ? t->dense[v] : t->uniform;
}

/* Out-degree of u, at least 1: the unit a node's threshold is measured in. */
static inline double
push_width(const PrGraph *g, int64_t u)
{
	int64_t		deg = g->out_ptr[u + 1] - g->out_ptr[u];

	return deg > 0 ? (double) deg : 1.0;
}

/* Adds scale times the column's distribution (uniform, or its weighted list scaled to sum 1) to r. */
static void
add_distribution(double *r, int64_t n, bool uniform, const int32_t *node, const double *weight,
				 int64_t count, double scale)
{
	double		total = 0.0;

	if (uniform)
	{
		for (int64_t v = 0; v < n; v++)
			r[v] += scale / (double) n;
		return;
	}
	for (int64_t i = 0; i < count; i++)
		total += weight[i];
	if (!(total > 0.0))
		return;
	for (int64_t i = 0; i < count; i++)
		r[node[i]] += scale * weight[i] / total;
}

/*
 * r = T(x) - x over g's in-edges: alpha (P x + dangling(x) d) + (1 - alpha) restart - x.
 * dangling_uniform / dangling list per the restart (its own list, else the restart's).
 */
static void
initial_residual(const PrGraph *g, double alpha, const PrRestart *restart, const double *x,
				 double *r)
{
	int64_t		n = g->n_nodes;
	double		dangling_mass = 0.0;
	bool		rest_uniform = restart->uniform;
	int64_t		rest_count = rest_uniform ? 0 : restart->ptr[1] - restart->ptr[0];

	for (int64_t i = 0; i < g->n_dangling; i++)
		dangling_mass += x[g->dangling[i]];
	for (int64_t v = 0; v < n; v++)
	{
		double		acc = 0.0;

		for (int64_t e = g->in_ptr[v]; e < g->in_ptr[v + 1]; e++)
		{
			int32_t		u = g->in_src[e];
			double		w = g->in_weight != NULL ? g->in_weight[e] : 1.0;

			if (g->out_strength[u] > 0.0)
				acc += w * x[u] / g->out_strength[u];
		}
		r[v] = alpha * acc - x[v];
	}
	add_distribution(r, n, rest_uniform, rest_uniform ? NULL : restart->node + restart->ptr[0],
					 rest_uniform ? NULL : restart->weight + restart->ptr[0], rest_count,
					 1.0 - alpha);
	if (restart->dangling_count > 0)
		add_distribution(r, n, false, restart->dangling_node, restart->dangling_weight,
						 restart->dangling_count, alpha * dangling_mass);
	else
		add_distribution(r, n, rest_uniform,
						 rest_uniform ? NULL : restart->node + restart->ptr[0],
						 rest_uniform ? NULL : restart->weight + restart->ptr[0], rest_count,
						 alpha * dangling_mass);
}

/* Fills t with the dangling distribution (dense when it is a list; dense has n zeroed doubles). */
static void
dangling_targets(const PrGraph *g, const PrRestart *restart, double *dense, PushTargets *t)
{
	int64_t		n = g->n_nodes;

	t->uniform = 1.0 / (double) n;
	t->dense = NULL;
	if (restart->dangling_count > 0)
	{
		add_distribution(dense, n, false, restart->dangling_node, restart->dangling_weight,
						 restart->dangling_count, 1.0);
		t->dense = dense;
	}
	else if (!restart->uniform)
	{
		add_distribution(dense, n, false, restart->node + restart->ptr[0],
						 restart->weight + restart->ptr[0], restart->ptr[1] - restart->ptr[0], 1.0);
		t->dense = dense;
	}
}

/* L1 of the residual r + spread * d. */
static double
residual_l1(const double *r, int64_t n, double spread, const PushTargets *t)
{
	double		sum = 0.0;

	for (int64_t v = 0; v < n; v++)
		sum += fabs(r[v] + spread * target_share(t, v));
	return sum;
}

/* Brings x closer to the fixed point by pushing its residual (see pr_push_start.h). */
PrStatus
pr_push_start(const PrGraph *g, double alpha, const PrRestart *restart,
			  const PrPushOptions *options, double *x, PrPushStats *stats,
			  const PrAllocator *alloc, PrError *err)
{
	int64_t		n = g->n_nodes;
	double	   *r;
	double	   *dense;
	int32_t    *queue;
	unsigned char *queued;
	PushTargets targets;
	double		spread = 0.0;
	double		visits,
				target,
				l1,
				threshold = 0.0,
				sum = 0.0;

	memset(stats, 0, sizeof(PrPushStats));
	if (n == 0)
		return PR_OK;
	if (!g->has_out_edges || restart->k != 1)
		return pr_error_set(err, PR_ERR_INVALID,
							"pushing a start needs the graph's out-edges and one column");
	r = (double *) pr_alloc_array(alloc, (size_t) n, sizeof(double));
	dense = (double *) pr_alloc_array(alloc, (size_t) n, sizeof(double));
	queue = (int32_t *) pr_alloc_array(alloc, (size_t) n, sizeof(int32_t));
	queued = (unsigned char *) pr_alloc_array(alloc, (size_t) n, 1);
	if (r == NULL || dense == NULL || queue == NULL || queued == NULL)
	{
		pr_free(alloc, r);
		pr_free(alloc, dense);
		pr_free(alloc, queue);
		pr_free(alloc, queued);
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory pushing the start's residual");
	}
	memset(dense, 0, (size_t) n * sizeof(double));
	memset(queued, 0, (size_t) n);
	dangling_targets(g, restart, dense, &targets);
	initial_residual(g, alpha, restart, x, r);
	visits = (double) (g->n_edges + n);
	l1 = residual_l1(r, n, 0.0, &targets);
	stats->residual_before = l1;
	target = l1 / options->reduction;
	if (target < options->floor)
		target = options->floor;
	for (int64_t v = 0; v < n; v++)
	{
		double		level = fabs(r[v]) / push_width(g, v);

		if (level > threshold)
			threshold = level;
	}
	threshold /= 2.0;

	while (l1 > target && visits < options->max_visits && threshold > PUSH_MIN_THRESHOLD)
	{
		int64_t		head = 0,
					count = 0;

		/* the round's queue: every node above the threshold, in node order */
		for (int64_t v = 0; v < n; v++)
			if (fabs(r[v] + spread * target_share(&targets, v)) > threshold * push_width(g, v))
			{
				queue[(head + count++) % n] = (int32_t) v;
				queued[v] = 1;
			}
		visits += (double) n;
		while (count > 0 && visits < options->max_visits)
		{
			int32_t		u = queue[head];
			double		rho = r[u] + spread * target_share(&targets, u);
			int64_t		e0 = g->out_ptr[u],
						e1 = g->out_ptr[u + 1];

			head = (head + 1) % n;
			count--;
			queued[u] = 0;
			if (!(fabs(rho) > threshold * push_width(g, u)))
				continue;
			x[u] += rho;
			r[u] -= rho;
			stats->pushes++;
			visits += (double) (e1 - e0 + 1);
			if (!(g->out_strength[u] > 0.0))
			{
				spread += alpha * rho;
				continue;
			}
			for (int64_t e = e0; e < e1; e++)
			{
				int32_t		v = g->out_dst[e];
				double		w = g->out_weight != NULL ? g->out_weight[e] : 1.0;

				r[v] += alpha * rho * w / g->out_strength[u];
				if (!queued[v] &&
					fabs(r[v] + spread * target_share(&targets, v)) > threshold * push_width(g, v))
				{
					queue[(head + count++) % n] = v;
					queued[v] = 1;
				}
			}
		}
		/* a round cut short by the budget leaves nodes flagged: clear them */
		for (; count > 0; count--, head = (head + 1) % n)
			queued[queue[head]] = 0;
		l1 = residual_l1(r, n, spread, &targets);
		visits += (double) n;
		threshold /= 8.0;
	}
	stats->residual_after = l1;
	stats->visits = (int64_t) visits;
	stats->reached = l1 <= target;

	for (int64_t v = 0; v < n; v++)
	{
		if (!(x[v] > 0.0))
			x[v] = 0.0;
		sum += x[v];
	}
	for (int64_t v = 0; v < n; v++)
		x[v] = sum > 0.0 ? x[v] / sum : 1.0 / (double) n;
	pr_free(alloc, r);
	pr_free(alloc, dense);
	pr_free(alloc, queue);
	pr_free(alloc, queued);
	return PR_OK;
}
