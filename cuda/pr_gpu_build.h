/*
 * pr_gpu_build.h — builds a graph on the GPU from its edge rows and writes it in flat form
 * (pr_graph_flat.h) into host memory: the cold call's build, done in the engine process.
 *
 * The result is byte for byte what pr_graph_build + pr_graph_write_flat give for the same rows
 * (in-edges only, unweighted; undirected adds both directions, a self-loop once), so the CPU
 * engine and every cached reader see the same graph whichever built it.  No PostgreSQL headers.
 */
#ifndef PR_GPU_BUILD_H
#define PR_GPU_BUILD_H

#include "pr_graph.h"

#ifdef __cplusplus
extern "C" {
#endif

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

/*
 * Copies bytes of host memory (pageable, e.g. a shared-memory segment) to device memory by up to
 * n_threads host threads, each through its own pinned buffers and stream (kept for the life of
 * the process); returns when the copy is complete.  Several times faster than one cudaMemcpy from
 * pageable memory for large arrays.
 */
PrStatus	pr_gpu_copy_to_device(int device, void *dst, const void *src, size_t bytes,
								  int n_threads, PrError *err);

#ifdef __cplusplus
}
#endif

#endif							/* PR_GPU_BUILD_H */
