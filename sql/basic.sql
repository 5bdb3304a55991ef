-- Small graphs whose scores are known in closed form; every check prints t when the extension's
-- result equals the hand-derived value (to 1e-9, the runs use tolerance 1e-14).
\set tight 'tolerance => 1e-14'

-- 2-cycle 1 <-> 2: both 1/2.
CREATE TABLE cycle2(src bigint, dst bigint);
INSERT INTO cycle2 VALUES (1, 2), (2, 1);
SELECT node, abs(score - 0.5) < 1e-12 AS ok FROM pagerank('cycle2', :tight) ORDER BY node;

-- In-star: leaves 2..5 point at 1, which is dangling.  With a = 0.85:
--   center = (1 + 4a) / (5 + 4a), each leaf = (1 - center) / 4.
CREATE TABLE star(src bigint, dst bigint);
INSERT INTO star SELECT g, 1 FROM generate_series(2, 5) g;
SELECT node,
       abs(score - CASE WHEN node = 1 THEN (1 + 4 * 0.85) / (5 + 4 * 0.85)
                        ELSE (1 - (1 + 4 * 0.85) / (5 + 4 * 0.85)) / 4 END) < 1e-9 AS ok
FROM pagerank('star', :tight) ORDER BY node;
-- scores sum to 1
SELECT abs(sum(score) - 1) < 1e-12 AS sums_to_one FROM pagerank('star', :tight);
-- top_k: best first, ties (the leaves) by ascending node id
SELECT node, round(score::numeric, 6) FROM pagerank('star', top_k => 3);
-- top_k larger than the graph: every node, still ordered by score
SELECT node, round(score::numeric, 6) FROM pagerank('star', top_k => 100);

-- A dangling node: 1 -> 2 only.  x1 = 1 / (2 + a), x2 = (1 + a) / (2 + a).
CREATE TABLE dangling(src bigint, dst bigint);
INSERT INTO dangling VALUES (1, 2);
SELECT node,
       abs(score - CASE node WHEN 1 THEN 1 / 2.85 ELSE 1.85 / 2.85 END) < 1e-9 AS ok
FROM pagerank('dangling', :tight) ORDER BY node;
-- damping 0: every node gets 1/N at once
SELECT node, score FROM pagerank('dangling', damping => 0) ORDER BY node;

-- Duplicate rows are parallel edges: 1 -> 2 twice, 1 -> 3 once, 2 -> 1, 3 -> 1.
--   x1 = ((1 - a)/3 + a) / (1 + a), x2 = (1 - a)/3 + a * 2/3 * x1, x3 = (1 - a)/3 + a/3 * x1.
CREATE TABLE parallel(src bigint, dst bigint);
INSERT INTO parallel VALUES (1, 2), (1, 2), (1, 3), (2, 1), (3, 1);
WITH x1 AS (SELECT (0.15 / 3 + 0.85) / 1.85 AS v)
SELECT node,
       abs(score - CASE node WHEN 1 THEN x1.v
                             WHEN 2 THEN 0.05 + 0.85 * 2 / 3 * x1.v
                             ELSE 0.05 + 0.85 / 3 * x1.v END) < 1e-9 AS ok
FROM pagerank('parallel', :tight), x1 ORDER BY node;

-- The same split by weight: 1 -> 2 weight 2, 1 -> 3 weight 1 gives the same scores.
CREATE TABLE weighted(src bigint, dst bigint, w float8);
INSERT INTO weighted VALUES (1, 2, 2), (1, 3, 1), (2, 1, 1), (3, 1, 1);
SELECT bool_and(abs(p.score - w.score) < 1e-12) AS weight_equals_parallel_edges
FROM pagerank('parallel', :tight) p
JOIN pagerank('weighted', :tight, weight_column => 'w') w USING (node);
-- A weighted split 3:1: x2 = (1-a)/3 + a * 3/4 * x1, x3 = (1-a)/3 + a/4 * x1.
UPDATE weighted SET w = 3 WHERE src = 1 AND dst = 2;
WITH x1 AS (SELECT (0.15 / 3 + 0.85) / 1.85 AS v)
SELECT node,
       abs(score - CASE node WHEN 1 THEN x1.v
                             WHEN 2 THEN 0.05 + 0.85 * 3 / 4 * x1.v
                             ELSE 0.05 + 0.85 / 4 * x1.v END) < 1e-9 AS ok
