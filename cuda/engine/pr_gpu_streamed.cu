/*
 * pr_gpu_streamed.cu — the streamed matrices of the single-GPU engine (see pr_gpu_streamed.h):
 * their setup in prepare (long rows' chunks, block plans, registration or staging buffers), the
 * streamed product and the release.
 */
#include "pr_gpu_streamed.h"
#include "pr_gpu_streamed_kernels.cuh"

#include <algorithm>
#include <new>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The name of a copy mode. */
const char *
gpu_streamed_mode_name(StreamCopyMode mode)
{
	return mode == STREAM_REGISTERED ? "registered" : mode == STREAM_STAGED ? "staged" : "pageable";
}

/* Bytes of one value of a matrix (0: unweighted). */
static size_t
matrix_value_bytes(const StreamedMatrix *m)
{
	return m->val != NULL ? sizeof(double) : 0;
}

/*
 * The transpose of the in-edge CSR (the push matrix of a graph built without out-edges) in host
 * memory owned by m: a counting sort by source, rows visited in order so each out-row lists its
 * destinations ascending.
 */
static PrStatus
host_transpose(const PrGraph *g, StreamedMatrix *m, PrError *err)
{
	int64_t		n = g->n_nodes,
				nnz = g->n_edges;
	int64_t    *fill;

	m->owned_ptr = (int64_t *) calloc((size_t) n + 1, sizeof(int64_t));
	m->owned_col = (int32_t *) malloc(((size_t) nnz + 1) * sizeof(int32_t));
	if (g->in_weight != NULL)
		m->owned_val = (double *) malloc(((size_t) nnz + 1) * sizeof(double));
	fill = (int64_t *) malloc(((size_t) n + 1) * sizeof(int64_t));
	if (m->owned_ptr == NULL || m->owned_col == NULL || fill == NULL || (g->in_weight != NULL && m->owned_val == NULL))
	{
		free(fill);
		return pr_error_set(err, PR_ERR_NOMEM, "GPU engine: out of host memory for the streamed push matrix");
	}
	for (int64_t p = 0; p < nnz; p++)
		m->owned_ptr[g->in_src[p] + 1]++;
	for (int64_t r = 0; r < n; r++)
		m->owned_ptr[r + 1] += m->owned_ptr[r];
	memcpy(fill, m->owned_ptr, (size_t) n * sizeof(int64_t));
	for (int64_t r = 0; r < n; r++)
		for (int64_t p = g->in_ptr[r]; p < g->in_ptr[r + 1]; p++)
		{
			int64_t		at = fill[g->in_src[p]]++;

			m->owned_col[at] = (int32_t) r;
			if (m->owned_val != NULL)
				m->owned_val[at] = g->in_weight[p];
		}
	free(fill);
	m->ptr = m->owned_ptr;
	m->col = m->owned_col;
	m->val = m->owned_val;
	return PR_OK;
}

/* The host CSR of a matrix: the graph's in-edges (pull) or out-edges (push; a transpose when the
 * graph has none). */
static PrStatus
matrix_source(const PrGraph *g, bool push, StreamedMatrix *m, PrError *err)
{
	m->n = g->n_nodes;
	m->nnz = g->n_edges;
	if (!push)
	{
		m->ptr = g->in_ptr;
		m->col = g->in_src;
		m->val = g->in_weight;
		return PR_OK;
	}
	if (g->has_out_edges && g->out_ptr != NULL)
	{
		m->ptr = g->out_ptr;
		m->col = g->out_dst;
		m->val = g->out_weight;
		return PR_OK;
	}
	return host_transpose(g, m, err);
}

/* The rows longer than PR_STREAM_CHUNK and their chunks, on the host. */
struct LongRows
{
	std::vector<int32_t> row;
	std::vector<int64_t> first_chunk;
	std::vector<int64_t> start;
	std::vector<int64_t> end;
};

/* Lists a matrix's long rows and cuts them into chunks. */
static void
find_long_rows(const StreamedMatrix *m, LongRows *lr)
{
	for (int64_t r = 0; r < m->n; r++)
	{
		int64_t		b = m->ptr[r],
					e = m->ptr[r + 1];

		if (e - b <= PR_STREAM_CHUNK)
			continue;
		lr->row.push_back((int32_t) r);
		lr->first_chunk.push_back((int64_t) lr->start.size());
		for (int64_t s = b; s < e; s += PR_STREAM_CHUNK)
		{
			lr->start.push_back(s);
			lr->end.push_back(std::min(s + (int64_t) PR_STREAM_CHUNK, e));
		}
	}
	lr->first_chunk.push_back((int64_t) lr->start.size());
}

