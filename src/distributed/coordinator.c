/*
 * coordinator.c — the coordinator of a distributed ranking run (distributed.h).
 *
 * The parts are the leaf partitions of the partitioned edge table: a postgres_fdw foreign table is
 * a shard server's table, reached over libpq with the connection options and user mapping
 * postgres_fdw would use; a local partition is a part kept in this backend.  Every part opens its
 * graph once per run (powerrank_shard_open: its nodes' external ids and out-strengths come back),
 * this backend merges the node sets and sums the out-strengths into the whole graph's (the graph
 * the driver sees: every node, no edge), every part prepares its engine with the whole graph's
 * out-strengths of its nodes (powerrank_shard_prepare), and every product of the driver is
 * relayed: this backend sends each part x over the part's nodes, each part multiplies over its
 * own edges, and the parts' results are added into y.  Every other operation of the driver runs
 * on the CPU engine of this backend over the whole vectors, so the top-k is ranked here exactly.
 *
 * Requests go out to every shard before this backend waits for any (libpq's asynchronous API),
 * and a local part computes while the shards do.  The bytes are binary (bytea, this machine's byte
 * order: a shard's open must start with SHARD_MAGIC as this backend writes it).  A cancel
 * (statement_timeout, pg_cancel_backend) while waiting sends a cancel request to every busy shard
 * and raises the cancel; a shard's ERROR or a lost connection raises an ERROR naming the server;
 * the connections are closed (busy ones cancelled first) when the run's memory context goes, on
 * success and on ERROR alike.
 */
#include "powerrank.h"

#include <libpq-fe.h>

#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "commands/defrem.h"
#include "foreign/foreign.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rls.h"
#include "utils/syscache.h"
#include "utils/wait_event.h"

#include "distributed/distributed.h"
#include "distributed/shard.h"
#include "graph/graph_scan.h"

int			powerrank_distributed = DISTRIBUTED_AUTO;
int			powerrank_distributed_min_rows = 100000;

static const struct config_enum_entry distributed_options[] = {
	{"auto", DISTRIBUTED_AUTO, false},
	{"on", DISTRIBUTED_ON, false},
	{"off", DISTRIBUTED_OFF, false},
	{NULL, 0, false}
};

/* Defines powerrank.distributed. */
void
distributed_init(void)
{
	DefineCustomEnumVariable("powerrank.distributed",
							 "When a partitioned edge table with postgres_fdw partitions is ranked on the servers that hold its partitions: auto, on (an ERROR when the table does not qualify) or off.",
							 NULL,
							 &powerrank_distributed,
							 DISTRIBUTED_AUTO, distributed_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("powerrank.distributed_min_rows",
							"Fewest rows (the partitions' pg_class.reltuples) for which powerrank.distributed = auto ranks a table on its partitions' servers.",
							"A table with a partition never analyzed counts as large enough.",
							&powerrank_distributed_min_rows,
							100000, 0, INT_MAX,
							PGC_USERSET, 0, NULL, NULL, NULL);
}

/* One part: a shard server's table (conn) or a local partition (local). */
typedef struct DistPart
{
	const char *partition;		/* the partition's name here, for messages */
	const char *server;			/* the foreign server's name, NULL for a local partition */
	PGconn	   *conn;
	const char *schema;			/* the shard's powerrank schema, quoted */
	const char *product_query;	/* the query of a product on it */
	bool		busy;			/* a request is out and its result not read */
	ShardState *local;
	EdgeTableSpec spec;			/* the table as its server names it */
	int64		n_nodes;
	int64		n_edges;
	bool		cache_hit;		/* its graph came from its server's graph cache */
	int64	   *node_ids;		/* [n_nodes] external ids, ascending */
	double	   *out_strength;	/* [n_nodes] of the part's own rows */
	uint8	   *roles;			/* [n_nodes] SHARD_ROLE_* bits */
	int32	   *rows[3];		/* rows[role]: the local nodes with that role (shard_role_rows) */
	int64		row_count[3];
	int32	   *to_global;		/* [n_nodes] the whole graph's id of each local node */
	double	   *x;				/* [n_nodes * k] */
	double	   *y;				/* [n_nodes * k] */
} DistPart;

/* The parts of a run and the whole graph's nodes. */
struct DistCluster
{
	MemoryContext cxt;
	MemoryContextCallback cleanup;
	int			n_parts;
	DistPart   *parts;
	PrGraph		graph;			/* every node, its out-strength, no edge */
	int64		n_edges;		/* the parts' edges together */
	int			k;				/* columns the parts are prepared for (0: none) */
	unsigned	needs;
	int64		exchange_bytes;
	double		exchange_seconds;
};

/* Sends a cancel request to a part's busy server. */
static void
cancel_part(DistPart *part)
{
	PGcancel   *cancel;
	char		message[256];

	if (part->conn == NULL || !part->busy)
		return;
	cancel = PQgetCancel(part->conn);
	if (cancel != NULL)
	{
		if (!PQcancel(cancel, message, sizeof(message)))
			elog(DEBUG1, "powerrank: cancel request to server \"%s\" failed: %s", part->server,
				 message);
		PQfreeCancel(cancel);
	}
	part->busy = false;
}

/* Cancels what the busy shards do, then closes every connection (the run's context goes). */
static void
close_parts(void *arg)
{
	DistCluster *c = (DistCluster *) arg;

	for (int p = 0; p < c->n_parts; p++)
		cancel_part(&c->parts[p]);
	for (int p = 0; p < c->n_parts; p++)
		if (c->parts[p].conn != NULL)
		{
			PQfinish(c->parts[p].conn);
			c->parts[p].conn = NULL;
		}
}

/* Refuses a table (an ERROR with powerrank.distributed = on, else false and a DEBUG1 line). */
static bool
not_qualified(const EdgeTableSpec *spec, const char *why)
{
	if (powerrank_distributed == DISTRIBUTED_ON)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("table \"%s\" cannot be ranked by its partitions' servers: %s",
						text_to_cstring(spec->relation), why),
				 errhint("SET powerrank.distributed = auto to rank it on this server.")));
	elog(DEBUG1, "powerrank: \"%s\" is ranked on this server: %s", text_to_cstring(spec->relation),
		 why);
	return false;
}

