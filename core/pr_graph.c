/*
 * pr_graph.c — builds the CSR graph from an edge list: id map, in-CSR by destination, optional
 * out-CSR, out-strengths and the dangling list.
 *
 * Ids: when the external ids span a range not much larger than the edge list, a direct table over
 * that range maps them (one linear pass).  Otherwise the 2m endpoints are LSD-radix-sorted as
 * (key, position) pairs (11-bit digits of id - min, digits on which all keys agree skipped); one
 * pass over the sorted pairs then gives the distinct ids and writes every endpoint's rank back by
 * position (no per-endpoint search).  Edges: a counting sort by source (input order kept), then a
 * counting sort of that by destination visiting sources in ascending order, so every in-row lists
 * its sources ascending; parallel edges (one source, one destination) are then ordered by weight,
 * so no sum depends on the order of the input rows; the out-CSR is made the same way from the
 * in-CSR.
 *
 * Threads (PrBuildOptions.n_threads): the radix passes, the endpoint lookups and the counting sorts
 * split their input into T contiguous chunks with per-chunk histograms, and chunk t's elements are
 * placed after chunk t-1's, so every array is the same for any thread count.  Only the calling
 * thread allocates.  A step over many elements runs in waves (each chunk takes the next part of
 * its range in each wave, in order: the same results); between waves and between steps the calling
 * thread polls PrBuildOptions.should_stop, so a cancel stops the build within about one wave.  A counting sort uses min(T, m / n) chunks (its counters take chunks * n * 8
 * bytes).  The weighted out-strength without out-edges is summed on one thread (addition order).
 *
 * Peak memory beyond the input and the result (m rows, m' stored edges, n nodes, T threads):
 * sparse ids: 48 bytes per row while sorting (two 8-byte key and two 4-byte position buffers of
 * 2m entries), then 8 bytes per row for the endpoint ranks; dense ids: 4 bytes per id in the range
 * (at most 32 per row) plus those 8; CSR: 8 per row + 4 (+8 weighted) per stored edge of scratch,
 * plus chunk counters.
 */
#include "pr_graph.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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

/*
 * Checks that every weight is finite and >= 0; reports the first offending row.  Returns the
 * largest weight and the smallest positive one (0 when none is positive) through max and min_pos.
 */
static PrStatus
validate_weights(const double *weight, size_t m, double *max, double *min_pos, PrError *err)
{
	double		largest = 0.0,
				smallest = 0.0;

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
		if (w > largest)
			largest = w;
		if (w > 0.0 && (smallest == 0.0 || w < smallest))
			smallest = w;
	}
	*max = largest;
	*min_pos = smallest;
	return PR_OK;
}

/* Maps a signed id to an unsigned key with the same order. */
static inline uint64_t
id_key(int64_t id)
{
	return (uint64_t) id ^ UINT64_C(0x8000000000000000);
}

/* Fails a build whose graph has n nodes, more than PR_MAX_NODES, with PR_ERR_TOO_LARGE. */
static PrStatus
too_many_nodes(int64_t n, PrError *err)
{
	return pr_error_set(err, PR_ERR_TOO_LARGE, "graph has %lld nodes; at most %lld are supported",
						(long long) n, (long long) PR_MAX_NODES);
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
	return (int32_t) pr_lower_bound(map->node_ids, lo, hi, id);
}

/* Most worker threads a build uses. */
#define MAX_BUILD_THREADS PR_MAX_THREADS

/* Start of chunk t of count elements split into n_chunks. */
static inline size_t
chunk_start(size_t count, int t, int n_chunks)
{
	size_t		q = count / (size_t) n_chunks,
				r = count % (size_t) n_chunks;

	return q * (size_t) t + r * (size_t) t / (size_t) n_chunks;
}

/* Chunks for count elements: at most n_threads, each at least 64k elements. */
static int
chunks_for(size_t count, int n_threads)
{
	size_t		most = count / 65536 + 1;

	if (n_threads < 1)
		n_threads = 1;
	if (n_threads > MAX_BUILD_THREADS)
		n_threads = MAX_BUILD_THREADS;
	return (size_t) n_threads < most ? n_threads : (int) most;
}

/*
 * True when the caller asked the build to stop: options->should_stop, polled on the calling thread
 * between steps (never from the chunk threads).
 */
static bool
stop_requested(const PrBuildOptions *options)
{
	return options != NULL && options->should_stop != NULL &&
		options->should_stop(options->stop_arg);
}

/*
 * Elements a chunk handles in one wave: a step over many elements runs as several waves, every
 * chunk taking the next part of its range in each, so that the calling thread can poll
 * should_stop between waves (about every 10 ms of work) and not only between steps.  Each chunk
 * still visits its range in order, so the results do not depend on the waves.
 */
#define WAVE_ELEMENTS ((size_t) 1 << 20)

/* The part of chunk t that one wave of a step covers: elements [lo, hi). */
typedef struct ChunkPart
{
	int			t;
	size_t		lo;
	size_t		hi;
	bool		first_wave;		/* the chunk's first part: per-chunk state starts here */
} ChunkPart;

/* A step's task: one chunk's part of one wave. */
typedef void (*ChunkFn) (void *ctx, ChunkPart part);

