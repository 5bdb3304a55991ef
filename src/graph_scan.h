/*
 * graph_scan.h — reads the edge rows of a table (or view) named by the caller, through SPI, with
 * the caller's privileges and row-level security.
 */
#ifndef GRAPH_SCAN_H
#define GRAPH_SCAN_H

#include "edge_list.h"

/* Which relation and columns to read. */
typedef struct EdgeTableSpec
{
	text	   *relation;		/* table name as given, parsed like regclass */
	const char *src_column;
	const char *dst_column;
	const char *weight_column;	/* NULL: unweighted */
} EdgeTableSpec;

void		graph_scan_table(const EdgeTableSpec *spec, MemoryContext cxt, EdgeList *edges);
void		graph_scan_report_skipped(int64 skipped, bool weighted);

#endif							/* GRAPH_SCAN_H */
