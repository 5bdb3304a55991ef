/*
 * edge_table.h — the table a read of edges names: the caller's relation and columns, and the same
 * resolved, locked and checked for the read (graph_scan.c resolves it; the direct and parallel
 * scans and the cache's probe take it).
 */
#ifndef EDGE_TABLE_H
#define EDGE_TABLE_H

#include "postgres.h"

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

#endif							/* EDGE_TABLE_H */
