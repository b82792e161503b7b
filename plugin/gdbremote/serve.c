/* `ptrr serve [--stdio | --listen ADDR:PORT [--once]] BUNDLE`: serves a
 * recording to gdb over the remote protocol (server.h); or a live
 * session: a program it starts (-- PROG), a process it attaches to
 * (--attach PID), or none until gdb runs or attaches to one in
 * extended-remote mode (--multi, as gdbserver --multi).  The stream is
 * the standard input and output, or TCP connections accepted on ADDR
 * (127.0.0.1 unless the user names another, with a warning: anyone who
 * can reach the port can read the recording): as with gdbserver, the
 * next one when gdb disconnects and the program is still there, unless
 * --once. */
#include <config.h>

#include "commands.h"
#include "gdbremote/server.h"
#include "gdbremote/live_target.h"
#include "record.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const char usage[] =
	"ptrr serve [--stdio | --listen 127.0.0.1:PORT [--once]] (BUNDLE | "
	"[live options] (-- PROG [ARGS] | --attach PID | --multi [-- PROG "
	"[ARGS]]))\n"
	"live options: [--record-from-start] [--backend=auto|soft|perf|qemu] "
	"[--buffer-size=SIZE] [--soft-step=block|insn] "
	"[--on-disconnect=kill|detach|stop]";

/* How a live session (-- PROG) is to be traced. */
struct live_setup {
	struct live_options opt;
	bool from_start;	/* --record-from-start */
	const char *backend;	/* --backend=, or NULL */
	enum rsp_on_disconnect on_disconnect;	/* --on-disconnect= */
	bool multi;		/* --multi: no program needed, and the
				 * server waits for gdb until monitor exit */
	int attach;		/* --attach PID, or 0 */
};

/* Prints a usage error; returns exit status 1. */
static int serve_usage(const char *what, const char *arg)
{
	fprintf(stderr, "ptrr serve: %s%s%s\nusage: %s\n", what,
		arg ? " " : "", arg ? arg : "", usage);
	return 1;
}

/* Parses ADDR:PORT into @sa; false if malformed. */
static bool parse_listen(const char *spec, struct sockaddr_in *sa)
{
	char addr[64];
	const char *colon = strrchr(spec, ':');
	char *end;
	long port;

	if (!colon || (size_t) (colon - spec) >= sizeof(addr))
		return false;
	memcpy(addr, spec, (size_t) (colon - spec));
	addr[colon - spec] = '\0';
	/* gdbserver's and GDB's testsuite's way to say the loopback. */
	if (!strcmp(addr, "localhost"))
		addr[0] = '\0';
	port = strtol(colon + 1, &end, 10);
	if (end == colon + 1 || *end || port < 0 || port > 65535)
		return false;
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t) port);
	return inet_pton(AF_INET, addr[0] ? addr : "127.0.0.1",
			 &sa->sin_addr) == 1;
}

/* Listens on @sa (port 0: any free one, then @sa's); the socket, or a
 * negative error. */
static int open_listener(struct sockaddr_in *sa)
{
	socklen_t len = sizeof(*sa);
	int one = 1, fd;

	if (ntohl(sa->sin_addr.s_addr) >> 24 != 127)
		fprintf(stderr, "ptrr serve: warning: listening on a "
			"non-loopback address: anyone who can reach it can "
			"read the recording\n");
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ptrr_fail(PTRR_ERR_IO, "socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *) sa, sizeof(*sa)) < 0 ||
	    listen(fd, 1) < 0 ||
	    getsockname(fd, (struct sockaddr *) sa, &len) < 0) {
		int e = errno;

		close(fd);
		/* gdbserver's words, on which GDB's testsuite tries the
		 * next port. */
		if (e == EADDRINUSE)
			fprintf(stderr, "Can't bind address: Address already "
				"in use.\n");
		return ptrr_fail(PTRR_ERR_IO, "cannot listen on port %u: %s: "
				 "choose another port (0: any free one)",
				 ntohs(sa->sin_port), strerror(e));
	}
	return fd;
}

/* Says on stderr where the server listens (@sa) and accepts the next
 * connection on @fd: its descriptor, or a negative error. */