/* Allocates `bytes` of device memory (an engine allocation) and copies `used` bytes of host into it. */
static PrStatus
alloc_upload(GpuEngine *e, void **out, size_t bytes, const void *host, size_t used, PrError *err)
{
	PrStatus	st = gpu_dev_alloc(e, out, bytes, err);

	if (st == PR_OK && used > 0)
		PR_CUDA(cudaMemcpy(*out, host, used, cudaMemcpyHostToDevice));
	return st;
}

/* Uploads a matrix's long-row lists and makes room for its chunk sums, in allocations of the
 * sizes pr_residency_streamed_bytes gave (bytes; bounds the lists fit). */
static PrStatus
upload_long_rows(GpuEngine *e, StreamedMatrix *m, const LongRows *lr, const PrStreamedMatrixBytes *bytes,
				 PrError *err)
{
	PrStatus	st;

	m->n_long = (int64_t) lr->row.size();
	m->n_chunks = (int64_t) lr->start.size();
	if (m->n_long > bytes->most_long_rows || m->n_chunks > bytes->most_chunks)
		return pr_error_set(err, PR_ERR_ENGINE, "GPU engine: %lld long rows in %lld chunks exceed the planned %lld and %lld",
							(long long) m->n_long, (long long) m->n_chunks, (long long) bytes->most_long_rows,
							(long long) bytes->most_chunks);
	if ((st = alloc_upload(e, (void **) &m->d_long_row, bytes->long_row, lr->row.data(), lr->row.size() * 4, err)) != PR_OK ||
		(st = alloc_upload(e, (void **) &m->d_first_chunk, bytes->first_chunk, lr->first_chunk.data(),
						   lr->first_chunk.size() * 8, err)) != PR_OK ||
		(st = alloc_upload(e, (void **) &m->d_chunk_start, bytes->chunk_start, lr->start.data(), lr->start.size() * 8, err)) != PR_OK ||
		(st = alloc_upload(e, (void **) &m->d_chunk_end, bytes->chunk_end, lr->end.data(), lr->end.size() * 8, err)) != PR_OK)
		return st;
	return gpu_dev_alloc(e, &m->d_partial, bytes->partial, err);
}

/*
 * The block plan of a matrix with blocks of at most `buffer` device bytes (each of the two
 * buffers): the model's block count, or bench.stream_blocks when set (1: the whole matrix in one
 * block); each block's first long row and chunk.
 */
static PrStatus
plan_blocks(GpuEngine *e, StreamedMatrix *m, const LongRows *lr, size_t buffer, PrError *err)
{
	PrStreamParams prm;
	PrStreamPlan plan;
	PrStatus	st;

	pr_stream_params_init(&prm);
	prm.has_val = m->val != NULL;
	prm.val_bytes = (int) sizeof(double);
	prm.device_budget = e->bench.stream_blocks == 1 ? SIZE_MAX / 4 : 2 * buffer;
	prm.pinned_budget = SIZE_MAX / 4;
	prm.force_blocks = e->bench.stream_blocks > 1 ? e->bench.stream_blocks : 0;
	if (prm.force_blocks > 0)
	{
		/* a forced count of a matrix that fits one buffer: cut it as asked (each block still
		 * holds its longest row), not whole */
		size_t		vb = matrix_value_bytes(m);
		size_t		whole = pr_stream_block_layout_values(m->ptr, 0, m->n, vb).bytes;
		size_t		longest = 0;

		for (int64_t r = 0; r < m->n; r++)
			longest = std::max(longest, pr_stream_block_layout_values(m->ptr, r, r + 1, vb).bytes);
		if (prm.device_budget / 2 >= whole)
			prm.device_budget = std::max(whole > 1 ? 2 * (whole - 1) : whole, 2 * longest);
	}
	st = pr_stream_plan(m->n, m->ptr, &prm, &pr_malloc_allocator, &plan, err);
	if (st == PR_ERR_TOO_LARGE)
		err->status = st = PR_ERR_NOMEM;	/* a row larger than a buffer: the device is too small */
	if (st != PR_OK)
		return st;
	m->n_blocks = plan.n_blocks;
	m->row_begin.assign(plan.row_begin, plan.row_begin + plan.n_blocks + 1);
	m->buffer_bytes = plan.buffer_bytes;
	m->copy_bytes = plan.matrix_bytes;
	m->predicted_ms = (plan.mode == PR_STREAM_RESIDENT ?
					   pr_stream_predict(m->ptr, plan.row_begin, 1, prm.has_val, false, &prm, NULL, NULL) :
					   plan.predicted_s) * 1e3;
	pr_stream_plan_free(&plan, &pr_malloc_allocator);
	m->block_long.resize((size_t) m->n_blocks + 1);
	m->block_chunk.resize((size_t) m->n_blocks + 1);
	for (int64_t b = 0; b <= m->n_blocks; b++)
	{
		int64_t		l = std::lower_bound(lr->row.begin(), lr->row.end(), (int32_t) std::min(m->row_begin[b], m->n)) - lr->row.begin();

		if (b == m->n_blocks)
			l = (int64_t) lr->row.size();
		m->block_long[b] = l;
		m->block_chunk[b] = lr->first_chunk[l];
	}
	return PR_OK;
}

