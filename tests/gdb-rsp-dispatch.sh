#!/bin/sh
# ptrr serve's request dispatch on a real recording of tests/progs/crash,
# without gdb: tests/unit/test-rsp sends malformed packets (error or
# empty replies), refused writes, reads of the unwind range, moves to
# both ends of history (the crash's SIGSEGV on arriving, replaylog:begin
# and :end), a monitor command, gdb's file transfer (vFile: the program
# read, other files, writes and malformed requests refused), and 20000
# random packets to the replay target, all in one process (run under
# ASan by the sanitizer build).
set -u
. "$top_srcdir/tests/lib.sh"
work_dir gdb-rsp-dispatch

record crash -- "$top_builddir/tests/progs/crash" &&
	"$top_builddir/tests/unit/test-rsp" "$work/crash.ptrr" ||
	fail "test-rsp on a recording of crash"

finish
