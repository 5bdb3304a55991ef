/*
 * graph_agg.c — the powerrank_graph(src, dst [, weight]) aggregate, which builds a rankgraph from
 * any query.  The state is an EdgeList in the aggregate's memory context (huge allocations, so it
 * may exceed 1 GB); combine/serialize/deserialize make it parallel-safe; the final function builds
 * the CSR with the core and returns it as a rankgraph.
 */
#include "powerrank.h"

#include "utils/memutils.h"

#include "graph/edge_list.h"
#include "graph/graph_scan.h"
#include "graph/rankgraph.h"

PG_FUNCTION_INFO_V1(powerrank_graph_sfunc);
PG_FUNCTION_INFO_V1(powerrank_graph_combine);
PG_FUNCTION_INFO_V1(powerrank_graph_serialize);
PG_FUNCTION_INFO_V1(powerrank_graph_deserialize);
PG_FUNCTION_INFO_V1(powerrank_graph_final);

/* Header of the serialised state (bytea payload); the arrays follow. */
typedef struct SerializedEdges
{
	uint32		magic;
	uint32		weighted;
	int64		count;
	int64		skipped;
} SerializedEdges;

#define SERIALIZED_EDGES_MAGIC UINT32_C(0x31455250)	/* "PRE1" */

/* The aggregate's memory context; an ERROR when called outside an aggregate. */
static MemoryContext
aggregate_context(FunctionCallInfo fcinfo, const char *function)
{
	MemoryContext cxt;

	if (!AggCheckCallContext(fcinfo, &cxt))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s called in a non-aggregate context", function)));
	return cxt;
}

/* A new, empty state in cxt. */
static EdgeList *
new_state(MemoryContext cxt, bool weighted)
{
	EdgeList   *state = MemoryContextAlloc(cxt, sizeof(EdgeList));

	edge_list_init(state, cxt, weighted);
	return state;
}

/*
 * Transition function of both forms: appends (src, dst[, weight]); a row with a NULL is skipped
 * and counted; an invalid weight is an ERROR naming the edge.
 */
Datum
powerrank_graph_sfunc(PG_FUNCTION_ARGS)
{
	MemoryContext cxt = aggregate_context(fcinfo, "powerrank_graph_sfunc");
	bool		weighted = PG_NARGS() >= 4;
	EdgeList   *state = PG_ARGISNULL(0) ? new_state(cxt, weighted) : (EdgeList *) PG_GETARG_POINTER(0);
	double		weight = 1.0;

	if (PG_ARGISNULL(1) || PG_ARGISNULL(2) || (weighted && PG_ARGISNULL(3)))
	{
		state->skipped++;
		PG_RETURN_POINTER(state);
	}
	if (weighted)
	{
		weight = PG_GETARG_FLOAT8(3);
		edge_list_check_weight(weight, PG_GETARG_INT64(1), PG_GETARG_INT64(2), NULL);
	}
	edge_list_append(state, PG_GETARG_INT64(1), PG_GETARG_INT64(2), weight);
	PG_RETURN_POINTER(state);
}

