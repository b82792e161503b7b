/* A plain driver for the harnesses, without libFuzzer: runs the harness
 * once on each file named (or each file of each directory named), as
 * `make check` replays the crash inputs of tests/fuzz/.  Prints each
 * input's name before running it, so that a crash says which. */
#include "config.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

/* Runs the harness on @size bytes of @data copied to the end of a page
 * that a page nobody may read follows: a library that is not
 * instrumented (libipt) and reads past the input faults here as it did
 * under libFuzzer, instead of reading the heap unseen. */
static void run_guarded(const uint8_t *data, size_t size)
{
	size_t page = (size_t) sysconf(_SC_PAGESIZE);
	size_t span = (size + page - 1) / page * page;
	uint8_t *m = mmap(NULL, span + page, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED || mprotect(m + span, page, PROT_NONE)) {
		perror("mmap");
		exit(2);
	}
	memcpy(m + span - size, data, size);
	LLVMFuzzerTestOneInput(m + span - size, size);
	munmap(m, span + page);
}

/* Runs the harness on file @path; false if it cannot be read. */
static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data = NULL;
	long size;

	if (!f || fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) || !(data = malloc((size_t) size + 1)) ||
	    fread(data, 1, (size_t) size, f) != (size_t) size) {
		perror(path);
		if (f)
			fclose(f);
		free(data);
		return 0;
	}
	fclose(f);
	printf("%s (%ld bytes)\n", path, size);
	fflush(stdout);
	run_guarded(data, (size_t) size);
	free(data);
	return 1;
}

/* Runs the harness on @path, a file or a directory of files. */
static int run_path(const char *path)
{
	struct dirent **names;
	char sub[PATH_MAX];
	struct stat st;
	int n, ok = 1;

	if (stat(path, &st) || !S_ISDIR(st.st_mode))
		return run_file(path);
	n = scandir(path, &names, NULL, alphasort);
	if (n < 0) {
		perror(path);
		return 0;
	}
	for (int i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.') {
			snprintf(sub, sizeof(sub), "%s/%s", path,
				 names[i]->d_name);
			ok &= run_file(sub);
		}
		free(names[i]);
	}
	free(names);
	return ok;
}

int main(int argc, char **argv)
{
	int ok = 1;

	LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++)
		ok &= run_path(argv[i]);
	return ok ? 0 : 1;
}
