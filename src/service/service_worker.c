/*
 * service_worker.c — the "powerrank gpu service" background worker: starts the engine process
 * (fork), notices when it dies (SIGCHLD + waitpid), fails the requests it held, and starts a new
 * one.  The worker itself never loads the GPU library or creates an engine, so the worker (a
 * postmaster child, whose death by a signal makes the postmaster reinitialise the cluster) runs
 * nothing that can crash on a device fault.
 */
#include "service/service.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/dsm_impl.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/spin.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"

#include "engine/engine.h"
#include "pr_gpu.h"

/* Seconds before the postmaster restarts a worker that exited. */
#define SERVICE_WORKER_RESTART_SECONDS 2

static pid_t engine_pid = 0;
static TimestampTz engine_started = 0;
static int	quick_deaths = 0;			/* engine processes that died soon after starting */
static TimestampTz next_start = 0;		/* do not fork before this (crash-loop back-off) */
static bool engine_unavailable = false; /* the engine cannot run: wait for a reload */
static volatile sig_atomic_t child_exited = false;
static ServiceEngineConfig current_config;

/* Registers the worker; called from _PG_init while preloading. */
void
service_worker_register(void)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS;
	worker.bgw_start_time = BgWorkerStart_PostmasterStart;
	worker.bgw_restart_time = SERVICE_WORKER_RESTART_SECONDS;
	strlcpy(worker.bgw_library_name, "powerrank", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, "powerrank_service_main", BGW_MAXLEN);
	strlcpy(worker.bgw_name, "powerrank gpu service", BGW_MAXLEN);
	strlcpy(worker.bgw_type, "powerrank gpu service", BGW_MAXLEN);
	RegisterBackgroundWorker(&worker);
}

/* SIGCHLD: the engine process ended; wake the main loop. */
static void
handle_sigchld(SIGNAL_ARGS)
{
	int			save_errno = errno;

	child_exited = true;
	SetLatch(MyLatch);
	errno = save_errno;
}

/*
 * A library's path from its setting (powerrank.gpu_library, powerrank.gpu_multi_library):
 * "$libdir" is the package library directory; a bare name is looked up there; ".so" is added
 * when the name does not end in it and the file is absent, so that the path names the file once.
 */
static void
resolve_library(const char *setting, char *out, size_t size)
{
	struct stat st;
	size_t		len;

	if (setting == NULL)
		setting = "";
	if (strncmp(setting, "$libdir", 7) == 0)
		snprintf(out, size, "%s%s", pkglib_path, setting + 7);
	else if (strchr(setting, '/') == NULL)
		snprintf(out, size, "%s/%s", pkglib_path, setting);
	else
		strlcpy(out, setting, size);
	len = strlen(out);
	if (stat(out, &st) != 0 && !(len >= 3 && strcmp(out + len - 3, ".so") == 0) &&
		len + 3 < size)
		strlcat(out, ".so", size);
}

/*
 * Takes the engine process's configuration from the settings (also powerrank_estimate's view of
 * what the engine process runs with, once a reload has reached both).
 */
void
service_read_config(ServiceEngineConfig *config)
{
	memset(config, 0, sizeof(ServiceEngineConfig));
	config->kind = (ServiceEngineKind) powerrank_service_engine;
	resolve_library(powerrank_gpu_library, config->gpu_library, sizeof(config->gpu_library));
	resolve_library(powerrank_gpu_multi_library, config->multi_library,
					sizeof(config->multi_library));
	config->gpu_devices = powerrank_gpu_devices;
	config->gpu_device = powerrank_gpu_device;
	config->gpu_precision = powerrank_gpu_precision;
	config->gpu_kernel = powerrank_gpu_kernel;
	config->memory_limit = (int64) powerrank_gpu_memory_mb * 1024 * 1024;
	config->cpu_threads = powerrank_thread_count();
	config->batch_size = powerrank_service_batch_size;
	config->batch_wait_us = (int) (powerrank_service_batch_wait_ms * 1000.0);
	config->quick_layout_edges = powerrank_gpu_quick_layout_edges;
	config->dsm_type = dynamic_shared_memory_type;
}

