/*
 * rank_rwr.c — random walk with restart: rwr(edges text | graph rankgraph, source bigint, ...) as
 * (node, score) rows, and rwr(..., sources bigint[], ...) as (source, node, score) rows, where all
 * sources are the k columns of one PageRank run (one pass over the matrix per iteration).
 */
#include "powerrank.h"

#include "funcapi.h"
#include "utils/memutils.h"

#include "functions/run.h"

/* Argument positions of rwr(edges text, source(s), ...). */
enum
{
	RT_EDGES, RT_SOURCE, RT_RESTART, RT_TOLERANCE, RT_MAX_ITERATIONS, RT_TOP_K, RT_SRC_COLUMN,
	RT_DST_COLUMN, RT_WEIGHT_COLUMN, RT_NORM, RT_DIRECTED, RT_REQUIRE_CONVERGENCE, RT_DEVICE,
	RT_DANGLING, RT_DANGLING_WEIGHTS
};

/* Argument positions of rwr(graph rankgraph, source(s), ...). */
enum
{
	RG_GRAPH, RG_SOURCE, RG_RESTART, RG_TOLERANCE, RG_MAX_ITERATIONS, RG_TOP_K, RG_NORM,
	RG_REQUIRE_CONVERGENCE, RG_DEVICE, RG_DANGLING, RG_DANGLING_WEIGHTS
};

/* The arguments both forms share, read and checked. */
typedef struct RwrArguments
{
	int64	   *sources;		/* [count] */
	int			count;
	double		restart;		/* restart probability */
	RankOptions options;
	RankDevice	device;
	WeightedNodes dangling;		/* nodes NULL: a dangling node's mass goes back to the source */
} RwrArguments;

/*
 * Runs RWR from the sources (one column each) on the run's graph and emits the rows: (node,
 * score) for the single-source form, (source, node, score) for the many-source form.
 */
static void
rwr_and_emit(FunctionCallInfo fcinfo, RankRun *run, bool many, const RwrArguments *args)
{
	const RankOptions *options = &args->options;
	const int64 *sources = args->sources;
	int			count = args->count;
	PrRestart  *restart;
	double	   *scores;
	int			j;

	/* every source must be in the graph: an empty graph is an ERROR here */
	restart = restart_per_node(run, sources, count);
	if (args->dangling.nodes != NULL)
		restart_set_dangling(run, restart, args->dangling.nodes, args->dangling.weights,
							 args->dangling.count);
	if ((Size) run->graph.n_nodes > MaxAllocHugeSize / sizeof(double) / count)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("too many sources for a graph of " INT64_FORMAT " nodes",
						(int64) run->graph.n_nodes),
				 errhint("Split the sources into several calls.")));
	if (options->top_k > 0)
	{
		/* only the best rows of each column: ranked where the scores were computed */
		int64		rows = rank_run_top_rows(run, options->top_k);
		int32	   *index = MemoryContextAllocHuge(run->cxt, rows * count * sizeof(int32));
		double	   *value = MemoryContextAllocHuge(run->cxt, rows * count * sizeof(double));

		rows = rank_run_pagerank_top(run, 1.0 - args->restart, restart, options, index, value);
		for (j = 0; j < count; j++)
			result_emit_top(fcinfo, run, index + j * rows, value + j * rows, rows,
							options->top_k, many, sources[j]);
		return;
	}
	scores = MemoryContextAllocHuge(run->cxt, run->graph.n_nodes * count * sizeof(double));
	rank_run_pagerank(run, 1.0 - args->restart, restart, options, scores);
	for (j = 0; j < count; j++)
		result_emit_scores(fcinfo, run, scores, count, j, options->top_k, many, sources[j]);
}

/*
 * Reads the leading arguments both forms share, in the order of their positions: the source(s),
 * the restart probability and the run options (norm and require_convergence at the form's
 * positions; first names the form's first argument in the messages).
 */
