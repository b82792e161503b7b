/* bench/bare-step — the bare PTRACE_SINGLESTEP rate of this machine on a
 * program: the floor under any recorder that single-steps (ptrr's
 * software backend, GDB's `record full`).
 *
 * It starts PROG like `ptrr record --start=SYMBOL` does (traced from its
 * exec, address randomization off, run at native speed to an int3 on
 * SYMBOL), then single-steps it to its exit doing nothing else per step
 * than what --work asks:
 *
 *   none  PTRACE_SINGLESTEP + waitpid (the default: the bare rate);
 *   regs  also PTRACE_GETREGS (any recorder must learn the new rip);
 *   code  also read the 15 code bytes at rip with process_vm_readv
 *         (with regs: the system calls ptrr's stepper makes per step).
 *
 * Prints one line: "bare-step: STEPS steps in SECS s (RATE steps/s),
 * work W".  Steps are counted from SYMBOL to the exit, the exiting
 * system call included (ptrr counts the same instructions, REP string
 * iterations aside: ptrr reports a REP instruction once).
 *
 * Self-contained on purpose (ptrace and libelf only): it measures the
 * machine, not ptrr's stepper.
 *
 * usage: bare-step [--start=SYMBOL] [--work=none|regs|code] -- PROG [ARGS]
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum work { WORK_NONE, WORK_REGS, WORK_CODE };

static const char usage_text[] =
	"usage: bare-step [--start=SYMBOL] [--work=none|regs|code] "
	"-- PROG [ARGS]\n";

static void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list ap;

	fputs("bare-step: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* Looks @name up in the symbol tables of ELF file @path: its value, and
 * whether the file is position-independent (ET_DYN). */
static bool elf_symbol(const char *path, const char *name, uint64_t *value,
		       bool *pie)
{
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	GElf_Sym sym;
	bool found = false;
	Elf *elf;
	int fd;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die("cannot open %s: %s", path, strerror(errno));
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || !gelf_getehdr(elf, &eh))
		die("%s is not an ELF file", path);
	*pie = eh.e_type == ET_DYN;
	while (!found && (scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		size_t count;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB &&
						sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize || !(data = elf_getdata(scn, NULL)))
			continue;
		count = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; !found && i < count; i++) {
			const char *n;

			if (!gelf_getsym(data, (int) i, &sym) ||
			    sym.st_shndx == SHN_UNDEF)
				continue;
			n = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (n && !strcmp(n, name)) {
				*value = sym.st_value;
				found = true;
			}
		}
	}
	elf_end(elf);
	close(fd);
	return found;
}

/* The lowest address at which @path is mapped in process @pid. */
static uint64_t load_base(pid_t pid, const char *path)
{
	char maps[64], line[4096 + 256], file[4096];
	uint64_t start, base = 0;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int) pid);
	f = fopen(maps, "r");
	if (!f)
		die("cannot read %s: %s", maps, strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%" SCNx64 "-%*x %*s %*x %*s %*u %4095s",
			   &start, file) == 2 && !strcmp(file, path) &&
		    (!base || start < base))
			base = start;
	fclose(f);
	return base;
}

/* The run-time address of @symbol in the program process @pid runs. */
static uint64_t resolve(pid_t pid, const char *symbol)
{
	char link[64], exe[4096];
	uint64_t value;
	ssize_t len;
	bool pie;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int) pid);
	len = readlink(link, exe, sizeof(exe) - 1);
	if (len < 0)
		die("cannot read %s: %s", link, strerror(errno));
	exe[len] = 0;
	if (!elf_symbol(exe, symbol, &value, &pie))
		die("no symbol '%s' in %s", symbol, exe);
	return pie ? value + load_base(pid, exe) : value;
}

static void wait_stop(pid_t pid, int *status)
{
	while (waitpid(pid, status, __WALL) < 0)
		if (errno != EINTR)
			die("waitpid: %s", strerror(errno));
	if (!WIFSTOPPED(*status))
		die("the program ended before reaching the start symbol");
}

/* Starts @argv traced, stopped after its exec, randomization off. */
static pid_t launch(char *const argv[])
{
	long opts = PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL;
	pid_t pid = fork();
	int status;

	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) == 0 &&
		    personality((unsigned long) personality(0xffffffff) |
				ADDR_NO_RANDOMIZE) >= 0)
			execvp(argv[0], argv);
		fprintf(stderr, "bare-step: cannot run %s: %s\n", argv[0],
			strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, __WALL) < 0)
		if (errno != EINTR)
			die("waitpid: %s", strerror(errno));
	if (!WIFSTOPPED(status))
		exit(2);	/* the child said why */
	if (ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *) opts) < 0)
		die("PTRACE_SETOPTIONS: %s", strerror(errno));
	return pid;
}

