/* Harness: the bundle loader on a bundle written from the input, then
 * the result used as ptrr uses it: the memory image made, each thread's
 * history built and walked (fuzz_walk()).
 *
 * The input is the bundle's files: manifest.json's bytes, then for each
 * other file "\n@@file NAME\n" and its bytes.  NAME is kept inside the
 * bundle (only [A-Za-z0-9._-] and '/', no "." or ".." component); the
 * bundle is written under /dev/shm (or $TMPDIR) and removed after.
 *
 * With $PTRR_FUZZ_SEEDS set, writes the recording in $PTRR_FUZZ_BUNDLE
 * there in this form, and exits.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

static const char file_mark[] = "\n@@file ";

/* The bundle directory each input is written to. */
static char bundle_dir[512];

/* ---- Seeds: a recording in the input's form ---- */

/* Room for a directory and a path inside it. */
#define PATH_CAP (2 * PATH_MAX + 2)

/* Appends file @rel of directory @dir to @f as the harness reads it. */
static void seed_file(FILE *f, const char *dir, const char *rel)
{
	char path[PATH_CAP], buf[4096];
	FILE *in;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	in = fopen(path, "rb");
	if (!in)
		return;
	if (strcmp(rel, "manifest.json"))
		fprintf(f, "%s%s\n", file_mark, rel);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, n, f);
	fclose(in);
}

/* The largest file of a recording a seed keeps (the trace, small
 * snapshot pieces): the others are left missing, which the loader
 * warns about, and the seed stays small. */
#define SEED_FILE_MAX 6000

/* True if file @rel of directory @dir is small enough for a seed. */
static bool small_file(const char *dir, const char *rel)
{
	char path[PATH_CAP];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	return !stat(path, &st) && st.st_size <= SEED_FILE_MAX;
}

/* Appends the small files of @dir/@sub (recursively) but the manifest. */
static void seed_dir(FILE *f, const char *dir, const char *sub)
{
	char path[PATH_CAP], rel[PATH_MAX];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%s", dir, sub);
	d = opendir(path);
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.' || !strcmp(e->d_name, "manifest.json"))
			continue;
		snprintf(rel, sizeof(rel), "%s%s%s", sub, *sub ? "/" : "",
			 e->d_name);
		if (e->d_type == DT_DIR)
			seed_dir(f, dir, rel);
		else if (small_file(dir, rel))
			seed_file(f, dir, rel);
	}
	if (d)
		closedir(d);
}

/* The trace the short seed keeps of each thread: a few hundred
 * instructions, decoded in well under a millisecond (the whole trace of
 * tests/progs/crash is 100,000). */
#define SEED_TRACE_MAX 256

/* Writes seed-short: manifest @manifest of the recording in @dir with
 * each thread's trace cut to SEED_TRACE_MAX bytes, its trace_size (in
 * the manifest) to match. */
static void write_short_seed(const char *dir, const char *manifest)
{
	struct hist_bundle *b;
	char *buf, *m = strdup(manifest), was[64];
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	if (!m || !f || hist_bundle_load(dir, &b) < 0)
		abort();
	for (size_t i = 0; i < b->nthreads; i++) {
		const struct hist_thread *t = &b->threads[i];
		size_t n = t->trace_size < SEED_TRACE_MAX ? t->trace_size :
			SEED_TRACE_MAX;
		int w = snprintf(was, sizeof(was), "\"trace_size\": %zu",
				 t->trace_size);
		char *at = strstr(m, was), after;

		if (!at)
			continue;
		after = at[w];	/* the same length: JSON takes the spaces */
		snprintf(at, (size_t) w + 1, "\"trace_size\": %-*zu", w - 14, n);
		at[w] = after;
	}
	fputs(m, f);
	for (size_t i = 0; i < b->nthreads; i++) {
		const struct hist_thread *t = &b->threads[i];

		fprintf(f, "%s%s\n", file_mark, t->trace_file);
		fwrite(t->trace, 1, t->trace_size < SEED_TRACE_MAX ?
		       t->trace_size : SEED_TRACE_MAX, f);
	}
	fclose(f);
	fuzz_write_seed("seed-short", buf, len);
	hist_bundle_free(b);
	free(buf);
	free(m);
}

/* Writes the recording as three seeds: whole, its manifest alone, and
 * short (write_short_seed()). */
static void write_seeds(const char *dir)
{
	char *buf;
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		abort();
	seed_file(f, dir, "manifest.json");
	fflush(f);
	fuzz_write_seed("seed-manifest", buf, len);
	write_short_seed(dir, buf);
	seed_dir(f, dir, "");
	fclose(f);
	fuzz_write_seed("seed-bundle", buf, len);
	free(buf);
}

