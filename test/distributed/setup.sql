-- test/distributed/setup.sql — the coordinator: the shard servers, the reference table edges_local
-- and the same rows in partitioned tables over 2 shards (edges_two), 3 shards (edges_three: a
-- schema_name, a table_name and column_name options), a mix of local and foreign partitions
-- (edges_mix), the rows partitioned by source over 2 shards (edges_by_src: a node's in-edges in
-- two parts, so no part owns rows and every product is relayed whole), a shard that is slow to read (edges_slow), one with row-level security
-- (edges_rls), an empty partition (edges_gap, the same rows locally in edges_gap_local), a table of
-- many nodes (edges_big, locally edges_big_local), one to truncate and re-partition (edges_ns), a
-- directed cycle over 2 shards (edges_cycle: a run that takes long), a table over s1 and s3 reached
-- over IPv6 (edges_v6: shards that cannot connect to each other), a table of parts of thousands
-- of nodes each (edges_num, locally edges_num_local), and
-- a local table whose cached graph takes room in the coordinator's cache (edges_filler).
CREATE EXTENSION postgres_fdw;
CREATE EXTENSION powerrank;
CREATE SERVER s1 FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '127.0.0.1', port :'s1', dbname 'postgres');
CREATE SERVER s2 FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '127.0.0.1', port :'s2', dbname 'postgres');
CREATE SERVER s3 FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '127.0.0.1', port :'s3', dbname 'postgres');
CREATE USER MAPPING FOR CURRENT_USER SERVER s1;
CREATE USER MAPPING FOR CURRENT_USER SERVER s2;
CREATE USER MAPPING FOR CURRENT_USER SERVER s3;
-- s3 again, over IPv6
CREATE SERVER s3v6 FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '::1', port :'s3', dbname 'postgres');
CREATE USER MAPPING FOR CURRENT_USER SERVER s3v6;

-- 2000 nodes: sources 0..1499, so some nodes are dangling; parallel edges and self-loops
CREATE TABLE edges_local (src bigint, dst bigint, w float8);
INSERT INTO edges_local
SELECT (i * 7919) % 1500, (i * i * 31 + i * 104729) % 2000, 1 + i % 7
FROM generate_series(1::bigint, 20000) i;

CREATE TABLE edges_two (src bigint, dst bigint, w float8) PARTITION BY HASH (dst);
CREATE FOREIGN TABLE edges_two_0 PARTITION OF edges_two FOR VALUES WITH (MODULUS 2, REMAINDER 0)
	SERVER s1 OPTIONS (table_name 'two_0');
CREATE FOREIGN TABLE edges_two_1 PARTITION OF edges_two FOR VALUES WITH (MODULUS 2, REMAINDER 1)
	SERVER s2 OPTIONS (table_name 'two_1');
INSERT INTO edges_two SELECT * FROM edges_local;

CREATE TABLE edges_cycle (src bigint, dst bigint, w float8) PARTITION BY HASH (dst);
CREATE FOREIGN TABLE edges_cycle_0 PARTITION OF edges_cycle FOR VALUES WITH (MODULUS 2, REMAINDER 0)
	SERVER s1 OPTIONS (table_name 'cycle_0');
CREATE FOREIGN TABLE edges_cycle_1 PARTITION OF edges_cycle FOR VALUES WITH (MODULUS 2, REMAINDER 1)
	SERVER s2 OPTIONS (table_name 'cycle_1');
INSERT INTO edges_cycle SELECT i, i % 2000 + 1, 1 FROM generate_series(1, 2000) i;

CREATE TABLE edges_v6 (src bigint, dst bigint, w float8) PARTITION BY HASH (dst);
CREATE FOREIGN TABLE edges_v6_0 PARTITION OF edges_v6 FOR VALUES WITH (MODULUS 2, REMAINDER 0)
	SERVER s1 OPTIONS (table_name 'v6_0');
CREATE FOREIGN TABLE edges_v6_1 PARTITION OF edges_v6 FOR VALUES WITH (MODULUS 2, REMAINDER 1)
	SERVER s3v6 OPTIONS (table_name 'v6_1');
INSERT INTO edges_v6 SELECT * FROM edges_local;

CREATE TABLE edges_by_src (src bigint, dst bigint, w float8) PARTITION BY HASH (src);
CREATE FOREIGN TABLE edges_by_src_0 PARTITION OF edges_by_src FOR VALUES WITH (MODULUS 2, REMAINDER 0)
	SERVER s1 OPTIONS (table_name 'by_src_0');
CREATE FOREIGN TABLE edges_by_src_1 PARTITION OF edges_by_src FOR VALUES WITH (MODULUS 2, REMAINDER 1)
	SERVER s2 OPTIONS (table_name 'by_src_1');
INSERT INTO edges_by_src SELECT * FROM edges_local;

CREATE TABLE edges_three (src bigint, dst bigint, w float8) PARTITION BY HASH (dst);
CREATE FOREIGN TABLE edges_three_0 PARTITION OF edges_three FOR VALUES WITH (MODULUS 3, REMAINDER 0)
	SERVER s1 OPTIONS (table_name 'three_0');
CREATE FOREIGN TABLE edges_three_1 PARTITION OF edges_three FOR VALUES WITH (MODULUS 3, REMAINDER 1)
	SERVER s2 OPTIONS (schema_name 'shard space', table_name 'three_1');
CREATE FOREIGN TABLE edges_three_2 PARTITION OF edges_three FOR VALUES WITH (MODULUS 3, REMAINDER 2)
	SERVER s3 OPTIONS (table_name 'three_2');
