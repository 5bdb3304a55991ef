-- NetworkX's own link-analysis tests (networkx/algorithms/link_analysis/tests/test_pagerank.py and
-- test_hits.py, Debian's python3-networkx), ported: the same graphs and arguments, and the
-- expected values quoted literally from those files.  NetworkX's tests compare with abs=1e-4;
-- here each row shows our score rounded to 4 places, NetworkX's literal value and whether they
-- are within 1e-4.  NetworkX's string node "3" (the multigraph test) is node 4 here.

CREATE TABLE nx_expected(test text, node bigint, score float8, PRIMARY KEY (test, node));

-- test_pagerank.py, TestPageRank.setup_class: the Langville-Meyer example (node 2 is dangling).
CREATE TABLE lm_pagerank(src bigint, dst bigint);
INSERT INTO lm_pagerank VALUES (1, 2), (1, 3), (3, 1), (3, 2), (3, 5), (4, 5), (4, 6), (5, 4),
  (5, 6), (6, 4);
-- G.pagerank = dict(zip(sorted(G), [0.03721197, 0.05395735, 0.04150565, 0.37508082,
--                                    0.20599833, 0.28624589]))
INSERT INTO nx_expected VALUES ('pagerank', 1, 0.03721197), ('pagerank', 2, 0.05395735),
  ('pagerank', 3, 0.04150565), ('pagerank', 4, 0.37508082), ('pagerank', 5, 0.20599833),
  ('pagerank', 6, 0.28624589);

-- test_pagerank: alg(G, alpha=0.9, tol=1.0e-08)
SELECT r.node, round(r.score::numeric, 4) AS score, e.score AS networkx,
       abs(r.score - e.score) < 1e-4 AS ok
FROM pagerank('lm_pagerank', damping => 0.9, tolerance => 1e-8, norm => 'l1_scaled') r
JOIN nx_expected e ON e.test = 'pagerank' AND e.node = r.node ORDER BY r.node;
-- the same through a rankgraph
SELECT bool_and(abs(r.score - e.score) < 1e-4) AS all_ok, count(*) AS nodes
FROM (SELECT powerrank_graph(src, dst) AS g FROM lm_pagerank) s,
     pagerank(s.g, damping => 0.9, tolerance => 1e-8, norm => 'l1_scaled') r
JOIN nx_expected e ON e.test = 'pagerank' AND e.node = r.node;

-- test_pagerank_max_iter: alg(G, max_iter=0) raises PowerIterationFailedConvergence.  Here
-- max_iterations must be >= 1, and a run that does not converge is an ERROR on request.
SELECT * FROM pagerank('lm_pagerank', max_iterations => 0);
SELECT * FROM pagerank('lm_pagerank', max_iterations => 1, require_convergence => true);

-- test_personalization: G = nx.complete_graph(4), personalize = {0: 1, 1: 1, 2: 4, 3: 4},
-- answer = {0: 0.23246732615667579, 1: 0.23246732615667579, 2: 0.267532673843324,
--           3: 0.2675326738433241}
CREATE TABLE k4(src bigint, dst bigint);
INSERT INTO k4 SELECT a, b FROM generate_series(0, 3) a, generate_series(0, 3) b WHERE a < b;
INSERT INTO nx_expected VALUES ('personalization', 0, 0.23246732615667579),
  ('personalization', 1, 0.23246732615667579), ('personalization', 2, 0.267532673843324),
  ('personalization', 3, 0.2675326738433241);
SELECT r.node, round(r.score::numeric, 4) AS score, e.score AS networkx,
       abs(r.score - e.score) < 1e-4 AS ok
FROM pagerank('k4', damping => 0.85, directed => false, personalization => ARRAY[0, 1, 2, 3],
              personalization_weights => ARRAY[1, 1, 4, 4]) r
JOIN nx_expected e ON e.test = 'personalization' AND e.node = r.node ORDER BY r.node;
-- the same through a rankgraph, and with the weights scaled (only their ratios matter)
SELECT bool_and(abs(r.score - e.score) < 1e-4) AS all_ok, count(*) AS nodes
FROM (SELECT powerrank_graph(src, dst) AS g FROM (SELECT src, dst FROM k4
      UNION ALL SELECT dst, src FROM k4) u) s,
     pagerank(s.g, personalization => ARRAY[3, 2, 1, 0],
              personalization_weights => ARRAY[0.4, 0.4, 0.1, 0.1]) r
JOIN nx_expected e ON e.test = 'personalization' AND e.node = r.node;

-- test_zero_personalization_vector: personalize = {0: 0, 1: 0, 2: 0, 3: 0} raises
-- ZeroDivisionError; here an ERROR.
SELECT * FROM pagerank('k4', directed => false, personalization => ARRAY[0, 1, 2, 3],
                       personalization_weights => ARRAY[0, 0, 0, 0]);

