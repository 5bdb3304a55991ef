/*
 * pr_gpu_tiled.h — the tile-composite product on one device, for the GPU engine's matrices
 * (pr_gpu_matrix.cu).  C++ (CUDA) callers only; no kernels here, so a file with kernels of its own
 * can include it without name clashes.
 *
 * A PrComposite planned on the host (cuda/plan/pr_plan.h) is uploaded once (pr_tiled_upload) and
 * run per product (pr_tiled_run): its tiles in order — tile 0 stores every row, later tiles add
 * into y or write compact partials — then the merge of the compact partials.  y[r] = sum of
 * val * z[col] over row r; z has the matrix's column count + 1 entries, the last one 0 (the
 * padding column).
 * The definition of TiledMatrix is in pr_gpu_tiled.cuh (it embeds the kernels' argument structs).
 */
#ifndef PR_GPU_TILED_H
#define PR_GPU_TILED_H

#include "pr_common.h"
#include "pr_plan.h"

#include <cuda_runtime.h>

/* A composite layout on one device (pr_gpu_tiled.cuh). */
struct TiledMatrix;

/* Allocates bytes of device memory at *out for a layout's arrays; the allocator's owner frees them. */
typedef PrStatus (*TiledAllocFn) (void *arg, void **out, size_t bytes, PrError *err);

/* The device a layout lives on and how its products are launched. */
struct TiledDevice
{
	int			device;			/* CUDA device (current when the functions are called) */
	bool		fp64;			/* vectors in double (else float) */
	cudaStream_t stream;
	unsigned int smem_grid;		/* blocks of the shared-memory tile kernel (pr_tiled_smem_setup) */
	TiledAllocFn alloc;
	void	   *alloc_arg;
};

/*
 * Lets the shared-memory tile kernels of both precisions use tiles of smem_width columns on the
 * current device (fp64 decides the bytes per column) and sizes their grid: *smem_grid = blocks
 * that fit the device at once.
 */
PrStatus	pr_tiled_smem_setup(int device, bool fp64, int64_t smem_width, unsigned int *smem_grid,
								PrError *err);

/* A zeroed TiledMatrix (host memory; NULL when out of memory) and its release (host part only). */
TiledMatrix *pr_tiled_new(void);
void		pr_tiled_delete(TiledMatrix *mat);

/* Device bytes of an uploaded layout (the plan's count). */
size_t		pr_tiled_bytes(const TiledMatrix *mat);

/* Uploads composite c to the device d (arrays through d->alloc, synchronous copies). */
PrStatus	pr_tiled_upload(const TiledDevice *d, const PrComposite *c, TiledMatrix *mat, PrError *err);

/* Enqueues y = M z on d->stream (T = float or double, as d->fp64 says). */
template <typename T>
PrStatus	pr_tiled_run(const TiledDevice *d, const TiledMatrix *mat, const T *z, T *y, PrError *err);

#endif							/* PR_GPU_TILED_H */
