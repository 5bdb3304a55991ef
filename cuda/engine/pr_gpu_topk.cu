/*
 * pr_gpu_topk.cu — the top_k best entries of one column of a device vector (see pr_gpu_topk.h).
 *
 * Steps on the caller's stream: a scatter kernel writes, for every internal id, the
 * order-preserving unsigned key of its score and its private position; cub::DeviceRadixSort sorts
 * the (key, position) pairs descending — stable, and the input is in id order, so equal scores
 * stay ordered by id; a gather kernel turns the first top_k positions into (id, value) pairs, which
 * are copied to the host.
 *
 * Candidates first (n >= TOPK_FILTER_MIN): a histogram of the keys' top TOPK_DIGIT_BITS bits tells
 * the digit d of the top_k-th best key (the largest d with at least top_k keys whose digit is >= d);
 * every key ranking at or above it has a digit >= d, ties included.  When those candidates are few
 * (at most n / TOPK_FILTER_SHARE), cub::DeviceSelect::If keeps their ids in id order (stable) and
 * only they are sorted: one pass over the keys and a copy of the 8 kB histogram replace a radix
 * sort of all n pairs (4 passes of n x 8 bytes read and written in fp32).  Scores of PageRank and
 * RWR sum to 1, so few of them are large: the interactive top 10 of a batch of RWR columns sorts a
 * few hundred candidates per column.  Many ties at the cut (more candidates) take the full sort.
 */
#include "pr_gpu_topk.h"
#include "pr_gpu_launch.h"
#include "pr_gpu_status.h"
#include "pr_gpu_buffer.h"
#include "pr_gpu_topk_kernels.cuh"

#include <cuda_runtime.h>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

/* Threads per block of the two kernels. */
#define TOPK_THREADS 256

/* Most blocks of a grid-stride kernel. */
#define TOPK_MAX_BLOCKS 4096

/* Columns shorter than this are sorted whole. */
#define TOPK_FILTER_MIN 4096

/* Candidates are sorted alone when at most n / TOPK_FILTER_SHARE of them. */
#define TOPK_FILTER_SHARE 4

/* Records a failed CUDA call in err and returns its status from the enclosing function. */
#define TOPK_CUDA(call) PR_CUDA_OR_RETURN("GPU top-k", call)

/* One device buffer and its size in bytes. */
typedef struct TopkBuffer
{
	void	   *ptr;
	size_t		bytes;
} TopkBuffer;

/* The scratch memory (see pr_gpu_topk.h). */
struct PrGpuTopkWorkspace
{
	TopkBuffer	keys[2];		/* sort keys, double-buffered */
	TopkBuffer	pos[2];			/* private positions, double-buffered */
	TopkBuffer	temp;			/* CUB's temporary storage */
	TopkBuffer	out;			/* top_k ids, then top_k values (8-byte aligned) */
	TopkBuffer	hist;			/* digit histogram (TOPK_BINS counters), then the selected count */
	unsigned int *host_hist;	/* its host copy (malloc) */
};

/* Blocks of a grid-stride launch over items. */
static unsigned int
topk_grid(int64_t items)
{
	return pr_grid_blocks(items, TOPK_THREADS, TOPK_MAX_BLOCKS);
}

/* Makes buf at least bytes long (its old content is dropped when it grows). */
static PrStatus
topk_reserve(TopkBuffer *buf, size_t bytes, PrError *err)
{
	return pr_gpu_buffer_reserve(&buf->ptr, &buf->bytes, bytes, "GPU top-k", err);
}

/* Frees one buffer; the first failure goes to err (when err has no error yet). */
static void
topk_release(TopkBuffer *buf, PrError *err, bool *failed)
{
	if (buf->ptr != NULL)
	{
		cudaError_t st = cudaFree(buf->ptr);

		if (st != cudaSuccess && !*failed)
		{
			pr_error_set(err, PR_ERR_ENGINE, "GPU top-k: cudaFree failed: %s",
						 cudaGetErrorString(st));
			*failed = true;
		}
	}
	buf->ptr = NULL;
	buf->bytes = 0;
}

