/*
 * cache_capture.c — the rows writers change in a live table, and a cached graph patched with them
 * instead of a rebuild.
 *
 * powerrank_cache_live(table) (its owner; the table tracked by powerrank_cache_enable) installs
 * three statement-level triggers, enabled ALWAYS, with transition tables: powerrank_capture_insert
 * (AFTER INSERT, NEW TABLE), powerrank_capture_update (AFTER UPDATE, OLD and NEW TABLE) and
 * powerrank_capture_delete (AFTER DELETE, OLD TABLE), all on powerrank_capture_changes().  Each
 * statement that changes rows adds one row to powerrank_change_rows: (relid, the writer's full
 * transaction id, complete, old_rows, new_rows), its transition tables' rows in the table's own
 * tuple format (minimal tuples, the columns that cannot be graph columns set NULL).  A statement
 * that changes more than CAPTURE_MAX_ROWS rows stores none (complete = false).  Writers insert
 * rows of their own only: no writer waits on another.
 *
 * A reader whose snapshot's content key has no cached graph (cache_tracking.c) looks for a base:
 * an entry of the same table, storage, rebase rows (or only background compactions between them,
 * cache_compact.c), columns and direction whose snapshot (the one its graph was read through,
 * GraphCacheWriters) the reader's snapshot covers: every
 * transaction that one saw, the reader sees too (graph_cache_acquire_base; doc/DESIGN.md, "Which
 * changes a reader applies", proves the rule).  Its content is the base rows plus the changes of
 * the writers its snapshot saw; the reader's is that plus the changes of the writers it sees
 * beyond them — exactly the writers at or past the base snapshot's xmax or in progress at it —
 * whose change rows it reads through its own snapshot (so never a row of an aborted, running or
 * later transaction) and applies.  The patch is a delta entry when it can be: the base's delta from
 * its root (empty for a flat base) extended with the rows straight into a segment of the most
 * the delta can take (pr_graph_delta_extend_flat; graph_cache_publish_delta); else — a node the root lacks, a delta past its
 * bound — the graph is written whole, a new root, with pr_graph_patch_plan and
 * pr_graph_patch_write straight into the shared segment the cache then takes as it is
 * (graph_cache_publish_patched).  Why
 * the change rows of those writers are complete: the capture triggers are in place, unaltered and
 * enabled ALWAYS now (checked under the reader's lock on the table), and they can only have come
 * to that state by an ALTER TABLE ... ENABLE ALWAYS TRIGGER (of powerrank_cache_live or a
 * restore), which adds a rebase row and waits for every writer before it: a writer that ran
 * without them committed before that rebase row, so a base that sees the rebase row sees the
 * writer too.  The tuple format is the one the rows were captured in: every ALTER TABLE adds a
 * rebase row, and the base and the reader see the same ones.  Anything else — no base, capture
 * off, an incomplete statement, more changed rows than GRAPH_CACHE_PATCH_FRACTION of the base's
 * edges, a deletion the base lacks, weights the build would scale — builds from the table's rows
 * as without the capture.
 *
 * Compaction (cache_compact.c) deletes the change rows of the writers whose log rows it deletes
 * (the background worker's only below the horizon the cached bases need), and those of dropped
 * tables.
 */
#include "cache/graph_cache.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_trigger.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "parser/parse_func.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/tuplestore.h"
#include "utils/varlena.h"
#include "utils/xid8.h"

#include "graph/graph_heapscan.h"

PG_FUNCTION_INFO_V1(powerrank_capture_changes);
PG_FUNCTION_INFO_V1(powerrank_cache_live);

#define CAPTURE_FUNCTION_NAME "powerrank_capture_changes"
#define CHANGE_ROWS_TABLE "powerrank_change_rows"

/* Rows of one statement's transition table the capture keeps; past it the statement's are not. */
#define CAPTURE_MAX_ROWS 100000

/*
 * Most changed rows a patch applies, as a fraction of the base's stored edges (at least
 * PATCH_MIN_ROWS): past it the reader builds from the rows.
 */
#define GRAPH_CACHE_PATCH_FRACTION 0.05
#define PATCH_MIN_ROWS 1000

/* One capture trigger: its name, event and transition tables. */
typedef struct CaptureTrigger
{
	const char *name;
	int16		event;
	const char *event_name;
	const char *referencing;	/* the REFERENCING clause */
	bool		old_table;
	bool		new_table;
} CaptureTrigger;

static const CaptureTrigger capture_triggers[] = {
	{"powerrank_capture_insert", TRIGGER_TYPE_INSERT, "INSERT", "NEW TABLE AS powerrank_new", false,
	true},
	{"powerrank_capture_update", TRIGGER_TYPE_UPDATE, "UPDATE",
	"OLD TABLE AS powerrank_old NEW TABLE AS powerrank_new", true, true},
	{"powerrank_capture_delete", TRIGGER_TYPE_DELETE, "DELETE", "OLD TABLE AS powerrank_old", true,
	false},
};

#define N_CAPTURE_TRIGGERS lengthof(capture_triggers)

/* The saved plan of the capture's insert, and the schema it names. */
static SPIPlanPtr capture_plan = NULL;
static Oid	capture_plan_schema = InvalidOid;

