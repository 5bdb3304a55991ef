/*
 * test_graph_gen.c — the graph generator of the tests and benchmarks (test/common/graph_gen.c):
 * the same graph for a seed whatever the thread count, ids in range, the R-MAT quadrant
 * probabilities, the random relabelling a bijection, the local graphs' share of edges within the
 * window (p_local), their distance law and degree skew, the bipartite graphs' sides and Zipf
 * popularity, deduplication, breadth-first order and graph names, against hand-computed values.
 * Pure C, no GPU.
 */
#include "graph_gen.h"
#include "test_graphs.h"
#include "test_harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The edges of a spec, generated on `threads` threads. */
static void
generate(const GenSpec *spec, int threads, int64_t **src, int64_t **dst)
{
	*src = malloc((size_t) spec->m * sizeof(int64_t));
	*dst = malloc((size_t) spec->m * sizeof(int64_t));
	gen_edges(spec, *src, *dst, threads);
}

/* Same graph for a seed on 1 and 3 threads and edge by edge; another seed, another graph. */
static void
test_determinism(const GenSpec *spec)
{
	char		name[128];
	int64_t    *s1,
			   *d1,
			   *s3,
			   *d3,
			   *s_other,
			   *d_other;
	GenSpec		other = *spec;
	bool		in_range = true,
				by_edge = true;

	gen_describe(spec, name, sizeof(name));
	other.seed++;
	generate(spec, 1, &s1, &d1);
	generate(spec, 3, &s3, &d3);
	generate(&other, 2, &s_other, &d_other);
	check(memcmp(s1, s3, (size_t) spec->m * 8) == 0 && memcmp(d1, d3, (size_t) spec->m * 8) == 0,
		  "same edges on 1 and 3 threads", name);
	check(memcmp(s1, s_other, (size_t) spec->m * 8) != 0, "another seed, other edges", name);
	for (int64_t i = 0; i < spec->m; i++)
		in_range &= s1[i] >= 0 && s1[i] < spec->n && d1[i] >= 0 && d1[i] < spec->n;
	check(in_range, "ids in [0, n)", name);
	for (int64_t i = 0; i < spec->m; i += spec->m / 97 + 1)
	{
		int64_t		u,
					v;

		gen_edge(spec, i, &u, &v);
		by_edge &= u == s1[i] && v == d1[i];
	}
	check(by_edge, "gen_edge(i) is edge i of gen_edges", name);
	gen_edges_range(spec, spec->m / 3, spec->m / 2, s3, d3);
	check(memcmp(s3, s1 + spec->m / 3, (size_t) (spec->m / 2 - spec->m / 3) * 8) == 0 &&
		  memcmp(d3, d1 + spec->m / 3, (size_t) (spec->m / 2 - spec->m / 3) * 8) == 0,
		  "gen_edges_range is that range of gen_edges", name);
	free(s1);
	free(d1);
	free(s3);
	free(d3);
	free(s_other);
	free(d_other);
}

/*
 * R-MAT with natural ids: the top bit of the source is 1 with probability c + d = 0.24, of the
 * destination b + d = 0.24, both 0 with a = 0.57.  The permuted graph is the same edges under
 * one bijection of the ids.
 */
