-- powerrank: PageRank, HITS and random walk with restart over edge tables.
-- Hand-edited: the install script of the current version (default_version in powerrank.control),
-- which the Makefile copies to powerrank--<version>.sql.  Every change here is also made by the
-- upgrade script from the previous version, sql/powerrank--<previous>--<version>.sql: the upgrade
-- test compares an updated installation with a fresh one.

\echo Use "CREATE EXTENSION powerrank" to load this file. \quit

-- ---------------------------------------------------------------------------------------------
-- rankgraph: a whole graph (CSR arrays) in one value, built by the powerrank_graph aggregate.
-- ---------------------------------------------------------------------------------------------

CREATE TYPE rankgraph;

CREATE FUNCTION rankgraph_in(cstring) RETURNS rankgraph
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION rankgraph_out(rankgraph) RETURNS cstring
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION rankgraph_recv(internal) RETURNS rankgraph
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION rankgraph_send(rankgraph) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION rankgraph_in(cstring) IS
	'Input function of rankgraph: reads and validates the text form PRG1:<base64>';
COMMENT ON FUNCTION rankgraph_out(rankgraph) IS
	'Output function of rankgraph: the text form PRG1:<base64> that pg_dump and COPY keep';
COMMENT ON FUNCTION rankgraph_recv(internal) IS
	'Binary input function of rankgraph: reads and validates the binary form';
COMMENT ON FUNCTION rankgraph_send(rankgraph) IS
	'Binary output function of rankgraph';
CREATE TYPE rankgraph (
	INPUT = rankgraph_in,
	OUTPUT = rankgraph_out,
	RECEIVE = rankgraph_recv,
	SEND = rankgraph_send,
	INTERNALLENGTH = VARIABLE,
	ALIGNMENT = double,
	STORAGE = extended
);

COMMENT ON TYPE rankgraph IS
	'A graph built by powerrank_graph(src, dst [, weight]), ready for pagerank/hits/rwr';

CREATE FUNCTION rankgraph_summary(rankgraph) RETURNS text
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION rankgraph_summary(rankgraph) IS
	'One line describing a rankgraph: rankgraph(nodes=N, edges=M, weighted=t|f)';

