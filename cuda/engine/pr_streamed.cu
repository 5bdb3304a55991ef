/*
 * pr_streamed.cu — the streamed single-GPU product of a matrix larger than the GPU memory budget
 * (see pr_multi.h): blocks of rows from a pr_stream.h plan, copied host -> device into two buffers
 * on two streams so the copy of one block overlaps the product of the other.
 */
#include "pr_multi.h"
#include "pr_multi_kernels.cuh"
#include "pr_gpu_status.h"

#include <cuda_runtime.h>

#include <stdlib.h>
#include <string.h>

/* Records a failed CUDA call in err and returns from the enclosing function. */
#define PRS_CUDA(call) PR_CUDA_OR_RETURN("streamed product", call)

struct PrStreamed
{
	int			dev;
	int64_t		n;
	const int64_t *ptr;			/* the caller's CSR (pageable) */
	const int32_t *col;
	const float *val;
	PrStreamPlan plan;			/* row_begin owned (a copy) */
	PrStreamMode mode;			/* the plan's, or a fallback when pinned memory was refused */
	int64_t    *h_ptr;			/* pinned copy of the CSR (mode pinned) */
	int32_t    *h_col;
	float	   *h_val;
	unsigned char *h_stage[2];	/* pinned staging buffers (mode staged) */
	unsigned char *d_buf[2];
	float	   *d_x;
	float	   *d_y;
	cudaStream_t stream[2];
	cudaEvent_t copied[2];		/* the staging buffer's last copy is done */
	size_t		pinned_bytes;
	int64_t    *d_res_ptr;		/* the resident matrix (product_resident, allocated on first use) */
	int32_t    *d_res_col;
	float	   *d_res_val;
};

/* Sets everything up; see pr_streamed_create. */
static PrStatus
streamed_init(PrStreamed *s, const PrStreamPlan *plan, PrError *err)
{
	size_t		nnz = (size_t) s->ptr[s->n];

	PRS_CUDA(cudaSetDevice(s->dev));
	for (int k = 0; k < 2; k++)
	{
		PRS_CUDA(cudaStreamCreateWithFlags(&s->stream[k], cudaStreamNonBlocking));
		PRS_CUDA(cudaEventCreateWithFlags(&s->copied[k], cudaEventDisableTiming));
		PRS_CUDA(cudaMalloc((void **) &s->d_buf[k], plan->buffer_bytes > 0 ? plan->buffer_bytes : 1));
	}
	PRS_CUDA(cudaMalloc((void **) &s->d_x, ((size_t) s->n + 1) * sizeof(float)));
	PRS_CUDA(cudaMalloc((void **) &s->d_y, ((size_t) s->n + 1) * sizeof(float)));
	PRS_CUDA(cudaMemset(s->d_x, 0, ((size_t) s->n + 1) * sizeof(float)));

	/* pinned memory as the plan says; refused pinned memory degrades, never fails */
	s->mode = plan->mode == PR_STREAM_RESIDENT ? PR_STREAM_PINNED_WHOLE : plan->mode;
	if (s->mode == PR_STREAM_PINNED_WHOLE)
	{
		if (cudaHostAlloc((void **) &s->h_ptr, ((size_t) s->n + 1) * sizeof(int64_t), cudaHostAllocDefault) != cudaSuccess ||
			cudaHostAlloc((void **) &s->h_col, (nnz + 1) * sizeof(int32_t), cudaHostAllocDefault) != cudaSuccess ||
			(plan->has_val &&
			 cudaHostAlloc((void **) &s->h_val, (nnz + 1) * sizeof(float), cudaHostAllocDefault) != cudaSuccess))
		{
			(void) cudaGetLastError();	/* clear the refused allocation's error */
			cudaFreeHost(s->h_ptr);
			cudaFreeHost(s->h_col);
			cudaFreeHost(s->h_val);
			s->h_ptr = NULL;
			s->h_col = NULL;
			s->h_val = NULL;
			s->mode = PR_STREAM_STAGED;
		}
		else
		{
			memcpy(s->h_ptr, s->ptr, ((size_t) s->n + 1) * sizeof(int64_t));
			memcpy(s->h_col, s->col, nnz * sizeof(int32_t));
			if (plan->has_val)
				memcpy(s->h_val, s->val, nnz * sizeof(float));
			s->pinned_bytes = ((size_t) s->n + 1) * 8 + nnz * (plan->has_val ? 8 : 4);
		}
	}
	if (s->mode == PR_STREAM_STAGED)
	{
		for (int k = 0; k < 2; k++)
			if (cudaHostAlloc((void **) &s->h_stage[k], plan->buffer_bytes, cudaHostAllocDefault) != cudaSuccess)
			{
				(void) cudaGetLastError();
				cudaFreeHost(s->h_stage[0]);
				s->h_stage[0] = s->h_stage[1] = NULL;
				s->mode = PR_STREAM_PAGEABLE;
				break;
			}
		if (s->mode == PR_STREAM_STAGED)
			s->pinned_bytes = 2 * plan->buffer_bytes;
	}
	return PR_OK;
}

