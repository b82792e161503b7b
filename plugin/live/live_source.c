/* The ptrace session of plugin/live as a trace source's live session
 * (source.h: struct tsrc_live_ops): each call is live.h's. */
#include <config.h>

#include "live/live_internal.h"
#include "capture/emit.h"
#include "gdbremote/live_target.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The session of source @s. */
static struct live *live_of(struct tsrc *s)
{
	return (struct live *) s;
}

static int launch(char *const argv[], const struct live_options *opt,
		  struct tsrc **out)
{
	struct live *l;
	int err = live_launch(&l, argv, opt);

	*out = err ? NULL : &l->base;
	return err;
}

static int attach(pid_t pid, const struct live_options *opt,
		  struct tsrc **out)
{
	struct live *l;
	int err = live_attach(&l, pid, opt);

	*out = err ? NULL : &l->base;
	return err;
}

/* The software backend's CPU and PT configuration (live_trace.c's
 * emitters: the defaults). */
static void header(struct hist_bundle *b)
{
	struct cap_emit_config cfg;

	cap_emit_config_default(&cfg);
	cap_emit_cpu(&b->cpu);
	b->pt.psb_period = cfg.psb_period;
	b->pt.ret_compression = cfg.ret_compression;
}

static void p_free(struct tsrc *s)
{
	live_free(live_of(s));
}

static void p_detach(struct tsrc *s, bool stopped)
{
	live_detach(live_of(s), stopped);
}

static pid_t p_pid(struct tsrc *s)
{
	return live_pid(live_of(s));
}

static bool p_ended(struct tsrc *s)
{
	return live_ended(live_of(s));
}

static size_t p_threads(struct tsrc *s, pid_t *tids, size_t max)
{
	return live_threads(live_of(s), tids, max);
}

static int p_regs_get(struct tsrc *s, pid_t tid,
		       struct user_regs_struct *regs)
{
	return live_regs_get(live_of(s), tid, regs);
}

static int p_regs_set(struct tsrc *s, pid_t tid,
		       const struct user_regs_struct *regs)
{
	return live_regs_set(live_of(s), tid, regs);
}

static ssize_t p_mem_read(struct tsrc *s, uint64_t addr, void *buf,
			   size_t size)
{
	return live_mem_read(live_of(s), addr, buf, size);
}

static int p_mem_write(struct tsrc *s, uint64_t addr, const void *buf,
			size_t size)
{
	return live_mem_write(live_of(s), addr, buf, size);
}

static int p_bp_set(struct tsrc *s, uint64_t addr)
{
	return live_bp_set(live_of(s), addr);
}

static int p_bp_clear(struct tsrc *s, uint64_t addr)
{
	return live_bp_clear(live_of(s), addr);
}

static int p_hbp_set(struct tsrc *s, uint64_t addr)
{
	return live_hbp_set(live_of(s), addr);
}

static int p_hbp_clear(struct tsrc *s, uint64_t addr)
{
	return live_hbp_clear(live_of(s), addr);
}

static int p_watch_set(struct tsrc *s, uint64_t addr, size_t len,
			enum live_watch_kind kind)
{
	return live_watch_set(live_of(s), addr, len, kind);
}

static int p_watch_clear(struct tsrc *s, uint64_t addr, size_t len,
			  enum live_watch_kind kind)
{
	return live_watch_clear(live_of(s), addr, len, kind);
}

static void p_pass_signals(struct tsrc *s, const int *sigs, size_t n)
{
	live_pass_signals(live_of(s), sigs, n);
}

static int p_resume(struct tsrc *s, const struct live_resume *r,
		     struct live_stop *stop)
{
	return live_resume(live_of(s), r, stop);
}

static void p_interrupt(struct tsrc *s)
{
	live_interrupt(live_of(s));
}

static int p_trace_start(struct tsrc *s)
{
	return live_trace_start(live_of(s));
}

static void p_trace_stop(struct tsrc *s)
{
	live_trace_stop(live_of(s));
}

static bool p_tracing(struct tsrc *s)
{
	return live_tracing(live_of(s));
}

static void p_set_progress(struct tsrc *s, int (*fn)(void *arg),
			 void *arg, uint64_t every)
{
	live_set_progress(live_of(s), fn, arg, every);
}

static size_t p_traced_threads(struct tsrc *s, pid_t *tids, size_t max)
{
	return live_traced_threads(live_of(s), tids, max);
}

static bool p_has_trace(struct tsrc *s, pid_t tid)
{
	return live_has_trace(live_of(s), tid);
}

static int p_trace_get(struct tsrc *s, pid_t tid,
			struct live_thread_trace *out)
{
	return live_trace_get(live_of(s), tid, out);
}

static void p_step_counts(struct tsrc *s, uint64_t *insns,
			uint64_t *steps, bool *blocks)
{
	live_step_counts(live_of(s), insns, steps, blocks);
}

/* The process's /proc/PID/exe. */
static int program(struct tsrc *s, char *buf, size_t n)
{
	char path[64];
	ssize_t k;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int) p_pid(s));
	k = n ? readlink(path, buf, n - 1) : -1;
	if (k < 0)
		return ptrr_fail(PTRR_ERR_IO, "cannot read %s: %s", path,
				 strerror(errno));
	buf[k] = 0;
	return 0;
}

static int maps(struct tsrc *s, struct cap_map **out, size_t *n)
{
	return cap_maps_read(p_pid(s), out, n);
}

/* Reads all of file @path into a malloc'd *@doc. */
static int read_file(const char *path, char **doc, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t n = 0, alloc = 4096;
	char *buf = malloc(alloc);

	while (f && buf && (n += fread(buf + n, 1, alloc - n, f)) == alloc) {
		char *v = realloc(buf, 2 * alloc);

		if (!v) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = v;
		alloc *= 2;
	}
	if (f)
		fclose(f);
	if (!f || !buf) {
		free(buf);
		return ptrr_fail(PTRR_ERR_IO, "cannot read %s", path);
	}
	*doc = buf;
	*len = n;
	return 0;
}

static int auxv(struct tsrc *s, char **doc, size_t *len)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int) p_pid(s));
	return read_file(path, doc, len);
}

/* The files the process has mapped (live_files.c). */
static int open_file(struct tsrc *s, const char *path)
{
	return rsp_process_open_file(p_pid(s), path);
}

const struct tsrc_live_ops live_ptrace = {
	.launch = launch,
	.attach = attach,
	.header = header,
	.program = program,
	.maps = maps,
	.auxv = auxv,
	.open_file = open_file,
	.free = p_free,
	.detach = p_detach,
	.pid = p_pid,
	.ended = p_ended,
	.threads = p_threads,
	.regs_get = p_regs_get,
	.regs_set = p_regs_set,
	.mem_read = p_mem_read,
	.mem_write = p_mem_write,
	.bp_set = p_bp_set,
	.bp_clear = p_bp_clear,
	.hbp_set = p_hbp_set,
	.hbp_clear = p_hbp_clear,
	.watch_set = p_watch_set,
	.watch_clear = p_watch_clear,
	.pass_signals = p_pass_signals,
	.resume = p_resume,
	.threads_apart = true,
	.interrupt = p_interrupt,
	.trace_start = p_trace_start,
	.trace_stop = p_trace_stop,
	.tracing = p_tracing,
	.set_progress = p_set_progress,
	.traced_threads = p_traced_threads,
	.has_trace = p_has_trace,
	.trace_get = p_trace_get,
	.step_counts = p_step_counts,
};