static void
rwr_read_arguments(FunctionCallInfo fcinfo, bool many, const char *first, int norm_arg,
				   int require_convergence_arg, RwrArguments *args)
{
	/* the leading positions are the same in both forms */
	StaticAssertStmt((int) RT_SOURCE == (int) RG_SOURCE && (int) RT_RESTART == (int) RG_RESTART &&
					 (int) RT_TOLERANCE == (int) RG_TOLERANCE &&
					 (int) RT_MAX_ITERATIONS == (int) RG_MAX_ITERATIONS &&
					 (int) RT_TOP_K == (int) RG_TOP_K,
					 "rwr forms disagree on their leading arguments");
	args->count = 1;
	if (many)
		args->sources = option_node_list(fcinfo, RT_SOURCE, "sources", &args->count);
	else
	{
		args->sources = palloc(sizeof(int64));
		args->sources[0] = option_int64(fcinfo, RT_SOURCE, "source");
	}
	args->restart = option_restart(fcinfo, RT_RESTART);
	rank_options_read(fcinfo, RT_TOLERANCE, RT_MAX_ITERATIONS, RT_TOP_K, norm_arg,
					  require_convergence_arg,
					  psprintf("rwr(%s, %s, restart, tolerance, max_iterations, top_k, ...)", first,
							   many ? "sources" : "source"),
					  &args->options);
}

/* Reads the trailing arguments both forms share: device (at device_arg), dangling and its weights. */
static void
rwr_read_trailing_arguments(FunctionCallInfo fcinfo, int device_arg, RwrArguments *args)
{
	StaticAssertStmt(RT_DANGLING == RT_DEVICE + 1 && RT_DANGLING_WEIGHTS == RT_DEVICE + 2 &&
					 RG_DANGLING == RG_DEVICE + 1 && RG_DANGLING_WEIGHTS == RG_DEVICE + 2,
					 "rwr forms disagree on their trailing arguments");
	args->device = option_device(fcinfo, device_arg);
	option_weighted_nodes(fcinfo, device_arg + 1, device_arg + 2, "dangling", "dangling_weights",
						  &args->dangling);
}

/* Shared body of the table forms. */
static Datum
rwr_table(FunctionCallInfo fcinfo, bool many)
{
	RwrArguments args;
	EdgeTableSpec spec;
	bool		directed;
	RankRun    *run;

	InitMaterializedSRF(fcinfo, 0);
	rwr_read_arguments(fcinfo, many, "edges", RT_NORM, RT_REQUIRE_CONVERGENCE, &args);
	edge_table_spec_read(fcinfo, RT_EDGES, RT_SRC_COLUMN, RT_DST_COLUMN, RT_WEIGHT_COLUMN, &spec);
	directed = option_bool(fcinfo, RT_DIRECTED, "directed");
	rwr_read_trailing_arguments(fcinfo, RT_DEVICE, &args);

	run = rank_run_begin("rwr", args.device);
	rank_run_load_table(run, &spec, directed, false);
	rwr_and_emit(fcinfo, run, many, &args);
	rank_run_end(run);
	return (Datum) 0;
}

/* Shared body of the rankgraph forms. */
static Datum
rwr_graph(FunctionCallInfo fcinfo, bool many)
{
	RwrArguments args;
	RankRun    *run;

	InitMaterializedSRF(fcinfo, 0);
	if (PG_ARGISNULL(RG_GRAPH))
		return (Datum) 0;
	rwr_read_arguments(fcinfo, many, "graph", RG_NORM, RG_REQUIRE_CONVERGENCE, &args);
	rwr_read_trailing_arguments(fcinfo, RG_DEVICE, &args);

	run = rank_run_begin("rwr", args.device);
	rank_run_load_rankgraph(run, PG_GETARG_DATUM(RG_GRAPH), false);
	rwr_and_emit(fcinfo, run, many, &args);
	rank_run_end(run);
	return (Datum) 0;
}

/*
 * Defines NAME, the fmgr entry point of one SQL form: BODY (rwr_table or rwr_graph) with one
 * source or, when MANY, an array of sources.
 */
#define RWR_ENTRY_POINT(NAME, BODY, MANY) \
PG_FUNCTION_INFO_V1(NAME); \
Datum \
NAME(PG_FUNCTION_ARGS) \
{ \
	return BODY(fcinfo, MANY); \
}

/* rwr(edges text, source bigint, ...). */
RWR_ENTRY_POINT(powerrank_rwr_table, rwr_table, false)
/* rwr(edges text, sources bigint[], ...). */
RWR_ENTRY_POINT(powerrank_rwr_table_many, rwr_table, true)
/* rwr(graph rankgraph, source bigint, ...). */
RWR_ENTRY_POINT(powerrank_rwr_graph, rwr_graph, false)
/* rwr(graph rankgraph, sources bigint[], ...). */
RWR_ENTRY_POINT(powerrank_rwr_graph_many, rwr_graph, true)
