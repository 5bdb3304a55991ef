/*
 * cache_tracking.c — which tables the graph cache may serve, and the key of a table's content as
 * the caller's snapshot sees it.
 *
 * A table is tracked once its owner ran powerrank_cache_enable(table): that installs the
 * statement-level trigger powerrank_track (AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE, enabled
 * ALWAYS so that session_replication_role = replica does not skip it) and adds a rebase row for
 * the table to the change log powerrank_change_log(relid, change, rebase).  Every transaction
 * that modifies the table then inserts one row (relid, its own full transaction id) — an insert
 * of a key no other transaction can write, so writers never wait on each other and never fail to
 * serialize.  Every ALTER TABLE of a tracked table or one that attaches or detaches it as a
 * partition (the event trigger powerrank_ddl; a table with the tracking trigger enabled ALWAYS but
 * no row in the log, as a restored dump leaves it, counts as tracked: its ENABLE ALWAYS TRIGGER
 * gives it its first rebase row) and every compaction (cache_compact.c: deletes a table's rows and
 * inserts one rebase row in their place, which records the compaction's snapshot) adds a rebase
 * row; nothing else deletes rows of a table that exists.
 *
 * Why the rows a snapshot sees name its content: a snapshot sees exactly the transactions that
 * committed before it was taken, a prefix of the commit order.  Take two snapshots that see the
 * same rebase rows and the same number of other rows.  A transaction that commits between them
 * and adds or deletes rebase rows would leave a rebase row that one of them sees and the other
 * not; so between them only writers commit, each adding exactly one row nobody deletes — and the
 * counts say there are none.  Writes that no row records (made while the trigger was missing,
 * disabled or not ALWAYS) all committed before the ALTER TABLE or powerrank_cache_enable that made
 * it fire again, whose lock waits for them; a reader is served only when its snapshot sees every
 * rebase row the newest snapshot sees, so it sees those writes, as does every snapshot it shares a
 * key with.  Change ids are full transaction ids, never reused in the life of the cluster: a key
 * can never match a graph cached before DROP EXTENSION and CREATE EXTENSION, whose rows were
 * written by other transactions.  The caller's own uncommitted changes are recognised (a row of
 * its own transaction) and bypass the cache.
 *
 * Reading the rows a snapshot sees never visits the rows compactions deleted, however many a
 * burst of writers left and however long a transaction keeps them from vacuum.  A compaction's
 * rebase row records the snapshot it deleted the table's rows through: its xmax
 * (snapshot_xmax) and the transactions in progress at it (snapshot_xip, those below xmax).  Take
 * a snapshot that sees that row, and one of its rows with a change below snapshot_xmax, not in
 * snapshot_xip and other than the compaction's own.  Its transaction had finished when the
 * compaction's snapshot was taken (an id below xmax and not in progress); committed, as the
 * reader sees its row; so the compaction saw the row and deleted it, and the reader, which sees
 * the compaction, cannot see it.  Hence the rows a snapshot sees are exactly: those from the
 * newest down to the newest compaction rebase row it sees (a backward scan of the primary key),
 * those from that compaction's xmax up, and those of its in-progress transactions (one index
 * probe each).  Any compaction's rebase row it sees would do; the newest keeps the reads
 * shortest.  Rows of
 * transactions that got their id after the compaction's snapshot lie at or above its xmax, a
 * writer in progress at it is in its list, and a compaction run in a transaction that had its id
 * before its snapshot has its rebase row below its xmax: all are read.  A log without the two
 * columns (version 0.1) is read whole.
 *
 * The key adds what DDL can change without a data modification: the relfilenode (TRUNCATE,
 * VACUUM FULL, CLUSTER, ALTER TABLE rewrites), the columns' attnums and types (ALTER ... TYPE,
 * DROP and re-ADD), the relation oid (DROP and re-CREATE).  powerrank_drop evicts the graphs of
 * dropped tables (their log rows go at the next compaction), and DROP EXTENSION or DROP DATABASE
 * evicts every graph of the database (object access hook).  The object access hook also evicts a
 * partitioned table's merged node sets (graph_cache_node_set_key) when the table, or a partition
 * of it, is truncated, altered or dropped, or a partition is attached or detached.
 *
 * A call is served from (and stored into) the cache only when all of these hold: the library is
 * preloaded and powerrank.cache_size > 0; the relation is a plain, non-temporary user table outside
 * partitioning, inheritance and logical replication subscriptions; its powerrank_track trigger is
 * present, unconditional and enabled ALWAYS; row-level security does not apply to the caller; the
 * snapshot sees a rebase row of the table, the same rebase rows as the newest snapshot, at most
 * GRAPH_CACHE_MAX_REBASES of them, and no row of the caller's own transaction.  Anything else
 * builds per call, as without the cache.  A table tracked once whose trigger is there but no
 * longer in that state (ENABLE TRIGGER ALL after DISABLE TRIGGER ALL, as a data-only restore with
 * --disable-triggers runs them, leaves it enabled for origin sessions only) says so: its first
 * ranking in a session gives a NOTICE with the command that fixes it, and powerrank_cache shows
 * its TrackingState.
 */
#include "cache/graph_cache.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/transam.h"
#include "access/xact.h"
#include "catalog/catalog.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/objectaccess.h"
#include "catalog/partition.h"
#include "catalog/pg_class.h"
#include "catalog/pg_database.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_index.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_subscription_rel.h"
#include "catalog/pg_trigger.h"
#include "catalog/pg_type.h"
#include "commands/event_trigger.h"
#include "commands/extension.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "parser/parse_func.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/varlena.h"
#include "utils/xid8.h"

PG_FUNCTION_INFO_V1(powerrank_track_changes);
PG_FUNCTION_INFO_V1(powerrank_ddl_command_end);
PG_FUNCTION_INFO_V1(powerrank_sql_drop);
PG_FUNCTION_INFO_V1(powerrank_cache_enable);

#define TRACK_TRIGGER_NAME "powerrank_track"
#define TRACK_FUNCTION_NAME "powerrank_track_changes"

