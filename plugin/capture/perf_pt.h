/* plugin/capture — the hardware PT backend: one perf intel_pt event per
 * thread, its AUX area, and reading the trace out of it.
 *
 * Set-up, as the kernel's ABI asks (include/uapi/linux/perf_event.h):
 *  - perf_event_open(attr, pid = the thread, cpu = -1): the event follows
 *    the thread from CPU to CPU and is switched in and out with it, which
 *    on Linux is the CR3 filter; attr.type from the PMU's sysfs "type";
 *    exclude_kernel = exclude_hv = 1 (the CPL filter: user code only);
 *    disabled = 1, enabled once the thread is about to run the code to
 *    record;
 *  - attr.config from the PMU's format files: pt = 1 and branch = 1
 *    (BranchEn), no timing packets (tsc, mtc, cyc off), noretcomp = 1
 *    only if return compression is turned off, psb_period for a PSB every
 *    4 KiB if caps/psb_cyc and caps/psb_periods allow it;
 *  - mmap of the control page and 2^n data pages, then aux_offset and
 *    aux_size in the control page and mmap of the AUX area (a power of two
 *    pages): PROT_READ for snapshot (overwrite) mode, PROT_READ|PROT_WRITE
 *    for full-trace mode (see aux.h for how each is read);
 *  - PERF_EVENT_IOC_SET_FILTER with the IP filters.
 * Every system call goes through a struct cap_perf_ops, so that tests can
 * put a fake PMU and a fake AUX ring in place of the kernel.
 *
 * Failures carry the cause and the fix: no intel_pt PMU, perf_event_paranoid
 * and CAP_PERFMON, the locked-memory allowance for the AUX area, EBUSY when
 * another Intel PT user holds the CPU.
 */
#ifndef PTRR_CAP_PERF_PT_H
#define PTRR_CAP_PERF_PT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "capture/aux.h"
#include "capture/pmu.h"
#include "capture/procmaps.h"
#include "capture/ring.h"

struct perf_event_attr;

/* The system calls of the backend.  Each returns what the system call
 * does (-1 or MAP_FAILED with errno on failure); @ctx is ops->ctx.
 * mmap maps MAP_SHARED. */
struct cap_perf_ops {
	int (*open)(void *ctx, struct perf_event_attr *attr, pid_t pid,
		    int cpu, int group_fd, unsigned long flags);
	void *(*mmap)(void *ctx, size_t len, int prot, int fd, off_t offset);
	int (*munmap)(void *ctx, void *addr, size_t len);
	int (*ioctl)(void *ctx, int fd, unsigned long request, void *arg);
	int (*poll)(void *ctx, int fd, int timeout_ms);	/* > 0: readable */
	int (*close)(void *ctx, int fd);
	void *ctx;
};

/* The kernel's. */
extern const struct cap_perf_ops cap_perf_kernel_ops;

/* ------------------------------------------------------------------ */
/* IP filters                                                         */
/* ------------------------------------------------------------------ */

#define CAP_PERF_MAX_FILTERS 4

/* A traced range: bytes [start, start + size) of @file, start being an
 * offset in the file (the kernel finds where the file is mapped). */
struct cap_perf_filter {
	uint64_t start, size;
	char file[PATH_MAX];	/* "" until known (a run-time address) */
	bool in_file;		/* start is a file offset, not an address */
};

/* Parses --filter=START[/SIZE][@FILE].  With @FILE, START is an offset in
 * FILE, as perf and the kernel take it; without, START is an address in
 * the running program (cap_perf_filter_resolve finds the file).  A
 * missing SIZE is left 0, which the kernel refuses for a "filter" range. */
int cap_perf_parse_filter(const char *spec, struct cap_perf_filter *f);

/* Makes the run-time address of @f an offset in the file mapped there,
 * from the maps of the process. */
int cap_perf_filter_resolve(struct cap_perf_filter *f,
			    const struct cap_map *maps, size_t nmaps);

/* Writes the kernel's filter string for @f[0 .. @n) into @buf:
 * "filter 0xSTART/0xSIZE@FILE", several joined by ",". */
int cap_perf_filter_string(const struct cap_perf_filter *f, size_t n,
			   char *buf, size_t size);

/* ------------------------------------------------------------------ */
/* Why a system call failed                                           */
/* ------------------------------------------------------------------ */

