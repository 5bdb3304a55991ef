/*
 * pr_gpu_tiled.cu — the tile-composite product on one device (see pr_gpu_tiled.h): upload of a
 * planned layout, and the launches of one product (tiles, then the merge).
 */
#include "pr_gpu_tiled.cuh"
#include "pr_gpu_status.h"

#include <stdlib.h>
#include <string.h>

/* Records a failed CUDA call in err and returns its status from the enclosing function. */
#define PRT_CUDA(call) PR_CUDA_OR_RETURN("GPU engine", call)

/* Checks the launch just made. */
#define PRT_LAUNCHED() PRT_CUDA(cudaGetLastError())

/* A zeroed layout. */
TiledMatrix *
pr_tiled_new(void)
{
	return (TiledMatrix *) calloc(1, sizeof(TiledMatrix));
}

/* Frees the host struct (the device arrays belong to the allocator's owner). */
void
pr_tiled_delete(TiledMatrix *mat)
{
	free(mat);
}

/* Device bytes of the layout. */
size_t
pr_tiled_bytes(const TiledMatrix *mat)
{
	return mat->bytes;
}

/* Allocates device memory through the device's allocator and copies host data into it. */
static PrStatus
tiled_upload_array(const TiledDevice *d, void **out, const void *host, size_t bytes, PrError *err)
{
	PrStatus	st = d->alloc(d->alloc_arg, out, bytes, err);

	if (st != PR_OK)
		return st;
	if (bytes > 0)
		PRT_CUDA(cudaMemcpy(*out, host, bytes, cudaMemcpyHostToDevice));
	return PR_OK;
}

/* Lets every shared-memory tile kernel of type T use smem bytes of dynamic shared memory. */
template <typename T>
static cudaError_t
smem_kernel_limits(int smem)
{
	cudaError_t c = cudaSuccess;

#define PR_SMEM_LIMIT(VAL, MODE) \
	if (c == cudaSuccess) \
		c = cudaFuncSetAttribute(k_tile_smem<T, VAL, MODE>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem)
	PR_SMEM_LIMIT(false, PR_MODE_STORE);
	PR_SMEM_LIMIT(false, PR_MODE_ADD);
	PR_SMEM_LIMIT(false, PR_MODE_PART);
	PR_SMEM_LIMIT(true, PR_MODE_STORE);
	PR_SMEM_LIMIT(true, PR_MODE_ADD);
	PR_SMEM_LIMIT(true, PR_MODE_PART);
#undef PR_SMEM_LIMIT
	return c;
}

/* Shared-memory tile kernels: opt-in limit of both precisions, and the grid that fits the device. */
PrStatus
pr_tiled_smem_setup(int device, bool fp64, int64_t smem_width, unsigned int *smem_grid, PrError *err)
{
	int			sms = 0,
				per_sm = 0;
	size_t		smem = (size_t) (smem_width + 1) * (fp64 ? sizeof(double) : sizeof(float));

	PRT_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
	PRT_CUDA(smem_kernel_limits<float>((int) smem));
	PRT_CUDA(smem_kernel_limits<double>((int) smem));
	if (fp64)
		PRT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k_tile_smem<double, false, PR_MODE_ADD>, PR_SMEM_THREADS, smem));
	else
		PRT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k_tile_smem<float, false, PR_MODE_ADD>, PR_SMEM_THREADS, smem));
	*smem_grid = (unsigned int) (sms * (per_sm > 0 ? per_sm : 1));
	return PR_OK;
}

