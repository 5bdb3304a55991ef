/*
 * delta_extend.c — the time of a live table's patch as a delta entry, over the core: a weighted
 * root's facts (pr_graph_weight_range and pr_graph_out_degrees, counted once per root), one
 * pr_graph_delta_extend of a large change from the root (a fraction of the edges), then calls of a
 * few changed rows each on top of that delta (the per-call patch of a table under a steady write
 * load): extended into arrays of its own and then written flat (pr_graph_delta_write_flat into
 * fresh memory), and extended straight into fresh memory (pr_graph_delta_extend_flat, as into a
 * new segment).  The delta's edges, sources and absent nodes are those the calls extend.
 *
 *   delta_extend [--graph NAME | --rmat SCALE] [--threads 1,2,..] [--fraction F] [--rows N]
 *                [--repeat R]
 *
 * The last column takes the per-call extend as a backend does: the root and the old delta each in
 * a file of shared memory (/dev/shm) mapped read-only afresh for every call, so that the pages it
 * reads fault in as they do in a backend that maps a cached graph per call.
 *
 * The graph: the generated graph's unique edges (bench_edges) with weights 1..64, directed.  The
 * changes: a third deletions of existing edges, a third weight updates (a deletion and an insert),
 * a third inserts between existing nodes.  Each figure is the best of R runs, in milliseconds.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench_util.h"
#include "graph_gen.h"
#include "pr_graph.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_THREAD_COUNTS 8

/* n changed rows of the graph's edges src/dst/w[m] (see the header) into out[], seeded. */
static size_t
make_changes(const int64_t *src, const int64_t *dst, const double *w, size_t m, size_t n,
			 uint64_t seed, unsigned char *gone, PrEdgeChange *out)
{
	uint64_t	state = seed * 2654435761u + 7;
	size_t		k = 0;

	for (size_t i = 0; i < n; i++)
	{
		size_t		e = (size_t) (gen_random(&state) % m);

		switch (i % 3)
		{
			case 0:				/* an insert between existing nodes */
				out[k++] = (PrEdgeChange) {src[e], dst[(size_t) (gen_random(&state) % m)],
				(double) (1 + gen_random(&state) % 64), 1};
				break;
			default:			/* a deletion, or a weight update */
				while (gone[e])
					e = (e + 1) % m;
				gone[e] = 1;
				out[k++] = (PrEdgeChange) {src[e], dst[e], w[e], -1};
				if (i % 3 == 2)
					out[k++] = (PrEdgeChange) {src[e], dst[e], w[e] + 0.5, 1};
				break;
		}
	}
	return k;
}

/* Best time of repeat extends of old by changes on n_threads threads; the last result in out. */
static double
time_extend(const PrGraph *root, const int64_t *degree, const PrWeightRange *range,
			const PrGraphDelta *old, const PrEdgeChange *changes, size_t n, int n_threads,
			int repeat, PrGraphDelta *out)
{
	double		best = 0;

	for (int r = 0; r < repeat; r++)
	{
		PrError		err;
		double		t0 = pr_clock_seconds(),
					elapsed;

		if (pr_graph_delta_extend(root, degree, range, old, changes, n, false, n_threads,
								  &pr_malloc_allocator, out, NULL, &err) != PR_OK)
		{
			fprintf(stderr, "extend failed: %s\n", err.message);
			exit(1);
		}
		elapsed = pr_clock_seconds() - t0;
		if (r == 0 || elapsed < best)
			best = elapsed;
		if (r + 1 < repeat)
			pr_graph_delta_free(out, &pr_malloc_allocator);
	}
	return best * 1000.0;
}

/* buf[bytes] in a new file of shared memory, mapped read-only afresh by map_fresh. */
static int
shared_file(const void *buf, size_t bytes)
{
	char		name[64];
	int			fd;

	snprintf(name, sizeof(name), "/dev/shm/delta_extend.%d.%p", (int) getpid(), buf);
	fd = open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, buf, bytes) != (ssize_t) bytes)
	{
		fprintf(stderr, "cannot write %s\n", name);
		exit(1);
	}
	unlink(name);
	return fd;
}

/* A fresh read-only shared mapping of the file fd (bytes long). */
static void *
map_fresh(int fd, size_t bytes)
{
	void	   *at = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, 0);

	if (at == MAP_FAILED)
	{
		fprintf(stderr, "mmap failed\n");
		exit(1);
	}
	return at;
}

