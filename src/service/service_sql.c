/*
 * service_sql.c — the SQL face of the GPU service: the powerrank_service view (state, processes,
 * engine, device, counters), the powerrank_progress view (runs in progress, on the CPU or on the
 * service) and powerrank_service_inject_fault (superuser-only fault injection for tests).
 */
#include "service/service.h"

#include "catalog/pg_authid.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/spin.h"
#include "utils/acl.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(powerrank_service_status);
PG_FUNCTION_INFO_V1(powerrank_progress_entries);
PG_FUNCTION_INFO_V1(powerrank_service_inject_fault);

#define SERVICE_STATUS_COLUMNS 21
#define PROGRESS_COLUMNS 12

/*
 * powerrank_service_status(): one row describing the GPU service (preloaded false and the rest
 * NULL without shared_preload_libraries).  State, processes, engine, device and counters are shown
 * to every role; last_error, whose text may name tables, files or libraries, only to members of
 * pg_read_all_stats (and superusers), as pg_stat_activity shows other roles' queries: NULL for the
 * others.
 */
Datum
powerrank_service_status(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum		values[SERVICE_STATUS_COLUMNS];
	bool		nulls[SERVICE_STATUS_COLUMNS];
	ServiceState state;
	int			worker_pid;
	int			engine_pid;
	int64		restarts;
	char		last_error[SERVICE_MESSAGE_LEN];
	bool		ready;
	int			i;

	InitMaterializedSRF(fcinfo, 0);
	memset(nulls, 0, sizeof(nulls));
	values[0] = BoolGetDatum(service != NULL);
	if (service == NULL)
	{
		for (i = 1; i < SERVICE_STATUS_COLUMNS; i++)
			nulls[i] = true;
		values[1] = CStringGetTextDatum("not preloaded");
		nulls[1] = false;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		return (Datum) 0;
	}

	state = service_read_state(last_error, sizeof(last_error));
	SpinLockAcquire(&service->mutex);
	worker_pid = service->worker_pid;
	engine_pid = service->engine_pid;
	restarts = service->restarts;
	SpinLockRelease(&service->mutex);
	ready = pg_atomic_read_u32(&service->engine_ready) == 1;
	pg_read_barrier();

	values[1] = CStringGetTextDatum(service_state_name(state));
	values[2] = Int32GetDatum(worker_pid);
	nulls[2] = worker_pid == 0;
	values[3] = Int32GetDatum(engine_pid);
	nulls[3] = engine_pid == 0;
	if (ready)
	{
		values[4] = CStringGetTextDatum(service->engine_name);
		values[5] = CStringGetTextDatum(service->device_name);
	}
	else
		nulls[4] = nulls[5] = true;
	values[6] = Int64GetDatum((int64) pg_atomic_read_u64(&service->served));
	values[7] = Int64GetDatum((int64) (pg_atomic_read_u64(&service->failures) +
									   pg_atomic_read_u64(&service->swept)));
	values[8] = Int64GetDatum(restarts);
	values[9] = Int32GetDatum((int32) pg_atomic_read_u32(&service->resident));
	values[10] = Int64GetDatum((int64) pg_atomic_read_u64(&service->device_bytes));
	values[11] = Int64GetDatum((int64) pg_atomic_read_u64(&service->uploads));
	values[12] = Int64GetDatum((int64) pg_atomic_read_u64(&service->reuses));
	values[13] = Int64GetDatum((int64) pg_atomic_read_u64(&service->evictions));
	values[14] = Int32GetDatum((int32) pg_atomic_read_u32(&service->request_segments));
	if (last_error[0] != '\0' && has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS))
		values[15] = CStringGetTextDatum(last_error);
	else
		nulls[15] = true;
	values[16] = Int64GetDatum((int64) pg_atomic_read_u64(&service->batches));
	values[17] = Int64GetDatum((int64) pg_atomic_read_u64(&service->batched_requests));
	values[18] = Int64GetDatum((int64) pg_atomic_read_u64(&service->batch_iterations));
	values[19] = Float8GetDatum((double) pg_atomic_read_u64(&service->batch_microseconds) / 1000.0);
	values[20] = Int64GetDatum((int64) pg_atomic_read_u64(&service->builds));
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	return (Datum) 0;
}

