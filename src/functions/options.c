/*
 * options.c — reads the SQL arguments of the ranking functions and validates them before any
 * table is read; every bad value is an ERROR with the argument's name and a hint.
 */
#include "powerrank.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/float.h"

#include "functions/run.h"

/* The hint for a NULL argument: the graph and the RWR source(s) have no default to fall back on. */
static const char *
null_argument_hint(const char *name)
{
	if (strcmp(name, "edges") == 0)
		return "Pass the name of the edge table.";
	if (strcmp(name, "source") == 0 || strcmp(name, "sources") == 0)
		return "Pass the id of a node to restart from (sources: an array of node ids).";
	return "Leave the argument out to use its default.";
}

/* ERROR for a NULL argument that must have a value. */
static void
require_not_null(FunctionCallInfo fcinfo, int argno, const char *name)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be NULL", name),
				 errhint("%s", null_argument_hint(name))));
}

/* A boolean argument that must not be NULL. */
bool
option_bool(FunctionCallInfo fcinfo, int argno, const char *name)
{
	require_not_null(fcinfo, argno, name);
	return PG_GETARG_BOOL(argno);
}

/* A bigint argument that must not be NULL. */
int64
option_int64(FunctionCallInfo fcinfo, int argno, const char *name)
{
	require_not_null(fcinfo, argno, name);
	return PG_GETARG_INT64(argno);
}

/* A probability argument (name: its name in the messages) that must be in [0, 1). */
static double
option_probability(FunctionCallInfo fcinfo, int argno, const char *name, const char *hint)
{
	double		value;

	require_not_null(fcinfo, argno, name);
	value = PG_GETARG_FLOAT8(argno);
	if (!(value >= 0.0 && value < 1.0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be in [0, 1), got %s", name, float8out_internal(value)),
				 errhint("%s", hint)));
	return value;
}

/* The damping factor: must be in [0, 1). */
double
option_damping(FunctionCallInfo fcinfo, int argno)
{
	return option_probability(fcinfo, argno, "damping",
							  "The damping factor is the probability of following an edge; 0.85 is usual.");
}

/*
 * The RWR restart probability: must be in [0, 1), like the damping factor.  Restart 0 is allowed:
 * the walk then returns to its source only from dead ends (dangling nodes), and may not converge.
 */
double
option_restart(FunctionCallInfo fcinfo, int argno)
{
	return option_probability(fcinfo, argno, "restart",
							  "The restart probability is 1 - damping; 0.15 is usual.");
}

/*
 * Smallest tolerance refused as meaningless.  The L1 residual between two score vectors that
 * each sum to 1 is at most 2 and their largest change at most 1, so with any norm ('l1_scaled'
 * per node) a tolerance near 1 passes after an iteration or two: such a value is a damping
 * factor, a restart probability or a top_k given in the tolerance's position.
 */
#define TOLERANCE_LIMIT 0.01

/*
 * ERROR for a tolerance of TOLERANCE_LIMIT or more: a value in the wrong position, most likely.
 * positional names the function's leading arguments, for the hint.
 */
static void
reject_large_tolerance(double tolerance, const char *positional)
{
	/* an integer was most likely meant as top_k */
	char	   *instead = tolerance == floor(tolerance) && tolerance <= PG_INT32_MAX ?
		psprintf("to get the best %d rows, pass top_k => %d", (int) tolerance, (int) tolerance) :
		"pass the others by name, e.g. tolerance => 1e-6";

	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("tolerance %s is too large to mean convergence", float8out_internal(tolerance)),
			 errdetail("A tolerance must be below %g: a residual between two score vectors is at most 2.",
					   TOLERANCE_LIMIT),
			 errhint("The leading arguments are %s; %s.", positional, instead)));
}

/*
 * Reads and validates tolerance, max_iterations, top_k, norm and require_convergence; positional
 * names the function's leading arguments (for the hint of a tolerance given in the wrong place).
 */
