/*
 * service.h — the GPU service on the PostgreSQL side: the background worker that supervises the
 * engine process (engine/), the client through which a ranking run uses the service, and the
 * service's SQL functions.  What the processes share is the channel (channel.h).
 *
 * service_worker.c   the background worker (registration, supervision, the engine's configuration)
 * service_client.c   the backend side: device choice, requests, waiting, cancel, fallback
 * service_sql.c      powerrank_service, powerrank_progress, fault injection
 */
#ifndef SERVICE_H
#define SERVICE_H

#include "powerrank.h"

#include "channel.h"
#include "graph/graph_scan.h"

/* Where a run may compute: the device argument. */
typedef enum RankDevice
{
	RANK_DEVICE_AUTO = 0,		/* the GPU service for large graphs when it has a device, else CPU */
	RANK_DEVICE_CPU,			/* in this backend */
	RANK_DEVICE_GPU				/* the GPU service, or an ERROR */
} RankDevice;

/* Where a run goes (service_choose). */
typedef enum ServiceChoice
{
	CHOICE_CPU_ASKED,			/* device => 'cpu' */
	CHOICE_CPU_NOT_PRELOADED,	/* 'auto' without the service (no shared_preload_libraries) */
	CHOICE_CPU_SMALL_GRAPH,		/* 'auto', fewer than powerrank.gpu_min_edges edges */
	CHOICE_CPU_SERVICE_NOT_READY,	/* 'auto', the service not ready or without a device */
	CHOICE_SERVICE,				/* the GPU service */
	CHOICE_GPU_NOT_PRELOADED,	/* 'gpu' without the service: an ERROR */
	CHOICE_GPU_UNAVAILABLE,		/* 'gpu', the service unavailable: an ERROR */
	CHOICE_GPU_NO_DEVICE		/* 'gpu', the service not ready or without a device: an ERROR */
} ServiceChoice;

/* A ranking run as the client sends it to the service (service_rank). */
typedef struct ServiceRankRequest
{
	const char *name;			/* the run's algorithm as powerrank_progress shows it */
	RankDevice	device;			/* 'gpu': a failure is an ERROR; else a NOTICE, then the CPU */
	ServiceAlgorithm algorithm;
	const PrGraph *graph;		/* written into the request when it is not cached */
	struct dsm_segment *cache_segment;	/* the cached graph's mapping, or NULL */
	uint64		cache_entry_id; /* its cache entry's id (the engine process's residency key) */
	/* a delta entry's graph: graph and cache_segment are its root's, and the delta is mapped */
	struct dsm_segment *delta_segment;	/* the delta entry's mapping, or NULL */
	uint64		delta_entry_id; /* the delta entry's id */
	double		alpha;
	const PrRestart *restart;	/* PageRank's restart distribution (NULL for HITS) */
	double		tolerance;
	PrNorm		norm;
	int			max_iterations;
	int64		top_k;			/* PageRank: the top_k best of each column (0: every score) */
} ServiceRankRequest;

/* What the service said of a run: the engine that answered it, or why it was not used. */
typedef struct ServiceReply
{
	char		engine[32];		/* engine that ran, when it was the service */
	char		residency[16];	/* the service's: "resident" or "streamed" ('' on the CPU here) */
	int			batch_size;		/* requests the service answered with the same run (0: no service) */
	bool		delta_refused;	/* a delta entry's graph the service's engine could not take as
								 * its root plus the delta: the caller sends the graph whole */
	char		fallback[SERVICE_MESSAGE_LEN];	/* why the service was not used (empty: it was, or
												 * it was not asked) */
} ServiceReply;

/* ---- service_worker.c ---- */

void		service_worker_register(void);
void		service_read_config(ServiceEngineConfig *config);
PGDLLEXPORT void powerrank_service_main(Datum arg);

/* ---- service_client.c ---- */

ServiceChoice service_choose(RankDevice device, int64 n_edges, char *reason, size_t size,
							 char *last_error, size_t error_size);
bool		service_wanted(RankDevice device, int64 n_edges, ServiceReply *reply);
Size		service_build_rows(RankDevice device, bool cacheable, const EdgeScanTarget *target);
bool		service_build(struct dsm_segment *segment, Size rows, Size capacity, bool undirected,
						  ServiceOutcome *outcome);
bool		service_rank(const ServiceRankRequest *request, double *out1, double *out2,
						 int32 *top_index, PrRunStats *stats, ServiceReply *reply);

#endif							/* SERVICE_H */
