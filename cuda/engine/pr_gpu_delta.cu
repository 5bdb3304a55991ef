/*
 * pr_gpu_delta.cu — the GPU engine serving a graph delta beside its layout (PrEngineOps.apply_delta):
 * the delta's edges as small row lists in the private order (by target for the pull products, by
 * source for the push product), added after the layout's product by k_delta_rows in a fixed order,
 * and 1 / out-strength of the changed sources rewritten on the device, which is also where the
 * updates and column sums find the dangling nodes (1 / out-strength 0).  The delta's absent nodes
 * get -0 there: dangling like the others, and the update kernels, which read 1 / out-strength
 * anyway, write them exactly 0 (no pass of their own, nothing read more); a uniform restart
 * spreads over the n - n_absent others.  The streamed residency
 * and the cuSPARSE layout (P's values baked into the matrix) take no delta; nor does an engine
 * owning rows (a part of several GPUs), whose dangling rows are planned from the prepared graph.
 */
#include "pr_gpu_engine.h"
#include "pr_gpu_delta_kernels.cuh"
#include "pr_gpu_launch.h"

#include <algorithm>
#include <stdlib.h>
#include <string.h>

/* Grid of a grid-stride loop over count items. */
static unsigned int
delta_grid(int64_t count)
{
	return pr_grid_blocks(count, PR_THREADS, 132 * 16);
}

/* Whether the engine serves a delta beside its prepared graph. */
bool
gpu_delta_active(const GpuEngine *e)
{
	return e->delta.n_edges > 0 || e->delta.n_sources > 0 || e->delta.n_absent > 0;
}

/* Frees the delta's device arrays (gpu_engine_free_device; the host copy stays). */
void
gpu_delta_free_device(GpuEngine *e)
{
	for (void *p : e->delta_allocs)
		cudaFree(p);
	e->delta_allocs.clear();
	e->report.total_bytes -= e->delta_bytes < e->report.total_bytes ? e->delta_bytes : e->report.total_bytes;
	e->delta_bytes = 0;
	memset(&e->delta_pull, 0, sizeof(e->delta_pull));
	memset(&e->delta_push, 0, sizeof(e->delta_push));
}

/* Frees the delta's host copy and device arrays: the engine serves its prepared graph alone. */
void
gpu_delta_forget(GpuEngine *e)
{
	gpu_delta_free_device(e);
	pr_graph_delta_free(&e->delta, &pr_malloc_allocator);
}

/* Rows of edges[n] (grouped by by_source ? source : target) in the private order, on the host. */
struct HostRows
{
	std::vector<int32_t> row;
	std::vector<int64_t> ptr;
	std::vector<int32_t> col;
	std::vector<double> value;
};

/* Groups edges[n] (sorted by the grouping endpoint first) into rows at private positions. */
static void
host_rows(const GpuEngine *e, const PrEdgeChange *edges, int64_t n, bool by_source, HostRows *out)
{
	const int32_t *pos = e->old_to_new_host;

	out->ptr.push_back(0);
	for (int64_t i = 0; i < n; i++)
	{
		int64_t		at = by_source ? edges[i].src : edges[i].dst;
		int64_t		from = by_source ? edges[i].dst : edges[i].src;

		if (i == 0 || at != (by_source ? edges[i - 1].src : edges[i - 1].dst))
		{
			if (i > 0)
				out->ptr.push_back(i);
			out->row.push_back(pos[at]);
		}
		out->col.push_back(pos[from]);
		/* the weight as the layouts hold it (float): a deleted edge cancels its layout term */
		out->value.push_back((double) edges[i].count * (double) (float) edges[i].weight);
	}
	if (n > 0)
		out->ptr.push_back(n);
}

/* Uploads host rows into rows (device arrays listed in list). */
static PrStatus
upload_rows(GpuEngine *e, const HostRows *h, std::vector<void *> *list, GpuDeltaRows *rows, PrError *err)
{
	PrStatus	st;
	size_t		n_rows = h->row.size();
	size_t		n_entries = h->col.size();

	rows->rows = (int64_t) n_rows;
	if (n_rows == 0)
		return PR_OK;
	if ((st = gpu_dev_upload_in(e, list, (void **) &rows->row, h->row.data(), n_rows * 4, err)) != PR_OK ||
		(st = gpu_dev_upload_in(e, list, (void **) &rows->ptr, h->ptr.data(), (n_rows + 1) * 8, err)) != PR_OK ||
		(st = gpu_dev_upload_in(e, list, (void **) &rows->col, h->col.data(), n_entries * 4, err)) != PR_OK ||
		(st = gpu_dev_upload_in(e, list, (void **) &rows->value, h->value.data(), n_entries * 8, err)) != PR_OK)
		return st;
	return PR_OK;
}

