/* Jumps inside recursions, as optimised code makes them (issue 17: the
 * call depth drifted in CPython and in glibc's qsort):
 *  - tail(): every activation ends with a tail call, a jump to leaf();
 *    leaf() returns to the caller of the activation that jumped, which
 *    is tail() again, one level out (glibc's msort_with_tmp tail-calls
 *    memcpy);
 *  - walk(): split into a hot part and a cold part (walk.cold, as gcc
 *    splits functions), entered by a direct jump into its middle; the
 *    cold part makes the recursive call, so an inner activation jumps
 *    into walk.cold while outer ones are in it, waiting for their call
 *    to return (CPython's PyImport_ImportModuleLevelObject.cold).
 * walk() is written in assembly (with CFI, so that gdb unwinds it) to
 * keep that shape whatever the compiler does. */
volatile int sink;

int walk(int n);

__asm__(
	"	.text\n"
	"	.globl walk\n"
	"	.type walk, @function\n"
	"walk:\n"
	"	.cfi_startproc\n"
	"	test %edi, %edi\n"
	"	jg .Lwalk_deeper\n"		/* into walk.cold's middle */
	"	xor %eax, %eax\n"
	"	ret\n"
	".Lwalk_back:\n"
	"	add $1, %eax\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"	.size walk, . - walk\n"
	"	.type walk.cold, @function\n"
	"walk.cold:\n"
	"	.cfi_startproc\n"
	"	ud2\n"				/* never run */
	".Lwalk_deeper:\n"
	"	push %rbx\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset %rbx, -16\n"
	"	mov %edi, %ebx\n"
	"	lea -1(%rdi), %edi\n"
	"	call walk\n"
	"	add %ebx, %eax\n"
	"	pop %rbx\n"
	"	.cfi_def_cfa_offset 8\n"
	"	jmp .Lwalk_back\n"		/* back into walk's middle */
	"	.cfi_endproc\n"
	"	.size walk.cold, . - walk.cold\n");

int __attribute__((noinline)) leaf(int x)
{
	sink = x;
	return x * 3;
}

int __attribute__((noinline)) tail(int n)
{
	if (n > 0)
		sink += tail(n - 1);
	return leaf(n);		/* compiled as jmp leaf at -O2 */
}

int main(void)
{
	int r = walk(5);

	r += tail(4);
	return r == 0;
}
