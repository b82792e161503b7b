/* For the LD_PRELOAD objects of the tests (fake_perf_preload.c,
 * fault_io_preload.c), which act only in ptrr itself (and in
 * tests/unit/test-source, which records as ptrr does): a wrapper such as
 * timeout, a shell or gdb passes them on untouched. */
#ifndef PTRR_TESTS_PRELOAD_PTRR_H
#define PTRR_TESTS_PRELOAD_PTRR_H

#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

/* True if this process's program is named ptrr or test-source. */
static inline bool preload_in_ptrr(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const char *base;

	exe[n > 0 ? n : 0] = 0;
	base = strrchr(exe, '/');
	return base && (!strcmp(base, "/ptrr") ||
			!strcmp(base, "/test-source"));
}

#endif
