/*
 * graph_scan.c — the table form's reader: resolves the relation and its columns, checks SELECT
 * privilege before reading anything, then fetches the rows into an EdgeList: with a direct table
 * scan (graph_heapscan.c; in parallel workers for large tables, graph_parallel_read.c) where that
 * reads exactly what a SELECT would, otherwise through an SPI
 * cursor (so row-level security, views and foreign tables work as in any query).  Rows with a NULL endpoint (or a NULL
 * weight, when a weight column is used) are skipped and counted; invalid weights are errors.
 *
 * Snapshot: like the executor, which takes a statement's snapshot after its locks are granted, the
 * read does not use the statement's snapshot (taken before the relation's lock, which may have
 * waited for a table rewrite to commit: the new storage's rows would all be invisible to it).  In
 * READ COMMITTED graph_scan_resolve takes a fresh snapshot once the relation is locked and pushes
 * it as the active snapshot; the heap scan, the parallel read (its workers get the leader's active
 * snapshot), the SPI cursor of a plain table and the graph cache's change-log probe all read through
 * it, so they see one state of the table.  graph_scan_end pops it.  The SPI reader of a view, a
 * partitioned or foreign table or a table whose policies apply lets SPI take its snapshot after the
 * query's plan has locked every relation it reads (the cache never serves those).  In REPEATABLE
 * READ and SERIALIZABLE the transaction's snapshot is the read's; a table whose storage was replaced
 * by a transaction that snapshot does not see cannot be read consistently: a serialization failure.
 */
#include "powerrank.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "parser/parse_coerce.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/varlena.h"

#include "graph/graph_heapscan.h"
#include "graph/graph_parallel_read.h"
#include "graph/graph_scan.h"

/* Rows fetched from the cursor per round trip. */
#define GRAPH_SCAN_BATCH_ROWS 50000

/*
 * Resolves the text name (quoted and schema-qualified names allowed) to a locked relation; a name
 * that is no SQL name, or names no relation, is an ERROR with a hint.
 */
Oid
graph_scan_resolve_relation(text *relation)
{
	char	   *name = text_to_cstring(relation);
	List	   *parts;
	RangeVar   *range_var;
	Oid			relid;

	if (!SplitIdentifierString(pstrdup(name), '.', &parts) || parts == NIL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_NAME),
				 errmsg("invalid table name \"%s\"", name),
				 errhint("Write the name as SQL does: a name with capitals, spaces or other special characters in double quotes, e.g. '\"My Edges\"' or 'my_schema.\"My Edges\"'.")));
	range_var = makeRangeVarFromNameList(textToQualifiedNameList(relation));
	relid = RangeVarGetRelid(range_var, AccessShareLock, true);
	if (!OidIsValid(relid) && range_var->schemaname != NULL &&
		!OidIsValid(get_namespace_oid(range_var->schemaname, true)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_SCHEMA),
				 errmsg("schema \"%s\" does not exist", range_var->schemaname),
				 errhint("Check the schema's name; a name with capitals or special characters goes in double quotes.")));
	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 range_var->schemaname != NULL ?
				 errmsg("relation \"%s.%s\" does not exist", range_var->schemaname,
						range_var->relname) :
				 errmsg("relation \"%s\" does not exist", range_var->relname),
				 errhint("Check the name, or qualify it with its schema (e.g. 'public.edges'). Views and materialized views should qualify it: pg_restore runs them with an empty search_path.")));
	return relid;
}

/* Refuses relations that cannot be read like a table (indexes, sequences, types...). */
static void
check_relation_kind(Oid relid, const char *relname)
{
	char		relkind = get_rel_relkind(relid);

	if (relkind != RELKIND_RELATION && relkind != RELKIND_VIEW &&
		relkind != RELKIND_MATVIEW && relkind != RELKIND_FOREIGN_TABLE &&
		relkind != RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a table, view, materialized view or foreign table", relname),
				 errhint("Pass the name of a relation holding one row per edge.")));
}

/* Looks up a column by name; a missing (or dropped) column is an UNDEFINED_COLUMN error. */
static void
resolve_column(Oid relid, const char *relname, ScanColumn *column)
{
	column->attnum = get_attnum(relid, column->name);
	if (column->attnum == InvalidAttrNumber || column->attnum < 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" does not exist in table \"%s\"", column->name, relname),
				 errhint("Name the edge columns with the src_column, dst_column and weight_column arguments.")));
	column->type = getBaseType(get_atttype(relid, column->attnum));
}

/*
 * Checks that the current user may SELECT the relation, or at least every column read, before a
 * single row is read; otherwise a permission-denied ERROR.
 */
