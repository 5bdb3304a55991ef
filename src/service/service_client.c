/*
 * service_client.c — the backend side of the GPU service: which device a run uses
 * (device => 'auto' | 'cpu' | 'gpu'), the request (the restart distribution, room for the
 * results and, for a graph that is not cached, the graph itself: in the backend's slot when small,
 * else in a per-request segment), waiting on the latch, cancel, and what a failure becomes
 * (NOTICE + CPU run for 'auto', ERROR for 'gpu').
 *
 * A backend never waits for the engine process while holding anything the engine needs: the
 * engine maps the segments itself, so a backend that leaves on ERROR or cancel only withdraws its
 * request (a queued one is taken back; a running one gets its cancel flag and stops at the next
 * iteration) and the resource owner destroys the request segment and drops the cache reference.
 */
#include "service/service.h"

#include "miscadmin.h"
#include "pgstat.h"
#include "storage/spin.h"

/* How long a cancelled backend waits for the engine to acknowledge before raising the cancel. */
#define CANCEL_ACK_MS 2000

/* The service's state as a backend sees it. */
typedef struct ServiceView
{
	ServiceState state;
	bool		has_device;
	char		last_error[SERVICE_MESSAGE_LEN];
} ServiceView;

/* Reads the service's state. */
static void
read_service(ServiceView *view)
{
	view->state = service_read_state(view->last_error, sizeof(view->last_error));
	view->has_device = pg_atomic_read_u32(&service->engine_ready) == 1 && service->has_device;
}

/*
 * Where a run of device over a graph of n_edges stored edges goes, without raising anything: the
 * decision service_wanted acts on and powerrank_estimate reports.  'cpu': this backend.  'gpu':
 * the service, or CHOICE_GPU_* when it cannot take the run.  'auto': the service when it is ready
 * with a device and the graph has at least powerrank.gpu_min_edges edges; reason (size bytes)
 * says why not when the service would otherwise have been used (the reply's fallback text).
 */
ServiceChoice
service_choose(RankDevice device, int64 n_edges, char *reason, size_t size, char *last_error,
			   size_t error_size)
{
	ServiceView view;

	reason[0] = '\0';
	if (last_error != NULL)
		last_error[0] = '\0';
	if (device == RANK_DEVICE_CPU)
		return CHOICE_CPU_ASKED;
	if (service == NULL || service_my_slot() == NULL)
		return device == RANK_DEVICE_GPU ? CHOICE_GPU_NOT_PRELOADED : CHOICE_CPU_NOT_PRELOADED;
	if (device == RANK_DEVICE_AUTO && n_edges < powerrank_gpu_min_edges)
		return CHOICE_CPU_SMALL_GRAPH;
	read_service(&view);
	if (view.state == SERVICE_READY && view.has_device)
		return CHOICE_SERVICE;
	if (device == RANK_DEVICE_GPU)
	{
		if (last_error != NULL)
			strlcpy(last_error, view.last_error, error_size);
		snprintf(reason, size, "%s", service_state_name(view.state));
		return view.state == SERVICE_UNAVAILABLE ? CHOICE_GPU_UNAVAILABLE : CHOICE_GPU_NO_DEVICE;
	}
	snprintf(reason, size, "GPU service %s", service_state_name(view.state));
	return CHOICE_CPU_SERVICE_NOT_READY;
}

/*
 * Decides whether a run of device over a graph of n_edges edges goes to the service (see
 * service_choose): true when it does; false for the CPU, with reply->fallback saying why when the
 * service would otherwise have been used; an ERROR for device => 'gpu' when the service cannot
 * take it.
 */
