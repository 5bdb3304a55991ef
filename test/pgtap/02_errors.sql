-- pgTAP: every bad input raises its SQLSTATE and message.
BEGIN;
SELECT plan(30);

CREATE TABLE e(src bigint, dst bigint, w float8, label text);
INSERT INTO e VALUES (1, 2, 1, 'a'), (2, 3, 2, 'b'), (3, 1, 1, 'c');
CREATE TABLE e_bad(src bigint, dst bigint, w float8);
INSERT INTO e_bad VALUES (1, 2, 1), (2, 3, -1);
CREATE TABLE e_empty(src bigint, dst bigint);
CREATE TABLE e_slow(src bigint, dst bigint);
INSERT INTO e_slow VALUES (1, 2), (2, 1), (2, 3);

SELECT throws_ok($$SELECT * FROM pagerank('no_such_table')$$, '42P01',
                 'relation "no_such_table" does not exist', 'missing table');
SELECT throws_ok($$SELECT * FROM pagerank('e', src_column => 'source')$$, '42703',
                 'column "source" does not exist in table "e"', 'missing src column');
SELECT throws_ok($$SELECT * FROM hits('e', dst_column => 'target')$$, '42703',
                 'column "target" does not exist in table "e"', 'missing dst column');
SELECT throws_ok($$SELECT * FROM rwr('e', 1, weight_column => 'weight')$$, '42703',
                 'column "weight" does not exist in table "e"', 'missing weight column');
SELECT throws_ok($$SELECT * FROM pagerank('e', src_column => 'label')$$, '42804',
                 'column "label" of table "e" has type text, but src_column must be smallint, integer or bigint',
                 'text src column');
SELECT throws_ok($$SELECT * FROM pagerank('e', weight_column => 'label')$$, '42804',
                 'column "label" of table "e" has type text, but weight_column must be of a numeric type',
                 'text weight column');
SELECT throws_ok($$SELECT * FROM pagerank('e_bad', weight_column => 'w')$$, '22023',
                 'invalid weight -1 for edge (2, 3) in table "e_bad"', 'negative weight');
SELECT throws_ok($$SELECT powerrank_graph(src, dst, 'NaN'::float8) FROM e$$, '22023',
                 'invalid weight NaN for edge (1, 2)', 'NaN weight in the aggregate');
SELECT throws_ok($$SELECT powerrank_graph(src, dst, 'Infinity'::float8) FROM e$$, '22023',
                 'invalid weight Infinity for edge (1, 2)', 'infinite weight in the aggregate');
SELECT throws_ok($$SELECT * FROM pagerank('e', damping => 1)$$, '22023',
                 'damping must be in [0, 1), got 1', 'damping 1');
SELECT throws_ok($$SELECT * FROM pagerank('e', damping => -0.5)$$, '22023',
                 'damping must be in [0, 1), got -0.5', 'negative damping');
SELECT throws_ok($$SELECT * FROM rwr('e', 1, restart => 1)$$, '22023',
                 'restart must be in [0, 1), got 1', 'restart 1');
SELECT throws_ok($$SELECT * FROM rwr('e', ARRAY[1], restart => 2)$$, '22023',
                 'restart must be in [0, 1), got 2', 'restart 2');
SELECT throws_ok($$SELECT * FROM pagerank('e', tolerance => 0)$$, '22023',
                 'tolerance must be a finite number greater than 0, got 0', 'tolerance 0');
SELECT throws_ok($$SELECT * FROM hits('e', tolerance => -1)$$, '22023',
                 'tolerance must be a finite number greater than 0, got -1', 'negative tolerance');
SELECT throws_ok($$SELECT * FROM pagerank('e', max_iterations => 0)$$, '22023',
                 'max_iterations must be greater than 0, got 0', 'max_iterations 0');
SELECT throws_ok($$SELECT * FROM pagerank('e', top_k => 0)$$, '22023',
                 'top_k must be greater than 0, got 0', 'top_k 0');
SELECT throws_ok($$SELECT * FROM pagerank('e', norm => 'l2')$$, '22023',
                 'unknown norm "l2"', 'unknown norm');
SELECT throws_ok($$SELECT * FROM rwr('e', 42)$$, '22023',
                 'source node 42 is not in the graph', 'RWR source not in the graph');
SELECT throws_ok($$SELECT * FROM rwr('e', ARRAY[1, 42])$$, '22023',
                 'source node 42 is not in the graph', 'one of many sources not in the graph');
SELECT throws_ok($$SELECT * FROM pagerank('e', personalization => ARRAY[7])$$, '22023',
                 'personalization node 7 is not in the graph', 'personalization node not in the graph');
SELECT throws_ok($$SELECT * FROM pagerank('e', damping => NULL)$$, '22004',
                 'damping must not be NULL', 'NULL damping');
SELECT throws_ok($$SELECT * FROM pagerank('e_slow', max_iterations => 2, require_convergence => true)$$,
                 '22000', 'pagerank did not converge in 2 iterations', 'require_convergence');
SELECT throws_ok($$SELECT 'x'::rankgraph$$, '22P02',
                 'invalid input syntax for type rankgraph', 'rankgraph input');
SELECT throws_ok($$SELECT * FROM pagerank('"e; DROP TABLE e"')$$, '42P01',
                 'relation "e; DROP TABLE e" does not exist', 'quoted injection attempt');
SELECT throws_ok($$SELECT * FROM pagerank('e; DROP TABLE e')$$, '42602',
                 'invalid table name "e; DROP TABLE e"', 'unquoted injection attempt');
SELECT has_table('e', 'the table survived');

-- Empty input: no error, no rows; but a source must be in the graph, empty or not.
SELECT is_empty($$SELECT * FROM pagerank('e_empty')$$, 'empty table: no rows');
SELECT throws_ok($$SELECT * FROM rwr('e_empty', ARRAY[1, 2])$$, '22023',
                 'source node 1 is not in the graph: the graph is empty', 'empty table, many sources');
SET LOCAL client_min_messages = error;
SELECT lives_ok($$SELECT * FROM pagerank('e_slow', max_iterations => 2)$$,
                'without require_convergence, non-convergence only warns');

SELECT * FROM finish();
ROLLBACK;
