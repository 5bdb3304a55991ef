/*
 * pr_graph.h — the graph the ranking algorithms run on, built from an edge list.
 *
 * Nodes are the distinct endpoints of the edge list, renumbered 0..n-1 in ascending order of their
 * external (bigint) id.  Edges are kept as given: duplicate (src, dst) rows are parallel edges whose
 * weights add up (an unweighted row has weight 1), self-loops are kept.  An undirected build adds
 * both directions of every row (a self-loop once).
 *
 * The in-edge arrays (CSR of Aᵀ, grouped by destination) drive the "pull" product of PageRank; the
 * out-edge arrays (CSR of A, grouped by source) are built when asked for (HITS needs both).
 * Within a row, neighbours are sorted ascending, so every build of the same edge multiset gives
 * the same arrays (results are deterministic).
 */
#ifndef PR_GRAPH_H
#define PR_GRAPH_H

#include "pr_common.h"

#include <float.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Largest node count the 32-bit internal ids allow. */
#define PR_MAX_NODES ((int64_t) INT32_MAX)

/*
 * Every node's out-weight sum and in-weight sum in a stored graph is below 2^PR_STRENGTH_LIMIT_EXP
 * (about 1.1e307) and every positive weight is a normal double: the build scales all weights by
 * one power of two when the given ones would sum past 2^(PR_STRENGTH_LIMIT_EXP - 1) or a positive
 * one is subnormal, so no sum, product, reciprocal or normalisation of PageRank, RWR or HITS
 * overflows.  One common factor changes no ranking.
 */
#define PR_STRENGTH_LIMIT_EXP 1020

/* True for a positive weight below the normal range: one a stored graph never holds (above). */
static inline bool
pr_weight_subnormal(double w)
{
	return w > 0.0 && w < DBL_MIN;
}

/* A graph over dense internal ids; arrays belong to whoever built (or mapped) it. */
typedef struct PrGraph
{
	int64_t		n_nodes;
	int64_t		n_edges;		/* stored edges (rows, doubled for an undirected build) */
	bool		weighted;		/* in_weight / out_weight present */
	bool		has_out_edges;	/* out_ptr / out_dst / out_weight present */

	int64_t    *node_ids;		/* [n] external id of each internal node, strictly ascending */

	int64_t    *in_ptr;			/* [n+1] row pointers of in-edges */
	int32_t    *in_src;			/* [m] source of each in-edge, ascending within a row */
	double	   *in_weight;		/* [m] weight of each in-edge (>= 0, finite; see
								 * PR_STRENGTH_LIMIT_EXP), or NULL (all 1) */

	int64_t    *out_ptr;		/* [n+1] row pointers of out-edges, or NULL */
	int32_t    *out_dst;		/* [m] destination of each out-edge, ascending within a row */
	double	   *out_weight;		/* [m] or NULL */

	double	   *out_strength;	/* [n] sum of out-edge weights (out-degree when unweighted),
								 * added in out-row order */
	int64_t		n_dangling;		/* nodes whose out_strength is 0 */
	int32_t    *dangling;		/* [n_dangling] those nodes, ascending */
} PrGraph;

/*
 * True when a and b have the same counts and the same arrays (the addresses, not the contents):
 * how an engine's prepare tells that it sees the graph it holds again (PrEngineOps.prepare).
 */
static inline bool
pr_graph_same_arrays(const PrGraph *a, const PrGraph *b)
{
	return a->n_nodes == b->n_nodes && a->n_edges == b->n_edges && a->weighted == b->weighted &&
		a->has_out_edges == b->has_out_edges && a->in_ptr == b->in_ptr &&
		a->in_src == b->in_src && a->in_weight == b->in_weight && a->out_ptr == b->out_ptr &&
		a->out_dst == b->out_dst && a->out_weight == b->out_weight &&
		a->out_strength == b->out_strength && a->n_dangling == b->n_dangling &&
		a->dangling == b->dangling;
}

/* Seconds a build spent in each step (summed over the counting sorts), for diagnostics. */
typedef struct PrBuildTimes
{
	double		ids;			/* id map and endpoint ranks */
	double		count;			/* counting sorts: per-chunk histograms */
	double		offsets;		/* counting sorts: the serial prefix sums */
	double		scatter;		/* counting sorts: placing the entries */
	double		other;			/* allocation, out-strengths, dangling list */
} PrBuildTimes;

