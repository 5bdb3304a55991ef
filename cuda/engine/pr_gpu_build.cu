/*
 * pr_gpu_build.cu — a graph's flat form built on the GPU from its edge rows (see pr_gpu.h).
 *
 * Steps, on one stream:
 *   1. the rows (int64 src, dst) go to the device: host threads copy slices into their own pinned
 *      buffers and send them on their own streams (the rows lie in a shared-memory segment, whose
 *      pages a single copy would fault in one by one);
 *   2. the id map: min and max of every endpoint (cub::DeviceReduce); ids in a range at most
 *      about 2m wide get a direct table (mark, in-place cub::DeviceScan, node ids where the sum
 *      steps), others are sorted (cub::DeviceRadixSort), deduplicated (cub::DeviceSelect::Unique)
 *      and searched; either way node ids come out ascending, as pr_graph_build numbers them;
 *   3. each stored edge becomes one key (destination << b | source), b the bits of n - 1; an
 *      undirected build adds the reversed key of every row that is not a self-loop
 *      (cub::DeviceSelect::Flagged); one radix sort of the keys gives the in-edge CSR with the
 *      sources ascending within a row, parallel edges kept — pr_graph_build's order;
 *   4. row pointers from where the sorted keys' destination changes (no atomics), out-degrees by
 *      atomic counts (exact), the dangling list by cub::DeviceSelect::Flagged (ascending);
 *   5. the arrays go back by the host threads straight into their places of the flat form
 *      (pr_graph_flat_place).
 * Device memory peaks near 56 bytes per row (sorted ids) or 40 (direct table).
 */
#include "pr_gpu.h"
#include "pr_gpu_launch.h"
#include "pr_gpu_status.h"
#include "pr_gpu_buffer.h"
#include "pr_gpu_build_kernels.cuh"

#include <cuda_runtime.h>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Threads per block and most blocks of the grid-stride kernels. */
#define BUILD_BLOCK 256
#define BUILD_MAX_BLOCKS 8192

/* Bytes of one staged copy slice, and host threads (pinned buffer pairs) at most. */
#define BUILD_SLICE_BYTES ((size_t) 8 << 20)
#define BUILD_MAX_COPY_THREADS 16

/* Records a failed CUDA call in err and returns its status from the enclosing function. */
#define BUILD_CUDA(call) PR_CUDA_OR_RETURN("GPU graph build", call)

/* The device buffers of one build (NULL: not allocated). */
typedef struct Build
{
	cudaStream_t stream;
	int64_t    *src;			/* [m] rows */
	int64_t    *dst;
	int32_t    *rank_src;		/* [m] internal ids of the rows' endpoints */
	int32_t    *rank_dst;
	int32_t    *table;			/* direct id table: [range] marks, then their inclusive sums */
	int64_t    *ids[2];			/* sorted ids: [2m] endpoints, double-buffered */
	int64_t    *node_ids;		/* [n] (or [2m] before deduplication) */
	uint64_t   *keys[2];		/* [stored] edge keys, double-buffered */
	uint8_t    *flags;			/* [max(m, n)] selection flags */
	int64_t    *in_ptr;			/* [n + 1] */
	int32_t    *in_src;			/* [stored] */
	unsigned long long *out_count;	/* [n] */
	double	   *strength;		/* [n] */
	int32_t    *dangling;		/* [n] */
	int64_t    *scalars;		/* [4]: reductions and selected counts */
	void	   *temp;			/* CUB's temporary storage */
	size_t		temp_bytes;
} Build;

/* Blocks of a grid-stride kernel over count items. */
static unsigned int
grid_for(int64_t count)
{
	return pr_grid_blocks(count, BUILD_BLOCK, BUILD_MAX_BLOCKS);
}

/* cudaMalloc of count elements of T into *ptr (at least one element). */
template <typename T>
static cudaError_t
device_alloc(T **ptr, size_t count)
{
	return cudaMalloc((void **) ptr, (count > 0 ? count : 1) * sizeof(T));
}

