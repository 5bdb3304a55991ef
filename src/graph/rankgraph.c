/*
 * rankgraph.c — the rankgraph type: its text and binary input/output functions (both validate
 * every invariant of the graph) and the conversion between a PrGraph and a varlena value.
 */
#include "graph/rankgraph.h"

#include <ctype.h>

#include "common/base64.h"
#include "libpq/pqformat.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

PG_FUNCTION_INFO_V1(rankgraph_in);
PG_FUNCTION_INFO_V1(rankgraph_out);
PG_FUNCTION_INFO_V1(rankgraph_recv);
PG_FUNCTION_INFO_V1(rankgraph_send);
PG_FUNCTION_INFO_V1(rankgraph_summary);

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
 * Checks a whole rankgraph value of size bytes at data (8-byte aligned): its header, that the flat
 * graph fills the rest exactly, and every invariant of the flat graph (pr_graph_view_flat); points
 * view into it.  A value that fails is an ERROR with sqlerrcode.
 */
static void
rankgraph_check(const RankGraphData *data, Size size, int sqlerrcode, PrGraph *view)
{
	PrError		err = {0};
	const char *problem = NULL;

	if (size < sizeof(RankGraphData))
		problem = "value shorter than its header";
	else if (data->magic != RANKGRAPH_MAGIC)
		problem = "bad magic number (not a rankgraph, or written on a host of the other byte order)";
	else if (data->skipped_rows < 0)
		problem = "negative skipped-row count";
	else if (pr_graph_view_flat((const char *) data + sizeof(RankGraphData),
								size - sizeof(RankGraphData), view, &err) != PR_OK)
		problem = err.message[0] != '\0' ? err.message : "bad graph";
	else if (pr_graph_flat_size(view) != size - sizeof(RankGraphData))
		problem = "bytes after the graph";
	if (problem != NULL)
		ereport(ERROR,
				(errcode(sqlerrcode),
				 errmsg("invalid rankgraph value"),
				 errdetail("%s", problem),
				 errhint("Build rankgraph values with the powerrank_graph(src, dst [, weight]) aggregate.")));
}

/*
 * Points view into a rankgraph value (detoasted, and copied when not 8-byte aligned, in the current
 * context); a corrupt value is an ERROR.
 */
void
rankgraph_view(Datum value, PrGraph *view, int64 *skipped_rows)
{
	struct varlena *raw = pg_detoast_datum((struct varlena *) DatumGetPointer(value));
	Size		size = VARSIZE(raw);

	if (((uintptr_t) raw) % 8 != 0)
	{
		struct varlena *copy = palloc(size);

		memcpy(copy, raw, size);
		raw = copy;
	}
	rankgraph_check((RankGraphData *) raw, size, ERRCODE_DATA_CORRUPTED, view);
	if (skipped_rows != NULL)
		*skipped_rows = ((RankGraphData *) raw)->skipped_rows;
}

/*
 * Makes a rankgraph value from the bytes rankgraph_send gives (the value after its varlena
 * header), validated completely; invalid bytes are an ERROR with sqlerrcode.
 */
static Datum
rankgraph_from_bytes(const char *bytes, Size nbytes, int sqlerrcode)
{
	RankGraphData *value;
	PrGraph		view;

	if (nbytes > MaxAllocSize - VARHDRSZ)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("rankgraph value of %zu bytes is too large", nbytes),
				 errhint("A rankgraph value is limited to 1 GB.")));
	value = palloc(VARHDRSZ + nbytes);	/* palloc is MAXALIGNed: the flat graph lands aligned */
	SET_VARSIZE(value, VARHDRSZ + nbytes);
	memcpy(VARDATA(value), bytes, nbytes);
	rankgraph_check(value, VARHDRSZ + nbytes, sqlerrcode, &view);
	return PointerGetDatum(value);
}

/* Prefix of the text form: format version 1, base64 of rankgraph_send's bytes. */
#define RANKGRAPH_TEXT_PREFIX "PRG1:"

