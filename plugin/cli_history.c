/* The history-browsing subcommands (`ptrr info`, `ptrr insn-history`,
 * `ptrr call-history`) and the printers they share with `ptrr shell`.
 *
 * The listings follow GDB 13's btrace output so that what a user sees here
 * reads like what GDB shows for `record instruction-history` and
 * `record function-call-history`:
 *   - instructions: gdb/disasm.c gdb_pretty_print_disassembler::
 *     pretty_print_insn — "N\t   0x%016x <func+off>:\tinsn", with "=> "
 *     instead of the three spaces where the address is the current PC;
 *   - gaps: gdb/record-btrace.c btrace_insn_history and
 *     btrace_ui_out_decode_error — "N\t[decode error (CODE): REASON]";
 *   - calls: gdb/record-btrace.c btrace_call_history — "N\t", two spaces
 *     per level for /c, the name or "??", "\tinst A,B" for /i
 *     (btrace_call_history_insn_range), "\tat FILE:MIN,MAX" for /l
 *     (btrace_call_history_src_line; ":LINE" alone when MIN == MAX);
 *   - info: record_btrace_target::info_record — "Recorded N instructions
 *     in M functions (K gaps) for thread T (...)."
 */
#include <config.h>

#include "cli.h"
#include "commands.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Views                                                              */
/* ------------------------------------------------------------------ */

/* Index of the thread a user most likely wants: the first that stopped on
 * a fault or a fatal signal, else the first. */
static size_t default_thread(const struct hist_bundle *b)
{
	for (size_t i = 0; i < b->nthreads; i++) {
		enum hist_stop_kind k = b->threads[i].stop.kind;

		if (k == HIST_STOP_FAULT || k == HIST_STOP_SIGNALED)
			return i;
	}
	return 0;
}

/* Selects thread index @i, building its history; the current PC becomes
 * the PC the thread had when its trace ended. */
static int select_index(struct cli_view *v, size_t i)
{
	const struct hist_thread *t = &hist_recording_bundle(v->rec)->threads[i];
	struct history *h;
	int err = hist_recording_history(v->rec, i, &h);

	if (err < 0)
		return err;
	v->thread = i;
	v->hist = h;
	v->have_pc = t->regs.valid || t->have_end_ip;
	v->pc = t->regs.valid ? t->regs.r[HIST_RIP] : t->end_ip;
	return 0;
}

int cli_view_open(struct cli_view *v, const char *dir)
{
	const struct hist_bundle *b;
	int err;

	memset(v, 0, sizeof(*v));
	v->bundle = dir;
	err = hist_recording_open(dir, &v->rec);
	if (err < 0)
		return err;
	b = hist_recording_bundle(v->rec);
	for (char **w = b->warnings; w && *w; w++)
		fprintf(stderr, "warning: %s\n", *w);
	if (b->nthreads == 0)
		return ptrr_fail(PTRR_ERR_BUNDLE,
				 "%s records no threads: record again", dir);
	return select_index(v, default_thread(b));
}

void cli_view_close(struct cli_view *v)
{
	if (v->rec)
		hist_recording_close(v->rec);
	memset(v, 0, sizeof(*v));
}

int cli_view_tid(const struct cli_view *v)
{
	return hist_recording_bundle(v->rec)->threads[v->thread].tid;
}

/* Writes ", "-separated task ids of @b's threads into @buf. */
static void list_tids(const struct hist_bundle *b, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < b->nthreads && len < size; i++)
		len += snprintf(buf + len, size - len, "%s%d", i ? ", " : "",
				b->threads[i].tid);
}

int cli_view_select(struct cli_view *v, int tid)
{
	const struct hist_bundle *b = hist_recording_bundle(v->rec);
	char tids[256];
	size_t i;

	if (hist_recording_find_tid(v->rec, tid, &i) < 0) {
		list_tids(b, tids, sizeof(tids));
		return ptrr_fail(PTRR_ERR_NOTFOUND,
				 "no thread %d in %s (threads: %s)", tid,
				 v->bundle, tids);
	}
	return select_index(v, i);
}

