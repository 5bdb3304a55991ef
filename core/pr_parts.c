/*
 * pr_parts.c — one engine over several part engines: the rows split by cost, the part graphs, the
 * operations run on every part or read from part 0, and the generic exchange through host
 * memory.  pr_parts.h describes the engine.
 */
#include "pr_parts.h"
#include "pr_graph.h"
#include "pr_residency.h"
#include "pr_topk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The last part's range of an all-gather is padded by fewer than PR_PARTS_MAX rows. */
_Static_assert(PR_VECTOR_SPARE_ROWS >= PR_PARTS_MAX - 1, "the spare rows of a vector hold the padding");

/* A parts engine: its operations, its parts, the split of the graph it holds. */
typedef struct PartsEngine
{
	PrEngine	base;
	PrEngineOps ops;			/* what every part offers (see pr_parts_engine_create) */
	char		name[64];
	PrAllocator alloc;
	int			n_parts;
	PrEngine   *parts[PR_PARTS_MAX];
	PrPartsExchange exchange;

	/* the split: kept while prepare sees the same graph and the same need of the push product */
	bool		split_done;		/* g_seen, push, order, row_begin and part_graph describe a graph */
	const PrGraph *g;
	PrGraph		g_seen;			/* *g as the split saw it */
	bool		push;			/* the part graphs hold their edges as an out-CSR too (copies) */
	PrGraph		ordered;		/* g in the parts' order (see order_graph): the split's graph */
	int32_t    *new_to_old;		/* [n] the node of g at each position of the parts' order */
	int32_t    *old_to_new;		/* [n] its inverse */
	int64_t		row_begin[PR_PARTS_MAX + 1];	/* in the parts' order */
	PrGraph		part_graph[PR_PARTS_MAX];	/* in_ptr always ours; the out-CSR too with push */
	double		split_seconds;	/* of the last prepare (0 when it kept the split) */

	/* the prepared state */
	bool		prepared;
	int			k;
	bool		rows_owned;		/* every part owns its rows (own_rows): updates divided */
	int			n_flags;		/* slots that whole and input_whole describe */
	bool	   *whole;			/* [n_flags] every part holds every row of the slot */
	bool	   *input_whole;	/* [n_flags] ... or at least what a normalized pull product reads */
	bool		residual_partial;	/* the last residual is each part's over its own rows */
	double	   *assembled;		/* generic exchange: [n*k] the whole slot, rows from their parts */
	double	   *received;		/* generic exchange: [n*k] one part's copy of the slot */
	size_t		exchange_values;	/* values each of the two holds */
	double	   *reordered;		/* [n*k] a vector between the caller's order and the parts' */
	size_t		reordered_values;

	/* the last restart given (kept_restart): a copy of the caller's and the same in the parts' order */
	bool		restart_kept;
	PrRestart	restart_given;	/* over copies of the caller's arrays, in restart_block */
	PrRestart	restart_ordered;	/* the parts' order, over restart_block */
	void	   *restart_block;
} PartsEngine;

/* Fails an operation of an engine that is not prepared. */
static PrStatus
not_prepared(PrError *err)
{
	return pr_error_set(err, PR_ERR_ENGINE, "the parts engine is not prepared");
}

/* Passes on the status of part p's operation, its message prefixed by "part p of n: ". */
static PrStatus
from_part(const PartsEngine *e, int p, PrStatus status, const PrError *part_err, PrError *err)
{
	if (status == PR_OK)
		return PR_OK;
	return pr_error_set(err, status, "part %d of %d: %s", p, e->n_parts, part_err->message);
}

/*
 * The body of an operation run on every part: CALL, an expression over `part` that fills
 * `part_err` when it fails, on each part in turn.  Returns the first failure (named by its part),
 * else PR_OK.
 */
#define RETURN_ON_EVERY_PART(base, err, CALL) RETURN_ON_EVERY_PART_THEN(base, err, CALL, (void) 0)

/* The same, with AFTER, a statement, run once every part succeeded. */
#define RETURN_ON_EVERY_PART_THEN(base, err, CALL, AFTER) \
	do { \
		PartsEngine *e_ = (PartsEngine *) (base); \
\
		if (!e_->prepared) \
			return not_prepared(err); \
		for (int p_ = 0; p_ < e_->n_parts; p_++) \
		{ \
			PrEngine   *part = e_->parts[p_]; \
			PrError		part_err = {PR_OK, ""}; \
			PrStatus	status_ = from_part(e_, p_, (CALL), &part_err, (err)); \
\
			if (status_ != PR_OK) \
				return status_; \
		} \
		AFTER; \
		return PR_OK; \
	} while (0)

/*
 * The body of a read: CALL, an expression over `part` that fills `part_err` when it fails, on
 * part 0 (every part holds the same vectors).  Returns its status.
 */
#define RETURN_FROM_PART_0(base, err, CALL) \
	do { \
		PartsEngine *e_ = (PartsEngine *) (base); \
		PrEngine   *part = e_->parts[0]; \
		PrError		part_err = {PR_OK, ""}; \
\
		if (!e_->prepared) \
			return not_prepared(err); \
		return from_part(e_, 0, (CALL), &part_err, (err)); \
	} while (0)

/* Frees the arrays of a part graph that the engine made (push: the out-CSR too). */
static void
free_part_graph(PartsEngine *e, PrGraph *pg, bool push)
{
	pr_free(&e->alloc, pg->in_ptr);
	if (push)
	{
		pr_free(&e->alloc, pg->out_ptr);
		pr_free(&e->alloc, pg->out_dst);
		pr_free(&e->alloc, pg->out_weight);
	}
	memset(pg, 0, sizeof(*pg));
}

/* Frees the kept restart (kept_restart). */
static void
free_kept_restart(PartsEngine *e)
{
	pr_free(&e->alloc, e->restart_block);
	e->restart_block = NULL;
	e->restart_kept = false;
}

/* Frees the graph in the parts' order and its maps. */
static void
free_order(PartsEngine *e, PrGraph *ordered, int32_t *new_to_old, int32_t *old_to_new)
{
	pr_free(&e->alloc, ordered->in_ptr);
	pr_free(&e->alloc, ordered->in_src);
	pr_free(&e->alloc, ordered->in_weight);
	pr_free(&e->alloc, ordered->out_strength);
	pr_free(&e->alloc, ordered->dangling);
	memset(ordered, 0, sizeof(*ordered));
	pr_free(&e->alloc, new_to_old);
	pr_free(&e->alloc, old_to_new);
}

/*
 * Deals the nodes of the out-degree order (by_degree) to the parts: the head, the rows that hold
 * the first half of the in-edges (the hubs), one at a time to the part with the fewest in-edges so
 * far (ties: fewer rows, then the lower part); the tail, one row each in turn.  The head balances
 * the parts' edges, the tail their rows and the rest of the edges.  Every part takes C =
 * ceil(n / n_parts) rows, the last the rest (a part that is full is passed over): part p's rows
 * then begin at row p * C, ranges of one length, which an all-gather exchanges in place (the last
 * part's range padded into the spare rows every vector holds, PR_VECTOR_SPARE_ROWS).  Writes the
 * parts' order into new_to_old (part 0's nodes, then part 1's, ..., each part's in the out-degree
 * order) and the first row of each part into row_begin.
 */
