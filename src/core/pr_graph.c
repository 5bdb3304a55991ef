/*
 * pr_graph.c — builds the CSR graph from an edge list: id map, in-CSR by destination, optional
 * out-CSR, out-strengths and the dangling list.
 *
 * Ids: when the external ids span a range not much larger than the edge list, a direct table over
 * that range maps them (one linear pass); otherwise the endpoints are radix-sorted, deduplicated,
 * and looked up by a bucketed binary search.  Edges: a counting sort by source (input order kept),
 * then a counting sort of that by destination visiting sources in ascending order, so every in-row
 * lists its sources ascending; the out-CSR is made the same way from the in-CSR.
 */
#include "pr_graph.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Allocates count elements of type through alloc (macro to keep call sites short). */
#define ALLOC_ARRAY(alloc, type, count) ((type *) pr_alloc_array((alloc), (size_t) (count), sizeof(type)))

/* Describes a bad weight for the error message ("NaN", "Infinity", or the number). */
static void
describe_weight(double w, char *buf, size_t len)
{
	if (isnan(w))
		snprintf(buf, len, "NaN");
	else if (isinf(w))
		snprintf(buf, len, "%sInfinity", w < 0 ? "-" : "");
	else
		snprintf(buf, len, "%g", w);
}

/* Checks that every weight is finite and >= 0; reports the first offending row. */
static PrStatus
validate_weights(const double *weight, size_t m, PrError *err)
{
	for (size_t i = 0; i < m; i++)
	{
		double		w = weight[i];

		if (!(w >= 0.0) || isinf(w))
		{
			char		text[64];

			describe_weight(w, text, sizeof(text));
			return pr_error_set(err, PR_ERR_INVALID,
								"invalid weight %s in edge row %zu: weights must be finite and >= 0",
								text, i);
		}
	}
	return PR_OK;
}

/* Maps a signed id to an unsigned key with the same order. */
static inline uint64_t
id_key(int64_t id)
{
	return (uint64_t) id ^ UINT64_C(0x8000000000000000);
}

/*
 * Sorts keys[0..count) ascending with an LSD radix sort on bytes, skipping bytes that are equal
 * in every key; tmp has room for count keys.  Returns the buffer holding the result.
 */
static uint64_t *
radix_sort_keys(uint64_t *keys, uint64_t *tmp, size_t count)
{
	enum {n_passes = 8};
	size_t		hist[n_passes][256];
	uint64_t   *from = keys;
	uint64_t   *to = tmp;

	memset(hist, 0, sizeof(hist));
	for (size_t i = 0; i < count; i++)
	{
		uint64_t	k = keys[i];

		for (int p = 0; p < n_passes; p++)
			hist[p][(k >> (8 * p)) & 0xff]++;
	}
	for (int p = 0; p < n_passes; p++)
	{
		size_t		offset = 0;
		bool		trivial = false;

		for (int b = 0; b < 256; b++)
		{
			size_t		c = hist[p][b];

			if (c == count)
				trivial = true;
			hist[p][b] = offset;
			offset += c;
		}
		if (trivial)
			continue;
		for (size_t i = 0; i < count; i++)
		{
			uint64_t	k = from[i];

			to[hist[p][(k >> (8 * p)) & 0xff]++] = k;
		}
		{
			uint64_t   *swap = from;

			from = to;
			to = swap;
		}
	}
	return from;
}

/* The id map: sorted unique external ids and how to find an id's rank. */
typedef struct IdMap
{
	int64_t		n;
	int64_t    *node_ids;		/* [n] ascending (handed to the graph) */
	int64_t		min_id;
	/* dense form: table[id - min_id] = rank */
	int32_t    *table;
	/* sparse form: ranks of ids whose (id - min) >> shift == b lie in [bucket[b], bucket[b+1]) */
	int64_t    *bucket;
	int			shift;
} IdMap;

/* Frees the lookup structures of an id map (not node_ids). */
static void
id_map_free_lookup(IdMap *map, const PrAllocator *alloc)
{
	pr_free(alloc, map->table);
	pr_free(alloc, map->bucket);
	map->table = NULL;
	map->bucket = NULL;
}