/* The events the tracking trigger must fire on: AFTER, FOR EACH STATEMENT, all four. */
#define TRACK_TRIGGER_TYPE \
	(TRIGGER_TYPE_INSERT | TRIGGER_TYPE_UPDATE | TRIGGER_TYPE_DELETE | TRIGGER_TYPE_TRUNCATE)

/* Log rows of one table that a reader sees past which it asks for a compaction. */
#define COMPACT_AT_READ_ROWS 4096

/* Tables whose change this transaction has logged (the trigger's shortcut; 0 relid: empty). */
#define LOGGED_SLOTS 16
typedef struct LoggedChange
{
	Oid			relid;
	SubTransactionId subxact;	/* the subtransaction that inserted the row */
} LoggedChange;

static LoggedChange logged[LOGGED_SLOTS];
static int	n_logged = 0;
static bool logged_callbacks_registered = false;

/* The saved plan of the trigger's insert, and the schema it names. */
static SPIPlanPtr insert_plan = NULL;
static Oid	plans_schema = InvalidOid;

static object_access_hook_type prev_object_access_hook = NULL;

/* Oid of powerrank_track_changes() in the extension's schema (InvalidOid if absent). */
Oid
cache_tracking_function(Oid schema)
{
	List	   *name = list_make2(makeString(get_namespace_name(schema)),
								  makeString(TRACK_FUNCTION_NAME));

	return LookupFuncName(name, 0, NULL, true);
}

/*
 * True when a subscription of this database replicates into relid: logical replication applies
 * its rows without firing statement triggers (TRUNCATE excepted).
 */
static bool
subscribed_table(Oid relid)
{
	Relation	catalog = table_open(SubscriptionRelRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	bool		found;

	ScanKeyInit(&key, Anum_pg_subscription_rel_srrelid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(relid));
	scan = systable_beginscan(catalog, SubscriptionRelSrrelidSrsubidIndexId, true, NULL, 1, &key);
	found = HeapTupleIsValid(systable_getnext(scan));
	systable_endscan(scan);
	table_close(catalog, AccessShareLock);
	return found;
}

/*
 * True when statement triggers on rel see every change of what a scan of rel reads: a plain,
 * non-temporary user table (no system catalog: the server writes those without firing triggers)
 * that no subscription replicates into and that is neither a partition nor an inheritance parent
 * or child (statements on a parent change the rows of its children and partitions without firing
 * their statement triggers, and a scan of a parent reads its children).
 */
static bool
trackable(Relation rel)
{
	return rel->rd_rel->relkind == RELKIND_RELATION &&
		!IsSystemRelation(rel) &&
		rel->rd_rel->relpersistence != RELPERSISTENCE_TEMP &&
		!rel->rd_rel->relispartition &&
		!rel->rd_rel->relhassubclass &&
		!has_superclass(RelationGetRelid(rel)) &&
		!subscribed_table(RelationGetRelid(rel));
}

/*
 * How one trigger of a table counts for its tracking: TRACKING_ON when it is the tracking trigger
 * (function, all four events, AFTER ... FOR EACH STATEMENT, no columns, no WHEN) enabled ALWAYS,
 * TRACKING_NOT_ALWAYS or TRACKING_DISABLED when it is that trigger enabled otherwise,
 * TRACKING_ALTERED when it calls function or is named powerrank_track but is not that trigger,
 * TRACKING_MISSING when it is some other trigger.
 */
static TrackingState
trigger_tracking_state(HeapTuple tuple, Oid function)
{
	Form_pg_trigger trigger = (Form_pg_trigger) GETSTRUCT(tuple);

	if (OidIsValid(function) && trigger->tgfoid == function &&
		trigger->tgtype == TRACK_TRIGGER_TYPE && trigger->tgattr.dim1 == 0 &&
		heap_attisnull(tuple, Anum_pg_trigger_tgqual, NULL))
	{
		if (trigger->tgenabled == TRIGGER_FIRES_ALWAYS)
			return TRACKING_ON;
		if (trigger->tgenabled == TRIGGER_DISABLED)
			return TRACKING_DISABLED;
		return TRACKING_NOT_ALWAYS;
	}
	if ((OidIsValid(function) && trigger->tgfoid == function) ||
		strcmp(NameStr(trigger->tgname), TRACK_TRIGGER_NAME) == 0)
		return TRACKING_ALTERED;
	return TRACKING_MISSING;
}

/*
 * How relid's change tracking stands (the powerrank_cache view's tracking column): the best state
 * of its triggers (trigger_tracking_state; function is powerrank_track_changes() of the
 * extension's schema).  Reads pg_trigger without locking the table.  When trigger_name is not
 * NULL, it gets the name of the trigger the state describes (NULL for TRACKING_MISSING).
 */
TrackingState
cache_tracking_state(Oid relid, Oid function, char **trigger_name)
{
	Relation	catalog;
	SysScanDesc scan;
	ScanKeyData key;
	HeapTuple	tuple;
	TrackingState best = TRACKING_MISSING;

	if (trigger_name != NULL)
		*trigger_name = NULL;
	ScanKeyInit(&key, Anum_pg_trigger_tgrelid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(relid));
	catalog = table_open(TriggerRelationId, AccessShareLock);
	scan = systable_beginscan(catalog, TriggerRelidNameIndexId, true, NULL, 1, &key);
	while (HeapTupleIsValid(tuple = systable_getnext(scan)))
	{
		TrackingState state = trigger_tracking_state(tuple, function);

		if (state < best)
		{
			best = state;
			if (trigger_name != NULL)
				*trigger_name = pstrdup(NameStr(((Form_pg_trigger) GETSTRUCT(tuple))->tgname));
		}
	}
	systable_endscan(scan);
	table_close(catalog, AccessShareLock);
	return best;
}

/* The name of a tracking state as the powerrank_cache view shows it. */
const char *
cache_tracking_state_name(TrackingState state)
{
	static const char *const names[] = {"on", "not always", "disabled", "altered", "missing"};

	return names[state];
}

/*
 * The tables of this database that have a trigger calling function or named powerrank_track,
 * each once: the tables tracked at some time, whatever their trigger's state now.
 */
List *
cache_tables_with_tracking_trigger(Oid function)
{
	Relation	catalog = table_open(TriggerRelationId, AccessShareLock);
	SysScanDesc scan = systable_beginscan(catalog, InvalidOid, false, NULL, 0, NULL);
	HeapTuple	tuple;
	List	   *relids = NIL;

	while (HeapTupleIsValid(tuple = systable_getnext(scan)))
	{
		Form_pg_trigger trigger = (Form_pg_trigger) GETSTRUCT(tuple);

		if (trigger_tracking_state(tuple, function) != TRACKING_MISSING)
			relids = list_append_unique_oid(relids, trigger->tgrelid);
	}
	systable_endscan(scan);
	table_close(catalog, AccessShareLock);
	return relids;
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
 * Once per table and session: a NOTICE that relid, whose tracking trigger is there but not in a
 * state the cache can rely on (TRACKING_NOT_ALWAYS, TRACKING_DISABLED, TRACKING_ALTERED), is not
 * served from the cache, with the command that makes it served again.
 */
static void
notice_tracking_off(Oid relid, TrackingState state, const char *trigger_name)
{
	static List *noticed = NIL; /* relids, in TopMemoryContext */
	MemoryContext old;
	char	   *table;
	const char *trigger;

	if (list_member_oid(noticed, relid))
		return;
	old = MemoryContextSwitchTo(TopMemoryContext);
	noticed = lappend_oid(noticed, relid);
	MemoryContextSwitchTo(old);

	table = quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
									   get_rel_name(relid));
	trigger = quote_identifier(trigger_name);
	if (state == TRACKING_ALTERED)
		ereport(NOTICE,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("table %s is not served from the powerrank graph cache: its trigger %s is not the tracking trigger", table, trigger),
				 errdetail("Only a trigger AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ... FOR EACH STATEMENT on %s() without columns or WHEN, enabled ALWAYS, records every change; until there is one, every call builds the graph afresh (rankings are unaffected).", TRACK_FUNCTION_NAME),
				 errhint("Install the tracking trigger again: SELECT powerrank_cache_enable(%s);",
						 quote_literal_cstr(table))));
	else if (state == TRACKING_DISABLED)
		ereport(NOTICE,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("table %s is not served from the powerrank graph cache: its trigger %s is disabled", table, trigger),
				 errdetail("While the trigger is disabled, changes to the table go unrecorded, so every call builds the graph afresh (rankings are unaffected)."),
				 errhint("Enable it ALWAYS: ALTER TABLE %s ENABLE ALWAYS TRIGGER %s;", table, trigger)));
	else
		ereport(NOTICE,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("table %s is not served from the powerrank graph cache: its trigger %s is not enabled ALWAYS", table, trigger),
				 errdetail("The cache serves only tables whose tracking trigger fires whatever session_replication_role is; ALTER TABLE ... ENABLE TRIGGER, also ENABLE TRIGGER ALL as a restore with --disable-triggers runs it, enables it for origin sessions only. Every call builds the graph afresh; rankings are unaffected."),
				 errhint("Enable it ALWAYS: ALTER TABLE %s ENABLE ALWAYS TRIGGER %s;", table, trigger)));
}

