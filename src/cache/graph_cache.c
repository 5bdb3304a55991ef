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
 *   publish   a backend that built a graph privately copies it into a new segment (a patched
 *             graph and the GPU service's build are written into their segment directly), then,
 *             under the lock, evicts least recently used idle entries until the new one fits under
 *             powerrank.cache_size, pins the segment and fills a free slot (state READY; a patch's
 *             publisher keeps a reader's reference through its own mapping).  Nothing in between
 *             can raise an ERROR, so no segment stays pinned without an entry; an ERROR before the
 *             pin lets the resource owner destroy the unpinned segment.
 *   acquire   a reader finds the READY entry with its key, raises its refcount, attaches the
 *             segment (read-only) and registers an on_dsm_detach callback that lowers the refcount
 *             again.  The segment is detached at the end of the run or by the resource owner on
 *             ERROR/cancel, so the refcount can never leak.
 *   evict     (LRU, powerrank_cache_drop, DROP TABLE) an idle entry is freed and its segment
 *             unpinned at once; an entry in use becomes RETIRED: no new reader finds it, and the
 *             last reader to leave frees it and unpins the segment.
 *
 * Kept scores: an entry keeps, for up to GRAPH_CACHE_KEPT parameter sets (GraphCacheScoresKey),
 * two vectors of its nodes' scores in its internal node order, each in its own pinned segment:
 *   result    the scores of a converged run on the entry with that key (graph_cache_keep_scores),
 *             replaced only by a run whose stopping rule bounds its L1 residual tighter.
 *   start     the previous graph's result laid out over this graph's nodes, made when this entry
 *             was published (graph_cache_carry_scores) and pinned with it; set only then.
 * Runs on the entry start from its start vector (graph_cache_start_scores), so every run of one
 * key on one entry starts from the same vector.  A vector's segment is unpinned with its entry
 * (eviction, drop, DROP TABLE), counts in powerrank.cache_size (a vector that does not fit is not
 * kept: vectors never evict graphs) and in the cache's bytes, and at most
 * GRAPH_CACHE_KEPT_SEGMENTS of them exist at once.  Kept vectors are mapped under the lock (an
 * entry may be freed, a result replaced, once it is released); a mapping keeps its segment alive.
 *
 * Delta entries: an entry of a live table's graph may hold, instead of a flat graph, the flat form
 * of a PrGraphDelta (pr_graph_delta_write_flat) from the graph of another entry of the same table,
 * columns and direction, its root (GraphCacheEntry.root_id), in the root's numbering: the patch
 * of cache_capture.c.  A hit on it (graph_cache_acquire_hit) references and maps both, the root's
 * graph and the delta; its vectors (kept scores) have the root's node count.  Retiring a root
 * retires its delta entries, and a delta entry is registered only while its root is READY, so no
 * delta entry outlives its root.
 *
 * Node sets: an entry of kind GRAPH_CACHE_NODE_SET holds a partitioned table's merged node set,
 * written by the coordinator of a distributed run (coordinator.c), instead of a graph.  It lives
 * as a graph's entry does (counted in powerrank.cache_size and the slots, evicted least recently
 * used, referenced by its readers, dropped with its table), with two differences: its key names
 * the table and columns, not a content (the shards' answers decide whether it serves), so a new
 * set replaces the key's older one (graph_cache_publish_node_set); and it has no kept scores or
 * layout.
 *
 * Kept layout: an entry keeps at most one layout of each kind (GraphCacheLayoutKind), a segment
 * of what a reader derives from the graph and would otherwise derive in every session (a shard's
 * roles and length-sorted rows, and its rows renumbered for the rows it owns: shard.c; a weighted
 * root's out-degrees: cache_capture.c; the graph's out-edges for HITS: cache_out_edges.c; a delta
 * entry keeps its own, of its graph made whole).  The first
 * reader to make one keeps it (graph_cache_keep_layout), or the latest replaces the one before
 * (graph_cache_replace_layout: a layout that depends on more than the graph, which names what it
 * was made for); later readers map it read-only (graph_cache_map_layout).  It goes with its entry,
 * counts as a kept segment and in powerrank.cache_size (a layout that does not fit is not kept: it
 * never evicts a graph), and, like a kept vector, stays alive while mapped.
 */
#include "cache/graph_cache.h"

#include <sys/mman.h>
#include <unistd.h>

#include "access/twophase.h"
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

/* The scores an entry keeps for one parameter set (see "Kept scores" above). */
typedef struct GraphCacheKept
{
	GraphCacheScoresKey key;
	bool		used;
	bool		has_start;		/* start: carried from the previous graph */
	bool		has_result;		/* result: of a converged run on this entry */
	dsm_handle	start;
	dsm_handle	result;
	double		result_bound;	/* the bound on the result's last L1 residual */
} GraphCacheKept;

/* Layouts one entry can keep: one of each GraphCacheLayoutKind. */
#define ENTRY_LAYOUTS 5
StaticAssertDecl(GRAPH_CACHE_LAYOUT_OUT_EDGES == ENTRY_LAYOUTS,
				 "an entry keeps one layout of each kind");

/* Segments one entry can hold pinned: its graph, a start and a result per kept key, its layouts. */
#define ENTRY_HANDLES (1 + ENTRY_LAYOUTS + 2 * GRAPH_CACHE_KEPT)

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
	GraphCacheKept kept[GRAPH_CACHE_KEPT];
	bool		has_layout[ENTRY_LAYOUTS];	/* of kind i + 1: a reader's layout of its graph
											 * (see "Kept layout") */
	dsm_handle	layout[ENTRY_LAYOUTS];
	int64		layout_bytes[ENTRY_LAYOUTS];
	int64		kept_bytes;		/* the kept vectors' and layout's segments */
	int64		delta_rows;		/* changed rows patched in since the last build from the rows */
	bool		weights_known;	/* weights holds bounds on its graph's weights (weighted) */
	PrWeightRange weights;
	int			n_in_progress;	/* transactions in progress at the snapshot its graph was read
								 * through (GraphCacheWriters), in the registry's in_progress
								 * at its slot; -1: none recorded: no base */
	uint64		snapshot_xmin;	/* that snapshot's xmin and xmax (full transaction ids) */
	uint64		snapshot_xmax;
	uint64		root_id;		/* a delta entry: the entry of its root (its segment holds a
								 * flat delta from that graph); 0: a flat graph */
	int64		absent;			/* a delta entry: its delta's absent nodes (nodes counts its
								 * root's, the numbering of its vectors) */
} GraphCacheEntry;

/* The registry in the main shared memory. */
typedef struct GraphCacheShared
{
	LWLock	   *lock;
	uint64		next_id;
	int			segments;		/* segments pinned by the cache (READY + RETIRED entries) */
	int64		bytes;			/* their total size, and the kept vectors' */
	int			kept_segments;	/* kept vectors (at most GRAPH_CACHE_KEPT_SEGMENTS) */
	GraphCacheEntry entries[GRAPH_CACHE_SLOTS];
	int			in_progress_capacity;	/* per slot: the most transactions a snapshot holds */
	uint64		in_progress[FLEXIBLE_ARRAY_MEMBER]; /* slot i's at i * in_progress_capacity */
} GraphCacheShared;

/* Slot numbers travel with the entry id in one Datum: id << 8 | slot. */
StaticAssertDecl(GRAPH_CACHE_SLOTS <= 256, "slot numbers must fit in 8 bits");

static GraphCacheShared *cache = NULL;

static bool same_base(const GraphCacheKey *a, const GraphCacheKey *b);
static bool same_columns(const GraphCacheKey *a, const GraphCacheKey *b);
static bool same_content(const GraphCacheKey *a, const GraphCacheKey *b);

/*
 * The most transactions one snapshot holds in progress (GetMaxSnapshotXidCount: a process array
 * entry per backend and per prepared transaction), known before the process array exists.
 */
static int
snapshot_capacity(void)
{
	return MaxBackends + max_prepared_xacts;
}

/* Bytes of the registry with its entries' snapshots. */
static Size
registry_size(void)
{
	return add_size(offsetof(GraphCacheShared, in_progress),
					mul_size(mul_size(GRAPH_CACHE_SLOTS, snapshot_capacity()), sizeof(uint64)));
}

/* Asks the postmaster for the registry's shared memory and its lock (the request hook's part). */
void
graph_cache_shmem_request(void)
{
	RequestAddinShmemSpace(MAXALIGN(registry_size()));
	RequestNamedLWLockTranche("powerrank_cache", 1);
}

/*
 * Attaches to (or, in the postmaster, creates and clears) the registry (the startup hook's part;
 * the caller holds AddinShmemInitLock).
 */
void
graph_cache_shmem_attach(void)
{
	bool		found;

	cache = ShmemInitStruct("powerrank graph cache", registry_size(), &found);
	if (!found)
	{
		memset(cache, 0, registry_size());
		cache->lock = &(GetNamedLWLockTranche("powerrank_cache"))->lock;
		cache->next_id = 1;
		cache->in_progress_capacity = snapshot_capacity();
	}
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

/*
 * Empties a slot and forgets its segments' sizes; their handles (the graph's and the kept
 * vectors', at most ENTRY_HANDLES) go to unpin, for the caller to unpin outside the lock.
 */
static void
free_entry(GraphCacheEntry *entry, dsm_handle *unpin, int *n_unpin)
{
	int			i;

	unpin[(*n_unpin)++] = entry->handle;
	for (i = 0; i < GRAPH_CACHE_KEPT; i++)
	{
		GraphCacheKept *kept = &entry->kept[i];

		if (kept->has_start)
		{
			unpin[(*n_unpin)++] = kept->start;
			cache->kept_segments--;
		}
		if (kept->has_result)
		{
			unpin[(*n_unpin)++] = kept->result;
			cache->kept_segments--;
		}
	}
	for (i = 0; i < ENTRY_LAYOUTS; i++)
		if (entry->has_layout[i])
		{
			unpin[(*n_unpin)++] = entry->layout[i];
			cache->kept_segments--;
		}
	cache->segments--;
	cache->bytes -= entry->bytes + entry->kept_bytes;
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
 * Evicts an entry: an idle one is freed now (its handles to evicted, for the caller to unpin
 * outside the lock), one in use becomes RETIRED and goes when its last reader leaves.  A root
 * takes its delta entries with it (a delta entry never outlives its root: its readers hold
 * references on both).  Caller holds the lock exclusively.
 */
static void
retire_entry(GraphCacheEntry *entry, dsm_handle *evicted, int *n_evicted)
{
	if (entry->root_id == 0)
		for (int i = 0; i < GRAPH_CACHE_SLOTS; i++)
			if (cache->entries[i].state == ENTRY_READY &&
				cache->entries[i].root_id == entry->id)
				retire_entry(&cache->entries[i], evicted, n_evicted);
	if (entry->refcount == 0)
		free_entry(entry, evicted, n_evicted);
	else
		entry->state = ENTRY_RETIRED;
}

/*
 * Drops a reader's reference to slot's entry (if the slot still holds entry id); a RETIRED entry
 * whose last reader leaves is freed and its segment unpinned.
 */
static void
release_reference(int slot, uint64 id)
{
	GraphCacheEntry *entry = &cache->entries[slot];
	dsm_handle	handles[ENTRY_HANDLES];
	int			n_handles = 0;

	LWLockAcquire(cache->lock, LW_EXCLUSIVE);
	if (entry->state != ENTRY_FREE && entry->id == id && entry->refcount > 0)
	{
		entry->refcount--;
		if (entry->state == ENTRY_RETIRED && entry->refcount == 0)
			free_entry(entry, handles, &n_handles);
	}
	LWLockRelease(cache->lock);
	unpin_segments(handles, n_handles);
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

/* True when this process maps segment at a page boundary (mprotect and madvise need one). */
static bool
mapped_at_page(dsm_segment *segment)
{
	Size		page = (Size) sysconf(_SC_PAGESIZE);

	return ((uintptr_t) dsm_segment_address(segment) & (page - 1)) == 0;
}

/*
 * Makes this process's mapping of one of the cache's segments (a graph, a kept vector)
 * read-only: the cache never writes one once published, and the kernel maps a read-only shared
 * mapping in larger steps on the first reads (fault-around), where a writable one takes a fault
 * per page.  A failure only costs that.
 */
static void
map_read_only(dsm_segment *segment)
{
	if (mapped_at_page(segment))
		(void) mprotect(dsm_segment_address(segment), dsm_segment_map_length(segment),
						PROT_READ);
}

/*
 * Maps every page of a segment this backend just created writable before it writes the segment
 * whole (powerrank_prefault: several threads, no fault in the write).
 */
void
graph_cache_prefault(dsm_segment *segment)
{
	if (mapped_at_page(segment))
		powerrank_prefault(dsm_segment_address(segment), dsm_segment_map_length(segment));
}

/*
 * Ties a reader's reference on the entry (slot, id) to this process's mapping of its segment
 * (released when the mapping is detached); on ERROR the reference is given back before the ERROR
 * goes on.
 */
static void
tie_reference(dsm_segment *segment, int slot, uint64 id)
{
	PG_TRY();
	{
		on_dsm_detach(segment, reader_detached, UInt64GetDatum(id << 8 | (uint64) slot));
	}
	PG_CATCH();
	{
		release_reference(slot, id);
		PG_RE_THROW();
	}
	PG_END_TRY();
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

	PG_TRY();
	{
		attached = dsm_attach(handle);
	}
	PG_CATCH();
	{
		release_reference(slot, id);
		PG_RE_THROW();
	}
	PG_END_TRY();
	if (attached != NULL)
		tie_reference(attached, slot, id);
	return attached;
}

/*
 * Takes a reader's reference on the READY entry in slot (counted as a hit, used at now) and returns
 * it, with its id, segment handle and skipped-row count.  Caller holds the lock exclusively.
 */
static GraphCacheEntry *
reference_entry(int slot, TimestampTz now, uint64 *id, dsm_handle *handle, int64 *skipped_rows)
{
	GraphCacheEntry *entry = &cache->entries[slot];

	entry->refcount++;
	entry->hits++;
	entry->last_used = now;
	*id = entry->id;
	*handle = entry->handle;
	*skipped_rows = entry->skipped_rows;
	return entry;
}

/*
 * Takes a reader's reference on the READY entry with key (reference_entry) and returns its slot,
 * with its id, segment handle and skipped-row count; -1 when there is none.
 */
static int
reference_key(const GraphCacheKey *key, uint64 *id, dsm_handle *handle, int64 *skipped_rows)
{
	TimestampTz now = GetCurrentTimestamp();
	int			slot;

	LWLockAcquire(cache->lock, LW_EXCLUSIVE);
	slot = find_ready(key);
	if (slot >= 0)
		(void) reference_entry(slot, now, id, handle, skipped_rows);
	LWLockRelease(cache->lock);
	return slot;
}

/*
 * Attaches (read-only) the segment of the entry (handle, slot, id) a reference was just taken on,
 * its reference tied to the mapping; NULL, the reference given back, when it cannot be attached.
 */
static dsm_segment *
attach_referenced(dsm_handle handle, int slot, uint64 id)
{
	dsm_segment *attached = attach_entry(handle, slot, id);

	if (attached == NULL)
	{
		release_reference(slot, id);
		return NULL;
	}
	map_read_only(attached);
	return attached;
}

/*
 * Attaches and maps the graph of the entry (handle, slot, id) a reference was just taken on, into
 * *segment (detach it with graph_cache_release) and graph; false, the reference given back, when
 * the segment cannot be attached.  A segment that does not hold a flat graph is an ERROR.
 */
static bool
map_entry(dsm_handle handle, int slot, uint64 id, Oid relid, dsm_segment **segment, PrGraph *graph)
{
	dsm_segment *attached = attach_referenced(handle, slot, id);

	if (attached == NULL)
		return false;
	if (!map_segment(dsm_segment_address(attached), dsm_segment_map_length(attached), graph))
	{
		dsm_detach(attached);
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("cached graph of relation %u is corrupt", relid),
				 errhint("Drop it with powerrank_cache_drop().")));
	}
	*segment = attached;
	return true;
}

/* The entry (READY or RETIRED) with id, or NULL.  Caller holds the lock. */
static GraphCacheEntry *
find_entry_by_id(uint64 id)
{
	int			i;

	for (i = 0; i < GRAPH_CACHE_SLOTS; i++)
		if (cache->entries[i].state != ENTRY_FREE && cache->entries[i].id == id)
			return &cache->entries[i];
	return NULL;
}

/* Whether entry (may be NULL) is READY. */
static bool
entry_ready(const GraphCacheEntry *entry)
{
	return entry != NULL && entry->state == ENTRY_READY;
}

/*
 * Takes a reader's reference on the root of the delta entry entry (READY while entry is; not
 * counted as a hit, used at now) and returns the root; NULL when it is not READY (never: retiring
 * a root retires its delta entries).  Caller holds the lock exclusively.
 */
static GraphCacheEntry *
reference_root(const GraphCacheEntry *entry, TimestampTz now)
{
	GraphCacheEntry *root = find_entry_by_id(entry->root_id);

	if (!entry_ready(root))
		return NULL;
	root->refcount++;
	root->last_used = now;
	return root;
}

/*
 * Maps the entry in slot, on which the caller just took a reference (reference_entry, under the
 * lock, which it releases here after taking one on a delta entry's root too), into hit: its flat
 * graph, or its root's graph and its delta.  False, every reference given back, when a segment
 * cannot be attached; a segment that does not hold what the entry says is an ERROR.
 */
static bool
map_hit(int slot, TimestampTz now, Oid relid, GraphCacheHit *hit)
{
	GraphCacheEntry *entry = &cache->entries[slot];
	dsm_handle	handle = entry->handle;
	uint64		id = entry->id;
	GraphCacheEntry *root = NULL;
	int			root_slot = -1;
	dsm_handle	root_handle = 0;
	PrError		err = {0};

	hit->id = id;
	hit->skipped_rows = entry->skipped_rows;
	if (entry->root_id != 0)
	{
		root = reference_root(entry, now);
		if (root == NULL)
		{
			entry->refcount--;
			LWLockRelease(cache->lock);
			return false;
		}
		root_slot = (int) (root - cache->entries);
		root_handle = root->handle;
		hit->root_id = root->id;
	}
	LWLockRelease(cache->lock);
	if (root == NULL)
		return map_entry(handle, slot, id, relid, &hit->segment, &hit->graph);

	/* the delta's mapping first: an ERROR from here on detaches it, and so gives its reference back */
	hit->delta_segment = attach_entry(handle, slot, id);
	if (hit->delta_segment == NULL)
	{
		release_reference(slot, id);
		release_reference(root_slot, hit->root_id);
		return false;
	}
	map_read_only(hit->delta_segment);
	if (!map_entry(root_handle, root_slot, hit->root_id, relid, &hit->segment, &hit->graph))
	{
		graph_cache_release(&hit->delta_segment);
		return false;
	}
	if (pr_graph_delta_view_flat(dsm_segment_address(hit->delta_segment),
								 dsm_segment_map_length(hit->delta_segment), &hit->delta,
								 &err) != PR_OK || hit->delta.n_nodes != hit->graph.n_nodes)
	{
		graph_cache_release_hit(hit);
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("cached graph of relation %u is corrupt", relid),
				 errhint("Drop it with powerrank_cache_drop().")));
	}
	return true;
}