/* The foreign-data wrapper's name of a foreign table. */
static const char *
foreign_wrapper_name(Oid relid)
{
	ForeignTable *table = GetForeignTable(relid);
	ForeignServer *server = GetForeignServer(table->serverid);

	return GetForeignDataWrapper(server->fdwid)->fdwname;
}

/* The rows pg_class says a relation holds, or -1 when it was never analyzed or vacuumed. */
static double
relation_rows(Oid relid)
{
	HeapTuple	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	double		rows = -1.0;

	if (HeapTupleIsValid(tuple))
	{
		rows = ((Form_pg_class) GETSTRUCT(tuple))->reltuples;
		ReleaseSysCache(tuple);
	}
	return rows;
}

/*
 * Whether a ranking of the table goes to its partitions' servers: powerrank.distributed is not
 * off, the table is partitioned, every leaf partition is a plain table or a postgres_fdw foreign
 * table and at least one is foreign, the graph is directed, no GPU is required, and no row-level
 * security applies to the partitioned table for this user (its policies would not reach the
 * shards).  Otherwise false (an ERROR with powerrank.distributed = on).  With auto, also false when
 * every partition was analyzed and they hold fewer than powerrank.distributed_min_rows rows.
 */
bool
distributed_wanted(const EdgeTableSpec *spec, bool directed, bool gpu_required)
{
	Oid			relid;
	List	   *leaves;
	ListCell   *lc;
	int			foreign = 0;
	double		rows = 0.0;

	if (powerrank_distributed == DISTRIBUTED_OFF)
		return false;
	relid = graph_scan_resolve_relation(spec->relation);
	if (get_rel_relkind(relid) != RELKIND_PARTITIONED_TABLE)
		return not_qualified(spec, "it is not a partitioned table");
	leaves = find_all_inheritors(relid, AccessShareLock, NULL);
	foreach(lc, leaves)
	{
		Oid			leaf = lfirst_oid(lc);
		char		relkind = get_rel_relkind(leaf);

		if (relkind == RELKIND_FOREIGN_TABLE)
		{
			if (strcmp(foreign_wrapper_name(leaf), "postgres_fdw") != 0)
				return not_qualified(spec, "a partition is a foreign table of another wrapper than postgres_fdw");
			foreign++;
		}
		else if (relkind != RELKIND_RELATION && relkind != RELKIND_PARTITIONED_TABLE)
			return not_qualified(spec, "a partition is neither a table nor a foreign table");
		if (relkind != RELKIND_PARTITIONED_TABLE)
		{
			double		leaf_rows = relation_rows(leaf);

			rows = rows < 0.0 || leaf_rows < 0.0 ? -1.0 : rows + leaf_rows;
		}
	}
	if (foreign == 0)
		return not_qualified(spec, "no partition is a postgres_fdw foreign table");
	if (!directed)
		return not_qualified(spec, "directed => false reverses edges across partitions");
	if (gpu_required)
		return not_qualified(spec, "device => 'gpu' ranks on this server's GPU service");
	if (check_enable_rls(relid, InvalidOid, true) == RLS_ENABLED)
		return not_qualified(spec, "row-level security applies to it");
	if (powerrank_distributed == DISTRIBUTED_AUTO && rows >= 0.0 &&
		rows < (double) powerrank_distributed_min_rows)
	{
		/* small: reading it here costs less than the round trips of a distributed run */
		elog(DEBUG1, "powerrank: \"%s\" is ranked on this server: its partitions hold about %.0f rows, fewer than powerrank.distributed_min_rows",
			 text_to_cstring(spec->relation), rows);
		return false;
	}
	return true;
}

/* The value of option name in a list of DefElem, or NULL. */
static const char *
option_value(List *options, const char *name)
{
	ListCell   *lc;

	foreach(lc, options)
	{
		DefElem    *def = (DefElem *) lfirst(lc);

		if (strcmp(def->defname, name) == 0)
			return defGetString(def);
	}
	return NULL;
}

/* Whether keyword is one of libpq's connection options. */
static bool
libpq_keyword(const PQconninfoOption *known, const char *keyword)
{
	for (const PQconninfoOption *o = known; o->keyword != NULL; o++)
		if (strcmp(o->keyword, keyword) == 0)
			return true;
	return false;
}

/* Adds the libpq options of a list to keywords / values from *n on. */
static void
add_libpq_options(const PQconninfoOption *known, List *options, const char **keywords,
				  const char **values, int *n)
{
	ListCell   *lc;

	foreach(lc, options)
	{
		DefElem    *def = (DefElem *) lfirst(lc);

		if (!libpq_keyword(known, def->defname))
			continue;
		keywords[*n] = def->defname;
		values[*n] = defGetString(def);
		(*n)++;
	}
}

/*
 * Passes on a shard's NOTICE or WARNING (rows skipped for a NULL, a graph not cached) as this
 * backend's, the server named.
 */
