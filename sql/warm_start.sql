-- pagerank's start vector (start_nodes, start_scores): a run started from its own converged
-- scores stops after an iteration or two with the same answer; nodes missing from the start begin
-- at 1/N, nodes not in the graph are ignored; bad start arguments are ERRORs.
\i sql/include/data_dir.sql
CREATE TABLE warm_enron(src bigint, dst bigint);
\set cmd 'zcat ' :data_dir '/email-enron.tsv.gz'
COPY warm_enron FROM PROGRAM :'cmd';

-- From scratch.
CREATE TABLE cold AS SELECT * FROM pagerank('warm_enron', tolerance => 1e-12, device => 'cpu');
SELECT iterations AS cold_iterations, converged FROM powerrank_last_run() \gset
SELECT :cold_iterations > 20 AS many_iterations, :'converged' AS converged;

-- From its own scores: one or two iterations, the same scores.
CREATE TABLE warm AS
SELECT * FROM pagerank('warm_enron', tolerance => 1e-12, device => 'cpu',
                       start_nodes => (SELECT array_agg(node ORDER BY node) FROM cold),
                       start_scores => (SELECT array_agg(score ORDER BY node) FROM cold));
SELECT iterations <= 3 AS few_iterations, iterations < :cold_iterations AS fewer, converged
FROM powerrank_last_run();
SELECT count(*) AS nodes, max(abs(w.score - c.score)) < 1e-9 AS same_scores
FROM warm w JOIN cold c USING (node);
-- the same through a rankgraph
CREATE TABLE warm_enron_graph AS SELECT powerrank_graph(src, dst) AS g FROM warm_enron;
SELECT count(*) AS nodes, max(abs(r.score - c.score)) < 1e-9 AS same_scores
FROM warm_enron_graph, pagerank(g, tolerance => 1e-12, device => 'cpu',
                           start_nodes => (SELECT array_agg(node ORDER BY node) FROM cold),
                           start_scores => (SELECT array_agg(score ORDER BY node) FROM cold)) r
JOIN cold c USING (node);
SELECT iterations <= 3 AS few_iterations FROM powerrank_last_run();

-- Half the nodes given (ten times their score), the rest missing (they start at 1/N), and nodes
-- that are not in the graph (ignored): the same answer.
SELECT count(*) AS nodes, max(abs(r.score - c.score)) < 1e-9 AS same_scores
FROM pagerank('warm_enron', tolerance => 1e-12, device => 'cpu',
              start_nodes => (SELECT array_agg(node ORDER BY node) FROM cold WHERE node % 2 = 0)
                             || ARRAY[-1, 99999999]::bigint[],
              start_scores => (SELECT array_agg(10 * score ORDER BY node) FROM cold
                               WHERE node % 2 = 0) || ARRAY[5, 7]::float8[]) r
JOIN cold c USING (node);
SELECT converged, iterations > 3 AS more_iterations FROM powerrank_last_run();

-- Hand-checked on a 3-cycle 1 -> 2 -> 3 -> 1, whose answer is 1/3 each from any start: with
-- damping 0.5 and one iteration, the start (node 1: 3, node 2 missing, node 3: 0; N = 3, so
-- 3, 1/3, 0 scaled to sum 1: 0.9, 0.1, 0) moves one step along the cycle (0, 0.9, 0.1), then
-- x' = 0.5 * that + 0.5 / 3: 1/6, 0.9/2 + 1/6 = 0.616666..., 0.1/2 + 1/6 = 0.216666....
CREATE TABLE cycle(src bigint, dst bigint);
INSERT INTO cycle VALUES (1, 2), (2, 3), (3, 1);
SELECT node, round(score::numeric, 12) AS score
FROM pagerank('cycle', damping => 0.5, max_iterations => 1, device => 'cpu',
              start_nodes => ARRAY[1, 3], start_scores => ARRAY[3, 0]) ORDER BY node;
-- the uniform start is already the answer: one iteration
SELECT node, round(score::numeric, 12) AS score
FROM pagerank('cycle', device => 'cpu', start_nodes => ARRAY[7], start_scores => ARRAY[1])
ORDER BY node;
SELECT iterations, converged FROM powerrank_last_run();

-- The GPU service does not take a start vector: device => 'gpu' is an ERROR, device => 'auto'
-- runs on the CPU engine and says why.
SELECT * FROM pagerank('cycle', start_nodes => ARRAY[1], start_scores => ARRAY[1],
                       device => 'gpu');
SET powerrank.gpu_min_edges = 0;
SELECT count(*) FROM pagerank('cycle', start_nodes => ARRAY[1], start_scores => ARRAY[1]);
SELECT engine, fallback FROM powerrank_last_run();
RESET powerrank.gpu_min_edges;

-- Bad start arguments.
SELECT * FROM pagerank('cycle', start_nodes => ARRAY[1, 2], start_scores => ARRAY[1]);
SELECT * FROM pagerank('cycle', start_nodes => ARRAY[1]);
SELECT * FROM pagerank('cycle', start_scores => ARRAY[1]);
SELECT * FROM pagerank('cycle', start_nodes => ARRAY[1, 2], start_scores => ARRAY[1, -1]);
SELECT * FROM pagerank('cycle', start_nodes => ARRAY[1, 2], start_scores => ARRAY[1, 'NaN']::float8[]);
SELECT * FROM pagerank('cycle', start_nodes => ARRAY[1, 2], start_scores => ARRAY[1, 'Infinity']::float8[]);
SELECT * FROM pagerank('cycle', start_nodes => ARRAY[1, 2], start_scores => ARRAY[1, NULL]);
SELECT * FROM pagerank('cycle', start_nodes => ARRAY[1, NULL], start_scores => ARRAY[1, 2]);
SELECT * FROM pagerank('cycle', start_nodes => ARRAY[1, 1], start_scores => ARRAY[1, 2]);
SELECT * FROM pagerank('cycle', start_nodes => '{}', start_scores => '{}');
SELECT * FROM pagerank('cycle', start_nodes => ARRAY[1, 2, 3], start_scores => ARRAY[0, 0, 0]);
SELECT * FROM pagerank('cycle', start_nodes => ARRAY[1, 2, 3, 4], start_scores => ARRAY[0, 0, 0, 5]);
-- all zero but node 3 missing: it starts at 1/N, so the start is (0, 0, 1); one step with
-- damping 0.5: 0.5 * (1, 0, 0) + 1/6 = (2/3, 1/6, 1/6)
SELECT node, round(score::numeric, 12) AS score
FROM pagerank('cycle', damping => 0.5, max_iterations => 1, device => 'cpu',
              start_nodes => ARRAY[1, 2], start_scores => ARRAY[0, 0]) ORDER BY node;
-- an empty graph: nothing to start
CREATE TABLE nothing(src bigint, dst bigint);
SELECT count(*) FROM pagerank('nothing', start_nodes => ARRAY[1], start_scores => ARRAY[1]);
DROP TABLE warm_enron, cold, warm, warm_enron_graph, cycle, nothing;
