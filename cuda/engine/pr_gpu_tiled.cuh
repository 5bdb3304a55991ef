/*
 * pr_gpu_tiled.cuh — the definition of TiledMatrix (pr_gpu_tiled.h), for the files that reach
 * into it: pr_gpu_tiled.cu, and pr_gpu.cu whose GpuMatrix extends it with the other formats.
 */
#ifndef PR_GPU_TILED_CUH
#define PR_GPU_TILED_CUH

#include "pr_gpu_tiled.h"
#include "pr_gpu_tile_kernels.cuh"

/* A composite layout on the device: its tiles and compact partials. */
struct TiledMatrix
{
	bool		has_val;
	int			n_tiles;
	DevTile		tiles[PR_PLAN_MAX_TILES];
	void	   *partial;		/* chunk partial sums */
	size_t		bytes;			/* device bytes of the format */
	/* compact partials: later tiles' slots, and the merge lists */
	bool		compact;
	void	   *part;			/* [n_part] */
	int64_t		part_base[PR_PLAN_MAX_TILES];
	int64_t		n_merge_rows;
	const int32_t *merge_row;
	const int64_t *merge_ptr;
	const int32_t *merge_slot;
};

#endif							/* PR_GPU_TILED_CUH */
