/*
 * estimate.c — powerrank_estimate(edges, algorithm, ...): what a pagerank / hits / rwr call on a
 * table would take, without reading the table: the graph's size, the memory in the backend, in
 * shared memory and on the GPU, the engine the call would run on (the decision code of the real
 * run, service_choose), where the GPU service would keep the graph (the GPU engine's residency
 * choice, pr_residency_choose, from the request's inputs: service_residency_input) and a
 * predicted iteration time.
 *
 * Where the counts come from (counts_from):
 *   'cache'       the table's graph for these columns is in the graph cache for the content the
 *                 caller's snapshot sees: nodes, stored edges and the cache entry's bytes exact;
 *   'statistics'  pg_class.reltuples (rows) and pg_statistic (null fractions, n_distinct and the
 *                 value range of the endpoint columns) as the last ANALYZE left them;
 *   'unknown'     the table was never vacuumed or analyzed (or is a view), or row-level security
 *                 applies to the caller: counts and memory NULL.
 * The formulas are in the README ("Estimating a call") and doc/DESIGN.md ("powerrank_estimate").
 * The graph's size (graph_size_of_table, estimate.h) is also the planner's row estimate of the
 * ranking functions (support.c).
 */
#include "powerrank.h"

#include <math.h>

#include "access/htup_details.h"
#include "catalog/pg_class.h"
#include "catalog/pg_statistic.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rls.h"
#include "utils/syscache.h"

#include "functions/estimate.h"
#include "functions/run.h"
#include "pr_parts.h"

PG_FUNCTION_INFO_V1(powerrank_estimate);

/* Argument positions of powerrank_estimate (the ranking functions' names and defaults). */
enum
{
	E_EDGES, E_ALGORITHM, E_DAMPING, E_RESTART, E_TOLERANCE, E_MAX_ITERATIONS, E_TOP_K,
	E_SRC_COLUMN, E_DST_COLUMN, E_WEIGHT_COLUMN, E_NORM, E_DIRECTED, E_REQUIRE_CONVERGENCE,
	E_DEVICE, E_SOURCES
};

/* Result columns. */
enum
{
	R_NODES, R_STORED_EDGES, R_COUNTS_FROM, R_ENGINE, R_REASON, R_LAYOUT, R_RESIDENCY, R_BACKEND_BYTES,
	R_SHARED_BYTES, R_CACHE_BYTES, R_GPU_BYTES, R_ITERATIONS, R_MS_PER_ITERATION,
	R_PREDICTED_MS, R_COST_FROM, R_COLUMNS
};

/*
 * Default cost of one edge in one iteration, when this session has no comparable last run.  CPU:
 * 1.0 ns per edge per thread (doc/RESULTS.md "CPU engine vs igraph": 0.63 ns·thread on
 * soc-Slashdot0902, 1.14 on R-MAT 20, 2-vCPU host).  GPU: 5 ps per edge (about three times the
 * H100 copy-bandwidth floor of doc/RESULTS.md's graph zoo, 4 B/edge at ~3 TB/s).
 */
#define CPU_NS_PER_EDGE_THREAD 1.0
#define GPU_NS_PER_EDGE 0.005

/* What pg_statistic says of one column (of the table itself, or of its inheritance tree). */
typedef struct ColumnStats
{
	bool		found;
	double		null_frac;
	double		distinct;		/* distinct non-NULL values, -1 unknown */
	bool		has_range;
	double		lo;				/* smallest and largest value of the histogram and MCV list */
	double		hi;
} ColumnStats;

/* True for the integer types an endpoint column may have. */
static bool
endpoint_type(Oid type)
{
	return type == INT2OID || type == INT4OID || type == INT8OID;
}

/* An integer Datum of an endpoint column's type (endpoint_type) as a double. */
static double
endpoint_value(Datum value, Oid type)
{
	switch (type)
	{
		case INT2OID:
			return (double) DatumGetInt16(value);
		case INT4OID:
			return (double) DatumGetInt32(value);
		default:
			return (double) DatumGetInt64(value);
	}
}

