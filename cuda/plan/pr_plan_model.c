/*
 * pr_plan_model.c — the performance model of the GPU formats: a table of measured workload costs
 * (written by the benchmark's calibration on each GPU), layout statistics, the hit-rate mixture
 * prediction of a layout's time, and the model's choice among candidate layouts.
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

/* Rank bucket of a gathered column's offset in its tile (see PR_RANK_BUCKETS). */
static inline int
rank_bucket_of(int64_t offset)
{
	return offset <= 0 ? 0 : 64 - __builtin_clzll((unsigned long long) offset);
}

/* A fixed cost ('l' launch, 'r' row, 'w' row added, 'm' merged partial) from the table, or a
 * default. */
static double
model_fixed(const PrModel *m, char kind, double fallback)
{
	double		c = pr_model_cost(m, kind, 1, 1);

	return c < 0 ? fallback : c;
}

/* Whether the table has any entry of a kind. */
static bool
model_has(const PrModel *m, char kind)
{
	for (int i = 0; i < m->n_entries; i++)
		if (m->entries[i].kind == kind)
			return true;
	return false;
}

/* The calibrated windows of a kind, ascending (at most max); returns their number. */
static int
model_windows(const PrModel *m, char kind, int64_t *windows, int max)
{
	int			count = 0;

	for (int i = 0; i < m->n_entries; i++)
	{
		const PrModelEntry *e = &m->entries[i];
		int			pos;

		if (e->kind != kind)
			continue;
		for (pos = 0; pos < count && windows[pos] < e->window; pos++)
			;
		if (pos < count && windows[pos] == e->window)
			continue;
		if (count == max)
			continue;
		memmove(windows + pos + 1, windows + pos, (size_t) (count - pos) * sizeof(int64_t));
		windows[pos] = e->window;
		count++;
	}
	return count;
}

/*
 * Cost of one workload of a shape whose gathered columns spread over the rank buckets as hist
 * (the hit-rate mixture, see pr_model_predict_stats).  F(W) = W * C(W) through the calibrated
 * windows (F(0) = 0, linear between them and past the last); bucket [lo, hi) costs
 * (F(hi) - F(lo)) / (hi - lo).
 */
static double
model_mixture_cost(const PrModel *m, char kind, int64_t size, const double *frac)
{
	int64_t		win[32];
	double		cum[34];
	double		pos[34];
	int			k = model_windows(m, kind, win, 32);
	int			points = 0;
	double		capacity = model_fixed(m, 'c', -1.0);
	double		total = 0.0;

	if (k == 0)
		return -1.0;
	pos[0] = 0.0;
	cum[0] = 0.0;
	for (int i = 0; i < k; i++)
	{
		double		c = model_cost_at_window(m, kind, size, win[i]);

		if (c < 0)
			return -1.0;
		/* a cache of capacity columns: no extra misses from the last window below it up to it */
		if (capacity > 0 && i > 0 && (double) win[i - 1] < capacity && capacity < (double) win[i])
		{
			points++;
			pos[points] = capacity;
			cum[points] = capacity * (cum[points - 1] / pos[points - 1]);
		}
		points++;
		pos[points] = (double) win[i];
		cum[points] = (double) win[i] * c;
	}
	for (int b = 0; b < PR_RANK_BUCKETS; b++)
	{
		double		lo,
					hi,
					f_lo = 0,
					f_hi = 0;

		if (frac[b] <= 0)
			continue;
		lo = b == 0 ? 0.0 : ldexp(1.0, b - 1);
		hi = b == 0 ? 1.0 : ldexp(1.0, b);
		for (int s = 0; s < 2; s++)
		{
			double		x = s == 0 ? lo : hi;
			double		fx;
			int			i = 1;

			/* segment of F holding x: [pos[i-1], pos[i]], the last one extended */
			while (i < points && x > pos[i])
				i++;
			fx = cum[i - 1] + (cum[i] - cum[i - 1]) * (x - pos[i - 1]) / (pos[i] - pos[i - 1]);
			if (s == 0)
				f_lo = fx;
			else
				f_hi = fx;
		}
		{
			double		c = (f_hi - f_lo) / (hi - lo);

			total += frac[b] * (c > 0 ? c : 0.0);
		}
	}
	return total;
}

