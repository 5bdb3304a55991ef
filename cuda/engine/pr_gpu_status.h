/*
 * pr_gpu_status.h — one mapping from a failed CUDA or cuSPARSE call to the core's PrStatus and error
 * text, shared by the CUDA sources (each names its module in the message: "GPU engine", "GPU top-k"...).
 * Out of memory becomes PR_ERR_NOMEM (the service answers it with SQLSTATE 53200), anything else
 * PR_ERR_ENGINE.
 */
#ifndef PR_GPU_STATUS_H
#define PR_GPU_STATUS_H

#include "pr_common.h"

#include <cuda_runtime.h>
#include <cusparse.h>

/* Records a failed CUDA call (its text, file and line) in err and returns the status to report. */
static inline PrStatus
pr_cuda_failed(PrError *err, cudaError_t status, const char *module, const char *call,
			   const char *file, int line)
{
	return pr_error_set(err, status == cudaErrorMemoryAllocation ? PR_ERR_NOMEM : PR_ERR_ENGINE,
						"%s: %s failed: %s (%s:%d)", module, call, cudaGetErrorString(status), file, line);
}

/* Checks a CUDA call; on failure records it in the enclosing function's err and returns its status. */
#define PR_CUDA_OR_RETURN(module, call) do { \
	cudaError_t pr_cuda_status_ = (call); \
	if (pr_cuda_status_ != cudaSuccess) \
		return pr_cuda_failed(err, pr_cuda_status_, module, #call, __FILE__, __LINE__); \
} while (0)

/* Records a failed cuSPARSE call in err and returns the status to report. */
static inline PrStatus
pr_cusparse_failed(PrError *err, cusparseStatus_t status, const char *module, const char *call,
				   const char *file, int line)
{
	return pr_error_set(err, status == CUSPARSE_STATUS_ALLOC_FAILED ? PR_ERR_NOMEM : PR_ERR_ENGINE,
						"%s: %s failed: %s (%s:%d)", module, call, cusparseGetErrorString(status), file, line);
}

/* Checks a cuSPARSE call; on failure records it in err and returns its status. */
#define PR_CUSPARSE_OR_RETURN(module, call) do { \
	cusparseStatus_t pr_sparse_status_ = (call); \
	if (pr_sparse_status_ != CUSPARSE_STATUS_SUCCESS) \
		return pr_cusparse_failed(err, pr_sparse_status_, module, #call, __FILE__, __LINE__); \
} while (0)

#endif							/* PR_GPU_STATUS_H */