/* 1 / out-strength as the layout holds it (0 for a dangling node). */
static double
inverse_strength(double strength)
{
	return strength > 0.0 ? 1.0 / strength : 0.0;
}

/* The nodes whose 1 / out-strength a delta sets: its sources and its absent nodes, ascending. */
static void
nodes_set(const PrGraphDelta *delta, std::vector<int32_t> *out)
{
	out->resize((size_t) (delta->n_sources + delta->n_absent));
	std::merge(delta->sources, delta->sources + delta->n_sources, delta->absent,
			   delta->absent + delta->n_absent, out->begin());
	out->erase(std::unique(out->begin(), out->end()), out->end());
}

/*
 * The entries of 1 / out-strength that change when the engine goes from its present delta to
 * delta: the nodes the present delta set back to the prepared graph's, those delta sets to X's
 * (-0 for an absent node; the new value where a node is in both), at private positions.
 */
static void
inverse_changes(const GpuEngine *e, const PrGraphDelta *delta, std::vector<int32_t> *pos,
				std::vector<double> *value)
{
	const PrGraph *g = e->prep_graph;
	std::vector<int32_t> old_nodes,
				new_nodes;
	size_t		a = 0,
				b = 0;
	int64_t		source = 0,
				absent = 0;

	nodes_set(&e->delta, &old_nodes);
	nodes_set(delta, &new_nodes);
	while (a < old_nodes.size() || b < new_nodes.size())
	{
		int32_t		node;
		double		inverse;

		if (b == new_nodes.size() || (a < old_nodes.size() && old_nodes[a] < new_nodes[b]))
		{
			node = old_nodes[a++];
			inverse = inverse_strength(g->out_strength[node]);
		}
		else
		{
			if (a < old_nodes.size() && old_nodes[a] == new_nodes[b])
				a++;
			node = new_nodes[b++];
			while (source < delta->n_sources && delta->sources[source] < node)
				source++;
			while (absent < delta->n_absent && delta->absent[absent] < node)
				absent++;
			if (absent < delta->n_absent && delta->absent[absent] == node)
				inverse = -0.0;
			else
				inverse = inverse_strength(delta->out_strength[source]);
		}
		pos->push_back(e->old_to_new_host[node]);
		value->push_back(inverse);
	}
}

/* A copy of delta in host memory (pr_graph_delta_free frees it); false when out of memory. */
static bool
copy_delta(const PrGraphDelta *delta, PrGraphDelta *out)
{
	if (!pr_graph_delta_alloc(out, delta->n_nodes, delta->n_edges, delta->n_sources, delta->n_absent,
							  &pr_malloc_allocator))
		return false;
	memcpy(out->edges, delta->edges, sizeof(PrEdgeChange) * (size_t) delta->n_edges);
	memcpy(out->sources, delta->sources, sizeof(int32_t) * (size_t) delta->n_sources);
	memcpy(out->out_strength, delta->out_strength, sizeof(double) * (size_t) delta->n_sources);
	memcpy(out->absent, delta->absent, sizeof(int32_t) * (size_t) delta->n_absent);
	out->n_edges = delta->n_edges;
	out->n_sources = delta->n_sources;
	out->n_absent = delta->n_absent;
	return true;
}

