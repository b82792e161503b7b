/* QEMU as a trace source (source.h), `ptrr record --backend=qemu`:
 * runs the program under qemu-x86_64 (user mode) with ptrr's TCG plugin
 * (plugin/qemu/ptrr-qemu.c), which writes each guest thread's Intel PT
 * trace into rings in a directory ptrr creates and owns
 * (plugin/qemu/qemu_shm.h).  When QEMU has exited — normally, or killed
 * by the guest's fatal signal, after writing the guest's core — ptrr
 * reads the rings, finishes the traces the plugin could not (a crash: at
 * the faulting instruction, from the core's registers), and hands over
 * the modules at guest addresses, each thread's trace and end, the
 * crash's registers and memory snapshot.
 */
#include <config.h>

#include "commands.h"
#include "launch.h"
#include "record.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "capture/elfsym.h"
#include "capture/operand.h"
#include "qemu/qemu_code.h"
#include "qemu/qemu_host.h"
#include "qemu/qemu_shm.h"

/* A total beyond which the crash snapshot stops adding regions (as the
 * software backend's). */
#define QEMU_SNAPSHOT_MAX (256ull << 20)

/* The registers of one thread in QEMU's guest core. */
struct core_thread {
	int tid;
	int signo;
	uint64_t regs[HIST_NREGS];
};

/* QEMU's guest core file, read. */
struct core {
	struct core_thread *threads;	/* the faulting thread first */
	size_t nthreads;
	uint8_t *data;			/* the whole file */
	size_t size;
};

/* What one recording under QEMU uses. */
struct qrec {
	struct tsrc base;		/* the source (tsrc_qemu) */
	const struct rec_opts *o;
	char prog[PATH_MAX];		/* the program's real path */
	char qemu[PATH_MAX];		/* qemu-x86_64 */
	char *plugin;			/* ptrr-qemu.so */
	char dir[PATH_MAX];		/* the shared directory, or "" */
	char start[48];			/* the plugin's --start argument */
	struct qshm_header *hdr;
	pid_t pid;
	bool reaped;			/* QEMU has exited: */
	int status;			/* its wait status */
	struct core core;
	struct timespec t0;
	uint8_t *scratch;		/* the trace thread() hands over */
	struct hist_psb *psb_scratch;	/* ... and its table of PSBs */
	uint64_t bytes;			/* of trace handed over */
};

/* The recording of source @s. */
static struct qrec *qrec_of(struct tsrc *s)
{
	return (struct qrec *) s;
}

/* Usable if a qemu-x86_64 and ptrr's plugin are there and, for
 * recording, the options are the ones it takes. */
static bool qemu_usable(const struct rec_opts *o, bool live, char *text,
			size_t n)
{
	char qemu[PATH_MAX];
	char *plugin;

	if (!live && (o->pid || o->truth || o->insn_step)) {
		snprintf(text, n, "QEMU does not take --pid, --ground-truth "
			 "or --soft-step yet");
		return false;
	}
	if (!qhost_find_qemu(qemu, sizeof(qemu))) {
		snprintf(text, n, "no qemu-x86_64 found");
		return false;
	}
	plugin = launch_qemu_plugin();
	if (!plugin) {
		snprintf(text, n, "ptrr's QEMU plugin is not built");
		return false;
	}
	free(plugin);
	snprintf(text, n, "QEMU (%s)", qemu);
	return true;
}

/* The plugin's argument for --start: start=ADDR for a number (a guest
 * address), else startoff=OFFSET, SYMBOL[+OFFSET]'s place in the
 * program's file (the plugin finds where QEMU maps it). */
