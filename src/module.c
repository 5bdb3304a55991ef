/*
 * module.c — module entry point: PG_MODULE_MAGIC and _PG_init, which calls the per-module
 * initialisation functions.
 */
#include "powerrank.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/guc.h"

#include "cache/graph_cache.h"
#include "distributed/distributed.h"
#include "graph/graph_heapscan.h"
#include "graph/graph_parallel_read.h"
#include "service/service.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/*
 * Asks the postmaster for the shared memory of the graph cache, of the GPU service's channel and
 * of the progress entries.
 */
static void
powerrank_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	graph_cache_shmem_request();
	service_shmem_request();
	progress_shmem_request();
}

/* Creates (in the postmaster, cleared) or attaches to each of them, under AddinShmemInitLock. */
static void
powerrank_shmem_startup(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	graph_cache_shmem_attach();
	service_shmem_attach();
	progress_shmem_attach();
	LWLockRelease(AddinShmemInitLock);
}

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
	distributed_init();
	MarkGUCPrefixReserved("powerrank");
	if (process_shared_preload_libraries_in_progress)
	{
		prev_shmem_request_hook = shmem_request_hook;
		shmem_request_hook = powerrank_shmem_request;
		prev_shmem_startup_hook = shmem_startup_hook;
		shmem_startup_hook = powerrank_shmem_startup;
		cache_tracking_init();
		service_worker_register();
	}
}
