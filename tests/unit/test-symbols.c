/* Unit tests of symbols and source lines (history/symbols.c) on the real
 * test programs, mapped at made-up load addresses.  Expected values come
 * from nm, objdump and addr2line, not from libdwfl. */
#include "history.h"
#include "test.h"

#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PIE_BASE 0x555555554000ull
#define LIB_BASE 0x7ffff7fc0000ull

static char recursion[4096], plt[4096], lib[4096];

/* Runs shell command @cmd and returns the first line of its output in
 * @buf (without the newline), or "" if it printed nothing. */
static const char *run(const char *cmd, char *buf, size_t size)
{
	FILE *f = popen(cmd, "r");

	buf[0] = '\0';
	if (f) {
		if (fgets(buf, (int) size, f))
			buf[strcspn(buf, "\n")] = '\0';
		pclose(f);
	}
	return buf;
}

/* Address of symbol @sym in ELF file @path, as nm reports it. */
static uint64_t nm_addr(const char *path, const char *sym)
{
	char cmd[8192], out[256];

	snprintf(cmd, sizeof(cmd), "nm %s | awk '$3 == \"%s\" { print $1 }'",
		 path, sym);
	return strtoull(run(cmd, out, sizeof(out)), NULL, 16);
}

/* The PT_LOAD headers of ELF file @path, into @ph (at most @max). */
static size_t loads(const char *path, GElf_Phdr *ph, size_t max)
{
	int fd = open(path, O_RDONLY);
	Elf *elf;
	size_t n = 0, k = 0;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	CHECK(elf && !elf_getphdrnum(elf, &n));
	for (size_t i = 0; i < n && k < max; i++)
		if (gelf_getphdr(elf, (int) i, &ph[k]) &&
		    ph[k].p_type == PT_LOAD)
			k++;
	elf_end(elf);
	close(fd);
	return k;
}

/* The executable PT_LOAD of @path. */
static GElf_Phdr exec_load(const char *path)
{
	GElf_Phdr ph[16];
	size_t n = loads(path, ph, 16);

	for (size_t i = 0; i < n; i++)
		if (ph[i].p_flags & PF_X)
			return ph[i];
	CHECK(!"no executable segment");
	return ph[0];
}

/* Maps every PT_LOAD of @path at load bias @base, one mapping each, as
 * the dynamic loader would, but in reverse order. */
static void map_file(struct hist_symtab *st, const char *path, uint64_t base)
{
	GElf_Phdr ph[16];
	size_t n = loads(path, ph, 16);

	CHECK(n > 0);
	while (n--) {
		uint64_t start = base + (ph[n].p_vaddr & ~0xfffull);
		uint64_t end = base + ph[n].p_vaddr + ph[n].p_memsz;

		CHECK(hist_symtab_add_mapping(st, path, start, end - start,
					      ph[n].p_offset & ~0xfffull) == 0);
	}
}

/* A symtab with tests/progs/recursion mapped at PIE_BASE. */
static struct hist_symtab *recursion_symtab(void)
{
	struct hist_symtab *st = NULL;

	CHECK(hist_symtab_new(&st) == 0);
	map_file(st, recursion, PIE_BASE);
	return st;
}

static void test_lookup_function(void)
{
	struct hist_symtab *st = recursion_symtab();
	uint64_t fact = PIE_BASE + nm_addr(recursion, "fact");
	uint64_t main_ = PIE_BASE + nm_addr(recursion, "main");
	struct hist_sym sym = { .name = "", .module = "" };

	CHECK(fact != PIE_BASE && main_ != PIE_BASE);
	CHECK(hist_sym_lookup(st, fact + 3, &sym) == 0);
	CHECK(!strcmp(sym.name, "fact"));
	CHECK_EQ_U64(sym.start, fact);
	CHECK(sym.size > 3);
	CHECK(!strcmp(sym.module, recursion));
	for (uint64_t ip = fact; ip < fact + sym.size; ip++) {
		struct hist_sym s;

		CHECK(hist_sym_lookup(st, ip, &s) == 0 && s.start == fact);
	}
	CHECK(hist_sym_lookup(st, main_, &sym) == 0);
	CHECK(!strcmp(sym.name, "main"));
	CHECK(hist_sym_lookup(st, fact + 3, &sym) == 0);
	CHECK(!strcmp(sym.name, "fact"));
	hist_symtab_free(st);
}

