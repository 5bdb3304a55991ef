/*
 * engine_batch.c — batching of RWR requests in the GPU service's engine process.
 *
 * Interactive callers ask rwr(source => s, top_k => k) on one cached graph, many at once.  Each
 * such request is one column of personalized PageRank; the engine's product takes k columns in
 * one pass over the matrix (SpMM: a node's k values sit side by side, so one gathered row serves
 * every column), so answering queued requests together costs little more than answering one.
 *
 * A request may join a batch when it is a single-column personalized PageRank / RWR on a cached
 * graph (not the uniform restart: plain PageRank has no reason to batch).  Batches run on one GPU.
 * Requests batch together when they name the same cache entry (and delta entry, whose delta the
 * engine carries) and ask the same alpha, tolerance,
 * norm, iteration limit and the same kind of result (top_k or all scores; top_k may differ: the
 * run ranks max(top_k) and each request takes its prefix).  Every batch run has
 * powerrank.service_batch_size columns, so that the engine prepares the graph once for batches
 * of any size; the columns no request fills repeat the first request's restart.
 *
 * Waiting for company: after taking a request that may batch, the engine takes every compatible
 * queued request at once; when the previous batch had company (more than one request), it also
 * waits up to powerrank.service_batch_wait for more, until the batch is full.  A lone caller
 * therefore never waits, and concurrent callers, who resubmit right after their answers, meet.
 *
 * Semantics: the run stops when every column has met the tolerance (pr_driver.h), so a request
 * answered in a batch may run more iterations than alone: its answer is at least as accurate and
 * agrees with the lone answer within the tolerance.
 *
 * Runs in the engine process: no palloc, no elog (see engine.h).
 */
#include "engine/engine.h"

/* A quiet period that ends the wait of the 'gather' test fault, in seconds. */
#define GATHER_QUIET 0.2
/* Longest wait of the 'gather' test fault, in seconds. */
#define GATHER_LIMIT 10.0

/* Whether a request may be answered as one column of a batch. */
bool
batch_eligible(const ServiceRequest *req)
{
	return req->algorithm == SERVICE_PAGERANK && req->graph_cached && !req->restart_uniform &&
		req->k == 1 && req->restart_entries > 0;
}

/* Whether two eligible requests can share one run. */
static bool
batch_compatible(const ServiceRequest *a, const ServiceRequest *b)
{
	return a->graph_entry_id == b->graph_entry_id && a->graph_handle == b->graph_handle &&
		a->delta_entry_id == b->delta_entry_id &&
		a->n_nodes == b->n_nodes && a->n_edges == b->n_edges && a->alpha == b->alpha &&
		a->tolerance == b->tolerance && a->norm == b->norm &&
		a->max_iterations == b->max_iterations && a->warm_start == b->warm_start &&
		a->mixing_depth == b->mixing_depth && a->stop_when_certified == b->stop_when_certified &&
		(a->top_k > 0) == (b->top_k > 0);
}

/*
 * Takes (QUEUED -> RUNNING) queued requests compatible with the lead's, adding their slot
 * indexes to members (count so far in *n, at most max).  Checks the request before taking it and
 * again after (by its id: ids of a slot only grow), and puts back one that changed in between.
 */
static void
take_companions(int lead, int *members, int *n, int max)
{
	const ServiceRequest *want = &service->slots[lead].request;

	for (int i = 0; i < service->n_slots && *n < max; i++)
	{
		ServiceSlot *slot = &service->slots[i];
		uint32		expected = SLOT_QUEUED;
		uint64		id;
		bool		taken = false;

		if (i == lead || pg_atomic_read_u32(&slot->state) != SLOT_QUEUED)
			continue;
		for (int j = 0; j < *n; j++)
			taken |= members[j] == i;
		if (taken)
			continue;
		pg_read_barrier();
		id = slot->request.request_id;
		if (!batch_eligible(&slot->request) || !batch_compatible(want, &slot->request))
			continue;
		if (!pg_atomic_compare_exchange_u32(&slot->state, &expected, SLOT_RUNNING))
			continue;
		pg_read_barrier();
		if (slot->request.request_id != id || !batch_eligible(&slot->request) ||
			!batch_compatible(want, &slot->request))
		{
			expected = SLOT_RUNNING;
			(void) pg_atomic_compare_exchange_u32(&slot->state, &expected, SLOT_QUEUED);
			continue;
		}
		members[(*n)++] = i;
	}
}

