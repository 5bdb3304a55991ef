-- The powerrank_graph aggregate: over filters and joins, weighted, with NULL rows, stored in a
-- table, and in parallel (partial aggregation in workers, combined in the leader).
CREATE TABLE follows(src bigint, dst bigint, kind text, w float8);
INSERT INTO follows VALUES
  (1, 2, 'follows', 1), (2, 3, 'follows', 2), (3, 1, 'follows', 1), (3, 4, 'likes', 5),
  (4, 1, 'likes', 1), (5, 1, 'follows', 3), (1, 5, 'likes', 1), (2, 2, 'follows', 1);
CREATE TABLE people(id bigint PRIMARY KEY, active boolean);
INSERT INTO people VALUES (1, true), (2, true), (3, true), (4, false), (5, true);

-- A WHERE filter gives the same ranking as the table holding just the filtered rows.
CREATE TABLE follows_only AS SELECT src, dst FROM follows WHERE kind = 'follows';
SELECT rankgraph_summary(powerrank_graph(src, dst)) AS powerrank_graph FROM follows WHERE kind = 'follows';
SELECT bool_and(abs(a.score - b.score) < 1e-12) AS filter_ok, count(*) AS nodes
FROM pagerank((SELECT powerrank_graph(src, dst) FROM follows WHERE kind = 'follows')) a
JOIN pagerank('follows_only') b USING (node);

-- A join: only edges between active people.
CREATE TABLE active_edges AS
  SELECT f.src, f.dst, f.w FROM follows f
  JOIN people s ON s.id = f.src AND s.active JOIN people d ON d.id = f.dst AND d.active;
SELECT bool_and(abs(a.score - b.score) < 1e-12) AS join_ok, count(*) AS nodes
FROM pagerank((SELECT powerrank_graph(f.src, f.dst, f.w) FROM follows f
               JOIN people s ON s.id = f.src AND s.active
               JOIN people d ON d.id = f.dst AND d.active)) a
JOIN pagerank('active_edges', weight_column => 'w') b USING (node);

-- Weighted, for every algorithm, equals the table form.
CREATE TEMP TABLE g AS SELECT powerrank_graph(src, dst, w) AS graph FROM follows;
SELECT rankgraph_summary(graph) AS graph FROM g;
SELECT bool_and(abs(a.score - b.score) < 1e-12) AS pagerank_ok
FROM g, pagerank(graph, tolerance => 1e-12) a
JOIN pagerank('follows', tolerance => 1e-12, weight_column => 'w') b USING (node);
SELECT bool_and(abs(a.hub - b.hub) < 1e-12 AND abs(a.authority - b.authority) < 1e-12) AS hits_ok
FROM g, hits(graph, tolerance => 1e-12) a
JOIN hits('follows', tolerance => 1e-12, weight_column => 'w') b USING (node);
SELECT bool_and(abs(a.score - b.score) < 1e-12) AS rwr_ok
FROM g, rwr(graph, 3, tolerance => 1e-12) a
JOIN rwr('follows', 3, tolerance => 1e-12, weight_column => 'w') b USING (node);
SELECT bool_and(abs(a.score - b.score) < 1e-12) AS personalization_ok
FROM g, pagerank(graph, tolerance => 1e-12, personalization => ARRAY[2, 4]) a
JOIN pagerank('follows', tolerance => 1e-12, weight_column => 'w', personalization => ARRAY[2, 4]) b
USING (node);
-- top_k on a rankgraph
SELECT node, round(score::numeric, 6) FROM g, pagerank(graph, top_k => 2);

-- NULL rows are skipped and counted: NOTICE when the graph is built, skipped_rows in the stats.
CREATE TABLE with_nulls(src bigint, dst bigint, w float8);
INSERT INTO with_nulls VALUES (1, 2, 1), (2, 1, 1), (NULL, 1, 1), (1, NULL, 1), (2, 3, NULL);
SELECT rankgraph_summary(powerrank_graph(src, dst)) AS powerrank_graph FROM with_nulls;
SELECT rankgraph_summary(powerrank_graph(src, dst, w)) AS powerrank_graph FROM with_nulls;
SELECT count(*) FROM pagerank((SELECT powerrank_graph(src, dst, w) FROM with_nulls));
SELECT nodes, edges, skipped_rows FROM powerrank_last_run();

