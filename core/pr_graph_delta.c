/*
 * pr_graph_delta.c — a graph patched with changed rows: the graph pr_graph_build would give for
 * the base graph's rows plus inserted rows minus deleted ones, made from the base's in-CSR without
 * the rows.
 *
 * Changes are rows with a signed count (+k: k copies inserted, -k: k copies deleted).  They are
 * sorted by (destination, source, weight) and netted; an undirected graph takes each row in both
 * directions (a self-loop once), as the build does.  The new node set is the base's, less the
 * nodes left without an edge, plus the new endpoints of inserted rows; both are in ascending id
 * order, so mapping an old internal id to a new one keeps every in-row sorted.
 *
 * The plan (pr_graph_patch_plan) does everything that may fail or refuse, in time and scratch of
 * the order of the changes (plus a node map when a node goes, or comes below the largest id): it
 * checks every deletion against its row of the base (binary searches), finds the nodes that go
 * (endpoints of deletions left without an edge) and the ones that come, and gives the patched
 * graph's shape, so that a caller can place its arrays where they will stay (a shared-memory
 * segment) before pr_graph_patch_write fills them.  The write copies the rows without a change in
 * runs (memcpy when no node id moves; the runs' edges split evenly over its threads), merges each
 * changed row with its changes in (source,
 * weight) order — the build's order (sources ascending, parallel edges by weight) — and takes the
 * out-strengths of the base for every source whose out-edges did not change: the build adds a
 * source's weights in (destination, weight) order, which the patch keeps, so the sum is the same
 * double.  Only the sources of changed rows are summed again (unweighted: the count, exactly;
 * weighted: one pass over the new in-edges adding the flagged sources' weights in the build's
 * order).
 *
 * The patch refuses (PR_ERR_INVALID, nothing allocated) what it cannot prove equal to a build:
 * a deletion of an edge the base lacks, an invalid weight, a weighted base the build may have
 * scaled (see scale_weights in pr_graph.c: a sum near 2^(PR_STRENGTH_LIMIT_EXP - 1) or a positive
 * weight near the subnormal range) or a result it would scale, and an empty result.
 */
#include "pr_graph.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * A run of items [begin, end) of an array (a patch's base in-edges, an extend's old edges or
 * sources) that a write copies to its own at `out`, after `before` items of the runs before it.
 */
typedef struct PrPatchRun
{
	int64_t		begin;
	int64_t		end;
	int64_t		out;
	int64_t		before;			/* items of the runs before it */
} PrPatchRun;

/* A copy of items [begin, end) of a run to `out` by part `part` of a write (copy_run_pieces). */
typedef void (*RunPieceCopy) (void *arg, int part, int64_t begin, int64_t end, int64_t out);

/* The fewest edges a thread of the write copies. */
#define PATCH_EDGES_PER_THREAD ((int64_t) 1 << 20)

/* Orders changes by destination, source, weight (qsort). */
static int
change_order(const void *a, const void *b)
{
	return pr_edge_change_order((const PrEdgeChange *) a, (const PrEdgeChange *) b);
}

/* Orders int64 ids. */
static int
id_order(const void *a, const void *b)
{
	int64_t		x = *(const int64_t *) a;
	int64_t		y = *(const int64_t *) b;

	return x < y ? -1 : (x > y ? 1 : 0);
}

/* Orders int32 internal ids. */
static int
node_order(const void *a, const void *b)
{
	int32_t		x = *(const int32_t *) a;
	int32_t		y = *(const int32_t *) b;

	return x < y ? -1 : (x > y ? 1 : 0);
}

/* Index of node in the ascending nodes[n], or -1. */
static int64_t
find_node(const int32_t *nodes, int64_t n, int32_t node)
{
	int64_t		lo = 0,
				hi = n;

	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (nodes[mid] < node)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (lo < n && nodes[lo] == node) ? lo : -1;
}

/* Sorts items[n] (of size bytes each) by order and drops repeats; returns the count left. */
static int64_t
sort_unique(void *items, int64_t n, size_t size, int (*order) (const void *, const void *))
{
	char	   *base = (char *) items;
	int64_t		unique = 0;

	if (n > 1)
		qsort(items, (size_t) n, size, order);
	for (int64_t i = 0; i < n; i++)
		if (unique == 0 || order(base + (unique - 1) * size, base + i * size) != 0)
		{
			if (unique != i)
				memcpy(base + unique * size, base + i * size, size);
			unique++;
		}
	return unique;
}

/* Weight of in-edge e of g (1 when unweighted). */
static inline double
edge_weight(const PrGraph *g, int64_t e)
{
	return g->in_weight != NULL ? g->in_weight[e] : 1.0;
}

/* The exact weight range of a weighted graph's in-edges (largest 1 and smallest 1 unweighted). */
void
pr_graph_weight_range(const PrGraph *g, PrWeightRange *range)
{
	double		largest = 0.0,
				smallest = 0.0;

	if (!g->weighted)
	{
		range->largest = 1.0;
		range->smallest_positive = 1.0;
		return;
	}
	for (int64_t e = 0; e < g->n_edges; e++)
	{
		double		w = g->in_weight[e];

		if (w > largest)
			largest = w;
		if (w > 0.0 && (smallest == 0.0 || w < smallest))
			smallest = w;
	}
	range->largest = largest;
	range->smallest_positive = smallest;
}

/*
 * Nets changes all[count] sorted by (dst, src, weight) in place: equal rows' counts added, zero
 * counts dropped; returns the rows left.
 */
static size_t
net_sorted(PrEdgeChange *all, size_t count)
{
	size_t		kept = 0;

	for (size_t i = 0; i < count; i++)
	{
		if (kept > 0 && change_order(&all[kept - 1], &all[i]) == 0)
			all[kept - 1].count += all[i].count;
		else
			all[kept++] = all[i];
		if (kept > 0 && all[kept - 1].count == 0 &&
			(i + 1 == count || change_order(&all[kept - 1], &all[i + 1]) != 0))
			kept--;
	}
	return kept;
}

/*
 * Appends to all[count] the reverse of each of its first count rows but self-loops (an undirected
 * graph's rows in both directions); returns the new count.
 */
static size_t
add_reverses(PrEdgeChange *all, size_t count)
{
	size_t		total = count;

	for (size_t i = 0; i < count; i++)
		if (all[i].src != all[i].dst)
		{
			all[total] = all[i];
			all[total].src = all[i].dst;
			all[total].dst = all[i].src;
			total++;
		}
	return total;
}

/*
 * The changes in the build's direction(s), sorted by (dst, src, weight), equal rows netted and
 * zero counts dropped, into a new array (*n_out rows); NULL when it cannot be allocated.
 */
static PrEdgeChange *
net_changes(const PrEdgeChange *changes, size_t n, bool undirected, const PrAllocator *alloc,
			size_t *n_out)
{
	PrEdgeChange *all = (PrEdgeChange *) pr_alloc_array(alloc, n * 2 + 1, sizeof(PrEdgeChange));
	size_t		count = n;

	if (all == NULL)
		return NULL;
	if (n > 0)
		memcpy(all, changes, n * sizeof(PrEdgeChange));
	if (undirected)
		count = add_reverses(all, n);
	qsort(all, count, sizeof(PrEdgeChange), change_order);
	*n_out = net_sorted(all, count);
	return all;
}

/*
 * Edges of base's in-row dst with source src (internal ids) and weight w: two binary searches of
 * the row, which is sorted by (source, weight).
 */
static int64_t
count_row_edges(const PrGraph *base, int64_t dst, int64_t src, double w)
{
	int64_t		lo = base->in_ptr[dst],
				hi = base->in_ptr[dst + 1],
				first;

	/* first edge not before (src, w) */
	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (base->in_src[mid] < src || (base->in_src[mid] == src && edge_weight(base, mid) < w))
			lo = mid + 1;
		else
			hi = mid;
	}
	first = lo;
	hi = base->in_ptr[dst + 1];
	/* first edge after (src, w) */
	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (base->in_src[mid] < src || (base->in_src[mid] == src && edge_weight(base, mid) <= w))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo - first;
}

/*
 * True when weights within range, over a graph of edges stored edges, are the rows' weights
 * unscaled: none positive below 2^-1021 (a scaled-up graph's smallest lies below it) and the
 * largest times the edges below 2^1018 (a scaled-down graph's is above).
 */
static bool
range_unscaled(const PrWeightRange *range, int64_t edges)
{
	return !(range->smallest_positive > 0.0 && range->smallest_positive < ldexp(1.0, -1021)) &&
		range->largest * (double) edges < ldexp(1.0, PR_STRENGTH_LIMIT_EXP - 2);
}

/*
 * g's weight range into *range (given's, or scanned when given is NULL); false when the build may
 * have scaled g's weights (range_unscaled).
 */
static bool
known_range_unscaled(const PrGraph *g, const PrWeightRange *given, PrWeightRange *range)
{
	if (given != NULL)
		*range = *given;
	else
		pr_graph_weight_range(g, range);
	return range_unscaled(range, g->n_edges);
}

/*
 * The patched graph's weight range from the base's and the inserted weights into patch->range;
 * false when a weight is invalid or the build would scale the base's or the patched graph's.
 */
static bool
plan_weights(PrGraphPatch *patch, const PrWeightRange *base_range)
{
	const PrGraph *base = patch->base;
	double		low = ldexp(1.0, -1021);
	PrWeightRange range;

	if (!known_range_unscaled(base, base_range, &range))
		return false;
	for (size_t i = 0; i < patch->n_net; i++)
	{
		double		w = patch->net[i].weight;

		if (patch->net[i].count <= 0)
			continue;
		if (!(w >= 0.0 && w <= DBL_MAX) || (w > 0.0 && w < low))
			return false;
		if (w > range.largest)
			range.largest = w;
		if (w > 0.0 && (range.smallest_positive == 0.0 || w < range.smallest_positive))
			range.smallest_positive = w;
	}
	patch->range = range;
	return range.largest * (double) patch->shape.n_edges <
		ldexp(1.0, PR_STRENGTH_LIMIT_EXP - 1);
}

/* Sets bits[n_nodes / 8 + 1] to the bits of ids[count] (node ids below n_nodes), all others 0. */
static void
set_node_bits(uint8_t *bits, int64_t n_nodes, const int32_t *ids, int64_t count)
{
	memset(bits, 0, (size_t) n_nodes / 8 + 1);
	for (int64_t i = 0; i < count; i++)
		bits[ids[i] >> 3] |= (uint8_t) (1u << (ids[i] & 7));
}

/* The out-degrees of a plan's candidates, counted over even parts of the base's in-edges. */
typedef struct DegreeCount
{
	const PrGraph *base;
	const uint8_t *flags;		/* the candidates' bits */
	const int32_t *candidates;
	int64_t		n;
	int64_t    *counts;			/* [n_parts][n] */
} DegreeCount;

