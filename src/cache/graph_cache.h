/*
 * graph_cache.h — the shared-memory graph cache: built graphs of tracked tables kept in dynamic
 * shared memory (one pinned segment per graph) and reused by every session until the table
 * changes; and, as entries of the same registry and budget, the merged node sets of distributed
 * runs (GRAPH_CACHE_NODE_SET).
 *
 * graph_cache.c        the registry in the main shared memory, its lock, the segments, LRU eviction
 * cache_tracking.c     which tables may be cached (change-tracking trigger, no RLS...) and the key
 *                      of the table's current content, read from the change log through the
 *                      caller's snapshot
 * cache_capture.c      the rows writers changed (statement triggers with transition tables on
 *                      tables made live with powerrank_cache_live) and a cached graph patched
 *                      with them
 * cache_out_edges.c    a cached graph's out-edges, kept with its entry for HITS
 * cache_compact.c      compaction of the change log (a background worker, or on request)
 * cache_sql.c          the SQL interface: powerrank_cache view, powerrank_cache_drop, status
 *
 * Only with shared_preload_libraries = 'powerrank'; otherwise every call builds its graph itself.
 */
#ifndef GRAPH_CACHE_H
#define GRAPH_CACHE_H

#include "powerrank.h"

#include "nodes/pg_list.h"
#include "storage/dsm.h"
#include "utils/timestamp.h"

#include "graph/graph_scan.h"

/* Slots of the registry (graphs cached at once, all databases together). */
#define GRAPH_CACHE_SLOTS 128

/* Rebase rows of the change log a key can name; a snapshot that sees more is served uncached. */
#define GRAPH_CACHE_MAX_REBASES 8

/* What a cache entry holds (GraphCacheKey.kind). */
typedef enum GraphCacheKind
{
	GRAPH_CACHE_GRAPH = 0,		/* a tracked table's graph, in the core's flat form */
	GRAPH_CACHE_NODE_SET		/* a partitioned table's merged node set, as the coordinator of a
								 * distributed run writes it (src/distributed/coordinator.c) */
} GraphCacheKind;

/*
 * What identifies one cached graph: the table's storage and edge columns, the direction, and the
 * rows of the table's change log that the caller's snapshot sees (see cache_tracking.c).  A node
 * set's key names its partitioned table, edge columns and direction only (graph_cache_node_set_key):
 * what it was merged from is in its segment, checked against the shards' answers.  Compared with
 * memcmp, so always zeroed before filling.
 */
typedef struct GraphCacheKey
{
	GraphCacheKind kind;
	Oid			database;
	TransactionId database_xmin;	/* of its pg_database row: tells a database from a later one
									 * that reuses its oid */
	Oid			relid;
	Oid			relfilenode;	/* changes with TRUNCATE, VACUUM FULL, CLUSTER, rewrites */
	AttrNumber	attnums[3];		/* src, dst, weight (0: unweighted) */
	Oid			types[3];		/* their types (0 for the absent weight) */
	bool		directed;
	uint64		rebases[GRAPH_CACHE_MAX_REBASES];	/* the rebase rows' transactions (full
													 * ids), ascending; 0 pads */
	int64		changes;		/* the other rows: one per tracked writing transaction */
} GraphCacheKey;

/*
 * A snapshot as full transaction ids: its xmin, its xmax and the top-level transactions in
 * progress at it (ascending; at most the server's processes, GetMaxSnapshotXidCount); with, for
 * each rebase row of the table it sees (GraphCacheKey.rebases, same order), the kept_from of a
 * background compaction's row (cache_compact.c; 0: not one).
 */
typedef struct GraphCacheSnapshot
{
	uint64		xmin;
	uint64		xmax;
	uint64		rebases_kept_from[GRAPH_CACHE_MAX_REBASES];
	uint64		in_progress[FLEXIBLE_ARRAY_MEMBER];
} GraphCacheSnapshot;

/*
 * The writers (log rows that are not rebase rows) a snapshot's content includes, described by the
 * snapshot itself: every transaction below its xmax that was not in progress at it (committed ones
 * are seen, aborted ones are not).  An entry records the snapshot its graph was read through: a
 * base a later snapshot's reader patches with the change rows of the writers it sees beyond it
 * (cache_capture.c).
 */
typedef struct GraphCacheWriters
{
	int			count;			/* transactions in snapshot->in_progress; -1: no snapshot
								 * described (not read, or taken in recovery): no base */
	GraphCacheSnapshot *snapshot;
	bool		live;			/* the table's capture triggers are in place (cache_capture_on):
								 * its entries of other columns stay as bases to patch */
} GraphCacheWriters;