/* Widens stats' range by the values of one statistics slot kind (histogram, MCV), if present. */
static void
add_slot_range(HeapTuple tuple, int kind, Oid type, ColumnStats *stats)
{
	AttStatsSlot slot;

	if (!get_attstatsslot(&slot, tuple, kind, InvalidOid, ATTSTATSSLOT_VALUES))
		return;
	for (int i = 0; i < slot.nvalues; i++)
	{
		double		v = endpoint_value(slot.values[i], type);

		if (!stats->has_range || v < stats->lo)
			stats->lo = v;
		if (!stats->has_range || v > stats->hi)
			stats->hi = v;
		stats->has_range = true;
	}
	free_attstatsslot(&slot);
}

/*
 * Reads the statistics of column attnum of relid: those of its whole inheritance tree when
 * inherited (the only ones a partitioned table has), else the table's own; rows is reltuples, for
 * a negative n_distinct (a fraction of the rows).  endpoint: also the value range (integer
 * columns only).
 */
static void
read_column_stats(Oid relid, AttrNumber attnum, bool inherited, Oid type, double rows,
				  bool endpoint, ColumnStats *stats)
{
	HeapTuple	tuple = SearchSysCache3(STATRELATTINH, ObjectIdGetDatum(relid),
										Int16GetDatum(attnum), BoolGetDatum(inherited));
	Form_pg_statistic form;

	memset(stats, 0, sizeof(ColumnStats));
	stats->distinct = -1;
	if (!HeapTupleIsValid(tuple))
		return;
	form = (Form_pg_statistic) GETSTRUCT(tuple);
	stats->found = true;
	stats->null_frac = form->stanullfrac;
	if (form->stadistinct > 0)
		stats->distinct = form->stadistinct;
	else if (form->stadistinct < 0)
		stats->distinct = -form->stadistinct * rows;
	if (endpoint && endpoint_type(type))
	{
		add_slot_range(tuple, STATISTIC_KIND_HISTOGRAM, type, stats);
		add_slot_range(tuple, STATISTIC_KIND_MCV, type, stats);
	}
	ReleaseSysCache(tuple);
}

/*
 * Nodes from the statistics of the endpoint columns: the size of the union of the distinct source
 * values (ds) and destination values (dd).  Treating both as drawn independently and uniformly
 * from the common value range R (from the histograms and MCV lists):
 * ds + dd - ds * dd / R, kept within [max(ds, dd), min(ds + dd, R)].  Without a range: max(ds, dd)
 * (exact when every destination is also a source, or the reverse).
 */
static double
union_of_endpoints(const ColumnStats *src, const ColumnStats *dst)
{
	double		ds = src->distinct;
	double		dd = dst->distinct;
	double		low = Max(ds, dd);
	double		high = ds + dd;
	double		range;
	double		nodes;

	if (!src->has_range || !dst->has_range)
		return low;
	range = Max(src->hi, dst->hi) - Min(src->lo, dst->lo) + 1.0;
	high = Min(high, range);
	nodes = ds + dd - ds * dd / range;
	return Max(low, Min(nodes, high));
}

/*
 * The graph's size from the catalog (pg_class and pg_statistic through the syscache: no lock, the
 * table not read): rows = reltuples (as VACUUM and ANALYZE last set it; a partitioned table's
 * is its tree's, and so are the statistics read) less the rows a NULL endpoint (or weight) skips,
 * assumed independent; stored edges = rows, twice for an undirected graph (self-loops, stored
 * once, are not told apart); nodes = union_of_endpoints (undirected: the same).  Leaves size
 * unknown when the table was never vacuumed or analyzed, and the nodes unknown when an endpoint
 * column has no statistics.
 */
