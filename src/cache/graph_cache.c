/*
 * graph_cache.c — the registry of cached graphs in the main shared memory and the dynamic shared
 * memory segments that hold them.
 *
 * With shared_preload_libraries = 'powerrank', shmem_request_hook reserves a fixed array of
 * GRAPH_CACHE_SLOTS entries and one LWLock (tranche "powerrank_cache").  Each cached graph is one
 * dynamic shared memory segment holding the core's flat form (pr_graph_write_flat: a header and
 * arrays at offsets, so every process may map it at any address), pinned with dsm_pin_segment so
 * it outlives the backend that built it.
 *
 * Life of an entry:
 *   publish   a backend that built a graph privately copies it into a new segment, then, under the
 *             lock, evicts least recently used idle entries until the new one fits under
 *             powerrank.cache_size, pins the segment and fills a free slot (state READY).  Nothing
 *             in between can raise an ERROR, so no segment stays pinned without an entry; an ERROR
 *             before the pin lets the resource owner destroy the unpinned segment.
 *   acquire   a reader finds the READY entry with its key, raises its refcount, attaches the
 *             segment and registers an on_dsm_detach callback that lowers the refcount again.  The
 *             segment is detached at the end of the run or by the resource owner on ERROR/cancel,
 *             so the refcount can never leak.
 *   evict     (LRU, powerrank_cache_drop, DROP TABLE) an idle entry is freed and its segment
 *             unpinned at once; an entry in use becomes RETIRED: no new reader finds it, and the
 *             last reader to leave frees it and unpins the segment.
 */
#include "cache/graph_cache.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"

#include "pr_graph_flat.h"

/* State of a registry slot. */
typedef enum GraphCacheState
{
	ENTRY_FREE = 0,
	ENTRY_READY,				/* served to readers */
	ENTRY_RETIRED				/* evicted while in use: freed when its refcount drops to 0 */
} GraphCacheState;

/* One slot of the registry. */
typedef struct GraphCacheEntry
{
	GraphCacheKey key;
	GraphCacheState state;
	uint64		id;				/* unique for the life of the cluster: tells reused slots apart */
	dsm_handle	handle;
	int64		nodes;
	int64		edges;
	int64		skipped_rows;	/* rows skipped for a NULL when it was built (for the NOTICE) */
	int64		bytes;
	TimestampTz built_at;
	TimestampTz last_used;
	int64		hits;
	int			refcount;		/* backends attached right now */
} GraphCacheEntry;

/* The registry in the main shared memory. */
typedef struct GraphCacheShared
{
	LWLock	   *lock;
	uint64		next_id;
	int			segments;		/* segments pinned by the cache (READY + RETIRED entries) */
	int64		bytes;			/* their total size */
	GraphCacheEntry entries[GRAPH_CACHE_SLOTS];
} GraphCacheShared;

/* Slot numbers travel with the entry id in one Datum: id << 8 | slot. */
StaticAssertDecl(GRAPH_CACHE_SLOTS <= 256, "slot numbers must fit in 8 bits");

static GraphCacheShared *cache = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* Asks the postmaster for the registry's shared memory and its lock. */
static void
graph_cache_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(GraphCacheShared)));
	RequestNamedLWLockTranche("powerrank_cache", 1);
}

/* Attaches to (or, in the postmaster, creates and clears) the registry. */
static void
graph_cache_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	cache = ShmemInitStruct("powerrank graph cache", sizeof(GraphCacheShared), &found);
	if (!found)
	{
		memset(cache, 0, sizeof(GraphCacheShared));
		cache->lock = &(GetNamedLWLockTranche("powerrank_cache"))->lock;
		cache->next_id = 1;
	}
	LWLockRelease(AddinShmemInitLock);
}

/* Installs the shared memory hooks; called from _PG_init while preloading. */
void
graph_cache_shmem_init(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = graph_cache_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = graph_cache_shmem_startup;
}

/* True when the registry exists (the library was preloaded). */
bool
graph_cache_available(void)
{
	return cache != NULL;
}

