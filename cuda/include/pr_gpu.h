/*
 * pr_gpu.h — the GPU engine of powerrank (plain C header; the implementation is CUDA, built into
 * libpowerrank_gpu.so by cuda/Makefile).
 *
 * pr_gpu_engine_create returns a PrEngine (see core/pr_engine.h) whose operations run on one
 * CUDA device.  prepare() puts the nodes in the engine's private order (by out-degree, the graph's
 * own order, or hubs first; every vector crossing the interface is in the graph's internal ids),
 * plans the sparse format on the host (cuda/plan/), checks the device memory it needs, and uploads
 * it.  With the kernel `auto` it times a short list of candidate layouts on the device and keeps
 * the fastest (doc/DESIGN.md, "The measured choice").  Per-column
 * scalars (dangling mass, residuals) stay on the device: residual() is the only operation that
 * waits for the device.  Results are deterministic: every sum is taken in a fixed order.
 */
#ifndef PR_GPU_H
#define PR_GPU_H

#include "pr_engine.h"
#include "pr_graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Sparse-product kernels the engine can use. */
typedef enum PrGpuKernel
{
	PR_GPU_KERNEL_AUTO = 0,		/* the fastest of the candidates, timed on the device (order and
								 * format; the model ranks the composite layouts) */
	PR_GPU_KERNEL_TILED,		/* tile-composite: column tiles of warp-sized CSR-vector / ELL workloads */
	PR_GPU_KERNEL_BINNED,		/* row-binned CSR (1..32 lanes per row, chunked long rows) */
	PR_GPU_KERNEL_CUSPARSE,		/* cusparseSpMV on CSR with the values of P (the baseline) */
	PR_GPU_KERNEL_ALIGNED_COO,	/* ALIGNED_COO: equal segments of entries in row order, a thread each */
	PR_GPU_KERNEL_ROW_BLOCKS	/* row blocks: consecutive rows staged in shared memory, a block each */
} PrGpuKernel;

/* The engine's private order of the nodes (rows and columns of the pull matrix). */
typedef enum PrGpuOrder
{
	PR_GPU_ORDER_DEGREE = 0,	/* by descending out-degree (default) */
	PR_GPU_ORDER_NATURAL,		/* the graph's own ids */
	PR_GPU_ORDER_HUBS,			/* the largest out-degrees first, the rest in the graph's own order */
	PR_GPU_ORDER_LOCALITY		/* depth-first over the in-edges (pr_plan_order.h): neighbours
								 * numbered together, locality the graph's own ids may lack */
} PrGpuOrder;

/* Arithmetic of the vectors. */
typedef enum PrGpuPrecision
{
	PR_GPU_FP32 = 0,			/* float vectors, double reductions */
	PR_GPU_FP64					/* double vectors (default) */
} PrGpuPrecision;

/*
 * Engine settings, the ones the service sets (from powerrank.gpu_device, gpu_precision,
 * gpu_kernel and gpu_memory); pr_gpu_options_init fills the defaults.  The benchmark's and the
 * device tests' further settings are in pr_gpu_bench.h.
 */
typedef struct PrGpuOptions
{
	int			device;			/* CUDA device ordinal */
	PrGpuPrecision precision;
	PrGpuKernel kernel;
	size_t		memory_budget;	/* most device bytes the engine may take; 0 = what is free; the
								 * matrices are streamed when the resident layouts do not fit */
	PrGpuOrder	order;			/* the private order of an explicit kernel (auto tries several) */
	bool		graph_order;	/* the graph's ids are in the order by descending out-degree
								 * already (a part of several GPUs, pr_parts.h): the engine keeps
								 * them (the degree and hubs-first layouts in the graph's own ids,
								 * no locality order), so its results are in graph order and travel
								 * between GPUs without reordering */
} PrGpuOptions;