bool
service_wanted(RankDevice device, int64 n_edges, ServiceReply *reply)
{
	char		reason[SERVICE_MESSAGE_LEN];
	char		last_error[SERVICE_MESSAGE_LEN];
	ServiceChoice choice = service_choose(device, n_edges, reason, sizeof(reason), last_error,
										  sizeof(last_error));

	switch (choice)
	{
		case CHOICE_SERVICE:
			return true;
		case CHOICE_GPU_NOT_PRELOADED:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("device => 'gpu' needs the powerrank GPU service, which is not running"),
					 errdetail("powerrank is not in shared_preload_libraries."),
					 errhint("Add powerrank to shared_preload_libraries in postgresql.conf and restart the server (see the README, \"The GPU service\"), or use device => 'auto' or 'cpu'.")));
			break;
		case CHOICE_GPU_UNAVAILABLE:
		case CHOICE_GPU_NO_DEVICE:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("the powerrank GPU service has no device to run on (state: %s)", reason),
					 last_error[0] ? errdetail("%s", last_error) : 0,
					 choice == CHOICE_GPU_UNAVAILABLE ?
					 errhint("Fix what DETAIL names (a missing GPU library: make cuda && make install, or set powerrank.gpu_library to its path) and reload the configuration with SELECT pg_reload_conf(); device => 'auto' runs on the CPU meanwhile.") :
					 errhint("SELECT * FROM powerrank_service shows the service; device => 'auto' runs on the CPU when the service cannot.")));
			break;
		case CHOICE_CPU_SERVICE_NOT_READY:
			strlcpy(reply->fallback, reason, sizeof(reply->fallback));
			break;
		case CHOICE_CPU_ASKED:
		case CHOICE_CPU_NOT_PRELOADED:
		case CHOICE_CPU_SMALL_GRAPH:
			break;
	}
	return false;
}

/* on_dsm_detach callback of a request segment: counts it gone (leak check). */
static void
request_segment_gone(dsm_segment *segment, Datum arg)
{
	pg_atomic_fetch_sub_u32(&service->request_segments, 1);
}

/* Rounds up to 8 bytes (every array of the request segment is 8-byte aligned). */
static uint64
align8(uint64 value)
{
	return (value + 7) & ~(uint64) 7;
}

/*
 * Lays out a request's data (see ServiceRequestHeader): the header, the restart arrays, the result
 * area (every score, or the top_k ids and scores) and, for a graph that is not in the cache, the
 * flat graph.
 */
static void
request_layout(const PrGraph *graph, const ServiceRequest *req, ServiceRequestHeader *h)
{
	uint64		offset = align8(sizeof(ServiceRequestHeader));

	memset(h, 0, sizeof(*h));
	h->magic = SERVICE_REQUEST_MAGIC;
	if (!req->restart_uniform)
	{
		h->off_restart_ptr = offset;
		offset = align8(offset + (uint64) (req->k + 1) * sizeof(int64));
		h->off_restart_node = offset;
		offset = align8(offset + (uint64) req->restart_entries * sizeof(int32));
		h->off_restart_weight = offset;
		offset = align8(offset + (uint64) req->restart_entries * sizeof(double));
	}
	h->off_result = offset;
	offset = align8(offset + service_result_values(req) * sizeof(double));
	if (service_result_ids(req) > 0)
	{
		h->off_result_index = offset;
		offset = align8(offset + service_result_ids(req) * sizeof(int32));
	}
	if (!req->graph_cached)
	{
		h->off_graph = offset;
		h->graph_size = pr_graph_flat_size(graph);
		offset = align8(offset + h->graph_size);
	}
	h->total_size = offset;
}

/* Writes a request's data at base: the header, the restart arrays, the graph when not cached. */
static void
request_write(char *base, const ServiceRequestHeader *h, const PrGraph *graph,
			  const ServiceRequest *req, const PrRestart *restart)
{
	memcpy(base, h, sizeof(*h));
	if (!req->restart_uniform)
	{
		memcpy(base + h->off_restart_ptr, restart->ptr, (req->k + 1) * sizeof(int64));
		memcpy(base + h->off_restart_node, restart->node, req->restart_entries * sizeof(int32));
		memcpy(base + h->off_restart_weight, restart->weight,
			   req->restart_entries * sizeof(double));
	}
	if (!req->graph_cached)
		pr_graph_write_flat(graph, base + h->off_graph);
}

/*
 * Places a request's data: in the slot when it is small and the graph is cached (no segment to
 * create and map: the interactive case, top_k on a cached graph), otherwise in a new request
 * segment.  Returns the data's address, with *segment the segment or NULL when inline; NULL when
 * no segment can be had.
 */