FROM pagerank('weighted', :tight, weight_column => 'w'), x1 ORDER BY node;
-- A node whose out-weights are all 0 is dangling: same as dropping its edge.
UPDATE weighted SET w = 0 WHERE src = 3;
CREATE TABLE weighted_nozero AS SELECT * FROM weighted WHERE w > 0;
SELECT bool_and(abs(a.score - b.score) < 1e-12) AS zero_weight_is_dangling
FROM pagerank('weighted', :tight, weight_column => 'w') a
JOIN pagerank('weighted_nozero', :tight, weight_column => 'w') b USING (node);

-- Self-loop kept: 1 -> 1, 1 -> 2, 2 -> 1.  x2 = 1 / (2 + a), x1 = 1 - x2.
CREATE TABLE selfloop(src bigint, dst bigint);
INSERT INTO selfloop VALUES (1, 1), (1, 2), (2, 1);
SELECT node,
       abs(score - CASE node WHEN 1 THEN 1.85 / 2.85 ELSE 1 / 2.85 END) < 1e-9 AS ok
FROM pagerank('selfloop', :tight) ORDER BY node;

-- Undirected: the path 1 - 2 - 3.  x2 = ((1-a)/3 + a) / (1 + a), x1 = x3 = (1 - x2) / 2.
CREATE TABLE path3(src bigint, dst bigint);
INSERT INTO path3 VALUES (1, 2), (2, 3);
SELECT node,
       abs(score - CASE node WHEN 2 THEN (0.05 + 0.85) / 1.85
                             ELSE (1 - (0.05 + 0.85) / 1.85) / 2 END) < 1e-9 AS ok
FROM pagerank('path3', :tight, directed => false) ORDER BY node;
-- Undirected self-loop counted once: {1-1, 1-2} undirected equals the directed selfloop table.
CREATE TABLE selfloop_u(src bigint, dst bigint);
INSERT INTO selfloop_u VALUES (1, 1), (1, 2);
SELECT bool_and(abs(u.score - d.score) < 1e-12) AS undirected_selfloop_once
FROM pagerank('selfloop_u', :tight, directed => false) u
JOIN pagerank('selfloop', :tight) d USING (node);

-- Personalization: the 2-cycle restarting at node 1 only: x1 = 1 / (2 - 0.15) = 1 / 1.85.
SELECT node, abs(score - CASE node WHEN 1 THEN 1 / 1.85 ELSE 0.85 / 1.85 END) < 1e-9 AS ok
FROM pagerank('cycle2', :tight, personalization => ARRAY[1]) ORDER BY node;
-- ... and RWR from node 1 with restart 0.15 is the same walk.
SELECT node, abs(score - CASE node WHEN 1 THEN 1 / 1.85 ELSE 0.85 / 1.85 END) < 1e-9 AS ok
FROM rwr('cycle2', source => 1, tolerance => 1e-14) ORDER BY node;
-- RWR restart 0.5 from node 2: x2 = 1 / (2 - 0.5).
SELECT node, abs(score - CASE node WHEN 2 THEN 1 / 1.5 ELSE 0.5 / 1.5 END) < 1e-9 AS ok
FROM rwr('cycle2', 2, restart => 0.5, tolerance => 1e-14) ORDER BY node;
-- Personalized dangling mass goes to the personalization: the star restarting at leaf 2 only.
--   Leaves 3..5 get nothing; x1 = a * x2, x2 = a * x1 + (1 - a): x2 = 1 / (1 + a), x1 = a / (1 + a).
SELECT node,
       abs(score - CASE node WHEN 1 THEN 0.85 / 1.85 WHEN 2 THEN 1 / 1.85 ELSE 0 END) < 1e-9 AS ok
FROM pagerank('star', :tight, personalization => ARRAY[2]) ORDER BY node;

-- HITS on 1 -> 2, 1 -> 3, 2 -> 3 (golden ratio phi):
--   authority: 2 = 1 / (1 + phi), 3 = phi / (1 + phi); hub: 1 = phi / (1 + phi), 2 = 1 / (1 + phi).
CREATE TABLE tri(src bigint, dst bigint);
INSERT INTO tri VALUES (1, 2), (1, 3), (2, 3);
WITH phi AS (SELECT (1 + sqrt(5)) / 2 AS p)
SELECT node,
       abs(hub - CASE node WHEN 1 THEN p / (1 + p) WHEN 2 THEN 1 / (1 + p) ELSE 0 END) < 1e-9 AS hub_ok,
       abs(authority - CASE node WHEN 1 THEN 0 WHEN 2 THEN 1 / (1 + p) ELSE p / (1 + p) END) < 1e-9 AS authority_ok
