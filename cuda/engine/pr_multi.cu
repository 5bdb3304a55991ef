/*
 * pr_multi.cu — several GPUs as one engine (see pr_multi.h): the NCCL communicators, and the
 * exchange of the parts engine (core/pr_parts.h) over one single-GPU engine per GPU, which makes
 * every GPU's copy of a product's result whole: the owners' rows gathered after a pull product,
 * the partial sums added after a push product.
 *
 * The gather of slot s, rows [b_p, b_{p+1}) owned by GPU p: every part engine keeps the parts'
 * order (PrGpuOptions.graph_order), so those rows are one range of every GPU's slot, copied from
 * owner q's slot into the same range of every other GPU's slot, one of three ways, whichever was
 * fastest when the engine first gathered a slot of that width (bytes a row): the copy engines
 * (cudaMemcpyPeerAsync, a stream per ordered pair, ordered by events after the products and before
 * the next operation), in-place NCCL broadcasts, one per owner, or, when the ranges are of one
 * length C (b_p = p * C, the parts engine's split), one in-place ncclAllGather of C rows a GPU (the
 * last range padded into the spare rows past n, PR_VECTOR_SPARE_ROWS).  The sum runs one in-place
 * ncclAllReduce per GPU in one group.  Everything is enqueued on streams: apart from the first
 * gather of a width, the host does not wait.
 */
#include "pr_multi.h"
#include "pr_parts.h"
#include "pr_gpu_slot.h"
#include "pr_gpu_status.h"
#include "pr_residency.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Records a failed CUDA call in err and returns its status from the enclosing function. */
#define PRM_CUDA(call) PR_CUDA_OR_RETURN("multi-GPU", call)

/* Records a failed NCCL call (its text, NCCL's reason, file and line) in err; returns the status. */
static inline PrStatus
pr_nccl_failed(PrError *err, ncclResult_t status, const char *module, const char *call,
			   const char *file, int line)
{
	return pr_gpu_call_failed(err, false, module, call, ncclGetErrorString(status), file, line);
}

