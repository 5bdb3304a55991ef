/*
 * pr_cpu.c — the multi-threaded CPU engine (doubles, pthreads).
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
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "pr_driver.h"

#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

/* Nodes per reduction chunk (fixed, so the summation order never depends on the threads). */
#define PR_CPU_CHUNK 4096

/* Edges of a product row summed plainly before their sum joins the row's compensated sum. */
#define PR_CPU_SUM_BLOCK 32

/* Columns a reduction over k columns sums at a time, in locals of the thread; widest column group. */
#define PR_CPU_COLUMN_GROUP 8

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

/*
 * Most columns pr_pagerank runs at once on this engine (PrEngineOps.column_batch): one column
 * group.  Beyond it, one pass over the edges for all columns reads n * k values per iteration,
 * which outgrows the caches: on an ego-Twitter-sized graph (81 K nodes) 16 columns at once took
 * 1.7-2.2x the time of two batches of 8 (doc/RESULTS.md, "Many-source RWR on the CPU").
 */
#define PR_CPU_COLUMN_BATCH 8

/* Most threads the engine starts. */
#define PR_CPU_MAX_THREADS 256

/*
 * Polls of a waiting thread before it sleeps on a condition variable (about 0.1 ms).  Plain loads,
 * no pause instruction: under KVM a pause loop makes the hypervisor deschedule the vCPU.
 */
#define PR_CPU_SPIN 100000

/* Nodes from which PULL_NORMALIZED runs over a copy of the in-CSR with rows sorted by length. */
#define PR_CPU_SORT_ROWS_MIN 4096

/*
 * Most columns for which PULL_NORMALIZED takes the length-sorted rows; more go in node order.
 * The sorted rows keep the row loop's branches predictable, which pays while a row's values are
 * small; node order keeps the rows that neighbouring rows read in cache, which pays once each
 * node brings a cache line (doc/RESULTS.md: 8 columns 25% faster in node order on an
 * ego-Twitter-sized graph and on soc-Slashdot0902, 2 columns 13-22% slower).
 */
#define PR_CPU_SORTED_MAX_COLUMNS 4

/* Edges plus rows per row block of a product. */
#define PR_CPU_BLOCK_WORK 16384

/* Edges plus rows per thread below which extra threads do not pay. */
#define PR_CPU_WORK_PER_THREAD 32768

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
	int64_t		n_chunks;
	int64_t    *dangling_chunk; /* [n_chunks+1] dangling-list range of each node chunk */
	double	   *part_sum;		/* [n_chunks*k] per-chunk sums (l1, column sums) */
	double	   *part_max;		/* [n_chunks*k] per-chunk maxima (linf) */
	double	   *part_dangling;	/* [n_chunks*k] per-chunk dangling sums of dangling_slot */
	int			dangling_slot;	/* slot whose dangling sums part_dangling holds, or -1 */
	int			z_slot;			/* slot whose scaled copy z holds, or -1 */
	double	   *coef;			/* [k] per-column scalars of the current operation */
	double	   *dangling_coef;	/* [k] alpha * dangling mass, with a dangling distribution */
	double	   *scratch;		/* [2k] carries [0, k) and sums [k, 2k) of the chunk totals */
	PrResidual *res;			/* [k] residuals of the last update / normalize */
	bool		have_residual;
	double	   *far_field;		/* [n] the far-field vector kept for the warm start, or NULL */

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

/* ---------------------------------------------------------------- thread pool */

/* A short pause inside a spin loop. */
static inline void
cpu_relax(void)
{
	__asm__ __volatile__("":::"memory");
}

/*
 * Body of a worker thread: wait for a new generation (spinning a little, then sleeping on the
 * condition variable), run its task, report, repeat until quit.
 */
static void *
cpu_worker_main(void *arg)
{
	CpuWorker  *w = (CpuWorker *) arg;
	CpuEngine  *e = w->engine;
	uint64_t	seen = w->start_generation;

	for (;;)
	{
		uint64_t	gen = atomic_load(&e->generation);

		for (int spin = 0; gen == seen && spin < PR_CPU_SPIN; spin++)
		{
			cpu_relax();
			gen = atomic_load(&e->generation);
		}
		if (gen == seen)
		{
			pthread_mutex_lock(&e->mutex);
			atomic_fetch_add(&e->sleepers, 1);
			while ((gen = atomic_load(&e->generation)) == seen)
				pthread_cond_wait(&e->go, &e->mutex);
			atomic_fetch_sub(&e->sleepers, 1);
			pthread_mutex_unlock(&e->mutex);
		}
		seen = gen;
		if (atomic_load(&e->quit))
			break;
		e->task(e, w->id, e->task_arg);
		if (atomic_fetch_sub(&e->pending, 1) == 1 && atomic_load(&e->main_waiting))
		{
			pthread_mutex_lock(&e->mutex);
			pthread_cond_signal(&e->done);
			pthread_mutex_unlock(&e->mutex);
		}
	}
	return NULL;
}

/* Starts a new generation: workers spinning see it, sleeping ones are woken. */
static void
cpu_pool_announce(CpuEngine *e)
{
	atomic_fetch_add(&e->generation, 1);
	if (atomic_load(&e->sleepers) > 0)
	{
		pthread_mutex_lock(&e->mutex);
		pthread_cond_broadcast(&e->go);
		pthread_mutex_unlock(&e->mutex);
	}
}

/* Runs task on every thread (the caller is thread 0) and waits for all of them. */
static void
cpu_run(CpuEngine *e, CpuTask task, const void *arg)
{
	if (e->n_workers == 0)
	{
		atomic_store(&e->next_item, 0);
		task(e, 0, arg);
		return;
	}
	e->task = task;
	e->task_arg = arg;
	atomic_store(&e->next_item, 0);
	atomic_store(&e->pending, e->n_workers);
	cpu_pool_announce(e);
	task(e, 0, arg);
	for (int spin = 0; atomic_load(&e->pending) > 0 && spin < PR_CPU_SPIN; spin++)
		cpu_relax();
	if (atomic_load(&e->pending) > 0)
	{
		pthread_mutex_lock(&e->mutex);
		atomic_store(&e->main_waiting, true);
		while (atomic_load(&e->pending) > 0)
			pthread_cond_wait(&e->done, &e->mutex);
		atomic_store(&e->main_waiting, false);
		pthread_mutex_unlock(&e->mutex);
	}
}

/* Stops and joins every worker thread. */
static void
cpu_pool_stop(CpuEngine *e)
{
	if (e->n_workers > 0)
	{
		atomic_store(&e->quit, true);
		pthread_mutex_lock(&e->mutex);
		atomic_fetch_add(&e->generation, 1);
		pthread_cond_broadcast(&e->go);
		pthread_mutex_unlock(&e->mutex);
		for (int i = 0; i < e->n_workers; i++)
			pthread_join(e->threads[i], NULL);
	}
	e->n_workers = 0;
	atomic_store(&e->quit, false);
	pr_free(&e->alloc, e->threads);
	pr_free(&e->alloc, e->workers);
	e->threads = NULL;
	e->workers = NULL;
}

/*
 * Starts n_threads - 1 workers with every signal blocked.  If the system refuses a thread, the
 * engine goes on with those it has (results do not depend on the thread count).
 */
