-- The two readers of the table form: the direct table scan (graph_heapscan.c) and the SPI cursor
-- (graph_scan.c).  powerrank.table_reader forces one ('direct' is an ERROR where the direct scan
-- may not be used); on every table both give the same rows, the same skipped count, the same
-- errors and bit-identical scores.
SET extra_float_digits = 3;

-- Runs pagerank (and, weighted or not, hits) on one table with one reader into scan_results.
CREATE TABLE scan_results(reader text, tab text, node bigint, score float8, hub float8,
                          authority float8, nodes bigint, edges bigint, skipped bigint);
CREATE FUNCTION scan_with(reader text, tab text, weight text DEFAULT NULL,
                          src text DEFAULT 'src', dst text DEFAULT 'dst') RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    -- the NOTICEs and HITS WARNINGs of both readers are compared through scan_results instead
    PERFORM set_config('client_min_messages', 'error', true);
    PERFORM set_config('powerrank.table_reader', reader, true);
    CREATE TEMP TABLE pr_run AS
        SELECT * FROM pagerank(tab, src_column => src, dst_column => dst, weight_column => weight,
                               tolerance => 1e-12);
    INSERT INTO scan_results(reader, tab, node, score, nodes, edges, skipped)
        SELECT reader, tab, p.node, p.score, s.nodes, s.edges, s.skipped_rows
        FROM pr_run p, powerrank_last_run() s;
    DROP TABLE pr_run;
    CREATE TEMP TABLE hits_run AS
        SELECT * FROM hits(tab, src_column => src, dst_column => dst, weight_column => weight,
                           tolerance => 1e-12, max_iterations => 50);
    UPDATE scan_results r SET hub = h.hub, authority = h.authority
        FROM hits_run h WHERE r.reader = scan_with.reader AND r.tab = scan_with.tab
                          AND r.node = h.node;
    DROP TABLE hits_run;
    PERFORM set_config('powerrank.table_reader', 'auto', true);
END $$;

-- Compares the two readers on one table: same nodes, bit-identical scores, same counts.
CREATE FUNCTION scan_compare(tab text) RETURNS TABLE(tab text, nodes bigint, edges bigint,
                                                     skipped bigint, identical boolean)
LANGUAGE sql AS $$
    SELECT $1, max(d.nodes), max(d.edges), max(d.skipped),
           count(*) = count(s.node) AND count(*) = (SELECT count(*) FROM scan_results x
                                                    WHERE x.reader = 'spi' AND x.tab = $1)
           AND bool_and(d.score = s.score AND d.hub IS NOT DISTINCT FROM s.hub
                        AND d.authority IS NOT DISTINCT FROM s.authority
                        AND d.nodes = s.nodes AND d.edges = s.edges AND d.skipped = s.skipped)
    FROM scan_results d LEFT JOIN scan_results s
         ON s.reader = 'spi' AND s.tab = d.tab AND s.node = d.node
    WHERE d.reader = 'direct' AND d.tab = $1
$$;

-- Endpoints of each integer type, weights of each numeric type, NULLs in every column, and
-- dropped columns before the used ones (attribute numbers with gaps).
CREATE TABLE typed_edges(gone1 int, s2 smallint, d2 smallint, s4 int, d4 int, s8 bigint,
                         d8 bigint, w2 smallint, w4 int, w8 bigint, wf4 real, wf8 float8,
                         wn numeric, gone2 text);
INSERT INTO typed_edges(s2, d2, s4, d4, s8, d8, w2, w4, w8, wf4, wf8, wn)
SELECT (i % 50)::smallint, ((i * 7) % 53)::smallint,
       i % 500, (i * 13) % 517,
       (i % 400)::bigint * 10000000000, ((i * 11) % 409)::bigint * 10000000000,
       (i % 9)::smallint, i % 17, (i % 23)::bigint * 1000000000000,
       (i % 31)::real / 7, (i % 37)::float8 / 3, (i % 41)::numeric / 3
FROM generate_series(1, 3000) i;
-- NULLs, each column in turn
INSERT INTO typed_edges(s2, d2, s4, d4, s8, d8, w2, w4, w8, wf4, wf8, wn) VALUES
    (NULL, 1, NULL, 1, NULL, 1, 1, 1, 1, 1, 1, 1),
    (1, NULL, 1, NULL, 1, NULL, 1, 1, 1, 1, 1, 1),
    (1, 2, 1, 2, 1, 2, NULL, NULL, NULL, NULL, NULL, NULL);
ALTER TABLE typed_edges DROP COLUMN gone1;
ALTER TABLE typed_edges DROP COLUMN gone2;
ALTER TABLE typed_edges ADD COLUMN late_w float8 DEFAULT 2.5;   -- a column no row stores
-- both readers skip and report the same rows
SET powerrank.table_reader = 'spi';
SELECT count(*) FROM pagerank('typed_edges', src_column => 's4', dst_column => 'd4',
                              weight_column => 'wn');