static int accept_next(int fd, const struct sockaddr_in *sa)
{
	int one = 1, conn;

	/* The second line is gdbserver's, which scripts and GDB's
	 * testsuite wait for. */
	fprintf(stderr, "listening on %s:%u\nListening on port %u\n",
		inet_ntoa(sa->sin_addr), ntohs(sa->sin_port),
		ntohs(sa->sin_port));
	do
		conn = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
	while (conn < 0 && errno == EINTR);
	if (conn < 0)
		return ptrr_fail(PTRR_ERR_IO, "accept: %s", strerror(errno));
	setsockopt(conn, IPPROTO_TCP, 1 /* TCP_NODELAY */, &one, sizeof(one));
	return conn;
}

/* The program started by `-- PROG` must not read or write the protocol
 * on the standard input and output: moves the protocol to new
 * descriptors (*@in, *@out) and gives the program /dev/null for input and
 * the standard error for output.  False if that fails. */
static bool set_aside_stdio(int *in, int *out)
{
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

	*in = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
	*out = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	if (null < 0 || *in < 0 || *out < 0 || dup2(null, STDIN_FILENO) < 0 ||
	    dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
		return false;
	close(null);
	return true;
}

/* Takes PID, the argument of --attach, into @ls; false after a usage
 * error. */
static bool attach_option(const char *pid, struct live_setup *ls)
{
	char *end;
	long n = pid ? strtol(pid, &end, 10) : 0;

	if (!pid || end == pid || *end || n <= 0 || n > INT_MAX) {
		serve_usage("--attach wants a process id, not",
			    pid ? pid : "nothing");
		return false;
	}
	ls->attach = (int) n;
	return true;
}

/* Takes live option @arg (record-from-start, backend, buffer-size,
 * soft-step, on-disconnect, multi, attach=PID) into @ls: 1 if it is one,
 * 0 if not, -1 after a usage error. */
static int live_option(const char *arg, struct live_setup *ls)
{
	if (!strcmp(arg, "--multi"))
		ls->multi = true;
	else if (!strncmp(arg, "--attach=", 9)) {
		if (!attach_option(arg + 9, ls))
			return -1;
	} else if (!strcmp(arg, "--record-from-start"))
		ls->from_start = true;
	else if (!strncmp(arg, "--backend=", 10))
		ls->backend = arg + 10;
	else if (!strncmp(arg, "--buffer-size=", 14)) {
		ls->opt.trace_cap = rec_parse_size(arg + 14);
		if (ls->opt.trace_cap < 4096) {
			serve_usage("--buffer-size wants a size of 4K or "
				    "more, not", arg + 14);
			return -1;
		}
	} else if (!strcmp(arg, "--soft-step=insn"))
		ls->opt.insn_step = true;
	else if (!strcmp(arg, "--soft-step=block"))
		ls->opt.insn_step = false;
	else if (!strncmp(arg, "--soft-step=", 12)) {
		serve_usage("--soft-step wants block or insn, not", arg + 12);
		return -1;
	} else if (!strcmp(arg, "--on-disconnect=kill"))
		ls->on_disconnect = RSP_DISCONNECT_KILL;
	else if (!strcmp(arg, "--on-disconnect=detach"))
		ls->on_disconnect = RSP_DISCONNECT_DETACH;
	else if (!strcmp(arg, "--on-disconnect=stop"))
		ls->on_disconnect = RSP_DISCONNECT_STOP;
	else if (!strncmp(arg, "--on-disconnect=", 16)) {
		serve_usage("--on-disconnect wants kill, detach or stop, not",
			    arg + 16);
		return -1;
	} else
		return 0;
	return 1;
}

/* The trace source of a live session, *@src: --backend's (the software
 * backend's by default), or auto's choice (source.h).  0, or the exit
 * status after saying why not. */
static int choose_source(const struct live_setup *ls,
			 const struct tsrc_ops **src)
{
	if (ls->backend && strcmp(ls->backend, "auto") &&
	    !tsrc_named(ls->backend))
		return serve_usage("--backend wants auto, soft, perf or qemu, "
				   "not", ls->backend);
	return tsrc_choose("ptrr serve", ls->backend ? ls->backend : "soft",
			   NULL, true, src);
}

/* Where gdb connects: the standard input and output (@listen_fd < 0),
 * or connections accepted on socket @listen_fd, bound to @sa: one after
 * the other while the program is there and the last gdb went away
 * without ending it, as with gdbserver; only one if @once. */
struct serve_stream {
	int in, out;
	int listen_fd;
	struct sockaddr_in sa;
	bool once;
};

/* What makes the target of one more process of a --multi server. */
struct live_maker {
	const struct tsrc_ops *src;
	const struct live_setup *ls;
};

/* The target of a process of @ls's live session, traced by @src, with
 * no process yet (the server's new_target). */
static int open_live(const struct tsrc_ops *src, const struct live_setup *ls,
		     char **prog, struct rsp_target **t)
{
	int err = rsp_live_target_open(src, prog, &ls->opt, t);

	if (err >= 0 && ls->from_start)
		err = rsp_live_target_record_from_start(*t);
	if (err >= 0)
		rsp_live_target_on_disconnect(*t, ls->on_disconnect);
	if (err < 0 && *t) {
		(*t)->ops->close(*t);
		*t = NULL;
	}
	return err;
}

/* The server's new_target for a --multi server (@arg a live_maker). */
static int new_live_target(void *arg, struct rsp_target **out)
{
	const struct live_maker *m = arg;

	return open_live(m->src, m->ls, NULL, out);
}

/* Serves @bundle if not NULL, or a live session (traced by @src as @ls
 * says) of the program @prog, or of process ls->attach, or of none yet,
 * on @io; the exit status. */
static int serve(const char *bundle, char **prog, const struct tsrc_ops *src,
		 const struct live_setup *ls, struct serve_stream *io)
{
	struct rsp_server s = { 0 };
	struct rsp_target *t = NULL;
	struct live_maker maker = { src, ls };
	int err = bundle ? rsp_replay_target_open(bundle, &t) :
		  open_live(src, ls, prog, &t);

	if (err >= 0 && ls->attach)
		err = t->ops->attach(t, ls->attach);
	if (err >= 0)
		err = rsp_server_init(&s, t);
	else if (t)
		t->ops->close(t);
	s.multi = ls->multi;
	if (err >= 0 && !bundle && ls->multi) {
		s.new_target = new_live_target;
		s.new_target_arg = &maker;
	}
	s.no_process = !bundle && !prog && !ls->attach;
	if (err >= 0 && io->listen_fd < 0)
		err = rsp_server_run(&s, io->in, io->out);
	for (bool first = true; err >= 0 && io->listen_fd >= 0 &&
	     (first || (!io->once && rsp_server_waits_again(&s)));
	     first = false) {
		int fd = accept_next(io->listen_fd, &io->sa);

		err = fd < 0 ? fd : rsp_server_run(&s, fd, fd);
		if (fd >= 0)
			close(fd);
	}
	if (err < 0)
		fprintf(stderr, "ptrr serve: %s\n", ptrr_errmsg(err));
	rsp_server_close(&s);
	return err < 0 ? 2 : 0;
}

int ptrr_cmd_serve(int argc, char **argv)
{
	const char *bundle = NULL, *listen_on = NULL;
	struct live_setup ls = { 0 };
	const struct tsrc_ops *src = NULL;
	bool live_opts = false;
	char **prog = NULL;
	struct serve_stream io = { .in = STDIN_FILENO, .out = STDOUT_FILENO,
				   .listen_fd = -1 };
	int status;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--stdio"))
			listen_on = NULL;
		else if (!strcmp(argv[i], "--once"))
			io.once = true;
		else if (!strcmp(argv[i], "--listen") && i + 1 < argc)
			listen_on = argv[++i];
		else if (!strncmp(argv[i], "--listen=", 9))
			listen_on = argv[i] + 9;
		else if (!strncmp(argv[i], "--stderr-fd=", 12)) {
			/* ptrr replay's quiet connection: the messages go
			 * around gdb's redirected output (a descriptor
			 * number, because dash cannot redirect from one
			 * above 9). */
			char *end;
			long n = strtol(argv[i] + 12, &end, 10);

			if (*end || end == argv[i] + 12 || n < 3 ||
			    n > INT_MAX || dup2((int) n, STDERR_FILENO) < 0)
				return serve_usage("--stderr-fd wants an open "
						   "descriptor, not",
						   argv[i] + 12);
			close((int) n);
		} else if (!strcmp(argv[i], "--attach")) {
			if (!attach_option(i + 1 < argc ? argv[++i] : NULL,
					   &ls))
				return 1;
			live_opts = true;
		} else if ((status = live_option(argv[i], &ls)) < 0)
			return 1;
		else if (status)
			live_opts = true;
		else if (!strcmp(argv[i], "--help")) {
			printf("usage: %s\n", usage);
			return 0;
		} else if (!strcmp(argv[i], "--")) {
			prog = argv + i + 1;
			break;
		} else if (argv[i][0] == '-')
			return serve_usage("invalid option", argv[i]);
		else if (bundle)
			return serve_usage("unexpected argument", argv[i]);
		else
			bundle = argv[i];
	}
	if (prog && !prog[0])
		return serve_usage("missing PROG after --", NULL);
	if (prog && bundle)
		return serve_usage("give a BUNDLE or -- PROG, not both", NULL);
	if (ls.attach && (prog || ls.multi))
		return serve_usage("--attach PID is the program: give no -- "
				   "PROG and no --multi with it", NULL);
	if (!bundle && !prog && !ls.attach && !ls.multi)
		return serve_usage("missing BUNDLE", NULL);
	if (live_opts && bundle)
		return serve_usage("--record-from-start, --backend, "
				   "--buffer-size, --soft-step, --multi, "
				   "--attach and --on-disconnect are for a "
				   "live session, not a recording", NULL);
	if (!bundle && (status = choose_source(&ls, &src)))
		return status;
	if (listen_on && !parse_listen(listen_on, &io.sa))
		return serve_usage("--listen wants ADDRESS:PORT, not",
				   listen_on);
	/* gdb closing the pipe must not kill us mid-reply. */
	signal(SIGPIPE, SIG_IGN);
	if (!listen_on) {
		if (!bundle && !set_aside_stdio(&io.in, &io.out)) {
			fprintf(stderr, "ptrr serve: cannot set the standard "
				"input and output aside: %s\n", strerror(errno));
			return 2;
		}
		return serve(bundle, prog, src, &ls, &io);
	}
	io.listen_fd = open_listener(&io.sa);
	if (io.listen_fd < 0) {
		fprintf(stderr, "ptrr serve: %s\n", ptrr_errmsg(io.listen_fd));
		return 2;
	}
	status = serve(bundle, prog, src, &ls, &io);
	close(io.listen_fd);
	return status;
}

