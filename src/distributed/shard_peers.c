/*
 * shard_peers.c — the shard side of the shard-to-shard exchange (shard.h): the session's group of
 * the run's shards (peer_exchange.h, Gloo over TCP) and what this part sends to and receives from
 * each of them before a product on owned rows.
 *
 * The coordinator makes the group in two calls: powerrank_shard_peers_open makes this session's
 * end of it (bound to the address the coordinator reached this server at) and answers the
 * addresses of its pairs; powerrank_shard_peers_connect hands over every other shard's address
 * for this one, and the lists of rows to send to each peer and to receive from it, and connects.
 * Both answer a status byte (0: done, else the reason follows as text) rather than an ERROR: a
 * group that cannot be made leaves the run to the coordinator's relay.  An exchange that fails or
 * is interrupted closes the group (it cannot serve again) and raises the ERROR or the cancel here,
 * after the C++ has returned.
 */
#include "powerrank.h"

#include <netdb.h>

#include "fmgr.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "distributed/peer_exchange.h"
#include "distributed/shard.h"

PG_FUNCTION_INFO_V1(powerrank_shard_peers_open);
PG_FUNCTION_INFO_V1(powerrank_shard_peers_connect);

/* This session's group and the rows this part exchanges with each peer. */
typedef struct SessionPeers
{
	MemoryContext cxt;
	PeerGroup  *group;
	int			rank;
	int			size;
	bool		connected;
	int64		n_nodes;		/* the part's, when the lists were taken */
	int64	   *count[2];		/* [PEER_SEND / PEER_RECV][size] rows */
	int32	  **rows[2];		/* [PEER_SEND / PEER_RECV][size] local rows, ascending */
	int			k;				/* columns the buffers are for (0: none yet) */
	double	   *buffer[2];		/* [PEER_SEND / PEER_RECV] all peers' rows, peer after peer */
	size_t	   *bytes[2];		/* [PEER_SEND / PEER_RECV][size] */
} SessionPeers;

#define PEER_SEND 0
#define PEER_RECV 1

static SessionPeers *session_peers = NULL;

/* Closes this session's group and forgets its lists. */
static void
close_session_peers(void)
{
	if (session_peers == NULL)
		return;
	peer_group_close(session_peers->group);
	MemoryContextDelete(session_peers->cxt);
	session_peers = NULL;
}

/* A bytea of a status byte (0: done) and, when not done, the reason. */
static bytea *
peer_answer(const char *failure)
{
	Size		length = failure != NULL ? strlen(failure) : 0;
	bytea	   *out = (bytea *) palloc(VARHDRSZ + 1 + length);

	SET_VARSIZE(out, VARHDRSZ + 1 + length);
	VARDATA(out)[0] = failure != NULL ? 1 : 0;
	if (length > 0)
		memcpy(VARDATA(out) + 1, failure, length);
	return out;
}

/*
 * The address the coordinator reached this server at (inet_server_addr(), numeric), which the
 * group binds to: the coordinator found this server there, so the other shards can too; 127.0.0.1
 * for a Unix socket.
 */
static void
reached_address(char *host, size_t size)
{
	LOCAL_FCINFO(fcinfo, 0);
	Datum		address;

	InitFunctionCallInfoData(*fcinfo, NULL, 0, InvalidOid, NULL, NULL);
	address = inet_server_addr(fcinfo);
	strlcpy(host, fcinfo->isnull ? "127.0.0.1" :
			DatumGetCString(DirectFunctionCall1(inet_out, address)), size);
}

/*
 * powerrank_shard_peers_open(rank int, parts int) RETURNS bytea: makes this session's end of a
 * group of parts shards, as rank (the session's group before goes); answers 0 and, for each rank,
 * int32 bytes and the address of this rank's pair for it (none for itself), or 1 and the reason.
 */
