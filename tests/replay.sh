#!/bin/sh
# The replay engine (replay/) on real recordings: stepping, continuing to
# breakpoints, registers and call stacks of every thread, checked by
# tests/unit/test-replay against the ground truth, a linear scan and a
# simulation of the stack.  Programs with loops, recursion, calls
# through pointers, tail calls, longjmp, threads, a crash, a crash in one
# of several threads, signal handlers, calls through the PLT (lazily
# bound), a jump table and C++ exceptions (unwinding; libstdc++ code
# without symbols); one with a short PSB period (many segments; a live
# session: a history extended and the replay refreshed), and copies of
# it with gaps (a corrupted byte).
set -u
. "$top_srcdir/tests/lib.sh"
work_dir replay
progs="$top_builddir/tests/progs"

bundles=
for prog in loops recursion fnptr tailcall longjmp threads crash segv \
	    signals plt jumptable exceptions; do
	record $prog --ground-truth="$work/$prog.gt" -- "$progs/$prog" ||
		continue
	bundles="$bundles $work/$prog.ptrr"
done

# corrupt NAME K: a copy of $work/short.ptrr as $work/NAME.ptrr whose
# K-th PSB (1-based) is followed by an invalid opcode: a gap there.
corrupt() {
	cp -r "$work/short.ptrr" "$work/$1.ptrr" || return
	trace=$(ls "$work/$1.ptrr"/threads/*.pt)
	offset=$(LC_ALL=C grep -obUaP "$psb" "$trace" | sed -n "$2p" |
		 cut -d: -f1)
	[ -n "$offset" ] || { fail "$1: no PSB $2"; return 1; }
	printf '\331' | dd of="$trace" bs=1 seek=$((offset + 16)) \
		conv=notrunc 2>/dev/null
	"$ptrr" insn-history --raw "$work/$1.ptrr" | grep -q '\[gap\]' ||
		{ fail "$1: no gap in the history"; return 1; }
	bundles="$bundles $work/$1.ptrr"
}

# A short PSB period (many segments); copies with a gap at the start
# (the history begins in the middle of the program) and in the middle.
psb='\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82'
if record short --psb-period=2K --ground-truth="$work/short.gt" -- \
		"$progs/recursion"; then
	bundles="$bundles $work/short.ptrr"
	npsb=$(LC_ALL=C grep -obUaP "$psb" "$work"/short.ptrr/threads/*.pt |
	       wc -l)
	corrupt gap-first 1
	corrupt gap-middle $(((npsb + 1) / 2))
fi

"$top_builddir/tests/unit/test-replay" $bundles >"$work/out" 2>&1 ||
	fail "test-replay: $(cat "$work/out")"

finish
