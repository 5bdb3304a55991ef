-- powerrank_last_run(): the statistics of this session's last run; non-convergence reporting.
\set VERBOSITY default
-- A new session has run nothing yet.
SELECT count(*) FROM powerrank_last_run();

CREATE TABLE s_edges(src bigint, dst bigint, w float8);
INSERT INTO s_edges VALUES (1, 2, 1), (2, 1, 1), (2, 3, 1), (3, 1, 1), (NULL, 3, 1), (4, 1, NULL);

-- The 2-cycle converges in one iteration (the uniform start is its fixed point).
CREATE TABLE s_cycle(src bigint, dst bigint);
INSERT INTO s_cycle VALUES (1, 2), (2, 1);
SELECT count(*) FROM pagerank('s_cycle');
SELECT algorithm, engine, nodes, edges, skipped_rows, iterations, residual, norm, converged,
       build_ms >= 0 AS build_timed, iterate_ms >= 0 AS iterate_timed,
       total_ms >= build_ms AND total_ms >= iterate_ms AS total_covers
FROM powerrank_last_run();
-- read_ms: the part of build_ms spent reading the rows; prepare_ms: the part of iterate_ms the
-- engine spent preparing the graph.
SELECT read_ms > 0 AS read_timed, read_ms <= build_ms AS read_within_build,
       prepare_ms > 0 AS prepare_timed, prepare_ms <= iterate_ms AS prepare_within_iterate
FROM powerrank_last_run();

-- A run that needs several iterations; residual below the tolerance in the chosen norm.
SELECT count(*) FROM pagerank('s_edges', tolerance => 1e-9, norm => 'linf');
SELECT algorithm, nodes, edges, skipped_rows, iterations > 1 AS several, residual < 1e-9 AS below,
       norm, converged
FROM powerrank_last_run();
SELECT count(*) FROM pagerank('s_edges', weight_column => 'w', norm => 'l1_scaled');
SELECT nodes, edges, skipped_rows, residual < 3 * 1e-6 AS below_scaled, norm, converged
FROM powerrank_last_run();

-- HITS and RWR record their own algorithm name; undirected edges count twice.
SELECT count(*) FROM hits('s_edges', directed => false);
SELECT algorithm, nodes, edges, skipped_rows, converged FROM powerrank_last_run();
SELECT count(*) FROM rwr('s_edges', 2);
SELECT algorithm, nodes, edges, converged FROM powerrank_last_run();
SELECT count(*) FROM rwr('s_edges', ARRAY[1, 2, 3]);
SELECT algorithm, nodes, edges, converged FROM powerrank_last_run();

-- Not converging: the scores come back with a WARNING...
SELECT node, round(score::numeric, 4) FROM pagerank('s_edges', max_iterations => 3) ORDER BY node;
SELECT iterations, converged, residual > 1e-6 AS above FROM powerrank_last_run();
-- ... or an ERROR when asked, with the statistics still recorded.
SELECT * FROM pagerank('s_edges', max_iterations => 3, require_convergence => true);
SELECT iterations, converged FROM powerrank_last_run();
SELECT * FROM hits('s_edges', max_iterations => 2, require_convergence => true);
SELECT * FROM rwr('s_edges', 1, max_iterations => 2, require_convergence => true);
-- converging runs are fine with require_convergence
SELECT count(*) FROM pagerank('s_edges', require_convergence => true);
SELECT converged FROM powerrank_last_run();

-- The first iteration from the uniform start on the dangling graph 1 -> 2 changes each score by
-- a / 2 * (1/2) = 0.2125: l1 residual 0.425, linf 0.2125 (one iteration, max_iterations => 1).
CREATE TABLE s_dangling(src bigint, dst bigint);
INSERT INTO s_dangling VALUES (1, 2);
SELECT count(*) FROM pagerank('s_dangling', max_iterations => 1);
SELECT iterations, round(residual::numeric, 12) AS residual, converged FROM powerrank_last_run();
SELECT count(*) FROM pagerank('s_dangling', max_iterations => 1, norm => 'linf');
SELECT iterations, round(residual::numeric, 12) AS residual, converged FROM powerrank_last_run();
