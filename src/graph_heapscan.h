/*
 * graph_heapscan.h — the fast reader of the table form: a direct sequential scan through the
 * table access method, used when it reads exactly the rows a SELECT would (no row-level security
 * for the caller, no inheritance children, a plain table or materialized view); the SPI reader of
 * graph_scan.c stays the general path.
 */
#ifndef GRAPH_HEAPSCAN_H
#define GRAPH_HEAPSCAN_H

#include "graph_scan.h"

/* powerrank.table_reader: which reader the table form uses. */
typedef enum TableReader
{
	TABLE_READER_AUTO,			/* direct scan when allowed, SPI otherwise */
	TABLE_READER_SPI,			/* always SPI */
	TABLE_READER_DIRECT			/* direct scan; ERROR when it is not allowed (tests) */
} TableReader;

extern int	powerrank_table_reader;

void		graph_heapscan_guc_init(void);
const char *graph_heapscan_refusal(const EdgeScanTarget *target);
void		graph_heapscan_fetch(const EdgeScanTarget *target, EdgeList *edges);

#endif							/* GRAPH_HEAPSCAN_H */
