/*
 * pr_common.h — status codes, error text and the allocator shared by the pure-C core.
 *
 * The core (core/) and the GPU engine (cuda/) include no PostgreSQL header.  Every function
 * that can fail returns a PrStatus and, where a PrError is passed, a human-readable message.
 * Arrays the core hands back are allocated through a PrAllocator so that the PostgreSQL glue can
 * give it huge palloc() chunks in a memory context (freed on error) and tests can use malloc().
 */
#ifndef PR_COMMON_H
#define PR_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Result of every core call. */
typedef enum PrStatus
{
	PR_OK = 0,
	PR_ERR_NOMEM,				/* an allocation failed (host or device) */
	PR_ERR_INVALID,				/* bad input: PrError.message says which */
	PR_ERR_INTERRUPTED,			/* should_stop() asked the driver to stop */
	PR_ERR_ENGINE,				/* the engine failed (e.g. a CUDA error) */
	PR_ERR_TOO_LARGE,			/* graph exceeds a format limit (e.g. 2^31-1 nodes) */
	PR_ERR_UNSUPPORTED			/* the engine lacks an operation the algorithm needs */
} PrStatus;

#define PR_ERROR_MESSAGE_LEN 256

/* Error detail filled in by a failing call; message is always NUL-terminated. */
typedef struct PrError
{
	PrStatus	status;
	char		message[PR_ERROR_MESSAGE_LEN];
} PrError;

/* Records status and a printf-style message in err (err may be NULL); returns status. */
PrStatus	pr_error_set(PrError *err, PrStatus status, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));

/* Short English name of a status code ("out of memory", ...). */
const char *pr_status_name(PrStatus status);

/*
 * Memory for arrays returned by the core.  alloc returns NULL on failure (never longjmps); it must
 * accept sizes above 1 GB.  free(NULL) must be harmless.
 */
typedef struct PrAllocator
{
	void	   *(*alloc) (void *ctx, size_t size);
	void		(*free) (void *ctx, void *ptr);
	void	   *ctx;
} PrAllocator;

/* An allocator over malloc()/free(), for tests, benchmarks and the GPU engine's host side. */
extern const PrAllocator pr_malloc_allocator;

/* Allocates count * elem_size bytes, or returns NULL on overflow or failure. */
void	   *pr_alloc_array(const PrAllocator *a, size_t count, size_t elem_size);

/* Frees through the allocator (NULL is fine). */
void		pr_free(const PrAllocator *a, void *ptr);

/*
 * First row r in [lo, n] with ptr[r] + per_row * r >= target, for CSR row pointers ptr[0..n]:
 * where to cut the rows so that parts get about equal entries (per_row 0) or entries plus rows
 * (per_row 1).  Binary search.
 */
int64_t		pr_csr_row_at(const int64_t *ptr, int64_t lo, int64_t n, int64_t target, int64_t per_row);

/* Monotonic wall clock in seconds, for run statistics. */
double		pr_clock_seconds(void);

/* Most parts pr_parallel_run runs at once (callers cap their part counts to it). */
#define PR_MAX_THREADS 64

/* Part `part` of n_parts of a parallel task. */
typedef void (*PrParallelTask) (void *arg, int part, int n_parts);

/*
 * Runs task for part = 0 .. n_parts-1 (at most PR_MAX_THREADS), each on its own thread and part
 * 0 on the caller's; a part whose thread cannot start runs on the caller afterwards, so results
 * must never depend on which thread ran a part.
 */
void		pr_parallel_run(PrParallelTask task, void *arg, int n_parts);

/* Item range [*begin, *end) of part `part` of n_parts when n items are split evenly. */
void		pr_even_range(int64_t n, int part, int n_parts, int64_t *begin, int64_t *end);

/* Threads for a setting: setting > 0 as given, otherwise the online CPUs; capped to 1 .. most. */
int			pr_thread_count(int setting, int most);

/*
 * A stable counting sort of items by an integer key in [0, n_keys), on parallel chunks of the
 * items: chunk t counts its items' keys into its own row of counts, pr_count_sort_offsets turns
 * the counts into offsets (key by key, and chunk by chunk within a key), then chunk t moves each
 * of its items to row[key]++.  An item of chunk t lands after chunk t-1's items of the same key,
 * so the result is the same for any number of chunks when the chunks are consecutive ranges of
 * the items.  The callers write the counting and scattering loops over their own items (no call
 * per item).
 */
