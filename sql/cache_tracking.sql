-- The change log behind the graph cache (the temporary instance preloads powerrank): a cached
-- graph can never be served for content other than the one it was built from — not after DROP
-- EXTENSION and CREATE EXTENSION, not after a compaction — and dead entries do not linger.
-- Concurrent writers are in specs/cache_writers.spec.

-- cache_check(t): ranks t by name (cache or not), then compares bit for bit with a fresh build
-- through the powerrank_graph aggregate, which never uses the cache.
\i sql/include/cache_check.sql

-- DROP EXTENSION and CREATE EXTENSION (in a database of its own: other tests' rankgraph columns
-- stay untouched): the graph cached before is never served again (a new log's rows are other
-- transactions'), dropping the extension evicts the database's graphs, and so does DROP DATABASE.
SELECT current_database() AS regress_db \gset
CREATE DATABASE regress_reinstall;
\c regress_reinstall
SET client_min_messages = warning;
CREATE EXTENSION powerrank;
RESET client_min_messages;
CREATE TABLE st(src int8, dst int8);
SELECT powerrank_cache_enable('st');
INSERT INTO st VALUES (1,2),(2,3),(3,1);
SELECT count(*) FROM pagerank('st');
SELECT count(*) FROM pagerank('st');
SELECT cache_hit FROM powerrank_last_run();
SELECT count(*) AS cached FROM powerrank_cache WHERE source = 'st'::regclass;
SELECT entries AS entries_before FROM powerrank_cache_status() \gset
DROP EXTENSION powerrank CASCADE;
SELECT tgname FROM pg_trigger WHERE tgrelid = 'st'::regclass;
INSERT INTO st VALUES (3,4),(4,5),(5,6);
CREATE EXTENSION powerrank;
SELECT :entries_before - entries AS evicted, retired FROM powerrank_cache_status();
SELECT powerrank_cache_enable('st');
INSERT INTO st VALUES (6,7);
SELECT count(*) FROM pagerank('st');
SELECT nodes, edges, cache_hit FROM powerrank_last_run();
SELECT count(*) FROM pagerank('st');
SELECT nodes, edges, cache_hit FROM powerrank_last_run();
SELECT entries AS entries_before FROM powerrank_cache_status() \gset
\c :regress_db
DROP DATABASE regress_reinstall;
SELECT :entries_before - entries AS evicted, retired FROM powerrank_cache_status();

-- VACUUM FULL and CLUSTER give the table new storage: the entry of the old storage goes as soon
-- as the new graph is cached, so one entry stays per table and columns.
CREATE TABLE vf(src bigint, dst bigint);
INSERT INTO vf SELECT g % 50, (g * 7) % 53 FROM generate_series(1, 400) g;
SELECT powerrank_cache_enable('vf');
SELECT * FROM cache_check('vf');
SELECT * FROM cache_check('vf');
VACUUM FULL vf;
SELECT * FROM cache_check('vf');
VACUUM FULL vf;
SELECT * FROM cache_check('vf');
SELECT * FROM cache_check('vf');
SELECT count(*) AS entries FROM powerrank_cache WHERE source = 'vf'::regclass;
SELECT retired FROM powerrank_cache_status();

-- One row per writing transaction, whatever its statements; rebase rows for powerrank_cache_enable
-- and ALTER TABLE; a rolled-back subtransaction's row goes with it and the next statement logs
-- the change again.
SELECT count(*) FILTER (WHERE rebase) AS rebases, count(*) FILTER (WHERE NOT rebase) AS changes
FROM powerrank_change_log WHERE relid = 'vf'::regclass;
BEGIN;
INSERT INTO vf VALUES (1, 2);
UPDATE vf SET dst = dst WHERE src = 1;
DELETE FROM vf WHERE src = 1 AND dst = 2;
SAVEPOINT s;
INSERT INTO vf VALUES (1, 2);
ROLLBACK TO SAVEPOINT s;
SELECT count(*) AS rows_of_this_transaction FROM powerrank_change_log
WHERE relid = 'vf'::regclass AND change = pg_current_xact_id();
COMMIT;
BEGIN;
SAVEPOINT s;
INSERT INTO vf VALUES (1, 2);
ROLLBACK TO SAVEPOINT s;
DELETE FROM vf WHERE src = 1 AND dst = 2;
SELECT count(*) AS rows_of_this_transaction FROM powerrank_change_log
WHERE relid = 'vf'::regclass AND change = pg_current_xact_id();
COMMIT;
ALTER TABLE vf ALTER COLUMN dst SET STATISTICS 100;
SELECT count(*) FILTER (WHERE rebase) AS rebases, count(*) FILTER (WHERE NOT rebase) AS changes
FROM powerrank_change_log WHERE relid = 'vf'::regclass;
SELECT * FROM cache_check('vf');
SELECT * FROM cache_check('vf');

-- Compaction replaces the table's rows by one rebase row: the graph is rebuilt once (the key
-- moved on), then served again, always equal to a fresh build.
INSERT INTO vf SELECT g, g + 1 FROM generate_series(1, 5) g;
INSERT INTO vf SELECT g, g + 2 FROM generate_series(1, 5) g;
SELECT * FROM cache_check('vf');
SELECT * FROM cache_check('vf');
SELECT powerrank_cache_compact() > 0 AS removed_rows;
SELECT count(*) FILTER (WHERE rebase) AS rebases, count(*) FILTER (WHERE NOT rebase) AS changes
FROM powerrank_change_log WHERE relid = 'vf'::regclass;
-- The rebase row records the compaction's snapshot: its xmax (the compaction's own transaction id
-- came later) and the transactions then in progress, whose rows it could not see.
SELECT snapshot_xmax <= change AS xmax_recorded, snapshot_xip IS NOT NULL AS in_progress_recorded
FROM powerrank_change_log WHERE relid = 'vf'::regclass;
SELECT * FROM cache_check('vf');
SELECT * FROM cache_check('vf');
SELECT count(*) AS entries FROM powerrank_cache WHERE source = 'vf'::regclass;
INSERT INTO vf VALUES (500, 1);
SELECT * FROM cache_check('vf');
SELECT * FROM cache_check('vf');
-- The background compaction: a backend that logged 1,000 changes starts a worker that compacts
-- the tables with 64 rows or more; the rankings stay fresh across it.
CREATE TABLE bg(src bigint, dst bigint);
SELECT powerrank_cache_enable('bg');
DO $$
BEGIN
  FOR i IN 1..1000 LOOP
    INSERT INTO bg VALUES (i % 97, (i * 7) % 101);
    COMMIT;
  END LOOP;
