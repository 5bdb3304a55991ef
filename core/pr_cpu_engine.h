/*
 * pr_cpu_engine.h — the CPU engine's internals, shared by its files: its state (CpuEngine), the
 * constants of its summation order, and the functions the files call in one another.
 *
 * The multi-threaded CPU engine (doubles, pthreads):
 *
 *
 * Threads: a small pool made in prepare() and joined in release() (or the next prepare); the
 * calling thread works as thread 0.  Workers block every signal, so a host process's signal
 * handlers (PostgreSQL's) only ever run on the calling thread.
 *
 * Work split: products split rows so that every thread gets about the same number of edges plus
 * rows (binary search on the row pointers); vector operations split fixed chunks of PR_CPU_CHUNK
 * nodes.  Every output entry is computed by one thread in a fixed order, and every reduction sums
 * per-chunk partials in chunk order, so results are bit-identical whatever the thread count.
 *
 * Accuracy: every long sum is compensated (compensated_add), so its error stays about one
 * rounding however many terms it has.  A plain sum of a million nearly equal terms (the in-edges
 * of a hub, the dangling mass of a million leaves) is off by up to ~1e-11, and a change of one
 * unit in the last place of the terms can move it by as much: the iterates then wander by that
 * much forever and a tolerance of 1e-12 is never met.  A product row sums its edges plainly in
 * blocks of PR_CPU_SUM_BLOCK (rows that short are exactly the plain sum) and the block sums
 * compensated; chunk reductions (dangling mass, residuals, column sums) do the same over the
 * chunk's nodes and add the chunk partials compensated too.
 *
 * PULL_NORMALIZED first scales x by 1/out_strength into the scratch vector z (0 for dangling
 * nodes; the dangling sums of x are taken in the same pass and kept for pagerank_update), then
 * gathers y[v] = sum of z over v's in-edges.
 *
 * Column groups: with k columns, the products work on groups of 8 adjacent columns (then one of
 * 4, 2, 1 for the rest), every group's sums in registers.
 * The scaled copy z is stored group after group (group g's rows of width w, node v's at
 * v * w), so a group's values of a node are adjacent (one cache line for 8 columns: z starts on a
 * 64-byte boundary).  A product takes the groups one after the other on each block of rows
 * (the block's rows of y stay in cache); its rows go in node order for more than
 * PR_CPU_SORTED_MAX_COLUMNS columns, in the length-sorted copy otherwise.  pr_pagerank runs more
 * than PR_CPU_COLUMN_BATCH columns in batches (PrEngineOps.column_batch), so a run holds at most
 * one group of 8.  Column j is summed exactly as a one-column run sums it (same blocks, same
 * order, same roundings: gather_row_W, chunk_residual, chunk_dangling_sums), so after the same
 * iterations every column of a k-column run is bit-identical to the one-column run of its source.
 *
 * A prepare of the graph the engine already holds (same object and arrays, same products) keeps
 * the threads and everything derived from the graph (1 / out_strength, the row-sorted copy, the
 * work split) and only remakes the vectors when k or the slot count changed: the GPU service's
 * test engine serves many requests on one resident graph.
 *
 * A delta (apply_delta) keeps g's layout: each product adds the delta's terms after g's, one node's
 * terms in the delta's order on the calling thread; the delta's sources get X's 1 / out_strength
 * and the dangling sums read X's dangling list.  The delta's absent nodes (X lacks them; they are
 * dangling, out-strength 0) take no share of a uniform restart, which spreads over the n -
 * n_absent others, and the update sets their entries to exactly 0 before it takes the residual
 * (their products' terms cancel only within rounding); a chunk finds its absent nodes by a binary
 * search, made only when there are some.
 *
 * Files: pr_cpu.c the engine's operations (PrEngineOps) and its creation; pr_cpu_prepare.c
 * prepare(): the graph's layout, the vectors and the work split; pr_cpu_pool.c the thread pool;
 * pr_cpu_gather.c the products' row sums; pr_cpu_vector.c the vector operations over node chunks.
 * Each includes this header first (it sets the POSIX feature level).
 */
#ifndef PR_CPU_H
#define PR_CPU_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "pr_driver.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>

/* Nodes per reduction chunk (fixed, so the summation order never depends on the threads). */
#define PR_CPU_CHUNK 4096

/* Edges of a product row summed plainly before their sum joins the row's compensated sum. */
#define PR_CPU_SUM_BLOCK 32

/* Columns a reduction over k columns sums at a time, in locals of the thread; widest column group. */
#define PR_CPU_COLUMN_GROUP 8

