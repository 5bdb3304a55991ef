/*
 * channel.h — the GPU service's channel: what backends, the service worker and the engine process
 * share.  One request slot per backend and the service's state (channel.c), the progress entries
 * of powerrank_progress (progress.c), both in the main shared memory, and a request's shape and
 * the engine process's configuration, from which both sides make the GPU engine's residency
 * choice (residency.c).
 *
 * Processes (see README "The GPU service"):
 *   backend          fills its request slot, rings the doorbell, waits on its latch (service/)
 *   "powerrank gpu service" (background worker, a postmaster child)
 *                    forks the engine process, reaps it (waitpid), fails the requests it held when it
 *                    dies and forks a new one; never touches CUDA or an engine (service/)
 *   engine process   a plain child of the worker (not known to the postmaster), owns the engine (the
 *                    CUDA context): takes queued requests, maps their segments by name, runs the
 *                    driver, writes the results, sets the backend's latch.  It takes no PostgreSQL
 *                    lock, never calls palloc or elog: only atomics, plain stores with barriers,
 *                    futexes and SetLatch (which is lock-free) on the channel (engine/).
 *
 * The engine process uses the types, `service`, the futex calls, progress_set_slot_phase,
 * progress_report and residency.c; the rest is for backends and the worker.
 */
#ifndef CHANNEL_H
#define CHANNEL_H

#include "powerrank.h"

#include "port/atomics.h"
#include "storage/dsm.h"
#include "storage/latch.h"
#include "storage/s_lock.h"
#include "utils/timestamp.h"

#include "pr_algorithm.h"
#include "pr_residency.h"

#define SERVICE_TEXT_LEN 128
#define SERVICE_MAX_RESIDENT 16	/* graphs resident in the engine process at most */
#define SERVICE_MESSAGE_LEN PR_ERROR_MESSAGE_LEN
#define SERVICE_INLINE_BYTES 4096	/* a request this small lives in the slot, not in a segment */
#define SERVICE_MAX_BATCH 64		/* most RWR requests one engine run serves together */

/* State of the service as a whole (ServiceShared.state). */
typedef enum ServiceState
{
	SERVICE_DOWN = 0,			/* no worker (not started yet, or between restarts) */
	SERVICE_STARTING,			/* worker up, engine process starting */
	SERVICE_READY,				/* engine process serving requests */
	SERVICE_UNAVAILABLE,		/* engine could not start (no device, no library): see last_error */
	SERVICE_RESTARTING			/* engine process died, a new one will be forked */
} ServiceState;

/* powerrank.service_engine: what the engine process runs. */
typedef enum ServiceEngineKind
{
	SERVICE_ENGINE_GPU = 0,		/* libpowerrank_gpu.so, dlopen()ed in the engine process */
	SERVICE_ENGINE_CPU_TEST,	/* the CPU engine, so that CI exercises the whole protocol */
	SERVICE_ENGINE_OFF			/* no engine process: the worker idles */
} ServiceEngineKind;

/* State of one request slot. */
typedef enum ServiceSlotState
{
	SLOT_IDLE = 0,
	SLOT_QUEUED,				/* written by the backend, not yet taken */
	SLOT_RUNNING,				/* taken by the engine process */
	SLOT_DONE,					/* results written */
	SLOT_FAILED					/* outcome.status / message say why */
} ServiceSlotState;

/*
 * What a request asks for: a run of one of the driver's algorithms, whose values are those of
 * PrAlgorithm (service_algorithm reads a request's descriptor with no table between them), or a
 * graph build.
 */
typedef enum ServiceAlgorithm
{
	SERVICE_PAGERANK = PR_ALGORITHM_PAGERANK,	/* PageRank / personalized PageRank / RWR (k
												 * columns) */
	SERVICE_HITS = PR_ALGORITHM_HITS,
	SERVICE_BUILD = PR_ALGORITHM_COUNT	/* build a graph from rows in a segment, in place (see
										 * service_build) */
} ServiceAlgorithm;

/* The descriptor of a run's algorithm (pr_algorithm.h); NULL for SERVICE_BUILD. */
static inline const PrAlgorithmInfo *
service_algorithm(ServiceAlgorithm algorithm)
{
	return pr_algorithm((PrAlgorithm) algorithm);
}