/*
 * Fails every request that is queued or running: the engine process that held them is gone.
 * Each waiting backend gets FAILED with reason, and its latch set.
 */
static void
sweep_requests(const char *reason)
{
	int			i;

	for (i = 0; i < service->n_slots; i++)
	{
		ServiceSlot *slot = &service->slots[i];
		uint32		state = pg_atomic_read_u32(&slot->state);

		if (state != SLOT_QUEUED && state != SLOT_RUNNING)
			continue;
		slot->outcome.request_id = slot->request.request_id;
		slot->outcome.status = PR_ERR_ENGINE;
		slot->outcome.rows_intact = false;	/* a build may have been writing over its rows */
		strlcpy(slot->outcome.message, reason, sizeof(slot->outcome.message));
		if (pg_atomic_compare_exchange_u32(&slot->state, &state, SLOT_FAILED))
		{
			pg_atomic_fetch_add_u64(&service->swept, 1);
			if (slot->latch != NULL)
				SetLatch(slot->latch);
		}
	}
}

/* Clears what the engine process published (its names and residency). */
static void
clear_engine_status(void)
{
	int			i;

	pg_atomic_write_u32(&service->engine_ready, 0);
	service->has_device = false;
	for (i = 0; i < SERVICE_MAX_RESIDENT; i++)
		pg_atomic_write_u64(&service->resident_ids[i], 0);
	pg_atomic_write_u32(&service->resident, 0);
	pg_atomic_write_u64(&service->device_bytes, 0);
}

/* Forks the engine process. */
static void
start_engine_process(void)
{
	pid_t		pid;

	service_read_config(&current_config);
	clear_engine_status();
	service->engine_error[0] = '\0';
	if (current_config.kind == SERVICE_ENGINE_OFF)
	{
		service_set_state(SERVICE_UNAVAILABLE, "powerrank.service_engine is off");
		engine_unavailable = true;
		return;
	}
	service_set_state(SERVICE_STARTING, NULL);
	fflush(NULL);
	pid = fork();
	if (pid < 0)
	{
		ereport(LOG,
				(errmsg("powerrank gpu service could not fork its engine process: %m")));
		next_start = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), 1000);
		service_set_state(SERVICE_RESTARTING, "fork failed");
		return;
	}
	if (pid == 0)
		service_engine_main(&current_config);	/* never returns */

	engine_pid = pid;
	engine_started = GetCurrentTimestamp();
	SpinLockAcquire(&service->mutex);
	service->engine_pid = pid;
	SpinLockRelease(&service->mutex);
	ereport(LOG,
			(errmsg("powerrank gpu service started its engine process (pid %d, engine %s)",
					(int) pid,
					current_config.kind == SERVICE_ENGINE_CPU_TEST ? "cpu-test" : "gpu")));
}

