/*
 * engine.c — what every file of the GPU service's engine process uses: its configuration, leaving
 * the process, its log line, and the steps of answering a request (an outcome begun, failed or
 * filled, the answer published; the request's checks, its iteration settings, its cancel and an
 * injected fault).
 *
 * Runs in the engine process: no palloc, no elog (see engine.h).
 */
#include "engine/engine.h"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "miscadmin.h"
#include "utils/ps_status.h"

const ServiceEngineConfig *engine_config;
ServiceSlot *engine_current_slot = NULL;	/* the request being served (the multi hooks' target) */
static pid_t parent_pid;

/* Ends the engine process at once, without PostgreSQL's exit hooks. */
void
engine_exit(int code)
{
	_exit(code);
}

/* Records why the engine cannot start and exits so that the worker does not retry at once. */
void
engine_exit_unavailable(const char *message)
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
	if (engine_orphaned())
		engine_exit(1);
}

/*
 * Makes this process (just forked by the worker) the engine process: its configuration, and a
 * fresh start from what it inherited from the worker.
 */
void
engine_process_begin(const ServiceEngineConfig *config)
{
	engine_config = config;
	reset_process_state();
}

/* Whether the worker that started this process is gone (the process then ends). */
bool
engine_orphaned(void)
{
	return getppid() != parent_pid;
}

/* One line to the server log (this process's stderr, inherited from the postmaster). */
void
engine_log(const char *message)
{
	fprintf(stderr, "powerrank gpu service engine process: %s\n", message);
	fflush(stderr);
}

/* Sets a failed outcome. */
void
engine_fail(ServiceOutcome *out, PrStatus status, const char *message)
{
	out->status = status == PR_OK ? PR_ERR_ENGINE : status;
	strlcpy(out->message, message, sizeof(out->message));
}

/* should_stop of the driver: the backend asked to cancel, or the worker is gone. */
bool
engine_request_cancelled(void *arg)
{
	ServiceSlot *slot = (ServiceSlot *) arg;

	return pg_atomic_read_u32(&slot->cancel) != 0 || engine_orphaned();
}

/*
 * The driver's iteration settings of a request: its tolerance, norm and limit, the residual read
 * every iteration, should_stop and progress called with arg.
 */
void
engine_iteration_options(const ServiceRequest *req, bool (*should_stop) (void *),
						 void (*progress) (void *, int, double), void *arg, PrIterOptions *iter)
{
	memset(iter, 0, sizeof(*iter));
	iter->tolerance = req->tolerance;
	iter->norm = (PrNorm) req->norm;
	iter->max_iterations = req->max_iterations;
	iter->warm_start = req->warm_start;
	iter->mixing_depth = req->mixing_depth;
	iter->stop_when_certified = req->stop_when_certified;
	iter->check_every = 1;
	iter->should_stop = should_stop;
	iter->stop_arg = arg;
	iter->progress = progress;
	iter->progress_arg = arg;
}

/*
 * Checks that the request is a run of an algorithm the driver has and that its data is what the
 * request says (sizes, offsets in range).
 */
bool
engine_request_valid(const ServiceRequest *req, const char *base, size_t size)
{
	const ServiceRequestHeader *h = (const ServiceRequestHeader *) base;
	uint64		result_ids;

	if (service_algorithm(req->algorithm) == NULL)
		return false;
	result_ids = service_result_ids(req);
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
	if (req->delta_entry_id != 0 && !req->graph_cached)
		return false;
	return true;
}

/* Starts a request's answer: an empty outcome that names the request. */
void
engine_outcome_begin(ServiceSlot *slot)
{
	memset(&slot->outcome, 0, sizeof(ServiceOutcome));
	slot->outcome.request_id = slot->request.request_id;
}

/*
 * Fills a successful outcome from the run's statistics: resident says whether the graph was
 * already prepared, batch_size how many requests the run answered.
 */
void
engine_outcome_done(ServiceOutcome *out, const PrRunStats *stats, bool resident, int batch_size)
{
	out->iterations = stats->iterations;
	out->residual = stats->residual;
	out->converged = stats->converged;
	out->stagnated = stats->stagnated;
	out->error_bound = stats->error_bound;
	out->mixed_steps = stats->mixed_steps;
	out->top_k_certified = (int) stats->top_k_certified;
	out->top_k_ties = stats->top_k_ties;
	out->stopped_certified = stats->stopped_certified;
	out->seconds = stats->seconds;
	out->prepare_seconds = stats->prepare_seconds;
	out->resident = resident;
	out->batch_size = batch_size;
}

/* Carries out an injected fault (powerrank_service_inject_fault): its status, or PR_OK. */
PrStatus
engine_inject_fault(ServiceOutcome *out, ServiceFault fault)
{
	switch (fault)
	{
		case FAULT_ENGINE_ERROR:
			engine_fail(out, PR_ERR_ENGINE,
						"injected engine failure (powerrank_service_inject_fault)");
			return PR_ERR_ENGINE;
		case FAULT_OUT_OF_MEMORY:
			engine_fail(out, PR_ERR_NOMEM,
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

/* Publishes a request's answer: outcome first, then the state, then wakes the backend. */
void
engine_publish(ServiceSlot *slot, PrStatus status)
{
	pg_atomic_fetch_add_u64(status == PR_OK ? &service->served : &service->failures, 1);
	pg_atomic_write_u32(&slot->state, status == PR_OK ? SLOT_DONE : SLOT_FAILED);
	pg_memory_barrier();
	if (slot->latch != NULL)
		SetLatch(slot->latch);
}
