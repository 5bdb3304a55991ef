-- Privileges, row-level security and hostile names: the functions run with the caller's rights
-- (SECURITY INVOKER), check SELECT before reading anything, honour RLS policies, and quote every
-- name they put in a query.
\set VERBOSITY default
CREATE ROLE regress_powerrank_reader;
CREATE TABLE public_edges(src bigint, dst bigint, w float8);
INSERT INTO public_edges VALUES (1, 2, 1), (2, 1, 1), (2, 3, 1);
GRANT SELECT ON public_edges TO regress_powerrank_reader;

-- No SELECT on the table: permission denied, and the table is not read.  The relation is a view
-- whose rows would raise a NOTICE when read; the denial comes with no NOTICE, and the previous
-- run's statistics stay as they were.
CREATE TABLE secret_base(src bigint, dst bigint, w float8);
INSERT INTO secret_base VALUES (1, 2, 1), (NULL, 2, 1);
CREATE FUNCTION noisy_read(bigint) RETURNS bigint LANGUAGE plpgsql AS
$$ BEGIN RAISE NOTICE 'secret row read'; RETURN $1; END $$;
GRANT EXECUTE ON FUNCTION noisy_read(bigint) TO PUBLIC;
CREATE VIEW secret_edges AS SELECT noisy_read(src) AS src, dst, w FROM secret_base;
-- (reading it as its owner shows the NOTICEs)
SELECT count(*) FROM pagerank('secret_edges');
SET ROLE regress_powerrank_reader;
SELECT count(*) FROM pagerank('public_edges');
SELECT algorithm, nodes, edges, skipped_rows FROM powerrank_last_run();
SELECT * FROM pagerank('secret_edges');
SELECT * FROM hits('secret_edges');
SELECT * FROM rwr('secret_edges', 1);
SELECT * FROM rwr('secret_edges', ARRAY[1]);
SELECT algorithm, nodes, edges, skipped_rows FROM powerrank_last_run();
-- the aggregate goes through the executor's own permission check
SELECT powerrank_graph(src, dst) FROM secret_edges;
RESET ROLE;

-- Column privileges: SELECT on (src, dst) is enough for the unweighted form, not for a weight.
CREATE TABLE column_edges(src bigint, dst bigint, w float8, secret text);
INSERT INTO column_edges VALUES (1, 2, 5, 'x'), (2, 1, 1, 'y');
GRANT SELECT (src, dst) ON column_edges TO regress_powerrank_reader;
SET ROLE regress_powerrank_reader;
SELECT node, round(score::numeric, 6) FROM pagerank('column_edges') ORDER BY node;
SELECT * FROM pagerank('column_edges', weight_column => 'w');
RESET ROLE;

-- Row-level security: only the rows the caller can see count.  The reader sees the rows of
-- group 'a'; its ranking equals the ranking of a table holding just those rows.
CREATE TABLE rls_edges(src bigint, dst bigint, grp text);
INSERT INTO rls_edges VALUES (1, 2, 'a'), (2, 3, 'a'), (3, 1, 'a'), (3, 4, 'a'),
                             (4, 1, 'b'), (5, 1, 'b'), (1, 5, 'b'), (6, 7, 'b');
ALTER TABLE rls_edges ENABLE ROW LEVEL SECURITY;
CREATE POLICY only_a ON rls_edges FOR SELECT USING (grp = 'a');
GRANT SELECT ON rls_edges TO regress_powerrank_reader;
CREATE TABLE visible_edges AS SELECT src, dst FROM rls_edges WHERE grp = 'a';
-- the owner (not subject to the policy) sees all 7 nodes
SELECT count(*) AS owner_nodes FROM pagerank('rls_edges');
SET ROLE regress_powerrank_reader;
SELECT count(*) AS reader_nodes FROM pagerank('rls_edges');
SELECT nodes, edges FROM powerrank_last_run();
CREATE TEMP TABLE reader_view AS SELECT * FROM pagerank('rls_edges', tolerance => 1e-12);
CREATE TEMP TABLE reader_hits AS SELECT * FROM hits('rls_edges', tolerance => 1e-12);
RESET ROLE;
SELECT count(*) = 4 AS same_nodes,
       bool_and(abs(r.score - v.score) < 1e-12) AS same_scores