/* Frees a device buffer (NULL is fine); the first failure is kept in *first. */
template <typename T>
static void
device_free(T **ptr, cudaError_t *first)
{
	if (*ptr != NULL)
	{
		cudaError_t st = cudaFree((void *) *ptr);

		if (st != cudaSuccess && *first == cudaSuccess)
			*first = st;
	}
	*ptr = NULL;
}

/* Makes CUB's temporary storage at least bytes long. */
static PrStatus
temp_reserve(Build *b, size_t bytes, PrError *err)
{
	return pr_gpu_buffer_reserve(&b->temp, &b->temp_bytes, bytes, "GPU graph build", err);
}

/* ---- staged copies between host memory and the device ---- */

/* One host thread's pinned buffers, stream and events on one device (kept for the life of the
 * process: each device its own, as engines of several GPUs copy to each). */
typedef struct Stage
{
	bool		ready;
	int			device;
	void	   *buf[2];
	cudaStream_t stream;
	cudaEvent_t done[2];
} Stage;

#define BUILD_MAX_DEVICES 64
static Stage stages[BUILD_MAX_DEVICES][BUILD_MAX_COPY_THREADS];
static pthread_mutex_t stages_lock = PTHREAD_MUTEX_INITIALIZER;

/* One contiguous copy of a staged job. */
typedef struct CopySpan
{
	char	   *host;
	char	   *device;
	size_t		bytes;
} CopySpan;

/* A staged copy of several spans, split into slices dealt round robin to the threads. */
typedef struct CopyJob
{
	int			device;
	bool		to_device;
	const CopySpan *spans;
	int			n_spans;
	cudaError_t status[BUILD_MAX_COPY_THREADS];
	const char *failed_call[BUILD_MAX_COPY_THREADS];
} CopyJob;

/* Creates a stage's buffers, stream and events on device (once). */
static cudaError_t
stage_ready(Stage *s, int device)
{
	cudaError_t st;

	if (s->ready)
		return s->device == device ? cudaSuccess : cudaErrorInvalidDevice;
	s->device = device;
	for (int i = 0; i < 2; i++)
	{
		if (s->buf[i] == NULL &&
			(st = cudaHostAlloc(&s->buf[i], BUILD_SLICE_BYTES, cudaHostAllocDefault)) != cudaSuccess)
			return st;
		if (s->done[i] == NULL &&
			(st = cudaEventCreateWithFlags(&s->done[i], cudaEventDisableTiming)) != cudaSuccess)
			return st;
	}
	if (s->stream == NULL &&
		(st = cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking)) != cudaSuccess)
		return st;
	s->ready = true;
	return cudaSuccess;
}

/* Records the first failure of a copy thread. */
#define STAGE_CALL(call) do { \
	cudaError_t stage_status_ = (call); \
	if (stage_status_ != cudaSuccess) { \
		job->status[part] = stage_status_; \
		job->failed_call[part] = #call; \
		return; \
	} \
} while (0)

/* pr_parallel_run's task: thread `part` copies every n_parts-th slice of the job. */
static void
copy_slices(void *arg, int part, int n_parts)
{
	CopyJob    *job = (CopyJob *) arg;
	Stage	   *s = &stages[job->device][part];
	int64_t		slice = 0;
	int			slot = 0;
	char	   *pending_host[2] = {NULL, NULL};
	size_t		pending_bytes[2] = {0, 0};
	bool		busy[2] = {false, false};

	STAGE_CALL(cudaSetDevice(job->device));
	STAGE_CALL(stage_ready(s, job->device));
	for (int sp = 0; sp < job->n_spans; sp++)
	{
		const CopySpan *span = &job->spans[sp];

		for (size_t off = 0; off < span->bytes; off += BUILD_SLICE_BYTES, slice++)
		{
			size_t		len = span->bytes - off < BUILD_SLICE_BYTES ? span->bytes - off : BUILD_SLICE_BYTES;

			if (slice % n_parts != part)
				continue;
			if (busy[slot])
			{
				STAGE_CALL(cudaEventSynchronize(s->done[slot]));
				if (!job->to_device)
					memcpy(pending_host[slot], s->buf[slot], pending_bytes[slot]);
				busy[slot] = false;
			}
			if (job->to_device)
			{
				memcpy(s->buf[slot], span->host + off, len);
				STAGE_CALL(cudaMemcpyAsync(span->device + off, s->buf[slot], len,
										   cudaMemcpyHostToDevice, s->stream));
			}
			else
			{
				STAGE_CALL(cudaMemcpyAsync(s->buf[slot], span->device + off, len,
										   cudaMemcpyDeviceToHost, s->stream));
				pending_host[slot] = span->host + off;
				pending_bytes[slot] = len;
			}
			STAGE_CALL(cudaEventRecord(s->done[slot], s->stream));
			busy[slot] = true;
			slot ^= 1;
		}
	}
	for (int i = 0; i < 2; i++, slot ^= 1)
		if (busy[slot])
		{
			STAGE_CALL(cudaEventSynchronize(s->done[slot]));
			if (!job->to_device)
				memcpy(pending_host[slot], s->buf[slot], pending_bytes[slot]);
			busy[slot] = false;
		}
}

