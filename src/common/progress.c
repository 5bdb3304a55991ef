/*
 * progress.c — the progress entries that powerrank_progress shows: one per backend (indexed by
 * BackendId), in the main shared memory under the name "powerrank progress".
 *
 * With shared_preload_libraries the array is reserved at server start (module.c's shared memory
 * hooks ask for its size and attach it), so that the GPU service's engine process, a child
 * of the postmaster, inherits it and writes the phase, iteration and residual of the runs it
 * serves.  Without preload no extension memory is reserved: the first backend that needs the
 * array (a run, or a reader of the view) creates it with ShmemInitStruct from the spare shared
 * memory every server keeps (the same pool shared hash tables grow into), and the other backends
 * find it there by name.  It takes sizeof(ProgressEntry) bytes per possible backend (88 bytes:
 * 10.7 kB at max_connections = 100; a default server has about 1.9 MB spare).  When that memory is not there, an attempt in a subtransaction
 * fails quietly: the backend then publishes no progress (a DEBUG1 line says why) and its ranking
 * runs as before.  See doc/DESIGN.md "Progress".
 *
 * Writers store plain fields then publish pid last (a write barrier between); readers copy an
 * entry between two reads of pid and drop it when pid changed.  A torn view of a running entry
 * (say, a phase a moment old) is acceptable for a monitoring view.
 */
#include "channel.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "storage/backendid.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"

/* The array, once this process has it (inherited from the postmaster, or attached here). */
static ProgressEntry *progress_array = NULL;

/* Set when attaching failed in this backend: it does not try again. */
static bool progress_unavailable = false;

/* Bytes of the array: one entry per possible backend. */
static Size
progress_shmem_size(void)
{
	return mul_size(sizeof(ProgressEntry), MaxBackends);
}

/*
 * Creates (zeroed) or finds the array in the main shared memory (the startup hook's part, or a
 * backend's first use without preload).  The caller holds AddinShmemInitLock (so that no process
 * sees the array before it is zeroed).  An ERROR when the shared memory is short.
 */
void
progress_shmem_attach(void)
{
	bool		found;
	ProgressEntry *array = ShmemInitStruct("powerrank progress", progress_shmem_size(), &found);

	if (!found)
		memset(array, 0, progress_shmem_size());
	progress_array = array;
}

/* Asks the postmaster for the array's shared memory (the request hook's part, preload). */
void
progress_shmem_request(void)
{
	RequestAddinShmemSpace(MAXALIGN(progress_shmem_size()));
}

/* powerrank_try_in_subtransaction's step: attaches the array (an ERROR releases the lock). */
static void
progress_attach_step(void *arg)
{
	(void) arg;
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	progress_shmem_attach();
	LWLockRelease(AddinShmemInitLock);
}

/*
 * True once this process has the array: attaches it on first use without preload, inside a
 * subtransaction so that a shortage of shared memory (or any ERROR there) only costs the progress
 * report.  Not in parallel mode (no subtransaction there) nor outside a transaction.
 */
static bool
progress_attached(void)
{
	char		message[256];

	if (progress_array != NULL)
		return true;
	if (progress_unavailable || !IsUnderPostmaster || MyBackendId == InvalidBackendId ||
		IsInParallelMode() || !IsTransactionState())
		return false;

	if (!powerrank_try_in_subtransaction(progress_attach_step, NULL, message, sizeof(message)))
	{
		progress_unavailable = true;
		elog(DEBUG1, "powerrank: no progress entries for powerrank_progress (%s)", message);
	}
	return progress_array != NULL;
}

/* Entries a reader of the view looks at: every backend's, or none when the array is not there. */
int
progress_entry_count(void)
{
	return progress_attached() ? MaxBackends : 0;
}

/* Entry index (0 <= index < progress_entry_count()). */
ProgressEntry *
progress_entry(int index)
{
	return &progress_array[index];
}

/*
 * This backend's entry, or NULL (no array, no BackendId).  With attach, attaches the array first
 * when needed (not from a cleanup callback or the driver's progress callback: only where a
 * subtransaction may start).
 */
static ProgressEntry *
my_entry(bool attach)
{
	if (MyBackendId == InvalidBackendId || MyBackendId > MaxBackends)
		return NULL;
	if (attach ? !progress_attached() : progress_array == NULL)
		return NULL;
	return &progress_array[MyBackendId - 1];
}

