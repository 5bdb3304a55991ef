/*
 * service_engine.c — the engine process of the GPU service: a plain child of the service worker
 * that owns the engine (for the GPU engine: the CUDA context) and serves ranking requests.
 *
 * Rules of this process (it is not a PostgreSQL backend and the postmaster does not know it):
 *  - no palloc, no elog, no PostgreSQL lock: memory comes from malloc, errors go into the slot's
 *    outcome, and the only shared state it touches is the channel (atomics, barriers, futex,
 *    SetLatch, which takes no lock) and the segments it maps itself;
 *  - segments (the cache's graph, the backend's request segment) are mapped by name with
 *    shm_open / shmat / open + mmap, not through dsm_attach: the mapping is private to this
 *    process, so a backend that leaves (ERROR, cancel) never pulls memory from under the engine,
 *    and the engine dying never leaves a PostgreSQL reference count behind;
 *  - it dies with the worker (PR_SET_PDEATHSIG), and exits with _exit (no PostgreSQL exit hooks).
 *
 * Graphs of the cache stay resident between requests: a prepared engine per (cache entry id,
 * with out-edges), least recently used first out when powerrank.gpu_memory is exceeded.
 *
 * Several GPUs: when the GPU engine runs, more than one GPU may be used (powerrank.gpu_devices)
 * and the multi-GPU library (powerrank.gpu_multi_library, pr_multi.h) starts, plain PageRank
 * (uniform restart, one column, norm l1, a cached graph) runs on every GPU through a PrMulti kept
 * beside the resident graph's engine; everything else runs on the single-GPU engine.
 */
#include "service/service.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <unistd.h>

#include "miscadmin.h"
#include "storage/dsm_impl.h"
#include "utils/ps_status.h"

#include "pr_gpu.h"
#include "pr_multi.h"

/* Resident graphs at most (besides the memory limit). */
#define MAX_RESIDENT SERVICE_MAX_RESIDENT

/* How map_segment made a segment visible (and so how to let it go). */
typedef enum SegmentMapping
{
	MAPPED_FILE = 0,			/* mmap of the POSIX or mmap-file segment */
	MAPPED_SYSV,				/* shmat */
	MAPPED_MAIN					/* in the main shared memory, inherited: nothing to undo */
} SegmentMapping;

/* A graph the engine process has mapped, and the engine prepared on it. */
typedef struct Resident
{
	bool		used;
	uint64		entry_id;		/* cache entry id (0: a one-off graph, never kept) */
	dsm_handle	handle;			/* its segment */
	bool		with_out;		/* out-edges added (HITS) */
	void	   *base;			/* the mapping */
	size_t		size;
	SegmentMapping mapping;	/* how it was mapped (how to unmap it) */
	PrGraph		graph;			/* view into the mapping (+ malloc'd out-edges) */
	bool		own_out;
	PrEngine   *engine;
	bool		prepared;
	ServiceAlgorithm prepared_algorithm;
	int			prepared_k;
	bool		quick;			/* engine has the quick layout; the tuned one is planned beside */
	bool		tuner_started;	/* the tuner thread runs (or ended and is not joined yet) */
	pthread_t	tuner;
	pg_atomic_uint32 tuner_done;	/* set by the tuner thread when tuned / tuned_err are written */
	PrEngine   *tuned;			/* the tuner's engine, prepared for PageRank (NULL: it failed) */
	PrError		tuned_err;
	PrEngine   *batch_engine;	/* RWR batches: an engine prepared for config->batch_size columns */
	bool		batch_prepared;
	PrMulti    *multi;			/* the graph prepared on every GPU (plain PageRank), or NULL */
	size_t		multi_bytes;	/* its device bytes, all GPUs */
	bool		multi_failed;	/* the multi-GPU run failed on this graph: one GPU from now on */
	size_t		bytes;
	uint64		last_used;
} Resident;

/* The GPU library's entry points (dlsym). */
typedef struct GpuLibrary
{
	void		(*options_init) (PrGpuOptions *opts);
	PrEngine   *(*engine_create) (const PrGpuOptions *opts, PrError *err);
	PrStatus	(*engine_report) (PrEngine *engine, PrGpuReport *out, PrError *err);
	int			(*device_count) (void);
	PrStatus	(*build_flat) (int device, const int64_t *src, const int64_t *dst, size_t m,
							   bool undirected, void *out, size_t capacity, int n_threads,
							   PrGpuBuildReport *report, PrError *err);	/* NULL: no GPU builds */
} GpuLibrary;

/* The multi-GPU library's entry points (dlsym). */
typedef struct MultiLibrary
{
	void		(*options_init) (PrMultiOptions *opts);
	PrMulti    *(*create) (const PrMultiOptions *opts, PrError *err);
	PrStatus	(*prepare) (PrMulti *m, int64_t n, const int64_t *ptr, const int32_t *col,
							const double *val, const double *out_strength, PrError *err);
	PrStatus	(*pagerank) (PrMulti *m, double alpha, double tolerance, int max_iterations,
							 double *scores, PrMultiRun *run, PrError *err);
	PrStatus	(*report) (PrMulti *m, PrMultiReport *out, PrError *err);
	void		(*free) (PrMulti *m);
	int			(*device_count) (void);
} MultiLibrary;

static const ServiceEngineConfig *config;
static GpuLibrary gpu;
static MultiLibrary multi;
static int	multi_gpus = 0;		/* GPUs plain PageRank runs on (0: the multi library is off) */
static ServiceSlot *current_slot = NULL;	/* the request being served (the multi hooks' target) */
static Resident residents[MAX_RESIDENT];

/*
 * The segment of the last graph build (SERVICE_BUILD), kept mapped for the request that follows
 * it — the same backend's ranking on the graph it just published — so that the graph is not
 * mapped and checked again.  Dropped when any other request comes first.
 */
typedef struct PendingBuild
{
	dsm_handle	handle;
	void	   *base;			/* NULL: none */
	size_t		size;
	SegmentMapping mapping;
	size_t		keep;			/* bytes of the graph; the rest goes back after the answer */
} PendingBuild;

static PendingBuild pending;
static uint64 use_clock = 0;
static pid_t parent_pid;

static size_t resident_bytes(Resident *r, int k, int n_slots);

/* Ends the engine process at once, without PostgreSQL's exit hooks. */
static void
engine_exit(int code)
{
	_exit(code);
}

/* Records why the engine cannot start and exits so that the worker does not retry at once. */
static void
engine_unavailable(const char *message)
{
	strlcpy(service->engine_error, message, sizeof(service->engine_error));
	pg_write_barrier();
	engine_exit(ENGINE_EXIT_UNAVAILABLE);
}

