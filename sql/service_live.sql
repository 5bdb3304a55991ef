-- Live tables on the GPU service (the cpu-test engine: test/regress.conf): a delta entry (inserts
-- between existing nodes, deletes, weight updates, a source left dangling, a dangling node given an
-- out-edge, a node left without any edge) is served by the engine resident on its root given the
-- delta, instead of a graph prepared anew (powerrank_last_run().residency = 'resident+delta'); its
-- scores (all, top_k) equal a fresh build's on the CPU, and an absent node has no row.  A patch that
-- adds a node is written whole, a new root the service prepares; a delta the engine does not take
-- is sent as the whole graph.
SET client_min_messages = warning;
SET powerrank.warm_start = off;
SET powerrank.warm_start_auto = off;
\i sql/include/service_wait.sql
SELECT service_ready();

CREATE TABLE slv(src bigint, dst bigint, w float8);
-- 2000 edges over nodes 0..1999 (node i >= 200: one out-edge, no in-edge), and 0..4 -> 3000..3004
-- (dangling)
INSERT INTO slv SELECT i, (i * 7 + 3) % 200, 1 + i % 5 FROM generate_series(0, 1999) i;
INSERT INTO slv SELECT i, 3000 + i, 2 FROM generate_series(0, 4) i;
SELECT powerrank_cache_enable('slv');
SELECT powerrank_cache_live('slv') AS installed;

-- The scores of one call (PageRank: all, or the top 10; RWR from source 10 of three; HITS
-- authorities) on device into the temporary table name.  HITS converges very slowly on this graph:
-- both runs stop at max_iterations, plain power iterations (no mixing, whose choices would depend on
-- the last bits of the residuals), and their last iterates are compared.
CREATE FUNCTION service_scores(name text, algorithm text, weight name, device text)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	IF algorithm = 'pagerank' THEN
		EXECUTE format('CREATE TEMP TABLE %I AS SELECT node, score FROM pagerank(%L,
			weight_column => %L, tolerance => 1e-12, device => %L)', name, 'slv', weight, device);
	ELSIF algorithm = 'top' THEN
		EXECUTE format('CREATE TEMP TABLE %I AS SELECT node, score FROM pagerank(%L,
			weight_column => %L, tolerance => 1e-12, top_k => 10, device => %L)', name, 'slv',
			weight, device);
	ELSIF algorithm = 'rwr' THEN
		EXECUTE format('CREATE TEMP TABLE %I AS SELECT node, score FROM rwr(%L, %L::bigint[],
			weight_column => %L, tolerance => 1e-12, device => %L) WHERE source = 10', name, 'slv',
			'{3,10,114}', weight, device);
	ELSE
		SET LOCAL client_min_messages = error;
		SET LOCAL powerrank.mixing_depth = 0;
		EXECUTE format('CREATE TEMP TABLE %I AS SELECT node, authority AS score FROM hits(%L,
			weight_column => %L, tolerance => 1e-12, max_iterations => 300, device => %L)', name,
			'slv', weight, device);
	END IF;
END
$$;

-- A call on the service (device => 'gpu') and a fresh build on the CPU (the cache off): how the
-- service's call got its graph, where the service kept it, and whether both give the same scores.
CREATE FUNCTION service_compare(algorithm text DEFAULT 'pagerank', weight name DEFAULT 'w',
	OUT graph_source text, OUT residency text, OUT engine text, OUT same_scores boolean)
LANGUAGE plpgsql AS $$
BEGIN
	PERFORM service_scores('svc_a', algorithm, weight, 'gpu');
	SELECT r.graph_source, r.residency, r.engine INTO graph_source, residency, engine
	FROM powerrank_last_run() r;
	SET LOCAL powerrank.cache_size = 0;
	IF algorithm = 'top' THEN
		-- many nodes tie: 10 nodes scoring as the fresh build scores them, none left out above
		PERFORM service_scores('svc_b', 'pagerank', weight, 'cpu');
		SELECT count(*) = 10 AND bool_and(abs(a.score - b.score) < 1e-9)
			AND min(a.score) >= (SELECT max(o.score) - 1e-9 FROM svc_b o
								 WHERE o.node NOT IN (SELECT node FROM svc_a))
		INTO same_scores FROM svc_a a JOIN svc_b b USING (node);
	ELSE
		PERFORM service_scores('svc_b', algorithm, weight, 'cpu');
		SELECT coalesce(bool_and(a.node IS NOT NULL AND b.node IS NOT NULL
								 AND abs(a.score - b.score) < 1e-9), false)
		INTO same_scores FROM svc_a a FULL JOIN svc_b b USING (node);
	END IF;
	DROP TABLE svc_a;
	DROP TABLE svc_b;