/* Oid of powerrank_capture_changes() in schema (InvalidOid if absent). */
static Oid
capture_function(Oid schema)
{
	List	   *name = list_make2(makeString(get_namespace_name(schema)),
								  makeString(CAPTURE_FUNCTION_NAME));

	return LookupFuncName(name, 0, NULL, true);
}

/*
 * True when relid has all three capture triggers as powerrank_cache_live installs them: on
 * powerrank_capture_changes(), AFTER ... FOR EACH STATEMENT on their one event, with their
 * transition tables, no columns or WHEN, enabled ALWAYS.  Reads pg_trigger as the caller's
 * catalog snapshot sees it (the caller holds a lock on the table).
 */
bool
cache_capture_on(Oid relid, Oid schema)
{
	Oid			function = capture_function(schema);
	Relation	catalog;
	SysScanDesc scan;
	ScanKeyData key;
	HeapTuple	tuple;
	int			found = 0;

	if (!OidIsValid(function))
		return false;
	ScanKeyInit(&key, Anum_pg_trigger_tgrelid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(relid));
	catalog = table_open(TriggerRelationId, AccessShareLock);
	scan = systable_beginscan(catalog, TriggerRelidNameIndexId, true, NULL, 1, &key);
	while (HeapTupleIsValid(tuple = systable_getnext(scan)))
	{
		Form_pg_trigger trigger = (Form_pg_trigger) GETSTRUCT(tuple);
		int			i;

		for (i = 0; i < (int) N_CAPTURE_TRIGGERS; i++)
		{
			const CaptureTrigger *c = &capture_triggers[i];

			if (strcmp(NameStr(trigger->tgname), c->name) == 0 && trigger->tgfoid == function &&
				trigger->tgtype == c->event && trigger->tgattr.dim1 == 0 &&
				trigger->tgenabled == TRIGGER_FIRES_ALWAYS &&
				heap_attisnull(tuple, Anum_pg_trigger_tgqual, NULL) &&
				heap_attisnull(tuple, Anum_pg_trigger_tgoldtable, NULL) == !c->old_table &&
				heap_attisnull(tuple, Anum_pg_trigger_tgnewtable, NULL) == !c->new_table)
				found |= 1 << i;
		}
	}
	systable_endscan(scan);
	table_close(catalog, AccessShareLock);
	return found == (1 << N_CAPTURE_TRIGGERS) - 1;
}

/* True for a column type a graph column can have (the heap reader's conversions). */
static bool
capturable_type(Oid type)
{
	Oid			base = getBaseType(type);

	return base == INT2OID || base == INT4OID || base == INT8OID || base == FLOAT4OID ||
		base == FLOAT8OID || base == NUMERICOID;
}

/*
 * The rows of a transition table as one bytea: each a uint32 length and a minimal tuple of desc,
 * the columns no graph can read set NULL (and numerics detoasted: the tuple outlives the table's
 * TOAST rows).  NULL when there are more than CAPTURE_MAX_ROWS rows; *rows: how many it holds.
 */
static bytea *
serialize_rows(Tuplestorestate *store, TupleDesc desc, int64 *rows)
{
	TupleTableSlot *slot = MakeSingleTupleTableSlot(desc, &TTSOpsMinimalTuple);
	Datum	   *values = palloc(sizeof(Datum) * Max(desc->natts, 1));
	bool	   *nulls = palloc(sizeof(bool) * Max(desc->natts, 1));
	bool	   *keep = palloc(sizeof(bool) * Max(desc->natts, 1));
	bool	   *numeric = palloc(sizeof(bool) * Max(desc->natts, 1));
	StringInfoData buffer;
	int			reader;
	int			i;
	bytea	   *result;

	for (i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute attribute = TupleDescAttr(desc, i);

		keep[i] = !attribute->attisdropped && capturable_type(attribute->atttypid);
		numeric[i] = keep[i] && getBaseType(attribute->atttypid) == NUMERICOID;
	}
	initStringInfo(&buffer);
	appendStringInfoSpaces(&buffer, VARHDRSZ);
	*rows = 0;
	reader = tuplestore_alloc_read_pointer(store, EXEC_FLAG_REWIND);
	tuplestore_select_read_pointer(store, reader);
	tuplestore_rescan(store);
	while (tuplestore_gettupleslot(store, true, false, slot))
	{
		MinimalTuple tuple;
		uint32		length;

		if (++(*rows) > CAPTURE_MAX_ROWS)
		{
			tuplestore_select_read_pointer(store, 0);
			ExecDropSingleTupleTableSlot(slot);
			return NULL;
		}
		slot_getallattrs(slot);
		for (i = 0; i < desc->natts; i++)
		{
			nulls[i] = slot->tts_isnull[i] || !keep[i];
			values[i] = nulls[i] ? (Datum) 0 : slot->tts_values[i];
			if (!nulls[i] && numeric[i])
				values[i] = PointerGetDatum(PG_DETOAST_DATUM_PACKED(values[i]));
		}
		tuple = heap_form_minimal_tuple(desc, values, nulls);
		length = tuple->t_len;
		appendBinaryStringInfo(&buffer, (char *) &length, sizeof(uint32));
		appendBinaryStringInfo(&buffer, (char *) tuple, length);
		heap_free_minimal_tuple(tuple);
	}
	tuplestore_select_read_pointer(store, 0);
	ExecDropSingleTupleTableSlot(slot);
	result = (bytea *) buffer.data;
	SET_VARSIZE(result, buffer.len);
	return result;
}

