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
 * relayed: this backend sends each part x over the sources of its edges, each part multiplies
 * over its own edges, and the parts' results on their targets are added into y.  Every other
 * operation of the driver runs on the CPU engine of this backend over the whole vectors, so the
 * top-k is ranked here exactly.
 *
 * A run that ends well leaves its parts of tracked tables to the session (KeptPart: the
 * connection, whose shard session keeps its part, and the node ids taken from it) and its merged
 * node set (MergedNodes).  The next run over the same partitions takes them again: a shard whose
 * table's content is the one its part was read as answers the open without node ids, the merge is
 * the kept one while every part's graph is, and a part prepared with this node set's out-strengths
 * is not prepared again.  A part of a table whose content changed is read again (never a stale
 * graph: shard.c), and its new node ids make a new merge.
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
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rls.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "cache/graph_cache.h"
#include "distributed/distributed.h"
#include "distributed/shard.h"
#include "graph/graph_scan.h"
#include "pr_topk.h"

int			powerrank_distributed = DISTRIBUTED_AUTO;
int			powerrank_distributed_min_rows = 100000;
int			powerrank_distributed_exchange = DISTRIBUTED_EXCHANGE_AUTO;

static const struct config_enum_entry distributed_options[] = {
	{"auto", DISTRIBUTED_AUTO, false},
	{"on", DISTRIBUTED_ON, false},
	{"off", DISTRIBUTED_OFF, false},
	{NULL, 0, false}
};

static const struct config_enum_entry exchange_options[] = {
	{"auto", DISTRIBUTED_EXCHANGE_AUTO, false},
	{"relay", DISTRIBUTED_EXCHANGE_RELAY, false},
	{NULL, 0, false}
};

/* Defines powerrank.distributed, powerrank.distributed_min_rows and powerrank.distributed_exchange. */
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
	DefineCustomEnumVariable("powerrank.distributed_exchange",
							 "How a distributed run's shards get the vector rows they read from other shards: auto (from each other, through Gloo over TCP, where they connect; else through this server) or relay (always through this server).",
							 NULL,
							 &powerrank_distributed_exchange,
							 DISTRIBUTED_EXCHANGE_AUTO, exchange_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);
}

/*
 * A part kept for the session: the connection to a shard server (whose session keeps the part:
 * shard.c) or a local partition's part in this backend, with what this backend took from the
 * part's last open.  A run takes the kept part of its partition (same user, same connection
 * options) and gives it back when it ends well and the part can serve again (its table is
 * tracked: never a local partition); a run that fails drops the parts it took.
 */
typedef struct KeptPart
{
	struct KeptPart *next;
	MemoryContext cxt;			/* its own, under TopMemoryContext */
	MemoryContext graph_cxt;	/* the arrays of the part's graph below */
	Oid			relid;			/* the partition */
	Oid			userid;			/* the user it is read for */
	char	   *conninfo;		/* the connection's options, "keyword=value\n" each; NULL: local */
	PGconn	   *conn;
	ShardState *local;
	bool		in_use;			/* a run holds it */
	uint64		part_id;		/* the part number its last open reported (0: none) */
	ShardContent content;		/* the graph its last open reported, whose nodes are below */
	uint64		version;		/* this backend's number for the graph below (0: none) */
	int64		n_nodes;
	int64		n_edges;
	int64	   *node_ids;		/* [n_nodes] external ids, ascending; NULL when taken from a
								 * shared node set (only a merge needs them: the part is
								 * opened again for one); then rows below are the set's, read
								 * in place during a run (read_shared_set) */
	double	   *out_strength;	/* [n_nodes] of the part's own rows (NULL with node_ids) */
	int32	   *rows[3];		/* rows[role]: the local nodes with that role (shard_role_rows) */
	int64		row_count[3];
	int			prepared_k;		/* what its engine was last prepared for (0: not prepared) */
	unsigned	prepared_needs;
	uint64		prepared_nodes; /* the merged node set whose out-strengths it got */
	uint64		peers_nodes;	/* the merged node set whose group of shards its session holds,
								 * connected (0: none; connect_peers) */
} KeptPart;

/*
 * Which part owns each node of a merged node set (plan_owners): the part of its in-edges (with
 * HASH (dst), one part holds every in-edge of a node), and a node without in-edges the first part
 * in which it is a source.  Each part's local nodes carry owner bits (shard.h: owned, exported to
 * other parts, or a halo row owned elsewhere) and the lists derived from them.  rows_owned is
 * false when some node has in-edges in two parts (a table partitioned on another key): then no
 * part owns rows and every product is relayed whole.
 */
typedef struct OwnerPlan
{
	bool		rows_owned;
	int32	   *owner;			/* [n] the part owning each node */
	uint8	  **bits;			/* [n_parts][part's n_nodes] owner bits */
	int32	 **rows[SHARD_ROWS_LISTS];	/* [list][n_parts] the part's rows of the list */
	int64	   *count[SHARD_ROWS_LISTS];	/* [list][n_parts] */
} OwnerPlan;

/*
 * The whole graph's nodes merged from the parts' node sets (merge_parts), kept for the session
 * while no run holds it: the next run whose parts are the same graphs (kept parts, versions)
 * takes it again.
 */
typedef struct MergedNodes
{
	MemoryContext cxt;
	uint64		id;				/* unique in this backend */
	bool		in_use;
	int			n_parts;
	KeptPart  **parts;			/* [n_parts] */
	uint64	   *versions;		/* [n_parts] the parts' graphs it was merged from */
	int32	  **to_global;		/* [n_parts][part's n_nodes] the whole graph's id of each node */
	PrGraph		graph;			/* every node, its out-strength, no edge */
	OwnerPlan  *owners;			/* which part owns each node (plan_owners; NULL: not made) */
	bool		from_shared;	/* its arrays (ids, out-strengths, dangling, to_global, the owner
								 * plan's) are a shared node set's, read in place during a run and
								 * gone between runs (read_shared_set, forget_shared_set) */
	const char **strengths;		/* [n_parts] with from_shared: each part's prepare message of
								 * out-strengths (shard_strengths_write), the set's */
	int64	   *strengths_size; /* [n_parts] */
	double	   *far_field;		/* [n] the warm start's far-field vector of these graphs, once a
								 * run made it (dist_far_field), or NULL */
} MergedNodes;

static OwnerPlan *plan_owners(const DistCluster *c, MergedNodes *m);
static void plan_lists(const DistCluster *c, MergedNodes *m, OwnerPlan *plan);

/* One part in a run. */
typedef struct DistPart
{
	const char *partition;		/* the partition's name here, for messages */
	const char *server;			/* the foreign server's name, NULL for a local partition */
	KeptPart   *kept;
	PGconn	   *conn;			/* kept->conn */
	const char *schema;			/* the shard's powerrank schema, quoted */
	const char *product_query;	/* the query of a product on it */
	bool		busy;			/* a request is out and its result not read */
	EdgeTableSpec spec;			/* the table as its server names it */
	bool		cache_hit;		/* its graph came from its server's graph cache (or session) */
	bool		reusable;		/* its part can serve a later run (ShardSummary.reusable) */
	ShardContent asked;			/* the graph its open named (number 0: none) */
	bool		from_shared;	/* it answered the graph of the shared node set: its nodes
								 * come from there */
	bool		open_again;		/* it answered a graph of the number asked on another cluster
								 * or postmaster: to open again, naming none */
	int64		reported_nodes; /* its open's node count */
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
	MergedNodes *nodes;
	PrGraph		graph;			/* nodes->graph */
	int64		n_edges;		/* the parts' edges together */
	int			k;				/* columns the parts are prepared for (0: none) */
	unsigned	needs;
	bool		ended_well;		/* distributed_keep_parts: the parts go back to the session */
	int64		exchange_bytes;	/* sent to and received from the shards by this backend */
	int64		peer_bytes;		/* sent by the shards to each other */
	double		exchange_seconds;
	OwnerPlan  *owners;			/* nodes->owners, once the parts are prepared */
	double	   *exported;		/* [n * k] the exported rows' values of a slot (others left) */
	int			exported_slot;	/* that slot (-1: none): its next product's halos are there */
	bool		mixing;			/* a combination ran on the parts (owned_combine) */
	bool		peers_tried;	/* connect_peers ran */
	bool		peers;			/* the shards exchange halos with each other (connect_peers) */
	dsm_segment *shared_set;	/* the shared node set the run reads in place, its mapping
								 * pinned until the run ends (NULL: none) */
};

static void forget_shared_set(DistCluster *c);

static void forward_notice(void *arg, const PGresult *result);
static void connect_peers(DistCluster *c);
static char *send_peer_lists(DistCluster *c, char ***address, int32 **address_size, char **lists,
							 const Size *lists_size);

/* The parts and merged node set this session keeps; numbers for graphs and node sets. */
static KeptPart *kept_parts = NULL;
static MergedNodes *kept_nodes = NULL;
static uint64 last_version = 0;
static bool kept_exit_registered = false;

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

/* Frees a kept part: closes its connection (the shard's session frees its part), or its local part. */
static void
drop_kept_part(KeptPart *kept)
{
	for (KeptPart **link = &kept_parts; *link != NULL; link = &(*link)->next)
		if (*link == kept)
		{
			*link = kept->next;
			break;
		}
	if (kept->conn != NULL)
		PQfinish(kept->conn);
	kept->conn = NULL;
	shard_state_close(kept->local);
	MemoryContextDelete(kept->cxt);
}

/* Closes the kept connections when this backend exits (the shards' sessions end with them). */
static void
close_kept_parts(int code, Datum arg)
{
	for (KeptPart *kept = kept_parts; kept != NULL; kept = kept->next)
		if (kept->conn != NULL)
		{
			PQfinish(kept->conn);
			kept->conn = NULL;
		}
}

/*
 * The end of a run (its memory context goes): the busy shards are cancelled; a run that ended well
 * gives back to the session its parts that can serve a later run (their tables are tracked, their
 * connections idle), and its node set when every part stays; the other parts, and all of a run
 * that failed, are dropped (their connections closed, which frees the shards' parts).
 */
static void
end_run(void *arg)
{
	DistCluster *c = (DistCluster *) arg;
	bool		all_kept = c->ended_well;

	forget_shared_set(c);
	for (int p = 0; p < c->n_parts; p++)
		cancel_part(&c->parts[p]);
	for (int p = 0; p < c->n_parts; p++)
	{
		KeptPart   *kept = c->parts[p].kept;

		if (kept == NULL)
		{
			all_kept = false;
			continue;
		}
		if (c->ended_well && c->parts[p].reusable &&
			(kept->conn == NULL || (PQstatus(kept->conn) == CONNECTION_OK &&
									PQtransactionStatus(kept->conn) == PQTRANS_IDLE)))
		{
			if (kept->conn != NULL)
				PQsetNoticeReceiver(kept->conn, forward_notice, NULL);
			kept->in_use = false;
		}
		else
		{
			drop_kept_part(kept);
			all_kept = false;
		}
		c->parts[p].kept = NULL;
		c->parts[p].conn = NULL;
	}
	if (c->nodes != NULL && c->nodes == kept_nodes)
	{
		kept_nodes->in_use = false;
		if (!all_kept)
		{
			/* merged from a part that is gone: it cannot serve again */
			MemoryContextDelete(kept_nodes->cxt);
			kept_nodes = NULL;
		}
	}
	c->nodes = NULL;
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

	if (message == NULL || part == NULL)
		return;
	ereport(severity != NULL && strcmp(severity, "WARNING") == 0 ? WARNING : NOTICE,
			(errmsg("shard server \"%s\": %s", part->server, message),
			 detail != NULL ? errdetail_internal("%s", detail) : 0));
}

/* How to connect to a foreign table's server (connection_options). */
typedef struct ServerConnection
{
	const char **keywords;
	const char **values;
	bool		need_password;	/* the server must authenticate by password */
	int			connect_timeout;	/* seconds a connect may take (libpq's connect_timeout; 0: no
									 * limit) */
	char	   *conninfo;		/* the options, "keyword=value\n" each, and the password rule */
} ServerConnection;

/*
 * The connect_timeout among a server's options as libpq reads it: whole seconds, none or below 1
 * no limit, 1 taken as 2.
 */
static int
connect_timeout_seconds(const ServerConnection *how)
{
	int			seconds = 0;

	for (int i = 0; how->keywords[i] != NULL; i++)
		if (strcmp(how->keywords[i], "connect_timeout") == 0)
			seconds = atoi(how->values[i]);
	return seconds <= 0 ? 0 : Max(seconds, 2);
}

/*
 * The options to connect to a foreign table's server as postgres_fdw does: the server's options
 * and the user mapping's (libpq's keywords only), this database's encoding.  A user mapping of a
 * user who is no superuser must give a password (the server must then ask for it: connect_done),
 * unless the mapping says password_required 'false'.
 */
static void
connection_options(Oid relid, DistPart *part, ServerConnection *how)
{
	ForeignTable *table = GetForeignTable(relid);
	ForeignServer *server = GetForeignServer(table->serverid);
	UserMapping *mapping = GetUserMapping(GetUserId(), server->serverid);
	const char *required = option_value(mapping->options, "password_required");
	PQconninfoOption *known = PQconndefaults();
	int			max = list_length(server->options) + list_length(mapping->options) + 3;
	StringInfoData conninfo;
	int			n = 0;

	if (known == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory reading libpq's connection options")));
	how->need_password = !superuser_arg(mapping->userid) &&
		(required == NULL || strcmp(required, "false") != 0);
	how->keywords = palloc0(max * sizeof(char *));
	how->values = palloc0(max * sizeof(char *));
	part->server = pstrdup(server->servername);
	add_libpq_options(known, server->options, how->keywords, how->values, &n);
	add_libpq_options(known, mapping->options, how->keywords, how->values, &n);
	PQconninfoFree(known);
	how->keywords[n] = "fallback_application_name";
	how->values[n++] = "powerrank";
	how->keywords[n] = "client_encoding";
	how->values[n++] = GetDatabaseEncodingName();
	how->keywords[n] = NULL;
	how->values[n] = NULL;
	initStringInfo(&conninfo);
	for (int i = 0; i < n; i++)
		appendStringInfo(&conninfo, "%s=%s\n", how->keywords[i], how->values[i]);
	/* a kept connection serves only where the password rule is the one it was made under */
	appendStringInfo(&conninfo, "need_password=%d\n", how->need_password ? 1 : 0);
	how->conninfo = conninfo.data;
	how->connect_timeout = connect_timeout_seconds(how);
	if (how->need_password && option_value(mapping->options, "password") == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_S_R_E_PROHIBITED_SQL_STATEMENT_ATTEMPTED),
				 errmsg("the user mapping for server \"%s\" gives no password", part->server),
				 errdetail("A user who is not a superuser connects to a shard server with a password."),
				 errhint("Add a password to the user mapping, or set password_required 'false' in it (as a superuser).")));
}

/*
 * Raises the ERROR of a part whose connection could not be made, libpq's message (or message,
 * when not NULL) the detail; the connection is closed first.
 */
static void
connect_failed(DistPart *part, const char *message)
{
	KeptPart   *kept = part->kept;
	char	   *detail = pstrdup(message != NULL ? message :
								 kept->conn != NULL ? PQerrorMessage(kept->conn) : "out of memory");

	PQfinish(kept->conn);
	kept->conn = NULL;
	part->conn = NULL;
	ereport(ERROR,
			(errcode(ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION),
			 errmsg("could not connect to shard server \"%s\" of partition \"%s\"",
					part->server, part->partition),
			 errdetail_internal("%s", pchomp(detail)),
			 errhint("Check the server's options and the user mapping, or rank on this server: SET powerrank.distributed = off.")));
}

/*
 * Starts a part's connection to its server with the options connection_options gave (again, when
 * its kept connection is gone: what the shard's session held is forgotten with the old
 * connection); connect_parts completes it.
 */
static void
start_connect(DistPart *part, const ServerConnection *how)
{
	KeptPart   *kept = part->kept;

	if (kept->conn != NULL)
		PQfinish(kept->conn);
	kept->part_id = 0;
	kept->version = 0;
	kept->prepared_k = 0;
	kept->peers_nodes = 0;
	memset(&kept->content, 0, sizeof(ShardContent));
	kept->conn = PQconnectStartParams(how->keywords, how->values, false);
	part->conn = kept->conn;
	if (kept->conn == NULL || PQstatus(kept->conn) == CONNECTION_BAD)
		connect_failed(part, NULL);
	PQsetNoticeReceiver(part->conn, forward_notice, part);
}

/*
 * Checks a part's connection just made: a user who must authenticate by password
 * (connection_options) keeps it only when the server asked for the password.
 */
static void
connect_done(DistPart *part, const ServerConnection *how)
{
	if (how->need_password && !PQconnectionUsedPassword(part->conn))
	{
		PQfinish(part->conn);
		part->kept->conn = NULL;
		part->conn = NULL;
		ereport(ERROR,
				(errcode(ERRCODE_S_R_E_PROHIBITED_SQL_STATEMENT_ATTEMPTED),
				 errmsg("shard server \"%s\" did not ask for the password", part->server),
				 errdetail("A user who is not a superuser connects to a shard server only when it authenticates by password."),
				 errhint("Make the shard server ask for a password, or set password_required 'false' in the user mapping (as a superuser).")));
	}
}

/*
 * Connects the parts marked in which to their servers at once: every connection is started, then
 * each one's steps (libpq's PQconnectPoll) run as its socket is ready, one wait covering every
 * socket and this backend's latch, so a cancel or statement_timeout stops the connects at once.
 * A server's connect_timeout bounds its connect.  The first connection that fails raises its
 * ERROR (the run's end closes the others).
 */
static void
connect_parts(DistCluster *c, const ServerConnection *how, const bool *which)
{
	PostgresPollingStatusType *polling = palloc(c->n_parts * sizeof(PostgresPollingStatusType));
	TimestampTz *deadline = palloc0(c->n_parts * sizeof(TimestampTz));
	WaitEvent  *events = palloc((c->n_parts + 2) * sizeof(WaitEvent));
	int			pending = 0;

	for (int p = 0; p < c->n_parts; p++)
	{
		polling[p] = PGRES_POLLING_OK;
		if (!which[p])
			continue;
		start_connect(&c->parts[p], &how[p]);
		/* a connection just started waits to write, as libpq says */
		polling[p] = PGRES_POLLING_WRITING;
		if (how[p].connect_timeout > 0)
			deadline[p] = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
													   how[p].connect_timeout * 1000);
		pending++;
	}
	while (pending > 0)
	{
		WaitEventSet *set = CreateWaitEventSet(CurrentMemoryContext, pending + 2);
		TimestampTz now = GetCurrentTimestamp();
		long		timeout = -1;
		int			n;

		AddWaitEventToSet(set, WL_LATCH_SET, PGINVALID_SOCKET, MyLatch, NULL);
		AddWaitEventToSet(set, WL_EXIT_ON_PM_DEATH, PGINVALID_SOCKET, NULL, NULL);
		for (int p = 0; p < c->n_parts; p++)
		{
			long		left;

			if (polling[p] == PGRES_POLLING_OK)
				continue;
			AddWaitEventToSet(set, polling[p] == PGRES_POLLING_READING ?
							  WL_SOCKET_READABLE : WL_SOCKET_WRITEABLE,
							  PQsocket(c->parts[p].conn), NULL, &c->parts[p]);
			if (deadline[p] == 0)
				continue;
			left = TimestampDifferenceMilliseconds(now, deadline[p]);
			timeout = timeout < 0 ? left : Min(timeout, left);
		}
		n = WaitEventSetWait(set, timeout, events, pending + 2, PG_WAIT_EXTENSION);
		FreeWaitEventSet(set);
		for (int i = 0; i < n; i++)
			if (events[i].events & WL_LATCH_SET)
				ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		for (int i = 0; i < n; i++)
		{
			DistPart   *part = (DistPart *) events[i].user_data;
			int			p;

			if (part == NULL)
				continue;
			p = part - c->parts;
			polling[p] = PQconnectPoll(part->conn);
			if (polling[p] == PGRES_POLLING_FAILED)
				connect_failed(part, NULL);
			if (polling[p] == PGRES_POLLING_OK)
			{
				connect_done(part, &how[p]);
				pending--;
			}
		}
		now = GetCurrentTimestamp();
		for (int p = 0; p < c->n_parts; p++)
			if (polling[p] != PGRES_POLLING_OK && deadline[p] != 0 && now >= deadline[p])
				connect_failed(&c->parts[p], "timeout expired");
	}
	pfree(events);
	pfree(deadline);
	pfree(polling);
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
 * Waits until a busy part's answer is in (false: its connection was lost).  A cancel of this
 * backend cancels every busy shard and raises the cancel.
 */
