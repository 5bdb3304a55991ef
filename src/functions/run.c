/*
 * run.c — one ranking run: loads the graph (table or rankgraph), sends it to the GPU service or
 * creates the CPU engine and runs the driver here, records the statistics and reports
 * non-convergence.
 *
 * The engine (and its threads) exists only while the driver runs.  It is released right after the
 * driver returns, before any ERROR can be raised, and also by a reset callback of the run's memory
 * context, so no worker thread outlives an aborted statement.  The driver polls should_stop between
 * iterations; a cancel (statement_timeout, pg_cancel_backend) makes it return PR_ERR_INTERRUPTED,
 * the engine is released, and CHECK_FOR_INTERRUPTS() raises the usual cancel ERROR.
 */
#include "powerrank.h"

#include "miscadmin.h"
#include "utils/memutils.h"

#include "cache/graph_cache.h"
#include "graph/rankgraph.h"
#include "functions/run.h"

/*
 * Releases the engine when the run's context goes away (normal end or ERROR), and clears the
 * run's progress entry.
 */
static void
release_engine_callback(void *arg)
{
	RankRun    *run = (RankRun *) arg;

	progress_end();
	if (run->engine != NULL)
	{
		PrEngine   *engine = run->engine;

		run->engine = NULL;
		engine->ops->release(engine);
	}
}

/*
 * Starts a run of algorithm on device: a memory context (child of the current one) with the
 * allocator and cleanup.
 */
RankRun *
rank_run_begin(const char *algorithm, RankDevice device)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "powerrank run",
											  ALLOCSET_DEFAULT_SIZES);
	RankRun    *run = MemoryContextAllocZero(cxt, sizeof(RankRun));

	run->algorithm = algorithm;
	run->device = device;
	run->cxt = cxt;
	run->alloc = powerrank_context_allocator(cxt);
	run->started = pr_clock_seconds();
	run->cleanup.func = release_engine_callback;
	run->cleanup.arg = run;
	MemoryContextRegisterResetCallback(cxt, &run->cleanup);
	return run;
}

/* Whether the run's graph is a delta entry's: its root (run->graph) plus run->delta. */
static bool
run_has_delta(const RankRun *run)
{
	return run->delta_segment != NULL;
}

/* Whether internal node node of run->graph is absent from the graph ranked (a delta's). */
bool
rank_run_node_absent(const RankRun *run, int64 node)
{
	return run_has_delta(run) && pr_graph_delta_absent(&run->delta, (int32) node);
}

/* Nodes of the graph ranked: run->graph's, less a delta's absent ones. */
static int64
run_node_count(const RankRun *run)
{
	return run->graph.n_nodes - (run_has_delta(run) ? run->delta.n_absent : 0);
}

/* What publish_step publishes. */
typedef struct PublishStep
{
	const GraphCacheKey *key;
	RankRun    *run;
	const GraphCacheWriters *writers;	/* the writers its content includes */
	int64		delta_rows;		/* rows patched in since its last build from the rows */
} PublishStep;

/*
 * try_in_subtransaction's step: offers the run's graph to the cache, with the start vectors
 * carried from the table's previous graph (their segments, like the graph's, are unpinned until
 * the publish pins them, so they go away with the subtransaction on an ERROR).
 */
static void
publish_step(void *arg)
{
	PublishStep *step = (PublishStep *) arg;
	GraphCacheCarry carry;

	graph_cache_carry_scores(step->key, &step->run->graph, NULL, &carry);
	graph_cache_publish(step->key, &step->run->graph, step->run->skipped_rows, &carry,
						step->writers, step->delta_rows);
	graph_cache_carry_end(&carry);
}

/*
 * Offers the built graph to the cache inside a subtransaction: caching is an optimisation, so a
 * failure there rolls back and the ranking goes on with a NOTICE.  A cancel is not swallowed.
 */
static void
publish_to_cache(const GraphCacheKey *key, RankRun *run, const GraphCacheWriters *writers,
				 int64 delta_rows)
{
	PublishStep step = {key, run, writers, delta_rows};
	char		message[256];

	if (!powerrank_try_in_subtransaction(publish_step, &step, message, sizeof(message)))
		ereport(NOTICE,
				(errmsg("graph not cached: %s", message),
				 errdetail("The ranking goes on with the graph this call built.")));
}

/* What publish_patched_step publishes. */
typedef struct PublishPatchedStep
{
	const GraphCacheKey *key;
	GraphCachePatched *patched;
	const GraphCacheWriters *writers;
	bool		cached;			/* out: the cache took it */
	uint64		entry_id;		/* out: its entry */
} PublishPatchedStep;

/*
 * try_in_subtransaction's step: offers a patched graph — a delta from its root, or a flat graph —
 * to the cache, with the start vectors carried from the graph it was patched from (by the patch's
 * node map and changed-edge count, without reading that graph; a delta entry's vectors are in its
 * root's numbering).
 */
static void
publish_patched_step(void *arg)
{
	PublishPatchedStep *step = (PublishPatchedStep *) arg;
	GraphCachePatched *patched = step->patched;
	GraphCacheCarry carry;

	if (patched->delta_segment != NULL)
	{
		PrGraph		numbering;

		memset(&numbering, 0, sizeof(PrGraph));
		numbering.n_nodes = patched->graph.n_nodes;
		numbering.n_edges = patched->delta_edges;
		graph_cache_carry_scores(step->key, &numbering, &patched->origin, &carry);
		step->cached = graph_cache_publish_delta(step->key, patched->delta_segment,
												 patched->root_id, &patched->graph,
												 &patched->delta, patched->delta_edges,
												 patched->skipped_rows, &carry,
												 step->writers, patched->entry_delta_rows,
												 &step->entry_id);
	}
	else
	{
		graph_cache_carry_scores(step->key, &patched->graph, &patched->origin, &carry);
		step->cached = graph_cache_publish_patched(step->key, patched->segment, &patched->graph,
												   patched->skipped_rows, &carry, step->writers,
												   patched->entry_delta_rows,
												   &patched->weights, &step->entry_id);
	}
	graph_cache_carry_end(&carry);
}

