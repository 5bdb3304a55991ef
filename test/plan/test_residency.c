/*
 * test_residency.c — the residency choice (core/pr_residency.h) and the block layout with
 * double values (cuda/plan/pr_stream.h) against hand-computed sizes, and the streamed engine's
 * allocations against the streamed estimate: pure C, no GPU.
 *
 * The graph of most cases: 1000 nodes, 10000 edges, one column, two slots, fp64.
 *   vectors = slots 2 * 1016 * 8 (16256) + z 1016 * 8 (8128) + staging 8000 + ids and 1 / out 1001 * 12
 *             (12012) + restart 8000 + top-k 1000 * 24 + partials 528 * 8 * 8 (33792) +
 *             statistics and dots (2 + 2 + 8) * 24 (288) = 110476
 *   resident matrix = row pointers 1001 * 8 + row bins 1000 * 4 + columns 10000 * 4 = 52008
 *   streamed lists  = at most 10000 / 1025 = 9 long rows and 2 * 10000 / 1025 = 19 chunks: long
 *                     rows 9 * 4 (36) + first chunks 10 * 8 (80) + chunk starts and ends
 *                     2 * 19 * 8 (304) + chunk sums 20 * 8 (160) = 580
 *   least buffer    = (1001 * 8 + 10000 * 4) / 8 + 1 = 6002, two of them 12004
 * so resident = 162484 and streamed = 123060 bytes.
 *
 * The streamed engine (cuda/engine/pr_gpu_streamed.cu) sizes every device allocation with
 * pr_residency_streamed_bytes for its largest block, the blocks planned (pr_stream_plan) within the
 * buffer pr_residency_stream_buffer leaves of its room; the cases below do the same on generated
 * graphs and their parts (the multi-GPU engine's row ranges) for every room from the streamed
 * estimate up to the resident one, and require the need within the room.
 */
#include "pr_residency.h"
#include "pr_stream.h"
#include "graph_gen.h"
#include "test_harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB ((size_t) 1 << 20)

/* The input of the 1000-node graph with a budget and a free size. */
static PrResidencyInput
small_graph(size_t budget, size_t free_bytes)
{
	PrResidencyInput in;

	memset(&in, 0, sizeof(in));
	in.nodes = 1000;
	in.edges = 10000;
	in.k = 1;
	in.slots = 2;
	in.elem = 8;
	in.budget = budget;
	in.free_bytes = free_bytes;
	return in;
}

/* Checks one choice's outcome and sizes. */
static void
expect(const char *what, PrResidencyInput in, PrResidency want, size_t resident, size_t streamed)
{
	PrResidencyChoice c;
	PrResidency got = pr_residency_choose(&in, &c);

	test_check(got == want && c.residency == got && c.resident_bytes == resident && c.streamed_bytes == streamed,
			   "%s: got %s (resident %zu, streamed %zu, limit %zu), want %s (resident %zu, streamed %zu)",
			   what, pr_residency_name(got), c.resident_bytes, c.streamed_bytes, c.limit,
			   pr_residency_name(want), resident, streamed);
}

/* The lists of the 1000-node graph, field by field (see the top of the file). */
static void
streamed_lists_by_hand(void)
{
	PrResidencyInput in = small_graph(0, 0);
	PrStreamedBytes b;
	size_t		total = pr_residency_streamed_bytes(&in, 6002, &b);

	test_check(b.pull.most_long_rows == 9 && b.pull.most_chunks == 19 && b.pull.long_row == 36 &&
			   b.pull.first_chunk == 80 && b.pull.chunk_start == 152 && b.pull.chunk_end == 152 &&
			   b.pull.partial == 160 && b.push.partial == 0 && b.buffer == 6002 && total == 580 + 12004 &&
			   b.total == total,
			   "streamed allocations: %lld long rows, %lld chunks, lists %zu %zu %zu %zu %zu, total %zu, want 12584",
			   (long long) b.pull.most_long_rows, (long long) b.pull.most_chunks, b.pull.long_row,
			   b.pull.first_chunk, b.pull.chunk_start, b.pull.chunk_end, b.pull.partial, total);
}

