/*
 * run_stats.h — the statistics a ranking run leaves behind for powerrank_last_run() (run_stats.c
 * keeps this backend's last ones).
 */
#ifndef RUN_STATS_H
#define RUN_STATS_H

#include "powerrank.h"

#include "channel.h"

/* Where a run started (powerrank_last_run().warm_start). */
typedef enum RankWarmStart
{
	RANK_START_NONE = 0,		/* 1/N, or the GPU service's own start */
	RANK_START_EXPLICIT,		/* start_nodes / start_scores */
	RANK_START_PREVIOUS			/* the scores kept with the cached graph (powerrank.warm_start_auto) */
} RankWarmStart;

/* What powerrank_last_run() shows. */
typedef struct RankRunStats
{
	char		algorithm[16];
	char		engine[32];
	int64		nodes;
	int64		edges;
	int64		skipped_rows;
	int			iterations;
	double		residual;
	PrNorm		norm;
	bool		converged;
	double		build_ms;
	double		iterate_ms;
	double		total_ms;
	bool		cache_hit;
	char		fallback[SERVICE_MESSAGE_LEN];	/* why the GPU service was not used ('' = none) */
	int			batch_size;		/* requests answered by the same engine run (1: alone) */
	double		read_ms;		/* of build_ms: reading the rows (0 on a cache hit) */
	double		prepare_ms;		/* of iterate_ms: the engine preparing the graph */
	RankWarmStart warm_start;
	char		residency[16];	/* the service's "resident" or "streamed" ('' = the backend's CPU) */
	int			columns;		/* score vectors iterated at once (RWR sources; 1 otherwise) */
	double		error_bound;	/* PrRunStats.error_bound (NaN: none known) */
	int			mixed_steps;	/* iterations whose next iterate was mixed */
	PrCertified top_k_certified;
	int64		top_k_ties;
	int			graph_source;	/* GraphSource: how the run got its graph */
	int64		delta_rows;		/* the changed rows a patched cached graph took */
	int64		exchange_bytes; /* a distributed run's bytes to and from the shards (-1: none) */
	double		exchange_ms;	/* a distributed run's products: fan-out, shards, gather */
	int64		peer_bytes;		/* bytes its shards sent each other (-1: none did) */
} RankRunStats;

void		run_stats_record(const RankRunStats *stats);
bool		run_stats_last(RankRunStats *stats);

#endif							/* RUN_STATS_H */
