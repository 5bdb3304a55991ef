/*
 * memory.c — a PrAllocator that takes huge chunks from a PostgreSQL memory context, and large
 * blocks backed with huge pages.
 *
 * The core never longjmps, so the allocator asks palloc for MCXT_ALLOC_NO_OOM and returns NULL
 * on failure; the core turns that into PR_ERR_NOMEM.  Everything it hands out goes away with the
 * context, also when an ERROR aborts the statement.  A mutex makes it safe to call from the
 * engine's worker threads (memory contexts themselves are not thread-safe).
 */
#include "powerrank.h"

#include <pthread.h>
#include <sys/mman.h>

#include "utils/memutils.h"

/* The allocator and the context it draws from. */
typedef struct ContextAllocator
{
	PrAllocator base;
	MemoryContext cxt;
	pthread_mutex_t lock;
} ContextAllocator;

/*
 * Asks the kernel to back the whole 2 MB pages inside [ptr, ptr + size) with huge pages when they
 * are first touched (transparent huge pages, which Linux gives on request by default): a process's
 * fresh memory then takes one page fault per 2 MB instead of one per 4 kB page, and on a virtual
 * machine a fault costs much more than its bytes (RESULTS.md, "Distributed ranking").  A no-op for
 * blocks smaller than POWERRANK_HUGE_PAGE_MIN or where the advice does not exist; a refusal only
 * costs the faults.
 */
void
powerrank_advise_huge_pages(void *ptr, size_t size)
{
#ifdef MADV_HUGEPAGE
	const uintptr_t huge = (uintptr_t) 2 << 20;
	uintptr_t	start = ((uintptr_t) ptr + huge - 1) & ~(huge - 1);
	uintptr_t	end = ((uintptr_t) ptr + size) & ~(huge - 1);

	if (ptr != NULL && size >= POWERRANK_HUGE_PAGE_MIN && end > start)
		(void) madvise((void *) start, end - start, MADV_HUGEPAGE);
#endif
}

/*
 * MemoryContextAllocHuge for a large block that is written whole soon (vectors, copies of node
 * sets): backed with huge pages where the kernel offers them (powerrank_advise_huge_pages).
 */
void *
powerrank_alloc_huge(MemoryContext cxt, Size size)
{
	void	   *ptr = MemoryContextAllocHuge(cxt, size);

	powerrank_advise_huge_pages(ptr, size);
	return ptr;
}

/* A range of memory whose pages prefault_part maps. */
typedef struct PrefaultRange
{
	char	   *base;
	size_t		bytes;
} PrefaultRange;

/* Granule of the prefault's parts: whole 2 MB pages where the range is on them. */
#define PREFAULT_GRANULE ((size_t) 2 << 20)

/*
 * pr_parallel_run's task: maps the pages of part `part` of n_parts writable — one
 * MADV_POPULATE_WRITE where it exists and takes the range, else a write of each page's first byte
 * with its own value.  Neither changes the memory's content.
 */
static void
prefault_part(void *arg, int part, int n_parts)
{
	PrefaultRange *r = (PrefaultRange *) arg;
	int64_t		b,
				e;
	size_t		begin,
				end;

	pr_even_range((int64_t) ((r->bytes + PREFAULT_GRANULE - 1) / PREFAULT_GRANULE), part, n_parts,
				  &b, &e);
	begin = (size_t) b * PREFAULT_GRANULE;
	end = Min((size_t) e * PREFAULT_GRANULE, r->bytes);
	if (end <= begin)
		return;
#ifdef MADV_POPULATE_WRITE
	if (madvise(r->base + begin, end - begin, MADV_POPULATE_WRITE) == 0)
		return;
#endif
	for (size_t at = begin; at < end; at += 4096)
	{
		volatile char *page = r->base + at;

		*page = *page;
	}
}

/*
 * Maps every page of [base, base + bytes) writable before a backend writes it whole (base
 * page-aligned: a segment it just created), in parallel over powerrank_thread_count() threads,
 * so that the write takes no page fault: on a virtual machine a fault costs far more than its
 * bytes, and the kernel zeroes fresh pages on the faulting thread.
 */
void
powerrank_prefault(void *base, size_t bytes)
{
	PrefaultRange range = {(char *) base, bytes};

	if (base != NULL && bytes > 0)
		pr_parallel_run(prefault_part, &range, powerrank_thread_count());
}

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
	powerrank_advise_huge_pages(ptr, size);
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
