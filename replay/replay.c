/* The replay: a position per thread, moved one instruction at a time or
 * on to the nearest execution of a breakpoint address (replay.h).
 *
 * Each thread keeps a hist_cursor at its position, so a step is a cursor
 * step (a binary search at most when it leaves a run or a segment), and
 * a continue is one hist_search_ips() over the segment summaries.  No
 * call walks the history. */
#include <config.h>

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "replay_internal.h"

/* Thread @thr of @rp, or NULL (with an error recorded) if there is none. */
static struct replay_thread *thread_of(const struct replay *rp, size_t thr)
{
	if (!rp || thr >= rp->n) {
		ptrr_fail(PTRR_ERR_NOTFOUND, "no thread %zu in the replay",
			  thr);
		return NULL;
	}
	return &rp->t[thr];
}

/* Moves cursor @c from its entry in direction @dir (-1 or 1) to the
 * nearest instruction entry, the entry itself included if @inclusive;
 * sets *@gap if it passed a gap.  PTRR_ERR_RANGE if there is none (the
 * cursor is then wherever the search ended). */
static int cursor_to_insn(struct hist_cursor *c, int dir, bool inclusive,
			  bool *gap)
{
	const struct hist_entry *e = hist_cursor_entry(c);
	int err;

	if (inclusive && e && e->kind == HIST_ENTRY_INSN)
		return 0;
	for (;;) {
		err = dir < 0 ? hist_cursor_prev(c) : hist_cursor_next(c);
		if (err)
			return err;
		e = hist_cursor_entry(c);
		if (e->kind == HIST_ENTRY_INSN)
			return 0;
		if (gap)
			*gap = true;
	}
}

/* Finds the first and last instruction entries of thread @t's history
 * (both 0 if it has none). */
static int find_ends(struct replay_thread *t)
{
	uint64_t size = hist_size(t->h);
	int err;

	t->first = t->last = 0;
	if (!size || !hist_insn_count(t->h))
		return 0;
	err = hist_cursor_seek(t->look, 1);
	if (!err)
		err = cursor_to_insn(t->look, 1, true, NULL);
	if (err)
		return err;
	t->first = hist_cursor_entry(t->look)->number;
	err = hist_cursor_seek(t->look, size);
	if (!err)
		err = cursor_to_insn(t->look, -1, true, NULL);
	if (err)
		return err;
	t->last = hist_cursor_entry(t->look)->number;
	return 0;
}

/* Entries of the call-segment pass a question at a new position may
 * wait for: about 50 ms of the pass (docs/history.md). */
#define CALLS_SLACK (2u << 20)

/* CALLS_SLACK, or for tests (tests/qemu-calls-later.sh) the number of
 * entries in PTRR_TEST_CALLS_SLACK. */
static uint64_t calls_slack(void)
{
	static uint64_t slack;
	const char *s;

	if (!slack) {
		s = getenv("PTRR_TEST_CALLS_SLACK");
		slack = s ? strtoull(s, NULL, 10) + 1 : CALLS_SLACK + 1;
	}
	return slack - 1;
}

/* Decides at thread @t's new position whether what needs the call
 * segments (the frame proofs, the unwinder's frames) does without them
 * there: while the replay's own pass prepares them and is more than
 * CALLS_SLACK entries from the end (a live session on QEMU just stopped
 * after hundreds of millions of instructions), the values are those the
 * walk back from the end proves (recover.c) and the frames are read back
 * from the end's stack (frames.c, replay_frames_local), rather than
 * waiting seconds.  Decided once per position, so one stop is answered
 * one way throughout. */
static void decide_calls(struct replay_thread *t)
{
	if (t->prepared && t->last && !hist_calls_near(t->h, calls_slack()))
		t->calls_off = true;
	else
		replay_calls_on(t);
}

void replay_calls_on(struct replay_thread *t)
{
	/* What was learned without them is forgotten, so that the walk
	 * learns again with the frame proofs. */
	if (t->calls_off)
		replay_known_reset(t);
	t->calls_off = false;
}

/* Puts thread @t at instruction entry @number (which must be one). */
static int set_position(struct replay_thread *t, uint64_t number)
{
	int err = hist_cursor_seek(t->cur, number);

	if (err)
		return err;
	t->pos = number;
	t->pc = hist_cursor_entry(t->cur)->ip;
	decide_calls(t);
	return 0;
}

/* Puts thread @t at entry @number, or at the nearest instruction after
 * it if it is a gap (there must be one); stays where it was on error. */
