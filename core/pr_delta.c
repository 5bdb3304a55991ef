/*
 * pr_delta.c — graph deltas (PrGraphDelta, pr_graph.h): graph X as a graph B plus netted edge
 * changes in B's numbering (B's nodes less the absent ones), as an engine prepared on B takes it
 * (PrEngineOps.apply_delta): two deltas merged, one's edges less another's, a delta checked
 * against B, X's dangling list, the push product's order of the edges, the flat form (a cache
 * segment), X's rows as changes of B's (to materialize X).  A delta is made, or extended, with
 * changed rows by pr_graph_delta_extend (pr_graph_delta.c).
 */
#include "pr_graph.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Frees the arrays of a delta made by pr_graph_delta_alloc (and the functions that use it). */
void
pr_graph_delta_free(PrGraphDelta *delta, const PrAllocator *alloc)
{
	pr_free(alloc, delta->edges);
	pr_free(alloc, delta->sources);
	pr_free(alloc, delta->out_strength);
	pr_free(alloc, delta->out_degree);
	pr_free(alloc, delta->absent);
	memset(delta, 0, sizeof(PrGraphDelta));
}

/*
 * Allocates a delta's arrays for n_edges edges, n_sources sources and n_absent absent nodes; false
 * when out of memory.
 */
bool
pr_graph_delta_alloc(PrGraphDelta *delta, int64_t n_nodes, int64_t n_edges, int64_t n_sources,
					 int64_t n_absent, const PrAllocator *alloc)
{
	memset(delta, 0, sizeof(PrGraphDelta));
	delta->n_nodes = n_nodes;
	delta->edges = (PrEdgeChange *) pr_alloc_array(alloc, (size_t) n_edges + 1, sizeof(PrEdgeChange));
	delta->sources = (int32_t *) pr_alloc_array(alloc, (size_t) n_sources + 1, sizeof(int32_t));
	delta->out_strength = (double *) pr_alloc_array(alloc, (size_t) n_sources + 1, sizeof(double));
	delta->out_degree = (int64_t *) pr_alloc_array(alloc, (size_t) n_sources + 1, sizeof(int64_t));
	delta->absent = (int32_t *) pr_alloc_array(alloc, (size_t) n_absent + 1, sizeof(int32_t));
	if (delta->edges == NULL || delta->sources == NULL || delta->out_strength == NULL ||
		delta->out_degree == NULL || delta->absent == NULL)
	{
		pr_graph_delta_free(delta, alloc);
		return false;
	}
	return true;
}

/* A copy of delta in arrays from alloc (out-degrees NULL when delta has none); false when out of
 * memory (nothing allocated). */
bool
pr_graph_delta_copy(const PrGraphDelta *delta, const PrAllocator *alloc, PrGraphDelta *out)
{
	if (!pr_graph_delta_alloc(out, delta->n_nodes, delta->n_edges, delta->n_sources,
							  delta->n_absent, alloc))
		return false;
	memcpy(out->edges, delta->edges, sizeof(PrEdgeChange) * (size_t) delta->n_edges);
	memcpy(out->sources, delta->sources, sizeof(int32_t) * (size_t) delta->n_sources);
	memcpy(out->out_strength, delta->out_strength, sizeof(double) * (size_t) delta->n_sources);
	if (delta->out_degree != NULL)
		memcpy(out->out_degree, delta->out_degree, sizeof(int64_t) * (size_t) delta->n_sources);
	else
	{
		pr_free(alloc, out->out_degree);
		out->out_degree = NULL;
	}
	memcpy(out->absent, delta->absent, sizeof(int32_t) * (size_t) delta->n_absent);
	out->n_edges = delta->n_edges;
	out->n_sources = delta->n_sources;
	out->n_absent = delta->n_absent;
	return true;
}

/*
 * B -> X2 of first (B -> X1) and second (X1 -> X2): edges merged with counts summed, sources
 * united with the newer out-strengths and out-degrees, X2's absent nodes.
 */
