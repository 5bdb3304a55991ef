/*
 * pr_cpu_vector.c — the CPU engine's vector operations over node chunks: x scaled by
 * 1/out_strength, dangling sums, the PageRank update, column sums and division, residuals, and the
 * sums of their per-chunk partials.  Every sum is compensated and taken in a fixed order.
 */
#include "pr_cpu_engine.h"

#include <string.h>

/*
 * The column sums of rows of x (k values each) into sums[k]: the rows listed in rows[i0, i1) when
 * listed, else the rows i0 .. i1-1 themselves (rows unused).  Every column in plain blocks of
 * PR_CPU_SUM_BLOCK rows, the block sums compensated (so column j's sum is that of a one-column run
 * of column j); k columns in groups of PR_CPU_COLUMN_GROUP, summed in locals.  Callers pass listed
 * as a constant: each inlined copy keeps one way of finding its rows.
 */
PR_ALWAYS_INLINE static inline void
compensated_column_sums(const double *x, int k, bool listed, const int32_t *rows, int64_t i0,
						int64_t i1, double *sums)
{
	if (k == 1)
	{
		double		s = 0.0,
					s_carry = 0.0;

		for (int64_t b = i0; b < i1; b += PR_CPU_SUM_BLOCK)
		{
			int64_t		block_end = i1 - b > PR_CPU_SUM_BLOCK ? b + PR_CPU_SUM_BLOCK : i1;
			double		block = 0.0;

			for (int64_t i = b; i < block_end; i++)
				block += x[listed ? (int64_t) rows[i] : i];
			compensated_add(&s, &s_carry, block);
		}
		sums[0] = s + s_carry;
		return;
	}
	for (int j0 = 0; j0 < k; j0 += PR_CPU_COLUMN_GROUP)
	{
		int			width = k - j0 < PR_CPU_COLUMN_GROUP ? k - j0 : PR_CPU_COLUMN_GROUP;
		double		s[PR_CPU_COLUMN_GROUP],
					s_carry[PR_CPU_COLUMN_GROUP],
					block[PR_CPU_COLUMN_GROUP];

		for (int j = 0; j < width; j++)
			s[j] = s_carry[j] = 0.0;
		for (int64_t b = i0; b < i1; b += PR_CPU_SUM_BLOCK)
		{
			int64_t		block_end = i1 - b > PR_CPU_SUM_BLOCK ? b + PR_CPU_SUM_BLOCK : i1;

			for (int j = 0; j < width; j++)
				block[j] = 0.0;
			for (int64_t i = b; i < block_end; i++)
			{
				const double *xi = x + (listed ? (int64_t) rows[i] : i) * k + j0;

				for (int j = 0; j < width; j++)
					block[j] += xi[j];
			}
			for (int j = 0; j < width; j++)
				compensated_add(&s[j], &s_carry[j], block[j]);
		}
		for (int j = 0; j < width; j++)
			sums[j0 + j] = s[j] + s_carry[j];
	}
}

/* The dangling sums of x over chunk c's dangling nodes into part_dangling. */
static inline void
chunk_dangling_sums(CpuEngine *e, int64_t c, const double *x)
{
	compensated_column_sums(x, e->k, true, e->dangling, e->dangling_chunk[c],
							e->dangling_chunk[c + 1], e->part_dangling + c * e->k);
}

/* zg[v * width + j] = x[v * k + j] * inv_out[v] for the width columns of a group, rows [v0, v1). */
PR_ALWAYS_INLINE static inline void
scale_group(const double *x, int k, const double *inv_out, int width, int64_t v0, int64_t v1,
			double *zg)
{
	for (int64_t v = v0; v < v1; v++)
	{
		double		f = inv_out[v];
		const double *xv = x + v * k;

		PR_UNROLL for (int j = 0; j < width; j++)
			zg[v * width + j] = xv[j] * f;
	}
}