typedef struct PrCountSort
{
	int64_t		n_keys;
	int			n_chunks;
	int64_t    *counts;			/* [n_chunks][n_keys]: the counts, then the offsets */
} PrCountSort;

/*
 * Allocates the counts of a sort of n_items items by n_keys keys on at most max_chunks chunks,
 * fewer where n_items / n_keys is smaller (the counters stay within the items' size); the rows
 * are not cleared.  False when out of memory.
 */
bool		pr_count_sort_init(PrCountSort *sort, size_t n_items, int64_t n_keys, int max_chunks,
							   const PrAllocator *alloc);

/* Frees the counts (a sort that failed to start is fine). */
void		pr_count_sort_free(PrCountSort *sort, const PrAllocator *alloc);

/* Chunk t's row of counts (offsets after pr_count_sort_offsets). */
static inline int64_t *
pr_count_sort_row(const PrCountSort *sort, int t)
{
	return sort->counts + (size_t) t * (size_t) sort->n_keys;
}

/* Sets chunk t's counts to zero. */
void		pr_count_sort_clear(const PrCountSort *sort, int t);

/* Counts keys[lo .. hi) into chunk t's row. */
void		pr_count_sort_add(const PrCountSort *sort, int t, const int32_t *keys, size_t lo,
							  size_t hi);

/*
 * Turns the counts into offsets: the keys in ascending order, or descending when descending is
 * set, chunk by chunk within a key.  starts[0 .. n_keys] gets the position of each key's first
 * item and starts[n_keys] the number of items (ascending: the row pointers of a CSR).  The work
 * runs on n_threads ranges of keys, in waves, and should_stop (may be NULL) is polled on the
 * calling thread between them: false when it asked to stop.
 */
bool		pr_count_sort_offsets(PrCountSort *sort, bool descending, int64_t *starts,
								  int n_threads, bool (*should_stop) (void *arg), void *stop_arg);

/*
 * Sorts keys[0 .. count) ascending by their bytes first_byte .. 7 (0: the whole key) with a stable
 * LSD radix sort on bytes, skipping a byte that is equal in every key; tmp has room for count
 * keys.  Returns the buffer that holds the result (keys or tmp).
 */
uint64_t   *pr_radix_sort_u64(uint64_t *keys, uint64_t *tmp, size_t count, int first_byte);

/*
 * Writes into order[0 .. n) the items 0 .. n-1 by descending key, ties by ascending item, and,
 * when rank is not NULL, rank[item] = its position in order: a counting sort when the keys are
 * small next to n (degrees), a comparison sort otherwise.  PR_ERR_INVALID for a negative key,
 * PR_ERR_NOMEM; n < 2^31.
 */
PrStatus	pr_order_by_key_desc(int64_t n, const int64_t *key, int32_t *order, int32_t *rank,
								 const PrAllocator *alloc, PrError *err);

/*
 * Defines NAME(a, lo, hi, v): the first position in a[lo, hi) (ascending values of TYPE) holding a
 * value >= v, by binary search down to 16 values, then a scan (short ranges are scanned).
 */
#define PR_DEFINE_LOWER_BOUND(NAME, TYPE) \
static inline int64_t \
NAME(const TYPE *a, int64_t lo, int64_t hi, int64_t v) \
{ \
	while (hi - lo > 16) \
	{ \
		int64_t		mid = lo + (hi - lo) / 2; \
\
		if (a[mid] < v) \
			lo = mid + 1; \
		else \
			hi = mid; \
	} \
	while (lo < hi && a[lo] < v) \
		lo++; \
	return lo; \
}

/* Over 64-bit values (external ids, row pointers). */
PR_DEFINE_LOWER_BOUND(pr_lower_bound, int64_t)
/* Over 32-bit ids (node lists, column ids). */
PR_DEFINE_LOWER_BOUND(pr_lower_bound_i32, int32_t)

#ifdef __cplusplus
}
#endif

#endif							/* PR_COMMON_H */