END $$;
DO $$
BEGIN
  FOR i IN 1..300 LOOP
    EXIT WHEN (SELECT count(*) FROM powerrank_change_log WHERE relid = 'bg'::regclass) < 64;
    PERFORM pg_sleep(0.1);
  END LOOP;
END $$;
SELECT count(*) < 64 AS compacted, count(*) FILTER (WHERE rebase) AS rebases
FROM powerrank_change_log WHERE relid = 'bg'::regclass;
SELECT * FROM cache_check('bg');
SELECT * FROM cache_check('bg');

-- The state of the tracking trigger.  DISABLE TRIGGER ALL then ENABLE TRIGGER ALL (what
-- pg_restore --data-only --disable-triggers runs) leave powerrank_track enabled for origin sessions
-- only, not ALWAYS: the table is built per call (the answers stay right).  powerrank_cache shows the
-- state; the first ranking of the table in a session says why in a NOTICE, with the command that
-- makes it served again, and that command does.
CREATE TABLE "Track State"(src bigint, dst bigint);
INSERT INTO "Track State" SELECT g % 40, (g * 3) % 41 FROM generate_series(1, 300) g;
SELECT powerrank_cache_enable('"Track State"');
SELECT * FROM cache_check('"Track State"');
SELECT * FROM cache_check('"Track State"');
SELECT source, tracking, nodes FROM powerrank_cache WHERE source = '"Track State"'::regclass;
ALTER TABLE "Track State" DISABLE TRIGGER ALL;
SELECT source, tracking, nodes FROM powerrank_cache WHERE source = '"Track State"'::regclass;
INSERT INTO "Track State" VALUES (100, 1);  -- not recorded in the change log
ALTER TABLE "Track State" ENABLE TRIGGER ALL;
SELECT tgname, tgenabled FROM pg_trigger WHERE tgrelid = '"Track State"'::regclass;
SELECT source, tracking, nodes FROM powerrank_cache WHERE source = '"Track State"'::regclass;
SELECT count(*) FROM pagerank('"Track State"');
SELECT cache_hit FROM powerrank_last_run();
SELECT count(*) FROM pagerank('"Track State"');  -- once per table and session: no NOTICE
SELECT * FROM cache_check('"Track State"');
ALTER TABLE public."Track State" ENABLE ALWAYS TRIGGER powerrank_track;
SELECT source, tracking, nodes FROM powerrank_cache WHERE source = '"Track State"'::regclass;
SELECT * FROM cache_check('"Track State"');
SELECT * FROM cache_check('"Track State"');
SELECT source, tracking, nodes FROM powerrank_cache WHERE source = '"Track State"'::regclass;