/*
 * Makes a delta entry's graph the run's own flat graph (graph_cache_materialize), for what needs
 * the graph itself: the run no longer carries the delta nor maps the cache's segments (the graph
 * is no longer the cached one: the GPU service is sent it whole).
 */
static void
materialize_delta(RankRun *run)
{
	double		started = pr_clock_seconds();
	PrGraph		graph;

	graph_cache_materialize(&run->graph, &run->delta, run->alloc, &graph);
	run->graph = graph;
	graph_cache_release(&run->delta_segment);
	graph_cache_release(&run->cache_segment);
	memset(&run->delta, 0, sizeof(PrGraphDelta));
	run->build_seconds += pr_clock_seconds() - started;
}

/*
 * Makes a graph patched by graph_cache_patch the run's: offered to the cache inside a
 * subtransaction (a failure there rolls back, with a NOTICE).  When the cache took it the run
 * holds a reader's reference to the entry through its mapping, as after a hit (a delta entry: the
 * root's mapping and the delta's, as a hit on it gives them).  Otherwise a flat graph's segment
 * stays the run's own (run->rows_segment) until its end, and a delta's graph is made here.
 */
static void
adopt_patched_graph(RankRun *run, const GraphCacheKey *key, const GraphCacheWriters *writers,
					GraphCachePatched *patched, bool out_edges)
{
	PublishPatchedStep step = {key, patched, writers, false, 0};
	char		message[256];
	PrError		err = {0};

	if (!powerrank_try_in_subtransaction(publish_patched_step, &step, message, sizeof(message)))
		ereport(NOTICE,
				(errmsg("graph not cached: %s", message),
				 errdetail("The ranking goes on with the graph this call patched.")));
	if (patched->delta_segment == NULL)
		pr_graph_patch_free(&patched->plan);
	run->graph = patched->graph;
	if (patched->delta_segment != NULL)
	{
		run->cache_segment = patched->segment;
		run->delta_segment = patched->delta_segment;
		run->delta = patched->delta;
		run->root_entry_id = patched->root_id;
		if (!step.cached)
		{
			/* a delta no other call will find: this call's graph is made whole */
			materialize_delta(run);
			if (out_edges && pr_graph_add_out_edges(&run->graph, powerrank_thread_count(), run->alloc, &err) != PR_OK)
				powerrank_report_core_error("graph build", &err);
			return;
		}
	}
	if (step.cached)
	{
		if (patched->delta_segment == NULL)
			run->cache_segment = patched->segment;
		run->cache_entry_id = step.entry_id;
		run->published = true;
		run->cache_key = *key;
		/* the entry holds in-edges: HITS takes the out-edges where it runs */
		run->needs_out_edges = out_edges;
		return;
	}
	run->rows_segment = patched->segment;
	if (out_edges && pr_graph_add_out_edges(&run->graph, powerrank_thread_count(), run->alloc, &err) != PR_OK)
		powerrank_report_core_error("graph build", &err);
}

/* A shared segment for the rows the service builds from (see create_rows_segment). */
typedef struct RowsSegmentStep
{
	Size		bytes;
	dsm_segment *segment;
} RowsSegmentStep;

/*
 * try_in_subtransaction's step: creates the rows segment (NULL when no slot is left), its mapping
 * kept past the subtransaction's commit (which would detach it) until create_rows_segment hands
 * it to the statement's resource owner.
 */
static void
rows_segment_step(void *arg)
{
	RowsSegmentStep *step = (RowsSegmentStep *) arg;

	step->segment = dsm_create(step->bytes, DSM_CREATE_NULL_IF_MAXSEGMENTS);
	if (step->segment != NULL)
		dsm_pin_mapping(step->segment);
}

/*
 * A segment for capacity rows (src, then dst) that the service's build will turn into the cached
 * graph, or NULL (with a DEBUG1 line) when none can be had: the rows are then read into local
 * memory as usual.  Its pages are mapped by several threads first (powerrank_prefault), so that
 * the read, whose one process appends every row, takes no page fault.
 */
static dsm_segment *
create_rows_segment(Size capacity)
{
	RowsSegmentStep step = {mul_size(capacity, 2 * sizeof(int64)), NULL};
	char		message[256];
	double		started = pr_clock_seconds();

	if (!powerrank_try_in_subtransaction(rows_segment_step, &step, message, sizeof(message)))
		elog(DEBUG1, "powerrank: no shared segment of %zu bytes for the rows (%s)", step.bytes,
			 message);
	else if (step.segment != NULL)
	{
		double		created = pr_clock_seconds();

		dsm_unpin_mapping(step.segment);	/* detached by an ERROR from here on */
		powerrank_prefault(dsm_segment_address(step.segment), step.bytes);
		elog(DEBUG1, "powerrank: shared segment of %zu bytes for the rows: created in %.1f ms (handle %u), pages touched in %.1f ms",
			 step.bytes, (created - started) * 1000.0, dsm_segment_handle(step.segment),
			 (pr_clock_seconds() - created) * 1000.0);
	}
	return step.segment;
}