/* pr_parallel_run's task: counts the candidates' out-edges in part `part` of n_parts. */
static void
degree_count_part(void *arg, int part, int n_parts)
{
	DegreeCount *d = (DegreeCount *) arg;
	int64_t    *mine = d->counts + (size_t) part * (size_t) d->n;
	int64_t		b,
				e;

	pr_even_range(d->base->n_edges, part, n_parts, &b, &e);
	for (int64_t i = b; i < e; i++)
	{
		int32_t		u = d->base->in_src[i];

		if (d->flags[u >> 3] & (1u << (u & 7)))
			mine[find_node(d->candidates, d->n, u)]++;
	}
}

/*
 * Out-degree of each of the base's candidates[n] (ascending internal ids) into degree[n]: the
 * out-strength of an unweighted graph, else one pass over the in-edges by up to n_threads threads
 * (none for no candidate); false when its scratch cannot be allocated.
 */
static bool
candidate_out_degrees(const PrGraph *base, const int32_t *candidates, int64_t n, int64_t *degree,
					  int n_threads, const PrAllocator *alloc)
{
	DegreeCount d = {base, NULL, candidates, n, NULL};
	uint8_t    *flags;
	int			parts = n_threads < PR_MAX_THREADS ? n_threads : PR_MAX_THREADS;

	if (!base->weighted || n == 0)
	{
		for (int64_t k = 0; k < n; k++)
			degree[k] = (int64_t) base->out_strength[candidates[k]];
		return true;
	}
	if ((int64_t) parts > base->n_edges / PATCH_EDGES_PER_THREAD)
		parts = (int) (base->n_edges / PATCH_EDGES_PER_THREAD);
	if (parts < 1)
		parts = 1;
	flags = (uint8_t *) pr_alloc_array(alloc, (size_t) base->n_nodes / 8 + 1, 1);
	d.counts = (int64_t *) pr_alloc_array(alloc, (size_t) parts * (size_t) n, sizeof(int64_t));
	if (flags == NULL || d.counts == NULL)
	{
		pr_free(alloc, flags);
		pr_free(alloc, d.counts);
		return false;
	}
	set_node_bits(flags, base->n_nodes, candidates, n);
	memset(d.counts, 0, (size_t) parts * (size_t) n * sizeof(int64_t));
	d.flags = flags;
	if (parts == 1)
		degree_count_part(&d, 0, 1);
	else
		pr_parallel_run(degree_count_part, &d, parts);
	for (int64_t k = 0; k < n; k++)
	{
		degree[k] = 0;
		for (int p = 0; p < parts; p++)
			degree[k] += d.counts[(size_t) p * (size_t) n + (size_t) k];
	}
	pr_free(alloc, flags);
	pr_free(alloc, d.counts);
	return true;
}

/*
 * The base nodes that go — endpoints of deletions left without an in-edge or out-edge — into
 * *gone (ascending, from alloc; *n_gone of them); net_old_src / net_old_dst are the changes'
 * endpoints in the base (-1: new).  Only the candidates left without an in-edge have their
 * out-edges counted.  False when scratch cannot be allocated.
 */
static bool
plan_gone(const PrGraphPatch *patch, const int32_t *net_old_src, const int32_t *net_old_dst,
		  int32_t **gone, int64_t *n_gone)
{
	const PrGraph *base = patch->base;
	const PrAllocator *alloc = patch->alloc;
	size_t		room = patch->n_net * 2 + 1;
	int32_t    *candidates = (int32_t *) pr_alloc_array(alloc, room, sizeof(int32_t));
	int64_t    *in_after = (int64_t *) pr_alloc_array(alloc, room, sizeof(int64_t));
	int64_t    *out_after = (int64_t *) pr_alloc_array(alloc, room, sizeof(int64_t));
	int64_t    *out_degree = (int64_t *) pr_alloc_array(alloc, room, sizeof(int64_t));
	int64_t		n = 0,
				k = 0;
	bool		ok = candidates != NULL && in_after != NULL && out_after != NULL &&
		out_degree != NULL;

	for (size_t i = 0; ok && i < patch->n_net; i++)
		if (patch->net[i].count < 0)
		{
			candidates[n++] = net_old_src[i];
			candidates[n++] = net_old_dst[i];
		}
	if (ok)
		n = sort_unique(candidates, n, sizeof(int32_t), node_order);
	for (int64_t c = 0; ok && c < n; c++)
	{
		in_after[c] = base->in_ptr[candidates[c] + 1] - base->in_ptr[candidates[c]];
		out_after[c] = 0;
	}
	for (size_t i = 0; ok && i < patch->n_net; i++)
	{
		int64_t		s = net_old_src[i] >= 0 ? find_node(candidates, n, net_old_src[i]) : -1;
		int64_t		d = net_old_dst[i] >= 0 ? find_node(candidates, n, net_old_dst[i]) : -1;

		if (s >= 0)
			out_after[s] += patch->net[i].count;
		if (d >= 0)
			in_after[d] += patch->net[i].count;
	}
	/* the candidates left without an in-edge, then their out-degrees */
	for (int64_t c = 0; ok && c < n; c++)
		if (in_after[c] == 0)
		{
			candidates[k] = candidates[c];
			out_after[k] = out_after[c];
			k++;
		}
	ok = ok && candidate_out_degrees(base, candidates, k, out_degree, patch->n_threads, alloc);
	n = k;
	k = 0;
	for (int64_t c = 0; ok && c < n; c++)
		if (out_degree[c] + out_after[c] == 0)
			candidates[k++] = candidates[c];
	pr_free(alloc, in_after);
	pr_free(alloc, out_after);
	pr_free(alloc, out_degree);
	if (!ok)
	{
		pr_free(alloc, candidates);
		return false;
	}
	*gone = candidates;
	*n_gone = k;
	return true;
}

/*
 * New internal id of the external id of a node the patched graph has: its rank among the base's
 * ids that stay and the fresh ones (gone: ascending base nodes that go).
 */