Datum
powerrank_shard_peers_open(PG_FUNCTION_ARGS)
{
	int32		rank = PG_GETARG_INT32(0);
	int32		size = PG_GETARG_INT32(1);
	char		host[NI_MAXHOST];
	char		error[256];
	PeerGroup  *group;
	MemoryContext cxt;
	SessionPeers *peers;
	StringInfoData out;

	if (size < 2 || size > SHARD_MAX_PEERS || rank < 0 || rank >= size)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a group of %d shards has no rank %d (2 to %d shards)", size, rank,
						SHARD_MAX_PEERS)));
	close_session_peers();
	reached_address(host, sizeof(host));
	cxt = AllocSetContextCreate(TopMemoryContext, "powerrank shard peers", ALLOCSET_DEFAULT_SIZES);
	peers = MemoryContextAllocZero(cxt, sizeof(SessionPeers));
	peers->cxt = cxt;
	if (peer_group_open(host, rank, size, &group, error, sizeof(error)) != PEER_OK)
	{
		MemoryContextDelete(cxt);
		PG_RETURN_BYTEA_P(peer_answer(psprintf("cannot listen on %s: %s", host, error)));
	}
	session_peers = peers;
	session_peers->group = group;
	session_peers->rank = rank;
	session_peers->size = size;

	initStringInfo(&out);
	appendStringInfoSpaces(&out, VARHDRSZ);
	appendStringInfoChar(&out, 0);
	for (int peer = 0; peer < size; peer++)
	{
		size_t		bytes;
		const char *address = peer_group_address(group, peer, &bytes);
		int32		length = (int32) bytes;

		appendBinaryStringInfo(&out, (const char *) &length, sizeof(length));
		if (length > 0)
			appendBinaryStringInfo(&out, address, length);
	}
	SET_VARSIZE(out.data, out.len);
	PG_RETURN_BYTEA_P((bytea *) out.data);
}

/*
 * Reads the lists of rows to send to and receive from each peer (shard.h, beside
 * SHARD_MAX_PEERS) into the session's group; false when they are not lists of the part's exported
 * rows to send and of its halo rows to receive, each halo row once.
 */
static bool
take_peer_lists(SessionPeers *peers, const ShardState *state, const char *in, Size size)
{
	Size		at = 0;
	int32		parts = 0;
	int64		n = state->graph.n_nodes;
	int64		received = 0;
	uint8		want[2] = {SHARD_EXPORTS, SHARD_HALO};

	if (!shard_read_bytes(in, size, &at, &parts, sizeof(parts)) || parts != peers->size)
		return false;
	for (int way = 0; way < 2; way++)
	{
		peers->count[way] = MemoryContextAllocZero(peers->cxt, parts * sizeof(int64));
		peers->rows[way] = MemoryContextAllocZero(peers->cxt, parts * sizeof(int32 *));
		peers->bytes[way] = MemoryContextAllocZero(peers->cxt, parts * sizeof(size_t));
	}
	for (int peer = 0; peer < parts; peer++)
		for (int way = 0; way < 2; way++)
			if (!shard_read_bytes(in, size, &at, &peers->count[way][peer], sizeof(int64)) ||
				peers->count[way][peer] < 0 || peers->count[way][peer] > n ||
				(peer == peers->rank && peers->count[way][peer] != 0))
				return false;
	for (int way = 0; way < 2; way++)
		for (int peer = 0; peer < parts; peer++)
		{
			int64		count = peers->count[way][peer];
			int32	   *rows = MemoryContextAllocHuge(peers->cxt, Max(count, 1) * sizeof(int32));

			if (!shard_read_bytes(in, size, &at, rows, count * sizeof(int32)))
				return false;
			for (int64 i = 0; i < count; i++)
				if (rows[i] < 0 || rows[i] >= n || (i > 0 && rows[i] <= rows[i - 1]) ||
					(state->owners[rows[i]] & want[way]) == 0)
					return false;
			/* the engine's rows (a list's rows ascend in either numbering) */
			for (int64 i = 0; i < count; i++)
				rows[i] = state->engine_row[rows[i]];
			peers->rows[way][peer] = rows;
			if (way == PEER_RECV)
				received += count;
		}
	peers->n_nodes = n;
	return at == size && received == state->owned_count[SHARD_ROWS_HALO];
}

/*
 * powerrank_shard_peers_connect(addresses bytea, lists bytea) RETURNS bytea: connects this
 * session's group (powerrank_shard_peers_open) to every other shard: addresses holds, for each
 * rank, int32 bytes and the address its open gave for this rank (none for this rank); lists the
 * rows this part sends to and receives from each (shard.h, beside SHARD_MAX_PEERS).  Answers 0,
 * or 1 and the reason (the group is closed).
 */