/* Copies the spans to (or from) the device by up to n_threads host threads. */
static PrStatus
staged_copy(int device, bool to_device, const CopySpan *spans, int n_spans, int n_threads,
			PrError *err)
{
	CopyJob		job;
	size_t		slices = 0;

	for (int i = 0; i < n_spans; i++)
		slices += (spans[i].bytes + BUILD_SLICE_BYTES - 1) / BUILD_SLICE_BYTES;
	if (slices == 0)
		return PR_OK;
	if (device < 0 || device >= BUILD_MAX_DEVICES)
		return pr_error_set(err, PR_ERR_UNSUPPORTED, "GPU graph build: device %d (staged copies serve devices 0 to %d)",
							device, BUILD_MAX_DEVICES - 1);
	if (n_threads > BUILD_MAX_COPY_THREADS)
		n_threads = BUILD_MAX_COPY_THREADS;
	if (n_threads < 1)
		n_threads = 1;
	if ((size_t) n_threads > slices)
		n_threads = (int) slices;
	memset(&job, 0, sizeof(job));
	job.device = device;
	job.to_device = to_device;
	job.spans = spans;
	job.n_spans = n_spans;
	pthread_mutex_lock(&stages_lock);
	pr_parallel_run(copy_slices, &job, n_threads);
	pthread_mutex_unlock(&stages_lock);
	for (int t = 0; t < n_threads; t++)
		if (job.status[t] != cudaSuccess)
			return pr_cuda_failed(err, job.status[t], "GPU graph build", job.failed_call[t], __FILE__, __LINE__);
	return PR_OK;
}

/* Copies bytes of host memory to the device by up to n_threads host threads (pr_gpu_buffer.h). */
PrStatus
pr_gpu_copy_to_device(int device, void *dst, const void *src, size_t bytes, int n_threads,
					  PrError *err)
{
	CopySpan	span = {(char *) src, (char *) dst, bytes};

	return staged_copy(device, true, &span, 1, n_threads, err);
}

/* ---- the build ---- */

/* Reads a device scalar. */
static PrStatus
read_scalar(Build *b, int index, int64_t *value, PrError *err)
{
	BUILD_CUDA(cudaMemcpyAsync(value, b->scalars + index, sizeof(int64_t), cudaMemcpyDeviceToHost,
							   b->stream));
	BUILD_CUDA(cudaStreamSynchronize(b->stream));
	return PR_OK;
}