/*
 * Dependent gather rounds of a launch's longest workload: a warp takes a CSR-vector workload
 * 128 entries a round (4 loads in flight per lane), an ELL thread its row 4 entries a round, a
 * binned row of len entries len / (2 lanes) a round.
 */
static int64_t
tile_rounds(const PrTileStats *t)
{
	int64_t		rounds = 0;

	for (int64_t i = 0; i < t->n_shapes[0]; i++)
		if ((t->shapes[0][i].size + 127) / 128 > rounds)
			rounds = (t->shapes[0][i].size + 127) / 128;
	for (int64_t i = 0; i < t->n_shapes[1]; i++)
	{
		int64_t		len = t->shapes[1][i].size;
		int64_t		r;

		if (t->kind == PR_STATS_BINNED)
		{
			int			lanes = 32;

			for (int b = 0; b < PR_BIN_COUNT - 2; b++)
				if (len <= 4 * (int64_t) pr_bin_lanes[b])
				{
					lanes = pr_bin_lanes[b];
					break;
				}
			r = (len + 2 * lanes - 1) / (2 * lanes);
		}
		else
			r = (len + 3) / 4;
		if (r > rounds)
			rounds = r;
	}
	return rounds;
}

/* Predicted seconds of one product from layout statistics (see pr_plan.h). */
double
pr_model_predict_stats(const PrModel *model, const PrLayoutStats *s)
{
	double		ns = 0.0;
	double		launch = model_fixed(model, 'l', 3000.0);
	double		row = model_fixed(model, 'r', 0.005);
	double		row_add = model_fixed(model, 'w', 4.0 * row);
	double		merge = model_fixed(model, 'm', row_add - row);
	double		latency = model_fixed(model, 'p', 0.0);
	double		scattered = model_fixed(model, 'W', -1.0);
	double		compact_row = row + merge;

	/* 'm' is measured against 'W' (a scattered add measured the same way, the same run):
	 * compact rows cost (r + m) in the units of the table's 'w' */
	if (scattered > 0)
		compact_row = (row + merge) * row_add / scattered;

	for (int t = 0; t < s->n_tiles; t++)
	{
		const PrTileStats *tile = &s->tiles[t];
		char		kinds[2];

		if (tile->kind == PR_STATS_SMEM && model_has(model, 'E') && model_has(model, 'V'))
		{
			kinds[0] = 'V';
			kinds[1] = 'E';
		}
		else
		{
			kinds[0] = 'v';
			kinds[1] = tile->kind == PR_STATS_BINNED ? 'b' : 'e';
		}
		{
			double		work = 0.0;

			if (tile->kind != PR_STATS_BINNED)
				work += (tile->first ? row : tile->compact ? compact_row : row_add) * (double) tile->n_rows;
			for (int c = 0; c < 2; c++)
			{
				double		frac[PR_RANK_BUCKETS];
				double		sum = 0;

				for (int b = 0; b < PR_RANK_BUCKETS; b++)
					sum += (double) tile->rank_hist[c][b];
				for (int b = 0; b < PR_RANK_BUCKETS; b++)
					frac[b] = sum > 0 ? (double) tile->rank_hist[c][b] / sum : (b == 0 ? 1.0 : 0.0);
				for (int64_t i = 0; i < tile->n_shapes[c]; i++)
				{
					const PrShapeCount *sc = &tile->shapes[c][i];
					double		cost;

					if (sc->size <= 0 || sc->count <= 0)
						continue;
					cost = model_mixture_cost(model, kinds[c], sc->size, frac);
					work += cost > 0 ? cost * (double) sc->count : 0.0;
				}
			}
			/* a small launch lasts at least its longest workload's chain of dependent gathers */
			if (tile->kind != PR_STATS_SMEM && latency > 0 && (double) tile_rounds(tile) * latency > work)
				work = (double) tile_rounds(tile) * latency;
			ns += launch + work;
		}
		if (tile->n_long > 0)
			ns += launch + (tile->kind == PR_STATS_BINNED ? 0.0 : row * (double) tile->n_long);
	}
	if (s->n_merge_slots > 0)
		ns += launch;
	return ns * 1e-9;
}

/* Frees layout statistics. */
void
pr_layout_stats_free(PrLayoutStats *s, const PrAllocator *alloc)
{
	if (s->tiles != NULL)
		for (int t = 0; t < s->n_tiles; t++)
		{
			pr_free(alloc, s->tiles[t].shapes[0]);
			pr_free(alloc, s->tiles[t].shapes[1]);
		}
	pr_free(alloc, s->tiles);
	memset(s, 0, sizeof(*s));
}