/* How to build. */
typedef struct PrBuildOptions
{
	bool		undirected;		/* add dst->src for every src->dst row */
	bool		out_edges;		/* also build out_ptr/out_dst/out_weight */
	int			n_threads;		/* worker threads for sorting (<= 0: 1) */
	PrBuildTimes *times;		/* when not NULL: filled with the steps' seconds */
	/*
	 * Polled by the calling thread between the build's steps (as PrIterOptions.should_stop between
	 * iterations); returning true stops the build with PR_ERR_INTERRUPTED.  NULL: never stops.
	 */
	bool		(*should_stop) (void *arg);
	void	   *stop_arg;
} PrBuildOptions;

/*
 * Builds g from m rows (src[i], dst[i], weight[i]); weight may be NULL.  Weights must be finite
 * and >= 0 (PR_ERR_INVALID otherwise, with the offending row in the message).  Weights whose sums
 * would reach 2^(PR_STRENGTH_LIMIT_EXP - 1), or of which a positive one is subnormal, are all
 * scaled by one power of two; PR_ERR_INVALID when no factor keeps both every sum below that and
 * every positive weight in the normal range.  PR_ERR_INTERRUPTED when
 * options->should_stop asked to stop.  On failure g is left empty and nothing stays allocated.
 */
PrStatus	pr_graph_build(const int64_t *src, const int64_t *dst, const double *weight, size_t m,
						   const PrBuildOptions *options, const PrAllocator *alloc,
						   PrGraph *g, PrError *err);

/*
 * Builds the out-edge arrays of a graph that lacks them, on n_threads threads (the same arrays
 * whatever their number).
 */
PrStatus	pr_graph_add_out_edges(PrGraph *g, int n_threads, const PrAllocator *alloc,
								   PrError *err);

/*
 * Writes the out-edge arrays of g (its in-edges transposed, each row ascending: what
 * pr_graph_add_out_edges builds) into out_ptr [n+1], out_dst [m] and, weighted, out_weight [m],
 * arrays the caller placed (a shared segment); n_threads threads, scratch from alloc.
 */
PrStatus	pr_graph_write_out_edges(const PrGraph *g, int n_threads, const PrAllocator *alloc,
									 int64_t *out_ptr, int32_t *out_dst, double *out_weight,
									 PrError *err);

/*
 * g with its nodes renumbered into out: node i of out is node new_to_old[i] of g (old_to_new the
 * inverse).  The rows come in the new order, each keeping its edges in g's order with their other
 * ends renumbered (so a product sums every row as over g, bit for bit, though a row's neighbours
 * need not ascend); the out-strengths and the dangling list (ascending) follow the nodes; the
 * out-edge arrays too when g has them; no node ids.  Without sources, out has the in-edges' row
 * pointers only (in_src and in_weight NULL: for an engine that reads its in-edges elsewhere,
 * pr_cpu_reads_in_edges).  out's arrays are its own (pr_graph_free); on failure out is left
 * empty.
 */
PrStatus	pr_graph_renumber(const PrGraph *g, const int32_t *new_to_old, const int32_t *old_to_new,
							  bool sources, const PrAllocator *alloc, PrGraph *out, PrError *err);

/* g's in-edge row pointers renumbered as pr_graph_renumber renumbers them, into in_ptr[n_nodes + 1]. */
void		pr_graph_renumber_row_pointers(const PrGraph *g, const int32_t *new_to_old,
										   int64_t *in_ptr);

/*
 * g (without out-edges) renumbered as pr_graph_renumber without sources renumbers it, over in-edge
 * row pointers renumbered before (pr_graph_renumber_row_pointers; memory the caller keeps while
 * out serves, a shared segment say): out's in_ptr is in_ptr, its out-strengths and dangling list
 * are its own (pr_graph_free once out's in_ptr is cleared); on failure out is left empty.
 */
PrStatus	pr_graph_renumber_over(const PrGraph *g, const int32_t *new_to_old,
								   const int64_t *in_ptr, const PrAllocator *alloc, PrGraph *out,
								   PrError *err);

/* Frees every array of a graph built by pr_graph_build (not of a mapped flat graph). */
void		pr_graph_free(PrGraph *g, const PrAllocator *alloc);

