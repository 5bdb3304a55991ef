/*
 * pr_graph_flat.c — the graph as one contiguous, position-independent buffer.
 *
 * Layout: a PrFlatHeader, then each present array at an 8-byte-aligned offset from the start of
 * the buffer (offset 0 = absent).  pr_graph_view_flat checks every invariant the build guarantees
 * (header and layout, row pointers, ids, weights, the derived out-strengths and dangling list; see
 * pr_graph.h) so that a corrupt, truncated or forged buffer is rejected with PR_ERR_INVALID and
 * never crashes a reader or gives a wrong ranking.  pr_graph_view_flat_threads checks the same in
 * two streaming passes on threads (one over the nodes, one over the in-edges), an unweighted
 * graph's out-degrees by fingerprint instead of counting them (see "The out-degree fingerprint").
 */
#include "pr_graph_flat.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Rounds up to a multiple of 8. */
static inline size_t
align8(size_t x)
{
	return (x + 7) & ~(size_t) 7;
}

/* Element count and size of each array of g; count 0 or a NULL pointer means absent. */
static void
flat_arrays(const PrGraph *g, const void *ptrs[PR_FLAT_N_ARRAYS], size_t counts[PR_FLAT_N_ARRAYS],
			size_t elem[PR_FLAT_N_ARRAYS])
{
	int64_t		n = g->n_nodes,
				m = g->n_edges;

	ptrs[PR_FLAT_NODE_IDS] = g->node_ids;
	counts[PR_FLAT_NODE_IDS] = (size_t) n;
	elem[PR_FLAT_NODE_IDS] = sizeof(int64_t);
	ptrs[PR_FLAT_IN_PTR] = g->in_ptr;
	counts[PR_FLAT_IN_PTR] = (size_t) n + 1;
	elem[PR_FLAT_IN_PTR] = sizeof(int64_t);
	ptrs[PR_FLAT_IN_SRC] = g->in_src;
	counts[PR_FLAT_IN_SRC] = (size_t) m;
	elem[PR_FLAT_IN_SRC] = sizeof(int32_t);
	ptrs[PR_FLAT_IN_WEIGHT] = g->weighted ? g->in_weight : NULL;
	counts[PR_FLAT_IN_WEIGHT] = g->weighted ? (size_t) m : 0;
	elem[PR_FLAT_IN_WEIGHT] = sizeof(double);
	ptrs[PR_FLAT_OUT_PTR] = g->has_out_edges ? g->out_ptr : NULL;
	counts[PR_FLAT_OUT_PTR] = g->has_out_edges ? (size_t) n + 1 : 0;
	elem[PR_FLAT_OUT_PTR] = sizeof(int64_t);
	ptrs[PR_FLAT_OUT_DST] = g->has_out_edges ? g->out_dst : NULL;
	counts[PR_FLAT_OUT_DST] = g->has_out_edges ? (size_t) m : 0;
	elem[PR_FLAT_OUT_DST] = sizeof(int32_t);
	ptrs[PR_FLAT_OUT_WEIGHT] = (g->has_out_edges && g->weighted) ? g->out_weight : NULL;
	counts[PR_FLAT_OUT_WEIGHT] = (g->has_out_edges && g->weighted) ? (size_t) m : 0;
	elem[PR_FLAT_OUT_WEIGHT] = sizeof(double);
	ptrs[PR_FLAT_OUT_STRENGTH] = g->out_strength;
	counts[PR_FLAT_OUT_STRENGTH] = (size_t) n;
	elem[PR_FLAT_OUT_STRENGTH] = sizeof(double);
	ptrs[PR_FLAT_DANGLING] = g->dangling;
	counts[PR_FLAT_DANGLING] = (size_t) g->n_dangling;
	elem[PR_FLAT_DANGLING] = sizeof(int32_t);
}

/*
 * Offsets of g's present arrays in its flat form (0 for an absent one), from the shape alone
 * (counts and flags); returns the total size.
 */
static size_t
flat_layout(const PrGraph *g, const void *ptrs[PR_FLAT_N_ARRAYS], size_t counts[PR_FLAT_N_ARRAYS],
			size_t elem[PR_FLAT_N_ARRAYS], uint64_t offsets[PR_FLAT_N_ARRAYS])
{
	size_t		pos = align8(sizeof(PrFlatHeader));

	flat_arrays(g, ptrs, counts, elem);
	for (int i = 0; i < PR_FLAT_N_ARRAYS; i++)
	{
		offsets[i] = counts[i] > 0 ? pos : 0;
		if (counts[i] > 0)
			pos += align8(counts[i] * elem[i]);
	}
	return pos;
}

/* Writes the header of a flat graph laid out at offsets (and zeroes its padding). */
static void
flat_write_header(const PrGraph *g, const uint64_t offsets[PR_FLAT_N_ARRAYS], size_t total,
				  char *base)
{
	PrFlatHeader header;

	memset(&header, 0, sizeof(header));
	header.magic = PR_FLAT_MAGIC;
	header.version = PR_FLAT_VERSION;
	header.total_size = total;
	header.n_nodes = g->n_nodes;
	header.n_edges = g->n_edges;
	header.n_dangling = g->n_dangling;
	header.flags = (g->weighted ? PR_FLAT_WEIGHTED : 0) | (g->has_out_edges ? PR_FLAT_OUT_EDGES : 0);
	memcpy(header.offset, offsets, sizeof(header.offset));
	memcpy(base, &header, sizeof(header));
	if (align8(sizeof(header)) > sizeof(header))
		memset(base + sizeof(header), 0, align8(sizeof(header)) - sizeof(header));
}

