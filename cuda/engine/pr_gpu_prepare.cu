/*
 * pr_gpu_prepare.cu — the single-GPU engine's prepare: the private order and the CSRs on the host,
 * the choice and host plan of the pull matrix's layout, the device memory check, the upload of
 * the vectors and the layouts, and the report.
 *
 * A layout of the pull matrix is one PullLayout: an order and a format, planned on the host
 * (plan_pull_layout), uploaded into its own matrix (upload_pull_layout), run (gpu_matrix_run) and
 * freed (gpu_matrix_free) on its own.  An explicit kernel prepares one layout.  The kernel `auto`
 * (one column, measure_reps > 0) makes the measured choice: every candidate of a short list —
 * natural order (row blocks, ALIGNED_COO, binned, cuSPARSE), degree order (the model's best
 * composite or binned layout and its runner-up, cuSPARSE), hubs first (the model's best
 * composite, row blocks), locality (row blocks) — is
 * uploaded and timed over measure_reps products (CUDA events, the fastest rep), and the fastest is
 * kept; the others are freed before the next is uploaded.
 */
#include "pr_gpu_engine.h"
#include "pr_gpu_spmm.h"
#include "pr_gpu_reduce.cuh"
#include "pr_gpu_vector_kernels.cuh"
#include "pr_gpu_launch.h"
#include "pr_plan_aligned_coo.h"
#include "pr_plan_row_blocks.h"
#include "pr_plan_order.h"
#include "pr_gpu_streamed.h"
#include "pr_residency.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Host-side arrays of one private order and the plans of its layouts (freed at prepare's end). */
struct HostPlans
{
	PrGpuOrder	order;
	PrPlanCsr	pull;
	PrPlanCsr	push;
	PrComposite comp;
	PrBinned	bin_pull;
	PrAlignedCoo acoo;
	PrRowBlocks rowb;
	PrBinned	bin_push;
	int32_t    *new_to_old;
	int32_t    *old_to_new;
	int64_t    *key;
	double	   *inv_out;
	bool		identity;		/* the order keeps the graph's own ids (new_to_old[i] = i) */
	bool		pull_borrowed;	/* pull is a view of the graph's own in-CSR (not freed) */
};

/* The orders whose candidates the measured choice times. */
#define N_MEASURED_ORDERS 4

/* Columns of the hubs-first order's front: as many as this many shared-memory tiles hold. */
#define PR_GPU_HUB_TILES 8

/* One layout of the pull matrix: its order, its format and what it is planned with. */
struct PullLayout
{
	PrGpuOrder	order;
	PrGpuKernel kernel;			/* PR_GPU_KERNEL_TILED, _BINNED, _CUSPARSE or _ALIGNED_COO */
	PrCompositeOptions copt;	/* tile-composite: the planner's options */
	int			bin_chunk;		/* binned CSR: rows longer than this are cut into chunks */
	double		predicted;		/* the model's time of one product in ms, or -1 */
	double		measured;		/* its timed product in ms, or -1 */
	char		name[48];		/* "order/format", for the report */
	char		cand[512];		/* the planner's candidates, for the report */
	int			n_cand;
};

/* The name of an order. */
static const char *
order_name(PrGpuOrder order)
{
	return order == PR_GPU_ORDER_NATURAL ? "natural" : order == PR_GPU_ORDER_HUBS ? "hubs" :
		order == PR_GPU_ORDER_LOCALITY ? "locality" : "degree";
}

/* Names a layout "order/format" (the composite with its shared-memory tiles and threshold). */
static void
name_layout(PullLayout *lay)
{
	const char *o = order_name(lay->order);

	if (lay->kernel == PR_GPU_KERNEL_TILED)
		snprintf(lay->name, sizeof(lay->name), "%s/tiled-s%d-v%d%s", o, lay->copt.n_smem_tiles,
				 lay->copt.vec_threshold, lay->copt.compact ? "-compact" : "");
	else
		snprintf(lay->name, sizeof(lay->name), "%s/%s", o,
				 lay->kernel == PR_GPU_KERNEL_BINNED ? "binned" :
				 lay->kernel == PR_GPU_KERNEL_CUSPARSE ? "cusparse" :
				 lay->kernel == PR_GPU_KERNEL_ROW_BLOCKS ? "row_blocks" : "aligned_coo");
}

/* Frees the host plan of the pull layout (the composite, the binned CSR or ALIGNED_COO). */
static void
free_pull_plan(HostPlans *h)
{
	const PrAllocator *a = &pr_malloc_allocator;

	pr_plan_composite_free(&h->comp, a);
	pr_plan_binned_free(&h->bin_pull, a);
	pr_plan_aligned_coo_free(&h->acoo, a);
	pr_plan_row_blocks_free(&h->rowb, a);
}

/* Frees the host layouts. */
static void
host_plans_free(HostPlans *h)
{
	const PrAllocator *a = &pr_malloc_allocator;

	if (h->pull_borrowed)
		memset(&h->pull, 0, sizeof(h->pull));
	pr_plan_csr_free(&h->pull, a);
	pr_plan_csr_free(&h->push, a);
	free_pull_plan(h);
	pr_plan_binned_free(&h->bin_push, a);
	free(h->new_to_old);
	free(h->old_to_new);
	free(h->key);
	free(h->inv_out);
	memset(h, 0, sizeof(*h));
}

/*
 * Adds slots to the engine up to n_slots (cleared), with statistics room for them: prepare's
 * slots, and more on a re-prepare that asks for more (the old statistics array then stays among
 * the allocations until the engine is freed).
 */
static PrStatus
grow_slots(GpuEngine *e, int n_slots, PrError *err)
{
	size_t		bytes = (size_t) (e->n + PR_VECTOR_SPARE_ROWS) * e->k * e->elem;
	/* per slot, then two scratch entries (column sums, normalize's residual), then the dots */
	size_t		stats_bytes = (size_t) (n_slots + 2 + PR_COMBINE_MAX_TERMS) * e->k * 3 * 8;
	void	   *p;
	PrStatus	st;

	while ((int) e->slots.size() < n_slots)
	{
		if ((st = gpu_dev_alloc(e, &p, bytes, err)) != PR_OK)
			return st;
		e->slots.push_back(p);
		e->dangling_valid.push_back(false);
		PR_CUDA(cudaMemsetAsync(p, 0, bytes, e->stream));
	}
	if ((st = gpu_dev_alloc(e, &p, stats_bytes, err)) != PR_OK)
		return st;
	PR_CUDA(cudaMemsetAsync(p, 0, stats_bytes, e->stream));
	e->stats = (double *) p;
	e->n_slots = n_slots;
	return PR_OK;
}

/* Whether the engine holds the layout of this graph object and shape already. */
static bool
same_prepared_graph(const GpuEngine *e, const PrGraph *g, int k, unsigned needs)
{
	return e->prepared && e->prep_graph == g && e->prep_in_ptr == g->in_ptr && e->prep_in_src == g->in_src &&
		e->prep_edges == g->n_edges && e->n == g->n_nodes && e->k == k && e->needs == needs;
}

/* Keeps the device layout and forgets the vector state; a run asking for more slots gets the
 * missing ones (fewer: it uses the first ones). */
static PrStatus
reuse_prepared(GpuEngine *e, int n_slots, PrError *err)
{
	for (int s = 0; s < e->n_slots; s++)
		e->dangling_valid[s] = false;
	e->z_owner = -1;
	e->resid_index = -1;
	return n_slots > e->n_slots ? grow_slots(e, n_slots, err) : PR_OK;
}