/* Internal id of an external node id, or -1 when the node is not in the graph (binary search). */
int64_t		pr_graph_find(const PrGraph *g, int64_t external_id);

/*
 * How two graphs of one table differ (pr_graph_change.c): a start vector for the newer graph
 * carried from scores over the older one.
 */

/* map[i] = to's internal id of from's node i, or -1 when to lacks that node (one merge). */
void		pr_graph_node_map(const PrGraph *from, const PrGraph *to, int32_t *map);

/*
 * Stored edges in one graph and not in the other (multisets of (source, destination, weight) by
 * external ids), map = pr_graph_node_map(older, newer); once past limit the count stops and the
 * result is some number > limit.  -1 when its scratch cannot be allocated.  Up to n_threads
 * threads.
 */
int64_t		pr_graph_changed_edges(const PrGraph *older, const PrGraph *newer, const int32_t *map,
								   int64_t limit, int n_threads, const PrAllocator *alloc);

/*
 * start (n of to) = from's scores on the nodes both have, 1/n of to on the nodes only to has,
 * scaled to sum 1; map = pr_graph_node_map(from, to), or NULL when to numbers from's nodes the same
 * (a patch that moved no id).  False when a score is outside [0, 1] or
 * the vector sums to 0.
 */
bool		pr_graph_carry_scores(const PrGraph *from, const double *scores, const int32_t *map,
								  const PrGraph *to, double *start);

/*
 * A graph patched with changed rows (pr_graph_delta.c): the graph pr_graph_build gives for the
 * base's rows plus inserted and minus deleted ones, made from the base's in-CSR.
 */

/* One changed row: count > 0 inserts that many copies, count < 0 deletes that many. */
typedef struct PrEdgeChange
{
	int64_t		src;
	int64_t		dst;
	double		weight;			/* 1 for an unweighted graph */
	int64_t		count;
} PrEdgeChange;

/* Orders changes by destination, source, weight: -1, 0 or 1. */
static inline int
pr_edge_change_order(const PrEdgeChange *x, const PrEdgeChange *y)
{
	if (x->dst != y->dst)
		return x->dst < y->dst ? -1 : 1;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	if (x->weight != y->weight)
		return x->weight < y->weight ? -1 : 1;
	return 0;
}

/*
 * Bounds on a weighted graph's weights: largest >= every weight, 0 < smallest_positive <= every
 * positive weight (0: no positive weight).  Exact for a graph just scanned
 * (pr_graph_weight_range); a patch carries bounds forward without a scan (a deleted weight may have
 * been the extreme one), which only makes its scaling check stricter.
 */
typedef struct PrWeightRange
{
	double		largest;
	double		smallest_positive;
} PrWeightRange;

/* The exact weight range of a weighted graph's in-edges (largest 1 and smallest 1 unweighted). */
void		pr_graph_weight_range(const PrGraph *g, PrWeightRange *range);

/*
 * A patch planned by pr_graph_patch_plan: the patched graph's shape, how much changed, and what
 * pr_graph_patch_write needs (the fields after range are its own).
 */
typedef struct PrGraphPatch
{
	/*
	 * The patched graph's counts and flags (no arrays; no out-edges): n_dangling is an upper bound
	 * (n_nodes) until pr_graph_patch_write sets the count, so that a flat graph placed for this
	 * shape has room for the dangling list (the flat form's last array).
	 */
	PrGraph		shape;
	int64_t		changed_edges;	/* stored edges in one graph and not in the other (multisets of
								 * source, destination, weight), exactly, without the pass over
								 * both graphs of pr_graph_changed_edges (whose merge may count
								 * parallel edges of other weights twice) */
	PrWeightRange range;		/* bounds on the patched graph's weights (weighted only) */

	const PrGraph *base;
	const PrAllocator *alloc;
	int			n_threads;		/* of the plan's passes over the base's edges */
	PrEdgeChange *net;		/* the changes, netted and sorted by (dst, src, weight) */
	size_t		n_net;
	int32_t    *net_src;		/* [n_net] new internal id of each change's source */
	int32_t    *net_src_pos;	/* [n_net] its place among the base's node ids (lower bound) */
	int64_t    *fresh;			/* ids new to the graph, ascending */
	int64_t		n_fresh;
	int32_t    *map;			/* base node -> new node (-1: gone), or NULL: the same ids */
	int32_t    *sources;		/* new ids of the changes' sources that stay, ascending, distinct */
	int64_t		n_sources;
	uint8_t    *source_flags;	/* weighted: n_nodes bits of scratch for the write */
	struct PrPatchRun *runs;	/* scratch of the write: the runs of base edges it copies */
	int64_t		max_runs;
} PrGraphPatch;