/* Bytes pr_graph_write_flat needs for g. */
size_t
pr_graph_flat_size(const PrGraph *g)
{
	const void *ptrs[PR_FLAT_N_ARRAYS];
	size_t		counts[PR_FLAT_N_ARRAYS],
				elem[PR_FLAT_N_ARRAYS];
	uint64_t	offsets[PR_FLAT_N_ARRAYS];

	return flat_layout(g, ptrs, counts, elem, offsets);
}

/*
 * Lays out a flat graph of g's shape in buf without copying anything: writes the header, zeroes
 * each array's padding and points g's arrays at their places, for a producer that fills them
 * there (the GPU build).  Returns the size.
 */
size_t
pr_graph_flat_place(PrGraph *g, void *buf)
{
	const void *ptrs[PR_FLAT_N_ARRAYS];
	size_t		counts[PR_FLAT_N_ARRAYS],
				elem[PR_FLAT_N_ARRAYS];
	uint64_t	offsets[PR_FLAT_N_ARRAYS];
	void	   *arrays[PR_FLAT_N_ARRAYS];
	char	   *base = (char *) buf;
	size_t		total = flat_layout(g, ptrs, counts, elem, offsets);

	for (int i = 0; i < PR_FLAT_N_ARRAYS; i++)
	{
		size_t		bytes = counts[i] * elem[i];

		arrays[i] = offsets[i] != 0 ? base + offsets[i] : NULL;
		if (offsets[i] != 0 && align8(bytes) > bytes)
			memset(base + offsets[i] + bytes, 0, align8(bytes) - bytes);
	}
	g->node_ids = arrays[PR_FLAT_NODE_IDS];
	g->in_ptr = arrays[PR_FLAT_IN_PTR];
	g->in_src = arrays[PR_FLAT_IN_SRC];
	g->in_weight = arrays[PR_FLAT_IN_WEIGHT];
	g->out_ptr = arrays[PR_FLAT_OUT_PTR];
	g->out_dst = arrays[PR_FLAT_OUT_DST];
	g->out_weight = arrays[PR_FLAT_OUT_WEIGHT];
	g->out_strength = arrays[PR_FLAT_OUT_STRENGTH];
	g->dangling = arrays[PR_FLAT_DANGLING];
	flat_write_header(g, offsets, total, base);
	return total;
}

/* Arrays at least this large are copied by several threads. */
#define FLAT_PARALLEL_COPY_BYTES ((size_t) 64 << 20)
#define FLAT_MAX_COPY_THREADS 16

/* A copy split into parts for pr_parallel_run. */
typedef struct ParallelCopy
{
	char	   *dst;
	const char *src;
	size_t		bytes;
} ParallelCopy;

/* pr_parallel_run's task: copies part `part` of n_parts (even byte ranges). */
static void
copy_part(void *arg, int part, int n_parts)
{
	ParallelCopy *c = (ParallelCopy *) arg;
	int64_t		b,
				e;

	pr_even_range((int64_t) c->bytes, part, n_parts, &b, &e);
	memcpy(c->dst + b, c->src + b, (size_t) (e - b));
}

/*
 * memcpy of bytes by up to n_threads threads: a large array into a fresh shared-memory segment
 * is bound by page faults and one core's copy bandwidth.
 */
static void
copy_parallel(char *dst, const char *src, size_t bytes, int n_threads)
{
	ParallelCopy c = {dst, src, bytes};

	if (n_threads > FLAT_MAX_COPY_THREADS)
		n_threads = FLAT_MAX_COPY_THREADS;
	if (n_threads <= 1 || bytes < FLAT_PARALLEL_COPY_BYTES)
		memcpy(dst, src, bytes);
	else
		pr_parallel_run(copy_part, &c, n_threads);
}

/* Writes g into buf, which has pr_graph_flat_size(g) bytes and is 8-byte aligned. */
void
pr_graph_write_flat(const PrGraph *g, void *buf)
{
	pr_graph_write_flat_threads(g, buf, 1);
}

/* Writes g into buf as pr_graph_write_flat does, large arrays copied by up to n_threads threads. */
void
pr_graph_write_flat_threads(const PrGraph *g, void *buf, int n_threads)
{
	const void *ptrs[PR_FLAT_N_ARRAYS];
	size_t		counts[PR_FLAT_N_ARRAYS],
				elem[PR_FLAT_N_ARRAYS];
	uint64_t	offsets[PR_FLAT_N_ARRAYS];
	char	   *base = (char *) buf;
	size_t		total = flat_layout(g, ptrs, counts, elem, offsets);

	for (int i = 0; i < PR_FLAT_N_ARRAYS; i++)
	{
		size_t		bytes = counts[i] * elem[i];

		if (offsets[i] == 0)
			continue;
		copy_parallel(base + offsets[i], (const char *) ptrs[i], bytes, n_threads);
		if (align8(bytes) > bytes)
			memset(base + offsets[i] + bytes, 0, align8(bytes) - bytes);
	}
	flat_write_header(g, offsets, total, base);
}

