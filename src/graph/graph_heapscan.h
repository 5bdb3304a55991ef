/*
 * graph_heapscan.h — the fast reader of the table form: a direct sequential scan through the
 * table access method, used when it reads exactly the rows a SELECT would (no row-level security
 * for the caller, no inheritance children, a plain table or materialized view); the SPI reader of
 * graph_scan.c stays the general path.  The row conversion (EdgeRowReader) is shared with the
 * parallel reader (graph_parallel_read.c), so both produce the same values from the same rows.
 */
#ifndef GRAPH_HEAPSCAN_H
#define GRAPH_HEAPSCAN_H

#include "graph/edge_list.h"
#include "graph/edge_table.h"

#include "access/tableam.h"
#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "utils/fmgrprotos.h"

/* powerrank.table_reader: which reader the table form uses. */
typedef enum TableReader
{
	TABLE_READER_AUTO,			/* direct scan when allowed, SPI otherwise */
	TABLE_READER_SPI,			/* always SPI */
	TABLE_READER_DIRECT			/* direct scan; ERROR when it is not allowed (tests) */
} TableReader;

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

/* What a scan needs to turn a stored row into an edge: column numbers, types and conversion. */
typedef struct EdgeRowReader
{
	AttrNumber	src_attnum;
	AttrNumber	dst_attnum;
	AttrNumber	weight_attnum;	/* InvalidAttrNumber: unweighted */
	AttrNumber	max_attnum;		/* attributes to deform */
	Oid			src_type;
	Oid			dst_type;
	WeightKind	weight_kind;
	const char *relname;		/* for the invalid-weight error */
} EdgeRowReader;

/* Rows between two interrupt checks (and resets of the per-row conversion context). */
#define HEAPSCAN_CHECK_EVERY 4096

extern int	powerrank_table_reader;

void		graph_heapscan_guc_init(void);
const char *graph_heapscan_refusal(const EdgeScanTarget *target);
void		graph_heapscan_reserve(Relation rel, EdgeList *edges);
Size		graph_heapscan_max_rows(const EdgeScanTarget *target);
void		graph_heapscan_reader_init(EdgeRowReader *reader, const EdgeScanTarget *target);
void		graph_heapscan_read(const EdgeRowReader *reader, Relation rel, TableScanDesc scan,
								EdgeList *edges);
void		graph_heapscan_fetch(const EdgeScanTarget *target, EdgeList *edges);

/* An endpoint value of column type type as bigint (the int2/int4 -> int8 casts). */
static inline int64
graph_heapscan_endpoint(Datum value, Oid type)
{
	if (type == INT8OID)
		return DatumGetInt64(value);
	if (type == INT4OID)
		return (int64) DatumGetInt32(value);
	return (int64) DatumGetInt16(value);
}

/* A weight value as double precision, with the same functions as the casts to float8. */
static inline double
graph_heapscan_weight(Datum value, WeightKind kind)
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

/*
 * Converts the row in slot into (src, dst, weight) as the SPI reader's casts would, without
 * checking the weight's value: false when a used column is NULL (the row is skipped and counted
 * by the caller).  Allocations (numeric conversion) go to the current memory context.
 */
static inline bool
graph_heapscan_convert_row_unchecked(const EdgeRowReader *reader, TupleTableSlot *slot,
									 int64 *src, int64 *dst, double *weight)
{
	Datum	   *values;
	bool	   *isnull;
	bool		weight_null = false;

	slot_getsomeattrs(slot, reader->max_attnum);
	values = slot->tts_values;
	isnull = slot->tts_isnull;
	*weight = 1.0;

	/* the SELECT's casts run before its rows are looked at: a failing cast wins */
	if (reader->weight_attnum != InvalidAttrNumber)
	{
		weight_null = isnull[reader->weight_attnum - 1];
		if (!weight_null)
			*weight = graph_heapscan_weight(values[reader->weight_attnum - 1],
											reader->weight_kind);
	}
	if (isnull[reader->src_attnum - 1] || isnull[reader->dst_attnum - 1] || weight_null)
		return false;
	*src = graph_heapscan_endpoint(values[reader->src_attnum - 1], reader->src_type);
	*dst = graph_heapscan_endpoint(values[reader->dst_attnum - 1], reader->dst_type);
	return true;
}

/*
 * Converts the row in slot into (src, dst, weight) as the SPI reader's casts would: false when a
 * used column is NULL (the row is skipped and counted by the caller), an ERROR for an invalid
 * weight.  Allocations (numeric conversion) go to the current memory context.
 */
static inline bool
graph_heapscan_convert_row(const EdgeRowReader *reader, TupleTableSlot *slot, int64 *src,
						   int64 *dst, double *weight)
{
	if (!graph_heapscan_convert_row_unchecked(reader, slot, src, dst, weight))
		return false;
	if (reader->weight_attnum != InvalidAttrNumber)
		edge_list_check_weight(*weight, *src, *dst, reader->relname);
	return true;
}

#endif							/* GRAPH_HEAPSCAN_H */
