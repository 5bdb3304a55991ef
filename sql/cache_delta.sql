-- Delta entries (the CPU engine): a live table's patch is cached as a delta from its root entry and
-- ranked as the root's graph plus the delta.  After inserts between existing nodes, parallel edges,
-- weight updates, deletes that leave nodes without any edge (absent: no row, not in the graph for
-- a source), such a node coming back, a node new to the root (the patch is then written whole, a
-- new root) and in the undirected and unweighted entries, every call on the cached graph gives what
-- the same call gives on a fresh build (the cache off): the same nodes, scores within the runs'
-- error bounds (tolerance 1e-12: at most 6e-12 from the fixed point at damping 0.85).
SET client_min_messages = warning;
CREATE TABLE dl(src bigint, dst bigint, w float8);
-- nodes 0..399: i -> (i * 7 + 3) % 200 and a chain 0 -> 1 -> ... -> 199; node i >= 200 has that one
-- out-edge only (no in-edge), so deleting it makes the node vanish
INSERT INTO dl SELECT i, (i * 7 + 3) % 200, 1 + i % 5 FROM generate_series(0, 399) i;
INSERT INTO dl SELECT i, i + 1, 0.5 + (i % 3) FROM generate_series(0, 198) i;
SELECT powerrank_cache_enable('dl');
SELECT powerrank_cache_live('dl') AS installed;

-- The calls of one comparison on the table (weight column and direction given), into temporary
-- tables named prefix_*: PageRank (all scores and the top 5), personalized PageRank, RWR from
-- source (all and the top 5), HITS.
CREATE FUNCTION delta_calls(prefix text, weight name, is_directed boolean, source bigint)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	common text := format('weight_column => %L, directed => %L, tolerance => 1e-12, device => %L',
						  weight, is_directed, 'cpu');
BEGIN
	EXECUTE format('CREATE TEMP TABLE %I AS SELECT * FROM pagerank(%L, %s)',
				   prefix || '_pr', 'dl', common);
	EXECUTE format('CREATE TEMP TABLE %I AS SELECT * FROM pagerank(%L, %s, top_k => 5)',
				   prefix || '_top', 'dl', common);
	EXECUTE format('CREATE TEMP TABLE %I AS SELECT * FROM pagerank(%L, %s, personalization => %L)',
				   prefix || '_ppr', 'dl', common, ARRAY[source, 0]);
	EXECUTE format('CREATE TEMP TABLE %I AS SELECT * FROM rwr(%L, %s, %s)',
				   prefix || '_rwr', 'dl', source, common);
	EXECUTE format('CREATE TEMP TABLE %I AS SELECT * FROM rwr(%L, %s, %s, top_k => 5)',
				   prefix || '_rwr_top', 'dl', source, common);
	EXECUTE format('CREATE TEMP TABLE %I AS SELECT * FROM hits(%L, weight_column => %L,
				   directed => %L, tolerance => 1e-10, max_iterations => 2000, device => %L)',
				   prefix || '_hits', 'dl', weight, is_directed, 'cpu');
END
$$;

-- Whether two (node, score) tables hold the same nodes with scores within 1e-9.
CREATE FUNCTION same_scores(a text, b text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
	ok boolean;
BEGIN
	EXECUTE format('SELECT coalesce(bool_and(x.node IS NOT NULL AND y.node IS NOT NULL
					AND abs(x.score - y.score) < 1e-9), false) FROM %I x FULL JOIN %I y USING (node)',
				   a, b) INTO ok;
	RETURN ok;
END
$$;