/* The entry of a request slot's backend (the engine process's view of it), or NULL. */
static ProgressEntry *
slot_entry(ServiceSlot *slot)
{
	int			index = (int) (slot - service->slots);

	if (progress_array == NULL || index < 0 || index >= MaxBackends)
		return NULL;
	return &progress_array[index];
}

/* Publishes a fresh entry for this backend's run: fields first, pid last. */
static void
publish_entry(ProgressEntry *p, const char *algorithm, ProgressPhase phase, bool on_service,
			  int64 rows_read, int64 rows_estimated, TimestampTz started, int64 nodes,
			  int64 edges, int columns)
{
	p->pid = 0;
	pg_write_barrier();
	strlcpy(p->algorithm, algorithm, sizeof(p->algorithm));
	p->on_service = on_service;
	p->phase = phase;
	p->iteration = 0;
	p->residual = 0.0;
	p->rows_read = rows_read;
	p->rows_estimated = rows_estimated;
	p->started = started;
	p->nodes = nodes;
	p->edges = edges;
	p->columns = columns;
	p->userid = GetUserId();
	pg_write_barrier();
	p->pid = MyProcPid;
}

/*
 * Starts this backend's progress entry for a run that reads a table: phase reading, no rows read
 * yet of rows_estimated (-1: unknown).
 */
void
progress_begin_read(const char *algorithm, int64 rows_estimated)
{
	ProgressEntry *p = my_entry(true);

	if (p != NULL)
		publish_entry(p, algorithm, PHASE_READING, false, 0, rows_estimated,
					  GetCurrentTimestamp(), 0, 0, 0);
}

/* Stores the edge rows read so far (rows with a NULL included). */
void
progress_set_rows_read(int64 rows)
{
	ProgressEntry *p = my_entry(false);

	if (p != NULL && p->pid == MyProcPid)
		p->rows_read = rows;
}

/* The rows are read: the graph is being built, here or (on_service) by the GPU service. */
void
progress_begin_build(bool on_service)
{
	ProgressEntry *p = my_entry(false);

	if (p != NULL && p->pid == MyProcPid)
	{
		p->on_service = on_service;
		p->phase = PHASE_BUILDING;
	}
}

/*
 * Starts the iterating part of this backend's run (queued, when on the service): a run that read
 * its table keeps its start time and its rows; any other starts a fresh entry.
 */
void
progress_begin(const char *algorithm, bool on_service, int64 nodes, int64 edges, int columns)
{
	ProgressEntry *p = my_entry(true);
	bool		continued;

	if (p == NULL)
		return;
	continued = p->pid == MyProcPid;
	publish_entry(p, algorithm, on_service ? PHASE_QUEUED : PHASE_ITERATING, on_service,
				  continued ? p->rows_read : -1, continued ? p->rows_estimated : -1,
				  continued ? p->started : GetCurrentTimestamp(), nodes, edges, columns);
}

/* Sets the phase of this backend's run. */
void
progress_set_phase(ProgressPhase phase)
{
	ProgressEntry *p = my_entry(false);

	if (p != NULL)
		p->phase = phase;
}

/* Sets the phase of the run of a request slot's backend (engine process). */
void
progress_set_slot_phase(ServiceSlot *slot, ProgressPhase phase)
{
	ProgressEntry *p = slot_entry(slot);

	if (p != NULL)
		p->phase = phase;
}

/* Clears this backend's progress entry (end of a run, or its ERROR). */
void
progress_end(void)
{
	ProgressEntry *p = my_entry(false);

	if (p != NULL)
		p->pid = 0;
}

/*
 * The driver's progress callback for runs in this backend (arg unused) and, with a slot as arg,
 * in the engine process: stores the iteration and residual.
 */
void
progress_report(void *arg, int iteration, double residual)
{
	ProgressEntry *p = arg != NULL ? slot_entry((ServiceSlot *) arg) : my_entry(false);

	if (p == NULL)
		return;
	p->phase = PHASE_ITERATING;
	p->residual = residual;
	p->iteration = iteration;
}

/* Name of a progress phase. */
const char *
progress_phase_name(int phase)
{
	switch (phase)
	{
		case PHASE_READING:
			return "reading";
		case PHASE_BUILDING:
			return "building";
		case PHASE_QUEUED:
			return "queued";
		case PHASE_PREPARING:
			return "preparing";
		case PHASE_ITERATING:
			return "iterating";
	}
	return "unknown";
}
