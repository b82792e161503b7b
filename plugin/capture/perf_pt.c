/* The perf intel_pt event: configuration, set-up and reading; see
 * perf_pt.h.  IP filters are in perf_filter.c, failure messages in
 * perf_err.c, the AUX protocol in aux.c. */
#include <config.h>

#include "capture/perf_pt.h"
#include "capture/emit.h"
#include "error.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Data ring pages after the control page: it only carries a few records
 * (PERF_RECORD_AUX, ITRACE_START, LOST) between reads. */
#define DATA_PAGES 4

/* ------------------------------------------------------------------ */
/* The kernel's system calls                                          */
/* ------------------------------------------------------------------ */

/* perf_event_open(2); glibc has no wrapper. */
static int k_open(void *ctx, struct perf_event_attr *attr, pid_t pid,
		  int cpu, int group_fd, unsigned long flags)
{
	(void) ctx;
	return (int) syscall(SYS_perf_event_open, attr, pid, cpu, group_fd,
			     flags);
}

/* A shared mapping of the event's buffers. */
static void *k_mmap(void *ctx, size_t len, int prot, int fd, off_t offset)
{
	(void) ctx;
	return mmap(NULL, len, prot, MAP_SHARED, fd, offset);
}

/* Unmaps one of them. */
static int k_munmap(void *ctx, void *addr, size_t len)
{
	(void) ctx;
	return munmap(addr, len);
}

/* PERF_EVENT_IOC_* on the event. */
static int k_ioctl(void *ctx, int fd, unsigned long request, void *arg)
{
	(void) ctx;
	return ioctl(fd, request, arg);
}

/* The event's fd becomes readable when the AUX area passes its
 * watermark (full mode). */
static int k_poll(void *ctx, int fd, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int n;

	(void) ctx;
	n = poll(&pfd, 1, timeout_ms);
	return n > 0 ? (pfd.revents & POLLIN) != 0 : n;
}

/* Closes the event. */
static int k_close(void *ctx, int fd)
{
	(void) ctx;
	return close(fd);
}

const struct cap_perf_ops cap_perf_kernel_ops = {
	.open = k_open, .mmap = k_mmap, .munmap = k_munmap,
	.ioctl = k_ioctl, .poll = k_poll, .close = k_close,
};

/* ------------------------------------------------------------------ */
/* Configuration                                                      */
/* ------------------------------------------------------------------ */

void cap_perf_options_default(struct cap_perf_options *o)
{
	memset(o, 0, sizeof(*o));
	o->mode = CAP_PERF_SNAPSHOT;
	o->aux_size = 4u << 20;
	o->ret_compression = true;
}

/* caps/@name, or 0 if the PMU does not have it. */
static uint64_t cap_or_zero(const struct cap_pmu *pmu, const char *name)
{
	uint64_t v;

	return cap_pmu_cap(pmu, name, &v) == 0 ? v : 0;
}

/* Sets format term @name to 1 if the PMU has it. */
static int set_if_present(const struct cap_pmu *pmu, const char *name,
			  struct cap_pmu_config *cfg)
{
	return cap_pmu_has(pmu, name) ? cap_pmu_set(pmu, name, 1, cfg) : 0;
}

/* The PSB period: psb_period = N puts a PSB every 2^(N+11) bytes.  ptrr
 * wants @bytes (CAP_PSB_PERIOD_DEFAULT, 4 KiB, N = 1, unless told); it
 * takes the largest value the CPU offers up to that (0, 2 KiB, is always
 * valid).  A CPU without caps/psb_cyc has a fixed period: 2 KiB, or 256
 * bytes on the first generation (no caps/topa_multiple_entries), as perf
 * assumes. */
static int choose_psb(const struct cap_pmu *pmu, uint32_t bytes,
		      struct cap_pmu_config *cfg, uint32_t *psb_bytes)
{
	uint64_t valid = cap_or_zero(pmu, "psb_periods") | 1;
	unsigned want = 0, pick = 0;

	while (want < 15 && (2048u << (want + 1)) <=
	       (bytes ? bytes : CAP_PSB_PERIOD_DEFAULT))
		want++;
	if (!cap_or_zero(pmu, "psb_cyc") || !cap_pmu_has(pmu, "psb_period")) {
		*psb_bytes = cap_or_zero(pmu, "topa_multiple_entries") ? 2048
								      : 256;
		return 0;
	}
	for (unsigned v = 0; v <= want && v < 64; v++)
		if (valid >> v & 1)
			pick = v;
	*psb_bytes = 2048u << pick;
	return cap_pmu_set(pmu, "psb_period", pick, cfg);
}

int cap_perf_config(const struct cap_pmu *pmu,
		    const struct cap_perf_options *o,
		    struct cap_pmu_config *cfg, uint32_t *psb_bytes)
{
	int err;

