/* bench/ — the description of a generated benchmark trace.
 *
 * bench/gen-trace writes a raw Intel PT file (NAME.pt) and, next to it, a
 * small text file (NAME.info) saying what the trace needs in order to be
 * decoded: the binary, where its executable PT_LOAD segments are mapped
 * (the arguments of libipt's pt_iscache_add_file and of ptrr's
 * hist_image_add_file), the CPU identity, and how many instructions it
 * holds.  The readers (bench-history, verify-trace) share this module.
 */
#ifndef PTRR_BENCH_TRACE_INFO_H
#define PTRR_BENCH_TRACE_INFO_H

#include <intel-pt.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#define BENCH_MAX_SECTIONS 8

/* One executable segment of the binary: file range and load address. */
struct bench_section {
	uint64_t offset;	/* file offset (p_offset) */
	uint64_t size;		/* bytes (p_filesz) */
	uint64_t vaddr;		/* load address (bias + p_vaddr) */
};

struct bench_trace {
	char binary[PATH_MAX];	/* the ELF file whose code was walked */
	char trace[PATH_MAX];	/* the .pt file (resolved by the reader) */
	uint64_t bias;		/* load bias added to p_vaddr (0 if ET_EXEC) */
	struct bench_section sect[BENCH_MAX_SECTIONS];
	size_t nsect;
	uint64_t insns;		/* instructions the generator walked */
	uint64_t seed;
	uint32_t psb_period;	/* bytes of trace between PSBs */
	struct pt_cpu cpu;	/* vendor pcv_unknown: libipt applies no errata */
};

/* Writes @bt to @path; @trace_name is the .pt file's name, stored relative
 * to the info file's directory.  Returns 0, or -1 after printing why. */
int bench_trace_write(const char *path, const struct bench_trace *bt,
		      const char *trace_name);

/* Reads @path into @bt, resolving the trace file against @path's
 * directory.  Returns 0, or -1 after printing why. */
int bench_trace_read(const char *path, struct bench_trace *bt);

/* Maps the trace file read-only; sets @size.  NULL after printing why. */
uint8_t *bench_trace_map(const struct bench_trace *bt, size_t *size);
void bench_trace_unmap(uint8_t *trace, size_t size);

/* A libipt image with @bt's sections, added through @iscache.  NULL after
 * printing why.  Free with pt_image_free(). */
struct pt_image *bench_trace_pt_image(const struct bench_trace *bt,
				      struct pt_image_section_cache *iscache);

/* A decoder configuration for @bt's trace bytes [@begin, @begin+@size),
 * with the errata of its CPU. */
void bench_trace_pt_config(const struct bench_trace *bt, uint8_t *begin,
			   size_t size, struct pt_config *config);

/* Seconds on the monotonic clock. */
double bench_now(void);

/* Prints "@what: @why" and exits with status 2: the bench tools have no
 * partial results worth keeping. */
void bench_die(const char *what, const char *why)
	__attribute__((noreturn));

#endif
