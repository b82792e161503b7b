/* `ptrr replay` and `ptrr gdb`: start gdb with ptrr's server on a pipe,
 * the JIT-reader unwinder and the `pt` command file (DESIGN.md §4).
 * `ptrr replay --lldb` and `ptrr lldb` are parsed here too and start
 * LLDB instead (lldb_launch.c).
 *
 * gdb gets, in this order: the command file (plugin/gdb/ptrr.gdb),
 * `jit-reader-load` of the unwinder, `set step-mode on` if the program
 * is stripped (launch_symbols.c), `target remote | ptrr serve --stdio
 * ...` — the server speaks over the pipe only, never a socket; a live
 * session is `target extended-remote`, for `run` — and then the user's
 * -x FILE and -ex CMD in the order given, and -batch.  The program's
 * symbols come from the server (qXfer:exec-file).
 *
 * gdb and the server run on one machine, so gdb reads the program's
 * files itself (sysroot "", not "target:", the Host I/O packets of
 * hostio.c): the files and their separate debug files as a local gdb
 * finds them, without a "Reading ... from remote target..." line for
 * each.  A replay does so only if every module's file is the recorded
 * one (the bundle loader found it with its build-id, or packed, at the
 * path the server names); otherwise gdb reads through the server, which
 * refuses the files that are not the recorded ones.
 *
 * Run from the build tree, the unwinder and the command file are the
 * build's; installed, they are in $(pkglibdir) and $(pkgdatadir).  gdb is
 * $PTRR_GDB if set, else the gdb in PATH.
 */
#include <config.h>

#include "commands.h"
#include "history.h"
#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Prints a usage error for subcommand @cmd; returns exit status 1. */
static int launch_usage(const char *cmd, const char *usage, const char *what,
			const char *arg)
{
	fprintf(stderr, "ptrr %s: %s%s%s\nusage: %s\n", cmd, what,
		arg ? " " : "", arg ? arg : "", usage);
	return 1;
}

char *launch_support_file(const struct launch *l, const char *dir,
			  const char *rel, const char *installed)
{
	char built[PATH_MAX], *path;

	snprintf(built, sizeof(built), "%s/ptrr", PTRR_BUILDDIR);
	if (strcmp(l->self, built) == 0) {
		if (asprintf(&path, "%s/%s", dir, rel) < 0)
			return NULL;
	} else if (!(path = strdup(installed))) {
		return NULL;
	}
	if (access(path, R_OK) == 0)
		return path;
	fprintf(stderr, "ptrr: warning: %s is missing (build or install "
		"ptrr again); "
		"going on without it\n", path);
	free(path);
	return NULL;
}

/* Appends @s to string @out (of capacity @cap, length *@len) quoted for
 * /bin/sh; false if it does not fit. */
static bool append_quoted(char *out, size_t cap, size_t *len, const char *s)
{
	size_t n = *len;

	if (n + 2 >= cap)
		return false;
	out[n++] = ' ';
	out[n++] = '\'';
	for (; *s; s++) {
		const char *piece = *s == '\'' ? "'\\''" : NULL;
		size_t k = piece ? strlen(piece) : 1;

		if (n + k + 2 >= cap)
			return false;
		memcpy(out + n, piece ? piece : s, k);
		n += k;
	}
	out[n++] = '\'';
	out[n] = '\0';
	*len = n;
	return true;
}

/* The gdb command that connects to the server: "target remote | 'ptrr'
 * 'serve' '--stdio' ...", with the server's messages going to
 * descriptor @err_fd if it is not -1; for a live session "target
 * extended-remote ...", in which gdb can run the program again, and
 * kill and detach leave the connection open.  Malloc'd, or NULL if too
 * long. */
