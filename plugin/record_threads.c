/* `ptrr record`: one trace per thread, and a new recording per program
 * image.  See record.h.
 *
 * Every thread gets its own ring and emitter (as perf gives every thread
 * its own intel_pt event) from its first instruction, and its own ground
 * truth file: FILE for the process's main thread (task id = pid), FILE.TID
 * for the others.
 *
 * An execve ends the image: its threads' traces, its program and the
 * memory map read just before the execve become a bundle of their own,
 * which the final bundle keeps inside it (HIST_BEFORE_EXEC_DIR); the new
 * image is recorded from its first instruction.  Its ground truth files
 * move aside the same way: FILE becomes FILE.before-exec, FILE.TID
 * becomes FILE.before-exec.TID, and FILE starts again.
 */
#include <config.h>

#include "record.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The suffix that moves a ground truth file aside at an execve. */
#define TRUTH_BEFORE_EXEC ".before-exec"

/* ------------------------------------------------------------------ */
/* Ground truth                                                       */
/* ------------------------------------------------------------------ */

/* Appends @s (taken over) to the NULL-terminated list *@v. */
static int strv_push(char ***v, char *s)
{
	size_t n = 0;
	char **grown;

	while (*v && (*v)[n])
		n++;
	grown = s ? realloc(*v, (n + 2) * sizeof(*grown)) : NULL;
	if (!grown) {
		free(s);
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	}
	grown[n] = s;
	grown[n + 1] = NULL;
	*v = grown;
	return 0;
}

/* Opens the ground truth file of thread @rt, if one was asked for. */
static int open_truth(struct recorder *r, struct rec_thread *rt)
{
	const char *base = r->opts->truth;
	char *path = NULL;

	if (!base)
		return 0;
	if (rt->tid == r->st.pid)
		path = strdup(base);
	else if (asprintf(&path, "%s.%d", base, (int) rt->tid) < 0)
		path = NULL;
	if (!path)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	rt->truth = fopen(path, "w");
	if (!rt->truth) {
		int err = errno;

		free(path);
		return ptrr_fail(PTRR_ERR_IO, "cannot create the ground truth "
				 "file of thread %d: %s", (int) rt->tid,
				 strerror(err));
	}
	return strv_push(&r->truths, path);
}

/* Moves every ground truth file written so far aside (see the top of
 * this file); the oldest, innermost first, so no name is taken. */