static void
forward_notice(void *arg, const PGresult *result)
{
	const DistPart *part = (const DistPart *) arg;
	const char *severity = PQresultErrorField(result, PG_DIAG_SEVERITY_NONLOCALIZED);
	const char *message = PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY);
	const char *detail = PQresultErrorField(result, PG_DIAG_MESSAGE_DETAIL);

	if (message == NULL)
		return;
	ereport(severity != NULL && strcmp(severity, "WARNING") == 0 ? WARNING : NOTICE,
			(errmsg("shard server \"%s\": %s", part->server, message),
			 detail != NULL ? errdetail_internal("%s", detail) : 0));
}

/*
 * Connects to a foreign table's server as postgres_fdw does: the server's options and the user
 * mapping's (libpq's keywords only), this database's encoding; a user mapping of a user who is no
 * superuser must give a password, and the server must have asked for it, unless the mapping says
 * password_required 'false'.
 */
static PGconn *
connect_server(Oid relid, DistPart *part)
{
	ForeignTable *table = GetForeignTable(relid);
	ForeignServer *server = GetForeignServer(table->serverid);
	UserMapping *mapping = GetUserMapping(GetUserId(), server->serverid);
	const char *required = option_value(mapping->options, "password_required");
	bool		need_password = !superuser_arg(mapping->userid) &&
		(required == NULL || strcmp(required, "false") != 0);
	PQconninfoOption *known = PQconndefaults();
	int			max = list_length(server->options) + list_length(mapping->options) + 3;
	const char **keywords = palloc0(max * sizeof(char *));
	const char **values = palloc0(max * sizeof(char *));
	int			n = 0;
	PGconn	   *conn;

	if (known == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory reading libpq's connection options")));
	part->server = pstrdup(server->servername);
	add_libpq_options(known, server->options, keywords, values, &n);
	add_libpq_options(known, mapping->options, keywords, values, &n);
	PQconninfoFree(known);
	keywords[n] = "fallback_application_name";
	values[n++] = "powerrank";
	keywords[n] = "client_encoding";
	values[n++] = GetDatabaseEncodingName();
	keywords[n] = NULL;
	values[n] = NULL;
	if (need_password && option_value(mapping->options, "password") == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_S_R_E_PROHIBITED_SQL_STATEMENT_ATTEMPTED),
				 errmsg("the user mapping for server \"%s\" gives no password", part->server),
				 errdetail("A user who is not a superuser connects to a shard server with a password."),
				 errhint("Add a password to the user mapping, or set password_required 'false' in it (as a superuser).")));
	conn = PQconnectdbParams(keywords, values, false);
	if (conn == NULL || PQstatus(conn) != CONNECTION_OK)
	{
		char	   *message = pstrdup(conn != NULL ? PQerrorMessage(conn) : "out of memory");

		PQfinish(conn);
		ereport(ERROR,
				(errcode(ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION),
				 errmsg("could not connect to shard server \"%s\" of partition \"%s\"",
						part->server, part->partition),
				 errdetail_internal("%s", pchomp(message)),
				 errhint("Check the server's options and the user mapping, or rank on this server: SET powerrank.distributed = off.")));
	}
	PQsetNoticeReceiver(conn, forward_notice, part);
	if (need_password && !PQconnectionUsedPassword(conn))
	{
		PQfinish(conn);
		ereport(ERROR,
				(errcode(ERRCODE_S_R_E_PROHIBITED_SQL_STATEMENT_ATTEMPTED),
				 errmsg("shard server \"%s\" did not ask for the password", part->server),
				 errdetail("A user who is not a superuser connects to a shard server only when it authenticates by password."),
				 errhint("Make the shard server ask for a password, or set password_required 'false' in the user mapping (as a superuser).")));
	}
	return conn;
}

/*
 * The table and columns as the shard server names them: the foreign table's schema_name and
 * table_name options (default: its own names), each column's column_name option (default: the
 * column's name).
 */
static void
remote_spec(Oid relid, const EdgeTableSpec *spec, EdgeTableSpec *remote)
{
	ForeignTable *table = GetForeignTable(relid);
	const char *schema = option_value(table->options, "schema_name");
	const char *name = option_value(table->options, "table_name");
	const char *columns[3] = {spec->src_column, spec->dst_column, spec->weight_column};
	const char *remote_columns[3] = {NULL, NULL, NULL};

	if (schema == NULL)
		schema = get_namespace_name(get_rel_namespace(relid));
	if (name == NULL)
		name = get_rel_name(relid);
	remote->relation = cstring_to_text(quote_qualified_identifier(schema, name));
	for (int i = 0; i < 3; i++)
	{
		AttrNumber	attnum;
		const char *given;

		if (columns[i] == NULL)
			continue;
		attnum = get_attnum(relid, columns[i]);
		given = attnum != InvalidAttrNumber ?
			option_value(GetForeignColumnOptions(relid, attnum), "column_name") : NULL;
		remote_columns[i] = given != NULL ? given : columns[i];
	}
	remote->src_column = remote_columns[0];
	remote->dst_column = remote_columns[1];
	remote->weight_column = remote_columns[2];
}

/*
 * Raises the ERROR a shard answered (its SQLSTATE, message, detail and hint, the server named), or
 * the loss of its connection.
 */