/*
 * Plans the graph pr_graph_build would give for the base's rows plus inserted and minus deleted
 * ones (changes taken in both directions when undirected, a self-loop once): checks that the
 * patch can be proved equal to a build and fills patch (its scratch from alloc; free it with
 * pr_graph_patch_free).  base_range bounds the base's weights (NULL: scanned).  Its passes over
 * the base's edges (a weighted graph's out-degrees of nodes that may go) run on up to n_threads
 * threads.  PR_ERR_INVALID,
 * nothing allocated, when it cannot be proved equal: a deleted edge the base lacks, weights the
 * build scales or would scale (see scale_weights in pr_graph.c: a largest weight times the edges
 * near 2^(PR_STRENGTH_LIMIT_EXP - 1) or a positive weight near the subnormal range), no edge left.
 */
PrStatus	pr_graph_patch_plan(const PrGraph *base, const PrWeightRange *base_range,
								const PrEdgeChange *changes, size_t n_changes,
								bool undirected, int n_threads, const PrAllocator *alloc,
								PrGraphPatch *patch, PrError *err);

/*
 * Writes the planned graph into out, whose arrays the caller placed for patch->shape (node_ids,
 * in_ptr, in_src, in_weight when weighted, out_strength, and room for shape.n_dangling dangling
 * nodes; pr_graph_flat_place does that in a flat buffer); sets out's counts, n_dangling included.
 * The arrays equal pr_graph_build's of the patched rows bit for bit, whatever n_threads (the
 * threads that copy the unchanged rows).  Reads the base; cannot fail.
 */
void		pr_graph_patch_write(const PrGraphPatch *patch, PrGraph *out, int n_threads);

/* Frees a plan's scratch. */
void		pr_graph_patch_free(PrGraphPatch *patch);

/*
 * A graph delta: graph X described as graph B plus netted changes, in B's internal ids: what an
 * engine prepared on B needs to serve X (PrEngineOps.apply_delta).  X's nodes are B's nodes but
 * the absent ones (nodes left without any edge: X lacks them; no node is new); the delta keeps B's
 * numbering, and whoever maps results to X leaves the absent nodes out.  A weight change of an
 * edge is one change deleting the old weight and one inserting the new; an edge's term in a
 * product is count * weight * (its source's value).
 */
typedef struct PrGraphDelta
{
	int64_t		n_nodes;		/* B's node count (X's too) */
	PrEdgeChange *edges;		/* [n_edges] netted changes in internal ids, sorted by (dst, src,
								 * weight), no two equal (dst, src, weight), no count 0 */
	int64_t		n_edges;
	int32_t    *sources;		/* [n_sources] nodes whose out-strength in X may differ from B's,
								 * ascending, distinct (a superset of the changes' sources) */
	double	   *out_strength;	/* [n_sources] X's out-strength of each (0: dangling in X) */
	int64_t		n_sources;
	int64_t    *out_degree;		/* [n_sources] X's out-degree of each (stored edges with that
								 * source; 0: none, so its out-strength is 0), or NULL where no
								 * one asked for it (an engine never reads it) */
	int32_t    *absent;			/* [n_absent] B's nodes that are not X's (no edge in X: no
								 * restart mass, no score), ascending, distinct */
	int64_t		n_absent;
} PrGraphDelta;

/* out[v] = stored edges with source v, for every node of g (pr_graph_root_facts). */
void		pr_graph_out_degrees(const PrGraph *g, int n_threads, int64_t *out);

/*
 * What extending a weighted root's deltas needs: out[v] = stored edges with source v, for every
 * node of g, and g's exact weight range into range (may be NULL; pr_graph_weight_range's), in one
 * pass over the in-edges split evenly over up to n_threads threads.  Each thread counts its edges'
 * sources into a row of its own (int32, from alloc), the rows then added by ranges of nodes —
 * while the rows take no more memory than the in-sources; otherwise, or when alloc has none, each
 * thread counts its range of sources over every in-edge.  Integer counts: the same for any split.
 * The out-rows' lengths when g has them; an unweighted graph's out-strengths.
 */