static int truths_aside(struct recorder *r)
{
	size_t blen = r->opts->truth ? strlen(r->opts->truth) : 0;

	for (size_t i = 0; r->truths && r->truths[i]; i++) {
		char *old = r->truths[i], *moved;

		if (asprintf(&moved, "%.*s%s%s", (int) blen, old,
			     TRUTH_BEFORE_EXEC, old + blen) < 0)
			return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
		if (rename(old, moved) < 0) {
			int err = errno;

			free(moved);
			return ptrr_fail(PTRR_ERR_IO, "cannot rename %s: %s",
					 old, strerror(err));
		}
		free(old);
		r->truths[i] = moved;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Threads                                                            */
/* ------------------------------------------------------------------ */

/* Appends @rt to the image's threads. */
static int image_add(struct rec_image *img, struct rec_thread *rt)
{
	if (img->nthreads == img->threads_alloc) {
		size_t n = img->threads_alloc ? 2 * img->threads_alloc : 4;
		struct rec_thread **v = realloc(img->threads,
						n * sizeof(*v));

		if (!v)
			return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
		img->threads = v;
		img->threads_alloc = n;
	}
	img->threads[img->nthreads++] = rt;
	return 0;
}

/* Frees thread @rt and what it holds. */
static void thread_free(struct rec_thread *rt)
{
	if (rt->em.enc)
		cap_emit_fini(&rt->em);
	cap_emit_psbs_free(&rt->em);
	rec_perf_thread_free(rt);
	cap_ring_fini(&rt->ring);
	if (rt->truth)
		fclose(rt->truth);
	free(rt->snaps.v);
	free(rt);
}

/* Starts tracing thread @t, which is about to execute @ip: a ring, an
 * emitter enabled there, a ground truth file. */
static int thread_start(struct recorder *r, struct cap_thread *t,
			uint64_t ip)
{
	struct rec_thread *rt = calloc(1, sizeof(*rt));
	int err;

	if (!rt)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	rt->tid = t->tid;
	err = image_add(&r->img, rt);
	if (err) {
		free(rt);
		return err;
	}
	t->user = rt;
	/* The registers as the first instruction runs (the stepper read
	 * them at this stop), an anchor for what replay/known.c proves. */
	rt->have_start_regs = t->regs.rip == ip;
	rt->start_regs = t->regs;
	if (r->perf)
		return rec_perf_thread_start(r, rt);
	err = cap_ring_init(&rt->ring, r->opts->full ? 0
						     : r->opts->buffer_size);
	if (!err)
		err = cap_emit_init(&rt->em, &rt->ring, &r->cfg);
	if (!err)
		err = cap_emit_set_psbs(&rt->em, NULL, 0, 1);
	if (!err)
		err = cap_emit_enable(&rt->em, ip);
	if (!err)
		err = open_truth(r, rt);
	return err;
}

/* Ends the trace of @rt where thread @t stopped: an OVF if the full-mode
 * cap dropped instructions, then FUP + TIP.PGD (for a thread still there,
 * at the instruction it is to execute next); keeps its registers and how
 * it ended. */
static int thread_finish(struct recorder *r, struct rec_thread *rt,
			 const struct cap_thread *t)
{
	int err = 0;

	if (rt->done)
		return 0;
	rt->done = true;
	rt->regs = t->regs;
	rt->end = t->end;
	if (rt->perf)
		return rec_perf_thread_finish(r, rt);
	if (rt->overflowed)
		err = cap_emit_overflow(&rt->em, t->ip);
	if (!err && (!t->end.kind || t->end.kind == CAP_END_FAULT))
		err = cap_emit_stop(&rt->em, t->ip);
	else if (!err)
		err = cap_emit_disable(&rt->em, t->ip);
	if (rt->truth && fclose(rt->truth) != 0 && !err)
		err = ptrr_fail(PTRR_ERR_IO, "cannot write the ground truth "
				"of thread %d: %s", (int) rt->tid,
				strerror(errno));
	rt->truth = NULL;
	return err;
}

int rec_finish_threads(struct recorder *r)
{
	int err = 0;

	for (size_t i = 0; !err && i < r->st.nthreads; i++) {
		const struct cap_thread *t = r->st.threads[i];

		if (t->user)
			err = thread_finish(r, t->user, t);
	}
	return err;
}

/* Thread @rt's trace reached the full-mode cap: the rest of its run is
 * only counted, and ends in an OVF.  The first time, says so. */
static void reached_cap(struct recorder *r, struct rec_thread *rt)
{
	rt->overflowed = true;
	if (r->told_truncated)
		return;
	r->told_truncated = true;
	fprintf(stderr, "ptrr record: warning: --mode=full reached its "
		"%zu-byte cap after %" PRIu64 " instructions of thread %d: "
		"the trace is truncated there (an overflow gap, entry %" PRIu64
		" of its history) and the rest of the run is not traced; use "
		"a larger --buffer-size, or --mode=snapshot for the end\n",
		r->opts->buffer_size, rt->em.stats.insns, (int) rt->tid,
		rt->em.stats.insns + 1);
}

/* True if the system call thread @t has just made mapped code: an mmap
 * or mprotect with PROT_EXEC that succeeded (the dynamic linker loading
 * a library, a JIT).  The memory map is read again then, in case the
 * process dies without a last look (SIGKILL). */
static bool mapped_code(const struct cap_thread *t)
{
	const struct user_regs_struct *g = &t->regs;

	if (g->rax >= (unsigned long long) -4095)	/* -errno */
		return false;
	return (g->orig_rax == SYS_mmap || g->orig_rax == SYS_mprotect ||
		g->orig_rax == SYS_pkey_mprotect) && (g->rdx & PROT_EXEC);
}

/* One retired instruction: ground truth, then the emitter (unless the
 * full-mode cap was passed: those instructions are lost to an OVF). */
static int on_insn(struct recorder *r, struct rec_thread *rt,
		   const struct cap_event *ev)
{
	int err;

	if (rt->truth && fprintf(rt->truth, "0x%" PRIx64 "\n", ev->ip) < 0)
		return ptrr_fail(PTRR_ERR_IO, "cannot write the ground truth "
				 "of thread %d: %s", (int) rt->tid,
				 strerror(errno));
	if (!rt->overflowed && r->opts->full &&
	    cap_ring_size(&rt->ring) >= r->opts->buffer_size)
		reached_cap(r, rt);
	if (rt->overflowed) {
		rt->dropped++;
		return 0;
	}
	if (ev->insn.iclass == CAP_IC_KERNEL) {
		err = r->filters_pending ? rec_filters_update(r) : 0;

		if (!err && mapped_code(ev->thread))
			err = rec_read_memory_map(r);
		if (err)
			return err;
	}
	err = cap_emit_decoded(&rt->em, ev->ip, &ev->insn, ev->next_ip);
	return err ? err : rec_regs_note(r, rt, ev);
}

/* ------------------------------------------------------------------ */
/* Images                                                             */
/* ------------------------------------------------------------------ */

/* Frees the threads, program and notes of @img, leaving it empty. */
static void image_clear(struct rec_image *img)
{
	for (size_t i = 0; i < img->nthreads; i++)
		thread_free(img->threads[i]);
	free(img->threads);
	free(img->exe);
	for (size_t i = 0; img->argv && img->argv[i]; i++)
		free(img->argv[i]);
	free(img->argv);
	for (size_t i = 0; img->notes && img->notes[i]; i++)
		free(img->notes[i]);
	free(img->notes);
	memset(img, 0, sizeof(*img));
}

void rec_free_images(struct recorder *r)
{
	image_clear(&r->img);
	hist_bundle_free(r->exec_mem);
	hist_bundle_free(r->before);
	r->exec_mem = r->before = NULL;
	for (size_t i = 0; r->truths && r->truths[i]; i++)
		free(r->truths[i]);
	free(r->truths);
	r->truths = NULL;
}

/* Reads the NUL-separated arguments in /proc/PID/cmdline into a
 * NULL-terminated list. */
static int read_cmdline(pid_t pid, char ***argv)
{
	char path[64], buf[8192];
	size_t n = 0;
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int) pid);
	f = fopen(path, "r");
	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = 0;
	for (size_t i = 0; !err && i < n; i += strlen(buf + i) + 1)
		err = strv_push(argv, strdup(buf + i));
	if (!err && !*argv && !(*argv = calloc(1, sizeof(**argv))))
		err = ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	return err;
}

