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
 *
 * The edges are held in two layers so that a delta that grew a little since the last one costs
 * what it added: frozen (the edges of a delta applied earlier, built once) and recent (the new
 * delta's edges less frozen's, pr_graph_delta_edges_diff), rebuilt at each apply; the frozen
 * layer is rebuilt from the delta itself (a fold) when recent passes a quarter of it plus
 * bench.delta_fold_edges, so the rows built per apply are, amortized, of the order of the change.
 * The entries of 1 / out-strength are rewritten only where they change.
 */
#include "pr_gpu_engine.h"
#include "pr_gpu_delta_kernels.cuh"
#include "pr_gpu_launch.h"

#include <stdlib.h>
#include <string.h>

/* The recent layer is folded when it has more edges than frozen's / DELTA_FOLD_FRACTION plus
 * bench.delta_fold_edges. */
#define DELTA_FOLD_FRACTION 4

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
	return !e->delta_frozen.edges.empty() || !e->delta_recent.edges.empty() || !e->delta_sources.empty() ||
		!e->delta_absent.empty();
}

/* Frees a layer's device arrays and clears its rows (its host edges stay). */
static void
layer_free_device(GpuEngine *e, GpuDeltaLayer *layer)
{
	for (void *p : layer->allocs)
		cudaFree(p);
	layer->allocs.clear();
	e->report.total_bytes -= layer->bytes < e->report.total_bytes ? layer->bytes : e->report.total_bytes;
	layer->bytes = 0;
	memset(&layer->pull, 0, sizeof(layer->pull));
	memset(&layer->push, 0, sizeof(layer->push));
}

/* Frees the delta's device arrays (gpu_engine_free_device; the host copies stay). */
void
gpu_delta_free_device(GpuEngine *e)
{
	layer_free_device(e, &e->delta_frozen);
	layer_free_device(e, &e->delta_recent);
	e->delta_on_device = false;
}

/* Empties a vector and gives its memory back. */
template <typename V>
static void
release_vector(V *v)
{
	V().swap(*v);
}

/* Frees the delta's host copies and device arrays: the engine serves its prepared graph alone. */
void
gpu_delta_forget(GpuEngine *e)
{
	gpu_delta_free_device(e);
	release_vector(&e->delta_frozen.edges);
	release_vector(&e->delta_recent.edges);
	release_vector(&e->delta_sources);
	release_vector(&e->delta_strength);
	release_vector(&e->delta_absent);
	release_vector(&e->delta_spare.sources);
	release_vector(&e->delta_spare.strength);
	release_vector(&e->delta_spare.absent);
	release_vector(&e->delta_spare.edges);
	release_vector(&e->delta_spare.diff);
}

/* The delta served as one PrGraphDelta: the layers' edges summed, the host copies of the rest. */
PrStatus
gpu_delta_served(const GpuEngine *e, PrGraphDelta *out, PrError *err)
{
	PrGraphDelta frozen,
				recent;

	memset(&frozen, 0, sizeof(frozen));
	memset(&recent, 0, sizeof(recent));
	frozen.n_nodes = recent.n_nodes = e->prep_graph != NULL ? e->prep_graph->n_nodes : e->n;
	frozen.edges = const_cast<PrEdgeChange *>(e->delta_frozen.edges.data());
	frozen.n_edges = (int64_t) e->delta_frozen.edges.size();
	recent.edges = const_cast<PrEdgeChange *>(e->delta_recent.edges.data());
	recent.n_edges = (int64_t) e->delta_recent.edges.size();
	recent.sources = const_cast<int32_t *>(e->delta_sources.data());
	recent.out_strength = const_cast<double *>(e->delta_strength.data());
	recent.n_sources = (int64_t) e->delta_sources.size();
	/* both name the absent nodes: the merge takes first's when second changes nothing */
	frozen.absent = recent.absent = const_cast<int32_t *>(e->delta_absent.data());
	frozen.n_absent = recent.n_absent = (int64_t) e->delta_absent.size();
	return pr_graph_delta_merge(&frozen, &recent, &pr_malloc_allocator, out, err);
}

