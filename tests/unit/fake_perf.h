/* A fake kernel for the perf backend's tests: the cap_perf_ops of an
 * intel_pt event whose "CPU" is the test.
 *
 * It keeps the kernel's side of the ABI (include/uapi/linux/perf_event.h,
 * kernel/events/ring_buffer.c):
 *  - the first mmap is the control page plus 2^n data pages, the second
 *    the AUX area at pc->aux_offset, pc->aux_size bytes, a power of two
 *    pages, zeroed; mapped without PROT_WRITE it is in overwrite
 *    (snapshot) mode;
 *  - overwrite mode: trace wraps around the area and aux_head is the
 *    offset where the next byte goes; aux_tail is ignored;
 *  - full mode: aux_head counts every byte, the producer never passes
 *    aux_tail; when the area is full it stops, writes a PERF_RECORD_AUX
 *    with PERF_AUX_FLAG_TRUNCATED and the event stays disabled (bytes
 *    the CPU produces are lost) until PERF_EVENT_IOC_ENABLE;
 *  - every stretch of trace ends with a PERF_RECORD_AUX in the data ring
 *    when the event is disabled (OVERWRITE flag in overwrite mode);
 *  - pointers are published with release stores, the consumer's read
 *    with acquire loads.
 */
#ifndef PTRR_TEST_FAKE_PERF_H
#define PTRR_TEST_FAKE_PERF_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "capture/perf_pt.h"

#define FAKE_PERF_FD 42
#define FAKE_PT_TYPE 8

struct fake_perf {
	/* Set by the test. */
	uint32_t type;		/* the intel_pt type the fake knows */
	int open_errno;		/* perf_event_open fails with this */
	int aux_mmap_errno;	/* the AUX mmap fails with this */
	int filter_errno;	/* PERF_EVENT_IOC_SET_FILTER fails */
	/* What ptrr asked for. */
	struct perf_event_attr attr;
	pid_t pid;
	int cpu, group_fd;
	unsigned long flags;
	int base_prot, aux_prot;
	char filter[8192];
	int opens, closes, enables, disables, maps, unmaps;
	/* The event. */
	bool open, enabled;
	bool stopped;		/* full: the area filled up */
	struct perf_event_mmap_page *pc;
	size_t base_len;
	uint8_t *aux;
	size_t aux_len;
	bool overwrite;
	uint64_t head;		/* bytes ever written to the area */
	uint64_t chunk;		/* head when the current stretch began */
	uint64_t data_head;	/* the data ring's */
	uint64_t produced;	/* bytes the CPU produced */
	uint64_t dropped;	/* ... that were lost */
};

/* A fake with PMU type @type, and its ops. */
void fake_perf_init(struct fake_perf *f, uint32_t type);
void fake_perf_ops(struct fake_perf *f, struct cap_perf_ops *ops);

/* The CPU writes @n bytes of trace while the event is enabled. */
void fake_perf_write(struct fake_perf *f, const uint8_t *bytes, size_t n);

/* Opens @p with @o on a fresh fake @f (type FAKE_PT_TYPE, ops into
 * @ops) and enables it; returns the first failure. */
int fake_perf_start(struct fake_perf *f, struct cap_perf_ops *ops,
		    struct cap_perf *p, const struct cap_perf_options *o);

/* Closes @p; true if the fake got every fd and mapping back. */
bool fake_perf_stop(struct fake_perf *f, struct cap_perf *p);

/* The fake sysfs: a new temporary directory (its path into @root) with
 * the tree of a Skylake-like intel_pt PMU of type FAKE_PT_TYPE: pt,
 * branch, tsc, noretcomp, psb_period, mtc and cyc formats; psb_cyc,
 * psb_periods 3f, IP filtering with 2 ranges. */
void fake_pmu_make(char *root, size_t size);

/* Writes @text to, or removes, file @rel of the PMU directory. */
void fake_pmu_file(const char *root, const char *rel, const char *text);
void fake_pmu_remove(const char *root, const char *rel);

/* Removes the whole tree. */
void fake_pmu_destroy(const char *root);

/* Options for the tree at @root: @mode, an AUX area of @aux bytes. */
struct cap_perf_options fake_options(const char *root,
				     enum cap_perf_mode mode, uint64_t aux);

#endif