/* The sum of one matrix's allocations, field by field. */
static size_t
matrix_allocations(const PrStreamedMatrixBytes *m)
{
	return m->long_row + m->first_chunk + m->chunk_start + m->chunk_end + m->partial;
}

/*
 * For every shape (tiny graphs included, k columns, fp32 / fp64, weighted, push): the streamed
 * estimate is the vectors plus the sum of the planned allocations at the least buffers; that room
 * gives exactly the least buffers (one byte less none); and any larger room's buffers keep the
 * allocations within it.
 */
static void
estimate_is_the_allocations(void)
{
	const int64_t nodes[] = {0, 1, 2, 3, 17, 1000, 4096, 100000, (int64_t) 1 << 24};
	const int64_t degrees[] = {0, 1, 8, 16, 1025, 5000};
	const int	ks[] = {1, 3, 8, 32};
	int			bad = 0,
				cases = 0;

	for (size_t a = 0; a < sizeof(nodes) / sizeof(nodes[0]); a++)
		for (size_t d = 0; d < sizeof(degrees) / sizeof(degrees[0]); d++)
			for (size_t q = 0; q < sizeof(ks) / sizeof(ks[0]); q++)
				for (int flags = 0; flags < 8; flags++)
				{
					PrResidencyInput in;
					PrResidencyChoice c;
					PrStreamedBytes b;
					size_t		least,
								sum,
								room;

					memset(&in, 0, sizeof(in));
					in.nodes = nodes[a];
					in.edges = nodes[a] * degrees[d] + (d == 1 ? 1 : 0);
					in.k = ks[q];
					in.slots = 3;
					in.elem = flags & 1 ? 8 : 4;
					in.weighted = (flags & 2) != 0;
					in.push = (flags & 4) != 0;
					in.free_bytes = (size_t) 1 << 60;
					pr_residency_choose(&in, &c);
					least = pr_residency_min_buffer(in.nodes, in.edges, in.weighted);
					pr_residency_streamed_bytes(&in, least, &b);
					sum = matrix_allocations(&b.pull) + matrix_allocations(&b.push) + 2 * b.buffer;
					room = c.streamed_bytes - c.vector_bytes;
					cases++;
					if (c.vector_bytes != pr_residency_vector_bytes(in.nodes, in.k, in.slots, in.elem) ||
						c.streamed_bytes != c.vector_bytes + sum || b.total != sum || b.buffer != least ||
						(in.push ? b.push.partial == 0 : b.push.partial != 0) ||
						pr_residency_stream_buffer(&in, room) != least ||
						pr_residency_stream_buffer(&in, room - 1) != 0)
					{
						if (bad++ < 5)
							test_check(false, "n %lld m %lld k %d elem %zu weighted %d push %d: estimate %zu = vectors %zu + %zu, allocations %zu (total %zu), buffer %zu of %zu at the room",
									   (long long) in.nodes, (long long) in.edges, in.k, in.elem, in.weighted,
									   in.push, c.streamed_bytes, c.vector_bytes, room, sum, b.total,
									   pr_residency_stream_buffer(&in, room), least);
						continue;
					}
					for (size_t more = 1; more < ((size_t) 1 << 34); more = more * 7 + 3)
					{
						size_t		buffer = pr_residency_stream_buffer(&in, room + more);

						if (buffer < least || buffer > PR_STREAM_BUFFER_MAX ||
							pr_residency_streamed_bytes(&in, buffer, &b) > room + more)
						{
							if (bad++ < 5)
								test_check(false, "n %lld m %lld k %d: room %zu gives buffers of %zu, allocations %zu",
										   (long long) in.nodes, (long long) in.edges, in.k, room + more, buffer,
										   b.total);
							break;
						}
					}
				}
	test_check(bad == 0, "the streamed estimate is the vectors and the planned allocations (%d shapes, %d wrong)",
			   cases, bad);
}