static void
shard_failed(DistPart *part, PGresult *result)
{
	const char *sqlstate = result != NULL ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : NULL;
	const char *primary = result != NULL ?
		PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	const char *detail = result != NULL ? PQresultErrorField(result, PG_DIAG_MESSAGE_DETAIL) : NULL;
	const char *hint = result != NULL ? PQresultErrorField(result, PG_DIAG_MESSAGE_HINT) : NULL;
	char	   *message = pstrdup(primary != NULL ? primary : pchomp(PQerrorMessage(part->conn)));
	char	   *detail_copy = detail != NULL ? pstrdup(detail) : NULL;
	char	   *hint_copy = hint != NULL ? pstrdup(hint) : NULL;
	int			code = ERRCODE_CONNECTION_FAILURE;

	if (sqlstate != NULL && strlen(sqlstate) == 5)
		code = MAKE_SQLSTATE(sqlstate[0], sqlstate[1], sqlstate[2], sqlstate[3], sqlstate[4]);
	if (result != NULL)
		PQclear(result);
	part->busy = false;
	if (primary == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("lost the connection to shard server \"%s\" (partition \"%s\")",
						part->server, part->partition),
				 errdetail_internal("%s", message),
				 errhint("Check that the server is running, or rank on this server: SET powerrank.distributed = off.")));
	ereport(ERROR,
			(errcode(code),
			 errmsg("shard server \"%s\" (partition \"%s\"): %s", part->server, part->partition,
					message),
			 detail_copy != NULL ? errdetail_internal("%s", detail_copy) : 0,
			 hint_copy != NULL ? errhint("%s", hint_copy) : 0));
}

/* Sends a query (text parameters, or binary where formats says so) to a part's server. */
static void
send_query(DistPart *part, const char *query, int n_params, const char *const *values,
		   const int *lengths, const int *formats)
{
	if (!PQsendQueryParams(part->conn, query, n_params, NULL, values, lengths, formats, 1))
		shard_failed(part, NULL);
	part->busy = true;
}

/*
 * Waits for the answer of a busy part's server, one row of one column (binary), and returns it
 * (PQclear it).  A cancel of this backend cancels every busy shard and raises the cancel.
 */
static PGresult *
wait_result(DistCluster *c, DistPart *part)
{
	PGresult   *result = NULL;
	PGresult   *next;

	while (PQisBusy(part->conn))
	{
		int			events = WaitLatchOrSocket(MyLatch,
											   WL_LATCH_SET | WL_SOCKET_READABLE |
											   WL_EXIT_ON_PM_DEATH,
											   PQsocket(part->conn), -1L, PG_WAIT_EXTENSION);

		if (events & WL_LATCH_SET)
		{
			ResetLatch(MyLatch);
			if (powerrank_cancel_requested(NULL))
			{
				for (int p = 0; p < c->n_parts; p++)
					cancel_part(&c->parts[p]);
				CHECK_FOR_INTERRUPTS();
			}
		}
		if ((events & WL_SOCKET_READABLE) && !PQconsumeInput(part->conn))
			shard_failed(part, NULL);
	}
	while ((next = PQgetResult(part->conn)) != NULL)
	{
		if (result == NULL)
			result = next;
		else
			PQclear(next);
	}
	if (result == NULL || PQresultStatus(result) != PGRES_TUPLES_OK)
		shard_failed(part, result);
	part->busy = false;
	if (PQntuples(result) != 1 || PQnfields(result) != 1 || PQgetisnull(result, 0, 0))
	{
		PQclear(result);
		ereport(ERROR,
				(errcode(ERRCODE_PROTOCOL_VIOLATION),
				 errmsg("shard server \"%s\" answered no value", part->server)));
	}
	return result;
}

/*
 * Checks that a shard server has a powerrank that can be a shard and notes the schema its
 * functions are in.
 */
static void
check_shard_extension(DistCluster *c, DistPart *part)
{
	PGresult   *result;

	send_query(part,
			   "SELECT pg_catalog.quote_ident(n.nspname) || ' ' || e.extversion || ' ' || "
			   "(pg_catalog.to_regprocedure(pg_catalog.quote_ident(n.nspname) || "
			   "'.powerrank_shard_product(integer,bytea)') IS NOT NULL)::text "
			   "FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n "
			   "ON n.oid = e.extnamespace WHERE e.extname = 'powerrank' "
			   "UNION ALL SELECT '' LIMIT 1", 0, NULL, NULL, NULL);
	result = wait_result(c, part);
	{
		char	   *answer = pstrdup(PQgetvalue(result, 0, 0));
		char	   *version = strchr(answer, ' ');
		char	   *shard = version != NULL ? strchr(version + 1, ' ') : NULL;

		PQclear(result);
		if (version == NULL || shard == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("shard server \"%s\" (partition \"%s\") has no powerrank extension",
							part->server, part->partition),
					 errhint("Run CREATE EXTENSION powerrank in the database the server's options name, or rank on this server: SET powerrank.distributed = off.")));
		*version++ = '\0';
		*shard++ = '\0';
		if (strcmp(shard, "true") != 0)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("shard server \"%s\" (partition \"%s\") has powerrank %s, which cannot rank a partition",
							part->server, part->partition, version),
					 errhint("Run ALTER EXTENSION powerrank UPDATE on that server, or rank on this server: SET powerrank.distributed = off.")));
		part->schema = answer;
		part->product_query = psprintf("SELECT %s.powerrank_shard_product($1, $2)", answer);
	}
}

/* Sends a part's open (the table, its columns, whether out-edges are wanted). */
static void
send_open(DistPart *part, bool out_edges)
{
	const char *values[5] = {text_to_cstring(part->spec.relation), part->spec.src_column,
		part->spec.dst_column, part->spec.weight_column, out_edges ? "true" : "false"};

	send_query(part, psprintf("SELECT %s.powerrank_shard_open($1, $2, $3, $4, $5)", part->schema),
			   5, values, NULL, NULL);
}