/* The whole pages inside a host array, [*lo, *hi) (empty when it spans none): only those are
 * registered, so no other data sharing the array's first or last page is pinned with it. */
static void
interior_pages(const void *p, size_t bytes, uintptr_t *lo, uintptr_t *hi)
{
	uintptr_t	page = (uintptr_t) sysconf(_SC_PAGESIZE);

	*lo = ((uintptr_t) p + page - 1) / page * page;
	*hi = ((uintptr_t) p + bytes) / page * page;
	if (*hi < *lo)
		*hi = *lo;
}

/* Unregisters what registration pinned. */
static void
unregister_all(GpuStreamer *s)
{
	for (void *p : s->registered)
		cudaHostUnregister(p);
	s->registered.clear();
	s->registered_bytes = 0;
	cudaGetLastError();
}

/* Registers the whole pages inside one host array (nothing when it spans none); false when CUDA
 * refuses them. */
static bool
register_array(GpuStreamer *s, const void *p, size_t bytes, unsigned int flags)
{
	uintptr_t	lo,
				hi;

	interior_pages(p, bytes, &lo, &hi);
	if (hi == lo)
		return true;
	if (cudaHostRegister((void *) lo, hi - lo, flags) != cudaSuccess)
		return false;
	s->registered.push_back((void *) lo);
	s->registered_bytes += hi - lo;
	return true;
}

/*
 * Registers the host arrays of the matrices (the whole pages inside each; copy_slice copies the
 * partial first and last pages apart) so blocks are copied straight from them; read-only where the
 * device supports it.  False (nothing registered, the error cleared) when CUDA refuses any range.
 */
static bool
register_host(GpuEngine *e, GpuStreamer *s)
{
	const StreamedMatrix *ms[2] = {&s->pull, s->has_push ? &s->push : NULL};
	int			ro = 0;
	unsigned int flags = cudaHostRegisterDefault;
	bool		ok = true;

	if (cudaDeviceGetAttribute(&ro, cudaDevAttrHostRegisterReadOnlySupported, e->opt.device) == cudaSuccess && ro)
		flags |= cudaHostRegisterReadOnly;
	cudaGetLastError();
	s->read_only = (flags & cudaHostRegisterReadOnly) != 0;
	for (const StreamedMatrix *m : ms)
	{
		if (m == NULL || !ok)
			continue;
		ok = register_array(s, m->ptr, ((size_t) m->n + 1) * sizeof(int64_t), flags);
		if (ok && m->nnz > 0)
			ok = register_array(s, m->col, (size_t) m->nnz * sizeof(int32_t), flags);
		if (ok && m->nnz > 0 && m->val != NULL)
			ok = register_array(s, m->val, (size_t) m->nnz * sizeof(double), flags);
	}
	if (!ok)
	{
		cudaGetLastError();
		unregister_all(s);
	}
	return ok;
}