/* Frees every buffer of a workspace (not the struct); false when a cudaFree failed. */
static bool
topk_release_all(PrGpuTopkWorkspace *ws, PrError *err)
{
	bool		failed = false;

	topk_release(&ws->keys[0], err, &failed);
	topk_release(&ws->keys[1], err, &failed);
	topk_release(&ws->pos[0], err, &failed);
	topk_release(&ws->pos[1], err, &failed);
	topk_release(&ws->temp, err, &failed);
	topk_release(&ws->out, err, &failed);
	topk_release(&ws->hist, err, &failed);
	free(ws->host_hist);
	ws->host_hist = NULL;
	return !failed;
}

/*
 * The candidates of the top count keys (see the file comment): the digit histogram, copied to the
 * host.  Sets *digit and *candidates (keys whose digit is >= *digit); the histogram shows every key.
 */
template <typename K>
static PrStatus
topk_count_candidates(PrGpuTopkWorkspace *ws, const K *keys, int64_t n, int64_t count,
					  cudaStream_t stream, unsigned int *digit, int64_t *candidates, PrError *err)
{
	const int	shift = (int) (sizeof(K) * 8) - TOPK_DIGIT_BITS;
	unsigned int *hist = (unsigned int *) ws->hist.ptr;
	int64_t		sum = 0;

	if (ws->host_hist == NULL &&
		(ws->host_hist = (unsigned int *) malloc(sizeof(unsigned int) * TOPK_BINS)) == NULL)
		return pr_error_set(err, PR_ERR_NOMEM, "GPU top-k: out of host memory");
	TOPK_CUDA(cudaMemsetAsync(hist, 0, sizeof(unsigned int) * TOPK_BINS, stream));
	k_topk_histogram<K><<<topk_grid(n), TOPK_THREADS, 0, stream>>>(n, keys, shift, hist);
	TOPK_CUDA(cudaGetLastError());
	TOPK_CUDA(cudaMemcpyAsync(ws->host_hist, hist, sizeof(unsigned int) * TOPK_BINS,
							  cudaMemcpyDeviceToHost, stream));
	TOPK_CUDA(cudaStreamSynchronize(stream));
	for (int b = TOPK_BINS - 1; b >= 0; b--)
	{
		sum += ws->host_hist[b];
		if (sum >= count || b == 0)
		{
			*digit = (unsigned int) b;
			break;
		}
	}
	*candidates = sum;
	return PR_OK;
}

