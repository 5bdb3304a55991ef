/*
 * engine_main.c — the engine process of the GPU service: a plain child of the service worker that
 * owns the engine (for the GPU engine: the CUDA context) and serves ranking requests.  This file
 * holds the process's main loop and the serving of one request: the request's data mapped and
 * checked, its graph found among the resident ones (engine_resident.c), the driver run into the
 * request's result area, the answer published.
 *
 * The rules of this process (no palloc, no elog, no PostgreSQL lock; segments mapped by name; it
 * dies with the worker) are in engine.h, which names the other files of the process.
 *
 * Several GPUs: when more than one may be used (powerrank.gpu_devices, the multi-GPU library
 * started), a cached graph also gets an engine over every GPU (pr_parts.h), and each kind of run
 * (PageRank, RWR from several sources, HITS) goes where it is measured faster: the first calls of
 * a kind on one GPU, the next on every GPU, then always on the faster (multi_wanted).
 */
#include "engine/engine.h"

/* Creates the engine a run needs on a resident entry when it has none yet (multi: every GPU). */
static PrStatus
engine_for_run(const ServiceRequest *req, Resident *r, bool multi, PrError *err)
{
	PrStatus	status;

	if (multi)
	{
		if (r->multi == NULL && (r->multi = engine_create_multi(err)) == NULL)
			return err->status == PR_OK ? PR_ERR_ENGINE : err->status;
		return PR_OK;
	}
	if (r->engine == NULL)
	{
		/*
		 * A large graph's first PageRank (powerrank.gpu_quick_layout_edges): the quick layout
		 * (row-binned CSR in natural ids: no model, no relabelling) now; for a cached graph the
		 * tuned layout (the configured kernel, the model's choice) is planned beside in a thread
		 * and replaces it when ready (publish_success), a one-off graph (not cached: served once)
		 * keeps it.  Planning R-MAT 24 takes tens of seconds that no call should wait for, also
		 * when the first call is on a delta entry of the graph (the quick engine takes the delta,
		 * and so does the tuned one when it replaces it).  The cpu-test engine takes the same path
		 * (its two engines are alike), so that CI exercises the thread and the swap.
		 */
		r->quick = engine_config->quick_layout_edges >= 0 &&
			(engine_config->kind == SERVICE_ENGINE_CPU_TEST ||
			 engine_config->gpu_kernel == PR_GPU_KERNEL_AUTO) &&
			req->algorithm == SERVICE_PAGERANK && req->k == 1 &&
			r->graph.n_edges >= engine_config->quick_layout_edges;
		if ((r->engine = engine_create_layout(r->quick, err)) == NULL)
			return err->status == PR_OK ? PR_ERR_ENGINE : err->status;
		if ((status = resident_follow_delta(r, r->engine, req, req->k, err)) != PR_OK)
		{
			/* never kept without the entry's delta */
			r->engine->ops->release(r->engine);
			r->engine = NULL;
			return status;
		}
	}
	return PR_OK;
}

/* Runs the driver for a request on a resident entry (multi: on every GPU); fills the outcome. */
static PrStatus
run_driver(ServiceSlot *slot, Resident *r, bool multi, char *request_base, PrError *err,
		   PrRunStats *stats)
{
	const ServiceRequest *req = &slot->request;
	const ServiceRequestHeader *h = (const ServiceRequestHeader *) request_base;
	double	   *result = (double *) (request_base + h->off_result);
	PrIterOptions iter;
	PrRestart	restart;
	PrEngine   *engine;
	PrStatus	status;

	engine_iteration_options(req, engine_request_cancelled, progress_report, slot, &iter);

	if (engine_config->kind == SERVICE_ENGINE_CPU_TEST && !multi)
	{
		/* the GPU engine's residency choice for this graph and request, or its failure */
		status = engine_test_residency(req, req->k, &r->graph, slot->outcome.residency,
									   sizeof(slot->outcome.residency), err);
		if (status != PR_OK)
			return status;
	}
	if ((status = engine_for_run(req, r, multi, err)) != PR_OK)
		return status;
	engine = multi ? r->multi : r->engine;
	/* a delta entry's graph: the stopping rule counts its nodes, the absent ones left out */
	if (resident_has_delta(r))
		iter.absent_nodes = r->delta.n_absent;
	progress_set_slot_phase(slot, PHASE_PREPARING);
	if (req->algorithm == SERVICE_HITS)
		return pr_hits(engine, &r->graph, &iter, result, result + req->n_nodes, stats, err);

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
		return pr_pagerank_top(engine, &r->graph, req->alpha, &restart, &iter, req->top_k,
							   (int32_t *) (request_base + h->off_result_index), result, stats,
							   err);
	return pr_pagerank(engine, &r->graph, req->alpha, &restart, &iter, result, stats, err);
}

