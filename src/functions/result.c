/*
 * result.c — returns scores as the rows of a materialized set-returning function: every node in
 * node-id order, or (with top_k) the top_k best by score, ties to the smaller node id — ranked
 * here (HITS) or already by the engine (PageRank / RWR: result_emit_top).  A cancel is noticed
 * every RESULT_CHECK_MASK + 1 rows (millions of rows spill the tuplestore to disk).
 */
#include "powerrank.h"

#include "funcapi.h"
#include "miscadmin.h"

#include "functions/run.h"

/* A cancel is checked for at every row number whose low bits (this mask) are zero: every 65536 rows. */
#define RESULT_CHECK_MASK 65535

/* Internal ids of the rows to return, in output order; *count receives how many. */
static int32 *
rows_to_return(RankRun *run, const double *values, int stride, int column, int64 top_k,
			   int64 *count)
{
	int64		n = run->graph.n_nodes;
	int32	   *order;

	if (top_k <= 0 || top_k >= n)
	{
		if (top_k <= 0)
		{
			*count = n;
			return NULL;		/* every node, in id order */
		}
		top_k = n;
	}
	order = MemoryContextAllocHuge(run->cxt, top_k * sizeof(int32));
	*count = pr_top_k(values, n, stride, column, top_k, order, run->alloc);
	return order;
}

/*
 * Emits (node, score) rows — or (source, node, score) when with_source — from column column of
 * the n x stride score array.
 */
void
result_emit_scores(FunctionCallInfo fcinfo, RankRun *run, const double *scores, int stride,
				   int column, int64 top_k, bool with_source, int64 source)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int64		count;
	int32	   *order;
	int64		i;
	Datum		values[3];
	bool		nulls[3] = {0};
	int			first = with_source ? 1 : 0;

	if (run->graph.n_nodes == 0)
		return;
	order = rows_to_return(run, scores, stride, column, top_k, &count);
	values[0] = Int64GetDatum(source);
	for (i = 0; i < count; i++)
	{
		int64		node = order != NULL ? order[i] : i;

		if ((i & RESULT_CHECK_MASK) == 0)
			CHECK_FOR_INTERRUPTS();

		values[first] = Int64GetDatum(run->graph.node_ids[node]);
		values[first + 1] = Float8GetDatum(scores[node * stride + column]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

/*
 * Emits the rows of one column's top_k result: count (node, score) rows — or (source, node,
 * score) when with_source — from internal ids and scores already ranked best first.
 */
void
result_emit_top(FunctionCallInfo fcinfo, RankRun *run, const int32 *index, const double *value,
				int64 count, bool with_source, int64 source)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum		values[3];
	bool		nulls[3] = {0};
	int			first = with_source ? 1 : 0;
	int64		i;

	values[0] = Int64GetDatum(source);
	for (i = 0; i < count; i++)
	{
		if ((i & RESULT_CHECK_MASK) == 0)
			CHECK_FOR_INTERRUPTS();
		if (index[i] < 0 || index[i] >= run->graph.n_nodes)
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("the engine ranked node %d, which is not in the graph", (int) index[i])));
		values[first] = Int64GetDatum(run->graph.node_ids[index[i]]);
		values[first + 1] = Float8GetDatum(value[i]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

/* Emits (node, hub, authority) rows; top_k ranks by authority. */
void
result_emit_hits(FunctionCallInfo fcinfo, RankRun *run, const double *hubs,
				 const double *authorities, int64 top_k)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int64		count;
	int32	   *order;
	int64		i;
	Datum		values[3];
	bool		nulls[3] = {0};

	if (run->graph.n_nodes == 0)
		return;
	order = rows_to_return(run, authorities, 1, 0, top_k, &count);
	for (i = 0; i < count; i++)
	{
		int64		node = order != NULL ? order[i] : i;

		if ((i & RESULT_CHECK_MASK) == 0)
			CHECK_FOR_INTERRUPTS();

		values[0] = Int64GetDatum(run->graph.node_ids[node]);
		values[1] = Float8GetDatum(hubs[node]);
		values[2] = Float8GetDatum(authorities[node]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}