PrStatus
pr_graph_delta_merge(const PrGraphDelta *first, const PrGraphDelta *second,
					 const PrAllocator *alloc, PrGraphDelta *out, PrError *err)
{
	int64_t		a = 0,
				b = 0,
				kept = 0;
	bool		degrees = (first->n_sources == 0 || first->out_degree != NULL) &&
		(second->n_sources == 0 || second->out_degree != NULL);
	/* X2's absent nodes: second's, or X1's when second changes nothing (a copy of first) */
	const PrGraphDelta *absent = second->n_edges == 0 && second->n_sources == 0 ? first : second;

	memset(out, 0, sizeof(PrGraphDelta));
	if (first->n_nodes != second->n_nodes)
		return pr_error_set(err, PR_ERR_INVALID, "deltas of %lld and %lld nodes",
							(long long) first->n_nodes, (long long) second->n_nodes);
	if (!pr_graph_delta_alloc(out, first->n_nodes, first->n_edges + second->n_edges,
							  first->n_sources + second->n_sources, absent->n_absent, alloc))
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory merging deltas of %lld and %lld edges",
							(long long) first->n_edges, (long long) second->n_edges);
	while (a < first->n_edges || b < second->n_edges)
	{
		int			order = a == first->n_edges ? 1 : b == second->n_edges ? -1 :
			pr_edge_change_order(&first->edges[a], &second->edges[b]);
		PrEdgeChange next = order <= 0 ? first->edges[a++] : second->edges[b++];

		if (order == 0)
			next.count += second->edges[b++].count;
		if (next.count != 0)
			out->edges[kept++] = next;
	}
	out->n_edges = kept;
	a = b = kept = 0;
	while (a < first->n_sources || b < second->n_sources)
	{
		bool		from_first = b == second->n_sources ||
			(a < first->n_sources && first->sources[a] < second->sources[b]);
		const PrGraphDelta *from = from_first ? first : second;
		int64_t		at = from_first ? a++ : b++;

		/* second's out-strength is the newer graph's */
		if (!from_first && a < first->n_sources && first->sources[a] == second->sources[at])
			a++;
		out->sources[kept] = from->sources[at];
		out->out_strength[kept] = from->out_strength[at];
		if (degrees)
			out->out_degree[kept] = from->out_degree[at];
		kept++;
	}
	out->n_sources = kept;
	if (!degrees)
	{
		pr_free(alloc, out->out_degree);
		out->out_degree = NULL;
	}
	if (absent->n_absent > 0)
		memcpy(out->absent, absent->absent, sizeof(int32_t) * (size_t) absent->n_absent);
	out->n_absent = absent->n_absent;
	return PR_OK;
}

/* The edges of to less those of from (both of one graph, sorted and netted): the counts that differ. */
int64_t
pr_graph_delta_edges_diff(const PrEdgeChange *to, int64_t n_to, const PrEdgeChange *from,
						  int64_t n_from, PrEdgeChange *out)
{
	int64_t		a = 0,
				b = 0,
				kept = 0;

	while (a < n_to || b < n_from)
	{
		int			order = a == n_to ? 1 : b == n_from ? -1 :
			pr_edge_change_order(&to[a], &from[b]);
		PrEdgeChange next;

		if (order <= 0)
		{
			next = to[a++];
			if (order == 0)
				next.count -= from[b++].count;
		}
		else
		{
			next = from[b++];
			next.count = -next.count;
		}
		if (next.count != 0)
			out[kept++] = next;
	}
	return kept;
}

/* X's out-strength of node v: the delta's when v is one of its sources, else base's. */
static double
delta_out_strength(const PrGraph *base, const PrGraphDelta *delta, int32_t v)
{
	int64_t		at = pr_lower_bound_i32(delta->sources, 0, delta->n_sources, v);

	return at < delta->n_sources && delta->sources[at] == v ? delta->out_strength[at] :
		base->out_strength[v];
}

