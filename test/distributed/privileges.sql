-- test/distributed/privileges.sql — a shard reads as the user the user mapping names: the
-- password rule of postgres_fdw for a user who is not a superuser, a shard table that user may
-- not read, and row-level security on a shard.
CREATE ROLE alice LOGIN;
GRANT SELECT ON edges_two, edges_rls TO alice;
CREATE USER MAPPING FOR alice SERVER s1 OPTIONS (user 'alice');
CREATE USER MAPPING FOR alice SERVER s2 OPTIONS (user 'alice');
SET ROLE alice;
SELECT count(*) FROM pagerank('edges_two');
RESET ROLE;
ALTER USER MAPPING FOR alice SERVER s1 OPTIONS (ADD password_required 'false');
ALTER USER MAPPING FOR alice SERVER s2 OPTIONS (ADD password_required 'false');
SET ROLE alice;
SELECT count(*) FROM pagerank('edges_two');
SELECT count(*) > 0 FROM pagerank('edges_rls');
SELECT engine, edges FROM powerrank_last_run() \gset alice_
RESET ROLE;
SELECT :'alice_engine' AS engine,
	   :alice_edges = (SELECT count(*) FROM edges_rls_0) +
					  (SELECT count(*) FROM edges_rls_1 WHERE src % 2 = 0) AS only_visible_rows;
