/* What the harnesses share: the recording they run against, seeds. */
#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fuzz.h"

struct hist_recording *fuzz_recording(void)
{
	static struct hist_recording *rec;
	const char *dir = getenv("PTRR_FUZZ_BUNDLE");
	int err;

	if (rec)
		return rec;
	if (!dir || !*dir) {
		fprintf(stderr, "PTRR_FUZZ_BUNDLE is not set: name a recording "
			"(ptrr record -o crash.ptrr tests/progs/crash)\n");
		exit(2);
	}
	err = hist_recording_open(dir, &rec);
	if (err < 0) {
		fprintf(stderr, "%s\n", ptrr_errmsg(err));
		exit(2);
	}
	return rec;
}

const char *fuzz_seed_dir(void)
{
	const char *dir = getenv("PTRR_FUZZ_SEEDS");

	return dir && *dir ? dir : NULL;
}

int fuzz_write_seed(const char *name, const void *data, size_t size)
{
	char path[PATH_MAX];
	int fd;

	if (!fuzz_seed_dir())
		return 0;
	snprintf(path, sizeof(path), "%s/%s", fuzz_seed_dir(), name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, data, size) != (ssize_t) size) {
		perror(path);
		exit(2);
	}
	close(fd);
	return 1;
}

/* fuzz.h: walks, explains, searches, makes call segments. */
void fuzz_walk(struct history *h, uint64_t ip)
{
	struct hist_cursor *c;
	struct hist_call call;
	uint64_t found, n = hist_size(h);
	size_t ncalls = 0;
	uint32_t id;
	char why[256];

	if (hist_cursor_new(h, &c) < 0)
		return;
	for (int k = 0; n && k < 512; k++) {
		const struct hist_entry *e;

		if (k ? hist_cursor_next(c) < 0 : hist_cursor_seek(c, 1) < 0)
			break;
		e = hist_cursor_entry(c);
		if (e->kind == HIST_ENTRY_GAP)
			hist_gap_reason(e, why, sizeof(why));
	}
	if (n && hist_cursor_seek(c, n) >= 0)
		for (int k = 0; k < 512 && hist_cursor_prev(c) >= 0; k++)
			hist_cursor_entry(c);
	hist_cursor_free(c);
	hist_search_ips(h, 1, 1, &ip, 1, &found);
	hist_search_ips(h, n, -1, &ip, 1, &found);
	for (size_t i = 0; i < hist_nsegments(h); i++)
		hist_segment_may_touch(hist_segment_at(h, i), ip);
	if (hist_calls_count(h, &ncalls) < 0)
		return;
	for (uint32_t i = 1; i <= ncalls && i <= 64; i++)
		hist_call_get(h, i, &call);
	if (n)
		hist_call_find(h, n / 2 + 1, &id);
}
