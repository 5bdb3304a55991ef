/*
 * test_build.cu — the GPU graph build (pr_gpu_build.cu) against the CPU build: for every case the
 * flat bytes of pr_gpu_build_flat must equal those of pr_graph_build + pr_graph_write_flat.
 *
 * Cases: a hand graph with duplicates, self-loops, negative and extreme ids; random graphs with
 * ids in a narrow range (direct table) and spread over int64 (sorted ids), skewed (R-MAT-like)
 * and uniform, directed and undirected; one row; a buffer too small (PR_ERR_TOO_LARGE, buffer
 * untouched); the rows and the output in the same buffer, as in the engine process.  Last, with
 * --time SCALE, the build of an R-MAT graph is timed against the CPU build.
 * Prints one line per failed case and "N passed, N failed" last; exits non-zero on a failure.
 */
#include "pr_gpu.h"
#include "pr_graph_flat.h"
#include "graph_gen.h"
#include "test_harness.h"

#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

/* The CPU build's flat bytes (in-edges only). */
static std::vector<char>
cpu_flat(const std::vector<int64_t> &src, const std::vector<int64_t> &dst, bool undirected)
{
	PrBuildOptions opts;
	PrGraph		g;
	PrError		err = {};
	std::vector<char> flat;

	memset(&opts, 0, sizeof(opts));
	opts.undirected = undirected;
	opts.n_threads = 4;
	if (pr_graph_build(src.data(), dst.data(), NULL, src.size(), &opts, &pr_malloc_allocator, &g,
					   &err) != PR_OK)
	{
		printf("cpu build failed: %s\n", err.message);
		exit(2);
	}
	flat.resize(pr_graph_flat_size(&g));
	pr_graph_write_flat(&g, flat.data());
	pr_graph_free(&g, &pr_malloc_allocator);
	return flat;
}

/* Builds on the GPU into an 8-aligned buffer of capacity bytes and compares with the CPU. */
static void
run_case(const char *name, const std::vector<int64_t> &src, const std::vector<int64_t> &dst,
		 bool undirected)
{
	std::vector<char> expected = cpu_flat(src, dst, undirected);
	std::vector<uint64_t> out(expected.size() / 8 + 2, 0x5a5a5a5a5a5a5a5aull);
	PrGpuBuildReport report;
	PrError		err = {};
	PrStatus	st;
	char		label[160];

	st = pr_gpu_build_flat(0, src.data(), dst.data(), src.size(), undirected, out.data(),
						   out.size() * 8, 3, &report, &err);
	snprintf(label, sizeof(label), "%s (%s)", name, undirected ? "undirected" : "directed");
	if (st != PR_OK)
	{
		printf("  %s: %s\n", label, err.message);
		test_record(false, "FAILED %s: build failed", label);
		return;
	}
	test_record(report.flat_size == expected.size(), "FAILED %s: flat size differs", label);
	test_record(memcmp(out.data(), expected.data(), expected.size()) == 0, "FAILED %s: flat bytes differ",
				label);

	/* too small: TOO_LARGE, the needed size reported, nothing written */
	{
		std::vector<uint64_t> small(expected.size() / 8 - 1, 0x77);
		PrGpuBuildReport r2;

		st = pr_gpu_build_flat(0, src.data(), dst.data(), src.size(), undirected, small.data(),
							   small.size() * 8, 2, &r2, &err);
		bool		untouched = true;

		for (uint64_t v : small)
			untouched = untouched && v == 0x77;
		test_record(st == PR_ERR_TOO_LARGE && r2.flat_size == expected.size() && untouched,
					"FAILED %s: a too small buffer is not refused cleanly", label);
	}
}

/* The engine's layout: rows at the start of the buffer, the flat form written over them. */
static void
run_in_place_case(const std::vector<int64_t> &src, const std::vector<int64_t> &dst)
{
	std::vector<char> expected = cpu_flat(src, dst, false);
	size_t		m = src.size();
	size_t		words = 2 * m > expected.size() / 8 + 1 ? 2 * m : expected.size() / 8 + 1;
	std::vector<int64_t> buf(words);
	PrGpuBuildReport report;
	PrError		err = {};

	memcpy(buf.data(), src.data(), m * 8);
	memcpy(buf.data() + m, dst.data(), m * 8);
	PrStatus	st = pr_gpu_build_flat(0, buf.data(), buf.data() + m, m, false, buf.data(),
									   words * 8, 4, &report, &err);

	test_record(st == PR_OK && memcmp(buf.data(), expected.data(), expected.size()) == 0,
				"FAILED in place: the flat form written over its own rows differs");
}

