-- The shared-memory graph cache (the temporary instance preloads powerrank, test/regress.conf).
-- Two-session behaviour (other sessions' commits, rollbacks, snapshots) is in specs/*.spec.

SELECT enabled, slots, entries, segments FROM powerrank_cache_status();

-- cache_check(t): ranks t by name (cache or not), then compares bit for bit with a fresh build
-- through the powerrank_graph aggregate, which never uses the cache.
\i sql/include/cache_check.sql

CREATE TABLE ce(src bigint, dst bigint, w float8);
INSERT INTO ce SELECT g % 300, (g * 7) % 301, 1 + g % 5 FROM generate_series(1, 2000) g;

-- A table that is not tracked is never cached.
SELECT * FROM cache_check('ce');
SELECT * FROM cache_check('ce');
SELECT count(*) FROM powerrank_cache;

-- Tracking: only plain tables, only by their owner.
CREATE VIEW ce_view AS SELECT * FROM ce;
SELECT powerrank_cache_enable('ce_view');
CREATE ROLE regress_cache_reader;
SET ROLE regress_cache_reader;
SELECT powerrank_cache_enable('ce');
RESET ROLE;
SELECT powerrank_cache_enable('ce');
SELECT powerrank_cache_enable('ce');  -- already tracked
SELECT powerrank_cache_enable('pg_catalog.pg_class');  -- a system catalog
BEGIN READ ONLY;
SELECT powerrank_cache_enable('ce');
ROLLBACK;
BEGIN READ ONLY;
SELECT powerrank_cache_compact();
ROLLBACK;
SELECT tgname, tgenabled FROM pg_trigger WHERE tgrelid = 'ce'::regclass;

-- First call builds and caches, the next ones are hits; the results equal a fresh build.
SELECT * FROM cache_check('ce');
SELECT * FROM cache_check('ce');
SELECT * FROM cache_check('ce');
SELECT source, columns, directed, nodes, edges, bytes > 0 AS has_bytes, hits, in_use, gpu,
       base = (SELECT max(change) FROM powerrank_change_log
               WHERE relid = 'ce'::regclass AND rebase) AS current_base, changes
FROM powerrank_cache;

-- The cached graph serves every algorithm on the same columns: rwr and hits are hits too
-- (hits adds the out-edges per call), with the same results as on a fresh build.
SELECT bool_and(abs(a.score - b.score) < 1e-15) AS same_rwr
FROM rwr('ce', 5) a JOIN rwr((SELECT powerrank_graph(src, dst) FROM ce), 5) b USING (node);
SELECT bool_and(abs(a.hub - b.hub) < 1e-15 AND abs(a.authority - b.authority) < 1e-15) AS same_hits,
       count(*) AS nodes
FROM hits('ce') a JOIN hits((SELECT powerrank_graph(src, dst) FROM ce)) b USING (node);
SELECT count(*) FROM hits('ce');
SELECT algorithm, cache_hit FROM powerrank_last_run();
SELECT hits FROM powerrank_cache WHERE columns = 'src, dst' AND directed;

-- Other columns or direction: their own entries.
SELECT bool_and(abs(a.score - b.score) < 1e-15) AS same_weighted
FROM pagerank('ce', weight_column => 'w') a
JOIN pagerank((SELECT powerrank_graph(src, dst, w) FROM ce)) b USING (node);
SELECT count(*) FROM pagerank('ce', directed => false);
SELECT count(*) FROM pagerank('ce', directed => false);
SELECT cache_hit, read_ms = 0 AS nothing_read FROM powerrank_last_run();
SELECT columns, directed, edges, hits FROM powerrank_cache ORDER BY columns, directed;

-- A change in the caller's own transaction is seen at once (never served from the cache, never
-- cached); after ROLLBACK the cached graph is served again.
BEGIN;
INSERT INTO ce VALUES (1000, 1);
SELECT * FROM cache_check('ce');
ROLLBACK;
SELECT * FROM cache_check('ce');
-- A committed change adds a row to the change log: rebuilt, and the entries of the old content go.
INSERT INTO ce VALUES (1000, 1);
SELECT * FROM cache_check('ce');
SELECT * FROM cache_check('ce');
SELECT columns, directed, edges, hits FROM powerrank_cache ORDER BY columns, directed;

