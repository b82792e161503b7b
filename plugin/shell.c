/* `ptrr shell BUNDLE`: a GNU readline browser over a recording.
 *
 * Commands print with the same printers as the subcommands (cli.h).  The
 * shell adds a cursor — a position in the selected thread's history that
 * `goto` moves — and GDB's paging of `record instruction-history` and
 * `record function-call-history`: a bare `insn-history` (or `+`) lists
 * ten instructions from the cursor on, then the next ten, and
 * `insn-history -` the ten before; `call-history` likewise ten call
 * segments from the cursor's on (`call-history all`: every one).
 *
 * With a terminal on stdin the shell prompts "(ptrr) ", edits lines,
 * completes command names and options with TAB, and keeps a history in
 * memory — on disk only in $PTRR_HISTFILE, as ptrr writes no file the user
 * did not name.  Without one it reads commands line by line, silently, so
 * that scripts can pipe commands in.
 */
#include <config.h>

#include "cli.h"
#include "commands.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <readline/history.h>
#include <readline/readline.h>

/* The last window a listing showed, items lo .. hi; 0 if none since the
 * cursor moved. */
struct page {
	uint64_t lo, hi;
};

struct shell {
	struct cli_view view;
	uint64_t cursor;	/* the entry `goto` moved to */
	struct page insns;	/* the last instructions listed */
	struct page calls;	/* the last call segments listed */
	bool done;
	bool failed;		/* a command failed (reported on exit when
				 * the commands came from a pipe or file) */
};

#define MAX_ARGS 8

struct shell_cmd {
	const char *name;
	int (*run)(struct shell *sh, int argc, char **argv);
	const char *const *words;	/* its options, for completion */
	const char *synopsis;
	const char *help;
};

/* ------------------------------------------------------------------ */
/* Moving through the history                                         */
/* ------------------------------------------------------------------ */

/* Puts the cursor on entry @n; the current PC becomes that entry's
 * address (none for a gap), as after GDB's `record goto`. */
static int move_cursor(struct shell *sh, uint64_t n)
{
	struct hist_cursor *c;
	const struct hist_entry *e;
	int err = hist_cursor_new(sh->view.hist, &c);

	if (err < 0)
		return err;
	err = hist_cursor_seek(c, n);
	if (err >= 0) {
		e = hist_cursor_entry(c);
		sh->view.have_pc = e->kind == HIST_ENTRY_INSN;
		sh->view.pc = e->ip;
		sh->cursor = n;
		sh->insns = sh->calls = (struct page) { 0, 0 };
	}
	hist_cursor_free(c);
	return err;
}

/* The next window of @p forward over items 1 .. @size: from item @at on
 * (filled backward at the end), or after the last window, as GDB's
 * record_btrace_target::insn_history and call_history with a positive
 * size.  False, saying so, at the end. */
static bool page_forward(const struct page *p, uint64_t size, uint64_t at,
			 uint64_t *lo, uint64_t *hi)
{
	*lo = p->hi ? p->hi + 1 : at;
	if (*lo > size || *lo < 1) {
		puts("At the end of the branch trace record.");
		return false;
	}
	*hi = size - *lo < CLI_HISTORY_WINDOW ? size
					      : *lo + CLI_HISTORY_WINDOW - 1;
	if (!p->hi && *hi - *lo + 1 < CLI_HISTORY_WINDOW)
		*lo = *hi > CLI_HISTORY_WINDOW ? *hi - CLI_HISTORY_WINDOW + 1
					       : 1;
	return true;
}

/* The window of @p before the last one, or the one ending at item @at
 * (filled forward at the start), as GDB with a negative size.  False,
 * saying so, at the start. */