/*
 * Has the GPU service build the graph from the rows read into segment, then publishes the
 * segment — now holding the flat graph — as the cache entry and maps the graph from the cache as
 * a hit does; when the cache does not take it, the run keeps the segment (run->rows_segment).
 * True when the run has its graph; false when this backend must build it, with *rows_lost unless
 * the service says the rows in the segment are as they were read.
 */
static bool
build_on_service(RankRun *run, const GraphCacheKey *key, const GraphCacheWriters *writers,
				 dsm_segment *segment, const EdgeList *edges, Size capacity, bool directed,
				 bool out_edges, bool *rows_lost)
{
	ServiceOutcome outcome;
	PrGraph		view;
	PrFlatCheckTimes checks;
	PrError		err = {0};
	double		started = pr_clock_seconds(),
				built;

	*rows_lost = false;
	if (!service_build(segment, edges->count, capacity, !directed, &outcome))
	{
		*rows_lost = !outcome.rows_intact;
		elog(DEBUG1, "powerrank: the GPU service did not build the graph (%s: %s); building it in this backend",
			 pr_status_name((PrStatus) outcome.status), outcome.message);
		return false;
	}
	built = pr_clock_seconds();
	/* checked as every reader of a flat graph from elsewhere checks it */
	if (pr_graph_view_flat_timed(dsm_segment_address(segment), outcome.built_bytes,
								 powerrank_thread_count(), &view, &checks, &err) != PR_OK)
	{
		*rows_lost = true;
		elog(WARNING, "powerrank: the GPU service built a graph that fails its checks (%s); building it in this backend",
			 err.message);
		return false;
	}
	elog(DEBUG1, "powerrank: graph of %zu rows built by the GPU service in %.1f ms (request %.1f ms, of which engine %.1f ms: upload %.1f, ids %.1f, sort %.1f, download %.1f; checks of the flat graph %.1f ms: nodes %.1f, edges %.1f, rest %.1f)",
		 edges->count, (pr_clock_seconds() - started) * 1000.0, (built - started) * 1000.0, outcome.seconds * 1000.0,
		 outcome.build_times[0] * 1000.0, outcome.build_times[1] * 1000.0,
		 outcome.build_times[2] * 1000.0, outcome.build_times[3] * 1000.0, (pr_clock_seconds() - built) * 1000.0,
		 checks.nodes * 1000.0, checks.edges * 1000.0, checks.rest * 1000.0);
	if (graph_cache_publish_segment(key, segment, outcome.built_bytes, &view, run->skipped_rows,
									writers))
	{
		/* the cache holds the segment now: map it again as a reader (a hit) */
		dsm_detach(segment);
		run->published = true;
		run->cache_key = *key;
		if (graph_cache_acquire(key, &run->cache_segment, &run->graph, &run->skipped_rows,
								&run->cache_entry_id))
		{
			run->needs_out_edges = out_edges;
			return true;
		}
		/* evicted in between (the cache is full of busier graphs): build it here */
		*rows_lost = true;
		return false;
	}
	/* not cached (no room, or another backend was faster): this run's own graph */
	run->rows_segment = segment;
	run->graph = view;
	if (out_edges && pr_graph_add_out_edges(&run->graph, powerrank_thread_count(), run->alloc, &err) != PR_OK)
		powerrank_report_core_error("graph build", &err);
	return true;
}

/*
 * Gets the graph of the resolved target (both directions when not directed): from the
 * shared-memory cache when the table is tracked and the content the read's snapshot sees is
 * cached; otherwise reads the rows and builds it, and offers the result to the cache.
 */
