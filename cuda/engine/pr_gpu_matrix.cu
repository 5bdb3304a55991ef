/*
 * pr_gpu_matrix.cu — one sparse matrix of the single-GPU engine on the device, in its format
 * (tile-composite, row-binned CSR, ALIGNED_COO, cuSPARSE CSR): its upload, its product y = M z, its
 * release.
 * Each matrix owns its device arrays, so one layout can be uploaded, run and freed on its own.
 */
#include "pr_gpu_engine.h"
#include "pr_gpu_spmm.h"
#include "pr_gpu_partials.cuh"

#include <stdlib.h>
#include <string.h>

/* Device memory owned by mat (freed by gpu_matrix_free). */
static PrStatus
matrix_alloc(GpuEngine *e, GpuMatrix *mat, void **out, size_t bytes, PrError *err)
{
	return gpu_dev_alloc_in(e, &mat->allocs, out, bytes, err);
}

/* Device memory owned by mat, filled from the host. */
static PrStatus
matrix_upload(GpuEngine *e, GpuMatrix *mat, void **out, const void *host, size_t bytes, PrError *err)
{
	return gpu_dev_upload_in(e, &mat->allocs, out, host, bytes, err);
}

/* Device array of count values of T owned by mat, filled from host, its address in *field. */
template <typename T>
static PrStatus
matrix_upload_array(GpuEngine *e, GpuMatrix *mat, const T **field, const T *host, int64_t count, PrError *err)
{
	void	   *p;
	PrStatus	st = matrix_upload(e, mat, &p, host, (size_t) count * sizeof(T), err);

	if (st == PR_OK)
		*field = (const T *) p;
	return st;
}

/* The matrix a composite layout's arrays are allocated for (the allocator's argument). */
struct MatrixOwner
{
	GpuEngine  *e;
	GpuMatrix  *mat;
};

/* Device memory for a composite layout's arrays: owned by its matrix like every other array. */
static PrStatus
tiled_alloc(void *arg, void **out, size_t bytes, PrError *err)
{
	MatrixOwner *o = (MatrixOwner *) arg;

	return matrix_alloc(o->e, o->mat, out, bytes, err);
}

/* The engine's device and stream for the composite product (pr_gpu_tiled.h), and the allocator
 * of owner's matrix (NULL: a product, which allocates nothing). */
static TiledDevice
tiled_device(GpuEngine *e, MatrixOwner *owner)
{
	TiledDevice d;

	d.device = e->opt.device;
	d.fp64 = e->fp64;
	d.stream = e->stream;
	d.smem_grid = e->smem_grid;
	d.alloc = owner != NULL ? tiled_alloc : NULL;
	d.alloc_arg = owner;
	return d;
}

/* Uploads a composite layout (pr_gpu_tiled.cu). */
PrStatus
gpu_matrix_upload_tiled(GpuEngine *e, const PrComposite *c, GpuMatrix *mat, PrError *err)
{
	MatrixOwner owner = {e, mat};
	TiledDevice d = tiled_device(e, &owner);

	mat->kind = MATRIX_TILED;
	return pr_tiled_upload(&d, c, mat, err);
}