static bool page_backward(const struct page *p, uint64_t size, uint64_t at,
			  uint64_t *lo, uint64_t *hi)
{
	*hi = p->hi ? p->lo - 1 : at;
	if (*hi < 1) {
		puts("At the start of the branch trace record.");
		return false;
	}
	*lo = *hi > CLI_HISTORY_WINDOW ? *hi - CLI_HISTORY_WINDOW + 1 : 1;
	if (!p->hi && *hi - *lo + 1 < CLI_HISTORY_WINDOW)
		*hi = size - *lo < CLI_HISTORY_WINDOW ?
			size : *lo + CLI_HISTORY_WINDOW - 1;
	return true;
}

/* Lists entries @lo .. @hi (cut at the end of the history) and
 * remembers them for paging. */
static int list_window(struct shell *sh, uint64_t lo, uint64_t hi,
		       unsigned flags)
{
	int err;

	if (hi > hist_size(sh->view.hist))
		hi = hist_size(sh->view.hist);
	err = cli_print_insns(&sh->view, stdout, lo, hi - lo + 1, flags);
	if (err >= 0)
		sh->insns = (struct page) { lo, hi };
	return err;
}

/* ------------------------------------------------------------------ */
/* Commands                                                           */
/* ------------------------------------------------------------------ */

/* Sets in @flags the flags that the letters of "/xyz" option @arg name
 * in @letters (flag i for letter i); false on an unknown letter. */
static bool parse_slash(const char *arg, const char *letters,
			unsigned *flags)
{
	for (const char *p = arg + 1; *p; p++) {
		const char *l = strchr(letters, *p);

		if (!l)
			return false;
		*flags |= 1u << (l - letters);
	}
	return arg[1] != '\0';
}

/* info: the bundle report, and where the cursor is. */
static int cmd_info(struct shell *sh, int argc, char **argv)
{
	int err;

	if (argc > 1)
		return ptrr_fail(PTRR_ERR_USAGE, "usage: info");
	err = cli_print_info(&sh->view, stdout);
	if (err >= 0 && sh->cursor != hist_size(sh->view.hist))
		printf("Replay in progress.  At instruction %" PRIu64 ".\n",
		       sh->cursor);
	return err;
}

/* insn-history [/r] [FROM [COUNT] | -] */
static int cmd_insn_history(struct shell *sh, int argc, char **argv)
{
	static const char usage[] =
		"usage: insn-history [/r] [FROM [COUNT] | + | -]";
	unsigned flags = 0;
	uint64_t from, to, size, count = CLI_HISTORY_WINDOW;
	int i = 1;

	if (i < argc && argv[i][0] == '/') {
		if (!parse_slash(argv[i], "r", &flags))
			return ptrr_fail(PTRR_ERR_USAGE, "%s", usage);
		i++;
	}
	if (hist_size(sh->view.hist) == 0)
		return ptrr_fail(PTRR_ERR_RANGE, "No trace.");
	size = hist_size(sh->view.hist);
	if (i == argc || (i + 1 == argc && strcmp(argv[i], "+") == 0))
		return page_forward(&sh->insns, size, sh->cursor, &from, &to) ?
			list_window(sh, from, to, flags) : 0;
	if (i + 1 == argc && strcmp(argv[i], "-") == 0)
		return page_backward(&sh->insns, size, sh->cursor, &from,
				     &to) ? list_window(sh, from, to, flags) : 0;
	if (i + 2 < argc || !cli_parse_number(argv[i], &from)
	    || (i + 1 < argc && !cli_parse_number(argv[i + 1], &count)))
		return ptrr_fail(PTRR_ERR_USAGE, "%s", usage);
	if (count > hist_size(sh->view.hist))
		count = hist_size(sh->view.hist);
	return list_window(sh, from, from + count - 1, flags);
}

/* call-history [/l] [/i] [/c] [+ | - | FROM [COUNT] | all], letters
 * combinable as in GDB (/lic): ten call segments at a time as GDB's
 * record function-call-history pages them (from the cursor's segment on,
 * the next ten, the ten before), COUNT from FROM, or all of them. */