-- One graph per group.
SELECT kind, rankgraph_summary(powerrank_graph(src, dst)) AS powerrank_graph FROM follows GROUP BY kind ORDER BY kind;
SELECT kind, p.node, round(p.score::numeric, 6)
FROM (SELECT kind, powerrank_graph(src, dst) AS graph FROM follows GROUP BY kind) s,
     pagerank(s.graph, top_k => 1) p
ORDER BY kind;

-- A stored rankgraph (large enough to be compressed / toasted) is read back intact.
CREATE TABLE big_edges(src bigint, dst bigint, w float8);
INSERT INTO big_edges
  SELECT i, (i * 7919) % 20000 + 1, (i % 7) + 1 FROM generate_series(1, 200000) i;
INSERT INTO big_edges
  SELECT i, i % 20000 + 1, 1 FROM generate_series(1, 20000) i;
CREATE TABLE stored_graphs AS SELECT 'big' AS name, powerrank_graph(src, dst, w) AS graph FROM big_edges;
SELECT name, rankgraph_summary(graph) AS graph, pg_column_size(graph) > 100000 AS large
FROM stored_graphs;
SELECT count(*) AS nodes, bool_and(abs(a.score - b.score) < 1e-12) AS stored_graph_ok
FROM stored_graphs, pagerank(graph, tolerance => 1e-10) a
JOIN pagerank('big_edges', tolerance => 1e-10, weight_column => 'w') b USING (node);

-- Parallel aggregation: force a parallel plan over big_edges.
CREATE FUNCTION workers_launched(query text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  line text;
  launched int := 0;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || query LOOP
    IF line ~ 'Workers Launched: ' THEN
      launched := launched + substring(line FROM 'Workers Launched: (\d+)')::int;
    END IF;
  END LOOP;
  RETURN launched;
END $$;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF) SELECT powerrank_graph(src, dst, w) FROM big_edges;
SELECT workers_launched('SELECT powerrank_graph(src, dst, w) FROM big_edges') > 0 AS ran_in_parallel;
CREATE TEMP TABLE parallel_graph AS SELECT powerrank_graph(src, dst, w) AS graph FROM big_edges;
CREATE TEMP TABLE parallel_graph_u AS SELECT powerrank_graph(src, dst) AS graph FROM big_edges;
RESET parallel_leader_participation;
SET max_parallel_workers_per_gather = 0;
EXPLAIN (COSTS OFF) SELECT powerrank_graph(src, dst, w) FROM big_edges;
CREATE TEMP TABLE serial_graph AS SELECT powerrank_graph(src, dst, w) AS graph FROM big_edges;
CREATE TEMP TABLE serial_graph_u AS SELECT powerrank_graph(src, dst) AS graph FROM big_edges;
RESET max_parallel_workers_per_gather;
SELECT rankgraph_summary(p.graph) = rankgraph_summary(s.graph) AS same_shape
FROM parallel_graph p, serial_graph s;
SELECT p.graph::text = s.graph::text AS weighted_same_bytes FROM parallel_graph p, serial_graph s;
SELECT count(*) AS nodes, bool_and(a.score = b.score) AS parallel_equals_serial_bits
FROM parallel_graph p, pagerank(p.graph, tolerance => 1e-10) a
JOIN (SELECT b.* FROM serial_graph s, pagerank(s.graph, tolerance => 1e-10) b) b USING (node);
SELECT count(*) AS nodes, bool_and(abs(a.score - b.score) < 1e-12) AS parallel_equals_serial_unweighted
FROM parallel_graph_u p, pagerank(p.graph, tolerance => 1e-10) a
JOIN (SELECT b.* FROM serial_graph_u s, pagerank(s.graph, tolerance => 1e-10) b) b USING (node);

-- An undirected graph through the aggregate: the rows both ways but the self-loops, which
-- directed => false counts once; the same bits as the table-name form.
CREATE TABLE loops(src bigint, dst bigint);
INSERT INTO loops VALUES (1, 1), (1, 2), (2, 3), (3, 3), (3, 1), (4, 2);
SELECT count(*) AS nodes, bool_and(a.score = b.score) AS undirected_recipe_same_bits
FROM pagerank((SELECT powerrank_graph(x, y) FROM (SELECT src, dst FROM loops UNION ALL
               SELECT dst, src FROM loops WHERE src <> dst) e(x, y)), tolerance => 1e-12) a
JOIN pagerank('loops', directed => false, tolerance => 1e-12) b USING (node);
DROP TABLE loops;
