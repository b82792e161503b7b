/* Harness: a thread's saved index (threads/TID.idx, history/index_file.c)
 * read back for the first thread of a real recording ($PTRR_FUZZ_BUNDLE),
 * and the history it gives used: walked, searched, and its call segments
 * read and followed up their links as the frames of a call stack are.
 *
 * The input is the file's bytes.  Its key (bytes 16 to 23) is set to the
 * recording's before it is read, so that mutations explore what lies
 * behind the key rather than being turned away by it.
 *
 * With $PTRR_FUZZ_SEEDS set, writes the recording's own index there as
 * the seed, and exits.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "history_internal.h"

/* Where the key lies in the file's header (index_file.c). */
#define KEY_AT 16

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct hist_recording *rec = fuzz_recording();
	const struct hist_bundle *b = hist_recording_bundle(rec);

	if (fuzz_seed_dir()) {
		if (!hist_recording_make_index(rec) && b->nthreads)
			fuzz_write_seed("seed-index", b->threads[0].index,
					b->threads[0].index_size);
		exit(0);
	}
	return 0;
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
	uint8_t *copy = malloc(size ? size : 1);
	size_t ncalls;
	uint32_t id;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (size >= KEY_AT + sizeof(key))
		memcpy(copy + KEY_AT, &key, sizeof(key));
	if (hist_index_load(&cfg, key, copy, size, &h) == 0) {
		fuzz_walk(h, cfg.end_ip);
		if (!hist_calls_count(h, &ncalls) && ncalls) {
			climb(h, (uint32_t) ncalls, 64);
			if (!hist_call_find(h, hist_size(h), &id))
				climb(h, id, 64);
		}
		hist_close(h);
	}
	ptrr_clear_error();
	free(copy);
	return 0;
}