SELECT nodes, edges, skipped_rows FROM powerrank_last_run();
SET powerrank.table_reader = 'direct';
SELECT count(*) FROM pagerank('typed_edges', src_column => 's4', dst_column => 'd4',
                              weight_column => 'wn');
SELECT nodes, edges, skipped_rows FROM powerrank_last_run();
RESET powerrank.table_reader;
SELECT scan_with(r, 'typed_edges', NULL, 's2', 'd2') FROM unnest(ARRAY['spi', 'direct']) r;
SELECT * FROM scan_compare('typed_edges');
DELETE FROM scan_results;
SELECT scan_with(r, 'typed_edges', 'w2', 's4', 'd4') FROM unnest(ARRAY['spi', 'direct']) r;
SELECT * FROM scan_compare('typed_edges');
DELETE FROM scan_results;
SELECT scan_with(r, 'typed_edges', 'w4', 's8', 'd8') FROM unnest(ARRAY['spi', 'direct']) r;
SELECT * FROM scan_compare('typed_edges');
DELETE FROM scan_results;
SELECT scan_with(r, 'typed_edges', 'w8', 's2', 'd8') FROM unnest(ARRAY['spi', 'direct']) r;
SELECT * FROM scan_compare('typed_edges');
DELETE FROM scan_results;
SELECT scan_with(r, 'typed_edges', 'wf4', 's8', 'd4') FROM unnest(ARRAY['spi', 'direct']) r;
SELECT * FROM scan_compare('typed_edges');
DELETE FROM scan_results;
SELECT scan_with(r, 'typed_edges', 'wf8', 's4', 'd2') FROM unnest(ARRAY['spi', 'direct']) r;
SELECT * FROM scan_compare('typed_edges');
DELETE FROM scan_results;
SELECT scan_with(r, 'typed_edges', 'wn', 's8', 'd8') FROM unnest(ARRAY['spi', 'direct']) r;
SELECT * FROM scan_compare('typed_edges');
DELETE FROM scan_results;
SELECT scan_with(r, 'typed_edges', 'late_w', 's8', 'd8') FROM unnest(ARRAY['spi', 'direct']) r;
SELECT * FROM scan_compare('typed_edges');
DELETE FROM scan_results;

-- a real graph: soc-Slashdot0902's first 100000 rows, directed and undirected, and rwr
CREATE TABLE slashdot_part(src bigint, dst bigint);
\i sql/include/data_dir.sql
\set cmd 'zcat ' :data_dir '/soc-slashdot0902.tsv.gz | head -100000'
COPY slashdot_part FROM PROGRAM :'cmd';
SELECT count(*) FROM slashdot_part;
SELECT scan_with(r, 'slashdot_part') FROM unnest(ARRAY['spi', 'direct']) r;
SELECT * FROM scan_compare('slashdot_part');
SET powerrank.table_reader = 'spi';
CREATE TEMP TABLE rwr_spi AS SELECT * FROM rwr('slashdot_part', (SELECT array_agg(src) FROM (SELECT DISTINCT src FROM slashdot_part ORDER BY src LIMIT 3) s), directed => false, tolerance => 1e-12);
SET powerrank.table_reader = 'direct';
CREATE TEMP TABLE rwr_direct AS SELECT * FROM rwr('slashdot_part', (SELECT array_agg(src) FROM (SELECT DISTINCT src FROM slashdot_part ORDER BY src LIMIT 3) s), directed => false, tolerance => 1e-12);
RESET powerrank.table_reader;
SELECT count(*) AS rows, bool_and(a.score = b.score) AS identical
FROM rwr_spi a FULL JOIN rwr_direct b USING (source, node);

-- bad weights: the same ERROR from both readers
CREATE TABLE bad_weights(src int, dst int, w float8, wn numeric);
INSERT INTO bad_weights VALUES (1, 2, 1, 1), (2, 3, -0.5, 'NaN'), (3, 1, 1, 1e310);
SET powerrank.table_reader = 'spi';
SELECT * FROM pagerank('bad_weights', weight_column => 'w');
SET powerrank.table_reader = 'direct';
SELECT * FROM pagerank('bad_weights', weight_column => 'w');
DELETE FROM bad_weights WHERE w < 0;
INSERT INTO bad_weights VALUES (4, 1, 'Infinity', 1);
SET powerrank.table_reader = 'spi';
SELECT * FROM pagerank('bad_weights', weight_column => 'w');
SET powerrank.table_reader = 'direct';
SELECT * FROM pagerank('bad_weights', weight_column => 'w');
-- numeric: the cast's own errors (out of range for double precision), then NaN
SET powerrank.table_reader = 'spi';
SELECT * FROM pagerank('bad_weights', weight_column => 'wn');
SET powerrank.table_reader = 'direct';
SELECT * FROM pagerank('bad_weights', weight_column => 'wn');
DELETE FROM bad_weights WHERE wn > 1;
SET powerrank.table_reader = 'spi';
SELECT * FROM pagerank('bad_weights', weight_column => 'wn');
SET powerrank.table_reader = 'direct';
SELECT * FROM pagerank('bad_weights', weight_column => 'wn');
RESET powerrank.table_reader;

