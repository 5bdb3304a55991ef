/*
 * pr_gpu_engine.h — the single-GPU engine's private state (GpuEngine, its sparse matrices
 * GpuMatrix) and the functions its files share: pr_gpu.cu (the operations), pr_gpu_prepare.cu
 * (prepare), pr_gpu_matrix.cu (one matrix's upload, product and release).  C++ (CUDA) only.
 */
#ifndef PR_GPU_ENGINE_H
#define PR_GPU_ENGINE_H

#include "pr_gpu_bench.h"
#include "pr_gpu_status.h"
#include "pr_plan.h"
#include "pr_gpu_tiled.cuh"
#include "pr_gpu_binned_kernels.cuh"
#include "pr_gpu_aligned_coo.cuh"
#include "pr_gpu_row_blocks.cuh"
#include "pr_gpu_topk.h"
#include "pr_gpu_push_local.h"

#include <cuda_runtime.h>
#include <cusparse.h>

#include <vector>

/* Records a failed CUDA call in err and returns its status from the enclosing function. */
#define PR_CUDA(call) PR_CUDA_OR_RETURN("GPU engine", call)

/* Same for cuSPARSE calls. */
#define PR_CUSPARSE(call) PR_CUSPARSE_OR_RETURN("GPU engine", call)

/* Checks the launch just made. */
#define PR_LAUNCHED() PR_CUDA(cudaGetLastError())

/* The built-in performance-model table (measured on an H100 by bench/gpu calibration; generated
 * from cuda/plan/model_h100.tsv by cuda/Makefile). */
extern "C" const char pr_gpu_model_h100[];

/* The format of a GpuMatrix (MATRIX_NONE: not uploaded). */
enum MatrixKind
{
	MATRIX_NONE = 0,
	MATRIX_TILED,
	MATRIX_BINNED,
	MATRIX_CUSPARSE,
	MATRIX_ALIGNED_COO,
	MATRIX_ROW_BLOCKS
};

/*
 * One sparse matrix on the device in one format: the tile-composite fields (pr_gpu_tiled.cuh:
 * tiles, partials, compact partials; has_val, bytes and partial serve every
 * format, tiles[0] the binned format's long rows too), then the binned CSR, ALIGNED_COO and cuSPARSE.
 */
struct GpuMatrix : TiledMatrix
{
	MatrixKind	kind;
	DevBinned	binned;
	int64_t		binned_blocks;
	/* row blocks (the long rows' chunks in tiles[0], their sums in partial) */
	DevRowBlocks rowb;
	/* ALIGNED_COO: the layout, its segments' partial sums (head, tail), whether y needs clearing */
	DevAlignedCoo acoo;
	void	   *acoo_head;
	void	   *acoo_tail;
	bool		acoo_clear;
	/* cuSPARSE */
	cusparseSpMatDescr_t sp_mat;
	void	   *sp_buffer;
	bool		sp_created;
	std::vector<void *> allocs;	/* its device arrays, freed with it (gpu_matrix_free) */
};

/* The streamed matrices of a graph larger than the device (pr_gpu_streamed.h). */
struct GpuStreamer;

/*
 * A graph delta's edges on the device as rows (pr_gpu_delta.cu): row r adds value[e] * in[col[e]]
 * to y[row[r]] for e in [ptr[r], ptr[r + 1]), positions in the engine's private order.
 */
struct GpuDeltaRows
{
	int64_t		rows;
	int32_t    *row;
	int64_t    *ptr;
	int32_t    *col;
	double	   *value;
};

/*
 * One layer of the delta served (pr_gpu_delta.cu): its edges on the host, sorted by (dst, src,
 * weight), and as rows on the device by target (the pull products) and by source (the push
 * product, when the engine has it), their device arrays and bytes.
 */
struct GpuDeltaLayer
{
	std::vector<PrEdgeChange> edges;
	GpuDeltaRows pull;
	GpuDeltaRows push;
	std::vector<void *> allocs;
	size_t		bytes;
};

/*
 * What the last apply_delta let go of, kept for the next one's lists so that an apply under
 * steady writes fills memory it already has (fresh memory costs a page fault a page): the
 * replaced sources, out-strengths, absent nodes and recent edges, and the buffer of the recent
 * layer's diff (grown, never shrunk, until the delta is forgotten).
 */
struct GpuDeltaSpare
{
	std::vector<int32_t> sources;
	std::vector<double> strength;
	std::vector<int32_t> absent;
	std::vector<PrEdgeChange> edges;
	std::vector<PrEdgeChange> diff;
};