static bool
answer_in(DistCluster *c, DistPart *part)
{
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
			return false;
	}
	return true;
}

/* The first result of a part's answer that is in (the others cleared), or NULL. */
static PGresult *
take_result(DistPart *part)
{
	PGresult   *result = NULL;
	PGresult   *next;

	while ((next = PQgetResult(part->conn)) != NULL)
	{
		if (result == NULL)
			result = next;
		else
			PQclear(next);
	}
	return result;
}

/*
 * Waits for the answer of a busy part's server, one row of one column (binary), and returns it
 * (PQclear it).  A cancel of this backend cancels every busy shard and raises the cancel.  When
 * lost is not NULL, a connection found closed sets *lost and returns NULL instead of the ERROR.
 */
static PGresult *
wait_answer(DistCluster *c, DistPart *part, bool *lost)
{
	PGresult   *result;

	if (!answer_in(c, part))
	{
		if (lost != NULL)
		{
			part->busy = false;
			*lost = true;
			return NULL;
		}
		shard_failed(part, NULL);
	}
	result = take_result(part);
	if (result == NULL || PQresultStatus(result) != PGRES_TUPLES_OK)
	{
		if (lost != NULL && PQstatus(part->conn) == CONNECTION_BAD)
		{
			if (result != NULL)
				PQclear(result);
			part->busy = false;
			*lost = true;
			return NULL;
		}
		shard_failed(part, result);
	}
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

/* wait_answer raising the loss of the connection as an ERROR. */
static PGresult *
wait_result(DistCluster *c, DistPart *part)
{
	return wait_answer(c, part, NULL);
}

/*
 * The query that checks a shard server's powerrank: its schema, version, and whether it has the
 * shard functions of this protocol.
 */
#define CHECK_SHARD_QUERY \
	"SELECT pg_catalog.quote_ident(n.nspname) || ' ' || e.extversion || ' ' || " \
	"(pg_catalog.to_regprocedure(pg_catalog.quote_ident(n.nspname) || " \
	"'.powerrank_shard_product(integer,bytea)') IS NOT NULL AND " \
	"pg_catalog.to_regprocedure(pg_catalog.quote_ident(n.nspname) || " \
	"'.powerrank_shard_open(text,name,name,name,boolean,bigint)') IS NOT NULL AND " \
	"pg_catalog.to_regprocedure(pg_catalog.quote_ident(n.nspname) || " \
	"'.powerrank_shard_peers_connect(bytea,bytea)') IS NOT NULL AND " \
	"pg_catalog.to_regprocedure(pg_catalog.quote_ident(n.nspname) || " \
	"'.powerrank_shard_step(integer,integer,double precision,bytea,bytea)') IS NOT NULL)::text " \
	"FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n " \
	"ON n.oid = e.extnamespace WHERE e.extname = 'powerrank' " \
	"UNION ALL SELECT '' LIMIT 1"

/*
 * Takes a shard's answer to CHECK_SHARD_QUERY: its powerrank must be one that can be a shard; the
 * query of its products is noted.
 */
static void
take_check(DistPart *part, PGresult *result)
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

/*
 * Connects the foreign parts that have no kept connection (all at once: connect_parts) and checks
 * that every shard server has a powerrank that can be a shard, every check sent before any answer
 * is waited for.  A kept connection found closed (the shard restarted, its session ended) is made
 * again once, those again at once.
 */
static void
connect_and_check(DistCluster *c, const ServerConnection *how)
{
	bool	   *fresh = palloc0(c->n_parts * sizeof(bool));
	bool	   *lost = palloc0(c->n_parts * sizeof(bool));
	bool		any_lost = false;

	for (int p = 0; p < c->n_parts; p++)
		fresh[p] = c->parts[p].server != NULL && c->parts[p].conn == NULL;
	connect_parts(c, how, fresh);
	for (int p = 0; p < c->n_parts; p++)
	{
		DistPart   *part = &c->parts[p];

		if (part->conn == NULL)
			continue;
		if (fresh[p])
			send_query(part, CHECK_SHARD_QUERY, 0, NULL, NULL, NULL);
		else if (PQstatus(part->conn) == CONNECTION_OK &&
				 PQsendQueryParams(part->conn, CHECK_SHARD_QUERY, 0, NULL, NULL, NULL, NULL, 1))
			part->busy = true;
		else
			lost[p] = true;
	}
	for (int p = 0; p < c->n_parts; p++)
	{
		DistPart   *part = &c->parts[p];
		PGresult   *result;

		if (!part->busy)
			continue;
		result = wait_answer(c, part, fresh[p] ? NULL : &lost[p]);
		if (result != NULL)
			take_check(part, result);
	}
	for (int p = 0; p < c->n_parts; p++)
		if (lost[p])
		{
			elog(DEBUG1, "powerrank: the kept connection to server \"%s\" is closed: connecting again",
				 c->parts[p].server);
			any_lost = true;
		}
	if (!any_lost)
		return;
	connect_parts(c, how, lost);
	for (int p = 0; p < c->n_parts; p++)
		if (lost[p])
			send_query(&c->parts[p], CHECK_SHARD_QUERY, 0, NULL, NULL, NULL);
	for (int p = 0; p < c->n_parts; p++)
		if (lost[p])
			take_check(&c->parts[p], wait_result(c, &c->parts[p]));
}

/*
 * Sends a part's open (the table, its columns, whether out-edges are wanted, and the number of
 * the graph whose node ids this backend holds: asked, NULL for none).
 */
static void
send_open(DistPart *part, bool out_edges, const ShardContent *asked)
{
	char		known[32];
	const char *values[6] = {text_to_cstring(part->spec.relation), part->spec.src_column,
		part->spec.dst_column, part->spec.weight_column, out_edges ? "true" : "false", known};

	if (asked != NULL)
		part->asked = *asked;
	else
		memset(&part->asked, 0, sizeof(ShardContent));
	snprintf(known, sizeof(known), UINT64_FORMAT, part->asked.number);
	send_query(part, psprintf("SELECT %s.powerrank_shard_open($1, $2, $3, $4, $5, $6)",
							  part->schema),
			   6, values, NULL, NULL);
}

/* Refuses a part's open whose bytes this backend cannot read. */
static void
open_unreadable(DistPart *part)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROTOCOL_VIOLATION),
			 errmsg("shard server \"%s\" (partition \"%s\") answered an open this server cannot read",
					part->server, part->partition),
			 errdetail("Shards and coordinator need the same powerrank version (shard protocol %d) on machines of the same byte order.",
					   SHARD_PROTOCOL),
			 errhint("Install the same powerrank version on every server.")));
}

/*
 * Takes what a part's open reported (shard_open_write): its summary, and, unless its graph is the
 * one the open named (same), its nodes, out-strengths and roles: a new version of its graph.  A
 * graph the open named is the session's (its kept part's), or the shared node set's (from_shared:
 * taken from there), or — a graph of that number on another cluster or postmaster — to be opened
 * again (open_again).
 */
static void
take_open(DistPart *part, const char *bytes, size_t size)
{
	KeptPart   *kept = part->kept;
	ShardSummary summary;
	uint8	   *roles;
	bool		valid;

	if (size < sizeof(ShardSummary))
		summary.magic = 0;
	else
		memcpy(&summary, bytes, sizeof(ShardSummary));
	valid = summary.magic == SHARD_MAGIC && summary.protocol == SHARD_PROTOCOL &&
		summary.n_nodes >= 0;
	if (valid && summary.same)
		valid = size == sizeof(ShardSummary) && part->asked.number != 0 &&
			summary.content.number == part->asked.number;
	else if (valid)
		valid = summary.n_nodes <= (int64) size;	/* two bytes a node at least */
	if (!valid)
		open_unreadable(part);
	part->cache_hit = summary.cache_hit != 0;
	part->reusable = summary.reusable != 0;
	part->reported_nodes = summary.n_nodes;
	if (summary.same)
	{
		if (memcmp(&summary.content, &part->asked, sizeof(ShardContent)) != 0)
			part->open_again = true;
		else if (kept->version != 0 &&
				 memcmp(&kept->content, &part->asked, sizeof(ShardContent)) == 0)
		{
			if (summary.n_nodes != kept->n_nodes)
				open_unreadable(part);
		}
		else
			part->from_shared = true;
		/* the same graph in another part of the shard's session: prepared again */
		if (summary.part_id != kept->part_id)
			kept->prepared_k = 0;
		kept->part_id = summary.part_id;
		return;
	}

	/* a new graph: the version goes first, so an ERROR below leaves no version to trust */
	kept->version = 0;
	kept->prepared_k = 0;
	MemoryContextReset(kept->graph_cxt);
	kept->n_nodes = summary.n_nodes;
	kept->n_edges = summary.n_edges;
	kept->node_ids = MemoryContextAllocHuge(kept->graph_cxt, Max(kept->n_nodes, 1) * sizeof(int64));
	kept->out_strength = MemoryContextAllocHuge(kept->graph_cxt,
												Max(kept->n_nodes, 1) * sizeof(double));
	roles = MemoryContextAllocHuge(kept->graph_cxt, Max(kept->n_nodes, 1));
	if (!shard_open_read(bytes + sizeof(ShardSummary), size - sizeof(ShardSummary), kept->n_nodes,
						 kept->node_ids, roles, kept->out_strength))
		open_unreadable(part);
	for (uint8 role = SHARD_ROLE_SOURCE; role <= SHARD_ROLE_TARGET; role++)
	{
		kept->rows[role] = MemoryContextAllocHuge(kept->graph_cxt,
												  Max(kept->n_nodes, 1) * sizeof(int32));
		kept->row_count[role] = shard_role_rows(roles, kept->n_nodes, role, kept->rows[role]);
	}
	pfree(roles);
	kept->part_id = summary.part_id;
	kept->content = summary.content;
	kept->version = ++last_version;
}

/*
 * Merges the parts' node sets (ascending lists of external ids) into the whole graph's: every id
 * once, ascending (one pass over all lists, the least head taken each step), each part's map of
 * its nodes to the whole graph's ids, each node's out-strength summed over the parts (in the
 * parts' order), the dangling nodes, and no edge.
 */