/* The kind of run a request is, for the measured choice (Resident.run_ms). */
static int
run_kind(const ServiceRequest *req)
{
	return req->algorithm == SERVICE_HITS ? 2 : req->k > 1 ? 1 : 0;
}

/* Whether a kind of run is measured on both sides (RUNS_BEFORE_CHOICE calls each) and every GPU
 * was the faster. */
static bool
settled_on_multi(const Resident *r, int kind)
{
	return r->runs[kind][0] >= RUNS_BEFORE_CHOICE && r->runs[kind][1] >= RUNS_BEFORE_CHOICE &&
		r->run_ms[kind][1] < r->run_ms[kind][0];
}

/*
 * Whether a request runs on every GPU: several may be used, the graph is cached (not a one-off) and
 * served without a delta (the engine over several GPUs takes none), its runs there have not failed,
 * and, for this kind of run, the calls measured so far say so:
 * RUNS_BEFORE_CHOICE calls on one GPU, then as many on every GPU, then wherever the fastest call
 * per iteration was.  A graph whose one-GPU engine streams (larger than one GPU, or than
 * powerrank.gpu_memory) is measured the same way: resident on several GPUs it wins.
 */
static bool
multi_wanted(const ServiceRequest *req, const Resident *r, const Resident *one_off)
{
	int			kind = run_kind(req);

	if (engine_multi_gpus < 2 || r == one_off || r->multi_failed || resident_has_delta(r))
		return false;
	if (r->runs[kind][0] < RUNS_BEFORE_CHOICE)
		return false;
	return r->runs[kind][1] < RUNS_BEFORE_CHOICE || settled_on_multi(r, kind);
}

/*
 * Records a successful run's time per iteration (the call's time without the engine's prepare and
 * the warm start, over its iterations) as the kind's figure on one GPU or on several, keeping the
 * fastest seen: a call slowed by something else does not swing the choice.  Calls on the quick
 * layout are not counted: one GPU is measured on its tuned layout.
 */
static void
record_run_time(const ServiceRequest *req, Resident *r, bool multi, const PrRunStats *stats)
{
	double	   *ms = &r->run_ms[run_kind(req)][multi ? 1 : 0];
	int		   *runs = &r->runs[run_kind(req)][multi ? 1 : 0];
	double		run = (stats->seconds - stats->prepare_seconds - stats->warm_seconds) * 1000.0 /
		Max(stats->iterations, 1);

	/* the quick layout is not what one GPU runs once tuned: wait for the tuned one */
	if (!multi && r->quick)
		return;
	if (*runs == 0 || run < *ms)
		*ms = run;
	(*runs)++;
}

/*
 * Maps a request's data (or points at the data inline in the slot) and checks it.  Returns the
 * data's base, or NULL with the failure in the outcome and nothing left mapped: a backend that
 * left or a malformed segment is not a device failure (PR_ERR_INVALID).
 */
static char *
request_map(ServiceSlot *slot, size_t *request_size, SegmentMapping *request_mapping)
{
	const ServiceRequest *req = &slot->request;
	char		message[SERVICE_MESSAGE_LEN];
	char	   *request_base;

	if (req->inline_data)
	{
		/* a small request: its data is in the slot, nothing to map */
		request_base = (char *) slot->inline_data;
		*request_size = sizeof(slot->inline_data);
		*request_mapping = MAPPED_FILE;
	}
	else
	{
		request_base = segment_map(req->request_handle, req->request_address, req->request_size,
								   request_size, request_mapping, message,
								   sizeof(message));
		if (request_base == NULL)
		{
			/* the backend may have left: not a device failure */
			engine_fail(&slot->outcome, PR_ERR_INVALID, message);
			return NULL;
		}
	}
	if (!engine_request_valid(req, request_base, *request_size))
	{
		segment_release_request(req, request_base, *request_size, *request_mapping);
		engine_fail(&slot->outcome, PR_ERR_INVALID, "malformed request segment");
		return NULL;
	}
	return request_base;
}

/* Whether a resident graph's engine (multi: over every GPU) is prepared for this request's
 * algorithm and k. */
static bool
prepared_for(const Resident *r, const ServiceRequest *req, bool multi)
{
	const PreparedFor *p = multi ? &r->multi_prepared : &r->prepared;

	return p->done && p->algorithm == req->algorithm && p->k == req->k;
}

/*
 * Runs a request on every GPU, once more after evicting the other resident graphs when device
 * memory is short.  A failure other than an interruption is never the request's: it is logged,
 * the graph runs on one GPU from now on, and *use_multi and *resident are set for that engine.
 */
