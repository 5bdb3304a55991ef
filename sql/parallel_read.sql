-- The parallel read of the table form (graph_parallel_read.c): parallel workers scan disjoint
-- blocks under the leader's snapshot and send their rows to the leader.  With any number of
-- workers, with or without the leader scanning, the scores are bit-identical to the serial read,
-- the same NULL rows are skipped and counted, errors in a worker reach the caller, and the
-- tables the direct scan may not read still go through SPI.
SET extra_float_digits = 3;
-- workers for any table size
SET min_parallel_table_scan_size = 0;

-- 64000 edges over 3001 nodes; every eighth row is one of 39 (src, dst) pairs with its own
-- weight, so every block holds parallel edges whose weights add in table order; rows with a NULL
-- in each column: about 400 heap blocks.
CREATE TABLE pread_edges(src bigint, dst bigint, w float8);
INSERT INTO pread_edges
SELECT CASE WHEN i % 8 = 0 THEN i % 13 ELSE (i::bigint * 7919) % 3001 END,
       CASE WHEN i % 8 = 0 THEN 200 + i % 3 ELSE (i::bigint * 104729) % 2999 END,
       CASE WHEN i % 8 = 0 THEN 1.0 / (i % 97 + 1) + i * 1e-7 ELSE (i % 17) / 3.0 END
FROM generate_series(1, 64000) i;
INSERT INTO pread_edges VALUES (NULL, 1, 1), (1, NULL, 1), (1, 2, NULL), (NULL, NULL, NULL);

-- Runs one algorithm on pread_edges with a reader configuration into pread_results.
CREATE TABLE pread_results(config text, algo text, node bigint, score float8, score2 float8,
                           nodes bigint, edges bigint, skipped bigint);
CREATE FUNCTION pread_run(config text, workers int, leader bool) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('client_min_messages', 'warning', true);
    PERFORM set_config('powerrank.read_workers', workers::text, true);
    PERFORM set_config('parallel_leader_participation', leader::text, true);
    INSERT INTO pread_results(config, algo, node, score)
        SELECT config, 'pagerank', node, score FROM pagerank('pread_edges', tolerance => 1e-12);
    UPDATE pread_results SET nodes = s.nodes, edges = s.edges, skipped = s.skipped_rows
        FROM powerrank_last_run() s WHERE pread_results.config = pread_run.config
                                      AND algo = 'pagerank';
    INSERT INTO pread_results(config, algo, node, score)
        SELECT config, 'weighted', node, score
        FROM pagerank('pread_edges', weight_column => 'w', tolerance => 1e-12);
    UPDATE pread_results SET nodes = s.nodes, edges = s.edges, skipped = s.skipped_rows
        FROM powerrank_last_run() s WHERE pread_results.config = pread_run.config
                                      AND algo = 'weighted';
    INSERT INTO pread_results(config, algo, node, score, score2)
        SELECT config, 'hits', node, hub, authority
        FROM hits('pread_edges', weight_column => 'w', tolerance => 1e-12, max_iterations => 50);
    UPDATE pread_results SET nodes = s.nodes, edges = s.edges, skipped = s.skipped_rows
        FROM powerrank_last_run() s WHERE pread_results.config = pread_run.config
                                      AND algo = 'hits';
END $$;

SELECT pread_run('serial', 0, true);
SELECT pread_run('1 worker', 1, true);
SELECT pread_run('3 workers', 3, true);
SELECT pread_run('3 workers, leader waits', 3, false);
SELECT pread_run('default', -1, true);

-- every configuration against the serial read: same nodes, max |difference| = 0, same counts
SELECT p.config, p.algo, count(*) AS nodes, count(s.node) AS matched,
       max(abs(p.score - s.score)) AS max_diff,
       max(abs(coalesce(p.score2, 0) - coalesce(s.score2, 0))) AS max_diff2,
       bool_and(p.nodes = s.nodes AND p.edges = s.edges AND p.skipped = s.skipped) AS same_counts,
       max(p.edges) AS edges, max(p.skipped) AS skipped
FROM pread_results p LEFT JOIN pread_results s
     ON s.config = 'serial' AND s.algo = p.algo AND s.node = p.node
WHERE p.config <> 'serial'
GROUP BY p.config, p.algo ORDER BY p.config, p.algo;
SELECT algo, count(*) AS nodes FROM pread_results WHERE config = 'serial' GROUP BY algo ORDER BY algo;

-- the NOTICE about skipped rows is the same with workers
SET powerrank.read_workers = 3;
SELECT count(*) FROM pagerank('pread_edges', weight_column => 'w', top_k => 3);
SELECT nodes, edges, skipped_rows, read_ms > 0 AS timed FROM powerrank_last_run();

