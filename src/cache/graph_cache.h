/*
 * graph_cache.h — the shared-memory graph cache: built graphs of tracked tables kept in dynamic
 * shared memory (one pinned segment per graph) and reused by every session until the table
 * changes.
 *
 * graph_cache.c        the registry in the main shared memory, its lock, the segments, LRU eviction
 * cache_tracking.c     which tables may be cached (change-tracking trigger, no RLS...) and the key
 *                      of the table's current content, read from the change log through the
 *                      caller's snapshot
 * cache_compact.c      compaction of the change log (a background worker, or on request)
 * cache_sql.c          the SQL interface: powerrank_cache view, powerrank_cache_drop, status
 *
 * Only with shared_preload_libraries = 'powerrank'; otherwise every call builds its graph itself.
 */
#ifndef GRAPH_CACHE_H
#define GRAPH_CACHE_H

#include "powerrank.h"

#include "storage/dsm.h"
#include "utils/timestamp.h"

#include "graph/graph_scan.h"

/* Slots of the registry (graphs cached at once, all databases together). */
#define GRAPH_CACHE_SLOTS 128

/* Rebase rows of the change log a key can name; a snapshot that sees more is served uncached. */
#define GRAPH_CACHE_MAX_REBASES 8

/*
 * What identifies one cached graph: the table's storage and edge columns, the direction, and the
 * rows of the table's change log that the caller's snapshot sees (see cache_tracking.c).
 * Compared with memcmp, so always zeroed before filling.
 */
typedef struct GraphCacheKey
{
	Oid			database;
	Oid			relid;
	Oid			relfilenode;	/* changes with TRUNCATE, VACUUM FULL, CLUSTER, rewrites */
	AttrNumber	attnums[3];		/* src, dst, weight (0: unweighted) */
	Oid			types[3];		/* their types (0 for the absent weight) */
	bool		directed;
	uint64		rebases[GRAPH_CACHE_MAX_REBASES];	/* the rebase rows' transactions (full
													 * ids), ascending; 0 pads */
	int64		changes;		/* the other rows: one per tracked writing transaction */
} GraphCacheKey;

/* One registry entry as the SQL view shows it (a copy taken under the lock). */
typedef struct GraphCacheEntryInfo
{
	GraphCacheKey key;
	uint64		id;				/* unique for the life of the cluster */
	int64		nodes;
	int64		edges;
	int64		bytes;
	TimestampTz built_at;
	TimestampTz last_used;
	int64		hits;
	int			refcount;
} GraphCacheEntryInfo;

/* Counters of the whole cache. */
typedef struct GraphCacheStatus
{
	int			slots;
	int			entries;		/* entries that can be served */
	int			retired;		/* evicted entries still in use by a reader */
	int			segments;		/* segments the cache holds pinned */
	int64		bytes;			/* their total size */
} GraphCacheStatus;

/* ---- guc.c ---- */

/* powerrank.cache_size: megabytes of shared memory the cache may hold; 0 disables it. */
extern int	powerrank_cache_size_mb;

/* ---- graph_cache.c ---- */

void		graph_cache_shmem_init(void);
bool		graph_cache_available(void);
bool		graph_cache_acquire(const GraphCacheKey *key, dsm_segment **segment, PrGraph *graph,
								int64 *skipped_rows, uint64 *entry_id);
void		graph_cache_release(dsm_segment **segment);
void		graph_cache_publish(const GraphCacheKey *key, const PrGraph *graph, int64 skipped_rows);
bool		graph_cache_publish_segment(const GraphCacheKey *key, dsm_segment *segment,
										Size flat_bytes, const PrGraph *graph, int64 skipped_rows);
int			graph_cache_drop(Oid database, Oid relid);
int			graph_cache_snapshot(Oid database, GraphCacheEntryInfo **entries);
void		graph_cache_status(GraphCacheStatus *status);

/* ---- cache_tracking.c ---- */

/* The user and security context saved while the change log's owner acts. */
typedef struct CacheSavedUser
{
	Oid			user;
	int			context;
} CacheSavedUser;

void		cache_tracking_init(void);
bool		graph_cache_probe(const EdgeScanTarget *target, bool directed, GraphCacheKey *key);
Oid			cache_extension_schema(void);
void		cache_become_log_owner(Oid schema, CacheSavedUser *saved);
void		cache_restore_user(const CacheSavedUser *saved);
char	   *cache_log_name(Oid schema);

/* ---- cache_compact.c ---- */

void		cache_compaction_note_writes(int writes);
void		cache_compaction_request(void);
int64		cache_compact_log(int64 min_rows);

/* ---- cache_sql.c ---- */

void		graph_cache_notice_not_preloaded(void);

#endif							/* GRAPH_CACHE_H */
