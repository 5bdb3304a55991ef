/*
 * pr_graph_flat.h — the layout of the flat graph form (see pr_graph_write_flat), for readers that
 * need to look at the header itself (tests, tools).  Version 1.
 *
 * A flat graph is a PrFlatHeader followed by each present array at an 8-byte-aligned offset from
 * the start of the buffer; offset 0 means absent.  Multi-byte fields are in host byte order.
 */
#ifndef PR_GRAPH_FLAT_H
#define PR_GRAPH_FLAT_H

#include "pr_graph.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PR_FLAT_MAGIC   UINT32_C(0x46475250)	/* "PRGF" read as a little-endian uint32 */
#define PR_FLAT_VERSION 1u

/* Header flags. */
#define PR_FLAT_WEIGHTED  (1u << 0)
#define PR_FLAT_OUT_EDGES (1u << 1)

/* The arrays of the flat form, in storage order (index into PrFlatHeader.offset). */
typedef enum PrFlatArray
{
	PR_FLAT_NODE_IDS = 0,
	PR_FLAT_IN_PTR,
	PR_FLAT_IN_SRC,
	PR_FLAT_IN_WEIGHT,
	PR_FLAT_OUT_PTR,
	PR_FLAT_OUT_DST,
	PR_FLAT_OUT_WEIGHT,
	PR_FLAT_OUT_STRENGTH,
	PR_FLAT_DANGLING,
	PR_FLAT_N_ARRAYS
} PrFlatArray;

/* Header at the start of a flat graph. */
typedef struct PrFlatHeader
{
	uint32_t	magic;
	uint32_t	version;
	uint64_t	total_size;		/* bytes, header included */
	int64_t		n_nodes;
	int64_t		n_edges;
	int64_t		n_dangling;
	uint32_t	flags;			/* PR_FLAT_WEIGHTED | PR_FLAT_OUT_EDGES */
	uint32_t	reserved;		/* 0 */
	uint64_t	offset[PR_FLAT_N_ARRAYS];	/* from the buffer start; 0 = absent */
} PrFlatHeader;

#ifdef __cplusplus
}
#endif

#endif							/* PR_GRAPH_FLAT_H */
