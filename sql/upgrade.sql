-- The upgrade path.  A database that installed the released 0.1 (sql/powerrank--0.1.sql) and ran
-- ALTER EXTENSION powerrank UPDATE must equal one that ran CREATE EXTENSION powerrank: the
-- schema-only dumps of both are compared.  pg_dump --binary-upgrade writes out every member of
-- the extension (functions with their defaults, types, aggregates, tables, views, event triggers,
-- comments, privileges), where a plain dump has only CREATE EXTENSION.  Normalised: the oids,
-- relfilenodes and attribute versions pg_upgrade would keep (binary_upgrade_set_next_* lines,
-- config table oids, toast table oids), relfrozenxid / relminmxid, and pg_dump's random \restrict
-- key.  Then the data must rank exactly as before the update.
\getenv abs_builddir PG_ABS_BUILDDIR
\set home_db :DBNAME

-- The versions this build installs and the update path between them.
SELECT version, superuser, relocatable FROM pg_available_extension_versions
WHERE name = 'powerrank' ORDER BY version;
SELECT default_version FROM pg_available_extensions WHERE name = 'powerrank';
SELECT source, target, path FROM pg_extension_update_paths('powerrank')
WHERE path IS NOT NULL ORDER BY source, target;

CREATE DATABASE upg_updated TEMPLATE template0;
CREATE DATABASE upg_fresh TEMPLATE template0;

-- 0.1 with this library: creating its C functions resolves every symbol they name.
\c upg_updated
SET client_min_messages = warning;
CREATE EXTENSION powerrank VERSION '0.1';
RESET client_min_messages;
SELECT extversion FROM pg_extension WHERE extname = 'powerrank';
\i sql/include/upgrade_objects.sql

-- Scores and view rows under 0.1, kept in temporary tables; the temporary functions that compute
-- them run again after the update (neither is dumped).
CREATE FUNCTION pg_temp.upg_scores() RETURNS TABLE(what text, node bigint, score float8)
LANGUAGE sql AS $$
  SELECT 'pagerank table' AS what, node, score FROM pagerank('upg_edges', tolerance => 1e-12)
  UNION ALL
  SELECT 'pagerank weighted table', node, score
  FROM pagerank('upg_edges', weight_column => 'w', tolerance => 1e-12)
  UNION ALL
  SELECT 'pagerank ' || name, p.node, p.score
  FROM upg_graphs, pagerank(g, tolerance => 1e-12) p
  UNION ALL
  SELECT 'hits ' || name, h.node, h.authority FROM upg_graphs, hits(g, tolerance => 1e-12) h
  UNION ALL
  SELECT 'rwr table', node, score FROM rwr('upg_edges', 1, tolerance => 1e-12);
$$;
CREATE FUNCTION pg_temp.upg_view_rows()
RETURNS TABLE(what text, name text, node bigint, score float8) LANGUAGE sql AS $$
  SELECT 'pagerank_graph' AS what, name, node, score FROM upg_pagerank_graph
  UNION ALL SELECT 'rwr_graph_many', name || source, node, score FROM upg_rwr_graph_many;
$$;
CREATE TEMP TABLE scores_01 AS SELECT * FROM pg_temp.upg_scores();
CREATE TEMP TABLE views_01 AS SELECT * FROM pg_temp.upg_view_rows();

ALTER EXTENSION powerrank UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'powerrank';

-- The same scores after the update, bit for bit (node counts, sums and equality).
CREATE TEMP TABLE scores_02 AS SELECT * FROM pg_temp.upg_scores();
SELECT what, count(a.node) AS nodes_01, count(b.node) AS nodes_02,
       round(sum(a.score)::numeric, 9) AS sum_01,
       bool_and(a.score = b.score) AS same_scores
FROM scores_01 a FULL JOIN scores_02 b USING (what, node)
GROUP BY what ORDER BY what;
SELECT last_engine, service_rows, runs FROM upg_monitoring();
SELECT count(*) AS view_rows,
       count(*) FILTER (WHERE v.score = w.score) AS same_view_rows
FROM views_01 v FULL JOIN pg_temp.upg_view_rows() w USING (what, name, node);

-- A fresh installation of the current version with the same user objects.
\c upg_fresh
SET client_min_messages = warning;
CREATE EXTENSION powerrank;
RESET client_min_messages;
SELECT extversion FROM pg_extension WHERE extname = 'powerrank';
\i sql/include/upgrade_objects.sql

