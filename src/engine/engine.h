/*
 * engine.h — the GPU service's engine process: what its files share (private to them), and its
 * entry point, which the service worker calls in the child it forks.
 *
 * Rules of this process (it is not a PostgreSQL backend and the postmaster does not know it):
 *  - no palloc, no elog, no PostgreSQL lock: memory comes from malloc, errors go into the slot's
 *    outcome, and the only shared state it touches is the channel (channel.h: atomics, barriers,
 *    futex, SetLatch, which takes no lock) and the segments it maps itself;
 *  - segments (the cache's graph, the backend's request segment) are mapped by name with
 *    shm_open / shmat / open + mmap, not through dsm_attach: the mapping is private to this
 *    process, so a backend that leaves (ERROR, cancel) never pulls memory from under the engine,
 *    and the engine dying never leaves a PostgreSQL reference count behind;
 *  - it dies with the worker (PR_SET_PDEATHSIG), and exits with _exit (no PostgreSQL exit hooks).
 *
 * engine.c           what every file uses: the configuration, leaving the process, the log line,
 *                    a request's checks and the steps of its answer
 * engine_segment.c   mapping segments by name
 * engine_library.c   loading the GPU libraries (dlopen), starting the engine, creating engines
 * engine_build.c     building graphs from rows (SERVICE_BUILD), the build segment kept for the
 *                    request that follows
 * engine_resident.c  the resident graphs: LRU under powerrank.gpu_memory, the tuned-layout
 *                    thread, the engine over several GPUs and the measured choice of it
 * engine_batch.c     RWR batches: gathering compatible requests and serving them in one run
 * engine_main.c      the process's main loop; serving one request (driver or every GPU)
 *
 * Each file calls only those listed above it.
 */
#ifndef ENGINE_H
#define ENGINE_H

#include "channel.h"

#include <pthread.h>

#include "pr_gpu.h"
#include "pr_residency.h"
#include "pr_multi.h"
#include "pr_parts.h"

/* How segment_map made a segment visible (and so how to let it go). */
typedef enum SegmentMapping
{
	MAPPED_FILE = 0,			/* mmap of the POSIX or mmap-file segment */
	MAPPED_SYSV,				/* shmat */
	MAPPED_MAIN					/* in the main shared memory, inherited: nothing to undo */
} SegmentMapping;

/* Kinds of run timed apart for the choice between one GPU and several: PageRank with one column,
 * with several (RWR from several sources), HITS. */
#define RUN_KINDS 3

/* Calls measured on each side before the choice (a first call pays one-time costs: lazy device
 * allocations, NCCL's first connections). */
#define RUNS_BEFORE_CHOICE 2

/* What an engine of a resident graph is prepared for (done false: nothing yet, or a failed run). */
typedef struct PreparedFor
{
	bool		done;
	ServiceAlgorithm algorithm;
	int			k;
} PreparedFor;

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
	/*
	 * The graph the entry serves is graph plus the delta of the cache's delta entry
	 * delta_entry_id (0: none, the graph itself), which its engines carry
	 * (PrEngineOps.apply_delta): a view into that entry's segment, mapped here (delta_base,
	 * delta_size, delta_mapping) for as long as the engines carry it (resident_take_delta).
	 */
	uint64		delta_entry_id;
	PrGraphDelta delta;
	void	   *delta_base;
	size_t		delta_size;
	SegmentMapping delta_mapping;
	bool		own_out;
	PrEngine   *engine;
	PreparedFor prepared;
	bool		quick;			/* engine has the quick layout; the tuned one is planned beside */
	bool		tuner_started;	/* the tuner thread runs (or ended and is not joined yet) */
	pthread_t	tuner;
	pg_atomic_uint32 tuner_done;	/* set by the tuner thread when tuned / tuned_err are written */
	PrEngine   *tuned;			/* the tuner's engine, prepared for PageRank (NULL: it failed) */
	PrError		tuned_err;
	PrEngine   *batch_engine;	/* RWR batches: an engine prepared for config->batch_size columns */
	bool		batch_prepared;
	PrEngine   *multi;			/* the engine over engine_multi_gpus parts (pr_parts.h), or NULL */
	PreparedFor multi_prepared;
	bool		multi_failed;	/* a run on several GPUs failed on this graph: one GPU from now on */
	double		run_ms[RUN_KINDS][2];	/* the fastest call seen per iteration (ms), per kind of
										 * run (run_kind), on one GPU [0] and on several [1]:
										 * the measured choice (multi_wanted) */
	int			runs[RUN_KINDS][2];	/* the calls measured there */
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
	PrMultiComms *(*comms_create) (int n_gpus, PrError *err);
	PrEngine   *(*engine_create) (PrMultiComms *comms, const PrGpuOptions *gpu, int n_gpus,
								  PrError *err);
} MultiLibrary;

