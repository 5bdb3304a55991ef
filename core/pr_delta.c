/*
 * pr_delta.c — graph deltas (PrGraphDelta, pr_graph.h): graph X as a graph B plus netted edge
 * changes over the same node set, as an engine prepared on B takes it (PrEngineOps.apply_delta):
 * two deltas merged, a delta checked against B, X's dangling list, the push product's order of
 * the edges.  A delta is made from a patch by pr_graph_delta_from_patch (pr_graph_delta.c).
 */
#include "pr_graph.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Frees the arrays of a delta made by pr_graph_delta_alloc (and the functions that use it). */
void
pr_graph_delta_free(PrGraphDelta *delta, const PrAllocator *alloc)
{
	pr_free(alloc, delta->edges);
	pr_free(alloc, delta->sources);
	pr_free(alloc, delta->out_strength);
	pr_free(alloc, delta->absent);
	memset(delta, 0, sizeof(PrGraphDelta));
}

/*
 * Allocates a delta's arrays for n_edges edges, n_sources sources and n_absent absent nodes; false
 * when out of memory.
 */
bool
pr_graph_delta_alloc(PrGraphDelta *delta, int64_t n_nodes, int64_t n_edges, int64_t n_sources,
					 int64_t n_absent, const PrAllocator *alloc)
{
	memset(delta, 0, sizeof(PrGraphDelta));
	delta->n_nodes = n_nodes;
	delta->edges = (PrEdgeChange *) pr_alloc_array(alloc, (size_t) n_edges + 1, sizeof(PrEdgeChange));
	delta->sources = (int32_t *) pr_alloc_array(alloc, (size_t) n_sources + 1, sizeof(int32_t));
	delta->out_strength = (double *) pr_alloc_array(alloc, (size_t) n_sources + 1, sizeof(double));
	delta->absent = (int32_t *) pr_alloc_array(alloc, (size_t) n_absent + 1, sizeof(int32_t));
	if (delta->edges == NULL || delta->sources == NULL || delta->out_strength == NULL ||
		delta->absent == NULL)
	{
		pr_graph_delta_free(delta, alloc);
		return false;
	}
	return true;
}

PrStatus
pr_graph_delta_merge(const PrGraphDelta *first, const PrGraphDelta *second,
					 const PrAllocator *alloc, PrGraphDelta *out, PrError *err)
{
	int64_t		a = 0,
				b = 0,
				kept = 0;

	memset(out, 0, sizeof(PrGraphDelta));
	if (first->n_nodes != second->n_nodes)
		return pr_error_set(err, PR_ERR_INVALID, "deltas of %lld and %lld nodes",
							(long long) first->n_nodes, (long long) second->n_nodes);
	if (first->n_absent > 0 || second->n_absent > 0)
		return pr_error_set(err, PR_ERR_UNSUPPORTED, "a delta with absent nodes is merged by none");
	if (!pr_graph_delta_alloc(out, first->n_nodes, first->n_edges + second->n_edges,
							  first->n_sources + second->n_sources, 0, alloc))
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory merging deltas of %lld and %lld edges",
							(long long) first->n_edges, (long long) second->n_edges);
	while (a < first->n_edges || b < second->n_edges)
	{
		int			order = a == first->n_edges ? 1 : b == second->n_edges ? -1 :
			pr_edge_change_order(&first->edges[a], &second->edges[b]);
		PrEdgeChange next = order <= 0 ? first->edges[a++] : second->edges[b++];

		if (order == 0)
			next.count += second->edges[b++].count;
		if (next.count != 0)
			out->edges[kept++] = next;
	}
	out->n_edges = kept;
	a = b = kept = 0;
	while (a < first->n_sources || b < second->n_sources)
	{
		bool		from_first = b == second->n_sources ||
			(a < first->n_sources && first->sources[a] < second->sources[b]);

		if (from_first)
		{
			out->sources[kept] = first->sources[a];
			out->out_strength[kept++] = first->out_strength[a++];
		}
		else
		{
			if (a < first->n_sources && first->sources[a] == second->sources[b])
				a++;			/* second's out-strength is the newer graph's */
			out->sources[kept] = second->sources[b];
			out->out_strength[kept++] = second->out_strength[b++];
		}
	}
	out->n_sources = kept;
	return PR_OK;
}

PrStatus
pr_graph_delta_check(const PrGraphDelta *delta, const PrGraph *base, PrError *err)
{
	int64_t		n = base->n_nodes;

	if (delta->n_nodes != n || delta->n_edges < 0 || delta->n_sources < 0 ||
		delta->n_sources > n || (delta->n_edges > 0 && delta->edges == NULL) ||
		(delta->n_sources > 0 && (delta->sources == NULL || delta->out_strength == NULL)))
		return pr_error_set(err, PR_ERR_INVALID, "a delta of %lld nodes for a graph of %lld",
							(long long) delta->n_nodes, (long long) n);
	for (int64_t i = 0; i < delta->n_edges; i++)
	{
		const PrEdgeChange *c = &delta->edges[i];

		if (c->src < 0 || c->src >= n || c->dst < 0 || c->dst >= n || c->count == 0 ||
			!isfinite(c->weight) || c->weight < 0.0 ||
			(i > 0 && pr_edge_change_order(&delta->edges[i - 1], c) >= 0))
			return pr_error_set(err, PR_ERR_INVALID, "delta edge %lld is out of range or order",
								(long long) i);
	}
	for (int64_t i = 0; i < delta->n_sources; i++)
		if (delta->sources[i] < 0 || delta->sources[i] >= n ||
			(i > 0 && delta->sources[i] <= delta->sources[i - 1]) ||
			!isfinite(delta->out_strength[i]) || delta->out_strength[i] < 0.0)
			return pr_error_set(err, PR_ERR_INVALID, "delta source %lld is out of range or order",
								(long long) i);
	return PR_OK;
}

int64_t
pr_graph_delta_dangling(const PrGraph *base, const PrGraphDelta *delta, int32_t *out)
{
	int64_t		a = 0,
				b = 0,
				count = 0;

	while (a < base->n_dangling || b < delta->n_sources)
	{
		if (b == delta->n_sources ||
			(a < base->n_dangling && base->dangling[a] < delta->sources[b]))
			out[count++] = base->dangling[a++];
		else
		{
			if (a < base->n_dangling && base->dangling[a] == delta->sources[b])
				a++;			/* the delta says what it is in X */
			if (delta->out_strength[b] == 0.0)
				out[count++] = delta->sources[b];
			b++;
		}
	}
	return count;
}

/* Orders changes by source, destination, weight. */
static int
source_order(const void *a, const void *b)
{
	const PrEdgeChange *x = (const PrEdgeChange *) a;
	const PrEdgeChange *y = (const PrEdgeChange *) b;

	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	return pr_edge_change_order(x, y);
}

void
pr_graph_delta_by_source(const PrGraphDelta *delta, PrEdgeChange *out)
{
	if (delta->n_edges == 0)
		return;
	memcpy(out, delta->edges, sizeof(PrEdgeChange) * (size_t) delta->n_edges);
	qsort(out, (size_t) delta->n_edges, sizeof(PrEdgeChange), source_order);
}