/* Combine function: appends the second partial state to the first (copied into the agg context). */
Datum
powerrank_graph_combine(PG_FUNCTION_ARGS)
{
	MemoryContext cxt = aggregate_context(fcinfo, "powerrank_graph_combine");
	EdgeList   *state1 = PG_ARGISNULL(0) ? NULL : (EdgeList *) PG_GETARG_POINTER(0);
	EdgeList   *state2 = PG_ARGISNULL(1) ? NULL : (EdgeList *) PG_GETARG_POINTER(1);

	if (state2 == NULL)
	{
		if (state1 == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(state1);
	}
	if (state1 == NULL)
		state1 = new_state(cxt, state2->weighted);
	edge_list_append_all(state1, state2);
	PG_RETURN_POINTER(state1);
}

/* Serial function: the state as bytea (header, src[], dst[], weight[]); limited to 1 GB. */
Datum
powerrank_graph_serialize(PG_FUNCTION_ARGS)
{
	EdgeList   *state = (EdgeList *) PG_GETARG_POINTER(0);
	Size		row_bytes = 2 * sizeof(int64) + (state->weighted ? sizeof(double) : 0);
	Size		bytes;
	bytea	   *result;
	SerializedEdges *header;
	char	   *pos;

	if (state->count > (MaxAllocSize - VARHDRSZ - sizeof(SerializedEdges)) / row_bytes)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("too many edges to pass between parallel workers: %zu", state->count),
				 errhint("SET max_parallel_workers_per_gather = 0, or rank the table directly with pagerank('table_name').")));
	bytes = VARHDRSZ + sizeof(SerializedEdges) + state->count * row_bytes;
	result = palloc(bytes);
	SET_VARSIZE(result, bytes);
	header = (SerializedEdges *) VARDATA(result);
	header->magic = SERIALIZED_EDGES_MAGIC;
	header->weighted = state->weighted ? 1 : 0;
	header->count = (int64) state->count;
	header->skipped = state->skipped;
	pos = (char *) (header + 1);
	memcpy(pos, state->src, state->count * sizeof(int64));
	pos += state->count * sizeof(int64);
	memcpy(pos, state->dst, state->count * sizeof(int64));
	pos += state->count * sizeof(int64);
	if (state->weighted)
		memcpy(pos, state->weight, state->count * sizeof(double));
	PG_RETURN_BYTEA_P(result);
}

/* Deserial function: a state (in the current context) from powerrank_graph_serialize's bytea. */
Datum
powerrank_graph_deserialize(PG_FUNCTION_ARGS)
{
	bytea	   *data = PG_GETARG_BYTEA_PP(0);
	const char *pos = VARDATA_ANY(data);
	Size		size = VARSIZE_ANY_EXHDR(data);
	SerializedEdges header;
	EdgeList   *state;
	Size		count;

	if (size < sizeof(SerializedEdges))
		elog(ERROR, "invalid serialized powerrank_graph state");
	memcpy(&header, pos, sizeof(SerializedEdges));
	pos += sizeof(SerializedEdges);
	count = (Size) header.count;
	if (header.magic != SERIALIZED_EDGES_MAGIC || header.count < 0 ||
		size != sizeof(SerializedEdges) +
		count * (2 * sizeof(int64) + (header.weighted ? sizeof(double) : 0)))
		elog(ERROR, "invalid serialized powerrank_graph state");

	state = new_state(CurrentMemoryContext, header.weighted != 0);
	state->skipped = header.skipped;
	edge_list_reserve(state, count);
	memcpy(state->src, pos, count * sizeof(int64));
	pos += count * sizeof(int64);
	memcpy(state->dst, pos, count * sizeof(int64));
	pos += count * sizeof(int64);
	if (state->weighted)
		memcpy(state->weight, pos, count * sizeof(double));
	state->count = count;
	PG_RETURN_POINTER(state);
}

/*
 * Final function: builds the graph from the collected rows and returns it as a rankgraph (an
 * empty graph when there were no rows).  The state is only read, so it may be finalised twice.
 */
Datum
powerrank_graph_final(PG_FUNCTION_ARGS)
{
	EdgeList   *state = PG_ARGISNULL(0) ? NULL : (EdgeList *) PG_GETARG_POINTER(0);
	MemoryContext build_cxt;
	PrBuildOptions options = {0};
	PrGraph		graph;
	PrError		err = {0};
	PrStatus	status;
	Datum		result;
	EdgeList	empty;

	aggregate_context(fcinfo, "powerrank_graph_final");
	if (state == NULL)
	{
		edge_list_init(&empty, CurrentMemoryContext, false);
		state = &empty;
	}
	graph_scan_report_skipped(state->skipped, state->weighted);

	build_cxt = AllocSetContextCreate(CurrentMemoryContext, "powerrank_graph build",
									  ALLOCSET_DEFAULT_SIZES);
	options.undirected = false;
	options.out_edges = false;
	options.n_threads = powerrank_thread_count();
	options.should_stop = powerrank_cancel_requested;
	status = pr_graph_build(state->src, state->dst, state->weighted ? state->weight : NULL,
							state->count, &options, powerrank_context_allocator(build_cxt),
							&graph, &err);
	if (status != PR_OK)
		powerrank_report_core_error("graph build", &err);

	result = rankgraph_make(&graph, state->skipped);
	MemoryContextDelete(build_cxt);
	PG_RETURN_DATUM(result);
}
