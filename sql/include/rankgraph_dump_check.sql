-- Included by sql/rankgraph_dump.sql (\i sql/include/rankgraph_dump_check.sql) in each database
-- restored from the dump of rgd_source: the restored graphs rank exactly as the originals did.
SELECT name, rankgraph_summary(g), md5(g::text) = t.text_md5 AS same_text,
       (SELECT count(*) FROM scores s WHERE s.name = graphs.name AND s.algorithm = 'pagerank')
         AS reference_scores,
       (SELECT count(*) FROM pagerank(g, tolerance => 1e-12) p JOIN scores s
          ON s.name = graphs.name AND s.algorithm = 'pagerank' AND s.node = p.node
          AND s.score = p.score) AS same_pagerank,
       (SELECT count(*) FROM hits(g, tolerance => 1e-12) h JOIN scores s
          ON s.name = graphs.name AND s.algorithm = 'hub' AND s.node = h.node
          AND s.score = h.hub) AS same_hub
FROM graphs JOIN texts t USING (name) ORDER BY name;