static int start_arg(struct qrec *q)
{
	struct cap_elf_sym sym;
	uint64_t addr, offset;
	char *end, *name;
	int err;

	errno = 0;
	addr = strtoull(q->o->start, &end, 0);
	if (!errno && end != q->o->start && !*end) {
		snprintf(q->start, sizeof(q->start), "start=0x%" PRIx64, addr);
		return 0;
	}
	if (!rec_split_symbol(q->o->start, &name, &offset))
		return ptrr_fail(PTRR_ERR_USAGE, "--start=%s: expected SYMBOL, "
				 "SYMBOL+OFFSET or an address", q->o->start);
	err = cap_elf_find_symbol(q->prog, name, &sym);
	free(name);
	if (!err && !sym.in_file)
		err = ptrr_fail(PTRR_ERR_USAGE, "--start=%s is not in the "
				"program's file", q->o->start);
	if (!err)
		snprintf(q->start, sizeof(q->start), "startoff=0x%" PRIx64,
			 sym.offset + offset);
	return err;
}

/* Says where filter @f is, as the plugin takes it (qemu_shm.h,
 * "filters"): an address is a guest address; a symbol (of the program,
 * or of @FILE) is placed by its offset in its file, as a number with
 * @FILE is, wherever QEMU maps that file (a PIE at 0x4000000000, its
 * libraries where the guest's dynamic linker puts them).  f->file is
 * then the file (the program's real path for its symbols). */
static int filter_place(struct qrec *q, struct rec_filter *f)
{
	int err = 0;

	if (!f->file[0] && f->name[0])
		snprintf(f->file, sizeof(f->file), "%s", q->prog);
	if (f->name[0])
		err = rec_filter_symbol(f, f->file);
	else if (f->file[0]) {
		f->has_offset = true;
		f->file_offset = f->start;
	}
	if (!err && f->file[0] && !f->has_offset)
		err = ptrr_fail(PTRR_ERR_USAGE, "--filter=%s: '%s' is not in "
				"a loadable segment of %s", f->spec, f->name,
				f->file);
	if (!err && strchr(f->file, '\n'))
		err = ptrr_fail(PTRR_ERR_USAGE, "--filter=%s: a file name with "
				"a newline cannot be passed to QEMU's plugin",
				f->spec);
	if (err)
		q->base.usage_error = true;
	return err;
}

/* Writes the filters for the plugin into DIR/filters. */
static int write_filters(const struct qrec *q)
{
	char path[PATH_MAX + 16];
	FILE *out;
	int err = 0;

	snprintf(path, sizeof(path), "%s/filters", q->dir);
	out = fopen(path, "w");
	if (!out)
		return ptrr_fail(PTRR_ERR_IO, "%s: %s", path, strerror(errno));
	for (uint32_t i = 0; i < q->o->nfilters; i++) {
		const struct rec_filter *f = &q->o->filters[i];

		if (f->file[0])
			fprintf(out, "f 0x%" PRIx64 " 0x%" PRIx64 " %s\n",
				f->file_offset, f->size, f->file);
		else
			fprintf(out, "a 0x%" PRIx64 " 0x%" PRIx64 "\n",
				f->start, f->size);
	}
	if (fclose(out))
		err = ptrr_fail(PTRR_ERR_IO, "%s: %s", path, strerror(errno));
	return err;
}

/* Starts QEMU on the program: ASLR off (as the software backend runs
 * programs, and as `setarch -R` runs QEMU's own execution log), cores
 * allowed (the guest's core is the crash's registers and memory). */
static int launch(struct qrec *q)
{
	char pluginarg[PATH_MAX * 2];
	size_t nargs = 0, n = 0;
	char **argv;
	int err;

	while (q->o->argv[nargs])
		nargs++;
	argv = calloc(nargs + 8, sizeof(*argv));
	if (!argv)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	snprintf(pluginarg, sizeof(pluginarg), "%s,dir=%s,size=%zu,full=%d,"
		 "psb=%u,retcomp=%d,tsc=%d,filters=%u%s%s", q->plugin, q->dir,
		 q->o->buffer_size, q->o->full ? 1 : 0,
		 q->o->psb_period ? q->o->psb_period :
				    CAP_PSB_PERIOD_DEFAULT,
		 q->o->noretcomp ? 0 : 1, q->o->tsc ? 1 : 0,
		 q->o->nfilters, q->start[0] ? "," : "", q->start);
	argv[n++] = q->qemu;
	argv[n++] = "-plugin";
	argv[n++] = pluginarg;
	argv[n++] = "-0";
	argv[n++] = q->o->argv[0];
	argv[n++] = q->prog;
	for (size_t i = 1; i < nargs; i++)
		argv[n++] = q->o->argv[i];
	clock_gettime(CLOCK_MONOTONIC, &q->t0);
	err = qhost_spawn(argv, false, true, "ptrr record", &q->pid);
	free(argv);
	return err;
}

