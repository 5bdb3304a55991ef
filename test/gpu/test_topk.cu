/*
 * test_topk.cu — pr_gpu_topk on the device against two host rankings of the same values: a
 * std::stable_sort by (value descending, id ascending, NaN last, -0 = +0) and the core's pr_top_k
 * (the CPU engine's order).  Random data full of ties (a few distinct values), NaN, +-0, +-inf,
 * a random private order (new_to_old), several columns, float and double, top_k from 1 to beyond
 * n, one workspace kept across sizes (grown) and calls without one; scores spread over decades (few
 * ties), where columns of 4096 and more take the candidate filter of pr_gpu_topk.cu, as the tied
 * data does for a small top_k (its top digit holds a few percent of the keys).  Then the time of one call on
 * an R-MAT 24-sized vector (8.87 M nodes).  Needs a GPU:
 *
 *   make -C cuda check-topk        (builds build/test_topk and runs it)
 *
 * Prints one line per failed case and "N passed, N failed" last; exits non-zero on a failure.
 */
#include "pr_gpu_topk.h"
#include "pr_driver.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include "graph_gen.h"
#include "test_harness.h"

/* Exits on a failed CUDA call of the test itself. */
#define CHECK_CUDA(call) do { \
	cudaError_t st_ = (call); \
	if (st_ != cudaSuccess) \
	{ \
		fprintf(stderr, "%s failed: %s (%s:%d)\n", #call, cudaGetErrorString(st_), __FILE__, __LINE__); \
		exit(2); \
	} \
} while (0)

/* A value with many ties: one of a few scores, sometimes NaN, -0, +0 or an infinity. */
static double
tied_value(uint64_t *state, bool specials)
{
	uint64_t	r = gen_random(state) % 1000;

	if (specials)
	{
		if (r < 10)
			return NAN;
		if (r < 20)
			return -0.0;
		if (r < 30)
			return 0.0;
		if (r < 33)
			return INFINITY;
		if (r < 36)
			return -INFINITY;
		if (r < 60)
			return -(double) (r % 7) / 8.0;
	}
	return (double) (gen_random(state) % 13) / 16.0 + (r % 3 == 0 ? 1e-3 : 0.0);
}

/* A value like a PageRank / RWR score: spread over a few decades, few ties. */
static double
spread_value(uint64_t *state)
{
	return (double) (gen_random(state) % 1000003 + 1) * 1e-9 * (double) (1 + gen_random(state) % 1000);
}

/* True when a ranks before b: larger first, NaN last, -0 = +0, then the smaller id. */
static bool
host_ranks_before(double va, double vb, int32_t a, int32_t b)
{
	bool		na = va != va,
				nb = vb != vb;

	if (na || nb)
	{
		if (na && nb)
			return a < b;
		return nb;
	}
	if (va != vb)
		return va > vb;
	return a < b;
}

/* Bits equal, or both NaN. */
static bool
same_value(double a, double b)
{
	if (a != a || b != b)
		return a != a && b != b;
	return memcmp(&a, &b, sizeof(double)) == 0;
}

/* Copies a case's vector and private order to the device (the caller frees both). */
template <typename T>
static void
upload_case(const std::vector<T> &x, const std::vector<int32_t> &new_to_old, int64_t n, T **d_x,
			int32_t **d_new_to_old)
{
	CHECK_CUDA(cudaMalloc(d_x, x.size() * sizeof(T)));
	CHECK_CUDA(cudaMalloc(d_new_to_old, (size_t) (n > 0 ? n : 1) * sizeof(int32_t)));
	CHECK_CUDA(cudaMemcpy(*d_x, x.data(), x.size() * sizeof(T), cudaMemcpyHostToDevice));
	if (n > 0)
		CHECK_CUDA(cudaMemcpy(*d_new_to_old, new_to_old.data(), (size_t) n * sizeof(int32_t),
							  cudaMemcpyHostToDevice));
}