/* Makes (once per schema) the saved plan that inserts into the change rows. */
static void
prepare_capture_plan(Oid schema)
{
	Oid			types[4] = {OIDOID, BOOLOID, BYTEAOID, BYTEAOID};
	SPIPlanPtr	plan;

	if (capture_plan != NULL && capture_plan_schema == schema)
		return;
	if (capture_plan != NULL)
	{
		SPI_freeplan(capture_plan);
		capture_plan = NULL;
	}
	plan = SPI_prepare(psprintf("INSERT INTO %s (relid, change, complete, old_rows, new_rows) "
								"VALUES ($1, pg_catalog.pg_current_xact_id(), $2, $3, $4)",
								cache_qualified_name(schema, CHANGE_ROWS_TABLE)),
					   4, types);
	if (plan == NULL)
		elog(ERROR, "could not prepare the change rows insert: %s",
			 SPI_result_code_string(SPI_result));
	capture_plan = SPI_saveplan(plan);
	capture_plan_schema = schema;
}

/*
 * powerrank_capture_changes(): the AFTER ... FOR EACH STATEMENT triggers of a live table with
 * transition tables; stores the statement's changed rows (see the file comment).
 */
Datum
powerrank_capture_changes(PG_FUNCTION_ARGS)
{
	TriggerData *trigger_data = (TriggerData *) fcinfo->context;
	Oid			schema;
	TupleDesc	desc;
	bytea	   *old_rows = NULL;
	bytea	   *new_rows = NULL;
	int64		n_old = 0;
	int64		n_new = 0;
	bool		complete = true;
	Datum		values[4];
	char		nulls[4] = {' ', ' ', ' ', ' '};
	CacheSavedUser saved;
	int			ret;

	if (!CALLED_AS_TRIGGER(fcinfo) ||
		!TRIGGER_FIRED_AFTER(trigger_data->tg_event) ||
		!TRIGGER_FIRED_FOR_STATEMENT(trigger_data->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("powerrank_capture_changes() must be an AFTER ... FOR EACH STATEMENT trigger"),
				 errhint("Install it with SELECT powerrank_cache_live('table');")));
	desc = RelationGetDescr(trigger_data->tg_relation);
	if (trigger_data->tg_oldtable != NULL)
	{
		old_rows = serialize_rows(trigger_data->tg_oldtable, desc, &n_old);
		complete &= old_rows != NULL;
	}
	if (trigger_data->tg_newtable != NULL)
	{
		new_rows = serialize_rows(trigger_data->tg_newtable, desc, &n_new);
		complete &= new_rows != NULL;
	}
	if (n_old == 0 && n_new == 0)
		return PointerGetDatum(NULL);
	if (!complete)
	{
		old_rows = NULL;
		new_rows = NULL;
	}
	values[0] = ObjectIdGetDatum(RelationGetRelid(trigger_data->tg_relation));
	values[1] = BoolGetDatum(complete);
	values[2] = PointerGetDatum(old_rows);
	values[3] = PointerGetDatum(new_rows);
	if (old_rows == NULL)
		nulls[2] = 'n';
	if (new_rows == NULL)
		nulls[3] = 'n';

	schema = get_func_namespace(fcinfo->flinfo->fn_oid);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	cache_become_log_owner(schema, &saved);
	prepare_capture_plan(schema);
	ret = SPI_execute_plan(capture_plan, values, nulls, false, 0);
	cache_restore_user(&saved);
	if (ret != SPI_OK_INSERT)
		elog(ERROR, "could not write to %s: %s", CHANGE_ROWS_TABLE, SPI_result_code_string(ret));
	SPI_finish();
	return PointerGetDatum(NULL);
}

/* What read_changes fills. */
typedef struct ChangeRows
{
	MemoryContext cxt;			/* the caller's: the rows outlive read_changes' SPI connection */
	PrEdgeChange *changes;
	size_t		count;
	size_t		allocated;
	int64		skipped;		/* rows with a NULL: new ones minus old ones */
	int64		max_rows;
} ChangeRows;

/*
 * Adds the rows of one serialized transition table (sign +1: inserted, -1: deleted) to out,
 * converted as the heap reader converts a table's rows (inserted rows' weights checked); false
 * when out would pass its max_rows.
 */