/* Checks a delta against the graph it applies to (pr_graph.h lists the checks). */
PrStatus
pr_graph_delta_check(const PrGraphDelta *delta, const PrGraph *base, PrError *err)
{
	int64_t		n = base->n_nodes;

	if (delta->n_nodes != n || delta->n_edges < 0 || delta->n_sources < 0 ||
		delta->n_sources > n || (delta->n_edges > 0 && delta->edges == NULL) ||
		(delta->n_sources > 0 && (delta->sources == NULL || delta->out_strength == NULL)))
		return pr_error_set(err, PR_ERR_INVALID, "a delta of %lld nodes for a graph of %lld",
							(long long) delta->n_nodes, (long long) n);
	for (int64_t i = 0; i < delta->n_edges; i++)
	{
		const PrEdgeChange *c = &delta->edges[i];

		if (c->src < 0 || c->src >= n || c->dst < 0 || c->dst >= n || c->count == 0 ||
			!isfinite(c->weight) || c->weight < 0.0 ||
			(i > 0 && pr_edge_change_order(&delta->edges[i - 1], c) >= 0))
			return pr_error_set(err, PR_ERR_INVALID, "delta edge %lld is out of range or order",
								(long long) i);
	}
	for (int64_t i = 0; i < delta->n_sources; i++)
		if (delta->sources[i] < 0 || delta->sources[i] >= n ||
			(i > 0 && delta->sources[i] <= delta->sources[i - 1]) ||
			!isfinite(delta->out_strength[i]) || delta->out_strength[i] < 0.0)
			return pr_error_set(err, PR_ERR_INVALID, "delta source %lld is out of range or order",
								(long long) i);
	for (int64_t i = 0; delta->out_degree != NULL && i < delta->n_sources; i++)
		if (delta->out_degree[i] < 0 ||
			(delta->out_degree[i] == 0 && delta->out_strength[i] != 0.0) ||
			(!base->weighted && delta->out_strength[i] != (double) delta->out_degree[i]))
			return pr_error_set(err, PR_ERR_INVALID,
								"delta source %lld has out-degree %lld and out-strength %g",
								(long long) i, (long long) delta->out_degree[i],
								delta->out_strength[i]);
	if (delta->n_absent < 0 || delta->n_absent > n || (delta->n_absent > 0 && delta->absent == NULL))
		return pr_error_set(err, PR_ERR_INVALID, "a delta with %lld absent nodes of %lld",
							(long long) delta->n_absent, (long long) n);
	for (int64_t i = 0; i < delta->n_absent; i++)
		if (delta->absent[i] < 0 || delta->absent[i] >= n ||
			(i > 0 && delta->absent[i] <= delta->absent[i - 1]) ||
			delta_out_strength(base, delta, delta->absent[i]) != 0.0)
			return pr_error_set(err, PR_ERR_INVALID,
								"delta absent node %lld is out of range or order, or has out-edges",
								(long long) i);
	return PR_OK;
}

/* X's dangling list: base's dangling nodes that are no source, and the sources with out-strength 0. */
int64_t
pr_graph_delta_dangling(const PrGraph *base, const PrGraphDelta *delta, int32_t *out)
{
	int64_t		a = 0,
				b = 0,
				count = 0;

	while (a < base->n_dangling || b < delta->n_sources)
	{
		if (b == delta->n_sources ||
			(a < base->n_dangling && base->dangling[a] < delta->sources[b]))
			out[count++] = base->dangling[a++];
		else
		{
			if (a < base->n_dangling && base->dangling[a] == delta->sources[b])
				a++;			/* the delta says what it is in X */
			if (delta->out_strength[b] == 0.0)
				out[count++] = delta->sources[b];
			b++;
		}
	}
	return count;
}