static void
load_table_graph(RankRun *run, const EdgeScanTarget *target, bool directed, bool out_edges)
{
	GraphCacheKey key;
	GraphCacheWriters writers = {-1, NULL, false};
	GraphCacheHit hit;
	GraphCachePatched patched;
	bool		cacheable;
	EdgeList	edges;
	PrBuildOptions options = {0};
	PrBuildTimes build_times;
	PrError		err = {0};
	dsm_segment *rows_segment = NULL;
	Size		capacity;
	double		t_read,
				t_build,
				t_free,
				t_publish;

	cacheable = graph_cache_probe_writers(target, directed, &key, &writers);
	writers.live = cacheable && writers.count >= 0 &&
		cache_capture_on(target->relid, cache_extension_schema());
	if (cacheable && graph_cache_acquire_hit(&key, &hit))
	{
		run->cache_segment = hit.segment;
		run->graph = hit.graph;
		run->skipped_rows = hit.skipped_rows;
		run->cache_entry_id = hit.id;
		run->delta_segment = hit.delta_segment;
		run->delta = hit.delta;
		run->root_entry_id = hit.root_id;
		run->cache_hit = true;
		run->graph_source = GRAPH_SOURCE_CACHE;
		graph_scan_report_skipped(run->skipped_rows, target->n_columns == 3);
		/* the entry holds in-edges: HITS takes the out-edges where it runs */
		run->needs_out_edges = out_edges;
		run->build_seconds = pr_clock_seconds() - run->started;
		return;
	}
	/* a cached graph of an earlier content, patched with the rows changed since */
	if (cacheable && graph_cache_patch(target, directed, &key, &writers, run->alloc, &patched))
	{
		run->graph_source = GRAPH_SOURCE_DELTA;
		run->skipped_rows = patched.skipped_rows;
		run->delta_rows = patched.delta_rows;
		graph_scan_report_skipped(run->skipped_rows, target->n_columns == 3);
		t_publish = pr_clock_seconds();
		adopt_patched_graph(run, &key, &writers, &patched, out_edges);
		elog(DEBUG1, "powerrank: patched graph: %.1f ms before the cache publish, publish %.1f ms",
			 (t_publish - run->started) * 1000.0, (pr_clock_seconds() - t_publish) * 1000.0);
		run->build_seconds = pr_clock_seconds() - run->started;
		return;
	}

	/* powerrank_progress shows the read from its first row, and the build */
	progress_begin_read(run->algorithm, graph_scan_estimated_rows(target));
	t_read = pr_clock_seconds();
	capacity = service_build_rows(run->device, cacheable, target);
	if (capacity > 0 && (rows_segment = create_rows_segment(capacity)) != NULL)
	{
		int64	   *rows = (int64 *) dsm_segment_address(rows_segment);

		edge_list_init_external(&edges, run->cxt, rows, rows + capacity, capacity);
		graph_scan_fetch_into(target, &edges);
	}
	else
		graph_scan_fetch(target, run->cxt, &edges);
	run->read_seconds = pr_clock_seconds() - t_read;
	run->skipped_rows = edges.skipped;
	progress_set_rows_read((int64) (edges.count + edges.skipped));

	if (rows_segment != NULL)
	{
		bool		rows_lost = false;

		progress_begin_build(true);
		if (edges.external &&
			build_on_service(run, &key, &writers, rows_segment, &edges, capacity, directed,
							 out_edges, &rows_lost))
		{
			run->build_seconds = pr_clock_seconds() - run->started;
			return;
		}
		if (rows_lost)
		{
			/* the rows are gone (overwritten, or the segment went to the cache): read again */
			if (!run->published)
				dsm_detach(rows_segment);
			run->published = false;
			rows_segment = NULL;
			progress_set_phase(PHASE_READING);
			graph_scan_fetch(target, run->cxt, &edges);
			progress_set_rows_read((int64) (edges.count + edges.skipped));
		}
	}

	progress_begin_build(false);
	options.undirected = !directed;
	options.out_edges = out_edges;
	options.n_threads = powerrank_thread_count();
	options.times = &build_times;
	options.should_stop = powerrank_cancel_requested;
	t_build = pr_clock_seconds();
	if (pr_graph_build(edges.src, edges.dst, edges.weighted ? edges.weight : NULL, edges.count,
					   &options, run->alloc, &run->graph, &err) != PR_OK)
		powerrank_report_core_error("graph build", &err);
	t_free = pr_clock_seconds();
	if (rows_segment != NULL)
		dsm_detach(rows_segment);	/* the rows were read into it (or moved out of it) */
	else if (edges.src != NULL)
	{
		pfree(edges.src);
		pfree(edges.dst);
		if (edges.weight != NULL)
			pfree(edges.weight);
	}
	t_publish = pr_clock_seconds();
	if (cacheable)
	{
		publish_to_cache(&key, run, &writers, 0);
		run->published = true;
		run->cache_key = key;
	}
	run->build_seconds = pr_clock_seconds() - run->started;
	/* where a cold call's time goes, for whoever looks (client_min_messages = debug1) */
	elog(DEBUG1, "powerrank: graph of %zu rows: %.1f ms before the read, read %.1f ms, build %.1f ms (%d threads: ids %.1f, sort counts %.1f, offsets %.1f, scatter %.1f, other %.1f), free rows %.1f ms, cache publish %.1f ms",
		 edges.count, (t_read - run->started) * 1000.0, run->read_seconds * 1000.0, (t_free - t_build) * 1000.0, options.n_threads,
		 build_times.ids * 1000.0, build_times.count * 1000.0, build_times.offsets * 1000.0,
		 build_times.scatter * 1000.0, build_times.other * 1000.0,
		 (t_publish - t_free) * 1000.0, (pr_clock_seconds() - t_publish) * 1000.0);
}

/*
 * Gets the table's graph (both directions when not directed): resolves and locks the relation,
 * checks privileges, then loads the graph through the snapshot taken after the lock (see
 * graph_scan.c).
 */
void
rank_run_load_table(RankRun *run, const EdgeTableSpec *spec, bool directed, bool out_edges)
{
	EdgeScanTarget target;

	if (distributed_wanted(spec, directed, run->device == RANK_DEVICE_GPU))
	{
		/* ranked where the partitions live: run->graph has every node and no edge */
		run->cluster = distributed_open(spec, out_edges, run->cxt, &run->graph);
		run->build_seconds = pr_clock_seconds() - run->started;
		return;
	}
	graph_scan_resolve(spec, &target);
	load_table_graph(run, &target, directed, out_edges);
	graph_scan_end(&target);
}

/*
 * Before a service run of a graph this run built and offered to the cache: takes a reference to
 * the cache entry, so that the request names the cached segment rather than carrying a copy of
 * the graph, and the engine keeps the graph resident under the entry for the next calls (instead
 * of preparing a one-off copy now and the cached one again on the next call).  The run goes on
 * with the graph it built; nothing changes when the entry is not there (not cached, no room).
 */
static void
adopt_cache_entry(RankRun *run)
{
	PrGraph		view;
	int64		skipped_rows;

	if (!run->published || run->cache_segment != NULL)
		return;
	run->published = false;
	(void) graph_cache_acquire(&run->cache_key, &run->cache_segment, &view, &skipped_rows,
							   &run->cache_entry_id);
}

/* Maps a rankgraph value (no copy when it is aligned) and adds out-edges when needed. */
void
rank_run_load_rankgraph(RankRun *run, Datum graph, bool out_edges)
{
	MemoryContext old_cxt = MemoryContextSwitchTo(run->cxt);
	PrError		err = {0};

	rankgraph_view(graph, &run->graph, &run->skipped_rows);
	run->graph_source = GRAPH_SOURCE_RANKGRAPH;
	MemoryContextSwitchTo(old_cxt);
	if (out_edges && pr_graph_add_out_edges(&run->graph, powerrank_thread_count(), run->alloc, &err) != PR_OK)
		powerrank_report_core_error("graph build", &err);
	run->build_seconds = pr_clock_seconds() - run->started;
}