static void
size_from_statistics(const GraphSizeTarget *target, GraphSize *size)
{
	HeapTuple	class_tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(target->relid));
	double		reltuples;
	bool		inherited;
	ColumnStats src,
				dst,
				weight;
	double		kept;

	if (!HeapTupleIsValid(class_tuple))
		return;
	reltuples = ((Form_pg_class) GETSTRUCT(class_tuple))->reltuples;
	inherited = ((Form_pg_class) GETSTRUCT(class_tuple))->relkind == RELKIND_PARTITIONED_TABLE;
	ReleaseSysCache(class_tuple);
	if (reltuples < 0)
		return;
	reltuples = floor(reltuples);

	read_column_stats(target->relid, target->attnums[0], inherited, target->types[0],
					  reltuples, true, &src);
	read_column_stats(target->relid, target->attnums[1], inherited, target->types[1],
					  reltuples, true, &dst);
	kept = (1.0 - src.null_frac) * (1.0 - dst.null_frac);
	if (target->n_columns == 3)
	{
		read_column_stats(target->relid, target->attnums[2], inherited, target->types[2],
						  reltuples, false, &weight);
		kept *= 1.0 - weight.null_frac;
	}
	size->rows = rint(reltuples * kept);
	size->stored_edges = target->directed ? size->rows : 2.0 * size->rows;
	if (src.found && dst.found && src.distinct >= 0 && dst.distinct >= 0)
		size->nodes = rint(union_of_endpoints(&src, &dst));
	if (size->rows == 0)
		size->nodes = 0;
}

/*
 * The graph's size from the graph cache's registry: with target's cache_key, the entry of that key
 * (the graph the call would be served: exact counts and the entry's bytes, with its root's for a
 * delta entry); with latest_cached, the most recently used entry of the table's src and dst
 * columns (its node count only: it may be of another content, weight column or direction).  True
 * when such an entry was found.
 */
static bool
size_from_cache(const GraphSizeTarget *target, GraphSize *size)
{
	GraphCacheEntryInfo *entries;
	int			count;
	int			best = -1;

	if ((target->cache_key == NULL && !target->latest_cached) || !graph_cache_available())
		return false;
	count = graph_cache_snapshot(MyDatabaseId, &entries);
	for (int i = 0; i < count; i++)
	{
		const GraphCacheKey *key = &entries[i].key;

		if (target->cache_key != NULL ?
			memcmp(key, target->cache_key, sizeof(GraphCacheKey)) != 0 :
			(key->relid != target->relid || key->attnums[0] != target->attnums[0] ||
			 key->attnums[1] != target->attnums[1]))
			continue;
		if (best < 0 || entries[i].last_used > entries[best].last_used)
			best = i;
	}
	if (best >= 0)
	{
		size->nodes = (double) entries[best].nodes;
		size->cached = true;
		if (target->cache_key != NULL)
		{
			size->stored_edges = (double) entries[best].edges;
			/* a delta entry's call maps its root's graph too */
			size->cache_bytes = entries[best].bytes + entries[best].root_bytes;
			size->out_edges_kept = entries[best].keeps_out_edges;
		}
	}
	pfree(entries);
	return best >= 0;
}

/*
 * The size of target's graph without reading the table or taking a lock: exact from the graph
 * cache (size_from_cache), else from the statistics (size_from_statistics), else unknown (-1).
 * Unknown too when row-level security applies to the caller: the cached graph and the statistics
 * count rows it may not see (pg_stats hides them from it likewise).  Raises no error of its own:
 * the caller has checked that the table and columns exist and that the user may read them.
 */
void
graph_size_of_table(const GraphSizeTarget *target, GraphSize *size)
{
	size->rows = size->nodes = size->stored_edges = -1;
	size->cached = false;
	size->cache_bytes = 0;
	size->out_edges_kept = false;
	if (check_enable_rls(target->relid, InvalidOid, true) == RLS_ENABLED)
		return;
	if (!size_from_cache(target, size))
		size_from_statistics(target, size);
}

/* Bytes of the flat graph (pr_graph_flat_size) of n nodes and m stored edges, in-edges only. */
static double
flat_graph_bytes(double n, double m, bool weighted)
{
	PrGraph		shape;

	memset(&shape, 0, sizeof(shape));
	shape.n_nodes = (int64) n;
	shape.n_edges = (int64) m;
	shape.weighted = weighted;
	shape.n_dangling = 0;		/* not known before the build: 4 bytes per dangling node more */
	return (double) pr_graph_flat_size(&shape);
}