/*
 * Looks the key up; on a hit, maps the cached graph into hit (read-only: its arrays live in the
 * cache's segments; see GraphCacheHit), with the skipped-row count of its build and the entry's id
 * (unique for the life of the cluster: the GPU service keys resident graphs by it), counts the
 * hit and returns true.  False on a miss.
 */
bool
graph_cache_acquire_hit(const GraphCacheKey *key, GraphCacheHit *hit)
{
	TimestampTz now = GetCurrentTimestamp();
	uint64		id;
	dsm_handle	handle;
	int64		skipped_rows;
	int			slot;

	memset(hit, 0, sizeof(GraphCacheHit));
	if (cache == NULL)
		return false;
	LWLockAcquire(cache->lock, LW_EXCLUSIVE);
	slot = find_ready(key);
	if (slot < 0)
	{
		LWLockRelease(cache->lock);
		return false;
	}
	(void) reference_entry(slot, now, &id, &handle, &skipped_rows);
	return map_hit(slot, now, key->relid, hit);
}

/*
 * graph_cache_acquire_hit for a caller that takes flat graphs only: a flat entry's graph into
 * graph and *segment (detach it with graph_cache_release), its skipped-row count and id; false
 * on a miss and for a delta entry.
 */
bool
graph_cache_acquire(const GraphCacheKey *key, dsm_segment **segment, PrGraph *graph,
					int64 *skipped_rows, uint64 *entry_id)
{
	GraphCacheHit hit;

	*segment = NULL;
	if (!graph_cache_acquire_hit(key, &hit))
		return false;
	if (hit.delta_segment != NULL)
	{
		graph_cache_release_hit(&hit);
		return false;
	}
	*segment = hit.segment;
	*graph = hit.graph;
	*skipped_rows = hit.skipped_rows;
	*entry_id = hit.id;
	return true;
}

