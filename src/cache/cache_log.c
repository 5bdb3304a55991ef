/*
 * cache_log.c — the change log's place and its owner: the schema powerrank is installed in, the
 * log's name for SQL text, and acting as the log's owner with the search_path pinned.  Tracking
 * (cache_tracking.c) and compaction (cache_compact.c) write and read the log this way.
 */
#include "cache/graph_cache.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/pg_class.h"
#include "catalog/pg_extension.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

/* The schema powerrank is installed in (in this database), or InvalidOid when it is not. */
Oid
cache_extension_schema(void)
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
char *
cache_qualified_name(Oid schema, const char *name)
{
	return quote_qualified_identifier(get_namespace_name(schema), name);
}

/* The change log's qualified, quoted name. */
char *
cache_log_name(Oid schema)
{
	return cache_qualified_name(schema, CHANGE_LOG_TABLE);
}

/* Oid of the change log in schema; an ERROR when it is missing. */
Oid
cache_log_relid(Oid schema)
{
	Oid			table = get_relname_relid(CHANGE_LOG_TABLE, schema);

	if (!OidIsValid(table))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("table %s is missing", CHANGE_LOG_TABLE),
				 errhint("Reinstall the extension: DROP EXTENSION powerrank CASCADE; CREATE EXTENSION powerrank;")));
	return table;
}

/* Owner of the change log (the role that created the extension). */
static Oid
cache_log_owner(Oid schema)
{
	Oid			table = cache_log_relid(schema);
	HeapTuple	tuple;
	Oid			owner;

	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(table));
	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for relation %u", table);
	owner = ((Form_pg_class) GETSTRUCT(tuple))->relowner;
	ReleaseSysCache(tuple);
	return owner;
}

/*
 * Sets search_path to pg_catalog, pg_temp until AtEOXact_GUC(true, the returned level): the
 * statements the extension runs itself then name only the catalog's operators and functions,
 * never ones a schema of the caller's search_path could put in their place.
 */
int
cache_pin_search_path(void)
{
	int			level = NewGUCNestLevel();

	(void) set_config_option("search_path", "pg_catalog, pg_temp", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	return level;
}

/*
 * Makes the change log's owner the current user, in a restricted security context (the role that
 * modifies, reads or compacts needs no right on the log), with the search_path pinned (the
 * statements run with the owner's rights).  cache_restore_user undoes both.
 */
void
cache_become_log_owner(Oid schema, CacheSavedUser *saved)
{
	GetUserIdAndSecContext(&saved->user, &saved->context);
	SetUserIdAndSecContext(cache_log_owner(schema), saved->context | SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	saved->guc_nest_level = cache_pin_search_path();
}

/* Gives back the user, security context and search_path cache_become_log_owner saved. */
void
cache_restore_user(const CacheSavedUser *saved)
{
	AtEOXact_GUC(true, saved->guc_nest_level);
	SetUserIdAndSecContext(saved->user, saved->context);
}

/* Attribute number of the change log's column name if it has type type, else InvalidAttrNumber. */
AttrNumber
cache_log_column(Oid log_relid, const char *name, Oid type)
{
	AttrNumber	attnum = get_attnum(log_relid, name);

	if (attnum == InvalidAttrNumber || get_atttype(log_relid, attnum) != type)
		return InvalidAttrNumber;
	return attnum;
}

/*
 * Finds the columns in which a compaction records its snapshot (snapshot_xmax, snapshot_xip: from
 * version 0.2 on); false, both InvalidAttrNumber, when the log lacks either.
 */
bool
cache_log_snapshot_columns(Oid log_relid, AttrNumber *xmax, AttrNumber *xip)
{
	*xmax = cache_log_column(log_relid, "snapshot_xmax", XID8OID);
	*xip = cache_log_column(log_relid, "snapshot_xip", XID8ARRAYOID);
	if (*xmax != InvalidAttrNumber && *xip != InvalidAttrNumber)
		return true;
	*xmax = *xip = InvalidAttrNumber;
	return false;
}

/* True when a compaction can record its snapshot in the change log (see the file comment). */
bool
cache_log_records_snapshots(Oid log_relid)
{
	AttrNumber	xmax;
	AttrNumber	xip;

	return cache_log_snapshot_columns(log_relid, &xmax, &xip);
}
