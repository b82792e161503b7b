/* Unit tests of instruction lengths and GDB-style disassembly
 * (history/disasm.c) on hand-written byte sequences. */
#include "history.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

#define PIE_BASE 0x555555554000ull

struct sample {
	uint8_t bytes[15];
	uint8_t len;
	uint64_t ip;
	const char *text;
};

static const struct sample samples[] = {
	{ { 0x55 }, 1, 0x401000, "push   %rbp" },
	{ { 0x48, 0x89, 0xe5 }, 3, 0x401001, "mov    %rsp,%rbp" },
	{ { 0xff, 0xe0 }, 2, 0x401000, "jmp    *%rax" },
	{ { 0xc3 }, 1, 0x401000, "ret" },
	{ { 0x90 }, 1, 0x401000, "nop" },
	{ { 0xe8, 0x10, 0x00, 0x00, 0x00 }, 5, 0x401000, "call   0x401015" },
	{ { 0x74, 0x05 }, 2, 0x401000, "je     0x401007" },
	{ { 0xc7, 0x45, 0xfc, 0, 0, 0, 0 }, 7, 0x401000,
	  "movl   $0x0,-0x4(%rbp)" },
	{ { 0x48, 0x83, 0xe4, 0xf0 }, 4, 0x401000,
	  "and    $0xfffffffffffffff0,%rsp" },
	{ { 0x0f, 0x1f, 0x44, 0x00, 0x00 }, 5, 0x401000,
	  "nopl   0x0(%rax,%rax,1)" },
	{ { 0x8b, 0x05, 0x10, 0x20, 0x00, 0x00 }, 6, 0x401000,
	  "mov    0x2010(%rip),%eax        # 0x403016" },
	{ { 0xf3, 0x48, 0xab }, 3, 0x401000, "rep stos %rax,%es:(%rdi)" },
	{ { 0x0f, 0xb6, 0xc0 }, 3, 0x401000, "movzbl %al,%eax" },
	{ { 0x48, 0x63, 0xd2 }, 3, 0x401000, "movslq %edx,%rdx" },
	{ { 0xff, 0x14, 0xc5, 0x10, 0, 0, 0 }, 7, 0x401000,
	  "call   *0x10(,%rax,8)" },
	{ { 0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0 }, 9, 0x401000,
	  "mov    %fs:0x28,%rax" },
	{ { 0xf3, 0x0f, 0x1e, 0xfa }, 4, 0x401000, "endbr64" },
	{ { 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0 }, 10, 0x401000,
	  "cs nopw 0x0(%rax,%rax,1)" },
};

/* Every sample disassembles to its text and length, with and without
 * room to spare. */
static void test_samples(void)
{
	for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
		const struct sample *s = &samples[i];
		char buf[128];
		int n = hist_disasm(s->bytes, sizeof(s->bytes), s->ip, NULL,
				    buf, sizeof(buf));

		CHECK_EQ_U64(n, s->len);
		if (strcmp(buf, s->text))
			fprintf(stderr, "got \"%s\", expected \"%s\"\n", buf,
				s->text);
		CHECK(!strcmp(buf, s->text));
		CHECK_EQ_U64(hist_insn_length(s->bytes, sizeof(s->bytes)),
			     s->len);
		CHECK_EQ_U64(hist_insn_length(s->bytes, s->len), s->len);
		CHECK_EQ_U64(hist_disasm(s->bytes, s->len, s->ip, NULL, buf,
					 sizeof(buf)), s->len);
	}
}

/* Cut-off and invalid instructions are errors, not crashes. */
static void test_errors(void)
{
	static const uint8_t call[] = { 0xe8, 0x10, 0x00, 0x00, 0x00 };
	static const uint8_t invalid[] = { 0x06, 0x90 };
	char buf[64];

	CHECK(hist_insn_length(call, 3) == PTRR_ERR_DECODE);
	CHECK(hist_insn_length(call, 0) == PTRR_ERR_DECODE);
	CHECK(hist_disasm(call, 4, 0x401000, NULL, buf, sizeof(buf)) ==
	      PTRR_ERR_DECODE);
	CHECK(hist_insn_length(invalid, sizeof(invalid)) == PTRR_ERR_DECODE);
	CHECK(hist_disasm(invalid, sizeof(invalid), 0x401000, NULL, buf,
			  sizeof(buf)) == PTRR_ERR_DECODE);
}

/* A small buffer gets a truncated, terminated text. */
static void test_small_buffer(void)
{
	char buf[5] = "xxxx";

	CHECK(hist_disasm(samples[1].bytes, 3, 0x401000, NULL, buf,
			  sizeof(buf)) == 3);
	CHECK(!strcmp(buf, "mov "));
}

/* Runs @cmd and returns its first line of output in @buf. */
static const char *run(const char *cmd, char *buf, size_t size)
{
	FILE *f = popen(cmd, "r");

	buf[0] = '\0';
	if (f) {
		if (!fgets(buf, (int) size, f))
			buf[0] = '\0';
		pclose(f);
	}
	return buf;
}

/* A symtab with tests/progs/recursion's code segment at PIE_BASE, and
 * the address of its fact in @fact. */
static struct hist_symtab *recursion_symtab(uint64_t *fact)
{
	const char *top = getenv("top_builddir") ? getenv("top_builddir") :
			  ".";
	char path[4096], cmd[8192], out[256];
	unsigned long long off = 0, vaddr = 0;
	struct hist_symtab *st = NULL;

	snprintf(path, sizeof(path), "%s/tests/progs/recursion", top);
	snprintf(cmd, sizeof(cmd), "readelf -lW %s | "
		 "awk '$1 == \"LOAD\" && / E / { print $2, $3 }'", path);
	CHECK(sscanf(run(cmd, out, sizeof(out)), "%llx %llx", &off,
		     &vaddr) == 2);
	snprintf(cmd, sizeof(cmd), "nm %s | awk '$3 == \"fact\" "
		 "{ print $1 }'", path);
	*fact = PIE_BASE + strtoull(run(cmd, out, sizeof(out)), NULL, 16);
	CHECK(hist_symtab_new(&st) == 0);
	CHECK(hist_symtab_add_mapping(st, path, PIE_BASE + vaddr, 0x1000,
				      off) == 0);
	return st;
}

/* Direct calls and jumps name their target "<sym>" or "<sym+off>". */
static void test_symbolic_targets(void)
{
	uint64_t fact = 0;
	struct hist_symtab *st = recursion_symtab(&fact);
	uint64_t ip = fact - 0x100;
	int32_t rel = (int32_t) (fact - (ip + 5));
	uint8_t call[5] = { 0xe8 };
	uint8_t jmp[2] = { 0xeb, 0x03 };
	char buf[128] = "", want[128];

	memcpy(call + 1, &rel, 4);
	CHECK(hist_disasm(call, sizeof(call), ip, st, buf, sizeof(buf)) == 5);
	snprintf(want, sizeof(want), "call   0x%llx <fact>",
		 (unsigned long long) fact);
	CHECK(!strcmp(buf, want));
	CHECK(hist_disasm(jmp, sizeof(jmp), fact, st, buf, sizeof(buf)) == 2);
	snprintf(want, sizeof(want), "jmp    0x%llx <fact+5>",
		 (unsigned long long) fact + 5);
	CHECK(!strcmp(buf, want));
	hist_symtab_free(st);
}

int main(void)
{
	RUN(test_samples);
	RUN(test_errors);
	RUN(test_small_buffer);
	RUN(test_symbolic_targets);
	return test_summary();
}
