/*
 * pr_gpu_prepare.cu — the single-GPU engine's prepare: the private order and the CSRs on the host,
 * the choice and host plan of the pull matrix's layout, the device memory check, the upload of
 * the vectors and the layouts, and the report.
 *
 * The pull layout is one PullLayout: chosen (choose_pull_layout), planned on the host
 * (plan_pull_layout), uploaded into its own matrix (upload_pull_layout), so that a layout can
 * also be run (gpu_matrix_run) and freed (gpu_matrix_free, free_pull_plan) on its own.
 */
#include "pr_gpu_engine.h"
#include "pr_gpu_spmm.h"
#include "pr_gpu_reduce.cuh"
#include "pr_gpu_vector_kernels.cuh"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Host-side layouts built during prepare (freed at its end). */
struct HostPlans
{
	PrPlanCsr	pull;
	PrPlanCsr	push;
	PrComposite comp;
	PrBinned	bin_pull;
	PrBinned	bin_push;
	int32_t    *new_to_old;
	int32_t    *old_to_new;
	int64_t    *key;
	double	   *inv_out;
	bool		pull_borrowed;	/* pull is a view of the graph's own in-CSR (not freed) */
};

/* One layout of the pull matrix: its format and what it is planned with. */
struct PullLayout
{
	PrGpuKernel kernel;			/* PR_GPU_KERNEL_TILED, _BINNED or _CUSPARSE */
	PrCompositeOptions copt;	/* tile-composite: the planner's options */
	int			bin_chunk;		/* binned CSR: rows longer than this are cut into chunks */
	double		predicted;		/* the model's time of one product in ms, or -1 */
	char		cand[512];		/* the planner's candidates, for the report */
	int			n_cand;
};

/* Frees the host plan of the pull layout (the composite or the binned CSR). */
static void
free_pull_plan(HostPlans *h)
{
	const PrAllocator *a = &pr_malloc_allocator;

	pr_plan_composite_free(&h->comp, a);
	pr_plan_binned_free(&h->bin_pull, a);
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
}

/*
 * Adds slots to the engine up to n_slots (cleared), with statistics room for them: prepare's
 * slots, and more on a re-prepare that asks for more (the old statistics array then stays among
 * the allocations until the engine is freed).
 */
