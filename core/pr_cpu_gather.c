/*
 * pr_cpu_gather.c — the CPU engine's products: the row sums of a gather over a CSR (one column,
 * or a column group's columns at once; scalar code, vector types, and an AVX-512 compilation
 * taken when the CPU has it) and the product tasks that run them over row blocks.
 */
#include "pr_cpu_engine.h"

#include <string.h>

/* Plain sum of w * x[col] over entries [b, end) of a row (w NULL: weight 1), two accumulators. */
static inline double
row_block_sum(const int32_t *col, const double *w, const double *x, int64_t b, int64_t end)
{
	double		s0 = 0.0,
				s1 = 0.0;

	if (w == NULL)
	{
		for (; b + 1 < end; b += 2)
		{
			s0 += x[col[b]];
			s1 += x[col[b + 1]];
		}
		if (b < end)
			s0 += x[col[b]];
	}
	else
	{
		for (; b + 1 < end; b += 2)
		{
			s0 += w[b] * x[col[b]];
			s1 += w[b + 1] * x[col[b + 1]];
		}
		if (b < end)
			s0 += w[b] * x[col[b]];
	}
	return s0 + s1;
}

#if defined(__GNUC__) || defined(__clang__)
#define PR_CPU_VECTORS 1
/* W adjacent doubles as one value, so a group's sums are vector additions (lane by lane). */
typedef double PrDouble2 __attribute__((vector_size(2 * sizeof(double))));
typedef double PrDouble4 __attribute__((vector_size(4 * sizeof(double))));
typedef double PrDouble8 __attribute__((vector_size(8 * sizeof(double))));

/*
 * Defines gather_row_vector_W: gather_row_W (below) with the W columns as one vector V, each
 * addition W lane-wise additions — the same roundings as W scalar ones, so the same bits.  Used
 * where V is a register: 2 columns always, 4 and 8 in the AVX-512 compilation (compiled for SSE2
 * alone, 4 and 8 lanes were slower than the scalar sums).
 */
#define DEFINE_GATHER_ROW_VECTOR(W, V) \
PR_ALWAYS_INLINE static inline void \
gather_row_vector_##W(const int32_t *col, const double *w, const double *x, int64_t stride, int64_t b, \
			   int64_t end, double *out) \
{ \
	double		sum[W], carry[W]; \
	const bool	one_block = end - b <= PR_CPU_SUM_BLOCK; \
\
	for (int j = 0; j < W; j++) \
		sum[j] = carry[j] = 0.0; \
	while (b < end) \
	{ \
		int64_t		block_end = end - b > PR_CPU_SUM_BLOCK ? b + PR_CPU_SUM_BLOCK : end; \
		V			s0 = {0}, \
					s1 = {0}, \
					x0, \
					x1, \
					block; \
\
		if (w == NULL) \
			for (; b + 1 < block_end; b += 2) \
			{ \
				memcpy(&x0, x + col[b] * stride, sizeof(V)); \
				memcpy(&x1, x + col[b + 1] * stride, sizeof(V)); \
				s0 += x0; \
				s1 += x1; \
			} \
		else \
			for (; b + 1 < block_end; b += 2) \
			{ \
				memcpy(&x0, x + col[b] * stride, sizeof(V)); \
				memcpy(&x1, x + col[b + 1] * stride, sizeof(V)); \
				s0 += w[b] * x0; \
				s1 += w[b + 1] * x1; \
			} \
		if (b < block_end) \
		{ \
			memcpy(&x0, x + col[b] * stride, sizeof(V)); \
			s0 += (w != NULL ? w[b] : 1.0) * x0; \
			b++; \
		} \
		block = s0 + s1; \
		if (one_block) \
		{ \
			memcpy(out, &block, sizeof(V)); \
			return; \
		} \
		for (int j = 0; j < W; j++) \
			compensated_add(&sum[j], &carry[j], block[j]); \
	} \
	for (int j = 0; j < W; j++) \
		out[j] = sum[j] + carry[j]; \
}