/* Makes (once per schema) the saved plan that inserts into the change log. */
static void
prepare_insert_plan(Oid schema)
{
	Oid			insert_types[2] = {OIDOID, BOOLOID};
	SPIPlanPtr	plan;

	if (insert_plan != NULL && plans_schema == schema)
		return;
	if (insert_plan != NULL)
	{
		SPI_freeplan(insert_plan);
		insert_plan = NULL;
	}
	/* a row of the caller's transaction: no other transaction can hold its key */
	plan = SPI_prepare(psprintf("INSERT INTO %s AS l (relid, change, rebase) "
								"VALUES ($1, pg_catalog.pg_current_xact_id(), $2) "
								"ON CONFLICT (relid, change) DO UPDATE SET rebase = true "
								"WHERE EXCLUDED.rebase AND NOT l.rebase", cache_log_name(schema)),
					   2, insert_types);
	if (plan == NULL)
		elog(ERROR, "could not prepare the change log insert: %s", SPI_result_code_string(SPI_result));
	insert_plan = SPI_saveplan(plan);
	plans_schema = schema;
}

/*
 * Runs the saved insert plan on the change log as its owner, inside an open SPI connection.
 */
static int
insert_as_log_owner(Oid schema, Datum *values)
{
	CacheSavedUser saved;
	int			ret;

	cache_become_log_owner(schema, &saved);
	prepare_insert_plan(schema);
	ret = SPI_execute_plan(insert_plan, values, NULL, false, 0);
	cache_restore_user(&saved);
	return ret;
}

/* A rebase row: its transaction, and a background compaction's kept_from (0: not one). */
typedef struct LogRebase
{
	uint64		change;
	uint64		kept_from;
} LogRebase;

/* What a snapshot sees of one table's change log. */
typedef struct LogView
{
	int64		changes;		/* rows that are not rebase rows */
	int64		rows;			/* all rows */
	bool		own_change;		/* a row of the caller's transaction */
	int			n_rebases;		/* rebase rows */
	int			rebases_allocated;
	LogRebase  *rebases;		/* ascending by change once read_log returns */
} LogView;

/* An index scan of one table's rows of the change log, through the active snapshot. */
typedef struct LogScan
{
	Relation	log;
	Relation	index;			/* the primary key, (relid, change) */
	IndexScanDesc scan;
	TupleTableSlot *slot;
	Oid			relid;
	AttrNumber	change;			/* the columns' attribute numbers */
	AttrNumber	rebase;
	AttrNumber	snapshot_xmax;	/* InvalidAttrNumber in a log of version 0.1 */
	AttrNumber	snapshot_xip;
	AttrNumber	kept_from;		/* InvalidAttrNumber in a log of version 0.1 */
	uint64		own;			/* the caller's transaction (0: none yet) */
} LogScan;