/* Rows of a layer's edges in the private order, on the host (one order: by target or by source). */
struct HostRows
{
	std::vector<int32_t> row;
	std::vector<int64_t> ptr;
	std::vector<int32_t> col;
	std::vector<double> value;
};

/*
 * Groups edges[n] into rows at private positions: by target in their own order (sorted by target
 * first) when by_source is NULL, else by source in the order of the indices in by_source's low
 * 32 bits (sorted by source first).
 */
static void
host_rows(const GpuEngine *e, const PrEdgeChange *edges, int64_t n, const uint64_t *by_source, HostRows *out)
{
	const int32_t *pos = e->old_to_new_host;
	int64_t		last = -1;

	out->row.clear();
	out->ptr.clear();
	out->col.clear();
	out->value.clear();
	out->col.reserve((size_t) n);
	out->value.reserve((size_t) n);
	for (int64_t i = 0; i < n; i++)
	{
		const PrEdgeChange *c = by_source != NULL ? &edges[by_source[i] & UINT32_MAX] : &edges[i];
		int64_t		at = by_source != NULL ? c->src : c->dst;
		int64_t		from = by_source != NULL ? c->dst : c->src;

		if (i == 0 || at != last)
		{
			out->ptr.push_back(i);
			out->row.push_back(pos[at]);
			last = at;
		}
		out->col.push_back(pos[from]);
		/* the weight as the layouts hold it (float): a deleted edge cancels its layout term */
		out->value.push_back((double) c->count * (double) (float) c->weight);
	}
	out->ptr.push_back(n);
}

/*
 * The indices of edges[n] (sorted by (dst, src, weight), n < 2^32) in (src, dst, weight) order, in
 * the low 32 bits of the returned keys: source << 32 | index sorted by the source's bytes alone (a
 * stable radix sort keeps the targets' order within a source).  keys and tmp are its scratch.
 */
static const uint64_t *
source_order(const PrEdgeChange *edges, int64_t n, std::vector<uint64_t> *keys, std::vector<uint64_t> *tmp)
{
	keys->resize((size_t) n);
	tmp->resize((size_t) n);
	for (int64_t i = 0; i < n; i++)
		(*keys)[(size_t) i] = (uint64_t) edges[i].src << 32 | (uint64_t) i;
	return pr_radix_sort_u64(keys->data(), tmp->data(), (size_t) n, 4);
}

/* Uploads host rows into rows (device arrays listed in list). */
static PrStatus
upload_rows(GpuEngine *e, const HostRows *h, std::vector<void *> *list, GpuDeltaRows *rows, PrError *err)
{
	PrStatus	st;
	size_t		n_rows = h->row.size();
	size_t		n_entries = h->col.size();

	if (n_rows == 0)
		return PR_OK;
	if ((st = gpu_dev_upload_in(e, list, (void **) &rows->row, h->row.data(), n_rows * 4, err)) != PR_OK ||
		(st = gpu_dev_upload_in(e, list, (void **) &rows->ptr, h->ptr.data(), (n_rows + 1) * 8, err)) != PR_OK ||
		(st = gpu_dev_upload_in(e, list, (void **) &rows->col, h->col.data(), n_entries * 4, err)) != PR_OK ||
		(st = gpu_dev_upload_in(e, list, (void **) &rows->value, h->value.data(), n_entries * 8, err)) != PR_OK)
		return st;
	rows->rows = (int64_t) n_rows;
	return PR_OK;
}

/*
 * Builds the rows of edges[n] (sorted by (dst, src, weight)) into layer's device arrays (its host
 * edges are the caller's): by target, and by source when the engine has the push product.  On
 * failure the arrays made so far stay listed in layer (layer_free_device frees them).
 */
