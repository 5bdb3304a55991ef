/*
 * pr_graph_delta.c — a graph patched with changed rows: the graph pr_graph_build would give for
 * the base graph's rows plus inserted rows minus deleted ones, made from the base's in-CSR without
 * the rows.
 *
 * Changes are rows with a signed count (+k: k copies inserted, -k: k copies deleted).  They are
 * sorted by (destination, source, weight) and netted; an undirected graph takes each row in both
 * directions (a self-loop once), as the build does.  The new node set is the base's, less the
 * nodes left without an edge, plus the new endpoints of inserted rows; both are in ascending id
 * order, so mapping an old internal id to a new one keeps every in-row sorted.  Each in-row is the
 * base's row (sources mapped) merged with its changes in (source, weight) order, which is the
 * build's order (sources ascending, parallel edges by weight).  Out-strengths are summed again
 * over the in-CSR in the build's order, so they are the same doubles a build gives.
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

/* Orders changes by destination, source, weight. */
static int
change_order(const void *a, const void *b)
{
	const PrEdgeChange *x = (const PrEdgeChange *) a;
	const PrEdgeChange *y = (const PrEdgeChange *) b;

	if (x->dst != y->dst)
		return x->dst < y->dst ? -1 : 1;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	if (x->weight != y->weight)
		return x->weight < y->weight ? -1 : 1;
	return 0;
}

/* Orders int64 ids. */
static int
id_order(const void *a, const void *b)
{
	int64_t		x = *(const int64_t *) a;
	int64_t		y = *(const int64_t *) b;

	return x < y ? -1 : (x > y ? 1 : 0);
}

/* Index of id in the ascending ids[n], or -1. */
static int64_t
find_id(const int64_t *ids, int64_t n, int64_t id)
{
	int64_t		lo = 0,
				hi = n;

	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (lo < n && ids[lo] == id) ? lo : -1;
}

/* Weight of in-edge e of g (1 when unweighted). */
static inline double
edge_weight(const PrGraph *g, int64_t e)
{
	return g->in_weight != NULL ? g->in_weight[e] : 1.0;
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
	size_t		count = 0,
				kept = 0;

	if (all == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++)
	{
		all[count++] = changes[i];
		if (undirected && changes[i].src != changes[i].dst)
		{
			all[count] = changes[i];
			all[count].src = changes[i].dst;
			all[count].dst = changes[i].src;
			count++;
		}
	}
	qsort(all, count, sizeof(PrEdgeChange), change_order);
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
	*n_out = kept;
	return all;
}

/*
 * True when a weighted base holds the weights of its rows unscaled and the patched graph needs no
 * scaling either: base and new weights finite, >= 0, none positive below 2^-1021 (a scaled-up
 * base's smallest lies below it), and the largest weight times the stored edges below 2^1018 for
 * the base (a scaled-down base's is above) and 2^(PR_STRENGTH_LIMIT_EXP - 1) for the result.
 */
static bool
weights_unscaled(const PrGraph *base, const PrEdgeChange *changes, size_t n, int64_t new_edges)
{
	double		low = ldexp(1.0, -1021);
	double		base_max = 0.0,
				new_max;

	for (int64_t e = 0; e < base->n_edges; e++)
	{
		double		w = base->in_weight[e];

		if (w > base_max)
			base_max = w;
		if (w > 0.0 && w < low)
			return false;
	}
	if (base_max * (double) base->n_edges >= ldexp(1.0, PR_STRENGTH_LIMIT_EXP - 2))
		return false;
	new_max = base_max;
	for (size_t i = 0; i < n; i++)
	{
		double		w = changes[i].weight;

		if (changes[i].count <= 0)
			continue;
		if (!(w >= 0.0 && w <= DBL_MAX) || (w > 0.0 && w < low))
			return false;
		if (w > new_max)
			new_max = w;
	}
	return new_max * (double) new_edges < ldexp(1.0, PR_STRENGTH_LIMIT_EXP - 1);
}

