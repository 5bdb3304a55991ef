/*
 * shard.h — one part of a distributed ranking run: the graph of one server's edge table (its
 * partition of the coordinator's partitioned table) and the sparse products over it.  A shard
 * server keeps one for its session (the powerrank_shard_* SQL functions, called by the coordinator
 * over libpq); the coordinator keeps one for each local partition.  Either keeps it across calls
 * while the table's content is the one it was read as.
 *
 * The part's graph is the graph of its own rows (the graph cache's, used in place, when the table
 * is tracked, else built): its nodes are the endpoints of its rows, numbered in ascending order of their
 * external ids as every graph is.  Its products take and give vectors over those local nodes only;
 * prepare replaces the out-strengths by the whole graph's, so the normalised pull product of a row
 * whose in-edges all lie in this part is the one the whole graph gives.
 */
#ifndef SHARD_H
#define SHARD_H

#include "powerrank.h"

#include "cache/graph_cache.h"
#include "graph/edge_table.h"

/* Version of the bytes the shard functions exchange; the coordinator refuses another. */
#define SHARD_PROTOCOL 10

/*
 * A shard session's malloc (keep_product_memory): blocks up to SHARD_MMAP_THRESHOLD (glibc's
 * largest) come from the heap, which keeps SHARD_PRODUCT_COPIES times a product's vectors (at least
 * SHARD_KEPT_HEAP_MIN) when freed; SHARD_WARMED_COPIES of them (at most half of what it keeps) are
 * touched at the session's first prepare, a byte every SHARD_WARM_STEP (a page).
 */
#define SHARD_MMAP_THRESHOLD (32 * 1024 * 1024)
#define SHARD_PRODUCT_COPIES 8
#define SHARD_WARMED_COPIES 4
#define SHARD_WARM_STEP 4096
#define SHARD_KEPT_HEAP_MIN ((int64) 64 * 1024 * 1024)

/* Largest sum of weights a part may hold: far below where a build scales weights. */
#define SHARD_WEIGHT_LIMIT_EXP 1000

/*
 * What names the graph of a part beyond the session that opened it: the shard cluster (its system
 * identifier and the start of its postmaster) and the number of the graph there: the graph cache's
 * entry id (a cached graph never changes, and an entry id is never reused while the postmaster
 * runs), or SHARD_SESSION_CONTENT plus the session's part number for a graph with no cache entry
 * (meaningful to that session only).  Compared with memcmp.
 */
typedef struct ShardContent
{
	uint64		system_identifier;
	int64		started;
	uint64		number;
} ShardContent;

#define SHARD_SESSION_CONTENT (UINT64CONST(1) << 62)

/* True when a content number names the graph in any session of its shard (a cache entry). */
static inline bool
shard_content_lasts(const ShardContent *content)
{
	return content->number != 0 && (content->number & SHARD_SESSION_CONTENT) == 0;
}

/* What the open of a part reports, ahead of its nodes (shard_open_write). */
typedef struct ShardSummary
{
	uint32		magic;			/* SHARD_MAGIC: the bytes come from this program */
	uint32		protocol;		/* SHARD_PROTOCOL */
	int64		n_nodes;		/* local nodes */
	int64		n_edges;		/* stored edges */
	double		total_weight;	/* sum of every edge's weight */
	int32		cache_hit;		/* the graph came from the server's graph cache, or is the
								 * session's part kept from an open of the same content */
	int32		weighted;
	double		load_seconds;	/* reading and building (or mapping) the graph */
	uint64		part_id;		/* the part's number in its session (new graph or engine state,
								 * new number: the caller prepares it again) */
	ShardContent content;		/* its graph */
	int32		same;			/* its graph is the one the caller named (known_content): its
								 * node ids, out-strengths and roles are not repeated */
	int32		reusable;		/* the part can serve a later open of the same content (its
								 * table is tracked): worth keeping the session for */
} ShardSummary;

#define SHARD_MAGIC 0x50525331	/* "PRS1" */

/* How out-strengths travel (shard_strengths_write): the tag byte in front of them. */
#define SHARD_STRENGTHS_DOUBLES 0	/* 8-byte doubles */
#define SHARD_STRENGTHS_WHOLE 1		/* whole numbers, a varint each */

/*
 * The roles of a part's local node: a source has an out-edge in the part, a target an in-edge.  The
 * pull products read x on the sources and give y on the targets (every other row is 0); the push
 * product the other way round.  So a product's vectors travel over those rows only.
 */
#define SHARD_ROLE_SOURCE 1
#define SHARD_ROLE_TARGET 2

/* The role of the rows a product reads (input) or gives (output). */
static inline uint8
shard_product_role(PrProduct product, bool input)
{
	return (product == PR_PRODUCT_PUSH) == input ? SHARD_ROLE_TARGET : SHARD_ROLE_SOURCE;
}

