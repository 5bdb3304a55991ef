/*
 * test_harness.h — the one harness of the C and CUDA unit tests: counters of passed and failed
 * checks, functions that record a check (printing a line for each failure), per-case CHECK
 * macros for tests organised as cases, and the summary every test main() ends with: exactly
 * "N passed, N failed" as the last line, exit status 0 when nothing failed, else 1.
 * Pure C11; usable from C++ / CUDA sources (the declarations are extern "C").
 */
#ifndef TEST_HARNESS_H
#define TEST_HARNESS_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C"
{
#endif

#if defined(__GNUC__)
#define TEST_PRINTF_LIKE(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define TEST_PRINTF_LIKE(fmt, args)
#endif

/* Counts one check, passed when ok, without printing anything. */
void		test_count(bool ok);

/*
 * Counts one check; when ok is false prints the printf-style line (a newline is added) on
 * stdout.  Returns ok.
 */
bool		test_record(bool ok, const char *fmt, ...) TEST_PRINTF_LIKE(2, 3);

/* Like test_record, the line being "FAIL: " followed by what the format says. */
bool		test_check(bool ok, const char *fmt, ...) TEST_PRINTF_LIKE(2, 3);

/*
 * Prints "N passed, N failed" on stdout (the last line of every test program) and returns the
 * exit status for main(): 0 when nothing failed, else 1.
 */
int			test_summary(void);

/*
 * Tests organised as cases (test/core): a case is a void function; CHECK / CHECKF inside it
 * record failed assertions (file, line and the condition on stderr) and the case passes when
 * none failed.  test_run_case runs one case, prints "ok   name (T s)" or
 * "FAIL name (N checks failed)" and counts the case as one passed or failed check.
 */
void		test_run_case(const char *name, void (*fn) (void));

/* Failed assertions of the running case; what CHECK and CHECKF call. */
void		test_case_failed(const char *file, int line, const char *cond);
void		test_case_failed_detail(const char *file, int line, const char *cond, const char *fmt, ...)
			TEST_PRINTF_LIKE(4, 5);

/* Records a failed assertion of the running case unless cond holds. */
#define CHECK(cond) \
	do { \
		if (!(cond)) \
			test_case_failed(__FILE__, __LINE__, #cond); \
	} while (0)

/* Like CHECK, with a printf-style explanation. */
#define CHECKF(cond, ...) \
	do { \
		if (!(cond)) \
			test_case_failed_detail(__FILE__, __LINE__, #cond, __VA_ARGS__); \
	} while (0)

#ifdef __cplusplus
}
#endif

#endif							/* TEST_HARNESS_H */
