/*
 * pr_cpu.c — the CPU engine's operations (PrEngineOps) and its creation; pr_cpu_engine.h describes the
 * engine and its files.
 */
#include "pr_cpu_engine.h"

#include <string.h>

/*
 * Most columns pr_pagerank runs at once on this engine (PrEngineOps.column_batch): one column
 * group.  Beyond it, one pass over the edges for all columns reads n * k values per iteration,
 * which outgrows the caches: on an ego-Twitter-sized graph (81 K nodes) 16 columns at once took
 * 1.7-2.2x the time of two batches of 8 (doc/RESULTS.md, "Many-source RWR on the CPU").
 */
#define PR_CPU_COLUMN_BATCH 8

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
				pr_cpu_run(e, pr_cpu_task_scale_by_strength, &args);
				e->z_slot = x_slot;
				e->dangling_slot = x_slot;
			}
			pr_cpu_run(e, pr_cpu_task_pull_normalized, &args);
			pr_cpu_add_delta(e, product, args.x, args.y);
			return PR_OK;
		case PR_PRODUCT_PULL:
			pr_cpu_run(e, pr_cpu_task_pull, &args);
			pr_cpu_add_delta(e, product, args.x, args.y);
			return PR_OK;
		case PR_PRODUCT_PUSH:
			if (!e->g->has_out_edges)
			{
				if (e->g->n_edges > 0)
					return pr_error_set(err, PR_ERR_UNSUPPORTED,
										"the graph has no out-edge arrays, which the push product needs");
				memset(args.y, 0, sizeof(double) * (size_t) e->n * (size_t) e->k);
				pr_cpu_add_delta(e, product, args.x, args.y);
				return PR_OK;
			}
			pr_cpu_run(e, pr_cpu_task_push, &args);
			pr_cpu_add_delta(e, product, args.x, args.y);
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

	if (e->part)
	{
		/* a part: the whole graph's dangling sums, given (pr_cpu_engine_give_dangling) */
		if (!e->dangling_given)
			return pr_error_set(err, PR_ERR_INVALID,
								"the update of a part needs the whole graph's dangling sums");
		e->dangling_given = false;
	}
	else
	{
		/* dangling sums of x: taken by the product when it read x, else now */
		if (e->dangling_slot != x_slot)
		{
			pr_cpu_run(e, pr_cpu_task_dangling_sums, e->slot[x_slot]);
			e->dangling_slot = x_slot;
		}
		pr_cpu_sum_partials(e, e->part_dangling, e->coef);
	}
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
			e->coef[j] /= e->part ? e->whole_nodes : (double) (e->n - e->n_delta_absent);
	}
	args.y = e->slot[y_slot];
	args.x = e->slot[x_slot];
	args.alpha = alpha;
	args.uniform = restart->uniform;
	args.restart = restart;
	slot_written(e, y_slot);
	pr_cpu_run(e, pr_cpu_task_pagerank_update, &args);
	pr_cpu_collect_residual(e);
	if (e->z != NULL && !e->rows_owned)
	{
		/* the update also scaled y into z and took its dangling sums */
		e->z_slot = y_slot;
		e->dangling_slot = y_slot;
	}
	return PR_OK;
}

/* Owns rows [begin, end) for the updates until the next prepare (see pr_engine.h). */
static PrStatus
cpu_own_rows(PrEngine *base, int64_t begin, int64_t end, PrError *err)
{
	CpuEngine  *e = (CpuEngine *) base;

	if (e->slot == NULL || begin < 0 || begin > end || end > e->n)
		return pr_error_set(err, PR_ERR_INVALID, "rows [%lld, %lld) to own on an engine of %lld prepared rows",
							(long long) begin, (long long) end, e->slot == NULL ? 0LL : (long long) e->n);
	e->rows_owned = true;
	e->own_begin = begin;
	e->own_end = end;
	return PR_OK;
}

/* Makes the engine a part of a larger graph, owning rows [0, owned), until the next prepare. */
PrStatus
pr_cpu_engine_own_part(PrEngine *base, int64_t owned, PrError *err)
{
	CpuEngine  *e = (CpuEngine *) base;
	PrStatus	status = cpu_own_rows(base, 0, owned, err);

	if (status != PR_OK)
		return status;
	e->part = true;
	e->dangling_given = false;
	e->sums_given = false;
	return PR_OK;
}

/* The whole graph's node count and dangling sums of x (k) for the next update of a part. */
void
pr_cpu_engine_give_dangling(PrEngine *base, double whole_nodes, const double *dangling)
{
	CpuEngine  *e = (CpuEngine *) base;

	memcpy(e->coef, dangling, sizeof(double) * (size_t) e->k);
	e->whole_nodes = whole_nodes;
	e->dangling_given = true;
}

/* The whole graph's column sums (k) by which the next normalize of a part divides its rows. */
void
pr_cpu_engine_give_sums(PrEngine *base, const double *sums)
{
	CpuEngine  *e = (CpuEngine *) base;

	memcpy(e->coef, sums, sizeof(double) * (size_t) e->k);
	e->sums_given = true;
}

