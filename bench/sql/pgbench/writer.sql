-- a writer of the mixed load: inserts 3 edges between existing nodes and deletes 2 rows, in one
-- transaction (so every write moves count(*), which the checks compare with the edges each run saw)
\set a random(1, :nsrc)
\set b random(1, :nsrc)
BEGIN;
INSERT INTO @TABLE@ (src, dst)
  SELECT s.node, d.node FROM bench_sources s, bench_sources d
  WHERE s.tbl = '@TABLE@' AND d.tbl = '@TABLE@' AND s.i IN (:a, :b, 1 + (:a + :b) % :nsrc) AND d.i = :b;
DELETE FROM @TABLE@ WHERE ctid = ANY (ARRAY(SELECT ctid FROM @TABLE@ TABLESAMPLE SYSTEM (0.05) LIMIT 2));
COMMIT;