/* Creates the streamed product. */
PrStreamed *
pr_streamed_create(int device, int64_t n, const int64_t *ptr, const int32_t *col, const float *val,
				   const PrStreamPlan *plan, PrError *err)
{
	PrStreamed *s = (PrStreamed *) calloc(1, sizeof(PrStreamed));

	if (s == NULL)
	{
		pr_error_set(err, PR_ERR_NOMEM, "streamed product: out of memory");
		return NULL;
	}
	if (plan->has_val && val == NULL)
	{
		free(s);
		pr_error_set(err, PR_ERR_INVALID, "streamed product: the plan has values but none were given");
		return NULL;
	}
	s->dev = device;
	s->n = n;
	s->ptr = ptr;
	s->col = col;
	s->val = val;
	s->plan = *plan;
	s->plan.row_begin = (int64_t *) malloc(((size_t) plan->n_blocks + 1) * sizeof(int64_t));
	if (s->plan.row_begin == NULL)
	{
		free(s);
		pr_error_set(err, PR_ERR_NOMEM, "streamed product: out of memory");
		return NULL;
	}
	memcpy(s->plan.row_begin, plan->row_begin, ((size_t) plan->n_blocks + 1) * sizeof(int64_t));
	if (streamed_init(s, plan, err) != PR_OK)
	{
		pr_streamed_free(s);
		return NULL;
	}
	return s;
}

/* Copies x in. */
PrStatus
pr_streamed_set_x(PrStreamed *s, const float *x, PrError *err)
{
	PRS_CUDA(cudaSetDevice(s->dev));
	PRS_CUDA(cudaMemcpy(s->d_x, x, (size_t) s->n * sizeof(float), cudaMemcpyHostToDevice));
	return PR_OK;
}

/* Copies y out. */
PrStatus
pr_streamed_get_y(PrStreamed *s, float *y, PrError *err)
{
	PRS_CUDA(cudaSetDevice(s->dev));
	PRS_CUDA(cudaMemcpy(y, s->d_y, (size_t) s->n * sizeof(float), cudaMemcpyDeviceToHost));
	return PR_OK;
}

/* Launches the rows of one block (8 lanes a row: the streamed product is link-bound). */
static PrStatus
launch_rows(int64_t rows, const int64_t *d_ptr, int64_t base, const int32_t *d_col, const float *d_val,
			const float *x, float *y, cudaStream_t st, PrError *err)
{
	if (rows <= 0)
		return PR_OK;
	k_csr_rows<8><<<(unsigned) ((rows * 8 + PRM_THREADS - 1) / PRM_THREADS), PRM_THREADS, 0, st>>>(
		rows, d_ptr, base, d_col, d_val, x, y);
	PRS_CUDA(cudaGetLastError());
	return PR_OK;
}