static bool
add_rows(bytea *rows, int sign, TupleTableSlot *slot, const EdgeRowReader *reader,
		 ChangeRows *out)
{
	const char *data = VARDATA_ANY(rows);
	Size		size = VARSIZE_ANY_EXHDR(rows);
	Size		position = 0;
	MinimalTuple tuple = NULL;
	Size		tuple_room = 0;

	while (position + sizeof(uint32) <= size)
	{
		uint32		length;
		int64		src,
					dst;
		double		weight;
		bool		usable;

		memcpy(&length, data + position, sizeof(uint32));
		position += sizeof(uint32);
		if (length > size - position)
			elog(ERROR, "corrupt row in %s", CHANGE_ROWS_TABLE);
		if (length > tuple_room)
		{
			tuple_room = Max(length, 64);
			tuple = tuple == NULL ? palloc(tuple_room) : repalloc(tuple, tuple_room);
		}
		memcpy(tuple, data + position, length);
		position += length;
		ExecStoreMinimalTuple(tuple, slot, false);
		usable = sign > 0 ?
			graph_heapscan_convert_row(reader, slot, &src, &dst, &weight) :
			graph_heapscan_convert_row_unchecked(reader, slot, &src, &dst, &weight);
		ExecClearTuple(slot);
		if (!usable)
		{
			out->skipped += sign;
			continue;
		}
		if ((int64) out->count >= out->max_rows)
			return false;
		if (out->count == out->allocated)
		{
			out->allocated = Max(64, out->allocated * 2);
			out->changes = out->changes == NULL ?
				MemoryContextAlloc(out->cxt, sizeof(PrEdgeChange) * out->allocated) :
				repalloc(out->changes, sizeof(PrEdgeChange) * out->allocated);
		}
		out->changes[out->count].src = src;
		out->changes[out->count].dst = dst;
		out->changes[out->count].weight = reader->weight_attnum != InvalidAttrNumber ? weight : 1.0;
		out->changes[out->count].count = sign;
		out->count++;
	}
	return true;
}

/*
 * Reads, through the active snapshot, the change rows of relid's writers that the snapshot seen
 * (a base's) did not see: those of transactions at or past its xmax or in progress at it (the
 * active snapshot sees only committed writers).  Into out; false when a statement's rows were not
 * kept (complete = false) or there are more than out->max_rows.
 */
static bool
read_changes(Oid schema, Oid relid, const GraphCacheWriters *seen, TupleDesc desc,
			 const EdgeRowReader *reader, ChangeRows *out)
{
	CacheSavedUser saved;
	Datum	   *elements = palloc(sizeof(Datum) * Max(seen->count, 1));
	Oid			types[3] = {OIDOID, XID8OID, XID8ARRAYOID};
	Datum		values[3];
	TupleTableSlot *slot = MakeSingleTupleTableSlot(desc, &TTSOpsMinimalTuple);
	bool		ok = true;
	uint64		i;
	int			ret;

	for (i = 0; i < (uint64) seen->count; i++)
		elements[i] =
			FullTransactionIdGetDatum(FullTransactionIdFromU64(seen->snapshot->in_progress[i]));
	values[0] = ObjectIdGetDatum(relid);
	values[1] = FullTransactionIdGetDatum(FullTransactionIdFromU64(seen->snapshot->xmax));
	values[2] = PointerGetDatum(construct_array(elements, seen->count, XID8OID,
												sizeof(FullTransactionId), FLOAT8PASSBYVAL,
												TYPALIGN_DOUBLE));
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	cache_become_log_owner(schema, &saved);
	/* read_only: through the active snapshot, the one the content key was read through */
	ret = SPI_execute_with_args(psprintf("SELECT complete, old_rows, new_rows FROM %s "
										 "WHERE relid = $1 AND (change >= $2 OR change = ANY ($3))",
										 cache_qualified_name(schema, CHANGE_ROWS_TABLE)),
								3, types, values, NULL, true, 0);
	cache_restore_user(&saved);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "could not read %s: %s", CHANGE_ROWS_TABLE, SPI_result_code_string(ret));
	for (i = 0; ok && i < SPI_processed; i++)
	{
		HeapTuple	row = SPI_tuptable->vals[i];
		TupleDesc	row_desc = SPI_tuptable->tupdesc;
		bool		isnull;
		Datum		rows;

		if (!DatumGetBool(SPI_getbinval(row, row_desc, 1, &isnull)) || isnull)
		{
			ok = false;
			break;
		}
		rows = SPI_getbinval(row, row_desc, 2, &isnull);
		if (!isnull)
			ok = add_rows(DatumGetByteaPP(rows), -1, slot, reader, out);
		rows = SPI_getbinval(row, row_desc, 3, &isnull);
		if (ok && !isnull)
			ok = add_rows(DatumGetByteaPP(rows), 1, slot, reader, out);
	}
	SPI_finish();
	ExecDropSingleTupleTableSlot(slot);
	return ok;
}

/*
 * What extending a weighted root's deltas needs besides the root (GRAPH_CACHE_LAYOUT_ROOT_FACTS,
 * kept with the root's entry): bounds on its weights (the range its entry recorded, or the exact
 * one counted here) and, after this header, its out-degrees (int64, one a node).
 */
typedef struct RootFactsHeader
{
	uint64		magic;
	int64		n_nodes;
	int64		n_edges;
	PrWeightRange weights;
} RootFactsHeader;

#define ROOT_FACTS_MAGIC UINT64CONST(0x50524f4f54464331)	/* "PROOTFC1" */

/* The root entry whose facts this backend mapped last, and their mapping (kept across calls). */
static uint64 facts_root_id = 0;
static dsm_segment *facts_mapping = NULL;