static void
merge_parts(DistCluster *c, MergedNodes *m)
{
	PrGraph    *g = &m->graph;
	int64		total = 0,
				n = 0;
	int64	   *cursor = palloc0(c->n_parts * sizeof(int64));
	int64	   *ids;

	for (int p = 0; p < c->n_parts; p++)
	{
		KeptPart   *kept = c->parts[p].kept;

		total += kept->n_nodes;
		m->to_global[p] = MemoryContextAllocHuge(m->cxt, Max(kept->n_nodes, 1) * sizeof(int32));
	}
	ids = MemoryContextAllocHuge(m->cxt, Max(total, 1) * sizeof(int64));
	for (;;)
	{
		int64		least = 0;
		bool		any = false;

		for (int p = 0; p < c->n_parts; p++)
		{
			KeptPart   *kept = c->parts[p].kept;

			if (cursor[p] < kept->n_nodes && (!any || kept->node_ids[cursor[p]] < least))
			{
				least = kept->node_ids[cursor[p]];
				any = true;
			}
		}
		if (!any)
			break;
		if (n >= PR_MAX_NODES)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("the partitions have more than %lld nodes together",
							(long long) PR_MAX_NODES)));
		for (int p = 0; p < c->n_parts; p++)
		{
			KeptPart   *kept = c->parts[p].kept;

			if (cursor[p] < kept->n_nodes && kept->node_ids[cursor[p]] == least)
				m->to_global[p][cursor[p]++] = (int32) n;
		}
		ids[n++] = least;
	}
	pfree(cursor);
	memset(g, 0, sizeof(PrGraph));
	g->n_nodes = n;
	g->node_ids = ids;
	g->in_ptr = MemoryContextAllocExtended(m->cxt, (n + 1) * sizeof(int64),
										   MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	g->out_strength = MemoryContextAllocExtended(m->cxt, Max(n, 1) * sizeof(double),
												 MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	for (int p = 0; p < c->n_parts; p++)
	{
		KeptPart   *kept = c->parts[p].kept;

		for (int64 i = 0; i < kept->n_nodes; i++)
			g->out_strength[m->to_global[p][i]] += kept->out_strength[i];
	}
	g->dangling = MemoryContextAllocHuge(m->cxt, Max(n, 1) * sizeof(int32));
	for (int64 v = 0; v < n; v++)
		if (g->out_strength[v] == 0.0)
			g->dangling[g->n_dangling++] = (int32) v;
}

/* Most partitions of a table whose merged node set the graph cache keeps. */
#define SHARED_NODE_SET_PARTS 64

/*
 * The head of a node set kept in the graph cache (an entry of kind GRAPH_CACHE_NODE_SET) for the
 * sessions to come: the partitions it is of, the graphs of the parts it was merged from (each
 * part's ShardContent, numbers that last), and the counts of the arrays that follow it
 * (place_shared_nodes).
 */
typedef struct SharedNodesHeader
{
	int32		n_parts;
	int64		n_nodes;		/* of the whole graph */
	int64		n_dangling;
	int32		plan;			/* the owner plan kept with it: SHARED_PLAN_* */
	Oid			partitions[SHARED_NODE_SET_PARTS];	/* in the order of the run's parts */
	ShardContent contents[SHARED_NODE_SET_PARTS];
	struct
	{
		int64		n_nodes;
		int64		n_edges;
		int64		row_count[3];
		int64		list_count[SHARD_ROWS_LISTS];	/* its owner plan's lists
													 * (SHARED_PLAN_OWNED) */
		int64		strengths_size; /* its prepare's out-strengths, as they travel */
	}			parts[SHARED_NODE_SET_PARTS];
} SharedNodesHeader;

/* What a shared node set keeps of its owner plan (OwnerPlan). */
#define SHARED_PLAN_NONE 0			/* nothing */
#define SHARED_PLAN_NOT_OWNED 1		/* no part owns rows (rows_owned false): the owners alone */
#define SHARED_PLAN_OWNED 2			/* the owners, every part's owner bits and their lists */

/* Where the arrays of a shared node set lie, from the segment's start. */
typedef struct SharedNodesPlaces
{
	Size		ids;			/* [n_nodes] the whole graph's external ids */
	Size		out_strength;	/* [n_nodes] */
	Size		dangling;		/* [n_dangling] */
	Size		owner;			/* [n_nodes] the owner plan's part of each node (plan) */
	struct
	{
		Size		rows[3];	/* [row_count[role]] */
		Size		to_global;	/* [part's n_nodes] */
		Size		bits;		/* [part's n_nodes] its owner bits (SHARED_PLAN_OWNED) */
		Size		lists[SHARD_ROWS_LISTS];	/* [list_count[list]] (SHARED_PLAN_OWNED) */
		Size		strengths;	/* [strengths_size] the whole graph's out-strengths of its nodes
								 * (shard_strengths_write) */
	}			parts[SHARED_NODE_SET_PARTS];
	Size		total;
} SharedNodesPlaces;

/* Takes bytes at *at (8-byte aligned) and returns where they start. */
static Size
place(Size *at, Size bytes)
{
	Size		here = *at;

	*at += MAXALIGN(bytes);
	return here;
}

/* Lays out the arrays of a shared node set of header's counts. */
static void
place_shared_nodes(const SharedNodesHeader *h, SharedNodesPlaces *at)
{
	Size		next = MAXALIGN(sizeof(SharedNodesHeader));

	at->ids = place(&next, h->n_nodes * sizeof(int64));
	at->out_strength = place(&next, h->n_nodes * sizeof(double));
	at->dangling = place(&next, h->n_dangling * sizeof(int32));
	at->owner = place(&next, h->plan != SHARED_PLAN_NONE ? h->n_nodes * sizeof(int32) : 0);
	for (int p = 0; p < h->n_parts; p++)
	{
		int64		n = h->parts[p].n_nodes;

		for (int role = SHARD_ROLE_SOURCE; role <= SHARD_ROLE_TARGET; role++)
			at->parts[p].rows[role] = place(&next, h->parts[p].row_count[role] * sizeof(int32));
		at->parts[p].to_global = place(&next, n * sizeof(int32));
		at->parts[p].bits = place(&next, h->plan == SHARED_PLAN_OWNED ? n : 0);
		for (int list = 0; list < SHARD_ROWS_LISTS; list++)
			at->parts[p].lists[list] = place(&next, h->plan == SHARED_PLAN_OWNED ?
											 h->parts[p].list_count[list] * sizeof(int32) : 0);
		at->parts[p].strengths = place(&next, h->parts[p].strengths_size);
	}
	at->total = next;
}

/*
 * The graph cache's key of the run's node set over the partitioned table target; false when it
 * is not one to keep (a local partition, too many parts) or the cache is off.
 */
static bool
shared_nodes_key(const DistCluster *c, const EdgeScanTarget *target, GraphCacheKey *key)
{
	if (c->n_parts > SHARED_NODE_SET_PARTS)
		return false;
	for (int p = 0; p < c->n_parts; p++)
		if (c->parts[p].conn == NULL)
			return false;		/* a local partition is read every call */
	return graph_cache_node_set_key(target, key);
}

/*
 * The header of a shared node set (mapped) when it is of the run's partitions, in their order,
 * and its arrays fit in the segment, else NULL.
 */
static const SharedNodesHeader *
shared_header(const DistCluster *c, dsm_segment *segment)
{
	const SharedNodesHeader *h;
	SharedNodesPlaces *at;
	bool		fits;

	if (segment == NULL || dsm_segment_map_length(segment) < sizeof(SharedNodesHeader))
		return NULL;
	h = (const SharedNodesHeader *) dsm_segment_address(segment);
	if (h->n_parts != c->n_parts)
		return NULL;
	for (int p = 0; p < c->n_parts; p++)
		if (h->partitions[p] != c->parts[p].kept->relid)
			return NULL;
	at = palloc(sizeof(SharedNodesPlaces));
	place_shared_nodes(h, at);
	fits = at->total <= dsm_segment_map_length(segment);
	pfree(at);
	return fits ? h : NULL;
}

/*
 * Takes a part's graph from a shared node set (the part's open answered its graph there, part p):
 * a new version of its graph, as take_open's, without its node ids and out-strengths (the set's
 * merged node set serves instead; a merge opens the part again for them), its role lists the
 * set's (read in place during each run: read_shared_set).
 */
static void
take_shared_part(DistPart *part, int p, dsm_segment *segment)
{
	const SharedNodesHeader *h = (const SharedNodesHeader *) dsm_segment_address(segment);
	KeptPart   *kept = part->kept;
	int64		n = h->parts[p].n_nodes;

	if (n != part->reported_nodes)
		open_unreadable(part);
	kept->version = 0;
	kept->prepared_k = 0;
	MemoryContextReset(kept->graph_cxt);
	kept->n_nodes = n;
	kept->n_edges = h->parts[p].n_edges;
	kept->node_ids = NULL;
	kept->out_strength = NULL;
	for (int role = SHARD_ROLE_SOURCE; role <= SHARD_ROLE_TARGET; role++)
	{
		kept->rows[role] = NULL;
		kept->row_count[role] = h->parts[p].row_count[role];
	}
	kept->content = h->contents[p];
	kept->version = ++last_version;
}

/*
 * Whether a shared node set (header h) was merged from the graphs the run's parts hold now: then
 * the whole graph's nodes are taken from there.
 */
static bool
shared_nodes_fit(const DistCluster *c, const SharedNodesHeader *h)
{
	if (h == NULL)
		return false;
	for (int p = 0; p < c->n_parts; p++)
		if (memcmp(&c->parts[p].kept->content, &h->contents[p], sizeof(ShardContent)) != 0 ||
			c->parts[p].kept->n_nodes != h->parts[p].n_nodes)
			return false;
	return true;
}

/*
 * Points m's arrays, its owner plan's and the role lists of the parts taken from the set into a
 * shared node set (h, mapped for the run: c->shared_set) that fits the run (shared_nodes_fit): a
 * session's node set taken from a set reads it in place, in every run that takes it.
 */
static void
read_shared_set(DistCluster *c, MergedNodes *m, const SharedNodesHeader *h)
{
	const char *base = (const char *) h;
	SharedNodesPlaces *at = palloc(sizeof(SharedNodesPlaces));
	PrGraph    *g = &m->graph;
	OwnerPlan  *plan = m->owners;

	place_shared_nodes(h, at);
	g->node_ids = (int64 *) (base + at->ids);
	g->out_strength = (double *) (base + at->out_strength);
	g->dangling = (int32 *) (base + at->dangling);
	for (int p = 0; p < c->n_parts; p++)
	{
		KeptPart   *kept = c->parts[p].kept;

		m->to_global[p] = (int32 *) (base + at->parts[p].to_global);
		m->strengths[p] = base + at->parts[p].strengths;
		m->strengths_size[p] = h->parts[p].strengths_size;
		if (kept->node_ids == NULL)
			for (int role = SHARD_ROLE_SOURCE; role <= SHARD_ROLE_TARGET; role++)
				kept->rows[role] = (int32 *) (base + at->parts[p].rows[role]);
	}
	if (plan != NULL)
	{
		plan->owner = (int32 *) (base + at->owner);
		for (int p = 0; plan->rows_owned && p < c->n_parts; p++)
		{
			plan->bits[p] = (uint8 *) (base + at->parts[p].bits);
			for (int list = 0; list < SHARD_ROWS_LISTS; list++)
			{
				plan->rows[list][p] = (int32 *) (base + at->parts[p].lists[list]);
				plan->count[list][p] = h->parts[p].list_count[list];
			}
		}
	}
	pfree(at);
}

/*
 * The end of a run that read a shared node set in place: the pointers into it are cleared (a
 * session's node set taken from it is pointed there again by the next run that takes it) and its
 * mapping is given back, so the set can be evicted or replaced.
 */
static void
forget_shared_set(DistCluster *c)
{
	MergedNodes *m = c->nodes;

	if (c->shared_set == NULL)
		return;
	if (m != NULL && m->from_shared)
	{
		m->graph.node_ids = NULL;
		m->graph.out_strength = NULL;
		m->graph.dangling = NULL;
		for (int p = 0; p < c->n_parts; p++)
		{
			m->to_global[p] = NULL;
			m->strengths[p] = NULL;
		}
		if (m->owners != NULL)
		{
			m->owners->owner = NULL;
			for (int p = 0; m->owners->rows_owned && p < c->n_parts; p++)
			{
				m->owners->bits[p] = NULL;
				for (int list = 0; list < SHARD_ROWS_LISTS; list++)
					m->owners->rows[list][p] = NULL;
			}
		}
	}
	for (int p = 0; p < c->n_parts; p++)
	{
		KeptPart   *kept = c->parts[p].kept;

		if (kept != NULL && kept->node_ids == NULL)
			for (int role = SHARD_ROLE_SOURCE; role <= SHARD_ROLE_TARGET; role++)
				kept->rows[role] = NULL;
	}
	c->graph.node_ids = NULL;
	c->graph.out_strength = NULL;
	c->graph.dangling = NULL;
	graph_cache_release(&c->shared_set);
}

/*
 * The whole graph's nodes of m taken from a shared node set that fits the run (shared_nodes_fit),
 * with its owner plan: m's own arrays are the counts and the edge-less rows, the rest is read in
 * place (read_shared_set).
 */
static void
take_shared_nodes(DistCluster *c, MergedNodes *m, const SharedNodesHeader *h)
{
	PrGraph    *g = &m->graph;
	int64		n = h->n_nodes;

	memset(g, 0, sizeof(PrGraph));
	g->n_nodes = n;
	g->n_dangling = h->n_dangling;
	g->in_ptr = MemoryContextAllocExtended(m->cxt, (n + 1) * sizeof(int64),
										   MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	if (h->plan != SHARED_PLAN_NONE)
	{
		OwnerPlan  *plan = MemoryContextAllocZero(m->cxt, sizeof(OwnerPlan));

		plan->rows_owned = h->plan == SHARED_PLAN_OWNED;
		if (plan->rows_owned)
		{
			plan->bits = MemoryContextAllocZero(m->cxt, c->n_parts * sizeof(uint8 *));
			for (int list = 0; list < SHARD_ROWS_LISTS; list++)
			{
				plan->rows[list] = MemoryContextAllocZero(m->cxt, c->n_parts * sizeof(int32 *));
				plan->count[list] = MemoryContextAllocZero(m->cxt, c->n_parts * sizeof(int64));
			}
		}
		m->owners = plan;
	}
	m->strengths = MemoryContextAllocZero(m->cxt, c->n_parts * sizeof(char *));
	m->strengths_size = MemoryContextAllocZero(m->cxt, c->n_parts * sizeof(int64));
	m->from_shared = true;
	read_shared_set(c, m, h);
}

/*
 * The whole graph's out-strengths of part p's nodes (n_nodes of them) in node set m, as the part's
 * prepare sends them (shard_strengths_write), in a new buffer; *size their bytes.
 */
static char *
part_strengths(const MergedNodes *m, int p, int64 n_nodes, Size *size)
{
	double	   *out = powerrank_alloc_huge(CurrentMemoryContext, Max(n_nodes, 1) * sizeof(double));
	char	   *bytes = palloc_extended(shard_strengths_bound(n_nodes), MCXT_ALLOC_HUGE);

	for (int64 i = 0; i < n_nodes; i++)
		out[i] = m->graph.out_strength[m->to_global[p][i]];
	*size = shard_strengths_write(out, n_nodes, bytes);
	pfree(out);
	return bytes;
}

/*
 * Keeps a node set just merged (m) in the graph cache under key for the sessions to come, in place
 * of the set kept there before, when every part's graph has a number that lasts (a shard's cached
 * graph: ShardContent); a set that cannot be had or kept is only this session's.
 */
static void
keep_shared_nodes(const DistCluster *c, MergedNodes *m, const GraphCacheKey *key)
{
	SharedNodesHeader h;
	SharedNodesPlaces *at;
	dsm_segment *segment;
	char	   *base;
	const OwnerPlan *plan;
	char	  **strengths;

	for (int p = 0; p < c->n_parts; p++)
		if (!shard_content_lasts(&c->parts[p].kept->content))
			return;
	/* the owner plan goes with the set: a session that takes the set need not make it */
	plan = plan_owners(c, m);
	memset(&h, 0, sizeof(SharedNodesHeader));
	h.n_parts = c->n_parts;
	h.n_nodes = m->graph.n_nodes;
	h.n_dangling = m->graph.n_dangling;
	h.plan = plan->rows_owned ? SHARED_PLAN_OWNED : SHARED_PLAN_NOT_OWNED;
	for (int p = 0; p < c->n_parts; p++)
	{
		const KeptPart *kept = c->parts[p].kept;

		h.partitions[p] = kept->relid;
		h.contents[p] = kept->content;
		h.parts[p].n_nodes = kept->n_nodes;
		h.parts[p].n_edges = kept->n_edges;
		for (int role = SHARD_ROLE_SOURCE; role <= SHARD_ROLE_TARGET; role++)
			h.parts[p].row_count[role] = kept->row_count[role];
		for (int list = 0; plan->rows_owned && list < SHARD_ROWS_LISTS; list++)
			h.parts[p].list_count[list] = plan->count[list][p];
	}
	/* the parts' prepare messages go with it too: a session that takes the set sends them as kept */
	strengths = palloc(c->n_parts * sizeof(char *));
	for (int p = 0; p < c->n_parts; p++)
	{
		Size		size;

		strengths[p] = part_strengths(m, p, h.parts[p].n_nodes, &size);
		h.parts[p].strengths_size = size;
	}
	at = palloc(sizeof(SharedNodesPlaces));
	place_shared_nodes(&h, at);
	segment = dsm_create(at->total, DSM_CREATE_NULL_IF_MAXSEGMENTS);
	if (segment == NULL)
	{
		for (int p = 0; p < c->n_parts; p++)
			pfree(strengths[p]);
		pfree(strengths);
		pfree(at);
		return;
	}
	base = dsm_segment_address(segment);
	memcpy(base, &h, sizeof(SharedNodesHeader));
	memcpy(base + at->ids, m->graph.node_ids, h.n_nodes * sizeof(int64));
	memcpy(base + at->out_strength, m->graph.out_strength, h.n_nodes * sizeof(double));
	memcpy(base + at->dangling, m->graph.dangling, h.n_dangling * sizeof(int32));
	memcpy(base + at->owner, plan->owner, h.n_nodes * sizeof(int32));
	for (int p = 0; p < c->n_parts; p++)
	{
		const KeptPart *kept = c->parts[p].kept;

		for (int role = SHARD_ROLE_SOURCE; role <= SHARD_ROLE_TARGET; role++)
			memcpy(base + at->parts[p].rows[role], kept->rows[role],
				   kept->row_count[role] * sizeof(int32));
		memcpy(base + at->parts[p].to_global, m->to_global[p], kept->n_nodes * sizeof(int32));
		if (plan->rows_owned)
			memcpy(base + at->parts[p].bits, plan->bits[p], kept->n_nodes);
		for (int list = 0; plan->rows_owned && list < SHARD_ROWS_LISTS; list++)
			memcpy(base + at->parts[p].lists[list], plan->rows[list][p],
				   plan->count[list][p] * sizeof(int32));
		memcpy(base + at->parts[p].strengths, strengths[p], h.parts[p].strengths_size);
		pfree(strengths[p]);
	}
	pfree(strengths);
	if (!graph_cache_publish_node_set(key, segment, h.n_nodes, c->n_edges))
		elog(DEBUG1, "powerrank: the merged node set of %d parts is not kept in the graph cache",
			 c->n_parts);
	dsm_detach(segment);
	pfree(at);
}

/*
 * Opens again, naming no graph, the parts marked open_again (their nodes travel), and takes what
 * they answer.
 */
static void
open_parts_again(DistCluster *c, bool out_edges)
{
	for (int p = 0; p < c->n_parts; p++)
		if (c->parts[p].open_again)
			send_open(&c->parts[p], out_edges, NULL);
	for (int p = 0; p < c->n_parts; p++)
	{
		DistPart   *part = &c->parts[p];

		if (part->open_again)
		{
			PGresult   *result = wait_result(c, part);

			part->open_again = false;
			take_open(part, PQgetvalue(result, 0, 0), PQgetlength(result, 0, 0));
			c->exchange_bytes += PQgetlength(result, 0, 0);
			PQclear(result);
			if (part->open_again)
				open_unreadable(part);
		}
	}
}

/*
 * A node set of the run's parts in a new context under parent: the shared one (h, may be NULL)
 * when it was merged from the parts' graphs (*shared set), else merged (merge_parts).
 */
static MergedNodes *
new_merged_nodes(DistCluster *c, MemoryContext parent, const SharedNodesHeader *h, bool *shared)
{
	MemoryContext cxt = AllocSetContextCreate(parent, "powerrank merged nodes",
											  ALLOCSET_DEFAULT_SIZES);
	MergedNodes *m = MemoryContextAllocZero(cxt, sizeof(MergedNodes));

	m->cxt = cxt;
	PG_TRY();
	{
		m->id = ++last_version;
		m->n_parts = c->n_parts;
		m->parts = MemoryContextAlloc(cxt, c->n_parts * sizeof(KeptPart *));
		m->versions = MemoryContextAlloc(cxt, c->n_parts * sizeof(uint64));
		m->to_global = MemoryContextAlloc(cxt, c->n_parts * sizeof(int32 *));
		for (int p = 0; p < c->n_parts; p++)
		{
			m->parts[p] = c->parts[p].kept;
			m->versions[p] = c->parts[p].kept->version;
		}
		*shared = shared_nodes_fit(c, h);
		if (*shared)
			take_shared_nodes(c, m, h);
		else
			merge_parts(c, m);
	}
	PG_CATCH();
	{
		MemoryContextDelete(cxt);
		PG_RE_THROW();
	}
	PG_END_TRY();
	return m;
}

/*
 * Whether the session's merged node set is free and was merged from the run's parts' graphs, and,
 * when it reads a shared node set, that set (h, may be NULL) is there to read.
 */
static bool
kept_nodes_fit(const DistCluster *c, const SharedNodesHeader *h)
{
	const MergedNodes *m = kept_nodes;
	bool		fit = m != NULL && !m->in_use && m->n_parts == c->n_parts &&
		(!m->from_shared || shared_nodes_fit(c, h));

	for (int p = 0; fit && p < c->n_parts; p++)
		fit = m->parts[p] == c->parts[p].kept && m->versions[p] == c->parts[p].kept->version;
	return fit;
}

/*
 * The whole graph's nodes for the run's parts: the session's merged node set when no run holds
 * it and it was merged from these parts' graphs (same kept parts, same versions: *how "kept"),
 * else the shared node set (h, may be NULL) when it was merged from the parts' graphs ("shared"),
 * else a new merge ("merged"), kept for the session in its place (in the run's context while
 * another run holds it) and offered to the graph cache under key (NULL: not).
 */
static MergedNodes *
merged_nodes(DistCluster *c, const SharedNodesHeader *h, const GraphCacheKey *key,
			 const char **how)
{
	MergedNodes *m = kept_nodes;
	bool		keep;
	bool		shared;

	*how = "merged nodes kept";
	if (kept_nodes_fit(c, h))
	{
		m->in_use = true;
		if (m->from_shared)
			read_shared_set(c, m, h);
		return m;
	}
	keep = m == NULL || !m->in_use;
	if (keep && m != NULL)
	{
		MemoryContextDelete(m->cxt);
		kept_nodes = NULL;
	}
	m = new_merged_nodes(c, keep ? TopMemoryContext : c->cxt, h, &shared);
	if (keep)
	{
		m->in_use = true;
		kept_nodes = m;
	}
	*how = shared ? "merged nodes shared" : "merge";
	if (!shared && key != NULL)
		keep_shared_nodes(c, m, key);
	return m;
}

/*
 * Takes the session's kept part of a partition for this user (and, for a foreign one, these
 * connection options), or makes an empty one; a run holds it until it ends (end_run).
 */
static KeptPart *
take_kept_part(Oid relid, const char *conninfo)
{
	KeptPart   *kept;
	KeptPart   *next;
	MemoryContext cxt;

	for (kept = kept_parts; kept != NULL; kept = next)
	{
		next = kept->next;
		if (kept->in_use || kept->relid != relid || kept->userid != GetUserId())
			continue;
		if (conninfo == NULL ? kept->conninfo == NULL :
			kept->conninfo != NULL && strcmp(kept->conninfo, conninfo) == 0)
		{
			kept->in_use = true;
			return kept;
		}
		/* the partition's server or user mapping changed since: its connection is done */
		drop_kept_part(kept);
	}
	if (!kept_exit_registered)
	{
		on_proc_exit(close_kept_parts, (Datum) 0);
		kept_exit_registered = true;
	}
	cxt = AllocSetContextCreate(TopMemoryContext, "powerrank kept part", ALLOCSET_SMALL_SIZES);
	kept = MemoryContextAllocZero(cxt, sizeof(KeptPart));
	kept->cxt = cxt;
	kept->graph_cxt = AllocSetContextCreate(cxt, "powerrank kept part graph",
											ALLOCSET_DEFAULT_SIZES);
	kept->relid = relid;
	kept->userid = GetUserId();
	kept->conninfo = conninfo != NULL ? MemoryContextStrdup(cxt, conninfo) : NULL;
	kept->in_use = true;
	kept->next = kept_parts;
	kept_parts = kept;
	return kept;
}

/*
 * Opens the parts of a partitioned table (distributed_wanted said yes): checks this user's
 * privileges on the partitioned table, takes every partition's kept part, connects to the shard
 * servers where none is kept and checks their powerrank (all at once: connect_and_check), opens
 * every part (the shards in
 * parallel, the local partitions meanwhile) with out-edges when the push product is wanted — a
 * part whose table's content is the one it holds answers without its node ids —, and fills *graph
 * with the whole graph the driver runs on (the session's when the parts' graphs are those it was
 * merged from).  The parts go back to the session, or are dropped, when cxt goes (end_run).
 */
DistCluster *
distributed_open(const EdgeTableSpec *spec, bool out_edges, MemoryContext cxt, PrGraph *graph)
{
	EdgeScanTarget target;
	DistCluster *c = MemoryContextAllocZero(cxt, sizeof(DistCluster));
	MemoryContext old_cxt = MemoryContextSwitchTo(cxt);
	List	   *leaves;
	ListCell   *lc;
	ServerConnection *how;
	int			p = 0;
	int			same = 0;
	GraphCacheKey key;
	bool		keyed;
	dsm_segment *shared;
	const SharedNodesHeader *shared_nodes;
	const char *nodes_how;
	double		t_start = pr_clock_seconds(),
				t_connected,
				t_opened;

	c->cxt = cxt;
	c->cleanup.func = end_run;
	c->cleanup.arg = c;
	MemoryContextRegisterResetCallback(cxt, &c->cleanup);

	/* the caller's privileges on the partitioned table and its columns, as a read checks them */
	graph_scan_resolve(spec, &target);
	leaves = find_all_inheritors(target.relid, AccessShareLock, NULL);
	graph_scan_end(&target);
	c->parts = palloc0(list_length(leaves) * sizeof(DistPart));
	how = palloc0(list_length(leaves) * sizeof(ServerConnection));
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
			connection_options(leaf, part, &how[p]);
			part->kept = take_kept_part(leaf, how[p].conninfo);
			part->conn = part->kept->conn;
			if (part->conn != NULL)
				PQsetNoticeReceiver(part->conn, forward_notice, part);
			c->n_parts = ++p;
		}
		else
		{
			part->spec = *spec;
			part->spec.relation = cstring_to_text(part->partition);
			part->kept = take_kept_part(leaf, NULL);
			c->n_parts = ++p;
		}
	}
	connect_and_check(c, how);
	t_connected = pr_clock_seconds();

	/*
	 * The node set a session before kept of these partitions (every one foreign) in the graph
	 * cache: a part whose session holds no graph names that set's graph, and a shard holding it
	 * answers without its nodes.
	 */
	keyed = shared_nodes_key(c, &target, &key);
	shared = keyed ? graph_cache_acquire_node_set(&key) : NULL;
	shared_nodes = shared_header(c, shared);
	for (p = 0; p < c->n_parts; p++)
		if (c->parts[p].conn != NULL)
			send_open(&c->parts[p], out_edges,
					  c->parts[p].kept->version != 0 ? &c->parts[p].kept->content :
					  shared_nodes != NULL ? &shared_nodes->contents[p] : NULL);
	for (p = 0; p < c->n_parts; p++)
	{
		DistPart   *part = &c->parts[p];
		KeptPart   *kept = part->kept;

		if (part->conn == NULL)
		{
			bool		kept_same;
			char	   *bytes;

			(void) shard_state_open(&kept->local, kept->cxt, &part->spec, out_edges);
			if (kept->version != 0)
				part->asked = kept->content;
			kept_same = part->asked.number != 0 &&
				kept->local->summary.content.number == part->asked.number;
			bytes = palloc_extended(shard_open_size(kept->local, kept_same), MCXT_ALLOC_HUGE);
			take_open(part, bytes, shard_open_write(kept->local, kept_same, bytes));
			pfree(bytes);
		}
	}
	for (p = 0; p < c->n_parts; p++)
	{
		DistPart   *part = &c->parts[p];

		if (part->conn != NULL && part->busy)
		{
			PGresult   *result = wait_result(c, part);

			take_open(part, PQgetvalue(result, 0, 0), PQgetlength(result, 0, 0));
			c->exchange_bytes += PQgetlength(result, 0, 0);
			PQclear(result);
		}
	}
	/* the parts that answered a graph of the number asked on another cluster or postmaster */
	open_parts_again(c, out_edges);
	for (p = 0; p < c->n_parts; p++)
	{
		DistPart   *part = &c->parts[p];

		if (part->from_shared && shared_nodes == NULL)
			open_unreadable(part);
		if (part->from_shared)
			take_shared_part(part, p, shared);
		part->from_shared = false;
	}
	/* a merge needs every part's node ids: the parts taken from the shared set send them */
	if (!kept_nodes_fit(c, shared_nodes) && !shared_nodes_fit(c, shared_nodes))
	{
		for (p = 0; p < c->n_parts; p++)
			c->parts[p].open_again = c->parts[p].kept->node_ids == NULL;
		open_parts_again(c, out_edges);
	}
	for (p = 0; p < c->n_parts; p++)
	{
		c->n_edges += c->parts[p].kept->n_edges;
		same += c->parts[p].kept->prepared_k != 0;
	}
	t_opened = pr_clock_seconds();
	/* a set the parts' graphs are not is replaced by the merge: its room is given back first */
	if (!shared_nodes_fit(c, shared_nodes))
	{
		graph_cache_release(&shared);
		shared_nodes = NULL;
	}
	c->nodes = merged_nodes(c, shared_nodes, keyed ? &key : NULL, &nodes_how);
	if (c->nodes->from_shared)
	{
		/* read in place until the run ends (forget_shared_set) */
		dsm_pin_mapping(shared);
		c->shared_set = shared;
		shared = NULL;
	}
	graph_cache_release(&shared);
	for (p = 0; p < c->n_parts; p++)
		c->parts[p].to_global = c->nodes->to_global[p];
	c->graph = c->nodes->graph;
	MemoryContextSwitchTo(old_cxt);
	/* where a distributed call's build goes, for whoever looks (client_min_messages = debug1) */
	elog(DEBUG1, "powerrank: %d parts (%d of the same graph as before), %lld nodes, %lld edges: connections and checks %.1f ms, opens %.1f ms, %s %.1f ms",
		 c->n_parts, same, (long long) c->graph.n_nodes, (long long) c->n_edges,
		 (t_connected - t_start) * 1000.0, (t_opened - t_connected) * 1000.0,
		 nodes_how, (pr_clock_seconds() - t_opened) * 1000.0);
	*graph = c->graph;
	return c;
}

