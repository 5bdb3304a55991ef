/*
 * pr_partition.c — row partitioning of the pull matrix across GPUs (see pr_partition.h).
 *
 * Why greedy is the default.  Each GPU's time per iteration is about (its edges) x (cost of a
 * gather) + (its rows) x (cost of a row write), and the all-gather moves stride slots per GPU, so
 * both edges and rows must be balanced at once.  Sorting rows by descending length and dealing
 * them out does both:
 *  - Snake (the seed paper's bitonic order): row counts differ by at most 1; in each round of G
 *    rows the parts' shares differ by at most (first - last length of the round), and those spans
 *    telescope, so any two parts' edges differ by at most the longest row.  That bound is tight
 *    only when the head of the degree list is steep, which is exactly the R-MAT case.
 *  - Greedy (longest-processing-time with a row cap): each row goes to the part with the fewest
 *    edges that still has room (ceil(n/G) rows).  Rows differ by at most 1, like snake, and the
 *    edge spread is the size of the rows that come after the parts even out: on R-MAT it is
 *    orders of magnitude below snake's (the test prints both).
 *  - Contiguous ranges of a weighted cost edges + c * rows: the cheapest (no relabel), but one
 *    cost cannot balance two quantities: in a degree-sorted order the first part gets a few heavy
 *    rows and the last many empty ones, so either edges or rows (and with them the all-gather's
 *    padded stride) are off by a large factor on a skewed graph.
 * Inside a part the rows are placed by descending place_key (default: row length), so the part's
 * slots keep the degree order the single-GPU kernels like (hot entries of x together).
 */
#define _POSIX_C_SOURCE 200809L
#include "pr_partition.h"

#include <stdlib.h>
#include <string.h>

/* Name of a method. */
const char *
pr_partition_method_name(PrPartitionMethod method)
{
	switch (method)
	{
		case PR_PARTITION_GREEDY:
			return "greedy";
		case PR_PARTITION_SNAKE:
			return "snake";
		case PR_PARTITION_RANGES:
			return "ranges";
	}
	return "unknown";
}

/* Parses a method name. */
bool
pr_partition_method_parse(const char *text, PrPartitionMethod *method)
{
	static const PrPartitionMethod all[] = {PR_PARTITION_GREEDY, PR_PARTITION_SNAKE, PR_PARTITION_RANGES};

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (strcmp(text, pr_partition_method_name(all[i])) == 0)
		{
			*method = all[i];
			return true;
		}
	return false;
}

/* Fills the default options. */
void
pr_partition_options_init(PrPartitionOptions *options)
{
	memset(options, 0, sizeof(*options));
	options->n_parts = 1;
	options->method = PR_PARTITION_GREEDY;
	options->row_cost = 1.0;
	options->place_key = NULL;
}

/*
 * Assigns sorted rows (order[]) to parts by the greedy capped rule; owner[node] = part.  Every part
 * ends with floor(n/G) or ceil(n/G) rows: at most ceil rows each, and once the rows left are just
 * enough to lift the parts below floor(n/G) to it, only those parts take rows.
 */
static void
assign_greedy(int64_t n, const int64_t *ptr, const int32_t *order, int G, int64_t cap,
			  uint8_t *owner, int64_t *rows, int64_t *edges)
{
	int64_t		floor_rows = n / G;
	int64_t		deficit = floor_rows * G;	/* rows still needed to bring every part to floor */

	for (int64_t i = 0; i < n; i++)
	{
		int32_t		r = order[i];
		int			best = -1;
		bool		only_short = (n - i) <= deficit;

		for (int p = 0; p < G; p++)
		{
			if (rows[p] >= cap || (only_short && rows[p] >= floor_rows))
				continue;
			if (best < 0 || edges[p] < edges[best] ||
				(edges[p] == edges[best] && rows[p] < rows[best]))
				best = p;
		}
		owner[r] = (uint8_t) best;
		if (rows[best] < floor_rows)
			deficit--;
		rows[best]++;
		edges[best] += ptr[r + 1] - ptr[r];
	}
}