/* Checks that row pointers start at 0, never decrease and end at m. */
static bool
row_pointers_valid(const int64_t *ptr, int64_t n, int64_t m)
{
	if (ptr[0] != 0 || ptr[n] != m)
		return false;
	for (int64_t i = 0; i < n; i++)
		if (ptr[i + 1] < ptr[i])
			return false;
	return true;
}

/* Checks that every id of an array lies in [0, n). */
static bool
ids_in_range(const int32_t *ids, int64_t count, int64_t n)
{
	for (int64_t i = 0; i < count; i++)
		if (ids[i] < 0 || ids[i] >= n)
			return false;
	return true;
}

/* Most threads of the checks, and the fewest ids per thread of the out-edges' range check. */
#define FLAT_MAX_CHECK_THREADS 16
#define FLAT_PARALLEL_CHECK_IDS ((int64_t) 16 << 20)

/*
 * The fewest nodes plus edges for which the node and edge passes run threaded, and for which
 * pr_graph_view_flat_threads checks an unweighted graph's out-strengths by fingerprint.
 */
#define FLAT_PARALLEL_CHECK_ROWS ((int64_t) 1 << 16)

/* A range check split into parts for pr_parallel_run. */
typedef struct RangeCheck
{
	const int32_t *ids;
	int64_t		count;
	int64_t		n;
	bool		bad[FLAT_MAX_CHECK_THREADS];
} RangeCheck;

/* pr_parallel_run's task: checks part `part` of n_parts. */
static void
check_part(void *arg, int part, int n_parts)
{
	RangeCheck *c = (RangeCheck *) arg;
	int64_t		b,
				e;

	pr_even_range(c->count, part, n_parts, &b, &e);
	c->bad[part] = !ids_in_range(c->ids + b, e - b, c->n);
}

/* ids_in_range by up to n_threads threads. */
static bool
ids_in_range_threads(const int32_t *ids, int64_t count, int64_t n, int n_threads)
{
	RangeCheck	c;

	if (n_threads > FLAT_MAX_CHECK_THREADS)
		n_threads = FLAT_MAX_CHECK_THREADS;
	if (n_threads <= 1 || count < FLAT_PARALLEL_CHECK_IDS)
		return ids_in_range(ids, count, n);
	memset(&c, 0, sizeof(c));
	c.ids = ids;
	c.count = count;
	c.n = n;
	pr_parallel_run(check_part, &c, n_threads);
	for (int t = 0; t < n_threads; t++)
		if (c.bad[t])
			return false;
	return true;
}

/* Checks that every value is finite, >= 0 and not subnormal, as the build stores weights. */
static bool
weights_valid(const double *w, int64_t count)
{
	for (int64_t i = 0; i < count; i++)
		if (!(w[i] >= 0.0) || isinf(w[i]) || pr_weight_subnormal(w[i]))
			return false;
	return true;
}

/*
 * Points view into a flat buffer after checking only its header, counts and offsets (O(1)), for a
 * buffer this program wrote itself (the cache's segments, the engine's own build); see pr_graph.h.
 */
PrStatus
pr_graph_view_flat_header(const void *buf, size_t size, PrGraph *view, PrError *err)
{
	PrFlatHeader header;
	PrGraph		g;
	const void *ptrs[PR_FLAT_N_ARRAYS];
	size_t		counts[PR_FLAT_N_ARRAYS],
				elem[PR_FLAT_N_ARRAYS];
	const char *base = (const char *) buf;
	void	   *arrays[PR_FLAT_N_ARRAYS];
	int64_t		n,
				m;

	memset(view, 0, sizeof(*view));
	if (buf == NULL || ((uintptr_t) buf & 7) != 0)
		return pr_error_set(err, PR_ERR_INVALID, "graph buffer is missing or not 8-byte aligned");
	if (size < sizeof(PrFlatHeader))
		return pr_error_set(err, PR_ERR_INVALID,
							"graph buffer of %zu bytes is shorter than its header", size);
	memcpy(&header, buf, sizeof(header));
	if (header.magic != PR_FLAT_MAGIC)
		return pr_error_set(err, PR_ERR_INVALID, "graph buffer has a bad magic number");
	if (header.version != PR_FLAT_VERSION)
		return pr_error_set(err, PR_ERR_INVALID, "graph buffer has unsupported version %u",
							header.version);
	if (header.total_size > size || header.total_size < sizeof(PrFlatHeader))
		return pr_error_set(err, PR_ERR_INVALID,
							"graph buffer declares %llu bytes but %zu are present",
							(unsigned long long) header.total_size, size);
	if ((header.flags & ~(PR_FLAT_WEIGHTED | PR_FLAT_OUT_EDGES)) != 0)
		return pr_error_set(err, PR_ERR_INVALID, "graph buffer has unknown flags");
	n = header.n_nodes;
	m = header.n_edges;
	if (n < 0 || n > PR_MAX_NODES || m < 0 || (n == 0 && m > 0) ||
		header.n_dangling < 0 || header.n_dangling > n ||
		(uint64_t) m > header.total_size)
		return pr_error_set(err, PR_ERR_INVALID, "graph buffer has impossible counts");

	/* sizes and offsets, all against total_size */
	memset(&g, 0, sizeof(g));
	g.n_nodes = n;
	g.n_edges = m;
	g.n_dangling = header.n_dangling;
	g.weighted = (header.flags & PR_FLAT_WEIGHTED) != 0;
	g.has_out_edges = (header.flags & PR_FLAT_OUT_EDGES) != 0;
	flat_arrays(&g, ptrs, counts, elem);
	for (int i = 0; i < PR_FLAT_N_ARRAYS; i++)
	{
		uint64_t	off = header.offset[i];

		arrays[i] = NULL;
		if (counts[i] == 0)
			continue;			/* absent or empty: never read */
		if (off == 0 || (off & 7) != 0 || off < sizeof(PrFlatHeader) || off > header.total_size ||
			counts[i] > (header.total_size - off) / elem[i])
			return pr_error_set(err, PR_ERR_INVALID,
								"graph buffer has a bad offset or size for array %d", i);
		arrays[i] = (void *) (base + off);
	}
	g.node_ids = arrays[PR_FLAT_NODE_IDS];
	g.in_ptr = arrays[PR_FLAT_IN_PTR];
	g.in_src = arrays[PR_FLAT_IN_SRC];
	g.in_weight = arrays[PR_FLAT_IN_WEIGHT];
	g.out_ptr = arrays[PR_FLAT_OUT_PTR];
	g.out_dst = arrays[PR_FLAT_OUT_DST];
	g.out_weight = arrays[PR_FLAT_OUT_WEIGHT];
	g.out_strength = arrays[PR_FLAT_OUT_STRENGTH];
	g.dangling = arrays[PR_FLAT_DANGLING];

	*view = g;
	return PR_OK;
}