int cli_runtime_error(int err)
{
	fprintf(stderr, "ptrr: %s\n", ptrr_errmsg(err));
	return 2;
}

bool cli_parse_number(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long n;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno || *end || n == 0)
		return false;
	*out = n;
	return true;
}

/* ------------------------------------------------------------------ */
/* Instruction listings                                               */
/* ------------------------------------------------------------------ */

/* Disassembles the instruction at @ip from the recording's image into
 * @buf, or says why it cannot. */
static void disasm_at(struct cli_view *v, uint64_t ip, char *buf,
		      size_t size)
{
	uint8_t code[15];
	ssize_t n = hist_image_read(hist_recording_image(v->rec), ip, code,
				    sizeof(code));

	if (n <= 0)
		snprintf(buf, size, "<code not in the recording>");
	else if (hist_disasm(code, n, ip, hist_recording_symtab(v->rec), buf,
			     size) < 0)
		snprintf(buf, size, "(bad)");
}

/* Writes " <func+off>" for @ip, as GDB's build_address_symbolic, or
 * nothing if no symbol covers it. */
static void print_symbolic(struct cli_view *v, FILE *out, uint64_t ip)
{
	struct hist_symtab *st = hist_recording_symtab(v->rec);
	struct hist_sym sym;

	if (st && hist_sym_lookup(st, ip, &sym) == 0)
		fprintf(out, " <%s+%" PRIu64 ">", sym.name, ip - sym.start);
}

/* Writes the decode error of gap entry @e as GDB does, without the
 * number: "[decode error (CODE): REASON]". */
static void print_gap(FILE *out, const struct hist_entry *e)
{
	char reason[256];

	fprintf(out, "[decode error (%d): %s]\n", e->gap_code,
		hist_gap_reason(e, reason, sizeof(reason)));
}

/* Writes entry @e as one listing line in the style @flags select. */
static void print_entry(struct cli_view *v, FILE *out,
			const struct hist_entry *e, unsigned flags)
{
	char text[160];

	if (flags & CLI_INSN_RAW) {
		if (e->kind == HIST_ENTRY_GAP)
			fprintf(out, "%" PRIu64 " [gap] %s\n", e->number,
				hist_gap_reason(e, text, sizeof(text)));
		else
			fprintf(out, "%" PRIu64 " 0x%" PRIx64 "\n", e->number,
				e->ip);
		return;
	}
	fprintf(out, "%" PRIu64 "\t", e->number);
	if (e->kind == HIST_ENTRY_GAP) {
		print_gap(out, e);
		return;
	}
	fprintf(out, "%s0x%016" PRIx64,
		v->have_pc && v->pc == e->ip ? "=> " : "   ", e->ip);
	print_symbolic(v, out, e->ip);
	disasm_at(v, e->ip, text, sizeof(text));
	fprintf(out, ":\t%s\n", text);
}

/* Fails with PTRR_ERR_RANGE unless @from is an entry of the view. */
static int check_entry(const struct cli_view *v, uint64_t from)
{
	uint64_t size = hist_size(v->hist);

	if (from >= 1 && from <= size)
		return 0;
	if (size == 0)
		return ptrr_fail(PTRR_ERR_RANGE,
				 "thread %d of %s has no recorded instructions",
				 cli_view_tid(v), v->bundle);
	return ptrr_fail(PTRR_ERR_RANGE,
			 "instruction %" PRIu64 " is outside the history of "
			 "thread %d (1-%" PRIu64 ")", from, cli_view_tid(v),
			 size);
}

int cli_print_insns(struct cli_view *v, FILE *out, uint64_t from,
		    uint64_t count, unsigned flags)
{
	struct hist_cursor *c;
	int err = check_entry(v, from);

	if (err < 0)
		return err;
	err = hist_cursor_new(v->hist, &c);
	if (err < 0)
		return err;
	err = hist_cursor_seek(c, from);
	for (uint64_t n = 0; err >= 0 && n < count;) {
		print_entry(v, out, hist_cursor_entry(c), flags);
		if (++n < count)
			err = hist_cursor_next(c); /* PTRR_ERR_RANGE at the end */
	}
	hist_cursor_free(c);
	return err < 0 && err != PTRR_ERR_RANGE ? err : 0;
}

