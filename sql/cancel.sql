-- Cancel during a long run: statement_timeout stops it between iterations, promptly, with the
-- usual message, and the same backend keeps working.
--
-- A directed ring of 100000 nodes with one chord mixes at the damping's rate only: with damping
-- 0.999999 (restart 0.000001) the residual shrinks by 1e-6 per iteration, so a run to tolerance
-- 1e-300 would take about forever.
CREATE TABLE ring_edges(src bigint, dst bigint);
INSERT INTO ring_edges SELECT i, i % 100000 + 1 FROM generate_series(1, 100000) i;
INSERT INTO ring_edges VALUES (1, 50000);
-- HITS converges slowly on this pseudo-random graph (residual still above 1e-14 after thousands of
-- iterations).
CREATE TABLE long_edges(src bigint, dst bigint);
INSERT INTO long_edges
  SELECT i, (i * 7919) % 100000 + 1 FROM generate_series(1, 100000) i;
INSERT INTO long_edges
  SELECT i, (i::bigint * i) % 100000 + 1 FROM generate_series(1, 100000, 3) i;

CREATE TEMP TABLE started AS SELECT clock_timestamp() AS at;
SET statement_timeout = '1s';
SELECT count(*) FROM pagerank('ring_edges', damping => 0.999999, tolerance => 1e-300,
                              max_iterations => 2000000000);
RESET statement_timeout;
-- it stopped within a few seconds of the timeout
SELECT clock_timestamp() - at < interval '6 seconds' AS prompt FROM started;
-- the backend is usable and the extension works in it
SELECT 1 AS alive;
SELECT count(*) FROM pagerank('ring_edges', top_k => 5);
SELECT algorithm, nodes, converged FROM powerrank_last_run();

-- the same for HITS and many-source RWR
SET statement_timeout = '1s';
SELECT count(*) FROM hits('long_edges', tolerance => 1e-300, max_iterations => 2000000000);
SELECT count(*) FROM rwr('ring_edges', ARRAY[1, 2, 3, 4], restart => 0.000001,
                         tolerance => 1e-300, max_iterations => 2000000000);
RESET statement_timeout;
SELECT count(*) FROM rwr('ring_edges', ARRAY[1, 2], top_k => 3);
SELECT count(*) FROM hits('long_edges', top_k => 3, max_iterations => 5);

-- a cancel inside a transaction aborts it like any other error, and a savepoint recovers
BEGIN;
SAVEPOINT before_run;
SET LOCAL statement_timeout = '500ms';
SELECT count(*) FROM pagerank('ring_edges', damping => 0.999999, tolerance => 1e-300,
                              max_iterations => 2000000000);
ROLLBACK TO SAVEPOINT before_run;
SELECT count(*) FROM pagerank('ring_edges', top_k => 1);
COMMIT;

-- Cancel while the graph is read and built: the read polls for a cancel every few thousand rows,
-- the build between its steps.  3M rows of sparse ids (spread over 62 bits: the build sorts them
-- in six radix passes), ranked undirected.  A first run measures read + build (build_ms) on this
-- machine as it is now (after a VACUUM: no first-read hint-bit writes); then statement_timeout is
-- set to 1/8 of it (the cancel comes during the read) and to 1/2 of it (during the build): the
-- ERROR must come well before the whole read and build would have ended (a build that ignored the
-- cancel would run to its end first, then the engine's preparation).
CREATE TABLE sparse_edges(src bigint, dst bigint);
INSERT INTO sparse_edges
  SELECT g::bigint * 1537228672809, (g::bigint * 7919) % 3000017 * 1537228672809
  FROM generate_series(1, 3000000) g;
VACUUM sparse_edges;
SELECT count(*) FROM pagerank('sparse_edges', directed => false, top_k => 1);
CREATE TEMP TABLE load_time AS SELECT build_ms AS ms FROM powerrank_last_run();
SELECT ms > 200 AS long_enough FROM load_time;
UPDATE started SET at = clock_timestamp();
SELECT set_config('statement_timeout', round(ms / 8) || 'ms', false) IS NOT NULL AS timeout_set
  FROM load_time;
SELECT count(*) FROM pagerank('sparse_edges', directed => false, top_k => 1);
RESET statement_timeout;
SELECT clock_timestamp() - at < make_interval(secs => least(ms * 0.6, 2000) / 1000.0) AS prompt
  FROM started, load_time;
UPDATE started SET at = clock_timestamp();
SELECT set_config('statement_timeout', round(ms / 2) || 'ms', false) IS NOT NULL AS timeout_set
  FROM load_time;
SELECT count(*) FROM pagerank('sparse_edges', directed => false, top_k => 1);
RESET statement_timeout;
SELECT clock_timestamp() - at < make_interval(secs => least(ms * 0.9, 2000) / 1000.0) AS prompt
  FROM started, load_time;
-- the backend goes on
SELECT count(*) FROM pagerank('sparse_edges', directed => false, top_k => 3);