/* The steps for vectors of T, with sort keys K (see the file comment). */
template <typename T, typename K>
static PrStatus
topk_typed(PrGpuTopkWorkspace *ws, const T *x, int64_t n, int k_cols, int col,
		   const int32_t *new_to_old, int64_t count, cudaStream_t stream, int32_t *host_index,
		   double *host_value, PrError *err)
{
	size_t		temp_bytes = 0;
	size_t		select_bytes = 0;
	size_t		index_bytes = ((size_t) count * sizeof(int32_t) + 7) & ~(size_t) 7;
	int64_t		sorted = n;		/* pairs sorted: all n, or the candidates */
	PrStatus	st;

	if ((st = topk_reserve(&ws->keys[0], (size_t) n * sizeof(K), err)) != PR_OK ||
		(st = topk_reserve(&ws->keys[1], (size_t) n * sizeof(K), err)) != PR_OK ||
		(st = topk_reserve(&ws->pos[0], (size_t) n * sizeof(int32_t), err)) != PR_OK ||
		(st = topk_reserve(&ws->pos[1], (size_t) n * sizeof(int32_t), err)) != PR_OK ||
		(st = topk_reserve(&ws->out, index_bytes + (size_t) count * sizeof(double), err)) != PR_OK ||
		(st = topk_reserve(&ws->hist, sizeof(unsigned int) * TOPK_BINS + sizeof(int64_t), err)) != PR_OK)
		return st;
	{
		K		   *all_keys = (K *) ws->keys[0].ptr;
		int32_t    *all_pos = (int32_t *) ws->pos[0].ptr;
		cub::DoubleBuffer<K> keys(all_keys, (K *) ws->keys[1].ptr);
		cub::DoubleBuffer<int32_t> pos(all_pos, (int32_t *) ws->pos[1].ptr);
		int32_t    *out_index = (int32_t *) ws->out.ptr;
		double	   *out_value = (double *) ((char *) ws->out.ptr + index_bytes);

		k_topk_scatter<T, K><<<topk_grid(n), TOPK_THREADS, 0, stream>>>(n, k_cols, col, x, new_to_old,
																		all_keys, all_pos);
		TOPK_CUDA(cudaGetLastError());
		if (n >= TOPK_FILTER_MIN)
		{
			unsigned int digit = 0;
			int64_t		candidates = n;

			if ((st = topk_count_candidates<K>(ws, all_keys, n, count, stream, &digit,
											   &candidates, err)) != PR_OK)
				return st;
			if (candidates <= n / TOPK_FILTER_SHARE)
			{
				/* ids of the candidates in pos[1][0..c), their keys and positions in keys[1] and
				 * pos[1][c..2c): then the sort's alternate buffers are keys[0] and pos[0] */
				TopkDigitAtLeast<K> pred = {all_keys, (int) (sizeof(K) * 8) - TOPK_DIGIT_BITS, digit};
				int32_t    *ids = (int32_t *) ws->pos[1].ptr;
				int64_t    *d_selected = (int64_t *) ((char *) ws->hist.ptr + sizeof(unsigned int) * TOPK_BINS);
				thrust::counting_iterator<int32_t> every_id(0);

				TOPK_CUDA(cub::DeviceSelect::If(NULL, select_bytes, every_id, ids, d_selected, n, pred,
												stream));
				if ((st = topk_reserve(&ws->temp, select_bytes, err)) != PR_OK)
					return st;
				TOPK_CUDA(cub::DeviceSelect::If(ws->temp.ptr, select_bytes, every_id, ids, d_selected,
												n, pred, stream));
				k_topk_candidates<K><<<topk_grid(candidates), TOPK_THREADS, 0, stream>>>(
					candidates, ids, all_keys, all_pos, (K *) ws->keys[1].ptr, ids + candidates);
				TOPK_CUDA(cudaGetLastError());
				keys = cub::DoubleBuffer<K>((K *) ws->keys[1].ptr, all_keys);
				pos = cub::DoubleBuffer<int32_t>(ids + candidates, all_pos);
				sorted = candidates;
			}
		}
		TOPK_CUDA(cub::DeviceRadixSort::SortPairsDescending(NULL, temp_bytes, keys, pos, (int) sorted,
															0, (int) (sizeof(K) * 8), stream));
		if ((st = topk_reserve(&ws->temp, temp_bytes, err)) != PR_OK)
			return st;
		TOPK_CUDA(cub::DeviceRadixSort::SortPairsDescending(ws->temp.ptr, temp_bytes, keys, pos,
															(int) sorted, 0, (int) (sizeof(K) * 8),
															stream));
		k_topk_gather<T><<<topk_grid(count), TOPK_THREADS, 0, stream>>>(count, k_cols, col, x, new_to_old,
																		pos.Current(), out_index, out_value);
		TOPK_CUDA(cudaGetLastError());
		TOPK_CUDA(cudaMemcpyAsync(host_index, out_index, (size_t) count * sizeof(int32_t),
								  cudaMemcpyDeviceToHost, stream));
		TOPK_CUDA(cudaMemcpyAsync(host_value, out_value, (size_t) count * sizeof(double),
								  cudaMemcpyDeviceToHost, stream));
		TOPK_CUDA(cudaStreamSynchronize(stream));
	}
	return PR_OK;
}