static char *target_command(const struct launch *l, int err_fd)
{
	size_t cap = 16384, len;
	char *cmd = malloc(cap), fd_opt[32];

	if (!cmd)
		return NULL;
	snprintf(fd_opt, sizeof(fd_opt), "--stderr-fd=%d", err_fd);
	len = (size_t) snprintf(cmd, cap, "target %s |",
				l->bundle ? "remote" : "extended-remote");
	if (!append_quoted(cmd, cap, &len, l->self) ||
	    !append_quoted(cmd, cap, &len, "serve") ||
	    !append_quoted(cmd, cap, &len, "--stdio") ||
	    (err_fd >= 0 && !append_quoted(cmd, cap, &len, fd_opt)))
		goto too_long;
	for (size_t i = 0; i < l->nserve; i++)
		if (!append_quoted(cmd, cap, &len, l->serve[i]))
			goto too_long;
	return cmd;
too_long:
	free(cmd);
	return NULL;
}

/* True if the recording in bundle @dir ended with a fatal signal (its
 * manifest's stop is a fault).  False if it cannot tell: the server then
 * says what is wrong with the bundle. */
static bool bundle_crashed(const char *dir)
{
	char path[PATH_MAX];
	json_t *m, *kind;
	bool fault;

	if (snprintf(path, sizeof(path), "%s/manifest.json", dir) >=
	    (int) sizeof(path))
		return false;
	m = json_load_file(path, 0, NULL);
	kind = json_object_get(json_object_get(m, "stop"), "kind");
	fault = json_is_string(kind) && !strcmp(json_string_value(kind),
						 "fault");
	json_decref(m);
	return fault;
}

/* True if every module of the recording in bundle @dir is at the path
 * the server names it by, as recorded (see the file comment); false if
 * one is not, or the bundle does not load (the server then says why). */
static bool bundle_files_local(const char *dir)
{
	struct hist_bundle *b;
	bool local;

	if (hist_bundle_load(dir, &b))
		return false;
	local = true;
	for (size_t i = 0; i < b->nmodules; i++)
		local = local && b->modules[i].usable;
	hist_bundle_free(b);
	return local;
}

/* A recording that ended in a crash starts as gdb shows a live one
 * ("Program received signal SIGSEGV, Segmentation fault." and the
 * frame): connected quietly one instruction before the end, gdb steps
 * onto the crash, which the server reports as the recorded signal.  The
 * server's messages go around the quiet connection, to the standard
 * error through the descriptor its --stderr-fd names (not a shell
 * redirection: gdb runs the server with /bin/sh, and dash takes no
 * descriptor above 9). */
static const char quiet_connect[] =
	"pipe -d @@PTRR@@ %s @@PTRR@@ cat >/dev/null";
static const char quiet_back[] =
	"pipe -d @@PTRR@@ reverse-stepi @@PTRR@@ cat >/dev/null";

/* Replaces this process with gdb as the file comment says.  Returns only
 * on failure, with exit status 2. */