/* Serves the prepared graph plus delta from now on (see pr_engine.h). */
PrStatus
gpu_apply_delta(PrEngine *base, const PrGraphDelta *delta, PrError *err)
{
	GpuEngine  *e = (GpuEngine *) base;
	PrGraphDelta none;
	PrGraphDelta copy;
	HostRows	pull,
				push;
	std::vector<PrEdgeChange> by_source;
	std::vector<int32_t> pos;
	std::vector<double> value;
	std::vector<void *> list;
	GpuDeltaRows pull_rows,
				push_rows;
	size_t		before,
				bytes;
	void	   *pos_dev = NULL;
	void	   *value_dev = NULL;
	PrStatus	st;

	if (!e->prepared)
		return pr_error_set(err, PR_ERR_ENGINE, "GPU engine: not prepared");
	if (e->streamer != NULL)
		return pr_error_set(err, PR_ERR_UNSUPPORTED, "GPU engine: a streamed graph takes no delta");
	if (e->pull.kind == MATRIX_CUSPARSE)
		return pr_error_set(err, PR_ERR_UNSUPPORTED, "GPU engine: the cuSPARSE layout holds the graph's normalized values and takes no delta");
	if (e->rows_owned)
		return pr_error_set(err, PR_ERR_UNSUPPORTED, "GPU engine: an engine owning rows takes no delta");
	if (delta == NULL)
	{
		memset(&none, 0, sizeof(none));
		none.n_nodes = e->n;
		delta = &none;
	}
	if ((st = pr_graph_delta_check(delta, e->prep_graph, err)) != PR_OK)
		return st;
	if (delta->n_absent > 0 && delta->n_absent >= e->n)
		return pr_error_set(err, PR_ERR_UNSUPPORTED, "GPU engine: a delta leaving none of the %lld nodes",
							(long long) e->n);
	PR_CUDA(cudaSetDevice(e->opt.device));
	if (!copy_delta(delta, &copy))
		return pr_error_set(err, PR_ERR_NOMEM, "GPU engine: out of host memory for a delta of %lld edges",
							(long long) delta->n_edges);
	memset(&pull_rows, 0, sizeof(pull_rows));
	memset(&push_rows, 0, sizeof(push_rows));
	by_source.resize((size_t) delta->n_edges + 1);
	pr_graph_delta_by_source(delta, by_source.data());
	host_rows(e, delta->edges, delta->n_edges, false, &pull);
	host_rows(e, by_source.data(), delta->n_edges, true, &push);
	inverse_changes(e, delta, &pos, &value);

	before = e->report.total_bytes;
	st = upload_rows(e, &pull, &list, &pull_rows, err);
	if (st == PR_OK && e->push.kind != MATRIX_NONE)
		st = upload_rows(e, &push, &list, &push_rows, err);
	bytes = e->report.total_bytes - before;
	if (st == PR_OK && !pos.empty())
	{
		/* the scatter's lists live only until it ran */
		std::vector<void *> scratch;

		st = gpu_dev_upload_in(e, &scratch, &pos_dev, pos.data(), pos.size() * 4, err);
		if (st == PR_OK)
			st = gpu_dev_upload_in(e, &scratch, &value_dev, value.data(), value.size() * 8, err);
		if (st == PR_OK)
		{
			if (e->fp64)
				k_scatter_values<double><<<delta_grid((int64_t) pos.size()), PR_THREADS, 0, e->stream>>>(
					(int64_t) pos.size(), (const int32_t *) pos_dev, (const double *) value_dev, (double *) e->inv_out);
			else
				k_scatter_values<float><<<delta_grid((int64_t) pos.size()), PR_THREADS, 0, e->stream>>>(
					(int64_t) pos.size(), (const int32_t *) pos_dev, (const double *) value_dev, (float *) e->inv_out);
			if (cudaGetLastError() != cudaSuccess || cudaStreamSynchronize(e->stream) != cudaSuccess)
				st = pr_error_set(err, PR_ERR_ENGINE, "GPU engine: rewriting 1 / out-strength failed");
		}
		for (void *p : scratch)
			cudaFree(p);
	}
	if (st != PR_OK)
	{
		/* the engine serves what it served (a failed scatter aside, which is an engine error) */
		for (void *p : list)
			cudaFree(p);
		e->report.total_bytes = before;
		pr_graph_delta_free(&copy, &pr_malloc_allocator);
		return st;
	}
	e->report.total_bytes = before + bytes;
	gpu_delta_forget(e);
	e->delta = copy;
	e->delta_pull = pull_rows;
	e->delta_push = push_rows;
	e->delta_allocs = list;
	e->delta_bytes = bytes;
	for (int s = 0; s < e->n_slots; s++)
		e->dangling_valid[s] = false;
	e->z_owner = -1;
	e->far_field_stale = true;
	return PR_OK;
}

/* Enqueues the delta's terms of product into y, in its input in (nothing without a delta). */
template <typename T>
PrStatus
gpu_delta_add(GpuEngine *e, PrProduct product, const void *in, void *y, PrError *err)
{
	const GpuDeltaRows *rows = product == PR_PRODUCT_PUSH ? &e->delta_push : &e->delta_pull;

	if (rows->rows == 0)
		return PR_OK;
	k_delta_rows<T><<<delta_grid(rows->rows * e->k), PR_THREADS, 0, e->stream>>>(
		rows->rows, e->k, rows->row, rows->ptr, rows->col, rows->value, (const T *) in, (T *) y);
	PR_LAUNCHED();
	return PR_OK;
}

template PrStatus gpu_delta_add<float>(GpuEngine *e, PrProduct product, const void *in, void *y, PrError *err);
template PrStatus gpu_delta_add<double>(GpuEngine *e, PrProduct product, const void *in, void *y, PrError *err);
