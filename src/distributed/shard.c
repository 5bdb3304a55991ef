/*
 * shard.c — one part of a distributed ranking run (shard.h): the part's graph, its products, and
 * the powerrank_shard_* SQL functions through which a coordinator drives the part a shard server
 * keeps for its session, and the shard-to-shard exchange of its vectors (at the end).
 *
 * The SQL functions take and give bytea in this machine's byte order (the coordinator refuses a
 * shard whose open does not start with SHARD_MAGIC as it wrote it); they run as the user the
 * coordinator connected as, so a shard reads only what that user may read (privileges and
 * row-level security, as every read of an edge table does: graph_scan.c).
 */
#include "powerrank.h"

#include <math.h>
#include <netdb.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "access/xlog.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "cache/graph_cache.h"
#include "distributed/peer_exchange.h"
#include "distributed/shard.h"
#include "graph/graph_scan.h"
#include "pr_topk.h"

static void shard_peers_exchange(const ShardState *state, double *values, bool partial_sums);

PG_FUNCTION_INFO_V1(powerrank_shard_open);
PG_FUNCTION_INFO_V1(powerrank_shard_prepare);
PG_FUNCTION_INFO_V1(powerrank_shard_product);
PG_FUNCTION_INFO_V1(powerrank_shard_owned_product);
PG_FUNCTION_INFO_V1(powerrank_shard_rows);
PG_FUNCTION_INFO_V1(powerrank_shard_set_rows);
PG_FUNCTION_INFO_V1(powerrank_shard_restart_fill);
PG_FUNCTION_INFO_V1(powerrank_shard_update);
PG_FUNCTION_INFO_V1(powerrank_shard_step);
PG_FUNCTION_INFO_V1(powerrank_shard_top_k);
PG_FUNCTION_INFO_V1(powerrank_shard_combine);
PG_FUNCTION_INFO_V1(powerrank_shard_dots);
PG_FUNCTION_INFO_V1(powerrank_shard_column_sums);
PG_FUNCTION_INFO_V1(powerrank_shard_normalize);
PG_FUNCTION_INFO_V1(powerrank_shard_push);
PG_FUNCTION_INFO_V1(powerrank_shard_add_exported);
PG_FUNCTION_INFO_V1(powerrank_shard_close);

/* The part this session keeps for a coordinator (NULL when none is open). */
static ShardState *session_state = NULL;

/* The last part number given in this backend. */
static uint64 last_part_id = 0;

/*
 * Releases the part's engine (and its threads) and its mapping of the graph cache when its
 * context goes, and clears its owner's pointer.
 */
static void
release_shard_part(void *arg)
{
	ShardState *state = (ShardState *) arg;

	if (state->engine != NULL)
	{
		PrEngine   *engine = state->engine;

		state->engine = NULL;
		engine->ops->release(engine);
	}
	graph_cache_release(&state->out_edges_segment);
	graph_cache_release(&state->segment);
	if (state->numbering_segment != NULL)
	{
		dsm_segment *numbering = state->numbering_segment;

		state->numbering_segment = NULL;
		dsm_detach(numbering);
	}
	if (state->layout_segment != NULL)
	{
		dsm_segment *layout = state->layout_segment;

		state->layout_segment = NULL;
		dsm_detach(layout);
	}
	if (state->owner != NULL && *state->owner == state)
		*state->owner = NULL;
}

/* What publish_part publishes. */
typedef struct PublishPart
{
	const GraphCacheKey *key;
	const PrGraph *graph;
	int64		skipped_rows;	/* rows of its table skipped for a NULL */
	const GraphCacheWriters *writers;	/* the writers its content includes */
} PublishPart;

/* try_in_subtransaction's step: offers a part's graph to the graph cache. */
static void
publish_part(void *arg)
{
	PublishPart *step = (PublishPart *) arg;

	graph_cache_publish(step->key, step->graph, step->skipped_rows, NULL, step->writers, 0);
}

/*
 * The part's graph: the cached graph, used in place, when the table is tracked and its content
 * is cached (the mapping is pinned for the session: the part outlives the statement, and it holds
 * the cache entry's reference until it goes), else read and built, and offered to the cache.
 * target is resolved; cacheable, key and writers are what the cache's probe said of it.
 */
static void
load_part_graph(ShardState *state, EdgeScanTarget *target, bool cacheable,
				const GraphCacheKey *key, GraphCacheWriters *writers)
{
	PrGraph		view;
	int64		skipped = 0;
	uint64		entry_id;

	writers->live = cacheable && writers->count >= 0 &&
		cache_capture_on(target->relid, cache_extension_schema());
	if (cacheable && graph_cache_acquire(key, &state->segment, &view, &skipped, &entry_id))
	{
		dsm_pin_mapping(state->segment);
		state->entry_id = entry_id;
		state->graph = view;
		state->summary.cache_hit = 1;
		state->skipped_rows = skipped;
		graph_scan_report_skipped(skipped, target->n_columns == 3);
	}
	else
	{
		EdgeList	edges;
		PrBuildOptions options = {0};
		PrError		err = {0};

		graph_scan_fetch(target, state->cxt, &edges);
		options.n_threads = powerrank_thread_count();
		options.should_stop = powerrank_cancel_requested;
		if (pr_graph_build(edges.src, edges.dst, edges.weighted ? edges.weight : NULL,
						   edges.count, &options, state->alloc, &state->graph, &err) != PR_OK)
			powerrank_report_core_error("graph build", &err);
		state->skipped_rows = edges.skipped;
		if (edges.src != NULL)
		{
			pfree(edges.src);
			pfree(edges.dst);
			if (edges.weight != NULL)
				pfree(edges.weight);
		}
		if (cacheable)
		{
			PublishPart step = {key, &state->graph, state->skipped_rows, writers};
			char		message[256];

			if (!powerrank_try_in_subtransaction(publish_part, &step, message, sizeof(message)))
				elog(DEBUG1, "powerrank: shard graph not cached: %s", message);
			else
				state->entry_id = graph_cache_entry_id(key);
		}
	}
	if (cacheable)
	{
		state->has_key = true;
		state->key = *key;
	}
}

/*
 * Refuses a part whose weights a build may have scaled (a part's scale would not be the other
 * parts'): every sum below 2^SHARD_WEIGHT_LIMIT_EXP and every positive weight above its inverse.
 */
static void
check_part_weights(ShardState *state, const char *relation)
{
	const PrGraph *g = &state->graph;
	double		limit = ldexp(1.0, SHARD_WEIGHT_LIMIT_EXP);
	double		total = 0.0;
	bool		tiny = false;

	for (int64 v = 0; v < g->n_nodes; v++)
		total += g->out_strength[v];
	for (int64 e = 0; g->in_weight != NULL && e < g->n_edges; e++)
		if (g->in_weight[e] > 0.0 && g->in_weight[e] < 1.0 / limit)
			tiny = true;
	if (!(total < limit) || tiny)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("the weights of \"%s\" are outside what a distributed run takes", relation),
				 errdetail("A distributed run needs every weight above 2^-%d and their sum below 2^%d.",
						   SHARD_WEIGHT_LIMIT_EXP, SHARD_WEIGHT_LIMIT_EXP),
				 errhint("Rank the table on one server: SET powerrank.distributed = off.")));
	state->summary.total_weight = total;
}

/* Marks each node of g with its roles (SHARD_ROLE_*, by g's edges) in roles (zeroed, n_nodes). */
static void
find_roles(const PrGraph *g, uint8 *roles)
{
	for (int64 v = 0; v < g->n_nodes; v++)
		if (g->in_ptr[v + 1] > g->in_ptr[v])
			roles[v] |= SHARD_ROLE_TARGET;
	for (int64 e = 0; e < g->n_edges; e++)
		roles[g->in_src[e]] |= SHARD_ROLE_SOURCE;
}

/*
 * What a part's layout segment holds (GRAPH_CACHE_LAYOUT_SHARD_PART): this header, the roles of
 * the graph's nodes (n_nodes bytes), the lists of its sources and of its targets (shard_role_rows),
 * then its length-sorted rows (pr_cpu_sorted_rows_write), each from an 8-byte boundary on
 * (layout_places).
 */
typedef struct PartLayoutHeader
{
	int64		n_nodes;
	int64		n_edges;
	bool		weighted;
	int64		row_count[3];	/* of each role */
} PartLayoutHeader;

/* Where the arrays of a part's layout start, and its size. */
typedef struct PartLayoutPlaces
{
	Size		roles;
	Size		rows[3];
	Size		sorted_rows;
	Size		total;
} PartLayoutPlaces;

/* Lays out the arrays of a part's layout of header's counts over graph g. */
static void
layout_places(const PartLayoutHeader *header, const PrGraph *g, PartLayoutPlaces *at)
{
	at->roles = MAXALIGN(sizeof(PartLayoutHeader));
	at->rows[SHARD_ROLE_SOURCE] = at->roles + TYPEALIGN(sizeof(int64), (Size) header->n_nodes);
	at->rows[SHARD_ROLE_TARGET] = at->rows[SHARD_ROLE_SOURCE] +
		TYPEALIGN(sizeof(int64), (Size) header->row_count[SHARD_ROLE_SOURCE] * sizeof(int32));
	at->sorted_rows = at->rows[SHARD_ROLE_TARGET] +
		TYPEALIGN(sizeof(int64), (Size) header->row_count[SHARD_ROLE_TARGET] * sizeof(int32));
	at->total = at->sorted_rows + pr_cpu_sorted_rows_bytes(g);
}

/* True when a mapped layout segment is of graph g (its header, its size). */
static bool
layout_fits(dsm_segment *segment, const PrGraph *g)
{
	const PartLayoutHeader *header = (const PartLayoutHeader *) dsm_segment_address(segment);
	PartLayoutPlaces at;

	if (dsm_segment_map_length(segment) < sizeof(PartLayoutHeader) ||
		header->n_nodes != g->n_nodes || header->n_edges != g->n_edges ||
		header->weighted != g->weighted)
		return false;
	for (int role = SHARD_ROLE_SOURCE; role <= SHARD_ROLE_TARGET; role++)
		if (header->row_count[role] < 0 || header->row_count[role] > g->n_nodes)
			return false;
	layout_places(header, g, &at);
	return dsm_segment_map_length(segment) >= at.total;
}

/*
 * A new layout segment of the part's graph: its roles, role lists and length-sorted rows, written
 * once and offered to the graph cache entry of the graph (kept there when it fits); NULL when no
 * segment can be had.
 */