/* Describes how a child ended, for the log and the failed requests. */
static void
describe_exit(int status, char *out, size_t size)
{
	if (WIFSIGNALED(status))
		snprintf(out, size, "the GPU service's engine process (pid %d) was terminated by signal %d: %s",
				 (int) engine_pid, WTERMSIG(status), strsignal(WTERMSIG(status)));
	else if (WIFEXITED(status) && WEXITSTATUS(status) == ENGINE_EXIT_RESET)
		snprintf(out, size, "the GPU service's engine process (pid %d) restarted after an engine error",
				 (int) engine_pid);
	else
		snprintf(out, size, "the GPU service's engine process (pid %d) exited with code %d",
				 (int) engine_pid, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

/*
 * Reaps the engine process if it ended: fails its requests, records why, and schedules the next
 * one (at once, or after a back-off when it keeps dying right after starting; not at all when the
 * engine is unavailable, until a reload).
 */
static void
reap_engine_process(void)
{
	char		reason[SERVICE_MESSAGE_LEN];
	int			status;
	pid_t		pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
	{
		TimestampTz now = GetCurrentTimestamp();

		if (pid != engine_pid)
			continue;
		describe_exit(status, reason, sizeof(reason));
		/* state first, then the requests: a backend woken by the sweep sees the service down */
		clear_engine_status();
		SpinLockAcquire(&service->mutex);
		service->engine_pid = 0;
		SpinLockRelease(&service->mutex);
		engine_pid = 0;

		if (WIFEXITED(status) && WEXITSTATUS(status) == ENGINE_EXIT_UNAVAILABLE)
		{
			char		message[SERVICE_MESSAGE_LEN];

			pg_read_barrier();
			strlcpy(message, service->engine_error, sizeof(message));
			engine_unavailable = true;
			service_set_state(SERVICE_UNAVAILABLE, message);
			ereport(LOG,
					(errmsg("powerrank gpu service: no engine: %s", message),
					 errhint("Fix the setting or the device and reload the configuration (pg_reload_conf()).")));
		}
		else
		{
			SpinLockAcquire(&service->mutex);
			service->restarts++;
			SpinLockRelease(&service->mutex);
			service_set_state(SERVICE_RESTARTING, reason);
			ereport(LOG, (errmsg("%s", reason)));
			if (TimestampDifferenceExceeds(engine_started, now, 2000))
				quick_deaths = 0;
			else
				quick_deaths++;
			next_start = TimestampTzPlusMilliseconds(now, Min(quick_deaths, 10) * 500);
		}
		sweep_requests(reason);
	}
}

/* Stops the engine process (SIGKILL: it holds no lock) and waits for it. */
static void
stop_engine_process(const char *reason)
{
	int			status;

	if (engine_pid <= 0)
		return;
	kill(engine_pid, SIGKILL);
	while (waitpid(engine_pid, &status, 0) < 0 && errno == EINTR)
		;
	clear_engine_status();
	SpinLockAcquire(&service->mutex);
	service->engine_pid = 0;
	SpinLockRelease(&service->mutex);
	engine_pid = 0;
	service_set_state(SERVICE_RESTARTING, reason);
	sweep_requests(reason);
}

/* Exit hook of the worker: takes the engine process down with it and fails its requests. */
static void
worker_exit(int code, Datum arg)
{
	stop_engine_process("the GPU service stopped");
	SpinLockAcquire(&service->mutex);
	service->worker_pid = 0;
	service->state = SERVICE_DOWN;
	SpinLockRelease(&service->mutex);
}

/* True when a reload changed a setting the engine process was started with. */
static bool
config_changed(void)
{
	ServiceEngineConfig fresh;

	service_read_config(&fresh);
	return memcmp(&fresh, &current_config, sizeof(fresh)) != 0;
}

/* Entry point of the worker. */
void
powerrank_service_main(Datum arg)
{
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	pqsignal(SIGCHLD, handle_sigchld);
	BackgroundWorkerUnblockSignals();

	if (service == NULL)
		proc_exit(0);
	SpinLockAcquire(&service->mutex);
	service->worker_pid = MyProcPid;
	service->engine_pid = 0;
	service->worker_starts++;
	SpinLockRelease(&service->mutex);
	/* requests left by a previous worker (which died) can never complete */
	sweep_requests("the GPU service restarted");
	clear_engine_status();
	before_shmem_exit(worker_exit, (Datum) 0);

	for (;;)
	{
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			if (engine_unavailable || config_changed())
			{
				stop_engine_process("the GPU service's settings changed");
				engine_unavailable = false;
				next_start = 0;
			}
		}
		child_exited = false;
		reap_engine_process();
		if (engine_pid == 0 && !engine_unavailable && GetCurrentTimestamp() >= next_start)
			start_engine_process();
		if (engine_pid != 0 && pg_atomic_read_u32(&service->engine_ready) == 1 &&
			service->state != SERVICE_READY)
			service_set_state(SERVICE_READY, NULL);

		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 engine_pid != 0 && service->state != SERVICE_READY ? 20 : 500,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}
