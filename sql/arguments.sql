-- Arguments that cannot mean what they were given for are errors, not silent answers:
-- a tolerance in the wrong position, node lists with two dimensions or a node twice, source
-- nodes of an empty graph; and HITS where no edge weighs anything keeps its contract.
CREATE TABLE arg_edges(src bigint, dst bigint, w float8);
INSERT INTO arg_edges VALUES (1, 2, 1), (2, 3, 1), (3, 1, 1), (3, 4, 1);

-- A tolerance of 0.01 or more cannot mean convergence (an L1 residual is at most 2).
-- pagerank('arg_edges', 0.85, 10) meant top 10: 10 is the tolerance
SELECT * FROM pagerank('arg_edges', 0.85, 10);
-- hits has no damping: 0.85 is the tolerance
SELECT * FROM hits('arg_edges', 0.85);
SELECT * FROM hits('arg_edges', 10);
-- rwr: restart then tolerance
SELECT * FROM rwr('arg_edges', 1, 0.15, 0.85);
SELECT * FROM rwr('arg_edges', ARRAY[1, 2], 0.15, 5);
SELECT * FROM pagerank((SELECT powerrank_graph(src, dst) FROM arg_edges), 0.85, 0.5);
SELECT * FROM hits((SELECT powerrank_graph(src, dst) FROM arg_edges), 0.85);
SELECT * FROM rwr((SELECT powerrank_graph(src, dst) FROM arg_edges), 1, 0.15, 3);
-- the bound is the same for every norm (l1_scaled: per node)
SELECT * FROM pagerank('arg_edges', tolerance => 0.01, norm => 'l1_scaled');
SELECT * FROM pagerank('arg_edges', tolerance => 0.01, norm => 'linf');
-- just below the bound is accepted (a coarse answer); positional damping still works
SELECT count(*) FROM pagerank('arg_edges', tolerance => 0.0099);
SELECT node, round(score::numeric, 6) FROM pagerank('arg_edges', 0.85, 1e-9) ORDER BY node;
SELECT node, round(score::numeric, 6) FROM pagerank('arg_edges', 0.85, top_k => 2);

-- Node lists: one dimension, each node once.
SELECT * FROM rwr('arg_edges', ARRAY[[1, 2], [3, 4]]);
SELECT * FROM rwr('arg_edges', ARRAY[1, 2, 1]);
SELECT * FROM pagerank('arg_edges', personalization => ARRAY[[1], [2]]);
SELECT * FROM pagerank('arg_edges', personalization => ARRAY[3, 3]);
SELECT * FROM rwr((SELECT powerrank_graph(src, dst) FROM arg_edges), ARRAY[[1, 2]]);
SELECT * FROM rwr((SELECT powerrank_graph(src, dst) FROM arg_edges), ARRAY[4, 2, 4]);
SELECT * FROM pagerank((SELECT powerrank_graph(src, dst) FROM arg_edges), personalization => ARRAY[[1, 2]]);
SELECT * FROM pagerank((SELECT powerrank_graph(src, dst) FROM arg_edges), personalization => ARRAY[1, 1]);
-- distinct sources keep the order given
SELECT source, node, round(score::numeric, 6) FROM rwr('arg_edges', ARRAY[3, 1], top_k => 1);

-- A missing source is an error whether or not the graph is empty.
CREATE TABLE arg_empty(src bigint, dst bigint, w float8);
SELECT * FROM rwr('arg_empty', 1);
SELECT * FROM rwr('arg_empty', ARRAY[1, 2]);
SELECT * FROM pagerank('arg_empty', personalization => ARRAY[1]);
SELECT * FROM rwr((SELECT powerrank_graph(src, dst) FROM arg_empty), 1);
SELECT * FROM rwr((SELECT powerrank_graph(src, dst) FROM arg_empty), ARRAY[1]);
SELECT * FROM pagerank((SELECT powerrank_graph(src, dst) FROM arg_empty), personalization => ARRAY[1]);
SELECT * FROM rwr('arg_edges', 9);
-- without source nodes, an empty graph gives zero rows; a NULL graph too
SELECT count(*) FROM pagerank('arg_empty');
SELECT count(*) FROM hits('arg_empty');
SELECT count(*) FROM rwr(NULL::rankgraph, 1);

-- HITS where no edge has a positive weight: hub and authority each uniform 1/N (sum 1),
-- like an unweighted graph whose nodes are all alike (PageRank: all dangling, uniform).
CREATE TABLE arg_zero(src bigint, dst bigint, w float8);
INSERT INTO arg_zero VALUES (1, 2, 0), (2, 3, 0), (3, 3, 0), (4, 1, 0);
SELECT node, hub, authority FROM hits('arg_zero', weight_column => 'w') ORDER BY node;
SELECT iterations, converged FROM powerrank_last_run();
SELECT node, hub, authority
FROM hits((SELECT powerrank_graph(src, dst, w) FROM arg_zero)) ORDER BY node;
SELECT node, score FROM pagerank('arg_zero', weight_column => 'w') ORDER BY node;
-- on the service too
SELECT node, hub, authority FROM hits('arg_zero', weight_column => 'w', device => 'gpu') ORDER BY node;
-- one positive weight: the ordinary answer (hub 4, authority 1)
UPDATE arg_zero SET w = 2 WHERE src = 4;
SELECT node, hub, authority FROM hits('arg_zero', weight_column => 'w', tolerance => 1e-12) ORDER BY node;