/*
 * The out-degree fingerprint.  An unweighted graph's out-strengths are its out-degrees: d_u is the
 * number of in-edges whose source is u.  Counting them again takes a scattered increment per edge
 * (contended between threads at the hubs of a power-law graph); instead both sides are evaluated
 * as one polynomial at a random point, modulo the prime p = 2^61 - 1.  Node u is written as
 * u = a + 2^b c (a < 2^b, b = 12) and weighs h(u) = x^a y^c for x, y drawn at random from [0, p);
 * the check is
 *
 *     sum over the in-edges e of h(src_e)  ==  sum over the nodes u of out_strength_u h(u)  (mod p).
 *
 * The difference of the two sides is F(x, y) = sum_u (d_u - out_strength_u) x^a y^c, and distinct
 * nodes give distinct monomials.  The out-strengths are first checked to be integers in [0, m], so
 * every coefficient is below m in size, and m < p (a buffer in memory holds 4 m bytes of sources,
 * far below 4 p): when any out-strength is wrong, F is a nonzero polynomial of total degree below
 * 2^b + n / 2^b, and by the Schwartz-Zippel lemma it is 0 at a random point with a probability of
 * at most that degree / p: below 2^-41 for any graph (n <= 2^31), 3e-15 at n = 2^23.  The point is
 * drawn anew for each check, so a wrong graph passes with at most that probability whatever the
 * error, as long as the error does not depend on the point: the check guards against a faulty
 * build, not against someone who sees the point and forges a buffer for it (pr_graph_view_flat,
 * the reader of values from users, counts exactly).  The out-degrees' sum is also compared with m,
 * exactly.
 */
#define FP_PRIME ((UINT64_C(1) << 61) - 1)

/* Bits of a node's id that go to x's exponent (b): 2^12 powers of x, n / 2^12 of y. */
#define FP_LOW_BITS 12
#define FP_LOW_MASK ((UINT32_C(1) << FP_LOW_BITS) - 1)

/* The powers of the two random coordinates, by which h(u) is two look-ups and a product. */
typedef struct Fingerprint
{
	uint64_t   *low_powers;		/* x^a for a < 2^b */
	uint64_t   *high_powers;	/* y^c for c <= (n - 1) >> b */
} Fingerprint;

/* x mod p, in part: for any x, a value below 2^61 + 8 congruent to it. */
static inline uint64_t
fp_fold(uint64_t x)
{
	return (x & FP_PRIME) + (x >> 61);
}

/* x mod p, in part, for x below 2^124: a value below 2^64 congruent to it. */
static inline uint64_t
fp_fold_wide(unsigned __int128 x)
{
	return ((uint64_t) x & FP_PRIME) + (uint64_t) (x >> 61);
}

/* a b mod p, in part (a, b below 2^62): a value below 2^61 + 8 congruent to it. */
static inline uint64_t
fp_mul(uint64_t a, uint64_t b)
{
	return fp_fold(fp_fold_wide((unsigned __int128) a * b));
}

/* x mod p, in full. */
static inline uint64_t
fp_reduce(uint64_t x)
{
	x = fp_fold(x);
	return x >= FP_PRIME ? x - FP_PRIME : x;
}

/* h(u) of node u (u < n), in part. */
static inline uint64_t
fp_weight(const Fingerprint *fp, uint32_t u)
{
	return fp_mul(fp->low_powers[u & FP_LOW_MASK], fp->high_powers[u >> FP_LOW_BITS]);
}

