/* A tiny unit-test harness: CHECK() records failures with file:line and
 * goes on; RUN() runs one test function and prints its result;
 * test_summary() prints the totals and returns the exit status. */
#ifndef PTRR_TEST_H
#define PTRR_TEST_H

#include <inttypes.h>
#include <stdio.h>

static int test_failures;
static int test_case_failures;

#define CHECK(expr) do { \
	if (!(expr)) { \
		fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, \
			__LINE__, #expr); \
		test_failures++; \
	} \
} while (0)

#define CHECK_EQ_U64(got, want) do { \
	uint64_t got_ = (got), want_ = (want); \
	if (got_ != want_) { \
		fprintf(stderr, "%s:%d: %s is 0x%" PRIx64 ", expected " \
			"0x%" PRIx64 " (%s)\n", __FILE__, __LINE__, #got, \
			got_, want_, #want); \
		test_failures++; \
	} \
} while (0)

#define RUN(fn) do { \
	int before_ = test_failures; \
	fn(); \
	printf("%s: %s\n", test_failures == before_ ? "PASS" : "FAIL", #fn); \
	if (test_failures != before_) \
		test_case_failures++; \
} while (0)

static inline int test_summary(void)
{
	printf("%s\n", test_case_failures ? "FAILED" : "all passed");
	return test_case_failures ? 1 : 0;
}

#endif
