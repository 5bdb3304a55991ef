/*
 * pr_multi.h — several GPUs (plain C header; CUDA + NCCL implementation in pr_multi.cu, built
 * into libpowerrank_multi.so by cuda/Makefile.multi).  A graph larger than one GPU's memory runs
 * on the single-GPU engine's streamed matrices (doc/DESIGN.md, "Resident or streamed").
 *
 * 1. Several GPUs, one process: the rows of the pull matrix are partitioned across the local GPUs
 *    (cuda/plan/pr_partition.h: about equal edges and rows per GPU, each GPU's rows a contiguous
 *    slot range), each GPU multiplies its rows by the whole vector, and the new vector is exchanged
 *    with one in-place ncclAllGather per iteration (communicators from ncclCommInitAll).  One host
 *    thread drives every GPU through its own stream; the NCCL calls of all GPUs are grouped.
 *    Compact exchange (PrMultiOptions.compact_exchange, tiled kernel, several GPUs):
 *    a node without out-edges is no row's column, so each GPU packs only its slots with
 *    out-edges and all-gathers those into a separate vector (xg) that the column map points into;
 *    scores are read back from each GPU's own block (doc/RESULTS.md: 2.5x fewer values at R-MAT 26,
 *    efficiency at 2 GPUs 82.6% -> 85.1%).  NCCL_MIN_NCHANNELS defaults to 32 (unless set).
 *    Per iteration each GPU computes its product, the PageRank update and the partial reductions
 *    on its stream; then the new vector is all-gathered and the residual and dangling mass (two
 *    doubles) all-reduced on the same stream.
 *    The local product is one of three kernels:
 *    - csr: this file's CSR kernel (rows by descending length: chunked long rows, a warp per
 *      medium row, 4 lanes per short row; every sum in a fixed order);
 *    - cusparse: cusparseSpMV on each GPU's CSR;
 *    - tiled: the single-GPU engine's tile-composite kernels (pr_gpu_tiled.h, the same upload and
 *      launch code as pr_gpu.cu).  Each GPU's part is a rectangular matrix: its rows, and only the
 *      columns (slots) it reads, relabelled by descending count (pr_plan_relabel_columns),
 *      planned by pr_plan_composite (a fixed layout: 8 shared-memory
 *      tiles, CSR-vector rows >= 128, compact partials — the best measured on R-MAT 24 — or
 *      pr_plan_choose with a model when one is given).  Each iteration first gathers the GPU's
 *      columns from the all-gathered vector in slot order, z[j] = x[col_map[j]] / out_strength
 *      (one coalesced pass over the columns the part reads, with the PageRank scaling folded in,
 *      so the matrix carries no values on an unweighted graph), then runs the tiles over z.
 *
 * Vectors are float (PR_MULTI_FP32) or double (PR_MULTI_FP64, default) on the device, reductions
 * in double, results deterministic (fixed order).  fp64 runs an unweighted graph only: every
 * GPU scales the gathered vector by 1 / out_strength (z = x / d) and sums z over each row, so the
 * matrix carries no values at all (prepare refuses weights in fp64).
 */
#ifndef PR_MULTI_H
#define PR_MULTI_H

#include "pr_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A performance-model table (cuda/plan/pr_plan.h), for the tiled kernel's layout choice. */
struct PrModel;

/* Most GPUs one PrMulti drives. */
#define PR_MULTI_MAX_GPUS 16

/* The local product kernel. */
typedef enum PrMultiKernel
{
	PR_MULTI_KERNEL_CSR = 0,	/* this library's CSR kernel */
	PR_MULTI_KERNEL_CUSPARSE,	/* cusparseSpMV on each part (32-bit indices: < 2^31 entries a part) */
	PR_MULTI_KERNEL_TILED		/* the single-GPU engine's tile-composite kernels on each part */
} PrMultiKernel;

/* Arithmetic of the device vectors. */
typedef enum PrMultiPrecision
{
	PR_MULTI_FP32 = 0,			/* float vectors and values, double reductions */
	PR_MULTI_FP64				/* double vectors, no values (unweighted graphs, CSR kernel) */
} PrMultiPrecision;

/* Settings; pr_multi_options_init fills the defaults. */
typedef struct PrMultiOptions
{
	int			n_gpus;			/* GPUs 0 .. n_gpus-1; 0 = every visible GPU */
	int			method;			/* the rows' partition, a PrPartitionMethod (cuda/plan/
								 * pr_partition.h; default greedy) */
	PrMultiKernel kernel;
	int			check_every;	/* read the residual every this many iterations (default 1) */
	PrMultiPrecision precision; /* default fp64 (as the single-GPU engine and the setting) */
	bool		compact_exchange;	/* tiled: all-gather only the slots some GPU reads (nodes with
									 * out-edges), packed, instead of every slot (default true) */

	/*
	 * Polled before every iteration of pr_multi_pagerank (may be NULL): true stops the run with
	 * PR_ERR_INTERRUPTED.  The caller's cancel / statement_timeout.
	 */
	bool		(*should_stop) (void *arg);
	void	   *stop_arg;

	/* Called after each residual read (may be NULL): iteration number and L1 residual. */
	void		(*progress) (void *arg, int iteration, double residual);
	void	   *progress_arg;

	/*
	 * The tiled kernel's layout of each part.  tiled_model NULL: this fixed layout; otherwise
	 * pr_plan_choose with the model over its default candidates (planned shapes of every
	 * candidate: slower to prepare).  Shared-memory tiles are 49152 columns wide (24576 in fp64).
	 */
	int			tiled_smem_tiles;	/* default 8 */
	int			tiled_vec_threshold;	/* default 128 */
	bool		tiled_compact;	/* compact partials + merge (default true) */
	const struct PrModel *tiled_model;	/* default NULL */
} PrMultiOptions;