/* min (scalars[0]) and max (scalars[1]) of the endpoints. */
static PrStatus
endpoint_range(Build *b, size_t m, int64_t *lo, int64_t *hi, PrError *err)
{
	size_t		bytes = 0;
	int64_t		v[4];
	PrStatus	status;

	BUILD_CUDA(cub::DeviceReduce::Min(NULL, bytes, b->src, b->scalars, (int64_t) m, b->stream));
	if ((status = temp_reserve(b, bytes, err)) != PR_OK)
		return status;
	BUILD_CUDA(cub::DeviceReduce::Min(b->temp, bytes, b->src, b->scalars, (int64_t) m, b->stream));
	BUILD_CUDA(cub::DeviceReduce::Min(b->temp, bytes, b->dst, b->scalars + 1, (int64_t) m, b->stream));
	BUILD_CUDA(cub::DeviceReduce::Max(NULL, bytes, b->src, b->scalars + 2, (int64_t) m, b->stream));
	if ((status = temp_reserve(b, bytes, err)) != PR_OK)
		return status;
	BUILD_CUDA(cub::DeviceReduce::Max(b->temp, bytes, b->src, b->scalars + 2, (int64_t) m, b->stream));
	BUILD_CUDA(cub::DeviceReduce::Max(b->temp, bytes, b->dst, b->scalars + 3, (int64_t) m, b->stream));
	BUILD_CUDA(cudaMemcpyAsync(v, b->scalars, sizeof(v), cudaMemcpyDeviceToHost, b->stream));
	BUILD_CUDA(cudaStreamSynchronize(b->stream));
	*lo = v[0] < v[1] ? v[0] : v[1];
	*hi = v[2] > v[3] ? v[2] : v[3];
	return PR_OK;
}

/* The id map through a direct table of range entries; sets *n. */
static PrStatus
ids_by_table(Build *b, size_t m, int64_t lo, int64_t range, int64_t *n, PrError *err)
{
	size_t		bytes = 0;
	int32_t		last;
	PrStatus	status;

	BUILD_CUDA(device_alloc(&b->table, (size_t) range));
	BUILD_CUDA(cudaMemsetAsync(b->table, 0, (size_t) range * sizeof(int32_t), b->stream));
	k_mark_ids<<<grid_for((int64_t) m), BUILD_BLOCK, 0, b->stream>>>(b->src, b->dst, (int64_t) m, lo, b->table);
	BUILD_CUDA(cudaGetLastError());
	BUILD_CUDA(cub::DeviceScan::InclusiveSum(NULL, bytes, b->table, b->table, range, b->stream));
	if ((status = temp_reserve(b, bytes, err)) != PR_OK)
		return status;
	BUILD_CUDA(cub::DeviceScan::InclusiveSum(b->temp, bytes, b->table, b->table, range, b->stream));
	BUILD_CUDA(cudaMemcpyAsync(&last, b->table + range - 1, sizeof(int32_t), cudaMemcpyDeviceToHost,
							   b->stream));
	BUILD_CUDA(cudaStreamSynchronize(b->stream));
	*n = last;
	BUILD_CUDA(device_alloc(&b->node_ids, (size_t) *n));
	k_table_node_ids<<<grid_for(range), BUILD_BLOCK, 0, b->stream>>>(b->table, range, lo, b->node_ids);
	BUILD_CUDA(cudaGetLastError());
	k_table_ranks<<<grid_for((int64_t) m), BUILD_BLOCK, 0, b->stream>>>(b->src, b->dst, (int64_t) m, lo,
																		 b->table, b->rank_src, b->rank_dst);
	BUILD_CUDA(cudaGetLastError());
	return PR_OK;
}