/*
 * Scores kept with a cache entry (see "Kept scores" in graph_cache.c): per entry at most
 * GRAPH_CACHE_KEPT parameter sets, each with the start carried from the previous graph of the
 * table and the result of a converged run on this one; at most GRAPH_CACHE_KEPT_SEGMENTS vectors
 * (one segment each) in the whole cache.
 */
#define GRAPH_CACHE_KEPT 4
#define GRAPH_CACHE_KEPT_SEGMENTS 64

/*
 * A new graph takes its previous graph's scores as its start when at most this fraction of its
 * stored edges changed (edges removed plus edges added, pr_graph_changed_edges).
 */
#define GRAPH_CACHE_CARRY_FRACTION 0.01

/*
 * What defines the fixed point of a one-column PageRank / RWR on a cached graph besides the graph
 * itself (its columns, weights and direction are the entry's key).  Compared with memcmp, so
 * always zeroed before filling.
 */
typedef struct GraphCacheScoresKey
{
	double		alpha;			/* the damping factor (RWR: 1 - restart) */
	uint64		restart;		/* hash of the restart distribution by external ids; 0: uniform */
	uint64		dangling;		/* hash of the dangling distribution; 0: the restart's */
} GraphCacheScoresKey;

/*
 * Start vectors made for a graph about to be published (graph_cache_carry_scores): segments not
 * pinned yet, so they go away with their mapping unless the publish pins them.
 */
typedef struct GraphCacheCarry
{
	int			count;
	GraphCacheScoresKey keys[GRAPH_CACHE_KEPT];
	dsm_segment *segments[GRAPH_CACHE_KEPT];	/* NULL: handed over (handed[]) */
	dsm_handle	handed[GRAPH_CACHE_KEPT];	/* a result of the entry handed_from, taken over as
											 * it is (a delta entry after its delta-entry base) */
	uint64		handed_from;
	int64		bytes;			/* of each segment */
} GraphCacheCarry;

/*
 * How a patched graph relates to the cached graph it was patched from (graph_cache_carry_scores):
 * that entry's id and node count, its nodes' internal ids in the patched graph (-1: gone; NULL:
 * the same ids) and the stored edges that changed (at most).  delta_entry: the new entry is a
 * delta entry, whose graph is no flat graph to compare with: only that entry's results carry.
 */
typedef struct GraphCachePatchOrigin
{
	uint64		base_id;
	int64		base_nodes;
	const int32 *map;
	int64		changed_edges;
	bool		delta_entry;
} GraphCachePatchOrigin;

/*
 * A cached graph mapped by a reader (graph_cache_acquire_hit, graph_cache_acquire_base): the flat
 * graph of its entry, or, for a delta entry, its root's flat graph and the delta from it.  A delta
 * entry's graph is graph plus delta in graph's numbering (graph's nodes, less the delta's absent
 * ones, with its edges changed by the delta's).
 */
typedef struct GraphCacheHit
{
	dsm_segment *segment;		/* the flat graph's mapping (a delta entry: its root's); detach
								 * with graph_cache_release */
	PrGraph		graph;
	uint64		id;				/* the entry's id */
	int64		skipped_rows;
	dsm_segment *delta_segment; /* a delta entry's mapping, or NULL: a flat entry */
	PrGraphDelta delta;			/* a delta entry's delta (a view into delta_segment) */
	uint64		root_id;		/* a delta entry's root entry (0: a flat entry) */
} GraphCacheHit;

/* A base found for a patch (graph_cache_acquire_base): a hit, and what a patch needs of it. */
typedef struct GraphCacheBase
{
	GraphCacheHit hit;
	int64		delta_rows;		/* rows already patched into it */
	GraphCacheWriters seen;		/* the snapshot its content was read through: the caller
								 * applies the rows of the writers it sees beyond it */
	bool		root_weights_known; /* root_weights bounds its root's weights (a flat entry: its
									 * own; a delta entry keeps none) */
	PrWeightRange root_weights;
} GraphCacheBase;

/* What a layout kept with a cache entry holds (graph_cache_keep_layout). */
typedef enum GraphCacheLayoutKind
{
	GRAPH_CACHE_LAYOUT_SHARD_PART = 1,	/* a shard's part: roles and length-sorted rows (shard.c) */
	GRAPH_CACHE_LAYOUT_ROOT_FACTS,	/* a weighted root's weight range and out-degrees, what
									 * extending its deltas needs (cache_capture.c) */
	GRAPH_CACHE_LAYOUT_SHARD_NUMBERING,	/* a shard's part renumbered for the rows it owns, with
										 * the owner bits it was made for (shard.c) */
	GRAPH_CACHE_LAYOUT_SHARD_PEERS,	/* the rows a shard's part exchanges with each peer, under
									 * the name of the parts' graphs (shard.c) */
	GRAPH_CACHE_LAYOUT_OUT_EDGES	/* the graph's out-edges, for HITS (cache_out_edges.c) */
} GraphCacheLayoutKind;

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
	int64		delta_rows;		/* changed rows patched in since the entry's graph was last
								 * built from the table's rows (0: built) */
	int64		root_bytes;		/* a delta entry: its root's bytes, which it reads too (0: a
								 * flat entry) */
	bool		keeps_out_edges;	/* its graph's out-edges are kept with it
									 * (GRAPH_CACHE_LAYOUT_OUT_EDGES) */
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