DEFINE_GATHER_ROW_VECTOR(2, PrDouble2)
DEFINE_GATHER_ROW_VECTOR(4, PrDouble4)
DEFINE_GATHER_ROW_VECTOR(8, PrDouble8)
#endif

/*
 * Defines gather_row_W: out[j] = sum over entries [b, end) of a row of w * x[col][j] for the W
 * adjacent columns j < W of x, node u's at x + u * stride (w NULL: weight 1), summed per column
 * exactly as the one-column path sums a row: plain blocks of PR_CPU_SUM_BLOCK edges (even and odd
 * edges in two accumulators, as row_block_sum), the block sums compensated when the row has more
 * than one block.  W is a constant, so the accumulators live in registers.
 */
#define DEFINE_GATHER_ROW(W) \
PR_ALWAYS_INLINE static inline void \
gather_row_##W(const int32_t *col, const double *w, const double *x, int64_t stride, int64_t b, \
			   int64_t end, double *out) \
{ \
	double		sum[W], carry[W], s0[W], s1[W]; \
	const bool	one_block = end - b <= PR_CPU_SUM_BLOCK; \
\
	PR_UNROLL for (int j = 0; j < W; j++) \
		sum[j] = carry[j] = 0.0; \
	while (b < end) \
	{ \
		int64_t		block_end = end - b > PR_CPU_SUM_BLOCK ? b + PR_CPU_SUM_BLOCK : end; \
\
		PR_UNROLL for (int j = 0; j < W; j++) \
			s0[j] = s1[j] = 0.0; \
		if (w == NULL) \
			for (; b + 1 < block_end; b += 2) \
			{ \
				const double *x0 = x + col[b] * stride; \
				const double *x1 = x + col[b + 1] * stride; \
\
				PR_UNROLL for (int j = 0; j < W; j++) \
				{ \
					s0[j] += x0[j]; \
					s1[j] += x1[j]; \
				} \
			} \
		else \
			for (; b + 1 < block_end; b += 2) \
			{ \
				const double *x0 = x + col[b] * stride; \
				const double *x1 = x + col[b + 1] * stride; \
				double		w0 = w[b], \
							w1 = w[b + 1]; \
\
				PR_UNROLL for (int j = 0; j < W; j++) \
				{ \
					s0[j] += w0 * x0[j]; \
					s1[j] += w1 * x1[j]; \
				} \
			} \
		if (b < block_end) \
		{ \
			const double *x0 = x + col[b] * stride; \
			double		w0 = w != NULL ? w[b] : 1.0; \
\
			PR_UNROLL for (int j = 0; j < W; j++) \
				s0[j] += w0 * x0[j]; \
			b++; \
		} \
		if (one_block) \
		{ \
			PR_UNROLL for (int j = 0; j < W; j++) \
				out[j] = s0[j] + s1[j]; \
			return; \
		} \
		PR_UNROLL for (int j = 0; j < W; j++) \
			compensated_add(&sum[j], &carry[j], s0[j] + s1[j]); \
	} \
	PR_UNROLL for (int j = 0; j < W; j++) \
		out[j] = sum[j] + carry[j]; \
}

DEFINE_GATHER_ROW(1)
DEFINE_GATHER_ROW(2)
DEFINE_GATHER_ROW(4)
DEFINE_GATHER_ROW(8)

/*
 * y[node of row p][j] = sum over row p of w * x[col][j] for rows [p0, p1), one column (k = 1:
 * stride and width 1) or the width columns of one column group (x: the group's values, node u's
 * at x + u * stride; y: rows of k values, the group's first column at y_first).  The node of row
 * p is row_order[p] in a row-permuted CSR, p itself when row_order is NULL.  A row is summed
 * plainly in blocks of PR_CPU_SUM_BLOCK edges, the block sums compensated (a row of one block is
 * its plain sum).  The per-row summation order is fixed, so results do not depend on threads.
 */
