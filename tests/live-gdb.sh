#!/bin/sh
# Real gdb against a live session: the gdb server with the live target
# (ptrr serve --stdio on a pipe, with the software backend or
# $PTRR_TEST_BACKEND's: tests/qemu-live-gdb.sh) on loops and crash.  A breakpoint at
# step is hit with i = 0, then i = 1; stepi lands on the instruction
# gdb's own disassembler lists second; with the breakpoint deleted the
# program exits normally; tracing turned on by `monitor pt start`; crash
# stops with SIGSEGV in lookup, before delivery.
. "${top_srcdir:-..}/tests/lib.sh"
gdb_work_dir live-gdb
serve="$ptrr serve --stdio --backend=${PTRR_TEST_BACKEND:-soft} --"

# live_gdb NAME PROG CMD...: gdb -batch on a live session of PROG with
# -ex CMD each; the output in $work/NAME.out.
live_gdb() {
	name=$1 prog=$2
	shift 2
	for c in "$@"; do
		set -- "$@" -ex "$c"
		shift
	done
	timeout 120 "$GDB" -q -nx -batch -ex 'set remotetimeout 60' \
		-ex "target remote | $serve $prog" "$@" "$prog" \
		>"$work/$name.out" 2>&1 ||
		fail "$name: gdb failed: $(tail -n 3 "$work/$name.out")"
}

# expect NAME REGEX: the output of NAME has a line matching REGEX.
expect() {
	grep -Eq "$2" "$work/$1.out" ||
		fail "$1: no line matching '$2' in $work/$1.out"
}

live_gdb loops "$progs/loops" "break step" continue "p/x \$pc" stepi \
	"p/x \$pc" "x/2i step" continue "monitor pt start" continue \
	delete "monitor pt stop" continue
expect loops '^Breakpoint 1(\.1)?, step \(i=(i@entry=)?0\)'
expect loops '^Breakpoint 1(\.1)?, step \(i=(i@entry=)?1\)'
expect loops '^Breakpoint 1(\.1)?, step \(i=(i@entry=)?2\)'
expect loops 'tracing on'
expect loops 'exited normally'
second=$(sed -n 's/^=> \(0x[0-9a-f]*\) <step+[0-9]*>:.*/\1/p' \
	"$work/loops.out")
[ -n "$second" ] && grep -q "^\\\$2 = $second\$" "$work/loops.out" ||
	fail "loops: stepi did not land on the second instruction ($second)"

live_gdb crash "$progs/crash" continue "p/x \$pc" continue
expect crash 'Program received signal SIGSEGV'
expect crash '^(0x[0-9a-f]+ in )?lookup \('
expect crash 'terminated with signal SIGSEGV'
finish
