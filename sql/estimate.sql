-- powerrank_estimate: the size, memory, engine and time of a call, without reading the table,
-- checked against real runs (powerrank_last_run, powerrank_cache) on a generated table.
-- Tolerances: after ANALYZE of a table smaller than the statistics sample (30000 rows at the
-- default statistics target) reltuples, the null fractions and n_distinct are exact, so the
-- stored edges are exact for a directed graph (undirected: the rows twice, self-loops counted
-- twice) and the node count is within 1% (the union of the endpoint sets is estimated);
-- from the graph cache every count and cache_bytes are exact.

\i sql/include/service_wait.sql

-- 20000 edges over ids 1..4000 (random, seeded) and 100 rows without a destination (skipped).
SELECT setseed(0.25);
CREATE TABLE est_edges(src bigint, dst bigint, w float8);
INSERT INTO est_edges
  SELECT 1 + floor(random() * 4000), 1 + floor(random() * 4000), 1 + floor(random() * 3)
  FROM generate_series(1, 20000);
INSERT INTO est_edges SELECT g, NULL, 1 FROM generate_series(1, 100) g;

-- Never analyzed: no counts, no memory; the engine is known only where it does not depend on the
-- size (device => 'cpu'; 'auto' here depends on powerrank.gpu_min_edges).
SELECT nodes, stored_edges, counts_from, engine, reason, backend_bytes, iterations, predicted_ms
FROM powerrank_estimate('est_edges');
SELECT counts_from, engine, reason, layout
FROM powerrank_estimate('est_edges', device => 'cpu');

ANALYZE est_edges;

-- PageRank, directed, on the CPU (the graph is below powerrank.gpu_min_edges).
CREATE TEMP TABLE est AS
  SELECT * FROM powerrank_estimate('est_edges', algorithm => 'pagerank');
SELECT count(*) FROM pagerank('est_edges');
SELECT e.counts_from, e.stored_edges, r.edges AS real_edges, e.stored_edges = r.edges AS edges_exact,
       abs(e.nodes - r.nodes)::float8 / r.nodes < 0.01 AS nodes_within_1pct,
       e.engine, r.engine AS real_engine, e.engine = r.engine AS same_engine, e.reason, e.layout,
       e.iterations, r.iterations AS real_iterations, r.iterations <= e.iterations AS bound_holds,
       e.cache_bytes, e.gpu_bytes, e.cost_from
FROM est e, powerrank_last_run() r;
-- the memory of the backend run: 16 B per row read, the flat graph (pr_graph_flat_size of the
-- estimated nodes and edges, no dangling list), and 4 vectors of 8 B per node plus 1/out-strength
SELECT backend_bytes = 20000 * 16 + (120 + 8 * nodes + 8 * (nodes + 1) + 4 * stored_edges + 8 * nodes)
                       + 4 * nodes * 8 + 8 * nodes AS backend_formula,
       shared_bytes
FROM est;

-- The cost of the next estimate comes from that run (same algorithm and engine, >= 10000 edges):
-- ms per iteration = (iterate_ms - prepare_ms) / iterations, scaled by the edges.
SELECT e.cost_from,
       abs(e.ms_per_iteration - (r.iterate_ms - r.prepare_ms) / r.iterations * e.stored_edges / r.edges) < 1e-9 AS from_last_run,
       abs(e.predicted_ms - e.iterations * e.ms_per_iteration) < 1e-9 AS predicted
FROM powerrank_estimate('est_edges') e, powerrank_last_run() r;

-- Undirected: the rows twice (the real graph stores a self-loop once).
CREATE TEMP TABLE est_u AS SELECT * FROM powerrank_estimate('est_edges', directed => false);
SELECT count(*) FROM pagerank('est_edges', directed => false);
SELECT e.stored_edges, r.edges AS real_edges,
       (SELECT count(*) FROM est_edges WHERE src = dst) AS self_loops,
       e.stored_edges - r.edges = (SELECT count(*) FROM est_edges WHERE src = dst) AS self_loops_only,
       abs(e.nodes - r.nodes)::float8 / r.nodes < 0.01 AS nodes_within_1pct
