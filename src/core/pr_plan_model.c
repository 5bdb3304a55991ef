/*
 * pr_plan_model.c — the performance model of the GPU formats: a table of measured workload costs
 * (written by the benchmark's calibration on each GPU) and the prediction of a layout's time.
 */
#include "pr_plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parses the text form of a model table: "device NAME" and "kind size window ns" lines. */
PrStatus
pr_model_parse(const char *text, PrModel *model, PrError *err)
{
	const char *p = text;
	int			line_no = 0;

	memset(model, 0, sizeof(*model));
	while (*p != '\0')
	{
		const char *end = strchr(p, '\n');
		size_t		len = end ? (size_t) (end - p) : strlen(p);
		char		line[256];
		char		kind;
		long long	size,
					window;
		double		ns;

		line_no++;
		if (len >= sizeof(line))
			return pr_error_set(err, PR_ERR_INVALID, "model: line %d too long", line_no);
		memcpy(line, p, len);
		line[len] = '\0';
		p = end ? end + 1 : p + len;
		if (line[0] == '#' || line[0] == '\0')
			continue;
		if (strncmp(line, "device", 6) == 0)
		{
			const char *name = len > 7 ? line + 7 : "";
			size_t		copy = strlen(name);

			if (copy >= sizeof(model->device))
				copy = sizeof(model->device) - 1;
			memcpy(model->device, name, copy);
			model->device[copy] = '\0';
			continue;
		}
		if (sscanf(line, " %c %lld %lld %lf", &kind, &size, &window, &ns) != 4 || ns < 0)
			return pr_error_set(err, PR_ERR_INVALID, "model: cannot read line %d", line_no);
		if (model->n_entries >= (int) (sizeof(model->entries) / sizeof(model->entries[0])))
			return pr_error_set(err, PR_ERR_INVALID, "model: too many entries");
		model->entries[model->n_entries].kind = kind;
		model->entries[model->n_entries].size = size;
		model->entries[model->n_entries].window = window;
		model->entries[model->n_entries].ns = ns;
		model->n_entries++;
	}
	return PR_OK;
}

/* Cost at one window: log-linear in size between the nearest measured sizes, proportional beyond. */
static double
model_cost_at_window(const PrModel *m, char kind, int64_t size, int64_t window)
{
	const PrModelEntry *below = NULL,
			   *above = NULL;

	for (int i = 0; i < m->n_entries; i++)
	{
		const PrModelEntry *e = &m->entries[i];

		if (e->kind != kind || e->window != window)
			continue;
		if (e->size <= size && (below == NULL || e->size > below->size))
			below = e;
		if (e->size >= size && (above == NULL || e->size < above->size))
			above = e;
	}
	if (below == NULL && above == NULL)
		return -1.0;
	if (below == NULL)
		return above->ns;
	if (above == NULL)
		return below->size > 0 ? below->ns * (double) size / (double) below->size : below->ns;
	if (above->size == below->size)
		return below->ns;
	{
		double		f = (log((double) size + 1) - log((double) below->size + 1)) /
			(log((double) above->size + 1) - log((double) below->size + 1));

		return below->ns + f * (above->ns - below->ns);
	}
}

/* Cost of one workload of a shape, interpolated log-linearly in size and window. */
double
pr_model_cost(const PrModel *model, char kind, int64_t size, int64_t window)
{
	int64_t		w_below = -1,
				w_above = -1;

	for (int i = 0; i < model->n_entries; i++)
	{
		const PrModelEntry *e = &model->entries[i];

		if (e->kind != kind)
			continue;
		if (e->window <= window && e->window > w_below)
			w_below = e->window;
		if (e->window >= window && (w_above < 0 || e->window < w_above))
			w_above = e->window;
	}
	if (w_below < 0 && w_above < 0)
		return -1.0;
	if (w_below < 0)
		return model_cost_at_window(model, kind, size, w_above);
	if (w_above < 0 || w_above == w_below)
		return model_cost_at_window(model, kind, size, w_below);
	{
		double		lo = model_cost_at_window(model, kind, size, w_below);
		double		hi = model_cost_at_window(model, kind, size, w_above);
		double		f = (log((double) window) - log((double) w_below)) /
			(log((double) w_above) - log((double) w_below));

		return lo + f * (hi - lo);
	}
}