/*
 * Most columns for which PULL_NORMALIZED takes the length-sorted rows; more go in node order.
 * The sorted rows keep the row loop's branches predictable, which pays while a row's values are
 * small; node order keeps the rows that neighbouring rows read in cache, which pays once each
 * node brings a cache line (doc/RESULTS.md: 8 columns 25% faster in node order on an
 * ego-Twitter-sized graph and on soc-Slashdot0902, 2 columns 13-22% slower).
 */
#define PR_CPU_SORTED_MAX_COLUMNS 4

/* Nodes a one-column combine sums term by term in a local before writing them out. */
#define PR_CPU_COMBINE_STRIP 512

/*
 * x86 with GCC or clang: the products of 4 and 8 columns also come compiled for AVX-512, taken
 * when the CPU has it.
 */
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#define PR_CPU_WIDE 1
#define PR_ALWAYS_INLINE __attribute__((always_inline))
#else
#define PR_ALWAYS_INLINE
#endif

/* Unrolls the loop that follows over a column group's columns, so its sums stay in registers. */
#if defined(__GNUC__) && !defined(__clang__)
#define PR_UNROLL _Pragma("GCC unroll 8")
#elif defined(__clang__)
#define PR_UNROLL _Pragma("clang loop unroll(full)")
#else
#define PR_UNROLL
#endif

typedef struct CpuEngine CpuEngine;

/* A piece of parallel work: run by every thread with its id. */
typedef void (*CpuTask) (CpuEngine *e, int tid, const void *arg);

/* What a worker thread is started with. */
typedef struct CpuWorker
{
	CpuEngine  *engine;
	int			id;
	uint64_t	start_generation;
} CpuWorker;

/* The engine: its graph's layout, its vectors, its work split and its threads. */
struct CpuEngine
{
	PrEngine	base;
	PrAllocator alloc;
	int			requested_threads;

	/* prepared state */
	bool		prepared;
	const PrGraph *g;
	PrGraph		g_seen;			/* *g as prepare saw it: a later prepare of the same keeps the layout */
	int64_t		n;
	int			k;
	int			n_slots;
	unsigned	needs;
	double	  **slot;			/* [n_slots] vectors of n*k, each on a 64-byte boundary */
	double	  **slot_block;		/* [n_slots] what was allocated for each slot */
	double	   *z;				/* [n*k] x / out_strength, by column group (see "Column groups") */
	double	   *z_block;		/* what was allocated for z (z is its first 64-byte boundary) */
	int			n_groups;		/* column groups of the k columns */
	bool		wide;			/* the CPU runs csr_gather_wide (AVX-512) */
	int		   *group_first;	/* [n_groups+1] first column of each group, then k */
	double	   *inv_out;		/* [n] 1 / out_strength, 0 for dangling */
	/*
	 * The in-CSR of PULL_NORMALIZED with its rows sorted by descending length (a copy): rows of
	 * equal length in a run keep the inner loop's branches predictable and the hub rows, which
	 * share many sources, together.  Each row keeps its edges in order, so every sum is taken
	 * in the same order as over g: same bits.  NULL when not made (small graphs).
	 */
	int32_t    *row_order;		/* [n] node of sorted row p */
	int64_t    *sorted_ptr;		/* [n+1] */
	int32_t    *sorted_src;		/* [m] */
	double	   *sorted_weight;	/* [m] or NULL */
	int64_t    *sorted_part;	/* [n_blocks+1] row blocks of the sorted CSR */
	bool		sorted_given;	/* the sorted copy is given_rows (not freed with the engine) */
	bool		has_given_rows;
	PrSortedRows given_rows;		/* rows given by pr_cpu_engine_use_sorted_rows */
	int64_t		n_chunks;
	int64_t    *dangling_chunk; /* [n_chunks+1] dangling-list range of each node chunk */
	double	   *part_sum;		/* [n_chunks*k] per-chunk sums (l1, column sums) */
	double	   *part_max;		/* [n_chunks*k] per-chunk maxima (linf) */
	double	   *part_dangling;	/* [n_chunks*k] per-chunk dangling sums of dangling_slot */
	double	   *part_dots;		/* [PR_COMBINE_MAX_TERMS*n_chunks*k] per-chunk dot products */
	int			dangling_slot;	/* slot whose dangling sums part_dangling holds, or -1 */
	int			z_slot;			/* slot whose scaled copy z holds, or -1 */
	double	   *coef;			/* [k] per-column scalars of the current operation */
	double	   *dangling_coef;	/* [k] alpha * dangling mass, with a dangling distribution */
	double	   *scratch;		/* [2k] carries [0, k) and sums [k, 2k) of the chunk totals */
	PrResidual *res;			/* [k] residuals of the last update / normalize */
	bool		rows_owned;		/* pagerank_update writes only rows [own_begin, own_end) (own_rows) */
	int64_t		own_begin;
	int64_t		own_end;
	bool		part;			/* a part of a larger graph (pr_cpu_engine_own_part) */
	bool		dangling_given;	/* coef holds the whole graph's dangling sums for the next update */
	double		whole_nodes;	/* and this its node count (pr_cpu_engine_give_dangling) */
	bool		sums_given;		/* coef holds the whole graph's column sums for the next normalize */
	bool		have_residual;
	double	   *far_field;		/* [n] the far-field vector kept for the warm start, or NULL */
	/* the dangling nodes the dangling sums read: g's, or the delta's graph's (delta_dangling) */
	const int32_t *dangling;
	int64_t		n_dangling;
	/*
	 * The delta the engine serves beside g (apply_delta), or none (n_delta_edges,
	 * n_delta_sources and n_delta_absent 0): its edges in (dst, src, weight) order (the pull
	 * products) and in (src, dst, weight) order (the push product), the sources whose inv_out it
	 * rewrote with their X out-strengths, X's dangling list, its absent nodes (ascending: a
	 * uniform restart leaves them out, and each update sets their entries to 0).  A prepare that lays g out again (other products) keeps
	 * it: the engine unprepared keeps the delta's copies in delta_pending for
	 * delta_pending_graph (delta_pending_seen its arrays), and the next layout of that graph
	 * takes them again; a prepare of another graph, or another delta given, drops them.  So a
	 * failed prepare never leaves a later one serving g alone.
	 */
	PrEdgeChange *delta_pull;
	PrEdgeChange *delta_push;
	int64_t		n_delta_edges;
	int32_t    *delta_sources;
	double	   *delta_strength;	/* [n_delta_sources] X's out-strength of each */
	int64_t		n_delta_sources;
	int32_t    *delta_dangling;
	int32_t    *delta_absent;
	int64_t		n_delta_absent;
	PrGraphDelta delta_pending;
	const PrGraph *delta_pending_graph;
	PrGraph		delta_pending_seen;