/* Histogram of sizes as (size, count) pairs, ascending; sizes are in [0, max_size]. */
static PrStatus
shape_histogram(const int64_t *sizes, int64_t n, int64_t stride_scale, PrShapeCount **out,
				int64_t *n_out, const PrAllocator *alloc, PrError *err)
{
	int64_t		max_size = 0,
				distinct = 0;
	int64_t    *count;

	*out = NULL;
	*n_out = 0;
	for (int64_t i = 0; i < n; i++)
		if ((sizes[i + 1] - sizes[i]) / stride_scale > max_size)
			max_size = (sizes[i + 1] - sizes[i]) / stride_scale;
	count = calloc((size_t) max_size + 1, sizeof(int64_t));
	if (count == NULL)
		return pr_error_set(err, PR_ERR_NOMEM, "layout statistics: out of memory");
	for (int64_t i = 0; i < n; i++)
		count[(sizes[i + 1] - sizes[i]) / stride_scale]++;
	for (int64_t v = 0; v <= max_size; v++)
		distinct += count[v] > 0;
	*out = pr_alloc_array(alloc, (size_t) distinct + 1, sizeof(PrShapeCount));
	if (*out == NULL)
	{
		free(count);
		return pr_error_set(err, PR_ERR_NOMEM, "layout statistics: out of memory");
	}
	for (int64_t v = 0; v <= max_size; v++)
		if (count[v] > 0)
		{
			(*out)[*n_out].size = v;
			(*out)[*n_out].count = count[v];
			(*n_out)++;
		}
	free(count);
	return PR_OK;
}

/* Statistics of a composite layout. */
PrStatus
pr_layout_stats_composite(const PrComposite *c, PrLayoutStats *out, const PrAllocator *alloc,
						  PrError *err)
{
	memset(out, 0, sizeof(*out));
	out->tiles = pr_alloc_array(alloc, (size_t) c->n_tiles + 1, sizeof(PrTileStats));
	if (out->tiles == NULL)
		return pr_error_set(err, PR_ERR_NOMEM, "layout statistics: out of memory");
	memset(out->tiles, 0, ((size_t) c->n_tiles + 1) * sizeof(PrTileStats));
	out->n_tiles = c->n_tiles;
	for (int t = 0; t < c->n_tiles; t++)
	{
		const PrCompositeTile *ct = &c->tiles[t];
		PrTileStats *ts = &out->tiles[t];
		PrStatus	st;

		ts->kind = ct->local16 ? PR_STATS_SMEM : PR_STATS_L2;
		ts->first = t == 0;
		ts->compact = t > 0 && c->options.compact;
		ts->n_rows = ct->n_rows;
		ts->n_long = ct->longs.n_long;
		ts->width = ct->col_end - ct->col_begin;
		memcpy(ts->rank_hist, ct->rank_hist, sizeof(ts->rank_hist));
		if (ts->compact)
			out->n_merge_slots += ct->n_rows;
		st = shape_histogram(ct->vec_ptr, ct->n_vec, 1, &ts->shapes[0], &ts->n_shapes[0], alloc, err);
		if (st == PR_OK)
			st = shape_histogram(ct->ell_off, ct->n_ell, PR_PLAN_WARP, &ts->shapes[1], &ts->n_shapes[1],
								 alloc, err);
		if (st != PR_OK)
		{
			pr_layout_stats_free(out, alloc);
			return st;
		}
	}
	return PR_OK;
}