/* The id map by sorting and deduplicating every endpoint; sets *n. */
static PrStatus
ids_by_sort(Build *b, size_t m, int64_t *n, PrError *err)
{
	int64_t		count = 2 * (int64_t) m;
	size_t		bytes = 0,
				more = 0;
	PrStatus	status;

	BUILD_CUDA(device_alloc(&b->ids[0], (size_t) count));
	BUILD_CUDA(device_alloc(&b->ids[1], (size_t) count));
	BUILD_CUDA(cudaMemcpyAsync(b->ids[0], b->src, m * sizeof(int64_t), cudaMemcpyDeviceToDevice, b->stream));
	BUILD_CUDA(cudaMemcpyAsync(b->ids[0] + m, b->dst, m * sizeof(int64_t), cudaMemcpyDeviceToDevice, b->stream));
	{
		cub::DoubleBuffer<int64_t> keys(b->ids[0], b->ids[1]);

		BUILD_CUDA(cub::DeviceRadixSort::SortKeys(NULL, bytes, keys, count, 0, 64, b->stream));
		BUILD_CUDA(cub::DeviceSelect::Unique(NULL, more, b->ids[0], b->ids[1], b->scalars, count, b->stream));
		if ((status = temp_reserve(b, bytes > more ? bytes : more, err)) != PR_OK)
			return status;
		BUILD_CUDA(cub::DeviceRadixSort::SortKeys(b->temp, bytes, keys, count, 0, 64, b->stream));
		/* the unique ids go to the other buffer, which becomes node_ids */
		BUILD_CUDA(cub::DeviceSelect::Unique(b->temp, more, keys.Current(), keys.Alternate(), b->scalars,
											 count, b->stream));
		b->node_ids = keys.Alternate();
		if (b->node_ids == b->ids[0])
			b->ids[0] = NULL;
		else
			b->ids[1] = NULL;
	}
	if ((status = read_scalar(b, 0, n, err)) != PR_OK)
		return status;
	if (*n <= PR_MAX_NODES)
	{
		k_search_ranks<<<grid_for((int64_t) m), BUILD_BLOCK, 0, b->stream>>>(b->src, b->dst, (int64_t) m,
																			  b->node_ids, *n, b->rank_src,
																			  b->rank_dst);
		BUILD_CUDA(cudaGetLastError());
	}
	return PR_OK;
}

/*
 * The stored edges' keys sorted (b->keys[0] on return), row pointers, sources, out-strengths and
 * the dangling list; sets *stored and *n_dangling.
 */
static PrStatus
sort_edges(Build *b, size_t m, int64_t n, bool undirected, int64_t *stored, int64_t *n_dangling,
		   PrError *err)
{
	int			bits = pr_bits_below((uint64_t) n);
	int64_t		reversed = 0;
	size_t		bytes = 0,
				more = 0;
	size_t		flag_count = m > (size_t) n ? m : (size_t) n;
	PrStatus	status;

	/* room for a reversed copy of every row when undirected */
	BUILD_CUDA(device_alloc(&b->keys[0], undirected ? 2 * m : m));
	BUILD_CUDA(device_alloc(&b->keys[1], undirected ? 2 * m : m));
	BUILD_CUDA(device_alloc(&b->flags, flag_count));
	BUILD_CUDA(device_alloc(&b->out_count, (size_t) n));
	BUILD_CUDA(cudaMemsetAsync(b->out_count, 0, (size_t) n * sizeof(unsigned long long), b->stream));
	k_edge_keys<<<grid_for((int64_t) m), BUILD_BLOCK, 0, b->stream>>>(b->rank_src, b->rank_dst, (int64_t) m, bits,
																	   undirected, b->keys[0], b->keys[1],
																	   b->flags, b->out_count);
	BUILD_CUDA(cudaGetLastError());
	if (undirected)
	{
		BUILD_CUDA(cub::DeviceSelect::Flagged(NULL, bytes, b->keys[1], b->flags, b->keys[0] + m, b->scalars,
											  (int64_t) m, b->stream));
		if ((status = temp_reserve(b, bytes, err)) != PR_OK)
			return status;
		BUILD_CUDA(cub::DeviceSelect::Flagged(b->temp, bytes, b->keys[1], b->flags, b->keys[0] + m,
											  b->scalars, (int64_t) m, b->stream));
		if ((status = read_scalar(b, 0, &reversed, err)) != PR_OK)
			return status;
	}
	*stored = (int64_t) m + reversed;
	{
		cub::DoubleBuffer<uint64_t> keys(b->keys[0], b->keys[1]);

		BUILD_CUDA(cub::DeviceRadixSort::SortKeys(NULL, bytes, keys, *stored, 0, 2 * bits, b->stream));
		if ((status = temp_reserve(b, bytes, err)) != PR_OK)
			return status;
		BUILD_CUDA(cub::DeviceRadixSort::SortKeys(b->temp, bytes, keys, *stored, 0, 2 * bits, b->stream));
		if (keys.Current() != b->keys[0])
		{
			b->keys[1] = b->keys[0];
			b->keys[0] = keys.Current();
		}
	}
	BUILD_CUDA(device_alloc(&b->in_ptr, (size_t) n + 1));
	BUILD_CUDA(device_alloc(&b->in_src, (size_t) *stored));
	k_row_pointers<<<grid_for(*stored + 1), BUILD_BLOCK, 0, b->stream>>>(b->keys[0], *stored, bits, n,
																		  b->in_ptr, b->in_src);
	BUILD_CUDA(cudaGetLastError());
	BUILD_CUDA(device_alloc(&b->strength, (size_t) n));
	BUILD_CUDA(device_alloc(&b->dangling, (size_t) n));
	k_strengths<<<grid_for(n), BUILD_BLOCK, 0, b->stream>>>(b->out_count, n, b->strength, b->flags);
	BUILD_CUDA(cudaGetLastError());
	BUILD_CUDA(cub::DeviceSelect::Flagged(NULL, more, thrust::counting_iterator<int32_t>(0), b->flags,
										  b->dangling, b->scalars + 1, n, b->stream));
	if ((status = temp_reserve(b, more, err)) != PR_OK)
		return status;
	BUILD_CUDA(cub::DeviceSelect::Flagged(b->temp, more, thrust::counting_iterator<int32_t>(0), b->flags,
										  b->dangling, b->scalars + 1, n, b->stream));
	return read_scalar(b, 1, n_dangling, err);
}