/* An in-CSR of n rows from m edges (src, dst): row v lists the sources of v's in-edges. */
static int64_t *
in_row_pointers(int64_t n, int64_t m, const int64_t *dst)
{
	int64_t    *ptr = calloc((size_t) n + 1, sizeof(int64_t));

	for (int64_t i = 0; ptr != NULL && i < m; i++)
		ptr[dst[i] + 1]++;
	for (int64_t v = 0; ptr != NULL && v < n; v++)
		ptr[v + 1] += ptr[v];
	return ptr;
}

/* The row pointers of the part of rows [begin, end) as the parts engine makes it: every row, the
 * others empty, the first entry at 0. */
static void
part_row_pointers(const int64_t *ptr, int64_t n, int64_t begin, int64_t end, int64_t *part)
{
	for (int64_t v = 0; v <= n; v++)
	{
		int64_t		at = ptr[v] < ptr[begin] ? ptr[begin] : ptr[v] > ptr[end] ? ptr[end] : ptr[v];

		part[v] = at - ptr[begin];
	}
}

/*
 * The streamed engine's prepare on one matrix (row pointers ptr of n rows) in `room` bytes beyond
 * the vectors: the buffers pr_residency_stream_buffer leaves, the blocks planned within them, every
 * allocation sized for the largest block; false (with a message) when the need exceeds the room,
 * a block its buffer, or the long rows the lists.
 */
static bool
engine_fits(const char *what, const int64_t *ptr, PrResidencyInput in, size_t room)
{
	PrStreamParams prm;
	PrStreamPlan plan;
	PrStreamedBytes b;
	PrError		err;
	size_t		buffer = pr_residency_stream_buffer(&in, room);
	int64_t		longs = 0,
				chunks = 0;
	bool		ok;

	for (int64_t r = 0; r < in.nodes; r++)
		if (ptr[r + 1] - ptr[r] > PR_STREAM_CHUNK)
		{
			longs++;
			chunks += (ptr[r + 1] - ptr[r] + PR_STREAM_CHUNK - 1) / PR_STREAM_CHUNK;
		}
	pr_stream_params_init(&prm);
	prm.has_val = in.weighted;
	prm.val_bytes = 8;
	prm.device_budget = 2 * buffer;
	prm.pinned_budget = SIZE_MAX / 4;
	if (buffer == 0 || pr_stream_plan(in.nodes, ptr, &prm, &pr_malloc_allocator, &plan, &err) != PR_OK)
		return test_check(false, "%s: room %zu: buffers of %zu, %s", what, room, buffer,
						  buffer == 0 ? "none" : err.message);
	pr_residency_streamed_bytes(&in, plan.buffer_bytes, &b);
	ok = plan.buffer_bytes <= buffer && b.total <= room && longs <= b.pull.most_long_rows &&
		chunks <= b.pull.most_chunks;
	if (!ok)
		test_check(false, "%s: room %zu: buffers of %zu, blocks of %zu (%lld blocks), allocations %zu, %lld long rows in %lld chunks (planned %lld, %lld)",
				   what, room, buffer, plan.buffer_bytes, (long long) plan.n_blocks, b.total, (long long) longs,
				   (long long) chunks, (long long) b.pull.most_long_rows, (long long) b.pull.most_chunks);
	pr_stream_plan_free(&plan, &pr_malloc_allocator);
	return ok;
}

/*
 * Generated graphs (the device test's R-MAT 12 and uniform 3000 graphs, and graphs of long rows
 * at the chunk's edges) whole and in 2, 3, 4 row ranges (parts): at every room from the streamed
 * estimate to one byte below the resident one, in fp32 and fp64, weighted or not, the engine's
 * allocations fit the room.
 */