-- Whether a top-5 table holds 5 nodes of the full table all, their scores within 1e-9 of the full
-- table's, and no node left out scoring above them (ties within 1e-9 may go either way).
CREATE FUNCTION same_top(top text, full_scores text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
	ok boolean;
BEGIN
	EXECUTE format('SELECT count(*) = 5 AND bool_and(abs(t.score - f.score) < 1e-9)
					AND min(t.score) >= (SELECT coalesce(max(o.score), 0) - 1e-9 FROM %I o
										 WHERE o.node NOT IN (SELECT node FROM %I))
					FROM %I t JOIN %I f USING (node)', full_scores, top, top, full_scores) INTO ok;
	RETURN ok;
END
$$;

-- The calls on the live table (the cache on) and on a fresh build (the cache off): how the first
-- call got its graph, its size, whether the fresh build has the same size, and whether each call
-- agrees.
CREATE FUNCTION delta_compare(weight name DEFAULT 'w', is_directed boolean DEFAULT true,
	source bigint DEFAULT 7, OUT graph_source text, OUT nodes bigint, OUT edges bigint,
	OUT same_size boolean, OUT pagerank boolean, OUT top boolean, OUT personalized boolean,
	OUT rwr boolean, OUT rwr_top boolean, OUT hits boolean)
LANGUAGE plpgsql AS $$
DECLARE
	fresh record;
BEGIN
	SET LOCAL client_min_messages = error;
	CREATE TEMP TABLE c_pr AS SELECT * FROM pagerank('dl', weight_column => weight,
		directed => is_directed, tolerance => 1e-12, device => 'cpu');
	SELECT r.graph_source, r.nodes, r.edges INTO graph_source, nodes, edges
	FROM powerrank_last_run() r;
	DROP TABLE c_pr;
	PERFORM delta_calls('c', weight, is_directed, source);
	SET LOCAL powerrank.cache_size = 0;
	PERFORM delta_calls('f', weight, is_directed, source);
	SELECT r.nodes, r.edges, r.graph_source INTO fresh FROM powerrank_last_run() r;
	same_size := fresh.nodes = nodes AND fresh.edges = edges AND fresh.graph_source = 'read';
	pagerank := same_scores('c_pr', 'f_pr');
	top := same_top('c_top', 'f_pr');
	personalized := same_scores('c_ppr', 'f_ppr');
	rwr := same_scores('c_rwr', 'f_rwr');
	rwr_top := same_top('c_rwr_top', 'f_rwr');
	SELECT coalesce(bool_and(x.node IS NOT NULL AND y.node IS NOT NULL
							 AND abs(x.hub - y.hub) < 1e-8 AND abs(x.authority - y.authority) < 1e-8),
					false)
	INTO hits FROM c_hits x FULL JOIN f_hits y USING (node);
	DROP TABLE c_pr, c_top, c_ppr, c_rwr, c_rwr_top, c_hits;
	DROP TABLE f_pr, f_top, f_ppr, f_rwr, f_rwr_top, f_hits;
END
$$;

-- The table's entries: per columns and direction, the flat graphs (roots) and the delta entries
-- (much smaller than their graph: only the change since their root).
CREATE FUNCTION delta_entries() RETURNS TABLE (columns text, directed boolean, nodes bigint,
	edges bigint, small boolean, delta_rows bigint)
LANGUAGE sql AS $$
	SELECT c.columns, c.directed, c.nodes, c.edges,
		   c.bytes < (SELECT max(r.bytes) FROM powerrank_cache r
					  WHERE r.source = 'dl'::regclass AND r.columns = c.columns
					  AND r.directed = c.directed) / 4, c.delta_rows
	FROM powerrank_cache c WHERE c.source = 'dl'::regclass
	ORDER BY c.columns, c.directed, c.delta_rows
$$;

-- Built, then served from the cache.
SELECT * FROM delta_compare();
SELECT * FROM delta_compare();

-- Inserts between existing nodes, one a parallel edge (a copy of an edge, and one of another
-- weight): a delta entry beside the root.
INSERT INTO dl VALUES (1, 2, 0.5), (1, 2, 4), (10, 150, 2), (250, 3, 1);
SELECT * FROM delta_compare();
SELECT * FROM delta_entries();
-- HITS on the delta entry takes its graph made whole and the out-edges kept with the delta entry
-- (made by delta_compare's HITS call): mapped, the same scores to the bit.
CREATE TEMP TABLE dl_hits AS SELECT * FROM hits('dl', weight_column => 'w', tolerance => 1e-3,
                                                 max_iterations => 2000, device => 'cpu');
SELECT graph_source, cache_hit FROM powerrank_last_run();
\set VERBOSITY terse
SET client_min_messages = debug1;
SELECT count(*) FROM hits('dl', weight_column => 'w', tolerance => 1e-3, max_iterations => 2000,
                          device => 'cpu');
SET client_min_messages = warning;
\set VERBOSITY default
SELECT count(*) AS nodes, bool_and(a.hub = b.hub AND a.authority = b.authority) AS same_bits
FROM hits('dl', weight_column => 'w', tolerance => 1e-3, max_iterations => 2000, device => 'cpu') a
JOIN dl_hits b USING (node);
DROP TABLE dl_hits;
-- Weight updates: the next delta from the same root, the earlier delta entry replaced.
UPDATE dl SET w = w + 0.25 WHERE src BETWEEN 20 AND 30;
SELECT * FROM delta_compare();
SELECT * FROM delta_entries();

-- A delta entry patched from a delta entry takes its base's kept PageRank scores as its start
-- (handed over as they are, no copy): the run starts from them and gives a fresh build's answer.
UPDATE dl SET w = w + 0.5 WHERE src = 40 AND dst = 41;
CREATE TEMP TABLE handed_a AS SELECT * FROM pagerank('dl', weight_column => 'w', tolerance => 1e-12,
	device => 'cpu');
SELECT graph_source, warm_start FROM powerrank_last_run();
SET powerrank.cache_size = 0;
CREATE TEMP TABLE handed_b AS SELECT * FROM pagerank('dl', weight_column => 'w', tolerance => 1e-12,
	device => 'cpu');
SELECT graph_source, warm_start FROM powerrank_last_run();
RESET powerrank.cache_size;
SELECT same_scores('handed_a', 'handed_b') AS same_scores;
DROP TABLE handed_a, handed_b;
SELECT * FROM delta_entries();
-- Deletes that leave nodes 350 and 351 without any edge: they are absent, no row is theirs.
DELETE FROM dl WHERE src IN (350, 351);
SELECT * FROM delta_compare();
SELECT count(*) AS rows, count(*) FILTER (WHERE node IN (350, 351)) AS absent_rows
FROM pagerank('dl', weight_column => 'w', device => 'cpu');
SELECT count(*) AS rows FROM pagerank('dl', weight_column => 'w', top_k => 1000, device => 'cpu');
-- An absent node is not in the graph, as for a fresh build: RWR source, personalization, dangling.
SELECT * FROM rwr('dl', 350, weight_column => 'w', device => 'cpu');
SELECT * FROM pagerank('dl', weight_column => 'w', personalization => '{351}', device => 'cpu');
SELECT * FROM pagerank('dl', weight_column => 'w', dangling => '{350}', device => 'cpu');
SET powerrank.cache_size = 0;
SELECT * FROM rwr('dl', 350, weight_column => 'w', device => 'cpu');
RESET powerrank.cache_size;
-- A start vector naming an absent node ignores it, as for a node not in the graph.
CREATE TEMP TABLE start_a AS SELECT * FROM pagerank('dl', weight_column => 'w', tolerance => 1e-12,
	start_nodes => '{350, 7}', start_scores => '{0.5, 0.25}', device => 'cpu');
SELECT graph_source FROM powerrank_last_run();
SET powerrank.cache_size = 0;
CREATE TEMP TABLE start_b AS SELECT * FROM pagerank('dl', weight_column => 'w', tolerance => 1e-12,
	start_nodes => '{350, 7}', start_scores => '{0.5, 0.25}', device => 'cpu');
RESET powerrank.cache_size;
SELECT same_scores('start_a', 'start_b') AS same_scores;
DROP TABLE start_a, start_b;

-- Node 350 comes back (an edge to it): present again, a source again.
INSERT INTO dl VALUES (12, 350, 3);
SELECT * FROM delta_compare(source => 350);
-- A node new to the root: the patch is written whole (a new root), the next one a delta from it.
INSERT INTO dl VALUES (5000, 4, 1), (4, 5000, 2);
SELECT * FROM delta_compare();
SELECT * FROM delta_entries();
DELETE FROM dl WHERE src = 352;
INSERT INTO dl VALUES (5000, 8, 1);
SELECT * FROM delta_compare(source => 5000);
SELECT * FROM delta_entries();
-- A delta past max(1000, 5% of its root's edges) edges: written whole, a new root.
UPDATE dl SET w = w + 1 WHERE src < 150;
SELECT * FROM delta_compare();
SELECT * FROM delta_entries();
UPDATE dl SET w = w + 1 WHERE src >= 150;
SELECT * FROM delta_compare();
SELECT * FROM delta_entries();

-- Undirected and unweighted: entries of their own, built, then deltas with absent nodes.
SELECT * FROM delta_compare(is_directed => false);
SELECT * FROM delta_compare(NULL);
DELETE FROM dl WHERE src IN (353, 354);
INSERT INTO dl VALUES (30, 31, 2), (30, 31, 2);
SELECT * FROM delta_compare(is_directed => false);
SELECT * FROM delta_compare(NULL);
SELECT * FROM rwr('dl', 353, directed => false, device => 'cpu');
UPDATE dl SET dst = 354 WHERE src = 355;
SELECT * FROM delta_compare(is_directed => false, source => 354);
SELECT * FROM delta_compare(NULL, source => 354);
SELECT * FROM delta_entries();

DROP FUNCTION delta_entries();
DROP FUNCTION delta_compare(name, boolean, bigint);
DROP FUNCTION same_top(text, text);
DROP FUNCTION same_scores(text, text);
DROP FUNCTION delta_calls(text, name, boolean, bigint);
DROP TABLE dl;
