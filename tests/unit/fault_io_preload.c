/* Faults in the file writes of one ptrr process, for tests/fault-save.sh:
 * an LD_PRELOAD object built for `make check` only and never installed
 * (ptrr itself has no test hook).  It acts only in a process whose
 * program is named ptrr and whose first argument is $PTRR_FAULT_CMD
 * ("record", "serve"), and takes LD_PRELOAD out of that process's
 * environment, so the programs it runs go without it; in every other
 * process (gdb, `ptrr gdb` before it runs gdb) it passes everything on.
 *
 * PTRR_FAULT_ENOSPC=N: a full disk after N bytes.  Writes to regular
 * files (write, pwrite, writev) succeed up to N bytes in all, the one
 * that crosses N short; after that they, and fsync and fdatasync, fail
 * with ENOSPC.  With PTRR_FAULT_DIR=DIR, only files under DIR count
 * and fail: the full file system is DIR's, others have room.
 *
 * PTRR_FAULT_KILL=N: the process kills itself with SIGKILL just before
 * its Nth step of writing files: a mkdir, a write to a regular file, an
 * fsync or a rename.  $PTRR_FAULT_LOG, if set, gets "step N CALL" for
 * each step taken, so a test can tell how far it got.
 *
 * PTRR_FAULT_NO_EXCHANGE=1: renameat2 refuses RENAME_EXCHANGE (EINVAL),
 * as on file systems without it (NFS).
 *
 * PTRR_FAULT_KILL_STOPPED=N: just before ptrr's Nth PTRACE_GETSIGINFO,
 * the traced process gets SIGKILL and 200 ms to leave the stop ptrr is
 * handling for its PTRACE_EVENT_EXIT stop: a kill from outside landing
 * between ptrr's wait for a stop and its reading of that stop.
 *
 * PTRR_FAULT_DR=deaf: a machine whose x86 debug registers do not work,
 * as under hypervisors that do not pass them through: PTRACE_POKEUSER
 * into u_debugreg succeeds and does nothing, so they never fire.
 * PTRR_FAULT_DR=eio: such pokes fail with EIO. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <time.h>
#include <unistd.h>

#include "preload_ptrr.h"

static bool active;
static long long space = -1;	/* bytes left before ENOSPC; -1: no limit */
static long kill_at;		/* the step to die at; 0: never */
static long steps;
static int log_fd = -1;
static const char *full_dir;	/* only files under it fill up */
static bool no_exchange;
static long kill_stopped_at;	/* the GETSIGINFO to kill before; 0: never */
static long siginfos;
static const char *dr_mode;	/* PTRR_FAULT_DR: deaf, eio or NULL */

/* The real function @name, past this object. */
static void *next(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);

	if (!f)
		abort();
	return f;
}

/* True if the process's first argument is @cmd. */
static bool first_arg_is(const char *cmd)
{
	char buf[4096];
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	size_t skip;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	skip = strlen(buf) + 1;
	return skip < (size_t) n && !strcmp(buf + skip, cmd);
}

__attribute__((constructor)) static void fault_init(void)
{
	const char *cmd = getenv("PTRR_FAULT_CMD");
	const char *enospc = getenv("PTRR_FAULT_ENOSPC");
	const char *kill_env = getenv("PTRR_FAULT_KILL");
	const char *log = getenv("PTRR_FAULT_LOG");
	const char *stopped = getenv("PTRR_FAULT_KILL_STOPPED");

	if (!cmd || !preload_in_ptrr() || !first_arg_is(cmd))
		return;
	active = true;
	if (enospc)
		space = atoll(enospc);
	if (kill_env)
		kill_at = atol(kill_env);
	if (stopped)
		kill_stopped_at = atol(stopped);
	full_dir = getenv("PTRR_FAULT_DIR");
	no_exchange = getenv("PTRR_FAULT_NO_EXCHANGE") != NULL;
	dr_mode = getenv("PTRR_FAULT_DR");
	if (log)
		log_fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
			      0666);
	unsetenv("LD_PRELOAD");
}

/* One step of writing files: logged, and the last one if it is
 * PTRR_FAULT_KILL's. */
static void step(const char *call)
{
	char line[64];
	int len;

	if (!active)
		return;
	steps++;
	if (kill_at && steps == kill_at)
		raise(SIGKILL);
	len = snprintf(line, sizeof(line), "step %ld %s\n", steps, call);
	if (log_fd >= 0) {
		ssize_t (*real)(int, const void *, size_t) = next("write");

		if (real(log_fd, line, (size_t) len) < 0)
			abort();
	}
}

/* True if @fd is a regular file other than the log. */
static bool regular(int fd)
{
	struct stat st;

	return active && fd != log_fd && !fstat(fd, &st) &&
	       S_ISREG(st.st_mode);
}

/* True if @fd is on the full file system: under PTRR_FAULT_DIR, if
 * set. */