static PrStatus
serve_multi(ServiceSlot *slot, Resident *r, char *request_base, PrError *err,
			PrRunStats *stats, bool *use_multi, bool *resident)
{
	PrStatus	status = run_driver(slot, r, true, request_base, err, stats);

	if (status == PR_ERR_NOMEM)
	{
		/* device memory taken by other resident graphs: free them and try once more */
		resident_multi_release(r);
		resident_evict_to_fit(r, true);
		memset(err, 0, sizeof(*err));
		status = run_driver(slot, r, true, request_base, err, stats);
	}
	if (status != PR_OK && status != PR_ERR_INTERRUPTED)
	{
		/* never fail a request for the path over several GPUs: this graph runs on one GPU now */
		char		line[SERVICE_MESSAGE_LEN + 128];

		snprintf(line, sizeof(line),
				 "the run on %d GPUs failed on cached graph %llu (%s); it runs on one GPU from now on",
				 engine_multi_gpus, (unsigned long long) r->entry_id,
				 err->message[0] ? err->message : pr_status_name(status));
		engine_log(line);
		resident_multi_release(r);
		r->multi_failed = true;
		*use_multi = false;
		*resident = prepared_for(r, &slot->request, false);
		memset(err, 0, sizeof(*err));
	}
	return status;
}

/*
 * Runs a request on the single-GPU engine, once more after evicting the other resident graphs
 * when device memory is short (not for a one-off graph, which is not resident).
 */
static PrStatus
serve_single(ServiceSlot *slot, Resident *r, const Resident *one_off, char *request_base,
			 PrError *err, PrRunStats *stats)
{
	PrStatus	status = run_driver(slot, r, false, request_base, err, stats);

	if (status == PR_ERR_NOMEM && r != one_off)
	{
		/* device memory taken by other resident graphs: free them and try once more */
		resident_multi_release(r);
		resident_evict_to_fit(r, true);
		memset(err, 0, sizeof(*err));
		status = run_driver(slot, r, false, request_base, err, stats);
	}
	return status;
}

/*
 * Whether a graph ran streamed only because other resident graphs hold the device memory it would
 * take resident (within powerrank.gpu_memory): they are then evicted, and its next call prepares
 * it resident.
 */
static bool
streamed_for_lack_of_room(const Resident *r, const Resident *one_off, bool resident,
						  const PrGpuReport *report)
{
	return !resident && r != one_off && report->resident_need_bytes > 0 &&
		resident_bytes_besides(r) > 0 &&
		report->resident_need_bytes + PR_DEVICE_RESERVE <=
		report->device_free_bytes + resident_bytes_besides(r) &&
		(engine_config->memory_limit <= 0 ||
		 report->resident_need_bytes <= (uint64) engine_config->memory_limit);
}

/* Logs where the time went when a graph was put on the device, for the server log. */
static void
log_device_placement(const Resident *r, const PrGpuReport *report, bool streamed,
					 double map_seconds, const PrRunStats *stats)
{
	char		line[768];
	size_t		used;

	used = (size_t) snprintf(line, sizeof(line),
							 "graph of %lld nodes, %lld edges on the device (%s): graph mapped in %.1f ms, prepared in %.1f ms (plan %.1f ms: host arrays %.1f, tile setup %.1f; upload %.1f ms)",
							 (long long) r->graph.n_nodes, (long long) r->graph.n_edges, report->engine,
							 map_seconds * 1000.0, stats->prepare_seconds * 1000.0,
							 report->plan_seconds * 1000.0, report->host_seconds * 1000.0,
							 report->smem_setup_seconds * 1000.0, report->upload_seconds * 1000.0);
	if (streamed && used < sizeof(line))
		used += (size_t) snprintf(line + used, sizeof(line) - used,
								  "; larger than the device memory (or powerrank.gpu_memory): streamed from %s host memory every iteration, %lld blocks, %.1f MB a product, %.1f MB of device memory",
								  report->stream_mode, (long long) report->stream_blocks,
								  report->stream_bytes / 1e6, report->total_bytes / 1e6);
	if (report->measured_ms >= 0 && used < sizeof(line))
		snprintf(line + used, sizeof(line) - used,
				 "; measured layout choice %s %.3f ms (predicted %.3f), runner-up %s %.3f ms",
				 report->layout, report->measured_ms, report->predicted_ms,
				 report->runner_up[0] ? report->runner_up : "none", report->runner_up_ms);
	engine_log(line);
}

