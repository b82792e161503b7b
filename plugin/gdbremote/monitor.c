/* Monitor commands of `ptrr serve` (server.h): what gdb's `pt` commands
 * (plugin/gdb/ptrr.gdb) and `monitor pt ...` send.  The listings are the
 * ones of `ptrr info`, `ptrr insn-history` and `ptrr call-history`
 * (plugin/cli_history.c), for the thread gdb selected, marked at its
 * replay position.
 */
#include <config.h>

#include "gdbremote/server.h"

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
static int open_view(struct rsp_server *s, struct cli_view *v)
{
	memset(v, 0, sizeof(*v));
	v->bundle = s->bundle;
	v->rec = s->rec;
	v->thread = s->g_thread;
	v->have_pc = !replay_thread_empty(s->rp, s->g_thread);
	v->pc = v->have_pc ? replay_pc(s->rp, s->g_thread) : 0;
	return hist_recording_history(s->rec, s->g_thread, &v->hist);
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
static int insn_history(struct rsp_server *s, FILE *out, char *args)
{
	unsigned flags = 0;
	uint64_t first, count;
	struct cli_view v;
	char *word;
	int err = open_view(s, &v);

	if (err < 0)
		return err;
	window_to(replay_position(s->rp, s->g_thread), &first, &count);
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
static int call_history(struct rsp_server *s, FILE *out, char *args)
{
	unsigned flags = 0;
	uint64_t first = 0, count = 0;
	uint32_t id = 0;
	struct cli_view v;
	char *word;
	int err = open_view(s, &v);

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
		if (!replay_thread_empty(s->rp, s->g_thread) &&
		    (err = hist_call_find(v.hist, replay_position(s->rp,
					  s->g_thread), &id)) < 0)
			return err;
		window_to(id, &first, &count);
		if (count == 0)
			return 0;
	}
	return cli_print_call_range(&v, out, first, count, flags);
}

/* pt goto N|begin|end. */
static int go_to(struct rsp_server *s, FILE *out, const char *arg)
{
	uint64_t n;
	int err;

	if (!strcmp(arg, "end"))
		err = replay_goto_end(s->rp, s->g_thread);
	else if (!strcmp(arg, "begin"))
		err = replay_goto(s->rp, s->g_thread, 1);
	else if (cli_parse_number(arg, &n))
		err = replay_goto(s->rp, s->g_thread, n);
	else
		return ptrr_fail(PTRR_ERR_USAGE, "usage: pt goto N|begin|end");
	if (err < 0)
		return err;
	fprintf(out, "At instruction %" PRIu64 ".\n",
		replay_position(s->rp, s->g_thread));
	return 0;
}

/* Where the selected thread is, like gdb's "Replay in progress.  At
 * instruction N." */
static void print_position(struct rsp_server *s, FILE *out)
{
	struct history *h;
	size_t thr = s->g_thread;

	if (hist_recording_history(s->rec, thr, &h) < 0)
		return;
	fprintf(out, "Thread %d (LWP %d) is at instruction %" PRIu64 " of %"
		PRIu64 "%s.\n", (int) thr + 1, replay_tid(s->rp, thr),
		replay_position(s->rp, thr), hist_size(h),
		replay_at_end(s->rp, thr) ? " (the end of its history: not "
		"replaying)" : " (replaying)");
}

/* Runs @cmd (without "pt "), writing its output to @out. */
static int run(struct rsp_server *s, FILE *out, char *cmd)
{
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
		err = open_view(s, &v);
		if (err >= 0)
			err = cli_print_info(&v, out);
		if (err >= 0)
			print_position(s, out);
		return err;
	}
	if (!strcmp(cmd, "insn-history"))
		return insn_history(s, out, args);
	if (!strcmp(cmd, "call-history"))
		return call_history(s, out, args);
	if (!strcmp(cmd, "goto"))
		return go_to(s, out, args);
	if (!strcmp(cmd, "start") || !strcmp(cmd, "stop") ||
	    !strcmp(cmd, "save"))
		return ptrr_fail(PTRR_ERR_UNSUPPORTED, "pt %s: this is a "
				 "recording (%s), not a live session", cmd,
				 s->bundle);
	return ptrr_fail(PTRR_ERR_USAGE, "unknown command '%s': monitor pt "
			 "help lists them", cmd);
}

/* Sends @len bytes of @text as O packets (hex), in pieces. */
static void send_output(struct rsp_server *s, const char *text, size_t len)
{
	const size_t piece = RSP_PACKET_MAX / 2 - 16;

	for (size_t off = 0; off < len; off += piece) {
		size_t n = len - off < piece ? len - off : piece;

		rsp_reply_reset(s);
		rsp_reply_str(s, "O");
		rsp_reply_hex(s, text + off, n);
		if (rsp_conn_send(&s->conn, s->reply, s->reply_len) < 0)
			break;
	}
}

void rsp_monitor(struct rsp_server *s, const char *cmd)
{
	char *text = NULL, *copy = strdup(cmd);
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	int err;

	if (!copy || !out) {
		if (out)
			fclose(out);
		free(text);
		free(copy);
		rsp_reply_str(s, "E01");
		return;
	}
	err = run(s, out, copy + (strncmp(copy, "pt ", 3) ? 0 : 3));
	if (err < 0)
		fprintf(out, "ptrr: %s\n", ptrr_errmsg(err));
	fclose(out);
	send_output(s, text, len);
	rsp_reply_reset(s);
	rsp_reply_str(s, "OK");
	free(text);
	free(copy);
}
