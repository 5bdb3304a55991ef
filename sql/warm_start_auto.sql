-- The automatic warm start (powerrank.warm_start_auto, on by default).  A cached graph keeps the
-- scores of a converged PageRank per fixed point (damping, personalization, dangling); when the
-- table changes by at most 1% of its edges, the rebuilt graph's runs of that fixed point on the
-- CPU engine start from those scores (nodes new to the table at 1/N, scaled to sum 1), and stop by
-- the stricter rule of a run not started from 1/N (near the end of this file): fewer iterations,
-- the same answer within the tolerance, and here no less accurate.
--
-- The bound used below: a run stops at an iterate x_k with |x_k - x_(k-1)|_1 < tol, and
-- PageRank's map contracts the L1 distance between distributions by the damping d, so x_k is
-- within d / (1 - d) * tol of the fixed point and two runs' answers within 2 d / (1 - d) * tol of
-- each other in L1 (11.33 * tol at d = 0.85), hence also in every score.
--
-- The iterations a warm start saves are a number, not a fraction: about log(r_cold / r_warm) /
-- log(1 / rho), r the first residual (here 0.59 from 1/N, about 1e-3 from the previous scores
-- after 0.1% of the edges changed) and rho ~ 0.78 the rate per iteration, less the few the
-- stricter stop adds.  So the run takes at most half the cold run's iterations at tolerance
-- 1e-4, and saves at least 15 of 56 at the default 1e-6.
\i sql/include/data_dir.sql
CREATE TABLE auto_slashdot(src bigint, dst bigint);
-- The iteration counts below are plain power iteration's (the kept scores' effect alone; mixed
-- iterations are measured by bench/cpu/warm_start --mixing-depth and sql/mixing.sql).
SET powerrank.mixing_depth = 0;
\set cmd 'zcat ' :data_dir '/soc-slashdot0902.tsv.gz'
COPY auto_slashdot FROM PROGRAM :'cmd';
SELECT count(*) AS edges FROM auto_slashdot \gset
SELECT :edges AS edges;
SELECT powerrank_cache_enable('auto_slashdot');
SELECT powerrank_cache_drop() >= 0 AS dropped;  -- graphs other tests left, so that only ours count below

-- rank_into(t, ...): the PageRank of table source on the CPU engine into table t (all nodes, or
-- the top_k best with their rank); returns what powerrank_last_run() says about the run.
CREATE FUNCTION rank_into(t text, tol float8 DEFAULT 1e-6, damping float8 DEFAULT 0.85,
                          top_k bigint DEFAULT NULL, personalization bigint[] DEFAULT NULL,
                          norm text DEFAULT 'l1', source text DEFAULT 'auto_slashdot',
                          OUT cache_hit boolean, OUT warm_start text, OUT iterations int,
                          OUT converged boolean)
LANGUAGE plpgsql SET client_min_messages = warning AS $$
BEGIN
  EXECUTE format('DROP TABLE IF EXISTS %I', t);
  EXECUTE format('CREATE TABLE %I AS SELECT row_number() OVER () AS rank, * FROM pagerank(%L,
                    tolerance => %s, damping => %s, top_k => %s, personalization => %L,
                    norm => %L, device => %L)',
                 t, source, tol, damping, coalesce(top_k::text, 'NULL'),
                 personalization, norm, 'cpu');
  SELECT l.cache_hit, l.warm_start, l.iterations, l.converged
    INTO cache_hit, warm_start, iterations, converged FROM powerrank_last_run() l;
END $$;