static void
deal_rows(const PartsEngine *e, const PrGraph *g, const int32_t *by_degree, int64_t *count, int32_t *new_to_old,
		  int64_t *row_begin)
{
	int64_t		n = g->n_nodes;
	int64_t		total = n > 0 ? g->in_ptr[n] : 0;
	int64_t		rows_each = (n + e->n_parts - 1) / e->n_parts;
	int64_t		room[PR_PARTS_MAX];
	int64_t		edges[PR_PARTS_MAX] = {0};
	int64_t		rows[PR_PARTS_MAX] = {0};
	int64_t		dealt = 0;
	int64_t		i = 0;
	int			turn = 0;

	for (int p = 0; p < e->n_parts; p++)
	{
		int64_t		left = n - p * rows_each;	/* the rows from part p's first on */

		room[p] = left < 0 ? 0 : left < rows_each ? left : rows_each;
	}
	/* count[i]: the part of the i-th node of by_degree (the rooms add up to n: one always has room) */
	for (; i < n && 2 * dealt < total; i++)
	{
		int32_t		v = by_degree[i];
		int64_t		in = g->in_ptr[v + 1] - g->in_ptr[v];
		int			to = -1;

		for (int p = 0; p < e->n_parts; p++)
			if (rows[p] < room[p] &&
				(to < 0 || edges[p] < edges[to] || (edges[p] == edges[to] && rows[p] < rows[to])))
				to = p;
		count[i] = to;
		edges[to] += in;
		rows[to]++;
		dealt += in;
	}
	for (; i < n; i++)
	{
		while (rows[turn] >= room[turn])
			turn = (turn + 1) % e->n_parts;
		count[i] = turn;
		rows[turn]++;
		turn = (turn + 1) % e->n_parts;
	}
	row_begin[0] = 0;
	for (int p = 0; p < e->n_parts; p++)
		row_begin[p + 1] = row_begin[p] + rows[p];
	for (int p = 0; p < e->n_parts; p++)
		rows[p] = row_begin[p];	/* the next position of each part */
	for (i = 0; i < n; i++)
		new_to_old[rows[count[i]]++] = by_degree[i];
}

/*
 * g with its nodes renumbered for the parts (*ordered, its maps *new_to_old and *old_to_new, the
 * parts' first rows in row_begin): the nodes by descending out-degree, ties in g's order (the
 * order a GPU engine would choose for the whole graph, the hubs first), dealt to the parts by
 * deal_rows so that every part gets about its share of the in-edges and of the rows, and each
 * part's nodes one range of the order, in the out-degree order within it.  One order for every
 * part: a part's own rows are one range of every part's vectors and travel without reordering.
 * Each row's sources stay ascending (the sources are placed in their new order); the
 * out-strengths and the dangling list follow the nodes; no node ids and no out-edge arrays.
 * Nothing is allocated on failure.
 */
static PrStatus
order_graph(PartsEngine *e, const PrGraph *g, PrGraph *ordered, int32_t **new_to_old_out,
			int32_t **old_to_new_out, int64_t *row_begin, PrError *err)
{
	const PrAllocator *a = &e->alloc;
	int64_t		n = g->n_nodes;
	int64_t		m = n > 0 ? g->in_ptr[n] : 0;
	PrGraph		out_edges = *g;
	int64_t    *degree = NULL;
	int64_t    *cursor = NULL;
	int32_t    *new_to_old = NULL;
	int32_t    *old_to_new = NULL;
	bool		own_out = !g->has_out_edges;
	PrStatus	status = PR_OK;

	memset(ordered, 0, sizeof(*ordered));
	if (own_out)
	{
		out_edges.out_ptr = NULL;
		out_edges.out_dst = NULL;
		out_edges.out_weight = NULL;
		out_edges.has_out_edges = false;
		if ((status = pr_graph_add_out_edges(&out_edges, pr_thread_count(0, 16), a, err)) != PR_OK)
			return status;
	}
	degree = (int64_t *) pr_alloc_array(a, (size_t) n + 1, sizeof(int64_t));
	cursor = (int64_t *) pr_alloc_array(a, (size_t) n + 1, sizeof(int64_t));
	new_to_old = (int32_t *) pr_alloc_array(a, (size_t) n + 1, sizeof(int32_t));
	old_to_new = (int32_t *) pr_alloc_array(a, (size_t) n + 1, sizeof(int32_t));
	ordered->in_ptr = (int64_t *) pr_alloc_array(a, (size_t) n + 1, sizeof(int64_t));
	ordered->in_src = (int32_t *) pr_alloc_array(a, (size_t) m + 1, sizeof(int32_t));
	ordered->in_weight = g->in_weight != NULL ?
		(double *) pr_alloc_array(a, (size_t) m + 1, sizeof(double)) : NULL;
	ordered->out_strength = (double *) pr_alloc_array(a, (size_t) n + 1, sizeof(double));
	ordered->dangling = (int32_t *) pr_alloc_array(a, (size_t) g->n_dangling + 1, sizeof(int32_t));
	if (degree == NULL || cursor == NULL || new_to_old == NULL || old_to_new == NULL ||
		ordered->in_ptr == NULL || ordered->in_src == NULL ||
		(g->in_weight != NULL && ordered->in_weight == NULL) || ordered->out_strength == NULL ||
		ordered->dangling == NULL)
		status = pr_error_set(err, PR_ERR_NOMEM, "out of memory ordering a graph of %lld nodes for its parts",
							  (long long) n);
	if (status == PR_OK)
	{
		for (int64_t v = 0; v < n; v++)
			degree[v] = out_edges.out_ptr[v + 1] - out_edges.out_ptr[v];
		/* the out-degree order into old_to_new (free until the inverse is made), then dealt */
		status = pr_order_by_key_desc(n, degree, old_to_new, NULL, a, err);
	}
	if (status == PR_OK)
	{
		deal_rows(e, g, old_to_new, degree, new_to_old, row_begin);
		for (int64_t i = 0; i < n; i++)
			old_to_new[new_to_old[i]] = (int32_t) i;
	}
	if (status == PR_OK)
	{
		int64_t		dangling = 0;

		ordered->in_ptr[0] = 0;
		for (int64_t i = 0; i < n; i++)
		{
			int32_t		v = new_to_old[i];

			ordered->in_ptr[i + 1] = ordered->in_ptr[i] + (g->in_ptr[v + 1] - g->in_ptr[v]);
			cursor[i] = ordered->in_ptr[i];
			ordered->out_strength[i] = g->out_strength[v];
			if (g->out_strength[v] == 0.0 && dangling < g->n_dangling)
				ordered->dangling[dangling++] = (int32_t) i;
		}
		/* sources in their new order, so each row's list comes out ascending */
		for (int64_t i = 0; i < n; i++)
		{
			int32_t		v = new_to_old[i];

			for (int64_t j = out_edges.out_ptr[v]; j < out_edges.out_ptr[v + 1]; j++)
			{
				int64_t		at = cursor[old_to_new[out_edges.out_dst[j]]]++;

				ordered->in_src[at] = (int32_t) i;
				if (ordered->in_weight != NULL)
					ordered->in_weight[at] = out_edges.out_weight[j];
			}
		}
		ordered->n_nodes = n;
		ordered->n_edges = g->n_edges;
		ordered->weighted = g->weighted;
		ordered->has_out_edges = false;
		ordered->n_dangling = dangling;
		if (dangling != g->n_dangling)
			status = pr_error_set(err, PR_ERR_INVALID,
								  "the graph lists %lld dangling nodes but %lld have no out-strength",
								  (long long) g->n_dangling, (long long) dangling);
	}
	if (own_out)
	{
		pr_free(a, out_edges.out_ptr);
		pr_free(a, out_edges.out_dst);
		pr_free(a, out_edges.out_weight);
	}
	pr_free(a, degree);
	pr_free(a, cursor);
	if (status != PR_OK)
	{
		free_order(e, ordered, new_to_old, old_to_new);
		return status;
	}
	*new_to_old_out = new_to_old;
	*old_to_new_out = old_to_new;
	return PR_OK;
}

/*
 * The part graph of rows [begin, end) for the pull products: row pointers of its own (the
 * graph's clamped to the range and moved to start at 0: the other rows are empty) over the
 * graph's edge arrays from the range's first edge (no copy).
 */
