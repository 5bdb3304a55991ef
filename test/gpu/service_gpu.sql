-- The GPU service on a real GPU (not part of `make installcheck`, which runs the
-- service with the cpu-test engine).  Needs a server with shared_preload_libraries = 'powerrank',
-- powerrank.service_engine = 'gpu' (the default) and $libdir/powerrank_gpu.so installed
-- (make cuda && make install).  Run:  psql -X -f test/gpu/service_gpu.sql
-- Every check prints one row "PASS|FAIL <name> <detail>"; the last line counts them.
-- Run from the project root.  Variables: data_dir (default $PWD/test/data), engine_prefix (default 'gpu', e.g. 'cpu-test' to try
-- the script without a GPU), bound (L1 bound against the CPU engine, default 1e-9 for fp64).
\getenv pwd PWD
\if :{?data_dir} \else \set data_dir :pwd '/test/data' \endif
\if :{?engine_prefix} \else \set engine_prefix 'gpu' \endif
\if :{?bound} \else \set bound 1e-9 \endif
\set VERBOSITY terse
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS powerrank CASCADE;
CREATE EXTENSION powerrank;
CREATE TEMP TABLE result(ok boolean, name text, detail text);

-- wait for the service
DO $$ BEGIN
  FOR i IN 1..600 LOOP EXIT WHEN (SELECT state FROM powerrank_service) = 'ready'; PERFORM pg_sleep(0.05); END LOOP;
END $$;
INSERT INTO result SELECT state = 'ready', 'service ready', format('%s / %s / %s', state, device, last_error)
FROM powerrank_service;

DROP TABLE IF EXISTS gpu_slashdot, gpu_enron;
CREATE TABLE gpu_slashdot(src bigint, dst bigint);
\set cmd 'zcat ' :data_dir '/soc-slashdot0902.tsv.gz'
COPY gpu_slashdot FROM PROGRAM :'cmd';
CREATE TABLE gpu_enron(src bigint, dst bigint);
\set cmd 'zcat ' :data_dir '/email-enron.tsv.gz'
COPY gpu_enron FROM PROGRAM :'cmd';
ALTER TABLE gpu_enron ADD COLUMN w float8;
UPDATE gpu_enron SET w = (src + dst) % 5 + 1;

-- L1 distance between a GPU run and a CPU run of the same call (one score column).
CREATE FUNCTION pg_temp.l1(call text, score text DEFAULT 'score') RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE d float8; eng text;
BEGIN
  EXECUTE format('CREATE TEMP TABLE g AS SELECT * FROM %s', replace(call, '$DEV', '''gpu'''));
  SELECT engine INTO eng FROM powerrank_last_run();
  EXECUTE format('CREATE TEMP TABLE c AS SELECT * FROM %s', replace(call, '$DEV', '''cpu'''));
  EXECUTE format('SELECT sum(abs(g.%1$s - c.%1$s)) FROM g JOIN c USING (node)', score) INTO d;
  IF (SELECT count(*) FROM g) <> (SELECT count(*) FROM c) THEN d := 'infinity'; END IF;
  DROP TABLE g, c;
  PERFORM set_config('gpu.last_engine', eng, false);
  RETURN d;
END $$;
CREATE FUNCTION pg_temp.check(name text, call text, score text DEFAULT 'score') RETURNS void LANGUAGE plpgsql AS $$
DECLARE d float8 := pg_temp.l1(call, score);
BEGIN
  INSERT INTO result VALUES (d <= current_setting('gpu.bound')::float8
                             AND current_setting('gpu.last_engine') LIKE current_setting('gpu.prefix') || '%',
                             name, format('L1 %s, engine %s', d, current_setting('gpu.last_engine')));
END $$;
SELECT set_config('gpu.bound', :'bound', false), set_config('gpu.prefix', :'engine_prefix', false);

SELECT pg_temp.check('pagerank slashdot', $q$pagerank('gpu_slashdot', tolerance => 1e-12, device => $DEV)$q$);
SELECT pg_temp.check('personalized slashdot', $q$pagerank('gpu_slashdot', tolerance => 1e-12, personalization => ARRAY[1, 2, 3], device => $DEV)$q$);
SELECT pg_temp.check('weighted undirected enron', $q$pagerank('gpu_enron', weight_column => 'w', directed => false, tolerance => 1e-12, device => $DEV)$q$);
SELECT pg_temp.check('rwr slashdot', $q$rwr('gpu_slashdot', 1, tolerance => 1e-12, device => $DEV)$q$);
SELECT pg_temp.check('hits hubs slashdot', $q$hits('gpu_slashdot', tolerance => 1e-12, device => $DEV)$q$, 'hub');
SELECT pg_temp.check('hits authorities slashdot', $q$hits('gpu_slashdot', tolerance => 1e-12, device => $DEV)$q$, 'authority');
SELECT pg_temp.check('rankgraph pagerank enron', $q$pagerank((SELECT powerrank_graph(src, dst) FROM gpu_enron), tolerance => 1e-12, device => $DEV)$q$);

-- residency: a cached graph is uploaded once, then reused
SELECT powerrank_cache_enable('gpu_slashdot');
SELECT count(*) FROM pagerank('gpu_slashdot', device => 'cpu');
CREATE TEMP TABLE before AS SELECT uploads, reuses FROM powerrank_service;
SELECT count(*) FROM pagerank('gpu_slashdot', top_k => 10, device => 'gpu');
SELECT count(*) FROM pagerank('gpu_slashdot', top_k => 10, device => 'gpu');
INSERT INTO result SELECT s.uploads - b.uploads = 1 AND s.reuses - b.reuses = 1, 'resident graph reused',
  format('uploads +%s, reuses +%s, resident %s, device bytes %s', s.uploads - b.uploads, s.reuses - b.reuses,
         s.resident_graphs, s.device_bytes)