static int cmd_call_history(struct shell *sh, int argc, char **argv)
{
	static const char usage[] = "usage: call-history [/l] [/i] [/c] "
				    "[+ | - | FROM [COUNT] | all]";
	unsigned flags = 0;
	uint64_t from = 0, count = CLI_HISTORY_WINDOW, to;
	bool ok = true, back = false;
	uint32_t at;
	size_t n;
	int i = 1, err;

	for (; i < argc && argv[i][0] == '/'; i++)
		if (!parse_slash(argv[i], "lic", &flags))
			return ptrr_fail(PTRR_ERR_USAGE, "%s", usage);
	if (i + 1 == argc && strcmp(argv[i], "all") == 0) {
		from = 1;
		count = UINT64_MAX;
	} else if (i + 1 == argc && strcmp(argv[i], "-") == 0) {
		back = true;
	} else if (i < argc && strcmp(argv[i], "+") != 0) {
		ok = i + 2 >= argc && cli_parse_number(argv[i], &from) &&
		     from && (i + 1 == argc ||
			      cli_parse_number(argv[i + 1], &count));
	} else {
		ok = i + 1 >= argc;
	}
	if (!ok)
		return ptrr_fail(PTRR_ERR_USAGE, "%s", usage);
	if (hist_size(sh->view.hist) == 0)
		return ptrr_fail(PTRR_ERR_RANGE, "No trace.");
	err = hist_calls_count(sh->view.hist, &n);
	if (err >= 0 && !from)
		err = hist_call_find(sh->view.hist, sh->cursor, &at);
	if (err < 0)
		return err;
	if (from)	/* later pages go on from there, as in gdb */
		to = n - from < count ? n : from + count - 1;
	else if (!(back ? page_backward : page_forward)(&sh->calls, n, at,
							 &from, &to))
		return 0;
	err = cli_print_call_range(&sh->view, stdout, from, to - from + 1,
				   flags);
	if (err >= 0)
		sh->calls = (struct page) { from, to };
	return err;
}

/* thread [TID]: shows or switches the thread; the cursor goes to the end
 * of the new thread's history. */
static int cmd_thread(struct shell *sh, int argc, char **argv)
{
	uint64_t tid;
	int err;

	if (argc == 1) {
		printf("[Current thread is %zu (LWP %d)]\n", sh->view.thread + 1,
		       cli_view_tid(&sh->view));
		return 0;
	}
	if (argc > 2 || !cli_parse_number(argv[1], &tid) || tid > INT32_MAX)
		return ptrr_fail(PTRR_ERR_USAGE, "usage: thread [TID]");
	err = cli_view_select(&sh->view, (int) tid);
	if (err < 0)
		return err;
	sh->cursor = hist_size(sh->view.hist);
	sh->insns = sh->calls = (struct page) { 0, 0 };
	printf("[Switching to thread %zu (LWP %d)]\n", sh->view.thread + 1,
	       cli_view_tid(&sh->view));
	return 0;
}

/* goto N|begin|end: moves the cursor and shows the entry there. */
static int cmd_goto(struct shell *sh, int argc, char **argv)
{
	uint64_t size = hist_size(sh->view.hist), n = 0;
	int err;

	if (argc != 2)
		return ptrr_fail(PTRR_ERR_USAGE, "usage: goto N|begin|end");
	if (strcmp(argv[1], "begin") == 0)
		n = 1;
	else if (strcmp(argv[1], "end") == 0)
		n = size;
	else if (!cli_parse_number(argv[1], &n))
		return ptrr_fail(PTRR_ERR_USAGE, "usage: goto N|begin|end");
	if (n < 1 || n > size)
		return ptrr_fail(PTRR_ERR_RANGE, "Target insn %s not found.",
				 argv[1]);
	err = move_cursor(sh, n);
	if (err >= 0)
		err = cli_print_insns(&sh->view, stdout, n, 1, 0);
	return err;
}

/* help: one line per command. */
static int cmd_help(struct shell *sh, int argc, char **argv);