void		pr_graph_root_facts(const PrGraph *g, int n_threads, const PrAllocator *alloc,
								int64_t *out, PrWeightRange *range);

/*
 * A source whose out-strength an extend finds below PR_DELTA_RECOUNT_FRACTION of the magnitudes
 * it added (its old out-strength plus every |count * weight| of its changes) while it keeps an
 * out-edge is summed again exactly, in the build's order, from root's edges (a cancellation: the
 * incremental sum's rounding could be most of what is left).
 */
#define PR_DELTA_RECOUNT_FRACTION (1.0 / 1024.0)

/*
 * root -> X2 from root -> X1 (old; an empty delta, all counts 0, for X1 = root) and the rows
 * changed since X1 (changes, external ids, taken in both directions when undirected as
 * pr_graph_patch_plan does, a self-loop once; a weight change is a deletion of the old weight
 * and an insert of the new): netted, merged into old's edges, in time of the order of the
 * changes times the logarithm of old's and root's sizes (binary searches in old's arrays and
 * root's in-rows) plus straight copies of old's arrays between the changes' places (on up to
 * n_threads threads; old's edges read once more, while cached, for their count and largest
 * weight): only the changes' sources and endpoints are looked at one by one, and no pass over
 * root's edges is made but the exact recount of a cancelling source (PR_DELTA_RECOUNT_FRACTION).
 * A source of old's that no change touches keeps old's out-degree and out-strength.  X2's
 * out-degree of each changed source is X1's plus its changes' counts; its out-strength X1's plus
 * their count * weight (exact unweighted; within rounding weighted), exactly 0 when its
 * out-degree is 0.  X2's absent nodes are the nodes without an in-edge or out-edge among old's
 * absent ones and the changes' endpoints.  root_out_degree: pr_graph_out_degrees(root) for a
 * weighted root, NULL for an unweighted one (its out_strength counts); root_range bounds root's
 * weights (NULL: scanned, as pr_graph_patch_plan does).  PR_ERR_UNSUPPORTED when a change names
 * a node root lacks; PR_ERR_INVALID when X1 lacks an edge a change deletes, when the build would
 * scale X2's weights or root's (pr_graph_patch_plan's checks: the caller builds X2 anew), when
 * X2 has no edge, or when old (with sources) has no out-degrees; nothing allocated on failure.
 * changed_edges (may be NULL): stored edges in X1 and not X2 or the reverse (multisets), as
 * PrGraphPatch.changed_edges.
 */
PrStatus	pr_graph_delta_extend(const PrGraph *root, const int64_t *root_out_degree,
								  const PrWeightRange *root_range, const PrGraphDelta *old,
								  const PrEdgeChange *changes, size_t n_changes, bool undirected,
								  int n_threads, const PrAllocator *alloc, PrGraphDelta *out,
								  int64_t *changed_edges, PrError *err);

/*
 * Bytes of a flat buffer that holds any X2 that pr_graph_delta_extend_flat makes from old and
 * n_changes changed rows (its counts at most old's plus the changes', both directions when
 * undirected).
 */
size_t		pr_graph_delta_extend_size(const PrGraphDelta *old, size_t n_changes, bool undirected);

/*
 * pr_graph_delta_extend writing X2 straight into flat (8-byte aligned, flat_size at least
 * pr_graph_delta_extend_size bytes) in the flat form (pr_graph_delta_write_flat's, its header's
 * size X2's own), every array written at its place; out views it (pr_graph_delta_view_flat:
 * nothing to free).  PR_ERR_INVALID also for a buffer too small or misaligned.
 */
PrStatus	pr_graph_delta_extend_flat(const PrGraph *root, const int64_t *root_out_degree,
									   const PrWeightRange *root_range, const PrGraphDelta *old,
									   const PrEdgeChange *changes, size_t n_changes,
									   bool undirected, int n_threads, const PrAllocator *alloc,
									   void *flat, size_t flat_size, PrGraphDelta *out,
									   int64_t *changed_edges, PrError *err);

/*
 * The flat form of a delta: one contiguous, position-independent buffer (a header with a magic
 * number and version, then each array at an 8-byte-aligned offset), for a cache segment.
 */

