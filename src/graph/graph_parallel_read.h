/*
 * graph_parallel_read.h — the direct table scan of graph_heapscan.c spread over PostgreSQL
 * parallel workers (and the leader): each participant scans disjoint blocks of the table under
 * the leader's snapshot into shared memory, and the leader gathers the rows in block order, so
 * the edge list is the same whatever the number of workers.
 */
#ifndef GRAPH_PARALLEL_READ_H
#define GRAPH_PARALLEL_READ_H

#include "graph/edge_list.h"
#include "graph/edge_table.h"

/* powerrank.read_workers: -1 = as max_parallel_workers_per_gather allows, 0 = serial, N. */
extern int	powerrank_read_workers;

/* What a parallel read did (for the DEBUG1 line of graph_scan.c). */
typedef struct ParallelReadInfo
{
	int			planned;		/* workers asked for */
	int			launched;		/* workers that started */
	double		scan_seconds;	/* setup and the participants' scan */
	double		gather_seconds; /* the leader's copy into the edge list */
} ParallelReadInfo;

void		graph_parallel_read_guc_init(void);
bool		graph_parallel_read_fetch(const EdgeScanTarget *target, EdgeList *edges,
									  ParallelReadInfo *info);

#endif							/* GRAPH_PARALLEL_READ_H */