/* ------------------------------------------------------------------ */
/* Call listings                                                      */
/* ------------------------------------------------------------------ */

/* Writes the lowest and highest line of @call's instructions that lie in
 * the source file of its function, as GDB's btrace_call_history_src_line:
 * "FILE:MIN,MAX", "FILE:LINE", "FILE", or nothing without line info. */
static int print_call_lines(struct cli_view *v, FILE *out,
			    struct hist_cursor *c, const struct hist_call *call)
{
	struct hist_symtab *st = hist_recording_symtab(v->rec);
	struct hist_line fn, l;
	int lo = INT_MAX, hi = INT_MIN, err;

	if (!st || hist_line_lookup(st, call->func, &fn) < 0)
		return 0;
	fputs(fn.file, out);
	err = hist_cursor_seek(c, call->first);
	for (uint64_t n = call->first; err >= 0 && n <= call->last; n++) {
		const struct hist_entry *e = hist_cursor_entry(c);

		if (e->kind == HIST_ENTRY_INSN
		    && hist_line_lookup(st, e->ip, &l) == 0 && l.line > 0
		    && strcmp(l.file, fn.file) == 0) {
			lo = l.line < lo ? l.line : lo;
			hi = l.line > hi ? l.line : hi;
		}
		if (n < call->last)
			err = hist_cursor_next(c);
	}
	if (err >= 0 && lo <= hi)
		fprintf(out, lo == hi ? ":%d" : ":%d,%d", lo, hi);
	return err < 0 ? err : 0;
}

/* Name of the function @call runs in, "??" if no symbol covers it. */
static const char *call_name(struct cli_view *v, const struct hist_call *call)
{
	struct hist_symtab *st = hist_recording_symtab(v->rec);
	struct hist_sym sym;

	if (st && hist_sym_lookup(st, call->func, &sym) == 0)
		return sym.name;
	return "??";
}

/* Writes one line of the call history for @call. */
static int print_call(struct cli_view *v, FILE *out, struct hist_cursor *c,
		      const struct hist_call *call, unsigned flags)
{
	int err = 0;

	fprintf(out, "%" PRIu32 "\t", call->id);
	if (call->flags & HIST_CALL_GAP) {
		err = hist_cursor_seek(c, call->first);
		if (err >= 0)
			print_gap(out, hist_cursor_entry(c));
		return err;
	}
	if (flags & CLI_CALL_INDENT)
		for (int32_t i = 0; i < call->level; i++)
			fputs("  ", out);
	fputs(call_name(v, call), out);
	if (flags & CLI_CALL_INSN_RANGE)
		fprintf(out, "\tinst %" PRIu64 ",%" PRIu64, call->first,
			call->last);
	if (flags & CLI_CALL_LINES) {
		fputs("\tat ", out);
		err = print_call_lines(v, out, c, call);
	}
	fputc('\n', out);
	return err;
}

int cli_print_call_range(struct cli_view *v, FILE *out, uint64_t first,
			 uint64_t count, unsigned flags)
{
	struct hist_call call;
	struct hist_cursor *c = NULL;
	size_t n;
	int err = hist_calls_count(v->hist, &n);

	if (err < 0)
		return err;
	if (first < 1 || (first > n && n > 0))
		return ptrr_fail(PTRR_ERR_RANGE, "no function call segment %"
				 PRIu64 ": there are %zu", first, n);
	err = hist_cursor_new(v->hist, &c);
	for (size_t i = first - 1; err >= 0 && i < n && i - (first - 1) < count;
	     i++) {
		err = hist_call_get(v->hist, (uint32_t) i + 1, &call);
		if (err >= 0)
			err = print_call(v, out, c, &call, flags);
	}
	if (c)
		hist_cursor_free(c);
	return err < 0 ? err : 0;
}