/*
 * Fills the outcome's engine and residency from the GPU engine's report of a successful run and
 * logs a graph's placement on the device.  Returns whether the graph should make room for itself
 * (streamed_for_lack_of_room).
 */
static bool
describe_gpu_run(ServiceOutcome *out, Resident *r, const Resident *one_off, bool resident,
				 const PrGpuReport *report, double map_seconds, const PrRunStats *stats)
{
	bool		streamed = strcmp(report->residency, "streamed") == 0;
	bool		make_room;

	strlcpy(out->engine, report->engine, sizeof(out->engine));
	strlcpy(out->residency, report->residency, sizeof(out->residency));
	/* a streamed graph's tuned layout would stream the same way: no tuner */
	if (streamed)
		r->quick = false;
	make_room = streamed && streamed_for_lack_of_room(r, one_off, resident, report);
	if (!resident)
		log_device_placement(r, report, streamed, map_seconds, stats);
	return make_room;
}

/*
 * Evicts the other resident graphs and releases this graph's streamed engine, so that its next
 * call prepares it resident.
 */
static void
make_room_for(Resident *r)
{
	char		line[SERVICE_MESSAGE_LEN];

	snprintf(line, sizeof(line),
			 "cached graph %llu ran streamed for lack of free device memory; the other resident graphs are evicted so that its next call runs resident",
			 (unsigned long long) r->entry_id);
	engine_log(line);
	resident_evict_to_fit(r, true);
	r->engine->ops->release(r->engine);
	r->engine = NULL;
	r->prepared.done = false;
}

/*
 * Releases a graph's one-GPU engine when it streams and every GPU was measured faster for this kind
 * of run: a graph larger than one GPU (or powerrank.gpu_memory) then runs resident on every GPU, and
 * the streamed engine's device buffers and registered host memory serve nothing.  Another kind of
 * run that wants one GPU makes it again.
 */
static void
release_streamed_loser(Resident *r, const ServiceRequest *req)
{
	PrGpuReport report;
	PrError		err = {0};

	if (engine_config->kind != SERVICE_ENGINE_GPU || r->engine == NULL ||
		!settled_on_multi(r, run_kind(req)) ||
		engine_gpu.engine_report(r->engine, &report, &err) != PR_OK ||
		strcmp(report.residency, "streamed") != 0)
		return;
	resident_tuner_finish(r, true);
	r->engine->ops->release(r->engine);
	r->engine = NULL;
	r->prepared.done = false;
}

/*
 * The cpu-test engine's residency of a run on its parts: the GPU engine's choice for part 0's graph
 * (every node, part 0's share of the edges), as a run on several GPUs reports part 0's; none when
 * neither way fits (the parts, CPU engines, have run anyway).
 */
static void
describe_test_parts_run(ServiceOutcome *out, const ServiceRequest *req, const Resident *r)
{
	PrPartsReport split;
	PrError		err = {0};
	PrGraph		part = r->graph;

	if (pr_parts_engine_report(r->multi, &split, &err) != PR_OK)
		return;
	part.n_edges = split.edges[0];
	(void) engine_test_residency(req, req->k, &part, out->residency, sizeof(out->residency), &err);
}

/*
 * Publishes a successful run: the outcome (stats, engine, residency), the service's counters, the
 * graph marked prepared (its tuner started when cached), room made when it ran streamed for lack
 * of it, and its size recounted.
 */
