/* The `ptrr` program: dispatches `ptrr SUBCOMMAND ...` to the subcommands
 * of commands.h.  Exit status: 0 success, 1 usage error, 2 runtime
 * failure (DESIGN.md §4). */
#include <config.h>

#include "commands.h"

#include <stdio.h>
#include <string.h>

struct subcommand {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *synopsis;	/* the line of DESIGN.md §4 */
};

static const struct subcommand subcommands[] = {
	{ "record", ptrr_cmd_record,
	  "ptrr record       [-o BUNDLE] [--backend=auto|soft|perf|qemu] "
	  "[--buffer-size=SIZE]\n"
	  "                    [--mode=snapshot|full] [--start=SYMBOL|ADDR] "
	  "[--pack]\n"
	  "                    [--index=full|lazy] [--filter=START[/SIZE][@FILE]]...\n"
	  "                    [--psb-period=SIZE] [--noretcomp] [--tsc]\n"
	  "                    [--ground-truth=FILE] [--soft-step=block|insn]\n"
	  "                    [--regs-every=N] (--pid=PID | -- PROG [ARGS])" },
	{ "info", ptrr_cmd_info, "ptrr info         BUNDLE" },
	{ "index", ptrr_cmd_index,
	  "ptrr index        BUNDLE          # save the complete index" },
	{ "insn-history", ptrr_cmd_insn_history,
	  "ptrr insn-history [--thread=TID] [--raw] [--from=N] [--count=K] "
	  "BUNDLE" },
	{ "call-history", ptrr_cmd_call_history,
	  "ptrr call-history [--thread=TID] [--lines] [--insn-range] "
	  "[--indent] BUNDLE" },
	{ "shell", ptrr_cmd_shell,
	  "ptrr shell        BUNDLE          # readline browser" },
	{ "serve", ptrr_cmd_serve,
	  "ptrr serve        [--stdio | --listen 127.0.0.1:PORT [--once]]\n"
	  "                    (BUNDLE | [live options] (-- PROG [ARGS] |\n"
	  "                    --attach PID | --multi [-- PROG [ARGS]]))\n"
	  "                    live options: [--record-from-start]\n"
	  "                    [--backend=auto|soft|perf|qemu] [--buffer-size=SIZE]\n"
	  "                    [--soft-step=block|insn] "
	  "[--on-disconnect=kill|detach|stop]" },
	{ "gdbserver", ptrr_cmd_gdbserver,
	  "ptrr gdbserver    [--once] [live options] [HOST]:PORT|stdio PROG "
	  "[ARGS]\n"
	  "                    | --multi [...] [HOST]:PORT [PROG [ARGS]]\n"
	  "                    | --attach [...] [HOST]:PORT PID\n"
	  "                    (gdbserver's command line for ptrr serve)" },
	{ "replay", ptrr_cmd_replay,
	  "ptrr replay       [--lldb] [-x FILE] [-ex CMD] [--batch] BUNDLE" },
	{ "gdb", ptrr_cmd_gdb,
	  "ptrr gdb          [record options] [-x FILE] [-ex CMD] [--batch] "
	  "-- PROG [ARGS]" },
	{ "lldb", ptrr_cmd_lldb,
	  "ptrr lldb         [record options] [-x FILE] [-ex CMD] [--batch] "
	  "-- PROG [ARGS]" },
	{ "export", ptrr_cmd_export,
	  "ptrr export       [--lldb=DIR] [--perf=FILE] [--perfetto=FILE] [--svg=FILE] "
	  "BUNDLE" },
	{ "import", ptrr_cmd_import,
	  "ptrr import       (--lldb=TRACE.json | --perf=FILE [--pid=PID] |\n"
	  "                    --raw=TRACE --image=FILE@ADDR[,OFFSET,SIZE]... [--cpu=F/M/S]) -o BUNDLE" },
};

#define NSUBCOMMANDS (sizeof(subcommands) / sizeof(subcommands[0]))

/* Writes the synopsis of every subcommand to @out. */
static void print_usage(FILE *out)
{
	fputs("Usage:\n", out);
	for (size_t i = 0; i < NSUBCOMMANDS; i++)
		fprintf(out, "  %s\n", subcommands[i].synopsis);
	fputs("\nExit status: 0 success, 1 usage error, 2 runtime failure.\n"
	      "ptrr --version prints the version.\n", out);
}

/* The subcommand called @name, or NULL. */
static const struct subcommand *find_subcommand(const char *name)
{
	for (size_t i = 0; i < NSUBCOMMANDS; i++)
		if (strcmp(subcommands[i].name, name) == 0)
			return &subcommands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	const struct subcommand *sc;

	if (argc < 2) {
		print_usage(stderr);
		return 1;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		print_usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("ptrr %s\n", PACKAGE_VERSION);
		return 0;
	}
	sc = find_subcommand(argv[1]);
	if (!sc) {
		fprintf(stderr, "ptrr: unknown subcommand '%s' (ptrr --help "
			"lists them)\n", argv[1]);
		return 1;
	}
	return sc->run(argc - 1, argv + 1);
}