/* Frees the previous graph's device state, checks the request and sets the engine's shape. */
static PrStatus
start_prepare(GpuEngine *e, const PrGraph *g, int k, int n_slots, unsigned needs, PrError *err)
{
	if (e->prepared)
		gpu_engine_free_device(e);
	memset(&e->report, 0, sizeof(e->report));
	e->report.measured_ms = -1;
	e->report.runner_up_ms = -1;
	e->report.runner_up_predicted_ms = -1;
	if (k < 1 || k > PR_MAX_K)
		return pr_error_set(err, PR_ERR_UNSUPPORTED, "GPU engine: %d columns (the GPU engine takes 1 to %d)", k, PR_MAX_K);
	if (n_slots < 1)
		return pr_error_set(err, PR_ERR_INVALID, "GPU engine: needs at least one vector slot");
	if (g->n_nodes > PR_PLAN_MAX_NODES_CHECK)
		return pr_error_set(err, PR_ERR_TOO_LARGE, "GPU engine: %lld nodes exceed the 32-bit ids", (long long) g->n_nodes);
	e->n = g->n_nodes;
	e->m = g->n_edges;
	e->k = k;
	e->n_slots = n_slots;
	e->needs = needs;
	e->z_owner = -1;
	e->resid_index = -1;
	e->restart_key = 0;
	return PR_OK;
}

/* The host arrays of plan_private_order filled by one thread's share of n (see host_arrays_part). */
typedef struct HostArraysJob
{
	int64_t		n;
	const double *out_strength;
	double	   *inv_out;		/* 1 / out-strength (0 for dangling nodes) */
	int32_t    *new_to_old;		/* identity ids (natural order), or NULL */
	int32_t    *old_to_new;
} HostArraysJob;

/* pr_parallel_run's task: part `part` of n_parts of the host arrays. */
static void
host_arrays_part(void *arg, int part, int n_parts)
{
	HostArraysJob *job = (HostArraysJob *) arg;
	int64_t		b,
				end;

	pr_even_range(job->n, part, n_parts, &b, &end);
	for (int64_t i = b; i < end; i++)
	{
		job->inv_out[i] = job->out_strength[i] > 0 ? 1.0 / job->out_strength[i] : 0.0;
		if (job->new_to_old != NULL)
			job->new_to_old[i] = job->old_to_new[i] = (int32_t) i;
	}
}

/*
 * The private order on the host: nodes by out-degree, in natural ids, hubs first (the shared-
 * memory tiles' columns of the largest out-degrees, the rest in natural ids) or depth-first
 * over the in-edges (locality); 1/out_strength in
 * that order, the pull CSR (the graph's own arrays where they already are in that order) and the
 * push CSR when asked for.
 */
static PrStatus
plan_private_order(GpuEngine *e, const PrGraph *g, PrGpuOrder order, unsigned needs, HostPlans *h,
				   PrError *err)
{
	const PrAllocator *a = &pr_malloc_allocator;
	int64_t		n = g->n_nodes;
	/* graph_order: the graph's ids are the order by out-degree already (see PrGpuOptions) */
	bool		natural = order == PR_GPU_ORDER_NATURAL ||
		(e->opt.graph_order && order != PR_GPU_ORDER_LOCALITY);
	bool		by_key = !natural && (order == PR_GPU_ORDER_DEGREE || order == PR_GPU_ORDER_HUBS);
	PrPlanCsr	in_view;
	PrStatus	st = PR_OK;

	h->order = order;
	h->identity = natural;
	h->new_to_old = (int32_t *) malloc((size_t) (n + 1) * 4);
	h->old_to_new = (int32_t *) malloc((size_t) (n + 1) * 4);
	h->key = (int64_t *) calloc((size_t) (n + 1), 8);
	h->inv_out = (double *) malloc((size_t) (n + 1) * 8);
	if (!h->new_to_old || !h->old_to_new || !h->key || !h->inv_out)
		return pr_error_set(err, PR_ERR_NOMEM, "GPU engine: out of host memory");
	pr_plan_set_threads(e->bench.plan_threads);
	memset(&in_view, 0, sizeof(in_view));
	in_view.n = n;
	in_view.nnz = g->n_edges;
	in_view.ptr = (int64_t *) g->in_ptr;
	in_view.col = (int32_t *) g->in_src;
	if (by_key)
	{
		/* out-degrees = column counts of the in-edge CSR (parallel), for the order only */
		st = pr_plan_column_degrees(&in_view, h->key, err);
		if (st == PR_OK && order == PR_GPU_ORDER_HUBS)
		{
			int64_t		hubs = 0;

			st = pr_plan_hubs_first_keys(n, h->key, (int64_t) PR_GPU_HUB_TILES * e->smem_width, &hubs, err);
		}
		if (st != PR_OK)
			return st;
	}
	{
		HostArraysJob job = {n, g->out_strength, h->inv_out, natural ? h->new_to_old : NULL,
							 natural ? h->old_to_new : NULL};

		/* fresh arrays of n entries: their page faults are the cost, taken by several threads */
		pr_parallel_run(host_arrays_part, &job, pr_thread_count(0, 16));
	}
	if (by_key)
		st = pr_plan_degree_order(n, h->key, h->new_to_old, h->old_to_new, a, err);
	else if (order == PR_GPU_ORDER_LOCALITY)
		st = pr_plan_locality_order(&in_view, h->new_to_old, h->old_to_new, err);
	if (st == PR_OK && natural && g->in_weight == NULL)
	{
		/*
		 * natural ids, no values: the graph's in-rows already list their sources ascending, which
		 * is what the identity relabel would produce, so the plans read the graph's own arrays
		 * (read only) instead of a sorted copy (the quick layout of a large cached graph)
		 */
		h->pull.n = n;
		h->pull.nnz = g->n_edges;
		h->pull.ptr = (int64_t *) g->in_ptr;
		h->pull.col = (int32_t *) g->in_src;
		h->pull_borrowed = true;
	}
	else if (st == PR_OK)
		st = pr_plan_relabel(n, g->in_ptr, g->in_src, g->in_weight, h->old_to_new, a, &h->pull, err);
	if (st == PR_OK && (needs & PR_NEED_PUSH))
		st = pr_plan_transpose(&h->pull, a, &h->push, err);
	if (st != PR_OK)
		return st;
	/* inv_out in the private order (natural ids: it is already) */
	if (!natural)
	{
		double	   *tmp = (double *) malloc((size_t) (n + 1) * 8);

		if (tmp == NULL)
			return pr_error_set(err, PR_ERR_NOMEM, "GPU engine: out of host memory");
		for (int64_t i = 0; i < n; i++)
			tmp[i] = h->inv_out[h->new_to_old[i]];
		free(h->inv_out);
		h->inv_out = tmp;
	}
	return PR_OK;
}

/* Shared-memory tiles: their width, the kernels' opt-in limit and their grid on the device. */
static PrStatus
setup_smem_tiles(GpuEngine *e, PrError *err)
{
	e->smem_width = e->bench.smem_width > 0 ? e->bench.smem_width : (e->fp64 ? 24576 : 49152);
	if (e->smem_width >= 65535)
		e->smem_width = 65534;
	return pr_tiled_smem_setup(e->opt.device, e->fp64, e->smem_width, &e->smem_grid, err);
}

