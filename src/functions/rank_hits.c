/*
 * rank_hits.c — hits(edges text, ...) and hits(graph rankgraph, ...): hub and authority scores as
 * (node, hub, authority) rows.
 */
#include "powerrank.h"

#include "funcapi.h"

#include "functions/run.h"

PG_FUNCTION_INFO_V1(powerrank_hits_table);
PG_FUNCTION_INFO_V1(powerrank_hits_graph);

/* Argument positions of hits(edges text, ...). */
enum
{
	HT_EDGES, HT_TOLERANCE, HT_MAX_ITERATIONS, HT_TOP_K, HT_SRC_COLUMN, HT_DST_COLUMN,
	HT_WEIGHT_COLUMN, HT_NORM, HT_DIRECTED, HT_REQUIRE_CONVERGENCE, HT_DEVICE
};

/* Argument positions of hits(graph rankgraph, ...). */
enum
{
	HG_GRAPH, HG_TOLERANCE, HG_MAX_ITERATIONS, HG_TOP_K, HG_NORM, HG_REQUIRE_CONVERGENCE,
	HG_DEVICE
};

/* Runs HITS on the run's graph and emits the rows. */
static void
hits_and_emit(FunctionCallInfo fcinfo, RankRun *run, const RankOptions *options)
{
	double	   *hubs = NULL;
	double	   *authorities = NULL;

	if (run->graph.n_nodes > 0)
	{
		hubs = MemoryContextAllocHuge(run->cxt, run->graph.n_nodes * sizeof(double));
		authorities = MemoryContextAllocHuge(run->cxt, run->graph.n_nodes * sizeof(double));
	}
	rank_run_hits(run, options, hubs, authorities);
	result_emit_hits(fcinfo, run, hubs, authorities, options->top_k);
}

/* hits(edges text, ...): reads the edge table and scores its nodes. */
Datum
powerrank_hits_table(PG_FUNCTION_ARGS)
{
	RankOptions options;
	EdgeTableSpec spec;
	bool		directed;
	RankDevice	device;
	RankRun    *run;

	InitMaterializedSRF(fcinfo, 0);
	rank_options_read(fcinfo, HT_TOLERANCE, HT_MAX_ITERATIONS, HT_TOP_K, HT_NORM,
					  HT_REQUIRE_CONVERGENCE, "hits(edges, tolerance, max_iterations, top_k, ...)",
					  &options);
	edge_table_spec_read(fcinfo, HT_EDGES, HT_SRC_COLUMN, HT_DST_COLUMN, HT_WEIGHT_COLUMN, &spec);
	directed = option_bool(fcinfo, HT_DIRECTED, "directed");
	device = option_device(fcinfo, HT_DEVICE);

	run = rank_run_begin("hits", device);
	rank_run_load_table(run, &spec, directed, true);
	hits_and_emit(fcinfo, run, &options);
	rank_run_end(run);
	return (Datum) 0;
}

/* hits(graph rankgraph, ...): scores the nodes of a graph built by powerrank_graph. */
Datum
powerrank_hits_graph(PG_FUNCTION_ARGS)
{
	RankOptions options;
	RankDevice	device;
	RankRun    *run;

	InitMaterializedSRF(fcinfo, 0);
	if (PG_ARGISNULL(HG_GRAPH))
		return (Datum) 0;
	rank_options_read(fcinfo, HG_TOLERANCE, HG_MAX_ITERATIONS, HG_TOP_K, HG_NORM,
					  HG_REQUIRE_CONVERGENCE, "hits(graph, tolerance, max_iterations, top_k, ...)",
					  &options);
	device = option_device(fcinfo, HG_DEVICE);

	run = rank_run_begin("hits", device);
	rank_run_load_rankgraph(run, PG_GETARG_DATUM(HG_GRAPH), true);
	hits_and_emit(fcinfo, run, &options);
	rank_run_end(run);
	return (Datum) 0;
}