/* Whether a facts segment describes root (its header; the rest is this program's own write). */
static bool
root_facts_fit(dsm_segment *segment, const PrGraph *root)
{
	const RootFactsHeader *header = (const RootFactsHeader *) dsm_segment_address(segment);

	return dsm_segment_map_length(segment) >=
		sizeof(RootFactsHeader) + (Size) root->n_nodes * sizeof(int64) &&
		header->magic == ROOT_FACTS_MAGIC && header->n_nodes == root->n_nodes &&
		header->n_edges == root->n_edges;
}

/*
 * Counts a weighted root's facts (its out-degrees, and its weight range unless known — the range
 * its entry recorded at publish —: pr_graph_root_facts, one pass over its in-edges split over
 * powerrank_thread_count() threads, scratch from alloc) into a new segment, kept with the root's
 * entry for every backend's later patches; NULL when no segment is left.
 */
static dsm_segment *
make_root_facts(const PrGraph *root, uint64 root_id, const PrWeightRange *known,
				const PrAllocator *alloc)
{
	Size		bytes = sizeof(RootFactsHeader) + (Size) Max(root->n_nodes, 1) * sizeof(int64);
	dsm_segment *segment = dsm_create(bytes, DSM_CREATE_NULL_IF_MAXSEGMENTS);
	RootFactsHeader *header;

	if (segment == NULL)
		return NULL;
	graph_cache_prefault(segment);
	header = (RootFactsHeader *) dsm_segment_address(segment);
	header->magic = ROOT_FACTS_MAGIC;
	header->n_nodes = root->n_nodes;
	header->n_edges = root->n_edges;
	if (known != NULL)
		header->weights = *known;
	pr_graph_root_facts(root, powerrank_thread_count(), alloc, (int64 *) (header + 1),
						known != NULL ? NULL : &header->weights);
	if (!graph_cache_keep_layout(root_id, GRAPH_CACHE_LAYOUT_ROOT_FACTS, segment))
		elog(DEBUG1, "powerrank: the out-degrees of cached graph %llu not kept with it",
			 (unsigned long long) root_id);
	return segment;
}

/*
 * A weighted root's out-degrees and bounds on its weights (into *weights; known: the range its
 * entry recorded, or NULL: counted exactly): counted once per root entry by the first patch of any backend and
 * kept with the entry (make_root_facts), mapped by the others; the mapping stays for this
 * backend's next patches.  NULL for an unweighted root, whose out-strengths are its out-degrees.
 */
static const int64 *
root_facts(const PrGraph *root, uint64 root_id, const PrWeightRange *known,
		   const PrAllocator *alloc, PrWeightRange *weights)
{
	dsm_segment *segment;

	if (!root->weighted)
		return NULL;
	if (facts_mapping == NULL || facts_root_id != root_id || !root_facts_fit(facts_mapping, root))
	{
		if (facts_mapping != NULL)
			dsm_detach(facts_mapping);
		facts_mapping = NULL;
		facts_root_id = 0;
		segment = graph_cache_map_layout(root_id, GRAPH_CACHE_LAYOUT_ROOT_FACTS);
		if (segment != NULL && !root_facts_fit(segment, root))
		{
			dsm_detach(segment);
			segment = NULL;
		}
		if (segment == NULL)
			segment = make_root_facts(root, root_id, known, alloc);
		if (segment == NULL)
			return NULL;
		dsm_pin_mapping(segment);
		facts_mapping = segment;
		facts_root_id = root_id;
	}
	*weights = ((const RootFactsHeader *) dsm_segment_address(facts_mapping))->weights;
	return (const int64 *) ((const RootFactsHeader *) dsm_segment_address(facts_mapping) + 1);
}

/* Stored edges of the graph root plus delta. */
int64
graph_cache_delta_edges(const PrGraph *root, const PrGraphDelta *delta)
{
	int64		edges = root->n_edges;

	for (int64 i = 0; i < delta->n_edges; i++)
		edges += delta->edges[i].count;
	return edges;
}

/*
 * Plans (pr_graph_patch_plan) the graph root plus delta (NULL or empty: none) plus the changed
 * rows changes (taken in both directions when undirected).  The delta's edges are stored edges,
 * an undirected graph's in both directions: the plan takes each row of it once (src <= dst, a
 * self-loop once) and adds the reverse as it does for the rows.
 */
static PrStatus
plan_from_root(const PrGraph *root, const PrWeightRange *root_range, const PrGraphDelta *delta,
			   const PrEdgeChange *changes, size_t n_changes, bool undirected,
			   const PrAllocator *alloc, PrGraphPatch *plan, PrError *err)
{
	PrEdgeChange *all;
	size_t		count = 0;
	PrStatus	status;

	if (delta == NULL || delta->n_edges == 0)
		return pr_graph_patch_plan(root, root_range, changes, n_changes, undirected,
								   powerrank_thread_count(), alloc, plan, err);
	all = MemoryContextAllocHuge(CurrentMemoryContext,
								 ((Size) delta->n_edges + n_changes) * sizeof(PrEdgeChange));
	pr_graph_delta_changes(root, delta, all);
	for (int64 i = 0; i < delta->n_edges; i++)
		if (!undirected || all[i].src <= all[i].dst)
			all[count++] = all[i];
	if (n_changes > 0)
		memcpy(all + count, changes, n_changes * sizeof(PrEdgeChange));
	status = pr_graph_patch_plan(root, root_range, all, count + n_changes, undirected,
								 powerrank_thread_count(), alloc, plan, err);
	pfree(all);
	return status;
}