static PrStatus
layer_upload(GpuEngine *e, const PrEdgeChange *edges, int64_t n, GpuDeltaLayer *layer, PrError *err)
{
	HostRows	rows;
	size_t		before = e->report.total_bytes;
	PrStatus	st;

	host_rows(e, edges, n, NULL, &rows);
	st = upload_rows(e, &rows, &layer->allocs, &layer->pull, err);
	if (st == PR_OK && e->push.kind != MATRIX_NONE)
	{
		std::vector<uint64_t> keys,
					tmp;

		host_rows(e, edges, n, source_order(edges, n, &keys, &tmp), &rows);
		st = upload_rows(e, &rows, &layer->allocs, &layer->push, err);
	}
	layer->bytes = e->report.total_bytes - before;
	return st;
}

/* 1 / out-strength as the layout holds it (0 for a dangling node). */
static double
inverse_strength(double strength)
{
	return strength > 0.0 ? 1.0 / strength : 0.0;
}

/* A walk over the nodes whose 1 / out-strength a delta sets: its sources and absent nodes, ascending. */
struct NodeWalk
{
	const int32_t *sources;
	const double *strength;
	int64_t		n_sources;
	const int32_t *absent;
	int64_t		n_absent;
	int64_t		s;				/* the next source */
	int64_t		a;				/* the next absent node */
};

/* A walk over the lists given. */
static NodeWalk
node_walk(const int32_t *sources, const double *strength, int64_t n_sources, const int32_t *absent, int64_t n_absent)
{
	NodeWalk	w = {sources, strength, n_sources, absent, n_absent, 0, 0};

	return w;
}

/* The next node either list names (INT64_MAX: none left). */
static int64_t
walk_next(const NodeWalk *w)
{
	int64_t		next = w->s < w->n_sources ? w->sources[w->s] : INT64_MAX;

	return w->a < w->n_absent && w->absent[w->a] < next ? w->absent[w->a] : next;
}

/* 1 / out-strength of node v (no lower than walk_next) in the graph the walk's delta serves: -0
 * when absent, from its out-strength when a source, else the prepared graph's; the walk moves past v. */
static double
walk_inverse(NodeWalk *w, const PrGraph *g, int64_t v)
{
	double		inverse = inverse_strength(g->out_strength[v]);

	if (w->s < w->n_sources && w->sources[w->s] == v)
		inverse = inverse_strength(w->strength[w->s++]);
	if (w->a < w->n_absent && w->absent[w->a] == v)
	{
		inverse = -0.0;
		w->a++;
	}
	return inverse;
}

/* Whether two walks say the same of node v (the next node of either): both or neither name it
 * absent, and both or neither a source, with the same out-strength bits. */
static bool
walks_agree(const NodeWalk *x, const NodeWalk *y, int64_t v)
{
	bool		x_source = x->s < x->n_sources && x->sources[x->s] == v;
	bool		y_source = y->s < y->n_sources && y->sources[y->s] == v;
	bool		x_absent = x->a < x->n_absent && x->absent[x->a] == v;
	bool		y_absent = y->a < y->n_absent && y->absent[y->a] == v;

	return x_source == y_source && x_absent == y_absent &&
		(!x_source || memcmp(&x->strength[x->s], &y->strength[y->s], sizeof(double)) == 0);
}

/* Moves a walk past node v (no lower than walk_next). */
static void
walk_skip(NodeWalk *w, int64_t v)
{
	if (w->s < w->n_sources && w->sources[w->s] == v)
		w->s++;
	if (w->a < w->n_absent && w->absent[w->a] == v)
		w->a++;
}

/*
 * The entries of 1 / out-strength that change when the engine goes from the delta the device holds
 * (none after a new layout: the prepared graph's values) to delta, at private positions: one walk
 * over both deltas' sources and absent nodes (ascending, no sort), an entry listed only where its
 * bits change (-0 and 0 differ: absent and dangling).  A node both deltas describe alike is passed
 * over without reading the prepared graph's out-strength: under steady writes nearly all of them.
 */
