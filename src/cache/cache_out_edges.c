/*
 * cache_out_edges.c — the out-edges of a cached graph, kept with its cache entry as a layout
 * (GRAPH_CACHE_LAYOUT_OUT_EDGES) for HITS, which needs them beside the in-edges the entry holds.
 *
 * The first HITS call on an entry that finds no such layout writes the out-edges
 * (pr_graph_write_out_edges) into a new segment and offers it to the entry; every later HITS call
 * on the entry, in any session, maps it read-only and ranks with it in place.  A delta entry's
 * graph is made whole per call (graph_cache_materialize: the same arrays every time), and its
 * out-edges are kept with the delta entry itself.  Keeping is an optimisation: a segment the
 * cache does not take (no room, another session's kept first) serves the call that wrote it and
 * goes with its mapping; a failure to write one (no segment left, no shared memory) leaves a
 * DEBUG1 line and the caller builds the out-edges in its own memory.
 */
#include "cache/graph_cache.h"

/*
 * What an out-edges segment holds: this header, then the graph's out_ptr (n_nodes + 1 int64),
 * out_dst (n_edges int32) and, weighted, out_weight (n_edges double), each from an 8-byte
 * boundary on (out_edges_places).
 */
typedef struct OutEdgesHeader
{
	uint64		magic;
	int64		n_nodes;
	int64		n_edges;
	bool		weighted;
} OutEdgesHeader;

#define OUT_EDGES_MAGIC UINT64CONST(0x50524f5554454431) /* "PROUTED1" */

/* Where the arrays of an out-edges segment start, and its size. */
typedef struct OutEdgesPlaces
{
	Size		ptr;
	Size		dst;
	Size		weight;
	Size		total;
} OutEdgesPlaces;

/* Lays out the out-edge arrays of graph g in a segment. */
static void
out_edges_places(const PrGraph *g, OutEdgesPlaces *at)
{
	at->ptr = MAXALIGN(sizeof(OutEdgesHeader));
	at->dst = at->ptr + (Size) (g->n_nodes + 1) * sizeof(int64);
	at->weight = at->dst + TYPEALIGN(sizeof(int64), (Size) g->n_edges * sizeof(int32));
	at->total = at->weight + (g->weighted ? (Size) g->n_edges * sizeof(double) : 0);
}

/* True when a mapped out-edges segment is of graph g (its header, its size). */
static bool
out_edges_fit(dsm_segment *segment, const PrGraph *g)
{
	const OutEdgesHeader *header = (const OutEdgesHeader *) dsm_segment_address(segment);
	OutEdgesPlaces at;

	out_edges_places(g, &at);
	return dsm_segment_map_length(segment) >= at.total && header->magic == OUT_EDGES_MAGIC &&
		header->n_nodes == g->n_nodes && header->n_edges == g->n_edges &&
		header->weighted == g->weighted;
}

/* Points g's out-edge arrays into an out-edges segment of g. */
static void
out_edges_view(dsm_segment *segment, PrGraph *g)
{
	char	   *base = dsm_segment_address(segment);
	OutEdgesPlaces at;

	out_edges_places(g, &at);
	g->out_ptr = (int64_t *) (base + at.ptr);
	g->out_dst = (int32_t *) (base + at.dst);
	g->out_weight = g->weighted ? (double *) (base + at.weight) : NULL;
	g->has_out_edges = true;
}

/* What make_out_edges_step writes, and what it made. */
typedef struct OutEdgesStep
{
	const PrGraph *graph;
	uint64		entry_id;
	const PrAllocator *alloc;
	dsm_segment *segment;		/* out: the segment written (NULL: no segment left) */
	bool		kept;			/* out: kept with the entry */
} OutEdgesStep;

/*
 * powerrank_try_in_subtransaction's step: writes the graph's out-edges into a new segment and
 * offers it to the entry; its mapping is kept past the subtransaction's commit (which would
 * detach it) until graph_cache_out_edges hands it to the statement's resource owner.  An ERROR
 * before then destroys the segment, not pinned yet.
 */
static void
make_out_edges_step(void *arg)
{
	OutEdgesStep *step = (OutEdgesStep *) arg;
	const PrGraph *g = step->graph;
	OutEdgesPlaces at;
	OutEdgesHeader *header;
	dsm_segment *segment;
	char	   *base;
	PrError		err = {0};

	out_edges_places(g, &at);
	segment = dsm_create(at.total, DSM_CREATE_NULL_IF_MAXSEGMENTS);
	if (segment == NULL)
		return;
	graph_cache_prefault(segment);
	base = dsm_segment_address(segment);
	header = (OutEdgesHeader *) base;
	memset(header, 0, at.ptr);
	header->magic = OUT_EDGES_MAGIC;
	header->n_nodes = g->n_nodes;
	header->n_edges = g->n_edges;
	header->weighted = g->weighted;
	if (pr_graph_write_out_edges(g, powerrank_thread_count(), step->alloc,
								 (int64_t *) (base + at.ptr), (int32_t *) (base + at.dst),
								 g->weighted ? (double *) (base + at.weight) : NULL,
								 &err) != PR_OK)
		powerrank_report_core_error("graph build", &err);
	step->kept = graph_cache_keep_layout(step->entry_id, GRAPH_CACHE_LAYOUT_OUT_EDGES, segment);
	dsm_pin_mapping(segment);
	step->segment = segment;
}

/*
 * Gives graph — the graph of cache entry entry_id, without out-edges (a delta entry's made whole)
 * — its out-edges in a segment: the entry's kept ones, mapped read-only, or written now and
 * offered to the entry (scratch from alloc).  *mapping is the segment, for the caller to detach
 * (graph_cache_release) once it is done with the graph.  False, graph unchanged, when no segment
 * could be had: the caller builds the out-edges in its own memory.
 */
bool
graph_cache_out_edges(uint64 entry_id, PrGraph *graph, const PrAllocator *alloc,
					  dsm_segment **mapping)
{
	OutEdgesStep step = {graph, entry_id, alloc, NULL, false};
	dsm_segment *segment;
	char		message[256];

	segment = graph_cache_map_layout(entry_id, GRAPH_CACHE_LAYOUT_OUT_EDGES);
	if (segment != NULL && !out_edges_fit(segment, graph))
	{
		dsm_detach(segment);
		segment = NULL;
	}
	if (segment != NULL)
	{
		ereport(DEBUG1,
				(errmsg_internal("powerrank: out-edges of the cached graph mapped"),
				 errdetail_internal("Cache entry %llu.", (unsigned long long) entry_id)));
		out_edges_view(segment, graph);
		*mapping = segment;
		return true;
	}
	if (!powerrank_try_in_subtransaction(make_out_edges_step, &step, message, sizeof(message)))
	{
		elog(DEBUG1, "powerrank: out-edges not kept with the cached graph: %s", message);
		return false;
	}
	if (step.segment == NULL)
	{
		elog(DEBUG1, "powerrank: out-edges not kept with the cached graph: no shared segment left");
		return false;
	}
	dsm_unpin_mapping(step.segment);	/* detached by an ERROR from here on */
	ereport(DEBUG1,
			(errmsg_internal("powerrank: out-edges of the cached graph built, %s",
							 step.kept ? "kept with it" : "not kept with it"),
			 errdetail_internal("Cache entry %llu.", (unsigned long long) entry_id)));
	out_edges_view(step.segment, graph);
	*mapping = step.segment;
	return true;
}