/*
 * Best time of repeat extends of old by changes as a backend does one (see the header), into a
 * fresh flat buffer: root and old in fresh shared mappings for each.
 */
static double
time_mapped(const PrGraph *root, const int64_t *degree, const PrWeightRange *range,
			const PrGraphDelta *old, const PrEdgeChange *changes, size_t n, int n_threads,
			int repeat)
{
	size_t		root_bytes = pr_graph_flat_size(root),
				old_bytes = pr_graph_delta_flat_size(old);
	void	   *buf = aligned_alloc(8, (root_bytes > old_bytes ? root_bytes : old_bytes) + 8);
	int			root_fd,
				old_fd;
	double		best = 0;

	pr_graph_write_flat(root, buf);
	root_fd = shared_file(buf, root_bytes);
	pr_graph_delta_write_flat(old, buf);
	old_fd = shared_file(buf, old_bytes);
	free(buf);
	for (int r = 0; r < repeat; r++)
	{
		void	   *root_map = map_fresh(root_fd, root_bytes);
		void	   *old_map = map_fresh(old_fd, old_bytes);
		size_t		bytes = pr_graph_delta_extend_size(old, n, false);
		void	   *out = aligned_alloc(8, (bytes + 7) / 8 * 8);
		PrGraph		mapped_root;
		PrGraphDelta mapped_old,
					view;
		PrError		err;
		double		t0,
					elapsed;

		if (pr_graph_view_flat_header(root_map, root_bytes, &mapped_root, &err) != PR_OK ||
			pr_graph_delta_view_flat(old_map, old_bytes, &mapped_old, &err) != PR_OK)
		{
			fprintf(stderr, "view failed: %s\n", err.message);
			exit(1);
		}
		t0 = pr_clock_seconds();
		if (pr_graph_delta_extend_flat(&mapped_root, degree, range, &mapped_old, changes, n,
									   false, n_threads, &pr_malloc_allocator, out, bytes, &view,
									   NULL, &err) != PR_OK)
		{
			fprintf(stderr, "flat extend failed: %s\n", err.message);
			exit(1);
		}
		elapsed = pr_clock_seconds() - t0;
		if (r == 0 || elapsed < best)
			best = elapsed;
		free(out);
		munmap(root_map, root_bytes);
		munmap(old_map, old_bytes);
	}
	close(root_fd);
	close(old_fd);
	return best * 1000.0;
}

