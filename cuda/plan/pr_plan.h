/*
 * pr_plan.h — the format planners of the GPU engine: pure C11, no CUDA, no PostgreSQL.
 *
 * They turn the in-edge CSR of a graph (rows = destinations, columns = sources) into the layouts the
 * GPU kernels read, so that every layout can be built and checked on a machine without a GPU:
 *
 *  1. Degree order: nodes are relabelled by descending out-degree (the length of their column in
 *     the pull matrix), so the hot entries of x sit together at the front of the vector.
 *  2. Relabelled CSR: the matrix in the new ids, columns ascending within each row.
 *  3. Composite tiled layout (after Yang, Parthasarathy & Sadayappan, VLDB 2011): the columns are
 *     cut into tiles; inside a tile the rows are sorted by their length in that tile and packed into
 *     warp-sized workloads: rows at least vec_threshold long become CSR-vector workloads (a warp per
 *     row, long rows cut into chunks whose partial sums are added in a fixed order); shorter rows
 *     are packed 32 at a time into ELL workloads stored column-major and padded to the longest row
 *     of the group.  Tiles are tile_width columns wide (after the shared-memory tiles); the last
 *     tile takes every column left when the tile count reaches PR_PLAN_MAX_TILES.
 *  4. Row binning: rows grouped by length into bins served by 1, 2, 4, ..., 32 lanes per row, long
 *     rows as chunked warp workloads — the row-binned CSR kernel over the relabelled CSR.
 *  5. The performance model: a table of measured costs of workload shapes (offline, per GPU) and a
 *     prediction of each candidate layout's time (online, per graph), from layout statistics
 *     (workload shapes, and how the gathered columns spread over cache windows: a hit-rate mixture).
 *
 * The planners run on pr_plan_threads() POSIX threads; every result is the same bits for any
 * thread count (each output position is decided by a fixed order, never by thread timing).
 *
 * Every product these layouts feed is y[r] = sum over the row's entries of val * z[col]; padding
 * entries point at column n, where z holds 0.
 */
#ifndef PR_PLAN_H
#define PR_PLAN_H

#include "pr_common.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Threads per ELL workload (the warp). */
#define PR_PLAN_WARP 32

/* Most column tiles a composite layout may have. */
#define PR_PLAN_MAX_TILES 64

/* Most nodes the 32-bit ids (and column n used as padding) allow. */
#define PR_PLAN_MAX_NODES_CHECK ((int64_t) INT32_MAX - 1)

/* The planners are multi-threaded (pr_plan_set_threads). */
#define PR_PLAN_HAVE_THREADS 1

/* Buckets of gathered-column ranks: bucket b > 0 holds ranks in [2^(b-1), 2^b), bucket 0 rank 0. */
#define PR_RANK_BUCKETS 33

/* Sets the threads the planners use (<= 0: the online CPUs, at most 64). */
void		pr_plan_set_threads(int n_threads);

/* The threads the planners use. */
int			pr_plan_threads(void);

/* A CSR matrix owned by the planner (relabelled ids); val may be NULL (all entries 1). */
typedef struct PrPlanCsr
{
	int64_t		n;				/* rows = columns = nodes */
	int64_t		nnz;
	int64_t    *ptr;			/* [n+1] */
	int32_t    *col;			/* [nnz] ascending within a row */
	float	   *val;			/* [nnz] or NULL */
} PrPlanCsr;

/*
 * Orders nodes by descending key (ties: ascending id).  new_to_old[i] is the old id of new node i,
 * old_to_new its inverse.  key values must be >= 0.
 */
PrStatus	pr_plan_degree_order(int64_t n, const int64_t *key, int32_t *new_to_old,
								 int32_t *old_to_new, const PrAllocator *alloc, PrError *err);

/*
 * Builds the relabelled CSR of an n x n matrix given as CSR (ptr, col, optional double val):
 * row old_to_new[r] of the result holds the entries of row r with columns old_to_new[c], sorted
 * ascending.  Passing old_to_new = NULL keeps the ids (a copy with sorted columns).
 */
