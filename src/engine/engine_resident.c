/*
 * engine_resident.c — the graphs resident in the engine process.  Graphs of the cache stay
 * mapped and prepared between requests: a prepared engine per (cache entry id, with out-edges),
 * least recently used first out when powerrank.gpu_memory is exceeded, or when their cache
 * segment is gone.  A large graph's first PageRank gets the quick layout and a thread plans the
 * tuned one beside it (the tuner); on several GPUs a graph also keeps its engine over every GPU
 * (pr_parts.h; engine_main.c's measured choice).  A delta entry of the cache is served by the
 * entry of its root, whose engines are given the delta (resident_take_delta).  The status view's
 * resident counters are published from here.
 *
 * Runs in the engine process: no palloc, no elog (see engine.h).
 */
#include "engine/engine.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "storage/dsm_impl.h"

/* Resident graphs at most (besides the memory limit). */
#define MAX_RESIDENT SERVICE_MAX_RESIDENT

/*
 * Most edges of a delta an engine carries, as a fraction of the graph it was prepared on (1 / this):
 * past it the delta's product is no longer small beside the layout's, and the backend sends the
 * graph whole.
 */
#define DELTA_EDGES_FRACTION 8

static Resident residents[MAX_RESIDENT];
static uint64 use_clock = 0;

/* Frees a resident graph's engine over several GPUs (its device memory on every GPU). */
void
resident_multi_release(Resident *r)
{
	if (r->multi != NULL)
		r->multi->ops->release(r->multi);
	r->multi = NULL;
	r->multi_prepared.done = false;
}

/* The tuner thread: plans and uploads the tuned layout of a resident graph for PageRank. */
static void *
tuner_main(void *arg)
{
	Resident   *r = (Resident *) arg;
	PrError		err = {0};
	PrEngine   *e = engine_create_layout(false, &err);

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
void
resident_tuner_start(Resident *r)
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
 * Whether the tuned engine's measured choice beat the quick layout (row-binned CSR in natural ids,
 * one of the candidates it timed), and says so in the server log: chosen layout, its measured and
 * predicted time, the runner-up.  A tuned engine that chose the quick layout itself is not adopted.
 */
static bool
resident_tuned_is_faster(Resident *r)
{
	PrGpuReport report;
	PrError		err = {0};
	char		line[SERVICE_MESSAGE_LEN + 128];
	bool		faster;

	if (engine_config->kind != SERVICE_ENGINE_GPU ||
		engine_gpu.engine_report(r->tuned, &report, &err) != PR_OK || report.measured_ms < 0)
		return true;
	faster = strcmp(report.layout, "natural/binned") != 0;
	snprintf(line, sizeof(line),
			 "cached graph %llu: measured layout choice %s %.3f ms (predicted %.3f), runner-up %s %.3f ms (predicted %.3f); %s",
			 (unsigned long long) r->entry_id, report.layout, report.measured_ms, report.predicted_ms,
			 report.runner_up[0] ? report.runner_up : "none", report.runner_up_ms, report.runner_up_predicted_ms,
			 faster ? "replaces the quick layout" : "the quick layout stays");
	engine_log(line);
	return faster;
}

/*
 * Joins a resident graph's tuner thread (waiting for it when wait, else only when it is done) and
 * adopts its engine when the graph is still prepared for one-column PageRank: the quick engine is
 * released (an entry with a delta gives the tuned engine, planned on the graph it maps, the delta
 * first).  Otherwise the tuned engine is dropped and the quick layout stays.
 */
void
resident_tuner_finish(Resident *r, bool wait)
{
	char		line[SERVICE_MESSAGE_LEN + 128];
	bool		adoptable;

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
	/* the graph still prepared for one-column PageRank: the tuned engine may replace the quick one */
	adoptable = !wait && r->engine != NULL && r->prepared.done &&
		r->prepared.algorithm == SERVICE_PAGERANK && r->prepared.k == 1;
	if (adoptable && !resident_tuned_is_faster(r))
	{
		/* the measured choice kept the quick layout's own order and format: nothing to swap */
		r->tuned->ops->release(r->tuned);
		r->tuned = NULL;
		return;
	}
	if (adoptable && resident_has_delta(r) &&
		(r->tuned->ops->apply_delta == NULL ||
		 r->tuned->ops->apply_delta(r->tuned, &r->delta, &r->tuned_err) != PR_OK))
	{
		/* planned on the graph before the delta, which it cannot take: the quick layout stays */
		snprintf(line, sizeof(line), "the tuned GPU layout of cached graph %llu takes no delta (%s); the quick layout stays",
				 (unsigned long long) r->entry_id, r->tuned_err.message);
		engine_log(line);
		r->tuned->ops->release(r->tuned);
		r->tuned = NULL;
		return;
	}
	if (adoptable)
	{
		r->engine->ops->release(r->engine);
		r->engine = r->tuned;
		r->tuned = NULL;
		r->bytes = resident_bytes(r);
		return;
	}
	r->tuned->ops->release(r->tuned);
	r->tuned = NULL;
}