/* Takes what a part's open reported (shard_open_write): its summary, nodes, out-strengths, roles. */
static void
take_open(DistCluster *c, DistPart *part, const char *bytes, size_t size)
{
	ShardSummary summary;

	if (size < sizeof(ShardSummary))
		summary.magic = 0;
	else
		memcpy(&summary, bytes, sizeof(ShardSummary));
	if (summary.magic != SHARD_MAGIC || summary.protocol != SHARD_PROTOCOL ||
		summary.n_nodes < 0 ||
		size != sizeof(ShardSummary) + (size_t) summary.n_nodes * (2 * sizeof(int64) + 1))
		ereport(ERROR,
				(errcode(ERRCODE_PROTOCOL_VIOLATION),
				 errmsg("shard server \"%s\" (partition \"%s\") answered an open this server cannot read",
						part->server, part->partition),
				 errdetail("Shards and coordinator need the same powerrank version (shard protocol %d) on machines of the same byte order.",
						   SHARD_PROTOCOL),
				 errhint("Install the same powerrank version on every server.")));
	part->n_nodes = summary.n_nodes;
	part->n_edges = summary.n_edges;
	part->cache_hit = summary.cache_hit != 0;
	part->node_ids = MemoryContextAllocHuge(c->cxt, Max(part->n_nodes, 1) * sizeof(int64));
	part->out_strength = MemoryContextAllocHuge(c->cxt, Max(part->n_nodes, 1) * sizeof(double));
	part->roles = MemoryContextAllocHuge(c->cxt, Max(part->n_nodes, 1));
	if (part->n_nodes > 0)
	{
		bytes += sizeof(ShardSummary);
		memcpy(part->node_ids, bytes, part->n_nodes * sizeof(int64));
		memcpy(part->out_strength, bytes + part->n_nodes * sizeof(int64),
			   part->n_nodes * sizeof(double));
		memcpy(part->roles, bytes + part->n_nodes * 2 * sizeof(int64), part->n_nodes);
	}
	for (int64 i = 1; i < part->n_nodes; i++)
		if (part->node_ids[i] <= part->node_ids[i - 1])
			ereport(ERROR,
					(errcode(ERRCODE_PROTOCOL_VIOLATION),
					 errmsg("shard server \"%s\" (partition \"%s\") reported nodes out of order",
							part->server, part->partition),
					 errhint("Install the same powerrank version on every server.")));
	for (uint8 role = SHARD_ROLE_SOURCE; role <= SHARD_ROLE_TARGET; role++)
	{
		part->rows[role] = MemoryContextAllocHuge(c->cxt, Max(part->n_nodes, 1) * sizeof(int32));
		part->row_count[role] = shard_role_rows(part->roles, part->n_nodes, role,
												part->rows[role]);
	}
}

/*
 * Merges two ascending lists of distinct ids a[na] and b[nb] into out (ascending, each id once);
 * returns the count.
 */
static int64
merge_ids(const int64 *a, int64 na, const int64 *b, int64 nb, int64 *out)
{
	int64		i = 0,
				j = 0,
				n = 0;

	while (i < na && j < nb)
	{
		if (a[i] < b[j])
			out[n++] = a[i++];
		else if (b[j] < a[i])
			out[n++] = b[j++];
		else
		{
			out[n++] = a[i++];
			j++;
		}
	}
	while (i < na)
		out[n++] = a[i++];
	while (j < nb)
		out[n++] = b[j++];
	return n;
}

/*
 * The whole graph the driver sees: the union of the parts' nodes (ascending external ids: the
 * parts' ascending lists merged one after the other), each node's out-strength summed over the
 * parts, the dangling nodes, and no edge; each part's map of its nodes to the whole graph's ids.
 */
