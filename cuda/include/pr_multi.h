/*
 * pr_multi.h — several GPUs of one machine as one engine (plain C header; CUDA + NCCL
 * implementation in pr_multi.cu, built into libpowerrank_multi.so by cuda/Makefile.multi, which
 * links libpowerrank_gpu.so).  A graph larger than one GPU's memory runs on the single-GPU engine's
 * streamed matrices instead (doc/DESIGN.md, "Resident or streamed").
 *
 * pr_multi_engine_create returns a PrEngine (core/pr_engine.h) that the driver (pr_driver.h) runs
 * like any other: every algorithm (PageRank, personalized PageRank / RWR with k columns, HITS) and
 * every form (scores, top-k).  It is the parts engine of core/pr_parts.h over one single-GPU engine
 * per GPU (pr_gpu.h, devices 0 .. n_gpus-1, each prepared on the in-edges of its own rows, in the
 * layout it chooses for them, in the parts' order by out-degree, which every GPU keeps:
 * PrGpuOptions.graph_order; each GPU updates only its own rows).  Before a product, every GPU's own
 * rows of what it reads, one range of every GPU's vectors, go to every other GPU by the copy engines
 * (peer copies over NVLink or PCIe, a stream per pair of GPUs) or by NCCL broadcasts, whichever the
 * engine measured faster for that vector width; after a push product (HITS) the GPUs' partial sums
 * are added by an in-place ncclAllReduce; all ordered on the engines' streams, so the product, the
 * exchange and the next operation follow one another on every GPU without the host waiting (but for
 * the first gather of a width, which is timed).  One host thread drives every GPU.
 *
 * NCCL's settings are the environment's (NCCL_*); NCCL_MIN_NCHANNELS defaults to 32 when unset.
 * Not thread-safe: one thread uses a PrMultiComms and its engines.
 */
#ifndef PR_MULTI_H
#define PR_MULTI_H

#include "pr_gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The NCCL communicators over GPUs 0 .. n-1: one per process, shared by every engine. */
typedef struct PrMultiComms PrMultiComms;

/*
 * Starts NCCL over GPUs 0 .. n_gpus-1 (2 <= n_gpus <= the visible devices and PR_PARTS_MAX);
 * NULL with err set when NCCL or CUDA fails.  An engine over fewer GPUs gets communicators over
 * its GPUs on its creation, kept here too.
 */
PrMultiComms *pr_multi_comms_create(int n_gpus, PrError *err);

/* The GPUs comms spans. */
int			pr_multi_comms_count(const PrMultiComms *comms);

/* Frees the communicators (every engine made with them released first).  NULL is ignored. */
void		pr_multi_comms_free(PrMultiComms *comms);

/*
 * An engine over GPUs 0 .. n_gpus-1 (2 <= n_gpus <= pr_multi_comms_count(comms)): a single-GPU
 * engine per GPU with gpu's settings (gpu->device is ignored, memory_budget holds for each GPU;
 * gpu NULL: pr_gpu_options_init's defaults), composed by pr_parts_engine_create.  Its name is "gpu-multi(<n_gpus>)".  Released
 * through its ops like any engine, before comms.  NULL with err set on failure.
 */
PrEngine   *pr_multi_engine_create(PrMultiComms *comms, const PrGpuOptions *gpu, int n_gpus,
									PrError *err);

#ifdef __cplusplus
}
#endif

#endif							/* PR_MULTI_H */
