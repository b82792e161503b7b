#!/bin/sh
# Real gdb (batch) against `ptrr serve --stdio -- PROG`: watchpoints,
# hardware breakpoints, the faulting breakpoint, passed signals.
# - watch counter in tests/progs/watch: Old value = N, New value = N+1
#   in bump(), each continue;
# - watch shared, set before the thread that writes it exists, stops in
#   that thread (Thread 2) at writer's line;
# - hbreak writer: hit in thread 2;
# - rwatch is refused (x86 has no read-only watchpoint); awatch is
#   refused without the debug registers (PTRR_LIVE_WATCH=soft), and
#   works with them where they fire;
# - break fault (its first instruction faults), continue: the SIGSEGV,
#   not a plain stop; continue: the process dies of it;
# - handle SIGUSR1 nostop noprint pass on tests/progs/signals: gdb never
#   stops for SIGUSR1 (QPassSignals), but stops for SIGUSR2 (shown as
#   SIGUSR2: gdb's signal numbers), SIGHUP, SIGSTOP, SIGCONT, and the
#   program exits 0.
. "${top_srcdir:-..}/tests/lib.sh"
gdb_work_dir live-gdb-watch
src="$top_srcdir/tests/progs"

# live_gdb NAME "PROG ARGS" CMD...: gdb -batch on `ptrr serve --stdio --
# PROG ARGS` with -ex CMD each; the output in $work/NAME.out.
live_gdb() {
	name=$1 prog=$2
	shift 2
	for c in "$@"; do
		set -- "$@" -ex "$c"
		shift
	done
	timeout 120 "$GDB" -q -nx -batch -ex 'set remotetimeout 60' \
		-ex "target remote | $ptrr serve --stdio -- $prog" "$@" \
		${prog%% *} >"$work/$name.out" 2>&1 || [ -n "$refused" ] ||
		fail "$name: gdb failed: $(tail -n 3 "$work/$name.out")"
}
refused=

# expect NAME REGEX: the output of NAME has a line matching REGEX.
expect() {
	grep -Eq -- "$2" "$work/$1.out" ||
		fail "$1: no line matching '$2' in $work/$1.out"
}

# line_of FILE TEXT: the number of the line of FILE holding TEXT.
line_of() {
	grep -nF -- "$2" "$1" | head -n 1 | cut -d: -f1
}

w=$progs/watch
written=$(line_of "$src/watch.c" "counter written here")
shared_line=$(line_of "$src/watch.c" "shared written here")

live_gdb watch "$w" 'break main' continue 'watch counter' continue \
	continue continue 'p counter'
expect watch '^Hardware watchpoint 2: counter'
expect watch '^Old value = 0$'
expect watch '^New value = 1$'
expect watch '^Old value = 2$'
expect watch '^New value = 3$'
expect watch '^\$1 = 3$'
# x86 traps after the store: gdb shows bump's line or the one after it.
expect watch "(bump \(\) at .*watch.c:($written|$((written + 1)))|^($written|$((written + 1)))[[:space:]])"

live_gdb thread "$w" 'break main' continue 'watch shared' continue \
	'p shared' continue
expect thread '^Thread 2 .*hit Hardware watchpoint 2: shared'
expect thread '^New value = 42$'
expect thread "writer \(.*\) at .*watch.c:($shared_line|$((shared_line + 1)))"
expect thread 'exited normally'

live_gdb hbreak "$w" 'hbreak writer' continue 'info breakpoints' continue
expect hbreak '^Hardware assisted breakpoint 1 at'
expect hbreak '^Thread 2 .*hit Breakpoint 1, writer'
expect hbreak 'exited normally'

# gdb ends with an error where a command fails: refused= allows it.
refused=yes
live_gdb rwatch "$w" 'break main' continue 'rwatch counter' continue
expect rwatch 'Could not insert hardware (watchpoint|breakpoints)'
PTRR_LIVE_WATCH=soft
export PTRR_LIVE_WATCH
live_gdb awatch-soft "$w" 'break main' continue 'awatch sink' continue
unset PTRR_LIVE_WATCH
expect awatch-soft 'Could not insert hardware (watchpoint|breakpoints)'
live_gdb awatch "$w" 'break main' continue 'awatch sink' continue continue
grep -q 'Could not insert' "$work/awatch.out" ||
	expect awatch '^Value = '
refused=

fault=$(line_of "$src/watch.c" "faults here")
live_gdb fault "$w 1" 'break fault' continue continue 'p/x $pc' continue
expect fault "^Breakpoint 1, fault .*watch.c:$fault"
expect fault '^Program received signal SIGSEGV'
expect fault 'terminated with signal SIGSEGV'

live_gdb signals "$progs/signals" 'handle SIGUSR1 nostop noprint pass' \
	continue continue continue continue continue
expect signals '^Program received signal SIGUSR2'
expect signals '^Program received signal SIGHUP'
expect signals '^Program received signal SIGSTOP'
expect signals '^Program received signal SIGCONT'
expect signals 'exited normally'
grep -q 'signal SIGUSR1' "$work/signals.out" &&
	fail "signals: gdb stopped for SIGUSR1, passed with nostop"
grep -q 'SIGBUS\|SIGSYS' "$work/signals.out" &&
	fail "signals: gdb saw a signal by its Linux number"
finish
