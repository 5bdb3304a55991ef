-- Tolerances down to 1e-12 are reached on a hub that gathers 100000 leaves (about the smallest
-- star where plain sums stall: the residual stays at 3e-12 for 1000 iterations) and on one of
-- 1000000 leaves, and a tolerance below what double precision reaches ends early with a WARNING
-- that says so.
CREATE TABLE star_in AS SELECT g::bigint AS src, 0::bigint AS dst FROM generate_series(1, 100000) g;
CREATE TABLE star_out AS SELECT 0::bigint AS src, g::bigint AS dst FROM generate_series(1, 100000) g;

-- leaves -> hub (the hub is dangling): h = (1 + M d) / (1 + M + M d), each leaf (1 - h) / M.
-- The L1 distance to these scores is below the tolerance's bound tol * d / (1 - d).
\set M 100000
\set d 0.85
CREATE VIEW star_in_exact AS
SELECT 0::bigint AS node, (1 + :M * :d) / (1 + :M + :M * :d) AS score
UNION ALL
SELECT g, (1 - (1 + :M * :d) / (1 + :M + :M * :d)) / :M FROM generate_series(1, :M) g;
SELECT count(*) AS nodes, sum(abs(p.score - x.score)) < 1e-12 * :d / (1 - :d) AS within_bound
FROM pagerank('star_in', tolerance => 1e-12, device => 'cpu') p JOIN star_in_exact x USING (node);
SELECT iterations < 300 AS few_iterations, converged, residual < 1e-12 AS below
FROM powerrank_last_run();
SELECT sum(abs(p.score - x.score)) < 1e-14 * :d / (1 - :d) AS within_bound
FROM pagerank('star_in', tolerance => 1e-14, device => 'cpu') p JOIN star_in_exact x USING (node);
SELECT converged FROM powerrank_last_run();

-- hub -> leaves (the leaves are dangling): h = 1 / (M + 1 + d), each leaf (1 - h) / M
SELECT count(*) AS nodes,
       sum(abs(p.score - CASE WHEN node = 0 THEN 1 / (:M + 1 + :d)
                              ELSE (1 - 1 / (:M + 1 + :d)) / :M END)) < 1e-12 * :d / (1 - :d) AS within_bound
FROM pagerank('star_out', tolerance => 1e-12, device => 'cpu') p;
SELECT converged, residual < 1e-12 AS below FROM powerrank_last_run();

-- below the rounding floor: stops early, with a WARNING (an ERROR with require_convergence); plain
-- iterations (mixed ones extrapolate the star's fixed point below 1e-15 and converge)
SET powerrank.mixing_depth = 0;
SELECT count(*) FROM pagerank('star_in', tolerance => 1e-15, device => 'cpu');
SELECT iterations < 400 AS early, converged FROM powerrank_last_run();
SELECT count(*) FROM pagerank('star_in', tolerance => 1e-15, device => 'cpu', require_convergence => true);
-- the GPU service's run stops the same way
SELECT count(*) FROM pagerank('star_in', tolerance => 1e-15, device => 'gpu');
SELECT engine, iterations < 400 AS early, converged FROM powerrank_last_run();

RESET powerrank.mixing_depth;

-- 1000000 leaves -> hub at 1e-12 (with plain sums the residual stays at 3.6e-11 for 1000
-- iterations); the hub within the error bound of (1 + M d) / (1 + M + M d)
CREATE TABLE star_1m AS SELECT g::bigint AS src, 0::bigint AS dst FROM generate_series(1, 1000000) g;
SELECT node, abs(score - (1 + 1e6 * :d) / (1 + 1e6 + 1e6 * :d)) < 1e-12 * :d / (1 - :d) AS hub_ok
FROM pagerank('star_1m', tolerance => 1e-12, device => 'cpu', top_k => 1);
SELECT iterations < 300 AS few_iterations, converged, residual < 1e-12 AS below
FROM powerrank_last_run();
DROP TABLE star_1m;