/* A slot's n x k values, to write some rows in place; the slot counts as written. */
double *
pr_cpu_engine_slot(PrEngine *base, int slot)
{
	CpuEngine  *e = (CpuEngine *) base;

	if (!e->prepared || slot < 0 || slot >= e->n_slots)
		return NULL;
	slot_written(e, slot);
	return e->slot[slot];
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
	if (e->part)
	{
		/* a part: the whole graph's column sums, given (pr_cpu_engine_give_sums) */
		if (!e->sums_given)
			return pr_error_set(err, PR_ERR_INVALID,
								"the normalisation of a part needs the whole graph's column sums");
		e->sums_given = false;
	}
	slot_written(e, slot);
	if (!e->part)
	{
		pr_cpu_run(e, pr_cpu_task_column_sums, &args);
		pr_cpu_sum_partials(e, e->part_sum, e->coef);
	}
	pr_cpu_run(e, pr_cpu_task_divide_columns, &args);
	if (old_slot >= 0)
		pr_cpu_collect_residual(e);
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

/*
 * Sums of each column of a slot, over all nodes (a part's: its owned rows) and over the dangling
 * ones (warm start).
 */
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
	pr_cpu_run(e, pr_cpu_task_column_sums, &args);
	pr_cpu_sum_partials(e, e->part_sum, sums);
	if (e->dangling_slot != slot)
	{
		pr_cpu_run(e, pr_cpu_task_dangling_sums, e->slot[slot]);
		e->dangling_slot = slot;
	}
	pr_cpu_sum_partials(e, e->part_dangling, dangling);
	return PR_OK;
}

/*
 * Checks a combine / dots call's terms (1 to PR_COMBINE_MAX_TERMS valid slots) and points
 * args->in at them.
 */
static PrStatus
mix_terms(CpuEngine *e, int n_terms, const int *slots, MixArgs *args, PrError *err)
{
	PrStatus	status;

	if (n_terms < 1 || n_terms > PR_COMBINE_MAX_TERMS)
		return pr_error_set(err, PR_ERR_INVALID, "combine and dots take 1 to %d slots, not %d",
							PR_COMBINE_MAX_TERMS, n_terms);
	memset(args, 0, sizeof(*args));
	args->n_terms = n_terms;
	for (int t = 0; t < n_terms; t++)
	{
		if ((status = check_slot(e, slots[t], err)) != PR_OK)
			return status;
		args->in[t] = e->slot[slots[t]];
	}
	return PR_OK;
}

/* out = sum of coef[t * k + j] * slot_t per column (warm start, accelerated iteration). */
static PrStatus
cpu_combine(PrEngine *base, int out_slot, int n_terms, const int *slots, const double *coef,
			PrError *err)
{
	CpuEngine  *e = (CpuEngine *) base;
	PrStatus	status = check_slot(e, out_slot, err);
	MixArgs		args;

	if (status != PR_OK || (status = mix_terms(e, n_terms, slots, &args, err)) != PR_OK)
		return status;
	args.out = e->slot[out_slot];
	args.coef = coef;
	pr_cpu_run(e, pr_cpu_task_combine, &args);
	slot_written(e, out_slot);
	return PR_OK;
}

/* Dot products of a slot with each of n_terms slots, per column (accelerated iteration). */
static PrStatus
cpu_dots(PrEngine *base, int a_slot, int n_terms, const int *slots, double *out, PrError *err)
{
	CpuEngine  *e = (CpuEngine *) base;
	PrStatus	status = check_slot(e, a_slot, err);
	MixArgs		args;

	if (status != PR_OK || (status = mix_terms(e, n_terms, slots, &args, err)) != PR_OK)
		return status;
	if (e->part_dots == NULL &&
		(e->part_dots = ENGINE_ALLOC(e, double, (size_t) PR_COMBINE_MAX_TERMS *
									 (size_t) e->n_chunks * (size_t) e->k)) == NULL)
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory for dot products");
	args.a = e->slot[a_slot];
	pr_cpu_run(e, pr_cpu_task_dots, &args);
	for (int t = 0; t < n_terms; t++)
		pr_cpu_sum_partials(e, e->part_dots + (size_t) t * (size_t) e->n_chunks * (size_t) e->k,
							out + (size_t) t * (size_t) e->k);
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
	pr_cpu_unprepare(e);
	pr_graph_delta_free(&e->delta_pending, &e->alloc);
	pr_cpu_pool_destroy(e);
	alloc = e->alloc;
	pr_free(&alloc, e);
}

/*
 * A mixed step's three vector passes against a plain step (PrEngineOps.mixed_step_cost): 0.33
 * (Slashdot, depth 7) to 0.48 (the 262 K-node locality graph, depth 5) of a product, per call on
 * 2 threads, and a plain step is the product and the update's pass over the vectors.
 */
#define PR_CPU_MIXED_STEP_COST 0.4

static const PrEngineOps cpu_engine_ops = {
	.name = "cpu",
	.custom_dangling = true,
	.mixed_step_cost = PR_CPU_MIXED_STEP_COST,
	.column_batch = PR_CPU_COLUMN_BATCH,
	.prepare = pr_cpu_prepare,
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
	.dots = cpu_dots,
	.far_field = cpu_far_field,
	.own_rows = cpu_own_rows,
	.apply_delta = pr_cpu_apply_delta,
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
	if (!pr_cpu_pool_init(e))
	{
		pr_free(alloc, e);
		pr_error_set(err, PR_ERR_ENGINE,
					 "could not create the CPU engine's synchronisation objects");
		return NULL;
	}
	return &e->base;
}
