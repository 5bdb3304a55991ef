/*
 * estimate.h — the size of an edge table's graph as known without reading the table: exact from
 * the graph cache's registry, else from PostgreSQL's statistics, else unknown (estimate.c).  Used
 * by powerrank_estimate and by the planner's row estimate (support.c).
 */
#ifndef ESTIMATE_H
#define ESTIMATE_H

#include "powerrank.h"

#include "access/attnum.h"

#include "cache/graph_cache.h"

/* The graph a call would build, as far as it is known. */
typedef struct GraphSize
{
	double		rows;			/* edge rows kept (NULLs skipped), -1 unknown */
	double		nodes;			/* -1 unknown */
	double		stored_edges;	/* -1 unknown */
	bool		cached;			/* exact, from the graph cache */
	int64		cache_bytes;	/* the cache entry's bytes (when cached) */
	bool		out_edges_kept; /* the cache entry keeps its graph's out-edges (HITS maps them) */
} GraphSize;

/* The edge table and columns whose graph is sized, and which cached graph may answer. */
typedef struct GraphSizeTarget
{
	Oid			relid;			/* the edge table (a view's size is unknown) */
	int			n_columns;		/* 2 (src, dst) or 3 (with weight) */
	AttrNumber	attnums[3];		/* src, dst, weight */
	Oid			types[3];		/* their base types */
	bool		directed;
	const GraphCacheKey *cache_key; /* the key the run would be served under (graph_cache_probe),
									 * or NULL */
	bool		latest_cached;	/* without cache_key: the most recently used cached graph of
								 * these src and dst columns, whatever content it was built from */
} GraphSizeTarget;

void		graph_size_of_table(const GraphSizeTarget *target, GraphSize *size);

#endif							/* ESTIMATE_H */
