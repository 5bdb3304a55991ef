/*
 * cache_sql.c — the SQL face of the graph cache: the rows of the powerrank_cache view (cached
 * graphs and the tracking state of their tables), powerrank_cache_drop() and
 * powerrank_cache_status().
 */
#include "cache/graph_cache.h"
#include "channel.h"

#include "catalog/namespace.h"
#include "catalog/pg_authid.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rls.h"
#include "utils/varlena.h"
#include "utils/xid8.h"

PG_FUNCTION_INFO_V1(powerrank_cache_entries);
PG_FUNCTION_INFO_V1(powerrank_cache_drop);
PG_FUNCTION_INFO_V1(powerrank_cache_status);

static bool notice_given = false;

/* Once per session: a NOTICE saying that the cache needs shared_preload_libraries. */
void
graph_cache_notice_not_preloaded(void)
{
	if (notice_given)
		return;
	notice_given = true;
	ereport(NOTICE,
			(errmsg("the powerrank graph cache is off: powerrank is not in shared_preload_libraries"),
			 errdetail("Every call builds its graph afresh; rankings are unaffected."),
			 errhint("Add powerrank to shared_preload_libraries in postgresql.conf and restart the server to cache graphs (and to use the GPU service).")));
}

/* "src, dst" or "src, dst, weight": the edge columns of a key, by their current names. */
static char *
column_list(const GraphCacheKey *key)
{
	StringInfoData out;
	int			i;

	initStringInfo(&out);
	for (i = 0; i < 3 && key->attnums[i] != 0; i++)
	{
		char	   *name = get_attname(key->relid, key->attnums[i], true);

		if (i > 0)
			appendStringInfoString(&out, ", ");
		if (name != NULL)
			appendStringInfoString(&out, quote_identifier(name));
		else
			appendStringInfo(&out, "#%d", key->attnums[i]);
	}
	return out.data;
}

/*
 * Whether the current user may see a cache entry: it may SELECT the table, or every edge column of
 * the entry (the privileges a ranking needs to be served that graph), and row-level security does
 * not apply to it on the table (the entry counts rows it may not see; such a caller is never served
 * the cached graph either).  A table dropped since the snapshot was taken is not shown.
 */
static bool
may_read_entry(const GraphCacheKey *key)
{
	Oid			user = GetUserId();
	bool		is_missing = false;
	int			i;

	if (pg_class_aclcheck_ext(key->relid, user, ACL_SELECT, &is_missing) != ACLCHECK_OK)
	{
		if (is_missing)
			return false;
		for (i = 0; i < 3 && key->attnums[i] != 0; i++)
		{
			if (pg_attribute_aclcheck_ext(key->relid, key->attnums[i], user, ACL_SELECT,
										  &is_missing) != ACLCHECK_OK)
				return false;
		}
		if (i == 0)
			return false;
	}
	return check_enable_rls(key->relid, InvalidOid, true) != RLS_ENABLED;
}

/*
 * Whether the current user may see the tracking state of relid: it may SELECT the table or one of
 * its columns.  A table dropped since the trigger was read is not shown.
 */
static bool
may_read_tracking(Oid relid)
{
	bool		is_missing = false;

	if (pg_class_aclcheck_ext(relid, GetUserId(), ACL_SELECT, &is_missing) == ACLCHECK_OK)
		return true;
	return !is_missing &&
		pg_attribute_aclcheck_all(relid, GetUserId(), ACL_SELECT, ACLMASK_ANY) == ACLCHECK_OK;
}

/* True when one of the count entries caches a graph of relid. */
static bool
has_entry(const GraphCacheEntryInfo *entries, int count, Oid relid)
{
	int			i;

	for (i = 0; i < count; i++)
		if (entries[i].key.relid == relid)
			return true;
	return false;
}

/*
 * powerrank_cache_entries(): the rows of the powerrank_cache view: one per graph cached for the
 * current database, with its table's tracking state, one per merged node set of a distributed
 * table (tracking 'shards', no base or changes), and one per table of the database that was
 * tracked (it has a tracking trigger) but is not served now because of the state of that trigger
 * (tracking not 'on'; the graph columns NULL).  Members of pg_read_all_stats (and superusers)
 * see every row; other roles only the entries of tables they may read (may_read_entry) and the
 * tracking state of tables they may SELECT a column of, so that the names and sizes of other
 * tables stay hidden, whether the function is called through the view or directly.
 */
