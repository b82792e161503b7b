/* Branch emulation (plugin/capture/branch.c) against the processor: every
 * conditional branch (jcc in both encodings, loop, loope, loopne, jrcxz,
 * jecxz) is run for real on every combination of the flags it reads and
 * several counts, and emulated on the same registers; the two must agree
 * on whether it is taken, and on rcx.  Then jumps, calls and returns with
 * every kind of operand, against the addresses the SDM defines. */
#include <config.h>

#include "capture/branch.h"
#include "error.h"
#include "test.h"

#include <string.h>
#include <sys/mman.h>

#define FLAG_CF 0x1
#define FLAG_PF 0x4
#define FLAG_ZF 0x40
#define FLAG_SF 0x80
#define FLAG_OF 0x800

/* Executable scratch code. */
static uint8_t *page;

/* Code testing branch @br (@n bytes, its displacement last, 8 or 32
 * bits): called with rdi = flags and rsi = rcx, it loads both, runs the
 * branch and returns 1 if it was taken (0 otherwise) with rcx in *rdx.
 * Returns the branch's offset in the page. */
static size_t build(const uint8_t *br, size_t n, bool rel32)
{
	static const uint8_t pre[] = {
		0x57,			/* push %rdi */
		0x9d,			/* popfq */
		0x48, 0x89, 0xf1,	/* mov %rsi,%rcx */
	};
	static const uint8_t post[] = {
		0x48, 0x89, 0x0a,	/* mov %rcx,(%rdx) */
		0xb8, 0, 0, 0, 0,	/* mov $0,%eax */
		0xc3,			/* ret */
		0x48, 0x89, 0x0a,	/* taken: mov %rcx,(%rdx) */
		0xb8, 1, 0, 0, 0,	/* mov $1,%eax */
		0xc3,
	};
	size_t at = sizeof(pre);

	memcpy(page, pre, sizeof(pre));
	memcpy(page + at, br, n);
	if (rel32)
		memcpy(page + at + n - 4, &(int32_t){ 9 }, 4);
	else
		page[at + n - 1] = 9;
	memcpy(page + at + n, post, sizeof(post));
	__builtin___clear_cache((char *) page, (char *) page + 64);
	return at;
}

static ssize_t no_mem(void *arg, uint64_t addr, void *buf, size_t n)
{
	(void) arg; (void) addr; (void) buf; (void) n;
	return -1;
}

static ssize_t no_write(void *arg, uint64_t addr, const void *buf, size_t n)
{
	(void) arg; (void) addr; (void) buf; (void) n;
	return -1;
}

/* Runs and emulates branch @br on @flags and @rcx; both must agree. */
static void agree(const uint8_t *br, size_t n, bool rel32, uint64_t flags,
		  uint64_t rcx)
{
	long (*fn)(uint64_t, uint64_t, uint64_t *);
	struct cap_mem mem = { NULL, no_mem, no_write };
	struct user_regs_struct regs;
	size_t at = build(br, n, rel32);
	uint64_t real_rcx = 0, next = 0;
	long real;

	fn = (long (*)(uint64_t, uint64_t, uint64_t *)) (uintptr_t) page;
	real = fn(flags, rcx, &real_rcx);
	memset(&regs, 0, sizeof(regs));
	regs.eflags = flags;
	regs.rcx = rcx;
	CHECK(cap_branch_emulable(page + at, n));
	CHECK(cap_branch_emulate(page + at, n, (uintptr_t) page + at, &regs,
				 &mem, &next) == 0);
	if ((next == (uintptr_t) page + at + n + 9) != real ||
	    regs.rcx != real_rcx) {
		fprintf(stderr, "branch %02x %02x, flags 0x%" PRIx64 ", rcx 0x%"
			PRIx64 ": the processor %s (rcx 0x%" PRIx64 "), the "
			"emulation went to +%" PRId64 " (rcx 0x%" PRIx64 ")\n",
			br[0], br[1], flags, rcx, real ? "jumped" : "fell "
			"through", real_rcx, (int64_t) (next - (uintptr_t) page
							 - at), (uint64_t) regs.rcx);
		test_failures++;
	}
	CHECK_EQ_U64(regs.rip, next);
}

