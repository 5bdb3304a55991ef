-- The accelerated iteration (powerrank.mixing_depth), the bound powerrank_last_run() reports, and
-- the certified top-k (powerrank.stop_when_certified).
\set VERBOSITY default
SHOW powerrank.mixing_depth;
SHOW powerrank.stop_when_certified;

-- A graph whose plain iterations contract slowly: a ring of 3000 nodes, a chord from every
-- seventh node, and every tenth node pointing at one of ten hubs.
CREATE TABLE mix_edges(src bigint, dst bigint);
INSERT INTO mix_edges SELECT i, i % 3000 + 1 FROM generate_series(1, 3000) i;
INSERT INTO mix_edges SELECT i, (i * 37) % 3000 + 1 FROM generate_series(7, 3000, 7) i;
INSERT INTO mix_edges SELECT i, 5000 + i % 10 FROM generate_series(10, 3000, 10) i;
INSERT INTO mix_edges SELECT 5000 + i, i * 300 FROM generate_series(0, 9) i WHERE i > 0;

-- The answer to 1e-13 by plain power iteration.
SET powerrank.mixing_depth = 0;
CREATE TEMP TABLE mix_exact AS SELECT * FROM pagerank('mix_edges', tolerance => 1e-13);
SELECT mixed_steps, error_bound < 1e-11 AS tight_bound FROM powerrank_last_run();
CREATE TEMP TABLE mix_plain AS SELECT * FROM pagerank('mix_edges');
CREATE TEMP TABLE mix_plain_stats AS SELECT iterations, error_bound FROM powerrank_last_run();

-- Mixed (the default depth): fewer iterations, within the bound it reports of the exact answer,
-- and the bound is d / (1 - d) times the last L1 residual plus a rounding allowance.
RESET powerrank.mixing_depth;
CREATE TEMP TABLE mix_mixed AS SELECT * FROM pagerank('mix_edges');
SELECT r.converged, r.mixed_steps > 0 AS mixed, r.iterations < p.iterations AS fewer,
       (SELECT sum(abs(m.score - e.score)) FROM mix_mixed m JOIN mix_exact e USING (node))
         <= r.error_bound AS within_bound,
       abs(r.error_bound - 0.85 / 0.15 * r.residual) < 1e-12 AS bound_from_residual
FROM powerrank_last_run() r, mix_plain_stats p;
-- the plain answer is within its own bound too
SELECT (SELECT sum(abs(m.score - e.score)) FROM mix_plain m JOIN mix_exact e USING (node))
         <= error_bound AS plain_within_bound
FROM mix_plain_stats;
-- the same bits on a second run
SELECT count(*) AS differing FROM pagerank('mix_edges') p JOIN mix_mixed m USING (node)
WHERE p.score <> m.score;

-- RWR and personalized PageRank mix too; HITS reports no bound.
SELECT count(*) FROM rwr('mix_edges', 17);
SELECT algorithm, converged, mixed_steps > 0 AS mixed, error_bound > 0 AS bounded FROM powerrank_last_run();
SELECT count(*) FROM hits('mix_edges');
SELECT algorithm, converged, error_bound IS NULL AS no_bound, top_k_certified IS NULL AS not_asked
FROM powerrank_last_run();
SET powerrank.mixing_depth = 8;
SET powerrank.mixing_depth = -1;

-- Certified top-k: the ten hubs lead clearly; a run with top_k says its top-k is exact.
SELECT node FROM pagerank('mix_edges', top_k => 3) ORDER BY score DESC, node;
SELECT top_k_certified, top_k_ties FROM powerrank_last_run();
SELECT node FROM (SELECT * FROM mix_exact ORDER BY score DESC, node LIMIT 3) t ORDER BY score DESC, node;
-- Without top_k nothing is certified.
SELECT count(*) FROM pagerank('mix_edges');
SELECT top_k_certified IS NULL AS not_asked, top_k_ties IS NULL AS no_ties FROM powerrank_last_run();

-- Exact ties are reported, not iterated on: two hubs with identical in-links.
CREATE TABLE mix_tie(src bigint, dst bigint);
INSERT INTO mix_tie SELECT i, 1 FROM generate_series(10, 40) i;
INSERT INTO mix_tie SELECT i + 100, 2 FROM generate_series(10, 40) i;
INSERT INTO mix_tie SELECT 1, i FROM generate_series(10, 40) i;
INSERT INTO mix_tie SELECT 2, i + 100 FROM generate_series(10, 40) i;
SELECT count(*) FROM pagerank('mix_tie');
CREATE TEMP TABLE mix_tie_plain AS SELECT iterations FROM powerrank_last_run();
SELECT node FROM pagerank('mix_tie', top_k => 2) ORDER BY node;
SELECT r.top_k_certified, r.top_k_ties, r.converged, r.iterations = p.iterations AS no_extra
FROM powerrank_last_run() r, mix_tie_plain p;

-- stop_when_certified: RWR from a hub at a tight tolerance stops once its top-3 is certified,
-- before the tolerance, with the same top-3.
CREATE TEMP TABLE mix_rwr_full AS SELECT * FROM rwr('mix_edges', 5003, top_k => 3, tolerance => 1e-12);
CREATE TEMP TABLE mix_rwr_full_stats AS SELECT iterations, converged, top_k_certified FROM powerrank_last_run();
SET powerrank.stop_when_certified = on;
CREATE TEMP TABLE mix_rwr_early AS SELECT * FROM rwr('mix_edges', 5003, top_k => 3, tolerance => 1e-12);
SELECT r.top_k_certified, r.converged, f.converged AS full_converged,
       r.iterations < f.iterations AS fewer
FROM powerrank_last_run() r, mix_rwr_full_stats f;
SELECT count(*) AS same_top FROM mix_rwr_early e JOIN mix_rwr_full f USING (node);
RESET powerrank.stop_when_certified;

DROP TABLE mix_edges, mix_tie;
