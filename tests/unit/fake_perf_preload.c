/* The fake kernel of fake_perf.c under a real `ptrr record --backend=perf`
 * (tests/perf-record.sh): an LD_PRELOAD object, built for `make check`
 * only and never installed, that answers ptrr's perf system calls
 * (syscall(SYS_perf_event_open), ioctl, mmap, munmap and close of the
 * events) with one fake_perf per event, and passes everything else on.
 * ptrr itself has no test hook: a release build runs the kernel's code.
 *
 * Its "CPU" cannot see what the program runs, so it writes what it can
 * check: whenever an enabled event is disabled (ptrr reads at a stop),
 * PTRR_FAKE_PERF_REPEAT (default 1) stretches of real PT from libipt's
 * encoder — PSB, PSBEND, TIP.PGE and FUP at the instruction the thread
 * was at when its event was opened, TIP.PGD — a trace that decodes to
 * "enabled there, disabled at once".  Every byte produced for thread TID
 * is appended to $PTRR_FAKE_PERF_DIR/TID.pt, the bytes the area took (a
 * full area drops the rest) to TID.kept.
 *
 * It also witnesses the run, in $PTRR_FAKE_PERF_DIR/log: "open TID STATE
 * RIP CONFIG" for each event (STATE from /proc/TID/stat: 't' is a ptrace
 * stop; CONFIG is attr.config), "filter TID STRING" for the filters set,
 * "resume TID ENABLED" at the first time ptrr resumes each thread (whether
 * its event was enabled then), "close TID"; and at exit "singlesteps N"
 * and "conts N", the PTRACE_SINGLESTEP and PTRACE_CONT requests ptrr made.
 *
 * It does all this only in a process whose program is named ptrr, and
 * takes LD_PRELOAD out of ptrr's environment, so the traced program runs
 * without it. */
#include <config.h>

#include "fake_perf.h"
#include "preload_ptrr.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <intel-pt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <unistd.h>

#define MAX_EVENTS 256
#define MAX_TIDS 4096

struct event {
	bool used;
	int fd;			/* ptrr's: an eventfd standing for it */
	pid_t tid;
	uint64_t ip;		/* where the thread was when opened */
	struct fake_perf f;
	struct cap_perf_ops ops;
};

static struct event events[MAX_EVENTS];
static pid_t resumed[MAX_TIDS];
static size_t nresumed;
static char dir[PATH_MAX];
static int repeat = 1;
static long singlesteps, conts;

/* The next definition of @name, past this object. */
static void *next(const char *name)
{
	void *fn = dlsym(RTLD_NEXT, name);

	if (!fn) {
		fprintf(stderr, "fake_perf_preload: no %s\n", name);
		abort();
	}
	return fn;
}

/* Appends @n bytes to file @name of the log directory. */
static void log_bytes(const char *name, const void *data, size_t n)
{
	char path[PATH_MAX + 64];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, data, n) != (ssize_t) n) {
		perror(path);
		abort();
	}
	close(fd);
}

/* Appends a line to the log. */
static void log_line(const char *fmt, ...)
{
	char line[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	log_bytes("log", line, (size_t) n);
}

/* Only in ptrr (a wrapper such as timeout passes the object on
 * untouched); ptrr's children, the traced programs, run without it. */
__attribute__((constructor)) static void preload_init(void)
{
	const char *d = getenv("PTRR_FAKE_PERF_DIR");
	const char *r = getenv("PTRR_FAKE_PERF_REPEAT");

	if (!d || !preload_in_ptrr())
		return;
	snprintf(dir, sizeof(dir), "%s", d);
	if (r)
		repeat = atoi(r);
	unsetenv("LD_PRELOAD");
}

__attribute__((destructor)) static void preload_fini(void)
{
	if (dir[0])
		log_line("singlesteps %ld\nconts %ld\n", singlesteps, conts);
}

static struct event *find_fd(int fd)
{
	for (int i = 0; dir[0] && i < MAX_EVENTS; i++)
		if (events[i].used && events[i].fd == fd)
			return &events[i];
	return NULL;
}

static bool tid_enabled(pid_t tid)
{
	for (int i = 0; i < MAX_EVENTS; i++)
		if (events[i].used && events[i].tid == tid &&
		    events[i].f.enabled)
			return true;
	return false;
}

/* ------------------------------------------------------------------ */
/* The CPU                                                            */
/* ------------------------------------------------------------------ */

/* One stretch of PT for @ip into @buf: its length. */
static size_t stretch(uint64_t ip, uint8_t *buf, size_t size)
{
	struct pt_packet pk[5];
	struct pt_config cfg;
	struct pt_encoder *enc;
	uint64_t off = 0;

	memset(pk, 0, sizeof(pk));
	pk[0].type = ppt_psb;
	pk[1].type = ppt_psbend;
	pk[2].type = ppt_tip_pge;
	pk[3].type = ppt_fup;
	pk[4].type = ppt_tip_pgd;
	for (int i = 2; i < 4; i++) {
		pk[i].payload.ip.ipc = pt_ipc_sext_48;
		pk[i].payload.ip.ip = ip;
	}
	pk[4].payload.ip.ipc = pt_ipc_suppressed;
	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + size;
	enc = pt_alloc_encoder(&cfg);
	for (int i = 0; enc && i < 5; i++)
		if (pt_enc_next(enc, &pk[i]) < 0)
			abort();
	if (!enc || pt_enc_get_offset(enc, &off) < 0)
		abort();
	pt_free_encoder(enc);
	return (size_t) off;
}

/* The CPU writes its stretches for event @e, which is enabled. */
static void produce(struct event *e)
{
	size_t n, total, kept;
	uint8_t one[64], *all;
	char name[64];
	uint64_t lost;

	n = stretch(e->ip, one, sizeof(one));
	total = n * (size_t) repeat;
	all = malloc(total ? total : 1);
	if (!all)
		abort();
	for (int i = 0; i < repeat; i++)
		memcpy(all + (size_t) i * n, one, n);
	lost = e->f.dropped;
	fake_perf_write(&e->f, all, total);
	kept = total - (size_t) (e->f.dropped - lost);
	snprintf(name, sizeof(name), "%d.pt", (int) e->tid);
	log_bytes(name, all, total);
	snprintf(name, sizeof(name), "%d.kept", (int) e->tid);
	log_bytes(name, all, kept);
	free(all);
}

/* ------------------------------------------------------------------ */
/* The system calls                                                   */
/* ------------------------------------------------------------------ */

/* The state letter of task @tid. */
static char task_state(pid_t tid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int) tid);
	f = fopen(path, "r");
	if (!f)
		return '?';
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] && p[2] ? p[2] : '?';
}