/* Random rows: skewed (R-MAT a = .57, b = c = .19) or uniform over 2^scale ids, then mapped. */
static void
random_rows(int scale, size_t m, bool skewed, uint64_t spread, int64_t offset, uint64_t seed,
			std::vector<int64_t> *src, std::vector<int64_t> *dst)
{
	GenSpec		spec = skewed ? gen_rmat(scale, (int64_t) m, seed, false)
		: gen_uniform((int64_t) 1 << scale, (int64_t) m, seed);

	src->resize(m);
	dst->resize(m);
	gen_edges(&spec, src->data(), dst->data(), 0);
	for (size_t i = 0; i < m; i++)
	{
		(*src)[i] = (int64_t) ((uint64_t) (*src)[i] * spread) + offset;
		(*dst)[i] = (int64_t) ((uint64_t) (*dst)[i] * spread) + offset;
	}
}

/* Times the GPU build of an R-MAT graph against the CPU build (16 threads). */
static void
time_rmat(int scale)
{
	std::vector<int64_t> src, dst;
	PrGpuBuildReport report;
	PrError		err = {};
	size_t		m = (size_t) 16 << scale;
	PrBuildOptions opts;
	PrGraph		g;

	random_rows(scale, m, true, 1, 0, 42, &src, &dst);
	std::vector<int64_t> buf(2 * m);

	for (int rep = 0; rep < 3; rep++)
	{
		memcpy(buf.data(), src.data(), m * 8);
		memcpy(buf.data() + m, dst.data(), m * 8);
		if (pr_gpu_build_flat(0, buf.data(), buf.data() + m, m, false, buf.data(), 2 * m * 8, 16,
							  &report, &err) != PR_OK)
		{
			test_record(false, "timed build failed: %s", err.message);
			return;
		}
		printf("R-MAT %d, %zu rows, %lld nodes: GPU build %.3f s (upload %.3f, ids %.3f%s, sort %.3f, download %.3f)\n",
			   scale, m, (long long) report.n_nodes, report.total_seconds, report.upload_seconds,
			   report.ids_seconds, report.dense_ids ? " table" : " sorted", report.sort_seconds,
			   report.download_seconds);
	}
	memset(&opts, 0, sizeof(opts));
	opts.n_threads = 16;
	double		t0 = pr_clock_seconds();

	if (pr_graph_build(src.data(), dst.data(), NULL, m, &opts, &pr_malloc_allocator, &g, &err) == PR_OK)
	{
		double		t1 = pr_clock_seconds();
		std::vector<char> flat(pr_graph_flat_size(&g));

		pr_graph_write_flat_threads(&g, flat.data(), 16);
		printf("R-MAT %d: CPU build %.3f s + flat copy %.3f s (16 threads); GPU flat %s\n", scale,
			   t1 - t0, pr_clock_seconds() - t1,
			   memcmp(flat.data(), buf.data(), flat.size()) == 0 ? "identical" : "DIFFERS");
		test_record(memcmp(flat.data(), buf.data(), flat.size()) == 0, "FAILED R-MAT timed: timed build differs");
		pr_graph_free(&g, &pr_malloc_allocator);
	}
}

int
main(int argc, char **argv)
{
	std::vector<int64_t> src, dst;

	/* hand graph: duplicates, self-loops, negative and extreme ids, an isolated-looking hub */
	{
		std::vector<int64_t> s = {5, 5, 5, -3, 7, 7, INT64_MAX, INT64_MIN, 0, 5, 9, 9};
		std::vector<int64_t> d = {7, 7, 5, 5, -3, 9, 0, INT64_MAX, 0, -3, 9, 7};

		run_case("hand", s, d, false);
		run_case("hand", s, d, true);
	}
	{
		std::vector<int64_t> s = {42}, d = {43};

		run_case("one row", s, d, false);
		run_case("one row", s, d, true);
		s[0] = 42;
		d[0] = 42;
		run_case("one self-loop", s, d, true);
	}
	for (int undirected = 0; undirected < 2; undirected++)
	{
		random_rows(10, 20000, true, 1, 0, 1, &src, &dst);
		run_case("R-MAT 10, dense ids", src, dst, undirected);
		random_rows(12, 70000, true, 3, -5000, 2, &src, &dst);
		run_case("R-MAT 12, ids 3 apart from -5000", src, dst, undirected);
		random_rows(14, 250000, true, 0x9E3779B97F4A7C15ull, 11, 3, &src, &dst);
		run_case("R-MAT 14, ids over int64", src, dst, undirected);
		random_rows(16, 300000, false, 1, 1000000, 4, &src, &dst);
		run_case("uniform 16, sparse rows", src, dst, undirected);
		random_rows(8, 400000, false, 7, 0, 5, &src, &dst);
		run_case("uniform 8, many duplicates", src, dst, undirected);
	}
	random_rows(17, 2000000, true, 1, 0, 6, &src, &dst);
	run_in_place_case(src, dst);
	if (argc > 2 && strcmp(argv[1], "--time") == 0)
		time_rmat(atoi(argv[2]));
	return test_summary();
}