int rec_image_program(struct recorder *r, char *const *argv)
{
	char link[64], buf[4096];
	ssize_t n;
	int err = 0;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int) r->st.pid);
	n = readlink(link, buf, sizeof(buf) - 1);
	if (n < 0)
		return ptrr_fail(PTRR_ERR_IO, "cannot read %s: %s", link,
				 strerror(errno));
	buf[n] = 0;
	free(r->img.exe);
	r->img.exe = strdup(buf);
	if (!r->img.exe)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	if (!argv)
		return read_cmdline(r->st.pid, &r->img.argv);
	for (size_t i = 0; !err && argv[i]; i++)
		err = strv_push(&r->img.argv, strdup(argv[i]));
	if (!err && !r->img.argv && !(r->img.argv = calloc(1, sizeof(char *))))
		err = ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	return err;
}

int rec_read_memory_map(struct recorder *r)
{
	int err;

	hist_bundle_free(r->exec_mem);
	r->exec_mem = NULL;
	err = hist_bundle_new(&r->exec_mem);
	return err ? err : rec_add_memory(r->exec_mem, r, false);
}

/* The execve succeeded: the old image becomes the bundle kept inside the
 * final one; the new image starts with thread @t at @ip. */
static int after_exec(struct recorder *r, struct cap_thread *t, uint64_t ip)
{
	struct hist_bundle *b;
	int err;

	err = tsrc_bundle(&r->base, r->exec_mem, false, &b);
	r->exec_mem = NULL;
	if (err)
		return err;
	b->stop = (struct hist_stop){ HIST_STOP_EXEC, 0, 0 };
	for (size_t i = 0; i < b->nthreads; i++) {
		r->trace_bytes += b->threads[i].trace_size;
		r->trace_lost += b->threads[i].trace_lost;
	}
	for (size_t i = 0; i < r->img.nthreads; i++) {
		r->resyncs += r->img.threads[i]->em.stats.resyncs;
		r->dropped += r->img.threads[i]->dropped;
	}
	b->before_exec = r->before;
	r->before = b;
	image_clear(&r->img);
	err = truths_aside(r);
	if (!err)
		err = rec_image_program(r, NULL);
	if (!err)
		err = rec_filters_exec(r);
	return err ? err : thread_start(r, t, ip);
}

/* Notes that child process @child runs untraced. */
static int on_fork(struct recorder *r, pid_t child)
{
	char *note;

	if (asprintf(&note, "fork: child %d not traced", (int) child) < 0)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	return strv_push(&r->img.notes, note);
}

int rec_on_event(void *arg, const struct cap_event *ev)
{
	struct recorder *r = arg;
	struct rec_thread *rt = ev->thread ? ev->thread->user : NULL;
	int err = 0;

	switch (ev->kind) {
	case CAP_EV_INSN:
		err = rt && !rt->perf ? on_insn(r, rt, ev) : 0;
		rec_progress_tick(r);
		break;
	case CAP_EV_SIGNAL:
		err = rt && !rt->overflowed ? cap_emit_async(&rt->em, ev->ip)
					    : 0;
		break;
	case CAP_EV_THREAD:
		err = thread_start(r, ev->thread, ev->ip);
		break;
	case CAP_EV_END:
		err = rt ? thread_finish(r, rt, ev->thread) : 0;
		break;
	case CAP_EV_FORK:
		err = on_fork(r, ev->child);
		break;
	case CAP_EV_EXECVE:
		err = rec_read_memory_map(r);
		break;
	case CAP_EV_EXEC:
		err = after_exec(r, ev->thread, ev->ip);
		break;
	case CAP_EV_STOP:
		err = rt ? rec_perf_stop(r, rt) : 0;
		break;
	}
	return err ? err : rec_interrupted;
}