static PrStatus
cpu_pool_start(CpuEngine *e, PrError *err)
{
	int			wanted = e->n_threads - 1;
	sigset_t	all,
				old;

	e->n_workers = 0;
	if (wanted <= 0)
		return PR_OK;
	e->threads = ENGINE_ALLOC(e, pthread_t, wanted);
	e->workers = ENGINE_ALLOC(e, CpuWorker, wanted);
	if (e->threads == NULL || e->workers == NULL)
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory starting CPU threads");
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (int i = 0; i < wanted; i++)
	{
		e->workers[i].engine = e;
		e->workers[i].id = i + 1;
		e->workers[i].start_generation = atomic_load(&e->generation);
		if (pthread_create(&e->threads[i], NULL, cpu_worker_main, &e->workers[i]) != 0)
			break;
		e->n_workers++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	e->n_threads = e->n_workers + 1;
	return PR_OK;
}

/* ---------------------------------------------------------------- work split */

/*
 * Claims the next work item (row block or node chunk) of the current task.  Which thread gets an
 * item never changes what is computed: every item writes its own outputs and partials.
 */
static inline int64_t
claim(CpuEngine *e)
{
	return atomic_fetch_add_explicit(&e->next_item, 1, memory_order_relaxed);
}

/*
 * Splits rows 0..n so each of the n_threads parts has about the same edges + rows: part[t] is
 * the first row v with ptr[v] + v >= t * (m + n) / T.
 */
static void
split_rows(const int64_t *ptr, int64_t n, int n_threads, int64_t *part)
{
	int64_t		total = ptr[n] + n;

	part[0] = 0;
	for (int t = 1; t < n_threads; t++)
	{
		int64_t		target = (int64_t) ((double) total * t / n_threads);

		part[t] = pr_csr_row_at(ptr, part[t - 1], n, target, 1);
	}
	part[n_threads] = n;
}

/* ---------------------------------------------------------------- tasks */

/* Arguments of the product tasks. */
typedef struct ProductArgs
{
	const double *x;
	double	   *y;
	int			x_slot;
} ProductArgs;

/*
 * The dangling sums of x over chunk c's dangling nodes into part_dangling: every column in plain
 * blocks of PR_CPU_SUM_BLOCK, the block sums compensated (so column j's sum is that of a
 * one-column run of column j); k columns in groups of PR_CPU_COLUMN_GROUP, summed in locals.
 */
static inline void
chunk_dangling_sums(CpuEngine *e, int64_t c, const double *x)
{
	const int	k = e->k;
	const int32_t *dangling = e->g->dangling;
	double	   *part = e->part_dangling + c * k;

	if (k == 1)
	{
		double		s = 0.0,
					s_carry = 0.0;
		int64_t		d = e->dangling_chunk[c],
					end = e->dangling_chunk[c + 1];

		while (d < end)
		{
			int64_t		block_end = end - d > PR_CPU_SUM_BLOCK ? d + PR_CPU_SUM_BLOCK : end;
			double		block = 0.0;

			for (; d < block_end; d++)
				block += x[dangling[d]];
			compensated_add(&s, &s_carry, block);
		}
		part[0] = s + s_carry;
		return;
	}
	for (int j0 = 0; j0 < k; j0 += PR_CPU_COLUMN_GROUP)
	{
		int			width = k - j0 < PR_CPU_COLUMN_GROUP ? k - j0 : PR_CPU_COLUMN_GROUP;
		double		s[PR_CPU_COLUMN_GROUP],
					s_carry[PR_CPU_COLUMN_GROUP],
					block[PR_CPU_COLUMN_GROUP];
		int64_t		d = e->dangling_chunk[c],
					end = e->dangling_chunk[c + 1];

		for (int j = 0; j < width; j++)
			s[j] = s_carry[j] = 0.0;
		while (d < end)
		{
			int64_t		block_end = end - d > PR_CPU_SUM_BLOCK ? d + PR_CPU_SUM_BLOCK : end;

			for (int j = 0; j < width; j++)
				block[j] = 0.0;
			for (; d < block_end; d++)
			{
				const double *xd = x + (int64_t) dangling[d] * k + j0;

				for (int j = 0; j < width; j++)
					block[j] += xd[j];
			}
			for (int j = 0; j < width; j++)
				compensated_add(&s[j], &s_carry[j], block[j]);
		}
		for (int j = 0; j < width; j++)
			part[j0 + j] = s[j] + s_carry[j];
	}
}

/* zg[v * width + j] = x[v * k + j] * inv_out[v] for the width columns of a group, rows [v0, v1). */
PR_ALWAYS_INLINE static inline void
scale_group(const double *x, int k, const double *inv_out, int width, int64_t v0, int64_t v1,
			double *zg)
{
	for (int64_t v = v0; v < v1; v++)
	{
		double		f = inv_out[v];
		const double *xv = x + v * k;

		PR_UNROLL for (int j = 0; j < width; j++)
			zg[v * width + j] = xv[j] * f;
	}
}

/* z = x / out_strength (0 for dangling nodes) and the dangling sums of x, for chunk c. */
static inline void
chunk_scale_by_strength(CpuEngine *e, int64_t c, const double *x)
{
	const int	k = e->k;
	int64_t		v0 = c * PR_CPU_CHUNK;
	int64_t		v1 = v0 + PR_CPU_CHUNK < e->n ? v0 + PR_CPU_CHUNK : e->n;

	if (k == 1)
	{
		for (int64_t v = v0; v < v1; v++)
			e->z[v] = x[v] * e->inv_out[v];
	}
	else
	{
		for (int g = 0; g < e->n_groups; g++)
		{
			int			first = e->group_first[g];
			int			width = e->group_first[g + 1] - first;
			double	   *zg = e->z + e->n * first;

			/* the widths of groups as constants: the column loops unroll */
			if (width == 8)
				scale_group(x + first, k, e->inv_out, 8, v0, v1, zg);
			else if (width == 4)
				scale_group(x + first, k, e->inv_out, 4, v0, v1, zg);
			else if (width == 2)
				scale_group(x + first, k, e->inv_out, 2, v0, v1, zg);
			else
				scale_group(x + first, k, e->inv_out, width, v0, v1, zg);
		}
	}
	chunk_dangling_sums(e, c, x);
}

/* z = x / out_strength and the dangling sums of x, this thread's chunks. */
static void
task_scale_by_strength(CpuEngine *e, int tid, const void *varg)
{
	const ProductArgs *a = (const ProductArgs *) varg;

	(void) tid;
	for (int64_t c; (c = claim(e)) < e->n_chunks;)
		chunk_scale_by_strength(e, c, a->x);
}

/* Plain sum of w * x[col] over entries [b, end) of a row (w NULL: weight 1), two accumulators. */
static inline double
row_block_sum(const int32_t *col, const double *w, const double *x, int64_t b, int64_t end)
{
	double		s0 = 0.0,
				s1 = 0.0;

	if (w == NULL)
	{
		for (; b + 1 < end; b += 2)
		{
			s0 += x[col[b]];
			s1 += x[col[b + 1]];
		}
		if (b < end)
			s0 += x[col[b]];
	}
	else
	{
		for (; b + 1 < end; b += 2)
		{
			s0 += w[b] * x[col[b]];
			s1 += w[b + 1] * x[col[b + 1]];
		}
		if (b < end)
			s0 += w[b] * x[col[b]];
	}
	return s0 + s1;
}

#if defined(__GNUC__) || defined(__clang__)
#define PR_CPU_VECTORS 1
/* W adjacent doubles as one value, so a group's sums are vector additions (lane by lane). */
typedef double PrDouble2 __attribute__((vector_size(2 * sizeof(double))));
typedef double PrDouble4 __attribute__((vector_size(4 * sizeof(double))));
typedef double PrDouble8 __attribute__((vector_size(8 * sizeof(double))));

/*
 * Defines gather_row_vector_W: gather_row_W (below) with the W columns as one vector V, each
 * addition W lane-wise additions — the same roundings as W scalar ones, so the same bits.  Used
 * where V is a register: 2 columns always, 4 and 8 in the AVX-512 compilation (compiled for SSE2
 * alone, 4 and 8 lanes were slower than the scalar sums).
 */
#define DEFINE_GATHER_ROW_VECTOR(W, V) \
PR_ALWAYS_INLINE static inline void \
gather_row_vector_##W(const int32_t *col, const double *w, const double *x, int64_t stride, int64_t b, \
			   int64_t end, double *out) \
{ \
	double		sum[W], carry[W]; \
	const bool	one_block = end - b <= PR_CPU_SUM_BLOCK; \
\
	for (int j = 0; j < W; j++) \
		sum[j] = carry[j] = 0.0; \
	while (b < end) \
	{ \
		int64_t		block_end = end - b > PR_CPU_SUM_BLOCK ? b + PR_CPU_SUM_BLOCK : end; \
		V			s0 = {0}, \
					s1 = {0}, \
					x0, \
					x1, \
					block; \
\
		if (w == NULL) \
			for (; b + 1 < block_end; b += 2) \
			{ \
				memcpy(&x0, x + col[b] * stride, sizeof(V)); \
				memcpy(&x1, x + col[b + 1] * stride, sizeof(V)); \
				s0 += x0; \
				s1 += x1; \
			} \
		else \
			for (; b + 1 < block_end; b += 2) \
			{ \
				memcpy(&x0, x + col[b] * stride, sizeof(V)); \
				memcpy(&x1, x + col[b + 1] * stride, sizeof(V)); \
				s0 += w[b] * x0; \
				s1 += w[b + 1] * x1; \
			} \
		if (b < block_end) \
		{ \
			memcpy(&x0, x + col[b] * stride, sizeof(V)); \
			s0 += (w != NULL ? w[b] : 1.0) * x0; \
			b++; \
		} \
		block = s0 + s1; \
		if (one_block) \
		{ \
			memcpy(out, &block, sizeof(V)); \
			return; \
		} \
		for (int j = 0; j < W; j++) \
			compensated_add(&sum[j], &carry[j], block[j]); \
	} \
	for (int j = 0; j < W; j++) \
		out[j] = sum[j] + carry[j]; \
}

DEFINE_GATHER_ROW_VECTOR(2, PrDouble2)
DEFINE_GATHER_ROW_VECTOR(4, PrDouble4)
DEFINE_GATHER_ROW_VECTOR(8, PrDouble8)
#endif

/*
 * Defines gather_row_W: out[j] = sum over entries [b, end) of a row of w * x[col][j] for the W
 * adjacent columns j < W of x, node u's at x + u * stride (w NULL: weight 1), summed per column
 * exactly as the one-column path sums a row: plain blocks of PR_CPU_SUM_BLOCK edges (even and odd
 * edges in two accumulators, as row_block_sum), the block sums compensated when the row has more
 * than one block.  W is a constant, so the accumulators live in registers.
 */