/* quit: leaves the shell (so does end of input). */
static int cmd_quit(struct shell *sh, int argc, char **argv)
{
	sh->done = true;
	return 0;
}

static const char *const insn_words[] = { "/r", "+", "-", NULL };
static const char *const call_words[] = { "/l", "/i", "/c", "+", "-", "all",
					  NULL };
static const char *const goto_words[] = { "begin", "end", NULL };

static const struct shell_cmd commands[] = {
	{ "call-history", cmd_call_history, call_words,
	  "call-history [/l] [/i] [/c] [+]", "ten functions called, from "
	  "the cursor's on, then the next ten; /l with source lines, /i "
	  "with instruction ranges, /c indented by depth" },
	{ "call-history", cmd_call_history, call_words,
	  "call-history [/lic] -", "the ten before" },
	{ "call-history", cmd_call_history, call_words,
	  "call-history [/lic] FROM [COUNT]", "COUNT (10) from segment "
	  "FROM" },
	{ "call-history", cmd_call_history, call_words,
	  "call-history [/lic] all", "every one" },
	{ "goto", cmd_goto, goto_words, "goto N|begin|end",
	  "move the cursor to an instruction" },
	{ "help", cmd_help, NULL, "help", "this list" },
	{ "info", cmd_info, NULL, "info", "what the recording holds" },
	{ "insn-history", cmd_insn_history, insn_words,
	  "insn-history [/r] [FROM [COUNT] | +]", "ten instructions from "
	  "the cursor on, the next ten, or COUNT from FROM; /r raw" },
	{ "insn-history", cmd_insn_history, insn_words, "insn-history [/r] -",
	  "the ten instructions before" },
	{ "quit", cmd_quit, NULL, "quit", "leave (so does end of input)" },
	{ "thread", cmd_thread, NULL, "thread [TID]",
	  "show or select the thread" },
	{ NULL, NULL, NULL, NULL, NULL },
};

static int cmd_help(struct shell *sh, int argc, char **argv)
{
	for (const struct shell_cmd *c = commands; c->name; c++)
		printf("%-38s%s\n", c->synopsis, c->help);
	return 0;
}

/* The command @name names, exactly or as a unique prefix (GDB-style);
 * NULL, after saying why, if none. */
static const struct shell_cmd *find_command(const char *name)
{
	/* gdb's one-letter abbreviations that a prefix would not give. */
	static const char *const aliases[][2] = {
		{ "i", "info" }, { "q", "quit" },
	};
	const struct shell_cmd *found = NULL;
	size_t len;

	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (strcmp(name, aliases[i][0]) == 0)
			name = aliases[i][1];
	len = strlen(name);
	for (const struct shell_cmd *c = commands; c->name; c++) {
		if (strcmp(c->name, name) == 0)
			return c;
		if (strncmp(c->name, name, len) == 0 && found
		    && strcmp(found->name, c->name) != 0) {
			ptrr_fail(PTRR_ERR_USAGE, "Ambiguous command \"%s\": "
				  "%s, %s...", name, found->name, c->name);
			return NULL;
		}
		if (strncmp(c->name, name, len) == 0)
			found = c;
	}
	if (!found)
		ptrr_fail(PTRR_ERR_USAGE, "Undefined command: \"%s\".  "
			  "Try \"help\".", name);
	return found;
}

/* Splits @line at blanks into at most MAX_ARGS words; returns their
 * number, or -1 if there are more. */
static int split_words(char *line, char **argv)
{
	char *save, *w;
	int argc = 0;

	for (w = strtok_r(line, " \t\r\n", &save); w;
	     w = strtok_r(NULL, " \t\r\n", &save)) {
		if (argc == MAX_ARGS)
			return -1;
		argv[argc++] = w;
	}
	return argc;
}

/* Runs one command line; errors are reported on stderr and the shell
 * goes on. */
