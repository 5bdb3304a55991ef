/*
 * shared_nodes.c — the registry of node sets that distributed runs keep for every session of this
 * server (shared_nodes.h).
 *
 * With shared_preload_libraries = 'powerrank', shmem_request_hook reserves SHARED_NODE_SETS slots
 * and one LWLock (tranche "powerrank_distributed").  A slot names a partitioned table's parts
 * (SharedNodesKey) and holds a pinned dynamic shared memory segment that the coordinator wrote
 * (coordinator.c: the graphs of the parts it was merged from, the parts' node ids, out-strengths
 * and roles, the merged node set).  A run keeps one set per key: a new set replaces the one before
 * (its segment unpinned), and a set for a new key takes a free slot or the least recently used
 * one.  A set is at most powerrank.cache_size.  A reader maps the segment under the lock; its
 * mapping keeps the segment alive after it is replaced, and it copies what it needs.
 */
#include "powerrank.h"

#include "miscadmin.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"

#include "distributed/shared_nodes.h"

/* One slot of the registry. */
typedef struct SharedNodesSlot
{
	bool		used;
	SharedNodesKey key;
	dsm_handle	handle;
	TimestampTz last_used;
} SharedNodesSlot;

/* The registry in the main shared memory. */
typedef struct SharedNodesRegistry
{
	LWLock	   *lock;
	SharedNodesSlot slots[SHARED_NODE_SETS];
} SharedNodesRegistry;

static SharedNodesRegistry *registry = NULL;

/* Asks the postmaster for the registry's shared memory and its lock (the request hook's part). */
void
shared_nodes_shmem_request(void)
{
	RequestAddinShmemSpace(MAXALIGN(sizeof(SharedNodesRegistry)));
	RequestNamedLWLockTranche("powerrank_distributed", 1);
}

/*
 * Attaches to (or, in the postmaster, creates and clears) the registry (the startup hook's part;
 * the caller holds AddinShmemInitLock).
 */
void
shared_nodes_shmem_attach(void)
{
	bool		found;

	registry = ShmemInitStruct("powerrank distributed node sets", sizeof(SharedNodesRegistry),
							   &found);
	if (!found)
	{
		memset(registry, 0, sizeof(SharedNodesRegistry));
		registry->lock = &(GetNamedLWLockTranche("powerrank_distributed"))->lock;
	}
}

/* The slot of key, or -1.  Caller holds the lock. */
static int
find_slot(const SharedNodesKey *key)
{
	for (int i = 0; i < SHARED_NODE_SETS; i++)
		if (registry->slots[i].used &&
			memcmp(&registry->slots[i].key, key, sizeof(SharedNodesKey)) == 0)
			return i;
	return -1;
}

/*
 * Maps the segment of the node set kept under key (NULL when none, or without preload); the
 * caller detaches it when done.
 */
dsm_segment *
shared_nodes_attach(const SharedNodesKey *key)
{
	dsm_segment *attached = NULL;
	int			slot;

	if (registry == NULL)
		return NULL;
	LWLockAcquire(registry->lock, LW_EXCLUSIVE);
	slot = find_slot(key);
	if (slot >= 0)
	{
		registry->slots[slot].last_used = GetCurrentTimestamp();
		attached = dsm_attach(registry->slots[slot].handle);
	}
	LWLockRelease(registry->lock);
	return attached;
}

/*
 * Keeps segment (not pinned, written whole) as the node set of key, in place of the set kept under
 * key before, else in a free slot or the least recently used one; returns whether it did (not
 * without preload, nor when the segment is larger than powerrank.cache_size).  The caller detaches
 * its mapping: a kept segment stays pinned, another goes.
 */
bool
shared_nodes_keep(const SharedNodesKey *key, dsm_segment *segment)
{
	dsm_handle	unpin = DSM_HANDLE_INVALID;
	bool		had = false;
	int			slot;

	if (registry == NULL ||
		dsm_segment_map_length(segment) > (Size) powerrank_cache_size_mb * 1024 * 1024)
		return false;
	LWLockAcquire(registry->lock, LW_EXCLUSIVE);
	slot = find_slot(key);
	for (int i = 0; slot < 0 && i < SHARED_NODE_SETS; i++)
		if (!registry->slots[i].used)
			slot = i;
	if (slot < 0)
	{
		slot = 0;
		for (int i = 1; i < SHARED_NODE_SETS; i++)
			if (registry->slots[i].last_used < registry->slots[slot].last_used)
				slot = i;
	}
	if (registry->slots[slot].used)
	{
		unpin = registry->slots[slot].handle;
		had = true;
	}
	dsm_pin_segment(segment);
	registry->slots[slot].used = true;
	registry->slots[slot].key = *key;
	registry->slots[slot].handle = dsm_segment_handle(segment);
	registry->slots[slot].last_used = GetCurrentTimestamp();
	LWLockRelease(registry->lock);
	if (had)
		dsm_unpin_segment(unpin);
	return true;
}