/* Statistics of a binned layout over its CSR. */
PrStatus
pr_layout_stats_binned(const PrBinned *b, const PrPlanCsr *csr, PrLayoutStats *out,
					   const PrAllocator *alloc, PrError *err)
{
	PrTileStats *ts;
	int64_t		n_rows = b->bin_begin[PR_BIN_COUNT - 1];
	int64_t    *sizes = malloc((size_t) (n_rows > b->n_chunks ? n_rows : b->n_chunks) * sizeof(int64_t) + 16);
	PrStatus	st;

	memset(out, 0, sizeof(*out));
	out->tiles = pr_alloc_array(alloc, 1, sizeof(PrTileStats));
	if (out->tiles == NULL || sizes == NULL)
	{
		free(sizes);
		pr_free(alloc, out->tiles);
		out->tiles = NULL;
		return pr_error_set(err, PR_ERR_NOMEM, "layout statistics: out of memory");
	}
	memset(out->tiles, 0, sizeof(PrTileStats));
	out->n_tiles = 1;
	ts = &out->tiles[0];
	ts->kind = PR_STATS_BINNED;
	ts->first = true;
	ts->n_rows = csr->n;
	ts->n_long = b->longs.n_long;
	ts->width = csr->n;
	/* chunks of long rows: their lengths as a running sum */
	sizes[0] = 0;
	for (int64_t c = 0; c < b->n_chunks; c++)
	{
		int32_t		r = b->chunk_row[c];
		int64_t		end = csr->ptr[r + 1];
		int64_t		len = b->chunk_begin_edge[c] + b->chunk < end ? b->chunk : end - b->chunk_begin_edge[c];

		sizes[c + 1] = sizes[c] + len;
		for (int64_t e = b->chunk_begin_edge[c]; e < b->chunk_begin_edge[c] + len; e++)
			ts->rank_hist[0][rank_bucket_of(csr->col[e])]++;
	}
	st = shape_histogram(sizes, b->n_chunks, 1, &ts->shapes[0], &ts->n_shapes[0], alloc, err);
	sizes[0] = 0;
	for (int64_t i = 0; i < n_rows; i++)
	{
		int32_t		r = b->rows[i];

		sizes[i + 1] = sizes[i] + (csr->ptr[r + 1] - csr->ptr[r]);
		for (int64_t e = csr->ptr[r]; e < csr->ptr[r + 1]; e++)
			ts->rank_hist[1][rank_bucket_of(csr->col[e])]++;
	}
	if (st == PR_OK)
		st = shape_histogram(sizes, n_rows, 1, &ts->shapes[1], &ts->n_shapes[1], alloc, err);
	free(sizes);
	if (st != PR_OK)
		pr_layout_stats_free(out, alloc);
	return st;
}

/* Writes statistics as text (see pr_plan.h). */
void
pr_layout_stats_write(FILE *f, const char *graph, const char *name, const PrLayoutStats *s)
{
	fprintf(f, "layout %s %s tiles %d merge %lld\n", graph, name, s->n_tiles, (long long) s->n_merge_slots);
	for (int t = 0; t < s->n_tiles; t++)
	{
		const PrTileStats *ts = &s->tiles[t];

		fprintf(f, "tile %d %d %d %lld %lld %lld\n", ts->kind, ts->first ? 1 : 0, ts->compact ? 1 : 0,
				(long long) ts->n_rows, (long long) ts->n_long, (long long) ts->width);
		for (int c = 0; c < 2; c++)
		{
			fprintf(f, "shapes%d %lld", c, (long long) ts->n_shapes[c]);
			for (int64_t i = 0; i < ts->n_shapes[c]; i++)
				fprintf(f, " %lld:%lld", (long long) ts->shapes[c][i].size, (long long) ts->shapes[c][i].count);
			fprintf(f, "\nranks%d", c);
			for (int b = 0; b < PR_RANK_BUCKETS; b++)
				fprintf(f, " %lld", (long long) ts->rank_hist[c][b]);
			fprintf(f, "\n");
		}
	}
	fprintf(f, "end\n");
}

/* The next line of text into buf (NUL-terminated, at most len-1 bytes kept); NULL at the end. */
static const char *
stats_next_line(const char *p, char *buf, size_t len)
{
	const char *end;
	size_t		n;

	if (p == NULL || *p == '\0')
		return NULL;
	end = strchr(p, '\n');
	n = end ? (size_t) (end - p) : strlen(p);
	if (n >= len)
		n = len - 1;
	memcpy(buf, p, n);
	buf[n] = '\0';
	return end ? end + 1 : p + strlen(p);
}