-- ---------------------------------------------------------------------------------------------
-- powerrank_graph(src, dst [, weight]): aggregate building a rankgraph from any query.
-- NULL src/dst/weight rows are skipped and counted. Parallel safe.
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION powerrank_graph_sfunc(internal, int8, int8) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE FUNCTION powerrank_graph_sfunc(internal, int8, int8, float8) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE FUNCTION powerrank_graph_combine(internal, internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE FUNCTION powerrank_graph_serialize(internal) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C STRICT PARALLEL SAFE;

CREATE FUNCTION powerrank_graph_deserialize(bytea, internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C STRICT PARALLEL SAFE;

CREATE FUNCTION powerrank_graph_final(internal) RETURNS rankgraph
	AS 'MODULE_PATHNAME' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

COMMENT ON FUNCTION powerrank_graph_sfunc(internal, int8, int8) IS
	'State function of the powerrank_graph(src, dst) aggregate';
COMMENT ON FUNCTION powerrank_graph_sfunc(internal, int8, int8, float8) IS
	'State function of the powerrank_graph(src, dst, weight) aggregate';
COMMENT ON FUNCTION powerrank_graph_combine(internal, internal) IS
	'Combine function of the powerrank_graph aggregates (parallel aggregation)';
COMMENT ON FUNCTION powerrank_graph_serialize(internal) IS
	'Serial function of the powerrank_graph aggregates (parallel aggregation)';
COMMENT ON FUNCTION powerrank_graph_deserialize(bytea, internal) IS
	'Deserial function of the powerrank_graph aggregates (parallel aggregation)';
COMMENT ON FUNCTION powerrank_graph_final(internal) IS
	'Final function of the powerrank_graph aggregates: builds the rankgraph';

CREATE AGGREGATE powerrank_graph(src int8, dst int8) (
	SFUNC = powerrank_graph_sfunc,
	STYPE = internal,
	FINALFUNC = powerrank_graph_final,
	COMBINEFUNC = powerrank_graph_combine,
	SERIALFUNC = powerrank_graph_serialize,
	DESERIALFUNC = powerrank_graph_deserialize,
	PARALLEL = SAFE
);

CREATE AGGREGATE powerrank_graph(src int8, dst int8, weight float8) (
	SFUNC = powerrank_graph_sfunc,
	STYPE = internal,
	FINALFUNC = powerrank_graph_final,
	COMBINEFUNC = powerrank_graph_combine,
	SERIALFUNC = powerrank_graph_serialize,
	DESERIALFUNC = powerrank_graph_deserialize,
	PARALLEL = SAFE
);

COMMENT ON AGGREGATE powerrank_graph(int8, int8) IS
	'Builds a rankgraph from (src, dst) rows of any query';
COMMENT ON AGGREGATE powerrank_graph(int8, int8, float8) IS
	'Builds a weighted rankgraph from (src, dst, weight) rows of any query';

-- The planner's row estimate of pagerank, hits and rwr: top_k, else the node count of the table
-- (graph cache or column statistics), times the number of sources for many-source rwr.
CREATE FUNCTION powerrank_rows_support(internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C STRICT PARALLEL SAFE;
COMMENT ON FUNCTION powerrank_rows_support(internal) IS
	'Planner support function of pagerank, hits and rwr: their row estimate';

-- ---------------------------------------------------------------------------------------------
-- pagerank: (node, score). All nodes in node order, or the top_k best by score (ties: node asc).
-- personalization_weights (aligned with personalization) weights the restart over those nodes;
-- dangling (+ dangling_weights) is where a dangling node's mass goes (default: the restart).
-- start_nodes + start_scores: the start vector (other nodes start at 1/N; unknown ones ignored).
-- The table form reads the named table (quoted / schema-qualified names allowed) with the
-- caller's privileges and row-level security.
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION pagerank(
	edges text,
	damping float8 DEFAULT 0.85,
	tolerance float8 DEFAULT 1e-6,
	max_iterations int DEFAULT 1000,
	top_k int DEFAULT NULL,
	src_column name DEFAULT 'src',
	dst_column name DEFAULT 'dst',
	weight_column name DEFAULT NULL,
	norm text DEFAULT 'l1',
	directed boolean DEFAULT true,
	personalization bigint[] DEFAULT NULL,
	require_convergence boolean DEFAULT false,
	device text DEFAULT 'auto',
	personalization_weights float8[] DEFAULT NULL,
	dangling bigint[] DEFAULT NULL,
	dangling_weights float8[] DEFAULT NULL,
	start_nodes bigint[] DEFAULT NULL,
	start_scores float8[] DEFAULT NULL)
RETURNS TABLE(node bigint, score float8)
	AS 'MODULE_PATHNAME', 'powerrank_pagerank_table'
	LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE SECURITY INVOKER
	SUPPORT powerrank_rows_support;

CREATE FUNCTION pagerank(
	graph rankgraph,
	damping float8 DEFAULT 0.85,
	tolerance float8 DEFAULT 1e-6,
	max_iterations int DEFAULT 1000,
	top_k int DEFAULT NULL,
	norm text DEFAULT 'l1',
	personalization bigint[] DEFAULT NULL,
	require_convergence boolean DEFAULT false,
	device text DEFAULT 'auto',
	personalization_weights float8[] DEFAULT NULL,
	dangling bigint[] DEFAULT NULL,
	dangling_weights float8[] DEFAULT NULL,
	start_nodes bigint[] DEFAULT NULL,
	start_scores float8[] DEFAULT NULL)
RETURNS TABLE(node bigint, score float8)
	AS 'MODULE_PATHNAME', 'powerrank_pagerank_graph'
	LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE SECURITY INVOKER
	SUPPORT powerrank_rows_support;

COMMENT ON FUNCTION pagerank(text, float8, float8, int, int, name, name, name, text, boolean, bigint[], boolean, text, float8[], bigint[], float8[], bigint[], float8[]) IS
	'PageRank (or personalized PageRank) of the nodes of an edge table';
COMMENT ON FUNCTION pagerank(rankgraph, float8, float8, int, int, text, bigint[], boolean, text, float8[], bigint[], float8[], bigint[], float8[]) IS
	'PageRank (or personalized PageRank) of the nodes of a rankgraph';

-- ---------------------------------------------------------------------------------------------
-- hits: (node, hub, authority), each summing to 1. top_k ranks by authority.
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION hits(
	edges text,
	tolerance float8 DEFAULT 1e-6,
	max_iterations int DEFAULT 1000,
	top_k int DEFAULT NULL,
	src_column name DEFAULT 'src',
	dst_column name DEFAULT 'dst',
	weight_column name DEFAULT NULL,
	norm text DEFAULT 'l1',
	directed boolean DEFAULT true,
	require_convergence boolean DEFAULT false,
	device text DEFAULT 'auto')
RETURNS TABLE(node bigint, hub float8, authority float8)
	AS 'MODULE_PATHNAME', 'powerrank_hits_table'
	LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE SECURITY INVOKER
	SUPPORT powerrank_rows_support;

CREATE FUNCTION hits(
	graph rankgraph,
	tolerance float8 DEFAULT 1e-6,
	max_iterations int DEFAULT 1000,
	top_k int DEFAULT NULL,
	norm text DEFAULT 'l1',
	require_convergence boolean DEFAULT false,
	device text DEFAULT 'auto')
RETURNS TABLE(node bigint, hub float8, authority float8)
	AS 'MODULE_PATHNAME', 'powerrank_hits_graph'
	LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE SECURITY INVOKER
	SUPPORT powerrank_rows_support;

COMMENT ON FUNCTION hits(text, float8, int, int, name, name, name, text, boolean, boolean, text) IS
	'HITS hub and authority scores of the nodes of an edge table';
COMMENT ON FUNCTION hits(rankgraph, float8, int, int, text, boolean, text) IS
	'HITS hub and authority scores of the nodes of a rankgraph';

-- ---------------------------------------------------------------------------------------------
-- rwr: random walk with restart = personalized PageRank restarting at the source with
-- probability restart (damping = 1 - restart). Many sources: one run, one column per source.
-- dangling (+ dangling_weights): where a dangling node's mass goes (default: back to the source).
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION rwr(
	edges text,
	source bigint,
	restart float8 DEFAULT 0.15,
	tolerance float8 DEFAULT 1e-6,
	max_iterations int DEFAULT 1000,
	top_k int DEFAULT NULL,
	src_column name DEFAULT 'src',
	dst_column name DEFAULT 'dst',
	weight_column name DEFAULT NULL,
	norm text DEFAULT 'l1',
	directed boolean DEFAULT true,
	require_convergence boolean DEFAULT false,
	device text DEFAULT 'auto',
	dangling bigint[] DEFAULT NULL,
	dangling_weights float8[] DEFAULT NULL)
RETURNS TABLE(node bigint, score float8)
	AS 'MODULE_PATHNAME', 'powerrank_rwr_table'
	LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE SECURITY INVOKER
	SUPPORT powerrank_rows_support;

CREATE FUNCTION rwr(
	edges text,
	sources bigint[],
	restart float8 DEFAULT 0.15,
	tolerance float8 DEFAULT 1e-6,
	max_iterations int DEFAULT 1000,
	top_k int DEFAULT NULL,
	src_column name DEFAULT 'src',
	dst_column name DEFAULT 'dst',
	weight_column name DEFAULT NULL,
	norm text DEFAULT 'l1',
	directed boolean DEFAULT true,
	require_convergence boolean DEFAULT false,
	device text DEFAULT 'auto',
	dangling bigint[] DEFAULT NULL,
	dangling_weights float8[] DEFAULT NULL)
RETURNS TABLE(source bigint, node bigint, score float8)
	AS 'MODULE_PATHNAME', 'powerrank_rwr_table_many'
	LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE SECURITY INVOKER
	SUPPORT powerrank_rows_support;

CREATE FUNCTION rwr(
	graph rankgraph,
	source bigint,
	restart float8 DEFAULT 0.15,
	tolerance float8 DEFAULT 1e-6,
	max_iterations int DEFAULT 1000,
	top_k int DEFAULT NULL,
	norm text DEFAULT 'l1',
	require_convergence boolean DEFAULT false,
	device text DEFAULT 'auto',
	dangling bigint[] DEFAULT NULL,
	dangling_weights float8[] DEFAULT NULL)
RETURNS TABLE(node bigint, score float8)
	AS 'MODULE_PATHNAME', 'powerrank_rwr_graph'
	LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE SECURITY INVOKER
	SUPPORT powerrank_rows_support;

CREATE FUNCTION rwr(
	graph rankgraph,
	sources bigint[],
	restart float8 DEFAULT 0.15,
	tolerance float8 DEFAULT 1e-6,
	max_iterations int DEFAULT 1000,
	top_k int DEFAULT NULL,
	norm text DEFAULT 'l1',
	require_convergence boolean DEFAULT false,
	device text DEFAULT 'auto',
	dangling bigint[] DEFAULT NULL,
	dangling_weights float8[] DEFAULT NULL)
RETURNS TABLE(source bigint, node bigint, score float8)
	AS 'MODULE_PATHNAME', 'powerrank_rwr_graph_many'
	LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE SECURITY INVOKER
	SUPPORT powerrank_rows_support;

COMMENT ON FUNCTION rwr(text, bigint, float8, float8, int, int, name, name, name, text, boolean, boolean, text, bigint[], float8[]) IS
	'Random walk with restart from one source over an edge table';
COMMENT ON FUNCTION rwr(text, bigint[], float8, float8, int, int, name, name, name, text, boolean, boolean, text, bigint[], float8[]) IS
	'Random walk with restart from many sources at once over an edge table';
COMMENT ON FUNCTION rwr(rankgraph, bigint, float8, float8, int, int, text, boolean, text, bigint[], float8[]) IS
	'Random walk with restart from one source over a rankgraph';
COMMENT ON FUNCTION rwr(rankgraph, bigint[], float8, float8, int, int, text, boolean, text, bigint[], float8[]) IS
	'Random walk with restart from many sources at once over a rankgraph';

-- ---------------------------------------------------------------------------------------------
-- powerrank_last_run(): statistics of this session's last ranking run (no row before the first).
-- build_ms covers reading the rows and building the graph (or mapping the cached one);
-- iterate_ms the engine's run; cache_hit says whether the graph came from the graph cache;
-- engine which engine ran ('cpu', 'gpu-tiled', 'cpu-test via service', ...) and fallback why
-- the GPU service was not used although it could have been (NULL: it was, or it was not asked).
-- read_ms is the part of build_ms spent reading the rows (0 on a cache hit), prepare_ms the part of
-- iterate_ms the engine spent preparing the graph (on the GPU: planning the layout and uploading
-- it; about 0 when the graph was resident).  batch_size is the number of requests the GPU service
-- answered with the same run (RWR requests on one cached graph are batched: see
-- powerrank.service_batch_size); 1 when the run served this call alone.  warm_start says where the
-- CPU engine's PageRank / RWR started: 'explicit' (start_nodes / start_scores), 'previous' (the
-- scores kept with the cached graph: powerrank.warm_start_auto) or 'none' (1/N; on the GPU
-- service, the service's own start).  residency says where the GPU service kept the graph's
-- matrices: 'resident' (in device memory), 'resident+delta' (a live table's previous graph resident,
-- the changes since added to every product) or 'streamed' (in host memory, copied to the device
-- every iteration: the graph does not fit the device or powerrank.gpu_memory); NULL when the
-- backend's CPU engine ran.  exchange_bytes and exchange_ms: a distributed run's bytes to and from
-- the shard servers and the time of its round trips to them (engine 'distributed(S)'); NULL on one server.
-- peer_bytes: the bytes its shards sent each other (engine 'distributed(S, gloo)'); NULL when
-- every vector went through the coordinator.
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION powerrank_last_run()
RETURNS TABLE(algorithm text, engine text, nodes bigint, edges bigint, skipped_rows bigint,
			  iterations int, residual float8, norm text, converged boolean,
			  build_ms float8, iterate_ms float8, total_ms float8, cache_hit boolean,
			  fallback text, read_ms float8, prepare_ms float8, batch_size int,
			  warm_start text, residency text, error_bound float8, mixed_steps int,
			  top_k_certified boolean, top_k_ties bigint, graph_source text, delta_rows bigint,
			  exchange_bytes bigint, exchange_ms float8, peer_bytes bigint)
	AS 'MODULE_PATHNAME', 'powerrank_last_run'
	LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED ROWS 1;

COMMENT ON FUNCTION powerrank_last_run() IS
	'Statistics of this session''s last pagerank/hits/rwr run';

-- ---------------------------------------------------------------------------------------------
-- powerrank_estimate(): what a pagerank / hits / rwr call on a table would take, without reading
-- the table: nodes and stored edges (exact from the graph cache, else from pg_class.reltuples and
-- the endpoint columns' statistics, NULL when never analyzed), bytes in the backend, in shared
-- memory (cache_bytes: the cache entry's flat graph) and on the GPU, the engine the call would run
-- on (the real call's decision) and why, where the GPU service would keep the graph (residency:
-- 'resident' or 'streamed', the GPU engine's choice from the same sizes; NULL on the CPU), and a
-- predicted time of the iterations.  The arguments
-- are the ranking functions', by the same names (sources: rwr's many sources, one column each).
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION powerrank_estimate(
	edges text,
	algorithm text DEFAULT 'pagerank',
	damping float8 DEFAULT 0.85,
	restart float8 DEFAULT 0.15,
	tolerance float8 DEFAULT 1e-6,
	max_iterations int DEFAULT 1000,
	top_k int DEFAULT NULL,
	src_column name DEFAULT 'src',
	dst_column name DEFAULT 'dst',
	weight_column name DEFAULT NULL,
	norm text DEFAULT 'l1',
	directed boolean DEFAULT true,
	require_convergence boolean DEFAULT false,
	device text DEFAULT 'auto',
	sources bigint[] DEFAULT NULL,
	OUT nodes bigint, OUT stored_edges bigint, OUT counts_from text, OUT engine text,
	OUT reason text, OUT layout text, OUT residency text, OUT backend_bytes bigint,
	OUT shared_bytes bigint, OUT cache_bytes bigint, OUT gpu_bytes bigint, OUT iterations int,
	OUT ms_per_iteration float8, OUT predicted_ms float8, OUT cost_from text)
RETURNS record
	AS 'MODULE_PATHNAME', 'powerrank_estimate'
	LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE SECURITY INVOKER;

COMMENT ON FUNCTION powerrank_estimate(text, text, float8, float8, float8, int, int, name, name, name, text, boolean, boolean, text, bigint[]) IS
	'What a pagerank/hits/rwr call on an edge table would take (size, memory, engine, time), without reading the table';

-- ---------------------------------------------------------------------------------------------
-- The graph cache (needs shared_preload_libraries = 'powerrank'): graphs of tracked tables stay
-- in shared memory, one dynamic shared memory segment each, until the table changes.
-- A table is tracked once its owner calls powerrank_cache_enable('table'): a statement-level
-- trigger then adds one row (the table, the modifying transaction) to the append-only change log
-- in every modifying transaction, and a cached graph is served only for the set of log rows the
-- caller's snapshot sees.  Writers only insert rows of their own: they never wait on each other.
-- ---------------------------------------------------------------------------------------------

CREATE TABLE powerrank_change_log (
	relid oid NOT NULL,
	change xid8 NOT NULL,
	rebase boolean NOT NULL DEFAULT false,
	snapshot_xmax xid8,
	snapshot_xip xid8[],
	kept_from xid8,
	PRIMARY KEY (relid, change)
);

COMMENT ON TABLE powerrank_change_log IS
	'Transactions that changed each table tracked for the powerrank graph cache (maintained by triggers, compacted in the background)';
COMMENT ON COLUMN powerrank_change_log.snapshot_xmax IS
	'On the rebase row of a compaction: the xmax of the snapshot it deleted the table''s rows in (every row of a transaction below it and not in snapshot_xip was deleted)';
COMMENT ON COLUMN powerrank_change_log.snapshot_xip IS
	'On the rebase row of a compaction: the transactions in progress at its snapshot';
COMMENT ON COLUMN powerrank_change_log.kept_from IS
	'On the rebase row of a background compaction that kept the cached graphs usable: the change rows of transactions from this one up were kept, and no other rebase row from here up was deleted (NULL: ends every chain of patched graphs)';

-- Only the extension's owner reads or writes the log, through the functions below: the rows say
-- when tables changed, which a role that may not read a table must not learn.
REVOKE ALL ON powerrank_change_log FROM PUBLIC;

CREATE FUNCTION powerrank_track_changes() RETURNS trigger
	AS 'MODULE_PATHNAME', 'powerrank_track_changes' LANGUAGE C;

CREATE FUNCTION powerrank_ddl_command_end() RETURNS event_trigger
	AS 'MODULE_PATHNAME', 'powerrank_ddl_command_end' LANGUAGE C;

CREATE FUNCTION powerrank_sql_drop() RETURNS event_trigger
	AS 'MODULE_PATHNAME', 'powerrank_sql_drop' LANGUAGE C;

COMMENT ON FUNCTION powerrank_track_changes() IS
	'Trigger powerrank_track of the tables tracked for the graph cache (installed by powerrank_cache_enable): logs each modifying transaction';
COMMENT ON FUNCTION powerrank_ddl_command_end() IS
	'Event trigger function of powerrank_ddl: ALTER TABLE on a tracked table starts a new base in the change log';
COMMENT ON FUNCTION powerrank_sql_drop() IS
	'Event trigger function of powerrank_drop: evicts the cached graphs of dropped tables';

-- ALTER TABLE on a tracked table starts a new base in the log; DROP evicts the table's graphs.
-- ALWAYS: also under session_replication_role = replica.
CREATE EVENT TRIGGER powerrank_ddl ON ddl_command_end WHEN TAG IN ('ALTER TABLE')
	EXECUTE FUNCTION powerrank_ddl_command_end();
ALTER EVENT TRIGGER powerrank_ddl ENABLE ALWAYS;

CREATE EVENT TRIGGER powerrank_drop ON sql_drop
	EXECUTE FUNCTION powerrank_sql_drop();
ALTER EVENT TRIGGER powerrank_drop ENABLE ALWAYS;

COMMENT ON EVENT TRIGGER powerrank_ddl IS
	'powerrank graph cache: ALTER TABLE on a tracked table starts a new base in the change log';
COMMENT ON EVENT TRIGGER powerrank_drop IS
	'powerrank graph cache: evicts the cached graphs of dropped tables';

CREATE FUNCTION powerrank_cache_enable(edges text) RETURNS boolean
	AS 'MODULE_PATHNAME', 'powerrank_cache_enable'
	LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE SECURITY INVOKER;

COMMENT ON FUNCTION powerrank_cache_enable(text) IS
	'Tracks changes of a table (owner only) so that its graph can be cached; true when newly installed';

-- ---------------------------------------------------------------------------------------------
-- Live tables: powerrank_cache_live('table') (its owner; the table tracked) adds three statement
-- triggers with transition tables that store the rows each statement inserts, deletes or updates
-- (powerrank_change_rows, one row per statement, keyed by the writer's transaction); a reader whose
-- snapshot sees a few writers beyond a cached graph patches that graph with their rows instead of
-- reading and building the whole table (src/cache/cache_capture.c).
-- ---------------------------------------------------------------------------------------------

CREATE TABLE powerrank_change_rows (
	relid oid NOT NULL,
	change xid8 NOT NULL,
	complete boolean NOT NULL,
	old_rows bytea,
	new_rows bytea
);

CREATE INDEX powerrank_change_rows_relid_change ON powerrank_change_rows (relid, change);

COMMENT ON TABLE powerrank_change_rows IS
	'Rows each statement changed in the tables made live for the powerrank graph cache (maintained by triggers, compacted with the change log)';
COMMENT ON COLUMN powerrank_change_rows.complete IS
	'false when the statement changed too many rows to keep them (old_rows and new_rows NULL): a reader then builds from the table';
COMMENT ON COLUMN powerrank_change_rows.old_rows IS
	'The deleted or updated rows (their old versions) in the table''s tuple format, only the columns a graph can read';
COMMENT ON COLUMN powerrank_change_rows.new_rows IS
	'The inserted or updated rows (their new versions) in the table''s tuple format, only the columns a graph can read';

-- Like the change log: only the extension's owner reads or writes it.
REVOKE ALL ON powerrank_change_rows FROM PUBLIC;

CREATE FUNCTION powerrank_capture_changes() RETURNS trigger
	AS 'MODULE_PATHNAME', 'powerrank_capture_changes' LANGUAGE C;

COMMENT ON FUNCTION powerrank_capture_changes() IS
	'Triggers powerrank_capture_insert, _update and _delete of the live tables (installed by powerrank_cache_live): store the rows each statement changed';

CREATE FUNCTION powerrank_cache_live(edges text) RETURNS boolean
	AS 'MODULE_PATHNAME', 'powerrank_cache_live'
	LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE SECURITY INVOKER;

COMMENT ON FUNCTION powerrank_cache_live(text) IS
	'Makes a tracked table live (owner only): its cached graph follows small changes without a rebuild; true when newly installed';

-- One row per cached graph, and one per tracked table whose trigger keeps it from being served
-- (graph columns NULL); tracking: 'on', 'not always', 'disabled', 'altered' or 'missing'.
CREATE FUNCTION powerrank_cache_entries(
	OUT source regclass, OUT tracking text, OUT columns text, OUT directed boolean,
	OUT nodes bigint, OUT edges bigint, OUT bytes bigint, OUT built_at timestamptz,
	OUT last_used timestamptz, OUT hits bigint, OUT base xid8, OUT changes bigint, OUT in_use int,
	OUT gpu text, OUT delta_rows bigint)
RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'powerrank_cache_entries'
	LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION powerrank_cache_entries() IS
	'The rows of the powerrank_cache view: graphs cached for tables of this database and tracked tables not served because of their trigger, that the caller may read';

CREATE VIEW powerrank_cache AS SELECT * FROM powerrank_cache_entries();

COMMENT ON VIEW powerrank_cache IS
	'Graphs held by the powerrank graph cache with their table''s tracking state, and tracked tables that their trigger keeps from being served, for tables of this database that the caller may read';

-- A view is readable only by its owner until granted; every role may read this one: the function
-- behind it lists only the tables the caller may SELECT (all of them for pg_read_all_stats).
GRANT SELECT ON powerrank_cache TO PUBLIC;

CREATE FUNCTION powerrank_cache_drop(edges text DEFAULT NULL) RETURNS int
	AS 'MODULE_PATHNAME', 'powerrank_cache_drop'
	LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION powerrank_cache_drop(text) IS
	'Evicts the cached graphs of one table, or of every table of this database (NULL); returns how many';

-- Evicting costs every user a rebuild: the DBA grants it.
REVOKE ALL ON FUNCTION powerrank_cache_drop(text) FROM PUBLIC;

CREATE FUNCTION powerrank_cache_compact() RETURNS bigint
	AS 'MODULE_PATHNAME', 'powerrank_cache_compact'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION powerrank_cache_compact() IS
	'Compacts the change log of the graph cache now (a background worker does it as the log grows); returns the rows removed';

REVOKE ALL ON FUNCTION powerrank_cache_compact() FROM PUBLIC;

CREATE FUNCTION powerrank_cache_status(
	OUT enabled boolean, OUT slots int, OUT entries int, OUT retired int, OUT segments int,
	OUT bytes bigint, OUT size_limit bigint)
RETURNS record
	AS 'MODULE_PATHNAME', 'powerrank_cache_status'
	LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION powerrank_cache_status() IS
	'Counters of the graph cache (all databases): entries, evicted entries still in use, pinned segments and bytes';

-- ---------------------------------------------------------------------------------------------
-- The GPU service (needs shared_preload_libraries = 'powerrank'): a background worker whose
-- engine process runs pagerank/hits/rwr for device => 'gpu' (and 'auto' on large graphs).
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION powerrank_service_status(
	OUT preloaded boolean, OUT state text, OUT worker_pid int, OUT engine_pid int,
	OUT engine text, OUT device text, OUT requests bigint, OUT failures bigint,
	OUT restarts bigint, OUT resident_graphs int, OUT device_bytes bigint, OUT uploads bigint,
	OUT reuses bigint, OUT evictions bigint, OUT request_segments int, OUT last_error text,
	OUT batches bigint, OUT batched_requests bigint, OUT batch_iterations bigint,
	OUT batch_ms double precision, OUT builds bigint)
RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'powerrank_service_status'
	LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED ROWS 1;

COMMENT ON FUNCTION powerrank_service_status() IS
	'The row of the powerrank_service view: state and counters of the GPU service';

CREATE VIEW powerrank_service AS SELECT * FROM powerrank_service_status();

COMMENT ON VIEW powerrank_service IS
	'The powerrank GPU service: state, processes, engine, device, requests, failures, restarts, resident graphs, RWR batches, graphs built';

-- Every role may read it; last_error only members of pg_read_all_stats (NULL for the others).
GRANT SELECT ON powerrank_service TO PUBLIC;

-- powerrank_progress: one row per run in progress, from its first moment: phase 'reading' (rows_read
-- of rows_estimated, the table's pg_class.reltuples), 'building', then 'queued' / 'preparing' on the
-- service and 'iterating'.  device, nodes, edges and columns are NULL until the graph is built.
-- Works without shared_preload_libraries for runs in the backend (see doc/DESIGN.md "Progress").
CREATE FUNCTION powerrank_progress_entries(
	OUT pid int, OUT algorithm text, OUT device text, OUT phase text, OUT iteration int,
	OUT residual float8, OUT elapsed interval, OUT nodes bigint, OUT edges bigint,
	OUT columns int, OUT rows_read bigint, OUT rows_estimated bigint)
RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'powerrank_progress_entries'
	LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION powerrank_progress_entries() IS
	'The rows of the powerrank_progress view: pagerank/hits/rwr runs in progress';

CREATE VIEW powerrank_progress AS SELECT * FROM powerrank_progress_entries();

COMMENT ON VIEW powerrank_progress IS
	'pagerank/hits/rwr runs in progress: phase (reading, building, queued, preparing, iterating), rows read of the estimate, iteration, residual, elapsed';

-- Every role may read it; like pg_stat_activity, the details of runs of roles the caller has no
-- privileges of are NULL unless it is a member of pg_read_all_stats.
GRANT SELECT ON powerrank_progress TO PUBLIC;

CREATE FUNCTION powerrank_service_inject_fault(fault text) RETURNS void
	AS 'MODULE_PATHNAME', 'powerrank_service_inject_fault'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION powerrank_service_inject_fault(text) IS
	'Tests only (superuser): the GPU service fails its next request (error, oom, crash), makes the next RWR request wait for a batch (gather), or none';

REVOKE ALL ON FUNCTION powerrank_service_inject_fault(text) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- A partitioned edge table whose partitions are postgres_fdw foreign tables is ranked where its
-- edges live (powerrank.distributed, README "Edge tables over several servers"): the coordinator
-- opens a part on every shard server with powerrank_shard_open (the graph of the shard's table,
-- read as the connecting user; from the shard's graph cache when tracked; the session's part
-- again while the table's content is the same), prepares it with the whole graph's out-strengths
-- (powerrank_shard_prepare) and relays every sparse product of the run through
-- powerrank_shard_product, or, where each part owns the rows of its nodes, runs the products and
-- PageRank updates of those rows on the shards (powerrank_shard_owned_product,
-- powerrank_shard_update, the two in one call with the shards' exchange: powerrank_shard_step,
-- and the accelerated iteration's powerrank_shard_combine and
-- powerrank_shard_dots; HITS's push product and normalisation of those rows: powerrank_shard_push,
-- powerrank_shard_add_exported, powerrank_shard_column_sums, powerrank_shard_normalize;
-- powerrank_shard_rows gives a slot's owned rows, powerrank_shard_top_k their
-- best; a start vector's owned rows and the warm start's restart are written there by
-- powerrank_shard_set_rows and powerrank_shard_restart_fill); powerrank_shard_close frees the part (so does the end of the session).  Vectors travel as bytea, in the servers' byte order.
-- Where every part is a shard, the shards also exchange the rows they read of each other's
-- vectors directly (powerrank.distributed_exchange): powerrank_shard_peers_open makes the session's
-- end of a group of shards (Gloo over TCP), powerrank_shard_peers_connect connects it to the others.
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION powerrank_shard_open(edges text, src_column name, dst_column name,
									 weight_column name, out_edges boolean, known_content bigint)
RETURNS bytea
	AS 'MODULE_PATHNAME', 'powerrank_shard_open'
	LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE SECURITY INVOKER;

CREATE FUNCTION powerrank_shard_prepare(out_strength bytea, columns int, products int,
										owners bytea)
RETURNS bigint
	AS 'MODULE_PATHNAME', 'powerrank_shard_prepare'
	LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE SECURITY INVOKER;

CREATE FUNCTION powerrank_shard_product(product int, x bytea)
RETURNS bytea
	AS 'MODULE_PATHNAME', 'powerrank_shard_product'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE SECURITY INVOKER;

CREATE FUNCTION powerrank_shard_owned_product(product int, x_slot int, y_slot int, given int,
											  x bytea)
RETURNS bytea
	AS 'MODULE_PATHNAME', 'powerrank_shard_owned_product'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE SECURITY INVOKER;

CREATE FUNCTION powerrank_shard_rows(slot int, exported boolean)
RETURNS bytea
	AS 'MODULE_PATHNAME', 'powerrank_shard_rows'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE SECURITY INVOKER;

CREATE FUNCTION powerrank_shard_set_rows(slot int, "values" bytea)
RETURNS bytea
	AS 'MODULE_PATHNAME', 'powerrank_shard_set_rows'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE SECURITY INVOKER;

CREATE FUNCTION powerrank_shard_restart_fill(slot int, restart bytea)
RETURNS bytea
	AS 'MODULE_PATHNAME', 'powerrank_shard_restart_fill'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE SECURITY INVOKER;

CREATE FUNCTION powerrank_shard_update(y_slot int, x_slot int, alpha float8, dangling bytea,
									   restart bytea, exported boolean)
RETURNS bytea
	AS 'MODULE_PATHNAME', 'powerrank_shard_update'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE SECURITY INVOKER;

CREATE FUNCTION powerrank_shard_step(x_slot int, y_slot int, alpha float8, dangling bytea,
									 restart bytea)
RETURNS bytea
	AS 'MODULE_PATHNAME', 'powerrank_shard_step'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE SECURITY INVOKER;

CREATE FUNCTION powerrank_shard_top_k(slot int, top_k bigint)
RETURNS bytea
	AS 'MODULE_PATHNAME', 'powerrank_shard_top_k'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE SECURITY INVOKER;

CREATE FUNCTION powerrank_shard_combine(out_slot int, slots bytea, coef bytea)
RETURNS bytea
	AS 'MODULE_PATHNAME', 'powerrank_shard_combine'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE SECURITY INVOKER;

CREATE FUNCTION powerrank_shard_dots(a_slot int, slots bytea)
RETURNS bytea
	AS 'MODULE_PATHNAME', 'powerrank_shard_dots'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE SECURITY INVOKER;

CREATE FUNCTION powerrank_shard_column_sums(slot int)
RETURNS bytea
	AS 'MODULE_PATHNAME', 'powerrank_shard_column_sums'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE SECURITY INVOKER;

CREATE FUNCTION powerrank_shard_normalize(slot int, old_slot int, sums bytea)
RETURNS bytea
	AS 'MODULE_PATHNAME', 'powerrank_shard_normalize'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE SECURITY INVOKER;

CREATE FUNCTION powerrank_shard_push(x_slot int, y_slot int, x_sums bytea, peers boolean)
RETURNS bytea
	AS 'MODULE_PATHNAME', 'powerrank_shard_push'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE SECURITY INVOKER;

CREATE FUNCTION powerrank_shard_add_exported(y_slot int, "values" bytea)
RETURNS bytea
	AS 'MODULE_PATHNAME', 'powerrank_shard_add_exported'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE SECURITY INVOKER;

CREATE FUNCTION powerrank_shard_peers_open(rank int, parts int, lists_name bytea)
RETURNS bytea
	AS 'MODULE_PATHNAME', 'powerrank_shard_peers_open'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE SECURITY INVOKER;

CREATE FUNCTION powerrank_shard_peers_connect(addresses bytea, lists bytea)
RETURNS bytea
	AS 'MODULE_PATHNAME', 'powerrank_shard_peers_connect'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE SECURITY INVOKER;

CREATE FUNCTION powerrank_shard_close()
RETURNS void
	AS 'MODULE_PATHNAME', 'powerrank_shard_close'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE SECURITY INVOKER;

COMMENT ON FUNCTION powerrank_shard_open(text, name, name, name, boolean, bigint) IS
	'Shard side of a distributed ranking: opens this session''s part on an edge table (called by a coordinator)';
COMMENT ON FUNCTION powerrank_shard_prepare(bytea, int, int, bytea) IS
	'Shard side of a distributed ranking: prepares this session''s part (called by a coordinator)';
COMMENT ON FUNCTION powerrank_shard_owned_product(int, int, int, int, bytea) IS
	'Shard side of a distributed ranking: a sparse product on the rows this session''s part owns (called by a coordinator)';
COMMENT ON FUNCTION powerrank_shard_rows(int, boolean) IS
	'Shard side of a distributed ranking: the values of the rows this session''s part owns (called by a coordinator)';
COMMENT ON FUNCTION powerrank_shard_set_rows(int, bytea) IS
	'Shard side of a distributed ranking: writes the rows this session''s part owns of a vector (called by a coordinator)';
COMMENT ON FUNCTION powerrank_shard_restart_fill(int, bytea) IS
	'Shard side of a distributed ranking: fills the rows this session''s part owns with a restart distribution (called by a coordinator)';
COMMENT ON FUNCTION powerrank_shard_update(int, int, float8, bytea, bytea, boolean) IS
	'Shard side of a distributed ranking: the PageRank update of the rows this session''s part owns (called by a coordinator)';
COMMENT ON FUNCTION powerrank_shard_step(int, int, float8, bytea, bytea) IS
	'Shard side of a distributed ranking: a PageRank iteration (exchange, product, update) of the rows this session''s part owns (called by a coordinator)';
COMMENT ON FUNCTION powerrank_shard_top_k(int, bigint) IS
	'Shard side of a distributed ranking: the best of the rows this session''s part owns (called by a coordinator)';
COMMENT ON FUNCTION powerrank_shard_combine(int, bytea, bytea) IS
	'Shard side of a distributed ranking: a combination of vectors on the rows this session''s part owns (called by a coordinator)';
COMMENT ON FUNCTION powerrank_shard_dots(int, bytea) IS
	'Shard side of a distributed ranking: dot products over the rows this session''s part owns (called by a coordinator)';
COMMENT ON FUNCTION powerrank_shard_column_sums(int) IS
	'Shard side of a distributed ranking: the column sums of a vector over the rows this session''s part owns (called by a coordinator)';
COMMENT ON FUNCTION powerrank_shard_normalize(int, int, bytea) IS
	'Shard side of a distributed ranking: HITS''s normalisation of the rows this session''s part owns (called by a coordinator)';
COMMENT ON FUNCTION powerrank_shard_push(int, int, bytea, boolean) IS
	'Shard side of a distributed ranking: HITS''s push product over this session''s part, its partial sums sent to their owners (called by a coordinator)';
COMMENT ON FUNCTION powerrank_shard_add_exported(int, bytea) IS
	'Shard side of a distributed ranking: adds the other parts'' push sums of the rows this session''s part owns (called by a coordinator)';
COMMENT ON FUNCTION powerrank_shard_product(int, bytea) IS
	'Shard side of a distributed ranking: one sparse product over this session''s part (called by a coordinator)';
COMMENT ON FUNCTION powerrank_shard_peers_open(int, int, bytea) IS
	'Shard side of a distributed ranking: makes this session''s end of a group of shards that exchange vectors (called by a coordinator)';
COMMENT ON FUNCTION powerrank_shard_peers_connect(bytea, bytea) IS
	'Shard side of a distributed ranking: connects this session''s group of shards (called by a coordinator)';
COMMENT ON FUNCTION powerrank_shard_close() IS
	'Shard side of a distributed ranking: frees this session''s part';