/* Starts QEMU with the shared directory beside @bundle. */
static int qemu_start(struct tsrc *s, const char *bundle)
{
	struct qrec *q = qrec_of(s);
	char *copy = strdup(bundle);
	int err = copy ? qhost_make_shared(dirname(copy), q->prog, q->dir,
					   sizeof(q->dir), &q->hdr) :
			 ptrr_fail(PTRR_ERR_NOMEM, "out of memory");

	free(copy);
	if (!err && q->o->nfilters)
		err = write_filters(q);
	return err ? err : launch(q);
}

static const char *qemu_program(struct tsrc *s)
{
	return qrec_of(s)->prog;
}

/* SIGINT or SIGTERM to ptrr: the recording ends.  A Ctrl-C on the
 * terminal reached QEMU as well (the guest program takes it as it would
 * natively, and QEMU exits when it does).  A kill of ptrr alone (a
 * script, a timeout) ends the program as the software backend does: QEMU
 * is killed; the rings in shared memory keep the trace up to the block
 * each thread was in. */
static void qemu_interrupt(struct tsrc *s)
{
	struct qrec *q = qrec_of(s);

	if (!rec_interrupt_from_terminal && q->pid > 0 && !q->reaped)
		kill(q->pid, SIGKILL);
}

/* Waits for QEMU to exit: the program ran to its end, or died. */
static int qemu_run(struct tsrc *s)
{
	struct qrec *q = qrec_of(s);

	if (rec_interrupted)	/* before QEMU was there to be killed */
		qemu_interrupt(s);
	while (waitpid(q->pid, &q->status, 0) < 0)
		if (errno != EINTR)
			return ptrr_fail(PTRR_ERR_IO, "waitpid: %s",
					 strerror(errno));
	q->reaped = true;
	return 0;
}

/* ---- QEMU's guest core */

/* Reads the NT_PRSTATUS notes of note segment [p, p + size). */
static int core_notes(struct core *c, const uint8_t *p, size_t size)
{
	size_t off = 0;

	while (off + sizeof(Elf64_Nhdr) <= size) {
		const Elf64_Nhdr *nh = (const void *) (p + off);
		size_t name = (nh->n_namesz + 3) & ~3u;
		size_t desc = (nh->n_descsz + 3) & ~3u;
		const uint8_t *d = p + off + sizeof(*nh) + name;

		if (off + sizeof(*nh) + name + desc > size)
			break;
		/* struct elf_prstatus on x86-64: pr_cursig at 12, pr_pid
		 * at 32, pr_reg (user_regs_struct order) at 112. */
		if (nh->n_type == NT_PRSTATUS &&
		    nh->n_descsz >= 112 + HIST_NREGS * 8) {
			struct core_thread *t = realloc(c->threads,
				(c->nthreads + 1) * sizeof(*t));
			int16_t sig;
			int32_t tid;

			if (!t)
				return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
			c->threads = t;
			t += c->nthreads++;
			memcpy(&sig, d + 12, sizeof(sig));
			memcpy(&tid, d + 32, sizeof(tid));
			t->signo = sig;
			t->tid = tid;
			memcpy(t->regs, d + 112, sizeof(t->regs));
		}
		off += sizeof(*nh) + name + desc;
	}
	return 0;
}