/*
 * Looks up the node set kept under key (GRAPH_CACHE_NODE_SET); on a hit, counts it and returns
 * its segment mapped read-only, holding a reader's reference until it is detached (with
 * graph_cache_release, or by the resource owner on ERROR).  NULL on a miss or without the cache.
 */
dsm_segment *
graph_cache_acquire_node_set(const GraphCacheKey *key)
{
	dsm_handle	handle;
	uint64		id;
	int64		skipped_rows;
	int			slot;

	Assert(key->kind == GRAPH_CACHE_NODE_SET);
	if (cache == NULL || (slot = reference_key(key, &id, &handle, &skipped_rows)) < 0)
		return NULL;
	return attach_referenced(handle, slot, id);
}

/*
 * Detaches a mapping taken by graph_cache_acquire or graph_cache_acquire_node_set (its callback
 * releases the reference).
 */
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

/* Detaches the mappings of a hit (graph_cache_acquire_hit, graph_cache_acquire_base). */
void
graph_cache_release_hit(GraphCacheHit *hit)
{
	graph_cache_release(&hit->delta_segment);
	graph_cache_release(&hit->segment);
}

/*
 * True when the ascending lists part (n_part) and whole (n_whole) have part's every element in
 * whole.
 */
static bool
ascending_subset(const uint64 *part, int n_part, const uint64 *whole, int n_whole)
{
	int			j = 0;

	for (int i = 0; i < n_part; i++)
	{
		while (j < n_whole && whole[j] < part[i])
			j++;
		if (j >= n_whole || whole[j] != part[i])
			return false;
	}
	return true;
}

/* True when the snapshot an entry's graph was read through saw the transaction xid (committed). */
static bool
entry_snapshot_sees(const GraphCacheEntry *entry, uint64 xid)
{
	const uint64 *in_progress =
		&cache->in_progress[(Size) (entry - cache->entries) * cache->in_progress_capacity];

	if (xid >= entry->snapshot_xmax)
		return false;
	for (int i = 0; i < entry->n_in_progress; i++)
		if (in_progress[i] == xid)
			return false;
	return true;
}

/*
 * True when an entry is a base for the snapshot reader (writers) of key (doc/DESIGN.md, "Which
 * changes a reader applies"): same database, table and storage; reader covers the entry's
 * snapshot (that snapshot's xmax is not past reader's, and every transaction in progress at reader
 * below it was in progress at that snapshot too); and every rebase row reader sees that the
 * entry's snapshot did not is a background compaction that kept the change rows from a
 * transaction no later than that snapshot's xmin.  Caller holds the lock.
 */
static bool
entry_is_base_for(const GraphCacheEntry *entry, const GraphCacheKey *key,
				  const GraphCacheWriters *reader)
{
	const GraphCacheSnapshot *snapshot = reader->snapshot;
	int			below = 0;

	if (entry->n_in_progress < 0 || entry->key.database != key->database ||
		entry->key.database_xmin != key->database_xmin || entry->key.relid != key->relid ||
		entry->key.relfilenode != key->relfilenode || entry->snapshot_xmax > snapshot->xmax)
		return false;
	while (below < reader->count && snapshot->in_progress[below] < entry->snapshot_xmax)
		below++;
	if (!ascending_subset(snapshot->in_progress, below,
						  &cache->in_progress[(Size) (entry - cache->entries) *
											  cache->in_progress_capacity],
						  entry->n_in_progress))
		return false;
	for (int i = 0; i < GRAPH_CACHE_MAX_REBASES && key->rebases[i] != 0; i++)
		if (!entry_snapshot_sees(entry, key->rebases[i]) &&
			(snapshot->rebases_kept_from[i] == 0 ||
			 snapshot->rebases_kept_from[i] > entry->snapshot_xmin))
			return false;
	return true;
}

/*
 * Finds a base for a patch: the READY entry of key's columns and direction that is a base for the
 * caller's snapshot (writers; entry_is_base_for) and does not hold key's content, the one read
 * through the newest snapshot (the most changes among equal ones).  On success maps it as
 * graph_cache_acquire_hit does (a hit counted; a delta entry with its root) into base->hit, with
 * its snapshot (palloc'd: the caller applies the rows of the writers it sees beyond it), the rows
 * already patched into it and what it (and a delta entry's root) knows of its weights.  False
 * when none qualifies.
 */