/*
 * Forms a batch around the lead request (slot index lead, already RUNNING): members[0] = lead,
 * then the companions taken.  wait_us > 0 waits that long at most for companions while the batch
 * is not full; gather (the test fault) waits until no companion arrives for 200 ms (10 s at
 * most).  Returns the number of members.
 */
int
batch_gather(int lead, int *members, int max, int wait_us, bool gather)
{
	double		start = pr_clock_seconds();
	double		last_arrival = start;
	int			n = 1;

	members[0] = lead;
	if (max > SERVICE_MAX_BATCH)
		max = SERVICE_MAX_BATCH;
	for (;;)
	{
		uint32		seen = pg_atomic_read_u32(&service->doorbell);
		int			before = n;
		double		now;
		double		left;		/* seconds */

		take_companions(lead, members, &n, max);
		now = pr_clock_seconds();
		if (n > before)
			last_arrival = now;
		if (n >= max)
			break;
		if (gather)
			left = Min(last_arrival + GATHER_QUIET, start + GATHER_LIMIT) - now;
		else
			left = start + wait_us * 1e-6 - now;
		if (left <= 0)
			break;
		service_futex_wait(&service->doorbell, seen, (int) Max(1, Min(left * 1000.0, 1000)));
	}
	return n;
}

/*
 * The restart distribution of a batch of `width` columns: column j is member j's (one column
 * each: ptr, node, weight of its request data), columns past the members repeat member 0's.
 * Arrays are malloc'd into out (free with batch_restart_free); false when out of memory.
 */
bool
batch_restart(int n_members, int width, const PrRestart *member, PrRestart *out)
{
	int64		total = 0;
	int64_t    *ptr;
	int32_t    *node;
	double	   *weight;
	int64		pos = 0;

	for (int j = 0; j < width; j++)
	{
		const PrRestart *r = &member[j < n_members ? j : 0];

		total += r->ptr[1] - r->ptr[0];
	}
	ptr = malloc(sizeof(int64_t) * (width + 1));
	node = malloc(sizeof(int32_t) * Max(total, 1));
	weight = malloc(sizeof(double) * Max(total, 1));
	if (ptr == NULL || node == NULL || weight == NULL)
	{
		free(ptr);
		free(node);
		free(weight);
		return false;
	}
	for (int j = 0; j < width; j++)
	{
		const PrRestart *r = &member[j < n_members ? j : 0];
		int64		count = r->ptr[1] - r->ptr[0];

		ptr[j] = pos;
		memcpy(node + pos, r->node + r->ptr[0], sizeof(int32_t) * count);
		memcpy(weight + pos, r->weight + r->ptr[0], sizeof(double) * count);
		pos += count;
	}
	ptr[width] = pos;
	*out = pr_restart_columns(width, ptr, node, weight);
	return true;
}

/* Frees what batch_restart allocated. */
void
batch_restart_free(PrRestart *restart)
{
	free((void *) restart->ptr);
	free((void *) restart->node);
	free((void *) restart->weight);
	memset(restart, 0, sizeof(*restart));
}

/* The requests of the batch being served (the driver hooks' argument). */
typedef struct BatchRun
{
	int			n;
	ServiceSlot *slot[SERVICE_MAX_BATCH];
	char	   *base[SERVICE_MAX_BATCH];	/* each request's data */
	size_t		size[SERVICE_MAX_BATCH];
	SegmentMapping mapping[SERVICE_MAX_BATCH];
	char		residency[16];	/* where the graph's matrices lived (the outcome's residency) */
} BatchRun;