static PrStatus
grow_slots(GpuEngine *e, int n_slots, PrError *err)
{
	size_t		bytes = (size_t) (e->n + 1) * e->k * e->elem;
	size_t		stats_bytes = (size_t) (n_slots + 2) * e->k * 3 * 8;
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
 * The private order on the host: nodes relabelled by out-degree (or natural ids), 1/out_strength
 * in that order, the pull CSR (the graph's own arrays where they already are in that order) and
 * the push CSR when asked for.
 */
static PrStatus
plan_private_order(GpuEngine *e, const PrGraph *g, unsigned needs, HostPlans *h, PrError *err)
{
	const PrAllocator *a = &pr_malloc_allocator;
	int64_t		n = g->n_nodes;
	PrStatus	st = PR_OK;

	h->new_to_old = (int32_t *) malloc((size_t) (n + 1) * 4);
	h->old_to_new = (int32_t *) malloc((size_t) (n + 1) * 4);
	h->key = (int64_t *) calloc((size_t) (n + 1), 8);
	h->inv_out = (double *) malloc((size_t) (n + 1) * 8);
	if (!h->new_to_old || !h->old_to_new || !h->key || !h->inv_out)
		return pr_error_set(err, PR_ERR_NOMEM, "GPU engine: out of host memory");
	pr_plan_set_threads(e->opt.plan_threads);
	if (e->opt.relabel)
	{
		/* out-degrees = column counts of the in-edge CSR (parallel), for the degree order only */
		PrPlanCsr	in_view;

		memset(&in_view, 0, sizeof(in_view));
		in_view.n = n;
		in_view.nnz = g->n_edges;
		in_view.ptr = g->in_ptr;
		in_view.col = g->in_src;
		st = pr_plan_column_degrees(&in_view, h->key, err);
		if (st != PR_OK)
			return st;
	}
	{
		HostArraysJob job = {n, g->out_strength, h->inv_out, e->opt.relabel ? NULL : h->new_to_old,
							 e->opt.relabel ? NULL : h->old_to_new};

		/* fresh arrays of n entries: their page faults are the cost, taken by several threads */
		pr_parallel_run(host_arrays_part, &job, pr_thread_count(0, 16));
	}
	if (e->opt.relabel)
		st = pr_plan_degree_order(n, h->key, h->new_to_old, h->old_to_new, a, err);
	if (st == PR_OK && !e->opt.relabel && g->in_weight == NULL)
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
	if (e->opt.relabel)
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
	e->smem_width = e->opt.smem_width > 0 ? e->opt.smem_width : (e->fp64 ? 24576 : 49152);
	if (e->smem_width >= 65535)
		e->smem_width = 65534;
	return pr_tiled_smem_setup(e->opt.device, e->fp64, e->smem_width, &e->smem_grid, err);
}

/*
 * The pull matrix's layout: the binned CSR for k > 1 (the SpMM runs over it), the one the options
 * name, or (auto, tiled) the planner's choice among its candidates with the performance model.
 */
static PrStatus
choose_pull_layout(GpuEngine *e, const HostPlans *h, int k, PullLayout *lay, PrError *err)
{
	PrStatus	st = PR_OK;

	memset(lay, 0, sizeof(*lay));
	lay->kernel = e->opt.kernel;
	lay->predicted = -1;
	if (k > 1 && lay->kernel != PR_GPU_KERNEL_BINNED)
		lay->kernel = PR_GPU_KERNEL_BINNED; /* SpMM runs over the CSR */
	/* rows longer than this are cut into chunks; SpMM's warps cover fewer entries at a time */
	lay->bin_chunk = e->opt.chunk > 0 ? e->opt.chunk : k > 1 ? PR_SPMM_CHUNK : 4096;
	if (lay->kernel == PR_GPU_KERNEL_AUTO || lay->kernel == PR_GPU_KERNEL_TILED)
	{
		PrPlanChoice choice;

		pr_plan_choice_init(&choice, e->n);
		choice.composite.tile_width = e->opt.tile_width > 0 ? e->opt.tile_width : e->n;
		choice.composite.chunk = e->opt.chunk > 0 ? e->opt.chunk : 4096;
		choice.composite.smem_width = e->smem_width;
		if (e->opt.n_smem_tiles >= 0)
		{
			choice.n_smem_counts = 1;
			choice.smem_counts[0] = e->opt.n_smem_tiles;
		}
		if (e->opt.vec_threshold > 0)
		{
			choice.n_thresholds = 1;
			choice.thresholds[0] = e->opt.vec_threshold;
		}
		choice.compact_mode = e->opt.compact_partials;
		choice.allow_binned = lay->kernel == PR_GPU_KERNEL_AUTO;
		choice.binned_chunk = e->opt.chunk > 0 ? e->opt.chunk : 4096;
		st = pr_plan_choose(&h->pull, e->have_model ? &e->model : NULL, &choice, &lay->predicted, lay->cand,
							sizeof(lay->cand), &lay->n_cand, &pr_malloc_allocator, err);
		if (st == PR_OK)
		{
			lay->kernel = choice.binned ? PR_GPU_KERNEL_BINNED : PR_GPU_KERNEL_TILED;
			lay->copt = choice.composite;
		}
	}
	return st;
}

/*
 * The host plan of a pull layout: the composite (tiled), or the binned CSR (binned, and the raw
 * product of the cuSPARSE mode), with the model's time of a binned product where it is cheap.
 */
static PrStatus
plan_pull_layout(GpuEngine *e, HostPlans *h, PullLayout *lay, unsigned needs, PrError *err)
{
	PrStatus	st = PR_OK;

	if (lay->kernel == PR_GPU_KERNEL_TILED)
		st = pr_plan_composite(&h->pull, &lay->copt, &pr_malloc_allocator, &h->comp, err);
	if (st == PR_OK && (lay->kernel == PR_GPU_KERNEL_BINNED ||
						(lay->kernel == PR_GPU_KERNEL_CUSPARSE && (needs & PR_NEED_PULL))))
	{
		st = pr_plan_binned(&h->pull, lay->bin_chunk, &pr_malloc_allocator, &h->bin_pull, err);
		/* the model's figure reads every entry (~1 s at 263 M edges): not for the quick layout
		 * (natural ids), whose point is to be ready soon */
		if (st == PR_OK && lay->kernel == PR_GPU_KERNEL_BINNED && e->have_model && lay->predicted < 0 && e->opt.relabel)
			lay->predicted = pr_model_predict_binned(&e->model, &h->bin_pull, &h->pull) * 1e3;
	}
	return st;
}

/* Device bytes of the vectors: slots, z, staging, the order and 1/out_strength, the restart, the
 * device top-k's scratch, the reductions' partials and statistics. */
static size_t
vector_bytes(const GpuEngine *e, int64_t n, int k, int n_slots)
{
	return (size_t) n_slots * (size_t) (n + 1) * k * e->elem	/* slots */
		+ (size_t) (n + 1) * k * e->elem	/* z */
		+ (size_t) n * k * 8	/* staging */
		+ (size_t) (n + 1) * (4 + e->elem)	/* new_to_old, inv_out */
		+ (size_t) n * k * e->elem	/* restart (personalized) */
		+ (size_t) n * (e->fp64 ? 24 : 16)	/* device top-k scratch (pr_gpu_topk), made on first use */
		+ (size_t) PR_RED_BLOCKS * k * 3 * 8 + (size_t) (n_slots + 2) * k * 3 * 8;
}

/* Device bytes of a planned pull layout (with the raw binned CSR of the cuSPARSE mode). */
static size_t
pull_layout_bytes(const GpuEngine *e, const HostPlans *h, const PullLayout *lay, unsigned needs,
				  int64_t n_edges)
{
	size_t		bytes = 0;

	if (lay->kernel == PR_GPU_KERNEL_TILED)
		bytes += h->comp.device_bytes + (size_t) h->comp.n_part * (e->elem - sizeof(float));
	if (lay->kernel == PR_GPU_KERNEL_BINNED || (lay->kernel == PR_GPU_KERNEL_CUSPARSE && (needs & PR_NEED_PULL)))
		bytes += h->bin_pull.device_bytes;
	if (lay->kernel == PR_GPU_KERNEL_CUSPARSE)
		bytes += (size_t) (e->n + 1) * 8 + (size_t) n_edges * (4 + e->elem) + ((size_t) 64 << 20);
	return bytes;
}

/* Fails with a message when need bytes do not fit the device's free memory (less 256 MiB) or the
 * memory budget. */
static PrStatus
check_device_memory(GpuEngine *e, size_t need, PrError *err)
{
	size_t		free_b = 0,
				total_b = 0;

	PR_CUDA(cudaMemGetInfo(&free_b, &total_b));
	if (need + ((size_t) 256 << 20) > free_b ||
		(e->opt.memory_budget > 0 && need > e->opt.memory_budget))
		return pr_error_set(err, PR_ERR_NOMEM,
							"GPU engine: the graph needs %.1f MiB of device memory; %.1f MiB are free%s",
							need / 1048576.0, free_b / 1048576.0,
							e->opt.memory_budget > 0 ? " (or over the memory budget)" : "");
	return PR_OK;
}

/* The vectors on the device: slots (cleared) and their statistics, z (cleared), staging, the
 * order, 1/out_strength in the vectors' precision, the reductions' partials and counter. */
static PrStatus
upload_vectors(GpuEngine *e, HostPlans *h, int n_slots, PrError *err)
{
	int64_t		n = e->n;
	int			k = e->k;
	PrStatus	st = grow_slots(e, n_slots, err);

	if (st == PR_OK && (st = gpu_dev_alloc(e, &e->z, (size_t) (n + 1) * k * e->elem, err)) == PR_OK)
		if (cudaMemsetAsync(e->z, 0, (size_t) (n + 1) * k * e->elem, e->stream) != cudaSuccess)
			st = pr_error_set(err, PR_ERR_ENGINE, "GPU engine: cudaMemsetAsync failed");
	if (st == PR_OK)
		st = gpu_dev_alloc(e, (void **) &e->stage, (size_t) n * k * 8, err);
	if (st == PR_OK)
		st = gpu_dev_upload(e, (void **) &e->new_to_old, h->new_to_old, (size_t) n * 4, err);
	if (st == PR_OK)
	{
		/* kept for the restart scatter: the plan's copy is freed at the end of prepare */
		e->old_to_new_host = h->old_to_new;
		h->old_to_new = NULL;
	}
	if (st == PR_OK)
	{
		if (e->fp64)
			st = gpu_dev_upload(e, &e->inv_out, h->inv_out, (size_t) n * 8, err);
		else
		{
			float	   *f = (float *) malloc((size_t) (n + 1) * 4);

			if (f == NULL)
				st = pr_error_set(err, PR_ERR_NOMEM, "GPU engine: out of host memory");
			else
			{
				for (int64_t i = 0; i < n; i++)
					f[i] = (float) h->inv_out[i];
				st = gpu_dev_upload(e, &e->inv_out, f, (size_t) n * 4, err);
				free(f);
			}
		}
	}
	if (st == PR_OK)
		st = gpu_dev_alloc(e, (void **) &e->partials, (size_t) PR_RED_BLOCKS * k * 3 * 8, err);
	if (st == PR_OK && (st = gpu_dev_alloc(e, (void **) &e->counter, 64, err)) == PR_OK)
		if (cudaMemset(e->counter, 0, 64) != cudaSuccess)
			st = pr_error_set(err, PR_ERR_ENGINE, "GPU engine: cudaMemset failed");
	return st;
}

/* Uploads a planned pull layout into e->pull (and the cuSPARSE mode's raw binned CSR into
 * e->pull_raw); gpu_matrix_free frees each on its own. */
static PrStatus
upload_pull_layout(GpuEngine *e, const HostPlans *h, const PullLayout *lay, unsigned needs, PrError *err)
{
	PrStatus	st = PR_OK;

	if (lay->kernel == PR_GPU_KERNEL_TILED)
		st = gpu_matrix_upload_tiled(e, &h->comp, &e->pull, err);
	if (st == PR_OK && lay->kernel == PR_GPU_KERNEL_BINNED)
		st = gpu_matrix_upload_binned(e, &h->pull, &h->bin_pull, &e->pull, err);
	if (st == PR_OK && lay->kernel == PR_GPU_KERNEL_CUSPARSE)
	{
		st = gpu_matrix_upload_cusparse(e, &h->pull, h->inv_out, &e->pull, err);
		if (st == PR_OK && (needs & PR_NEED_PULL))
			st = gpu_matrix_upload_binned(e, &h->pull, &h->bin_pull, &e->pull_raw, err);
	}
	return st;
}

/* Keeps the gathered vector z in L2: an access-policy window over its (hottest) front, where the
 * device has one (an unsupported window is not an error: the engine runs without it). */
static void
set_l2_window(GpuEngine *e)
{
	int			max_window = 0,
				persist_max = 0;

	if (cudaDeviceGetAttribute(&max_window, cudaDevAttrMaxAccessPolicyWindowSize, e->opt.device) == cudaSuccess &&
		cudaDeviceGetAttribute(&persist_max, cudaDevAttrMaxPersistingL2CacheSize, e->opt.device) == cudaSuccess &&
		max_window > 0 && persist_max > 0)
	{
		size_t		bytes = (size_t) (e->n + 1) * e->k * e->elem;
		size_t		window = bytes < (size_t) max_window ? bytes : (size_t) max_window;
		size_t		carve = window < (size_t) persist_max ? window : (size_t) persist_max;
		cudaStreamAttrValue a;

		memset(&a, 0, sizeof(a));
		a.accessPolicyWindow.base_ptr = e->z;
		a.accessPolicyWindow.num_bytes = window;
		a.accessPolicyWindow.hitRatio = (float) ((double) carve / (double) window);
		a.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
		a.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
		if (cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, carve) == cudaSuccess &&
			cudaStreamSetAttribute(e->stream, cudaStreamAttributeAccessPolicyWindow, &a) == cudaSuccess)
		{
			e->l2_window = true;
			e->report.l2_persist_bytes = carve;
		}
	}
	cudaGetLastError();
}

/* How long prepare's parts took (seconds). */
struct PrepareTimes
{
	double		start;			/* clock at the start */
	double		planned;		/* clock when the host plans were made */
	double		host;			/* the private order on the host */
	double		smem_setup;		/* the shared-memory tiles' setup */
};

/* The report of a prepared engine: engine, device, format, the planner's figures, times, bytes. */
static void
write_report(GpuEngine *e, const PrGraph *g, const HostPlans *h, const PullLayout *lay,
			 const PrepareTimes *times, size_t need)
{
	PrGpuReport *r = &e->report;
	PrGpuKernel kernel = lay->kernel;
	int			k = e->k;
	cudaDeviceProp prop;

	snprintf(r->engine, sizeof(r->engine), "%s",
			 kernel == PR_GPU_KERNEL_TILED ? "gpu-tiled" : kernel == PR_GPU_KERNEL_BINNED ?
			 (k > 1 ? "gpu-spmm" : "gpu-binned") : "gpu-cusparse");
	if (cudaGetDeviceProperties(&prop, e->opt.device) == cudaSuccess)
	{
		size_t		len = strnlen(prop.name, sizeof(r->device) - 1);

		memcpy(r->device, prop.name, len);
		r->device[len] = '\0';
	}
	r->n_nodes = e->n;
	r->n_edges = g->n_edges;
	r->predicted_ms = lay->predicted;
	r->n_candidates = lay->n_cand;
	memcpy(r->candidates, lay->cand, sizeof(r->candidates));
	r->candidates[sizeof(r->candidates) - 1] = '\0';
	r->matrix_bytes = e->pull.bytes;
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
				 g->n_edges > 0 ? 100.0 * c->padding / g->n_edges : 0.0,
				 e->opt.relabel ? ", degree-ordered ids" : "",
				 e->pull.compact ? ", compact partials + merge" : "");
	}
	else if (kernel == PR_GPU_KERNEL_BINNED)
		snprintf(r->format, sizeof(r->format), "%s CSR, %lld long rows chunked%s",
				 k > 1 ? "SpMM over" : "row-binned", (long long) h->bin_pull.longs.n_long,
				 e->opt.relabel ? ", degree-ordered ids" : "");
	else
		snprintf(r->format, sizeof(r->format), "cusparseSpMV CSR with values%s",
				 e->opt.relabel ? ", degree-ordered ids" : ", natural ids");
	r->bytes_per_edge = g->n_edges > 0 ? (double) r->matrix_bytes / (double) g->n_edges : 0.0;
	if (r->l2_persist_bytes > 0)
	{
		size_t		used = strlen(r->format);

		snprintf(r->format + used, sizeof(r->format) - used, ", L2-persist %.0f MB",
				 r->l2_persist_bytes / 1e6);
	}
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