	/* restart entries bucketed by node chunk, rebuilt by each pagerank_update */
	int64_t    *restart_chunk;	/* [n_chunks+1] */
	int32_t    *restart_node;
	int32_t    *restart_col;
	double	   *restart_weight;
	int64_t		restart_cap;

	/* work split */
	int			n_threads;
	int64_t		n_blocks;		/* row blocks of a product, claimed by the threads in turn */
	int64_t    *in_part;		/* [n_blocks+1] row ranges of the in-CSR */
	int64_t    *out_part;		/* [n_blocks+1] row ranges of the out-CSR */
	atomic_llong next_item;		/* next block / chunk to claim in the current task */

	/* thread pool */
	bool		sync_ready;
	pthread_mutex_t mutex;
	pthread_cond_t go;
	pthread_cond_t done;
	_Atomic uint64_t generation;	/* bumped to hand out a task */
	atomic_int	pending;		/* workers still running the current task */
	atomic_int	sleepers;		/* workers asleep on go */
	atomic_bool main_waiting;	/* the caller sleeps on done */
	atomic_bool quit;
	CpuTask		task;
	const void *task_arg;
	pthread_t  *threads;
	CpuWorker  *workers;
	int			n_workers;		/* started worker threads (n_threads - 1) */
};

/* Allocates an array through the engine's allocator. */
#define ENGINE_ALLOC(e, type, count) ((type *) pr_alloc_array(&(e)->alloc, (size_t) (count), sizeof(type)))

/*
 * Adds value to the compensated sum *sum + *carry (Neumaier's variant of Kahan summation): the
 * rounding error of each addition is exact in double and collects in *carry, so *sum + *carry
 * is within about one rounding of the exact sum whatever the number of terms.
 */
static inline void
compensated_add(double *sum, double *carry, double value)
{
	double		total = *sum + value;

	if (fabs(*sum) >= fabs(value))
		*carry += (*sum - total) + value;
	else
		*carry += (value - total) + *sum;
	*sum = total;
}

/*
 * Claims the next work item (row block or node chunk) of the current task.  Which thread gets an
 * item never changes what is computed: every item writes its own outputs and partials.
 */
static inline int64_t
claim(CpuEngine *e)
{
	return atomic_fetch_add_explicit(&e->next_item, 1, memory_order_relaxed);
}

/* Arguments of the product tasks. */
typedef struct ProductArgs
{
	const double *x;
	double	   *y;
	int			x_slot;
} ProductArgs;