/*
 * Creates the run's engine: the distributed one over the run's parts, else the CPU engine
 * (powerrank.cpu_threads threads).
 */
static void
create_engine(RankRun *run)
{
	PrError		err = {0};

	if (run->cluster != NULL)
		run->engine = distributed_engine_create(run->cluster, run->alloc, &err);
	else
		run->engine = pr_cpu_engine_create(powerrank_cpu_threads, run->alloc, &err);
	if (run->engine == NULL)
	{
		if (err.status == PR_OK)
			err.status = PR_ERR_NOMEM;
		powerrank_report_core_error("engine start", &err);
	}
}

/* Driver options from the validated SQL options. */
static void
iteration_options(const RankOptions *options, PrIterOptions *iter)
{
	memset(iter, 0, sizeof(PrIterOptions));
	iter->tolerance = options->tolerance;
	iter->norm = options->norm;
	iter->max_iterations = options->max_iterations;
	iter->check_every = 1;
	iter->mixing_depth = powerrank_mixing_depth;
	iter->stop_when_certified = powerrank_stop_when_certified;
	iter->should_stop = powerrank_cancel_requested;
	iter->progress = progress_report;
	iter->progress_arg = NULL;
}

/*
 * Releases the engine, then turns the driver's status into an ERROR: the pending cancel for
 * PR_ERR_INTERRUPTED, the mapped core error otherwise.  Returns only for PR_OK.
 */
static void
finish_driver(RankRun *run, PrStatus status, const PrError *err)
{
	release_engine_callback(run);
	if (status == PR_ERR_INTERRUPTED)
	{
		CHECK_FOR_INTERRUPTS();
		ereport(ERROR,
				(errcode(ERRCODE_QUERY_CANCELED),
				 errmsg("canceling powerrank %s", run->algorithm)));
	}
	if (status != PR_OK)
		powerrank_report_core_error(run->algorithm, err);
}

/*
 * Gives the run's CPU engine the delta of a delta entry's graph: prepared on the root for k
 * columns of PageRank, then apply_delta (pr_engine.h), after which it serves the root plus the
 * delta, also through the driver's own prepare of the same graph.
 */
static void
engine_take_delta(RankRun *run, int k)
{
	PrError		err = {0};
	PrStatus	status = pr_pagerank_prepare(run->engine, &run->graph, k, &err);

	if (status == PR_OK)
		status = run->engine->ops->apply_delta(run->engine, &run->delta, &err);
	if (status != PR_OK)
		finish_driver(run, status, &err);
}

/*
 * Records the statistics of the finished run, then warns (or, with require_convergence, raises
 * an ERROR) when it did not converge.
 */
static void
record_and_check(RankRun *run, const RankOptions *options, const PrRunStats *stats)
{
	RankRunStats record;
	double		now = pr_clock_seconds();

	memset(&record, 0, sizeof(record));
	strlcpy(record.algorithm, run->algorithm, sizeof(record.algorithm));
	strlcpy(record.engine, stats->engine != NULL ? stats->engine : "cpu", sizeof(record.engine));
	record.nodes = run_node_count(run);
	record.edges = run_has_delta(run) ? graph_cache_delta_edges(&run->graph, &run->delta) :
		run->graph.n_edges;
	record.skipped_rows = run->skipped_rows;
	record.iterations = stats->iterations;
	record.residual = stats->residual;
	record.norm = options->norm;
	record.converged = stats->converged;
	record.build_ms = run->build_seconds * 1000.0;
	record.iterate_ms = stats->seconds * 1000.0;
	record.read_ms = run->read_seconds * 1000.0;
	record.prepare_ms = stats->prepare_seconds * 1000.0;
	record.total_ms = (now - run->started) * 1000.0;
	record.cache_hit = run->cache_hit;
	record.graph_source = run->graph_source;
	record.delta_rows = run->delta_rows;
	strlcpy(record.fallback, run->service.fallback, sizeof(record.fallback));
	record.batch_size = Max(run->service.batch_size, 1);
	record.warm_start = run->warm_start;
	record.columns = Max(run->columns, 1);
	record.error_bound = stats->error_bound;
	record.mixed_steps = stats->mixed_steps;
	record.top_k_certified = stats->top_k_certified;
	record.top_k_ties = stats->top_k_ties;
	record.exchange_bytes = -1;
	record.peer_bytes = -1;
	if (run->cluster != NULL)
	{
		record.edges = distributed_edges(run->cluster);
		record.cache_hit = distributed_cache_hit(run->cluster);
		distributed_exchange(run->cluster, &record.exchange_bytes, &record.peer_bytes,
							 &record.exchange_ms);
		record.exchange_ms *= 1000.0;
	}
	if (stats->engine != NULL && stats->engine == run->service.engine)
		strlcpy(record.residency, run->service.residency, sizeof(record.residency));
	run_stats_record(&record);

	if (stats->converged || stats->stopped_certified)
		return;
	if (stats->stagnated)
	{
		/* a tolerance the iterates cannot reach: said as such, not as too few iterations */
		ereport(options->require_convergence ? ERROR : WARNING,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg_plural("%s stopped after %d iteration: the residual no longer decreases",
							   "%s stopped after %d iterations: the residual no longer decreases",
							   stats->iterations, run->algorithm, stats->iterations),
				 errdetail("The residual (%s norm) stays at about %.3g, above the tolerance %.3g: the tolerance is below what double precision can reach on this graph.%s",
						   pr_norm_name(options->norm), stats->residual, options->tolerance,
						   options->require_convergence ? "" :
						   " The scores returned are those of the last iteration."),
				 errhint("Use a larger tolerance (above %.1g), or norm => 'linf' or 'l1_scaled'.",
						 stats->residual)));
		return;
	}
	if (options->require_convergence)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg_plural("%s did not converge in %d iteration",
							   "%s did not converge in %d iterations",
							   stats->iterations, run->algorithm, stats->iterations),
				 errdetail("The last residual (%s norm) was %.3g; the tolerance is %.3g.",
						   pr_norm_name(options->norm), stats->residual, options->tolerance),
				 errhint("Raise max_iterations or tolerance, or pass require_convergence => false to get the last iterate with a warning.")));
	ereport(WARNING,
			(errmsg_plural("%s did not converge in %d iteration",
						   "%s did not converge in %d iterations",
						   stats->iterations, run->algorithm, stats->iterations),
			 errdetail("The last residual (%s norm) was %.3g; the tolerance is %.3g. The scores returned are those of the last iteration.",
					   pr_norm_name(options->norm), stats->residual, options->tolerance),
			 errhint("Raise max_iterations or tolerance.")));
}

