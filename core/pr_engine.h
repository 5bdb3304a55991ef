/*
 * pr_engine.h — what the power-iteration driver needs from an engine.
 *
 * An engine owns the graph in whatever layout suits it (host CSR for the CPU engine, tiled formats
 * in device memory for the GPU engine) and a few vectors, named by slot number 0..n_slots-1.  Each
 * vector is n x k values stored row-major (node i's k values are adjacent): k = 1 for PageRank
 * and HITS, k = number of sources for many-source RWR, so one pass over the matrix serves every
 * column (SpMM).  Engines may compute in float or double; values cross this interface as double.
 *
 * Per-column scalars (dangling mass, residuals) stay inside the engine, so a GPU engine need not
 * return to the host until the driver asks for the residual (every check_every iterations).
 * Every operation returns PR_OK or an error code with the detail in err.
 */
#ifndef PR_ENGINE_H
#define PR_ENGINE_H

#include "pr_graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The sparse products an algorithm may ask for. */
typedef enum PrProduct
{
	PR_PRODUCT_PULL_NORMALIZED = 0,	/* y[v] = sum over u->v of w(u,v) / out_strength(u) * x[u] */
	PR_PRODUCT_PULL,			/* y[v] = sum over u->v of w(u,v) * x[u]      (y = Aᵀ x) */
	PR_PRODUCT_PUSH				/* y[u] = sum over u->v of w(u,v) * x[v]      (y = A x) */
} PrProduct;

/* Products an algorithm will use, passed to prepare() so the engine lays out only those. */
#define PR_NEED_PULL_NORMALIZED (1u << PR_PRODUCT_PULL_NORMALIZED)
#define PR_NEED_PULL            (1u << PR_PRODUCT_PULL)
#define PR_NEED_PUSH            (1u << PR_PRODUCT_PUSH)

/*
 * Restart (teleport / personalization) distribution, one per column.  Column j's entries are
 * node[ptr[j]] .. node[ptr[j+1]-1] with weights weight[...] summing to 1.  uniform = true means
 * every column restarts uniformly over all n nodes the engine serves, a delta's absent nodes left
 * out (node/weight/ptr unused, k must be 1).  A restart or dangling distribution that is not
 * uniform names no absent node.
 * The dangling mass of a column is redistributed by the same distribution (the NetworkX rule),
 * unless dangling_count > 0: then every column's dangling mass goes to the one dangling
 * distribution dangling_node / dangling_weight (NetworkX's dangling=), node ids strictly
 * ascending, weights >= 0 summing to 1.  Only engines that say so (PrEngineOps.custom_dangling)
 * take it; the driver refuses it for the others.
 */
typedef struct PrRestart
{
	bool		uniform;
	int			k;				/* columns */
	const int64_t *ptr;			/* [k+1] */
	const int32_t *node;		/* [ptr[k]] internal node ids */
	const double *weight;		/* [ptr[k]] */
	int64_t		dangling_count; /* 0: dangling mass follows the restart distribution */
	const int32_t *dangling_node;	/* [dangling_count] internal node ids, ascending */
	const double *dangling_weight;	/* [dangling_count] */
} PrRestart;

/* The restart of k columns over ptr, node and weight (as above), dangling mass following it. */
static inline PrRestart
pr_restart_columns(int k, const int64_t *ptr, const int32_t *node, const double *weight)
{
	PrRestart	r = {false, k, ptr, node, weight, 0, NULL, NULL};

	return r;
}

/* Residual of the last update, per column: both norms, the driver picks. */
typedef struct PrResidual
{
	double		l1;				/* sum over nodes of |new - old| */
	double		linf;			/* max over nodes of |new - old| */
} PrResidual;

typedef struct PrEngine PrEngine;

/* Most slots one combine or dots call takes. */
#define PR_COMBINE_MAX_TERMS 8

