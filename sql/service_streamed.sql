-- Graphs larger than the GPU memory (or powerrank.gpu_memory): the GPU engine keeps the graph's
-- matrices in host memory and streams them to the device every iteration (residency 'streamed')
-- when its resident layouts do not fit the budget but its vectors and two block buffers do, and
-- fails with out of memory (the backend then computes on the CPU) when not even those fit.  The
-- cpu-test engine (test/regress.conf) makes the same choice from the same sizes (core/
-- pr_residency.h) with powerrank.gpu_memory as the budget, and runs the CPU engine either way, so
-- its scores are the same bits as device => 'cpu' (compared value by value).
-- For email-Enron read as directed (36692 nodes, 183831 edges, fp64 vectors) the choice needs:
--   PageRank (1 column, 2 slots)      resident 3.81 MiB, streamed 2.95 MiB
--   HITS (push matrix too, 3 slots)   resident 5.21 MiB, streamed 3.24 MiB
--   RWR from 4 sources (4 columns)    resident 8.11 MiB, streamed 7.25 MiB
-- so powerrank.gpu_memory = 4MB keeps PageRank resident, streams HITS and has no room for the RWR;
-- 3MB streams PageRank and has no room for HITS.
SET powerrank.warm_start = off;
\i sql/include/data_dir.sql

\i sql/include/service_wait.sql

CREATE TABLE str_enron(src bigint, dst bigint);
\set cmd 'zcat ' :data_dir '/email-enron.tsv.gz'
COPY str_enron FROM PROGRAM :'cmd';

-- Service runs against the backend's: identical = every score equal to the CPU run's.
CREATE TEMP TABLE str_checks(name text, identical boolean, engine text, residency text, fallback text);
CREATE FUNCTION str_check(name text, gpu_sql text, cpu_sql text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  same boolean;
  eng text;
  res text;
  why text;
BEGIN
  EXECUTE format('CREATE TEMP TABLE g AS %s', gpu_sql);
  SELECT engine, residency, fallback INTO eng, res, why FROM powerrank_last_run();
  EXECUTE format('CREATE TEMP TABLE c AS %s', cpu_sql);
  SELECT (SELECT count(*) FROM g) = (SELECT count(*) FROM c)
     AND NOT EXISTS (SELECT * FROM g EXCEPT SELECT * FROM c) INTO same;
  INSERT INTO str_checks VALUES (name, same, eng, res, why);
  DROP TABLE g, c;
END $$;

-- powerrank.gpu_memory is reloaded (its context is sighup): the service restarts its engine
-- process with the new budget.
-- No budget (powerrank.gpu_memory = 0, test/regress.conf): everything resident; the backend's CPU
-- run has no residency.
SHOW powerrank.gpu_memory;
SELECT service_ready();
SELECT str_check('0: pagerank', $$SELECT * FROM pagerank('str_enron', tolerance => 1e-12, device => 'gpu')$$,
                                $$SELECT * FROM pagerank('str_enron', tolerance => 1e-12, device => 'cpu')$$);
SELECT str_check('0: hits', $$SELECT * FROM hits('str_enron', tolerance => 1e-10, device => 'gpu')$$,
                            $$SELECT * FROM hits('str_enron', tolerance => 1e-10, device => 'cpu')$$);
SELECT str_check('0: rwr 4 sources', $$SELECT * FROM rwr('str_enron', ARRAY[1, 2, 3, 500], device => 'gpu')$$,
                                     $$SELECT * FROM rwr('str_enron', ARRAY[1, 2, 3, 500], device => 'cpu')$$);
SELECT nodes, edges, engine, residency, fallback FROM powerrank_last_run();

-- 4MB: PageRank resident, HITS streamed, RWR from 4 sources out of memory: device => 'auto'
-- computes on the CPU after a NOTICE (residency NULL, fallback the engine's message), device =>
-- 'gpu' is an ERROR that says how much memory it needed.
SELECT service_ready();
SELECT engine_pid AS old_pid FROM powerrank_service \gset
ALTER SYSTEM SET powerrank.gpu_memory = '4MB';
SELECT pg_reload_conf();
SELECT service_replaced(:old_pid);
SELECT str_check('4MB: pagerank', $$SELECT * FROM pagerank('str_enron', tolerance => 1e-12, device => 'gpu')$$,
                                  $$SELECT * FROM pagerank('str_enron', tolerance => 1e-12, device => 'cpu')$$);
SELECT str_check('4MB: hits', $$SELECT * FROM hits('str_enron', tolerance => 1e-10, device => 'gpu')$$,
                              $$SELECT * FROM hits('str_enron', tolerance => 1e-10, device => 'cpu')$$);
SET powerrank.gpu_min_edges = 0;
SELECT str_check('4MB: rwr 4 sources', $$SELECT * FROM rwr('str_enron', ARRAY[1, 2, 3, 500], device => 'auto')$$,
                                       $$SELECT * FROM rwr('str_enron', ARRAY[1, 2, 3, 500], device => 'cpu')$$);
RESET powerrank.gpu_min_edges;
SELECT count(*) FROM rwr('str_enron', ARRAY[1, 2, 3, 500], device => 'gpu');

-- 3MB: PageRank and personalized PageRank streamed, HITS out of memory.
SELECT service_ready();
SELECT engine_pid AS old_pid FROM powerrank_service \gset
ALTER SYSTEM SET powerrank.gpu_memory = '3MB';
SELECT pg_reload_conf();
SELECT service_replaced(:old_pid);
SELECT str_check('3MB: pagerank', $$SELECT * FROM pagerank('str_enron', tolerance => 1e-12, device => 'gpu')$$,
                                  $$SELECT * FROM pagerank('str_enron', tolerance => 1e-12, device => 'cpu')$$);
SELECT str_check('3MB: personalized', $$SELECT * FROM pagerank('str_enron', personalization => ARRAY[1, 5, 100], device => 'gpu')$$,
                                      $$SELECT * FROM pagerank('str_enron', personalization => ARRAY[1, 5, 100], device => 'cpu')$$);
SELECT str_check('3MB: rwr', $$SELECT * FROM rwr('str_enron', source => 1, device => 'gpu')$$,
                             $$SELECT * FROM rwr('str_enron', source => 1, device => 'cpu')$$);
SET powerrank.gpu_min_edges = 0;
SELECT str_check('3MB: hits', $$SELECT * FROM hits('str_enron', tolerance => 1e-10, device => 'auto')$$,
                              $$SELECT * FROM hits('str_enron', tolerance => 1e-10, device => 'cpu')$$);
RESET powerrank.gpu_min_edges;

SELECT name, identical, engine, residency, fallback FROM str_checks ORDER BY name;

SELECT service_ready();
SELECT engine_pid AS old_pid FROM powerrank_service \gset
ALTER SYSTEM RESET powerrank.gpu_memory;
SELECT pg_reload_conf();
SELECT service_replaced(:old_pid);
DROP TABLE str_enron;
DROP FUNCTION str_check(text, text, text);