static int exec_gdb(const struct launch *l)
{
	const char *gdb = getenv("PTRR_GDB");
	char *unwinder = launch_support_file(l, PTRR_BUILDDIR,
			"plugin/jit-reader/.libs/ptrr-unwind.so",
			PTRR_LAUNCH_PKGLIBDIR "/ptrr-unwind.so");
	char *cmdfile = launch_support_file(l, PTRR_SRCDIR,
			"plugin/gdb/ptrr.gdb", PTRR_LAUNCH_PKGDATADIR "/ptrr.gdb");
	bool crashed = l->bundle && bundle_crashed(l->bundle);
	/* The server writes its messages to our standard error itself, not
	 * to the pipe gdb gives it for them: gdb reads that pipe once for
	 * every byte of every reply (ser-base.c, generic_readchar), a
	 * system call each, which made a reverse-stepi with a deep stack
	 * 50 ms slower.  Once the server has let go of it, gdb closes it. */
	int err_fd = fcntl(STDERR_FILENO, F_DUPFD, 3);
	char *target = target_command(l, err_fd), *load = NULL, *quiet = NULL;
	char **argv = calloc(l->nuser + 26, sizeof(*argv));
	size_t n = 0;

	int status = 2;

	if (!target || !argv || (unwinder && asprintf(&load,
			"jit-reader-load %s", unwinder) < 0) ||
	    (crashed && asprintf(&quiet, quiet_connect, target) < 0)) {
		fprintf(stderr, "ptrr: out of memory or arguments too long\n");
		goto out;
	}
	if (!gdb || !*gdb)
		gdb = "gdb";
	argv[n++] = (char *) gdb;
	argv[n++] = "-q";	/* no banner: the session starts at the stop */
	if (l->batch)
		argv[n++] = "-batch";
	if (cmdfile) {
		argv[n++] = "-x";
		argv[n++] = cmdfile;
	}
	if (load) {
		argv[n++] = "-ex";
		argv[n++] = load;
	}
	/* gdb gives up on a reply after 2 s by default and sends the packet
	 * again; a loaded machine or a big recording can be slower than
	 * that, and the repeated packet puts the replies out of step. */
	argv[n++] = "-ex";
	argv[n++] = "set remotetimeout 60";
	if (!l->bundle || bundle_files_local(l->bundle)) {
		argv[n++] = "-ex";
		argv[n++] = "set sysroot";
	}
	/* A stripped program: reverse-finish into its code would run to
	 * the start of the history (launch_symbols.c). */
	if (launch_program_stripped(l)) {
		argv[n++] = "-ex";
		argv[n++] = "set step-mode on";
	}
	argv[n++] = "-ex";
	argv[n++] = crashed ? quiet : target;
	if (crashed) {
		argv[n++] = "-ex";
		argv[n++] = (char *) quiet_back;
		argv[n++] = "-ex";
		argv[n++] = "stepi";
	}
	for (size_t i = 0; i < l->nuser; i++)
		argv[n++] = l->user[i];
	argv[n] = NULL;
	execvp(gdb, argv);
	fprintf(stderr, "ptrr: cannot run %s: %s (install gdb: apt-get "
		"install gdb, or set PTRR_GDB)\n", gdb, strerror(errno));
out:
	free(unwinder);
	free(cmdfile);
	free(target);
	free(load);
	free(quiet);
	free(argv);
	return status;
}

/* Takes gdb's options -x FILE, -ex CMD and --batch at argv[*i] into @l;
 * returns 1 if it took one, 0 if argv[*i] is not one of them, -1 if its
 * argument is missing. */
static int take_gdb_option(struct launch *l, int argc, char **argv, int *i)
{
	const char *a = argv[*i];

	if (!strcmp(a, "--batch") || !strcmp(a, "-batch")) {
		l->batch = true;
		return 1;
	}
	if (strcmp(a, "-x") && strcmp(a, "-ex"))
		return 0;
	if (*i + 1 >= argc)
		return -1;
	l->user[l->nuser++] = argv[(*i)++];
	l->user[l->nuser++] = argv[*i];
	return 1;
}

/* Fills @l's vectors for @argc arguments; false if out of memory. */
static bool launch_init(struct launch *l, int argc)
{
	ssize_t n;

	memset(l, 0, sizeof(*l));
	n = readlink("/proc/self/exe", l->self, sizeof(l->self) - 1);
	if (n <= 0)
		return false;
	l->self[n] = '\0';
	l->serve = calloc((size_t) argc + 1, sizeof(*l->serve));
	l->user = calloc((size_t) argc + 1, sizeof(*l->user));
	return l->serve && l->user;
}

/* Frees what launch_init() allocated. */
static void launch_fini(struct launch *l)
{
	free(l->serve);
	free(l->user);
}

/* Completes the saved index of bundle @dir if ptrr record left its call
 * segments for later (--index=lazy, the QEMU and perf backends' default
 * in snapshot mode): the server would otherwise make them at the first
 * stop, for the whole trace, while gdb waits (past its timeout on a long
 * full recording), and again at every replay.  Done once, as `ptrr
 * index` does it; where it cannot be saved (a read-only bundle), the
 * replay goes on and says so.  Nothing happens to a complete index or a
 * bundle that does not open (the server then says why). */
