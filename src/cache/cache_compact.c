/*
 * cache_compact.c — compaction of the graph cache's change log.
 *
 * Every transaction that modifies a tracked table adds a row to powerrank_change_log, and a
 * reader of the cache reads the table's rows; compaction keeps them few.  It replaces all the
 * rows of a table that the compacting transaction sees by one rebase row of its own (the
 * arguments in cache_tracking.c's file comment hold across it: its rebase row tells the snapshots
 * that see it from those that do not), and deletes the rows of dropped tables.  The rebase row
 * records the snapshot the rows were deleted through (its xmax and the transactions in progress),
 * from which a reader knows which older rows it may still see, and reads only those: the rows
 * compactions deleted cost a reader nothing, even while vacuum cannot remove them.  Compactions
 * take a SHARE UPDATE EXCLUSIVE lock on the log, so they run one at a time; writers and readers
 * of the log do not conflict with it.
 *
 * A dynamic background worker compacts the log of one database when asked: by a backend that has
 * logged COMPACT_REQUEST_WRITES changes since it last asked, by a reader that saw many rows of
 * one table (or too many rebase rows for a key), or by DROP TABLE of a tracked table.  It
 * compacts the tables with at least COMPACT_MIN_ROWS rows or GRAPH_CACHE_MAX_REBASES rebase rows
 * (each compaction moves the table's key on, so readers rebuild once).
 * powerrank_cache_compact() compacts every table now, in the caller's transaction.  The changed rows
 * of live tables (powerrank_change_rows, cache_capture.c) of the writers whose log rows a compaction
 * deletes go with them, and those of dropped tables.
 *
 * The background worker's compaction keeps the cached graphs of live tables bases to patch: its
 * transaction changes nothing else, it deletes a table's change rows only below a horizon (the
 * largest snapshot xmin of the table's cached bases, graph_cache_base_horizons), and its rebase row
 * records that horizon as kept_from unless it deletes a rebase row from there up that records none
 * (an ALTER TABLE's, say).  A reader then patches a base across it when kept_from is no later than
 * the base snapshot's xmin (graph_cache_acquire_base; doc/DESIGN.md, "A compaction that keeps the
 * chain", proves it).  A compaction in a user's transaction deletes all the change rows it sees of
 * the tables it compacts and records no kept_from: it ends the chain.
 */
#include "cache/graph_cache.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "utils/snapmgr.h"
#include "utils/lsyscache.h"
#include "utils/array.h"
#include "utils/xid8.h"

PG_FUNCTION_INFO_V1(powerrank_cache_compact);
PGDLLEXPORT void powerrank_compactor_main(Datum arg);

/* Changes a backend logs before it asks for a compaction. */
#define COMPACT_REQUEST_WRITES 1000

/* Seconds between two requests of one backend. */
#define COMPACT_REQUEST_INTERVAL_S 1.0

/* Rows a table's log needs before the worker compacts it. */
#define COMPACT_MIN_ROWS 64

static int	writes_since_request = 0;
static TimestampTz last_request = 0;

/*
 * Counts changes this backend logged; asks for a compaction once there are
 * COMPACT_REQUEST_WRITES of them.
 */
void
cache_compaction_note_writes(int writes)
{
	writes_since_request += writes;
	if (writes_since_request >= COMPACT_REQUEST_WRITES)
		cache_compaction_request();
}

/*
 * Starts a background worker that compacts this database's change log (at most once per
 * COMPACT_REQUEST_INTERVAL_S per backend; nothing on a standby).  A failure to start one (no free
 * worker slot) is only logged: the next request tries again.
 */
void
cache_compaction_request(void)
{
	BackgroundWorker worker;
	BackgroundWorkerHandle *handle;
	TimestampTz now = GetCurrentTimestamp();

	if (RecoveryInProgress() ||
		!TimestampDifferenceExceeds(last_request, now, (int) (COMPACT_REQUEST_INTERVAL_S * 1000)))
		return;
	last_request = now;
	writes_since_request = 0;
	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	strlcpy(worker.bgw_library_name, "powerrank", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, "powerrank_compactor_main", BGW_MAXLEN);
	strlcpy(worker.bgw_name, "powerrank change log compaction", BGW_MAXLEN);
	strlcpy(worker.bgw_type, "powerrank compaction", BGW_MAXLEN);
	worker.bgw_main_arg = ObjectIdGetDatum(MyDatabaseId);
	if (!RegisterDynamicBackgroundWorker(&worker, &handle))
		elog(DEBUG1, "powerrank: no background worker slot for the change log compaction");
}

/*
 * Compacts the change log of this database (see the file comment): the tables with more than one
 * row and at least min_rows rows or GRAPH_CACHE_MAX_REBASES rebase rows (too many for a key), and
 * the rows of dropped tables, after any compaction in progress (the lock's queue also makes an
 * autovacuum of the log give way).  keep_bases: the caller's transaction does nothing else (the
 * background worker), so the compaction may keep the cached bases usable (see the file comment).
 * Returns the rows removed.  Runs as the log's owner.
 */