int
main(int argc, char **argv)
{
	GenSpec		spec;
	char		label[128];
	int			threads[MAX_THREAD_COUNTS] = {1, 2};
	int			n_threads = 2;
	int			repeat = 3;
	int			rows = 1300;
	double		fraction = 0.001;
	int64_t    *src,
			   *dst;
	double	   *w;
	size_t		m;
	PrGraph		root;
	PrError		err;
	PrBuildOptions bopt = {false, false, 2, NULL, NULL, NULL};

	gen_parse("rmat:21", GEN_BENCH_SEED, &spec);
	for (int i = 1; i < argc; i++)
	{
		const char *name;
		int			scale;

		if (bench_option_string(argc, argv, &i, "--graph", &name))
		{
			if (!gen_parse(name, GEN_BENCH_SEED, &spec))
			{
				fprintf(stderr, "unknown graph %s\n", name);
				return 2;
			}
		}
		else if (bench_option_int(argc, argv, &i, "--rmat", &scale))
		{
			char		buf[32];

			snprintf(buf, sizeof(buf), "rmat:%d", scale);
			gen_parse(buf, GEN_BENCH_SEED, &spec);
		}
		else if (!bench_option_int_list(argc, argv, &i, "--threads", threads, MAX_THREAD_COUNTS,
										&n_threads) &&
				 !bench_option_double(argc, argv, &i, "--fraction", &fraction) &&
				 !bench_option_int(argc, argv, &i, "--rows", &rows) &&
				 !bench_option_int(argc, argv, &i, "--repeat", &repeat))
		{
			fprintf(stderr, "usage: %s [--graph NAME | --rmat SCALE] [--threads 1,2] "
					"[--fraction F] [--rows N] [--repeat R]\n", argv[0]);
			return 2;
		}
	}
	m = bench_edges(NULL, &spec, 2, &src, &dst, label, sizeof(label));
	w = malloc(sizeof(double) * m);
	for (size_t e = 0; e < m; e++)
	{
		uint64_t	state = e;

		w[e] = (double) (1 + gen_random(&state) % 64);
	}
	if (pr_graph_build(src, dst, w, m, &bopt, &pr_malloc_allocator, &root, &err) != PR_OK)
	{
		fprintf(stderr, "build failed: %s\n", err.message);
		return 1;
	}
	printf("graph: %s, %zu edges, %lld nodes, weighted; change %g of the edges, then calls of %d rows\n",
		   label, m, (long long) root.n_nodes, fraction, rows);
	printf("| threads | root facts ms | extend (large) ms | delta edges | delta sources | delta absent | extend (call) ms | write flat ms | extend into flat (call) ms | mapped afresh (call) ms |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|\n");
	for (int t = 0; t < n_threads; t++)
	{
		unsigned char *gone = calloc(m, 1);
		size_t		n_large = (size_t) (fraction * (double) m);
		PrEdgeChange *large = malloc(sizeof(PrEdgeChange) * (n_large * 2 + 1));
		PrEdgeChange *call = malloc(sizeof(PrEdgeChange) * ((size_t) rows * 2 + 1));
		size_t		k_large = make_changes(src, dst, w, m, n_large, 1, gone, large);
		size_t		k_call = make_changes(src, dst, w, m, (size_t) rows, 2, gone, call);
		int64_t    *degree = malloc(sizeof(int64_t) * (size_t) root.n_nodes);
		PrWeightRange range;
		PrGraphDelta empty = {0},
					first,
					second;
		double		facts = 0,
					large_ms,
					call_ms,
					write_ms = 0,
					flat_ms = 0;

		for (int r = 0; r < repeat; r++)
		{
			double		t0 = pr_clock_seconds(),
						elapsed;

			pr_graph_root_facts(&root, threads[t], &pr_malloc_allocator, degree, &range);
			elapsed = (pr_clock_seconds() - t0) * 1000.0;
			if (r == 0 || elapsed < facts)
				facts = elapsed;
		}
		empty.n_nodes = root.n_nodes;
		large_ms = time_extend(&root, degree, &range, &empty, large, k_large, threads[t], repeat,
							   &first);
		call_ms = time_extend(&root, degree, &range, &first, call, k_call, threads[t], repeat,
							  &second);
		for (int r = 0; r < repeat; r++)
		{
			size_t		bytes = pr_graph_delta_flat_size(&second);
			void	   *buf = malloc(bytes);
			double		t0 = pr_clock_seconds(),
						elapsed;

			pr_graph_delta_write_flat(&second, buf);
			elapsed = (pr_clock_seconds() - t0) * 1000.0;
			if (r == 0 || elapsed < write_ms)
				write_ms = elapsed;
			free(buf);
		}
		for (int r = 0; r < repeat; r++)
		{
			size_t		bytes = pr_graph_delta_extend_size(&first, k_call, false);
			void	   *buf = aligned_alloc(8, (bytes + 7) / 8 * 8);
			PrGraphDelta view;
			double		t0 = pr_clock_seconds(),
						elapsed;

			if (pr_graph_delta_extend_flat(&root, degree, &range, &first, call, k_call, false,
										   threads[t], &pr_malloc_allocator, buf, bytes, &view,
										   NULL, &err) != PR_OK)
			{
				fprintf(stderr, "flat extend failed: %s\n", err.message);
				return 1;
			}
			elapsed = (pr_clock_seconds() - t0) * 1000.0;
			if (r == 0 || elapsed < flat_ms)
				flat_ms = elapsed;
			free(buf);
		}
		printf("| %d | %.1f | %.1f | %lld | %lld | %lld | %.2f | %.2f | %.2f | %.2f |\n",
			   threads[t], facts, large_ms, (long long) first.n_edges,
			   (long long) first.n_sources, (long long) first.n_absent, call_ms, write_ms, flat_ms,
			   time_mapped(&root, degree, &range, &first, call, k_call, threads[t], repeat));
		pr_graph_delta_free(&first, &pr_malloc_allocator);
		pr_graph_delta_free(&second, &pr_malloc_allocator);
		free(degree);
		free(call);
		free(large);
		free(gone);
	}
	pr_graph_free(&root, &pr_malloc_allocator);
	free(src);
	free(dst);
	free(w);
	return 0;
}