/* A layout of the given order and format with no plan yet. */
static void
layout_init(GpuEngine *e, int k, PrGpuOrder order, PrGpuKernel kernel, PullLayout *lay)
{
	memset(lay, 0, sizeof(*lay));
	lay->order = order;
	lay->kernel = kernel;
	lay->predicted = -1;
	lay->measured = -1;
	/* rows longer than this are cut into chunks; SpMM's warps cover fewer entries at a time */
	lay->bin_chunk = e->bench.chunk > 0 ? e->bench.chunk : k > 1 ? PR_SPMM_CHUNK : 4096;
}

/*
 * The model's choice among the composite layouts (and the binned CSR when allow_binned) over the
 * order's pull CSR: *lay the choice; *runner_up the composite predicted next (kernel AUTO when
 * there is none); *best_composite, when the binned CSR won, the composite predicted fastest.
 */
static PrStatus
model_choice(GpuEngine *e, const HostPlans *h, bool allow_binned, PullLayout *lay, PullLayout *runner_up,
			 PullLayout *best_composite, PrError *err)
{
	PrPlanChoice choice;
	PrStatus	st;

	pr_plan_choice_init(&choice, e->n);
	choice.composite.tile_width = e->bench.tile_width > 0 ? e->bench.tile_width : e->n;
	choice.composite.chunk = e->bench.chunk > 0 ? e->bench.chunk : 4096;
	choice.composite.smem_width = e->smem_width;
	if (e->bench.n_smem_tiles >= 0)
	{
		choice.n_smem_counts = 1;
		choice.smem_counts[0] = e->bench.n_smem_tiles;
	}
	if (e->bench.vec_threshold > 0)
	{
		choice.n_thresholds = 1;
		choice.thresholds[0] = e->bench.vec_threshold;
	}
	choice.compact_mode = e->bench.compact_partials;
	choice.allow_binned = allow_binned;
	choice.binned_chunk = e->bench.chunk > 0 ? e->bench.chunk : 4096;
	st = pr_plan_choose(&h->pull, e->have_model ? &e->model : NULL, &choice, &lay->predicted, lay->cand,
						sizeof(lay->cand), &lay->n_cand, &pr_malloc_allocator, err);
	if (st != PR_OK)
		return st;
	lay->kernel = choice.binned ? PR_GPU_KERNEL_BINNED : PR_GPU_KERNEL_TILED;
	lay->copt = choice.composite;
	if (runner_up != NULL)
	{
		*runner_up = *lay;
		runner_up->kernel = PR_GPU_KERNEL_AUTO;
		runner_up->cand[0] = '\0';
		if (choice.have_runner_up)
		{
			runner_up->kernel = PR_GPU_KERNEL_TILED;
			runner_up->copt = choice.runner_up;
			runner_up->predicted = choice.runner_up_ms;
		}
	}
	if (best_composite != NULL)
	{
		*best_composite = *lay;
		best_composite->kernel = choice.binned ? PR_GPU_KERNEL_TILED : PR_GPU_KERNEL_AUTO;
		best_composite->cand[0] = '\0';
		best_composite->predicted = -1;
	}
	return PR_OK;
}

/*
 * The pull matrix's layout for one explicit choice: the binned CSR for k > 1 (the SpMM runs over
 * it), the format the options name in their order, or (auto without timing, tiled) the model's
 * choice in degree order.
 */
static PrStatus
choose_pull_layout(GpuEngine *e, const HostPlans *h, int k, PullLayout *lay, PrError *err)
{
	PrStatus	st = PR_OK;

	layout_init(e, k, h->order, e->opt.kernel, lay);
	if (k > 1 && lay->kernel != PR_GPU_KERNEL_BINNED)
		lay->kernel = PR_GPU_KERNEL_BINNED; /* SpMM runs over the CSR */
	if (lay->kernel == PR_GPU_KERNEL_AUTO || lay->kernel == PR_GPU_KERNEL_TILED)
		st = model_choice(e, h, lay->kernel == PR_GPU_KERNEL_AUTO, lay, NULL, NULL, err);
	name_layout(lay);
	return st;
}

/* Segments for ALIGNED_COO: the threads the device keeps resident. */
static int64_t
resident_threads(GpuEngine *e)
{
	int			sms = 0,
				per_sm = 0;

	if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, e->opt.device) != cudaSuccess ||
		cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, e->opt.device) != cudaSuccess)
	{
		cudaGetLastError();
		return 0;
	}
	return (int64_t) sms * per_sm;
}

/*
 * The host plan of a pull layout: the composite (tiled), the binned CSR (binned, and the raw
 * product of the cuSPARSE mode), or ALIGNED_COO, with the model's time of a binned product where
 * it is cheap.
 */
static PrStatus
plan_pull_layout(GpuEngine *e, HostPlans *h, PullLayout *lay, unsigned needs, bool predict_binned, PrError *err)
{
	PrStatus	st = PR_OK;

	free_pull_plan(h);
	if (lay->kernel == PR_GPU_KERNEL_TILED)
		st = pr_plan_composite(&h->pull, &lay->copt, &pr_malloc_allocator, &h->comp, err);
	if (lay->kernel == PR_GPU_KERNEL_ROW_BLOCKS)
		st = pr_plan_row_blocks(&h->pull, &pr_malloc_allocator, &h->rowb, err);
	if (lay->kernel == PR_GPU_KERNEL_ALIGNED_COO)
	{
		PrAlignedCooOptions o;

		pr_plan_aligned_coo_options_init(&o, resident_threads(e));
		st = pr_plan_aligned_coo(&h->pull, &o, &pr_malloc_allocator, &h->acoo, err);
	}
	if (st == PR_OK && (lay->kernel == PR_GPU_KERNEL_BINNED ||
						(lay->kernel == PR_GPU_KERNEL_CUSPARSE && (needs & PR_NEED_PULL))))
	{
		st = pr_plan_binned(&h->pull, lay->bin_chunk, &pr_malloc_allocator, &h->bin_pull, err);
		/* the model's figure reads every entry (~1 s at 263 M edges): not for the quick layout
		 * (natural ids), whose point is to be ready soon */
		if (st == PR_OK && predict_binned && lay->kernel == PR_GPU_KERNEL_BINNED && e->have_model && lay->predicted < 0)
			lay->predicted = pr_model_predict_binned(&e->model, &h->bin_pull, &h->pull) * 1e3;
	}
	return st;
}

/* Device bytes of the vectors: slots, z, staging, the order and 1/out_strength, the restart, the
 * device top-k's scratch, the reductions' partials and statistics. */
static size_t
vector_bytes(const GpuEngine *e, int64_t n, int k, int n_slots)
{
	return pr_residency_vector_bytes(n, k, n_slots, e->elem);
}

/* Device bytes of a planned pull layout (with the raw binned CSR of the cuSPARSE mode). */
static size_t
pull_layout_bytes(const GpuEngine *e, const HostPlans *h, const PullLayout *lay, int64_t n_edges)
{
	size_t		bytes = 0;

	if (lay->kernel == PR_GPU_KERNEL_TILED)
		bytes += h->comp.device_bytes + (size_t) h->comp.n_part * (e->elem - sizeof(float));
	if (lay->kernel == PR_GPU_KERNEL_ALIGNED_COO)
		bytes += h->acoo.device_bytes + (size_t) h->acoo.n_seg * 2 * (e->elem - sizeof(float));
	if (lay->kernel == PR_GPU_KERNEL_ROW_BLOCKS)
		bytes += h->rowb.device_bytes + (size_t) h->rowb.n_chunks * (e->elem - sizeof(float));
	if (lay->kernel == PR_GPU_KERNEL_BINNED || lay->kernel == PR_GPU_KERNEL_CUSPARSE)
		bytes += h->bin_pull.device_bytes;	/* 0 when not planned */
	if (lay->kernel == PR_GPU_KERNEL_CUSPARSE)
		bytes += (size_t) (e->n + 1) * 8 + (size_t) n_edges * (4 + e->elem) + ((size_t) 64 << 20);
	return bytes;
}