static dsm_segment *
make_layout(ShardState *state)
{
	const PrGraph *g = &state->graph;
	int64		n = g->n_nodes;
	uint8	   *roles = MemoryContextAllocExtended(state->cxt, Max(n, 1),
												   MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	PartLayoutHeader header;
	PartLayoutPlaces at;
	dsm_segment *segment;
	char	   *base;
	PrSortedRows rows;

	find_roles(g, roles);
	memset(&header, 0, sizeof(PartLayoutHeader));
	header.n_nodes = n;
	header.n_edges = g->n_edges;
	header.weighted = g->weighted;
	for (int64 v = 0; v < n; v++)
		for (uint8 role = SHARD_ROLE_SOURCE; role <= SHARD_ROLE_TARGET; role++)
			header.row_count[role] += (roles[v] & role) != 0;
	layout_places(&header, g, &at);
	segment = dsm_create(at.total, DSM_CREATE_NULL_IF_MAXSEGMENTS);
	if (segment == NULL)
	{
		pfree(roles);
		return NULL;
	}
	graph_cache_prefault(segment);
	base = dsm_segment_address(segment);
	memset(base, 0, at.sorted_rows);
	memcpy(base, &header, sizeof(PartLayoutHeader));
	memcpy(base + at.roles, roles, n);
	pfree(roles);
	for (uint8 role = SHARD_ROLE_SOURCE; role <= SHARD_ROLE_TARGET; role++)
		(void) shard_role_rows((const uint8 *) base + at.roles, n, role,
							   (int32 *) (base + at.rows[role]));
	if (!pr_cpu_sorted_rows_write(g, base + at.sorted_rows, state->alloc, &rows))
	{
		dsm_detach(segment);
		return NULL;
	}
	if (!graph_cache_keep_layout(state->entry_id, GRAPH_CACHE_LAYOUT_SHARD_PART, segment))
		elog(DEBUG1, "powerrank: shard part layout not kept with cache entry %llu",
			 (unsigned long long) state->entry_id);
	return segment;
}

/*
 * The part's roles (which local nodes are sources and targets, by its edges) and the lists of
 * each; for a graph of the graph cache also its length-sorted rows, all kept with the cache entry
 * once made (make_layout) and taken from there by every later part of that graph, in any session.
 * Returns whether the layout came from the entry.
 */
static bool
lay_out_part(ShardState *state)
{
	const PrGraph *g = &state->graph;
	int64		n = g->n_nodes;
	dsm_segment *segment = NULL;
	bool		kept = false;

	if (state->entry_id != 0)
	{
		segment = graph_cache_map_layout(state->entry_id, GRAPH_CACHE_LAYOUT_SHARD_PART);
		if (segment != NULL && !layout_fits(segment, g))
		{
			dsm_detach(segment);
			segment = NULL;
		}
		kept = segment != NULL;
		if (segment == NULL)
			segment = make_layout(state);
	}
	if (segment != NULL)
	{
		const char *base = dsm_segment_address(segment);
		const PartLayoutHeader *header = (const PartLayoutHeader *) base;
		PartLayoutPlaces at;

		dsm_pin_mapping(segment);
		state->layout_segment = segment;
		layout_places(header, g, &at);
		state->roles = (const uint8 *) base + at.roles;
		for (uint8 role = SHARD_ROLE_SOURCE; role <= SHARD_ROLE_TARGET; role++)
		{
			state->rows[role] = (const int32 *) (base + at.rows[role]);
			state->row_count[role] = header->row_count[role];
		}
		pr_cpu_sorted_rows_view(g, base + at.sorted_rows, &state->sorted_rows);
	}
	else
	{
		uint8	   *roles = MemoryContextAllocExtended(state->cxt, Max(n, 1),
													   MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);

		find_roles(g, roles);
		state->roles = roles;
		for (uint8 role = SHARD_ROLE_SOURCE; role <= SHARD_ROLE_TARGET; role++)
		{
			int32	   *rows = MemoryContextAllocHuge(state->cxt, Max(n, 1) * sizeof(int32));

			state->row_count[role] = shard_role_rows(roles, n, role, rows);
			state->rows[role] = rows;
		}
	}
	return kept;
}

/* Writes into rows the nodes (of n, ascending) that have role; returns their count. */
int64
shard_role_rows(const uint8 *roles, int64 n, uint8 role, int32 *rows)
{
	int64		count = 0;

	for (int64 v = 0; v < n; v++)
		if (roles[v] & role)
			rows[count++] = (int32) v;
	return count;
}

/*
 * A new array in cxt of the nodes (of n, ascending) whose owner bits meet mask (shard_role_rows);
 * *count receives their count.
 */
static int32 *
rows_list(MemoryContext cxt, const uint8 *bits, int64 n, uint8 mask, int64 *count)
{
	int64		c = 0;
	int32	   *rows;

	for (int64 v = 0; v < n; v++)
		c += (bits[v] & mask) != 0;
	rows = powerrank_alloc_huge(cxt, Max(c, 1) * sizeof(int32));
	*count = shard_role_rows(bits, n, mask, rows);
	return rows;
}

/* Writes v at out, 7 bits a byte, the low ones first; returns the bytes written (1 to 10). */
static inline Size
put_varint(uint8 *out, uint64 v)
{
	Size		bytes = 0;

	while (v >= 0x80)
	{
		out[bytes++] = (uint8) (v | 0x80);
		v >>= 7;
	}
	out[bytes++] = (uint8) v;
	return bytes;
}

/* Reads a value put_varint wrote at *in, below end, into *v; false when it is cut or too long. */
static inline bool
get_varint(const uint8 **in, const uint8 *end, uint64 *v)
{
	uint64		value = 0;

	for (int shift = 0; shift < 64 && *in < end; shift += 7)
	{
		uint8		byte = *(*in)++;

		if (shift == 63 && byte > 1)
			return false;		/* more than 64 bits */
		value |= (uint64) (byte & 0x7f) << shift;
		if ((byte & 0x80) == 0)
		{
			*v = value;
			return true;
		}
	}
	return false;
}

/* Most bytes shard_strengths_write writes for n values. */
Size
shard_strengths_bound(int64 n)
{
	return 1 + (Size) n * sizeof(double);
}

/*
 * Writes n out-strengths at out and returns the bytes written: a tag byte, then — when every value
 * is a whole number from 0 to 2^53 (not -0), as the out-degrees of an unweighted graph are — each
 * as a varint of at most 8 bytes (SHARD_STRENGTHS_WHOLE), else the doubles themselves
 * (SHARD_STRENGTHS_DOUBLES).  Either reads back to the same bits (shard_strengths_read).
 */
Size
shard_strengths_write(const double *strength, int64 n, char *out)
{
	uint8	   *bytes = (uint8 *) out;
	Size		size = 1;
	bool		whole = true;

	for (int64 v = 0; v < n && whole; v++)
		whole = strength[v] >= 0.0 && !signbit(strength[v]) &&
			strength[v] <= 9007199254740992.0 && strength[v] == (double) (uint64) strength[v];
	if (!whole)
	{
		bytes[0] = SHARD_STRENGTHS_DOUBLES;
		if (n > 0)
			memcpy(bytes + 1, strength, n * sizeof(double));
		return 1 + (Size) n * sizeof(double);
	}
	bytes[0] = SHARD_STRENGTHS_WHOLE;
	for (int64 v = 0; v < n; v++)
		size += put_varint(bytes + size, (uint64) strength[v]);
	return size;
}

/*
 * Reads n out-strengths shard_strengths_write wrote (size bytes at in; in need not be aligned)
 * into strength; false when the bytes are not n of them.
 */
bool
shard_strengths_read(const char *in, Size size, int64 n, double *strength)
{
	const uint8 *bytes = (const uint8 *) in;
	const uint8 *end = bytes + size;

	if (size < 1)
		return false;
	if (bytes[0] == SHARD_STRENGTHS_DOUBLES)
	{
		if (size != 1 + (Size) n * sizeof(double))
			return false;
		if (n > 0)
			memcpy(strength, bytes + 1, n * sizeof(double));
		return true;
	}
	if (bytes[0] != SHARD_STRENGTHS_WHOLE)
		return false;
	bytes++;
	for (int64 v = 0; v < n; v++)
	{
		uint64		value;

		if (!get_varint(&bytes, end, &value))
			return false;
		strength[v] = (double) value;
	}
	return bytes == end;
}

/* Most bytes of what a part's open reports (shard_open_write). */
Size
shard_open_size(const ShardState *state, bool same)
{
	int64		n = state->graph.n_nodes;

	return sizeof(ShardSummary) +
		(same ? 0 : (Size) n * (10 + 1) + shard_strengths_bound(n));
}

/*
 * What a part's open reports, at out (shard_open_size bytes at most); returns the bytes written:
 * its summary, then — unless same: the caller holds them from an open of this part — its nodes'
 * external ids (the first as a varint of its zigzag form, then each one's distance from the one
 * before as a varint: they ascend), their roles (a byte each) and the out-strengths of its rows
 * (shard_strengths_write).  shard_open_read reads them.
 */
Size
shard_open_write(const ShardState *state, bool same, char *out)
{
	int64		n = state->graph.n_nodes;
	const int64 *ids = state->graph.node_ids;
	ShardSummary summary = state->summary;
	uint8	   *bytes = (uint8 *) out + sizeof(ShardSummary);
	Size		size = 0;

	summary.same = same ? 1 : 0;
	memcpy(out, &summary, sizeof(ShardSummary));
	if (n == 0 || same)
		return sizeof(ShardSummary);
	size += put_varint(bytes, ((uint64) ids[0] << 1) ^ (uint64) (ids[0] >> 63));
	for (int64 v = 1; v < n; v++)
		size += put_varint(bytes + size, (uint64) ids[v] - (uint64) ids[v - 1]);
	memcpy(bytes + size, state->roles, n);
	size += n;
	size += shard_strengths_write(state->graph.out_strength, n, (char *) bytes + size);
	return sizeof(ShardSummary) + size;
}

/*
 * Reads the nodes of an open's answer (shard_open_write; size bytes after the summary at in) into
 * ids, roles and strength, n of each; false when the bytes are not n nodes in ascending order.
 */
bool
shard_open_read(const char *in, Size size, int64 n, int64 *ids, uint8 *roles, double *strength)
{
	const uint8 *bytes = (const uint8 *) in;
	const uint8 *end = bytes + size;
	uint64		value;

	if (n == 0)
		return size == 0;
	if (!get_varint(&bytes, end, &value))
		return false;
	ids[0] = (int64) (value >> 1) ^ -(int64) (value & 1);
	for (int64 v = 1; v < n; v++)
	{
		/* a step of at least 1 that stays within int64 (the difference is taken modulo 2^64) */
		if (!get_varint(&bytes, end, &value) || value == 0 ||
			value > (uint64) PG_INT64_MAX - (uint64) ids[v - 1])
			return false;
		ids[v] = (int64) ((uint64) ids[v - 1] + value);
	}
	if (end - bytes < n)
		return false;
	memcpy(roles, bytes, n);
	bytes += n;
	return shard_strengths_read((const char *) bytes, end - bytes, n, strength);
}

/*
 * Gives the part's graph its out-edges (for HITS' push product): a graph mapped from the graph
 * cache takes those its entry keeps, mapped read-only, or makes them and offers them to the entry
 * (graph_cache_out_edges), their mapping pinned for the session like the graph's; a graph of its
 * own, or one whose out-edges no segment could hold, builds them in the part's memory.
 */
static PrStatus
add_part_out_edges(ShardState *state, PrError *err)
{
	if (state->segment != NULL &&
		graph_cache_out_edges(state->entry_id, &state->graph, state->alloc,
							  &state->out_edges_segment))
	{
		dsm_pin_mapping(state->out_edges_segment);
		return PR_OK;
	}
	return pr_graph_add_out_edges(&state->graph, powerrank_thread_count(), state->alloc, err);
}

/*
 * A new part on the resolved target (the cache's probe said cacheable, key, writers): its graph
 * loaded (load_part_graph), with out-edges when wanted, its weights checked, in a new context under
 * the current one.  An ERROR leaves nothing behind.
 */
static ShardState *
new_part(EdgeScanTarget *target, bool cacheable, const GraphCacheKey *key,
		 GraphCacheWriters *writers, const EdgeTableSpec *spec, bool out_edges)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "powerrank shard",
											  ALLOCSET_DEFAULT_SIZES);
	ShardState *state = MemoryContextAllocZero(cxt, sizeof(ShardState));
	PrError		err = {0};

	state->cxt = cxt;
	state->alloc = powerrank_context_allocator(cxt);
	state->cleanup.func = release_shard_part;
	state->cleanup.arg = state;
	MemoryContextRegisterResetCallback(cxt, &state->cleanup);
	PG_TRY();
	{
		load_part_graph(state, target, cacheable, key, writers);
		if (out_edges && !state->graph.has_out_edges && add_part_out_edges(state, &err) != PR_OK)
			powerrank_report_core_error("graph build", &err);
		check_part_weights(state, text_to_cstring(spec->relation));
	}
	PG_CATCH();
	{
		MemoryContextDelete(cxt);
		PG_RE_THROW();
	}
	PG_END_TRY();
	return state;
}

/*
 * Opens a part on spec's table, with out-edges when the push product is wanted, into *slot: the
 * part *slot holds when the table's content is the one it was read as (the graph cache's key of
 * the snapshot's content is the part's; returns true), else a new part (the one before freed
 * first; returns false), read or mapped in a context that goes to keep_in once it is complete.  The
 * privileges are checked either way.  An ERROR leaves *slot NULL and nothing behind.
 */
bool
shard_state_open(ShardState **slot, MemoryContext keep_in, const EdgeTableSpec *spec,
				 bool out_edges)
{
	EdgeScanTarget target;
	GraphCacheKey key;
	GraphCacheWriters writers = {-1, NULL, false};
	ShardState *state = *slot;
	bool		cacheable;
	double		started = pr_clock_seconds(),
				loaded;
	bool		layout_kept;
	PrError		err = {0};

	graph_scan_resolve(spec, &target);
	cacheable = graph_cache_probe_writers(&target, true, &key, &writers);
	if (state != NULL && cacheable && state->has_key &&
		memcmp(&state->key, &key, sizeof(GraphCacheKey)) == 0)
	{
		graph_scan_report_skipped(state->skipped_rows, target.n_columns == 3);
		graph_scan_end(&target);
		if (out_edges && !state->graph.has_out_edges)
		{
			if (state->engine != NULL)
			{
				/* the engine holds the graph it was prepared on: it goes first */
				state->engine->ops->release(state->engine);
				state->engine = NULL;
			}
			if (add_part_out_edges(state, &err) != PR_OK)
			{
				shard_state_close(state);
				powerrank_report_core_error("graph build", &err);
			}
			state->product_graph = state->graph;
			state->product_graph.out_strength = state->global_out;
			/* a graph with more arrays and no engine: a new number, so the caller prepares it */
			state->part_id = ++last_part_id;
			state->summary.part_id = state->part_id;
			if (!shard_content_lasts(&state->summary.content))
				state->summary.content.number = SHARD_SESSION_CONTENT | state->part_id;
		}
		state->summary.cache_hit = 1;
		state->summary.load_seconds = pr_clock_seconds() - started;
		elog(DEBUG1, "powerrank: shard part of %lld nodes, %lld edges: kept from the last open (same content) %.1f ms",
			 (long long) state->graph.n_nodes, (long long) state->graph.n_edges,
			 state->summary.load_seconds * 1000.0);
		return true;
	}
	shard_state_close(state);
	state = new_part(&target, cacheable, &key, &writers, spec, out_edges);
	graph_scan_end(&target);
	loaded = pr_clock_seconds();
	layout_kept = lay_out_part(state);
	state->part_id = ++last_part_id;
	state->summary.content.system_identifier = GetSystemIdentifier();
	state->summary.content.started = (int64) PgStartTime;
	state->summary.content.number = state->entry_id != 0 ? state->entry_id :
		SHARD_SESSION_CONTENT | state->part_id;
	state->summary.magic = SHARD_MAGIC;
	state->summary.protocol = SHARD_PROTOCOL;
	state->summary.part_id = state->part_id;
	state->summary.n_nodes = state->graph.n_nodes;
	state->summary.n_edges = state->graph.n_edges;
	state->summary.weighted = state->graph.weighted ? 1 : 0;
	state->summary.reusable = state->has_key ? 1 : 0;
	state->summary.load_seconds = pr_clock_seconds() - started;
	elog(DEBUG1, "powerrank: shard part of %lld nodes, %lld edges: %s %.1f ms, layout %s %.1f ms",
		 (long long) state->graph.n_nodes, (long long) state->graph.n_edges,
		 state->summary.cache_hit ? "mapped from the graph cache" : "read and built",
		 (loaded - started) * 1000.0,
		 layout_kept ? "kept with the cache entry" :
		 state->layout_segment != NULL ? "made" : "roles of its own",
		 (pr_clock_seconds() - loaded) * 1000.0);
	MemoryContextSetParent(state->cxt, keep_in);
	state->owner = slot;
	*slot = state;
	return false;
}

/*
 * Forgets the rows the part owned: their lists, its renumbered graph and sorted rows, and every
 * slot (the engine, laid out on that graph, goes too).
 */