#define DEFINE_GATHER_ROW(W) \
PR_ALWAYS_INLINE static inline void \
gather_row_##W(const int32_t *col, const double *w, const double *x, int64_t stride, int64_t b, \
			   int64_t end, double *out) \
{ \
	double		sum[W], carry[W], s0[W], s1[W]; \
	const bool	one_block = end - b <= PR_CPU_SUM_BLOCK; \
\
	PR_UNROLL for (int j = 0; j < W; j++) \
		sum[j] = carry[j] = 0.0; \
	while (b < end) \
	{ \
		int64_t		block_end = end - b > PR_CPU_SUM_BLOCK ? b + PR_CPU_SUM_BLOCK : end; \
\
		PR_UNROLL for (int j = 0; j < W; j++) \
			s0[j] = s1[j] = 0.0; \
		if (w == NULL) \
			for (; b + 1 < block_end; b += 2) \
			{ \
				const double *x0 = x + col[b] * stride; \
				const double *x1 = x + col[b + 1] * stride; \
\
				PR_UNROLL for (int j = 0; j < W; j++) \
				{ \
					s0[j] += x0[j]; \
					s1[j] += x1[j]; \
				} \
			} \
		else \
			for (; b + 1 < block_end; b += 2) \
			{ \
				const double *x0 = x + col[b] * stride; \
				const double *x1 = x + col[b + 1] * stride; \
				double		w0 = w[b], \
							w1 = w[b + 1]; \
\
				PR_UNROLL for (int j = 0; j < W; j++) \
				{ \
					s0[j] += w0 * x0[j]; \
					s1[j] += w1 * x1[j]; \
				} \
			} \
		if (b < block_end) \
		{ \
			const double *x0 = x + col[b] * stride; \
			double		w0 = w != NULL ? w[b] : 1.0; \
\
			PR_UNROLL for (int j = 0; j < W; j++) \
				s0[j] += w0 * x0[j]; \
			b++; \
		} \
		if (one_block) \
		{ \
			PR_UNROLL for (int j = 0; j < W; j++) \
				out[j] = s0[j] + s1[j]; \
			return; \
		} \
		PR_UNROLL for (int j = 0; j < W; j++) \
			compensated_add(&sum[j], &carry[j], s0[j] + s1[j]); \
	} \
	PR_UNROLL for (int j = 0; j < W; j++) \
		out[j] = sum[j] + carry[j]; \
}

DEFINE_GATHER_ROW(1)
DEFINE_GATHER_ROW(2)
DEFINE_GATHER_ROW(4)
DEFINE_GATHER_ROW(8)

/*
 * y[node of row p][j] = sum over row p of w * x[col][j] for rows [p0, p1), one column (k = 1:
 * stride and width 1) or the width columns of one column group (x: the group's values, node u's
 * at x + u * stride; y: rows of k values, the group's first column at y_first).  The node of row
 * p is row_order[p] in a row-permuted CSR, p itself when row_order is NULL.  A row is summed
 * plainly in blocks of PR_CPU_SUM_BLOCK edges, the block sums compensated (a row of one block is
 * its plain sum).  The per-row summation order is fixed, so results do not depend on threads.
 */