/* Checks an NCCL call; on failure records it in the enclosing function's err and returns. */
#define PRM_NCCL(call) \
	PR_GPU_CALL_OR_RETURN(ncclResult_t, ncclSuccess, pr_nccl_failed, "multi-GPU", call, #call)

/* The communicators: sets[G] holds G communicators over GPUs 0 .. G-1 (rank g on GPU g), or NULL
 * until an engine over G GPUs asks for them. */
struct PrMultiComms
{
	int			count;			/* GPUs of the set made at creation, the most an engine takes */
	ncclComm_t *sets[PR_PARTS_MAX + 1];
};

/* How a gather moves the rows: the copy engines, NCCL broadcasts, or one NCCL all-gather. */
typedef enum GatherWay
{
	GATHER_COPY_ENGINES = 0,
	GATHER_BROADCAST,
	GATHER_ALL_GATHER,
	GATHER_WAYS
} GatherWay;

/* Slot widths (bytes a row) whose gather way is measured and kept. */
#define GATHER_WIDTHS 8

/*
 * The exchange of one engine: its GPUs' communicators, and for the copies of the gather a stream
 * per ordered pair of GPUs (copy[q][g], on q: q's rows into g) with the events that order them
 * after the products and before the next operation; and the gather way measured for each slot
 * width met so far.
 */
typedef struct MultiExchange
{
	int			n_gpus;
	ncclComm_t *comm;			/* [n_gpus], borrowed from the PrMultiComms */
	cudaStream_t copy[PR_PARTS_MAX][PR_PARTS_MAX];	/* NULL where not made, as the events */
	cudaEvent_t ready[PR_PARTS_MAX];	/* on g: its buffer written, no longer read by its stream */
	cudaEvent_t copied[PR_PARTS_MAX][PR_PARTS_MAX];	/* on q: q's rows are in g's buffer */
	int			n_widths;
	size_t		width[GATHER_WIDTHS];	/* bytes a row */
	GatherWay	way[GATHER_WIDTHS];	/* the faster way for that width */
} MultiExchange;

/* Zeroed host memory of bytes, or NULL with err set. */
static void *
zeroed(size_t bytes, PrError *err)
{
	void	   *p = calloc(1, bytes);

	if (p == NULL)
		pr_error_set(err, PR_ERR_NOMEM, "multi-GPU: out of host memory");
	return p;
}

/* The communicators over GPUs 0 .. n_gpus-1, made on first use (ncclCommInitAll). */
static PrStatus
comm_set(PrMultiComms *comms, int n_gpus, ncclComm_t **out, PrError *err)
{
	int			devices[PR_PARTS_MAX];
	ncclComm_t *set;
	ncclResult_t r;

	if (comms->sets[n_gpus] == NULL)
	{
		set = (ncclComm_t *) zeroed((size_t) n_gpus * sizeof(ncclComm_t), err);
		if (set == NULL)
			return PR_ERR_NOMEM;
		for (int g = 0; g < n_gpus; g++)
			devices[g] = g;
		r = ncclCommInitAll(set, n_gpus, devices);
		if (r != ncclSuccess)
		{
			free(set);
			return pr_nccl_failed(err, r, "multi-GPU", "ncclCommInitAll", __FILE__, __LINE__);
		}
		comms->sets[n_gpus] = set;
	}
	*out = comms->sets[n_gpus];
	return PR_OK;
}

/* Starts NCCL over GPUs 0 .. n_gpus-1. */
PrMultiComms *
pr_multi_comms_create(int n_gpus, PrError *err)
{
	int			visible = pr_gpu_device_count();
	PrMultiComms *comms;
	ncclComm_t *set;

	if (n_gpus < 2 || n_gpus > visible || n_gpus > PR_PARTS_MAX)
	{
		pr_error_set(err, PR_ERR_INVALID, "multi-GPU: %d GPUs asked, %d visible (the engine takes 2 to %d)",
					 n_gpus, visible, PR_PARTS_MAX);
		return NULL;
	}
	/*
	 * A tuning default, never an override: at least 32 channels for the exchange unless the
	 * environment sets NCCL_MIN_NCHANNELS (NCCL reads it when its first communicator starts).
	 */
	if (setenv("NCCL_MIN_NCHANNELS", "32", 0) != 0)
	{
		pr_error_set(err, PR_ERR_ENGINE, "multi-GPU: setenv NCCL_MIN_NCHANNELS failed");
		return NULL;
	}
	if ((comms = (PrMultiComms *) zeroed(sizeof(PrMultiComms), err)) == NULL)
		return NULL;
	comms->count = n_gpus;
	if (comm_set(comms, n_gpus, &set, err) != PR_OK)
	{
		free(comms);
		return NULL;
	}
	return comms;
}

/* The GPUs comms spans. */
int
pr_multi_comms_count(const PrMultiComms *comms)
{
	return comms != NULL ? comms->count : 0;
}

/* Frees the communicators. */
void
pr_multi_comms_free(PrMultiComms *comms)
{
	if (comms == NULL)
		return;
	for (int size = 0; size <= PR_PARTS_MAX; size++)
	{
		if (comms->sets[size] == NULL)
			continue;
		for (int g = 0; g < size; g++)
			ncclCommDestroy(comms->sets[size][g]);
		free(comms->sets[size]);
	}
	free(comms);
}

/*
 * Lets every GPU read and write every other GPU's memory where the hardware allows (NVLink, or
 * PCIe peer-to-peer); a copy between GPUs without it goes through host memory, slower but right.
 */
static PrStatus
enable_peer_access(int n_gpus, PrError *err)
{
	for (int g = 0; g < n_gpus; g++)
	{
		PRM_CUDA(cudaSetDevice(g));
		for (int h = 0; h < n_gpus; h++)
		{
			int			can = 0;
			cudaError_t r;

			if (h == g)
				continue;
			PRM_CUDA(cudaDeviceCanAccessPeer(&can, g, h));
			if (!can)
				continue;
			/*
			 * Already enabled (another engine of this process) or refused (too many peers): the
			 * copies work either way, through host memory when refused.
			 */
			r = cudaDeviceEnablePeerAccess(h, 0);
			if (r != cudaSuccess)
				cudaGetLastError();
		}
	}
	return PR_OK;
}

/* Makes the gather's copy streams and events (with the engine; multi_release frees those made). */
static PrStatus
make_copy_streams(MultiExchange *x, PrError *err)
{
	for (int q = 0; q < x->n_gpus; q++)
	{
		PRM_CUDA(cudaSetDevice(q));
		PRM_CUDA(cudaEventCreateWithFlags(&x->ready[q], cudaEventDisableTiming));
		for (int g = 0; g < x->n_gpus; g++)
			if (g != q)
			{
				PRM_CUDA(cudaStreamCreateWithFlags(&x->copy[q][g], cudaStreamNonBlocking));
				PRM_CUDA(cudaEventCreateWithFlags(&x->copied[q][g], cudaEventDisableTiming));
			}
	}
	return PR_OK;
}

/*
 * Enqueues the copy of every GPU q's rows [row_begin[q], row_begin[q+1]) from its slot into the
 * same rows of every other GPU's slot, by the copy engines (no kernel: the GPUs' cores stay
 * free), each pair on its own stream, all at once: a copy starts when both GPUs' streams have
 * reached it, and each GPU's stream goes on when every copy into or out of its slot has ended.
 */
static PrStatus
copy_rows(MultiExchange *x, const PrGpuSlotView *view, const int64_t *row_begin, PrError *err)
{
	size_t		row_bytes = (size_t) view[0].k * view[0].elem;

	for (int g = 0; g < x->n_gpus; g++)
	{
		PRM_CUDA(cudaSetDevice(g));
		PRM_CUDA(cudaEventRecord(x->ready[g], view[g].stream));
	}
	for (int q = 0; q < x->n_gpus; q++)
	{
		size_t		offset = (size_t) row_begin[q] * row_bytes;
		size_t		bytes = (size_t) (row_begin[q + 1] - row_begin[q]) * row_bytes;

		PRM_CUDA(cudaSetDevice(q));
		for (int g = 0; g < x->n_gpus; g++)
		{
			if (g == q)
				continue;
			PRM_CUDA(cudaStreamWaitEvent(x->copy[q][g], x->ready[q], 0));
			PRM_CUDA(cudaStreamWaitEvent(x->copy[q][g], x->ready[g], 0));
			if (bytes > 0)
				PRM_CUDA(cudaMemcpyPeerAsync((char *) view[g].data + offset, g, (const char *) view[q].data + offset,
											 q, bytes, x->copy[q][g]));
			PRM_CUDA(cudaEventRecord(x->copied[q][g], x->copy[q][g]));
		}
	}
	for (int g = 0; g < x->n_gpus; g++)
	{
		PRM_CUDA(cudaSetDevice(g));
		for (int q = 0; q < x->n_gpus; q++)
			if (q != g)
			{
				/* the copies into g's slot, and those out of it (its next operations rewrite it) */
				PRM_CUDA(cudaStreamWaitEvent(view[g].stream, x->copied[q][g], 0));
				PRM_CUDA(cudaStreamWaitEvent(view[g].stream, x->copied[g][q], 0));
			}
	}
	return PR_OK;
}

/*
 * Closes the NCCL group of a collective's calls (also after a failed call: the group is closed either
 * way) and returns the first failure: the call's (r, named by call), else the group's end.
 */
static PrStatus
group_end(ncclResult_t r, const char *call, PrError *err)
{
	ncclResult_t end = ncclGroupEnd();

	if (r != ncclSuccess)
		return pr_nccl_failed(err, r, "multi-GPU", call, __FILE__, __LINE__);
	if (end != ncclSuccess)
		return pr_nccl_failed(err, end, "multi-GPU", "ncclGroupEnd", __FILE__, __LINE__);
	return PR_OK;
}

/*
 * Enqueues a broadcast of every GPU q's rows [row_begin[q], row_begin[q+1]) from its slot into the
 * same rows of every other GPU's slot: one in-place ncclBroadcast per owner and GPU, in one group,
 * on the engines' own streams (NCCL's kernels, which use the GPUs' cores, order them there).
 */
static PrStatus
broadcast_rows(MultiExchange *x, const PrGpuSlotView *view, const int64_t *row_begin, PrError *err)
{
	size_t		row_values = (size_t) view[0].k;
	ncclResult_t r = ncclSuccess;

	PRM_NCCL(ncclGroupStart());
	for (int q = 0; q < x->n_gpus && r == ncclSuccess; q++)
	{
		size_t		offset = (size_t) row_begin[q] * row_values * view[0].elem;
		size_t		count = (size_t) (row_begin[q + 1] - row_begin[q]) * row_values;

		for (int g = 0; g < x->n_gpus && r == ncclSuccess && count > 0; g++)
			r = ncclBroadcast((char *) view[g].data + offset, (char *) view[g].data + offset, count,
							  view[0].elem == 8 ? ncclDouble : ncclFloat, q, x->comm[g], view[g].stream);
	}
	return group_end(r, "ncclBroadcast", err);
}

/*
 * The rows of each range when the ranges are of one length (row_begin[p] = p * C, the last range
 * at most C rows) and a slot holds the last one padded to C rows (within its spare rows); else 0:
 * no all-gather.
 */
static int64_t
equal_range_rows(int n_gpus, const int64_t *row_begin, int64_t n)
{
	int64_t		rows = row_begin[1];

	for (int p = 1; p < n_gpus; p++)
		if (row_begin[p] != p * rows)
			return 0;
	if (n - row_begin[n_gpus - 1] > rows || (int64_t) n_gpus * rows > n + PR_VECTOR_SPARE_ROWS)
		return 0;
	return rows;
}

/*
 * Enqueues one in-place ncclAllGather per GPU, in one group, of the ranges of rows equal_range_rows
 * found (GPU g sends rows [g * C, (g + 1) * C), the last GPU's past n from its spare rows), on the
 * engines' own streams.
 */
static PrStatus
all_gather_rows(MultiExchange *x, const PrGpuSlotView *view, int64_t range_rows, PrError *err)
{
	size_t		count = (size_t) range_rows * (size_t) view[0].k;
	ncclResult_t r = ncclSuccess;

	PRM_NCCL(ncclGroupStart());
	for (int g = 0; g < x->n_gpus && r == ncclSuccess; g++)
		r = ncclAllGather((char *) view[g].data + (size_t) g * count * view[0].elem, view[g].data, count,
						  view[0].elem == 8 ? ncclDouble : ncclFloat, x->comm[g], view[g].stream);
	return group_end(r, "ncclAllGather", err);
}

/* Enqueues a gather of the rows the chosen way. */
static PrStatus
gather_rows(MultiExchange *x, GatherWay way, const PrGpuSlotView *view, const int64_t *row_begin, PrError *err)
{
	if (way == GATHER_ALL_GATHER)
		return all_gather_rows(x, view, equal_range_rows(x->n_gpus, row_begin, view[0].n), err);
	return way == GATHER_BROADCAST ? broadcast_rows(x, view, row_begin, err) : copy_rows(x, view, row_begin, err);
}

/* Waits for every GPU's stream. */
static PrStatus
wait_streams(const MultiExchange *x, const PrGpuSlotView *view, PrError *err)
{
	for (int g = 0; g < x->n_gpus; g++)
	{
		PRM_CUDA(cudaSetDevice(view[g].device));
		PRM_CUDA(cudaStreamSynchronize(view[g].stream));
	}
	return PR_OK;
}

/* Gathers timed on one slot width: each way once to start, then as many times each, alternating. */
#define GATHER_TRIALS 5

/*
 * The fastest gather way for the slot's width: measured the first time a width is met, on the slot
 * itself (a gather leaves the slot as it found it once done, so repeating it changes nothing), the
 * host waiting for every GPU around each trial; kept for the engine's life (the all-gather only
 * where the ranges are of one length).  Which way wins depends on the interconnect, the GPU count
 * and the bytes: on four H200s (NVSwitch) the copy engines moved one column faster and eight
 * columns slower than NCCL's broadcasts.
 */
static PrStatus
gather_way(MultiExchange *x, const PrGpuSlotView *view, const int64_t *row_begin, GatherWay *way, PrError *err)
{
	size_t		width = (size_t) view[0].k * view[0].elem;
	int			ways = equal_range_rows(x->n_gpus, row_begin, view[0].n) > 0 ? GATHER_WAYS : GATHER_ALL_GATHER;
	double		best[GATHER_WAYS] = {0.0, 0.0, 0.0};
	PrStatus	st;

	for (int i = 0; i < x->n_widths; i++)
		if (x->width[i] == width)
		{
			*way = x->way[i];
			return PR_OK;
		}
	if ((st = wait_streams(x, view, err)) != PR_OK)
		return st;
	for (int trial = 0; trial <= GATHER_TRIALS; trial++)
		for (int w = 0; w < ways; w++)
		{
			double		t0 = pr_clock_seconds(),
						seconds;

			if ((st = gather_rows(x, (GatherWay) w, view, row_begin, err)) != PR_OK ||
				(st = wait_streams(x, view, err)) != PR_OK)
				return st;
			seconds = pr_clock_seconds() - t0;
			if (trial > 0 && (trial == 1 || seconds < best[w]))
				best[w] = seconds;
		}
	*way = GATHER_COPY_ENGINES;
	for (int w = 1; w < ways; w++)
		if (best[w] < best[*way])
			*way = (GatherWay) w;
	if (x->n_widths < GATHER_WIDTHS)
	{
		x->width[x->n_widths] = width;
		x->way[x->n_widths++] = *way;
	}
	return PR_OK;
}

/*
 * Each GPU's view of slot (view[p]), checked to be the same shape on GPU p for every part, and
 * the engines told that the slot is being rewritten (also when a later step fails).  With
 * product_input, the views of the slots' scaled copies when every GPU has one to exchange
 * (pr_gpu_engine_product_input; *scaled set), else of the slots.
 */
static PrStatus
slot_views(MultiExchange *x, PrEngine *const *parts, int n_parts, int k, int slot, bool product_input,
		   PrGpuSlotView *view, bool *scaled, PrError *err)
{
	PrStatus	st;

	if (n_parts < 2 || n_parts != x->n_gpus)
		return pr_error_set(err, PR_ERR_INVALID, "multi-GPU: %d parts for an exchange over %d GPUs", n_parts,
							x->n_gpus);
	memset(view, 0, sizeof(PrGpuSlotView) * (size_t) n_parts);
	*scaled = product_input;
	for (int p = 0; product_input && p < n_parts; p++)
	{
		bool		part_scaled = false;

		if ((st = pr_gpu_engine_product_input(parts[p], slot, &view[p], &part_scaled, err)) != PR_OK)
			return st;
		*scaled = *scaled && part_scaled;
	}
	for (int p = 0; p < n_parts; p++)
	{
		if (!*scaled && (st = pr_gpu_engine_slot(parts[p], slot, &view[p], err)) != PR_OK)
			return st;
		if (view[p].device != p || view[p].elem != view[0].elem || view[p].n != view[0].n || view[p].k != k)
			return pr_error_set(err, PR_ERR_INVALID,
								"multi-GPU: part %d (device %d, %lld x %d values of %zu bytes) does not match the exchange",
								p, view[p].device, (long long) view[p].n, view[p].k, view[p].elem);
		if (view[p].new_to_old != NULL)
			return pr_error_set(err, PR_ERR_INVALID,
								"multi-GPU: part %d keeps a private order; the exchange needs the parts' order", p);
	}
	for (int p = 0; p < n_parts; p++)
	{
		if (*scaled)
			pr_gpu_engine_product_input_changed(parts[p], slot);
		else
			pr_gpu_engine_slot_changed(parts[p], slot);
	}
	return PR_OK;
}

/*
 * The exchange (PrPartsExchange.gather): makes rows [row_begin[p], row_begin[p+1]) of slot on
 * every GPU equal to GPU p's, for every p; with product_input, of the slot's scaled copies where
 * every GPU has one (pr_gpu_engine_product_input; *values_moved false), else of the slots.
 */
static PrStatus
multi_gather(void *arg, PrEngine *const *parts, int n_parts, const int64_t *row_begin, int k, int slot,
			 bool product_input, bool *values_moved, PrError *err)
{
	MultiExchange *x = (MultiExchange *) arg;
	PrGpuSlotView view[PR_PARTS_MAX];
	GatherWay	way;
	bool		scaled = false;
	PrStatus	st;

	*values_moved = true;
	if ((st = slot_views(x, parts, n_parts, k, slot, product_input, view, &scaled, err)) != PR_OK)
		return st;
	*values_moved = !scaled;
	for (int p = 0; p < n_parts; p++)
		if (row_begin[p] < 0 || row_begin[p] > row_begin[p + 1])
			return pr_error_set(err, PR_ERR_INVALID, "multi-GPU: the rows of part %d are not a range", p);
	if (row_begin[0] != 0 || row_begin[n_parts] != view[0].n)
		return pr_error_set(err, PR_ERR_INVALID, "multi-GPU: the parts' rows do not cover the %lld nodes",
							(long long) view[0].n);
	if (view[0].n == 0)
		return PR_OK;
	if ((st = gather_way(x, view, row_begin, &way, err)) != PR_OK)
		return st;
	return gather_rows(x, way, view, row_begin, err);
}

/*
 * The exchange (PrPartsExchange.sum): makes every value of slot on every GPU the sum over the
 * GPUs, by one in-place ncclAllReduce per GPU in one group (the same bits on every GPU).
 */
static PrStatus
multi_sum(void *arg, PrEngine *const *parts, int n_parts, int64_t n, int k, int slot, PrError *err)
{
	MultiExchange *x = (MultiExchange *) arg;
	PrGpuSlotView view[PR_PARTS_MAX];
	ncclResult_t r = ncclSuccess;
	bool		scaled = false;
	PrStatus	st;

	if ((st = slot_views(x, parts, n_parts, k, slot, false, view, &scaled, err)) != PR_OK)
		return st;
	if (view[0].n != n)
		return pr_error_set(err, PR_ERR_INVALID, "multi-GPU: a sum of %lld rows over slots of %lld", (long long) n,
							(long long) view[0].n);
	if (n == 0)
		return PR_OK;
	PRM_NCCL(ncclGroupStart());
	for (int g = 0; g < n_parts && r == ncclSuccess; g++)
		r = ncclAllReduce(view[g].data, view[g].data, (size_t) n * (size_t) k, view[0].elem == 8 ? ncclDouble : ncclFloat,
						  ncclSum, x->comm[g], view[g].stream);
	return group_end(r, "ncclAllReduce", err);
}

/* Frees an exchange's streams and events (PrPartsExchange.release). */
static void
multi_release(void *arg)
{
	MultiExchange *x = (MultiExchange *) arg;

	if (x == NULL)
		return;
	for (int p = 0; p < x->n_gpus; p++)
	{
		if (cudaSetDevice(p) != cudaSuccess)
			continue;
		cudaDeviceSynchronize();	/* work of the last exchange may still use them */
		if (x->ready[p] != NULL)
			cudaEventDestroy(x->ready[p]);
		for (int g = 0; g < x->n_gpus; g++)
		{
			if (x->copy[p][g] != NULL)
				cudaStreamDestroy(x->copy[p][g]);
			if (x->copied[p][g] != NULL)
				cudaEventDestroy(x->copied[p][g]);
		}
	}
	cudaGetLastError();
	free(x);
}

/* The gather way measured for each slot width (PrPartsExchange.describe). */
static void
multi_describe(void *arg, char *buf, size_t size)
{
	static const char *const names[GATHER_WAYS] = {"copy engines", "broadcasts", "all-gather"};
	const MultiExchange *x = (const MultiExchange *) arg;
	size_t		used = 0;

	buf[0] = '\0';
	for (int i = 0; i < x->n_widths && used < size; i++)
	{
		int			wrote = snprintf(buf + used, size - used, "%s%zu B a row: %s", i > 0 ? ", " : "",
									 x->width[i], names[x->way[i]]);

		if (wrote < 0)
			break;
		used += (size_t) wrote;
	}
}

/* An engine over GPUs 0 .. n_gpus-1. */
PrEngine   *
pr_multi_engine_create(PrMultiComms *comms, const PrGpuOptions *gpu, int n_gpus, PrError *err)
{
	PrGpuOptions opts;
	PrEngine   *parts[PR_PARTS_MAX];
	PrPartsExchange exchange;
	MultiExchange *x;
	ncclComm_t *set;

	if (comms == NULL)
	{
		pr_error_set(err, PR_ERR_INVALID, "multi-GPU: no communicators");
		return NULL;
	}
	if (n_gpus < 2 || n_gpus > comms->count)
	{
		pr_error_set(err, PR_ERR_INVALID, "multi-GPU: an engine over %d GPUs (2 to %d)", n_gpus, comms->count);
		return NULL;
	}
	if (comm_set(comms, n_gpus, &set, err) != PR_OK ||
		(x = (MultiExchange *) zeroed(sizeof(MultiExchange), err)) == NULL)
		return NULL;
	x->n_gpus = n_gpus;
	x->comm = set;
	if (enable_peer_access(n_gpus, err) != PR_OK || make_copy_streams(x, err) != PR_OK)
	{
		multi_release(x);
		return NULL;
	}
	if (gpu != NULL)
		opts = *gpu;
	else
		pr_gpu_options_init(&opts);
	opts.graph_order = true;	/* the parts engine orders the graph by out-degree */
	for (int g = 0; g < n_gpus; g++)
	{
		opts.device = g;
		parts[g] = pr_gpu_engine_create(&opts, err);
		if (parts[g] == NULL)
		{
			while (--g >= 0)
				parts[g]->ops->release(parts[g]);
			multi_release(x);
			return NULL;
		}
	}
	memset(&exchange, 0, sizeof(exchange));
	exchange.gather = multi_gather;
	exchange.sum = multi_sum;
	exchange.release = multi_release;
	exchange.arg = x;
	exchange.describe = multi_describe;
	return pr_parts_engine_create(parts, n_gpus, &exchange, "gpu-multi", &pr_malloc_allocator, err);
}