static int32_t
new_id(const PrGraphPatch *patch, const int32_t *gone, int64_t n_gone, int64_t id)
{
	const PrGraph *base = patch->base;
	int64_t		below = pr_lower_bound(base->node_ids, 0, base->n_nodes, id);
	int64_t		lo = 0,
				hi = n_gone;

	/* gone nodes below id */
	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (base->node_ids[gone[mid]] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (int32_t) (below - lo + pr_lower_bound(patch->fresh, 0, patch->n_fresh, id));
}

/* Frees a plan's scratch. */
void
pr_graph_patch_free(PrGraphPatch *patch)
{
	void	   *scratch[] = {patch->net, patch->net_src, patch->net_src_pos, patch->fresh, patch->map,
	patch->sources, patch->source_flags, patch->runs};

	for (size_t i = 0; patch->alloc != NULL && i < sizeof(scratch) / sizeof(scratch[0]); i++)
		pr_free(patch->alloc, scratch[i]);
	memset(patch, 0, sizeof(PrGraphPatch));
}

/* Fails a plan with status (set in err by the caller): frees its scratch and the extra arrays. */
static PrStatus
plan_fail(PrGraphPatch *patch, void *extra1, void *extra2, void *extra3, PrStatus status)
{
	const PrAllocator *alloc = patch->alloc;

	pr_free(alloc, extra1);
	pr_free(alloc, extra2);
	pr_free(alloc, extra3);
	pr_graph_patch_free(patch);
	return status;
}

PrStatus
pr_graph_patch_plan(const PrGraph *base, const PrWeightRange *base_range,
					const PrEdgeChange *changes, size_t n_changes, bool undirected,
					int n_threads, const PrAllocator *alloc, PrGraphPatch *patch, PrError *err)
{
	int32_t    *old_src = NULL,
			   *old_dst = NULL,
			   *gone = NULL;
	int64_t		n_gone = 0,
				n_new,
				m_new;
	size_t		n_net;

	memset(patch, 0, sizeof(PrGraphPatch));
	patch->base = base;
	patch->alloc = alloc;
	patch->n_threads = n_threads < 1 ? 1 : n_threads;
	if (base->has_out_edges && base->out_ptr == NULL)
		return pr_error_set(err, PR_ERR_INVALID, "base graph without its out-edge arrays");
	patch->net = net_changes(changes, n_changes, undirected, alloc, &patch->n_net);
	n_net = patch->n_net;
	old_src = (int32_t *) pr_alloc_array(alloc, n_net + 1, sizeof(int32_t));
	old_dst = (int32_t *) pr_alloc_array(alloc, n_net + 1, sizeof(int32_t));
	patch->net_src = (int32_t *) pr_alloc_array(alloc, n_net + 1, sizeof(int32_t));
	patch->net_src_pos = (int32_t *) pr_alloc_array(alloc, n_net + 1, sizeof(int32_t));
	patch->fresh = (int64_t *) pr_alloc_array(alloc, n_net * 2 + 1, sizeof(int64_t));
	patch->sources = (int32_t *) pr_alloc_array(alloc, n_net + 1, sizeof(int32_t));
	if (patch->net == NULL || old_src == NULL || old_dst == NULL || patch->net_src == NULL ||
		patch->net_src_pos == NULL ||
		patch->fresh == NULL || patch->sources == NULL)
		return plan_fail(patch, old_src, old_dst, NULL,
						 pr_error_set(err, PR_ERR_NOMEM, "out of memory for %zu changed rows",
									  n_changes));

	/* the changes' endpoints in the base; every deletion's edges there */
	m_new = base->n_edges;
	for (size_t i = 0; i < n_net; i++)
	{
		const PrEdgeChange *c = &patch->net[i];

		patch->net_src_pos[i] = (int32_t) pr_lower_bound(base->node_ids, 0, base->n_nodes, c->src);
		old_src[i] = patch->net_src_pos[i] < base->n_nodes &&
			base->node_ids[patch->net_src_pos[i]] == c->src ? patch->net_src_pos[i] : -1;
		old_dst[i] = (int32_t) pr_graph_find(base, c->dst);
		m_new += c->count;
		patch->changed_edges += c->count > 0 ? c->count : -c->count;
		if (c->count < 0 &&
			(old_src[i] < 0 || old_dst[i] < 0 ||
			 count_row_edges(base, old_dst[i], old_src[i], c->weight) < -c->count))
			return plan_fail(patch, old_src, old_dst, NULL,
							 pr_error_set(err, PR_ERR_INVALID,
										  "a deleted edge %lld -> %lld (weight %g) is not in the graph",
										  (long long) c->src, (long long) c->dst, c->weight));
		if (old_src[i] < 0)
			patch->fresh[patch->n_fresh++] = c->src;
		if (old_dst[i] < 0)
			patch->fresh[patch->n_fresh++] = c->dst;
	}
	patch->shape.n_edges = m_new;
	patch->shape.weighted = base->weighted;
	if (m_new <= 0)
		return plan_fail(patch, old_src, old_dst, NULL,
						 pr_error_set(err, PR_ERR_INVALID, "the patched graph has %lld edges",
									  (long long) m_new));
	if (base->weighted && !plan_weights(patch, base_range))
		return plan_fail(patch, old_src, old_dst, NULL,
						 pr_error_set(err, PR_ERR_INVALID, "weights the build would scale"));
	patch->n_fresh = sort_unique(patch->fresh, patch->n_fresh, sizeof(int64_t), id_order);

	/* the nodes that go, and the new node count */
	if (!plan_gone(patch, old_src, old_dst, &gone, &n_gone))
		return plan_fail(patch, old_src, old_dst, NULL,
						 pr_error_set(err, PR_ERR_NOMEM, "out of memory for %zu changed rows",
									  n_changes));
	n_new = base->n_nodes - n_gone + patch->n_fresh;
	if (n_new > PR_MAX_NODES)
		return plan_fail(patch, old_src, old_dst, gone,
						 pr_error_set(err, PR_ERR_TOO_LARGE, "the patched graph has %lld nodes",
									  (long long) n_new));
	patch->shape.n_nodes = n_new;
	patch->shape.n_dangling = n_new;

	/* base node -> new node, unless no base node's id moves */
	if (n_gone > 0 || (patch->n_fresh > 0 && base->n_nodes > 0 &&
					   patch->fresh[0] < base->node_ids[base->n_nodes - 1]))
	{
		int64_t		g = 0,
					j = 0,
					k = 0;

		patch->map = (int32_t *) pr_alloc_array(alloc, (size_t) base->n_nodes + 1, sizeof(int32_t));
		if (patch->map == NULL)
			return plan_fail(patch, old_src, old_dst, gone,
							 pr_error_set(err, PR_ERR_NOMEM,
										  "out of memory for the node map of %lld nodes",
										  (long long) base->n_nodes));
		for (int64_t i = 0; i < base->n_nodes; i++)
		{
			while (j < patch->n_fresh && patch->fresh[j] < base->node_ids[i])
			{
				j++;
				k++;
			}
			if (g < n_gone && gone[g] == i)
			{
				patch->map[i] = -1;
				g++;
			}
			else
				patch->map[i] = (int32_t) k++;
		}
	}

	/* the changes' sources in the new graph, and the ones whose out-edges change */
	for (size_t i = 0; i < n_net; i++)
	{
		patch->net_src[i] = old_src[i] >= 0 ?
			(patch->map != NULL ? patch->map[old_src[i]] : old_src[i]) :
			new_id(patch, gone, n_gone, patch->net[i].src);
		/* a source that goes has deletions only: nothing to sum */
		if (patch->net_src[i] >= 0)
			patch->sources[patch->n_sources++] = patch->net_src[i];
	}
	patch->n_sources = sort_unique(patch->sources, patch->n_sources, sizeof(int32_t),
								   node_order);
	if (base->weighted)
	{
		patch->source_flags = (uint8_t *) pr_alloc_array(alloc, (size_t) n_new / 8 + 1, 1);
		if (patch->source_flags == NULL)
			return plan_fail(patch, old_src, old_dst, gone,
							 pr_error_set(err, PR_ERR_NOMEM, "out of memory for %lld nodes",
										  (long long) n_new));
	}
	/*
	 * a run of unchanged rows ends at each changed, fresh or vanished row, and at the end; a
	 * changed row's base edges are runs between its changes
	 */
	patch->max_runs = 3 * (int64_t) n_net + 2 * patch->n_fresh + n_gone + 2;
	patch->runs = (PrPatchRun *) pr_alloc_array(alloc, (size_t) patch->max_runs, sizeof(PrPatchRun));
	if (patch->runs == NULL)
		return plan_fail(patch, old_src, old_dst, gone,
						 pr_error_set(err, PR_ERR_NOMEM, "out of memory for %zu changed rows",
									  n_changes));
	pr_free(alloc, old_src);
	pr_free(alloc, old_dst);
	pr_free(alloc, gone);
	return PR_OK;
}

/* Copies base in-edges [b, b_end) to out at e_out, sources mapped (map NULL: as they are). */
static void
copy_edges(const PrGraph *base, const int32_t *map, int64_t b, int64_t b_end, PrGraph *out,
		   int64_t e_out)
{
	if (b_end <= b)
		return;
	if (map == NULL)
		memcpy(out->in_src + e_out, base->in_src + b, (size_t) (b_end - b) * sizeof(int32_t));
	else
		for (int64_t e = b; e < b_end; e++)
			out->in_src[e_out + (e - b)] = map[base->in_src[e]];
	if (base->weighted)
		memcpy(out->in_weight + e_out, base->in_weight + b, (size_t) (b_end - b) * sizeof(double));
}

/* The flagged sources' in-edges of out, gathered in edge order by the parts of an even split. */
typedef struct FlaggedEdges
{
	PrGraph    *out;
	const uint8_t *flags;
	int64_t		count[PR_MAX_THREADS + 1];	/* per part, then (prefix) its first slot */
	int64_t		total;
	int32_t    *src;			/* NULL in the counting pass */
	double	   *weight;
} FlaggedEdges;

/*
 * pr_parallel_run's task: adds the gathered weights of the sources in part `part` of n_parts
 * (even ranges of node ids) to their out-strengths, each source's in edge order.
 */
static void
flagged_sums_part(void *arg, int part, int n_parts)
{
	FlaggedEdges *f = (FlaggedEdges *) arg;
	int64_t		lo,
				hi;

	pr_even_range(f->out->n_nodes, part, n_parts, &lo, &hi);
	for (int64_t i = 0; i < f->total; i++)
		if (f->src[i] >= lo && f->src[i] < hi)
			f->out->out_strength[f->src[i]] += f->weight[i];
}

/* pr_parallel_run's task: counts, or copies to its slots, the flagged edges of part `part`. */
static void
flagged_edges_part(void *arg, int part, int n_parts)
{
	FlaggedEdges *f = (FlaggedEdges *) arg;
	int64_t		b,
				e,
				at = f->src != NULL ? f->count[part] : 0;

	pr_even_range(f->out->n_edges, part, n_parts, &b, &e);
	for (int64_t i = b; i < e; i++)
	{
		int32_t		s = f->out->in_src[i];

		if (f->flags[s >> 3] & (1u << (s & 7)))
		{
			if (f->src != NULL)
			{
				f->src[at] = s;
				f->weight[at] = f->out->in_weight[i];
			}
			at++;
		}
	}
	if (f->src == NULL)
		f->count[part] = at;
}

/*
 * Adds every flagged source's in-edge weights of out to its out-strength, in edge order (the
 * build's order: the same double): the edges found by n_parts threads, then each source's summed
 * in order by the thread whose range of sources holds it; by one pass here when the scratch cannot
 * be had.
 */
static void
sum_flagged(const PrGraphPatch *patch, PrGraph *out, const uint8_t *flags, int n_parts)
{
	FlaggedEdges f;
	int64_t		total = 0;

	memset(&f, 0, sizeof(f));
	f.out = out;
	f.flags = flags;
	if (n_parts > 1)
	{
		pr_parallel_run(flagged_edges_part, &f, n_parts);
		for (int p = 0; p < n_parts; p++)
		{
			int64_t		c = f.count[p];

			f.count[p] = total;
			total += c;
		}
		f.src = (int32_t *) pr_alloc_array(patch->alloc, (size_t) total + 1, sizeof(int32_t));
		f.weight = (double *) pr_alloc_array(patch->alloc, (size_t) total + 1, sizeof(double));
	}
	if (f.src != NULL && f.weight != NULL)
	{
		pr_parallel_run(flagged_edges_part, &f, n_parts);
		f.total = total;
		pr_parallel_run(flagged_sums_part, &f, n_parts);
	}
	else
		for (int64_t e = 0; e < out->n_edges; e++)
		{
			int32_t		s = out->in_src[e];

			if (flags[s >> 3] & (1u << (s & 7)))
				out->out_strength[s] += out->in_weight[e];
		}
	pr_free(patch->alloc, f.src);
	pr_free(patch->alloc, f.weight);
}

/*
 * The out-strengths of out (in-edges written): the base's for every source whose out-edges did
 * not change, the changed sources' summed again in the build's order (their edges found by
 * n_parts threads); then the dangling list.
 */
static void
write_strengths(const PrGraphPatch *patch, PrGraph *out, int n_parts)
{
	const PrGraph *base = patch->base;
	int64_t		n = out->n_nodes;
	int64_t		k = 0;

	if (patch->map == NULL)
	{
		memcpy(out->out_strength, base->out_strength, (size_t) base->n_nodes * sizeof(double));
		memset(out->out_strength + base->n_nodes, 0,
			   (size_t) (n - base->n_nodes) * sizeof(double));
	}
	else
	{
		memset(out->out_strength, 0, (size_t) n * sizeof(double));
		for (int64_t u = 0; u < base->n_nodes; u++)
			if (patch->map[u] >= 0)
				out->out_strength[patch->map[u]] = base->out_strength[u];
	}
	if (!base->weighted)
	{
		/* out-degrees: exact in a double */
		for (size_t c = 0; c < patch->n_net; c++)
			if (patch->net_src[c] >= 0)
				out->out_strength[patch->net_src[c]] += (double) patch->net[c].count;
	}
	else if (patch->n_sources > 0)
	{
		set_node_bits(patch->source_flags, n, patch->sources, patch->n_sources);
		for (int64_t i = 0; i < patch->n_sources; i++)
			out->out_strength[patch->sources[i]] = 0.0;
		sum_flagged(patch, out, patch->source_flags, n_parts);
	}
	for (int64_t v = 0; v < n; v++)
		if (out->out_strength[v] == 0.0)
			out->dangling[k++] = (int32_t) v;
	out->n_dangling = k;
}

/* The runs of unchanged rows a write found, copied by pr_parallel_run. */
typedef struct PatchCopy
{
	const PrGraphPatch *patch;
	PrGraph    *out;
	int64_t		n_runs;
	int64_t		edges;			/* in all the runs */
} PatchCopy;

/* Adds items [begin, end), bound for out_at, to runs[*n_runs] (*items in them). */
static void
add_run(PrPatchRun *runs, int64_t *n_runs, int64_t *items, int64_t begin, int64_t end,
		int64_t out_at)
{
	PrPatchRun *run = &runs[*n_runs];

	if (end <= begin)
		return;
	run->begin = begin;
	run->end = end;
	run->out = out_at;
	run->before = *items;
	*items += end - begin;
	(*n_runs)++;
}

/*
 * Copies with copy(arg, part, ...) the pieces of runs[n_runs] (items in all of them) that fall in
 * part `part` of n_parts: even ranges of their items, whatever the runs' lengths.
 */
static void
copy_run_pieces(const PrPatchRun *runs, int64_t n_runs, int64_t items, int part, int n_parts,
				RunPieceCopy copy, void *arg)
{
	int64_t		lo,
				hi,
				r = 0,
				top = n_runs - 1;

	pr_even_range(items, part, n_parts, &lo, &hi);
	if (lo >= hi)
		return;
	/* the last run starting at or before lo */
	while (r < top)
	{
		int64_t		mid = r + (top - r + 1) / 2;

		if (runs[mid].before <= lo)
			r = mid;
		else
			top = mid - 1;
	}
	for (; r < n_runs && runs[r].before < hi; r++)
	{
		int64_t		len = runs[r].end - runs[r].begin;
		int64_t		from = (lo > runs[r].before ? lo : runs[r].before) - runs[r].before;
		int64_t		to = (hi < runs[r].before + len ? hi : runs[r].before + len) - runs[r].before;

		copy(arg, part, runs[r].begin + from, runs[r].begin + to, runs[r].out + from);
	}
}

/*
 * Whether base in-edge e comes before the change whose source lies at pos of the base's node
 * ids (pr_lower_bound: the source's internal id when `exists`) with weight w, in the rows' order
 * (source, weight): internal ids ascend with the node ids, so no id is looked up.
 */
static inline bool
edge_before(const PrGraph *base, int64_t e, int32_t pos, bool exists, double w)
{
	return base->in_src[e] < pos ||
		(exists && base->in_src[e] == pos && edge_weight(base, e) < w);
}

/*
 * Writes new in-row v (in_ptr[v] set) at *e_out: base row [b, b_end) merged with the changes
 * [c, c_end) of its destination, in (source, weight) order, equal edges netted with them; the
 * base edges between changes go to copy's runs (each change's place found by binary search).
 */
static void
write_changed_row(const PrGraphPatch *patch, PatchCopy *copy, int64_t b, int64_t b_end, size_t c,
				  size_t c_end, PrGraph *out, int64_t *e_out)
{
	const PrGraph *base = patch->base;

	for (; c < c_end; c++)
	{
		int32_t		pos = patch->net_src_pos[c];
		bool		exists = pos < base->n_nodes && base->node_ids[pos] == patch->net[c].src;
		double		w = patch->net[c].weight;
		int64_t		count = patch->net[c].count;
		int64_t		before = b,
					hi = b_end;

		/* base edges ordered before (source, w) */
		while (b < hi)
		{
			int64_t		mid = b + (hi - b) / 2;

			if (edge_before(base, mid, pos, exists, w))
				b = mid + 1;
			else
				hi = mid;
		}
		add_run(patch->runs, &copy->n_runs, &copy->edges, before, b, *e_out);
		*e_out += b - before;
		/* base edges equal to it: they and the change's copies, netted (never below 0: planned) */
		while (b < b_end && exists && base->in_src[b] == pos && edge_weight(base, b) == w)
		{
			count++;
			b++;
		}
		for (int64_t k = 0; k < count; k++)
		{
			out->in_src[*e_out] = patch->net_src[c];
			if (base->weighted)
				out->in_weight[*e_out] = w;
			(*e_out)++;
		}
	}
	add_run(patch->runs, &copy->n_runs, &copy->edges, b, b_end, *e_out);
	*e_out += b_end - b;
}

/* A piece of a run of base edges copied (RunPieceCopy). */
static void
copy_patch_piece(void *arg, int part, int64_t begin, int64_t end, int64_t out)
{
	PatchCopy  *c = (PatchCopy *) arg;

	(void) part;
	copy_edges(c->patch->base, c->patch->map, begin, end, c->out, out);
}

/* pr_parallel_run's task: copies part `part` of n_parts of the runs' edges (even edge ranges). */
static void
copy_runs_part(void *arg, int part, int n_parts)
{
	PatchCopy  *c = (PatchCopy *) arg;

	copy_run_pieces(c->patch->runs, c->n_runs, c->edges, part, n_parts, copy_patch_piece, c);
}

void
pr_graph_patch_write(const PrGraphPatch *patch, PrGraph *out, int n_threads)
{
	PatchCopy	copy = {patch, out, 0, 0};
	int			parts;
	const PrGraph *base = patch->base;
	const int32_t *map = patch->map;
	int64_t		n_base = base->n_nodes;
	int64_t		i = 0,
				j = 0,
				v = 0,
				e_out = 0;
	int64_t		run_b = 0,
				run_end = 0,
				run_out = 0;	/* base edges [run_b, run_end) wait to go to run_out */
	size_t		c = 0;

	out->n_nodes = patch->shape.n_nodes;
	out->n_edges = patch->shape.n_edges;
	out->weighted = base->weighted;
	out->has_out_edges = false;

	/*
	 * Every id in ascending order, the base's and the fresh ones: a base row without a change
	 * joins the run of rows waiting to be copied; a changed row flushes it and is merged.
	 */
	while (i < n_base || j < patch->n_fresh)
	{
		bool		from_base = j >= patch->n_fresh ||
			(i < n_base && base->node_ids[i] < patch->fresh[j]);
		int64_t		id = from_base ? base->node_ids[i] : patch->fresh[j];
		int64_t		b = from_base ? base->in_ptr[i] : 0;
		int64_t		b_end = from_base ? base->in_ptr[i + 1] : 0;
		size_t		c_end = c;

		while (c_end < patch->n_net && patch->net[c_end].dst == id)
			c_end++;
		if (from_base && map != NULL && map[i] < 0)
		{
			/* a node that goes: its row nets to nothing */
			i++;
			c = c_end;
			continue;
		}
		out->node_ids[v] = id;
		out->in_ptr[v] = e_out + (run_end - run_b);
		if (c_end == c && from_base)
		{
			if (run_end != b)
			{
				add_run(patch->runs, &copy.n_runs, &copy.edges, run_b, run_end, run_out);
				e_out += run_end - run_b;
				run_b = b;
				run_out = e_out;
			}
			run_end = b_end;
		}
		else
		{
			add_run(patch->runs, &copy.n_runs, &copy.edges, run_b, run_end, run_out);
			e_out += run_end - run_b;
			run_b = run_end = b_end;
			write_changed_row(patch, &copy, b, b_end, c, c_end, out, &e_out);
			run_out = e_out;
		}
		if (from_base)
			i++;
		else
			j++;
		c = c_end;
		v++;
	}
	add_run(patch->runs, &copy.n_runs, &copy.edges, run_b, run_end, run_out);
	e_out += run_end - run_b;
	out->in_ptr[v] = e_out;

	/* the unchanged rows, by threads of at least PATCH_EDGES_PER_THREAD edges each */
	parts = n_threads < PR_MAX_THREADS ? n_threads : PR_MAX_THREADS;
	if ((int64_t) parts > copy.edges / PATCH_EDGES_PER_THREAD)
		parts = (int) (copy.edges / PATCH_EDGES_PER_THREAD);
	if (parts <= 1)
		copy_runs_part(&copy, 0, 1);
	else
		pr_parallel_run(copy_runs_part, &copy, parts);
	write_strengths(patch, out, parts < 1 ? 1 : parts);
}

/*
 * A graph's out-degrees (and weight range) counted by parts: either each part counts its even
 * range of the in-edges into its own row of counts (int32: a part holds fewer than 2^31 edges),
 * the rows then added by parts of the nodes, or, where the rows would take more memory than the
 * in-sources themselves or cannot be allocated, each part counts the sources of its even range
 * of node ids over every in-edge.  Integer counts, so the result is the same for any split.
 */
typedef struct RootFacts
{
	const PrGraph *g;
	bool		count;			/* count the out-degrees (else the weight range only) */
	int32_t    *rows;			/* [n_parts][n_nodes], or NULL */
	int64_t    *out;
	PrWeightRange ranges[PR_MAX_THREADS];	/* each part's range of its in-edges' weights */
} RootFacts;

/*
 * pr_parallel_run's task: part `part` of n_parts of the in-edges: the range of their weights, and
 * their sources counted into the part's row (or the part's range of sources over every in-edge).
 */
static void
root_facts_part(void *arg, int part, int n_parts)
{
	RootFacts  *f = (RootFacts *) arg;
	const PrGraph *g = f->g;
	double		largest = 0.0,
				smallest = 0.0;
	int64_t		b,
				e;

	pr_even_range(g->n_edges, part, n_parts, &b, &e);
	if (f->count && f->rows != NULL)
	{
		int32_t    *mine = f->rows + (size_t) part * (size_t) g->n_nodes;

		memset(mine, 0, (size_t) g->n_nodes * sizeof(int32_t));
		for (int64_t i = b; i < e; i++)
			mine[g->in_src[i]]++;
	}
	else if (f->count)
	{
		int64_t		lo,
					hi;

		pr_even_range(g->n_nodes, part, n_parts, &lo, &hi);
		memset(f->out + lo, 0, (size_t) (hi - lo) * sizeof(int64_t));
		for (int64_t i = 0; i < g->n_edges; i++)
		{
			uint64_t	at = (uint64_t) ((int64_t) g->in_src[i] - lo);

			if (at < (uint64_t) (hi - lo))
				f->out[lo + (int64_t) at]++;
		}
	}
	for (int64_t i = b; g->weighted && i < e; i++)
	{
		double		w = g->in_weight[i];

		if (w > largest)
			largest = w;
		if (w > 0.0 && (smallest == 0.0 || w < smallest))
			smallest = w;
	}
	f->ranges[part].largest = largest;
	f->ranges[part].smallest_positive = smallest;
}

/* pr_parallel_run's task: out[v] = the rows' counts of v, for part `part` of the node ids. */
static void
root_facts_sum_part(void *arg, int part, int n_parts)
{
	RootFacts  *f = (RootFacts *) arg;
	int64_t		n = f->g->n_nodes,
				lo,
				hi;
	int			rows = n_parts;

	pr_even_range(n, part, n_parts, &lo, &hi);
	for (int64_t v = lo; v < hi; v++)
	{
		int64_t		sum = 0;

		for (int r = 0; r < rows; r++)
			sum += f->rows[(size_t) r * (size_t) n + (size_t) v];
		f->out[v] = sum;
	}
}

/* Parts of a pass over items on up to n_threads threads, each of at least per_part items. */
static int
pass_parts(int n_threads, int64_t items, int64_t per_part)
{
	int64_t		parts = n_threads < PR_MAX_THREADS ? n_threads : PR_MAX_THREADS;

	if (parts > items / per_part)
		parts = items / per_part;
	return parts < 1 ? 1 : (int) parts;
}

/* A graph's out-degrees into out and its weight range into range (may be NULL); pr_graph.h. */
void
pr_graph_root_facts(const PrGraph *g, int n_threads, const PrAllocator *alloc, int64_t *out,
					PrWeightRange *range)
{
	RootFacts	f;
	int			parts = pass_parts(n_threads, g->n_edges, PATCH_EDGES_PER_THREAD);
	bool		weights = range != NULL && g->weighted;

	memset(&f, 0, sizeof(RootFacts));
	f.g = g;
	f.count = true;
	f.out = out;
	if (g->has_out_edges && g->out_ptr != NULL)
	{
		for (int64_t v = 0; v < g->n_nodes; v++)
			out[v] = g->out_ptr[v + 1] - g->out_ptr[v];
		f.count = false;
	}
	else if (!g->weighted)
	{
		for (int64_t v = 0; v < g->n_nodes; v++)
			out[v] = (int64_t) g->out_strength[v];
		f.count = false;
	}
	if (range != NULL && !g->weighted)
	{
		range->largest = 1.0;
		range->smallest_positive = 1.0;
	}
	if (!f.count && !weights)
		return;
	if (f.count && parts > 1 && (int64_t) parts * g->n_nodes <= g->n_edges &&
		g->n_edges / parts < INT32_MAX)
		f.rows = (int32_t *) pr_alloc_array(alloc, (size_t) parts * (size_t) g->n_nodes,
											sizeof(int32_t));
	pr_parallel_run(root_facts_part, &f, parts);
	if (f.rows != NULL)
	{
		pr_parallel_run(root_facts_sum_part, &f, parts);
		pr_free(alloc, f.rows);
	}
	if (weights)
	{
		*range = f.ranges[0];
		for (int p = 1; p < parts; p++)
		{
			if (f.ranges[p].largest > range->largest)
				range->largest = f.ranges[p].largest;
			if (f.ranges[p].smallest_positive > 0.0 &&
				(range->smallest_positive == 0.0 ||
				 f.ranges[p].smallest_positive < range->smallest_positive))
				range->smallest_positive = f.ranges[p].smallest_positive;
		}
	}
}

/* out[v] = stored edges with source v (pr_graph_root_facts without the weight range). */
void
pr_graph_out_degrees(const PrGraph *g, int n_threads, int64_t *out)
{
	pr_graph_root_facts(g, n_threads, &pr_malloc_allocator, out, NULL);
}

/* Root's out-degree of node v: root_out_degree's, or an unweighted root's out-strength. */
static inline int64_t
root_degree(const PrGraph *root, const int64_t *root_out_degree, int32_t v)
{
	return root_out_degree != NULL ? root_out_degree[v] : (int64_t) root->out_strength[v];
}

/* First index of delta's edges (sorted by destination) whose destination is not below dst. */
static int64_t
first_edge_to(const PrGraphDelta *delta, int64_t dst)
{
	int64_t		lo = 0,
				hi = delta->n_edges;

	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (delta->edges[mid].dst < dst)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The weights of X2 checked as pr_graph_patch_plan checks a patch's: root's unscaled (root_range,
 * or scanned), every inserted weight finite, >= 0 and not near the subnormal range, and the
 * largest of root's, X1's inserted ones (old_largest) and the new inserted ones times X2's edges
 * below 2^(PR_STRENGTH_LIMIT_EXP - 1).  False when the build may scale X2's weights or root's.
 */
static bool
extend_weights(const PrGraph *root, const PrWeightRange *root_range, double old_largest,
			   const PrEdgeChange *net, size_t n_net, int64_t edges_after)
{
	PrWeightRange range;

	if (!root->weighted)
		return true;
	if (!known_range_unscaled(root, root_range, &range))
		return false;
	if (old_largest > range.largest)
		range.largest = old_largest;
	for (size_t i = 0; i < n_net; i++)
	{
		double		w = net[i].weight;

		if (net[i].count <= 0)
			continue;
		if (!(w >= 0.0 && w <= DBL_MAX) || (w > 0.0 && w < ldexp(1.0, -1021)))
			return false;
		if (w > range.largest)
			range.largest = w;
	}
	return range.largest * (double) edges_after < ldexp(1.0, PR_STRENGTH_LIMIT_EXP - 1);
}

/*
 * Root's in-edges whose source is one of the ascending sources[n] (their out-degrees in root sum
 * to *total, at most), as changes of count 1 in (dst, src, weight) order into a new array (*total
 * set to their count); NULL when it cannot be allocated.  From the out-rows when root has them,
 * else one pass over its in-edges.
 */
static PrEdgeChange *
root_edges_of(const PrGraph *root, const int32_t *sources, int64_t n, int64_t *total,
			  const PrAllocator *alloc)
{
	PrEdgeChange *edges = (PrEdgeChange *) pr_alloc_array(alloc, (size_t) *total + 1,
														  sizeof(PrEdgeChange));
	uint8_t    *flags = NULL;
	int64_t		k = 0;

	if (edges == NULL)
		return NULL;
	if (root->has_out_edges && root->out_ptr != NULL)
	{
		for (int64_t i = 0; i < n; i++)
			for (int64_t e = root->out_ptr[sources[i]];
				 e < root->out_ptr[sources[i] + 1] && k < *total; e++)
				edges[k++] = (PrEdgeChange) {sources[i], root->out_dst[e],
				root->weighted ? root->out_weight[e] : 1.0, 1};
		qsort(edges, (size_t) k, sizeof(PrEdgeChange), change_order);
		*total = k;
		return edges;
	}
	flags = (uint8_t *) pr_alloc_array(alloc, (size_t) root->n_nodes / 8 + 1, 1);
	if (flags == NULL)
	{
		pr_free(alloc, edges);
		return NULL;
	}
	set_node_bits(flags, root->n_nodes, sources, n);
	for (int64_t v = 0; v < root->n_nodes; v++)
		for (int64_t e = root->in_ptr[v]; e < root->in_ptr[v + 1]; e++)
		{
			int32_t		u = root->in_src[e];

			if ((flags[u >> 3] & (1u << (u & 7))) && k < *total)
				edges[k++] = (PrEdgeChange) {u, v, edge_weight(root, e), 1};
		}
	pr_free(alloc, flags);
	*total = k;
	return edges;
}

/*
 * The exact out-strengths in X2 = root + delta of the delta's sources at the ascending positions
 * which[n] (of delta->sources): each source's X2 out-edges summed in the build's order
 * (destination, then weight) from 0.  False when scratch cannot be allocated.
 */
static bool
recount_strengths(const PrGraph *root, const int64_t *root_out_degree, PrGraphDelta *delta,
				  const int64_t *which, int64_t n, const PrAllocator *alloc)
{
	int32_t    *sources = (int32_t *) pr_alloc_array(alloc, (size_t) n + 1, sizeof(int32_t));
	PrEdgeChange *edges = NULL;
	int64_t		total = 0,
				a = 0,
				b = 0;

	if (sources == NULL)
		return false;
	for (int64_t i = 0; i < n; i++)
	{
		sources[i] = delta->sources[which[i]];
		total += root_degree(root, root_out_degree, sources[i]);
		delta->out_strength[which[i]] = 0.0;
	}
	edges = root_edges_of(root, sources, n, &total, alloc);
	if (edges == NULL)
	{
		pr_free(alloc, sources);
		return false;
	}
	/* root's edges and the delta's of those sources, merged in (dst, src, weight) order */
	while (a < total || b < delta->n_edges)
	{
		int			order;
		const PrEdgeChange *key;
		int64_t		copies = 0;
		int64_t		at;

		if (b < delta->n_edges && find_node(sources, n, (int32_t) delta->edges[b].src) < 0)
		{
			b++;
			continue;
		}
		order = a == total ? 1 : b == delta->n_edges ? -1 :
			pr_edge_change_order(&edges[a], &delta->edges[b]);
		key = order <= 0 ? &edges[a] : &delta->edges[b];
		at = which[find_node(sources, n, (int32_t) key->src)];
		if (order <= 0)
			while (a < total && pr_edge_change_order(&edges[a], key) == 0)
			{
				copies++;
				a++;
			}
		if (order >= 0)
			copies += delta->edges[b++].count;
		for (int64_t k = 0; k < copies; k++)
			delta->out_strength[at] += key->weight;
	}
	pr_free(alloc, sources);
	pr_free(alloc, edges);
	return true;
}


/* The fewest lookups (binary searches) a thread of an extend's passes takes. */
#define EXTEND_LOOKUPS_PER_THREAD ((int64_t) 1 << 13)

/* The first of edges[lo, hi) (sorted by (dst, src, weight)) not before key: a binary search. */
static int64_t
edge_lower_bound(const PrEdgeChange *edges, int64_t lo, int64_t hi, const PrEdgeChange *key)
{
	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (pr_edge_change_order(&edges[mid], key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The per-item passes of an extend, each item independent of the others (ExtendPass). */
typedef enum ExtendPassKind
{
	PASS_IDS,					/* the changed rows in root's internal ids */
	PASS_PLACES,				/* the netted changes' places among X1's edges (old's), and
								 * their deletions checked against X1 */
	PASS_SOURCES,				/* the netted changes' sources found among the step's sources */
	PASS_ABSENT					/* whether the changes' endpoints are absent in X2 */
} ExtendPassKind;

/* One per-item pass of an extend, split over threads by even parts of its items. */
typedef struct ExtendPass
{
	ExtendPassKind kind;
	int64_t		n;				/* items */
	const PrGraph *root;
	const int64_t *root_out_degree;
	const PrGraphDelta *delta;	/* PASS_PLACES: X1's (old); PASS_ABSENT: X2's */
	const PrEdgeChange *changes;	/* PASS_IDS: the changed rows; else the netted changes */
	const int32_t *candidates;	/* PASS_SOURCES: the step's sources; PASS_ABSENT: the endpoints */
	int64_t		n_candidates;
	PrEdgeChange *mapped;		/* PASS_IDS: [n] the rows in internal ids (-1: a node root lacks) */
	int64_t    *at;				/* PASS_PLACES: [n] each change's place among old's edges (the
								 * first not before it); PASS_SOURCES: [n] its source's index
								 * among the candidates */
	uint8_t    *absent;			/* PASS_ABSENT: [n] */
	int64_t		found[PR_MAX_THREADS];	/* each part's first item found wanting (PASS_IDS: a
										 * row naming a node root lacks; PASS_PLACES: a
										 * deletion X1 lacks), or -1 */
} ExtendPass;

/* Item i of a pass (ExtendPassKind); false when it is found wanting. */
static bool
extend_pass_item(ExtendPass *p, int64_t i)
{
	const PrEdgeChange *c = &p->changes[i];

	switch (p->kind)
	{
		case PASS_IDS:
			p->mapped[i] = *c;
			p->mapped[i].src = pr_graph_find(p->root, c->src);
			p->mapped[i].dst = pr_graph_find(p->root, c->dst);
			return p->mapped[i].src >= 0 && p->mapped[i].dst >= 0;
		case PASS_PLACES:
			{
				const PrGraphDelta *old = p->delta;
				int64_t		at = edge_lower_bound(old->edges, 0, old->n_edges, c);
				int64_t		in_old = at < old->n_edges &&
					pr_edge_change_order(&old->edges[at], c) == 0 ? old->edges[at].count : 0;

				p->at[i] = at;
				/* X1's copies: old's count, then root's row (not needed when old's suffice) */
				return c->count >= 0 || in_old >= -c->count ||
					count_row_edges(p->root, c->dst, c->src, c->weight) + in_old >= -c->count;
			}
		case PASS_SOURCES:
			p->at[i] = find_node(p->candidates, p->n_candidates, (int32_t) c->src);
			return true;
		case PASS_ABSENT:
			{
				int32_t		v = p->candidates[i];
				int64_t		at = find_node(p->delta->sources, p->delta->n_sources, v);
				int64_t		in_degree;

				/* a node with an out-edge stays; its in-edges need not be counted */
				if ((at >= 0 ? p->delta->out_degree[at] :
					 root_degree(p->root, p->root_out_degree, v)) != 0)
				{
					p->absent[i] = 0;
					return true;
				}
				in_degree = p->root->in_ptr[v + 1] - p->root->in_ptr[v];
				for (int64_t e = first_edge_to(p->delta, v);
					 e < p->delta->n_edges && p->delta->edges[e].dst == v; e++)
					in_degree += p->delta->edges[e].count;
				p->absent[i] = in_degree == 0;
				return true;
			}
	}
	return true;
}

/* pr_parallel_run's task: the items of part `part` of n_parts (found[part]: the first wanting). */
static void
extend_pass_part(void *arg, int part, int n_parts)
{
	ExtendPass *p = (ExtendPass *) arg;
	int64_t		b,
				e;

	pr_even_range(p->n, part, n_parts, &b, &e);
	p->found[part] = -1;
	for (int64_t i = b; i < e && p->found[part] < 0; i++)
		if (!extend_pass_item(p, i))
			p->found[part] = i;
}

/*
 * Runs a pass over even parts of its items on up to n_threads threads; returns the first item
 * found wanting (the lowest, whatever the split), or -1.
 */
static int64_t
extend_pass(ExtendPass *p, int n_threads)
{
	int			parts = pass_parts(n_threads, p->n, EXTEND_LOOKUPS_PER_THREAD);

	pr_parallel_run(extend_pass_part, p, parts);
	for (int part = 0; part < parts; part++)
		if (p->found[part] >= 0)
			return p->found[part];
	return -1;
}

/*
 * Sorts changes[n] (internal ids, below 2^31; n below 2^32) by (dst, src, weight) into out[n]:
 * a stable LSD radix sort by source, then by destination (pr_radix_sort_u64 on keys that carry
 * each change's index in their low half), then the weights of equal (dst, src) by insertion (runs
 * of parallel rows, short).  False when scratch cannot be allocated.
 */
static bool
sort_changes(const PrEdgeChange *changes, size_t n, const PrAllocator *alloc, PrEdgeChange *out)
{
	uint64_t   *keys = (uint64_t *) pr_alloc_array(alloc, 2 * n + 2, sizeof(uint64_t));
	uint64_t   *sorted,
			   *spare;

	if (keys == NULL)
		return false;
	for (size_t i = 0; i < n; i++)
		keys[i] = (uint64_t) changes[i].src << 32 | (uint64_t) i;
	sorted = pr_radix_sort_u64(keys, keys + n + 1, n, 4);
	spare = sorted == keys ? keys + n + 1 : keys;
	for (size_t i = 0; i < n; i++)
	{
		uint32_t	at = (uint32_t) sorted[i];

		sorted[i] = (uint64_t) changes[at].dst << 32 | (uint64_t) at;
	}
	sorted = pr_radix_sort_u64(sorted, spare, n, 4);
	for (size_t i = 0; i < n; i++)
		out[i] = changes[(uint32_t) sorted[i]];
	pr_free(alloc, keys);
	for (size_t i = 1; i < n; i++)
	{
		PrEdgeChange x = out[i];
		size_t		j = i;

		for (; j > 0 && out[j - 1].dst == x.dst && out[j - 1].src == x.src &&
			 out[j - 1].weight > x.weight; j--)
			out[j] = out[j - 1];
		out[j] = x;
	}
	return true;
}

/*
 * The changes netted in root's internal ids (sorted by (dst, src, weight); both directions when
 * undirected) into a new array *net (*n_net rows): the ids looked up by parts on up to n_threads
 * threads, then radix-sorted (sort_changes).  When a change names a node root lacks, the changes
 * are netted first (such a row may cancel) and their nodes looked up after: PR_ERR_UNSUPPORTED
 * when one is left.
 */
static PrStatus
extend_net(const PrGraph *root, const PrEdgeChange *changes, size_t n, bool undirected,
		   int n_threads, const PrAllocator *alloc, PrEdgeChange **net, size_t *n_net,
		   PrError *err)
{
	ExtendPass	ids;
	size_t		count = n;

	memset(&ids, 0, sizeof(ExtendPass));
	ids.kind = PASS_IDS;
	ids.n = (int64_t) n;
	ids.root = root;
	ids.changes = changes;
	*net = NULL;
	ids.mapped = (PrEdgeChange *) pr_alloc_array(alloc, 2 * n + 1, sizeof(PrEdgeChange));
	if (ids.mapped == NULL)
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory for %zu changed rows", n);
	if (extend_pass(&ids, n_threads) < 0 && (uint64_t) n < ((uint64_t) 1 << 31))
	{
		if (undirected)
			count = add_reverses(ids.mapped, n);
		*net = (PrEdgeChange *) pr_alloc_array(alloc, count + 1, sizeof(PrEdgeChange));
		if (*net == NULL || !sort_changes(ids.mapped, count, alloc, *net))
		{
			pr_free(alloc, *net);
			pr_free(alloc, ids.mapped);
			*net = NULL;
			return pr_error_set(err, PR_ERR_NOMEM, "out of memory for %zu changed rows", n);
		}
		pr_free(alloc, ids.mapped);
		*n_net = net_sorted(*net, count);
		return PR_OK;
	}
	pr_free(alloc, ids.mapped);
	*net = net_changes(changes, n, undirected, alloc, n_net);
	if (*net == NULL)
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory for %zu changed rows", n);
	for (size_t i = 0; i < *n_net; i++)
	{
		int64_t		s = pr_graph_find(root, (*net)[i].src);
		int64_t		d = pr_graph_find(root, (*net)[i].dst);

		if (s < 0 || d < 0)
		{
			PrStatus	status = pr_error_set(err, PR_ERR_UNSUPPORTED,
											  "node %lld is not in the delta's root graph",
											  (long long) (s < 0 ? (*net)[i].src : (*net)[i].dst));

			pr_free(alloc, *net);
			*net = NULL;
			return status;
		}
		(*net)[i].src = s;
		(*net)[i].dst = d;
	}
	return PR_OK;
}

/*
 * The distinct node ids among ids[n] (64-bit keys, below 2^31), ascending, into out; returns
 * their count.  ids is scratch of 2n + 1 keys (radix-sorted in place).
 */
static int64_t
distinct_nodes(uint64_t *ids, size_t n, int32_t *out)
{
	const uint64_t *sorted = pr_radix_sort_u64(ids, ids + n + 1, n, 0);
	int64_t		count = 0;

	for (size_t i = 0; i < n; i++)
		if (count == 0 || out[count - 1] != (int32_t) sorted[i])
			out[count++] = (int32_t) sorted[i];
	return count;
}

/* The most edges an extend's copy takes at once before it tallies them (while they are cached). */
#define EXTEND_TALLY_EDGES 256

/*
 * What an extend reads of X1's edges (old's) as it copies them: the sum of their counts (X1's
 * edges less root's) and the largest weight of those with a positive count (0: none).
 */
typedef struct EdgeTally
{
	int64_t		count;
	double		largest;
} EdgeTally;

/*
 * Adds edge e to a lane's sum and largest weight without a branch on the data: its weight (its
 * bits kept when its count is positive, else +0, which is never above the largest) is taken when
 * above the largest so far (never a NaN; the largest is the same in any order).
 */
static inline void
tally_edge(const PrEdgeChange *e, int64_t *count, double *largest)
{
	uint64_t	bits;
	double		w;

	memcpy(&bits, &e->weight, sizeof(bits));
	bits &= -(uint64_t) (e->count > 0);
	memcpy(&w, &bits, sizeof(w));
	*count += e->count;
	*largest = w > *largest ? w : *largest;
}

/* Adds edges[from, to) to tally, in four lanes (independent sums and maxima that overlap). */
static void
tally_edges(const PrEdgeChange *edges, int64_t from, int64_t to, EdgeTally *tally)
{
	int64_t		c0 = 0,
				c1 = 0,
				c2 = 0,
				c3 = 0;
	double		l0 = tally->largest,
				l1 = l0,
				l2 = l0,
				l3 = l0;
	int64_t		e = from;

	for (; e + 4 <= to; e += 4)
	{
		tally_edge(&edges[e], &c0, &l0);
		tally_edge(&edges[e + 1], &c1, &l1);
		tally_edge(&edges[e + 2], &c2, &l2);
		tally_edge(&edges[e + 3], &c3, &l3);
	}
	for (; e < to; e++)
		tally_edge(&edges[e], &c0, &l0);
	l0 = l1 > l0 ? l1 : l0;
	l0 = l2 > l0 ? l2 : l0;
	l0 = l3 > l0 ? l3 : l0;
	tally->count += c0 + c1 + c2 + c3;
	tally->largest = l0;
}

/* Copies edges[from, to) to out and adds them to tally, EXTEND_TALLY_EDGES at a time. */
static void
copy_edges_tallied(const PrEdgeChange *edges, int64_t from, int64_t to, PrEdgeChange *out,
				   EdgeTally *tally)
{
	for (int64_t b = from; b < to; b += EXTEND_TALLY_EDGES)
	{
		int64_t		end = to - b < EXTEND_TALLY_EDGES ? to : b + EXTEND_TALLY_EDGES;

		memcpy(out + (b - from), edges + b, (size_t) (end - b) * sizeof(PrEdgeChange));
		tally_edges(edges, b, end, tally);
	}
}

/* The fewest items (edges or sources) a thread of an extend's copy of old's runs takes. */
#define EXTEND_COPY_PER_THREAD ((int64_t) 1 << 16)

/* The runs of old's edges or sources that an extend copies, by pr_parallel_run. */
typedef struct ExtendCopy
{
	const PrGraphDelta *old;
	PrGraphDelta *out;
	PrPatchRun *runs;
	int64_t		n_runs;
	int64_t		items;			/* in all the runs */
	EdgeTally	tally[PR_MAX_THREADS];	/* edges: each part's tally of the edges it copied */
} ExtendCopy;

/* A piece of a run of old's edges copied and tallied (RunPieceCopy). */
static void
copy_edge_piece(void *arg, int part, int64_t begin, int64_t end, int64_t out)
{
	ExtendCopy *c = (ExtendCopy *) arg;

	copy_edges_tallied(c->old->edges, begin, end, c->out->edges + out, &c->tally[part]);
}

/* pr_parallel_run's task: part `part` of n_parts of the runs of old's edges. */
static void
copy_edge_runs_part(void *arg, int part, int n_parts)
{
	ExtendCopy *c = (ExtendCopy *) arg;

	copy_run_pieces(c->runs, c->n_runs, c->items, part, n_parts, copy_edge_piece, c);
}

/* Runs task over copy's runs on up to n_threads threads (EXTEND_COPY_PER_THREAD items each). */
static void
extend_copy(ExtendCopy *copy, PrParallelTask task, int n_threads)
{
	pr_parallel_run(task, copy, pass_parts(n_threads, copy->items, EXTEND_COPY_PER_THREAD));
}

/*
 * X2's edges into out->edges (setting out->n_edges): old's and the netted changes net[n_net]
 * merged, each change at its place among old's edges (at[n_net], ascending: the first not before
 * it), where it adds its count to an equal edge of old's (a count 0 drops it) or comes in; the
 * runs of old's edges between the places copied whole on up to n_threads threads (runs: room for
 * the non-empty ones, no more than n_net + 1 nor old's edges).  Every edge of old's is added to
 * tally.
 */
static void
merge_edges(const PrGraphDelta *old, const PrEdgeChange *net, size_t n_net, const int64_t *at,
			PrPatchRun *runs, int n_threads, PrGraphDelta *out, EdgeTally *tally)
{
	ExtendCopy	copy;
	int64_t		a = 0,
				kept = 0;

	memset(&copy, 0, sizeof(ExtendCopy));
	copy.old = old;
	copy.out = out;
	copy.runs = runs;
	for (size_t b = 0; b <= n_net; b++)
	{
		int64_t		end = b < n_net ? at[b] : old->n_edges;
		PrEdgeChange next;

		add_run(runs, &copy.n_runs, &copy.items, a, end, kept);
		kept += end - a;
		a = end;
		if (b == n_net)
			break;
		next = net[b];
		if (a < old->n_edges && pr_edge_change_order(&old->edges[a], &next) == 0)
		{
			tally_edges(old->edges, a, a + 1, tally);
			next.count += old->edges[a++].count;
		}
		if (next.count != 0)
			out->edges[kept++] = next;
	}
	out->n_edges = kept;
	extend_copy(&copy, copy_edge_runs_part, n_threads);
	for (int part = 0; part < PR_MAX_THREADS; part++)
	{
		tally->count += copy.tally[part].count;
		if (copy.tally[part].largest > tally->largest)
			tally->largest = copy.tally[part].largest;
	}
}

/*
 * The step's sources (the distinct sources of an extend's netted changes) and where they and the
 * changes fall, in scratch of the order of the changes.
 */
typedef struct StepSources
{
	int64_t		n;
	int64_t		n_new;			/* those that are not old's sources */
	int32_t    *ids;			/* [n] ascending */
	int64_t    *old_at;			/* [n] the first of old's sources not below each */
	int64_t    *out_at;			/* [n] its place among X2's sources */
	double	   *magnitude;		/* [n] its X1 out-strength plus every |count * weight| of its
								 * changes (PR_DELTA_RECOUNT_FRACTION) */
	int64_t    *recount;		/* [n] the places among X2's sources of those recounted */
	int64_t    *change_at;		/* [n_net] the index of each change's source among ids */
} StepSources;

/* Frees a step's sources. */
static void
step_sources_free(StepSources *step, const PrAllocator *alloc)
{
	void	   *arrays[] = {step->ids, step->old_at, step->out_at, step->magnitude, step->recount,
	step->change_at};

	for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++)
		pr_free(alloc, arrays[i]);
	memset(step, 0, sizeof(StepSources));
}

/*
 * The step's sources of the netted changes net[n_net] into step, each one's place among old's
 * sources (binary searches) and the count of those old lacks.  False (nothing allocated) when
 * scratch cannot be allocated.
 */
static bool
step_sources_find(const PrGraphDelta *old, const PrEdgeChange *net, size_t n_net,
				  const PrAllocator *alloc, StepSources *step)
{
	uint64_t   *keys = (uint64_t *) pr_alloc_array(alloc, 2 * n_net + 1, sizeof(uint64_t));
	size_t		n;
	int64_t		lo = 0;

	memset(step, 0, sizeof(StepSources));
	step->ids = (int32_t *) pr_alloc_array(alloc, n_net + 1, sizeof(int32_t));
	step->change_at = (int64_t *) pr_alloc_array(alloc, n_net + 1, sizeof(int64_t));
	if (keys == NULL || step->ids == NULL || step->change_at == NULL)
	{
		pr_free(alloc, keys);
		step_sources_free(step, alloc);
		return false;
	}
	for (size_t c = 0; c < n_net; c++)
		keys[c] = (uint64_t) net[c].src;
	step->n = distinct_nodes(keys, n_net, step->ids);
	pr_free(alloc, keys);
	n = (size_t) step->n + 1;
	step->old_at = (int64_t *) pr_alloc_array(alloc, n, sizeof(int64_t));
	step->out_at = (int64_t *) pr_alloc_array(alloc, n, sizeof(int64_t));
	step->magnitude = (double *) pr_alloc_array(alloc, n, sizeof(double));
	step->recount = (int64_t *) pr_alloc_array(alloc, n, sizeof(int64_t));
	if (step->old_at == NULL || step->out_at == NULL || step->magnitude == NULL ||
		step->recount == NULL)
	{
		step_sources_free(step, alloc);
		return false;
	}
	for (int64_t j = 0; j < step->n; j++)
	{
		lo = pr_lower_bound_i32(old->sources, lo, old->n_sources, step->ids[j]);
		step->old_at[j] = lo;
		if (lo == old->n_sources || old->sources[lo] != step->ids[j])
			step->n_new++;
	}
	return true;
}

/* A piece of a run of old's sources copied, out-degrees and out-strengths too (RunPieceCopy). */
static void
copy_source_piece(void *arg, int part, int64_t begin, int64_t end, int64_t out)
{
	ExtendCopy *c = (ExtendCopy *) arg;
	size_t		n = (size_t) (end - begin);

	(void) part;
	memcpy(c->out->sources + out, c->old->sources + begin, n * sizeof(int32_t));
	memcpy(c->out->out_degree + out, c->old->out_degree + begin, n * sizeof(int64_t));
	memcpy(c->out->out_strength + out, c->old->out_strength + begin, n * sizeof(double));
}

/* pr_parallel_run's task: part `part` of n_parts of the runs of old's sources. */
static void
copy_source_runs_part(void *arg, int part, int n_parts)
{
	ExtendCopy *c = (ExtendCopy *) arg;

	copy_run_pieces(c->runs, c->n_runs, c->items, part, n_parts, copy_source_piece, c);
}

/*
 * X2's sources (old's united with the step's), out-degrees and out-strengths into out's arrays
 * (room for old's and step->n_new more; out's edges set): old's copied in runs between the step's
 * sources (runs: room for the non-empty ones, no more than step->n + 1 nor old's sources) on up
 * to n_threads threads; the step's sources take X1's values (old's, else root's) plus the netted
 * changes net[n_net] (internal ids; their sources found on up to n_threads threads), in the
 * changes' order; one whose incremental out-strength cancels (PR_DELTA_RECOUNT_FRACTION) is
 * recounted.  A source the step does not touch keeps old's values (exact, or recounted when they
 * were made).  False when scratch cannot be allocated.
 */
static bool
extend_sources(const PrGraph *root, const int64_t *root_out_degree, const PrGraphDelta *old,
			   const PrEdgeChange *net, size_t n_net, StepSources *step, PrPatchRun *runs,
			   int n_threads, const PrAllocator *alloc, PrGraphDelta *out)
{
	ExtendPass	positions;
	ExtendCopy	copy;
	int64_t		a = 0,
				kept = 0,
				n_recount = 0;

	/* old's runs, and X1's values of the step's sources */
	memset(&copy, 0, sizeof(ExtendCopy));
	copy.old = old;
	copy.out = out;
	copy.runs = runs;
	for (int64_t j = 0; j <= step->n; j++)
	{
		int64_t		end = j < step->n ? step->old_at[j] : old->n_sources;
		int32_t		s;

		add_run(runs, &copy.n_runs, &copy.items, a, end, kept);
		kept += end - a;
		a = end;
		if (j == step->n)
			break;
		s = step->ids[j];
		step->out_at[j] = kept;
		out->sources[kept] = s;
		if (a < old->n_sources && old->sources[a] == s)
		{
			out->out_degree[kept] = old->out_degree[a];
			out->out_strength[kept] = old->out_strength[a];
			a++;
		}
		else
		{
			out->out_degree[kept] = root_degree(root, root_out_degree, s);
			out->out_strength[kept] = root->out_strength[s];
		}
		step->magnitude[j] = out->out_strength[kept];
		kept++;
	}
	out->n_sources = kept;
	extend_copy(&copy, copy_source_runs_part, n_threads);
	/* plus the changes */
	memset(&positions, 0, sizeof(ExtendPass));
	positions.kind = PASS_SOURCES;
	positions.n = (int64_t) n_net;
	positions.changes = net;
	positions.candidates = step->ids;
	positions.n_candidates = step->n;
	positions.at = step->change_at;
	extend_pass(&positions, n_threads);
	for (size_t c = 0; c < n_net; c++)
	{
		int64_t		j = step->change_at[c];
		int64_t		i = step->out_at[j];
		double		term = (double) net[c].count * net[c].weight;

		out->out_degree[i] += net[c].count;
		if (root->weighted)
		{
			out->out_strength[i] += term;
			step->magnitude[j] += fabs(term);
		}
	}
	for (int64_t j = 0; j < step->n; j++)
	{
		int64_t		i = step->out_at[j];

		if (!root->weighted)
			out->out_strength[i] = (double) out->out_degree[i];
		else if (out->out_degree[i] == 0)
			out->out_strength[i] = 0.0;
		else if (step->magnitude[j] > 0.0 &&
				 out->out_strength[i] <= step->magnitude[j] * PR_DELTA_RECOUNT_FRACTION)
			step->recount[n_recount++] = i;
	}
	return n_recount == 0 ||
		recount_strengths(root, root_out_degree, out, step->recount, n_recount, alloc);
}

/*
 * X2's absent nodes into out->absent (out's edges and sources set): old's absent nodes that no
 * change touches (still without an edge), copied in runs, and the changes' endpoints without an
 * in-edge or out-edge in X2 (checked on up to n_threads threads).  False when scratch cannot be
 * allocated.
 */
static bool
extend_absent(const PrGraph *root, const int64_t *root_out_degree, const PrGraphDelta *old,
			  const PrEdgeChange *net, size_t n_net, int n_threads, const PrAllocator *alloc,
			  PrGraphDelta *out)
{
	uint64_t   *ids = (uint64_t *) pr_alloc_array(alloc, 4 * n_net + 2, sizeof(uint64_t));
	int32_t    *candidates = (int32_t *) pr_alloc_array(alloc, 2 * n_net + 1, sizeof(int32_t));
	ExtendPass	check;
	int64_t		i = 0;

	memset(&check, 0, sizeof(ExtendPass));
	check.kind = PASS_ABSENT;
	check.root = root;
	check.root_out_degree = root_out_degree;
	check.delta = out;
	check.candidates = candidates;
	check.absent = (uint8_t *) pr_alloc_array(alloc, 2 * n_net + 1, 1);
	if (ids == NULL || candidates == NULL || check.absent == NULL)
	{
		pr_free(alloc, ids);
		pr_free(alloc, candidates);
		pr_free(alloc, check.absent);
		return false;
	}
	for (size_t c = 0; c < n_net; c++)
	{
		ids[2 * c] = (uint64_t) net[c].src;
		ids[2 * c + 1] = (uint64_t) net[c].dst;
	}
	check.n = distinct_nodes(ids, 2 * n_net, candidates);
	check.n_candidates = check.n;
	pr_free(alloc, ids);
	extend_pass(&check, n_threads);
	out->n_absent = 0;
	for (int64_t k = 0; k <= check.n; k++)
	{
		int64_t		end = k < check.n ?
			pr_lower_bound_i32(old->absent, i, old->n_absent, candidates[k]) : old->n_absent;

		if (end > i)
			memcpy(out->absent + out->n_absent, old->absent + i,
				   (size_t) (end - i) * sizeof(int32_t));
		out->n_absent += end - i;
		i = end;
		if (k == check.n)
			break;
		if (i < old->n_absent && old->absent[i] == candidates[k])
			i++;
		if (check.absent[k])
			out->absent[out->n_absent++] = candidates[k];
	}
	pr_free(alloc, candidates);
	pr_free(alloc, check.absent);
	return true;
}

/*
 * Allocates out's arrays for at most the counts given, from alloc; with flat, only its edges,
 * at their place there (pr_graph_delta_flat_edges; pr_graph_delta_flat_place places the others
 * once their counts are known).  False (nothing allocated) when out of memory.
 */
static bool
extend_alloc(PrGraphDelta *out, int64_t n_nodes, int64_t n_edges, int64_t n_sources,
			 int64_t n_absent, void *flat, const PrAllocator *alloc)
{
	if (flat == NULL)
		return pr_graph_delta_alloc(out, n_nodes, n_edges, n_sources, n_absent, alloc);
	memset(out, 0, sizeof(PrGraphDelta));
	out->n_nodes = n_nodes;
	out->edges = pr_graph_delta_flat_edges(flat);
	return true;
}

/* Frees out's arrays but those in flat (all of them when flat is not NULL: extend_alloc). */
static void
extend_release(PrGraphDelta *out, void *flat, const PrAllocator *alloc)
{
	if (flat != NULL)
		memset(out, 0, sizeof(PrGraphDelta));
	else
		pr_graph_delta_free(out, alloc);
}

/* An extend's scratch of the order of the changes. */
typedef struct ExtendScratch
{
	PrEdgeChange *net;			/* the netted changes (extend_net) */
	int64_t    *at;				/* each one's place among old's edges (PASS_PLACES) */
	PrPatchRun *runs;			/* the runs of old's edges, then sources, copied (at most one
								 * more than the changes, none empty) */
	StepSources step;
} ExtendScratch;

/* Frees an extend's scratch. */
static void
extend_scratch_free(ExtendScratch *scratch, const PrAllocator *alloc)
{
	pr_free(alloc, scratch->net);
	pr_free(alloc, scratch->at);
	pr_free(alloc, scratch->runs);
	step_sources_free(&scratch->step, alloc);
	memset(scratch, 0, sizeof(ExtendScratch));
}

/* Frees an extend's scratch and out, and returns status (set in err by the caller). */
static PrStatus
extend_fail(const PrAllocator *alloc, PrGraphDelta *out, void *flat, ExtendScratch *scratch,
			PrStatus status)
{
	extend_release(out, flat, alloc);
	extend_scratch_free(scratch, alloc);
	return status;
}

/* Bytes of the flat buffer pr_graph_delta_extend_flat may fill (pr_graph.h). */
size_t
pr_graph_delta_extend_size(const PrGraphDelta *old, size_t n_changes, bool undirected)
{
	PrGraphDelta most;
	int64_t		net = (int64_t) n_changes * (undirected ? 2 : 1);

	memset(&most, 0, sizeof(PrGraphDelta));
	most.n_nodes = old->n_nodes;
	most.n_edges = old->n_edges + net;
	most.n_sources = old->n_sources + net < old->n_nodes ? old->n_sources + net : old->n_nodes;
	most.n_absent = old->n_absent + 2 * net < old->n_nodes ? old->n_absent + 2 * net :
		old->n_nodes;
	most.out_degree = &most.n_edges;	/* not read: the flat form keeps out-degrees */
	return pr_graph_delta_flat_size(&most);
}

/*
 * root -> X2 from root -> X1 (old) and the rows changed since X1 (pr_graph.h), into out's own
 * arrays (flat NULL) or written into flat in the flat form (out its view).  Besides the changes'
 * own work (netting, and binary searches in root and old), it copies old's arrays in runs between
 * the changes' places and reads each of old's edges once more as it copies them (EdgeTally); a
 * source or absent node of old's that no change touches is not looked at one by one.
 */
static PrStatus
extend_delta(const PrGraph *root, const int64_t *root_out_degree,
			 const PrWeightRange *root_range, const PrGraphDelta *old,
			 const PrEdgeChange *changes, size_t n_changes, bool undirected, int n_threads,
			 const PrAllocator *alloc, void *flat, size_t flat_size, PrGraphDelta *out,
			 int64_t *changed_edges, PrError *err)
{
	ExtendScratch scratch;
	size_t		n_net = 0;
	ExtendPass	places;
	EdgeTally	tally = {0, 0.0};
	int64_t		missing;
	int64_t		changed = 0,
				net_count = 0,
				most_runs,
				edges_after;
	PrStatus	status;

	memset(out, 0, sizeof(PrGraphDelta));
	memset(&scratch, 0, sizeof(ExtendScratch));
	if (old->n_nodes != root->n_nodes)
		return pr_error_set(err, PR_ERR_INVALID, "a delta of %lld nodes for a graph of %lld",
							(long long) old->n_nodes, (long long) root->n_nodes);
	if ((root->weighted && root_out_degree == NULL) ||
		(old->n_sources > 0 && old->out_degree == NULL))
		return pr_error_set(err, PR_ERR_INVALID, "extending a delta without out-degrees");
	if (flat != NULL &&
		(((uintptr_t) flat & 7) != 0 ||
		 flat_size < pr_graph_delta_extend_size(old, n_changes, undirected)))
		return pr_error_set(err, PR_ERR_INVALID,
							"a flat buffer of %zu bytes for a delta extended by %zu rows",
							flat_size, n_changes);
	status = extend_net(root, changes, n_changes, undirected, n_threads, alloc, &scratch.net,
						&n_net, err);
	if (status != PR_OK)
		return status;
	for (size_t i = 0; i < n_net; i++)
	{
		changed += scratch.net[i].count > 0 ? scratch.net[i].count : -scratch.net[i].count;
		net_count += scratch.net[i].count;
	}

	/* every change's place among old's edges, and every deletion checked against X1, by parts */
	scratch.at = (int64_t *) pr_alloc_array(alloc, n_net + 1, sizeof(int64_t));
	most_runs = old->n_edges > old->n_sources ? old->n_edges : old->n_sources;
	most_runs = most_runs < (int64_t) n_net + 1 ? most_runs : (int64_t) n_net + 1;
	scratch.runs = (PrPatchRun *) pr_alloc_array(alloc, (size_t) most_runs + 1,
												 sizeof(PrPatchRun));
	if (scratch.at == NULL || scratch.runs == NULL)
		return extend_fail(alloc, out, NULL, &scratch,
						   pr_error_set(err, PR_ERR_NOMEM, "out of memory for %zu changed rows",
										n_changes));
	memset(&places, 0, sizeof(ExtendPass));
	places.kind = PASS_PLACES;
	places.n = (int64_t) n_net;
	places.root = root;
	places.delta = old;
	places.changes = scratch.net;
	places.at = scratch.at;
	missing = extend_pass(&places, n_threads);
	if (missing >= 0)
	{
		const PrEdgeChange *c = &scratch.net[missing];

		status = pr_error_set(err, PR_ERR_INVALID,
							  "a deleted edge %lld -> %lld (weight %g) is not in the graph",
							  (long long) root->node_ids[c->src],
							  (long long) root->node_ids[c->dst], c->weight);
		return extend_fail(alloc, out, NULL, &scratch, status);
	}

	if (!step_sources_find(old, scratch.net, n_net, alloc, &scratch.step) ||
		!extend_alloc(out, root->n_nodes, old->n_edges + (int64_t) n_net,
					  old->n_sources + (int64_t) n_net, old->n_absent + 2 * (int64_t) n_net,
					  flat, alloc))
		return extend_fail(alloc, out, NULL, &scratch,
						   pr_error_set(err, PR_ERR_NOMEM, "out of memory for %zu changed rows",
										n_changes));

	/* the edges: old's and the changes merged (old's in runs) */
	merge_edges(old, scratch.net, n_net, scratch.at, scratch.runs, n_threads, out, &tally);
	edges_after = root->n_edges + tally.count + net_count;
	if (edges_after <= 0)
		return extend_fail(alloc, out, flat, &scratch,
						   pr_error_set(err, PR_ERR_INVALID, "the changed graph has %lld edges",
										(long long) edges_after));
	if (!extend_weights(root, root_range, tally.largest, scratch.net, n_net, edges_after))
		return extend_fail(alloc, out, flat, &scratch,
						   pr_error_set(err, PR_ERR_INVALID, "weights the build would scale"));

	/* the sources (old's and the changes') and the absent nodes, at their places in flat */
	if (flat != NULL)
		pr_graph_delta_flat_place(flat, out->n_edges, old->n_sources + scratch.step.n_new, out);
	if (!extend_sources(root, root_out_degree, old, scratch.net, n_net, &scratch.step,
						scratch.runs, n_threads, alloc, out) ||
		!extend_absent(root, root_out_degree, old, scratch.net, n_net, n_threads, alloc, out))
		return extend_fail(alloc, out, flat, &scratch,
						   pr_error_set(err, PR_ERR_NOMEM,
										"out of memory for the sources of %zu changed rows",
										n_changes));
	extend_scratch_free(&scratch, alloc);
	if (flat != NULL)
	{
		/* the header and padding: every array is at its place already */
		pr_graph_delta_write_flat(out, flat);
		status = pr_graph_delta_view_flat(flat, flat_size, out, err);
		if (status != PR_OK)
			return status;
	}
	if (changed_edges != NULL)
		*changed_edges = changed;
	return PR_OK;
}

/* root -> X2 from root -> X1 (old) and the rows changed since X1, in out's own arrays (pr_graph.h). */
PrStatus
pr_graph_delta_extend(const PrGraph *root, const int64_t *root_out_degree,
					  const PrWeightRange *root_range, const PrGraphDelta *old,
					  const PrEdgeChange *changes, size_t n_changes, bool undirected,
					  int n_threads, const PrAllocator *alloc, PrGraphDelta *out,
					  int64_t *changed_edges, PrError *err)
{
	return extend_delta(root, root_out_degree, root_range, old, changes, n_changes, undirected,
						n_threads, alloc, NULL, 0, out, changed_edges, err);
}

/* pr_graph_delta_extend written straight into a flat buffer (pr_graph.h). */
PrStatus
pr_graph_delta_extend_flat(const PrGraph *root, const int64_t *root_out_degree,
						   const PrWeightRange *root_range, const PrGraphDelta *old,
						   const PrEdgeChange *changes, size_t n_changes, bool undirected,
						   int n_threads, const PrAllocator *alloc, void *flat, size_t flat_size,
						   PrGraphDelta *out, int64_t *changed_edges, PrError *err)
{
	return extend_delta(root, root_out_degree, root_range, old, changes, n_changes, undirected,
						n_threads, alloc, flat, flat_size, out, changed_edges, err);
}
