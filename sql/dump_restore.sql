-- A whole database that uses powerrank survives pg_dump / pg_restore (custom format) and pg_dump /
-- psql (plain format), with this server's binaries (POWERRANK_BINDIR): edge tables, rankgraph
-- columns, views over the ranking functions, and tables tracked for the graph cache (their
-- powerrank_track trigger, enabled ALWAYS).  The change log powerrank_change_log is not a
-- configuration table and is not dumped: its rows name tables by oid and transactions by id, which
-- mean nothing (or another table, another transaction) in the restored database.  Instead the
-- restore's ALTER TABLE ... ENABLE ALWAYS TRIGGER gives each tracked table its first rebase row.
-- A data-only restore with --disable-triggers leaves the trigger enabled, but not ALWAYS:
-- powerrank_cache and a NOTICE say so, with the command that serves the table again.
-- Then pg_cron jobs: cron.job is pg_cron's configuration table, dumped with the extension, and
-- pg_cron can only be created in cron.database_name's database, so the dump of that database is
-- restored into a database of the same name in a second cluster.
\set home_db :DBNAME

CREATE DATABASE dr_source TEMPLATE template0;
CREATE DATABASE dr_plain TEMPLATE template0;
CREATE DATABASE dr_custom TEMPLATE template0;
\c dr_source
SET client_min_messages = warning;
CREATE EXTENSION powerrank;
RESET client_min_messages;
CREATE SCHEMA graphs;
CREATE TABLE graphs.follows(src bigint, dst bigint, w float8);
INSERT INTO graphs.follows SELECT i, (i * 37) % 200 + 1, (i % 3) + 1 FROM generate_series(1, 200) i;
INSERT INTO graphs.follows SELECT i, (i * 11 + 3) % 200 + 1, 0.5 FROM generate_series(1, 200, 4) i;
SELECT powerrank_cache_enable('graphs.follows') AS tracking_installed;
CREATE TABLE plain_edges(a bigint, b bigint);
INSERT INTO plain_edges SELECT i, (i * 7) % 50 + 1 FROM generate_series(1, 50) i;
CREATE TABLE snapshots(name text PRIMARY KEY, g rankgraph NOT NULL);
INSERT INTO snapshots SELECT 'follows', powerrank_graph(src, dst, w) FROM graphs.follows;
INSERT INTO snapshots SELECT 'plain_edges', powerrank_graph(a, b) FROM plain_edges;
CREATE TABLE snapshot_texts AS SELECT name, md5(g::text) AS text_md5 FROM snapshots;
CREATE VIEW top_follows AS SELECT * FROM pagerank('graphs.follows', weight_column => 'w', top_k => 5);
-- The reference scores travel with the dump, and so does the function that computes them again.
CREATE FUNCTION current_scores() RETURNS TABLE(what text, node bigint, score float8)
LANGUAGE sql AS $$
  SELECT 'follows' AS what, node, score
  FROM pagerank('graphs.follows', weight_column => 'w', tolerance => 1e-12)
  UNION ALL
  SELECT 'plain_edges', node, score
  FROM pagerank('plain_edges', src_column => 'a', dst_column => 'b', tolerance => 1e-12)
  UNION ALL
  SELECT 'snapshot ' || name, p.node, p.score FROM snapshots, pagerank(g, tolerance => 1e-12) p
  UNION ALL
  SELECT 'hits authority', node, authority FROM hits('graphs.follows', tolerance => 1e-12)
  UNION ALL
  SELECT 'rwr from 1', node, score FROM rwr('graphs.follows', 1, tolerance => 1e-12);
$$;
CREATE TABLE reference AS SELECT * FROM current_scores();
SELECT what, count(*) AS nodes FROM reference GROUP BY what ORDER BY what;
-- dr_source serves graphs.follows from the cache (hits and rwr above built its graph).
SELECT count(*) FROM pagerank('graphs.follows');
SELECT cache_hit FROM powerrank_last_run();

