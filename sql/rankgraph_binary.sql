-- A rankgraph value survives binary COPY (rankgraph_send / rankgraph_recv), and bytes that are not
-- a rankgraph are refused with an error, never trusted.
\getenv abs_builddir PG_ABS_BUILDDIR
\set graph_file :abs_builddir '/results/rankgraph_binary.copy'
\set junk_file :abs_builddir '/results/rankgraph_junk.copy'

CREATE TABLE rg_edges(src bigint, dst bigint, w float8);
INSERT INTO rg_edges SELECT i, (i * 7) % 300 + 1, (i % 5) + 1 FROM generate_series(1, 300) i;
INSERT INTO rg_edges SELECT i, (i * 13) % 300 + 1, 2 FROM generate_series(1, 300, 3) i;
CREATE TABLE rg_saved(name text, g rankgraph);
INSERT INTO rg_saved SELECT 'weighted', powerrank_graph(src, dst, w) FROM rg_edges;
INSERT INTO rg_saved SELECT 'plain', powerrank_graph(src, dst) FROM rg_edges;

COPY rg_saved TO :'graph_file' WITH (FORMAT binary);
CREATE TABLE rg_loaded(name text, g rankgraph);
COPY rg_loaded FROM :'graph_file' WITH (FORMAT binary);
SELECT name, rankgraph_summary(g) AS g FROM rg_loaded ORDER BY name;

-- the loaded graphs rank exactly like the saved ones
SELECT s.name,
       (SELECT bool_and(a.node = b.node AND a.score = b.score) AND count(*) = 300
        FROM pagerank(s.g, tolerance => 1e-12) a
        JOIN pagerank(l.g, tolerance => 1e-12) b USING (node)) AS same_scores
FROM rg_saved s JOIN rg_loaded l USING (name) ORDER BY s.name;

-- arbitrary bytes in place of a rankgraph: refused
CREATE TABLE rg_junk(name text, g bytea);
INSERT INTO rg_junk VALUES ('short', '\x0102'),
                           ('garbage', decode(repeat('ab', 200), 'hex'));
-- a real value with one byte changed in its header's array offsets
INSERT INTO rg_junk
  SELECT 'flipped', overlay(rankgraph_send(g) PLACING '\xff'::bytea FROM 120 FOR 1)
  FROM rg_saved WHERE name = 'plain';
COPY (SELECT name, g FROM rg_junk WHERE name = 'short') TO :'junk_file' WITH (FORMAT binary);
COPY rg_loaded FROM :'junk_file' WITH (FORMAT binary);
COPY (SELECT name, g FROM rg_junk WHERE name = 'garbage') TO :'junk_file' WITH (FORMAT binary);
COPY rg_loaded FROM :'junk_file' WITH (FORMAT binary);
COPY (SELECT name, g FROM rg_junk WHERE name = 'flipped') TO :'junk_file' WITH (FORMAT binary);
COPY rg_loaded FROM :'junk_file' WITH (FORMAT binary);
SELECT count(*) AS rows_after_refusals FROM rg_loaded;

-- Forged values: a real weighted graph with one field edited.  Every one is refused by binary
-- input (rankgraph_recv, 22P03) and by text input (rankgraph_in, 22P02).
-- Bytes of rankgraph_send: magic (4), skipped rows (8), then the flat graph, whose header holds
-- the offset of array i at byte 48 + 8 i (arrays: 0 node ids, 1 in_ptr, 2 in_src, 3 in_weight,
-- 4 out_ptr, 5 out_dst, 6 out_weight, 7 out_strength, 8 dangling); multi-byte fields little-endian.
CREATE TABLE rg_small(src bigint, dst bigint, w float8);
INSERT INTO rg_small VALUES (1, 2, 1), (2, 3, 2), (3, 1, 1), (1, 3, 3), (1, 4, 5);
CREATE TABLE rg_small_graph AS
  SELECT powerrank_graph(src, dst, w) AS gw, powerrank_graph(src, dst) AS gu FROM rg_small;
