-- A scheduled ranking: a pg_cron job (Debian's postgresql-15-cron, preloaded by
-- test/regress.conf) writes the top 10 into a table through pagerank(); the table then equals a
-- direct call.  This pg_cron (1.4) schedules by the minute, so the test waits up to ~75 s.
CREATE EXTENSION pg_cron;
SELECT count(*) AS pg_cron_installed FROM pg_extension WHERE extname = 'pg_cron';

CREATE TABLE cron_edges(src bigint, dst bigint);
INSERT INTO cron_edges SELECT i, (i * 37) % 500 + 1 FROM generate_series(1, 500) i;
INSERT INTO cron_edges SELECT i, (i * 11 + 3) % 500 + 1 FROM generate_series(1, 500, 4) i;
CREATE TABLE ranking(node bigint, score float8);

SELECT cron.schedule('powerrank-top10', '* * * * *',
  $$INSERT INTO ranking SELECT * FROM pagerank('cron_edges', top_k => 10)$$) > 0 AS scheduled;

-- Wait for the first run to finish (the next minute boundary).
DO $$
DECLARE
  waited int := 0;
BEGIN
  LOOP
    EXIT WHEN EXISTS (SELECT 1 FROM cron.job_run_details d JOIN cron.job j USING (jobid)
                      WHERE j.jobname = 'powerrank-top10'
                        AND d.status IN ('succeeded', 'failed'));
    EXIT WHEN waited >= 150;
    PERFORM pg_sleep(0.5);
    waited := waited + 1;
  END LOOP;
END $$;
SELECT cron.unschedule('powerrank-top10');

SELECT d.status, d.return_message
FROM cron.job_run_details d
ORDER BY d.start_time LIMIT 1;

-- The job's ranking is the direct call's (a second run, if the minute turned again, only
-- repeats the same rows).
SELECT count(DISTINCT node) AS nodes,
       bool_and(abs(r.score - p.score) < 1e-12) AS same_scores
FROM (SELECT DISTINCT node, score FROM ranking) r
JOIN pagerank('cron_edges', top_k => 10) p USING (node);
SELECT count(*) = 10 AS complete FROM (SELECT DISTINCT node FROM ranking) r
JOIN pagerank('cron_edges', top_k => 10) p USING (node);

DROP EXTENSION pg_cron;
