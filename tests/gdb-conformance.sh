#!/bin/sh
# What GDB's own testsuite (gdb.btrace, run through ptrr serve by
# tests/gdbsuite/run.sh) found gdbserver does and ptrr did not (issue
# 22), each checked here with gdb on a live session:
#
# empty: gdb's record pt on a thread that has not run since has an
# empty trace ("Recorded 0 instructions", "No trace."), not an error;
# gdb shows the buffer size in effect: the size it asked for rounded up
# as perf rounds its ring buffer (1 byte: 4kB, gdbserver's answer in
# gdb's buffer-size.exp).
# window: gdb's record pt sees what a trace buffer of that size holds,
# the end of the trace: with 8kB, fewer instructions than with
# "unlimited" (2GB, as large as gdb takes), but the same last ones (it
# saw the whole trace whatever it asked for).
# new: gdb reads "new" trace at every command once it has some; with
# nothing new it must get an empty trace and keep its history and its
# place in it: a second `record instruction-history` goes on from where
# the first ended ("At the end of the branch trace record.") instead of
# showing the same instructions again.
#
# reconnect: `ptrr serve --listen` keeps the program when gdb
# disconnects and waits for the next gdb, which finds it where the first
# left it, with gdb's record pt still on (as gdbserver without --once);
# with --once the server ends with the first gdb (started as gdbserver
# is, `ptrr gdbserver --once localhost:PORT PROG`).
# other-child: ptrr serve started by a shell that left a child behind
# (`sleep 100 & exec ptrr serve`): gdb's kill must end the program and
# the server at once, though ptrr has a child that is not the program
# (ptrr waited for all its children: the kill hung).
# gcore: gdb's generate-core-file while gdb's record pt replays (gdb's
# gcore.exp): with the multiprocess extensions gdb knows the program's
# pid and reads its /proc/PID/smaps through the server (it hung: with
# gdb's made-up pid it could not, and called sbrk in the program while
# replaying); the core it writes shows where the program is.
# signal: gdb's `signal SIGURG` delivers SIGURG, which a program without
# a handler ignores (GDB's gdb.reverse/sigall-reverse.exp: ptrr sent
# SIGSTKFLT, host signal 16, gdb's number for SIGURG, and the program
# died of it).
# exit: `monitor exit` ends the server (gdbserver's command; it was an
# unknown command) and the program with it.
#
# And what gdb.reverse found (tests/gdbsuite/run.sh --reverse):
# exit-step: gdb single-steps the program out of its life (stepi over
# exit_group, as gdb's software watchpoints in watch-reverse.exp do):
# the step after the system call (the thread at its exit stop) must end
# with "exited normally" (it stopped as an interrupt, without registers,
# "PC register is not available"; with --record-from-start the thread
# got a second trace and "the history stops here: ... the trace shrank").
# tail-entry: gdb stopped live at the first instruction of a function
# that leaves by a tail call (a jmp), then went back there: its frame
# must have its caller (gdb.reverse/singlejmp-reverse.exp: gdb's
# `next` stops at the callee's entry, and ptrr took the entry where
# tracing resumed after that stop for one it had not seen: no CFA, no
# caller, "Backtrace stopped", and reverse-next stepped into the
# function instead of over it).
. "${top_srcdir:-..}/tests/lib.sh"
gdb_work_dir gdb-conformance

# ---- empty: record pt before the thread runs ----
session empty -- "$progs/recursion" <<'EOF2'
set record btrace pt buffer-size 1
record pt
info record
record instruction-history
record function-call-history
print 0
EOF2
in_order empty '^Buffer size: 4kB\.$' \
	'^Recorded 0 instructions in 0 functions \(0 gaps\) for thread 1 ' \
	'^No trace\.$' '^No trace\.$'
lacks empty 'Failed to read branch trace'