/*
 * A random coordinate in [0, p): the clock, the buffer's address and a count of the calls mixed
 * (splitmix64's finalizer).  Unpredictable to a build, which is all the check needs of it.
 */
static uint64_t
fp_random_point(const void *buf, uint64_t salt)
{
	static _Atomic uint64_t calls;
	double		now = pr_clock_seconds();
	uint64_t	z;

	memcpy(&z, &now, sizeof(z));
	z ^= (uint64_t) (uintptr_t) buf + salt * UINT64_C(0x9E3779B97F4A7C15) +
		atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed) * UINT64_C(0xD1B54A32D192ED03);
	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	z ^= z >> 31;
	return z % FP_PRIME;
}

/* Sets up fp for nodes [0, n) with a fresh random point; false when out of memory. */
static bool
fp_init(Fingerprint *fp, int64_t n, const void *buf)
{
	int64_t		n_low = (int64_t) 1 << FP_LOW_BITS,
				n_high = ((n - 1) >> FP_LOW_BITS) + 1;
	uint64_t	x = fp_random_point(buf, 1),
				y = fp_random_point(buf, 2);

	fp->low_powers = pr_alloc_array(&pr_malloc_allocator, (size_t) (n_low + n_high), sizeof(uint64_t));
	if (fp->low_powers == NULL)
		return false;
	fp->high_powers = fp->low_powers + n_low;
	fp->low_powers[0] = 1;
	for (int64_t a = 1; a < n_low; a++)
		fp->low_powers[a] = fp_mul(fp->low_powers[a - 1], x);
	fp->high_powers[0] = 1;
	for (int64_t c = 1; c < n_high; c++)
		fp->high_powers[c] = fp_mul(fp->high_powers[c - 1], y);
	return true;
}

/* What one part of the node pass found (see node_pass_part). */
typedef struct NodePart
{
	bool		ids_unsorted;
	bool		pointers_decrease;
	bool		strength_invalid;
	bool		degree_invalid;		/* fingerprint only: an out-strength that is no count */
	bool		dangling_bad;
	int64_t		zeros;			/* out-strengths equal to 0 */
	int64_t		edgeless;		/* fingerprint only: first node without edges, or -1 */
	int64_t		degree_sum;		/* fingerprint only */
	uint64_t	sum;			/* fingerprint only: out_strength_u h(u) summed, in part */
} NodePart;

/* What one part of the edge pass found (see edge_pass_part). */
typedef struct EdgePart
{
	bool		out_of_range;
	bool		unsorted;
	uint64_t	sum;			/* fingerprint only: h(src_e) summed, in part */
} EdgePart;

/* The checks that run in parts, one part per thread, and what all the parts found. */
typedef struct FlatCheck
{
	const PrGraph *g;
	const Fingerprint *fp;		/* NULL: the out-strengths are checked exactly, later */
	NodePart	node[FLAT_MAX_CHECK_THREADS];
	EdgePart	edge[FLAT_MAX_CHECK_THREADS];
	NodePart	nodes;
	EdgePart	edges;
} FlatCheck;

/*
 * pr_parallel_run's task: the node pass of part `part` of n_parts, over its share of the nodes and
 * of the dangling list: ids ascending, row pointers never decreasing, out-strengths finite and
 * >= 0 (counting the zeros), the dangling entries in range, ascending and of out-strength 0; with
 * the fingerprint also the out-strengths as counts, every node with an edge, and the nodes' side
 * of the fingerprint.
 */
static void
node_pass_part(void *arg, int part, int n_parts)
{
	FlatCheck  *c = (FlatCheck *) arg;
	const PrGraph *g = c->g;
	const Fingerprint *fp = c->fp;
	NodePart	r = {.edgeless = -1};
	int64_t		n = g->n_nodes,
				m = g->n_edges,
				u0,
				u1,
				i0,
				i1;

	pr_even_range(n, part, n_parts, &u0, &u1);
	for (int64_t u = u0; u < u1; u++)
	{
		double		d = g->out_strength[u];

		r.ids_unsorted |= u > 0 && g->node_ids[u] <= g->node_ids[u - 1];
		r.pointers_decrease |= g->in_ptr[u + 1] < g->in_ptr[u];
		r.strength_invalid |= !(d >= 0.0) || isinf(d) || pr_weight_subnormal(d);
		r.zeros += d == 0.0;
		if (fp == NULL)
			continue;
		if (!(d >= 0.0 && d <= (double) m) || d != (double) (int64_t) d)
			r.degree_invalid = true;
		else
		{
			int64_t		degree = (int64_t) d;

			r.degree_sum += degree;
			r.sum = fp_fold(r.sum + fp_mul((uint64_t) degree, fp_weight(fp, (uint32_t) u)));
			if (degree == 0 && g->in_ptr[u + 1] == g->in_ptr[u] && r.edgeless < 0)
				r.edgeless = u;
		}
	}
	pr_even_range(g->n_dangling, part, n_parts, &i0, &i1);
	for (int64_t i = i0; i < i1; i++)
	{
		int32_t		u = g->dangling[i];

		if (u < 0 || u >= n || (i > 0 && u <= g->dangling[i - 1]) || g->out_strength[u] != 0.0)
			r.dangling_bad = true;
	}
	c->node[part] = r;
}