static void
forget_owners(ShardState *state)
{
	for (int s = 0; s < SHARD_MAX_SLOTS; s++)
		state->slot_held[s] = false;
	if (state->owners == NULL)
		return;
	if (state->engine != NULL)
	{
		state->engine->ops->release(state->engine);
		state->engine = NULL;
	}
	if (!state->owners_kept)
	{
		pfree((void *) state->owners);
		for (int list = 0; list < SHARD_ROWS_LISTS; list++)
			pfree((void *) state->owned_rows[list]);
	}
	if (state->numbering_segment != NULL)
	{
		dsm_segment *numbering = state->numbering_segment;

		/* the numbering, the row pointers and the sorted rows are the segment's */
		state->owned_graph.in_ptr = NULL;
		pr_graph_free(&state->owned_graph, state->alloc);
		state->numbering_segment = NULL;
		dsm_detach(numbering);
	}
	else
	{
		pfree((void *) state->engine_row);
		pfree((void *) state->local_row);
		pr_graph_free(&state->owned_graph, state->alloc);
		if (state->has_owned_sorted)
		{
			pr_free(state->alloc, (void *) state->owned_sorted.row_order);
			pr_free(state->alloc, (void *) state->owned_sorted.src);
		}
	}
	state->has_owned_sorted = false;
	state->owners_kept = false;
	state->owners = NULL;
	state->engine_row = state->local_row = NULL;
}

/*
 * Refuses owner bits (of the part's local nodes) that do not agree with its roles: every target
 * owned, every source owned or a halo row, a halo row not owned, an exported row owned.
 */
static void
check_owners(const ShardState *state, const uint8 *owners)
{
	for (int64 v = 0; v < state->graph.n_nodes; v++)
	{
		uint8		bits = owners[v];
		bool		owned = (bits & SHARD_OWNS) != 0;

		if ((bits & ~(SHARD_OWNS | SHARD_EXPORTS | SHARD_HALO)) != 0 ||
			(owned && (bits & SHARD_HALO) != 0) || (!owned && (bits & SHARD_EXPORTS) != 0) ||
			(!owned && (bits & SHARD_HALO) == 0) ||
			((state->roles[v] & SHARD_ROLE_TARGET) != 0 && !owned) ||
			((bits & SHARD_HALO) != 0 && (state->roles[v] & SHARD_ROLE_SOURCE) == 0))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("the owners of the part's node %lld do not fit its roles",
							(long long) v),
					 errhint("The shard functions are called by a coordinator of the same powerrank version.")));
	}
}

/*
 * Writes the engine's numbering of the part's local rows by its lists of owned and halo rows: the
 * owned rows first, then the halo rows, each ascending (engine_row: each local row's engine row;
 * local_row: its inverse).
 */
static void
number_rows(const ShardState *state, int32 *engine_row, int32 *local_row)
{
	int64		at = 0;

	for (int list = SHARD_ROWS_OWNED; list <= SHARD_ROWS_HALO; list += SHARD_ROWS_HALO)
		for (int64 i = 0; i < state->owned_count[list]; i++, at++)
		{
			local_row[at] = state->owned_rows[list][i];
			engine_row[state->owned_rows[list][i]] = (int32) at;
		}
}

/*
 * What a part's numbering segment holds (GRAPH_CACHE_LAYOUT_SHARD_NUMBERING, kept with its graph's
 * cache entry beside the layout): this header, the owner bits it was made for (n_nodes bytes,
 * checked against the part's roles when it was made) and their lists of rows (ShardRows), the
 * engine's row of each local node and its inverse (number_rows), the renumbered graph's in-edge
 * row pointers and the layout's sorted rows renumbered (their nodes, then their sources), each
 * from an 8-byte boundary on (numbering_places).  The numbering follows from the graph and the
 * SHARD_OWNS and SHARD_HALO bits alone.
 */
typedef struct PartNumberingHeader
{
	int64		n_nodes;
	int64		n_edges;
	int64		owned_count[SHARD_ROWS_LISTS];
} PartNumberingHeader;

/* Where the arrays of a part's numbering start, and its size. */
typedef struct PartNumberingPlaces
{
	Size		owners;
	Size		lists[SHARD_ROWS_LISTS];
	Size		engine_row;
	Size		local_row;
	Size		in_ptr;
	Size		row_order;
	Size		src;
	Size		total;
} PartNumberingPlaces;

/* Lays out the arrays of a part's numbering of header's counts. */
static void
numbering_places(const PartNumberingHeader *header, PartNumberingPlaces *at)
{
	Size		n = (Size) header->n_nodes;

	at->owners = MAXALIGN(sizeof(PartNumberingHeader));
	at->lists[0] = at->owners + TYPEALIGN(sizeof(int64), n);
	for (int list = 1; list < SHARD_ROWS_LISTS; list++)
		at->lists[list] = at->lists[list - 1] +
			TYPEALIGN(sizeof(int64), (Size) header->owned_count[list - 1] * sizeof(int32));
	at->engine_row = at->lists[SHARD_ROWS_LISTS - 1] +
		TYPEALIGN(sizeof(int64), (Size) header->owned_count[SHARD_ROWS_LISTS - 1] * sizeof(int32));
	at->local_row = at->engine_row + TYPEALIGN(sizeof(int64), n * sizeof(int32));
	at->in_ptr = at->local_row + TYPEALIGN(sizeof(int64), n * sizeof(int32));
	at->row_order = at->in_ptr + (n + 1) * sizeof(int64);
	at->src = at->row_order + TYPEALIGN(sizeof(int64), n * sizeof(int32));
	at->total = at->src + (Size) header->n_edges * sizeof(int32);
}

/*
 * The numbering the graph cache keeps with the entry of the part's graph (mapped) when it is of
 * that graph (its header, its size) and was made for the same owned and halo rows as owners (the
 * bits that decide the numbering; every node's compared), else NULL.
 */
static dsm_segment *
map_kept_numbering(const ShardState *state, const uint8 *owners)
{
	const PrGraph *g = &state->graph;
	dsm_segment *segment = graph_cache_map_layout(state->entry_id,
												  GRAPH_CACHE_LAYOUT_SHARD_NUMBERING);
	const char *base;
	const PartNumberingHeader *header;
	const uint8 *kept;
	PartNumberingPlaces at;
	bool		fits;

	if (segment == NULL)
		return NULL;
	base = dsm_segment_address(segment);
	header = (const PartNumberingHeader *) base;
	fits = dsm_segment_map_length(segment) >= sizeof(PartNumberingHeader) &&
		header->n_nodes == g->n_nodes && header->n_edges == g->n_edges;
	for (int list = 0; fits && list < SHARD_ROWS_LISTS; list++)
		fits = header->owned_count[list] >= 0 && header->owned_count[list] <= g->n_nodes;
	if (fits)
	{
		numbering_places(header, &at);
		fits = dsm_segment_map_length(segment) >= at.total;
		kept = (const uint8 *) base + at.owners;
		for (int64 v = 0; fits && v < g->n_nodes; v++)
			fits = ((kept[v] ^ owners[v]) & (SHARD_OWNS | SHARD_HALO)) == 0;
	}
	if (!fits)
	{
		dsm_detach(segment);
		return NULL;
	}
	return segment;
}

/*
 * A new numbering segment of the part's owner bits (taken: state->owners, its lists), written and
 * offered to the graph cache's entry of its graph in place of the one it keeps; NULL when no
 * segment can be had.  The part's graph has a layout (its sorted rows, which the numbering
 * renumbers).
 */
static dsm_segment *
make_numbering(const ShardState *state)
{
	const PrGraph *g = &state->product_graph;
	PartNumberingHeader header;
	PartNumberingPlaces at;
	dsm_segment *segment;
	char	   *base;
	PrSortedRows rows;

	memset(&header, 0, sizeof(PartNumberingHeader));
	header.n_nodes = g->n_nodes;
	header.n_edges = g->n_edges;
	memcpy(header.owned_count, state->owned_count, sizeof(header.owned_count));
	numbering_places(&header, &at);
	segment = dsm_create(at.total, DSM_CREATE_NULL_IF_MAXSEGMENTS);
	if (segment == NULL)
		return NULL;
	graph_cache_prefault(segment);
	base = dsm_segment_address(segment);
	memcpy(base, &header, sizeof(PartNumberingHeader));
	memcpy(base + at.owners, state->owners, g->n_nodes);
	for (int list = 0; list < SHARD_ROWS_LISTS; list++)
		memcpy(base + at.lists[list], state->owned_rows[list],
			   state->owned_count[list] * sizeof(int32));
	number_rows(state, (int32 *) (base + at.engine_row), (int32 *) (base + at.local_row));
	pr_graph_renumber_row_pointers(g, (const int32 *) (base + at.local_row),
								   (int64 *) (base + at.in_ptr));
	pr_cpu_sorted_rows_renumber_at(&state->sorted_rows, (const int32 *) (base + at.engine_row),
								   (int32 *) (base + at.row_order), (int32 *) (base + at.src),
								   &rows);
	if (!graph_cache_replace_layout(state->entry_id, GRAPH_CACHE_LAYOUT_SHARD_NUMBERING, segment))
		elog(DEBUG1, "powerrank: shard part numbering not kept with cache entry %llu",
			 (unsigned long long) state->entry_id);
	return segment;
}

/*
 * Takes the numbering in segment (kept or made: its owned and halo rows are the part's) for the
 * session: the engine's rows, the renumbered graph over its row pointers and the renumbered
 * sorted rows read there.
 */
static void
use_numbering(ShardState *state, dsm_segment *segment)
{
	const char *base = dsm_segment_address(segment);
	PartNumberingPlaces at;
	PrError		err = {0};

	numbering_places((const PartNumberingHeader *) base, &at);
	dsm_pin_mapping(segment);
	state->numbering_segment = segment;
	state->engine_row = (const int32 *) (base + at.engine_row);
	state->local_row = (const int32 *) (base + at.local_row);
	pr_cpu_sorted_rows_renumbered(&state->sorted_rows, (const int32 *) (base + at.row_order),
								  (const int32 *) (base + at.src), &state->owned_sorted);
	state->has_owned_sorted = true;
	if (pr_graph_renumber_over(&state->product_graph, state->local_row,
							   (const int64 *) (base + at.in_ptr), state->alloc,
							   &state->owned_graph, &err) != PR_OK)
		powerrank_report_core_error("shard part renumbering", &err);
}

/*
 * Takes the owner bits of the part's local nodes (check_owners) and derives its lists of rows and
 * the engine's numbering of them: the owned rows first, then the halo rows, each in ascending
 * order (so the owned rows are one range, [0, owned), and a list's rows ascend in either
 * numbering), the graph and the layout's sorted rows renumbered so.  Without sources the
 * renumbered graph has no in-edge sources (its engine reads the sorted rows only:
 * pr_cpu_reads_in_edges); then a graph of the graph cache takes the numbering kept with its entry
 * for the same owned and halo rows (and the bits and their lists too when every bit is the same:
 * checked when they were kept), else makes it there for the sessions to come.
 */
static void
take_owners(ShardState *state, const uint8 *owners, bool sources)
{
	int64		n = state->graph.n_nodes;
	bool		keeps = !sources && !state->product_graph.has_out_edges &&
		state->entry_id != 0 && state->layout_segment != NULL;
	dsm_segment *numbering = keeps ? map_kept_numbering(state, owners) : NULL;
	const char *base = numbering != NULL ? dsm_segment_address(numbering) : NULL;
	PartNumberingPlaces at;
	int32	   *engine_row;
	int32	   *local_row;
	PrError		err = {0};

	if (numbering != NULL)
		numbering_places((const PartNumberingHeader *) base, &at);
	if (numbering != NULL && memcmp(base + at.owners, owners, n) == 0)
	{
		/* the same bits: their lists too */
		state->owners = (const uint8 *) base + at.owners;
		for (int list = 0; list < SHARD_ROWS_LISTS; list++)
		{
			state->owned_rows[list] = (const int32 *) (base + at.lists[list]);
			state->owned_count[list] = ((const PartNumberingHeader *) base)->owned_count[list];
		}
		state->owners_kept = true;
	}
	else
	{
		uint8	   *copy = powerrank_alloc_huge(state->cxt, Max(n, 1));

		check_owners(state, owners);
		memcpy(copy, owners, n);
		state->owners = copy;
		for (int list = 0; list < SHARD_ROWS_LISTS; list++)
			state->owned_rows[list] = rows_list(state->cxt, state->owners, n,
												shard_rows_mask((ShardRows) list),
												&state->owned_count[list]);
	}
	if (numbering == NULL && keeps)
		numbering = make_numbering(state);
	elog(DEBUG1, "powerrank: shard part numbering %s",
		 numbering == NULL ? "of its own" : base == NULL ? "made" :
		 state->owners_kept ? "kept with the cache entry" :
		 "kept with the cache entry (other exported rows)");
	if (numbering != NULL)
	{
		use_numbering(state, numbering);
		return;
	}
	engine_row = powerrank_alloc_huge(state->cxt, Max(n, 1) * sizeof(int32));
	local_row = powerrank_alloc_huge(state->cxt, Max(n, 1) * sizeof(int32));
	number_rows(state, engine_row, local_row);
	state->engine_row = engine_row;
	state->local_row = local_row;
	if (pr_graph_renumber(&state->product_graph, local_row, engine_row, sources,
						  state->alloc, &state->owned_graph, &err) != PR_OK)
		powerrank_report_core_error("shard part renumbering", &err);
	if (state->layout_segment != NULL)
	{
		if (!pr_cpu_sorted_rows_renumber(&state->sorted_rows, engine_row, state->alloc,
										 &state->owned_sorted))
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of memory renumbering the part's rows")));
		state->has_owned_sorted = true;
	}
}

/*
 * Prepares the part's engine with n_slots slots on its graph (renumbered when it owns rows: then
 * it owns rows [0, owned) of a larger graph, pr_cpu_engine_own_part).
 */
static void
prepare_engine(ShardState *state, int n_slots)
{
	PrError		err = {0};
	bool		owning = state->owners != NULL;

	if (state->engine == NULL)
	{
		state->engine = pr_cpu_engine_create(powerrank_cpu_threads, state->alloc, &err);
		if (state->engine == NULL)
			powerrank_report_core_error("shard engine start", &err);
		/* the layout's sorted rows (renumbered), read in place: no copy of its own to make */
		if (owning && state->has_owned_sorted)
			pr_cpu_engine_use_sorted_rows(state->engine, &state->owned_sorted);
		else if (!owning && state->layout_segment != NULL)
			pr_cpu_engine_use_sorted_rows(state->engine, &state->sorted_rows);
	}
	if (state->engine->ops->prepare(state->engine,
									owning ? &state->owned_graph : &state->product_graph,
									state->k, n_slots, state->needs, &err) != PR_OK ||
		(owning && pr_cpu_engine_own_part(state->engine,
										  state->owned_count[SHARD_ROWS_OWNED], &err) != PR_OK))
		powerrank_report_core_error("shard engine prepare", &err);
	state->engine_slots = n_slots;
}