-- byte position (0-based) in the send bytes of element idx of array arr, elem bytes each
CREATE FUNCTION rg_pos(b bytea, arr int, idx int, elem int) RETURNS int LANGUAGE sql AS $$
  SELECT 12 + sum(get_byte(b, 12 + 48 + 8 * arr + k)::bigint << (8 * k))::int + elem * idx
  FROM generate_series(0, 7) k $$;
-- a float8 / int4 as little-endian bytes
CREATE FUNCTION rg_le(x float8) RETURNS bytea LANGUAGE sql AS $$
  SELECT string_agg(substring(float8send(x) FROM 9 - k FOR 1), ''::bytea ORDER BY k)
  FROM generate_series(1, 8) k $$;
CREATE FUNCTION rg_le(x int4) RETURNS bytea LANGUAGE sql AS $$
  SELECT string_agg(substring(int4send(x) FROM 5 - k FOR 1), ''::bytea ORDER BY k)
  FROM generate_series(1, 4) k $$;
CREATE FUNCTION rg_set(b bytea, arr int, idx int, x float8) RETURNS bytea LANGUAGE sql AS $$
  SELECT overlay(b PLACING rg_le(x) FROM rg_pos(b, arr, idx, 8) + 1 FOR 8) $$;
CREATE FUNCTION rg_set(b bytea, arr int, idx int, x int4) RETURNS bytea LANGUAGE sql AS $$
  SELECT overlay(b PLACING rg_le(x) FROM rg_pos(b, arr, idx, 4) + 1 FOR 4) $$;
-- the send bytes of the weighted graph: in-edges by destination (sources ascending):
-- 1<-3 (w 1), 2<-1 (1), 3<-1 (3), 3<-2 (2), 4<-1 (5); out-strengths 9, 2, 1, 0 of nodes 1..4
CREATE TABLE rg_forged(name text, g bytea);
INSERT INTO rg_forged
  SELECT f.name, f.g FROM rg_small_graph, rankgraph_send(gw) b, LATERAL (VALUES
    ('unchanged', b),
    ('weight 1e308', rg_set(b, 3, 2, 1e308::float8)),
    ('weights 6e306 + 6e306, out-strength to match', rg_set(rg_set(rg_set(b, 3, 2, 6e306::float8), 3, 4, 6e306::float8), 7, 0, (1::float8 + 6e306::float8) + 6e306::float8)),
    ('weights 1e308 + 1e308, out-strength Infinity', rg_set(rg_set(rg_set(b, 3, 2, 1e308::float8), 3, 4, 1e308::float8), 7, 0, 'Infinity'::float8)),
    ('weight 0', rg_set(b, 3, 2, 0::float8)),
    ('weight NaN', rg_set(b, 3, 2, 'NaN'::float8)),
    ('weight Infinity', rg_set(b, 3, 2, 'Infinity'::float8)),
    ('weight -1', rg_set(b, 3, 2, -1::float8)),
    ('weight and out-strength 5e-324 (subnormal)', rg_set(rg_set(b, 3, 0, 5e-324::float8), 7, 2, 5e-324::float8)),
    ('every weight 5e-324, out-strengths to match', rg_set(rg_set(rg_set(rg_set(rg_set(rg_set(rg_set(rg_set(b, 3, 0, 5e-324::float8), 3, 1, 5e-324::float8), 3, 2, 5e-324::float8), 3, 3, 5e-324::float8), 3, 4, 5e-324::float8), 7, 0, 3 * 5e-324::float8), 7, 1, 5e-324::float8), 7, 2, 5e-324::float8)),
    ('weight and out-strength 2.2250738585072014e-308 (smallest normal)', rg_set(rg_set(b, 3, 0, 2.2250738585072014e-308::float8), 7, 2, 2.2250738585072014e-308::float8)),
    ('out-strength 8 (sum is 9)', rg_set(b, 7, 0, 8::float8)),
    ('out-strength 0 (not in the dangling list)', rg_set(b, 7, 1, 0::float8)),
    ('dangling node 4 made 3', rg_set(b, 8, 0, 2)),
    ('in-edge row sources descending', rg_set(rg_set(b, 2, 2, 2), 2, 3, 0)),
    ('node ids unsorted', overlay(b PLACING '\x0500000000000000'::bytea FROM rg_pos(b, 0, 0, 8) + 1 FOR 8)),
    ('a trailing byte', b || '\x00'::bytea)) f(name, g);
