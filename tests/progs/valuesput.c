/* A pointer argument kept in a callee-saved register from a function's
 * entry to a store through it at its tail, across a write(2), with its
 * caller's copy in the register the function's prologue saves (as
 * bzip2's BZ2_bzWrite keeps its bzFile in rbx, and compressStream its
 * copy in r14): tests/gdb-values-put.sh stops between the write(2) and
 * the store.  Ends in a crash. */
#include <stdlib.h>
#include <unistd.h>

struct file {
	int handle;
	int used;
	long total;
	unsigned char buf[64];
	int last;
};

/* Set once, by main. */
struct file *open_file;

#include "valueshelp.h"

/* The file, read before about 200 instructions in registers only. */
__attribute__((noipa)) struct file *pick(void)
{
	struct file *f = open_file;

	spin(3);
	return f;
}

/* Saves and restores the callee-saved registers around a write(2). */
__attribute__((noipa)) long emit(long x)
{
	__asm__ volatile("" : : : "rbx", "r12", "r13", "r14", "r15");
	return write(-1, &x, 1) + x;
}

/* Where tests/gdb-values-put.sh stops in put(), after emit(). */
__attribute__((noipa)) void mark_put(void)
{
	__asm__ volatile("");
}

/* @f (the second argument, as BZ2_bzWrite's) in a callee-saved register
 * from the entry to the store at the tail. */
__attribute__((noipa)) void put(int *err, struct file *f, long n)
{
	*err = 0;
	emit(n);
	mark_put();
	f->last = 40;
	*err = 1;
}

/* Stored once, by keep() after put() returns. */
struct file *kept;

/* pick()'s file in a callee-saved register across sink() and put()
 * (moved to put()'s argument from there), stored to kept after. */
__attribute__((noipa)) void keep(void)
{
	struct file *f = pick();
	int err;

	sink(0);
	put(&err, f, 1);
	kept = f;
	sink(err);
}

int main(void)
{
	open_file = calloc(1, sizeof(*open_file));
	if (!open_file)
		return 1;
	open_file->used = 3;
	open_file->total = 1234;
	open_file->buf[3] = 'a';
	keep();
	*(volatile int *) (long) sink(0) = 1;
	return 0;
}