/* Arguments of the update and normalize tasks. */
typedef struct UpdateArgs
{
	double	   *y;
	const double *x;			/* previous iterate / old slot, or NULL */
	double		alpha;
	bool		uniform;
	const PrRestart *restart;	/* pagerank_update: its dangling distribution, if any */
} UpdateArgs;

/* Arguments of the combine and dots tasks. */
typedef struct MixArgs
{
	int			n_terms;
	const double *in[PR_COMBINE_MAX_TERMS];
	const double *a;			/* dots: the slot every term is multiplied with */
	double	   *out;			/* combine: the output slot */
	const double *coef;			/* combine: [n_terms * k] */
} MixArgs;

/* Thread pool (pr_cpu_pool.c) */

/* Makes the pool's mutex and condition variables; false when the system refuses one. */
bool		pr_cpu_pool_init(CpuEngine *e);

/* Destroys what pr_cpu_pool_init made (the threads stopped). */
void		pr_cpu_pool_destroy(CpuEngine *e);

/*
 * Starts n_threads - 1 workers with every signal blocked.  If the system refuses a thread, the
 * engine goes on with those it has (results do not depend on the thread count).
 */
PrStatus	pr_cpu_pool_start(CpuEngine *e, PrError *err);

/* Stops and joins every worker thread. */
void		pr_cpu_pool_stop(CpuEngine *e);

/* Runs task on every thread (the caller is thread 0) and waits for all of them. */
void		pr_cpu_run(CpuEngine *e, CpuTask task, const void *arg);

/* Products (pr_cpu_gather.c): tasks of pr_cpu_run, arg a ProductArgs */

/* y = gather of z (the scaled x) over in-edges, this thread's rows. */
void		pr_cpu_task_pull_normalized(CpuEngine *e, int tid, const void *varg);

/* y = Aᵀ x over in-edges, this thread's rows. */
void		pr_cpu_task_pull(CpuEngine *e, int tid, const void *varg);

/* y = A x over out-edges, this thread's rows. */
void		pr_cpu_task_push(CpuEngine *e, int tid, const void *varg);

/* Adds the delta's terms of product to y (x its input), in the delta's order (see apply_delta). */
void		pr_cpu_add_delta(CpuEngine *e, PrProduct product, const double *x, double *y);

/* Vector operations over node chunks (pr_cpu_vector.c) */

/* z = x / out_strength and the dangling sums of x, this thread's chunks (arg a ProductArgs). */
void		pr_cpu_task_scale_by_strength(CpuEngine *e, int tid, const void *varg);

/* Per-chunk dangling sums of x (arg: x). */
void		pr_cpu_task_dangling_sums(CpuEngine *e, int tid, const void *varg);

/* The PageRank update and its residual partials, this thread's chunks (arg an UpdateArgs). */
void		pr_cpu_task_pagerank_update(CpuEngine *e, int tid, const void *varg);

/* Per-chunk column sums of y (arg an UpdateArgs). */
void		pr_cpu_task_column_sums(CpuEngine *e, int tid, const void *varg);

/* Divides each column by its sum (coef), then the residual partials vs x (arg an UpdateArgs). */
void		pr_cpu_task_divide_columns(CpuEngine *e, int tid, const void *varg);

/* out = sum of coef[t * k + j] * in_t per column, this thread's chunks (arg a MixArgs). */
void		pr_cpu_task_combine(CpuEngine *e, int tid, const void *varg);

/* Per-chunk dot products of a with every in_t into part_dots, this thread's chunks (a MixArgs). */
void		pr_cpu_task_dots(CpuEngine *e, int tid, const void *varg);

/* Sums the per-chunk partials of part into out[k], in chunk order, compensated. */
void		pr_cpu_sum_partials(const CpuEngine *e, const double *part, double *out);

/* Collects the residual partials into res[k]. */
void		pr_cpu_collect_residual(CpuEngine *e);

/* Prepare (pr_cpu_prepare.c) */

/* Takes the graph, allocates the slots and scratch vectors, splits the work, starts threads. */
PrStatus	pr_cpu_prepare(PrEngine *base, const PrGraph *g, int k, int n_slots, unsigned needs,
						   PrError *err);

/* Frees everything prepare() made and stops the threads; the engine can be prepared again. */
void		pr_cpu_unprepare(CpuEngine *e);

/* The apply_delta operation (see pr_engine.h). */
PrStatus	pr_cpu_apply_delta(PrEngine *base, const PrGraphDelta *delta, PrError *err);

#endif							/* PR_CPU_H */