static void
test_rmat(void)
{
	GenSpec		natural = gen_rmat(14, 200000, 5, false);
	GenSpec		permuted = gen_rmat(14, 200000, 5, true);
	int64_t    *s,
			   *d,
			   *ps,
			   *pd;
	int64_t		n = natural.n,
				top_src = 0,
				top_dst = 0,
				neither = 0;
	int64_t    *image = malloc((size_t) n * sizeof(int64_t));
	int64_t    *preimage = malloc((size_t) n * sizeof(int64_t));
	bool		bijective = true;

	generate(&natural, 2, &s, &d);
	generate(&permuted, 2, &ps, &pd);
	for (int64_t i = 0; i < natural.m; i++)
	{
		top_src += s[i] >= n / 2;
		top_dst += d[i] >= n / 2;
		neither += s[i] < n / 2 && d[i] < n / 2;
	}
	check(fabs((double) top_src / (double) natural.m - 0.24) < 0.005, "R-MAT P(src top bit) = 0.24",
		  "rmat 14");
	check(fabs((double) top_dst / (double) natural.m - 0.24) < 0.005, "R-MAT P(dst top bit) = 0.24",
		  "rmat 14");
	check(fabs((double) neither / (double) natural.m - 0.57) < 0.005, "R-MAT P(quadrant a) = 0.57",
		  "rmat 14");
	for (int64_t v = 0; v < n; v++)
		image[v] = preimage[v] = -1;
	for (int64_t i = 0; i < natural.m && bijective; i++)
	{
		int64_t		from[2] = {s[i], d[i]},
					to[2] = {ps[i], pd[i]};

		for (int k = 0; k < 2; k++)
		{
			bijective &= image[from[k]] < 0 || image[from[k]] == to[k];
			bijective &= preimage[to[k]] < 0 || preimage[to[k]] == from[k];
			image[from[k]] = to[k];
			preimage[to[k]] = from[k];
		}
	}
	check(bijective, "permuted R-MAT = natural R-MAT under one bijection", "rmat 14");
	free(s);
	free(d);
	free(ps);
	free(pd);
	free(image);
	free(preimage);
}

/* Shortest distance between a and b on the ring [0, n). */
static int64_t
ring_distance(int64_t a, int64_t b, int64_t n)
{
	int64_t		d = a > b ? a - b : b - a;

	return d < n - d ? d : n - d;
}

/*
 * A local graph: the share of edges within the window is p_local (plus the popular edges that
 * land there by chance, at most 2 * window / n of the others); a local distance d = 1 +
 * floor(window * u^2) is <= window / 2 with probability 0.5^(1/2) = 0.7071; sources and
 * destinations are skewed (the busiest node has far more than the mean m / n edges).
 */
static void
test_local(double p_local, int64_t window)
{
	GenSpec		spec = gen_local((int64_t) 1 << 16, (int64_t) 1 << 20, p_local, window, 9);
	char		name[128];
	int64_t    *s,
			   *d;
	int64_t    *out_degree = calloc((size_t) spec.n, sizeof(int64_t));
	int64_t    *in_degree = calloc((size_t) spec.n, sizeof(int64_t));
	int64_t		within = 0,
				short_half = 0,
				max_out = 0,
				max_in = 0;
	double		chance = 2.0 * (double) window / (double) spec.n,
				share;

	gen_describe(&spec, name, sizeof(name));
	generate(&spec, 2, &s, &d);
	for (int64_t i = 0; i < spec.m; i++)
	{
		int64_t		dist = ring_distance(s[i], d[i], spec.n);

		within += dist >= 1 && dist <= window;
		short_half += dist >= 1 && dist <= window / 2;
		out_degree[s[i]]++;
		in_degree[d[i]]++;
	}
	for (int64_t v = 0; v < spec.n; v++)
	{
		max_out = out_degree[v] > max_out ? out_degree[v] : max_out;
		max_in = in_degree[v] > max_in ? in_degree[v] : max_in;
	}
	share = (double) within / (double) spec.m;
	check(share > p_local - 0.005 && share < p_local + (1 - p_local) * chance + 0.005,
		  "share of edges within the window = p_local", name);
	if (p_local > 0)
		check(fabs((double) short_half / (double) within - 0.7071) < 0.01,
			  "local distances: P(d <= window / 2) = 0.5^(1/2)", name);
	/* rank 0 draws n^(-1/2) of the sources: 2^20 / 256 = 4096 edges (sd 64), the mean is 16 */
	check(max_out > 3800 && max_out < 4400, "out-degree skew (busiest source ~4096)", name);
	check(max_in > 100 * (1 - p_local) * 16, "in-degree skew", name);
	free(s);
	free(d);
	free(out_degree);
	free(in_degree);
}

/* Compares two counts, largest first (qsort). */
static int
by_count_descending(const void *a, const void *b)
{
	int64_t		x = *(const int64_t *) a,
				y = *(const int64_t *) b;

	return (x < y) - (x > y);
}

