/*
 * graph_scan.h — reads the edge rows of a table (or view) named by the caller, with the caller's
 * privileges and row-level security (a direct table scan where none applies, SPI otherwise).
 */
#ifndef GRAPH_SCAN_H
#define GRAPH_SCAN_H

#include "graph/edge_list.h"
#include "graph/edge_table.h"

Oid			graph_scan_resolve_relation(text *relation);
void		graph_scan_resolve(const EdgeTableSpec *spec, EdgeScanTarget *target);
void		graph_scan_end(EdgeScanTarget *target);
void		graph_scan_fetch(const EdgeScanTarget *target, MemoryContext cxt, EdgeList *edges);
void		graph_scan_fetch_into(const EdgeScanTarget *target, EdgeList *edges);
Size		graph_scan_max_rows(const EdgeScanTarget *target);
int64		graph_scan_estimated_rows(const EdgeScanTarget *target);
void		graph_scan_table(const EdgeTableSpec *spec, MemoryContext cxt, EdgeList *edges);
void		graph_scan_report_skipped(int64 skipped, bool weighted);

#endif							/* GRAPH_SCAN_H */
