/*
 * rank_pagerank.c — pagerank(edges text, ...) and pagerank(graph rankgraph, ...): PageRank and
 * personalized PageRank as (node, score) rows.
 */
#include "powerrank.h"

#include "funcapi.h"

#include "functions/run.h"

PG_FUNCTION_INFO_V1(powerrank_pagerank_table);
PG_FUNCTION_INFO_V1(powerrank_pagerank_graph);

/* Argument positions of pagerank(edges text, ...). */
enum
{
	PT_EDGES, PT_DAMPING, PT_TOLERANCE, PT_MAX_ITERATIONS, PT_TOP_K, PT_SRC_COLUMN,
	PT_DST_COLUMN, PT_WEIGHT_COLUMN, PT_NORM, PT_DIRECTED, PT_PERSONALIZATION,
	PT_REQUIRE_CONVERGENCE, PT_DEVICE, PT_PERSONALIZATION_WEIGHTS, PT_DANGLING,
	PT_DANGLING_WEIGHTS, PT_START_NODES, PT_START_SCORES
};

/* Argument positions of pagerank(graph rankgraph, ...). */
enum
{
	PG_ARG_GRAPH, PG_ARG_DAMPING, PG_ARG_TOLERANCE, PG_ARG_MAX_ITERATIONS, PG_ARG_TOP_K,
	PG_ARG_NORM, PG_ARG_PERSONALIZATION, PG_ARG_REQUIRE_CONVERGENCE, PG_ARG_DEVICE,
	PG_ARG_PERSONALIZATION_WEIGHTS, PG_ARG_DANGLING, PG_ARG_DANGLING_WEIGHTS, PG_ARG_START_NODES,
	PG_ARG_START_SCORES
};

/* The arguments both forms share, read and checked. */
typedef struct PagerankArguments
{
	double		damping;
	RankDevice	device;
	RankOptions options;
	WeightedNodes personalization;	/* nodes NULL: the uniform restart */
	WeightedNodes dangling;		/* nodes NULL: dangling mass follows the restart */
	WeightedNodes start;		/* weights: the scores as given; nodes NULL: the uniform start */
} PagerankArguments;

/* Runs PageRank on the run's graph and emits the rows. */
static void
pagerank_and_emit(FunctionCallInfo fcinfo, RankRun *run, const PagerankArguments *args)
{
	const RankOptions *options = &args->options;
	const WeightedNodes *personalization = &args->personalization;
	const WeightedNodes *dangling = &args->dangling;
	const WeightedNodes *start = &args->start;
	PrRestart  *restart;
	double	   *scores;

	/* personalization nodes must be in the graph, also when it is empty (then an ERROR) */
	if (personalization->nodes != NULL)
		restart = restart_single_column(run, personalization->nodes, personalization->weights,
										personalization->count, "personalization");
	else
		restart = restart_uniform(run);
	if (dangling->nodes != NULL)
		restart_set_dangling(run, restart, dangling->nodes, dangling->weights, dangling->count);
	if (start->nodes != NULL)
		rank_run_set_start(run, start->nodes, start->weights, start->count);
	if (run->graph.n_nodes == 0)
	{
		rank_run_pagerank(run, args->damping, NULL, options, NULL);
		return;
	}
	if (options->top_k > 0)
	{
		/* only the best rows: ranked where the scores were computed */
		int64		rows = rank_run_top_rows(run, options->top_k);
		int32	   *index = MemoryContextAllocHuge(run->cxt, rows * sizeof(int32));
		double	   *value = MemoryContextAllocHuge(run->cxt, rows * sizeof(double));

		rows = rank_run_pagerank_top(run, args->damping, restart, options, index, value);
		result_emit_top(fcinfo, run, index, value, rows, options->top_k, false, 0);
		return;
	}
	scores = MemoryContextAllocHuge(run->cxt, run->graph.n_nodes * sizeof(double));
	rank_run_pagerank(run, args->damping, restart, options, scores);
	result_emit_scores(fcinfo, run, scores, 1, 0, options->top_k, false, 0);
}

/*
 * Reads the leading arguments both forms share, in the order they have always been checked: the
 * damping factor, the device (at device_arg) and the run options (norm and require_convergence
 * at the form's positions; first names the form's first argument in the messages).
 */