PR_ALWAYS_INLINE static inline void
csr_gather_rows(const int64_t *ptr, const int32_t *col, const double *w, const double *x,
				int64_t stride, int width, double *y, int k, int y_first,
				const int32_t *row_order, int64_t p0, int64_t p1, bool wide)
{
	(void) wide;				/* used only where vector types exist */
	for (int64_t p = p0; p < p1; p++)
	{
		int64_t		b = ptr[p],
					end = ptr[p + 1];
		double	   *yv = y + (row_order != NULL ? (int64_t) row_order[p] : p) * k + y_first;

		switch (width)
		{
			/*
			 * a group's own layout (stride = width) with the stride as a constant; vector sums
			 * where a group is a register (GATHER_GROUP: vector or scalar by wide)
			 */
#ifdef PR_CPU_VECTORS
#define GATHER_GROUP(W, S) \
			(wide ? gather_row_vector_##W(col, w, x, S, b, end, yv) : gather_row_##W(col, w, x, S, b, end, yv))
#define GATHER_PAIR(S) gather_row_vector_2(col, w, x, S, b, end, yv)
#else
#define GATHER_GROUP(W, S) gather_row_##W(col, w, x, S, b, end, yv)
#define GATHER_PAIR(S) gather_row_2(col, w, x, S, b, end, yv)
#endif
			case 8:
				if (stride == 8)
					GATHER_GROUP(8, 8);
				else
					GATHER_GROUP(8, stride);
				continue;
			case 4:
				if (stride == 4)
					GATHER_GROUP(4, 4);
				else
					GATHER_GROUP(4, stride);
				continue;
			case 2:
				if (stride == 2)
					GATHER_PAIR(2);
				else
					GATHER_PAIR(stride);
				continue;
#undef GATHER_GROUP
#undef GATHER_PAIR
			default:
				break;
		}
		if (stride != 1)
		{
			gather_row_1(col, w, x, stride, b, end, yv);
			continue;
		}
		{
			double		s = 0.0,
						carry = 0.0;

			if (end - b <= PR_CPU_SUM_BLOCK)
			{
				yv[0] = row_block_sum(col, w, x, b, end);
				continue;
			}
			for (; b < end; b += PR_CPU_SUM_BLOCK)
				compensated_add(&s, &carry,
								row_block_sum(col, w, x, b,
											  end - b > PR_CPU_SUM_BLOCK ? b + PR_CPU_SUM_BLOCK : end));
			yv[0] = s + carry;
		}
	}
}

/* csr_gather_rows, compiled for the baseline instruction set. */
static void
csr_gather(const int64_t *ptr, const int32_t *col, const double *w, const double *x,
		   int64_t stride, int width, double *y, int k, int y_first, const int32_t *row_order,
		   int64_t p0, int64_t p1)
{
	csr_gather_rows(ptr, col, w, x, stride, width, y, k, y_first, row_order, p0, p1, false);
}

#ifdef PR_CPU_WIDE
/*
 * csr_gather_rows compiled for AVX-512 (a group of 8 columns of a node is one register), used
 * where the CPU has it (CpuEngine.wide) for unweighted rows: their sums only add, lane by lane in
 * the same order, so the results are the same bits (a weighted row's product could be fused into
 * one rounding).
 */
__attribute__((target("avx512f")))
static void
csr_gather_wide(const int64_t *ptr, const int32_t *col, const double *w, const double *x,
				int64_t stride, int width, double *y, int k, int y_first,
				const int32_t *row_order, int64_t p0, int64_t p1)
{
	csr_gather_rows(ptr, col, w, x, stride, width, y, k, y_first, row_order, p0, p1, true);
}
#endif

/*
 * y = the gather of x over a CSR's rows (ptr, col, w; order as for csr_gather), the blocks of rows
 * (part[b] .. part[b + 1]) this thread claims, one column group after the other (the block's rows
 * of y stay in cache meanwhile).  grouped: x is laid out by column group (z); otherwise x has
 * rows of k values.
 */
static inline void
gather_blocks(CpuEngine *e, const int64_t *ptr, const int32_t *col, const double *w,
			  const int32_t *order, const int64_t *part, const double *x, bool grouped,
			  double *y)
{
	for (int64_t b; (b = claim(e)) < e->n_blocks;)
		for (int g = 0; g < e->n_groups; g++)
		{
			int			first = e->group_first[g];
			int			width = e->group_first[g + 1] - first;
			const double *xg = grouped ? x + e->n * first : x + first;

#ifdef PR_CPU_WIDE
			if (e->wide && w == NULL && width >= 4)
			{
				csr_gather_wide(ptr, col, w, xg, grouped ? width : e->k, width, y, e->k, first,
								order, part[b], part[b + 1]);
				continue;
			}
#endif
			csr_gather(ptr, col, w, xg, grouped ? width : e->k, width, y, e->k, first, order,
					   part[b], part[b + 1]);
		}
}

/* y = gather of z (the scaled x) over in-edges, this thread's rows. */
static void
task_pull_normalized(CpuEngine *e, int tid, const void *varg)
{
	const ProductArgs *a = (const ProductArgs *) varg;
	const PrGraph *g = e->g;

	(void) tid;
	if (e->row_order != NULL && e->k <= PR_CPU_SORTED_MAX_COLUMNS)
		gather_blocks(e, e->sorted_ptr, e->sorted_src, e->sorted_weight, e->row_order,
					  e->sorted_part, e->z, true, a->y);
	else
		gather_blocks(e, g->in_ptr, g->in_src, g->in_weight, NULL, e->in_part, e->z, true, a->y);
}

/* Copies the in-rows into sorted_ptr / sorted_src / sorted_weight order, by row blocks. */
static void
task_copy_sorted_rows(CpuEngine *e, int tid, const void *varg)
{
	const PrGraph *g = e->g;

	(void) tid;
	(void) varg;
	for (int64_t b; (b = claim(e)) < e->n_blocks;)
		for (int64_t p = e->sorted_part[b]; p < e->sorted_part[b + 1]; p++)
		{
			int32_t		v = e->row_order[p];
			size_t		len = (size_t) (g->in_ptr[v + 1] - g->in_ptr[v]);

			memcpy(e->sorted_src + e->sorted_ptr[p], g->in_src + g->in_ptr[v], len * sizeof(int32_t));
			if (e->sorted_weight != NULL)
				memcpy(e->sorted_weight + e->sorted_ptr[p], g->in_weight + g->in_ptr[v],
					   len * sizeof(double));
		}
}

/* y = Aᵀ x over in-edges, this thread's rows. */
static void
task_pull(CpuEngine *e, int tid, const void *varg)
{
	const ProductArgs *a = (const ProductArgs *) varg;
	const PrGraph *g = e->g;

	(void) tid;
	gather_blocks(e, g->in_ptr, g->in_src, g->in_weight, NULL, e->in_part, a->x, false, a->y);
}

/* y = A x over out-edges, this thread's rows. */
static void
task_push(CpuEngine *e, int tid, const void *varg)
{
	const ProductArgs *a = (const ProductArgs *) varg;
	const PrGraph *g = e->g;

	(void) tid;
	gather_blocks(e, g->out_ptr, g->out_dst, g->out_weight, NULL, e->out_part, a->x, false, a->y);
}

/* Per-chunk dangling sums of x (when the product did not already take them). */
static void
task_dangling_sums(CpuEngine *e, int tid, const void *varg)
{
	const double *x = (const double *) varg;

	(void) tid;
	for (int64_t c; (c = claim(e)) < e->n_chunks;)
		chunk_dangling_sums(e, c, x);
}

/* Arguments of the update and normalize tasks. */
typedef struct UpdateArgs
{
	double	   *y;
	const double *x;			/* previous iterate / old slot, or NULL */
	double		alpha;
	bool		uniform;
	const PrRestart *restart;	/* pagerank_update: its dangling distribution, if any */
} UpdateArgs;

/*
 * The |y - x| partials of width adjacent columns (rows of k values) over node rows [v0, v1)
 * into ps / pm: plain blocks of PR_CPU_SUM_BLOCK nodes, the block sums compensated.
 */
PR_ALWAYS_INLINE static inline void
residual_group(const double *y, const double *x, int k, int width, int64_t v0, int64_t v1,
			   double *ps, double *pm)
{
	double		s[PR_CPU_COLUMN_GROUP] = {0.0},
				s_carry[PR_CPU_COLUMN_GROUP] = {0.0},
				mx[PR_CPU_COLUMN_GROUP] = {0.0},
				block[PR_CPU_COLUMN_GROUP] = {0.0};

	for (int64_t b = v0; b < v1; b += PR_CPU_SUM_BLOCK)
	{
		int64_t		block_end = v1 - b > PR_CPU_SUM_BLOCK ? b + PR_CPU_SUM_BLOCK : v1;

		PR_UNROLL for (int j = 0; j < width; j++)
			block[j] = 0.0;
		for (int64_t v = b; v < block_end; v++)
		{
			const double *yv = y + v * k;
			const double *xv = x + v * k;

			PR_UNROLL for (int j = 0; j < width; j++)
			{
				double		d = fabs(yv[j] - xv[j]);

				block[j] += d;
				mx[j] = d > mx[j] ? d : mx[j];
			}
		}
		PR_UNROLL for (int j = 0; j < width; j++)
			compensated_add(&s[j], &s_carry[j], block[j]);
	}
	PR_UNROLL for (int j = 0; j < width; j++)
	{
		ps[j] = s[j] + s_carry[j];
		pm[j] = mx[j];
	}
}

/*
 * Per-chunk |y - x| partials (l1 sums and maxima) of node rows [v0, v1): every column in plain
 * blocks of PR_CPU_SUM_BLOCK whose sums are compensated (column j's as in a one-column run of
 * column j); k columns in groups of PR_CPU_COLUMN_GROUP, summed in locals.
 */
static inline void
chunk_residual(CpuEngine *e, int64_t c, int64_t v0, int64_t v1, const double *y, const double *x)
{
	const int	k = e->k;
	double	   *ps = e->part_sum + c * k;
	double	   *pm = e->part_max + c * k;

	if (k == 1)
	{
		double		s = 0.0,
					s_carry = 0.0,
					mx = 0.0;

		for (int64_t b = v0; b < v1; b += PR_CPU_SUM_BLOCK)
		{
			int64_t		block_end = v1 - b > PR_CPU_SUM_BLOCK ? b + PR_CPU_SUM_BLOCK : v1;
			double		block = 0.0;

			for (int64_t v = b; v < block_end; v++)
			{
				double		d = fabs(y[v] - x[v]);

				block += d;
				mx = d > mx ? d : mx;
			}
			compensated_add(&s, &s_carry, block);
		}
		ps[0] = s + s_carry;
		pm[0] = mx;
		return;
	}
	for (int j0 = 0; j0 < k; j0 += PR_CPU_COLUMN_GROUP)
	{
		int			width = k - j0 < PR_CPU_COLUMN_GROUP ? k - j0 : PR_CPU_COLUMN_GROUP;

		/* a constant width for the widths of groups: the sums stay in registers */
		if (width == 8)
			residual_group(y + j0, x + j0, k, 8, v0, v1, ps + j0, pm + j0);
		else if (width == 4)
			residual_group(y + j0, x + j0, k, 4, v0, v1, ps + j0, pm + j0);
		else if (width == 2)
			residual_group(y + j0, x + j0, k, 2, v0, v1, ps + j0, pm + j0);
		else
			residual_group(y + j0, x + j0, k, width, v0, v1, ps + j0, pm + j0);
	}
}

/*
 * y = alpha * y + coef_j * r_j, chunk by chunk (uniform: coef holds coef_j / n; otherwise the
 * bucketed restart entries of the chunk are added), then the chunk's residual partials.
 */
static void
task_pagerank_update(CpuEngine *e, int tid, const void *varg)
{
	const UpdateArgs *a = (const UpdateArgs *) varg;
	const int	k = e->k;
	const double alpha = a->alpha;
	double	   *y = a->y;

	(void) tid;
	for (int64_t c; (c = claim(e)) < e->n_chunks;)
	{
		int64_t		v0 = c * PR_CPU_CHUNK;
		int64_t		v1 = v0 + PR_CPU_CHUNK < e->n ? v0 + PR_CPU_CHUNK : e->n;

		if (a->uniform)
		{
			if (k == 1)
			{
				double		add = e->coef[0];

				for (int64_t v = v0; v < v1; v++)
					y[v] = alpha * y[v] + add;
			}
			else
			{
				for (int64_t v = v0; v < v1; v++)
					for (int j = 0; j < k; j++)
						y[v * k + j] = alpha * y[v * k + j] + e->coef[j];
			}
		}
		else
		{
			for (int64_t i = v0 * k; i < v1 * k; i++)
				y[i] = alpha * y[i];
			for (int64_t r = e->restart_chunk[c]; r < e->restart_chunk[c + 1]; r++)
			{
				int			j = e->restart_col[r];

				y[(int64_t) e->restart_node[r] * k + j] += e->coef[j] * e->restart_weight[r];
			}
		}
		if (a->restart != NULL && a->restart->dangling_count > 0)
		{
			/* the dangling mass goes to the dangling distribution's nodes of this chunk */
			const PrRestart *r = a->restart;

			for (int64_t i = pr_lower_bound_i32(r->dangling_node, 0, r->dangling_count, v0);
				 i < r->dangling_count && r->dangling_node[i] < v1; i++)
				for (int j = 0; j < k; j++)
					y[(int64_t) r->dangling_node[i] * k + j] +=
						e->dangling_coef[j] * r->dangling_weight[i];
		}
		chunk_residual(e, c, v0, v1, y, a->x);
		/* prepare the next product while the chunk is in cache */
		if (e->z != NULL)
			chunk_scale_by_strength(e, c, y);
	}
}

/* Per-chunk column sums of y, compensated (one column: plain blocks, their sums compensated). */
static void
task_column_sums(CpuEngine *e, int tid, const void *varg)
{
	const UpdateArgs *a = (const UpdateArgs *) varg;
	const int	k = e->k;

	(void) tid;
	for (int64_t c; (c = claim(e)) < e->n_chunks;)
	{
		int64_t		v0 = c * PR_CPU_CHUNK;
		int64_t		v1 = v0 + PR_CPU_CHUNK < e->n ? v0 + PR_CPU_CHUNK : e->n;
		double	   *ps = e->part_sum + c * k;

		if (k == 1)
		{
			double		s = 0.0,
						s_carry = 0.0;

			for (int64_t b = v0; b < v1; b += PR_CPU_SUM_BLOCK)
			{
				int64_t		block_end = v1 - b > PR_CPU_SUM_BLOCK ? b + PR_CPU_SUM_BLOCK : v1;
				double		block = 0.0;

				for (int64_t v = b; v < block_end; v++)
					block += a->y[v];
				compensated_add(&s, &s_carry, block);
			}
			ps[0] = s + s_carry;
			continue;
		}
		for (int j0 = 0; j0 < k; j0 += PR_CPU_COLUMN_GROUP)
		{
			int			width = k - j0 < PR_CPU_COLUMN_GROUP ? k - j0 : PR_CPU_COLUMN_GROUP;
			double		s[PR_CPU_COLUMN_GROUP],
						s_carry[PR_CPU_COLUMN_GROUP],
						block[PR_CPU_COLUMN_GROUP];

			for (int j = 0; j < width; j++)
				s[j] = s_carry[j] = 0.0;
			for (int64_t b = v0; b < v1; b += PR_CPU_SUM_BLOCK)
			{
				int64_t		block_end = v1 - b > PR_CPU_SUM_BLOCK ? b + PR_CPU_SUM_BLOCK : v1;

				for (int j = 0; j < width; j++)
					block[j] = 0.0;
				for (int64_t v = b; v < block_end; v++)
					for (int j = 0; j < width; j++)
						block[j] += a->y[v * k + j0 + j];
				for (int j = 0; j < width; j++)
					compensated_add(&s[j], &s_carry[j], block[j]);
			}
			for (int j = 0; j < width; j++)
				ps[j0 + j] = s[j] + s_carry[j];
		}
	}
}

/* Divides each column by its sum (coef; 0 = leave alone), then the residual partials vs x. */
static void
task_divide_columns(CpuEngine *e, int tid, const void *varg)
{
	const UpdateArgs *a = (const UpdateArgs *) varg;
	const int	k = e->k;

	(void) tid;
	for (int64_t c; (c = claim(e)) < e->n_chunks;)
	{
		int64_t		v0 = c * PR_CPU_CHUNK;
		int64_t		v1 = v0 + PR_CPU_CHUNK < e->n ? v0 + PR_CPU_CHUNK : e->n;

		for (int64_t v = v0; v < v1; v++)
			for (int j = 0; j < k; j++)
				if (e->coef[j] != 0.0)
					a->y[v * k + j] /= e->coef[j];
		if (a->x != NULL)
			chunk_residual(e, c, v0, v1, a->y, a->x);
	}
}

/*
 * Sums the per-chunk partials of part into out[k], in chunk order, compensated (scratch holds the
 * carries).
 */
static void
sum_partials(const CpuEngine *e, const double *part, double *out)
{
	double	   *carry = e->scratch;

	for (int j = 0; j < e->k; j++)
		out[j] = carry[j] = 0.0;
	for (int64_t c = 0; c < e->n_chunks; c++)
		for (int j = 0; j < e->k; j++)
			compensated_add(&out[j], &carry[j], part[c * e->k + j]);
	for (int j = 0; j < e->k; j++)
		out[j] += carry[j];
}

/* Collects the residual partials into res[k]. */
static void
collect_residual(CpuEngine *e)
{
	const int	k = e->k;
	double	   *l1 = e->scratch + k;

	sum_partials(e, e->part_sum, l1);
	for (int j = 0; j < k; j++)
	{
		e->res[j].l1 = l1[j];
		e->res[j].linf = 0.0;
	}
	for (int64_t c = 0; c < e->n_chunks; c++)
		for (int j = 0; j < k; j++)
			if (e->part_max[c * k + j] > e->res[j].linf)
				e->res[j].linf = e->part_max[c * k + j];
	e->have_residual = true;
}

/* ---------------------------------------------------------------- operations */

/* The first 64-byte boundary in an allocation of 8 doubles more than needed. */
static double *
align_64(double *block)
{
	return block + (8 - ((uintptr_t) block / sizeof(double)) % 8) % 8;
}

/* Frees the vectors of k columns (slots, z, per-chunk partials, per-column scalars). */
static void
cpu_free_vectors(CpuEngine *e)
{
	if (e->slot_block != NULL)
		for (int i = 0; i < e->n_slots; i++)
			pr_free(&e->alloc, e->slot_block[i]);
	pr_free(&e->alloc, e->slot);
	pr_free(&e->alloc, e->slot_block);
	pr_free(&e->alloc, e->z_block);
	pr_free(&e->alloc, e->group_first);
	pr_free(&e->alloc, e->part_sum);
	pr_free(&e->alloc, e->part_max);
	pr_free(&e->alloc, e->part_dangling);
	pr_free(&e->alloc, e->coef);
	pr_free(&e->alloc, e->dangling_coef);
	pr_free(&e->alloc, e->scratch);
	pr_free(&e->alloc, e->res);
	e->slot = e->slot_block = NULL;
	e->n_slots = 0;
	e->z = e->z_block = NULL;
	e->group_first = NULL;
	e->n_groups = 0;
	e->part_sum = e->part_max = e->part_dangling = e->coef = e->dangling_coef = e->scratch = NULL;
	e->res = NULL;
	e->have_residual = false;
	e->dangling_slot = -1;
	e->z_slot = -1;
}

/*
 * Allocates the vectors of k columns and n_slots slots (e->n, e->n_chunks and e->needs set);
 * false when memory runs out (what was allocated stays for cpu_free_vectors).
 */
static bool
cpu_alloc_vectors(CpuEngine *e, int k, int n_slots)
{
	size_t		nk = (size_t) e->n * (size_t) k;

	e->k = k;
	e->slot = ENGINE_ALLOC(e, double *, n_slots);
	e->slot_block = ENGINE_ALLOC(e, double *, n_slots);
	if (e->slot == NULL || e->slot_block == NULL)
		return false;
	memset(e->slot_block, 0, sizeof(double *) * (size_t) n_slots);
	e->n_slots = n_slots;
	for (int i = 0; i < n_slots; i++)
	{
		if ((e->slot_block[i] = ENGINE_ALLOC(e, double, nk + 8)) == NULL)
			return false;
		e->slot[i] = align_64(e->slot_block[i]);
	}
	e->part_sum = ENGINE_ALLOC(e, double, (size_t) e->n_chunks * k);
	e->part_max = ENGINE_ALLOC(e, double, (size_t) e->n_chunks * k);
	e->part_dangling = ENGINE_ALLOC(e, double, (size_t) e->n_chunks * k);
	e->coef = ENGINE_ALLOC(e, double, k);
	e->dangling_coef = ENGINE_ALLOC(e, double, k);
	e->scratch = ENGINE_ALLOC(e, double, 2 * (size_t) k);
	e->res = ENGINE_ALLOC(e, PrResidual, k);
	if (e->part_sum == NULL || e->part_max == NULL || e->part_dangling == NULL ||
		e->coef == NULL || e->dangling_coef == NULL || e->scratch == NULL || e->res == NULL)
		return false;
	/* column groups: as many of 8 columns as fit, then one of 4, 2 and 1 for the rest */
	e->n_groups = k / PR_CPU_COLUMN_GROUP + (k % 8 >= 4) + (k % 4 >= 2) + (k % 2);
	e->group_first = ENGINE_ALLOC(e, int, e->n_groups + 1);
	if (e->group_first == NULL)
		return false;
	{
		int			g = 0,
					first = 0;

		for (int width = PR_CPU_COLUMN_GROUP; width >= 1; width /= 2)
			while (k - first >= width)
			{
				e->group_first[g++] = first;
				first += width;
			}
		e->group_first[g] = k;
	}
	if (e->needs & PR_NEED_PULL_NORMALIZED)
	{
		/* z on a 64-byte boundary: a group of 8 columns of a node is one cache line */
		e->z_block = ENGINE_ALLOC(e, double, nk + 8);
		if (e->z_block == NULL)
			return false;
		e->z = align_64(e->z_block);
	}
	return true;
}

/* Frees everything prepare() made and stops the threads; the engine can be prepared again. */
static void
cpu_unprepare(CpuEngine *e)
{
	cpu_pool_stop(e);
	cpu_free_vectors(e);
	pr_free(&e->alloc, e->inv_out);
	pr_free(&e->alloc, e->row_order);
	pr_free(&e->alloc, e->sorted_ptr);
	pr_free(&e->alloc, e->sorted_src);
	pr_free(&e->alloc, e->sorted_weight);
	pr_free(&e->alloc, e->sorted_part);
	e->row_order = NULL;
	e->sorted_ptr = NULL;
	e->sorted_src = NULL;
	e->sorted_weight = NULL;
	e->sorted_part = NULL;
	pr_free(&e->alloc, e->dangling_chunk);
	pr_free(&e->alloc, e->restart_chunk);
	pr_free(&e->alloc, e->restart_node);
	pr_free(&e->alloc, e->restart_col);
	pr_free(&e->alloc, e->restart_weight);
	pr_free(&e->alloc, e->in_part);
	pr_free(&e->alloc, e->out_part);
	pr_free(&e->alloc, e->far_field);
	e->far_field = NULL;
	e->inv_out = NULL;
	e->dangling_chunk = NULL;
	e->restart_chunk = NULL;
	e->restart_node = e->restart_col = NULL;
	e->restart_weight = NULL;
	e->restart_cap = 0;
	e->in_part = e->out_part = NULL;
	e->prepared = false;
	e->g = NULL;
	memset(&e->g_seen, 0, sizeof(e->g_seen));
}

/* True when g is the graph the engine is prepared on, unchanged, and needs the same products. */
static bool
same_layout(const CpuEngine *e, const PrGraph *g, unsigned needs)
{
	const PrGraph *s = &e->g_seen;

	return e->prepared && e->g == g && e->needs == needs &&
		g->n_nodes == s->n_nodes && g->n_edges == s->n_edges && g->weighted == s->weighted &&
		g->has_out_edges == s->has_out_edges && g->in_ptr == s->in_ptr &&
		g->in_src == s->in_src && g->in_weight == s->in_weight && g->out_ptr == s->out_ptr &&
		g->out_dst == s->out_dst && g->out_weight == s->out_weight &&
		g->out_strength == s->out_strength && g->n_dangling == s->n_dangling &&
		g->dangling == s->dangling;
}

/* Number of threads to use for a graph: the request (or the online cores), capped by the work. */
static int
choose_threads(int requested, const PrGraph *g)
{
	int64_t		t = requested;
	int64_t		useful = 1 + (g->n_edges + g->n_nodes) / PR_CPU_WORK_PER_THREAD;

	if (t <= 0)
	{
		long		cores = sysconf(_SC_NPROCESSORS_ONLN);

		t = cores > 0 ? cores : 1;
	}
	if (t > useful)
		t = useful;
	if (t > PR_CPU_MAX_THREADS)
		t = PR_CPU_MAX_THREADS;
	return (int) (t < 1 ? 1 : t);
}

/*
 * Makes the length-sorted copy of the in-CSR: a counting sort of the rows by descending length
 * (ties by node id), then the rows copied in parallel.
 */
static PrStatus
sort_rows_by_length(CpuEngine *e, PrError *err)
{
	const PrGraph *g = e->g;
	int64_t		n = g->n_nodes;
	int64_t		max_len = 0;
	int64_t    *starts;
	int64_t    *cursor;
	PrCountSort sort;

	sort.counts = NULL;
	for (int64_t v = 0; v < n; v++)
		if (g->in_ptr[v + 1] - g->in_ptr[v] > max_len)
			max_len = g->in_ptr[v + 1] - g->in_ptr[v];
	starts = ENGINE_ALLOC(e, int64_t, max_len + 2);
	e->row_order = ENGINE_ALLOC(e, int32_t, n);
	e->sorted_ptr = ENGINE_ALLOC(e, int64_t, n + 1);
	e->sorted_src = ENGINE_ALLOC(e, int32_t, g->n_edges);
	e->sorted_part = ENGINE_ALLOC(e, int64_t, e->n_blocks + 1);
	if (g->weighted)
		e->sorted_weight = ENGINE_ALLOC(e, double, g->n_edges);
	if (starts == NULL || e->row_order == NULL || e->sorted_ptr == NULL || e->sorted_src == NULL ||
		e->sorted_part == NULL || (g->weighted && e->sorted_weight == NULL) ||
		!pr_count_sort_init(&sort, (size_t) n, max_len + 1, 1, &e->alloc))
	{
		pr_free(&e->alloc, starts);
		pr_count_sort_free(&sort, &e->alloc);
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory laying out the graph for the CPU engine");
	}
	cursor = pr_count_sort_row(&sort, 0);
	pr_count_sort_clear(&sort, 0);
	for (int64_t v = 0; v < n; v++)
		cursor[g->in_ptr[v + 1] - g->in_ptr[v]]++;
	pr_count_sort_offsets(&sort, true, starts, 1, NULL, NULL);
	for (int64_t v = 0; v < n; v++)
		e->row_order[cursor[g->in_ptr[v + 1] - g->in_ptr[v]]++] = (int32_t) v;
	pr_count_sort_free(&sort, &e->alloc);
	pr_free(&e->alloc, starts);
	e->sorted_ptr[0] = 0;
	for (int64_t p = 0; p < n; p++)
	{
		int32_t		v = e->row_order[p];

		e->sorted_ptr[p + 1] = e->sorted_ptr[p] + (g->in_ptr[v + 1] - g->in_ptr[v]);
	}
	split_rows(e->sorted_ptr, n, (int) e->n_blocks, e->sorted_part);
	cpu_run(e, task_copy_sorted_rows, NULL);
	return PR_OK;
}

/* Number of row blocks for the products: one per thread alone, else enough to balance. */
static int64_t
choose_blocks(int n_threads, const PrGraph *g)
{
	int64_t		blocks = (g->n_edges + g->n_nodes) / PR_CPU_BLOCK_WORK;

	if (n_threads == 1)
		return 1;
	if (blocks < 4 * n_threads)
		blocks = 4 * n_threads;
	if (blocks > 256 * n_threads)
		blocks = 256 * n_threads;
	return blocks;
}

/* Takes the graph, allocates the slots and scratch vectors, splits the work, starts threads. */
static PrStatus
cpu_prepare(PrEngine *base, const PrGraph *g, int k, int n_slots, unsigned needs, PrError *err)
{
	CpuEngine  *e = (CpuEngine *) base;
	int64_t		n;
	PrStatus	status;

	if (g == NULL || k <= 0 || n_slots <= 0 || g->n_nodes < 0)
	{
		cpu_unprepare(e);
		return pr_error_set(err, PR_ERR_INVALID, "bad arguments to the CPU engine's prepare");
	}
	n = g->n_nodes;
	if ((uint64_t) n > SIZE_MAX / sizeof(double) / (size_t) k)
	{
		cpu_unprepare(e);
		return pr_error_set(err, PR_ERR_TOO_LARGE, "vectors of %lld x %d values are too large",
							(long long) n, k);
	}
	if (same_layout(e, g, needs))
	{
		/* the graph the engine holds: keep its layout and threads, remake only the vectors
		 * (kept when they are enough: a run with fewer slots uses the first ones) */
		if (k == e->k && n_slots <= e->n_slots)
		{
			e->have_residual = false;
			e->dangling_slot = -1;
			e->z_slot = -1;
			return PR_OK;
		}
		cpu_free_vectors(e);
		if (cpu_alloc_vectors(e, k, n_slots))
			return PR_OK;
		goto nomem;
	}
	cpu_unprepare(e);
	if ((needs & PR_NEED_PUSH) && !g->has_out_edges && g->n_edges > 0)
		return pr_error_set(err, PR_ERR_UNSUPPORTED,
							"the graph has no out-edge arrays, which this algorithm needs (build it with out_edges)");
	e->g = g;
	e->n = n;
	e->needs = needs;
	e->n_chunks = (n + PR_CPU_CHUNK - 1) / PR_CPU_CHUNK;
	e->n_threads = choose_threads(e->requested_threads, g);
#ifdef PR_CPU_WIDE
	__builtin_cpu_init();
	e->wide = __builtin_cpu_supports("avx512f");
#endif

	if (!cpu_alloc_vectors(e, k, n_slots))
		goto nomem;
	e->dangling_chunk = ENGINE_ALLOC(e, int64_t, e->n_chunks + 1);
	e->restart_chunk = ENGINE_ALLOC(e, int64_t, e->n_chunks + 1);
	e->n_blocks = choose_blocks(e->n_threads, g);
	e->in_part = ENGINE_ALLOC(e, int64_t, e->n_blocks + 1);
	e->out_part = ENGINE_ALLOC(e, int64_t, e->n_blocks + 1);
	if (e->dangling_chunk == NULL || e->restart_chunk == NULL || e->in_part == NULL ||
		e->out_part == NULL)
		goto nomem;
	if (needs & PR_NEED_PULL_NORMALIZED)
	{
		e->inv_out = ENGINE_ALLOC(e, double, n);
		if (e->inv_out == NULL)
			goto nomem;
		for (int64_t v = 0; v < n; v++)
			e->inv_out[v] = g->out_strength[v] > 0.0 ? 1.0 / g->out_strength[v] : 0.0;
	}
	{
		/* dangling list range of every node chunk (the list is ascending) */
		int64_t		d = 0;

		for (int64_t c = 0; c <= e->n_chunks; c++)
		{
			while (d < g->n_dangling && g->dangling[d] < c * PR_CPU_CHUNK)
				d++;
			e->dangling_chunk[c] = d;
		}
		e->dangling_chunk[e->n_chunks] = g->n_dangling;
	}

	status = cpu_pool_start(e, err);
	if (status != PR_OK)
	{
		cpu_unprepare(e);
		return status;
	}
	split_rows(g->in_ptr, n, (int) e->n_blocks, e->in_part);
	if ((needs & PR_NEED_PULL_NORMALIZED) && n >= PR_CPU_SORT_ROWS_MIN)
	{
		status = sort_rows_by_length(e, err);
		if (status != PR_OK)
		{
			cpu_unprepare(e);
			return status;
		}
	}
	if (g->has_out_edges)
		split_rows(g->out_ptr, n, (int) e->n_blocks, e->out_part);
	else
		for (int64_t b = 0; b <= e->n_blocks; b++)
			e->out_part[b] = 0;
	e->g_seen = *g;
	e->prepared = true;
	return PR_OK;

nomem:
	cpu_unprepare(e);
	return pr_error_set(err, PR_ERR_NOMEM,
						"out of memory preparing the CPU engine for %lld nodes x %d columns",
						(long long) n, k);
}

/* Checks that the engine is prepared and a slot number is valid. */
static PrStatus
check_slot(const CpuEngine *e, int slot, PrError *err)
{
	if (!e->prepared)
		return pr_error_set(err, PR_ERR_ENGINE, "the CPU engine is not prepared");
	if (slot < 0 || slot >= e->n_slots)
		return pr_error_set(err, PR_ERR_INVALID, "vector slot %d does not exist", slot);
	return PR_OK;
}

/* Marks a slot as rewritten (its cached dangling sums no longer hold). */
static inline void
slot_written(CpuEngine *e, int slot)
{
	if (e->dangling_slot == slot)
		e->dangling_slot = -1;
	if (e->z_slot == slot)
		e->z_slot = -1;
}

/* Sets every entry of a slot to value. */
static PrStatus
cpu_fill(PrEngine *base, int slot, double value, PrError *err)
{
	CpuEngine  *e = (CpuEngine *) base;
	PrStatus	status = check_slot(e, slot, err);

	if (status != PR_OK)
		return status;
	for (size_t i = 0; i < (size_t) e->n * (size_t) e->k; i++)
		e->slot[slot][i] = value;
	slot_written(e, slot);
	return PR_OK;
}

/* Copies n*k host values into a slot. */
static PrStatus
cpu_upload(PrEngine *base, int slot, const double *host, PrError *err)
{
	CpuEngine  *e = (CpuEngine *) base;
	PrStatus	status = check_slot(e, slot, err);

	if (status != PR_OK)
		return status;
	memcpy(e->slot[slot], host, sizeof(double) * (size_t) e->n * (size_t) e->k);
	slot_written(e, slot);
	return PR_OK;
}

/* Copies a slot into n*k host values. */
static PrStatus
cpu_download(PrEngine *base, int slot, double *host, PrError *err)
{
	CpuEngine  *e = (CpuEngine *) base;
	PrStatus	status = check_slot(e, slot, err);

	if (status != PR_OK)
		return status;
	memcpy(host, e->slot[slot], sizeof(double) * (size_t) e->n * (size_t) e->k);
	return PR_OK;
}

/* y_slot = product(x_slot) for all k columns. */
static PrStatus
cpu_product(PrEngine *base, PrProduct product, int x_slot, int y_slot, PrError *err)
{
	CpuEngine  *e = (CpuEngine *) base;
	PrStatus	status;
	ProductArgs args;

	if ((status = check_slot(e, x_slot, err)) != PR_OK ||
		(status = check_slot(e, y_slot, err)) != PR_OK)
		return status;
	if (x_slot == y_slot)
		return pr_error_set(err, PR_ERR_INVALID, "a product cannot write its input slot");
	args.x = e->slot[x_slot];
	args.y = e->slot[y_slot];
	args.x_slot = x_slot;
	slot_written(e, y_slot);
	switch (product)
	{
		case PR_PRODUCT_PULL_NORMALIZED:
			if (e->z == NULL)
				return pr_error_set(err, PR_ERR_INVALID,
									"PULL_NORMALIZED was not announced to prepare()");
			if (e->z_slot != x_slot)
			{
				/* z and the dangling sums were not left by the last update */
				cpu_run(e, task_scale_by_strength, &args);
				e->z_slot = x_slot;
				e->dangling_slot = x_slot;
			}
			cpu_run(e, task_pull_normalized, &args);
			return PR_OK;
		case PR_PRODUCT_PULL:
			cpu_run(e, task_pull, &args);
			return PR_OK;
		case PR_PRODUCT_PUSH:
			if (!e->g->has_out_edges)
			{
				if (e->g->n_edges > 0)
					return pr_error_set(err, PR_ERR_UNSUPPORTED,
										"the graph has no out-edge arrays, which the push product needs");
				memset(args.y, 0, sizeof(double) * (size_t) e->n * (size_t) e->k);
				return PR_OK;
			}
			cpu_run(e, task_push, &args);
			return PR_OK;
	}
	return pr_error_set(err, PR_ERR_INVALID, "unknown product %d", (int) product);
}

/* Buckets the restart entries by node chunk (stable: column order kept within a chunk). */
static PrStatus
bucket_restart(CpuEngine *e, const PrRestart *r, PrError *err)
{
	int64_t		total;
	PrCountSort sort;
	int64_t    *cursor;

	if (r->k != e->k || r->ptr == NULL)
		return pr_error_set(err, PR_ERR_INVALID,
							"restart distribution has %d columns, the engine %d", r->k, e->k);
	total = r->ptr[r->k];
	if (total > e->restart_cap)
	{
		pr_free(&e->alloc, e->restart_node);
		pr_free(&e->alloc, e->restart_col);
		pr_free(&e->alloc, e->restart_weight);
		e->restart_node = ENGINE_ALLOC(e, int32_t, total);
		e->restart_col = ENGINE_ALLOC(e, int32_t, total);
		e->restart_weight = ENGINE_ALLOC(e, double, total);
		e->restart_cap = 0;
		if (e->restart_node == NULL || e->restart_col == NULL || e->restart_weight == NULL)
			return pr_error_set(err, PR_ERR_NOMEM, "out of memory for %lld restart entries",
								(long long) total);
		e->restart_cap = total;
	}
	/* a counting sort of the entries by chunk; restart_chunk gets the chunks' starts */
	if (!pr_count_sort_init(&sort, (size_t) total, e->n_chunks, 1, &e->alloc))
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory for %lld restart entries",
							(long long) total);
	cursor = pr_count_sort_row(&sort, 0);
	pr_count_sort_clear(&sort, 0);
	for (int64_t i = 0; i < total; i++)
	{
		if (r->node[i] < 0 || r->node[i] >= e->n)
		{
			pr_count_sort_free(&sort, &e->alloc);
			return pr_error_set(err, PR_ERR_INVALID, "restart node %d is not in the graph",
								(int) r->node[i]);
		}
		cursor[r->node[i] / PR_CPU_CHUNK]++;
	}
	pr_count_sort_offsets(&sort, false, e->restart_chunk, 1, NULL, NULL);
	for (int j = 0; j < r->k; j++)
		for (int64_t i = r->ptr[j]; i < r->ptr[j + 1]; i++)
		{
			int64_t		pos = cursor[r->node[i] / PR_CPU_CHUNK]++;

			e->restart_node[pos] = r->node[i];
			e->restart_col[pos] = j;
			e->restart_weight[pos] = r->weight[i];
		}
	pr_count_sort_free(&sort, &e->alloc);
	return PR_OK;
}

