-- The planner's row estimate of the ranking functions (powerrank_rows_support): the node count of
-- the edge table from its statistics or the graph cache, or top_k when given and smaller; the
-- declared ROWS 1000 when nothing is known.  The functions are not run: only planned.

-- est(q): the rows= figure of the top plan node of EXPLAIN q.
CREATE FUNCTION est(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS ON) ' || q LOOP
    RETURN substring(line FROM 'rows=([0-9]+)')::bigint;
  END LOOP;
END $$;

-- 500 edges: src 1..500, dst 2..501 (so dst has 500 distinct values, src too; 501 nodes in all).
CREATE TABLE plan_edges(src bigint, dst bigint);
INSERT INTO plan_edges SELECT i, i + 1 FROM generate_series(1, 500) i;
-- Before ANALYZE: no statistics, the default.
SELECT est($$SELECT * FROM pagerank('plan_edges')$$) AS no_stats;
ANALYZE plan_edges;

-- top_k given: top_k, up to the node count (501).
SELECT est($$SELECT * FROM pagerank('plan_edges', top_k => 7)$$) AS pagerank_top7;
SELECT est($$SELECT * FROM pagerank('plan_edges', top_k => 2147483647)$$) AS pagerank_top_max;
SELECT est($$SELECT * FROM rwr('plan_edges', ARRAY[1, 2]::bigint[], top_k => 100000)$$) AS rwr2_top100000;
SELECT est($$SELECT * FROM hits('plan_edges', top_k => 9)$$) AS hits_top9;
SELECT est($$SELECT * FROM rwr('plan_edges', 1, top_k => 5)$$) AS rwr_top5;
SELECT est($$SELECT * FROM pagerank((SELECT powerrank_graph(src, dst) FROM plan_edges), top_k => 11)$$)
  AS graph_top11;
-- Many sources: top_k rows per source.
SELECT est($$SELECT * FROM rwr('plan_edges', ARRAY[1, 2, 3]::bigint[], top_k => 4)$$) AS rwr3_top4;

-- No top_k: the node count as powerrank_estimate has it, the union of the endpoint columns'
-- distinct values.  Both are unique: n_distinct -1, a fraction (all) of the table's 500 rows, so
-- ds = dd = 500 over the histograms' common range 1..501 (R = 501):
-- 500 + 500 - 500 * 500 / 501 = 500.998, within [max(ds, dd), min(ds + dd, R)] = [500, 501]: 501.
SELECT attname, n_distinct FROM pg_stats WHERE tablename = 'plan_edges' ORDER BY attname;
SELECT est($$SELECT * FROM pagerank('plan_edges')$$) AS pagerank_all;
SELECT est($$SELECT * FROM hits('public.plan_edges')$$) AS hits_all;
SELECT est($$SELECT * FROM rwr('plan_edges', ARRAY[1, 2, 3]::bigint[])$$) AS rwr3_all;
-- Other columns: named ones; n_distinct as a count (columns with repeats).  a: 50 values 0..49,
-- b: 20 values 0..19.  a, b: R = 50, 50 + 20 - 50 * 20 / 50 = 50.  b, b: R = 20, 20 + 20 - 20 = 20.
CREATE TABLE plan_pairs(a bigint, b bigint);
INSERT INTO plan_pairs SELECT i % 50, i % 20 FROM generate_series(1, 1000) i;
ANALYZE plan_pairs;
SELECT attname, n_distinct FROM pg_stats WHERE tablename = 'plan_pairs' ORDER BY attname;
SELECT est($$SELECT * FROM pagerank('plan_pairs', src_column => 'a', dst_column => 'b')$$) AS pairs_ab;
SELECT est($$SELECT * FROM pagerank('plan_pairs', src_column => 'b', dst_column => 'b')$$) AS pairs_bb;

-- A partitioned table: the statistics of the whole tree (300 unique src 1..300, 1 dst value 0):
-- R = 301, 300 + 1 - 300 / 301 = 300.003, within [300, 301]: 300.
CREATE TABLE plan_parts(src bigint, dst bigint) PARTITION BY RANGE (src);
CREATE TABLE plan_parts_1 PARTITION OF plan_parts FOR VALUES FROM (0) TO (150);
CREATE TABLE plan_parts_2 PARTITION OF plan_parts FOR VALUES FROM (150) TO (1000);
INSERT INTO plan_parts SELECT i, 0 FROM generate_series(1, 300) i;
ANALYZE plan_parts;
SELECT est($$SELECT * FROM pagerank('plan_parts')$$) AS partitioned;

-- Endpoint columns of a type the call refuses: their distinct counts without a value range,
-- max(ds, dd) = 100 (no error at planning).
CREATE TABLE plan_text(src text, dst text);
INSERT INTO plan_text SELECT i::text, (i + 1)::text FROM generate_series(1, 100) i;
ANALYZE plan_text;
SELECT est($$SELECT * FROM pagerank('plan_text')$$) AS text_columns;

-- Nothing to go on: the default 1000, and no error at planning.
SELECT est($$SELECT * FROM pagerank('no_such_table')$$) AS missing_table;
SELECT est($$SELECT * FROM pagerank('no_such_schema.plan_edges')$$) AS missing_schema;
SELECT est($$SELECT * FROM pagerank('"bad name')$$) AS bad_name;
SELECT est($$SELECT * FROM pagerank('a.b.c.d')$$) AS too_many_parts;
SELECT est($$SELECT * FROM pagerank('plan_edges', src_column => 'nope')$$) AS missing_column;
SELECT est($$SELECT * FROM pagerank('plan_edges', top_k => NULL)$$) AS null_top_k;
SELECT est($$SELECT * FROM pagerank((SELECT powerrank_graph(src, dst) FROM plan_edges))$$) AS graph_all;
-- A table the user may not read: no estimate from its statistics.
CREATE ROLE planner_rows_reader;
GRANT USAGE ON SCHEMA public TO planner_rows_reader;
SET ROLE planner_rows_reader;
SELECT est($$SELECT * FROM pagerank('plan_edges')$$) AS not_readable;
RESET ROLE;

-- A cached graph: its exact node count.  One more edge (2 new nodes) after ANALYZE: the cached
-- graph has 503 nodes, the statistics still say 501.
INSERT INTO plan_edges VALUES (1000, 2000);
SELECT powerrank_cache_enable('plan_edges');
SELECT count(*) FROM pagerank('plan_edges');
SELECT nodes FROM powerrank_cache WHERE source = 'plan_edges'::regclass;
SELECT est($$SELECT * FROM pagerank('plan_edges')$$) AS cached;

SELECT powerrank_cache_drop('plan_edges');
DROP TABLE plan_edges, plan_pairs, plan_parts, plan_text;
REVOKE USAGE ON SCHEMA public FROM planner_rows_reader;
DROP ROLE planner_rows_reader;
DROP FUNCTION est(text);