/*
 * A bipartite graph "bip:12" (4096 users, 1024 items, 65536 edges, Zipf 1.1): every edge from a
 * user to an item; users uniform (each half of them has half of the edges); the items' popularity
 * a Zipf law: the most popular item draws (0.5^-0.1 - 1.5^-0.1) / (0.5^-0.1 - 1024.5^-0.1) =
 * 0.19500 of the edges (12780, sd 101), the item of median popularity (rank 512) about
 * 513^-1.1 / (10 * (0.5^-0.1 - 1024.5^-0.1)) = 1.8e-4 of them (~12); the popular items scattered
 * over the item ids (the 8 most popular are not the 8 lowest ids).
 */
static void
test_bipartite(void)
{
	GenSpec		spec;
	int64_t    *s,
			   *d;
	int64_t		users,
				items,
				low_users = 0,
				scattered = 0;
	int64_t    *in_degree;
	bool		sides = true;

	check(gen_parse("bip:12", 5, &spec), "bip:12 parses", "bipartite");
	users = spec.users;
	items = spec.n - spec.users;
	in_degree = calloc((size_t) items, sizeof(int64_t));
	generate(&spec, 2, &s, &d);
	for (int64_t i = 0; i < spec.m; i++)
	{
		sides &= s[i] >= 0 && s[i] < users && d[i] >= users && d[i] < spec.n;
		if (d[i] >= users && d[i] < spec.n)
			in_degree[d[i] - users]++;
		low_users += s[i] < users / 2;
	}
	check(sides, "every edge from a user (0..U-1) to an item (U..U+I-1)", "bipartite");
	check(fabs((double) low_users / (double) spec.m - 0.5) < 0.01, "users uniform", "bipartite");
	for (int64_t r = 0; r < 8; r++)
	{
		int64_t		best = 0;

		/* the r-th most popular item's id is not the r-th lowest id */
		for (int64_t v = 1; v < items; v++)
			best = in_degree[v] > in_degree[best] ? v : best;
		scattered += best != r;
		in_degree[best] = -in_degree[best] - 1;		/* marked taken; restored below */
	}
	for (int64_t v = 0; v < items; v++)
		in_degree[v] = in_degree[v] < 0 ? -in_degree[v] - 1 : in_degree[v];
	qsort(in_degree, (size_t) items, sizeof(int64_t), by_count_descending);
	check(in_degree[0] > 12480 && in_degree[0] < 13080, "most popular item ~0.195 m (12780)",
		  "bipartite");
	check(in_degree[items / 2] >= 6 && in_degree[items / 2] <= 20 &&
		  in_degree[0] > 500 * in_degree[items / 2], "median item ~12 edges: far below the most popular",
		  "bipartite");
	check(scattered >= 7, "popular items scattered over the item ids", "bipartite");
	free(s);
	free(d);
	free(in_degree);
}

/* Uniform graph: both ends spread evenly (each half of the ids gets half of the edges). */
static void
test_uniform(void)
{
	GenSpec		spec = gen_uniform(1000, 400000, 3);
	int64_t    *s,
			   *d;
	int64_t		low_src = 0,
				low_dst = 0;

	generate(&spec, 2, &s, &d);
	for (int64_t i = 0; i < spec.m; i++)
	{
		low_src += s[i] < 500;
		low_dst += d[i] < 500;
	}
	check(fabs((double) low_src / (double) spec.m - 0.5) < 0.005, "uniform sources", "uniform");
	check(fabs((double) low_dst / (double) spec.m - 0.5) < 0.005, "uniform destinations", "uniform");
	free(s);
	free(d);
}