/*
 * One case: n values (type T) in column col of k_cols, private order a random permutation;
 * checks pr_gpu_topk's ids and values against both host rankings.
 */
template <typename T>
static void
run_case(const char *name, int64_t n, int k_cols, int col, int64_t top_k, bool specials,
		 PrGpuTopkWorkspace **ws, cudaStream_t stream, uint64_t seed, bool spread = false)
{
	uint64_t	state = seed;
	std::vector<double> by_id((size_t) n);	/* the column's value of each internal id, as T */
	std::vector<int32_t> new_to_old((size_t) n);
	std::vector<T> x((size_t) (n + 1) * k_cols);
	std::vector<int32_t> order((size_t) n);
	std::vector<int32_t> heap_order((size_t) n);
	int64_t		count = top_k < n ? top_k : n;
	std::vector<int32_t> got_index((size_t) (count > 0 ? count : 1));
	std::vector<double> got_value((size_t) (count > 0 ? count : 1));
	T		   *d_x = NULL;
	int32_t    *d_new_to_old = NULL;
	PrError		err;
	PrStatus	st;
	bool		ok = true;
	const char *why = "";

	for (int64_t i = 0; i < n; i++)
	{
		by_id[i] = (double) (T) (spread ? spread_value(&state) : tied_value(&state, specials));
		new_to_old[i] = (int32_t) i;
	}
	for (int64_t i = n - 1; i > 0; i--)
		std::swap(new_to_old[i], new_to_old[gen_random(&state) % (uint64_t) (i + 1)]);
	for (int64_t p = 0; p <= n; p++)
		for (int j = 0; j < k_cols; j++)
			x[(size_t) (p * k_cols + j)] = (T) (p < n && j == col ? by_id[new_to_old[p]]
												 : tied_value(&state, specials));

	/* host ranking 1: a stable sort */
	for (int64_t i = 0; i < n; i++)
		order[i] = (int32_t) i;
	std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
		return host_ranks_before(by_id[a], by_id[b], a, b);
	});
	/* host ranking 2: the CPU engine's pr_top_k */
	if (n > 0)
		pr_top_k(by_id.data(), n, 1, 0, count, heap_order.data(), &pr_malloc_allocator);

	upload_case(x, new_to_old, n, &d_x, &d_new_to_old);
	memset(&err, 0, sizeof(err));
	st = pr_gpu_topk(ws, d_x, sizeof(T) == 8, n, k_cols, col, d_new_to_old, top_k, (void *) stream,
					 got_index.data(), got_value.data(), &err);
	if (st != PR_OK)
	{
		ok = false;
		why = err.message;
	}
	for (int64_t i = 0; ok && i < count; i++)
	{
		if (got_index[i] != order[i])
		{
			ok = false;
			why = "ids differ from the stable sort";
		}
		else if (got_index[i] != heap_order[i])
		{
			ok = false;
			why = "ids differ from pr_top_k";
		}
		else if (!same_value(got_value[i], by_id[order[i]]))
		{
			ok = false;
			why = "values differ";
		}
	}
	test_record(ok, "FAIL %s (%s, n %lld, column %d of %d, top_k %lld): %s", name,
				sizeof(T) == 8 ? "fp64" : "fp32", (long long) n, col, k_cols, (long long) top_k, why);
	CHECK_CUDA(cudaFree(d_x));
	CHECK_CUDA(cudaFree(d_new_to_old));
}

/*
 * Every column at once (pr_gpu_topk_columns): k_cols columns of n values whose kinds cycle
 * through spread (the candidate path), plain ties and, with specials, NaN / +-0 / +-inf (many ties
 * at the cut: the per-column fallback); each column's ids and values against pr_top_k.
 */
