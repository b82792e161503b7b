/* replay_continue against a linear scan of the entries: runs to every
 * execution of a set of breakpoint addresses in both directions, from
 * both ends and from the middle, for several sets (a function's entry,
 * two addresses, addresses at the ends, one never executed, none).  And
 * replay_continue_until stopped by its caller (gdb's Ctrl-C) at the
 * first, second and fifth time it asks: short of where the scan says,
 * past no breakpoint, and a continue from there gets there. */
#include <config.h>

#include <string.h>

#include "test-replay.h"

#define MAX_STOPS 500

/* A set of breakpoint addresses. */
struct bpset {
	const char *what;
	uint64_t a[4];
	size_t n;
};

/* True if entry index @i is an instruction at one of @bp's addresses. */
static bool hits(const struct tcase *tc, int64_t i, const struct bpset *bp)
{
	if (tc->e[i].kind != HIST_ENTRY_INSN)
		return false;
	for (size_t k = 0; k < bp->n; k++)
		if (tc->e[i].ip == bp->a[k])
			return true;
	return false;
}

/* Where a continue from entry index @i in direction @dir must stop, by a
 * linear scan: the index into *@to and the stop into *@stop. */
static void scan(const struct tcase *tc, int64_t i, int dir,
		 const struct bpset *bp, int64_t *to, enum replay_stop *stop)
{
	int64_t first = tc_insn_from(tc, 0, 1);
	int64_t last = tc_insn_from(tc, (int64_t) tc->n - 1, -1);

	for (int64_t k = i + dir; k >= 0 && k < (int64_t) tc->n; k += dir) {
		if (hits(tc, k, bp) && k != last) {
			*to = k;
			*stop = REPLAY_STOP_BREAK;
			return;
		}
	}
	*to = dir < 0 ? first : last;
	*stop = dir < 0 ? REPLAY_STOP_BEGIN : REPLAY_STOP_END;
}

/* Continues from entry index @i in direction @dir until an end of the
 * history (or MAX_STOPS stops), each stop checked against the scan. */
static void sweep(struct tcase *tc, int64_t i, int dir,
		  const struct bpset *bp)
{
	char what[96];

	snprintf(what, sizeof(what), "continue %s to %s",
		 dir < 0 ? "backward" : "forward", bp->what);
	if (replay_goto(tc->rp, tc->thr, tc->e[i].number)) {
		tc_fail(tc, "goto %" PRIu64 " failed", tc->e[i].number);
		return;
	}
	for (int k = 0; k < MAX_STOPS; k++) {
		struct replay_result res;
		enum replay_stop stop;
		int64_t to;
		int err = replay_continue(tc->rp, tc->thr, dir, bp->a, bp->n,
					  &res);

		scan(tc, i, dir, bp, &to, &stop);
		tc_check_move(tc, what, err, &res, tc->e[i].number,
			      tc->e[to].number, stop);
		if (err || res.number != tc->e[to].number ||
		    stop != REPLAY_STOP_BREAK)
			break;
		i = to;
	}
}

/* A caller that stops a continue the @at-th time it is asked. */
struct stopper {
	int calls, at;
};

static bool stop_at(void *arg)
{
	struct stopper *s = arg;

	return ++s->calls == s->at;
}

/* A continue from entry index @i in direction @dir, stopped the @at-th
 * time it asks: it ends as one not stopped would, or it stops short of
 * that, between @i and the scan's stop (so past no breakpoint), and a
 * continue from there ends at the scan's stop.  True if it stopped
 * short, away from @i. */