static void complete_index(const char *dir)
{
	struct hist_recording *rec;
	size_t n;
	bool lazy = false;
	int err;

	if (hist_recording_open(dir, &rec))
		return;
	n = hist_recording_bundle(rec)->nthreads;
	for (size_t i = 0; i < n && !lazy; i++) {
		struct history *h;

		lazy = !hist_recording_history(rec, i, &h) &&
		       hist_size(h) > 0 &&
		       hist_recording_index_saved(rec, i) &&
		       !hist_calls_from_index(h);
	}
	if (lazy) {
		fprintf(stderr, "ptrr replay: completing the saved index of "
			"%s (its call segments, left for later when it was "
			"recorded; once)...\n", dir);
		err = hist_recording_save_index(rec);
		if (err < 0)
			fprintf(stderr, "ptrr replay: %s; replaying without "
				"it: the first stop waits for the call segments "
				"(run ptrr index on a writable copy to keep "
				"them)\n", ptrr_errmsg(err));
	}
	hist_recording_close(rec);
	ptrr_clear_error();
}

/* `ptrr replay` with @l initialized: its exit status (if the debugger
 * could not be started).  --lldb starts LLDB instead of gdb. */
static int replay(struct launch *l, int argc, char **argv)
{
	static const char usage[] =
		"ptrr replay [--lldb] [-x FILE] [-ex CMD] [--batch] BUNDLE";
	const char *bundle = NULL;
	bool lldb = false;

	for (int i = 1; i < argc; i++) {
		int took = take_gdb_option(l, argc, argv, &i);

		if (took < 0)
			return launch_usage(argv[0], usage, "missing the "
					    "argument of", argv[i]);
		if (took)
			continue;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("usage: %s\n", usage);
			return 0;
		}
		if (!strcmp(argv[i], "--lldb"))
			lldb = true;
		else if (argv[i][0] == '-')
			return launch_usage(argv[0], usage, "invalid option",
					    argv[i]);
		else if (bundle)
			return launch_usage(argv[0], usage,
					    "unexpected argument", argv[i]);
		else
			bundle = argv[i];
	}
	if (!bundle)
		return launch_usage(argv[0], usage, "missing BUNDLE", NULL);
	if (access(bundle, R_OK) != 0) {
		fprintf(stderr, "ptrr replay: cannot open bundle %s: %s: "
			"check the path\n", bundle, strerror(errno));
		return 2;
	}
	l->serve[l->nserve++] = (char *) bundle;
	l->bundle = bundle;
	complete_index(bundle);
	return lldb ? launch_exec_lldb(l) : exec_gdb(l);
}

int ptrr_cmd_replay(int argc, char **argv)
{
	struct launch l;
	int status = launch_init(&l, argc) ? replay(&l, argc, argv) : 2;

	launch_fini(&l);
	return status;
}

/* `ptrr gdb` (or, if @lldb, `ptrr lldb`) with @l initialized: its exit
 * status. */
static int live(struct launch *l, int argc, char **argv, bool lldb)
{
	const char *usage = lldb ?
		"ptrr lldb [record options] [-x FILE] [-ex CMD] [--batch] "
		"-- PROG [ARGS]" :
		"ptrr gdb [record options] [-x FILE] [-ex CMD] [--batch] "
		"-- PROG [ARGS]";
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		int took = take_gdb_option(l, argc, argv, &i);

		if (took < 0)
			return launch_usage(argv[0], usage, "missing the "
					    "argument of", argv[i]);
		if (!took && (!strcmp(argv[i], "--help") ||
			      !strcmp(argv[i], "-h"))) {
			printf("usage: %s\n", usage);
			return 0;
		}
		if (!took)
			l->serve[l->nserve++] = argv[i];
	}
	if (i + 1 >= argc)
		return launch_usage(argv[0], usage, "missing -- PROG", NULL);
	for (; i < argc; i++)
		l->serve[l->nserve++] = argv[i];
	return lldb ? launch_exec_lldb(l) : exec_gdb(l);
}

int ptrr_cmd_gdb(int argc, char **argv)
{
	struct launch l;
	int status = launch_init(&l, argc) ? live(&l, argc, argv, false) : 2;

	launch_fini(&l);
	return status;
}

int ptrr_cmd_lldb(int argc, char **argv)
{
	struct launch l;
	int status = launch_init(&l, argc) ? live(&l, argc, argv, true) : 2;

	launch_fini(&l);
	return status;
}
