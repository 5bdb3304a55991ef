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

#ifdef __cplusplus
}
#endif

#endif							/* PR_COMMON_H */