static void
publish_success(ServiceSlot *slot, Resident *r, const Resident *one_off, bool resident,
				bool use_multi, double map_seconds, const PrRunStats *stats)
{
	const ServiceRequest *req = &slot->request;
	ServiceOutcome *out = &slot->outcome;
	PrGpuReport report;
	PrError		report_err;
	bool		make_room = false;
	PreparedFor *prepared;

	engine_outcome_done(out, stats, resident, 1);
	if (use_multi)
	{
		/* the engine's name says the GPUs ("gpu-multi(2)"; "cpu-parts(3)" for the cpu-test) */
		strlcpy(out->engine, stats->engine, sizeof(out->engine));
		if (engine_config->kind == SERVICE_ENGINE_GPU &&
			engine_gpu.engine_report(pr_parts_engine_part(r->multi, 0), &report, &report_err) == PR_OK)
			strlcpy(out->residency, report.residency, sizeof(out->residency));
		else if (engine_config->kind == SERVICE_ENGINE_CPU_TEST)
			describe_test_parts_run(out, req, r);
	}
	else if (engine_config->kind == SERVICE_ENGINE_GPU &&
			 engine_gpu.engine_report(r->engine, &report, &report_err) == PR_OK)
		make_room = describe_gpu_run(out, r, one_off, resident, &report, map_seconds, stats);
	else
		strlcpy(out->engine, "cpu-test via service", sizeof(out->engine));
	resident_residency_text(r, out->residency, sizeof(out->residency));
	pg_atomic_fetch_add_u64(resident ? &service->reuses : &service->uploads, 1);
	record_run_time(req, r, use_multi, stats);
	prepared = use_multi ? &r->multi_prepared : &r->prepared;
	prepared->done = true;
	prepared->algorithm = req->algorithm;
	prepared->k = req->k;
	if (!use_multi && r != one_off)
		resident_tuner_start(r);
	if (make_room)
		make_room_for(r);
	if (use_multi)
		release_streamed_loser(r, req);
	r->bytes = resident_bytes(r);
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
		return build_serve(slot, fault);
	engine_outcome_begin(slot);
	memset(&stats, 0, sizeof(stats));

	if ((status = engine_inject_fault(out, fault)) != PR_OK)
		return status;
	if ((request_base = request_map(slot, &request_size, &request_mapping)) == NULL)
		return PR_ERR_INVALID;

	resident_drop_vanished();
	map_seconds = pr_clock_seconds();
	r = resident_for_request(req, request_base, request_size, &one_off, out);
	map_seconds = pr_clock_seconds() - map_seconds;
	if (r == NULL)
	{
		segment_release_request(req, request_base, request_size, request_mapping);
		return out->status;
	}
	resident_touch(r);
	resident_tuner_finish(r, false);
	engine_current_slot = slot;

	use_multi = multi_wanted(req, r, &one_off);
	resident = prepared_for(r, req, use_multi);
	if (use_multi)
		status = serve_multi(slot, r, request_base, &err, &stats, &use_multi, &resident);
	if (!use_multi)
		status = serve_single(slot, r, &one_off, request_base, &err, &stats);
	engine_current_slot = NULL;

	if (status == PR_OK)
		publish_success(slot, r, &one_off, resident, use_multi, map_seconds, &stats);
	else
	{
		engine_fail(out, status, err.message[0] ? err.message : pr_status_name(status));
		(use_multi ? &r->multi_prepared : &r->prepared)->done = false;
	}

	if (r == &one_off)
	{
		one_off.base = NULL;	/* the graph lives in the request segment */
		resident_free(&one_off);
	}
	else if (status != PR_OK && status != PR_ERR_INTERRUPTED)
		resident_free(r);
	segment_release_request(req, request_base, request_size, request_mapping);
	/* the graph just served stays: its engines each fit powerrank.gpu_memory (the engine over
	 * several GPUs and a streamed one-GPU engine may share a GPU until the choice is made) */
	resident_evict_to_fit(r == &one_off || status != PR_OK ? NULL : r, false);
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
service_engine_main(const ServiceEngineConfig *config)
{
	int			next = 0;
	bool		had_company = false;	/* the last request that could batch had company */

	engine_process_begin(config);
	engine_start();

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

		if (engine_orphaned())
			engine_exit(1);
		resident_tuners_poll();
		if (index < 0)
		{
			service_futex_wait(&service->doorbell, seen, 1000);
			continue;
		}
		slot = &service->slots[index];
		pg_read_barrier();
		fault = (ServiceFault) pg_atomic_exchange_u32(&service->fault, FAULT_NONE);
		eligible = engine_config->batch_size > 1 && batch_eligible(&slot->request);
		if (fault == FAULT_GATHER && !eligible)
		{
			/* the test fault waits for a request that may batch */
			pg_atomic_write_u32(&service->fault, FAULT_GATHER);
			fault = FAULT_NONE;
		}
		n_members = 1;
		if (eligible && (fault == FAULT_NONE || fault == FAULT_GATHER))
			n_members = batch_gather(index, members, engine_config->batch_size,
									 had_company ? engine_config->batch_wait_us : 0,
									 fault == FAULT_GATHER);
		if (n_members > 1)
		{
			had_company = true;
			status = batch_serve(members, n_members);
		}
		else
		{
			if (eligible)
				had_company = false;
			status = serve(slot, fault == FAULT_GATHER ? FAULT_NONE : fault);
		}
		if (n_members > 1 || slot->request.algorithm != SERVICE_BUILD)
			build_pending_drop();
		/* about to restart (below): no new request may be queued to this process */
		if (status == PR_ERR_ENGINE)
			pg_atomic_write_u32(&service->engine_ready, 0);
		if (n_members == 1)
			engine_publish(slot, status);
		build_pending_trim();

		/* a device error may leave the context unusable: start over in a fresh process */
		if (status == PR_ERR_ENGINE)
			engine_exit(ENGINE_EXIT_RESET);
	}
}