/* The operations; a NULL entry means the engine does not offer it. */
typedef struct PrEngineOps
{
	/* Short name shown in run statistics ("cpu", "gpu-tiled", ...). */
	const char *name;

	/* pagerank_update takes a restart's own dangling distribution (PrRestart.dangling_count). */
	bool		custom_dangling;

	/*
	 * Unit roundoff of the engine's vector arithmetic (2^-53 double, 2^-24 float; 0 means double):
	 * how small a residual rounding alone can explain (the driver's stagnation test of HITS).
	 */
	double		unit_roundoff;

	/*
	 * The vector work a mixed step adds (pr_mixing.h: f = y - x, its dot products with the kept
	 * f's, the combination of the kept outputs) as a fraction of one plain step (the product and
	 * the update), a fixed figure from the engine's measurements (0: not stated; the mixing then
	 * takes PR_MIX_DEFAULT_STEP_COST).  The mixing goes on only while a mixed step shrinks the
	 * residual by more than 1 + this many plain steps would.
	 */
	double		mixed_step_cost;

	/*
	 * Most columns PageRank runs at once on this engine, 0 for no limit: pr_pagerank runs more
	 * columns as batches of this many, one after the other (an engine whose vectors of all k
	 * columns outgrow its caches computes smaller batches faster).
	 */
	int			column_batch;

	/*
	 * Takes the graph (the engine may copy or upload it; g stays valid until release), the number
	 * of columns k, the number of vector slots and the products needed (PR_NEED_* bits).  An
	 * engine may keep what it derived from the graph when prepare sees the same PrGraph object
	 * again (same address and arrays): a caller that rewrites a graph's arrays in place between
	 * two prepares must release the engine first.  Such a prepare with the same k and products
	 * and more slots keeps the existing slots and their values (the driver adds the mixing's
	 * slots when a run starts mixing, pr_mixing.h); an error leaves the engine as it was.
	 */
	PrStatus	(*prepare) (PrEngine *e, const PrGraph *g, int k, int n_slots, unsigned needs,
							PrError *err);

	/* Sets every entry of a slot to value. */
	PrStatus	(*fill) (PrEngine *e, int slot, double value, PrError *err);

	/* Copies n*k host values into a slot / a slot into n*k host values. */
	PrStatus	(*upload) (PrEngine *e, int slot, const double *host, PrError *err);
	PrStatus	(*download) (PrEngine *e, int slot, double *host, PrError *err);

	/* y_slot = product(x_slot), for all k columns at once. */
	PrStatus	(*product) (PrEngine *e, PrProduct product, int x_slot, int y_slot, PrError *err);

	/*
	 * The PageRank update, per column j, given y = PULL_NORMALIZED(x) in y_slot and the previous
	 * iterate in x_slot:
	 *   d_j = sum over dangling u of x[u][j]
	 *   y[v][j] = alpha * y[v][j] + (alpha * d_j + (1 - alpha)) * r_j[v]
	 * where r_j is the restart distribution (with a dangling distribution q, see PrRestart:
	 * alpha * y[v][j] + alpha * d_j * q[v] + (1 - alpha) * r_j[v]); then stores the residual
	 * |y - x| per column.
	 */
	PrStatus	(*pagerank_update) (PrEngine *e, int y_slot, int x_slot, double alpha,
									const PrRestart *restart, PrError *err);

	/*
	 * Divides each column of slot by its sum (columns summing to 0 are left alone); when
	 * old_slot >= 0, then stores the residual |slot - old_slot| per column.
	 */
	PrStatus	(*normalize) (PrEngine *e, int slot, int old_slot, PrError *err);

	/* Reads the residuals stored by the last pagerank_update / normalize into out[k]. */
	PrStatus	(*residual) (PrEngine *e, PrResidual *out, PrError *err);

	/*
	 * Optional (NULL: the driver downloads the slot and ranks it on the host).  The top_k best
	 * entries of column col of a slot, best first: writes min(top_k, n) internal node ids to index
	 * and their values to value.  Order of pr_top_k: larger value first, ties to the smaller id,
	 * NaN after every number.  top_k >= 1.
	 */
	PrStatus	(*top_k) (PrEngine *e, int slot, int col, int64_t top_k, int32_t *index,
						  double *value, PrError *err);

	/*
	 * Optional (NULL: top_k column by column).  The same for every column of a slot at once:
	 * min(top_k, n) ids and values per column into index / value, column after column.
	 */
	PrStatus	(*top_k_columns) (PrEngine *e, int slot, int64_t top_k, int32_t *index,
								  double *value, PrError *err);

	/*
	 * Optional, for the warm start of personalized PageRank / RWR (pr_driver.c uses it only when
	 * all four are offered):
	 *
	 * restart_fill: slot[v][j] = r_j[v], the dense restart distributions (restart not uniform,
	 * restart->k == k).
	 */
	PrStatus	(*restart_fill) (PrEngine *e, int slot, const PrRestart *restart, PrError *err);

	/* column_sums: per column j, sums[j] = sum over nodes, dangling[j] = sum over dangling nodes. */
	PrStatus	(*column_sums) (PrEngine *e, int slot, double *sums, double *dangling,
								PrError *err);

	/*
	 * combine: out[v][j] = sum over t < n_terms of coef[t * k + j] * slot_t[v][j], for
	 * 1 <= n_terms <= PR_COMBINE_MAX_TERMS slots (out may be one of them: the operation is
	 * element by element).  The warm start and the accelerated iteration use it.
	 */
	PrStatus	(*combine) (PrEngine *e, int out_slot, int n_terms, const int *slots,
							const double *coef, PrError *err);

	/*
	 * Optional, for the accelerated iteration (pr_driver.c mixes only when combine is offered
	 * too): per column j and t < n_terms (1 <= n_terms <= PR_COMBINE_MAX_TERMS),
	 * out[t * k + j] = sum over nodes v of a[v][j] * slot_t[v][j], summed in a fixed order (the
	 * same slots give the same bits).
	 */
	PrStatus	(*dots) (PrEngine *e, int a_slot, int n_terms, const int *slots, double *out,
						 PrError *err);

	/*
	 * far_field: keep = true keeps column 0 of slot as the graph's far-field vector (kept until
	 * the engine is prepared on another graph); keep = false fills every column of slot with the
	 * kept vector and sets *found, or sets *found = false when none is kept.
	 */
	PrStatus	(*far_field) (PrEngine *e, int slot, bool keep, bool *found, PrError *err);

	/*
	 * Optional, a faster warm start (else restart_fill and two products): out_slot = r + alpha P r
	 * + alpha² P² r per column (r the restart distributions, P the normalized pull product), with
	 * temp_slot as scratch.  PR_ERR_UNSUPPORTED when the engine cannot for this graph or restart
	 * (the driver then takes the general way).
	 */
	PrStatus	(*restart_local) (PrEngine *e, int out_slot, int temp_slot, double alpha,
								  const PrRestart *restart, PrError *err);

	/*
	 * Optional, for the parts engine (pr_parts.h): from now on, until the next prepare, the engine
	 * owns rows [begin, end) of the prepared graph (0 <= begin <= end <= n).  pagerank_update
	 * then writes only those rows of y and its residual covers only them; every other operation
	 * is unchanged.  The update still needs x's dangling mass over every node: it takes it from x
	 * when x was made whole (filled, uploaded, or its rows copied in by an exchange), or from the
	 * input of the last product that read x, when an exchange made that whole (PrPartsExchange).
	 */
	PrStatus	(*own_rows) (PrEngine *e, int64_t begin, int64_t end, PrError *err);

	/*
	 * Optional: from now on the engine, prepared on graph B, serves X = B + delta (PrGraphDelta:
	 * the same node set, netted edge changes in B's ids, X's out-strengths of the changed
	 * sources).  Its products are then B's plus the delta's (PULL_NORMALIZED and PULL: y[dst] +=
	 * count * weight * in[src], PUSH: y[src] += count * weight * x[dst], in a fixed order), and
	 * everything that depends on out-strengths (the scaling by 1 / out-strength, the dangling
	 * nodes) follows X.  A delta replaces the one applied before (the caller gives the whole
	 * change from B: pr_graph_delta_merge); an empty one serves B again.  The slots keep their
	 * values; a far-field vector kept for B is dropped.  The delta stays through prepares on B
	 * (the same PrGraph, as prepare tells it; one that fails keeps it for the next prepare on B,
	 * so no prepare serves B without it) and goes with a prepare on another graph; the engine
	 * copies what it needs.  The delta's absent nodes (B's nodes X lacks, out-strength 0 in X) stay
	 * in B's numbering: a uniform restart spreads over the n - n_absent others (so does the
	 * dangling mass following it), and every pagerank_update leaves their entries exactly 0 and
	 * takes its residual after that (a start vector's mass on them is dangling mass, given out by
	 * the first update), so the fixed point on the other nodes is X's (a run's stopping rule counts
	 * X's nodes when the caller sets PrIterOptions.absent_nodes).  PR_ERR_UNSUPPORTED when
	 * the engine cannot follow a delta in its present layout (the caller then prepares an engine
	 * on X), or when the delta leaves no node; PR_ERR_INVALID for a delta that does not fit B
	 * (pr_graph_delta_check).  An error leaves the engine serving what it served before.
	 */
	PrStatus	(*apply_delta) (PrEngine *e, const PrGraphDelta *delta, PrError *err);

	/* Frees everything the engine holds (the PrEngine itself too). */
	void		(*release) (PrEngine *e);
} PrEngineOps;