/*
 * Prepares the part's engine for k columns and the products in needs, its rows normalised by the
 * whole graph's out-strengths global_out (one per local node), and the rows it owns (owners: a
 * byte of SHARD_OWNS / SHARD_EXPORTS / SHARD_HALO bits per local node; NULL: none).  Every slot
 * of the owned rows is forgotten.
 */
void
shard_state_prepare(ShardState *state, const double *global_out, int k, unsigned needs,
					const uint8 *owners)
{
	int64		n = state->graph.n_nodes;
	double		started = pr_clock_seconds();
	double		renumbering = 0.0;
	/* the engine reads the renumbered layout's rows only, or the graph's in-edges too */
	bool		sources = state->layout_segment == NULL || pr_cpu_reads_in_edges(n, k, needs);
	bool		same_out = state->global_out != NULL &&
		(n == 0 || memcmp(state->global_out, global_out, n * sizeof(double)) == 0);

	if (state->global_out == NULL)
	{
		state->global_out = powerrank_alloc_huge(state->cxt, Max(n, 1) * sizeof(double));
		state->product_graph = state->graph;
		state->product_graph.out_strength = state->global_out;
	}
	/* the engine and the renumbered graph keep what they took of the out-strengths */
	if (!same_out || owners == NULL || state->owners == NULL ||
		memcmp(state->owners, owners, Max(n, 1)) != 0 ||
		state->owned_graph.has_out_edges != state->product_graph.has_out_edges ||
		(sources && state->owned_graph.in_src == NULL && n > 0))
		forget_owners(state);
	if (!same_out && state->engine != NULL)
	{
		state->engine->ops->release(state->engine);
		state->engine = NULL;
	}
	if (n > 0)
		memcpy(state->global_out, global_out, n * sizeof(double));
	if (owners != NULL && state->owners == NULL)
	{
		/* a new numbering: the engine goes (it holds the graph and rows it was prepared on) */
		if (state->engine != NULL)
		{
			state->engine->ops->release(state->engine);
			state->engine = NULL;
		}
		renumbering = pr_clock_seconds();
		take_owners(state, owners, sources);
		renumbering = pr_clock_seconds() - renumbering;
	}
	for (int s = 0; s < SHARD_MAX_SLOTS; s++)
		state->slot_held[s] = false;
	state->k = k;
	state->needs = needs;
	prepare_engine(state, SHARD_SCRATCH_SLOTS + (owners != NULL ? 2 : 0));
	if (state->x == NULL || k != state->k_vectors)
	{
		if (state->x != NULL)
		{
			pfree(state->x);
			pfree(state->y);
		}
		state->x = powerrank_alloc_huge(state->cxt, Max(n * k, 1) * sizeof(double));
		state->y = powerrank_alloc_huge(state->cxt, Max(n * k, 1) * sizeof(double));
		state->k_vectors = k;
	}
	elog(DEBUG1, "powerrank: shard part prepared for %d columns in %.1f ms (its rows numbered in %.1f ms)",
		 k, (pr_clock_seconds() - started) * 1000.0, renumbering * 1000.0);
}

/* The engine's row of the part's local node v. */
static inline int64
engine_row(const ShardState *state, int64 v)
{
	return state->engine_row != NULL ? state->engine_row[v] : v;
}

/*
 * y = product(x) over the part's edges: x holds k values for each row the product reads
 * (shard_product_role(product, true), ascending; x need not be aligned: it may be a bytea's data),
 * y receives k values for each row it gives.  The engine's first two slots serve.
 */
void
shard_state_product(ShardState *state, PrProduct product, const void *x, double *y)
{
	PrEngine   *engine = state->engine;
	PrError		err = {0};
	int			k = state->k;
	uint8		in_role = shard_product_role(product, true);
	uint8		out_role = shard_product_role(product, false);

	if (engine == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the shard part is not prepared"),
				 errhint("powerrank_shard_prepare() comes before powerrank_shard_product().")));
	if (state->graph.n_nodes == 0)
		return;
	memset(state->x, 0, state->graph.n_nodes * k * sizeof(double));
	for (int64 i = 0; i < state->row_count[in_role]; i++)
		memcpy(state->x + engine_row(state, state->rows[in_role][i]) * k,
			   (const char *) x + i * k * sizeof(double), k * sizeof(double));
	if (engine->ops->upload(engine, 0, state->x, &err) != PR_OK ||
		engine->ops->product(engine, product, 0, 1, &err) != PR_OK ||
		engine->ops->download(engine, 1, state->y, &err) != PR_OK)
		powerrank_report_core_error("shard product", &err);
	for (int64 i = 0; i < state->row_count[out_role]; i++)
		memcpy(y + i * k, state->y + engine_row(state, state->rows[out_role][i]) * k,
			   k * sizeof(double));
}

/*
 * The engine's slot of the part's owned-rows slot (SHARD_SCRATCH_SLOTS after it; the engine takes
 * more slots when it has too few), or an ERROR: the part owns no rows, or the slot holds no
 * values and is not to be written.
 */
static int
owned_slot(ShardState *state, int slot, bool written)
{
	int			engine_slot = slot + SHARD_SCRATCH_SLOTS;

	if (state->engine == NULL || state->owners == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the shard part owns no rows"),
				 errhint("powerrank_shard_prepare() with owners comes first.")));
	if (slot < 0 || slot >= SHARD_MAX_SLOTS || (!written && !state->slot_held[slot]))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("slot %d of the shard part holds no values", slot)));
	if (engine_slot >= state->engine_slots)
		prepare_engine(state, engine_slot + 1);
	if (written)
		state->slot_held[slot] = true;
	return engine_slot;
}

/* The values of the engine's slot (n x k, the engine's rows), to write or read in place. */
static double *
slot_values(ShardState *state, int engine_slot)
{
	double	   *values = pr_cpu_engine_slot(state->engine, engine_slot);

	if (values == NULL)
		elog(ERROR, "the shard engine has no slot %d", engine_slot);
	return values;
}

/*
 * The sums of values (a slot's, the engine's rows) over the part's owned rows whose whole graph's
 * out-strength is 0, in ascending row order, into sums[k]: every dangling row is owned (a target
 * here, being a source nowhere).
 */
static void
owned_dangling_sums(const ShardState *state, const double *values, double *sums)
{
	const PrGraph *g = &state->owned_graph;
	int			k = state->k;

	for (int j = 0; j < k; j++)
		sums[j] = 0.0;
	for (int64 i = 0; i < g->n_dangling; i++)
		for (int j = 0; j < k; j++)
			sums[j] += values[(int64) g->dangling[i] * k + j];
}

/*
 * A pull product over the part's edges on its owned rows: x holds what given says (k values for
 * each halo row, the owned rows' being the slot's already; for every local row; or k values for
 * all rows; or nothing: the halo rows come from the other shards), which go into x_slot; y_slot
 * receives the product on the owned rows (the targets: a row of the part that is no target gets
 * 0).  answer[k] receives, for the normalised pull product, x's sums over the owned rows whose
 * whole graph's out-strength is 0, in ascending row order (the PageRank update's dangling mass,
 * added up by the coordinator); for the plain one (HITS), y's sums over the owned rows (its
 * normalisation's, added up by the coordinator).
 */
void
shard_state_owned_product(ShardState *state, PrProduct product, int x_slot, int y_slot,
						  ShardGiven given, const void *x, double *answer)
{
	PrEngine   *engine = state->engine;
	PrError		err = {0};
	int			k = state->k;
	int64		n = state->graph.n_nodes;
	int			xe = owned_slot(state, x_slot,
								given == SHARD_GIVEN_ALL || given == SHARD_GIVEN_FILL);
	int			ye;
	double	   *xs;

	if (product == PR_PRODUCT_PUSH || x_slot == y_slot)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a product on owned rows is a pull product between two slots")));
	ye = owned_slot(state, y_slot, true);
	engine = state->engine;
	xs = slot_values(state, xe);
	if (given == SHARD_GIVEN_ALL)
		for (int64 v = 0; v < n; v++)
			memcpy(xs + engine_row(state, v) * k, (const char *) x + v * k * sizeof(double),
				   k * sizeof(double));
	else if (given == SHARD_GIVEN_FILL)
		for (int64 v = 0; v < n; v++)
			memcpy(xs + v * k, x, k * sizeof(double));
	else if (given == SHARD_GIVEN_PEERS)
		shard_peers_exchange(state, xs, false);
	else if (n > 0)
		/* the halo rows are the engine's last ones, in their order */
		memcpy(xs + state->owned_count[SHARD_ROWS_OWNED] * k, x,
			   state->owned_count[SHARD_ROWS_HALO] * k * sizeof(double));
	if (product == PR_PRODUCT_PULL_NORMALIZED)
		owned_dangling_sums(state, xs, answer);
	if (n > 0 && engine->ops->product(engine, product, xe, ye, &err) != PR_OK)
		powerrank_report_core_error("shard product", &err);
	if (product == PR_PRODUCT_PULL)
		shard_state_column_sums(state, y_slot, answer, NULL);
}

/*
 * The sums of each column of a slot over the part's owned rows into sums[k] and, unless NULL,
 * over its owned dangling rows into dangling[k] (the engine's own, on its owned rows).
 */
void
shard_state_column_sums(ShardState *state, int slot, double *sums, double *dangling)
{
	int			engine_slot = owned_slot(state, slot, false);
	double	   *none = dangling != NULL ? dangling : palloc(state->k * sizeof(double));
	PrError		err = {0};

	if (state->engine->ops->column_sums(state->engine, engine_slot, sums, none, &err) != PR_OK)
		powerrank_report_core_error("shard column sums", &err);
	if (dangling == NULL)
		pfree(none);
}

/*
 * HITS's normalisation of a slot's owned rows: each column divided by the whole graph's sum
 * (sums[k], the parts' added by the coordinator; a column summing to 0 is left alone); when
 * old_slot >= 0, residual[2k] receives the sums of |slot - old_slot| over the owned rows per
 * column, then their maxima.
 */
void
shard_state_normalize(ShardState *state, int slot, int old_slot, const double *sums,
					  double *residual)
{
	int			engine_slot = owned_slot(state, slot, false);
	int			old_engine_slot = old_slot >= 0 ? owned_slot(state, old_slot, false) : -1;
	PrResidual *res = palloc(state->k * sizeof(PrResidual));
	PrEngine   *engine = state->engine;
	PrError		err = {0};

	pr_cpu_engine_give_sums(engine, sums);
	if (engine->ops->normalize(engine, engine_slot, old_engine_slot, &err) != PR_OK ||
		(old_slot >= 0 && engine->ops->residual(engine, res, &err) != PR_OK))
		powerrank_report_core_error("shard normalisation", &err);
	for (int j = 0; old_slot >= 0 && j < state->k; j++)
	{
		residual[j] = res[j].l1;
		residual[state->k + j] = res[j].linf;
	}
	pfree(res);
}

/*
 * HITS's push product of x_slot (its owned rows: every target of the part is owned), first
 * normalised by the whole graph's column sums x_sums[k] unless NULL, into y_slot: every source of
 * the part gets its sum over the part's edges.  The halo rows' sums belong to their owners: with
 * peers they go to them shard to shard, the exported rows' sums come back from the parts that
 * read them and are added into y_slot, and sums[k] receives y's column sums over the owned rows;
 * else halo[halo rows × k] receives them for the coordinator to route
 * (shard_state_add_exported).
 */
void
shard_state_push(ShardState *state, int x_slot, int y_slot, const double *x_sums, bool peers,
				 double *halo, double *sums)
{
	int			xe,
				ye;
	int			k = state->k;
	PrError		err = {0};
	double	   *ys;

	if (x_slot == y_slot)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a push product on owned rows takes two slots")));
	if (x_sums != NULL)
		shard_state_normalize(state, x_slot, -1, x_sums, NULL);
	xe = owned_slot(state, x_slot, false);
	ye = owned_slot(state, y_slot, true);
	ys = slot_values(state, ye);
	if (state->graph.n_nodes > 0 &&
		state->engine->ops->product(state->engine, PR_PRODUCT_PUSH, xe, ye, &err) != PR_OK)
		powerrank_report_core_error("shard product", &err);
	if (!peers)
	{
		/* the halo rows are the engine's last ones, in their order */
		memcpy(halo, ys + state->owned_count[SHARD_ROWS_OWNED] * k,
			   state->owned_count[SHARD_ROWS_HALO] * k * sizeof(double));
		return;
	}
	shard_peers_exchange(state, ys, true);
	shard_state_column_sums(state, y_slot, sums, NULL);
}

/*
 * Adds to y_slot's exported rows the other parts' sums of them (values: k for each exported row,
 * in their order: each the parts' push sums added in the parts' order) and writes y's column sums
 * over the owned rows into sums[k].
 */
void
shard_state_add_exported(ShardState *state, int y_slot, const void *values, double *sums)
{
	double	   *ys = slot_values(state, owned_slot(state, y_slot, false));
	const int32 *rows = state->owned_rows[SHARD_ROWS_EXPORTED];
	int			k = state->k;

	for (int64 i = 0; i < state->owned_count[SHARD_ROWS_EXPORTED]; i++)
	{
		double	   *row = ys + engine_row(state, rows[i]) * k;

		for (int j = 0; j < k; j++)
		{
			double		add;

			/* values need not be aligned: it may be a bytea's data */
			memcpy(&add, (const char *) values + (i * k + j) * sizeof(double), sizeof(double));
			row[j] += add;
		}
	}
	shard_state_column_sums(state, y_slot, sums, NULL);
}

