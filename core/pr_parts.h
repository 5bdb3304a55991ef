/*
 * pr_parts.h — one engine over several part engines (several GPUs, or the CPU engine's simulated
 * parts in tests): the driver (pr_driver.h) runs on it as on any engine.
 *
 * The graph's nodes are renumbered (the parts' order) so that each part's rows are one range of
 * it, the ranges of one length (ceil(n / parts) rows, the last the rest) and about equal in the
 * product's work (in-edges).  Part p is an ordinary engine prepared on a part graph that
 * has every node, the whole graph's out-strengths and dangling list, and only the in-edges of its
 * own rows (a slice of the graph's arrays, no copy; when the push product is needed too (HITS), the
 * same edges as an out-CSR, a copy).  A pull product runs on every part at once (each part's own
 * rows are right, the others are zero); an exchange makes every part's copy of a slot whole when an
 * operation needs it (below): rows [row_begin[p], row_begin[p+1]) of part p go to every other part.  A push product of a
 * part holds, for every row, the sum over the part's edges only; the exchange then sums the parts'
 * vectors, leaving the same total on every part.  Every part multiplies its share of the edges,
 * for either product.
 *
 * Every vector operation (the PageRank update, normalisation, combinations, fills, uploads) runs on
 * every part, and reads (download, column sums, dot products, top-k) come from part 0, which holds
 * every row.  When every part owns rows (PrEngineOps.own_rows), each part's PageRank update
 * computes only its own rows and the residual is summed over the parts; the engine then knows, for
 * each slot, whether every part holds every row of it or only its own, and exchanges a slot's rows
 * only when an operation needs the rest: before a product (only what the product reads: see
 * PrPartsExchange.gather), before a read, a normalisation or a dot product.  So an iteration of
 * PageRank or RWR exchanges once, and every part updates 1/n_parts of the rows.  Otherwise every
 * part runs every operation over the whole vector and a pull product's result is exchanged at once.
 * The warm start's restart_local is not offered (it multiplies inside the engine): the driver takes
 * its general way through restart_fill and products.
 *
 * A failing part's error comes back as "part p of n: <its message>" (p from 0, as in
 * pr_parts_engine_part).  prepare keeps the split and the part graphs while it sees the same graph
 * (PrEngineOps.prepare) and asks every part to prepare on its part graph (each part then keeps
 * what it may); it asks every part even after one failed, and a part whose prepare fails must
 * hold no graph afterwards (as the CPU engine), so no part remembers a part graph that was freed.
 */
#ifndef PR_PARTS_H
#define PR_PARTS_H

#include "pr_engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most parts one engine composes. */
#define PR_PARTS_MAX 16

/* How a slot's values travel between the parts after a product. */
typedef struct PrPartsExchange
{
	/*
	 * Makes rows [row_begin[p], row_begin[p+1]) (all k columns) of slot on every part equal to
	 * those rows on part p, for every p.  With product_input, what the normalized pull product
	 * reads of the slot may go instead of its values (a GPU engine's copy of the slot scaled by
	 * the out-strengths, pr_gpu_slot.h); *values_moved says whether the values went.  NULL: the
	 * generic exchange through download and upload (host memory, the values; for the CPU
	 * engine's parts).
	 */
	PrStatus	(*gather) (void *arg, PrEngine *const *parts, int n_parts, const int64_t *row_begin,
						   int k, int slot, bool product_input, bool *values_moved, PrError *err);

	/*
	 * Makes every value of slot (n rows, k columns) on every part the sum of that value over the
	 * parts, the same bits on every part.  NULL: the generic exchange (the parts' vectors added on
	 * the host in part order).  An exchange gives both or neither.
	 */
	PrStatus	(*sum) (void *arg, PrEngine *const *parts, int n_parts, int64_t n, int k, int slot,
						PrError *err);

	/* Frees arg when the engine is released (may be NULL). */
	void		(*release) (void *arg);
	void	   *arg;

	/* Writes what the exchange chose so far (e.g. its ways of moving rows), for reports; may be NULL. */
	void		(*describe) (void *arg, char *buf, size_t size);
} PrPartsExchange;

/* What a prepared parts engine split, for reports. */
typedef struct PrPartsReport
{
	int			n_parts;
	int64_t		row_begin[PR_PARTS_MAX + 1];
	int64_t		edges[PR_PARTS_MAX];	/* edges of each part graph */
	double		split_seconds;	/* host: the ranges and the part graphs (0 when prepare kept
								 * the split of the graph it held) */
	bool		rows_owned;		/* each part updates only its own rows (PrEngineOps.own_rows) */
	char		exchange[128];	/* PrPartsExchange.describe's text ("" without it) */
} PrPartsReport;

/*
 * Creates an engine over n_parts (2 .. PR_PARTS_MAX) engines of one kind, which it owns from then
 * on (released with it, also when creation fails), and an exchange (copied; NULL or a NULL gather
 * for the generic one; its release is called with the engine's, also when creation fails).  Its
 * name is "<name>(<n_parts>)" (name NULL: part 0's).  It offers an operation when every part
 * does (the product with the generic exchange also needs their download and upload), and a
 * dangling distribution when every part takes one.
 */
PrEngine   *pr_parts_engine_create(PrEngine **parts, int n_parts, const PrPartsExchange *exchange,
								   const char *name, const PrAllocator *alloc, PrError *err);

/*
 * The share of a graph's edges each of n_parts part graphs holds (1 / n_parts, for either
 * product: its rows carry an even share of the in-edges).  For sizing a part before the split
 * (powerrank_estimate).
 */
double		pr_parts_edge_share(int n_parts);

/* Whether engine was made by pr_parts_engine_create. */
bool		pr_parts_engine_is(const PrEngine *engine);

/* Part p of a parts engine (NULL when p is out of range). */
PrEngine   *pr_parts_engine_part(PrEngine *engine, int p);

/* The split of a prepared parts engine (PR_ERR_INVALID before prepare). */
PrStatus	pr_parts_engine_report(PrEngine *engine, PrPartsReport *out, PrError *err);

#ifdef __cplusplus
}
#endif

#endif							/* PR_PARTS_H */
