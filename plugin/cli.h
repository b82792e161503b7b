/* plugin/cli.h — the history-browsing views shared by the `ptrr info`,
 * `ptrr insn-history`, `ptrr call-history` subcommands and `ptrr shell`.
 *
 * A cli_view is an open recording with one selected thread.  The printers
 * write the GDB-style listings (cli_history.c names the GDB sources they
 * follow); the subcommands and the shell differ only in how they choose
 * what to print.
 */
#ifndef PTRR_CLI_H
#define PTRR_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "history.h"

struct cli_view {
	const char *bundle;		/* the directory as the user named it */
	struct hist_recording *rec;
	size_t thread;			/* index of the selected thread */
	struct history *hist;		/* its history */
	bool have_pc;			/* the current PC, marked "=> " in */
	uint64_t pc;			/* instruction listings like GDB */
};

/* Flags for cli_print_insns(). */
#define CLI_INSN_RAW		0x1	/* "N 0xADDR" lines (DESIGN §4) */

/* Flags for cli_print_calls(), GDB's /l /i /c. */
#define CLI_CALL_LINES		0x1
#define CLI_CALL_INSN_RANGE	0x2
#define CLI_CALL_INDENT		0x4

/* Instructions GDB lists per `record instruction-history` by default. */
#define CLI_HISTORY_WINDOW	10

/* Opens bundle @dir and selects its default thread: the first one that
 * stopped on a fault or signal, else the first.  Loader warnings go to
 * stderr as "warning: ...".  The current PC is where that thread's trace
 * ended. */
int cli_view_open(struct cli_view *v, const char *dir);
void cli_view_close(struct cli_view *v);

/* Selects the thread with task id @tid; PTRR_ERR_NOTFOUND (with a message
 * listing the threads there are) if the bundle has none. */
int cli_view_select(struct cli_view *v, int tid);

/* The task id of the selected thread. */
int cli_view_tid(const struct cli_view *v);

/* Writes the `ptrr info` report of the whole bundle. */
int cli_print_info(struct cli_view *v, FILE *out);

/* Writes @count entries of the selected thread from entry @from on
 * (GDB's `record instruction-history FROM,+COUNT`).  PTRR_ERR_RANGE if
 * @from is not an entry; a @count past the end is cut short. */
int cli_print_insns(struct cli_view *v, FILE *out, uint64_t from,
		    uint64_t count, unsigned flags);

/* Writes the function-call history of the selected thread (GDB's
 * `record function-call-history` with @flags as /l /i /c). */
int cli_print_calls(struct cli_view *v, FILE *out, unsigned flags);

/* The same for @count call segments from segment @first (1-based) on;
 * PTRR_ERR_RANGE if there is no segment @first. */
int cli_print_call_range(struct cli_view *v, FILE *out, uint64_t first,
			 uint64_t count, unsigned flags);

/* Prints "ptrr: <message of @err>" to stderr; returns exit status 2. */
int cli_runtime_error(int err);

/* Parses a decimal entry number or count (1 .. UINT64_MAX); false if
 * @s is not one. */
bool cli_parse_number(const char *s, uint64_t *out);

#endif
