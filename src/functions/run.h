/*
 * run.h — one ranking run: its memory context, the graph, the engine, and the statistics it leaves
 * behind for powerrank_last_run().
 */
#ifndef RUN_H
#define RUN_H

#include "powerrank.h"

#include "cache/graph_cache.h"
#include "distributed/distributed.h"
#include "functions/run_stats.h"
#include "graph/graph_scan.h"
#include "service/service.h"

/* Iteration options common to every algorithm, validated. */
typedef struct RankOptions
{
	double		tolerance;
	PrNorm		norm;
	int			max_iterations;
	int64		top_k;			/* 0: every node */
	bool		require_convergence;
} RankOptions;

/* The nodes of a distribution argument, their weights (NULL: alike) and their count. */
typedef struct WeightedNodes
{
	int64	   *nodes;			/* NULL: the argument is NULL */
	double	   *weights;
	int			count;
} WeightedNodes;

/* A run in progress; lives in its own memory context (freed by rank_run_end or on ERROR). */
typedef struct RankRun
{
	const char *algorithm;		/* "pagerank", "hits", "rwr" */
	MemoryContext cxt;
	PrAllocator *alloc;
	PrEngine   *engine;			/* non-NULL only while the driver runs */
	MemoryContextCallback cleanup;
	double		started;
	double		build_seconds;
	double		read_seconds;	/* of build_seconds: reading the rows */
	PrGraph		graph;			/* arrays in cxt, or in cache_segment on a cache hit */
	int64		skipped_rows;
	bool		cache_hit;		/* the graph came from the shared-memory cache */
	GraphSource graph_source;	/* how the run got its graph */
	int64		delta_rows;		/* GRAPH_SOURCE_DELTA: the changed rows applied */
	bool		published;		/* this run built the graph and offered it to the cache */
	GraphCacheKey cache_key;	/* the key it was offered under (when published) */
	struct dsm_segment *cache_segment;	/* mapping of the cached graph, or NULL */
	uint64		cache_entry_id; /* the cache entry's id (the GPU service's residency key) */
	struct dsm_segment *rows_segment;	/* the service built the graph in it, or the patch wrote
										 * it there, but the cache did not take it: run->graph
										 * lives there */
	bool		needs_out_edges;	/* HITS on a cached graph: out-edges added only on the CPU */
	struct dsm_segment *out_edges_segment;	/* mapping of the out-edges a cached graph took
											 * from its entry (graph_cache_out_edges), or NULL */
	/*
	 * A delta entry's graph (delta_segment non-NULL): graph is its root's (cache_segment, entry
	 * root_entry_id) and the graph ranked is graph plus delta, in the root's numbering; the
	 * delta's absent nodes get no score row (rank_run_node_absent).  cache_entry_id is the delta
	 * entry's.
	 */
	struct dsm_segment *delta_segment;
	PrGraphDelta delta;
	uint64		root_entry_id;
	RankDevice	device;
	ServiceReply service;		/* what the GPU service said of the run */
	double	   *start;			/* PageRank's start vector (n values summing to 1, internal ids),
								 * or NULL: the uniform start */
	RankWarmStart warm_start;	/* where the CPU engine's run started */
	int			columns;		/* score vectors iterated at once (RWR sources; 1 otherwise) */
	DistCluster *cluster;		/* the parts of a distributed run (run->graph: every node, no
								 * edge), or NULL */
} RankRun;

RankRun    *rank_run_begin(const char *algorithm, RankDevice device);
void		rank_run_load_table(RankRun *run, const EdgeTableSpec *spec, bool directed,
								bool out_edges);
void		rank_run_load_rankgraph(RankRun *run, Datum graph, bool out_edges);
void		rank_run_pagerank(RankRun *run, double alpha, const PrRestart *restart,
							  const RankOptions *options, double *scores);
int64		rank_run_top_rows(const RankRun *run, int64 top_k);
bool		rank_run_node_absent(const RankRun *run, int64 node);
int64		rank_run_pagerank_top(RankRun *run, double alpha, const PrRestart *restart,
								  const RankOptions *options, int32 *index, double *value);
void		rank_run_hits(RankRun *run, const RankOptions *options, double *hubs,
						  double *authorities);
void		rank_run_end(RankRun *run);

/* ---- restart.c: restart distributions ---- */

PrRestart  *restart_uniform(RankRun *run);
PrRestart  *restart_single_column(RankRun *run, const int64 *node_ids, const double *weights,
								  int count, const char *what);
PrRestart  *restart_per_node(RankRun *run, const int64 *node_ids, int count);
void		restart_set_dangling(RankRun *run, PrRestart *restart, const int64 *node_ids,
								 const double *weights, int count);
void		rank_run_set_start(RankRun *run, const int64 *node_ids, const double *scores,
							   int count);

/* ---- options.c: argument reading and validation ---- */

void		rank_options_read(FunctionCallInfo fcinfo, int tolerance_arg, int max_iterations_arg,
							  int top_k_arg, int norm_arg, int require_convergence_arg,
							  const char *positional, RankOptions *options);
double		option_damping(FunctionCallInfo fcinfo, int argno);
double		option_restart(FunctionCallInfo fcinfo, int argno);
bool		option_bool(FunctionCallInfo fcinfo, int argno, const char *name);
int64		option_int64(FunctionCallInfo fcinfo, int argno, const char *name);
int64	   *option_node_list(FunctionCallInfo fcinfo, int argno, const char *name, int *count);
void		option_weighted_nodes(FunctionCallInfo fcinfo, int nodes_arg, int weights_arg,
								  const char *nodes_name, const char *weights_name,
								  WeightedNodes *out);
void		option_start_nodes(FunctionCallInfo fcinfo, int nodes_arg, int scores_arg,
							   WeightedNodes *out);
double	   *option_weight_list(FunctionCallInfo fcinfo, int argno, const char *name,
							   const char *nodes_name, int count);
RankDevice	option_device(FunctionCallInfo fcinfo, int argno);
void		edge_table_spec_read(FunctionCallInfo fcinfo, int relation_arg, int src_arg,
								 int dst_arg, int weight_arg, EdgeTableSpec *spec);

/* ---- result.c: rows out of a materialized SRF ---- */

void		result_emit_scores(FunctionCallInfo fcinfo, RankRun *run, const double *scores,
							   int stride, int column, int64 top_k, bool with_source,
							   int64 source);
void		result_emit_top(FunctionCallInfo fcinfo, RankRun *run, const int32 *index,
							const double *value, int64 count, int64 top_k, bool with_source,
							int64 source);
void		result_emit_hits(FunctionCallInfo fcinfo, RankRun *run, const double *hubs,
							 const double *authorities, int64 top_k);

#endif							/* RUN_H */