/* Reads one layout block back (see pr_plan.h). */
PrStatus
pr_layout_stats_read(const char *text, const char *graph, const char *name, PrLayoutStats *out,
					 const PrAllocator *alloc, PrError *err)
{
	static char line[1 << 16];
	const char *p = text;
	char		g[128],
				nm[128];
	int			n_tiles = -1,
				used = 0;
	long long	merge = 0;
	const char *extra;

	memset(out, 0, sizeof(*out));
	while ((p = stats_next_line(p, line, sizeof(line))) != NULL)
		if (sscanf(line, "layout %127s %127s tiles %d merge %lld%n", g, nm, &n_tiles, &merge, &used) == 4 &&
			strcmp(g, graph) == 0 && strcmp(nm, name) == 0)
			break;
	if (p == NULL || n_tiles < 1 || n_tiles > PR_PLAN_MAX_TILES + 1)
		return pr_error_set(err, PR_ERR_INVALID, "layout statistics: no layout %s %s", graph, name);
	/* nothing may follow the merge count */
	extra = line + used;
	while (*extra == ' ' || *extra == '\t' || *extra == '\r')
		extra++;
	if (*extra != '\0')
		return pr_error_set(err, PR_ERR_INVALID, "layout statistics: unexpected text after the merge count in %s %s",
							graph, name);
	out->tiles = pr_alloc_array(alloc, (size_t) n_tiles, sizeof(PrTileStats));
	if (out->tiles == NULL)
		return pr_error_set(err, PR_ERR_NOMEM, "layout statistics: out of memory");
	memset(out->tiles, 0, (size_t) n_tiles * sizeof(PrTileStats));
	out->n_tiles = n_tiles;
	out->n_merge_slots = merge;
	for (int t = 0; t < n_tiles; t++)
	{
		PrTileStats *ts = &out->tiles[t];
		int			first,
					compact;
		long long	rows,
					longs,
					width;

		p = stats_next_line(p, line, sizeof(line));
		if (p == NULL || sscanf(line, "tile %d %d %d %lld %lld %lld", &ts->kind, &first, &compact, &rows,
								&longs, &width) != 6)
			goto bad;
		ts->first = first != 0;
		ts->compact = compact != 0;
		ts->n_rows = rows;
		ts->n_long = longs;
		ts->width = width;
		for (int c = 0; c < 2; c++)
		{
			long long	count;
			int			used = 0,
						cls;
			const char *q;

			p = stats_next_line(p, line, sizeof(line));
			if (p == NULL || sscanf(line, "shapes%d %lld%n", &cls, &count, &used) != 2 || cls != c || count < 0)
				goto bad;
			ts->shapes[c] = pr_alloc_array(alloc, (size_t) count + 1, sizeof(PrShapeCount));
			if (ts->shapes[c] == NULL)
				goto bad;
			ts->n_shapes[c] = count;
			q = line + used;
			for (long long i = 0; i < count; i++)
			{
				long long	size,
							num;
				int			adv = 0;

				if (sscanf(q, " %lld:%lld%n", &size, &num, &adv) != 2)
					goto bad;
				ts->shapes[c][i].size = size;
				ts->shapes[c][i].count = num;
				q += adv;
			}
			p = stats_next_line(p, line, sizeof(line));
			if (p == NULL || sscanf(line, "ranks%d%n", &cls, &used) != 1 || cls != c)
				goto bad;
			q = line + used;
			for (int b = 0; b < PR_RANK_BUCKETS; b++)
			{
				long long	v;
				int			adv = 0;

				if (sscanf(q, " %lld%n", &v, &adv) != 1)
					goto bad;
				ts->rank_hist[c][b] = v;
				q += adv;
			}
		}
	}
	return PR_OK;
bad:
	pr_layout_stats_free(out, alloc);
	return pr_error_set(err, PR_ERR_INVALID, "layout statistics: malformed block %s %s", graph, name);
}

/* Predicted seconds of one product over a composite layout. */
double
pr_model_predict_composite(const PrModel *model, const PrComposite *c)
{
	PrLayoutStats s;
	PrError		err;
	double		sec;

	if (pr_layout_stats_composite(c, &s, &pr_malloc_allocator, &err) != PR_OK)
		return -1.0;
	sec = pr_model_predict_stats(model, &s);
	pr_layout_stats_free(&s, &pr_malloc_allocator);
	return sec;
}

/* Predicted seconds of one product over a binned layout. */
double
pr_model_predict_binned(const PrModel *model, const PrBinned *b, const PrPlanCsr *csr)
{
	PrLayoutStats s;
	PrError		err;
	double		sec;

	if (pr_layout_stats_binned(b, csr, &s, &pr_malloc_allocator, &err) != PR_OK)
		return -1.0;
	sec = pr_model_predict_stats(model, &s);
	pr_layout_stats_free(&s, &pr_malloc_allocator);
	return sec;
}

