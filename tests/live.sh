#!/bin/sh
# A live session (plugin/live) on the test programs: breakpoints,
# single steps, memory and registers, signals, a crash, threads, an
# interrupt, and tracing (the history at each stop against the ground
# truth `ptrr record --ground-truth` single-stepped from the same start),
# checked by tests/unit/test-live against the ELF symbols, the
# instruction decoder, the ground truth and the programs' exit codes.
set -u
. "$top_srcdir/tests/lib.sh"
work_dir live
progs="$top_builddir/tests/progs"

record loops --start=step --ground-truth="$work/loops.gt" -- \
	"$progs/loops" || { finish; exit; }
"$top_builddir/tests/unit/test-live" "$progs" "$work/loops.gt" \
	>"$work/test-live.out" 2>&1 || {
	cat "$work/test-live.out"
	fail "test-live"
}
finish