static PrStatus
make_pull_part(PartsEngine *e, const PrGraph *g, int64_t begin, int64_t end, PrGraph *pg,
			   PrError *err)
{
	int64_t		n = g->n_nodes;
	int64_t		first = n > 0 ? g->in_ptr[begin] : 0;
	int64_t		last = n > 0 ? g->in_ptr[end] : 0;

	pg->in_ptr = (int64_t *) pr_alloc_array(&e->alloc, (size_t) n + 1, sizeof(int64_t));
	if (pg->in_ptr == NULL)
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory for a part graph of %lld rows",
							(long long) n);
	pg->in_ptr[0] = 0;
	for (int64_t v = 1; v <= n; v++)
	{
		int64_t		at = g->in_ptr[v] < first ? first : g->in_ptr[v] > last ? last : g->in_ptr[v];

		pg->in_ptr[v] = at - first;
	}
	pg->in_src = g->in_src != NULL ? g->in_src + first : NULL;
	pg->in_weight = g->in_weight != NULL ? g->in_weight + first : NULL;
	pg->n_edges = last - first;
	pg->has_out_edges = false;
	return PR_OK;
}

/*
 * The part graph of rows [begin, end) for the push product too: the pull part graph, and its
 * edges as an out-CSR of every node (pr_graph_add_out_edges: copies, each source's entries in
 * ascending target order), so the push product of the part sums over the part's edges.  A graph
 * without out-edge arrays has no edges here (prepare refuses it otherwise).
 */
static PrStatus
make_push_part(PartsEngine *e, const PrGraph *g, int64_t begin, int64_t end, PrGraph *pg,
			   PrError *err)
{
	PrError		add_err = {PR_OK, ""};
	PrStatus	status = make_pull_part(e, g, begin, end, pg, err);

	if (status != PR_OK)
		return status;
	if (pr_graph_add_out_edges(pg, pr_thread_count(0, 16), &e->alloc, &add_err) != PR_OK)
	{
		free_part_graph(e, pg, true);
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory for a part graph of %lld rows",
							(long long) g->n_nodes);
	}
	return PR_OK;
}

/*
 * Splits g, in the parts' order (order_graph), into the parts' graphs (row_begin, part_graph):
 * every node, the graph's out-strengths and dangling list, and the in-edges of each part's rows
 * (with push also as an out-CSR).  The new arrays are
 * made before the old ones are freed, so no part is prepared again on an address it saw with
 * other contents.  On failure the engine keeps its former split.
 */
static PrStatus
split_graph(PartsEngine *e, const PrGraph *given, bool push, PrError *err)
{
	double		t0 = pr_clock_seconds();
	int64_t		row_begin[PR_PARTS_MAX + 1];
	PrGraph		fresh[PR_PARTS_MAX];
	PrGraph		ordered;
	int32_t    *new_to_old,
			   *old_to_new;
	const PrGraph *g = &ordered;
	PrStatus	status = order_graph(e, given, &ordered, &new_to_old, &old_to_new, row_begin, err);

	if (status != PR_OK)
		return status;
	memset(fresh, 0, sizeof(fresh));
	for (int p = 0; status == PR_OK && p < e->n_parts; p++)
	{
		PrGraph    *pg = &fresh[p];

		*pg = *g;				/* every node, the out-strengths and the dangling list */
		pg->in_ptr = pg->out_ptr = NULL;
		pg->in_src = pg->out_dst = NULL;
		pg->in_weight = pg->out_weight = NULL;
		status = push ? make_push_part(e, g, row_begin[p], row_begin[p + 1], pg, err)
			: make_pull_part(e, g, row_begin[p], row_begin[p + 1], pg, err);
	}
	if (status != PR_OK)
	{
		for (int p = 0; p < e->n_parts; p++)
			free_part_graph(e, &fresh[p], push);
		free_order(e, &ordered, new_to_old, old_to_new);
		return status;
	}
	for (int p = 0; p < e->n_parts; p++)
		free_part_graph(e, &e->part_graph[p], e->push);
	free_order(e, &e->ordered, e->new_to_old, e->old_to_new);
	free_kept_restart(e);		/* renumbered by the order just replaced */
	memcpy(e->part_graph, fresh, sizeof(fresh));
	memcpy(e->row_begin, row_begin, sizeof(row_begin));
	e->ordered = ordered;
	e->new_to_old = new_to_old;
	e->old_to_new = old_to_new;
	e->g = given;
	e->g_seen = *given;
	e->push = push;
	e->split_done = true;
	e->split_seconds = pr_clock_seconds() - t0;
	return PR_OK;
}

/*
 * Makes the host vector between the caller's order and the parts' hold n*k values, and the
 * generic exchange's two host vectors too (each kept when it does).
 */
static PrStatus
reserve_exchange(PartsEngine *e, int64_t n, int k, PrError *err)
{
	size_t		values = (size_t) n * (size_t) k;

	if (values > e->reordered_values)
	{
		pr_free(&e->alloc, e->reordered);
		e->reordered_values = 0;
		e->reordered = (double *) pr_alloc_array(&e->alloc, values + 1, sizeof(double));
		if (e->reordered == NULL)
			return pr_error_set(err, PR_ERR_NOMEM, "out of memory for a vector of %lld x %d values",
								(long long) n, k);
		e->reordered_values = values;
	}
	if (e->exchange.gather != NULL || values <= e->exchange_values)
		return PR_OK;
	pr_free(&e->alloc, e->assembled);
	pr_free(&e->alloc, e->received);
	e->assembled = (double *) pr_alloc_array(&e->alloc, values, sizeof(double));
	e->received = (double *) pr_alloc_array(&e->alloc, values, sizeof(double));
	e->exchange_values = 0;
	if (e->assembled == NULL || e->received == NULL)
		return pr_error_set(err, PR_ERR_NOMEM,
							"out of memory for the exchange of %lld x %d values",
							(long long) n, k);
	e->exchange_values = values;
	return PR_OK;
}

/*
 * Makes whole and input_whole describe n_slots slots: those they described keep their state
 * unless fresh (a new graph or k: nothing the slots held counts), the others whole (no operation
 * wrote them since the prepare; every part holds the same nothing).
 */
static PrStatus
reserve_flags(PartsEngine *e, int n_slots, bool fresh, PrError *err)
{
	if (n_slots > e->n_flags)
	{
		bool	   *whole = (bool *) pr_alloc_array(&e->alloc, (size_t) n_slots, sizeof(bool));
		bool	   *input_whole = (bool *) pr_alloc_array(&e->alloc, (size_t) n_slots, sizeof(bool));

		if (whole == NULL || input_whole == NULL)
		{
			pr_free(&e->alloc, whole);
			pr_free(&e->alloc, input_whole);
			return pr_error_set(err, PR_ERR_NOMEM, "out of memory for the state of %d vectors", n_slots);
		}
		for (int s = 0; s < n_slots; s++)
			whole[s] = input_whole[s] = s < e->n_flags ? e->whole[s] : true;
		pr_free(&e->alloc, e->whole);
		pr_free(&e->alloc, e->input_whole);
		e->whole = whole;
		e->input_whole = input_whole;
		e->n_flags = n_slots;
	}
	for (int s = 0; fresh && s < e->n_flags; s++)
		e->whole[s] = e->input_whole[s] = true;
	return PR_OK;
}

/*
 * Gives every part its rows (own_rows) when every part can own rows; a part that refuses its range
 * makes every part own every row again (the updates then run over the whole vectors).
 */