ALTER FOREIGN TABLE edges_three_2 ALTER COLUMN src OPTIONS (ADD column_name 'a'),
	ALTER COLUMN dst OPTIONS (ADD column_name 'b'), ALTER COLUMN w OPTIONS (ADD column_name 'weight');
INSERT INTO edges_three SELECT * FROM edges_local;

CREATE TABLE edges_mix (src bigint, dst bigint, w float8) PARTITION BY HASH (dst);
CREATE TABLE edges_mix_0 PARTITION OF edges_mix FOR VALUES WITH (MODULUS 3, REMAINDER 0);
CREATE FOREIGN TABLE edges_mix_1 PARTITION OF edges_mix FOR VALUES WITH (MODULUS 3, REMAINDER 1)
	SERVER s1 OPTIONS (table_name 'mix_1');
CREATE FOREIGN TABLE edges_mix_2 PARTITION OF edges_mix FOR VALUES WITH (MODULUS 3, REMAINDER 2)
	SERVER s2 OPTIONS (table_name 'mix_2');
INSERT INTO edges_mix SELECT * FROM edges_local;

CREATE TABLE edges_slow (src bigint, dst bigint, w float8) PARTITION BY HASH (dst);
CREATE FOREIGN TABLE edges_slow_0 PARTITION OF edges_slow FOR VALUES WITH (MODULUS 2, REMAINDER 0)
	SERVER s1 OPTIONS (table_name 'slow_0');
CREATE FOREIGN TABLE edges_slow_1 PARTITION OF edges_slow FOR VALUES WITH (MODULUS 2, REMAINDER 1)
	SERVER s2 OPTIONS (table_name 'slow_1');

CREATE TABLE edges_rls (src bigint, dst bigint, w float8) PARTITION BY HASH (dst);
CREATE FOREIGN TABLE edges_rls_0 PARTITION OF edges_rls FOR VALUES WITH (MODULUS 2, REMAINDER 0)
	SERVER s1 OPTIONS (table_name 'rls_0');
CREATE FOREIGN TABLE edges_rls_1 PARTITION OF edges_rls FOR VALUES WITH (MODULUS 2, REMAINDER 1)
	SERVER s2 OPTIONS (table_name 'rls_1');
INSERT INTO edges_rls SELECT * FROM edges_local WHERE src < 300;

-- a partition without rows: only the rows of remainder 0 stay
CREATE TABLE edges_gap (src bigint, dst bigint, w float8) PARTITION BY HASH (dst);
CREATE FOREIGN TABLE edges_gap_0 PARTITION OF edges_gap FOR VALUES WITH (MODULUS 2, REMAINDER 0)
	SERVER s1 OPTIONS (table_name 'gap_0');
CREATE FOREIGN TABLE edges_gap_1 PARTITION OF edges_gap FOR VALUES WITH (MODULUS 2, REMAINDER 1)
	SERVER s2 OPTIONS (table_name 'gap_1');
INSERT INTO edges_gap SELECT * FROM edges_local;
DELETE FROM edges_gap_1;
CREATE TABLE edges_gap_local AS SELECT * FROM edges_gap;
-- a row with a NULL source: skipped where it is read, with a NOTICE
INSERT INTO edges_gap VALUES (NULL, 4, 1);

-- Makes tbl, an edge table partitioned by HASH (dst) over s1 (tbl_0: remote_0 there) and s2
-- (tbl_1: remote_1), its rows inserted a thousand at a time.
CREATE PROCEDURE over_two_shards(tbl text, remote text) LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format('CREATE TABLE %I (src bigint, dst bigint, w float8) PARTITION BY HASH (dst)', tbl);
	FOR part IN 0..1 LOOP
		EXECUTE format('CREATE FOREIGN TABLE %I PARTITION OF %I FOR VALUES WITH (MODULUS 2, REMAINDER %s) SERVER %I OPTIONS (table_name %L, batch_size %L)',
					   tbl || '_' || part, tbl, part, 's' || (part + 1), remote || '_' || part, '1000');
	END LOOP;
END
$$;

-- 60000 nodes (40000 sources, 20000 targets): its merged node set holds more than 1 MB
CREATE TABLE edges_big_local (src bigint, dst bigint, w float8);
INSERT INTO edges_big_local
SELECT i, 1000000 + (i * 7919) % 20000, 1 FROM generate_series(1::bigint, 40000) i;
CALL over_two_shards('edges_big', 'big');
INSERT INTO edges_big SELECT * FROM edges_big_local;

CALL over_two_shards('edges_ns', 'ns');
INSERT INTO edges_ns SELECT * FROM edges_local;

-- 10000 nodes, every one a target (7919 is prime to 10000): parts of thousands of nodes, whose
-- engines read their length-sorted rows only (edges_num, locally edges_num_local)
CREATE TABLE edges_num_local (src bigint, dst bigint, w float8);
INSERT INTO edges_num_local
SELECT i % 8000, (i * 7919) % 10000, 1 FROM generate_series(1::bigint, 30000) i;
CALL over_two_shards('edges_num', 'num');
INSERT INTO edges_num SELECT * FROM edges_num_local;

-- 200001 nodes: a cached graph of several megabytes
CREATE TABLE edges_filler (src bigint, dst bigint);
INSERT INTO edges_filler SELECT i, i + 1 FROM generate_series(1::bigint, 200000) i;

SELECT count(*) AS rows_on_the_shards FROM edges_three;
