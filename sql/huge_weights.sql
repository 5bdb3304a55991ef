-- Finite weights whose sums overflow a double (1e308 + 1e308) rank as NetworkX ranks the same
-- graph: the build scales all weights by one power of two, which changes no ranking.  Expected
-- values: test/reference/huge_weights.py (NetworkX on the rows with the weights scaled down, since
-- NetworkX's own float sums overflow on them too).
CREATE TABLE wt(src int8, dst int8, w float8);
INSERT INTO wt VALUES (1, 2, 1), (2, 3, 2), (3, 1, 1), (1, 3, 1e308), (1, 4, 1e308);
CREATE TABLE wt_expected(algorithm text, node int8, score float8);
INSERT INTO wt_expected VALUES
  ('pagerank', 1, 0.35638523546881573), ('pagerank', 2, 0.08849021152797132),
  ('pagerank', 3, 0.3151706164009943), ('pagerank', 4, 0.23995393660221856),
  ('ppr', 1, 0.2288519786985535), ('ppr', 2, 0.20232415417813251),
  ('ppr', 3, 0.2692376219982969), ('ppr', 4, 0.2995862451250171),
  ('rwr', 1, 0.5405405405405398), ('rwr', 2, 2.2972972972973e-309),
  ('rwr', 3, 0.2297297297297301), ('rwr', 4, 0.2297297297297301),
  ('hub', 1, 1.0), ('hub', 2, 1e-308), ('hub', 3, 0), ('hub', 4, 0),
  ('authority', 1, 0), ('authority', 2, 5e-309), ('authority', 3, 0.5), ('authority', 4, 0.5);

SET extra_float_digits = 0;

-- every algorithm, from the table and from a rankgraph
CREATE TABLE wt_got(source text, algorithm text, node int8, score float8);
INSERT INTO wt_got SELECT 'table', 'pagerank', node, score
  FROM pagerank('wt', weight_column => 'w', tolerance => 1e-12);
INSERT INTO wt_got SELECT 'table', 'ppr', node, score
  FROM pagerank('wt', weight_column => 'w', tolerance => 1e-12, personalization => '{2,4}');
INSERT INTO wt_got SELECT 'table', 'rwr', node, score
  FROM rwr('wt', 1, weight_column => 'w', tolerance => 1e-12);
INSERT INTO wt_got SELECT 'table', 'hub', node, hub
  FROM hits('wt', weight_column => 'w', tolerance => 1e-12);
INSERT INTO wt_got SELECT 'table', 'authority', node, authority
  FROM hits('wt', weight_column => 'w', tolerance => 1e-12);
CREATE TABLE wt_graph AS SELECT powerrank_graph(src, dst, w) AS g FROM wt;
INSERT INTO wt_got SELECT 'rankgraph', 'pagerank', r.node, r.score
  FROM wt_graph, pagerank(g, tolerance => 1e-12) r;
INSERT INTO wt_got SELECT 'rankgraph', 'ppr', r.node, r.score
  FROM wt_graph, pagerank(g, tolerance => 1e-12, personalization => '{2,4}') r;
INSERT INTO wt_got SELECT 'rankgraph', 'rwr', r.node, r.score
  FROM wt_graph, rwr(g, 1, tolerance => 1e-12) r;
INSERT INTO wt_got SELECT 'rankgraph, many sources', 'rwr', r.node, r.score
  FROM wt_graph, rwr(g, '{1}'::bigint[], tolerance => 1e-12) r;
INSERT INTO wt_got SELECT 'rankgraph', 'hub', r.node, r.hub
  FROM wt_graph, hits(g, tolerance => 1e-12) r;
INSERT INTO wt_got SELECT 'rankgraph', 'authority', r.node, r.authority
  FROM wt_graph, hits(g, tolerance => 1e-12) r;
SELECT g.source, g.algorithm, count(*) AS nodes, sum(g.score) AS sum,
       bool_and(abs(g.score - e.score) < 1e-9) AS matches_networkx
FROM wt_got g JOIN wt_expected e USING (algorithm, node)
GROUP BY g.source, g.algorithm ORDER BY g.algorithm, g.source;
-- the scores themselves (rounded)
SELECT algorithm, node, round(score::numeric, 12) AS score
FROM wt_got WHERE source = 'table' ORDER BY algorithm, node;

-- two sources of 1e308 into one node: its in-weight sum overflows (HITS's hub normalisation)
CREATE TABLE wt_in(src int8, dst int8, w float8);
INSERT INTO wt_in VALUES (6, 5, 1e308), (7, 5, 1e308), (5, 6, 1);
SELECT node, abs(r.hub - e.hub) < 1e-9 AS hub_ok,
       abs(r.authority - e.authority) < 1e-9 AS authority_ok
FROM hits('wt_in', weight_column => 'w', tolerance => 1e-12) r
JOIN (VALUES (5, 0.0, 1.0), (6, 0.5, 0.0), (7, 0.5, 0.0)) e(node, hub, authority) USING (node)
ORDER BY node;
SELECT node, abs(r.score - e.score) < 1e-9 AS matches_networkx
FROM pagerank('wt_in', weight_column => 'w', tolerance => 1e-12) r
JOIN (VALUES (5, 0.48648648648648557), (6, 0.4635135135135138), (7, 0.05)) e(node, score)
  USING (node)
ORDER BY node;

-- subnormal weights (5e-324 = 2^-1074): node 1's out-weight sum is subnormal, its reciprocal would
-- overflow; the build scales every weight up by one power of two (NetworkX on the rows times 2^60:
-- test/reference/huge_weights.py), from the table and from a rankgraph
CREATE TABLE wt_tiny(src int8, dst int8, w float8);
INSERT INTO wt_tiny VALUES (1, 2, 5e-324), (1, 3, 1e-323), (2, 1, 1e-310), (3, 2, 1);
SELECT node, abs(r.score - e.score) < 1e-9 AS matches_networkx
FROM pagerank('wt_tiny', weight_column => 'w', tolerance => 1e-12) r
JOIN (VALUES (1, 0.3677626876340242), (2, 0.37383845604002824), (3, 0.2583988563259474))
  e(node, score) USING (node)
ORDER BY node;
SELECT node, abs(r.score - e.score) < 1e-9 AS matches_networkx
FROM rwr((SELECT powerrank_graph(src, dst, w) FROM wt_tiny), 1, tolerance => 1e-12) r
JOIN (VALUES (1, 0.42887776983559645), (2, 0.32809149392423137), (3, 0.24303073624017196))
  e(node, score) USING (node)
ORDER BY node;
SELECT converged FROM powerrank_last_run();

-- weights so far apart that the scale needed pushes the smallest below the normal range: refused
CREATE TABLE wt_wide(src int8, dst int8, w float8);
INSERT INTO wt_wide VALUES (1, 3, 1e308), (1, 4, 1e308), (2, 3, 1e-307);
SELECT * FROM pagerank('wt_wide', weight_column => 'w');
SELECT powerrank_graph(src, dst, w) FROM wt_wide;
-- ... and a subnormal weight beside one too large to scale it up
INSERT INTO wt_tiny VALUES (3, 1, 1e300);
SELECT * FROM pagerank('wt_tiny', weight_column => 'w');

DROP TABLE wt, wt_expected, wt_got, wt_graph, wt_in, wt_wide, wt_tiny;
