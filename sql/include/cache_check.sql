-- Included by the pg_regress tests of the graph cache (\i sql/include/cache_check.sql).
-- cache_check(t): ranks t by name (cache or not), then compares bit for bit with a fresh build
-- through the powerrank_graph aggregate, which never uses the cache.  Both start at 1/N
-- (powerrank.warm_start_auto = off: a rebuilt graph's run would start from the previous graph's
-- scores, the same answer within the tolerance but not the same bits).
CREATE FUNCTION cache_check(tbl text, OUT hit boolean, OUT nodes bigint, OUT edges bigint,
                            OUT same boolean)
LANGUAGE plpgsql SET powerrank.warm_start_auto = off AS $$
DECLARE
  n1 bigint[]; s1 float8[]; n2 bigint[]; s2 float8[];
BEGIN
  SELECT array_agg(p.node ORDER BY p.node), array_agg(p.score ORDER BY p.node)
    INTO n1, s1 FROM pagerank(tbl) p;
  SELECT l.cache_hit, l.nodes, l.edges INTO hit, nodes, edges FROM powerrank_last_run() l;
  EXECUTE format('SELECT array_agg(p.node ORDER BY p.node), array_agg(p.score ORDER BY p.node)
                  FROM pagerank((SELECT powerrank_graph(src, dst) FROM %s)) p', tbl)
    INTO n2, s2;
  same := n1 IS NOT DISTINCT FROM n2 AND s1 IS NOT DISTINCT FROM s2;
END $$;