static void execute(struct shell *sh, char *line)
{
	char *argv[MAX_ARGS];
	const struct shell_cmd *cmd;
	int argc = split_words(line, argv), err;

	if (argc == 0 || argv[0][0] == '#')
		return;
	if (argc < 0) {
		fputs("Too many arguments.\n", stderr);
		sh->failed = true;
		return;
	}
	ptrr_clear_error();
	cmd = find_command(argv[0]);
	err = cmd ? cmd->run(sh, argc, argv) : PTRR_ERR_USAGE;
	if (err < 0) {
		fprintf(stderr, "%s\n", ptrr_errmsg(err));
		sh->failed = true;
	}
	fflush(stdout);
}

/* ------------------------------------------------------------------ */
/* Reading lines                                                      */
/* ------------------------------------------------------------------ */

/* The option words of the command being completed, or NULL while the
 * command name itself is completed. */
static const char *const *completing;

/* readline generator: the command names or option words starting with
 * @text, one per call (@state 0 starts over). */
static char *complete_word(const char *text, int state)
{
	static size_t i, len;
	const char *w;

	if (state == 0) {
		i = 0;
		len = strlen(text);
	}
	for (;;) {
		w = completing ? completing[i] : commands[i].name;
		if (!w)
			return NULL;
		i++;
		if (strncmp(w, text, len) == 0)
			return strdup(w);
	}
}

/* readline completion: command names first, then that command's
 * options; never file names. */
static char **complete(const char *text, int start, int end)
{
	char first[32] = "";
	const struct shell_cmd *cmd;

	rl_attempted_completion_over = 1;
	completing = NULL;
	if (start > 0) {
		sscanf(rl_line_buffer, "%31s", first);
		cmd = find_command(first);
		if (!cmd || !cmd->words)
			return NULL;
		completing = cmd->words;
	}
	return rl_completion_matches(text, complete_word);
}

/* Reads one command line, with readline on a terminal; NULL at the end
 * of input.  The caller frees it. */
static char *read_line(bool tty)
{
	char *line = NULL;
	size_t size = 0;

	if (tty)
		return readline("(ptrr) ");
	if (getline(&line, &size, stdin) < 0) {
		free(line);
		return NULL;
	}
	return line;
}

/* Runs the interactive loop until quit or the end of input. */
static void run_loop(struct shell *sh)
{
	bool tty = isatty(STDIN_FILENO);
	const char *histfile = getenv("PTRR_HISTFILE");
	char *line;

	if (histfile && !*histfile)
		histfile = NULL;
	rl_readline_name = "ptrr";
	rl_attempted_completion_function = complete;
	if (tty && histfile)
		read_history(histfile);
	while (!sh->done && (line = read_line(tty))) {
		if (tty && line[strspn(line, " \t")])
			add_history(line);
		execute(sh, line);
		free(line);
	}
	if (tty && !sh->done)
		putchar('\n');
	if (tty && histfile && write_history(histfile) != 0)
		fprintf(stderr, "warning: cannot write %s\n", histfile);
}

int ptrr_cmd_shell(int argc, char **argv)
{
	static const char usage[] = "usage: ptrr shell BUNDLE";
	struct shell sh = { 0 };
	int err;

	if (argc == 2 && strcmp(argv[1], "--help") == 0) {
		puts(usage);
		return 0;
	}
	if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr, "ptrr shell: %s%s\n%s\n",
			argc < 2 ? "missing BUNDLE" :
			argv[1][0] == '-' ? "unknown option " :
			"one BUNDLE expected", argc == 2 && argv[1][0] == '-' ?
			argv[1] : "", usage);
		return 1;
	}
	err = cli_view_open(&sh.view, argv[1]);
	if (err < 0) {
		cli_view_close(&sh.view);
		return cli_runtime_error(err);
	}
	sh.cursor = hist_size(sh.view.hist);
	run_loop(&sh);
	cli_view_close(&sh.view);
	/* Like gdb -batch: a script whose command failed exits non-zero. */
	return sh.failed && !isatty(STDIN_FILENO) ? 2 : 0;
}
