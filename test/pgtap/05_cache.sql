-- pgTAP: the graph cache, on the server as it is.
-- Without shared_preload_libraries = 'powerrank' the graph cache is off and everything still works:
-- tracking can be installed (ready for a restart with preload; a NOTICE says so), a writing
-- transaction adds one row of its own to the change log (no lock shared with other writers), every
-- call builds its graph (cache_hit false) and equals a fresh build, the powerrank_cache view is empty.
-- With it preloaded (and powerrank.cache_size > 0) a tracked table's second call is a cache hit that
-- equals a fresh build, powerrank_cache lists it and powerrank_cache_drop evicts it.
-- The steps both cases share are written once; without preload the test runs in a transaction
-- rolled back at the end (the change log rows it looks at are the enabling transaction's).
SELECT preloaded, NOT preloaded AS not_preloaded FROM powerrank_service \gset
\if :preloaded
SELECT plan(10);
\else
BEGIN;
SELECT plan(13);
\endif

CREATE TABLE tap_cache_edges(src bigint, dst bigint);
INSERT INTO tap_cache_edges SELECT g % 40, (g * 7) % 41 FROM generate_series(1, 300) g;

SELECT is((SELECT enabled FROM powerrank_cache_status()),
          :'preloaded'::boolean AND current_setting('powerrank.cache_size') <> '0',
          'cache status: enabled when preloaded and powerrank.cache_size > 0');
SELECT is(powerrank_cache_enable('tap_cache_edges'), true, 'tracking installs');
SELECT is((SELECT tgenabled::text FROM pg_trigger WHERE tgrelid = 'tap_cache_edges'::regclass),
          'A', 'the tracking trigger is enabled ALWAYS');
\if :not_preloaded
SELECT is((SELECT count(*) FROM powerrank_change_log
           WHERE relid = 'tap_cache_edges'::regclass AND rebase), 1::bigint,
          'the table has a rebase row in the change log');
SAVEPOINT writes;
INSERT INTO tap_cache_edges VALUES (1, 2);
DELETE FROM tap_cache_edges WHERE src = 1 AND dst = 2;
SELECT is((SELECT count(*) FROM powerrank_change_log WHERE relid = 'tap_cache_edges'::regclass),
          1::bigint, 'writes of the transaction that enabled tracking add no row of their own');
ROLLBACK TO SAVEPOINT writes;
SELECT is((SELECT count(*) FROM powerrank_change_log WHERE relid = 'tap_cache_edges'::regclass
             AND change = pg_current_xact_id()), 1::bigint,
          'one row of this transaction, its rebase row');
\endif

SELECT is((SELECT count(*) FROM pagerank('tap_cache_edges')), 41::bigint, 'first call works');
SELECT is((SELECT cache_hit FROM powerrank_last_run()), false, 'first call: built');
SELECT results_eq(
  $$SELECT node, score FROM pagerank('tap_cache_edges') ORDER BY node$$,
  $$SELECT node, score FROM pagerank((SELECT powerrank_graph(src, dst) FROM tap_cache_edges))
    ORDER BY node$$,
  'second call equals a fresh build');
SELECT is((SELECT count(*) FROM pagerank('tap_cache_edges')), 41::bigint, 'third call works');
SELECT is((SELECT cache_hit FROM powerrank_last_run()), (SELECT enabled FROM powerrank_cache_status()),
          'third call: a cache hit when the cache is on');

\if :preloaded
SELECT is((SELECT count(*) FROM powerrank_cache WHERE source = 'tap_cache_edges'::regclass) > 0,
          (SELECT enabled FROM powerrank_cache_status()), 'powerrank_cache lists the table''s graph');
SELECT cmp_ok(powerrank_cache_drop('tap_cache_edges'), '>=', 0, 'powerrank_cache_drop evicts it');

SELECT * FROM finish();
DROP TABLE tap_cache_edges;
\else
SELECT is((SELECT count(*) FROM powerrank_cache), 0::bigint, 'the powerrank_cache view is empty');
SELECT is(powerrank_cache_drop(), 0, 'powerrank_cache_drop drops nothing');

SELECT * FROM finish();
ROLLBACK;
\endif