/* Deduplication, breadth-first order and relabelling on hand graphs. */
static void
test_tools(void)
{
	int64_t		s[] = {1, 0, 1, 0, 3},
				d[] = {2, 5, 2, 5, 3};
	size_t		m = gen_dedupe(s, d, 5);
	/* 0->2, 2->1, 3->0, 4->4: BFS from 0 numbers 0, 2, 1; then roots 3 and 4 */
	int64_t		bs[] = {0, 2, 3, 4},
				bd[] = {2, 1, 0, 4},
				order[5];
	/* 0->3, 0->1, 3->2: neighbours in edge order, so 0, 3, 1, then 2 */
	int64_t		cs[] = {0, 0, 3},
				cd[] = {3, 1, 2},
				order2[4];
	int64_t		ds[] = {5, 7},
				dd[] = {7, 0},
				ns[] = {-1},
				nd[] = {2};

	check(m == 3 && s[0] == 0 && d[0] == 5 && s[1] == 1 && d[1] == 2 && s[2] == 3 && d[2] == 3,
		  "dedupe sorts by (src, dst) and keeps one of each pair", "hand");
	check(gen_bfs_order(5, bs, bd, 4, order) && order[0] == 0 && order[1] == 2 && order[2] == 1 &&
		  order[3] == 3 && order[4] == 4, "breadth-first order with restarts", "hand");
	check(gen_bfs_order(4, cs, cd, 3, order2) && order2[0] == 0 && order2[1] == 2 &&
		  order2[2] == 3 && order2[3] == 1, "breadth-first order follows edge order", "hand");
	gen_relabel(cs, cd, 3, order2);
	check(cs[0] == 0 && cd[0] == 1 && cs[1] == 0 && cd[1] == 2 && cs[2] == 1 && cd[2] == 3,
		  "relabel renames both ends", "hand");
	/* 5->7, 7->0: BFS from 0 (no out-edges) numbers 0; then 1..4 alone, 5, 7, and 6 last */
	check(gen_reorder_ids(GEN_IDS_BFS, ds, dd, 2, 0) && ds[0] == 5 && dd[0] == 6 && ds[1] == 6 &&
		  dd[1] == 0, "breadth-first renumbering of an edge list", "hand");
	check(!gen_reorder_ids(GEN_IDS_BFS, ns, nd, 1, 0) && !gen_reorder_ids(GEN_IDS_SHUFFLED, ns, nd, 1, 0) &&
		  ns[0] == -1 && nd[0] == 2, "negative ids refused", "hand");
}

/* Shuffled ids: a permutation of [0, max id + 1) applied to both ends, the same for one seed. */
static void
test_shuffled_ids(void)
{
	enum
	{
		M = 2000
	};
	int64_t		s1[M],
				d1[M],
				s2[M],
				d2[M],
				s3[M],
				d3[M];
	int64_t		image[M + 1];
	bool		mapped = true,
				same_seed_same = true,
				moved = false,
				other_seed_differs = false;

	for (int i = 0; i < M; i++)
	{
		/* a path 0 -> 1 -> ... -> M */
		s1[i] = s2[i] = s3[i] = i;
		d1[i] = d2[i] = d3[i] = i + 1;
	}
	for (int i = 0; i <= M; i++)
		image[i] = -1;
	check(gen_reorder_ids(GEN_IDS_SHUFFLED, s1, d1, M, 9) && gen_reorder_ids(GEN_IDS_SHUFFLED, s2, d2, M, 9) &&
		  gen_reorder_ids(GEN_IDS_SHUFFLED, s3, d3, M, 10), "shuffled ids: runs", "path");
	for (int i = 0; i < M; i++)
	{
		/* old id i became s1[i] and old id i + 1 became d1[i]: one image per old id, all distinct */
		mapped = mapped && s1[i] >= 0 && s1[i] <= M && d1[i] >= 0 && d1[i] <= M &&
			(i == 0 || s1[i] == d1[i - 1]);
		if (mapped && image[s1[i]] < 0)
			image[s1[i]] = i;
		else
			mapped = false;
		same_seed_same = same_seed_same && s1[i] == s2[i] && d1[i] == d2[i];
		moved = moved || s1[i] != i;
		other_seed_differs = other_seed_differs || s1[i] != s3[i];
	}
	mapped = mapped && image[d1[M - 1]] < 0;
	check(mapped, "shuffled ids: a permutation, both ends renamed alike", "path");
	check(same_seed_same && moved && other_seed_differs, "shuffled ids: one permutation per seed", "path");
	check(gen_reorder_ids(GEN_IDS_NATURAL, s1, d1, M, 9) && s1[0] == s2[0] && d1[M - 1] == d2[M - 1],
		  "natural ids: untouched", "path");
}