/* Fails with a message when `more` bytes beyond what the engine holds do not fit the device's free
 * memory (less 256 MiB) or the memory budget. */
static PrStatus
check_device_memory(GpuEngine *e, size_t more, PrError *err)
{
	size_t		free_b = 0,
				total_b = 0,
				need = e->report.total_bytes + more;

	PR_CUDA(cudaMemGetInfo(&free_b, &total_b));
	if (more + ((size_t) 256 << 20) > free_b ||
		(e->opt.memory_budget > 0 && need > e->opt.memory_budget))
		return pr_error_set(err, PR_ERR_NOMEM,
							"GPU engine: the graph needs %.1f MiB of device memory; %.1f MiB are free%s",
							need / 1048576.0, (free_b + e->report.total_bytes) / 1048576.0,
							e->opt.memory_budget > 0 ? " (or over the memory budget)" : "");
	return PR_OK;
}

/* The vectors on the device: slots (cleared) and their statistics, z (cleared), staging, the
 * reductions' partials and counter. */
static PrStatus
alloc_vectors(GpuEngine *e, int n_slots, PrError *err)
{
	int64_t		n = e->n;
	int			k = e->k;
	PrStatus	st = grow_slots(e, n_slots, err);

	if (st == PR_OK && (st = gpu_dev_alloc(e, &e->z, (size_t) (n + PR_VECTOR_SPARE_ROWS) * k * e->elem, err)) == PR_OK)
		if (cudaMemsetAsync(e->z, 0, (size_t) (n + PR_VECTOR_SPARE_ROWS) * k * e->elem, e->stream) != cudaSuccess)
			st = pr_error_set(err, PR_ERR_ENGINE, "GPU engine: cudaMemsetAsync failed");
	if (st == PR_OK)
		st = gpu_dev_alloc(e, (void **) &e->stage, (size_t) n * k * 8, err);
	if (st == PR_OK)
		st = gpu_dev_alloc(e, (void **) &e->partials, (size_t) PR_RED_BLOCKS * k * PR_COMBINE_MAX_TERMS * 8, err);
	if (st == PR_OK && (st = gpu_dev_alloc(e, (void **) &e->counter, 64, err)) == PR_OK)
		if (cudaMemset(e->counter, 0, 64) != cudaSuccess)
			st = pr_error_set(err, PR_ERR_ENGINE, "GPU engine: cudaMemset failed");
	return st;
}

/* 1/out_strength of an order on the device, in the vectors' precision (allocated once, rewritten
 * for another order). */
static PrStatus
upload_inv_out(GpuEngine *e, const HostPlans *h, PrError *err)
{
	int64_t		n = e->n;
	PrStatus	st = PR_OK;

	if (e->inv_out == NULL && (st = gpu_dev_alloc(e, &e->inv_out, (size_t) (n + 1) * e->elem, err)) != PR_OK)
		return st;
	if (e->fp64)
		PR_CUDA(cudaMemcpy(e->inv_out, h->inv_out, (size_t) n * 8, cudaMemcpyHostToDevice));
	else
	{
		float	   *f = (float *) malloc((size_t) (n + 1) * 4);

		if (f == NULL)
			return pr_error_set(err, PR_ERR_NOMEM, "GPU engine: out of host memory");
		for (int64_t i = 0; i < n; i++)
			f[i] = (float) h->inv_out[i];
		if (cudaMemcpy(e->inv_out, f, (size_t) n * 4, cudaMemcpyHostToDevice) != cudaSuccess)
			st = pr_error_set(err, PR_ERR_ENGINE, "GPU engine: cudaMemcpy failed: %s", cudaGetErrorString(cudaGetLastError()));
		free(f);
	}
	return st;
}

/* The chosen order on the device: its node ids and 1/out_strength; the host's old_to_new is kept
 * for the restart scatter (taken from h); natural_order says whether the order is the graph's own. */
static PrStatus
upload_order(GpuEngine *e, HostPlans *h, PrError *err)
{
	PrStatus	st = upload_inv_out(e, h, err);

	if (st == PR_OK)
		st = gpu_dev_upload(e, (void **) &e->new_to_old, h->new_to_old, (size_t) e->n * 4, err);
	if (st == PR_OK)
	{
		free(e->old_to_new_host);
		e->old_to_new_host = h->old_to_new;
		h->old_to_new = NULL;
		e->natural_order = h->identity;
	}
	return st;
}

/* Uploads a planned pull layout into pull (and the cuSPARSE mode's raw binned CSR into pull_raw);
 * gpu_matrix_free frees each on its own. */
static PrStatus
upload_pull_layout(GpuEngine *e, const HostPlans *h, const PullLayout *lay, GpuMatrix *pull,
				   GpuMatrix *pull_raw, PrError *err)
{
	PrStatus	st = PR_OK;

	if (lay->kernel == PR_GPU_KERNEL_TILED)
		st = gpu_matrix_upload_tiled(e, &h->comp, pull, err);
	if (lay->kernel == PR_GPU_KERNEL_BINNED)
		st = gpu_matrix_upload_binned(e, &h->pull, &h->bin_pull, pull, err);
	if (lay->kernel == PR_GPU_KERNEL_ALIGNED_COO)
		st = gpu_matrix_upload_aligned_coo(e, &h->acoo, pull, err);
	if (lay->kernel == PR_GPU_KERNEL_ROW_BLOCKS)
		st = gpu_matrix_upload_row_blocks(e, &h->pull, &h->rowb, pull, err);
	if (lay->kernel == PR_GPU_KERNEL_CUSPARSE)
	{
		st = gpu_matrix_upload_cusparse(e, &h->pull, h->inv_out, pull, err);
		if (st == PR_OK && h->bin_pull.rows != NULL)
			st = gpu_matrix_upload_binned(e, &h->pull, &h->bin_pull, pull_raw, err);
	}
	return st;
}

/*
 * Times one-column products over a pull matrix as an iteration runs them (z = x / out_strength,
 * then y = M z; cuSPARSE reads x): one warm-up product, then reps timed with CUDA events on the
 * engine's stream; *ms = the fastest (the least disturbed by other work on the device).
 */
template <typename T>
static PrStatus
time_pull_layout_typed(GpuEngine *e, GpuMatrix *mat, int reps, double *ms, PrError *err)
{
	cudaEvent_t start = NULL,
				stop = NULL;
	const T    *x = (const T *) e->slots[0];
	T		   *y = (T *) e->stage;
	PrStatus	st = PR_OK;
	float		best = -1;

	if (cudaEventCreate(&start) != cudaSuccess || cudaEventCreate(&stop) != cudaSuccess)
		st = pr_error_set(err, PR_ERR_ENGINE, "GPU engine: cudaEventCreate failed");
	for (int r = -1; st == PR_OK && r < reps; r++)
	{
		const void *in = x;
		float		elapsed = 0;

		if (cudaEventRecord(start, e->stream) != cudaSuccess)
		{
			st = pr_error_set(err, PR_ERR_ENGINE, "GPU engine: cudaEventRecord failed");
			break;
		}
		if (mat->kind != MATRIX_CUSPARSE)
		{
			k_scale<T><<<pr_grid_blocks(e->n, PR_THREADS, 132 * 16), PR_THREADS, 0, e->stream>>>(
				e->n, 1, x, (const T *) e->inv_out, false, (T *) e->z);
			in = e->z;
		}
		if ((st = gpu_matrix_run<T>(e, mat, in, y, err)) != PR_OK)
			break;
		if (cudaEventRecord(stop, e->stream) != cudaSuccess || cudaEventSynchronize(stop) != cudaSuccess ||
			cudaEventElapsedTime(&elapsed, start, stop) != cudaSuccess)
			st = pr_error_set(err, PR_ERR_ENGINE, "GPU engine: timing a layout failed: %s",
							  cudaGetErrorString(cudaGetLastError()));
		else if (r >= 0 && (best < 0 || elapsed < best))
			best = elapsed;
	}
	if (start != NULL)
		cudaEventDestroy(start);
	if (stop != NULL)
		cudaEventDestroy(stop);
	e->z_owner = -1;
	*ms = best;
	return st;
}