/*
 * Writes a planned graph into buf (pr_graph_flat_size(&plan->shape) bytes, 8-byte aligned) in
 * the flat form, into out (its arrays in buf).
 */
static void
write_planned(const PrGraphPatch *plan, void *buf, PrGraph *out)
{
	*out = plan->shape;
	pr_graph_flat_place(out, buf);
	pr_graph_patch_write(plan, out, powerrank_thread_count());
	/* the header again, with the dangling count the write found (no array moves) */
	pr_graph_flat_place(out, buf);
}

/*
 * The flat graph of a delta entry, root plus delta (graph_cache_acquire_hit), written into memory
 * of alloc (the graph's arrays, one flat buffer), for a caller that needs the graph itself (HITS'
 * out-edges, a delta the cache did not keep).  Its arrays equal a build's of the rows.
 */
void
graph_cache_materialize(const PrGraph *root, const PrGraphDelta *delta, const PrAllocator *alloc,
						PrGraph *out)
{
	PrGraphPatch plan;
	PrError		err = {0};
	void	   *buf;

	if (plan_from_root(root, NULL, delta, NULL, 0, false, alloc, &plan, &err) != PR_OK)
		powerrank_report_core_error("graph patch", &err);
	buf = pr_alloc_array(alloc, pr_graph_flat_size(&plan.shape), 1);
	if (buf == NULL)
	{
		pr_graph_patch_free(&plan);
		pr_error_set(&err, PR_ERR_NOMEM, "out of memory for a graph of %lld edges",
					 (long long) plan.shape.n_edges);
		powerrank_report_core_error("graph patch", &err);
	}
	write_planned(&plan, buf, out);
	pr_graph_patch_free(&plan);
}

/* Where extend_delta's time went (seconds), for the patch's DEBUG1 line. */
typedef struct ExtendTimes
{
	double		facts;			/* the root's out-degrees and weight range: mapped or counted */
	double		segment;		/* the delta's segment made and its pages mapped */
	double		extend;			/* the delta extended straight into it */
} ExtendTimes;

/*
 * The delta of the content key names from the base's root (see the file comment): the base's
 * delta extended with the changes (pr_graph_delta_extend_flat) straight into a new segment
 * (patched->delta_segment, not pinned; made for the most the delta can hold,
 * pr_graph_delta_extend_size, and prefaulted), with its root's mapping taken over from base.
 * False, nothing allocated and base left as it was, when the change is no delta of the root's (a
 * node new to it; a delta past max(PATCH_MIN_ROWS, GRAPH_CACHE_PATCH_FRACTION of its edges); no
 * segment left for it or for a weighted root's facts): the caller then writes the graph whole.
 * *refused: the changes do not apply (a deletion of an edge the base lacks, weights the build
 * would scale, no edge left): the caller reads and builds.
 */
static bool
extend_delta(GraphCacheBase *base, const ChangeRows *changes, bool directed,
			 const PrAllocator *alloc, GraphCachePatched *patched, bool *refused,
			 ExtendTimes *times)
{
	const PrGraph *root = &base->hit.graph;
	uint64		root_id = base->hit.root_id != 0 ? base->hit.root_id : base->hit.id;
	PrGraphDelta empty;
	const PrGraphDelta *old = &base->hit.delta;
	const int64 *out_degree;
	PrWeightRange weights = {0};
	int64		changed_edges = 0;
	int64		bound = Max((int64) PATCH_MIN_ROWS,
							(int64) (GRAPH_CACHE_PATCH_FRACTION * (double) root->n_edges));
	PrError		err = {0};
	PrStatus	status;
	Size		bytes;
	dsm_segment *segment;
	const char *why = NULL;
	double		started = pr_clock_seconds(),
				at;

	*refused = false;
	memset(times, 0, sizeof(ExtendTimes));
	if (base->hit.delta_segment == NULL)
	{
		memset(&empty, 0, sizeof(PrGraphDelta));
		empty.n_nodes = root->n_nodes;
		old = &empty;
	}
	out_degree = root_facts(root, root_id, base->root_weights_known ? &base->root_weights : NULL,
							alloc, &weights);
	at = pr_clock_seconds();
	times->facts = at - started;
	if (root->weighted && out_degree == NULL)
	{
		elog(DEBUG1, "powerrank: no shared memory segment left for the root's out-degrees; the patch is written whole");
		return false;
	}
	bytes = pr_graph_delta_extend_size(old, changes->count, !directed);
	segment = dsm_create(bytes, DSM_CREATE_NULL_IF_MAXSEGMENTS);
	if (segment == NULL)
	{
		elog(DEBUG1, "powerrank: no shared memory segment left for a delta; the patch is written whole");
		return false;
	}
	graph_cache_prefault(segment);
	times->segment = pr_clock_seconds() - at;
	at = pr_clock_seconds();
	status = pr_graph_delta_extend_flat(root, out_degree, root->weighted ? &weights : NULL, old,
										changes->changes, changes->count, !directed,
										powerrank_thread_count(), alloc,
										dsm_segment_address(segment), bytes, &patched->delta,
										&changed_edges, &err);
	times->extend = pr_clock_seconds() - at;
	if (status == PR_ERR_NOMEM)
	{
		dsm_detach(segment);
		powerrank_report_core_error("graph delta", &err);
	}
	if (status == PR_ERR_INVALID)
	{
		*refused = true;
		dsm_detach(segment);
		elog(DEBUG1, "powerrank: the changed rows do not apply to the cached graph (%s)",
			 err.message);
		return false;
	}
	if (status != PR_OK)
		why = err.message;
	else if (patched->delta.n_edges > bound)
		why = psprintf("%lld edges changed since its root, past %lld",
					   (long long) patched->delta.n_edges, (long long) bound);
	if (why != NULL)
	{
		dsm_detach(segment);
		memset(&patched->delta, 0, sizeof(PrGraphDelta));
		elog(DEBUG1, "powerrank: the patch is no delta of the root (%s); it is written whole",
			 why);
		return false;
	}
	patched->delta_segment = segment;
	patched->delta_edges = graph_cache_delta_edges(root, &patched->delta);

	/* the root's mapping (and its reference) goes with the patched graph */
	patched->segment = base->hit.segment;
	patched->graph = *root;
	patched->root_id = root_id;
	base->hit.segment = NULL;
	patched->origin.changed_edges = changed_edges;
	patched->origin.map = NULL;
	patched->origin.delta_entry = true;
	return true;
}