int cli_print_calls(struct cli_view *v, FILE *out, unsigned flags)
{
	return cli_print_call_range(v, out, 1, UINT64_MAX, flags);
}

/* ------------------------------------------------------------------ */
/* The bundle report                                                  */
/* ------------------------------------------------------------------ */

/* "SIGSEGV" for @sig, or "signal 77". */
static const char *signal_name(int sig, char *buf, size_t size)
{
	const char *abbrev = sigabbrev_np(sig);

	if (abbrev)
		snprintf(buf, size, "SIG%s", abbrev);
	else
		snprintf(buf, size, "signal %d", sig);
	return buf;
}

/* Writes how a thread or the process ended; thread @t (may be NULL)
 * gives the PC where it stopped. */
static void print_stop(FILE *out, const struct hist_stop *s,
		       const struct hist_thread *t)
{
	char sig[32];

	switch (s->kind) {
	case HIST_STOP_NONE:
		fputs("still running when the recording ended", out);
		break;
	case HIST_STOP_EXITED:
		if (s->code < 0)
			fputs("ended (how is not recorded: no exit status or "
			      "signal)", out);
		else
			fprintf(out, "exited with status %d", s->code);
		break;
	case HIST_STOP_SIGNALED:
		fprintf(out, "killed by %s",
			signal_name(s->code, sig, sizeof(sig)));
		break;
	case HIST_STOP_FAULT:
		fprintf(out, "stopped by %s",
			signal_name(s->code, sig, sizeof(sig)));
		break;
	case HIST_STOP_INTERRUPTED:
		fputs("interrupted by the user", out);
		break;
	case HIST_STOP_EXEC:
		fputs("called execve: another program followed", out);
		break;
	}
	if (t && t->regs.valid && (s->kind == HIST_STOP_FAULT
				   || s->kind == HIST_STOP_INTERRUPTED))
		fprintf(out, " at 0x%" PRIx64, t->regs.r[HIST_RIP]);
	else if (t && !t->regs.valid && t->have_end_ip)
		fprintf(out, " at 0x%" PRIx64, t->end_ip);
	/* Only faults on an address have one (not SIGABRT, say). */
	if (s->kind == HIST_STOP_FAULT && (s->code == SIGSEGV ||
					   s->code == SIGBUS))
		fprintf(out, " (fault address 0x%" PRIx64 ")", s->addr);
	fputc('\n', out);
}

/* The thread that ended the process the way @b says, for the PC of the
 * stop; NULL if no thread matches. */
static const struct hist_thread *stop_thread(const struct hist_bundle *b)
{
	for (size_t i = 0; i < b->nthreads; i++)
		if (b->threads[i].stop.kind == b->stop.kind)
			return &b->threads[i];
	return NULL;
}

/* Writes @word to @out as /bin/sh would read it back: as it is if it
 * has only characters the shell takes literally, else in single quotes
 * (a quote inside as '\'').  The @first word of a command is quoted if
 * it has an '=' (else the shell would take it for an assignment). */
