/*
 * cache_tracking.c — which tables the graph cache may serve, and the key of a table's content as
 * the caller's snapshot sees it.
 *
 * A table is tracked once its owner ran powerrank_cache_enable(table): that installs the
 * statement-level trigger powerrank_track (AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE, enabled
 * ALWAYS so that session_replication_role = replica does not skip it) and inserts the table's row
 * in powerrank_source_generation.  Every modifying statement then sets that row's generation to
 * nextval(powerrank_generation_seq) inside the modifying transaction.  Sequence values are never
 * reused, and writers of one table queue on that row until they commit, so the row version a
 * snapshot sees names exactly one set of committed modifications: two snapshots that read the
 * same (relid, generation) see the same rows.  Uncommitted and rolled-back changes of other
 * sessions are invisible through MVCC; the caller's own uncommitted changes are recognised (the
 * row's xmin is the current transaction) and bypass the cache.
 *
 * The key adds what DDL can change without a data modification: the relfilenode (TRUNCATE,
 * VACUUM FULL, CLUSTER, ALTER TABLE rewrites), the columns' attnums and types (ALTER ... TYPE,
 * DROP and re-ADD), the relation oid (DROP and re-CREATE).  The event trigger powerrank_ddl bumps
 * the generation of a tracked table on every ALTER TABLE (so writes made while the trigger was
 * disabled are never served from an older entry), and powerrank_drop forgets dropped tables and
 * evicts their graphs.
 *
 * A call is served from (and stored into) the cache only when all of these hold: the library is
 * preloaded and powerrank.cache_size > 0; the relation is a plain, non-temporary table outside
 * partitioning and inheritance; its powerrank_track trigger is present, unconditional and enabled ALWAYS;
 * row-level security does not apply to the caller; the generation row is visible and was not
 * written by the caller's own transaction.  Anything else builds per call, as without the cache.
 */
#include "graph_cache.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_trigger.h"
#include "catalog/pg_type.h"
#include "commands/event_trigger.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "parser/parse_func.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/syscache.h"
#include "utils/varlena.h"

PG_FUNCTION_INFO_V1(powerrank_track_changes);
PG_FUNCTION_INFO_V1(powerrank_ddl_command_end);
PG_FUNCTION_INFO_V1(powerrank_sql_drop);
PG_FUNCTION_INFO_V1(powerrank_cache_enable);

#define TRACK_TRIGGER_NAME "powerrank_track"
#define TRACK_FUNCTION_NAME "powerrank_track_changes"
#define GENERATION_TABLE "powerrank_source_generation"
#define GENERATION_SEQUENCE "powerrank_generation_seq"

/* The events the tracking trigger must fire on: AFTER, FOR EACH STATEMENT, all four. */
#define TRACK_TRIGGER_TYPE \
	(TRIGGER_TYPE_INSERT | TRIGGER_TYPE_UPDATE | TRIGGER_TYPE_DELETE | TRIGGER_TYPE_TRUNCATE)

/* The schema powerrank is installed in (in this database), or InvalidOid when it is not. */
static Oid
extension_schema(void)
{
	Relation	catalog;
	SysScanDesc scan;
	ScanKeyData key;
	HeapTuple	tuple;
	Oid			schema = InvalidOid;

	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber, F_NAMEEQ,
				CStringGetDatum("powerrank"));
	catalog = table_open(ExtensionRelationId, AccessShareLock);
	scan = systable_beginscan(catalog, ExtensionNameIndexId, true, NULL, 1, &key);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
		schema = ((Form_pg_extension) GETSTRUCT(tuple))->extnamespace;
	systable_endscan(scan);
	table_close(catalog, AccessShareLock);
	return schema;
}

/* schema.name, quoted, for SQL text. */
static char *
qualified_name(Oid schema, const char *name)
{
	return quote_qualified_identifier(get_namespace_name(schema), name);
}

/* Oid of powerrank_track_changes() in the extension's schema (InvalidOid if absent). */
static Oid
tracking_function(Oid schema)
{
	List	   *name = list_make2(makeString(get_namespace_name(schema)),
								  makeString(TRACK_FUNCTION_NAME));

	return LookupFuncName(name, 0, NULL, true);
}

/*
 * True when statement triggers on rel see every change of what a scan of rel reads: a plain,
 * non-temporary table that is neither a partition nor an inheritance parent or child (statements
 * on a parent change the rows of its children and partitions without firing their statement
 * triggers, and a scan of a parent reads its children).
 */
