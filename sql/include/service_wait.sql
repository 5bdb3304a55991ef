-- Waits on the GPU service, for the tests that start, restart or stop its engine process (service,
-- service_streamed, estimate, monitoring_roles).

-- Waits (at most 15 s) until the service is ready; returns its state.
CREATE OR REPLACE FUNCTION service_ready() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  s text;
BEGIN
  FOR i IN 1..300 LOOP
    SELECT state INTO s FROM powerrank_service;
    EXIT WHEN s = 'ready';
    PERFORM pg_sleep(0.05);
  END LOOP;
  RETURN s;
END $$;

-- Waits (at most 15 s) until an engine process other than old_pid is ready.
CREATE OR REPLACE FUNCTION service_replaced(old_pid int) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1..300 LOOP
    IF (SELECT state = 'ready' AND engine_pid <> old_pid FROM powerrank_service) THEN
      RETURN true;
    END IF;
    PERFORM pg_sleep(0.05);
  END LOOP;
  RETURN false;
END $$;

-- Waits (at most 15 s) until the service's state is wanted; false when it is not by then.
CREATE OR REPLACE FUNCTION service_state_is(wanted text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1..300 LOOP
    IF (SELECT state FROM powerrank_service) = wanted THEN
      RETURN true;
    END IF;
    PERFORM pg_sleep(0.05);
  END LOOP;
  RETURN false;
END $$;
