/*
 * pr_cpu_prepare.c — the CPU engine's prepare(): the graph's layout (1 / out_strength, the
 * length-sorted copy of the in-CSR, the dangling list by node chunk), the row blocks of the
 * products, the vectors of k columns, the threads; and the release of all of it.
 */
#include "pr_cpu_engine.h"

#include <string.h>
#include <unistd.h>

/* Most threads the engine starts. */
#define PR_CPU_MAX_THREADS 256

/* Nodes from which PULL_NORMALIZED runs over a copy of the in-CSR with rows sorted by length. */
#define PR_CPU_SORT_ROWS_MIN 4096

/* Edges plus rows per row block of a product. */
#define PR_CPU_BLOCK_WORK 16384

/* Edges plus rows per thread below which extra threads do not pay. */
#define PR_CPU_WORK_PER_THREAD 32768

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

/* The first 64-byte boundary in an allocation of 8 doubles more than needed. */
static double *
align_64(double *block)
{
	return block + (8 - ((uintptr_t) block / sizeof(double)) % 8) % 8;
}

/* 1 / out_strength as the layout takes it (0 for a dangling node). */
static inline double
inverse_strength(double strength)
{
	return strength > 0.0 ? 1.0 / strength : 0.0;
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
	pr_free(&e->alloc, e->part_dots);
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
	e->part_dots = NULL;
	e->res = NULL;
	e->have_residual = false;
	e->dangling_slot = -1;
	e->z_slot = -1;
}

/*
 * Adds slots up to n_slots, keeping the existing ones and their values (a run that mixes asks for
 * more slots in the middle of its iterations); false when memory runs out (the engine then stays
 * as it was).
 */