static void
check_select_privilege(Oid relid, const char *relname, ScanColumn *columns, int n_columns)
{
	Oid			user = GetUserId();
	int			i;

	if (pg_class_aclcheck(relid, user, ACL_SELECT) == ACLCHECK_OK)
		return;
	for (i = 0; i < n_columns; i++)
	{
		if (pg_attribute_aclcheck(relid, columns[i].attnum, user, ACL_SELECT) != ACLCHECK_OK)
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("permission denied for table %s", relname),
					 errhint("The role running the ranking needs SELECT on the table or on its edge columns: GRANT SELECT ON %s TO %s;",
							 quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)), relname),
							 quote_identifier(GetUserNameFromId(user, false)))));
	}
}

/* Checks that an endpoint column is smallint, integer or bigint. */
static void
check_endpoint_type(const ScanColumn *column, const char *relname)
{
	if (column->type == INT2OID || column->type == INT4OID || column->type == INT8OID)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_DATATYPE_MISMATCH),
			 errmsg("column \"%s\" of table \"%s\" has type %s, but %s must be smallint, integer or bigint",
					column->name, relname, format_type_be(column->type), column->argument),
			 errhint("Node ids are integers; map other keys to integers in a view, or use the powerrank_graph aggregate over a query.")));
}

/* Checks that the weight column is of a numeric type that converts to double precision. */
static void
check_weight_type(const ScanColumn *column, const char *relname)
{
	Oid			funcid;

	if (TypeCategory(column->type) == TYPCATEGORY_NUMERIC &&
		find_coercion_pathway(FLOAT8OID, column->type, COERCION_ASSIGNMENT, &funcid)
		!= COERCION_PATH_NONE)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_DATATYPE_MISMATCH),
			 errmsg("column \"%s\" of table \"%s\" has type %s, but weight_column must be of a numeric type",
					column->name, relname, format_type_be(column->type)),
			 errhint("Use a column of type double precision, real, numeric or an integer type.")));
}

/* The SELECT that reads the edge columns; every name in it is quoted. */
static char *
build_scan_query(Oid relid, const ScanColumn *columns, int n_columns)
{
	StringInfoData sql;
	char	   *qualified = quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
													   get_rel_name(relid));

	initStringInfo(&sql);
	appendStringInfo(&sql, "SELECT %s::pg_catalog.int8, %s::pg_catalog.int8",
					 quote_identifier(columns[0].name), quote_identifier(columns[1].name));
	if (n_columns == 3)
		appendStringInfo(&sql, ", %s::pg_catalog.float8", quote_identifier(columns[2].name));
	appendStringInfo(&sql, " FROM %s", qualified);
	return sql.data;
}

/* Appends one fetched batch to edges, skipping and counting rows with a NULL. */
static void
append_batch(SPITupleTable *table, uint64 n_rows, EdgeList *edges, const char *relname)
{
	TupleDesc	desc = table->tupdesc;
	uint64		row;

	edge_list_reserve(edges, edges->count + n_rows);
	for (row = 0; row < n_rows; row++)
	{
		HeapTuple	tuple = table->vals[row];
		bool		src_null;
		bool		dst_null;
		bool		weight_null = false;
		Datum		src = heap_getattr(tuple, 1, desc, &src_null);
		Datum		dst = heap_getattr(tuple, 2, desc, &dst_null);
		double		weight = 1.0;

		if (edges->weighted)
		{
			Datum		w = heap_getattr(tuple, 3, desc, &weight_null);

			if (!weight_null)
				weight = DatumGetFloat8(w);
		}
		if (src_null || dst_null || weight_null)
		{
			edges->skipped++;
			continue;
		}
		if (edges->weighted)
			edge_list_check_weight(weight, DatumGetInt64(src), DatumGetInt64(dst), relname);
		edge_list_append(edges, DatumGetInt64(src), DatumGetInt64(dst), weight);
	}
}

/*
 * Runs the query through an SPI cursor, batch by batch, into edges: with own_snapshot, SPI takes
 * the cursor's snapshot after the plan has locked every relation the query reads (as a SELECT
 * does); otherwise the cursor reads through the active snapshot (graph_scan_resolve's).
 */
static void
fetch_rows(const char *sql, EdgeList *edges, const char *relname, bool own_snapshot)
{
	SPIPlanPtr	plan;
	Portal		portal;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	plan = SPI_prepare(sql, 0, NULL);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed for \"%s\": %s", sql, SPI_result_code_string(SPI_result));
	portal = SPI_cursor_open(NULL, plan, NULL, NULL, !own_snapshot);
	for (;;)
	{
		CHECK_FOR_INTERRUPTS();
		SPI_cursor_fetch(portal, true, GRAPH_SCAN_BATCH_ROWS);
		if (SPI_processed == 0)
			break;
		append_batch(SPI_tuptable, SPI_processed, edges, relname);
		SPI_freetuptable(SPI_tuptable);
		progress_set_rows_read((int64) (edges->count + edges->skipped));
	}
	SPI_cursor_close(portal);
	SPI_finish();
}

