-- A table that a logical replication subscription replicates into: the apply worker writes its rows
-- without firing statement triggers, so the graph cache never serves it (a table tracked before it
-- was subscribed to included) and powerrank_cache_enable refuses it.  Publisher and subscriber are
-- two databases of the test instance (wal_level = logical in test/regress.conf); the slot is made
-- apart, as a subscription to its own cluster needs.
\getenv pg_host PGHOST
\getenv pg_port PGPORT
\set home_db :DBNAME
\i sql/include/cache_check.sql
-- wait_for_rows(n): waits (at most 60 s) until sub_edges holds n rows; true when it does.
CREATE FUNCTION wait_for_rows(n bigint) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1..600 LOOP
    IF (SELECT count(*) FROM sub_edges) = n THEN
      RETURN true;
    END IF;
    PERFORM pg_sleep(0.1);
  END LOOP;
  RETURN false;
END $$;

CREATE DATABASE regress_publisher TEMPLATE template0;
\c regress_publisher
CREATE TABLE sub_edges(src bigint, dst bigint, id serial PRIMARY KEY);
INSERT INTO sub_edges(src, dst) SELECT g % 30, (g * 7) % 31 FROM generate_series(1, 300) g;
CREATE PUBLICATION regress_pub FOR TABLE sub_edges;
SELECT count(*) AS slot FROM pg_create_logical_replication_slot('regress_sub', 'pgoutput');

\c :home_db
CREATE TABLE sub_edges(src bigint, dst bigint, id serial PRIMARY KEY);
INSERT INTO sub_edges(src, dst) VALUES (100, 101);
-- tracked and cached while it is a plain table
SELECT powerrank_cache_enable('sub_edges');
SELECT * FROM cache_check('sub_edges');
SELECT * FROM cache_check('sub_edges');
DELETE FROM sub_edges;
SELECT format('dbname=regress_publisher host=%s port=%s', :'pg_host', :'pg_port') AS conninfo \gset
SET client_min_messages = warning;
CREATE SUBSCRIPTION regress_sub CONNECTION :'conninfo' PUBLICATION regress_pub
  WITH (create_slot = false, slot_name = 'regress_sub');
RESET client_min_messages;
-- the initial copy and a row inserted on the publisher arrive
\c regress_publisher
INSERT INTO sub_edges(src, dst) VALUES (40, 41);
\c :home_db
SELECT wait_for_rows(301);
SELECT count(*) AS rows_replicated FROM sub_edges;
-- the applied rows fired no trigger: never served from the cache, always the table's rows
SELECT * FROM cache_check('sub_edges');
SELECT * FROM cache_check('sub_edges');
\c regress_publisher
INSERT INTO sub_edges(src, dst) VALUES (50, 51);
\c :home_db
SELECT wait_for_rows(302);
SELECT * FROM cache_check('sub_edges');
SELECT powerrank_cache_enable('sub_edges');

ALTER SUBSCRIPTION regress_sub DISABLE;
ALTER SUBSCRIPTION regress_sub SET (slot_name = NONE);
DROP SUBSCRIPTION regress_sub;
\c regress_publisher
DO $$
BEGIN
  FOR i IN 1..600 LOOP
    EXIT WHEN NOT EXISTS (SELECT FROM pg_replication_slots WHERE slot_name = 'regress_sub' AND active);
    PERFORM pg_sleep(0.1);
  END LOOP;
END $$;
SELECT count(*) AS dropped FROM (SELECT pg_drop_replication_slot('regress_sub')) d;
\c :home_db
DROP DATABASE regress_publisher WITH (FORCE);
DROP TABLE sub_edges;
DROP FUNCTION cache_check(text);
DROP FUNCTION wait_for_rows(bigint);