static bool
trackable(Relation rel)
{
	return rel->rd_rel->relkind == RELKIND_RELATION &&
		rel->rd_rel->relpersistence != RELPERSISTENCE_TEMP &&
		!rel->rd_rel->relispartition &&
		!rel->rd_rel->relhassubclass &&
		!has_superclass(RelationGetRelid(rel));
}

/* True when rel has the tracking trigger: our function, all four events, unconditional, ALWAYS. */
static bool
has_tracking_trigger(Relation rel, Oid function)
{
	TriggerDesc *triggers = rel->trigdesc;
	int			i;

	if (triggers == NULL || !OidIsValid(function))
		return false;
	for (i = 0; i < triggers->numtriggers; i++)
	{
		Trigger    *trigger = &triggers->triggers[i];

		if (trigger->tgfoid == function && trigger->tgtype == TRACK_TRIGGER_TYPE &&
			trigger->tgenabled == TRIGGER_FIRES_ALWAYS && trigger->tgnattr == 0 &&
			trigger->tgqual == NULL)
			return true;
	}
	return false;
}

/* True when rel has a trigger named powerrank_track (whatever it does). */
static bool
trigger_name_taken(Relation rel)
{
	TriggerDesc *triggers = rel->trigdesc;
	int			i;

	for (i = 0; triggers != NULL && i < triggers->numtriggers; i++)
		if (strcmp(triggers->triggers[i].tgname, TRACK_TRIGGER_NAME) == 0)
			return true;
	return false;
}

/*
 * Reads the table's generation through the active snapshot (the one the edge scan uses).  False
 * when there is no visible row, or when the caller's own transaction wrote it (its uncommitted
 * changes must not be cached nor served from an entry of the committed content).
 */
static bool
read_generation(Oid schema, Oid relid, int64 *generation)
{
	char	   *sql = psprintf("SELECT generation, xmin FROM %s WHERE relid = $1",
							   qualified_name(schema, GENERATION_TABLE));
	Oid			types[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};
	bool		found = false;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args(sql, 1, types, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the generation of relation %u", relid);
	if (SPI_processed == 1)
	{
		bool		generation_null;
		bool		xmin_null;
		Datum		value = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1,
										  &generation_null);
		Datum		xmin = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2,
										 &xmin_null);

		if (!generation_null && !xmin_null &&
			!TransactionIdIsCurrentTransactionId(DatumGetTransactionId(xmin)))
		{
			*generation = DatumGetInt64(value);
			found = true;
		}
	}
	SPI_finish();
	return found;
}

/*
 * Decides whether this call may use the cache (see the file comment) and, if so, fills key with
 * the identity of the content the caller's snapshot sees.  Call after the privilege checks.
 */
bool
graph_cache_probe(const EdgeScanTarget *target, bool directed, GraphCacheKey *key)
{
	Relation	rel;
	Oid			schema;
	Oid			relfilenode;
	bool		suitable;
	int64		generation;
	int			i;

	if (!graph_cache_available() || powerrank_cache_size_mb <= 0)
		return false;
	schema = extension_schema();
	if (!OidIsValid(schema))
		return false;

	rel = relation_open(target->relid, NoLock);	/* locked by graph_scan_resolve */
	suitable = trackable(rel) && has_tracking_trigger(rel, tracking_function(schema));
	relfilenode = rel->rd_node.relNode;
	relation_close(rel, NoLock);
	if (!suitable)
		return false;
	if (check_enable_rls(target->relid, InvalidOid, true) == RLS_ENABLED)
		return false;
	if (!read_generation(schema, target->relid, &generation))
		return false;

	memset(key, 0, sizeof(GraphCacheKey));
	key->database = MyDatabaseId;
	key->relid = target->relid;
	key->relfilenode = relfilenode;
	for (i = 0; i < target->n_columns; i++)
	{
		key->attnums[i] = target->columns[i].attnum;
		key->types[i] = target->columns[i].type;
	}
	key->directed = directed;
	key->generation = generation;
	return true;
}

/* Owner of the generation table (the role that created the extension). */
static Oid
generation_table_owner(Oid schema)
{
	Oid			table = get_relname_relid(GENERATION_TABLE, schema);
	HeapTuple	tuple;
	Oid			owner;

	if (!OidIsValid(table))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("table %s is missing", GENERATION_TABLE),
				 errhint("Reinstall the extension: DROP EXTENSION powerrank CASCADE; CREATE EXTENSION powerrank;")));
	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(table));
	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for relation %u", table);
	owner = ((Form_pg_class) GETSTRUCT(tuple))->relowner;
	ReleaseSysCache(tuple);
	return owner;
}