-- The L1 distance and the largest difference between two results, and the nodes they cover.
CREATE FUNCTION distance(a text, b text, OUT nodes bigint, OUT l1 float8, OUT largest float8)
LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('SELECT count(*), sum(abs(x.score - y.score)), max(abs(x.score - y.score))
                  FROM %I x FULL JOIN %I y USING (node)', a, b) INTO nodes, l1, largest;
END $$;

-- Bytes of the kept score vectors: the cache's bytes beyond its graphs'.
CREATE VIEW kept AS
SELECT s.bytes - coalesce((SELECT sum(bytes) FROM powerrank_cache), 0) AS kept_bytes
FROM powerrank_cache_status() s;

-- The first run builds and caches the graph and starts at 1/N; its scores stay with the entry,
-- 8 bytes a node.
SELECT * FROM rank_into('r_first');
SELECT k.kept_bytes, c.nodes * 8 AS eight_per_node FROM kept k, powerrank_cache c;
-- The table unchanged: the same entry, again from 1/N (an entry's own scores are the start of
-- the next graph only), the same bits.
SELECT * FROM rank_into('r_again');
SELECT * FROM distance('r_first', 'r_again');

-- 0.1% of the edges inserted, one in ten to a node new to the table.
INSERT INTO auto_slashdot
SELECT src, CASE WHEN n % 10 = 0 THEN 100000 + dst ELSE dst + 3 END
FROM (SELECT src, dst, row_number() OVER (ORDER BY (src * 31 + dst) % 1009, src, dst) AS n
      FROM auto_slashdot) picked
WHERE n <= :edges / 1000;
SELECT count(*) - :edges AS inserted,
       count(*) FILTER (WHERE dst >= 100000) AS to_new_nodes FROM auto_slashdot;
-- The rebuilt graph's runs start from the previous scores (the first one built it), the same
-- start every time: the same bits.
SELECT * FROM rank_into('ins_warm4', 1e-4);
SELECT iterations AS warm4 FROM powerrank_last_run() \gset
SELECT * FROM rank_into('ins_warm4_again', 1e-4);
SELECT * FROM distance('ins_warm4', 'ins_warm4_again');
SELECT * FROM rank_into('ins_warm6');
SELECT iterations AS warm6 FROM powerrank_last_run() \gset
-- From 1/N (powerrank.warm_start_auto = off).
SET powerrank.warm_start_auto = off;
SELECT * FROM rank_into('ins_cold4', 1e-4);
SELECT iterations AS cold4 FROM powerrank_last_run() \gset
SELECT * FROM rank_into('ins_cold6');
SELECT iterations AS cold6 FROM powerrank_last_run() \gset
RESET powerrank.warm_start_auto;
SELECT 2 * :warm4 <= :cold4 AS half_at_1e4, :cold6 - :warm6 >= 15 AS saves_15_at_1e6;
SELECT nodes, l1 < 11.34e-4 AS within_bound, largest < 11.34e-4 AS largest_within
FROM distance('ins_warm4', 'ins_cold4');
SELECT nodes, l1 < 11.34e-6 AS within_bound, largest < 11.34e-6 AS largest_within
FROM distance('ins_warm6', 'ins_cold6');

-- 0.1% of the edges deleted; the first run after it asks for the top 10 only (the run computes
-- every score to keep them, then ranks them as the CPU engine does).
DELETE FROM auto_slashdot
WHERE (src, dst) IN (SELECT src, dst FROM auto_slashdot
                     ORDER BY (src * 17 + dst) % 1013, src, dst LIMIT :edges / 1000);
SELECT count(*) - :edges AS net_change FROM auto_slashdot;
SELECT * FROM rank_into('del_top', 1e-4, top_k => 10);
SELECT * FROM rank_into('del_warm4', 1e-4);
SELECT iterations AS warm4 FROM powerrank_last_run() \gset
SELECT count(*) AS top_rows, bool_and(t.node = w.node AND t.score = w.score) AS same_top
FROM del_top t JOIN (SELECT row_number() OVER (ORDER BY score DESC, node) AS rank, node, score
                     FROM del_warm4) w USING (rank);
SELECT * FROM rank_into('del_warm6');
SELECT iterations AS warm6 FROM powerrank_last_run() \gset
SET powerrank.warm_start_auto = off;
SELECT * FROM rank_into('del_cold4', 1e-4);
SELECT iterations AS cold4 FROM powerrank_last_run() \gset
SELECT * FROM rank_into('del_cold6');
SELECT iterations AS cold6 FROM powerrank_last_run() \gset
RESET powerrank.warm_start_auto;
SELECT 2 * :warm4 <= :cold4 AS half_at_1e4, :cold6 - :warm6 >= 15 AS saves_15_at_1e6;
SELECT nodes, l1 < 11.34e-4 AS within_bound FROM distance('del_warm4', 'del_cold4');
SELECT nodes, l1 < 11.34e-6 AS within_bound FROM distance('del_warm6', 'del_cold6');
-- The entry keeps two vectors for the fixed point, however many runs: the start, and one result
-- (the first run's, replaced by the tighter 1e-6 run's).
SELECT k.kept_bytes = 2 * c.nodes * 8 AS start_and_result FROM kept k, powerrank_cache c;

-- Another fixed point does not start from them: other damping, a personalization.
SELECT * FROM rank_into('r_damping', damping => 0.9);
SELECT * FROM rank_into('r_personal', personalization => ARRAY[1, 2, 3]);

-- One-source RWR is personalized PageRank of that node with damping 1 - restart: the same fixed
-- point, the same key.  After a small change, rwr from node 1 starts from the scores of the
-- personalized run from node 1 before it.
SELECT * FROM rank_into('r_node1', personalization => ARRAY[1]);
INSERT INTO auto_slashdot VALUES (2, 1);
CREATE TABLE rwr_warm AS SELECT * FROM rwr('auto_slashdot', 1, device => 'cpu');
SELECT algorithm, warm_start, iterations, converged FROM powerrank_last_run();
SET powerrank.warm_start_auto = off;
CREATE TABLE rwr_cold AS SELECT * FROM rwr('auto_slashdot', 1, device => 'cpu');
SELECT algorithm, warm_start, iterations, converged FROM powerrank_last_run();
RESET powerrank.warm_start_auto;
SELECT nodes, l1 < 11.34e-6 AS within_bound FROM distance('rwr_warm', 'rwr_cold');

-- After a large change (20% of the edges deleted) no run starts from the previous scores.
DELETE FROM auto_slashdot WHERE (src * 7 + dst) % 5 = 0;
SELECT round(100 - 100.0 * count(*) / :edges) AS percent_deleted FROM auto_slashdot;
SELECT * FROM rank_into('r_large');
SELECT * FROM rank_into('r_large_damping', damping => 0.9);

-- powerrank.warm_start_auto = off: the session's runs start at 1/N and keep nothing (the graph
-- still takes the starts of its previous graph, here those of damping 0.85 and 0.9, for the
-- sessions that use them).
INSERT INTO auto_slashdot VALUES (1, 2);
SET powerrank.warm_start_auto = off;
SELECT * FROM rank_into('r_off');
SELECT (k.kept_bytes / (c.nodes * 8))::int AS vectors FROM kept k, powerrank_cache c;
RESET powerrank.warm_start_auto;
SELECT * FROM rank_into('r_on');
SELECT (k.kept_bytes / (c.nodes * 8))::int AS vectors FROM kept k, powerrank_cache c;