static void
inverse_changes(const GpuEngine *e, const PrGraphDelta *delta, std::vector<int32_t> *pos,
				std::vector<double> *value)
{
	const PrGraph *g = e->prep_graph;
	bool		held = e->delta_on_device;
	NodeWalk	before = node_walk(e->delta_sources.data(), e->delta_strength.data(),
								   held ? (int64_t) e->delta_sources.size() : 0, e->delta_absent.data(),
								   held ? (int64_t) e->delta_absent.size() : 0);
	NodeWalk	after = node_walk(delta->sources, delta->out_strength, delta->n_sources, delta->absent,
								  delta->n_absent);

	for (;;)
	{
		int64_t		v = walk_next(&before) < walk_next(&after) ? walk_next(&before) : walk_next(&after);
		double		was,
					now;

		if (v == INT64_MAX)
			break;
		if (walks_agree(&before, &after, v))
		{
			walk_skip(&before, v);
			walk_skip(&after, v);
			continue;
		}
		was = walk_inverse(&before, g, v);
		now = walk_inverse(&after, g, v);
		if (memcmp(&was, &now, sizeof(double)) != 0)
		{
			pos->push_back(e->old_to_new_host[v]);
			value->push_back(now);
		}
	}
}

/* Writes value[i] into 1 / out-strength at position pos[i] on the device (and waits for it). */
static PrStatus
scatter_inverses(GpuEngine *e, const std::vector<int32_t> &pos, const std::vector<double> &value, PrError *err)
{
	/* the lists live only until the scatter ran */
	std::vector<void *> scratch;
	void	   *pos_dev = NULL;
	void	   *value_dev = NULL;
	size_t		before = e->report.total_bytes;
	PrStatus	st;

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
	e->report.total_bytes = before;
	return st;
}

/* Gives to (whose device arrays are freed) the rows of from, and edges as its host edges. */
static void
layer_take(GpuDeltaLayer *to, GpuDeltaLayer *from, std::vector<PrEdgeChange> *edges)
{
	to->edges.swap(*edges);
	to->pull = from->pull;
	to->push = from->push;
	to->allocs.swap(from->allocs);
	to->bytes = from->bytes;
	from->bytes = 0;
}

/*
 * Serves the prepared graph plus delta from now on (see pr_engine.h): the recent layer rebuilt as
 * delta's edges less the frozen layer's, or, past the fold bound (or with no layer on the device),
 * the frozen layer rebuilt from delta's edges and the recent one emptied; the entries of
 * 1 / out-strength that change rewritten.  Everything that can fail runs before the engine's
 * state changes.
 */