/*
 * Runs one statement on the generation table as its owner (the modifying role needs no right on
 * it), with a restricted security context.  Returns SPI's tuple table for RETURNING statements,
 * copied into the caller's memory context, or NULL.
 */
static SPITupleTable *
run_as_generation_owner(Oid schema, const char *sql, int nargs, Oid *types, Datum *values)
{
	Oid			owner = generation_table_owner(schema);
	Oid			saved_user;
	int			saved_context;
	int			ret;
	SPITupleTable *result = NULL;
	MemoryContext caller_cxt = CurrentMemoryContext;

	GetUserIdAndSecContext(&saved_user, &saved_context);
	SetUserIdAndSecContext(owner, saved_context | SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	ret = SPI_execute_with_args(sql, nargs, types, values, NULL, false, 0);
	if (ret < 0)
		elog(ERROR, "could not update %s: %s", GENERATION_TABLE, SPI_result_code_string(ret));
	if (SPI_tuptable != NULL && SPI_processed > 0)
	{
		MemoryContext spi_cxt = MemoryContextSwitchTo(caller_cxt);

		result = palloc0(sizeof(SPITupleTable));
		result->numvals = SPI_processed;
		result->vals = palloc(sizeof(HeapTuple) * SPI_processed);
		for (uint64 i = 0; i < SPI_processed; i++)
			result->vals[i] = heap_copytuple(SPI_tuptable->vals[i]);
		result->tupdesc = CreateTupleDescCopy(SPI_tuptable->tupdesc);
		MemoryContextSwitchTo(spi_cxt);
	}
	SPI_finish();
	SetUserIdAndSecContext(saved_user, saved_context);
	return result;
}

/* Gives relid a new generation (inserting its row when missing), in the current transaction. */
static void
generation_bump(Oid schema, Oid relid)
{
	char	   *sql = psprintf("INSERT INTO %s AS g (relid, generation) "
							   "VALUES ($1, pg_catalog.nextval(%s::pg_catalog.regclass)) "
							   "ON CONFLICT (relid) DO UPDATE SET generation = EXCLUDED.generation",
							   qualified_name(schema, GENERATION_TABLE),
							   quote_literal_cstr(qualified_name(schema, GENERATION_SEQUENCE)));
	Oid			types[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};

	run_as_generation_owner(schema, sql, 1, types, values);
}

/*
 * powerrank_track_changes(): the AFTER ... FOR EACH STATEMENT trigger of a tracked table; gives
 * the table a new generation in the modifying transaction.
 */
Datum
powerrank_track_changes(PG_FUNCTION_ARGS)
{
	TriggerData *trigger_data = (TriggerData *) fcinfo->context;
	Oid			schema;

	if (!CALLED_AS_TRIGGER(fcinfo) ||
		!TRIGGER_FIRED_AFTER(trigger_data->tg_event) ||
		!TRIGGER_FIRED_FOR_STATEMENT(trigger_data->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("powerrank_track_changes() must be an AFTER ... FOR EACH STATEMENT trigger"),
				 errhint("Install it with SELECT powerrank_cache_enable('table');")));
	schema = get_func_namespace(fcinfo->flinfo->fn_oid);
	generation_bump(schema, RelationGetRelid(trigger_data->tg_relation));
	return PointerGetDatum(NULL);
}

/*
 * powerrank_ddl_command_end(): event trigger on ALTER TABLE; bumps the generation of every
 * tracked table the command altered (column types, triggers enabled or disabled, ...).
 */
Datum
powerrank_ddl_command_end(PG_FUNCTION_ARGS)
{
	Oid			schema;

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		elog(ERROR, "powerrank_ddl_command_end() must be called as an event trigger");
	schema = extension_schema();
	if (!OidIsValid(schema) || !OidIsValid(get_relname_relid(GENERATION_TABLE, schema)))
		PG_RETURN_VOID();
	run_as_generation_owner(schema,
							psprintf("UPDATE %s SET generation = pg_catalog.nextval(%s::pg_catalog.regclass) "
									 "WHERE relid IN (SELECT objid FROM pg_catalog.pg_event_trigger_ddl_commands() "
									 "WHERE classid = 'pg_catalog.pg_class'::pg_catalog.regclass)",
									 qualified_name(schema, GENERATION_TABLE),
									 quote_literal_cstr(qualified_name(schema, GENERATION_SEQUENCE))),
							0, NULL, NULL);
	PG_RETURN_VOID();
}

/*
 * powerrank_sql_drop(): event trigger on sql_drop; forgets the generation of dropped tables and
 * evicts their cached graphs (were the DROP rolled back, the next call just rebuilds).
 */
Datum
powerrank_sql_drop(PG_FUNCTION_ARGS)
{
	Oid			schema;
	SPITupleTable *dropped;

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		elog(ERROR, "powerrank_sql_drop() must be called as an event trigger");
	schema = extension_schema();
	if (!OidIsValid(schema) || !OidIsValid(get_relname_relid(GENERATION_TABLE, schema)))
		PG_RETURN_VOID();
	dropped = run_as_generation_owner(schema,
									  psprintf("DELETE FROM %s WHERE relid IN (SELECT objid FROM pg_catalog.pg_event_trigger_dropped_objects() "
											   "WHERE classid = 'pg_catalog.pg_class'::pg_catalog.regclass AND objsubid = 0) "
											   "RETURNING relid",
											   qualified_name(schema, GENERATION_TABLE)),
									  0, NULL, NULL);
	if (dropped != NULL)
	{
		for (uint64 i = 0; i < dropped->numvals; i++)
		{
			bool		isnull;
			Datum		relid = heap_getattr(dropped->vals[i], 1, dropped->tupdesc, &isnull);

			if (!isnull)
				graph_cache_drop(MyDatabaseId, DatumGetObjectId(relid));
		}
	}
	PG_RETURN_VOID();
}

/*
 * powerrank_cache_enable(edges text): makes a table cacheable.  Needs the table's owner.
 * Installs the tracking trigger (unless present) and gives the table its first generation, in the
 * caller's transaction; returns true when the trigger was installed now.
 */
Datum
powerrank_cache_enable(PG_FUNCTION_ARGS)
{
	RangeVar   *range_var;
	Oid			relid;
	Oid			schema = get_func_namespace(fcinfo->flinfo->fn_oid);
	Relation	rel;
	bool		tracked;
	bool		name_taken;
	bool		suitable;
	char	   *qualified;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("edges must not be NULL"),
				 errhint("Pass the name of the edge table.")));
	range_var = makeRangeVarFromNameList(textToQualifiedNameList(PG_GETARG_TEXT_PP(0)));
	/* the lock CREATE TRIGGER takes: no write can slip in between the check and the install */
	relid = RangeVarGetRelid(range_var, ShareRowExclusiveLock, false);
	rel = relation_open(relid, NoLock);
	suitable = trackable(rel);
	tracked = has_tracking_trigger(rel, tracking_function(schema));
	name_taken = trigger_name_taken(rel);
	qualified = quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
										   RelationGetRelationName(rel));
	relation_close(rel, NoLock);

	if (!suitable)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("cannot cache the graph of \"%s\"", get_rel_name(relid)),
				 errdetail("Only plain, non-temporary tables outside partitioning and inheritance can be tracked; views, materialized views, foreign, partitioned and temporary tables, partitions and inheritance parents and children are ranked without the cache."),
				 errhint("Rank it as it is: every call then reads it afresh.")));
	if (!pg_class_ownercheck(relid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_TABLE, get_rel_name(relid));

	if (!tracked)
	{
		char	   *statements[3];
		int			i;

		/* a disabled or altered powerrank_track is replaced */
		statements[0] = name_taken ?
			psprintf("DROP TRIGGER %s ON %s", TRACK_TRIGGER_NAME, qualified) : "SELECT";
		statements[1] = psprintf("CREATE TRIGGER %s AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON %s "
								 "FOR EACH STATEMENT EXECUTE FUNCTION %s()",
								 TRACK_TRIGGER_NAME, qualified,
								 qualified_name(schema, TRACK_FUNCTION_NAME));
		statements[2] = psprintf("ALTER TABLE %s ENABLE ALWAYS TRIGGER %s", qualified,
								 TRACK_TRIGGER_NAME);
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		for (i = 0; i < 3; i++)
			if (SPI_execute(statements[i], false, 0) < 0)
				elog(ERROR, "could not install change tracking: %s", statements[i]);
		SPI_finish();
	}
	generation_bump(schema, relid);
	if (!graph_cache_available())
		graph_cache_notice_not_preloaded();
	PG_RETURN_BOOL(!tracked);
}