/* A fixed cost ('l' launch, 'r' row) from the table, or a default when absent. */
static double
model_fixed(const PrModel *m, char kind, double fallback)
{
	double		c = pr_model_cost(m, kind, 1, 1);

	return c < 0 ? fallback : c;
}

/* Predicted seconds of one product over a composite layout. */
double
pr_model_predict_composite(const PrModel *model, const PrComposite *c)
{
	double		ns = 0.0;
	double		launch = model_fixed(model, 'l', 3000.0);
	double		row = model_fixed(model, 'r', 0.005);
	double		row_add = model_fixed(model, 'w', 4.0 * row);

	for (int t = 0; t < c->n_tiles; t++)
	{
		const PrCompositeTile *tile = &c->tiles[t];
		int64_t		window = tile->eff_window > 0 ? tile->eff_window : tile->col_end - tile->col_begin;
		char		vec_kind = tile->local16 ? 'V' : 'v';
		char		ell_kind = tile->local16 ? 'E' : 'e';
		int64_t		last_len = -1;
		double		last_cost = 0.0;

		if (tile->local16 && pr_model_cost(model, 'E', 1, window) < 0)
		{
			vec_kind = 'v';
			ell_kind = 'e';
		}
		ns += launch + (t == 0 ? row : row_add) * (double) tile->n_rows;
		for (int64_t w = 0; w < tile->n_vec; w++)
		{
			int64_t		len = tile->vec_ptr[w + 1] - tile->vec_ptr[w];

			if (len != last_len)
			{
				last_cost = pr_model_cost(model, vec_kind, len, window);
				last_len = len;
			}
			ns += last_cost > 0 ? last_cost : 0.0;
		}
		last_len = -1;
		for (int64_t g = 0; g < tile->n_ell; g++)
		{
			int64_t		h = (tile->ell_off[g + 1] - tile->ell_off[g]) / PR_PLAN_WARP;

			if (h != last_len)
			{
				last_cost = h == 0 ? 0.0 : pr_model_cost(model, ell_kind, h, window);
				last_len = h;
			}
			ns += last_cost > 0 ? last_cost : 0.0;
		}
		if (tile->longs.n_long > 0)
			ns += launch + row * (double) tile->longs.n_long;
	}
	return ns * 1e-9;
}

/* Effective number of columns the entries of a CSR spread over: (sum d)^2 / sum d^2. */
static int64_t
effective_window(const PrPlanCsr *csr)
{
	int64_t    *deg = calloc((size_t) csr->n + 1, sizeof(int64_t));
	double		sum = 0,
				sum2 = 0;

	if (deg == NULL)
		return csr->n;
	for (int64_t e = 0; e < csr->nnz; e++)
		deg[csr->col[e]]++;
	for (int64_t c = 0; c < csr->n; c++)
	{
		sum += (double) deg[c];
		sum2 += (double) deg[c] * (double) deg[c];
	}
	free(deg);
	return sum2 > 0 ? (int64_t) (sum * sum / sum2) + 1 : 1;
}

/* Predicted seconds of one product over a binned layout. */
double
pr_model_predict_binned(const PrModel *model, const PrBinned *b, const PrPlanCsr *csr)
{
	double		ns = model_fixed(model, 'l', 3000.0);
	int64_t		window = effective_window(csr);
	int64_t		last_len = -1;
	double		last_cost = 0.0;

	for (int bin = 0; bin < PR_BIN_COUNT - 1; bin++)
		for (int64_t i = b->bin_begin[bin]; i < b->bin_begin[bin + 1]; i++)
		{
			int32_t		r = b->rows[i];
			int64_t		len = csr->ptr[r + 1] - csr->ptr[r];

			if (len != last_len)
			{
				last_cost = pr_model_cost(model, 'b', len, window);
				last_len = len;
			}
			ns += last_cost > 0 ? last_cost : 0.0;
		}
	for (int64_t c = 0; c < b->n_chunks; c++)
	{
		int32_t		r = b->chunk_row[c];
		int64_t		end = csr->ptr[r + 1];
		int64_t		len = b->chunk_begin_edge[c] + b->chunk < end ? b->chunk : end - b->chunk_begin_edge[c];
		double		cost = pr_model_cost(model, 'v', len, window);

		ns += cost > 0 ? cost : 0.0;
	}
	if (b->longs.n_long > 0)
		ns += model_fixed(model, 'l', 3000.0);
	return ns * 1e-9;
}