/*
 * Rows a part owns (shard_state_prepare given owner bits, one byte a local node): the part keeps
 * the vector values of the nodes it owns and runs the vector operations of those rows (the
 * coordinator's engine, coordinator.c, says which node each part owns).  An owned row may be
 * exported (a source of another part: its values go to that part before a product); a halo row is
 * a source of the part owned by another (its values come from the owner before a product).
 */
#define SHARD_OWNS 1
#define SHARD_EXPORTS 2
#define SHARD_HALO 4

/* The lists of rows derived from the owner bits (shard_role_rows with shard_rows_mask). */
typedef enum ShardRows
{
	SHARD_ROWS_OWNED = 0,		/* the rows it owns */
	SHARD_ROWS_EXPORTED,		/* owned rows other parts read */
	SHARD_ROWS_HALO,			/* sources owned by other parts (every other row is owned) */
	SHARD_ROWS_LISTS
} ShardRows;

/* The owner bits of a list's rows. */
static inline uint8
shard_rows_mask(ShardRows list)
{
	static const uint8 masks[SHARD_ROWS_LISTS] = {SHARD_OWNS, SHARD_EXPORTS, SHARD_HALO};

	return masks[list];
}

/*
 * The restart of a PageRank update on a part's owned rows (shard_state_update), as the coordinator
 * writes it: int32 columns k, int32 flags (SHARD_RESTART_UNIFORM: every column restarts over all
 * nodes, weight 1 / nodes; SHARD_RESTART_TO_DANGLING: the dangling mass goes to a dangling
 * distribution, else it follows the restart), double nodes (the whole graph's), int64 entries of
 * each of the k columns, int64 entries of the dangling distribution; then each column's
 * entries (int32 owned row, local), every column after the other, their weights (double), the
 * dangling distribution's rows (int32, ascending) and weights (double).  Only the part's owned
 * entries travel.
 */
#define SHARD_RESTART_UNIFORM 1
#define SHARD_RESTART_TO_DANGLING 2

/* What the x of a product on owned rows holds (shard_state_owned_product). */
typedef enum ShardGiven
{
	SHARD_GIVEN_HALO = 0,		/* k values for each halo row (the owned rows' are the slot's) */
	SHARD_GIVEN_ALL,			/* k values for every local row */
	SHARD_GIVEN_FILL,			/* k values, those of every local row (a filled vector) */
	SHARD_GIVEN_PEERS			/* nothing: the halo rows come from the other shards
								 * (shard_peers_exchange), the owned rows are the slot's */
} ShardGiven;

/*
 * The shard-to-shard exchange (shard.c, its end): the shards of a run form a group, one rank each
 * (the parts' order), of at most SHARD_MAX_PEERS.  What a part sends to and receives from each
 * peer, as the coordinator writes it (powerrank_shard_peers_connect's lists): int32 parts; for
 * each part, int64 rows sent to it and int64 rows received from it (0 and 0 for itself); then the
 * rows sent (int32 local exported rows, ascending), part after part; then the rows received (int32
 * local halo rows, ascending), part after part.  A part's rows sent to q and q's rows received
 * from it are the same nodes in the same order (ascending local rows ascend in the whole graph).
 */
#define SHARD_MAX_PEERS 1024

/* Most vector slots a part keeps of its owned rows. */
#define SHARD_MAX_SLOTS 64

/*
 * One part's graph and its engine; lives in its own memory context.  Kept by its owner across
 * statements (a shard's session, the coordinator's local partition) and reused by the next open
 * of the same content: the graph cache's key of the content it was read as, compared with the key
 * of the content the open's snapshot sees.
 */