int64
cache_compact_log(int64 min_rows, bool keep_bases)
{
	Oid			schema = cache_extension_schema();
	Oid			log_relid;
	char	   *log;
	CacheSavedUser saved;
	int64		removed = 0;
	bool		records_snapshot;
	Oid			rows_table;
	char	   *rows = NULL;	/* the change rows' table (NULL: none) */
	Oid			types[2] = {INT8OID, INT8OID};
	Datum		values[2] = {Int64GetDatum(min_rows), Int64GetDatum(GRAPH_CACHE_MAX_REBASES)};
	int			ret;

	if (!OidIsValid(schema))
		return 0;
	log_relid = get_relname_relid("powerrank_change_log", schema);
	if (!OidIsValid(log_relid))
		return 0;
	LockRelationOid(log_relid, ShareUpdateExclusiveLock);
	log = cache_log_name(schema);
	/* a snapshot taken after the lock: it sees the compaction before this one */
	PushActiveSnapshot(GetTransactionSnapshot());

	cache_become_log_owner(schema, &saved);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	ret = SPI_execute(psprintf("DELETE FROM %s l WHERE NOT EXISTS "
							   "(SELECT FROM pg_catalog.pg_class c WHERE c.oid = l.relid)", log),
					  false, 0);
	if (ret != SPI_OK_DELETE)
		elog(ERROR, "could not compact the change log: %s", SPI_result_code_string(ret));
	removed += (int64) SPI_processed;
	rows_table = get_relname_relid("powerrank_change_rows", schema);
	if (OidIsValid(rows_table))
	{
		rows = cache_qualified_name(schema, "powerrank_change_rows");
		ret = SPI_execute(psprintf("DELETE FROM %s r WHERE NOT EXISTS "
								   "(SELECT FROM pg_catalog.pg_class c WHERE c.oid = r.relid)", rows),
						  false, 0);
		if (ret != SPI_OK_DELETE)
			elog(ERROR, "could not compact the change rows: %s", SPI_result_code_string(ret));
	}
	/*
	 * The caller's own rows stay (they become its rebase row): this is a rebase of its own.  The
	 * rebase row records the statement's snapshot, the one the deletion saw the rows through
	 * (cache_tracking.c's file comment says why readers need it); a log of version 0.1 has no
	 * columns for it.
	 */
	records_snapshot = cache_log_records_snapshots(log_relid) &&
		cache_log_column(log_relid, "kept_from", XID8OID) != InvalidAttrNumber;
	if (!records_snapshot)
		ret = SPI_execute_with_args(psprintf("WITH gone AS (DELETE FROM %s WHERE relid IN "
											 "(SELECT relid FROM %s GROUP BY relid HAVING count(*) > 1 AND "
											 "(count(*) >= $1 OR count(*) FILTER (WHERE rebase) >= $2)) "
											 "AND change <> pg_catalog.pg_current_xact_id() RETURNING relid, change), "
											 "added AS (INSERT INTO %s AS l (relid, change, rebase) "
											 "SELECT g.relid, pg_catalog.pg_current_xact_id(), true "
											 "FROM (SELECT DISTINCT relid FROM gone) g "
											 "ON CONFLICT (relid, change) DO UPDATE SET rebase = true RETURNING l.relid) "
											 "SELECT (SELECT count(*) FROM gone) - (SELECT count(*) FROM added)",
											 log, log, log),
									2, types, values, NULL, false, 0);
	else
	{
		/*
		 * Each table's horizon: with keep_bases, the largest snapshot xmin of its cached bases, at
		 * most this snapshot's xmax (every row it deletes lies below that); otherwise that xmax.  The change rows below it go —
		 * those of the writers whose log rows go now, and those an earlier compaction kept — and
		 * the rest stay.  With keep_bases (the background worker, whose transaction does nothing
		 * else), the rebase row records the horizon as kept_from when no rebase row from the
		 * horizon up goes other than a compaction that recorded one (its kept_from then counts
		 * instead, when larger): a base whose snapshot's xmin is at least kept_from stays one
		 * across this compaction (doc/DESIGN.md, "A compaction that keeps the chain").
		 */
		Oid		   *relids;
		uint64	   *xmins;
		int			n = keep_bases ? graph_cache_base_horizons(MyDatabaseId, &relids, &xmins) : 0;
		Datum	   *relid_datums = palloc(sizeof(Datum) * Max(n, 1));
		Datum	   *xmin_datums = palloc(sizeof(Datum) * Max(n, 1));
		Oid			all_types[5] = {INT8OID, INT8OID, OIDARRAYOID, XID8ARRAYOID, BOOLOID};
		Datum		all_values[5];

		for (int i = 0; i < n; i++)
		{
			relid_datums[i] = ObjectIdGetDatum(relids[i]);
			xmin_datums[i] = FullTransactionIdGetDatum(FullTransactionIdFromU64(xmins[i]));
		}
		all_values[0] = values[0];
		all_values[1] = values[1];
		all_values[2] = PointerGetDatum(construct_array(relid_datums, n, OIDOID, sizeof(Oid),
														true, TYPALIGN_INT));
		all_values[3] = PointerGetDatum(construct_array(xmin_datums, n, XID8OID,
														sizeof(FullTransactionId),
														FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
		all_values[4] = BoolGetDatum(keep_bases);
		ret = SPI_execute_with_args(psprintf("WITH gone AS (DELETE FROM %s WHERE relid IN "
											 "(SELECT relid FROM %s GROUP BY relid HAVING count(*) > 1 AND "
											 "(count(*) >= $1 OR count(*) FILTER (WHERE rebase) >= $2)) "
											 "AND change <> pg_catalog.pg_current_xact_id() "
											 "RETURNING relid, change, rebase, kept_from), "
											 "snap AS (SELECT pg_catalog.pg_snapshot_xmax(pg_catalog.pg_current_snapshot()) AS xmax), "
											 "horizon AS (SELECT g.relid, LEAST(b.xmin, (SELECT xmax FROM snap)) AS h "
											 "FROM (SELECT DISTINCT relid FROM gone) g "
											 "LEFT JOIN ROWS FROM (pg_catalog.unnest($3::pg_catalog.oid[]), pg_catalog.unnest($4::pg_catalog.xid8[])) AS b(relid, xmin) "
											 "ON b.relid = g.relid), %s"
											 "kept AS (SELECT h.relid, CASE WHEN $5 AND NOT EXISTS "
											 "(SELECT FROM gone g WHERE g.relid = h.relid AND g.rebase AND g.change >= h.h "
											 "AND g.kept_from IS NULL) "
											 "THEN GREATEST(h.h, (SELECT g.kept_from FROM gone g WHERE g.relid = h.relid "
											 "AND g.rebase AND g.change >= h.h ORDER BY g.kept_from DESC NULLS LAST LIMIT 1)) "
											 "END AS kept_from FROM horizon h), "
											 "added AS (INSERT INTO %s AS l (relid, change, rebase, snapshot_xmax, snapshot_xip, kept_from) "
											 "SELECT k.relid, pg_catalog.pg_current_xact_id(), true, (SELECT xmax FROM snap), "
											 "ARRAY(SELECT pg_catalog.pg_snapshot_xip(pg_catalog.pg_current_snapshot())), k.kept_from "
											 "FROM kept k "
											 "ON CONFLICT (relid, change) DO UPDATE SET rebase = true, "
											 "snapshot_xmax = EXCLUDED.snapshot_xmax, snapshot_xip = EXCLUDED.snapshot_xip, "
											 "kept_from = NULL RETURNING l.relid) "
											 "SELECT (SELECT count(*) FROM gone) - (SELECT count(*) FROM added)",
											 log, log,
											 rows == NULL ? "" :
											 psprintf("gone_rows AS (DELETE FROM %s r USING horizon h "
													  "WHERE r.relid = h.relid AND r.change < h.h "
													  "AND r.change <> pg_catalog.pg_current_xact_id()), ", rows),
											 log),
									5, all_types, all_values, NULL, false, 0);
	}
	if (ret != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not compact the change log: %s", SPI_result_code_string(ret));
	{
		bool		isnull;

		removed += DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1,
											   &isnull));
	}
	SPI_finish();
	cache_restore_user(&saved);
	PopActiveSnapshot();
	return removed;
}

/*
 * Entry point of the compaction worker: connects to the database named by arg, compacts its log
 * in one transaction and exits.
 */
void
powerrank_compactor_main(Datum arg)
{
	int64		removed;

	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(DatumGetObjectId(arg), InvalidOid, 0);
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	pgstat_report_activity(STATE_RUNNING, "compacting the powerrank change log");
	removed = cache_compact_log(COMPACT_MIN_ROWS, true);
	CommitTransactionCommand();
	pgstat_report_activity(STATE_IDLE, NULL);
	elog(DEBUG1, "powerrank: change log compacted, %lld rows removed", (long long) removed);
	proc_exit(0);
}

/*
 * powerrank_cache_compact(): compacts the change log of every tracked table of this database now,
 * in the caller's transaction; returns the rows removed.
 */
Datum
powerrank_cache_compact(PG_FUNCTION_ARGS)
{
	if (RecoveryInProgress() || XactReadOnly)
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot compact the powerrank change log in a read-only transaction"),
				 errdetail("A compaction deletes and inserts rows of the change log."),
				 errhint("Run it in a read-write transaction on the primary server; a standby's log is the primary's, compacted there.")));
	PG_RETURN_INT64(cache_compact_log(1, false));
}