static bool check_stopped(struct tcase *tc, int64_t i, int dir,
			  const struct bpset *bp, int at)
{
	struct stopper s = { 0, at };
	struct replay_result res, again;
	enum replay_stop stop;
	uint64_t from = tc->e[i].number, want, n;
	int64_t to;
	char what[112];
	int err;

	snprintf(what, sizeof(what), "continue %s to %s, stopped on ask %d",
		 dir < 0 ? "backward" : "forward", bp->what, at);
	if (replay_goto(tc->rp, tc->thr, from)) {
		tc_fail(tc, "goto %" PRIu64 " failed", from);
		return false;
	}
	scan(tc, i, dir, bp, &to, &stop);
	want = tc->e[to].number;
	err = replay_continue_until(tc->rp, tc->thr, dir, bp->a, bp->n,
				    stop_at, &s, &res);
	if (err || res.stop != REPLAY_STOP_INTERRUPT) {
		tc_check_move(tc, what, err, &res, from, want, stop);
		return false;
	}
	n = res.number;
	if (s.calls != at || (dir < 0 ? n <= want || n > from :
					n < from || n >= want) ||
	    replay_position(tc->rp, tc->thr) != n || n < 1 ||
	    tc->e[n - 1].kind != HIST_ENTRY_INSN ||
	    res.pc != tc->e[n - 1].ip) {
		tc_fail(tc, "%s from %" PRIu64 ": at %" PRIu64 " after %d "
			"asks, not an instruction between there and %" PRIu64,
			what, from, n, s.calls, want);
		return false;
	}
	err = replay_continue(tc->rp, tc->thr, dir, bp->a, bp->n, &again);
	snprintf(what, sizeof(what), "continue %s to %s after one stopped",
		 dir < 0 ? "backward" : "forward", bp->what);
	tc_check_move(tc, what, err, &again, n, want, stop);
	return n != from;
}

/* The address of the instruction entry nearest index @i. */
static uint64_t ip_near(const struct tcase *tc, int64_t i)
{
	int64_t k = tc_insn_from(tc, i, 1);

	return tc->e[k >= 0 ? k : tc_insn_from(tc, i, -1)].ip;
}

/* The breakpoint sets for thread @tc, into @v (room for 8); returns how
 * many. */
static size_t bpsets(struct tcase *tc, struct hist_recording *rec,
		     struct bpset *v)
{
	struct hist_symtab *st = hist_recording_symtab(rec);
	int64_t n = (int64_t) tc->n;
	struct hist_sym sym;
	uint64_t main_ip;
	size_t k = 0;

	if (!hist_sym_find(st, "main", &main_ip))
		v[k++] = (struct bpset) { "main", { main_ip }, 1 };
	if (!hist_sym_lookup(st, ip_near(tc, n / 2), &sym))
		v[k++] = (struct bpset) { "a function's entry",
					  { sym.start }, 1 };
	v[k++] = (struct bpset) { "two addresses",
				  { ip_near(tc, n / 3), ip_near(tc, 2 * n / 3) },
				  2 };
	v[k++] = (struct bpset) { "the first and last instructions",
				  { ip_near(tc, 0), ip_near(tc, n - 1) }, 2 };
	v[k++] = (struct bpset) { "addresses never executed",
				  { 0x10, 0xffffffffffff0000ull }, 2 };
	v[k++] = (struct bpset) { "no breakpoint", { 0 }, 0 };
	return k;
}

void check_continue(struct tcase *tc, struct hist_recording *rec)
{
	struct bpset sets[8];
	size_t nsets = bpsets(tc, rec, sets);
	int64_t first = tc_insn_from(tc, 0, 1);
	int64_t last = tc_insn_from(tc, (int64_t) tc->n - 1, -1);
	int64_t mid = tc_insn_from(tc, (int64_t) tc->n / 2, 1);

	struct history *h = NULL;
	size_t moved = 0;

	for (size_t s = 0; s < nsets; s++) {
		sweep(tc, last, -1, &sets[s]);
		sweep(tc, first, 1, &sets[s]);
		if (mid >= 0) {
			sweep(tc, mid, -1, &sets[s]);
			sweep(tc, mid, 1, &sets[s]);
		}
		if (!sets[s].n)
			continue;	/* nothing to search: never asks */
		for (int at = 1; at <= 5; at += at == 1 ? 1 : 3) {
			moved += check_stopped(tc, last, -1, &sets[s], at);
			moved += check_stopped(tc, first, 1, &sets[s], at);
		}
	}
	/* Addresses never executed are searched for through every segment:
	 * with two or more, a continue stopped on its second ask has moved
	 * (a segment back from the last entry, or to the first one's end). */
	if (!hist_recording_history(rec, tc->thr, &h) && h &&
	    hist_nsegments(h) >= 2 && !moved)
		tc_fail(tc, "no stopped continue moved, in %zu segments",
			hist_nsegments(h));
	replay_goto_end(tc->rp, tc->thr);
}