/* time_pull_layout_typed in the engine's precision. */
static PrStatus
time_pull_layout(GpuEngine *e, GpuMatrix *mat, int reps, double *ms, PrError *err)
{
	return e->fp64 ? time_pull_layout_typed<double>(e, mat, reps, ms, err)
		: time_pull_layout_typed<float>(e, mat, reps, ms, err);
}

/* How long prepare's parts took (seconds). */
struct PrepareTimes
{
	double		start;			/* clock at the start */
	double		planned;		/* clock when the host plans were made */
	double		host;			/* the private order on the host */
	double		smem_setup;		/* the shared-memory tiles' setup */
};

/* The report's description of the pull layout: engine, format, the planner's figures. */
static void
report_layout(GpuEngine *e, const PrGraph *g, const HostPlans *h, const PullLayout *lay)
{
	PrGpuReport *r = &e->report;
	PrGpuKernel kernel = lay->kernel;
	const char *order = lay->order == PR_GPU_ORDER_DEGREE ? ", degree-ordered ids" :
		lay->order == PR_GPU_ORDER_HUBS ? ", hubs first then natural ids" :
		lay->order == PR_GPU_ORDER_LOCALITY ? ", depth-first (locality) ids" : ", natural ids";

	snprintf(r->engine, sizeof(r->engine), "%s",
			 kernel == PR_GPU_KERNEL_TILED ? "gpu-tiled" : kernel == PR_GPU_KERNEL_BINNED ?
			 (e->k > 1 ? "gpu-spmm" : "gpu-binned") : kernel == PR_GPU_KERNEL_ALIGNED_COO ? "gpu-aligned-coo" :
			 kernel == PR_GPU_KERNEL_ROW_BLOCKS ? "gpu-row-blocks" : "gpu-cusparse");
	r->predicted_ms = lay->predicted;
	r->n_candidates = lay->n_cand;
	memcpy(r->candidates, lay->cand, sizeof(r->candidates));
	r->candidates[sizeof(r->candidates) - 1] = '\0';
	r->n_tiles = 0;
	r->padding = 0;
	r->tile_width = 0;
	r->vec_threshold = 0;
	r->n_smem_tiles = 0;
	r->smem_width = 0;
	if (kernel == PR_GPU_KERNEL_TILED)
	{
		const PrComposite *c = &h->comp;
		int			n_smem = c->options.n_smem_tiles < c->n_tiles ? c->options.n_smem_tiles : c->n_tiles;

		r->n_tiles = c->n_tiles;
		r->tile_width = c->options.tile_width;
		r->vec_threshold = c->options.vec_threshold;
		r->n_smem_tiles = c->options.n_smem_tiles;
		r->smem_width = c->options.smem_width;
		r->padding = c->padding;
		snprintf(r->format, sizeof(r->format),
				 "tile-composite: %d smem tile(s) of %lld cols (16-bit ids) + %d L2 tile(s), CSR-vector rows >= %d, ELL padding %.1f%%%s%s",
				 n_smem, (long long) c->options.smem_width, c->n_tiles - n_smem, c->options.vec_threshold,
				 g->n_edges > 0 ? 100.0 * c->padding / g->n_edges : 0.0, order,
				 c->options.compact ? ", compact partials + merge" : "");
	}
	else if (kernel == PR_GPU_KERNEL_BINNED)
		snprintf(r->format, sizeof(r->format), "%s CSR, %lld long rows chunked%s",
				 e->k > 1 ? "SpMM over" : "row-binned", (long long) h->bin_pull.longs.n_long, order);
	else if (kernel == PR_GPU_KERNEL_ROW_BLOCKS)
		snprintf(r->format, sizeof(r->format), "row blocks: %lld blocks of up to %d entries, %lld long rows chunked%s",
				 (long long) h->rowb.n_blocks, PR_ROW_BLOCK_CAP, (long long) h->rowb.longs.n_long, order);
	else if (kernel == PR_GPU_KERNEL_ALIGNED_COO)
		snprintf(r->format, sizeof(r->format), "ALIGNED_COO: %lld segments of %lld entries, %lld rows across segments%s",
				 (long long) h->acoo.n_seg, (long long) h->acoo.seg_len, (long long) h->acoo.n_split, order);
	else
		snprintf(r->format, sizeof(r->format), "cusparseSpMV CSR with values%s", order);
}

/* The rest of the report: device, sizes, times, bytes. */
static void
write_report(GpuEngine *e, const PrGraph *g, const PrepareTimes *times, size_t need)
{
	PrGpuReport *r = &e->report;
	cudaDeviceProp prop;

	if (cudaGetDeviceProperties(&prop, e->opt.device) == cudaSuccess)
	{
		size_t		len = strnlen(prop.name, sizeof(r->device) - 1);

		memcpy(r->device, prop.name, len);
		r->device[len] = '\0';
	}
	r->n_nodes = e->n;
	r->n_edges = g->n_edges;
	r->matrix_bytes = e->streamer != NULL ? e->streamer->device_bytes : e->pull.bytes;
	snprintf(r->residency, sizeof(r->residency), "%s", e->streamer != NULL ? "streamed" : "resident");
	r->bytes_per_edge = g->n_edges > 0 ? (double) r->matrix_bytes / (double) g->n_edges : 0.0;
	r->plan_seconds = times->planned - times->start;
	r->host_seconds = times->host;
	r->smem_setup_seconds = times->smem_setup;
	r->upload_seconds = pr_clock_seconds() - times->planned;
	r->total_bytes = need;
}

/* Remembers what the device layout was built from, to reuse it when prepare sees the same graph. */
static void
finish_prepare(GpuEngine *e, const PrGraph *g)
{
	e->prepared = true;
	e->ops.name = e->report.engine;
	e->prep_graph = g;
	e->prep_in_ptr = g->in_ptr;
	e->prep_in_src = g->in_src;
	e->prep_edges = g->n_edges;
}

/* The push CSR of the chosen order and its row bins, on the device (HITS). */
static PrStatus
upload_push(GpuEngine *e, HostPlans *h, int bin_chunk, size_t *bytes, PrError *err)
{
	PrStatus	st = PR_OK;

	if (h->push.ptr == NULL)
		st = pr_plan_transpose(&h->pull, &pr_malloc_allocator, &h->push, err);
	if (st == PR_OK)
		st = pr_plan_binned(&h->push, bin_chunk, &pr_malloc_allocator, &h->bin_push, err);
	if (st == PR_OK)
	{
		*bytes = h->bin_push.device_bytes;
		st = check_device_memory(e, *bytes, err);
	}
	if (st == PR_OK)
		st = gpu_matrix_upload_binned(e, &h->push, &h->bin_push, &e->push, err);
	return st;
}