/* Reads the guest core QEMU wrote for process @pid into the working
 * directory (qemu_PROG_DATE-TIME_PID.core), and removes the file. */
static int read_core(struct qrec *q)
{
	char suffix[32], path[PATH_MAX + 300] = "";
	const char *base = strrchr(q->prog, '/') + 1;
	struct dirent *de;
	struct stat st;
	DIR *d = opendir(".");
	int fd, err = 0;

	snprintf(suffix, sizeof(suffix), "_%d.core", (int) q->pid);
	while (d && (de = readdir(d))) {
		size_t len = strlen(de->d_name), sl = strlen(suffix);

		if (!strncmp(de->d_name, "qemu_", 5) &&
		    !strncmp(de->d_name + 5, base, strlen(base)) &&
		    len > sl && !strcmp(de->d_name + len - sl, suffix)) {
			snprintf(path, sizeof(path), "%s", de->d_name);
			break;
		}
	}
	if (d)
		closedir(d);
	if (!path[0])
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	q->core.size = (size_t) st.st_size;
	q->core.data = malloc(q->core.size ? q->core.size : 1);
	if (q->core.data && read(fd, q->core.data, q->core.size) !=
			    (ssize_t) q->core.size) {
		free(q->core.data);
		q->core.data = NULL;
	}
	close(fd);
	unlink(path);
	if (!q->core.data || q->core.size < sizeof(Elf64_Ehdr))
		return 0;
	const Elf64_Ehdr *eh = (const void *) q->core.data;

	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_type != ET_CORE ||
	    eh->e_phoff + (uint64_t) eh->e_phnum * sizeof(Elf64_Phdr) >
	    q->core.size)
		return 0;
	const Elf64_Phdr *ph = (const void *) (q->core.data + eh->e_phoff);

	for (unsigned i = 0; !err && i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_NOTE &&
		    ph[i].p_offset + ph[i].p_filesz <= q->core.size)
			err = core_notes(&q->core, q->core.data +
					 ph[i].p_offset, ph[i].p_filesz);
	return err;
}

/* The writable memory of the core as the crash's snapshot. */
static int add_core_memory(struct hist_bundle *b, const struct core *c)
{
	const Elf64_Ehdr *eh = (const void *) c->data;
	const Elf64_Phdr *ph;
	uint64_t budget = QEMU_SNAPSHOT_MAX;
	int err = 0;

	if (!c->data || !c->nthreads)
		return 0;
	ph = (const void *) (c->data + eh->e_phoff);
	for (unsigned i = 0; !err && i < eh->e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_W) ||
		    !ph[i].p_filesz || ph[i].p_offset + ph[i].p_filesz >
		    c->size)
			continue;
		if (ph[i].p_filesz > budget) {
			err = hist_bundle_add_note(b, "snapshot: memory at 0x%"
						   PRIx64 " left out (over "
						   "%llu MiB)", ph[i].p_vaddr,
						   QEMU_SNAPSHOT_MAX >> 20);
			continue;
		}
		budget -= ph[i].p_filesz;
		err = hist_bundle_add_snapshot(b, "", ph[i].p_vaddr,
					       c->data + ph[i].p_offset,
					       ph[i].p_filesz);
	}
	return err;
}

static const struct core_thread *core_thread(const struct core *c, int tid)
{
	for (size_t i = 0; i < c->nthreads; i++)
		if (c->threads[i].tid == tid)
			return &c->threads[i];
	return NULL;
}

/* The address the faulting instruction of @t accessed: its explicit
 * memory operand, computed from the core's registers (QEMU's core has no
 * siginfo); 0 if it has none or its code is not in the core. */