static bool on_full(int fd)
{
	char link[64], path[PATH_MAX];
	ssize_t n;

	if (!full_dir)
		return true;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	path[n > 0 ? n : 0] = 0;
	return !strncmp(path, full_dir, strlen(full_dir));
}

/* How many of @size bytes a write to @fd may write: all, fewer up to
 * the limit, or -1 with errno ENOSPC once it is reached. */
static ssize_t allowed(int fd, size_t size)
{
	if (!regular(fd))
		return (ssize_t) size;
	step("write");
	if (space < 0 || !on_full(fd))
		return (ssize_t) size;
	if ((long long) size <= space) {
		space -= (long long) size;
		return (ssize_t) size;
	}
	if (space == 0) {
		errno = ENOSPC;
		return -1;
	}
	size = (size_t) space;
	space = 0;
	return (ssize_t) size;
}

ssize_t write(int fd, const void *buf, size_t size)
{
	ssize_t (*real)(int, const void *, size_t) = next("write");
	ssize_t n = allowed(fd, size);

	return n < 0 ? n : real(fd, buf, (size_t) n);
}

ssize_t pwrite(int fd, const void *buf, size_t size, off_t off)
{
	ssize_t (*real)(int, const void *, size_t, off_t) = next("pwrite");
	ssize_t n = allowed(fd, size);

	return n < 0 ? n : real(fd, buf, (size_t) n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t size, off_t off)
{
	return pwrite(fd, buf, size, off);
}

ssize_t writev(int fd, const struct iovec *iov, int iovcnt)
{
	ssize_t (*real)(int, const struct iovec *, int) = next("writev");
	size_t size = 0;

	for (int i = 0; i < iovcnt; i++)
		size += iov[i].iov_len;
	if (regular(fd) && allowed(fd, size) != (ssize_t) size) {
		errno = ENOSPC;	/* all or nothing: simpler, and allowed */
		return -1;
	}
	return real(fd, iov, iovcnt);
}

/* fsync and fdatasync of @fd: ENOSPC once the disk is full. */
static int sync_fault(int fd, const char *call)
{
	step(call);
	if (active && space == 0 && on_full(fd)) {
		errno = ENOSPC;
		return -1;
	}
	return 0;
}

int fsync(int fd)
{
	int (*real)(int) = next("fsync");

	return sync_fault(fd, "fsync") ? -1 : real(fd);
}

int fdatasync(int fd)
{
	int (*real)(int) = next("fdatasync");

	return sync_fault(fd, "fdatasync") ? -1 : real(fd);
}

int mkdir(const char *path, mode_t mode)
{
	int (*real)(const char *, mode_t) = next("mkdir");

	step("mkdir");
	return real(path, mode);
}

int mkdirat(int dfd, const char *path, mode_t mode)
{
	int (*real)(int, const char *, mode_t) = next("mkdirat");

	step("mkdirat");
	return real(dfd, path, mode);
}

int rename(const char *from, const char *to)
{
	int (*real)(const char *, const char *) = next("rename");

	step("rename");
	return real(from, to);
}

int renameat(int ofd, const char *from, int nfd, const char *to)
{
	int (*real)(int, const char *, int, const char *) = next("renameat");

	step("renameat");
	return real(ofd, from, nfd, to);
}

int renameat2(int ofd, const char *from, int nfd, const char *to,
	      unsigned flags)
{
	int (*real)(int, const char *, int, const char *, unsigned) =
		next("renameat2");

	step("renameat2");
	if (active && no_exchange && (flags & RENAME_EXCHANGE)) {
		errno = EINVAL;
		return -1;
	}
	return real(ofd, from, nfd, to, flags);
}

long ptrace(enum __ptrace_request req, ...)
{
	long (*real)(enum __ptrace_request, pid_t, void *, void *) =
		next("ptrace");
	struct timespec pause = { 0, 200000000 };
	va_list ap;
	pid_t pid;
	void *addr, *data;

	va_start(ap, req);
	pid = va_arg(ap, pid_t);
	addr = va_arg(ap, void *);
	data = va_arg(ap, void *);
	va_end(ap);
	if (active && req == PTRACE_GETSIGINFO && kill_stopped_at &&
	    ++siginfos == kill_stopped_at) {
		kill(pid, SIGKILL);	/* a thread's id: its whole process */
		nanosleep(&pause, NULL);
	}
	if (active && dr_mode && req == PTRACE_POKEUSER &&
	    (uintptr_t) addr >= offsetof(struct user, u_debugreg) &&
	    (uintptr_t) addr < offsetof(struct user, u_debugreg) +
			       sizeof(((struct user *) 0)->u_debugreg)) {
		if (strcmp(dr_mode, "eio"))
			return 0;
		errno = EIO;
		return -1;
	}
	return real(req, pid, addr, data);
}