/*
 * The graph the content key names, made from a cached graph of an earlier content of the table
 * (a flat graph or a delta entry) and the rows changed since (see the file comment): preferably a
 * delta from the base's root (extend_delta: patched->delta_segment, not pinned: it goes with this
 * mapping until graph_cache_publish_delta takes it), else the patched graph written straight into
 * a new shared-memory segment in the flat form the cache keeps (patched->segment, not pinned
 * either, for graph_cache_publish_patched), with what its publish needs.  False (nothing left
 * allocated) when the caller must read and build.
 */
bool
graph_cache_patch(const EdgeScanTarget *target, bool directed, const GraphCacheKey *key,
				  const GraphCacheWriters *writers, const PrAllocator *alloc,
				  GraphCachePatched *patched)
{
	Oid			schema = cache_extension_schema();
	EdgeRowReader reader;
	GraphCacheBase base;
	ChangeRows	changes = {0};
	Relation	rel;
	bool		read;
	bool		refused = false;
	PrStatus	status = PR_ERR_INVALID;
	PrError		err = {0};
	PrGraphPatch *plan = &patched->plan;
	const PrGraph *root;
	Size		bytes = 0;
	bool		no_segment = false;
	ExtendTimes extend_times = {0};
	double		started = pr_clock_seconds(),
				acquired,
				read_at,
				extended,
				planned,
				created,
				prefaulted,
				written;

	memset(patched, 0, sizeof(GraphCachePatched));
	if (writers == NULL || writers->count < 0 || !OidIsValid(schema) ||
		!OidIsValid(get_relname_relid(CHANGE_ROWS_TABLE, schema)) ||
		!cache_capture_on(target->relid, schema))
		return false;
	graph_heapscan_reader_init(&reader, target);
	if (reader.weight_kind == WEIGHT_UNSUPPORTED)
		return false;
	if (!graph_cache_acquire_base(key, writers, &base))
		return false;
	root = &base.hit.graph;
	acquired = pr_clock_seconds();
	changes.cxt = CurrentMemoryContext;
	changes.max_rows = Max((int64) PATCH_MIN_ROWS,
						   (int64) (GRAPH_CACHE_PATCH_FRACTION * (double) root->n_edges));
	rel = relation_open(target->relid, NoLock);	/* locked by graph_scan_resolve */
	read = read_changes(schema, target->relid, &base.seen, RelationGetDescr(rel), &reader,
						&changes);
	relation_close(rel, NoLock);
	read_at = pr_clock_seconds();
	patched->origin.base_id = base.hit.id;
	patched->origin.base_nodes = root->n_nodes;
	patched->skipped_rows = base.hit.skipped_rows + changes.skipped;
	patched->delta_rows = (int64) changes.count;
	patched->entry_delta_rows = base.delta_rows + (int64) changes.count;

	if (read && extend_delta(&base, &changes, directed, alloc, patched, &refused,
							 &extend_times))
	{
		graph_cache_release_hit(&base.hit);
		elog(DEBUG1, "powerrank: cached graph of relation %u patched with %zu changed rows as a delta of %lld edges from its root (%lld absent nodes): base found in %.1f ms, rows read in %.1f ms, the root's out-degrees in %.1f ms, its segment of %zu bytes made in %.1f ms, the delta extended into it in %.1f ms, the base released in %.1f ms",
			 target->relid, changes.count, (long long) patched->delta.n_edges,
			 (long long) patched->delta.n_absent, (acquired - started) * 1000.0,
			 (read_at - acquired) * 1000.0, extend_times.facts * 1000.0,
			 dsm_segment_map_length(patched->delta_segment), extend_times.segment * 1000.0,
			 extend_times.extend * 1000.0,
			 (pr_clock_seconds() - read_at -
			  (extend_times.facts + extend_times.segment + extend_times.extend)) * 1000.0);
		return true;
	}
	extended = pr_clock_seconds();

	/* written whole: the root plus the base's delta plus the changes, a new root */
	if (read && !refused)
		status = plan_from_root(root, base.root_weights_known ? &base.root_weights : NULL,
								base.hit.delta_segment != NULL ? &base.hit.delta : NULL,
								changes.changes, changes.count, !directed, alloc, plan, &err);
	planned = pr_clock_seconds();
	if (status == PR_OK)
	{
		/* room for the dangling list's upper bound: the flat form's last array */
		bytes = pr_graph_flat_size(&plan->shape);
		patched->segment = dsm_create(bytes, DSM_CREATE_NULL_IF_MAXSEGMENTS);
		no_segment = patched->segment == NULL;
		if (no_segment)
			pr_graph_patch_free(plan);
	}
	if (status != PR_OK || no_segment)
	{
		graph_cache_release_hit(&base.hit);
		elog(DEBUG1, "powerrank: cached graph of relation %u not patched with the changes since (%s); building it from the rows",
			 target->relid,
			 !read ? "change rows not kept or too many" :
			 refused ? "a deletion of an edge it lacks" :
			 no_segment ? "no shared memory segment left" : err.message);
		if (status == PR_ERR_NOMEM)
			powerrank_report_core_error("graph patch", &err);
		return false;
	}
	created = pr_clock_seconds();
	graph_cache_prefault(patched->segment);
	prefaulted = pr_clock_seconds();
	write_planned(plan, dsm_segment_address(patched->segment), &patched->graph);
	written = pr_clock_seconds();
	elog(DEBUG1, "powerrank: cached graph of relation %u patched with %zu changed rows, written whole: base found in %.1f ms, rows read in %.1f ms, no delta in %.1f ms, planned in %.1f ms, written into its segment in %.1f ms (segment of %zu bytes made in %.1f ms, its pages mapped in %.1f ms, the graph written in %.1f ms)",
		 target->relid, changes.count, (acquired - started) * 1000.0,
		 (read_at - acquired) * 1000.0, (extended - read_at) * 1000.0,
		 (planned - extended) * 1000.0, (written - planned) * 1000.0, bytes,
		 (created - planned) * 1000.0, (prefaulted - created) * 1000.0,
		 (written - prefaulted) * 1000.0);
	/* the base's results carry by the plan's map: at most its delta's and the plan's edges moved */
	patched->origin.map = plan->map;
	patched->origin.changed_edges = plan->changed_edges;
	for (int64 i = 0; base.hit.delta_segment != NULL && i < base.hit.delta.n_edges; i++)
		patched->origin.changed_edges += Abs(base.hit.delta.edges[i].count);
	patched->weights = plan->range;
	graph_cache_release_hit(&base.hit);
	return true;
}