-- The vectors go with their entry: powerrank_cache_drop, DROP TABLE.
SELECT powerrank_cache_drop('auto_slashdot');
SELECT entries, segments, bytes FROM powerrank_cache_status();
SELECT * FROM rank_into('r_rebuilt');
SELECT kept_bytes > 0 AS kept FROM kept;
DROP TABLE auto_slashdot;
SELECT entries, segments, bytes FROM powerrank_cache_status();

-- Restart 0 (damping 1): the fixed point need not be unique, so such runs neither start from kept
-- scores nor keep any.  Here the start decides the answer: a 2-cycle that node 1 cannot reach keeps
-- the mass it starts with (2/302 from 1/N).  After a small change the run is the one from 1/N.
CREATE TABLE closed_walk(src bigint, dst bigint);
INSERT INTO closed_walk SELECT g, g FROM generate_series(1, 300) g;
INSERT INTO closed_walk SELECT g, (g * 7) % 300 + 1 FROM generate_series(1, 300) g;
INSERT INTO closed_walk SELECT g, (g * 13) % 300 + 1 FROM generate_series(1, 300) g;
INSERT INTO closed_walk VALUES (1001, 1002), (1002, 1);
SELECT powerrank_cache_enable('closed_walk');
SELECT count(*) FROM rwr('closed_walk', 1, restart => 0, device => 'cpu');
SELECT count(*) FROM rwr('closed_walk', 1, restart => 0, device => 'cpu');
SELECT cache_hit, warm_start FROM powerrank_last_run();
UPDATE closed_walk SET dst = 1001 WHERE src = 1002;
CREATE TABLE closed_auto AS SELECT * FROM rwr('closed_walk', 1, restart => 0, device => 'cpu');
SELECT warm_start, converged FROM powerrank_last_run();
SET powerrank.warm_start_auto = off;
CREATE TABLE closed_cold AS SELECT * FROM rwr('closed_walk', 1, restart => 0, device => 'cpu');
RESET powerrank.warm_start_auto;
SELECT count(*) AS nodes, bool_and(a.score = c.score) AS same_bits
FROM closed_auto a JOIN closed_cold c USING (node);
SELECT node, round(score::numeric, 8) AS score, round(1 / 302.0, 8) AS one_302th
FROM closed_auto WHERE node IN (1001, 1002) ORDER BY node;
DROP TABLE closed_walk, closed_auto, closed_cold;