static void
engine_fits_every_room(void)
{
	struct
	{
		const char *name;
		GenSpec		spec;
	}			graphs[] = {
		{"rmat12", gen_rmat(12, (int64_t) 16 << 12, 41, true)},
		{"uniform3000", gen_uniform(3000, 24000, 42)},
		{"rmat10-dense", gen_rmat(10, (int64_t) 64 << 10, 7, false)},
	};
	int			fails = 0,
				runs = 0;

	for (size_t gi = 0; gi < sizeof(graphs) / sizeof(graphs[0]); gi++)
	{
		GenSpec    *spec = &graphs[gi].spec;
		int64_t		n = spec->n,
					m = spec->m;
		int64_t    *src = malloc((size_t) m * sizeof(int64_t));
		int64_t    *dst = malloc((size_t) m * sizeof(int64_t));
		int64_t    *ptr = NULL,
				   *part = malloc(((size_t) n + 1) * sizeof(int64_t));

		if (src != NULL && dst != NULL && part != NULL)
		{
			gen_edges(spec, src, dst, 1);
			ptr = in_row_pointers(n, m, dst);
		}
		if (ptr == NULL)
		{
			test_check(false, "%s: out of memory", graphs[gi].name);
			free(src), free(dst), free(part);
			return;
		}
		for (int parts = 1; parts <= 4; parts++)
			for (int p = 0; p < parts; p++)
				for (int flags = 0; flags < 4; flags++)
				{
					int64_t		begin = n * p / parts,
								end = n * (p + 1) / parts;
					PrResidencyInput in;
					PrResidencyChoice c;
					char		what[128];

					part_row_pointers(ptr, n, begin, end, part);
					memset(&in, 0, sizeof(in));
					in.nodes = n;
					in.edges = part[n];
					in.k = 1;
					in.slots = 2;
					in.elem = flags & 1 ? 8 : 4;
					in.weighted = (flags & 2) != 0;
					in.free_bytes = (size_t) 1 << 50;
					pr_residency_choose(&in, &c);
					snprintf(what, sizeof(what), "%s part %d of %d (%lld edges) fp%d%s", graphs[gi].name, p, parts,
							 (long long) in.edges, flags & 1 ? 64 : 32, in.weighted ? " weighted" : "");
					for (int step = 0; step <= 16 && c.resident_bytes > c.streamed_bytes; step++)
					{
						size_t		budget = c.streamed_bytes + (c.resident_bytes - 1 - c.streamed_bytes) * (size_t) step / 16;

						runs++;
						if (!engine_fits(what, part, in, budget - c.vector_bytes) && ++fails >= 5)
							goto done;
					}
				}
done:
		free(src);
		free(dst);
		free(part);
		free(ptr);
		if (fails >= 5)
			break;
	}
	test_check(fails == 0, "the streamed engine's allocations fit every budget from the streamed estimate up (%d rooms, %d over)",
			   runs, fails);
}