-- session_replication_role = replica does not skip the trigger (it is enabled ALWAYS).
SET session_replication_role = replica;
DELETE FROM ce WHERE src = 1000;
RESET session_replication_role;
SELECT * FROM cache_check('ce');

-- A disabled trigger: not cached while disabled; re-enabling it (ALTER TABLE) adds a rebase row,
-- so changes made meanwhile are never served from an older entry.
ALTER TABLE ce DISABLE TRIGGER powerrank_track;
INSERT INTO ce VALUES (2000, 1);
SELECT * FROM cache_check('ce');
SELECT * FROM cache_check('ce');
ALTER TABLE ce ENABLE ALWAYS TRIGGER powerrank_track;
SELECT * FROM cache_check('ce');
SELECT * FROM cache_check('ce');

-- Privileges are checked before the cache is looked at: no SELECT, no graph (and no hit).
SELECT hits AS hits_before FROM powerrank_cache WHERE columns = 'src, dst' AND directed \gset
SET ROLE regress_cache_reader;
SELECT count(*) FROM pagerank('ce');
RESET ROLE;
SELECT hits = :hits_before AS hits_unchanged
FROM powerrank_cache WHERE columns = 'src, dst' AND directed;
-- SELECT on the edge columns is enough, as without the cache: then it is a hit.
GRANT SELECT (src, dst) ON ce TO regress_cache_reader;
SET ROLE regress_cache_reader;
SELECT count(*) FROM pagerank('ce');
SELECT cache_hit FROM powerrank_last_run();
RESET ROLE;

-- Row-level security that applies to the caller: built per call from the visible rows, never
-- served from (nor stored into) the cache.  The owner is not subject to it: cached as before.
ALTER TABLE ce ENABLE ROW LEVEL SECURITY;
CREATE POLICY ce_small ON ce FOR SELECT TO regress_cache_reader USING (src < 100);
SELECT count(*) AS entries_before FROM powerrank_cache \gset
SET ROLE regress_cache_reader;
SELECT bool_and(abs(a.score - b.score) < 1e-15) AS same, count(*) AS nodes
FROM pagerank('ce') a JOIN pagerank((SELECT powerrank_graph(src, dst) FROM ce)) b USING (node);
SELECT count(*) FROM pagerank('ce');
SELECT nodes, edges, cache_hit FROM powerrank_last_run();
RESET ROLE;
SELECT count(*) = :entries_before AS nothing_stored FROM powerrank_cache;
SELECT * FROM cache_check('ce');
ALTER TABLE ce DISABLE ROW LEVEL SECURITY;
DROP POLICY ce_small ON ce;

-- powerrank_cache_drop: the DBA's (not granted to PUBLIC); one table or all; returns the count.
SET ROLE regress_cache_reader;
SELECT powerrank_cache_drop();
RESET ROLE;
SELECT powerrank_cache_drop('ce');
SELECT count(*) FROM powerrank_cache;
SELECT * FROM cache_check('ce');
SELECT powerrank_cache_drop();
SELECT entries, retired, segments, bytes FROM powerrank_cache_status();