/* Uploads a composite layout. */
PrStatus
pr_tiled_upload(const TiledDevice *dv, const PrComposite *c, TiledMatrix *mat, PrError *err)
{
	size_t		elem = dv->fp64 ? sizeof(double) : sizeof(float);
	int64_t		max_partial = 0;
	PrStatus	st;

	mat->n_tiles = c->n_tiles;
	mat->bytes = c->device_bytes;
	for (int t = 0; t < c->n_tiles; t++)
	{
		const PrCompositeTile *tile = &c->tiles[t];
		DevTile    *d = &mat->tiles[t];
		void	   *p;

		memset(d, 0, sizeof(*d));
		d->n_vec = tile->n_vec;
		d->n_ell = tile->n_ell;
		d->n_long = tile->longs.n_long;
		mat->has_val = tile->val != NULL;
		if ((st = tiled_upload_array(dv, &p, tile->vec_row, (size_t) tile->n_vec * 4, err)) != PR_OK)
			return st;
		d->vec_row = (const int32_t *) p;
		if ((st = tiled_upload_array(dv, &p, tile->vec_ptr, (size_t) (tile->n_vec + 1) * 8, err)) != PR_OK)
			return st;
		d->vec_ptr = (const int64_t *) p;
		if ((st = tiled_upload_array(dv, &p, tile->ell_off, (size_t) (tile->n_ell + 1) * 8, err)) != PR_OK)
			return st;
		d->ell_off = (const int64_t *) p;
		if ((st = tiled_upload_array(dv, &p, tile->ell_row, (size_t) tile->n_ell * 32 * 4, err)) != PR_OK)
			return st;
		d->ell_row = (const int32_t *) p;
		d->col_begin = tile->col_begin;
		d->width = (int32_t) (tile->col_end - tile->col_begin);
		d->local16 = tile->local16 ? 1 : 0;
		if (tile->local16)
		{
			if ((st = tiled_upload_array(dv, &p, tile->idx16, (size_t) tile->n_idx * 2, err)) != PR_OK)
				return st;
			d->idx16 = (const uint16_t *) p;
		}
		else
		{
			if ((st = tiled_upload_array(dv, &p, tile->idx, (size_t) tile->n_idx * 4, err)) != PR_OK)
				return st;
			d->idx = (const int32_t *) p;
		}
		if (tile->val != NULL)
		{
			if ((st = tiled_upload_array(dv, &p, tile->val, (size_t) tile->n_idx * 4, err)) != PR_OK)
				return st;
			d->val = (const float *) p;
		}
		if ((st = tiled_upload_array(dv, &p, tile->longs.long_row, (size_t) tile->longs.n_long * 4, err)) != PR_OK)
			return st;
		d->long_row = (const int32_t *) p;
		if ((st = tiled_upload_array(dv, &p, tile->longs.chunk_begin, (size_t) (tile->longs.n_long + 1) * 8, err)) != PR_OK)
			return st;
		d->chunk_begin = (const int64_t *) p;
		if (tile->longs.n_long > 0 && tile->n_vec > max_partial)
			max_partial = tile->n_vec;
		mat->part_base[t] = tile->part_base;
	}
	mat->compact = c->options.compact && c->n_tiles > 1 && c->merge_ptr != NULL;
	if (mat->compact)
	{
		void	   *p;

		if ((st = dv->alloc(dv->alloc_arg, &mat->part, (size_t) (c->n_part + 1) * elem, err)) != PR_OK)
			return st;
		mat->n_merge_rows = c->n_merge_rows;
		if ((st = tiled_upload_array(dv, &p, c->merge_row, (size_t) c->n_merge_rows * 4, err)) != PR_OK)
			return st;
		mat->merge_row = (const int32_t *) p;
		if ((st = tiled_upload_array(dv, &p, c->merge_ptr, (size_t) (c->n_merge_rows + 1) * 8, err)) != PR_OK)
			return st;
		mat->merge_ptr = (const int64_t *) p;
		if ((st = tiled_upload_array(dv, &p, c->merge_slot, (size_t) c->merge_ptr[c->n_merge_rows] * 4, err)) != PR_OK)
			return st;
		mat->merge_slot = (const int32_t *) p;
	}
	return dv->alloc(dv->alloc_arg, &mat->partial, (size_t) (max_partial + 1) * elem, err);
}