-- the workers see the leader's snapshot: rows inserted and deleted earlier in this transaction
BEGIN;
INSERT INTO pread_edges SELECT 5000 + i, 5001 + i, 1 FROM generate_series(1, 500) i;
DELETE FROM pread_edges WHERE src = 0;
SELECT count(*) AS table_rows, count(*) FILTER (WHERE src IS NOT NULL AND dst IS NOT NULL) AS edges
FROM pread_edges;
SELECT count(*) FROM pagerank('pread_edges', top_k => 3);
SELECT nodes, edges, skipped_rows FROM powerrank_last_run();
ROLLBACK;

-- invalid weights found by workers (the leader does not scan): the caller gets the serial scan's
-- error, about the first invalid weight in table order, and the session goes on
CREATE TABLE pread_bad AS
SELECT i::bigint AS src, i::bigint + 1 AS dst,
       CASE i WHEN 300 THEN -3::float8 WHEN 39000 THEN 'NaN'::float8 ELSE 1::float8 END::float8 AS w
FROM generate_series(1, 40000) i;
SET powerrank.read_workers = 0;
SELECT count(*) FROM pagerank('pread_bad', weight_column => 'w');
SET powerrank.read_workers = 3;
SET parallel_leader_participation = off;
SELECT count(*) FROM pagerank('pread_bad', weight_column => 'w');
RESET parallel_leader_participation;
SELECT count(*) FROM pagerank('pread_bad', weight_column => 'w');
UPDATE pread_bad SET w = 1 WHERE src = 300;
SET parallel_leader_participation = off;
SELECT count(*) FROM pagerank('pread_bad', weight_column => 'w');
-- an error inside a worker (a numeric weight beyond double precision) reaches the caller from
-- the worker that raised it: the workers did read the table
CREATE TABLE pread_num AS
SELECT i::bigint AS src, i::bigint + 1 AS dst, CASE WHEN i = 20000 THEN 1e400 ELSE 1 END::numeric AS w
FROM generate_series(1, 40000) i;
SELECT count(*) FROM pagerank('pread_num', weight_column => 'w');
SELECT count(*) FROM pagerank('pread_edges', top_k => 1);
SELECT count(*) AS parallel_workers_left FROM pg_stat_activity WHERE backend_type = 'parallel worker';
RESET parallel_leader_participation;

-- a cancel while reading or building: the usual error, no worker left, the session goes on
CREATE TABLE pread_big AS SELECT i::bigint AS src, (i::bigint * 7) % 400000 AS dst
FROM generate_series(1, 400000) i;
SET statement_timeout = '20ms';
SELECT count(*) FROM pagerank('pread_big', max_iterations => 100000, tolerance => 1e-300);
RESET statement_timeout;
SELECT count(*) AS parallel_workers_left FROM pg_stat_activity WHERE backend_type = 'parallel worker';
SELECT count(*) FROM pagerank('pread_big', top_k => 2);
SELECT nodes, edges FROM powerrank_last_run();

-- tables the direct scan may not read still go through SPI with workers asked for: a policy
-- that filters the caller, a view; a temporary table is read by the serial direct scan
CREATE ROLE regress_pread_reader;
CREATE TABLE pread_rls AS SELECT src, dst FROM pread_edges WHERE src IS NOT NULL AND dst IS NOT NULL;
ALTER TABLE pread_rls ENABLE ROW LEVEL SECURITY;
CREATE POLICY low_src ON pread_rls FOR SELECT USING (src < 1000);
GRANT SELECT ON pread_rls TO regress_pread_reader;
CREATE VIEW pread_view AS SELECT src, dst FROM pread_edges WHERE src < 1000;
GRANT SELECT ON pread_view TO regress_pread_reader;
SET ROLE regress_pread_reader;
SELECT count(*) AS visible_rows FROM pread_rls;
SELECT count(*) FROM pagerank('pread_rls', top_k => 1);
SELECT edges FROM powerrank_last_run();
SELECT count(*) FROM pagerank('pread_view', top_k => 1);
SELECT edges FROM powerrank_last_run();
RESET ROLE;
CREATE TEMP TABLE pread_temp AS SELECT * FROM pread_edges;
SELECT count(*) FROM pagerank('pread_temp', top_k => 1);
SELECT edges, skipped_rows FROM powerrank_last_run();

RESET powerrank.read_workers;
RESET min_parallel_table_scan_size;
DROP TABLE pread_rls, pread_big, pread_bad, pread_num;
DROP VIEW pread_view;
DROP ROLE regress_pread_reader;
