/*
 * pr_graph_ids_sort.c — the id map of a graph build by sorting: the 2m endpoints LSD-radix-sorted
 * as (key, position) pairs on chunks of threads, then every endpoint ranked by position.
 */
#include "pr_graph_build.h"

#include <string.h>

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

/* True when every key has the same digit d (the sort skips that digit), by the histograms. */
static bool
digit_is_trivial(const EndpointSort *s, int d)
{
	size_t		total[DIGIT_VALUES];

	memset(total, 0, sizeof(total));
	for (int t = 0; t < s->n_chunks; t++)
	{
		const size_t *h = chunk_hist(s, t, d);

		for (int b = 0; b < DIGIT_VALUES; b++)
			total[b] += h[b];
	}
	for (int b = 0; b < DIGIT_VALUES; b++)
		if (total[b] == s->count)
			return true;
	return false;
}

/* Turns the chunks' histograms of digit d into their scatter offsets: by digit value, then chunk. */
static void
digit_offsets(EndpointSort *s, int d)
{
	size_t		sum = 0;

	for (int b = 0; b < DIGIT_VALUES; b++)
		for (int t = 0; t < s->n_chunks; t++)
		{
			size_t	   *h = chunk_hist(s, t, d);
			size_t		c = h[b];

			h[b] = sum;
			sum += c;
		}
}

/*
 * LSD radix sort of the endpoints' (key, position) pairs into the buffers, one pass per digit on
 * which the keys differ (s->from: the buffer that holds the result).  False when options asked
 * to stop.
 */
static bool
sort_endpoints(EndpointSort *s, const PrBuildOptions *options)
{
	/* histograms of every digit per chunk; a digit on which all keys agree needs no pass */
	if (!pr_build_run_waves(endpoint_hist_all, s, s->n_chunks, s->count, options))
		return false;
	s->from = -1;
	for (int d = 0; d < s->n_digits; d++)
	{
		if (pr_build_stop_requested(options))
			return false;
		/* a pass always runs at the end if none did: it moves the input into the buffers */
		if (digit_is_trivial(s, d) && !(s->from < 0 && d == s->n_digits - 1))
			continue;
		if (s->from >= 0 && s->n_chunks > 1)
		{
			/* chunk histograms of this digit over the current order */
			s->digit = d;
			if (!pr_build_run_waves(endpoint_hist_pass, s, s->n_chunks, s->count, options) ||
				pr_build_stop_requested(options))
				return false;
		}
		digit_offsets(s, d);
		s->digit = d;
		if (!pr_build_run_waves(endpoint_scatter, s, s->n_chunks, s->count, options))
			return false;
		s->from = s->from < 0 ? 0 : 1 - s->from;
	}
	return true;
}

/*
 * Ranks the sorted endpoints: the distinct keys into the spare key buffer, every endpoint's rank
 * into s->ranks (the spare position buffer), their number into *n_out.  PR_ERR_INTERRUPTED or
 * PR_ERR_TOO_LARGE with the message.
 */
static PrStatus
rank_endpoints(EndpointSort *s, const PrBuildOptions *options, int64_t *n_out, PrError *err)
{
	int64_t		n = 0;

	if (pr_build_stop_requested(options))
		return pr_build_interrupted(err);
	s->ranks = (int32_t *) s->pos[1 - s->from];
	if (!pr_build_run_waves(endpoint_count_distinct, s, s->n_chunks, s->count, options))
		return pr_build_interrupted(err);
	for (int t = 0; t < s->n_chunks; t++)
	{
		int64_t		c = s->chunk_starts[t];

		s->chunk_starts[t] = n;
		n += c;
	}
	if (n > PR_MAX_NODES)
		return pr_build_too_many_nodes(n, err);
	if (!pr_build_run_waves(endpoint_rank, s, s->n_chunks, s->count, options) ||
		pr_build_stop_requested(options))
		return pr_build_interrupted(err);
	*n_out = n;
	return PR_OK;
}

/*
 * Sorts the endpoints (ids in [lo_id, hi_id]) and gives every one its rank: *ranks_out gets
 * [2m] ranks (src ranks then dst ranks), map->node_ids the distinct ids.  2m < 2^32.
 */
PrStatus
pr_id_map_build_ranked(const int64_t *src, const int64_t *dst, size_t m, int64_t lo_id,
					   int64_t hi_id, int n_threads, const PrBuildOptions *options,
					   const PrAllocator *alloc, IdMap *map, int32_t **ranks_out, PrError *err)
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
	s.n_chunks = pr_build_chunks_for(s.count, n_threads);
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

	if (!sort_endpoints(&s, options))
	{
		failure = pr_build_interrupted(err);
		goto fail;
	}
	failure = rank_endpoints(&s, options, &n, err);
	if (failure != PR_OK)
		goto fail;
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
fail:
	pr_free(alloc, s.keys[0]);
	pr_free(alloc, s.keys[1]);
	pr_free(alloc, s.pos[0]);
	pr_free(alloc, s.pos[1]);
	pr_free(alloc, s.hist);
	pr_free(alloc, s.chunk_starts);
	return failure;
}
