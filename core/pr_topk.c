/*
 * pr_topk.c — the k best entries of a score column, with a k-sized heap kept in the output array.
 */
#include "pr_topk.h"

/*
 * True when entry a ranks before entry b: larger value first, ties to the smaller index; NaN
 * ranks after every number.
 */
static inline bool
ranks_before(const double *values, int stride, int col, int32_t a, int32_t b)
{
	double		va = values[(size_t) a * (size_t) stride + (size_t) col];
	double		vb = values[(size_t) b * (size_t) stride + (size_t) col];

	if (va > vb)
		return true;
	if (va < vb)
		return false;
	if (va == vb)
		return a < b;
	/* at least one NaN */
	if (va != va && vb != vb)
		return a < b;
	return vb != vb;
}

/* Restores the heap (root = the worst kept entry) below position i. */
static void
sift_down(int32_t *heap, int64_t size, int64_t i, const double *values, int stride, int col)
{
	for (;;)
	{
		int64_t		worst = i;
		int64_t		l = 2 * i + 1,
					r = 2 * i + 2;

		if (l < size && ranks_before(values, stride, col, heap[worst], heap[l]))
			worst = l;
		if (r < size && ranks_before(values, stride, col, heap[worst], heap[r]))
			worst = r;
		if (worst == i)
			return;
		{
			int32_t		t = heap[i];

			heap[i] = heap[worst];
			heap[worst] = t;
		}
		i = worst;
	}
}

/* Writes the indices of the min(k, n) best entries of column col to out, best first. */
int64_t
pr_top_k(const double *values, int64_t n, int stride, int col, int64_t k, int32_t *out,
		 const PrAllocator *alloc)
{
	int64_t		size;

	(void) alloc;				/* the heap lives in out */
	if (k <= 0 || n <= 0)
		return 0;
	size = k < n ? k : n;
	for (int64_t i = 0; i < size; i++)
		out[i] = (int32_t) i;
	for (int64_t i = size / 2 - 1; i >= 0; i--)
		sift_down(out, size, i, values, stride, col);
	for (int64_t i = size; i < n; i++)
	{
		if (ranks_before(values, stride, col, (int32_t) i, out[0]))
		{
			out[0] = (int32_t) i;
			sift_down(out, size, 0, values, stride, col);
		}
	}
	/* heap sort: moving the worst to the back leaves the array best first */
	for (int64_t end = size - 1; end > 0; end--)
	{
		int32_t		t = out[0];

		out[0] = out[end];
		out[end] = t;
		sift_down(out, end, 0, values, stride, col);
	}
	return size;
}

/* The min(k, n) best entries of column col, best first: their indices to out, their values to value. */
int64_t
pr_top_k_values(const double *values, int64_t n, int stride, int col, int64_t k, int32_t *out,
				double *value, const PrAllocator *alloc)
{
	int64_t		count = pr_top_k(values, n, stride, col, k, out, alloc);

	for (int64_t i = 0; i < count; i++)
		value[i] = values[(size_t) out[i] * (size_t) stride + (size_t) col];
	return count;
}