template <typename T>
static void
run_columns_case(const char *name, int64_t n, int k_cols, int64_t top_k, bool specials,
				 PrGpuTopkWorkspace **ws, cudaStream_t stream, uint64_t seed)
{
	uint64_t	state = seed;
	int64_t		count = top_k < n ? top_k : n;
	std::vector<int32_t> new_to_old((size_t) n);
	std::vector<T> x((size_t) (n + 1) * k_cols);
	std::vector<double> by_id((size_t) n);
	std::vector<int32_t> want((size_t) (count > 0 ? count : 1));
	std::vector<int32_t> got_index((size_t) (count > 0 ? count : 1) * k_cols);
	std::vector<double> got_value((size_t) (count > 0 ? count : 1) * k_cols);
	T		   *d_x = NULL;
	int32_t    *d_new_to_old = NULL;
	PrError		err;
	bool		ok = true;
	const char *why = "";
	int			bad_col = -1;

	for (int64_t i = 0; i < n; i++)
		new_to_old[i] = (int32_t) i;
	for (int64_t i = n - 1; i > 0; i--)
		std::swap(new_to_old[i], new_to_old[gen_random(&state) % (uint64_t) (i + 1)]);
	for (int64_t p = 0; p <= n; p++)
		for (int j = 0; j < k_cols; j++)
			x[(size_t) (p * k_cols + j)] = (T) (j % 3 == 0 ? spread_value(&state)
												: tied_value(&state, specials && j % 3 == 2));
	upload_case(x, new_to_old, n, &d_x, &d_new_to_old);
	memset(&err, 0, sizeof(err));
	if (pr_gpu_topk_columns(ws, d_x, sizeof(T) == 8, n, k_cols, d_new_to_old, top_k, (void *) stream,
							got_index.data(), got_value.data(), &err) != PR_OK)
	{
		ok = false;
		why = err.message;
	}
	for (int j = 0; ok && j < k_cols && n > 0; j++)
	{
		for (int64_t p = 0; p < n; p++)
			by_id[new_to_old[p]] = (double) x[(size_t) (p * k_cols + j)];
		pr_top_k(by_id.data(), n, 1, 0, count, want.data(), &pr_malloc_allocator);
		for (int64_t i = 0; ok && i < count; i++)
		{
			if (got_index[(size_t) j * count + i] != want[i])
				why = "ids differ from pr_top_k";
			else if (!same_value(got_value[(size_t) j * count + i], by_id[want[i]]))
				why = "values differ";
			else
				continue;
			ok = false;
			bad_col = j;
		}
	}
	test_record(ok, "FAIL %s (%s, n %lld, %d columns, top_k %lld, column %d): %s", name,
				sizeof(T) == 8 ? "fp64" : "fp32", (long long) n, k_cols, (long long) top_k, bad_col, why);
	CHECK_CUDA(cudaFree(d_x));
	CHECK_CUDA(cudaFree(d_new_to_old));
}

/* Bad arguments are refused without touching the device. */
static void
run_bad_arguments(cudaStream_t stream)
{
	int32_t		index[1];
	double		value[1];
	PrError		err;
	bool		ok = true;

	ok &= pr_gpu_topk(NULL, NULL, false, 10, 1, 0, NULL, 1, (void *) stream, index, value, &err) == PR_ERR_INVALID;
	ok &= pr_gpu_topk(NULL, value, false, 10, 2, 2, (const int32_t *) index, 1, (void *) stream, index, value, &err) == PR_ERR_INVALID;
	ok &= pr_gpu_topk(NULL, value, false, 10, 1, 0, (const int32_t *) index, 0, (void *) stream, index, value, &err) == PR_ERR_INVALID;
	ok &= pr_gpu_topk(NULL, NULL, false, 0, 1, 0, NULL, 5, (void *) stream, index, value, &err) == PR_OK;
	ok &= pr_gpu_topk_columns(NULL, value, false, 10, 1, (const int32_t *) index, 1, (void *) stream, index, value, &err) == PR_ERR_INVALID;
	test_record(ok, "FAIL bad arguments");
}