/* The run ended well: its parts and node set go back to the session when its context goes. */
void
distributed_keep_parts(DistCluster *cluster)
{
	cluster->ended_well = true;
}

/* The edges of every part together. */
int64
distributed_edges(const DistCluster *cluster)
{
	return cluster->n_edges;
}

/* Whether every part's graph came from its server's graph cache (or its session's kept part). */
bool
distributed_cache_hit(const DistCluster *cluster)
{
	for (int p = 0; p < cluster->n_parts; p++)
		if (!cluster->parts[p].cache_hit)
			return false;
	return true;
}

/*
 * Bytes sent to and received from the shards, bytes the shards sent each other (-1: they did
 * not exchange with each other), and the seconds of the round trips to them.
 */
void
distributed_exchange(const DistCluster *cluster, int64 *bytes, int64 *peer_bytes, double *seconds)
{
	*bytes = cluster->exchange_bytes;
	*peer_bytes = cluster->peers ? cluster->peer_bytes : -1;
	*seconds = cluster->exchange_seconds;
}

/* The lists of a plan's rows (ShardRows) derived from its owner bits, part by part. */
static void
plan_lists(const DistCluster *c, MergedNodes *m, OwnerPlan *plan)
{
	int64		listed = 0;
	int32	   *rows;

	for (int list = 0; list < SHARD_ROWS_LISTS; list++)
	{
		plan->rows[list] = MemoryContextAlloc(m->cxt, c->n_parts * sizeof(int32 *));
		plan->count[list] = MemoryContextAllocZero(m->cxt, c->n_parts * sizeof(int64));
	}
	for (int p = 0; p < c->n_parts; p++)
		for (int64 i = 0; i < c->parts[p].kept->n_nodes; i++)
			for (int list = 0; list < SHARD_ROWS_LISTS; list++)
				plan->count[list][p] += (plan->bits[p][i] & shard_rows_mask((ShardRows) list)) != 0;
	for (int p = 0; p < c->n_parts; p++)
		for (int list = 0; list < SHARD_ROWS_LISTS; list++)
			listed += plan->count[list][p];
	rows = powerrank_alloc_huge(m->cxt, Max(listed, 1) * sizeof(int32));
	for (int p = 0; p < c->n_parts; p++)
	{
		for (int list = 0; list < SHARD_ROWS_LISTS; list++)
		{
			plan->rows[list][p] = rows;
			rows += shard_role_rows(plan->bits[p], c->parts[p].kept->n_nodes,
									shard_rows_mask((ShardRows) list), rows);
		}
		elog(DEBUG1, "powerrank: part %d owns %lld rows; a product exchanges %lld halo rows in, %lld exported rows out (%.2f MB a column)",
			 p, (long long) plan->count[SHARD_ROWS_OWNED][p],
			 (long long) plan->count[SHARD_ROWS_HALO][p],
			 (long long) plan->count[SHARD_ROWS_EXPORTED][p],
			 (plan->count[SHARD_ROWS_HALO][p] + plan->count[SHARD_ROWS_EXPORTED][p]) *
			 sizeof(double) / 1e6);
	}
}

/*
 * Makes the node set's owner plan (OwnerPlan) from the parts' role lists, once per node set: the
 * part holding a node's in-edges owns it, else the first part where it is a source.
 */
static OwnerPlan *
plan_owners(const DistCluster *c, MergedNodes *m)
{
	int64		n = m->graph.n_nodes;
	OwnerPlan  *plan;
	uint8	   *read_elsewhere;
	uint8	   *bits;
	int64		local = 0;
	double		started = pr_clock_seconds();

	if (m->owners != NULL)
		return m->owners;
	plan = MemoryContextAllocZero(m->cxt, sizeof(OwnerPlan));
	/* one block for the owners and one for the bits and lists: fresh memory on huge pages */
	plan->owner = powerrank_alloc_huge(m->cxt, Max(n, 1) * (sizeof(int32) + 1));
	read_elsewhere = (uint8 *) (plan->owner + Max(n, 1));
	memset(read_elsewhere, 0, Max(n, 1));
	plan->rows_owned = true;
	for (int64 v = 0; v < n; v++)
		plan->owner[v] = -1;
	for (int p = 0; p < c->n_parts && plan->rows_owned; p++)
	{
		const KeptPart *kept = c->parts[p].kept;

		for (int64 i = 0; i < kept->row_count[SHARD_ROLE_TARGET]; i++)
		{
			int32		v = m->to_global[p][kept->rows[SHARD_ROLE_TARGET][i]];

			if (plan->owner[v] >= 0)
			{
				/* in-edges in two parts: their partial sums add up on the coordinator only */
				plan->rows_owned = false;
				break;
			}
			plan->owner[v] = p;
		}
	}
	for (int p = 0; p < c->n_parts && plan->rows_owned; p++)
	{
		const KeptPart *kept = c->parts[p].kept;

		for (int64 i = 0; i < kept->row_count[SHARD_ROLE_SOURCE]; i++)
		{
			int32		v = m->to_global[p][kept->rows[SHARD_ROLE_SOURCE][i]];

			if (plan->owner[v] < 0)
				plan->owner[v] = p;
		}
	}
	if (!plan->rows_owned)
	{
		m->owners = plan;
		return plan;
	}
	/* a node that is a source of a part other than its owner is exported to that part */
	for (int p = 0; p < c->n_parts; p++)
	{
		const KeptPart *kept = c->parts[p].kept;

		for (int64 i = 0; i < kept->row_count[SHARD_ROLE_SOURCE]; i++)
		{
			int32		v = m->to_global[p][kept->rows[SHARD_ROLE_SOURCE][i]];

			if (plan->owner[v] != p)
				read_elsewhere[v] = 1;
		}
		local += kept->n_nodes;
	}
	plan->bits = MemoryContextAlloc(m->cxt, c->n_parts * sizeof(uint8 *));
	bits = powerrank_alloc_huge(m->cxt, Max(local, 1));
	for (int p = 0; p < c->n_parts; p++)
	{
		int64		n_local = c->parts[p].kept->n_nodes;
		const int32 *to_global = m->to_global[p];

		for (int64 i = 0; i < n_local; i++)
			bits[i] = plan->owner[to_global[i]] != p ? SHARD_HALO :
				read_elsewhere[to_global[i]] ? SHARD_OWNS | SHARD_EXPORTS : SHARD_OWNS;
		plan->bits[p] = bits;
		bits += n_local;
	}
	plan_lists(c, m, plan);
	m->owners = plan;
	elog(DEBUG1, "powerrank: owners of %lld nodes planned in %.1f ms", (long long) n,
		 (pr_clock_seconds() - started) * 1000.0);
	return plan;
}

/*
 * Prepares every part for k columns and the products in needs (once per k and needs): each gets
 * the whole graph's out-strengths of its nodes — unless it was prepared for k and needs with the
 * out-strengths of this node set already (a kept part of the same graph, a kept node set: its
 * engine is as that prepare left it).
 */
static void
prepare_parts(DistCluster *c, int k, unsigned needs)
{
	double		started = pr_clock_seconds();

	if (c->k == k && c->needs == needs)
		return;
	c->owners = plan_owners(c, c->nodes);
	for (int p = 0; p < c->n_parts; p++)
		if (c->parts[p].kept->n_nodes * (int64) k > (int64) (MaxAllocSize / sizeof(double)))
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("partition \"%s\" has %lld nodes: %d columns of them exceed what one message carries",
							c->parts[p].partition, (long long) c->parts[p].kept->n_nodes, k),
					 errhint("Rank fewer sources at once, or spread the table over more partitions.")));
	for (int p = 0; p < c->n_parts; p++)
	{
		DistPart   *part = &c->parts[p];
		KeptPart   *kept = part->kept;
		const uint8 *bits = c->owners->rows_owned ? c->owners->bits[p] : NULL;

		if (part->x != NULL)
		{
			pfree(part->x);
			pfree(part->y);
		}
		part->x = powerrank_alloc_huge(c->cxt, Max(kept->n_nodes * k, 1) * sizeof(double));
		part->y = powerrank_alloc_huge(c->cxt, Max(kept->n_nodes * k, 1) * sizeof(double));
		if (kept->prepared_k == k && kept->prepared_needs == needs &&
			kept->prepared_nodes == c->nodes->id)
			continue;
		kept->prepared_k = 0;
		if (part->conn == NULL)
		{
			double	   *out = powerrank_alloc_huge(c->cxt,
												   Max(kept->n_nodes, 1) * sizeof(double));

			for (int64 i = 0; i < kept->n_nodes; i++)
				out[i] = c->graph.out_strength[part->to_global[i]];
			shard_state_prepare(kept->local, out, k, needs, bits);
		}
		else
		{
			Size		size = c->nodes->from_shared ? c->nodes->strengths_size[p] : 0;
			const char *bytes = c->nodes->from_shared ? c->nodes->strengths[p] :
				part_strengths(c->nodes, p, kept->n_nodes, &size);
			const char *values[4] = {bytes, psprintf("%d", k), psprintf("%u", needs),
			(const char *) bits};
			int			lengths[4] = {(int) size, 0, 0, (int) kept->n_nodes};
			int			formats[4] = {1, 0, 0, 1};

			send_query(part, psprintf("SELECT %s.powerrank_shard_prepare($1, $2, $3, $4)::text",
									  part->schema), 4, values, lengths, formats);
			c->exchange_bytes += lengths[0] + (bits != NULL ? lengths[3] : 0);
		}
	}
	for (int p = 0; p < c->n_parts; p++)
	{
		KeptPart   *kept = c->parts[p].kept;

		if (c->parts[p].busy)
			PQclear(wait_result(c, &c->parts[p]));
		kept->prepared_k = k;
		kept->prepared_needs = needs;
		kept->prepared_nodes = c->nodes->id;
	}
	if (c->exported != NULL)
		pfree(c->exported);
	c->exported = c->owners->rows_owned ?
		powerrank_alloc_huge(c->cxt, Max(c->graph.n_nodes * k, 1) * sizeof(double)) : NULL;
	c->exported_slot = -1;
	c->k = k;
	c->needs = needs;
	elog(DEBUG1, "powerrank: parts prepared for %d columns in %.1f ms", k,
		 (pr_clock_seconds() - started) * 1000.0);
	if (!c->peers_tried && (needs & (PR_NEED_PULL_NORMALIZED | PR_NEED_PULL)) != 0)
		connect_peers(c);
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
		const int32 *rows = part->kept->rows[in_role];
		int64		count = part->kept->row_count[in_role];

		for (int64 i = 0; i < count; i++)
			memcpy(part->x + i * k, x + (int64) part->to_global[rows[i]] * k, k * sizeof(double));
		if (part->conn != NULL)
		{
			const char *values[2] = {product_text, (const char *) part->x};
			int			lengths[2] = {0, (int) (count * k * sizeof(double))};
			int			formats[2] = {0, 1};

			send_query(part, part->product_query, 2, values, lengths, formats);
			c->exchange_bytes += lengths[1];
		}
	}
	for (int p = 0; p < c->n_parts; p++)
		if (c->parts[p].conn == NULL)
			shard_state_product(c->parts[p].kept->local, product, c->parts[p].x, c->parts[p].y);
	memset(y, 0, c->graph.n_nodes * k * sizeof(double));
	for (int p = 0; p < c->n_parts; p++)
	{
		DistPart   *part = &c->parts[p];
		const double *part_y = part->y;
		const int32 *out_rows = part->kept->rows[out_role];
		int64		count = part->kept->row_count[out_role];
		PGresult   *result = NULL;

		if (part->conn != NULL)
		{
			result = wait_result(c, part);
			if (PQgetlength(result, 0, 0) != (int) (count * k * sizeof(double)))
			{
				PQclear(result);
				ereport(ERROR,
						(errcode(ERRCODE_PROTOCOL_VIOLATION),
						 errmsg("shard server \"%s\" answered a product of the wrong size",
								part->server)));
			}
			memcpy(part->y, PQgetvalue(result, 0, 0), count * k * sizeof(double));
			c->exchange_bytes += PQgetlength(result, 0, 0);
			PQclear(result);
		}
		for (int64 i = 0; i < count; i++)
		{
			double	   *row = y + (int64) part->to_global[out_rows[i]] * k;

			for (int j = 0; j < k; j++)
				row[j] += part_y[i * k + j];
		}
	}
	c->exchange_seconds += pr_clock_seconds() - started;
}

/* Sends a query of text parameters to a part's server. */
static void
send_text_query(DistPart *part, const char *query, int n_params, const char *const *values)
{
	send_query(part, query, n_params, values, NULL, NULL);
}

/*
 * Waits for a part's answer of bytes (a bytea) and checks that it holds count doubles: returns
 * the result (PQclear it), its bytes counted as exchanged.
 */
static PGresult *
wait_values(DistCluster *c, DistPart *part, int64 count)
{
	PGresult   *result = wait_result(c, part);

	if (PQgetlength(result, 0, 0) != (int) (count * sizeof(double)))
	{
		PQclear(result);
		ereport(ERROR,
				(errcode(ERRCODE_PROTOCOL_VIOLATION),
				 errmsg("shard server \"%s\" answered a vector of the wrong size", part->server)));
	}
	c->exchange_bytes += PQgetlength(result, 0, 0);
	return result;
}

/*
 * Collects slot's values of every part's rows of list (SHARD_ROWS_OWNED: every node once, from
 * its owner; SHARD_ROWS_EXPORTED: the nodes other parts read) into whole (n x k, the whole graph's
 * ids; the rows no part gives are left as they were).
 */
static void
collect_rows(DistCluster *c, int slot, ShardRows list, double *whole)
{
	int			k = c->k;
	const char *values[2] = {psprintf("%d", slot), list == SHARD_ROWS_EXPORTED ? "true" : "false"};

	for (int p = 0; p < c->n_parts; p++)
		if (c->parts[p].conn != NULL)
			send_text_query(&c->parts[p], psprintf("SELECT %s.powerrank_shard_rows($1, $2)",
												   c->parts[p].schema), 2, values);
	for (int p = 0; p < c->n_parts; p++)
		if (c->parts[p].conn == NULL)
			shard_state_rows(c->parts[p].kept->local, slot, list, c->parts[p].y);
	for (int p = 0; p < c->n_parts; p++)
	{
		DistPart   *part = &c->parts[p];
		const int32 *rows = c->owners->rows[list][p];
		int64		count = c->owners->count[list][p];

		if (part->conn != NULL)
		{
			PGresult   *result = wait_values(c, part, count * k);

			memcpy(part->y, PQgetvalue(result, 0, 0), count * k * sizeof(double));
			PQclear(result);
		}
		for (int64 i = 0; i < count; i++)
			memcpy(whole + (int64) part->to_global[rows[i]] * k, part->y + i * k,
				   k * sizeof(double));
	}
}

