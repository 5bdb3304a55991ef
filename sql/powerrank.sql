-- powerrank: PageRank, HITS and random walk with restart over edge tables.
-- Hand-edited; the Makefile copies it to powerrank--0.1.sql.

\echo Use "CREATE EXTENSION powerrank" to load this file. \quit

-- ---------------------------------------------------------------------------------------------
-- rankgraph: a whole graph (CSR arrays) in one value, built by the powerrank_graph aggregate.
-- ---------------------------------------------------------------------------------------------

CREATE TYPE rankgraph;

CREATE FUNCTION rankgraph_in(cstring) RETURNS rankgraph
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION rankgraph_out(rankgraph) RETURNS cstring
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE rankgraph (
	INPUT = rankgraph_in,
	OUTPUT = rankgraph_out,
	INTERNALLENGTH = VARIABLE,
	ALIGNMENT = double,
	STORAGE = extended
);

COMMENT ON TYPE rankgraph IS
	'A graph built by powerrank_graph(src, dst [, weight]), ready for pagerank/hits/rwr';

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

-- ---------------------------------------------------------------------------------------------
-- pagerank: (node, score). All nodes in node order, or the top_k best by score (ties: node asc).
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
	require_convergence boolean DEFAULT false)
RETURNS TABLE(node bigint, score float8)
	AS 'MODULE_PATHNAME', 'powerrank_pagerank_table'
	LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE SECURITY INVOKER;

CREATE FUNCTION pagerank(
	graph rankgraph,
	damping float8 DEFAULT 0.85,
	tolerance float8 DEFAULT 1e-6,
	max_iterations int DEFAULT 1000,
	top_k int DEFAULT NULL,
	norm text DEFAULT 'l1',
	personalization bigint[] DEFAULT NULL,
	require_convergence boolean DEFAULT false)
RETURNS TABLE(node bigint, score float8)
	AS 'MODULE_PATHNAME', 'powerrank_pagerank_graph'
	LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE SECURITY INVOKER;

COMMENT ON FUNCTION pagerank(text, float8, float8, int, int, name, name, name, text, boolean, bigint[], boolean) IS
	'PageRank (or personalized PageRank) of the nodes of an edge table';
COMMENT ON FUNCTION pagerank(rankgraph, float8, float8, int, int, text, bigint[], boolean) IS
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
	require_convergence boolean DEFAULT false)
RETURNS TABLE(node bigint, hub float8, authority float8)
	AS 'MODULE_PATHNAME', 'powerrank_hits_table'
	LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE SECURITY INVOKER;

CREATE FUNCTION hits(
	graph rankgraph,
	tolerance float8 DEFAULT 1e-6,
	max_iterations int DEFAULT 1000,
	top_k int DEFAULT NULL,
	norm text DEFAULT 'l1',
	require_convergence boolean DEFAULT false)
RETURNS TABLE(node bigint, hub float8, authority float8)
	AS 'MODULE_PATHNAME', 'powerrank_hits_graph'
	LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE SECURITY INVOKER;

COMMENT ON FUNCTION hits(text, float8, int, int, name, name, name, text, boolean, boolean) IS
	'HITS hub and authority scores of the nodes of an edge table';
COMMENT ON FUNCTION hits(rankgraph, float8, int, int, text, boolean) IS
	'HITS hub and authority scores of the nodes of a rankgraph';

-- ---------------------------------------------------------------------------------------------
-- rwr: random walk with restart = personalized PageRank restarting at the source with
-- probability restart (damping = 1 - restart). Many sources: one run, one column per source.
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
	require_convergence boolean DEFAULT false)
RETURNS TABLE(node bigint, score float8)
	AS 'MODULE_PATHNAME', 'powerrank_rwr_table'
	LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE SECURITY INVOKER;

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
	require_convergence boolean DEFAULT false)
RETURNS TABLE(source bigint, node bigint, score float8)
	AS 'MODULE_PATHNAME', 'powerrank_rwr_table_many'
	LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE SECURITY INVOKER;

CREATE FUNCTION rwr(
	graph rankgraph,
	source bigint,
	restart float8 DEFAULT 0.15,
	tolerance float8 DEFAULT 1e-6,
	max_iterations int DEFAULT 1000,
	top_k int DEFAULT NULL,
	norm text DEFAULT 'l1',
	require_convergence boolean DEFAULT false)
RETURNS TABLE(node bigint, score float8)
	AS 'MODULE_PATHNAME', 'powerrank_rwr_graph'
	LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE SECURITY INVOKER;

CREATE FUNCTION rwr(
	graph rankgraph,
	sources bigint[],
	restart float8 DEFAULT 0.15,
	tolerance float8 DEFAULT 1e-6,
	max_iterations int DEFAULT 1000,
	top_k int DEFAULT NULL,
	norm text DEFAULT 'l1',
	require_convergence boolean DEFAULT false)
RETURNS TABLE(source bigint, node bigint, score float8)
	AS 'MODULE_PATHNAME', 'powerrank_rwr_graph_many'
	LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE SECURITY INVOKER;

COMMENT ON FUNCTION rwr(text, bigint, float8, float8, int, int, name, name, name, text, boolean, boolean) IS
	'Random walk with restart from one source over an edge table';
COMMENT ON FUNCTION rwr(text, bigint[], float8, float8, int, int, name, name, name, text, boolean, boolean) IS
	'Random walk with restart from many sources at once over an edge table';
COMMENT ON FUNCTION rwr(rankgraph, bigint, float8, float8, int, int, text, boolean) IS
	'Random walk with restart from one source over a rankgraph';
COMMENT ON FUNCTION rwr(rankgraph, bigint[], float8, float8, int, int, text, boolean) IS
	'Random walk with restart from many sources at once over a rankgraph';

-- ---------------------------------------------------------------------------------------------
-- powerrank_last_run(): statistics of this session's last ranking run (no row before the first).
-- build_ms covers reading the rows and building the graph; iterate_ms the engine's run.
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION powerrank_last_run()
RETURNS TABLE(algorithm text, engine text, nodes bigint, edges bigint, skipped_rows bigint,
			  iterations int, residual float8, norm text, converged boolean,
			  build_ms float8, iterate_ms float8, total_ms float8)
	AS 'MODULE_PATHNAME', 'powerrank_last_run'
	LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED ROWS 1;

COMMENT ON FUNCTION powerrank_last_run() IS
	'Statistics of this session''s last pagerank/hits/rwr run';
