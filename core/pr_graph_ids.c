/*
 * pr_graph_ids.c — the id map of a graph build: the distinct endpoints of the edge list in
 * ascending order (the graph's node ids) and every endpoint's rank among them.
 *
 * When the external ids span a range not much larger than the edge list, a direct table over that
 * range maps them (one linear pass).  Otherwise the 2m endpoints are LSD-radix-sorted as (key,
 * position) pairs (11-bit digits of id - min, digits on which all keys agree skipped); one pass
 * over the sorted pairs then gives the distinct ids and writes every endpoint's rank back by
 * position (no per-endpoint search): pr_graph_ids_sort.c.  Past 2^32 endpoints, the ids alone are
 * sorted and bucketed, and every endpoint looked up.
 */
#include "pr_graph_build.h"

#include <string.h>

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
	return (int32_t) pr_lower_bound(map->node_ids, lo, hi, id);
}

/* The endpoints of an edge list split into chunks: their id range, or their marks in a table. */
typedef struct EndpointJob
{
	const int64_t *src;
	const int64_t *dst;
	size_t		m;
	int			n_chunks;
	int64_t		lo[MAX_BUILD_THREADS];	/* per chunk: smallest and largest id */
	int64_t		hi[MAX_BUILD_THREADS];
	int64_t		min_id;			/* marking: table[id - min_id] = 1 for every endpoint */
	int32_t    *table;
} EndpointJob;

/* Smallest and largest id among the endpoints of chunk t (rows split into chunks), so far. */
static void
endpoint_range(void *ctx, ChunkPart part)
{
	EndpointJob *j = (EndpointJob *) ctx;
	int64_t		lo = part.first_wave ? INT64_MAX : j->lo[part.t],
				hi = part.first_wave ? INT64_MIN : j->hi[part.t];

	for (size_t i = part.lo; i < part.hi; i++)
	{
		int64_t		a = j->src[i],
					c = j->dst[i];

		lo = a < lo ? a : lo;
		hi = a > hi ? a : hi;
		lo = c < lo ? c : lo;
		hi = c > hi ? c : hi;
	}
	j->lo[part.t] = lo;
	j->hi[part.t] = hi;
}

/* Marks the endpoints of chunk t's rows in the direct table (relaxed stores of the same value:
 * chunks may mark one id at once). */
static void
endpoint_mark(void *ctx, ChunkPart part)
{
	EndpointJob *j = (EndpointJob *) ctx;

	for (size_t i = part.lo; i < part.hi; i++)
	{
		__atomic_store_n(&j->table[(uint64_t) j->src[i] - (uint64_t) j->min_id], 1, __ATOMIC_RELAXED);
		__atomic_store_n(&j->table[(uint64_t) j->dst[i] - (uint64_t) j->min_id], 1, __ATOMIC_RELAXED);
	}
}