/* See pr_gpu_topk.h. */
PrStatus
pr_gpu_topk(PrGpuTopkWorkspace **ws, const void *d_x, bool fp64, int64_t n, int k_cols, int col,
			const int32_t *d_new_to_old, int64_t top_k, void *stream, int32_t *host_index,
			double *host_value, PrError *err)
{
	PrGpuTopkWorkspace local;
	PrGpuTopkWorkspace *use;
	int64_t		count;
	PrStatus	st;

	if (n < 0 || n > INT_MAX || k_cols < 1 || col < 0 || col >= k_cols || top_k < 1 ||
		(n > 0 && (d_x == NULL || d_new_to_old == NULL || host_index == NULL || host_value == NULL)))
		return pr_error_set(err, PR_ERR_INVALID,
							"GPU top-k: bad arguments (n %lld, column %d of %d, top_k %lld)",
							(long long) n, col, k_cols, (long long) top_k);
	if (n == 0)
		return PR_OK;
	count = top_k < n ? top_k : n;
	if (ws == NULL)
	{
		memset(&local, 0, sizeof(local));
		use = &local;
	}
	else
	{
		if (*ws == NULL)
		{
			*ws = (PrGpuTopkWorkspace *) calloc(1, sizeof(PrGpuTopkWorkspace));
			if (*ws == NULL)
				return pr_error_set(err, PR_ERR_NOMEM, "GPU top-k: out of host memory");
		}
		use = *ws;
	}
	if (fp64)
		st = topk_typed<double, uint64_t>(use, (const double *) d_x, n, k_cols, col, d_new_to_old,
										  count, (cudaStream_t) stream, host_index, host_value, err);
	else
		st = topk_typed<float, uint32_t>(use, (const float *) d_x, n, k_cols, col, d_new_to_old,
										 count, (cudaStream_t) stream, host_index, host_value, err);
	if (ws == NULL)
	{
		/* per-call scratch: wait for the work before freeing (cudaFree does not order on stream) */
		cudaError_t sync = cudaStreamSynchronize((cudaStream_t) stream);

		if (sync != cudaSuccess && st == PR_OK)
			st = pr_error_set(err, PR_ERR_ENGINE, "GPU top-k: cudaStreamSynchronize failed: %s",
							  cudaGetErrorString(sync));
		if (!topk_release_all(&local, st == PR_OK ? err : NULL) && st == PR_OK)
			st = PR_ERR_ENGINE;
	}
	return st;
}

/* Candidates of one column kept for the host sort; a column with more takes pr_gpu_topk's path
 * (measured: with ~65 k candidates per column the host sort made 8 columns slower than 8 calls). */
#define TOPK_COLS_MAX_CANDIDATES 8192

/* One host candidate: its key, internal id and value. */
template <typename K>
struct TopkHostCandidate
{
	K			key;
	int32_t		id;
	double		value;
};