/*
 * The exchange before a product on owned rows: every part's halo of slot (its sources that other
 * parts own), into part->x, from the owners' exported rows (c->exported: the last update on the
 * parts left them there when it wrote slot, else they are collected now).  Here a relay through
 * this backend; shards that reach each other could swap the halos directly.
 */
static void
exchange_halos(DistCluster *c, int slot)
{
	int			k = c->k;

	if (c->exported_slot != slot)
	{
		collect_rows(c, slot, SHARD_ROWS_EXPORTED, c->exported);
		c->exported_slot = slot;
	}
	for (int p = 0; p < c->n_parts; p++)
	{
		DistPart   *part = &c->parts[p];
		const int32 *halo = c->owners->rows[SHARD_ROWS_HALO][p];

		for (int64 i = 0; i < c->owners->count[SHARD_ROWS_HALO][p]; i++)
			memcpy(part->x + i * k, c->exported + (int64) part->to_global[halo[i]] * k,
				   k * sizeof(double));
	}
}

/* The local row of node v in part p (a part's nodes ascend in the whole graph's order too). */
static inline int32
owned_row(const DistCluster *c, int p, int32 v)
{
	return (int32) pr_lower_bound_i32(c->parts[p].to_global, 0, c->parts[p].kept->n_nodes, v);
}

/*
 * Waits until every shard answered a product whose halos they exchanged with each other: a shard
 * whose connection was lost is the one named (the others' exchanges with it failed too, and
 * their ERRORs say less).
 */
static void
wait_peer_answers(DistCluster *c)
{
	int			lost = -1;

	for (int p = 0; p < c->n_parts; p++)
		if (c->parts[p].busy &&
			(!answer_in(c, &c->parts[p]) || PQstatus(c->parts[p].conn) == CONNECTION_BAD) &&
			lost < 0)
			lost = p;
	if (lost >= 0)
		shard_failed(&c->parts[lost], NULL);
}

/*
 * Sends each shard the addresses of the others' pairs for it and, where it keeps none (!kept[p]),
 * the rows it exchanges with each (shard.h, beside SHARD_MAX_PEERS), from the owner plan: a
 * part's halo rows owned by q are received from q, which sends those of its exported rows, both
 * lists ascending.  The lists are written straight into each part's message, on huge pages where
 * large; a shard that keeps its lists gets none.  *built: when the lists were made (before their
 * messages travel).  Returns NULL when sent, else why not (a part's lists more than one message
 * holds: nothing is sent).
 */
static char *
send_peer_connects(DistCluster *c, char ***address, int32 **address_size, const bool *kept,
				   double *built)
{
	int			n = c->n_parts;
	int64	  **count[2];
	int32	 ***rows[2];
	char	  **lists = palloc(n * sizeof(char *));
	Size	   *lists_size = palloc(n * sizeof(Size));
	int32	   *owned_at;
	int			wanted = 0;

	for (int p = 0; p < n; p++)
	{
		lists[p] = NULL;
		lists_size[p] = 0;
		wanted += !kept[p];
	}
	if (wanted == 0)
	{
		*built = pr_clock_seconds();
		return send_peer_lists(c, address, address_size, lists, lists_size);
	}
	/* each node's row in the part owning it, from the parts' lists of owned rows */
	owned_at = powerrank_alloc_huge(CurrentMemoryContext, Max(c->graph.n_nodes, 1) * sizeof(int32));
	for (int p = 0; p < n; p++)
	{
		const int32 *owned = c->owners->rows[SHARD_ROWS_OWNED][p];

		for (int64 i = 0; i < c->owners->count[SHARD_ROWS_OWNED][p]; i++)
			owned_at[c->parts[p].to_global[owned[i]]] = owned[i];
	}
	/* way 0: sent by p to q; way 1: received by p from q */
	for (int way = 0; way < 2; way++)
	{
		count[way] = palloc(n * sizeof(int64 *));
		rows[way] = palloc(n * sizeof(int32 **));
		for (int p = 0; p < n; p++)
		{
			count[way][p] = palloc0(n * sizeof(int64));
			rows[way][p] = palloc0(n * sizeof(int32 *));
		}
	}
	for (int p = 0; p < n; p++)
	{
		const int32 *halo = c->owners->rows[SHARD_ROWS_HALO][p];

		for (int64 i = 0; i < c->owners->count[SHARD_ROWS_HALO][p]; i++)
		{
			int32		owner = c->owners->owner[c->parts[p].to_global[halo[i]]];

			count[1][p][owner]++;
			count[0][owner][p]++;
		}
	}
	/* each part's message: int32 parts, its counts, then its lists, where the rows go */
	for (int p = 0; p < n; p++)
	{
		lists_size[p] = sizeof(int32) + 2 * n * sizeof(int64);
		for (int q = 0; q < n; q++)
			lists_size[p] += (count[0][p][q] + count[1][p][q]) * sizeof(int32);
		if (lists_size[p] > MaxAllocSize)
			return psprintf("the lists of rows of partition \"%s\" are %zu bytes, more than one message holds",
							c->parts[p].partition, lists_size[p]);
	}
	for (int p = 0; p < n; p++)
	{
		int32		parts = n;
		char	   *at;

		if (kept[p])
		{
			lists_size[p] = 0;
			continue;
		}
		lists[p] = powerrank_alloc_huge(CurrentMemoryContext, lists_size[p]);
		at = lists[p];
		memcpy(at, &parts, sizeof(parts));
		at += sizeof(parts);
		for (int q = 0; q < n; q++)
			for (int way = 0; way < 2; way++)
			{
				memcpy(at, &count[way][p][q], sizeof(int64));
				at += sizeof(int64);
			}
		for (int way = 0; way < 2; way++)
			for (int q = 0; q < n; q++)
			{
				rows[way][p][q] = (int32 *) at;
				at += count[way][p][q] * sizeof(int32);
				count[way][p][q] = 0;
			}
	}
	for (int p = 0; p < n; p++)
	{
		const int32 *halo = c->owners->rows[SHARD_ROWS_HALO][p];

		for (int64 i = 0; i < c->owners->count[SHARD_ROWS_HALO][p]; i++)
		{
			int32		v = c->parts[p].to_global[halo[i]];
			int32		owner = c->owners->owner[v];

			if (!kept[p])
				rows[1][p][owner][count[1][p][owner]++] = halo[i];
			if (!kept[owner])
				rows[0][owner][p][count[0][owner][p]++] = owned_at[v];
		}
	}
	pfree(owned_at);
	*built = pr_clock_seconds();
	return send_peer_lists(c, address, address_size, lists, lists_size);
}

/*
 * Sends each shard the addresses of the others' pairs for it and its lists (lists[p], freed here;
 * NULL: none, it keeps them), and returns NULL.
 */
static char *
send_peer_lists(DistCluster *c, char ***address, int32 **address_size, char **lists,
				const Size *lists_size)
{
	int			n = c->n_parts;

	for (int p = 0; p < n; p++)
	{
		StringInfoData addresses;
		const char *values[2];
		int			lengths[2];
		int			formats[2] = {1, 1};

		initStringInfo(&addresses);
		for (int q = 0; q < n; q++)
		{
			/* q's pair for p */
			appendBinaryStringInfo(&addresses, (const char *) &address_size[q][p], sizeof(int32));
			appendBinaryStringInfo(&addresses, address[q][p], address_size[q][p]);
		}
		values[0] = addresses.data;
		values[1] = lists[p] != NULL ? lists[p] : "";
		lengths[0] = addresses.len;
		lengths[1] = (int) lists_size[p];
		send_query(&c->parts[p], psprintf("SELECT %s.powerrank_shard_peers_connect($1, $2)",
										  c->parts[p].schema), 2, values, lengths, formats);
		c->exchange_bytes += lengths[0] + lengths[1];
		if (lists[p] != NULL)
			pfree(lists[p]);
	}
	return NULL;
}

/*
 * Reads a shard's answer of a group's step (powerrank_shard_peers_*: a status byte, then the
 * addresses or the reason); returns NULL when done (*payload, *size: what follows), else the
 * reason, the server named.
 */
static char *
peer_step_answer(DistCluster *c, DistPart *part, char **payload, int *size)
{
	PGresult   *result = wait_result(c, part);
	int			length = PQgetlength(result, 0, 0);
	const char *bytes = PQgetvalue(result, 0, 0);
	char	   *failure = NULL;

	if (length < 1)
		failure = psprintf("shard server \"%s\" answered nothing", part->server);
	else if (bytes[0] != 0)
		failure = psprintf("shard server \"%s\": %s", part->server,
						   pnstrdup(bytes + 1, length - 1));
	else if (payload != NULL)
	{
		*payload = palloc(Max(length - 1, 1));
		memcpy(*payload, bytes + 1, length - 1);
		*size = length - 1;
	}
	c->exchange_bytes += length;
	PQclear(result);
	return failure;
}

/*
 * The name of the run's lists of rows each shard exchanges with each other (send_peer_connects):
 * the parts' graphs, a ShardContent each in rank order, from which the owner plan and so every
 * list follow; NULL when some part's graph has no cache entry (a name for that session only).
 */
static char *
peer_lists_name(const DistCluster *c, Size *size)
{
	char	   *name;

	for (int p = 0; p < c->n_parts; p++)
		if (!shard_content_lasts(&c->parts[p].kept->content))
			return NULL;
	*size = c->n_parts * sizeof(ShardContent);
	name = palloc(*size);
	for (int p = 0; p < c->n_parts; p++)
		memcpy(name + p * sizeof(ShardContent), &c->parts[p].kept->content, sizeof(ShardContent));
	return name;
}

/*
 * Makes the shards of the run a group that exchanges halos shard to shard (c->peers), once a run
 * whose pull products run on owned rows (and HITS's push sums, the other way): every part a shard server, at least two of
 * them, powerrank.distributed_exchange = auto.  The group of a run before over the same kept
 * connections and node set serves again (each shard session keeps its group; a failed run drops
 * the connections, and with them the groups).  In two steps over the connections: each shard
 * makes its end (bound to the address this backend reached it at) and answers its pairs'
 * addresses; each gets the others' addresses for it and its lists of rows, and connects.  When a
 * step fails (a shard cannot listen, or reach another), the halos go through this backend as
 * before, and a NOTICE says why.
 */
static void
connect_peers(DistCluster *c)
{
	int			n = c->n_parts;
	const char *why = NULL;
	char	 ***address;
	int32	  **address_size;
	char	   *failure = NULL;
	double		t_start = pr_clock_seconds(),
				t_opened,
				t_built = 0.0,
				t_sent,
				t_connected;
	int64		bytes_before = c->exchange_bytes,
				lists_bytes;
	bool	   *kept;
	char	   *name;
	Size		name_size = 0;
	int			wanted = 0;

	c->peers_tried = true;
	if (powerrank_distributed_exchange == DISTRIBUTED_EXCHANGE_RELAY)
		why = "powerrank.distributed_exchange = relay";
	else if (!c->owners->rows_owned)
		why = "no part owns the rows of its nodes";
	else if (n < 2 || n > SHARD_MAX_PEERS)
		why = psprintf("a group of shards has 2 to %d members, not %d", SHARD_MAX_PEERS, n);
	for (int p = 0; why == NULL && p < n; p++)
		if (c->parts[p].conn == NULL)
			why = psprintf("partition \"%s\" is on this server", c->parts[p].partition);
	if (why != NULL)
	{
		elog(DEBUG1, "powerrank: the halos go through this server: %s", why);
		return;
	}
	/* a run before over the same parts and node set left its group connected: it serves again */
	c->peers = true;
	for (int p = 0; p < n; p++)
		c->peers = c->peers && c->parts[p].kept->peers_nodes == c->nodes->id;
	if (c->peers)
		return;
	for (int p = 0; p < n; p++)
		c->parts[p].kept->peers_nodes = 0;
	address = palloc(n * sizeof(char **));
	address_size = palloc(n * sizeof(int32 *));
	kept = palloc0(n * sizeof(bool));
	name = peer_lists_name(c, &name_size);
	for (int p = 0; p < n; p++)
	{
		const char *values[3] = {psprintf("%d", p), psprintf("%d", n), name != NULL ? name : ""};
		int			lengths[3] = {0, 0, (int) name_size};
		int			formats[3] = {0, 0, 1};

		send_query(&c->parts[p], psprintf("SELECT %s.powerrank_shard_peers_open($1, $2, $3)",
										  c->parts[p].schema), 3, values, lengths, formats);
		c->exchange_bytes += name_size;
	}
	for (int p = 0; p < n; p++)
	{
		char	   *bytes = NULL;
		int			size = 0;
		int			at = 1;
		char	   *part_failure = peer_step_answer(c, &c->parts[p], &bytes, &size);

		address[p] = palloc0(n * sizeof(char *));
		address_size[p] = palloc0(n * sizeof(int32));
		if (failure == NULL)
			failure = part_failure;
		if (part_failure == NULL)
		{
			if (size < 1 || (bytes[0] != 0 && name == NULL))
				ereport(ERROR,
						(errcode(ERRCODE_PROTOCOL_VIOLATION),
						 errmsg("shard server \"%s\" answered that it keeps lists no one named",
								c->parts[p].server)));
			kept[p] = bytes[0] != 0;
			wanted += !kept[p];
		}
		for (int q = 0; part_failure == NULL && q < n; q++)
		{
			int32		length = -1;

			if (size - at >= (int) sizeof(int32))
				memcpy(&length, bytes + at, sizeof(int32));
			at += sizeof(int32);
			if (length < 0 || length > size - at || (length == 0) != (q == p))
				ereport(ERROR,
						(errcode(ERRCODE_PROTOCOL_VIOLATION),
						 errmsg("shard server \"%s\" answered no address for each shard",
								c->parts[p].server)));
			address[p][q] = bytes + at;
			address_size[p][q] = length;
			at += length;
		}
	}
	t_opened = pr_clock_seconds();
	lists_bytes = c->exchange_bytes;
	if (failure == NULL)
		failure = send_peer_connects(c, address, address_size, kept, &t_built);
	t_sent = pr_clock_seconds();
	lists_bytes = c->exchange_bytes - lists_bytes;
	if (failure == NULL)
	{
		for (int p = 0; p < n; p++)
		{
			char	   *part_failure = peer_step_answer(c, &c->parts[p], NULL, NULL);

			if (failure == NULL)
				failure = part_failure;
		}
	}
	if (failure != NULL)
	{
		ereport(NOTICE,
				(errmsg("the shards cannot exchange vectors with each other: they go through this server"),
				 errdetail_internal("%s", failure),
				 errhint("SET powerrank.distributed_exchange = relay says so without trying.")));
		return;
	}
	c->peers = true;
	for (int p = 0; p < n; p++)
		c->parts[p].kept->peers_nodes = c->nodes->id;
	t_connected = pr_clock_seconds();
	/* where a new session's group goes, for whoever looks (client_min_messages = debug1) */
	elog(DEBUG1, "powerrank: the %d shards exchange halos with each other: group made in %.1f ms (ends opened %.1f ms, lists for %d shards of %.1f MB built %.1f ms and sent %.1f ms, connected %.1f ms; %.1f MB through this server)",
		 n, (t_connected - t_start) * 1000.0, (t_opened - t_start) * 1000.0, wanted,
		 lists_bytes / 1048576.0, (t_built - t_opened) * 1000.0, (t_sent - t_built) * 1000.0,
		 (t_connected - t_sent) * 1000.0,
		 (c->exchange_bytes - bytes_before) / 1048576.0);
}

/*
 * y_slot = product(x_slot) on the parts' owned rows (a pull product): x_slot's values are the
 * parts' own (given SHARD_GIVEN_HALO, x NULL: every part gets its halo from the others first),
 * those of x (SHARD_GIVEN_ALL, n x k: every part gets its local rows' values, its own included),
 * or x's k values on every node (SHARD_GIVEN_FILL: a filled slot, k values travel).  dangling[k]
 * receives x's sums over the dangling nodes, added in the parts' order.
 */
static void
owned_product(DistCluster *c, PrProduct product, int x_slot, int y_slot, ShardGiven given,
			  const double *x, double *dangling)
{
	int			k = c->k;
	double		started = pr_clock_seconds();
	const char *values[5] = {psprintf("%d", (int) product), psprintf("%d", x_slot),
	psprintf("%d", y_slot), psprintf("%d", (int) given), NULL};
	double	   *part_dangling = palloc(k * sizeof(double));

	if (given == SHARD_GIVEN_HALO && c->peers)
	{
		/* the shards send each other the halos: nothing travels through here */
		given = SHARD_GIVEN_PEERS;
		values[3] = psprintf("%d", (int) given);
		for (int p = 0; p < c->n_parts; p++)
			c->peer_bytes += c->owners->count[SHARD_ROWS_HALO][p] * k * sizeof(double);
	}
	else if (given == SHARD_GIVEN_HALO)
		exchange_halos(c, x_slot);
	else if (c->exported_slot == x_slot)
		c->exported_slot = -1;
	if (c->exported_slot == y_slot)
		c->exported_slot = -1;
	for (int p = 0; p < c->n_parts; p++)
	{
		DistPart   *part = &c->parts[p];
		int64		count = given == SHARD_GIVEN_HALO ? c->owners->count[SHARD_ROWS_HALO][p] :
			given == SHARD_GIVEN_ALL ? part->kept->n_nodes : given == SHARD_GIVEN_FILL ? 1 : 0;
		int			lengths[5] = {0, 0, 0, 0, (int) (count * k * sizeof(double))};
		int			formats[5] = {0, 0, 0, 0, 1};

		if (given == SHARD_GIVEN_ALL)
			for (int64 i = 0; i < count; i++)
				memcpy(part->x + i * k, x + (int64) part->to_global[i] * k, k * sizeof(double));
		else if (given == SHARD_GIVEN_FILL)
			memcpy(part->x, x, k * sizeof(double));
		if (part->conn == NULL)
			continue;
		values[4] = (const char *) part->x;
		send_query(part, psprintf("SELECT %s.powerrank_shard_owned_product($1, $2, $3, $4, $5)",
								  part->schema), 5, values, lengths, formats);
		c->exchange_bytes += lengths[4];
	}
	for (int j = 0; j < k; j++)
		dangling[j] = 0.0;
	if (given == SHARD_GIVEN_PEERS)
		wait_peer_answers(c);
	for (int p = 0; p < c->n_parts; p++)
	{
		DistPart   *part = &c->parts[p];

		if (part->conn == NULL)
			shard_state_owned_product(part->kept->local, product, x_slot, y_slot, given, part->x,
									  part_dangling);
		else
		{
			PGresult   *result = wait_values(c, part, k);

			memcpy(part_dangling, PQgetvalue(result, 0, 0), k * sizeof(double));
			PQclear(result);
		}
		for (int j = 0; j < k; j++)
			dangling[j] += part_dangling[j];
	}
	pfree(part_dangling);
	c->exchange_seconds += pr_clock_seconds() - started;
}

