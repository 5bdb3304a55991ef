/*
 * distributed.h — ranking a partitioned edge table whose partitions live on other servers
 * (postgres_fdw foreign tables) where its edges live: every partition is one part with its own
 * graph and engine (a shard server's session, or this backend for a local partition), and this
 * backend runs the driver over an engine whose products fan out to the parts (coordinator.c).
 */
#ifndef DISTRIBUTED_H
#define DISTRIBUTED_H

#include "powerrank.h"

#include "graph/edge_table.h"

/* powerrank.distributed: when a partitioned table with foreign partitions is ranked by its parts. */
typedef enum DistributedMode
{
	DISTRIBUTED_AUTO = 0,		/* whenever the table qualifies; the single-server read otherwise */
	DISTRIBUTED_ON,				/* as auto, but a table that does not qualify is an ERROR */
	DISTRIBUTED_OFF				/* never: every table is read into this backend */
} DistributedMode;

/* powerrank.distributed_exchange: how the parts' vectors travel between products. */
typedef enum DistributedExchange
{
	DISTRIBUTED_EXCHANGE_AUTO = 0,	/* shard to shard (Gloo) where the shards reach each other */
	DISTRIBUTED_EXCHANGE_RELAY	/* always through the coordinator */
} DistributedExchange;

extern int	powerrank_distributed;
extern int	powerrank_distributed_min_rows;
extern int	powerrank_distributed_exchange;

typedef struct DistCluster DistCluster;

void		distributed_init(void);
bool		distributed_wanted(const EdgeTableSpec *spec, bool directed, bool gpu_required);
DistCluster *distributed_open(const EdgeTableSpec *spec, bool out_edges, MemoryContext cxt,
							  PrGraph *graph);
PrEngine   *distributed_engine_create(DistCluster *cluster, const PrAllocator *alloc,
									  PrError *err);
int64		distributed_edges(const DistCluster *cluster);
bool		distributed_cache_hit(const DistCluster *cluster);
void		distributed_exchange(const DistCluster *cluster, int64 *bytes, int64 *peer_bytes,
								 double *seconds);
void		distributed_keep_parts(DistCluster *cluster);

#endif							/* DISTRIBUTED_H */