/* Exit codes of the engine process the worker understands. */
#define ENGINE_EXIT_UNAVAILABLE 3	/* no device / library: do not restart until a reload */
#define ENGINE_EXIT_RESET 4			/* engine error: restart to get a fresh device context */

/* ---- engine.c ---- */

extern const ServiceEngineConfig *engine_config;
extern ServiceSlot *engine_current_slot;

void		engine_process_begin(const ServiceEngineConfig *config);
void		engine_exit(int code) pg_attribute_noreturn();
void		engine_exit_unavailable(const char *message) pg_attribute_noreturn();
bool		engine_orphaned(void);
void		engine_log(const char *message);
void		engine_fail(ServiceOutcome *out, PrStatus status, const char *message);
bool		engine_request_cancelled(void *arg);
void		engine_iteration_options(const ServiceRequest *req, bool (*should_stop) (void *),
									 void (*progress) (void *, int, double), void *arg,
									 PrIterOptions *iter);
bool		engine_request_valid(const ServiceRequest *req, const char *base, size_t size);
PrStatus	engine_inject_fault(ServiceOutcome *out, ServiceFault fault);
void		engine_outcome_begin(ServiceSlot *slot);
void		engine_outcome_done(ServiceOutcome *out, const PrRunStats *stats, bool resident,
								int batch_size);
void		engine_publish(ServiceSlot *slot, PrStatus status);

/* ---- engine_segment.c ---- */

void	   *segment_map(dsm_handle handle, uint64 address, uint64 address_size, size_t *size,
						SegmentMapping *mapping, char *message, size_t message_size);
void		segment_unmap(void *base, size_t size, SegmentMapping mapping);
void		segment_release_request(const ServiceRequest *req, char *base, size_t size,
									SegmentMapping mapping);

/* ---- engine_library.c ---- */

extern GpuLibrary engine_gpu;
extern MultiLibrary engine_multi;
extern int	engine_multi_gpus;
extern PrMultiComms *engine_multi_comms;

void		engine_start(void);
PrEngine   *engine_create_layout(bool quick, PrError *err);
PrStatus	engine_test_residency(const ServiceRequest *req, int columns, const PrGraph *g,
								  char *residency, size_t size, PrError *err);
PrEngine   *engine_create_multi(PrError *err);

/* ---- engine_build.c ---- */

PrStatus	build_serve(ServiceSlot *slot, ServiceFault fault);
bool		build_pending_take(dsm_handle handle, void **base, size_t *size,
							   SegmentMapping *mapping);
void		build_pending_trim(void);
void		build_pending_drop(void);

/* ---- engine_resident.c ---- */

Resident   *resident_for_request(const ServiceRequest *req, char *request_base,
								 size_t request_size, Resident *one_off, ServiceOutcome *out);
void		resident_touch(Resident *r);
void		resident_free(Resident *r);
size_t		resident_bytes(Resident *r);
void		resident_multi_release(Resident *r);
void		resident_tuner_start(Resident *r);
void		resident_tuner_finish(Resident *r, bool wait);
void		resident_tuners_poll(void);
void		resident_evict_to_fit(const Resident *keep, bool everything);
uint64		resident_bytes_besides(const Resident *keep);
void		resident_drop_vanished(void);
bool		resident_has_delta(const Resident *r);
PrStatus	resident_follow_delta(Resident *r, PrEngine *engine, const ServiceRequest *req, int k,
								  PrError *err);
void		resident_residency_text(const Resident *r, char *residency, size_t size);

/* ---- engine_batch.c ---- */

bool		batch_eligible(const ServiceRequest *req);
int			batch_gather(int lead, int *members, int max, int wait_us, bool gather);
bool		batch_restart(int n_members, int width, const PrRestart *member, PrRestart *out);
void		batch_restart_free(PrRestart *restart);
PrStatus	batch_serve(const int *members, int n);

/* ---- engine_main.c ---- */

void		service_engine_main(const ServiceEngineConfig *config) pg_attribute_noreturn();

#endif							/* ENGINE_H */