/* What prepare() chose and what it costs, for reports and the benchmark. */
typedef struct PrGpuReport
{
	char		engine[32];		/* "gpu-tiled", "gpu-binned", "gpu-cusparse", "gpu-streamed"... */
	char		residency[16];	/* "resident" or "streamed" */
	char		stream_mode[16];	/* streamed: "registered", "staged" or "pageable" ("" resident) */
	int64_t		stream_blocks;	/* streamed: blocks of the pull matrix */
	int64_t		stream_push_blocks; /* streamed: blocks of the push matrix (0: none) */
	size_t		stream_bytes;	/* streamed: bytes one pull product copies host -> device */
	size_t		stream_push_bytes;	/* streamed: bytes one push product copies */
	size_t		stream_buffer_bytes;	/* streamed: bytes of each of the two device buffers */
	size_t		stream_host_bytes;	/* streamed: host bytes registered (or pinned for staging) */
	size_t		resident_need_bytes;	/* residency auto: the device bytes resident would have taken
										 * (pr_residency's estimate; 0 when not chosen by size) */
	size_t		device_free_bytes;	/* residency auto: the device's free memory at the choice */
	char		format[224];	/* human-readable layout summary */
	char		device[96];		/* device name */
	int			n_tiles;
	int64_t		tile_width;
	int			vec_threshold;
	int			n_smem_tiles;
	int64_t		smem_width;
	int64_t		n_nodes;
	int64_t		n_edges;
	int64_t		padding;		/* padded ELL slots */
	size_t		matrix_bytes;	/* device bytes of the sparse format(s) */
	size_t		total_bytes;	/* device bytes the engine holds */
	size_t		push_local_bytes;	/* of which the warm start's out-edge lists and push scratch
									 * (0 until a warm start pushed) */
	int64_t		push_local_all; /* warm starts whose local part was pushed whole */
	int64_t		push_local_first;	/* ... whose first step was pushed, the second made by a pass
									 * or a product */
	int64_t		push_local_product; /* ... of which the second step was one product */
	double		bytes_per_edge; /* matrix_bytes / n_edges */
	double		predicted_ms;	/* model's time of one product (< 0 if no model entry) */
	double		plan_seconds;	/* host planning time, of which: */
	double		host_seconds;	/*   host arrays before the plan (ids, 1 / out-strengths) */
	double		smem_setup_seconds; /*   the shared-memory tiles' device attributes */
	double		upload_seconds; /* device allocation + copy time */
	int			n_candidates;	/* auto: candidates the model compared */
	char		candidates[512];	/* auto: the model's "name=ms ..." */
	char		layout[48];		/* auto: the chosen candidate ("order/format") */
	double		measured_ms;	/* auto: its measured time of one product (< 0: not timed) */
	char		runner_up[48];	/* auto: the second fastest candidate ("" when there was one) */
	double		runner_up_ms;	/* auto: its measured time */
	double		runner_up_predicted_ms; /* auto: the model's time for it (< 0: no model figure) */
	char		measured[768];	/* auto: every timed candidate, "name=measured/predicted ms ..." */
	int64_t		delta_frozen_edges; /* the delta served: edges of its frozen layer, */
	int64_t		delta_recent_edges; /*   of its recent layer (the delta less the frozen one), */
	int64_t		delta_folds;	/*   and the applies that rebuilt the frozen layer */
} PrGpuReport;

/* Fills opts with the defaults (device 0, fp64, auto with 5 timed products a candidate, degree
 * order for an explicit kernel, no budget). */
void		pr_gpu_options_init(PrGpuOptions *opts);

/* Creates a GPU engine; NULL with err set when no usable device or CUDA fails. */
PrEngine   *pr_gpu_engine_create(const PrGpuOptions *opts, PrError *err);

/* Copies the report of a prepared GPU engine (PR_ERR_INVALID before prepare). */
PrStatus	pr_gpu_engine_report(PrEngine *engine, PrGpuReport *out, PrError *err);

/* Number of CUDA devices (0 when none or no driver). */
int			pr_gpu_device_count(void);

/* ---- the cold call's graph build: a graph's flat form (pr_graph_flat.h) built on the GPU from its edge
 * rows, in the engine process.  The result is byte for byte what pr_graph_build + pr_graph_write_flat
 * give for the same rows (in-edges only, unweighted; undirected adds both directions, a self-loop
 * once), so the CPU engine and every cached reader see the same graph whichever built it. ---- */

/* What a build did and where its time went. */
typedef struct PrGpuBuildReport
{
	int64_t		n_nodes;
	int64_t		n_edges;		/* stored edges (rows, doubled by an undirected build) */
	int64_t		n_dangling;
	size_t		flat_size;		/* bytes of the flat form (also set when it did not fit) */
	bool		dense_ids;		/* ids mapped through a direct table (else sorted and searched) */
	bool		wrote_output;	/* out was written (the rows there are gone, also on failure) */
	double		upload_seconds; /* rows to the device (host threads through pinned buffers) */
	double		ids_seconds;	/* id map and endpoint ranks */
	double		sort_seconds;	/* edges sorted by (destination, source), row pointers, degrees */
	double		download_seconds;	/* the flat form back to the host */
	double		total_seconds;
} PrGpuBuildReport;

/*
 * Builds the graph of m rows (src[i], dst[i]) on CUDA device `device` and writes its flat form
 * at out (capacity bytes, 8-byte aligned).  The rows are read (uploaded) before anything is
 * written, so out may overlap them.  n_threads host threads copy to and from the device.
 * Errors: PR_ERR_TOO_LARGE when the flat form needs more than capacity (report->flat_size says
 * how much; out is untouched) or the graph has more than PR_MAX_NODES nodes; PR_ERR_NOMEM when
 * device or pinned memory is short; PR_ERR_ENGINE for any other CUDA failure.
 */
PrStatus	pr_gpu_build_flat(int device, const int64_t *src, const int64_t *dst, size_t m,
							  bool undirected, void *out, size_t capacity, int n_threads,
							  PrGpuBuildReport *report, PrError *err);

#ifdef __cplusplus
}
#endif

#endif							/* PR_GPU_H */
