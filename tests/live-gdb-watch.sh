#!/bin/sh
# Real gdb (batch) against `ptrr serve --stdio -- PROG`: watchpoints,
# hardware breakpoints, the faulting breakpoint, passed signals.
# - watch counter in tests/progs/watch: Old value = N, New value = N+1
#   in bump(), each continue;
# - watch shared, set before the thread that writes it exists, stops in
#   that thread (Thread 2) at writer's line;
# - hbreak writer: hit in thread 2;
# - rwatch and awatch need the debug registers (x86 has no read-only
#   watchpoint: ptrr refuses Z3 and gdb then watches accesses, showing
#   the reads): where they work, rwatch counter stops at bump's read with
#   Value = 0, then Value = 1, and awatch sink at main's store (Old value
#   = 0, New value = 10); where they do not, both are refused;
# - the same checks on a machine whose debug registers do not work, on
#   any machine: tests/unit/libfaultio.so (LD_PRELOAD, PTRR_FAULT_DR)
#   makes ptrr's ptrace pokes into them do nothing (deaf, as under some
#   hypervisors) or fail (eio); watch then works by single-stepping,
#   rwatch and awatch are refused; awatch too with PTRR_LIVE_WATCH=soft;
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
# PROG ARGS` with -ex CMD each; the output in $work/NAME.out.  $serve_env
# (env VAR=VALUE...) comes before ptrr serve.
live_gdb() {
	name=$1 prog=$2
	shift 2
	for c in "$@"; do
		set -- "$@" -ex "$c"
		shift
	done
	timeout 120 "$GDB" -q -nx -batch -ex 'set remotetimeout 60' \
		-ex "target remote | $serve_env $ptrr serve --stdio $backend -- $prog" "$@" \
		${prog%% *} >"$work/$name.out" 2>&1 || [ -n "$refused" ] ||
		fail "$name: gdb failed: $(tail -n 3 "$work/$name.out")"
}
refused=
serve_env=
# The live backend: the software one, or $PTRR_TEST_BACKEND
# (tests/qemu-live-gdb-watch.sh).
backend=${PTRR_TEST_BACKEND:+--backend=$PTRR_TEST_BACKEND}

# expect NAME REGEX: the output of NAME has a line matching REGEX (if
# not, the output goes to the log: a failure only seen under load can
# be read there).
expect() {
	grep -Eq -- "$2" "$work/$1.out" && return
	fail "$1: no line matching '$2' in $work/$1.out:"
	tail -n 30 "$work/$1.out" | sed 's/^/  | /'
}

# line_of FILE TEXT: the number of the line of FILE holding TEXT.
line_of() {
	grep -nF -- "$2" "$1" | head -n 1 | cut -d: -f1
}

# watch_checks SUFFIX: watch (one thread, and a thread not yet made)
# and rwatch/awatch, the outputs in NAME-SUFFIX.out; $hw says what the
# debug registers do: no (they do not work), or unknown (this machine's:
# either, but rwatch and awatch alike).
watch_checks() {
	sfx=$1
	refused=
	live_gdb watch-$sfx "$w" 'break main' continue 'watch counter' \
		continue continue continue 'p counter'
	expect watch-$sfx '^Hardware watchpoint 2: counter'
	expect watch-$sfx '^Old value = 0$'
	expect watch-$sfx '^New value = 1$'
	expect watch-$sfx '^Old value = 2$'
	expect watch-$sfx '^New value = 3$'
	expect watch-$sfx '^\$1 = 3$'
	# x86 traps after the store: gdb shows bump's line or the one after.
	expect watch-$sfx "(bump \(\) at .*watch.c:($written|$((written + 1)))|^($written|$((written + 1)))[[:space:]])"

	live_gdb thread-$sfx "$w" 'break main' continue 'watch shared' \
		continue 'p shared' continue
	expect thread-$sfx '^New value = 42$'
	expect thread-$sfx 'exited normally'
	# QEMU's user-mode stub steps one thread while the others run: the
	# write is seen, but after the stepped thread's instruction.
	if [ "$PTRR_TEST_BACKEND" != qemu ]; then
		expect thread-$sfx '^Thread 2 .*hit Hardware watchpoint 2: shared'
		expect thread-$sfx "writer \(.*\) at .*watch.c:($shared_line|$((shared_line + 1)))"
	fi

	# gdb ends with an error where a command fails: refused= allows it.
	refused=yes
	live_gdb rwatch-$sfx "$w" 'break main' continue 'rwatch counter' \
		continue continue
	live_gdb awatch-$sfx "$w" 'break main' continue 'awatch sink' \
		continue continue
	refused=
	if grep -q 'Could not insert' "$work/rwatch-$sfx.out"; then
		expect awatch-$sfx 'Could not insert hardware (watchpoint|breakpoints)'
		return
	fi
	[ "$hw" != no ] ||
		fail "rwatch-$sfx: inserted without working debug registers"
	expect rwatch-$sfx '^Hardware read watchpoint 2: counter'
	# The reads of counter = counter + 1, never its writes.
	values=$(grep -E '^(Value|Old value|New value) = ' \
		"$work/rwatch-$sfx.out" | tr '\n' ,)
	[ "$values" = "Value = 0,Value = 1," ] ||
		fail "rwatch-$sfx: '$values', not 'Value = 0,Value = 1,'"
	[ "$(grep -cE "bump \(\) at .*watch.c:$written\$" \
		"$work/rwatch-$sfx.out")" -eq 2 ] ||
		fail "rwatch-$sfx: not stopped twice at bump's line $written"
	expect awatch-$sfx '^Hardware access \(read/write\) watchpoint 2: sink'
	values=$(grep -E '^(Value|Old value|New value) = ' \
		"$work/awatch-$sfx.out" | tr '\n' ,)
	[ "$values" = "Old value = 0,New value = 10," ] ||
		fail "awatch-$sfx: '$values', not 'Old value = 0,New value = 10,'"
	expect awatch-$sfx "main \(.*\) at .*watch.c:($read_line|$((read_line + 1)))"
	expect awatch-$sfx 'exited normally'
}

