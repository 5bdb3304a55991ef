-- The monitoring views for ordinary roles: every role may read powerrank_cache, powerrank_service
-- and powerrank_progress (and call the functions behind them); powerrank_cache lists only the
-- tables the caller may read, powerrank_service hides last_error, unless the caller is a member of
-- pg_read_all_stats.  (The temporary instance preloads powerrank: cache and service exist.
-- Other roles' runs in powerrank_progress: specs/monitoring_progress.spec.)
CREATE ROLE regress_mon_user;
CREATE ROLE regress_mon_stats IN ROLE pg_read_all_stats;

-- Three tracked tables, cached by their owner: one the user may read, one it may not, one it may
-- read only the src and dst columns of (cached once unweighted, once with the weight w).
CREATE TABLE mon_readable(src bigint, dst bigint);
INSERT INTO mon_readable VALUES (1, 2), (2, 3), (3, 1);
CREATE TABLE mon_secret(src bigint, dst bigint);
INSERT INTO mon_secret VALUES (1, 2), (2, 3), (3, 4), (4, 1);
CREATE TABLE mon_columns(src bigint, dst bigint, w float8);
INSERT INTO mon_columns VALUES (1, 2, 1), (2, 1, 2), (2, 3, 1), (3, 4, 1), (4, 5, 1);
GRANT SELECT ON mon_readable TO regress_mon_user;
GRANT SELECT (src, dst) ON mon_columns TO regress_mon_user;
SELECT powerrank_cache_enable('mon_readable'), powerrank_cache_enable('mon_secret'),
       powerrank_cache_enable('mon_columns');
SELECT count(*) FROM pagerank('mon_readable');
SELECT count(*) FROM pagerank('mon_secret');
SELECT count(*) FROM pagerank('mon_columns');
SELECT count(*) FROM pagerank('mon_columns', weight_column => 'w');

-- The owner (a superuser) sees the four entries.
SELECT source, columns, nodes, edges FROM powerrank_cache
WHERE source::text LIKE 'mon\_%' ORDER BY source::text, columns;

-- An ordinary role reads every view, without a permission error.  powerrank_cache shows it the
-- table it may read and the unweighted graph of the table whose src and dst it may read; not
-- mon_secret, not the weighted graph (no SELECT on w), nothing of other tests' tables.  Called
-- directly, the function filters the same way.
SET ROLE regress_mon_user;
SELECT source, columns, nodes, edges FROM powerrank_cache ORDER BY source::text, columns;
SELECT source, columns, nodes, edges FROM powerrank_cache_entries() ORDER BY source::text, columns;
SELECT count(*) AS secret_entries FROM powerrank_cache_entries() WHERE source::text = 'mon_secret';
SELECT preloaded, state, worker_pid > 0 AS has_worker, engine_pid > 0 AS has_engine, engine,
       requests >= 0 AS has_requests
FROM powerrank_service;
SELECT count(*) AS runs_in_progress FROM powerrank_progress;
-- the cache counters (all databases, no names) are everyone's
SELECT enabled, entries >= 4 AS has_entries, bytes > 0 AS has_bytes FROM powerrank_cache_status();
RESET ROLE;

-- A member of pg_read_all_stats sees every entry, as the superuser does.
SET ROLE regress_mon_stats;
SELECT source, columns, nodes, edges FROM powerrank_cache
WHERE source::text LIKE 'mon\_%' ORDER BY source::text, columns;
RESET ROLE;

-- last_error: switching the service off gives it one; the superuser and the member of
-- pg_read_all_stats read it, the ordinary role gets NULL (the rest of the row is the same).
\i sql/include/service_wait.sql
ALTER SYSTEM SET powerrank.service_engine = 'off';
SELECT pg_reload_conf();
SELECT service_state_is('unavailable');
SELECT state, last_error FROM powerrank_service;
SET ROLE regress_mon_stats;
SELECT state, last_error FROM powerrank_service;
SET ROLE regress_mon_user;
SELECT state, last_error FROM powerrank_service;
SELECT state, last_error FROM powerrank_service_status();
RESET ROLE;
ALTER SYSTEM RESET powerrank.service_engine;
SELECT pg_reload_conf();
SELECT service_state_is('ready');

DROP TABLE mon_readable, mon_secret, mon_columns;
DROP ROLE regress_mon_user, regress_mon_stats;
