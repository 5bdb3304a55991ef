/*
 * bench_util.c — options, timing statistics and input files of the benchmarks; see bench_util.h.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench_util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Ends the program: the option's value is not what it needs. */
static void
bad_value(const char *program, const char *name, const char *value, const char *kind)
{
	fprintf(stderr, "%s: %s needs %s, not \"%s\"\n", program, name, kind, value);
	exit(2);
}

/* The value after option name at argv[*i], or NULL when argv[*i] is another option. */
static const char *
option_value(int argc, char **argv, int *i, const char *name)
{
	if (strcmp(argv[*i], name) != 0 || *i + 1 >= argc)
		return NULL;
	*i += 1;
	return argv[*i];
}

/* Parses an int at text, the number ending where *end says; false when there is none or it overflows. */
static bool
parse_int(const char *text, char **end, int *value)
{
	long		v;

	errno = 0;
	v = strtol(text, end, 10);
	if (*end == text || errno != 0 || v < -2147483647L - 1 || v > 2147483647L)
		return false;
	*value = (int) v;
	return true;
}

/* An int option; see bench_util.h. */
bool
bench_option_int(int argc, char **argv, int *i, const char *name, int *value)
{
	const char *text = option_value(argc, argv, i, name);
	char	   *end;

	if (text == NULL)
		return false;
	if (!parse_int(text, &end, value) || *end != '\0')
		bad_value(argv[0], name, text, "an integer");
	return true;
}

/* Parses a double at text like parse_int. */
static bool
parse_double(const char *text, char **end, double *value)
{
	errno = 0;
	*value = strtod(text, end);
	return *end != text && errno == 0;
}

/*
 * A comma-separated list after option name: at most max items, each parsed by parse_item into
 * item i of values (int or double, by the caller's parse_item), their count into *count.
 */
static bool
option_list(int argc, char **argv, int *i, const char *name, const char *what, int max, int *count,
			bool (*parse_item) (const char *text, char **end, void *values, int index),
			void *values)
{
	const char *text = option_value(argc, argv, i, name);
	const char *p = text;
	char	   *end;
	char		kind[80];

	if (text == NULL)
		return false;
	snprintf(kind, sizeof(kind), "a comma-separated list of at most %d %s", max, what);
	*count = 0;
	for (;;)
	{
		if (*count == max || !parse_item(p, &end, values, *count) || (*end != ',' && *end != '\0'))
			bad_value(argv[0], name, text, kind);
		*count += 1;
		if (*end == '\0')
			return true;
		p = end + 1;
	}
}

/* option_list's item parsers. */
static bool
int_item(const char *text, char **end, void *values, int index)
{
	return parse_int(text, end, (int *) values + index);
}

static bool
double_item(const char *text, char **end, void *values, int index)
{
	return parse_double(text, end, (double *) values + index);
}

/* A list of ints; see bench_util.h. */
bool
bench_option_int_list(int argc, char **argv, int *i, const char *name, int *values, int max, int *count)
{
	return option_list(argc, argv, i, name, "integers", max, count, int_item, values);
}

/* An unsigned 64-bit option; see bench_util.h. */
bool
bench_option_uint64(int argc, char **argv, int *i, const char *name, uint64_t *value)
{
	const char *text = option_value(argc, argv, i, name);
	char	   *end;
	unsigned long long v;

	if (text == NULL)
		return false;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (end == text || *end != '\0' || errno != 0 || text[0] == '-')
		bad_value(argv[0], name, text, "an unsigned integer");
	*value = (uint64_t) v;
	return true;
}

/* A floating-point option; see bench_util.h. */
bool
bench_option_double(int argc, char **argv, int *i, const char *name, double *value)
{
	const char *text = option_value(argc, argv, i, name);
	char	   *end;
	double		v;

	if (text == NULL)
		return false;
	errno = 0;
	v = strtod(text, &end);
	if (end == text || *end != '\0' || errno != 0)
		bad_value(argv[0], name, text, "a number");
	*value = v;
	return true;
}

/* A comma-separated list of numbers; see bench_util.h. */
bool
bench_option_double_list(int argc, char **argv, int *i, const char *name, double *values, int max,
						 int *count)
{
	return option_list(argc, argv, i, name, "numbers", max, count, double_item, values);
}