/*
 * Records the statistics of a run over a graph without nodes (there is nothing to iterate: zero
 * rows come back, converged); returns false when the graph has nodes.
 */
static bool
finish_empty_run(RankRun *run, const RankOptions *options)
{
	PrRunStats	stats = {0};

	if (run->graph.n_nodes != 0)
		return false;
	stats.converged = true;
	stats.engine = "cpu";
	record_and_check(run, options, &stats);
	return true;
}

/*
 * Leaves a run that the GPU service cannot take to the CPU engine (returns false), saying why in
 * the fallback when the device choice would have sent it to the service.
 */
static bool
cpu_engine_needed(RankRun *run, const char *why)
{
	if (service_wanted(run->device, run->graph.n_edges, &run->service))
		snprintf(run->service.fallback, sizeof(run->service.fallback), "%s", why);
	return false;
}

/*
 * Ends the run without this backend's engine when it can: the graph is empty, or the device
 * choice sends it to the GPU service and the service answers (algorithm and its arguments as
 * service_rank takes them).  Returns whether the run is over; false leaves it to the CPU engine,
 * as always for a dangling distribution or a start vector, which the service does not take.
 */
static bool
finish_without_cpu_engine(RankRun *run, ServiceAlgorithm algorithm, double alpha,
						  const PrRestart *restart, const RankOptions *options, int64 top_k,
						  double *out1, double *out2, int32 *index)
{
	PrRunStats	stats = {0};
	ServiceRankRequest request;

	run->columns = restart != NULL && !restart->uniform ? restart->k : 1;
	if (finish_empty_run(run, options))
		return true;
	if (run->cluster != NULL)
		return false;			/* the distributed engine ranks it in this backend */
	if (restart != NULL && restart->dangling_count > 0 && run->device != RANK_DEVICE_CPU)
	{
		/* the service's engines send the dangling mass where the walk restarts */
		if (run->device == RANK_DEVICE_GPU)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("device => 'gpu' cannot take a dangling distribution"),
					 errdetail("The GPU service sends the dangling mass where the walk restarts; dangling and dangling_weights need the CPU engine."),
					 errhint("Use device => 'auto' or 'cpu', or leave dangling out.")));
		return cpu_engine_needed(run, "a dangling distribution needs the CPU engine");
	}
	if (run->start != NULL && run->device != RANK_DEVICE_CPU)
	{
		/* the service's engines start every run from their own vector */
		if (run->device == RANK_DEVICE_GPU)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("device => 'gpu' cannot take a start vector"),
					 errdetail("The GPU service starts every run from its own vector; start_nodes and start_scores need the CPU engine."),
					 errhint("Use device => 'auto' or 'cpu', or leave start_nodes out.")));
		return cpu_engine_needed(run, "a start vector needs the CPU engine");
	}
	if (!service_wanted(run->device, run->graph.n_edges, &run->service))
		return false;
	/* no engine serves HITS beside a delta with absent nodes (their rounding residue would stay in
	 * its normalization): the graph whole */
	if (algorithm == SERVICE_HITS && run_has_delta(run) && run->delta.n_absent > 0)
		materialize_delta(run);
	adopt_cache_entry(run);
	request.name = run->algorithm;
	request.device = run->device;
	request.algorithm = algorithm;
	request.graph = &run->graph;
	request.cache_segment = run->cache_segment;
	request.cache_entry_id = run_has_delta(run) ? run->root_entry_id : run->cache_entry_id;
	request.delta_segment = run->delta_segment;
	request.delta_entry_id = run->cache_entry_id;
	request.alpha = alpha;
	request.restart = restart;
	request.tolerance = options->tolerance;
	request.norm = options->norm;
	request.max_iterations = options->max_iterations;
	request.top_k = top_k;
	if (!service_rank(&request, out1, out2, index, &stats, &run->service))
	{
		if (!run->service.delta_refused)
			return false;
		/* the service's engine cannot take the delta: the graph whole, as a graph not cached */
		run->service.delta_refused = false;
		materialize_delta(run);
		return finish_without_cpu_engine(run, algorithm, alpha, restart, options, top_k, out1,
										 out2, index);
	}
	record_and_check(run, options, &stats);
	return true;
}

/* FNV-1a of len bytes, going on from hash. */
static uint64
hash_bytes(uint64 hash, const void *data, size_t len)
{
	const unsigned char *bytes = (const unsigned char *) data;

	for (size_t i = 0; i < len; i++)
	{
		hash ^= bytes[i];
		hash *= UINT64CONST(1099511628211);
	}
	return hash;
}

