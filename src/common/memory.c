/*
 * memory.c — a PrAllocator that takes huge chunks from a PostgreSQL memory context.
 *
 * The core never longjmps, so the allocator asks palloc for MCXT_ALLOC_NO_OOM and returns NULL
 * on failure; the core turns that into PR_ERR_NOMEM.  Everything it hands out goes away with the
 * context, also when an ERROR aborts the statement.  A mutex makes it safe to call from the
 * engine's worker threads (memory contexts themselves are not thread-safe).
 */
#include "powerrank.h"

#include <pthread.h>

#include "utils/memutils.h"

/* The allocator and the context it draws from. */
typedef struct ContextAllocator
{
	PrAllocator base;
	MemoryContext cxt;
	pthread_mutex_t lock;
} ContextAllocator;

/* Allocates size bytes in the context; NULL when the request is too large or memory is short. */
static void *
context_alloc(void *ctx, size_t size)
{
	ContextAllocator *allocator = (ContextAllocator *) ctx;
	void	   *ptr;

	if (size == 0)
		size = 1;
	if (size > MaxAllocHugeSize)
		return NULL;
	pthread_mutex_lock(&allocator->lock);
	ptr = MemoryContextAllocExtended(allocator->cxt, size,
									 MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
	pthread_mutex_unlock(&allocator->lock);
	return ptr;
}

/* Frees a chunk given out by context_alloc (NULL is ignored). */
static void
context_free(void *ctx, void *ptr)
{
	ContextAllocator *allocator = (ContextAllocator *) ctx;

	if (ptr == NULL)
		return;
	pthread_mutex_lock(&allocator->lock);
	pfree(ptr);
	pthread_mutex_unlock(&allocator->lock);
}

/* Makes an allocator over cxt; it lives in cxt and is valid as long as cxt is. */
PrAllocator *
powerrank_context_allocator(MemoryContext cxt)
{
	ContextAllocator *allocator;

	allocator = MemoryContextAllocZero(cxt, sizeof(ContextAllocator));
	allocator->base.alloc = context_alloc;
	allocator->base.free = context_free;
	allocator->base.ctx = allocator;
	allocator->cxt = cxt;
	pthread_mutex_init(&allocator->lock, NULL);
	return &allocator->base;
}