# ---- window: the end of a trace longer than the buffer ----
# window_session NAME SIZE: fnptr's 10,000 indirect calls (tens of KiB
# of trace) with gdb's record pt on and a buffer of SIZE.
window_session() {
	session "$1" -- "$progs/fnptr" x <<EOF2
break main
continue
set record btrace pt buffer-size $2
record pt
break 18
continue
info record
record instruction-history
EOF2
	sed -n 's/^Recorded \([0-9]*\) instructions in .*/\1/p' \
		"$work/$1.out"
}
small=$(window_session window-small 8192)
whole=$(window_session window-whole unlimited)
has window-small '^Buffer size: 8kB\.$'
has window-whole '^Buffer size: 2GB\.$'
[ -n "$small" ] && [ -n "$whole" ] && [ "$small" -gt 0 ] &&
	[ "$small" -lt "$whole" ] ||
	fail "window: 8kB recorded '$small' instructions, unlimited '$whole'"
tail -n 10 "$work/window-small.out" | sed 's/^[0-9]*//' >"$work/small.end"
tail -n 10 "$work/window-whole.out" | sed 's/^[0-9]*//' >"$work/whole.end"
grep -q '<main+' "$work/small.end" && cmp -s "$work/small.end" "$work/whole.end" ||
	fail "window: the last instructions differ: $(diff "$work/small.end" "$work/whole.end")"

# ---- new: nothing new since the last read ----
session new -- "$progs/recursion" <<'EOF2'
record pt
break fact
continue
record instruction-history /f
record instruction-history /f
record instruction-history /f -
EOF2
in_order new '^Breakpoint 1, fact ' 'call .*<fact>$' \
	'^At the end of the branch trace record\.$'
count new '^At the end of the branch trace record\.$' 1

# connect NAME GDB-COMMAND...: gdb -batch connected to 127.0.0.1:$port,
# then the commands; the output in $work/NAME.out.
connect() {
	name=$1
	shift
	n=$#
	for c in "$@"; do
		set -- "$@" -ex "$c"
	done
	shift "$n"
	timeout 60 "$GDB" -nx -batch -ex 'set remotetimeout 60' \
		-ex "target remote 127.0.0.1:$port" "$@" \
		>"$work/$name.out" 2>&1
}

# gone PID: true once process PID has ended (within 10 seconds).
gone() {
	for _ in $(seq 100); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	return 1
}

# ---- reconnect: the second gdb finds the program where the first left it
ptrr_listening reconnect serve --listen 127.0.0.1:0 \
	--backend=${PTRR_TEST_BACKEND:-soft} -- "$progs/recursion"
connect first 'break fact' continue 'record pt' 'stepi 3' 'info record' \
	'p/x $pc' disconnect
in_order first '^Breakpoint 1, fact ' '^Recorded 3 instructions in ' \
	'^\$1 = 0x'
pc=$(sed -n 's/^\$1 = \(0x[0-9a-f]*\)$/\1/p' "$work/first.out")
# (The shell command's verdict goes to a file, not to gdb's output:
# there it came before lines gdb had printed first, as gdb's stdout to a
# file is fully buffered, unbuffered only with PYTHONUNBUFFERED in the
# environment (gdb's Python sets it so) — set in our shells, not under
# CI's env -i. It polls, 10 seconds at most, while gdb is connected.)
rm -f "$work/second.gone"
connect second 'info record' 'p/x $pc' 'monitor exit' \
	"shell i=0; while kill -0 $server 2>/dev/null && [ \$i -lt 100 ]; do sleep 0.1; i=\$((i + 1)); done; kill -0 $server 2>/dev/null || echo gone >$work/second.gone"
in_order second '^Recorded 3 instructions in ' "^\\\$1 = $pc\$"
[ -s "$work/second.gone" ] ||
	fail "exit: the server was still there 10 s after monitor exit, gdb connected: $(tail -n 3 "$work/second.out")"
lacks second 'unknown command|Remote communication error'
gone "$server" || { fail "exit: monitor exit did not end the server"
	kill "$server"; }
wait "$server" || fail "exit: ptrr serve ended with $?: $(cat "$work/reconnect.serve")"
grep -c '^Listening on port' "$work/reconnect.serve" | grep -qx 2 ||
	fail "reconnect: not listening twice: $(cat "$work/reconnect.serve")"