static int set_position_at_insn(struct replay_thread *t, uint64_t number)
{
	int err = hist_cursor_seek(t->cur, number);

	if (!err)
		err = cursor_to_insn(t->cur, 1, true, NULL);
	if (err) {
		set_position(t, t->pos);
		return err;
	}
	return set_position(t, hist_cursor_entry(t->cur)->number);
}

/* Sets thread @t up over history @h, at its end. */
static int thread_init(struct replay_thread *t, int tid, struct history *h,
		       const struct hist_regs *end_regs)
{
	int err;

	t->tid = tid;
	t->h = h;
	if (end_regs)
		t->end_regs = *end_regs;
	err = hist_cursor_new(h, &t->cur);
	if (!err)
		err = hist_cursor_new(h, &t->look);
	if (!err)
		err = find_ends(t);
	if (!err && t->last)
		err = set_position(t, t->last);
	return err;
}

/* An empty replay of @n threads. */
static struct replay *replay_alloc(size_t n)
{
	struct replay *rp = calloc(1, sizeof(*rp));

	if (rp)
		rp->t = calloc(n ? n : 1, sizeof(*rp->t));
	if (!rp || !rp->t) {
		free(rp);
		ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
		return NULL;
	}
	rp->n = n;
	return rp;
}

/* Brings the call segments of every thread of @arg, a replay, up to
 * date, so that the first replay_frames does not wait for the pass over
 * the whole history; until the replay is freed.  Errors are left for the
 * first replay_frames to report. */
static void *prepare_calls(void *arg)
{
	struct replay *rp = arg;
	/* For tests: a pass that never gets on (tests/qemu-calls-later.sh). */
	const char *hold = getenv("PTRR_TEST_CALLS_HOLD");

	if (hold && !strcmp(hold, "1")) {
		while (!__atomic_load_n(&rp->stop, __ATOMIC_ACQUIRE))
			usleep(10000);
		return NULL;
	}

	for (size_t i = 0; i < rp->n; i++)
		while (rp->t[i].last &&
		       hist_calls_prepare(rp->t[i].h, &rp->stop) == 1)
			if (__atomic_load_n(&rp->stop, __ATOMIC_ACQUIRE))
				return NULL;
	return NULL;
}

void replay_prepare(struct replay *rp, bool run)
{
	if (rp->preparing) {
		__atomic_store_n(&rp->stop, true, __ATOMIC_RELEASE);
		pthread_join(rp->prepare, NULL);
		rp->preparing = false;
		for (size_t i = 0; i < rp->n; i++)
			rp->t[i].prepared = false;
	}
	if (!run)
		return;
	__atomic_store_n(&rp->stop, false, __ATOMIC_RELEASE);
	rp->preparing = !pthread_create(&rp->prepare, NULL, prepare_calls,
					rp);
	for (size_t i = 0; i < rp->n; i++)
		rp->t[i].prepared = rp->preparing;
}

/* Above every Linux task id (PID_MAX_LIMIT, 2^22). */
#define TID_REUSED_STEP (1 << 22)

/* Gives a thread whose task id an earlier thread of @rp had (the kernel
 * gave it again while the program ran: threads/TID-N.pt) an id of its
 * own for the debugger, TID + k * 2^22 for the k-th reuse, so that no two
 * threads answer to one id.  The earlier thread keeps TID. */
static void unique_tids(struct replay *rp)
{
	for (size_t i = 1; i < rp->n; i++) {
		int tid = rp->t[i].tid, k = 0;

		for (size_t j = 0; j < i; j++)
			if (rp->t[j].tid % TID_REUSED_STEP == tid)
				k++;
		if (k && tid > 0 && tid < TID_REUSED_STEP &&
		    k < INT_MAX / TID_REUSED_STEP)
			rp->t[i].tid = tid + k * TID_REUSED_STEP;
	}
}

int replay_new(struct hist_recording *rec, struct replay **out)
{
	const struct hist_bundle *b = hist_recording_bundle(rec);
	struct replay *rp = replay_alloc(b->nthreads);
	int err = rp ? 0 : PTRR_ERR_NOMEM;

	for (size_t i = 0; !err && i < b->nthreads; i++) {
		struct history *h;

		err = hist_recording_history(rec, i, &h);
		if (!err)
			err = thread_init(&rp->t[i], b->threads[i].tid, h,
					  &b->threads[i].regs);
	}
	if (err) {
		replay_free(rp);
		return err;
	}
	unique_tids(rp);
	rp->rec = rec;
	replay_prepare(rp, true);
	*out = rp;
	return 0;
}