static PrStatus
own_parts_rows(PartsEngine *e, PrError *err)
{
	PrStatus	status = PR_OK;

	e->rows_owned = false;
	for (int p = 0; p < e->n_parts; p++)
		if (e->parts[p]->ops->own_rows == NULL)
			return PR_OK;
	for (int p = 0; status == PR_OK && p < e->n_parts; p++)
	{
		PrEngine   *part = e->parts[p];
		PrError		part_err = {PR_OK, ""};

		status = part->ops->own_rows(part, e->row_begin[p], e->row_begin[p + 1], &part_err);
	}
	if (status == PR_OK)
	{
		e->rows_owned = true;
		return PR_OK;
	}
	for (int p = 0; p < e->n_parts; p++)
	{
		PrEngine   *part = e->parts[p];
		PrError		part_err = {PR_OK, ""};

		if ((status = from_part(e, p, part->ops->own_rows(part, 0, e->g_seen.n_nodes, &part_err), &part_err,
								err)) != PR_OK)
			return status;
	}
	return PR_OK;
}

/*
 * Splits the graph (or keeps the split of the graph it holds) and prepares every part on its
 * part graph with the same k, slots and products.  Every part is asked even after one failed
 * (the first failure is returned), so that each part holds either the current part graph or,
 * failed, none: the former part graphs can go.
 */
static PrStatus
parts_prepare(PrEngine *base, const PrGraph *g, int k, int n_slots, unsigned needs, PrError *err)
{
	PartsEngine *e = (PartsEngine *) base;
	bool		push = (needs & PR_NEED_PUSH) != 0;
	PrStatus	status = PR_OK;

	e->prepared = false;
	if (g == NULL || k <= 0 || n_slots <= 0 || g->n_nodes < 0 || g->n_nodes > PR_MAX_NODES ||
		(g->n_nodes > 0 && g->in_ptr == NULL))
		return pr_error_set(err, PR_ERR_INVALID, "bad arguments to the parts engine's prepare");
	if (push && !g->has_out_edges && g->n_edges > 0)
		return pr_error_set(err, PR_ERR_UNSUPPORTED,
							"the graph has no out-edge arrays, which this algorithm needs (build it with out_edges)");
	if (e->split_done && e->g == g && e->push == push && pr_graph_same_arrays(g, &e->g_seen))
		e->split_seconds = 0.0;
	else if ((status = split_graph(e, g, push, err)) != PR_OK)
		return status;
	if ((status = reserve_exchange(e, g->n_nodes, k, err)) != PR_OK)
		return status;
	for (int p = 0; p < e->n_parts; p++)
	{
		PrEngine   *part = e->parts[p];
		PrError		part_err = {PR_OK, ""};
		PrStatus	part_status = from_part(e, p, part->ops->prepare(part, &e->part_graph[p], k,
																	 n_slots, needs, &part_err),
											&part_err, status == PR_OK ? err : NULL);

		if (status == PR_OK)
			status = part_status;
	}
	if (status == PR_OK)
		status = reserve_flags(e, n_slots, e->split_seconds > 0.0 || k != e->k, err);
	e->k = k;
	e->residual_partial = false;
	if (status == PR_OK)
		status = own_parts_rows(e, err);
	e->prepared = status == PR_OK;
	return status;
}

/*
 * The generic exchange through one host vector: each part's copy of slot downloaded and, for a
 * gather, its own rows copied in (parts without rows skipped), for a sum, every value added in
 * part order; the result uploaded to every part.
 */
static PrStatus
exchange_on_host(PartsEngine *e, int slot, bool sum, PrError *err)
{
	size_t		k = (size_t) e->k;
	size_t		values = (size_t) e->g_seen.n_nodes * k;

	for (int p = 0; p < e->n_parts; p++)
	{
		PrEngine   *part = e->parts[p];
		PrError		part_err = {PR_OK, ""};
		size_t		first = sum ? 0 : (size_t) e->row_begin[p] * k;
		size_t		last = sum ? values : (size_t) e->row_begin[p + 1] * k;
		double	   *into = sum && p == 0 ? e->assembled : e->received;
		PrStatus	status;

		if (first == last && !sum)
			continue;
		status = from_part(e, p, part->ops->download(part, slot, into, &part_err), &part_err, err);
		if (status != PR_OK)
			return status;
		if (!sum)
			memcpy(e->assembled + first, e->received + first, sizeof(double) * (last - first));
		else
			for (size_t i = 0; p > 0 && i < values; i++)
				e->assembled[i] += e->received[i];
	}
	RETURN_ON_EVERY_PART(e, err, part->ops->upload(part, slot, e->assembled, &part_err));
}

/*
 * Whether every part holds every row of slot (a slot no flag describes: yes; without rows owned
 * a slot is only partial between a pull product and its exchange, which follow one another).
 */
static inline bool
slot_whole(const PartsEngine *e, int slot)
{
	return slot < 0 || slot >= e->n_flags || e->whole[slot];
}

/*
 * Records what an operation left in slot: every row on every part (whole), or each part's own
 * rows only (the others stale or zero).
 */
static void
slot_holds(PartsEngine *e, int slot, bool whole)
{
	if (slot >= 0 && slot < e->n_flags)
		e->whole[slot] = e->input_whole[slot] = whole;
}

/*
 * Exchanges the rows of slot from their parts (product_input: what a normalized pull product
 * reads of it may go instead of its values; *values_moved says which went).
 */
static PrStatus
gather_rows(PartsEngine *e, int slot, bool product_input, bool *values_moved, PrError *err)
{
	PrError		exchange_err = {PR_OK, ""};
	PrStatus	status;

	*values_moved = true;
	if (e->exchange.gather == NULL)
		return exchange_on_host(e, slot, false, err);
	status = e->exchange.gather(e->exchange.arg, e->parts, e->n_parts, e->row_begin, e->k, slot,
								product_input, values_moved, &exchange_err);
	if (status != PR_OK)
		return pr_error_set(err, status, "the exchange of a vector's rows: %s", exchange_err.message);
	return PR_OK;
}

/* Makes every part hold every row of slot (an exchange when some part holds only its own). */
static PrStatus
make_whole(PartsEngine *e, int slot, PrError *err)
{
	bool		values_moved;
	PrStatus	status;

	if (slot_whole(e, slot))
		return PR_OK;
	if ((status = gather_rows(e, slot, false, &values_moved, err)) == PR_OK)
		slot_holds(e, slot, true);
	return status;
}

/*
 * Forgets that what a product reads of a slot other than keep is whole where its values are not:
 * a part engine keeps one such input (a GPU engine's scaled copy), which the next product of
 * another slot or the next update rewrites.
 */
static void
forget_inputs(PartsEngine *e, int keep)
{
	for (int s = 0; s < e->n_flags; s++)
		if (s != keep)
			e->input_whole[s] = e->whole[s];
}

/* Makes every part hold what a normalized pull product reads of slot, every row of it. */
static PrStatus
make_input_whole(PartsEngine *e, int slot, PrError *err)
{
	bool		values_moved;
	PrStatus	status;

	forget_inputs(e, slot);
	if (slot_whole(e, slot) || e->input_whole[slot])
		return PR_OK;
	if ((status = gather_rows(e, slot, true, &values_moved, err)) != PR_OK)
		return status;
	if (values_moved)
		slot_holds(e, slot, true);
	else
		e->input_whole[slot] = true;
	return PR_OK;
}

/*
 * y_slot = product(x_slot) on every part, each part first holding what the product reads of
 * x_slot; then exchanged: a pull product's rows gathered from their parts (with rows owned, not
 * yet: each part keeps its own until an operation needs the others), a push product's partial
 * sums added, so that every part holds the whole result.
 */
