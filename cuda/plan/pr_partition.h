/*
 * pr_partition.h — row partitioning of the pull matrix across several GPUs: pure C11, no CUDA,
 * no PostgreSQL.
 *
 * The pull product y = P x is split by rows: GPU p computes the rows it owns from the whole x,
 * then every GPU's rows are exchanged with one all-gather (NCCL) so each GPU holds the whole new
 * x again.  NCCL's all-gather moves the same count from every rank into consecutive places of the
 * receive buffer, so the nodes are relabelled into "slots": part p owns slots
 * [p * stride, p * stride + rows[p]), stride = the most rows any part has; the few slots past
 * rows[p] are padding (x holds 0 there and no column points at them).  Columns of every part's
 * local CSR are slot ids, so the gathered vector is used as it is, with no permutation per
 * iteration.
 *
 * Methods (see pr_partition.c for the reasoning and the bounds the tests check):
 *  - PR_PARTITION_GREEDY (default): rows by descending length, each to the part with the fewest
 *    edges among the parts not yet holding ceil(n/G) rows.  Rows differ by at most 1, edges in
 *    practice by far less than the longest row.
 *  - PR_PARTITION_SNAKE: the seed paper's bitonic assignment: rows by descending length dealt
 *    0,1,..,G-1,G-1,..,0,0,1,...  Rows differ by at most 1, edges by at most the longest row.
 *  - PR_PARTITION_RANGES: contiguous ranges of the given order, cut where the prefix of the cost
 *    edges + row_cost * rows crosses k/G of the total (no relabel inside a part).  For
 *    comparison: a range cannot balance edges and rows at once on a skewed graph.
 */
#ifndef PR_PARTITION_H
#define PR_PARTITION_H

#include "pr_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most parts (GPUs) a partition may have. */
#define PR_PARTITION_MAX_PARTS 64

/* Most threads the CSR builders use. */
#define PR_PARTITION_MAX_THREADS 64

typedef enum PrPartitionMethod
{
	PR_PARTITION_GREEDY = 0,
	PR_PARTITION_SNAKE,
	PR_PARTITION_RANGES
} PrPartitionMethod;

/* Name of a method ("greedy", "snake", "ranges"). */
const char *pr_partition_method_name(PrPartitionMethod method);

/* Parses a method name; false for anything else. */
bool		pr_partition_method_parse(const char *text, PrPartitionMethod *method);

/* How to partition. */
typedef struct PrPartitionOptions
{
	int			n_parts;		/* G, 1 .. PR_PARTITION_MAX_PARTS */
	PrPartitionMethod method;
	double		row_cost;		/* ranges: cost of one row in edges (default 1: writing y[r]) */

	/*
	 * Order of the rows inside a part (greedy, snake): descending place_key, ties ascending id.
	 * NULL: descending row length.  Pass the out-degree to keep the single-GPU engine's hot
	 * columns of x together at the front of every part.  Values must be >= 0.
	 */
	const int64_t *place_key;
} PrPartitionOptions;

/* Fills the defaults (1 part, greedy, row_cost 1, place_key NULL). */
void		pr_partition_options_init(PrPartitionOptions *options);

/* A row partition and the slot relabelling it implies. */
typedef struct PrPartition
{
	int			n_parts;
	PrPartitionMethod method;
	int64_t		n;				/* nodes (rows = columns of the square matrix) */
	int64_t		nnz;
	int64_t		stride;			/* slots per part = count of each rank's all-gather send */
	int64_t		n_slots;		/* n_parts * stride: length of the gathered vector */
	int64_t		rows[PR_PARTITION_MAX_PARTS];	/* rows each part owns */
	int64_t		edges[PR_PARTITION_MAX_PARTS];	/* entries of those rows */
	int64_t		max_row_len;	/* longest row of the matrix */
	int32_t    *slot_to_node;	/* [n_slots] original node of each slot, -1 = padding */
	int32_t    *node_to_slot;	/* [n] slot of each node */
} PrPartition;

/*
 * Partitions the n rows of a CSR (ptr[n+1]) into options->n_parts parts.  PR_ERR_TOO_LARGE when
 * the slots would not fit 32-bit ids.
 */
PrStatus	pr_partition_build(int64_t n, const int64_t *ptr, const PrPartitionOptions *options,
							   const PrAllocator *alloc, PrPartition *out, PrError *err);

/* Frees a partition. */
void		pr_partition_free(PrPartition *part, const PrAllocator *alloc);

/* First slot of part p: the displacement of its all-gather block (p * stride). */
int64_t		pr_partition_slot_begin(const PrPartition *part, int p);

/* max over parts of edges / (nnz / G) and of rows / (n / G): 1.0 is perfect balance. */
double		pr_partition_edge_imbalance(const PrPartition *part);
double		pr_partition_row_imbalance(const PrPartition *part);

/* Sets the threads the CSR builders use (<= 0: the online CPUs, at most PR_PARTITION_MAX_THREADS). */
void		pr_partition_set_threads(int n_threads);

/* The threads the CSR builders use. */
int			pr_partition_threads(void);

/* A part's rows as a CSR over slot columns. */
typedef struct PrPartCsr
{
	int64_t		n_rows;			/* rows of the part (local row i = slot slot_begin + i) */
	int64_t		n_cols;			/* the partition's n_slots */
	int64_t		slot_begin;		/* the part's first slot */
	int64_t		nnz;
	int64_t    *ptr;			/* [n_rows+1] */
	int32_t    *col;			/* [nnz] slot ids, ascending within a row */
	float	   *val;			/* [nnz] or NULL (all 1) */
} PrPartCsr;

/*
 * Builds part p's CSR from the whole matrix (ptr, col, optional val).  Entry values are
 * val[e] * col_scale[col[e]] where either may be NULL (meaning 1); val is NULL in the result when
 * both are.  Pass col_scale = 1 / out_strength (0 for dangling) for PageRank's P.
 * Multi-threaded (pr_partition_threads); the result does not depend on the thread count.
 */
PrStatus	pr_partition_local_csr(const PrPartition *part, int p, const int64_t *ptr,
								   const int32_t *col, const double *val, const double *col_scale,
								   const PrAllocator *alloc, PrPartCsr *out, PrError *err);

/* Frees a PrPartCsr. */
void		pr_part_csr_free(PrPartCsr *csr, const PrAllocator *alloc);

/*
 * The distinct columns (slots) a part's CSR reads, ascending, into *cols (allocated; may be NULL
 * when count only is wanted); returns the count or -1 on allocation failure.  The all-gather
 * scheme sends every GPU all of x; this says how much of it each part really reads.
 */
int64_t		pr_part_csr_columns(const PrPartCsr *csr, int32_t **cols, const PrAllocator *alloc);

#ifdef __cplusplus
}
#endif

#endif							/* PR_PARTITION_H */
