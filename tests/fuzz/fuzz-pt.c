/* Harness: PT bytes decoded into the instruction history against the
 * memory image of a real recording ($PTRR_FUZZ_BUNDLE): the index built,
 * its entries walked both ways, searched, and its call segments made.
 *
 * The input's first byte holds flags: bit 0, the thread's final PC is
 * known (the recording's first thread's); bit 1, the history is opened
 * on the first half of the trace and extended to the whole (as a live
 * session grows).  The rest is the trace.
 *
 * With $PTRR_FUZZ_SEEDS set, writes the recording's traces there as
 * seeds, cut at their PSBs, and exits.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

/* The PSB packet, which starts each stretch of trace libipt can sync to. */
static const uint8_t psb[16] = {
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
};

/* The largest seed written: libFuzzer's -max_len in `make fuzz`. */
#define SEED_MAX 4096

/* Writes seed @name: flags byte @flags then @size bytes of @trace. */
static void write_seed(const char *name, uint8_t flags, const uint8_t *trace,
		       size_t size)
{
	static uint8_t buf[SEED_MAX];

	if (size > SEED_MAX - 1)
		size = SEED_MAX - 1;
	buf[0] = flags;
	memcpy(buf + 1, trace, size);
	fuzz_write_seed(name, buf, size + 1);
}

/* Seeds from each thread's trace: each PSB-delimited stretch of it, and
 * two stretches together, with and without the final PC. */
static void write_seeds(const struct hist_bundle *b)
{
	char name[64];

	for (size_t i = 0; i < b->nthreads && i < 8; i++) {
		const uint8_t *t = b->threads[i].trace, *end = t +
			b->threads[i].trace_size, *p = t;

		for (int k = 0; p && k < 32; k++) {
			const uint8_t *next = memmem(p + 1, (size_t) (end - p - 1),
						     psb, sizeof(psb));
			const uint8_t *after = next ? memmem(next + 1,
				(size_t) (end - next - 1), psb, sizeof(psb)) : NULL;

			snprintf(name, sizeof(name), "seed-%zu-%d", i, k);
			write_seed(name, (uint8_t) (k & 3), p,
				   (size_t) ((next ? next : end) - p));
			snprintf(name, sizeof(name), "seed-%zu-%d-2", i, k);
			write_seed(name, 1, p, (size_t) ((after ? after : end) - p));
			p = next;
		}
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct hist_recording *rec = fuzz_recording();

	if (fuzz_seed_dir()) {
		write_seeds(hist_recording_bundle(rec));
		exit(0);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hist_recording *rec = fuzz_recording();
	const struct hist_bundle *b = hist_recording_bundle(rec);
	struct hist_config cfg = { 0 };
	struct history *h;
	bool extend;

	if (size < 1)
		return 0;
	cfg.cpu = b->cpu;
	cfg.trace = data + 1;
	cfg.size = size - 1;
	cfg.image = hist_recording_image(rec);
	cfg.symtab = hist_recording_symtab(rec);
	cfg.have_end_ip = data[0] & 1;
	cfg.end_ip = b->threads[0].regs.r[HIST_RIP];
	extend = data[0] & 2;
	if (extend)
		cfg.size /= 2;
	if (hist_open(&cfg, &h) < 0)
		return 0;
	if (extend)
		hist_extend(h, data + 1, size - 1, cfg.have_end_ip, cfg.end_ip);
	fuzz_walk(h, cfg.end_ip);
	hist_close(h);
	return 0;
}