END
$$;

-- Built, then resident on the service.
SELECT * FROM service_compare();
SELECT * FROM service_compare();
-- Inserts between existing nodes (one a parallel edge): the patch goes as a delta.
INSERT INTO slv VALUES (1, 2, 3.5), (5, 7, 1), (8, 15, 1);
SELECT * FROM service_compare();
-- Deletes and weight updates: a second delta, merged with the first on the service.
DELETE FROM slv WHERE src = 5 AND dst = 7;
DELETE FROM slv WHERE src = 300;
INSERT INTO slv VALUES (300, (300 * 7 + 3) % 200, 1);
UPDATE slv SET w = w + 0.25 WHERE src < 10;
SELECT * FROM service_compare();
-- Node 8 loses its out-edges (it keeps its in-edge: dangling now; their targets keep theirs);
-- dangling 3000 gets an out-edge.
DELETE FROM slv WHERE src = 8;
INSERT INTO slv VALUES (3000, 5, 1.5);
SELECT * FROM service_compare();
-- Node 1999 (one out-edge, no in-edge) loses its edge: absent, no row; not a source.
DELETE FROM slv WHERE src = 1999;
SELECT * FROM service_compare();
SELECT count(*) AS rows, count(*) FILTER (WHERE node = 1999) AS absent_rows
FROM pagerank('slv', weight_column => 'w', device => 'gpu');
SELECT * FROM rwr('slv', 1999, weight_column => 'w', device => 'gpu');
-- Served again from the cache: the engine still carries the delta; top_k too.
SELECT * FROM service_compare();
SELECT * FROM service_compare('top');
-- A new engine process (after an injected engine error) serves the delta entry from scratch: the
-- root mapped, its quick layout given the delta, the tuned layout planned beside and given the
-- delta when it replaces the quick one.
\set VERBOSITY terse
SELECT powerrank_service_inject_fault('error');
SELECT count(*) FROM pagerank('slv', weight_column => 'w', device => 'gpu');
\set VERBOSITY default
SELECT service_ready();
SELECT * FROM service_compare();
SELECT * FROM service_compare();
-- RWR from three sources, on the same resident entry (columns added: the delta stays).
SELECT * FROM service_compare('rwr');
-- A new node: the patch changed the node set, the graph is prepared as any new one.
INSERT INTO slv VALUES (9000, 3, 1);
SELECT * FROM service_compare();
-- And the next patch goes as a delta again, from that graph.
INSERT INTO slv VALUES (9000, 4, 1);
SELECT * FROM service_compare();
-- A delta past an eighth of its root's edges (200 weights changed: 400 changed edges beside about
-- 2,000) but within the cache's bound (1,000 edges): the engine does not take it, the graph is
-- sent whole (and prepared for the call).
UPDATE slv SET w = w + 1 WHERE src < 200;
SELECT * FROM service_compare();
-- Past the cache's bound: the patch is written whole, a new root that the service prepares, and
-- the next patch is a delta from it.
UPDATE slv SET w = w + 1 WHERE src BETWEEN 200 AND 499;
SELECT * FROM service_compare();
INSERT INTO slv VALUES (9000, 6, 1);
SELECT * FROM service_compare();
-- HITS keeps its own resident entry of the root (with out-edges), given the delta, then the next.
SELECT * FROM service_compare('hits');
UPDATE slv SET w = w * 2 WHERE src BETWEEN 20 AND 30;
DELETE FROM slv WHERE src = 3 AND dst < 3000;
SELECT * FROM service_compare('hits');
-- A node left without any edge: HITS, which no engine serves beside absent nodes, is sent the graph
-- whole; PageRank still takes the delta.
DELETE FROM slv WHERE src = 1998;
SELECT * FROM service_compare('hits');
SELECT * FROM service_compare();
-- Unweighted: another cache entry of the table, its own delta.
SELECT * FROM service_compare(weight => NULL);
INSERT INTO slv VALUES (2, 9, 1);
SELECT * FROM service_compare(weight => NULL);

DROP FUNCTION service_compare(text, name);
DROP FUNCTION service_scores(text, text, name, text);
DROP TABLE slv;
