-- tracking_load.sh's writer: one transaction inserting an edge and deleting the edges of one
-- source, both in this client's own id range (no two clients touch the same rows, so any wait or
-- serialization failure comes from the change tracking, not from the data).
\set base :client_id * 1000000
\set a :base + random(1, 20000)
\set b random(1, 20000)
\set c :base + random(1, 20000)
BEGIN;
INSERT INTO :tbl VALUES (:a, :b);
DELETE FROM :tbl WHERE src = :c;
END;