static PrStatus
parts_product(PrEngine *base, PrProduct product, int x_slot, int y_slot, PrError *err)
{
	PartsEngine *e = (PartsEngine *) base;
	PrError		exchange_err = {PR_OK, ""};
	PrStatus	status;

	if (!e->prepared)
		return not_prepared(err);
	if (product != PR_PRODUCT_PULL_NORMALIZED)
		forget_inputs(e, -1);
	status = product == PR_PRODUCT_PULL_NORMALIZED ? make_input_whole(e, x_slot, err) : make_whole(e, x_slot, err);
	if (status != PR_OK)
		return status;
	for (int p = 0; p < e->n_parts; p++)
	{
		PrEngine   *part = e->parts[p];
		PrError		part_err = {PR_OK, ""};

		status = from_part(e, p, part->ops->product(part, product, x_slot, y_slot, &part_err),
						   &part_err, err);
		if (status != PR_OK)
			return status;
	}
	if (product != PR_PRODUCT_PUSH)
	{
		slot_holds(e, y_slot, false);
		return e->rows_owned ? PR_OK : make_whole(e, y_slot, err);
	}
	if (e->exchange.sum == NULL)
		status = exchange_on_host(e, y_slot, true, err);
	else if ((status = e->exchange.sum(e->exchange.arg, e->parts, e->n_parts, e->g_seen.n_nodes, e->k,
									   y_slot, &exchange_err)) != PR_OK)
		return pr_error_set(err, status, "the exchange after a product: %s", exchange_err.message);
	if (status == PR_OK)
		slot_holds(e, y_slot, true);
	return status;
}

/* Fills a slot on every part. */
static PrStatus
parts_fill(PrEngine *base, int slot, double value, PrError *err)
{
	PartsEngine *e = (PartsEngine *) base;

	RETURN_ON_EVERY_PART_THEN(base, err, part->ops->fill(part, slot, value, &part_err),
							  slot_holds(e, slot, true));
}

/* A vector of n rows of k values moved between orders: to[i] = from[map[i]] (rows). */
typedef struct ReorderJob
{
	int64_t		n;
	size_t		k;
	const int32_t *map;
	const double *from;
	double	   *to;
} ReorderJob;

/* pr_parallel_run's task: part `part` of the rows of a ReorderJob. */
static void
reorder_part(void *arg, int part, int n_parts)
{
	ReorderJob *job = (ReorderJob *) arg;
	int64_t		begin,
				end;

	pr_even_range(job->n, part, n_parts, &begin, &end);
	for (int64_t i = begin; i < end; i++)
		memcpy(job->to + (size_t) i * job->k, job->from + (size_t) job->map[i] * job->k,
			   job->k * sizeof(double));
}

/* to[i] = from[map[i]] for the engine's n rows of k values, on several threads for long vectors. */
static void
reorder_rows(const PartsEngine *e, const int32_t *map, const double *from, double *to)
{
	ReorderJob	job = {e->g_seen.n_nodes, (size_t) e->k, map, from, to};
	int64_t		values = job.n * (int64_t) job.k;

	pr_parallel_run(reorder_part, &job, values < (1 << 20) ? 1 : pr_thread_count(0, 16));
}

/* Uploads host values (the caller's order) into a slot of every part (the parts' order). */
static PrStatus
parts_upload(PrEngine *base, int slot, const double *host, PrError *err)
{
	PartsEngine *e = (PartsEngine *) base;

	if (!e->prepared)
		return not_prepared(err);
	reorder_rows(e, e->new_to_old, host, e->reordered);
	RETURN_ON_EVERY_PART_THEN(base, err, part->ops->upload(part, slot, e->reordered, &part_err),
							  slot_holds(e, slot, true));
}

/* Downloads a slot from part 0 into the caller's order. */
static PrStatus
parts_download(PrEngine *base, int slot, double *host, PrError *err)
{
	PartsEngine *e = (PartsEngine *) base;
	PrEngine   *part = e->parts[0];
	PrError		part_err = {PR_OK, ""};
	PrStatus	status;

	if (!e->prepared)
		return not_prepared(err);
	if ((status = make_whole(e, slot, err)) != PR_OK)
		return status;
	status = from_part(e, 0, part->ops->download(part, slot, e->reordered, &part_err), &part_err, err);
	if (status != PR_OK)
		return status;
	reorder_rows(e, e->old_to_new, e->reordered, host);
	return PR_OK;
}

/* A restart's entry in the parts' order, for sorting the dangling list. */
typedef struct OrderedEntry
{
	int32_t		node;
	double		weight;
} OrderedEntry;

/* qsort comparison of OrderedEntry by node. */
static int
ordered_entry_cmp(const void *a, const void *b)
{
	const OrderedEntry *x = (const OrderedEntry *) a,
			   *y = (const OrderedEntry *) b;

	return (x->node > y->node) - (x->node < y->node);
}

/* Entries of a restart that is not uniform (0 for a uniform one). */
static inline int64_t
restart_entries(const PrRestart *r)
{
	return r->uniform || r->ptr == NULL ? 0 : r->ptr[r->k];
}

/* Whether r has the contents of the restart kept (compared value by value, never by address). */
static bool
is_kept_restart(const PartsEngine *e, const PrRestart *r)
{
	const PrRestart *kept = &e->restart_given;
	int64_t		total = restart_entries(r);
	size_t		dangling = (size_t) r->dangling_count;

	if (!e->restart_kept || r->uniform != kept->uniform || r->k != kept->k ||
		(r->ptr == NULL) != (kept->ptr == NULL) || total != restart_entries(kept) ||
		r->dangling_count != kept->dangling_count)
		return false;
	if (!r->uniform && r->ptr != NULL &&
		(memcmp(r->ptr, kept->ptr, sizeof(int64_t) * ((size_t) r->k + 1)) != 0 ||
		 memcmp(r->node, kept->node, sizeof(int32_t) * (size_t) total) != 0 ||
		 memcmp(r->weight, kept->weight, sizeof(double) * (size_t) total) != 0))
		return false;
	return dangling == 0 ||
		(memcmp(r->dangling_node, kept->dangling_node, sizeof(int32_t) * dangling) == 0 &&
		 memcmp(r->dangling_weight, kept->dangling_weight, sizeof(double) * dangling) == 0);
}

/*
 * The restart in the parts' order (*out): each entry's node renumbered (the entries and their
 * weights in the caller's order, so a part sums them as it would have), the dangling list
 * renumbered and sorted again (it is ascending).  The driver passes one restart to every
 * iteration's update, so the engine keeps the last one with a copy of the caller's: a restart with
 * the same contents is not renumbered (nor its dangling list sorted) again.
 */
static PrStatus
kept_restart(PartsEngine *e, const PrRestart *given, const PrRestart **out, PrError *err)
{
	size_t		total = (size_t) restart_entries(given);
	size_t		dangling = (size_t) given->dangling_count;
	size_t		ptrs = given->uniform || given->ptr == NULL ? 0 : (size_t) given->k + 1;
	size_t		bytes = sizeof(int64_t) * ptrs + sizeof(double) * (total + 2 * dangling) +
		sizeof(int32_t) * (2 * total + 2 * dangling) + sizeof(OrderedEntry) * dangling;
	PrRestart  *copy = &e->restart_given;
	PrRestart  *ordered = &e->restart_ordered;
	OrderedEntry *entries;
	double	   *dangling_weight = NULL;
	char	   *at;

	*out = ordered;
	if (is_kept_restart(e, given))
		return PR_OK;
	free_kept_restart(e);
	if ((e->restart_block = pr_alloc_array(&e->alloc, bytes + 1, 1)) == NULL)
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory for a restart of %lld entries",
							(long long) (total + dangling));
	/* 8-byte arrays first, then the 4-byte ones, then the sort's scratch */
	at = (char *) e->restart_block;
	*copy = *given;
	*ordered = *given;
	if (ptrs > 0)
	{
		copy->ptr = ordered->ptr = memcpy(at, given->ptr, sizeof(int64_t) * ptrs);
		at += sizeof(int64_t) * ptrs;
		copy->weight = ordered->weight = memcpy(at, given->weight, sizeof(double) * total);
		at += sizeof(double) * total;
	}
	if (dangling > 0)
	{
		copy->dangling_weight = memcpy(at, given->dangling_weight, sizeof(double) * dangling);
		at += sizeof(double) * dangling;
		dangling_weight = (double *) at;
		at += sizeof(double) * dangling;
	}
	if (ptrs > 0)
	{
		int32_t    *node = (int32_t *) (at + sizeof(int32_t) * total);

		copy->node = memcpy(at, given->node, sizeof(int32_t) * total);
		at += sizeof(int32_t) * 2 * total;
		for (size_t i = 0; i < total; i++)
			node[i] = e->old_to_new[given->node[i]];
		ordered->node = node;
	}
	if (dangling > 0)
	{
		int32_t    *dangling_node = (int32_t *) (at + sizeof(int32_t) * dangling);

		copy->dangling_node = memcpy(at, given->dangling_node, sizeof(int32_t) * dangling);
		at += sizeof(int32_t) * 2 * dangling;
		entries = (OrderedEntry *) at;
		for (size_t i = 0; i < dangling; i++)
		{
			entries[i].node = e->old_to_new[given->dangling_node[i]];
			entries[i].weight = given->dangling_weight[i];
		}
		qsort(entries, dangling, sizeof(OrderedEntry), ordered_entry_cmp);
		for (size_t i = 0; i < dangling; i++)
		{
			dangling_node[i] = entries[i].node;
			dangling_weight[i] = entries[i].weight;
		}
		ordered->dangling_node = dangling_node;
		ordered->dangling_weight = dangling_weight;
	}
	e->restart_kept = true;
	return PR_OK;
}