/*
 * The in-edges [first, last) of a part, as one sweep that ignores the rows: whether any source is
 * out of range, how many sources are below the one before them (from first on, first > 0 included),
 * and, with fp, the sum of h(source) (an out-of-range source counted as node 0), in part.
 */
static inline void
edge_sweep(const int32_t *src, int64_t first, int64_t last, uint32_t n, const Fingerprint *fp,
		   EdgePart *r, int64_t *descents)
{
	int32_t		previous = first > 0 ? src[first - 1] : INT32_MIN;
	bool		out_of_range = false;
	int64_t		down = 0;
	unsigned __int128 sum = 0;	/* below 2^64 per edge, at most 2^55 edges */

	for (int64_t e = first; e < last; e++)
	{
		int32_t		s = src[e];

		out_of_range |= (uint32_t) s >= n;
		down += s < previous;
		previous = s;
		if (fp != NULL)
		{
			uint32_t	u = (uint32_t) s < n ? (uint32_t) s : 0;

			sum += fp_fold_wide((unsigned __int128) fp->low_powers[u & FP_LOW_MASK] *
								fp->high_powers[u >> FP_LOW_BITS]);
		}
	}
	r->out_of_range = out_of_range;
	r->sum = fp_fold(fp_fold_wide(sum));
	*descents = down;
}

/*
 * pr_parallel_run's task: the edge pass of part `part` of n_parts, over an even share of the
 * in-edges (row pointers already checked): every source in range, every row ascending, and with
 * the fingerprint the in-edges' side of it.  A row is ascending when the only descents of the
 * sources are where a row starts: the sweep counts every descent, then the rows starting in the
 * share count those allowed.
 */
static void
edge_pass_part(void *arg, int part, int n_parts)
{
	FlatCheck  *c = (FlatCheck *) arg;
	const PrGraph *g = c->g;
	EdgePart   *r = &c->edge[part];
	const int32_t *src = g->in_src;
	const int64_t *ptr = g->in_ptr;
	int64_t		first,
				last,
				descents,
				allowed = 0;

	pr_even_range(g->n_edges, part, n_parts, &first, &last);
	if (c->fp != NULL)
		edge_sweep(src, first, last, (uint32_t) g->n_nodes, c->fp, r, &descents);
	else
		edge_sweep(src, first, last, (uint32_t) g->n_nodes, NULL, r, &descents);
	/* the rows that start in [first, last): one nonempty row starts at each such position */
	for (int64_t v = pr_csr_row_at(ptr, 0, g->n_nodes, first, 0); v < g->n_nodes && ptr[v] < last; v++)
		if (ptr[v] > 0 && ptr[v + 1] > ptr[v])
			allowed += src[ptr[v]] < src[ptr[v] - 1];
	r->unsorted = descents != allowed;
}

/* Checks that every in-weight sum is below 2^PR_STRENGTH_LIMIT_EXP (see pr_graph.h). */
static bool
in_sums_valid(const PrGraph *g)
{
	double		limit = ldexp(1.0, PR_STRENGTH_LIMIT_EXP);

	for (int64_t v = 0; v < g->n_nodes; v++)
	{
		double		sum = 0.0;

		for (int64_t e = g->in_ptr[v]; e < g->in_ptr[v + 1]; e++)
			sum += g->in_weight[e];
		if (!(sum < limit))
			return false;
	}
	return true;
}

/*
 * Checks what the build derives from the in-edges, with scratch arrays sums[n] and out_count[n]:
 * each out_strength is exactly the sum of the node's out-weights added in out-row order (its
 * out-degree when unweighted) and below 2^PR_STRENGTH_LIMIT_EXP, every node has an edge, and the
 * out-edge arrays, when present, are the in-edges grouped by source in the same order with the
 * same weights.
 */
static PrStatus
derived_arrays_valid(const PrGraph *g, double *sums, int64_t *out_count, PrError *err)
{
	int64_t		n = g->n_nodes;
	double		limit = ldexp(1.0, PR_STRENGTH_LIMIT_EXP);

	memset(sums, 0, (size_t) n * sizeof(double));
	memset(out_count, 0, (size_t) n * sizeof(int64_t));
	for (int64_t v = 0; v < n; v++)
		for (int64_t e = g->in_ptr[v]; e < g->in_ptr[v + 1]; e++)
		{
			int32_t		u = g->in_src[e];
			double		w = g->weighted ? g->in_weight[e] : 1.0;

			if (g->has_out_edges)
			{
				int64_t		pos = g->out_ptr[u] + out_count[u];

				if (pos >= g->out_ptr[u + 1] || g->out_dst[pos] != v ||
					(g->weighted && g->out_weight[pos] != w))
					return pr_error_set(err, PR_ERR_INVALID,
										"graph buffer's out-edges do not match its in-edges");
			}
			out_count[u]++;
			sums[u] += w;
		}
	for (int64_t u = 0; u < n; u++)
	{
		if (g->out_strength[u] != sums[u])
			return pr_error_set(err, PR_ERR_INVALID,
								"graph buffer's out-strength of node %lld is not the sum of its "
								"out-weights", (long long) g->node_ids[u]);
		if (!(sums[u] < limit))
			return pr_error_set(err, PR_ERR_INVALID,
								"graph buffer has an out-weight sum out of range");
		if (out_count[u] == 0 && g->in_ptr[u + 1] == g->in_ptr[u])
			return pr_error_set(err, PR_ERR_INVALID, "graph buffer has node %lld without edges",
								(long long) g->node_ids[u]);
	}
	return PR_OK;
}