/* z = x / out_strength (0 for dangling nodes) and the dangling sums of x, for chunk c. */
static inline void
chunk_scale_by_strength(CpuEngine *e, int64_t c, const double *x)
{
	const int	k = e->k;
	int64_t		v0 = c * PR_CPU_CHUNK;
	int64_t		v1 = v0 + PR_CPU_CHUNK < e->n ? v0 + PR_CPU_CHUNK : e->n;

	if (k == 1)
	{
		for (int64_t v = v0; v < v1; v++)
			e->z[v] = x[v] * e->inv_out[v];
	}
	else
	{
		for (int g = 0; g < e->n_groups; g++)
		{
			int			first = e->group_first[g];
			int			width = e->group_first[g + 1] - first;
			double	   *zg = e->z + e->n * first;

			/* the widths of groups as constants: the column loops unroll */
			if (width == 8)
				scale_group(x + first, k, e->inv_out, 8, v0, v1, zg);
			else if (width == 4)
				scale_group(x + first, k, e->inv_out, 4, v0, v1, zg);
			else if (width == 2)
				scale_group(x + first, k, e->inv_out, 2, v0, v1, zg);
			else
				scale_group(x + first, k, e->inv_out, width, v0, v1, zg);
		}
	}
	chunk_dangling_sums(e, c, x);
}

/* z = x / out_strength and the dangling sums of x, this thread's chunks. */
void
pr_cpu_task_scale_by_strength(CpuEngine *e, int tid, const void *varg)
{
	const ProductArgs *a = (const ProductArgs *) varg;

	(void) tid;
	for (int64_t c; (c = claim(e)) < e->n_chunks;)
		chunk_scale_by_strength(e, c, a->x);
}

/* Per-chunk dangling sums of x (when the product did not already take them). */
void
pr_cpu_task_dangling_sums(CpuEngine *e, int tid, const void *varg)
{
	const double *x = (const double *) varg;

	(void) tid;
	for (int64_t c; (c = claim(e)) < e->n_chunks;)
		chunk_dangling_sums(e, c, x);
}

/*
 * The |y - x| partials of width adjacent columns (rows of k values) over node rows [v0, v1)
 * into ps / pm: plain blocks of PR_CPU_SUM_BLOCK nodes, the block sums compensated.
 */
PR_ALWAYS_INLINE static inline void
residual_group(const double *y, const double *x, int k, int width, int64_t v0, int64_t v1,
			   double *ps, double *pm)
{
	double		s[PR_CPU_COLUMN_GROUP] = {0.0},
				s_carry[PR_CPU_COLUMN_GROUP] = {0.0},
				mx[PR_CPU_COLUMN_GROUP] = {0.0},
				block[PR_CPU_COLUMN_GROUP] = {0.0};

	for (int64_t b = v0; b < v1; b += PR_CPU_SUM_BLOCK)
	{
		int64_t		block_end = v1 - b > PR_CPU_SUM_BLOCK ? b + PR_CPU_SUM_BLOCK : v1;

		PR_UNROLL for (int j = 0; j < width; j++)
			block[j] = 0.0;
		for (int64_t v = b; v < block_end; v++)
		{
			const double *yv = y + v * k;
			const double *xv = x + v * k;

			PR_UNROLL for (int j = 0; j < width; j++)
			{
				double		d = fabs(yv[j] - xv[j]);

				block[j] += d;
				mx[j] = d > mx[j] ? d : mx[j];
			}
		}
		PR_UNROLL for (int j = 0; j < width; j++)
			compensated_add(&s[j], &s_carry[j], block[j]);
	}
	PR_UNROLL for (int j = 0; j < width; j++)
	{
		ps[j] = s[j] + s_carry[j];
		pm[j] = mx[j];
	}
}

/*
 * Per-chunk |y - x| partials (l1 sums and maxima) of node rows [v0, v1): every column in plain
 * blocks of PR_CPU_SUM_BLOCK whose sums are compensated (column j's as in a one-column run of
 * column j); k columns in groups of PR_CPU_COLUMN_GROUP, summed in locals.
 */
