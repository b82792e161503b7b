/* replay_continue against a linear scan of the entries: runs to every
 * execution of a set of breakpoint addresses in both directions, from
 * both ends and from the middle, for several sets (a function's entry,
 * two addresses, addresses at the ends, one never executed, none). */
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

	for (size_t s = 0; s < nsets; s++) {
		sweep(tc, last, -1, &sets[s]);
		sweep(tc, first, 1, &sets[s]);
		if (mid >= 0) {
			sweep(tc, mid, -1, &sets[s]);
			sweep(tc, mid, 1, &sets[s]);
		}
	}
	replay_goto_end(tc->rp, tc->thr);
}
