-- live_load.sh's writer: one transaction changing 3 x :k rows of :tbl (src, dst, w): :k edges inserted
-- between existing nodes, the weight of :k edges updated and :k edges deleted, each the first edge (by
-- the index on src) of a node drawn at random from bench_sources (tbl ':nodes', :nsrc nodes).
BEGIN;
INSERT INTO :tbl (src, dst, w)
  SELECT s.node, d.node, 1 + floor(random() * 4)
  FROM (SELECT 1 + floor(random() * :nsrc)::int AS i, 1 + floor(random() * :nsrc)::int AS j
        FROM generate_series(1, :k)) pick
  JOIN bench_sources s ON s.tbl = ':nodes' AND s.i = pick.i
  JOIN bench_sources d ON d.tbl = ':nodes' AND d.i = pick.j;
UPDATE :tbl SET w = w + 1 WHERE ctid = ANY (ARRAY(
  SELECT (SELECT e.ctid FROM :tbl e WHERE e.src = s.node LIMIT 1) FROM bench_sources s
  WHERE s.tbl = ':nodes' AND s.i IN (SELECT 1 + floor(random() * :nsrc)::int FROM generate_series(1, :k))));
DELETE FROM :tbl WHERE ctid = ANY (ARRAY(
  SELECT (SELECT e.ctid FROM :tbl e WHERE e.src = s.node LIMIT 1) FROM bench_sources s
  WHERE s.tbl = ':nodes' AND s.i IN (SELECT 1 + floor(random() * :nsrc)::int FROM generate_series(1, :k))));
END;