/* Bytes pr_graph_delta_write_flat needs for delta. */
size_t		pr_graph_delta_flat_size(const PrGraphDelta *delta);

/*
 * Writes delta into buf (pr_graph_delta_flat_size bytes, 8-byte aligned); delta's edges may
 * already lie at their place (pr_graph_delta_flat_edges).
 */
void		pr_graph_delta_write_flat(const PrGraphDelta *delta, void *buf);

/* Where a flat delta in buf holds its edges (the same place for any counts). */
PrEdgeChange *pr_graph_delta_flat_edges(void *buf);

/*
 * Points out's arrays where pr_graph_delta_write_flat puts them in buf for n_edges edges and
 * n_sources sources with out-degrees (the absent nodes' place for any count), so that a maker can
 * write them in place; sets no count.
 */
void		pr_graph_delta_flat_place(void *buf, int64_t n_edges, int64_t n_sources,
									  PrGraphDelta *out);

/*
 * Points view's arrays into buf (no copy) after checking its header and that its layout is the
 * one pr_graph_delta_write_flat gives for its counts (O(1)); pr_graph_delta_check checks the
 * contents.  PR_ERR_INVALID for a corrupt buffer; buf must be 8-byte aligned.
 */
PrStatus	pr_graph_delta_view_flat(const void *buf, size_t size, PrGraphDelta *view,
									 PrError *err);

/*
 * X's rows as changes of root's rows in external ids (out[delta->n_edges], stored edges, sorted
 * by (dst, src, weight)): pr_graph_patch_plan(root, ..., undirected false) and
 * pr_graph_patch_write give X as a flat graph (materialized).
 */
void		pr_graph_delta_changes(const PrGraph *root, const PrGraphDelta *delta, PrEdgeChange *out);

/* Whether node v (root id) is absent in X (binary search of delta->absent). */
bool		pr_graph_delta_absent(const PrGraphDelta *delta, int32_t v);

/*
 * Allocates a delta's arrays (zero counts) for n_edges edges, n_sources sources (out-strengths
 * and out-degrees) and n_absent absent nodes; false when out of memory (nothing allocated).
 */
bool		pr_graph_delta_alloc(PrGraphDelta *delta, int64_t n_nodes, int64_t n_edges,
								 int64_t n_sources, int64_t n_absent, const PrAllocator *alloc);

/* A copy of delta in arrays from alloc (out-degrees NULL when delta has none); false when out of
 * memory (nothing allocated). */
bool		pr_graph_delta_copy(const PrGraphDelta *delta, const PrAllocator *alloc,
								PrGraphDelta *out);

/*
 * The delta B -> X2 of first (B -> X1) followed by second (X1 -> X2), all in B's numbering: the
 * edges merged in (dst, src, weight) order with their counts summed (zeros dropped), the sources
 * united with second's out-strengths and out-degrees where both have one, and second's absent
 * nodes (X2's; they replace first's), or first's when second changes nothing (no edge, no source:
 * X2 is X1, and merging with an empty delta copies first).  out's out_degree is NULL unless both
 * have theirs (or no source).  PR_ERR_INVALID when the node counts differ; arrays from alloc.
 */
PrStatus	pr_graph_delta_merge(const PrGraphDelta *first, const PrGraphDelta *second,
								 const PrAllocator *alloc, PrGraphDelta *out, PrError *err);

/*
 * The edges of delta to less those of delta from (both of one graph: sorted by (dst, src, weight),
 * netted) into out, which has room for n_to + n_from edges: each edge whose counts differ, with
 * to's count less from's (to's weight where both have it), in the same order; returns the count.
 * Merging from with them (pr_graph_delta_merge) gives to's edges; an engine serving from serves
 * to by adding them (the GPU engine's recent layer).
 */
int64_t		pr_graph_delta_edges_diff(const PrEdgeChange *to, int64_t n_to, const PrEdgeChange *from,
									  int64_t n_from, PrEdgeChange *out);

/*
 * Checks a delta against the graph it applies to (node count, ids in range, edges sorted and
 * netted, weights finite and >= 0, sources ascending, out-strengths finite and >= 0; out-degrees
 * when present >= 0, an out-strength 0 where one is 0, equal to it for an unweighted graph;
 * absent nodes ascending, distinct, in range, with out-strength 0 in X), as an engine does before
 * it takes one from another process: PR_ERR_INVALID with what is wrong.
 */
