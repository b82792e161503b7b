#!/bin/sh
# hist_extend(), the history growing stop after stop as in a live
# session, on real recordings: programs with loops and calls, threads,
# signal handlers (tracing off and on) and a crash (the history ends at
# the faulting instruction), with short PSB periods for many segments.
# tests/unit/test-extend compares each extended history with the one
# opened on the whole trace at once.
set -u
. "$top_srcdir/tests/lib.sh"
work_dir history-extend
progs="$top_builddir/tests/progs"

for prog in loops threads signals crash; do
	record $prog --psb-period=2K -- "$progs/$prog" || continue
	bundles="${bundles:-} $work/$prog.ptrr"
done
"$top_builddir/tests/unit/test-extend" $bundles || fail "test-extend"

finish