-- No less accurate than from 1/N, whatever the stopping norm.  With norm => 'l1_scaled' (stop once
-- the L1 change is below N * tolerance) the kept scores here are those of a loose run (tolerance
-- 1e-8, 17 iterations); after the change a run to 1e-10 from them stops only once its change is
-- below half the threshold times the smallest ratio of consecutive changes it has seen (at least two
-- iterations), so it ends nearer a 1e-12 solve than the run from 1/N does, in fewer iterations.
-- (Stopping at the plain threshold, it ended 7% farther.)
CREATE TABLE scaled_slashdot(src bigint, dst bigint);
COPY scaled_slashdot FROM PROGRAM :'cmd';
SELECT powerrank_cache_enable('scaled_slashdot');
SELECT * FROM rank_into('s_first', 1e-8, norm => 'l1_scaled', source => 'scaled_slashdot');
INSERT INTO scaled_slashdot
SELECT src, CASE WHEN n % 10 = 0 THEN 100000 + dst ELSE dst + 3 END
FROM (SELECT src, dst, row_number() OVER (ORDER BY (src * 31 + dst) % 1009, src, dst) AS n
      FROM scaled_slashdot) picked
WHERE n <= :edges / 1000;
SELECT * FROM rank_into('s_warm', 1e-10, norm => 'l1_scaled', source => 'scaled_slashdot');
SET powerrank.warm_start_auto = off;
SELECT * FROM rank_into('s_cold', 1e-10, norm => 'l1_scaled', source => 'scaled_slashdot');
SELECT * FROM rank_into('s_exact', 1e-12, source => 'scaled_slashdot');
RESET powerrank.warm_start_auto;
SELECT w.nodes, w.l1 <= c.l1 AS warm_no_farther, w.l1 < 5.67e-10 * w.nodes AS warm_within_bound
FROM distance('s_warm', 's_exact') w, distance('s_cold', 's_exact') c;
DROP TABLE scaled_slashdot, s_first, s_warm, s_cold, s_exact;

DROP TABLE r_first, r_again, ins_warm4, ins_warm4_again, ins_warm6, ins_cold4, ins_cold6,
  del_top, del_warm4, del_warm6, del_cold4, del_cold6, r_damping, r_personal, r_large,
  r_large_damping, r_off, r_on, r_rebuilt, r_node1, rwr_warm, rwr_cold;
DROP VIEW kept;
DROP FUNCTION rank_into(text, float8, float8, bigint, bigint[], text, text);
DROP FUNCTION distance(text, text);
