/*
 * graph_gen.h — the one graph generator of the tests and benchmarks: a splitmix64 random stream,
 * R-MAT, uniform (Erdős–Rényi), power-law graphs whose ids carry locality and bipartite user–item
 * graphs with Zipf-popular items, as edge lists; the
 * tools around them (deduplication, edge shuffle, breadth-first relabelling, reading an edge file,
 * a "kind:scale:.." graph name).  Pure C11 (pthreads); includable from C++ / CUDA.
 *
 * Every edge is a function of the seed and its index alone, so a graph is the same whatever the
 * number of threads that generate it, and any range of it can be generated on its own.
 */
#ifndef GRAPH_GEN_H
#define GRAPH_GEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C"
{
#endif

/* splitmix64: the next value of the sequence that *state walks. */
static inline uint64_t
gen_random(uint64_t *state)
{
	uint64_t	z = (*state += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* Uniform double in [0, 1) from the stream. */
static inline double
gen_unit(uint64_t *state)
{
	return (double) (gen_random(state) >> 11) * (1.0 / 9007199254740992.0);
}

/* The kinds of generated graph. */
typedef enum GenKind
{
	GEN_RMAT,					/* R-MAT, Graph500 a = .57, b = .19, c = .19, d = .05 */
	GEN_UNIFORM,				/* both ends uniform over [0, n) (Erdős–Rényi with m edges) */
	GEN_LOCAL,					/* power-law sources, destinations near the source or popular */
	GEN_BIPARTITE				/* users -> items, the items' popularity a Zipf law */
} GenKind;

/*
 * A generated graph: n nodes (ids 0..n-1), m edges (parallel edges and self-loops possible).
 * permute: ids relabelled by a random permutation (R-MAT, uniform), or, for GEN_LOCAL and
 * GEN_BIPARTITE, the popular destinations scattered over the ids instead of being the low ids.
 * GEN_LOCAL: the source of an edge is drawn with a power-law skew (node of rank r has weight about
 * r^(1/skew - 1)), the ranks scattered over the ids; with probability p_local the destination is
 * source +- d (wrapped into [0, n)), d in 1..window drawn with the same skew (short distances
 * most likely), otherwise a popular node (the same power law over the ids).
 * GEN_BIPARTITE: users 0..users-1, items users..n-1; every edge goes from a user drawn uniformly to
 * an item of rank r drawn with probability about (r + 1)^-zipf (a Zipf law over the n - users
 * ranks); permute scatters the ranks over the item ids.
 */
typedef struct GenSpec
{
	GenKind		kind;
	int64_t		n;
	int64_t		m;
	int			scale;			/* GEN_RMAT: n = 2^scale */
	uint64_t	seed;
	bool		permute;
	double		p_local;		/* GEN_LOCAL */
	int64_t		window;			/* GEN_LOCAL: largest distance of a local edge */
	int			skew;			/* GEN_LOCAL: power-law exponent (1: uniform; default 2) */
	int64_t		users;			/* GEN_BIPARTITE: the first `users` ids are users, the others items */
	double		zipf;			/* GEN_BIPARTITE: Zipf exponent of the items' popularity (0: uniform) */
} GenSpec;

/* R-MAT over 2^scale nodes, m edges (scale 1..62). */
GenSpec		gen_rmat(int scale, int64_t m, uint64_t seed, bool permute);

/* Uniform graph: n nodes, m edges, both ends uniform. */
GenSpec		gen_uniform(int64_t n, int64_t m, uint64_t seed);

/* Power-law graph with locality: see GenSpec; skew 2, popular nodes scattered (permute). */
GenSpec		gen_local(int64_t n, int64_t m, double p_local, int64_t window, uint64_t seed);

/*
 * Bipartite user–item graph: `users` users, `items` items, m edges user -> item, the items'
 * popularity a Zipf law of exponent zipf (>= 0), the ranks scattered over the item ids (permute).
 */
GenSpec		gen_bipartite(int64_t users, int64_t items, int64_t m, double zipf, uint64_t seed);

/*
 * Parses a graph name: "rmat:SCALE[:EF]", "er:SCALE[:EF]", "local:SCALE[:EF[:P_LOCAL[:WINDOW]]]"
 * (n = 2^SCALE, m = EF * n, EF default 16, P_LOCAL default 0.9, WINDOW default 64) or
 * "bip:SCALE[:EF[:ZIPF_X100]]" (2^SCALE users, 2^(SCALE-2) items, m = EF * users, the Zipf
 * exponent in hundredths, default 110 = 1.1; SCALE >= 2).  R-MAT, local and bip get permute =
 * true; the seed is seed + SCALE (each size its own stream).  False (spec untouched) on a
 * malformed name.
 */
bool		gen_parse(const char *name, uint64_t seed, GenSpec *spec);

/* The seed of the benchmarks' graphs and of their shuffled ids. */
#define GEN_BENCH_SEED 20261121ULL

/* How a benchmark numbers the nodes of its graph (--order). */
typedef enum GenIdOrder
{
	GEN_IDS_NATURAL = 0,		/* the ids as generated or read */
	GEN_IDS_BFS,				/* breadth-first from node 0 (crawl order) */
	GEN_IDS_SHUFFLED			/* a random permutation (hashed ids: the locality of the ids gone) */
} GenIdOrder;

/* The graph options of a benchmark's command line. */
typedef struct GenOptions
{
	char		graph[64];		/* a gen_parse name; "" when none was given */
	GenIdOrder	id_order;		/* --order natural|bfs|shuffled */
} GenOptions;

/*
 * Takes the option at argv[i] into opts when it is a graph option: --graph NAME, --rmat SCALE
 * (rmat:SCALE), --er SCALE (er:SCALE) or --order natural|bfs|shuffled.  Returns the number of
 * arguments it took (2), or 0 when argv[i] is no graph option (opts untouched).
 */
int			gen_take_option(int argc, char **argv, int i, GenOptions *opts);

/*
 * The hub graph of the GPU products' tests: 4500 ids; node 0 gets 8000 in-edges (each of the
 * senders 0..3999 twice: parallel edges), node 1 about 3000, node 2 1500 (chunked only when
 * k > 1), node 3 1030 (just over 1024), every other node v v % 150 from random senders (every
 * short-row bin); nodes 4000.. have no out-edges but for node 4499's self-loop.  weighted: each
 * edge a weight of 0.25 * (1 .. 8) (exact in float), drawn from the same stream.  Writes the edges
 * to src / dst / weight when src is not NULL (weight may be NULL); returns their number.
 */
size_t		gen_hub_edges(uint64_t seed, bool weighted, int64_t *src, int64_t *dst,
						  double *weight);

/* Writes a short description of the graph ("local n=.. m=.. p_local=.. window=.."). */
void		gen_describe(const GenSpec *spec, char *buf, size_t size);

/* Edge i of the graph. */
void		gen_edge(const GenSpec *spec, int64_t i, int64_t *src, int64_t *dst);

/* Edges begin..end-1 into src[0..end-begin), dst[0..end-begin) (one thread). */
void		gen_edges_range(const GenSpec *spec, int64_t begin, int64_t end, int64_t *src,
							int64_t *dst);

/* All m edges, on `threads` threads (<= 0: every CPU); the result does not depend on threads. */
void		gen_edges(const GenSpec *spec, int64_t *src, int64_t *dst, int threads);

/* The same with 32-bit ids (n <= 2^31). */
void		gen_edges32(const GenSpec *spec, int32_t *src, int32_t *dst, int threads);

/*
 * Sorts n keys ascending (LSD radix, 16-bit digits; digits every key shares are skipped) with tmp
 * of the same size; returns the array that holds the result (keys or tmp).
 */
uint64_t   *gen_sort_keys(uint64_t *keys, uint64_t *tmp, size_t n);

/*
 * Sorts the edges by (src, dst) and removes duplicate pairs (self-loops stay), in place; ids must
 * be in [0, 2^32).  Returns the number of edges left (0 when out of memory, edges untouched).
 */
size_t		gen_dedupe(int64_t *src, int64_t *dst, size_t m);

/*
 * The graph's edges without duplicates, sorted by (src, dst) (gen_edges on `threads` threads, then
 * gen_dedupe; n <= 2^32).  Returns the edge count; *src / *dst malloc()ed (0 and NULL when out of
 * memory).
 */
size_t		gen_unique_edges(const GenSpec *spec, int threads, int64_t **src, int64_t **dst);

/* Shuffles the order of the edges (Fisher-Yates with the stream of seed). */
void		gen_shuffle(int64_t *src, int64_t *dst, size_t m, uint64_t seed);

/*
 * Breadth-first ("crawl") order: new_id[v] = position of v in a breadth-first walk along the
 * out-edges from node 0, restarted from the lowest unvisited id until every node of [0, n) is
 * numbered.  False when out of memory.
 */
bool		gen_bfs_order(int64_t n, const int64_t *src, const int64_t *dst, size_t m,
						  int64_t *new_id);

/* Renames every endpoint v of the edges to new_id[v]. */
void		gen_relabel(int64_t *src, int64_t *dst, size_t m, const int64_t *new_id);

/*
 * Renumbers the edges' nodes over [0, max id + 1) in the given order: natural leaves them,
 * breadth-first (gen_bfs_order, then gen_relabel), shuffled by the random bijection of [0, n)
 * that seed names (the one the generators relabel with).  False, edges untouched, when an id is negative or memory runs out.
 */
bool		gen_reorder_ids(GenIdOrder order, int64_t *src, int64_t *dst, size_t m, uint64_t seed);

/* The --order word of an id order ("natural", "bfs", "shuffled"). */
const char *gen_id_order_name(GenIdOrder order);

#ifdef __cplusplus
}
#endif

#endif							/* GRAPH_GEN_H */