/* The values of a slot's rows of a list (owned or exported), k each, into out. */
void
shard_state_rows(ShardState *state, int slot, ShardRows list, double *out)
{
	const double *values = slot_values(state, owned_slot(state, slot, false));
	const int32 *rows = state->owned_rows[list];
	int			k = state->k;

	if (list == SHARD_ROWS_OWNED)
		/* the owned rows are the engine's first ones, in their order */
		memcpy(out, values, state->owned_count[list] * k * sizeof(double));
	else if (list == SHARD_ROWS_EXPORTED)
		for (int64 i = 0; i < state->owned_count[list]; i++)
			memcpy(out + i * k, values + engine_row(state, rows[i]) * k, k * sizeof(double));
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a part gives the values of its owned or exported rows only")));
}

/*
 * Writes a slot's owned rows (a start vector's, a slot the coordinator held, the kept far field):
 * values holds columns values for each owned row, in their order (it need not be aligned: it may
 * be a bytea's data); columns is k, or 1 for the same value in every column.  The halo rows are
 * those of the slot's next product's exchange.
 */
void
shard_state_set_rows(ShardState *state, int slot, const void *values, int columns)
{
	double	   *out = slot_values(state, owned_slot(state, slot, true));
	int64		rows = state->owned_count[SHARD_ROWS_OWNED];
	int			k = state->k;

	/* the owned rows are the engine's first ones, in their order */
	if (columns == k)
	{
		memcpy(out, values, rows * k * sizeof(double));
		return;
	}
	for (int64 i = 0; i < rows; i++)
	{
		double		value;

		memcpy(&value, (const char *) values + i * sizeof(double), sizeof(double));
		for (int j = 0; j < k; j++)
			out[i * k + j] = value;
	}
}

/*
 * The top_k best owned rows of every column of a slot, in pr_top_k's order (ties to the smaller
 * row, which is the smaller node of the whole graph too): min(top_k, owned rows) local rows and
 * their values per column, column after column, into rows and values; returns that count.
 */
int64
shard_state_top_k(ShardState *state, int slot, int64 top_k, int32 *rows, double *values)
{
	const double *all = slot_values(state, owned_slot(state, slot, false));
	int64		n_owned = state->owned_count[SHARD_ROWS_OWNED];
	int64		count = Min(top_k, n_owned);
	int			k = state->k;

	/* the owned rows are the engine's first ones, ascending as the local rows */
	for (int j = 0; j < k && count > 0; j++)
	{
		int32	   *column_rows = rows + j * count;

		pr_top_k_values(all, n_owned, k, j, count, column_rows, values + j * count,
						state->alloc);
		for (int64 i = 0; i < count; i++)
			column_rows[i] = state->local_row[column_rows[i]];
	}
	return count;
}

/*
 * The combination (PrEngineOps.combine) of n_terms slots into out_slot on the part's owned rows:
 * the engine's own (out may be one of the slots).
 */
void
shard_state_combine(ShardState *state, int out_slot, int n_terms, const int32 *slots,
					const double *coef)
{
	int			in[PR_COMBINE_MAX_TERMS];
	int			out;
	PrError		err = {0};

	for (int t = 0; t < n_terms; t++)
		in[t] = owned_slot(state, slots[t], false);
	out = owned_slot(state, out_slot, true);
	if (state->engine->ops->combine(state->engine, out, n_terms, in, coef, &err) != PR_OK)
		powerrank_report_core_error("shard combine", &err);
}

/*
 * The dot products (PrEngineOps.dots) of a_slot with n_terms slots over the part's owned rows:
 * the engine's own, out[t * k + j] (the coordinator adds the parts' in their order).
 */
void
shard_state_dots(ShardState *state, int a_slot, int n_terms, const int32 *slots, double *out)
{
	int			in[PR_COMBINE_MAX_TERMS];
	int			a = owned_slot(state, a_slot, false);
	PrError		err = {0};

	for (int t = 0; t < n_terms; t++)
		in[t] = owned_slot(state, slots[t], false);
	if (state->engine->ops->dots(state->engine, a, n_terms, in, out, &err) != PR_OK)
		powerrank_report_core_error("shard dots", &err);
}

/*
 * A restart on owned rows as shard_state_update reads it (shard.h: the restart's bytes), its rows
 * the engine's.
 */
typedef struct OwnedRestart
{
	bool		uniform;
	bool		to_dangling;	/* the dangling mass goes to a dangling distribution */
	double		nodes;
	int64	   *ptr;			/* [k + 1] each column's first entry */
	int64		entries;
	int64		dangling_count;
	int32	   *row;			/* [entries] */
	double	   *weight;
	int32	   *dangling_row;	/* [dangling_count] */
	double	   *dangling_weight;
} OwnedRestart;

/* Reads n bytes at *at of in (size bytes) into out; false when they are not there. */
bool
shard_read_bytes(const char *in, Size size, Size *at, void *out, Size n)
{
	if (n > size || *at > size - n)
		return false;
	memcpy(out, in + *at, n);
	*at += n;
	return true;
}

/* Reads a restart of k columns on the part's owned rows, or an ERROR. */
static void
read_owned_restart(const ShardState *state, const char *in, Size size, OwnedRestart *r)
{
	Size		at = 0;
	int32		k = 0,
				flags = 0;
	bool		ok;
	int64		n = state->graph.n_nodes;

	memset(r, 0, sizeof(OwnedRestart));
	r->ptr = palloc0((state->k + 1) * sizeof(int64));
	ok = shard_read_bytes(in, size, &at, &k, sizeof(k)) && k == state->k &&
		shard_read_bytes(in, size, &at, &flags, sizeof(flags)) &&
		(flags & ~(SHARD_RESTART_UNIFORM | SHARD_RESTART_TO_DANGLING)) == 0 &&
		shard_read_bytes(in, size, &at, &r->nodes, sizeof(r->nodes)) && r->nodes >= 1.0 &&
		shard_read_bytes(in, size, &at, r->ptr + 1, k * sizeof(int64)) &&
		shard_read_bytes(in, size, &at, &r->dangling_count, sizeof(int64));
	r->uniform = (flags & SHARD_RESTART_UNIFORM) != 0;
	r->to_dangling = (flags & SHARD_RESTART_TO_DANGLING) != 0;
	for (int j = 0; ok && j < k; j++)
	{
		/* the counts become each column's first entry */
		int64		count = r->ptr[j + 1];

		ok = count >= 0 && count <= n && (!r->uniform || count == 0);
		r->ptr[j + 1] = r->ptr[j] + (ok ? count : 0);
	}
	r->entries = r->ptr[k];
	ok = ok && r->dangling_count >= 0 && r->dangling_count <= n &&
		(r->to_dangling || r->dangling_count == 0) &&
		size - at == (Size) (r->entries + r->dangling_count) * (sizeof(int32) + sizeof(double));
	if (ok)
	{
		r->row = palloc(Max(r->entries, 1) * sizeof(int32));
		r->weight = palloc(Max(r->entries, 1) * sizeof(double));
		r->dangling_row = palloc(Max(r->dangling_count, 1) * sizeof(int32));
		r->dangling_weight = palloc(Max(r->dangling_count, 1) * sizeof(double));
		ok = shard_read_bytes(in, size, &at, r->row, r->entries * sizeof(int32)) &&
			shard_read_bytes(in, size, &at, r->weight, r->entries * sizeof(double)) &&
			shard_read_bytes(in, size, &at, r->dangling_row, r->dangling_count * sizeof(int32)) &&
			shard_read_bytes(in, size, &at, r->dangling_weight, r->dangling_count * sizeof(double));
	}
	for (int64 i = 0; ok && i < r->entries; i++)
		ok = r->row[i] >= 0 && r->row[i] < n && (state->owners[r->row[i]] & SHARD_OWNS) != 0;
	for (int64 i = 0; ok && i < r->dangling_count; i++)
		ok = r->dangling_row[i] >= 0 && r->dangling_row[i] < n &&
			(state->owners[r->dangling_row[i]] & SHARD_OWNS) != 0 &&
			(i == 0 || r->dangling_row[i] > r->dangling_row[i - 1]);
	if (!ok)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("restart holds %zu bytes that are not a restart of %d columns on the part's owned rows",
						size, state->k),
				 errhint("The shard functions are called by a coordinator of the same powerrank version.")));
	/* the engine's rows (owned rows keep their order: the dangling rows still ascend) */
	for (int64 i = 0; i < r->entries; i++)
		r->row[i] = state->engine_row[r->row[i]];
	for (int64 i = 0; i < r->dangling_count; i++)
		r->dangling_row[i] = state->engine_row[r->dangling_row[i]];
}

/*
 * The PageRank update (PrEngineOps.pagerank_update: the engine's own, on its owned rows) of
 * y_slot, given the product of x_slot in y_slot, the whole graph's dangling sums of x per column
 * and the restart's owned entries (shard.h); residual[2k] receives the sums of |y - x| over the
 * owned rows per column, then their maxima, y_dangling[k] y's sums over the owned dangling rows
 * (those of x for the next product, as shard_state_owned_product takes them), and exported
 * (unless NULL) the new values of y's exported rows (k each: what the other parts read of y, for
 * the next product).
 */
void
shard_state_update(ShardState *state, int y_slot, int x_slot, double alpha,
				   const double *dangling, const char *restart, Size restart_size,
				   double *residual, double *y_dangling, double *exported)
{
	int			ye = owned_slot(state, y_slot, false);
	int			xe = owned_slot(state, x_slot, false);
	int			k = state->k;
	PrEngine   *engine = state->engine;
	PrResidual *res = palloc(k * sizeof(PrResidual));
	double	   *none = palloc0(k * sizeof(double));
	PrError		err = {0};
	OwnedRestart r;
	PrRestart	given;

	if (x_slot == y_slot)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the PageRank update takes two slots")));
	read_owned_restart(state, restart, restart_size, &r);
	given = pr_restart_columns(k, r.ptr, r.row, r.weight);
	given.uniform = r.uniform;
	given.dangling_count = r.dangling_count;
	given.dangling_node = r.dangling_row;
	given.dangling_weight = r.dangling_weight;
	/*
	 * the dangling mass goes to a dangling distribution none of whose nodes this part owns: it
	 * adds nothing here, and the restart's coefficient is 1 - alpha, as with no dangling mass
	 */
	pr_cpu_engine_give_dangling(engine, r.nodes,
								r.to_dangling && r.dangling_count == 0 ? none : dangling);
	if (engine->ops->pagerank_update(engine, ye, xe, alpha, &given, &err) != PR_OK ||
		engine->ops->residual(engine, res, &err) != PR_OK)
		powerrank_report_core_error("shard update", &err);
	for (int j = 0; j < k; j++)
	{
		residual[j] = res[j].l1;
		residual[k + j] = res[j].linf;
	}
	owned_dangling_sums(state, slot_values(state, ye), y_dangling);
	if (exported != NULL)
		shard_state_rows(state, y_slot, SHARD_ROWS_EXPORTED, exported);
}

/*
 * Fills a slot's owned rows with the restart's owned entries (PrEngineOps.restart_fill: the
 * engine's own; the restart as shard_state_update reads it, shard.h), the warm start's first term.
 */
void
shard_state_restart_fill(ShardState *state, int slot, const char *restart, Size restart_size)
{
	int			engine_slot = owned_slot(state, slot, true);
	OwnedRestart r;
	PrRestart	given;
	PrError		err = {0};

	read_owned_restart(state, restart, restart_size, &r);
	given = pr_restart_columns(state->k, r.ptr, r.row, r.weight);
	given.uniform = r.uniform;
	if (state->engine->ops->restart_fill(state->engine, engine_slot, &given, &err) != PR_OK)
		powerrank_report_core_error("shard restart fill", &err);
}

/* Frees the part (its engine included). */
void
shard_state_close(ShardState *state)
{
	if (state != NULL)
		MemoryContextDelete(state->cxt);
}

/* The session's part, or an ERROR saying that none is open. */
static ShardState *
session_part(void)
{
	if (session_state == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("no shard part is open in this session"),
				 errhint("A coordinator calls powerrank_shard_open() first.")));
	return session_state;
}

/* A bytea holding bytes copied from data. */
static bytea *
bytes_to_bytea(const void *data, Size bytes)
{
	bytea	   *out = (bytea *) palloc_extended(VARHDRSZ + bytes, MCXT_ALLOC_HUGE);

	SET_VARSIZE(out, VARHDRSZ + bytes);
	if (bytes > 0)
		memcpy(VARDATA(out), data, bytes);
	return out;
}

/* Checks that a vector argument holds count doubles. */
static void
check_vector_bytes(bytea *vector, int64 count, const char *what)
{
	if ((int64) VARSIZE_ANY_EXHDR(vector) != count * (int64) sizeof(double))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s holds %zu bytes, not %lld values", what,
						VARSIZE_ANY_EXHDR(vector), (long long) count),
				 errhint("The shard functions are called by a coordinator of the same powerrank version.")));
}

/*
 * powerrank_shard_open(edges text, src_column name, dst_column name, weight_column name,
 * out_edges boolean, known_content bigint) RETURNS bytea: opens this session's part on the table
 * (the part it holds while the table's content is the same, else a new one: shard_state_open) and
 * returns what shard_open_write writes; known_content is the number of the graph (ShardContent)
 * whose node ids the coordinator holds (0: none): when the part's graph is that one, they are not
 * repeated.
 */
Datum
powerrank_shard_open(PG_FUNCTION_ARGS)
{
	EdgeTableSpec spec;
	bytea	   *out;
	bool		same;
	Size		size;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2) || PG_ARGISNULL(4) ||
		PG_ARGISNULL(5))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("powerrank_shard_open() takes NULL only for weight_column")));
	spec.relation = PG_GETARG_TEXT_PP(0);
	spec.src_column = NameStr(*PG_GETARG_NAME(1));
	spec.dst_column = NameStr(*PG_GETARG_NAME(2));
	spec.weight_column = PG_ARGISNULL(3) ? NULL : NameStr(*PG_GETARG_NAME(3));
	(void) shard_state_open(&session_state, TopMemoryContext, &spec, PG_GETARG_BOOL(4));
	same = PG_GETARG_INT64(5) != 0 &&
		(uint64) PG_GETARG_INT64(5) == session_state->summary.content.number;

	size = shard_open_size(session_state, same);
	out = (bytea *) palloc_extended(VARHDRSZ + size, MCXT_ALLOC_HUGE);
	SET_VARSIZE(out, VARHDRSZ + shard_open_write(session_state, same, VARDATA(out)));
	PG_RETURN_BYTEA_P(out);
}

