-- pgTAP: the SQL API's objects and signatures (run by pg_prove; see test/run_all.sh).
BEGIN;
SELECT plan(50);

-- Types and aggregates.
SELECT has_type('rankgraph');
SELECT is_aggregate('powerrank_graph', ARRAY['bigint', 'bigint']);
SELECT is_aggregate('powerrank_graph', ARRAY['bigint', 'bigint', 'double precision']);
SELECT function_returns('powerrank_graph', ARRAY['bigint', 'bigint'], 'rankgraph');
SELECT function_returns('powerrank_graph', ARRAY['bigint', 'bigint', 'double precision'], 'rankgraph');
SELECT is((SELECT bool_and(a.aggcombinefn <> 0 AND a.aggserialfn <> 0 AND a.aggdeserialfn <> 0)
           FROM pg_aggregate a JOIN pg_proc p ON p.oid = a.aggfnoid
           WHERE p.proname = 'powerrank_graph'), true,
          'powerrank_graph has combine, serial and deserial functions');
SELECT is((SELECT bool_and(p.proparallel = 's') FROM pg_proc p WHERE p.proname = 'powerrank_graph'),
          true, 'powerrank_graph is parallel safe');

-- The ranking functions: every signature, C, SECURITY INVOKER, volatile, not strict.
CREATE TEMP TABLE sigs(name name, args name[], result text);
INSERT INTO sigs VALUES
  ('pagerank', ARRAY['text', 'double precision', 'double precision', 'integer', 'integer', 'name',
                     'name', 'name', 'text', 'boolean', 'bigint[]', 'boolean', 'text',
                     'double precision[]', 'bigint[]', 'double precision[]', 'bigint[]',
                     'double precision[]'],
   'TABLE(node bigint, score double precision)'),
  ('pagerank', ARRAY['rankgraph', 'double precision', 'double precision', 'integer', 'integer',
                     'text', 'bigint[]', 'boolean', 'text', 'double precision[]', 'bigint[]',
                     'double precision[]', 'bigint[]', 'double precision[]'],
   'TABLE(node bigint, score double precision)'),
  ('hits', ARRAY['text', 'double precision', 'integer', 'integer', 'name', 'name', 'name', 'text',
                 'boolean', 'boolean', 'text'],
   'TABLE(node bigint, hub double precision, authority double precision)'),
  ('hits', ARRAY['rankgraph', 'double precision', 'integer', 'integer', 'text', 'boolean', 'text'],
   'TABLE(node bigint, hub double precision, authority double precision)'),
  ('rwr', ARRAY['text', 'bigint', 'double precision', 'double precision', 'integer', 'integer',
                'name', 'name', 'name', 'text', 'boolean', 'boolean', 'text', 'bigint[]',
                'double precision[]'],
   'TABLE(node bigint, score double precision)'),
  ('rwr', ARRAY['text', 'bigint[]', 'double precision', 'double precision', 'integer', 'integer',
                'name', 'name', 'name', 'text', 'boolean', 'boolean', 'text', 'bigint[]',
                'double precision[]'],
   'TABLE(source bigint, node bigint, score double precision)'),
  ('rwr', ARRAY['rankgraph', 'bigint', 'double precision', 'double precision', 'integer',
                'integer', 'text', 'boolean', 'text', 'bigint[]', 'double precision[]'],
   'TABLE(node bigint, score double precision)'),
  ('rwr', ARRAY['rankgraph', 'bigint[]', 'double precision', 'double precision', 'integer',
                'integer', 'text', 'boolean', 'text', 'bigint[]', 'double precision[]'],
   'TABLE(source bigint, node bigint, score double precision)');

SELECT has_function(name, args) FROM sigs;
SELECT is((SELECT count(*) FROM sigs
           WHERE (SELECT prosupport FROM pg_proc
                  WHERE oid = format('%s(%s)', name, array_to_string(args, ','))::regprocedure)
                 = 'powerrank_rows_support'::regproc),
          8::bigint, 'the ranking functions have the planner support function for their row estimate');
SELECT isnt_definer(name, args) FROM sigs;
SELECT function_lang_is(name, args, 'c') FROM sigs;
SELECT is(pg_get_function_result(format('%s(%s)', name, array_to_string(args, ','))::regprocedure),
          result, format('%s(%s) returns %s', name, args[1], result))
FROM sigs;