/* Uploads a CSR and its row bins. */
PrStatus
gpu_matrix_upload_binned(GpuEngine *e, const PrPlanCsr *csr, const PrBinned *b, GpuMatrix *mat, PrError *err)
{
	DevBinned  *d = &mat->binned;
	PrStatus	st;
	int64_t		blocks = 0;

	memset(d, 0, sizeof(*d));
	mat->kind = MATRIX_BINNED;
	mat->has_val = csr->val != NULL;
	mat->bytes = b->device_bytes;
	mat->tiles[0].n_long = b->longs.n_long;
	if ((st = matrix_upload_array(e, mat, &d->ptr, csr->ptr, csr->n + 1, err)) != PR_OK ||
		(st = matrix_upload_array(e, mat, &d->col, csr->col, csr->nnz, err)) != PR_OK ||
		(csr->val != NULL && (st = matrix_upload_array(e, mat, &d->val, csr->val, csr->nnz, err)) != PR_OK) ||
		(st = matrix_upload_array(e, mat, &d->rows, b->rows, b->bin_begin[PR_BIN_COUNT - 1], err)) != PR_OK ||
		(st = matrix_upload_array(e, mat, &d->chunk_begin_edge, b->chunk_begin_edge, b->n_chunks + 1, err)) != PR_OK ||
		(st = matrix_upload_array(e, mat, &d->chunk_row, b->chunk_row, b->n_chunks, err)) != PR_OK ||
		(st = matrix_upload_array(e, mat, &mat->tiles[0].long_row, b->longs.long_row, b->longs.n_long, err)) != PR_OK ||
		(st = matrix_upload_array(e, mat, &mat->tiles[0].chunk_begin, b->longs.chunk_begin, b->longs.n_long + 1, err)) != PR_OK)
		return st;
	for (int bin = 0; bin <= PR_BIN_COUNT; bin++)
		d->bin_begin[bin] = b->bin_begin[bin];
	for (int bin = 0; bin < PR_BIN_COUNT - 1; bin++)
	{
		int64_t		rows = b->bin_begin[bin + 1] - b->bin_begin[bin];

		d->block_begin[bin] = blocks;
		blocks += (rows * pr_bin_lanes[bin] + PR_THREADS - 1) / PR_THREADS;
	}
	d->block_begin[PR_BIN_COUNT - 1] = blocks;
	blocks += (b->n_chunks + PR_THREADS / 32 - 1) / (PR_THREADS / 32);
	d->block_begin[PR_BIN_COUNT] = blocks;
	d->n_chunks = b->n_chunks;
	d->chunk = b->chunk;
	mat->binned_blocks = blocks;
	/* chunk partial sums: one per column of each chunk (SpMM: partial[c * k + j]) */
	return matrix_alloc(e, mat, &mat->partial, (size_t) (b->n_chunks + 1) * e->k * e->elem, err);
}

/* Uploads a CSR and its row blocks, and makes room for the long rows' chunk sums. */
PrStatus
gpu_matrix_upload_row_blocks(GpuEngine *e, const PrPlanCsr *csr, const PrRowBlocks *b, GpuMatrix *mat,
							 PrError *err)
{
	DevRowBlocks *d = &mat->rowb;
	PrStatus	st;

	memset(d, 0, sizeof(*d));
	mat->kind = MATRIX_ROW_BLOCKS;
	mat->has_val = csr->val != NULL;
	mat->bytes = b->device_bytes;
	mat->tiles[0].n_long = b->longs.n_long;
	d->n_blocks = b->n_blocks;
	if ((st = matrix_upload_array(e, mat, &d->ptr, csr->ptr, csr->n + 1, err)) != PR_OK ||
		(st = matrix_upload_array(e, mat, &d->col, csr->col, csr->nnz, err)) != PR_OK ||
		(csr->val != NULL && (st = matrix_upload_array(e, mat, &d->val, csr->val, csr->nnz, err)) != PR_OK) ||
		(st = matrix_upload_array(e, mat, &d->first_row, b->first_row, b->n_blocks + 1, err)) != PR_OK ||
		(st = matrix_upload_array(e, mat, &d->chunk_edge, b->chunk_edge, b->n_blocks, err)) != PR_OK ||
		(st = matrix_upload_array(e, mat, &d->chunk_slot, b->chunk_slot, b->n_blocks, err)) != PR_OK ||
		(st = matrix_upload_array(e, mat, &mat->tiles[0].long_row, b->longs.long_row, b->longs.n_long, err)) != PR_OK ||
		(st = matrix_upload_array(e, mat, &mat->tiles[0].chunk_begin, b->longs.chunk_begin, b->longs.n_long + 1, err)) != PR_OK)
		return st;
	return matrix_alloc(e, mat, &mat->partial, (size_t) (b->n_chunks + 1) * e->elem, err);
}