-- test_one_nonzero_personalization_value: personalize = {0: 0, 1: 0, 2: 0, 3: 1},
-- answer = {0: 0.22077931820379187, 1: 0.22077931820379187, 2: 0.22077931820379187,
--           3: 0.3376620453886241}
INSERT INTO nx_expected VALUES ('one_nonzero', 0, 0.22077931820379187),
  ('one_nonzero', 1, 0.22077931820379187), ('one_nonzero', 2, 0.22077931820379187),
  ('one_nonzero', 3, 0.3376620453886241);
SELECT r.node, round(r.score::numeric, 4) AS score, e.score AS networkx,
       abs(r.score - e.score) < 1e-4 AS ok
FROM pagerank('k4', damping => 0.85, directed => false, personalization => ARRAY[0, 1, 2, 3],
              personalization_weights => ARRAY[0, 0, 0, 1]) r
JOIN nx_expected e ON e.test = 'one_nonzero' AND e.node = r.node ORDER BY r.node;

-- test_incomplete_personalization: personalize = {3: 1}, the same answer as above.
SELECT r.node, round(r.score::numeric, 4) AS score, e.score AS networkx,
       abs(r.score - e.score) < 1e-4 AS ok
FROM pagerank('k4', damping => 0.85, directed => false, personalization => ARRAY[3]) r
JOIN nx_expected e ON e.test = 'one_nonzero' AND e.node = r.node ORDER BY r.node;
SELECT bool_and(abs(r.score - e.score) < 1e-4) AS weighted_single_ok
FROM pagerank('k4', directed => false, personalization => ARRAY[3],
              personalization_weights => ARRAY[7]) r
JOIN nx_expected e ON e.test = 'one_nonzero' AND e.node = r.node;

-- test_empty: nx.pagerank(nx.Graph()) == {}
CREATE TABLE nx_empty(src bigint, dst bigint);
SELECT count(*) AS rows FROM pagerank('nx_empty');
SELECT count(*) AS rows FROM hits('nx_empty');

-- test_multigraph: G = nx.MultiGraph(), edges [(1, 2), (1, 2), (1, 2), (2, 3), (2, 3),
-- ("3", 3), ("3", 3)]; answer = {1: 0.21066048614468322, 2: 0.3395308825985378,
-- 3: 0.28933951385531687, "3": 0.16046911740146227}.  Parallel edges count once each.
CREATE TABLE nx_multi(src bigint, dst bigint);
INSERT INTO nx_multi VALUES (1, 2), (1, 2), (1, 2), (2, 3), (2, 3), (4, 3), (4, 3);
INSERT INTO nx_expected VALUES ('multigraph', 1, 0.21066048614468322),
  ('multigraph', 2, 0.3395308825985378), ('multigraph', 3, 0.28933951385531687),
  ('multigraph', 4, 0.16046911740146227);
SELECT r.node, round(r.score::numeric, 4) AS score, e.score AS networkx,
       abs(r.score - e.score) < 1e-4 AS ok
FROM pagerank('nx_multi', directed => false) r
JOIN nx_expected e ON e.test = 'multigraph' AND e.node = r.node ORDER BY r.node;

-- test_hits.py, TestHITS.setup_class: edges [(1, 3), (1, 5), (2, 1), (3, 5), (5, 4), (5, 3),
-- (6, 5)]; G.a = dict(zip(sorted(G), [0.000000, 0.000000, 0.366025, 0.133975, 0.500000,
-- 0.000000])); G.h = dict(zip(sorted(G), [0.366025, 0.000000, 0.211325, 0.000000, 0.211325,
-- 0.211325])).  test_hits: hits_alg(G, tol=1.0e-08).
CREATE TABLE lm_hits(src bigint, dst bigint);
INSERT INTO lm_hits VALUES (1, 3), (1, 5), (2, 1), (3, 5), (5, 4), (5, 3), (6, 5);
CREATE TABLE nx_expected_hits(node bigint PRIMARY KEY, hub float8, authority float8);
INSERT INTO nx_expected_hits VALUES (1, 0.366025, 0.000000), (2, 0.000000, 0.000000),
  (3, 0.211325, 0.366025), (4, 0.000000, 0.133975), (5, 0.211325, 0.500000),
  (6, 0.211325, 0.000000);
SELECT r.node, round(r.hub::numeric, 4) AS hub, e.hub AS networkx_hub,
       round(r.authority::numeric, 4) AS authority, e.authority AS networkx_authority,
       abs(r.hub - e.hub) < 1e-4 AND abs(r.authority - e.authority) < 1e-4 AS ok