bool
graph_cache_acquire_base(const GraphCacheKey *key, const GraphCacheWriters *writers,
						 GraphCacheBase *base)
{
	GraphCacheEntry *entry;
	dsm_handle	handle;
	TimestampTz now = GetCurrentTimestamp();
	int			slot = -1;
	int			i;

	memset(base, 0, sizeof(GraphCacheBase));
	if (cache == NULL || writers->count < 0)
		return false;
	base->seen.snapshot = palloc0(offsetof(GraphCacheSnapshot, in_progress) +
								  sizeof(uint64) * cache->in_progress_capacity);
	LWLockAcquire(cache->lock, LW_EXCLUSIVE);
	for (i = 0; i < GRAPH_CACHE_SLOTS; i++)
	{
		GraphCacheEntry *candidate = &cache->entries[i];
		GraphCacheEntry *best = slot >= 0 ? &cache->entries[slot] : NULL;

		if (candidate->state != ENTRY_READY || !same_columns(&candidate->key, key) ||
			same_content(&candidate->key, key) ||
			(same_base(&candidate->key, key) && candidate->key.changes > key->changes) ||
			(best != NULL &&
			 (candidate->snapshot_xmax < best->snapshot_xmax ||
			  (candidate->snapshot_xmax == best->snapshot_xmax &&
			   candidate->key.changes <= best->key.changes))) ||
			!entry_is_base_for(candidate, key, writers))
			continue;
		slot = i;
	}
	if (slot < 0)
	{
		LWLockRelease(cache->lock);
		pfree(base->seen.snapshot);
		base->seen.snapshot = NULL;
		return false;
	}
	entry = reference_entry(slot, now, &base->hit.id, &handle, &base->hit.skipped_rows);
	base->delta_rows = entry->delta_rows;
	base->root_weights_known = entry->weights_known;
	base->root_weights = entry->weights;
	if (entry->root_id != 0)
	{
		GraphCacheEntry *root = find_entry_by_id(entry->root_id);

		base->root_weights_known = root->weights_known;
		base->root_weights = root->weights;
	}
	base->seen.count = entry->n_in_progress;
	base->seen.snapshot->xmin = entry->snapshot_xmin;
	base->seen.snapshot->xmax = entry->snapshot_xmax;
	memcpy(base->seen.snapshot->in_progress,
		   &cache->in_progress[(Size) slot * cache->in_progress_capacity],
		   sizeof(uint64) * entry->n_in_progress);

	/* releases the lock */
	return map_hit(slot, now, key->relid, &base->hit);
}

/*
 * The tables of database with cached graphs that are bases (they record their snapshot), each
 * with the largest xmin of those snapshots: into *relids and *xmins (palloc'd); returns how many.
 * A compaction keeps the change rows from there up (cache_compact.c), so the newest base of each
 * table stays one across it.
 */
int
graph_cache_base_horizons(Oid database, Oid **relids, uint64 **xmins)
{
	int			count = 0;

	*relids = palloc(sizeof(Oid) * GRAPH_CACHE_SLOTS);
	*xmins = palloc(sizeof(uint64) * GRAPH_CACHE_SLOTS);
	if (cache == NULL)
		return 0;
	LWLockAcquire(cache->lock, LW_SHARED);
	for (int i = 0; i < GRAPH_CACHE_SLOTS; i++)
	{
		GraphCacheEntry *entry = &cache->entries[i];
		int			j;

		if (entry->state != ENTRY_READY || entry->key.database != database ||
			entry->n_in_progress < 0)
			continue;
		for (j = 0; j < count && (*relids)[j] != entry->key.relid; j++)
			;
		if (j == count)
		{
			(*relids)[count] = entry->key.relid;
			(*xmins)[count++] = entry->snapshot_xmin;
		}
		else
			(*xmins)[j] = Max((*xmins)[j], entry->snapshot_xmin);
	}
	LWLockRelease(cache->lock);
	return count;
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
			idle_bytes += entry->bytes + entry->kept_bytes;
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
		/* idle, and so are its delta entries if it is a root: all freed */
		retire_entry(&cache->entries[lru], evicted, n_evicted);
		free_slot = lru;
	}
	return free_slot;
}

/*
 * True when two keys name one table of one database with the same storage and rebase rows: its
 * contents differ at most by writers (the changes).
 */
static bool
same_base(const GraphCacheKey *a, const GraphCacheKey *b)
{
	return a->kind == b->kind && a->database == b->database &&
		a->database_xmin == b->database_xmin && a->relid == b->relid &&
		a->relfilenode == b->relfilenode &&
		memcmp(a->rebases, b->rebases, sizeof(a->rebases)) == 0;
}

/* True when two keys name the same content of one table: same storage and log rows seen. */
static bool
same_content(const GraphCacheKey *a, const GraphCacheKey *b)
{
	return same_base(a, b) && a->changes == b->changes;
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

		if (entry->state == ENTRY_READY && same_base(&entry->key, key) &&
			entry->key.changes > key->changes)
			return true;
	}
	return false;
}

/* True when two keys name the same columns and direction. */
static bool
same_columns(const GraphCacheKey *a, const GraphCacheKey *b)
{
	return memcmp(a->attnums, b->attnums, sizeof(a->attnums)) == 0 &&
		memcmp(a->types, b->types, sizeof(a->types)) == 0 && a->directed == b->directed;
}

/*
 * Evicts the entries of the same table that a snapshot which sees the new key's content no longer
 * asks for: another relfilenode (the table was rewritten under a lock that this publisher's lock
 * excludes, so the old storage is gone), other rebase rows (a reader is only served when its
 * snapshot sees the newest rebase rows), or fewer changes (only older snapshots could use them) —
 * except, when keep_bases (a live table), the entries of other columns or direction with fewer
 * changes that record their snapshot: a reader of those columns patches them
 * (graph_cache_acquire_base), and they go when least recently used.  Entries of the same content
 * under other columns stay, and so does root_id (non-zero: the root of the new delta entry, whose
 * graph it reads).  Idle entries go now (handles to evicted), the others when their readers leave.
 * Caller holds the lock exclusively.
 */
static void
retire_stale_entries(const GraphCacheKey *key, bool keep_bases, uint64 root_id,
					 dsm_handle *evicted, int *n_evicted)
{
	int			i;

	for (i = 0; i < GRAPH_CACHE_SLOTS; i++)
	{
		GraphCacheEntry *entry = &cache->entries[i];

		if (entry->state != ENTRY_READY || entry->key.database != key->database ||
			entry->key.relid != key->relid || same_content(&entry->key, key) ||
			(root_id != 0 && entry->id == root_id))
			continue;
		if (keep_bases && entry->n_in_progress >= 0 && same_base(&entry->key, key) &&
			entry->key.changes < key->changes && !same_columns(&entry->key, key))
			continue;
		retire_entry(entry, evicted, n_evicted);
	}
}

/* What register_segment records of a new entry besides its key and segment. */
typedef struct NewEntry
{
	int64		bytes;			/* counted in powerrank.cache_size */
	int64		nodes;			/* its graph's (a delta entry: its root's, its vectors' length) */
	int64		absent;			/* a delta entry's absent nodes */
	int64		edges;
	int64		skipped_rows;
	int64		delta_rows;		/* changed rows patched in since the last build from the rows */
	const PrWeightRange *weights;	/* bounds on its graph's weights (NULL: not known) */
	uint64		root_id;		/* a delta entry's root (0: a flat graph or a node set) */
} NewEntry;

/*
 * Takes over, as a start vector of a new entry, the result segment carry hands over at i (a kept
 * result of the entry carry->handed_from, pinned): out of the handles a retired entry left to
 * unpin, when that entry went in this registration, else out of the entry's kept results, which
 * then no longer count it.  False when neither holds it any longer (the entry replaced or lost
 * that result meanwhile).  Caller holds the lock.
 */
static bool
take_handed_result(const GraphCacheCarry *carry, int i, dsm_handle *evicted, int *n_evicted)
{
	GraphCacheEntry *previous = find_entry_by_id(carry->handed_from);
	int			k;

	for (k = 0; k < *n_evicted; k++)
		if (evicted[k] == carry->handed[i])
		{
			/* its entry went: its unpin is this entry's now (free_entry uncounted it) */
			evicted[k] = evicted[--(*n_evicted)];
			return true;
		}
	for (k = 0; previous != NULL && k < GRAPH_CACHE_KEPT; k++)
		if (previous->kept[k].has_result && previous->kept[k].result == carry->handed[i])
		{
			previous->kept[k].has_result = false;
			previous->kept_bytes -= carry->bytes;
			cache->bytes -= carry->bytes;
			cache->kept_segments--;
			return true;
		}
	return false;
}