/* Uploads an ALIGNED_COO layout and makes room for its segments' partial sums. */
PrStatus
gpu_matrix_upload_aligned_coo(GpuEngine *e, const PrAlignedCoo *a, GpuMatrix *mat, PrError *err)
{
	DevAlignedCoo *d = &mat->acoo;
	int64_t		words = a->n_seg * a->seg_len;
	PrStatus	st;

	memset(d, 0, sizeof(*d));
	mat->kind = MATRIX_ALIGNED_COO;
	mat->has_val = a->val != NULL;
	mat->bytes = a->device_bytes + (size_t) a->n_seg * 2 * (e->elem - sizeof(float));
	mat->acoo_clear = a->n_rows < a->n;
	d->n_seg = a->n_seg;
	d->seg_len = a->seg_len;
	d->n_rows = a->n_rows;
	d->n_split = a->n_split;
	if ((st = matrix_upload_array(e, mat, &d->idx, a->idx, words, err)) != PR_OK ||
		(a->val != NULL && (st = matrix_upload_array(e, mat, &d->val, a->val, words, err)) != PR_OK) ||
		(st = matrix_upload_array(e, mat, &d->rows, a->rows, a->n_rows, err)) != PR_OK ||
		(st = matrix_upload_array(e, mat, &d->seg_row, a->seg_row, a->n_seg, err)) != PR_OK ||
		(st = matrix_upload_array(e, mat, &d->seg_flags, a->seg_flags, a->n_seg, err)) != PR_OK ||
		(st = matrix_upload_array(e, mat, &d->split_row, a->split_row, a->n_split, err)) != PR_OK ||
		(st = matrix_upload_array(e, mat, &d->split_first, a->split_first, a->n_split, err)) != PR_OK ||
		(st = matrix_upload_array(e, mat, &d->split_last, a->split_last, a->n_split, err)) != PR_OK ||
		(st = matrix_alloc(e, mat, &mat->acoo_head, (size_t) a->n_seg * e->elem, err)) != PR_OK)
		return st;
	return matrix_alloc(e, mat, &mat->acoo_tail, (size_t) a->n_seg * e->elem, err);
}

