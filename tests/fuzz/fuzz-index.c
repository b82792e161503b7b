/* Harness: a thread's saved index (threads/TID.idx, history/index_file.c)
 * read back for the first thread of a real recording ($PTRR_FUZZ_BUNDLE),
 * and the history it gives used: walked, searched, and its call segments
 * read and followed up their links as the frames of a call stack are.
 *
 * The input is the file with its body inflated: the header, then the
 * segments and call segments as the reader parses them.  Its layout and
 * key (bytes 8 to 23) are set to this build's and the recording's, and
 * its body compressed, before it is read, so that mutations explore what
 * lies behind the key and zlib's checksum rather than being turned away
 * by them.
 *
 * With $PTRR_FUZZ_SEEDS set, writes the recording's own index there as
 * the seed (its body inflated), and exits.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fuzz.h"
#include "history_internal.h"

/* Where the layout, the key and the body's size lie in the file's
 * header, and where the body starts (index_file.c). */
#define LAYOUT_AT 8
#define KEY_AT 16
#define BODY_SIZE_AT 64
#define BODY_AT 80

/* This build's layout, read from the recording's own index. */
static uint64_t layout;

/* Writes the recording's index @data (@size bytes) as the seed, its
 * body inflated. */
static void write_seed(const uint8_t *data, size_t size)
{
	uint64_t body_size;
	uLongf n;
	uint8_t *seed;

	if (size < BODY_AT)
		return;
	memcpy(&body_size, data + BODY_SIZE_AT, sizeof(body_size));
	n = (uLongf) body_size;
	seed = malloc(BODY_AT + body_size + 1);
	if (seed && uncompress(seed + BODY_AT, &n, data + BODY_AT,
			       (uLong) (size - BODY_AT)) == Z_OK) {
		memcpy(seed, data, BODY_AT);
		fuzz_write_seed("seed-index", seed, BODY_AT + n);
	}
	free(seed);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct hist_recording *rec = fuzz_recording();
	const struct hist_bundle *b = hist_recording_bundle(rec);

	if (hist_recording_make_index(rec) || !b->nthreads ||
	    b->threads[0].index_size < BODY_AT) {
		fprintf(stderr, "the index of the recording cannot be made\n");
		exit(2);
	}
	memcpy(&layout, b->threads[0].index + LAYOUT_AT, sizeof(layout));
	if (fuzz_seed_dir()) {
		write_seed(b->threads[0].index, b->threads[0].index_size);
		exit(0);
	}
	return 0;
}

/* The file for input @data (@size bytes, at least BODY_AT): its header
 * with this build's layout, key @key and the body's size, then the body
 * compressed; into a new buffer of *@out bytes, NULL if out of memory. */
static uint8_t *index_file(const uint8_t *data, size_t size, uint64_t key,
			   size_t *out)
{
	uint64_t body_size = size - BODY_AT;
	uLongf n = compressBound((uLong) body_size);
	uint8_t *file = malloc(BODY_AT + n);

	if (!file || compress2(file + BODY_AT, &n, data + BODY_AT,
			       (uLong) body_size, 1) != Z_OK) {
		free(file);
		return NULL;
	}
	memcpy(file, data, BODY_AT);
	memcpy(file + LAYOUT_AT, &layout, sizeof(layout));
	memcpy(file + KEY_AT, &key, sizeof(key));
	memcpy(file + BODY_SIZE_AT, &body_size, sizeof(body_size));
	*out = BODY_AT + n;
	return file;
}

/* Follows call segment @id's links up to @steps times, as the frames of
 * a call stack climb them. */
static void climb(struct history *h, uint32_t id, int steps)
{
	struct hist_call c;

	for (int k = 0; k < steps && !hist_call_get(h, id, &c); k++)
		id = k & 1 ? c.up : c.inst;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hist_recording *rec = fuzz_recording();
	struct hist_config cfg = hist_recording_config(rec, 0);
	uint64_t key = hist_recording_index_key(rec, 0);
	struct history *h;
	uint8_t *file;
	size_t ncalls, n;
	uint32_t id;

	if (size < BODY_AT || !(file = index_file(data, size, key, &n)))
		return 0;
	if (hist_index_load(&cfg, key, file, n, false, &h) == 0) {
		fuzz_walk(h, cfg.end_ip);
		if (!hist_calls_count(h, &ncalls) && ncalls) {
			climb(h, (uint32_t) ncalls, 64);
			if (!hist_call_find(h, hist_size(h), &id))
				climb(h, id, 64);
		}
		hist_close(h);	/* and the file it kept */
	} else {
		free(file);
	}
	ptrr_clear_error();
	return 0;
}
