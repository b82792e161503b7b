/* `ptrr replay --lldb` and `ptrr lldb`: start LLDB connected to ptrr's
 * server (launch.h, DESIGN.md §4).
 *
 * LLDB cannot start a stub through a pipe as gdb does, so the server
 * runs as a child, `ptrr serve --listen 127.0.0.1:0 ...` (loopback only),
 * and LLDB connects to the port it prints.  LLDB gets, in this order: the
 * command file (plugin/lldb/ptrr.lldb: the `pt` commands), the program's
 * file as its target (LLDB would look the program up by its pid, but a
 * recording's pid names no process here, and a live program's under QEMU
 * is qemu-x86_64), `gdb-remote
 * 127.0.0.1:PORT`, then the user's -x FILE and -ex CMD as LLDB's -s FILE
 * and -o CMD in the order given, and --batch as -b.
 *
 * The server's standard error (and a live program's, which it shares) is
 * a pipe the launcher reads the port from; a child of the launcher then
 * copies the rest to the standard error until the server is gone.  The
 * server's standard input is /dev/null and it has a process group of its
 * own: the terminal, and its ^C, are LLDB's.  LLDB is
 * $PTRR_LLDB if set, else lldb-19, else lldb.
 */
#include <config.h>

#include "launch.h"
#include "qemu/qemu_host.h"
#include "gdbremote/target_replay.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Starts `ptrr serve --listen 127.0.0.1:0` with @l's arguments; its pid,
 * with the read end of its standard error in *@err; -1 on failure. */
static pid_t start_server(const struct launch *l, int *err)
{
	char **argv = calloc(l->nserve + 6, sizeof(*argv));
	int fds[2], null;
	pid_t pid;
	size_t n = 0;

	if (!argv || pipe2(fds, O_CLOEXEC) < 0) {
		free(argv);
		return -1;
	}
	argv[n++] = (char *) l->self;
	argv[n++] = "serve";
	argv[n++] = "--listen";
	argv[n++] = "127.0.0.1:0";
	argv[n++] = "--once";	/* LLDB gone, the session ends */
	for (size_t i = 0; i < l->nserve; i++)
		argv[n++] = l->serve[i];
	pid = fork();
	if (pid == 0) {
		/* Out of the terminal's foreground group: LLDB turns the
		 * user's ^C into an interrupt packet, which must reach a
		 * server that is still there. */
		setpgid(0, 0);
		null = open("/dev/null", O_RDONLY);
		if (null < 0 || dup2(null, STDIN_FILENO) < 0 ||
		    dup2(fds[1], STDERR_FILENO) < 0)
			_exit(2);
		execv(l->self, argv);
		_exit(2);
	}
	free(argv);
	close(fds[1]);
	if (pid < 0)
		close(fds[0]);
	*err = fds[0];
	return pid;
}

/* Reads the server's standard error @fd up to its "listening on
 * 127.0.0.1:PORT" line, passing other lines on to ours; the port, or 0
 * if the server ended first. */
static unsigned read_port(int fd)
{
	FILE *in = fdopen(dup(fd), "r");
	char line[512];
	unsigned port = 0;

	if (!in)
		return 0;
	/* Unbuffered: what follows the line stays in the pipe for the
	 * child that copies it. */
	setvbuf(in, NULL, _IONBF, 0);
	while (!port && fgets(line, sizeof(line), in))
		if (sscanf(line, "listening on 127.0.0.1:%u", &port) != 1)
			fputs(line, stderr);
	fclose(in);
	return port;
}

/* Forks a child that copies @fd to the standard error until its end. */
static void forward_stderr(int fd)
{
	char buf[4096];
	ssize_t n;

	if (fork() != 0)
		return;
	signal(SIGINT, SIG_IGN);	/* ^C is LLDB's */
	while ((n = read(fd, buf, sizeof(buf))) > 0 ||
	       (n < 0 && errno == EINTR))
		if (n > 0 && write(STDERR_FILENO, buf, (size_t) n) < 0)
			break;
	_exit(0);
}

/* LLDB's command that makes the program of the bundle @l replays its
 * target, "target create PATH" (the file gdb reads with qXfer:exec-file;
 * malloc'd), or NULL after saying why not. */
static char *replay_target(const struct launch *l)
{
	struct hist_bundle *b;
	char *path, *cmd = NULL;
	int err = hist_bundle_load(l->bundle, &b);

	if (err < 0) {
		fprintf(stderr, "ptrr replay: %s\n", ptrr_errmsg(err));
		return NULL;
	}
	path = rsp_exec_file(b);
	hist_bundle_free(b);
	if (!path || asprintf(&cmd, "target create \"%s\"", path) < 0) {
		fprintf(stderr, "ptrr replay: out of memory\n");
		cmd = NULL;
	}
	free(path);
	return cmd;
}

