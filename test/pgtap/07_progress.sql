-- pgTAP: powerrank_progress without shared_preload_libraries (this cluster does not preload
-- powerrank): a run in another session (through dblink) is seen while it reads its rows, then is
-- gone when it ends.  The read is held at a known row: the edges are a view, read through SPI in
-- batches of 50000 rows, whose filter function waits for an advisory lock this session holds when
-- it meets src = 100001, so the run has then read exactly 100000 rows.
BEGIN;
SELECT plan(9);

CREATE EXTENSION dblink;
SELECT dblink_connect('tap_runner',
                      format('host=%s port=%s dbname=%s',
                             split_part(current_setting('unix_socket_directories'), ',', 1),
                             current_setting('port'), current_database()));

-- the runner's objects are committed in its own session (this transaction's are invisible there)
SELECT dblink_exec('tap_runner', $$
  CREATE TABLE tap_progress_edges(src bigint, dst bigint);
  INSERT INTO tap_progress_edges SELECT i, i % 200000 + 1 FROM generate_series(1, 200000) i;
  CREATE FUNCTION tap_progress_gate(id bigint) RETURNS boolean LANGUAGE plpgsql AS $f$
  BEGIN
    IF id = 100001 THEN
      PERFORM pg_advisory_xact_lock_shared(4243);
    END IF;
    RETURN true;
  END $f$;
  CREATE VIEW tap_progress_view AS
    SELECT src, dst FROM tap_progress_edges WHERE tap_progress_gate(src)$$);

SELECT is((SELECT count(*) FROM powerrank_progress), 0::bigint, 'no run in progress yet');

SELECT pg_advisory_lock(4243);
SELECT is(dblink_send_query('tap_runner',
                            $$SELECT count(*) FROM pagerank('tap_progress_view', device => 'cpu')$$),
          1, 'the run starts in the other session');

-- Waits (at most 30 s) until the run has read 100000 rows.
CREATE FUNCTION pg_temp.wait_for_read() RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1..1500 LOOP
    IF EXISTS (SELECT * FROM powerrank_progress WHERE rows_read = 100000) THEN
      RETURN true;
    END IF;
    PERFORM pg_sleep(0.02);
  END LOOP;
  RETURN false;
END $$;
SELECT ok(pg_temp.wait_for_read(), 'the read is seen from this session without preload');
SELECT is((SELECT phase FROM powerrank_progress), 'reading', 'phase reading');
SELECT is((SELECT algorithm FROM powerrank_progress), 'pagerank', 'algorithm');
SELECT is((SELECT row(device, nodes, edges, rows_estimated)::text FROM powerrank_progress), '(,,,)',
          'no device, nodes, edges yet; no row estimate for a view');

SELECT pg_advisory_unlock(4243);
SELECT is((SELECT count FROM dblink_get_result('tap_runner') AS r(count bigint)), 200000::bigint,
          'the run ends with every node');
SELECT count(*) FROM dblink_get_result('tap_runner') AS r(count bigint);	-- ends the async query
SELECT is((SELECT count(*) FROM powerrank_progress), 0::bigint, 'and its entry is gone');
SELECT is((SELECT engine FROM dblink('tap_runner', 'SELECT engine FROM powerrank_last_run()')
           AS r(engine text)), 'cpu', 'it ran on the CPU');

SELECT dblink_exec('tap_runner',
                   'DROP VIEW tap_progress_view; DROP FUNCTION tap_progress_gate(bigint); DROP TABLE tap_progress_edges');
SELECT dblink_disconnect('tap_runner');

SELECT * FROM finish();
ROLLBACK;