SELECT has_function('powerrank_last_run', ARRAY[]::name[]);
SELECT isnt_definer('powerrank_last_run', ARRAY[]::name[]);
SELECT is(pg_get_function_result('powerrank_last_run()'::regprocedure),
          'TABLE(algorithm text, engine text, nodes bigint, edges bigint, skipped_rows bigint, '
          'iterations integer, residual double precision, norm text, converged boolean, '
          'build_ms double precision, iterate_ms double precision, total_ms double precision, '
          'cache_hit boolean, fallback text, read_ms double precision, prepare_ms double precision, '
          'batch_size integer, warm_start text, residency text, error_bound double precision, '
          'mixed_steps integer, top_k_certified boolean, top_k_ties bigint, graph_source text, '
          'delta_rows bigint, exchange_bytes bigint, exchange_ms double precision, peer_bytes bigint)',
          'powerrank_last_run() columns');

-- powerrank_estimate: the ranking functions' argument names and defaults, one row.
SELECT has_function('powerrank_estimate', ARRAY['text', 'text', 'double precision',
                    'double precision', 'double precision', 'integer', 'integer', 'name', 'name',
                    'name', 'text', 'boolean', 'boolean', 'text', 'bigint[]']);
SELECT isnt_definer('powerrank_estimate', ARRAY['text', 'text', 'double precision',
                    'double precision', 'double precision', 'integer', 'integer', 'name', 'name',
                    'name', 'text', 'boolean', 'boolean', 'text', 'bigint[]']);
SELECT is(pg_get_function_arguments('powerrank_estimate(text,text,float8,float8,float8,int,int,name,name,name,text,boolean,boolean,text,bigint[])'::regprocedure),
          'edges text, algorithm text DEFAULT ''pagerank''::text, damping double precision DEFAULT 0.85, '
          'restart double precision DEFAULT 0.15, tolerance double precision DEFAULT 0.000001, '
          'max_iterations integer DEFAULT 1000, top_k integer DEFAULT NULL::integer, '
          'src_column name DEFAULT ''src''::name, dst_column name DEFAULT ''dst''::name, '
          'weight_column name DEFAULT NULL::name, norm text DEFAULT ''l1''::text, '
          'directed boolean DEFAULT true, require_convergence boolean DEFAULT false, '
          'device text DEFAULT ''auto''::text, sources bigint[] DEFAULT NULL::bigint[], '
          'OUT nodes bigint, OUT stored_edges bigint, OUT counts_from text, OUT engine text, '
          'OUT reason text, OUT layout text, OUT residency text, OUT backend_bytes bigint, OUT shared_bytes bigint, '
          'OUT cache_bytes bigint, OUT gpu_bytes bigint, OUT iterations integer, '
          'OUT ms_per_iteration double precision, OUT predicted_ms double precision, OUT cost_from text',
          'powerrank_estimate arguments, defaults and columns');
SELECT is(pg_get_function_result('powerrank_progress_entries()'::regprocedure),
          'SETOF record', 'powerrank_progress_entries() returns rows');

-- Defaults as documented.
SELECT is(pg_get_function_arguments('pagerank(text,float8,float8,int,int,name,name,name,text,boolean,bigint[],boolean,text,float8[],bigint[],float8[],bigint[],float8[])'::regprocedure),
          'edges text, damping double precision DEFAULT 0.85, tolerance double precision DEFAULT 0.000001, '
          'max_iterations integer DEFAULT 1000, top_k integer DEFAULT NULL::integer, '
          'src_column name DEFAULT ''src''::name, dst_column name DEFAULT ''dst''::name, '
          'weight_column name DEFAULT NULL::name, norm text DEFAULT ''l1''::text, '
          'directed boolean DEFAULT true, personalization bigint[] DEFAULT NULL::bigint[], '
          'require_convergence boolean DEFAULT false, device text DEFAULT ''auto''::text, '
          'personalization_weights double precision[] DEFAULT NULL::double precision[], '
          'dangling bigint[] DEFAULT NULL::bigint[], dangling_weights double precision[] DEFAULT NULL::double precision[], '
          'start_nodes bigint[] DEFAULT NULL::bigint[], start_scores double precision[] DEFAULT NULL::double precision[]',
          'pagerank defaults');

-- A new session has no last run; calling a function loads the library and its settings.
SELECT is_empty('SELECT * FROM powerrank_last_run()', 'no last run in a new session');
SELECT is(current_setting('powerrank.cpu_threads'), '0', 'powerrank.cpu_threads defaults to 0');

SELECT * FROM finish();
ROLLBACK;