/* Adopts the tuned layouts that are ready. */
void
resident_tuners_poll(void)
{
	for (int i = 0; i < MAX_RESIDENT; i++)
		if (residents[i].used)
			resident_tuner_finish(&residents[i], false);
}

/* Frees everything a resident entry holds and empties it. */
void
resident_free(Resident *r)
{
	resident_tuner_finish(r, true);
	if (r->engine != NULL)
		r->engine->ops->release(r->engine);
	if (r->batch_engine != NULL)
		r->batch_engine->ops->release(r->batch_engine);
	resident_multi_release(r);
	if (r->own_out)
	{
		pr_free(&pr_malloc_allocator, r->graph.out_ptr);
		pr_free(&pr_malloc_allocator, r->graph.out_dst);
		pr_free(&pr_malloc_allocator, r->graph.out_weight);
	}
	segment_unmap(r->base, r->size, r->mapping);
	if (r->delta_base != NULL)
		segment_unmap(r->delta_base, r->delta_size, r->delta_mapping);
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
void
resident_evict_to_fit(const Resident *keep, bool everything)
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
		if (!everything && (engine_config->memory_limit <= 0 ||
							total <= (uint64) engine_config->memory_limit))
			break;
		evict(lru);
	}
	publish_residency();
}

/* Device bytes the resident entries other than keep hold. */
uint64
resident_bytes_besides(const Resident *keep)
{
	uint64		total = 0;
	int			i;

	for (i = 0; i < MAX_RESIDENT; i++)
		if (residents[i].used && &residents[i] != keep)
			total += residents[i].bytes;
	return total;
}