static inline void
chunk_residual(CpuEngine *e, int64_t c, int64_t v0, int64_t v1, const double *y, const double *x)
{
	const int	k = e->k;
	double	   *ps = e->part_sum + c * k;
	double	   *pm = e->part_max + c * k;

	if (k == 1)
	{
		double		s = 0.0,
					s_carry = 0.0,
					mx = 0.0;

		for (int64_t b = v0; b < v1; b += PR_CPU_SUM_BLOCK)
		{
			int64_t		block_end = v1 - b > PR_CPU_SUM_BLOCK ? b + PR_CPU_SUM_BLOCK : v1;
			double		block = 0.0;

			for (int64_t v = b; v < block_end; v++)
			{
				double		d = fabs(y[v] - x[v]);

				block += d;
				mx = d > mx ? d : mx;
			}
			compensated_add(&s, &s_carry, block);
		}
		ps[0] = s + s_carry;
		pm[0] = mx;
		return;
	}
	for (int j0 = 0; j0 < k; j0 += PR_CPU_COLUMN_GROUP)
	{
		int			width = k - j0 < PR_CPU_COLUMN_GROUP ? k - j0 : PR_CPU_COLUMN_GROUP;

		/* a constant width for the widths of groups: the sums stay in registers */
		if (width == 8)
			residual_group(y + j0, x + j0, k, 8, v0, v1, ps + j0, pm + j0);
		else if (width == 4)
			residual_group(y + j0, x + j0, k, 4, v0, v1, ps + j0, pm + j0);
		else if (width == 2)
			residual_group(y + j0, x + j0, k, 2, v0, v1, ps + j0, pm + j0);
		else
			residual_group(y + j0, x + j0, k, width, v0, v1, ps + j0, pm + j0);
	}
}

/* Sets the rows of y of the delta's absent nodes in [v0, v1) to 0. */
static inline void
zero_absent_rows(const CpuEngine *e, double *y, int64_t v0, int64_t v1)
{
	for (int64_t i = pr_lower_bound_i32(e->delta_absent, 0, e->n_delta_absent, v0);
		 i < e->n_delta_absent && e->delta_absent[i] < v1; i++)
		memset(y + (int64_t) e->delta_absent[i] * e->k, 0, sizeof(double) * (size_t) e->k);
}

/*
 * y = alpha * y + coef_j * r_j, chunk by chunk (uniform: coef holds coef_j / the nodes served;
 * otherwise the bucketed restart entries of the chunk are added), a delta's absent nodes set to
 * 0, then the chunk's residual partials.
 */