/*
 * The body of an operation that takes a restart, run on every part: the restart in the parts'
 * order as `ordered` (kept_restart), then CALL, an expression over `part` and `ordered` that fills
 * `part_err` when it fails, on each part in turn, and AFTER, a statement, once every part
 * succeeded.  Returns the first failure (named by its part), else PR_OK.
 */
#define RETURN_ON_EVERY_PART_IN_ORDER(base, restart, err, CALL, AFTER) \
	do { \
		PartsEngine *e_ = (PartsEngine *) (base); \
		const PrRestart *ordered; \
		PrStatus	status_; \
\
		if (!e_->prepared) \
			return not_prepared(err); \
		if ((status_ = kept_restart(e_, (restart), &ordered, (err))) != PR_OK) \
			return status_; \
		for (int p_ = 0; p_ < e_->n_parts; p_++) \
		{ \
			PrEngine   *part = e_->parts[p_]; \
			PrError		part_err = {PR_OK, ""}; \
\
			if ((status_ = from_part(e_, p_, (CALL), &part_err, (err))) != PR_OK) \
				return status_; \
		} \
		AFTER; \
		return PR_OK; \
	} while (0)

/*
 * The PageRank update on every part, the restart in their order: with rows owned each part
 * computes its own rows (the slot then holds only those on each part) and its residual over them;
 * otherwise every part computes every row, and y is whole where y and x were.
 */
static PrStatus
parts_pagerank_update(PrEngine *base, int y_slot, int x_slot, double alpha,
					  const PrRestart *restart, PrError *err)
{
	PartsEngine *e = (PartsEngine *) base;

	RETURN_ON_EVERY_PART_IN_ORDER(base, restart, err,
								  part->ops->pagerank_update(part, y_slot, x_slot, alpha, ordered,
															 &part_err),
								  (forget_inputs(e, -1),
								   slot_holds(e, y_slot, !e->rows_owned && slot_whole(e, y_slot) && slot_whole(e, x_slot)),
								   e->residual_partial = e->rows_owned));
}

/* Normalises a slot on every part (each part first holding every row of it and of old_slot). */
static PrStatus
parts_normalize(PrEngine *base, int slot, int old_slot, PrError *err)
{
	PartsEngine *e = (PartsEngine *) base;
	PrStatus	status;

	if (e->prepared && ((status = make_whole(e, slot, err)) != PR_OK ||
						(status = make_whole(e, old_slot, err)) != PR_OK))
		return status;
	RETURN_ON_EVERY_PART_THEN(base, err, part->ops->normalize(part, slot, old_slot, &part_err),
							  (slot_holds(e, slot, true), e->residual_partial = false));
}

/*
 * The residuals of the last update: part 0's, or with rows owned the parts' own summed (l1) and
 * their largest (linf).
 */
static PrStatus
parts_residual(PrEngine *base, PrResidual *out, PrError *err)
{
	PartsEngine *e = (PartsEngine *) base;
	PrResidual *part_res;
	PrStatus	status = PR_OK;

	if (!e->prepared || !e->residual_partial)
		RETURN_FROM_PART_0(base, err, part->ops->residual(part, out, &part_err));
	if ((part_res = (PrResidual *) pr_alloc_array(&e->alloc, (size_t) e->k, sizeof(PrResidual))) == NULL)
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory for %d residuals", e->k);
	for (int p = 0; status == PR_OK && p < e->n_parts; p++)
	{
		PrEngine   *part = e->parts[p];
		PrError		part_err = {PR_OK, ""};

		status = from_part(e, p, part->ops->residual(part, part_res, &part_err), &part_err, err);
		for (int j = 0; status == PR_OK && j < e->k; j++)
		{
			out[j].l1 = p == 0 ? part_res[j].l1 : out[j].l1 + part_res[j].l1;
			out[j].linf = p == 0 || part_res[j].linf > out[j].linf ? part_res[j].linf : out[j].linf;
		}
	}
	pr_free(&e->alloc, part_res);
	return status;
}

/* Whether two scores are equal for the ranking (NaN equal to NaN: they rank together). */
static inline bool
same_score(double a, double b)
{
	return a == b || (a != a && b != b);
}

/* A ranked entry in the caller's ids. */
typedef struct RankedEntry
{
	double		value;
	int32_t		id;
} RankedEntry;