/* Uploads a CSR with the values of P (w / out_strength of the column) for cusparseSpMV. */
PrStatus
gpu_matrix_upload_cusparse(GpuEngine *e, const PrPlanCsr *csr, const double *inv_out_host, GpuMatrix *mat,
						   PrError *err)
{
	void	   *d_ptr,
			   *d_col,
			   *d_val;
	size_t		vbytes = (size_t) csr->nnz * e->elem;
	void	   *hval = malloc(vbytes > 0 ? vbytes : 1);
	size_t		buffer = 0;
	PrStatus	st;
	cudaDataType vt = e->fp64 ? CUDA_R_64F : CUDA_R_32F;
	cusparseDnVecDescr_t vx,
				vy;
	double		one = 1.0,
				zero = 0.0;
	float		onef = 1.0f,
				zerof = 0.0f;

	if (hval == NULL)
		return pr_error_set(err, PR_ERR_NOMEM, "GPU engine: out of host memory");
	for (int64_t r = 0; r < csr->n; r++)
		for (int64_t p = csr->ptr[r]; p < csr->ptr[r + 1]; p++)
		{
			double		w = (csr->val ? csr->val[p] : 1.0) * inv_out_host[csr->col[p]];

			if (e->fp64)
				((double *) hval)[p] = w;
			else
				((float *) hval)[p] = (float) w;
		}
	if (csr->nnz > (int64_t) INT32_MAX - 1)
	{
		free(hval);
		return pr_error_set(err, PR_ERR_TOO_LARGE, "GPU engine: the cuSPARSE baseline takes at most 2^31-1 edges");
	}
	mat->kind = MATRIX_CUSPARSE;
	mat->bytes = (size_t) (csr->n + 1) * 4 + (size_t) csr->nnz * 4 + vbytes;
	{
		/* cuSPARSE wants row offsets and column ids of the same width: 32-bit both */
		std::vector<int32_t> ptr32((size_t) csr->n + 1);

		for (int64_t r = 0; r <= csr->n; r++)
			ptr32[r] = (int32_t) csr->ptr[r];
		st = matrix_upload(e, mat, &d_ptr, ptr32.data(), (size_t) (csr->n + 1) * 4, err);
	}
	if (st != PR_OK ||
		(st = matrix_upload(e, mat, &d_col, csr->col, (size_t) csr->nnz * 4, err)) != PR_OK ||
		(st = matrix_upload(e, mat, &d_val, hval, vbytes, err)) != PR_OK)
	{
		free(hval);
		return st;
	}
	free(hval);
	PR_CUSPARSE(cusparseCreateCsr(&mat->sp_mat, csr->n, csr->n, csr->nnz, d_ptr, d_col, d_val,
								  CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, vt));
	mat->sp_created = true;
	PR_CUSPARSE(cusparseCreateDnVec(&vx, csr->n, e->slots[0], vt));
	PR_CUSPARSE(cusparseCreateDnVec(&vy, csr->n, e->slots[e->n_slots > 1 ? 1 : 0], vt));
	PR_CUSPARSE(cusparseSpMV_bufferSize(e->sp, CUSPARSE_OPERATION_NON_TRANSPOSE,
										e->fp64 ? (const void *) &one : (const void *) &onef,
										mat->sp_mat, vx,
										e->fp64 ? (const void *) &zero : (const void *) &zerof,
										vy, vt, e->bench.cusparse_default_alg ? CUSPARSE_SPMV_ALG_DEFAULT : CUSPARSE_SPMV_CSR_ALG2, &buffer));
	cusparseDestroyDnVec(vx);
	cusparseDestroyDnVec(vy);
	mat->bytes += buffer;
	return matrix_alloc(e, mat, &mat->sp_buffer, buffer, err);
}

/* The second kernel of the binned and row-blocks products: each long row's chunk sums, in order. */
template <typename T>
static PrStatus
run_long_rows(GpuEngine *e, GpuMatrix *mat, T *y, PrError *err)
{
	const DevTile *d = &mat->tiles[0];

	if (d->n_long > 0)
	{
		unsigned int lb = (unsigned int) ((d->n_long + PR_THREADS - 1) / PR_THREADS);

		k_long_rows<T, PR_MODE_STORE><<<lb, PR_THREADS, 0, e->stream>>>(d->n_long, d->long_row, d->chunk_begin,
																	   (const T *) mat->partial, y, (T *) NULL);
		PR_LAUNCHED();
	}
	return PR_OK;
}