/* Faults the engine process injects into the next request (powerrank_service_inject_fault). */
typedef enum ServiceFault
{
	FAULT_NONE = 0,
	FAULT_ENGINE_ERROR,			/* the engine fails the request (and the process restarts) */
	FAULT_OUT_OF_MEMORY,		/* the engine reports out of (device) memory */
	FAULT_CRASH,				/* the engine process dies abruptly (SIGKILL to itself) */
	FAULT_GATHER				/* the next batchable request waits (up to 10 s) for companions
								 * until none arrives for 200 ms: tests make a batch this way */
} ServiceFault;

/*
 * Layout of a request's data (offsets from its start; 0 = absent): the restart distribution, room
 * for the results, and the flat graph when it is not cached.  It lives in a per-request segment
 * the backend creates, or, when it fits in SERVICE_INLINE_BYTES and the graph is cached, in the
 * slot itself (ServiceRequest.inline_data).  With top_k (PageRank), the results are the t =
 * min(top_k, n) best nodes of each column: internal ids and scores, column j at j * t.
 */
typedef struct ServiceRequestHeader
{
	uint32		magic;
	uint32		reserved;
	uint64		total_size;
	uint64		off_restart_ptr;	/* int64[k+1] */
	uint64		off_restart_node;	/* int32[entries] */
	uint64		off_restart_weight; /* double[entries] */
	uint64		off_result;		/* double[n*k] (PageRank), double[t*k] (PageRank with top_k) or
								 * double[2n] (HITS: hubs, authorities) */
	uint64		off_result_index;	/* int32[t*k]: the ids of the top_k scores (0 without top_k) */
	uint64		off_graph;		/* flat graph, or 0 when the graph is a cached segment */
	uint64		graph_size;
} ServiceRequestHeader;

#define SERVICE_REQUEST_MAGIC UINT32_C(0x51525250)	/* "PRRQ" */

/* What a backend asks for; written before the slot becomes QUEUED, read-only afterwards. */
typedef struct ServiceRequest
{
	uint64		request_id;		/* per slot, increasing */
	ServiceAlgorithm algorithm;
	double		alpha;
	double		tolerance;
	int			norm;			/* PrNorm */
	int			max_iterations;
	bool		warm_start;		/* PrIterOptions.warm_start (powerrank.warm_start) */
	int			mixing_depth;	/* PrIterOptions.mixing_depth (powerrank.mixing_depth) */
	bool		stop_when_certified;	/* PrIterOptions.stop_when_certified */
	int			k;				/* columns */
	int64		top_k;			/* PageRank: only the top_k best of each column come back (0: all) */
	bool		restart_uniform;
	int64		restart_entries;
	int64		n_nodes;
	int64		n_edges;
	bool		graph_cached;	/* graph in a cache segment (else inline in the request segment) */
	dsm_handle	graph_handle;	/* the cache entry's segment */
	uint64		graph_address;	/* its address and mapped size in the backend, for a segment in
								 * the main shared memory (odd handle), which the engine process
								 * sees at the same address */
	uint64		graph_mapped_size;
	uint64		graph_entry_id; /* the cache entry's id: the key of the resident engine */
	/*
	 * A delta entry of the cache (delta_entry_id, 0: none): the graph_* fields name its root's
	 * entry, and the graph ranked is that graph plus the delta held in the delta entry's segment
	 * (its flat form, pr_graph_delta_write_flat), which the engine process maps by handle (address
	 * and mapped size as for the graph's).  The results are in the root's numbering.
	 */
	uint64		delta_entry_id;
	dsm_handle	delta_handle;
	uint64		delta_address;
	uint64		delta_mapped_size;
	bool		inline_data;	/* the request's data is in the slot (inline), not in a segment */
	dsm_handle	request_handle; /* the per-request segment (when not inline) */
	uint64		request_address;	/* its address, for a segment in the main shared memory */
	uint64		request_size;
	/* SERVICE_BUILD: rows src[build_rows] at the start of graph_handle's segment, dst[] at
	 * build_capacity rows from it; the flat graph is written over them */
	uint64		build_rows;
	uint64		build_capacity;
	bool		build_undirected;
} ServiceRequest;

/*
 * Rows of results per column of each result vector: min(top_k, n) for an algorithm that ranks
 * top_k per column (PageRank), else n.
 */
static inline int64
service_result_rows(const ServiceRequest *req)
{
	return pr_algorithm_result_rows(service_algorithm(req->algorithm), req->n_nodes, req->top_k);
}

/*
 * Doubles of a request's result area: rows x k for each result vector, one after the other (HITS:
 * n hubs, then n authorities).
 */
static inline uint64
service_result_values(const ServiceRequest *req)
{
	return (uint64) service_result_rows(req) * (uint64) req->k *
		(uint64) service_algorithm(req->algorithm)->results;
}