-- Both schemas, normalised, must be identical (diff prints any difference).
\! "$POWERRANK_BINDIR/pg_dump" --schema-only --binary-upgrade -d upg_updated -f "$PG_ABS_BUILDDIR/results/upgrade_updated.sql"; echo "pg_dump updated: exit $?"
\! "$POWERRANK_BINDIR/pg_dump" --schema-only --binary-upgrade -d upg_fresh -f "$PG_ABS_BUILDDIR/results/upgrade_fresh.sql"; echo "pg_dump fresh: exit $?"
\! cd "$PG_ABS_BUILDDIR/results" && for f in upgrade_updated upgrade_fresh; do sed -E -e '/^\\(un)?restrict /d' -e '/binary_upgrade_set_next_/d' -e "s/relfrozenxid = '[0-9]+', relminmxid = '[0-9]+'/relfrozenxid = 'X', relminmxid = 'X'/" -e "s/'\{[0-9,]*\}'::pg_catalog\.oid\[\]/'{oids}'::pg_catalog.oid[]/" -e "s/^WHERE oid = '[0-9]+';$/WHERE oid = 'X';/" $f.sql > $f.normalised; done; diff -u upgrade_fresh.normalised upgrade_updated.normalised && echo "schemas identical"

-- 0.2 describes every function and event trigger of the extension (\df+, \dy+).
\c upg_updated
SELECT d.classid::regclass AS catalog,
       count(*) FILTER (WHERE obj_description(d.objid, d.classid::regclass::name) IS NULL)
         AS undescribed
FROM pg_depend d
WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'powerrank')
  AND d.classid IN ('pg_proc'::regclass, 'pg_event_trigger'::regclass)
GROUP BY d.classid ORDER BY 1;

-- Privileges a role changed on the objects the update re-creates: the update says so, with
-- the statements that set them again; run after it, they restore what the role had.
CREATE DATABASE upg_privileges TEMPLATE template0;
\c upg_privileges
SET client_min_messages = warning;
CREATE EXTENSION powerrank VERSION '0.1';
RESET client_min_messages;
CREATE ROLE regress_upgrade_monitor;
REVOKE SELECT ON powerrank_progress FROM PUBLIC;
GRANT SELECT ON powerrank_progress TO regress_upgrade_monitor;
REVOKE EXECUTE ON FUNCTION powerrank_last_run() FROM PUBLIC;
REVOKE SELECT ON powerrank_cache FROM PUBLIC;
GRANT SELECT ON powerrank_cache TO regress_upgrade_monitor;
ALTER EXTENSION powerrank UPDATE TO '0.2';
SELECT has_table_privilege('public', 'powerrank_progress', 'SELECT') AS public_reads_progress,
       has_function_privilege('public', 'powerrank_last_run()', 'EXECUTE') AS public_runs_last_run,
       has_table_privilege('public', 'powerrank_cache', 'SELECT') AS public_reads_cache;
REVOKE ALL ON TABLE public.powerrank_cache FROM PUBLIC;
GRANT SELECT ON TABLE public.powerrank_cache TO regress_upgrade_monitor;
REVOKE ALL ON TABLE public.powerrank_progress FROM PUBLIC;
GRANT SELECT ON TABLE public.powerrank_progress TO regress_upgrade_monitor;
REVOKE ALL ON FUNCTION public.powerrank_last_run() FROM PUBLIC;
SELECT has_table_privilege('public', 'powerrank_progress', 'SELECT') AS public_reads_progress,
       has_table_privilege('regress_upgrade_monitor', 'powerrank_progress', 'SELECT') AS monitor_reads,
       has_function_privilege('public', 'powerrank_last_run()', 'EXECUTE') AS public_runs_last_run,
       has_table_privilege('public', 'powerrank_cache', 'SELECT') AS public_reads_cache,
       has_table_privilege('regress_upgrade_monitor', 'powerrank_cache', 'SELECT') AS monitor_reads_cache;
-- An update without changed privileges says nothing (the upg_updated database above).

\c :home_db
DROP DATABASE upg_updated WITH (FORCE);
DROP DATABASE upg_fresh WITH (FORCE);
DROP DATABASE upg_privileges WITH (FORCE);
DROP ROLE regress_upgrade_monitor;
