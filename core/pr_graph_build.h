/*
 * pr_graph_build.h — the graph build's internals, shared by its files: the steps that run over
 * chunks of their input in waves (pr_graph_waves.c) and the id map (pr_graph_ids.c,
 * pr_graph_ids_sort.c) that pr_graph_build (pr_graph.c) starts with.
 */
#ifndef PR_GRAPH_BUILD_H
#define PR_GRAPH_BUILD_H

#include "pr_graph.h"

/* Allocates count elements of type through alloc (macro to keep call sites short). */
#define ALLOC_ARRAY(alloc, type, count) ((type *) pr_alloc_array((alloc), (size_t) (count), sizeof(type)))

/* Most worker threads a build uses. */
#define MAX_BUILD_THREADS PR_MAX_THREADS

/* Maps a signed id to an unsigned key with the same order. */
static inline uint64_t
id_key(int64_t id)
{
	return (uint64_t) id ^ UINT64_C(0x8000000000000000);
}

/* The part of chunk t that one wave of a step covers: elements [lo, hi). */
typedef struct ChunkPart
{
	int			t;
	size_t		lo;
	size_t		hi;
	bool		first_wave;		/* the chunk's first part: per-chunk state starts here */
} ChunkPart;

/* A step's task: one chunk's part of one wave. */
typedef void (*ChunkFn) (void *ctx, ChunkPart part);

/* Chunks for count elements: at most n_threads, each at least 64k elements. */
int			pr_build_chunks_for(size_t count, int n_threads);

/*
 * True when the caller asked the build to stop: options->should_stop, polled on the calling thread
 * between steps (never from the chunk threads).
 */
bool		pr_build_stop_requested(const PrBuildOptions *options);

/*
 * Runs fn over n_chunks chunks of count elements in waves, chunk 0 on the caller and the others on
 * threads (pr_parallel_run), polling options->should_stop (options may be NULL) between waves:
 * false when it asked to stop.
 */
bool		pr_build_run_waves(ChunkFn fn, void *ctx, int n_chunks, size_t count,
							   const PrBuildOptions *options);

/* Fails a build step with PR_ERR_INTERRUPTED. */
PrStatus	pr_build_interrupted(PrError *err);

/* The id map: sorted unique external ids and how to find an id's rank. */
typedef struct IdMap
{
	int64_t		n;
	int64_t    *node_ids;		/* [n] ascending (handed to the graph) */
	int64_t		min_id;
	/* dense form: table[id - min_id] = rank */
	int32_t    *table;
	/* sparse form: ranks of ids whose (id - min) >> shift == b lie in [bucket[b], bucket[b+1]) */
	int64_t    *bucket;
	int			shift;
} IdMap;

/* Fails a build whose graph has n nodes, more than PR_MAX_NODES, with PR_ERR_TOO_LARGE. */
PrStatus	pr_build_too_many_nodes(int64_t n, PrError *err);

/*
 * Builds the id map of the edge list's endpoints and every endpoint's rank: *ranks_out gets
 * [2m] ranks (src ranks, then dst ranks); NULL when m is 0.  (pr_graph_ids.c)
 */
PrStatus	pr_id_map_build(const int64_t *src, const int64_t *dst, size_t m, int n_threads,
							const PrBuildOptions *options, const PrAllocator *alloc, IdMap *map,
							int32_t **ranks_out, PrError *err);

/*
 * Sorts the endpoints (ids in [lo_id, hi_id]) and gives every one its rank: *ranks_out gets
 * [2m] ranks (src ranks then dst ranks), map->node_ids the distinct ids.  2m < 2^32.
 * (pr_graph_ids_sort.c)
 */
PrStatus	pr_id_map_build_ranked(const int64_t *src, const int64_t *dst, size_t m,
								   int64_t lo_id, int64_t hi_id, int n_threads,
								   const PrBuildOptions *options, const PrAllocator *alloc,
								   IdMap *map, int32_t **ranks_out, PrError *err);

#endif							/* PR_GRAPH_BUILD_H */
