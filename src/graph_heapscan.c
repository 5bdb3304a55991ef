/*
 * graph_heapscan.c — reads the edge columns of a whole table with a direct sequential scan through
 * the table access method (table_beginscan under the statement's snapshot), converting the columns
 * in C exactly as the SPI reader's casts to bigint and double precision do.  It runs after the
 * same resolution and privilege checks as the SPI reader (graph_scan_resolve), and only where it
 * reads the same rows a SELECT would: a plain table or materialized view, without row-level
 * security for the caller, without inheritance children, and with no executor permission hook
 * installed.  Elsewhere graph_scan.c keeps the SPI reader.
 */
#include "powerrank.h"

#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"

#include "graph_heapscan.h"

/* Rows between two interrupt checks (and resets of the per-row conversion context). */
#define HEAPSCAN_CHECK_EVERY 4096

int			powerrank_table_reader = TABLE_READER_AUTO;

static const struct config_enum_entry table_reader_options[] = {
	{"auto", TABLE_READER_AUTO, false},
	{"spi", TABLE_READER_SPI, false},
	{"direct", TABLE_READER_DIRECT, false},
	{NULL, 0, false}
};

/* How a weight column's value becomes a double (the cast to double precision, done in C). */
typedef enum WeightKind
{
	WEIGHT_INT2,
	WEIGHT_INT4,
	WEIGHT_INT8,
	WEIGHT_FLOAT4,
	WEIGHT_FLOAT8,
	WEIGHT_NUMERIC,
	WEIGHT_UNSUPPORTED
} WeightKind;

/* Defines powerrank.table_reader (superuser-only: it exists to compare the readers in tests). */
void
graph_heapscan_guc_init(void)
{
	DefineCustomEnumVariable("powerrank.table_reader",
							 "Reader of the table form: auto (a direct table scan where it reads what a SELECT would, SPI elsewhere), spi, or direct (an ERROR where it may not be used).",
							 NULL,
							 &powerrank_table_reader,
							 TABLE_READER_AUTO, table_reader_options,
							 PGC_SUSET, 0, NULL, NULL, NULL);
}

/* The conversion the weight column's (base) type needs. */
static WeightKind
weight_kind(Oid type)
{
	switch (type)
	{
		case INT2OID:
			return WEIGHT_INT2;
		case INT4OID:
			return WEIGHT_INT4;
		case INT8OID:
			return WEIGHT_INT8;
		case FLOAT4OID:
			return WEIGHT_FLOAT4;
		case FLOAT8OID:
			return WEIGHT_FLOAT8;
		case NUMERICOID:
			return WEIGHT_NUMERIC;
		default:
			return WEIGHT_UNSUPPORTED;
	}
}

/*
 * Why the direct scan may not read target (a constant sentence), or NULL when it may: it must read
 * exactly the rows and values that the SPI reader's SELECT would.
 */
const char *
graph_heapscan_refusal(const EdgeScanTarget *target)
{
	char		relkind = get_rel_relkind(target->relid);
	const char *reason = NULL;
	Relation	rel;

	if (relkind == RELKIND_VIEW)
		return "it is a view";
	if (relkind == RELKIND_FOREIGN_TABLE)
		return "it is a foreign table";
	if (relkind == RELKIND_PARTITIONED_TABLE)
		return "it is a partitioned table";
	if (relkind != RELKIND_RELATION && relkind != RELKIND_MATVIEW)
		return "it is not a table";
	if (ExecutorCheckPerms_hook != NULL)
		return "an executor permission hook is installed";
	if (has_subclass(target->relid))
		return "it has inheritance children";
	if (target->n_columns == 3 && weight_kind(target->columns[2].type) == WEIGHT_UNSUPPORTED)
		return "its weight column's type has no built-in conversion here";
	/* ERRORs like the SELECT would when row_security is off and a policy applies */
	if (check_enable_rls(target->relid, InvalidOid, false) == RLS_ENABLED)
		return "row-level security applies to the current user";

	rel = relation_open(target->relid, NoLock); /* locked by graph_scan_resolve */
	if (RELATION_IS_OTHER_TEMP(rel))
		reason = "it is a temporary table of another session";
	else if (!RelationIsPopulated(rel))
		reason = "it is a materialized view that has not been populated";
	relation_close(rel, NoLock);
	return reason;
}

/* An endpoint value of column type type as bigint (the int2/int4 -> int8 casts). */
static inline int64
endpoint_value(Datum value, Oid type)
{
	if (type == INT8OID)
		return DatumGetInt64(value);
	if (type == INT4OID)
		return (int64) DatumGetInt32(value);
	return (int64) DatumGetInt16(value);
}