/* The engine. */
struct GpuEngine
{
	PrEngine	base;
	PrEngineOps ops;
	PrGpuOptions opt;
	PrGpuBenchOptions bench;	/* pr_gpu_bench_options_init's defaults unless the benchmark or a
								 * device test set others */
	PrModel		model;
	bool		have_model;
	cudaStream_t stream;
	cusparseHandle_t sp;
	bool		sp_ready;
	bool		prepared;
	bool		fp64;
	size_t		elem;
	int64_t		n;
	int64_t		m;
	int			k;
	int			n_slots;
	unsigned	needs;
	std::vector<void *> allocs;
	int32_t    *new_to_old;		/* [n] device: the graph id of each private position */
	bool		natural_order;	/* the private order is the graph's own (new_to_old the identity) */
	/* [n] 1 / out-strength at private positions: +0 for a dangling node, -0 for an absent node of
	 * the delta served (dangling too, and the updates hold it at exactly 0) */
	void	   *inv_out;
	std::vector<void *> slots;
	std::vector<bool> dangling_valid;
	void	   *z;
	int			z_owner;
	bool		z_whole;		/* z holds every row (not only the owned ones: see own_rows) */
	/* rows owned (PrEngineOps.own_rows): the update writes rows [own_begin, own_end) only, its z
	 * holds the dangling nodes' values (no product reads them) so that an exchange of z carries
	 * the dangling mass, which the next update then sums from z */
	bool		rows_owned;
	int64_t		own_begin;
	int64_t		own_end;
	int64_t		dangling_tail;	/* first row of the dangling nodes when they are the last rows, else -1 */
	double	   *stage;
	double	   *partials;
	unsigned int *counter;
	double	   *stats;			/* [n_slots + 2][k][3] */
	int			resid_index;
	void	   *restart_dense;
	int64_t    *restart_pos;	/* [PR_SPARSE_RESTART] sorted non-zero positions of restart_dense, or NULL */
	double	   *restart_w;		/* [PR_SPARSE_RESTART] their weights */
	int64_t		restart_n;		/* non-zeros listed there, or -1: use restart_dense */
	uint64_t	restart_key;
	int32_t    *old_to_new_host;	/* [n] private position of each internal id (restart scatter) */
	void	   *far_field;		/* [n] the far-field vector kept for the warm start, or NULL */
	double	   *coef_dev;		/* [4 * k] coefficients of a combination (warm start), or NULL */
	uint32_t   *local_flags;	/* [2 * (n + 1)] flagged nodes of the restart's steps, then the bits of one, or NULL */
	int32_t    *local_marked;	/* rows a local step reaches (local_step) */
	int		   *local_count;	/* how many */
	void	   *local_temp;		/* CUB's select space */
	size_t		local_temp_bytes;
	int64_t		local_mark_blocks;	/* resident blocks of k_local_mark (with its shared memory) */
	int64_t		local_step_blocks;	/* ... of k_local_step */
	PrGpuTopkWorkspace *topk_ws;	/* scratch of the device top-k, kept between calls */
	PrGpuPushLocal *push_local; /* out-edge lists for the warm start's local part, or NULL */
	bool		push_local_off; /* making them failed for this graph: the two passes instead */
	GpuMatrix	pull;			/* PULL_NORMALIZED (and PULL when it has raw values) */
	GpuMatrix	pull_raw;		/* PULL for cuSPARSE mode (raw weights, binned) */
	GpuMatrix	push;
	GpuStreamer *streamer;		/* streamed matrices (residency streamed), or NULL */
	/* the delta served beside the prepared graph (apply_delta, pr_gpu_delta.cu): host copies of
	 * its sources with their out-strengths and of its absent nodes; its edges as two layers,
	 * frozen (the edges of the delta applied when the layers were last folded) and recent (the
	 * served delta's edges less frozen's), whose terms are added in that order (none of the five:
	 * the prepared graph alone) */
	std::vector<int32_t> delta_sources;
	std::vector<double> delta_strength;
	std::vector<int32_t> delta_absent;
	GpuDeltaSpare delta_spare;
	GpuDeltaLayer delta_frozen;
	GpuDeltaLayer delta_recent;
	bool		delta_on_device;	/* the device holds the delta above: its layers' rows and its
									 * entries of 1 / out-strength (not after a new layout) */
	int64_t		delta_folds;	/* applies that rebuilt the frozen layer (the report's) */
	bool		far_field_stale;	/* the kept far-field vector is the graph's before the delta */
	PrGpuReport report;
	/* what the device layout was built from, to reuse it when prepare sees the same graph */
	const PrGraph *prep_graph;
	const int64_t *prep_in_ptr;
	const int32_t *prep_in_src;
	int64_t		prep_edges;
	unsigned int smem_grid;		/* blocks of the shared-memory tile kernel */
	int64_t		smem_width;
};

