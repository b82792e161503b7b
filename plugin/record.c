/* `ptrr record`: runs a program, or attaches to a running process
 * (--pid), and records its control flow as Intel PT into a bundle
 * (DESIGN.md §4).
 *
 * This file has the options; the recording is made by a trace source
 * (source.h: the software backend, perf intel_pt or QEMU), chosen by
 * --backend, and written by the code every source shares (source.c).
 */
#include <config.h>

#include "commands.h"
#include "record.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	"                   [--index=full|lazy] [--filter=START[/SIZE][@FILE]]...\n"
	"                   [--psb-period=SIZE] [--noretcomp] [--tsc]\n"
	"                   [--ground-truth=FILE] [--soft-step=block|insn]\n"
	"                   [--regs-every=N]\n"
	"                   (--pid=PID | -- PROG [ARGS])\n";

volatile sig_atomic_t rec_interrupted;
volatile sig_atomic_t rec_interrupt_from_terminal;

/* The source SIGINT and SIGTERM stop. */
static struct tsrc *volatile interruptible;

/* SIGINT/SIGTERM: finish the recording: every thread stops, also one
 * waiting in the kernel. */
static void on_interrupt(int sig, siginfo_t *si, void *uc)
{
	(void) sig;
	(void) uc;
	rec_interrupt_from_terminal = si && si->si_code == SI_KERNEL;
	rec_interrupted = 1;
	if (interruptible)
		interruptible->ops->interrupt(interruptible);
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
		if (strcmp(arg, "auto") && !tsrc_named(arg))
			return usage_error("unknown backend", arg);
		o->backend = arg;
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
	case 'I':
		if (strcmp(arg, "full") && strcmp(arg, "lazy"))
			return usage_error("unknown --index (full or lazy)",
					   arg);
		o->index = !strcmp(arg, "full") ? REC_INDEX_FULL
						: REC_INDEX_LAZY;
		return 0;
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
	case 'E':
		errno = 0;
		o->regs_every = strtoull(arg, &end, 10);
		o->regs_every_given = true;
		return !errno && end != arg && !*end && arg[0] != '-' ? 0 :
		       usage_error("--regs-every: expected a number of "
				   "instructions (0: none)", arg);
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
	if (!o->regs_every_given)
		o->regs_every = REC_REGS_EVERY_DEFAULT;
	return check_start(o);
}

int rec_opts_parse(int argc, char **argv, struct rec_opts *o)
{
	static const struct option longopts[] = {
		{ "backend", required_argument, NULL, 'B' },
		{ "buffer-size", required_argument, NULL, 'S' },
		{ "mode", required_argument, NULL, 'M' },
		{ "start", required_argument, NULL, 's' },
		{ "pack", no_argument, NULL, 'p' },
		{ "index", required_argument, NULL, 'I' },
		{ "ground-truth", required_argument, NULL, 'g' },
		{ "soft-step", required_argument, NULL, 'T' },
		{ "regs-every", required_argument, NULL, 'E' },
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

/* Catches SIGINT and SIGTERM without restarting system calls, so that a
 * wait for the program returns to see them, and SIGXFSZ. */
static void catch_signals(struct tsrc *s)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_sigaction = on_interrupt;
	sa.sa_flags = SA_SIGINFO;
	interruptible = s;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_flags = 0;
	sa.sa_handler = on_file_size;
	sigaction(SIGXFSZ, &sa, NULL);
}

int ptrr_cmd_record(int argc, char **argv)
{
	const struct tsrc_ops *ops;
	struct rec_opts opts;
	struct tsrc *s = NULL;
	int rc, err;

	rc = rec_opts_parse(argc, argv, &opts);
	if (rc)
		return rc < 0 ? 0 : rc;
	rc = tsrc_choose("ptrr record", opts.backend, &opts, false, &ops);
	if (rc)
		return rc;
	err = tsrc_open(ops, &opts, &s);
	if (!err && ops->interrupt)
		catch_signals(s);
	if (!err)
		err = tsrc_record(s, &rec_interrupted);
	if (err)
		fprintf(stderr, "ptrr record: %s\n", ptrr_errmsg(err));
	rc = err ? (s && s->usage_error ? 1 : 2) : 0;
	interruptible = NULL;
	if (s)
		ops->close(s);
	return rc;
}