/*
 * Writes at `at` the local rows, then the weights, of those of the count entries (node, weight)
 * that part p owns (owned of them); returns the position after them.
 */
static char *
put_owned_entries(const DistCluster *c, int p, const int32 *node, const double *weight, int64 count,
				  int64 owned, char *at)
{
	char	   *weights = at + owned * sizeof(int32);

	for (int64 e = 0; e < count; e++)
		if (c->owners->owner[node[e]] == p)
		{
			int32		row = owned_row(c, p, node[e]);

			memcpy(at, &row, sizeof(row));
			at += sizeof(row);
			memcpy(weights, &weight[e], sizeof(double));
			weights += sizeof(double);
		}
	return weights;
}

/* The restart's entries that part p owns, as shard_state_update reads them (shard.h). */
static char *
owned_restart(const DistCluster *c, int p, const PrRestart *r, Size *size)
{
	const OwnerPlan *plan = c->owners;
	int			k = c->k;
	int32		header[2] = {k, (r->uniform ? SHARD_RESTART_UNIFORM : 0) |
	(r->dangling_count > 0 ? SHARD_RESTART_TO_DANGLING : 0)};
	double		nodes = (double) c->graph.n_nodes;
	int64	   *count = palloc0(k * sizeof(int64));
	int64		entries = 0,
				dangling = 0;
	char	   *out,
			   *at;

	for (int j = 0; !r->uniform && j < k; j++)
		for (int64 e = r->ptr[j]; e < r->ptr[j + 1]; e++)
			count[j] += plan->owner[r->node[e]] == p;
	for (int j = 0; j < k; j++)
		entries += count[j];
	for (int64 e = 0; e < r->dangling_count; e++)
		dangling += plan->owner[r->dangling_node[e]] == p;
	*size = sizeof(header) + sizeof(nodes) + (k + 1) * sizeof(int64) +
		(entries + dangling) * (sizeof(int32) + sizeof(double));
	out = palloc(*size);
	at = out;
	memcpy(at, header, sizeof(header));
	at += sizeof(header);
	memcpy(at, &nodes, sizeof(nodes));
	at += sizeof(nodes);
	memcpy(at, count, k * sizeof(int64));
	at += k * sizeof(int64);
	memcpy(at, &dangling, sizeof(int64));
	at += sizeof(int64);
	/* a restart's columns are consecutive runs of its node list */
	if (!r->uniform)
		at = put_owned_entries(c, p, r->node + r->ptr[0], r->weight + r->ptr[0], r->ptr[k] - r->ptr[0],
							   entries, at);
	put_owned_entries(c, p, r->dangling_node, r->dangling_weight, r->dangling_count, dangling, at);
	pfree(count);
	return out;
}

/*
 * Adds a part's answer to an update (its residual's sums and maxima over its owned rows, then y's
 * sums over its dangling owned rows, k each) into residual and y_dangling, in the parts' order.
 */
static void
add_part_residual(int k, const double *part, PrResidual *residual, double *y_dangling)
{
	for (int j = 0; j < k; j++)
	{
		residual[j].l1 += part[j];
		residual[j].linf = Max(residual[j].linf, part[k + j]);
		y_dangling[j] += part[2 * k + j];
	}
}

/*
 * One PageRank iteration on the parts' owned rows in one round trip, where every part is a shard
 * and the shards exchange the halos with each other (powerrank_shard_step): x_slot's halos, the
 * product into y_slot and the update with x's dangling sums (dangling, the last update's of
 * x_slot) and each part's restart entries; residual[k] and y_dangling[k] as owned_update gives
 * them.
 */
static void
owned_step(DistCluster *c, int x_slot, int y_slot, double alpha, const double *dangling,
		   const PrRestart *restart, PrResidual *residual, double *y_dangling)
{
	int			k = c->k;
	double		started = pr_clock_seconds();
	double	   *part_residual = palloc(3 * k * sizeof(double));
	char		alpha_text[32];
	const char *values[5] = {psprintf("%d", x_slot), psprintf("%d", y_slot), alpha_text,
	(const char *) dangling, NULL};

	/* 17 significant digits read back as alpha's bits */
	snprintf(alpha_text, sizeof(alpha_text), "%.17g", alpha);
	if (c->exported_slot == y_slot)
		c->exported_slot = -1;
	for (int p = 0; p < c->n_parts; p++)
	{
		DistPart   *part = &c->parts[p];
		int			lengths[5] = {0, 0, 0, (int) (k * sizeof(double)), 0};
		int			formats[5] = {0, 0, 0, 1, 1};
		Size		size;

		values[4] = owned_restart(c, p, restart, &size);
		lengths[4] = (int) size;
		send_query(part, psprintf("SELECT %s.powerrank_shard_step($1, $2, $3, $4, $5)",
								  part->schema), 5, values, lengths, formats);
		c->exchange_bytes += lengths[3] + lengths[4];
		c->peer_bytes += c->owners->count[SHARD_ROWS_HALO][p] * k * sizeof(double);
		pfree((char *) values[4]);
	}
	for (int j = 0; j < k; j++)
		residual[j].l1 = residual[j].linf = y_dangling[j] = 0.0;
	wait_peer_answers(c);
	for (int p = 0; p < c->n_parts; p++)
	{
		PGresult   *result = wait_values(c, &c->parts[p], 3 * k);

		memcpy(part_residual, PQgetvalue(result, 0, 0), 3 * k * sizeof(double));
		PQclear(result);
		add_part_residual(k, part_residual, residual, y_dangling);
	}
	pfree(part_residual);
	c->exchange_seconds += pr_clock_seconds() - started;
}

/*
 * The PageRank update of y_slot on the parts' owned rows, given x's dangling sums (dangling[k]):
 * each part gets the restart's entries it owns; residual[k] receives the residual, the parts'
 * sums added in their order, their maxima the largest, and y_dangling[k] y's dangling sums (the
 * parts' added in their order: those of x for a later product of y_slot).  Unless the run mixes
 * or the shards exchange halos with each other, the parts' answers carry the new values of their
 * exported rows, kept in c->exported for y_slot's next product.
 */
static void
owned_update(DistCluster *c, int y_slot, int x_slot, double alpha, const double *dangling,
			 const PrRestart *restart, PrResidual *residual, double *y_dangling)
{
	int			k = c->k;
	double		started = pr_clock_seconds();
	double	   *part_residual = palloc(3 * k * sizeof(double));
	char		alpha_text[32];
	bool		send_exported = !c->mixing && !c->peers;
	const char *values[6] = {psprintf("%d", y_slot), psprintf("%d", x_slot), alpha_text,
	(const char *) dangling, NULL, send_exported ? "true" : "false"};
	char	  **restarts = palloc(c->n_parts * sizeof(char *));
	Size	   *sizes = palloc(c->n_parts * sizeof(Size));

	/* 17 significant digits read back as alpha's bits */
	snprintf(alpha_text, sizeof(alpha_text), "%.17g", alpha);
	for (int p = 0; p < c->n_parts; p++)
	{
		DistPart   *part = &c->parts[p];
		int			lengths[6] = {0, 0, 0, (int) (k * sizeof(double)), 0, 0};
		int			formats[6] = {0, 0, 0, 1, 1, 0};

		restarts[p] = owned_restart(c, p, restart, &sizes[p]);
		if (part->conn == NULL)
			continue;
		values[4] = restarts[p];
		lengths[4] = (int) sizes[p];
		send_query(part, psprintf("SELECT %s.powerrank_shard_update($1, $2, $3, $4, $5, $6)",
								  part->schema), 6, values, lengths, formats);
		c->exchange_bytes += lengths[3] + lengths[4];
	}
	for (int j = 0; j < k; j++)
		residual[j].l1 = residual[j].linf = y_dangling[j] = 0.0;
	for (int p = 0; p < c->n_parts; p++)
	{
		DistPart   *part = &c->parts[p];
		const int32 *rows = c->owners->rows[SHARD_ROWS_EXPORTED][p];
		int64		count = send_exported ? c->owners->count[SHARD_ROWS_EXPORTED][p] : 0;

		if (part->conn == NULL)
			shard_state_update(part->kept->local, y_slot, x_slot, alpha, dangling, restarts[p],
							   sizes[p], part_residual, part_residual + 2 * k,
							   send_exported ? part->y : NULL);
		else
		{
			PGresult   *result = wait_values(c, part, (3 + count) * k);

			memcpy(part_residual, PQgetvalue(result, 0, 0), 3 * k * sizeof(double));
			memcpy(part->y, PQgetvalue(result, 0, 0) + 3 * k * sizeof(double),
				   count * k * sizeof(double));
			PQclear(result);
		}
		add_part_residual(k, part_residual, residual, y_dangling);
		for (int64 i = 0; i < count; i++)
			memcpy(c->exported + (int64) part->to_global[rows[i]] * k, part->y + i * k,
				   k * sizeof(double));
		pfree(restarts[p]);
	}
	c->exported_slot = send_exported ? y_slot :
		(c->exported_slot == y_slot ? -1 : c->exported_slot);
	pfree(restarts);
	pfree(sizes);
	pfree(part_residual);
	c->exchange_seconds += pr_clock_seconds() - started;
}

/*
 * Writes slot's owned rows on the parts from whole (n x columns, the whole graph's ids; columns k,
 * or 1 for the same value in every column): each part gets the values of its owned rows only
 * (powerrank_shard_set_rows).  Through the relay, the next exchange of slot takes the exported
 * rows from whole (c->exported), asking the parts nothing.
 */
static void
owned_set_rows(DistCluster *c, int slot, const double *whole, int columns)
{
	int			k = c->k;
	double		started = pr_clock_seconds();
	const char *values[2] = {psprintf("%d", slot), NULL};

	for (int p = 0; p < c->n_parts; p++)
	{
		DistPart   *part = &c->parts[p];
		const int32 *rows = c->owners->rows[SHARD_ROWS_OWNED][p];
		int64		count = c->owners->count[SHARD_ROWS_OWNED][p];
		int			lengths[2] = {0, (int) (count * columns * sizeof(double))};
		int			formats[2] = {0, 1};

		for (int64 i = 0; i < count; i++)
			memcpy(part->x + i * columns, whole + (int64) part->to_global[rows[i]] * columns,
				   columns * sizeof(double));
		if (part->conn == NULL)
		{
			shard_state_set_rows(part->kept->local, slot, part->x, columns);
			continue;
		}
		values[1] = (const char *) part->x;
		send_query(part, psprintf("SELECT %s.powerrank_shard_set_rows($1, $2)", part->schema),
				   2, values, lengths, formats);
		c->exchange_bytes += lengths[1];
	}
	for (int p = 0; p < c->n_parts; p++)
		if (c->parts[p].conn != NULL)
			PQclear(wait_values(c, &c->parts[p], 0));
	if (c->peers)
		c->exported_slot = c->exported_slot == slot ? -1 : c->exported_slot;
	else
	{
		if (columns == k)
			memcpy(c->exported, whole, c->graph.n_nodes * k * sizeof(double));
		else
			for (int64 v = 0; v < c->graph.n_nodes; v++)
				for (int j = 0; j < k; j++)
					c->exported[v * k + j] = whole[v];
		c->exported_slot = slot;
	}
	c->exchange_seconds += pr_clock_seconds() - started;
}

/*
 * Fills slot's owned rows on the parts with the restart distributions (the warm start's first
 * term): each part gets the restart's entries it owns (owned_restart).
 */
static void
owned_restart_fill(DistCluster *c, int slot, const PrRestart *restart)
{
	double		started = pr_clock_seconds();
	const char *values[2] = {psprintf("%d", slot), NULL};

	for (int p = 0; p < c->n_parts; p++)
	{
		DistPart   *part = &c->parts[p];
		Size		size;
		char	   *bytes = owned_restart(c, p, restart, &size);
		int			lengths[2] = {0, (int) size};
		int			formats[2] = {0, 1};

		if (part->conn == NULL)
			shard_state_restart_fill(part->kept->local, slot, bytes, size);
		else
		{
			values[1] = bytes;
			send_query(part, psprintf("SELECT %s.powerrank_shard_restart_fill($1, $2)",
									  part->schema), 2, values, lengths, formats);
			c->exchange_bytes += lengths[1];
		}
		pfree(bytes);
	}
	for (int p = 0; p < c->n_parts; p++)
		if (c->parts[p].conn != NULL)
			PQclear(wait_values(c, &c->parts[p], 0));
	if (c->exported_slot == slot)
		c->exported_slot = -1;
	c->exchange_seconds += pr_clock_seconds() - started;
}

/* How a local part answers what part_answers asks the shards: count doubles into answer. */
typedef void (*LocalAnswer) (DistCluster *c, DistPart *part, double *answer, const void *arg);

/*
 * Sends every shard part the query SELECT function($1, ...) of n_params parameters (as send_query
 * takes them), the binary ones counted as exchanged.
 */
static void
send_parts(DistCluster *c, const char *function, int n_params, const char *const *values,
		   const int *lengths, const int *formats)
{
	StringInfoData query;

	initStringInfo(&query);
	appendStringInfo(&query, "%s(", function);
	for (int i = 0; i < n_params; i++)
		appendStringInfo(&query, "%s$%d", i > 0 ? ", " : "", i + 1);
	appendStringInfoChar(&query, ')');
	for (int p = 0; p < c->n_parts; p++)
		if (c->parts[p].conn != NULL)
		{
			send_query(&c->parts[p], psprintf("SELECT %s.%s", c->parts[p].schema, query.data),
					   n_params, values, lengths, formats);
			for (int i = 0; lengths != NULL && i < n_params; i++)
				c->exchange_bytes += formats[i] == 1 ? lengths[i] : 0;
		}
	pfree(query.data);
}

/*
 * Each part's answer of count doubles to the query sent it, into answers[p * count...] in the
 * parts' order: a shard's read (where the shards exchange with each other, every answer waited
 * for first: wait_peer_answers), a local part's from local_answer.
 */
static void
part_answers(DistCluster *c, int count, double *answers, LocalAnswer local_answer,
			 const void *arg)
{
	if (c->peers)
		wait_peer_answers(c);
	for (int p = 0; p < c->n_parts; p++)
	{
		DistPart   *part = &c->parts[p];

		if (part->conn == NULL)
			local_answer(c, part, answers + (int64) p * count, arg);
		else
		{
			PGresult   *result = wait_values(c, part, count);

			memcpy(answers + (int64) p * count, PQgetvalue(result, 0, 0),
				   count * sizeof(double));
			PQclear(result);
		}
	}
}

/* Adds the parts' answers of count doubles (part_answers) into sums[count], in the parts' order. */
static void
add_part_answers(const DistCluster *c, const double *answers, int count, double *sums)
{
	for (int i = 0; i < count; i++)
		sums[i] = 0.0;
	for (int p = 0; p < c->n_parts; p++)
		for (int i = 0; i < count; i++)
			sums[i] += answers[(int64) p * count + i];
}

/* What a local part's combination or dot products are given. */
typedef struct TermsCall
{
	int			slot;			/* the output (combine) or the slot multiplied (dots) */
	int			n_terms;
	const int32 *slots;
	const double *coef;			/* combine: n_terms x k coefficients */
} TermsCall;

/* A local part's combination (no answer). */
static void
local_combine(DistCluster *c, DistPart *part, double *answer, const void *arg)
{
	const TermsCall *call = (const TermsCall *) arg;

	(void) c;
	(void) answer;
	shard_state_combine(part->kept->local, call->slot, call->n_terms, call->slots, call->coef);
}

/* A local part's dot products over its owned rows, n_terms x k into answer. */
static void
local_dots(DistCluster *c, DistPart *part, double *answer, const void *arg)
{
	const TermsCall *call = (const TermsCall *) arg;

	(void) c;
	shard_state_dots(part->kept->local, call->slot, call->n_terms, call->slots, answer);
}

/*
 * The combination of n_terms slots the parts hold into out_slot, on their owned rows.  Its
 * exported rows are collected by the product that reads it: a run that combines on the parts
 * mixes, and its updates no longer send theirs (the next product reads a combination).
 */
static void
owned_combine(DistCluster *c, int out_slot, int n_terms, const int *slots, const double *coef)
{
	int			k = c->k;
	double		started = pr_clock_seconds();
	int32		slot_numbers[PR_COMBINE_MAX_TERMS];
	TermsCall	call = {out_slot, n_terms, slot_numbers, coef};
	const char *values[3] = {psprintf("%d", out_slot), (const char *) slot_numbers,
	(const char *) coef};
	int			lengths[3] = {0, (int) (n_terms * sizeof(int32)),
	(int) (n_terms * k * sizeof(double))};
	int			formats[3] = {0, 1, 1};
	double		no_answer[1];

	for (int t = 0; t < n_terms; t++)
		slot_numbers[t] = slots[t];
	send_parts(c, "powerrank_shard_combine", 3, values, lengths, formats);
	part_answers(c, 0, no_answer, local_combine, &call);
	if (c->exported_slot == out_slot)
		c->exported_slot = -1;
	c->mixing = true;
	c->exchange_seconds += pr_clock_seconds() - started;
}

/*
 * The dot products of a_slot with n_terms slots, all held by the parts: out[t * k + j], each the
 * parts' sums over their owned rows added in the parts' order (the same slots, the same bits).
 */
static void
owned_dots(DistCluster *c, int a_slot, int n_terms, const int *slots, double *out)
{
	int			count = n_terms * c->k;
	double		started = pr_clock_seconds();
	int32		slot_numbers[PR_COMBINE_MAX_TERMS];
	TermsCall	call = {a_slot, n_terms, slot_numbers, NULL};
	const char *values[2] = {psprintf("%d", a_slot), (const char *) slot_numbers};
	int			lengths[2] = {0, (int) (n_terms * sizeof(int32))};
	int			formats[2] = {0, 1};
	double	   *answers = palloc(c->n_parts * count * sizeof(double));

	for (int t = 0; t < n_terms; t++)
		slot_numbers[t] = slots[t];
	send_parts(c, "powerrank_shard_dots", 2, values, lengths, formats);
	part_answers(c, count, answers, local_dots, &call);
	add_part_answers(c, answers, count, out);
	pfree(answers);
	c->exchange_seconds += pr_clock_seconds() - started;
}

/* A local part's column sums of the slot *arg, then its dangling sums. */
static void
local_column_sums(DistCluster *c, DistPart *part, double *answer, const void *arg)
{
	shard_state_column_sums(part->kept->local, *(const int *) arg, answer, answer + c->k);
}

/*
 * The sums of each column of slot over every node, into sums[k], and over the dangling nodes,
 * into dangling[k] unless NULL: the parts' sums over their owned rows added in the parts' order.
 */