/* The streamed product: block b goes through buffer and stream b % 2 (copy, then its rows). */
PrStatus
pr_streamed_product(PrStreamed *s, double *ms, PrError *err)
{
	double		t0;
	bool		has_val = s->plan.has_val;

	PRS_CUDA(cudaSetDevice(s->dev));
	PRS_CUDA(cudaDeviceSynchronize());
	t0 = pr_clock_seconds();
	for (int64_t b = 0; b < s->plan.n_blocks; b++)
	{
		int			k = (int) (b % 2);
		int64_t		r0 = s->plan.row_begin[b],
					r1 = s->plan.row_begin[b + 1];
		int64_t		e0 = s->ptr[r0],
					ne = s->ptr[r1] - e0;
		PrStreamLayout l = pr_stream_block_layout(s->ptr, r0, r1, has_val);
		unsigned char *d = s->d_buf[k];
		cudaStream_t st = s->stream[k];
		PrStatus	rc;

		if (l.bytes > s->plan.buffer_bytes)
			return pr_error_set(err, PR_ERR_ENGINE, "streamed product: block %lld does not fit its buffer", (long long) b);
		if (s->mode == PR_STREAM_STAGED)
		{
			/* the staging buffer is free once its previous copy has finished */
			unsigned char *h = s->h_stage[k];

			PRS_CUDA(cudaEventSynchronize(s->copied[k]));
			memcpy(h + l.ptr_off, s->ptr + r0, (size_t) (r1 - r0 + 1) * sizeof(int64_t));
			memcpy(h + l.col_off, s->col + e0, (size_t) ne * sizeof(int32_t));
			if (has_val)
				memcpy(h + l.val_off, s->val + e0, (size_t) ne * sizeof(float));
			PRS_CUDA(cudaMemcpyAsync(d, h, l.bytes, cudaMemcpyHostToDevice, st));
			PRS_CUDA(cudaEventRecord(s->copied[k], st));
		}
		else
		{
			const int64_t *hp = s->mode == PR_STREAM_PINNED_WHOLE ? s->h_ptr : s->ptr;
			const int32_t *hc = s->mode == PR_STREAM_PINNED_WHOLE ? s->h_col : s->col;
			const float *hv = s->mode == PR_STREAM_PINNED_WHOLE ? s->h_val : s->val;

			PRS_CUDA(cudaMemcpyAsync(d + l.ptr_off, hp + r0, (size_t) (r1 - r0 + 1) * sizeof(int64_t),
									 cudaMemcpyHostToDevice, st));
			PRS_CUDA(cudaMemcpyAsync(d + l.col_off, hc + e0, (size_t) ne * sizeof(int32_t), cudaMemcpyHostToDevice, st));
			if (has_val)
				PRS_CUDA(cudaMemcpyAsync(d + l.val_off, hv + e0, (size_t) ne * sizeof(float), cudaMemcpyHostToDevice, st));
		}
		rc = launch_rows(r1 - r0, (const int64_t *) (d + l.ptr_off), e0, (const int32_t *) (d + l.col_off),
						 has_val ? (const float *) (d + l.val_off) : NULL, s->d_x, s->d_y + r0, st, err);
		if (rc != PR_OK)
			return rc;
	}
	PRS_CUDA(cudaStreamSynchronize(s->stream[0]));
	PRS_CUDA(cudaStreamSynchronize(s->stream[1]));
	if (ms)
		*ms = (pr_clock_seconds() - t0) * 1e3;
	return PR_OK;
}