w=$progs/watch
written=$(line_of "$src/watch.c" "counter written here")
shared_line=$(line_of "$src/watch.c" "shared written here")
read_line=$(line_of "$src/watch.c" "counter read here")

# This machine, whatever its debug registers do.  (QEMU's stub has no
# watchpoints: writes are watched by single-stepping, as without debug
# registers.)
hw=unknown
[ "$PTRR_TEST_BACKEND" = qemu ] && hw=no
watch_checks here
# A machine where they do not work: the pokes dropped, or refused (the
# ptrace session's debug registers).
nodr="LD_PRELOAD=$top_builddir/tests/unit/libfaultio.so PTRR_FAULT_CMD=serve"
nodr="$nodr ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
hw=no
for mode in deaf eio; do
	[ -z "$PTRR_TEST_BACKEND" ] || break
	serve_env="env $nodr PTRR_FAULT_DR=$mode"
	watch_checks $mode
done
serve_env=

live_gdb hbreak "$w" 'hbreak writer' continue 'info breakpoints' continue
expect hbreak '^Hardware assisted breakpoint 1 at'
expect hbreak '^Thread 2 .*hit Breakpoint 1, writer'
expect hbreak 'exited normally'

refused=yes
PTRR_LIVE_WATCH=soft
export PTRR_LIVE_WATCH
live_gdb awatch-soft "$w" 'break main' continue 'awatch sink' continue
unset PTRR_LIVE_WATCH
expect awatch-soft 'Could not insert hardware (watchpoint|breakpoints)'
refused=

fault=$(line_of "$src/watch.c" "faults here")
live_gdb fault "$w 1" 'break fault' continue continue 'p/x $pc' continue
expect fault "^Breakpoint 1, fault .*watch.c:$fault"
expect fault '^Program received signal SIGSEGV'
expect fault 'terminated with signal SIGSEGV'

# Under QEMU the guest's ignored SIGHUP never reaches QEMU (the host
# signal is ignored too), and SIGSTOP stops QEMU itself: its stub sees
# neither, nor the SIGCONT; the program stops for SIGUSR2 only.
if [ "$PTRR_TEST_BACKEND" = qemu ]; then
	live_gdb signals "$progs/signals" \
		'handle SIGUSR1 nostop noprint pass' continue continue
else
	live_gdb signals "$progs/signals" \
		'handle SIGUSR1 nostop noprint pass' \
		continue continue continue continue continue
fi
expect signals '^Program received signal SIGUSR2'
if [ "$PTRR_TEST_BACKEND" != qemu ]; then
	expect signals '^Program received signal SIGHUP'
	expect signals '^Program received signal SIGSTOP'
	expect signals '^Program received signal SIGCONT'
fi
expect signals 'exited normally'
grep -q 'signal SIGUSR1' "$work/signals.out" &&
	fail "signals: gdb stopped for SIGUSR1, passed with nostop"
grep -q 'SIGBUS\|SIGSYS' "$work/signals.out" &&
	fail "signals: gdb saw a signal by its Linux number"
finish