static void
pagerank_read_arguments(FunctionCallInfo fcinfo, const char *first, int device_arg, int norm_arg,
						int require_convergence_arg, PagerankArguments *args)
{
	/* the leading positions are the same in both forms */
	StaticAssertStmt((int) PT_DAMPING == (int) PG_ARG_DAMPING &&
					 (int) PT_TOLERANCE == (int) PG_ARG_TOLERANCE &&
					 (int) PT_MAX_ITERATIONS == (int) PG_ARG_MAX_ITERATIONS &&
					 (int) PT_TOP_K == (int) PG_ARG_TOP_K,
					 "pagerank forms disagree on their leading arguments");
	args->damping = option_damping(fcinfo, PT_DAMPING);
	args->device = option_device(fcinfo, device_arg);
	rank_options_read(fcinfo, PT_TOLERANCE, PT_MAX_ITERATIONS, PT_TOP_K, norm_arg,
					  require_convergence_arg,
					  psprintf("pagerank(%s, damping, tolerance, max_iterations, top_k, ...)", first),
					  &args->options);
}

/*
 * Reads the distribution arguments both forms share: personalization (at personalization_arg),
 * then personalization_weights, dangling, dangling_weights, start_nodes and start_scores, at
 * consecutive positions from weights_arg.
 */
static void
pagerank_read_distributions(FunctionCallInfo fcinfo, int personalization_arg, int weights_arg,
							PagerankArguments *args)
{
	/* personalization_weights .. start_scores: consecutive in both forms */
	StaticAssertStmt(PT_DANGLING == PT_PERSONALIZATION_WEIGHTS + 1 &&
					 PT_DANGLING_WEIGHTS == PT_PERSONALIZATION_WEIGHTS + 2 &&
					 PT_START_NODES == PT_PERSONALIZATION_WEIGHTS + 3 &&
					 PT_START_SCORES == PT_PERSONALIZATION_WEIGHTS + 4 &&
					 PG_ARG_DANGLING == PG_ARG_PERSONALIZATION_WEIGHTS + 1 &&
					 PG_ARG_DANGLING_WEIGHTS == PG_ARG_PERSONALIZATION_WEIGHTS + 2 &&
					 PG_ARG_START_NODES == PG_ARG_PERSONALIZATION_WEIGHTS + 3 &&
					 PG_ARG_START_SCORES == PG_ARG_PERSONALIZATION_WEIGHTS + 4,
					 "pagerank forms disagree on their trailing arguments");
	option_weighted_nodes(fcinfo, personalization_arg, weights_arg, "personalization",
						  "personalization_weights", &args->personalization);
	option_weighted_nodes(fcinfo, weights_arg + 1, weights_arg + 2, "dangling", "dangling_weights",
						  &args->dangling);
	option_start_nodes(fcinfo, weights_arg + 3, weights_arg + 4, &args->start);
}

/* pagerank(edges text, ...): reads the edge table and ranks its nodes. */
Datum
powerrank_pagerank_table(PG_FUNCTION_ARGS)
{
	PagerankArguments args;
	EdgeTableSpec spec;
	bool		directed;
	RankRun    *run;

	InitMaterializedSRF(fcinfo, 0);
	pagerank_read_arguments(fcinfo, "edges", PT_DEVICE, PT_NORM, PT_REQUIRE_CONVERGENCE, &args);
	edge_table_spec_read(fcinfo, PT_EDGES, PT_SRC_COLUMN, PT_DST_COLUMN, PT_WEIGHT_COLUMN, &spec);
	directed = option_bool(fcinfo, PT_DIRECTED, "directed");
	pagerank_read_distributions(fcinfo, PT_PERSONALIZATION, PT_PERSONALIZATION_WEIGHTS, &args);

	run = rank_run_begin("pagerank", args.device);
	rank_run_load_table(run, &spec, directed, false);
	pagerank_and_emit(fcinfo, run, &args);
	rank_run_end(run);
	return (Datum) 0;
}

/* pagerank(graph rankgraph, ...): ranks the nodes of a graph built by powerrank_graph. */
Datum
powerrank_pagerank_graph(PG_FUNCTION_ARGS)
{
	PagerankArguments args;
	RankRun    *run;

	InitMaterializedSRF(fcinfo, 0);
	if (PG_ARGISNULL(PG_ARG_GRAPH))
		return (Datum) 0;
	pagerank_read_arguments(fcinfo, "graph", PG_ARG_DEVICE, PG_ARG_NORM,
							PG_ARG_REQUIRE_CONVERGENCE, &args);
	pagerank_read_distributions(fcinfo, PG_ARG_PERSONALIZATION, PG_ARG_PERSONALIZATION_WEIGHTS,
								&args);

	run = rank_run_begin("pagerank", args.device);
	rank_run_load_rankgraph(run, PG_GETARG_DATUM(PG_ARG_GRAPH), false);
	pagerank_and_emit(fcinfo, run, &args);
	rank_run_end(run);
	return (Datum) 0;
}