FROM hits('lm_hits', tolerance => 1e-8, norm => 'l1_scaled') r
JOIN nx_expected_hits e USING (node) ORDER BY r.node;

-- test_hits_not_convergent: G = nx.path_graph(50); _hits_python(G, max_iter=1) raises
-- PowerIterationFailedConvergence; here an ERROR on request.
CREATE TABLE nx_path50(src bigint, dst bigint);
INSERT INTO nx_path50 SELECT i, i + 1 FROM generate_series(0, 48) i;
SELECT * FROM hits('nx_path50', directed => false, max_iterations => 1,
                   require_convergence => true);

-- Beyond the suite: a HITS whose residual rises from iteration 4 to about 200 before it falls (two
-- nearly equal leading eigenvalues: a 10-leaf star in both directions, one more hub -3 -> 5).
-- NetworkX (_hits_python, tol 1e-12): hub 0 = 0.901086, hub -3 = 0.098914, the leaves' hubs 0;
-- authority 5 = 0.109772, the other leaves 0.098914, authority 0 = 0.  The run converges after
-- some 1700 iterations; it does not stop at the rise.
CREATE TABLE rising_hits(src bigint, dst bigint);
INSERT INTO rising_hits SELECT 0, i FROM generate_series(1, 10) i;
INSERT INTO rising_hits SELECT i, 0 FROM generate_series(1, 10) i;
INSERT INTO rising_hits VALUES (-3, 5);
CREATE TABLE rising_result AS SELECT * FROM hits('rising_hits', tolerance => 1e-9,
                                                 max_iterations => 5000);
SELECT converged, iterations > 1000 AS past_the_rise FROM powerrank_last_run();
SELECT node, round(hub::numeric, 6) AS hub, round(authority::numeric, 6) AS authority
FROM rising_result WHERE node IN (-3, 0, 1, 5) ORDER BY node;

-- The weighted personalization of test_personalization on the GPU service (the test instance's
-- service runs the CPU engine 'cpu-test'): it receives the weights with the restart nodes.
SELECT r.node, round(r.score::numeric, 4) AS score, e.score AS networkx,
       abs(r.score - e.score) < 1e-4 AS ok
FROM pagerank('k4', damping => 0.85, directed => false, personalization => ARRAY[0, 1, 2, 3],
              personalization_weights => ARRAY[1, 1, 4, 4], device => 'gpu') r
JOIN nx_expected e ON e.test = 'personalization' AND e.node = r.node ORDER BY r.node;
SELECT engine FROM powerrank_last_run();

-- Bad personalization_weights: each an ERROR with a hint.
SELECT * FROM pagerank('k4', personalization_weights => ARRAY[1, 4]);
SELECT * FROM pagerank('k4', personalization => ARRAY[0, 1], personalization_weights => ARRAY[1]);
SELECT * FROM pagerank('k4', personalization => ARRAY[0, 1], personalization_weights => ARRAY[1, -1]);
SELECT * FROM pagerank('k4', personalization => ARRAY[0, 1], personalization_weights => '{1, NaN}');
SELECT * FROM pagerank('k4', personalization => ARRAY[0, 1], personalization_weights => '{1, Infinity}');
SELECT * FROM pagerank('k4', personalization => ARRAY[0, 1], personalization_weights => ARRAY[1, NULL]);
SELECT * FROM pagerank('k4', personalization => ARRAY[0, 1], personalization_weights => ARRAY[[1, 2]]);
-- a node of weight 0 must still be in the graph
SELECT * FROM pagerank('k4', personalization => ARRAY[0, 99], personalization_weights => ARRAY[1, 0]);
-- huge weights: only their ratios matter
SELECT bool_and(abs(r.score - e.score) < 1e-4) AS huge_ok
FROM pagerank('k4', directed => false, personalization => ARRAY[0, 1, 2, 3],
              personalization_weights => ARRAY[1e308, 1e308, 2.5e307, 2.5e307]) r
JOIN nx_expected e ON e.test = 'personalization' AND e.node = 3 - r.node;

