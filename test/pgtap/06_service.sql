-- pgTAP: without shared_preload_libraries = 'powerrank' (this cluster does not preload it) there
-- is no GPU service: device => 'auto' and 'cpu' run on the CPU, device => 'gpu' is an ERROR whose
-- hint says how to enable the service, the views say so.
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
