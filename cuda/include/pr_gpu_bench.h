/*
 * pr_gpu_bench.h — the GPU engine's settings beyond the product's (plain C header; implemented in
 * libpowerrank_gpu.so with pr_gpu.h): the layout and planning choices the benchmark sweeps
 * (bench/gpu) and the paths the device tests force (test/gpu).  The PostgreSQL glue never
 * includes it: the service creates engines with pr_gpu_engine_create (pr_gpu.h), which runs with
 * pr_gpu_bench_options_init's defaults.
 */
#ifndef PR_GPU_BENCH_H
#define PR_GPU_BENCH_H

#include "pr_gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where the sparse matrices live (doc/DESIGN.md, "Resident or streamed"). */
typedef enum PrGpuResidency
{
	PR_GPU_RESIDENCY_AUTO = 0,	/* resident when the layouts fit the device (and the budget), else
								 * streamed when the vectors and two block buffers do */
	PR_GPU_RESIDENCY_RESIDENT,	/* resident only (prepare fails when they do not fit) */
	PR_GPU_RESIDENCY_STREAMED	/* streamed from host memory every product */
} PrGpuResidency;

/* The settings beyond PrGpuOptions; pr_gpu_bench_options_init fills the product's values. */
typedef struct PrGpuBenchOptions
{
	/* the layout and its planning */
	int			measure_reps;	/* auto: timed products of each candidate (default 5; 0: no timing,
								 * the model's choice in degree order) */
	bool		cusparse_default_alg;	/* cuSPARSE: the library's default SpMV algorithm (not
										 * bit-identical run to run: the benchmark's baseline)
										 * instead of the deterministic CSR_ALG2 (default false) */
	int64_t		tile_width;		/* tiled: columns per tile; 0 = the model chooses */
	int			vec_threshold;	/* tiled: rows this long become CSR-vector workloads; 0 = model */
	int			chunk;			/* longest warp workload before a row is cut (default 4096; 0:
								 * 4096, and PR_SPMM_CHUNK for k > 1 columns) */
	int			n_smem_tiles;	/* tiled: leading shared-memory tiles (16-bit ids); -1 = model */
	int64_t		smem_width;		/* tiled: columns per shared-memory tile; 0 = 48K (fp32) / 24K (fp64) */
	const char *model_text;		/* performance-model table (pr_model_parse form); NULL = built in */
	int			compact_partials;	/* tiled: later tiles write compact partials that a merge pass
									 * adds (1), add into y in place (0), or the model picks (-1,
									 * default; only when its table has a merge cost 'm') */
	int			plan_threads;	/* host planning threads (0: the online CPUs) */

	/* the warm start's local part */
	bool		push_local;		/* along out-edge lists made on first use (default true; false:
								 * two passes over the pull CSR) */
	int64_t		push_local_cap; /* entries of a push step's list (0: the default) */
	int64_t		local_product_entries;	/* a second step that does not fit its push list and would
										 * list at least this many entries is one product over the
										 * whole matrix instead of a pass (0: m / 16) */

	/* resident or streamed */
	PrGpuResidency residency;	/* resident, streamed, or the choice by size (default auto) */
	bool		stream_stage;	/* streamed: stage blocks through pinned buffers instead of
								 * registering the graph's host arrays (default false) */
	int64_t		stream_blocks;	/* streamed: blocks per matrix (0: the block plan's model; 1: whole) */

	/* a graph delta served beside the layout (apply_delta) */
	int64_t		delta_fold_edges;	/* the recent layer is folded into the frozen one when its
									 * edges pass a quarter of frozen's plus this many (default
									 * 4096) */
} PrGpuBenchOptions;

/* Fills bench with the values pr_gpu_engine_create runs with. */
void		pr_gpu_bench_options_init(PrGpuBenchOptions *bench);

/* Creates a GPU engine with these further settings (bench NULL: pr_gpu_engine_create). */
PrEngine   *pr_gpu_bench_engine_create(const PrGpuOptions *opts, const PrGpuBenchOptions *bench,
									   PrError *err);

/* The CUDA stream the engine runs on (a cudaStream_t), for timing with events. */
void	   *pr_gpu_engine_stream(PrEngine *engine);

#ifdef __cplusplus
}
#endif

#endif							/* PR_GPU_BENCH_H */
