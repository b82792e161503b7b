/* What the files of tests/unit/test-replay share: the thread under test
 * and the checks. */
#ifndef PTRR_TEST_REPLAY_H
#define PTRR_TEST_REPLAY_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "history.h"
#include "replay.h"

/* A thread of a recording under test. */
struct tcase {
	const char *name;	/* the bundle's name */
	struct replay *rp;
	size_t thr;
	int tid;
	struct hist_entry *e;	/* its entries, e[number - 1] */
	uint64_t n;
	bool have_truth;	/* checked against a ground truth file */
	int reported;		/* failures printed so far */
};

void tc_fail(struct tcase *tc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int64_t tc_insn_from(const struct tcase *tc, int64_t i, int dir);
bool tc_gap_between(const struct tcase *tc, uint64_t a, uint64_t b);
void tc_check_move(struct tcase *tc, const char *what, int err,
		   const struct replay_result *res, uint64_t from,
		   uint64_t want, enum replay_stop stop);

/* replay_continue against a linear scan (test-replay-continue.c). */
void check_continue(struct tcase *tc, struct hist_recording *rec);

/* replay_frames against a call/return simulation (test-replay-frames.c). */
void check_frames(struct tcase *tc, struct hist_recording *rec);

/* Window passes against the whole call-segment pass (test-replay-window.c). */
void check_window(struct tcase *tc, struct history *h);

#endif