/* Opens a scan of relid's rows of the change log of schema (log_scan_end closes it). */
static void
log_scan_begin(LogScan *ls, Oid schema, Oid relid)
{
	Oid			log_relid = cache_log_relid(schema);
	AttrNumber	relid_column = cache_log_column(log_relid, "relid", OIDOID);
	Oid			index_relid;
	Form_pg_index index;

	ls->relid = relid;
	ls->change = cache_log_column(log_relid, "change", XID8OID);
	ls->rebase = cache_log_column(log_relid, "rebase", BOOLOID);
	(void) cache_log_snapshot_columns(log_relid, &ls->snapshot_xmax, &ls->snapshot_xip);
	ls->kept_from = cache_log_column(log_relid, "kept_from", XID8OID);
	ls->own = U64FromFullTransactionId(GetTopFullTransactionIdIfAny());
	ls->log = table_open(log_relid, AccessShareLock);
	index_relid = RelationGetPrimaryKeyIndex(ls->log);
	ls->index = OidIsValid(index_relid) ? index_open(index_relid, AccessShareLock) : NULL;
	index = ls->index ? ls->index->rd_index : NULL;
	if (relid_column == InvalidAttrNumber || ls->change == InvalidAttrNumber ||
		ls->rebase == InvalidAttrNumber || index == NULL || index->indnkeyatts != 2 ||
		index->indkey.values[0] != relid_column || index->indkey.values[1] != ls->change)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("table %s has been altered", CHANGE_LOG_TABLE),
				 errdetail("The change log needs its columns relid oid, change xid8 and rebase boolean, and its primary key (relid, change)."),
				 errhint("Reinstall the extension: DROP EXTENSION powerrank CASCADE; CREATE EXTENSION powerrank;")));
	ls->scan = index_beginscan(ls->log, ls->index, GetActiveSnapshot(), 3, 0);
	ls->slot = table_slot_create(ls->log, NULL);
}

/* Closes what log_scan_begin opened. */
static void
log_scan_end(LogScan *ls)
{
	ExecDropSingleTupleTableSlot(ls->slot);
	index_endscan(ls->scan);
	index_close(ls->index, AccessShareLock);
	table_close(ls->log, AccessShareLock);
}

/* (Re)starts the scan on the table's rows whose change is in [low, high). */
static void
log_scan_range(LogScan *ls, uint64 low, uint64 high)
{
	ScanKeyData keys[3];

	ScanKeyInit(&keys[0], 1, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(ls->relid));
	ScanKeyInit(&keys[1], 2, BTGreaterEqualStrategyNumber, F_XID8GE,
				FullTransactionIdGetDatum(FullTransactionIdFromU64(low)));
	ScanKeyInit(&keys[2], 2, BTLessStrategyNumber, F_XID8LT,
				FullTransactionIdGetDatum(FullTransactionIdFromU64(high)));
	index_rescan(ls->scan, keys, 3, NULL, 0);
}

/* The xid8 in column attnum of the scan's current row (0 when NULL). */
static uint64
log_scan_xid(LogScan *ls, AttrNumber attnum)
{
	bool		isnull;
	Datum		value = slot_getattr(ls->slot, attnum, &isnull);

	return isnull ? 0 : U64FromFullTransactionId(DatumGetFullTransactionId(value));
}

/* Adds the scan's current row to view; returns its change. */
static uint64
log_view_add(LogView *view, LogScan *ls)
{
	uint64		change = log_scan_xid(ls, ls->change);
	bool		isnull;

	view->rows++;
	if (change == ls->own)
		view->own_change = true;
	if (!DatumGetBool(slot_getattr(ls->slot, ls->rebase, &isnull)))
	{
		view->changes++;
		return change;
	}
	if (view->n_rebases == view->rebases_allocated)
	{
		view->rebases_allocated = Max(16, view->rebases_allocated * 2);
		view->rebases = view->rebases == NULL ?
			palloc(sizeof(LogRebase) * view->rebases_allocated) :
			repalloc(view->rebases, sizeof(LogRebase) * view->rebases_allocated);
	}
	view->rebases[view->n_rebases].change = change;
	view->rebases[view->n_rebases++].kept_from =
		ls->kept_from != InvalidAttrNumber ? log_scan_xid(ls, ls->kept_from) : 0;
	return change;
}

/* Adds the rows the scan returns in direction to view. */
static void
log_view_add_all(LogView *view, LogScan *ls, ScanDirection direction)
{
	while (index_getnext_slot(ls->scan, direction, ls->slot))
		(void) log_view_add(view, ls);
}

/* qsort comparator of uint64 */
static int
compare_uint64(const void *a, const void *b)
{
	uint64		x = *(const uint64 *) a;
	uint64		y = *(const uint64 *) b;

	return x < y ? -1 : (x > y ? 1 : 0);
}

/*
 * True when the scan's current row is the rebase row of a compaction that recorded its snapshot;
 * then sets *xmax to the snapshot's xmax and *in_progress (palloc'd, ascending, without
 * duplicates) and *n_in_progress to the transactions in progress at it.
 */
static bool
log_scan_compaction(LogScan *ls, uint64 *xmax, uint64 **in_progress, int *n_in_progress)
{
	bool		isnull;
	Datum		xip;
	Datum	   *elements;
	int			count;
	int			i;

	if (ls->snapshot_xmax == InvalidAttrNumber)
		return false;
	*xmax = log_scan_xid(ls, ls->snapshot_xmax);
	xip = slot_getattr(ls->slot, ls->snapshot_xip, &isnull);
	if (*xmax == 0 || isnull)
		return false;
	deconstruct_array(DatumGetArrayTypeP(xip), XID8OID, sizeof(FullTransactionId),
					  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &elements, NULL, &count);
	*in_progress = palloc(sizeof(uint64) * Max(count, 1));
	for (i = 0; i < count; i++)
		(*in_progress)[i] = U64FromFullTransactionId(DatumGetFullTransactionId(elements[i]));
	if (count > 1)
		qsort(*in_progress, count, sizeof(uint64), compare_uint64);
	*n_in_progress = 0;
	for (i = 0; i < count; i++)
		if (i == 0 || (*in_progress)[i] != (*in_progress)[i - 1])
			(*in_progress)[(*n_in_progress)++] = (*in_progress)[i];
	return true;
}