static void
merge_parts(DistCluster *c)
{
	PrGraph    *g = &c->graph;
	int64		total = 0,
				n = 0;
	int64	   *ids,
			   *spare;

	for (int p = 0; p < c->n_parts; p++)
		total += c->parts[p].n_nodes;
	ids = MemoryContextAllocHuge(c->cxt, Max(total, 1) * sizeof(int64));
	spare = MemoryContextAllocHuge(c->cxt, Max(total, 1) * sizeof(int64));
	for (int p = 0; p < c->n_parts; p++)
	{
		int64	   *swap = ids;

		n = merge_ids(ids, n, c->parts[p].node_ids, c->parts[p].n_nodes, spare);
		ids = spare;
		spare = swap;
	}
	pfree(spare);
	if (n > PR_MAX_NODES)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the partitions have %lld nodes together, more than %lld",
						(long long) n, (long long) PR_MAX_NODES)));
	memset(g, 0, sizeof(PrGraph));
	g->n_nodes = n;
	g->node_ids = ids;
	g->in_ptr = MemoryContextAllocExtended(c->cxt, (n + 1) * sizeof(int64),
											 MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	g->out_strength = MemoryContextAllocExtended(c->cxt, Max(n, 1) * sizeof(double),
											 MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	for (int p = 0; p < c->n_parts; p++)
	{
		DistPart   *part = &c->parts[p];
		PrGraph		nodes = {0};

		/* every node of the part is in the union: the map has no -1 */
		nodes.n_nodes = part->n_nodes;
		nodes.node_ids = part->node_ids;
		part->to_global = MemoryContextAllocHuge(c->cxt, Max(part->n_nodes, 1) * sizeof(int32));
		pr_graph_node_map(&nodes, g, part->to_global);
		for (int64 i = 0; i < part->n_nodes; i++)
			g->out_strength[part->to_global[i]] += part->out_strength[i];
		c->n_edges += part->n_edges;
	}
	g->dangling = MemoryContextAllocHuge(c->cxt, Max(n, 1) * sizeof(int32));
	for (int64 v = 0; v < n; v++)
		if (g->out_strength[v] == 0.0)
			g->dangling[g->n_dangling++] = (int32) v;
}

/*
 * Opens the parts of a partitioned table (distributed_wanted said yes): checks this user's
 * privileges on the partitioned table, connects to every shard server, checks its powerrank,
 * opens every part (the shards in parallel, the local partitions meanwhile) with out-edges when
 * the push product is wanted, and fills *graph with the whole graph the driver runs on (its
 * arrays in cxt, like the parts).  The connections close when cxt goes.
 */
DistCluster *
distributed_open(const EdgeTableSpec *spec, bool out_edges, MemoryContext cxt, PrGraph *graph)
{
	EdgeScanTarget target;
	DistCluster *c = MemoryContextAllocZero(cxt, sizeof(DistCluster));
	MemoryContext old_cxt = MemoryContextSwitchTo(cxt);
	List	   *leaves;
	ListCell   *lc;
	int			p = 0;
	double		t_start = pr_clock_seconds(),
				t_connected,
				t_opened;

	c->cxt = cxt;
	c->cleanup.func = close_parts;
	c->cleanup.arg = c;
	MemoryContextRegisterResetCallback(cxt, &c->cleanup);

	/* the caller's privileges on the partitioned table and its columns, as a read checks them */
	graph_scan_resolve(spec, &target);
	leaves = find_all_inheritors(target.relid, AccessShareLock, NULL);
	graph_scan_end(&target);
	c->parts = palloc0(list_length(leaves) * sizeof(DistPart));
	foreach(lc, leaves)
	{
		Oid			leaf = lfirst_oid(lc);
		char		relkind = get_rel_relkind(leaf);
		DistPart   *part = &c->parts[p];

		if (relkind != RELKIND_RELATION && relkind != RELKIND_FOREIGN_TABLE)
			continue;
		part->partition = quote_qualified_identifier(get_namespace_name(get_rel_namespace(leaf)),
													 get_rel_name(leaf));
		if (relkind == RELKIND_FOREIGN_TABLE)
		{
			remote_spec(leaf, spec, &part->spec);
			part->conn = connect_server(leaf, part);
		}
		else
		{
			part->spec = *spec;
			part->spec.relation = cstring_to_text(part->partition);
		}
		c->n_parts = ++p;
	}
	for (p = 0; p < c->n_parts; p++)
		if (c->parts[p].conn != NULL)
			check_shard_extension(c, &c->parts[p]);
	t_connected = pr_clock_seconds();
	for (p = 0; p < c->n_parts; p++)
		if (c->parts[p].conn != NULL)
			send_open(&c->parts[p], out_edges);
	for (p = 0; p < c->n_parts; p++)
	{
		DistPart   *part = &c->parts[p];

		if (part->conn == NULL)
		{
			Size		size;
			char	   *bytes;

			part->local = shard_state_open(cxt, &part->spec, out_edges);
			size = shard_open_size(part->local);
			bytes = palloc_extended(size, MCXT_ALLOC_HUGE);
			shard_open_write(part->local, bytes);
			take_open(c, part, bytes, size);
			pfree(bytes);
		}
	}
	for (p = 0; p < c->n_parts; p++)
	{
		DistPart   *part = &c->parts[p];

		if (part->conn != NULL)
		{
			PGresult   *result = wait_result(c, part);

			take_open(c, part, PQgetvalue(result, 0, 0), PQgetlength(result, 0, 0));
			c->exchange_bytes += PQgetlength(result, 0, 0);
			PQclear(result);
		}
	}
	t_opened = pr_clock_seconds();
	merge_parts(c);
	MemoryContextSwitchTo(old_cxt);
	/* where a distributed call's build goes, for whoever looks (client_min_messages = debug1) */
	elog(DEBUG1, "powerrank: %d parts, %lld nodes, %lld edges: connections and checks %.1f ms, opens %.1f ms, merge %.1f ms",
		 c->n_parts, (long long) c->graph.n_nodes, (long long) c->n_edges,
		 (t_connected - t_start) * 1000.0, (t_opened - t_connected) * 1000.0,
		 (pr_clock_seconds() - t_opened) * 1000.0);
	*graph = c->graph;
	return c;
}

/* The edges of every part together. */
int64
distributed_edges(const DistCluster *cluster)
{
	return cluster->n_edges;
}

/* Whether every part's graph came from its server's graph cache. */
bool
distributed_cache_hit(const DistCluster *cluster)
{
	for (int p = 0; p < cluster->n_parts; p++)
		if (!cluster->parts[p].cache_hit)
			return false;
	return true;
}

/* Bytes sent to and received from the shards, and the seconds the products took. */
void
distributed_exchange(const DistCluster *cluster, int64 *bytes, double *seconds)
{
	*bytes = cluster->exchange_bytes;
	*seconds = cluster->exchange_seconds;
}

/*
 * Prepares every part for k columns and the products in needs (once per k and needs): each gets
 * the whole graph's out-strengths of its nodes.
 */
static void
prepare_parts(DistCluster *c, int k, unsigned needs)
{
	if (c->k == k && c->needs == needs)
		return;
	for (int p = 0; p < c->n_parts; p++)
		if (c->parts[p].n_nodes * (int64) k > (int64) (MaxAllocSize / sizeof(double)))
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("partition \"%s\" has %lld nodes: %d columns of them exceed what one message carries",
							c->parts[p].partition, (long long) c->parts[p].n_nodes, k),
					 errhint("Rank fewer sources at once, or spread the table over more partitions.")));
	for (int p = 0; p < c->n_parts; p++)
	{
		DistPart   *part = &c->parts[p];
		double	   *out = MemoryContextAllocHuge(c->cxt, Max(part->n_nodes, 1) * sizeof(double));

		for (int64 i = 0; i < part->n_nodes; i++)
			out[i] = c->graph.out_strength[part->to_global[i]];
		if (part->x != NULL)
		{
			pfree(part->x);
			pfree(part->y);
		}
		part->x = MemoryContextAllocHuge(c->cxt, Max(part->n_nodes * k, 1) * sizeof(double));
		part->y = MemoryContextAllocHuge(c->cxt, Max(part->n_nodes * k, 1) * sizeof(double));
		if (part->conn == NULL)
			shard_state_prepare(part->local, out, k, needs);
		else
		{
			const char *values[3] = {(const char *) out, psprintf("%d", k), psprintf("%u", needs)};
			int			lengths[3] = {(int) (part->n_nodes * sizeof(double)), 0, 0};
			int			formats[3] = {1, 0, 0};

			send_query(part, psprintf("SELECT %s.powerrank_shard_prepare($1, $2, $3)::text",
									  part->schema), 3, values, lengths, formats);
			c->exchange_bytes += lengths[0];
		}
	}
	for (int p = 0; p < c->n_parts; p++)
		if (c->parts[p].conn != NULL)
			PQclear(wait_result(c, &c->parts[p]));
	c->k = k;
	c->needs = needs;
}