PR_ALWAYS_INLINE static inline void
csr_gather_rows(const int64_t *ptr, const int32_t *col, const double *w, const double *x,
				int64_t stride, int width, double *y, int k, int y_first,
				const int32_t *row_order, int64_t p0, int64_t p1, bool wide)
{
	(void) wide;				/* used only where vector types exist */
	for (int64_t p = p0; p < p1; p++)
	{
		int64_t		b = ptr[p],
					end = ptr[p + 1];
		double	   *yv = y + (row_order != NULL ? (int64_t) row_order[p] : p) * k + y_first;

		switch (width)
		{
			/*
			 * a group's own layout (stride = width) with the stride as a constant; vector sums
			 * where a group is a register (GATHER_GROUP: vector or scalar by wide)
			 */
#ifdef PR_CPU_VECTORS
#define GATHER_GROUP(W, S) \
			(wide ? gather_row_vector_##W(col, w, x, S, b, end, yv) : gather_row_##W(col, w, x, S, b, end, yv))
#define GATHER_PAIR(S) gather_row_vector_2(col, w, x, S, b, end, yv)
#else
#define GATHER_GROUP(W, S) gather_row_##W(col, w, x, S, b, end, yv)
#define GATHER_PAIR(S) gather_row_2(col, w, x, S, b, end, yv)
#endif
			case 8:
				if (stride == 8)
					GATHER_GROUP(8, 8);
				else
					GATHER_GROUP(8, stride);
				continue;
			case 4:
				if (stride == 4)
					GATHER_GROUP(4, 4);
				else
					GATHER_GROUP(4, stride);
				continue;
			case 2:
				if (stride == 2)
					GATHER_PAIR(2);
				else
					GATHER_PAIR(stride);
				continue;
#undef GATHER_GROUP
#undef GATHER_PAIR
			default:
				break;
		}
		if (stride != 1)
		{
			gather_row_1(col, w, x, stride, b, end, yv);
			continue;
		}
		{
			double		s = 0.0,
						carry = 0.0;

			if (end - b <= PR_CPU_SUM_BLOCK)
			{
				yv[0] = row_block_sum(col, w, x, b, end);
				continue;
			}
			for (; b < end; b += PR_CPU_SUM_BLOCK)
				compensated_add(&s, &carry,
								row_block_sum(col, w, x, b,
											  end - b > PR_CPU_SUM_BLOCK ? b + PR_CPU_SUM_BLOCK : end));
			yv[0] = s + carry;
		}
	}
}

/* csr_gather_rows, compiled for the baseline instruction set. */
static void
csr_gather(const int64_t *ptr, const int32_t *col, const double *w, const double *x,
		   int64_t stride, int width, double *y, int k, int y_first, const int32_t *row_order,
		   int64_t p0, int64_t p1)
{
	csr_gather_rows(ptr, col, w, x, stride, width, y, k, y_first, row_order, p0, p1, false);
}

#ifdef PR_CPU_WIDE
/*
 * csr_gather_rows compiled for AVX-512 (a group of 8 columns of a node is one register), used
 * where the CPU has it (CpuEngine.wide) for unweighted rows: their sums only add, lane by lane in
 * the same order, so the results are the same bits (a weighted row's product could be fused into
 * one rounding).
 */
__attribute__((target("avx512f")))
static void
csr_gather_wide(const int64_t *ptr, const int32_t *col, const double *w, const double *x,
				int64_t stride, int width, double *y, int k, int y_first,
				const int32_t *row_order, int64_t p0, int64_t p1)
{
	csr_gather_rows(ptr, col, w, x, stride, width, y, k, y_first, row_order, p0, p1, true);
}
#endif

/*
 * y = the gather of x over a CSR's rows (ptr, col, w; order as for csr_gather), the blocks of rows
 * (part[b] .. part[b + 1]) this thread claims, one column group after the other (the block's rows
 * of y stay in cache meanwhile).  grouped: x is laid out by column group (z); otherwise x has
 * rows of k values.
 */
static inline void
gather_blocks(CpuEngine *e, const int64_t *ptr, const int32_t *col, const double *w,
			  const int32_t *order, const int64_t *part, const double *x, bool grouped,
			  double *y)
{
	for (int64_t b; (b = claim(e)) < e->n_blocks;)
		for (int g = 0; g < e->n_groups; g++)
		{
			int			first = e->group_first[g];
			int			width = e->group_first[g + 1] - first;
			const double *xg = grouped ? x + e->n * first : x + first;

#ifdef PR_CPU_WIDE
			if (e->wide && w == NULL && width >= 4)
			{
				csr_gather_wide(ptr, col, w, xg, grouped ? width : e->k, width, y, e->k, first,
								order, part[b], part[b + 1]);
				continue;
			}
#endif
			csr_gather(ptr, col, w, xg, grouped ? width : e->k, width, y, e->k, first, order,
					   part[b], part[b + 1]);
		}
}

/* y = gather of z (the scaled x) over in-edges, this thread's rows. */
void
pr_cpu_task_pull_normalized(CpuEngine *e, int tid, const void *varg)
{
	const ProductArgs *a = (const ProductArgs *) varg;
	const PrGraph *g = e->g;

	(void) tid;
	if (e->row_order != NULL && e->k <= PR_CPU_SORTED_MAX_COLUMNS)
		gather_blocks(e, e->sorted_ptr, e->sorted_src, e->sorted_weight, e->row_order,
					  e->sorted_part, e->z, true, a->y);
	else
		gather_blocks(e, g->in_ptr, g->in_src, g->in_weight, NULL, e->in_part, e->z, true, a->y);
}

/* y = Aᵀ x over in-edges, this thread's rows. */
void
pr_cpu_task_pull(CpuEngine *e, int tid, const void *varg)
{
	const ProductArgs *a = (const ProductArgs *) varg;
	const PrGraph *g = e->g;

	(void) tid;
	gather_blocks(e, g->in_ptr, g->in_src, g->in_weight, NULL, e->in_part, a->x, false, a->y);
}

/* y = A x over out-edges, this thread's rows. */
void
pr_cpu_task_push(CpuEngine *e, int tid, const void *varg)
{
	const ProductArgs *a = (const ProductArgs *) varg;
	const PrGraph *g = e->g;

	(void) tid;
	gather_blocks(e, g->out_ptr, g->out_dst, g->out_weight, NULL, e->out_part, a->x, false, a->y);
}

/*
 * Adds the delta's terms of product to y (x its input): for PULL_NORMALIZED and PULL y[dst] +=
 * count * weight * in[src] (in = x scaled by X's 1 / out_strength, as z holds it, or x), for PUSH
 * y[src] += count * weight * x[dst]; every term in the delta's order, so the same bits every run.
 */
void
pr_cpu_add_delta(CpuEngine *e, PrProduct product, const double *x, double *y)
{
	const int	k = e->k;
	bool		push = product == PR_PRODUCT_PUSH;
	const PrEdgeChange *edges = push ? e->delta_push : e->delta_pull;

	for (int64_t i = 0; i < e->n_delta_edges; i++)
	{
		const PrEdgeChange *c = &edges[i];
		int64_t		to = push ? c->src : c->dst;
		int64_t		from = push ? c->dst : c->src;
		double		factor = (double) c->count * c->weight;
		double		scale = product == PR_PRODUCT_PULL_NORMALIZED ? e->inv_out[from] : 1.0;
		const double *in = x + from * k;
		double	   *out = y + to * k;

		for (int j = 0; j < k; j++)
			out[j] += factor * (in[j] * scale);
	}
}