/* The flags combinations: all 32 of CF, PF, ZF, SF, OF. */
static uint64_t flags_of(unsigned combo)
{
	static const uint64_t bit[5] = { FLAG_CF, FLAG_PF, FLAG_ZF, FLAG_SF,
					 FLAG_OF };
	uint64_t fl = 0x202;	/* reserved bit 1, IF */

	for (int i = 0; i < 5; i++)
		if (combo >> i & 1)
			fl |= bit[i];
	return fl;
}

static void test_jcc(void)
{
	for (unsigned cc = 0; cc < 16; cc++)
		for (unsigned combo = 0; combo < 32; combo++) {
			uint8_t short_form[2] = { (uint8_t) (0x70 + cc), 0 };
			uint8_t near_form[6] = { 0x0f, (uint8_t) (0x80 + cc) };

			agree(short_form, 2, false, flags_of(combo), 5);
			agree(near_form, 6, true, flags_of(combo), 5);
		}
}

static void test_loops(void)
{
	static const uint8_t forms[][3] = {
		{ 0xe2, 0 },		/* loop */
		{ 0xe1, 0 },		/* loope */
		{ 0xe0, 0 },		/* loopne */
		{ 0xe3, 0 },		/* jrcxz */
		{ 0x67, 0xe3, 0 },	/* jecxz */
	};
	static const uint64_t counts[] = {
		0, 1, 2, 0x100000000ull, 0x100000001ull, ~0ull,
	};

	for (size_t f = 0; f < 5; f++)
		for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++)
			for (unsigned combo = 0; combo < 32; combo += 4) {
				agree(forms[f], f == 4 ? 3 : 2, false,
				      flags_of(combo), counts[c]);
			}
}

/* Fake memory for the other branches: 8-byte words at known places. */
static uint64_t mem_addr[4], mem_val[4], wrote_at, wrote_val;

static ssize_t fake_read(void *arg, uint64_t addr, void *buf, size_t n)
{
	(void) arg;
	for (int i = 0; i < 4; i++)
		if (mem_addr[i] == addr && n == 8) {
			memcpy(buf, &mem_val[i], 8);
			return 8;
		}
	return -1;
}

static ssize_t fake_write(void *arg, uint64_t addr, const void *buf,
			  size_t n)
{
	(void) arg;
	if (n != 8 || addr == 0xdead0000)
		return -1;
	wrote_at = addr;
	memcpy(&wrote_val, buf, 8);
	return 8;
}

/* Emulates @code (@n bytes) at @ip on @regs; returns the next ip, or 0
 * with @err set to the emulation's result. */
static uint64_t emul(const uint8_t *code, size_t n, uint64_t ip,
		     struct user_regs_struct *regs, int *err)
{
	struct cap_mem mem = { NULL, fake_read, fake_write };
	uint64_t next = 0;

	*err = cap_branch_emulate(code, n, ip, regs, &mem, &next);
	return *err ? 0 : next;
}