void
rank_options_read(FunctionCallInfo fcinfo, int tolerance_arg, int max_iterations_arg,
				  int top_k_arg, int norm_arg, int require_convergence_arg,
				  const char *positional, RankOptions *options)
{
	char	   *norm;

	require_not_null(fcinfo, tolerance_arg, "tolerance");
	options->tolerance = PG_GETARG_FLOAT8(tolerance_arg);
	if (!(options->tolerance > 0.0) || isinf(options->tolerance))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("tolerance must be a finite number greater than 0, got %s",
						float8out_internal(options->tolerance)),
				 errhint("Use a small positive number such as 1e-6 (1e-12 for near machine precision).")));
	if (options->tolerance >= TOLERANCE_LIMIT)
		reject_large_tolerance(options->tolerance, positional);

	require_not_null(fcinfo, max_iterations_arg, "max_iterations");
	options->max_iterations = PG_GETARG_INT32(max_iterations_arg);
	if (options->max_iterations <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_iterations must be greater than 0, got %d", options->max_iterations),
				 errhint("The default is 1000.")));

	options->top_k = 0;
	if (!PG_ARGISNULL(top_k_arg))
	{
		int32		top_k = PG_GETARG_INT32(top_k_arg);

		if (top_k <= 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("top_k must be greater than 0, got %d", top_k),
					 errhint("Leave top_k out (NULL) to get every node.")));
		options->top_k = top_k;
	}

	require_not_null(fcinfo, norm_arg, "norm");
	norm = text_to_cstring(PG_GETARG_TEXT_PP(norm_arg));
	if (!pr_norm_parse(norm, &options->norm))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown norm \"%s\"", norm),
				 errhint("Use 'l1' (sum of changes), 'l1_scaled' (sum < nodes * tolerance, as NetworkX) or 'linf' (largest change).")));

	options->require_convergence = option_bool(fcinfo, require_convergence_arg,
											   "require_convergence");
}

/* A node id and its position in the argument, for finding repeated ids. */
typedef struct NodePosition
{
	int64		node;
	int			position;
} NodePosition;

/* qsort comparator: by node id, then by position. */
static int
compare_node_positions(const void *a, const void *b)
{
	const NodePosition *x = (const NodePosition *) a;
	const NodePosition *y = (const NodePosition *) b;

	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	return (x->position > y->position) - (x->position < y->position);
}

/*
 * The elements of a one-dimensional array argument that must not be NULL (an ERROR naming the
 * argument otherwise, with hint for a wrong shape).
 */
static void
one_dimensional_array(FunctionCallInfo fcinfo, int argno, const char *name, Oid elem_type,
					  int elem_len, bool elem_byval, const char *hint, Datum **elems, bool **nulls,
					  int *n_elems)
{
	ArrayType  *array;

	require_not_null(fcinfo, argno, name);
	array = PG_GETARG_ARRAYTYPE_P(argno);
	if (ARR_NDIM(array) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a one-dimensional array, got %d dimensions", name,
						ARR_NDIM(array)),
				 errhint("%s", hint)));
	deconstruct_array(array, elem_type, elem_len, elem_byval, TYPALIGN_DOUBLE, elems, nulls, n_elems);
}

/* An ERROR when an element of the array argument name is NULL (hint: what to do). */
static void
require_element_not_null(bool isnull, const char *name, const char *hint)
{
	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not contain NULL", name),
				 errhint("%s", hint)));
}

/*
 * A bigint[] argument listing nodes (personalization, sources): one-dimensional, not empty, no
 * NULL and no node twice (a repeated source would be a second identical group of rows, a repeated
 * personalization node an unclear weight); the nodes in the order given.
 */
