/*
 * graph_gen.c — the graph generator of the tests and benchmarks; see graph_gen.h.
 *
 * Edge i draws its random numbers from a stream of its own (splitmix64 started at a hash of the
 * seed and i).  Random relabellings are bijections of [0, n) computed on the fly: a few rounds of
 * multiply-by-odd, xor-shift and add on the smallest power of two >= n, walked again while the
 * value falls outside [0, n) (the walk of a bijection stays a bijection).
 */
#define _POSIX_C_SOURCE 200809L
#include "graph_gen.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* R-MAT thresholds on 16-bit fractions: a, a + b, a + b + c of 65536. */
#define RMAT_A		37356		/* 0.57 */
#define RMAT_AB		49807		/* 0.76 */
#define RMAT_ABC	62259		/* 0.95 */

#define GOLDEN		0x9E3779B97F4A7C15ull

/* The splitmix64 finaliser of one value (a hash). */
static inline uint64_t
mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* A random bijection of [0, n): its round keys and the bit width it works on. */
typedef struct Shuffle
{
	uint64_t	n;
	uint64_t	mask;
	int			half;
	uint64_t	key[4];
} Shuffle;

/* The bijection of [0, n) that seed names. */
static Shuffle
shuffle_make(uint64_t n, uint64_t seed)
{
	Shuffle		s;
	int			bits = 0;

	while (bits < 63 && ((uint64_t) 1 << bits) < n)
		bits++;
	s.n = n;
	s.mask = ((uint64_t) 1 << bits) - 1;
	s.half = (bits + 1) / 2;
	for (int r = 0; r < 4; r++)
		s.key[r] = mix64(seed + (uint64_t) (r + 1) * GOLDEN);
	return s;
}

/* Image of x (in [0, n)) under the bijection. */
static inline uint64_t
shuffle_apply(const Shuffle *s, uint64_t x)
{
	if (s->n <= 1)
		return 0;
	do
	{
		for (int r = 0; r < 4; r++)
		{
			x = (x * (s->key[r] | 1)) & s->mask;
			x ^= x >> s->half;
			x = (x + (s->key[r] >> 7)) & s->mask;
		}
	} while (x >= s->n);
	return x;
}

/*
 * A Zipf law over the ranks [0, n): rank r with probability about (r + 1)^-s, drawn by inverting
 * the distribution of the density x^-s over [1/2, n + 1/2) and rounding (x in [r + 1/2, r + 3/2)
 * is rank r).  low, span and inverse are that inversion's constants.
 */
typedef struct ZipfLaw
{
	uint64_t	n;
	bool		logarithmic;	/* s = 1: x = low * e^(u * span) */
	double		low,
				span,
				inverse;		/* else x = (low + u * span)^inverse */
} ZipfLaw;

/* The Zipf law of exponent s (>= 0) over n ranks. */
static ZipfLaw
zipf_make(uint64_t n, double s)
{
	ZipfLaw		z;
	double		t = 1.0 - s;

	z.n = n;
	z.logarithmic = fabs(t) < 1e-9;
	if (z.logarithmic)
	{
		z.low = 0.5;
		z.span = log(2.0 * (double) n + 1.0);
		z.inverse = 1.0;
	}
	else
	{
		z.low = pow(0.5, t);
		z.span = pow((double) n + 0.5, t) - z.low;
		z.inverse = 1.0 / t;
	}
	return z;
}

/* A rank in [0, n) drawn from the Zipf law. */
static inline uint64_t
zipf_rank(const ZipfLaw *z, uint64_t *state)
{
	double		u = gen_unit(state);
	double		x = z->logarithmic ? z->low * exp(u * z->span) : pow(z->low + u * z->span, z->inverse);
	double		r = floor(x - 0.5);

	if (r < 0)
		return 0;
	return r < (double) z->n ? (uint64_t) r : z->n - 1;	/* rounding at the ends */
}

/* What every edge of one graph shares: the spec, the edge key and the relabellings. */
typedef struct Prepared
{
	GenSpec		spec;
	uint64_t	edge_key;
	Shuffle		ids;			/* R-MAT / uniform relabelling; GEN_LOCAL: popular nodes;
								 * GEN_BIPARTITE: item ranks */
	Shuffle		sources;		/* GEN_LOCAL: ranks of the sources */
	ZipfLaw		items;			/* GEN_BIPARTITE: the items' popularity */
} Prepared;