/* Assigns sorted rows to parts in the bitonic (snake) order 0..G-1, G-1..0, ... */
static void
assign_snake(int64_t n, const int64_t *ptr, const int32_t *order, int G, uint8_t *owner,
			 int64_t *rows, int64_t *edges)
{
	for (int64_t i = 0; i < n; i++)
	{
		int32_t		r = order[i];
		int64_t		round = i / G;
		int			pos = (int) (i % G);
		int			p = (round % 2 == 0) ? pos : G - 1 - pos;

		owner[r] = (uint8_t) p;
		rows[p]++;
		edges[p] += ptr[r + 1] - ptr[r];
	}
}

/* Assigns contiguous ranges of ids, cut where the prefix of edges + row_cost * rows crosses k/G. */
static void
assign_ranges(int64_t n, const int64_t *ptr, int G, double row_cost, uint8_t *owner,
			  int64_t *rows, int64_t *edges)
{
	double		total = (double) ptr[n] + row_cost * (double) n;
	int			p = 0;

	for (int64_t r = 0; r < n; r++)
	{
		/* cost before row r; its midpoint decides (a row never splits) */
		double		mid = (double) ptr[r] + row_cost * (double) r +
			0.5 * ((double) (ptr[r + 1] - ptr[r]) + row_cost);

		while (p < G - 1 && mid > total * (double) (p + 1) / (double) G)
			p++;
		owner[r] = (uint8_t) p;
		rows[p]++;
		edges[p] += ptr[r + 1] - ptr[r];
	}
}

/* Partitions the rows of a CSR across parts and builds the slot relabelling. */
PrStatus
pr_partition_build(int64_t n, const int64_t *ptr, const PrPartitionOptions *options,
				   const PrAllocator *alloc, PrPartition *out, PrError *err)
{
	int			G = options->n_parts;
	int32_t    *order = NULL;
	uint8_t    *owner = NULL;
	int64_t    *key = NULL;
	int64_t		fill[PR_PARTITION_MAX_PARTS];
	PrStatus	st = PR_OK;

	memset(out, 0, sizeof(*out));
	if (G < 1 || G > PR_PARTITION_MAX_PARTS)
		return pr_error_set(err, PR_ERR_INVALID, "parts must be 1..%d, not %d",
							PR_PARTITION_MAX_PARTS, G);
	if (n < 0 || n >= INT32_MAX)
		return pr_error_set(err, PR_ERR_TOO_LARGE, "%lld nodes exceed 32-bit ids", (long long) n);
	if (options->method == PR_PARTITION_RANGES && !(options->row_cost >= 0))
		return pr_error_set(err, PR_ERR_INVALID, "row_cost must be >= 0");
	out->n_parts = G;
	out->method = options->method;
	out->n = n;
	out->nnz = ptr[n];
	for (int64_t r = 0; r < n; r++)
		if (ptr[r + 1] - ptr[r] > out->max_row_len)
			out->max_row_len = ptr[r + 1] - ptr[r];

	owner = pr_alloc_array(alloc, (size_t) n + 1, 1);
	order = pr_alloc_array(alloc, (size_t) n + 1, sizeof(int32_t));
	key = pr_alloc_array(alloc, (size_t) n + 1, sizeof(int64_t));
	if (owner == NULL || order == NULL || key == NULL)
	{
		st = pr_error_set(err, PR_ERR_NOMEM, "out of memory partitioning %lld rows", (long long) n);
		goto done;
	}

	if (options->method == PR_PARTITION_RANGES)
		assign_ranges(n, ptr, G, options->row_cost, owner, out->rows, out->edges);
	else
	{
		int64_t		cap = (n + G - 1) / G;

		for (int64_t r = 0; r < n; r++)
			key[r] = ptr[r + 1] - ptr[r];
		if ((st = pr_order_by_key_desc(n, key, order, NULL, alloc, err)) != PR_OK)
			goto done;
		if (options->method == PR_PARTITION_SNAKE)
			assign_snake(n, ptr, order, G, owner, out->rows, out->edges);
		else if (options->method == PR_PARTITION_GREEDY)
			assign_greedy(n, ptr, order, G, cap, owner, out->rows, out->edges);
		else
		{
			st = pr_error_set(err, PR_ERR_INVALID, "unknown partition method %d", (int) options->method);
			goto done;
		}
	}

	for (int p = 0; p < G; p++)
		if (out->rows[p] > out->stride)
			out->stride = out->rows[p];
	out->n_slots = out->stride * G;
	if (out->n_slots >= INT32_MAX)
	{
		st = pr_error_set(err, PR_ERR_TOO_LARGE, "%lld slots (%d parts of %lld) exceed 32-bit ids",
						  (long long) out->n_slots, G, (long long) out->stride);
		goto done;
	}
	out->slot_to_node = pr_alloc_array(alloc, (size_t) out->n_slots + 1, sizeof(int32_t));
	out->node_to_slot = pr_alloc_array(alloc, (size_t) n + 1, sizeof(int32_t));
	if (out->slot_to_node == NULL || out->node_to_slot == NULL)
	{
		st = pr_error_set(err, PR_ERR_NOMEM, "out of memory for %lld slots", (long long) out->n_slots);
		goto done;
	}

	/* place: ranges keep the id order; the others the descending place key (default length) */
	if (options->method == PR_PARTITION_RANGES)
		for (int64_t r = 0; r < n; r++)
			order[r] = (int32_t) r;
	else if (options->place_key != NULL)
	{
		if ((st = pr_order_by_key_desc(n, options->place_key, order, NULL, alloc, err)) != PR_OK)
			goto done;
	}
	/* else: order already holds the rows by descending length */
	for (int64_t s = 0; s < out->n_slots; s++)
		out->slot_to_node[s] = -1;
	for (int p = 0; p < G; p++)
		fill[p] = (int64_t) p * out->stride;
	for (int64_t i = 0; i < n; i++)
	{
		int32_t		r = order[i];
		int64_t		s = fill[owner[r]]++;

		out->slot_to_node[s] = r;
		out->node_to_slot[r] = (int32_t) s;
	}

done:
	pr_free(alloc, owner);
	pr_free(alloc, order);
	pr_free(alloc, key);
	if (st != PR_OK)
		pr_partition_free(out, alloc);
	return st;
}

