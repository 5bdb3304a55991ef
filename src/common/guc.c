/*
 * guc.c — the powerrank.* configuration settings.
 */
#include "powerrank.h"

#include <limits.h>

#include "utils/guc.h"

#include "channel.h"
#include "pr_gpu.h"
#include "pr_mixing.h"

int			powerrank_cpu_threads = 0;
int			powerrank_cache_size_mb = 1024;
int			powerrank_service_engine = SERVICE_ENGINE_GPU;
char	   *powerrank_gpu_library = NULL;
char	   *powerrank_gpu_multi_library = NULL;
int			powerrank_gpu_devices = 0;
int			powerrank_gpu_device = 0;
int			powerrank_gpu_precision = PR_GPU_FP64;
int			powerrank_gpu_kernel = PR_GPU_KERNEL_AUTO;
int			powerrank_service_batch_size = 8;
double		powerrank_service_batch_wait_ms = 1.0;
int			powerrank_gpu_quick_layout_edges = 8000000;
int			powerrank_gpu_memory_mb = 0;
int			powerrank_gpu_min_edges = 400000;
int			powerrank_gpu_build_rows = 4000000;
bool		powerrank_warm_start = true;
bool		powerrank_warm_start_auto = true;
int			powerrank_mixing_depth = 5;
bool		powerrank_stop_when_certified = false;

static const struct config_enum_entry service_engine_options[] = {
	{"gpu", SERVICE_ENGINE_GPU, false},
	{"cpu-test", SERVICE_ENGINE_CPU_TEST, false},
	{"off", SERVICE_ENGINE_OFF, false},
	{NULL, 0, false}
};

static const struct config_enum_entry gpu_precision_options[] = {
	{"fp64", PR_GPU_FP64, false},
	{"fp32", PR_GPU_FP32, false},
	{NULL, 0, false}
};

static const struct config_enum_entry gpu_kernel_options[] = {
	{"auto", PR_GPU_KERNEL_AUTO, false},
	{"tiled", PR_GPU_KERNEL_TILED, false},
	{"binned", PR_GPU_KERNEL_BINNED, false},
	{"cusparse", PR_GPU_KERNEL_CUSPARSE, false},
	{"aligned_coo", PR_GPU_KERNEL_ALIGNED_COO, false},
	{"row_blocks", PR_GPU_KERNEL_ROW_BLOCKS, false},
	{NULL, 0, false}
};

/*
 * The GPU service's settings.  Those of the engine process are PGC_SIGHUP: the service worker
 * restarts its engine process when a reload changes them.
 */