static void
owned_column_sums(DistCluster *c, int slot, double *sums, double *dangling)
{
	int			k = c->k;
	double		started = pr_clock_seconds();
	double	   *answers = palloc(c->n_parts * 2 * k * sizeof(double));
	double	   *both = palloc(2 * k * sizeof(double));
	const char *values[1] = {psprintf("%d", slot)};

	send_parts(c, "powerrank_shard_column_sums", 1, values, NULL, NULL);
	part_answers(c, 2 * k, answers, local_column_sums, &slot);
	add_part_answers(c, answers, 2 * k, both);
	memcpy(sums, both, k * sizeof(double));
	if (dangling != NULL)
		memcpy(dangling, both + k, k * sizeof(double));
	pfree(answers);
	pfree(both);
	c->exchange_seconds += pr_clock_seconds() - started;
}

/* What a local part's normalisation is given. */
typedef struct NormalizeCall
{
	int			slot;
	int			old_slot;
	const double *sums;
} NormalizeCall;

/* A local part's normalisation, its residual into answer[2k] when it compares. */
static void
local_normalize(DistCluster *c, DistPart *part, double *answer, const void *arg)
{
	const NormalizeCall *call = (const NormalizeCall *) arg;

	(void) c;
	shard_state_normalize(part->kept->local, call->slot, call->old_slot, call->sums, answer);
}

/*
 * HITS's normalisation of slot on the parts' owned rows by the whole graph's column sums
 * (sums[k]); when old_slot >= 0, residual[k] receives the residual against old_slot, the parts'
 * sums added in their order, their maxima the largest.
 */
static void
owned_normalize(DistCluster *c, int slot, int old_slot, const double *sums, PrResidual *residual)
{
	int			k = c->k;
	double		started = pr_clock_seconds();
	NormalizeCall call = {slot, old_slot, sums};
	const char *values[3] = {psprintf("%d", slot), psprintf("%d", old_slot),
	(const char *) sums};
	int			lengths[3] = {0, 0, (int) (k * sizeof(double))};
	int			formats[3] = {0, 0, 1};
	int			count = old_slot >= 0 ? 2 * k : 0;
	double	   *answers = palloc(Max(c->n_parts * count, 1) * sizeof(double));

	send_parts(c, "powerrank_shard_normalize", 3, values, lengths, formats);
	part_answers(c, count, answers, local_normalize, &call);
	for (int j = 0; old_slot >= 0 && j < k; j++)
	{
		residual[j].l1 = residual[j].linf = 0.0;
		for (int p = 0; p < c->n_parts; p++)
		{
			residual[j].l1 += answers[p * count + j];
			residual[j].linf = Max(residual[j].linf, answers[p * count + k + j]);
		}
	}
	pfree(answers);
	if (c->exported_slot == slot)
		c->exported_slot = -1;
	c->exchange_seconds += pr_clock_seconds() - started;
}

/* What a local part's push product is given. */
typedef struct PushCall
{
	int			x_slot;
	int			y_slot;
	const double *x_sums;
} PushCall;

/* A local part's push product: its halo rows' sums into part->y (the relay: no group here). */
static void
local_push(DistCluster *c, DistPart *part, double *answer, const void *arg)
{
	const PushCall *call = (const PushCall *) arg;

	(void) c;
	(void) answer;
	shard_state_push(part->kept->local, call->x_slot, call->y_slot, call->x_sums, false, part->y,
					 NULL);
}

/* A local part's exported rows' sums from the others (in part->x) added: its column sums. */
static void
local_add_exported(DistCluster *c, DistPart *part, double *answer, const void *arg)
{
	(void) c;
	shard_state_add_exported(part->kept->local, *(const int *) arg, part->x, answer);
}

/*
 * HITS's push product of x_slot into y_slot on the parts' owned rows (x_slot first normalised by
 * the whole graph's column sums x_sums[k], unless NULL): every part sums its edges into its rows,
 * and the sums of a part's halo rows go to their owners, which add them up — shard to shard where
 * the shards exchange with each other, else through here (added in the parts' order into
 * c->exported, then each owner given its exported rows').  sums[k] receives y's column sums.
 */
static void
owned_push(DistCluster *c, int x_slot, int y_slot, const double *x_sums, double *sums)
{
	int			k = c->k;
	double		started = pr_clock_seconds();
	PushCall	call = {x_slot, y_slot, x_sums};
	const char *values[4] = {psprintf("%d", x_slot), psprintf("%d", y_slot),
	(const char *) x_sums, c->peers ? "true" : "false"};
	int			lengths[4] = {0, 0, x_sums != NULL ? (int) (k * sizeof(double)) : 0, 0};
	int			formats[4] = {0, 0, 1, 0};
	double	   *answers = palloc(c->n_parts * k * sizeof(double));
	const char *y_text = values[1];

	if (values[2] == NULL)
		values[2] = "";
	if (c->exported_slot == x_slot || c->exported_slot == y_slot)
		c->exported_slot = -1;
	if (c->peers)
	{
		/* the halo rows' sums cross once, shard to shard, to their owners */
		send_parts(c, "powerrank_shard_push", 4, values, lengths, formats);
		part_answers(c, k, answers, local_push, &call);
		for (int p = 0; p < c->n_parts; p++)
			c->peer_bytes += c->owners->count[SHARD_ROWS_HALO][p] * k * sizeof(double);
		add_part_answers(c, answers, k, sums);
		pfree(answers);
		c->exchange_seconds += pr_clock_seconds() - started;
		return;
	}
	send_parts(c, "powerrank_shard_push", 4, values, lengths, formats);
	/* every halo row's sums, added up from 0 in the parts' order */
	for (int p = 0; p < c->n_parts; p++)
	{
		DistPart   *part = &c->parts[p];
		const int32 *halo = c->owners->rows[SHARD_ROWS_HALO][p];

		for (int64 i = 0; i < c->owners->count[SHARD_ROWS_HALO][p]; i++)
			memset(c->exported + (int64) part->to_global[halo[i]] * k, 0, k * sizeof(double));
	}
	for (int p = 0; p < c->n_parts; p++)
	{
		DistPart   *part = &c->parts[p];
		const int32 *halo = c->owners->rows[SHARD_ROWS_HALO][p];
		int64		count = c->owners->count[SHARD_ROWS_HALO][p];
		PGresult   *result = NULL;
		const double *partial = part->y;

		if (part->conn == NULL)
			local_push(c, part, NULL, &call);
		else
		{
			result = wait_values(c, part, count * k);
			memcpy(part->y, PQgetvalue(result, 0, 0), count * k * sizeof(double));
			PQclear(result);
		}
		for (int64 i = 0; i < count; i++)
		{
			double	   *row = c->exported + (int64) part->to_global[halo[i]] * k;

			for (int j = 0; j < k; j++)
				row[j] += partial[i * k + j];
		}
	}
	/* each owner adds the others' sums of its exported rows */
	for (int p = 0; p < c->n_parts; p++)
	{
		DistPart   *part = &c->parts[p];
		const int32 *rows = c->owners->rows[SHARD_ROWS_EXPORTED][p];
		int64		count = c->owners->count[SHARD_ROWS_EXPORTED][p];

		for (int64 i = 0; i < count; i++)
			memcpy(part->x + i * k, c->exported + (int64) part->to_global[rows[i]] * k,
				   k * sizeof(double));
	}
	{
		const char *add_values[2] = {y_text, NULL};
		int			add_lengths[2] = {0, 0};
		int			add_formats[2] = {0, 1};

		for (int p = 0; p < c->n_parts; p++)
			if (c->parts[p].conn != NULL)
			{
				add_values[1] = (const char *) c->parts[p].x;
				add_lengths[1] = (int) (c->owners->count[SHARD_ROWS_EXPORTED][p] * k *
										sizeof(double));
				send_query(&c->parts[p],
						   psprintf("SELECT %s.powerrank_shard_add_exported($1, $2)",
									c->parts[p].schema), 2, add_values, add_lengths, add_formats);
				c->exchange_bytes += add_lengths[1];
			}
		part_answers(c, k, answers, local_add_exported, &y_slot);
	}
	add_part_answers(c, answers, k, sums);
	pfree(answers);
	c->exchange_seconds += pr_clock_seconds() - started;
}

/* A candidate of the merged top-k: a node of the whole graph and its value. */
typedef struct RankedNode
{
	int32		node;
	double		value;
} RankedNode;

/* qsort comparison of RankedNode by node. */
static int
ranked_node_cmp(const void *a, const void *b)
{
	int32		x = ((const RankedNode *) a)->node;
	int32		y = ((const RankedNode *) b)->node;

	return (x > y) - (x < y);
}

/*
 * The top_k best nodes of every column of a slot the parts hold, merged from each part's best
 * owned rows (exact: every node is owned by one part, and a part's ties go to its smaller rows,
 * the smaller nodes): min(top_k, n) ids and values per column into index / value, column after
 * column, in pr_top_k's order.
 */
static void
owned_top_k(DistCluster *c, int slot, int64 top_k, int32 *index, double *value)
{
	int			k = c->k;
	int64		n = c->graph.n_nodes;
	int64		count = Min(top_k, n);
	int64		total = 0;
	int64	   *part_count = palloc(c->n_parts * sizeof(int64));
	int32	  **rows = palloc(c->n_parts * sizeof(int32 *));
	double	  **values = palloc(c->n_parts * sizeof(double *));
	const char *params[2] = {psprintf("%d", slot), psprintf(INT64_FORMAT, top_k)};
	RankedNode *candidates;
	double	   *candidate_values;
	int32	   *best;
	double		started = pr_clock_seconds();

	for (int p = 0; p < c->n_parts; p++)
	{
		DistPart   *part = &c->parts[p];

		part_count[p] = Min(top_k, c->owners->count[SHARD_ROWS_OWNED][p]);
		rows[p] = palloc(Max(part_count[p] * k, 1) * sizeof(int32));
		values[p] = palloc(Max(part_count[p] * k, 1) * sizeof(double));
		total += part_count[p];
		if (part->conn != NULL)
			send_text_query(part, psprintf("SELECT %s.powerrank_shard_top_k($1, $2)",
										   part->schema), 2, params);
	}
	for (int p = 0; p < c->n_parts; p++)
	{
		DistPart   *part = &c->parts[p];
		int64		entries = part_count[p] * k;

		if (part->conn == NULL)
			shard_state_top_k(part->kept->local, slot, top_k, rows[p], values[p]);
		else
		{
			PGresult   *result = wait_result(c, part);

			if (PQgetlength(result, 0, 0) != (int) (entries * (sizeof(int32) + sizeof(double))))
			{
				PQclear(result);
				ereport(ERROR,
						(errcode(ERRCODE_PROTOCOL_VIOLATION),
						 errmsg("shard server \"%s\" answered a top-k of the wrong size",
								part->server)));
			}
			memcpy(rows[p], PQgetvalue(result, 0, 0), entries * sizeof(int32));
			memcpy(values[p], PQgetvalue(result, 0, 0) + entries * sizeof(int32),
				   entries * sizeof(double));
			c->exchange_bytes += PQgetlength(result, 0, 0);
			PQclear(result);
		}
		for (int64 i = 0; i < entries; i++)
			if (rows[p][i] < 0 || rows[p][i] >= part->kept->n_nodes)
				ereport(ERROR,
						(errcode(ERRCODE_PROTOCOL_VIOLATION),
						 errmsg("shard server \"%s\" answered a top-k of rows it does not hold",
								part->server)));
	}
	candidates = palloc(Max(total, 1) * sizeof(RankedNode));
	candidate_values = palloc(Max(total, 1) * sizeof(double));
	best = palloc(Max(count, 1) * sizeof(int32));
	for (int j = 0; j < k; j++)
	{
		int64		at = 0;

		for (int p = 0; p < c->n_parts; p++)
			for (int64 i = 0; i < part_count[p]; i++, at++)
			{
				candidates[at].node = c->parts[p].to_global[rows[p][j * part_count[p] + i]];
				candidates[at].value = values[p][j * part_count[p] + i];
			}
		/* in node order: pr_top_k's ties go to the smaller index, here the smaller node */
		qsort(candidates, total, sizeof(RankedNode), ranked_node_cmp);
		for (int64 i = 0; i < total; i++)
			candidate_values[i] = candidates[i].value;
		pr_top_k_values(candidate_values, total, 1, 0, count, best, value + j * count,
						&pr_malloc_allocator);
		for (int64 i = 0; i < count; i++)
			index[j * count + i] = candidates[best[i]].node;
	}
	for (int p = 0; p < c->n_parts; p++)
	{
		pfree(rows[p]);
		pfree(values[p]);
	}
	pfree(rows);
	pfree(values);
	pfree(part_count);
	pfree(candidates);
	pfree(candidate_values);
	pfree(best);
	c->exchange_seconds += pr_clock_seconds() - started;
}

/*
 * Where a slot's values are (DistEngine.where): on this backend's vectors engine, on the parts
 * (each part's owned rows: owned_product, owned_update), or both.
 */
#define SLOT_HERE 1
#define SLOT_PARTS 2
#define SLOT_FILLED 4			/* here, every value DistEngine.fill_value */

/*
 * The distributed engine: the CPU engine of this backend for the vectors, the parts' products.
 * Where the parts own rows (OwnerPlan), a pull product and the PageRank update after it, HITS's
 * push product and normalisation, combinations and dot products run on the parts, each on its own
 * rows, and their result stays there: the next product exchanges only the halos (exchange_halos),
 * a push product's sums of halo rows go to their owners (owned_push), and this backend sums the
 * parts' scalars (dangling and column sums, residuals); a top-k of a slot only they hold is merged
 * from theirs (owned_top_k).  Every other
 * operation runs on the vectors engine, a slot the parts hold being gathered first (collect_rows:
 * each node's value from its owner), and writes its slot here.
 */
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
	int			n_slots;
	uint8	   *where;			/* [n_slots] SLOT_HERE / SLOT_PARTS / SLOT_FILLED bits */
	double		fill_value[SHARD_MAX_SLOTS];	/* a SLOT_FILLED slot's value */
	double	   *dangling;		/* [k] x's dangling sums taken by the last product on the parts */
	int			dangling_slot;	/* the slot they are of (-1: none) */
	PrResidual *residual;		/* [k] the last update's on the parts */
	bool		residual_owned; /* the last residual is that one (else the vectors engine's) */
	int			pending_x;		/* a product on the parts not sent yet (run_pending): its x */
	int			pending_y;		/* and y slot (-1: none) */
	double	   *sums;			/* [k] the column sums of a slot on the parts, from the
								 * product that wrote it (HITS's normalisation) */
	int			sums_slot;		/* the slot they are of (-1: none) */
	double	   *scale_sums;		/* [k] the column sums a normalisation on the parts divides */
	int			scale_slot;		/* by, not sent yet (run_pending; the push product that
								 * follows takes it along) (-1: none) */
} DistEngine;

#define VECTORS(base) (((DistEngine *) (base))->vectors)

/* Whether the parts run the vector operations of their own rows. */
static inline bool
rows_owned(const DistEngine *e)
{
	return e->cluster->owners != NULL && e->cluster->owners->rows_owned;
}

/*
 * Sends what was left for a later call to take along before any other operation: the product on
 * the parts that dist_product left for the update (owned_step), the normalisation that
 * dist_normalize left for the push product (owned_push).
 */
static void
run_pending(DistEngine *e)
{
	if (e->scale_slot >= 0)
	{
		int			slot = e->scale_slot;

		e->scale_slot = -1;
		owned_normalize(e->cluster, slot, -1, e->scale_sums, NULL);
	}
	if (e->pending_y < 0)
		return;
	owned_product(e->cluster, PR_PRODUCT_PULL_NORMALIZED, e->pending_x, e->pending_y,
				  SHARD_GIVEN_HALO, NULL, e->dangling);
	e->pending_x = e->pending_y = -1;
}

/* Forgets what was known of slot's values on the parts (it is written again). */
static void
forget_slot_sums(DistEngine *e, int slot)
{
	if (e->dangling_slot == slot)
		e->dangling_slot = -1;
	if (e->sums_slot == slot)
		e->sums_slot = -1;
}

/* Makes the vectors engine hold slot's values (gathered from the parts' owned rows). */
static PrStatus
slot_here(DistEngine *e, int slot, PrError *err)
{
	PrStatus	status;

	run_pending(e);
	if (slot < 0 || slot >= e->n_slots || (e->where[slot] & SLOT_HERE) != 0)
		return PR_OK;
	collect_rows(e->cluster, slot, SHARD_ROWS_OWNED, e->x);
	status = e->vectors->ops->upload(e->vectors, slot, e->x, err);
	if (status == PR_OK)
		e->where[slot] |= SLOT_HERE;
	return status;
}

/* Marks slot as written on the vectors engine (the parts' copy is stale). */
static void
written_here(DistEngine *e, int slot)
{
	run_pending(e);
	if (slot < 0 || slot >= e->n_slots)
		return;
	e->where[slot] = SLOT_HERE;
	forget_slot_sums(e, slot);
}

/*
 * Prepares the vectors' engine and the parts.  A prepare for the same columns and products keeps
 * every slot where it is (the driver adds slots for mixing); another gathers nothing: the slots'
 * values are forgotten with the parts' preparation.
 */
static PrStatus
dist_prepare(PrEngine *base, const PrGraph *g, int k, int n_slots, unsigned needs, PrError *err)
{
	DistEngine *e = (DistEngine *) base;
	size_t		values = (size_t) g->n_nodes * (size_t) k;
	bool		same = e->cluster->k == k && e->cluster->needs == needs;
	PrStatus	status = VECTORS(base)->ops->prepare(VECTORS(base), g, k, n_slots, needs, err);
	uint8	   *where;

	run_pending(e);
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
	if (!same || n_slots > e->n_slots)
	{
		where = (uint8 *) pr_alloc_array(&e->alloc, Max(n_slots, 1), 1);
		if (where == NULL)
			return pr_error_set(err, PR_ERR_NOMEM, "out of memory for %d slots", n_slots);
		memset(where, SLOT_HERE, Max(n_slots, 1));
		if (same && e->where != NULL)
			memcpy(where, e->where, e->n_slots);
		pr_free(&e->alloc, e->where);
		e->where = where;
		e->n_slots = n_slots;
	}
	if (!same)
	{
		pr_free(&e->alloc, e->dangling);
		pr_free(&e->alloc, e->residual);
		pr_free(&e->alloc, e->sums);
		pr_free(&e->alloc, e->scale_sums);
		e->dangling = (double *) pr_alloc_array(&e->alloc, k, sizeof(double));
		e->residual = (PrResidual *) pr_alloc_array(&e->alloc, k, sizeof(PrResidual));
		e->sums = (double *) pr_alloc_array(&e->alloc, k, sizeof(double));
		e->scale_sums = (double *) pr_alloc_array(&e->alloc, k, sizeof(double));
		if (e->dangling == NULL || e->residual == NULL || e->sums == NULL ||
			e->scale_sums == NULL)
			return pr_error_set(err, PR_ERR_NOMEM, "out of memory for %d columns", k);
		e->dangling_slot = -1;
		e->sums_slot = -1;
		e->residual_owned = false;
	}
	prepare_parts(e->cluster, k, needs);
	if (e->cluster->peers)
		snprintf(e->name, sizeof(e->name), "distributed(%d, gloo)", e->cluster->n_parts);
	return PR_OK;
}