/* Input function: reads the text form rankgraph_out writes and validates it completely. */
Datum
rankgraph_in(PG_FUNCTION_ARGS)
{
	const char *input = PG_GETARG_CSTRING(0);
	size_t		prefix = strlen(RANKGRAPH_TEXT_PREFIX);
	size_t		len = 0;
	char	   *text = palloc(strlen(input) + 1);
	char	   *bytes;
	int			nbytes;

	/* white space is ignored (base64 text is often wrapped) */
	for (const char *c = input; *c != '\0'; c++)
		if (!isspace((unsigned char) *c))
			text[len++] = *c;
	text[len] = '\0';

	if (len < prefix || strncmp(text, RANKGRAPH_TEXT_PREFIX, prefix) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid input syntax for type rankgraph"),
				 errdetail("The text form of a rankgraph starts with \"%s\".", RANKGRAPH_TEXT_PREFIX),
				 errhint("Build rankgraph values with the powerrank_graph(src, dst [, weight]) aggregate, or use the text that rankgraph output gives.")));
	if (len - prefix > (size_t) PG_INT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("rankgraph text of %zu bytes is too long", len),
				 errhint("A rankgraph value is limited to 1 GB.")));
	bytes = palloc(pg_b64_dec_len((int) (len - prefix)) + 1);
	nbytes = pg_b64_decode(text + prefix, (int) (len - prefix), bytes,
						   pg_b64_dec_len((int) (len - prefix)) + 1);
	if (nbytes < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid input syntax for type rankgraph"),
				 errdetail("The text after \"%s\" is not valid base64.", RANKGRAPH_TEXT_PREFIX),
				 errhint("Use the text that rankgraph output gives, unchanged.")));
	PG_RETURN_DATUM(rankgraph_from_bytes(bytes, nbytes, ERRCODE_INVALID_TEXT_REPRESENTATION));
}

/*
 * Output function: "PRG1:" and the base64 of rankgraph_send's bytes (the value after its varlena
 * header), which rankgraph_in reads back — so pg_dump, text COPY and casts to text keep the graph.
 */
Datum
rankgraph_out(PG_FUNCTION_ARGS)
{
	struct varlena *raw = PG_DETOAST_DATUM(PG_GETARG_DATUM(0));
	Size		nbytes = VARSIZE(raw) - VARHDRSZ;
	size_t		prefix = strlen(RANKGRAPH_TEXT_PREFIX);
	char	   *text;
	int			written;

	if (nbytes > (Size) (MaxAllocSize - prefix - 8) / 4 * 3)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("rankgraph value of %zu bytes is too large for its text form", nbytes),
				 errhint("Use binary COPY (rankgraph_send / rankgraph_recv), or keep the edges and rebuild the graph with powerrank_graph.")));
	text = palloc(prefix + pg_b64_enc_len((int) nbytes) + 1);
	memcpy(text, RANKGRAPH_TEXT_PREFIX, prefix);
	written = pg_b64_encode(VARDATA(raw), (int) nbytes, text + prefix, pg_b64_enc_len((int) nbytes));
	if (written < 0)
		elog(ERROR, "base64 encoding of a rankgraph value failed");
	text[prefix + written] = '\0';
	PG_RETURN_CSTRING(text);
}

/* rankgraph_summary(rankgraph): a one-line summary such as rankgraph(nodes=3, edges=4, weighted=f). */
Datum
rankgraph_summary(PG_FUNCTION_ARGS)
{
	PrGraph		view;

	rankgraph_view(PG_GETARG_DATUM(0), &view, NULL);
	PG_RETURN_TEXT_P(cstring_to_text(psprintf("rankgraph(nodes=" INT64_FORMAT ", edges=" INT64_FORMAT ", weighted=%s)",
											  (int64) view.n_nodes, (int64) view.n_edges,
											  view.weighted ? "t" : "f")));
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
 * (rankgraph_check: every offset, size, index, weight and derived sum), so corrupt input is an
 * ERROR.
 */
Datum
rankgraph_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	int			nbytes = buf->len - buf->cursor;
	Datum		value;

	value = rankgraph_from_bytes(buf->data + buf->cursor, nbytes,
								 ERRCODE_INVALID_BINARY_REPRESENTATION);
	buf->cursor += nbytes;
	PG_RETURN_DATUM(value);
}