/* Sets up the streamed matrices; see pr_gpu_streamed.h. */
PrStatus
gpu_streamed_prepare(GpuEngine *e, const PrGraph *g, const PrResidencyInput *in, size_t room, PrError *err)
{
	GpuStreamer *s = new (std::nothrow) GpuStreamer();
	LongRows	lr_pull,
				lr_push;
	size_t		buffer;
	PrStatus	st;

	if (s == NULL)
		return pr_error_set(err, PR_ERR_NOMEM, "GPU engine: out of host memory");
	e->streamer = s;
	s->has_push = in->push;
	if ((st = matrix_source(g, false, &s->pull, err)) != PR_OK ||
		(s->has_push && (st = matrix_source(g, true, &s->push, err)) != PR_OK))
		return st;
	find_long_rows(&s->pull, &lr_pull);
	if (s->has_push)
		find_long_rows(&s->push, &lr_push);
	else
		lr_push.first_chunk.push_back(0);
	buffer = pr_residency_stream_buffer(in, room);
	if (buffer == 0)
		return pr_error_set(err, PR_ERR_NOMEM,
							"GPU engine: the streamed matrix needs %.1f MiB of device memory beyond the vectors; %.1f MiB are left",
							pr_residency_streamed_bytes(in, pr_residency_min_buffer(in->nodes, in->edges, in->weighted),
														&s->bytes) / 1048576.0, room / 1048576.0);
	if ((st = plan_blocks(e, &s->pull, &lr_pull, buffer, err)) != PR_OK ||
		(s->has_push && (st = plan_blocks(e, &s->push, &lr_push, buffer, err)) != PR_OK))
		return st;
	s->buffer_bytes = std::max(s->pull.buffer_bytes, s->has_push ? s->push.buffer_bytes : (size_t) 0);
	/* every allocation as pr_residency_streamed_bytes sizes it (within room unless bench forces
	 * one block) */
	if (pr_residency_streamed_bytes(in, s->buffer_bytes, &s->bytes) > room)
		return pr_error_set(err, PR_ERR_NOMEM,
							"GPU engine: the streamed matrix's blocks need %.1f MiB of device memory beyond the vectors; %.1f MiB are left",
							s->bytes.total / 1048576.0, room / 1048576.0);
	if ((st = upload_long_rows(e, &s->pull, &lr_pull, &s->bytes.pull, err)) != PR_OK ||
		(s->has_push && (st = upload_long_rows(e, &s->push, &lr_push, &s->bytes.push, err)) != PR_OK))
		return st;
	for (int i = 0; i < 2; i++)
	{
		if ((st = gpu_dev_alloc(e, &s->d_buf[i], s->bytes.buffer, err)) != PR_OK)
			return st;
		PR_CUDA(cudaStreamCreateWithFlags(&s->stream[i], cudaStreamNonBlocking));
		PR_CUDA(cudaEventCreateWithFlags(&s->done[i], cudaEventDisableTiming));
		PR_CUDA(cudaEventCreateWithFlags(&s->copied[i], cudaEventDisableTiming));
	}
	PR_CUDA(cudaEventCreateWithFlags(&s->ready, cudaEventDisableTiming));
	s->device_bytes = s->bytes.total;

	/* registered when allowed and CUDA agrees, else staged, else pageable */
	s->mode = STREAM_STAGED;
	if (!e->bench.stream_stage && register_host(e, s))
		s->mode = STREAM_REGISTERED;
	if (s->mode == STREAM_STAGED)
		for (int i = 0; i < 2; i++)
			if (cudaHostAlloc(&s->h_stage[i], s->buffer_bytes, cudaHostAllocDefault) != cudaSuccess)
			{
				cudaGetLastError();
				s->mode = STREAM_PAGEABLE;
			}
	return PR_OK;
}

/* One host copy of a staged block: a slice of each of its arrays. */
struct StageCopy
{
	unsigned char *dst[3];
	const unsigned char *src[3];
	size_t		bytes[3];
};

/* pr_parallel_run's task: part `part` of each of the three copies. */
static void
stage_copy_part(void *arg, int part, int n_parts)
{
	StageCopy  *c = (StageCopy *) arg;

	for (int a = 0; a < 3; a++)
	{
		int64_t		b,
					end;

		pr_even_range((int64_t) c->bytes[a], part, n_parts, &b, &end);
		if (end > b)
			memcpy(c->dst[a] + b, c->src[a] + b, (size_t) (end - b));
	}
}

/*
 * Enqueues the host -> device copy of bytes [h, h + bytes) of the registered array [base, base + size)
 * to d: the part in the array's whole pages (registered) as one copy, the parts in its partial first
 * and last pages (not registered) apart.
 */