/* The same for the program of a live session (after `--` in the
 * server's arguments, searched in PATH): LLDB would take the program of
 * the pid, which under QEMU is qemu-x86_64's.  NULL after saying why
 * not. */
static char *live_target(const struct launch *l)
{
	char found[PATH_MAX], real[PATH_MAX], *cmd = NULL;
	size_t i = 0;

	while (i < l->nserve && strcmp(l->serve[i], "--"))
		i++;
	if (i + 1 >= l->nserve ||
	    !qhost_find_in_path(l->serve[i + 1], found, sizeof(found)) ||
	    !realpath(found, real)) {
		fprintf(stderr, "ptrr lldb: %s: no such program\n",
			i + 1 < l->nserve ? l->serve[i + 1] : "");
		return NULL;
	}
	if (asprintf(&cmd, "target create \"%s\"", real) < 0) {
		fprintf(stderr, "ptrr lldb: out of memory\n");
		cmd = NULL;
	}
	return cmd;
}

/* LLDB's command line (malloc'd, NULL-terminated; argv[0] is set by
 * exec_lldb()) for the server on @port, LLDB's target @target ("target
 * create ..." of a replay, else NULL); the strings it makes in *@owned to
 * free.  NULL if out of memory. */
static char **lldb_argv(const struct launch *l, unsigned port,
			char *target, char *owned[2])
{
	char **argv = calloc(l->nuser + 12, sizeof(*argv));
	char *cmdfile = launch_support_file(l, PTRR_SRCDIR,
			"plugin/lldb/ptrr.lldb", PTRR_LAUNCH_PKGDATADIR
			"/ptrr.lldb"), *source = NULL, *connect;
	size_t n = 1;

	/* Sourced silently: LLDB's -s FILE would echo every line. */
	owned[0] = cmdfile && asprintf(&source, "command source -s 1 \"%s\"",
				       cmdfile) < 0 ? NULL : source;
	free(cmdfile);
	owned[1] = asprintf(&connect, "gdb-remote 127.0.0.1:%u", port) < 0 ?
		   NULL : connect;
	if (!argv || !owned[1]) {
		free(argv);
		return NULL;
	}
	if (l->batch)
		argv[n++] = "-b";
	if (owned[0]) {
		argv[n++] = "-o";
		argv[n++] = owned[0];
	}
	if (target) {
		/* LLDB would look the pid up among this host's processes
		 * and take the program of any that has it. */
		argv[n++] = "-o";
		argv[n++] = "platform select remote-linux";
		argv[n++] = "-o";
		argv[n++] = target;
	}
	argv[n++] = "-o";
	argv[n++] = owned[1];
	for (size_t i = 0; i + 1 < l->nuser; i += 2) {
		argv[n++] = !strcmp(l->user[i], "-x") ? "-s" : "-o";
		argv[n++] = l->user[i + 1];
	}
	return argv;
}

/* Runs LLDB (@argv[0] is its name) in place of this process, trying
 * lldb-19 then lldb unless $PTRR_LLDB names one; returns if none runs. */
static void exec_lldb(char **argv)
{
	const char *chosen = getenv("PTRR_LLDB");

	if (chosen && *chosen) {
		argv[0] = (char *) chosen;
		execvp(chosen, argv);
		return;
	}
	argv[0] = "lldb-19";
	execvp(argv[0], argv);
	argv[0] = "lldb";
	execvp(argv[0], argv);
}

int launch_exec_lldb(const struct launch *l)
{
	char *owned[2] = { NULL, NULL }, **argv, *target = NULL;
	const char *cmd = l->bundle ? "ptrr replay" : "ptrr lldb";
	unsigned port;
	int errfd = -1, status;
	pid_t server;

	target = l->bundle ? replay_target(l) : live_target(l);
	if (!target)
		return 2;
	server = start_server(l, &errfd);
	if (server < 0) {
		fprintf(stderr, "%s: cannot start ptrr serve: %s\n", cmd,
			strerror(errno));
		free(target);
		return 2;
	}
	port = read_port(errfd);
	if (!port) {
		close(errfd);
		waitpid(server, &status, 0);
		fprintf(stderr, "%s: ptrr serve ended before listening (its "
			"message is above)\n", cmd);
		free(target);
		return 2;
	}
	argv = lldb_argv(l, port, target, owned);
	if (argv) {
		forward_stderr(errfd);
		close(errfd);
		exec_lldb(argv);
		fprintf(stderr, "%s: cannot run %s: %s (install LLDB: apt-get "
			"install lldb-19, or set PTRR_LLDB)\n", cmd, argv[0],
			strerror(errno));
	} else {
		fprintf(stderr, "%s: out of memory\n", cmd);
		close(errfd);
	}
	kill(server, SIGTERM);
	waitpid(server, &status, 0);
	free(owned[0]);
	free(owned[1]);
	free(target);
	free(argv);
	return 2;
}
