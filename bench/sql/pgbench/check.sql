-- a sampled correctness check of the mixed load (one snapshot: REPEATABLE READ)
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT bench_check('@TABLE@', CASE WHEN random() < 0.5 THEN 'rwr' ELSE 'pagerank' END, '@DEVICE@', @BOUND@);
COMMIT;