/* Rank of an id known to be present in the map. */
static inline int32_t
id_map_lookup(const IdMap *map, int64_t id)
{
	uint64_t	diff = (uint64_t) id - (uint64_t) map->min_id;
	int64_t		lo,
				hi;

	if (map->table != NULL)
		return map->table[diff];
	lo = map->bucket[diff >> map->shift];
	hi = map->bucket[(diff >> map->shift) + 1];
	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (map->node_ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (int32_t) lo;
}

/* Builds the id map through a direct table over [min_id, min_id + range). */
static PrStatus
id_map_build_dense(const int64_t *src, const int64_t *dst, size_t m, uint64_t range,
				   const PrAllocator *alloc, IdMap *map, PrError *err)
{
	int32_t    *table;
	int64_t		n = 0;

	table = ALLOC_ARRAY(alloc, int32_t, range);
	if (table == NULL)
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory building the node id map");
	memset(table, 0, range * sizeof(int32_t));
	for (size_t i = 0; i < m; i++)
	{
		table[(uint64_t) src[i] - (uint64_t) map->min_id] = 1;
		table[(uint64_t) dst[i] - (uint64_t) map->min_id] = 1;
	}
	for (uint64_t i = 0; i < range; i++)
		n += table[i];
	if (n > PR_MAX_NODES)
	{
		pr_free(alloc, table);
		return pr_error_set(err, PR_ERR_TOO_LARGE,
							"graph has %lld nodes; at most %lld are supported",
							(long long) n, (long long) PR_MAX_NODES);
	}
	map->node_ids = ALLOC_ARRAY(alloc, int64_t, n);
	if (map->node_ids == NULL)
	{
		pr_free(alloc, table);
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory building the node id map");
	}
	n = 0;
	for (uint64_t i = 0; i < range; i++)
	{
		if (table[i])
		{
			map->node_ids[n] = (int64_t) ((uint64_t) map->min_id + i);
			table[i] = (int32_t) n++;
		}
		else
			table[i] = -1;
	}
	map->n = n;
	map->table = table;
	return PR_OK;
}

/* Builds the id map by radix-sorting all endpoints, deduplicating and bucketing them. */
static PrStatus
id_map_build_sorted(const int64_t *src, const int64_t *dst, size_t m, uint64_t range,
					const PrAllocator *alloc, IdMap *map, PrError *err)
{
	uint64_t   *keys = ALLOC_ARRAY(alloc, uint64_t, 2 * m);
	uint64_t   *tmp = ALLOC_ARRAY(alloc, uint64_t, 2 * m);
	uint64_t   *sorted;
	int64_t		n = 0;
	int64_t		n_buckets;
	int			shift = 0;

	if (keys == NULL || tmp == NULL)
	{
		pr_free(alloc, keys);
		pr_free(alloc, tmp);
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory sorting the node ids");
	}
	for (size_t i = 0; i < m; i++)
	{
		keys[2 * i] = id_key(src[i]);
		keys[2 * i + 1] = id_key(dst[i]);
	}
	sorted = radix_sort_keys(keys, tmp, 2 * m);
	for (size_t i = 0; i < 2 * m; i++)
		if (i == 0 || sorted[i] != sorted[i - 1])
			sorted[n++] = sorted[i];
	if (n > PR_MAX_NODES)
	{
		pr_free(alloc, keys);
		pr_free(alloc, tmp);
		return pr_error_set(err, PR_ERR_TOO_LARGE,
							"graph has %lld nodes; at most %lld are supported",
							(long long) n, (long long) PR_MAX_NODES);
	}
	map->node_ids = ALLOC_ARRAY(alloc, int64_t, n);
	if (map->node_ids == NULL)
	{
		pr_free(alloc, keys);
		pr_free(alloc, tmp);
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory building the node id map");
	}
	for (int64_t i = 0; i < n; i++)
		map->node_ids[i] = (int64_t) (sorted[i] ^ UINT64_C(0x8000000000000000));
	pr_free(alloc, keys);
	pr_free(alloc, tmp);
	map->n = n;

	/* about one bucket per node */
	while (shift < 63 && ((range - 1) >> shift) >= (uint64_t) (n > 1 ? n : 1))
		shift++;
	n_buckets = (int64_t) ((range - 1) >> shift) + 1;
	map->bucket = ALLOC_ARRAY(alloc, int64_t, n_buckets + 1);
	if (map->bucket == NULL)
	{
		pr_free(alloc, map->node_ids);
		map->node_ids = NULL;
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory building the node id map");
	}
	map->shift = shift;
	{
		int64_t		i = 0;

		for (int64_t b = 0; b <= n_buckets; b++)
		{
			while (i < n &&
				   (int64_t) (((uint64_t) map->node_ids[i] - (uint64_t) map->min_id) >> shift) < b)
				i++;
			map->bucket[b] = i;
		}
	}
	return PR_OK;
}

/* Builds the id map of the edge list's endpoints, choosing the dense or the sorted form. */
static PrStatus
id_map_build(const int64_t *src, const int64_t *dst, size_t m, const PrAllocator *alloc,
			 IdMap *map, PrError *err)
{
	int64_t		lo = INT64_MAX,
				hi = INT64_MIN;
	uint64_t	range;

	memset(map, 0, sizeof(*map));
	if (m == 0)
		return PR_OK;
	for (size_t i = 0; i < m; i++)
	{
		int64_t		a = src[i],
					b = dst[i];

		if (a < lo)
			lo = a;
		if (a > hi)
			hi = a;
		if (b < lo)
			lo = b;
		if (b > hi)
			hi = b;
	}
	map->min_id = lo;
	range = (uint64_t) hi - (uint64_t) lo;	/* range - 1, cannot overflow */
	if (range < (uint64_t) 4 * 2 * m + 4096)
		return id_map_build_dense(src, dst, m, range + 1, alloc, map, err);
	return id_map_build_sorted(src, dst, m, range + 1 == 0 ? UINT64_MAX : range + 1, alloc, map, err);
}

/* Frees every array of a graph built by pr_graph_build and leaves it empty. */
void
pr_graph_free(PrGraph *g, const PrAllocator *alloc)
{
	pr_free(alloc, g->node_ids);
	pr_free(alloc, g->in_ptr);
	pr_free(alloc, g->in_src);
	pr_free(alloc, g->in_weight);
	pr_free(alloc, g->out_ptr);
	pr_free(alloc, g->out_dst);
	pr_free(alloc, g->out_weight);
	pr_free(alloc, g->out_strength);
	pr_free(alloc, g->dangling);
	memset(g, 0, sizeof(*g));
}

/* Turns counts[0..n) into row pointers ptr[0..n]; ptr may alias counts shifted by one. */
static void
counts_to_pointers(int64_t *ptr, int64_t n)
{
	int64_t		sum = 0;

	for (int64_t i = 0; i < n; i++)
	{
		int64_t		c = ptr[i];

		ptr[i] = sum;
		sum += c;
	}
	ptr[n] = sum;
}

/*
 * Fills out_ptr/out_dst/out_weight (already allocated) from the in-CSR: visiting destinations in
 * ascending order leaves every out-row sorted by destination.  cursor has room for n entries.
 */
static void
transpose_in_to_out(PrGraph *g, int64_t *cursor)
{
	int64_t		n = g->n_nodes;

	memset(g->out_ptr, 0, (size_t) (n + 1) * sizeof(int64_t));
	for (int64_t e = 0; e < g->n_edges; e++)
		g->out_ptr[g->in_src[e]]++;
	counts_to_pointers(g->out_ptr, n);
	memcpy(cursor, g->out_ptr, (size_t) n * sizeof(int64_t));
	for (int64_t v = 0; v < n; v++)
	{
		for (int64_t e = g->in_ptr[v]; e < g->in_ptr[v + 1]; e++)
		{
			int64_t		pos = cursor[g->in_src[e]]++;

			g->out_dst[pos] = (int32_t) v;
			if (g->out_weight != NULL)
				g->out_weight[pos] = g->in_weight[e];
		}
	}
}

/*
 * Computes out_strength from the in-CSR (for every source, its edges are added in ascending
 * destination order, as the out-CSR lists them) and the dangling list.
 */
static PrStatus
compute_strength_and_dangling(PrGraph *g, const PrAllocator *alloc, PrError *err)
{
	int64_t		n = g->n_nodes;
	int64_t		n_dangling = 0;

	g->out_strength = ALLOC_ARRAY(alloc, double, n);
	if (g->out_strength == NULL)
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory computing out-strengths");
	memset(g->out_strength, 0, (size_t) n * sizeof(double));
	if (g->in_weight != NULL)
	{
		for (int64_t e = 0; e < g->n_edges; e++)
			g->out_strength[g->in_src[e]] += g->in_weight[e];
	}
	else
	{
		for (int64_t e = 0; e < g->n_edges; e++)
			g->out_strength[g->in_src[e]] += 1.0;
	}
	for (int64_t u = 0; u < n; u++)
		if (g->out_strength[u] == 0.0)
			n_dangling++;
	g->n_dangling = n_dangling;
	g->dangling = ALLOC_ARRAY(alloc, int32_t, n_dangling);
	if (g->dangling == NULL)
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory listing dangling nodes");
	n_dangling = 0;
	for (int64_t u = 0; u < n; u++)
		if (g->out_strength[u] == 0.0)
			g->dangling[n_dangling++] = (int32_t) u;
	return PR_OK;
}

/* Builds the in-CSR (and optionally the out-CSR) from an edge list; see pr_graph.h. */
PrStatus
pr_graph_build(const int64_t *src, const int64_t *dst, const double *weight, size_t m,
			   const PrBuildOptions *options, const PrAllocator *alloc, PrGraph *g, PrError *err)
{
	PrBuildOptions defaults = {false, false, 1};
	IdMap		map;
	PrStatus	status;
	int32_t    *ms = NULL,
			   *md = NULL;
	int64_t    *tmp_ptr = NULL,
			   *cursor = NULL;
	int32_t    *tmp_dst = NULL;
	double	   *tmp_w = NULL;
	int64_t		n,
				m_stored = 0;
	bool		weighted = (weight != NULL);

	memset(g, 0, sizeof(*g));
	memset(&map, 0, sizeof(map));
	if (options == NULL)
		options = &defaults;
	if (m > 0 && (src == NULL || dst == NULL))
		return pr_error_set(err, PR_ERR_INVALID, "edge list has no source or destination array");
	if (weighted && (status = validate_weights(weight, m, err)) != PR_OK)
		return status;

	status = id_map_build(src, dst, m, alloc, &map, err);
	if (status != PR_OK)
		return status;
	n = map.n;
	g->n_nodes = n;
	g->weighted = weighted;
	g->node_ids = map.node_ids;

	/* map every endpoint to its internal id once */
	ms = ALLOC_ARRAY(alloc, int32_t, m);
	md = ALLOC_ARRAY(alloc, int32_t, m);
	tmp_ptr = ALLOC_ARRAY(alloc, int64_t, n + 1);
	cursor = ALLOC_ARRAY(alloc, int64_t, n + 1);
	if (ms == NULL || md == NULL || tmp_ptr == NULL || cursor == NULL)
		goto nomem;
	memset(tmp_ptr, 0, (size_t) (n + 1) * sizeof(int64_t));
	for (size_t i = 0; i < m; i++)
	{
		int32_t		s = id_map_lookup(&map, src[i]);
		int32_t		d = id_map_lookup(&map, dst[i]);

		ms[i] = s;
		md[i] = d;
		tmp_ptr[s]++;
		if (options->undirected && s != d)
			tmp_ptr[d]++;
	}
	id_map_free_lookup(&map, alloc);
	counts_to_pointers(tmp_ptr, n);
	m_stored = tmp_ptr[n];
	g->n_edges = m_stored;

	/* counting sort by source, input order kept within a source */
	tmp_dst = ALLOC_ARRAY(alloc, int32_t, m_stored);
	if (weighted)
		tmp_w = ALLOC_ARRAY(alloc, double, m_stored);
	if (tmp_dst == NULL || (weighted && tmp_w == NULL))
		goto nomem;
	memcpy(cursor, tmp_ptr, (size_t) n * sizeof(int64_t));
	for (size_t i = 0; i < m; i++)
	{
		int32_t		s = ms[i],
					d = md[i];
		int64_t		pos = cursor[s]++;

		tmp_dst[pos] = d;
		if (weighted)
			tmp_w[pos] = weight[i];
		if (options->undirected && s != d)
		{
			pos = cursor[d]++;
			tmp_dst[pos] = s;
			if (weighted)
				tmp_w[pos] = weight[i];
		}
	}
	pr_free(alloc, ms);
	pr_free(alloc, md);
	ms = md = NULL;

	/* counting sort by destination, visiting sources in ascending order */
	g->in_ptr = ALLOC_ARRAY(alloc, int64_t, n + 1);
	g->in_src = ALLOC_ARRAY(alloc, int32_t, m_stored);
	if (weighted)
		g->in_weight = ALLOC_ARRAY(alloc, double, m_stored);
	if (g->in_ptr == NULL || g->in_src == NULL || (weighted && g->in_weight == NULL))
		goto nomem;
	memset(g->in_ptr, 0, (size_t) (n + 1) * sizeof(int64_t));
	for (int64_t e = 0; e < m_stored; e++)
		g->in_ptr[tmp_dst[e]]++;
	counts_to_pointers(g->in_ptr, n);
	memcpy(cursor, g->in_ptr, (size_t) n * sizeof(int64_t));
	for (int64_t u = 0; u < n; u++)
	{
		for (int64_t e = tmp_ptr[u]; e < tmp_ptr[u + 1]; e++)
		{
			int64_t		pos = cursor[tmp_dst[e]]++;

			g->in_src[pos] = (int32_t) u;
			if (weighted)
				g->in_weight[pos] = tmp_w[e];
		}
	}

	if (options->out_edges)
	{
		/* the scratch arrays become the out-CSR, refilled in destination order */
		g->out_ptr = tmp_ptr;
		g->out_dst = tmp_dst;
		g->out_weight = tmp_w;
		tmp_ptr = NULL;
		tmp_dst = NULL;
		tmp_w = NULL;
		g->has_out_edges = true;
		transpose_in_to_out(g, cursor);
	}
	pr_free(alloc, tmp_ptr);
	pr_free(alloc, tmp_dst);
	pr_free(alloc, tmp_w);
	pr_free(alloc, cursor);
	tmp_ptr = cursor = NULL;
	tmp_dst = NULL;
	tmp_w = NULL;

	status = compute_strength_and_dangling(g, alloc, err);
	if (status != PR_OK)
	{
		pr_graph_free(g, alloc);
		return status;
	}
	return PR_OK;

nomem:
	id_map_free_lookup(&map, alloc);
	pr_free(alloc, ms);
	pr_free(alloc, md);
	pr_free(alloc, tmp_ptr);
	pr_free(alloc, cursor);
	pr_free(alloc, tmp_dst);
	pr_free(alloc, tmp_w);
	pr_graph_free(g, alloc);
	return pr_error_set(err, PR_ERR_NOMEM, "out of memory building a graph of %zu edge rows", m);
}

/* Builds the out-edge arrays of a graph that lacks them (a no-op when present). */
PrStatus
pr_graph_add_out_edges(PrGraph *g, const PrAllocator *alloc, PrError *err)
{
	int64_t    *cursor;

	if (g->has_out_edges)
		return PR_OK;
	g->out_ptr = ALLOC_ARRAY(alloc, int64_t, g->n_nodes + 1);
	g->out_dst = ALLOC_ARRAY(alloc, int32_t, g->n_edges);
	g->out_weight = g->weighted ? ALLOC_ARRAY(alloc, double, g->n_edges) : NULL;
	cursor = ALLOC_ARRAY(alloc, int64_t, g->n_nodes + 1);
	if (g->out_ptr == NULL || g->out_dst == NULL || (g->weighted && g->out_weight == NULL) ||
		cursor == NULL)
	{
		pr_free(alloc, g->out_ptr);
		pr_free(alloc, g->out_dst);
		pr_free(alloc, g->out_weight);
		pr_free(alloc, cursor);
		g->out_ptr = NULL;
		g->out_dst = NULL;
		g->out_weight = NULL;
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory building the out-edge arrays");
	}
	transpose_in_to_out(g, cursor);
	pr_free(alloc, cursor);
	g->has_out_edges = true;
	return PR_OK;
}

/* Internal id of an external id by binary search over node_ids, or -1. */
int64_t
pr_graph_find(const PrGraph *g, int64_t external_id)
{
	int64_t		lo = 0,
				hi = g->n_nodes;

	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (g->node_ids[mid] < external_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < g->n_nodes && g->node_ids[lo] == external_id)
		return lo;
	return -1;
}
