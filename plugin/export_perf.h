/* `ptrr export --perf=FILE` and `ptrr import --perf=FILE`: ptrr
 * recordings as perf.data files and back (plugin/export_perf.c,
 * plugin/import_perf.c; the format in plugin/perf_data.h). */
#ifndef PTRR_EXPORT_PERF_H
#define PTRR_EXPORT_PERF_H

struct hist_bundle;

/* The attr.type of the intel_pt event in an exported perf.data: any
 * number does, as long as PERF_RECORD_AUXTRACE_INFO names the same (8
 * is what the fake PMU of the tests, and many kernels, use). */
#define PERF_EXPORT_PMU_TYPE 8

/* Writes loaded bundle @b as perf.data @file (and the side files of its
 * anonymous code, @file.vdso and @file.code-ADDR), atomically: on failure
 * nothing is left. */
int export_perf(const struct hist_bundle *b, const char *file);

#endif