static void put_shell_word(const char *word, bool first, FILE *out)
{
	static const char plain[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "abcdefghijklmnopqrstuvwxyz"
				    "0123456789_@%+=:,./-";

	if (*word && word[strspn(word, plain)] == '\0' &&
	    !(first && strchr(word, '='))) {
		fputs(word, out);
		return;
	}
	fputc('\'', out);
	for (; *word; word++)
		if (*word == '\'')
			fputs("'\\''", out);
		else
			fputc(*word, out);
	fputc('\'', out);
}

/* Writes what was recorded, how and on what. */
static void print_bundle_facts(const struct cli_view *v,
			       const struct hist_bundle *b, FILE *out)
{
	fprintf(out, "Recording: %s (format version %d)\n", v->bundle,
		b->version);
	fprintf(out, "Program: %s\n", b->exe ? b->exe : "??");
	fputs("Arguments:", out);
	for (char **a = b->argv; a && *a; a++) {
		fputc(' ', out);
		put_shell_word(*a, a == b->argv, out);
	}
	fprintf(out, "\nRecording format: Intel Processor Trace (%s backend",
		b->pt.backend[0] ? b->pt.backend : "unknown");
	if (b->pt.psb_period)
		fprintf(out, ", PSB every %" PRIu32 " bytes", b->pt.psb_period);
	fprintf(out, ", return compression %s).\n",
		b->pt.ret_compression ? "on" : "off");
	for (uint32_t i = 0; i < b->pt.nfilters && i < 4; i++)
		fprintf(out, "IP filter: 0x%" PRIx64 "/0x%" PRIx64 "\n",
			b->pt.filters[i].start, b->pt.filters[i].size);
	if (b->cpu.vendor[0])
		fprintf(out, "CPU: %s family %u model %u stepping %u\n",
			b->cpu.vendor, b->cpu.family, b->cpu.model,
			b->cpu.stepping);
	else
		fputs("CPU: unknown\n", out);
	fputs("Stop reason: ", out);
	print_stop(out, &b->stop, stop_thread(b));
}

/* Writes the executable mappings and the notes of @b. */
static void print_modules(const struct hist_bundle *b, FILE *out)
{
	fprintf(out, "Modules (%zu):\n", b->nmodules + b->ncode);
	for (size_t i = 0; i < b->nmodules; i++) {
		const struct hist_module *m = &b->modules[i];

		fprintf(out, "  0x%016" PRIx64 "-0x%016" PRIx64 " %s",
			m->start, m->start + m->size, m->path);
		if (m->build_id)
			fprintf(out, " (build-id %s)", m->build_id);
		fputs(m->file ? " [packed]\n" : "\n", out);
	}
	for (size_t i = 0; i < b->ncode; i++)
		fprintf(out, "  0x%016" PRIx64 "-0x%016" PRIx64 " %s [copy]\n",
			b->code[i].start, b->code[i].start + b->code[i].size,
			b->code[i].name);
	for (char **n = b->notes; n && *n; n++)
		fprintf(out, "Note: %s\n", *n);
	if (b->before_exec_dir)
		fprintf(out, "Before execve: %s/%s (the recording of the "
			"program this one was execve'd from)\n",
			b->dir ? b->dir : ".", b->before_exec_dir);
}

/* Writes the facts and GDB's "Recorded ..." line for thread index @i. */
static int print_thread(struct cli_view *v, size_t i, FILE *out)
{
	const struct hist_thread *t = &hist_recording_bundle(v->rec)->threads[i];
	struct history *h;
	size_t ncalls;
	int err = hist_recording_history(v->rec, i, &h);

	if (err >= 0)
		err = hist_calls_count(h, &ncalls);
	if (err < 0)
		return err;
	fprintf(out, "Thread %zu (LWP %d)%s: ", i + 1, t->tid,
		i == v->thread ? " [selected]" : "");
	print_stop(out, &t->stop, t);
	fprintf(out, "  Trace: %zu bytes", t->trace_size);
	if (t->trace_lost)
		fprintf(out, " (%" PRIu64 " bytes lost before its start)",
			t->trace_lost);
	fprintf(out, "\n  Recorded %" PRIu64 " instructions in %zu functions "
		"(%" PRIu64 " gaps) for thread %zu (LWP %d).\n",
		hist_insn_count(h), ncalls, hist_size(h) - hist_insn_count(h),
		i + 1, t->tid);
	fprintf(out, "  Segments: %zu (index: %zu bytes, %s)\n",
		hist_nsegments(h), hist_index_bytes(h),
		!hist_recording_index_saved(v->rec, i) ? "built on opening" :
		hist_calls_from_index(h) ? "read from the bundle" :
		"read from the bundle; call segments computed on opening");
	return 0;
}

/* What values the recording of @b can show, and where (replay/known.c). */
static void print_values(const struct hist_bundle *b, FILE *out)
{
	uint64_t snap = 0;
	size_t regs = 0, exited = 0;

	for (size_t i = 0; i < b->nsnapshot; i++)
		snap += b->snapshot[i].size;
	for (size_t i = 0; i < b->nthreads; i++) {
		bool gone = b->threads[i].stop.kind == HIST_STOP_EXITED;

		regs += b->threads[i].regs.valid && !gone;
		exited += b->threads[i].regs.valid && gone;
	}
	fprintf(out, "Values: at the end of history, the registers of %zu "
		"of %zu threads", regs, b->nthreads);
	if (exited)
		fprintf(out, " (and of %zu that exited: those the exit system "
			"call leaves, read as they left)", exited);
	fputs(" and ", out);
	if (snap)
		fprintf(out, "%" PRIu64 " bytes of writable memory (the "
			"snapshot)", snap);
	else
		fputs("no writable memory", out);
	fputs("; at any earlier instruction only what the trace proves: "
	      "the instruction pointer, rsp, rbp and frame addresses where "
	      "the call frame information proves them, code and read-only "
	      "data, and the registers and memory recovered by undoing, "
	      "from the end, the instructions executed since (memory only "
	      "in a process of one thread).  Other registers and writable "
	      "memory (globals, heap, stack) may have changed since: gdb "
	      "shows such registers <unavailable> and refuses to read such "
	      "memory.\n", out);
}

int cli_print_info(struct cli_view *v, FILE *out)
{
	const struct hist_bundle *b = hist_recording_bundle(v->rec);
	int err = 0;

	print_bundle_facts(v, b, out);
	print_modules(b, out);
	print_values(b, out);
	for (size_t i = 0; err >= 0 && i < b->nthreads; i++)
		err = print_thread(v, i, out);
	return err < 0 ? err : 0;
}

/* ------------------------------------------------------------------ */
/* The subcommands                                                    */
/* ------------------------------------------------------------------ */

/* Options common to the three subcommands. */
struct cli_args {
	int tid;		/* 0: the default thread */
	unsigned flags;
	uint64_t from, count;
	const char *bundle;
};

/* Prints "ptrr CMD: MESSAGE" and the usage line; returns exit status 1. */
static int usage_error(const char *usage, const char *cmd, const char *fmt,
		       ...)
{
	va_list ap;

	fprintf(stderr, "ptrr %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nusage: %s\n", usage);
	return 1;
}

/* Parses one option @opt (a getopt_long result) with argument @arg into
 * @a; returns false if its argument is malformed. */
static bool parse_option(int opt, const char *arg, struct cli_args *a)
{
	uint64_t n;

	switch (opt) {
	case 't':
		if (!cli_parse_number(arg, &n) || n > INT_MAX)
			return false;
		a->tid = (int) n;
		return true;
	case 'f':
		return cli_parse_number(arg, &a->from);
	case 'c':
		return cli_parse_number(arg, &a->count);
	}
	a->flags |= (unsigned) opt >> 8;
	return true;
}

/* Option values: the flag to set, shifted by 8, for flag options. */
#define OPT_FLAG(f) ((int) ((f) << 8))

static const struct option insn_options[] = {
	{ "thread", required_argument, NULL, 't' },
	{ "raw", no_argument, NULL, OPT_FLAG(CLI_INSN_RAW) },
	{ "from", required_argument, NULL, 'f' },
	{ "count", required_argument, NULL, 'c' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static const struct option call_options[] = {
	{ "thread", required_argument, NULL, 't' },
	{ "lines", no_argument, NULL, OPT_FLAG(CLI_CALL_LINES) },
	{ "insn-range", no_argument, NULL, OPT_FLAG(CLI_CALL_INSN_RANGE) },
	{ "indent", no_argument, NULL, OPT_FLAG(CLI_CALL_INDENT) },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static const struct option info_options[] = {
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Parses argv of subcommand argv[0] with @options into @a.  Returns -1 if
 * the command should go on, else the exit status (0 after --help, 1 after
 * a usage error, which has been reported). */
static int parse_args(int argc, char **argv, const struct option *options,
		      const char *usage, struct cli_args *a)
{
	int opt, index;

	memset(a, 0, sizeof(*a));
	a->from = 1;
	a->count = UINT64_MAX;
	opterr = 0;
	optind = 0;
	while ((opt = getopt_long(argc, argv, "", options, &index)) != -1) {
		if (opt == 'h') {
			printf("usage: %s\n", usage);
			return 0;
		}
		if (opt == '?')
			return usage_error(usage, argv[0], "invalid option '%s'",
					   argv[optind - 1]);
		if (!parse_option(opt, optarg, a))
			return usage_error(usage, argv[0],
					   "--%s wants a number from 1, not '%s'",
					   options[index].name, optarg);
	}
	if (optind >= argc)
		return usage_error(usage, argv[0], "missing BUNDLE");
	if (optind + 1 < argc)
		return usage_error(usage, argv[0], "unexpected argument '%s'",
				   argv[optind + 1]);
	a->bundle = argv[optind];
	return -1;
}

/* Opens the view @a names: its bundle and thread. */
static int open_view(struct cli_view *v, const struct cli_args *a)
{
	int err = cli_view_open(v, a->bundle);

	if (err >= 0 && a->tid)
		err = cli_view_select(v, a->tid);
	return err;
}

/* Ends a subcommand: reports @err, closes @v, flushes stdout; returns
 * the exit status. */
static int finish(struct cli_view *v, int err)
{
	int status = err < 0 ? cli_runtime_error(err) : 0;

	cli_view_close(v);
	if (fflush(stdout) != 0 && status == 0)
		status = cli_runtime_error(ptrr_fail(PTRR_ERR_IO,
				"cannot write the output: %s", strerror(errno)));
	return status;
}

int ptrr_cmd_info(int argc, char **argv)
{
	static const char usage[] = "ptrr info BUNDLE";
	struct cli_args a;
	struct cli_view v;
	int status = parse_args(argc, argv, info_options, usage, &a);
	int err;

	if (status >= 0)
		return status;
	err = open_view(&v, &a);
	if (err >= 0)
		err = cli_print_info(&v, stdout);
	return finish(&v, err);
}

/* `ptrr index BUNDLE`: writes the complete saved index (with the call
 * segments, every segment decoded) into the bundle, for a recording
 * saved with --index=lazy. */
int ptrr_cmd_index(int argc, char **argv)
{
	static const char usage[] = "ptrr index BUNDLE";
	struct cli_args a;
	struct cli_view v;
	int status = parse_args(argc, argv, info_options, usage, &a);
	int err;

	if (status >= 0)
		return status;
	memset(&v, 0, sizeof(v));
	err = hist_recording_open(a.bundle, &v.rec);
	if (err >= 0)
		err = hist_recording_save_index(v.rec);
	if (err >= 0)
		printf("%s: the index is complete (call segments saved)\n",
		       a.bundle);
	return finish(&v, err);
}

int ptrr_cmd_insn_history(int argc, char **argv)
{
	static const char usage[] = "ptrr insn-history [--thread=TID] [--raw] "
		"[--from=N] [--count=K] BUNDLE";
	struct cli_args a;
	struct cli_view v;
	int status = parse_args(argc, argv, insn_options, usage, &a);
	int err;

	if (status >= 0)
		return status;
	err = open_view(&v, &a);
	if (err >= 0 && (hist_size(v.hist) > 0 || a.from > 1))
		err = cli_print_insns(&v, stdout, a.from, a.count, a.flags);
	return finish(&v, err);
}

int ptrr_cmd_call_history(int argc, char **argv)
{
	static const char usage[] = "ptrr call-history [--thread=TID] [--lines] "
		"[--insn-range] [--indent] BUNDLE";
	struct cli_args a;
	struct cli_view v;
	int status = parse_args(argc, argv, call_options, usage, &a);
	int err;

	if (status >= 0)
		return status;
	err = open_view(&v, &a);
	if (err >= 0)
		err = cli_print_calls(&v, stdout, a.flags);
	return finish(&v, err);
}