void
pr_cpu_task_pagerank_update(CpuEngine *e, int tid, const void *varg)
{
	const UpdateArgs *a = (const UpdateArgs *) varg;
	const int	k = e->k;
	const double alpha = a->alpha;
	double	   *y = a->y;

	(void) tid;
	for (int64_t c; (c = claim(e)) < e->n_chunks;)
	{
		int64_t		v0 = c * PR_CPU_CHUNK;
		int64_t		v1 = v0 + PR_CPU_CHUNK < e->n ? v0 + PR_CPU_CHUNK : e->n;

		if (e->rows_owned)
		{
			/* only the rows the engine owns: a chunk outside them adds nothing to the residual */
			v0 = v0 > e->own_begin ? v0 : e->own_begin;
			v1 = v1 < e->own_end ? v1 : e->own_end;
			if (v0 >= v1)
			{
				for (int j = 0; j < k; j++)
					e->part_sum[c * k + j] = e->part_max[c * k + j] = 0.0;
				continue;
			}
		}
		if (a->uniform)
		{
			if (k == 1)
			{
				double		add = e->coef[0];

				for (int64_t v = v0; v < v1; v++)
					y[v] = alpha * y[v] + add;
			}
			else
			{
				for (int64_t v = v0; v < v1; v++)
					for (int j = 0; j < k; j++)
						y[v * k + j] = alpha * y[v * k + j] + e->coef[j];
			}
		}
		else
		{
			for (int64_t i = v0 * k; i < v1 * k; i++)
				y[i] = alpha * y[i];
			for (int64_t r = e->restart_chunk[c]; r < e->restart_chunk[c + 1]; r++)
			{
				int			j = e->restart_col[r];

				if (e->restart_node[r] >= v0 && e->restart_node[r] < v1)
					y[(int64_t) e->restart_node[r] * k + j] += e->coef[j] * e->restart_weight[r];
			}
		}
		if (a->restart != NULL && a->restart->dangling_count > 0)
		{
			/* the dangling mass goes to the dangling distribution's nodes of this chunk */
			const PrRestart *r = a->restart;

			for (int64_t i = pr_lower_bound_i32(r->dangling_node, 0, r->dangling_count, v0);
				 i < r->dangling_count && r->dangling_node[i] < v1; i++)
				for (int j = 0; j < k; j++)
					y[(int64_t) r->dangling_node[i] * k + j] +=
						e->dangling_coef[j] * r->dangling_weight[i];
		}
		if (e->n_delta_absent > 0)
			zero_absent_rows(e, y, v0, v1);
		chunk_residual(e, c, v0, v1, y, a->x);
		/* prepare the next product while the chunk is in cache (not for owned rows: the
		 * product reads the whole vector, which an exchange completes after the update) */
		if (e->z != NULL && !e->rows_owned)
			chunk_scale_by_strength(e, c, y);
	}
}

/*
 * The rows [*v0, *v1) of chunk c that a combination, dot product, column sum or normalisation
 * covers: all of them, or for a part (pr_cpu_engine_own_part) its owned ones only (an empty range
 * adds nothing).
 */
static inline void
mixed_rows(const CpuEngine *e, int64_t c, int64_t *v0, int64_t *v1)
{
	*v0 = c * PR_CPU_CHUNK;
	*v1 = *v0 + PR_CPU_CHUNK < e->n ? *v0 + PR_CPU_CHUNK : e->n;
	if (e->part)
	{
		*v0 = *v0 > e->own_begin ? *v0 : e->own_begin;
		*v1 = *v1 < e->own_end ? *v1 : e->own_end;
		*v1 = *v1 > *v0 ? *v1 : *v0;
	}
}

/* Per-chunk column sums of y, compensated. */
void
pr_cpu_task_column_sums(CpuEngine *e, int tid, const void *varg)
{
	const UpdateArgs *a = (const UpdateArgs *) varg;

	(void) tid;
	for (int64_t c; (c = claim(e)) < e->n_chunks;)
	{
		int64_t		v0,
					v1;

		mixed_rows(e, c, &v0, &v1);
		compensated_column_sums(a->y, e->k, false, NULL, v0, v1, e->part_sum + c * e->k);
	}
}

/* Divides each column by its sum (coef; 0 = leave alone), then the residual partials vs x. */
void
pr_cpu_task_divide_columns(CpuEngine *e, int tid, const void *varg)
{
	const UpdateArgs *a = (const UpdateArgs *) varg;
	const int	k = e->k;

	(void) tid;
	for (int64_t c; (c = claim(e)) < e->n_chunks;)
	{
		int64_t		v0,
					v1;

		mixed_rows(e, c, &v0, &v1);
		for (int64_t v = v0; v < v1; v++)
			for (int j = 0; j < k; j++)
				if (e->coef[j] != 0.0)
					a->y[v * k + j] /= e->coef[j];
		if (a->x != NULL)
			chunk_residual(e, c, v0, v1, a->y, a->x);
	}
}

/*
 * strip[i] += coef[t] * in[t][i] for t < width (1 to 3), in term order, over len entries: one
 * loop (strip is a local, no input aliases it).
 */
