/*
 * pr_residency.h — where a graph's sparse matrices live while the GPU engine runs: resident in
 * device memory (today's layouts), streamed from host memory block by block every product, or
 * nowhere (the graph does not fit even streamed: the caller runs it on the CPU).  Pure C11, no
 * CUDA, no PostgreSQL: the GPU engine's prepare and the service's CPU test engine make the same
 * choice from the same sizes.
 */
#ifndef PR_RESIDENCY_H
#define PR_RESIDENCY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Where the matrices live. */
typedef enum PrResidency
{
	PR_RESIDENCY_NONE = 0,		/* neither fits: out of device memory */
	PR_RESIDENCY_RESIDENT,		/* uploaded once, in device memory */
	PR_RESIDENCY_STREAMED		/* in host memory, copied to the device block by block */
} PrResidency;

/* Device bytes of each of the two block buffers of a streamed matrix, at most (256 MiB). */
#define PR_STREAM_BUFFER_MAX ((size_t) 256 << 20)

/* Device bytes of each block buffer, at least (a smaller room is not worth streaming into; a
 * matrix of less than 8 times this needs only an eighth of its bytes). */
#define PR_STREAM_BUFFER_MIN ((size_t) 4 << 20)

/* Device memory kept free besides the engine's (the CUDA context, other work): 256 MiB. */
#define PR_DEVICE_RESERVE ((size_t) 256 << 20)

/* What the choice is made from. */
typedef struct PrResidencyInput
{
	int64_t		nodes;
	int64_t		edges;
	int			k;				/* columns of the vectors */
	int			slots;			/* vector slots */
	size_t		elem;			/* bytes of one vector value: 4 (fp32) or 8 (fp64) */
	bool		weighted;		/* the matrices carry weights */
	bool		push;			/* the push (out-edge) matrix is needed too (HITS) */
	size_t		budget;			/* most device bytes the engine may take (0: no budget) */
	size_t		free_bytes;		/* device memory free now */
} PrResidencyInput;

/* The choice and the sizes it was made from. */
typedef struct PrResidencyChoice
{
	PrResidency residency;
	size_t		vector_bytes;	/* slots, scratch and per-node arrays (both ways) */
	size_t		resident_bytes; /* vectors + the resident matrices (an estimate of their layouts) */
	size_t		streamed_bytes; /* vectors + the streamed allocations at the least buffers
								 * (pr_residency_streamed_bytes) */
	size_t		limit;			/* the bytes the engine may take: the budget, or free less the reserve */
	size_t		free_bytes;		/* the input's free memory */
} PrResidencyChoice;

/* The name of a residency: "resident", "streamed", "none". */
const char *pr_residency_name(PrResidency residency);

/*
 * Rows a device vector (a slot, the copy the product reads) holds past the graph's n: the parts
 * engine's ranges are of one length (pr_parts.h), and an all-gather of them pads the last range
 * into these rows (at most PR_PARTS_MAX - 1 of them).
 */
#define PR_VECTOR_SPARE_ROWS 16

/* Device bytes of the engine's vectors for nodes, k columns, slots and a value size. */
size_t		pr_residency_vector_bytes(int64_t nodes, int k, int slots, size_t elem);

/* Rows of a streamed matrix longer than this many entries are cut into chunks of this many
 * entries, summed apart and added in order (cuda/kernels/pr_gpu_streamed_kernels.cuh). */
#define PR_STREAM_CHUNK 1024

/*
 * The device allocations of one streamed matrix besides the block buffers, in bytes: its long
 * rows' lists and chunk sums, each sized for the most long rows and chunks any matrix of that many
 * rows and entries can have (a long row has more than PR_STREAM_CHUNK entries; a row of l entries
 * has ceil(l / PR_STREAM_CHUNK) chunks, at most 2 l / (PR_STREAM_CHUNK + 1)).
 */
typedef struct PrStreamedMatrixBytes
{
	int64_t		most_long_rows;
	int64_t		most_chunks;
	size_t		long_row;		/* int32 row of each long row */
	size_t		first_chunk;	/* int64 first chunk of each long row, and the end */
	size_t		chunk_start;	/* int64 first entry of each chunk */
	size_t		chunk_end;		/* int64 end of each chunk */
	size_t		partial;		/* the chunk sums: k values of each chunk, and one more */
} PrStreamedMatrixBytes;

/* Every device allocation of the streamed matrices (beyond the vectors), in bytes: what the
 * streamed engine allocates, and what the streamed estimate counts at the least buffers. */
typedef struct PrStreamedBytes
{
	PrStreamedMatrixBytes pull;
	PrStreamedMatrixBytes push;	/* all 0 without the push matrix */
	size_t		buffer;			/* each of the two block buffers */
	size_t		total;			/* the sum of every allocation above */
} PrStreamedBytes;

/* The allocations of the streamed matrices of in (nodes, edges, k, elem, push) with two block
 * buffers of `buffer` bytes each; returns their total. */
size_t		pr_residency_streamed_bytes(const PrResidencyInput *in, size_t buffer, PrStreamedBytes *out);

/* The bytes of each block buffer that `room` device bytes beyond the vectors leave once the
 * lists and chunk sums are allocated: half the rest, at most PR_STREAM_BUFFER_MAX; 0 when that is
 * less than pr_residency_min_buffer (the streamed matrices do not fit). */
size_t		pr_residency_stream_buffer(const PrResidencyInput *in, size_t room);

/* Bytes one streamed product of a matrix copies (row pointers, columns, double weights). */
size_t		pr_residency_stream_matrix_bytes(int64_t nodes, int64_t edges, bool weighted);

/* The least room of each of the two block buffers: PR_STREAM_BUFFER_MIN, or an eighth of the
 * matrix's streamed bytes when that is less. */
size_t		pr_residency_min_buffer(int64_t nodes, int64_t edges, bool weighted);

/*
 * Chooses: RESIDENT when the resident layouts fit the limit (the budget when set, and the free
 * memory less PR_DEVICE_RESERVE), else STREAMED when the vectors and the streamed allocations with
 * two block buffers of pr_residency_min_buffer bytes do, else NONE.
 */
PrResidency pr_residency_choose(const PrResidencyInput *in, PrResidencyChoice *out);

#ifdef __cplusplus
}
#endif

#endif							/* PR_RESIDENCY_H */
