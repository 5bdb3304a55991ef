/*
 * engine_build.c — graphs built from rows in the engine process (SERVICE_BUILD): the backend
 * reads the rows into a segment, the engine builds the flat graph over them (on the GPU, or with
 * pr_graph_build for the cpu-test engine) and keeps the segment mapped for the request that
 * follows, the same backend's ranking on the graph it just published.
 *
 * Runs in the engine process: no palloc, no elog (see engine.h).
 */
#include "engine/engine.h"

#include <sys/mman.h>
#include <unistd.h>

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

/*
 * Hands the last build's segment over when it is the one a request names (true: base, size and
 * mapping set, and the segment is the caller's to unmap); false leaves them untouched.
 */
bool
build_pending_take(dsm_handle handle, void **base, size_t *size, SegmentMapping *mapping)
{
	if (pending.base == NULL || pending.handle != handle)
		return false;
	*base = pending.base;
	*size = pending.size;
	*mapping = pending.mapping;
	pending.base = NULL;
	return true;
}

/*
 * Gives the rest of the last build's segment, past its graph, back to the system (MADV_REMOVE):
 * after the answer is published, so that the caller does not wait for it.
 */
void
build_pending_trim(void)
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
void
build_pending_drop(void)
{
	if (pending.base != NULL)
		segment_unmap(pending.base, pending.size, pending.mapping);
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
	options.n_threads = pr_thread_count(engine_config->cpu_threads, 64);
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
 * follows (pending); the rest of the segment is given back once the answer is out
 * (build_pending_trim: the cache counts only the graph).  PR_ERR_ENGINE (a CUDA failure)
 * restarts the process as for rankings.
 */
PrStatus
build_serve(ServiceSlot *slot, ServiceFault fault)
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

	engine_outcome_begin(slot);
	out->rows_intact = true;
	if ((status = engine_inject_fault(out, fault)) != PR_OK)
		return status;
	build_pending_drop();
	base = segment_map(req->graph_handle, req->graph_address, req->graph_mapped_size, &size,
					   &mapping, message, sizeof(message));
	if (base == NULL)
	{
		engine_fail(out, PR_ERR_INVALID, message);
		return PR_ERR_INVALID;
	}
	mapped = pr_clock_seconds();
	if (req->build_rows > req->build_capacity ||
		req->build_capacity > size / (2 * sizeof(int64_t)))
	{
		segment_unmap(base, size, mapping);
		engine_fail(out, PR_ERR_INVALID, "malformed build request");
		return PR_ERR_INVALID;
	}
	src = (const int64_t *) base;
	dst = (const int64_t *) base + req->build_capacity;
	progress_set_slot_phase(slot, PHASE_BUILDING);
	if (engine_config->kind != SERVICE_ENGINE_GPU)
	{
		status = cpu_build_flat(src, dst, req->build_rows, req->build_undirected, base, size, out,
								&err);
		strlcpy(out->engine, "cpu-test via service", sizeof(out->engine));
	}
	else if (engine_gpu.build_flat == NULL)
		status = pr_error_set(&err, PR_ERR_UNSUPPORTED,
							  "the GPU library \"%s\" cannot build graphs (no pr_gpu_build_flat)",
							  engine_config->gpu_library);
	else
	{
		PrGpuBuildReport report;

		status = engine_gpu.build_flat(engine_config->gpu_device, src, dst, req->build_rows,
								req->build_undirected, base, size,
								pr_thread_count(engine_config->cpu_threads, 16), &report, &err);
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
		segment_unmap(base, size, mapping);
		engine_fail(out, status, err.message[0] ? err.message : pr_status_name(status));
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
