/*
 * engine_library.c — the GPU libraries of the engine process: libpowerrank_gpu.so
 * (powerrank.gpu_library) and, on several GPUs, libpowerrank_multi.so
 * (powerrank.gpu_multi_library), loaded with dlopen in this process only; the engine started (a
 * device found, its context created); the engines it creates for resident graphs.
 *
 * Runs in the engine process: no palloc, no elog (see engine.h).
 */
#include "engine/engine.h"

#include <dlfcn.h>
#include <sys/stat.h>

GpuLibrary	engine_gpu;
MultiLibrary engine_multi;
int			engine_multi_gpus = 0;	/* GPUs a run may use (0: one; the multi library is off) */
PrMultiComms *engine_multi_comms = NULL;	/* the multi library's communicators (GPU engine) */

/*
 * Opens a shared library (what: its name in the message), or NULL with message set.  The message
 * names the file once: a missing file is said to be missing, and dlopen's reason loses the path
 * it starts with.
 */
static void *
open_library(const char *path, const char *what, char *message, size_t message_size)
{
	struct stat st;
	void	   *handle;
	const char *reason;
	size_t		path_len = strlen(path);

	if (stat(path, &st) != 0)
	{
		snprintf(message, message_size, "the %s \"%s\" does not exist", what, path);
		return NULL;
	}
	handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (handle == NULL)
	{
		reason = dlerror();
		if (reason == NULL)
			reason = "unknown error";
		if (strncmp(reason, path, path_len) == 0 && strncmp(reason + path_len, ": ", 2) == 0)
			reason += path_len + 2;
		snprintf(message, message_size, "cannot load the %s \"%s\": %s", what, path, reason);
	}
	return handle;
}

/* Loads libpowerrank_gpu.so and finds its entry points (false with message on failure). */
static bool
load_gpu_library(char *message, size_t message_size)
{
	void	   *handle = open_library(engine_config->gpu_library, "GPU library", message,
										  message_size);

	if (handle == NULL)
		return false;
	engine_gpu.options_init = (void (*) (PrGpuOptions *)) dlsym(handle, "pr_gpu_options_init");
	engine_gpu.engine_create = (PrEngine * (*) (const PrGpuOptions *, PrError *))
		dlsym(handle, "pr_gpu_engine_create");
	engine_gpu.engine_report = (PrStatus (*) (PrEngine *, PrGpuReport *, PrError *))
		dlsym(handle, "pr_gpu_engine_report");
	engine_gpu.device_count = (int (*) (void)) dlsym(handle, "pr_gpu_device_count");
	engine_gpu.build_flat = (PrStatus (*) (int, const int64_t *, const int64_t *, size_t, bool,
										   void *, size_t, int, PrGpuBuildReport *, PrError *))
		dlsym(handle, "pr_gpu_build_flat");	/* optional */
	if (engine_gpu.options_init == NULL || engine_gpu.engine_create == NULL ||
		engine_gpu.engine_report == NULL || engine_gpu.device_count == NULL)
	{
		snprintf(message, message_size, "the GPU library \"%s\" lacks pr_gpu_* entry points",
				 engine_config->gpu_library);
		dlclose(handle);
		return false;
	}
	return true;
}

/* Loads libpowerrank_multi.so and finds its entry points (false with message on failure). */
static bool
load_multi_library(char *message, size_t message_size)
{
	void	   *handle = open_library(engine_config->multi_library, "multi-GPU library",
										  message, message_size);

	if (handle == NULL)
		return false;
	engine_multi.comms_create = (PrMultiComms * (*) (int, PrError *))
		dlsym(handle, "pr_multi_comms_create");
	engine_multi.engine_create = (PrEngine * (*) (PrMultiComms *, const PrGpuOptions *, int,
												  PrError *))
		dlsym(handle, "pr_multi_engine_create");
	if (engine_multi.comms_create == NULL || engine_multi.engine_create == NULL)
	{
		snprintf(message, message_size,
				 "the multi-GPU library \"%s\" lacks pr_multi_* entry points",
				 engine_config->multi_library);
		dlclose(handle);
		return false;
	}
	return true;
}

