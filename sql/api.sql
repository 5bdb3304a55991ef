-- The SQL API as the issue shows it: every example resolves and returns the documented columns.
CREATE TABLE edges(src bigint, dst bigint, weight float8, kind text);
INSERT INTO edges VALUES
  (1, 2, 1, 'follows'), (2, 1, 2, 'follows'), (2, 3, 1, 'likes'), (3, 1, 1, 'follows'),
  (3, 4, 3, 'follows'), (4, 3, 1, 'likes'), (42, 1, 1, 'follows'), (1, 42, 1, 'likes');

SELECT node, round(score::numeric, 6) AS score FROM pagerank('edges', 0.85);
SELECT node, round(score::numeric, 6) AS score FROM pagerank('edges', 0.85, top_k => 2);
SELECT node, round(hub::numeric, 4) AS hub, round(authority::numeric, 4) AS authority FROM hits('edges');
SELECT node, round(score::numeric, 6) AS score FROM rwr('edges', source => 42);
SELECT source, node, round(score::numeric, 6) AS score
FROM rwr('edges', sources => ARRAY[1, 2, 3], top_k => 2);
SELECT node, round(score::numeric, 6) AS score
FROM pagerank((SELECT powerrank_graph(src, dst, weight) FROM edges WHERE kind = 'follows'));

-- Result column names and types.
SELECT p.oid::regprocedure AS function, pg_get_function_result(p.oid) AS result
FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
WHERE p.proname IN ('pagerank', 'hits', 'rwr', 'powerrank_last_run')
ORDER BY p.oid::regprocedure::text COLLATE "C";

-- An unknown literal resolves to the table-name form, not the rankgraph one.
SELECT count(*) FROM pagerank('edges');
SELECT count(*) FROM hits('edges');
SELECT count(*) FROM rwr('edges', 1);
SELECT count(*) FROM rwr('edges', ARRAY[1, 2]);
-- A text value too.
SELECT count(*) FROM pagerank('edges'::text);

-- The rankgraph forms equal the table forms.
CREATE TABLE graph_store AS SELECT powerrank_graph(src, dst, weight) AS g FROM edges;
SELECT rankgraph_summary(g) AS g FROM graph_store;
SELECT bool_and(abs(a.score - b.score) < 1e-12) AS same_pagerank
FROM graph_store, pagerank(g) a JOIN pagerank('edges', weight_column => 'weight') b USING (node);
SELECT bool_and(abs(a.hub - b.hub) < 1e-12 AND abs(a.authority - b.authority) < 1e-12) AS same_hits
FROM graph_store, hits(g) a JOIN hits('edges', weight_column => 'weight') b USING (node);
SELECT bool_and(abs(a.score - b.score) < 1e-12) AS same_rwr
FROM graph_store, rwr(g, 42) a JOIN rwr('edges', 42, weight_column => 'weight') b USING (node);
SELECT bool_and(abs(a.score - b.score) < 1e-12) AS same_rwr_many
FROM graph_store, rwr(g, ARRAY[1, 42]) a
JOIN rwr('edges', ARRAY[1, 42], weight_column => 'weight') b USING (source, node);
SELECT count(*) FROM graph_store, pagerank(g, personalization => ARRAY[1, 3]);

-- Without top_k every node comes back in node order; with it, by score.
SELECT array_agg(node) FROM pagerank('edges');
SELECT array_agg(node) FROM pagerank('edges', top_k => 5);

-- The settings are registered and the prefix reserved.
SHOW powerrank.cpu_threads;
SET powerrank.cpu_threads = 1;
SELECT count(*) FROM pagerank('edges');
RESET powerrank.cpu_threads;
SET powerrank.no_such_setting = 1;

-- Text that is not a rankgraph's text form is refused.
SELECT 'x'::rankgraph;