/* A weight value as double precision, with the same functions as the casts to float8. */
static inline double
weight_value(Datum value, WeightKind kind)
{
	switch (kind)
	{
		case WEIGHT_INT2:
			return (double) DatumGetInt16(value);
		case WEIGHT_INT4:
			return (double) DatumGetInt32(value);
		case WEIGHT_INT8:
			return (double) DatumGetInt64(value);
		case WEIGHT_FLOAT4:
			return (double) DatumGetFloat4(value);
		case WEIGHT_FLOAT8:
			return DatumGetFloat8(value);
		case WEIGHT_NUMERIC:
			return DatumGetFloat8(DirectFunctionCall1(numeric_float8, value));
		case WEIGHT_UNSUPPORTED:
			break;
	}
	elog(ERROR, "unsupported weight conversion %d", (int) kind);
	return 0.0;
}

/* Room for the rows the catalog expects (a hint: the list still grows by doubling past it). */
static void
reserve_expected_rows(Relation rel, EdgeList *edges)
{
	double		expected = rel->rd_rel->reltuples;

	if (expected > 0 && expected < (double) (MaxAllocHugeSize / sizeof(int64)) / 2)
		edge_list_reserve(edges, (Size) (expected * 1.05) + 1024);
}

/*
 * Reads the edge columns of every row of target visible to the statement's snapshot into edges
 * (initialised by the caller): rows with a NULL endpoint (or NULL weight) are skipped and counted,
 * invalid weights are errors, exactly as in the SPI reader.  A cancel is noticed every few
 * thousand rows; on an ERROR the scan's buffer pins and relation reference go with the resource
 * owner.
 */
void
graph_heapscan_fetch(const EdgeScanTarget *target, EdgeList *edges)
{
	AttrNumber	src_attnum = target->columns[0].attnum;
	AttrNumber	dst_attnum = target->columns[1].attnum;
	AttrNumber	weight_attnum = edges->weighted ? target->columns[2].attnum : InvalidAttrNumber;
	Oid			src_type = target->columns[0].type;
	Oid			dst_type = target->columns[1].type;
	WeightKind	kind = edges->weighted ? weight_kind(target->columns[2].type) : WEIGHT_FLOAT8;
	AttrNumber	max_attnum = Max(Max(src_attnum, dst_attnum), weight_attnum);
	MemoryContext row_cxt;
	MemoryContext old_cxt;
	Relation	rel;
	TableScanDesc scan;
	TupleTableSlot *slot;
	uint32		until_check = HEAPSCAN_CHECK_EVERY;

	rel = table_open(target->relid, AccessShareLock);
	reserve_expected_rows(rel, edges);
	row_cxt = AllocSetContextCreate(CurrentMemoryContext, "powerrank row conversion",
									ALLOCSET_SMALL_SIZES);
	slot = table_slot_create(rel, NULL);
	scan = table_beginscan(rel, GetActiveSnapshot(), 0, NULL);
	old_cxt = MemoryContextSwitchTo(row_cxt);

	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		Datum	   *values;
		bool	   *isnull;
		double		weight = 1.0;
		bool		weight_null = false;

		if (unlikely(--until_check == 0))
		{
			until_check = HEAPSCAN_CHECK_EVERY;
			CHECK_FOR_INTERRUPTS();
			MemoryContextReset(row_cxt);
		}
		slot_getsomeattrs(slot, max_attnum);
		values = slot->tts_values;
		isnull = slot->tts_isnull;

		/* the SELECT's casts run before its rows are looked at: a failing cast wins */
		if (weight_attnum != InvalidAttrNumber)
		{
			weight_null = isnull[weight_attnum - 1];
			if (!weight_null)
				weight = weight_value(values[weight_attnum - 1], kind);
		}
		if (isnull[src_attnum - 1] || isnull[dst_attnum - 1] || weight_null)
		{
			edges->skipped++;
			continue;
		}
		{
			int64		src = endpoint_value(values[src_attnum - 1], src_type);
			int64		dst = endpoint_value(values[dst_attnum - 1], dst_type);

			if (weight_attnum != InvalidAttrNumber)
				edge_list_check_weight(weight, src, dst, target->relname);
			edge_list_append(edges, src, dst, weight);
		}
	}

	MemoryContextSwitchTo(old_cxt);
	table_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	MemoryContextDelete(row_cxt);
	table_close(rel, AccessShareLock);
}
