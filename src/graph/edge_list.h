/*
 * edge_list.h — a growable edge list (src, dst[, weight]) in huge memory-context chunks, filled by
 * the table scan and the powerrank_graph aggregate and handed to pr_graph_build.
 */
#ifndef EDGE_LIST_H
#define EDGE_LIST_H

#include "postgres.h"

/* Rows read so far; arrays live in cxt and may exceed 1 GB. */
typedef struct EdgeList
{
	MemoryContext cxt;
	bool		weighted;		/* weight[] present */
	int64	   *src;
	int64	   *dst;
	double	   *weight;
	Size		count;
	Size		capacity;
	int64		skipped;		/* rows skipped for a NULL src, dst or weight */
	bool		external;		/* src and dst belong to someone else (a shared segment): fixed
								 * capacity; growing past it moves the rows into cxt */
} EdgeList;

void		edge_list_init(EdgeList *list, MemoryContext cxt, bool weighted);
void		edge_list_init_external(EdgeList *list, MemoryContext cxt, int64 *src, int64 *dst,
									Size capacity);
void		edge_list_reserve(EdgeList *list, Size count);
void		edge_list_append_all(EdgeList *to, const EdgeList *from);
void		edge_list_check_weight(double weight, int64 src, int64 dst, const char *relation);

/* Appends one row (the weight is ignored by an unweighted list). */
static inline void
edge_list_append(EdgeList *list, int64 src, int64 dst, double weight)
{
	if (unlikely(list->count == list->capacity))
		edge_list_reserve(list, list->count + 1);
	list->src[list->count] = src;
	list->dst[list->count] = dst;
	if (list->weighted)
		list->weight[list->count] = weight;
	list->count++;
}

#endif							/* EDGE_LIST_H */