/* Frees every device buffer of a build; the first failure goes to err when it has none yet. */
static void
build_release(Build *b, PrStatus *status, PrError *err)
{
	cudaError_t first = cudaSuccess;

	device_free(&b->src, &first);
	device_free(&b->dst, &first);
	device_free(&b->rank_src, &first);
	device_free(&b->rank_dst, &first);
	device_free(&b->table, &first);
	device_free(&b->ids[0], &first);
	device_free(&b->ids[1], &first);
	device_free(&b->node_ids, &first);
	device_free(&b->keys[0], &first);
	device_free(&b->keys[1], &first);
	device_free(&b->flags, &first);
	device_free(&b->in_ptr, &first);
	device_free(&b->in_src, &first);
	device_free(&b->out_count, &first);
	device_free(&b->strength, &first);
	device_free(&b->dangling, &first);
	device_free(&b->scalars, &first);
	device_free((char **) &b->temp, &first);
	if (b->stream != NULL)
	{
		cudaError_t st = cudaStreamDestroy(b->stream);

		if (st != cudaSuccess && first == cudaSuccess)
			first = st;
		b->stream = NULL;
	}
	if (first != cudaSuccess && *status == PR_OK)
		*status = pr_error_set(err, PR_ERR_ENGINE, "GPU graph build: releasing device memory failed: %s",
							   cudaGetErrorString(first));
}

