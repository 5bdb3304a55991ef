-- Live tables (powerrank_cache_live): a cached graph follows inserts, deletes, weight updates, new
-- and vanished nodes by a patch with the rows changed since, equal to a fresh build; TRUNCATE, ALTER
-- TABLE, a disabled capture trigger, too many changed rows and a compaction in a user's transaction
-- build from the rows; a background compaction keeps the cached graph a base.
SET client_min_messages = warning;
CREATE TABLE lv(src bigint, dst bigint, w float8);
-- 2000 edges; node i >= 200 has one out-edge and no in-edge
INSERT INTO lv SELECT i, (i * 7 + 3) % 200, 1 + i % 5 FROM generate_series(0, 1999) i;

-- Only a tracked table's owner makes it live.
SELECT powerrank_cache_live('lv');
SELECT powerrank_cache_enable('lv');
SELECT powerrank_cache_live('lv') AS installed;
SELECT powerrank_cache_live('lv') AS installed_again;
SELECT tgname, tgenabled, tgoldtable, tgnewtable FROM pg_trigger
WHERE tgrelid = 'lv'::regclass ORDER BY tgname;

-- The live call (the cache on) and a fresh build (the cache off) of the same table: how the live
-- call got its graph, its size, and whether both give the same nodes, edges and scores.
CREATE FUNCTION live_compare(weight name DEFAULT 'w', is_directed boolean DEFAULT true,
	OUT graph_source text, OUT delta_rows bigint, OUT nodes bigint, OUT edges bigint,
	OUT skipped bigint, OUT same_graph boolean, OUT same_scores boolean)
LANGUAGE plpgsql AS $$
DECLARE
	fresh record;
BEGIN
	CREATE TEMP TABLE live_a AS SELECT * FROM pagerank('lv', weight_column => weight,
		directed => is_directed, tolerance => 1e-12, device => 'cpu');
	SELECT r.graph_source, r.delta_rows, r.nodes, r.edges, r.skipped_rows
	INTO graph_source, delta_rows, nodes, edges, skipped FROM powerrank_last_run() r;
	SET LOCAL powerrank.cache_size = 0;
	CREATE TEMP TABLE live_b AS SELECT * FROM pagerank('lv', weight_column => weight,
		directed => is_directed, tolerance => 1e-12, device => 'cpu');
	SELECT r.nodes, r.edges, r.skipped_rows, r.graph_source INTO fresh FROM powerrank_last_run() r;
	same_graph := fresh.nodes = nodes AND fresh.edges = edges AND fresh.skipped_rows = skipped
		AND fresh.graph_source = 'read';
	SELECT coalesce(bool_and(a.node IS NOT NULL AND b.node IS NOT NULL
							 AND abs(a.score - b.score) < 1e-10), false)
	INTO same_scores FROM live_a a FULL JOIN live_b b USING (node);
	DROP TABLE live_a;
	DROP TABLE live_b;
END
$$;

-- Built once, then served from the cache.
SELECT * FROM live_compare();
SELECT * FROM live_compare();

-- Inserts, with a node new to the graph: patched.
INSERT INTO lv VALUES (1, 2, 3.5), (5000, 7, 1), (7, 5000, 2);
SELECT * FROM live_compare();
-- Deletes, of node 1999's only edge (the node vanishes) and of a parallel edge's copy.
DELETE FROM lv WHERE src = 1999;
DELETE FROM lv WHERE src = 1 AND dst = 2;
SELECT * FROM live_compare();
-- Weight updates (an old and a new row each) and moved edges.
UPDATE lv SET w = w + 0.25 WHERE src < 10;
UPDATE lv SET dst = dst + 1 WHERE src BETWEEN 300 AND 304;
SELECT * FROM live_compare();
-- Several writers, a rolled-back one and a rolled-back savepoint: only the committed rows count.
INSERT INTO lv VALUES (6000, 1, 1);
BEGIN;
INSERT INTO lv VALUES (6001, 1, 1);
ROLLBACK;
BEGIN;
INSERT INTO lv VALUES (6002, 1, 1);
SAVEPOINT s;
DELETE FROM lv WHERE src = 6000;
ROLLBACK TO SAVEPOINT s;
COMMIT;
SELECT * FROM live_compare();
-- A rolled-back writer only: the cached graph as it is.
BEGIN;
DELETE FROM lv WHERE src < 100;
ROLLBACK;
SELECT * FROM live_compare();
-- Rows with a NULL are skipped, as in a build; deleting one un-skips it.
INSERT INTO lv VALUES (NULL, 1, 1), (8000, 1, NULL);
SELECT * FROM live_compare();
DELETE FROM lv WHERE src IS NULL;
SELECT * FROM live_compare();
-- INSERT ... ON CONFLICT DO UPDATE, MERGE, a query that modifies the table twice, and deletes
-- cascaded from a referenced table: every changed row is captured.
CREATE UNIQUE INDEX lv_edge ON lv (src, dst) WHERE src >= 7000;
INSERT INTO lv VALUES (7000, 1, 1), (7001, 2, 1);
INSERT INTO lv VALUES (7000, 1, 5), (7002, 3, 1) ON CONFLICT (src, dst) WHERE src >= 7000 DO UPDATE SET w = EXCLUDED.w;
SELECT * FROM live_compare();
MERGE INTO lv USING (VALUES (7001::bigint, 2::bigint, 9::float8), (7003, 4, 1)) AS v(s, d, x)
  ON lv.src = v.s AND lv.dst = v.d
  WHEN MATCHED THEN UPDATE SET w = v.x
  WHEN NOT MATCHED THEN INSERT VALUES (v.s, v.d, v.x);
