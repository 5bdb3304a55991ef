/*
 * graph_heapscan.c — reads the edge columns of a whole table with a direct sequential scan through
 * the table access method (table_beginscan under the read's active snapshot, see graph_scan.c),
 * converting the columns in C exactly as the SPI reader's casts to bigint and double precision do.  It runs after the
 * same resolution and privilege checks as the SPI reader (graph_scan_resolve), and only where it
 * reads the same rows a SELECT would: a plain table or materialized view, without row-level
 * security for the caller, without inheritance children, and with no executor permission hook
 * installed.  Elsewhere graph_scan.c keeps the SPI reader.
 */
#include "powerrank.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"

#include "graph/graph_heapscan.h"

int			powerrank_table_reader = TABLE_READER_AUTO;

static const struct config_enum_entry table_reader_options[] = {
	{"auto", TABLE_READER_AUTO, false},
	{"spi", TABLE_READER_SPI, false},
	{"direct", TABLE_READER_DIRECT, false},
	{NULL, 0, false}
};

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

/*
 * Room for the rows the catalog expects (a hint: the list still grows by doubling past it).  Not
 * for a list in the caller's segment, sized by graph_heapscan_max_rows: the hint (reltuples, an
 * estimate) may exceed that bound and would move the rows out of the segment for nothing.
 */
void
graph_heapscan_reserve(Relation rel, EdgeList *edges)
{
	double		expected = rel->rd_rel->reltuples;

	if (edges->external)
		return;

	if (expected > 0 && expected < (double) (MaxAllocHugeSize / sizeof(int64)) / 2)
		edge_list_reserve(edges, (Size) (expected * 1.05) + 1024);
}

/*
 * The most rows a direct scan of target can return: the table's blocks times the most tuples a
 * page holds when each carries only the edge columns at their fixed widths (wider rows, other
 * columns and dead tuples only lower the real count).  0 when a column has no fixed width.
 */
Size
graph_heapscan_max_rows(const EdgeScanTarget *target)
{
	Relation	rel = relation_open(target->relid, NoLock); /* locked by graph_scan_resolve */
	BlockNumber nblocks = RelationGetNumberOfBlocks(rel);
	Size		data = 0;
	Size		per_page;

	relation_close(rel, NoLock);
	for (int i = 0; i < target->n_columns; i++)
	{
		int16		len = get_typlen(target->columns[i].type);

		if (len <= 0)
			return 0;
		data += (Size) len;
	}
	per_page = (BLCKSZ - SizeOfPageHeaderData) /
		(MAXALIGN(SizeofHeapTupleHeader + data) + sizeof(ItemIdData));
	if (per_page > MaxHeapTuplesPerPage)
		per_page = MaxHeapTuplesPerPage;
	return (Size) nblocks * per_page;
}

/* Fills reader with target's column numbers and conversions. */
void
graph_heapscan_reader_init(EdgeRowReader *reader, const EdgeScanTarget *target)
{
	bool		weighted = target->n_columns == 3;

	reader->src_attnum = target->columns[0].attnum;
	reader->dst_attnum = target->columns[1].attnum;
	reader->weight_attnum = weighted ? target->columns[2].attnum : InvalidAttrNumber;
	reader->max_attnum = Max(Max(reader->src_attnum, reader->dst_attnum), reader->weight_attnum);
	reader->src_type = target->columns[0].type;
	reader->dst_type = target->columns[1].type;
	reader->weight_kind = weighted ? weight_kind(target->columns[2].type) : WEIGHT_FLOAT8;
	reader->relname = target->relname;
}

/*
 * Appends every row that scan (begun on rel) returns to edges: rows with a NULL endpoint (or NULL
 * weight) are skipped and counted, invalid weights are errors.  A cancel is noticed every few
 * thousand rows, when powerrank_progress also gets the rows read so far.  The caller ends the
 * scan.
 */
void
graph_heapscan_read(const EdgeRowReader *reader, Relation rel, TableScanDesc scan,
					EdgeList *edges)
{
	MemoryContext row_cxt;
	MemoryContext old_cxt;
	TupleTableSlot *slot;
	uint32		until_check = HEAPSCAN_CHECK_EVERY;
	int64		src;
	int64		dst;
	double		weight;

	row_cxt = AllocSetContextCreate(CurrentMemoryContext, "powerrank row conversion",
									ALLOCSET_SMALL_SIZES);
	slot = table_slot_create(rel, NULL);
	old_cxt = MemoryContextSwitchTo(row_cxt);

	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		if (unlikely(--until_check == 0))
		{
			until_check = HEAPSCAN_CHECK_EVERY;
			CHECK_FOR_INTERRUPTS();
			MemoryContextReset(row_cxt);
			progress_set_rows_read((int64) (edges->count + edges->skipped));
		}
		if (graph_heapscan_convert_row(reader, slot, &src, &dst, &weight))
			edge_list_append(edges, src, dst, weight);
		else
			edges->skipped++;
	}

	MemoryContextSwitchTo(old_cxt);
	ExecDropSingleTupleTableSlot(slot);
	MemoryContextDelete(row_cxt);
}

/*
 * Reads the edge columns of every row of target visible to the active snapshot (the read's, see
 * graph_scan.c) into edges (initialised by the caller) with one serial scan, exactly as the SPI
 * reader would.  On an ERROR the scan's buffer pins and relation reference go with the resource
 * owner.
 */
void
graph_heapscan_fetch(const EdgeScanTarget *target, EdgeList *edges)
{
	EdgeRowReader reader;
	Relation	rel;
	TableScanDesc scan;

	graph_heapscan_reader_init(&reader, target);
	rel = table_open(target->relid, AccessShareLock);
	graph_heapscan_reserve(rel, edges);
	scan = table_beginscan(rel, GetActiveSnapshot(), 0, NULL);
	graph_heapscan_read(&reader, rel, scan, edges);
	table_endscan(scan);
	table_close(rel, AccessShareLock);
}