/* Emits the NOTICE that says how many rows were skipped for a NULL (nothing when none). */
void
graph_scan_report_skipped(int64 skipped, bool weighted)
{
	if (skipped == 0)
		return;
	ereport(NOTICE,
			(errmsg("skipped " INT64_FORMAT " edge rows with a NULL %s", skipped,
					weighted ? "src, dst or weight" : "src or dst")));
}

/*
 * In REPEATABLE READ and SERIALIZABLE: a serialization failure when the storage of the locked
 * relation relid was replaced (ALTER TABLE rewrite, TRUNCATE, VACUUM FULL, CLUSTER) by another
 * transaction that snapshot does not see: its pg_class row as snapshot sees it names another
 * relfilenode than the relation now has, and the new storage's rows are invisible to snapshot.
 */
static void
check_not_rewritten(Oid relid, const char *relname, Snapshot snapshot)
{
	Relation	rel = relation_open(relid, NoLock);	/* locked by resolve_relation */
	Oid			relfilenode = rel->rd_node.relNode;
	bool		has_storage = RELKIND_HAS_STORAGE(rel->rd_rel->relkind) && !RelationIsMapped(rel);
	Relation	pg_class;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;
	bool		rewritten = false;

	relation_close(rel, NoLock);
	if (!has_storage)
		return;
	pg_class = table_open(RelationRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_class_oid, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(relid));
	scan = systable_beginscan(pg_class, ClassOidIndexId, true, snapshot, 1, &key);
	tuple = systable_getnext(scan);
	/* no row: the table was created after the snapshot, whose rows it cannot see either */
	if (HeapTupleIsValid(tuple))
		rewritten = ((Form_pg_class) GETSTRUCT(tuple))->relfilenode != relfilenode;
	systable_endscan(scan);
	table_close(pg_class, AccessShareLock);
	if (rewritten)
	{
		/* this transaction's own rewrite is not a conflict */
		HeapTuple	current = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));

		if (HeapTupleIsValid(current))
		{
			if (TransactionIdIsCurrentTransactionId(HeapTupleHeaderGetXmin(current->t_data)))
				rewritten = false;
			ReleaseSysCache(current);
		}
	}
	if (rewritten)
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("could not serialize access: table \"%s\" was rewritten by a concurrent transaction",
						relname),
				 errhint("Retry the transaction.")));
}

/*
 * Takes the snapshot the read uses, once the relation is locked: in READ COMMITTED a fresh one,
 * pushed as the active snapshot (graph_scan_end pops it); otherwise the transaction's, after
 * checking that the relation was not rewritten behind it.
 */
static void
take_read_snapshot(EdgeScanTarget *target)
{
	if (IsolationUsesXactSnapshot())
	{
		check_not_rewritten(target->relid, target->relname, GetActiveSnapshot());
		return;
	}
	PushActiveSnapshot(GetTransactionSnapshot());
	target->snapshot_pushed = true;
}

/*
 * Resolves spec's relation and columns into target and checks, in order: the relation exists
 * (it stays locked AccessShare until the end of the transaction) and is readable as a table, its
 * columns exist, the caller may SELECT them, their types fit; then takes the read's snapshot (see
 * the file comment).  Nothing is read yet.  Every normal path must end with graph_scan_end.
 */
void
graph_scan_resolve(const EdgeTableSpec *spec, EdgeScanTarget *target)
{
	ScanColumn *columns = target->columns;
	int			i;

	memset(target, 0, sizeof(EdgeScanTarget));
	target->n_columns = spec->weight_column != NULL ? 3 : 2;
	target->relid = graph_scan_resolve_relation(spec->relation);
	target->relname = get_rel_name(target->relid);

	check_relation_kind(target->relid, target->relname);

	columns[0].name = spec->src_column;
	columns[0].argument = "src_column";
	columns[1].name = spec->dst_column;
	columns[1].argument = "dst_column";
	columns[2].name = spec->weight_column;
	columns[2].argument = "weight_column";
	for (i = 0; i < target->n_columns; i++)
		resolve_column(target->relid, target->relname, &columns[i]);

	check_select_privilege(target->relid, target->relname, columns, target->n_columns);

	check_endpoint_type(&columns[0], target->relname);
	check_endpoint_type(&columns[1], target->relname);
	if (target->n_columns == 3)
		check_weight_type(&columns[2], target->relname);

	take_read_snapshot(target);
}

/*
 * Ends the read of target: pops the snapshot graph_scan_resolve pushed.  (An ERROR leaves it to
 * the transaction's abort, which drops every pushed snapshot.)
 */
void
graph_scan_end(EdgeScanTarget *target)
{
	if (target->snapshot_pushed)
		PopActiveSnapshot();
	target->snapshot_pushed = false;
}

