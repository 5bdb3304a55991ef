/*
 * pr_gpu_streamed.h — the streamed matrices of the single-GPU engine (pr_gpu_streamed.cu): the
 * pull CSR (and for HITS the push CSR) stays in host memory in the graph's own order — the arrays
 * of the PrGraph the engine was given, in the service the mapped cache segment — and every product
 * copies it to the device in blocks of rows (a cuda/plan/pr_stream.h plan) through two device
 * buffers on two streams, so the copy of block b + 1 overlaps the product of block b.
 *
 * The host arrays are registered with CUDA (page-locked in place, read-only where the device
 * supports it) so blocks are copied straight from them; when registration is refused the blocks
 * are staged through two pinned buffers filled by host threads, and when even those cannot be had
 * they are copied from pageable memory.  Values, when weighted, are the graph's doubles, streamed
 * as they are; an unweighted matrix streams none (the normalized product reads z = x / out-strength
 * as the resident layouts do).  C++ (CUDA) only.
 */
#ifndef PR_GPU_STREAMED_H
#define PR_GPU_STREAMED_H

#include "pr_gpu_engine.h"
#include "pr_residency.h"
#include "pr_stream.h"

#include <vector>

/* How blocks reach the device. */
enum StreamCopyMode
{
	STREAM_REGISTERED = 0,		/* straight from the registered host arrays */
	STREAM_STAGED,				/* through two pinned staging buffers */
	STREAM_PAGEABLE				/* from pageable memory (no pinned memory could be had) */
};

/* One streamed matrix: the host CSR, its blocks and its long rows' chunks. */
struct StreamedMatrix
{
	int64_t		n;
	int64_t		nnz;
	const int64_t *ptr;			/* [n + 1] host row pointers */
	const int32_t *col;			/* [nnz] */
	const double *val;			/* [nnz] or NULL */
	int64_t    *owned_ptr;		/* a host transpose made by prepare (malloc), or NULL */
	int32_t    *owned_col;
	double	   *owned_val;
	std::vector<int64_t> row_begin; /* [n_blocks + 1] */
	std::vector<int64_t> block_long;	/* [n_blocks + 1] first long row of each block */
	std::vector<int64_t> block_chunk;	/* [n_blocks + 1] first chunk of each block */
	int64_t		n_blocks;
	int64_t		n_long;
	int64_t		n_chunks;
	int32_t    *d_long_row;		/* [n_long] rows longer than PR_STREAM_CHUNK */
	int64_t    *d_first_chunk;	/* [n_long + 1] */
	int64_t    *d_chunk_start;	/* [n_chunks] global entry range of each chunk */
	int64_t    *d_chunk_end;
	void	   *d_partial;		/* [n_chunks * k] chunk sums */
	size_t		buffer_bytes;	/* the largest block's room in a buffer */
	size_t		copy_bytes;		/* bytes copied host -> device by one product */
	double		predicted_ms;	/* the block plan's model time of one product */
};

/* The engine's streaming state (GpuEngine.streamer). */
struct GpuStreamer
{
	StreamedMatrix pull;
	StreamedMatrix push;
	bool		has_push;
	StreamCopyMode mode;
	bool		read_only;		/* registered with cudaHostRegisterReadOnly */
	std::vector<void *> registered; /* host ranges registered by prepare */
	size_t		registered_bytes;
	cudaStream_t stream[2];
	cudaEvent_t ready;			/* the engine's stream reached the product */
	cudaEvent_t done[2];		/* a copy stream's last block is multiplied */
	cudaEvent_t copied[2];		/* a staging buffer's last copy is done */
	void	   *d_buf[2];
	void	   *h_stage[2];
	size_t		buffer_bytes;	/* each buffer: the largest block of either matrix */
	PrStreamedBytes bytes;		/* every device allocation (pr_residency_streamed_bytes) */
	size_t		device_bytes;	/* their total */
};

/* The name of a copy mode ("registered", "staged", "pageable"). */
const char *gpu_streamed_mode_name(StreamCopyMode mode);

/*
 * Sets up the streamed pull matrix (and the push matrix when in->push) of g for e: the long rows'
 * chunks, the block plans for `room` device bytes beyond the vectors (each block at most the buffer
 * pr_residency_stream_buffer gives), every device allocation of the size
 * pr_residency_streamed_bytes gives for the largest block, the registration or the staging
 * buffers, the streams and events.  PR_ERR_NOMEM when the room is too small (for the least buffers,
 * or for the longest row).
 */
PrStatus	gpu_streamed_prepare(GpuEngine *e, const PrGraph *g, const PrResidencyInput *in, size_t room,
								 PrError *err);

/* Enqueues y = M z on the engine's stream (M the pull or the push matrix; T as e->fp64 says). */
template <typename T>
PrStatus	gpu_streamed_run(GpuEngine *e, bool push, const void *z, void *y, PrError *err);

/* Waits for the copy streams, unregisters the host ranges, frees the pinned buffers, the host
 * transpose, streams and events (the device arrays are the engine's allocations). */
void		gpu_streamed_free(GpuEngine *e);

#endif							/* PR_GPU_STREAMED_H */
