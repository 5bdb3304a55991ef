/*
 * shared_nodes.h — the node sets of distributed runs kept in this server's shared memory for
 * every session (shared_nodes.c): a new session's run over the same partitions, whose shards
 * report the graphs the set was merged from, takes the set instead of the shards' node ids and a
 * merge of its own.
 */
#ifndef SHARED_NODES_H
#define SHARED_NODES_H

#include "powerrank.h"

#include "storage/dsm.h"

/* Node sets kept at once (all databases together). */
#define SHARED_NODE_SETS 8

/* Most partitions of a table whose node set is kept. */
#define SHARED_NODE_SET_PARTS 64

/*
 * What a kept node set is found by: the partitioned table and its leaf partitions, in the order
 * of the run's parts.  Compared with memcmp, so always zeroed before filling.  The graphs the set
 * was merged from are in the segment (the coordinator's header): a run takes the set only when
 * every shard reports those graphs.
 */
typedef struct SharedNodesKey
{
	Oid			database;
	Oid			relid;
	int			n_parts;
	Oid			partitions[SHARED_NODE_SET_PARTS];
} SharedNodesKey;

void		shared_nodes_shmem_request(void);
void		shared_nodes_shmem_attach(void);
dsm_segment *shared_nodes_attach(const SharedNodesKey *key);
bool		shared_nodes_keep(const SharedNodesKey *key, dsm_segment *segment);

#endif							/* SHARED_NODES_H */