/* Base of every engine; concrete engines embed it first. */
struct PrEngine
{
	const PrEngineOps *ops;
};

/* The multi-threaded CPU engine; n_threads <= 0 means one per online core. */
PrEngine   *pr_cpu_engine_create(int n_threads, const PrAllocator *alloc, PrError *err);

/*
 * A graph's in-CSR with its rows sorted by descending length (ties by node id), as the CPU engine
 * lays out PULL_NORMALIZED: made once into memory its maker keeps (pr_cpu_sorted_rows_write; a
 * shared segment, say) and given to the CPU engines of that graph, which then read it in place of a
 * copy of their own (pr_cpu_engine_use_sorted_rows).
 */
typedef struct PrSortedRows
{
	int64_t		n_nodes;
	int64_t		n_edges;
	const int64_t *ptr;			/* [n_nodes + 1] first edge of each sorted row */
	const double *weight;		/* [n_edges] or NULL (unweighted) */
	const int32_t *row_order;	/* [n_nodes] node of each sorted row */
	const int32_t *src;			/* [n_edges] */
} PrSortedRows;

size_t		pr_cpu_sorted_rows_bytes(const PrGraph *g);
bool		pr_cpu_sorted_rows_write(const PrGraph *g, void *out, const PrAllocator *alloc,
									 PrSortedRows *rows);
