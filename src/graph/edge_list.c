/*
 * edge_list.c — the growable edge list shared by the table scan and the graph aggregate.
 */
#include "graph/edge_list.h"

#include <math.h>

#include "utils/float.h"
#include "utils/memutils.h"

#define EDGE_LIST_INITIAL_CAPACITY 1024

/* Starts an empty list whose arrays will live in cxt. */
void
edge_list_init(EdgeList *list, MemoryContext cxt, bool weighted)
{
	memset(list, 0, sizeof(EdgeList));
	list->cxt = cxt;
	list->weighted = weighted;
}

/*
 * Starts an empty unweighted list whose rows go into src and dst (capacity rows each, owned by
 * the caller); a list that outgrows them moves into cxt and is no longer external.
 */
void
edge_list_init_external(EdgeList *list, MemoryContext cxt, int64 *src, int64 *dst, Size capacity)
{
	edge_list_init(list, cxt, false);
	list->src = src;
	list->dst = dst;
	list->capacity = capacity;
	list->external = true;
}

/* Grows one array to capacity elements of elem_size bytes (allocating it when absent). */
static void *
grow_array(MemoryContext cxt, void *array, Size capacity, Size elem_size)
{
	Size		bytes = capacity * elem_size;

	if (array == NULL)
		return MemoryContextAllocHuge(cxt, bytes);
	return repalloc_huge(array, bytes);
}

/* Makes room for at least count rows, doubling the capacity as needed. */
void
edge_list_reserve(EdgeList *list, Size count)
{
	Size		capacity = list->capacity;
	Size		limit = MaxAllocHugeSize / sizeof(int64);

	if (count <= capacity)
		return;
	if (count > limit)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("too many edges for powerrank: %zu", count)));
	if (capacity < EDGE_LIST_INITIAL_CAPACITY)
		capacity = EDGE_LIST_INITIAL_CAPACITY;
	while (capacity < count)
		capacity = (capacity > limit / 2) ? limit : capacity * 2;

	if (list->external)
	{
		/* the caller's arrays are full: the rows move into cxt */
		int64	   *src = MemoryContextAllocHuge(list->cxt, capacity * sizeof(int64));
		int64	   *dst = MemoryContextAllocHuge(list->cxt, capacity * sizeof(int64));

		memcpy(src, list->src, list->count * sizeof(int64));
		memcpy(dst, list->dst, list->count * sizeof(int64));
		list->src = src;
		list->dst = dst;
		list->external = false;
	}
	else
	{
		list->src = grow_array(list->cxt, list->src, capacity, sizeof(int64));
		list->dst = grow_array(list->cxt, list->dst, capacity, sizeof(int64));
	}
	if (list->weighted)
		list->weight = grow_array(list->cxt, list->weight, capacity, sizeof(double));
	list->capacity = capacity;
}

/* Appends every row (and the skipped count) of from to to; both must agree on weighting. */
void
edge_list_append_all(EdgeList *to, const EdgeList *from)
{
	Assert(to->weighted == from->weighted);
	to->skipped += from->skipped;
	if (from->count == 0)
		return;
	edge_list_reserve(to, to->count + from->count);
	memcpy(to->src + to->count, from->src, from->count * sizeof(int64));
	memcpy(to->dst + to->count, from->dst, from->count * sizeof(int64));
	if (to->weighted)
		memcpy(to->weight + to->count, from->weight, from->count * sizeof(double));
	to->count += from->count;
}

/*
 * Raises an ERROR naming the edge when weight is negative, NaN or infinite; relation (may be
 * NULL) names the table the row came from.
 */
void
edge_list_check_weight(double weight, int64 src, int64 dst, const char *relation)
{
	if (likely(isfinite(weight) && weight >= 0))
		return;
	if (relation != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid weight %s for edge (" INT64_FORMAT ", " INT64_FORMAT ") in table \"%s\"",
						float8out_internal(weight), src, dst, relation),
				 errhint("Edge weights must be finite and >= 0.")));
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid weight %s for edge (" INT64_FORMAT ", " INT64_FORMAT ")",
					float8out_internal(weight), src, dst),
			 errhint("Edge weights must be finite and >= 0.")));
}