PrStatus	pr_plan_relabel(int64_t n, const int64_t *ptr, const int32_t *col, const double *val,
							const int32_t *old_to_new, const PrAllocator *alloc, PrPlanCsr *out,
							PrError *err);

/* The transpose of a CSR (columns ascending within each row), values carried along. */
PrStatus	pr_plan_transpose(const PrPlanCsr *csr, const PrAllocator *alloc, PrPlanCsr *out,
							  PrError *err);

/* Frees a PrPlanCsr built by pr_plan_relabel. */
void		pr_plan_csr_free(PrPlanCsr *csr, const PrAllocator *alloc);

/*
 * Chunks of long rows: warp workloads chunk_begin[i] .. chunk_begin[i+1]-1 (positions into a
 * layout's workload list) hold the pieces of row long_row[i]; their partial sums are added in
 * workload order.
 */
typedef struct PrPlanLongRows
{
	int64_t		n_long;
	int32_t    *long_row;		/* [n_long] */
	int64_t    *chunk_begin;	/* [n_long+1] */
} PrPlanLongRows;

/* Sets n_long and allocates the arrays of that many long rows; false when out of memory (free
 * with pr_plan_long_rows_free all the same). */
bool		pr_plan_long_rows_alloc(PrPlanLongRows *longs, int64_t n_long, const PrAllocator *alloc);

/* Frees the arrays of a PrPlanLongRows and leaves it empty. */
void		pr_plan_long_rows_free(PrPlanLongRows *longs, const PrAllocator *alloc);

/* One column tile of the composite layout. */
typedef struct PrCompositeTile
{
	int64_t		col_begin;		/* first column of the tile */
	int64_t		col_end;		/* one past the last */
	int64_t		nnz;			/* entries of the matrix in the tile */

	/* CSR-vector workloads: vec_row[i] >= 0 is a whole row; -1 marks a chunk of a long row. */
	int64_t		n_vec;
	int32_t    *vec_row;		/* [n_vec] */
	int64_t    *vec_ptr;		/* [n_vec+1] positions in idx of each workload's entries */
	PrPlanLongRows longs;

	/* ELL workloads: group g covers ell_row[32g .. 32g+31] (-1: no row), column-major entries
	 * idx[ell_off[g] + 32*j + lane] for j < height = (ell_off[g+1] - ell_off[g]) / 32. */
	int64_t		n_ell;
	int64_t    *ell_off;		/* [n_ell+1] */
	int32_t    *ell_row;		/* [32 n_ell] */

	int64_t		n_idx;			/* vector entries then padded ELL entries */
	int32_t    *idx;			/* [n_idx] column ids; padding = n (NULL in a local16 tile) */
	bool		local16;		/* shared-memory tile: 16-bit tile-local column ids in idx16 */
	uint16_t   *idx16;			/* [n_idx] column - col_begin; padding = col_end - col_begin */
	int64_t		eff_window;		/* effective columns the gathers spread over: (sum d)^2 / sum d^2 */
	float	   *val;			/* [n_idx] or NULL; padding = 0 */
	int64_t		n_rows;			/* rows written by the tile (with entries, or all for tile 0) */

	/*
	 * Gathered columns by rank inside the tile (column - col_begin, PR_RANK_BUCKETS buckets):
	 * [0] entries of CSR-vector workloads, [1] entries of ELL workloads with the padding slots
	 * counted in bucket 0 (they all read the one zero row).  The model's hit-rate mixture.
	 */
	int64_t		rank_hist[2][PR_RANK_BUCKETS];

	/*
	 * Compact partials (options.compact, tiles t >= 1): the tile writes its row sums to
	 * part[part_base + slot] instead of adding them into y.  Slot of a whole-row CSR-vector
	 * workload w: w; of a long row l: longs.chunk_begin[l]; of ELL group g, lane: n_vec + 32 g +
	 * lane.  part_base is -1 when the tile writes y itself.
	 */
	int64_t		part_base;
} PrCompositeTile;