/* The algorithm argument: "pagerank", "hits" or "rwr". */
static const char *
read_algorithm(FunctionCallInfo fcinfo)
{
	char	   *algorithm;

	if (PG_ARGISNULL(E_ALGORITHM))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("algorithm must not be NULL"),
				 errhint("Use 'pagerank', 'hits' or 'rwr'.")));
	algorithm = text_to_cstring(PG_GETARG_TEXT_PP(E_ALGORITHM));
	if (strcmp(algorithm, "pagerank") == 0 || strcmp(algorithm, "hits") == 0 ||
		strcmp(algorithm, "rwr") == 0)
		return algorithm;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown algorithm \"%s\"", algorithm),
			 errhint("Use 'pagerank', 'hits' or 'rwr'.")));
	return NULL;				/* keep the compiler quiet */
}

/*
 * Iterations PageRank / RWR need at most: the l1 change of an iteration shrinks by the damping
 * factor alpha each time and is at most 2 at the first, so it is below the tolerance after
 * ceil(log(tol / 2) / log(alpha)) + 1 iterations ('l1_scaled' compares with n * tol; 'linf',
 * whose change is at most the l1 change, takes this bound too).  Capped by max_iterations.
 */
static int
pagerank_iterations(double alpha, const RankOptions *options, double nodes)
{
	double		tolerance = options->tolerance;
	double		bound;

	if (options->norm == PR_NORM_L1_SCALED)
		tolerance *= Max(nodes, 1.0);
	if (alpha <= 0.0 || tolerance >= 2.0)
		bound = 1.0;
	else
		bound = ceil(log(tolerance / 2.0) / log(alpha)) + 1.0;
	return (int) Min(Max(bound, 1.0), (double) options->max_iterations);
}

/*
 * The engine the call would run on, from service_choose (the real run's decision) for the stored
 * edges (when unknown: the choice when it does not depend on them, else NULL engine).  Fills
 * engine (NULL: the call would fail, or unknown) and reason.
 */
static void
choose_engine(RankDevice device, const GraphSize *size, const char **engine, char *reason,
			  size_t reason_size)
{
	char		why[SERVICE_MESSAGE_LEN];
	ServiceChoice choice;

	*engine = NULL;
	if (size->nodes == 0)
	{
		snprintf(reason, reason_size, "the graph is empty: nothing to iterate");
		*engine = "cpu";
		return;
	}
	if (size->stored_edges < 0)
	{
		choice = service_choose(device, 0, why, sizeof(why), NULL, 0);
		if (choice != service_choose(device, PG_INT64_MAX, why, sizeof(why), NULL, 0))
		{
			snprintf(reason, reason_size,
					 "depends on the graph's size, which is unknown: ANALYZE the table");
			return;
		}
	}
	else
		choice = service_choose(device, (int64) size->stored_edges, why, sizeof(why), NULL, 0);

	switch (choice)
	{
		case CHOICE_CPU_ASKED:
			*engine = "cpu";
			snprintf(reason, reason_size, "device => 'cpu'");
			break;
		case CHOICE_CPU_NOT_PRELOADED:
			*engine = "cpu";
			snprintf(reason, reason_size, "no GPU service: powerrank is not in shared_preload_libraries");
			break;
		case CHOICE_CPU_SMALL_GRAPH:
			*engine = "cpu";
			snprintf(reason, reason_size, "fewer stored edges than powerrank.gpu_min_edges (%d)",
					 powerrank_gpu_min_edges);
			break;
		case CHOICE_CPU_SERVICE_NOT_READY:
			*engine = "cpu";
			snprintf(reason, reason_size, "%s", why);
			break;
		case CHOICE_SERVICE:
			/* the service's cpu-test engine names itself so in powerrank_last_run() */
			*engine = strcmp(service->engine_name, "cpu-test") == 0 ? "cpu-test via service" : "gpu";
			snprintf(reason, reason_size, "%s",
					 device == RANK_DEVICE_GPU ? "device => 'gpu'" :
					 "the GPU service is ready and the graph has at least powerrank.gpu_min_edges stored edges");
			break;
		case CHOICE_GPU_NOT_PRELOADED:
			snprintf(reason, reason_size, "ERROR: device => 'gpu' needs the powerrank GPU service, which is not running");
			break;
		case CHOICE_GPU_UNAVAILABLE:
		case CHOICE_GPU_NO_DEVICE:
			snprintf(reason, reason_size, "ERROR: the powerrank GPU service has no device to run on (state: %s)",
					 why);
			break;
	}
}