/* Bytes of this session's heap keep_product_memory has touched (warmed) already. */
static int64 warmed_heap = 0;

/*
 * Makes this session's malloc keep the memory of one product for the next: a product receives x
 * and answers y as bytea of megabytes, which PostgreSQL copies a few times (the message, the
 * parameter, the plan's constant, the result) into memory freed at the end of the statement, and
 * glibc gives such blocks back to the kernel (mmap above its threshold, a heap trimmed above its
 * own), so that every product would fault them in again — costing as much as the product itself
 * (RESULTS.md).  The heap keeps room for SHARD_PRODUCT_COPIES copies of the vectors of k columns
 * (at least SHARD_KEPT_HEAP_MIN); blocks up to glibc's largest threshold come from it.  A shard
 * session serves one coordinator and holds its part anyway.  Once a session, the heap is grown by
 * SHARD_WARMED_COPIES copies on huge pages and touched, so that the first product's copies find
 * their pages there rather than faulting in a 4 kB page at a time.
 */
static void
keep_product_memory(const ShardState *state, int k)
{
#ifdef __GLIBC__
	int64		vectors = (state->row_count[SHARD_ROLE_SOURCE] +
						   state->row_count[SHARD_ROLE_TARGET]) * (int64) k * sizeof(double);
	int64		keep = Max(SHARD_KEPT_HEAP_MIN, SHARD_PRODUCT_COPIES * vectors);
	int64		warm = Min(SHARD_WARMED_COPIES * vectors, keep / 2);

	mallopt(M_MMAP_THRESHOLD, SHARD_MMAP_THRESHOLD);
	mallopt(M_TRIM_THRESHOLD, (int) Min(keep, (int64) PG_INT32_MAX));
	if (warm > warmed_heap)
	{
		char	   *block = malloc(warm);
		volatile char *page = block;

		if (block != NULL)
		{
			powerrank_advise_huge_pages(block, warm);
			for (int64 at = 0; at < warm; at += SHARD_WARM_STEP)
				page[at] = 0;
			free(block);
			warmed_heap = warm;
		}
	}
#endif
}

/*
 * powerrank_shard_prepare(out_strength bytea, columns int, needs int, owners bytea) RETURNS
 * bigint: prepares the session's part for columns score vectors and the products in needs
 * (PR_NEED_* bits), with the whole graph's out-strengths of its local nodes
 * (shard_strengths_write) and the rows it owns (a byte of owner bits per local node, shard.h;
 * NULL: none); returns the part's edge count.
 */
Datum
powerrank_shard_prepare(PG_FUNCTION_ARGS)
{
	ShardState *state = session_part();
	bytea	   *out_strength;
	bytea	   *owners = PG_ARGISNULL(3) ? NULL : PG_GETARG_BYTEA_PP(3);
	int32		k;
	int32		needs;
	int64		n = state->graph.n_nodes;
	double	   *strength = palloc_extended(Max(n, 1) * sizeof(double), MCXT_ALLOC_HUGE);

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("powerrank_shard_prepare() takes NULL only for owners")));
	out_strength = PG_GETARG_BYTEA_PP(0);
	k = PG_GETARG_INT32(1);
	needs = PG_GETARG_INT32(2);
	if (owners != NULL && (int64) VARSIZE_ANY_EXHDR(owners) != n)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("owners holds %zu bytes, not one for each of the part's %lld nodes",
						VARSIZE_ANY_EXHDR(owners), (long long) n),
				 errhint("The shard functions are called by a coordinator of the same powerrank version.")));

	if (!shard_strengths_read(VARDATA_ANY(out_strength), VARSIZE_ANY_EXHDR(out_strength), n,
							  strength))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("out_strength holds %zu bytes that are not %lld out-strengths",
						VARSIZE_ANY_EXHDR(out_strength), (long long) n),
				 errhint("The shard functions are called by a coordinator of the same powerrank version.")));
	if (k < 1 || needs <= 0 ||
		(needs & ~(PR_NEED_PULL_NORMALIZED | PR_NEED_PULL | PR_NEED_PUSH)) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("powerrank_shard_prepare() takes columns >= 1 and product bits 1 to 7, not %d and %d",
						k, needs)));
	shard_state_prepare(state, strength, k, (unsigned) needs,
						owners != NULL ? (const uint8 *) VARDATA_ANY(owners) : NULL);
	keep_product_memory(state, k);
	PG_RETURN_INT64(state->graph.n_edges);
}

/*
 * powerrank_shard_product(product int, x bytea) RETURNS bytea: the product (PrProduct) of x over
 * the session's part: x has the columns' values of the rows the product reads, the result those of
 * the rows it gives (shard_state_product), row-major.
 */
Datum
powerrank_shard_product(PG_FUNCTION_ARGS)
{
	ShardState *state = session_part();
	int32		product = PG_GETARG_INT32(0);
	bytea	   *x = PG_GETARG_BYTEA_PP(1);
	int64		values_in,
				values_out;
	double	   *y;

	if (product < PR_PRODUCT_PULL_NORMALIZED || product > PR_PRODUCT_PUSH ||
		(state->needs & (1u << product)) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("product %d was not prepared on this shard part", product)));
	values_in = state->row_count[shard_product_role((PrProduct) product, true)] * state->k;
	values_out = state->row_count[shard_product_role((PrProduct) product, false)] * state->k;
	check_vector_bytes(x, values_in, "x");
	y = palloc_extended(Max(values_out, 1) * sizeof(double), MCXT_ALLOC_HUGE);
	/* the rows are copied out of x value by value: its data need not be aligned */
	shard_state_product(state, (PrProduct) product, VARDATA_ANY(x), y);
	PG_RETURN_BYTEA_P(bytes_to_bytea(y, values_out * sizeof(double)));
}

/* The session's part with rows owned, or an ERROR. */
ShardState *
shard_owning_part(void)
{
	ShardState *state = session_part();

	if (state->engine == NULL || state->owners == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the shard part owns no rows"),
				 errhint("powerrank_shard_prepare() with owners comes first.")));
	return state;
}

/*
 * powerrank_shard_owned_product(product int, x_slot int, y_slot int, given int, x bytea) RETURNS
 * bytea: a pull product on the part's owned rows (shard_state_owned_product): x holds the values
 * of the halo rows, of every local row, of all rows alike, or nothing (the halo rows come from the
 * other shards) (given: ShardGiven), which go into x_slot; the result is, one per column, x's dangling sums over the
 * owned rows for the normalised product, y's sums over the owned rows for the plain one.
 */
Datum
powerrank_shard_owned_product(PG_FUNCTION_ARGS)
{
	ShardState *state = shard_owning_part();
	int32		product = PG_GETARG_INT32(0);
	int32		given = PG_GETARG_INT32(3);
	bytea	   *x = PG_GETARG_BYTEA_PP(4);
	double	   *dangling = palloc(state->k * sizeof(double));
	int64		rows = given == SHARD_GIVEN_HALO ? state->owned_count[SHARD_ROWS_HALO] :
		given == SHARD_GIVEN_ALL ? state->graph.n_nodes : given == SHARD_GIVEN_FILL ? 1 : 0;

	if ((product != PR_PRODUCT_PULL_NORMALIZED && product != PR_PRODUCT_PULL) ||
		(state->needs & (1u << product)) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("pull product %d was not prepared on this shard part", product)));
	if (given < SHARD_GIVEN_HALO || given > SHARD_GIVEN_PEERS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("given must be 0, 1, 2 or 3, not %d", given)));
	check_vector_bytes(x, rows * state->k, "x");
	shard_state_owned_product(state, (PrProduct) product, PG_GETARG_INT32(1), PG_GETARG_INT32(2),
							  (ShardGiven) given, VARDATA_ANY(x), dangling);
	PG_RETURN_BYTEA_P(bytes_to_bytea(dangling, state->k * sizeof(double)));
}

/*
 * powerrank_shard_rows(slot int, exported boolean) RETURNS bytea: the values of the slot's owned
 * rows (exported: only those other parts read), k each, row-major.
 */
Datum
powerrank_shard_rows(PG_FUNCTION_ARGS)
{
	ShardState *state = shard_owning_part();
	ShardRows	list = PG_GETARG_BOOL(1) ? SHARD_ROWS_EXPORTED : SHARD_ROWS_OWNED;
	int64		values = state->owned_count[list] * state->k;
	bytea	   *out = (bytea *) palloc_extended(VARHDRSZ + values * sizeof(double),
												MCXT_ALLOC_HUGE);

	SET_VARSIZE(out, VARHDRSZ + values * sizeof(double));
	shard_state_rows(state, PG_GETARG_INT32(0), list, (double *) VARDATA(out));
	PG_RETURN_BYTEA_P(out);
}

/* The whole graph's dangling sums of x that an update is given (k doubles), or an ERROR. */
static double *
given_dangling(const ShardState *state, bytea *bytes)
{
	double	   *dangling = palloc(state->k * sizeof(double));

	check_vector_bytes(bytes, state->k, "dangling");
	memcpy(dangling, VARDATA_ANY(bytes), state->k * sizeof(double));
	return dangling;
}

/*
 * powerrank_shard_update(y_slot int, x_slot int, alpha float8, dangling bytea, restart bytea,
 * exported boolean) RETURNS bytea: the PageRank update of the part's owned rows
 * (shard_state_update) with the whole graph's dangling sums of x (one per column) and the
 * restart's owned entries (shard.h); the result is the residual's sums over the owned rows per
 * column, then their maxima, then y's sums over the owned dangling rows (one per column), then
 * (exported) the new values of y's exported rows (k each).
 */
Datum
powerrank_shard_update(PG_FUNCTION_ARGS)
{
	ShardState *state = shard_owning_part();
	bytea	   *restart = PG_GETARG_BYTEA_PP(4);
	double	   *dangling = given_dangling(state, PG_GETARG_BYTEA_PP(3));
	bool		exported = PG_GETARG_BOOL(5);
	int64		values = (3 + (exported ? state->owned_count[SHARD_ROWS_EXPORTED] : 0)) *
		state->k;
	bytea	   *out = (bytea *) palloc_extended(VARHDRSZ + values * sizeof(double),
												MCXT_ALLOC_HUGE);
	double	   *residual = (double *) VARDATA(out);

	SET_VARSIZE(out, VARHDRSZ + values * sizeof(double));
	shard_state_update(state, PG_GETARG_INT32(0), PG_GETARG_INT32(1), PG_GETARG_FLOAT8(2),
					   dangling, VARDATA_ANY(restart), VARSIZE_ANY_EXHDR(restart), residual,
					   residual + 2 * state->k, exported ? residual + 3 * state->k : NULL);
	PG_RETURN_BYTEA_P(out);
}

/*
 * powerrank_shard_step(x_slot int, y_slot int, alpha float8, dangling bytea, restart bytea)
 * RETURNS bytea: one PageRank iteration on the part's owned rows in one call: the halo rows of
 * x_slot from the other shards (the group's exchange), the pull product into y_slot, and the
 * update of y_slot with the whole graph's dangling sums of x (one per column) and the restart's
 * owned entries (shard_state_owned_product, then shard_state_update); the result is
 * powerrank_shard_update's without exported rows.
 */
Datum
powerrank_shard_step(PG_FUNCTION_ARGS)
{
	ShardState *state = shard_owning_part();
	bytea	   *restart = PG_GETARG_BYTEA_PP(4);
	double	   *dangling = given_dangling(state, PG_GETARG_BYTEA_PP(3));
	double	   *x_dangling = palloc(state->k * sizeof(double));
	bytea	   *out = (bytea *) palloc(VARHDRSZ + 3 * state->k * sizeof(double));
	double	   *residual = (double *) VARDATA(out);
	int32		x_slot = PG_GETARG_INT32(0);
	int32		y_slot = PG_GETARG_INT32(1);

	if ((state->needs & PR_NEED_PULL_NORMALIZED) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("pull product %d was not prepared on this shard part",
						(int) PR_PRODUCT_PULL_NORMALIZED)));
	SET_VARSIZE(out, VARHDRSZ + 3 * state->k * sizeof(double));
	shard_state_owned_product(state, PR_PRODUCT_PULL_NORMALIZED, x_slot, y_slot,
							  SHARD_GIVEN_PEERS, NULL, x_dangling);
	shard_state_update(state, y_slot, x_slot, PG_GETARG_FLOAT8(2), dangling,
					   VARDATA_ANY(restart), VARSIZE_ANY_EXHDR(restart), residual,
					   residual + 2 * state->k, NULL);
	PG_RETURN_BYTEA_P(out);
}

/*
 * powerrank_shard_top_k(slot int, top_k bigint) RETURNS bytea: the top_k best owned rows of every
 * column of the slot (shard_state_top_k): min(top_k, owned rows) rows per column (int32, local),
 * column after column, then their values (double).
 */
Datum
powerrank_shard_top_k(PG_FUNCTION_ARGS)
{
	ShardState *state = shard_owning_part();
	int64		top_k = PG_GETARG_INT64(1);
	int64		count;
	int32	   *rows;
	double	   *values;
	bytea	   *out;

	if (top_k < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("top_k must be at least 1, not %lld", (long long) top_k)));
	count = Min(top_k, state->owned_count[SHARD_ROWS_OWNED]);
	rows = palloc_extended(Max(count * state->k, 1) * sizeof(int32), MCXT_ALLOC_HUGE);
	values = palloc_extended(Max(count * state->k, 1) * sizeof(double), MCXT_ALLOC_HUGE);
	count = shard_state_top_k(state, PG_GETARG_INT32(0), top_k, rows, values);
	out = (bytea *) palloc_extended(VARHDRSZ + count * state->k * (sizeof(int32) + sizeof(double)),
									MCXT_ALLOC_HUGE);
	SET_VARSIZE(out, VARHDRSZ + count * state->k * (sizeof(int32) + sizeof(double)));
	memcpy(VARDATA(out), rows, count * state->k * sizeof(int32));
	memcpy(VARDATA(out) + count * state->k * sizeof(int32), values,
		   count * state->k * sizeof(double));
	PG_RETURN_BYTEA_P(out);
}

