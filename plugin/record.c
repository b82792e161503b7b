/* `ptrr record`: runs a program, or attaches to a running process
 * (--pid), and records its control flow as Intel PT into a bundle
 * (DESIGN.md §4).
 *
 * Two backends: the software one (plugin/capture: ptrace block- or
 * single-stepping of every thread, a PT packet emitter per thread) and
 * perf intel_pt (record_perf.c: the program runs at native speed, one
 * event per thread).  This file has the options and the run;
 * record_threads.c the traces of the threads and of each program image;
 * record_bundle.c writes the bundle (modules, anonymous code, the crash
 * snapshot).
 */
#include <config.h>

#include "commands.h"
#include "record.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "capture/elfsym.h"
#include "capture/pmu.h"
#include "capture/procmaps.h"

/* Snapshot mode keeps the last 4 MiB by default: perf's default AUX
 * buffer for intel_pt (privileged user).  Software PT measured 0.05 to
 * 0.4 bytes per instruction on the test programs, so that is 10 million
 * instructions or more: minutes of single-stepping, usually the whole
 * run, and still quick to index. */
#define DEFAULT_SNAPSHOT_SIZE (4u << 20)

/* Full mode's cap: effectively unlimited at ptrace speed (hours), but a
 * runaway program cannot exhaust memory; beyond it the trace overflows
 * (OVF) and resumes at the end. */
#define DEFAULT_FULL_CAP (1u << 30)

static const char usage_text[] =
	"Usage: ptrr record [-o BUNDLE] [--backend=auto|soft|perf|qemu] "
	"[--buffer-size=SIZE]\n"
	"                   [--mode=snapshot|full] [--start=SYMBOL|ADDR] "
	"[--pack]\n"
	"                   [--filter=START[/SIZE][@FILE]]...\n"
	"                   [--psb-period=SIZE] [--noretcomp] [--tsc]\n"
	"                   [--ground-truth=FILE] [--soft-step=block|insn]\n"
	"                   (--pid=PID | -- PROG [ARGS])\n";

volatile sig_atomic_t rec_interrupted;

/* The stepper SIGINT and SIGTERM stop. */
static struct cap_stepper *interruptible;

/* SIGINT/SIGTERM: finish the recording: every thread stops, also one
 * waiting in the kernel. */
static void on_interrupt(int sig)
{
	(void) sig;
	rec_interrupted = 1;
	if (interruptible)
		cap_stepper_request_stop(interruptible);
}

/* SIGXFSZ: nothing; the write past RLIMIT_FSIZE fails with EFBIG and
 * says so (a caught signal, unlike an ignored one, is not inherited by
 * the program). */
static void on_file_size(int sig)
{
	(void) sig;
}

/* Prints @msg and the usage; returns the usage-error status. */
static int usage_error(const char *msg, const char *arg)
{
	fprintf(stderr, "ptrr record: %s%s%s\n", msg, arg ? ": " : "",
		arg ? arg : "");
	fputs(usage_text, stderr);
	return 1;
}

int rec_usage_error(const char *msg, const char *arg)
{
	return usage_error(msg, arg);
}

size_t rec_parse_size(const char *s)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || s[0] == '-')
		return 0;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	}
	if (shift && (!strcmp(end, "iB") || !strcmp(end, "B")))
		end += strlen(end);
	if (*end || v > (SIZE_MAX >> shift))
		return 0;
	return (size_t) v << shift;
}

/* PSB periods a CPU can have: 2^(N+11) bytes for psb_period = N, 0..15
 * (SDM 33.2.7.2, IA32_RTIT_CTL.PSBFreq). */
#define MIN_PSB_PERIOD (2u << 10)
#define MAX_PSB_PERIOD (64u << 20)

/* Parses --psb-period=SIZE into @o: a power of two a CPU can have. */
static int parse_psb_period(struct rec_opts *o, const char *arg)
{
	size_t v = rec_parse_size(arg);

	if (v < MIN_PSB_PERIOD || v > MAX_PSB_PERIOD || (v & (v - 1)))
		return usage_error("--psb-period: expected a power of two "
				   "from 2K to 64M", arg);
	o->psb_period = (uint32_t) v;
	return 0;
}