-- test_dangling_pagerank: alg(self.G, dangling=self.dangling_edges) with
-- dangling_edges = {1: 2, 2: 3, 3: 0, 4: 0, 5: 0, 6: 0} (node 2's mass goes 2:3 to nodes 1 and 2);
-- G.dangling_pagerank = dict(zip(sorted(G), [0.10844518, 0.18618601, 0.0710892, 0.2683668,
--                                            0.15919783, 0.20671497]))
INSERT INTO nx_expected VALUES ('dangling', 1, 0.10844518), ('dangling', 2, 0.18618601),
  ('dangling', 3, 0.0710892), ('dangling', 4, 0.2683668), ('dangling', 5, 0.15919783),
  ('dangling', 6, 0.20671497);
SELECT r.node, round(r.score::numeric, 4) AS score, e.score AS networkx,
       abs(r.score - e.score) < 1e-4 AS ok
FROM pagerank('lm_pagerank', dangling => ARRAY[1, 2, 3, 4, 5, 6],
              dangling_weights => ARRAY[2, 3, 0, 0, 0, 0]) r
JOIN nx_expected e ON e.test = 'dangling' AND e.node = r.node ORDER BY r.node;
SELECT engine FROM powerrank_last_run();
-- the same through a rankgraph, with only the nodes of positive weight, in another order
SELECT bool_and(abs(r.score - e.score) < 1e-4) AS all_ok, count(*) AS nodes
FROM (SELECT powerrank_graph(src, dst) AS g FROM lm_pagerank) s,
     pagerank(s.g, dangling => ARRAY[2, 1], dangling_weights => ARRAY[0.6, 0.4]) r
JOIN nx_expected e ON e.test = 'dangling' AND e.node = r.node;
-- the default (no dangling) still sends the dangling mass uniformly: the Langville-Meyer values
-- at alpha 0.9 (above) are not the dangling ones
SELECT bool_and(abs(r.score - e.score) < 1e-4) AS default_unchanged
FROM pagerank('lm_pagerank', damping => 0.9, tolerance => 1e-8) r
JOIN nx_expected e ON e.test = 'pagerank' AND e.node = r.node;

-- RWR with a dangling distribution, hand-computed on 1 -> 2 (node 2 dangling), restart c = 0.15:
-- by default node 2's mass returns to the source 1: x1 = c + (1 - c) x2, x2 = (1 - c) x1, so
-- x1 = c / (1 - (1 - c)^2) = 0.15 / 0.2775 = 0.540540..., x2 = 0.459459...; with dangling => {2}
-- it stays on 2: x1 = c = 0.15, x2 = 0.85.
CREATE TABLE one_edge(src bigint, dst bigint);
INSERT INTO one_edge VALUES (1, 2);
SELECT node, round(score::numeric, 6) AS score FROM rwr('one_edge', 1, tolerance => 1e-10) ORDER BY node;
SELECT node, round(score::numeric, 6) AS score
FROM rwr('one_edge', 1, tolerance => 1e-10, dangling => ARRAY[2]) ORDER BY node;
SELECT source, node, round(score::numeric, 6) AS score
FROM rwr((SELECT powerrank_graph(src, dst) FROM one_edge), ARRAY[1, 2], tolerance => 1e-10,
         dangling => ARRAY[1, 2], dangling_weights => ARRAY[0, 1]) ORDER BY source, node;
-- rwr and pagerank with the same restart and dangling distributions agree
SELECT max(abs(a.score - b.score)) < 1e-9 AS rwr_is_pagerank
FROM rwr('lm_pagerank', 3, tolerance => 1e-11, dangling => ARRAY[1, 6],
         dangling_weights => ARRAY[1, 3]) a
JOIN pagerank('lm_pagerank', tolerance => 1e-11, personalization => ARRAY[3],
              dangling => ARRAY[1, 6], dangling_weights => ARRAY[1, 3]) b USING (node);

-- The GPU service's engines send the dangling mass where the walk restarts: device => 'gpu' is
-- an ERROR, device => 'auto' runs on the CPU engine (and says why when the service would have
-- been used).
SELECT * FROM pagerank('lm_pagerank', dangling => ARRAY[2], device => 'gpu');
SELECT * FROM rwr('lm_pagerank', 1, dangling => ARRAY[2], device => 'gpu');
SET powerrank.gpu_min_edges = 0;
SELECT bool_and(abs(r.score - e.score) < 1e-4) AS all_ok
FROM pagerank('lm_pagerank', dangling => ARRAY[1, 2], dangling_weights => ARRAY[2, 3]) r
JOIN nx_expected e ON e.test = 'dangling' AND e.node = r.node;
SELECT engine, fallback FROM powerrank_last_run();
RESET powerrank.gpu_min_edges;

-- Bad dangling arguments.
SELECT * FROM pagerank('lm_pagerank', dangling_weights => ARRAY[1]);
SELECT * FROM pagerank('lm_pagerank', dangling => ARRAY[1, 2], dangling_weights => ARRAY[1]);
SELECT * FROM pagerank('lm_pagerank', dangling => ARRAY[2, 2]);
SELECT * FROM pagerank('lm_pagerank', dangling => ARRAY[2, 99]);
SELECT * FROM rwr('lm_pagerank', 1, dangling => '{}');
SELECT * FROM rwr('lm_pagerank', 1, dangling => ARRAY[1], dangling_weights => ARRAY[-2]);