/* Frees what pr_graph_apply_changes allocated for out and its scratch. */
static void
free_all(PrGraph *out, void **scratch, int n_scratch, const PrAllocator *alloc)
{
	pr_graph_free(out, alloc);
	for (int i = 0; i < n_scratch; i++)
		pr_free(alloc, scratch[i]);
}

PrStatus
pr_graph_apply_changes(const PrGraph *base, const PrEdgeChange *changes, size_t n_changes,
					   bool undirected, const PrAllocator *alloc, PrGraph *out, PrError *err)
{
	size_t		n_net = 0;
	PrEdgeChange *net;
	int64_t    *degree = NULL;	/* base nodes: in + out degree after the changes */
	int64_t    *fresh = NULL;	/* ids new to the graph, ascending */
	int64_t		n_fresh = 0;
	int32_t    *map = NULL;		/* base node -> new node, or -1 */
	int64_t    *in_delta = NULL;	/* base nodes: net change of the in-degree */
	int64_t		n_new = 0,
				m_new = 0,
				capacity;
	bool		identity;
	void	   *scratch[4];
	int			n_scratch = 0;

	memset(out, 0, sizeof(PrGraph));
	if (base->has_out_edges && base->out_ptr == NULL)
		return pr_error_set(err, PR_ERR_INVALID, "base graph without its out-edge arrays");
	net = net_changes(changes, n_changes, undirected, alloc, &n_net);
	if (net == NULL)
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory for %zu changed rows", n_changes);
	scratch[n_scratch++] = net;
	degree = (int64_t *) pr_alloc_array(alloc, (size_t) base->n_nodes + 1, sizeof(int64_t));
	in_delta = (int64_t *) pr_alloc_array(alloc, (size_t) base->n_nodes + 1, sizeof(int64_t));
	fresh = (int64_t *) pr_alloc_array(alloc, n_net * 2 + 1, sizeof(int64_t));
	scratch[n_scratch++] = degree;
	scratch[n_scratch++] = in_delta;
	scratch[n_scratch++] = fresh;
	if (degree == NULL || in_delta == NULL || fresh == NULL)
	{
		free_all(out, scratch, n_scratch, alloc);
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory for a graph of %lld nodes",
							(long long) base->n_nodes);
	}

	/* degrees of the base nodes (in + out), then the changes' */
	memset(in_delta, 0, (size_t) base->n_nodes * sizeof(int64_t));
	for (int64_t v = 0; v < base->n_nodes; v++)
		degree[v] = base->in_ptr[v + 1] - base->in_ptr[v];
	for (int64_t e = 0; e < base->n_edges; e++)
		degree[base->in_src[e]]++;
	m_new = base->n_edges;
	capacity = base->n_edges + 1;
	for (size_t i = 0; i < n_net; i++)
	{
		int64_t		s = find_id(base->node_ids, base->n_nodes, net[i].src);
		int64_t		d = find_id(base->node_ids, base->n_nodes, net[i].dst);

		m_new += net[i].count;
		if (net[i].count > 0)
			capacity += net[i].count;
		if ((s < 0 || d < 0) && net[i].count < 0)
		{
			free_all(out, scratch, n_scratch, alloc);
			return pr_error_set(err, PR_ERR_INVALID, "a deleted edge %lld -> %lld is not in the graph",
								(long long) net[i].src, (long long) net[i].dst);
		}
		if (s >= 0)
			degree[s] += net[i].count;
		else
			fresh[n_fresh++] = net[i].src;
		if (d >= 0)
		{
			degree[d] += net[i].count;
			in_delta[d] += net[i].count;
		}
		else
			fresh[n_fresh++] = net[i].dst;
	}
	if (base->weighted && !weights_unscaled(base, net, n_net, m_new))
	{
		free_all(out, scratch, n_scratch, alloc);
		return pr_error_set(err, PR_ERR_INVALID, "weights the build would scale");
	}
	if (n_fresh > 1)
		qsort(fresh, (size_t) n_fresh, sizeof(int64_t), id_order);
	{
		int64_t		unique = 0;

		for (int64_t i = 0; i < n_fresh; i++)
			if (unique == 0 || fresh[unique - 1] != fresh[i])
				fresh[unique++] = fresh[i];
		n_fresh = unique;
	}

	/* the new node set: base nodes with an edge left, merged with the fresh ids */
	map = (int32_t *) pr_alloc_array(alloc, (size_t) base->n_nodes + 1, sizeof(int32_t));
	if (map == NULL)
	{
		free_all(out, scratch, n_scratch, alloc);
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory for the node map");
	}
	for (int64_t v = 0; v < base->n_nodes; v++)
	{
		if (degree[v] < 0 || in_delta[v] < -(base->in_ptr[v + 1] - base->in_ptr[v]))
		{
			pr_free(alloc, map);
			free_all(out, scratch, n_scratch, alloc);
			return pr_error_set(err, PR_ERR_INVALID, "more edges deleted at node %lld than it has",
								(long long) base->node_ids[v]);
		}
		if (degree[v] > 0)
			n_new++;
	}
	n_new += n_fresh;
	if (n_new > PR_MAX_NODES || m_new <= 0)
	{
		pr_free(alloc, map);
		free_all(out, scratch, n_scratch, alloc);
		return pr_error_set(err, n_new > PR_MAX_NODES ? PR_ERR_TOO_LARGE : PR_ERR_INVALID,
							"the patched graph has %lld nodes and %lld edges",
							(long long) n_new, (long long) m_new);
	}
	out->n_nodes = n_new;
	out->n_edges = m_new;
	out->weighted = base->weighted;
	out->node_ids = (int64_t *) pr_alloc_array(alloc, (size_t) n_new, sizeof(int64_t));
	out->in_ptr = (int64_t *) pr_alloc_array(alloc, (size_t) n_new + 1, sizeof(int64_t));
	/* room for every base edge and every insert: a patch that fails its checks cannot overrun */
	out->in_src = (int32_t *) pr_alloc_array(alloc, (size_t) capacity, sizeof(int32_t));
	out->in_weight = base->weighted ?
		(double *) pr_alloc_array(alloc, (size_t) capacity, sizeof(double)) : NULL;
	out->out_strength = (double *) pr_alloc_array(alloc, (size_t) n_new, sizeof(double));
	if (out->node_ids == NULL || out->in_ptr == NULL || out->in_src == NULL ||
		(base->weighted && out->in_weight == NULL) || out->out_strength == NULL)
	{
		pr_free(alloc, map);
		free_all(out, scratch, n_scratch, alloc);
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory for a graph of %lld edges",
							(long long) m_new);
	}
	{
		int64_t		i = 0,
					j = 0,
					k = 0;

		while (i < base->n_nodes || j < n_fresh)
		{
			if (j >= n_fresh || (i < base->n_nodes && base->node_ids[i] < fresh[j]))
			{
				map[i] = degree[i] > 0 ? (int32_t) k : -1;
				if (degree[i] > 0)
					out->node_ids[k++] = base->node_ids[i];
				i++;
			}
			else
				out->node_ids[k++] = fresh[j++];
		}
	}
	identity = (n_new == base->n_nodes && n_fresh == 0);

	/*
	 * The in-rows, over every id of the base and the fresh ones: the base's row, mapped, merged
	 * with its changes; a vanishing node's row must net to nothing.
	 */
	{
		size_t		c = 0;
		int64_t		e_out = 0;
		int64_t		i = 0,
					j = 0,
					v = 0;

		while (i < base->n_nodes || j < n_fresh)
		{
			bool		from_base = j >= n_fresh ||
				(i < base->n_nodes && base->node_ids[i] < fresh[j]);
			int64_t		id = from_base ? base->node_ids[i] : fresh[j];
			bool		kept = !from_base || degree[i] > 0;
			int64_t		b = from_base ? base->in_ptr[i] : 0;
			int64_t		b_end = from_base ? base->in_ptr[i + 1] : 0;
			int64_t		row_start = e_out;

			if (from_base)
				i++;
			else
				j++;
			if (kept)
				out->in_ptr[v] = e_out;
			if (c >= n_net || net[c].dst != id)
			{
				if (identity)
				{
					memcpy(out->in_src + e_out, base->in_src + b, (size_t) (b_end - b) * sizeof(int32_t));
					if (base->weighted)
						memcpy(out->in_weight + e_out, base->in_weight + b,
							   (size_t) (b_end - b) * sizeof(double));
					e_out += b_end - b;
				}
				else
					for (int64_t e = b; e < b_end; e++)
					{
						out->in_src[e_out] = map[base->in_src[e]];
						if (base->weighted)
							out->in_weight[e_out] = base->in_weight[e];
						e_out++;
					}
			}
			for (; c < n_net && net[c].dst == id; c++)
			{
				int64_t		s_ext = net[c].src;
				int32_t		s_new = (int32_t) find_id(out->node_ids, n_new, net[c].src);
				double		w = net[c].weight;
				int64_t		count = net[c].count;

				/* base edges ordered before (s_ext, w) */
				while (b < b_end &&
					   (base->node_ids[base->in_src[b]] < s_ext ||
						(base->node_ids[base->in_src[b]] == s_ext && edge_weight(base, b) < w)))
				{
					out->in_src[e_out] = map[base->in_src[b]];
					if (base->weighted)
						out->in_weight[e_out] = base->in_weight[b];
					e_out++;
					b++;
				}
				/* base edges equal to it: they and the change's copies, netted */
				while (b < b_end && base->node_ids[base->in_src[b]] == s_ext &&
					   edge_weight(base, b) == w)
				{
					count++;
					b++;
				}
				if (count < 0 || (count > 0 && s_new < 0))
				{
					pr_free(alloc, map);
					free_all(out, scratch, n_scratch, alloc);
					return pr_error_set(err, PR_ERR_INVALID,
										"a deleted edge %lld -> %lld (weight %g) is not in the graph",
										(long long) net[c].src, (long long) id, w);
				}
				for (int64_t k = 0; k < count; k++)
				{
					out->in_src[e_out] = s_new;
					if (base->weighted)
						out->in_weight[e_out] = w;
					e_out++;
				}
				if (c + 1 == n_net || net[c + 1].dst != id)
					for (; b < b_end; b++)
					{
						out->in_src[e_out] = map[base->in_src[b]];
						if (base->weighted)
							out->in_weight[e_out] = base->in_weight[b];
						e_out++;
					}
			}
			if (kept)
				v++;
			else if (e_out != row_start)
			{
				pr_free(alloc, map);
				free_all(out, scratch, n_scratch, alloc);
				return pr_error_set(err, PR_ERR_INVALID, "node %lld keeps in-edges the changes delete",
									(long long) id);
			}
		}
		out->in_ptr[n_new] = e_out;
		if (e_out != m_new)
		{
			pr_free(alloc, map);
			free_all(out, scratch, n_scratch, alloc);
			return pr_error_set(err, PR_ERR_INVALID, "patched edge count %lld, expected %lld",
								(long long) e_out, (long long) m_new);
		}
	}
	pr_free(alloc, map);

	/* out-strengths in the build's order (in-CSR order), then the dangling nodes */
	memset(out->out_strength, 0, (size_t) n_new * sizeof(double));
	for (int64_t e = 0; e < m_new; e++)
		out->out_strength[out->in_src[e]] += out->weighted ? out->in_weight[e] : 1.0;
	for (int64_t v = 0; v < n_new; v++)
		if (out->out_strength[v] == 0.0)
			out->n_dangling++;
	out->dangling = (int32_t *) pr_alloc_array(alloc, (size_t) out->n_dangling + 1, sizeof(int32_t));
	if (out->dangling == NULL)
	{
		free_all(out, scratch, n_scratch, alloc);
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory for the dangling list");
	}
	{
		int64_t		k = 0;

		for (int64_t v = 0; v < n_new; v++)
			if (out->out_strength[v] == 0.0)
				out->dangling[k++] = (int32_t) v;
	}
	for (int i = 0; i < n_scratch; i++)
		pr_free(alloc, scratch[i]);
	return PR_OK;
}