PrStatus	pr_graph_delta_check(const PrGraphDelta *delta, const PrGraph *base, PrError *err);

/*
 * X's dangling list (ascending) into out, which has room for base->n_dangling + delta->n_sources
 * ids: B's dangling nodes that are no delta source, and the sources whose X out-strength is 0.
 * Returns the count.
 */
int64_t		pr_graph_delta_dangling(const PrGraph *base, const PrGraphDelta *delta, int32_t *out);

/*
 * The delta's edges in (src, dst, weight) order into out[delta->n_edges]: the order in which the
 * push product (y[src] += count * weight * x[dst]) adds them.
 */
void		pr_graph_delta_by_source(const PrGraphDelta *delta, PrEdgeChange *out);

/* Frees the arrays of a delta made by pr_graph_delta_alloc (and the functions above). */
void		pr_graph_delta_free(PrGraphDelta *delta, const PrAllocator *alloc);

/*
 * Flat form: the whole graph in one contiguous, position-independent buffer (a header, then every
 * array at an 8-byte-aligned offset).  Used for the rankgraph SQL type and shared memory.
 */

/* Bytes pr_graph_write_flat needs for g. */
size_t		pr_graph_flat_size(const PrGraph *g);

/* Writes g into buf (pr_graph_flat_size(g) bytes, 8-byte aligned). */
void		pr_graph_write_flat(const PrGraph *g, void *buf);

/* The same, large arrays copied by up to n_threads threads (the same bytes for any count). */
void		pr_graph_write_flat_threads(const PrGraph *g, void *buf, int n_threads);

/*
 * Points view's arrays into a flat buffer (no copy) after checking every invariant pr_graph_build
 * guarantees: header, the exact layout pr_graph_write_flat gives for the counts, ids strictly
 * ascending, row pointers, ids in range, in-edge rows sorted, weights finite, >= 0 and not
 * subnormal (pr_weight_subnormal), every node
 * with an edge, out_strength equal to each node's out-weight sum, every out- and in-weight sum
 * below 2^PR_STRENGTH_LIMIT_EXP, out-edges equal to the in-edges grouped by source, the dangling
 * list; PR_ERR_INVALID for a corrupt buffer (PR_ERR_NOMEM when its O(n) scratch cannot be
 * allocated).  buf must be 8-byte aligned.
 */
PrStatus	pr_graph_view_flat(const void *buf, size_t size, PrGraph *view, PrError *err);

/* Only the header, counts and offsets checked (O(1)): for a buffer this program wrote itself. */
PrStatus	pr_graph_view_flat_header(const void *buf, size_t size, PrGraph *view, PrError *err);

/*
 * The same checks in two streaming passes on up to n_threads threads, for a graph this program's
 * own processes built (the GPU service's build, the cache's segments): the out-strengths of an
 * unweighted graph without out-edge arrays are checked against the in-edges by a fingerprint (a
 * random polynomial evaluated on both sides, pr_graph_flat.c) that a wrong graph passes with a
 * probability below 2^-41, instead of being counted again.
 */
PrStatus	pr_graph_view_flat_threads(const void *buf, size_t size, int n_threads, PrGraph *view,
									   PrError *err);

/* Seconds pr_graph_view_flat_timed spent in each part of its checks. */
typedef struct PrFlatCheckTimes
{
	double		nodes;			/* header, layout and the node pass */
	double		edges;			/* the edge pass */
	double		rest;			/* weights, out-edges, the out-strengths' verdict, dangling list */
} PrFlatCheckTimes;

/* pr_graph_view_flat_threads, with the time each part of its checks took into times. */
PrStatus	pr_graph_view_flat_timed(const void *buf, size_t size, int n_threads, PrGraph *view,
									 PrFlatCheckTimes *times, PrError *err);

/*
 * Lays out a flat graph of g's shape (n_nodes, n_edges, n_dangling, weighted, has_out_edges; its
 * array pointers are ignored) in buf, which has pr_graph_flat_size(g) bytes: writes the header
 * and points g's arrays at their places, for a producer that fills them in place.  Returns the
 * size.
 */
size_t		pr_graph_flat_place(PrGraph *g, void *buf);

#ifdef __cplusplus
}
#endif

#endif							/* PR_GRAPH_H */