/* Frees a partition. */
void
pr_partition_free(PrPartition *part, const PrAllocator *alloc)
{
	pr_free(alloc, part->slot_to_node);
	pr_free(alloc, part->node_to_slot);
	part->slot_to_node = NULL;
	part->node_to_slot = NULL;
}

/* First slot of part p. */
int64_t
pr_partition_slot_begin(const PrPartition *part, int p)
{
	return (int64_t) p * part->stride;
}

/* The largest of the parts' values over their mean (total / n_parts); 1 when total is 0. */
static double
largest_over_mean(const int64_t *values, int n_parts, int64_t total)
{
	int64_t		mx = 0;

	if (total == 0)
		return 1.0;
	for (int p = 0; p < n_parts; p++)
		if (values[p] > mx)
			mx = values[p];
	return (double) mx * n_parts / (double) total;
}

/* Largest part's edges over the mean. */
double
pr_partition_edge_imbalance(const PrPartition *part)
{
	return largest_over_mean(part->edges, part->n_parts, part->nnz);
}

/* Largest part's rows over the mean. */
double
pr_partition_row_imbalance(const PrPartition *part)
{
	return largest_over_mean(part->rows, part->n_parts, part->n);
}

/* Sorts a row's (col, val) pairs by column: insertion sort (rows are short; deterministic). */
static void
sort_row(int32_t *col, float *val, int64_t len)
{
	for (int64_t i = 1; i < len; i++)
	{
		int32_t		c = col[i];
		float		v = val ? val[i] : 0.0f;
		int64_t		j = i - 1;

		while (j >= 0 && col[j] > c)
		{
			col[j + 1] = col[j];
			if (val)
				val[j + 1] = val[j];
			j--;
		}
		col[j + 1] = c;
		if (val)
			val[j + 1] = v;
	}
}

/* Pair of a column and its value, for sorting long rows. */
typedef struct ColVal
{
	int32_t		col;
	float		val;
} ColVal;

/* Ascending column, then value: a total order, so the row's order (and its sums) is deterministic. */
static int
cmp_colval(const void *a, const void *b)
{
	const ColVal *x = a,
			   *y = b;

	if (x->col != y->col)
		return (x->col > y->col) - (x->col < y->col);
	return (x->val > y->val) - (x->val < y->val);
}

/* Threads setting of the CSR builders (<= 0: the online CPUs). */
static int partition_thread_setting = 0;