int replay_new_threads(size_t nthreads, const int *tids,
		       struct history *const *histories,
		       const struct hist_regs *end_regs, struct replay **out)
{
	struct replay *rp = replay_alloc(nthreads);
	int err = rp ? 0 : PTRR_ERR_NOMEM;

	for (size_t i = 0; !err && i < nthreads; i++)
		err = thread_init(&rp->t[i], tids[i], histories[i],
				  end_regs ? &end_regs[i] : NULL);
	if (err) {
		replay_free(rp);
		return err;
	}
	*out = rp;
	return 0;
}

int replay_refresh(struct replay *rp, size_t thr,
		   const struct hist_regs *end_regs)
{
	struct replay_thread *t = thread_of(rp, thr);
	bool was_at_end;
	int err;

	if (!t)
		return PTRR_ERR_NOTFOUND;
	was_at_end = t->pos == t->last;
	if (end_regs)
		t->end_regs = *end_regs;
	replay_frames_reset(t);
	err = find_ends(t);
	if (err || !t->last)
		return err;
	if (was_at_end || t->pos > t->last || t->pos < t->first)
		return set_position(t, t->last);
	return set_position_at_insn(t, t->pos);
}

void replay_free(struct replay *rp)
{
	if (!rp)
		return;
	replay_prepare(rp, false);
	for (size_t i = 0; i < rp->n; i++) {
		hist_cursor_free(rp->t[i].cur);
		hist_cursor_free(rp->t[i].look);
		replay_frames_reset(&rp->t[i]);
	}
	free(rp->t);
	free(rp);
}

size_t replay_nthreads(const struct replay *rp)
{
	return rp ? rp->n : 0;
}

int replay_tid(const struct replay *rp, size_t thr)
{
	const struct replay_thread *t = thread_of(rp, thr);

	return t ? t->tid : PTRR_ERR_NOTFOUND;
}

int replay_find_tid(const struct replay *rp, int tid, size_t *thr)
{
	for (size_t i = 0; rp && i < rp->n; i++) {
		if (rp->t[i].tid == tid) {
			*thr = i;
			return 0;
		}
	}
	return ptrr_fail(PTRR_ERR_NOTFOUND, "no thread %d in the replay",
			 tid);
}

bool replay_thread_empty(struct replay *rp, size_t thr)
{
	const struct replay_thread *t = thread_of(rp, thr);

	return !t || !t->last;
}

uint64_t replay_position(const struct replay *rp, size_t thr)
{
	const struct replay_thread *t = thread_of(rp, thr);

	return t ? t->pos : 0;
}

bool replay_at_end(const struct replay *rp, size_t thr)
{
	const struct replay_thread *t = thread_of(rp, thr);

	return t && t->pos == t->last;
}

uint64_t replay_pc(const struct replay *rp, size_t thr)
{
	const struct replay_thread *t = thread_of(rp, thr);

	return t ? t->pc : 0;
}

int replay_goto(struct replay *rp, size_t thr, uint64_t number)
{
	struct replay_thread *t = thread_of(rp, thr);

	if (!t)
		return PTRR_ERR_NOTFOUND;
	if (!t->last || number < 1 || number > t->last)
		return ptrr_fail(PTRR_ERR_RANGE, "instruction %llu is outside "
				 "the history of thread %d (%llu .. %llu)",
				 (unsigned long long) number, t->tid,
				 (unsigned long long) t->first,
				 (unsigned long long) t->last);
	return set_position_at_insn(t, number < t->first ? t->first : number);
}

int replay_goto_end(struct replay *rp, size_t thr)
{
	struct replay_thread *t = thread_of(rp, thr);

	if (!t)
		return PTRR_ERR_NOTFOUND;
	return t->last ? set_position(t, t->last) : 0;
}

/* Fills @res for thread @t at its position, stopped by @stop. */
static void result(const struct replay_thread *t, enum replay_stop stop,
		   bool crossed_gap, struct replay_result *res)
{
	res->stop = stop;
	res->number = t->pos;
	res->pc = t->pc;
	res->crossed_gap = crossed_gap;
}

/* If thread @t cannot move in direction @dir (it is empty, or at that
 * end), fills @res with the stop that reports it and returns true. */
static bool at_limit(const struct replay_thread *t, int dir,
		     struct replay_result *res)
{
	if (!t->last || (dir > 0 && t->pos == t->last)) {
		result(t, REPLAY_STOP_END, false, res);
		return true;
	}
	if (dir < 0 && t->pos == t->first) {
		result(t, REPLAY_STOP_BEGIN, false, res);
		return true;
	}
	return false;
}

int replay_step(struct replay *rp, size_t thr, int dir,
		struct replay_result *res)
{
	struct replay_thread *t = thread_of(rp, thr);
	bool gap = false;
	int err;