/* Resets what the process inherited from the worker: signal handlers, the signal mask. */
static void
reset_process_state(void)
{
	sigset_t	none;
	int			sig;

	for (sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			signal(sig, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	MyProcPid = getpid();
	parent_pid = getppid();
	set_ps_display("engine process");	/* writes the title buffer only */
	/* die with the worker; it may have died before the call */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent_pid)
		engine_exit(1);
}

/* One line to the server log (this process's stderr, inherited from the postmaster). */
static void
engine_log(const char *message)
{
	fprintf(stderr, "powerrank gpu service engine process: %s\n", message);
	fflush(stderr);
}

/* Opens a shared library (what: its name in the message), or NULL with message set. */
static void *
open_library(const char *path, const char *what, char *message, size_t message_size)
{
	void	   *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (handle == NULL)
		snprintf(message, message_size, "cannot load the %s \"%s\": %s", what, path, dlerror());
	return handle;
}

/* Loads libpowerrank_gpu.so and finds its entry points (false with message on failure). */
static bool
load_gpu_library(char *message, size_t message_size)
{
	void	   *handle = open_library(config->gpu_library, "GPU library", message, message_size);

	if (handle == NULL)
		return false;
	gpu.options_init = (void (*) (PrGpuOptions *)) dlsym(handle, "pr_gpu_options_init");
	gpu.engine_create = (PrEngine * (*) (const PrGpuOptions *, PrError *))
		dlsym(handle, "pr_gpu_engine_create");
	gpu.engine_report = (PrStatus (*) (PrEngine *, PrGpuReport *, PrError *))
		dlsym(handle, "pr_gpu_engine_report");
	gpu.device_count = (int (*) (void)) dlsym(handle, "pr_gpu_device_count");
	gpu.build_flat = (PrStatus (*) (int, const int64_t *, const int64_t *, size_t, bool, void *,
									size_t, int, PrGpuBuildReport *, PrError *))
		dlsym(handle, "pr_gpu_build_flat");	/* optional */
	if (gpu.options_init == NULL || gpu.engine_create == NULL || gpu.engine_report == NULL ||
		gpu.device_count == NULL)
	{
		snprintf(message, message_size, "the GPU library \"%s\" lacks pr_gpu_* entry points",
				 config->gpu_library);
		dlclose(handle);
		return false;
	}
	return true;
}

/* Loads libpowerrank_multi.so and finds its entry points (false with message on failure). */
static bool
load_multi_library(char *message, size_t message_size)
{
	void	   *handle = open_library(config->multi_library, "multi-GPU library", message,
										  message_size);

	if (handle == NULL)
		return false;
	multi.options_init = (void (*) (PrMultiOptions *)) dlsym(handle, "pr_multi_options_init");
	multi.create = (PrMulti * (*) (const PrMultiOptions *, PrError *))
		dlsym(handle, "pr_multi_create");
	multi.prepare = (PrStatus (*) (PrMulti *, int64_t, const int64_t *, const int32_t *,
								   const double *, const double *, PrError *))
		dlsym(handle, "pr_multi_prepare");
	multi.pagerank = (PrStatus (*) (PrMulti *, double, double, int, double *, PrMultiRun *,
									PrError *)) dlsym(handle, "pr_multi_pagerank");
	multi.report = (PrStatus (*) (PrMulti *, PrMultiReport *, PrError *))
		dlsym(handle, "pr_multi_report");
	multi.free = (void (*) (PrMulti *)) dlsym(handle, "pr_multi_free");
	multi.device_count = (int (*) (void)) dlsym(handle, "pr_multi_device_count");
	if (multi.options_init == NULL || multi.create == NULL || multi.prepare == NULL ||
		multi.pagerank == NULL || multi.report == NULL || multi.free == NULL ||
		multi.device_count == NULL)
	{
		snprintf(message, message_size,
				 "the multi-GPU library \"%s\" lacks pr_multi_* entry points",
				 config->multi_library);
		dlclose(handle);
		return false;
	}
	return true;
}

/* should_stop of a multi-GPU run: the current request was cancelled (see request_cancelled). */
static bool multi_cancelled(void *arg);

/* progress of a multi-GPU run: the current request's progress entry. */
static void
multi_progress(void *arg, int iteration, double residual)
{
	progress_report(*(ServiceSlot **) arg, iteration, residual);
}

/* The options of every PrMulti this process creates. */
static void
multi_options(PrMultiOptions *opts)
{
	multi.options_init(opts);
	opts->n_gpus = multi_gpus;
	opts->precision = config->gpu_precision == PR_GPU_FP64 ? PR_MULTI_FP64 : PR_MULTI_FP32;
	opts->should_stop = multi_cancelled;
	opts->stop_arg = &current_slot;
	opts->progress = multi_progress;
	opts->progress_arg = &current_slot;
}

/*
 * Decides whether plain PageRank runs on several GPUs: the GPUs to use (visible ones, capped by
 * powerrank.gpu_devices), the multi library loaded and its communicators created once (then
 * freed: each resident graph gets its own PrMulti).  Any failure is logged once and leaves one
 * GPU in use; it never stops the service.
 */
static void
start_multi(const char *device)
{
	char		message[SERVICE_MESSAGE_LEN];
	PrMultiOptions opts;
	PrError		err = {0};
	PrMulti    *probe;
	int			n = gpu.device_count();

	multi_gpus = 0;
	if (config->gpu_devices > 0 && config->gpu_devices < n)
		n = config->gpu_devices;
	if (n > PR_MULTI_MAX_GPUS)
		n = PR_MULTI_MAX_GPUS;
	if (n < 2)
		return;
	if (!load_multi_library(message, sizeof(message)))
	{
		char		line[SERVICE_MESSAGE_LEN + 64];

		snprintf(line, sizeof(line), "%s; PageRank runs on one GPU", message);
		engine_log(line);
		return;
	}
	multi_gpus = n;
	multi_options(&opts);
	probe = multi.create(&opts, &err);
	if (probe == NULL)
	{
		char		line[SERVICE_MESSAGE_LEN + 64];

		multi_gpus = 0;
		snprintf(line, sizeof(line), "the multi-GPU library does not start on %d GPUs: %s; PageRank runs on one GPU",
				 n, err.message);
		engine_log(line);
		return;
	}
	multi.free(probe);
	snprintf(service->device_name, sizeof(service->device_name),
			 "%d x %s (devices 0-%d; other algorithms: device %d)", n, device, n - 1,
			 config->gpu_device);
}

/*
 * Creates one engine of the configured kind (NULL with err set on failure); quick asks the GPU
 * engine for the quick layout (row-binned, natural ids) instead of the configured kernel.
 */
static PrEngine *
create_engine_layout(bool quick, PrError *err)
{
	PrGpuOptions opts;

	if (config->kind == SERVICE_ENGINE_CPU_TEST)
		return pr_cpu_engine_create(config->cpu_threads, &pr_malloc_allocator, err);
	gpu.options_init(&opts);
	opts.device = config->gpu_device;
	opts.precision = (PrGpuPrecision) config->gpu_precision;
	opts.kernel = quick ? PR_GPU_KERNEL_BINNED : (PrGpuKernel) config->gpu_kernel;
	if (quick)
		opts.relabel = false;
	opts.memory_budget = (size_t) config->memory_limit;
	return gpu.engine_create(&opts, err);
}

/* Creates one engine of the configured kind and kernel (NULL with err set on failure). */
static PrEngine *
create_engine(PrError *err)
{
	return create_engine_layout(false, err);
}

/*
 * Starts the engine: loads the GPU library, checks for a device and prepares a two-node graph
 * (creates the device context now rather than on the first request, and names the device).
 * Publishes the engine and device names; exits UNAVAILABLE when no engine can run.
 */
static void
start_engine(void)
{
	char		message[SERVICE_MESSAGE_LEN];
	PrError		err = {0};

	if (config->kind == SERVICE_ENGINE_CPU_TEST)
	{
		strlcpy(service->engine_name, "cpu-test", sizeof(service->engine_name));
		snprintf(service->device_name, sizeof(service->device_name),
				 "CPU engine in the service process (%d threads; test engine)",
				 config->cpu_threads);
	}
	else
	{
		static const int64_t src[] = {1, 2};
		static const int64_t dst[] = {2, 1};
		PrBuildOptions build = {0};
		PrGraph		tiny;
		PrGpuReport report;
		PrEngine   *probe;

		if (!load_gpu_library(message, sizeof(message)))
			engine_unavailable(message);
		if (gpu.device_count() <= config->gpu_device)
		{
			snprintf(message, sizeof(message), "no CUDA device %d (%d found)",
					 config->gpu_device, gpu.device_count());
			engine_unavailable(message);
		}
		probe = create_engine(&err);
		if (probe == NULL)
			engine_unavailable(err.message);
		memset(&tiny, 0, sizeof(tiny));
		build.n_threads = 1;
		if (pr_graph_build(src, dst, NULL, 2, &build, &pr_malloc_allocator, &tiny, &err) != PR_OK ||
			probe->ops->prepare(probe, &tiny, 1, 2, PR_NEED_PULL_NORMALIZED, &err) != PR_OK ||
			gpu.engine_report(probe, &report, &err) != PR_OK)
		{
			snprintf(message, sizeof(message), "the GPU engine does not start: %s", err.message);
			engine_unavailable(message);
		}
		strlcpy(service->engine_name, "gpu", sizeof(service->engine_name));
		snprintf(service->device_name, sizeof(service->device_name), "%s (device %d)",
				 report.device, config->gpu_device);
		probe->ops->release(probe);
		pr_graph_free(&tiny, &pr_malloc_allocator);
		start_multi(report.device);
	}
	service->has_device = true;
	service->engine_error[0] = '\0';
	pg_atomic_write_u32(&service->engine_ready, 1);
}

/*
 * Maps a dynamic shared memory segment by its handle the way PostgreSQL names it, read-write.  A
 * segment carved from the main shared memory (min_dynamic_shared_memory; odd handles) is not
 * mapped: this process inherited the main shared memory at the address every backend uses, so
 * the backend's address and mapped size (address, address_size) are used as they are.  NULL with
 * message on failure.
 */
static void *
map_segment(dsm_handle handle, uint64 address, uint64 address_size, size_t *size,
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
	if (config->dsm_type == DSM_IMPL_SYSV)
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
	if (config->dsm_type == DSM_IMPL_POSIX)
	{
		snprintf(name, sizeof(name), "/PostgreSQL.%u", handle);
		fd = shm_open(name, O_RDWR, 0);
	}
	else if (config->dsm_type == DSM_IMPL_MMAP)
	{
		snprintf(name, sizeof(name), PG_DYNSHMEM_DIR "/" PG_DYNSHMEM_MMAP_FILE_PREFIX "%u",
				 handle);
		fd = open(name, O_RDWR, 0);
	}
	else
	{
		snprintf(message, message_size, "dynamic_shared_memory_type %d is not supported",
				 config->dsm_type);
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

/* Unmaps a segment mapped by map_segment (the main shared memory stays). */
static void
unmap_segment(void *base, size_t size, SegmentMapping mapping)
{
	if (base == NULL || mapping == MAPPED_MAIN)
		return;
	if (mapping == MAPPED_SYSV)
		shmdt(base);
	else
		munmap(base, size);
}

/* Unmaps a request's data when it came in a segment (inline data stays in the slot). */
static void
release_request_data(const ServiceRequest *req, char *base, size_t size, SegmentMapping mapping)
{
	if (!req->inline_data)
		unmap_segment(base, size, mapping);
}

/* Frees a resident graph's multi-GPU copy (its device memory on every GPU). */
static void
multi_release(Resident *r)
{
	if (r->multi != NULL)
		multi.free(r->multi);
	r->multi = NULL;
	r->multi_bytes = 0;
}

/* The tuner thread: plans and uploads the tuned layout of a resident graph for PageRank. */
static void *
tuner_main(void *arg)
{
	Resident   *r = (Resident *) arg;
	PrError		err = {0};
	PrEngine   *e = create_engine_layout(false, &err);

	if (e != NULL && pr_pagerank_prepare(e, &r->graph, 1, &err) != PR_OK)
	{
		e->ops->release(e);
		e = NULL;
	}
	r->tuned = e;
	r->tuned_err = err;
	pg_write_barrier();
	pg_atomic_write_u32(&r->tuner_done, 1);
	return NULL;
}

/* Starts planning the tuned layout of a resident graph whose engine has the quick one. */
static void
tuner_start(Resident *r)
{
	if (!r->quick || r->tuner_started)
		return;
	pg_atomic_init_u32(&r->tuner_done, 0);
	r->tuned = NULL;
	if (pthread_create(&r->tuner, NULL, tuner_main, r) != 0)
	{
		engine_log("could not start the thread that plans a graph's tuned GPU layout; the quick layout stays");
		r->quick = false;
		return;
	}
	r->tuner_started = true;
}

/*
 * Joins a resident graph's tuner thread (waiting for it when wait, else only when it is done) and
 * adopts its engine when the graph is still prepared for one-column PageRank: the quick engine is
 * released.  Otherwise the tuned engine is dropped and the quick layout stays.
 */
static void
tuner_finish(Resident *r, bool wait)
{
	char		line[SERVICE_MESSAGE_LEN + 128];

	if (!r->tuner_started || (!wait && pg_atomic_read_u32(&r->tuner_done) == 0))
		return;
	(void) pthread_join(r->tuner, NULL);
	pg_read_barrier();
	r->tuner_started = false;
	r->quick = false;
	if (r->tuned == NULL)
	{
		snprintf(line, sizeof(line), "the tuned GPU layout of cached graph %llu failed (%s); the quick layout stays",
				 (unsigned long long) r->entry_id, r->tuned_err.message);
		engine_log(line);
		return;
	}
	if (!wait && r->engine != NULL && r->prepared && r->prepared_algorithm == SERVICE_PAGERANK &&
		r->prepared_k == 1)
	{
		r->engine->ops->release(r->engine);
		r->engine = r->tuned;
		r->tuned = NULL;
		r->bytes = resident_bytes(r, 1, 2);
		return;
	}
	r->tuned->ops->release(r->tuned);
	r->tuned = NULL;
}

/* Adopts the tuned layouts that are ready. */
static void
tuners_poll(void)
{
	for (int i = 0; i < MAX_RESIDENT; i++)
		if (residents[i].used)
			tuner_finish(&residents[i], false);
}

/* Frees everything a resident entry holds and empties it. */
static void
resident_free(Resident *r)
{
	tuner_finish(r, true);
	if (r->engine != NULL)
		r->engine->ops->release(r->engine);
	if (r->batch_engine != NULL)
		r->batch_engine->ops->release(r->batch_engine);
	multi_release(r);
	if (r->own_out)
	{
		pr_free(&pr_malloc_allocator, r->graph.out_ptr);
		pr_free(&pr_malloc_allocator, r->graph.out_dst);
		pr_free(&pr_malloc_allocator, r->graph.out_weight);
	}
	unmap_segment(r->base, r->size, r->mapping);
	memset(r, 0, sizeof(Resident));
}

/* Recomputes the resident counters the status view shows. */
static void
publish_residency(void)
{
	uint64		bytes = 0;
	uint32		count = 0;
	int			i;

	for (i = 0; i < MAX_RESIDENT; i++)
	{
		pg_atomic_write_u64(&service->resident_ids[i],
							residents[i].used ? residents[i].entry_id : 0);
		if (residents[i].used)
		{
			count++;
			bytes += residents[i].bytes;
		}
	}
	pg_atomic_write_u32(&service->resident, count);
	pg_atomic_write_u64(&service->device_bytes, bytes);
}

/* Evicts one resident entry (counted). */
static void
evict(Resident *r)
{
	resident_free(r);
	pg_atomic_fetch_add_u64(&service->evictions, 1);
}

/*
 * Evicts least recently used entries other than keep until the resident bytes fit under the
 * memory limit (0: no limit) — or, with everything true, all of them but keep.
 */
static void
evict_to_fit(const Resident *keep, bool everything)
{
	for (;;)
	{
		uint64		total = 0;
		Resident   *lru = NULL;
		int			i;

		for (i = 0; i < MAX_RESIDENT; i++)
		{
			Resident   *r = &residents[i];

			if (!r->used)
				continue;
			total += r->bytes;
			if (r != keep && (lru == NULL || r->last_used < lru->last_used))
				lru = r;
		}
		if (lru == NULL)
			break;
		if (!everything && (config->memory_limit <= 0 || total <= (uint64) config->memory_limit))
			break;
		evict(lru);
	}
	publish_residency();
}

/* The resident entry of a cache entry, or NULL. */
static Resident *
resident_find(uint64 entry_id, bool with_out)
{
	int			i;

	for (i = 0; i < MAX_RESIDENT; i++)
		if (residents[i].used && residents[i].entry_id == entry_id &&
			residents[i].with_out == with_out)
			return &residents[i];
	return NULL;
}

/* A free resident entry, evicting the least recently used one when all are taken. */
static Resident *
resident_slot(void)
{
	Resident   *lru = NULL;
	int			i;

	for (i = 0; i < MAX_RESIDENT; i++)
	{
		if (!residents[i].used)
			return &residents[i];
		if (lru == NULL || residents[i].last_used < lru->last_used)
			lru = &residents[i];
	}
	evict(lru);
	return lru;
}

/*
 * Drops resident graphs whose cache segment is gone (evicted from the cache, table changed):
 * no request can name them again.  Only for POSIX segments, whose names can be probed; others
 * leave by LRU.
 */
static void
drop_vanished(void)
{
	char		name[64];
	int			i;

	if (config->dsm_type != DSM_IMPL_POSIX)
		return;
	for (i = 0; i < MAX_RESIDENT; i++)
	{
		Resident   *r = &residents[i];
		int			fd;

		if (!r->used || r->mapping == MAPPED_MAIN)
			continue;			/* no name to look for: LRU lets it go */
		snprintf(name, sizeof(name), "/PostgreSQL.%u", r->handle);
		fd = shm_open(name, O_RDONLY, 0);
		if (fd >= 0)
			close(fd);
		else if (errno == ENOENT)
			evict(r);
	}
	publish_residency();
}

/*
 * Bytes a prepared entry holds: the GPU engines' reports plus the multi-GPU copy's device bytes,
 * or host memory for the CPU engine (its vectors: k columns, n_slots slots; the batch engine's
 * two slots of config->batch_size columns).
 */
static size_t
resident_bytes(Resident *r, int k, int n_slots)
{
	PrGpuReport report;
	PrError		err = {0};
	size_t		bytes;

	if (config->kind == SERVICE_ENGINE_GPU)
	{
		bytes = r->multi_bytes;
		if (r->engine != NULL && gpu.engine_report(r->engine, &report, &err) == PR_OK)
			bytes += report.total_bytes;
		if (r->batch_engine != NULL && gpu.engine_report(r->batch_engine, &report, &err) == PR_OK)
			bytes += report.total_bytes;
		return bytes;
	}
	bytes = r->size + (size_t) r->graph.n_nodes * (size_t) k * (size_t) n_slots * sizeof(double);
	if (r->batch_engine != NULL)
		bytes += (size_t) r->graph.n_nodes * (size_t) config->batch_size * 2 * sizeof(double);
	if (r->own_out)
		bytes += (size_t) r->graph.n_edges * (sizeof(int32_t) + (r->graph.weighted ? 8 : 0)) +
			(size_t) (r->graph.n_nodes + 1) * sizeof(int64_t);
	return bytes;
}

/* Sets a failed outcome. */
static void
fail(ServiceOutcome *out, PrStatus status, const char *message)
{
	out->status = status == PR_OK ? PR_ERR_ENGINE : status;
	strlcpy(out->message, message, sizeof(out->message));
}

/* should_stop of the driver: the backend asked to cancel, or the worker is gone. */
static bool
request_cancelled(void *arg)
{
	ServiceSlot *slot = (ServiceSlot *) arg;

	return pg_atomic_read_u32(&slot->cancel) != 0 || getppid() != parent_pid;
}

/* should_stop of a multi-GPU run: arg points to current_slot. */
static bool
multi_cancelled(void *arg)
{
	ServiceSlot *slot = *(ServiceSlot **) arg;

	return slot != NULL && request_cancelled(slot);
}

/*
 * Finds or makes the resident entry serving a request's graph: the cache segment (kept between
 * requests) or the graph inside the request segment (a one-off entry, freed after the run).
 */
static Resident *
graph_for_request(const ServiceRequest *req, char *request_base, size_t request_size,
				  Resident *one_off, ServiceOutcome *out)
{
	bool		with_out = req->algorithm == SERVICE_HITS;
	bool		trusted;
	char		message[SERVICE_MESSAGE_LEN];
	Resident   *r;
	PrError		err = {0};

	if (req->graph_cached)
	{
		r = resident_find(req->graph_entry_id, with_out);
		if (r != NULL)
			return r;
		r = resident_slot();
		trusted = pending.base != NULL && pending.handle == req->graph_handle;
		if (trusted)
		{
			/* the graph this process just built: already mapped, and checked when written */
			r->base = pending.base;
			r->size = pending.size;
			r->mapping = pending.mapping;
			pending.base = NULL;
		}
		else
			r->base = map_segment(req->graph_handle, req->graph_address, req->graph_mapped_size,
								  &r->size, &r->mapping, message, sizeof(message));
		if (r->base == NULL)
		{
			fail(out, PR_ERR_INVALID, message);
			return NULL;
		}
		r->used = true;
		r->entry_id = req->graph_entry_id;
		r->handle = req->graph_handle;
		r->with_out = with_out;
		if ((trusted ? pr_graph_view_flat_header(r->base, r->size, &r->graph, &err)
			 : pr_graph_view_flat_threads(r->base, r->size, pr_thread_count(config->cpu_threads, 16),
										  &r->graph, &err)) != PR_OK)
		{
			resident_free(r);
			fail(out, PR_ERR_INVALID, err.message);
			return NULL;
		}
	}
	else
	{
		const ServiceRequestHeader *h = (const ServiceRequestHeader *) request_base;

		r = one_off;
		memset(r, 0, sizeof(Resident));
		r->used = true;
		if (h->off_graph == 0 || h->off_graph + h->graph_size > request_size ||
			pr_graph_view_flat(request_base + h->off_graph, h->graph_size, &r->graph, &err) != PR_OK)
		{
			fail(out, PR_ERR_INVALID, err.message[0] ? err.message : "request graph is missing");
			return NULL;
		}
	}
	if (r->graph.n_nodes != req->n_nodes || r->graph.n_edges != req->n_edges)
	{
		fail(out, PR_ERR_INVALID, "the mapped graph does not match the request");
		if (r != one_off)
			resident_free(r);
		return NULL;
	}
	if (with_out && !r->graph.has_out_edges)
	{
		if (pr_graph_add_out_edges(&r->graph, &pr_malloc_allocator, &err) != PR_OK)
		{
			fail(out, err.status, err.message);
			if (r != one_off)
				resident_free(r);
			return NULL;
		}
		r->own_out = true;
	}
	return r;
}

/*
 * The driver's iteration settings of a request: its tolerance, norm and limit, the residual read
 * every iteration, should_stop and progress called with arg.
 */
static void
iteration_options(const ServiceRequest *req, bool (*should_stop) (void *),
				  void (*progress) (void *, int, double), void *arg, PrIterOptions *iter)
{
	memset(iter, 0, sizeof(*iter));
	iter->tolerance = req->tolerance;
	iter->norm = (PrNorm) req->norm;
	iter->max_iterations = req->max_iterations;
	iter->warm_start = req->warm_start;
	iter->check_every = 1;
	iter->should_stop = should_stop;
	iter->stop_arg = arg;
	iter->progress = progress;
	iter->progress_arg = arg;
}

/* Runs the driver for a request on a resident entry; fills the outcome. */
static PrStatus
run_driver(ServiceSlot *slot, Resident *r, char *request_base, PrError *err,
		   PrRunStats *stats)
{
	const ServiceRequest *req = &slot->request;
	const ServiceRequestHeader *h = (const ServiceRequestHeader *) request_base;
	double	   *result = (double *) (request_base + h->off_result);
	PrIterOptions iter;
	PrRestart	restart;

	iteration_options(req, request_cancelled, progress_report, slot, &iter);

	if (r->engine == NULL)
	{
		/*
		 * A large cached graph's first PageRank (powerrank.gpu_quick_layout_edges): the quick
		 * layout (row-binned CSR in natural ids: no model, no relabelling) now, and the tuned
		 * layout (the configured kernel, the model's choice) planned beside in a thread, which
		 * replaces it when ready: planning R-MAT 24 takes seconds that the first call should not
		 * wait for.  The cpu-test engine takes the same path (its two engines are alike), so
		 * that CI exercises the thread and the swap.
		 */
		r->quick = config->quick_layout_edges >= 0 &&
			(config->kind == SERVICE_ENGINE_CPU_TEST || config->gpu_kernel == PR_GPU_KERNEL_AUTO) &&
			r->entry_id != 0 && req->algorithm == SERVICE_PAGERANK && req->k == 1 &&
			r->graph.n_edges >= config->quick_layout_edges;
		if ((r->engine = create_engine_layout(r->quick, err)) == NULL)
			return err->status == PR_OK ? PR_ERR_ENGINE : err->status;
	}
	slot->progress.phase = PHASE_PREPARING;
	if (req->algorithm == SERVICE_HITS)
		return pr_hits(r->engine, &r->graph, &iter, result, result + req->n_nodes, stats, err);

	memset(&restart, 0, sizeof(restart));
	restart.uniform = req->restart_uniform;
	restart.k = req->k;
	if (!req->restart_uniform)
	{
		restart.ptr = (const int64_t *) (request_base + h->off_restart_ptr);
		restart.node = (const int32_t *) (request_base + h->off_restart_node);
		restart.weight = (const double *) (request_base + h->off_restart_weight);
	}
	if (req->top_k > 0)
		return pr_pagerank_top(r->engine, &r->graph, req->alpha, &restart, &iter, req->top_k,
							   (int32_t *) (request_base + h->off_result_index), result, stats,
							   err);
	return pr_pagerank(r->engine, &r->graph, req->alpha, &restart, &iter, result, stats, err);
}

/*
 * Whether a request runs on every GPU: plain PageRank (uniform restart, one column, norm l1) on
 * a cached graph, the multi library on, and a graph the multi library computes exactly as the
 * driver does (fp64 vectors only for unweighted graphs; see pr_multi.h).  Start 1/n, dangling
 * mass spread uniformly, stop on sum |x' - x| < tolerance checked every iteration, at most
 * max_iterations: pr_multi_pagerank is pr_pagerank with a uniform restart.
 */
static bool
multi_eligible(const ServiceRequest *req, const Resident *r, const Resident *one_off)
{
	return multi_gpus > 1 && r != one_off && !r->multi_failed &&
		req->algorithm == SERVICE_PAGERANK && req->restart_uniform && req->k == 1 &&
		req->norm == PR_NORM_L1 && req->alpha >= 0.0 && req->alpha <= 1.0 &&
		req->tolerance > 0.0 && req->max_iterations > 0 && r->graph.n_nodes >= multi_gpus &&
		(config->gpu_precision != PR_GPU_FP64 || !r->graph.weighted);
}

/*
 * Runs plain PageRank on every GPU: prepares the resident graph's PrMulti on first use, runs it,
 * and writes the request's result area as the driver does (all n scores, or the top_k best
 * ranked by pr_top_k: larger first, ties to the smaller id).  Fills stats.
 */
static PrStatus
run_multi(ServiceSlot *slot, Resident *r, char *request_base, PrError *err, PrRunStats *stats)
{
	const ServiceRequest *req = &slot->request;
	const ServiceRequestHeader *h = (const ServiceRequestHeader *) request_base;
	double	   *result = (double *) (request_base + h->off_result);
	double	   *scores = result;
	int64_t		n = r->graph.n_nodes;
	double		t0 = pr_clock_seconds();
	PrMultiRun	run;
	PrStatus	status;

	memset(stats, 0, sizeof(*stats));
	if (r->multi == NULL)
	{
		PrMultiOptions opts;
		PrMultiReport report;

		slot->progress.phase = PHASE_PREPARING;
		multi_options(&opts);
		if ((r->multi = multi.create(&opts, err)) == NULL)
			return err->status == PR_OK ? PR_ERR_ENGINE : err->status;
		status = multi.prepare(r->multi, n, r->graph.in_ptr, r->graph.in_src, r->graph.in_weight,
							   r->graph.out_strength, err);
		if (status == PR_OK)
			status = multi.report(r->multi, &report, err);
		if (status != PR_OK)
		{
			multi_release(r);
			return status;
		}
		r->multi_bytes = 0;
		for (int g = 0; g < report.n_gpus; g++)
			r->multi_bytes += report.device_bytes[g];
		stats->prepare_seconds = pr_clock_seconds() - t0;
	}
	if (req->top_k > 0 &&
		(scores = (double *) pr_alloc_array(&pr_malloc_allocator, (size_t) n,
											sizeof(double))) == NULL)
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory for %lld scores", (long long) n);
	status = multi.pagerank(r->multi, req->alpha, req->tolerance, req->max_iterations, scores,
							&run, err);
	if (status == PR_OK && req->top_k > 0)
	{
		pr_top_k_values(scores, n, 1, 0, req->top_k,
						(int32_t *) (request_base + h->off_result_index), result,
						&pr_malloc_allocator);
	}
	if (scores != result)
		pr_free(&pr_malloc_allocator, scores);
	stats->iterations = run.iterations;
	stats->residual = run.residual;
	stats->converged = run.converged;
	stats->seconds = pr_clock_seconds() - t0;
	return status;
}

/* Checks that the request's data is what the request says (sizes, offsets in range). */
static bool
request_segment_valid(const ServiceRequest *req, const char *base, size_t size)
{
	const ServiceRequestHeader *h = (const ServiceRequestHeader *) base;
	uint64		result_ids = service_result_ids(req);

	if (size < sizeof(ServiceRequestHeader) || h->magic != SERVICE_REQUEST_MAGIC ||
		h->total_size > size || req->top_k < 0 || (req->inline_data && !req->graph_cached))
		return false;
	if (h->off_result == 0 ||
		h->off_result + service_result_values(req) * sizeof(double) > h->total_size)
		return false;
	if (result_ids > 0 &&
		(h->off_result_index == 0 ||
		 h->off_result_index + result_ids * sizeof(int32) > h->total_size))
		return false;
	if (!req->restart_uniform &&
		(h->off_restart_ptr + (uint64) (req->k + 1) * sizeof(int64) > h->total_size ||
		 h->off_restart_node + (uint64) req->restart_entries * sizeof(int32) > h->total_size ||
		 h->off_restart_weight + (uint64) req->restart_entries * sizeof(double) > h->total_size))
		return false;
	return true;
}

/* Carries out an injected fault (powerrank_service_inject_fault): its status, or PR_OK. */
static PrStatus
inject_fault(ServiceOutcome *out, ServiceFault fault)
{
	switch (fault)
	{
		case FAULT_ENGINE_ERROR:
			fail(out, PR_ERR_ENGINE, "injected engine failure (powerrank_service_inject_fault)");
			return PR_ERR_ENGINE;
		case FAULT_OUT_OF_MEMORY:
			fail(out, PR_ERR_NOMEM,
				 "injected out of device memory (powerrank_service_inject_fault)");
			return PR_ERR_NOMEM;
		case FAULT_CRASH:
			raise(SIGKILL);
			break;
		case FAULT_GATHER:		/* handled by the main loop (batches) */
		case FAULT_NONE:
			break;
	}
	return PR_OK;
}

/*
 * Gives the rest of the last build's segment, past its graph, back to the system (MADV_REMOVE):
 * after the answer is published, so that the caller does not wait for it.
 */
static void
pending_trim(void)
{
	double		t0 = pr_clock_seconds();
	char		line[160];

	if (pending.base == NULL || pending.keep >= pending.size || pending.mapping == MAPPED_MAIN)
		return;					/* the main shared memory stays as it was preallocated */
	if (madvise((char *) pending.base + pending.keep, pending.size - pending.keep, MADV_REMOVE) != 0)
		snprintf(line, sizeof(line), "could not give back %zu bytes of a build segment: %m",
				 pending.size - pending.keep);
	else
		snprintf(line, sizeof(line), "gave back %zu MB of a build segment in %.1f ms",
				 (pending.size - pending.keep) >> 20, (pr_clock_seconds() - t0) * 1000.0);
	engine_log(line);
	pending.keep = pending.size;
}

/* Unmaps the last build's segment when no request took it. */
static void
pending_drop(void)
{
	if (pending.base != NULL)
		unmap_segment(pending.base, pending.size, pending.mapping);
	pending.base = NULL;
}

/*
 * The cpu-test engine's build: pr_graph_build of the rows, written in flat form over them at base
 * (capacity bytes).  Sets flat_bytes, counts and whether the rows were overwritten.
 */
static PrStatus
cpu_build_flat(const int64_t *src, const int64_t *dst, size_t rows, bool undirected, void *base,
			   size_t capacity, ServiceOutcome *out, PrError *err)
{
	PrBuildOptions options;
	PrGraph		g;
	PrStatus	status;

	memset(&options, 0, sizeof(options));
	options.undirected = undirected;
	options.n_threads = pr_thread_count(config->cpu_threads, 64);
	if ((status = pr_graph_build(src, dst, NULL, rows, &options, &pr_malloc_allocator, &g,
								 err)) != PR_OK)
		return status;
	out->built_nodes = g.n_nodes;
	out->built_edges = g.n_edges;
	out->built_bytes = pr_graph_flat_size(&g);
	if (out->built_bytes > capacity)
		status = pr_error_set(err, PR_ERR_TOO_LARGE,
							  "the built graph needs %llu bytes, the segment has %zu",
							  (unsigned long long) out->built_bytes, capacity);
	else
	{
		out->rows_intact = false;
		pr_graph_write_flat_threads(&g, base, options.n_threads);
	}
	pr_graph_free(&g, &pr_malloc_allocator);
	return status;
}

/*
 * Builds a graph from the rows in a backend's segment (SERVICE_BUILD): on the GPU with the
 * library's pr_gpu_build_flat, with pr_graph_build for the cpu-test engine.  The flat graph is
 * written over the rows at the segment's start and the mapping is kept for the request that
 * follows (pending); the rest of the segment is given back once the answer is out (pending_trim:
 * the cache counts only the graph).  PR_ERR_ENGINE (a CUDA failure) restarts the process as for
 * rankings.
 */
static PrStatus
serve_build(ServiceSlot *slot, ServiceFault fault)
{
	const ServiceRequest *req = &slot->request;
	ServiceOutcome *out = &slot->outcome;
	char		message[SERVICE_MESSAGE_LEN];
	char	   *base;
	size_t		size;
	SegmentMapping mapping;
	const int64_t *src,
			   *dst;
	PrError		err = {0};
	PrStatus	status;
	double		started = pr_clock_seconds(),
				mapped;

	memset(out, 0, sizeof(ServiceOutcome));
	out->request_id = req->request_id;
	out->rows_intact = true;
	if ((status = inject_fault(out, fault)) != PR_OK)
		return status;
	pending_drop();
	base = map_segment(req->graph_handle, req->graph_address, req->graph_mapped_size, &size,
					   &mapping, message, sizeof(message));
	if (base == NULL)
	{
		fail(out, PR_ERR_INVALID, message);
		return PR_ERR_INVALID;
	}
	mapped = pr_clock_seconds();
	if (req->build_rows > req->build_capacity ||
		req->build_capacity > size / (2 * sizeof(int64_t)))
	{
		unmap_segment(base, size, mapping);
		fail(out, PR_ERR_INVALID, "malformed build request");
		return PR_ERR_INVALID;
	}
	src = (const int64_t *) base;
	dst = (const int64_t *) base + req->build_capacity;
	slot->progress.phase = PHASE_PREPARING;
	if (config->kind != SERVICE_ENGINE_GPU)
	{
		status = cpu_build_flat(src, dst, req->build_rows, req->build_undirected, base, size, out,
								&err);
		strlcpy(out->engine, "cpu-test via service", sizeof(out->engine));
	}
	else if (gpu.build_flat == NULL)
		status = pr_error_set(&err, PR_ERR_UNSUPPORTED,
							  "the GPU library \"%s\" cannot build graphs (no pr_gpu_build_flat)",
							  config->gpu_library);
	else
	{
		PrGpuBuildReport report;

		status = gpu.build_flat(config->gpu_device, src, dst, req->build_rows,
								req->build_undirected, base, size,
								pr_thread_count(config->cpu_threads, 16), &report, &err);
		out->built_nodes = report.n_nodes;
		out->built_edges = report.n_edges;
		out->built_bytes = report.flat_size;
		out->rows_intact = !report.wrote_output;
		out->build_times[0] = report.upload_seconds;
		out->build_times[1] = report.ids_seconds;
		out->build_times[2] = report.sort_seconds;
		out->build_times[3] = report.download_seconds;
		strlcpy(out->engine, "gpu-build", sizeof(out->engine));
	}
	if (status != PR_OK)
	{
		unmap_segment(base, size, mapping);
		fail(out, status, err.message[0] ? err.message : pr_status_name(status));
		return status;
	}
	{
		size_t		page = (size_t) sysconf(_SC_PAGESIZE);
		char		line[320];

		out->seconds = pr_clock_seconds() - started;
		snprintf(line, sizeof(line),
				 "graph of %lld nodes, %lld edges built from %llu rows in %.1f ms (map %.1f, build %.1f: upload %.1f, ids %.1f, sort %.1f, download %.1f)",
				 (long long) out->built_nodes, (long long) out->built_edges,
				 (unsigned long long) req->build_rows, out->seconds * 1000.0,
				 (mapped - started) * 1000.0, (pr_clock_seconds() - mapped) * 1000.0,
				 out->build_times[0] * 1000.0, out->build_times[1] * 1000.0,
				 out->build_times[2] * 1000.0, out->build_times[3] * 1000.0);
		engine_log(line);
		pending.keep = (out->built_bytes + page - 1) / page * page;
	}
	pg_atomic_fetch_add_u64(&service->builds, 1);
	pending.handle = req->graph_handle;
	pending.base = base;
	pending.size = size;
	pending.mapping = mapping;
	return PR_OK;
}

/*
 * Serves one request: maps the request segment, finds (or maps and prepares) the graph, runs the
 * driver into the request segment, fills the outcome.  Returns the status; PR_ERR_ENGINE from a
 * real engine means the device context may be broken (the caller then exits).
 */
static PrStatus
serve(ServiceSlot *slot, ServiceFault fault)
{
	const ServiceRequest *req = &slot->request;
	ServiceOutcome *out = &slot->outcome;
	char		message[SERVICE_MESSAGE_LEN];
	char	   *request_base;
	size_t		request_size;
	SegmentMapping request_mapping;
	double		map_seconds;
	Resident	one_off;
	Resident   *r;
	PrRunStats	stats;
	PrError		err = {0};
	PrStatus	status = PR_OK;
	bool		resident;
	bool		use_multi;

	if (req->algorithm == SERVICE_BUILD)
		return serve_build(slot, fault);
	memset(out, 0, sizeof(ServiceOutcome));
	out->request_id = req->request_id;
	memset(&stats, 0, sizeof(stats));

	if ((status = inject_fault(out, fault)) != PR_OK)
		return status;

	if (req->inline_data)
	{
		/* a small request: its data is in the slot, nothing to map */
		request_base = (char *) slot->inline_data;
		request_size = sizeof(slot->inline_data);
		request_mapping = MAPPED_FILE;
	}
	else
	{
		request_base = map_segment(req->request_handle, req->request_address, req->request_size,
								   &request_size, &request_mapping, message,
								   sizeof(message));
		if (request_base == NULL)
		{
			fail(out, PR_ERR_INVALID, message);	/* the backend may have left: not a device failure */
			return PR_ERR_INVALID;
		}
	}
	if (!request_segment_valid(req, request_base, request_size))
	{
		release_request_data(req, request_base, request_size, request_mapping);
		fail(out, PR_ERR_INVALID, "malformed request segment");
		return PR_ERR_INVALID;
	}

	drop_vanished();
	map_seconds = pr_clock_seconds();
	r = graph_for_request(req, request_base, request_size, &one_off, out);
	map_seconds = pr_clock_seconds() - map_seconds;
	if (r == NULL)
	{
		release_request_data(req, request_base, request_size, request_mapping);
		return out->status;
	}
	r->last_used = ++use_clock;
	tuner_finish(r, false);
	current_slot = slot;

	use_multi = multi_eligible(req, r, &one_off);
	resident = use_multi ? r->multi != NULL :
		(r->prepared && r->prepared_algorithm == req->algorithm && r->prepared_k == req->k);
	if (use_multi)
	{
		status = run_multi(slot, r, request_base, &err, &stats);
		if (status == PR_ERR_NOMEM)
		{
			/* device memory taken by other resident graphs: free them and try once more */
			multi_release(r);
			evict_to_fit(r, true);
			memset(&err, 0, sizeof(err));
			status = run_multi(slot, r, request_base, &err, &stats);
		}
		if (status != PR_OK && status != PR_ERR_INTERRUPTED)
		{
			/* never fail a request for the multi-GPU path: this graph runs on one GPU now */
			char		line[SERVICE_MESSAGE_LEN + 128];

			snprintf(line, sizeof(line),
					 "multi-GPU PageRank failed on cached graph %llu (%s); it runs on one GPU from now on",
					 (unsigned long long) r->entry_id,
					 err.message[0] ? err.message : pr_status_name(status));
			engine_log(line);
			multi_release(r);
			r->multi_failed = true;
			use_multi = false;
			resident = r->prepared && r->prepared_algorithm == req->algorithm &&
				r->prepared_k == req->k;
			memset(&err, 0, sizeof(err));
		}
	}
	if (!use_multi)
	{
		status = run_driver(slot, r, request_base, &err, &stats);
		if (status == PR_ERR_NOMEM && r != &one_off)
		{
			/* device memory taken by other resident graphs: free them and try once more */
			multi_release(r);
			evict_to_fit(r, true);
			memset(&err, 0, sizeof(err));
			status = run_driver(slot, r, request_base, &err, &stats);
		}
	}
	current_slot = NULL;

	if (status == PR_OK)
	{
		PrGpuReport report;
		PrError		report_err;

		out->iterations = stats.iterations;
		out->residual = stats.residual;
		out->converged = stats.converged;
		out->stagnated = stats.stagnated;
		out->seconds = stats.seconds;
		out->prepare_seconds = stats.prepare_seconds;
		out->resident = resident;
		out->batch_size = 1;
		if (use_multi)
			snprintf(out->engine, sizeof(out->engine), "gpu-multi(%d)", multi_gpus);
		else if (config->kind == SERVICE_ENGINE_GPU &&
				 gpu.engine_report(r->engine, &report, &report_err) == PR_OK)
		{
			strlcpy(out->engine, report.engine, sizeof(out->engine));
			if (!resident)
			{
				/* a graph put on the device: where the time went, for the server log */
				char		line[320];

				snprintf(line, sizeof(line),
						 "graph of %lld nodes, %lld edges on the device (%s): graph mapped in %.1f ms, prepared in %.1f ms (plan %.1f ms: host arrays %.1f, tile setup %.1f; upload %.1f ms)",
						 (long long) r->graph.n_nodes, (long long) r->graph.n_edges, report.engine,
						 map_seconds * 1000.0, stats.prepare_seconds * 1000.0,
						 report.plan_seconds * 1000.0, report.host_seconds * 1000.0,
						 report.smem_setup_seconds * 1000.0, report.upload_seconds * 1000.0);
				engine_log(line);
			}
		}
		else
			strlcpy(out->engine, "cpu-test via service", sizeof(out->engine));
		pg_atomic_fetch_add_u64(resident ? &service->reuses : &service->uploads, 1);
		if (!use_multi)
		{
			r->prepared = true;
			r->prepared_algorithm = req->algorithm;
			r->prepared_k = req->k;
			if (r != &one_off)
				tuner_start(r);
		}
		r->bytes = resident_bytes(r, req->k, req->algorithm == SERVICE_HITS ? 3 : 2);
	}
	else
	{
		fail(out, status, err.message[0] ? err.message : pr_status_name(status));
		if (!use_multi)
			r->prepared = false;
	}

	if (r == &one_off)
	{
		one_off.base = NULL;	/* the graph lives in the request segment */
		resident_free(&one_off);
	}
	else if (status != PR_OK && status != PR_ERR_INTERRUPTED)
		resident_free(r);
	release_request_data(req, request_base, request_size, request_mapping);
	evict_to_fit(NULL, false);
	return status;
}

/* Publishes a request's answer: outcome first, then the state, then wakes the backend. */
static void
publish(ServiceSlot *slot, PrStatus status)
{
	pg_atomic_fetch_add_u64(status == PR_OK ? &service->served : &service->failures, 1);
	pg_atomic_write_u32(&slot->state, status == PR_OK ? SLOT_DONE : SLOT_FAILED);
	pg_memory_barrier();
	if (slot->latch != NULL)
		SetLatch(slot->latch);
}

/* The requests of the batch being served (the driver hooks' argument). */
typedef struct BatchRun
{
	int			n;
	ServiceSlot *slot[SERVICE_MAX_BATCH];
	char	   *base[SERVICE_MAX_BATCH];	/* each request's data */
	size_t		size[SERVICE_MAX_BATCH];
	SegmentMapping mapping[SERVICE_MAX_BATCH];
} BatchRun;

/* should_stop of a batch: every member asked to cancel, or the worker is gone. */
static bool
batch_cancelled(void *arg)
{
	BatchRun   *b = (BatchRun *) arg;

	if (getppid() != parent_pid)
		return true;
	for (int j = 0; j < b->n; j++)
		if (pg_atomic_read_u32(&b->slot[j]->cancel) == 0)
			return false;
	return true;
}

/* progress of a batch: every member's progress entry. */
static void
batch_progress(void *arg, int iteration, double residual)
{
	BatchRun   *b = (BatchRun *) arg;

	for (int j = 0; j < b->n; j++)
		progress_report(b->slot[j], iteration, residual);
}

/*
 * Maps (or finds inline) each member's request data and checks it; a member whose data is bad
 * is answered FAILED at once and leaves the batch.
 */
static void
batch_map_members(BatchRun *b)
{
	int			kept = 0;

	for (int j = 0; j < b->n; j++)
	{
		ServiceSlot *slot = b->slot[j];
		const ServiceRequest *req = &slot->request;
		char		message[SERVICE_MESSAGE_LEN];
		char	   *base;
		size_t		size;
		SegmentMapping mapping = MAPPED_FILE;

		memset(&slot->outcome, 0, sizeof(ServiceOutcome));
		slot->outcome.request_id = req->request_id;
		if (req->inline_data)
		{
			base = (char *) slot->inline_data;
			size = sizeof(slot->inline_data);
		}
		else if ((base = map_segment(req->request_handle, req->request_address, req->request_size, &size,
									   &mapping, message,
									 sizeof(message))) == NULL)
		{
			fail(&slot->outcome, PR_ERR_INVALID, message);
			publish(slot, PR_ERR_INVALID);
			continue;
		}
		if (!request_segment_valid(req, base, size) || req->restart_entries <= 0)
		{
			release_request_data(req, base, size, mapping);
			fail(&slot->outcome, PR_ERR_INVALID, "malformed request segment");
			publish(slot, PR_ERR_INVALID);
			continue;
		}
		b->slot[kept] = slot;
		b->base[kept] = base;
		b->size[kept] = size;
		b->mapping[kept] = mapping;
		kept++;
	}
	b->n = kept;
}

/*
 * Runs a batch's columns on the resident graph's batch engine: the top t of every column (top_k
 * requests) or all scores, copied into each member's result area.  Fills stats.
 */
static PrStatus
batch_run(BatchRun *b, Resident *r, const PrRestart *restart, PrError *err, PrRunStats *stats)
{
	const ServiceRequest *lead = &b->slot[0]->request;
	int			width = restart->k;
	int64		n = r->graph.n_nodes;
	PrIterOptions iter;
	PrStatus	status;

	iteration_options(lead, batch_cancelled, batch_progress, b, &iter);
	if (r->batch_engine == NULL && (r->batch_engine = create_engine(err)) == NULL)
		return err->status == PR_OK ? PR_ERR_ENGINE : err->status;

	if (lead->top_k > 0)
	{
		int64		t = 0;
		int32_t    *index;
		double	   *value;

		for (int j = 0; j < b->n; j++)
			t = Max(t, Min(b->slot[j]->request.top_k, n));
		index = malloc(sizeof(int32_t) * width * t);
		value = malloc(sizeof(double) * width * t);
		if (index == NULL || value == NULL)
			status = pr_error_set(err, PR_ERR_NOMEM, "out of memory for a batch's top %lld",
								  (long long) t);
		else
			status = pr_pagerank_top(r->batch_engine, &r->graph, lead->alpha, restart, &iter, t,
									 index, value, stats, err);
		for (int j = 0; status == PR_OK && j < b->n; j++)
		{
			const ServiceRequestHeader *h = (const ServiceRequestHeader *) b->base[j];
			int64		rows = service_result_rows(&b->slot[j]->request);

			memcpy(b->base[j] + h->off_result_index, index + j * t, sizeof(int32_t) * rows);
			memcpy(b->base[j] + h->off_result, value + j * t, sizeof(double) * rows);
		}
		free(index);
		free(value);
		return status;
	}
	else
	{
		double	   *scores = malloc(sizeof(double) * width * n);

		if (scores == NULL)
			return pr_error_set(err, PR_ERR_NOMEM, "out of memory for a batch's %lld x %d scores",
								(long long) n, width);
		status = pr_pagerank(r->batch_engine, &r->graph, lead->alpha, restart, &iter, scores,
							 stats, err);
		for (int j = 0; status == PR_OK && j < b->n; j++)
		{
			const ServiceRequestHeader *h = (const ServiceRequestHeader *) b->base[j];
			double	   *result = (double *) (b->base[j] + h->off_result);

			for (int64 v = 0; v < n; v++)
				result[v] = scores[v * width + j];
		}
		free(scores);
		return status;
	}
}

/*
 * Serves a batch of RWR requests (slot indexes members[0..n), all RUNNING, compatible: see
 * service_batch.c) with one run of config->batch_size columns, and answers every member.
 * Returns the status of the run; PR_ERR_ENGINE means the device context may be broken (the
 * caller then exits).
 */
static PrStatus
serve_batch(const int *members, int n)
{
	BatchRun	b;
	PrRestart	column[SERVICE_MAX_BATCH];
	PrRestart	restart;
	PrRunStats	stats;
	PrError		err = {0};
	PrStatus	status;
	Resident   *r;
	bool		resident;
	char		engine_name[32];

	double		started = pr_clock_seconds();

	memset(&b, 0, sizeof(b));
	b.n = n;
	for (int j = 0; j < n; j++)
		b.slot[j] = &service->slots[members[j]];
	batch_map_members(&b);
	if (b.n == 0)
		return PR_ERR_INVALID;

	drop_vanished();
	r = graph_for_request(&b.slot[0]->request, b.base[0], b.size[0], NULL, &b.slot[0]->outcome);
	if (r == NULL)
	{
		status = (PrStatus) b.slot[0]->outcome.status;
		for (int j = 0; j < b.n; j++)
		{
			if (j > 0)
				b.slot[j]->outcome = b.slot[0]->outcome;
			b.slot[j]->outcome.request_id = b.slot[j]->request.request_id;
			release_request_data(&b.slot[j]->request, b.base[j], b.size[j], b.mapping[j]);
			publish(b.slot[j], status);
		}
		return status;
	}
	r->last_used = ++use_clock;

	for (int j = 0; j < b.n; j++)
	{
		const ServiceRequestHeader *h = (const ServiceRequestHeader *) b.base[j];

		memset(&column[j], 0, sizeof(PrRestart));
		column[j].k = 1;
		column[j].ptr = (const int64_t *) (b.base[j] + h->off_restart_ptr);
		column[j].node = (const int32_t *) (b.base[j] + h->off_restart_node);
		column[j].weight = (const double *) (b.base[j] + h->off_restart_weight);
		b.slot[j]->progress.phase = PHASE_PREPARING;
	}
	memset(&stats, 0, sizeof(stats));
	resident = r->batch_prepared;
	if (!batch_restart(b.n, Max(config->batch_size, b.n), column, &restart))
		status = pr_error_set(&err, PR_ERR_NOMEM, "out of memory for a batch's restart");
	else
	{
		status = batch_run(&b, r, &restart, &err, &stats);
		if (status == PR_ERR_NOMEM)
		{
			/* device memory taken by other resident graphs: free them and try once more */
			multi_release(r);
			evict_to_fit(r, true);
			memset(&err, 0, sizeof(err));
			status = batch_run(&b, r, &restart, &err, &stats);
		}
		batch_restart_free(&restart);
	}

	r->batch_prepared = status == PR_OK || (status == PR_ERR_INTERRUPTED && r->batch_prepared);
	if (status == PR_OK)
	{
		pg_atomic_fetch_add_u64(&service->batches, 1);
		pg_atomic_fetch_add_u64(&service->batched_requests, b.n);
		pg_atomic_fetch_add_u64(&service->batch_iterations, (uint64) Max(stats.iterations, 0));
	}
	engine_name[0] = '\0';
	if (status == PR_OK)
	{
		PrGpuReport report;
		PrError		report_err;

		if (config->kind == SERVICE_ENGINE_GPU &&
			gpu.engine_report(r->batch_engine, &report, &report_err) == PR_OK)
			strlcpy(engine_name, report.engine, sizeof(engine_name));
		else
			strlcpy(engine_name, "cpu-test via service", sizeof(engine_name));
		r->bytes = resident_bytes(r, r->prepared ? r->prepared_k : 1, 2);
	}
	for (int j = 0; j < b.n; j++)
	{
		ServiceOutcome *out = &b.slot[j]->outcome;

		if (status == PR_OK)
		{
			out->iterations = stats.iterations;
			out->residual = stats.residual;
			out->converged = stats.converged;
			out->stagnated = stats.stagnated;
			out->seconds = stats.seconds;
			out->prepare_seconds = stats.prepare_seconds;
			out->resident = resident;
			out->batch_size = b.n;
			strlcpy(out->engine, engine_name, sizeof(out->engine));
			pg_atomic_fetch_add_u64(resident ? &service->reuses : &service->uploads, 1);
		}
		else
			fail(out, status, err.message[0] ? err.message : pr_status_name(status));
		release_request_data(&b.slot[j]->request, b.base[j], b.size[j], b.mapping[j]);
		publish(b.slot[j], status);
	}
	if (status == PR_OK)
		pg_atomic_fetch_add_u64(&service->batch_microseconds,
								(uint64) ((pr_clock_seconds() - started) * 1e6));
	if (status != PR_OK && status != PR_ERR_INTERRUPTED)
		resident_free(r);
	evict_to_fit(NULL, false);
	return status;
}

/* Index of a QUEUED slot taken (QUEUED -> RUNNING) by this process, or -1; round robin. */
static int
take_request(int *next)
{
	int			n = service->n_slots;
	int			i;

	for (i = 0; i < n; i++)
	{
		int			index = (*next + i) % n;
		uint32		expected = SLOT_QUEUED;

		if (pg_atomic_read_u32(&service->slots[index].state) != SLOT_QUEUED)
			continue;
		if (pg_atomic_compare_exchange_u32(&service->slots[index].state, &expected,
										   SLOT_RUNNING))
		{
			*next = (index + 1) % n;
			return index;
		}
	}
	return -1;
}

/*
 * Main loop of the engine process (after fork() in the worker): starts the engine, then serves
 * queued requests one at a time, sleeping on the doorbell futex in between.  Never returns.
 */
void
service_engine_main(const ServiceEngineConfig *engine_config)
{
	int			next = 0;
	bool		had_company = false;	/* the last request that could batch had company */

	config = engine_config;
	reset_process_state();
	start_engine();

	for (;;)
	{
		uint32		seen = pg_atomic_read_u32(&service->doorbell);
		int			index = take_request(&next);
		ServiceSlot *slot;
		ServiceFault fault;
		PrStatus	status;
		int			members[SERVICE_MAX_BATCH];
		int			n_members;
		bool		eligible;

		if (getppid() != parent_pid)
			engine_exit(1);
		tuners_poll();
		if (index < 0)
		{
			service_futex_wait(&service->doorbell, seen, 1000);
			continue;
		}
		slot = &service->slots[index];
		pg_read_barrier();
		fault = (ServiceFault) pg_atomic_exchange_u32(&service->fault, FAULT_NONE);
		eligible = config->batch_size > 1 && batch_eligible(&slot->request);
		if (fault == FAULT_GATHER && !eligible)
		{
			/* the test fault waits for a request that may batch */
			pg_atomic_write_u32(&service->fault, FAULT_GATHER);
			fault = FAULT_NONE;
		}
		n_members = 1;
		if (eligible && (fault == FAULT_NONE || fault == FAULT_GATHER))
			n_members = batch_gather(index, members, config->batch_size,
									 had_company ? config->batch_wait_us : 0,
									 fault == FAULT_GATHER);
		if (n_members > 1)
		{
			had_company = true;
			status = serve_batch(members, n_members);
		}
		else
		{
			if (eligible)
				had_company = false;
			status = serve(slot, fault == FAULT_GATHER ? FAULT_NONE : fault);
		}
		if (n_members > 1 || slot->request.algorithm != SERVICE_BUILD)
			pending_drop();
		/* about to restart (below): no new request may be queued to this process */
		if (status == PR_ERR_ENGINE)
			pg_atomic_write_u32(&service->engine_ready, 0);
		if (n_members == 1)
			publish(slot, status);
		pending_trim();

		/* a device error may leave the context unusable: start over in a fresh process */
		if (status == PR_ERR_ENGINE)
			engine_exit(ENGINE_EXIT_RESET);
	}
}