/* A step run by run_waves: its task, the elements and the current wave. */
typedef struct ChunkRun
{
	ChunkFn		fn;
	void	   *ctx;
	size_t		count;
	int			wave;
	int			n_waves;
} ChunkRun;

/* pr_parallel_run's task: chunk `t`'s part of the current wave. */
static void
chunk_part(void *arg, int t, int n_chunks)
{
	ChunkRun   *run = (ChunkRun *) arg;
	size_t		b = chunk_start(run->count, t, n_chunks),
				e = chunk_start(run->count, t + 1, n_chunks);
	ChunkPart	part;

	part.t = t;
	part.lo = b + chunk_start(e - b, run->wave, run->n_waves);
	part.hi = b + chunk_start(e - b, run->wave + 1, run->n_waves);
	part.first_wave = run->wave == 0;
	run->fn(run->ctx, part);
}

/*
 * Runs fn over n_chunks chunks of count elements in waves (see WAVE_ELEMENTS), chunk 0 on the
 * caller and the others on threads (pr_parallel_run), polling options->should_stop (options may
 * be NULL) between waves: false when it asked to stop.
 */
static bool
run_waves(ChunkFn fn, void *ctx, int n_chunks, size_t count, const PrBuildOptions *options)
{
	size_t		per_chunk = count / (size_t) n_chunks + 1;
	ChunkRun	run = {fn, ctx, count, 0, (int) ((per_chunk + WAVE_ELEMENTS - 1) / WAVE_ELEMENTS)};

	for (run.wave = 0; run.wave < run.n_waves; run.wave++)
	{
		if (run.wave > 0 && stop_requested(options))
			return false;
		pr_parallel_run(chunk_part, &run, n_chunks);
	}
	return true;
}