/*
 * Registers segment (not pinned yet; a flat graph, a delta entry's flat delta or a node set, as
 * facts describe it) under key and pins it, with the start vectors of carry (may be NULL) when they
 * fit as well (a result carry hands over taken from its entry, take_handed_result); returns its slot, or -1, leaving it unpinned, when another backend published the
 * same graph key (or the table as a later snapshot saw it) meanwhile, a delta entry's root is no
 * longer READY, or readers hold all the room.  With hold, the entry starts with one reader's
 * reference (its id in *held_id), which the caller ties to its mapping.  Stale entries of the
 * table are evicted (retire_stale_entries; never a delta entry's root), and so is the node set the
 * key held before.
 */
static int
register_segment(const GraphCacheKey *key, dsm_segment *segment, const NewEntry *facts,
				 int64 limit, const GraphCacheCarry *carry, const GraphCacheWriters *writers,
				 bool hold, uint64 *held_id)
{
	bool		keep_bases = writers != NULL && writers->count >= 0 && writers->live;
	dsm_handle	evicted[GRAPH_CACHE_SLOTS * ENTRY_HANDLES];
	int			n_evicted = 0;
	TimestampTz now = GetCurrentTimestamp();
	int			slot = -1;
	bool		with_carry = false;

	LWLockAcquire(cache->lock, LW_EXCLUSIVE);
	/* a node set's key names no content: the new set takes the place of the key's older one */
	if (key->kind == GRAPH_CACHE_NODE_SET && (slot = find_ready(key)) >= 0)
	{
		retire_entry(&cache->entries[slot], evicted, &n_evicted);
		slot = -1;
	}
	/* a delta entry's root is READY while the entry is (the caller holds a reference on it) */
	if (find_ready(key) < 0 && !later_content_cached(key) &&
		(facts->root_id == 0 || entry_ready(find_entry_by_id(facts->root_id))))
	{
		retire_stale_entries(key, keep_bases, facts->root_id, evicted, &n_evicted);
		/* the graph with its start vectors, else the graph alone (make_room evicts nothing then) */
		if (carry != NULL && carry->count > 0 &&
			cache->kept_segments + carry->count <= GRAPH_CACHE_KEPT_SEGMENTS)
		{
			slot = make_room(facts->bytes + carry->count * carry->bytes, limit, evicted,
							 &n_evicted);
			with_carry = slot >= 0;
		}
		if (slot < 0)
			slot = make_room(facts->bytes, limit, evicted, &n_evicted);
	}
	if (slot >= 0)
	{
		GraphCacheEntry *entry = &cache->entries[slot];
		int			i,
					n_kept = 0;

		dsm_pin_segment(segment);
		memset(entry, 0, sizeof(GraphCacheEntry));
		entry->key = *key;
		entry->state = ENTRY_READY;
		entry->id = cache->next_id++;
		entry->handle = dsm_segment_handle(segment);
		entry->nodes = facts->nodes;
		entry->absent = facts->absent;
		entry->edges = facts->edges;
		entry->skipped_rows = facts->skipped_rows;
		entry->bytes = facts->bytes;
		entry->built_at = now;
		entry->last_used = now;
		entry->delta_rows = facts->delta_rows;
		entry->root_id = facts->root_id;
		entry->weights_known = facts->weights != NULL;
		if (facts->weights != NULL)
			entry->weights = *facts->weights;
		if (hold)
		{
			entry->refcount = 1;
			*held_id = entry->id;
		}
		entry->n_in_progress = -1;
		if (writers != NULL && writers->count >= 0 &&
			writers->count <= cache->in_progress_capacity)
		{
			entry->n_in_progress = writers->count;
			entry->snapshot_xmin = writers->snapshot->xmin;
			entry->snapshot_xmax = writers->snapshot->xmax;
			if (writers->count > 0)
				memcpy(&cache->in_progress[(Size) slot * cache->in_progress_capacity],
					   writers->snapshot->in_progress, sizeof(uint64) * writers->count);
		}
		cache->segments++;
		cache->bytes += facts->bytes;
		for (i = 0; with_carry && i < carry->count; i++)
		{
			GraphCacheKept *kept = &entry->kept[n_kept];

			if (carry->segments[i] == NULL &&
				!take_handed_result(carry, i, evicted, &n_evicted))
				continue;
			if (carry->segments[i] != NULL)
				dsm_pin_segment(carry->segments[i]);
			kept->key = carry->keys[i];
			kept->used = true;
			kept->has_start = true;
			kept->start = carry->segments[i] != NULL ?
				dsm_segment_handle(carry->segments[i]) : carry->handed[i];
			entry->kept_bytes += carry->bytes;
			cache->bytes += carry->bytes;
			cache->kept_segments++;
			n_kept++;
		}
	}
	LWLockRelease(cache->lock);

	unpin_segments(evicted, n_evicted);
	return slot;
}

/*
 * Adds a graph built by this backend to the cache under key (out-edges left out: the PageRank
 * family reads in-edges only, HITS adds the out-edges per call), with the start vectors of carry
 * (may be NULL; graph_cache_carry_end detaches them afterwards), the writers its content includes
 * (may be NULL: the entry is then no base for a patch) and the changed rows patched into it since
 * its last build from the rows.  Does nothing when the cache is off, the graph does not fit in
 * powerrank.cache_size, no segment can be had, or register_segment refuses it.
 */
void
graph_cache_publish(const GraphCacheKey *key, const PrGraph *graph, int64 skipped_rows,
					GraphCacheCarry *carry, const GraphCacheWriters *writers, int64 delta_rows)
{
	PrGraph		stripped = *graph;
	int64		limit = (int64) powerrank_cache_size_mb * 1024 * 1024;
	dsm_segment *segment;
	Size		size;
	PrWeightRange weights;
	NewEntry	facts = {0};
	uint64		unused_id;

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
	/* a patch of this graph checks its weights against this range instead of reading them */
	pr_graph_weight_range(graph, &weights);
	facts.bytes = (int64) size;
	facts.nodes = graph->n_nodes;
	facts.edges = graph->n_edges;
	facts.skipped_rows = skipped_rows;
	facts.delta_rows = delta_rows;
	facts.weights = &weights;
	(void) register_segment(key, segment, &facts, limit, carry, writers, false, &unused_id);
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
							const PrGraph *graph, int64 skipped_rows,
							const GraphCacheWriters *writers)
{
	int64		limit = (int64) powerrank_cache_size_mb * 1024 * 1024;
	NewEntry	facts = {0};
	uint64		unused_id;

	if (cache == NULL || limit <= 0 || (int64) flat_bytes > limit)
		return false;
	facts.bytes = (int64) flat_bytes;
	facts.nodes = graph->n_nodes;
	facts.edges = graph->n_edges;
	facts.skipped_rows = skipped_rows;
	return register_segment(key, segment, &facts, limit, NULL, writers, false, &unused_id) >= 0;
}

/*
 * Registers a segment written by this backend (not pinned yet; its mapping stays the caller's)
 * as facts describe it, counting the whole segment (register_segment), and ties the reader's
 * reference the new entry starts with to the caller's mapping; true, with the entry's id, when
 * the cache took it.
 */
static bool
publish_held(const GraphCacheKey *key, dsm_segment *segment, NewEntry *facts,
			 GraphCacheCarry *carry, const GraphCacheWriters *writers, uint64 *entry_id)
{
	int64		limit = (int64) powerrank_cache_size_mb * 1024 * 1024;
	int			slot;

	facts->bytes = (int64) dsm_segment_map_length(segment);
	if (cache == NULL || limit <= 0 || facts->bytes > limit)
		return false;
	slot = register_segment(key, segment, facts, limit, carry, writers, true, entry_id);
	if (slot < 0)
		return false;
	tie_reference(segment, slot, *entry_id);
	return true;
}

/*
 * Adds a patched graph — written by this backend straight into segment (not pinned yet; its
 * mapping stays the caller's) — to the cache under key, as graph_cache_publish does, with the
 * start vectors of carry (may be NULL), the writers its content includes, the changed rows
 * patched in since the last build and the bounds on its weights.  The cache counts the whole
 * segment.  True when the cache took it: the caller's mapping then holds a reader's reference to
 * the entry (released when it is detached) and *entry_id is the entry's id.
 */