/* The host part of prepare: the private order, the shared-memory tiles' setup, the pull layout's
 * choice and plan, the push CSR's bins. */
static PrStatus
plan_on_host(GpuEngine *e, const PrGraph *g, int k, unsigned needs, HostPlans *h, PullLayout *lay,
			 PrepareTimes *times, PrError *err)
{
	PrStatus	st = plan_private_order(e, g, needs, h, err);

	if (st != PR_OK)
		return st;
	times->smem_setup = pr_clock_seconds();
	if ((st = setup_smem_tiles(e, err)) != PR_OK)
		return st;
	times->smem_setup = pr_clock_seconds() - times->smem_setup;
	times->host = pr_clock_seconds() - times->start - times->smem_setup;
	st = choose_pull_layout(e, h, k, lay, err);
	if (st == PR_OK)
		st = plan_pull_layout(e, h, lay, needs, err);
	if (st == PR_OK && (needs & PR_NEED_PUSH))
		st = pr_plan_binned(&h->push, lay->bin_chunk, &pr_malloc_allocator, &h->bin_push, err);
	times->planned = pr_clock_seconds();
	return st;
}

/* The device part of prepare: the vectors, the pull layout, the push CSR, then the L2 window. */
static PrStatus
upload_all(GpuEngine *e, HostPlans *h, const PullLayout *lay, int n_slots, unsigned needs, PrError *err)
{
	PrStatus	st = upload_vectors(e, h, n_slots, err);

	if (st == PR_OK)
		st = upload_pull_layout(e, h, lay, needs, err);
	if (st == PR_OK && (needs & PR_NEED_PUSH))
		st = gpu_matrix_upload_binned(e, &h->push, &h->bin_push, &e->push, err);
	if (st == PR_OK && cudaStreamSynchronize(e->stream) != cudaSuccess)
		st = pr_error_set(err, PR_ERR_ENGINE, "GPU engine: upload failed: %s", cudaGetErrorString(cudaGetLastError()));
	if (st == PR_OK && e->opt.l2_persist && lay->kernel != PR_GPU_KERNEL_CUSPARSE)
		set_l2_window(e);
	return st;
}