/* Host order of candidates: larger key first, then the smaller id (pr_top_k's order). */
template <typename K>
static int
topk_candidate_cmp(const void *a, const void *b)
{
	const TopkHostCandidate<K> *x = (const TopkHostCandidate<K> *) a,
			   *y = (const TopkHostCandidate<K> *) b;

	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* The steps of pr_gpu_topk_columns for vectors of T, keys K. */
template <typename T, typename K>
static PrStatus
topk_columns_typed(PrGpuTopkWorkspace *ws, const T *x, int64_t n, int k_cols,
				   const int32_t *new_to_old, int64_t count, cudaStream_t stream,
				   int32_t *host_index, double *host_value, PrError *err)
{
	size_t		hist_bytes = (size_t) k_cols * TOPK_COLS_BINS * sizeof(unsigned int);
	std::vector<unsigned int> hist((size_t) k_cols * TOPK_COLS_BINS);
	std::vector<unsigned int> digit((size_t) k_cols, UINT_MAX);
	std::vector<int64_t> candidates((size_t) k_cols, 0);
	int64_t		cap = 0;
	PrStatus	st;

	/* the histograms (and, behind them, the per-column digits and fill counters) */
	if ((st = topk_reserve(&ws->hist, hist_bytes + (size_t) k_cols * 2 * sizeof(unsigned int), err)) != PR_OK)
		return st;
	{
		unsigned int *d_hist = (unsigned int *) ws->hist.ptr;

		TOPK_CUDA(cudaMemsetAsync(d_hist, 0, hist_bytes, stream));
		for (int c0 = 0; c0 < k_cols; c0 += TOPK_COLS_GROUP)
		{
			int			g = k_cols - c0 < TOPK_COLS_GROUP ? k_cols - c0 : TOPK_COLS_GROUP;

			k_topk_col_histograms<T, K><<<topk_grid(n * g), TOPK_THREADS, 0, stream>>>(n, k_cols, c0, g, x, d_hist);
			TOPK_CUDA(cudaGetLastError());
		}
		TOPK_CUDA(cudaMemcpyAsync(hist.data(), d_hist, hist_bytes, cudaMemcpyDeviceToHost, stream));
		TOPK_CUDA(cudaStreamSynchronize(stream));
	}
	/* each column's cut digit: the largest with at least count keys at or above it */
	for (int j = 0; j < k_cols; j++)
	{
		int64_t		sum = 0;

		for (int b = TOPK_COLS_BINS - 1; b >= 0; b--)
		{
			sum += hist[(size_t) j * TOPK_COLS_BINS + b];
			if (sum >= count || b == 0)
			{
				digit[j] = (unsigned int) b;
				break;
			}
		}
		candidates[j] = sum;
		if (sum > TOPK_COLS_MAX_CANDIDATES)
			digit[j] = UINT_MAX;	/* too many ties or near-ties at the cut: pr_gpu_topk's path */
		else if (sum > cap)
			cap = sum;
	}
	if (cap > 0)
	{
		size_t		per = (size_t) k_cols * (size_t) cap;
		unsigned int *d_digit = (unsigned int *) ((char *) ws->hist.ptr + hist_bytes);
		unsigned int *d_fill = d_digit + k_cols;
		std::vector<K> keys(per);
		std::vector<int32_t> ids(per);
		std::vector<T> vals(per);
		std::vector<TopkHostCandidate<K> > sorted((size_t) cap);

		if ((st = topk_reserve(&ws->keys[0], per * sizeof(K), err)) != PR_OK ||
			(st = topk_reserve(&ws->pos[0], per * sizeof(int32_t), err)) != PR_OK ||
			(st = topk_reserve(&ws->keys[1], per * sizeof(T), err)) != PR_OK)
			return st;
		TOPK_CUDA(cudaMemcpyAsync(d_digit, digit.data(), (size_t) k_cols * sizeof(unsigned int),
								  cudaMemcpyHostToDevice, stream));
		TOPK_CUDA(cudaMemsetAsync(d_fill, 0, (size_t) k_cols * sizeof(unsigned int), stream));
		k_topk_col_candidates<T, K><<<topk_grid(n * k_cols), TOPK_THREADS, 0, stream>>>(
			n, k_cols, x, new_to_old, d_digit, cap, d_fill, (K *) ws->keys[0].ptr,
			(int32_t *) ws->pos[0].ptr, (T *) ws->keys[1].ptr);
		TOPK_CUDA(cudaGetLastError());
		TOPK_CUDA(cudaMemcpyAsync(keys.data(), ws->keys[0].ptr, per * sizeof(K), cudaMemcpyDeviceToHost, stream));
		TOPK_CUDA(cudaMemcpyAsync(ids.data(), ws->pos[0].ptr, per * sizeof(int32_t), cudaMemcpyDeviceToHost, stream));
		TOPK_CUDA(cudaMemcpyAsync(vals.data(), ws->keys[1].ptr, per * sizeof(T), cudaMemcpyDeviceToHost, stream));
		TOPK_CUDA(cudaStreamSynchronize(stream));
		for (int j = 0; j < k_cols; j++)
		{
			int64_t		c = candidates[j];

			if (digit[j] == UINT_MAX)
				continue;
			for (int64_t i = 0; i < c; i++)
			{
				size_t		at = (size_t) j * cap + i;

				sorted[i].key = keys[at];
				sorted[i].id = ids[at];
				sorted[i].value = (double) vals[at];
			}
			qsort(sorted.data(), (size_t) c, sizeof(TopkHostCandidate<K>), topk_candidate_cmp<K>);
			for (int64_t i = 0; i < count; i++)
			{
				host_index[(size_t) j * count + i] = sorted[i].id;
				host_value[(size_t) j * count + i] = sorted[i].value;
			}
		}
	}
	/* columns whose cut had too many candidates: one at a time, sorting on the device */
	for (int j = 0; j < k_cols; j++)
		if (digit[j] == UINT_MAX &&
			(st = topk_typed<T, K>(ws, x, n, k_cols, j, new_to_old, count, stream,
								   host_index + (size_t) j * count, host_value + (size_t) j * count,
								   err)) != PR_OK)
			return st;
	return PR_OK;
}

/* See pr_gpu_topk.h. */
PrStatus
pr_gpu_topk_columns(PrGpuTopkWorkspace **ws, const void *d_x, bool fp64, int64_t n, int k_cols,
					const int32_t *d_new_to_old, int64_t top_k, void *stream, int32_t *host_index,
					double *host_value, PrError *err)
{
	int64_t		count;

	if (ws == NULL || n < 0 || n > INT_MAX || k_cols < 1 || top_k < 1 ||
		(n > 0 && (d_x == NULL || d_new_to_old == NULL || host_index == NULL || host_value == NULL)))
		return pr_error_set(err, PR_ERR_INVALID,
							"GPU top-k: bad arguments (n %lld, %d columns, top_k %lld)",
							(long long) n, k_cols, (long long) top_k);
	if (n == 0)
		return PR_OK;
	count = top_k < n ? top_k : n;
	if (*ws == NULL)
	{
		*ws = (PrGpuTopkWorkspace *) calloc(1, sizeof(PrGpuTopkWorkspace));
		if (*ws == NULL)
			return pr_error_set(err, PR_ERR_NOMEM, "GPU top-k: out of host memory");
	}
	if (n < TOPK_FILTER_MIN)
	{
		/* short columns: sorted whole, one at a time */
		for (int j = 0; j < k_cols; j++)
		{
			PrStatus	st = pr_gpu_topk(ws, d_x, fp64, n, k_cols, j, d_new_to_old, top_k, stream,
										 host_index + (size_t) j * count,
										 host_value + (size_t) j * count, err);

			if (st != PR_OK)
				return st;
		}
		return PR_OK;
	}
	if (fp64)
		return topk_columns_typed<double, uint64_t>(*ws, (const double *) d_x, n, k_cols, d_new_to_old,
													count, (cudaStream_t) stream, host_index,
													host_value, err);
	return topk_columns_typed<float, uint32_t>(*ws, (const float *) d_x, n, k_cols, d_new_to_old,
											   count, (cudaStream_t) stream, host_index, host_value,
											   err);
}

/* See pr_gpu_topk.h. */
size_t
pr_gpu_topk_workspace_bytes(const PrGpuTopkWorkspace *ws)
{
	if (ws == NULL)
		return 0;
	return ws->keys[0].bytes + ws->keys[1].bytes + ws->pos[0].bytes + ws->pos[1].bytes +
		ws->temp.bytes + ws->out.bytes + ws->hist.bytes;
}

/* See pr_gpu_topk.h. */
void
pr_gpu_topk_free(PrGpuTopkWorkspace *ws)
{
	if (ws == NULL)
		return;
	(void) topk_release_all(ws, NULL);
	free(ws);
}