static uint64_t fault_address(const struct core *c,
			      const struct core_thread *t)
{
	const Elf64_Ehdr *eh = (const void *) c->data;
	const Elf64_Phdr *ph = (const void *) (c->data + eh->e_phoff);
	uint64_t rip = t->regs[HIST_RIP];

	for (unsigned i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && rip >= ph[i].p_vaddr &&
		    rip < ph[i].p_vaddr + ph[i].p_filesz &&
		    ph[i].p_offset + ph[i].p_filesz <= c->size)
			return cap_operand_address(c->data + ph[i].p_offset +
						   (rip - ph[i].p_vaddr),
						   ph[i].p_vaddr +
						   ph[i].p_filesz - rip,
						   rip, t->regs);
	return 0;
}

/* ---- the bundle */

/* How thread @t ended, in the bundle's terms. */
static struct hist_stop thread_stop(const struct qrec *q,
				    const struct qshm_thread *t,
				    const struct core_thread *ct)
{
	if (t->in_execve)
		return (struct hist_stop){ HIST_STOP_EXEC, 0, 0 };
	if (t->state == QSHM_EXITED)
		return (struct hist_stop){ HIST_STOP_EXITED, t->exit_code, 0 };
	if (ct && ct == &q->core.threads[0] && ct->signo)
		return (struct hist_stop){ HIST_STOP_FAULT, ct->signo,
					   fault_address(&q->core, ct) };
	if (WIFSIGNALED(q->status))
		return (struct hist_stop){ HIST_STOP_SIGNALED,
					   WTERMSIG(q->status), 0 };
	return (struct hist_stop){ HIST_STOP_NONE, 0, 0 };
}

static size_t qemu_nthreads(struct tsrc *s)
{
	return qrec_of(s)->hdr->nthreads;
}

/* The table of PSBs of thread slot @i (@t, its trace @out->trace
 * finished) into @out, in q's scratch: none if the plugin wrote none
 * (the history then decodes the trace to number it). */
static int thread_psbs(struct qrec *q, size_t i, const struct qshm_thread *t,
		       struct tsrc_thread *out)
{
	uint64_t cap = qshm_psbs_cap(q->o->buffer_size, t->em.cfg.psb_period);
	size_t bytes = cap * sizeof(struct hist_psb);
	char path[PATH_MAX + 16];
	void *map;
	int fd, err;

	snprintf(path, sizeof(path), "%s/p%zu", q->dir, i);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	map = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return 0;
	err = cap_psbs_window(map, cap, t->em.psbs.n,
			      out->lost + out->size, out->size,
			      &q->psb_scratch, &out->npsbs);
	out->psbs = q->psb_scratch;
	munmap(map, bytes);
	return err;
}

/* Thread slot @i: its trace (finished here if need be), registers at
 * the crash, end. */