/*
 * Reads relid's change log through the active snapshot: the rows from the newest down to the
 * newest compaction rebase row the snapshot sees; below that, only the rows the compaction did
 * not see (see the file comment): those from its snapshot's xmax up, and those of the
 * transactions its snapshot saw in progress.  No row a compaction deleted is read.
 */
static void
read_log(Oid schema, Oid relid, LogView *view)
{
	LogScan		ls;
	uint64		base = 0;		/* the compaction's rebase row (0: none seen) */
	uint64		xmax = 0;
	uint64	   *in_progress = NULL;
	int			n_in_progress = 0;
	int			i;

	memset(view, 0, sizeof(LogView));
	log_scan_begin(&ls, schema, relid);
	log_scan_range(&ls, 0, PG_UINT64_MAX);
	while (index_getnext_slot(ls.scan, BackwardScanDirection, ls.slot))
	{
		uint64		change = log_view_add(view, &ls);

		if (log_scan_compaction(&ls, &xmax, &in_progress, &n_in_progress))
		{
			base = change;
			break;
		}
	}
	if (base != 0)
	{
		/* the rows from the snapshot's xmax up to the rebase row, which the scan stopped at */
		if (xmax < base)
		{
			log_scan_range(&ls, xmax, base);
			log_view_add_all(view, &ls, ForwardScanDirection);
		}
		/* below both, the rows of the transactions in progress at the snapshot */
		for (i = 0; i < n_in_progress && in_progress[i] < Min(xmax, base); i++)
		{
			log_scan_range(&ls, in_progress[i], in_progress[i] + 1);
			log_view_add_all(view, &ls, ForwardScanDirection);
		}
	}
	log_scan_end(&ls);
	if (view->n_rebases > 1)
		qsort(view->rebases, view->n_rebases, sizeof(LogRebase), compare_uint64);	/* by change */
}

/* The full transaction id of xid, a transaction id of a snapshot that is still in use. */
static uint64
snapshot_full_xid(TransactionId xid, FullTransactionId next)
{
	uint32		epoch = EpochFromFullTransactionId(next);

	/* no id of a live snapshot lies ahead of the next one, nor an epoch behind it */
	if (xid > XidFromFullTransactionId(next))
		epoch--;
	return U64FromFullTransactionId(FullTransactionIdFromEpochAndXid(epoch, xid));
}

/*
 * Describes the writers the active snapshot sees by the snapshot itself (GraphCacheWriters): its
 * xmin, xmax and the top-level transactions in progress at it, as full transaction ids.  count -1
 * for a snapshot taken in recovery, which lists every transaction among its subtransactions.
 */
static void
describe_active_snapshot(GraphCacheWriters *writers)
{
	Snapshot	snapshot = GetActiveSnapshot();
	FullTransactionId next = ReadNextFullTransactionId();
	GraphCacheSnapshot *described;
	int			i;

	writers->count = -1;
	writers->snapshot = NULL;
	if (snapshot->snapshot_type != SNAPSHOT_MVCC || snapshot->takenDuringRecovery)
		return;
	described = palloc0(offsetof(GraphCacheSnapshot, in_progress) +
						sizeof(uint64) * Max(snapshot->xcnt, 1));
	described->xmin = snapshot_full_xid(snapshot->xmin, next);
	described->xmax = snapshot_full_xid(snapshot->xmax, next);
	for (i = 0; i < (int) snapshot->xcnt; i++)
		described->in_progress[i] = snapshot_full_xid(snapshot->xip[i], next);
	if (snapshot->xcnt > 1)
		qsort(described->in_progress, snapshot->xcnt, sizeof(uint64), compare_uint64);
	writers->snapshot = described;
	writers->count = (int) snapshot->xcnt;
}

/*
 * Fills key's content part from relid's change log as the active snapshot sees it; false when
 * that cannot name the content (see the file comment): no rebase row seen, too many, other ones
 * than the newest snapshot sees, or a row of the caller's own transaction.
 */
static bool
read_content_key(Oid schema, Oid relid, GraphCacheKey *key, GraphCacheWriters *writers)
{
	LogView		seen;
	LogView		newest;
	int			i;

	read_log(schema, relid, &seen);
	if (seen.rows >= COMPACT_AT_READ_ROWS || seen.n_rebases >= GRAPH_CACHE_MAX_REBASES)
		cache_compaction_request();
	if (seen.own_change || seen.n_rebases == 0 || seen.n_rebases > GRAPH_CACHE_MAX_REBASES)
		return false;
	PushActiveSnapshot(GetLatestSnapshot());
	read_log(schema, relid, &newest);
	PopActiveSnapshot();
	if (newest.n_rebases != seen.n_rebases)
		return false;
	for (i = 0; i < seen.n_rebases; i++)
		if (newest.rebases[i].change != seen.rebases[i].change)
			return false;
	for (i = 0; i < seen.n_rebases; i++)
		key->rebases[i] = seen.rebases[i].change;
	key->changes = seen.changes;
	if (writers != NULL)
	{
		describe_active_snapshot(writers);
		for (i = 0; writers->snapshot != NULL && i < seen.n_rebases; i++)
			writers->snapshot->rebases_kept_from[i] = seen.rebases[i].kept_from;
	}
	return true;
}

/*
 * The raw xmin of this database's pg_database row: the transaction that created it (or last
 * altered it), so that a database created later with the same oid (CREATE DATABASE ... OID, or
 * oids wrapping around) never matches a graph a dropped one left behind, e.g. one published by a
 * backend that DROP DATABASE ... WITH (FORCE) terminated after it had evicted the database.
 */
static TransactionId
database_incarnation(void)
{
	HeapTuple	tuple = SearchSysCache1(DATABASEOID, ObjectIdGetDatum(MyDatabaseId));
	TransactionId xmin;

	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for database %u", MyDatabaseId);
	xmin = HeapTupleHeaderGetRawXmin(tuple->t_data);
	ReleaseSysCache(tuple);
	return xmin;
}

