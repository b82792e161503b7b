/* Checks the call depth of a recording's call segments against the
 * instructions: every return that goes back to the instruction after a
 * call still on a stack of the calls seen (a shadow stack, kept here
 * from the instructions alone) must land in a call segment at the level
 * of the segment that made that call.  A return to anywhere else (the
 * trace began below the call, a longjmp-style return deeper in the
 * stack, a handler's return into sigreturn) is counted, not checked; a
 * gap or a signal's return empties the shadow stack.
 *
 * usage: call-depth [-v] BUNDLE...
 * Prints per thread the returns checked and the ones at a wrong level
 * (the first few with their functions); exits 1 if any is wrong.
 * tests/replay.sh runs it on the test programs, bench/run-depth.sh on
 * real programs (docs/performance.md, "Call depth of real programs"). */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"

/* A call still on the shadow stack. */
struct pending {
	uint64_t ret;		/* its return address */
	int32_t level;		/* the level of the segment that made it */
	uint64_t number;	/* the call's entry */
};

struct depth {
	struct history *h;
	struct hist_symtab *st;
	struct pending *stack;
	size_t n, cap;
	uint32_t seg;		/* the segment of the current entry */
	struct hist_call call;	/* its contents */
	uint64_t checked, wrong, unmatched;
	bool verbose;
};

/* The name of the function at @ip, for messages. */
static const char *name_at(struct depth *d, uint64_t ip)
{
	struct hist_sym sym;

	if (d->st && !hist_sym_lookup(d->st, ip, &sym) && sym.name)
		return sym.name;
	return "??";
}

/* Moves d->seg on to the segment holding entry @number. */
static int segment_of(struct depth *d, uint64_t number)
{
	while (!d->seg || number > d->call.last) {
		if (hist_call_get(d->h, d->seg + 1, &d->call))
			return -1;
		d->seg++;
	}
	return 0;
}

static int push(struct depth *d, uint64_t ret, uint64_t number)
{
	if (d->n == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 1024;
		struct pending *p = realloc(d->stack, cap * sizeof(*p));

		if (!p)
			return -1;
		d->stack = p;
		d->cap = cap;
	}
	d->stack[d->n++] = (struct pending) { ret, d->call.level, number };
	return 0;
}

/* A return from entry @from to entry @to (d->call is @to's segment). */
static void check_return(struct depth *d, const struct hist_entry *from,
			 const struct hist_entry *to)
{
	const struct pending *p;

	if (!d->n || d->stack[d->n - 1].ret != to->ip) {
		d->unmatched++;
		return;
	}
	p = &d->stack[--d->n];
	d->checked++;
	if (d->call.level == p->level)
		return;
	if (d->wrong++ < 10 || d->verbose)
		printf("  return at %" PRIu64 " from %s into %s (entry %"
		       PRIu64 ") is at level %d, its call (entry %" PRIu64
		       ") at level %d\n", from->number,
		       name_at(d, from->ip), name_at(d, to->ip), to->number,
		       d->call.level, p->number, p->level);
}

/* Walks thread history @h with the shadow stack. */
static int walk(struct depth *d)
{
	struct hist_cursor *c;
	struct hist_entry last = { 0 };
	uint64_t size = hist_size(d->h);
	int err = hist_cursor_new(d->h, &c);

	if (err)
		return err;
	for (uint64_t i = 1; i <= size && !err; i++) {
		const struct hist_entry *e;

		err = i == 1 ? hist_cursor_seek(c, 1) : hist_cursor_next(c);
		if (err || (err = segment_of(d, i)))
			break;
		e = hist_cursor_entry(c);
		if (e->kind == HIST_ENTRY_GAP || (e->flags & HIST_F_RESUMED &&
		    last.kind == HIST_ENTRY_INSN &&
		    e->ip != last.ip + last.size)) {
			d->n = 0;
		} else if (last.kind == HIST_ENTRY_INSN &&
			   last.iclass == HIST_IC_RETURN) {
			check_return(d, &last, e);
		}
		if (e->kind == HIST_ENTRY_INSN && e->iclass == HIST_IC_CALL &&
		    push(d, e->ip + e->size, e->number))
			err = -1;
		last = *e;
	}
	hist_cursor_free(c);
	return err;
}

static int check_bundle(const char *dir, bool verbose)
{
	struct hist_recording *rec;
	int bad = 0;

	int err = hist_recording_open(dir, &rec);

	if (err) {
		fprintf(stderr, "call-depth: %s: %s\n", dir, ptrr_errmsg(err));
		return 2;
	}
	for (size_t i = 0; i < hist_recording_bundle(rec)->nthreads; i++) {
		struct depth d = { .st = hist_recording_symtab(rec),
				   .verbose = verbose };

		if ((err = hist_recording_history(rec, i, &d.h)) ||
		    (err = walk(&d))) {
			fprintf(stderr, "call-depth: %s: %s\n", dir,
				ptrr_errmsg(err));
			bad = 2;
		}
		printf("%s thread %d: %" PRIu64 " returns checked, %" PRIu64
		       " at a wrong level, %" PRIu64 " not to a call seen\n",
		       dir, hist_recording_bundle(rec)->threads[i].tid,
		       d.checked, d.wrong, d.unmatched);
		if (d.wrong && !bad)
			bad = 1;
		free(d.stack);
	}
	hist_recording_close(rec);
	return bad;
}

int main(int argc, char **argv)
{
	bool verbose = argc > 1 && !strcmp(argv[1], "-v");
	int bad = 0, r;

	if (argc < 2 + verbose) {
		fprintf(stderr, "usage: call-depth [-v] BUNDLE...\n");
		return 2;
	}
	for (int i = 1 + verbose; i < argc; i++)
		if ((r = check_bundle(argv[i], verbose)) > bad)
			bad = r;
	return bad;
}