typedef struct ShardState
{
	MemoryContext cxt;
	PrAllocator *alloc;
	MemoryContextCallback cleanup;
	struct ShardState **owner;	/* the owner's pointer to it, cleared when it goes */
	uint64		part_id;		/* unique in this backend */
	bool		has_key;		/* key names its content (the table is tracked) */
	GraphCacheKey key;
	dsm_segment *segment;		/* the graph cache's mapping the graph lives in, or NULL (own
								 * copy); pinned for the session, detached when the part goes */
	uint64		entry_id;		/* the graph cache's entry of its graph (0: none) */
	dsm_segment *out_edges_segment;	/* the graph's out-edges kept with that entry, or made for
									 * it (graph_cache_out_edges); pinned like segment; NULL:
									 * none, or its own */
	dsm_segment *layout_segment;	/* the part's layout (roles, length-sorted rows) kept with
									 * that entry, or made for it; pinned like segment; NULL:
									 * roles of its own, the engine sorts */
	PrSortedRows sorted_rows;	/* in layout_segment */
	PrGraph		graph;			/* the part's own graph (out_strength: its own rows') */
	int64		skipped_rows;	/* rows of its table skipped for a NULL (reported at every open) */
	ShardSummary summary;
	PrGraph		product_graph;	/* graph with the whole graph's out-strengths */
	double	   *global_out;		/* [n_nodes] */
	const uint8 *roles;			/* [n_nodes] SHARD_ROLE_* bits (in layout_segment, or its own) */
	const int32 *rows[3];		/* rows[role]: the local nodes with that role, ascending (in
								 * layout_segment, or its own) */
	int64		row_count[3];
	PrEngine   *engine;			/* CPU engine over product_graph, or owned_graph when the part
								 * owns rows; slots 0 (x) and 1 (y) serve shard_state_product,
								 * slot s + SHARD_SCRATCH_SLOTS the owned rows' slot s */
	int			engine_slots;	/* slots it is prepared with */
	int			k;
	unsigned	needs;
	double	   *x;				/* [n_nodes * k_vectors] a product's whole local vectors */
	double	   *y;
	int			k_vectors;
	const uint8 *owners;		/* [n_nodes] SHARD_OWNS | SHARD_EXPORTS | SHARD_HALO, or NULL:
								 * it owns no rows (every product is relayed whole) */
	const int32 *owned_rows[SHARD_ROWS_LISTS];	/* the lists of ShardRows, ascending local
												 * rows */
	int64		owned_count[SHARD_ROWS_LISTS];
	const int32 *engine_row;	/* [n_nodes] the engine's row of each local node: the owned
								 * ones first, then the halo rows, each ascending */
	const int32 *local_row;		/* [n_nodes] its inverse */
	PrGraph		owned_graph;	/* product_graph renumbered to the engine's rows */
	PrSortedRows owned_sorted;	/* the layout's sorted rows renumbered (has_owned_sorted) */
	bool		has_owned_sorted;
	dsm_segment *numbering_segment;	/* the numbering kept with the graph cache's entry, or made
									 * for it: engine_row, local_row, owned_graph's in_ptr and
									 * owned_sorted's nodes and sources live there; pinned like
									 * segment; NULL: they are its own */
	bool		owners_kept;	/* owners and owned_rows are numbering_segment's too */
	bool		slot_held[SHARD_MAX_SLOTS];	/* the slot holds values: the owned rows' are the
											 * slot's, the halo rows' those of its last
											 * product's input */
} ShardState;

/* The engine's slots before the owned rows' (shard_state_product's x and y). */
#define SHARD_SCRATCH_SLOTS 2

bool		shard_state_open(ShardState **slot, MemoryContext keep_in, const EdgeTableSpec *spec,
							 bool out_edges);
void		shard_state_prepare(ShardState *state, const double *global_out, int k,
								unsigned needs, const uint8 *owners);
void		shard_state_product(ShardState *state, PrProduct product, const void *x,
								double *y);
void		shard_state_owned_product(ShardState *state, PrProduct product, int x_slot,
									  int y_slot, ShardGiven given, const void *x,
									  double *answer);
void		shard_state_column_sums(ShardState *state, int slot, double *sums, double *dangling);
void		shard_state_normalize(ShardState *state, int slot, int old_slot, const double *sums,
								  double *residual);
void		shard_state_push(ShardState *state, int x_slot, int y_slot, const double *x_sums,
							 bool peers, double *halo, double *sums);
void		shard_state_add_exported(ShardState *state, int y_slot, const void *values,
									 double *sums);
void		shard_state_rows(ShardState *state, int slot, ShardRows list, double *out);
void		shard_state_set_rows(ShardState *state, int slot, const void *values,
								 int columns);
void		shard_state_restart_fill(ShardState *state, int slot, const char *restart,
									 Size restart_size);
int64		shard_state_top_k(ShardState *state, int slot, int64 top_k, int32 *rows,
							  double *values);
void		shard_state_combine(ShardState *state, int out_slot, int n_terms, const int32 *slots,
								const double *coef);
void		shard_state_dots(ShardState *state, int a_slot, int n_terms, const int32 *slots,
							 double *out);
void		shard_state_update(ShardState *state, int y_slot, int x_slot, double alpha,
							   const double *dangling, const char *restart, Size restart_size,
							   double *residual, double *y_dangling, double *exported);
Size		shard_open_size(const ShardState *state, bool same);
Size		shard_open_write(const ShardState *state, bool same, char *out);
bool		shard_open_read(const char *in, Size size, int64 n, int64 *ids, uint8 *roles,
							double *strength);
Size		shard_strengths_bound(int64 n);
Size		shard_strengths_write(const double *strength, int64 n, char *out);
bool		shard_strengths_read(const char *in, Size size, int64 n, double *strength);
int64		shard_role_rows(const uint8 *roles, int64 n, uint8 role, int32 *rows);
void		shard_state_close(ShardState *state);
ShardState *shard_owning_part(void);
bool		shard_read_bytes(const char *in, Size size, Size *at, void *out, Size n);

#endif							/* SHARD_H */