/*
 * y_slot = product(x_slot).  A pull product runs on the parts' owned rows when they own rows (x's
 * halos exchanged when the parts hold x, else x sent from here: its fill value, or every part's
 * local rows), and y stays there (a normalised one's sent with the update that follows when the
 * shards exchange the halos and x's dangling sums are known: run_pending, owned_step; a plain
 * one's column sums kept for its normalisation); so does a push product of a slot the parts hold
 * (owned_push, taking x's normalisation along); any other product is relayed whole: x from here,
 * y back here.
 */
static PrStatus
dist_product(PrEngine *base, PrProduct product, int x_slot, int y_slot, PrError *err)
{
	DistEngine *e = (DistEngine *) base;
	PrStatus	status;
	bool		on_parts = rows_owned(e) && x_slot != y_slot && x_slot >= 0 && y_slot >= 0 &&
		x_slot < SHARD_MAX_SLOTS && y_slot < SHARD_MAX_SLOTS &&
		x_slot < e->n_slots && y_slot < e->n_slots;

	if (on_parts && product == PR_PRODUCT_PUSH && (e->where[x_slot] & SLOT_PARTS) != 0)
	{
		/* x's normalisation left for this call goes with it */
		bool		scale = e->scale_slot == x_slot;

		if (scale)
			e->scale_slot = -1;
		run_pending(e);
		owned_push(e->cluster, x_slot, y_slot, scale ? e->scale_sums : NULL, e->sums);
		if (scale)
		{
			e->where[x_slot] = SLOT_PARTS;
			forget_slot_sums(e, x_slot);
		}
		e->where[y_slot] = SLOT_PARTS;
		forget_slot_sums(e, y_slot);
		e->sums_slot = y_slot;
		return PR_OK;
	}
	run_pending(e);
	if (on_parts && (product == PR_PRODUCT_PULL_NORMALIZED || product == PR_PRODUCT_PULL))
	{
		ShardGiven	given = (e->where[x_slot] & SLOT_PARTS) != 0 ? SHARD_GIVEN_HALO :
			(e->where[x_slot] & SLOT_FILLED) != 0 ? SHARD_GIVEN_FILL : SHARD_GIVEN_ALL;

		if (product == PR_PRODUCT_PULL_NORMALIZED && given == SHARD_GIVEN_HALO &&
			e->cluster->peers && e->dangling_slot == x_slot)
		{
			/* x's dangling sums are known: the update that follows takes the product along */
			e->pending_x = x_slot;
			e->pending_y = y_slot;
			e->where[y_slot] = SLOT_PARTS;
			return PR_OK;
		}
		if (given == SHARD_GIVEN_FILL)
			for (int j = 0; j < e->cluster->k; j++)
				e->x[j] = e->fill_value[x_slot];
		else if (given == SHARD_GIVEN_ALL &&
				 (status = e->vectors->ops->download(e->vectors, x_slot, e->x, err)) != PR_OK)
			return status;
		forget_slot_sums(e, y_slot);
		e->where[x_slot] |= SLOT_PARTS;
		e->where[y_slot] = SLOT_PARTS;
		if (product == PR_PRODUCT_PULL)
		{
			/* HITS: the answer is y's column sums, its normalisation's */
			owned_product(e->cluster, product, x_slot, y_slot, given,
						  given == SHARD_GIVEN_HALO ? NULL : e->x, e->sums);
			e->sums_slot = y_slot;
			return PR_OK;
		}
		owned_product(e->cluster, product, x_slot, y_slot, given,
					  given == SHARD_GIVEN_HALO ? NULL : e->x, e->dangling);
		e->dangling_slot = x_slot;
		return PR_OK;
	}
	if ((status = slot_here(e, x_slot, err)) != PR_OK ||
		(status = e->vectors->ops->download(e->vectors, x_slot, e->x, err)) != PR_OK)
		return status;
	relay_product(e->cluster, product, e->x, e->y);
	written_here(e, y_slot);
	return e->vectors->ops->upload(e->vectors, y_slot, e->y, err);
}

/*
 * The PageRank update: on the parts' owned rows when they hold y (a product on them) and x, with
 * x's dangling sums (that product's, or the last update's of x), the product left for it in the
 * same call; else here.
 */
static PrStatus
dist_pagerank_update(PrEngine *base, int y_slot, int x_slot, double alpha,
					 const PrRestart *restart, PrError *err)
{
	DistEngine *e = (DistEngine *) base;
	PrStatus	status;

	if (x_slot != y_slot && y_slot >= 0 && y_slot < e->n_slots && x_slot >= 0 &&
		x_slot < e->n_slots && e->where[y_slot] == SLOT_PARTS &&
		(e->where[x_slot] & SLOT_PARTS) != 0 && e->dangling_slot == x_slot && restart != NULL &&
		(restart->uniform || restart->k == e->cluster->k))
	{
		double	   *y_dangling = palloc(e->cluster->k * sizeof(double));

		if (e->pending_x == x_slot && e->pending_y == y_slot)
		{
			/* the product, the shards' exchange and the update: one round trip */
			owned_step(e->cluster, x_slot, y_slot, alpha, e->dangling, restart, e->residual,
					   y_dangling);
			e->pending_x = e->pending_y = -1;
		}
		else
		{
			run_pending(e);
			owned_update(e->cluster, y_slot, x_slot, alpha, e->dangling, restart, e->residual,
						 y_dangling);
		}
		e->residual_owned = true;
		/* y's dangling sums: its next product on the parts needs none of its own */
		memcpy(e->dangling, y_dangling, e->cluster->k * sizeof(double));
		e->dangling_slot = y_slot;
		pfree(y_dangling);
		return PR_OK;
	}
	run_pending(e);
	if ((status = slot_here(e, y_slot, err)) != PR_OK ||
		(status = slot_here(e, x_slot, err)) != PR_OK)
		return status;
	written_here(e, y_slot);
	e->residual_owned = false;
	return VECTORS(base)->ops->pagerank_update(VECTORS(base), y_slot, x_slot, alpha, restart,
											   err);
}

/* The residual of the last update or normalisation, wherever it ran. */
static PrStatus
dist_residual(PrEngine *base, PrResidual *out, PrError *err)
{
	DistEngine *e = (DistEngine *) base;

	run_pending(e);
	if (!e->residual_owned)
		return VECTORS(base)->ops->residual(VECTORS(base), out, err);
	memcpy(out, e->residual, e->cluster->k * sizeof(PrResidual));
	return PR_OK;
}

/* The operations that write a slot here from nothing the parts hold. */
static PrStatus
dist_fill(PrEngine *base, int slot, double value, PrError *err)
{
	DistEngine *e = (DistEngine *) base;

	written_here(e, slot);
	if (slot >= 0 && slot < e->n_slots && slot < SHARD_MAX_SLOTS)
	{
		e->where[slot] |= SLOT_FILLED;
		e->fill_value[slot] = value;
	}
	return VECTORS(base)->ops->fill(VECTORS(base), slot, value, err);
}

/* Whether the parts can hold slot (they own rows, and keep that many slots). */
static inline bool
slot_for_parts(const DistEngine *e, int slot)
{
	return rows_owned(e) && slot >= 0 && slot < e->n_slots && slot < SHARD_MAX_SLOTS;
}

/*
 * A start vector: kept here and, where the parts own rows, each part given its owned rows (the
 * first product exchanges only the halos).
 */
static PrStatus
dist_upload(PrEngine *base, int slot, const double *host, PrError *err)
{
	DistEngine *e = (DistEngine *) base;
	PrStatus	status;

	written_here(e, slot);
	status = VECTORS(base)->ops->upload(VECTORS(base), slot, host, err);
	if (status == PR_OK && slot_for_parts(e, slot))
	{
		owned_set_rows(e->cluster, slot, host, e->cluster->k);
		e->where[slot] |= SLOT_PARTS;
	}
	return status;
}

/* The restart distributions: filled on the parts' owned rows where they own rows, else here. */
static PrStatus
dist_restart_fill(PrEngine *base, int slot, const PrRestart *restart, PrError *err)
{
	DistEngine *e = (DistEngine *) base;

	written_here(e, slot);
	if (slot_for_parts(e, slot) && restart != NULL && !restart->uniform &&
		restart->k == e->cluster->k)
	{
		owned_restart_fill(e->cluster, slot, restart);
		e->where[slot] = SLOT_PARTS;
		return PR_OK;
	}
	return VECTORS(base)->ops->restart_fill(VECTORS(base), slot, restart, err);
}

/*
 * Gives the parts slot's owned rows when only this backend holds it (an operation on the parts
 * reads it): the same bytes as gathering it, and what the operation writes stays there.
 */
static PrStatus
slot_on_parts(DistEngine *e, int slot, PrError *err)
{
	PrStatus	status;

	if ((e->where[slot] & SLOT_PARTS) != 0)
		return PR_OK;
	status = e->vectors->ops->download(e->vectors, slot, e->x, err);
	if (status != PR_OK)
		return status;
	owned_set_rows(e->cluster, slot, e->x, e->cluster->k);
	e->where[slot] |= SLOT_PARTS;
	return PR_OK;
}

/* The operations that read slots here (gathered first when the parts hold them). */
static PrStatus
dist_download(PrEngine *base, int slot, double *host, PrError *err)
{
	PrStatus	status = slot_here((DistEngine *) base, slot, err);

	return status != PR_OK ? status :
		VECTORS(base)->ops->download(VECTORS(base), slot, host, err);
}

/* Whether only the parts hold slot (its top-k is merged from theirs). */
static inline bool
only_on_parts(const DistEngine *e, int slot)
{
	return slot >= 0 && slot < e->n_slots && e->where[slot] == SLOT_PARTS;
}

/* The top-k of a column: merged from the parts' when only they hold the slot. */
static PrStatus
dist_top_k(PrEngine *base, int slot, int col, int64_t top_k, int32_t *index, double *value,
		   PrError *err)
{
	DistEngine *e = (DistEngine *) base;
	int64		count = Min(top_k, e->cluster->graph.n_nodes);
	PrStatus	status;

	run_pending(e);
	if (only_on_parts(e, slot) && col >= 0 && col < e->cluster->k)
	{
		int32	   *all_index = palloc(Max(count * e->cluster->k, 1) * sizeof(int32));
		double	   *all_value = palloc(Max(count * e->cluster->k, 1) * sizeof(double));

		owned_top_k(e->cluster, slot, top_k, all_index, all_value);
		memcpy(index, all_index + col * count, count * sizeof(int32));
		memcpy(value, all_value + col * count, count * sizeof(double));
		pfree(all_index);
		pfree(all_value);
		return PR_OK;
	}
	status = slot_here(e, slot, err);
	return status != PR_OK ? status :
		VECTORS(base)->ops->top_k(VECTORS(base), slot, col, top_k, index, value, err);
}

/* The top-k of every column: merged from the parts' when only they hold the slot. */
static PrStatus
dist_top_k_columns(PrEngine *base, int slot, int64_t top_k, int32_t *index, double *value,
				   PrError *err)
{
	DistEngine *e = (DistEngine *) base;
	PrStatus	status;

	run_pending(e);
	if (only_on_parts(e, slot))
	{
		owned_top_k(e->cluster, slot, top_k, index, value);
		return PR_OK;
	}
	status = slot_here(e, slot, err);
	return status != PR_OK ? status :
		VECTORS(base)->ops->top_k_columns(VECTORS(base), slot, top_k, index, value, err);
}

/*
 * The column sums and dangling sums of a slot: here when this backend holds it, else the parts'
 * over their owned rows, added here.
 */
static PrStatus
dist_column_sums(PrEngine *base, int slot, double *sums, double *dangling, PrError *err)
{
	DistEngine *e = (DistEngine *) base;
	PrStatus	status;

	run_pending(e);
	if (only_on_parts(e, slot) && slot < SHARD_MAX_SLOTS)
	{
		owned_column_sums(e->cluster, slot, sums, dangling);
		return PR_OK;
	}
	status = slot_here(e, slot, err);

	return status != PR_OK ? status :
		VECTORS(base)->ops->column_sums(VECTORS(base), slot, sums, dangling, err);
}

/* Whether the parts hold a_slot (a_slot < 0: none) and every one of n_terms slots. */
static bool
all_on_parts(const DistEngine *e, int a_slot, int n_terms, const int *slots)
{
	if (!rows_owned(e) || (a_slot >= 0 && (a_slot >= e->n_slots ||
										   (e->where[a_slot] & SLOT_PARTS) == 0)))
		return false;
	for (int t = 0; t < n_terms; t++)
		if (slots[t] < 0 || slots[t] >= e->n_slots || (e->where[slots[t]] & SLOT_PARTS) == 0)
			return false;
	return true;
}

/* The dot products: over the parts' owned rows when they hold every slot, else here. */
static PrStatus
dist_dots(PrEngine *base, int a_slot, int n_terms, const int *slots, double *out, PrError *err)
{
	DistEngine *e = (DistEngine *) base;
	PrStatus	status;

	run_pending(e);
	if (n_terms >= 1 && n_terms <= PR_COMBINE_MAX_TERMS && all_on_parts(e, a_slot, n_terms, slots))
	{
		owned_dots(e->cluster, a_slot, n_terms, slots, out);
		return PR_OK;
	}
	status = slot_here(e, a_slot, err);

	for (int t = 0; status == PR_OK && t < n_terms; t++)
		status = slot_here((DistEngine *) base, slots[t], err);
	return status != PR_OK ? status :
		VECTORS(base)->ops->dots(VECTORS(base), a_slot, n_terms, slots, out, err);
}

/*
 * HITS's normalisation: on the parts' owned rows when they hold slot (and old_slot, when it
 * compares), by the column sums the product that wrote slot gave (else asked of the parts); one
 * that does not compare is left for the push product that reads slot next (run_pending).  Else
 * here.
 */
static PrStatus
dist_normalize(PrEngine *base, int slot, int old_slot, PrError *err)
{
	DistEngine *e = (DistEngine *) base;
	PrStatus	status;

	run_pending(e);
	if (rows_owned(e) && slot >= 0 && slot < e->n_slots && slot < SHARD_MAX_SLOTS &&
		(e->where[slot] & SLOT_PARTS) != 0 && old_slot != slot &&
		(old_slot < 0 || (old_slot < e->n_slots && (e->where[old_slot] & SLOT_PARTS) != 0)))
	{
		if (e->sums_slot != slot)
			owned_column_sums(e->cluster, slot, e->sums, NULL);
		e->where[slot] = SLOT_PARTS;
		forget_slot_sums(e, slot);
		if (old_slot < 0)
		{
			memcpy(e->scale_sums, e->sums, e->cluster->k * sizeof(double));
			e->scale_slot = slot;
			return PR_OK;
		}
		owned_normalize(e->cluster, slot, old_slot, e->sums, e->residual);
		e->residual_owned = true;
		return PR_OK;
	}
	if ((status = slot_here(e, slot, err)) != PR_OK ||
		(status = slot_here(e, old_slot, err)) != PR_OK)
		return status;
	written_here(e, slot);
	e->residual_owned = false;
	return VECTORS(base)->ops->normalize(VECTORS(base), slot, old_slot, err);
}

/*
 * The combination: on the parts' owned rows when they hold a slot of it (those only this backend
 * holds given to them first: slot_on_parts) and out stays there, else here.
 */
static PrStatus
dist_combine(PrEngine *base, int out_slot, int n_terms, const int *slots, const double *coef,
			 PrError *err)
{
	DistEngine *e = (DistEngine *) base;
	PrStatus	status = PR_OK;
	bool		some_on_parts = false;

	run_pending(e);
	for (int t = 0; t < n_terms && t < PR_COMBINE_MAX_TERMS; t++)
		some_on_parts |= only_on_parts(e, slots[t]);
	for (int t = 0; some_on_parts && slot_for_parts(e, out_slot) && t < n_terms &&
		 n_terms <= PR_COMBINE_MAX_TERMS; t++)
		if (slot_for_parts(e, slots[t]) &&
			(status = slot_on_parts(e, slots[t], err)) != PR_OK)
			return status;
	if (n_terms >= 1 && n_terms <= PR_COMBINE_MAX_TERMS && out_slot >= 0 &&
		out_slot < e->n_slots && out_slot < SHARD_MAX_SLOTS &&
		all_on_parts(e, -1, n_terms, slots))
	{
		owned_combine(e->cluster, out_slot, n_terms, slots, coef);
		e->where[out_slot] = SLOT_PARTS;
		if (e->dangling_slot == out_slot)
			e->dangling_slot = -1;
		return PR_OK;
	}

	for (int t = 0; status == PR_OK && t < n_terms; t++)
		status = slot_here((DistEngine *) base, slots[t], err);
	if (status != PR_OK)
		return status;
	written_here((DistEngine *) base, out_slot);
	return VECTORS(base)->ops->combine(VECTORS(base), out_slot, n_terms, slots, coef, err);
}

/*
 * The far-field vector, kept with the session's node set (MergedNodes.far_field): it depends on the
 * graphs only, so every run on the same parts' graphs takes it (each part given its owned rows,
 * one column for all: owned_set_rows) instead of making it again; a node set merged anew (a part's
 * graph changed, other parts) starts without one.  keep = true takes column 0 of slot (read from
 * the parts when only they hold it) as it; keep = false fills every column of slot with it
 * (*found).
 */
static PrStatus
dist_far_field(PrEngine *base, int slot, bool keep, bool *found, PrError *err)
{
	DistEngine *e = (DistEngine *) base;
	MergedNodes *m = e->cluster->nodes;
	int64		n = e->cluster->graph.n_nodes;
	int			k = e->cluster->k;
	PrStatus	status;

	if (keep)
	{
		/* read, not moved: the slot stays where it is, as in the runs that take the kept one */
		run_pending(e);
		if (only_on_parts(e, slot))
			collect_rows(e->cluster, slot, SHARD_ROWS_OWNED, e->x);
		else if ((status = e->vectors->ops->download(e->vectors, slot, e->x, err)) != PR_OK)
			return status;
		if (m->far_field == NULL)
			m->far_field = MemoryContextAllocHuge(m->cxt, Max(n, 1) * sizeof(double));
		for (int64 v = 0; v < n; v++)
			m->far_field[v] = e->x[v * k];
		*found = true;
		return PR_OK;
	}
	*found = m->far_field != NULL;
	if (!*found)
		return PR_OK;
	written_here(e, slot);
	if (slot_for_parts(e, slot))
	{
		owned_set_rows(e->cluster, slot, m->far_field, 1);
		e->where[slot] = SLOT_PARTS;
		return PR_OK;
	}
	for (int64 v = 0; v < n; v++)
		for (int j = 0; j < k; j++)
			e->x[v * k + j] = m->far_field[v];
	return e->vectors->ops->upload(e->vectors, slot, e->x, err);
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
	pr_free(&alloc, e->where);
	pr_free(&alloc, e->dangling);
	pr_free(&alloc, e->residual);
	pr_free(&alloc, e->sums);
	pr_free(&alloc, e->scale_sums);
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
	e->dangling_slot = -1;
	e->pending_x = e->pending_y = -1;
	e->sums_slot = e->scale_slot = -1;
	snprintf(e->name, sizeof(e->name), "distributed(%d)", cluster->n_parts);
	e->ops = *vectors->ops;
	e->ops.name = e->name;
	e->ops.prepare = dist_prepare;
	e->ops.product = dist_product;
	e->ops.restart_local = NULL;
	e->ops.own_rows = NULL;
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
