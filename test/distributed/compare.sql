-- test/distributed/compare.sql — every algorithm on the partitioned tables against the same rows
-- in one local table (edges_local): the same keys (nodes; for top_k, rank and node) and every
-- score within 1e-12.  A query names its table %1$L and gives rows (k text, v float8); reference
-- names the local table.
-- HITS on this graph stops at max_iterations (1000) on both sides, with a WARNING each: the
-- comparison of the two last iterates stands, the WARNINGs are left out.  Plain iterations
-- (powerrank.mixing_depth = 0): the 1000th iterates of a run that never converges agree within
-- 1e-12 only when both sides take the same steps; mixed steps depend on the rounding of the
-- parts' sums.
SET client_min_messages = error;
SET powerrank.mixing_depth = 0;
-- from 1/N on both sides (the warm start of a distributed run is compared below, to a tight
-- tolerance)
SET powerrank.warm_start = off;

CREATE FUNCTION same_as_local(tbl text, q text, reference text DEFAULT 'edges_local') RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	engine_used text;
	edges_seen bigint;
	exchanged boolean;
	n bigint;
	unmatched bigint;
	worst float8;
BEGIN
	EXECUTE format('CREATE TEMP TABLE r_d AS %s', format(q, tbl));
	SELECT engine, edges, exchange_bytes > 0 AND exchange_ms >= 0
		INTO engine_used, edges_seen, exchanged FROM powerrank_last_run();
	EXECUTE format('CREATE TEMP TABLE r_l AS %s', format(q, reference));
	SELECT count(*), count(*) FILTER (WHERE d.k IS NULL OR l.k IS NULL), max(abs(d.v - l.v))
		INTO n, unmatched, worst
	FROM r_d d FULL JOIN r_l l ON d.k = l.k;
	DROP TABLE r_d;
	DROP TABLE r_l;
	RETURN format('%s: %s edges=%s exchanged=%s rows=%s unmatched=%s within_1e-12=%s', tbl,
				  engine_used, edges_seen, exchanged, n, unmatched, worst <= 1e-12);
END
$$;

CREATE TABLE queries (name text, q text);
INSERT INTO queries VALUES
('pagerank', $q$SELECT node::text AS k, score AS v FROM pagerank(%1$L, tolerance => 1e-10)$q$),
('pagerank weighted', $q$SELECT node::text AS k, score AS v FROM pagerank(%1$L, tolerance => 1e-10, weight_column => 'w')$q$),
('pagerank top_k', $q$SELECT row_number() OVER () || ':' || node AS k, score AS v FROM pagerank(%1$L, top_k => 10)$q$),
('personalized', $q$SELECT node::text AS k, score AS v FROM pagerank(%1$L, tolerance => 1e-10, personalization => '{3,5,1700}', personalization_weights => '{0.5,0.25,0.25}', weight_column => 'w')$q$),
('start scores', $q$SELECT node::text AS k, score AS v FROM pagerank(%1$L, tolerance => 1e-10, start_nodes => '{1,2,1700}', start_scores => '{0.5,0.25,0.25}')$q$),
('dangling distribution', $q$SELECT node::text AS k, score AS v FROM pagerank(%1$L, tolerance => 1e-10, dangling => '{7,8}')$q$),
('rwr one source', $q$SELECT node::text AS k, score AS v FROM rwr(%1$L, 42, tolerance => 1e-10)$q$),
('rwr many sources top_k', $q$SELECT source || ':' || row_number() OVER (PARTITION BY source) || ':' || node AS k, score AS v FROM rwr(%1$L, '{1,2,3,1000}'::bigint[], top_k => 5, weight_column => 'w')$q$),
('hits', $q$SELECT 'h' || node AS k, hub AS v FROM hits(%1$L, tolerance => 1e-8) UNION ALL SELECT 'a' || node, authority FROM hits(%1$L, tolerance => 1e-8)$q$),
('hits weighted top_k', $q$SELECT row_number() OVER () || ':' || node AS k, authority AS v FROM hits(%1$L, top_k => 10, weight_column => 'w')$q$);

SELECT q.name, same_as_local(t.tbl, q.q)
FROM (VALUES ('edges_two'), ('edges_three'), ('edges_mix')) t(tbl), queries q
ORDER BY t.tbl, q.name;

