/* Writes whose address the value recovery cannot compute exactly,
 * between the end of history (a crash) and the position
 * tests/gdb-values-far.sh asks about: deep()'s pad[n], n sign-extended
 * and set calls up; add_run()'s s->used[s->len - 4] and stores through
 * a pointer work() loaded long before into a register restored from a
 * stack slot deep() overwrites, as in bzip2's add_pair_to_block; and
 * stamp()'s block, in a callee-saved register across note(), whose
 * write(2) makes all memory unknown before it and which saves and
 * restores the register (as bzip2's BZ2_bzWrite keeps its bzFile). */
#include <stdlib.h>
#include <unistd.h>

struct block {
	int len;		/* the run's length */
	int n;			/* bytes in buf */
	unsigned crc;
	int a, b, c, d, e, f, g, h, i, j;
	unsigned char used[256];
	unsigned char *buf;
};

/* Written once, before the first of the positions. */
int verbosity;

#include "valueshelp.h"

/* A CRC loop over s->len, then stores through s and s->buf. */
__attribute__((noipa)) void add_run(struct block *s, unsigned char ch)
{
	for (int k = 0; k < s->len; k++)
		s->crc = (s->crc << 8) ^ (s->crc >> 24) ^ ch;
	s->used[ch] = 1;
	s->used[s->len - 4] = 1;
	for (int k = 0; k < 4; k++) {
		s->buf[s->n] = ch;
		s->n++;
	}
	s->buf[s->n] = (unsigned char) (s->len - 4);
	s->n++;
}

/* A loop in registers, then ten stores through s (a leaf: s stays in
 * the argument register). */
__attribute__((noipa)) void fill(struct block *s, unsigned x)
{
	for (int k = 0; k < 40; k++) {
		__asm__ volatile("" : "+r"(x));
		x = x * 33 + 7;
	}
	s->a = 1;
	s->b = 2;
	s->c = 3;
	s->d = 4;
	s->e = 5;
	s->f = 6;
	s->g = 7;
	s->h = 8;
	s->i = 9;
	s->j = (int) (x & 0xff);
}

/* The block, set once: work() reads it into a callee-saved register,
 * restored on return from a stack slot that deep() then overwrites. */
struct block *blk;

__attribute__((noipa)) void work(void)
{
	struct block *s = blk;

	s->crc = spin(5);
	fill(s, 3);
	s->len = 0;
	sink(2);
}

/* Writes the stack below main's frame (where work's was). */
__attribute__((noipa)) int deep(int n)
{
	volatile char pad[64];

	pad[n] = (char) n;
	return n ? deep(n - 1) + pad[n] : 0;
}

/* The block for stamp(), read before about 200 instructions in
 * registers only. */
__attribute__((noipa)) struct block *pick(void)
{
	struct block *s = blk;

	spin(3);
	return s;
}

/* Where tests/gdb-values-far.sh stops in stamp(): after its stores,
 * before note(). */
__attribute__((noipa)) void mark(void)
{
	__asm__ volatile("");
}

/* Saves and restores the callee-saved registers around a write(2). */
__attribute__((noipa)) long note(long x)
{
	__asm__ volatile("" : : : "rbx", "r12", "r13", "r14", "r15");
	return write(-1, &x, 1) + x;
}

/* Written once, by stamp() after note() returns. */
struct block *last;

/* s in a callee-saved register from pick() to the store to last. */
__attribute__((noipa)) void stamp(void)
{
	struct block *s = pick();

	s->e = 50;
	s->g = 70;
	mark();
	note(s->len);
	last = s;
}

/* A block at an address the code sets (not read from memory). */
struct block gblock;

__attribute__((noipa)) struct block *pick_global(void)
{
	return &gblock;
}

/* Where tests/gdb-values-far.sh stops in stamp_after(), after note(). */
__attribute__((noipa)) void mark_after(void)
{
	__asm__ volatile("");
}

/* s, through a stack slot (volatile), in a callee-saved register across
 * note(), then a store through it and nothing after that says what it
 * was. */
__attribute__((noipa)) void stamp_after(void)
{
	struct block *volatile p = pick_global();
	struct block *s = p;

	note(s->a);
	s->h = 80;
	mark_after();
	s->i = 90;
}

int main(void)
{
	volatile char local[16] = "on the stack";

	blk = calloc(1, sizeof(*blk));
	if (!blk || !(blk->buf = calloc(64, 1)))
		return 1;
	verbosity = 7;
	blk->len = 20;
	blk->n = 3;
	blk->crc = spin(5);
	add_run(blk, 'a');
	stamp_after();
	stamp();
	work();
	deep(4);
	*(volatile int *) (long) sink(0) = local[0] + verbosity;
	return 0;
}
