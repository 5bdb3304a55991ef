/*
 * bench_util.h — what the benchmarks (bench/cpu, bench/gpu, bench/multi) share: command-line
 * options with a usage error for a bad value, the minimum and median of repeated timings, the L1
 * distance of two score vectors, iteration options of the driver, and reading an edge list (or
 * generating one) or a whole text file.  Wall-clock times come from the core's pr_clock_seconds (pr_common.h).
 * Pure C11; usable from CUDA sources (the declarations are extern "C").
 */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph_gen.h"
#include "pr_driver.h"

#ifdef __cplusplus
extern "C"
{
#endif

/*
 * Options.  Each bench_option_* function looks at argv[*i]: when it is name and a value follows,
 * it stores the value, advances *i past it and returns true; otherwise it returns false and the
 * caller tries the next option.  A value that is not a number of the wanted kind ends the
 * program with exit status 2 after a message naming the option.
 */
bool		bench_option_int(int argc, char **argv, int *i, const char *name, int *value);
bool		bench_option_uint64(int argc, char **argv, int *i, const char *name, uint64_t *value);
bool		bench_option_double(int argc, char **argv, int *i, const char *name, double *value);
bool		bench_option_string(int argc, char **argv, int *i, const char *name, const char **value);

/* A comma-separated list of integers ("1,2,4"): at most max of them into values, their count into *count. */
bool		bench_option_int_list(int argc, char **argv, int *i, const char *name, int *values, int max,
								  int *count);

/* A comma-separated list of numbers ("1e-6,1e-12"): at most max of them into values, their count into *count. */
bool		bench_option_double_list(int argc, char **argv, int *i, const char *name, double *values,
									 int max, int *count);

/* Whether argv[i] is the flag name (an option without a value). */
bool		bench_flag(char **argv, int i, const char *name);

/* Smallest of n values (+infinity when n is 0). */
double		bench_min(const double *v, size_t n);

/* Median of n values, the upper one of an even count (sorts v in place; 0 when n is 0). */
double		bench_median(double *v, size_t n);

/* Sum of |a[i] - b[i]|. */
double		bench_l1(const double *a, const double *b, int64_t n);

/* Iteration options: tolerance in norm, at most max_iterations, the residual every check_every. */
PrIterOptions bench_iter_options(double tolerance, PrNorm norm, int max_iterations, int check_every);

/*
 * Reads a "src dst" edge list (whitespace-separated; lines starting with '#' and lines without
 * two numbers are skipped; gzip-compressed when the name ends in .gz, through gzip -dc) into
 * malloc()ed arrays; returns the edge count, 0 when unreadable or empty.
 */
size_t		bench_read_edges(const char *path, int64_t **src, int64_t **dst);

/*
 * A benchmark's edges: the edge list file (bench_read_edges) when file is not NULL, else the graph
 * spec generated and deduplicated on threads (gen_unique_edges); what they are into label (the
 * file's name, or gen_describe).  Returns the edge count, 0 when there are none.
 */
size_t		bench_edges(const char *file, const GenSpec *spec, int threads, int64_t **src,
						int64_t **dst, char *label, size_t label_size);

/* A whole file as a malloc()ed NUL-terminated string, or NULL when it cannot be read. */
char	   *bench_read_file(const char *path);

#ifdef __cplusplus
}
#endif

#endif							/* BENCH_UTIL_H */
