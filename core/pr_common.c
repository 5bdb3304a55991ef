/*
 * pr_common.c — error reporting, status names, allocation helpers, the clock, the thread runner
 * and the counting sort of the pure-C core.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "pr_common.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Records status and a formatted message in err (when err is given); returns status. */
PrStatus
pr_error_set(PrError *err, PrStatus status, const char *fmt,...)
{
	va_list		args;

	if (err == NULL)
		return status;
	err->status = status;
	va_start(args, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, args);
	va_end(args);
	err->message[sizeof(err->message) - 1] = '\0';
	return status;
}

/* Short English name of a status code, for messages and logs. */
const char *
pr_status_name(PrStatus status)
{
	switch (status)
	{
		case PR_OK:
			return "ok";
		case PR_ERR_NOMEM:
			return "out of memory";
		case PR_ERR_INVALID:
			return "invalid input";
		case PR_ERR_INTERRUPTED:
			return "interrupted";
		case PR_ERR_ENGINE:
			return "engine failure";
		case PR_ERR_TOO_LARGE:
			return "graph too large";
		case PR_ERR_UNSUPPORTED:
			return "operation not supported by the engine";
	}
	return "unknown status";
}

/* malloc() behind the PrAllocator interface. */
static void *
pr_malloc_alloc(void *ctx, size_t size)
{
	(void) ctx;
	return malloc(size == 0 ? 1 : size);
}

/* free() behind the PrAllocator interface. */
static void
pr_malloc_free(void *ctx, void *ptr)
{
	(void) ctx;
	free(ptr);
}

const PrAllocator pr_malloc_allocator = {pr_malloc_alloc, pr_malloc_free, NULL};

/* Allocates count * elem_size bytes through a, or NULL on overflow or failure. */
void *
pr_alloc_array(const PrAllocator *a, size_t count, size_t elem_size)
{
	size_t		bytes;

	if (elem_size != 0 && count > SIZE_MAX / elem_size)
		return NULL;
	bytes = count * elem_size;
	return a->alloc(a->ctx, bytes == 0 ? 1 : bytes);
}

/* Frees ptr through a; NULL is ignored. */
void
pr_free(const PrAllocator *a, void *ptr)
{
	if (ptr != NULL)
		a->free(a->ctx, ptr);
}

/* Monotonic wall-clock time in seconds. */
double
pr_clock_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