static void
service_guc_init(void)
{
	DefineCustomEnumVariable("powerrank.service_engine",
							 "Engine the GPU service runs: gpu, cpu-test (the CPU engine behind the service protocol, for tests) or off.",
							 "Needs shared_preload_libraries = 'powerrank'.",
							 &powerrank_service_engine,
							 SERVICE_ENGINE_GPU, service_engine_options,
							 PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomStringVariable("powerrank.gpu_library",
							   "Path of the GPU engine library the service loads ($libdir = the package library directory).",
							   NULL,
							   &powerrank_gpu_library,
							   "$libdir/powerrank_gpu.so",
							   PGC_SIGHUP, GUC_SUPERUSER_ONLY, NULL, NULL, NULL);
	DefineCustomStringVariable("powerrank.gpu_multi_library",
							   "Path of the multi-GPU library the service loads to run PageRank on several GPUs ($libdir = the package library directory).",
							   "When it is missing or NCCL does not start, the service uses one GPU.",
							   &powerrank_gpu_multi_library,
							   "$libdir/powerrank_multi.so",
							   PGC_SIGHUP, GUC_SUPERUSER_ONLY, NULL, NULL, NULL);
	DefineCustomIntVariable("powerrank.gpu_devices",
							"GPUs a run on the GPU service may use: 0 = every visible GPU, 1 = one GPU only, N = the first N.",
							"Several GPUs run a cached graph's kind of run where measured faster than one; the cpu-test engine simulates N >= 2 GPUs by N parts.",
							&powerrank_gpu_devices,
							0, 0, 16,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("powerrank.gpu_device",
							"CUDA device ordinal of the GPU service.",
							NULL,
							&powerrank_gpu_device,
							0, 0, 63,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomEnumVariable("powerrank.gpu_precision",
							 "Arithmetic of the GPU engine's vectors: fp64 or fp32 (double reductions).",
							 NULL,
							 &powerrank_gpu_precision,
							 PR_GPU_FP64, gpu_precision_options,
							 PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomEnumVariable("powerrank.gpu_kernel",
							 "Sparse-product kernel of the GPU engine: auto (the fastest of a short list of layouts, timed on the device), tiled, binned, cusparse, aligned_coo or row_blocks.",
							 NULL,
							 &powerrank_gpu_kernel,
							 PR_GPU_KERNEL_AUTO, gpu_kernel_options,
							 PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("powerrank.gpu_memory",
							"Device memory the GPU service may keep resident graphs in, in megabytes (0 = what the device has).",
							"Least recently used graphs are evicted first.",
							&powerrank_gpu_memory_mb,
							0, 0, INT_MAX / 2,
							PGC_SIGHUP, GUC_UNIT_MB, NULL, NULL, NULL);
	DefineCustomIntVariable("powerrank.service_batch_size",
							"RWR requests on one cached graph that the GPU service may answer with one multi-column run (1 = one at a time).",
							"Every run of a batch has this many columns; idle columns repeat a request's.",
							&powerrank_service_batch_size,
							8, 1, SERVICE_MAX_BATCH,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomRealVariable("powerrank.service_batch_wait",
							 "How long the GPU service waits for more RWR requests to join a batch, in milliseconds.",
							 "It waits only while the previous batch had company (a lone caller never waits), and never longer than this.",
							 &powerrank_service_batch_wait_ms,
							 1.0, 0.0, 1000.0,
							 PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomIntVariable("powerrank.gpu_quick_layout_edges",
							"Cached graphs with at least this many edges are first prepared on the GPU with a quick layout while the tuned layout is planned in the background (-1 = always plan first).",
							"The first call then does not wait for the layout planning; later calls use the tuned layout once it is ready.",
							&powerrank_gpu_quick_layout_edges,
							8000000, -1, INT_MAX,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("powerrank.gpu_min_edges",
							"Edges a graph needs for device => 'auto' to run it on the GPU service.",
							NULL,
							&powerrank_gpu_min_edges,
							400000, 0, INT_MAX,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("powerrank.gpu_build_rows",
							"Uncached tables that may hold at least this many edge rows (judged from their size) are read into shared memory and built into a graph by the GPU service (-1 = always build in the backend).",
							"Only for calls the service runs, tables the cache tracks and unweighted graphs; any failure builds in the backend instead.",
							&powerrank_gpu_build_rows,
							4000000, -1, INT_MAX,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("powerrank.warm_start",
							 "RWR and personalized PageRank on the GPU service start from the warm start (the restart nodes' two-step neighbourhood plus the graph's far-field vector) instead of 1/N.",
							 "Same tolerance, fewer iterations; the scores then differ from a run started at 1/N (the CPU engine in the backend) by less than the tolerance allows.",
							 &powerrank_warm_start,
							 true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
}

/* Defines the CPU engine's, the cache's and the GPU service's settings. */
void
powerrank_guc_init(void)
{
	DefineCustomIntVariable("powerrank.cpu_threads",
							"Worker threads of the CPU engine (0 = one per online core).",
							NULL,
							&powerrank_cpu_threads,
							0, 0, 1024,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);

	/*
	 * Superuser-only, so that ordinary roles cannot grow the cache; the limit is enforced when a
	 * graph is added, with the adding session's value: set it in postgresql.conf.
	 */
	DefineCustomIntVariable("powerrank.cache_size",
							"Shared memory the graph cache may hold, in megabytes (0 disables the cache).",
							"Needs shared_preload_libraries = 'powerrank'. Least recently used graphs are evicted first.",
							&powerrank_cache_size_mb,
							1024, 0, INT_MAX / 2,
							PGC_SUSET,
							GUC_UNIT_MB,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("powerrank.warm_start_auto",
							 "PageRank and RWR of one column on the CPU engine start from the scores kept with the cached graph: those of the table's previous graph when at most 1% of its edges changed.",
							 "Same stopping rule, fewer iterations; the scores differ from a run started at 1/N by less than the tolerance allows. off: every run starts at 1/N and keeps no scores.",
							 &powerrank_warm_start_auto,
							 true,
							 PGC_USERSET, 0, NULL, NULL, NULL);

	DefineCustomIntVariable("powerrank.mixing_depth",
							"Anderson mixing depth of the iterations (0 = plain power iteration).",
							"Mixing starts once plain iterations contract slowly; every engine (CPU, GPU service, several GPUs) runs it. The result and its stopping rule do not depend on it.",
							&powerrank_mixing_depth,
							5, 0, PR_MIX_MAX_DEPTH,
							PGC_USERSET, 0, NULL, NULL, NULL);

	DefineCustomBoolVariable("powerrank.stop_when_certified",
							 "PageRank and RWR with top_k stop as soon as the top_k set and order are certified exact, even before the tolerance is met.",
							 "off: a run goes on past the tolerance until its top_k is certified (or rounding cannot separate two entries). powerrank_last_run().top_k_certified says which.",
							 &powerrank_stop_when_certified,
							 false,
							 PGC_USERSET, 0, NULL, NULL, NULL);

	service_guc_init();
}

/* The thread count the setting asks for, with 0 resolved to the number of online cores. */
int
powerrank_thread_count(void)
{
	return pr_thread_count(powerrank_cpu_threads, 1024);	/* 1024: the setting's maximum */
}