FROM powerrank_service s, before b;
INSERT INTO result SELECT gpu IS NOT NULL, 'cache view names the device', coalesce(gpu, 'NULL') FROM powerrank_cache;

-- cancel
SET statement_timeout = '2s';
DO $$ BEGIN
  PERFORM * FROM rwr('gpu_slashdot', 1, restart => 0.000001, tolerance => 1e-300, max_iterations => 2000000000, device => 'gpu');
  INSERT INTO result VALUES (false, 'statement_timeout stops a GPU run', 'not stopped');
EXCEPTION WHEN query_canceled THEN
  INSERT INTO result VALUES (true, 'statement_timeout stops a GPU run', 'cancelled');
END $$;
RESET statement_timeout;

-- faults: each one in 'auto' (NOTICE + CPU answer) and 'gpu' (ERROR), the service recovers
SET powerrank.gpu_min_edges = 0;
CREATE FUNCTION pg_temp.fault(kind text, dev text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE n bigint; eng text; why text;
BEGIN
  FOR i IN 1..600 LOOP EXIT WHEN (SELECT state FROM powerrank_service) = 'ready'; PERFORM pg_sleep(0.05); END LOOP;
  PERFORM powerrank_service_inject_fault(kind);
  BEGIN
    EXECUTE format('SELECT count(*) FROM pagerank(%L, device => %L)', 'gpu_slashdot', dev) INTO n;
    SELECT engine, fallback INTO eng, why FROM powerrank_last_run();
    INSERT INTO result VALUES (dev = 'auto' AND eng = 'cpu' AND why IS NOT NULL, format('fault %s, %s', kind, dev), why);
  EXCEPTION WHEN OTHERS THEN
    INSERT INTO result VALUES (dev = 'gpu', format('fault %s, %s', kind, dev), SQLERRM);
  END;
END $$;
SELECT pg_temp.fault(k, d) FROM unnest(ARRAY['error', 'oom', 'crash']) k, unnest(ARRAY['auto', 'gpu']) d;
DO $$ BEGIN
  FOR i IN 1..600 LOOP EXIT WHEN (SELECT state FROM powerrank_service) = 'ready'; PERFORM pg_sleep(0.05); END LOOP;
END $$;
INSERT INTO result SELECT state = 'ready' AND request_segments = 0, 'recovered, no leaked segment',
  format('state %s, restarts %s, failures %s, segments %s', state, restarts, failures, request_segments)
FROM powerrank_service;
SELECT pg_temp.check('pagerank after faults', $q$pagerank('gpu_slashdot', tolerance => 1e-12, device => $DEV)$q$);

-- The service's build (powerrank.gpu_build_rows = 0: every tracked table): the graph built on the
-- GPU and cached, against a build in the backend of an untracked copy — same nodes and edges,
-- scores within the bound; ids spread over int64 (the sorted id map) and a self-loop included.
DROP TABLE IF EXISTS gpu_build, gpu_build_copy;
CREATE TABLE gpu_build AS SELECT src, dst FROM gpu_slashdot;
INSERT INTO gpu_build VALUES (-5, 9223372036854775807), (77, 77), (9223372036854775807, 1);
CREATE TABLE gpu_build_copy AS SELECT * FROM gpu_build;
SELECT powerrank_cache_enable('gpu_build');
SET powerrank.gpu_build_rows = 0;
CREATE FUNCTION pg_temp.check_build(name text, directed boolean) RETURNS void LANGUAGE plpgsql AS $$
DECLARE b0 bigint; b1 bigint; d float8; n_g bigint; n_c bigint; e_g bigint; e_c bigint; eng text;
BEGIN
  SELECT builds INTO b0 FROM powerrank_service;
  CREATE TEMP TABLE g AS SELECT * FROM pagerank('gpu_build', directed => directed, tolerance => 1e-12, device => 'gpu');
  SELECT edges, engine INTO e_g, eng FROM powerrank_last_run();
  SELECT builds INTO b1 FROM powerrank_service;
  CREATE TEMP TABLE c AS SELECT * FROM pagerank('gpu_build_copy', directed => directed, tolerance => 1e-12, device => 'cpu');
  SELECT edges INTO e_c FROM powerrank_last_run();
  SELECT count(*), sum(abs(g.score - c.score)) INTO n_g, d FROM g JOIN c USING (node);
  SELECT count(*) INTO n_c FROM c;
  INSERT INTO result VALUES (b1 = b0 + 1 AND n_g = n_c AND e_g = e_c AND d <= current_setting('gpu.bound')::float8,
                             name, format('built %s, nodes %s / %s, edges %s / %s, L1 %s, engine %s',
                                          b1 - b0, n_g, n_c, e_g, e_c, d, eng));
  DROP TABLE g, c;
END $$;
SELECT pg_temp.check_build('gpu build directed', true);
SELECT pg_temp.check_build('gpu build undirected', false);
RESET powerrank.gpu_build_rows;

SELECT CASE WHEN ok THEN 'PASS' ELSE 'FAIL' END AS result, name, detail FROM result;
SELECT count(*) FILTER (WHERE ok) AS passed, count(*) FILTER (WHERE NOT ok) AS failed FROM result;
DROP TABLE gpu_slashdot, gpu_enron;
