/* A crash inside the C library: main writes a line with puts(), then
 * hands fflush() a pointer that is no FILE, which fflush dereferences.
 * LLDB and gdb must name the libc functions: the program's own symbols
 * stop at main. */
#include <stdio.h>

static FILE *__attribute__((noinline)) log_file(void)
{
	return (FILE *) 0x10;	/* the bad pointer is produced here */
}

int main(void)
{
	int err;

	puts("flushing the log");
	err = fflush(log_file());	/* SIGSEGV inside libc's fflush */
	return err ? 1 : 0;
}
