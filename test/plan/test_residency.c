/*
 * test_residency.c — the residency choice (core/pr_residency.h) and the block layout with
 * double values (cuda/plan/pr_stream.h) against hand-computed sizes: pure C, no GPU.
 *
 * The graph of most cases: 1000 nodes, 10000 edges, one column, two slots, fp64.
 *   vectors = slots 2 * 1001 * 8 (16016) + z 8008 + staging 8000 + ids and 1 / out 1001 * 12
 *             (12012) + restart 8000 + top-k 1000 * 24 + partials 528 * 8 * 8 (33792) +
 *             statistics and dots (2 + 2 + 8) * 24 (288) = 110116
 *   resident matrix = row pointers 1001 * 8 + row bins 1000 * 4 + columns 10000 * 4 = 52008
 *   streamed extra  = (chunks 10000 / 1024 + 1 = 10, long rows 10) * (8 + 24) = 640
 *   least buffer    = (1001 * 8 + 10000 * 4) / 8 + 1 = 6002, two of them 12004
 * so resident = 162124 and streamed = 122760 bytes.
 */
#include "pr_residency.h"
#include "pr_stream.h"
#include "test_harness.h"

#include <stdio.h>
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

int
main(void)
{
	size_t		huge = (size_t) 1 << 40;
	PrResidencyInput in;
	PrStreamLayout l;
	int64_t		ptr[4] = {0, 3, 3, 10};

	/* the sizes */
	test_check(pr_residency_vector_bytes(1000, 1, 2, 8) == 110116, "vector bytes %zu, want 110116",
			   pr_residency_vector_bytes(1000, 1, 2, 8));
	test_check(pr_residency_stream_extra_bytes(1000, 10000, 1, 8) == 640, "stream extra %zu, want 640",
			   pr_residency_stream_extra_bytes(1000, 10000, 1, 8));
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
	expect("no budget, free memory", small_graph(0, huge), PR_RESIDENCY_RESIDENT, 162124, 122760);
	expect("budget = resident size", small_graph(162124, huge), PR_RESIDENCY_RESIDENT, 162124, 122760);
	expect("budget 1 byte short of resident", small_graph(162123, huge), PR_RESIDENCY_STREAMED, 162124, 122760);
	expect("budget = streamed size", small_graph(122760, huge), PR_RESIDENCY_STREAMED, 162124, 122760);
	expect("budget 1 byte short of streamed", small_graph(122759, huge), PR_RESIDENCY_NONE, 162124, 122760);

	/* free memory: PR_DEVICE_RESERVE (256 MiB) is kept; the smaller of budget and free counts */
	expect("free = resident + reserve", small_graph(0, 162124 + 256 * MIB), PR_RESIDENCY_RESIDENT, 162124, 122760);
	expect("free 1 byte short", small_graph(0, 162123 + 256 * MIB), PR_RESIDENCY_STREAMED, 162124, 122760);
	expect("free below the reserve", small_graph(0, 100 * MIB), PR_RESIDENCY_NONE, 162124, 122760);
	expect("budget larger than free", small_graph(huge, 130000 + 256 * MIB), PR_RESIDENCY_STREAMED, 162124, 122760);

	/* HITS: the push matrix doubles the matrices (resident 110116 + 2 * 52008, streamed 110116 +
	 * 2 * 640 + 12004) */
	in = small_graph(150000, huge);
	in.push = true;
	expect("push, budget between", in, PR_RESIDENCY_STREAMED, 214132, 123400);

	/* weighted: float values resident (10000 * 4 more), double values streamed (least buffer
	 * 16002): resident 110116 + 92008 = 202124, streamed 110116 + 640 + 32004 = 142760 */
	in = small_graph(202124, huge);
	in.weighted = true;
	expect("weighted, budget = resident", in, PR_RESIDENCY_RESIDENT, 202124, 142760);
	in.budget = 202123;
	expect("weighted, 1 byte short", in, PR_RESIDENCY_STREAMED, 202124, 142760);

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
	return test_summary();
}