FROM hits('tri', tolerance => 1e-14), phi ORDER BY node;
-- top_k ranks by authority
SELECT node, round(hub::numeric, 6) AS hub, round(authority::numeric, 6) AS authority
FROM hits('tri', top_k => 2);
-- An out-star 1 -> 2, 3, 4: hub 1 = 1, authorities 1/3.
CREATE TABLE outstar(src bigint, dst bigint);
INSERT INTO outstar VALUES (1, 2), (1, 3), (1, 4);
SELECT node, round(hub::numeric, 9) AS hub, round(authority::numeric, 9) AS authority
FROM hits('outstar') ORDER BY node;
-- Undirected HITS (a triangle 1-2-3 with a pendant 3-4, not bipartite): hub = authority.
CREATE TABLE kite(src bigint, dst bigint);
INSERT INTO kite VALUES (1, 2), (2, 3), (3, 1), (3, 4);
SELECT bool_and(abs(hub - authority) < 1e-9) AS hub_equals_authority,
       abs(sum(hub) - 1) < 1e-12 AS hubs_sum_to_one
FROM hits('kite', tolerance => 1e-14, directed => false);

-- Other column names and types, quoted and schema-qualified names.
CREATE SCHEMA "Graph Data";
CREATE TABLE "Graph Data"."Edge Table"("from node" integer, "to node" smallint, "W" numeric);
INSERT INTO "Graph Data"."Edge Table" SELECT src, dst, w FROM weighted;
SELECT bool_and(abs(a.score - b.score) < 1e-12) AS quoted_names_ok
FROM pagerank('"Graph Data"."Edge Table"', :tight, src_column => 'from node',
              dst_column => 'to node', weight_column => 'W') a
JOIN pagerank('weighted', :tight, weight_column => 'w') b USING (node);
-- integer weights
CREATE TABLE intweights(src int, dst int, w int);
INSERT INTO intweights VALUES (1, 2, 2), (1, 3, 1), (2, 1, 1), (3, 1, 1);
SELECT bool_and(abs(a.score - b.score) < 1e-12) AS int_weight_equals_parallel_edges
FROM pagerank('intweights', :tight, weight_column => 'w') a
JOIN pagerank('parallel', :tight) b USING (node);
-- a view works as well
CREATE VIEW cycle2_view AS SELECT dst AS src, src AS dst FROM cycle2;
SELECT node, round(score::numeric, 9) FROM pagerank('cycle2_view') ORDER BY node;

-- Stopping norms: all three converge to the same scores.
SELECT n.norm, bool_and(abs(p.score - ref.score) < 1e-6) AS close
FROM (VALUES ('l1'), ('l1_scaled'), ('linf')) n(norm),
     LATERAL pagerank('parallel', norm => n.norm) p
JOIN pagerank('parallel', :tight) ref USING (node)
GROUP BY n.norm ORDER BY n.norm;

-- Large node ids (bigint range, negative too) keep their identity.
CREATE TABLE bigids(src bigint, dst bigint);
INSERT INTO bigids VALUES (-9223372036854775808, 9223372036854775807),
                          (9223372036854775807, -9223372036854775808), (0, 9223372036854775807);
SELECT node, round(score::numeric, 6) FROM pagerank('bigids') ORDER BY node;

-- The README's first example: distinct scores, the top 10 as NetworkX ranks them
-- (nx.pagerank(MultiDiGraph, 0.85, tol=1e-13), unweighted), each to 1e-9.
CREATE TABLE readme_edges (src bigint, dst bigint, weight float8);
INSERT INTO readme_edges SELECT g % 100, (g / (1 + g % 10)) % 100, 1 + g % 3
FROM generate_series(1, 1000) g;
SELECT count(DISTINCT round(score::numeric, 12)) >= 90 AS distinct_scores FROM pagerank('readme_edges', 0.85);
WITH nx(rank, node, score) AS (VALUES
    (1, 0, 0.079310992941), (2, 20, 0.065028641485), (3, 10, 0.06334438355),
    (4, 40, 0.05964792484), (5, 30, 0.058693506277), (6, 50, 0.056653375392),
    (7, 60, 0.052789607034), (8, 80, 0.052227671207), (9, 70, 0.050437101125),
    (10, 90, 0.048518243305)),
top AS (SELECT row_number() OVER () AS rank, node, score
        FROM pagerank('readme_edges', 0.85, top_k => 10, :tight))
SELECT nx.rank, top.node = nx.node AS same_node, abs(top.score - nx.score) < 1e-9 AS same_score
FROM nx JOIN top USING (rank) ORDER BY nx.rank;