/* How to build a composite layout. */
typedef struct PrCompositeOptions
{
	int64_t		tile_width;		/* columns per dense tile; >= n: one tile */
	int			vec_threshold;	/* rows this long or longer become CSR-vector workloads (>= 1) */
	int			chunk;			/* longest CSR-vector workload (>= 32) */
	bool		shapes_only;	/* plan workload shapes only (idx/val left NULL): for the model */
	int			n_smem_tiles;	/* leading tiles whose x slice goes to shared memory (local16) */
	int64_t		smem_width;		/* columns of each of those tiles (< 65535) */
	bool		compact;		/* later tiles write compact partials, a merge pass adds them */
} PrCompositeOptions;

/* The composite tiled layout of a relabelled CSR. */
typedef struct PrComposite
{
	int64_t		n;				/* rows */
	int64_t		n_cols;			/* columns (= n); padding entries point at n_cols */
	int			n_tiles;
	PrCompositeTile *tiles;
	PrCompositeOptions options;
	int64_t		padding;		/* padded ELL slots */
	size_t		device_bytes;	/* bytes the layout takes on the device */

	/*
	 * Compact partials: the merge pass.  For merge row i (rows ascending), y[merge_row[i]] +=
	 * part[merge_slot[q]] for q = merge_ptr[i] .. merge_ptr[i+1]-1, in that order (tile order),
	 * which is the order in which the add-in-place layout adds them: the same bits.
	 */
	int64_t		n_part;			/* slots of part[] over all later tiles */
	int64_t		n_merge_rows;
	int32_t    *merge_row;		/* [n_merge_rows] */
	int64_t    *merge_ptr;		/* [n_merge_rows+1] */
	int32_t    *merge_slot;		/* [merge_ptr[n_merge_rows]] positions in part[] */
} PrComposite;

/* Builds the composite layout of csr (col_degree[c] = entries of column c, non-increasing; the
 * layout is correct for any column order, fast when the columns come by descending degree). */
PrStatus	pr_plan_composite(const PrPlanCsr *csr, const PrCompositeOptions *options,
							  const PrAllocator *alloc, PrComposite *out, PrError *err);

/* Same, with the column degrees of csr given (length n; saves a pass when planning many). */
PrStatus	pr_plan_composite_with_degrees(const PrPlanCsr *csr, const int64_t *col_degree,
										   const PrCompositeOptions *options,
										   const PrAllocator *alloc, PrComposite *out,
										   PrError *err);

/* Entries of each column of csr (col_degree has n entries). */
PrStatus	pr_plan_column_degrees(const PrPlanCsr *csr, int64_t *col_degree, PrError *err);

/* Frees a PrComposite. */
void		pr_plan_composite_free(PrComposite *c, const PrAllocator *alloc);

/* Number of row bins and the lanes per row of each (bin PR_BIN_COUNT-1 holds chunked long rows). */
#define PR_BIN_COUNT 7
extern const int pr_bin_lanes[PR_BIN_COUNT];

/* The row-binned layout over a relabelled CSR (the CSR arrays themselves are used as they are). */
typedef struct PrBinned
{
	int64_t		n;
	int64_t		bin_begin[PR_BIN_COUNT + 1];	/* rows[bin_begin[b] ..] are bin b's rows */
	int32_t    *rows;			/* [rows in bins 0..PR_BIN_COUNT-2] */
	int64_t		n_chunks;		/* chunks of long rows (bin PR_BIN_COUNT-1) */
	int64_t    *chunk_begin_edge;	/* [n_chunks+1] first entry of each chunk (position in csr) */
	int32_t    *chunk_row;		/* [n_chunks] the long row each chunk belongs to */
	PrPlanLongRows longs;
	int			chunk;
	size_t		device_bytes;	/* the CSR plus the bin arrays */
} PrBinned;