PR_ALWAYS_INLINE static inline void
combine_strip_terms(double *strip, const double *const *in, const double *coef, int width,
					int64_t len)
{
	const double *in0 = in[0],
			   *in1 = in[width > 1 ? 1 : 0],
			   *in2 = in[width > 2 ? 2 : 0];
	double		c0 = coef[0],
				c1 = coef[width > 1 ? 1 : 0],
				c2 = coef[width > 2 ? 2 : 0];

	for (int64_t i = 0; i < len; i++)
	{
		double		v = strip[i] + c0 * in0[i];

		if (width > 1)
			v += c1 * in1[i];
		if (width > 2)
			v += c2 * in2[i];
		strip[i] = v;
	}
}

/*
 * out[s0 + i] = sum of coef[t] * in_t[s0 + i] for i < len, one column, through strip (a local):
 * the first term, then the others three at a time, in term order (plain vector loops where the
 * caller passes len as a constant; the output may be one of the inputs).
 */
PR_ALWAYS_INLINE static inline void
combine_strip(const MixArgs *a, int64_t s0, int64_t len, double *strip)
{
	const double *in0 = a->in[0] + s0;
	double		c0 = a->coef[0];

	for (int64_t i = 0; i < len; i++)
		strip[i] = c0 * in0[i];
	for (int t0 = 1; t0 < a->n_terms; t0 += 3)
	{
		const double *in[3];
		int			width = a->n_terms - t0 < 3 ? a->n_terms - t0 : 3;

		for (int t = 0; t < width; t++)
			in[t] = a->in[t0 + t] + s0;
		if (width == 1)
			combine_strip_terms(strip, in, a->coef + t0, 1, len);
		else if (width == 2)
			combine_strip_terms(strip, in, a->coef + t0, 2, len);
		else
			combine_strip_terms(strip, in, a->coef + t0, 3, len);
	}
	memcpy(a->out + s0, strip, (size_t) len * sizeof(double));
}

/*
 * out[v] = sum of coef[t] * in_t[v] for v in [v0, v1), one column, strip by strip of
 * PR_CPU_COMBINE_STRIP nodes: every element adds its terms in term order, as the loop over
 * columns does.
 */
static void
combine_one_column(const MixArgs *a, int64_t v0, int64_t v1)
{
	double		strip[PR_CPU_COMBINE_STRIP];

	for (int64_t s0 = v0; s0 < v1; s0 += PR_CPU_COMBINE_STRIP)
	{
		if (v1 - s0 >= PR_CPU_COMBINE_STRIP)
			combine_strip(a, s0, PR_CPU_COMBINE_STRIP, strip);
		else
			combine_strip(a, s0, v1 - s0, strip);
	}
}

/* out = sum of coef[t * k + j] * in_t per column j, chunk by chunk. */
void
pr_cpu_task_combine(CpuEngine *e, int tid, const void *varg)
{
	const MixArgs *a = (const MixArgs *) varg;
	const int	k = e->k;

	(void) tid;
	for (int64_t c; (c = claim(e)) < e->n_chunks;)
	{
		int64_t		q0,
					q1;

		mixed_rows(e, c, &q0, &q1);
		q0 *= k;
		q1 *= k;
		if (k == 1)
		{
			combine_one_column(a, q0, q1);
			continue;
		}
		/* element by element: the output may be one of the inputs */
		for (int64_t q = q0; q < q1; q += k)
			for (int j = 0; j < k; j++)
			{
				double		v = a->coef[j] * a->in[0][q + j];

				for (int t = 1; t < a->n_terms; t++)
					v += a->coef[t * k + j] * a->in[t][q + j];
				a->out[q + j] = v;
			}
	}
}

/*
 * The sums over [v0, v1) of a[v] * in[t][v] for every term t, one column, into sum[t * stride]:
 * each in node order, four terms side by side (independent sums in registers, a read once per
 * four terms; a group of fewer repeats its first term and drops those sums).
 */