/* nftw() callback: removes @path. */
static int remove_one(const char *path, const struct stat *st, int flag,
		      struct FTW *ftw)
{
	return remove(path) && errno != ENOENT;
}

/* Removes bundle_dir and what is in it. */
static void remove_bundle(void)
{
	nftw(bundle_dir, remove_one, 8, FTW_DEPTH | FTW_PHYS);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = access("/dev/shm", W_OK) ? getenv("TMPDIR") :
		"/dev/shm";

	if (fuzz_seed_dir()) {
		write_seeds(getenv("PTRR_FUZZ_BUNDLE"));
		exit(0);
	}
	snprintf(bundle_dir, sizeof(bundle_dir), "%s/ptrr-fuzz-XXXXXX",
		 tmp ? tmp : "/tmp");
	if (!mkdtemp(bundle_dir)) {
		perror(bundle_dir);
		exit(2);
	}
	atexit(remove_bundle);
	return 0;
}

/* ---- Writing the input as a bundle ---- */

/* True if @c may stand in a file name of the bundle as it is. */
static bool name_char(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z') || c == '.' || c == '_' || c == '-';
}

/* Makes @name (@len bytes) a path inside the bundle, in @out (@cap
 * bytes): other characters become '_', empty components go, and a
 * component "." or ".." becomes "_". */
static void safe_name(const char *name, size_t len, char *out, size_t cap)
{
	size_t n = 0, start = 0;

	for (size_t i = 0; i <= len && n + 2 < cap; i++) {
		if (i < len && name[i] != '/') {
			out[n++] = name_char(name[i]) ? name[i] : '_';
			continue;
		}
		if (!strncmp(out + start, "..", n - start))
			n = start;		/* "", "." or ".." */
		else
			out[n++] = '/';
		start = n;
	}
	if (!strncmp(out + start, "..", n - start))
		n = start;		/* the last, cut short */
	if (n && out[n - 1] == '/')
		n--;
	if (!n)
		out[n++] = '_';
	out[n] = '\0';
}

/* Writes @size bytes of @data to bundle file @rel, making its
 * directories. */
static void put_file(const char *rel, const void *data, size_t size)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", bundle_dir, rel);
	for (char *p = path + strlen(bundle_dir) + 1; (p = strchr(p, '/'));
	     p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return;		/* a name that is a directory already */
	if (write(fd, data, size) != (ssize_t) size)
		abort();
	close(fd);
}

/* Writes the input's files into bundle_dir. */
static void write_bundle(const char *data, size_t size)
{
	const char *end = data + size, *name = NULL;
	char rel[256];

	while (data <= end) {
		const char *mark = memmem(data, (size_t) (end - data),
					  file_mark, sizeof(file_mark) - 1);
		const char *stop = mark ? mark : end;

		if (!name) {
			put_file("manifest.json", data, (size_t) (stop - data));
		} else {
			const char *nl = memchr(name, '\n',
						(size_t) (stop - name));

			if (nl) {
				safe_name(name, (size_t) (nl - name), rel,
					  sizeof(rel));
				put_file(rel, nl + 1, (size_t) (stop - nl - 1));
			}
		}
		if (!mark)
			break;
		name = mark + sizeof(file_mark) - 1;
		data = name;
	}
}

/* ---- The loader, and the bundle used ---- */

/* Builds and walks the history of each thread of loaded bundle @b. */
static void use_bundle(const struct hist_bundle *b)
{
	struct hist_image *img;

	if (hist_image_from_bundle(b, &img) < 0)
		return;
	for (size_t i = 0; i < b->nthreads && i < 4; i++) {
		const struct hist_thread *t = &b->threads[i];
		struct hist_config cfg = {
			.cpu = b->cpu, .trace = t->trace,
			.size = t->trace_size, .image = img,
			.have_end_ip = t->regs.valid &&
				(t->stop.kind == HIST_STOP_FAULT ||
				 t->stop.kind == HIST_STOP_NONE),
			.end_ip = t->regs.r[HIST_RIP],
		};
		struct history *h;

		if (hist_open(&cfg, &h) >= 0) {
			fuzz_walk(h, cfg.end_ip);
			hist_close(h);
		}
	}
	hist_image_free(img);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hist_bundle *b;

	write_bundle((const char *) data, size);
	if (hist_bundle_load(bundle_dir, &b) >= 0) {
		use_bundle(b);
		hist_bundle_free(b);
	}
	remove_bundle();
	mkdir(bundle_dir, 0700);
	return 0;
}
