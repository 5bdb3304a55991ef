-- Several GPUs: with powerrank.gpu_devices = N >= 2 the cpu-test engine (test/regress.conf)
-- simulates N GPUs by N parts, each a CPU engine holding a range of the rows (core/pr_parts.h),
-- joined by the exchange after every product, exactly as the GPU service joins N GPU engines.
-- Each kind of run on a cached graph runs its first two calls on one engine, the next two on the
-- N parts, then wherever it was measured faster (simulated parts are slower: the threads are
-- shared).  Every answer on the parts must equal the backend's CPU answer within rounding.
SET powerrank.warm_start = off;
\i sql/include/data_dir.sql

\i sql/include/service_wait.sql

CREATE TABLE mg_enron(src bigint, dst bigint);
\set cmd 'zcat ' :data_dir '/email-enron.tsv.gz'
COPY mg_enron FROM PROGRAM :'cmd';
CREATE TABLE mg_weighted AS SELECT src, dst, ((src * 7 + dst) % 5 + 1)::float8 AS w FROM mg_enron;
-- each kind of run is measured per cached graph: one table per check of one-column PageRank
CREATE TABLE mg_top AS SELECT * FROM mg_enron;
CREATE TABLE mg_personal AS SELECT * FROM mg_enron;
CREATE TABLE mg_warm AS SELECT * FROM mg_enron;
CREATE TABLE mg_tiny(src bigint, dst bigint);
INSERT INTO mg_tiny VALUES (1, 2), (2, 1);
-- cached graphs: only those stay on the service between calls (and get the choice)
SELECT count(*) FILTER (WHERE powerrank_cache_enable(t)) AS cached
  FROM unnest(ARRAY['mg_enron', 'mg_weighted', 'mg_top', 'mg_personal', 'mg_warm', 'mg_tiny']) t;

-- Runs service_sql on the service until it runs on the parts (at most 40 calls: the first two run
-- on one engine, and one engine is measured only on its tuned layout, which a thread plans), then
-- compares that answer with cpu_sql's, row by row on the key columns: the largest difference of the
-- value column, or NULL when the rows differ or the parts never ran.  The residencies are those
-- powerrank_last_run() reports for the first call and for the call on the parts.
CREATE FUNCTION on_parts(service_sql text, cpu_sql text, keys text, val text,
                         OUT first_engine text, OUT parts_engine text, OUT max_diff float8,
                         OUT first_residency text, OUT parts_residency text)
LANGUAGE plpgsql AS $$
DECLARE
  eng text;
  res text;
  same_rows boolean;
BEGIN
  FOR i IN 1..40 LOOP
    EXECUTE format('CREATE TEMP TABLE g AS %s', service_sql);
    SELECT engine, residency INTO eng, res FROM powerrank_last_run();
    IF i = 1 THEN first_engine := eng; first_residency := res; END IF;
    EXIT WHEN eng LIKE 'cpu-parts%';
    DROP TABLE g;
    PERFORM pg_sleep(0.02);
  END LOOP;
  IF eng NOT LIKE 'cpu-parts%' THEN
    RETURN;
  END IF;
  parts_engine := eng;
  parts_residency := res;
  EXECUTE format('CREATE TEMP TABLE c AS %s', cpu_sql);
  EXECUTE format('SELECT (SELECT count(*) FROM g) = (SELECT count(*) FROM c)
                     AND (SELECT count(*) FROM g JOIN c USING (%s)) = (SELECT count(*) FROM c)',
                 keys) INTO same_rows;
  IF same_rows THEN
    EXECUTE format('SELECT coalesce(max(abs(g.%1$I - c.%1$I)), 0) FROM g JOIN c USING (%2$s)',
                   val, keys)
      INTO max_diff;
  END IF;
  DROP TABLE g, c;
END $$;

SELECT service_ready();
SELECT engine_pid AS old_pid FROM powerrank_service \gset
ALTER SYSTEM SET powerrank.gpu_devices = 3;
SELECT pg_reload_conf();
SELECT service_replaced(:old_pid);
SELECT device FROM powerrank_service;

-- Every algorithm and option on three parts: the first call on one engine, a later one on the
-- parts, the same answer.
SELECT 'pagerank' AS run, first_engine, parts_engine, max_diff < 1e-12 AS same
  FROM on_parts($$SELECT * FROM pagerank('mg_enron', tolerance => 1e-10, device => 'gpu')$$,
                $$SELECT * FROM pagerank('mg_enron', tolerance => 1e-10, device => 'cpu')$$,
                'node', 'score');
SELECT 'pagerank weighted linf' AS run, first_engine, parts_engine, max_diff < 1e-12 AS same
  FROM on_parts($$SELECT * FROM pagerank('mg_weighted', weight_column => 'w', norm => 'linf', tolerance => 1e-12, device => 'gpu')$$,
                $$SELECT * FROM pagerank('mg_weighted', weight_column => 'w', norm => 'linf', tolerance => 1e-12, device => 'cpu')$$,
                'node', 'score');
SELECT 'pagerank top_k' AS run, first_engine, parts_engine, max_diff < 1e-12 AS same
  FROM on_parts($$SELECT row_number() OVER () AS rank, * FROM pagerank('mg_top', top_k => 25, device => 'gpu')$$,
                $$SELECT row_number() OVER () AS rank, * FROM pagerank('mg_top', top_k => 25, device => 'cpu')$$,
                'rank, node', 'score');