-- LRU eviction: each of these graphs takes ~360 kB; a 1 MB cache holds two.
CREATE TABLE lru_a(src bigint, dst bigint);
CREATE TABLE lru_b(src bigint, dst bigint);
CREATE TABLE lru_c(src bigint, dst bigint);
INSERT INTO lru_a SELECT g % 10000, (g * 7919) % 10000 FROM generate_series(1, 30000) g;
INSERT INTO lru_b SELECT g % 10000, (g * 7907) % 10000 FROM generate_series(1, 30000) g;
INSERT INTO lru_c SELECT g % 10000, (g * 7901) % 10000 FROM generate_series(1, 30000) g;
SELECT powerrank_cache_enable(t) FROM unnest(ARRAY['lru_a', 'lru_b', 'lru_c']) t;
SET powerrank.cache_size = '1MB';
SELECT * FROM cache_check('lru_a');
SELECT * FROM cache_check('lru_b');
SELECT source, hits FROM powerrank_cache ORDER BY source::text;
SELECT * FROM cache_check('lru_a');  -- lru_a is now the most recently used
SELECT * FROM cache_check('lru_c');  -- evicts lru_b, the least recently used
SELECT source, hits FROM powerrank_cache ORDER BY source::text;
SELECT entries, segments, bytes <= size_limit AS within_limit FROM powerrank_cache_status();
SELECT * FROM cache_check('lru_b');  -- rebuilt, evicts lru_a
SELECT source FROM powerrank_cache ORDER BY source::text;
-- A graph larger than the whole cache is not cached; 0 turns the cache off.
INSERT INTO lru_c SELECT g % 30000, (g * 13) % 30000 FROM generate_series(1, 60000) g;
SELECT * FROM cache_check('lru_c');
SELECT * FROM cache_check('lru_c');
SET powerrank.cache_size = 0;
SELECT * FROM cache_check('lru_a');
SELECT * FROM cache_check('lru_a');
SELECT source FROM powerrank_cache ORDER BY source::text;
RESET powerrank.cache_size;

-- No leak on error: an ERROR while the graph is read (a negative weight in the last rows) or a
-- cancel during the scan of a large table leaves no entry and no pinned segment behind.
SELECT powerrank_cache_drop();
CREATE TABLE big(src bigint, dst bigint, w float8);
INSERT INTO big SELECT g % 50000, (g * 31) % 50000, 1 FROM generate_series(1, 1500000) g;
INSERT INTO big VALUES (1, 2, -1);
SELECT powerrank_cache_enable('big');
SELECT count(*) FROM pagerank('big', weight_column => 'w');
SET statement_timeout = '10ms';
SELECT count(*) FROM pagerank('big');
RESET statement_timeout;
SELECT count(*) FROM powerrank_cache;
SELECT entries, retired, segments, bytes FROM powerrank_cache_status();
SELECT count(*) FROM pagerank('big');
SELECT count(*) FROM pagerank('big');
SELECT cache_hit FROM powerrank_last_run();
SELECT source, nodes, edges FROM powerrank_cache;
SELECT entries, retired, segments, bytes > 0 AS has_bytes FROM powerrank_cache_status();

-- DROP TABLE evicts the table's graphs; the next compaction forgets its change log rows.
DROP TABLE big;
SELECT count(*) FROM powerrank_cache;
SELECT powerrank_cache_compact() >= 0 AS compacted;
SELECT count(*) FROM powerrank_change_log WHERE relid NOT IN (SELECT oid FROM pg_class);