/* Ids of a request's result area: one per value when top_k is ranked per column, else none. */
static inline uint64
service_result_ids(const ServiceRequest *req)
{
	if (service_algorithm(req->algorithm)->top_k == PR_TOP_K_PER_COLUMN && req->top_k > 0)
		return service_result_values(req);
	return 0;
}

/* What the engine process answers. */
typedef struct ServiceOutcome
{
	uint64		request_id;
	int			status;			/* PrStatus */
	char		message[SERVICE_MESSAGE_LEN];
	int			iterations;
	double		residual;
	bool		converged;
	bool		stagnated;		/* stopped early: the residual stopped decreasing */
	double		error_bound;	/* PrRunStats' */
	int			mixed_steps;
	int			top_k_certified;	/* PrCertified */
	int64		top_k_ties;
	bool		stopped_certified;
	double		seconds;		/* in the driver, upload included */
	double		prepare_seconds;	/* of which preparing the graph on the device */
	bool		resident;		/* the graph was already on the device */
	int			batch_size;		/* requests served by the same engine run (1: alone) */
	char		engine[32];
	char		residency[16];	/* where the graph's matrices lived: "resident" / "streamed", or
								 * "resident+delta": a resident graph's plus a delta
								 * (ServiceRequest.delta_entry_id) */
	/* SERVICE_BUILD */
	int64		built_nodes;
	int64		built_edges;
	uint64		built_bytes;	/* of the flat graph at the segment's start */
	bool		rows_intact;	/* a failed build left the rows as they were (false when unsure) */
	double		build_times[4]; /* seconds: upload, id map, sort, download */
} ServiceOutcome;

/*
 * Progress of one backend's run (pg_stat_progress-style), in the array of progress.c (one entry
 * per backend, indexed like the slots): written by the backend (reading the rows, building the
 * graph, CPU runs) and by the engine process (phase, iteration, residual of service runs).
 * Readers tolerate a torn view of a run in progress; pid is published last.
 */
typedef struct ProgressEntry
{
	volatile int pid;			/* 0: no run */
	volatile bool on_service;
	volatile int phase;			/* ProgressPhase */
	volatile int iteration;
	volatile double residual;
	volatile int64 rows_read;	/* edge rows read so far (-1: none read: a cached graph or a
								 * rankgraph) */
	int64		rows_estimated; /* the table's pg_class.reltuples when the read began (-1:
								 * unknown: never analyzed, or a view) */
	TimestampTz started;
	int64		nodes;
	int64		edges;
	int			columns;
	Oid			userid;			/* role that started the run */
	char		algorithm[16];
} ProgressEntry;

/* Phases shown by powerrank_progress. */
typedef enum ProgressPhase
{
	PHASE_READING = 0,			/* reading the edge rows of the table */
	PHASE_BUILDING,				/* building the graph from them (in the backend or the service) */
	PHASE_QUEUED,				/* waiting for the service */
	PHASE_PREPARING,			/* engine prepare (upload to the device) */
	PHASE_ITERATING
} ProgressPhase;

/* One backend's request slot (indexed by BackendId - 1). */
typedef struct ServiceSlot
{
	pg_atomic_uint32 state;		/* ServiceSlotState */
	pg_atomic_uint32 cancel;	/* set by the backend: stop between iterations */
	int			backend_pid;
	Latch	   *latch;			/* the backend's latch, set when the slot is DONE / FAILED */
	ServiceRequest request;
	ServiceOutcome outcome;
	/* a small request's data (ServiceRequestHeader first), when request.inline_data */
	double		inline_data[SERVICE_INLINE_BYTES / sizeof(double)];
} ServiceSlot;

/*
 * The channel.  Fields are grouped by their only writer: the worker (under mutex, which the
 * engine process never takes), the engine process (lock-free: plain stores then a barrier, or
 * atomics), backends (their own slot).
 */