/* First row r in [lo, n] with ptr[r] + per_row * r >= target; see pr_common.h. */
int64_t
pr_csr_row_at(const int64_t *ptr, int64_t lo, int64_t n, int64_t target, int64_t per_row)
{
	int64_t		hi = n;

	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (ptr[mid] + per_row * mid < target)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Item range [*begin, *end) of part p of n items split evenly; see pr_common.h. */
void
pr_even_range(int64_t n, int part, int n_parts, int64_t *begin, int64_t *end)
{
	*begin = n * part / n_parts;
	*end = n * (part + 1) / n_parts;
}

/* One part's thread of pr_parallel_run. */
typedef struct ParallelPart
{
	PrParallelTask task;
	void	   *arg;
	int			part;
	int			n_parts;
} ParallelPart;

/* Thread entry of pr_parallel_run: runs one part. */
static void *
parallel_part_main(void *p)
{
	ParallelPart *a = (ParallelPart *) p;

	a->task(a->arg, a->part, a->n_parts);
	return NULL;
}

/* Runs a task's parts on threads; see pr_common.h. */
void
pr_parallel_run(PrParallelTask task, void *arg, int n_parts)
{
	pthread_t	threads[PR_MAX_THREADS];
	ParallelPart parts[PR_MAX_THREADS];
	bool		started[PR_MAX_THREADS];

	if (n_parts > PR_MAX_THREADS)
		n_parts = PR_MAX_THREADS;
	if (n_parts <= 1)
	{
		task(arg, 0, 1);
		return;
	}
	for (int p = 1; p < n_parts; p++)
	{
		parts[p].task = task;
		parts[p].arg = arg;
		parts[p].part = p;
		parts[p].n_parts = n_parts;
		started[p] = pthread_create(&threads[p], NULL, parallel_part_main, &parts[p]) == 0;
	}
	task(arg, 0, n_parts);
	for (int p = 1; p < n_parts; p++)
	{
		if (started[p])
			pthread_join(threads[p], NULL);
		else
			task(arg, p, n_parts);
	}
}

/* Threads for a setting; see pr_common.h. */
int
pr_thread_count(int setting, int most)
{
	long		n = setting;

	if (n <= 0)
		n = sysconf(_SC_NPROCESSORS_ONLN);
	if (n > most)
		n = most;
	return n < 1 ? 1 : (int) n;
}

/* Allocates a counting sort's counts; see pr_common.h. */
bool
pr_count_sort_init(PrCountSort *sort, size_t n_items, int64_t n_keys, int max_chunks,
				   const PrAllocator *alloc)
{
	int			chunks = max_chunks < 1 ? 1 : max_chunks;

	if (chunks > PR_MAX_THREADS)
		chunks = PR_MAX_THREADS;
	while (chunks > 1 && (size_t) chunks * (size_t) n_keys > n_items)
		chunks--;
	sort->n_keys = n_keys;
	sort->n_chunks = chunks;
	sort->counts = pr_alloc_array(alloc, (size_t) chunks * (size_t) n_keys, sizeof(int64_t));
	return sort->counts != NULL;
}

/* Frees a counting sort's counts. */
void
pr_count_sort_free(PrCountSort *sort, const PrAllocator *alloc)
{
	pr_free(alloc, sort->counts);
	sort->counts = NULL;
}

/* Sets chunk t's counts to zero. */
void
pr_count_sort_clear(const PrCountSort *sort, int t)
{
	memset(pr_count_sort_row(sort, t), 0, (size_t) sort->n_keys * sizeof(int64_t));
}

/* Counts keys[lo .. hi) into chunk t's row. */
void
pr_count_sort_add(const PrCountSort *sort, int t, const int32_t *keys, size_t lo, size_t hi)
{
	int64_t    *count = pr_count_sort_row(sort, t);

	for (size_t i = lo; i < hi; i++)
		count[keys[i]]++;
}

/* Keys one range takes in one wave of pr_count_sort_offsets: the stop poll's period. */
#define COUNT_SORT_WAVE_KEYS ((int64_t) 1 << 20)

/* Keys at least in a range of pr_count_sort_offsets (fewer ranges for fewer keys). */
#define COUNT_SORT_RANGE_KEYS ((int64_t) 1 << 16)

/* One wave of pr_count_sort_offsets: keys [first, last) split into ranges, one a part. */
typedef struct CountSortWave
{
	PrCountSort *sort;
	int64_t    *starts;
	int64_t		first;
	int64_t		last;
	bool		place;			/* false: the keys' totals; true: the offsets */
} CountSortWave;

/* Part `part` of a wave: starts[k] = key k's total, or key k's chunk offsets from starts[k]. */
static void
count_sort_wave_part(void *arg, int part, int n_parts)
{
	CountSortWave *w = (CountSortWave *) arg;
	const PrCountSort *s = w->sort;
	int64_t		b,
				e;

	pr_even_range(w->last - w->first, part, n_parts, &b, &e);
	for (int64_t k = w->first + b; k < w->first + e; k++)
	{
		int64_t    *slot = s->counts + (size_t) k;
		int64_t		sum = 0;

		if (w->place)
		{
			sum = w->starts[k];
			for (int t = 0; t < s->n_chunks; t++, slot += s->n_keys)
			{
				int64_t		count = *slot;

				*slot = sum;
				sum += count;
			}
		}
		else
		{
			for (int t = 0; t < s->n_chunks; t++, slot += s->n_keys)
				sum += *slot;
			w->starts[k] = sum;
		}
	}
}

/*
 * Runs the totals or the offsets over all keys in waves of n_threads ranges, polling should_stop
 * (may be NULL) between waves: false when it asked to stop.
 */
static bool
count_sort_waves(CountSortWave *w, int n_threads, bool (*should_stop) (void *arg), void *stop_arg)
{
	int64_t		n_keys = w->sort->n_keys;
	int64_t		block = (int64_t) n_threads * COUNT_SORT_WAVE_KEYS;

	for (int64_t first = 0; first < n_keys; first += block)
	{
		int64_t		parts;

		if (first > 0 && should_stop != NULL && should_stop(stop_arg))
			return false;
		w->first = first;
		w->last = n_keys - first > block ? first + block : n_keys;
		parts = (w->last - first) / COUNT_SORT_RANGE_KEYS + 1;
		pr_parallel_run(count_sort_wave_part, w, parts < n_threads ? (int) parts : n_threads);
	}
	return true;
}

/* Turns a counting sort's counts into offsets; see pr_common.h. */
bool
pr_count_sort_offsets(PrCountSort *sort, bool descending, int64_t *starts, int n_threads,
					  bool (*should_stop) (void *arg), void *stop_arg)
{
	CountSortWave w = {sort, starts, 0, 0, false};
	int64_t		n_keys = sort->n_keys;
	int64_t		sum = 0;

	if (n_threads < 1)
		n_threads = 1;
	if (n_threads > PR_MAX_THREADS)
		n_threads = PR_MAX_THREADS;
	if (!count_sort_waves(&w, n_threads, should_stop, stop_arg) ||
		(should_stop != NULL && should_stop(stop_arg)))
		return false;
	for (int64_t i = 0; i < n_keys; i++)
	{
		int64_t		k = descending ? n_keys - 1 - i : i;
		int64_t		count = starts[k];

		starts[k] = sum;
		sum += count;
	}
	starts[n_keys] = sum;
	if (should_stop != NULL && should_stop(stop_arg))
		return false;
	w.place = true;
	return count_sort_waves(&w, n_threads, should_stop, stop_arg);
}

/* Sorts 64-bit keys by their bytes first_byte .. 7; see pr_common.h. */
uint64_t *
pr_radix_sort_u64(uint64_t *keys, uint64_t *tmp, size_t count, int first_byte)
{
	size_t		hist[8][256];
	uint64_t   *from = keys;
	uint64_t   *to = tmp;

	memset(hist, 0, sizeof(hist));
	for (size_t i = 0; i < count; i++)
	{
		uint64_t	k = keys[i];

		for (int p = first_byte; p < 8; p++)
			hist[p][(k >> (8 * p)) & 0xff]++;
	}
	for (int p = first_byte; p < 8; p++)
	{
		size_t		offset = 0;
		bool		trivial = false;

		for (int b = 0; b < 256; b++)
		{
			size_t		c = hist[p][b];

			if (c == count)
				trivial = true;
			hist[p][b] = offset;
			offset += c;
		}
		if (trivial)
			continue;
		for (size_t i = 0; i < count; i++)
		{
			uint64_t	k = from[i];

			to[hist[p][(k >> (8 * p)) & 0xff]++] = k;
		}
		{
			uint64_t   *swap = from;

			from = to;
			to = swap;
		}
	}
	return from;
}

/* An item and its key, for the comparison sort of pr_order_by_key_desc. */
typedef struct KeyedItem
{
	int64_t		key;
	int32_t		item;
} KeyedItem;

/* Descending key, ties ascending item. */
static int
keyed_item_cmp(const void *a, const void *b)
{
	const KeyedItem *x = a,
			   *y = b;

	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	return (x->item > y->item) - (x->item < y->item);
}

/* Orders items by descending key; see pr_common.h. */
PrStatus
pr_order_by_key_desc(int64_t n, const int64_t *key, int32_t *order, int32_t *rank,
					 const PrAllocator *alloc, PrError *err)
{
	int64_t		max_key = 0;

	for (int64_t i = 0; i < n; i++)
	{
		if (key[i] < 0)
			return pr_error_set(err, PR_ERR_INVALID, "sort key of item %lld is negative",
								(long long) i);
		if (key[i] > max_key)
			max_key = key[i];
	}
	if (max_key <= 16 * n + 1024)
	{
		PrCountSort sort;
		int64_t    *starts = pr_alloc_array(alloc, (size_t) max_key + 2, sizeof(int64_t));
		int64_t    *row;

		if (starts == NULL || !pr_count_sort_init(&sort, (size_t) n, max_key + 1, 1, alloc))
		{
			pr_free(alloc, starts);
			return pr_error_set(err, PR_ERR_NOMEM, "out of memory sorting %lld keys",
								(long long) n);
		}
		row = pr_count_sort_row(&sort, 0);
		pr_count_sort_clear(&sort, 0);
		for (int64_t i = 0; i < n; i++)
			row[key[i]]++;
		pr_count_sort_offsets(&sort, true, starts, 1, NULL, NULL);
		for (int64_t i = 0; i < n; i++)
		{
			int64_t		pos = row[key[i]]++;

			order[pos] = (int32_t) i;
			if (rank != NULL)
				rank[i] = (int32_t) pos;
		}
		pr_count_sort_free(&sort, alloc);
		pr_free(alloc, starts);
	}
	else
	{
		KeyedItem  *items = pr_alloc_array(alloc, (size_t) n, sizeof(KeyedItem));

		if (items == NULL)
			return pr_error_set(err, PR_ERR_NOMEM, "out of memory sorting %lld keys",
								(long long) n);
		for (int64_t i = 0; i < n; i++)
		{
			items[i].key = key[i];
			items[i].item = (int32_t) i;
		}
		qsort(items, (size_t) n, sizeof(KeyedItem), keyed_item_cmp);
		for (int64_t i = 0; i < n; i++)
		{
			order[i] = items[i].item;
			if (rank != NULL)
				rank[items[i].item] = (int32_t) i;
		}
		pr_free(alloc, items);
	}
	return PR_OK;
}