/* ---- one layout: an explicit kernel, k > 1, or auto without timing ---- */

/* Plans the one layout on the host, checks device memory, uploads vectors, order and layout. */
static PrStatus
prepare_single(GpuEngine *e, const PrGraph *g, int k, int n_slots, unsigned needs, HostPlans *h,
			   PrepareTimes *times, size_t *need, PrError *err)
{
	PrGpuOrder order = e->opt.kernel == PR_GPU_KERNEL_AUTO ? PR_GPU_ORDER_DEGREE : e->opt.order;
	PullLayout	lay;
	size_t		push_bytes = 0;
	PrStatus	st = plan_private_order(e, g, order, 0, h, err);

	times->host = pr_clock_seconds() - times->start - times->smem_setup;
	if (st == PR_OK)
		st = choose_pull_layout(e, h, k, &lay, err);
	if (st == PR_OK)
		st = plan_pull_layout(e, h, &lay, needs, order != PR_GPU_ORDER_NATURAL, err);
	times->planned = pr_clock_seconds();
	if (st != PR_OK)
		return st;
	*need = vector_bytes(e, g->n_nodes, k, n_slots) + pull_layout_bytes(e, h, &lay, g->n_edges);
	if ((st = check_device_memory(e, *need, err)) != PR_OK ||
		(st = alloc_vectors(e, n_slots, err)) != PR_OK ||
		(st = upload_order(e, h, err)) != PR_OK ||
		(st = upload_pull_layout(e, h, &lay, &e->pull, &e->pull_raw, err)) != PR_OK)
		return st;
	report_layout(e, g, h, &lay);
	if ((needs & PR_NEED_PUSH) && (st = upload_push(e, h, lay.bin_chunk, &push_bytes, err)) != PR_OK)
		return st;
	*need += push_bytes;
	return PR_OK;
}

/* ---- the measured choice (auto, one column) ---- */

/* The candidates of one order, in the order they are timed. */
static int
order_candidates(GpuEngine *e, const HostPlans *h, unsigned needs, PullLayout *out, PrError *err,
				 PrStatus *st)
{
	int			n = 0;
	bool		cusparse_ok = !(needs & PR_NEED_PULL);	/* else it needs a second, raw CSR */
	PullLayout	best,
				runner_up,
				best_composite;

	*st = PR_OK;
	if (h->order == PR_GPU_ORDER_LOCALITY)
	{
		layout_init(e, 1, h->order, PR_GPU_KERNEL_ROW_BLOCKS, &out[n++]);
		return n;
	}
	if (h->order == PR_GPU_ORDER_NATURAL)
	{
		layout_init(e, 1, h->order, PR_GPU_KERNEL_ROW_BLOCKS, &out[n++]);
		layout_init(e, 1, h->order, PR_GPU_KERNEL_ALIGNED_COO, &out[n++]);
		layout_init(e, 1, h->order, PR_GPU_KERNEL_BINNED, &out[n++]);
		if (cusparse_ok)
			layout_init(e, 1, h->order, PR_GPU_KERNEL_CUSPARSE, &out[n++]);
		return n;
	}
	layout_init(e, 1, h->order, PR_GPU_KERNEL_AUTO, &best);
	*st = model_choice(e, h, h->order == PR_GPU_ORDER_DEGREE, &best, &runner_up, &best_composite, err);
	if (*st != PR_OK)
		return 0;
	out[n++] = best;
	if (best_composite.kernel != PR_GPU_KERNEL_AUTO)
		out[n++] = best_composite;
	if (runner_up.kernel != PR_GPU_KERNEL_AUTO)
		out[n++] = runner_up;
	if (h->order == PR_GPU_ORDER_DEGREE && cusparse_ok)
		layout_init(e, 1, h->order, PR_GPU_KERNEL_CUSPARSE, &out[n++]);
	if (h->order == PR_GPU_ORDER_HUBS)
		layout_init(e, 1, h->order, PR_GPU_KERNEL_ROW_BLOCKS, &out[n++]);
	return n;
}

/* Appends "name=measured/predicted " to the report's list of timed candidates. */
static void
note_measured(GpuEngine *e, const PullLayout *lay, const char *why)
{
	char	   *list = e->report.measured;
	size_t		used = strlen(list);

	if (why != NULL)
		snprintf(list + used, sizeof(e->report.measured) - used, "%s=%s ", lay->name, why);
	else
		snprintf(list + used, sizeof(e->report.measured) - used, "%s=%.3f/%.3f ", lay->name,
				 lay->measured, lay->predicted);
}

/*
 * Times every candidate of every order and keeps the fastest in e->pull (e->pull_raw), its order's
 * host arrays in hp[*best_index].  A candidate that cannot be planned or does not fit is skipped
 * (noted in the report); prepare fails only when none could be timed.
 */
static PrStatus
measure_candidates(GpuEngine *e, const PrGraph *g, unsigned needs, HostPlans hp[N_MEASURED_ORDERS],
				   int *best_index, PrError *err)
{
	const PrGpuOrder orders[N_MEASURED_ORDERS] = {PR_GPU_ORDER_NATURAL, PR_GPU_ORDER_DEGREE,
		PR_GPU_ORDER_HUBS, PR_GPU_ORDER_LOCALITY};
	PullLayout	best,
				second;
	bool		inv_uploaded = false;
	PrError		skip_err;
	PrStatus	st = PR_OK;

	memset(&skip_err, 0, sizeof(skip_err));
	layout_init(e, 1, PR_GPU_ORDER_DEGREE, PR_GPU_KERNEL_AUTO, &best);
	layout_init(e, 1, PR_GPU_ORDER_DEGREE, PR_GPU_KERNEL_AUTO, &second);
	*best_index = -1;
	for (int oi = 0; oi < N_MEASURED_ORDERS && st == PR_OK; oi++)
	{
		PullLayout	cands[8];
		int			n_cands;

		if (e->opt.graph_order && orders[oi] == PR_GPU_ORDER_LOCALITY)
			continue;			/* the one order that would not keep the graph's ids */

		if ((st = plan_private_order(e, g, orders[oi], 0, &hp[oi], err)) != PR_OK)
			break;
		if (!inv_uploaded && (st = upload_inv_out(e, &hp[oi], err)) != PR_OK)
			break;				/* any order's values: the timing does not depend on them */
		inv_uploaded = true;
		n_cands = order_candidates(e, &hp[oi], needs, cands, err, &st);
		for (int c = 0; c < n_cands && st == PR_OK; c++)
		{
			PullLayout *lay = &cands[c];
			GpuMatrix	pull = GpuMatrix(),
						pull_raw = GpuMatrix();
			PrStatus	cst;

			name_layout(lay);
			cst = plan_pull_layout(e, &hp[oi], lay, needs, false, &skip_err);
			if (cst == PR_OK)
				cst = check_device_memory(e, pull_layout_bytes(e, &hp[oi], lay, g->n_edges), &skip_err);
			if (cst == PR_OK)
			{
				cst = upload_pull_layout(e, &hp[oi], lay, &pull, &pull_raw, &skip_err);
				if (cst == PR_OK)
					cst = time_pull_layout(e, &pull, e->bench.measure_reps, &lay->measured, &skip_err);
			}
			if (cst == PR_ERR_ENGINE)
			{
				/* the device failed, not the candidate: give up */
				gpu_matrix_free(&pull);
				gpu_matrix_free(&pull_raw);
				*err = skip_err;
				st = cst;
				break;
			}
			if (cst != PR_OK)
			{
				note_measured(e, lay, cst == PR_ERR_NOMEM ? "no-memory" : "skipped");
				gpu_matrix_free(&pull);
				gpu_matrix_free(&pull_raw);
				free_pull_plan(&hp[oi]);
				continue;
			}
			note_measured(e, lay, NULL);
			if (best.measured < 0 || lay->measured < best.measured)
			{
				second = best;
				best = *lay;
				std::swap(e->pull, pull);
				std::swap(e->pull_raw, pull_raw);
				report_layout(e, g, &hp[oi], lay);
				if (*best_index >= 0 && *best_index != oi)
					host_plans_free(&hp[*best_index]);
				*best_index = oi;
			}
			else if (second.measured < 0 || lay->measured < second.measured)
				second = *lay;
			gpu_matrix_free(&pull);
			gpu_matrix_free(&pull_raw);
			free_pull_plan(&hp[oi]);
		}
		if (*best_index != oi)
			host_plans_free(&hp[oi]);
	}
	if (st == PR_OK && *best_index < 0)
		return pr_error_set(err, skip_err.status != PR_OK ? skip_err.status : PR_ERR_NOMEM,
							"GPU engine: no candidate layout could be prepared (%s)", skip_err.message);
	if (st != PR_OK)
		return st;
	snprintf(e->report.layout, sizeof(e->report.layout), "%s", best.name);
	e->report.measured_ms = best.measured;
	snprintf(e->report.runner_up, sizeof(e->report.runner_up), "%s", second.measured >= 0 ? second.name : "");
	e->report.runner_up_ms = second.measured;
	e->report.runner_up_predicted_ms = second.predicted;
	return PR_OK;
}