SELECT * FROM live_compare();
WITH gone AS (DELETE FROM lv WHERE src = 7002 RETURNING *)
INSERT INTO lv SELECT src + 10, dst, w FROM gone;
SELECT * FROM live_compare();
CREATE TABLE lv_nodes(id bigint PRIMARY KEY);
INSERT INTO lv_nodes VALUES (7010), (7011);
INSERT INTO lv VALUES (7011, 5, 1);
ALTER TABLE lv ADD CONSTRAINT lv_src FOREIGN KEY (src) REFERENCES lv_nodes(id) ON DELETE CASCADE NOT VALID;
SELECT * FROM live_compare();
DELETE FROM lv_nodes WHERE id IN (7010, 7011);
SELECT * FROM live_compare();
ALTER TABLE lv DROP CONSTRAINT lv_src;
DROP TABLE lv_nodes;
DROP INDEX lv_edge;

-- The caller's own uncommitted changes: built from the rows, as without the capture.
BEGIN;
INSERT INTO lv VALUES (9000, 1, 1);
SELECT count(*) > 0 AS ranked FROM pagerank('lv', weight_column => 'w', device => 'cpu');
SELECT graph_source FROM powerrank_last_run();
ROLLBACK;

-- Other columns (unweighted) and undirected: their own entries, patched alike.
SELECT * FROM live_compare(NULL);
SELECT * FROM live_compare(NULL, false);
INSERT INTO lv VALUES (2, 3, 1), (9001, 9001, 1);
DELETE FROM lv WHERE src = 1998;
SELECT * FROM live_compare(NULL);
SELECT * FROM live_compare(NULL, false);
SELECT * FROM live_compare();

-- Weight updates only: every row keeps its length and no node id moves.
UPDATE lv SET w = w * 2 WHERE src BETWEEN 20 AND 40;
SELECT * FROM live_compare();
-- A node new to the graph below the largest id: the ids above it move.
INSERT INTO lv VALUES (2500, 11, 1), (11, 2500, 2);
SELECT * FROM live_compare();
-- HITS on a patched graph (the out-edges added where it runs) and on a fresh build: the same.
INSERT INTO lv VALUES (12, 2500, 1);
CREATE TEMP TABLE hits_a AS SELECT * FROM hits('lv', weight_column => 'w', tolerance => 1e-12,
	device => 'cpu');
SELECT graph_source FROM powerrank_last_run();
SET powerrank.cache_size = 0;
CREATE TEMP TABLE hits_b AS SELECT * FROM hits('lv', weight_column => 'w', tolerance => 1e-12,
	device => 'cpu');
RESET powerrank.cache_size;
SELECT count(*) AS nodes, bool_and(abs(a.hub - b.hub) < 1e-10 AND abs(a.authority - b.authority) < 1e-10)
	AS same_scores
FROM hits_a a FULL JOIN hits_b b USING (node);
DROP TABLE hits_a, hits_b;

-- powerrank_cache shows the rows patched into each entry since its last build.
SELECT columns, directed, changes > 0 AS has_changes, delta_rows FROM powerrank_cache
WHERE source = 'lv'::regclass ORDER BY columns, directed;