/* Derives the edge key, the relabellings and the item law of a spec. */
static void
prepare(const GenSpec *spec, Prepared *p)
{
	uint64_t	items = (uint64_t) (spec->n - spec->users);

	p->spec = *spec;
	p->edge_key = mix64(spec->seed ^ 0x6A09E667F3BCC909ull);
	p->ids = shuffle_make(spec->kind == GEN_BIPARTITE ? items : (uint64_t) spec->n,
						  spec->seed ^ 0xBB67AE8584CAA73Bull);
	p->sources = shuffle_make((uint64_t) spec->n, spec->seed ^ 0x3C6EF372FE94F82Bull);
	if (spec->kind == GEN_BIPARTITE)
		p->items = zipf_make(items, spec->zipf);
}

/* A rank in [0, n) drawn with density about r^(1/skew - 1): low ranks most likely. */
static inline uint64_t
power_law_rank(uint64_t *state, uint64_t n, int skew)
{
	double		u = gen_unit(state),
				x = u;

	uint64_t	r;

	for (int k = 1; k < skew; k++)
		x *= u;
	r = (uint64_t) (x * (double) n);
	return r < n ? r : n - 1;	/* x * n can round up to n for very large n */
}

/* Edge i of a prepared graph. */
static inline void
edge_of(const Prepared *p, int64_t i, uint64_t *src, uint64_t *dst)
{
	const GenSpec *g = &p->spec;
	uint64_t	state = mix64(p->edge_key + (uint64_t) i * GOLDEN);
	uint64_t	n = (uint64_t) g->n,
				u = 0,
				v = 0;

	if (g->kind == GEN_RMAT)
	{
		for (int level = 0; level < g->scale; level += 4)
		{
			uint64_t	r = gen_random(&state);

			for (int l = level; l < level + 4 && l < g->scale; l++, r >>= 16)
			{
				uint64_t	f = r & 0xffff;
				uint64_t	q = (uint64_t) (f >= RMAT_A) + (f >= RMAT_AB) + (f >= RMAT_ABC);

				/* quadrants a, b, c, d: (0, 0), (0, 1), (1, 0), (1, 1) */
				u = (u << 1) | (q >> 1);
				v = (v << 1) | (q & 1);
			}
		}
		if (g->permute)
		{
			u = shuffle_apply(&p->ids, u);
			v = shuffle_apply(&p->ids, v);
		}
	}
	else if (g->kind == GEN_UNIFORM)
	{
		u = gen_random(&state) % n;
		v = gen_random(&state) % n;
		if (g->permute)
		{
			u = shuffle_apply(&p->ids, u);
			v = shuffle_apply(&p->ids, v);
		}
	}
	else if (g->kind == GEN_BIPARTITE)
	{
		u = gen_random(&state) % (uint64_t) g->users;
		v = zipf_rank(&p->items, &state);
		if (g->permute)
			v = shuffle_apply(&p->ids, v);
		v += (uint64_t) g->users;
	}
	else
	{
		u = shuffle_apply(&p->sources, power_law_rank(&state, n, g->skew));
		if (gen_unit(&state) < g->p_local)
		{
			uint64_t	window = g->window < 1 ? 1 : (uint64_t) g->window;
			uint64_t	d = (1 + power_law_rank(&state, window, g->skew)) % n;

			v = (gen_random(&state) & 1) ? (u + d) % n : (u + n - d) % n;
		}
		else
		{
			v = power_law_rank(&state, n, g->skew);
			if (g->permute)
				v = shuffle_apply(&p->ids, v);
		}
	}
	*src = u;
	*dst = v;
}

/* A spec of the given kind with every other field zero. */
static GenSpec
spec_of(GenKind kind, int64_t n, int64_t m, uint64_t seed)
{
	GenSpec		s;

	memset(&s, 0, sizeof(s));
	s.kind = kind;
	s.n = n;
	s.m = m;
	s.seed = seed;
	return s;
}

/* R-MAT over 2^scale nodes; see graph_gen.h. */
GenSpec
gen_rmat(int scale, int64_t m, uint64_t seed, bool permute)
{
	GenSpec		s = spec_of(GEN_RMAT, (int64_t) 1 << scale, m, seed);

	s.scale = scale;
	s.permute = permute;
	return s;
}