/* The PageRank update of every column, with its residual (see pr_engine.h). */
static PrStatus
cpu_pagerank_update(PrEngine *base, int y_slot, int x_slot, double alpha, const PrRestart *restart,
					PrError *err)
{
	CpuEngine  *e = (CpuEngine *) base;
	PrStatus	status;
	UpdateArgs	args;
	int			k;

	if ((status = check_slot(e, x_slot, err)) != PR_OK ||
		(status = check_slot(e, y_slot, err)) != PR_OK)
		return status;
	if (x_slot == y_slot || restart == NULL)
		return pr_error_set(err, PR_ERR_INVALID, "bad arguments to pagerank_update");
	k = e->k;
	if (!restart->uniform && (status = bucket_restart(e, restart, err)) != PR_OK)
		return status;

	/* dangling sums of x: taken by the product when it read x, else now */
	if (e->dangling_slot != x_slot)
	{
		cpu_run(e, task_dangling_sums, e->slot[x_slot]);
		e->dangling_slot = x_slot;
	}
	sum_partials(e, e->part_dangling, e->coef);
	for (int j = 0; j < k; j++)
	{
		/* the dangling mass follows the restart, or goes to the dangling distribution */
		if (restart->dangling_count > 0)
		{
			e->dangling_coef[j] = alpha * e->coef[j];
			e->coef[j] = 1.0 - alpha;
		}
		else
			e->coef[j] = alpha * e->coef[j] + (1.0 - alpha);
		if (restart->uniform)
			e->coef[j] /= (double) e->n;
	}
	args.y = e->slot[y_slot];
	args.x = e->slot[x_slot];
	args.alpha = alpha;
	args.uniform = restart->uniform;
	args.restart = restart;
	slot_written(e, y_slot);
	cpu_run(e, task_pagerank_update, &args);
	collect_residual(e);
	if (e->z != NULL)
	{
		/* the update also scaled y into z and took its dangling sums */
		e->z_slot = y_slot;
		e->dangling_slot = y_slot;
	}
	return PR_OK;
}

