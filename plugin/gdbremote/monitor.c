/* The replay target's monitor commands (target_replay.h): what gdb's `pt` commands
 * (plugin/gdb/ptrr.gdb) and `monitor pt ...` send.  The listings are the
 * ones of `ptrr info`, `ptrr insn-history` and `ptrr call-history`
 * (plugin/cli_history.c), for the thread gdb selected, marked at its
 * replay position.
 */
#include <config.h>

#include "gdbremote/target_replay.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Lines per `pt insn-history` / `pt call-history` without a range, as
 * gdb's record commands. */
#define WINDOW 10

static const char help_text[] =
	"ptrr monitor commands (gdb: the pt commands of ptrr.gdb):\n"
	"  pt info                      what is recorded, where each thread is\n"
	"  pt insn-history [/r] [N[,M|,+K]]\n"
	"                               instructions (default: the 10 up to "
	"the\n"
	"                               current one)\n"
	"  pt call-history [/l] [/i] [/c] [N[,M|,+K] | all]\n"
	"                               function calls (default: the 10 up "
	"to\n"
	"                               the current one)\n"
	"  pt goto N|begin|end          move the selected thread in its "
	"history\n"
	"  pt start, pt stop, pt save FILE\n"
	"                               live sessions only\n";

/* The view of the selected thread for the listings. */
static int open_view(struct replay_target *r, size_t thr,
		     struct cli_view *v)
{
	memset(v, 0, sizeof(*v));
	v->bundle = r->bundle;
	v->rec = r->rec;
	v->thread = thr;
	v->have_pc = !replay_thread_empty(r->rp, thr);
	v->pc = v->have_pc ? replay_pc(r->rp, thr) : 0;
	return hist_recording_history(r->rec, thr, &v->hist);
}

/* Parses "N", "N,M" or "N,+K" into [*@first, *@first + *@count);
 * false if @arg is none of them. */
static bool parse_range(const char *arg, uint64_t *first, uint64_t *count)
{
	char *end;
	uint64_t n = strtoull(arg, &end, 10), m;

	if (end == arg || n == 0)
		return false;
	*first = n;
	if (!*end) {
		*count = WINDOW;
		return true;
	}
	if (*end != ',')
		return false;
	arg = end + 1;
	m = strtoull(arg + (*arg == '+'), &end, 10);
	if (end == arg + (*arg == '+') || *end)
		return false;
	if (*arg == '+')
		*count = m;
	else if (m >= n)
		*count = m - n + 1;
	else
		return false;
	return true;
}

/* The @count entries (or call segments) up to and including @last. */
static void window_to(uint64_t last, uint64_t *first, uint64_t *count)
{
	*first = last > WINDOW ? last - WINDOW + 1 : 1;
	*count = last >= *first ? last - *first + 1 : 0;
}

/* pt insn-history [/r] [RANGE]. */
static int insn_history(struct replay_target *r, size_t thr, FILE *out,
			char *args)
{
	unsigned flags = 0;
	uint64_t first, count;
	struct cli_view v;
	char *word;
	int err = open_view(r, thr, &v);

	if (err < 0)
		return err;
	window_to(replay_position(r->rp, thr), &first, &count);
	for (word = strtok(args, " "); word; word = strtok(NULL, " ")) {
		if (!strcmp(word, "/r"))
			flags |= CLI_INSN_RAW;
		else if (!parse_range(word, &first, &count))
			return ptrr_fail(PTRR_ERR_USAGE, "bad argument '%s': "
					 "pt insn-history [/r] [N[,M|,+K]]",
					 word);
	}
	if (count == 0)
		return 0;
	return cli_print_insns(&v, out, first, count, flags);
}

/* pt call-history [/l] [/i] [/c] [RANGE | all]. */
static int call_history(struct replay_target *r, size_t thr, FILE *out,
			char *args)
{
	unsigned flags = 0;
	uint64_t first = 0, count = 0;
	uint32_t id = 0;
	struct cli_view v;
	char *word;
	int err = open_view(r, thr, &v);

	if (err < 0)
		return err;
	for (word = strtok(args, " "); word; word = strtok(NULL, " ")) {
		if (word[0] == '/') {
			for (const char *f = word + 1; *f; f++)
				flags |= *f == 'l' ? CLI_CALL_LINES :
					 *f == 'i' ? CLI_CALL_INSN_RANGE :
					 *f == 'c' ? CLI_CALL_INDENT : 0;
		} else if (!strcmp(word, "all")) {
			first = 1;
			count = UINT64_MAX;
		} else if (!parse_range(word, &first, &count)) {
			return ptrr_fail(PTRR_ERR_USAGE, "bad argument '%s': "
					 "pt call-history [/l] [/i] [/c] "
					 "[N[,M|,+K] | all]", word);
		}
	}
	if (first == 0) {
		if (!replay_thread_empty(r->rp, thr) &&
		    (err = hist_call_find(v.hist, replay_position(r->rp,
					  thr), &id)) < 0)
			return err;
		window_to(id, &first, &count);
		if (count == 0)
			return 0;
	}
	return cli_print_call_range(&v, out, first, count, flags);
}

/* pt goto N|begin|end. */
static int go_to(struct replay_target *r, size_t thr, FILE *out,
		 const char *arg)
{
	uint64_t n;
	int err;

	if (!strcmp(arg, "end"))
		err = replay_goto_end(r->rp, thr);
	else if (!strcmp(arg, "begin"))
		err = replay_goto(r->rp, thr, 1);
	else if (cli_parse_number(arg, &n))
		err = replay_goto(r->rp, thr, n);
	else
		return ptrr_fail(PTRR_ERR_USAGE, "usage: pt goto N|begin|end");
	if (err < 0)
		return err;
	fprintf(out, "At instruction %" PRIu64 ".\n",
		replay_position(r->rp, thr));
	return 0;
}

