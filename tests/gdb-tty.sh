#!/bin/sh
# `ptrr replay`, and `ptrr gdb -- spin` interrupted with Ctrl-C (also
# traced, then back through the trace and forward into the live process
# again, to its end), on a real terminal, through expect
# (tests/gdb-tty.exp);
# the batch sessions are tests/gdb-replay.sh.
set -u
. "$top_srcdir/tests/lib.sh"
work_dir gdb-tty
command -v expect >/dev/null || { echo "SKIP: expect is not installed"; exit 77; }
[ -x "$GDB" ] || { echo "SKIP: gdb not found"; exit 77; }
HOME=$work PTRR_GDB=$GDB
export HOME PTRR_GDB
record crash --start=main -- "$top_builddir/tests/progs/crash" || true
TERM=xterm expect "$top_srcdir/tests/gdb-tty.exp" "$work/crash.ptrr" ||
	fail "ptrr replay on a terminal"
TERM=xterm expect "$top_srcdir/tests/gdb-tty.exp" live \
	"$top_builddir/tests/progs/spin" >"$work/live.out" 2>&1 || {
	cat "$work/live.out"
	fail "ptrr gdb -- spin on a terminal: Ctrl-C"
}
TERM=xterm expect "$top_srcdir/tests/gdb-tty.exp" live-reverse \
	"$top_builddir/tests/progs/spin" >"$work/live-reverse.out" 2>&1 || {
	cat "$work/live-reverse.out"
	fail "ptrr gdb -- spin on a terminal: traced, back and forth"
}
finish
