/* What `ptrr record --backend=qemu` and the live QEMU session share
 * (qemu_host.h): finding QEMU and checking the program, the shared
 * directory the plugin writes into, and ending a thread's trace where
 * the plugin could not. */
#include <config.h>

#include "qemu/qemu_host.h"
#include "error.h"
#include "launch.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <unistd.h>

bool qhost_find_in_path(const char *name, char *out, size_t n)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (strchr(name, '/')) {
		snprintf(out, n, "%s", name);
		return access(out, F_OK) == 0;
	}
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		const char *colon = strchr(p, ':');
		size_t len = colon ? (size_t) (colon - p) : strlen(p);

		snprintf(buf, sizeof(buf), "%.*s/%s", (int) len, len ? p : ".",
			 name);
		if (access(buf, X_OK) == 0) {
			snprintf(out, n, "%s", buf);
			return true;
		}
		p += len + (colon ? 1 : 0);
	}
	return false;
}

bool qhost_find_qemu(char *out, size_t n)
{
	const char *env = getenv("PTRR_QEMU");

	return qhost_find_in_path(env && *env ? env : "qemu-x86_64", out, n);
}

int qhost_check_elf(const char *path)
{
	unsigned char e[20];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t got = fd >= 0 ? read(fd, e, sizeof(e)) : -1;
	unsigned machine;

	if (fd >= 0)
		close(fd);
	if (got < 0)
		return ptrr_fail(PTRR_ERR_IO, "%s: %s", path, strerror(errno));
	if (got < (ssize_t) sizeof(e) || memcmp(e, ELFMAG, SELFMAG))
		return ptrr_fail(PTRR_ERR_USAGE, "%s is not an x86-64 Linux ELF "
				 "program, which is all qemu-x86_64 runs: use "
				 "--backend=soft", path);
	machine = e[EI_DATA] == ELFDATA2MSB ? (unsigned) e[18] << 8 | e[19] :
					       e[18] | (unsigned) e[19] << 8;
	if (e[EI_CLASS] != ELFCLASS64 || machine != EM_X86_64)
		return ptrr_fail(PTRR_ERR_USAGE, "%s is a %d-bit ELF program "
				 "for %s, not x86-64: ptrr records x86-64 "
				 "Linux programs only", path,
				 e[EI_CLASS] == ELFCLASS32 ? 32 : 64,
				 machine == EM_386 ? "i386" :
				 machine == EM_AARCH64 ? "AArch64" :
				 machine == EM_ARM ? "ARM" :
				 machine == EM_X86_64 ? "x86-64 (x32)" :
				 "another machine");
	return 0;
}

int qhost_check(const char *arg, char *qemu, char *prog, char **plugin)
{
	char found[PATH_MAX];
	int err;

	*plugin = NULL;
	if (!qhost_find_qemu(qemu, PATH_MAX))
		return ptrr_fail(PTRR_ERR_USAGE, "qemu-x86_64 not found "
				 "(install it: apt-get install qemu-user; or "
				 "use --backend=soft)");
	if (!qhost_find_in_path(arg, found, sizeof(found)) ||
	    !realpath(found, prog))
		return ptrr_fail(PTRR_ERR_USAGE, "%s: no such program", arg);
	if (access(prog, X_OK))
		return ptrr_fail(PTRR_ERR_USAGE, "%s: not executable", arg);
	err = qhost_check_elf(prog);
	if (err)
		return err;
	*plugin = launch_qemu_plugin();
	if (!*plugin)
		return ptrr_fail(PTRR_ERR_USAGE, "ptrr's QEMU plugin "
				 "(ptrr-qemu.so) is missing: build or install "
				 "ptrr again, or use --backend=soft");
	return 0;
}

int qhost_spawn(char *const argv[], bool aslr, bool core, const char *who,
		pid_t *pid)
{
	*pid = fork();
	if (*pid < 0)
		return ptrr_fail(PTRR_ERR_IO, "fork: %s", strerror(errno));
	if (*pid == 0) {
		struct rlimit rl = { 0, 0 };

		if (!aslr)
			personality(ADDR_NO_RANDOMIZE);
		if (core && getrlimit(RLIMIT_CORE, &rl) == 0)
			rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_CORE, &rl);
		execv(argv[0], argv);
		fprintf(stderr, "%s: cannot run %s: %s\n", who, argv[0],
			strerror(errno));
		_exit(127);
	}
	return 0;
}