static PrStatus
copy_slice(unsigned char *d, const void *base, size_t size, const void *h, size_t bytes, cudaStream_t st,
		   PrError *err)
{
	uintptr_t	lo,
				hi,
				a = (uintptr_t) h,
				b = a + bytes;
	uintptr_t	cut[4];

	interior_pages(base, size, &lo, &hi);
	cut[0] = a;
	cut[1] = std::min(std::max(lo, a), b);
	cut[2] = std::max(std::min(hi, b), cut[1]);
	cut[3] = b;
	for (int i = 0; i < 3; i++)
		if (cut[i + 1] > cut[i])
			PR_CUDA(cudaMemcpyAsync(d + (cut[i] - a), (const void *) cut[i], cut[i + 1] - cut[i],
									cudaMemcpyHostToDevice, st));
	return PR_OK;
}

/* Enqueues block b's copy into buffer `buf` on stream st (staged: fills the pinned buffer first). */
static PrStatus
copy_block(GpuEngine *e, const StreamedMatrix *m, int64_t b, int buf, const PrStreamLayout *l, PrError *err)
{
	GpuStreamer *s = e->streamer;
	int64_t		r0 = m->row_begin[b],
				r1 = m->row_begin[b + 1];
	int64_t		e0 = m->ptr[r0],
				ne = m->ptr[r1] - e0;
	unsigned char *d = (unsigned char *) s->d_buf[buf];
	cudaStream_t st = s->stream[buf];
	size_t		ptr_bytes = (size_t) (r1 - r0 + 1) * sizeof(int64_t),
				col_bytes = (size_t) ne * sizeof(int32_t),
				val_bytes = m->val != NULL ? (size_t) ne * sizeof(double) : 0;

	if (s->mode == STREAM_STAGED)
	{
		unsigned char *h = (unsigned char *) s->h_stage[buf];
		StageCopy	c = {{h + l->ptr_off, h + l->col_off, h + l->val_off},
						 {(const unsigned char *) (m->ptr + r0), (const unsigned char *) (m->col + e0),
						  (const unsigned char *) (m->val != NULL ? m->val + e0 : NULL)},
						 {ptr_bytes, col_bytes, val_bytes}};
		size_t		total = ptr_bytes + col_bytes + val_bytes;

		/* the buffer is free once its previous copy has finished */
		PR_CUDA(cudaEventSynchronize(s->copied[buf]));
		pr_parallel_run(stage_copy_part, &c, total >= ((size_t) 8 << 20) ? pr_thread_count(0, 8) : 1);
		PR_CUDA(cudaMemcpyAsync(d, h, l->bytes, cudaMemcpyHostToDevice, st));
		PR_CUDA(cudaEventRecord(s->copied[buf], st));
		return PR_OK;
	}
	PrStatus	status = copy_slice(d + l->ptr_off, m->ptr, ((size_t) m->n + 1) * sizeof(int64_t), m->ptr + r0,
									ptr_bytes, st, err);

	if (status == PR_OK)
		status = copy_slice(d + l->col_off, m->col, (size_t) m->nnz * sizeof(int32_t), m->col + e0, col_bytes,
							st, err);
	if (status == PR_OK && m->val != NULL)
		status = copy_slice(d + l->val_off, m->val, (size_t) m->nnz * sizeof(double), m->val + e0, val_bytes,
							st, err);
	return status;
}

/* Grid of a kernel over `threads` threads. */
static unsigned int
stream_grid(int64_t threads)
{
	return (unsigned int) ((threads + PR_THREADS - 1) / PR_THREADS);
}

/* Enqueues block b's product from buffer `buf` on its stream: short rows, long rows' chunks, their sums. */
template <typename T, bool VAL>
static PrStatus
multiply_block(GpuEngine *e, const StreamedMatrix *m, int64_t b, int buf, const PrStreamLayout *l,
			   const T *z, T *y, PrError *err)
{
	GpuStreamer *s = e->streamer;
	int64_t		r0 = m->row_begin[b],
				rows = m->row_begin[b + 1] - r0,
				base = m->ptr[r0];
	int64_t		l0 = m->block_long[b],
				n_long = m->block_long[b + 1] - l0,
				c0 = m->block_chunk[b],
				n_chunks = m->block_chunk[b + 1] - c0;
	int			k = e->k;
	unsigned char *d = (unsigned char *) s->d_buf[buf];
	const int64_t *ptr = (const int64_t *) (d + l->ptr_off);
	const int32_t *col = (const int32_t *) (d + l->col_off);
	const double *val = VAL ? (const double *) (d + l->val_off) : NULL;
	cudaStream_t st = s->stream[buf];

	if (rows > 0)
	{
		if (k == 1)
			k_stream_rows1<T, VAL><<<stream_grid(rows * PR_STREAM_LANES), PR_THREADS, 0, st>>>(rows, ptr, base, col, val, z, y + r0);
		else
			k_stream_rows_k<T, VAL><<<stream_grid(rows * k), PR_THREADS, 0, st>>>(rows, k, ptr, base, col, val, z, y + r0 * k);
		PR_LAUNCHED();
	}
	if (n_chunks > 0)
	{
		k_stream_chunks<T, VAL><<<stream_grid(n_chunks * (k == 1 ? 32 : k)), PR_THREADS, 0, st>>>(
			c0, n_chunks, k, m->d_chunk_start, m->d_chunk_end, base, col, val, z, (T *) m->d_partial);
		PR_LAUNCHED();
		k_stream_long_rows<T><<<stream_grid(n_long * k), PR_THREADS, 0, st>>>(l0, n_long, k, m->d_long_row, m->d_first_chunk,
																		  (const T *) m->d_partial, y);
		PR_LAUNCHED();
	}
	return PR_OK;
}