/* derived_arrays_valid with its scratch arrays allocated and freed. */
static PrStatus
derived_arrays_counted(const PrGraph *g, PrError *err)
{
	int64_t		n = g->n_nodes;
	double	   *sums = pr_alloc_array(&pr_malloc_allocator, (size_t) n, sizeof(double));
	int64_t    *out_count = pr_alloc_array(&pr_malloc_allocator, (size_t) n, sizeof(int64_t));
	PrStatus	status;

	if (n > 0 && (sums == NULL || out_count == NULL))
		status = pr_error_set(err, PR_ERR_NOMEM, "out of memory checking a graph of %lld nodes",
							  (long long) n);
	else
		status = derived_arrays_valid(g, sums, out_count, err);
	pr_free(&pr_malloc_allocator, sums);
	pr_free(&pr_malloc_allocator, out_count);
	return status;
}

/* What the node pass's n_parts parts found, together, into c->nodes. */
static void
node_parts_merge(FlatCheck *c, int n_parts)
{
	NodePart   *all = &c->nodes;

	memset(all, 0, sizeof(*all));
	all->edgeless = -1;
	for (int t = 0; t < n_parts; t++)
	{
		const NodePart *r = &c->node[t];

		all->ids_unsorted |= r->ids_unsorted;
		all->pointers_decrease |= r->pointers_decrease;
		all->strength_invalid |= r->strength_invalid;
		all->degree_invalid |= r->degree_invalid;
		all->dangling_bad |= r->dangling_bad;
		all->zeros += r->zeros;
		all->degree_sum += r->degree_sum;
		all->sum = fp_fold(all->sum + r->sum);
		if (all->edgeless < 0)
			all->edgeless = r->edgeless;
	}
}

/* What the edge pass's n_parts parts found, together, into c->edges. */
static void
edge_parts_merge(FlatCheck *c, int n_parts)
{
	EdgePart   *all = &c->edges;

	memset(all, 0, sizeof(*all));
	for (int t = 0; t < n_parts; t++)
	{
		all->out_of_range |= c->edge[t].out_of_range;
		all->unsorted |= c->edge[t].unsorted;
		all->sum = fp_fold(all->sum + c->edge[t].sum);
	}
}

/*
 * The out-strengths of an unweighted graph without out-edge arrays against the fingerprint's two
 * sides, and every node with an edge.
 */
static PrStatus
derived_arrays_fingerprinted(const PrGraph *g, const FlatCheck *c, PrError *err)
{
	if (c->nodes.degree_invalid)
		return pr_error_set(err, PR_ERR_INVALID,
							"graph buffer has an out-strength that is not an out-degree");
	if (c->nodes.degree_sum != g->n_edges || fp_reduce(c->nodes.sum) != fp_reduce(c->edges.sum))
		return pr_error_set(err, PR_ERR_INVALID,
							"graph buffer's out-strengths are not the out-degrees of its in-edges");
	if (c->nodes.edgeless >= 0)
		return pr_error_set(err, PR_ERR_INVALID, "graph buffer has node %lld without edges",
							(long long) g->node_ids[c->nodes.edgeless]);
	return PR_OK;
}

/* What the node pass found that the edge pass needs, then what the edge pass found. */
static PrStatus
passes_status(const PrGraph *g, const FlatCheck *c, bool edges_done, PrError *err)
{
	if (c->nodes.ids_unsorted)
		return pr_error_set(err, PR_ERR_INVALID, "graph buffer has unsorted node ids");
	if (c->nodes.pointers_decrease || g->in_ptr[0] != 0 || g->in_ptr[g->n_nodes] != g->n_edges)
		return pr_error_set(err, PR_ERR_INVALID, "graph buffer has bad in-edge row pointers");
	if (edges_done && c->edges.out_of_range)
		return pr_error_set(err, PR_ERR_INVALID, "graph buffer has an in-edge source out of range");
	if (edges_done && c->edges.unsorted)
		return pr_error_set(err, PR_ERR_INVALID, "graph buffer has unsorted in-edge rows");
	return PR_OK;
}

/*
 * The checks after the two passes: weights, out-edge arrays, out-strengths (from the node pass),
 * the out-strengths against the in-edges (by fingerprint when c has one, else counted) and the
 * dangling list (from the node pass).
 */
