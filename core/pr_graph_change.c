/*
 * pr_graph_change.c — how two graphs of one table differ, for a start vector carried from the
 * scores of the older graph to the newer one: which node of one is which node of the other,
 * how many stored edges changed, and the older graph's scores laid out over the newer graph's
 * nodes.
 *
 * Both graphs number their nodes by ascending external id (pr_graph_build), so the node map is
 * one merge of the two id lists and is increasing: a mapped in-row of the older graph stays
 * sorted, and comparing two rows is one merge of sorted lists.
 */
#include "pr_graph.h"

/* Parts of the changed-edge count that run at once. */
#define CHANGE_PARTS 64

/* What count_changed_part reads and where each part writes its count. */
typedef struct ChangeCount
{
	const PrGraph *older;
	const PrGraph *newer;
	const int32_t *map;			/* older node -> newer node, or -1 */
	const int32_t *inverse;		/* newer node -> older node, or -1 */
	int64_t		limit;
	int64_t		counts[CHANGE_PARTS];
} ChangeCount;

/* Maps every node of from to its internal id in to (-1 when to lacks it): one merge of the ids. */
void
pr_graph_node_map(const PrGraph *from, const PrGraph *to, int32_t *map)
{
	int64_t		j = 0;

	for (int64_t i = 0; i < from->n_nodes; i++)
	{
		int64_t		id = from->node_ids[i];

		while (j < to->n_nodes && to->node_ids[j] < id)
			j++;
		map[i] = (j < to->n_nodes && to->node_ids[j] == id) ? (int32_t) j : -1;
	}
}

/* Weight of in-edge e of g (1 when g is unweighted). */
static inline double
in_weight(const PrGraph *g, int64_t e)
{
	return g->in_weight != NULL ? g->in_weight[e] : 1.0;
}

/*
 * Stored edges that differ between newer's in-row v and older's in-row u (-1: none), the older
 * sources mapped to newer's ids: a merge of two ascending lists; an edge of one row matches an
 * edge of the other with the same source and weight.
 */
static int64_t
changed_in_row(const ChangeCount *c, int64_t v, int64_t u)
{
	const PrGraph *older = c->older;
	const PrGraph *newer = c->newer;
	int64_t		b = newer->in_ptr[v],
				b_end = newer->in_ptr[v + 1];
	int64_t		a,
				a_end;
	int64_t		changed = 0;

	if (u < 0)
		return b_end - b;
	a = older->in_ptr[u];
	a_end = older->in_ptr[u + 1];
	while (a < a_end && b < b_end)
	{
		int32_t		source = c->map[older->in_src[a]];

		if (source < 0 || source < newer->in_src[b])
		{
			changed++;
			a++;
		}
		else if (source > newer->in_src[b])
		{
			changed++;
			b++;
		}
		else
		{
			if (in_weight(older, a) != in_weight(newer, b))
				changed += 2;
			a++;
			b++;
		}
	}
	return changed + (a_end - a) + (b_end - b);
}

/* pr_parallel_run's task: the changed edges of one range of newer's rows, stopping past limit. */
static void
count_changed_part(void *arg, int part, int n_parts)
{
	ChangeCount *c = (ChangeCount *) arg;
	int64_t		begin,
				end,
				count = 0;

	pr_even_range(c->newer->n_nodes, part, n_parts, &begin, &end);
	for (int64_t v = begin; v < end && count <= c->limit; v++)
		count += changed_in_row(c, v, c->inverse[v]);
	c->counts[part] = count;
}

/*
 * Stored edges of older not in newer plus those of newer not in older (multisets of (source,
 * destination, weight) by external ids), with map = pr_graph_node_map(older, newer).  Counting
 * stops once it is past limit: the result is then some number > limit.  -1 when the scratch
 * (4 bytes a node of newer) cannot be allocated.  Rows are compared on up to n_threads threads.
 */
int64_t
pr_graph_changed_edges(const PrGraph *older, const PrGraph *newer, const int32_t *map,
					   int64_t limit, int n_threads, const PrAllocator *alloc)
{
	ChangeCount *c;
	int32_t    *inverse;
	int64_t		total = 0;
	int			n_parts = n_threads < 1 ? 1 : (n_threads > CHANGE_PARTS ? CHANGE_PARTS : n_threads);
	int64_t		size_change = older->n_edges - newer->n_edges;

	/* at least the difference of the edge counts changed */
	if (size_change > limit || -size_change > limit)
		return (size_change > 0 ? size_change : -size_change);
	c = (ChangeCount *) pr_alloc_array(alloc, 1, sizeof(ChangeCount));
	inverse = (int32_t *) pr_alloc_array(alloc, (size_t) (newer->n_nodes > 0 ? newer->n_nodes : 1),
										 sizeof(int32_t));
	if (c == NULL || inverse == NULL)
	{
		pr_free(alloc, c);
		pr_free(alloc, inverse);
		return -1;
	}
	for (int64_t v = 0; v < newer->n_nodes; v++)
		inverse[v] = -1;
	/* in-rows of nodes that are gone: every edge of them changed */
	for (int64_t u = 0; u < older->n_nodes; u++)
	{
		if (map[u] >= 0)
			inverse[map[u]] = (int32_t) u;
		else
			total += older->in_ptr[u + 1] - older->in_ptr[u];
	}
	if (n_parts > newer->n_nodes)
		n_parts = newer->n_nodes > 0 ? (int) newer->n_nodes : 1;
	c->older = older;
	c->newer = newer;
	c->map = map;
	c->inverse = inverse;
	c->limit = limit;
	if (total <= limit)
	{
		pr_parallel_run(count_changed_part, c, n_parts);
		for (int part = 0; part < n_parts; part++)
			total += c->counts[part];
	}
	pr_free(alloc, inverse);
	pr_free(alloc, c);
	return total;
}

/*
 * Lays the scores of from's nodes out over to's nodes into start (n of to): a node of both takes
 * its score, a node only in to takes 1/n of to; then start is scaled to sum 1.  map is
 * pr_graph_node_map(from, to), or NULL when to numbers from's nodes the same (its own after them).  False (start unspecified) when a score is outside [0, 1] (scores
 * of the PageRank family sum to 1) or the vector sums to 0.
 */
bool
pr_graph_carry_scores(const PrGraph *from, const double *scores, const int32_t *map,
					  const PrGraph *to, double *start)
{
	double		uniform = 1.0 / (double) to->n_nodes;
	double		sum = 0.0;

	if (to->n_nodes <= 0 || (map == NULL && from->n_nodes > to->n_nodes))
		return false;
	for (int64_t v = 0; v < to->n_nodes; v++)
		start[v] = uniform;
	for (int64_t u = 0; u < from->n_nodes; u++)
	{
		if (!(scores[u] >= 0.0 && scores[u] <= 1.0))
			return false;
		if (map == NULL)
			start[u] = scores[u];
		else if (map[u] >= 0)
			start[map[u]] = scores[u];
	}
	for (int64_t v = 0; v < to->n_nodes; v++)
		sum += start[v];
	if (!(sum > 0.0))
		return false;
	for (int64_t v = 0; v < to->n_nodes; v++)
		start[v] /= sum;
	return true;
}