INSERT INTO rg_forged
  SELECT f.name, f.g FROM rg_small_graph, rankgraph_send(gu) b, LATERAL (VALUES
    ('unweighted: out-degree 2 (is 3)', rg_set(b, 7, 0, 2::float8)),
    ('unweighted: out-degree 1.5', rg_set(b, 7, 0, 1.5::float8))) f(name, g);
-- tries both inputs, returns "SQLSTATE message: detail" or 'accepted'
CREATE FUNCTION rg_try_recv(forgery text, file text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  detail text;
BEGIN
  EXECUTE format('COPY (SELECT g FROM rg_forged WHERE name = %L) TO %L WITH (FORMAT binary)',
                 forgery, file);
  CREATE TEMP TABLE rg_one(g rankgraph);
  BEGIN
    EXECUTE format('COPY rg_one FROM %L WITH (FORMAT binary)', file);
    DROP TABLE rg_one;
    RETURN 'accepted';
  EXCEPTION WHEN others THEN
    GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
    DROP TABLE rg_one;
    RETURN SQLSTATE || ' ' || SQLERRM || ': ' || detail;
  END;
END $$;
CREATE FUNCTION rg_try_in(forgery text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  detail text;
  hint text;
BEGIN
  PERFORM ('PRG1:' || encode(g, 'base64'))::rankgraph FROM rg_forged WHERE name = forgery;
  RETURN 'accepted';
EXCEPTION WHEN others THEN
  GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
  RETURN SQLSTATE || ' ' || SQLERRM || ': ' || detail;
END $$;
SELECT name, rg_try_recv(name, :'junk_file') AS binary_input,
       rg_try_in(name) = replace(rg_try_recv(name, :'junk_file'), '22P03', '22P02') AS text_input_same
FROM rg_forged ORDER BY name;
-- the unchanged bytes rank as the graph they came from
SELECT bool_and(a.score = b.score) AND count(*) = 4 AS unchanged_same_scores
FROM rg_small_graph, rg_forged f, pagerank(gw) a
JOIN pagerank((SELECT ('PRG1:' || encode(g, 'base64'))::rankgraph FROM rg_forged
               WHERE name = 'unchanged')) b USING (node)
WHERE f.name = 'unchanged';
-- the error a user sees, with its hint
\set VERBOSITY default
COPY (SELECT g FROM rg_forged WHERE name = 'weight 0') TO :'junk_file' WITH (FORMAT binary);
COPY rg_loaded(g) FROM :'junk_file' WITH (FORMAT binary);
-- Subnormal weights: the aggregate never stores one (it scales every weight up by one power of two,
-- sql/huge_weights.sql), so a value holding one is forged; pagerank and rwr on it would give NaN
-- scores, hits hub and authority sums of 0.  Refused by binary and by text input, with the hint;
-- the smallest normal weight is accepted and ranks.
COPY (SELECT g FROM rg_forged WHERE name = 'weight and out-strength 5e-324 (subnormal)')
  TO :'junk_file' WITH (FORMAT binary);
COPY rg_loaded(g) FROM :'junk_file' WITH (FORMAT binary);
SELECT rankgraph_summary(('PRG1:' || encode(g, 'base64'))::rankgraph) FROM rg_forged
WHERE name = 'every weight 5e-324, out-strengths to match';
SELECT count(*) AS nodes, round(sum(score)::numeric, 12) AS sum
FROM rg_forged f, pagerank(('PRG1:' || encode(f.g, 'base64'))::rankgraph)
WHERE f.name = 'weight and out-strength 2.2250738585072014e-308 (smallest normal)';

DROP FUNCTION rg_try_recv(text, text), rg_try_in(text), rg_set(bytea, int, int, float8),
  rg_set(bytea, int, int, int4), rg_le(float8), rg_le(int4), rg_pos(bytea, int, int, int);
DROP TABLE rg_edges, rg_saved, rg_loaded, rg_junk, rg_small, rg_small_graph, rg_forged;
