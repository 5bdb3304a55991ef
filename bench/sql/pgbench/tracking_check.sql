-- tracking_load.sh's checker: ranks the tracked table (from the cache when it can) and compares
-- the scores bit for bit with a fresh build through the aggregate, in one snapshot.
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT tracking_check();
END;