Datum
powerrank_shard_peers_connect(PG_FUNCTION_ARGS)
{
	ShardState *state = shard_owning_part();
	bytea	   *addresses = PG_GETARG_BYTEA_PP(0);
	bytea	   *lists = PG_GETARG_BYTEA_PP(1);
	SessionPeers *peers = session_peers;
	const char *in = VARDATA_ANY(addresses);
	Size		size = VARSIZE_ANY_EXHDR(addresses);
	Size		at = 0;
	const char **address;
	size_t	   *address_size;
	char		error[256];

	if (peers == NULL || peers->connected)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("this session has no group of shards to connect"),
				 errhint("powerrank_shard_peers_open() comes first.")));
	address = palloc(peers->size * sizeof(char *));
	address_size = palloc(peers->size * sizeof(size_t));
	for (int peer = 0; peer < peers->size; peer++)
	{
		int32		length = -1;

		if (!shard_read_bytes(in, size, &at, &length, sizeof(length)) || length < 0 ||
			(Size) length > size - at || (peer == peers->rank) != (length == 0))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("addresses holds %zu bytes that are not an address for each of %d shards",
							size, peers->size),
					 errhint("The shard functions are called by a coordinator of the same powerrank version.")));
		address[peer] = in + at;
		address_size[peer] = length;
		at += length;
	}
	if (!take_peer_lists(peers, state, VARDATA_ANY(lists), VARSIZE_ANY_EXHDR(lists)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lists holds %zu bytes that are not the rows the part exchanges with %d shards",
						VARSIZE_ANY_EXHDR(lists), peers->size),
				 errhint("The shard functions are called by a coordinator of the same powerrank version.")));
	if (peer_group_connect(peers->group, address, address_size, error, sizeof(error)) != PEER_OK)
	{
		close_session_peers();
		PG_RETURN_BYTEA_P(peer_answer(psprintf("cannot connect to %s", error)));
	}
	peers->connected = true;
	PG_RETURN_BYTEA_P(peer_answer(NULL));
}

/* Whether this backend was asked to stop (read by the exchange's watching thread). */
static bool
peer_interrupted(void)
{
	return QueryCancelPending || ProcDiePending;
}

/*
 * The exchange before a product on owned rows: sends every peer the values (values: n x k, the
 * engine's rows of the part; its owned rows are the slot's) of the exported rows it reads and writes the
 * values of the halo rows each peer owns into values.  A failure or a
 * cancel closes the session's group and raises the ERROR or the cancel.
 */
void
shard_peers_exchange(const ShardState *state, double *values)
{
	SessionPeers *peers = session_peers;
	int			k = state->k;
	char		error[256];
	PeerStatus	status;

	if (peers == NULL || !peers->connected || peers->n_nodes != state->graph.n_nodes)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("this session's part is in no group of shards"),
				 errhint("powerrank_shard_peers_connect() comes first.")));
	if (peers->k != k)
	{
		for (int way = 0; way < 2; way++)
		{
			int64		rows = 0;

			for (int peer = 0; peer < peers->size; peer++)
			{
				peers->bytes[way][peer] = peers->count[way][peer] * k * sizeof(double);
				rows += peers->count[way][peer];
			}
			if (peers->buffer[way] != NULL)
				pfree(peers->buffer[way]);
			peers->buffer[way] = powerrank_alloc_huge(peers->cxt,
													  Max(rows * k, 1) * sizeof(double));
		}
		peers->k = k;
	}
	{
		double	   *at = peers->buffer[PEER_SEND];

		for (int peer = 0; peer < peers->size; peer++)
		{
			const int32 *rows = peers->rows[PEER_SEND][peer];

			for (int64 i = 0; i < peers->count[PEER_SEND][peer]; i++, at += k)
				memcpy(at, values + (int64) rows[i] * k, k * sizeof(double));
		}
	}
	status = peer_group_exchange(peers->group, peers->buffer[PEER_SEND], peers->bytes[PEER_SEND],
								 peers->buffer[PEER_RECV], peers->bytes[PEER_RECV],
								 peer_interrupted, error, sizeof(error));
	if (status != PEER_OK)
	{
		close_session_peers();
		CHECK_FOR_INTERRUPTS();
		ereport(ERROR,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("the exchange of vectors with the other shards failed: %s",
						status == PEER_INTERRUPTED ? "interrupted" : error),
				 errhint("SET powerrank.distributed_exchange = relay on the coordinator makes the vectors go through it.")));
	}
	{
		const double *at = peers->buffer[PEER_RECV];

		for (int peer = 0; peer < peers->size; peer++)
		{
			const int32 *rows = peers->rows[PEER_RECV][peer];

			for (int64 i = 0; i < peers->count[PEER_RECV][peer]; i++, at += k)
				memcpy(values + (int64) rows[i] * k, at, k * sizeof(double));
		}
	}
}