/* Milliseconds of one call (best of 5) on n random floats, workspace kept. */
static void
time_call(int64_t n, int64_t top_k, cudaStream_t stream)
{
	std::vector<float> x((size_t) n + 1);
	std::vector<int32_t> perm((size_t) n);
	std::vector<int32_t> index((size_t) top_k);
	std::vector<double> value((size_t) top_k);
	uint64_t	state = 99;
	float	   *d_x;
	int32_t    *d_perm;
	PrGpuTopkWorkspace *ws = NULL;
	PrError		err;
	double		best = 1e30;

	for (int64_t i = 0; i < n; i++)
	{
		x[i] = (float) (gen_random(&state) % 1000000) * 1e-7f;
		perm[i] = (int32_t) i;
	}
	for (int64_t i = n - 1; i > 0; i--)
		std::swap(perm[i], perm[gen_random(&state) % (uint64_t) (i + 1)]);
	CHECK_CUDA(cudaMalloc(&d_x, x.size() * sizeof(float)));
	CHECK_CUDA(cudaMalloc(&d_perm, perm.size() * sizeof(int32_t)));
	CHECK_CUDA(cudaMemcpy(d_x, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));
	CHECK_CUDA(cudaMemcpy(d_perm, perm.data(), perm.size() * sizeof(int32_t), cudaMemcpyHostToDevice));
	for (int rep = 0; rep < 6; rep++)
	{
		double		t0 = pr_clock_seconds();

		if (pr_gpu_topk(&ws, d_x, false, n, 1, 0, d_perm, top_k, (void *) stream, index.data(),
						value.data(), &err) != PR_OK)
		{
			test_record(false, "FAIL timing call: %s", err.message);
			break;
		}
		if (rep > 0 && pr_clock_seconds() - t0 < best)
			best = pr_clock_seconds() - t0;
	}
	printf("time: n %lld, top_k %lld, fp32: %.3f ms per call (best of 5, workspace %.1f MB kept)\n",
		   (long long) n, (long long) top_k, best * 1e3, pr_gpu_topk_workspace_bytes(ws) / 1e6);
	pr_gpu_topk_free(ws);
	CHECK_CUDA(cudaFree(d_x));
	CHECK_CUDA(cudaFree(d_perm));
}

/* Runs every case. */
/* Milliseconds (best of 5) of the top 10 of 8 columns of n spread floats: pr_gpu_topk column by
 * column against pr_gpu_topk_columns, workspace kept. */
static void
time_columns_call(int64_t n, int k_cols, int64_t top_k, cudaStream_t stream)
{
	std::vector<float> x((size_t) (n + 1) * k_cols);
	std::vector<int32_t> perm((size_t) n);
	std::vector<int32_t> index((size_t) top_k * k_cols);
	std::vector<double> value((size_t) top_k * k_cols);
	uint64_t	state = 77;
	float	   *d_x;
	int32_t    *d_perm;
	PrGpuTopkWorkspace *ws = NULL;
	PrError		err;
	double		best[2] = {1e30, 1e30};

	for (size_t i = 0; i < x.size(); i++)
		x[i] = (float) spread_value(&state);
	for (int64_t i = 0; i < n; i++)
		perm[i] = (int32_t) i;
	CHECK_CUDA(cudaMalloc(&d_x, x.size() * sizeof(float)));
	CHECK_CUDA(cudaMalloc(&d_perm, (size_t) n * sizeof(int32_t)));
	CHECK_CUDA(cudaMemcpy(d_x, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));
	CHECK_CUDA(cudaMemcpy(d_perm, perm.data(), (size_t) n * sizeof(int32_t), cudaMemcpyHostToDevice));
	for (int rep = 0; rep < 6; rep++)
		for (int way = 0; way < 2; way++)
		{
			double		t0 = pr_clock_seconds();
			PrStatus	st = PR_OK;

			if (way == 0)
				for (int j = 0; j < k_cols && st == PR_OK; j++)
					st = pr_gpu_topk(&ws, d_x, false, n, k_cols, j, d_perm, top_k, (void *) stream,
									 index.data() + j * top_k, value.data() + j * top_k, &err);
			else
				st = pr_gpu_topk_columns(&ws, d_x, false, n, k_cols, d_perm, top_k, (void *) stream,
										 index.data(), value.data(), &err);
			if (st != PR_OK)
			{
				test_record(false, "FAIL timing call: %s", err.message);
				break;
			}
			if (rep > 0)
				best[way] = fmin(best[way], (pr_clock_seconds() - t0) * 1e3);
		}
	printf("# top %lld of %d columns of %lld floats: column by column %.3f ms, all columns at once %.3f ms\n",
		   (long long) top_k, k_cols, (long long) n, best[0], best[1]);
	pr_gpu_topk_free(ws);
	CHECK_CUDA(cudaFree(d_x));
	CHECK_CUDA(cudaFree(d_perm));
}