FROM est_u e, powerrank_last_run() r;

-- Weighted: rows with a NULL weight are skipped too; 24 B per row read.
UPDATE est_edges SET w = NULL WHERE src <= 20 AND dst IS NOT NULL;
ANALYZE est_edges;
CREATE TEMP TABLE est_w AS SELECT * FROM powerrank_estimate('est_edges', weight_column => 'w');
SELECT count(*) FROM pagerank('est_edges', weight_column => 'w');
SELECT e.stored_edges, r.edges AS real_edges, r.skipped_rows,
       abs(e.stored_edges - r.edges)::float8 / r.edges < 0.01 AS edges_within_1pct
FROM est_w e, powerrank_last_run() r;

-- HITS: two products per iteration, no iteration bound (NULL); RWR from 3 sources: 3 columns.
SELECT e.engine, e.iterations, e.predicted_ms, e.ms_per_iteration > 0 AS per_iteration
FROM powerrank_estimate('est_edges', 'hits') e;
SELECT e.iterations AS estimated, r.iterations AS real, r.iterations <= e.iterations AS bound_holds
FROM powerrank_estimate('est_edges', 'rwr', sources => ARRAY[1, 2, 3]::bigint[]) e,
     LATERAL (SELECT count(*) FROM rwr('est_edges', ARRAY[1, 2, 3]::bigint[])) q,
     powerrank_last_run() r;
-- A last run of several columns, or HITS's two products an iteration, gives the cost of one column's
-- product: the estimate of the same call is that run's own time per iteration (scaled by the edges).
SELECT count(*) FROM rwr('est_edges', ARRAY[1, 2, 3]::bigint[]);
SELECT e.cost_from,
       abs(e.ms_per_iteration - (r.iterate_ms - r.prepare_ms) / r.iterations * e.stored_edges / r.edges) < 1e-9 AS same_call_same_cost
FROM powerrank_last_run() r,
     powerrank_estimate('est_edges', 'rwr', sources => ARRAY[1, 2, 3]::bigint[]) e;
SELECT count(*) FROM hits('est_edges');
SELECT e.cost_from,
       abs(e.ms_per_iteration - (r.iterate_ms - r.prepare_ms) / r.iterations * e.stored_edges / r.edges) < 1e-9 AS same_call_same_cost
FROM powerrank_last_run() r, powerrank_estimate('est_edges', 'hits') e;
SELECT (SELECT backend_bytes FROM powerrank_estimate('est_edges', 'rwr', sources => ARRAY[1, 2, 3]::bigint[]))
     - (SELECT backend_bytes FROM powerrank_estimate('est_edges', 'rwr', sources => ARRAY[1]::bigint[]))
     = 2 * 4 * 8 * (SELECT nodes FROM est) AS two_more_columns;

-- Cached: exact counts and the cache entry's bytes, as the cache view shows them.
SELECT powerrank_cache_enable('est_edges');
SELECT counts_from, cache_bytes IS NOT NULL AS will_be_cached FROM powerrank_estimate('est_edges');
CREATE TEMP TABLE est_before AS SELECT * FROM powerrank_estimate('est_edges');
SELECT count(*) FROM pagerank('est_edges');
SELECT cache_hit FROM powerrank_last_run();
SELECT e.counts_from, e.nodes = c.nodes AND e.nodes = r.nodes AS nodes_exact,
       e.stored_edges = c.edges AND e.stored_edges = r.edges AS edges_exact,
       e.cache_bytes = c.bytes AS cache_bytes_exact, e.shared_bytes = c.bytes AS shared_is_the_entry,
       abs(b.cache_bytes - c.bytes)::float8 / c.bytes < 0.01 AS statistics_within_1pct