/* A string option; see bench_util.h. */
bool
bench_option_string(int argc, char **argv, int *i, const char *name, const char **value)
{
	const char *text = option_value(argc, argv, i, name);

	if (text == NULL)
		return false;
	*value = text;
	return true;
}

/* Whether argv[i] is the flag name. */
bool
bench_flag(char **argv, int i, const char *name)
{
	return strcmp(argv[i], name) == 0;
}

/* Smallest value. */
double
bench_min(const double *v, size_t n)
{
	double		m = INFINITY;

	for (size_t i = 0; i < n; i++)
		if (v[i] < m)
			m = v[i];
	return m;
}

/* qsort comparator of doubles, ascending. */
static int
compare_double(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return (x > y) - (x < y);
}

/* Median (upper of an even count), sorting v. */
double
bench_median(double *v, size_t n)
{
	if (n == 0)
		return 0.0;
	qsort(v, n, sizeof(double), compare_double);
	return v[n / 2];
}

/* L1 distance. */
double
bench_l1(const double *a, const double *b, int64_t n)
{
	double		s = 0.0;

	for (int64_t i = 0; i < n; i++)
		s += fabs(a[i] - b[i]);
	return s;
}

/* Iteration options of the driver. */
PrIterOptions
bench_iter_options(double tolerance, PrNorm norm, int max_iterations, int check_every)
{
	PrIterOptions o;

	memset(&o, 0, sizeof(o));
	o.tolerance = tolerance;
	o.norm = norm;
	o.max_iterations = max_iterations;
	o.check_every = check_every;
	return o;
}

/* A benchmark's edges, read or generated; see bench_util.h. */
size_t
bench_edges(const char *file, const GenSpec *spec, int threads, int64_t **src, int64_t **dst,
			char *label, size_t label_size)
{
	if (file != NULL)
	{
		const char *slash = strrchr(file, '/');

		snprintf(label, label_size, "%s", slash != NULL ? slash + 1 : file);
		return bench_read_edges(file, src, dst);
	}
	gen_describe(spec, label, label_size);
	return gen_unique_edges(spec, threads, src, dst);
}

/* Reads an edge list, plain or through gzip -dc. */
size_t
bench_read_edges(const char *path, int64_t **src, int64_t **dst)
{
	char		cmd[1024];
	size_t		len = strlen(path),
				cap = 1 << 20,
				m = 0;
	bool		gz = len > 3 && strcmp(path + len - 3, ".gz") == 0;
	FILE	   *f;
	char		line[512];

	*src = NULL;
	*dst = NULL;
	snprintf(cmd, sizeof(cmd), "gzip -dc '%s'", path);
	f = gz ? popen(cmd, "r") : fopen(path, "r");
	if (f == NULL)
		return 0;
	*src = malloc(cap * sizeof(int64_t));
	*dst = malloc(cap * sizeof(int64_t));
	while (*src != NULL && *dst != NULL && fgets(line, sizeof(line), f))
	{
		long long	a,
					b;

		if (line[0] == '#' || sscanf(line, "%lld %lld", &a, &b) != 2)
			continue;
		if (m == cap)
		{
			cap *= 2;
			*src = realloc(*src, cap * sizeof(int64_t));
			*dst = realloc(*dst, cap * sizeof(int64_t));
			if (*src == NULL || *dst == NULL)
				break;
		}
		(*src)[m] = a;
		(*dst)[m] = b;
		m++;
	}
	if (gz)
		pclose(f);
	else
		fclose(f);
	if (*src == NULL || *dst == NULL)
	{
		fprintf(stderr, "out of memory reading %s\n", path);
		exit(1);
	}
	return m;
}

/* Reads a whole file. */
char *
bench_read_file(const char *path)
{
	FILE	   *f = path != NULL ? fopen(path, "r") : NULL;
	char	   *s = NULL;
	size_t		len = 0,
				cap = 0,
				got;

	if (f == NULL)
		return NULL;
	do
	{
		if (cap - len < 4096)
		{
			char	   *t = realloc(s, cap = cap * 2 + 8192);

			if (t == NULL)
			{
				free(s);
				fclose(f);
				return NULL;
			}
			s = t;
		}
		got = fread(s + len, 1, cap - len - 1, f);
		len += got;
	} while (got > 0);
	fclose(f);
	s[len] = '\0';
	return s;
}
