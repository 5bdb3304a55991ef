-- pgTAP: results on small graphs against closed-form values (a = 0.85).
BEGIN;
SELECT plan(14);

CREATE TABLE cycle2(src bigint, dst bigint);
INSERT INTO cycle2 VALUES (1, 2), (2, 1);
CREATE TABLE star(src int, dst int);
INSERT INTO star SELECT g, 1 FROM generate_series(2, 5) g;
CREATE TABLE dangling(src bigint, dst bigint);
INSERT INTO dangling VALUES (1, 2);
CREATE TABLE tri(src bigint, dst bigint);
INSERT INTO tri VALUES (1, 2), (1, 3), (2, 3);
CREATE TABLE multi(src bigint, dst bigint);
INSERT INTO multi VALUES (1, 2), (1, 2), (1, 3), (2, 1), (3, 1);

SELECT results_eq(
  $$SELECT node, round(score::numeric, 12) FROM pagerank('cycle2', tolerance => 1e-14)$$,
  $$VALUES (1::bigint, 0.5::numeric), (2, 0.5)$$,
  '2-cycle: 1/2 each');
SELECT results_eq(
  $$SELECT node, round(score::numeric, 10) FROM pagerank('star', tolerance => 1e-14)$$,
  $$SELECT n::bigint, round(CASE n WHEN 1 THEN 4.4 / 8.4 ELSE (1 - 4.4 / 8.4) / 4 END, 10)
    FROM generate_series(1, 5) n$$,
  'in-star with a dangling center: (1 + 4a) / (5 + 4a)');
SELECT results_eq(
  $$SELECT node FROM pagerank('star', top_k => 3)$$,
  $$VALUES (1::bigint), (2), (3)$$,
  'top_k: by score, ties by node id');
SELECT results_eq(
  $$SELECT node, round(score::numeric, 10) FROM pagerank('dangling', tolerance => 1e-14)$$,
  $$VALUES (1::bigint, round(1 / 2.85, 10)), (2, round(1.85 / 2.85, 10))$$,
  'dangling node: 1 / (2 + a)');
SELECT results_eq(
  $$SELECT node, round(score::numeric, 10) FROM pagerank('multi', tolerance => 1e-14)$$,
  $$SELECT * FROM (VALUES (1::bigint, round(0.9 / 1.85, 10)),
                          (2, round(0.05 + 0.85 * 2 / 3 * 0.9 / 1.85, 10)),
                          (3, round(0.05 + 0.85 / 3 * 0.9 / 1.85, 10))) v$$,
  'duplicate rows are parallel edges');
SELECT results_eq(
  $$SELECT node, round(score::numeric, 10) FROM rwr('cycle2', 1, tolerance => 1e-14)$$,
  $$VALUES (1::bigint, round(1 / 1.85, 10)), (2, round(0.85 / 1.85, 10))$$,
  'RWR on the 2-cycle: 1 / (2 - c)');
SELECT results_eq(
  $$SELECT node, round(score::numeric, 10)
    FROM pagerank('cycle2', tolerance => 1e-14, personalization => ARRAY[2])$$,
  $$VALUES (1::bigint, round(0.85 / 1.85, 10)), (2, round(1 / 1.85, 10))$$,
  'personalized PageRank = RWR');
SELECT results_eq(
  $$SELECT source, node, round(score::numeric, 10)
    FROM rwr('cycle2', ARRAY[2, 1], tolerance => 1e-14)$$,
  $$VALUES (2::bigint, 1::bigint, round(0.85 / 1.85, 10)), (2, 2, round(1 / 1.85, 10)),
           (1, 1, round(1 / 1.85, 10)), (1, 2, round(0.85 / 1.85, 10))$$,
  'many-source RWR: one block per source, in the order given');
SELECT results_eq(
  $$SELECT node, round(hub::numeric, 10), round(authority::numeric, 10)
    FROM hits('tri', tolerance => 1e-14)$$,
  $$SELECT * FROM (VALUES (1::bigint, round(((1 + sqrt(5)) / 2 / ((3 + sqrt(5)) / 2))::numeric, 10), 0::numeric),
           (2, round((1 / ((3 + sqrt(5)) / 2))::numeric, 10), round((1 / ((3 + sqrt(5)) / 2))::numeric, 10)),
           (3, 0, round(((1 + sqrt(5)) / 2 / ((3 + sqrt(5)) / 2))::numeric, 10))) v$$,
  'HITS on 1->2, 1->3, 2->3: golden ratio');
SELECT results_eq(
  $$SELECT node, round(score::numeric, 10)
    FROM pagerank((SELECT powerrank_graph(src, dst) FROM multi), tolerance => 1e-14)$$,
  $$SELECT node, round(score::numeric, 10) FROM pagerank('multi', tolerance => 1e-14)$$,
  'aggregate form equals table form');
SELECT results_eq(
  $$SELECT node, round(score::numeric, 10)
    FROM pagerank('cycle2', directed => false, tolerance => 1e-14)$$,
  $$VALUES (1::bigint, 0.5::numeric), (2, 0.5)$$,
  'undirected 2-cycle');
SELECT is((SELECT round(sum(score)::numeric, 12) FROM pagerank('star', tolerance => 1e-14)),
          1.000000000000, 'scores sum to 1');
SELECT results_eq(
  $$SELECT algorithm, engine, nodes, edges, skipped_rows, converged FROM powerrank_last_run()$$,
  $$VALUES ('pagerank'::text, 'cpu'::text, 5::bigint, 4::bigint, 0::bigint, true)$$,
  'powerrank_last_run describes the last run');
SELECT results_eq(
  $$SELECT rankgraph_summary(powerrank_graph(src, dst)) FROM multi$$,
  $$VALUES ('rankgraph(nodes=3, edges=5, weighted=f)'::text)$$,
  'rankgraph output');

SELECT * FROM finish();
ROLLBACK;