-- which relations the direct scan reads ('direct' says why it may not)
CREATE MATERIALIZED VIEW mat_edges AS SELECT src, dst FROM slashdot_part WHERE src < 1000;
SELECT scan_with(r, 'mat_edges') FROM unnest(ARRAY['spi', 'direct']) r;
SELECT * FROM scan_compare('mat_edges');
CREATE MATERIALIZED VIEW empty_mat AS SELECT src, dst FROM slashdot_part WITH NO DATA;
SELECT * FROM pagerank('empty_mat');
SET powerrank.table_reader = 'direct';
SELECT * FROM pagerank('empty_mat');
CREATE VIEW view_edges AS SELECT src, dst FROM slashdot_part WHERE src < 1000;
SELECT * FROM pagerank('view_edges');
RESET powerrank.table_reader;
SELECT count(*) = (SELECT count(*) FROM pagerank('mat_edges')) AS view_ok
FROM pagerank('view_edges');
CREATE TABLE parent_edges(src bigint, dst bigint);
CREATE TABLE child_edges() INHERITS (parent_edges);
INSERT INTO parent_edges VALUES (1, 2);
INSERT INTO child_edges VALUES (2, 3), (3, 1);
SELECT count(*) AS nodes_with_children FROM pagerank('parent_edges');
SET powerrank.table_reader = 'direct';
SELECT * FROM pagerank('parent_edges');
RESET powerrank.table_reader;
CREATE TABLE part_edges(src bigint, dst bigint) PARTITION BY RANGE (src);
CREATE TABLE part_edges_1 PARTITION OF part_edges FOR VALUES FROM (0) TO (100);
INSERT INTO part_edges VALUES (1, 2), (2, 3);
SET powerrank.table_reader = 'direct';
SELECT * FROM pagerank('part_edges');
-- a partition itself is a plain table
SELECT count(*) FROM pagerank('part_edges_1');
RESET powerrank.table_reader;

-- row-level security: the direct scan is refused for a caller the policy filters (SPI applies
-- it); the owner, whom the policy does not filter, is read directly
CREATE ROLE regress_scan_reader;
CREATE TABLE rls_scan(src bigint, dst bigint, grp text);
INSERT INTO rls_scan VALUES (1, 2, 'a'), (2, 3, 'a'), (3, 1, 'b'), (4, 1, 'b');
ALTER TABLE rls_scan ENABLE ROW LEVEL SECURITY;
CREATE POLICY scan_only_a ON rls_scan FOR SELECT USING (grp = 'a');
GRANT SELECT ON rls_scan TO regress_scan_reader;
ALTER TABLE rls_scan OWNER TO regress_scan_reader;
SET powerrank.table_reader = 'direct';
SET ROLE regress_scan_reader;
SELECT count(*) AS owner_nodes FROM pagerank('rls_scan');
ALTER TABLE rls_scan FORCE ROW LEVEL SECURITY;
SELECT * FROM pagerank('rls_scan');
RESET ROLE;
RESET powerrank.table_reader;
SET ROLE regress_scan_reader;
SELECT count(*) AS forced_nodes FROM pagerank('rls_scan');
SELECT nodes, edges FROM powerrank_last_run();
RESET ROLE;
-- the setting is superuser-only
SET ROLE regress_scan_reader;
SET powerrank.table_reader = 'spi';
RESET ROLE;
DROP TABLE rls_scan;
DROP ROLE regress_scan_reader;

-- a cancel during a direct scan of a big table: statement_timeout stops it, the backend works
-- (the scan of 2M rows takes a few hundred milliseconds here; the timeout fires within it)
CREATE TABLE scan_big_edges(src bigint, dst bigint);
INSERT INTO scan_big_edges SELECT i, (i::bigint * 7919) % 2000003 FROM generate_series(1, 2000000) i;
SET powerrank.table_reader = 'direct';
SET statement_timeout = '30ms';
SELECT count(*) FROM pagerank('scan_big_edges', max_iterations => 1000000, tolerance => 1e-300);
RESET statement_timeout;
SELECT 1 AS alive;
SELECT count(*) FROM pagerank('slashdot_part', top_k => 3);
RESET powerrank.table_reader;