size_t qhost_code_segments(const char *path, uint64_t off, uint64_t size,
			   uint64_t v[QHOST_MAX_CODE][2])
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf = NULL;
	size_t nph = 0, n = 0;

	if (fd >= 0 && elf_version(EV_CURRENT) != EV_NONE)
		elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && elf_getphdrnum(elf, &nph))
		nph = 0;
	for (size_t i = 0; i < nph && n < QHOST_MAX_CODE; i++) {
		GElf_Phdr ph;
		uint64_t lo, hi;

		if (!gelf_getphdr(elf, (int) i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X) || !ph.p_filesz)
			continue;
		lo = ph.p_offset & ~0xfffull;
		hi = (ph.p_offset + ph.p_filesz + 0xfff) & ~0xfffull;
		if (lo < off)
			lo = off;
		if (hi > off + size)
			hi = off + size;
		if (lo < hi) {
			v[n][0] = lo;
			v[n][1] = hi;
			n++;
		}
	}
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return n;
}

int qhost_make_shared(const char *parent, const char *prog, char *dir,
		      size_t n, struct qshm_header **hdr)
{
	char path[PATH_MAX + 16];
	int fd, err = 0;
	FILE *f;
	void *p;

	*hdr = NULL;
	snprintf(dir, n, "%s/.ptrr-qemu-XXXXXX", parent);
	if (!mkdtemp(dir)) {
		err = ptrr_fail(PTRR_ERR_IO, "cannot create a directory in "
				"%s: %s", parent, strerror(errno));
		dir[0] = 0;
		return err;
	}
	snprintf(path, sizeof(path), "%s/header", dir);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, sizeof(struct qshm_header)) < 0)
		err = ptrr_fail(PTRR_ERR_IO, "%s: %s", path, strerror(errno));
	p = err ? MAP_FAILED : mmap(NULL, sizeof(struct qshm_header),
				    PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (fd >= 0)
		close(fd);
	if (!err && p == MAP_FAILED)
		err = ptrr_fail(PTRR_ERR_IO, "cannot map %s: %s", path,
				strerror(errno));
	if (!err)
		*hdr = p;
	snprintf(path, sizeof(path), "%s/exe", dir);
	f = err ? NULL : fopen(path, "w");
	if (!err && (!f || fputs(prog, f) < 0))
		err = ptrr_fail(PTRR_ERR_IO, "%s: %s", path, strerror(errno));
	if (f && fclose(f) && !err)
		err = ptrr_fail(PTRR_ERR_IO, "%s: %s", path, strerror(errno));
	return err;
}

void qhost_remove_shared(char *dir, struct qshm_header **hdr)
{
	static const char *const files[] = { "header", "exe", "code",
					     "filters", "gdb.sock" };
	char path[PATH_MAX + 16];

	if (*hdr) {
		for (uint32_t i = 0; i < (*hdr)->nthreads &&
				     i < QSHM_MAX_THREADS; i++) {
			snprintf(path, sizeof(path), "%s/t%u", dir, i);
			unlink(path);
			snprintf(path, sizeof(path), "%s/p%u", dir, i);
			unlink(path);
		}
		munmap(*hdr, sizeof(**hdr));
		*hdr = NULL;
	}
	if (!dir[0])
		return;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		unlink(path);
	}
	rmdir(dir);
	dir[0] = 0;
}

int qhost_end_trace(struct qshm_thread *t, struct cap_ring *ring,
		    bool have_rip, uint64_t rip, bool live)
{
	int err;

	if (t->state != QSHM_RUNNING)
		return 0;
	err = cap_emit_rebind(&t->em, ring);
	if (err)
		return err;
	if (!t->pending) {	/* in the kernel, or not started */
		if (t->em.state == CAP_EMIT_OFF)
			err = 0;
		else if (live && have_rip)
			err = cap_emit_stop(&t->em, rip);
		else
			err = cap_emit_disable(&t->em, rip);
	} else if (have_rip && rip >= t->cur.start && rip <= t->cur.last) {
		err = cap_emit_stop(&t->em, rip);	/* a fault in it */
	} else if (have_rip && qshm_successor_ok(&t->cur, rip)) {
		/* It ran the block and stopped before the next one (QEMU
		 * stops the other threads between blocks to dump core; a
		 * live session's stops are between blocks). */
		err = cap_emit_block_end(&t->em, t->cur.last, &t->cur.insn,
					 rip, t->cur.ninsns);
		if (!err)
			err = cap_emit_stop(&t->em, rip);
	} else {
		err = cap_emit_stop(&t->em, t->cur.start);
	}
	t->pending = 0;
	cap_emit_fini(&t->em);
	return err;
}