/*
 * Decides how many GPUs a run may use: the visible ones, capped by powerrank.gpu_devices; with
 * more than one, the multi library loaded and its communicators created once for the process
 * (every engine over several GPUs shares them).  Any failure is logged once and leaves one GPU in
 * use; it never stops the service.  The cpu-test engine simulates powerrank.gpu_devices parts
 * (CPU engines joined by pr_parts' own exchange) when it is 2 or more.
 */
static void
start_multi(const char *device)
{
	char		message[SERVICE_MESSAGE_LEN];
	char		line[SERVICE_MESSAGE_LEN + 64];
	PrError		err = {0};
	int			n;

	engine_multi_gpus = 0;
	service->multi_gpus = 0;
	if (engine_config->kind == SERVICE_ENGINE_CPU_TEST)
	{
		if (engine_config->gpu_devices >= 2)
			engine_multi_gpus = service->multi_gpus = Min(engine_config->gpu_devices, PR_PARTS_MAX);
		return;
	}
	n = engine_gpu.device_count();
	if (engine_config->gpu_devices > 0 && engine_config->gpu_devices < n)
		n = engine_config->gpu_devices;
	n = Min(n, PR_PARTS_MAX);
	if (n < 2)
		return;
	if (!load_multi_library(message, sizeof(message)))
	{
		snprintf(line, sizeof(line), "%s; every run uses one GPU", message);
		engine_log(line);
		return;
	}
	engine_multi_comms = engine_multi.comms_create(n, &err);
	if (engine_multi_comms == NULL)
	{
		snprintf(line, sizeof(line), "the multi-GPU library does not start on %d GPUs: %s; every run uses one GPU",
				 n, err.message);
		engine_log(line);
		return;
	}
	engine_multi_gpus = service->multi_gpus = n;
	snprintf(service->device_name, sizeof(service->device_name),
			 "%d x %s (devices 0-%d; one GPU: device %d)", n, device, n - 1,
			 engine_config->gpu_device);
}

/* The GPU engine's options from the configuration; quick: the quick layout (see below). */
static void
gpu_options(bool quick, PrGpuOptions *opts)
{
	engine_gpu.options_init(opts);
	opts->device = engine_config->gpu_device;
	opts->precision = (PrGpuPrecision) engine_config->gpu_precision;
	opts->kernel = quick ? PR_GPU_KERNEL_BINNED : (PrGpuKernel) engine_config->gpu_kernel;
	/* the quick layout, cuSPARSE, ALIGNED_COO and row blocks keep the graph's own order; tiled and
	 * binned order the nodes by degree; auto times both kinds */
	if (quick || opts->kernel == PR_GPU_KERNEL_CUSPARSE ||
		opts->kernel == PR_GPU_KERNEL_ALIGNED_COO || opts->kernel == PR_GPU_KERNEL_ROW_BLOCKS)
		opts->order = PR_GPU_ORDER_NATURAL;
	opts->memory_budget = (size_t) engine_config->memory_limit;
}

/*
 * Creates one engine of the configured kind (NULL with err set on failure); quick asks the GPU
 * engine for the quick layout (row-binned, natural ids) instead of the configured kernel.
 */
PrEngine *
engine_create_layout(bool quick, PrError *err)
{
	PrGpuOptions opts;

	if (engine_config->kind == SERVICE_ENGINE_CPU_TEST)
		return pr_cpu_engine_create(engine_config->cpu_threads, &pr_malloc_allocator, err);
	gpu_options(quick, &opts);
	return engine_gpu.engine_create(&opts, err);
}

/*
 * Creates the engine over engine_multi_gpus parts (NULL with err set on failure): one GPU engine
 * of the configured kind per GPU, joined by the multi library's exchange; for the cpu-test engine,
 * CPU engines sharing its threads, joined by pr_parts' own exchange.
 */
PrEngine *
engine_create_multi(PrError *err)
{
	PrEngine   *parts[PR_PARTS_MAX];
	PrGpuOptions opts;
	int			threads;

	if (engine_config->kind != SERVICE_ENGINE_CPU_TEST)
	{
		gpu_options(false, &opts);
		return engine_multi.engine_create(engine_multi_comms, &opts, engine_multi_gpus, err);
	}
	threads = Max(1, engine_config->cpu_threads / engine_multi_gpus);
	for (int p = 0; p < engine_multi_gpus; p++)
	{
		if ((parts[p] = pr_cpu_engine_create(threads, &pr_malloc_allocator, err)) == NULL)
		{
			while (--p >= 0)
				parts[p]->ops->release(parts[p]);
			return NULL;
		}
	}
	return pr_parts_engine_create(parts, engine_multi_gpus, NULL, "cpu-parts",
								  &pr_malloc_allocator, err);
}