/* Uniform graph; see graph_gen.h. */
GenSpec
gen_uniform(int64_t n, int64_t m, uint64_t seed)
{
	return spec_of(GEN_UNIFORM, n, m, seed);
}

/* Power-law graph with locality; see graph_gen.h. */
GenSpec
gen_local(int64_t n, int64_t m, double p_local, int64_t window, uint64_t seed)
{
	GenSpec		s = spec_of(GEN_LOCAL, n, m, seed);

	s.permute = true;
	s.p_local = p_local;
	s.window = window;
	s.skew = 2;
	return s;
}

/* Bipartite user–item graph; see graph_gen.h. */
GenSpec
gen_bipartite(int64_t users, int64_t items, int64_t m, double zipf, uint64_t seed)
{
	GenSpec		s = spec_of(GEN_BIPARTITE, users + items, m, seed);

	s.permute = true;
	s.users = users;
	s.zipf = zipf;
	return s;
}

/* Takes one graph option of a benchmark's command line; see graph_gen.h. */
int
gen_take_option(int argc, char **argv, int i, GenOptions *opts)
{
	if (i + 1 >= argc)
		return 0;
	if (strcmp(argv[i], "--rmat") == 0 || strcmp(argv[i], "--er") == 0)
		snprintf(opts->graph, sizeof(opts->graph), "%s:%s", argv[i] + 2, argv[i + 1]);
	else if (strcmp(argv[i], "--graph") == 0)
		snprintf(opts->graph, sizeof(opts->graph), "%s", argv[i + 1]);
	else if (strcmp(argv[i], "--order") == 0)
	{
		GenIdOrder	o;

		for (o = GEN_IDS_NATURAL; o <= GEN_IDS_SHUFFLED; o++)
			if (strcmp(argv[i + 1], gen_id_order_name(o)) == 0)
				break;
		if (o > GEN_IDS_SHUFFLED)
			return 0;
		opts->id_order = o;
	}
	else
		return 0;
	return 2;
}

/* Parses "kind:scale[:ef[:...]]"; see graph_gen.h. */
bool
gen_parse(const char *name, uint64_t seed, GenSpec *spec)
{
	char		kind[16];
	double		field[4] = {0, 16, 0, 0};
	int			n_fields = 0;
	const char *p = strchr(name, ':');
	int64_t		n;
	double		p_local,
				window,
				zipf;

	if (p == NULL || p - name >= (long) sizeof(kind))
		return false;
	memcpy(kind, name, (size_t) (p - name));
	kind[p - name] = '\0';
	while (*p == ':' && n_fields < 4)
	{
		char	   *end;

		field[n_fields++] = strtod(p + 1, &end);
		if (end == p + 1)
			return false;
		p = end;
	}
	if (*p != '\0' || field[0] < 1 || field[0] > 40 || field[0] != (int) field[0] || field[1] <= 0)
		return false;
	n = (int64_t) 1 << (int) field[0];
	seed += (uint64_t) field[0];
	p_local = n_fields > 2 ? field[2] : 0.9;
	window = n_fields > 3 ? field[3] : 64;
	zipf = n_fields > 2 ? field[2] / 100 : 1.1;
	if (strcmp(kind, "rmat") == 0 && n_fields <= 2)
		*spec = gen_rmat((int) field[0], (int64_t) (field[1] * (double) n), seed, true);
	else if (strcmp(kind, "er") == 0 && n_fields <= 2)
		*spec = gen_uniform(n, (int64_t) (field[1] * (double) n), seed);
	else if (strcmp(kind, "local") == 0 && p_local >= 0 && p_local <= 1 && window >= 1)
		*spec = gen_local(n, (int64_t) (field[1] * (double) n), p_local, (int64_t) window, seed);
	else if (strcmp(kind, "bip") == 0 && n_fields <= 3 && field[0] >= 2 && zipf >= 0 && zipf <= 10)
		*spec = gen_bipartite(n, n / 4, (int64_t) (field[1] * (double) n), zipf, seed);
	else
		return false;
	return true;
}