static void test_unknown_address(void)
{
	struct hist_symtab *st = recursion_symtab();
	struct hist_sym sym = { .name = "", .module = "" };
	struct hist_line line = { .file = "" };

	CHECK(hist_sym_lookup(st, 0x1000, &sym) == PTRR_ERR_NOTFOUND);
	CHECK(!strcmp(ptrr_errmsg(PTRR_ERR_NOTFOUND),
		      "no function symbol at 0x1000"));
	CHECK(hist_sym_lookup(st, PIE_BASE, &sym) == PTRR_ERR_NOTFOUND);
	CHECK(!strcmp(ptrr_errmsg(PTRR_ERR_NOTFOUND),
		      "no function symbol at 0x555555554000"));
	/* The message of a miss, written when asked for: every digit,
	 * and replaced by a later failure. */
	CHECK(ptrr_fail_at(PTRR_ERR_NOTFOUND, "at", 0) == PTRR_ERR_NOTFOUND);
	CHECK(!strcmp(ptrr_errmsg(0), "at 0x0"));
	ptrr_fail_at(PTRR_ERR_NOTFOUND, "at", UINT64_MAX);
	CHECK(!strcmp(ptrr_errmsg(0), "at 0xffffffffffffffff"));
	ptrr_fail_at(PTRR_ERR_NOTFOUND, "at", 1);
	ptrr_fail(PTRR_ERR_IO, "later");
	CHECK(!strcmp(ptrr_errmsg(0), "later"));
	ptrr_fail_at(PTRR_ERR_NOTFOUND, "at", 1);
	ptrr_clear_error();
	CHECK(!strcmp(ptrr_errmsg(PTRR_ERR_IO), "input/output error"));
	CHECK(hist_line_lookup(st, 0x1000, &line) == PTRR_ERR_NOTFOUND);
	hist_symtab_free(st);
}

static void test_line(void)
{
	struct hist_symtab *st = recursion_symtab();
	uint64_t fact = nm_addr(recursion, "fact");
	char cmd[8192], want[4096];
	struct hist_line line = { .file = "" };
	const char *base;

	snprintf(cmd, sizeof(cmd), "addr2line -e %s 0x%llx", recursion,
		 (unsigned long long) fact);
	run(cmd, want, sizeof(want));
	CHECK(hist_line_lookup(st, PIE_BASE + fact, &line) == 0);
	base = strrchr(line.file, '/') ? strrchr(line.file, '/') + 1 :
	       line.file;
	CHECK(!strcmp(base, "recursion.c"));
	CHECK(strrchr(want, ':') && line.line == atoi(strrchr(want, ':') + 1));
	hist_symtab_free(st);
}

static void test_find(void)
{
	struct hist_symtab *st = recursion_symtab();
	uint64_t addr = 0;

	CHECK(hist_sym_find(st, "main", &addr) == 0);
	CHECK_EQ_U64(addr, PIE_BASE + nm_addr(recursion, "main"));
	CHECK(hist_sym_find(st, "fact", &addr) == 0);
	CHECK_EQ_U64(addr, PIE_BASE + nm_addr(recursion, "fact"));
	CHECK(hist_sym_find(st, "unwound", &addr) == 0);
	CHECK_EQ_U64(addr, PIE_BASE + nm_addr(recursion, "unwound"));
	CHECK(hist_sym_find(st, "no_such_function", &addr) ==
	      PTRR_ERR_NOTFOUND);
	hist_symtab_free(st);
}

/* Files that are not ELF, or missing, are skipped; a mapping reported
 * twice is reported once. */