/* Fills the part of key that names the table: its database, oid, edge columns and direction. */
static void
name_table(const EdgeScanTarget *target, bool directed, GraphCacheKey *key)
{
	key->database = MyDatabaseId;
	key->database_xmin = database_incarnation();
	key->relid = target->relid;
	for (int i = 0; i < target->n_columns; i++)
	{
		key->attnums[i] = target->columns[i].attnum;
		key->types[i] = target->columns[i].type;
	}
	key->directed = directed;
}

/*
 * Decides whether this call may use the cache (see the file comment) and, if so, fills key with
 * the identity of the content the caller's snapshot sees.  Call after the privilege checks.
 */
bool
graph_cache_probe(const EdgeScanTarget *target, bool directed, GraphCacheKey *key)
{
	return graph_cache_probe_writers(target, directed, key, NULL);
}

/*
 * graph_cache_probe, also giving (when writers is not NULL) the writers of the table the
 * caller's snapshot sees, described by that snapshot (describe_active_snapshot).
 */
bool
graph_cache_probe_writers(const EdgeScanTarget *target, bool directed, GraphCacheKey *key,
						  GraphCacheWriters *writers)
{
	Relation	rel;
	Oid			schema;
	Oid			relfilenode;
	bool		suitable;
	TrackingState tracking;
	char	   *trigger_name;

	if (!graph_cache_available() || powerrank_cache_size_mb <= 0)
		return false;
	schema = cache_extension_schema();
	if (!OidIsValid(schema))
		return false;

	rel = relation_open(target->relid, NoLock);	/* locked by graph_scan_resolve */
	suitable = trackable(rel);
	relfilenode = rel->rd_node.relNode;
	relation_close(rel, NoLock);
	if (!suitable)
		return false;
	tracking = cache_tracking_state(target->relid, cache_tracking_function(schema), &trigger_name);
	if (tracking != TRACKING_ON)
	{
		/* a table tracked once and no longer: say so; one never tracked is just not cached */
		if (tracking != TRACKING_MISSING)
			notice_tracking_off(target->relid, tracking, trigger_name);
		return false;
	}
	if (check_enable_rls(target->relid, InvalidOid, true) == RLS_ENABLED)
		return false;

	memset(key, 0, sizeof(GraphCacheKey));
	if (!read_content_key(schema, target->relid, key, writers))
		return false;
	name_table(target, directed, key);
	key->relfilenode = relfilenode;
	return true;
}

/*
 * Fills key with the key of the merged node set of a distributed run over target (a partitioned
 * table, resolved and checked): its table, edge columns and direction; false when the cache is
 * off (not preloaded, or powerrank.cache_size = 0).  Whether a kept set serves is decided by the
 * shards' answers (coordinator.c), so the key names no content.  The set goes with its table
 * (DROP TABLE), when it is truncated or its partitions change (drop_node_sets).
 */
bool
graph_cache_node_set_key(const EdgeScanTarget *target, GraphCacheKey *key)
{
	if (!graph_cache_available() || powerrank_cache_size_mb <= 0)
		return false;
	memset(key, 0, sizeof(GraphCacheKey));
	key->kind = GRAPH_CACHE_NODE_SET;
	name_table(target, true, key);
	return true;
}

/* Forgets the tables logged by this transaction (at its end). */
static void
logged_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PARALLEL_COMMIT || event == XACT_EVENT_PARALLEL_ABORT ||
		event == XACT_EVENT_PREPARE)
		n_logged = 0;
}

/* Forgets the tables logged by an aborted subtransaction (and its children: later ids). */
static void
logged_subxact_callback(SubXactEvent event, SubTransactionId subxact, SubTransactionId parent,
						void *arg)
{
	int			kept = 0;
	int			i;

	if (event != SUBXACT_EVENT_ABORT_SUB)
		return;
	for (i = 0; i < n_logged; i++)
		if (logged[i].subxact < subxact)
			logged[kept++] = logged[i];
	n_logged = kept;
}

/* True when this transaction already logged a change of relid (and no abort took it back). */
static bool
change_logged(Oid relid)
{
	int			i;

	for (i = 0; i < n_logged; i++)
		if (logged[i].relid == relid)
			return true;
	return false;
}

/* Remembers that this (sub)transaction logged a change of relid. */
static void
remember_logged(Oid relid)
{
	if (!logged_callbacks_registered)
	{
		RegisterXactCallback(logged_xact_callback, NULL);
		RegisterSubXactCallback(logged_subxact_callback, NULL);
		logged_callbacks_registered = true;
	}
	if (n_logged < LOGGED_SLOTS)
	{
		logged[n_logged].relid = relid;
		logged[n_logged].subxact = GetCurrentSubTransactionId();
		n_logged++;
	}
}

/* Adds this transaction's row for relid to the change log (a rebase row when rebase). */
static void
log_change(Oid schema, Oid relid, bool rebase)
{
	Datum		values[2] = {ObjectIdGetDatum(relid), BoolGetDatum(rebase)};
	int			ret;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	ret = insert_as_log_owner(schema, values);
	if (ret != SPI_OK_INSERT)
		elog(ERROR, "could not write to %s: %s", CHANGE_LOG_TABLE, SPI_result_code_string(ret));
	SPI_finish();
}

/* Adds a rebase row for relid to the change log, in the caller's transaction. */
void
cache_log_rebase(Oid schema, Oid relid)
{
	log_change(schema, relid, true);
}

/*
 * powerrank_track_changes(): the AFTER ... FOR EACH STATEMENT trigger of a tracked table; logs
 * the modifying transaction's change of the table (once per transaction).
 */
Datum
powerrank_track_changes(PG_FUNCTION_ARGS)
{
	TriggerData *trigger_data = (TriggerData *) fcinfo->context;
	Oid			relid;

	if (!CALLED_AS_TRIGGER(fcinfo) ||
		!TRIGGER_FIRED_AFTER(trigger_data->tg_event) ||
		!TRIGGER_FIRED_FOR_STATEMENT(trigger_data->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("powerrank_track_changes() must be an AFTER ... FOR EACH STATEMENT trigger"),
				 errhint("Install it with SELECT powerrank_cache_enable('table');")));
	relid = RelationGetRelid(trigger_data->tg_relation);
	if (change_logged(relid))
		return PointerGetDatum(NULL);
	log_change(get_func_namespace(fcinfo->flinfo->fn_oid), relid, false);
	remember_logged(relid);
	cache_compaction_note_writes(1);
	return PointerGetDatum(NULL);
}