SELECT 'rwr 4 sources' AS run, first_engine, parts_engine, max_diff < 1e-12 AS same
  FROM on_parts($$SELECT * FROM rwr('mg_enron', ARRAY[1, 2, 3, 500], tolerance => 1e-10, device => 'gpu')$$,
                $$SELECT * FROM rwr('mg_enron', ARRAY[1, 2, 3, 500], tolerance => 1e-10, device => 'cpu')$$,
                'source, node', 'score');
SELECT 'hits' AS run, first_engine, parts_engine, max_diff < 1e-12 AS same
  FROM on_parts($$SELECT node, hub + 2 * authority AS v FROM hits('mg_enron', tolerance => 1e-10, device => 'gpu')$$,
                $$SELECT node, hub + 2 * authority AS v FROM hits('mg_enron', tolerance => 1e-10, device => 'cpu')$$,
                'node', 'v');
SELECT 'personalized' AS run, first_engine, parts_engine, max_diff < 1e-12 AS same
  FROM on_parts($$SELECT * FROM pagerank('mg_personal', personalization => ARRAY[1, 5, 100], tolerance => 1e-10, device => 'gpu')$$,
                $$SELECT * FROM pagerank('mg_personal', personalization => ARRAY[1, 5, 100], tolerance => 1e-10, device => 'cpu')$$,
                'node', 'score');
-- the warm start stops by its own rule (pr_driver.h): as accurate as the cold run, not the same bits
SET powerrank.warm_start = on;
SELECT 'rwr warm start' AS run, first_engine, parts_engine, max_diff < 1e-9 AS same
  FROM on_parts($$SELECT * FROM rwr('mg_warm', source => 7, tolerance => 1e-10, device => 'gpu')$$,
                $$SELECT * FROM rwr('mg_warm', source => 7, tolerance => 1e-10, device => 'cpu')$$,
                'node', 'score');
SET powerrank.warm_start = off;

-- Fewer nodes than parts: two parts hold no row, the answer is still the graph's.
SELECT 'tiny' AS run, first_engine, parts_engine, max_diff < 1e-15 AS same
  FROM on_parts($$SELECT * FROM pagerank('mg_tiny', device => 'gpu')$$,
                $$SELECT * FROM pagerank('mg_tiny', device => 'cpu')$$,
                'node', 'score');

-- powerrank_estimate predicts the parts for a cached graph that one engine would stream (its
-- resident need above powerrank.gpu_memory, a bound per GPU) while each part fits resident: on a
-- graph of 40 edges a node, the matrix is most of the need and a part holds a third of it.
CREATE TABLE mg_dense AS
  SELECT s AS src, (s * 7919 + j * 104729) % 20000 AS dst
  FROM generate_series(0, 19999) s, generate_series(1, 40) j;
CREATE TABLE mg_plain AS SELECT * FROM mg_dense;
ANALYZE mg_dense;
ANALYZE mg_plain;
SELECT powerrank_cache_enable('mg_dense');
SELECT count(*) FROM pagerank('mg_dense', top_k => 1, device => 'gpu');
SELECT engine, residency, gpu_bytes AS one_engine_bytes
  FROM powerrank_estimate('mg_dense', device => 'gpu') \gset
SELECT :'engine' AS engine, :'residency' AS residency;
SELECT engine_pid AS old_pid FROM powerrank_service \gset
SELECT (:one_engine_bytes * 6 / 10 / 1024) || 'kB' AS limit_kb \gset
ALTER SYSTEM SET powerrank.gpu_memory = :'limit_kb';
SELECT pg_reload_conf();
SELECT service_replaced(:old_pid);
SELECT engine, residency, gpu_bytes < :one_engine_bytes * 6 / 10 AS fits,
       reason LIKE '%one GPU would stream the graph, each of 3 GPUs holds its part resident' AS says_why
  FROM powerrank_estimate('mg_dense', device => 'gpu');
-- and the service: the first calls stream on one engine, later ones run on the parts, resident
-- (part 0's residency, as a run on several GPUs reports)
SELECT 'capped pagerank' AS run, first_engine, first_residency, parts_engine, parts_residency,
       max_diff < 1e-12 AS same
  FROM on_parts($$SELECT * FROM pagerank('mg_dense', tolerance => 1e-10, device => 'gpu')$$,
                $$SELECT * FROM pagerank('mg_dense', tolerance => 1e-10, device => 'cpu')$$,
                'node', 'score');
-- a table without the cache: its graph is a one-off, never on the parts: streamed on one
SELECT engine, residency FROM powerrank_estimate('mg_plain', device => 'gpu');
SELECT engine_pid AS old_pid FROM powerrank_service \gset
ALTER SYSTEM RESET powerrank.gpu_memory;
SELECT pg_reload_conf();
SELECT service_replaced(:old_pid);

SELECT engine_pid AS old_pid FROM powerrank_service \gset
ALTER SYSTEM RESET powerrank.gpu_devices;
SELECT pg_reload_conf();
SELECT service_replaced(:old_pid);
DROP TABLE mg_enron, mg_weighted, mg_top, mg_personal, mg_warm, mg_tiny, mg_dense, mg_plain;
DROP FUNCTION on_parts(text, text, text, text);