/* True when relid has a trigger named name. */
static bool
trigger_exists(Oid relid, const char *name)
{
	Relation	rel = relation_open(relid, NoLock);	/* locked by the caller */
	TriggerDesc *triggers = rel->trigdesc;
	bool		found = false;
	int			i;

	for (i = 0; triggers != NULL && i < triggers->numtriggers; i++)
		found |= strcmp(triggers->triggers[i].tgname, name) == 0;
	relation_close(rel, NoLock);
	return found;
}

/*
 * powerrank_cache_live(edges text): makes a tracked table live (needs its owner): installs the
 * capture triggers (see the file comment) unless present, and starts a new base in the change
 * log; returns true when they were installed now.
 */
Datum
powerrank_cache_live(PG_FUNCTION_ARGS)
{
	Oid			schema = get_func_namespace(fcinfo->flinfo->fn_oid);
	Oid			relid;
	char	   *qualified;
	int			i;

	relid = cache_lock_edges_argument(fcinfo, "make a table live",
									  "powerrank_cache_live creates triggers and writes to the change log.");
	if (!pg_class_ownercheck(relid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_TABLE, get_rel_name(relid));
	qualified = quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
										   get_rel_name(relid));
	if (cache_tracking_state(relid, cache_tracking_function(schema), NULL) != TRACKING_ON)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("table %s is not tracked for the powerrank graph cache", qualified),
				 errhint("Track it first: SELECT powerrank_cache_enable(%s);",
						 quote_literal_cstr(qualified))));
	if (cache_capture_on(relid, schema))
		PG_RETURN_BOOL(false);

	/* a disabled or altered one is replaced */
	for (i = 0; i < (int) N_CAPTURE_TRIGGERS; i++)
	{
		const CaptureTrigger *c = &capture_triggers[i];

		cache_install_trigger(qualified, c->name, trigger_exists(relid, c->name),
							  psprintf("AFTER %s", c->event_name),
							  psprintf("REFERENCING %s", c->referencing),
							  cache_qualified_name(schema, CAPTURE_FUNCTION_NAME));
	}
	/* writers before the triggers' rows are in no change rows: a new base */
	cache_log_rebase(schema, relid);
	PG_RETURN_BOOL(true);
}