-- Partitions and inheritance: a statement on a parent changes the rows of its children without
-- firing their statement triggers, and a scan of a parent reads its children: never tracked.
CREATE TABLE ce_parent(src bigint, dst bigint);
CREATE TABLE ce_child() INHERITS (ce_parent);
SELECT powerrank_cache_enable('ce_child');
SELECT powerrank_cache_enable('ce_parent');
CREATE TABLE ce_parted(src bigint, dst bigint) PARTITION BY RANGE (src);
CREATE TABLE ce_part PARTITION OF ce_parted FOR VALUES FROM (0) TO (1000);
SELECT powerrank_cache_enable('ce_parted');
SELECT powerrank_cache_enable('ce_part');
-- A tracked table that becomes a child later is no longer served from the cache.
CREATE TABLE ce_late(src bigint, dst bigint);
INSERT INTO ce_late VALUES (1, 2), (2, 3), (3, 1);
SELECT powerrank_cache_enable('ce_late');
SELECT * FROM cache_check('ce_late');
SELECT * FROM cache_check('ce_late');
ALTER TABLE ce_late INHERIT ce_parent;
UPDATE ce_parent SET dst = dst + 10;
SELECT * FROM cache_check('ce_late');
SELECT * FROM cache_check('ce_late');
SELECT sum(dst) FROM ce_late;
SELECT sum(node) FROM pagerank('ce_late');
ALTER TABLE ce_late NO INHERIT ce_parent;
SELECT * FROM cache_check('ce_late');
SELECT * FROM cache_check('ce_late');
-- A tracked table attached as a partition, written through its parent (which fires only the
-- parent's statement triggers) and detached again is built again, not served from before.
CREATE TABLE ce_attached(src bigint, dst bigint);
INSERT INTO ce_attached VALUES (1, 2), (2, 3), (3, 1);
SELECT powerrank_cache_enable('ce_attached');
SELECT * FROM cache_check('ce_attached');
SELECT * FROM cache_check('ce_attached');
CREATE TABLE ce_attach_parent(src bigint, dst bigint) PARTITION BY RANGE (src);
ALTER TABLE ce_attach_parent ATTACH PARTITION ce_attached FOR VALUES FROM (0) TO (1000);
INSERT INTO ce_attach_parent VALUES (4, 5), (5, 6);
SELECT * FROM cache_check('ce_attached');
ALTER TABLE ce_attach_parent DETACH PARTITION ce_attached;
SELECT * FROM cache_check('ce_attached');
SELECT * FROM cache_check('ce_attached');

-- HITS on a cached graph takes the out-edges its entry keeps: the first HITS call on the entry
-- builds them and keeps them with it (in the cache's bytes), later calls, in any session, map
-- them, with the same scores to the bit.  A write makes a new entry, which builds its own.
SELECT powerrank_cache_drop();
CREATE TABLE ce_hits(src bigint, dst bigint, w float8);
INSERT INTO ce_hits SELECT g % 500, (g * 37) % 503, 1 + g % 7 FROM generate_series(1, 5000) g;
SELECT powerrank_cache_enable('ce_hits');
SELECT count(*) FROM pagerank('ce_hits', weight_column => 'w');
SELECT bytes AS bytes_before FROM powerrank_cache_status() \gset
\set VERBOSITY terse
SET client_min_messages = debug1;
CREATE TABLE ce_hits_first AS SELECT * FROM hits('ce_hits', weight_column => 'w');
SELECT count(*) FROM hits('ce_hits', weight_column => 'w');
RESET client_min_messages;
SELECT bytes > :bytes_before AS out_edges_counted FROM powerrank_cache_status();
SELECT count(*) AS nodes, bool_and(a.hub = b.hub AND a.authority = b.authority) AS same_bits
FROM hits('ce_hits', weight_column => 'w') a JOIN ce_hits_first b USING (node);
\c
\set VERBOSITY terse
SET client_min_messages = debug1;
SELECT count(*) FROM hits('ce_hits', weight_column => 'w');
RESET client_min_messages;
SELECT cache_hit FROM powerrank_last_run();
SELECT count(*) AS nodes, bool_and(a.hub = b.hub AND a.authority = b.authority) AS same_bits
FROM hits('ce_hits', weight_column => 'w') a JOIN ce_hits_first b USING (node);
INSERT INTO ce_hits VALUES (1000, 1, 2);
SELECT count(*) FROM pagerank('ce_hits', weight_column => 'w');
SET client_min_messages = debug1;
SELECT count(*) FROM hits('ce_hits', weight_column => 'w');
SELECT count(*) FROM hits('ce_hits', weight_column => 'w');
RESET client_min_messages;
\set VERBOSITY default
SELECT count(*) FROM powerrank_cache WHERE source = 'ce_hits'::regclass;
SELECT bool_and(abs(a.hub - b.hub) < 1e-15 AND abs(a.authority - b.authority) < 1e-15) AS same_hits
FROM hits('ce_hits', weight_column => 'w') a
JOIN hits((SELECT powerrank_graph(src, dst, w) FROM ce_hits)) b USING (node);
-- Dropping the table takes the entry and its out-edges with it.
DROP TABLE ce_hits, ce_hits_first;
SELECT entries, retired, segments, bytes FROM powerrank_cache_status();

SELECT powerrank_cache_drop();
SELECT entries, retired, segments, bytes FROM powerrank_cache_status();
DROP TABLE ce, lru_a, lru_b, lru_c, ce_parent, ce_parted, ce_late, ce_attached, ce_attach_parent
  CASCADE;
DROP FUNCTION cache_check(text);
DROP ROLE regress_cache_reader;