/* The same product with the whole matrix resident (uploaded on first use). */
PrStatus
pr_streamed_product_resident(PrStreamed *s, double *ms, PrError *err)
{
	size_t		nnz = (size_t) s->ptr[s->n];
	double		t0;

	PRS_CUDA(cudaSetDevice(s->dev));
	if (s->d_res_ptr == NULL)
	{
		PRS_CUDA(cudaMalloc((void **) &s->d_res_ptr, ((size_t) s->n + 1) * sizeof(int64_t)));
		PRS_CUDA(cudaMalloc((void **) &s->d_res_col, (nnz + 1) * sizeof(int32_t)));
		PRS_CUDA(cudaMemcpy(s->d_res_ptr, s->ptr, ((size_t) s->n + 1) * sizeof(int64_t), cudaMemcpyHostToDevice));
		PRS_CUDA(cudaMemcpy(s->d_res_col, s->col, nnz * sizeof(int32_t), cudaMemcpyHostToDevice));
		if (s->plan.has_val)
		{
			PRS_CUDA(cudaMalloc((void **) &s->d_res_val, (nnz + 1) * sizeof(float)));
			PRS_CUDA(cudaMemcpy(s->d_res_val, s->val, nnz * sizeof(float), cudaMemcpyHostToDevice));
		}
	}
	PRS_CUDA(cudaDeviceSynchronize());
	t0 = pr_clock_seconds();
	{
		PrStatus	rc = launch_rows(s->n, s->d_res_ptr, 0, s->d_res_col, s->d_res_val, s->d_x, s->d_y,
									 s->stream[0], err);

		if (rc != PR_OK)
			return rc;
	}
	PRS_CUDA(cudaStreamSynchronize(s->stream[0]));
	if (ms)
		*ms = (pr_clock_seconds() - t0) * 1e3;
	return PR_OK;
}

/* One plain pinned host -> device copy of bytes, timed (median of 5 after a warm-up). */
PrStatus
pr_streamed_plain_copy_ms(int device, size_t bytes, double *ms, PrError *err)
{
	void	   *h = NULL,
			   *d = NULL;
	double		best[5];
	cudaError_t rc;

	PRS_CUDA(cudaSetDevice(device));
	PRS_CUDA(cudaHostAlloc(&h, bytes, cudaHostAllocDefault));
	rc = cudaMalloc(&d, bytes);
	if (rc != cudaSuccess)
	{
		cudaFreeHost(h);
		PRS_CUDA(rc);
	}
	memset(h, 1, bytes);
	for (int r = -1; r < 5; r++)
	{
		double		t0 = pr_clock_seconds();

		rc = cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice);
		if (rc != cudaSuccess)
			break;
		if (r >= 0)
			best[r] = (pr_clock_seconds() - t0) * 1e3;
	}
	cudaFree(d);
	cudaFreeHost(h);
	PRS_CUDA(rc);
	/* median of 5 */
	for (int i = 0; i < 5; i++)
		for (int j = i + 1; j < 5; j++)
			if (best[j] < best[i])
			{
				double		t = best[i];

				best[i] = best[j];
				best[j] = t;
			}
	*ms = best[2];
	return PR_OK;
}

/* The report. */
void
pr_streamed_report(PrStreamed *s, PrStreamedReport *out)
{
	out->mode = pr_stream_mode_name(s->mode);
	out->n_blocks = s->plan.n_blocks;
	out->buffer_bytes = s->plan.buffer_bytes;
	out->matrix_bytes = s->plan.matrix_bytes;
	out->pinned_bytes = s->pinned_bytes;
	out->predicted_ms = s->plan.predicted_s * 1e3;
}

/* Frees everything. */
void
pr_streamed_free(PrStreamed *s)
{
	if (s == NULL)
		return;
	if (cudaSetDevice(s->dev) == cudaSuccess)
	{
		for (int k = 0; k < 2; k++)
		{
			if (s->stream[k])
				cudaStreamSynchronize(s->stream[k]);
			cudaFree(s->d_buf[k]);
			cudaFreeHost(s->h_stage[k]);
			if (s->copied[k])
				cudaEventDestroy(s->copied[k]);
			if (s->stream[k])
				cudaStreamDestroy(s->stream[k]);
		}
		cudaFree(s->d_x);
		cudaFree(s->d_y);
		cudaFree(s->d_res_ptr);
		cudaFree(s->d_res_col);
		cudaFree(s->d_res_val);
		cudaFreeHost(s->h_ptr);
		cudaFreeHost(s->h_col);
		cudaFreeHost(s->h_val);
	}
	free(s->plan.row_begin);
	free(s);
}