/*
 * Hash of a distribution over count nodes (internal ids, weights) by their external ids, the same
 * for the same arguments on any graph of the table; never 0.
 */
static uint64
hash_distribution(const RankRun *run, const int32 *node, const double *weight, int64 count)
{
	uint64		hash = UINT64CONST(14695981039346656037);

	for (int64 i = 0; i < count; i++)
	{
		int64		id = run->graph.node_ids[node[i]];

		hash = hash_bytes(hash, &id, sizeof(id));
		hash = hash_bytes(hash, &weight[i], sizeof(double));
	}
	return hash == 0 ? 1 : hash;
}

/*
 * The cache entry of the run's graph (*entry_id) and the key under which it keeps scores of this
 * run's fixed point (damping, restart and dangling distributions; the entry stands for the table,
 * columns, weights and direction).  False when no scores are kept for the run:
 * powerrank.warm_start_auto is off, the graph is not in the cache, the run has several columns
 * (many-source RWR), or its damping is 1 (restart 0: the fixed point need not be unique, and a run
 * from kept scores could reach another one than a run from 1/N).
 */
static bool
kept_scores_key(RankRun *run, double alpha, const PrRestart *restart, uint64 *entry_id,
				GraphCacheScoresKey *key)
{
	memset(key, 0, sizeof(GraphCacheScoresKey));
	*entry_id = 0;
	if (!powerrank_warm_start_auto || restart == NULL || restart->k != 1 || alpha >= 1.0 ||
		run->graph.n_nodes == 0)
		return false;
	if (run->cache_segment != NULL)
		*entry_id = run->cache_entry_id;
	else if (run->published)
		*entry_id = graph_cache_entry_id(&run->cache_key);
	if (*entry_id == 0)
		return false;
	key->alpha = alpha;
	if (!restart->uniform)
		key->restart = hash_distribution(run, restart->node, restart->weight, restart->ptr[1]);
	if (restart->dangling_count > 0)
		key->dangling = hash_distribution(run, restart->dangling_node, restart->dangling_weight,
										  restart->dangling_count);
	return true;
}

/* What keep_step keeps. */
typedef struct KeepStep
{
	RankRun    *run;
	uint64		entry_id;
	const GraphCacheScoresKey *key;
	double		bound;
	const double *scores;
} KeepStep;

/* try_in_subtransaction's step: keeps a run's scores with its cache entry. */
static void
keep_step(void *arg)
{
	KeepStep   *step = (KeepStep *) arg;

	(void) graph_cache_keep_scores(step->entry_id, step->key, step->bound,
								   step->run->graph.n_nodes, step->scores);
}

/*
 * The bound the stopping rule puts on a converged run's last L1 residual: the tolerance for 'l1',
 * n times it for 'l1_scaled' and 'linf' (an L1 norm is at most n times the largest entry).
 */
static double
l1_residual_bound(const RankOptions *options, int64 n)
{
	return options->norm == PR_NORM_L1 ? options->tolerance : options->tolerance * (double) n;
}

/*
 * Keeps a converged run's scores (n values, internal ids; last L1 residual below bound) with the
 * cache entry of its graph, inside a subtransaction: keeping is an optimisation, so a failure (no
 * shared memory left) only leaves a DEBUG1 line.
 */
static void
keep_scores(RankRun *run, uint64 entry_id, const GraphCacheScoresKey *key, double bound,
			const double *scores)
{
	KeepStep	step = {run, entry_id, key, bound, scores};
	char		message[256];

	if (!powerrank_try_in_subtransaction(keep_step, &step, message, sizeof(message)))
		elog(DEBUG1, "powerrank: scores not kept with the cached graph: %s", message);
}

/*
 * Runs PageRank / personalized PageRank / RWR over the loaded graph: on the GPU service when the
 * device choice says so and it answers, in this backend otherwise.  With top_k 0 all the scores
 * go into values (n x k); with top_k > 0 the best t = min(top_k, n) of each column go into index
 * (internal ids) and values (column j at j * t).
 *
 * On the CPU engine a run of one column on a cached graph without a start vector starts from the
 * start the cache entry keeps for its fixed point (the previous graph's scores, see
 * graph_cache_carry_scores), and the entry keeps its scores when it converged and the entry has
 * none yet for that fixed point or only a looser one (then a top_k run computes every score and
 * ranks them here, as the CPU engine's top_k does).
 */