/* Graph names: kinds, defaults, and malformed names refused. */
static void
test_parse(void)
{
	GenSpec		g;

	check(gen_parse("local:10:8:0.5:16", 7, &g) && g.kind == GEN_LOCAL && g.n == 1024 &&
		  g.m == 8192 && g.p_local == 0.5 && g.window == 16 && g.seed == 17, "local name", "parse");
	check(gen_parse("local:10", 7, &g) && g.m == 16384 && g.p_local == 0.9 && g.window == 64,
		  "local defaults", "parse");
	check(gen_parse("rmat:12", 1, &g) && g.kind == GEN_RMAT && g.scale == 12 && g.m == 65536 &&
		  g.permute, "rmat name", "parse");
	check(gen_parse("er:12:4", 1, &g) && g.kind == GEN_UNIFORM && g.n == 4096 && g.m == 16384,
		  "er name", "parse");
	check(gen_parse("bip:10:8:150", 7, &g) && g.kind == GEN_BIPARTITE && g.users == 1024 &&
		  g.n == 1280 && g.m == 8192 && g.zipf == 1.5 && g.permute && g.seed == 17, "bip name", "parse");
	check(gen_parse("bip:2", 7, &g) && g.users == 4 && g.n == 5 && g.m == 64 && g.zipf == 1.1,
		  "bip defaults", "parse");
	check(!gen_parse("rmat:x", 1, &g) && !gen_parse("ring:3", 1, &g) && !gen_parse("er:3:1:2", 1, &g) &&
		  !gen_parse("local:3:1:1.5", 1, &g) && !gen_parse("rmat", 1, &g) &&
		  !gen_parse("rmat:12:", 1, &g) && !gen_parse("bip:1", 1, &g) &&
		  !gen_parse("bip:10:8:110:3", 1, &g) && !gen_parse("bip:10:8:-5", 1, &g),
		  "malformed names refused", "parse");
}

/* The benchmarks' graph options. */
static void
test_options(void)
{
	char	   *argv[] = {"bench", "--rmat", "20", "--order", "bfs", "--graph", "local:22:16:0.9:64",
	"--order", "sideways", "--er"};
	int			argc = (int) (sizeof(argv) / sizeof(argv[0]));
	GenOptions	opts = {"", GEN_IDS_NATURAL};

	check(gen_take_option(argc, argv, 1, &opts) == 2 && strcmp(opts.graph, "rmat:20") == 0,
		  "--rmat S names rmat:S", "options");
	check(gen_take_option(argc, argv, 3, &opts) == 2 && opts.id_order == GEN_IDS_BFS, "--order bfs", "options");
	check(gen_take_option(argc, argv, 5, &opts) == 2 &&
		  strcmp(opts.graph, "local:22:16:0.9:64") == 0, "--graph NAME", "options");
	check(gen_take_option(argc, argv, 7, &opts) == 0 && gen_take_option(argc, argv, 9, &opts) == 0 &&
		  gen_take_option(argc, argv, 0, &opts) == 0 && opts.id_order == GEN_IDS_BFS,
		  "other options and a missing value not taken", "options");
	{
		char	   *shuffled[] = {"bench", "--order", "shuffled"};

		check(gen_take_option(3, shuffled, 1, &opts) == 2 && opts.id_order == GEN_IDS_SHUFFLED,
			  "--order shuffled", "options");
	}
}

/* Runs every test; prints "N passed, N failed". */
int
main(void)
{
	GenSpec		specs[] = {gen_rmat(12, 50000, 1, true), gen_uniform(777, 40000, 2),
	gen_local(5000, 60000, 0.8, 32, 3), gen_bipartite(3000, 700, 50000, 1.1, 4),
	gen_bipartite(1000, 300, 20000, 1.0, 5)};

	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++)
		test_determinism(&specs[i]);
	test_rmat();
	test_local(0.9, 64);
	test_local(0.5, 8);
	test_local(0.0, 64);
	test_uniform();
	test_bipartite();
	test_tools();
	test_shuffled_ids();
	test_parse();
	test_options();
	return test_summary();
}