static const char gdbserver_usage[] =
	"ptrr gdbserver [--once] [live options] [HOST]:PORT|stdio PROG [ARGS]\n"
	"       ptrr gdbserver --multi [--once] [live options] [HOST]:PORT|stdio "
	"[PROG [ARGS]]\n"
	"       ptrr gdbserver --attach [--once] [live options] "
	"[HOST]:PORT|stdio PID";

/* `ptrr gdbserver`: gdbserver's command line (as IDEs, scripts and
 * GDB's testsuite start it) for `ptrr serve --listen HOST:PORT [--once]
 * [live options] -- PROG ARGS`; `stdio` or `-` for --stdio; --multi
 * (PROG optional) and --attach (PID after the address) as gdbserver's. */
int ptrr_cmd_gdbserver(int argc, char **argv)
{
	char **args = calloc((size_t) argc + 4, sizeof(*args));
	struct live_setup checked = { 0 };
	bool attach = false;
	int n = 0, i = 1, status = 0;

	if (!args) {
		fprintf(stderr, "ptrr gdbserver: out of memory\n");
		return 2;
	}
	args[n++] = "serve";
	for (; i < argc && argv[i][0] == '-' && strcmp(argv[i], "-"); i++) {
		if (!strcmp(argv[i], "--help")) {
			printf("usage: %s\nlive options: as ptrr serve's\n",
			       gdbserver_usage);
			free(args);
			return 0;
		}
		if (!strcmp(argv[i], "--attach")) {
			attach = true;
			continue;
		}
		if (strcmp(argv[i], "--once") &&
		    (status = live_option(argv[i], &checked)) <= 0) {
			if (!status)
				fprintf(stderr, "ptrr gdbserver: %s is not "
					"supported\nusage: %s\n", argv[i],
					gdbserver_usage);
			free(args);
			return 1;
		}
		args[n++] = argv[i];
	}
	if (argc - i < (checked.multi ? 1 : 2) || (attach && argc - i != 2)) {
		fprintf(stderr, "ptrr gdbserver: %s\nusage: %s\n",
			i >= argc ? "missing [HOST]:PORT" : attach ?
			"--attach wants [HOST]:PORT and one PID" :
			"missing PROG", gdbserver_usage);
		free(args);
		return 1;
	}
	if (!strcmp(argv[i], "stdio") || !strcmp(argv[i], "-")) {
		args[n++] = "--stdio";
	} else {
		args[n++] = "--listen";
		args[n++] = argv[i];
	}
	if (attach) {
		args[n++] = "--attach";
		args[n++] = argv[++i];
	} else if (i + 1 < argc) {
		args[n++] = "--";
		for (i++; i < argc; i++)
			args[n++] = argv[i];
	}
	status = ptrr_cmd_serve(n, args);
	free(args);
	return status;
}
