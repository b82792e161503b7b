/* The fake kernel for the perf backend's tests; see fake_perf.h. */
#include <config.h>

#include "fake_perf.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The page size the mappings are made of. */
static size_t page_size(void)
{
	return (size_t) sysconf(_SC_PAGESIZE);
}

/* True if @n is a power of two. */
static bool pow2(size_t n)
{
	return n && !(n & (n - 1));
}

/* Publishes a producer pointer: the data it covers is written first. */
static void publish(__u64 *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* Appends a record of @type with payload @body (@len bytes) to the data
 * ring, if there is room before data_tail (else it is lost). */
static void put_record(struct fake_perf *f, uint32_t type, const void *body,
		       size_t len)
{
	struct perf_event_header h = { type, 0, (uint16_t) (sizeof(h) + len) };
	uint8_t rec[64];
	uint64_t tail = __atomic_load_n(&f->pc->data_tail, __ATOMIC_ACQUIRE);
	uint8_t *data = (uint8_t *) f->pc + f->pc->data_offset;
	uint64_t size = f->pc->data_size;

	if (h.size > size - (f->data_head - tail))
		return;
	memcpy(rec, &h, sizeof(h));
	memcpy(rec + sizeof(h), body, len);
	for (size_t i = 0; i < h.size; i++)
		data[(f->data_head + i) % size] = rec[i];
	f->data_head += h.size;
	publish(&f->pc->data_head, f->data_head);
}

/* The end of a stretch of trace: PERF_RECORD_AUX {offset, size, flags}
 * (perf_aux_output_end). */
static void end_stretch(struct fake_perf *f, uint64_t flags)
{
	uint64_t body[3] = { f->chunk, f->head - f->chunk, flags };

	if (f->overwrite)
		body[2] |= PERF_AUX_FLAG_OVERWRITE;
	if (body[1] || flags)
		put_record(f, PERF_RECORD_AUX, body, sizeof(body));
	f->chunk = f->head;
}

/* perf_event_open: records the arguments; fails as the test asked,
 * or with ENOENT for a type the fake does not know (as the kernel). */
static int f_open(void *ctx, struct perf_event_attr *attr, pid_t pid,
		  int cpu, int group_fd, unsigned long flags)
{
	struct fake_perf *f = ctx;

	f->opens++;
	f->attr = *attr;
	f->pid = pid;
	f->cpu = cpu;
	f->group_fd = group_fd;
	f->flags = flags;
	if (f->open_errno || attr->type != f->type) {
		errno = f->open_errno ? f->open_errno : ENOENT;
		return -1;
	}
	f->open = true;
	f->enabled = !attr->disabled;
	return FAKE_PERF_FD;
}

/* The first mmap: control page and data ring. */
static void *map_base(struct fake_perf *f, size_t len, int prot)
{
	size_t page = page_size();

	if (len < 2 * page || len % page || !pow2(len / page - 1)) {
		errno = EINVAL;
		return MAP_FAILED;
	}
	f->pc = aligned_alloc(page, len);
	memset(f->pc, 0, len);
	f->pc->data_offset = page;
	f->pc->data_size = len - page;
	f->base_len = len;
	f->base_prot = prot;
	return f->pc;
}

/* The second mmap: the AUX area, as the control page describes it. */
static void *map_aux(struct fake_perf *f, size_t len, int prot, off_t off)
{
	size_t page = page_size();

	if (!f->pc || (uint64_t) off != f->pc->aux_offset ||
	    f->pc->aux_offset < f->pc->data_offset + f->pc->data_size ||
	    len != f->pc->aux_size || len % page || !pow2(len / page)) {
		errno = EINVAL;
		return MAP_FAILED;
	}
	if (f->aux_mmap_errno) {
		errno = f->aux_mmap_errno;
		return MAP_FAILED;
	}
	f->aux = aligned_alloc(page, len);
	memset(f->aux, 0, len);
	f->aux_len = len;
	f->aux_prot = prot;
	f->overwrite = !(prot & PROT_WRITE);
	return f->aux;
}

/* mmap: offset 0 is the control page and data ring, any other the AUX
 * area. */
static void *f_mmap(void *ctx, size_t len, int prot, int fd, off_t offset)
{
	struct fake_perf *f = ctx;

	if (fd != FAKE_PERF_FD || !f->open) {
		errno = EBADF;
		return MAP_FAILED;
	}
	f->maps++;
	return offset ? map_aux(f, len, prot, offset) : map_base(f, len, prot);
}

/* munmap of one of the two mappings. */
static int f_munmap(void *ctx, void *addr, size_t len)
{
	struct fake_perf *f = ctx;

	f->unmaps++;
	if (addr == f->aux && len == f->aux_len) {
		free(f->aux);
		f->aux = NULL;
	} else if (addr == f->pc && len == f->base_len) {
		free(f->pc);
		f->pc = NULL;
	} else {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

/* ENABLE, DISABLE (ending the stretch of trace) and SET_FILTER. */
static int f_ioctl(void *ctx, int fd, unsigned long request, void *arg)
{
	struct fake_perf *f = ctx;

	if (fd != FAKE_PERF_FD || !f->open) {
		errno = EBADF;
		return -1;
	}
	if (request == PERF_EVENT_IOC_ENABLE) {
		f->enables++;
		f->enabled = true;
		f->stopped = false;
	} else if (request == PERF_EVENT_IOC_DISABLE) {
		f->disables++;
		if (f->enabled && f->aux)
			end_stretch(f, 0);
		f->enabled = false;
	} else if (request == PERF_EVENT_IOC_SET_FILTER) {
		strncpy(f->filter, arg, sizeof(f->filter) - 1);
		if (f->filter_errno) {
			errno = f->filter_errno;
			return -1;
		}
	} else {
		errno = ENOTTY;
		return -1;
	}
	return 0;
}

/* Readable when full mode's area is past its watermark. */
static int f_poll(void *ctx, int fd, int timeout_ms)
{
	struct fake_perf *f = ctx;
	uint64_t tail;

	(void) fd;
	(void) timeout_ms;
	if (!f->aux || f->overwrite)
		return 0;
	tail = __atomic_load_n(&f->pc->aux_tail, __ATOMIC_ACQUIRE);
	return f->head - tail >= f->attr.aux_watermark;
}

/* close of the event. */
static int f_close(void *ctx, int fd)
{
	struct fake_perf *f = ctx;

	if (fd != FAKE_PERF_FD || !f->open) {
		errno = EBADF;
		return -1;
	}
	f->closes++;
	f->open = false;
	return 0;
}

void fake_perf_init(struct fake_perf *f, uint32_t type)
{
	memset(f, 0, sizeof(*f));
	f->type = type;
}

void fake_perf_ops(struct fake_perf *f, struct cap_perf_ops *ops)
{
	ops->open = f_open;
	ops->mmap = f_mmap;
	ops->munmap = f_munmap;
	ops->ioctl = f_ioctl;
	ops->poll = f_poll;
	ops->close = f_close;
	ops->ctx = f;
}

/* Overwrite mode: the bytes go round the area; aux_head is an offset. */
static void write_overwrite(struct fake_perf *f, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		f->aux[(f->head + i) % f->aux_len] = b[i];
	f->head += n;
	publish(&f->pc->aux_head, f->head % f->aux_len);
}

/* Full mode: the bytes go up to aux_tail; what does not fit is lost and
 * the event stops, truncated, until it is enabled again. */
static void write_full(struct fake_perf *f, const uint8_t *b, size_t n)
{
	uint64_t tail = __atomic_load_n(&f->pc->aux_tail, __ATOMIC_ACQUIRE);
	uint64_t room = f->aux_len - (f->head - tail);
	size_t fit = n < room ? n : (size_t) room;

	for (size_t i = 0; i < fit; i++)
		f->aux[(f->head + i) % f->aux_len] = b[i];
	f->head += fit;
	publish(&f->pc->aux_head, f->head);
	if (fit == n)
		return;
	f->dropped += n - fit;
	end_stretch(f, PERF_AUX_FLAG_TRUNCATED);
	f->stopped = true;
	f->enabled = false;	/* the kernel's pending_disable */
}

void fake_perf_write(struct fake_perf *f, const uint8_t *bytes, size_t n)
{
	f->produced += n;
	if (!f->enabled || f->stopped || !f->aux) {
		f->dropped += n;
		return;
	}
	if (f->overwrite)
		write_overwrite(f, bytes, n);
	else
		write_full(f, bytes, n);
}

int fake_perf_start(struct fake_perf *f, struct cap_perf_ops *ops,
		    struct cap_perf *p, const struct cap_perf_options *o)
{
	int err;

	fake_perf_init(f, FAKE_PT_TYPE);
	fake_perf_ops(f, ops);
	err = cap_perf_open(p, 4321, o, ops);
	return err ? err : cap_perf_enable(p);
}

bool fake_perf_stop(struct fake_perf *f, struct cap_perf *p)
{
	cap_perf_close(p);
	return f->closes == f->opens && f->unmaps == f->maps && !f->open;
}

/* ------------------------------------------------------------------ */
/* The fake sysfs tree                                                */
/* ------------------------------------------------------------------ */

void fake_pmu_file(const char *root, const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s%s/%s", root, CAP_PMU_SUBDIR, rel);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		abort();
	}
	fputs(text, f);
	fclose(f);
}

void fake_pmu_remove(const char *root, const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s%s/%s", root, CAP_PMU_SUBDIR, rel);
	unlink(path);
}

void fake_pmu_make(char *root, size_t size)
{
	static const char *const dirs[] = {
		"/bus", "/bus/event_source", "/bus/event_source/devices",
		CAP_PMU_SUBDIR, CAP_PMU_SUBDIR "/format", CAP_PMU_SUBDIR "/caps",
	};
	static const char *const files[][2] = {
		{ "type", "8\n" }, { "format/pt", "config:0\n" },
		{ "format/cyc", "config:1\n" }, { "format/mtc", "config:9\n" },
		{ "format/tsc", "config:10\n" },
		{ "format/noretcomp", "config:11\n" },
		{ "format/branch", "config:13\n" },
		{ "format/psb_period", "config:24-27\n" },
		{ "caps/psb_cyc", "1\n" }, { "caps/psb_periods", "3f\n" },
		{ "caps/ip_filtering", "1\n" },
		{ "caps/num_address_ranges", "2\n" },
		{ "caps/topa_multiple_entries", "1\n" },
	};
	char path[512];

	snprintf(root, size, "/tmp/ptrr-pmu-XXXXXX");
	if (!mkdtemp(root)) {
		perror(root);
		abort();
	}
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", root, dirs[i]);
		mkdir(path, 0755);
	}
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		fake_pmu_file(root, files[i][0], files[i][1]);
}

/* nftw's callback: removes one entry, children first. */
static int remove_entry(const char *path, const struct stat *st, int flag,
			struct FTW *ftw)
{
	(void) st;
	(void) flag;
	(void) ftw;
	return remove(path);
}

void fake_pmu_destroy(const char *root)
{
	nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

struct cap_perf_options fake_options(const char *root,
				     enum cap_perf_mode mode, uint64_t aux)
{
	struct cap_perf_options o;

	cap_perf_options_default(&o);
	o.mode = mode;
	o.aux_size = aux;
	o.sysfs_root = root;
	return o;
}
