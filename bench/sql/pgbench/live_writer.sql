-- live_patch.sh's writer: one transaction inserting an edge, updating the weight of one source's
-- edges and deleting another source's edges, all in this client's own id range (no two clients
-- touch the same rows, so any wait comes from the change capture, not from the data).
\set base :client_id * 1000000
\set a :base + random(1, 20000)
\set b random(1, 20000)
\set c :base + random(1, 20000)
\set d :base + random(1, 20000)
BEGIN;
INSERT INTO :tbl VALUES (:a, :b, 1);
UPDATE :tbl SET w = w + 1 WHERE src = :d;
DELETE FROM :tbl WHERE src = :c;
END;
