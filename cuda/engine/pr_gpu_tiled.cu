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

/* Device array of count values of T through the device's allocator, filled from host (a
 * synchronous copy), its address in *field. */
template <typename T>
static PrStatus
tiled_upload_array(const TiledDevice *d, const T **field, const T *host, int64_t count, PrError *err)
{
	size_t		bytes = (size_t) count * sizeof(T);
	void	   *p;
	PrStatus	st = d->alloc(d->alloc_arg, &p, bytes, err);

	if (st != PR_OK)
		return st;
	if (bytes > 0)
		PRT_CUDA(cudaMemcpy(p, host, bytes, cudaMemcpyHostToDevice));
	*field = (const T *) p;
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

		memset(d, 0, sizeof(*d));
		d->n_vec = tile->n_vec;
		d->n_ell = tile->n_ell;
		d->n_long = tile->longs.n_long;
		mat->has_val = tile->val != NULL;
		if ((st = tiled_upload_array(dv, &d->vec_row, tile->vec_row, tile->n_vec, err)) != PR_OK)
			return st;
		if ((st = tiled_upload_array(dv, &d->vec_ptr, tile->vec_ptr, tile->n_vec + 1, err)) != PR_OK)
			return st;
		if ((st = tiled_upload_array(dv, &d->ell_off, tile->ell_off, tile->n_ell + 1, err)) != PR_OK)
			return st;
		if ((st = tiled_upload_array(dv, &d->ell_row, tile->ell_row, tile->n_ell * 32, err)) != PR_OK)
			return st;
		d->col_begin = tile->col_begin;
		d->width = (int32_t) (tile->col_end - tile->col_begin);
		d->local16 = tile->local16 ? 1 : 0;
		if (tile->local16)
		{
			if ((st = tiled_upload_array(dv, &d->idx16, tile->idx16, tile->n_idx, err)) != PR_OK)
				return st;
		}
		else
		{
			if ((st = tiled_upload_array(dv, &d->idx, tile->idx, tile->n_idx, err)) != PR_OK)
				return st;
		}
		if (tile->val != NULL)
		{
			if ((st = tiled_upload_array(dv, &d->val, tile->val, tile->n_idx, err)) != PR_OK)
				return st;
		}
		if ((st = tiled_upload_array(dv, &d->long_row, tile->longs.long_row, tile->longs.n_long, err)) != PR_OK)
			return st;
		if ((st = tiled_upload_array(dv, &d->chunk_begin, tile->longs.chunk_begin, tile->longs.n_long + 1, err)) != PR_OK)
			return st;
		if (tile->longs.n_long > 0 && tile->n_vec > max_partial)
			max_partial = tile->n_vec;
		mat->part_base[t] = tile->part_base;
	}
	mat->compact = c->options.compact && c->n_tiles > 1 && c->merge_ptr != NULL;
	if (mat->compact)
	{
		if ((st = dv->alloc(dv->alloc_arg, &mat->part, (size_t) (c->n_part + 1) * elem, err)) != PR_OK)
			return st;
		mat->n_merge_rows = c->n_merge_rows;
		if ((st = tiled_upload_array(dv, &mat->merge_row, c->merge_row, c->n_merge_rows, err)) != PR_OK)
			return st;
		if ((st = tiled_upload_array(dv, &mat->merge_ptr, c->merge_ptr, c->n_merge_rows + 1, err)) != PR_OK)
			return st;
		if ((st = tiled_upload_array(dv, &mat->merge_slot, c->merge_slot, c->merge_ptr[c->n_merge_rows], err)) != PR_OK)
			return st;
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
