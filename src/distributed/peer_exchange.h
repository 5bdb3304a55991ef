/*
 * peer_exchange.h — the shard-to-shard exchange of a distributed run's vectors: a group of the
 * shards' backends connected pairwise over TCP through Gloo (peer_exchange.cpp).  Pure C: no
 * PostgreSQL header here or in the C++ behind it; every function returns a status and writes
 * what went wrong into error, and the caller (shard.c) raises it.
 *
 * Rendezvous in two steps, each a call from the coordinator: peer_group_open makes the rank's
 * device (bound to host) and a listening pair for every other rank, whose addresses travel back
 * to the coordinator; peer_group_connect connects every pair to the address its peer's open gave
 * for this rank.  No store or server of its own: the coordinator hands the addresses over.
 */
#ifndef PEER_EXCHANGE_H
#define PEER_EXCHANGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C"
{
#endif

typedef struct PeerGroup PeerGroup;

typedef enum PeerStatus
{
	PEER_OK = 0,
	PEER_FAILED,				/* error says why; the group cannot serve again */
	PEER_INTERRUPTED			/* interrupted() said so; the group cannot serve again */
} PeerStatus;

/* Whether the caller was asked to stop (read from another thread: a flag's read only). */
typedef bool (*PeerInterruptCheck) (void);

/* How long a pair waits for its peer's connection (Gloo's connect wait, five pair timeouts). */
#define PEER_CONNECT_TIMEOUT_MS 3000
/* Longest wait of an exchange for its peers: Gloo's own timeout, the last resort. */
#define PEER_EXCHANGE_TIMEOUT_MS 60000
/* How often an exchange's wait looks at interrupted(). */
#define PEER_POLL_MS 10

PeerStatus	peer_group_open(const char *host, int rank, int size, PeerGroup **group,
							char *error, size_t error_size);
const char *peer_group_address(const PeerGroup *group, int peer, size_t *size);
PeerStatus	peer_group_connect(PeerGroup *group, const char *const *addresses,
							   const size_t *sizes, char *error, size_t error_size);
PeerStatus	peer_group_exchange(PeerGroup *group, const void *send, const size_t *send_bytes,
								void *recv, const size_t *recv_bytes,
								PeerInterruptCheck interrupted, char *error, size_t error_size);
void		peer_group_close(PeerGroup *group);

#ifdef __cplusplus
}
#endif

#endif							/* PEER_EXCHANGE_H */