/*
 * Where the GPU service would keep the graph of the call: the GPU engine's residency choice
 * (pr_residency_choose) from the inputs the service makes of the request the call would send
 * (service_request_shape, service_residency_input with the engine process's configuration:
 * powerrank.gpu_precision, powerrank.gpu_memory).  A lone request: a call that joins a batch of
 * concurrent RWR calls runs a batch's columns.  The GPU engine also limits itself to the device's
 * free memory less PR_DEVICE_RESERVE, which only it knows: the choice here is the budget's.
 */
static PrResidency
service_residency(PrAlgorithm algorithm, bool rwr, int k, const GraphSize *size, bool weighted,
				  PrResidencyChoice *choice)
{
	ServiceRequest req;
	ServiceEngineConfig config;
	PrResidencyInput in;

	memset(&req, 0, sizeof(req));
	/* pagerank here has the uniform restart; rwr one source node per column */
	service_request_shape(&req, (ServiceAlgorithm) algorithm, k, !rwr, rwr ? k : 0,
						  powerrank_warm_start);
	req.n_nodes = (int64) size->nodes;
	req.n_edges = (int64) size->stored_edges;
	service_read_config(&config);
	service_residency_input(&req, req.k, req.n_nodes, req.n_edges, weighted, &config, &in);
	return pr_residency_choose(&in, choice);
}

/*
 * The cost of one edge in one product of one column on engine: this session's last run when it
 * ran the same algorithm on the same kind of engine over at least 10000 edges (its iterate_ms less
 * prepare_ms over iterations x edges x the products of its columns an iteration: the descriptor's
 * products (HITS 2) times its columns (RWR's sources); *from = "last run"), else the built-in
 * default (*from = "default").
 */
static double
ns_per_edge(const char *algorithm, const PrAlgorithmInfo *info, const char *engine,
			const char **from)
{
	RankRunStats last;
	bool		gpu = strcmp(engine, "gpu") == 0;

	if (run_stats_last(&last) && strcmp(last.algorithm, algorithm) == 0 &&
		last.iterations > 0 && last.edges >= 10000 &&
		(gpu ? strncmp(last.engine, "gpu", 3) == 0 : strcmp(last.engine, engine) == 0))
	{
		double		products = (double) info->products * (double) Max(last.columns, 1);

		*from = "last run";
		return Max(last.iterate_ms - last.prepare_ms, 0.0) * 1e6 /
			((double) last.iterations * (double) last.edges * products);
	}
	*from = "default";
	if (gpu)
		return GPU_NS_PER_EDGE;
	return CPU_NS_PER_EDGE_THREAD / (double) (strcmp(engine, "cpu") == 0 ?
											  powerrank_thread_count() :
											  Max(powerrank_cpu_threads, 1));
}

/* What powerrank_estimate works out for a call: its arguments, the graph's size, the engine. */
typedef struct EstimateCall
{
	const char *algorithm;
	PrAlgorithm kind;			/* PageRank for pagerank and rwr */
	const PrAlgorithmInfo *info;	/* its descriptor */
	bool		rwr;
	RankOptions options;
	RankDevice	device;
	bool		directed;
	bool		weighted;
	bool		cacheable;		/* the call's graph would go to the graph cache */
	double		alpha;			/* PageRank's damping, RWR's 1 - restart; 0 for HITS */
	int			k;				/* columns: RWR's sources, otherwise 1 */
	GraphSize	size;
	const char *engine;			/* NULL: the call would fail */
	char		engine_name[32];	/* engine's text when it is made here (several GPUs) */
	char		reason[SERVICE_MESSAGE_LEN + 64];
	PrResidency residency;		/* where the GPU service would keep the graph, or NONE */
	PrResidencyChoice choice;
} EstimateCall;

/*
 * Reads and checks the call's arguments, with the ranking call's messages, into call and spec
 * (call->algorithm already read).
 */