/* ---- graph_cache.c ---- */

void		graph_cache_shmem_request(void);
void		graph_cache_shmem_attach(void);
bool		graph_cache_available(void);
bool		graph_cache_acquire(const GraphCacheKey *key, dsm_segment **segment, PrGraph *graph,
								int64 *skipped_rows, uint64 *entry_id);
bool		graph_cache_acquire_hit(const GraphCacheKey *key, GraphCacheHit *hit);
void		graph_cache_release(dsm_segment **segment);
void		graph_cache_release_hit(GraphCacheHit *hit);
void		graph_cache_publish(const GraphCacheKey *key, const PrGraph *graph, int64 skipped_rows,
								GraphCacheCarry *carry, const GraphCacheWriters *writers,
								int64 delta_rows);
bool		graph_cache_publish_segment(const GraphCacheKey *key, dsm_segment *segment,
										Size flat_bytes, const PrGraph *graph, int64 skipped_rows,
										const GraphCacheWriters *writers);
void		graph_cache_prefault(dsm_segment *segment);
bool		graph_cache_publish_patched(const GraphCacheKey *key, dsm_segment *segment,
										const PrGraph *graph, int64 skipped_rows,
										GraphCacheCarry *carry, const GraphCacheWriters *writers,
										int64 delta_rows, const PrWeightRange *weights,
										uint64 *entry_id);
bool		graph_cache_publish_delta(const GraphCacheKey *key, dsm_segment *segment,
									  uint64 root_id, const PrGraph *root,
									  const PrGraphDelta *delta, int64 edges, int64 skipped_rows,
									  GraphCacheCarry *carry, const GraphCacheWriters *writers,
									  int64 delta_rows, uint64 *entry_id);
bool		graph_cache_acquire_base(const GraphCacheKey *key, const GraphCacheWriters *writers,
									 GraphCacheBase *base);
void		graph_cache_carry_scores(const GraphCacheKey *key, const PrGraph *graph,
									 const GraphCachePatchOrigin *origin, GraphCacheCarry *carry);
void		graph_cache_carry_end(GraphCacheCarry *carry);
uint64		graph_cache_entry_id(const GraphCacheKey *key);
bool		graph_cache_start_scores(uint64 entry_id, const GraphCacheScoresKey *scores_key,
									 int64 nodes, double *start);
bool		graph_cache_wants_scores(uint64 entry_id, const GraphCacheScoresKey *scores_key,
									 double bound);
bool		graph_cache_keep_scores(uint64 entry_id, const GraphCacheScoresKey *scores_key,
									double bound, int64 nodes, const double *scores);
int			graph_cache_base_horizons(Oid database, Oid **relids, uint64 **xmins);
dsm_segment *graph_cache_acquire_node_set(const GraphCacheKey *key);
bool		graph_cache_publish_node_set(const GraphCacheKey *key, dsm_segment *segment,
										 int64 nodes, int64 edges);
bool		graph_cache_keep_layout(uint64 entry_id, GraphCacheLayoutKind kind,
									dsm_segment *segment);
bool		graph_cache_replace_layout(uint64 entry_id, GraphCacheLayoutKind kind,
									   dsm_segment *segment);
dsm_segment *graph_cache_map_layout(uint64 entry_id, GraphCacheLayoutKind kind);
int			graph_cache_drop(Oid database, Oid relid);
int			graph_cache_snapshot(Oid database, GraphCacheEntryInfo **entries);
void		graph_cache_status(GraphCacheStatus *status);

/* ---- cache_log.c ---- */

/* The change log's table, in the extension's schema. */
#define CHANGE_LOG_TABLE "powerrank_change_log"

/* The user and security context saved while the change log's owner acts. */
typedef struct CacheSavedUser
{
	Oid			user;
	int			context;
	int			guc_nest_level; /* of the pinned search_path */
} CacheSavedUser;

Oid			cache_extension_schema(void);
char	   *cache_qualified_name(Oid schema, const char *name);
char	   *cache_log_name(Oid schema);
Oid			cache_log_relid(Oid schema);
AttrNumber	cache_log_column(Oid log_relid, const char *name, Oid type);
bool		cache_log_snapshot_columns(Oid log_relid, AttrNumber *xmax, AttrNumber *xip);
bool		cache_log_records_snapshots(Oid log_relid);
int			cache_pin_search_path(void);
void		cache_become_log_owner(Oid schema, CacheSavedUser *saved);
void		cache_restore_user(const CacheSavedUser *saved);

