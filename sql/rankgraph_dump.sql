-- rankgraph columns survive pg_dump / pg_restore (plain and custom formats), text COPY and casts
-- through text: the text form ("PRG1:" + base64 of the binary form) is read back and validated.
\getenv bindir POWERRANK_BINDIR
\getenv abs_builddir PG_ABS_BUILDDIR
\set dump_plain :abs_builddir '/results/rankgraph_dump.sql'
\set dump_custom :abs_builddir '/results/rankgraph_dump.custom'
\set copy_file :abs_builddir '/results/rankgraph_dump.copy'
\set home_db :DBNAME

-- text in / out in this database
CREATE TABLE rgd_edges(src bigint, dst bigint, w float8);
INSERT INTO rgd_edges SELECT i, (i * 7) % 50 + 1, (i % 5) + 0.5 FROM generate_series(1, 50) i;
INSERT INTO rgd_edges VALUES (1, 3, 1e308), (1, 4, 1e308);
CREATE TABLE rgd(name text, g rankgraph);
INSERT INTO rgd SELECT 'weighted', powerrank_graph(src, dst, w) FROM rgd_edges;
INSERT INTO rgd SELECT 'plain', powerrank_graph(src, dst) FROM rgd_edges;
INSERT INTO rgd SELECT 'empty', powerrank_graph(src, dst) FROM rgd_edges WHERE false;
SELECT name, rankgraph_summary(g), left(g::text, 5) AS prefix,
       g::text::rankgraph::text = g::text AS text_round_trip,
       length(g::text) <= 4 * (pg_column_size(rankgraph_send(g)) + 2) / 3 + 10 AS compact,
       (SELECT coalesce(bool_and(a.score = b.score), true) AND count(*) = count(b.node)
        FROM pagerank(g, tolerance => 1e-12) a
        FULL JOIN pagerank(g::text::rankgraph, tolerance => 1e-12) b USING (node)) AS same_scores
FROM rgd ORDER BY name;

-- text COPY
COPY rgd TO :'copy_file';
CREATE TABLE rgd_copied(name text, g rankgraph);
COPY rgd_copied FROM :'copy_file';
SELECT name, (SELECT coalesce(bool_and(a.score = b.score), true) AND count(*) = count(b.node)
              FROM pagerank(r.g, tolerance => 1e-12) a
              FULL JOIN pagerank(c.g, tolerance => 1e-12) b USING (node)) AS same_scores
FROM rgd r JOIN rgd_copied c USING (name) ORDER BY name;

-- text that is not a rankgraph
SELECT 'PRG1:AAAA'::rankgraph;
SELECT 'PRG1:not base64!'::rankgraph;
SELECT 'rankgraph(nodes=3, edges=4, weighted=f)'::rankgraph;

-- pg_dump of a whole database holding rankgraph columns and their reference scores
CREATE DATABASE rgd_source TEMPLATE template0;
CREATE DATABASE rgd_plain TEMPLATE template0;
CREATE DATABASE rgd_custom TEMPLATE template0;
\c rgd_source
SET client_min_messages = warning;
CREATE EXTENSION powerrank;
RESET client_min_messages;
CREATE TABLE graphs(name text, g rankgraph);
\set copy_in 'COPY graphs FROM ' :'copy_file'
:copy_in;
CREATE TABLE scores AS
  SELECT name, 'pagerank' AS algorithm, p.node, p.score
  FROM graphs, pagerank(g, tolerance => 1e-12) p
  UNION ALL
  SELECT name, 'hub', h.node, h.hub FROM graphs, hits(g, tolerance => 1e-12) h;
CREATE TABLE texts AS SELECT name, md5(g::text) AS text_md5 FROM graphs;
SELECT name, algorithm, count(*) FROM scores GROUP BY name, algorithm ORDER BY name, algorithm;
\setenv PGDATABASE rgd_source
\! "$POWERRANK_BINDIR/pg_dump" -f "$PG_ABS_BUILDDIR/results/rankgraph_dump.sql"; echo "pg_dump plain: exit $?"
\! "$POWERRANK_BINDIR/pg_dump" -Fc -f "$PG_ABS_BUILDDIR/results/rankgraph_dump.custom"; echo "pg_dump custom: exit $?"
\! "$POWERRANK_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -d rgd_plain -f "$PG_ABS_BUILDDIR/results/rankgraph_dump.sql" > /dev/null; echo "psql restore: exit $?"
\! "$POWERRANK_BINDIR/pg_restore" --exit-on-error -d rgd_custom "$PG_ABS_BUILDDIR/results/rankgraph_dump.custom"; echo "pg_restore: exit $?"

-- the restored graphs rank exactly as the originals did
\c rgd_plain
\i sql/include/rankgraph_dump_check.sql
\c rgd_custom
\i sql/include/rankgraph_dump_check.sql

\c :home_db
DROP DATABASE rgd_source WITH (FORCE);
DROP DATABASE rgd_plain WITH (FORCE);
DROP DATABASE rgd_custom WITH (FORCE);
DROP TABLE rgd_edges, rgd, rgd_copied;
