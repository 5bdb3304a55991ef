/*
 * rankgraph.c — the rankgraph type: its input/output functions and the conversion between a
 * PrGraph and a varlena value.
 */
#include "rankgraph.h"

#include "libpq/pqformat.h"
#include "utils/memutils.h"

PG_FUNCTION_INFO_V1(rankgraph_in);
PG_FUNCTION_INFO_V1(rankgraph_out);
PG_FUNCTION_INFO_V1(rankgraph_recv);
PG_FUNCTION_INFO_V1(rankgraph_send);

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
				 errdetail("%s", err.message[0] != '\0' ? err.message : "bad header"),
				 errhint("Build rankgraph values with the powerrank_graph(src, dst [, weight]) aggregate.")));
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

/*
 * Binary send: the value's bytes after the varlena header (magic, skipped rows, flat graph), in the
 * host's byte order — binary COPY between hosts of the same byte order (x86-64, ARM64).
 */
Datum
rankgraph_send(PG_FUNCTION_ARGS)
{
	struct varlena *raw = PG_DETOAST_DATUM(PG_GETARG_DATUM(0));
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendbytes(&buf, VARDATA(raw), VARSIZE(raw) - VARHDRSZ);
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

/*
 * Binary receive: rebuilds the value from rankgraph_send's bytes and validates it completely
 * (pr_graph_view_flat checks every offset, size and index), so corrupt input is an ERROR.
 */
Datum
rankgraph_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	int			nbytes = buf->len - buf->cursor;
	RankGraphData *value;
	PrGraph		view;

	if (nbytes < (int) (sizeof(RankGraphData) - VARHDRSZ))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid rankgraph value: %d bytes is too short", nbytes),
				 errhint("Build rankgraph values with the powerrank_graph(src, dst [, weight]) aggregate.")));
	value = palloc(VARHDRSZ + nbytes);
	SET_VARSIZE(value, VARHDRSZ + nbytes);
	pq_copymsgbytes(buf, VARDATA(value), nbytes);
	rankgraph_view(PointerGetDatum(value), &view, NULL);
	PG_RETURN_POINTER(value);
}