PrStatus
gpu_apply_delta(PrEngine *base, const PrGraphDelta *delta, PrError *err)
{
	GpuEngine  *e = (GpuEngine *) base;
	PrGraphDelta none;
	GpuDeltaLayer fresh = GpuDeltaLayer();
	GpuDeltaSpare *spare = &e->delta_spare;
	std::vector<int32_t> pos;
	std::vector<double> value;
	const std::vector<PrEdgeChange> &frozen = e->delta_frozen.edges;
	int64_t		n_diff = 0;
	bool		fold;
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
	if (delta->n_edges > (int64_t) UINT32_MAX)
		return pr_error_set(err, PR_ERR_TOO_LARGE, "GPU engine: a delta of %lld edges (at most %llu)",
							(long long) delta->n_edges, (unsigned long long) UINT32_MAX);
	PR_CUDA(cudaSetDevice(e->opt.device));

	/* the layer to build: recent (delta less frozen) or, folding, frozen (delta's edges) */
	fold = !e->delta_on_device || delta->n_edges == 0;
	if (!fold)
	{
		if (spare->diff.size() < (size_t) delta->n_edges + frozen.size())
			spare->diff.resize((size_t) delta->n_edges + frozen.size());
		n_diff = pr_graph_delta_edges_diff(delta->edges, delta->n_edges, frozen.data(),
										   (int64_t) frozen.size(), spare->diff.data());
		fold = n_diff > (int64_t) frozen.size() / DELTA_FOLD_FRACTION +
			(e->bench.delta_fold_edges > 0 ? e->bench.delta_fold_edges : 0);
	}
	/* the new lists fill the memory the last apply let go of */
	std::vector<PrEdgeChange> edges;
	std::vector<int32_t> sources,
				absent;
	std::vector<double> strength;

	edges.swap(spare->edges);
	sources.swap(spare->sources);
	strength.swap(spare->strength);
	absent.swap(spare->absent);
	if (fold)
		edges.assign(delta->edges, delta->edges + delta->n_edges);
	else
		edges.assign(spare->diff.data(), spare->diff.data() + n_diff);
	sources.assign(delta->sources, delta->sources + delta->n_sources);
	strength.assign(delta->out_strength, delta->out_strength + delta->n_sources);
	absent.assign(delta->absent, delta->absent + delta->n_absent);
	inverse_changes(e, delta, &pos, &value);

	st = layer_upload(e, edges.data(), (int64_t) edges.size(), &fresh, err);
	if (st == PR_OK && !pos.empty())
		st = scatter_inverses(e, pos, value, err);
	if (st != PR_OK)
	{
		/* the engine serves what it served (a failed scatter aside, which is an engine error) */
		layer_free_device(e, &fresh);
		edges.swap(spare->edges);
		sources.swap(spare->sources);
		strength.swap(spare->strength);
		absent.swap(spare->absent);
		return st;
	}
	layer_free_device(e, &e->delta_recent);
	if (fold)
	{
		layer_free_device(e, &e->delta_frozen);
		/* the old frozen edges come back in edges; the recent ones go to the spare below */
		layer_take(&e->delta_frozen, &fresh, &edges);
		edges.clear();
		e->delta_recent.edges.swap(edges);
		e->delta_folds++;
	}
	else
		layer_take(&e->delta_recent, &fresh, &edges);
	e->delta_sources.swap(sources);
	e->delta_strength.swap(strength);
	e->delta_absent.swap(absent);
	/* what was replaced is the next apply's memory */
	edges.clear();
	edges.swap(spare->edges);
	sources.swap(spare->sources);
	strength.swap(spare->strength);
	absent.swap(spare->absent);
	e->delta_on_device = true;
	for (int s = 0; s < e->n_slots; s++)
		e->dangling_valid[s] = false;
	e->z_owner = -1;
	e->far_field_stale = true;
	return PR_OK;
}

/* Enqueues one layer's terms (rows) into y, in its input in. */
template <typename T>
static PrStatus
layer_add(GpuEngine *e, const GpuDeltaRows *rows, const void *in, void *y, PrError *err)
{
	if (rows->rows == 0)
		return PR_OK;
	k_delta_rows<T><<<delta_grid(rows->rows * e->k), PR_THREADS, 0, e->stream>>>(
		rows->rows, e->k, rows->row, rows->ptr, rows->col, rows->value, (const T *) in, (T *) y);
	PR_LAUNCHED();
	return PR_OK;
}

/* Enqueues the delta's terms of product into y, in its input in: the frozen layer's, then the
 * recent one's (nothing without a delta). */
template <typename T>
PrStatus
gpu_delta_add(GpuEngine *e, PrProduct product, const void *in, void *y, PrError *err)
{
	bool		push = product == PR_PRODUCT_PUSH;
	PrStatus	st = layer_add<T>(e, push ? &e->delta_frozen.push : &e->delta_frozen.pull, in, y, err);

	if (st == PR_OK)
		st = layer_add<T>(e, push ? &e->delta_recent.push : &e->delta_recent.pull, in, y, err);
	return st;
}

template PrStatus gpu_delta_add<float>(GpuEngine *e, PrProduct product, const void *in, void *y, PrError *err);
template PrStatus gpu_delta_add<double>(GpuEngine *e, PrProduct product, const void *in, void *y, PrError *err);
