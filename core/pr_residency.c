/*
 * pr_residency.c — the choice between resident and streamed matrices (see pr_residency.h).
 */
#include "pr_residency.h"

#include "pr_engine.h"

#include <string.h>

/* The name of a residency. */
const char *
pr_residency_name(PrResidency residency)
{
	switch (residency)
	{
		case PR_RESIDENCY_RESIDENT:
			return "resident";
		case PR_RESIDENCY_STREAMED:
			return "streamed";
		case PR_RESIDENCY_NONE:
			break;
	}
	return "none";
}

/* Device bytes of the vectors: slots, z, staging, the order and 1 / out-strength, the restart,
 * the device top-k's scratch, the reductions' partials and statistics (as the engine allocates). */
size_t
pr_residency_vector_bytes(int64_t nodes, int k, int slots, size_t elem)
{
	size_t		n = (size_t) (nodes > 0 ? nodes : 0);
	size_t		kk = (size_t) (k > 0 ? k : 1);
	size_t		s = (size_t) (slots > 0 ? slots : 1);

	return s * (n + PR_VECTOR_SPARE_ROWS) * kk * elem	/* slots */
		+ (n + PR_VECTOR_SPARE_ROWS) * kk * elem	/* z */
		+ n * kk * 8			/* staging */
		+ (n + 1) * (4 + elem)	/* new_to_old, inv_out */
		+ n * kk * elem			/* restart */
		+ n * (elem == 8 ? 24 : 16)	/* top-k scratch */
		+ (size_t) 528 * kk * PR_COMBINE_MAX_TERMS * 8	/* partials (PR_RED_BLOCKS) */
		+ (s + 2 + PR_COMBINE_MAX_TERMS) * kk * 3 * 8;	/* statistics, the dots' results */
}

/* Device bytes of one resident matrix: a CSR (int64 row pointers, int32 columns, float values
 * when weighted) and its row bins. */
static size_t
resident_matrix_bytes(int64_t nodes, int64_t edges, bool weighted)
{
	size_t		n = (size_t) (nodes > 0 ? nodes : 0);
	size_t		m = (size_t) (edges > 0 ? edges : 0);

	return (n + 1) * 8 + n * 4 + m * (weighted ? 8 : 4);
}

/* The allocations of one streamed matrix's long rows and chunk sums (see PrStreamedMatrixBytes). */
static void
streamed_matrix_bytes(int64_t nodes, int64_t edges, int k, size_t elem, PrStreamedMatrixBytes *out)
{
	int64_t		n = nodes > 0 ? nodes : 0;
	int64_t		m = edges > 0 ? edges : 0;
	int64_t		longs = m / (PR_STREAM_CHUNK + 1);
	size_t		kk = (size_t) (k > 0 ? k : 1);

	out->most_long_rows = longs < n ? longs : n;
	out->most_chunks = 2 * m / (PR_STREAM_CHUNK + 1);
	out->long_row = (size_t) out->most_long_rows * 4;
	out->first_chunk = ((size_t) out->most_long_rows + 1) * 8;
	out->chunk_start = (size_t) out->most_chunks * 8;
	out->chunk_end = (size_t) out->most_chunks * 8;
	out->partial = ((size_t) out->most_chunks + 1) * kk * elem;
}

/* The sum of a matrix's allocations. */
static size_t
streamed_matrix_total(const PrStreamedMatrixBytes *b)
{
	return b->long_row + b->first_chunk + b->chunk_start + b->chunk_end + b->partial;
}

/* The streamed matrices' allocations with block buffers of `buffer` bytes. */
size_t
pr_residency_streamed_bytes(const PrResidencyInput *in, size_t buffer, PrStreamedBytes *out)
{
	memset(out, 0, sizeof(*out));
	streamed_matrix_bytes(in->nodes, in->edges, in->k, in->elem, &out->pull);
	if (in->push)
		streamed_matrix_bytes(in->nodes, in->edges, in->k, in->elem, &out->push);
	out->buffer = buffer;
	out->total = streamed_matrix_total(&out->pull) + streamed_matrix_total(&out->push) + 2 * buffer;
	return out->total;
}

/* The block buffers' room in `room` bytes beyond the vectors. */
size_t
pr_residency_stream_buffer(const PrResidencyInput *in, size_t room)
{
	PrStreamedBytes lists;
	size_t		fixed = pr_residency_streamed_bytes(in, 0, &lists);
	size_t		buffer = room > fixed ? (room - fixed) / 2 : 0;

	if (buffer > PR_STREAM_BUFFER_MAX)
		buffer = PR_STREAM_BUFFER_MAX;
	return buffer >= pr_residency_min_buffer(in->nodes, in->edges, in->weighted) ? buffer : 0;
}

/* Bytes one streamed product of a matrix copies: int64 row pointers, int32 columns, double
 * weights when weighted. */
size_t
pr_residency_stream_matrix_bytes(int64_t nodes, int64_t edges, bool weighted)
{
	size_t		n = (size_t) (nodes > 0 ? nodes : 0);
	size_t		m = (size_t) (edges > 0 ? edges : 0);

	return (n + 1) * 8 + m * (weighted ? 12 : 4);
}

/* The least room of each block buffer: PR_STREAM_BUFFER_MIN, or an eighth of a small matrix. */
size_t
pr_residency_min_buffer(int64_t nodes, int64_t edges, bool weighted)
{
	size_t		eighth = pr_residency_stream_matrix_bytes(nodes, edges, weighted) / 8 + 1;

	return eighth < PR_STREAM_BUFFER_MIN ? eighth : PR_STREAM_BUFFER_MIN;
}

/* Chooses where the matrices live. */
PrResidency
pr_residency_choose(const PrResidencyInput *in, PrResidencyChoice *out)
{
	int			matrices = in->push ? 2 : 1;
	PrStreamedBytes streamed;
	size_t		limit = in->free_bytes > PR_DEVICE_RESERVE ? in->free_bytes - PR_DEVICE_RESERVE : 0;

	if (in->budget > 0 && in->budget < limit)
		limit = in->budget;
	out->limit = limit;
	out->free_bytes = in->free_bytes;
	out->vector_bytes = pr_residency_vector_bytes(in->nodes, in->k, in->slots, in->elem);
	out->resident_bytes = out->vector_bytes +
		(size_t) matrices * resident_matrix_bytes(in->nodes, in->edges, in->weighted);
	out->streamed_bytes = out->vector_bytes +
		pr_residency_streamed_bytes(in, pr_residency_min_buffer(in->nodes, in->edges, in->weighted), &streamed);
	if (out->resident_bytes <= limit)
		out->residency = PR_RESIDENCY_RESIDENT;
	else if (out->streamed_bytes <= limit)
		out->residency = PR_RESIDENCY_STREAMED;
	else
		out->residency = PR_RESIDENCY_NONE;
	return out->residency;
}
