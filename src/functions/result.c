/*
 * result.c — returns scores as the rows of a materialized set-returning function: every node in
 * node-id order, or (with top_k) the top_k best by score, ties to the smaller node id — ranked
 * here (HITS) or already by the engine (PageRank / RWR: result_emit_top).  A delta entry's graph
 * is ranked in its root's numbering: the delta's absent nodes are not in it and give no row (a
 * top_k ranking takes as many more, rank_run_top_rows, and leaves them out).  A cancel is noticed
 * every RESULT_CHECK_MASK + 1 rows (millions of rows spill the tuplestore to disk).
 */
#include "powerrank.h"

#include "funcapi.h"
#include "miscadmin.h"

#include "functions/run.h"

/* A cancel is checked for at every row number whose low bits (this mask) are zero: every 65536 rows. */
#define RESULT_CHECK_MASK 65535

/*
 * Internal ids of the rows to return, in output order (absent nodes among them: the caller skips
 * them), or NULL for every node in id order; *count receives how many ids.
 */
static int32 *
rows_to_return(RankRun *run, const double *values, int stride, int column, int64 top_k,
			   int64 *count)
{
	int64		n = run->graph.n_nodes;
	int32	   *order;

	if (top_k <= 0)
	{
		*count = n;
		return NULL;			/* every node, in id order */
	}
	top_k = rank_run_top_rows(run, top_k);
	order = MemoryContextAllocHuge(run->cxt, top_k * sizeof(int32));
	*count = pr_top_k(values, n, stride, column, top_k, order, run->alloc);
	return order;
}

/*
 * The rows being written: the tuplestore, one row's values (the source, when the rows have one,
 * at 0; the node's external id at first; its scores after it) and the rows written so far.
 */
typedef struct ResultRows
{
	ReturnSetInfo *rsinfo;
	const int64 *node_ids;
	Datum		values[3];
	bool		nulls[3];
	int			first;
	int64		written;
} ResultRows;

/* Starts the rows of fcinfo's result; with_source: each row begins with source. */
static void
result_rows_begin(ResultRows *rows, FunctionCallInfo fcinfo, const RankRun *run,
				  bool with_source, int64 source)
{
	memset(rows, 0, sizeof(*rows));
	rows->rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	rows->node_ids = run->graph.node_ids;
	rows->first = with_source ? 1 : 0;
	rows->values[0] = Int64GetDatum(source);
}

/* Writes the row of internal node `node` and its n_scores scores; checks for a cancel now and then. */
static void
result_rows_put(ResultRows *rows, int64 node, const double *scores, int n_scores)
{
	if ((rows->written++ & RESULT_CHECK_MASK) == 0)
		CHECK_FOR_INTERRUPTS();
	rows->values[rows->first] = Int64GetDatum(rows->node_ids[node]);
	for (int s = 0; s < n_scores; s++)
		rows->values[rows->first + 1 + s] = Float8GetDatum(scores[s]);
	tuplestore_putvalues(rows->rsinfo->setResult, rows->rsinfo->setDesc, rows->values,
						 rows->nulls);
}

/*
 * Emits (node, score) rows — or (source, node, score) when with_source — from column column of
 * the n x stride score array.
 */
void
result_emit_scores(FunctionCallInfo fcinfo, RankRun *run, const double *scores, int stride,
				   int column, int64 top_k, bool with_source, int64 source)
{
	ResultRows	rows;
	int64		count;
	int32	   *order;

	if (run->graph.n_nodes == 0)
		return;
	order = rows_to_return(run, scores, stride, column, top_k, &count);
	result_rows_begin(&rows, fcinfo, run, with_source, source);
	for (int64 i = 0; i < count && (top_k <= 0 || rows.written < top_k); i++)
	{
		int64		node = order != NULL ? order[i] : i;

		if (!rank_run_node_absent(run, node))
			result_rows_put(&rows, node, &scores[node * stride + column], 1);
	}
}

/*
 * Emits the rows of one column's top_k result: at most top_k (node, score) rows — or (source,
 * node, score) when with_source — from count internal ids and scores already ranked best first,
 * absent nodes left out.
 */
void
result_emit_top(FunctionCallInfo fcinfo, RankRun *run, const int32 *index, const double *value,
				int64 count, int64 top_k, bool with_source, int64 source)
{
	ResultRows	rows;

	result_rows_begin(&rows, fcinfo, run, with_source, source);
	for (int64 i = 0; i < count && rows.written < top_k; i++)
	{
		if (index[i] < 0 || index[i] >= run->graph.n_nodes)
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("the engine ranked node %d, which is not in the graph", (int) index[i])));
		if (!rank_run_node_absent(run, index[i]))
			result_rows_put(&rows, index[i], &value[i], 1);
	}
}

/* Emits (node, hub, authority) rows; top_k ranks by authority. */
void
result_emit_hits(FunctionCallInfo fcinfo, RankRun *run, const double *hubs,
				 const double *authorities, int64 top_k)
{
	ResultRows	rows;
	int64		count;
	int32	   *order;

	if (run->graph.n_nodes == 0)
		return;
	order = rows_to_return(run, authorities, 1, 0, top_k, &count);
	result_rows_begin(&rows, fcinfo, run, false, 0);
	for (int64 i = 0; i < count && (top_k <= 0 || rows.written < top_k); i++)
	{
		int64		node = order != NULL ? order[i] : i;
		double		pair[2] = {hubs[node], authorities[node]};

		if (!rank_run_node_absent(run, node))
			result_rows_put(&rows, node, pair, 2);
	}
}