/* The measured choice, then the chosen order and the push CSR on the device. */
static PrStatus
prepare_measured(GpuEngine *e, const PrGraph *g, int n_slots, unsigned needs, PrepareTimes *times,
				 size_t *need, PrError *err)
{
	HostPlans	hp[N_MEASURED_ORDERS];
	int			best_index = -1;
	size_t		push_bytes = 0;
	PrStatus	st;

	memset(hp, 0, sizeof(hp));
	*need = vector_bytes(e, g->n_nodes, 1, n_slots);
	times->host = 0;
	if ((st = check_device_memory(e, *need, err)) == PR_OK &&
		(st = alloc_vectors(e, n_slots, err)) == PR_OK)
		st = measure_candidates(e, g, needs, hp, &best_index, err);
	times->planned = pr_clock_seconds();
	if (st == PR_OK)
	{
		HostPlans  *h = &hp[best_index];

		*need += e->pull.bytes + e->pull_raw.bytes;
		st = upload_order(e, h, err);
		if (st == PR_OK && (needs & PR_NEED_PUSH))
			st = upload_push(e, h, e->bench.chunk > 0 ? e->bench.chunk : 4096, &push_bytes, err);
		*need += push_bytes;
	}
	for (int i = 0; i < N_MEASURED_ORDERS; i++)
		host_plans_free(&hp[i]);
	return st;
}

/* ---- the streamed matrices: natural ids, the CSRs left in host memory ---- */

/* The report of the streamed matrices: engine, format, blocks, bytes per product, copy mode. */
static void
report_streamed(GpuEngine *e)
{
	PrGpuReport *r = &e->report;
	const GpuStreamer *s = e->streamer;
	double		mb = s->pull.copy_bytes / 1e6;

	snprintf(r->engine, sizeof(r->engine), "gpu-streamed");
	snprintf(r->stream_mode, sizeof(r->stream_mode), "%s", gpu_streamed_mode_name(s->mode));
	r->stream_blocks = s->pull.n_blocks;
	r->stream_push_blocks = s->has_push ? s->push.n_blocks : 0;
	r->stream_bytes = s->pull.copy_bytes;
	r->stream_push_bytes = s->has_push ? s->push.copy_bytes : 0;
	r->stream_buffer_bytes = s->buffer_bytes;
	r->stream_host_bytes = s->mode == STREAM_REGISTERED ? s->registered_bytes :
		s->mode == STREAM_STAGED ? 2 * s->buffer_bytes : 0;
	r->predicted_ms = s->pull.predicted_ms;
	if (s->has_push)
		snprintf(r->format, sizeof(r->format),
				 "streamed from %s%s host memory: pull %lld blocks (%.1f MB a product), push %lld blocks (%.1f MB), 2 buffers of %.1f MB, %s, natural ids",
				 gpu_streamed_mode_name(s->mode), s->mode == STREAM_REGISTERED && s->read_only ? " (read-only)" : "",
				 (long long) s->pull.n_blocks, mb, (long long) s->push.n_blocks, s->push.copy_bytes / 1e6,
				 s->buffer_bytes / 1e6, s->pull.val != NULL ? "double weights" : "no values");
	else
		snprintf(r->format, sizeof(r->format),
				 "streamed from %s%s host memory: %lld blocks, %.1f MB a product, 2 buffers of %.1f MB, %s, natural ids",
				 gpu_streamed_mode_name(s->mode), s->mode == STREAM_REGISTERED && s->read_only ? " (read-only)" : "",
				 (long long) s->pull.n_blocks, mb, s->buffer_bytes / 1e6,
				 s->pull.val != NULL ? "double weights" : "no values");
}

/* The residency input of this graph and request (pr_residency.h), from the device's free memory. */
static PrStatus
residency_input(GpuEngine *e, const PrGraph *g, int k, int n_slots, unsigned needs, PrResidencyInput *in,
				PrError *err)
{
	size_t		free_b = 0,
				total_b = 0;

	PR_CUDA(cudaMemGetInfo(&free_b, &total_b));
	memset(in, 0, sizeof(*in));
	in->nodes = g->n_nodes;
	in->edges = g->n_edges;
	in->k = k;
	in->slots = n_slots;
	in->elem = e->elem;
	in->weighted = g->in_weight != NULL;
	in->push = (needs & PR_NEED_PUSH) != 0;
	in->budget = e->opt.memory_budget;
	in->free_bytes = free_b;
	return PR_OK;
}

/*
 * The device bytes the streamed matrices may take: the limit pr_residency_choose applies (the
 * budget when set, and the free memory less PR_DEVICE_RESERVE, what the engine holds counted as
 * free) less the vectors' bytes as it counts them (some are allocated later), so the engine's
 * whole need stays within the limit its streamed estimate was held to.
 */
static PrStatus
streamed_room(GpuEngine *e, const PrGraph *g, int k, int n_slots, unsigned needs, PrResidencyInput *in,
			  size_t *room, PrError *err)
{
	PrResidencyChoice choice;
	PrStatus	st = residency_input(e, g, k, n_slots, needs, in, err);

	if (st != PR_OK)
		return st;
	in->free_bytes += e->report.total_bytes;
	pr_residency_choose(in, &choice);
	*room = choice.limit > choice.vector_bytes ? choice.limit - choice.vector_bytes : 0;
	return PR_OK;
}

/*
 * Prepares the streamed matrices: the natural order's host arrays (identity ids, 1 / out-strength),
 * the vectors, then the block plans, buffers and registration (pr_gpu_streamed.cu) in the room left.
 */
