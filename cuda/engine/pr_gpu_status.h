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

/* Records a failed CUDA or cuSPARSE call (its text, the library's reason, file and line) in err and
 * returns the status to report. */
static inline PrStatus
pr_gpu_call_failed(PrError *err, bool out_of_memory, const char *module, const char *call,
				   const char *reason, const char *file, int line)
{
	return pr_error_set(err, out_of_memory ? PR_ERR_NOMEM : PR_ERR_ENGINE, "%s: %s failed: %s (%s:%d)",
						module, call, reason, file, line);
}

/* Records a failed CUDA call in err and returns the status to report. */
static inline PrStatus
pr_cuda_failed(PrError *err, cudaError_t status, const char *module, const char *call,
			   const char *file, int line)
{
	return pr_gpu_call_failed(err, status == cudaErrorMemoryAllocation, module, call,
							  cudaGetErrorString(status), file, line);
}

/* Records a failed cuSPARSE call in err and returns the status to report. */
static inline PrStatus
pr_cusparse_failed(PrError *err, cusparseStatus_t status, const char *module, const char *call,
				   const char *file, int line)
{
	return pr_gpu_call_failed(err, status == CUSPARSE_STATUS_ALLOC_FAILED, module, call,
							  cusparseGetErrorString(status), file, line);
}

/* Checks a call returning a status of type status_type (call_text: its source text); on failure
 * records it in the enclosing function's err through failed() and returns its status. */
#define PR_GPU_CALL_OR_RETURN(status_type, success, failed, module, call, call_text) do { \
	status_type pr_call_status_ = (call); \
	if (pr_call_status_ != (success)) \
		return failed(err, pr_call_status_, module, call_text, __FILE__, __LINE__); \
} while (0)

/* Checks a CUDA call; on failure records it in the enclosing function's err and returns its status. */
#define PR_CUDA_OR_RETURN(module, call) \
	PR_GPU_CALL_OR_RETURN(cudaError_t, cudaSuccess, pr_cuda_failed, module, call, #call)

/* Checks a cuSPARSE call; likewise. */
#define PR_CUSPARSE_OR_RETURN(module, call) \
	PR_GPU_CALL_OR_RETURN(cusparseStatus_t, CUSPARSE_STATUS_SUCCESS, pr_cusparse_failed, module, call, #call)

#endif							/* PR_GPU_STATUS_H */