/* Orders changes by source, destination, weight. */
static int
source_order(const void *a, const void *b)
{
	const PrEdgeChange *x = (const PrEdgeChange *) a;
	const PrEdgeChange *y = (const PrEdgeChange *) b;

	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	return pr_edge_change_order(x, y);
}

/* The delta's edges in (src, dst, weight) order. */
void
pr_graph_delta_by_source(const PrGraphDelta *delta, PrEdgeChange *out)
{
	if (delta->n_edges == 0)
		return;
	memcpy(out, delta->edges, sizeof(PrEdgeChange) * (size_t) delta->n_edges);
	qsort(out, (size_t) delta->n_edges, sizeof(PrEdgeChange), source_order);
}

/*
 * The flat form: a DeltaFlatHeader, then each present array at an 8-byte-aligned offset from the
 * buffer's start (0: absent or empty), in DeltaFlatArray order.  Multi-byte fields are in host
 * byte order.
 */
#define DELTA_FLAT_MAGIC   UINT32_C(0x44475250)	/* "PRGD" read as a little-endian uint32 */
#define DELTA_FLAT_VERSION 1u
#define DELTA_FLAT_OUT_DEGREES (1u << 0)	/* flag: the out-degrees are stored */

/* The arrays of a flat delta, in storage order. */
typedef enum DeltaFlatArray
{
	DELTA_FLAT_EDGES = 0,
	DELTA_FLAT_SOURCES,
	DELTA_FLAT_OUT_STRENGTH,
	DELTA_FLAT_OUT_DEGREE,
	DELTA_FLAT_ABSENT,
	DELTA_FLAT_N_ARRAYS
} DeltaFlatArray;

/* Header at the start of a flat delta. */
typedef struct DeltaFlatHeader
{
	uint32_t	magic;
	uint32_t	version;
	uint64_t	total_size;		/* bytes, header included */
	int64_t		n_nodes;
	int64_t		n_edges;
	int64_t		n_sources;
	int64_t		n_absent;
	uint32_t	flags;			/* DELTA_FLAT_OUT_DEGREES */
	uint32_t	reserved;		/* 0 */
	uint64_t	offset[DELTA_FLAT_N_ARRAYS];
} DeltaFlatHeader;

/* Rounds up to a multiple of 8. */
static inline size_t
align8(size_t x)
{
	return (x + 7) & ~(size_t) 7;
}

/*
 * Byte counts of a flat delta's arrays (in bytes[]) and their offsets, from the counts in header
 * (and its flags); returns the total size.  starts (may be NULL): where each array begins, empty
 * or not (an empty array's offset is 0 and takes no room).
 */
static size_t
delta_flat_layout(const DeltaFlatHeader *h, size_t bytes[DELTA_FLAT_N_ARRAYS],
				  uint64_t offsets[DELTA_FLAT_N_ARRAYS], uint64_t *starts)
{
	size_t		pos = align8(sizeof(DeltaFlatHeader));

	bytes[DELTA_FLAT_EDGES] = (size_t) h->n_edges * sizeof(PrEdgeChange);
	bytes[DELTA_FLAT_SOURCES] = (size_t) h->n_sources * sizeof(int32_t);
	bytes[DELTA_FLAT_OUT_STRENGTH] = (size_t) h->n_sources * sizeof(double);
	bytes[DELTA_FLAT_OUT_DEGREE] = (h->flags & DELTA_FLAT_OUT_DEGREES) ?
		(size_t) h->n_sources * sizeof(int64_t) : 0;
	bytes[DELTA_FLAT_ABSENT] = (size_t) h->n_absent * sizeof(int32_t);
	for (int i = 0; i < DELTA_FLAT_N_ARRAYS; i++)
	{
		if (starts != NULL)
			starts[i] = pos;
		offsets[i] = bytes[i] > 0 ? pos : 0;
		pos += align8(bytes[i]);
	}
	return pos;
}

