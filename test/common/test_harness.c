/*
 * test_harness.c — counters, failure lines and the summary of the unit tests; see test_harness.h.
 */
#define _POSIX_C_SOURCE 200809L

#include "test_harness.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

static int	checks_passed = 0;
static int	checks_failed = 0;

/* Failed assertions of the case test_run_case is running. */
static int	case_failures = 0;

/* Counts one check. */
void
test_count(bool ok)
{
	if (ok)
		checks_passed++;
	else
		checks_failed++;
}

/* Counts one check and prints the formatted line when it failed. */
bool
test_record(bool ok, const char *fmt, ...)
{
	test_count(ok);
	if (!ok)
	{
		va_list		args;

		va_start(args, fmt);
		vprintf(fmt, args);
		va_end(args);
		putchar('\n');
	}
	return ok;
}

/* Counts one check and prints "FAIL: what" when it failed. */
bool
test_check(bool ok, const char *fmt, ...)
{
	test_count(ok);
	if (!ok)
	{
		va_list		args;

		fputs("FAIL: ", stdout);
		va_start(args, fmt);
		vprintf(fmt, args);
		va_end(args);
		putchar('\n');
	}
	return ok;
}

/* Prints the summary line and returns main()'s exit status. */
int
test_summary(void)
{
	printf("%d passed, %d failed\n", checks_passed, checks_failed);
	fflush(stdout);
	return checks_failed == 0 ? 0 : 1;
}

/* Wall-clock seconds (monotonic). */
static double
seconds_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

/* Runs one case and counts it as one check. */
void
test_run_case(const char *name, void (*fn) (void))
{
	double		t0 = seconds_now();

	case_failures = 0;
	fn();
	if (case_failures == 0)
	{
		test_count(true);
		printf("ok   %s (%.2f s)\n", name, seconds_now() - t0);
	}
	else
	{
		test_count(false);
		printf("FAIL %s (%d checks failed)\n", name, case_failures);
	}
	fflush(stdout);
}

/* A failed CHECK: file, line and condition on stderr. */
void
test_case_failed(const char *file, int line, const char *cond)
{
	fprintf(stderr, "  %s:%d: check failed: %s\n", file, line, cond);
	case_failures++;
}

/* A failed CHECKF: as a failed CHECK, followed by the explanation. */
void
test_case_failed_detail(const char *file, int line, const char *cond, const char *fmt, ...)
{
	va_list		args;

	fprintf(stderr, "  %s:%d: check failed: %s: ", file, line, cond);
	va_start(args, fmt);
	vfprintf(stderr, fmt, args);
	va_end(args);
	fprintf(stderr, "\n");
	case_failures++;
}
