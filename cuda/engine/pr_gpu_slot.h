/*
 * pr_gpu_slot.h — a prepared GPU engine's vector slot as device memory, for the multi-GPU engine
 * (pr_multi.cu), whose exchange writes the rows of a slot behind the engine's back (plain C
 * header, implemented in pr_gpu.cu and exported from libpowerrank_gpu.so; not part of the
 * interface the PostgreSQL glue sees).
 *
 * A slot is n x k values of elem bytes (float or double), row-major, in the engine's private
 * order: row i holds the graph's node new_to_old[i].  Resident or streamed, a slot is one plain
 * device array on the engine's device; the engine orders every operation on its one stream.
 */
#ifndef PR_GPU_SLOT_H
#define PR_GPU_SLOT_H

#include "pr_engine.h"

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Where a slot lives and how its rows are ordered. */
typedef struct PrGpuSlotView
{
	int			device;			/* CUDA device ordinal */
	cudaStream_t stream;		/* the engine's stream: work on the slot goes there, in order */
	void	   *data;			/* n x k values on the device */
	size_t		elem;			/* bytes of a value: 4 (float) or 8 (double) */
	int64_t		n;
	int			k;
	const int32_t *new_to_old;	/* [n] on the device: the graph id of each row, or NULL when the
								 * private order is the graph's own (row i is node i) */
} PrGpuSlotView;

/*
 * Describes slot of a prepared GPU engine (PR_ERR_INVALID for another kind of engine, an engine
 * not prepared or a slot out of range).
 */
PrStatus	pr_gpu_engine_slot(PrEngine *engine, int slot, PrGpuSlotView *out, PrError *err);

/*
 * What a normalized pull product reads of slot, for an exchange before that product: when the
 * engine owns rows (PrEngineOps.own_rows) and its last update wrote slot, the slot's copy scaled
 * by the out-strengths, in which only the owned rows are written and the dangling nodes' rows hold
 * their values (*scaled = true, out describes that copy: same shape and device as the slot);
 * otherwise the slot itself (*scaled = false: exchange its values).
 */
PrStatus	pr_gpu_engine_product_input(PrEngine *engine, int slot, PrGpuSlotView *out, bool *scaled,
										PrError *err);

/*
 * Tells the engine that work enqueued on its stream by someone else completed the rows of slot's
 * scaled copy (pr_gpu_engine_product_input said *scaled): the next product reads it as it is, and
 * the next update takes the dangling mass from it.  Call it once that work is enqueued.
 */
void		pr_gpu_engine_product_input_changed(PrEngine *engine, int slot);

/*
 * Tells the engine that work enqueued on its stream by someone else rewrites the slot: it forgets
 * everything it keeps about the slot's contents (the scaled copy the normalized product reads,
 * the dangling sums).  Call it once that work is enqueued, before the engine's next operation.
 */
void		pr_gpu_engine_slot_changed(PrEngine *engine, int slot);

#ifdef __cplusplus
}
#endif

#endif							/* PR_GPU_SLOT_H */