/* qsort comparison in pr_top_k's order: larger value first, NaN after numbers, ties by id. */
static int
ranked_entry_cmp(const void *a, const void *b)
{
	const RankedEntry *x = (const RankedEntry *) a,
			   *y = (const RankedEntry *) b;
	bool		xnan = x->value != x->value,
				ynan = y->value != y->value;

	if (xnan != ynan)
		return xnan ? 1 : -1;
	if (!xnan && x->value != y->value)
		return x->value > y->value ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

/*
 * The best count entries of a column in the caller's ids, from got entries of part 0's ranking
 * (parts' ids, best first) that hold every entry tied with the last one kept (got == n, or the
 * entry past count's tie group is in): ids renumbered, then ranked again in pr_top_k's order
 * (ties by the caller's id), the first count kept.
 */
static PrStatus
rank_in_caller_ids(PartsEngine *e, int64_t got, int64_t count, const int32_t *idx, const double *val,
				   int32_t *index, double *value, PrError *err)
{
	RankedEntry *entries = (RankedEntry *) pr_alloc_array(&e->alloc, (size_t) got + 1, sizeof(RankedEntry));

	if (entries == NULL)
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory ranking %lld entries", (long long) got);
	for (int64_t i = 0; i < got; i++)
	{
		entries[i].value = val[i];
		entries[i].id = e->new_to_old[idx[i]];
	}
	qsort(entries, (size_t) got, sizeof(RankedEntry), ranked_entry_cmp);
	for (int64_t i = 0; i < count; i++)
	{
		index[i] = entries[i].id;
		value[i] = entries[i].value;
	}
	pr_free(&e->alloc, entries);
	return PR_OK;
}

/*
 * Whether got ranked entries (best first) decide the best count in the caller's ids: every
 * entry that ties with entry count-1 is among them.
 */
static inline bool
ties_complete(int64_t n, int64_t got, int64_t count, const double *val)
{
	return got >= n || !same_score(val[count - 1], val[got - 1]);
}

/* How many entries to rank after asking for `asked` left a tie group open: 4 times as many. */
static inline int64_t
ask_more(int64_t n, int64_t asked)
{
	return asked > n / 4 ? n : asked * 4;
}

/*
 * The best count entries of column col in the caller's ids (index, value): part 0 ranks ask
 * entries, then more and more (ask_more) until the tie group of the last entry kept is complete,
 * since which tied nodes belong in the answer depends on the caller's ids.
 */
static PrStatus
column_top_k(PartsEngine *e, int slot, int col, int64_t count, int64_t ask, int32_t *index, double *value,
			 PrError *err)
{
	int64_t		n = e->g_seen.n_nodes;
	PrStatus	status = PR_OK;

	for (;;)
	{
		int32_t    *idx = (int32_t *) pr_alloc_array(&e->alloc, (size_t) ask + 1, sizeof(int32_t));
		double	   *val = (double *) pr_alloc_array(&e->alloc, (size_t) ask + 1, sizeof(double));
		PrEngine   *part = e->parts[0];
		PrError		part_err = {PR_OK, ""};
		bool		done = false;

		if (idx == NULL || val == NULL)
			status = pr_error_set(err, PR_ERR_NOMEM, "out of memory for a top-%lld", (long long) ask);
		else
			status = from_part(e, 0, part->ops->top_k(part, slot, col, ask, idx, val, &part_err), &part_err, err);
		if (status == PR_OK && ties_complete(n, ask, count, val))
		{
			status = rank_in_caller_ids(e, ask, count, idx, val, index, value, err);
			done = true;
		}
		pr_free(&e->alloc, idx);
		pr_free(&e->alloc, val);
		if (status != PR_OK || done)
			return status;
		ask = ask_more(n, ask);
	}
}

/* The best entries of a column, from part 0, in the caller's ids. */
static PrStatus
parts_top_k(PrEngine *base, int slot, int col, int64_t top_k, int32_t *index, double *value,
			PrError *err)
{
	PartsEngine *e = (PartsEngine *) base;
	int64_t		n = e->g_seen.n_nodes;
	PrStatus	status;

	if (!e->prepared)
		return not_prepared(err);
	if ((status = make_whole(e, slot, err)) != PR_OK)
		return status;
	return column_top_k(e, slot, col, top_k < n ? top_k : n, top_k < n ? top_k + 1 : n, index, value, err);
}

/*
 * The best entries of every column, in the caller's ids: part 0 ranks one entry more than asked
 * in every column at once; a column whose last tie group goes past them asks again alone for
 * more (column_top_k).
 */
static PrStatus
parts_top_k_columns(PrEngine *base, int slot, int64_t top_k, int32_t *index, double *value,
					PrError *err)
{
	PartsEngine *e = (PartsEngine *) base;
	int64_t		n = e->g_seen.n_nodes;
	int64_t		count = top_k < n ? top_k : n;
	int64_t		stride = count < n ? count + 1 : n;
	int32_t    *idx;
	double	   *val;
	PrStatus	status;

	if (!e->prepared)
		return not_prepared(err);
	if ((status = make_whole(e, slot, err)) != PR_OK)
		return status;
	idx = (int32_t *) pr_alloc_array(&e->alloc, (size_t) (stride * e->k) + 1, sizeof(int32_t));
	val = (double *) pr_alloc_array(&e->alloc, (size_t) (stride * e->k) + 1, sizeof(double));
	if (idx == NULL || val == NULL)
		status = pr_error_set(err, PR_ERR_NOMEM, "out of memory for a top-%lld", (long long) top_k);
	else
	{
		PrEngine   *part = e->parts[0];
		PrError		part_err = {PR_OK, ""};

		status = from_part(e, 0, part->ops->top_k_columns(part, slot, stride, idx, val, &part_err),
						   &part_err, err);
	}
	for (int j = 0; status == PR_OK && j < e->k; j++)
	{
		const int32_t *col_idx = idx + (size_t) j * stride;
		const double *col_val = val + (size_t) j * stride;

		if (ties_complete(n, stride, count, col_val))
			status = rank_in_caller_ids(e, stride, count, col_idx, col_val, index + (size_t) j * count,
										value + (size_t) j * count, err);
		else
			status = column_top_k(e, slot, j, count, ask_more(n, stride), index + (size_t) j * count,
								  value + (size_t) j * count, err);
	}
	pr_free(&e->alloc, idx);
	pr_free(&e->alloc, val);
	return status;
}

/* Fills a slot with the restart distributions (in the parts' order) on every part. */
static PrStatus
parts_restart_fill(PrEngine *base, int slot, const PrRestart *restart, PrError *err)
{
	PartsEngine *e = (PartsEngine *) base;

	RETURN_ON_EVERY_PART_IN_ORDER(base, restart, err,
								  part->ops->restart_fill(part, slot, ordered, &part_err),
								  slot_holds(e, slot, true));
}

/* The column sums of a slot, from part 0 (holding every row of it). */
static PrStatus
parts_column_sums(PrEngine *base, int slot, double *sums, double *dangling, PrError *err)
{
	PartsEngine *e = (PartsEngine *) base;
	PrStatus	status;

	if (e->prepared && (status = make_whole(e, slot, err)) != PR_OK)
		return status;
	RETURN_FROM_PART_0(base, err, part->ops->column_sums(part, slot, sums, dangling, &part_err));
}

/*
 * Combines slots on every part (element by element: each part's own rows are right whatever the
 * others hold); the result holds every row where every term did.
 */
static PrStatus
parts_combine(PrEngine *base, int out_slot, int n_terms, const int *slots, const double *coef,
			  PrError *err)
{
	PartsEngine *e = (PartsEngine *) base;
	bool		whole = true;

	for (int t = 0; t < n_terms && slots != NULL; t++)
		whole = whole && slot_whole(e, slots[t]);
	RETURN_ON_EVERY_PART_THEN(base, err,
							  part->ops->combine(part, out_slot, n_terms, slots, coef, &part_err),
							  slot_holds(e, out_slot, whole));
}

/* Dot products of slots, from part 0 (holding every row of them). */
static PrStatus
parts_dots(PrEngine *base, int a_slot, int n_terms, const int *slots, double *out, PrError *err)
{
	PartsEngine *e = (PartsEngine *) base;
	PrStatus	status = PR_OK;

	if (e->prepared)
		status = make_whole(e, a_slot, err);
	for (int t = 0; status == PR_OK && e->prepared && t < n_terms && slots != NULL; t++)
		status = make_whole(e, slots[t], err);
	if (status != PR_OK)
		return status;
	RETURN_FROM_PART_0(base, err, part->ops->dots(part, a_slot, n_terms, slots, out, &part_err));
}

/*
 * Keeps the far-field vector on every part, or fills a slot with it on every part; *found as
 * part 0 says, which every part must agree with (they keep and drop it together).
 */
static PrStatus
parts_far_field(PrEngine *base, int slot, bool keep, bool *found, PrError *err)
{
	PartsEngine *e = (PartsEngine *) base;

	PrStatus	status;

	if (!e->prepared)
		return not_prepared(err);
	if (keep && (status = make_whole(e, slot, err)) != PR_OK)
		return status;
	for (int p = 0; p < e->n_parts; p++)
	{
		PrEngine   *part = e->parts[p];
		PrError		part_err = {PR_OK, ""};
		bool		part_found = false;
		PrStatus	status = from_part(e, p, part->ops->far_field(part, slot, keep, &part_found,
																  &part_err),
									   &part_err, err);

		if (status != PR_OK)
			return status;
		if (p == 0)
			*found = part_found;
		else if (part_found != *found)
			return pr_error_set(err, PR_ERR_ENGINE,
								"part %d of %d %s a far-field vector and part 0 %s", p,
								e->n_parts, part_found ? "keeps" : "lacks",
								part_found ? "lacks one" : "keeps one");
	}
	if (!keep && *found)
		slot_holds(e, slot, true);
	return PR_OK;
}

/* Releases the exchange (it works on the parts, so it goes first), the parts and the engine. */
static void
parts_release(PrEngine *base)
{
	PartsEngine *e = (PartsEngine *) base;
	PrAllocator alloc;

	if (e == NULL)
		return;
	if (e->exchange.release != NULL)
		e->exchange.release(e->exchange.arg);
	for (int p = 0; p < e->n_parts; p++)
		if (e->parts[p] != NULL)
			e->parts[p]->ops->release(e->parts[p]);
	for (int p = 0; p < e->n_parts; p++)
		free_part_graph(e, &e->part_graph[p], e->push);
	free_order(e, &e->ordered, e->new_to_old, e->old_to_new);
	pr_free(&e->alloc, e->assembled);
	pr_free(&e->alloc, e->received);
	pr_free(&e->alloc, e->reordered);
	pr_free(&e->alloc, e->whole);
	pr_free(&e->alloc, e->input_whole);
	free_kept_restart(e);
	alloc = e->alloc;
	pr_free(&alloc, e);
}

/* Every operation; pr_parts_engine_create drops those a part lacks. */
static const PrEngineOps parts_engine_ops = {
	.prepare = parts_prepare,
	.fill = parts_fill,
	.upload = parts_upload,
	.download = parts_download,
	.product = parts_product,
	.pagerank_update = parts_pagerank_update,
	.normalize = parts_normalize,
	.residual = parts_residual,
	.top_k = parts_top_k,
	.top_k_columns = parts_top_k_columns,
	.restart_fill = parts_restart_fill,
	.column_sums = parts_column_sums,
	.combine = parts_combine,
	.dots = parts_dots,
	.far_field = parts_far_field,
	.release = parts_release,
};

/*
 * Sets the engine's operations: those of parts_engine_ops that every part offers (the product
 * also needs the parts' download and upload for the generic exchange), custom_dangling when
 * every part takes one; unit_roundoff, column_batch and mixed_step_cost of part 0 (every part
 * does its share of a step's product and of a mixed step's vector passes; the exchange only adds
 * to the plain step, so the part's figure is the larger).  No restart_local: it multiplies inside
 * one engine.
 */
static void
choose_operations(PartsEngine *e)
{
	e->ops = parts_engine_ops;
	e->ops.name = e->name;
	e->ops.custom_dangling = true;
	e->ops.unit_roundoff = e->parts[0]->ops->unit_roundoff;
	e->ops.mixed_step_cost = e->parts[0]->ops->mixed_step_cost;
	e->ops.column_batch = e->parts[0]->ops->column_batch;
	for (int p = 0; p < e->n_parts; p++)
	{
		const PrEngineOps *po = e->parts[p]->ops;

#define OFFERED_IF_PART_HAS(op) \
		if (po->op == NULL) \
			e->ops.op = NULL
		OFFERED_IF_PART_HAS(prepare);
		OFFERED_IF_PART_HAS(fill);
		OFFERED_IF_PART_HAS(upload);
		OFFERED_IF_PART_HAS(download);
		OFFERED_IF_PART_HAS(product);
		OFFERED_IF_PART_HAS(pagerank_update);
		OFFERED_IF_PART_HAS(normalize);
		OFFERED_IF_PART_HAS(residual);
		OFFERED_IF_PART_HAS(top_k);
		OFFERED_IF_PART_HAS(top_k_columns);
		OFFERED_IF_PART_HAS(restart_fill);
		OFFERED_IF_PART_HAS(column_sums);
		OFFERED_IF_PART_HAS(combine);
		OFFERED_IF_PART_HAS(dots);
		OFFERED_IF_PART_HAS(far_field);
#undef OFFERED_IF_PART_HAS
		if (e->exchange.gather == NULL && (po->download == NULL || po->upload == NULL))
			e->ops.product = NULL;
		if (!po->custom_dangling)
			e->ops.custom_dangling = false;
	}
}

/* Releases what pr_parts_engine_create was given, when it fails. */
static void
release_given(PrEngine **parts, int n_parts, const PrPartsExchange *exchange)
{
	for (int p = 0; parts != NULL && p < n_parts; p++)
		if (parts[p] != NULL && parts[p]->ops != NULL && parts[p]->ops->release != NULL)
			parts[p]->ops->release(parts[p]);
	if (exchange != NULL && exchange->release != NULL)
		exchange->release(exchange->arg);
}

/* Makes an engine over n_parts part engines; see pr_parts.h. */
PrEngine *
pr_parts_engine_create(PrEngine **parts, int n_parts, const PrPartsExchange *exchange,
					   const char *name, const PrAllocator *alloc, PrError *err)
{
	PartsEngine *e;

	if (alloc == NULL)
		alloc = &pr_malloc_allocator;
	if (parts == NULL || n_parts < 2 || n_parts > PR_PARTS_MAX)
	{
		release_given(parts, n_parts, exchange);
		pr_error_set(err, PR_ERR_INVALID, "a parts engine takes 2 to %d parts, not %d",
					 PR_PARTS_MAX, n_parts);
		return NULL;
	}
	for (int p = 0; p < n_parts; p++)
		if (parts[p] == NULL || parts[p]->ops == NULL || parts[p]->ops->release == NULL)
		{
			release_given(parts, n_parts, exchange);
			pr_error_set(err, PR_ERR_INVALID, "part %d of %d is missing", p, n_parts);
			return NULL;
		}
	e = (PartsEngine *) pr_alloc_array(alloc, 1, sizeof(PartsEngine));
	if (e == NULL)
	{
		release_given(parts, n_parts, exchange);
		pr_error_set(err, PR_ERR_NOMEM, "out of memory creating an engine of %d parts", n_parts);
		return NULL;
	}
	memset(e, 0, sizeof(*e));
	e->alloc = *alloc;
	e->n_parts = n_parts;
	memcpy(e->parts, parts, sizeof(PrEngine *) * (size_t) n_parts);
	if (exchange != NULL)
		e->exchange = *exchange;
	snprintf(e->name, sizeof(e->name), "%s(%d)", name != NULL ? name : parts[0]->ops->name,
			 n_parts);
	choose_operations(e);
	e->base.ops = &e->ops;
	return &e->base;
}

/* The share of the edges a part graph holds; see pr_parts.h. */
double
pr_parts_edge_share(int n_parts)
{
	return n_parts > 1 ? 1.0 / (double) n_parts : 1.0;
}

/* Whether engine is a parts engine (its release is this file's). */
bool
pr_parts_engine_is(const PrEngine *engine)
{
	return engine != NULL && engine->ops != NULL && engine->ops->release == parts_release;
}

/* Part p of a parts engine, or NULL. */
PrEngine *
pr_parts_engine_part(PrEngine *engine, int p)
{
	PartsEngine *e = (PartsEngine *) engine;

	if (!pr_parts_engine_is(engine) || p < 0 || p >= e->n_parts)
		return NULL;
	return e->parts[p];
}

/* The split of a prepared parts engine; see pr_parts.h. */
PrStatus
pr_parts_engine_report(PrEngine *engine, PrPartsReport *out, PrError *err)
{
	PartsEngine *e = (PartsEngine *) engine;

	if (!pr_parts_engine_is(engine) || out == NULL)
		return pr_error_set(err, PR_ERR_INVALID, "not a parts engine");
	if (!e->prepared)
		return pr_error_set(err, PR_ERR_INVALID, "the parts engine is not prepared");
	memset(out, 0, sizeof(*out));
	out->n_parts = e->n_parts;
	memcpy(out->row_begin, e->row_begin, sizeof(int64_t) * (size_t) (e->n_parts + 1));
	for (int p = 0; p < e->n_parts; p++)
		out->edges[p] = e->part_graph[p].n_edges;
	out->split_seconds = e->split_seconds;
	out->rows_owned = e->rows_owned;
	if (e->exchange.describe != NULL)
		e->exchange.describe(e->exchange.arg, out->exchange, sizeof(out->exchange));
	return PR_OK;
}