/* Marks a resident entry as the most recently used. */
void
resident_touch(Resident *r)
{
	r->last_used = ++use_clock;
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
 * no request can name them again (a root stays cached while its delta entries do).  Only for
 * POSIX segments, whose names can be probed; others leave by LRU.
 */
void
resident_drop_vanished(void)
{
	char		name[64];
	int			i;

	if (engine_config->dsm_type != DSM_IMPL_POSIX)
		return;
	for (i = 0; i < MAX_RESIDENT; i++)
	{
		Resident   *r = &residents[i];
		int			fd;

		/* a segment in the main shared memory (odd handle) has no name to look for: LRU */
		if (!r->used || (r->handle & 1) != 0 || r->mapping == MAPPED_MAIN)
			continue;
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
 * Bytes a prepared entry holds on one device, the device where it holds the most (powerrank.gpu_memory
 * bounds each GPU): the GPU engines' reports — the one-GPU and batch engines on
 * powerrank.gpu_device, each part of the engine over several GPUs on its GPU —, or host memory for
 * the CPU engine (its vectors: the slots of the algorithm it is prepared for over its prepared
 * columns, one-column PageRank when it is not prepared; each simulated part holds as many; the batch
 * engine's PageRank slots of engine_config->batch_size columns; the warm start's extra slots are not
 * counted).
 */
size_t
resident_bytes(Resident *r)
{
	PrGpuReport report;
	PrError		err = {0};
	size_t		bytes;
	size_t		on_device[PR_PARTS_MAX] = {0};
	int			one = engine_config->gpu_device < PR_PARTS_MAX ? engine_config->gpu_device : 0;
	ServiceAlgorithm algorithm = r->prepared.done ? r->prepared.algorithm : SERVICE_PAGERANK;
	int			k = r->prepared.done ? r->prepared.k : 1;
	int			n_slots = pr_algorithm_slots(service_algorithm(algorithm), false);
	int			batch_slots = pr_algorithm_slots(service_algorithm(SERVICE_PAGERANK), false);

	if (engine_config->kind == SERVICE_ENGINE_GPU)
	{
		bytes = 0;
		for (int p = 0; r->multi != NULL && p < engine_multi_gpus; p++)
			if (engine_gpu.engine_report(pr_parts_engine_part(r->multi, p), &report, &err) == PR_OK)
				on_device[p] = report.total_bytes;
		if (r->engine != NULL && engine_gpu.engine_report(r->engine, &report, &err) == PR_OK)
			on_device[one] += report.total_bytes;
		if (r->batch_engine != NULL &&
			engine_gpu.engine_report(r->batch_engine, &report, &err) == PR_OK)
			on_device[one] += report.total_bytes;
		for (int d = 0; d < PR_PARTS_MAX; d++)
			bytes = Max(bytes, on_device[d]);
		return bytes;
	}
	bytes = r->size + (size_t) r->graph.n_nodes * (size_t) k * (size_t) n_slots * sizeof(double);
	if (r->batch_engine != NULL)
		bytes += (size_t) r->graph.n_nodes * (size_t) engine_config->batch_size *
			(size_t) batch_slots * sizeof(double);
	if (r->own_out)
		bytes += (size_t) r->graph.n_edges * (sizeof(int32_t) + (r->graph.weighted ? 8 : 0)) +
			(size_t) (r->graph.n_nodes + 1) * sizeof(int64_t);
	return bytes;
}

/* Whether a resident entry serves its graph plus a delta entry's delta (Resident.delta). */
bool
resident_has_delta(const Resident *r)
{
	return r->delta_entry_id != 0;
}

/*
 * Gives a new engine of a resident entry with a delta the delta: prepared on the entry's graph for
 * the request's run (its own prepares then keep the delta), then apply_delta.  PR_OK at once for
 * an entry without a delta; an engine that cannot take it fails the run, and the caller releases
 * it (never an engine serving the graph without the delta).
 */
PrStatus
resident_follow_delta(Resident *r, PrEngine *engine, const ServiceRequest *req, int k, PrError *err)
{
	const PrAlgorithmInfo *a = service_algorithm(req->algorithm);
	PrStatus	status;

	if (!resident_has_delta(r))
		return PR_OK;
	if (engine->ops->apply_delta == NULL)
		return pr_error_set(err, PR_ERR_UNSUPPORTED, "the engine takes no graph delta");
	status = engine->ops->prepare(engine, &r->graph, pr_algorithm_columns(a, k),
								  pr_algorithm_slots(a, req->warm_start), a->needs, err);
	if (status == PR_OK)
		status = engine->ops->apply_delta(engine, &r->delta, err);
	return status;
}

/* A run's residency text: "resident+delta" when the entry served its graph plus a delta. */
void
resident_residency_text(const Resident *r, char *residency, size_t size)
{
	if (r != NULL && resident_has_delta(r))
		strlcpy(residency, "resident+delta", size);
}

/*
 * Makes a resident entry serve the request's graph: its own, or a delta entry's (req's
 * delta_entry_id: the entry's graph plus that delta).  Nothing to do when its engines carry that
 * delta already.  Otherwise the delta entry's segment is mapped and its delta checked against the
 * graph once (it comes from another process: by the prepared engine's apply_delta, which checks
 * it, or here when no engine takes it now), a tuned layout that is ready is adopted, and a prepared
 * engine is given the delta (apply_delta replaces the one it carried; an empty delta serves the
 * graph itself again); an engine not prepared and the batch engine, which would serve the delta
 * before, are released, and engines made later take it (resident_follow_delta; a tuned layout
 * still planned, when it is adopted).  PR_ERR_UNSUPPORTED when the engine refuses it or it passes
 * 1 / DELTA_EDGES_FRACTION of the graph's edges: the entry serves what it served, and the backend
 * sends the graph whole.  Other errors: the delta cannot be mapped or fails its checks.
 */
static PrStatus
resident_take_delta(Resident *r, const ServiceRequest *req, PrError *err)
{
	PrGraphDelta delta;
	void	   *base = NULL;
	size_t		size = 0;
	SegmentMapping mapping = MAPPED_FILE;
	char		message[SERVICE_MESSAGE_LEN];
	char		line[SERVICE_MESSAGE_LEN + 128];
	PrStatus	status = PR_OK;

	if (r->delta_entry_id == req->delta_entry_id)
		return PR_OK;
	memset(&delta, 0, sizeof(PrGraphDelta));
	delta.n_nodes = r->graph.n_nodes;
	if (req->delta_entry_id != 0)
	{
		base = segment_map(req->delta_handle, req->delta_address, req->delta_mapped_size, &size,
						   &mapping, message, sizeof(message));
		if (base == NULL)
			return pr_error_set(err, PR_ERR_INVALID, "%s", message);
		status = pr_graph_delta_view_flat(base, size, &delta, err);
		if (status == PR_OK && delta.n_edges > r->graph.n_edges / DELTA_EDGES_FRACTION)
			status = pr_error_set(err, PR_ERR_UNSUPPORTED, "%lld delta edges beside %lld",
								  (long long) delta.n_edges, (long long) r->graph.n_edges);
	}
	resident_tuner_finish(r, false);
	/* checked once: by the engine that takes it (apply_delta checks), else here for the later ones */
	if (status == PR_OK && r->engine != NULL && r->prepared.done)
		status = r->engine->ops->apply_delta == NULL ?
			pr_error_set(err, PR_ERR_UNSUPPORTED, "the engine takes no graph delta") :
			r->engine->ops->apply_delta(r->engine, &delta, err);
	else if (status == PR_OK)
		status = pr_graph_delta_check(&delta, &r->graph, err);
	if (status != PR_OK)
	{
		if (base != NULL)
			segment_unmap(base, size, mapping);
		snprintf(line, sizeof(line),
				 "cached graph %llu: the engine resident on its root %llu cannot take its delta (%s); the graph is sent whole",
				 (unsigned long long) req->delta_entry_id, (unsigned long long) r->entry_id,
				 err->message);
		engine_log(line);
		return status;
	}
	if (r->engine != NULL && !r->prepared.done)
	{
		r->engine->ops->release(r->engine);
		r->engine = NULL;
	}
	if (r->batch_engine != NULL)
		r->batch_engine->ops->release(r->batch_engine);
	r->batch_engine = NULL;
	r->batch_prepared = false;
	if (r->delta_base != NULL)
		segment_unmap(r->delta_base, r->delta_size, r->delta_mapping);
	r->delta = delta;
	r->delta_base = base;
	r->delta_size = size;
	r->delta_mapping = mapping;
	r->delta_entry_id = req->delta_entry_id;
	return PR_OK;
}

/*
 * Maps the cache segment a request names and makes it a resident entry (checked in full unless
 * this process just built it), with the out-edges HITS needs; NULL, the failure in out, when it
 * cannot be mapped or fails its checks.
 */
static Resident *
resident_map_cached(const ServiceRequest *req, bool with_out, ServiceOutcome *out)
{
	Resident   *r = resident_slot();
	char		message[SERVICE_MESSAGE_LEN];
	PrError		err = {0};
	bool		trusted;

	/* the graph this process just built: already mapped, and checked when written */
	trusted = build_pending_take(req->graph_handle, &r->base, &r->size, &r->mapping);
	if (!trusted)
		r->base = segment_map(req->graph_handle, req->graph_address, req->graph_mapped_size,
							  &r->size, &r->mapping, message, sizeof(message));
	if (r->base == NULL)
	{
		engine_fail(out, PR_ERR_INVALID, message);
		return NULL;
	}
	r->used = true;
	r->entry_id = req->graph_entry_id;
	r->handle = req->graph_handle;
	r->with_out = with_out;
	if ((trusted ? pr_graph_view_flat_header(r->base, r->size, &r->graph, &err)
		 : pr_graph_view_flat_threads(r->base, r->size,
									  pr_thread_count(engine_config->cpu_threads, 16),
									  &r->graph, &err)) != PR_OK)
	{
		resident_free(r);
		engine_fail(out, PR_ERR_INVALID, err.message);
		return NULL;
	}
	return r;
}

/*
 * Finds or makes the resident entry serving a request's graph: the cache segment (kept between
 * requests; a delta entry's root, given the delta: resident_take_delta), or the graph inside the
 * request segment (a one-off entry, freed after the run).
 */
Resident *
resident_for_request(const ServiceRequest *req, char *request_base, size_t request_size,
					 Resident *one_off, ServiceOutcome *out)
{
	bool		with_out = (service_algorithm(req->algorithm)->needs & PR_NEED_PUSH) != 0;
	Resident   *r;
	PrError		err = {0};
	PrStatus	status;

	if (req->graph_cached)
	{
		r = resident_find(req->graph_entry_id, with_out);
		if (r == NULL && (r = resident_map_cached(req, with_out, out)) == NULL)
			return NULL;
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
			engine_fail(out, PR_ERR_INVALID,
						err.message[0] ? err.message : "request graph is missing");
			return NULL;
		}
	}
	if (r->graph.n_nodes != req->n_nodes || r->graph.n_edges != req->n_edges)
	{
		engine_fail(out, PR_ERR_INVALID, "the mapped graph does not match the request");
		if (r != one_off)
			resident_free(r);
		return NULL;
	}
	if (with_out && !r->graph.has_out_edges)
	{
		if (pr_graph_add_out_edges(&r->graph, pr_thread_count(engine_config->cpu_threads, 16),
								   &pr_malloc_allocator, &err) != PR_OK)
		{
			engine_fail(out, err.status, err.message);
			if (r != one_off)
				resident_free(r);
			return NULL;
		}
		r->own_out = true;
	}
	/* a delta entry's graph: the root's entry given the delta */
	if (r != one_off && (status = resident_take_delta(r, req, &err)) != PR_OK)
	{
		engine_fail(out, status, err.message);
		return NULL;
	}
	return r;
}
