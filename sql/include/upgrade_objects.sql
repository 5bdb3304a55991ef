-- Included by sql/upgrade.sql (\i sql/include/upgrade_objects.sql) in the database updated from
-- 0.1 and in the freshly installed one: user objects that use every type and function of the
-- extension (views, BEGIN ATOMIC functions and triggers depend on what they use, so an upgrade
-- script that dropped and re-created one of them fails, as it would in a user's database).
CREATE TABLE upg_edges(src bigint, dst bigint, w float8);
INSERT INTO upg_edges SELECT i, (i * 7) % 30 + 1, (i % 4) + 0.5 FROM generate_series(1, 30) i;
INSERT INTO upg_edges SELECT i, (i * 11 + 5) % 30 + 1, 1 FROM generate_series(1, 30, 3) i;
SELECT powerrank_cache_enable('upg_edges') AS tracking_installed;

CREATE TABLE upg_graphs(name text PRIMARY KEY, g rankgraph NOT NULL);
INSERT INTO upg_graphs SELECT 'plain', powerrank_graph(src, dst) FROM upg_edges;
INSERT INTO upg_graphs SELECT 'weighted', powerrank_graph(src, dst, w) FROM upg_edges;
CREATE DOMAIN upg_small_graph AS rankgraph;

CREATE VIEW upg_pagerank_table AS SELECT * FROM pagerank('upg_edges', top_k => 5);
CREATE VIEW upg_pagerank_graph AS SELECT g.name, p.* FROM upg_graphs g, pagerank(g.g, damping => 0.9) p;
CREATE VIEW upg_hits_table AS SELECT * FROM hits('upg_edges', weight_column => 'w');
CREATE VIEW upg_hits_graph AS SELECT g.name, h.* FROM upg_graphs g, hits(g.g) h;
CREATE VIEW upg_rwr_table AS SELECT * FROM rwr('upg_edges', 1);
CREATE VIEW upg_rwr_table_many AS SELECT * FROM rwr('upg_edges', ARRAY[1, 2]::bigint[]);
CREATE VIEW upg_rwr_graph AS SELECT g.name, r.* FROM upg_graphs g, rwr(g.g, 1::bigint) r;
CREATE VIEW upg_rwr_graph_many AS
  SELECT g.name, r.* FROM upg_graphs g, rwr(g.g, ARRAY[1, 2]::bigint[], restart => 0.3) r;
CREATE VIEW upg_built AS
  SELECT powerrank_graph(src, dst) AS plain, powerrank_graph(src, dst, w)::upg_small_graph AS weighted
  FROM upg_edges;
CREATE VIEW upg_summaries AS
  SELECT name, rankgraph_summary(g), rankgraph_send(g) AS binary_form FROM upg_graphs;
-- The statistics and monitoring functions and views gain result columns between versions, which
-- an upgrade script can only do by dropping and re-creating them: a view over one of them would
-- block that (a user must drop it before such an update).  PL/pgSQL records no dependency.
CREATE FUNCTION upg_monitoring(OUT last_engine text, OUT cached_graphs bigint, OUT service_rows bigint,
                               OUT runs bigint, OUT cache_entries int)
LANGUAGE plpgsql AS $$
BEGIN
  SELECT engine INTO last_engine FROM powerrank_last_run();
  SELECT count(*) INTO cached_graphs FROM powerrank_cache;
  SELECT count(*) INTO service_rows FROM powerrank_service;
  SELECT count(*) INTO runs FROM powerrank_progress;
  SELECT entries INTO cache_entries FROM powerrank_cache_status();
END $$;
CREATE FUNCTION upg_evict() RETURNS int BEGIN ATOMIC SELECT powerrank_cache_drop('upg_edges'); END;
CREATE FUNCTION upg_compact() RETURNS bigint BEGIN ATOMIC SELECT powerrank_cache_compact(); END;
CREATE FUNCTION upg_no_fault() RETURNS void
  BEGIN ATOMIC SELECT powerrank_service_inject_fault('none'); END;