static void
read_estimate_arguments(FunctionCallInfo fcinfo, EstimateCall *call, EdgeTableSpec *spec)
{
	rank_options_read(fcinfo, E_TOLERANCE, E_MAX_ITERATIONS, E_TOP_K, E_NORM,
					  E_REQUIRE_CONVERGENCE, "edges, algorithm", &call->options);
	if (call->rwr)
		call->alpha = 1.0 - option_restart(fcinfo, E_RESTART);
	else if (call->info->restart)
		call->alpha = option_damping(fcinfo, E_DAMPING);
	if (!PG_ARGISNULL(E_SOURCES))
	{
		if (!call->rwr)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("sources is an argument of rwr, not of %s", call->algorithm),
					 errhint("Pass algorithm => 'rwr' with sources, or leave sources out.")));
		(void) option_node_list(fcinfo, E_SOURCES, "sources", &call->k);
	}
	call->device = option_device(fcinfo, E_DEVICE);
	call->directed = option_bool(fcinfo, E_DIRECTED, "directed");
	edge_table_spec_read(fcinfo, E_EDGES, E_SRC_COLUMN, E_DST_COLUMN, E_WEIGHT_COLUMN, spec);
}

/*
 * The run's resolution and checks of the table, then its cache probe and the graph's size into
 * call; no row of the table is read.
 */
static void
estimate_graph_size(const EdgeTableSpec *spec, EstimateCall *call)
{
	EdgeScanTarget target;
	GraphCacheKey key;
	GraphSizeTarget size_target;

	graph_scan_resolve(spec, &target);
	call->weighted = target.n_columns == 3;
	call->cacheable = graph_cache_probe(&target, call->directed, &key);
	memset(&size_target, 0, sizeof(size_target));
	size_target.relid = target.relid;
	size_target.n_columns = target.n_columns;
	for (int c = 0; c < target.n_columns; c++)
	{
		size_target.attnums[c] = target.columns[c].attnum;
		size_target.types[c] = target.columns[c].type;
	}
	size_target.directed = call->directed;
	size_target.cache_key = call->cacheable ? &key : NULL;
	graph_size_of_table(&size_target, &call->size);
	graph_scan_end(&target);
}

/*
 * A cached graph that one GPU would stream runs, once measured, on every GPU when the service uses
 * several (service->multi_gpus) and each GPU's part fits resident there: its share of the edges
 * (pr_parts_edge_share) with the whole vectors.  Then the engine is "gpu-multi(G)" ("cpu-parts(G)" for the cpu-test engine), the
 * residency resident and the device bytes one GPU's.
 */
static void
predict_several_gpus(EstimateCall *call)
{
	int			gpus = service->multi_gpus;
	GraphSize	part = call->size;
	PrResidencyChoice choice;
	size_t		used;

	if (gpus < 2 || !call->cacheable)
		return;
	part.stored_edges = ceil(call->size.stored_edges * pr_parts_edge_share(gpus));
	if (service_residency(call->kind, call->rwr, call->k, &part, call->weighted, &choice) !=
		PR_RESIDENCY_RESIDENT)
		return;
	call->residency = PR_RESIDENCY_RESIDENT;
	call->choice = choice;
	snprintf(call->engine_name, sizeof(call->engine_name), "%s(%d)",
			 strcmp(service->engine_name, "cpu-test") == 0 ? "cpu-parts" : "gpu-multi", gpus);
	call->engine = call->engine_name;
	used = strlen(call->reason);
	snprintf(call->reason + used, sizeof(call->reason) - used,
			 "; one GPU would stream the graph, each of %d GPUs holds its part resident", gpus);
}

/*
 * For a call the GPU service would run: where the service would keep the graph (call->residency),
 * and, when the graph would not fit in its memory, the engine and reason of a service that fails
 * with out of memory ('auto' computes on the CPU, 'gpu' is an ERROR).
 */