int64 *
option_node_list(FunctionCallInfo fcinfo, int argno, const char *name, int *count)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n_elems;
	NodePosition *sorted;
	int64	   *nodes;
	const char *null_hint;
	int			i;

	one_dimensional_array(fcinfo, argno, name, INT8OID, sizeof(int64), true,
						  "List the nodes in one dimension, e.g. ARRAY[1, 2, 3]; for separate groups, make one call per group.",
						  &elems, &nulls, &n_elems);
	if (n_elems == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must list at least one node", name),
				 errhint("Pass at least one node id, e.g. ARRAY[1].")));
	sorted = palloc(n_elems * sizeof(NodePosition));
	nodes = palloc(n_elems * sizeof(int64));
	null_hint = psprintf("Remove the NULL entries, e.g. with array_remove(%s, NULL).", name);
	for (i = 0; i < n_elems; i++)
	{
		require_element_not_null(nulls[i], name, null_hint);
		nodes[i] = DatumGetInt64(elems[i]);
		sorted[i].node = nodes[i];
		sorted[i].position = i;
	}
	qsort(sorted, n_elems, sizeof(NodePosition), compare_node_positions);
	for (i = 1; i < n_elems; i++)
		if (sorted[i].node == sorted[i - 1].node)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s lists node " INT64_FORMAT " more than once (positions %d and %d)",
							name, sorted[i].node, sorted[i - 1].position + 1,
							sorted[i].position + 1),
					 errhint("Pass each node once, e.g. ARRAY(SELECT DISTINCT unnest(%s)).", name)));
	pfree(sorted);
	*count = n_elems;
	return nodes;
}

/*
 * A float8[] argument with one value per node of another argument (nodes_name, count nodes), in
 * the same order: one-dimensional, no NULL, each finite and >= 0 (an ERROR otherwise; unit names
 * a value in the hints, null_hint and value_hint are the hints of those two checks).  Returns
 * the values as given.
 */
static double *
nonnegative_list(FunctionCallInfo fcinfo, int argno, const char *name, const char *nodes_name,
				 int count, const char *unit, const char *null_hint, const char *value_hint)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n_elems;
	double	   *values;
	int			i;

	one_dimensional_array(fcinfo, argno, name, FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL,
						  psprintf("List one %s per node of %s, in the same order, e.g. ARRAY[1, 4].",
								   unit, nodes_name),
						  &elems, &nulls, &n_elems);
	if (n_elems != count)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s has %d elements but %s has %d", name, n_elems, nodes_name, count),
				 errhint("Give one %s per node of %s, in the same order.", unit, nodes_name)));
	values = palloc(count * sizeof(double));
	for (i = 0; i < count; i++)
	{
		require_element_not_null(nulls[i], name, null_hint);
		values[i] = DatumGetFloat8(elems[i]);
		if (!(values[i] >= 0.0) || isinf(values[i]))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s must be finite numbers >= 0, got %s at position %d", name,
							float8out_internal(values[i]), i + 1),
					 errhint("%s", value_hint)));
	}
	return values;
}

/*
 * A float8[] argument weighting the nodes of another argument (nodes_name, count nodes): one
 * weight per node in the same order, each finite and >= 0, not all 0.  Returns the weights
 * divided by their sum (they then sum to 1).
 */
double *
option_weight_list(FunctionCallInfo fcinfo, int argno, const char *name, const char *nodes_name,
				   int count)
{
	double	   *weights = nonnegative_list(fcinfo, argno, name, nodes_name, count,
										   "weight",
										   psprintf("Give every node of %s a weight (0 to leave it out).",
													nodes_name),
										   "Weights are relative: only their ratios matter, e.g. ARRAY[1, 4].");
	double		largest = 0.0;
	double		sum = 0.0;
	int			i;

	for (i = 0; i < count; i++)
		if (weights[i] > largest)
			largest = weights[i];
	if (largest == 0.0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not all be 0", name),
				 errhint("Give at least one node of %s a positive weight.", nodes_name)));
	/* scaled by the largest first: a sum of huge weights stays finite */
	for (i = 0; i < count; i++)
	{
		weights[i] /= largest;
		sum += weights[i];
	}
	for (i = 0; i < count; i++)
		weights[i] /= sum;
	return weights;
}

/*
 * A list of nodes with optional weights (personalization / personalization_weights, dangling /
 * dangling_weights) into out: the nodes (count of them), or NULL when nodes_arg is NULL; the
 * weights normalized to sum 1, or NULL when weights_arg is NULL (then the nodes weigh alike).
 * Weights without nodes are an ERROR.
 */