static PrStatus
rest_valid(const PrGraph *g, const FlatCheck *c, int n_threads, PrError *err)
{
	int64_t		n = g->n_nodes,
				m = g->n_edges;
	PrStatus	status;

	if (g->weighted && !weights_valid(g->in_weight, m))
		return pr_error_set(err, PR_ERR_INVALID,
							"graph buffer has an invalid weight (negative, NaN, infinite or subnormal)");
	if (g->weighted && !in_sums_valid(g))
		return pr_error_set(err, PR_ERR_INVALID, "graph buffer has an in-weight sum out of range");
	if (g->has_out_edges)
	{
		if (!row_pointers_valid(g->out_ptr, n, m))
			return pr_error_set(err, PR_ERR_INVALID, "graph buffer has bad out-edge row pointers");
		if (!ids_in_range_threads(g->out_dst, m, n, n_threads))
			return pr_error_set(err, PR_ERR_INVALID,
								"graph buffer has an out-edge destination out of range");
	}
	if (c->nodes.strength_invalid)
		return pr_error_set(err, PR_ERR_INVALID,
							"graph buffer has an invalid out-strength (negative, NaN, infinite or "
							"subnormal)");
	status = c->fp != NULL ? derived_arrays_fingerprinted(g, c, err) : derived_arrays_counted(g, err);
	if (status != PR_OK)
		return status;
	if (c->nodes.zeros != g->n_dangling || c->nodes.dangling_bad)
		return pr_error_set(err, PR_ERR_INVALID, "graph buffer has a bad dangling list");
	return PR_OK;
}

/*
 * Validates a flat buffer completely and points view into it (see pr_graph.h): the node pass and
 * the edge pass on up to n_threads threads each, then what they leave.  The out-strengths of an
 * unweighted graph without out-edge arrays are checked by fingerprint when fingerprint is set and
 * the graph is large enough for the threaded passes, else counted.  times, when set, gets the
 * split.
 */
static PrStatus
flat_view(const void *buf, size_t size, int n_threads, bool fingerprint, PrGraph *view,
		  PrFlatCheckTimes *times, PrError *err)
{
	PrGraph		g;
	PrFlatHeader header;
	const void *ptrs[PR_FLAT_N_ARRAYS];
	size_t		counts[PR_FLAT_N_ARRAYS],
				elem[PR_FLAT_N_ARRAYS];
	uint64_t	offsets[PR_FLAT_N_ARRAYS];
	FlatCheck	c;
	Fingerprint fp = {0};
	int			parts = n_threads < FLAT_MAX_CHECK_THREADS ? n_threads : FLAT_MAX_CHECK_THREADS;
	double		t0 = pr_clock_seconds(),
				t1,
				t2;
	PrStatus	status;

	memset(view, 0, sizeof(*view));
	if (times != NULL)
		memset(times, 0, sizeof(*times));
	if ((status = pr_graph_view_flat_header(buf, size, &g, err)) != PR_OK)
		return status;

	/* the layout pr_graph_write_flat gives this shape, exactly */
	memcpy(&header, buf, sizeof(header));
	if (header.reserved != 0 || header.total_size != flat_layout(&g, ptrs, counts, elem, offsets) ||
		memcmp(header.offset, offsets, sizeof(offsets)) != 0)
		return pr_error_set(err, PR_ERR_INVALID, "graph buffer's layout is not the one written for its counts");

	if (parts < 1 || g.n_nodes + g.n_edges < FLAT_PARALLEL_CHECK_ROWS)
		parts = 1;
	if (fingerprint && !g.weighted && !g.has_out_edges &&
		g.n_nodes + g.n_edges >= FLAT_PARALLEL_CHECK_ROWS && !fp_init(&fp, g.n_nodes, buf))
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory checking a graph of %lld nodes",
							(long long) g.n_nodes);
	memset(&c, 0, sizeof(c));
	c.g = &g;
	c.fp = fp.low_powers != NULL ? &fp : NULL;

	/* the node pass, then the edge pass within the rows it checked */
	pr_parallel_run(node_pass_part, &c, parts);
	node_parts_merge(&c, parts);
	t1 = pr_clock_seconds();
	if ((status = passes_status(&g, &c, false, err)) == PR_OK)
	{
		pr_parallel_run(edge_pass_part, &c, parts);
		edge_parts_merge(&c, parts);
		status = passes_status(&g, &c, true, err);
	}
	t2 = pr_clock_seconds();
	if (status == PR_OK)
		status = rest_valid(&g, &c, n_threads, err);
	pr_free(&pr_malloc_allocator, fp.low_powers);
	if (times != NULL)
	{
		times->nodes = t1 - t0;
		times->edges = t2 - t1;
		times->rest = pr_clock_seconds() - t2;
	}
	if (status == PR_OK)
		*view = g;
	return status;
}

/* Points view into a flat buffer after validating it completely; see pr_graph.h. */
PrStatus
pr_graph_view_flat(const void *buf, size_t size, PrGraph *view, PrError *err)
{
	return flat_view(buf, size, 1, false, view, NULL, err);
}

/* pr_graph_view_flat on up to n_threads threads, by fingerprint where it applies; see pr_graph.h. */
PrStatus
pr_graph_view_flat_threads(const void *buf, size_t size, int n_threads, PrGraph *view,
						   PrError *err)
{
	return flat_view(buf, size, n_threads, true, view, NULL, err);
}

/* pr_graph_view_flat_threads with the time of its parts; see pr_graph.h. */
PrStatus
pr_graph_view_flat_timed(const void *buf, size_t size, int n_threads, PrGraph *view,
						 PrFlatCheckTimes *times, PrError *err)
{
	return flat_view(buf, size, n_threads, true, view, times, err);
}