/* Index of the READY entry with this key, or -1.  Caller holds the lock. */
static int
find_ready(const GraphCacheKey *key)
{
	int			i;

	for (i = 0; i < GRAPH_CACHE_SLOTS; i++)
		if (cache->entries[i].state == ENTRY_READY &&
			memcmp(&cache->entries[i].key, key, sizeof(GraphCacheKey)) == 0)
			return i;
	return -1;
}

/* Empties a slot and forgets its segment's size; the caller unpins the segment. */
static void
free_entry(GraphCacheEntry *entry)
{
	cache->segments--;
	cache->bytes -= entry->bytes;
	memset(entry, 0, sizeof(GraphCacheEntry));
	entry->state = ENTRY_FREE;
}

/* Unpins segments taken out of the registry (outside the lock). */
static void
unpin_segments(const dsm_handle *handles, int count)
{
	int			i;

	for (i = 0; i < count; i++)
		dsm_unpin_segment(handles[i]);
}

/*
 * Drops a reader's reference to slot's entry (if the slot still holds entry id); a RETIRED entry
 * whose last reader leaves is freed and its segment unpinned.
 */
static void
release_reference(int slot, uint64 id)
{
	GraphCacheEntry *entry = &cache->entries[slot];
	dsm_handle	handle = 0;
	bool		unpin = false;

	LWLockAcquire(cache->lock, LW_EXCLUSIVE);
	if (entry->state != ENTRY_FREE && entry->id == id && entry->refcount > 0)
	{
		entry->refcount--;
		if (entry->state == ENTRY_RETIRED && entry->refcount == 0)
		{
			handle = entry->handle;
			free_entry(entry);
			unpin = true;
		}
	}
	LWLockRelease(cache->lock);
	if (unpin)
		dsm_unpin_segment(handle);
}

/* on_dsm_detach callback of a reader's mapping: releases its reference (normal end or ERROR). */
static void
reader_detached(dsm_segment *segment, Datum arg)
{
	uint64		packed = DatumGetUInt64(arg);

	release_reference((int) (packed & 0xff), packed >> 8);
}

/*
 * Points graph's arrays into a mapped segment written by graph_cache_publish (or by the GPU
 * service's build).  The cache's own writers made it, so only the header is checked (O(1)), not
 * every array as pr_graph_view_flat does for untrusted rankgraph values.
 */
static bool
map_segment(const char *base, Size size, PrGraph *graph)
{
	PrError		err = {0};

	return pr_graph_view_flat_header(base, size, graph, &err) == PR_OK;
}

/*
 * Attaches the segment of the entry a reference was just taken on, and ties the reference to the
 * mapping (released when it is detached).  On ERROR the reference is given back before the ERROR
 * goes on.  NULL when the segment cannot be attached.
 */
static dsm_segment *
attach_entry(dsm_handle handle, int slot, uint64 id)
{
	dsm_segment *volatile attached = NULL;
	volatile bool registered = false;

	PG_TRY();
	{
		attached = dsm_attach(handle);
		if (attached != NULL)
		{
			on_dsm_detach(attached, reader_detached, UInt64GetDatum(id << 8 | (uint64) slot));
			registered = true;
		}
	}
	PG_CATCH();
	{
		if (!registered)
			release_reference(slot, id);
		PG_RE_THROW();
	}
	PG_END_TRY();
	return attached;
}

/*
 * Looks the key up; on a hit, maps the cached graph into graph (read-only: its arrays live in the
 * segment), sets *segment (detach it with graph_cache_release), the skipped-row count of the
 * build and the entry's id (unique for the life of the cluster: the GPU service keys resident
 * graphs by it), counts the hit and returns true.  False on a miss.
 */