FROM reader_view r JOIN pagerank('visible_edges', tolerance => 1e-12) v USING (node);
SELECT bool_and(abs(r.hub - v.hub) < 1e-12 AND abs(r.authority - v.authority) < 1e-12) AS same_hits
FROM reader_hits r JOIN hits('visible_edges', tolerance => 1e-12) v USING (node);
-- The cache view and powerrank_estimate give a table's counts only to roles that row-level
-- security does not restrict on it (the owner's cached graph counts rows the reader cannot see).
SELECT powerrank_cache_enable('rls_edges');
SELECT count(*) AS owner_nodes FROM pagerank('rls_edges');
ANALYZE rls_edges;
SELECT nodes, edges FROM powerrank_cache WHERE source = 'rls_edges'::regclass;
SELECT counts_from, nodes, stored_edges FROM powerrank_estimate('rls_edges');
SET ROLE regress_powerrank_reader;
SELECT count(*) AS entries_the_reader_sees FROM powerrank_cache WHERE source = 'rls_edges'::regclass;
SELECT counts_from, nodes, stored_edges FROM powerrank_estimate('rls_edges');
RESET ROLE;

-- SQL injection through the table name: not an identifier, or a quoted name that does not
-- exist; nothing is executed.
CREATE TABLE victim(x int);
INSERT INTO victim VALUES (1);
SELECT * FROM pagerank('public_edges; DROP TABLE victim');
SELECT * FROM pagerank('public_edges; DROP TABLE victim; --');
SELECT * FROM pagerank('"public_edges; DROP TABLE victim; --"');
SELECT * FROM pagerank('public_edges WHERE false; DROP TABLE victim');
SELECT * FROM pagerank($$public_edges" ; DROP TABLE victim; --$$);
-- ... and through column names: the odd name is looked up as a column, and is not there.
SELECT * FROM pagerank('public_edges', src_column => 'src FROM victim; DROP TABLE victim; --');
SELECT * FROM pagerank('public_edges', dst_column => 'dst"; DROP TABLE victim; --');
SELECT * FROM pagerank('public_edges', weight_column => '1); DROP TABLE victim; --');
SELECT * FROM hits('public_edges', src_column => 'src::text');
-- A table and columns that really have such names are read correctly.
CREATE TABLE "odd""; DROP TABLE victim; --"("s"" FROM victim; --" bigint, "d); DELETE FROM victim" bigint);
INSERT INTO "odd""; DROP TABLE victim; --" SELECT src, dst FROM public_edges;
SELECT bool_and(abs(a.score - b.score) < 1e-12) AS odd_names_ok, count(*) AS nodes
FROM pagerank('"odd""; DROP TABLE victim; --"',
              src_column => 's" FROM victim; --', dst_column => 'd); DELETE FROM victim') a
JOIN pagerank('public_edges') b USING (node);
SELECT * FROM victim;

-- Every function is SECURITY INVOKER.
SELECT p.oid::regprocedure AS function, p.prosecdef
FROM pg_proc p
WHERE p.proname IN ('pagerank', 'hits', 'rwr', 'powerrank_last_run')
ORDER BY p.oid::regprocedure::text COLLATE "C";

-- The statements the extension runs on its change log as the log's owner pin search_path: an
-- operator in a schema the caller put before pg_catalog is never called, not by ALTER TABLE (the
-- event trigger), a write (the tracking trigger), a ranking (the log's read), a compaction or a DROP.
CREATE ROLE regress_powerrank_intruder;
CREATE SCHEMA regress_intruder AUTHORIZATION regress_powerrank_intruder;
SET ROLE regress_powerrank_intruder;
CREATE TABLE regress_intruder.edges(src bigint, dst bigint);
INSERT INTO regress_intruder.edges VALUES (1, 2), (2, 1);
SELECT powerrank_cache_enable('regress_intruder.edges');
CREATE FUNCTION regress_intruder.oid_eq(oid, oid) RETURNS bool LANGUAGE plpgsql AS
$$ BEGIN RAISE NOTICE 'intruder''s oid = called as %', current_user;
RETURN $1 OPERATOR(pg_catalog.=) $2; END $$;
CREATE FUNCTION regress_intruder.xid8_eq(xid8, xid8) RETURNS bool LANGUAGE plpgsql AS
$$ BEGIN RAISE NOTICE 'intruder''s xid8 = called as %', current_user;
RETURN $1 OPERATOR(pg_catalog.=) $2; END $$;
CREATE OPERATOR regress_intruder.= (leftarg = oid, rightarg = oid, function = regress_intruder.oid_eq);
CREATE OPERATOR regress_intruder.= (leftarg = xid8, rightarg = xid8, function = regress_intruder.xid8_eq);
SET search_path = regress_intruder, pg_catalog, public;
ALTER TABLE regress_intruder.edges ADD COLUMN w float8;
INSERT INTO regress_intruder.edges VALUES (2, 3, 1);
SELECT count(*) FROM pagerank('regress_intruder.edges');
SELECT count(*) FROM pagerank('regress_intruder.edges');
SELECT cache_hit FROM powerrank_last_run();
DROP TABLE regress_intruder.edges;
RESET search_path;
RESET ROLE;
SELECT powerrank_cache_compact() >= 0 AS compacted;
SELECT rolsuper FROM pg_roles WHERE rolname = 'regress_powerrank_intruder';
DROP SCHEMA regress_intruder CASCADE;
DROP ROLE regress_powerrank_intruder;

DROP TABLE reader_view, reader_hits;
DROP TABLE public_edges, column_edges, rls_edges;
DROP VIEW secret_edges;
DROP TABLE secret_base;
DROP FUNCTION noisy_read(bigint);
DROP ROLE regress_powerrank_reader;
