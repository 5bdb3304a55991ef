/*
 * pr_common.c — error reporting, status names, allocation helpers, the clock and the thread runner of
 * the pure-C core.
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