static PrStatus
prepare_streamed(GpuEngine *e, const PrGraph *g, int k, int n_slots, unsigned needs, PrepareTimes *times,
				 size_t *need, PrError *err)
{
	HostPlans	h;
	PrResidencyInput in;
	size_t		room = 0;
	int64_t		n = g->n_nodes;
	PrStatus	st = PR_OK;

	memset(&h, 0, sizeof(h));
	h.order = PR_GPU_ORDER_NATURAL;
	h.identity = true;
	h.new_to_old = (int32_t *) malloc((size_t) (n + 1) * 4);
	h.old_to_new = (int32_t *) malloc((size_t) (n + 1) * 4);
	h.inv_out = (double *) malloc((size_t) (n + 1) * 8);
	if (!h.new_to_old || !h.old_to_new || !h.inv_out)
		st = pr_error_set(err, PR_ERR_NOMEM, "GPU engine: out of host memory");
	else
	{
		HostArraysJob job = {n, g->out_strength, h.inv_out, h.new_to_old, h.old_to_new};

		pr_parallel_run(host_arrays_part, &job, pr_thread_count(0, 16));
	}
	times->host = pr_clock_seconds() - times->start - times->smem_setup;
	*need = vector_bytes(e, n, k, n_slots);
	if (st == PR_OK)
		st = check_device_memory(e, *need, err);
	if (st == PR_OK)
		st = alloc_vectors(e, n_slots, err);
	if (st == PR_OK)
		st = upload_order(e, &h, err);
	if (st == PR_OK)
		st = streamed_room(e, g, k, n_slots, needs, &in, &room, err);
	if (st == PR_OK)
		st = gpu_streamed_prepare(e, g, &in, room, err);
	times->planned = pr_clock_seconds();
	if (st == PR_OK)
	{
		*need += e->streamer->device_bytes;
		report_streamed(e);
	}
	host_plans_free(&h);
	return st;
}

/* The residency choice of pr_residency.h for this graph and request, from the device's free memory. */
static PrStatus
choose_residency(GpuEngine *e, const PrGraph *g, int k, int n_slots, unsigned needs, PrResidencyChoice *choice,
				 PrError *err)
{
	PrResidencyInput in;
	PrStatus	st = residency_input(e, g, k, n_slots, needs, &in, err);

	if (st == PR_OK)
		pr_residency_choose(&in, choice);
	return st;
}

/* Prepare: order and plan on the host, check device memory, upload (timing candidates for auto),
 * report. */
static PrStatus
prepare_layout(PrEngine *base, const PrGraph *g, int k, int n_slots, unsigned needs, PrError *err)
{
	GpuEngine  *e = (GpuEngine *) base;
	HostPlans	h;
	PrepareTimes times;
	PrResidencyChoice choice;
	size_t		need = 0;
	PrStatus	st;

	PR_CUDA(cudaSetDevice(e->opt.device));	/* engines of several GPUs take turns on one thread */
	e->rows_owned = false;		/* every row until own_rows says otherwise */
	if (same_prepared_graph(e, g, k, needs))
		return reuse_prepared(e, n_slots, err);
	memset(&times, 0, sizeof(times));
	times.start = pr_clock_seconds();
	if ((st = start_prepare(e, g, k, n_slots, needs, err)) != PR_OK)
		return st;
	times.smem_setup = pr_clock_seconds();
	st = setup_smem_tiles(e, err);
	times.smem_setup = pr_clock_seconds() - times.smem_setup;
	memset(&h, 0, sizeof(h));
	memset(&choice, 0, sizeof(choice));
	choice.residency = e->bench.residency == PR_GPU_RESIDENCY_STREAMED ? PR_RESIDENCY_STREAMED : PR_RESIDENCY_RESIDENT;
	if (st == PR_OK && e->bench.residency == PR_GPU_RESIDENCY_AUTO)
		st = choose_residency(e, g, k, n_slots, needs, &choice, err);
	if (st == PR_OK && choice.residency == PR_RESIDENCY_NONE)
		st = pr_error_set(err, PR_ERR_NOMEM,
						  "GPU engine: the graph needs %.1f MiB of device memory resident and %.1f MiB streamed; %.1f MiB are available%s",
						  choice.resident_bytes / 1048576.0, choice.streamed_bytes / 1048576.0, choice.limit / 1048576.0,
						  e->opt.memory_budget > 0 ? " (free memory and the memory budget)" : "");
	else if (st == PR_OK && choice.residency == PR_RESIDENCY_STREAMED)
	{
		st = prepare_streamed(e, g, k, n_slots, needs, &times, &need, err);
		e->report.resident_need_bytes = choice.resident_bytes;
		e->report.device_free_bytes = choice.free_bytes;
	}
	else if (st == PR_OK)
	{
		if (e->opt.kernel == PR_GPU_KERNEL_AUTO && k == 1 && e->bench.measure_reps > 0 && g->n_edges > 0)
			st = prepare_measured(e, g, n_slots, needs, &times, &need, err);
		else
			st = prepare_single(e, g, k, n_slots, needs, &h, &times, &need, err);
		if (st == PR_ERR_NOMEM && e->bench.residency == PR_GPU_RESIDENCY_AUTO)
		{
			/* the estimate was short of the layouts' real size: stream instead */
			host_plans_free(&h);
			gpu_engine_free_device(e);
			if ((st = start_prepare(e, g, k, n_slots, needs, err)) == PR_OK)
				st = prepare_streamed(e, g, k, n_slots, needs, &times, &need, err);
		}
	}
	if (st == PR_OK && cudaStreamSynchronize(e->stream) != cudaSuccess)
		st = pr_error_set(err, PR_ERR_ENGINE, "GPU engine: upload failed: %s", cudaGetErrorString(cudaGetLastError()));
	if (st == PR_OK)
		write_report(e, g, &times, need);
	host_plans_free(&h);
	if (st != PR_OK)
	{
		gpu_engine_free_device(e);
		return st;
	}
	finish_prepare(e, g);
	return PR_OK;
}

/*
 * The prepare operation: prepare_layout, keeping the delta the engine serves (apply_delta) through
 * a prepare of the same graph object (the delta, its layers summed, applied again to the new
 * layout).  When that prepare or the delta's application fails, the engine is left unprepared
 * with the delta's host copies kept, so that the next prepare of the graph applies it again (or
 * fails again): never the graph without its delta.  A prepare of another graph forgets it.
 */
PrStatus
gpu_prepare(PrEngine *base, const PrGraph *g, int k, int n_slots, unsigned needs, PrError *err)
{
	GpuEngine  *e = (GpuEngine *) base;
	PrGraphDelta kept;
	bool		same_graph;
	PrStatus	st;

	if (!gpu_delta_active(e) || same_prepared_graph(e, g, k, needs))
		return prepare_layout(base, g, k, n_slots, needs, err);
	/* prep_graph: the graph last prepared, which the delta is of (also after a failed prepare) */
	same_graph = e->prep_graph == g && e->prep_in_ptr == g->in_ptr && e->prep_in_src == g->in_src &&
		e->prep_edges == g->n_edges;
	if (!same_graph)
	{
		gpu_delta_forget(e);
		return prepare_layout(base, g, k, n_slots, needs, err);
	}
	if ((st = gpu_delta_served(e, &kept, err)) != PR_OK)
	{
		gpu_engine_free_device(e);
		return st;
	}
	/* the new layout holds none of the delta (gpu_delta_free_device): the apply builds it whole */
	st = prepare_layout(base, g, k, n_slots, needs, err);
	if (st == PR_OK && (st = gpu_apply_delta(base, &kept, err)) != PR_OK)
		gpu_engine_free_device(e);
	pr_graph_delta_free(&kept, &pr_malloc_allocator);
	return st;
}
