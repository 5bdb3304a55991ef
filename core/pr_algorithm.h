/*
 * pr_algorithm.h — what each algorithm of the driver asks of an engine and gives back, in one
 * table: the vector slots it prepares (their layout is here too), the products it has the engine
 * lay out and runs per iteration, its columns, its result vectors and how top_k applies.  The
 * driver prepares engines from it; the GPU service sizes requests, residency inputs and resident
 * memory from it; powerrank_estimate predicts from it.  A new algorithm is a new row.
 */
#ifndef PR_ALGORITHM_H
#define PR_ALGORITHM_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The algorithms the driver runs. */
typedef enum PrAlgorithm
{
	PR_ALGORITHM_PAGERANK = 0,	/* PageRank with a restart: also personalized PageRank and RWR
								 * (k columns, one restart distribution each) */
	PR_ALGORITHM_HITS = 1		/* hubs and authorities */
} PrAlgorithm;

/* Number of algorithms (one past the last PrAlgorithm). */
#define PR_ALGORITHM_COUNT 2

/* The driver's vector slots of PageRank; the warm start uses two more. */
enum
{
	PR_SLOT_X = 0,				/* current iterate */
	PR_SLOT_Y = 1,				/* next iterate */
	PR_N_SLOTS_PAGERANK = 2,
	PR_SLOT_TEMP = 2,			/* warm start: the restart distributions, far-field steps */
	PR_SLOT_FAR = 3,			/* warm start: the far-field vector */
	PR_N_SLOTS_WARM = 4
};

/* The driver's vector slots of HITS. */
enum
{
	HITS_SLOT_HUB = 0,
	HITS_SLOT_AUTH = 1,
	HITS_SLOT_HUB_NEXT = 2,
	HITS_N_SLOTS = 3
};

/* How top_k applies to an algorithm's results. */
typedef enum PrTopK
{
	PR_TOP_K_PER_COLUMN = 0,	/* the run ranks each column where it computed it
								 * (pr_pagerank_top): min(top_k, n) rows per column come back */
	PR_TOP_K_AFTER_RUN			/* the run gives every score; the caller ranks the rows (HITS: by
								 * authority) */
} PrTopK;

/* An algorithm's descriptor. */
typedef struct PrAlgorithmInfo
{
	const char *name;			/* as messages name it: "PageRank", "HITS" */
	int			slots;			/* vector slots the driver prepares */
	int			warm_slots;		/* the same with the warm start (slots when it has none) */
	unsigned	needs;			/* the products the engine lays out (PR_NEED_* bits) */
	int			products;		/* product calls per iteration (each serves every column) */
	bool		restart;		/* a damping factor and a restart distribution over k columns
								 * (the residual then shrinks by the damping every iteration);
								 * false: one column, no damping */
	int			results;		/* result vectors per column (HITS: hubs, then authorities) */
	PrTopK		top_k;
} PrAlgorithmInfo;

/* The descriptor of an algorithm; NULL for a value that is none. */
const PrAlgorithmInfo *pr_algorithm(PrAlgorithm kind);

/*
 * The vector slots a run prepares, with or without the warm start (a run that starts mixing adds
 * the mixing's slots after them: pr_mixing.h).
 */
int			pr_algorithm_slots(const PrAlgorithmInfo *a, bool warm_start);

/* The columns of a run asked for k: k for an algorithm with a restart, else 1. */
int			pr_algorithm_columns(const PrAlgorithmInfo *a, int k);

/*
 * Rows per column of each result vector that a run on n nodes gives back: min(top_k, n) when
 * top_k (> 0) is ranked per column, else n.
 */
int64_t		pr_algorithm_result_rows(const PrAlgorithmInfo *a, int64_t n, int64_t top_k);

#ifdef __cplusplus
}
#endif

#endif							/* PR_ALGORITHM_H */