/* Bins the rows of csr: lanes per row = smallest of 1,2,..,32 with len <= 4 * lanes; rows longer
 * than chunk are cut into chunks of at most chunk entries. */
PrStatus	pr_plan_binned(const PrPlanCsr *csr, int chunk, const PrAllocator *alloc,
						   PrBinned *out, PrError *err);

/* Frees a PrBinned. */
void		pr_plan_binned_free(PrBinned *b, const PrAllocator *alloc);

/*
 * The performance model.  Each entry is the measured cost of one workload shape, amortised over a
 * full GPU: kind 'e' = ELL workload (32 rows x size), 'v' = CSR-vector workload of size entries,
 * 'b' = binned row of size entries; window = the x footprint (columns) the gathers were spread
 * over; ns = nanoseconds per workload.  Kind 'r' = cost of writing one row (ns), 'l' = one kernel
 * launch (ns), 'w' = a row added into y by a later tile, 'm' = a compact partial merged (measured
 * with 'W', a scattered added row measured the same way), 'p' = ns per round of dependent gathers
 * (a launch lasts at least its longest workload's rounds), 'c' = columns of z the L2 holds.
 */
typedef struct PrModelEntry
{
	char		kind;
	int64_t		size;
	int64_t		window;
	double		ns;
} PrModelEntry;

typedef struct PrModel
{
	int			n_entries;
	PrModelEntry entries[256];
	char		device[64];
} PrModel;

/* Parses a model table (lines "kind size window ns", '#' comments, "device NAME"). */
PrStatus	pr_model_parse(const char *text, PrModel *model, PrError *err);

/* Cost of one workload of a shape, interpolated log-linearly in size and window; < 0 if unknown. */
double		pr_model_cost(const PrModel *model, char kind, int64_t size, int64_t window);

/* Predicted seconds of one product over a composite layout / a binned layout. */
double		pr_model_predict_composite(const PrModel *model, const PrComposite *c);
double		pr_model_predict_binned(const PrModel *model, const PrBinned *b, const PrPlanCsr *csr);

/*
 * Layout statistics: all the model reads of a layout, small enough to store in a file (test/plan
 * checks the model against measured timings with them).  A layout is a list of launches ("tiles");
 * each has workload shapes of two classes with the rank histograms of their gathered columns.
 */
typedef struct PrShapeCount
{
	int64_t		size;			/* ELL height, CSR-vector length, or binned row length */
	int64_t		count;			/* workloads of that size */
} PrShapeCount;

/* Kinds of a statistics tile. */
#define PR_STATS_L2 0			/* composite tile gathering from global memory ('v', 'e') */
#define PR_STATS_SMEM 1			/* composite tile gathering from shared memory ('V', 'E') */
#define PR_STATS_BINNED 2		/* row-binned CSR ('v' for chunks, 'b' for rows) */

typedef struct PrTileStats
{
	int			kind;			/* PR_STATS_* */
	bool		first;			/* stores its rows (tile 0, binned) rather than adding them */
	bool		compact;		/* a later tile writing compact partials */
	int64_t		n_rows;			/* rows written (or partials) */
	int64_t		n_long;			/* long rows whose chunk sums a second launch adds */
	int64_t		width;			/* columns of the tile */
	int64_t		n_shapes[2];	/* [0] CSR-vector / chunk lengths, [1] ELL heights / row lengths */
	PrShapeCount *shapes[2];
	int64_t		rank_hist[2][PR_RANK_BUCKETS];	/* gathered entries of each class by rank */
} PrTileStats;

typedef struct PrLayoutStats
{
	int			n_tiles;
	PrTileStats *tiles;
	int64_t		n_merge_slots;	/* compact partials added by the merge pass (0: none) */
} PrLayoutStats;

