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
SELECT name, g FROM rg_loaded ORDER BY name;

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

DROP TABLE rg_edges, rg_saved, rg_loaded, rg_junk;
