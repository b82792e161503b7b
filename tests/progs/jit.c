/* Code generated at run time, as a JIT makes it: two functions written
 * into anonymous memory, made executable, and called — one with a loop
 * and a conditional branch, one calling back into the program through a
 * pointer — and no file that holds their bytes. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

/* int sum(int n): 1 + 2 + ... + n. */
static const uint8_t sum_code[] = {
	0x31, 0xc0,		/* xor %eax,%eax */
	0x85, 0xff,		/* test %edi,%edi */
	0x7e, 0x06,		/* jle done */
	0x01, 0xf8,		/* loop: add %edi,%eax */
	0xff, 0xcf,		/* dec %edi */
	0x75, 0xfa,		/* jne loop */
	0xc3,			/* done: ret */
};

/* int call(int v, int (*f)(int)): f(v). */
static const uint8_t call_code[] = {
	0x48, 0x83, 0xec, 0x08,	/* sub $8,%rsp */
	0xff, 0xd6,		/* call *%rsi */
	0x48, 0x83, 0xc4, 0x08,	/* add $8,%rsp */
	0xc3,			/* ret */
};

static int __attribute__((noinline)) twice(int v)
{
	return 2 * v;
}

int main(void)
{
	uint8_t *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int (*sum)(int), (*call)(int, int (*)(int));
	int r = 0;

	if (code == MAP_FAILED)
		return 2;
	memcpy(code, sum_code, sizeof(sum_code));
	memcpy(code + 64, call_code, sizeof(call_code));
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC))
		return 2;
	sum = (int (*)(int)) (uintptr_t) code;
	call = (int (*)(int, int (*)(int))) (uintptr_t) (code + 64);
	for (int i = 0; i < 20; i++)
		r += sum(i) + call(i, twice);
	printf("%d\n", r);
	return r != 1330 + 380;
}