static void
dots_one_column(const MixArgs *mix, int64_t v0, int64_t v1, double *sum, size_t stride)
{
	const double *a = mix->a;

	for (int t0 = 0; t0 < mix->n_terms; t0 += 4)
	{
		int			width = mix->n_terms - t0 < 4 ? mix->n_terms - t0 : 4;
		const double *in0 = mix->in[t0],
				   *in1 = mix->in[t0 + (width > 1 ? 1 : 0)],
				   *in2 = mix->in[t0 + (width > 2 ? 2 : 0)],
				   *in3 = mix->in[t0 + (width > 3 ? 3 : 0)];
		double		s[4] = {0.0, 0.0, 0.0, 0.0};

		for (int64_t v = v0; v < v1; v++)
		{
			double		av = a[v];

			s[0] += av * in0[v];
			s[1] += av * in1[v];
			s[2] += av * in2[v];
			s[3] += av * in3[v];
		}
		for (int t = 0; t < width; t++)
			sum[(size_t) (t0 + t) * stride] = s[t];
	}
}

/*
 * Per chunk c, column j and term t: part_dots[(t * n_chunks + c) * k + j] = the sum over the
 * chunk's nodes of a * in_t, in node order.
 */
void
pr_cpu_task_dots(CpuEngine *e, int tid, const void *varg)
{
	const MixArgs *a = (const MixArgs *) varg;
	const int	k = e->k;

	(void) tid;
	for (int64_t c; (c = claim(e)) < e->n_chunks;)
	{
		int64_t		q0,
					q1;

		mixed_rows(e, c, &q0, &q1);
		q0 *= k;
		q1 *= k;
		if (k == 1)
		{
			dots_one_column(a, q0, q1, e->part_dots + c, (size_t) e->n_chunks);
			continue;
		}
		for (int t = 0; t < a->n_terms; t++)
		{
			const double *in = a->in[t];
			double	   *part = e->part_dots + ((size_t) t * (size_t) e->n_chunks + (size_t) c) * k;

			/* the columns of a group side by side: independent sums, each in node order */
			for (int j0 = 0; j0 < k; j0 += PR_CPU_COLUMN_GROUP)
			{
				int			width = k - j0 < PR_CPU_COLUMN_GROUP ? k - j0 : PR_CPU_COLUMN_GROUP;
				double		sum[PR_CPU_COLUMN_GROUP] = {0.0};

				for (int64_t q = q0 + j0; q < q1; q += k)
					for (int j = 0; j < width; j++)
						sum[j] += a->a[q + j] * in[q + j];
				for (int j = 0; j < width; j++)
					part[j0 + j] = sum[j];
			}
		}
	}
}

/*
 * Sums the per-chunk partials of part into out[k], in chunk order, compensated (scratch holds the
 * carries).
 */
void
pr_cpu_sum_partials(const CpuEngine *e, const double *part, double *out)
{
	double	   *carry = e->scratch;

	for (int j = 0; j < e->k; j++)
		out[j] = carry[j] = 0.0;
	for (int64_t c = 0; c < e->n_chunks; c++)
		for (int j = 0; j < e->k; j++)
			compensated_add(&out[j], &carry[j], part[c * e->k + j]);
	for (int j = 0; j < e->k; j++)
		out[j] += carry[j];
}

/* Collects the residual partials into res[k]. */
void
pr_cpu_collect_residual(CpuEngine *e)
{
	const int	k = e->k;
	double	   *l1 = e->scratch + k;

	pr_cpu_sum_partials(e, e->part_sum, l1);
	for (int j = 0; j < k; j++)
	{
		e->res[j].l1 = l1[j];
		e->res[j].linf = 0.0;
	}
	for (int64_t c = 0; c < e->n_chunks; c++)
		for (int j = 0; j < k; j++)
			if (e->part_max[c * k + j] > e->res[j].linf)
				e->res[j].linf = e->part_max[c * k + j];
	e->have_residual = true;
}