/*
 * y = product(x), both n x k over the whole graph: each part gets x on the rows its product reads
 * (the sources of its edges; the push product: the targets), multiplies over its edges, and the
 * rows it gives are added into y (a row whose in-edges lie in one part gets that part's sum,
 * exactly; the other parts give it nothing).
 */
static void
relay_product(DistCluster *c, PrProduct product, const double *x, double *y)
{
	int			k = c->k;
	double		started = pr_clock_seconds();
	char		product_text[16];
	uint8		in_role = shard_product_role(product, true);
	uint8		out_role = shard_product_role(product, false);

	snprintf(product_text, sizeof(product_text), "%d", (int) product);
	for (int p = 0; p < c->n_parts; p++)
	{
		DistPart   *part = &c->parts[p];
		const int32 *rows = part->rows[in_role];

		for (int64 i = 0; i < part->row_count[in_role]; i++)
			memcpy(part->x + i * k, x + (int64) part->to_global[rows[i]] * k, k * sizeof(double));
		if (part->conn != NULL)
		{
			const char *values[2] = {product_text, (const char *) part->x};
			int			lengths[2] = {0, (int) (part->row_count[in_role] * k * sizeof(double))};
			int			formats[2] = {0, 1};

			send_query(part, part->product_query, 2, values, lengths, formats);
			c->exchange_bytes += lengths[1];
		}
	}
	for (int p = 0; p < c->n_parts; p++)
		if (c->parts[p].conn == NULL)
			shard_state_product(c->parts[p].local, product, c->parts[p].x, c->parts[p].y);
	memset(y, 0, c->graph.n_nodes * k * sizeof(double));
	for (int p = 0; p < c->n_parts; p++)
	{
		DistPart   *part = &c->parts[p];
		const double *part_y = part->y;
		const int32 *out_rows = part->rows[out_role];
		PGresult   *result = NULL;

		if (part->conn != NULL)
		{
			result = wait_result(c, part);
			if (PQgetlength(result, 0, 0) !=
				(int) (part->row_count[out_role] * k * sizeof(double)))
			{
				PQclear(result);
				ereport(ERROR,
						(errcode(ERRCODE_PROTOCOL_VIOLATION),
						 errmsg("shard server \"%s\" answered a product of the wrong size",
								part->server)));
			}
			memcpy(part->y, PQgetvalue(result, 0, 0),
				   part->row_count[out_role] * k * sizeof(double));
			c->exchange_bytes += PQgetlength(result, 0, 0);
			PQclear(result);
		}
		for (int64 i = 0; i < part->row_count[out_role]; i++)
		{
			double	   *row = y + (int64) part->to_global[out_rows[i]] * k;

			for (int j = 0; j < k; j++)
				row[j] += part_y[i * k + j];
		}
	}
	c->exchange_seconds += pr_clock_seconds() - started;
}

/* The distributed engine: the CPU engine of this backend for the vectors, the parts' products. */
typedef struct DistEngine
{
	PrEngine	base;
	PrEngineOps ops;
	char		name[32];
	PrEngine   *vectors;		/* the CPU engine over the whole graph (no edge) */
	DistCluster *cluster;
	PrAllocator alloc;
	double	   *x;				/* [n * k] */
	double	   *y;
	size_t		values;
} DistEngine;

#define VECTORS(base) (((DistEngine *) (base))->vectors)

/* Prepares the vectors' engine and the parts. */
static PrStatus
dist_prepare(PrEngine *base, const PrGraph *g, int k, int n_slots, unsigned needs, PrError *err)
{
	DistEngine *e = (DistEngine *) base;
	size_t		values = (size_t) g->n_nodes * (size_t) k;
	PrStatus	status = VECTORS(base)->ops->prepare(VECTORS(base), g, k, n_slots, needs, err);

	if (status != PR_OK)
		return status;
	if (values > e->values)
	{
		pr_free(&e->alloc, e->x);
		pr_free(&e->alloc, e->y);
		e->values = 0;
		e->x = (double *) pr_alloc_array(&e->alloc, values, sizeof(double));
		e->y = (double *) pr_alloc_array(&e->alloc, values, sizeof(double));
		if (e->x == NULL || e->y == NULL)
			return pr_error_set(err, PR_ERR_NOMEM, "out of memory for %zu values", values);
		e->values = values;
	}
	prepare_parts(e->cluster, k, needs);
	return PR_OK;
}

/* y_slot = product(x_slot): x downloaded, the product relayed to the parts, y uploaded. */
static PrStatus
dist_product(PrEngine *base, PrProduct product, int x_slot, int y_slot, PrError *err)
{
	DistEngine *e = (DistEngine *) base;
	PrStatus	status = e->vectors->ops->download(e->vectors, x_slot, e->x, err);

	if (status != PR_OK)
		return status;
	relay_product(e->cluster, product, e->x, e->y);
	return e->vectors->ops->upload(e->vectors, y_slot, e->y, err);
}