/* Builds the id map through a direct table over [min_id, min_id + range). */
static PrStatus
id_map_build_dense(const int64_t *src, const int64_t *dst, size_t m, uint64_t range, int n_threads,
				   const PrBuildOptions *options, const PrAllocator *alloc, IdMap *map,
				   PrError *err)
{
	int32_t    *table;
	int64_t		n = 0;
	EndpointJob job;

	table = ALLOC_ARRAY(alloc, int32_t, range);
	if (table == NULL)
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory building the node id map");
	memset(table, 0, range * sizeof(int32_t));
	job.src = src;
	job.dst = dst;
	job.m = m;
	job.n_chunks = pr_build_chunks_for(m, n_threads);
	job.min_id = map->min_id;
	job.table = table;
	if (!pr_build_run_waves(endpoint_mark, &job, job.n_chunks, m, options) ||
		pr_build_stop_requested(options))
	{
		pr_free(alloc, table);
		return pr_build_interrupted(err);
	}
	for (uint64_t i = 0; i < range; i++)
		n += table[i];
	if (n > PR_MAX_NODES)
	{
		pr_free(alloc, table);
		return pr_build_too_many_nodes(n, err);
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
	sorted = pr_radix_sort_u64(keys, tmp, 2 * m, 0);
	for (size_t i = 0; i < 2 * m; i++)
		if (i == 0 || sorted[i] != sorted[i - 1])
			sorted[n++] = sorted[i];
	if (n > PR_MAX_NODES)
	{
		pr_free(alloc, keys);
		pr_free(alloc, tmp);
		return pr_build_too_many_nodes(n, err);
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


/* Looks up chunk t of the endpoints through a dense or bucketed id map. */
typedef struct LookupJob
{
	const IdMap *map;
	const int64_t *src;
	const int64_t *dst;
	size_t		m;
	int			n_chunks;
	int32_t    *ranks;
} LookupJob;

/* Fills ranks[i] for the endpoints of chunk t. */
static void
endpoint_lookup(void *ctx, ChunkPart part)
{
	LookupJob  *j = (LookupJob *) ctx;

	for (size_t i = part.lo; i < part.hi; i++)
		j->ranks[i] = id_map_lookup(j->map, i < j->m ? j->src[i] : j->dst[i - j->m]);
}

/*
 * Builds the id map of the edge list's endpoints and every endpoint's rank: *ranks_out gets
 * [2m] ranks (src ranks, then dst ranks); NULL when m is 0.
 */
PrStatus
pr_id_map_build(const int64_t *src, const int64_t *dst, size_t m, int n_threads,
				const PrBuildOptions *options, const PrAllocator *alloc, IdMap *map,
				int32_t **ranks_out, PrError *err)
{
	int64_t		lo = INT64_MAX,
				hi = INT64_MIN;
	uint64_t	range;
	PrStatus	status;
	LookupJob	job;
	EndpointJob ends;
	bool		stopped;

	memset(map, 0, sizeof(*map));
	*ranks_out = NULL;
	if (m == 0)
		return PR_OK;
	ends.src = src;
	ends.dst = dst;
	ends.m = m;
	ends.n_chunks = pr_build_chunks_for(m, n_threads);
	if (!pr_build_run_waves(endpoint_range, &ends, ends.n_chunks, m, options) ||
		pr_build_stop_requested(options))
		return pr_build_interrupted(err);
	for (int t = 0; t < ends.n_chunks; t++)
	{
		lo = ends.lo[t] < lo ? ends.lo[t] : lo;
		hi = ends.hi[t] > hi ? ends.hi[t] : hi;
	}
	map->min_id = lo;
	range = (uint64_t) hi - (uint64_t) lo;	/* range - 1, cannot overflow */
	if (range < (uint64_t) 4 * 2 * m + 4096)
		status = id_map_build_dense(src, dst, m, range + 1, n_threads, options, alloc, map, err);
	else if (2 * m <= UINT32_MAX)
		return pr_id_map_build_ranked(src, dst, m, lo, hi, n_threads, options, alloc, map,
									  ranks_out, err);
	else
		status = id_map_build_sorted(src, dst, m, range + 1 == 0 ? UINT64_MAX : range + 1,
									 alloc, map, err);
	if (status != PR_OK)
		return status;
	job.ranks = ALLOC_ARRAY(alloc, int32_t, 2 * m);
	if (job.ranks == NULL)
	{
		id_map_free_lookup(map, alloc);
		pr_free(alloc, map->node_ids);
		map->node_ids = NULL;
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory building the node id map");
	}
	job.map = map;
	job.src = src;
	job.dst = dst;
	job.m = m;
	job.n_chunks = pr_build_chunks_for(2 * m, n_threads);
	stopped = !pr_build_run_waves(endpoint_lookup, &job, job.n_chunks, 2 * m, options) ||
		pr_build_stop_requested(options);
	id_map_free_lookup(map, alloc);
	if (stopped)
	{
		pr_free(alloc, job.ranks);
		pr_free(alloc, map->node_ids);
		map->node_ids = NULL;
		return pr_build_interrupted(err);
	}
	*ranks_out = job.ranks;
	return PR_OK;
}