\setenv PGDATABASE dr_source
\! "$POWERRANK_BINDIR/pg_dump" -f "$PG_ABS_BUILDDIR/results/dump_restore.sql"; echo "pg_dump plain: exit $?"
\! "$POWERRANK_BINDIR/pg_dump" -Fc -f "$PG_ABS_BUILDDIR/results/dump_restore.custom"; echo "pg_dump custom: exit $?"
\! "$POWERRANK_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -d dr_plain -f "$PG_ABS_BUILDDIR/results/dump_restore.sql" > /dev/null; echo "psql restore: exit $?"
\! "$POWERRANK_BINDIR/pg_restore" --exit-on-error -d dr_custom "$PG_ABS_BUILDDIR/results/dump_restore.custom"; echo "pg_restore: exit $?"
-- The dump has the trigger (and its ENABLE ALWAYS) but no row of the change log.
\! grep -c -E '^(CREATE TRIGGER powerrank_track |ALTER TABLE graphs\.follows ENABLE ALWAYS TRIGGER powerrank_track;)' "$PG_ABS_BUILDDIR/results/dump_restore.sql"
\! grep -c 'powerrank_change_log' "$PG_ABS_BUILDDIR/results/dump_restore.sql"

\c dr_plain
\i sql/include/dump_restore_check.sql
\c dr_custom
\i sql/include/dump_restore_check.sql

-- A data-only restore with --disable-triggers (into a database restored schema-only) wraps each
-- table's data in ALTER TABLE ... DISABLE TRIGGER ALL and ENABLE TRIGGER ALL, which leaves
-- powerrank_track enabled for origin sessions only, not ALWAYS: the table is ranked right but not
-- served from the cache.  powerrank_cache shows it, the first ranking says so in a NOTICE, and the
-- command of its hint makes the table served again.
CREATE DATABASE dr_data TEMPLATE template0;
\! "$POWERRANK_BINDIR/pg_restore" --exit-on-error --schema-only -d dr_data "$PG_ABS_BUILDDIR/results/dump_restore.custom"; echo "pg_restore schema: exit $?"
\! "$POWERRANK_BINDIR/pg_restore" --exit-on-error --data-only --disable-triggers -d dr_data "$PG_ABS_BUILDDIR/results/dump_restore.custom"; echo "pg_restore data: exit $?"
\c dr_data
SELECT tgrelid::regclass AS "table", tgname, tgenabled FROM pg_trigger WHERE NOT tgisinternal;
SELECT source, tracking, nodes FROM powerrank_cache;
SELECT count(*) FROM pagerank('graphs.follows');
SELECT cache_hit FROM powerrank_last_run();
SELECT count(*) FROM pagerank('graphs.follows');
ALTER TABLE graphs.follows ENABLE ALWAYS TRIGGER powerrank_track;
SELECT count(*) FROM pagerank('graphs.follows');
SELECT cache_hit FROM powerrank_last_run();
SELECT count(*) FROM pagerank('graphs.follows');
SELECT cache_hit FROM powerrank_last_run();
SELECT source, tracking, nodes FROM powerrank_cache;
SELECT what, count(*) AS nodes, count(p.score) FILTER (WHERE p.score = r.score) AS same_scores
FROM reference r LEFT JOIN pagerank('graphs.follows', weight_column => 'w', tolerance => 1e-12) p
  USING (node)
WHERE what = 'follows' GROUP BY what;

-- pg_cron jobs that rank: scheduled in the regression database (cron.database_name), never due
-- during the test.
\c :home_db
\setenv PGDATABASE :home_db
SET client_min_messages = warning;
CREATE EXTENSION pg_cron;
RESET client_min_messages;
CREATE TABLE dr_cron_edges(src bigint, dst bigint);
INSERT INTO dr_cron_edges SELECT i, (i * 13) % 100 + 1 FROM generate_series(1, 100) i;
SELECT powerrank_cache_enable('dr_cron_edges') AS tracking_installed;
CREATE TABLE dr_cron_top(node bigint, score float8);
SELECT cron.schedule('dr-nightly-top10', '17 3 * * *',
  $$INSERT INTO dr_cron_top SELECT * FROM pagerank('dr_cron_edges', top_k => 10)$$) > 0 AS scheduled;
