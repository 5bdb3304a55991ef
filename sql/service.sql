-- The GPU service, run with the cpu-test engine (test/regress.conf: powerrank.service_engine =
-- 'cpu-test'), so that the whole protocol runs without a GPU: requests through shared memory,
-- results back, residency, cancel, faults, kill -9 of the engine process, restart, fallback.
-- The service runs the same CPU engine and driver as the backend, so its results must be the
-- same bits as device => 'cpu' (compared value by value below, never with constants).  The
-- warm start (powerrank.warm_start) changes the service's starting vector of RWR and
-- personalized PageRank: off here, and tested on its own after the comparisons.  A CPU run on a
-- cached graph rebuilt after a small change would start from the previous graph's scores
-- (powerrank.warm_start_auto, sql/warm_start_auto.sql), which the service does not: off too.
SET powerrank.warm_start = off;
SET powerrank.warm_start_auto = off;
\i sql/include/data_dir.sql

\i sql/include/service_wait.sql

-- Kills the engine process with SIGKILL from outside (a shell, as an operator or the OOM killer
-- would), after delay seconds, in the background; returns its pid.
CREATE FUNCTION kill_engine(delay float8) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  p int;
BEGIN
  SELECT engine_pid INTO p FROM powerrank_service;
  EXECUTE format('COPY (SELECT 1) TO PROGRAM %L',
                 -- read COPY's row first, so the shell never exits with input unread (EPIPE)
                 format('cat >/dev/null; (sleep %s; kill -9 %s) </dev/null >/dev/null 2>&1 &',
                        delay, p));
  RETURN p;
END $$;

-- The message and detail of the ERROR a statement raises (NULL, NULL when it raises none).
CREATE FUNCTION error_of(statement text, OUT message text, OUT detail text)
LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE statement;
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS message = MESSAGE_TEXT, detail = PG_EXCEPTION_DETAIL;
END $$;

SELECT service_ready();
SELECT preloaded, state, engine, worker_pid IS NOT NULL AS worker, engine_pid IS NOT NULL AS engine_process,
       engine_pid <> worker_pid AS distinct_processes
FROM powerrank_service;
-- the engine process is the worker's child (the postmaster does not know it), not a backend
SELECT split_part(pg_read_file('/proc/' || engine_pid || '/stat'), ' ', 4)::int = worker_pid
         AS child_of_worker,
       (SELECT count(*) FROM pg_stat_activity WHERE pid = engine_pid) AS in_pg_stat_activity
FROM powerrank_service;

-- The real graph: email-Enron (36692 nodes, 183831 rows, each undirected edge once as
-- smaller id -> larger id), with a weight.
CREATE TABLE svc_enron(src bigint, dst bigint);
\set cmd 'zcat ' :data_dir '/email-enron.tsv.gz'
COPY svc_enron FROM PROGRAM :'cmd';
ALTER TABLE svc_enron ADD COLUMN w float8;
UPDATE svc_enron SET w = (src + dst) % 5 + 1;
-- read as directed (smaller -> larger id: many dangling nodes); enron itself is ranked undirected
CREATE TABLE svc_enron_dir AS SELECT src, dst, w FROM svc_enron;