/* Divides each column of slot by its sum; residual against old_slot when old_slot >= 0. */
static PrStatus
cpu_normalize(PrEngine *base, int slot, int old_slot, PrError *err)
{
	CpuEngine  *e = (CpuEngine *) base;
	PrStatus	status;
	UpdateArgs	args;

	if ((status = check_slot(e, slot, err)) != PR_OK)
		return status;
	if (old_slot >= 0 && ((status = check_slot(e, old_slot, err)) != PR_OK))
		return status;
	if (old_slot == slot)
		return pr_error_set(err, PR_ERR_INVALID, "normalize cannot compare a slot with itself");
	args.y = e->slot[slot];
	args.x = old_slot >= 0 ? e->slot[old_slot] : NULL;
	args.alpha = 0.0;
	args.uniform = false;
	slot_written(e, slot);
	cpu_run(e, task_column_sums, &args);
	sum_partials(e, e->part_sum, e->coef);
	cpu_run(e, task_divide_columns, &args);
	if (old_slot >= 0)
		collect_residual(e);
	return PR_OK;
}

/* Reads the residuals of the last update / normalize. */
static PrStatus
cpu_residual(PrEngine *base, PrResidual *out, PrError *err)
{
	CpuEngine  *e = (CpuEngine *) base;

	if (!e->prepared || !e->have_residual)
		return pr_error_set(err, PR_ERR_ENGINE, "no residual has been computed yet");
	memcpy(out, e->res, sizeof(PrResidual) * (size_t) e->k);
	return PR_OK;
}

