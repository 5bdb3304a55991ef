/*
 * powerrank.h — declarations shared by the PostgreSQL glue of powerrank (the .c files of src/):
 * the settings, the core's allocator, errors and cancel, the progress of this backend's run.
 *
 * The glue reads edges (a table through SPI, or the powerrank_graph aggregate), builds the graph
 * with the pure-C core (core/), runs an algorithm on an engine and returns the scores as rows.
 */
#ifndef POWERRANK_H
#define POWERRANK_H

#include "postgres.h"

#include "fmgr.h"
#include "pr_driver.h"

/* ---- guc.c: settings ---- */

/* powerrank.cpu_threads: worker threads of the CPU engine (0 = one per online core). */
extern int	powerrank_cpu_threads;

/* powerrank.cache_size: megabytes of shared memory the cache may hold; 0 disables it. */
extern int	powerrank_cache_size_mb;

/* powerrank.warm_start_auto: runs start from the scores kept with the cache entry. */
extern bool powerrank_warm_start_auto;

/* powerrank.mixing_depth: Anderson mixing depth of every engine's iterations (0: plain). */
extern int	powerrank_mixing_depth;

/* powerrank.stop_when_certified: top_k runs stop once the top_k is certified exact. */
extern bool powerrank_stop_when_certified;

/* The GPU service's settings (the worker reads them into a ServiceEngineConfig). */
extern int	powerrank_service_engine;
extern char *powerrank_gpu_library;
extern char *powerrank_gpu_multi_library;
extern int	powerrank_gpu_devices;
extern int	powerrank_gpu_device;
extern int	powerrank_gpu_precision;
extern int	powerrank_gpu_kernel;
extern int	powerrank_gpu_memory_mb;
extern int	powerrank_gpu_min_edges;
extern int	powerrank_service_batch_size;
extern double powerrank_service_batch_wait_ms;
extern int	powerrank_gpu_quick_layout_edges;
extern int	powerrank_gpu_build_rows;
extern bool powerrank_warm_start;

void		powerrank_guc_init(void);
int			powerrank_thread_count(void);

/* ---- memory.c: the core's allocator over a memory context, large blocks on huge pages ---- */

PrAllocator *powerrank_context_allocator(MemoryContext cxt);

/* Blocks from this size are backed with huge pages where the kernel offers them. */
#define POWERRANK_HUGE_PAGE_MIN ((size_t) 4 << 20)
void		powerrank_advise_huge_pages(void *ptr, size_t size);
void	   *powerrank_alloc_huge(MemoryContext cxt, Size size);
void		powerrank_prefault(void *base, size_t bytes);

/* ---- status.c: core status codes as PostgreSQL errors, the cancel check, optional steps ---- */

void		powerrank_report_core_error(const char *what, const PrError *err) pg_attribute_noreturn();
bool		powerrank_cancel_requested(void *arg);
bool		powerrank_try_in_subtransaction(void (*fn) (void *), void *arg, char *message, size_t size);

/* ---- progress.c: what powerrank_progress shows of this backend's run ---- */

void		progress_begin_read(const char *algorithm, int64 rows_estimated);
void		progress_set_rows_read(int64 rows);
void		progress_begin_build(bool on_service);

#endif							/* POWERRANK_H */