bool
graph_cache_publish_patched(const GraphCacheKey *key, dsm_segment *segment, const PrGraph *graph,
							int64 skipped_rows, GraphCacheCarry *carry,
							const GraphCacheWriters *writers, int64 delta_rows,
							const PrWeightRange *weights, uint64 *entry_id)
{
	NewEntry	facts = {0};

	facts.nodes = graph->n_nodes;
	facts.edges = graph->n_edges;
	facts.skipped_rows = skipped_rows;
	facts.delta_rows = delta_rows;
	facts.weights = weights;
	return publish_held(key, segment, &facts, carry, writers, entry_id);
}

/*
 * Adds a delta entry to the cache under key, as graph_cache_publish_patched adds a graph: segment
 * holds delta's flat form, the change from the graph root of the entry root_id (on which the
 * caller holds a reader's reference) to the content key names; no bounds on its weights (a patch
 * reads its root's).  The entry counts its segment's bytes, its root's node count (the numbering
 * of its vectors; its own nodes are those less the absent ones) and its own stored edges (edges,
 * graph_cache_delta_edges).
 */
bool
graph_cache_publish_delta(const GraphCacheKey *key, dsm_segment *segment, uint64 root_id,
						  const PrGraph *root, const PrGraphDelta *delta, int64 edges,
						  int64 skipped_rows,
						  GraphCacheCarry *carry, const GraphCacheWriters *writers,
						  int64 delta_rows, uint64 *entry_id)
{
	NewEntry	facts = {0};

	facts.nodes = root->n_nodes;
	facts.absent = delta->n_absent;
	facts.edges = edges;
	facts.skipped_rows = skipped_rows;
	facts.delta_rows = delta_rows;
	facts.root_id = root_id;
	return publish_held(key, segment, &facts, carry, writers, entry_id);
}

/*
 * Adds a node set (GRAPH_CACHE_NODE_SET) of nodes, merged from parts of edges together, to the
 * cache under key: segment, written whole and not pinned yet, takes the place of the set kept
 * under key before, evicting least recently used idle entries to fit under powerrank.cache_size as
 * a graph does.  True when the cache took it (pinned); the caller detaches its mapping either way.
 * False when the cache is off, the set is larger than the limit, or readers hold all the room.
 */
bool
graph_cache_publish_node_set(const GraphCacheKey *key, dsm_segment *segment, int64 nodes,
							 int64 edges)
{
	int64		limit = (int64) powerrank_cache_size_mb * 1024 * 1024;
	NewEntry	facts = {0};
	uint64		unused_id;

	Assert(key->kind == GRAPH_CACHE_NODE_SET);
	facts.bytes = (int64) dsm_segment_map_length(segment);
	if (cache == NULL || limit <= 0 || facts.bytes > limit)
		return false;
	facts.nodes = nodes;
	facts.edges = edges;
	return register_segment(key, segment, &facts, limit, NULL, NULL, false, &unused_id) >= 0;
}

/*
 * True when entry caches the same table, columns and direction as key but other content: a graph
 * the table had before (or, for an older snapshot, after) the content key names.
 */
static bool
same_table_other_content(const GraphCacheEntry *entry, const GraphCacheKey *key)
{
	return entry->key.database == key->database &&
		entry->key.database_xmin == key->database_xmin && entry->key.relid == key->relid &&
		same_columns(&entry->key, key) && !same_content(&entry->key, key);
}

/*
 * Index of the newest READY entry of key's table, columns and direction with other content that
 * keeps at least one result, or -1.  Caller holds the lock.
 */
static int
find_previous(const GraphCacheKey *key)
{
	int			found = -1;
	int			i,
				j;

	for (i = 0; i < GRAPH_CACHE_SLOTS; i++)
	{
		GraphCacheEntry *entry = &cache->entries[i];
		bool		has_result = false;

		if (entry->state != ENTRY_READY || !same_table_other_content(entry, key))
			continue;
		for (j = 0; j < GRAPH_CACHE_KEPT; j++)
			has_result |= entry->kept[j].has_result;
		if (has_result && (found < 0 || entry->id > cache->entries[found].id))
			found = i;
	}
	return found;
}

/* What graph_cache_carry_scores read from the previous entry under the lock. */
typedef struct PreviousResults
{
	int			slot;
	uint64		id;
	dsm_handle	handle;
	bool		delta_entry;	/* a delta entry: its segment holds no flat graph */
	int			count;
	GraphCacheScoresKey keys[GRAPH_CACHE_KEPT];
	dsm_segment *results[GRAPH_CACHE_KEPT];	/* mappings of its results */
	dsm_handle	handles[GRAPH_CACHE_KEPT];	/* their handles */
} PreviousResults;

/*
 * Maps the results of the previous entry of key's table (find_previous) and copies their keys
 * (under the lock: a tighter run may replace a result), then takes a reference on the entry (last:
 * an ERROR while mapping leaves no reference behind); false when there is none.
 */
static bool
reference_previous(const GraphCacheKey *key, PreviousResults *previous)
{
	GraphCacheEntry *entry;
	int			j;

	memset(previous, 0, sizeof(PreviousResults));
	LWLockAcquire(cache->lock, LW_EXCLUSIVE);
	previous->slot = find_previous(key);
	if (previous->slot < 0)
	{
		LWLockRelease(cache->lock);
		return false;
	}
	entry = &cache->entries[previous->slot];
	for (j = 0; j < GRAPH_CACHE_KEPT; j++)
	{
		dsm_segment *result;

		if (!entry->kept[j].has_result || (result = dsm_attach(entry->kept[j].result)) == NULL)
			continue;
		previous->keys[previous->count] = entry->kept[j].key;
		previous->results[previous->count] = result;
		previous->handles[previous->count] = entry->kept[j].result;
		previous->count++;
	}
	entry->refcount++;
	previous->id = entry->id;
	previous->handle = entry->handle;
	previous->delta_entry = entry->root_id != 0;
	LWLockRelease(cache->lock);
	return true;
}

/*
 * One kept result of the previous graph (source, mapped) laid out over graph's nodes (map: the
 * previous graph's nodes in graph) into a new segment, not pinned: added to carry.  Nothing when a
 * segment cannot be had or the scores are not a distribution.
 */
static void
carry_one(dsm_segment *source, const GraphCacheScoresKey *scores_key, const PrGraph *previous,
		  const int32 *map, const PrGraph *graph, GraphCacheCarry *carry)
{
	dsm_segment *target;

	if (dsm_segment_map_length(source) < (Size) previous->n_nodes * sizeof(double))
		return;
	map_read_only(source);
	target = dsm_create((Size) graph->n_nodes * sizeof(double), DSM_CREATE_NULL_IF_MAXSEGMENTS);
	if (target == NULL)
		return;
	graph_cache_prefault(target);
	if (!pr_graph_carry_scores(previous, (const double *) dsm_segment_address(source), map, graph,
							   (double *) dsm_segment_address(target)))
	{
		dsm_detach(target);
		return;
	}
	carry->keys[carry->count] = *scores_key;
	carry->segments[carry->count] = target;
	carry->count++;
}

/*
 * Makes carry's start vectors from the previous graph (old_graph: its node count at least) and its
 * mapped results, when at most GRAPH_CACHE_CARRY_FRACTION of graph's stored edges changed: changed
 * (-1: counted here with pr_graph_changed_edges on old_graph's arrays), map the previous graph's
 * nodes in graph (NULL: the same ids).
 */