static int qemu_thread(struct tsrc *s, size_t i, struct tsrc_thread *out)
{
	struct qrec *q = qrec_of(s);
	struct qshm_thread t = q->hdr->threads[i];
	const struct core_thread *ct = core_thread(&q->core, t.tid);
	char path[PATH_MAX + 16];
	uint8_t *map, *data;
	int fd, err;

	snprintf(path, sizeof(path), "%s/t%zu", q->dir, i);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ptrr_fail(PTRR_ERR_IO, "%s: %s", path, strerror(errno));
	map = mmap(NULL, q->o->buffer_size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return ptrr_fail(PTRR_ERR_IO, "cannot map %s: %s", path,
				 strerror(errno));
	t.ring.buf = map;

	if (t.ring.alloc > q->o->buffer_size)
		t.ring.alloc = q->o->buffer_size;
	err = qhost_end_trace(&t, &t.ring, ct != NULL,
			      ct ? ct->regs[HIST_RIP] : 0, false);
	data = err ? NULL : realloc(q->scratch, cap_ring_size(&t.ring) + 1);
	if (!err && !data)
		err = ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	if (!err) {
		q->scratch = data;
		cap_ring_copy(&t.ring, data);
		out->tid = t.tid;
		out->trace = data;
		out->size = cap_ring_size(&t.ring);
		out->lost = cap_ring_lost(&t.ring);
		q->bytes += cap_ring_total(&t.ring);
		out->stop = thread_stop(q, &q->hdr->threads[i], ct);
		out->regs.valid = ct != NULL;
		if (ct)
			memcpy(out->regs.r, ct->regs, sizeof(out->regs.r));
	}
	munmap(map, q->o->buffer_size);
	if (!err)
		err = thread_psbs(q, i, &t, out);
	return err;
}

/* What thread slot @t's trace lacks: past full mode's cap, gaps. */
static int thread_notes(struct hist_bundle *b, const struct qrec *q,
			const struct qshm_thread *t)
{
	int err = 0;

	if (t->state == QSHM_FULL)
		err = hist_bundle_add_note(b, "thread %d: full mode passed its "
					   "%zu-byte cap: %" PRIu64 " "
					   "instructions were not traced",
					   (int) t->tid, q->o->buffer_size,
					   t->dropped);
	if (!err && t->gaps)
		err = hist_bundle_add_note(b, "thread %d: %" PRIu64 " gaps "
					   "(OVF) where the thread went where "
					   "no instruction leads, or a signal's "
					   "frame did not say which instruction "
					   "it interrupted", (int) t->tid,
					   t->gaps);
	return err;
}

/* Adds the executable segments of file mapping @m as modules, as the
 * kernel would have mapped them: QEMU maps a guest's ELF file in one
 * host mapping from offset 0, segments and all, and the history's
 * symbols (history/symbols.c) place a file by the segment its mapping's
 * offset falls in.  The whole mapping if the file cannot be read. */
static int add_file_module(struct hist_bundle *b, const struct qshm_module *m)
{
	uint64_t size = m->end - m->start, code[QHOST_MAX_CODE][2];
	size_t n = qhost_code_segments(m->path, m->offset, size, code);
	int err = 0;

	for (size_t i = 0; !err && i < n; i++)
		err = hist_bundle_add_module(b, m->path,
					     m->start + (code[i][0] - m->offset),
					     code[i][1] - code[i][0], code[i][0]);
	if (!err && !n)
		err = hist_bundle_add_module(b, m->path, m->start, size,
					     m->offset);
	return err;
}

/* The modules the guest ran code in, at guest addresses; the code it
 * ran in anonymous memory, from what the plugin kept in @dir. */
static int add_modules(struct hist_bundle *b, const struct qshm_header *h,
		       const char *dir)
{
	int err = 0;

	for (uint32_t i = 0; !err && i < h->nmodules &&
			     i < QSHM_MAX_MODULES; i++) {
		const struct qshm_module *m = &h->modules[i];

		if (m->path[0])
			err = add_file_module(b, m);
		else
			err = qcode_add(b, dir, m);
	}
	return err;
}

/* The notes of the recording: each thread's, how it was made, what it
 * lacks. */
static int qemu_notes(struct tsrc *s, struct hist_bundle *b)
{
	struct qrec *q = qrec_of(s);
	const struct qshm_header *h = q->hdr;
	const struct core *c = &q->core;
	bool signaled = WIFSIGNALED(q->status);
	int err = 0;

	for (uint32_t i = 0; !err && i < h->nthreads; i++)
		err = thread_notes(b, q, &h->threads[i]);
	if (!err)
		err = rec_filters_note_ranges(b, q->o, h->filters, false);
	if (!err)
		err = hist_bundle_add_note(b, "QEMU backend (qemu-x86_64 user "
				       "mode, TCG plugin API %u): the program "
				       "ran on QEMU's CPU model, so code "
				       "that depends on CPUID (libc's "
				       "string routines) may take other "
				       "paths than natively, and its timing "
				       "is an emulator's", h->api);

	if (!err && (h->flags & QSHM_FORKED))
		err = hist_bundle_add_note(b, "fork: the child ran untraced");
	for (uint32_t i = 0; !err && i < h->nthreads; i++)
		if (h->threads[i].in_execve) {
			err = hist_bundle_add_note(b, "execve (thread %d): "
						   "the program it ran went on "
						   "natively, outside QEMU, "
						   "untraced; the stop reason "
						   "is that program's",
						   (int) h->threads[i].tid);
			break;
		}
	if (!err && (h->flags & QSHM_TOO_MANY_THREADS))
		err = hist_bundle_add_note(b, "more than %d threads: the "
					   "later ones are not traced",
					   QSHM_MAX_THREADS);
	if (!err && (h->flags & QSHM_TOO_MANY_MODULES))
		err = hist_bundle_add_note(b, "more than %d mappings of code: "
					   "the later ones are missing",
					   QSHM_MAX_MODULES);
	if (!err && h->error[0])
		err = hist_bundle_add_note(b, "the plugin stopped tracing: %s",
					   h->error);
	if (!err && signaled && !c->nthreads)
		err = hist_bundle_add_note(b, "no guest core was found (core "
					   "files disabled, or the program "
					   "changed directory): no registers "
					   "or memory at the end, and each "
					   "thread's trace ends at the start "
					   "of the block it was in");
	return err;
}

static int qemu_header(struct tsrc *s, struct hist_bundle *b)
{
	struct qrec *q = qrec_of(s);

	cap_emit_cpu(&b->cpu);	/* as the software backend's */
	rec_filters_header(b, q->hdr->filters, q->o->nfilters);
	b->pt.psb_period = q->o->psb_period ? q->o->psb_period :
					      CAP_PSB_PERIOD_DEFAULT;
	b->pt.ret_compression = !q->o->noretcomp;
	free(b->exe);
	b->exe = strdup(q->prog);
	if (!b->exe)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	return hist_bundle_set_argv(b, q->o->argv);
}

/* The modules at guest addresses, and after a crash the core's
 * writable memory. */
static int qemu_memory(struct tsrc *s, struct hist_bundle **out)
{
	struct qrec *q = qrec_of(s);
	int err = hist_bundle_new(out);

	if (!err)
		err = add_modules(*out, q->hdr, q->dir);
	if (!err && WIFSIGNALED(q->status))
		err = add_core_memory(*out, &q->core);
	return err;
}

/* How the program ended: exited, a fault (the core's first thread), or
 * killed by a signal. */
static struct hist_stop qemu_stop(struct tsrc *s)
{
	struct qrec *q = qrec_of(s);

	if (WIFEXITED(q->status))
		return (struct hist_stop){ HIST_STOP_EXITED,
					   WEXITSTATUS(q->status), 0 };
	if (q->core.nthreads && q->core.threads[0].signo)
		return (struct hist_stop){ HIST_STOP_FAULT,
					   q->core.threads[0].signo,
					   fault_address(&q->core,
							 &q->core.threads[0]) };
	if (WIFSIGNALED(q->status))
		return (struct hist_stop){ HIST_STOP_SIGNALED,
					   WTERMSIG(q->status), 0 };
	return (struct hist_stop){ HIST_STOP_NONE, 0, 0 };
}

/* No execve is followed under QEMU. */
static struct hist_bundle *qemu_before_exec(struct tsrc *s)
{
	(void) s;
	return NULL;
}

/* Says why QEMU left nothing to save. */
static int qemu_failed(const struct qrec *q)
{
	char how[64];

	if (WIFSIGNALED(q->status))
		snprintf(how, sizeof(how), "was killed by SIG%s",
			 sigabbrev_np(WTERMSIG(q->status)) ?
			 sigabbrev_np(WTERMSIG(q->status)) : "?");
	else
		snprintf(how, sizeof(how), "exited with status %d",
			 WEXITSTATUS(q->status));
	if (q->hdr->magic != QSHM_MAGIC)
		return ptrr_fail(PTRR_ERR_USAGE, "%s %s before loading ptrr's "
				 "plugin (a QEMU without TCG plugin support? "
				 "install Debian's qemu-user 7.2 or newer, or "
				 "use --backend=soft)", q->qemu, how);
	return ptrr_fail(PTRR_ERR_USAGE, "%s %s before running any of %s "
			 "(see its message above; --backend=soft may run "
			 "it)", q->qemu, how, q->prog);
}

static void qemu_summary(struct tsrc *s, const char *out)
{
	const struct qrec *q = qrec_of(s);
	uint64_t bytes = q->bytes;
	struct timespec t1;
	uint64_t insns = 0;
	double secs;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double) (t1.tv_sec - q->t0.tv_sec) +
	       (double) (t1.tv_nsec - q->t0.tv_nsec) / 1e9;
	for (uint32_t i = 0; i < q->hdr->nthreads; i++)
		insns += q->hdr->threads[i].em.stats.insns;
	fprintf(stderr, "ptrr record: %" PRIu64 " instructions in %u "
		"thread%s under QEMU, %" PRIu64 " bytes of trace in %.2f s "
		"(%.0f instructions/s): %s\n", insns, q->hdr->nthreads,
		q->hdr->nthreads == 1 ? "" : "s", bytes, secs,
		secs > 0 ? (double) insns / secs : 0, out);
	if (q->core.nthreads && q->core.threads[0].signo)
		fprintf(stderr, "ptrr record: the program was killed by "
			"SIG%s; the recording keeps its history up to "
			"there\n", sigabbrev_np(q->core.threads[0].signo) ?
			sigabbrev_np(q->core.threads[0].signo) : "?");
}