/* The top_k best entries of column col of a slot, best first (pr_top_k's order). */
static PrStatus
cpu_top_k(PrEngine *base, int slot, int col, int64_t top_k, int32_t *index, double *value,
		  PrError *err)
{
	CpuEngine  *e = (CpuEngine *) base;
	PrStatus	status = check_slot(e, slot, err);

	if (status != PR_OK)
		return status;
	if (col < 0 || col >= e->k || top_k <= 0 || index == NULL || value == NULL)
		return pr_error_set(err, PR_ERR_INVALID, "bad arguments to the CPU engine's top_k");
	pr_top_k_values(e->slot[slot], e->n, e->k, col, top_k, index, value, &e->alloc);
	return PR_OK;
}

/* Fills a slot with the dense restart distributions (warm start). */
static PrStatus
cpu_restart_fill(PrEngine *base, int slot, const PrRestart *restart, PrError *err)
{
	CpuEngine  *e = (CpuEngine *) base;
	PrStatus	status = check_slot(e, slot, err);
	double	   *x;

	if (status != PR_OK)
		return status;
	if (restart == NULL || restart->uniform || restart->k != e->k)
		return pr_error_set(err, PR_ERR_INVALID, "restart_fill needs %d restart columns", e->k);
	x = e->slot[slot];
	memset(x, 0, sizeof(double) * (size_t) e->n * (size_t) e->k);
	for (int j = 0; j < restart->k; j++)
		for (int64_t p = restart->ptr[j]; p < restart->ptr[j + 1]; p++)
		{
			if (restart->node[p] < 0 || restart->node[p] >= e->n)
				return pr_error_set(err, PR_ERR_INVALID, "restart node %d is not in the graph",
									(int) restart->node[p]);
			x[(size_t) restart->node[p] * (size_t) e->k + (size_t) j] += restart->weight[p];
		}
	slot_written(e, slot);
	return PR_OK;
}