/* Sets the threads the CSR builders use. */
void
pr_partition_set_threads(int n_threads)
{
	partition_thread_setting = n_threads;
}

/* The threads the CSR builders use. */
int
pr_partition_threads(void)
{
	return pr_thread_count(partition_thread_setting, PR_PARTITION_MAX_THREADS);
}

/* The shared state of one part's CSR build (pr_partition_local_csr). */
typedef struct PartCsrWork
{
	const PrPartition *part;
	int64_t		slot_begin;		/* the part's first slot: local row i is slot slot_begin + i */
	const int64_t *ptr;
	const int32_t *col;
	const double *val;
	const double *col_scale;
	PrPartCsr  *out;
	int64_t		thread_sum[PR_PARTITION_MAX_THREADS];	/* entries of each thread's rows (pass 1) */
	bool		failed;			/* a thread could not get scratch memory (pass 2) */
} PartCsrWork;

/* The original node of local row i of the part's CSR. */
static inline int32_t
part_row_node(const PartCsrWork *w, int64_t i)
{
	return w->part->slot_to_node[w->slot_begin + i];
}

/* Pass 1: ptr[i+1] = length of local row i for thread t's even share of rows; sums them. */
static void
part_lengths_task(void *arg, int t, int n_threads)
{
	PartCsrWork *w = arg;
	int64_t		n = w->out->n_rows,
				b,
				e,
				sum = 0;

	pr_even_range(n, t, n_threads, &b, &e);
	for (int64_t i = b; i < e; i++)
	{
		int32_t		r = part_row_node(w, i);
		int64_t		len = w->ptr[r + 1] - w->ptr[r];

		w->out->ptr[i + 1] = len;
		sum += len;
	}
	w->thread_sum[t] = sum;
}

/* Pass 1b: turns thread t's lengths into offsets, starting from the earlier threads' entries. */
static void
part_prefix_task(void *arg, int t, int n_threads)
{
	PartCsrWork *w = arg;
	int64_t		b,
				e,
				at = 0;

	pr_even_range(w->out->n_rows, t, n_threads, &b, &e);
	for (int u = 0; u < t; u++)
		at += w->thread_sum[u];
	for (int64_t i = b; i < e; i++)
	{
		at += w->out->ptr[i + 1];
		w->out->ptr[i + 1] = at;
	}
}

/*
 * Pass 2: fills thread t's rows (an even share of the entries): columns to slots, values, each
 * row sorted by (slot, value).  Every row is written by one thread from the input alone, so the
 * result does not depend on the thread count.
 */
static void
part_fill_task(void *arg, int t, int n_threads)
{
	PartCsrWork *w = arg;
	PrPartCsr  *out = w->out;
	int64_t		n = out->n_rows,
				b = t == 0 ? 0 : pr_csr_row_at(out->ptr, 0, n, out->nnz * t / n_threads, 0),
				e = t == n_threads - 1 ? n : pr_csr_row_at(out->ptr, 0, n, out->nnz * (t + 1) / n_threads, 0);
	bool		with_val = out->val != NULL;
	ColVal	   *tmp = NULL;
	int64_t		tmp_len = 0;

	for (int64_t i = b; i < e; i++)
	{
		int32_t		r = part_row_node(w, i);
		int64_t		q = out->ptr[i];
		int64_t		len = w->ptr[r + 1] - w->ptr[r];

		for (int64_t e2 = w->ptr[r]; e2 < w->ptr[r + 1]; e2++, q++)
		{
			int32_t		c = w->col[e2];

			out->col[q] = w->part->node_to_slot[c];
			if (with_val)
				out->val[q] = (float) ((w->val ? w->val[e2] : 1.0) * (w->col_scale ? w->col_scale[c] : 1.0));
		}
		if (len <= 64)
		{
			sort_row(out->col + out->ptr[i], with_val ? out->val + out->ptr[i] : NULL, len);
			continue;
		}
		if (len > tmp_len)
		{
			free(tmp);
			tmp = malloc((size_t) len * sizeof(ColVal));
			tmp_len = len;
			if (tmp == NULL)
			{
				w->failed = true;
				return;
			}
		}
		for (int64_t j = 0; j < len; j++)
		{
			tmp[j].col = out->col[out->ptr[i] + j];
			tmp[j].val = with_val ? out->val[out->ptr[i] + j] : 0.0f;
		}
		qsort(tmp, (size_t) len, sizeof(ColVal), cmp_colval);
		for (int64_t j = 0; j < len; j++)
		{
			out->col[out->ptr[i] + j] = tmp[j].col;
			if (with_val)
				out->val[out->ptr[i] + j] = tmp[j].val;
		}
	}
	free(tmp);
}