static bool
cpu_grow_slots(CpuEngine *e, int n_slots)
{
	size_t		nk = (size_t) e->n * (size_t) e->k;
	double	  **slot = ENGINE_ALLOC(e, double *, n_slots);
	double	  **block = ENGINE_ALLOC(e, double *, n_slots);
	int			have = e->n_slots;

	if (slot == NULL || block == NULL)
	{
		pr_free(&e->alloc, slot);
		pr_free(&e->alloc, block);
		return false;
	}
	for (int i = 0; i < n_slots; i++)
	{
		block[i] = i < have ? e->slot_block[i] : ENGINE_ALLOC(e, double, nk + 8);
		if (block[i] == NULL)
		{
			for (int j = have; j < i; j++)
				pr_free(&e->alloc, block[j]);
			pr_free(&e->alloc, slot);
			pr_free(&e->alloc, block);
			return false;
		}
		slot[i] = i < have ? e->slot[i] : align_64(block[i]);
	}
	pr_free(&e->alloc, e->slot);
	pr_free(&e->alloc, e->slot_block);
	e->slot = slot;
	e->slot_block = block;
	e->n_slots = n_slots;
	return true;
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

/* Frees a pending delta (see "delta_pending" in CpuEngine). */
static void
drop_pending(CpuEngine *e)
{
	pr_graph_delta_free(&e->delta_pending, &e->alloc);
	e->delta_pending_graph = NULL;
}

/*
 * Moves the delta the engine serves (its edges by target, sources, out-strengths and absent nodes)
 * to delta_pending, for the next layout of the same graph.
 */
static void
stash_delta(CpuEngine *e)
{
	if (e->n_delta_edges == 0 && e->n_delta_sources == 0 && e->n_delta_absent == 0)
		return;
	drop_pending(e);
	e->delta_pending.n_nodes = e->n;
	e->delta_pending.edges = e->delta_pull;
	e->delta_pending.n_edges = e->n_delta_edges;
	e->delta_pending.sources = e->delta_sources;
	e->delta_pending.out_strength = e->delta_strength;
	e->delta_pending.n_sources = e->n_delta_sources;
	e->delta_pending.absent = e->delta_absent;
	e->delta_pending.n_absent = e->n_delta_absent;
	e->delta_pending_graph = e->g;
	e->delta_pending_seen = e->g_seen;
	e->delta_pull = NULL;
	e->delta_sources = NULL;
	e->delta_strength = NULL;
	e->delta_absent = NULL;
}

/* Frees the delta's arrays (the engine serves g's edges again, inv_out and dangling aside). */
static void
free_delta(CpuEngine *e)
{
	pr_free(&e->alloc, e->delta_pull);
	pr_free(&e->alloc, e->delta_push);
	pr_free(&e->alloc, e->delta_sources);
	pr_free(&e->alloc, e->delta_strength);
	pr_free(&e->alloc, e->delta_dangling);
	pr_free(&e->alloc, e->delta_absent);
	e->delta_pull = e->delta_push = NULL;
	e->delta_sources = e->delta_dangling = e->delta_absent = NULL;
	e->delta_strength = NULL;
	e->n_delta_edges = e->n_delta_sources = e->n_delta_absent = 0;
}

/*
 * Frees everything prepare() made and stops the threads; the engine can be prepared again.  A delta
 * it served stays pending for the next layout of the same graph.
 */
void
pr_cpu_unprepare(CpuEngine *e)
{
	stash_delta(e);
	pr_cpu_pool_stop(e);
	cpu_free_vectors(e);
	pr_free(&e->alloc, e->inv_out);
	if (!e->sorted_given)
	{
		pr_free(&e->alloc, e->row_order);
		pr_free(&e->alloc, e->sorted_ptr);
		pr_free(&e->alloc, e->sorted_src);
		pr_free(&e->alloc, e->sorted_weight);
	}
	e->sorted_given = false;
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
	free_delta(e);
	e->far_field = NULL;
	e->inv_out = NULL;
	e->dangling = NULL;
	e->n_dangling = 0;
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
	return e->prepared && e->g == g && e->needs == needs && pr_graph_same_arrays(g, &e->g_seen);
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
 * Orders the rows of g's in-CSR by descending length (ties by node id): row_order[p] is the node
 * of sorted row p and sorted_ptr[p] its first edge; false when memory for the sort runs out.
 */
static bool
order_rows_by_length(const PrGraph *g, int32_t *row_order, int64_t *sorted_ptr,
					 const PrAllocator *alloc)
{
	int64_t		n = g->n_nodes;
	int64_t		max_len = 0;
	int64_t    *starts;
	int64_t    *cursor;
	PrCountSort sort;

	sort.counts = NULL;
	for (int64_t v = 0; v < n; v++)
		if (g->in_ptr[v + 1] - g->in_ptr[v] > max_len)
			max_len = g->in_ptr[v + 1] - g->in_ptr[v];
	starts = (int64_t *) pr_alloc_array(alloc, (size_t) max_len + 2, sizeof(int64_t));
	if (starts == NULL || !pr_count_sort_init(&sort, (size_t) n, max_len + 1, 1, alloc))
	{
		pr_free(alloc, starts);
		pr_count_sort_free(&sort, alloc);
		return false;
	}
	cursor = pr_count_sort_row(&sort, 0);
	pr_count_sort_clear(&sort, 0);
	for (int64_t v = 0; v < n; v++)
		cursor[g->in_ptr[v + 1] - g->in_ptr[v]]++;
	pr_count_sort_offsets(&sort, true, starts, 1, NULL, NULL);
	for (int64_t v = 0; v < n; v++)
		row_order[cursor[g->in_ptr[v + 1] - g->in_ptr[v]]++] = (int32_t) v;
	pr_count_sort_free(&sort, alloc);
	pr_free(alloc, starts);
	sorted_ptr[0] = 0;
	for (int64_t p = 0; p < n; p++)
	{
		int32_t		v = row_order[p];

		sorted_ptr[p + 1] = sorted_ptr[p] + (g->in_ptr[v + 1] - g->in_ptr[v]);
	}
	return true;
}

/* True when rows are the length-sorted rows of a graph of g's nodes, edges and weights. */
static bool
sorted_rows_fit(const PrSortedRows *rows, const PrGraph *g)
{
	/* a graph without in-edge sources (pr_graph_renumber) has no weights there either */
	bool		weights = g->weighted && (g->in_weight != NULL || g->in_src == NULL);

	return rows->n_nodes == g->n_nodes && rows->n_edges == g->n_edges &&
		(rows->weight != NULL) == weights;
}

/*
 * Makes the length-sorted copy of the in-CSR (the rows given to the engine when they fit the graph,
 * read in place), and the row blocks over it.
 */
static PrStatus
sort_rows_by_length(CpuEngine *e, PrError *err)
{
	const PrGraph *g = e->g;
	int64_t		n = g->n_nodes;

	e->sorted_part = ENGINE_ALLOC(e, int64_t, e->n_blocks + 1);
	if (e->sorted_part == NULL)
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory laying out the graph for the CPU engine");
	if (e->has_given_rows && sorted_rows_fit(&e->given_rows, g))
	{
		/* never written: the engine only reads its sorted copy once it is made */
		e->row_order = (int32_t *) e->given_rows.row_order;
		e->sorted_ptr = (int64_t *) e->given_rows.ptr;
		e->sorted_src = (int32_t *) e->given_rows.src;
		e->sorted_weight = (double *) e->given_rows.weight;
		e->sorted_given = true;
		split_rows(e->sorted_ptr, n, (int) e->n_blocks, e->sorted_part);
		return PR_OK;
	}
	e->row_order = ENGINE_ALLOC(e, int32_t, n);
	e->sorted_ptr = ENGINE_ALLOC(e, int64_t, n + 1);
	e->sorted_src = ENGINE_ALLOC(e, int32_t, g->n_edges);
	if (g->weighted)
		e->sorted_weight = ENGINE_ALLOC(e, double, g->n_edges);
	if (e->row_order == NULL || e->sorted_ptr == NULL || e->sorted_src == NULL ||
		(g->weighted && e->sorted_weight == NULL) ||
		!order_rows_by_length(g, e->row_order, e->sorted_ptr, &e->alloc))
		return pr_error_set(err, PR_ERR_NOMEM, "out of memory laying out the graph for the CPU engine");
	split_rows(e->sorted_ptr, n, (int) e->n_blocks, e->sorted_part);
	pr_cpu_run(e, task_copy_sorted_rows, NULL);
	return PR_OK;
}

/*
 * Bytes of g's length-sorted rows as pr_cpu_sorted_rows_write lays them out: the row offsets, the
 * weights (weighted graphs), the sorted rows' nodes and their sources.
 */
size_t
pr_cpu_sorted_rows_bytes(const PrGraph *g)
{
	size_t		n = (size_t) g->n_nodes;
	size_t		m = (size_t) g->n_edges;

	return (n + 1) * sizeof(int64_t) + (g->weighted && g->in_weight != NULL ? m * sizeof(double) : 0) +
		n * sizeof(int32_t) + m * sizeof(int32_t);
}

/* Where pr_cpu_sorted_rows_write lays out g's length-sorted rows from base on. */
static void
sorted_rows_at(const PrGraph *g, char *base, int64_t **ptr, double **weight, int32_t **row_order,
			   int32_t **src)
{
	size_t		n = (size_t) g->n_nodes;
	size_t		m = (size_t) g->n_edges;

	*ptr = (int64_t *) base;
	base += (n + 1) * sizeof(int64_t);
	*weight = NULL;
	if (g->weighted && g->in_weight != NULL)
	{
		*weight = (double *) base;
		base += m * sizeof(double);
	}
	*row_order = (int32_t *) base;
	base += n * sizeof(int32_t);
	*src = (int32_t *) base;
}

/*
 * Points rows at g's length-sorted rows laid out at base (8-byte aligned, as
 * pr_cpu_sorted_rows_write writes them).
 */
void
pr_cpu_sorted_rows_view(const PrGraph *g, const void *base, PrSortedRows *rows)
{
	int64_t    *ptr;
	double	   *weight;
	int32_t    *row_order;
	int32_t    *src;

	sorted_rows_at(g, (char *) base, &ptr, &weight, &row_order, &src);
	rows->n_nodes = g->n_nodes;
	rows->n_edges = g->n_edges;
	rows->ptr = ptr;
	rows->weight = weight;
	rows->row_order = row_order;
	rows->src = src;
}

/*
 * Writes g's in-CSR with its rows sorted by descending length (ties by node id), as the CPU
 * engine lays out PULL_NORMALIZED, at out (pr_cpu_sorted_rows_bytes(g) bytes, 8-byte aligned) and
 * points rows at it; false when memory for the sort runs out.  Each row keeps its edges in order,
 * so an engine given these rows sums every row as over its own copy: same bits.
 */
bool
pr_cpu_sorted_rows_write(const PrGraph *g, void *out, const PrAllocator *alloc,
						 PrSortedRows *rows)
{
	int64_t    *ptr;
	double	   *weight;
	int32_t    *row_order;
	int32_t    *src;

	sorted_rows_at(g, (char *) out, &ptr, &weight, &row_order, &src);
	if (!order_rows_by_length(g, row_order, ptr, alloc))
		return false;
	for (int64_t p = 0; p < g->n_nodes; p++)
	{
		int32_t		v = row_order[p];
		size_t		len = (size_t) (g->in_ptr[v + 1] - g->in_ptr[v]);

		memcpy(src + ptr[p], g->in_src + g->in_ptr[v], len * sizeof(int32_t));
		if (weight != NULL)
			memcpy(weight + ptr[p], g->in_weight + g->in_ptr[v], len * sizeof(double));
	}
	pr_cpu_sorted_rows_view(g, out, rows);
	return true;
}

/* Whether an engine given sorted rows reads g's in-edge sources too; see pr_engine.h. */
bool
pr_cpu_reads_in_edges(int64_t n, int k, unsigned needs)
{
	return needs != PR_NEED_PULL_NORMALIZED || n < PR_CPU_SORT_ROWS_MIN ||
		k > PR_CPU_SORTED_MAX_COLUMNS;
}

/*
 * The length-sorted rows of g renumbered (pr_graph_renumber with old_to_new) into out: the row
 * offsets and weights are rows', the rows' nodes and their sources new arrays from alloc (the
 * caller frees out->row_order and out->src); false when memory runs out.  Rows of equal length
 * keep rows' order, so an engine given them sums every row as over rows: same bits.
 */
bool
pr_cpu_sorted_rows_renumber(const PrSortedRows *rows, const int32_t *old_to_new,
							const PrAllocator *alloc, PrSortedRows *out)
{
	int32_t    *row_order = (int32_t *) pr_alloc_array(alloc, (size_t) rows->n_nodes + 1,
													   sizeof(int32_t));
	int32_t    *src = (int32_t *) pr_alloc_array(alloc, (size_t) rows->n_edges + 1,
												 sizeof(int32_t));

	if (row_order == NULL || src == NULL)
	{
		pr_free(alloc, row_order);
		pr_free(alloc, src);
		return false;
	}
	pr_cpu_sorted_rows_renumber_at(rows, old_to_new, row_order, src, out);
	return true;
}

/*
 * pr_cpu_sorted_rows_renumber into memory the caller keeps: the rows' nodes into
 * row_order[n_nodes], their sources into src[n_edges] (a shared segment, say, for later readers
 * of the same rows and numbering: pr_cpu_sorted_rows_renumbered).
 */
void
pr_cpu_sorted_rows_renumber_at(const PrSortedRows *rows, const int32_t *old_to_new,
							   int32_t *row_order, int32_t *src, PrSortedRows *out)
{
	for (int64_t p = 0; p < rows->n_nodes; p++)
		row_order[p] = old_to_new[rows->row_order[p]];
	for (int64_t e = 0; e < rows->n_edges; e++)
		src[e] = old_to_new[rows->src[e]];
	pr_cpu_sorted_rows_renumbered(rows, row_order, src, out);
}

/*
 * Points out at rows renumbered before (pr_cpu_sorted_rows_renumber_at): their nodes and sources
 * at row_order and src, their row offsets and weights rows'.
 */
void
pr_cpu_sorted_rows_renumbered(const PrSortedRows *rows, const int32_t *row_order,
							  const int32_t *src, PrSortedRows *out)
{
	*out = *rows;
	out->row_order = row_order;
	out->src = src;
}

/*
 * Gives the engine g's length-sorted rows (pr_cpu_sorted_rows_write, pr_cpu_sorted_rows_view): its
 * next prepares on a graph they fit read them in place of a copy of their own.  The caller keeps
 * them unchanged until the engine is released.
 */
void
pr_cpu_engine_use_sorted_rows(PrEngine *base, const PrSortedRows *rows)
{
	CpuEngine  *e = (CpuEngine *) base;

	e->given_rows = *rows;
	e->has_given_rows = true;
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

/* Fails a prepare for want of memory (the engine left unprepared). */
static PrStatus
prepare_out_of_memory(CpuEngine *e, int64_t n, int k, PrError *err)
{
	pr_cpu_unprepare(e);
	return pr_error_set(err, PR_ERR_NOMEM,
						"out of memory preparing the CPU engine for %lld nodes x %d columns",
						(long long) n, k);
}

/* The dangling-list range of every node chunk (the list is ascending) into dangling_chunk. */
static void
find_dangling_chunks(CpuEngine *e)
{
	int64_t		d = 0;

	for (int64_t c = 0; c <= e->n_chunks; c++)
	{
		while (d < e->n_dangling && e->dangling[d] < c * PR_CPU_CHUNK)
			d++;
		e->dangling_chunk[c] = d;
	}
	e->dangling_chunk[e->n_chunks] = e->n_dangling;
}

/*
 * Prepares the engine (unprepared) on a graph it does not hold: the vectors, 1 / out_strength,
 * the chunks' dangling ranges, the threads, the row blocks and the length-sorted rows.  On
 * failure the engine is left unprepared.
 */
static PrStatus
lay_out_graph(CpuEngine *e, const PrGraph *g, int k, int n_slots, unsigned needs, PrError *err)
{
	int64_t		n = g->n_nodes;
	PrStatus	status;

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
		return prepare_out_of_memory(e, n, k, err);
	e->dangling_chunk = ENGINE_ALLOC(e, int64_t, e->n_chunks + 1);
	e->restart_chunk = ENGINE_ALLOC(e, int64_t, e->n_chunks + 1);
	e->n_blocks = choose_blocks(e->n_threads, g);
	e->in_part = ENGINE_ALLOC(e, int64_t, e->n_blocks + 1);
	e->out_part = ENGINE_ALLOC(e, int64_t, e->n_blocks + 1);
	if (e->dangling_chunk == NULL || e->restart_chunk == NULL || e->in_part == NULL ||
		e->out_part == NULL)
		return prepare_out_of_memory(e, n, k, err);
	if (needs & PR_NEED_PULL_NORMALIZED)
	{
		e->inv_out = ENGINE_ALLOC(e, double, n);
		if (e->inv_out == NULL)
			return prepare_out_of_memory(e, n, k, err);
		for (int64_t v = 0; v < n; v++)
			e->inv_out[v] = inverse_strength(g->out_strength[v]);
	}
	e->dangling = g->dangling;
	e->n_dangling = g->n_dangling;
	find_dangling_chunks(e);

	status = pr_cpu_pool_start(e, err);
	if (status != PR_OK)
	{
		pr_cpu_unprepare(e);
		return status;
	}
	split_rows(g->in_ptr, n, (int) e->n_blocks, e->in_part);
	if ((needs & PR_NEED_PULL_NORMALIZED) && n >= PR_CPU_SORT_ROWS_MIN)
	{
		status = sort_rows_by_length(e, err);
		if (status != PR_OK)
		{
			pr_cpu_unprepare(e);
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
}

/*
 * Lays g out anew (pr_cpu_unprepare, lay_out_graph); a delta pending for g (the engine served it on
 * g's previous layout, or a prepare of g failed) is applied to the new layout, and stays pending
 * when that fails; a prepare of another graph drops it.
 */
static PrStatus
lay_out_again(CpuEngine *e, const PrGraph *g, int k, int n_slots, unsigned needs, PrError *err)
{
	PrStatus	status;

	pr_cpu_unprepare(e);
	if (e->delta_pending_graph != g || !pr_graph_same_arrays(g, &e->delta_pending_seen))
		drop_pending(e);
	status = lay_out_graph(e, g, k, n_slots, needs, err);
	if (status != PR_OK)
		return status;
	if (e->delta_pending_graph != NULL &&
		(status = pr_cpu_apply_delta(&e->base, &e->delta_pending, err)) != PR_OK)
	{
		pr_cpu_unprepare(e);
		return status;
	}
	drop_pending(e);
	return PR_OK;
}

/* Takes the graph, allocates the slots and scratch vectors, splits the work, starts threads. */
PrStatus
pr_cpu_prepare(PrEngine *base, const PrGraph *g, int k, int n_slots, unsigned needs, PrError *err)
{
	CpuEngine  *e = (CpuEngine *) base;
	int64_t		n;

	if (g == NULL || k <= 0 || n_slots <= 0 || g->n_nodes < 0)
	{
		pr_cpu_unprepare(e);
		return pr_error_set(err, PR_ERR_INVALID, "bad arguments to the CPU engine's prepare");
	}
	n = g->n_nodes;
	e->rows_owned = false;		/* every row until own_rows says otherwise */
	e->part = false;			/* the whole graph until pr_cpu_engine_own_part says otherwise */
	e->dangling_given = false;
	e->sums_given = false;
	if ((uint64_t) n > SIZE_MAX / sizeof(double) / (size_t) k)
	{
		pr_cpu_unprepare(e);
		return pr_error_set(err, PR_ERR_TOO_LARGE, "vectors of %lld x %d values are too large",
							(long long) n, k);
	}
	if (same_layout(e, g, needs))
	{
		/* the graph the engine holds: keep its layout and threads, remake only the vectors
		 * (kept when they are enough: a run with fewer slots uses the first ones; more slots
		 * for the same k are added, the existing ones keeping their values) */
		if (k == e->k && n_slots <= e->n_slots)
		{
			e->have_residual = false;
			e->dangling_slot = -1;
			e->z_slot = -1;
			return PR_OK;
		}
		if (k == e->k)
			return cpu_grow_slots(e, n_slots) ? PR_OK : prepare_out_of_memory(e, n, k, err);
		cpu_free_vectors(e);
		if (cpu_alloc_vectors(e, k, n_slots))
			return PR_OK;
		return prepare_out_of_memory(e, n, k, err);
	}
	return lay_out_again(e, g, k, n_slots, needs, err);
}

/*
 * Serves g + delta from now on (see pr_engine.h): copies the delta's edges in both orders and its
 * absent nodes, rewrites 1 / out_strength of the sources of the previous delta (back to g's) and
 * of this one (X's), and takes X's dangling list (absent nodes in it: their out-strength is 0).
 */
PrStatus
pr_cpu_apply_delta(PrEngine *base, const PrGraphDelta *delta, PrError *err)
{
	CpuEngine  *e = (CpuEngine *) base;
	const PrGraph *g = e->g;
	PrEdgeChange *pull = NULL,
			   *push = NULL;
	int32_t    *sources = NULL,
			   *dangling = NULL,
			   *absent = NULL;
	double	   *strength = NULL;
	PrStatus	status;
	int64_t		n_edges = delta != NULL ? delta->n_edges : 0;
	int64_t		n_sources = delta != NULL ? delta->n_sources : 0;
	int64_t		n_absent = delta != NULL ? delta->n_absent : 0;

	if (!e->prepared)
		return pr_error_set(err, PR_ERR_ENGINE, "the CPU engine is not prepared");
	if (e->rows_owned)
		return pr_error_set(err, PR_ERR_UNSUPPORTED, "a CPU engine owning rows takes no delta");
	if (delta != NULL && (status = pr_graph_delta_check(delta, g, err)) != PR_OK)
		return status;
	if (delta != &e->delta_pending)
		drop_pending(e);		/* a delta given replaces one pending */
	if (n_absent > 0 && n_absent >= g->n_nodes)
		return pr_error_set(err, PR_ERR_UNSUPPORTED, "a delta leaving none of the %lld nodes",
							(long long) g->n_nodes);
	if (n_edges > 0 || n_sources > 0 || n_absent > 0)
	{
		pull = ENGINE_ALLOC(e, PrEdgeChange, n_edges + 1);
		push = ENGINE_ALLOC(e, PrEdgeChange, n_edges + 1);
		sources = ENGINE_ALLOC(e, int32_t, n_sources + 1);
		strength = ENGINE_ALLOC(e, double, n_sources + 1);
		dangling = ENGINE_ALLOC(e, int32_t, g->n_dangling + n_sources + 1);
		absent = ENGINE_ALLOC(e, int32_t, n_absent + 1);
		if (pull == NULL || push == NULL || sources == NULL || strength == NULL ||
			dangling == NULL || absent == NULL)
		{
			pr_free(&e->alloc, pull);
			pr_free(&e->alloc, push);
			pr_free(&e->alloc, sources);
			pr_free(&e->alloc, strength);
			pr_free(&e->alloc, dangling);
			pr_free(&e->alloc, absent);
			return pr_error_set(err, PR_ERR_NOMEM, "out of memory for a delta of %lld edges",
								(long long) n_edges);
		}
		memcpy(pull, delta->edges, sizeof(PrEdgeChange) * (size_t) n_edges);
		pr_graph_delta_by_source(delta, push);
		memcpy(sources, delta->sources, sizeof(int32_t) * (size_t) n_sources);
		memcpy(strength, delta->out_strength, sizeof(double) * (size_t) n_sources);
		memcpy(absent, delta->absent, sizeof(int32_t) * (size_t) n_absent);
	}
	if (e->inv_out != NULL)
		for (int64_t i = 0; i < e->n_delta_sources; i++)
			e->inv_out[e->delta_sources[i]] = inverse_strength(g->out_strength[e->delta_sources[i]]);
	free_delta(e);
	e->dangling = g->dangling;
	e->n_dangling = g->n_dangling;
	if (pull != NULL)
	{
		e->delta_pull = pull;
		e->delta_push = push;
		e->n_delta_edges = n_edges;
		e->delta_sources = sources;
		e->delta_strength = strength;
		e->n_delta_sources = n_sources;
		e->delta_dangling = dangling;
		e->delta_absent = absent;
		e->n_delta_absent = n_absent;
		e->n_dangling = pr_graph_delta_dangling(g, delta, dangling);
		e->dangling = dangling;
		if (e->inv_out != NULL)
			for (int64_t i = 0; i < n_sources; i++)
				e->inv_out[sources[i]] = inverse_strength(delta->out_strength[i]);
	}
	find_dangling_chunks(e);
	e->z_slot = -1;
	e->dangling_slot = -1;
	pr_free(&e->alloc, e->far_field);
	e->far_field = NULL;
	return PR_OK;
}