int
main(void)
{
	const int64_t sizes[] = {1, 2, 7, 1000, 4099, 100003, (1 << 20) + 3};
	PrGpuTopkWorkspace *ws = NULL;
	cudaStream_t stream;
	int			count = 0;

	if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0)
	{
		test_record(false, "no CUDA device");
		return test_summary();
	}
	CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
	run_bad_arguments(stream);
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
	{
		int64_t		n = sizes[s];
		const int64_t top_ks[] = {1, 10, 100, n - 1 > 0 ? n - 1 : 1, n, n + 5};

		for (size_t t = 0; t < sizeof(top_ks) / sizeof(top_ks[0]); t++)
		{
			uint64_t	seed = 1000 * s + t;

			/* kept workspace (grows with n, shrinks never), plain ties, one column */
			run_case<float>("kept workspace", n, 1, 0, top_ks[t], false, &ws, stream, seed);
			run_case<double>("kept workspace", n, 1, 0, top_ks[t], false, &ws, stream, seed);
			/* NaN, +-0, +-inf, 3 columns: middle and last */
			run_case<float>("specials", n, 3, 1, top_ks[t], true, &ws, stream, seed + 7);
			run_case<double>("specials", n, 3, 2, top_ks[t], true, &ws, stream, seed + 7);
			/* scores spread over decades (the candidate filter's usual case), 8 columns */
			run_case<float>("spread", n, 8, 5, top_ks[t], false, &ws, stream, seed + 21, true);
			run_case<double>("spread", n, 8, 0, top_ks[t], false, &ws, stream, seed + 21, true);
			/* every column at once: 1, 5, 8 and 11 columns (two histogram groups) */
			run_columns_case<float>("columns", n, 8, top_ks[t], true, &ws, stream, seed + 31);
			run_columns_case<double>("columns", n, 5, top_ks[t], true, &ws, stream, seed + 37);
			if (t % 2 == 1)
			{
				run_columns_case<float>("columns", n, 11, top_ks[t], false, &ws, stream, seed + 41);
				run_columns_case<double>("columns", n, 1, top_ks[t], true, &ws, stream, seed + 43);
			}
			/* scratch allocated and freed per call */
			if (t % 2 == 0)
				run_case<float>("per-call workspace", n, 2, 1, top_ks[t], true, NULL, stream,
								seed + 13);
		}
	}
	/* a smaller vector after the largest: the kept workspace is reused as is */
	run_case<double>("reuse after growth", 50, 4, 3, 20, true, &ws, stream, 4242);
	pr_gpu_topk_free(ws);
	time_call(8870942, 100, stream);
	time_call(8870942, 10, stream);
	time_columns_call(8870942, 8, 10, stream);
	CHECK_CUDA(cudaStreamDestroy(stream));
	return test_summary();
}