/* Default candidates of the model's choice. */
void
pr_plan_choice_init(PrPlanChoice *choice, int64_t n)
{
	/* no 16: measured slower than 8 (and 12) at R-MAT 24 in every run, with and without compact
	 * partials, while the model rates it best (doc/RESULTS.md); planning it cost 4 candidates */
	static const int counts[5] = {0, 1, 2, 4, 8};

	memset(choice, 0, sizeof(*choice));
	choice->composite.tile_width = n;
	choice->composite.vec_threshold = 32;
	choice->composite.chunk = 4096;
	choice->composite.smem_width = 49152;
	choice->n_smem_counts = 5;
	memcpy(choice->smem_counts, counts, sizeof(counts));
	/* CSR-vector thresholds: 32, and 128 (measured 9-11% faster at R-MAT 24 and 22 with shared-memory
	 * tiles, slower on small graphs: doc/RESULTS.md); 8 was 13-35% slower everywhere */
	choice->n_thresholds = 2;
	choice->thresholds[0] = 32;
	choice->thresholds[1] = 128;
	choice->compact_mode = -1;
	choice->allow_binned = true;
	choice->binned_chunk = 4096;
}

/*
 * Takes the first candidate when there is only one or no model to compare with; with a model its
 * predicted time goes to *best_ms.
 */
static PrStatus
choose_first(const PrPlanCsr *csr, const PrModel *model, PrPlanChoice *choice,
			 const PrCompositeOptions *base, bool compact, double *best_ms,
			 const PrAllocator *alloc, PrError *err)
{
	PrComposite c;
	PrStatus	st;

	choice->composite = *base;
	choice->composite.n_smem_tiles = choice->smem_counts[0];
	choice->composite.vec_threshold = choice->thresholds[0];
	choice->composite.compact = compact;
	choice->composite.shapes_only = false;
	if (model != NULL)
	{
		PrCompositeOptions o = choice->composite;

		o.shapes_only = true;
		if ((st = pr_plan_composite(csr, &o, alloc, &c, err)) != PR_OK)
			return st;
		*best_ms = pr_model_predict_composite(model, &c) * 1e3;
		pr_plan_composite_free(&c, alloc);
	}
	return PR_OK;
}

/*
 * Keeps a tiled candidate of ms predicted milliseconds as the choice when it beats the best by
 * the margin (the best then becomes the runner-up), else as the runner-up when it is the fastest
 * of the others.
 */
static void
keep_tiled_candidate(PrPlanChoice *choice, const PrCompositeOptions *o, double ms,
					 double *best_ms)
{
	if (*best_ms < 0 || ms < *best_ms * (1.0 - PR_PLAN_CHOICE_MARGIN))
	{
		if (*best_ms >= 0)
		{
			choice->have_runner_up = true;
			choice->runner_up = choice->composite;
			choice->runner_up_ms = *best_ms;
		}
		*best_ms = ms;
		choice->composite = *o;
	}
	else if (!choice->have_runner_up || ms < choice->runner_up_ms)
	{
		choice->have_runner_up = true;
		choice->runner_up = *o;
		choice->runner_up_ms = ms;
	}
}

/*
 * Plans and rates every tiled candidate (shared-memory tile counts, CSR-vector thresholds,
 * compact partials or not), keeping the fastest; each one's time is appended to the log.
 */