static void test_skipped_files(void)
{
	struct hist_symtab *st = recursion_symtab();
	char src[4096];
	struct hist_sym sym = { .name = "", .module = "" };

	snprintf(src, sizeof(src), "%s/tests/progs/recursion.c",
		 getenv("top_srcdir") ? getenv("top_srcdir") : "..");
	CHECK(hist_symtab_add_mapping(st, src, 0x10000000, 0x1000, 0) == 0);
	CHECK(hist_symtab_add_mapping(st, "/nonexistent/file", 0x20000000,
				      0x1000, 0) == 0);
	map_file(st, recursion, PIE_BASE);
	CHECK(hist_sym_lookup(st, 0x10000000, &sym) == PTRR_ERR_NOTFOUND);
	CHECK(hist_sym_lookup(st, PIE_BASE + nm_addr(recursion, "main"),
			      &sym) == 0);
	hist_symtab_free(st);
}

/* A shared library and the PLT entries that call into it. */
static void test_plt(void)
{
	struct hist_symtab *st = NULL;
	uint64_t sum = LIB_BASE + nm_addr(lib, "ptrr_lib_sum");
	uint64_t stub = 0, addr = 0;
	char cmd[8192], out[256];
	struct hist_sym sym = { .name = "", .module = "" };

	snprintf(cmd, sizeof(cmd), "objdump -d %s | "
		 "awk '/<ptrr_lib_twice@plt>:/ { print $1 }'", plt);
	stub = PIE_BASE + strtoull(run(cmd, out, sizeof(out)), NULL, 16);
	CHECK(hist_symtab_new(&st) == 0);
	map_file(st, plt, PIE_BASE);
	map_file(st, lib, LIB_BASE);
	CHECK(hist_sym_lookup(st, sum + 1, &sym) == 0);
	CHECK(!strcmp(sym.name, "ptrr_lib_sum"));
	CHECK(!strcmp(sym.module, lib));
	CHECK_EQ_U64(sym.start, sum);
	CHECK(stub != PIE_BASE);
	CHECK(hist_sym_lookup(st, stub + 4, &sym) == 0);
	CHECK(!strcmp(sym.name, "ptrr_lib_twice@plt"));
	CHECK_EQ_U64(sym.start, stub);
	CHECK(hist_sym_find(st, "ptrr_lib_twice@plt", &addr) == 0);
	CHECK_EQ_U64(addr, stub);
	CHECK(hist_sym_find(st, "ptrr_lib_twice", &addr) == 0);
	CHECK_EQ_U64(addr, LIB_BASE + nm_addr(lib, "ptrr_lib_twice"));
	hist_symtab_free(st);
}

/* The symbols of a bundle's usable modules, under their recorded paths. */
static void test_from_bundle(void)
{
	struct hist_bundle *b = NULL;
	struct hist_symtab *st = NULL;
	GElf_Phdr x = exec_load(recursion), y = exec_load(lib);
	uint64_t fact = PIE_BASE + nm_addr(recursion, "fact");
	uint64_t sum = LIB_BASE + nm_addr(lib, "ptrr_lib_sum");
	struct hist_sym sym = { .name = "", .module = "" };

	CHECK(hist_bundle_new(&b) == 0);
	CHECK(hist_bundle_add_module(b, recursion, PIE_BASE + x.p_vaddr,
				     x.p_memsz, x.p_offset) == 0);
	CHECK(hist_bundle_add_module(b, lib, LIB_BASE + y.p_vaddr, y.p_memsz,
				     y.p_offset) == 0);
	b->modules[1].usable = false;
	CHECK(hist_symtab_from_bundle(b, &st) == 0);
	CHECK(hist_sym_lookup(st, fact, &sym) == 0);
	CHECK(!strcmp(sym.name, "fact") && !strcmp(sym.module, recursion));
	CHECK(hist_sym_lookup(st, sum, &sym) == PTRR_ERR_NOTFOUND);
	hist_symtab_free(st);
	hist_bundle_free(b);
}

int main(void)
{
	const char *top = getenv("top_builddir") ? getenv("top_builddir") :
			  ".";

	snprintf(recursion, sizeof(recursion), "%s/tests/progs/recursion",
		 top);
	snprintf(plt, sizeof(plt), "%s/tests/progs/plt", top);
	snprintf(lib, sizeof(lib), "%s/tests/progs/libptrrplt.so", top);
	RUN(test_lookup_function);
	RUN(test_unknown_address);
	RUN(test_line);
	RUN(test_find);
	RUN(test_skipped_files);
	RUN(test_plt);
	RUN(test_from_bundle);
	return test_summary();
}
