/*
 * pr_graph_flat.c — the graph as one contiguous, position-independent buffer.
 *
 * Layout: a PrFlatHeader, then each present array at an 8-byte-aligned offset from the start of
 * the buffer (offset 0 = absent).  pr_graph_view_flat checks every invariant the build guarantees
 * (header and layout, row pointers, ids, weights, the derived out-strengths and dangling list; see
 * pr_graph.h) so that a corrupt, truncated or forged buffer is rejected with PR_ERR_INVALID and
 * never crashes a reader or gives a wrong ranking.
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

/* Most threads, and the fewest ids per thread, of the threaded range check. */
#define FLAT_MAX_CHECK_THREADS 16
#define FLAT_PARALLEL_CHECK_IDS ((int64_t) 16 << 20)

/* The fewest edges for which the rows' and derived arrays' checks run threaded. */
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

/* Points view into a flat buffer after validating it completely; see pr_graph.h. */
PrStatus
pr_graph_view_flat(const void *buf, size_t size, PrGraph *view, PrError *err)
{
	return pr_graph_view_flat_threads(buf, size, 1, view, err);
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

/* Checks that the sources of the in-edge rows [v0, v1) are ascending (parallel edges side by side). */
static bool
in_rows_sorted(const PrGraph *g, int64_t v0, int64_t v1)
{
	for (int64_t v = v0; v < v1; v++)
		for (int64_t e = g->in_ptr[v] + 1; e < g->in_ptr[v + 1]; e++)
			if (g->in_src[e] < g->in_src[e - 1])
				return false;
	return true;
}

/* A check of the in-edge rows split into parts of nodes for pr_parallel_run: sorted rows, and (when
 * out_degree is set) each node's out-degree counted from the in-edges. */
typedef struct RowsCheck
{
	const PrGraph *g;
	_Atomic int64_t *out_degree;
	bool		bad[FLAT_MAX_CHECK_THREADS];
} RowsCheck;

/* pr_parallel_run's task: rows of part `part` of n_parts. */
static void
rows_check_part(void *arg, int part, int n_parts)
{
	RowsCheck  *c = (RowsCheck *) arg;
	int64_t		v0,
				v1;

	pr_even_range(c->g->n_nodes, part, n_parts, &v0, &v1);
	c->bad[part] = !in_rows_sorted(c->g, v0, v1);
	if (c->out_degree != NULL)
		for (int64_t e = c->g->in_ptr[v0]; e < c->g->in_ptr[v1]; e++)
			atomic_fetch_add_explicit(&c->out_degree[c->g->in_src[e]], 1, memory_order_relaxed);
}

/*
 * Sorted in-edge rows by up to n_threads threads; for an unweighted graph without out-edge arrays
 * also its derived arrays: each out_strength is the out-degree counted from the in-edges (integer
 * counts: the same for any order of adding), every node has an edge.  *derived_checked says whether
 * they were (else derived_arrays_valid checks them in order).
 */
static PrStatus
rows_valid_threads(const PrGraph *g, int n_threads, bool *derived_checked, PrError *err)
{
	RowsCheck	c;
	int64_t		n = g->n_nodes;
	bool		derived = !g->weighted && !g->has_out_edges;

	*derived_checked = false;
	if (n_threads > FLAT_MAX_CHECK_THREADS)
		n_threads = FLAT_MAX_CHECK_THREADS;
	if (n_threads <= 1 || g->n_edges < FLAT_PARALLEL_CHECK_ROWS)
		return in_rows_sorted(g, 0, n) ? PR_OK :
			pr_error_set(err, PR_ERR_INVALID, "graph buffer has unsorted in-edge rows");
	memset(&c, 0, sizeof(c));
	c.g = g;
	if (derived && (c.out_degree = calloc((size_t) n + 1, sizeof(_Atomic int64_t))) == NULL)
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory checking a graph of %lld nodes", (long long) n);
	pr_parallel_run(rows_check_part, &c, n_threads);
	for (int t = 0; t < n_threads; t++)
		if (c.bad[t])
		{
			free(c.out_degree);
			return pr_error_set(err, PR_ERR_INVALID, "graph buffer has unsorted in-edge rows");
		}
	if (derived)
	{
		for (int64_t u = 0; u < n; u++)
		{
			int64_t		d = atomic_load_explicit(&c.out_degree[u], memory_order_relaxed);

			if (g->out_strength[u] != (double) d)
			{
				free(c.out_degree);
				return pr_error_set(err, PR_ERR_INVALID,
									"graph buffer's out-strength of node %lld is not the sum of its "
									"out-weights", (long long) g->node_ids[u]);
			}
			if (d == 0 && g->in_ptr[u + 1] == g->in_ptr[u])
			{
				free(c.out_degree);
				return pr_error_set(err, PR_ERR_INVALID, "graph buffer has node %lld without edges",
									(long long) g->node_ids[u]);
			}
		}
		free(c.out_degree);
		*derived_checked = true;
	}
	return PR_OK;
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

/* pr_graph_view_flat with the edge arrays' range checks run by up to n_threads threads. */
PrStatus
pr_graph_view_flat_threads(const void *buf, size_t size, int n_threads, PrGraph *view,
						   PrError *err)
{
	PrGraph		g;
	PrFlatHeader header;
	const void *ptrs[PR_FLAT_N_ARRAYS];
	size_t		counts[PR_FLAT_N_ARRAYS],
				elem[PR_FLAT_N_ARRAYS];
	uint64_t	offsets[PR_FLAT_N_ARRAYS];
	int64_t		n,
				m;
	double	   *sums;
	int64_t    *out_count;
	bool		derived_checked = false;
	PrStatus	status;

	memset(view, 0, sizeof(*view));
	if ((status = pr_graph_view_flat_header(buf, size, &g, err)) != PR_OK)
		return status;
	n = g.n_nodes;
	m = g.n_edges;

	/* the layout pr_graph_write_flat gives this shape, exactly */
	memcpy(&header, buf, sizeof(header));
	if (header.reserved != 0 || header.total_size != flat_layout(&g, ptrs, counts, elem, offsets) ||
		memcmp(header.offset, offsets, sizeof(offsets)) != 0)
		return pr_error_set(err, PR_ERR_INVALID, "graph buffer's layout is not the one written for its counts");

	/* contents */
	for (int64_t i = 1; i < n; i++)
		if (g.node_ids[i] <= g.node_ids[i - 1])
			return pr_error_set(err, PR_ERR_INVALID, "graph buffer has unsorted node ids");
	if (!row_pointers_valid(g.in_ptr, n, m))
		return pr_error_set(err, PR_ERR_INVALID, "graph buffer has bad in-edge row pointers");
	if (!ids_in_range_threads(g.in_src, m, n, n_threads))
		return pr_error_set(err, PR_ERR_INVALID, "graph buffer has an in-edge source out of range");
	if ((status = rows_valid_threads(&g, n_threads, &derived_checked, err)) != PR_OK)
		return status;
	if (g.weighted && !weights_valid(g.in_weight, m))
		return pr_error_set(err, PR_ERR_INVALID,
							"graph buffer has an invalid weight (negative, NaN, infinite or subnormal)");
	if (g.weighted && !in_sums_valid(&g))
		return pr_error_set(err, PR_ERR_INVALID, "graph buffer has an in-weight sum out of range");
	if (g.has_out_edges)
	{
		if (!row_pointers_valid(g.out_ptr, n, m))
			return pr_error_set(err, PR_ERR_INVALID, "graph buffer has bad out-edge row pointers");
		if (!ids_in_range_threads(g.out_dst, m, n, n_threads))
			return pr_error_set(err, PR_ERR_INVALID,
								"graph buffer has an out-edge destination out of range");
	}
	if (!weights_valid(g.out_strength, n))
		return pr_error_set(err, PR_ERR_INVALID,
							"graph buffer has an invalid out-strength (negative, NaN, infinite or "
							"subnormal)");
	if (!derived_checked)
	{
		sums = pr_alloc_array(&pr_malloc_allocator, (size_t) n, sizeof(double));
		out_count = pr_alloc_array(&pr_malloc_allocator, (size_t) n, sizeof(int64_t));
		if (n > 0 && (sums == NULL || out_count == NULL))
			status = pr_error_set(err, PR_ERR_NOMEM, "out of memory checking a graph of %lld nodes",
								  (long long) n);
		else
			status = derived_arrays_valid(&g, sums, out_count, err);
		pr_free(&pr_malloc_allocator, sums);
		pr_free(&pr_malloc_allocator, out_count);
		if (status != PR_OK)
			return status;
	}
	{
		int64_t		zero = 0;

		for (int64_t u = 0; u < n; u++)
			if (g.out_strength[u] == 0.0)
				zero++;
		if (zero != g.n_dangling || !ids_in_range(g.dangling, g.n_dangling, n))
			return pr_error_set(err, PR_ERR_INVALID, "graph buffer has a bad dangling list");
		for (int64_t i = 0; i < g.n_dangling; i++)
			if ((i > 0 && g.dangling[i] <= g.dangling[i - 1]) || g.out_strength[g.dangling[i]] != 0.0)
				return pr_error_set(err, PR_ERR_INVALID, "graph buffer has a bad dangling list");
	}
	*view = g;
	return PR_OK;
}