-- A tracked table that has no cached graph is listed while its trigger keeps it from being
-- served (graph columns NULL), to the roles that may read a column of it; a table never tracked
-- is not listed and gives no NOTICE.
CREATE TABLE ts2(src bigint, dst bigint);
INSERT INTO ts2 SELECT g % 30, (g * 7) % 31 FROM generate_series(1, 200) g;
CREATE TABLE ts_untracked(src bigint, dst bigint);
INSERT INTO ts_untracked SELECT * FROM ts2;
SELECT powerrank_cache_enable('ts2');
SELECT source, tracking, nodes FROM powerrank_cache WHERE source = 'ts2'::regclass;
ALTER TABLE ts2 DISABLE TRIGGER powerrank_track;
SELECT source, tracking, columns, directed, nodes, edges, bytes, built_at, last_used, hits, base,
       changes, in_use, gpu
FROM powerrank_cache WHERE source = 'ts2'::regclass;
CREATE ROLE regress_tracking_reader;
SET ROLE regress_tracking_reader;
SELECT count(*) AS rows_seen FROM powerrank_cache WHERE source = 'ts2'::regclass;
RESET ROLE;
GRANT SELECT (dst) ON ts2 TO regress_tracking_reader;
SET ROLE regress_tracking_reader;
SELECT source, tracking FROM powerrank_cache WHERE source = 'ts2'::regclass;
RESET ROLE;
REVOKE SELECT (dst) ON ts2 FROM regress_tracking_reader;
DROP ROLE regress_tracking_reader;
SELECT count(*) FROM pagerank('ts2');
SELECT cache_hit FROM powerrank_last_run();
SELECT count(*) FROM pagerank('ts_untracked');
SELECT count(*) AS rows_of_untracked FROM powerrank_cache WHERE source = 'ts_untracked'::regclass;
-- A powerrank_track that is not the tracking trigger (here: INSERT only) is 'altered'; in a new
-- session the first ranking says so, and powerrank_cache_enable installs the trigger again.
DROP TRIGGER powerrank_track ON ts2;
CREATE TRIGGER powerrank_track AFTER INSERT ON ts2
  FOR EACH STATEMENT EXECUTE FUNCTION powerrank_track_changes();
ALTER TABLE ts2 ENABLE ALWAYS TRIGGER powerrank_track;
SELECT source, tracking FROM powerrank_cache WHERE source = 'ts2'::regclass;
\c :regress_db
SELECT count(*) FROM pagerank('ts2');
SELECT cache_hit FROM powerrank_last_run();
SELECT powerrank_cache_enable('public.ts2');
SELECT * FROM cache_check('ts2');
SELECT * FROM cache_check('ts2');
SELECT source, tracking, nodes FROM powerrank_cache WHERE source = 'ts2'::regclass;
-- A dropped trigger: the table's graph is 'missing' its tracking and is not served; no NOTICE
-- (dropping the trigger is how tracking is stopped).
DROP TRIGGER powerrank_track ON "Track State";
SELECT source, tracking, nodes FROM powerrank_cache WHERE source = '"Track State"'::regclass;
SELECT * FROM cache_check('"Track State"');
DROP TABLE "Track State", ts2, ts_untracked;

-- The change log says when tables changed: only the extension's owner reads it.
CREATE ROLE regress_log_reader;
SET ROLE regress_log_reader;
SELECT count(*) FROM powerrank_change_log;
SELECT powerrank_cache_compact();
RESET ROLE;
DROP ROLE regress_log_reader;

SELECT powerrank_cache_drop();
DROP TABLE vf, bg;
DROP FUNCTION cache_check(text);
