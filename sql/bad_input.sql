-- Every bad input gives a clear error (message, hint, SQLSTATE), nothing is half-done, and the
-- backend stays usable.
\set VERBOSITY default
CREATE TABLE e(src bigint, dst bigint, w float8, label text, amount numeric);
INSERT INTO e VALUES (1, 2, 1, 'a', 1), (2, 3, 2, 'b', 2), (3, 1, 1, 'c', 3);

-- The table does not exist (also schema-qualified / quoted / badly formed names).
SELECT * FROM pagerank('no_such_table');
SELECT * FROM pagerank('no_such_schema.e');
SELECT * FROM pagerank('"E"');
SELECT * FROM pagerank('a.b.c.d');
SELECT * FROM pagerank('');
SELECT * FROM hits('no_such_table');
SELECT * FROM rwr('no_such_table', 1);
-- Not something with rows.
CREATE SEQUENCE e_seq;
SELECT * FROM pagerank('e_seq');

-- A column is missing.
SELECT * FROM pagerank('e', src_column => 'source');
SELECT * FROM pagerank('e', dst_column => 'target');
SELECT * FROM pagerank('e', weight_column => 'weight');
SELECT * FROM hits('e', src_column => 'nope');
SELECT * FROM rwr('e', 1, dst_column => 'nope');

-- A column of the wrong type.
SELECT * FROM pagerank('e', src_column => 'label');
SELECT * FROM pagerank('e', dst_column => 'w');
SELECT * FROM pagerank('e', weight_column => 'label');
-- numeric weights are fine
SELECT count(*) FROM pagerank('e', weight_column => 'amount');

-- NULL src or dst: the row is skipped and counted (NOTICE, and in powerrank_last_run()).
CREATE TABLE e_nulls(src int, dst int, w float8);
INSERT INTO e_nulls VALUES (1, 2, 1), (NULL, 2, 1), (2, NULL, 1), (NULL, NULL, 1), (2, 1, NULL);
SELECT node, round(score::numeric, 6) FROM pagerank('e_nulls') ORDER BY node;
SELECT skipped_rows, nodes, edges FROM powerrank_last_run();
-- with a weight column, a NULL weight skips the row as well
SELECT node, round(score::numeric, 6) FROM pagerank('e_nulls', weight_column => 'w') ORDER BY node;
SELECT skipped_rows, nodes, edges FROM powerrank_last_run();

-- Negative, NaN and infinite weights.
CREATE TABLE e_weights(src bigint, dst bigint, w float8);
INSERT INTO e_weights VALUES (1, 2, 1), (2, 3, -0.5);
SELECT * FROM pagerank('e_weights', weight_column => 'w');
UPDATE e_weights SET w = 'NaN' WHERE w < 0;
SELECT * FROM pagerank('e_weights', weight_column => 'w');
UPDATE e_weights SET w = 'Infinity' WHERE src = 2;
SELECT * FROM hits('e_weights', weight_column => 'w');
UPDATE e_weights SET w = '-Infinity' WHERE src = 2;
SELECT * FROM rwr('e_weights', 1, weight_column => 'w');
-- the aggregate checks them too
SELECT powerrank_graph(src, dst, w) FROM e_weights;
SELECT powerrank_graph(src, dst, 'NaN') FROM e;

-- damping outside [0, 1); restart outside [0, 1).
SELECT * FROM pagerank('e', damping => 1);
SELECT * FROM pagerank('e', damping => -0.1);
SELECT * FROM pagerank('e', damping => 'NaN');
SELECT * FROM rwr('e', 1, restart => 1);
SELECT * FROM rwr('e', 1, restart => -0.01);
SELECT * FROM rwr('e', ARRAY[1], restart => 1.5);
-- the ends of the ranges that are allowed
SELECT node, score FROM pagerank('e', damping => 0) ORDER BY node;
-- restart 0: the walk returns to the source only from the dead end, node 3; stationary
-- distribution of 1->2, 1->3, 2->3, (3->1): x1 = x3 = 0.4, x2 = 0.2
CREATE TABLE e_dead(src bigint, dst bigint);
INSERT INTO e_dead VALUES (1, 2), (1, 3), (2, 3);
SELECT node, round(score::numeric, 9) AS score FROM rwr('e_dead', 1, restart => 0, tolerance => 1e-12) ORDER BY node;
DROP TABLE e_dead;

-- tolerance <= 0 (or NaN, infinite).
SELECT * FROM pagerank('e', tolerance => 0);
SELECT * FROM pagerank('e', tolerance => -1e-6);
SELECT * FROM hits('e', tolerance => 'NaN');
SELECT * FROM rwr('e', 1, tolerance => 'Infinity');

-- max_iterations <= 0.
SELECT * FROM pagerank('e', max_iterations => 0);
SELECT * FROM hits('e', max_iterations => -5);

-- top_k <= 0.
SELECT * FROM pagerank('e', top_k => 0);
SELECT * FROM hits('e', top_k => -1);
SELECT * FROM rwr('e', ARRAY[1, 2], top_k => 0);

-- Unknown norm.
SELECT * FROM pagerank('e', norm => 'l2');

-- NULL where a value is required.
SELECT * FROM pagerank('e', damping => NULL);
SELECT * FROM pagerank(NULL::text);
SELECT * FROM pagerank('e', src_column => NULL);
SELECT * FROM rwr('e', NULL::bigint);

-- RWR source (and personalization nodes) not in the graph.
SELECT * FROM rwr('e', 99);
SELECT * FROM rwr('e', ARRAY[1, 99, 2]);
SELECT * FROM pagerank('e', personalization => ARRAY[3, 77]);
SELECT * FROM rwr('e', ARRAY[]::bigint[]);
SELECT * FROM rwr('e', ARRAY[1, NULL]);
SELECT * FROM pagerank('e', personalization => '{}');
-- a source given twice is an error (sql/arguments.sql has the other node-list rules)
SELECT source, count(*) FROM rwr('e', ARRAY[2, 1, 2]) GROUP BY source ORDER BY source;

-- An empty table: zero rows, no error, for every function without source nodes; a source is
-- missing from an empty graph as from any other (an ERROR).
CREATE TABLE e_empty(src bigint, dst bigint, w float8);
SELECT count(*) FROM pagerank('e_empty');
SELECT count(*) FROM pagerank('e_empty', weight_column => 'w', top_k => 3);
SELECT count(*) FROM hits('e_empty');
SELECT count(*) FROM rwr('e_empty', 1);
SELECT count(*) FROM rwr('e_empty', ARRAY[1, 2]);
SELECT nodes, edges, iterations, converged FROM powerrank_last_run();
-- a table whose rows are all NULL is empty too
INSERT INTO e_empty VALUES (NULL, 1, 1), (1, NULL, 1);
SELECT count(*) FROM pagerank('e_empty');
SELECT nodes, skipped_rows FROM powerrank_last_run();
-- the aggregate over no rows gives an empty graph
SELECT rankgraph_summary(powerrank_graph(src, dst)) AS powerrank_graph FROM e WHERE false;
SELECT count(*) FROM pagerank((SELECT powerrank_graph(src, dst) FROM e WHERE false));
SELECT count(*) FROM pagerank(NULL::rankgraph);

-- After all of these, the backend works normally.
SELECT node, round(score::numeric, 6) FROM pagerank('e') ORDER BY node;