-- Service runs against in-backend runs, every algorithm and form, uncached (the graph travels in
-- the request segment).  identical = every score equal to the CPU run's.
CREATE TEMP TABLE checks(name text, identical boolean, engine text, fallback text);
CREATE FUNCTION check_same(name text, gpu_sql text, cpu_sql text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  same boolean;
  eng text;
  why text;
BEGIN
  EXECUTE format('CREATE TEMP TABLE g AS %s', gpu_sql);
  SELECT engine, regexp_replace(fallback, 'pid [0-9]+', 'pid N') INTO eng, why
  FROM powerrank_last_run();
  EXECUTE format('CREATE TEMP TABLE c AS %s', cpu_sql);
  SELECT (SELECT count(*) FROM g) = (SELECT count(*) FROM c)
     AND NOT EXISTS (SELECT * FROM g EXCEPT SELECT * FROM c) INTO same;
  INSERT INTO checks VALUES (name, same, eng, why);
  DROP TABLE g, c;
END $$;

SELECT check_same('pagerank', $$SELECT * FROM pagerank('svc_enron_dir', tolerance => 1e-12, device => 'gpu')$$,
                              $$SELECT * FROM pagerank('svc_enron_dir', tolerance => 1e-12, device => 'cpu')$$);
SELECT check_same('pagerank undirected weighted',
  $$SELECT * FROM pagerank('svc_enron', weight_column => 'w', directed => false, device => 'gpu')$$,
  $$SELECT * FROM pagerank('svc_enron', weight_column => 'w', directed => false, device => 'cpu')$$);
SELECT check_same('personalized', $$SELECT * FROM pagerank('svc_enron_dir', personalization => ARRAY[1, 5, 100], device => 'gpu')$$,
                                  $$SELECT * FROM pagerank('svc_enron_dir', personalization => ARRAY[1, 5, 100], device => 'cpu')$$);
SELECT check_same('top_k', $$SELECT * FROM pagerank('svc_enron_dir', top_k => 10, device => 'gpu')$$,
                           $$SELECT * FROM pagerank('svc_enron_dir', top_k => 10, device => 'cpu')$$);
SELECT check_same('hits', $$SELECT * FROM hits('svc_enron_dir', tolerance => 1e-10, device => 'gpu')$$,
                          $$SELECT * FROM hits('svc_enron_dir', tolerance => 1e-10, device => 'cpu')$$);
SELECT check_same('rwr', $$SELECT * FROM rwr('svc_enron_dir', source => 1, device => 'gpu')$$,
                         $$SELECT * FROM rwr('svc_enron_dir', source => 1, device => 'cpu')$$);
SELECT check_same('rwr many', $$SELECT * FROM rwr('svc_enron_dir', ARRAY[1, 2, 3, 500], top_k => 20, device => 'gpu')$$,
                              $$SELECT * FROM rwr('svc_enron_dir', ARRAY[1, 2, 3, 500], top_k => 20, device => 'cpu')$$);
SELECT check_same('rankgraph pagerank',
  $$SELECT * FROM pagerank((SELECT powerrank_graph(src, dst, w) FROM svc_enron_dir), device => 'gpu')$$,
  $$SELECT * FROM pagerank((SELECT powerrank_graph(src, dst, w) FROM svc_enron_dir), device => 'cpu')$$);
SELECT check_same('rankgraph hits',
  $$SELECT * FROM hits((SELECT powerrank_graph(src, dst) FROM svc_enron_dir), device => 'gpu')$$,
  $$SELECT * FROM hits((SELECT powerrank_graph(src, dst) FROM svc_enron_dir), device => 'cpu')$$);
SELECT check_same('rankgraph rwr',
  $$SELECT * FROM rwr((SELECT powerrank_graph(src, dst) FROM svc_enron_dir), 7, device => 'gpu')$$,
  $$SELECT * FROM rwr((SELECT powerrank_graph(src, dst) FROM svc_enron_dir), 7, device => 'cpu')$$);
SELECT check_same('rankgraph rwr many',
  $$SELECT * FROM rwr((SELECT powerrank_graph(src, dst) FROM svc_enron_dir), ARRAY[7, 8], device => 'gpu')$$,
  $$SELECT * FROM rwr((SELECT powerrank_graph(src, dst) FROM svc_enron_dir), ARRAY[7, 8], device => 'cpu')$$);
SELECT name, identical, engine FROM checks ORDER BY name;

-- The warm start: RWR from 8 sources on the service starts from each source's two-step
-- neighbourhood plus the far-field vector; it meets the same tolerance (1e-8, L1) in fewer
-- iterations, so every column lies within 2e-8 * 0.85 / 0.15 of the backend's run from 1/N.
-- Plain iterations on both sides: the warm start's own effect.
SET powerrank.warm_start = on;
SET powerrank.mixing_depth = 0;
CREATE TEMP TABLE warm AS SELECT * FROM rwr('svc_enron_dir', ARRAY[1, 2, 3, 5, 8, 13, 21, 34], tolerance => 1e-8, device => 'gpu');
CREATE TEMP TABLE warm_run AS SELECT engine, iterations, converged FROM powerrank_last_run();
CREATE TEMP TABLE cold AS SELECT * FROM rwr('svc_enron_dir', ARRAY[1, 2, 3, 5, 8, 13, 21, 34], tolerance => 1e-8, device => 'cpu');
SELECT w.engine, w.converged, w.iterations < c.iterations AS fewer_iterations
FROM warm_run w, powerrank_last_run() c;
RESET powerrank.mixing_depth;
SELECT count(*) AS rows, max(d) < 2e-8 * 0.85 / 0.15 AS within_tolerance, max(d) > 0 AS not_the_same_bits
FROM (SELECT source, sum(abs(w.score - c.score)) AS d FROM warm w JOIN cold c USING (source, node) GROUP BY source) t;
-- other sources, a run of 3 columns: same bound
CREATE TEMP TABLE warm2 AS SELECT * FROM rwr('svc_enron_dir', ARRAY[55, 89, 144], tolerance => 1e-8, device => 'gpu');
CREATE TEMP TABLE cold2 AS SELECT * FROM rwr('svc_enron_dir', ARRAY[55, 89, 144], tolerance => 1e-8, device => 'cpu');
SELECT count(*) AS rows, max(d) < 2e-8 * 0.85 / 0.15 AS within_tolerance
FROM (SELECT source, sum(abs(w.score - c.score)) AS d FROM warm2 w JOIN cold2 c USING (source, node) GROUP BY source) t;
DROP TABLE warm, warm_run, cold, warm2, cold2;
SET powerrank.warm_start = off;
-- the statistics of a service run
SELECT count(*) FROM pagerank('svc_enron_dir', device => 'gpu');
SELECT algorithm, engine, nodes, edges, converged, cache_hit, fallback FROM powerrank_last_run();

-- device => 'auto': the service only for graphs of at least powerrank.gpu_min_edges edges.
SHOW powerrank.gpu_min_edges;
SELECT count(*) FROM pagerank('svc_enron_dir');
SELECT engine, fallback FROM powerrank_last_run();
SET powerrank.gpu_min_edges = 183832;
SELECT count(*) FROM pagerank('svc_enron_dir');
SELECT engine, fallback, edges FROM powerrank_last_run();
SET powerrank.gpu_min_edges = 183831;
SELECT count(*) FROM pagerank('svc_enron_dir');
SELECT engine, fallback, edges FROM powerrank_last_run();
SET powerrank.gpu_min_edges = 0;
SELECT count(*) FROM pagerank('svc_enron_dir', device => 'cpu');
SELECT engine FROM powerrank_last_run();

-- Bad device values.
SELECT * FROM pagerank('svc_enron_dir', device => 'tpu');
SELECT * FROM pagerank('svc_enron_dir', device => NULL);

-- Resident graphs: a cached graph is prepared once in the engine process and reused by later
-- requests (any session); HITS keeps its own entry (with out-edges); the cache view names the
-- device the graph is resident on.
SELECT powerrank_cache_enable('svc_enron_dir');
SELECT count(*) FROM pagerank('svc_enron_dir', device => 'cpu');  -- builds and caches the graph
SELECT cache_hit FROM powerrank_last_run();
CREATE TEMP TABLE before AS SELECT uploads, reuses FROM powerrank_service;
SELECT check_same('cached pagerank', $$SELECT * FROM pagerank('svc_enron_dir', device => 'gpu')$$,
                                     $$SELECT * FROM pagerank('svc_enron_dir', device => 'cpu')$$);
SELECT check_same('cached pagerank again', $$SELECT * FROM pagerank('svc_enron_dir', device => 'gpu')$$,
                                           $$SELECT * FROM pagerank('svc_enron_dir', device => 'cpu')$$);
SELECT check_same('cached hits', $$SELECT * FROM hits('svc_enron_dir', device => 'gpu')$$,
                                 $$SELECT * FROM hits('svc_enron_dir', device => 'cpu')$$);
SELECT check_same('cached hits again', $$SELECT * FROM hits('svc_enron_dir', device => 'gpu')$$,
                                       $$SELECT * FROM hits('svc_enron_dir', device => 'cpu')$$);
SELECT check_same('cached rwr many', $$SELECT * FROM rwr('svc_enron_dir', ARRAY[1, 2], device => 'gpu')$$,
                                     $$SELECT * FROM rwr('svc_enron_dir', ARRAY[1, 2], device => 'cpu')$$);
SELECT name, identical, engine FROM checks WHERE name LIKE 'cached%' ORDER BY name;
SELECT cache_hit FROM powerrank_last_run();
-- pagerank: 1 upload + 1 reuse; hits (with out-edges, its own entry): 1 upload + 1 reuse; rwr
-- with 2 columns: another shape on the pagerank entry, 1 upload
SELECT s.uploads - b.uploads AS uploads, s.reuses - b.reuses AS reuses, s.resident_graphs
FROM powerrank_service s, before b;
SELECT source, gpu IS NOT NULL AS resident_on_service, in_use FROM powerrank_cache;
-- a change of the table makes a new cache entry: the old resident graph is never used again
INSERT INTO svc_enron_dir VALUES (1, 2, 1);
SELECT check_same('after insert', $$SELECT * FROM pagerank('svc_enron_dir', device => 'gpu')$$,
                                  $$SELECT * FROM pagerank('svc_enron_dir', device => 'cpu')$$);
SELECT name, identical FROM checks WHERE name = 'after insert';
DELETE FROM svc_enron_dir WHERE src = 1 AND dst = 2 AND w = 1;

-- Cancel and statement_timeout stop a service run between iterations; the session goes on.
-- (The ring of sql/cancel.sql: the residual shrinks by 1e-6 per iteration.)
CREATE TABLE svc_ring_edges(src bigint, dst bigint);
INSERT INTO svc_ring_edges SELECT i, i % 100000 + 1 FROM generate_series(1, 100000) i;
INSERT INTO svc_ring_edges VALUES (1, 50000);
CREATE TEMP TABLE started AS SELECT clock_timestamp() AS at;
SET statement_timeout = '1s';
SELECT count(*) FROM pagerank('svc_ring_edges', damping => 0.999999, tolerance => 1e-300,
                              max_iterations => 2000000000, device => 'gpu');
RESET statement_timeout;
SELECT clock_timestamp() - at < interval '6 seconds' AS prompt FROM started;
SELECT count(*) FROM pagerank('svc_ring_edges', top_k => 3, device => 'gpu');
SELECT engine FROM powerrank_last_run();
SET statement_timeout = '1s';
SELECT count(*) FROM rwr('svc_ring_edges', ARRAY[1, 2, 3], restart => 0.000001, tolerance => 1e-300,
                         max_iterations => 2000000000, device => 'gpu');
RESET statement_timeout;
SELECT count(*) FROM hits('svc_enron_dir', top_k => 3, device => 'gpu');
SELECT state, request_segments FROM powerrank_service;
SELECT count(*) AS runs_in_progress FROM powerrank_progress;

-- Faults.  'auto' (with gpu_min_edges 0): NOTICE and the CPU's answer; 'gpu': ERROR.  The
-- service recovers each time.
\set VERBOSITY terse
CREATE TEMP TABLE counters AS SELECT restarts, failures FROM powerrank_service;
-- an engine error: the request fails, the engine process restarts (fresh device context)
SELECT powerrank_service_inject_fault('error');
SELECT check_same('fault error auto', $$SELECT * FROM pagerank('svc_enron_dir')$$,
                                      $$SELECT * FROM pagerank('svc_enron_dir', device => 'cpu')$$);
SELECT service_ready();
SELECT powerrank_service_inject_fault('error');
SELECT count(*) FROM pagerank('svc_enron_dir', device => 'gpu');
SELECT service_ready();
-- out of device memory: the request fails, the process stays
SELECT powerrank_service_inject_fault('oom');
SELECT check_same('fault oom auto', $$SELECT * FROM hits('svc_enron_dir')$$,
                                    $$SELECT * FROM hits('svc_enron_dir', device => 'cpu')$$);
SELECT powerrank_service_inject_fault('oom');
SELECT count(*) FROM rwr('svc_enron_dir', ARRAY[1, 2], device => 'gpu');
SELECT service_ready();
-- the engine process dies (SIGKILL) while it holds the request
SELECT powerrank_service_inject_fault('crash');
SELECT check_same('fault crash auto', $$SELECT * FROM rwr('svc_enron_dir', 1)$$,
                                      $$SELECT * FROM rwr('svc_enron_dir', 1, device => 'cpu')$$);
SELECT service_ready();
SELECT powerrank_service_inject_fault('crash');
SELECT count(*) FROM pagerank((SELECT powerrank_graph(src, dst) FROM svc_enron_dir), device => 'gpu');
SELECT service_ready();
SELECT name, identical, engine, fallback FROM checks WHERE name LIKE 'fault%' ORDER BY name;
-- error and crash restarted the engine process (4 times); every fault counted as a failure
SELECT s.restarts - c.restarts AS restarts, s.failures - c.failures AS failures,
       s.state, s.request_segments
FROM powerrank_service s, counters c;
-- only a superuser injects faults
CREATE ROLE service_user;
SET ROLE service_user;
SELECT powerrank_service_inject_fault('crash');
RESET ROLE;
DROP ROLE service_user;

-- kill -9 of the engine process from outside while a backend waits on it: the backend gets an
-- ERROR ('gpu'), the postmaster does not notice (the engine process is not its child), the
-- worker starts a new engine process, and this session and the cluster stay up.
CREATE TEMP TABLE cluster AS
  SELECT pg_postmaster_start_time() AS started, pg_backend_pid() AS me,
         (SELECT worker_pid FROM powerrank_service) AS worker,
         (SELECT restarts FROM powerrank_service) AS restarts;
SELECT kill_engine(1.0) > 0 AS kill_scheduled;
SET statement_timeout = '30s';
SELECT message, detail LIKE '%terminated by signal 9%' AS killed_by_signal_9
FROM error_of($$SELECT count(*) FROM pagerank('svc_ring_edges', damping => 0.999999,
                tolerance => 1e-300, max_iterations => 2000000000, device => 'gpu')$$);
RESET statement_timeout;
SELECT s.restarts - c.restarts AS restarts FROM powerrank_service s, cluster c;
SELECT service_ready();
-- recovered: the error that restarted the engine process is no longer the service's last error
SELECT state, last_error FROM powerrank_service;
SELECT pg_postmaster_start_time() = started AS same_postmaster, pg_backend_pid() = me AS same_session,
       (SELECT worker_pid FROM powerrank_service) = worker AS same_worker
FROM cluster;
-- kill -9 while idle: the worker starts a new engine process; the next call works again
SELECT kill_engine(0) AS killed_pid \gset
SELECT service_replaced(:killed_pid);
SELECT check_same('after kill -9', $$SELECT * FROM pagerank('svc_enron_dir', device => 'gpu')$$,
                                   $$SELECT * FROM pagerank('svc_enron_dir', device => 'cpu')$$);
SELECT name, identical, engine FROM checks WHERE name = 'after kill -9';
SELECT s.restarts - c.restarts AS restarts FROM powerrank_service s, cluster c;
\set VERBOSITY default

-- Nothing leaked: no request segment alive, no cached graph still referenced, every cache
-- segment belongs to an entry.
SELECT request_segments FROM powerrank_service;
SELECT count(*) FILTER (WHERE in_use > 0) AS in_use FROM powerrank_cache;
SELECT entries + retired = segments AS segments_match FROM powerrank_cache_status();

-- The service switched off by a reload: 'gpu' is an ERROR with a hint, 'auto' runs on the CPU
-- and says why; switched on again, it serves again.
ALTER SYSTEM SET powerrank.service_engine = 'off';
SELECT pg_reload_conf();
SELECT service_state_is('unavailable');
SELECT state, engine_pid, last_error FROM powerrank_service;
SELECT count(*) FROM pagerank('svc_enron_dir', device => 'gpu');
SELECT count(*) FROM pagerank('svc_enron_dir');
SELECT engine, fallback FROM powerrank_last_run();
ALTER SYSTEM RESET powerrank.service_engine;
SELECT pg_reload_conf();
SELECT service_ready();
SELECT count(*) FROM pagerank('svc_enron_dir', device => 'gpu');
SELECT engine FROM powerrank_last_run();

-- A missing GPU library: the service is unavailable and its error names the file once, whether
-- the setting ends in .so, lacks it, or starts with $libdir (shown as $libdir below); device =>
-- 'gpu' says what to do.  Between the cases the cpu-test engine serves again.
CREATE FUNCTION library_error() RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  IF NOT service_state_is('unavailable') THEN
    RETURN 'still ' || (SELECT state FROM powerrank_service);
  END IF;
  RETURN replace((SELECT last_error FROM powerrank_service),
                 (SELECT setting FROM pg_config WHERE name = 'PKGLIBDIR'), '$libdir');
END $$;
ALTER SYSTEM SET powerrank.service_engine = 'gpu';
ALTER SYSTEM SET powerrank.gpu_library = '/nonexistent/powerrank_gpu.so';
SELECT pg_reload_conf();
SELECT library_error();
SELECT count(*) FROM pagerank('svc_enron_dir', device => 'gpu');
ALTER SYSTEM SET powerrank.service_engine = 'cpu-test';
SELECT pg_reload_conf();
SELECT service_ready();
ALTER SYSTEM SET powerrank.service_engine = 'gpu';
ALTER SYSTEM SET powerrank.gpu_library = '/nonexistent/powerrank_gpu';
SELECT pg_reload_conf();
SELECT library_error();
ALTER SYSTEM SET powerrank.service_engine = 'cpu-test';
SELECT pg_reload_conf();
SELECT service_ready();
ALTER SYSTEM SET powerrank.service_engine = 'gpu';
ALTER SYSTEM SET powerrank.gpu_library = '$libdir/powerrank_missing.so';
SELECT pg_reload_conf();
SELECT library_error();
ALTER SYSTEM SET powerrank.service_engine = 'cpu-test';
SELECT pg_reload_conf();
SELECT service_ready();
ALTER SYSTEM SET powerrank.service_engine = 'gpu';
ALTER SYSTEM SET powerrank.gpu_library = 'powerrank_missing';
SELECT pg_reload_conf();
SELECT library_error();
ALTER SYSTEM SET powerrank.service_engine = 'cpu-test';
SELECT pg_reload_conf();
SELECT service_ready();
-- a file that is there but is no library: dlopen's reason, the file named once
ALTER SYSTEM SET powerrank.service_engine = 'gpu';
ALTER SYSTEM SET powerrank.gpu_library = '/dev/null';
SELECT pg_reload_conf();
SELECT library_error();
ALTER SYSTEM RESET powerrank.service_engine;
ALTER SYSTEM RESET powerrank.gpu_library;
SELECT pg_reload_conf();
SELECT service_ready();

-- top_k is ranked where the scores are computed: the service sends back the best rows of each
-- column (small results travel in the request slot, large ones in a segment), the CPU engine ranks
-- its own vector.  Each must give exactly the first k rows of the full ranking (ORDER BY score
-- DESC, node), ties to the smaller node id.  The graph is full of exact ties: 40 disjoint
-- 3-cycles (every cycle node has the same score) beside email-Enron read as directed.
CREATE TABLE svc_tie_edges(src bigint, dst bigint);
INSERT INTO svc_tie_edges SELECT 3 * c + i, 3 * c + i % 3 + 1 FROM generate_series(0, 39) c, generate_series(1, 3) i;
INSERT INTO svc_tie_edges SELECT src + 1000, dst + 1000 FROM svc_enron_dir;
-- order_check(name, got, want, k): got's rows in output order equal the first k rows of want's
-- full ranking; records the result in checks
CREATE FUNCTION order_check(name text, got_sql text, want_sql text, k int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  same boolean;
  eng text;
BEGIN
  EXECUTE format('CREATE TEMP TABLE g AS SELECT row_number() OVER () AS r, * FROM (%s) s', got_sql);
  SELECT engine INTO eng FROM powerrank_last_run();
  EXECUTE format('CREATE TEMP TABLE w AS SELECT * FROM (SELECT row_number() OVER (ORDER BY score DESC, node) AS r, * FROM (%s) s) t WHERE r <= %s',
                 want_sql, k);
  SELECT (SELECT count(*) FROM g) = (SELECT count(*) FROM w)
     AND NOT EXISTS (SELECT * FROM g EXCEPT SELECT * FROM w) INTO same;
  INSERT INTO checks VALUES (name, same, eng, NULL);
  DROP TABLE g, w;
END $$;
-- the many-source form, per source: got's rows of each source in output order equal the first k
-- rows of that source's full ranking
CREATE FUNCTION order_check_many(name text, got_sql text, want_sql text, k int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  same boolean;
  eng text;
BEGIN
  EXECUTE format('CREATE TEMP TABLE g AS SELECT row_number() OVER () AS o, * FROM (%s) s', got_sql);
  SELECT engine INTO eng FROM powerrank_last_run();
  EXECUTE format('CREATE TEMP TABLE w AS SELECT * FROM (SELECT row_number() OVER (PARTITION BY source ORDER BY score DESC, node) AS r, * FROM (%s) s) t WHERE r <= %s',
                 want_sql, k);
  SELECT (SELECT count(*) FROM g) = (SELECT count(*) FROM w)
     AND NOT EXISTS (SELECT row_number() OVER (PARTITION BY source ORDER BY o), source, node, score FROM g
                     EXCEPT SELECT r, source, node, score FROM w) INTO same;
  INSERT INTO checks VALUES (name, same, eng, NULL);
  DROP TABLE g, w;
END $$;
-- the 120 cycle nodes tie exactly
SELECT count(*) AS cycle_nodes, count(DISTINCT score) AS distinct_scores
FROM pagerank('svc_tie_edges', device => 'cpu') WHERE node <= 120;
-- a top_k that cuts the tied group in the middle
SELECT min(r) + 59 AS tie_cut FROM (SELECT row_number() OVER (ORDER BY score DESC, node) AS r, node
                                    FROM pagerank('svc_tie_edges', device => 'cpu')) t WHERE node <= 120 \gset
SELECT order_check('top pagerank tie cut', format($$SELECT * FROM pagerank('svc_tie_edges', top_k => %s, device => 'gpu')$$, :tie_cut),
                   $$SELECT * FROM pagerank('svc_tie_edges', device => 'cpu')$$, :tie_cut);
SELECT order_check('top pagerank tie cut cpu', format($$SELECT * FROM pagerank('svc_tie_edges', top_k => %s, device => 'cpu')$$, :tie_cut),
                   $$SELECT * FROM pagerank('svc_tie_edges', device => 'cpu')$$, :tie_cut);
SELECT order_check('top pagerank 1', $$SELECT * FROM pagerank('svc_tie_edges', top_k => 1, device => 'gpu')$$,
                   $$SELECT * FROM pagerank('svc_tie_edges', device => 'cpu')$$, 1);
SELECT order_check('top pagerank 150', $$SELECT * FROM pagerank('svc_tie_edges', top_k => 150, device => 'gpu')$$,
                   $$SELECT * FROM pagerank('svc_tie_edges', device => 'cpu')$$, 150);
SELECT order_check('top pagerank all', $$SELECT * FROM pagerank('svc_tie_edges', top_k => 100000, device => 'gpu')$$,
                   $$SELECT * FROM pagerank('svc_tie_edges', device => 'cpu')$$, 100000);
SELECT order_check('top pagerank cpu', $$SELECT * FROM pagerank('svc_tie_edges', top_k => 150, device => 'cpu')$$,
                   $$SELECT * FROM pagerank('svc_tie_edges', device => 'cpu')$$, 150);
SELECT order_check('top rwr', $$SELECT * FROM rwr('svc_tie_edges', 4, top_k => 30, device => 'gpu')$$,
                   $$SELECT * FROM rwr('svc_tie_edges', 4, device => 'cpu')$$, 30);
SELECT order_check_many('top rwr many', $$SELECT * FROM rwr('svc_tie_edges', ARRAY[1, 5, 1001, 1100], top_k => 25, device => 'gpu')$$,
                        $$SELECT * FROM rwr('svc_tie_edges', ARRAY[1, 5, 1001, 1100], device => 'cpu')$$, 25);
SELECT order_check_many('top rwr many cpu', $$SELECT * FROM rwr('svc_tie_edges', ARRAY[1, 5, 1001, 1100], top_k => 25, device => 'cpu')$$,
                        $$SELECT * FROM rwr('svc_tie_edges', ARRAY[1, 5, 1001, 1100], device => 'cpu')$$, 25);
-- cached: the first call builds the graph, caches it and leaves it resident on the service under
-- its cache entry (one upload); later calls reuse it, small requests need no segment
SELECT powerrank_cache_enable('svc_tie_edges');
CREATE TEMP TABLE before_top AS SELECT uploads, reuses FROM powerrank_service;
SELECT order_check('top cold', $$SELECT * FROM pagerank('svc_tie_edges', top_k => 150, device => 'gpu')$$,
                   $$SELECT * FROM pagerank('svc_tie_edges', device => 'cpu')$$, 150);
SELECT order_check('top cached', $$SELECT * FROM pagerank('svc_tie_edges', top_k => 150, device => 'gpu')$$,
                   $$SELECT * FROM pagerank('svc_tie_edges', device => 'cpu')$$, 150);
SELECT order_check('top cached tie cut', format($$SELECT * FROM pagerank('svc_tie_edges', top_k => %s, device => 'gpu')$$, :tie_cut),
                   $$SELECT * FROM pagerank('svc_tie_edges', device => 'cpu')$$, :tie_cut);
SELECT order_check('top cached rwr', $$SELECT * FROM rwr('svc_tie_edges', 1001, top_k => 10, device => 'gpu')$$,
                   $$SELECT * FROM rwr('svc_tie_edges', 1001, device => 'cpu')$$, 10);
SELECT order_check_many('top cached rwr many large', $$SELECT * FROM rwr('svc_tie_edges', ARRAY[1, 5, 1001, 1100], top_k => 3000, device => 'gpu')$$,
                        $$SELECT * FROM rwr('svc_tie_edges', ARRAY[1, 5, 1001, 1100], device => 'cpu')$$, 3000);
SELECT s.uploads - b.uploads AS uploads, s.reuses - b.reuses AS reuses
FROM powerrank_service s, before_top b;
SELECT name, identical, engine FROM checks WHERE name LIKE 'top%' ORDER BY name;
SELECT request_segments FROM powerrank_service;

-- The service's build (powerrank.gpu_build_rows): a table the cache tracks, not cached yet, is read
-- into a shared segment, the engine builds the graph there (written over the rows) and the segment
-- becomes the cache entry; the ranking then runs on the graph the engine still has mapped.  With
-- cpu-test the engine builds with the backend's own code, so every score must be the same bits as
-- a run on an untracked copy built in the backend.
SELECT powerrank_cache_drop(NULL) >= 1 AS dropped;
CREATE TABLE svc_build AS SELECT src, dst FROM svc_enron_dir;
CREATE TABLE svc_build_copy AS SELECT src, dst FROM svc_enron_dir;
SELECT powerrank_cache_enable('svc_build');
SET powerrank.gpu_build_rows = 0;
CREATE TEMP TABLE before_build AS SELECT builds, uploads, reuses, failures FROM powerrank_service;
SELECT check_same('build pagerank', $$SELECT * FROM pagerank('svc_build', device => 'gpu')$$,
                  $$SELECT * FROM pagerank('svc_build_copy', device => 'cpu')$$);
SELECT source, nodes, edges, gpu IS NOT NULL AS resident FROM powerrank_cache;
SELECT check_same('build pagerank cached', $$SELECT * FROM pagerank('svc_build', device => 'gpu')$$,
                  $$SELECT * FROM pagerank('svc_build_copy', device => 'cpu')$$);
SELECT check_same('build rwr cached', $$SELECT * FROM rwr('svc_build', 1, top_k => 20, device => 'gpu')$$,
                  $$SELECT * FROM rwr('svc_build_copy', 1, top_k => 20, device => 'cpu')$$);
-- undirected (both directions, a self-loop once) and HITS (out-edges added where it runs)
SELECT check_same('build undirected', $$SELECT * FROM pagerank('svc_build', directed => false, device => 'gpu')$$,
                  $$SELECT * FROM pagerank('svc_build_copy', directed => false, device => 'cpu')$$);
SELECT check_same('build hits', $$SELECT * FROM hits('svc_build', directed => false, device => 'gpu')$$,
                  $$SELECT * FROM hits('svc_build_copy', directed => false, device => 'cpu')$$);
-- three builds (directed, undirected, and none for the cached HITS graph); uploads happen on the
-- graph the engine built, no request segment is left
SELECT s.builds - b.builds AS builds, s.failures - b.failures AS failures, s.request_segments
FROM powerrank_service s, before_build b;
SELECT count(*) AS entries, sum(edges) AS edges FROM powerrank_cache;
-- never stale: a committed insert makes the next call build the new edges on the service
INSERT INTO svc_build VALUES (1, 36000), (36000, 36000), (7, 7);
INSERT INTO svc_build_copy VALUES (1, 36000), (36000, 36000), (7, 7);
SELECT check_same('build after insert', $$SELECT * FROM pagerank('svc_build', device => 'gpu')$$,
                  $$SELECT * FROM pagerank('svc_build_copy', device => 'cpu')$$);
SELECT edges FROM powerrank_last_run();
-- not built on the service: a weighted graph, device => 'cpu', the setting at -1
SELECT powerrank_cache_enable('svc_enron');
TRUNCATE before_build;
INSERT INTO before_build SELECT builds, uploads, reuses, failures FROM powerrank_service;
SELECT check_same('build weighted', $$SELECT * FROM pagerank('svc_enron', weight_column => 'w', device => 'gpu')$$,
                  $$SELECT * FROM pagerank('svc_enron', weight_column => 'w', device => 'cpu')$$);
SELECT powerrank_cache_drop(NULL) >= 1 AS dropped;
SELECT count(*) FROM pagerank('svc_build', device => 'cpu');
SELECT powerrank_cache_drop(NULL) >= 1 AS dropped;
SET powerrank.gpu_build_rows = -1;
SELECT check_same('build off', $$SELECT * FROM pagerank('svc_build', device => 'gpu')$$,
                  $$SELECT * FROM pagerank('svc_build_copy', device => 'cpu')$$);
SET powerrank.gpu_build_rows = 0;
SELECT s.builds - b.builds AS builds FROM powerrank_service s, before_build b;
-- faults during the build: out of memory (the rows are intact: the backend builds from them),
-- an engine error (the engine restarts), a crash (the rows may be gone: read again); each call
-- still returns the right scores ('auto' with gpu_min_edges 0: the service when it is up again,
-- else the CPU), and nothing is built on the service
TRUNCATE before_build;
INSERT INTO before_build SELECT builds, uploads, reuses, failures FROM powerrank_service;
SELECT powerrank_cache_drop(NULL) >= 1 AS dropped;
SELECT powerrank_service_inject_fault('oom');
SELECT check_same('build fault oom', $$SELECT * FROM pagerank('svc_build', top_k => 50)$$,
                  $$SELECT * FROM pagerank('svc_build_copy', top_k => 50, device => 'cpu')$$);
SELECT service_ready();
SELECT powerrank_cache_drop(NULL) >= 1 AS dropped;
SELECT powerrank_service_inject_fault('error');
SELECT check_same('build fault error', $$SELECT * FROM pagerank('svc_build', top_k => 50)$$,
                  $$SELECT * FROM pagerank('svc_build_copy', top_k => 50, device => 'cpu')$$);
SELECT service_ready();
SELECT powerrank_cache_drop(NULL) >= 1 AS dropped;
SELECT powerrank_service_inject_fault('crash');
SELECT check_same('build fault crash', $$SELECT * FROM pagerank('svc_build', top_k => 50)$$,
                  $$SELECT * FROM pagerank('svc_build_copy', top_k => 50, device => 'cpu')$$);
SELECT service_ready();
SELECT s.builds - b.builds AS builds, s.failures - b.failures AS failures, s.request_segments
FROM powerrank_service s, before_build b;
SELECT name, identical FROM checks WHERE name LIKE 'build%' ORDER BY name;
RESET powerrank.gpu_build_rows;

SELECT powerrank_cache_drop(NULL) >= 1 AS dropped;
RESET powerrank.gpu_min_edges;