static void test_jumps_calls_returns(void)
{
	struct user_regs_struct r;
	const uint64_t ip = 0x401000;
	int err;

	memset(&r, 0, sizeof(r));
	r.rax = 0x10000;
	r.rbx = 3;
	r.rdx = 0x777000;
	r.rsp = 0x7ff000;
	r.fs_base = 0x50000;
	mem_addr[0] = 0x10000 + 3 * 4 + 0x10;	/* base, index, scale, disp */
	mem_val[0] = 0x1234;
	mem_addr[1] = ip + 6 + 0x100;		/* rip-relative */
	mem_val[1] = 0x5678;
	mem_addr[2] = 0x50000 + 0x28;		/* fs-relative */
	mem_val[2] = 0x9abc;
	mem_addr[3] = 0x7ff000;			/* the stack top */
	mem_val[3] = 0x402000;

	/* jmp *0x10(%rax,%rbx,4) */
	CHECK_EQ_U64(emul((const uint8_t[]){ 0xff, 0x64, 0x98, 0x10 }, 4, ip,
			  &r, &err), 0x1234);
	/* jmp *0x100(%rip) */
	CHECK_EQ_U64(emul((const uint8_t[]){ 0xff, 0x25, 0, 1, 0, 0 }, 6, ip,
			  &r, &err), 0x5678);
	/* jmp *%fs:0x28 */
	CHECK_EQ_U64(emul((const uint8_t[]){ 0x64, 0xff, 0x24, 0x25, 0x28,
					     0, 0, 0 }, 8, ip, &r, &err),
		     0x9abc);
	/* jmp *%rdx */
	CHECK_EQ_U64(emul((const uint8_t[]){ 0xff, 0xe2 }, 2, ip, &r, &err),
		     0x777000);
	/* jmp rel32 backwards */
	CHECK_EQ_U64(emul((const uint8_t[]){ 0xe9, 0xfb, 0xff, 0xff, 0xff },
			  5, ip, &r, &err), ip);
	CHECK_EQ_U64(r.rsp, 0x7ff000);

	/* call *%rdx: pushes the return address */
	CHECK_EQ_U64(emul((const uint8_t[]){ 0xff, 0xd2 }, 2, ip, &r, &err),
		     0x777000);
	CHECK_EQ_U64(r.rsp, 0x7feff8);
	CHECK_EQ_U64(wrote_at, 0x7feff8);
	CHECK_EQ_U64(wrote_val, ip + 2);
	/* call rel32 */
	CHECK_EQ_U64(emul((const uint8_t[]){ 0xe8, 0x10, 0, 0, 0 }, 5, ip,
			  &r, &err), ip + 5 + 0x10);
	CHECK_EQ_U64(wrote_val, ip + 5);
	CHECK_EQ_U64(r.rsp, 0x7feff0);
	/* call *(%rsp) reads its target before the push */
	r.rsp = 0x7ff000;
	CHECK_EQ_U64(emul((const uint8_t[]){ 0xff, 0x14, 0x24 }, 3, ip, &r,
			  &err), 0x402000);
	CHECK_EQ_U64(r.rsp, 0x7feff8);

	/* ret, ret $0x10 */
	r.rsp = 0x7ff000;
	CHECK_EQ_U64(emul((const uint8_t[]){ 0xc3 }, 1, ip, &r, &err),
		     0x402000);
	CHECK_EQ_U64(r.rsp, 0x7ff008);
	r.rsp = 0x7ff000;
	CHECK_EQ_U64(emul((const uint8_t[]){ 0xc2, 0x10, 0 }, 3, ip, &r,
			  &err), 0x402000);
	CHECK_EQ_U64(r.rsp, 0x7ff018);

	/* A memory access that faults changes nothing. */
	r.rsp = 0xdead0008;
	CHECK_EQ_U64(emul((const uint8_t[]){ 0xe8, 0, 0, 0, 0 }, 5, ip, &r,
			  &err), 0);
	CHECK(err == PTRR_ERR_IO);
	CHECK_EQ_U64(r.rsp, 0xdead0008);
	CHECK_EQ_U64(emul((const uint8_t[]){ 0xc3 }, 1, ip, &r, &err), 0);
	CHECK(err == PTRR_ERR_IO);

	/* Not emulated: 16-bit operands, far transfers, system calls. */
	CHECK(!cap_branch_emulable((const uint8_t[]){ 0x66, 0xc3 }, 2));
	CHECK(!cap_branch_emulable((const uint8_t[]){ 0xcb }, 1));
	CHECK(!cap_branch_emulable((const uint8_t[]){ 0x0f, 0x05 }, 2));
	CHECK(!cap_branch_emulable((const uint8_t[]){ 0x67, 0xe2, 0 }, 3));
}

int main(void)
{
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED) {
		perror("mmap");
		return 99;
	}
	RUN(test_jcc);
	RUN(test_loops);
	RUN(test_jumps_calls_returns);
	return test_summary();
}