/* The header of delta's flat form (offsets and size included). */
static void
delta_flat_header(const PrGraphDelta *delta, DeltaFlatHeader *h, size_t bytes[DELTA_FLAT_N_ARRAYS])
{
	memset(h, 0, sizeof(DeltaFlatHeader));
	h->magic = DELTA_FLAT_MAGIC;
	h->version = DELTA_FLAT_VERSION;
	h->n_nodes = delta->n_nodes;
	h->n_edges = delta->n_edges;
	h->n_sources = delta->n_sources;
	h->n_absent = delta->n_absent;
	h->flags = delta->out_degree != NULL ? DELTA_FLAT_OUT_DEGREES : 0;
	h->total_size = delta_flat_layout(h, bytes, h->offset, NULL);
}

/* Bytes pr_graph_delta_write_flat needs for delta. */
size_t
pr_graph_delta_flat_size(const PrGraphDelta *delta)
{
	DeltaFlatHeader h;
	size_t		bytes[DELTA_FLAT_N_ARRAYS];

	delta_flat_header(delta, &h, bytes);
	return (size_t) h.total_size;
}

/* Writes delta into buf (8-byte aligned, pr_graph_delta_flat_size bytes), padding zeroed. */
void
pr_graph_delta_write_flat(const PrGraphDelta *delta, void *buf)
{
	DeltaFlatHeader h;
	size_t		bytes[DELTA_FLAT_N_ARRAYS];
	const void *arrays[DELTA_FLAT_N_ARRAYS] = {delta->edges, delta->sources, delta->out_strength,
	delta->out_degree, delta->absent};
	char	   *base = (char *) buf;

	delta_flat_header(delta, &h, bytes);
	memset(base, 0, align8(sizeof(h)));
	memcpy(base, &h, sizeof(h));
	for (int i = 0; i < DELTA_FLAT_N_ARRAYS; i++)
		if (h.offset[i] != 0)
		{
			if (base + h.offset[i] != (const char *) arrays[i])
				memcpy(base + h.offset[i], arrays[i], bytes[i]);
			memset(base + h.offset[i] + bytes[i], 0, align8(bytes[i]) - bytes[i]);
		}
}

/* Where a flat delta in buf holds its edges: right after the header, whatever the counts. */
PrEdgeChange *
pr_graph_delta_flat_edges(void *buf)
{
	return (PrEdgeChange *) ((char *) buf + align8(sizeof(DeltaFlatHeader)));
}

/*
 * Points out's arrays (edges, sources, out-strengths, out-degrees, absent nodes) where
 * pr_graph_delta_write_flat puts them in buf for n_edges edges and n_sources sources with their
 * out-degrees; the absent nodes' place depends on no later count.  Sets no count.
 */
void
pr_graph_delta_flat_place(void *buf, int64_t n_edges, int64_t n_sources, PrGraphDelta *out)
{
	DeltaFlatHeader h;
	size_t		bytes[DELTA_FLAT_N_ARRAYS];
	uint64_t	starts[DELTA_FLAT_N_ARRAYS];
	char	   *base = (char *) buf;

	memset(&h, 0, sizeof(h));
	h.n_edges = n_edges;
	h.n_sources = n_sources;
	h.flags = DELTA_FLAT_OUT_DEGREES;
	(void) delta_flat_layout(&h, bytes, h.offset, starts);
	out->edges = (PrEdgeChange *) (base + starts[DELTA_FLAT_EDGES]);
	out->sources = (int32_t *) (base + starts[DELTA_FLAT_SOURCES]);
	out->out_strength = (double *) (base + starts[DELTA_FLAT_OUT_STRENGTH]);
	out->out_degree = (int64_t *) (base + starts[DELTA_FLAT_OUT_DEGREE]);
	out->absent = (int32_t *) (base + starts[DELTA_FLAT_ABSENT]);
}