Datum
powerrank_cache_entries(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	GraphCacheEntryInfo *entries;
	bool		read_all;
	Oid			schema;
	Oid			function;
	List	   *tracked;
	ListCell   *cell;
	int			count;
	int			i;

	InitMaterializedSRF(fcinfo, 0);
	if (!graph_cache_available())
	{
		graph_cache_notice_not_preloaded();
		return (Datum) 0;
	}
	read_all = has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);
	schema = cache_extension_schema();
	function = OidIsValid(schema) ? cache_tracking_function(schema) : InvalidOid;
	count = graph_cache_snapshot(MyDatabaseId, &entries);
	for (i = 0; i < count; i++)
	{
		Datum		values[15];
		bool		nulls[15] = {0};
		bool		node_set = entries[i].key.kind == GRAPH_CACHE_NODE_SET;
		uint64		base = 0;
		int			j;

		if (!read_all && !may_read_entry(&entries[i].key))
			continue;

		values[0] = ObjectIdGetDatum(entries[i].key.relid);
		/* a node set: what it was merged from is checked with the shards at every call */
		values[1] = CStringGetTextDatum(node_set ? "shards" :
										cache_tracking_state_name(
											cache_tracking_state(entries[i].key.relid, function,
																 NULL)));
		values[2] = CStringGetTextDatum(column_list(&entries[i].key));
		values[3] = BoolGetDatum(entries[i].key.directed);
		values[4] = Int64GetDatum(entries[i].nodes);
		values[5] = Int64GetDatum(entries[i].edges);
		values[6] = Int64GetDatum(entries[i].bytes);
		values[7] = TimestampTzGetDatum(entries[i].built_at);
		values[8] = TimestampTzGetDatum(entries[i].last_used);
		values[9] = Int64GetDatum(entries[i].hits);
		/* base: the newest rebase row the entry's snapshot saw; changes: the rows on top */
		for (j = 0; j < GRAPH_CACHE_MAX_REBASES; j++)
			base = Max(base, entries[i].key.rebases[j]);
		values[10] = FullTransactionIdGetDatum(FullTransactionIdFromU64(base));
		values[11] = Int64GetDatum(entries[i].key.changes);
		nulls[10] = nulls[11] = node_set;
		values[12] = Int32GetDatum(entries[i].refcount);
		/* gpu: the GPU service's device when the graph is resident there */
		if (service_graph_resident(entries[i].id))
			values[13] = CStringGetTextDatum(service->device_name);
		else
			nulls[13] = true;
		/* delta_rows: changed rows patched into the graph since it was last built from rows */
		values[14] = Int64GetDatum(entries[i].delta_rows);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}

	/* tracked tables without a cached graph whose trigger keeps them from being served */
	tracked = OidIsValid(function) ? cache_tables_with_tracking_trigger(function) : NIL;
	foreach(cell, tracked)
	{
		Oid			relid = lfirst_oid(cell);
		TrackingState state;
		Datum		values[15] = {0};
		bool		nulls[15];

		if (has_entry(entries, count, relid) || (!read_all && !may_read_tracking(relid)))
			continue;
		state = cache_tracking_state(relid, function, NULL);
		if (state == TRACKING_ON)
			continue;
		memset(nulls, true, sizeof(nulls));
		values[0] = ObjectIdGetDatum(relid);
		nulls[0] = false;
		values[1] = CStringGetTextDatum(cache_tracking_state_name(state));
		nulls[1] = false;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * powerrank_cache_drop(edges text DEFAULT NULL): evicts the cached graphs of one table, or of
 * every table of the current database; returns how many.  Graphs in use go when their readers
 * finish.
 */
Datum
powerrank_cache_drop(PG_FUNCTION_ARGS)
{
	Oid			relid = InvalidOid;

	if (!graph_cache_available())
	{
		graph_cache_notice_not_preloaded();
		PG_RETURN_INT32(0);
	}
	if (!PG_ARGISNULL(0))
	{
		RangeVar   *range_var = makeRangeVarFromNameList(textToQualifiedNameList(PG_GETARG_TEXT_PP(0)));

		relid = RangeVarGetRelid(range_var, NoLock, false);
	}
	PG_RETURN_INT32(graph_cache_drop(MyDatabaseId, relid));
}

/*
 * powerrank_cache_status(): counters of the whole cache (all databases): slots, entries, entries
 * evicted but still in use, segments pinned, their bytes, and this session's size limit.
 */
Datum
powerrank_cache_status(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	GraphCacheStatus status;
	Datum		values[7];
	bool		nulls[7] = {0};

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "powerrank_cache_status must return a record");
	if (!graph_cache_available())
		graph_cache_notice_not_preloaded();
	graph_cache_status(&status);
	values[0] = BoolGetDatum(graph_cache_available());
	values[1] = Int32GetDatum(status.slots);
	values[2] = Int32GetDatum(status.entries);
	values[3] = Int32GetDatum(status.retired);
	values[4] = Int32GetDatum(status.segments);
	values[5] = Int64GetDatum(status.bytes);
	values[6] = Int64GetDatum((int64) powerrank_cache_size_mb * 1024 * 1024);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls)));
}