void
option_weighted_nodes(FunctionCallInfo fcinfo, int nodes_arg, int weights_arg,
					  const char *nodes_name, const char *weights_name, WeightedNodes *out)
{
	out->nodes = NULL;
	out->weights = NULL;
	out->count = 0;
	if (PG_ARGISNULL(nodes_arg))
	{
		if (!PG_ARGISNULL(weights_arg))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s needs %s", weights_name, nodes_name),
					 errhint("Pass the nodes to weight as %s, e.g. %s => ARRAY[1, 2], %s => ARRAY[1, 4].",
							 nodes_name, nodes_name, weights_name)));
		return;
	}
	out->nodes = option_node_list(fcinfo, nodes_arg, nodes_name, &out->count);
	if (!PG_ARGISNULL(weights_arg))
		out->weights = option_weight_list(fcinfo, weights_arg, weights_name, nodes_name,
										  out->count);
}

/*
 * The start_nodes and start_scores arguments (pagerank's start vector) into out: the nodes (count
 * of them), or NULL when start_nodes is NULL, and their scores as given (finite, >= 0).  Either
 * argument without the other is an ERROR.
 */
void
option_start_nodes(FunctionCallInfo fcinfo, int nodes_arg, int scores_arg, WeightedNodes *out)
{
	out->nodes = NULL;
	out->weights = NULL;
	out->count = 0;
	if (PG_ARGISNULL(nodes_arg) != PG_ARGISNULL(scores_arg))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("start_nodes and start_scores must be given together"),
				 errhint("Pass the nodes and one score per node, e.g. start_nodes => ARRAY[1, 2], start_scores => ARRAY[0.3, 0.7].")));
	if (PG_ARGISNULL(nodes_arg))
		return;
	out->nodes = option_node_list(fcinfo, nodes_arg, "start_nodes", &out->count);
	out->weights = nonnegative_list(fcinfo, scores_arg, "start_scores", "start_nodes", out->count,
									"score", "Give every node of start_nodes a score (0 to start it at 0).",
									"Scores are relative: the start vector is scaled to sum 1, e.g. the scores of an earlier run.");
}

/* The device argument: 'auto', 'cpu' or 'gpu'. */
RankDevice
option_device(FunctionCallInfo fcinfo, int argno)
{
	char	   *value;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("device must not be NULL"),
				 errhint("Use 'auto', 'cpu' or 'gpu'.")));
	value = text_to_cstring(PG_GETARG_TEXT_PP(argno));
	if (strcmp(value, "auto") == 0)
		return RANK_DEVICE_AUTO;
	if (strcmp(value, "cpu") == 0)
		return RANK_DEVICE_CPU;
	if (strcmp(value, "gpu") == 0)
		return RANK_DEVICE_GPU;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown device \"%s\"", value),
			 errhint("Use 'auto' (the GPU service for large graphs when it has a device), 'cpu' or 'gpu'.")));
	return RANK_DEVICE_AUTO;	/* keep the compiler quiet */
}

/* Reads the table name and the column names of the table form. */
void
edge_table_spec_read(FunctionCallInfo fcinfo, int relation_arg, int src_arg, int dst_arg,
					 int weight_arg, EdgeTableSpec *spec)
{
	require_not_null(fcinfo, relation_arg, "edges");
	require_not_null(fcinfo, src_arg, "src_column");
	require_not_null(fcinfo, dst_arg, "dst_column");
	spec->relation = PG_GETARG_TEXT_PP(relation_arg);
	spec->src_column = pstrdup(NameStr(*PG_GETARG_NAME(src_arg)));
	spec->dst_column = pstrdup(NameStr(*PG_GETARG_NAME(dst_arg)));
	spec->weight_column = PG_ARGISNULL(weight_arg) ? NULL :
		pstrdup(NameStr(*PG_GETARG_NAME(weight_arg)));
}
