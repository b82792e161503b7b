/* For the LD_PRELOAD objects of the tests (fake_perf_preload.c,
 * fault_io_preload.c), which act only in ptrr itself: a wrapper such as
 * timeout, a shell or gdb passes them on untouched. */
#ifndef PTRR_TESTS_PRELOAD_PTRR_H
#define PTRR_TESTS_PRELOAD_PTRR_H

#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

/* True if this process's program is named ptrr. */
static inline bool preload_in_ptrr(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const char *base;

	exe[n > 0 ? n : 0] = 0;
	base = strrchr(exe, '/');
	return base && !strcmp(base, "/ptrr");
}

#endif