/* Fills the defaults (all GPUs, greedy, CSR kernel, fp64, compact exchange, check every iteration, no
 * hooks; the tiled layout s8, v128, compact, no model). */
void		pr_multi_options_init(PrMultiOptions *opts);

/* What prepare() built. */
typedef struct PrMultiReport
{
	int			n_gpus;
	char		device[96];		/* name of GPU 0 */
	char		nccl_version[32];
	const char *kernel;			/* "csr", "cusparse" or "tiled" */
	const char *precision;		/* "fp32" or "fp64" */
	const char *method;			/* partition method */
	int64_t		n_nodes;
	int64_t		n_edges;
	int64_t		stride;			/* slots per GPU (the all-gather count unless compact) */
	int64_t		exchange_count; /* values each GPU sends per iteration: stride, or the packed
								 * count of the compact exchange */
	double		edge_imbalance;	/* max edges of a GPU / mean */
	double		row_imbalance;	/* max rows of a GPU / mean */
	int64_t		rows[PR_MULTI_MAX_GPUS];	/* of each GPU */
	int64_t		edges[PR_MULTI_MAX_GPUS];
	size_t		device_bytes[PR_MULTI_MAX_GPUS];
	double		partition_seconds;	/* host: partition + local CSRs (+ the tiled plans) */
	double		host_partition_seconds;	/* of which the partition (+ 1 / out_strength) */
	double		host_csr_seconds;	/* the local CSRs (+ dangling flags) */
	double		host_plan_seconds;	/* tiled: the column relabel and the plans */
	double		upload_seconds;
	/* tiled kernel */
	int64_t		cols[PR_MULTI_MAX_GPUS];	/* columns each part reads (the gathered entries) */
	char		layout[192];	/* GPU 0's layout */
	double		gather_ms;		/* pr_multi_time: the column gathers alone (slowest GPU), else 0 */
	double		exchange_ms;	/* pr_multi_time: the exchange alone (the all-gather and the
								 * reductions' all-reduce, no compute) */
} PrMultiReport;

typedef struct PrMulti PrMulti;

/* Creates the NCCL communicators over the GPUs; NULL with err set on failure. */
PrMulti    *pr_multi_create(const PrMultiOptions *opts, PrError *err);

/*
 * Partitions and uploads the pull matrix: an n-node in-edge CSR (ptr, col = sources, val =
 * weights or NULL) and out_strength[n] (sum of out-weights; 0 = dangling).  The entries of P are
 * val / out_strength[source].  fp64: val must be NULL (PR_ERR_UNSUPPORTED otherwise).
 */
PrStatus	pr_multi_prepare(PrMulti *m, int64_t n, const int64_t *ptr, const int32_t *col,
							 const double *val, const double *out_strength, PrError *err);

/* The report of a prepared PrMulti. */
PrStatus	pr_multi_report(PrMulti *m, PrMultiReport *out, PrError *err);

/* What one PageRank run did. */
typedef struct PrMultiRun
{
	int			iterations;
	double		residual;		/* L1 of the last iteration */
	bool		converged;
	double		seconds;		/* wall time of the iterations */
} PrMultiRun;

/*
 * PageRank (uniform restart, NetworkX's dangling rule): x starts at 1/n, stops when the L1 change
 * < tolerance or after max_iterations (not converging is not an error: run->converged says).
 * options' should_stop is polled before each iteration (PR_ERR_INTERRUPTED), progress called
 * after each residual read.  scores[n] in the caller's node ids.
 */
PrStatus	pr_multi_pagerank(PrMulti *m, double alpha, double tolerance, int max_iterations,
							  double *scores, PrMultiRun *run, PrError *err);

/*
 * Times reps of (x = 1/n to start): *product_ms = mean of the local product alone (no update, no
 * exchange; the slowest GPU), *iteration_ms = mean of one PageRank iteration as
 * pr_multi_pagerank runs it (product + update + reductions, the all-gather and the all-reduce),
 * without residual reads.  iteration - product is the exposed
 * exchange.  The tiled kernel's products include its column gather; the gather alone and the
 * exchange alone go to the report (gather_ms, exchange_ms).
 */
PrStatus	pr_multi_time(PrMulti *m, int reps, double *product_ms, double *iteration_ms,
						  PrError *err);

/* Frees the device memory and the communicators. */
void		pr_multi_free(PrMulti *m);

/* Host preparation alone, timed (no GPU needed). */
typedef struct PrMultiHostTimes
{
	double		partition_seconds;	/* the partition into n_gpus parts + 1 / out_strength */
	double		csr_seconds;	/* every GPU's local CSR + dangling flags */
	double		plan_seconds;	/* tiled: column relabel + every GPU's plan */
	double		total_seconds;
	double		edge_imbalance; /* max edges of a GPU / mean */
	double		row_imbalance;	/* max rows of a GPU / mean */
	int64_t		cols[PR_MULTI_MAX_GPUS];	/* tiled: columns each GPU reads */
} PrMultiHostTimes;

/*
 * Runs pr_multi_prepare's host work for opts (n_gpus must be > 0: no device is asked) on the CSR
 * as pr_multi_prepare takes it, times its steps and frees it: the profile of a configuration's
 * host preparation without a GPU.
 */
PrStatus	pr_multi_host_prepare(const PrMultiOptions *opts, int64_t n, const int64_t *ptr,
								  const int32_t *col, const double *val, const double *out_strength,
								  PrMultiHostTimes *out, PrError *err);

/* Visible CUDA devices (0 when none). */
int			pr_multi_device_count(void);

#ifdef __cplusplus
}
#endif

#endif							/* PR_MULTI_H */