/* Runs y = M z on the device (k = 1 formats, or SpMM over the binned CSR when k > 1). */
template <typename T>
PrStatus
gpu_matrix_run(GpuEngine *e, GpuMatrix *mat, const void *zv, void *yv, PrError *err)
{
	const T    *z = (const T *) zv;
	T		   *y = (T *) yv;

	if (e->k > 1)
	{
		/* SpMM over the binned CSR (pr_gpu_spmm.h); long rows' chunk partials merged in order */
		if (e->n == 0)
			return PR_OK;
		PR_CUDA(pr_spmm_binned_run<T>(mat->binned, mat->has_val, mat->tiles[0].n_long, mat->tiles[0].long_row,
								   mat->tiles[0].chunk_begin, e->k, z, y, (T *) mat->partial, e->stream));
		return PR_OK;
	}
	if (mat->kind == MATRIX_TILED)
	{
		TiledDevice d = tiled_device(e, NULL);

		return pr_tiled_run<T>(&d, mat, z, y, err);
	}
	if (mat->kind == MATRIX_BINNED)
	{
		T		   *partial = (T *) mat->partial;

		if (mat->binned_blocks > 0)
		{
			if (mat->has_val)
				k_binned<T, true><<<(unsigned int) mat->binned_blocks, PR_THREADS, 0, e->stream>>>(mat->binned, z, y, partial);
			else
				k_binned<T, false><<<(unsigned int) mat->binned_blocks, PR_THREADS, 0, e->stream>>>(mat->binned, z, y, partial);
			PR_LAUNCHED();
		}
		return run_long_rows<T>(e, mat, y, err);
	}
	if (mat->kind == MATRIX_ROW_BLOCKS)
	{
		T		   *partial = (T *) mat->partial;

		if (mat->rowb.n_blocks > 0)
		{
			if (mat->has_val)
				k_row_blocks<T, true><<<(unsigned int) mat->rowb.n_blocks, PR_THREADS, 0, e->stream>>>(mat->rowb, z, y, partial);
			else
				k_row_blocks<T, false><<<(unsigned int) mat->rowb.n_blocks, PR_THREADS, 0, e->stream>>>(mat->rowb, z, y, partial);
			PR_LAUNCHED();
		}
		return run_long_rows<T>(e, mat, y, err);
	}
	if (mat->kind == MATRIX_ALIGNED_COO)
	{
		const DevAlignedCoo *a = &mat->acoo;
		T		   *head = (T *) mat->acoo_head,
				   *tail = (T *) mat->acoo_tail;
		unsigned int blocks = (unsigned int) ((a->n_seg + PR_THREADS - 1) / PR_THREADS);

		if (mat->acoo_clear)
			PR_CUDA(cudaMemsetAsync(y, 0, (size_t) e->n * sizeof(T), e->stream));
		if (mat->has_val)
			k_aligned_coo<T, true><<<blocks, PR_THREADS, 0, e->stream>>>(*a, z, y, head, tail);
		else
			k_aligned_coo<T, false><<<blocks, PR_THREADS, 0, e->stream>>>(*a, z, y, head, tail);
		PR_LAUNCHED();
		if (a->n_split > 0)
		{
			k_aligned_coo_split_rows<T><<<(unsigned int) ((a->n_split + PR_THREADS - 1) / PR_THREADS), PR_THREADS, 0,
				e->stream>>>(*a, y, head, tail);
			PR_LAUNCHED();
		}
		return PR_OK;
	}
	if (mat->kind == MATRIX_CUSPARSE)
	{
		cudaDataType vt = e->fp64 ? CUDA_R_64F : CUDA_R_32F;
		cusparseDnVecDescr_t vx,
					vy;
		T			one = 1,
					zero = 0;
		cusparseStatus_t s;

		PR_CUSPARSE(cusparseCreateDnVec(&vx, e->n, (void *) zv, vt));
		PR_CUSPARSE(cusparseCreateDnVec(&vy, e->n, yv, vt));
		s = cusparseSpMV(e->sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat->sp_mat, vx, &zero, vy, vt,
						 e->bench.cusparse_default_alg ? CUSPARSE_SPMV_ALG_DEFAULT : CUSPARSE_SPMV_CSR_ALG2, mat->sp_buffer);
		cusparseDestroyDnVec(vx);
		cusparseDestroyDnVec(vy);
		PR_CUSPARSE(s);
		return PR_OK;
	}
	return pr_error_set(err, PR_ERR_UNSUPPORTED, "GPU engine: product not prepared");
}

/* The two precisions. */
template PrStatus gpu_matrix_run<float>(GpuEngine *, GpuMatrix *, const void *, void *, PrError *);
template PrStatus gpu_matrix_run<double>(GpuEngine *, GpuMatrix *, const void *, void *, PrError *);

/* Frees a matrix's device arrays and cuSPARSE descriptor and clears it. */
void
gpu_matrix_free(GpuMatrix *mat)
{
	if (mat->sp_created)
		cusparseDestroySpMat(mat->sp_mat);
	for (void *p : mat->allocs)
		cudaFree(p);
	*mat = GpuMatrix();
}