/*
 * True when the SPI reader of target lets SPI take its own snapshot after planning: a view, a
 * partitioned or foreign table, or a table whose policies apply to the caller, whose query may
 * lock relations other than target's (locked before the read's snapshot was taken).
 */
static bool
spi_takes_own_snapshot(const EdgeScanTarget *target)
{
	char		relkind = get_rel_relkind(target->relid);

	if (relkind != RELKIND_RELATION && relkind != RELKIND_MATVIEW)
		return true;
	return check_enable_rls(target->relid, InvalidOid, true) == RLS_ENABLED;
}

/*
 * True when the direct table scan (graph_heapscan.c) reads target, false for the SPI cursor:
 * powerrank.table_reader 'spi' always says SPI; otherwise the direct scan where it reads exactly
 * what the SELECT would, and for 'direct' (tests) an ERROR where it may not.
 */
static bool
use_direct_scan(const EdgeScanTarget *target)
{
	const char *refusal;

	if (powerrank_table_reader == TABLE_READER_SPI)
		return false;
	refusal = graph_heapscan_refusal(target);
	if (refusal == NULL)
		return true;
	if (powerrank_table_reader == TABLE_READER_DIRECT)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("table \"%s\" cannot be read with a direct table scan: %s",
						target->relname, refusal),
				 errhint("Set powerrank.table_reader to 'auto' to read it through SPI.")));
	return false;
}

/*
 * Reads the edge rows of a resolved target into edges (arrays in cxt): with a direct table scan
 * when it reads what the SELECT would, through the SPI cursor otherwise.
 */
void
graph_scan_fetch(const EdgeScanTarget *target, MemoryContext cxt, EdgeList *edges)
{
	edge_list_init(edges, cxt, target->n_columns == 3);
	graph_scan_fetch_into(target, edges);
}

/*
 * The most rows reading target can return, when a direct table scan reads it (from the table's
 * size: see graph_heapscan_max_rows); 0 when it is read through SPI (no bound known).
 */
Size
graph_scan_max_rows(const EdgeScanTarget *target)
{
	return use_direct_scan(target) ? graph_heapscan_max_rows(target) : 0;
}

/*
 * The rows the catalog expects target to hold: pg_class.reltuples, as VACUUM and ANALYZE last
 * set it (and, for a partitioned table, ANALYZE); -1 when unknown (never vacuumed or analyzed, a
 * view, a foreign table).  Read from the relation cache: the table itself is not touched.
 */
int64
graph_scan_estimated_rows(const EdgeScanTarget *target)
{
	Relation	rel = relation_open(target->relid, NoLock);	/* locked by graph_scan_resolve */
	float4		reltuples = rel->rd_rel->reltuples;

	relation_close(rel, NoLock);
	return reltuples >= 0 ? (int64) reltuples : -1;
}

/* graph_scan_fetch into a list the caller started (edge_list_init or edge_list_init_external). */
void
graph_scan_fetch_into(const EdgeScanTarget *target, EdgeList *edges)
{
	double		started = pr_clock_seconds();
	bool		direct = use_direct_scan(target);
	bool		parallel = false;
	ParallelReadInfo parallel_info = {0};

	if (direct)
	{
		parallel = graph_parallel_read_fetch(target, edges, &parallel_info);
		if (!parallel)
			graph_heapscan_fetch(target, edges);
	}
	else
		fetch_rows(build_scan_query(target->relid, target->columns, target->n_columns), edges,
				   target->relname, spi_takes_own_snapshot(target));
	if (parallel)
		elog(DEBUG1, "powerrank: read %zu edge rows of \"%s\" in %.1f ms (parallel table scan, %d of %d workers launched; scan %.1f ms, gather %.1f ms)",
			 edges->count, target->relname, (pr_clock_seconds() - started) * 1000.0,
			 parallel_info.launched, parallel_info.planned,
			 parallel_info.scan_seconds * 1000.0, parallel_info.gather_seconds * 1000.0);
	else
		elog(DEBUG1, "powerrank: read %zu edge rows of \"%s\" in %.1f ms (%s)", edges->count,
			 target->relname, (pr_clock_seconds() - started) * 1000.0,
			 direct ? (parallel_info.planned > 0 ? "direct table scan, no parallel worker launched" :
					   "direct table scan") : "SPI");
	graph_scan_report_skipped(edges->skipped, edges->weighted);
}

/* Reads the edges of spec's relation into edges (arrays in cxt): resolve, then fetch. */
void
graph_scan_table(const EdgeTableSpec *spec, MemoryContext cxt, EdgeList *edges)
{
	EdgeScanTarget target;

	graph_scan_resolve(spec, &target);
	graph_scan_fetch(&target, cxt, edges);
	graph_scan_end(&target);
}
