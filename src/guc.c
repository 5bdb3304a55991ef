/*
 * guc.c — the powerrank.* configuration settings.
 */
#include "powerrank.h"

#include <limits.h>
#include <unistd.h>

#include "utils/guc.h"

#include "graph_cache.h"

int			powerrank_cpu_threads = 0;
int			powerrank_cache_size_mb = 1024;

/* Defines the settings and reserves the "powerrank." prefix. */
void
powerrank_guc_init(void)
{
	DefineCustomIntVariable("powerrank.cpu_threads",
							"Worker threads of the CPU engine (0 = one per online core).",
							NULL,
							&powerrank_cpu_threads,
							0, 0, 1024,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);

	/*
	 * Superuser-only, so that ordinary roles cannot grow the cache; the limit is enforced when a
	 * graph is added, with the adding session's value: set it in postgresql.conf.
	 */
	DefineCustomIntVariable("powerrank.cache_size",
							"Shared memory the graph cache may hold, in megabytes (0 disables the cache).",
							"Needs shared_preload_libraries = 'powerrank'. Least recently used graphs are evicted first.",
							&powerrank_cache_size_mb,
							1024, 0, INT_MAX / 2,
							PGC_SUSET,
							GUC_UNIT_MB,
							NULL, NULL, NULL);

	MarkGUCPrefixReserved("powerrank");
}

/* The thread count the setting asks for, with 0 resolved to the number of online cores. */
int
powerrank_thread_count(void)
{
	long		cores;

	if (powerrank_cpu_threads > 0)
		return powerrank_cpu_threads;
	cores = sysconf(_SC_NPROCESSORS_ONLN);
	if (cores < 1)
		return 1;
	if (cores > 1024)
		return 1024;
	return (int) cores;
}