/* Sums of each column of a slot, over all nodes and over the dangling ones (warm start). */
static PrStatus
cpu_column_sums(PrEngine *base, int slot, double *sums, double *dangling, PrError *err)
{
	CpuEngine  *e = (CpuEngine *) base;
	PrStatus	status = check_slot(e, slot, err);
	UpdateArgs	args;

	if (status != PR_OK)
		return status;
	memset(&args, 0, sizeof(args));
	args.y = e->slot[slot];
	cpu_run(e, task_column_sums, &args);
	sum_partials(e, e->part_sum, sums);
	if (e->dangling_slot != slot)
	{
		cpu_run(e, task_dangling_sums, e->slot[slot]);
		e->dangling_slot = slot;
	}
	sum_partials(e, e->part_dangling, dangling);
	return PR_OK;
}

/* out = sum of coef[t * k + j] * slot_t per column (warm start). */
static PrStatus
cpu_combine(PrEngine *base, int out_slot, int n_terms, const int *slots, const double *coef,
			PrError *err)
{
	CpuEngine  *e = (CpuEngine *) base;
	PrStatus	status = check_slot(e, out_slot, err);
	const double *in[4];
	double	   *out;
	int			k = e->k;

	if (status != PR_OK)
		return status;
	if (n_terms < 1 || n_terms > 4)
		return pr_error_set(err, PR_ERR_INVALID, "combine takes 1 to 4 slots, not %d", n_terms);
	for (int t = 0; t < n_terms; t++)
	{
		if ((status = check_slot(e, slots[t], err)) != PR_OK)
			return status;
		in[t] = e->slot[slots[t]];
	}
	out = e->slot[out_slot];
	for (size_t q = 0; q < (size_t) e->n * (size_t) k; q++)
	{
		int			j = (int) (q % (size_t) k);
		double		v = coef[j] * in[0][q];

		for (int t = 1; t < n_terms; t++)
			v += coef[t * k + j] * in[t][q];
		out[q] = v;
	}
	slot_written(e, out_slot);
	return PR_OK;
}

/* Keeps column 0 of a slot as the far-field vector, or fills a slot with the kept one. */
static PrStatus
cpu_far_field(PrEngine *base, int slot, bool keep, bool *found, PrError *err)
{
	CpuEngine  *e = (CpuEngine *) base;
	PrStatus	status = check_slot(e, slot, err);
	double	   *x;
	int			k = e->k;

	if (status != PR_OK)
		return status;
	x = e->slot[slot];
	if (keep)
	{
		if (e->far_field == NULL && (e->far_field = ENGINE_ALLOC(e, double, e->n)) == NULL)
			return pr_error_set(err, PR_ERR_NOMEM, "out of memory for the far-field vector");
		for (int64_t v = 0; v < e->n; v++)
			e->far_field[v] = x[(size_t) v * (size_t) k];
		*found = true;
		return PR_OK;
	}
	*found = e->far_field != NULL;
	if (!*found)
		return PR_OK;
	for (int64_t v = 0; v < e->n; v++)
		for (int j = 0; j < k; j++)
			x[(size_t) v * (size_t) k + (size_t) j] = e->far_field[v];
	slot_written(e, slot);
	return PR_OK;
}

/* Stops the threads and frees everything, the engine included. */
static void
cpu_release(PrEngine *base)
{
	CpuEngine  *e = (CpuEngine *) base;
	PrAllocator alloc;

	if (e == NULL)
		return;
	cpu_unprepare(e);
	if (e->sync_ready)
	{
		pthread_cond_destroy(&e->go);
		pthread_cond_destroy(&e->done);
		pthread_mutex_destroy(&e->mutex);
	}
	alloc = e->alloc;
	pr_free(&alloc, e);
}

static const PrEngineOps cpu_engine_ops = {
	.name = "cpu",
	.custom_dangling = true,
	.column_batch = PR_CPU_COLUMN_BATCH,
	.prepare = cpu_prepare,
	.fill = cpu_fill,
	.upload = cpu_upload,
	.download = cpu_download,
	.product = cpu_product,
	.pagerank_update = cpu_pagerank_update,
	.normalize = cpu_normalize,
	.residual = cpu_residual,
	.top_k = cpu_top_k,
	.restart_fill = cpu_restart_fill,
	.column_sums = cpu_column_sums,
	.combine = cpu_combine,
	.far_field = cpu_far_field,
	.release = cpu_release,
};

/* Makes a CPU engine; threads start in prepare(). */
PrEngine *
pr_cpu_engine_create(int n_threads, const PrAllocator *alloc, PrError *err)
{
	CpuEngine  *e;

	if (alloc == NULL)
		alloc = &pr_malloc_allocator;
	e = (CpuEngine *) pr_alloc_array(alloc, 1, sizeof(CpuEngine));
	if (e == NULL)
	{
		pr_error_set(err, PR_ERR_NOMEM, "out of memory creating the CPU engine");
		return NULL;
	}
	memset(e, 0, sizeof(*e));
	e->base.ops = &cpu_engine_ops;
	e->alloc = *alloc;
	e->requested_threads = n_threads;
	e->dangling_slot = -1;
	e->z_slot = -1;
	if (pthread_mutex_init(&e->mutex, NULL) != 0)
		goto fail;
	if (pthread_cond_init(&e->go, NULL) != 0)
	{
		pthread_mutex_destroy(&e->mutex);
		goto fail;
	}
	if (pthread_cond_init(&e->done, NULL) != 0)
	{
		pthread_cond_destroy(&e->go);
		pthread_mutex_destroy(&e->mutex);
		goto fail;
	}
	e->sync_ready = true;
	return &e->base;

fail:
	pr_free(alloc, e);
	pr_error_set(err, PR_ERR_ENGINE, "could not create the CPU engine's synchronisation objects");
	return NULL;
}