/* Handles option @c of getopt_long, with argument @arg, written @word. */
static int parse_one(struct rec_opts *o, int c, const char *arg,
		     const char *word)
{
	char *end;

	switch (c) {
	case 'o': o->out = arg; return 0;
	case 'B':
		if (!strcmp(arg, "auto")) o->backend = REC_BACKEND_AUTO;
		else if (!strcmp(arg, "soft")) o->backend = REC_BACKEND_SOFT;
		else if (!strcmp(arg, "perf")) o->backend = REC_BACKEND_PERF;
		else if (!strcmp(arg, "qemu")) o->backend = REC_BACKEND_QEMU;
		else return usage_error("unknown backend", arg);
		return 0;
	case 'S':
		o->buffer_size = rec_parse_size(arg);
		return o->buffer_size ? 0 : usage_error("bad size", arg);
	case 'M':
		if (strcmp(arg, "snapshot") && strcmp(arg, "full"))
			return usage_error("unknown mode", arg);
		o->full = !strcmp(arg, "full");
		return 0;
	case 's': o->start = arg; return 0;
	case 'p': o->pack = true; return 0;
	case 'g': o->truth = arg; return 0;
	case 'F': return rec_filter_parse(o, arg);
	case 'Q': return parse_psb_period(o, arg);
	case 'R': o->noretcomp = true; return 0;
	case 'C': o->tsc = true; return 0;
	case 'T':
		if (strcmp(arg, "block") && strcmp(arg, "insn"))
			return usage_error("unknown --soft-step (block or "
					   "insn)", arg);
		o->insn_step = !strcmp(arg, "insn");
		return 0;
	case 'P':
		o->pid = (pid_t) strtol(arg, &end, 10);
		return o->pid > 0 && !*end ? 0 : usage_error("bad pid", arg);
	default: return usage_error("unknown option or missing argument",
				    word);
	}
}

/* --start is an address or SYMBOL[+OFFSET]: a malformed OFFSET is found
 * before the program runs (the symbol is looked up once it is loaded). */
static int check_start(const struct rec_opts *o)
{
	uint64_t offset;
	char *name;

	if (!o->start)
		return 0;
	if (!o->start[0] || !rec_split_symbol(o->start, &name, &offset))
		return usage_error("--start: expected SYMBOL, SYMBOL+OFFSET or "
				   "an address", o->start);
	free(name);
	return 0;
}

/* Checks the options that depend on each other, and fills defaults. */
static int finish_opts(struct rec_opts *o)
{
	uint32_t psb = o->psb_period ? o->psb_period : CAP_PSB_PERIOD_DEFAULT;

	if (!o->argv[0] && !o->pid)
		return usage_error("no program given (after --) and no --pid",
				   NULL);
	if (o->argv[0] && o->pid)
		return usage_error("give either --pid or a program, not both",
				   NULL);
	if (!o->full && o->buffer_size && o->buffer_size < 2 * psb)
		return usage_error("--buffer-size is too small: snapshot mode "
				   "needs two PSB periods (8K by default)",
				   NULL);
	if (!o->buffer_size)
		o->buffer_size = o->full ? DEFAULT_FULL_CAP
					 : DEFAULT_SNAPSHOT_SIZE;
	return check_start(o);
}

/* Parses the arguments of `ptrr record` into @o; 0 or the exit status. */
static int parse_args(int argc, char **argv, struct rec_opts *o)
{
	static const struct option longopts[] = {
		{ "backend", required_argument, NULL, 'B' },
		{ "buffer-size", required_argument, NULL, 'S' },
		{ "mode", required_argument, NULL, 'M' },
		{ "start", required_argument, NULL, 's' },
		{ "pack", no_argument, NULL, 'p' },
		{ "ground-truth", required_argument, NULL, 'g' },
		{ "soft-step", required_argument, NULL, 'T' },
		{ "pid", required_argument, NULL, 'P' },
		{ "filter", required_argument, NULL, 'F' },
		{ "psb-period", required_argument, NULL, 'Q' },
		{ "noretcomp", no_argument, NULL, 'R' },
		{ "tsc", no_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc;

	memset(o, 0, sizeof(*o));
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+o:h", longopts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage_text, stdout);
			return -1;
		}
		rc = parse_one(o, c, optarg, argv[optind - 1]);
		if (rc)
			return rc;
	}
	o->argv = argv + optind;
	return finish_opts(o);
}