/* Launches one tile's kernels in one of the write modes (template dispatch). */
template <typename T, int MODE>
static PrStatus
run_tile_mode(const TiledDevice *dv, const TiledMatrix *mat, int t, const T *z, T *y, PrError *err)
{
	const DevTile *d = &mat->tiles[t];
	int64_t		warps = d->n_vec + d->n_ell;
	unsigned int blocks = (unsigned int) ((warps * 32 + PR_THREADS - 1) / PR_THREADS);
	T		   *partial = (T *) mat->partial;
	T		   *part = MODE == PR_MODE_PART ? (T *) mat->part + mat->part_base[t] : (T *) NULL;

	if (blocks > 0 && d->local16)
	{
		size_t		smem = (size_t) (d->width + 1) * sizeof(T);

		if (mat->has_val)
			k_tile_smem<T, true, MODE><<<dv->smem_grid, PR_SMEM_THREADS, smem, dv->stream>>>(*d, z, y, partial, part);
		else
			k_tile_smem<T, false, MODE><<<dv->smem_grid, PR_SMEM_THREADS, smem, dv->stream>>>(*d, z, y, partial, part);
		PRT_LAUNCHED();
	}
	else if (blocks > 0)
	{
		if (mat->has_val)
			k_tile<T, true, MODE><<<blocks, PR_THREADS, 0, dv->stream>>>(*d, z, y, partial, part);
		else
			k_tile<T, false, MODE><<<blocks, PR_THREADS, 0, dv->stream>>>(*d, z, y, partial, part);
		PRT_LAUNCHED();
	}
	if (d->n_long > 0)
	{
		unsigned int lb = (unsigned int) ((d->n_long + PR_THREADS - 1) / PR_THREADS);

		k_long_rows<T, MODE><<<lb, PR_THREADS, 0, dv->stream>>>(d->n_long, d->long_row, d->chunk_begin, partial, y, part);
		PRT_LAUNCHED();
	}
	return PR_OK;
}

/* Launches one tile: stores (tile 0), adds into y, or writes compact partials. */
template <typename T>
static PrStatus
run_tile(const TiledDevice *dv, const TiledMatrix *mat, int t, int mode, const T *z, T *y, PrError *err)
{
	if (mode == PR_MODE_STORE)
		return run_tile_mode<T, PR_MODE_STORE>(dv, mat, t, z, y, err);
	if (mode == PR_MODE_ADD)
		return run_tile_mode<T, PR_MODE_ADD>(dv, mat, t, z, y, err);
	return run_tile_mode<T, PR_MODE_PART>(dv, mat, t, z, y, err);
}

/* y = M z: every tile in order, then the merge of compact partials. */
template <typename T>
PrStatus
pr_tiled_run(const TiledDevice *dv, const TiledMatrix *mat, const T *z, T *y, PrError *err)
{
	for (int t = 0; t < mat->n_tiles; t++)
	{
		int			mode = t == 0 ? PR_MODE_STORE : mat->compact ? PR_MODE_PART : PR_MODE_ADD;
		PrStatus	st = run_tile<T>(dv, mat, t, mode, z, y, err);

		if (st != PR_OK)
			return st;
	}
	if (mat->compact && mat->n_merge_rows > 0)
	{
		unsigned int mb = (unsigned int) ((mat->n_merge_rows + PR_THREADS - 1) / PR_THREADS);

		k_merge<T><<<mb, PR_THREADS, 0, dv->stream>>>(mat->n_merge_rows, mat->merge_row, mat->merge_ptr,
													 mat->merge_slot, (const T *) mat->part, y);
		PRT_LAUNCHED();
	}
	return PR_OK;
}

/* The two precisions. */
template PrStatus pr_tiled_run<float>(const TiledDevice *, const TiledMatrix *, const float *, float *, PrError *);
template PrStatus pr_tiled_run<double>(const TiledDevice *, const TiledMatrix *, const double *, double *, PrError *);