/* The streamed product; see pr_gpu_streamed.h. */
template <typename T>
PrStatus
gpu_streamed_run(GpuEngine *e, bool push, const void *zv, void *yv, PrError *err)
{
	GpuStreamer *s = e->streamer;
	const StreamedMatrix *m = push ? &s->push : &s->pull;
	size_t		vb = matrix_value_bytes(m);
	PrStatus	st;

	if (push && !s->has_push)
		return pr_error_set(err, PR_ERR_UNSUPPORTED, "GPU engine: the push product was not asked for in prepare");
	/* the copy streams start once the engine's stream has made z */
	PR_CUDA(cudaEventRecord(s->ready, e->stream));
	for (int i = 0; i < 2; i++)
		PR_CUDA(cudaStreamWaitEvent(s->stream[i], s->ready, 0));
	for (int64_t b = 0; b < m->n_blocks; b++)
	{
		int			buf = (int) (b % 2);
		PrStreamLayout l = pr_stream_block_layout_values(m->ptr, m->row_begin[b], m->row_begin[b + 1], vb);

		if (l.bytes > s->buffer_bytes)
			return pr_error_set(err, PR_ERR_ENGINE, "GPU engine: streamed block %lld does not fit its buffer", (long long) b);
		if ((st = copy_block(e, m, b, buf, &l, err)) != PR_OK)
			return st;
		st = vb > 0 ? multiply_block<T, true>(e, m, b, buf, &l, (const T *) zv, (T *) yv, err)
			: multiply_block<T, false>(e, m, b, buf, &l, (const T *) zv, (T *) yv, err);
		if (st != PR_OK)
			return st;
	}
	/* the engine's stream goes on once both copy streams are through */
	for (int i = 0; i < 2; i++)
	{
		PR_CUDA(cudaEventRecord(s->done[i], s->stream[i]));
		PR_CUDA(cudaStreamWaitEvent(e->stream, s->done[i], 0));
	}
	return PR_OK;
}

/* The two precisions. */
template PrStatus gpu_streamed_run<float>(GpuEngine *, bool, const void *, void *, PrError *);
template PrStatus gpu_streamed_run<double>(GpuEngine *, bool, const void *, void *, PrError *);

/* Frees a matrix's host transpose. */
static void
free_matrix_host(StreamedMatrix *m)
{
	free(m->owned_ptr);
	free(m->owned_col);
	free(m->owned_val);
	m->owned_ptr = NULL;
	m->owned_col = NULL;
	m->owned_val = NULL;
}

/* Releases the streaming state; see pr_gpu_streamed.h. */
void
gpu_streamed_free(GpuEngine *e)
{
	GpuStreamer *s = e->streamer;

	if (s == NULL)
		return;
	for (int i = 0; i < 2; i++)
		if (s->stream[i] != NULL)
			cudaStreamSynchronize(s->stream[i]);
	unregister_all(s);
	for (int i = 0; i < 2; i++)
	{
		if (s->h_stage[i] != NULL)
			cudaFreeHost(s->h_stage[i]);
		if (s->done[i] != NULL)
			cudaEventDestroy(s->done[i]);
		if (s->copied[i] != NULL)
			cudaEventDestroy(s->copied[i]);
		if (s->stream[i] != NULL)
			cudaStreamDestroy(s->stream[i]);
	}
	if (s->ready != NULL)
		cudaEventDestroy(s->ready);
	cudaGetLastError();
	free_matrix_host(&s->pull);
	free_matrix_host(&s->push);
	delete s;
	e->streamer = NULL;
}