-- More changed rows than a patch takes (5% of the edges, at least 1000): built from the rows.
INSERT INTO lv SELECT 20000 + i, i % 100, 1 FROM generate_series(1, 1200) i;
SELECT * FROM live_compare();
-- A statement of more than 100000 rows keeps none of them: built from the rows.
INSERT INTO lv SELECT 100000 + i, i % 100, 1 FROM generate_series(1, 100001) i;
SELECT complete, old_rows IS NULL AS no_old, new_rows IS NULL AS no_new
FROM powerrank_change_rows WHERE relid = 'lv'::regclass ORDER BY change DESC LIMIT 1;
SELECT * FROM live_compare();
DELETE FROM lv WHERE src > 100000;
SELECT * FROM live_compare();

-- TRUNCATE and ALTER TABLE: built from the rows, then patched again.
TRUNCATE lv;
INSERT INTO lv SELECT i, (i * 7 + 3) % 200, 1 + i % 5 FROM generate_series(0, 1999) i;
SELECT * FROM live_compare();
INSERT INTO lv VALUES (1, 2, 3);
SELECT * FROM live_compare();
ALTER TABLE lv ADD COLUMN note text;
SELECT * FROM live_compare();
INSERT INTO lv VALUES (3, 4, 5, 'a long note that the capture leaves out');
SELECT * FROM live_compare();

-- A disabled capture trigger: built from the rows until it is enabled ALWAYS again (which starts
-- a new base).
ALTER TABLE lv DISABLE TRIGGER powerrank_capture_insert;
SELECT * FROM live_compare();
INSERT INTO lv VALUES (4, 5, 6);
SELECT * FROM live_compare();
ALTER TABLE lv ENABLE ALWAYS TRIGGER powerrank_capture_insert;
SELECT * FROM live_compare();
INSERT INTO lv VALUES (5, 6, 7);
SELECT * FROM live_compare();
-- A dropped capture trigger: built from the rows.
DROP TRIGGER powerrank_capture_delete ON lv;
DELETE FROM lv WHERE src = 5 AND dst = 6;
SELECT * FROM live_compare();

-- A compaction starts a new base and deletes the change rows of the writers it compacted.
SELECT powerrank_cache_live('lv') AS reinstalled;
INSERT INTO lv VALUES (6, 7, 8);
SELECT count(*) > 0 AS rows_kept FROM powerrank_change_rows WHERE relid = 'lv'::regclass;
SELECT powerrank_cache_compact() > 0 AS compacted;
SELECT count(*) AS rows_left FROM powerrank_change_rows WHERE relid = 'lv'::regclass;
SELECT * FROM live_compare();

-- A background compaction keeps the cached graph a base: its transaction changes nothing else,
-- and it keeps the change rows from the newest base's snapshot xmin up (kept_from).  A new session
-- logs 1,000 changes (one committed transaction each) and so asks for the worker at the last one.
TRUNCATE lv;
INSERT INTO lv SELECT g % 3000, (g * 7) % 2999, 1 + g % 3 FROM generate_series(1, 30000) g;
SELECT * FROM live_compare();
CREATE PROCEDURE live_writes_then_compaction() LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1..1000 LOOP
    INSERT INTO lv VALUES (40000 + i, i % 2999, 2);
    COMMIT;
  END LOOP;
  FOR i IN 1..300 LOOP
    EXIT WHEN (SELECT count(*) FROM powerrank_change_log WHERE relid = 'lv'::regclass) < 64;
    PERFORM pg_sleep(0.1);
  END LOOP;
END $$;
\c
SET client_min_messages = warning;
CALL live_writes_then_compaction();
SELECT rebase, kept_from IS NOT NULL AS keeps_bases
FROM powerrank_change_log WHERE relid = 'lv'::regclass;
SELECT * FROM live_compare();
-- An ALTER TABLE between the cached graph and the call (here: a write the capture missed) whose
-- rebase row a background compaction deleted: that compaction records no kept_from, and the call
-- builds from the rows.
ALTER TABLE lv DISABLE TRIGGER powerrank_capture_insert;
INSERT INTO lv VALUES (90000, 1, 1);
ALTER TABLE lv ENABLE ALWAYS TRIGGER powerrank_capture_insert;
\c
SET client_min_messages = warning;
CALL live_writes_then_compaction();
SELECT rebase, kept_from IS NOT NULL AS keeps_bases
FROM powerrank_change_log WHERE relid = 'lv'::regclass;
SELECT * FROM live_compare();
INSERT INTO lv VALUES (90001, 2, 1);
SELECT * FROM live_compare();
DROP PROCEDURE live_writes_then_compaction();

DROP TABLE lv;
SELECT powerrank_cache_compact() >= 0 AS compacted;
SELECT count(*) AS rows_of_dropped FROM powerrank_change_rows
WHERE NOT EXISTS (SELECT FROM pg_class c WHERE c.oid = relid);
DROP FUNCTION live_compare(name, boolean);