static void
check_service_memory(EstimateCall *call)
{
	char		needs[SERVICE_MESSAGE_LEN];

	call->residency = service_residency(call->kind, call->rwr, call->k, &call->size,
										call->weighted, &call->choice);
	if (call->residency == PR_RESIDENCY_STREAMED)
		predict_several_gpus(call);
	if (call->residency != PR_RESIDENCY_NONE)
		return;
	snprintf(needs, sizeof(needs),
			 "the graph needs %.1f MiB of device memory resident and %.1f MiB streamed; powerrank.gpu_memory allows %.1f MiB",
			 call->choice.resident_bytes / 1048576.0, call->choice.streamed_bytes / 1048576.0,
			 call->choice.limit / 1048576.0);
	if (call->device == RANK_DEVICE_GPU)
	{
		call->engine = NULL;
		snprintf(call->reason, sizeof(call->reason),
				 "ERROR: the powerrank GPU service would fail (out of memory): %s", needs);
	}
	else
	{
		call->engine = "cpu";
		snprintf(call->reason, sizeof(call->reason),
				 "the GPU service would fail (out of memory), so the call computes on the CPU: %s",
				 needs);
	}
}

/* Whether an engine name is the GPU engine's, which picks its layout when it prepares. */
static bool
engine_picks_layout(const char *engine)
{
	return strcmp(engine, "gpu") == 0 || strncmp(engine, "gpu-multi", 9) == 0;
}

/* The memory columns: bytes in the backend, in shared memory, in the graph cache, on the GPU. */
static void
fill_memory_columns(const EstimateCall *call, Datum *values, bool *nulls)
{
	const GraphSize *size = &call->size;
	double		n = size->nodes;
	double		m = size->stored_edges;
	double		graph = size->cached ? (double) size->cache_bytes :
		flat_graph_bytes(n, m, call->weighted);
	double		out_edges = (call->info->needs & PR_NEED_PUSH) ?
		8.0 * (n + 1) + m * (call->weighted ? 12.0 : 4.0) : 0.0;
	double		rows = size->cached ? 0.0 : Max(size->rows, 0.0) * (call->weighted ? 24.0 : 16.0);

	/* result vectors of all columns: HITS' hubs and authorities, RWR's k columns */
	double		columns = (double) call->info->results * (double) call->k;
	bool		on_service = strcmp(call->engine, "cpu") != 0;
	double		results = n * columns * 8.0;
	double		backend;
	double		shared = call->cacheable ? graph : 0.0;

	if (!on_service)
	{
		/* HITS' out-edges kept with the cache entry are mapped from shared memory */
		bool		out_edges_mapped = size->cached && size->out_edges_kept;

		/* rows (freed after the build), the graph unless mapped from the cache, HITS'
		 * out-edges unless mapped, two iterates, the normalised copy, the results,
		 * 1/out-strength */
		backend = rows + (size->cached ? 0.0 : graph) + (out_edges_mapped ? 0.0 : out_edges) +
			4.0 * n * columns * 8.0 + 8.0 * n;
		if (out_edges_mapped)
			shared += out_edges;
	}
	else
	{
		/* rows and graph (unless cached) here, and the results copied out of the request */
		backend = rows + (size->cached ? 0.0 : graph) + results;
		/* the request segment: the results, and the graph when it is not in the cache */
		shared += results + (call->cacheable ? 0.0 : graph);
	}
	values[R_BACKEND_BYTES] = Int64GetDatum((int64) backend);
	values[R_SHARED_BYTES] = Int64GetDatum((int64) shared);
	values[R_CACHE_BYTES] = Int64GetDatum((int64) graph);
	nulls[R_CACHE_BYTES] = !call->cacheable;
	/* the device bytes of the residency, as pr_residency_choose sizes it */
	values[R_GPU_BYTES] = Int64GetDatum((int64) (call->residency == PR_RESIDENCY_STREAMED ?
												 call->choice.streamed_bytes :
												 call->choice.resident_bytes));
	nulls[R_GPU_BYTES] = call->residency == PR_RESIDENCY_NONE;
}