/*
 * The tables an ALTER TABLE attaches or detaches as partitions.  The command names the parent, so
 * pg_event_trigger_ddl_commands() lists only the parent; while attached, statements on the parent
 * change the partition's rows without firing its statement triggers, and a detached table must
 * not be served from a key that predates those changes.
 */
static ArrayType *
partitions_attached_or_detached(EventTriggerData *trigger)
{
	AlterTableStmt *statement;
	ListCell   *cell;
	Datum	   *relids;
	int			n = 0;

	if (trigger->parsetree == NULL || !IsA(trigger->parsetree, AlterTableStmt))
		return construct_array(NULL, 0, OIDOID, sizeof(Oid), true, TYPALIGN_INT);
	statement = (AlterTableStmt *) trigger->parsetree;
	relids = palloc(sizeof(Datum) * Max(list_length(statement->cmds), 1));
	foreach(cell, statement->cmds)
	{
		AlterTableCmd *command = lfirst_node(AlterTableCmd, cell);
		Oid			relid;

		if (command->subtype != AT_AttachPartition && command->subtype != AT_DetachPartition &&
			command->subtype != AT_DetachPartitionFinalize)
			continue;
		relid = RangeVarGetRelid(castNode(PartitionCmd, command->def)->name, NoLock, true);
		if (OidIsValid(relid))
			relids[n++] = ObjectIdGetDatum(relid);
	}
	return construct_array(relids, n, OIDOID, sizeof(Oid), true, TYPALIGN_INT);
}

/*
 * powerrank_ddl_command_end(): event trigger on ALTER TABLE; adds a rebase row for every tracked
 * table the command altered (column types, triggers enabled or disabled, ...) or attached or
 * detached as a partition: every table of the log, and every table whose powerrank_track_changes()
 * trigger is enabled ALWAYS (pg_dump writes the tracking trigger as CREATE TRIGGER then ALTER TABLE
 * ... ENABLE ALWAYS TRIGGER, and leaves the log out: a restored table is tracked again by its
 * restore).
 */
Datum
powerrank_ddl_command_end(PG_FUNCTION_ARGS)
{
	Oid			schema;
	Oid			function;
	char	   *log;
	CacheSavedUser saved;
	Oid			argument_type = OIDARRAYOID;
	Datum		partitions;

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		elog(ERROR, "powerrank_ddl_command_end() must be called as an event trigger");
	schema = cache_extension_schema();
	if (!OidIsValid(schema) || !OidIsValid(get_relname_relid(CHANGE_LOG_TABLE, schema)))
		PG_RETURN_VOID();
	log = cache_log_name(schema);
	function = cache_tracking_function(schema);
	partitions =
		PointerGetDatum(partitions_attached_or_detached((EventTriggerData *) fcinfo->context));
	cache_become_log_owner(schema, &saved);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args(psprintf("INSERT INTO %s AS l (relid, change, rebase) "
									   "SELECT DISTINCT c.objid, pg_catalog.pg_current_xact_id(), true "
									   "FROM (SELECT objid FROM pg_catalog.pg_event_trigger_ddl_commands() "
									   "WHERE classid = 'pg_catalog.pg_class'::pg_catalog.regclass "
									   "UNION SELECT pg_catalog.unnest($1)) c "
									   "WHERE c.objid IN (SELECT relid FROM %s) "
									   "OR EXISTS (SELECT FROM pg_catalog.pg_trigger t WHERE t.tgrelid = c.objid "
									   "AND t.tgfoid = %u AND t.tgenabled = 'A') "
									   "ON CONFLICT (relid, change) DO UPDATE SET rebase = true",
									   log, log, function),
							  1, &argument_type, &partitions, NULL, false, 0) < 0)
		elog(ERROR, "could not write to %s", CHANGE_LOG_TABLE);
	SPI_finish();
	cache_restore_user(&saved);
	PG_RETURN_VOID();
}

/*
 * powerrank_sql_drop(): event trigger on sql_drop; evicts the cached graphs of dropped tables
 * (were the DROP rolled back, the next call just rebuilds).  Their log rows are left to the next
 * compaction, which is asked for: deleting them here could collide with a compaction running
 * meanwhile.
 */
Datum
powerrank_sql_drop(PG_FUNCTION_ARGS)
{
	bool		dropped_table = false;
	uint64		i;
	int			guc_nest_level;

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		elog(ERROR, "powerrank_sql_drop() must be called as an event trigger");
	guc_nest_level = cache_pin_search_path();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute("SELECT objid FROM pg_catalog.pg_event_trigger_dropped_objects() "
					"WHERE classid = 'pg_catalog.pg_class'::pg_catalog.regclass AND objsubid = 0",
					true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not list the dropped objects");
	for (i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Datum		relid = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull);

		if (!isnull && graph_cache_drop(MyDatabaseId, DatumGetObjectId(relid)) > 0)
			dropped_table = true;
	}
	SPI_finish();
	AtEOXact_GUC(true, guc_nest_level);
	if (dropped_table)
		cache_compaction_request();
	PG_RETURN_VOID();
}

/*
 * Evicts the merged node sets kept for distributed runs (GRAPH_CACHE_NODE_SET) that a change of
 * relid makes stale: relid's own when it is a partitioned table, and those of the partitioned
 * tables it is a partition of, at every level.  A stale set never serves (the shards' answers
 * decide), but it would hold its room until evicted.
 */
static void
drop_node_sets(Oid relid)
{
	if (get_rel_relkind(relid) == RELKIND_PARTITIONED_TABLE)
		graph_cache_drop(MyDatabaseId, relid);
	if (get_rel_relispartition(relid))
	{
		List	   *ancestors = get_partition_ancestors(relid);
		ListCell   *cell;

		foreach(cell, ancestors)
			graph_cache_drop(MyDatabaseId, lfirst_oid(cell));
		list_free(ancestors);
	}
}

