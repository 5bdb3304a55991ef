/*
 * rankgraph.h — the rankgraph SQL type: a whole graph (the core's flat form) in one varlena value,
 * made by the powerrank_graph aggregate and consumed by pagerank/hits/rwr(graph rankgraph, ...).
 */
#ifndef RANKGRAPH_H
#define RANKGRAPH_H

#include "powerrank.h"

/*
 * The varlena: this header (16 bytes, so the flat graph after it starts 8-byte aligned as
 * pr_graph_view_flat requires), then pr_graph_write_flat's buffer.
 */
typedef struct RankGraphData
{
	int32		vl_len_;		/* varlena header (do not touch directly) */
	uint32		magic;			/* RANKGRAPH_MAGIC */
	int64		skipped_rows;	/* rows the aggregate skipped for a NULL */
	/* flat graph follows */
} RankGraphData;

#define RANKGRAPH_MAGIC UINT32_C(0x31475250)	/* "PRG1" little-endian */

Datum		rankgraph_make(const PrGraph *graph, int64 skipped_rows);
void		rankgraph_view(Datum value, PrGraph *view, int64 *skipped_rows);

#endif							/* RANKGRAPH_H */