/*
 * The cpu-test engine's residency: the choice the GPU engine's prepare makes (pr_residency.h) for
 * a run of `columns` columns answering req on graph g (service_residency_input: the request's
 * slots and push matrix, powerrank.gpu_memory as the budget and no other limit: no device).  The
 * name goes to residency; when neither way fits, PR_ERR_NOMEM with the GPU engine's message, as
 * its prepare fails.
 */
PrStatus
engine_test_residency(const ServiceRequest *req, int columns, const PrGraph *g, char *residency,
					  size_t size, PrError *err)
{
	PrResidencyInput in;
	PrResidencyChoice choice;

	service_residency_input(req, columns, g->n_nodes, g->n_edges, g->weighted, engine_config, &in);
	if (pr_residency_choose(&in, &choice) == PR_RESIDENCY_NONE)
		return pr_error_set(err, PR_ERR_NOMEM,
							"cpu-test engine: the graph needs %.1f MiB of device memory resident and %.1f MiB streamed; powerrank.gpu_memory allows %.1f MiB",
							choice.resident_bytes / 1048576.0, choice.streamed_bytes / 1048576.0,
							choice.limit / 1048576.0);
	strlcpy(residency, pr_residency_name(choice.residency), size);
	return PR_OK;
}

/*
 * Starts the engine: loads the GPU library, checks for a device and prepares a two-node graph
 * (creates the device context now rather than on the first request, and names the device).
 * Publishes the engine and device names; exits UNAVAILABLE when no engine can run.
 */
void
engine_start(void)
{
	char		message[SERVICE_MESSAGE_LEN];
	PrError		err = {0};

	if (engine_config->kind == SERVICE_ENGINE_CPU_TEST)
	{
		strlcpy(service->engine_name, "cpu-test", sizeof(service->engine_name));
		start_multi(NULL);
		snprintf(service->device_name, sizeof(service->device_name),
				 "CPU engine in the service process (%d threads; test engine%s)",
				 engine_config->cpu_threads,
				 engine_multi_gpus > 1 ? "; several GPUs simulated by as many parts" : "");
	}
	else
	{
		static const int64_t src[] = {1, 2};
		static const int64_t dst[] = {2, 1};
		PrBuildOptions build = {0};
		PrGraph		tiny;
		PrGpuReport report;
		PrEngine   *probe;

		if (!load_gpu_library(message, sizeof(message)))
			engine_exit_unavailable(message);
		if (engine_gpu.device_count() <= engine_config->gpu_device)
		{
			snprintf(message, sizeof(message), "no CUDA device %d (%d found)",
					 engine_config->gpu_device, engine_gpu.device_count());
			engine_exit_unavailable(message);
		}
		probe = engine_create_layout(false, &err);
		if (probe == NULL)
			engine_exit_unavailable(err.message);
		memset(&tiny, 0, sizeof(tiny));
		build.n_threads = 1;
		if (pr_graph_build(src, dst, NULL, 2, &build, &pr_malloc_allocator, &tiny, &err) != PR_OK ||
			pr_pagerank_prepare(probe, &tiny, 1, &err) != PR_OK ||
			engine_gpu.engine_report(probe, &report, &err) != PR_OK)
		{
			snprintf(message, sizeof(message), "the GPU engine does not start: %s", err.message);
			engine_exit_unavailable(message);
		}
		strlcpy(service->engine_name, "gpu", sizeof(service->engine_name));
		snprintf(service->device_name, sizeof(service->device_name), "%s (device %d)",
				 report.device, engine_config->gpu_device);
		probe->ops->release(probe);
		pr_graph_free(&tiny, &pr_malloc_allocator);
		start_multi(report.device);
	}
	service->has_device = true;
	service->engine_error[0] = '\0';
	pg_atomic_write_u32(&service->engine_ready, 1);
}
