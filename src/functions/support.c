/*
 * support.c — the planner support function of the ranking functions: a row estimate for EXPLAIN
 * and the plans around a call, instead of the fixed ROWS 1000.
 *
 * The estimate is the node count of the edge table named by a constant, as powerrank_estimate
 * counts it (graph_size_of_table, estimate.c): the cached graph's count when the graph cache holds
 * the table, else the union of the distinct values of the src and dst columns from pg_statistic;
 * or top_k when it is a constant below that count (or the count is unknown).  Multi-source RWR
 * returns one set of rows per source, so the estimate is multiplied by the length of a constant
 * sources array.  The support function never reads the table, takes no lock and never raises an
 * error: whatever it cannot work out leaves the planner's default.
 */
#include "powerrank.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/primnodes.h"
#include "nodes/supportnodes.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#include "utils/varlena.h"

#include "functions/estimate.h"

PG_FUNCTION_INFO_V1(powerrank_rows_support);

/* The call's arguments that the estimate uses (NULL where absent or not a constant). */
typedef struct RowsArguments
{
	Const	   *edges;
	Const	   *top_k;
	Const	   *sources;
	Const	   *src_column;
	Const	   *dst_column;
} RowsArguments;

/* The argument as a non-NULL constant, or NULL. */
static Const *
constant_argument(Node *arg)
{
	if (arg != NULL && IsA(arg, Const) && !((Const *) arg)->constisnull)
		return (Const *) arg;
	return NULL;
}

/*
 * Fills args from the call's arguments, matched by the function's argument names.  The planner
 * has already put named arguments in place and added the defaults.  False if the function is
 * not found.
 */
static bool
find_arguments(Oid funcid, List *call_args, RowsArguments *args)
{
	HeapTuple	proc_tuple;
	Oid		   *types;
	char	  **names;
	char	   *modes;
	int			count;
	int			i;

	memset(args, 0, sizeof(RowsArguments));
	proc_tuple = SearchSysCache1(PROCOID, ObjectIdGetDatum(funcid));
	if (!HeapTupleIsValid(proc_tuple))
		return false;
	count = get_func_arg_info(proc_tuple, &types, &names, &modes);
	ReleaseSysCache(proc_tuple);
	if (names == NULL)
		return false;

	/* Output columns (RETURNS TABLE) come after the input arguments and are not in the call. */
	for (i = 0; i < count && i < list_length(call_args); i++)
	{
		Const	   *value;

		if (modes != NULL && modes[i] != PROARGMODE_IN)
			continue;
		value = constant_argument(list_nth(call_args, i));
		if (value == NULL || names[i] == NULL)
			continue;
		if (strcmp(names[i], "edges") == 0 && value->consttype == TEXTOID)
			args->edges = value;
		else if (strcmp(names[i], "top_k") == 0 && value->consttype == INT4OID)
			args->top_k = value;
		else if (strcmp(names[i], "sources") == 0 && value->consttype == INT8ARRAYOID)
			args->sources = value;
		else if (strcmp(names[i], "src_column") == 0 && value->consttype == NAMEOID)
			args->src_column = value;
		else if (strcmp(names[i], "dst_column") == 0 && value->consttype == NAMEOID)
			args->dst_column = value;
	}
	return true;
}

/*
 * The relation named by a table name as the ranking functions accept it (quoted and
 * schema-qualified names allowed), if it exists and the user may read its schema; otherwise
 * InvalidOid.  Resolves like RangeVarGetRelid but without raising errors.
 */
static Oid
relation_of_name(text *name)
{
	char	   *raw = text_to_cstring(name);
	List	   *parts = NIL;
	const char *schema = NULL;
	const char *relname;
	Oid			namespace_oid;

	if (!SplitIdentifierString(raw, '.', &parts) || parts == NIL || list_length(parts) > 3)
		return InvalidOid;
	if (list_length(parts) == 3)
	{
		char	   *database = get_database_name(MyDatabaseId);

		if (database == NULL || strcmp(linitial(parts), database) != 0)
			return InvalidOid;
	}
	relname = llast(parts);
	if (list_length(parts) >= 2)
		schema = list_nth(parts, list_length(parts) - 2);

	if (schema == NULL)
		return RelnameGetRelid(relname);
	namespace_oid = get_namespace_oid(schema, true);
	if (!OidIsValid(namespace_oid) ||
		pg_namespace_aclcheck(namespace_oid, GetUserId(), ACL_USAGE) != ACLCHECK_OK)
		return InvalidOid;
	return get_relname_relid(relname, namespace_oid);
}