static char *
place_request(const PrGraph *graph, ServiceSlot *slot, const PrRestart *restart,
			  ServiceRequest *req, dsm_segment **segment)
{
	ServiceRequestHeader h;
	char	   *base;

	request_layout(graph, req, &h);
	*segment = NULL;
	req->request_size = h.total_size;
	req->inline_data = req->graph_cached && h.total_size <= sizeof(slot->inline_data);
	if (req->inline_data)
		base = (char *) slot->inline_data;
	else
	{
		*segment = dsm_create(h.total_size, DSM_CREATE_NULL_IF_MAXSEGMENTS);
		if (*segment == NULL)
			return NULL;
		pg_atomic_fetch_add_u32(&service->request_segments, 1);
		on_dsm_detach(*segment, request_segment_gone, (Datum) 0);
		base = dsm_segment_address(*segment);
		req->request_handle = dsm_segment_handle(*segment);
		req->request_address = (uint64) (uintptr_t) base;	/* for the main shared memory */
	}
	request_write(base, &h, graph, req, restart);
	return base;
}

/*
 * Copies the results out of a finished request's data: each result vector into its output
 * (PageRank: scores, n x k, or the top_k scores of each column; HITS: hubs into out1,
 * authorities into out2), and the top_k ids of each column.
 */
static void
copy_results(const char *base, const ServiceRequest *req, double *out1, double *out2,
			 int32 *top_index)
{
	const ServiceRequestHeader *h = (const ServiceRequestHeader *) base;
	const double *result = (const double *) (base + h->off_result);
	double	   *out[2] = {out1, out2};
	int			results = service_algorithm(req->algorithm)->results;
	uint64		per_result = service_result_values(req) / (uint64) results;

	Assert((size_t) results <= lengthof(out));
	for (int v = 0; v < results; v++)
		memcpy(out[v], result + v * per_result, per_result * sizeof(double));
	if (service_result_ids(req) > 0)
		memcpy(top_index, base + h->off_result_index, service_result_ids(req) * sizeof(int32));
}

/*
 * Takes back this backend's request: a queued one returns to IDLE at once; a running one gets its
 * cancel flag (the engine stops it between iterations).  Safe to call at any time.
 */
static void
withdraw_request(ServiceSlot *slot)
{
	uint32		queued = SLOT_QUEUED;

	pg_atomic_write_u32(&slot->cancel, 1);
	(void) pg_atomic_compare_exchange_u32(&slot->state, &queued, SLOT_IDLE);
}

/* True when the slot holds no request the engine may still work on. */
static bool
slot_settled(ServiceSlot *slot)
{
	uint32		state = pg_atomic_read_u32(&slot->state);

	return state != SLOT_QUEUED && state != SLOT_RUNNING;
}

/*
 * Waits until this backend's previous request (one it left on ERROR or cancel, which the engine
 * is stopping) is settled, so that the slot can take a new one.
 */