typedef struct ServiceShared
{
	/* written by the worker under mutex */
	slock_t		mutex;
	ServiceState state;
	int			worker_pid;
	int			engine_pid;
	int64		restarts;		/* engine processes that died and were replaced */
	int64		worker_starts;
	char		last_error[SERVICE_MESSAGE_LEN];
	TimestampTz state_since;

	/* written by the engine process only */
	pg_atomic_uint32 engine_ready;	/* 1 once engine_name / device_name are written */
	bool		has_device;
	char		engine_name[32];
	char		device_name[SERVICE_TEXT_LEN];
	int			multi_gpus;		/* GPUs a run may use when more than one (0: one; the cpu-test
								 * engine's simulated parts) */
	char		engine_error[SERVICE_MESSAGE_LEN];	/* why the engine could not start */
	pg_atomic_uint64 served;	/* requests answered DONE */
	pg_atomic_uint64 failures;	/* requests answered FAILED by the engine process */
	pg_atomic_uint64 uploads;	/* graphs prepared on the device */
	pg_atomic_uint64 reuses;	/* requests served by an already-resident graph */
	pg_atomic_uint64 evictions; /* resident graphs evicted (LRU / memory pressure) */
	pg_atomic_uint64 batches;	/* engine runs that answered several RWR requests together */
	pg_atomic_uint64 batched_requests;	/* the requests they answered */
	pg_atomic_uint64 batch_iterations;	/* iterations of those runs, summed */
	pg_atomic_uint64 batch_microseconds;	/* their engine time (request mapped to answers
											 * published), summed */
	pg_atomic_uint64 builds;	/* graphs built from rows (SERVICE_BUILD) */
	pg_atomic_uint32 resident;	/* resident graphs now */
	pg_atomic_uint64 device_bytes;	/* their device (or host, for cpu-test) bytes */
	pg_atomic_uint64 resident_ids[SERVICE_MAX_RESIDENT];	/* their cache entry ids (0: none) */

	/* written by backends */
	pg_atomic_uint32 doorbell;	/* incremented (and futex-woken) when a slot is queued */
	pg_atomic_uint32 fault;		/* ServiceFault for the next request (superuser only) */
	pg_atomic_uint64 swept;		/* requests failed by the worker because the engine died */
	pg_atomic_uint32 request_segments;	/* per-request segments alive (leak check) */

	int			n_slots;
	ServiceSlot slots[FLEXIBLE_ARRAY_MEMBER];
} ServiceShared;

/* Engine process configuration, taken by the worker from the settings before fork(). */
typedef struct ServiceEngineConfig
{
	ServiceEngineKind kind;
	char		gpu_library[MAXPGPATH];
	char		multi_library[MAXPGPATH];	/* libpowerrank_multi.so (several GPUs) */
	int			gpu_devices;	/* GPUs PageRank may use: 0 = every visible one, N = the first N */
	int			gpu_device;
	int			gpu_precision;	/* PrGpuPrecision */
	int			gpu_kernel;		/* PrGpuKernel */
	int64		memory_limit;	/* bytes of resident graphs (0: no limit but the device's) */
	int			cpu_threads;	/* cpu-test engine threads */
	int			batch_size;		/* RWR requests one engine run may serve together (1: no batching) */
	int			batch_wait_us;	/* how long a batch waits for companions (see engine_batch.c) */
	int			quick_layout_edges; /* graphs this large get the quick layout first (-1: never) */
	int			dsm_type;		/* dynamic_shared_memory_type */
} ServiceEngineConfig;

/* ---- channel.c ---- */

extern ServiceShared *service;

void		service_shmem_request(void);
void		service_shmem_attach(void);
bool		service_available(void);
ServiceSlot *service_my_slot(void);
const char *service_state_name(ServiceState state);
ServiceState service_read_state(char *last_error, size_t size);
void		service_set_state(ServiceState state, const char *error);
bool		service_graph_resident(uint64 entry_id);
void		service_futex_wake(pg_atomic_uint32 *word);
void		service_futex_wait(pg_atomic_uint32 *word, uint32 seen, int timeout_ms);

/* ---- progress.c ---- */

void		progress_shmem_request(void);
void		progress_shmem_attach(void);
int			progress_entry_count(void);
ProgressEntry *progress_entry(int index);
void		progress_begin(const char *algorithm, bool on_service, int64 nodes, int64 edges,
						   int columns);
void		progress_set_phase(ProgressPhase phase);
void		progress_set_slot_phase(ServiceSlot *slot, ProgressPhase phase);
void		progress_end(void);
void		progress_report(void *arg, int iteration, double residual);
const char *progress_phase_name(int phase);

/* ---- residency.c ---- */

void		service_request_shape(ServiceRequest *req, ServiceAlgorithm algorithm, int k,
								  bool restart_uniform, int64 restart_entries, bool warm_start);
void		service_residency_input(const ServiceRequest *req, int columns, int64 nodes,
									int64 edges, bool weighted, const ServiceEngineConfig *config,
									PrResidencyInput *in);

#endif							/* CHANNEL_H */