void		pr_cpu_sorted_rows_view(const PrGraph *g, const void *base, PrSortedRows *rows);
void		pr_cpu_engine_use_sorted_rows(PrEngine *engine, const PrSortedRows *rows);
/*
 * Whether a CPU engine given sorted rows that fit its graph, prepared on n nodes for k columns
 * and the products in needs, reads the graph's in-edge sources and weights (in_src, in_weight)
 * too; when it does not, its graph may go without them (in_ptr, the out-strengths and the
 * dangling list it reads always).
 */
bool		pr_cpu_reads_in_edges(int64_t n, int k, unsigned needs);
bool		pr_cpu_sorted_rows_renumber(const PrSortedRows *rows, const int32_t *old_to_new,
										const PrAllocator *alloc, PrSortedRows *out);
void		pr_cpu_sorted_rows_renumber_at(const PrSortedRows *rows, const int32_t *old_to_new,
										   int32_t *row_order, int32_t *src, PrSortedRows *out);
void		pr_cpu_sorted_rows_renumbered(const PrSortedRows *rows, const int32_t *row_order,
										  const int32_t *src, PrSortedRows *out);

/*
 * A CPU engine over one part of a larger graph (a shard's: its graph numbers the rows it owns
 * first, then the rows it only reads), until the next prepare: it owns rows [0, owned) as after
 * own_rows, its combinations, dot products and column sums cover those rows only, each
 * pagerank_update takes the whole graph's node count (a uniform restart's) and x's dangling sums
 * over the whole graph from pr_cpu_engine_give_dangling, called before it, in place of its own
 * rows' (PR_ERR_INVALID without), and each normalize divides the owned rows by the whole graph's
 * column sums from pr_cpu_engine_give_sums, called before it (its residual over the owned rows).
 */
PrStatus	pr_cpu_engine_own_part(PrEngine *engine, int64_t owned, PrError *err);
void		pr_cpu_engine_give_dangling(PrEngine *engine, double whole_nodes,
										const double *dangling);
void		pr_cpu_engine_give_sums(PrEngine *engine, const double *sums);

/*
 * A slot's n x k values for a caller that writes some of its rows in place (a part's rows read
 * from other parts), or NULL when the engine has no such slot; the slot counts as rewritten.
 */
double	   *pr_cpu_engine_slot(PrEngine *engine, int slot);

#ifdef __cplusplus
}
#endif

#endif							/* PR_ENGINE_H */
