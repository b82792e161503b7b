/* Greets: prints its arguments on one line, "greet: ARG...", from
 * greet() (a place for a breakpoint); given "-o FILE" first, it then
 * writes "done" into FILE as it ends.  For running a program again in a
 * debugger, and for letting it go. */
#include <stdio.h>
#include <string.h>

static void __attribute__((noinline)) greet(int argc, char **argv)
{
	printf("greet:");
	for (int i = 1; i < argc; i++)
		printf(" %s", argv[i]);
	printf("\n");
	fflush(stdout);
}

int main(int argc, char **argv)
{
	const char *done = argc > 2 && !strcmp(argv[1], "-o") ? argv[2] : NULL;
	FILE *f;

	greet(argc, argv);
	if (done && (f = fopen(done, "w"))) {
		fputs("done\n", f);
		fclose(f);
	}
	return 0;
}
