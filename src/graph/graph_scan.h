/*
 * graph_scan.h — reads the edge rows of a table (or view) named by the caller, with the caller's
 * privileges and row-level security (a direct table scan where none applies, SPI otherwise).
 */
#ifndef GRAPH_SCAN_H
#define GRAPH_SCAN_H

#include "graph/edge_list.h"

#include "access/attnum.h"

/* Which relation and columns to read. */
typedef struct EdgeTableSpec
{
	text	   *relation;		/* table name as given, parsed like regclass */
	const char *src_column;
	const char *dst_column;
	const char *weight_column;	/* NULL: unweighted */
} EdgeTableSpec;

/* A column the scan reads: its name, the argument that named it, and what the catalog says. */
typedef struct ScanColumn
{
	const char *name;
	const char *argument;		/* "src_column", ... (for messages) */
	AttrNumber	attnum;
	Oid			type;			/* base type of the column */
} ScanColumn;

/*
 * A relation and its edge columns, resolved, locked and checked (privileges, types), and the
 * snapshot that reads it: in READ COMMITTED a fresh one taken after the lock was granted, pushed
 * as the active snapshot until graph_scan_end.
 */
typedef struct EdgeScanTarget
{
	Oid			relid;
	const char *relname;
	int			n_columns;		/* 2 (src, dst) or 3 (with weight) */
	ScanColumn	columns[3];		/* src, dst, weight */
	bool		snapshot_pushed;	/* graph_scan_resolve pushed the read's snapshot */
} EdgeScanTarget;

void		graph_scan_resolve(const EdgeTableSpec *spec, EdgeScanTarget *target);
void		graph_scan_end(EdgeScanTarget *target);
void		graph_scan_fetch(const EdgeScanTarget *target, MemoryContext cxt, EdgeList *edges);
void		graph_scan_fetch_into(const EdgeScanTarget *target, EdgeList *edges);
Size		graph_scan_max_rows(const EdgeScanTarget *target);
int64		graph_scan_estimated_rows(const EdgeScanTarget *target);
void		graph_scan_table(const EdgeTableSpec *spec, MemoryContext cxt, EdgeList *edges);
void		graph_scan_report_skipped(int64 skipped, bool weighted);

#endif							/* GRAPH_SCAN_H */
