/* Writes a watched global where a replay cannot prove the write, for
 * tests/gdb-watch.sh: a plain store (proven), then a rep string (its
 * writes are not bounded by its operands) or, given an argument, a
 * read(2) into it (a system call that writes memory), then a crash.
 * Reverse watchpoints must stop at the write they cannot rule out and
 * say why, never skip it. */
#include <fcntl.h>
#include <unistd.h>

volatile int target;

int main(int argc, char **argv)
{
	int fd = open("/dev/zero", O_RDONLY);
	char *p = (char *) &target;
	unsigned long n = sizeof(target);

	(void) argv;
	target = 1;
	if (argc > 1) {
		if (read(fd, (void *) &target, n) != (long) n)
			return 1;
	} else {
		__asm__ volatile("rep stosb" : "+D"(p), "+c"(n) : "a"(7)
				 : "memory");
	}
	return *(volatile int *) (long) (target - target);
}