/* ---- cache_tracking.c ---- */

/*
 * How a table's change tracking stands, best first (the powerrank_cache view's tracking column):
 * only TRACKING_ON lets the cache serve the table.
 */
typedef enum TrackingState
{
	TRACKING_ON,				/* the tracking trigger, enabled ALWAYS */
	TRACKING_NOT_ALWAYS,		/* the tracking trigger, enabled for origin (or replica) only */
	TRACKING_DISABLED,			/* the tracking trigger, disabled */
	TRACKING_ALTERED,			/* powerrank_track or a trigger on powerrank_track_changes()
								 * that is not the tracking trigger (events, columns, WHEN) */
	TRACKING_MISSING			/* no such trigger */
} TrackingState;

void		cache_tracking_init(void);
TrackingState cache_tracking_state(Oid relid, Oid function, char **trigger_name);
const char *cache_tracking_state_name(TrackingState state);
List	   *cache_tables_with_tracking_trigger(Oid function);
Oid			cache_tracking_function(Oid schema);
void		cache_log_rebase(Oid schema, Oid relid);
Oid			cache_lock_edges_argument(FunctionCallInfo fcinfo, const char *action,
									  const char *detail);
void		cache_install_trigger(const char *qualified, const char *name, bool replace,
								  const char *events, const char *referencing,
								  const char *function);
bool		graph_cache_probe(const EdgeScanTarget *target, bool directed, GraphCacheKey *key);
bool		graph_cache_probe_writers(const EdgeScanTarget *target, bool directed,
									  GraphCacheKey *key, GraphCacheWriters *writers);
bool		graph_cache_node_set_key(const EdgeScanTarget *target, GraphCacheKey *key);

/* ---- cache_capture.c ---- */

/* How a run got its graph (powerrank_last_run's graph_source). */
typedef enum GraphSource
{
	GRAPH_SOURCE_READ = 0,		/* read from the table and built */
	GRAPH_SOURCE_CACHE,			/* the cached graph of the snapshot's content */
	GRAPH_SOURCE_DELTA,			/* a cached graph patched with the rows changed since */
	GRAPH_SOURCE_RANKGRAPH		/* a rankgraph value */
} GraphSource;

/*
 * A cached graph patched with the rows changed since (graph_cache_patch): a delta entry's delta
 * from its root (delta_segment set), or a flat graph written whole.
 */
typedef struct GraphCachePatched
{
	dsm_segment *segment;		/* flat: the patched graph's flat form, not pinned yet; delta:
								 * the root's mapping (a reader's reference) */
	PrGraph		graph;			/* its arrays (delta: the root's) */
	dsm_segment *delta_segment; /* delta: its flat form, not pinned yet (NULL: flat) */
	PrGraphDelta delta;			/* delta: a view into delta_segment, in the root's numbering */
	int64		delta_edges;	/* delta: the stored edges of root plus delta */
	uint64		root_id;		/* delta: the root's entry */
	PrGraphPatch plan;			/* flat: its node map, changed edges and weight bounds (free it
								 * with pr_graph_patch_free) */
	PrWeightRange weights;		/* flat: bounds on the patched graph's weights */
	GraphCachePatchOrigin origin;	/* the base it was patched from */
	int64		skipped_rows;	/* rows of its content skipped for a NULL */
	int64		delta_rows;		/* changed rows applied now */
	int64		entry_delta_rows;	/* changed rows patched in since its last build */
} GraphCachePatched;

bool		cache_capture_on(Oid relid, Oid schema);
bool		graph_cache_patch(const EdgeScanTarget *target, bool directed, const GraphCacheKey *key,
							  const GraphCacheWriters *writers, const PrAllocator *alloc,
							  GraphCachePatched *patched);
int64		graph_cache_delta_edges(const PrGraph *root, const PrGraphDelta *delta);
void		graph_cache_materialize(const PrGraph *root, const PrGraphDelta *delta,
									const PrAllocator *alloc, PrGraph *out);

/* ---- cache_out_edges.c ---- */

bool		graph_cache_out_edges(uint64 entry_id, PrGraph *graph, const PrAllocator *alloc,
								  dsm_segment **mapping);

/* ---- cache_compact.c ---- */

void		cache_compaction_note_writes(int writes);
void		cache_compaction_request(void);
int64		cache_compact_log(int64 min_rows, bool keep_bases);

/* ---- cache_sql.c ---- */

void		graph_cache_notice_not_preloaded(void);

#endif							/* GRAPH_CACHE_H */
