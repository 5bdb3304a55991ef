/*
 * pr_gpu_buffer.h — device memory helpers shared by the CUDA sources: a device buffer that grows
 * on demand (scratch kept between calls: CUB's temporary storage, the top-k's work arrays) and the
 * threaded copy of pageable host memory to the device (pr_gpu_build.cu).
 */
#ifndef PR_GPU_BUFFER_H
#define PR_GPU_BUFFER_H

#include "pr_gpu_status.h"

#include <cuda_runtime.h>

/*
 * Makes the device buffer *ptr of *have bytes at least need bytes long: a shorter one is freed and
 * a new one allocated (its contents are not kept).  A failure is reported as module's.
 */
static inline PrStatus
pr_gpu_buffer_reserve(void **ptr, size_t *have, size_t need, const char *module, PrError *err)
{
	if (*ptr != NULL && *have >= need)
		return PR_OK;
	if (*ptr != NULL)
	{
		void	   *old = *ptr;

		*ptr = NULL;
		*have = 0;
		PR_CUDA_OR_RETURN(module, cudaFree(old));
	}
	PR_CUDA_OR_RETURN(module, cudaMalloc(ptr, need > 0 ? need : 16));
	*have = need;
	return PR_OK;
}

/*
 * Copies bytes of host memory (pageable, e.g. a shared-memory segment) to device memory by up to
 * n_threads host threads, each through its own pinned buffers and stream (kept for the life of
 * the process); returns when the copy is complete.  Several times faster than one cudaMemcpy from
 * pageable memory for large arrays.
 */
PrStatus	pr_gpu_copy_to_device(int device, void *dst, const void *src, size_t bytes,
								  int n_threads, PrError *err);

#endif							/* PR_GPU_BUFFER_H */