/* The slots of a combine or dots call: 1 to PR_COMBINE_MAX_TERMS int32, or an ERROR. */
static int
slot_list(bytea *slots, int32 *out)
{
	Size		size = VARSIZE_ANY_EXHDR(slots);
	int			n = (int) (size / sizeof(int32));

	if (size % sizeof(int32) != 0 || n < 1 || n > PR_COMBINE_MAX_TERMS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("slots holds %zu bytes, not 1 to %d slot numbers", size,
						PR_COMBINE_MAX_TERMS)));
	memcpy(out, VARDATA_ANY(slots), size);
	return n;
}

/*
 * powerrank_shard_combine(out_slot int, slots bytea, coef bytea) RETURNS bytea: the combination of
 * the slots (int32 each) with the coefficients (slots × columns doubles) on the part's owned rows
 * into out_slot (shard_state_combine); the result is empty.
 */
Datum
powerrank_shard_combine(PG_FUNCTION_ARGS)
{
	ShardState *state = shard_owning_part();
	int32		slots[PR_COMBINE_MAX_TERMS];
	int			n_terms = slot_list(PG_GETARG_BYTEA_PP(1), slots);
	bytea	   *coef_bytes = PG_GETARG_BYTEA_PP(2);
	double	   *coef = palloc(n_terms * state->k * sizeof(double));

	check_vector_bytes(coef_bytes, n_terms * state->k, "coef");
	memcpy(coef, VARDATA_ANY(coef_bytes), n_terms * state->k * sizeof(double));
	shard_state_combine(state, PG_GETARG_INT32(0), n_terms, slots, coef);
	PG_RETURN_BYTEA_P(bytes_to_bytea(NULL, 0));
}

/*
 * powerrank_shard_set_rows(slot int, "values" bytea) RETURNS bytea: writes the slot's owned rows
 * (k values each, row-major, in their order, or one value each for every column:
 * shard_state_set_rows); the result is empty.
 */
Datum
powerrank_shard_set_rows(PG_FUNCTION_ARGS)
{
	ShardState *state = shard_owning_part();
	bytea	   *values = PG_GETARG_BYTEA_PP(1);
	int64		rows = state->owned_count[SHARD_ROWS_OWNED];
	int			columns = (int64) VARSIZE_ANY_EXHDR(values) == rows * (int64) sizeof(double) ?
		1 : state->k;

	check_vector_bytes(values, rows * columns, "values");
	shard_state_set_rows(state, PG_GETARG_INT32(0), VARDATA_ANY(values), columns);
	PG_RETURN_BYTEA_P(bytes_to_bytea(NULL, 0));
}

/*
 * powerrank_shard_restart_fill(slot int, restart bytea) RETURNS bytea: fills the slot's owned rows
 * with the restart's owned entries (shard.h, shard_state_restart_fill); the result is empty.
 */
Datum
powerrank_shard_restart_fill(PG_FUNCTION_ARGS)
{
	ShardState *state = shard_owning_part();
	bytea	   *restart = PG_GETARG_BYTEA_PP(1);

	shard_state_restart_fill(state, PG_GETARG_INT32(0), VARDATA_ANY(restart),
							 VARSIZE_ANY_EXHDR(restart));
	PG_RETURN_BYTEA_P(bytes_to_bytea(NULL, 0));
}

/*
 * powerrank_shard_dots(a_slot int, slots bytea) RETURNS bytea: the dot products of a_slot with each
 * of the slots (int32 each) over the part's owned rows (shard_state_dots), slot after slot, a
 * column each.
 */
Datum
powerrank_shard_dots(PG_FUNCTION_ARGS)
{
	ShardState *state = shard_owning_part();
	int32		slots[PR_COMBINE_MAX_TERMS];
	int			n_terms = slot_list(PG_GETARG_BYTEA_PP(1), slots);
	double	   *dots = palloc(n_terms * state->k * sizeof(double));

	shard_state_dots(state, PG_GETARG_INT32(0), n_terms, slots, dots);
	PG_RETURN_BYTEA_P(bytes_to_bytea(dots, n_terms * state->k * sizeof(double)));
}

/*
 * powerrank_shard_column_sums(slot int) RETURNS bytea: the sums of each column of the slot over
 * the part's owned rows, then over its owned dangling rows (shard_state_column_sums).
 */
Datum
powerrank_shard_column_sums(PG_FUNCTION_ARGS)
{
	ShardState *state = shard_owning_part();
	double	   *sums = palloc(2 * state->k * sizeof(double));

	shard_state_column_sums(state, PG_GETARG_INT32(0), sums, sums + state->k);
	PG_RETURN_BYTEA_P(bytes_to_bytea(sums, 2 * state->k * sizeof(double)));
}

/*
 * powerrank_shard_normalize(slot int, old_slot int, sums bytea) RETURNS bytea: HITS's
 * normalisation of the slot's owned rows by the whole graph's column sums (one per column,
 * shard_state_normalize); the result is, when old_slot >= 0, the residual's sums over the owned
 * rows per column, then their maxima; else empty.
 */
Datum
powerrank_shard_normalize(PG_FUNCTION_ARGS)
{
	ShardState *state = shard_owning_part();
	bytea	   *sums = PG_GETARG_BYTEA_PP(2);
	int32		old_slot = PG_GETARG_INT32(1);
	double	   *given = palloc(state->k * sizeof(double));
	double	   *residual = palloc(2 * state->k * sizeof(double));

	check_vector_bytes(sums, state->k, "sums");
	memcpy(given, VARDATA_ANY(sums), state->k * sizeof(double));
	shard_state_normalize(state, PG_GETARG_INT32(0), old_slot, given, residual);
	PG_RETURN_BYTEA_P(bytes_to_bytea(residual, old_slot >= 0 ? 2 * state->k * sizeof(double) : 0));
}

/*
 * powerrank_shard_push(x_slot int, y_slot int, x_sums bytea, peers boolean) RETURNS bytea: HITS's
 * push product of x_slot's owned rows into y_slot (shard_state_push), x first normalised by
 * x_sums (one per column; empty: not normalised); with peers the halo rows' sums go to their
 * owners shard to shard and the result is y's column sums over the owned rows, else the result is
 * the halo rows' sums (k each), which the coordinator adds up and hands to their owners
 * (powerrank_shard_add_exported).
 */
Datum
powerrank_shard_push(PG_FUNCTION_ARGS)
{
	ShardState *state = shard_owning_part();
	bytea	   *x_sums = PG_GETARG_BYTEA_PP(2);
	bool		peers = PG_GETARG_BOOL(3);
	int64		values = peers ? state->k : state->owned_count[SHARD_ROWS_HALO] * state->k;
	double	   *given = NULL;
	bytea	   *out = (bytea *) palloc_extended(VARHDRSZ + values * sizeof(double),
												MCXT_ALLOC_HUGE);

	if ((state->needs & PR_NEED_PUSH) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("push product %d was not prepared on this shard part",
						(int) PR_PRODUCT_PUSH)));
	if (VARSIZE_ANY_EXHDR(x_sums) > 0)
	{
		check_vector_bytes(x_sums, state->k, "x_sums");
		given = palloc(state->k * sizeof(double));
		memcpy(given, VARDATA_ANY(x_sums), state->k * sizeof(double));
	}
	SET_VARSIZE(out, VARHDRSZ + values * sizeof(double));
	shard_state_push(state, PG_GETARG_INT32(0), PG_GETARG_INT32(1), given, peers,
					 (double *) VARDATA(out), (double *) VARDATA(out));
	PG_RETURN_BYTEA_P(out);
}

/*
 * powerrank_shard_add_exported(y_slot int, values bytea) RETURNS bytea: adds to the slot's
 * exported rows the other parts' push sums of them (k for each exported row, in their order;
 * shard_state_add_exported); the result is y's column sums over the owned rows.
 */
Datum
powerrank_shard_add_exported(PG_FUNCTION_ARGS)
{
	ShardState *state = shard_owning_part();
	bytea	   *values = PG_GETARG_BYTEA_PP(1);
	double	   *sums = palloc(state->k * sizeof(double));

	check_vector_bytes(values, state->owned_count[SHARD_ROWS_EXPORTED] * state->k, "values");
	shard_state_add_exported(state, PG_GETARG_INT32(0), VARDATA_ANY(values), sums);
	PG_RETURN_BYTEA_P(bytes_to_bytea(sums, state->k * sizeof(double)));
}

/* powerrank_shard_close() RETURNS void: frees this session's part. */
Datum
powerrank_shard_close(PG_FUNCTION_ARGS)
{
	shard_state_close(session_state);
	PG_RETURN_VOID();
}

/* ---- the shard-to-shard exchange ---- */

/*
 * The shard side of the shard-to-shard exchange: the session's group of the run's shards
 * (peer_exchange.h, Gloo over TCP) and what this part sends to and receives from each of them
 * before a product on owned rows.
 *
 * The coordinator makes the group in two calls: powerrank_shard_peers_open makes this session's
 * end of it (bound to the address the coordinator reached this server at) and answers the
 * addresses of its pairs, and whether it keeps the lists the coordinator names; powerrank_shard_peers_connect hands over every other shard's address
 * for this one, and the lists of rows to send to each peer and to receive from it (none when its
 * kept ones serve), and connects.
 *
 * The lists follow from the parts' graphs alone (the owner plan is made from them), so the
 * coordinator names them by those graphs (their ShardContents in rank order) where every one is a
 * cache entry; a shard keeps the lists it receives under that name with its graph's cache entry
 * (GRAPH_CACHE_LAYOUT_SHARD_PEERS), and a later session's open of the same name takes them from
 * there, checked against its owner bits as received lists are.
 * Both answer a status byte (0: done, else the reason follows as text) rather than an ERROR: a
 * group that cannot be made leaves the run to the coordinator's relay.  An exchange that fails or
 * is interrupted closes the group (it cannot serve again) and raises the ERROR or the cancel here,
 * after the C++ has returned.
 */

PG_FUNCTION_INFO_V1(powerrank_shard_peers_open);
PG_FUNCTION_INFO_V1(powerrank_shard_peers_connect);

/* This session's group and the rows this part exchanges with each peer. */
typedef struct SessionPeers
{
	MemoryContext cxt;
	PeerGroup  *group;
	int			rank;
	int			size;
	bool		connected;
	char	   *lists_name;		/* what names its lists (the open's; NULL: none) */
	Size		lists_name_size;
	bool		lists_kept;		/* its lists are the ones kept under lists_name */
	int64		n_nodes;		/* the part's, when the lists were taken */
	int64	   *count[2];		/* [PEER_SEND / PEER_RECV][size] rows */
	int32	  **rows[2];		/* [PEER_SEND / PEER_RECV][size] local rows, ascending */
	int			k;				/* columns the buffers are for (0: none yet) */
	double	   *buffer[2];		/* [PEER_SEND / PEER_RECV] all peers' rows, peer after peer */
	size_t	   *bytes[2];		/* [PEER_SEND / PEER_RECV][size] */
} SessionPeers;

#define PEER_SEND 0
#define PEER_RECV 1

static SessionPeers *session_peers = NULL;

/* Closes this session's group and forgets its lists. */
static void
close_session_peers(void)
{
	if (session_peers == NULL)
		return;
	peer_group_close(session_peers->group);
	MemoryContextDelete(session_peers->cxt);
	session_peers = NULL;
}

/* A bytea of a status byte (0: done) and, when not done, the reason. */
static bytea *
peer_answer(const char *failure)
{
	Size		length = failure != NULL ? strlen(failure) : 0;
	bytea	   *out = (bytea *) palloc(VARHDRSZ + 1 + length);

	SET_VARSIZE(out, VARHDRSZ + 1 + length);
	VARDATA(out)[0] = failure != NULL ? 1 : 0;
	if (length > 0)
		memcpy(VARDATA(out) + 1, failure, length);
	return out;
}

/*
 * The address the coordinator reached this server at (inet_server_addr(), numeric), which the
 * group binds to: the coordinator found this server there, so the other shards can too; 127.0.0.1
 * for a Unix socket.
 */
static void
reached_address(char *host, size_t size)
{
	LOCAL_FCINFO(fcinfo, 0);
	Datum		address;

	InitFunctionCallInfoData(*fcinfo, NULL, 0, InvalidOid, NULL, NULL);
	address = inet_server_addr(fcinfo);
	strlcpy(host, fcinfo->isnull ? "127.0.0.1" :
			DatumGetCString(DirectFunctionCall1(inet_out, address)), size);
}

/*
 * Reads the lists of rows to send to and receive from each peer (shard.h, beside
 * SHARD_MAX_PEERS) into the session's group; false when they are not lists of the part's exported
 * rows to send and of its halo rows to receive, each halo row once.
 */
static bool
take_peer_lists(SessionPeers *peers, const ShardState *state, const char *in, Size size)
{
	Size		at = 0;
	int32		parts = 0;
	int64		n = state->graph.n_nodes;
	int64		received = 0;
	uint8		want[2] = {SHARD_EXPORTS, SHARD_HALO};

	if (!shard_read_bytes(in, size, &at, &parts, sizeof(parts)) || parts != peers->size)
		return false;
	for (int way = 0; way < 2; way++)
	{
		peers->count[way] = MemoryContextAllocZero(peers->cxt, parts * sizeof(int64));
		peers->rows[way] = MemoryContextAllocZero(peers->cxt, parts * sizeof(int32 *));
		peers->bytes[way] = MemoryContextAllocZero(peers->cxt, parts * sizeof(size_t));
	}
	for (int peer = 0; peer < parts; peer++)
		for (int way = 0; way < 2; way++)
			if (!shard_read_bytes(in, size, &at, &peers->count[way][peer], sizeof(int64)) ||
				peers->count[way][peer] < 0 || peers->count[way][peer] > n ||
				(peer == peers->rank && peers->count[way][peer] != 0))
				return false;
	for (int way = 0; way < 2; way++)
		for (int peer = 0; peer < parts; peer++)
		{
			int64		count = peers->count[way][peer];
			int32	   *rows = MemoryContextAllocHuge(peers->cxt, Max(count, 1) * sizeof(int32));

			if (!shard_read_bytes(in, size, &at, rows, count * sizeof(int32)))
				return false;
			for (int64 i = 0; i < count; i++)
				if (rows[i] < 0 || rows[i] >= n || (i > 0 && rows[i] <= rows[i - 1]) ||
					(state->owners[rows[i]] & want[way]) == 0)
					return false;
			/* the engine's rows (a list's rows ascend in either numbering) */
			for (int64 i = 0; i < count; i++)
				rows[i] = state->engine_row[rows[i]];
			peers->rows[way][peer] = rows;
			if (way == PEER_RECV)
				received += count;
		}
	peers->n_nodes = n;
	return at == size && received == state->owned_count[SHARD_ROWS_HALO];
}

