#!/bin/sh
# A live session (plugin/live) on the test programs: breakpoints,
# single steps, memory and registers, signals, a crash, threads and an
# interrupt, checked by tests/unit/test-live against the ELF symbols,
# the instruction decoder and the programs' exit codes.
set -u
. "$top_srcdir/tests/lib.sh"
work_dir live

"$top_builddir/tests/unit/test-live" "$top_builddir/tests/progs" \
	>"$work/test-live.out" 2>&1 || {
	cat "$work/test-live.out"
	fail "test-live"
}
finish