/* Picks the backend into *@b: perf if the intel_pt PMU is there (looked
 * for in sysfs, or under $PTRR_SYSFS_ROOT in tests), else (auto) QEMU
 * if qemu-x86_64 and ptrr's plugin are there and a program is to be
 * run, else the software one.  Returns 0, or the exit status after
 * explaining why --backend=perf cannot be had. */
static int choose_backend(const struct rec_opts *o, enum rec_backend *b)
{
	char dir[PATH_MAX], why[PATH_MAX + 96], qemu[PATH_MAX];

	*b = o->backend;
	if (o->backend == REC_BACKEND_SOFT || o->backend == REC_BACKEND_QEMU)
		return 0;
	if (cap_pmu_probe(NULL, dir, sizeof(dir))) {
		*b = REC_BACKEND_PERF;
		return 0;
	}
	snprintf(why, sizeof(why), "intel_pt PMU not found (%s): this CPU or "
		 "VM has no Intel PT", dir);
	if (o->backend == REC_BACKEND_PERF) {
		fprintf(stderr, "ptrr record: %s; use --backend=soft or "
			"--backend=qemu\n", why);
		return 2;
	}
	if (o->pid || o->nfilters || o->truth || o->insn_step) {
		snprintf(qemu, sizeof(qemu), "QEMU does not take --pid, "
			 "--filter, --ground-truth or --soft-step yet");
	} else if (rec_qemu_available(qemu, sizeof(qemu))) {
		*b = REC_BACKEND_QEMU;
		fprintf(stderr, "ptrr record: %s; using QEMU (%s)\n", why, qemu);
		return 0;
	}
	*b = REC_BACKEND_SOFT;
	fprintf(stderr, "ptrr record: %s; %s; using the software backend\n",
		why, qemu);
	return 0;
}

bool rec_split_symbol(const char *spec, char **name, uint64_t *offset)
{
	const char *plus = strrchr(spec, '+');
	char *end;

	*offset = 0;
	if (plus && plus != spec) {
		errno = 0;
		*offset = strtoull(plus + 1, &end, 0);
		if (errno || end == plus + 1 || *end)
			return false;
	}
	*name = plus && plus != spec ? strndup(spec, (size_t) (plus - spec)) :
					strdup(spec);
	return *name != NULL;
}

/* The address --start names: a number, or SYMBOL[+OFFSET] of the program
 * (plus the load base of a PIE, read from the maps of the stopped
 * process). */
static int resolve_start(struct recorder *r, uint64_t *addr)
{
	struct cap_elf_sym sym;
	struct cap_map *maps;
	uint64_t offset;
	char *end, *name;
	size_t n;
	int err;

	errno = 0;
	*addr = strtoull(r->opts->start, &end, 0);
	if (!errno && end != r->opts->start && !*end)
		return 0;
	if (!rec_split_symbol(r->opts->start, &name, &offset))
		return ptrr_fail(PTRR_ERR_USAGE, "--start=%s: expected SYMBOL, "
				 "SYMBOL+OFFSET or an address",
				 r->opts->start);
	err = cap_elf_find_symbol(r->img.exe, name, &sym);
	free(name);
	*addr = sym.value + offset;
	if (err || !sym.pie)
		return err;
	err = cap_maps_read(r->st.pid, &maps, &n);
	if (err)
		return err;
	*addr += cap_maps_base(maps, n, r->img.exe);
	cap_maps_free(maps, n);
	return 0;
}

/* Starts the program or attaches to the process, and runs it to
 * --start.  Tracing begins with cap_stepper_run(). */