	memset(cfg, 0, sizeof(*cfg));
	err = set_if_present(pmu, "pt", cfg);
	if (!err)
		err = set_if_present(pmu, "branch", cfg);
	if (!err && !o->ret_compression)
		err = cap_pmu_set(pmu, "noretcomp", 1, cfg);
	if (!err && o->tsc)
		err = cap_pmu_set(pmu, "tsc", 1, cfg);
	if (!err)
		err = choose_psb(pmu, o->psb_period, cfg, psb_bytes);
	return err;
}

/* Checks the IP filters against what the CPU can do. */
static int check_filters(const struct cap_perf *p)
{
	uint64_t ranges = cap_or_zero(&p->pmu, "num_address_ranges");

	if (!p->opts.nfilters)
		return 0;
	if (!cap_or_zero(&p->pmu, "ip_filtering") || !ranges)
		return ptrr_fail(PTRR_ERR_UNSUPPORTED, "--filter: this CPU has "
				 "no Intel PT IP filtering (caps/ip_filtering)");
	if (p->opts.nfilters > ranges || p->opts.nfilters >
	    CAP_PERF_MAX_FILTERS)
		return ptrr_fail(PTRR_ERR_UNSUPPORTED, "--filter: %zu ranges "
				 "given, this CPU has %llu "
				 "(caps/num_address_ranges)", p->opts.nfilters,
				 (unsigned long long) ranges);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Set-up                                                             */
/* ------------------------------------------------------------------ */

/* The smallest power of two pages holding @bytes, at least two pages. */
static size_t area_length(uint64_t bytes, size_t page)
{
	size_t len = 2 * page;

	while (len < bytes && len < ((size_t) 1 << 40))
		len <<= 1;
	return len;
}

/* The attributes of the event. */
static void make_attr(const struct cap_perf *p, struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = p->pmu.type;
	a->config = p->config.word[0];
	a->config1 = p->config.word[1];
	a->config2 = p->config.word[2];
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	a->disabled = 1;
	/* Full mode: wake a poller when a quarter of the area is used. */
	if (p->opts.mode == CAP_PERF_FULL)
		a->aux_watermark = (uint32_t) (p->area_len / 4 < UINT32_MAX
					       ? p->area_len / 4 : UINT32_MAX);
}

/* Maps the control page and data ring, then the AUX area. */
static int map_buffers(struct cap_perf *p, const struct cap_perf_env *env)
{
	bool full = p->opts.mode == CAP_PERF_FULL;
	struct perf_event_mmap_page *pc;
	void *m;

	m = p->ops->mmap(p->ops->ctx, p->base_len, PROT_READ | PROT_WRITE,
			 p->fd, 0);
	if (m == MAP_FAILED)
		return cap_perf_mmap_error(errno, env, p->area_len);
	p->base = m;
	pc = p->base;
	pc->aux_offset = p->base_len;
	pc->aux_size = p->area_len;
	m = p->ops->mmap(p->ops->ctx, p->area_len,
			 full ? PROT_READ | PROT_WRITE : PROT_READ, p->fd,
			 (off_t) p->base_len);
	if (m == MAP_FAILED)
		return cap_perf_mmap_error(errno, env, p->area_len);
	p->area = m;
	cap_aux_init(&p->aux, p->base, p->area, !full);
	if (!full && !(p->snap = malloc(p->area_len)))
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	return 0;
}

/* Hands the IP filters to the kernel. */
static int set_filters(struct cap_perf *p)
{
	char buf[CAP_PERF_MAX_FILTERS * (PATH_MAX + 48)];
	int err;

	if (!p->opts.nfilters)
		return 0;
	err = cap_perf_filter_string(p->opts.filters, p->opts.nfilters, buf,
				     sizeof(buf));
	if (!err && p->ops->ioctl(p->ops->ctx, p->fd,
				  PERF_EVENT_IOC_SET_FILTER, buf) < 0)
		err = cap_perf_filter_error(errno, buf);
	return err;
}

/* Opens the event for @tid. */
static int open_event(struct cap_perf *p, pid_t tid,
		      const struct cap_perf_env *env)
{
	struct perf_event_attr attr;

	make_attr(p, &attr);
	p->fd = p->ops->open(p->ops->ctx, &attr, tid, -1, -1,
			     PERF_FLAG_FD_CLOEXEC);
	if (p->fd < 0)
		return cap_perf_open_error(errno, env, p->pmu.type,
					   p->config.word[0]);
	return 0;
}

int cap_perf_open(struct cap_perf *p, pid_t tid,
		  const struct cap_perf_options *o,
		  const struct cap_perf_ops *ops)
{
	long page = sysconf(_SC_PAGESIZE);
	struct cap_perf_env env;
	int err;

	memset(p, 0, sizeof(*p));
	p->fd = -1;
	p->ops = ops ? ops : &cap_perf_kernel_ops;
	p->opts = *o;
	p->base_len = (size_t) (1 + DATA_PAGES) * (size_t) page;
	p->area_len = area_length(o->aux_size, (size_t) page);
	cap_perf_env_read(&env);
	err = cap_pmu_open(&p->pmu, o->sysfs_root);
	if (!err)
		err = cap_perf_config(&p->pmu, o, &p->config, &p->psb_bytes);
	if (!err)
		err = check_filters(p);
	if (!err)
		err = open_event(p, tid, &env);
	if (!err)
		err = map_buffers(p, &env);
	if (!err)
		err = set_filters(p);
	if (err)
		cap_perf_close(p);
	return err;
}

void cap_perf_close(struct cap_perf *p)
{
	if (p->area)
		p->ops->munmap(p->ops->ctx, p->area, p->area_len);
	if (p->base)
		p->ops->munmap(p->ops->ctx, p->base, p->base_len);
	if (p->fd >= 0)
		p->ops->close(p->ops->ctx, p->fd);
	free(p->snap);
	p->area = p->base = NULL;
	p->snap = NULL;
	p->fd = -1;
	p->enabled = false;
}

/* ------------------------------------------------------------------ */
/* Running and reading                                                */
/* ------------------------------------------------------------------ */

/* Issues PERF_EVENT_IOC_@name (@request). */
static int event_ioctl(struct cap_perf *p, unsigned long request,
		       const char *name)
{
	if (p->ops->ioctl(p->ops->ctx, p->fd, request, NULL) < 0)
		return ptrr_fail(PTRR_ERR_IO, "PERF_EVENT_IOC_%s on the "
				 "intel_pt event: %s", name, strerror(errno));
	return 0;
}

int cap_perf_enable(struct cap_perf *p)
{
	int err = event_ioctl(p, PERF_EVENT_IOC_ENABLE, "ENABLE");

	if (!err)
		p->enabled = true;
	return err;
}

int cap_perf_disable(struct cap_perf *p)
{
	int err = event_ioctl(p, PERF_EVENT_IOC_DISABLE, "DISABLE");

	if (!err)
		p->enabled = false;
	return err;
}

/* Snapshot mode: @out becomes what the AUX area holds. */
static int read_snapshot(struct cap_perf *p, struct cap_ring *out,
			 struct cap_aux_read *rd)
{
	size_t wrap = out->wrap_size;
	int err;

	cap_aux_snapshot(&p->aux, p->snap, rd);
	cap_aux_records(&p->aux, NULL);
	p->wrapped += rd->wrapped;
	cap_ring_fini(out);
	err = cap_ring_init(out, wrap);
	if (!err)
		err = cap_ring_write(out, p->snap, rd->bytes);
	return err;
}

/* Full mode: appends what is new to @out (or drops it past the cap),
 * and counts where the trace was cut. */
static int read_full(struct cap_perf *p, struct cap_ring *out,
		     struct cap_aux_read *rd)
{
	int err = 0;

	memset(rd, 0, sizeof(*rd));
	if (p->opts.full_cap && cap_ring_size(out) >= p->opts.full_cap)
		p->dropped += cap_aux_discard(&p->aux);
	else
		err = cap_aux_drain(&p->aux, out, rd);
	cap_aux_records(&p->aux, rd);
	if (rd->truncations && !p->truncations)
		p->first_cut = rd->cut_at;
	p->truncations += rd->truncations;
	return err;
}

int cap_perf_read(struct cap_perf *p, struct cap_ring *out, bool resume,
		  struct cap_aux_read *rd)
{
	bool was = p->enabled;
	struct cap_aux_read r;
	int err = was ? cap_perf_disable(p) : 0;

	if (err)
		return err;
	err = p->opts.mode == CAP_PERF_FULL ? read_full(p, out, &r)
					    : read_snapshot(p, out, &r);
	p->reads++;
	if (!err && was && resume)
		err = cap_perf_enable(p);
	if (rd)
		*rd = r;
	return err;
}

int cap_perf_drain(struct cap_perf *p, struct cap_ring *out,
		   struct cap_aux_read *rd)
{
	struct cap_aux_read r;
	int err;

	if (p->opts.mode != CAP_PERF_FULL)
		return ptrr_fail(PTRR_ERR_USAGE, "only full mode drains the "
				 "AUX area while the thread runs");
	err = read_full(p, out, &r);
	/* The kernel disabled the event when the area filled up. */
	if (!err && r.truncations && p->enabled)
		err = cap_perf_enable(p);
	if (rd)
		*rd = r;
	return err;
}
