/*
 * channel.c — the GPU service's channel in the main shared memory: one request slot per backend
 * (indexed by BackendId) and the service's status.
 *
 * The engine process shares this memory (it is forked from the worker, which inherited it from
 * the postmaster) but takes no lock on it: slot states move by compare-and-swap, the fields a
 * state change publishes are written before it (atomics are full barriers), and wake-ups go
 * through SetLatch (backends) and a futex on the doorbell word (engine process).
 */
#include "channel.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "miscadmin.h"
#include "storage/backendid.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/spin.h"

ServiceShared *service = NULL;

/* Bytes of the channel: the header and one slot per possible backend. */
static Size
service_shmem_size(void)
{
	return add_size(offsetof(ServiceShared, slots),
					mul_size(sizeof(ServiceSlot), MaxBackends));
}

/* Asks the postmaster for the channel's shared memory (the request hook's part). */
void
service_shmem_request(void)
{
	RequestAddinShmemSpace(MAXALIGN(service_shmem_size()));
}

/*
 * Attaches to (or, in the postmaster, creates and clears) the channel (the startup hook's part;
 * the caller holds AddinShmemInitLock).
 */
void
service_shmem_attach(void)
{
	bool		found;
	int			i;

	service = ShmemInitStruct("powerrank gpu service", service_shmem_size(), &found);
	if (!found)
	{
		memset(service, 0, service_shmem_size());
		SpinLockInit(&service->mutex);
		service->state = SERVICE_DOWN;
		pg_atomic_init_u32(&service->engine_ready, 0);
		pg_atomic_init_u64(&service->served, 0);
		pg_atomic_init_u64(&service->failures, 0);
		pg_atomic_init_u64(&service->uploads, 0);
		pg_atomic_init_u64(&service->reuses, 0);
		pg_atomic_init_u64(&service->evictions, 0);
		pg_atomic_init_u64(&service->batches, 0);
		pg_atomic_init_u64(&service->batched_requests, 0);
		pg_atomic_init_u64(&service->batch_iterations, 0);
		pg_atomic_init_u64(&service->batch_microseconds, 0);
		pg_atomic_init_u64(&service->builds, 0);
		pg_atomic_init_u32(&service->resident, 0);
		pg_atomic_init_u64(&service->device_bytes, 0);
		for (i = 0; i < SERVICE_MAX_RESIDENT; i++)
			pg_atomic_init_u64(&service->resident_ids[i], 0);
		pg_atomic_init_u32(&service->doorbell, 0);
		pg_atomic_init_u32(&service->fault, FAULT_NONE);
		pg_atomic_init_u64(&service->swept, 0);
		pg_atomic_init_u32(&service->request_segments, 0);
		service->n_slots = MaxBackends;
		for (i = 0; i < MaxBackends; i++)
		{
			pg_atomic_init_u32(&service->slots[i].state, SLOT_IDLE);
			pg_atomic_init_u32(&service->slots[i].cancel, 0);
		}
	}
}

/* True when the channel exists (the library was preloaded). */
bool
service_available(void)
{
	return service != NULL;
}

/* This backend's slot, or NULL without preload (or in a process without a BackendId). */
ServiceSlot *
service_my_slot(void)
{
	if (service == NULL || MyBackendId == InvalidBackendId || MyBackendId > service->n_slots)
		return NULL;
	return &service->slots[MyBackendId - 1];
}

/* Name of a service state, as powerrank_service shows it. */
const char *
service_state_name(ServiceState state)
{
	switch (state)
	{
		case SERVICE_DOWN:
			return "down";
		case SERVICE_STARTING:
			return "starting";
		case SERVICE_READY:
			return "ready";
		case SERVICE_UNAVAILABLE:
			return "unavailable";
		case SERVICE_RESTARTING:
			return "restarting";
	}
	return "unknown";
}

/*
 * The service's state as backends should see it (and its last error into last_error when not
 * NULL): READY only while the engine process says it is ready — an engine process about to
 * restart clears that before it answers its last request.
 */
ServiceState
service_read_state(char *last_error, size_t size)
{
	ServiceState state;

	SpinLockAcquire(&service->mutex);
	state = service->state;
	if (last_error != NULL)
		strlcpy(last_error, service->last_error, size);
	SpinLockRelease(&service->mutex);
	if (state == SERVICE_READY && pg_atomic_read_u32(&service->engine_ready) == 0)
		state = SERVICE_RESTARTING;
	return state;
}

/*
 * Sets the service state and its last error (worker only): error when not NULL; READY, the
 * service recovered, clears it; any other state keeps the error that led to it.
 */
void
service_set_state(ServiceState state, const char *error)
{
	SpinLockAcquire(&service->mutex);
	service->state = state;
	service->state_since = GetCurrentTimestamp();
	if (error != NULL)
		strlcpy(service->last_error, error, sizeof(service->last_error));
	else if (state == SERVICE_READY)
		service->last_error[0] = '\0';
	SpinLockRelease(&service->mutex);
}

/* True when the engine process holds the cache entry's graph resident (on its device). */
bool
service_graph_resident(uint64 entry_id)
{
	int			i;

	if (service == NULL || entry_id == 0 || pg_atomic_read_u32(&service->engine_ready) == 0)
		return false;
	for (i = 0; i < SERVICE_MAX_RESIDENT; i++)
		if (pg_atomic_read_u64(&service->resident_ids[i]) == entry_id)
			return true;
	return false;
}

/* Wakes every process waiting on a futex word in shared memory. */
void
service_futex_wake(pg_atomic_uint32 *word)
{
	syscall(SYS_futex, (uint32 *) &word->value, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
}

/* Sleeps while *word still equals seen, at most timeout_ms (spurious wake-ups are fine). */
void
service_futex_wait(pg_atomic_uint32 *word, uint32 seen, int timeout_ms)
{
	struct timespec timeout;

	timeout.tv_sec = timeout_ms / 1000;
	timeout.tv_nsec = (long) (timeout_ms % 1000) * 1000000L;
	syscall(SYS_futex, (uint32 *) &word->value, FUTEX_WAIT, seen, &timeout, NULL, 0);
}