/* A short description of the graph; see graph_gen.h. */
void
gen_describe(const GenSpec *spec, char *buf, size_t size)
{
	if (spec->kind == GEN_RMAT)
		snprintf(buf, size, "rmat scale=%d m=%lld%s seed=%llu", spec->scale, (long long) spec->m,
				 spec->permute ? "" : " natural ids", (unsigned long long) spec->seed);
	else if (spec->kind == GEN_UNIFORM)
		snprintf(buf, size, "uniform n=%lld m=%lld seed=%llu", (long long) spec->n,
				 (long long) spec->m, (unsigned long long) spec->seed);
	else if (spec->kind == GEN_BIPARTITE)
		snprintf(buf, size, "bipartite users=%lld items=%lld m=%lld zipf=%g seed=%llu",
				 (long long) spec->users, (long long) (spec->n - spec->users), (long long) spec->m,
				 spec->zipf, (unsigned long long) spec->seed);
	else
		snprintf(buf, size, "local n=%lld m=%lld p_local=%g window=%lld skew=%d seed=%llu",
				 (long long) spec->n, (long long) spec->m, spec->p_local, (long long) spec->window,
				 spec->skew, (unsigned long long) spec->seed);
}

/* Edge i of the graph; see graph_gen.h. */
void
gen_edge(const GenSpec *spec, int64_t i, int64_t *src, int64_t *dst)
{
	Prepared	p;
	uint64_t	u,
				v;

	prepare(spec, &p);
	edge_of(&p, i, &u, &v);
	*src = (int64_t) u;
	*dst = (int64_t) v;
}

/* A range of edges; see graph_gen.h. */
void
gen_edges_range(const GenSpec *spec, int64_t begin, int64_t end, int64_t *src, int64_t *dst)
{
	Prepared	p;

	prepare(spec, &p);
	for (int64_t i = begin; i < end; i++)
	{
		uint64_t	u,
					v;

		edge_of(&p, i, &u, &v);
		src[i - begin] = (int64_t) u;
		dst[i - begin] = (int64_t) v;
	}
}

/* One generating thread's share: edges [begin, end) into 64- or 32-bit arrays. */
typedef struct Share
{
	const Prepared *p;
	int64_t		begin,
				end;
	int64_t    *src64,
			   *dst64;
	int32_t    *src32,
			   *dst32;
} Share;

/* Generates one share. */
static void *
generate_share(void *arg)
{
	Share	   *s = arg;

	for (int64_t i = s->begin; i < s->end; i++)
	{
		uint64_t	u,
					v;

		edge_of(s->p, i, &u, &v);
		if (s->src64)
		{
			s->src64[i] = (int64_t) u;
			s->dst64[i] = (int64_t) v;
		}
		else
		{
			s->src32[i] = (int32_t) u;
			s->dst32[i] = (int32_t) v;
		}
	}
	return NULL;
}

/* Generates every edge on up to `threads` threads into whichever arrays are given. */
static void
generate_all(const GenSpec *spec, int64_t *src64, int64_t *dst64, int32_t *src32, int32_t *dst32,
			 int threads)
{
	enum
	{
		MAX_THREADS = 256
	};
	Prepared	p;
	pthread_t	th[MAX_THREADS];
	Share		share[MAX_THREADS];
	bool		started[MAX_THREADS];

	prepare(spec, &p);
	if (threads <= 0)
		threads = (int) sysconf(_SC_NPROCESSORS_ONLN);
	if (threads > MAX_THREADS)
		threads = MAX_THREADS;
	if ((int64_t) threads > spec->m / 65536 + 1)
		threads = (int) (spec->m / 65536 + 1);
	if (threads < 1)
		threads = 1;
	for (int t = 0; t < threads; t++)
	{
		share[t] = (Share) {&p, spec->m * t / threads, spec->m * (t + 1) / threads,
			src64, dst64, src32, dst32};
		started[t] = t > 0 && pthread_create(&th[t], NULL, generate_share, &share[t]) == 0;
	}
	generate_share(&share[0]);
	for (int t = 1; t < threads; t++)
	{
		if (started[t])
			pthread_join(th[t], NULL);
		else
			generate_share(&share[t]);	/* no thread: done here */
	}
}

/* All edges, 64-bit ids; see graph_gen.h. */
void
gen_edges(const GenSpec *spec, int64_t *src, int64_t *dst, int threads)
{
	generate_all(spec, src, dst, NULL, NULL, threads);
}

/* All edges, 32-bit ids; see graph_gen.h. */
void
gen_edges32(const GenSpec *spec, int32_t *src, int32_t *dst, int threads)
{
	generate_all(spec, NULL, NULL, src, dst, threads);
}

