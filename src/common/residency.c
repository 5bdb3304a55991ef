/*
 * residency.c — what decides where the GPU engine keeps a request's graph (core/
 * pr_residency.h: resident, streamed, or no room): the request's shape (columns, restart, warm
 * start), set by the backend that sends it, and the inputs of pr_residency_choose made from it and
 * the engine process's configuration.  The engine process's cpu-test engine makes its choice from
 * these inputs; powerrank_estimate predicts that choice from the same ones in a backend.
 *
 * Runs in both: no palloc, no elog.
 */
#include "channel.h"

#include <stdint.h>

#include "pr_gpu.h"

/*
 * Sets the fields of a request that shape its run: the algorithm, k columns (one for an algorithm
 * without a restart: HITS), the restart (uniform, or restart_entries nodes over the k columns) and
 * the warm start (the powerrank.warm_start setting passed as warm_start; only for a restart that
 * is not uniform).
 */
void
service_request_shape(ServiceRequest *req, ServiceAlgorithm algorithm, int k, bool restart_uniform,
					  int64 restart_entries, bool warm_start)
{
	const PrAlgorithmInfo *a = service_algorithm(algorithm);

	req->algorithm = algorithm;
	req->k = pr_algorithm_columns(a, k);
	req->restart_uniform = !a->restart || restart_uniform;
	req->restart_entries = req->restart_uniform ? 0 : restart_entries;
	req->warm_start = warm_start && !req->restart_uniform;
}

/*
 * Fills the residency input of a run of `columns` columns (the request's k, or a batch's width)
 * answering req on a graph of nodes and edges: the vector slots the driver asks for and the push
 * matrix when the algorithm needs it (its descriptor, pr_algorithm.h), the value size of
 * powerrank.gpu_precision and powerrank.gpu_memory as the budget.  free_bytes is SIZE_MAX: the
 * device's free memory is known only to the GPU engine, which reads it when it prepares.
 */
void
service_residency_input(const ServiceRequest *req, int columns, int64 nodes, int64 edges,
						bool weighted, const ServiceEngineConfig *config, PrResidencyInput *in)
{
	const PrAlgorithmInfo *a = service_algorithm(req->algorithm);

	memset(in, 0, sizeof(*in));
	in->nodes = nodes;
	in->edges = edges;
	in->k = columns;
	in->slots = pr_algorithm_slots(a, req->warm_start);
	in->elem = config->gpu_precision == PR_GPU_FP64 ? sizeof(double) : sizeof(float);
	in->weighted = weighted;
	in->push = (a->needs & PR_NEED_PUSH) != 0;
	in->budget = config->memory_limit > 0 ? (size_t) config->memory_limit : 0;
	in->free_bytes = SIZE_MAX;
}
