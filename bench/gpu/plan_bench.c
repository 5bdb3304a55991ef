/*
 * plan_bench.c — the GPU engine's host planning, timed on the CPU (no GPU needed).
 *
 *   plan_bench --graph NAME | --rmat S | --er S | --file EDGES.tsv[.gz]  [--order natural|bfs]
 *              [--threads T] [--layouts a,b,..] [--auto] [--stats OUT.txt] [--hash]
 *
 * Builds the same graph the GPU benchmark builds (the graph names and --order of pr_bench.cu,
 * test/common/graph_gen.h: the same edges, sorted by (src, dst) and deduplicated, here on the
 * host), then pr_graph_build.  Then the steps of the GPU engine's prepare():
 * out-degree keys, degree order, relabelled pull CSR, the model's choice among composite layouts
 * (--auto), and each named layout (binned, tiled-L2, tiled-sK, tiled-sK-compact), each timed.
 * --hash prints a 64-bit hash of every planned array (to compare builds and thread counts);
 * --stats writes each layout's model statistics (pr_layout_stats_write) for test/plan.
 */
#define _GNU_SOURCE
#include "bench_util.h"
#include "pr_graph.h"
#include "pr_plan.h"
#include "graph_gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* FNV-1a over bytes, chained. */
static uint64_t
hash_bytes(uint64_t h, const void *p, size_t bytes)
{
	const unsigned char *c = p;

	if (p == NULL)
		return h * 1099511628211ULL;
	for (size_t i = 0; i < bytes; i++)
		h = (h ^ c[i]) * 1099511628211ULL;
	return h;
}

/* Hash of every array of a composite layout. */
static uint64_t
hash_composite(const PrComposite *c)
{
	uint64_t	h = 1469598103934665603ULL;

	for (int t = 0; t < c->n_tiles; t++)
	{
		const PrCompositeTile *x = &c->tiles[t];

		h = hash_bytes(h, &x->col_begin, 8);
		h = hash_bytes(h, &x->col_end, 8);
		h = hash_bytes(h, &x->nnz, 8);
		h = hash_bytes(h, &x->n_rows, 8);
		h = hash_bytes(h, &x->eff_window, 8);
		h = hash_bytes(h, x->vec_row, (size_t) x->n_vec * 4);
		h = hash_bytes(h, x->vec_ptr, (size_t) (x->n_vec + 1) * 8);
		h = hash_bytes(h, x->longs.long_row, (size_t) x->longs.n_long * 4);
		h = hash_bytes(h, x->longs.chunk_begin, (size_t) (x->longs.n_long + 1) * 8);
		h = hash_bytes(h, x->ell_off, (size_t) (x->n_ell + 1) * 8);
		h = hash_bytes(h, x->ell_row, (size_t) x->n_ell * 32 * 4);
		h = hash_bytes(h, x->idx, x->idx ? (size_t) x->n_idx * 4 : 0);
		h = hash_bytes(h, x->idx16, x->idx16 ? (size_t) x->n_idx * 2 : 0);
		h = hash_bytes(h, x->val, x->val ? (size_t) x->n_idx * 4 : 0);
	}
	return h;
}

/* Hash of a binned layout. */
static uint64_t
hash_binned(const PrBinned *b)
{
	uint64_t	h = 1469598103934665603ULL;

	h = hash_bytes(h, b->bin_begin, sizeof(b->bin_begin));
	h = hash_bytes(h, b->rows, (size_t) b->bin_begin[PR_BIN_COUNT - 1] * 4);
	h = hash_bytes(h, b->chunk_begin_edge, (size_t) (b->n_chunks + 1) * 8);
	h = hash_bytes(h, b->chunk_row, (size_t) b->n_chunks * 4);
	h = hash_bytes(h, b->longs.long_row, (size_t) b->longs.n_long * 4);
	return hash_bytes(h, b->longs.chunk_begin, (size_t) (b->longs.n_long + 1) * 8);
}

/* Hash of a CSR. */
static uint64_t
hash_csr(const PrPlanCsr *c)
{
	uint64_t	h = 1469598103934665603ULL;

	h = hash_bytes(h, c->ptr, (size_t) (c->n + 1) * 8);
	h = hash_bytes(h, c->col, (size_t) c->nnz * 4);
	return hash_bytes(h, c->val, c->val ? (size_t) c->nnz * 4 : 0);
}

/* Dies with a message when a call failed. */
static void
need_ok(PrStatus st, const PrError *err, const char *what)
{
	if (st != PR_OK)
	{
		fprintf(stderr, "%s failed: %s\n", what, err->message);
		exit(1);
	}
}