/* QEMU has exited: what it left, and the guest's core after a crash. */
static int qemu_finish(struct tsrc *s)
{
	struct qrec *q = qrec_of(s);

	if (q->hdr->magic != QSHM_MAGIC || !q->hdr->nthreads)
		return qemu_failed(q);
	return WIFSIGNALED(q->status) ? read_core(q) : 0;
}

/* Removes the shared directory and frees the recording; QEMU, if still
 * running (a failure before it ended), is killed. */
static void qemu_close(struct tsrc *s)
{
	struct qrec *q = qrec_of(s);

	if (q->pid > 0 && !q->reaped) {
		kill(q->pid, SIGKILL);
		while (waitpid(q->pid, &q->status, 0) < 0 && errno == EINTR)
			;
	}
	qhost_remove_shared(q->dir, &q->hdr);
	free(q->core.threads);
	free(q->core.data);
	free(q->plugin);
	free(q->scratch);
	free(q->psb_scratch);
	free(q);
}

/* Checks the options, qemu-x86_64, the program and the plugin. */
static int qemu_open(struct rec_opts *o, struct tsrc **out)
{
	struct qrec *q = calloc(1, sizeof(*q));
	int err;

	*out = q ? &q->base : NULL;
	if (!q)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	q->o = o;
	if (o->pid || o->truth || o->insn_step)
		return ptrr_fail(PTRR_ERR_USAGE, "--pid, --ground-truth and "
				 "--soft-step are not supported with "
				 "--backend=qemu yet: use --backend=soft");
	err = qhost_check(o->argv[0], q->qemu, q->prog, &q->plugin);
	if (!err && o->start)
		err = start_arg(q);
	for (uint32_t i = 0; !err && i < o->nfilters; i++)
		err = filter_place(q, &o->filters[i]);
	return err;
}

const struct tsrc_ops tsrc_qemu = {
	.name = "qemu",
	.lazy_index = true,
	.usable = qemu_usable,
	.open = qemu_open,
	.start = qemu_start,
	.program = qemu_program,
	.run = qemu_run,
	.interrupt = qemu_interrupt,
	.finish = qemu_finish,
	.nthreads = qemu_nthreads,
	.thread = qemu_thread,
	.header = qemu_header,
	.memory = qemu_memory,
	.notes = qemu_notes,
	.stop = qemu_stop,
	.before_exec = qemu_before_exec,
	.summary = qemu_summary,
	.close = qemu_close,
	.live = &live_qemu,
};