bool
graph_cache_acquire(const GraphCacheKey *key, dsm_segment **segment, PrGraph *graph,
					int64 *skipped_rows, uint64 *entry_id)
{
	TimestampTz now = GetCurrentTimestamp();
	GraphCacheEntry *entry;
	dsm_handle	handle;
	uint64		id;
	int			slot;
	dsm_segment *attached;

	*segment = NULL;
	if (cache == NULL)
		return false;
	LWLockAcquire(cache->lock, LW_EXCLUSIVE);
	slot = find_ready(key);
	if (slot < 0)
	{
		LWLockRelease(cache->lock);
		return false;
	}
	entry = &cache->entries[slot];
	entry->refcount++;
	entry->hits++;
	entry->last_used = now;
	id = entry->id;
	handle = entry->handle;
	*skipped_rows = entry->skipped_rows;
	*entry_id = id;
	LWLockRelease(cache->lock);

	attached = attach_entry(handle, slot, id);
	if (attached == NULL)
	{
		release_reference(slot, id);
		return false;
	}
	if (!map_segment(dsm_segment_address(attached), dsm_segment_map_length(attached), graph))
	{
		dsm_detach(attached);
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("cached graph of relation %u is corrupt", key->relid),
				 errhint("Drop it with powerrank_cache_drop().")));
	}
	*segment = attached;
	return true;
}

/* Detaches a mapping taken by graph_cache_acquire (its callback releases the reference). */
void
graph_cache_release(dsm_segment **segment)
{
	if (*segment != NULL)
	{
		dsm_segment *attached = *segment;

		*segment = NULL;
		dsm_detach(attached);
	}
}

/*
 * Makes room for an entry of size bytes under limit: evicts least recently used idle entries
 * (their handles go to evicted) and returns a free slot, or -1 — without evicting anything — when
 * entries in use leave too little room.  Caller holds the lock exclusively.
 */
static int
make_room(int64 size, int64 limit, dsm_handle *evicted, int *n_evicted)
{
	int64		idle_bytes = 0;
	int			idle_entries = 0;
	int			free_slot = -1;
	int			i;

	for (i = 0; i < GRAPH_CACHE_SLOTS; i++)
	{
		GraphCacheEntry *entry = &cache->entries[i];

		if (entry->state == ENTRY_FREE)
			free_slot = i;
		else if (entry->state == ENTRY_READY && entry->refcount == 0)
		{
			idle_bytes += entry->bytes;
			idle_entries++;
		}
	}
	if (cache->bytes - idle_bytes + size > limit || (free_slot < 0 && idle_entries == 0))
		return -1;

	while (cache->bytes + size > limit || free_slot < 0)
	{
		int			lru = -1;

		for (i = 0; i < GRAPH_CACHE_SLOTS; i++)
		{
			GraphCacheEntry *entry = &cache->entries[i];

			if (entry->state == ENTRY_READY && entry->refcount == 0 &&
				(lru < 0 || entry->last_used < cache->entries[lru].last_used))
				lru = i;
		}
		Assert(lru >= 0);
		evicted[(*n_evicted)++] = cache->entries[lru].handle;
		free_entry(&cache->entries[lru]);
		free_slot = lru;
	}
	return free_slot;
}

/* True when two keys name the same content of one table: same storage and log rows seen. */
static bool
same_content(const GraphCacheKey *a, const GraphCacheKey *b)
{
	return a->database == b->database && a->relid == b->relid &&
		a->relfilenode == b->relfilenode &&
		memcmp(a->rebases, b->rebases, sizeof(a->rebases)) == 0 &&
		a->changes == b->changes;
}

/*
 * True when the cache holds the same table as a later snapshot saw it: same storage and rebase
 * rows, more changes.  Caller holds the lock.
 */
static bool
later_content_cached(const GraphCacheKey *key)
{
	int			i;

	for (i = 0; i < GRAPH_CACHE_SLOTS; i++)
	{
		GraphCacheEntry *entry = &cache->entries[i];

		if (entry->state == ENTRY_READY && entry->key.database == key->database &&
			entry->key.relid == key->relid && entry->key.relfilenode == key->relfilenode &&
			memcmp(entry->key.rebases, key->rebases, sizeof(key->rebases)) == 0 &&
			entry->key.changes > key->changes)
			return true;
	}
	return false;
}

