-- bench/sql/helpers.sql — objects bench/sql/run.sh creates in its database bench.
-- bench_sources: existing node ids of a table, numbered 1..N, so pgbench can pick one by random index.
CREATE TABLE IF NOT EXISTS bench_sources(tbl text, i int, node bigint, PRIMARY KEY (tbl, i));

-- Fills bench_sources for one table from a sample of its rows (sources that exist); returns N.
CREATE OR REPLACE FUNCTION bench_fill_sources(tbl text, pct float8) RETURNS int LANGUAGE plpgsql AS $$
DECLARE n int;
BEGIN
  DELETE FROM bench_sources b WHERE b.tbl = bench_fill_sources.tbl;
  EXECUTE format('INSERT INTO bench_sources SELECT %L, row_number() OVER (), src
                  FROM (SELECT DISTINCT src FROM %I TABLESAMPLE SYSTEM (%s)) s', tbl, tbl, pct);
  SELECT count(*) INTO n FROM bench_sources b WHERE b.tbl = bench_fill_sources.tbl;
  RETURN n;
END $$;

-- One sampled correctness check, meant to run inside a REPEATABLE READ transaction (one snapshot):
-- the call on the service (device => dev) against the same call in the backend (device => 'cpu')
-- and the table's row count in the same snapshot.  ok when both saw exactly count(*) edges, every
-- node of the service's top 100 is in the CPU's top 1000 and no common node's score differs by more
-- than bound.
CREATE TABLE IF NOT EXISTS bench_checks(at timestamptz, tbl text, call text, ok boolean, engine text,
                                        edges_dev bigint, edges_cpu bigint, edges_table bigint,
                                        max_diff float8, missing int);
CREATE OR REPLACE FUNCTION bench_check(tbl text, alg text, dev text, bound float8) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  call text; src bigint; eng text; e_dev bigint; e_cpu bigint; e_tab bigint; d float8; miss int; ok boolean;
BEGIN
  IF current_setting('transaction_isolation') <> 'repeatable read' THEN
    RAISE EXCEPTION 'bench_check must run in a REPEATABLE READ transaction';
  END IF;
  IF alg = 'rwr' THEN
    SELECT 1 + floor(random() * count(*))::int INTO src FROM bench_sources b WHERE b.tbl = bench_check.tbl;
    SELECT node INTO src FROM bench_sources b WHERE b.tbl = bench_check.tbl AND i = src;
    call := format('rwr(%L, source => %s, top_k => %%s, device => %%L)', tbl, src);
  ELSE
    call := format('pagerank(%L, top_k => %%s, device => %%L)', tbl);
  END IF;
  EXECUTE format('CREATE TEMP TABLE bc_dev ON COMMIT DROP AS SELECT * FROM ' || call, 100, dev);
  SELECT engine, edges INTO eng, e_dev FROM powerrank_last_run();
  EXECUTE format('CREATE TEMP TABLE bc_cpu ON COMMIT DROP AS SELECT * FROM ' || call, 1000, 'cpu');
  SELECT edges INTO e_cpu FROM powerrank_last_run();
  EXECUTE format('SELECT count(*) FROM %I', tbl) INTO e_tab;
  SELECT max(abs(g.score - c.score)), count(*) FILTER (WHERE c.node IS NULL) INTO d, miss
    FROM bc_dev g LEFT JOIN bc_cpu c USING (node);
  ok := e_dev = e_tab AND e_cpu = e_tab AND miss = 0 AND d <= bound AND (SELECT count(*) FROM bc_dev) = 100;
  INSERT INTO bench_checks VALUES (clock_timestamp(), tbl, format(call, 100, dev), ok, eng, e_dev, e_cpu, e_tab, d, miss);
  DROP TABLE bc_dev, bc_cpu;
  RETURN ok;
END $$;