/* Prepare: relabel and plan on the host, check device memory, upload, report. */
PrStatus
gpu_prepare(PrEngine *base, const PrGraph *g, int k, int n_slots, unsigned needs, PrError *err)
{
	GpuEngine  *e = (GpuEngine *) base;
	HostPlans	h;
	PullLayout	lay;
	PrepareTimes times;
	size_t		need;
	PrStatus	st;

	if (same_prepared_graph(e, g, k, needs))
		return reuse_prepared(e, n_slots, err);
	memset(&times, 0, sizeof(times));
	times.start = pr_clock_seconds();
	if ((st = start_prepare(e, g, k, n_slots, needs, err)) != PR_OK)
		return st;
	memset(&h, 0, sizeof(h));
	st = plan_on_host(e, g, k, needs, &h, &lay, &times, err);
	if (st == PR_OK)
	{
		need = vector_bytes(e, g->n_nodes, k, n_slots) + pull_layout_bytes(e, &h, &lay, needs, g->n_edges);
		if (needs & PR_NEED_PUSH)
			need += h.bin_push.device_bytes;
		st = check_device_memory(e, need, err);
	}
	if (st != PR_OK)
	{
		host_plans_free(&h);
		return st;
	}
	st = upload_all(e, &h, &lay, n_slots, needs, err);
	if (st == PR_OK)
		write_report(e, g, &h, &lay, &times, need);
	host_plans_free(&h);
	if (st != PR_OK)
	{
		gpu_engine_free_device(e);
		return st;
	}
	finish_prepare(e, g);
	return PR_OK;
}