/*
 * Evicts the entries of the same table that a snapshot which sees the new key's content no longer
 * asks for: another relfilenode (the table was rewritten under a lock that this publisher's lock
 * excludes, so the old storage is gone), other rebase rows (a reader is only served when its
 * snapshot sees the newest rebase rows), or fewer changes (only older snapshots could use them).
 * Entries of the same content under other columns stay.  Idle entries go now (handles to
 * evicted), the others when their readers leave.  Caller holds the lock exclusively.
 */
static void
retire_stale_entries(const GraphCacheKey *key, dsm_handle *evicted, int *n_evicted)
{
	int			i;

	for (i = 0; i < GRAPH_CACHE_SLOTS; i++)
	{
		GraphCacheEntry *entry = &cache->entries[i];

		if (entry->state != ENTRY_READY || entry->key.database != key->database ||
			entry->key.relid != key->relid || same_content(&entry->key, key))
			continue;
		if (entry->refcount == 0)
		{
			evicted[(*n_evicted)++] = entry->handle;
			free_entry(entry);
		}
		else
			entry->state = ENTRY_RETIRED;
	}
}

/*
 * Registers segment (bytes of a flat graph of nodes and edges, not pinned yet) under key and pins
 * it; false, leaving it unpinned, when another backend published the same key (or the table as a
 * later snapshot saw it) meanwhile or readers hold all the room.  Stale entries of the table are
 * evicted (retire_stale_entries).
 */
static bool
register_segment(const GraphCacheKey *key, dsm_segment *segment, int64 bytes, int64 nodes,
				 int64 edges, int64 skipped_rows, int64 limit)
{
	dsm_handle	evicted[GRAPH_CACHE_SLOTS];
	int			n_evicted = 0;
	TimestampTz now = GetCurrentTimestamp();
	int			slot = -1;

	LWLockAcquire(cache->lock, LW_EXCLUSIVE);
	if (find_ready(key) < 0 && !later_content_cached(key))
	{
		retire_stale_entries(key, evicted, &n_evicted);
		slot = make_room(bytes, limit, evicted, &n_evicted);
	}
	if (slot >= 0)
	{
		GraphCacheEntry *entry = &cache->entries[slot];

		dsm_pin_segment(segment);
		memset(entry, 0, sizeof(GraphCacheEntry));
		entry->key = *key;
		entry->state = ENTRY_READY;
		entry->id = cache->next_id++;
		entry->handle = dsm_segment_handle(segment);
		entry->nodes = nodes;
		entry->edges = edges;
		entry->skipped_rows = skipped_rows;
		entry->bytes = bytes;
		entry->built_at = now;
		entry->last_used = now;
		cache->segments++;
		cache->bytes += bytes;
	}
	LWLockRelease(cache->lock);

	unpin_segments(evicted, n_evicted);
	return slot >= 0;
}

/*
 * Adds a graph built by this backend to the cache under key (out-edges left out: the PageRank
 * family reads in-edges only, HITS adds the out-edges per call).  Does nothing when the cache is
 * off, the graph does not fit in powerrank.cache_size, no segment can be had, or
 * register_segment refuses it.
 */
void
graph_cache_publish(const GraphCacheKey *key, const PrGraph *graph, int64 skipped_rows)
{
	PrGraph		stripped = *graph;
	int64		limit = (int64) powerrank_cache_size_mb * 1024 * 1024;
	dsm_segment *segment;
	Size		size;

	if (cache == NULL || limit <= 0)
		return;
	stripped.has_out_edges = false;
	stripped.out_ptr = NULL;
	stripped.out_dst = NULL;
	stripped.out_weight = NULL;
	size = pr_graph_flat_size(&stripped);
	if ((int64) size > limit)
		return;

	/* Not pinned yet: an ERROR here lets the resource owner destroy the segment. */
	segment = dsm_create(size, DSM_CREATE_NULL_IF_MAXSEGMENTS);
	if (segment == NULL)
		return;
	pr_graph_write_flat_threads(&stripped, dsm_segment_address(segment), powerrank_thread_count());
	(void) register_segment(key, segment, (int64) size, graph->n_nodes, graph->n_edges,
							skipped_rows, limit);
	dsm_detach(segment);
}