/* should_stop of a batch: every member asked to cancel, or the worker is gone. */
static bool
batch_cancelled(void *arg)
{
	BatchRun   *b = (BatchRun *) arg;

	if (engine_orphaned())
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

		engine_outcome_begin(slot);
		if (req->inline_data)
		{
			base = (char *) slot->inline_data;
			size = sizeof(slot->inline_data);
		}
		else if ((base = segment_map(req->request_handle, req->request_address,
									 req->request_size, &size, &mapping, message,
									 sizeof(message))) == NULL)
		{
			engine_fail(&slot->outcome, PR_ERR_INVALID, message);
			engine_publish(slot, PR_ERR_INVALID);
			continue;
		}
		if (!engine_request_valid(req, base, size) || req->restart_entries <= 0)
		{
			segment_release_request(req, base, size, mapping);
			engine_fail(&slot->outcome, PR_ERR_INVALID, "malformed request segment");
			engine_publish(slot, PR_ERR_INVALID);
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

	engine_iteration_options(lead, batch_cancelled, batch_progress, b, &iter);
	if (resident_has_delta(r))
		iter.absent_nodes = r->delta.n_absent;
	if (engine_config->kind == SERVICE_ENGINE_CPU_TEST)
	{
		/* the GPU engine's residency choice for the batch's columns, or its failure */
		status = engine_test_residency(lead, width, &r->graph, b->residency, sizeof(b->residency),
									   err);
		if (status != PR_OK)
			return status;
	}
	if (r->batch_engine == NULL)
	{
		if ((r->batch_engine = engine_create_layout(false, err)) == NULL)
			return err->status == PR_OK ? PR_ERR_ENGINE : err->status;
		if ((status = resident_follow_delta(r, r->batch_engine, lead, width, err)) != PR_OK)
		{
			/* never kept without the entry's delta */
			r->batch_engine->ops->release(r->batch_engine);
			r->batch_engine = NULL;
			return status;
		}
	}

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
 * batch_gather) with one run of engine_config->batch_size columns, and answers every member.
 * Returns the status of the run; PR_ERR_ENGINE means the device context may be broken (the
 * caller then exits).
 */
PrStatus
batch_serve(const int *members, int n)
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

	resident_drop_vanished();
	r = resident_for_request(&b.slot[0]->request, b.base[0], b.size[0], NULL,
							 &b.slot[0]->outcome);
	if (r == NULL)
	{
		status = (PrStatus) b.slot[0]->outcome.status;
		for (int j = 0; j < b.n; j++)
		{
			if (j > 0)
				b.slot[j]->outcome = b.slot[0]->outcome;
			b.slot[j]->outcome.request_id = b.slot[j]->request.request_id;
			segment_release_request(&b.slot[j]->request, b.base[j], b.size[j], b.mapping[j]);
			engine_publish(b.slot[j], status);
		}
		return status;
	}
	resident_touch(r);

	for (int j = 0; j < b.n; j++)
	{
		const ServiceRequestHeader *h = (const ServiceRequestHeader *) b.base[j];

		memset(&column[j], 0, sizeof(PrRestart));
		column[j].k = 1;
		column[j].ptr = (const int64_t *) (b.base[j] + h->off_restart_ptr);
		column[j].node = (const int32_t *) (b.base[j] + h->off_restart_node);
		column[j].weight = (const double *) (b.base[j] + h->off_restart_weight);
		progress_set_slot_phase(b.slot[j], PHASE_PREPARING);
	}
	memset(&stats, 0, sizeof(stats));
	resident = r->batch_prepared;
	if (!batch_restart(b.n, Max(engine_config->batch_size, b.n), column, &restart))
		status = pr_error_set(&err, PR_ERR_NOMEM, "out of memory for a batch's restart");
	else
	{
		status = batch_run(&b, r, &restart, &err, &stats);
		if (status == PR_ERR_NOMEM)
		{
			/* device memory taken by other resident graphs: free them and try once more */
			resident_multi_release(r);
			resident_evict_to_fit(r, true);
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

		if (engine_config->kind == SERVICE_ENGINE_GPU &&
			engine_gpu.engine_report(r->batch_engine, &report, &report_err) == PR_OK)
		{
			strlcpy(engine_name, report.engine, sizeof(engine_name));
			strlcpy(b.residency, report.residency, sizeof(b.residency));
		}
		else
			strlcpy(engine_name, "cpu-test via service", sizeof(engine_name));
		resident_residency_text(r, b.residency, sizeof(b.residency));
		r->bytes = resident_bytes(r);
	}
	for (int j = 0; j < b.n; j++)
	{
		ServiceOutcome *out = &b.slot[j]->outcome;

		if (status == PR_OK)
		{
			engine_outcome_done(out, &stats, resident, b.n);
			strlcpy(out->engine, engine_name, sizeof(out->engine));
			strlcpy(out->residency, b.residency, sizeof(out->residency));
			pg_atomic_fetch_add_u64(resident ? &service->reuses : &service->uploads, 1);
		}
		else
			engine_fail(out, status, err.message[0] ? err.message : pr_status_name(status));
		segment_release_request(&b.slot[j]->request, b.base[j], b.size[j], b.mapping[j]);
		engine_publish(b.slot[j], status);
	}
	if (status == PR_OK)
		pg_atomic_fetch_add_u64(&service->batch_microseconds,
								(uint64) ((pr_clock_seconds() - started) * 1e6));
	if (status != PR_OK && status != PR_ERR_INTERRUPTED)
		resident_free(r);
	resident_evict_to_fit(NULL, false);
	return status;
}