/* LSD radix sort of 64-bit keys; see graph_gen.h. */
uint64_t *
gen_sort_keys(uint64_t *keys, uint64_t *tmp, size_t n)
{
	size_t	   *count = malloc(65536 * sizeof(size_t));
	uint64_t   *from = keys,
			   *to = tmp;

	if (count == NULL || n == 0)
	{
		free(count);
		return keys;
	}
	for (int shift = 0; shift < 64; shift += 16)
	{
		size_t		sum = 0;

		memset(count, 0, 65536 * sizeof(size_t));
		for (size_t i = 0; i < n; i++)
			count[(from[i] >> shift) & 0xffff]++;
		if (count[(from[0] >> shift) & 0xffff] == n)
			continue;
		for (size_t b = 0; b < 65536; b++)
		{
			size_t		c = count[b];

			count[b] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			to[count[(from[i] >> shift) & 0xffff]++] = from[i];
		{
			uint64_t   *t = from;

			from = to;
			to = t;
		}
	}
	free(count);
	return from;
}

/* Sort by (src, dst) and drop duplicate pairs; see graph_gen.h. */
size_t
gen_dedupe(int64_t *src, int64_t *dst, size_t m)
{
	uint64_t   *keys = malloc((m + 1) * sizeof(uint64_t));
	uint64_t   *tmp = malloc((m + 1) * sizeof(uint64_t));
	uint64_t   *sorted;
	size_t		unique = 0;

	if (keys == NULL || tmp == NULL)
	{
		free(keys);
		free(tmp);
		return 0;
	}
	for (size_t i = 0; i < m; i++)
		keys[i] = ((uint64_t) src[i] << 32) | (uint64_t) (uint32_t) dst[i];
	sorted = gen_sort_keys(keys, tmp, m);
	for (size_t i = 0; i < m; i++)
		if (i == 0 || sorted[i] != sorted[i - 1])
		{
			src[unique] = (int64_t) (sorted[i] >> 32);
			dst[unique] = (int64_t) (sorted[i] & 0xffffffffu);
			unique++;
		}
	free(keys);
	free(tmp);
	return unique;
}

/* The graph's unique edges, sorted; see graph_gen.h. */
size_t
gen_unique_edges(const GenSpec *spec, int threads, int64_t **src, int64_t **dst)
{
	size_t		m = 0;

	*src = malloc(((size_t) spec->m + 1) * sizeof(int64_t));
	*dst = malloc(((size_t) spec->m + 1) * sizeof(int64_t));
	if (*src != NULL && *dst != NULL)
	{
		gen_edges(spec, *src, *dst, threads);
		m = gen_dedupe(*src, *dst, (size_t) spec->m);
	}
	if (m == 0)
	{
		free(*src);
		free(*dst);
		*src = *dst = NULL;
	}
	return m;
}

/* Fisher-Yates shuffle of the edge order; see graph_gen.h. */
void
gen_shuffle(int64_t *src, int64_t *dst, size_t m, uint64_t seed)
{
	uint64_t	state = seed;

	for (size_t i = m; i > 1; i--)
	{
		size_t		j = (size_t) (gen_random(&state) % (uint64_t) i);
		int64_t		s = src[i - 1],
					d = dst[i - 1];

		src[i - 1] = src[j];
		dst[i - 1] = dst[j];
		src[j] = s;
		dst[j] = d;
	}
}

/* Breadth-first numbering along the out-edges; see graph_gen.h. */
bool
gen_bfs_order(int64_t n, const int64_t *src, const int64_t *dst, size_t m, int64_t *new_id)
{
	int64_t    *start = calloc((size_t) n + 1, sizeof(int64_t));
	int64_t    *next = malloc(((size_t) m + 1) * sizeof(int64_t));
	int64_t    *order = malloc(((size_t) n + 1) * sizeof(int64_t));
	int64_t		numbered = 0;

	if (start == NULL || next == NULL || order == NULL)
	{
		free(start);
		free(next);
		free(order);
		return false;
	}
	/* out-neighbours by a counting sort on the source */
	for (size_t e = 0; e < m; e++)
		start[src[e] + 1]++;
	for (int64_t v = 0; v < n; v++)
		start[v + 1] += start[v];
	for (size_t e = 0; e < m; e++)
		next[start[src[e]]++] = dst[e];
	for (int64_t v = n; v > 0; v--)
		start[v] = start[v - 1];
	start[0] = 0;
	for (int64_t v = 0; v < n; v++)
		new_id[v] = -1;
	/* order[] is the queue: nodes in the order they were numbered */
	for (int64_t root = 0, head = 0; root < n; root++)
	{
		if (new_id[root] >= 0)
			continue;
		new_id[root] = numbered;
		order[numbered++] = root;
		for (; head < numbered; head++)
			for (int64_t e = start[order[head]]; e < start[order[head] + 1]; e++)
				if (new_id[next[e]] < 0)
				{
					new_id[next[e]] = numbered;
					order[numbered++] = next[e];
				}
	}
	free(start);
	free(next);
	free(order);
	return true;
}

/* Renames the endpoints; see graph_gen.h. */
void
gen_relabel(int64_t *src, int64_t *dst, size_t m, const int64_t *new_id)
{
	for (size_t e = 0; e < m; e++)
	{
		src[e] = new_id[src[e]];
		dst[e] = new_id[dst[e]];
	}
}

/* The --order word of an id order; see graph_gen.h. */
const char *
gen_id_order_name(GenIdOrder order)
{
	return order == GEN_IDS_BFS ? "bfs" : order == GEN_IDS_SHUFFLED ? "shuffled" : "natural";
}

/* Renumbering of an edge list; see graph_gen.h. */
bool
gen_reorder_ids(GenIdOrder order, int64_t *src, int64_t *dst, size_t m, uint64_t seed)
{
	int64_t		n = 0;
	int64_t    *new_id;
	bool		ok = true;

	if (order == GEN_IDS_NATURAL)
		return true;
	for (size_t e = 0; e < m; e++)
	{
		if (src[e] < 0 || dst[e] < 0)
			return false;
		n = src[e] >= n ? src[e] + 1 : n;
		n = dst[e] >= n ? dst[e] + 1 : n;
	}
	new_id = malloc(((size_t) n + 1) * sizeof(int64_t));
	if (new_id == NULL)
		return false;
	if (order == GEN_IDS_BFS)
		ok = gen_bfs_order(n, src, dst, m, new_id);
	else
	{
		/* the generators' own bijection of [0, n): hashed ids */
		Shuffle		ids = shuffle_make((uint64_t) n, seed);

		for (int64_t v = 0; v < n; v++)
			new_id[v] = (int64_t) shuffle_apply(&ids, (uint64_t) v);
	}
	if (ok)
		gen_relabel(src, dst, m, new_id);
	free(new_id);
	return ok;
}


/* Where gen_hub_edges writes its edges, and how many it wrote. */
typedef struct HubSink
{
	uint64_t   *seed;
	bool		weighted;
	int64_t    *src;
	int64_t    *dst;
	double	   *weight;
	size_t		m;
} HubSink;

/* One edge u -> v of the hub graph, its weight drawn when weighted (written or only counted). */
static void
hub_add(HubSink *sink, int64_t u, int64_t v)
{
	double		w = sink->weighted ? 0.25 * (double) (1 + gen_random(sink->seed) % 8) : 1.0;

	if (sink->src != NULL)
	{
		sink->src[sink->m] = u;
		sink->dst[sink->m] = v;
		if (sink->weight != NULL)
			sink->weight[sink->m] = w;
	}
	sink->m++;
}

/* The hub graph of the GPU products' tests; see graph_gen.h. */
size_t
gen_hub_edges(uint64_t seed, bool weighted, int64_t *src, int64_t *dst, double *weight)
{
	const int64_t n = 4500;
	const int64_t senders = 4000;
	HubSink		sink = {&seed, weighted, src, dst, weight, 0};

	for (int rep = 0; rep < 2; rep++)
		for (int64_t u = 0; u < senders; u++)
			hub_add(&sink, u, 0);
	for (int64_t u = 0; u < senders; u++)
		if (gen_random(&seed) % 4 != 0)
			hub_add(&sink, u, 1);
	for (int64_t i = 0; i < 1500; i++)
		hub_add(&sink, (int64_t) (gen_random(&seed) % senders), 2);
	for (int64_t i = 0; i < 1030; i++)
		hub_add(&sink, (int64_t) (gen_random(&seed) % senders), 3);
	for (int64_t v = 4; v < n; v++)
		for (int64_t i = 0; i < v % 150; i++)
			hub_add(&sink, (int64_t) (gen_random(&seed) % senders), v);
	hub_add(&sink, n - 1, n - 1);	/* every id an endpoint; node n-1 a self-loop */
	return sink.m;
}