/* Device memory tracked in list (the engine's allocs or a matrix's) and counted in the report. */
PrStatus	gpu_dev_alloc_in(GpuEngine *e, std::vector<void *> *list, void **out, size_t bytes, PrError *err);

/* The same, then a copy of host data into it (large arrays by several host threads). */
PrStatus	gpu_dev_upload_in(GpuEngine *e, std::vector<void *> *list, void **out, const void *host,
							  size_t bytes, PrError *err);

/* Device memory owned by the engine (freed with it), empty or filled from the host. */
PrStatus	gpu_dev_alloc(GpuEngine *e, void **out, size_t bytes, PrError *err);
PrStatus	gpu_dev_upload(GpuEngine *e, void **out, const void *host, size_t bytes, PrError *err);

/* Frees everything the engine allocated on the device (keeps the engine). */
void		gpu_engine_free_device(GpuEngine *e);

/* The apply_delta operation (pr_gpu_delta.cu; see pr_engine.h). */
PrStatus	gpu_apply_delta(PrEngine *base, const PrGraphDelta *delta, PrError *err);

/* Whether the engine serves a delta beside its prepared graph. */
bool		gpu_delta_active(const GpuEngine *e);

/* Enqueues the delta's terms of product (T = float or double) into y, in its input in. */
template <typename T>
PrStatus	gpu_delta_add(GpuEngine *e, PrProduct product, const void *in, void *y, PrError *err);

/* Frees the delta's device arrays (gpu_engine_free_device; the host copies stay). */
void		gpu_delta_free_device(GpuEngine *e);

/* Frees the delta's host copies and device arrays: the engine serves its prepared graph alone. */
void		gpu_delta_forget(GpuEngine *e);

/*
 * The delta served as one PrGraphDelta (its layers' edges summed; arrays from pr_malloc_allocator,
 * pr_graph_delta_free), to apply it again to a new layout of the same graph.
 */
PrStatus	gpu_delta_served(const GpuEngine *e, PrGraphDelta *out, PrError *err);

/* The prepare operation (pr_gpu_prepare.cu). */
PrStatus	gpu_prepare(PrEngine *base, const PrGraph *g, int k, int n_slots, unsigned needs, PrError *err);

/* Uploads a composite layout, a binned CSR with its row bins, or a CSR with the values of P for
 * cuSPARSE (inv_out_host: 1 / out-strength in the private order) into mat (pr_gpu_matrix.cu). */
PrStatus	gpu_matrix_upload_tiled(GpuEngine *e, const PrComposite *c, GpuMatrix *mat, PrError *err);
PrStatus	gpu_matrix_upload_binned(GpuEngine *e, const PrPlanCsr *csr, const PrBinned *b, GpuMatrix *mat,
									 PrError *err);
PrStatus	gpu_matrix_upload_cusparse(GpuEngine *e, const PrPlanCsr *csr, const double *inv_out_host,
									   GpuMatrix *mat, PrError *err);

/* Uploads a CSR and its row blocks (cuda/plan/pr_plan_row_blocks.h) into mat. */
PrStatus	gpu_matrix_upload_row_blocks(GpuEngine *e, const PrPlanCsr *csr, const PrRowBlocks *b, GpuMatrix *mat,
										 PrError *err);

/* Uploads an ALIGNED_COO layout (cuda/plan/pr_plan_aligned_coo.h) into mat. */
PrStatus	gpu_matrix_upload_aligned_coo(GpuEngine *e, const PrAlignedCoo *a, GpuMatrix *mat, PrError *err);

/* Enqueues y = M z (T = float or double, as e->fp64 says): the matrix's format for k = 1, the
 * SpMM over its binned CSR for k > 1. */
template <typename T>
PrStatus	gpu_matrix_run(GpuEngine *e, GpuMatrix *mat, const void *z, void *y, PrError *err);

/* Frees a matrix's device arrays and cuSPARSE descriptor and clears it (MATRIX_NONE). */
void		gpu_matrix_free(GpuMatrix *mat);

#endif							/* PR_GPU_ENGINE_H */