static PrStatus
choose_tiled(const PrPlanCsr *csr, const PrModel *model, PrPlanChoice *choice,
			 const PrCompositeOptions *base, const bool *compact_values, int n_compact,
			 double *best_ms, char *log, size_t log_len, size_t *used, int *n_candidates,
			 const PrAllocator *alloc, PrError *err)
{
	int64_t    *col_degree;
	PrStatus	st;

	col_degree = malloc((size_t) (csr->n + 1) * sizeof(int64_t));
	if (col_degree == NULL)
		return pr_error_set(err, PR_ERR_NOMEM, "layout choice: out of memory");
	if ((st = pr_plan_column_degrees(csr, col_degree, err)) != PR_OK)
	{
		free(col_degree);
		return st;
	}
	for (int si = 0; si < choice->n_smem_counts; si++)
	{
		if (si > 0 && (int64_t) choice->smem_counts[si - 1] * base->smem_width >= csr->n)
			break;				/* more shared-memory tiles than columns */
		for (int ti = 0; ti < choice->n_thresholds; ti++)
			for (int ci = 0; ci < n_compact; ci++)
			{
				PrCompositeOptions o = *base;
				PrComposite c;
				double		ms;

				o.n_smem_tiles = choice->smem_counts[si];
				o.vec_threshold = choice->thresholds[ti];
				o.compact = compact_values[ci];
				o.shapes_only = true;
				if (n_compact == 2 && o.compact && o.n_smem_tiles == 0 && (o.tile_width <= 0 || o.tile_width >= csr->n))
					continue;	/* one tile: nothing to merge */
				st = pr_plan_composite_with_degrees(csr, col_degree, &o, alloc, &c, err);
				if (st != PR_OK)
				{
					free(col_degree);
					return st;
				}
				ms = pr_model_predict_composite(model, &c) * 1e3;
				pr_plan_composite_free(&c, alloc);
				if (*used + 56 < log_len)
					*used += (size_t) snprintf(log + *used, log_len - *used, "tiled(s=%d,v=%d%s)=%.3f ",
											   o.n_smem_tiles, o.vec_threshold, o.compact ? ",c" : "", ms);
				(*n_candidates)++;
				o.shapes_only = false;
				keep_tiled_candidate(choice, &o, ms, best_ms);
			}
	}
	free(col_degree);
	return PR_OK;
}

/*
 * Plans and rates the row-binned layout, which becomes the choice when it beats the best by the
 * margin; its time is appended to the log.
 */
static PrStatus
choose_binned(const PrPlanCsr *csr, const PrModel *model, PrPlanChoice *choice, double *best_ms,
			  char *log, size_t log_len, size_t used, int *n_candidates,
			  const PrAllocator *alloc, PrError *err)
{
	PrBinned	b;
	double		ms;
	PrStatus	st;

	if ((st = pr_plan_binned(csr, choice->binned_chunk, alloc, &b, err)) != PR_OK)
		return st;
	ms = pr_model_predict_binned(model, &b, csr) * 1e3;
	pr_plan_binned_free(&b, alloc);
	if (used + 24 < log_len)
		snprintf(log + used, log_len - used, "binned=%.3f", ms);
	(*n_candidates)++;
	if (ms >= 0 && (*best_ms < 0 || ms < *best_ms * (1.0 - PR_PLAN_CHOICE_MARGIN)))
	{
		*best_ms = ms;
		choice->binned = true;
	}
	return PR_OK;
}

/* Plans the candidates and keeps the one the model predicts fastest (see pr_plan.h). */
PrStatus
pr_plan_choose(const PrPlanCsr *csr, const PrModel *model, PrPlanChoice *choice, double *best_ms,
			   char *log, size_t log_len, int *n_candidates, const PrAllocator *alloc, PrError *err)
{
	PrCompositeOptions base = choice->composite;
	size_t		used = log_len > 0 ? strlen(log) : 0;
	int			n_compact = 1;
	bool		compact_values[2] = {false, true};
	PrStatus	st;

	*best_ms = -1;
	choice->binned = false;
	choice->have_runner_up = false;
	choice->runner_up_ms = -1;
	if (choice->compact_mode == 1)
		compact_values[0] = true;
	else if (choice->compact_mode < 0 && model != NULL && model_has(model, 'm'))
		n_compact = 2;
	if (choice->n_smem_counts < 1 || choice->n_thresholds < 1)
		return pr_error_set(err, PR_ERR_INVALID, "layout choice: no candidates");
	/* one candidate, or nothing to compare with: take the first */
	if ((choice->n_smem_counts == 1 && choice->n_thresholds == 1 && n_compact == 1 &&
		 !choice->allow_binned) || model == NULL)
		return choose_first(csr, model, choice, &base, compact_values[0], best_ms, alloc, err);
	st = choose_tiled(csr, model, choice, &base, compact_values, n_compact, best_ms, log, log_len,
					  &used, n_candidates, alloc, err);
	if (st != PR_OK)
		return st;
	if (choice->allow_binned)
		return choose_binned(csr, model, choice, best_ms, log, log_len, used, n_candidates, alloc,
							 err);
	return PR_OK;
}
