/*
 * restart.c — restart (teleport) distributions for PageRank, personalized PageRank and RWR, with
 * the node ids the caller gave mapped to internal ids (an unknown node is an ERROR, and so is a
 * delta entry's absent node: its graph lacks it, as a build of the rows would).
 */
#include "powerrank.h"

#include "functions/run.h"

/*
 * Internal id of node_id, or an ERROR saying that the what node is not in the graph (also when
 * the graph has no nodes at all: a source or personalization node must exist either way).
 */
static int32
internal_node(RankRun *run, int64 node_id, const char *what)
{
	int64		internal = run->graph.n_nodes > 0 ? pr_graph_find(&run->graph, node_id) : -1;

	if (internal >= 0 && rank_run_node_absent(run, internal))
		internal = -1;

	if (internal < 0 && run->graph.n_nodes == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s node " INT64_FORMAT " is not in the graph: the graph is empty",
						what, node_id),
				 errhint("A node is in the graph when it is the src or dst of at least one edge row; the rows read (or visible to you) have none, or only NULL endpoints.")));
	if (internal < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s node " INT64_FORMAT " is not in the graph", what, node_id),
				 errhint("A node is in the graph when it is the src or dst of at least one edge row.")));
	return (int32) internal;
}

/* The uniform restart distribution (plain PageRank). */
PrRestart *
restart_uniform(RankRun *run)
{
	PrRestart  *restart = MemoryContextAllocZero(run->cxt, sizeof(PrRestart));

	restart->uniform = true;
	restart->k = 1;
	return restart;
}

/*
 * One column restarting over the given (distinct) nodes: personalization.  weights (summing to 1,
 * aligned with node_ids) weights them, or NULL for uniformly; nodes of weight 0 are left out.
 */
PrRestart *
restart_single_column(RankRun *run, const int64 *node_ids, const double *weights, int count,
					  const char *what)
{
	PrRestart  *restart = MemoryContextAlloc(run->cxt, sizeof(PrRestart));
	int64	   *ptr = MemoryContextAlloc(run->cxt, 2 * sizeof(int64));
	int32	   *node = MemoryContextAlloc(run->cxt, count * sizeof(int32));
	double	   *weight = MemoryContextAlloc(run->cxt, count * sizeof(double));
	int			entries = 0;
	int			i;

	for (i = 0; i < count; i++)
	{
		/* every node must be in the graph, also one of weight 0 */
		int32		internal = internal_node(run, node_ids[i], what);

		if (weights != NULL && weights[i] == 0.0)
			continue;
		node[entries] = internal;
		weight[entries] = weights != NULL ? weights[i] : 1.0 / count;
		entries++;
	}
	ptr[0] = 0;
	ptr[1] = entries;
	*restart = pr_restart_columns(1, ptr, node, weight);
	return restart;
}

/* An internal node id and its weight in a distribution. */
typedef struct NodeWeight
{
	int32		node;
	double		weight;
} NodeWeight;

/* qsort comparator: by internal node id. */
static int
compare_node_weights(const void *a, const void *b)
{
	int32		x = ((const NodeWeight *) a)->node;
	int32		y = ((const NodeWeight *) b)->node;

	return (x > y) - (x < y);
}

/*
 * Gives restart its own dangling distribution (NetworkX's dangling=): the dangling mass goes to
 * the given (distinct) nodes, in proportion to weights (summing to 1, aligned with node_ids) or
 * alike when weights is NULL; nodes of weight 0 are left out but must be in the graph.
 */
void
restart_set_dangling(RankRun *run, PrRestart *restart, const int64 *node_ids,
					 const double *weights, int count)
{
	/* sorted by id: the engines want the ids ascending */
	NodeWeight *pairs = MemoryContextAlloc(run->cxt, count * sizeof(NodeWeight));
	int32	   *node = MemoryContextAlloc(run->cxt, count * sizeof(int32));
	double	   *weight = MemoryContextAlloc(run->cxt, count * sizeof(double));
	int			entries = 0;
	int			i;

	for (i = 0; i < count; i++)
	{
		int32		internal = internal_node(run, node_ids[i], "dangling");

		if (weights != NULL && weights[i] == 0.0)
			continue;
		pairs[entries].node = internal;
		pairs[entries].weight = weights != NULL ? weights[i] : 1.0 / count;
		entries++;
	}
	qsort(pairs, entries, sizeof(NodeWeight), compare_node_weights);
	for (i = 0; i < entries; i++)
	{
		node[i] = pairs[i].node;
		weight[i] = pairs[i].weight;
	}
	restart->dangling_count = entries;
	restart->dangling_node = node;
	restart->dangling_weight = weight;
}

/* One column per source, each restarting at its source only: many-source RWR. */
PrRestart *
restart_per_node(RankRun *run, const int64 *node_ids, int count)
{
	PrRestart  *restart = MemoryContextAlloc(run->cxt, sizeof(PrRestart));
	int64	   *ptr = MemoryContextAlloc(run->cxt, (count + 1) * sizeof(int64));
	int32	   *node = MemoryContextAlloc(run->cxt, count * sizeof(int32));
	double	   *weight = MemoryContextAlloc(run->cxt, count * sizeof(double));
	int			i;

	for (i = 0; i < count; i++)
	{
		node[i] = internal_node(run, node_ids[i], "source");
		weight[i] = 1.0;
		ptr[i] = i;
	}
	ptr[count] = count;
	*restart = pr_restart_columns(count, ptr, node, weight);
	return restart;
}

/*
 * Gives the run a start vector for PageRank (start_nodes / start_scores): each node of the graph
 * starts at its score, one not listed at the uniform 1/N; listed nodes not in the graph are
 * ignored.  The vector is scaled to sum 1; an ERROR when it sums to 0.  Nothing on an empty graph.
 * A delta entry's absent nodes (in the vector, not in the graph) start at 0.
 */
void
rank_run_set_start(RankRun *run, const int64 *node_ids, const double *scores, int count)
{
	int64		n = run->graph.n_nodes;
	int64		absent = run->delta_segment != NULL ? run->delta.n_absent : 0;
	double	   *start;
	double		largest = 0.0;
	double		sum = 0.0;
	int64		v;
	int			i;

	if (n == 0)
		return;
	start = MemoryContextAllocHuge(run->cxt, n * sizeof(double));
	for (v = 0; v < n; v++)
		start[v] = rank_run_node_absent(run, v) ? 0.0 : 1.0 / (double) (n - absent);
	for (i = 0; i < count; i++)
	{
		int64		internal = pr_graph_find(&run->graph, node_ids[i]);

		if (internal >= 0 && !rank_run_node_absent(run, internal))
			start[internal] = scores[i];
	}
	for (v = 0; v < n; v++)
		if (start[v] > largest)
			largest = start[v];
	if (largest == 0.0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("start_scores are 0 for every node of the graph"),
				 errhint("Give at least one node of the graph a positive score, or leave a node out of start_nodes to start it at 1/N.")));
	/* scaled by the largest first: a sum of huge scores stays finite */
	for (v = 0; v < n; v++)
	{
		start[v] /= largest;
		sum += start[v];
	}
	for (v = 0; v < n; v++)
		start[v] /= sum;
	run->start = start;
}