FROM powerrank_estimate('est_edges') e, powerrank_cache c, powerrank_last_run() r, est_before b
WHERE c.source = 'est_edges'::regclass AND c.columns = 'src, dst';
-- a cached graph is mapped, not built: no rows, no graph in the backend, only the vectors
SELECT backend_bytes = 4 * nodes * 8 + 8 * nodes AS vectors_only
FROM powerrank_estimate('est_edges');
-- HITS on the cached graph: its out-edges in the backend until the entry keeps them (the first
-- HITS call keeps them), then mapped from shared memory
CREATE TEMP TABLE est_hits_before AS SELECT * FROM powerrank_estimate('est_edges', 'hits');
SELECT count(*) FROM hits('est_edges');
SELECT engine, cache_hit FROM powerrank_last_run();
SELECT b.backend_bytes - a.backend_bytes = 8 * (a.nodes + 1) + 4 * a.stored_edges AS out_edges_left_the_backend,
       a.shared_bytes - b.shared_bytes = 8 * (a.nodes + 1) + 4 * a.stored_edges AS out_edges_in_shared_memory
FROM est_hits_before b, powerrank_estimate('est_edges', 'hits') a;

-- The GPU service (cpu-test engine) takes every graph once powerrank.gpu_min_edges allows it.
SELECT service_ready();
SET powerrank.gpu_min_edges = 0;
SELECT engine, reason, layout, residency, gpu_bytes > 0 AS has_gpu_bytes FROM powerrank_estimate('est_edges');
SELECT count(*) FROM pagerank('est_edges');
SELECT e.engine = r.engine AS same_engine, r.engine, e.residency = r.residency AS same_residency
FROM powerrank_estimate('est_edges') e, powerrank_last_run() r;
SELECT engine, reason, residency, gpu_bytes FROM powerrank_estimate('est_edges', device => 'cpu');
SELECT count(*) FROM pagerank('est_edges', device => 'cpu');
SELECT engine, residency FROM powerrank_last_run();
SELECT engine, reason FROM powerrank_estimate('est_edges', device => 'gpu');
RESET powerrank.gpu_min_edges;
SELECT engine, reason FROM powerrank_estimate('est_edges', device => 'auto');