SELECT cron.schedule('dr-weekly-compact', '0 4 * * 0',
  $$SELECT powerrank_cache_compact()$$) > 0 AS scheduled;
-- Only the test's own objects of this database are dumped: both extensions (with cron.job, their
-- configuration table) and the two tables.
\! "$POWERRANK_BINDIR/pg_dump" -Fc -e powerrank -e pg_cron -t 'public.dr_cron_*' -f "$PG_ABS_BUILDDIR/results/dump_restore_cron.custom"; echo "pg_dump custom: exit $?"
-- The second cluster: pg_cron preloaded, cron.database_name the regression database's name.
\! D="$PG_ABS_BUILDDIR/results/dump_restore_cluster"; S="/tmp/powerrank_dr_$PGPORT"; rm -rf "$D" "$S"; mkdir -p "$S" && "$POWERRANK_BINDIR/initdb" -D "$D" -A trust --no-sync > "$D.log" 2>&1 && "$POWERRANK_BINDIR/pg_ctl" -D "$D" -l "$D.log" -w -o "-k $S -p $PGPORT -c listen_addresses='' -c shared_preload_libraries=pg_cron -c cron.database_name=$PGDATABASE -c cron.use_background_workers=on" start > /dev/null; echo "second cluster: exit $?"
\! S="/tmp/powerrank_dr_$PGPORT"; "$POWERRANK_BINDIR/createdb" -h "$S" "$PGDATABASE" && "$POWERRANK_BINDIR/pg_restore" --exit-on-error -h "$S" -d "$PGDATABASE" "$PG_ABS_BUILDDIR/results/dump_restore_cron.custom"; echo "pg_restore: exit $?"
\! S="/tmp/powerrank_dr_$PGPORT"; "$POWERRANK_BINDIR/psql" -X -h "$S" -d "$PGDATABASE" -c "SELECT jobname, schedule, command, database = current_database() AS this_database, username = current_user AS same_user, active FROM cron.job ORDER BY jobid"
-- The restored job's command ranks the restored table as a direct call does, and the restored
-- table is tracked (its trigger enabled ALWAYS, a rebase row from the restore).
\! S="/tmp/powerrank_dr_$PGPORT"; "$POWERRANK_BINDIR/psql" -X -q -h "$S" -d "$PGDATABASE" -c "SELECT command FROM cron.job WHERE jobname = 'dr-nightly-top10'" -t -A | "$POWERRANK_BINDIR/psql" -X -q -h "$S" -d "$PGDATABASE" -v ON_ERROR_STOP=1; echo "job command: exit $?"
\! S="/tmp/powerrank_dr_$PGPORT"; "$POWERRANK_BINDIR/psql" -X -h "$S" -d "$PGDATABASE" -c "SELECT count(*) AS nodes, count(*) FILTER (WHERE t.score = p.score) AS same_scores FROM dr_cron_top t FULL JOIN pagerank('dr_cron_edges', top_k => 10) p USING (node)" -c "SELECT tgrelid::regclass AS table, tgname, tgenabled FROM pg_trigger WHERE NOT tgisinternal" -c "SELECT relid::regclass AS table, rebase FROM powerrank_change_log"
\! D="$PG_ABS_BUILDDIR/results/dump_restore_cluster"; "$POWERRANK_BINDIR/pg_ctl" -D "$D" -m fast -w stop > /dev/null; echo "second cluster stopped: exit $?"; rm -rf "$D" "/tmp/powerrank_dr_$PGPORT"

SELECT cron.unschedule('dr-nightly-top10') AND cron.unschedule('dr-weekly-compact') AS unscheduled;
DROP EXTENSION pg_cron;
DROP TABLE dr_cron_edges, dr_cron_top;
DROP DATABASE dr_source WITH (FORCE);
DROP DATABASE dr_plain WITH (FORCE);
DROP DATABASE dr_custom WITH (FORCE);
DROP DATABASE dr_data WITH (FORCE);