/* The time columns: an iteration's predicted milliseconds, the iterations and their total. */
static void
fill_time_columns(const EstimateCall *call, Datum *values, bool *nulls)
{
	const char *cost_from;
	double		per_edge = ns_per_edge(call->algorithm, call->info, call->engine, &cost_from);

	/* the descriptor's products per iteration (HITS 2); many RWR sources: one pass, k columns */
	double		ms = per_edge * call->size.stored_edges * (double) call->info->products *
		(double) call->k / 1e6;

	values[R_MS_PER_ITERATION] = Float8GetDatum(ms);
	values[R_COST_FROM] = CStringGetTextDatum(cost_from);
	/* an algorithm with a restart contracts by the damping: its iterations are predictable */
	if (call->info->restart && call->size.nodes >= 0)
	{
		int			iterations = pagerank_iterations(call->alpha, &call->options, call->size.nodes);

		values[R_ITERATIONS] = Int32GetDatum(iterations);
		values[R_PREDICTED_MS] = Float8GetDatum(ms * iterations);
	}
	else
		nulls[R_ITERATIONS] = nulls[R_PREDICTED_MS] = true;
}

/*
 * powerrank_estimate(edges, algorithm, ...): one row (see estimate.c's file comment and the
 * README).  Checks what the ranking call checks first (the table, its columns, SELECT privilege,
 * the arguments), with the same messages; reads the catalog and the graph cache's registry only.
 */
Datum
powerrank_estimate(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	Datum		values[R_COLUMNS];
	bool		nulls[R_COLUMNS];
	EstimateCall call;
	EdgeTableSpec spec;
	const GraphSize *size = &call.size;

	memset(&call, 0, sizeof(call));
	call.algorithm = read_algorithm(fcinfo);
	call.kind = strcmp(call.algorithm, "hits") == 0 ? PR_ALGORITHM_HITS : PR_ALGORITHM_PAGERANK;
	call.info = pr_algorithm(call.kind);
	call.rwr = strcmp(call.algorithm, "rwr") == 0;
	call.k = 1;
	call.residency = PR_RESIDENCY_NONE;
	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "powerrank_estimate must return a row");
	desc = BlessTupleDesc(desc);

	read_estimate_arguments(fcinfo, &call, &spec);
	estimate_graph_size(&spec, &call);

	memset(nulls, 0, sizeof(nulls));
	for (int c = 0; c < R_COLUMNS; c++)
		values[c] = (Datum) 0;
	values[R_COUNTS_FROM] = CStringGetTextDatum(size->cached ? "cache" :
												size->stored_edges >= 0 ? "statistics" : "unknown");
	values[R_NODES] = Int64GetDatum((int64) size->nodes);
	nulls[R_NODES] = size->nodes < 0;
	values[R_STORED_EDGES] = Int64GetDatum((int64) size->stored_edges);
	nulls[R_STORED_EDGES] = size->stored_edges < 0;

	choose_engine(call.device, size, &call.engine, call.reason, sizeof(call.reason));
	if (call.engine != NULL && strcmp(call.engine, "cpu") != 0 && size->nodes > 0 &&
		size->stored_edges >= 0)
		check_service_memory(&call);
	values[R_ENGINE] = call.engine != NULL ? CStringGetTextDatum(call.engine) : (Datum) 0;
	nulls[R_ENGINE] = call.engine == NULL;
	values[R_REASON] = CStringGetTextDatum(call.reason);
	/* the CPU engines pull over the in-edge CSR; the GPU picks its layout when it prepares */
	values[R_LAYOUT] = call.engine != NULL && !engine_picks_layout(call.engine) ?
		CStringGetTextDatum("csr") : (Datum) 0;
	nulls[R_LAYOUT] = call.engine == NULL || engine_picks_layout(call.engine);
	values[R_RESIDENCY] = call.residency != PR_RESIDENCY_NONE ?
		CStringGetTextDatum(pr_residency_name(call.residency)) : (Datum) 0;
	nulls[R_RESIDENCY] = call.residency == PR_RESIDENCY_NONE;

	if (size->nodes >= 0 && size->stored_edges >= 0 && call.engine != NULL)
		fill_memory_columns(&call, values, nulls);
	else
		nulls[R_BACKEND_BYTES] = nulls[R_SHARED_BYTES] = nulls[R_CACHE_BYTES] =
			nulls[R_GPU_BYTES] = true;

	if (call.engine != NULL && size->stored_edges >= 0)
		fill_time_columns(&call, values, nulls);
	else
		nulls[R_MS_PER_ITERATION] = nulls[R_COST_FROM] = nulls[R_ITERATIONS] =
			nulls[R_PREDICTED_MS] = true;

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}