/*
 * The node count of the edge table named by args (graph_size_of_table: the graph cache, else the
 * statistics); -1 when the table or its columns are not found, not readable by the user, or have
 * no statistics.
 */
static double
table_node_count(const RowsArguments *args)
{
	Oid			relid;
	const char *src_name;
	const char *dst_name;
	AttrNumber	src_attnum;
	AttrNumber	dst_attnum;
	char		relkind;
	bool		missing = false;
	GraphSizeTarget target;
	GraphSize	size;

	if (args->edges == NULL)
		return -1;
	relid = relation_of_name(DatumGetTextPP(args->edges->constvalue));
	if (!OidIsValid(relid))
		return -1;
	relkind = get_rel_relkind(relid);
	if (relkind != RELKIND_RELATION && relkind != RELKIND_PARTITIONED_TABLE &&
		relkind != RELKIND_MATVIEW)
		return -1;

	src_name = args->src_column ? NameStr(*DatumGetName(args->src_column->constvalue)) : "src";
	dst_name = args->dst_column ? NameStr(*DatumGetName(args->dst_column->constvalue)) : "dst";
	src_attnum = get_attnum(relid, src_name);
	dst_attnum = get_attnum(relid, dst_name);
	if (src_attnum <= 0 || dst_attnum <= 0)
		return -1;

	/* Only what the user could read: the table, or both endpoint columns (if still there). */
	if (pg_class_aclcheck_ext(relid, GetUserId(), ACL_SELECT, &missing) != ACLCHECK_OK &&
		(missing ||
		 pg_attribute_aclcheck_ext(relid, src_attnum, GetUserId(), ACL_SELECT,
								   &missing) != ACLCHECK_OK || missing ||
		 pg_attribute_aclcheck_ext(relid, dst_attnum, GetUserId(), ACL_SELECT,
								   &missing) != ACLCHECK_OK))
		return -1;

	/* any cached graph of the two columns: its node count does not depend on the direction */
	memset(&target, 0, sizeof(target));
	target.relid = relid;
	target.n_columns = 2;
	target.attnums[0] = src_attnum;
	target.attnums[1] = dst_attnum;
	target.types[0] = get_atttype(relid, src_attnum);
	target.types[1] = get_atttype(relid, dst_attnum);
	if (!OidIsValid(target.types[0]) || !OidIsValid(target.types[1]))
		return -1;
	target.types[0] = getBaseType(target.types[0]);
	target.types[1] = getBaseType(target.types[1]);
	target.directed = true;
	target.latest_cached = true;
	graph_size_of_table(&target, &size);
	return size.nodes;
}

/* The number of elements of a constant sources array. */
static double
source_count(const Const *sources)
{
	ArrayType  *array = DatumGetArrayTypeP(sources->constvalue);

	return (double) ArrayGetNItems(ARR_NDIM(array), ARR_DIMS(array));
}

/*
 * Planner support of pagerank, hits and rwr: answers SupportRequestRows with the node count or a
 * smaller top_k (see the top of the file); NULL for any other request or when there is no estimate.
 */
Datum
powerrank_rows_support(PG_FUNCTION_ARGS)
{
	Node	   *raw_request = (Node *) PG_GETARG_POINTER(0);
	SupportRequestRows *request;
	RowsArguments args;
	List	   *call_args;
	double		rows = -1;

	if (!IsA(raw_request, SupportRequestRows))
		PG_RETURN_POINTER(NULL);
	request = (SupportRequestRows *) raw_request;
	if (request->node == NULL || !IsA(request->node, FuncExpr))
		PG_RETURN_POINTER(NULL);
	call_args = ((FuncExpr *) request->node)->args;
	if (!find_arguments(request->funcid, call_args, &args))
		PG_RETURN_POINTER(NULL);

	rows = table_node_count(&args);
	if (args.top_k != NULL && DatumGetInt32(args.top_k->constvalue) > 0 &&
		(rows < 0 || DatumGetInt32(args.top_k->constvalue) < rows))
		rows = DatumGetInt32(args.top_k->constvalue);
	if (rows < 0)
		PG_RETURN_POINTER(NULL);

	if (args.sources != NULL)
		rows *= source_count(args.sources);
	request->rows = Max(rows, 1.0);
	PG_RETURN_POINTER(request);
}