/*
 * Adds a segment that already holds a flat graph (in-edges only) of flat_bytes at its start — the
 * GPU service's build, written over the rows it was built from — to the cache under key, as
 * graph_cache_publish does.  The cache counts flat_bytes (the engine gave the rest of the segment
 * back).  True when the cache took it (pinned); the caller's mapping stays either way.
 */
bool
graph_cache_publish_segment(const GraphCacheKey *key, dsm_segment *segment, Size flat_bytes,
							const PrGraph *graph, int64 skipped_rows)
{
	int64		limit = (int64) powerrank_cache_size_mb * 1024 * 1024;

	if (cache == NULL || limit <= 0 || (int64) flat_bytes > limit)
		return false;
	return register_segment(key, segment, (int64) flat_bytes, graph->n_nodes, graph->n_edges,
							skipped_rows, limit);
}

/*
 * Evicts the entries of relid in database (every relation of the database when relid is
 * InvalidOid).  Idle entries are freed now, entries in use when their last reader leaves.
 * Returns how many entries were evicted.
 */
int
graph_cache_drop(Oid database, Oid relid)
{
	dsm_handle	unpinned[GRAPH_CACHE_SLOTS];
	int			n_unpinned = 0;
	int			dropped = 0;
	int			i;

	if (cache == NULL)
		return 0;
	LWLockAcquire(cache->lock, LW_EXCLUSIVE);
	for (i = 0; i < GRAPH_CACHE_SLOTS; i++)
	{
		GraphCacheEntry *entry = &cache->entries[i];

		if (entry->state != ENTRY_READY || entry->key.database != database ||
			(OidIsValid(relid) && entry->key.relid != relid))
			continue;
		dropped++;
		if (entry->refcount == 0)
		{
			unpinned[n_unpinned++] = entry->handle;
			free_entry(entry);
		}
		else
			entry->state = ENTRY_RETIRED;
	}
	LWLockRelease(cache->lock);
	unpin_segments(unpinned, n_unpinned);
	return dropped;
}

/* Copies the READY entries of database into a palloc'd array; returns their count. */
int
graph_cache_snapshot(Oid database, GraphCacheEntryInfo **entries)
{
	GraphCacheEntryInfo *out = palloc0(sizeof(GraphCacheEntryInfo) * GRAPH_CACHE_SLOTS);
	int			count = 0;
	int			i;

	*entries = out;
	if (cache == NULL)
		return 0;
	LWLockAcquire(cache->lock, LW_SHARED);
	for (i = 0; i < GRAPH_CACHE_SLOTS; i++)
	{
		GraphCacheEntry *entry = &cache->entries[i];

		if (entry->state != ENTRY_READY || entry->key.database != database)
			continue;
		out[count].key = entry->key;
		out[count].id = entry->id;
		out[count].nodes = entry->nodes;
		out[count].edges = entry->edges;
		out[count].bytes = entry->bytes;
		out[count].built_at = entry->built_at;
		out[count].last_used = entry->last_used;
		out[count].hits = entry->hits;
		out[count].refcount = entry->refcount;
		count++;
	}
	LWLockRelease(cache->lock);
	return count;
}

/* Fills status with the counters of the whole cache (zeros without preload). */
void
graph_cache_status(GraphCacheStatus *status)
{
	int			i;

	memset(status, 0, sizeof(GraphCacheStatus));
	status->slots = GRAPH_CACHE_SLOTS;
	if (cache == NULL)
	{
		status->slots = 0;
		return;
	}
	LWLockAcquire(cache->lock, LW_SHARED);
	for (i = 0; i < GRAPH_CACHE_SLOTS; i++)
	{
		if (cache->entries[i].state == ENTRY_READY)
			status->entries++;
		else if (cache->entries[i].state == ENTRY_RETIRED)
			status->retired++;
	}
	status->segments = cache->segments;
	status->bytes = cache->bytes;
	LWLockRelease(cache->lock);
}