/* The operations that run on the vectors' engine alone. */
static PrStatus
dist_fill(PrEngine *base, int slot, double value, PrError *err)
{
	return VECTORS(base)->ops->fill(VECTORS(base), slot, value, err);
}

static PrStatus
dist_upload(PrEngine *base, int slot, const double *host, PrError *err)
{
	return VECTORS(base)->ops->upload(VECTORS(base), slot, host, err);
}

static PrStatus
dist_download(PrEngine *base, int slot, double *host, PrError *err)
{
	return VECTORS(base)->ops->download(VECTORS(base), slot, host, err);
}

static PrStatus
dist_pagerank_update(PrEngine *base, int y_slot, int x_slot, double alpha,
					 const PrRestart *restart, PrError *err)
{
	return VECTORS(base)->ops->pagerank_update(VECTORS(base), y_slot, x_slot, alpha, restart,
											   err);
}

static PrStatus
dist_normalize(PrEngine *base, int slot, int old_slot, PrError *err)
{
	return VECTORS(base)->ops->normalize(VECTORS(base), slot, old_slot, err);
}

static PrStatus
dist_residual(PrEngine *base, PrResidual *out, PrError *err)
{
	return VECTORS(base)->ops->residual(VECTORS(base), out, err);
}

static PrStatus
dist_top_k(PrEngine *base, int slot, int col, int64_t top_k, int32_t *index, double *value,
		   PrError *err)
{
	return VECTORS(base)->ops->top_k(VECTORS(base), slot, col, top_k, index, value, err);
}

static PrStatus
dist_top_k_columns(PrEngine *base, int slot, int64_t top_k, int32_t *index, double *value,
				   PrError *err)
{
	return VECTORS(base)->ops->top_k_columns(VECTORS(base), slot, top_k, index, value, err);
}

static PrStatus
dist_restart_fill(PrEngine *base, int slot, const PrRestart *restart, PrError *err)
{
	return VECTORS(base)->ops->restart_fill(VECTORS(base), slot, restart, err);
}

static PrStatus
dist_column_sums(PrEngine *base, int slot, double *sums, double *dangling, PrError *err)
{
	return VECTORS(base)->ops->column_sums(VECTORS(base), slot, sums, dangling, err);
}

static PrStatus
dist_combine(PrEngine *base, int out_slot, int n_terms, const int *slots, const double *coef,
			 PrError *err)
{
	return VECTORS(base)->ops->combine(VECTORS(base), out_slot, n_terms, slots, coef, err);
}

static PrStatus
dist_dots(PrEngine *base, int a_slot, int n_terms, const int *slots, double *out, PrError *err)
{
	return VECTORS(base)->ops->dots(VECTORS(base), a_slot, n_terms, slots, out, err);
}

static PrStatus
dist_far_field(PrEngine *base, int slot, bool keep, bool *found, PrError *err)
{
	return VECTORS(base)->ops->far_field(VECTORS(base), slot, keep, found, err);
}

/* Releases the vectors' engine and the buffers (the parts stay with the run). */
static void
dist_release(PrEngine *base)
{
	DistEngine *e = (DistEngine *) base;
	PrAllocator alloc = e->alloc;

	e->vectors->ops->release(e->vectors);
	pr_free(&alloc, e->x);
	pr_free(&alloc, e->y);
	pr_free(&alloc, e);
}

/*
 * The engine the driver runs on for a distributed run: named "distributed(S)" for S parts; every
 * operation of the CPU engine but restart_local (it multiplies inside one engine: the driver then
 * takes the general warm start through products).
 */
PrEngine *
distributed_engine_create(DistCluster *cluster, const PrAllocator *alloc, PrError *err)
{
	PrEngine   *vectors = pr_cpu_engine_create(powerrank_cpu_threads, alloc, err);
	DistEngine *e;

	if (vectors == NULL)
		return NULL;
	e = (DistEngine *) pr_alloc_array(alloc, 1, sizeof(DistEngine));
	if (e == NULL)
	{
		vectors->ops->release(vectors);
		pr_error_set(err, PR_ERR_NOMEM, "out of memory creating the distributed engine");
		return NULL;
	}
	memset(e, 0, sizeof(DistEngine));
	e->alloc = *alloc;
	e->vectors = vectors;
	e->cluster = cluster;
	snprintf(e->name, sizeof(e->name), "distributed(%d)", cluster->n_parts);
	e->ops = *vectors->ops;
	e->ops.name = e->name;
	e->ops.prepare = dist_prepare;
	e->ops.product = dist_product;
	e->ops.restart_local = NULL;
	e->ops.release = dist_release;
#define FORWARD_IF_OFFERED(op) \
	e->ops.op = vectors->ops->op != NULL ? dist_##op : NULL
	FORWARD_IF_OFFERED(fill);
	FORWARD_IF_OFFERED(upload);
	FORWARD_IF_OFFERED(download);
	FORWARD_IF_OFFERED(pagerank_update);
	FORWARD_IF_OFFERED(normalize);
	FORWARD_IF_OFFERED(residual);
	FORWARD_IF_OFFERED(top_k);
	FORWARD_IF_OFFERED(top_k_columns);
	FORWARD_IF_OFFERED(restart_fill);
	FORWARD_IF_OFFERED(column_sums);
	FORWARD_IF_OFFERED(combine);
	FORWARD_IF_OFFERED(dots);
	FORWARD_IF_OFFERED(far_field);
#undef FORWARD_IF_OFFERED
	e->base.ops = &e->ops;
	return &e->base;
}