int
main(void)
{
	size_t		huge = (size_t) 1 << 40;
	PrResidencyInput in;
	PrStreamLayout l;
	int64_t		ptr[4] = {0, 3, 3, 10};

	/* the sizes */
	test_check(pr_residency_vector_bytes(1000, 1, 2, 8) == 110476, "vector bytes %zu, want 110476",
			   pr_residency_vector_bytes(1000, 1, 2, 8));
	streamed_lists_by_hand();
	test_check(pr_residency_min_buffer(1000, 10000, false) == 6002, "least buffer %zu, want 6002",
			   pr_residency_min_buffer(1000, 10000, false));
	test_check(pr_residency_min_buffer(1000, 10000, true) == 16002, "least buffer weighted %zu, want 16002",
			   pr_residency_min_buffer(1000, 10000, true));
	test_check(pr_residency_min_buffer((int64_t) 1 << 24, (int64_t) 1 << 28, false) == PR_STREAM_BUFFER_MIN,
			   "a large graph's least buffer is PR_STREAM_BUFFER_MIN");
	test_check(pr_residency_stream_matrix_bytes(1000, 10000, true) == 128008, "streamed bytes weighted %zu, want 128008",
			   pr_residency_stream_matrix_bytes(1000, 10000, true));

	/* the budget: at the resident size resident, one byte less streamed, the streamed size still
	 * streamed, one byte less none */
	expect("no budget, free memory", small_graph(0, huge), PR_RESIDENCY_RESIDENT, 162484, 123060);
	expect("budget = resident size", small_graph(162484, huge), PR_RESIDENCY_RESIDENT, 162484, 123060);
	expect("budget 1 byte short of resident", small_graph(162483, huge), PR_RESIDENCY_STREAMED, 162484, 123060);
	expect("budget = streamed size", small_graph(123060, huge), PR_RESIDENCY_STREAMED, 162484, 123060);
	expect("budget 1 byte short of streamed", small_graph(123059, huge), PR_RESIDENCY_NONE, 162484, 123060);

	/* free memory: PR_DEVICE_RESERVE (256 MiB) is kept; the smaller of budget and free counts */
	expect("free = resident + reserve", small_graph(0, 162484 + 256 * MIB), PR_RESIDENCY_RESIDENT, 162484, 123060);
	expect("free 1 byte short", small_graph(0, 162483 + 256 * MIB), PR_RESIDENCY_STREAMED, 162484, 123060);
	expect("free below the reserve", small_graph(0, 100 * MIB), PR_RESIDENCY_NONE, 162484, 123060);
	expect("budget larger than free", small_graph(huge, 130000 + 256 * MIB), PR_RESIDENCY_STREAMED, 162484, 123060);

	/* HITS: the push matrix doubles the matrices (resident 110476 + 2 * 52008, streamed 110476 +
	 * 2 * 580 + 12004) */
	in = small_graph(150000, huge);
	in.push = true;
	expect("push, budget between", in, PR_RESIDENCY_STREAMED, 214492, 123640);

	/* weighted: float values resident (10000 * 4 more), double values streamed (least buffer
	 * 16002): resident 110476 + 92008 = 202484, streamed 110476 + 580 + 32004 = 143060 */
	in = small_graph(202484, huge);
	in.weighted = true;
	expect("weighted, budget = resident", in, PR_RESIDENCY_RESIDENT, 202484, 143060);
	in.budget = 202483;
	expect("weighted, 1 byte short", in, PR_RESIDENCY_STREAMED, 202484, 143060);

	/* names */
	test_check(strcmp(pr_residency_name(PR_RESIDENCY_RESIDENT), "resident") == 0 &&
			   strcmp(pr_residency_name(PR_RESIDENCY_STREAMED), "streamed") == 0 &&
			   strcmp(pr_residency_name(PR_RESIDENCY_NONE), "none") == 0, "residency names");

	/* a block of rows 0..2 (10 entries): row pointers 32 bytes (aligned 256), columns 40 (256),
	 * double values 80 (256); copied: 32 + 10 * 12 = 152 bytes */
	l = pr_stream_block_layout_values(ptr, 0, 3, 8);
	test_check(l.ptr_off == 0 && l.col_off == 256 && l.val_off == 512 && l.bytes == 768 && l.copy_bytes == 152,
			   "double-valued layout: col %zu val %zu bytes %zu copy %zu", l.col_off, l.val_off, l.bytes, l.copy_bytes);
	l = pr_stream_block_layout_values(ptr, 0, 3, 0);
	test_check(l.col_off == 256 && l.val_off == 256 && l.bytes == 512 && l.copy_bytes == 72,
			   "value-less layout: val %zu bytes %zu copy %zu", l.val_off, l.bytes, l.copy_bytes);
	l = pr_stream_block_layout(ptr, 1, 3, true);
	test_check(l.col_off == 256 && l.val_off == 512 && l.bytes == 768 && l.copy_bytes == 24 + 7 * 8,
			   "float-valued layout of rows 1..2: bytes %zu copy %zu", l.bytes, l.copy_bytes);

	/* the streamed engine's allocations: the estimate, and within every room */
	estimate_is_the_allocations();
	engine_fits_every_room();
	return test_summary();
}