/* Fails a build step with PR_ERR_INTERRUPTED. */
static PrStatus
build_interrupted(PrError *err)
{
	return pr_error_set(err, PR_ERR_INTERRUPTED, "graph build interrupted");
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
	job.n_chunks = chunks_for(m, n_threads);
	job.min_id = map->min_id;
	job.table = table;
	if (!run_waves(endpoint_mark, &job, job.n_chunks, m, options) ||
		stop_requested(options))
	{
		pr_free(alloc, table);
		return build_interrupted(err);
	}
	for (uint64_t i = 0; i < range; i++)
		n += table[i];
	if (n > PR_MAX_NODES)
	{
		pr_free(alloc, table);
		return too_many_nodes(n, err);
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
		return too_many_nodes(n, err);
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


/* Radix digit width of the endpoint sort, and the most digits a 64-bit key has. */
#define DIGIT_BITS 11
#define DIGIT_VALUES (1 << DIGIT_BITS)
#define MAX_DIGITS ((64 + DIGIT_BITS - 1) / DIGIT_BITS)

/* Shared state of the (key, position) radix sort of the 2m endpoints and of the ranking after it. */
typedef struct EndpointSort
{
	const int64_t *src;
	const int64_t *dst;
	size_t		m;
	size_t		count;			/* 2m: endpoint i < m is src[i], else dst[i - m] */
	uint64_t	base;			/* key = id_key(id) - base, base = id_key(min id) */
	int			n_chunks;
	uint64_t   *keys[2];		/* [count] ping-pong key buffers */
	uint32_t   *pos[2];			/* [count] endpoint positions travelling with the keys */
	size_t	   *hist;			/* [n_chunks][MAX_DIGITS][DIGIT_VALUES] */
	int			n_digits;		/* digits of the key range */
	/* the current pass */
	int			digit;
	int			from;			/* buffer read (-1: the input arrays) */
	/* ranking */
	int64_t    *chunk_starts;	/* [n_chunks] distinct keys before each chunk (while ranking:
								 * before the chunk's next wave) */
	int32_t    *ranks;			/* [count] rank of every endpoint, by position */
} EndpointSort;

/* Key of endpoint i of the input. */
static inline uint64_t
endpoint_key(const EndpointSort *s, size_t i)
{
	int64_t		id = i < s->m ? s->src[i] : s->dst[i - s->m];

	return id_key(id) - s->base;
}

/* Histogram of chunk t for digit d. */
static inline size_t *
chunk_hist(const EndpointSort *s, int t, int d)
{
	return s->hist + ((size_t) t * MAX_DIGITS + (size_t) d) * DIGIT_VALUES;
}

/* Counts every digit of chunk t of the input keys. */
static void
endpoint_hist_all(void *ctx, ChunkPart part)
{
	EndpointSort *s = (EndpointSort *) ctx;
	size_t	   *h = chunk_hist(s, part.t, 0);

	if (part.first_wave)
		memset(h, 0, sizeof(size_t) * MAX_DIGITS * DIGIT_VALUES);
	for (size_t i = part.lo; i < part.hi; i++)
	{
		uint64_t	k = endpoint_key(s, i);

		for (int d = 0; d < s->n_digits; d++)
			h[(size_t) d * DIGIT_VALUES + ((k >> (DIGIT_BITS * d)) & (DIGIT_VALUES - 1))]++;
	}
}

/* Counts the current digit of chunk t of the current buffer (into the digit's histogram slot). */
static void
endpoint_hist_pass(void *ctx, ChunkPart part)
{
	EndpointSort *s = (EndpointSort *) ctx;
	size_t	   *h = chunk_hist(s, part.t, s->digit);
	const uint64_t *keys = s->keys[s->from];
	int			shift = DIGIT_BITS * s->digit;

	if (part.first_wave)
		memset(h, 0, sizeof(size_t) * DIGIT_VALUES);
	for (size_t i = part.lo; i < part.hi; i++)
		h[(keys[i] >> shift) & (DIGIT_VALUES - 1)]++;
}

/* Scatters chunk t by the current digit, stably, through its offsets in the histogram slot. */
static void
endpoint_scatter(void *ctx, ChunkPart part)
{
	EndpointSort *s = (EndpointSort *) ctx;
	size_t	   *off = chunk_hist(s, part.t, s->digit);
	int			shift = DIGIT_BITS * s->digit;
	int			to = s->from < 0 ? 0 : 1 - s->from;
	uint64_t   *out_keys = s->keys[to];
	uint32_t   *out_pos = s->pos[to];

	if (s->from < 0)
	{
		for (size_t i = part.lo; i < part.hi; i++)
		{
			uint64_t	k = endpoint_key(s, i);
			size_t		p = off[(k >> shift) & (DIGIT_VALUES - 1)]++;

			out_keys[p] = k;
			out_pos[p] = (uint32_t) i;
		}
	}
	else
	{
		const uint64_t *in_keys = s->keys[s->from];
		const uint32_t *in_pos = s->pos[s->from];

		for (size_t i = part.lo; i < part.hi; i++)
		{
			uint64_t	k = in_keys[i];
			size_t		p = off[(k >> shift) & (DIGIT_VALUES - 1)]++;

			out_keys[p] = k;
			out_pos[p] = in_pos[i];
		}
	}
}

/* Counts the distinct keys that start in chunk t of the sorted buffer. */
static void
endpoint_count_distinct(void *ctx, ChunkPart part)
{
	EndpointSort *s = (EndpointSort *) ctx;
	const uint64_t *keys = s->keys[s->from];
	int64_t		c = part.first_wave ? 0 : s->chunk_starts[part.t];

	for (size_t i = part.lo; i < part.hi; i++)
		c += (i == 0 || keys[i] != keys[i - 1]);
	s->chunk_starts[part.t] = c;
}

/*
 * Writes the distinct keys of chunk t into the spare key buffer and every endpoint's rank; leaves
 * in chunk_starts[t] the distinct keys before the chunk's next wave.
 */
static void
endpoint_rank(void *ctx, ChunkPart part)
{
	EndpointSort *s = (EndpointSort *) ctx;
	const uint64_t *keys = s->keys[s->from];
	const uint32_t *pos = s->pos[s->from];
	uint64_t   *distinct = s->keys[1 - s->from];
	int32_t    *ranks = s->ranks;
	int64_t		r = s->chunk_starts[part.t] - 1;

	for (size_t i = part.lo; i < part.hi; i++)
	{
		if (i == 0 || keys[i] != keys[i - 1])
			distinct[++r] = keys[i];
		ranks[pos[i]] = (int32_t) (uint32_t) r;
	}
	s->chunk_starts[part.t] = r + 1;
}

/*
 * Sorts the endpoints (ids in [lo_id, hi_id]) and gives every one its rank: *ranks_out gets
 * [2m] ranks (src ranks then dst ranks), map->node_ids the distinct ids.  2m < 2^32.
 */
static PrStatus
id_map_build_ranked(const int64_t *src, const int64_t *dst, size_t m, int64_t lo_id, int64_t hi_id,
					int n_threads, const PrBuildOptions *options, const PrAllocator *alloc,
					IdMap *map, int32_t **ranks_out, PrError *err)
{
	EndpointSort s;
	uint64_t	range = id_key(hi_id) - id_key(lo_id);
	int64_t		n = 0;
	int			bits = 0;
	PrStatus	failure;

	memset(&s, 0, sizeof(s));
	s.src = src;
	s.dst = dst;
	s.m = m;
	s.count = 2 * m;
	s.base = id_key(lo_id);
	s.n_chunks = chunks_for(s.count, n_threads);
	while (bits < 64 && (range >> bits) != 0)
		bits++;
	s.n_digits = bits == 0 ? 1 : (bits + DIGIT_BITS - 1) / DIGIT_BITS;
	s.keys[0] = ALLOC_ARRAY(alloc, uint64_t, s.count);
	s.keys[1] = ALLOC_ARRAY(alloc, uint64_t, s.count);
	s.pos[0] = ALLOC_ARRAY(alloc, uint32_t, s.count);
	s.pos[1] = ALLOC_ARRAY(alloc, uint32_t, s.count);
	s.hist = ALLOC_ARRAY(alloc, size_t, (size_t) s.n_chunks * MAX_DIGITS * DIGIT_VALUES);
	s.chunk_starts = ALLOC_ARRAY(alloc, int64_t, s.n_chunks);
	if (s.keys[0] == NULL || s.keys[1] == NULL || s.pos[0] == NULL || s.pos[1] == NULL ||
		s.hist == NULL || s.chunk_starts == NULL)
		goto nomem;

	/* histograms of every digit per chunk; a digit on which all keys agree needs no pass */
	if (!run_waves(endpoint_hist_all, &s, s.n_chunks, s.count, options))
		goto interrupted;
	s.from = -1;
	for (int d = 0; d < s.n_digits; d++)
	{
		size_t		total[DIGIT_VALUES];
		size_t		sum = 0;
		bool		trivial = false;

		if (stop_requested(options))
			goto interrupted;
		memset(total, 0, sizeof(total));
		for (int t = 0; t < s.n_chunks; t++)
		{
			const size_t *h = chunk_hist(&s, t, d);

			for (int b = 0; b < DIGIT_VALUES; b++)
				total[b] += h[b];
		}
		for (int b = 0; b < DIGIT_VALUES; b++)
			if (total[b] == s.count)
				trivial = true;
		/* a pass always runs at the end if none did: it moves the input into the buffers */
		if (trivial && !(s.from < 0 && d == s.n_digits - 1))
			continue;
		if (s.from >= 0 && s.n_chunks > 1)
		{
			/* chunk histograms of this digit over the current order */
			s.digit = d;
			if (!run_waves(endpoint_hist_pass, &s, s.n_chunks, s.count, options) ||
				stop_requested(options))
				goto interrupted;
		}
		/* offsets: by digit value, then by chunk */
		for (int b = 0; b < DIGIT_VALUES; b++)
			for (int t = 0; t < s.n_chunks; t++)
			{
				size_t	   *h = chunk_hist(&s, t, d);
				size_t		c = h[b];

				h[b] = sum;
				sum += c;
			}
		s.digit = d;
		if (!run_waves(endpoint_scatter, &s, s.n_chunks, s.count, options))
			goto interrupted;
		s.from = s.from < 0 ? 0 : 1 - s.from;
	}

	if (stop_requested(options))
		goto interrupted;
	/* distinct keys and ranks; the ranks go into the spare position buffer */
	s.ranks = (int32_t *) s.pos[1 - s.from];
	if (!run_waves(endpoint_count_distinct, &s, s.n_chunks, s.count, options))
		goto interrupted;
	for (int t = 0; t < s.n_chunks; t++)
	{
		int64_t		c = s.chunk_starts[t];

		s.chunk_starts[t] = n;
		n += c;
	}
	if (n > PR_MAX_NODES)
	{
		failure = too_many_nodes(n, err);
		goto fail;
	}
	if (!run_waves(endpoint_rank, &s, s.n_chunks, s.count, options) ||
		stop_requested(options))
		goto interrupted;
	map->node_ids = ALLOC_ARRAY(alloc, int64_t, n);
	if (map->node_ids == NULL)
		goto nomem;
	{
		const uint64_t *distinct = s.keys[1 - s.from];

		for (int64_t i = 0; i < n; i++)
			map->node_ids[i] = (int64_t) ((distinct[i] + s.base) ^ UINT64_C(0x8000000000000000));
	}
	map->n = n;
	*ranks_out = s.ranks;
	pr_free(alloc, s.keys[0]);
	pr_free(alloc, s.keys[1]);
	pr_free(alloc, s.pos[s.from]);
	pr_free(alloc, s.hist);
	pr_free(alloc, s.chunk_starts);
	return PR_OK;

nomem:
	failure = pr_error_set(err, PR_ERR_NOMEM, "out of memory sorting the node ids");
	goto fail;
interrupted:
	failure = build_interrupted(err);
fail:
	pr_free(alloc, s.keys[0]);
	pr_free(alloc, s.keys[1]);
	pr_free(alloc, s.pos[0]);
	pr_free(alloc, s.pos[1]);
	pr_free(alloc, s.hist);
	pr_free(alloc, s.chunk_starts);
	return failure;
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
static PrStatus
id_map_build(const int64_t *src, const int64_t *dst, size_t m, int n_threads,
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
	ends.n_chunks = chunks_for(m, n_threads);
	if (!run_waves(endpoint_range, &ends, ends.n_chunks, m, options) ||
		stop_requested(options))
		return build_interrupted(err);
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
		return id_map_build_ranked(src, dst, m, lo, hi, n_threads, options, alloc, map, ranks_out,
								   err);
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
	job.n_chunks = chunks_for(2 * m, n_threads);
	stopped = !run_waves(endpoint_lookup, &job, job.n_chunks, 2 * m, options) ||
		stop_requested(options);
	id_map_free_lookup(map, alloc);
	if (stopped)
	{
		pr_free(alloc, job.ranks);
		pr_free(alloc, map->node_ids);
		map->node_ids = NULL;
		return build_interrupted(err);
	}
	*ranks_out = job.ranks;
	return PR_OK;
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

/*
 * A counting sort of edges into CSR rows (pr_count_sort over chunks of the items).  Two inputs:
 * the edge rows (ranks of src/dst, a row adding its reverse when undirected; output grouped by
 * source, input order kept), or a CSR to transpose (output rows visit the input rows in ascending
 * order, so every output row lists them ascending).
 */
typedef struct CountSort
{
	PrCountSort sort;			/* n_keys: the output rows */
	size_t		n_items;		/* edge rows, or input edges of the transpose */
	const int32_t *keys;		/* [n_items] each item's output row: ms, or in_idx */
	/* edge-row input */
	const int32_t *ms;
	const int32_t *md;
	const double *weight;
	bool		undirected;
	/* CSR input */
	const int64_t *in_ptr;
	const int32_t *in_idx;
	const double *in_w;
	/* output */
	int32_t    *out_idx;
	double	   *out_w;
} CountSort;

/* Counts chunk t of the items by their output row (an undirected edge row also by its target). */
static void
sort_count(void *ctx, ChunkPart part)
{
	CountSort  *c = (CountSort *) ctx;

	if (part.first_wave)
		pr_count_sort_clear(&c->sort, part.t);
	if (c->undirected)
	{
		int64_t    *cnt = pr_count_sort_row(&c->sort, part.t);

		for (size_t i = part.lo; i < part.hi; i++)
		{
			int32_t		s = c->ms[i],
						d = c->md[i];

			cnt[s]++;
			if (s != d)
				cnt[d]++;
		}
	}
	else
		pr_count_sort_add(&c->sort, part.t, c->keys, part.lo, part.hi);
}

/* Scatters chunk t of the edge rows into the by-source arrays. */
static void
rows_scatter(void *ctx, ChunkPart part)
{
	CountSort  *c = (CountSort *) ctx;
	int64_t    *cur = pr_count_sort_row(&c->sort, part.t);
	const double *w = c->weight;

	if (!c->undirected && w == NULL)
	{
		for (size_t i = part.lo; i < part.hi; i++)
			c->out_idx[cur[c->ms[i]]++] = c->md[i];
		return;
	}
	for (size_t i = part.lo; i < part.hi; i++)
	{
		int32_t		s = c->ms[i],
					d = c->md[i];
		int64_t		pos = cur[s]++;

		c->out_idx[pos] = d;
		if (w != NULL)
			c->out_w[pos] = w[i];
		if (c->undirected && s != d)
		{
			pos = cur[d]++;
			c->out_idx[pos] = s;
			if (w != NULL)
				c->out_w[pos] = w[i];
		}
	}
}

/* Scatters chunk t of the input CSR's edges into the transposed arrays. */
static void
transpose_scatter(void *ctx, ChunkPart part)
{
	CountSort  *c = (CountSort *) ctx;
	int64_t    *cur = pr_count_sort_row(&c->sort, part.t);
	int64_t		row_lo = 0,
				row_hi = c->sort.n_keys;	/* the input has n rows too */
	int64_t		u;

	if (part.lo >= part.hi)
		return;
	/* the last row whose start is <= part.lo */
	while (row_lo < row_hi)
	{
		int64_t		mid = row_lo + (row_hi - row_lo + 1) / 2;

		if (c->in_ptr[mid] <= (int64_t) part.lo)
			row_lo = mid;
		else
			row_hi = mid - 1;
	}
	u = row_lo;
	for (size_t e = part.lo; e < part.hi;)
	{
		size_t		row_end;

		while (c->in_ptr[u + 1] <= (int64_t) e)
			u++;
		row_end = (size_t) c->in_ptr[u + 1] < part.hi ? (size_t) c->in_ptr[u + 1] : part.hi;
		if (c->in_w != NULL)
		{
			for (; e < row_end; e++)
			{
				int64_t		pos = cur[c->in_idx[e]]++;

				c->out_idx[pos] = (int32_t) u;
				c->out_w[pos] = c->in_w[e];
			}
		}
		else
		{
			for (; e < row_end; e++)
				c->out_idx[cur[c->in_idx[e]]++] = (int32_t) u;
		}
	}
}

/*
 * Starts a counting sort of n_items into n rows: at most n_threads chunks of at least 64k items,
 * fewer where pr_count_sort_init says.  False when out of memory.
 */
static bool
count_sort_start(CountSort *c, size_t n_items, int64_t n, int n_threads, const PrAllocator *alloc)
{
	c->n_items = n_items;
	return pr_count_sort_init(&c->sort, n_items, n, chunks_for(n_items, n_threads), alloc);
}

/*
 * Turns the chunk counts into offsets (by row, then by chunk) and fills ptr[0..n] with the rows'
 * starts.  False when options (may be NULL) asked to stop.
 */
static bool
counts_to_offsets(CountSort *c, int64_t *ptr, int n_threads, const PrBuildOptions *options)
{
	return pr_count_sort_offsets(&c->sort, false, ptr, n_threads,
								 options != NULL ? options->should_stop : NULL,
								 options != NULL ? options->stop_arg : NULL);
}

/* Adds the seconds since *mark to *field and moves the mark to now. */
static void
step_done(double *field, double *mark)
{
	double		now = pr_clock_seconds();

	*field += now - *mark;
	*mark = now;
}

/*
 * Transposes a CSR of n rows and m edges (in_ptr, in_idx, in_w) into (out_ptr, out_idx, out_w),
 * already allocated; in_w and out_w may be NULL.  Adds the steps' seconds to times.
 * PR_ERR_NOMEM, or PR_ERR_INTERRUPTED when options (may be NULL) asks to stop between steps.
 */
static PrStatus
transpose_csr(int64_t n, int64_t m, const int64_t *in_ptr, const int32_t *in_idx,
			  const double *in_w, int64_t *out_ptr, int32_t *out_idx, double *out_w,
			  int n_threads, const PrBuildOptions *options, const PrAllocator *alloc,
			  PrBuildTimes *times)
{
	CountSort	c;
	double		mark = pr_clock_seconds();
	PrStatus	status = PR_ERR_INTERRUPTED;

	memset(&c, 0, sizeof(c));
	if (!count_sort_start(&c, (size_t) m, n, n_threads, alloc))
		return PR_ERR_NOMEM;
	c.keys = in_idx;
	c.in_ptr = in_ptr;
	c.in_idx = in_idx;
	c.in_w = in_w;
	c.out_idx = out_idx;
	c.out_w = out_w;
	step_done(&times->other, &mark);
	if (!run_waves(sort_count, &c, c.sort.n_chunks, c.n_items, options) ||
		stop_requested(options))
		goto done;
	step_done(&times->count, &mark);
	if (!counts_to_offsets(&c, out_ptr, n_threads, options))
		goto done;
	step_done(&times->offsets, &mark);
	if (stop_requested(options) ||
		!run_waves(transpose_scatter, &c, c.sort.n_chunks, c.n_items, options))
		goto done;
	step_done(&times->scatter, &mark);
	status = PR_OK;
done:
	pr_count_sort_free(&c.sort, alloc);
	step_done(&times->other, &mark);
	return status;
}

/* qsort order of weights: ascending value. */
static int
weight_order(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return (x > y) - (x < y);
}

/*
 * Orders the parallel edges (runs of one source) of the in-rows of a chunk's part of the nodes of
 * the graph ctx by weight, so that their sums do not depend on the order of the input rows.
 */
static void
parallel_edges_by_weight(void *ctx, ChunkPart part)
{
	PrGraph    *g = (PrGraph *) ctx;

	for (size_t v = part.lo; v < part.hi; v++)
	{
		int64_t		end = g->in_ptr[v + 1];
		int64_t		run_start = g->in_ptr[v];

		for (int64_t e = run_start + 1; e <= end; e++)
		{
			if (e < end && g->in_src[e] == g->in_src[run_start])
				continue;
			if (e - run_start > 1)
				qsort(g->in_weight + run_start, (size_t) (e - run_start), sizeof(double),
					  weight_order);
			run_start = e;
		}
	}
}

/* Sums the out-weights of a chunk's part of the nodes of the graph ctx (each row from 0). */
static void
strength_rows(void *ctx, ChunkPart part)
{
	PrGraph    *g = (PrGraph *) ctx;

	for (size_t u = part.lo; u < part.hi; u++)
	{
		double		s = 0.0;

		for (int64_t e = g->out_ptr[u]; e < g->out_ptr[u + 1]; e++)
			s += g->out_weight[e];
		g->out_strength[u] = s;
	}
}

/*
 * Computes out_strength (already allocated) of a weighted graph: every source adds its weights in
 * ascending destination order, parallel edges by ascending weight (the out-CSR's row order;
 * without out-edges the in-CSR is walked in that same order).
 */
static void
compute_weighted_strength(PrGraph *g, int n_threads)
{
	int64_t		n = g->n_nodes;

	if (g->has_out_edges)
	{
		run_waves(strength_rows, g, chunks_for((size_t) n, n_threads), (size_t) n, NULL);
		return;
	}
	memset(g->out_strength, 0, (size_t) n * sizeof(double));
	for (int64_t e = 0; e < g->n_edges; e++)
		g->out_strength[g->in_src[e]] += g->in_weight[e];
}

/*
 * Largest out-weight or in-weight sum of a weighted graph (its out-CSR not built yet), each weight
 * taken times 2^-64 so that no sum can overflow; sums[n] is scratch.
 */
static double
largest_scaled_sum(const PrGraph *g, double *sums)
{
	int64_t		n = g->n_nodes;
	double		largest = 0.0;

	memset(sums, 0, (size_t) n * sizeof(double));
	for (int64_t v = 0; v < n; v++)
	{
		double		in_sum = 0.0;

		for (int64_t e = g->in_ptr[v]; e < g->in_ptr[v + 1]; e++)
		{
			double		w = ldexp(g->in_weight[e], -64);

			in_sum += w;
			sums[g->in_src[e]] += w;
		}
		if (in_sum > largest)
			largest = in_sum;
	}
	for (int64_t u = 0; u < n; u++)
		if (sums[u] > largest)
			largest = sums[u];
	return largest;
}

/*
 * Scales every weight of a weighted graph (in-CSR built, out-CSR not yet) by one power of two so
 * that every positive weight is a normal double (a sum of subnormal weights has a reciprocal that
 * overflows) and every node's out-weight and in-weight sum stays below
 * 2^(PR_STRENGTH_LIMIT_EXP - 1) (see pr_graph.h): up when the smallest positive weight is below
 * the normal range, down when some sum would reach that limit.  Scaling by a power of two is exact
 * and changes no ranking; max is the largest weight, min_pos the smallest positive one (0: none).
 * PR_ERR_INVALID when no factor does both (the weights span too wide a range).
 */
static PrStatus
scale_weights(PrGraph *g, double max, double min_pos, PrError *err)
{
	int			down = 0;
	int			up = 0;
	int			exponent;
	bool		too_wide = false;

	if (g->n_edges == 0)
		return PR_OK;
	if (max * (double) g->n_edges >= ldexp(1.0, PR_STRENGTH_LIMIT_EXP - 1))
	{
		/* the true largest sum is below 2^(exponent + 64) */
		(void) frexp(largest_scaled_sum(g, g->out_strength), &exponent);
		down = exponent + 64 - (PR_STRENGTH_LIMIT_EXP - 1);
		if (down < 0)
			down = 0;
	}
	if (pr_weight_subnormal(min_pos))
	{
		int			min_exponent;
		int			normal_exponent;

		(void) frexp(min_pos, &min_exponent);
		(void) frexp(DBL_MIN, &normal_exponent);
		up = normal_exponent - min_exponent;	/* min_pos * 2^up >= DBL_MIN */
		/* subnormal weights vanish from these sums: too small to matter to the largest */
		if (down == 0)
		{
			double		largest = largest_scaled_sum(g, g->out_strength);

			(void) frexp(largest, &exponent);
			too_wide = largest > 0.0 && exponent + 64 + up > PR_STRENGTH_LIMIT_EXP - 1;
		}
	}
	if (down > 0 && (up > 0 || ldexp(min_pos, -down) < DBL_MIN))
		too_wide = true;
	if (too_wide)
		return pr_error_set(err, PR_ERR_INVALID,
							"edge weights span too wide a range to rank in double precision: "
							"the largest is %g, the smallest positive one %g",
							max, min_pos);
	if (down == 0 && up == 0)
		return PR_OK;
	for (int64_t e = 0; e < g->n_edges; e++)
		g->in_weight[e] = ldexp(g->in_weight[e], up - down);
	return PR_OK;
}

/* Lists the nodes whose out_strength is 0. */
static PrStatus
list_dangling(PrGraph *g, const PrAllocator *alloc, PrError *err)
{
	int64_t		n = g->n_nodes;
	int64_t		n_dangling = 0;

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
	PrBuildOptions defaults = {false, false, 1, NULL, NULL, NULL};
	PrBuildTimes local_times = {0};
	PrBuildTimes *times;
	double		mark = pr_clock_seconds();
	IdMap		map;
	PrStatus	status;
	int32_t    *ranks = NULL;
	int64_t    *tmp_ptr = NULL;
	int32_t    *tmp_dst = NULL;
	double	   *tmp_w = NULL;
	int64_t		n,
				m_stored = 0;
	bool		weighted = (weight != NULL);
	double		max_weight = 0.0,
				min_weight = 0.0;
	int			n_threads;
	CountSort	rows;

	memset(g, 0, sizeof(*g));
	memset(&map, 0, sizeof(map));
	memset(&rows, 0, sizeof(rows));
	if (options == NULL)
		options = &defaults;
	times = options->times != NULL ? options->times : &local_times;
	memset(times, 0, sizeof(*times));
	n_threads = options->n_threads < 1 ? 1 : options->n_threads;
	if (m > 0 && (src == NULL || dst == NULL))
		return pr_error_set(err, PR_ERR_INVALID, "edge list has no source or destination array");
	if (weighted && (status = validate_weights(weight, m, &max_weight, &min_weight, err)) != PR_OK)
		return status;
	if (stop_requested(options))
		return build_interrupted(err);

	status = id_map_build(src, dst, m, n_threads, options, alloc, &map, &ranks, err);
	step_done(&times->ids, &mark);
	if (status != PR_OK)
		return status;
	n = map.n;
	g->n_nodes = n;
	g->weighted = weighted;
	g->node_ids = map.node_ids;

	/* counting sort of the rows by source, input order kept within a source */
	tmp_ptr = ALLOC_ARRAY(alloc, int64_t, n + 1);
	if (tmp_ptr == NULL || !count_sort_start(&rows, m, n, n_threads, alloc))
		goto nomem;
	rows.keys = ranks;
	rows.ms = ranks;
	rows.md = ranks != NULL ? ranks + m : NULL;
	rows.weight = weight;
	rows.undirected = options->undirected;
	step_done(&times->other, &mark);
	if (stop_requested(options))
		goto interrupted;
	if (!run_waves(sort_count, &rows, rows.sort.n_chunks, m, options) ||
		stop_requested(options))
		goto interrupted;
	step_done(&times->count, &mark);
	if (!counts_to_offsets(&rows, tmp_ptr, n_threads, options))
		goto interrupted;
	step_done(&times->offsets, &mark);
	m_stored = tmp_ptr[n];
	g->n_edges = m_stored;
	tmp_dst = ALLOC_ARRAY(alloc, int32_t, m_stored);
	if (weighted)
		tmp_w = ALLOC_ARRAY(alloc, double, m_stored);
	g->out_strength = ALLOC_ARRAY(alloc, double, n);
	if (tmp_dst == NULL || (weighted && tmp_w == NULL) || g->out_strength == NULL)
		goto nomem;
	rows.out_idx = tmp_dst;
	rows.out_w = tmp_w;
	step_done(&times->other, &mark);
	if (stop_requested(options) ||
		!run_waves(rows_scatter, &rows, rows.sort.n_chunks, m, options))
		goto interrupted;
	step_done(&times->scatter, &mark);
	pr_count_sort_free(&rows.sort, alloc);
	pr_free(alloc, ranks);
	ranks = NULL;
	if (!weighted)
	{
		/* out-degrees: exact whatever the order */
		for (int64_t u = 0; u < n; u++)
			g->out_strength[u] = (double) (tmp_ptr[u + 1] - tmp_ptr[u]);
	}

	/* counting sort by destination, visiting sources in ascending order */
	g->in_ptr = ALLOC_ARRAY(alloc, int64_t, n + 1);
	g->in_src = ALLOC_ARRAY(alloc, int32_t, m_stored);
	if (weighted)
		g->in_weight = ALLOC_ARRAY(alloc, double, m_stored);
	if (g->in_ptr == NULL || g->in_src == NULL || (weighted && g->in_weight == NULL))
		goto nomem;
	step_done(&times->other, &mark);
	if (stop_requested(options))
		goto interrupted;
	status = transpose_csr(n, m_stored, tmp_ptr, tmp_dst, tmp_w, g->in_ptr, g->in_src,
						   g->in_weight, n_threads, options, alloc, times);
	if (status == PR_ERR_INTERRUPTED)
		goto interrupted;
	if (status != PR_OK)
		goto nomem;
	mark = pr_clock_seconds();
	if (weighted &&
		!run_waves(parallel_edges_by_weight, g, chunks_for((size_t) n, n_threads), (size_t) n,
				   options))
		goto interrupted;
	if (weighted && (status = scale_weights(g, max_weight, min_weight, err)) != PR_OK)
	{
		pr_free(alloc, tmp_ptr);
		pr_free(alloc, tmp_dst);
		pr_free(alloc, tmp_w);
		pr_graph_free(g, alloc);
		return status;
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
		if (stop_requested(options))
			goto interrupted;
		status = transpose_csr(n, m_stored, g->in_ptr, g->in_src, g->in_weight, g->out_ptr,
							   g->out_dst, g->out_weight, n_threads, options, alloc, times);
		if (status == PR_ERR_INTERRUPTED)
			goto interrupted;
		if (status != PR_OK)
			goto nomem;
		mark = pr_clock_seconds();
	}
	pr_free(alloc, tmp_ptr);
	pr_free(alloc, tmp_dst);
	pr_free(alloc, tmp_w);
	tmp_ptr = NULL;
	tmp_dst = NULL;
	tmp_w = NULL;

	if (stop_requested(options))
		goto interrupted;
	if (weighted)
		compute_weighted_strength(g, n_threads);
	status = list_dangling(g, alloc, err);
	step_done(&times->other, &mark);
	if (status != PR_OK)
	{
		pr_graph_free(g, alloc);
		return status;
	}
	return PR_OK;

nomem:
	status = pr_error_set(err, PR_ERR_NOMEM, "out of memory building a graph of %zu edge rows", m);
	goto fail;
interrupted:
	status = build_interrupted(err);
fail:
	pr_free(alloc, ranks);
	pr_count_sort_free(&rows.sort, alloc);
	pr_free(alloc, tmp_ptr);
	pr_free(alloc, tmp_dst);
	pr_free(alloc, tmp_w);
	pr_graph_free(g, alloc);
	return status;
}

/* Builds the out-edge arrays of a graph that lacks them (a no-op when present). */
PrStatus
pr_graph_add_out_edges(PrGraph *g, const PrAllocator *alloc, PrError *err)
{
	PrBuildTimes times = {0};

	if (g->has_out_edges)
		return PR_OK;
	g->out_ptr = ALLOC_ARRAY(alloc, int64_t, g->n_nodes + 1);
	g->out_dst = ALLOC_ARRAY(alloc, int32_t, g->n_edges);
	g->out_weight = g->weighted ? ALLOC_ARRAY(alloc, double, g->n_edges) : NULL;
	if (g->out_ptr == NULL || g->out_dst == NULL || (g->weighted && g->out_weight == NULL) ||
		transpose_csr(g->n_nodes, g->n_edges, g->in_ptr, g->in_src, g->in_weight, g->out_ptr,
					  g->out_dst, g->out_weight, 1, NULL, alloc, &times) != PR_OK)
	{
		pr_free(alloc, g->out_ptr);
		pr_free(alloc, g->out_dst);
		pr_free(alloc, g->out_weight);
		g->out_ptr = NULL;
		g->out_dst = NULL;
		g->out_weight = NULL;
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory building the out-edge arrays");
	}
	g->has_out_edges = true;
	return PR_OK;
}

/* Internal id of an external id by binary search over node_ids, or -1. */
int64_t
pr_graph_find(const PrGraph *g, int64_t external_id)
{
	int64_t		lo = pr_lower_bound(g->node_ids, 0, g->n_nodes, external_id);

	if (lo < g->n_nodes && g->node_ids[lo] == external_id)
		return lo;
	return -1;
}
