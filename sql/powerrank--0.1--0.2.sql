-- powerrank 0.1 -> 0.2: ALTER EXTENSION powerrank UPDATE (TO '0.2').
-- Makes an installation of 0.1 equal to a fresh CREATE EXTENSION powerrank VERSION '0.2'
-- (sql/powerrank.sql); the upgrade test compares the two.  The library serves both versions.

\echo Use "ALTER EXTENSION powerrank UPDATE TO '0.2'" to load this file. \quit

-- Every function and event trigger has a description (\df+, \dy+, obj_description).
COMMENT ON FUNCTION rankgraph_in(cstring) IS
	'Input function of rankgraph: reads and validates the text form PRG1:<base64>';
COMMENT ON FUNCTION rankgraph_out(rankgraph) IS
	'Output function of rankgraph: the text form PRG1:<base64> that pg_dump and COPY keep';
COMMENT ON FUNCTION rankgraph_recv(internal) IS
	'Binary input function of rankgraph: reads and validates the binary form';
COMMENT ON FUNCTION rankgraph_send(rankgraph) IS
	'Binary output function of rankgraph';
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
COMMENT ON FUNCTION powerrank_rows_support(internal) IS
	'Planner support function of pagerank, hits and rwr: their row estimate';
COMMENT ON FUNCTION powerrank_track_changes() IS
	'Trigger powerrank_track of the tables tracked for the graph cache (installed by powerrank_cache_enable): logs each modifying transaction';
COMMENT ON FUNCTION powerrank_ddl_command_end() IS
	'Event trigger function of powerrank_ddl: ALTER TABLE on a tracked table starts a new base in the change log';
COMMENT ON FUNCTION powerrank_sql_drop() IS
	'Event trigger function of powerrank_drop: evicts the cached graphs of dropped tables';
COMMENT ON EVENT TRIGGER powerrank_ddl IS
	'powerrank graph cache: ALTER TABLE on a tracked table starts a new base in the change log';
COMMENT ON EVENT TRIGGER powerrank_drop IS
	'powerrank graph cache: evicts the cached graphs of dropped tables';
COMMENT ON FUNCTION powerrank_cache_entries() IS
	'The rows of the powerrank_cache view: graphs cached for tables of this database that the caller may read';
COMMENT ON FUNCTION powerrank_service_status() IS
	'The row of the powerrank_service view: state and counters of the GPU service';
COMMENT ON FUNCTION powerrank_progress_entries() IS
	'The rows of the powerrank_progress view: pagerank/hits/rwr runs in progress';
