/* The debugger launchers: `ptrr replay` and `ptrr gdb` start gdb
 * (gdb_launch.c), `ptrr replay --lldb` and `ptrr lldb` start LLDB
 * (lldb_launch.c), each with ptrr's server and command file.  The
 * command lines are parsed once, in gdb_launch.c, into a struct launch.
 */
#ifndef PTRR_LAUNCH_H
#define PTRR_LAUNCH_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

/* What the debugger is started with. */
struct launch {
	char self[PATH_MAX];	/* this ptrr executable */
	char **serve;		/* arguments of `ptrr serve` after --stdio
				 * or --listen: BUNDLE, or live options
				 * -- PROG [ARGS] */
	size_t nserve;
	const char *bundle;	/* the recording replayed, NULL if live */
	char **user;		/* the user's "-x", FILE, "-ex", CMD ... */
	size_t nuser;
	bool batch;
};

/* Path of file @rel of the build tree (@dir is PTRR_BUILDDIR or
 * PTRR_SRCDIR) when this ptrr runs from the build tree, else of the
 * installed @installed; NULL (with a warning) if it does not exist. */
char *launch_support_file(const struct launch *l, const char *dir,
			  const char *rel, const char *installed);

/* The path of ptrr's QEMU plugin (ptrr-qemu.so), malloc'd: the build
 * tree's when this ptrr runs from it, else the installed one; NULL if it
 * is missing (plugin/launch_qemu.c). */
char *launch_qemu_plugin(void);

/* True if the program of the session (the bundle's, or the live one's)
 * is an ELF file without a symbol table or a separate debug file where
 * gdb looks: gdb then knows no function of its code (launch_symbols.c). */
bool launch_program_stripped(const struct launch *l);

/* Replaces this process with LLDB connected to `ptrr serve --listen` as
 * lldb_launch.c says.  Returns only on failure, with exit status 2. */
int launch_exec_lldb(const struct launch *l);

#endif