static void
wait_for_idle_slot(ServiceSlot *slot)
{
	while (!slot_settled(slot))
	{
		withdraw_request(slot);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 50,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * Waits on the latch until the engine answers.  On a cancel or termination request, withdraws
 * the request and gives the engine CANCEL_ACK_MS to stop before CHECK_FOR_INTERRUPTS raises the
 * cancel; any ERROR on the way out withdraws it too.
 */
static void
wait_for_answer(ServiceSlot *slot)
{
	PG_TRY();
	{
		while (!slot_settled(slot))
		{
			if (InterruptPending && (QueryCancelPending || ProcDiePending))
			{
				TimestampTz deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
																   CANCEL_ACK_MS);

				withdraw_request(slot);
				while (!slot_settled(slot) && GetCurrentTimestamp() < deadline)
				{
					(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
									 10, PG_WAIT_EXTENSION);
					ResetLatch(MyLatch);
				}
				CHECK_FOR_INTERRUPTS();
			}
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 1000,
							 PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
		}
	}
	PG_CATCH();
	{
		withdraw_request(slot);
		progress_end();
		PG_RE_THROW();
	}
	PG_END_TRY();
	pg_read_barrier();
}

/*
 * Queues req in this backend's slot, rings the doorbell and waits for the answer (an ERROR or a
 * cancel withdraws it).  Copies the outcome; true when the request was answered DONE.  The slot
 * is left settled: the caller reads what it needs, then sets it IDLE.
 */
static bool
submit_and_wait(ServiceSlot *slot, const ServiceRequest *req, ServiceOutcome *outcome)
{
	bool		ok;

	slot->backend_pid = MyProcPid;
	slot->latch = MyLatch;
	slot->request = *req;
	pg_atomic_write_u32(&slot->cancel, 0);
	(void) pg_atomic_exchange_u32(&slot->state, SLOT_QUEUED);
	pg_atomic_fetch_add_u32(&service->doorbell, 1);
	service_futex_wake(&service->doorbell);

	wait_for_answer(slot);
	*outcome = slot->outcome;
	ok = pg_atomic_read_u32(&slot->state) == SLOT_DONE && outcome->request_id == req->request_id;
	if (!ok && outcome->request_id != req->request_id)
	{
		outcome->status = PR_ERR_ENGINE;
		strlcpy(outcome->message, "the service answered another request",
				sizeof(outcome->message));
	}
	return ok;
}

/*
 * How many rows to make room for when this run's table, not cached yet, should be read into
 * shared memory and built by the service (powerrank.gpu_build_rows), else 0: the run goes to the
 * service, which is ready with a device; the graph will be cached; it is unweighted; and a direct
 * scan reads the table, whose size bounds its rows by at least that many.
 */
Size
service_build_rows(RankDevice device, bool cacheable, const EdgeScanTarget *target)
{
	ServiceView view;
	Size		max_rows;

	if (powerrank_gpu_build_rows < 0 || !cacheable || target->n_columns != 2 ||
		device == RANK_DEVICE_CPU || service == NULL || service_my_slot() == NULL)
		return 0;
	read_service(&view);
	if (view.state != SERVICE_READY || !view.has_device)
		return 0;
	max_rows = graph_scan_max_rows(target);
	if (max_rows == 0 || max_rows < (Size) powerrank_gpu_build_rows ||
		(device == RANK_DEVICE_AUTO && max_rows < (Size) powerrank_gpu_min_edges))
		return 0;
	return max_rows;
}

/*
 * Asks the service to build the graph of the rows in segment — src at its start, dst at
 * capacity rows from it — and write its flat form over them.  True with outcome filled (counts,
 * flat size, times) when it did; false with outcome saying why (outcome->rows_intact: the rows
 * are still there).  Raises only a cancel.
 */
bool
service_build(dsm_segment *segment, Size rows, Size capacity, bool undirected,
			  ServiceOutcome *outcome)
{
	ServiceSlot *slot = service_my_slot();
	ServiceRequest req;
	bool		ok;

	wait_for_idle_slot(slot);
	memset(&req, 0, sizeof(req));
	req.request_id = slot->request.request_id + 1;
	req.algorithm = SERVICE_BUILD;
	req.n_edges = (int64) rows;
	req.graph_handle = dsm_segment_handle(segment);
	req.graph_address = (uint64) (uintptr_t) dsm_segment_address(segment);
	req.graph_mapped_size = dsm_segment_map_length(segment);
	req.inline_data = true;		/* no data of its own */
	req.build_rows = rows;
	req.build_capacity = capacity;
	req.build_undirected = undirected;
	ok = submit_and_wait(slot, &req, outcome);
	pg_atomic_write_u32(&slot->state, SLOT_IDLE);
	return ok;
}

/* ERROR (device => 'gpu') for a request the service failed. */
static void
report_service_failure(const ServiceOutcome *out)
{
	ereport(ERROR,
			(errcode(out->status == PR_ERR_NOMEM ? ERRCODE_OUT_OF_MEMORY
					 : out->status == PR_ERR_INVALID ? ERRCODE_INVALID_PARAMETER_VALUE
					 : ERRCODE_SYSTEM_ERROR),
			 errmsg("the powerrank GPU service failed (%s)",
					pr_status_name((PrStatus) out->status)),
			 errdetail("%s", out->message),
			 errhint("device => 'auto' computes on the CPU when the service fails; SELECT * FROM powerrank_service shows its state.")));
}

/*
 * Runs a request's algorithm on the service: PageRank (restart; with top_k > 0 the t = min(top_k,
 * n) best nodes of each column, ids into top_index and scores into out1, column j at j * t; else
 * n*k scores into out1) or HITS (hubs into out1, authorities into out2).  True with the results,
 * stats and reply filled; false when the service failed and the caller should run on the CPU
 * ('auto': after a NOTICE, with reply->fallback set), or, with reply->delta_refused, send a delta
 * entry's graph whole.  ERROR for 'gpu' failures and for cancels.
 */
bool
service_rank(const ServiceRankRequest *request, double *out1, double *out2, int32 *top_index,
			 PrRunStats *stats, ServiceReply *reply)
{
	const PrRestart *restart = request->restart;
	ServiceSlot *slot = service_my_slot();
	ServiceRequest req;
	ServiceOutcome outcome;
	dsm_segment *segment;
	char	   *base;
	bool		ok;

	wait_for_idle_slot(slot);

	memset(&req, 0, sizeof(req));
	req.request_id = slot->request.request_id + 1;
	if (restart == NULL)
		service_request_shape(&req, request->algorithm, 1, true, 0, powerrank_warm_start);
	else
		service_request_shape(&req, request->algorithm, restart->k, restart->uniform,
							  restart->uniform ? 0 : restart->ptr[restart->k], powerrank_warm_start);
	req.mixing_depth = powerrank_mixing_depth;
	req.stop_when_certified = powerrank_stop_when_certified;
	req.alpha = request->alpha;
	req.tolerance = request->tolerance;
	req.norm = (int) request->norm;
	req.max_iterations = request->max_iterations;
	req.top_k = service_algorithm(request->algorithm)->top_k == PR_TOP_K_PER_COLUMN ?
		request->top_k : 0;
	req.n_nodes = request->graph->n_nodes;
	req.n_edges = request->graph->n_edges;
	req.graph_cached = request->cache_segment != NULL;
	if (req.graph_cached)
	{
		req.graph_handle = dsm_segment_handle(request->cache_segment);
		req.graph_address = (uint64) (uintptr_t) dsm_segment_address(request->cache_segment);
		req.graph_mapped_size = dsm_segment_map_length(request->cache_segment);
		req.graph_entry_id = request->cache_entry_id;
	}

	if (req.graph_cached && request->delta_segment != NULL)
	{
		/* the root's graph (above) plus the delta entry's segment, mapped by the engine process */
		req.delta_entry_id = request->delta_entry_id;
		req.delta_handle = dsm_segment_handle(request->delta_segment);
		req.delta_address = (uint64) (uintptr_t) dsm_segment_address(request->delta_segment);
		req.delta_mapped_size = dsm_segment_map_length(request->delta_segment);
	}
	base = place_request(request->graph, slot, restart, &req, &segment);
	if (base == NULL)
	{
		strlcpy(outcome.message, "no dynamic shared memory segment left for the request",
				sizeof(outcome.message));
		outcome.status = PR_ERR_NOMEM;
		ok = false;
	}
	else
	{
		progress_begin(request->name, true, req.n_nodes, req.n_edges, req.k);
		ok = submit_and_wait(slot, &req, &outcome);
		if (ok)
			copy_results(base, &req, out1, out2, top_index);
		pg_atomic_write_u32(&slot->state, SLOT_IDLE);
		progress_end();
		if (segment != NULL)
			dsm_detach(segment);
	}

	if (ok)
	{
		strlcpy(reply->engine, outcome.engine, sizeof(reply->engine));
		strlcpy(reply->residency, outcome.residency, sizeof(reply->residency));
		stats->iterations = outcome.iterations;
		stats->residual = outcome.residual;
		stats->converged = outcome.converged;
		stats->stagnated = outcome.stagnated;
		stats->error_bound = outcome.error_bound;
		stats->mixed_steps = outcome.mixed_steps;
		stats->top_k_certified = (PrCertified) outcome.top_k_certified;
		stats->top_k_ties = outcome.top_k_ties;
		stats->stopped_certified = outcome.stopped_certified;
		stats->seconds = outcome.seconds;
		stats->prepare_seconds = outcome.prepare_seconds;
		stats->engine = reply->engine;
		reply->batch_size = Max(outcome.batch_size, 1);
		return true;
	}
	if (req.delta_entry_id != 0 && outcome.status == PR_ERR_UNSUPPORTED)
	{
		/* the engine cannot take the delta: the caller sends the graph whole */
		elog(DEBUG1, "powerrank: the GPU service cannot serve cached graph %llu as its root plus a delta (%s)",
			 (unsigned long long) req.delta_entry_id, outcome.message);
		reply->delta_refused = true;
		return false;
	}
	if (request->device == RANK_DEVICE_GPU)
		report_service_failure(&outcome);
	snprintf(reply->fallback, sizeof(reply->fallback), "%s", outcome.message);
	ereport(NOTICE,
			(errmsg("the powerrank GPU service failed (%s), computing on the CPU instead",
					pr_status_name((PrStatus) outcome.status)),
			 errdetail("%s", outcome.message)));
	return false;
}
