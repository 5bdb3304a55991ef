/*
 * guc.c — the powerrank.* configuration settings.
 */
#include "powerrank.h"

#include <unistd.h>

#include "utils/guc.h"

int			powerrank_cpu_threads = 0;

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