/* Statistics of a composite layout / of a binned layout over its CSR. */
PrStatus	pr_layout_stats_composite(const PrComposite *c, PrLayoutStats *out,
									  const PrAllocator *alloc, PrError *err);
PrStatus	pr_layout_stats_binned(const PrBinned *b, const PrPlanCsr *csr, PrLayoutStats *out,
								   const PrAllocator *alloc, PrError *err);

/* Frees layout statistics. */
void		pr_layout_stats_free(PrLayoutStats *s, const PrAllocator *alloc);

/* Writes statistics as text: a "layout GRAPH NAME" block (read back by pr_layout_stats_read). */
void		pr_layout_stats_write(FILE *f, const char *graph, const char *name, const PrLayoutStats *s);

/*
 * Reads the layout block of graph/name from text written by pr_layout_stats_write;
 * PR_ERR_INVALID when absent or malformed.
 */
PrStatus	pr_layout_stats_read(const char *text, const char *graph, const char *name,
								 PrLayoutStats *out, const PrAllocator *alloc, PrError *err);

/*
 * Predicted seconds of one product from layout statistics.  Hit-rate mixture: a workload's cost
 * is the mix, over the rank buckets of its class's gathered columns, of the calibrated cost of
 * that shape at the marginal window of the bucket (for a window W calibrated at cost C(W), the
 * columns of rank in (W1, W2] cost (W2 C(W2) - W1 C(W1)) / (W2 - W1): under a cache that keeps
 * the most-gathered columns, a uniform gather over W columns averages those marginal costs).
 */
double		pr_model_predict_stats(const PrModel *model, const PrLayoutStats *s);

/*
 * The model's choice of layout for a pull product: composite candidates (shared-memory tile
 * counts x CSR-vector thresholds, compact partials where the table has a merge cost 'm'), and the
 * row-binned layout when allowed.
 */
typedef struct PrPlanChoice
{
	PrCompositeOptions composite;	/* in: base options (tile_width, chunk, smem_width);
									 * out: the chosen composite options */
	int			n_smem_counts;
	int			smem_counts[8];	/* candidate shared-memory tile counts */
	int			n_thresholds;
	int			thresholds[4];	/* candidate CSR-vector thresholds */
	int			compact_mode;	/* 0: never, 1: always, -1: candidates both ways when the model
								 * has a merge cost */
	bool		allow_binned;	/* compare with the row-binned layout */
	int			binned_chunk;
	bool		binned;			/* out: the binned layout won */
	bool		have_runner_up; /* out: a second composite candidate was predicted */
	PrCompositeOptions runner_up;	/* out: the composite predicted fastest after the chosen one */
	double		runner_up_ms;	/* out: its predicted ms */
} PrPlanChoice;

/*
 * A candidate later in the list (more shared-memory tiles, another threshold, compact partials,
 * binned) replaces the best so far only when predicted this much faster: the model's error on
 * the measured layouts is a few percent, and near-ties go to the layout with fewer launches.
 */
#define PR_PLAN_CHOICE_MARGIN 0.02

/* Default candidates: 0,1,2,4,8 shared-memory tiles x CSR-vector thresholds 32, 128 (x compact partials
 * when the model has a merge cost); binned allowed. */
void		pr_plan_choice_init(PrPlanChoice *choice, int64_t n);

/*
 * Plans the candidates' workload shapes and keeps the fastest by the model, within
 * PR_PLAN_CHOICE_MARGIN (the only candidate when there is one, or no model), and the composite
 * predicted fastest among the others (the runner-up, for a measured choice).  *best_ms = predicted ms of the choice (-1: no model); log gets
 * "name=ms " per candidate.
 */
PrStatus	pr_plan_choose(const PrPlanCsr *csr, const PrModel *model, PrPlanChoice *choice,
						   double *best_ms, char *log, size_t log_len, int *n_candidates,
						   const PrAllocator *alloc, PrError *err);

#ifdef __cplusplus
}
#endif

#endif							/* PR_PLAN_H */