/* Entry point: see the comment at the top. */
int
main(int argc, char **argv)
{
	int			threads = 2,
				do_hash = 0,
				do_auto = 0;
	const char *file = NULL,
			   *layouts = "binned,tiled-L2,tiled-s1,tiled-s2,tiled-s4,tiled-s8",
			   *stats_path = NULL,
			   *model_path = NULL,
			   *label = NULL;
	int64_t    *src = NULL,
			   *dst = NULL;
	size_t		m;
	GenOptions	gopt = {"", GEN_IDS_NATURAL};
	GenSpec		spec;
	PrGraph		g;
	PrBuildOptions bo;
	PrError		err;
	PrPlanCsr	csr;
	int64_t    *key;
	int32_t    *new_to_old,
			   *old_to_new;
	double		t0,
				t_all;
	FILE	   *stats = NULL;
	PrModel		model;
	int			have_model = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 1; i < argc; i++)
	{
		if (gen_take_option(argc, argv, i, &gopt) > 0)
			i++;
		else if (bench_flag(argv, i, "--hash"))
			do_hash = 1;
		else if (bench_flag(argv, i, "--auto"))
			do_auto = 1;
		else if (!bench_option_string(argc, argv, &i, "--file", &file) &&
				 !bench_option_int(argc, argv, &i, "--threads", &threads) &&
				 !bench_option_string(argc, argv, &i, "--layouts", &layouts) &&
				 !bench_option_string(argc, argv, &i, "--stats", &stats_path) &&
				 !bench_option_string(argc, argv, &i, "--model", &model_path) &&
				 !bench_option_string(argc, argv, &i, "--label", &label))
		{
			fprintf(stderr, "usage: %s --graph rmat:S|er:S[:EF]|local:S[:EF[:P[:W]]] | --rmat S | --er S "
					"| --file F [--order natural|bfs] [--threads T] [--layouts a,b] "
					"[--auto] [--model M.tsv] [--stats OUT] [--label L] [--hash]\n", argv[0]);
			return 2;
		}
	}
#ifdef PR_PLAN_HAVE_THREADS
	pr_plan_set_threads(threads);
#endif
	if (model_path)
	{
		char	   *text = bench_read_file(model_path);

		have_model = text != NULL && pr_model_parse(text, &model, &err) == PR_OK;
		free(text);
	}
	t0 = pr_clock_seconds();
	if (file)
		m = bench_read_edges(file, &src, &dst);
	else if (gen_parse(gopt.graph, GEN_BENCH_SEED, &spec))
		m = gen_unique_edges(&spec, threads, &src, &dst);
	else
	{
		fprintf(stderr, "no graph given or unknown graph %s\n", gopt.graph);
		return 2;
	}
	if (m == 0)
	{
		fprintf(stderr, "no edges\n");
		return 1;
	}
	if (!gen_reorder_ids(gopt.id_order, src, dst, m, GEN_BENCH_SEED))
	{
		fprintf(stderr, "--order %s needs ids >= 0 and memory for them\n", gen_id_order_name(gopt.id_order));
		return 2;
	}
	printf("# generated/read %zu edges in %.1f s\n", m, pr_clock_seconds() - t0);
	memset(&bo, 0, sizeof(bo));
	bo.n_threads = threads;
	t0 = pr_clock_seconds();
	need_ok(pr_graph_build(src, dst, NULL, m, &bo, &pr_malloc_allocator, &g, &err), &err, "build");
	free(src);
	free(dst);
	printf("# built graph: %lld nodes, %lld edges in %.1f s\n", (long long) g.n_nodes,
		   (long long) g.n_edges, pr_clock_seconds() - t0);

	/* the engine's prepare(): keys, degree order, relabelled pull CSR */
	t_all = t0 = pr_clock_seconds();
	key = calloc((size_t) g.n_nodes + 1, 8);
	new_to_old = malloc((size_t) (g.n_nodes + 1) * 4);
	old_to_new = malloc((size_t) (g.n_nodes + 1) * 4);
	{
		/* out-degrees = column counts of the in-edge CSR, as the engine's prepare() takes them */
		PrPlanCsr	in_view;

		memset(&in_view, 0, sizeof(in_view));
		in_view.n = g.n_nodes;
		in_view.nnz = g.n_edges;
		in_view.ptr = g.in_ptr;
		in_view.col = g.in_src;
#ifdef PR_PLAN_HAVE_THREADS
		need_ok(pr_plan_column_degrees(&in_view, key, &err), &err, "out-degrees");
#else
		for (int64_t p = 0; p < g.n_edges; p++)
			key[g.in_src[p]]++;
#endif
	}
	need_ok(pr_plan_degree_order(g.n_nodes, key, new_to_old, old_to_new, &pr_malloc_allocator, &err),
			&err, "degree order");
	printf("plan step %-22s %8.3f s\n", "keys+degree_order", pr_clock_seconds() - t0);
	t0 = pr_clock_seconds();
	need_ok(pr_plan_relabel(g.n_nodes, g.in_ptr, g.in_src, g.in_weight, old_to_new, &pr_malloc_allocator,
							&csr, &err), &err, "relabel");
	printf("plan step %-22s %8.3f s\n", "relabel", pr_clock_seconds() - t0);
	if (do_hash)
		printf("hash relabel %016llx\n", (unsigned long long) hash_csr(&csr));
	if (stats_path)
	{
		stats = fopen(stats_path, "w");
		if (stats == NULL)
		{
			fprintf(stderr, "cannot write %s\n", stats_path);
			return 1;
		}
		fprintf(stats, "# layout statistics written by bench/gpu/plan_bench %s %s%s%s\n",
				label ? label : "", file ? file : gopt.graph, gopt.id_order != GEN_IDS_NATURAL ? " --order " : "",
				gopt.id_order != GEN_IDS_NATURAL ? gen_id_order_name(gopt.id_order) : "");
	}