/*
 * What a part's kept peer lists segment holds (GRAPH_CACHE_LAYOUT_SHARD_PEERS, kept with its
 * graph's cache entry beside its numbering): this header, the name they were received under, then
 * the lists as powerrank_shard_peers_connect takes them.
 */
typedef struct PeerListsHeader
{
	int64		name_size;
	int64		lists_size;
} PeerListsHeader;

/*
 * Whether name names the lists of this session's part as rank of size parts: the parts' graphs,
 * a ShardContent each in rank order, every one a cache entry, this part's graph at rank.
 */
static bool
names_part_lists(const ShardState *state, const char *name, Size name_size, int rank, int size)
{
	ShardContent at_rank;

	if (state == NULL || state->entry_id == 0 || state->owners == NULL ||
		name_size != (Size) size * sizeof(ShardContent))
		return false;
	memcpy(&at_rank, name + (Size) rank * sizeof(ShardContent), sizeof(ShardContent));
	return memcmp(&at_rank, &state->summary.content, sizeof(ShardContent)) == 0;
}

/*
 * Takes into the session's group the lists the graph cache keeps with the entry of the part's
 * graph when they were received under the group's name (and are the part's: take_peer_lists);
 * returns whether it did.
 */
static bool
take_kept_lists(SessionPeers *peers, const ShardState *state)
{
	dsm_segment *segment = graph_cache_map_layout(state->entry_id, GRAPH_CACHE_LAYOUT_SHARD_PEERS);
	const char *base;
	PeerListsHeader header;
	Size		length;
	bool		taken;

	if (segment == NULL)
		return false;
	base = dsm_segment_address(segment);
	length = dsm_segment_map_length(segment);
	memcpy(&header, base, Min(length, sizeof(PeerListsHeader)));
	taken = length >= sizeof(PeerListsHeader) &&
		header.name_size == (int64) peers->lists_name_size &&
		header.lists_size >= 0 &&
		length - sizeof(PeerListsHeader) - header.name_size >= (Size) header.lists_size &&
		memcmp(base + sizeof(PeerListsHeader), peers->lists_name, peers->lists_name_size) == 0 &&
		take_peer_lists(peers, state, base + sizeof(PeerListsHeader) + header.name_size,
						header.lists_size);
	dsm_detach(segment);
	return taken;
}

/*
 * Offers the graph cache's entry of the part's graph the lists it received (in, size) under the
 * group's name, in place of the lists it keeps; a DEBUG1 line when it cannot.
 */
static void
keep_peer_lists(const SessionPeers *peers, const ShardState *state, const char *in, Size size)
{
	PeerListsHeader header = {(int64) peers->lists_name_size, (int64) size};
	dsm_segment *segment = dsm_create(sizeof(PeerListsHeader) + peers->lists_name_size + size,
									  DSM_CREATE_NULL_IF_MAXSEGMENTS);
	char	   *base;

	if (segment != NULL)
	{
		base = dsm_segment_address(segment);
		memcpy(base, &header, sizeof(PeerListsHeader));
		memcpy(base + sizeof(PeerListsHeader), peers->lists_name, peers->lists_name_size);
		memcpy(base + sizeof(PeerListsHeader) + peers->lists_name_size, in, size);
	}
	if (segment == NULL ||
		!graph_cache_replace_layout(state->entry_id, GRAPH_CACHE_LAYOUT_SHARD_PEERS, segment))
		elog(DEBUG1, "powerrank: shard peer lists not kept with cache entry %llu",
			 (unsigned long long) state->entry_id);
	if (segment != NULL)
		dsm_detach(segment);
}

/*
 * powerrank_shard_peers_open(rank int, parts int, lists_name bytea) RETURNS bytea: makes this
 * session's end of a group of parts shards, as rank (the session's group before goes), whose
 * lists lists_name names (the parts' graphs, a ShardContent each in rank order; empty: no name);
 * answers 0, a byte saying whether it took lists kept under that name (then
 * powerrank_shard_peers_connect needs none) and, for each rank, int32 bytes and the address of
 * this rank's pair for it (none for itself), or 1 and the reason.
 */
Datum
powerrank_shard_peers_open(PG_FUNCTION_ARGS)
{
	int32		rank = PG_GETARG_INT32(0);
	int32		size = PG_GETARG_INT32(1);
	bytea	   *lists_name = PG_GETARG_BYTEA_PP(2);
	char		host[NI_MAXHOST];
	char		error[256];
	PeerGroup  *group;
	MemoryContext cxt;
	SessionPeers *peers;
	StringInfoData out;

	if (size < 2 || size > SHARD_MAX_PEERS || rank < 0 || rank >= size)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a group of %d shards has no rank %d (2 to %d shards)", size, rank,
						SHARD_MAX_PEERS)));
	close_session_peers();
	reached_address(host, sizeof(host));
	cxt = AllocSetContextCreate(TopMemoryContext, "powerrank shard peers", ALLOCSET_DEFAULT_SIZES);
	peers = MemoryContextAllocZero(cxt, sizeof(SessionPeers));
	peers->cxt = cxt;
	if (peer_group_open(host, rank, size, &group, error, sizeof(error)) != PEER_OK)
	{
		MemoryContextDelete(cxt);
		PG_RETURN_BYTEA_P(peer_answer(psprintf("cannot listen on %s: %s", host, error)));
	}
	session_peers = peers;
	session_peers->group = group;
	session_peers->rank = rank;
	session_peers->size = size;
	if (names_part_lists(session_state, VARDATA_ANY(lists_name), VARSIZE_ANY_EXHDR(lists_name),
						 rank, size))
	{
		peers->lists_name_size = VARSIZE_ANY_EXHDR(lists_name);
		peers->lists_name = MemoryContextAlloc(cxt, peers->lists_name_size);
		memcpy(peers->lists_name, VARDATA_ANY(lists_name), peers->lists_name_size);
		peers->lists_kept = take_kept_lists(peers, session_state);
		elog(DEBUG1, "powerrank: shard peer lists %s", peers->lists_kept ?
			 "kept with the cache entry" : "to receive");
	}

	initStringInfo(&out);
	appendStringInfoSpaces(&out, VARHDRSZ);
	appendStringInfoChar(&out, 0);
	appendStringInfoChar(&out, peers->lists_kept ? 1 : 0);
	for (int peer = 0; peer < size; peer++)
	{
		size_t		bytes;
		const char *address = peer_group_address(group, peer, &bytes);
		int32		length = (int32) bytes;

		appendBinaryStringInfo(&out, (const char *) &length, sizeof(length));
		if (length > 0)
			appendBinaryStringInfo(&out, address, length);
	}
	SET_VARSIZE(out.data, out.len);
	PG_RETURN_BYTEA_P((bytea *) out.data);
}

/*
 * powerrank_shard_peers_connect(addresses bytea, lists bytea) RETURNS bytea: connects this
 * session's group (powerrank_shard_peers_open) to every other shard: addresses holds, for each
 * rank, int32 bytes and the address its open gave for this rank (none for this rank); lists the
 * rows this part sends to and receives from each (shard.h, beside SHARD_MAX_PEERS), empty when the
 * open took kept ones; lists received under a name are offered to the graph cache.  Answers 0,
 * or 1 and the reason (the group is closed).
 */
Datum
powerrank_shard_peers_connect(PG_FUNCTION_ARGS)
{
	ShardState *state = shard_owning_part();
	bytea	   *addresses = PG_GETARG_BYTEA_PP(0);
	bytea	   *lists = PG_GETARG_BYTEA_PP(1);
	SessionPeers *peers = session_peers;
	const char *in = VARDATA_ANY(addresses);
	Size		size = VARSIZE_ANY_EXHDR(addresses);
	Size		at = 0;
	const char **address;
	size_t	   *address_size;
	char		error[256];

	if (peers == NULL || peers->connected)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("this session has no group of shards to connect"),
				 errhint("powerrank_shard_peers_open() comes first.")));
	address = palloc(peers->size * sizeof(char *));
	address_size = palloc(peers->size * sizeof(size_t));
	for (int peer = 0; peer < peers->size; peer++)
	{
		int32		length = -1;

		if (!shard_read_bytes(in, size, &at, &length, sizeof(length)) || length < 0 ||
			(Size) length > size - at || (peer == peers->rank) != (length == 0))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("addresses holds %zu bytes that are not an address for each of %d shards",
							size, peers->size),
					 errhint("The shard functions are called by a coordinator of the same powerrank version.")));
		address[peer] = in + at;
		address_size[peer] = length;
		at += length;
	}
	if (!peers->lists_kept || VARSIZE_ANY_EXHDR(lists) > 0)
	{
		if (!take_peer_lists(peers, state, VARDATA_ANY(lists), VARSIZE_ANY_EXHDR(lists)))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("lists holds %zu bytes that are not the rows the part exchanges with %d shards",
							VARSIZE_ANY_EXHDR(lists), peers->size),
					 errhint("The shard functions are called by a coordinator of the same powerrank version.")));
		if (peers->lists_name != NULL)
			keep_peer_lists(peers, state, VARDATA_ANY(lists), VARSIZE_ANY_EXHDR(lists));
	}
	if (peer_group_connect(peers->group, address, address_size, error, sizeof(error)) != PEER_OK)
	{
		close_session_peers();
		PG_RETURN_BYTEA_P(peer_answer(psprintf("cannot connect to %s", error)));
	}
	peers->connected = true;
	PG_RETURN_BYTEA_P(peer_answer(NULL));
}

/* Whether this backend was asked to stop (read by the exchange's watching thread). */
static bool
peer_interrupted(void)
{
	return QueryCancelPending || ProcDiePending;
}

/*
 * The exchange of a product on owned rows with the other shards (values: n x k, the engine's rows
 * of the part).  Before a pull product: sends every peer the values of the exported rows it reads
 * (the owned rows' are the slot's) and writes the values of the halo rows each peer owns into
 * values.  After a push product (partial_sums): the reverse, each halo row's partial sum to its
 * owner, and the sums of its exported rows received from the peers that read them added into
 * values, the peers' added first in their order (from 0, as the coordinator's relay adds them).
 * A failure or a cancel closes the session's group and raises the ERROR or the cancel.
 */
static void
shard_peers_exchange(const ShardState *state, double *values, bool partial_sums)
{
	SessionPeers *peers = session_peers;
	int			k = state->k;
	int			out = partial_sums ? PEER_RECV : PEER_SEND;
	int			in = partial_sums ? PEER_SEND : PEER_RECV;
	char		error[256];
	PeerStatus	status;

	if (peers == NULL || !peers->connected || peers->n_nodes != state->graph.n_nodes)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("this session's part is in no group of shards"),
				 errhint("powerrank_shard_peers_connect() comes first.")));
	if (peers->k != k)
	{
		for (int way = 0; way < 2; way++)
		{
			int64		rows = 0;

			for (int peer = 0; peer < peers->size; peer++)
			{
				peers->bytes[way][peer] = peers->count[way][peer] * k * sizeof(double);
				rows += peers->count[way][peer];
			}
			if (peers->buffer[way] != NULL)
				pfree(peers->buffer[way]);
			peers->buffer[way] = powerrank_alloc_huge(peers->cxt,
													  Max(rows * k, 1) * sizeof(double));
		}
		peers->k = k;
	}
	{
		double	   *at = peers->buffer[out];

		for (int peer = 0; peer < peers->size; peer++)
		{
			const int32 *rows = peers->rows[out][peer];

			for (int64 i = 0; i < peers->count[out][peer]; i++, at += k)
				memcpy(at, values + (int64) rows[i] * k, k * sizeof(double));
		}
	}
	status = peer_group_exchange(peers->group, peers->buffer[out], peers->bytes[out],
								 peers->buffer[in], peers->bytes[in],
								 peer_interrupted, error, sizeof(error));
	if (status != PEER_OK)
	{
		close_session_peers();
		CHECK_FOR_INTERRUPTS();
		ereport(ERROR,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("the exchange of vectors with the other shards failed: %s",
						status == PEER_INTERRUPTED ? "interrupted" : error),
				 errhint("SET powerrank.distributed_exchange = relay on the coordinator makes the vectors go through it.")));
	}
	{
		const double *at = peers->buffer[in];
		/* the peers' partial sums of each exported row, added up first (state->y: scratch) */
		double	   *sum = partial_sums ? state->y : values;
		const int32 *exported = state->owned_rows[SHARD_ROWS_EXPORTED];

		for (int64 i = 0; partial_sums && i < state->owned_count[SHARD_ROWS_EXPORTED]; i++)
			memset(sum + (int64) state->engine_row[exported[i]] * k, 0, k * sizeof(double));
		for (int peer = 0; peer < peers->size; peer++)
		{
			const int32 *rows = peers->rows[in][peer];

			for (int64 i = 0; i < peers->count[in][peer]; i++, at += k)
				if (!partial_sums)
					memcpy(sum + (int64) rows[i] * k, at, k * sizeof(double));
				else
					for (int j = 0; j < k; j++)
						sum[(int64) rows[i] * k + j] += at[j];
		}
		for (int64 i = 0; partial_sums && i < state->owned_count[SHARD_ROWS_EXPORTED]; i++)
		{
			int64		row = (int64) state->engine_row[exported[i]] * k;

			for (int j = 0; j < k; j++)
				values[row + j] += sum[row + j];
		}
	}
}