/* How much of the state the value recovery knows at the position of
 * thread @thr, where @nregs registers are known (replay/recover.c). */
static void print_recovery(struct replay_target *r, size_t thr, int nregs,
			   FILE *out)
{
	struct replay_recovery_summary s;

	replay_recovery_summary(r->rp, thr, &s);
	fprintf(out, "Value recovery here: %d of %d registers; ", nregs,
		HIST_NREGS);
	if (!s.walked)
		fputs("memory: none (its walk back does not reach here)",
		      out);
	else
		fprintf(out, "memory: %s%" PRIu64 " bytes learned from the "
			"history", s.present ? "as at the end where nothing "
			"wrote it since, and " : "", s.bytes);
	if (s.sets)
		fprintf(out, "; %zu sets of registers recorded on the way",
			s.sets);
	if (s.next_set)
		fprintf(out, " (the next at instruction %" PRIu64 ")",
			s.next_set);
	else if (s.sets)
		fputs(" (none at or after here)", out);
	fprintf(out, "; %" PRIu64 " conflicting values (not shown).\n",
		s.conflicts);
}

/* Where the selected thread is, like gdb's "Replay in progress.  At
 * instruction N.", and what is known there (replay/known.c). */
static void print_position(struct replay_target *r, size_t thr,
			   FILE *out)
{
	uint64_t vals[HIST_NREGS];
	bool known[HIST_NREGS];
	struct history *h;
	int n = 0;

	if (hist_recording_history(r->rec, thr, &h) < 0)
		return;
	fprintf(out, "Thread %d (LWP %d) is at instruction %" PRIu64 " of %"
		PRIu64 "%s.\n", (int) thr + 1, replay_tid(r->rp, thr),
		replay_position(r->rp, thr), hist_size(h),
		replay_at_end(r->rp, thr) ? " (the end of its history: not "
		"replaying)" : " (replaying)");
	replay_regs(r->rp, thr, vals, known);
	if (replay_at_present(r->rp, thr) && known[HIST_RSP]) {
		fputs("Known here: the registers and memory recorded at the "
		      "end.\n", out);
		return;
	}
	fputs("Known here: registers", out);
	for (int i = 0; i < HIST_NREGS; i++)
		if (known[i])
			fprintf(out, "%s %s", n++ ? "," : "",
				hist_reg_name((enum hist_reg) i));
	fprintf(out, "; code and read-only data; writable memory where "
		"recovered.  Not known: other registers (gdb shows "
		"<unavailable>) and other writable memory (gdb cannot read "
		"it)%s.\n", replay_at_end(r->rp, thr) ?
		", not recorded where this thread ended" :
		", which may have changed since");
	print_recovery(r, thr, n, out);
}

/* Whether the call segments of the thread of @v (the call stacks of
 * reverse steps) are computed up to its end, or are being computed in
 * the background: said before the listings, which wait for them. */
static void print_calls_ready(struct cli_view *v, FILE *out)
{
	fprintf(out, "Call segments of thread %zu: %s.\n", v->thread + 1,
		hist_calls_ready(v->hist) ? "up to date" :
		"not yet up to date (being computed in the background; "
		"meanwhile reverse steps near the end read the stack back "
		"from the end's)");
}

/* Runs @cmd (without "pt "), writing its output to @out (target.h). */
int rsp_replay_monitor(struct rsp_target *t, size_t thr, FILE *out,
		       char *cmd)
{
	struct replay_target *r = (struct replay_target *) t;
	char *args = cmd + strcspn(cmd, " ");
	struct cli_view v;
	int err;

	if (*args)
		*args++ = '\0';
	args += strspn(args, " ");
	if (!strcmp(cmd, "help") || !strcmp(cmd, "pt") || !*cmd) {
		fputs(help_text, out);
		return 0;
	}
	if (!strcmp(cmd, "info")) {
		err = open_view(r, thr, &v);
		if (err >= 0)
			print_calls_ready(&v, out);
		if (err >= 0)
			err = cli_print_info(&v, out);
		if (err >= 0)
			print_position(r, thr, out);
		if (err >= 0 && r->watch_why[0])
			fprintf(out, "The last watchpoint stop is where the "
				"watched memory may have been written: %s.\n",
				r->watch_why);
		if (err >= 0 && r->watch_passed)
			fprintf(out, "Watchpoint stops passed over (the value "
				"unknown on both sides: gdb would have gone on "
				"from them): %" PRIu64 ".\n", r->watch_passed);
		return err;
	}
	if (!strcmp(cmd, "insn-history"))
		return insn_history(r, thr, out, args);
	if (!strcmp(cmd, "call-history"))
		return call_history(r, thr, out, args);
	if (!strcmp(cmd, "goto"))
		return go_to(r, thr, out, args);
	if (!strcmp(cmd, "start") || !strcmp(cmd, "stop") ||
	    !strcmp(cmd, "save"))
		return ptrr_fail(PTRR_ERR_UNSUPPORTED, "pt %s: this is a "
				 "recording (%s), not a live session", cmd,
				 r->bundle);
	return ptrr_fail(PTRR_ERR_USAGE, "unknown command '%s': monitor pt "
			 "help lists them", cmd);
}