/* Points view into a flat delta after checking its header and layout. */
PrStatus
pr_graph_delta_view_flat(const void *buf, size_t size, PrGraphDelta *view, PrError *err)
{
	DeltaFlatHeader h,
				want;
	size_t		bytes[DELTA_FLAT_N_ARRAYS];
	const char *base = (const char *) buf;

	memset(view, 0, sizeof(PrGraphDelta));
	if (buf == NULL || ((uintptr_t) buf & 7) != 0)
		return pr_error_set(err, PR_ERR_INVALID, "delta buffer is missing or not 8-byte aligned");
	if (size < sizeof(DeltaFlatHeader))
		return pr_error_set(err, PR_ERR_INVALID, "delta buffer of %zu bytes is too short", size);
	memcpy(&h, buf, sizeof(h));
	if (h.magic != DELTA_FLAT_MAGIC || h.version != DELTA_FLAT_VERSION)
		return pr_error_set(err, PR_ERR_INVALID, "not a flat delta of version %u",
							DELTA_FLAT_VERSION);
	/* counts that fit the buffer (so that the layout's sizes cannot overflow) */
	if (h.n_nodes < 0 || h.n_nodes > PR_MAX_NODES || h.n_edges < 0 ||
		(uint64_t) h.n_edges > size / sizeof(PrEdgeChange) || h.n_sources < 0 ||
		h.n_sources > h.n_nodes || h.n_absent < 0 || h.n_absent > h.n_nodes ||
		(h.flags & ~DELTA_FLAT_OUT_DEGREES) != 0 || h.reserved != 0)
		return pr_error_set(err, PR_ERR_INVALID, "flat delta header with invalid counts or flags");
	want = h;
	want.total_size = delta_flat_layout(&want, bytes, want.offset, NULL);
	if (h.total_size != want.total_size || h.total_size > size ||
		memcmp(h.offset, want.offset, sizeof(h.offset)) != 0)
		return pr_error_set(err, PR_ERR_INVALID,
							"flat delta layout does not match its counts (%llu bytes in %zu)",
							(unsigned long long) h.total_size, size);
	view->n_nodes = h.n_nodes;
	view->n_edges = h.n_edges;
	view->n_sources = h.n_sources;
	view->n_absent = h.n_absent;
	view->edges = h.offset[DELTA_FLAT_EDGES] ?
		(PrEdgeChange *) (base + h.offset[DELTA_FLAT_EDGES]) : NULL;
	view->sources = h.offset[DELTA_FLAT_SOURCES] ?
		(int32_t *) (base + h.offset[DELTA_FLAT_SOURCES]) : NULL;
	view->out_strength = h.offset[DELTA_FLAT_OUT_STRENGTH] ?
		(double *) (base + h.offset[DELTA_FLAT_OUT_STRENGTH]) : NULL;
	view->out_degree = h.offset[DELTA_FLAT_OUT_DEGREE] ?
		(int64_t *) (base + h.offset[DELTA_FLAT_OUT_DEGREE]) : NULL;
	view->absent = h.offset[DELTA_FLAT_ABSENT] ?
		(int32_t *) (base + h.offset[DELTA_FLAT_ABSENT]) : NULL;
	return PR_OK;
}

/* X's rows as changes of root's rows in external ids (stored edges, (dst, src, weight) order). */
void
pr_graph_delta_changes(const PrGraph *root, const PrGraphDelta *delta, PrEdgeChange *out)
{
	for (int64_t i = 0; i < delta->n_edges; i++)
	{
		out[i] = delta->edges[i];
		out[i].src = root->node_ids[delta->edges[i].src];
		out[i].dst = root->node_ids[delta->edges[i].dst];
	}
}

/* Whether node v is absent in X. */
bool
pr_graph_delta_absent(const PrGraphDelta *delta, int32_t v)
{
	int64_t		at = pr_lower_bound_i32(delta->absent, 0, delta->n_absent, v);

	return at < delta->n_absent && delta->absent[at] == v;
}