	if (!t)
		return PTRR_ERR_NOTFOUND;
	if (!dir)
		return ptrr_fail(PTRR_ERR_USAGE, "a step needs a direction");
	if (at_limit(t, dir, res))
		return 0;
	err = cursor_to_insn(t->cur, dir, false, &gap);
	if (err) {
		set_position(t, t->pos);
		return err;
	}
	t->pos = hist_cursor_entry(t->cur)->number;
	t->pc = hist_cursor_entry(t->cur)->ip;
	decide_calls(t);
	result(t, dir > 0 && t->pos == t->last ? REPLAY_STOP_END :
		  REPLAY_STOP_STEP, gap, res);
	return 0;
}

/* Sets *@gap if segment @s of @t's history, which has gaps, has one
 * strictly between entries @a and @b: at once if all of @s lies between
 * them, else by reading that part of it with the look cursor. */
static int segment_gap_between(struct replay_thread *t,
			       const struct hist_segment *s, uint64_t a,
			       uint64_t b, bool *gap)
{
	uint64_t last = s->first + s->count - 1;
	uint64_t from = s->first > a ? s->first : a + 1;
	uint64_t to = last < b ? last : b - 1;
	int err = 0;

	if (s->first > a && last < b) {
		*gap = true;
		return 0;
	}
	for (uint64_t n = from; !err && n <= to; n++) {
		err = n == from ? hist_cursor_seek(t->look, n) :
		      hist_cursor_next(t->look);
		if (!err && hist_cursor_entry(t->look)->kind == HIST_ENTRY_GAP) {
			*gap = true;
			return 0;
		}
	}
	return err;
}

/* Sets *@gap if thread @t's history has a gap strictly between entries
 * @a < @b.  Only segments whose count of gaps is not 0 are read. */
static int gap_between(struct replay_thread *t, uint64_t a, uint64_t b,
		       bool *gap)
{
	size_t i, j;
	int err = hist_segment_find(t->h, a, &i);

	if (!err)
		err = hist_segment_find(t->h, b, &j);
	for (; !err && !*gap && i <= j; i++) {
		const struct hist_segment *s = hist_segment_at(t->h, i);

		if (s->gaps)
			err = segment_gap_between(t, s, a, b, gap);
	}
	return err;
}

/* The entry continuing thread @t in direction @dir finds: the nearest
 * execution of one of @bps (*@stop BREAK), else the end or the first
 * instruction; or where the search had come to when @stop_fn said to
 * stop (INTERRUPT). */
static int continue_target(struct replay_thread *t, int dir,
			   const uint64_t *bps, size_t nbps,
			   bool (*stop_fn)(void *), void *arg,
			   uint64_t *number, enum replay_stop *stop)
{
	uint64_t found;
	bool stopped = false;
	int err = nbps ? hist_search_ips_until(t->h, t->pos, dir, bps, nbps,
					       stop_fn, arg, &found,
					       &stopped) : PTRR_ERR_NOTFOUND;

	if (err == PTRR_ERR_NOTFOUND || (!err && dir > 0 &&
					  found >= t->last)) {
		ptrr_clear_error();
		*number = dir < 0 ? t->first : t->last;
		*stop = dir < 0 ? REPLAY_STOP_BEGIN : REPLAY_STOP_END;
		return 0;
	}
	*number = found;
	*stop = stopped ? REPLAY_STOP_INTERRUPT : REPLAY_STOP_BREAK;
	return err;
}

int replay_continue(struct replay *rp, size_t thr, int dir,
		    const uint64_t *bps, size_t nbps,
		    struct replay_result *res)
{
	return replay_continue_until(rp, thr, dir, bps, nbps, NULL, NULL,
				     res);
}

int replay_continue_until(struct replay *rp, size_t thr, int dir,
			  const uint64_t *bps, size_t nbps,
			  bool (*stop_fn)(void *arg), void *arg,
			  struct replay_result *res)
{
	struct replay_thread *t = thread_of(rp, thr);
	enum replay_stop stop;
	uint64_t to, from;
	bool gap = false;
	int err;

	if (!t)
		return PTRR_ERR_NOTFOUND;
	if (!dir)
		return ptrr_fail(PTRR_ERR_USAGE, "a continue needs a "
				 "direction");
	if (at_limit(t, dir, res))
		return 0;
	from = t->pos;
	err = continue_target(t, dir, bps, nbps, stop_fn, arg, &to, &stop);
	if (!err)
		err = gap_between(t, dir < 0 ? to : from, dir < 0 ? from : to,
				  &gap);
	if (!err)
		err = set_position(t, to);
	if (err) {
		set_position(t, from);
		return err;
	}
	result(t, stop, gap, res);
	return 0;
}