static int start(struct recorder *r)
{
	uint64_t addr;
	int err;

	cap_emit_config_default(&r->cfg);
	if (r->opts->psb_period)
		r->cfg.psb_period = r->opts->psb_period;
	r->cfg.ret_compression = !r->opts->noretcomp;
	r->cfg.tsc = r->opts->tsc;
	if (r->opts->pid)
		err = cap_stepper_attach(&r->st, r->opts->pid);
	else
		err = cap_stepper_launch(&r->st, r->opts->argv, false);
	if (!err)
		err = rec_image_program(r, r->opts->pid ? NULL : r->opts->argv);
	if (!err)
		err = rec_filters_start(r);
	if (!err && r->opts->start) {
		err = resolve_start(r, &addr);
		if (!err)
			err = cap_stepper_run_to(&r->st, addr);
		if (!err)
			err = rec_filters_update(r);
	}
	clock_gettime(CLOCK_MONOTONIC, &r->t0);
	return err;
}

/* Bytes of trace written and overwritten, over every thread and image;
 * instructions past the full-mode cap in @dropped. */
void rec_trace_totals(const struct recorder *r, uint64_t *bytes,
		      uint64_t *lost, uint64_t *resyncs, uint64_t *dropped)
{
	*bytes = r->trace_bytes;
	*lost = r->trace_lost;
	*resyncs = r->resyncs;
	*dropped = r->dropped;
	for (size_t i = 0; i < r->img.nthreads; i++) {
		const struct rec_thread *rt = r->img.threads[i];

		*bytes += cap_ring_total(&rt->ring);
		*lost += cap_ring_lost(&rt->ring);
		*resyncs += rt->em.stats.resyncs;
		*dropped += rt->dropped;
	}
}

/* Prints what was recorded, and how fast. */
static void summary(const struct recorder *r, const char *out)
{
	uint64_t bytes, lost, resyncs, dropped;
	char lost_text[96], insn_rate[64], step_rate[64];
	struct timespec t1;
	double secs;

	rec_trace_totals(r, &bytes, &lost, &resyncs, &dropped);
	if (dropped)
		snprintf(lost_text, sizeof(lost_text), "truncated at the cap: "
			 "%" PRIu64 " instructions not traced", dropped);
	else
		snprintf(lost_text, sizeof(lost_text), "%" PRIu64
			 " overwritten", lost);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double) (t1.tv_sec - r->t0.tv_sec) +
	       (double) (t1.tv_nsec - r->t0.tv_nsec) / 1e9;
	/* The rates, where there is one to tell (none of single-steps when
	 * blocks ran natively throughout). */
	rec_rate_text(insn_rate, sizeof(insn_rate), r->st.insns, secs,
		      "instructions");
	rec_rate_text(step_rate, sizeof(step_rate), insn_rate[0] ?
		      r->st.steps : 0, secs, "steps");
	fprintf(stderr, "ptrr record: %" PRIu64 " instructions in %" PRIu64
		" thread%s, %" PRIu64 " bytes of trace (%s) in %.2f s%s%s%s%s%s"
		": %s\n", r->st.insns, r->st.threads_seen,
		r->st.threads_seen == 1 ? "" : "s", bytes, lost_text, secs,
		insn_rate[0] ? " (" : "", insn_rate,
		step_rate[0] ? ", " : "", step_rate, insn_rate[0] ? ")" : "",
		out);
	if (r->st.end.kind == CAP_END_SIGNALED)
		fprintf(stderr, "ptrr record: the program was killed by "
			"SIG%s; the recording keeps its history up to "
			"there\n", sigabbrev_np((int) r->st.end.code) ?
			sigabbrev_np((int) r->st.end.code) : "?");
	if (r->st.slips)
		fprintf(stderr, "ptrr record: note: %" PRIu64 " single-steps "
			"ran two instructions (a hypervisor reporting the step "
			"of an emulated instruction late); both were recorded\n",
			r->st.slips);
	if (resyncs)
		fprintf(stderr, "ptrr record: warning: %" PRIu64 " unexplained "
			"jumps were traced as asynchronous events\n", resyncs);
	if (r->st.attached)
		fprintf(stderr, "ptrr record: detached from process %d\n",
			(int) r->st.pid);
}

