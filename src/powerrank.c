/*
 * powerrank.c — module entry point: PG_MODULE_MAGIC and _PG_init, which calls the per-module
 * initialisation functions.
 */
#include "powerrank.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

/* Runs once when the library is loaded: defines the powerrank.* settings. */
void
_PG_init(void)
{
	powerrank_guc_init();
}