-- The estimate of a call (args: powerrank_estimate's), then the call, side by side.
CREATE TEMP TABLE est_runs(name text, est_engine text, real_engine text, est_residency text,
                           real_residency text, gpu_bytes bigint, est_reason text, fallback text);
CREATE FUNCTION est_against_run(name text, args text, call text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  e record;
  r record;
BEGIN
  EXECUTE format('SELECT * FROM powerrank_estimate(%s)', args) INTO e;
  EXECUTE format('SELECT count(*) FROM %s', call);
  SELECT * INTO r FROM powerrank_last_run();
  INSERT INTO est_runs VALUES (name, e.engine, r.engine, e.residency, r.residency, e.gpu_bytes,
                               e.reason, r.fallback);
END $$;

SELECT setseed(0.5);
CREATE TABLE est_big(src bigint, dst bigint);
INSERT INTO est_big
  SELECT 1 + floor(random() * 4000), 1 + floor(random() * 4000) FROM generate_series(1, 300000);
SELECT powerrank_cache_enable('est_big');
SELECT count(*) FROM pagerank('est_big', device => 'cpu');
SELECT counts_from, nodes, stored_edges FROM powerrank_estimate('est_big');
SET powerrank.gpu_min_edges = 0;

SELECT service_ready();
SELECT engine_pid AS old_pid FROM powerrank_service \gset
ALTER SYSTEM SET powerrank.gpu_memory = '2MB';
SELECT pg_reload_conf();
SELECT service_replaced(:old_pid);
SHOW powerrank.gpu_memory;
SELECT est_against_run('2MB: pagerank', $$'est_big'$$, $$pagerank('est_big')$$);
SELECT est_against_run('2MB: hits', $$'est_big', 'hits'$$, $$hits('est_big')$$);
SELECT est_against_run('2MB: rwr 3 sources', $$'est_big', 'rwr', sources => ARRAY[1, 2, 3]::bigint[]$$,
                       $$rwr('est_big', ARRAY[1, 2, 3]::bigint[])$$);
SET powerrank.warm_start = off;
SELECT est_against_run('2MB: rwr 3 sources, no warm start', $$'est_big', 'rwr', sources => ARRAY[1, 2, 3]::bigint[]$$,
                       $$rwr('est_big', ARRAY[1, 2, 3]::bigint[])$$);
RESET powerrank.warm_start;

SELECT service_ready();
SELECT engine_pid AS old_pid FROM powerrank_service \gset
ALTER SYSTEM SET powerrank.gpu_memory = '1MB';
SELECT pg_reload_conf();
SELECT service_replaced(:old_pid);
SHOW powerrank.gpu_memory;
SELECT est_against_run('1MB: pagerank', $$'est_big'$$, $$pagerank('est_big')$$);
SELECT est_against_run('1MB: rwr 3 sources', $$'est_big', 'rwr', sources => ARRAY[1, 2, 3]::bigint[]$$,
                       $$rwr('est_big', ARRAY[1, 2, 3]::bigint[])$$);

SELECT name, est_engine, est_engine = real_engine AS same_engine, est_residency, real_residency,
       est_residency IS NOT DISTINCT FROM real_residency AS same_residency, gpu_bytes
FROM est_runs ORDER BY name;
-- the fallback: the estimate says why, the real call's fallback is the engine's message
SELECT est_reason, fallback FROM est_runs WHERE name = '1MB: rwr 3 sources';
-- device => 'gpu': an ERROR, as the real call
SELECT engine, reason, residency, gpu_bytes
FROM powerrank_estimate('est_big', 'rwr', device => 'gpu', sources => ARRAY[1, 2, 3]::bigint[]);
SELECT count(*) FROM rwr('est_big', ARRAY[1, 2, 3]::bigint[], device => 'gpu');
-- the CPU engine has no residency
SELECT engine, residency, gpu_bytes FROM powerrank_estimate('est_big', device => 'cpu');

SELECT service_ready();
SELECT engine_pid AS old_pid FROM powerrank_service \gset
ALTER SYSTEM RESET powerrank.gpu_memory;
SELECT pg_reload_conf();
SELECT service_replaced(:old_pid);
RESET powerrank.gpu_min_edges;
DROP TABLE est_big;
DROP FUNCTION est_against_run(text, text, text);

-- Errors: the ranking functions' checks and messages.
SELECT * FROM powerrank_estimate('est_edges', 'katz');
SELECT * FROM powerrank_estimate('est_edges', NULL);
SELECT * FROM powerrank_estimate('no_such_table');
SELECT * FROM powerrank_estimate('est_edges', src_column => 'from_node');
SELECT * FROM powerrank_estimate('est_edges', damping => 1.5);
SELECT * FROM powerrank_estimate('est_edges', device => 'fpga');
SELECT * FROM powerrank_estimate('est_edges', sources => ARRAY[1]::bigint[]);
SELECT * FROM powerrank_estimate('est_edges', 'rwr', sources => ARRAY[]::bigint[]);
CREATE ROLE regress_est_reader;
SET ROLE regress_est_reader;
SELECT * FROM powerrank_estimate('est_edges');
SELECT * FROM pagerank('est_edges');
RESET ROLE;
GRANT SELECT (src, dst) ON est_edges TO regress_est_reader;
SET ROLE regress_est_reader;
SELECT counts_from, stored_edges > 0 AS has_edges FROM powerrank_estimate('est_edges');
SELECT * FROM powerrank_estimate('est_edges', weight_column => 'w');
RESET ROLE;

DROP TABLE est_edges;
DROP ROLE regress_est_reader;
