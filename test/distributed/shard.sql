-- test/distributed/shard.sql — the tables of every shard server (run.sh runs it on each).
CREATE TABLE two_0 (src bigint, dst bigint, w float8);
CREATE TABLE two_1 (src bigint, dst bigint, w float8);
CREATE TABLE three_0 (src bigint, dst bigint, w float8);
CREATE SCHEMA "shard space";
CREATE TABLE "shard space".three_1 (src bigint, dst bigint, w float8);
CREATE TABLE three_2 (a bigint, b bigint, weight float8);
CREATE TABLE mix_1 (src bigint, dst bigint, w float8);
CREATE TABLE by_src_0 (src bigint, dst bigint, w float8);
CREATE TABLE by_src_1 (src bigint, dst bigint, w float8);
CREATE TABLE mix_2 (src bigint, dst bigint, w float8);
CREATE TABLE gap_0 (src bigint, dst bigint, w float8);
CREATE TABLE gap_1 (src bigint, dst bigint, w float8);
CREATE TABLE slow_0 (src bigint, dst bigint, w float8);
INSERT INTO slow_0 VALUES (1, 2, 1), (2, 3, 1);
CREATE TABLE slow_rows (src bigint, dst bigint, w float8);
INSERT INTO slow_rows VALUES (3, 1, 1);
-- a shard table that takes 30 s to read
CREATE VIEW slow_1 AS SELECT r.src, r.dst, r.w FROM slow_rows r, pg_sleep(30) s;
-- a role that may read rls_0 and the rows of rls_1 whose src is even, and not two_0
CREATE ROLE alice LOGIN;
CREATE TABLE rls_0 (src bigint, dst bigint, w float8);
CREATE TABLE rls_1 (src bigint, dst bigint, w float8);
GRANT SELECT ON two_1, rls_0, rls_1, slow_0, slow_1 TO alice;
ALTER TABLE rls_1 ENABLE ROW LEVEL SECURITY;
CREATE POLICY even_sources ON rls_1 FOR SELECT TO alice USING (src % 2 = 0);
-- the coordinator's kept node sets: a table of many nodes, and one truncated and re-partitioned
CREATE TABLE big_0 (src bigint, dst bigint, w float8);
CREATE TABLE big_1 (src bigint, dst bigint, w float8);
CREATE TABLE ns_0 (src bigint, dst bigint, w float8);
CREATE TABLE ns_1 (src bigint, dst bigint, w float8);
-- a directed cycle: PageRank from one node converges slowly there (runs to interrupt)
CREATE TABLE cycle_0 (src bigint, dst bigint, w float8);
CREATE TABLE cycle_1 (src bigint, dst bigint, w float8);
-- a table over two shards the coordinator reaches over IPv4 and IPv6 (their pairs cannot connect)
CREATE TABLE v6_0 (src bigint, dst bigint, w float8);
CREATE TABLE v6_1 (src bigint, dst bigint, w float8);
-- a shard's rows renumbered for the rows it owns, kept with its cached graph for new sessions
CREATE TABLE num_0 (src bigint, dst bigint, w float8);
CREATE TABLE num_1 (src bigint, dst bigint, w float8);
