-- Many-source RWR is one run with one column per source; it must equal separate runs.
CREATE TABLE m_edges(src bigint, dst bigint, w float8);
INSERT INTO m_edges
  SELECT i, (i * 31) % 2000 + 1, (i % 3) + 1 FROM generate_series(1, 2000) i;
INSERT INTO m_edges
  SELECT i, (i * 17 + 5) % 2000 + 1, 1 FROM generate_series(1, 2000, 3) i;
-- some dangling nodes
INSERT INTO m_edges SELECT i, 2000 + i, 1 FROM generate_series(1, 50) i;

-- all sources at once vs one at a time (tight tolerance: every column converged)
CREATE TEMP TABLE many AS
  SELECT * FROM rwr('m_edges', ARRAY[1, 500, 1234, 2001, 7], tolerance => 1e-13);
SELECT algorithm, nodes, converged FROM powerrank_last_run();
CREATE TEMP TABLE single AS
  SELECT s AS source, r.* FROM unnest(ARRAY[1, 500, 1234, 2001, 7]) s,
       LATERAL rwr('m_edges', s, tolerance => 1e-13) r;
SELECT count(*) AS rows, count(DISTINCT source) AS sources,
       max(abs(m.score - s.score)) < 1e-12 AS equal
FROM many m JOIN single s USING (source, node);
-- each column sums to 1
SELECT source, abs(sum(score) - 1) < 1e-12 AS sums_to_one FROM many GROUP BY source ORDER BY source;
-- the source ranks first in its own column here, and a dangling source keeps its mass at home
SELECT source, (array_agg(node ORDER BY score DESC, node))[1] AS best FROM many
GROUP BY source ORDER BY source;

-- weighted and undirected too
CREATE TEMP TABLE many_w AS
  SELECT * FROM rwr('m_edges', ARRAY[3, 9], restart => 0.3, tolerance => 1e-13,
                    weight_column => 'w', directed => false);
CREATE TEMP TABLE single_w AS
  SELECT s AS source, r.* FROM unnest(ARRAY[3, 9]) s,
       LATERAL rwr('m_edges', s, restart => 0.3, tolerance => 1e-13, weight_column => 'w',
                   directed => false) r;
SELECT count(*) AS rows, max(abs(m.score - s.score)) < 1e-12 AS equal
FROM many_w m JOIN single_w s USING (source, node);

-- top_k per source: the k best of each column, in order, equal to the single runs' top k.
SELECT bool_and(m.node = s.node AND abs(m.score - s.score) < 1e-12) AS same_top, count(*) AS rows
FROM (SELECT source, node, score, row_number() OVER (PARTITION BY source) AS rank
      FROM rwr('m_edges', ARRAY[1, 500, 1234], top_k => 4, tolerance => 1e-13)) m
JOIN (SELECT s AS source, r.node, r.score, row_number() OVER (PARTITION BY s) AS rank
      FROM unnest(ARRAY[1, 500, 1234]) s,
           LATERAL rwr('m_edges', s, top_k => 4, tolerance => 1e-13) r) s
USING (source, rank);
-- sources come out in the order given
SELECT source, count(*) FROM rwr('m_edges', ARRAY[1234, 1, 500], top_k => 2) GROUP BY source
ORDER BY min(node) IS NULL, source;
SELECT array_agg(DISTINCT source) FROM (SELECT source FROM rwr('m_edges', ARRAY[1234, 1, 500], top_k => 1)) s;
SELECT array_agg(source) FROM rwr('m_edges', ARRAY[1234, 1, 500], top_k => 1);