#ifdef PR_PLAN_HAVE_THREADS
	if (do_auto)
	{
		PrPlanChoice choice;
		double		ms = -1;
		char		log[1024] = "";
		int			n_cand = 0;

		pr_plan_choice_init(&choice, csr.n);
		t0 = pr_clock_seconds();
		need_ok(pr_plan_choose(&csr, have_model ? &model : NULL, &choice, &ms, log, sizeof(log),
							   &n_cand, &pr_malloc_allocator, &err), &err, "choose");
		printf("plan step %-22s %8.3f s  -> %s s=%d v=%d compact=%d (%.4f ms): %s\n", "auto choice",
			   pr_clock_seconds() - t0, choice.binned ? "binned" : "tiled", choice.composite.n_smem_tiles,
			   choice.composite.vec_threshold, (int) choice.composite.compact, ms, log);
	}
#else
	(void) do_auto;
	(void) have_model;
#endif

	/* each named layout */
	{
		char	   *list = strdup(layouts);

		for (char *name = strtok(list, ","); name; name = strtok(NULL, ","))
		{
			double		predicted = -1;

			t0 = pr_clock_seconds();
			if (!strcmp(name, "binned"))
			{
				PrBinned	b;

				need_ok(pr_plan_binned(&csr, 4096, &pr_malloc_allocator, &b, &err), &err, name);
				printf("plan step %-22s %8.3f s", name, pr_clock_seconds() - t0);
				if (have_model)
					predicted = pr_model_predict_binned(&model, &b, &csr) * 1e3;
#ifdef PR_PLAN_HAVE_THREADS
				if (stats)
				{
					PrLayoutStats ls;

					need_ok(pr_layout_stats_binned(&b, &csr, &ls, &pr_malloc_allocator, &err), &err, "stats");
					pr_layout_stats_write(stats, label ? label : "graph", name, &ls);
					pr_layout_stats_free(&ls, &pr_malloc_allocator);
				}
#endif
				if (do_hash)
					printf("  hash %016llx", (unsigned long long) hash_binned(&b));
				pr_plan_binned_free(&b, &pr_malloc_allocator);
			}
			else if (!strncmp(name, "tiled-", 6))
			{
				PrCompositeOptions o;
				PrComposite c;

				memset(&o, 0, sizeof(o));
				o.tile_width = csr.n;
				o.vec_threshold = 32;
				o.chunk = 4096;
				o.smem_width = 49152;
				if (name[6] == 's')
					o.n_smem_tiles = atoi(name + 7);
#ifdef PR_PLAN_HAVE_THREADS
				o.compact = strstr(name, "compact") != NULL;
#endif
				if (strstr(name, "shapes"))
					o.shapes_only = true;
				need_ok(pr_plan_composite(&csr, &o, &pr_malloc_allocator, &c, &err), &err, name);
				printf("plan step %-22s %8.3f s  (%d tiles, padding %lld)", name, pr_clock_seconds() - t0,
					   c.n_tiles, (long long) c.padding);
				if (have_model)
					predicted = pr_model_predict_composite(&model, &c) * 1e3;
#ifdef PR_PLAN_HAVE_THREADS
				if (stats)
				{
					PrLayoutStats ls;

					need_ok(pr_layout_stats_composite(&c, &ls, &pr_malloc_allocator, &err), &err, "stats");
					pr_layout_stats_write(stats, label ? label : "graph", name, &ls);
					pr_layout_stats_free(&ls, &pr_malloc_allocator);
				}
#endif
				if (do_hash)
					printf("  hash %016llx", (unsigned long long) hash_composite(&c));
				pr_plan_composite_free(&c, &pr_malloc_allocator);
			}
			else
			{
				printf("unknown layout %s\n", name);
				continue;
			}
			if (predicted >= 0)
				printf("  model %.4f ms", predicted);
			printf("\n");
		}
		free(list);
	}
	printf("# total planning %.2f s with %d thread(s)\n", pr_clock_seconds() - t_all, threads);
	if (stats)
		fclose(stats);
	pr_plan_csr_free(&csr, &pr_malloc_allocator);
	free(key);
	free(new_to_old);
	free(old_to_new);
	pr_graph_free(&g, &pr_malloc_allocator);
	return 0;
}