static void
run_pagerank(RankRun *run, double alpha, const PrRestart *restart, const RankOptions *options,
			 int64 top_k, int32 *index, double *values)
{
	PrIterOptions iter;
	PrRunStats	stats = {0};
	PrError		err = {0};
	PrStatus	status;
	GraphCacheScoresKey key;
	uint64		entry_id;
	bool		keyed;
	bool		keep = false;
	double	   *all = values;

	iteration_options(options, &iter);
	iter.initial = run->start;
	/* a distributed run of RWR or personalized PageRank starts from the warm start, as the service */
	iter.warm_start = run->cluster != NULL && powerrank_warm_start;
	run->warm_start = run->start != NULL ? RANK_START_EXPLICIT : RANK_START_NONE;
	keyed = kept_scores_key(run, alpha, restart, &entry_id, &key);
	if (finish_without_cpu_engine(run, SERVICE_PAGERANK, alpha, restart, options, top_k, values,
								  NULL, index))
		return;
	if (keyed)
	{
		int64		n = run->graph.n_nodes;

		if (run->start == NULL)
		{
			double	   *start = MemoryContextAllocHuge(run->cxt, n * sizeof(double));

			if (graph_cache_start_scores(entry_id, &key, n, start))
			{
				iter.initial = start;
				run->warm_start = RANK_START_PREVIOUS;
			}
			else
				pfree(start);
		}
		keep = graph_cache_wants_scores(entry_id, &key,
										l1_residual_bound(options, run_node_count(run)));
		if (keep && top_k > 0)
			all = MemoryContextAllocHuge(run->cxt, n * sizeof(double));
	}
	progress_begin(run->algorithm, false, run->graph.n_nodes, run->graph.n_edges,
				   restart->uniform ? 1 : restart->k);
	create_engine(run);
	if (run_has_delta(run))
	{
		engine_take_delta(run, restart->uniform ? 1 : restart->k);
		iter.absent_nodes = run->delta.n_absent;
	}
	if (top_k > 0 && !keep)
		status = pr_pagerank_top(run->engine, &run->graph, alpha, restart, &iter, top_k, index,
								 values, &stats, &err);
	else
		status = pr_pagerank(run->engine, &run->graph, alpha, restart, &iter, all, &stats, &err);
	finish_driver(run, status, &err);
	if (top_k > 0 && keep)
		(void) pr_top_k_values(all, run->graph.n_nodes, 1, 0, top_k, index, values, run->alloc);
	if (keep && stats.converged)
		keep_scores(run, entry_id, &key, l1_residual_bound(options, run_node_count(run)), all);
	record_and_check(run, options, &stats);
}

/*
 * Runs PageRank / personalized PageRank / RWR over the loaded graph into scores (n x k): on the
 * GPU service when the device choice says so and it answers, in this backend otherwise.
 */
void
rank_run_pagerank(RankRun *run, double alpha, const PrRestart *restart,
				  const RankOptions *options, double *scores)
{
	run_pagerank(run, alpha, restart, options, 0, NULL, scores);
}

/*
 * Rows per column that a top_k (> 0) run ranks: min(top_k, n), and as many more as a delta's
 * absent nodes, which may be among them and give no row (result_emit_top leaves them out).
 */
int64
rank_run_top_rows(const RankRun *run, int64 top_k)
{
	int64		absent = run_has_delta(run) ? run->delta.n_absent : 0;

	return top_k < run->graph.n_nodes - absent ? top_k + absent : run->graph.n_nodes;
}

/*
 * Runs PageRank / personalized PageRank / RWR like rank_run_pagerank, keeping only the best nodes
 * of each column (index and value have room for rank_run_top_rows(options->top_k) of each):
 * internal ids into index and scores into value (column j at j * t), best first, ties to the
 * smaller node id; returns t.  The engine ranks them where it computed them: the service sends
 * back t rows per column, not n.  t is rank_run_top_rows' count on the graph the run ranked (a
 * delta entry's graph made whole during the run has no absent nodes: fewer rows).
 */
int64
rank_run_pagerank_top(RankRun *run, double alpha, const PrRestart *restart,
					  const RankOptions *options, int32 *index, double *value)
{
	int64		ranked = rank_run_top_rows(run, options->top_k);

	Assert(options->top_k > 0);
	run_pagerank(run, alpha, restart, options, ranked, index, value);
	return Min(ranked, run->graph.n_nodes);
}

/*
 * Runs HITS over the loaded graph into hubs and authorities: on the GPU service (which adds the
 * out-edges of a cached graph itself, and takes a delta entry's as its root plus the delta) or in
 * this backend, where a cached graph (a delta entry's made whole first) takes the out-edges its
 * cache entry keeps, or makes them and offers them to the entry (graph_cache_out_edges).
 */
void
rank_run_hits(RankRun *run, const RankOptions *options, double *hubs, double *authorities)
{
	PrIterOptions iter;
	PrRunStats	stats = {0};
	PrError		err = {0};
	PrStatus	status;

	iteration_options(options, &iter);
	if (finish_without_cpu_engine(run, SERVICE_HITS, 0.0, NULL, options, 0, hubs, authorities,
								  NULL))
		return;
	/* HITS' out-edges are the graph's own: a delta entry's graph is made whole here */
	if (run_has_delta(run))
		materialize_delta(run);
	/* the cache entry's out-edges, mapped or made and kept with it; else built here */
	if (run->needs_out_edges && !run->graph.has_out_edges)
	{
		double		started = pr_clock_seconds();

		if (!graph_cache_out_edges(run->cache_entry_id, &run->graph, run->alloc,
								   &run->out_edges_segment) &&
			pr_graph_add_out_edges(&run->graph, powerrank_thread_count(), run->alloc, &err) != PR_OK)
			powerrank_report_core_error("graph build", &err);
		run->build_seconds += pr_clock_seconds() - started;
	}
	progress_begin(run->algorithm, false, run->graph.n_nodes, run->graph.n_edges, 1);
	create_engine(run);
	status = pr_hits(run->engine, &run->graph, &iter, hubs, authorities, &stats, &err);
	finish_driver(run, status, &err);
	record_and_check(run, options, &stats);
}

/*
 * Ends the run: detaches a cached graph or the run's own build segment (an ERROR detaches them
 * through the resource owner), gives a distributed run's parts back to the session, and
 * frees the run's context (which releases an engine still held).
 */
void
rank_run_end(RankRun *run)
{
	graph_cache_release(&run->out_edges_segment);
	graph_cache_release(&run->delta_segment);
	graph_cache_release(&run->cache_segment);
	if (run->cluster != NULL)
		distributed_keep_parts(run->cluster);
	if (run->rows_segment != NULL)
		dsm_detach(run->rows_segment);
	run->rows_segment = NULL;
	MemoryContextDelete(run->cxt);
}