/* The build itself (buffers in b, released by the caller). */
static PrStatus
build_run(Build *b, int device, const int64_t *src, const int64_t *dst, size_t m, bool undirected,
		  void *out, size_t capacity, int n_threads, PrGpuBuildReport *report, PrError *err)
{
	double		t0 = pr_clock_seconds(),
				mark;
	int64_t		lo = 0,
				hi = -1,
				n = 0,
				stored = 0,
				n_dangling = 0;
	PrGraph		shape;
	PrStatus	status;

	BUILD_CUDA(cudaSetDevice(device));
	BUILD_CUDA(cudaStreamCreateWithFlags(&b->stream, cudaStreamNonBlocking));
	BUILD_CUDA(device_alloc(&b->scalars, 4));
	if (m > 0)
	{
		CopySpan	rows[2];

		BUILD_CUDA(device_alloc(&b->src, m));
		BUILD_CUDA(device_alloc(&b->dst, m));
		rows[0].host = (char *) src;
		rows[0].device = (char *) b->src;
		rows[0].bytes = m * sizeof(int64_t);
		rows[1].host = (char *) dst;
		rows[1].device = (char *) b->dst;
		rows[1].bytes = m * sizeof(int64_t);
		if ((status = staged_copy(device, true, rows, 2, n_threads, err)) != PR_OK)
			return status;
	}
	mark = pr_clock_seconds();
	report->upload_seconds = mark - t0;

	if (m > 0)
	{
		uint64_t	range;

		if ((status = endpoint_range(b, m, &lo, &hi, err)) != PR_OK)
			return status;
		range = (uint64_t) hi - (uint64_t) lo + 1;	/* 0: the whole int64 range */
		BUILD_CUDA(device_alloc(&b->rank_src, m));
		BUILD_CUDA(device_alloc(&b->rank_dst, m));
		report->dense_ids = range != 0 && range <= 2 * (uint64_t) m + 4096 && range <= (uint64_t) INT32_MAX;
		status = report->dense_ids ? ids_by_table(b, m, lo, (int64_t) range, &n, err)
			: ids_by_sort(b, m, &n, err);
		if (status != PR_OK)
			return status;
		if (n > PR_MAX_NODES)
			return pr_error_set(err, PR_ERR_TOO_LARGE,
								"graph has %lld nodes, more than the %lld the internal ids allow",
								(long long) n, (long long) PR_MAX_NODES);
		/* the rows and the id table are no longer needed */
		{
			cudaError_t first = cudaSuccess;

			BUILD_CUDA(cudaStreamSynchronize(b->stream));
			device_free(&b->src, &first);
			device_free(&b->dst, &first);
			device_free(&b->table, &first);
			device_free(&b->ids[0], &first);
			device_free(&b->ids[1], &first);
			BUILD_CUDA(first);
		}
	}
	report->ids_seconds = pr_clock_seconds() - mark;
	mark = pr_clock_seconds();

	if (m > 0)
	{
		if ((status = sort_edges(b, m, n, undirected, &stored, &n_dangling, err)) != PR_OK)
			return status;
	}
	report->sort_seconds = pr_clock_seconds() - mark;
	mark = pr_clock_seconds();

	memset(&shape, 0, sizeof(shape));
	shape.n_nodes = n;
	shape.n_edges = stored;
	shape.n_dangling = n_dangling;
	report->n_nodes = n;
	report->n_edges = stored;
	report->n_dangling = n_dangling;
	report->flat_size = pr_graph_flat_size(&shape);
	if (report->flat_size > capacity)
		return pr_error_set(err, PR_ERR_TOO_LARGE,
							"the built graph needs %zu bytes, the buffer has %zu", report->flat_size,
							capacity);
	report->wrote_output = true;
	pr_graph_flat_place(&shape, out);
	if (m == 0)
		shape.in_ptr[0] = 0;
	else
	{
		CopySpan	arrays[5] = {
			{(char *) shape.node_ids, (char *) b->node_ids, (size_t) n * sizeof(int64_t)},
			{(char *) shape.in_ptr, (char *) b->in_ptr, ((size_t) n + 1) * sizeof(int64_t)},
			{(char *) shape.in_src, (char *) b->in_src, (size_t) stored * sizeof(int32_t)},
			{(char *) shape.out_strength, (char *) b->strength, (size_t) n * sizeof(double)},
			{(char *) shape.dangling, (char *) b->dangling, (size_t) n_dangling * sizeof(int32_t)},
		};

		BUILD_CUDA(cudaStreamSynchronize(b->stream));
		if ((status = staged_copy(device, false, arrays, 5, n_threads, err)) != PR_OK)
			return status;
	}
	report->download_seconds = pr_clock_seconds() - mark;
	report->total_seconds = pr_clock_seconds() - t0;
	return PR_OK;
}

/* Builds the flat form of m rows on the device; see pr_gpu.h. */
PrStatus
pr_gpu_build_flat(int device, const int64_t *src, const int64_t *dst, size_t m, bool undirected,
				  void *out, size_t capacity, int n_threads, PrGpuBuildReport *report, PrError *err)
{
	Build		b;
	PrStatus	status;

	memset(&b, 0, sizeof(b));
	memset(report, 0, sizeof(*report));
	if (out == NULL || ((uintptr_t) out & 7) != 0 || (m > 0 && (src == NULL || dst == NULL)))
		return pr_error_set(err, PR_ERR_INVALID, "GPU graph build: missing or misaligned buffers");
	status = build_run(&b, device, src, dst, m, undirected, out, capacity, n_threads, report, err);
	build_release(&b, &status, err);
	return status;
}
