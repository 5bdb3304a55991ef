-- Included by sql/dump_restore.sql (\i sql/include/dump_restore_check.sql) in each database
-- restored from the dump of dr_source: everything is there and ranks as it did in dr_source.
SELECT extversion FROM pg_extension WHERE extname = 'powerrank';
SELECT n.nspname, c.relname, c.relkind
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname IN ('public', 'graphs') AND c.relkind IN ('r', 'v')
  AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_class'::regclass
                  AND d.objid = c.oid AND d.deptype = 'e')
ORDER BY 1, 2;
-- The tracking trigger, enabled ALWAYS, on the function of the restored extension.
SELECT tgrelid::regclass AS "table", tgname, tgenabled, tgfoid::regprocedure AS function
FROM pg_trigger WHERE NOT tgisinternal ORDER BY 1, 2;
-- The change log was not dumped: the restore's ALTER TABLE ... ENABLE ALWAYS TRIGGER wrote the
-- only row, a rebase of the restored table.
SELECT relid::regclass AS "table", rebase FROM powerrank_change_log ORDER BY 1;
-- The restored table is served by the cache (a miss builds, the next call hits).
SELECT count(*) FROM pagerank('graphs.follows');
SELECT cache_hit FROM powerrank_last_run();
SELECT count(*) FROM pagerank('graphs.follows');
SELECT cache_hit FROM powerrank_last_run();
-- The rankgraph column, value for value.
SELECT name, rankgraph_summary(g), md5(g::text) = text_md5 AS same_text
FROM snapshots JOIN snapshot_texts USING (name) ORDER BY name;
-- Every score equals the one computed in dr_source, bit for bit.
SELECT what, count(*) AS nodes, count(p.score) FILTER (WHERE p.score = r.score) AS same_scores,
       round(sum(r.score)::numeric, 9) AS total
FROM reference r LEFT JOIN current_scores() p USING (what, node)
GROUP BY what ORDER BY what;
SELECT count(*) AS top_rows FROM top_follows;
-- Its trigger still tracks changes: a committed insert is seen (rebuilt, then a hit again).
INSERT INTO graphs.follows VALUES (1, 500, 1);
SELECT count(*) FROM pagerank('graphs.follows');
SELECT cache_hit FROM powerrank_last_run();
SELECT count(*) FROM pagerank('graphs.follows');
SELECT cache_hit FROM powerrank_last_run();