/* The default bundle name: PROG's basename + ".ptrr", here. */
static char *default_out(const char *prog)
{
	char *copy = strdup(prog), *name = NULL;

	if (copy && asprintf(&name, "%s.ptrr", basename(copy)) < 0)
		name = NULL;
	free(copy);
	return name;
}

/* Sets *@out to the bundle's name, -o or by default PROG.ptrr here (for
 * --pid, once attached), and checks that it may be written there, so
 * that a recording is not made only to be refused. */
static int bundle_name(const struct recorder *r, char **out)
{
	*out = r->opts->out ? strdup(r->opts->out) :
	       default_out(r->opts->pid ? r->img.exe : r->opts->argv[0]);
	if (!*out)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	return hist_bundle_check_target(*out);
}

/* Records: start, single-step to the end, write the bundle. */
static int record(struct recorder *r)
{
	char *out = NULL;
	int err = 0;

	if (r->opts->out || !r->opts->pid)
		err = bundle_name(r, &out);
	if (!err)
		err = start(r);
	if (!err && !out)
		err = bundle_name(r, &out);
	if (!err)	/* in case the process is gone at the end */
		err = rec_read_memory_map(r);
	/* The ground truth single-steps: it must not depend on the block
	 * logic it checks.  The perf backend does not step at all. */
	r->st.block_mode = !r->opts->insn_step && !r->opts->truth && !r->perf;
	if (!err && r->perf)
		err = rec_perf_run(r);
	else if (!err) {
		cap_affinity_pin(&r->affinity, &r->st);
		rec_progress_start(r);
		err = cap_stepper_run(&r->st, rec_on_event, r);
		rec_progress_end(r);
	}
	if (!err)
		err = rec_finish_threads(r);
	if (!err)
		err = rec_write_bundle(r, out, rec_interrupted);
	if (!err && r->perf)
		rec_perf_summary(r, out);
	else if (!err)
		summary(r, out);
	free(out);
	return err;
}

/* Records under QEMU (record_qemu.c) into -o or PROG.ptrr here. */
static int record_qemu(const struct rec_opts *o)
{
	char *out = o->out ? strdup(o->out) : default_out(o->argv[0]);
	int err = out ? hist_bundle_check_target(out) :
			ptrr_fail(PTRR_ERR_NOMEM, "out of memory");

	if (!err)
		err = rec_qemu_record(o, out);
	if (err)
		fprintf(stderr, "ptrr record: %s\n", ptrr_errmsg(err));
	free(out);
	return err ? 2 : 0;
}

/* Releases what the recorder holds and lets the program go. */
static void cleanup(struct recorder *r)
{
	interruptible = NULL;
	cap_affinity_restore(&r->affinity, &r->st);
	cap_stepper_finish(&r->st);
	cap_stepper_free(&r->st);
	rec_free_images(r);
	free(r->perf);
}

/* Catches SIGINT and SIGTERM without restarting system calls, so that a
 * wait for the program returns to see them, and SIGXFSZ. */
static void catch_signals(struct cap_stepper *st)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_interrupt;
	interruptible = st;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_file_size;
	sigaction(SIGXFSZ, &sa, NULL);
}

int ptrr_cmd_record(int argc, char **argv)
{
	struct rec_opts opts;
	struct recorder r;
	enum rec_backend backend;
	bool perf;
	int rc, err;

	rc = parse_args(argc, argv, &opts);
	if (rc)
		return rc < 0 ? 0 : rc;
	rc = choose_backend(&opts, &backend);
	if (rc)
		return rc;
	if (backend == REC_BACKEND_QEMU)
		return record_qemu(&opts);
	perf = backend == REC_BACKEND_PERF;
	memset(&r, 0, sizeof(r));
	r.opts = &opts;
	rc = perf ? rec_perf_setup(&r) : 0;
	if (rc)
		return rc;
	catch_signals(&r.st);
	err = record(&r);
	if (err)
		fprintf(stderr, "ptrr record: %s\n", ptrr_errmsg(err));
	cleanup(&r);
	return err ? (r.usage_error ? 1 : 2) : 0;
}