-- partitioned by source: a node's in-edges lie in two parts, every product is relayed whole
SELECT q.name, same_as_local('edges_by_src', q.q)
FROM queries q WHERE q.name IN ('pagerank', 'dangling distribution', 'rwr many sources top_k', 'hits')
ORDER BY q.name;

-- the parts own their rows where the table is partitioned by target: an iteration moves the halos
-- only, fewer bytes than the whole relay's x on every part's sources and y on its targets (the
-- second call, whose parts are kept: no node travels)
SELECT count(*) FROM pagerank('edges_two', tolerance => 1e-10);
SELECT count(*) FROM pagerank('edges_two', tolerance => 1e-10);
CREATE TEMP TABLE last_call AS SELECT exchange_bytes, iterations FROM powerrank_last_run();
SELECT r.exchange_bytes::float8 / r.iterations < 8 * sum(p.rows) AS halos_only
FROM last_call r,
	(SELECT count(DISTINCT src) + count(DISTINCT dst) FROM edges_two_0
	 UNION ALL SELECT count(DISTINCT src) + count(DISTINCT dst) FROM edges_two_1) p(rows)
GROUP BY r.exchange_bytes, r.iterations;

-- the accelerated iteration on the parts' owned rows (its combinations and dot products run there):
-- at damping 0.99 both sides mix, to the same scores
SET powerrank.mixing_depth = 5;
SELECT t.tbl, same_as_local(t.tbl, $q$SELECT node::text AS k, score AS v FROM pagerank(%1$L, damping => 0.99, tolerance => 1e-12)$q$)
FROM (VALUES ('edges_two'), ('edges_mix')) t(tbl);
SELECT count(*) FROM pagerank('edges_two', damping => 0.99, tolerance => 1e-12);
SELECT mixed_steps > 0 AS mixed FROM powerrank_last_run();
SET powerrank.mixing_depth = 0;

-- the warm start of RWR and personalized PageRank (powerrank.warm_start) on the parts: the restart
-- filled there, its column sums and combinations made there; run to a tight tolerance, the same
-- scores as the single server's from 1/N (edges_mix: a local partition, the halos relayed)
SET powerrank.warm_start = on;
SELECT t.tbl, q.name, same_as_local(t.tbl, q.q)
FROM (VALUES ('edges_three'), ('edges_mix')) t(tbl), (VALUES
('rwr one source', $q$SELECT node::text AS k, score AS v FROM rwr(%1$L, 42, tolerance => 1e-15)$q$),
('rwr many sources', $q$SELECT source || ':' || node AS k, score AS v FROM rwr(%1$L, '{1,2,3,1000}'::bigint[], tolerance => 1e-15, weight_column => 'w')$q$),
('personalized', $q$SELECT node::text AS k, score AS v FROM pagerank(%1$L, tolerance => 1e-15, personalization => '{3,5,1700}', personalization_weights => '{0.5,0.25,0.25}')$q$)) q(name, q)
ORDER BY t.tbl, q.name;
SET powerrank.warm_start = off;

-- a partition without rows
SELECT q.name, same_as_local('edges_gap', q.q, 'edges_gap_local')
FROM queries q WHERE q.name IN ('pagerank weighted', 'hits', 'rwr many sources top_k')
ORDER BY q.name;

-- auto and the table's size: analyzed, edges_gap holds fewer rows than powerrank.distributed_min_rows
ANALYZE edges_gap;
SELECT count(*) FROM pagerank('edges_gap');
SELECT engine FROM powerrank_last_run();
SET powerrank.distributed_min_rows = 1000;
SELECT count(*) FROM pagerank('edges_gap');
SELECT engine FROM powerrank_last_run();
RESET powerrank.distributed_min_rows;

-- the single-server path: powerrank.distributed = off, a table that does not qualify
SET powerrank.distributed = off;
SELECT count(*) FROM pagerank('edges_three');
SELECT engine, edges, exchange_bytes FROM powerrank_last_run();
RESET powerrank.distributed;
SELECT count(*) FROM pagerank('edges_three', directed => false);
SELECT engine, exchange_bytes FROM powerrank_last_run();
SELECT count(*) FROM pagerank('edges_local');
SELECT engine FROM powerrank_last_run();
SET powerrank.distributed = on;
SELECT count(*) FROM pagerank('edges_local');
SELECT count(*) FROM pagerank('edges_three', directed => false);
RESET powerrank.distributed;