static long (*real_ptrace)(int, pid_t, void *, void *);

static int fake_open(struct perf_event_attr *attr, pid_t tid, int cpu,
		     int group, unsigned long flags)
{
	struct user_regs_struct regs;
	struct event *e = NULL;

	for (int i = 0; !e && i < MAX_EVENTS; i++)
		if (!events[i].used)
			e = &events[i];
	if (!e) {
		errno = EMFILE;
		return -1;
	}
	memset(e, 0, sizeof(*e));
	fake_perf_init(&e->f, FAKE_PT_TYPE);
	fake_perf_ops(&e->f, &e->ops);
	if (e->ops.open(e->ops.ctx, attr, tid, cpu, group, flags) < 0)
		return -1;
	if (!real_ptrace)
		real_ptrace = next("ptrace");
	memset(&regs, 0, sizeof(regs));
	real_ptrace(PTRACE_GETREGS, tid, NULL, &regs);
	e->fd = eventfd(0, EFD_CLOEXEC);
	if (e->fd < 0)
		return -1;
	e->used = true;
	e->tid = tid;
	e->ip = regs.rip;
	log_line("open %d %c 0x%llx 0x%llx\n", (int) tid, task_state(tid),
		 (unsigned long long) regs.rip,
		 (unsigned long long) attr->config);
	return e->fd;
}

long syscall(long nr, ...)
{
	static long (*real)(long, ...);
	long a[6];
	va_list ap;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (nr == SYS_perf_event_open && dir[0])
		return fake_open((struct perf_event_attr *) a[0], (pid_t) a[1],
				 (int) a[2], (int) a[3], (unsigned long) a[4]);
	if (!real)
		real = next("syscall");
	return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

int ioctl(int fd, unsigned long request, ...)
{
	static int (*real)(int, unsigned long, void *);
	struct event *e = find_fd(fd);
	va_list ap;
	void *arg;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!e) {
		if (!real)
			real = next("ioctl");
		return real(fd, request, arg);
	}
	if (request == PERF_EVENT_IOC_DISABLE && e->f.enabled)
		produce(e);
	if (request == PERF_EVENT_IOC_SET_FILTER)
		log_line("filter %d %s\n", (int) e->tid, (const char *) arg);
	return e->ops.ioctl(e->ops.ctx, FAKE_PERF_FD, request, arg);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	static void *(*real)(void *, size_t, int, int, int, off_t);
	struct event *e = fd >= 0 ? find_fd(fd) : NULL;

	if (e)
		return e->ops.mmap(e->ops.ctx, len, prot, FAKE_PERF_FD, off);
	if (!real)
		real = next("mmap");
	return real(addr, len, prot, flags, fd, off);
}

int munmap(void *addr, size_t len)
{
	static int (*real)(void *, size_t);

	for (int i = 0; dir[0] && i < MAX_EVENTS; i++) {
		struct event *e = &events[i];

		if (e->used && (addr == (void *) e->f.pc ||
				addr == (void *) e->f.aux))
			return e->ops.munmap(e->ops.ctx, addr, len);
	}
	if (!real)
		real = next("munmap");
	return real(addr, len);
}

int close(int fd)
{
	static int (*real)(int);
	struct event *e = find_fd(fd);

	if (!real)
		real = next("close");
	if (e) {
		e->ops.close(e->ops.ctx, FAKE_PERF_FD);
		e->used = false;
		log_line("close %d\n", (int) e->tid);
	}
	return real(fd);
}

/* Counts the resumes and checks the first of each thread. */
long ptrace(enum __ptrace_request req, ...)
{
	va_list ap;
	pid_t pid;
	void *addr, *data;
	size_t i;

	va_start(ap, req);
	pid = va_arg(ap, pid_t);
	addr = va_arg(ap, void *);
	data = va_arg(ap, void *);
	va_end(ap);
	if (!real_ptrace)
		real_ptrace = next("ptrace");
	if (dir[0] && (req == PTRACE_CONT || req == PTRACE_SINGLESTEP ||
		       req == PTRACE_SYSCALL)) {
		singlesteps += req == PTRACE_SINGLESTEP;
		conts += req == PTRACE_CONT;
		for (i = 0; i < nresumed && resumed[i] != pid; i++)
			;
		if (i == nresumed && nresumed < MAX_TIDS) {
			resumed[nresumed++] = pid;
			log_line("resume %d %d\n", (int) pid, tid_enabled(pid));
		}
	}
	return real_ptrace(req, pid, addr, data);
}