# ---- other-child: a child of ptrr's that is not the program
rm -f "$work/sleep.pid"
timeout 30 "$GDB" -nx -batch -ex 'set remotetimeout 20' \
	-ex "target remote | sh -c 'sleep 100 & echo \$! >\"$work/sleep.pid\"; \
	     exec \"$ptrr\" serve --stdio --backend=${PTRR_TEST_BACKEND:-soft} -- \"$progs/recursion\"'" \
	-ex 'break fact' -ex continue -ex kill -ex 'p 1' \
	>"$work/other-child.out" 2>&1 ||
	fail "other-child: gdb failed (status $?): $(tail -n 3 "$work/other-child.out")"
in_order other-child '^Breakpoint 1, fact ' '^\[Inferior 1 \(.*\) killed\]$' \
	'^\$1 = 1$'
[ -s "$work/sleep.pid" ] && kill "$(cat "$work/sleep.pid")" 2>/dev/null ||
	fail "other-child: the shell's child was not there"

# ---- gcore: a core file of a live session, written while replaying
PTRR_GDB=$GDB timeout 60 "$ptrr" gdb --batch -ex 'break fact' -ex continue \
	-ex 'info inferiors' -ex 'record pt' -ex next -ex 'record goto begin' \
	-ex "generate-core-file $work/core" -ex 'p 1' \
	-- "$progs/recursion" >"$work/gcore.out" 2>&1 ||
	fail "gcore: ptrr gdb failed (status $?): $(tail -n 3 "$work/gcore.out")"
in_order gcore '^Breakpoint 1, fact ' '^\* 1 +process [0-9]+ ' \
	"^Saved corefile $work/core\$" '^\$1 = 1$'
"$GDB" -nx -batch "$progs/recursion" "$work/core" -ex 'p n' \
	>"$work/core.out" 2>&1
has core '^\$1 = 5$'

# ---- signal: SIGURG ignored, not SIGSTKFLT fatal
session signal -- "$progs/recursion" <<'EOF2'
break fact
continue
delete
signal SIGURG
print 0
EOF2
in_order signal '^Breakpoint 1, fact ' \
	'^\[Inferior 1 \(.*\) exited (normally|with code [0-9]+)\]$'
lacks signal 'terminated with signal'

# ---- exit-step: stepi out of the program, traced or not
for mode in plain traced; do
	opt=
	[ $mode = traced ] && opt=--record-from-start
	session exit-$mode $opt -- "$progs/recursion" <<'EOF2'
break _exit
continue
stepi 100
print 0
EOF2
	in_order exit-$mode '^Breakpoint 1[.0-9]*, .*_exit ' \
		'^\[Inferior 1 \(.*\) exited normally\]$' '^\$1 = 0$'
	lacks exit-$mode 'not available|history stops here'
done

# ---- tail-entry: the caller of a function entered where gdb stopped
session tail-entry --record-from-start -- "$progs/tailcall" <<'EOF2'
break *middle
continue
break *leaf
continue
reverse-continue
bt
EOF2
in_order tail-entry '^Breakpoint 1, .*middle ' '^Breakpoint 2, .*leaf ' \
	'^Breakpoint 1, .*middle ' '^#0 +(0x[0-9a-f]+ in )?middle ' \
	'^#1 +0x[0-9a-f]+ in main '
lacks tail-entry 'Backtrace stopped'

# ---- --once: the server ends with its first gdb; started by gdbserver's
# command line (ptrr gdbserver), as GDB's testsuite starts it
expect_exit 1 '^ptrr gdbserver: missing PROG' "$ptrr" gdbserver :0
ptrr_listening once gdbserver --once --backend=${PTRR_TEST_BACKEND:-soft} \
	localhost:0 "$progs/recursion"
connect once 'break fact' continue disconnect
has once '^Breakpoint 1, fact '
gone "$server" || { fail "once: ptrr serve --once did not end"
	kill "$server"; }

finish
