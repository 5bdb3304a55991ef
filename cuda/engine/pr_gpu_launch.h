/*
 * pr_gpu_launch.h — launch arithmetic shared by the CUDA sources: the blocks of a grid-stride
 * kernel and the bits of a radix sort over ids.
 */
#ifndef PR_GPU_LAUNCH_H
#define PR_GPU_LAUNCH_H

#include <stdint.h>

/* Blocks of a grid-stride kernel over count items, threads per block: at least 1, at most max_blocks. */
static inline unsigned int
pr_grid_blocks(int64_t count, int threads, int64_t max_blocks)
{
	int64_t		blocks = (count + threads - 1) / threads;

	if (blocks < 1)
		blocks = 1;
	return (unsigned int) (blocks < max_blocks ? blocks : max_blocks);
}

/* Bits that hold every value below limit (at least 1, at most 62): a radix sort's end bit. */
static inline int
pr_bits_below(uint64_t limit)
{
	int			bits = 1;

	while (bits < 62 && ((uint64_t) 1 << bits) < limit)
		bits++;
	return bits;
}

#endif							/* PR_GPU_LAUNCH_H */
