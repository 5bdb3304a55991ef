-- powerrank 0.1 -> 0.2: ALTER EXTENSION powerrank UPDATE (TO '0.2').
-- Makes an installation of 0.1 equal to a fresh CREATE EXTENSION powerrank VERSION '0.2'
-- (sql/powerrank.sql); the upgrade test compares the two.  The library serves both versions.

\echo Use "ALTER EXTENSION powerrank UPDATE TO '0.2'" to load this file. \quit

-- The update re-creates powerrank_last_run() and the views powerrank_progress and powerrank_cache
-- (below), which resets their privileges to those of a fresh install.  Where a role granted or
-- revoked any since CREATE EXTENSION, a WARNING gives the statements that set them again; they are
-- to be run after the update, outside it, so that pg_dump keeps them (privileges set inside an
-- extension script count as the extension's own).
DO $$
DECLARE
	statements text;
BEGIN
	WITH changed AS (
		SELECT 'TABLE' AS kind, format('%I.%I', n.nspname, c.relname) AS object, c.relacl AS acl,
			   c.relowner AS owner
		FROM pg_catalog.pg_class c
		JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
		LEFT JOIN pg_catalog.pg_init_privs i ON i.objoid = c.oid
			 AND i.classoid = 'pg_catalog.pg_class'::pg_catalog.regclass AND i.objsubid = 0
		WHERE c.oid IN ('powerrank_progress'::pg_catalog.regclass,
						'powerrank_cache'::pg_catalog.regclass)
		  AND c.relacl IS DISTINCT FROM i.initprivs
		UNION ALL
		SELECT 'FUNCTION', format('%I.%I()', n.nspname, p.proname), p.proacl, p.proowner
		FROM pg_catalog.pg_proc p
		JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
		LEFT JOIN pg_catalog.pg_init_privs i ON i.objoid = p.oid
			 AND i.classoid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND i.objsubid = 0
		WHERE p.oid = 'powerrank_last_run()'::pg_catalog.regprocedure
		  AND p.proacl IS DISTINCT FROM i.initprivs)
	SELECT string_agg(s.statement, E'\n' ORDER BY s.object, s.ord) INTO statements
	FROM (SELECT object, 0 AS ord, format('REVOKE ALL ON %s %s FROM PUBLIC;', kind, object) AS statement
		  FROM changed
		  UNION ALL
		  SELECT object, 1, format('GRANT %s ON %s %s TO %s%s;', a.privilege_type, kind, object,
								   CASE a.grantee WHEN 0 THEN 'PUBLIC'
								   ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(a.grantee)) END,
								   CASE WHEN a.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END)
		  FROM changed, pg_catalog.aclexplode(acl) a
		  WHERE a.grantee <> owner) s;
	IF statements IS NOT NULL THEN
		RAISE WARNING 'the update resets the privileges of powerrank_progress, powerrank_cache and powerrank_last_run() that were changed since CREATE EXTENSION'
			USING DETAIL = 'They are re-created with new columns, with the privileges of a fresh install.',
				  HINT = E'After the update, run:\n' || statements;
	END IF;
END
$$;

-- powerrank_last_run() gains columns (a function's result type cannot change in place: drop and
-- create; a user view over it must be dropped before the update).
DROP FUNCTION powerrank_last_run();

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

-- powerrank_progress shows runs from their first moment: the reading and building phases, with
-- rows_read and rows_estimated (a view's columns cannot be added in place: drop and create).
DROP VIEW powerrank_progress;
DROP FUNCTION powerrank_progress_entries();

CREATE FUNCTION powerrank_progress_entries(
	OUT pid int, OUT algorithm text, OUT device text, OUT phase text, OUT iteration int,
	OUT residual float8, OUT elapsed interval, OUT nodes bigint, OUT edges bigint,
	OUT columns int, OUT rows_read bigint, OUT rows_estimated bigint)
RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'powerrank_progress_entries'
	LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

CREATE VIEW powerrank_progress AS SELECT * FROM powerrank_progress_entries();

COMMENT ON VIEW powerrank_progress IS
	'pagerank/hits/rwr runs in progress: phase (reading, building, queued, preparing, iterating), rows read of the estimate, iteration, residual, elapsed';

-- Every role may read it; like pg_stat_activity, the details of runs of roles the caller has no
-- privileges of are NULL unless it is a member of pg_read_all_stats.
GRANT SELECT ON powerrank_progress TO PUBLIC;

-- powerrank_cache shows each table's tracking state, and lists tracked tables whose trigger keeps
-- them from being served (a view's columns cannot be added in place: drop and create).
DROP VIEW powerrank_cache;
DROP FUNCTION powerrank_cache_entries();

CREATE FUNCTION powerrank_cache_entries(
	OUT source regclass, OUT tracking text, OUT columns text, OUT directed boolean,
	OUT nodes bigint, OUT edges bigint, OUT bytes bigint, OUT built_at timestamptz,
	OUT last_used timestamptz, OUT hits bigint, OUT base xid8, OUT changes bigint, OUT in_use int,
	OUT gpu text, OUT delta_rows bigint)
RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'powerrank_cache_entries'
	LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

CREATE VIEW powerrank_cache AS SELECT * FROM powerrank_cache_entries();

COMMENT ON VIEW powerrank_cache IS
	'Graphs held by the powerrank graph cache with their table''s tracking state, and tracked tables that their trigger keeps from being served, for tables of this database that the caller may read';

-- Every role may read it; the function behind it lists only the tables the caller may SELECT.
GRANT SELECT ON powerrank_cache TO PUBLIC;

-- powerrank_estimate: what a call would take, without reading the table.
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

-- A compaction's rebase row records its snapshot (xmax and the transactions in progress): a
-- reader of the change log then reads only the rows the compaction did not see, never the ones it
-- deleted (src/cache/cache_tracking.c); a background compaction's also records from which
-- transaction on it kept the change rows, so that the cached graphs of live tables stay bases
-- across it (src/cache/cache_compact.c).
ALTER TABLE powerrank_change_log ADD COLUMN snapshot_xmax xid8, ADD COLUMN snapshot_xip xid8[],
	ADD COLUMN kept_from xid8;

COMMENT ON COLUMN powerrank_change_log.snapshot_xmax IS
	'On the rebase row of a compaction: the xmax of the snapshot it deleted the table''s rows in (every row of a transaction below it and not in snapshot_xip was deleted)';
COMMENT ON COLUMN powerrank_change_log.snapshot_xip IS
	'On the rebase row of a compaction: the transactions in progress at its snapshot';
COMMENT ON COLUMN powerrank_change_log.kept_from IS
	'On the rebase row of a background compaction that kept the cached graphs usable: the change rows of transactions from this one up were kept, and no other rebase row from here up was deleted (NULL: ends every chain of patched graphs)';

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
	'The rows of the powerrank_cache view: graphs cached for tables of this database and tracked tables not served because of their trigger, that the caller may read';
COMMENT ON FUNCTION powerrank_service_status() IS
	'The row of the powerrank_service view: state and counters of the GPU service';
COMMENT ON FUNCTION powerrank_progress_entries() IS
	'The rows of the powerrank_progress view: pagerank/hits/rwr runs in progress';

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
