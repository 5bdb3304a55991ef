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
	size_t		streamed_bytes; /* vectors + the streamed matrices' least device room */
	size_t		limit;			/* the bytes the engine may take: the budget, or free less the reserve */
	size_t		free_bytes;		/* the input's free memory */
} PrResidencyChoice;

/* The name of a residency: "resident", "streamed", "none". */
const char *pr_residency_name(PrResidency residency);

/* Device bytes of the engine's vectors for nodes, k columns, slots and a value size. */
size_t		pr_residency_vector_bytes(int64_t nodes, int k, int slots, size_t elem);

/* Device bytes of the long-row chunk sums and per-node scratch a streamed matrix adds. */
size_t		pr_residency_stream_extra_bytes(int64_t nodes, int64_t edges, int k, size_t elem);

/* Bytes one streamed product of a matrix copies (row pointers, columns, double weights). */
size_t		pr_residency_stream_matrix_bytes(int64_t nodes, int64_t edges, bool weighted);

/* The least room of each of the two block buffers: PR_STREAM_BUFFER_MIN, or an eighth of the
 * matrix's streamed bytes when that is less. */
size_t		pr_residency_min_buffer(int64_t nodes, int64_t edges, bool weighted);

/*
 * Chooses: RESIDENT when the resident layouts fit the limit (the budget when set, and the free
 * memory less PR_DEVICE_RESERVE), else STREAMED when the vectors, the chunk sums and two block
 * buffers of pr_residency_min_buffer bytes do, else NONE.
 */
PrResidency pr_residency_choose(const PrResidencyInput *in, PrResidencyChoice *out);

#ifdef __cplusplus
}
#endif

#endif							/* PR_RESIDENCY_H */
