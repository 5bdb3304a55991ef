/*
 * module.c — module entry point: PG_MODULE_MAGIC and _PG_init, which calls the per-module
 * initialisation functions.
 */
#include "powerrank.h"

#include "miscadmin.h"
#include "utils/guc.h"

#include "cache/graph_cache.h"
#include "graph/graph_heapscan.h"
#include "graph/graph_parallel_read.h"
#include "service/service.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

/*
 * Runs once when the library is loaded: defines each module's powerrank.* settings, reserves the
 * prefix and, when loaded by shared_preload_libraries, reserves the shared memory of the graph
 * cache, of the GPU service's channel and of the progress entries, installs the cache's object
 * access hook and registers the GPU service's background worker.
 */
void
_PG_init(void)
{
	powerrank_guc_init();
	graph_heapscan_guc_init();
	graph_parallel_read_guc_init();
	MarkGUCPrefixReserved("powerrank");
	if (process_shared_preload_libraries_in_progress)
	{
		graph_cache_shmem_init();
		cache_tracking_init();
		service_shmem_init();
		progress_shmem_init();
		service_worker_register();
	}
}