/* Runs @pid at native speed to @addr (an int3 there, removed again). */
static void run_to(pid_t pid, uint64_t addr)
{
	struct user_regs_struct regs;
	uint64_t base = addr & ~7ull;
	unsigned shift = (unsigned) (addr - base) * 8;
	long word, bp;
	int status, sig = 0;

	errno = 0;
	word = ptrace(PTRACE_PEEKTEXT, pid, (void *) base, NULL);
	if (errno)
		die("cannot read the code at 0x%" PRIx64 ": %s", addr,
		    strerror(errno));
	bp = (long) (((uint64_t) word & ~(0xffull << shift)) |
		     (0xccull << shift));
	if (ptrace(PTRACE_POKETEXT, pid, (void *) base, (void *) bp) < 0)
		die("cannot write the code at 0x%" PRIx64 ": %s", addr,
		    strerror(errno));
	for (;;) {
		if (ptrace(PTRACE_CONT, pid, NULL, (void *) (long) sig) < 0)
			die("PTRACE_CONT: %s", strerror(errno));
		wait_stop(pid, &status);
		if (status >> 16 == PTRACE_EVENT_EXIT)
			die("the program exited before reaching the start "
			    "symbol");
		sig = WSTOPSIG(status) == SIGTRAP ? 0 : WSTOPSIG(status);
		if (ptrace(PTRACE_GETREGS, pid, NULL, &regs) < 0)
			die("PTRACE_GETREGS: %s", strerror(errno));
		if (!sig && regs.rip == addr + 1)
			break;
	}
	if (ptrace(PTRACE_POKETEXT, pid, (void *) base, (void *) word) < 0)
		die("cannot restore the code at 0x%" PRIx64 ": %s", addr,
		    strerror(errno));
	regs.rip = addr;
	if (ptrace(PTRACE_SETREGS, pid, NULL, &regs) < 0)
		die("PTRACE_SETREGS: %s", strerror(errno));
}

/* Single-steps @pid until it exits; returns the steps. */
static int64_t step_to_exit(pid_t pid, enum work work)
{
	struct user_regs_struct regs;
	uint8_t code[15];
	int64_t steps = 0;
	int status, sig = 0;

	for (;;) {
		if (ptrace(PTRACE_SINGLESTEP, pid, NULL,
			   (void *) (long) sig) < 0)
			die("PTRACE_SINGLESTEP: %s", strerror(errno));
		sig = 0;
		while (waitpid(pid, &status, __WALL) < 0)
			if (errno != EINTR)
				die("waitpid: %s", strerror(errno));
		steps++;
		if (!WIFSTOPPED(status) ||
		    status >> 16 == PTRACE_EVENT_EXIT)
			return steps;	/* the exit */
		if (WSTOPSIG(status) != SIGTRAP) {
			sig = WSTOPSIG(status);	/* the program's own */
			steps--;
			continue;
		}
		if (work >= WORK_REGS &&
		    ptrace(PTRACE_GETREGS, pid, NULL, &regs) < 0)
			die("PTRACE_GETREGS: %s", strerror(errno));
		if (work >= WORK_CODE) {
			struct iovec local = { code, sizeof(code) };
			struct iovec remote = {
				(void *) (uintptr_t) regs.rip, sizeof(code) };

			/* A short read at the end of a mapping is fine. */
			(void) process_vm_readv(pid, &local, 1, &remote, 1, 0);
		}
	}
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "start", required_argument, NULL, 's' },
		{ "work", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *start = "main", *wname = "none";
	enum work work = WORK_NONE;
	int64_t steps;
	double t0, secs;
	pid_t pid;
	int c;

	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (c) {
		case 's': start = optarg; break;
		case 'w':
			wname = optarg;
			if (!strcmp(optarg, "none")) work = WORK_NONE;
			else if (!strcmp(optarg, "regs")) work = WORK_REGS;
			else if (!strcmp(optarg, "code")) work = WORK_CODE;
			else {
				fputs(usage_text, stderr);
				return 1;
			}
			break;
		case 'h': fputs(usage_text, stdout); return 0;
		default: fputs(usage_text, stderr); return 1;
		}
	}
	if (optind >= argc) {
		fputs(usage_text, stderr);
		return 1;
	}
	pid = launch(argv + optind);
	run_to(pid, resolve(pid, start));
	t0 = now();
	steps = step_to_exit(pid, work);
	secs = now() - t0;
	/* Let it finish its exit. */
	while (ptrace(PTRACE_CONT, pid, NULL, NULL) == 0 &&
	       waitpid(pid, NULL, __WALL) > 0)
		;
	printf("bare-step: %" PRId64 " steps in %.3f s (%.0f steps/s), "
	       "work %s\n", steps, secs, secs > 0 ? (double) steps / secs : 0,
	       wname);
	return 0;
}
