/*
 * rankgraph.c — the rankgraph type: its input/output functions and the conversion between a
 * PrGraph and a varlena value.
 */
#include "rankgraph.h"

#include "utils/memutils.h"

PG_FUNCTION_INFO_V1(rankgraph_in);
PG_FUNCTION_INFO_V1(rankgraph_out);

/* Serialises graph into a new rankgraph value (palloc'd in the current context). */
Datum
rankgraph_make(const PrGraph *graph, int64 skipped_rows)
{
	size_t		flat_size = pr_graph_flat_size(graph);
	size_t		total;
	RankGraphData *value;

	if (flat_size > MaxAllocSize - sizeof(RankGraphData))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("graph too large for a rankgraph value: %zu bytes", flat_size),
				 errdetail("A rankgraph value is limited to 1 GB."),
				 errhint("Rank the table directly: pagerank('table_name', ...) has no size limit.")));
	total = sizeof(RankGraphData) + flat_size;
	value = palloc0(total);
	SET_VARSIZE(value, total);
	value->magic = RANKGRAPH_MAGIC;
	value->skipped_rows = skipped_rows;
	pr_graph_write_flat(graph, (char *) value + sizeof(RankGraphData));
	return PointerGetDatum(value);
}

/*
 * Points view into a rankgraph value (detoasted, and copied when not 8-byte aligned, in the current
 * context); a corrupt value is an ERROR.
 */
void
rankgraph_view(Datum value, PrGraph *view, int64 *skipped_rows)
{
	struct varlena *raw = pg_detoast_datum((struct varlena *) DatumGetPointer(value));
	RankGraphData *data;
	PrError		err = {0};
	Size		size = VARSIZE(raw);

	if (((uintptr_t) raw) % 8 != 0)
	{
		struct varlena *copy = palloc(size);

		memcpy(copy, raw, size);
		raw = copy;
	}
	data = (RankGraphData *) raw;
	if (size < sizeof(RankGraphData) || data->magic != RANKGRAPH_MAGIC ||
		pr_graph_view_flat((char *) data + sizeof(RankGraphData),
						   size - sizeof(RankGraphData), view, &err) != PR_OK)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("invalid rankgraph value"),
				 errdetail("%s", err.message[0] != '\0' ? err.message : "bad header")));
	if (skipped_rows != NULL)
		*skipped_rows = data->skipped_rows;
}

/* Input function: a rankgraph cannot be written as text. */
Datum
rankgraph_in(PG_FUNCTION_ARGS)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("rankgraph values cannot be written as text"),
			 errhint("Build one with the powerrank_graph(src, dst [, weight]) aggregate.")));
	PG_RETURN_NULL();
}

/* Output function: a one-line summary such as rankgraph(nodes=3, edges=4, weighted=f). */
Datum
rankgraph_out(PG_FUNCTION_ARGS)
{
	PrGraph		view;

	rankgraph_view(PG_GETARG_DATUM(0), &view, NULL);
	PG_RETURN_CSTRING(psprintf("rankgraph(nodes=" INT64_FORMAT ", edges=" INT64_FORMAT ", weighted=%s)",
							   (int64) view.n_nodes, (int64) view.n_edges,
							   view.weighted ? "t" : "f"));
}