/* What decides whether perf events and their buffers are allowed. */
struct cap_perf_env {
	int paranoid;		/* kernel.perf_event_paranoid (INT_MIN: ?) */
	bool perfmon;		/* CAP_PERFMON (or CAP_SYS_ADMIN) */
	bool ipc_lock;		/* CAP_IPC_LOCK: no locked-memory limit */
	uint64_t memlock;	/* RLIMIT_MEMLOCK in bytes, UINT64_MAX none */
	uint64_t mlock_kb;	/* kernel.perf_event_mlock_kb, per CPU */
	unsigned ncpus;
};

/* Reads this process's. */
void cap_perf_env_read(struct cap_perf_env *env);

/* The failure of perf_event_open with @errnum for an intel_pt event of
 * @type and @config, explained: records the message, returns the code. */
int cap_perf_open_error(int errnum, const struct cap_perf_env *env,
			uint32_t type, uint64_t config);

/* The failure of mmap with @errnum for an AUX area of @aux_size bytes. */
int cap_perf_mmap_error(int errnum, const struct cap_perf_env *env,
			uint64_t aux_size);

/* The failure of PERF_EVENT_IOC_SET_FILTER with @errnum for @filter. */
int cap_perf_filter_error(int errnum, const char *filter);

/* ------------------------------------------------------------------ */
/* The event                                                          */
/* ------------------------------------------------------------------ */

enum cap_perf_mode { CAP_PERF_SNAPSHOT, CAP_PERF_FULL };

struct cap_perf_options {
	enum cap_perf_mode mode;
	uint64_t aux_size;	/* rounded up to 2^n pages, 2 pages or more */
	uint64_t full_cap;	/* full: keep at most this much (0: all) */
	bool ret_compression;
	bool tsc;		/* TSC packets (the format's tsc bit) */
	uint32_t psb_period;	/* bytes between PSBs wanted (a power of
				 * two); 0: CAP_PSB_PERIOD_DEFAULT */
	size_t nfilters;
	struct cap_perf_filter filters[CAP_PERF_MAX_FILTERS];
	const char *sysfs_root;	/* NULL: $PTRR_SYSFS_ROOT or /sys */
};

/* Snapshot mode, 4 MiB, return compression on, no filters. */
void cap_perf_options_default(struct cap_perf_options *o);

/* Composes attr.config (and config1/2) for @o from @pmu's format and
 * caps files; @psb_bytes gets the PSB period the CPU will use. */
int cap_perf_config(const struct cap_pmu *pmu,
		    const struct cap_perf_options *o,
		    struct cap_pmu_config *cfg, uint32_t *psb_bytes);

struct cap_perf {
	const struct cap_perf_ops *ops;
	struct cap_perf_options opts;
	struct cap_pmu pmu;
	struct cap_pmu_config config;
	uint32_t psb_bytes;	/* bytes between PSBs */
	int fd;
	void *base;		/* control page and data ring */
	size_t base_len;
	void *area;		/* the AUX area */
	size_t area_len;
	uint8_t *snap;		/* snapshot mode: area_len bytes to copy to */
	bool enabled;
	struct cap_aux aux;
	uint64_t reads;		/* cap_perf_read calls */
	uint64_t wrapped;	/* snapshot reads that found the area wrapped */
	uint64_t truncations;	/* full: times the trace was cut */
	uint64_t first_cut;	/* ... the stream offset of the first cut */
	uint64_t dropped;	/* full: bytes dropped past full_cap */
};

/* Opens and maps the event for thread @tid (disabled) with options @o,
 * through @ops (NULL: the kernel's). */
int cap_perf_open(struct cap_perf *p, pid_t tid,
		  const struct cap_perf_options *o,
		  const struct cap_perf_ops *ops);
void cap_perf_close(struct cap_perf *p);

/* PERF_EVENT_IOC_ENABLE / _DISABLE. */
int cap_perf_enable(struct cap_perf *p);
int cap_perf_disable(struct cap_perf *p);

/* Reads the trace, with the event disabled around the read (enabled
 * again after if it was and @resume): snapshot mode replaces @out's
 * bytes by what the AUX area holds; full mode appends what is new.  @rd
 * (may be NULL) says what was found. */
int cap_perf_read(struct cap_perf *p, struct cap_ring *out, bool resume,
		  struct cap_aux_read *rd);

/* Full mode, while the thread runs: appends what is new to @out without
 * disabling (the head/tail protocol makes that safe), and enables the
 * event again if the kernel stopped it on a full area. */
int cap_perf_drain(struct cap_perf *p, struct cap_ring *out,
		   struct cap_aux_read *rd);

#endif