/*
 * Object access hook: when this database's powerrank extension or a whole database is dropped,
 * evicts the graphs cached for that database (nothing could find them again: their keys name log
 * rows of transactions that no later log holds); when a relation is truncated, altered or dropped,
 * or a partition attached to or detached from a table (an inheritance link made or removed: the
 * parent is the auxiliary id), evicts the node sets that change makes stale (drop_node_sets).
 */
static void
cache_object_access(ObjectAccessType access, Oid class_id, Oid object_id, int sub_id, void *arg)
{
	if (prev_object_access_hook)
		prev_object_access_hook(access, class_id, object_id, sub_id, arg);
	if (!graph_cache_available())
		return;
	if (access == OAT_TRUNCATE ||
		(access == OAT_POST_ALTER && class_id == RelationRelationId) ||
		(access == OAT_DROP && class_id == RelationRelationId && sub_id == 0))
		drop_node_sets(object_id);
	else if (access == OAT_POST_ALTER && class_id == InheritsRelationId)
		drop_node_sets(((ObjectAccessPostAlter *) arg)->auxiliary_id);
	else if (access == OAT_DROP && class_id == ExtensionRelationId)
	{
		char	   *name = get_extension_name(object_id);

		if (name != NULL && strcmp(name, "powerrank") == 0)
			graph_cache_drop(MyDatabaseId, InvalidOid);
	}
	else if (access == OAT_DROP && class_id == DatabaseRelationId)
		graph_cache_drop(object_id, InvalidOid);
}

/* Installs the object access hook; called from _PG_init while preloading. */
void
cache_tracking_init(void)
{
	prev_object_access_hook = object_access_hook;
	object_access_hook = cache_object_access;
}

/*
 * The locked table that the text argument edges (argument 0) of a function that installs triggers
 * names: NULL, a read-only transaction (action: what the function does, detail: why it writes)
 * and a missing table are ERRORs.  Takes the lock CREATE TRIGGER takes, so that no write can slip
 * in between the caller's checks and its install.
 */
Oid
cache_lock_edges_argument(FunctionCallInfo fcinfo, const char *action, const char *detail)
{
	RangeVar   *range_var;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("edges must not be NULL"),
				 errhint("Pass the name of the edge table.")));
	if (XactReadOnly)
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot %s in a read-only transaction", action),
				 errdetail("%s", detail),
				 errhint("Run it in a read-write transaction on the primary server.")));
	range_var = makeRangeVarFromNameList(textToQualifiedNameList(PG_GETARG_TEXT_PP(0)));
	return RangeVarGetRelid(range_var, ShareRowExclusiveLock, false);
}

/*
 * Installs the statement trigger name (events: "AFTER <events>"; referencing: its REFERENCING
 * clause, or "") on function (qualified) on the table qualified, enabled ALWAYS, dropping a trigger
 * of that name first when replace.
 */
void
cache_install_trigger(const char *qualified, const char *name, bool replace, const char *events,
					  const char *referencing, const char *function)
{
	char	   *statements[3];
	int			i;

	statements[0] = replace ? psprintf("DROP TRIGGER %s ON %s", name, qualified) : "SELECT";
	statements[1] = psprintf("CREATE TRIGGER %s %s ON %s %s FOR EACH STATEMENT EXECUTE FUNCTION %s()",
							 name, events, qualified, referencing, function);
	statements[2] = psprintf("ALTER TABLE %s ENABLE ALWAYS TRIGGER %s", qualified, name);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	for (i = 0; i < 3; i++)
		if (SPI_execute(statements[i], false, 0) < 0)
			elog(ERROR, "could not install the trigger %s: %s", name, statements[i]);
	SPI_finish();
}

/*
 * powerrank_cache_enable(edges text): makes a table cacheable.  Needs the table's owner.
 * Installs the tracking trigger (unless present) and adds a rebase row for the table, in the
 * caller's transaction; returns true when the trigger was installed now.
 */
Datum
powerrank_cache_enable(PG_FUNCTION_ARGS)
{
	Oid			relid;
	Oid			schema = get_func_namespace(fcinfo->flinfo->fn_oid);
	Relation	rel;
	bool		tracked;
	bool		name_taken;
	bool		suitable;
	char	   *qualified;

	relid = cache_lock_edges_argument(fcinfo, "enable change tracking",
									  "powerrank_cache_enable creates a trigger and writes to the change log.");
	rel = relation_open(relid, NoLock);
	suitable = trackable(rel);
	tracked = cache_tracking_state(relid, cache_tracking_function(schema), NULL) == TRACKING_ON;
	name_taken = trigger_name_taken(rel);
	qualified = quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
										   RelationGetRelationName(rel));
	relation_close(rel, NoLock);

	if (!suitable)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("cannot cache the graph of \"%s\"", get_rel_name(relid)),
				 errdetail("Only plain, non-temporary user tables outside partitioning, inheritance and logical replication subscriptions can be tracked; views, materialized views, foreign, partitioned and temporary tables, system catalogs, partitions, inheritance parents and children and tables a subscription replicates into (its rows fire no statement trigger) are ranked without the cache."),
				 errhint("Rank it as it is: every call then reads it afresh.")));
	if (!pg_class_ownercheck(relid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_TABLE, get_rel_name(relid));

	/* a disabled or altered powerrank_track is replaced */
	if (!tracked)
		cache_install_trigger(qualified, TRACK_TRIGGER_NAME, name_taken,
							  "AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE", "",
							  cache_qualified_name(schema, TRACK_FUNCTION_NAME));
	log_change(schema, relid, true);
	if (!graph_cache_available())
		ereport(NOTICE,
				(errmsg("change tracking is installed on %s, but the powerrank graph cache is off: powerrank is not in shared_preload_libraries", qualified),
				 errdetail("Until the cache is on, every call builds its graph afresh, and each transaction that modifies the table still adds one row to the change log (compacted in the background)."),
				 errhint("Add powerrank to shared_preload_libraries in postgresql.conf and restart the server to cache graphs, or remove the tracking with DROP TRIGGER %s ON %s.",
						 TRACK_TRIGGER_NAME, qualified)));
	PG_RETURN_BOOL(!tracked);
}
