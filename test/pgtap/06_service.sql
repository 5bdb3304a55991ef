-- pgTAP: the GPU service's SQL face, on the server as it is.
-- Without shared_preload_libraries = 'powerrank' there is no GPU service: device => 'auto' and 'cpu'
-- run on the CPU, device => 'gpu' is an ERROR whose hint says how to enable the service, the views
-- say so.  With it preloaded the view shows the service's state, a small graph runs on the CPU under
-- 'auto' (below powerrank.gpu_min_edges) and equals 'cpu', and device => 'gpu' either runs or, when
-- the service has no device, is an ERROR whose hint says what to fix.  This suite never arms a fault
-- in a running service.
SELECT (SELECT preloaded FROM powerrank_service) AS preloaded \gset
\if :preloaded
SELECT plan(8);

CREATE TABLE tap_service_edges(src bigint, dst bigint);
INSERT INTO tap_service_edges SELECT g % 50, (g * 7) % 53 FROM generate_series(1, 400) g;

SELECT is((SELECT preloaded FROM powerrank_service), true, 'powerrank_service: preloaded');
SELECT ok((SELECT state FROM powerrank_service) IN ('starting', 'ready', 'unavailable', 'restarting'),
          'powerrank_service: a known state');
SELECT is((SELECT count(*) FROM powerrank_progress WHERE pid = pg_backend_pid()), 0::bigint,
          'powerrank_progress: no run of this session');
SELECT results_eq($$SELECT node, score FROM pagerank('tap_service_edges') ORDER BY node$$,
                  $$SELECT node, score FROM pagerank('tap_service_edges', device => 'cpu') ORDER BY node$$,
                  'device => auto runs and equals device => cpu');
SELECT is((SELECT engine FROM powerrank_last_run()), 'cpu', 'a graph below powerrank.gpu_min_edges ran on the CPU');

-- device => 'gpu': runs when the service has a device, else an ERROR (55000) whose hint says what to fix
CREATE FUNCTION pg_temp.gpu_outcome() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  h text;
BEGIN
  PERFORM * FROM pagerank('tap_service_edges', device => 'gpu');
  RETURN 'ran';
EXCEPTION WHEN object_not_in_prerequisite_state THEN
  GET STACKED DIAGNOSTICS h = PG_EXCEPTION_HINT;
  RETURN CASE WHEN h <> '' THEN 'error with a hint' ELSE 'error without a hint' END;
END $$;
SELECT is(pg_temp.gpu_outcome(),
          CASE WHEN (SELECT state FROM powerrank_service) = 'ready' THEN 'ran' ELSE 'error with a hint' END,
          'device => gpu runs on a ready service, else an ERROR with a hint');
SELECT throws_ok($$SELECT * FROM pagerank('tap_service_edges', device => 'fpga')$$, '22023',
                 'unknown device "fpga"', 'unknown device: ERROR');
SELECT has_function('powerrank_service_inject_fault', ARRAY['text'],
                    'powerrank_service_inject_fault exists (not called here: it would arm a fault in the running service)');

SELECT * FROM finish();
DROP TABLE tap_service_edges;
\else
BEGIN;
SELECT plan(16);

CREATE TABLE tap_service_edges(src bigint, dst bigint);
INSERT INTO tap_service_edges SELECT g % 50, (g * 7) % 53 FROM generate_series(1, 400) g;

SELECT is((SELECT preloaded FROM powerrank_service), false, 'powerrank_service: not preloaded');
SELECT is((SELECT state FROM powerrank_service), 'not preloaded', 'powerrank_service: state');
SELECT is((SELECT count(*) FROM powerrank_progress), 0::bigint, 'powerrank_progress is empty');
SELECT is(current_setting('powerrank.gpu_min_edges'), '400000', 'powerrank.gpu_min_edges default');
SELECT is(current_setting('powerrank.service_engine'), 'gpu', 'powerrank.service_engine default');

SELECT throws_ok($$SELECT * FROM pagerank('tap_service_edges', device => 'gpu')$$, '55000',
                 'device => ''gpu'' needs the powerrank GPU service, which is not running',
                 'pagerank device => gpu: ERROR without preload');
SELECT throws_ok($$SELECT * FROM hits((SELECT powerrank_graph(src, dst) FROM tap_service_edges), device => 'gpu')$$,
                 '55000', NULL, 'hits(rankgraph) device => gpu: ERROR without preload');
SELECT throws_ok($$SELECT * FROM rwr('tap_service_edges', ARRAY[1, 2], device => 'gpu')$$,
                 '55000', NULL, 'rwr device => gpu: ERROR without preload');

-- the hint names shared_preload_libraries
CREATE FUNCTION pg_temp.gpu_hint() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  h text;
BEGIN
  PERFORM * FROM pagerank('tap_service_edges', device => 'gpu');
  RETURN NULL;
EXCEPTION WHEN object_not_in_prerequisite_state THEN
  GET STACKED DIAGNOSTICS h = PG_EXCEPTION_HINT;
  RETURN h;
END $$;
SELECT matches(pg_temp.gpu_hint(), 'shared_preload_libraries', 'the hint says how to enable the service');

SELECT results_eq($$SELECT node, score FROM pagerank('tap_service_edges') ORDER BY node$$,
                  $$SELECT node, score FROM pagerank('tap_service_edges', device => 'cpu') ORDER BY node$$,
                  'device => auto runs and equals device => cpu');
SELECT is((SELECT engine FROM powerrank_last_run()), 'cpu', 'auto ran on the CPU');
SELECT is((SELECT fallback FROM powerrank_last_run()), NULL, 'no fallback reason without preload');
SELECT throws_ok($$SELECT * FROM pagerank('tap_service_edges', device => 'fpga')$$, '22023',
                 'unknown device "fpga"', 'unknown device: ERROR');
SELECT throws_ok($$SELECT powerrank_service_inject_fault('crash')$$, '55000', NULL,
                 'fault injection needs the service');

-- powerrank_estimate says the same without running: the CPU for 'auto', an ERROR for 'gpu'
SELECT is((SELECT row(engine, reason)::text FROM powerrank_estimate('tap_service_edges')),
          '(cpu,"no GPU service: powerrank is not in shared_preload_libraries")',
          'powerrank_estimate: auto runs on the CPU without preload');
SELECT is((SELECT row(engine, reason)::text FROM powerrank_estimate('tap_service_edges', device => 'gpu')),
          '(,"ERROR: device => ''gpu'' needs the powerrank GPU service, which is not running")',
          'powerrank_estimate: device => gpu would fail without preload');

SELECT * FROM finish();
ROLLBACK;
\endif