/* Builds part p's CSR over slot columns. */
PrStatus
pr_partition_local_csr(const PrPartition *part, int p, const int64_t *ptr, const int32_t *col,
					   const double *val, const double *col_scale, const PrAllocator *alloc,
					   PrPartCsr *out, PrError *err)
{
	bool		with_val = (val != NULL || col_scale != NULL);
	PartCsrWork *w;
	int			threads = pr_partition_threads();

	memset(out, 0, sizeof(*out));
	if (p < 0 || p >= part->n_parts)
		return pr_error_set(err, PR_ERR_INVALID, "part %d of %d", p, part->n_parts);
	out->n_rows = part->rows[p];
	out->nnz = part->edges[p];
	out->n_cols = part->n_slots;
	out->slot_begin = pr_partition_slot_begin(part, p);
	out->ptr = pr_alloc_array(alloc, (size_t) out->n_rows + 1, sizeof(int64_t));
	out->col = pr_alloc_array(alloc, (size_t) out->nnz + 1, sizeof(int32_t));
	out->val = with_val ? pr_alloc_array(alloc, (size_t) out->nnz + 1, sizeof(float)) : NULL;
	w = calloc(1, sizeof(PartCsrWork));
	if (w == NULL || out->ptr == NULL || out->col == NULL || (with_val && out->val == NULL))
	{
		free(w);
		pr_part_csr_free(out, alloc);
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory for part %d (%lld entries)", p,
							(long long) out->nnz);
	}
	*w = (PartCsrWork) {part, out->slot_begin, ptr, col, val, col_scale, out, {0}, false};
	/* small parts in the caller: thread start-up would cost more than the work */
	if (out->nnz + out->n_rows < 100000)
		threads = 1;
	out->ptr[0] = 0;
	pr_parallel_run(part_lengths_task, w, threads);
	pr_parallel_run(part_prefix_task, w, threads);
	if (out->ptr[out->n_rows] != out->nnz)
	{
		free(w);
		pr_part_csr_free(out, alloc);
		return pr_error_set(err, PR_ERR_INVALID, "part %d's rows hold a different edge count", p);
	}
	pr_parallel_run(part_fill_task, w, threads);
	if (w->failed)
	{
		free(w);
		pr_part_csr_free(out, alloc);
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory sorting a long row");
	}
	free(w);
	return PR_OK;
}

/* Frees a PrPartCsr. */
void
pr_part_csr_free(PrPartCsr *csr, const PrAllocator *alloc)
{
	pr_free(alloc, csr->ptr);
	pr_free(alloc, csr->col);
	pr_free(alloc, csr->val);
	csr->ptr = NULL;
	csr->col = NULL;
	csr->val = NULL;
}

/* The distinct columns a part reads. */
int64_t
pr_part_csr_columns(const PrPartCsr *csr, int32_t **cols, const PrAllocator *alloc)
{
	uint8_t    *seen = pr_alloc_array(alloc, (size_t) csr->n_cols + 1, 1);
	int64_t		count = 0;

	if (cols)
		*cols = NULL;
	if (seen == NULL)
		return -1;
	memset(seen, 0, (size_t) csr->n_cols + 1);
	for (int64_t e = 0; e < csr->nnz; e++)
		if (!seen[csr->col[e]])
		{
			seen[csr->col[e]] = 1;
			count++;
		}
	if (cols)
	{
		int64_t		k = 0;

		*cols = pr_alloc_array(alloc, (size_t) count + 1, sizeof(int32_t));
		if (*cols == NULL)
		{
			pr_free(alloc, seen);
			return -1;
		}
		for (int64_t c = 0; c < csr->n_cols; c++)
			if (seen[c])
				(*cols)[k++] = (int32_t) c;
	}
	pr_free(alloc, seen);
	return count;
}
