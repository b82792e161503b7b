/* tests/fuzz — libFuzzer harnesses over the three inputs ptrr never
 * trusts: gdb's remote-protocol packets (fuzz-serve.c), bundles
 * (fuzz-bundle.c) and PT bytes (fuzz-pt.c); docs/reliability.md.
 *
 * Each harness is linked twice: with libFuzzer (-fsanitize=fuzzer, under
 * configure --enable-fuzz, run by `make fuzz`), and with main.c, a plain
 * driver that replays saved inputs (the crash inputs of tests/fuzz/) in
 * `make check`.  The harnesses serve and decode against a real recording,
 * named by the environment variable PTRR_FUZZ_BUNDLE.
 */
#ifndef PTRR_FUZZ_H
#define PTRR_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "history.h"

/* libFuzzer's entry points, which each harness defines. */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The recording in $PTRR_FUZZ_BUNDLE, opened once; exits with a message
 * if there is none. */
struct hist_recording *fuzz_recording(void);

/* If $PTRR_FUZZ_SEEDS names a directory, writes seed @name (@size bytes
 * of @data) there; returns true if it did. */
int fuzz_write_seed(const char *name, const void *data, size_t size);

/* The directory of $PTRR_FUZZ_SEEDS, or NULL: a harness that finds it
 * set writes its seeds there (fuzz_write_seed()) and exits. */
const char *fuzz_seed_dir(void);

/* Touches history @h as a debugger would: entries walked from each end,
 * gaps explained, a search for @ip both ways, the call segments. */
void fuzz_walk(struct history *h, uint64_t ip);

#endif
