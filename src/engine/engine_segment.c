/*
 * engine_segment.c — the engine process maps segments by the name PostgreSQL gives them
 * (shm_open, shmat, open + mmap), not through dsm_attach: the mapping is private to the process,
 * so a backend that leaves never pulls memory from under the engine, and the engine dying never
 * leaves a PostgreSQL reference count behind.
 *
 * Runs in the engine process: no palloc, no elog (see engine.h).
 */
#include "engine/engine.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage/dsm_impl.h"

/*
 * Maps a dynamic shared memory segment by its handle the way PostgreSQL names it, read-write.  A
 * segment carved from the main shared memory (min_dynamic_shared_memory; odd handles) is not
 * mapped: this process inherited the main shared memory at the address every backend uses, so
 * the backend's address and mapped size (address, address_size) are used as they are.  NULL with
 * message on failure.
 */
void *
segment_map(dsm_handle handle, uint64 address, uint64 address_size, size_t *size,
			SegmentMapping *mapping, char *message, size_t message_size)
{
	char		name[64];
	struct stat st;
	void	   *base;
	int			fd;

	*mapping = MAPPED_FILE;
	if (handle & 1)
	{
		if (address == 0 || address_size == 0)
		{
			snprintf(message, message_size,
					 "segment %u lives in the main shared memory but the request gives no address",
					 handle);
			return NULL;
		}
		*size = (size_t) address_size;
		*mapping = MAPPED_MAIN;
		return (void *) (uintptr_t) address;
	}
	if (engine_config->dsm_type == DSM_IMPL_SYSV)
	{
		struct shmid_ds ds;
		int			ident = shmget((key_t) handle, 0, 0);

		if (ident < 0 || shmctl(ident, IPC_STAT, &ds) < 0 ||
			(base = shmat(ident, NULL, 0)) == (void *) -1)
		{
			snprintf(message, message_size, "cannot map System V segment %u: %m", handle);
			return NULL;
		}
		*size = ds.shm_segsz;
		*mapping = MAPPED_SYSV;
		return base;
	}
	if (engine_config->dsm_type == DSM_IMPL_POSIX)
	{
		snprintf(name, sizeof(name), "/PostgreSQL.%u", handle);
		fd = shm_open(name, O_RDWR, 0);
	}
	else if (engine_config->dsm_type == DSM_IMPL_MMAP)
	{
		snprintf(name, sizeof(name), PG_DYNSHMEM_DIR "/" PG_DYNSHMEM_MMAP_FILE_PREFIX "%u",
				 handle);
		fd = open(name, O_RDWR, 0);
	}
	else
	{
		snprintf(message, message_size, "dynamic_shared_memory_type %d is not supported",
				 engine_config->dsm_type);
		return NULL;
	}
	if (fd < 0)
	{
		snprintf(message, message_size, "cannot open segment \"%s\": %m", name);
		return NULL;
	}
	if (fstat(fd, &st) < 0 || st.st_size <= 0)
	{
		snprintf(message, message_size, "cannot size segment \"%s\": %m", name);
		close(fd);
		return NULL;
	}
	base = mmap(NULL, (size_t) st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (base == MAP_FAILED)
	{
		snprintf(message, message_size, "cannot map segment \"%s\": %m", name);
		return NULL;
	}
	*size = (size_t) st.st_size;
	return base;
}

/* Unmaps a segment mapped by segment_map (the main shared memory stays). */
void
segment_unmap(void *base, size_t size, SegmentMapping mapping)
{
	if (base == NULL || mapping == MAPPED_MAIN)
		return;
	if (mapping == MAPPED_SYSV)
		shmdt(base);
	else
		munmap(base, size);
}

/* Unmaps a request's data when it came in a segment (inline data stays in the slot). */
void
segment_release_request(const ServiceRequest *req, char *base, size_t size,
						SegmentMapping mapping)
{
	if (!req->inline_data)
		segment_unmap(base, size, mapping);
}