/*
 * powerrank_progress_entries(): one row per ranking run in progress (the rows of the
 * powerrank_progress view), with or without preload (see progress.c).  Like pg_stat_activity and
 * pg_stat_progress_*, every role sees every run's pid and algorithm, and the rest of runs of roles
 * whose privileges it has (its own); the rest of other roles' runs is NULL unless it is a member
 * of pg_read_all_stats.
 */
Datum
powerrank_progress_entries(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bool		read_all = has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);
	TimestampTz now = GetCurrentTimestamp();
	int			count;
	int			i;

	InitMaterializedSRF(fcinfo, 0);
	count = progress_entry_count();
	for (i = 0; i < count; i++)
	{
		ProgressEntry *shared = progress_entry(i);
		ProgressEntry entry;
		Datum		values[PROGRESS_COLUMNS];
		bool		nulls[PROGRESS_COLUMNS] = {0};
		bool		loading;
		int			pid;

		pid = shared->pid;
		if (pid == 0)
			continue;
		pg_read_barrier();
		memcpy(&entry, shared, sizeof(entry));
		pg_read_barrier();
		if (shared->pid != pid)
			continue;			/* ended (or restarted) while copied */

		values[0] = Int32GetDatum(pid);
		values[1] = CStringGetTextDatum(entry.algorithm);
		if (!read_all && !has_privs_of_role(GetUserId(), entry.userid))
		{
			for (int c = 2; c < PROGRESS_COLUMNS; c++)
				nulls[c] = true;
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
			continue;
		}
		/* while the rows are read and built, no engine is chosen and the graph is not known */
		loading = entry.phase == PHASE_READING || entry.phase == PHASE_BUILDING;
		values[2] = CStringGetTextDatum(entry.on_service ? "service" : "cpu");
		nulls[2] = loading && !entry.on_service;
		values[3] = CStringGetTextDatum(progress_phase_name(entry.phase));
		values[4] = Int32GetDatum(entry.iteration);
		values[5] = Float8GetDatum(entry.residual);
		nulls[5] = entry.iteration == 0;
		values[6] = IntervalPGetDatum(DatumGetIntervalP(
											  DirectFunctionCall2(timestamp_mi,
																  TimestampTzGetDatum(now),
																  TimestampTzGetDatum(entry.started))));
		values[7] = Int64GetDatum(entry.nodes);
		values[8] = Int64GetDatum(entry.edges);
		values[9] = Int32GetDatum(entry.columns);
		nulls[7] = nulls[8] = nulls[9] = loading;
		values[10] = Int64GetDatum(entry.rows_read);
		nulls[10] = entry.rows_read < 0;
		values[11] = Int64GetDatum(entry.rows_estimated);
		nulls[11] = entry.rows_estimated < 0;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * powerrank_service_inject_fault(fault text): makes the engine process fail its next request:
 * 'error' (an engine error; the process then restarts), 'oom' (out of device memory), 'crash'
 * (the process kills itself with SIGKILL), 'gather' (not a failure: the next RWR request that
 * may be batched waits for companions until none arrives for 200 ms, so that a test makes a batch
 * of known size), 'none' (clears a pending fault).  Superuser only.
 */
Datum
powerrank_service_inject_fault(PG_FUNCTION_ARGS)
{
	char	   *fault = text_to_cstring(PG_GETARG_TEXT_PP(0));
	ServiceFault value;

	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("only a superuser may inject faults into the powerrank GPU service")));
	if (service == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the powerrank GPU service is not running"),
				 errhint("Add powerrank to shared_preload_libraries and restart the server.")));
	if (strcmp(fault, "none") == 0)
		value = FAULT_NONE;
	else if (strcmp(fault, "error") == 0)
		value = FAULT_ENGINE_ERROR;
	else if (strcmp(fault, "oom") == 0)
		value = FAULT_OUT_OF_MEMORY;
	else if (strcmp(fault, "crash") == 0)
		value = FAULT_CRASH;
	else if (strcmp(fault, "gather") == 0)
		value = FAULT_GATHER;
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown fault \"%s\"", fault),
				 errhint("Use 'error', 'oom', 'crash', 'gather' or 'none'.")));
	pg_atomic_write_u32(&service->fault, value);
	PG_RETURN_VOID();
}