static void
carry_from(const PreviousResults *previous, const PrGraph *old_graph, const int32 *map,
		   int64 changed, const PrGraph *graph, Oid relid, GraphCacheCarry *carry)
{
	int64		limit = (int64) (GRAPH_CACHE_CARRY_FRACTION * (double) graph->n_edges);
	int32	   *own_map = NULL;
	int			i;

	if (changed < 0)
	{
		own_map = palloc_extended((Size) Max(old_graph->n_nodes, 1) * sizeof(int32),
								  MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
		if (own_map == NULL)
			return;
		pr_graph_node_map(old_graph, graph, own_map);
		map = own_map;
		changed = pr_graph_changed_edges(old_graph, graph, map, limit, powerrank_thread_count(),
										 &pr_malloc_allocator);
	}
	if (changed >= 0 && changed <= limit)
	{
		carry->bytes = (int64) graph->n_nodes * (int64) sizeof(double);
		for (i = 0; i < previous->count; i++)
			carry_one(previous->results[i], &previous->keys[i], old_graph, map, graph, carry);
		elog(DEBUG1, "powerrank: %lld of the %lld edges changed since the cached graph %llu of relation %u: %d kept scores carried",
			 (long long) changed, (long long) graph->n_edges, (unsigned long long) previous->id,
			 relid, carry->count);
	}
	else
		elog(DEBUG1, "powerrank: more than %lld of the %lld edges changed since the cached graph %llu of relation %u: no scores carried",
			 (long long) limit, (long long) graph->n_edges, (unsigned long long) previous->id,
			 relid);
	if (own_map != NULL)
		pfree(own_map);
}

/*
 * The start vectors of a delta entry patched from a delta entry (previous, its base), when at most
 * GRAPH_CACHE_CARRY_FRACTION of graph's stored edges changed (changed): the base's results
 * themselves, handed over to the new entry at its registration (take_handed_result) without a
 * copy — both number their nodes as their root does, and the base is retired by that
 * registration, its results with it.  A result so taken is the converged scores of the base
 * (sum 1 up to the run's rounding), where a copy would be rescaled to sum 1.
 */
static void
carry_handed(const PreviousResults *previous, int64 changed, const PrGraph *graph, Oid relid,
			 GraphCacheCarry *carry)
{
	int64		limit = (int64) (GRAPH_CACHE_CARRY_FRACTION * (double) graph->n_edges);
	int			i;

	if (changed < 0 || changed > limit)
	{
		elog(DEBUG1, "powerrank: more than %lld of the %lld edges changed since the cached graph %llu of relation %u: no scores carried",
			 (long long) limit, (long long) graph->n_edges, (unsigned long long) previous->id,
			 relid);
		return;
	}
	carry->bytes = (int64) graph->n_nodes * (int64) sizeof(double);
	carry->handed_from = previous->id;
	for (i = 0; i < previous->count; i++)
	{
		if (dsm_segment_map_length(previous->results[i]) < (Size) carry->bytes)
			continue;
		carry->keys[carry->count] = previous->keys[i];
		carry->segments[carry->count] = NULL;
		carry->handed[carry->count] = previous->handles[i];
		carry->count++;
	}
	elog(DEBUG1, "powerrank: %lld of the %lld edges changed since the cached graph %llu of relation %u: %d kept scores handed over",
		 (long long) changed, (long long) graph->n_edges, (unsigned long long) previous->id, relid,
		 carry->count);
}

/*
 * Before graph (just built or patched by this backend) is published under key: when the cache
 * holds an earlier graph of the same table, columns and direction that keeps results, and at most
 * GRAPH_CACHE_CARRY_FRACTION of graph's stored edges changed since (pr_graph_changed_edges), makes
 * one start vector per kept result: its scores over graph's nodes (a node new to the table at 1/N),
 * scaled to sum 1.  When that earlier graph is the base graph was patched from (origin, may be
 * NULL), the patch's node map and changed-edge count serve, and the earlier graph is not read; a
 * delta entry patched from a delta entry takes the base's results themselves (carry_handed: no
 * copy, no pass over the nodes); otherwise a delta entry (the earlier one, or graph's, which then
 * gives its root's node count) carries nothing.
 * graph_cache_publish pins them with the entry; graph_cache_carry_end detaches them.  Nothing is
 * carried when the cache is off or anything is missing.  Call it in the same subtransaction as the
 * publish: its segments are not pinned.
 */
void
graph_cache_carry_scores(const GraphCacheKey *key, const PrGraph *graph,
						 const GraphCachePatchOrigin *origin, GraphCacheCarry *carry)
{
	PreviousResults previous;
	dsm_segment *attached;
	PrGraph		old_graph;
	int			i;

	memset(carry, 0, sizeof(GraphCacheCarry));
	if (cache == NULL || graph->n_nodes == 0 || powerrank_cache_size_mb <= 0 ||
		!reference_previous(key, &previous))
		return;
	if (origin != NULL && origin->base_id == previous.id)
	{
		memset(&old_graph, 0, sizeof(PrGraph));
		old_graph.n_nodes = origin->base_nodes;
		release_reference(previous.slot, previous.id);
		if (origin->delta_entry && previous.delta_entry && origin->map == NULL &&
			origin->base_nodes == graph->n_nodes)
			carry_handed(&previous, origin->changed_edges, graph, key->relid, carry);
		else
			carry_from(&previous, &old_graph, origin->map, origin->changed_edges, graph,
					   key->relid, carry);
	}
	else if ((origin != NULL && origin->delta_entry) || previous.delta_entry ||
			 (attached = attach_entry(previous.handle, previous.slot, previous.id)) == NULL)
		/* a delta entry's graph is not a flat graph to compare: only its base's results carry */
		release_reference(previous.slot, previous.id);
	else
	{
		map_read_only(attached);
		if (map_segment(dsm_segment_address(attached), dsm_segment_map_length(attached),
						&old_graph))
			carry_from(&previous, &old_graph, NULL, -1, graph, key->relid, carry);
		dsm_detach(attached);
	}
	for (i = 0; i < previous.count; i++)
		dsm_detach(previous.results[i]);
}

/* Detaches carry's segments: those the publish pinned stay, the others are destroyed. */
void
graph_cache_carry_end(GraphCacheCarry *carry)
{
	int			i;

	for (i = 0; i < carry->count; i++)
		if (carry->segments[i] != NULL)
			dsm_detach(carry->segments[i]);
	carry->count = 0;
}

/*
 * Index of the kept key of the entry in slot, or -1.  Caller holds the lock.
 */
static int
find_kept(const GraphCacheEntry *entry, const GraphCacheScoresKey *scores_key)
{
	int			j;

	for (j = 0; j < GRAPH_CACHE_KEPT; j++)
		if (entry->kept[j].used &&
			memcmp(&entry->kept[j].key, scores_key, sizeof(GraphCacheScoresKey)) == 0)
			return j;
	return -1;
}

/* The id of the READY entry with key, or 0 when the cache holds none. */
uint64
graph_cache_entry_id(const GraphCacheKey *key)
{
	uint64		id = 0;
	int			slot;

	if (cache == NULL)
		return 0;
	LWLockAcquire(cache->lock, LW_SHARED);
	slot = find_ready(key);
	if (slot >= 0)
		id = cache->entries[slot].id;
	LWLockRelease(cache->lock);
	return id;
}

/*
 * Copies the start vector the entry entry_id keeps for scores_key (its nodes' scores, in its
 * internal order) into start (nodes values); false when it keeps none.  The vector is mapped
 * under the lock, so the caller needs no reference on the entry.
 */
bool
graph_cache_start_scores(uint64 entry_id, const GraphCacheScoresKey *scores_key, int64 nodes,
						 double *start)
{
	GraphCacheEntry *entry;
	dsm_segment *attached = NULL;
	int			j;

	if (cache == NULL)
		return false;
	LWLockAcquire(cache->lock, LW_SHARED);
	entry = find_entry_by_id(entry_id);
	if (entry != NULL && entry->nodes == nodes && (j = find_kept(entry, scores_key)) >= 0 &&
		entry->kept[j].has_start)
		attached = dsm_attach(entry->kept[j].start);
	LWLockRelease(cache->lock);
	if (attached == NULL)
		return false;
	if (dsm_segment_map_length(attached) < (Size) nodes * sizeof(double))
	{
		dsm_detach(attached);
		return false;
	}
	memcpy(start, dsm_segment_address(attached), (Size) nodes * sizeof(double));
	dsm_detach(attached);
	return true;
}

/*
 * True when the entry (READY) would keep a result for scores_key whose last L1 residual is below
 * bound: it has none for that key, or one with a looser bound (replaced), or a free kept slot for a
 * new key; and a new vector does not pass GRAPH_CACHE_KEPT_SEGMENTS.  *kept_slot: where it goes.
 * Caller holds the lock.
 */
static bool
wants_scores(GraphCacheEntry *entry, const GraphCacheScoresKey *scores_key, double bound,
			 int *kept_slot)
{
	int			j;

	*kept_slot = -1;
	if (entry == NULL || entry->state != ENTRY_READY)
		return false;
	j = find_kept(entry, scores_key);
	if (j >= 0 && entry->kept[j].has_result)
	{
		*kept_slot = j;
		return bound < entry->kept[j].result_bound;
	}
	if (cache->kept_segments >= GRAPH_CACHE_KEPT_SEGMENTS)
		return false;
	if (j >= 0)
	{
		*kept_slot = j;
		return true;
	}
	for (j = 0; j < GRAPH_CACHE_KEPT; j++)
		if (!entry->kept[j].used)
		{
			*kept_slot = j;
			return true;
		}
	return false;
}

/*
 * Whether graph_cache_keep_scores would keep the result of a run of scores_key on entry entry_id
 * whose last L1 residual is below bound.
 */
bool
graph_cache_wants_scores(uint64 entry_id, const GraphCacheScoresKey *scores_key, double bound)
{
	bool		wanted;
	int			kept_slot;

	if (cache == NULL)
		return false;
	LWLockAcquire(cache->lock, LW_SHARED);
	wanted = wants_scores(find_entry_by_id(entry_id), scores_key, bound, &kept_slot);
	LWLockRelease(cache->lock);
	return wanted;
}

/*
 * Keeps scores (nodes values, the entry's internal order: a converged run's result, its last L1
 * residual below bound) as the result of scores_key on the entry entry_id, in a new pinned
 * segment; returns whether it did.  A result kept before is replaced when bound is tighter, else
 * stays.  Not kept when the entry is gone, has no slot left, the cache holds
 * GRAPH_CACHE_KEPT_SEGMENTS vectors, or the vector would pass powerrank.cache_size (kept vectors
 * never evict graphs).
 */
bool
graph_cache_keep_scores(uint64 entry_id, const GraphCacheScoresKey *scores_key, double bound,
						int64 nodes, const double *scores)
{
	int64		limit = (int64) powerrank_cache_size_mb * 1024 * 1024;
	int64		bytes = nodes * (int64) sizeof(double);
	dsm_segment *segment;
	GraphCacheEntry *entry;
	int			kept_slot;
	bool		kept = false;
	dsm_handle	replaced[1];
	int			n_replaced = 0;

	if (cache == NULL || nodes <= 0 || bytes > limit ||
		!graph_cache_wants_scores(entry_id, scores_key, bound))
		return false;
	/* not pinned yet: an ERROR here lets the resource owner destroy the segment */
	segment = dsm_create((Size) bytes, DSM_CREATE_NULL_IF_MAXSEGMENTS);
	if (segment == NULL)
		return false;
	memcpy(dsm_segment_address(segment), scores, (Size) bytes);

	LWLockAcquire(cache->lock, LW_EXCLUSIVE);
	entry = find_entry_by_id(entry_id);
	if (wants_scores(entry, scores_key, bound, &kept_slot) && entry->nodes == nodes)
	{
		GraphCacheKept *slot = &entry->kept[kept_slot];

		if (slot->has_result)
		{
			/* the same size in place of the looser result */
			replaced[n_replaced++] = slot->result;
			dsm_pin_segment(segment);
			slot->result = dsm_segment_handle(segment);
			slot->result_bound = bound;
			kept = true;
		}
		else if (cache->bytes + bytes <= limit)
		{
			dsm_pin_segment(segment);
			if (!slot->used)
			{
				memset(slot, 0, sizeof(GraphCacheKept));
				slot->key = *scores_key;
				slot->used = true;
			}
			slot->has_result = true;
			slot->result = dsm_segment_handle(segment);
			slot->result_bound = bound;
			entry->kept_bytes += bytes;
			cache->bytes += bytes;
			cache->kept_segments++;
			kept = true;
		}
	}
	LWLockRelease(cache->lock);
	unpin_segments(replaced, n_replaced);
	dsm_detach(segment);
	return kept;
}

/*
 * Keeps segment (not pinned; a layout of kind derived from the graph of entry entry_id) with that
 * entry, in place of the entry's layout of that kind when replace, else only when it keeps none;
 * returns whether it did.  Not kept when the entry is gone, the cache holds
 * GRAPH_CACHE_KEPT_SEGMENTS kept segments, or the segment would pass powerrank.cache_size (a layout
 * never evicts a graph).  A replaced layout stays alive while mapped.  The caller detaches its
 * mapping when done: a kept segment stays pinned with the entry, any other goes.
 */
static bool
keep_layout(uint64 entry_id, GraphCacheLayoutKind kind, dsm_segment *segment, bool replace)
{
	int64		limit = (int64) powerrank_cache_size_mb * 1024 * 1024;
	int64		bytes = (int64) dsm_segment_map_length(segment);
	int			at = (int) kind - 1;
	GraphCacheEntry *entry;
	dsm_handle	replaced = 0;
	bool		has_replaced = false;
	bool		kept = false;

	if (cache == NULL || at < 0 || at >= ENTRY_LAYOUTS)
		return false;
	LWLockAcquire(cache->lock, LW_EXCLUSIVE);
	entry = find_entry_by_id(entry_id);
	if (entry != NULL && entry->state == ENTRY_READY && (replace || !entry->has_layout[at]))
	{
		int64		old_bytes = entry->has_layout[at] ? entry->layout_bytes[at] : 0;

		if ((entry->has_layout[at] || cache->kept_segments < GRAPH_CACHE_KEPT_SEGMENTS) &&
			cache->bytes - old_bytes + bytes <= limit)
		{
			if (entry->has_layout[at])
			{
				replaced = entry->layout[at];
				has_replaced = true;
				cache->kept_segments--;
			}
			dsm_pin_segment(segment);
			entry->has_layout[at] = true;
			entry->layout[at] = dsm_segment_handle(segment);
			entry->layout_bytes[at] = bytes;
			entry->kept_bytes += bytes - old_bytes;
			cache->bytes += bytes - old_bytes;
			cache->kept_segments++;
			kept = true;
		}
	}
	LWLockRelease(cache->lock);
	if (has_replaced)
		unpin_segments(&replaced, 1);
	return kept;
}

/* Keeps segment, a layout of kind, with the entry entry_id when it keeps none (keep_layout). */
bool
graph_cache_keep_layout(uint64 entry_id, GraphCacheLayoutKind kind, dsm_segment *segment)
{
	return keep_layout(entry_id, kind, segment, false);
}

/*
 * Keeps segment, a layout of kind, with the entry entry_id in place of the one it keeps
 * (keep_layout): the latest of a kind whose content depends on more than the graph.
 */
bool
graph_cache_replace_layout(uint64 entry_id, GraphCacheLayoutKind kind, dsm_segment *segment)
{
	return keep_layout(entry_id, kind, segment, true);
}

/*
 * Maps (read-only) the layout of kind the entry entry_id keeps; NULL when it keeps none.  Mapped
 * under the lock, so the caller needs no reference on the entry; the mapping keeps the segment
 * alive until it is detached.
 */
dsm_segment *
graph_cache_map_layout(uint64 entry_id, GraphCacheLayoutKind kind)
{
	GraphCacheEntry *entry;
	dsm_segment *attached = NULL;
	int			at = (int) kind - 1;

	if (cache == NULL || at < 0 || at >= ENTRY_LAYOUTS)
		return NULL;
	LWLockAcquire(cache->lock, LW_SHARED);
	entry = find_entry_by_id(entry_id);
	if (entry != NULL && entry->has_layout[at])
		attached = dsm_attach(entry->layout[at]);
	LWLockRelease(cache->lock);
	if (attached != NULL)
		map_read_only(attached);
	return attached;
}

/*
 * Evicts the entries of relid in database (every relation of the database when relid is
 * InvalidOid).  Idle entries are freed now, entries in use when their last reader leaves.
 * Returns how many entries were evicted.
 */
int
graph_cache_drop(Oid database, Oid relid)
{
	dsm_handle	unpinned[GRAPH_CACHE_SLOTS * ENTRY_HANDLES];
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
		retire_entry(entry, unpinned, &n_unpinned);
	}
	LWLockRelease(cache->lock);
	unpin_segments(unpinned, n_unpinned);
	return dropped;
}

/*
 * Copies the READY entries of database into a palloc'd array (a delta entry with its own node
 * count and its root's bytes); returns their count.
 */
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
		/* a delta entry's own graph: its root's nodes less the absent ones */
		out[count].nodes = entry->nodes - entry->absent;
		out[count].edges = entry->edges;
		out[count].bytes = entry->bytes;
		out[count].built_at = entry->built_at;
		out[count].last_used = entry->last_used;
		out[count].hits = entry->hits;
		out[count].refcount = entry->refcount;
		out[count].delta_rows = entry->delta_rows;
		out[count].keeps_out_edges = entry->has_layout[GRAPH_CACHE_LAYOUT_OUT_EDGES - 1];
		if (entry->root_id != 0)
			out[count].root_bytes = find_entry_by_id(entry->root_id)->bytes;
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
