#!/bin/sh
# gdbserver's --multi and --attach (issue 22), with gdb in
# extended-remote mode.
#
# multi: `ptrr gdbserver --multi --record-from-start localhost:0`
# starts with no program, on the loopback; gdb's `set remote exec-file`
# and run start greet, which exits, then runs again with new arguments
# (reverse execution on that run goes back to its start, not into the
# first), kill, run again, detach (greet finishes on its own; the
# server's pid stays), then gdb disconnects: the server still listens, the next gdb runs loops,
# and monitor exit ends the server (and the program).
# attach: `ptrr gdbserver --attach localhost:0 PID` on spin started by
# this shell (not ptrr's child): its three threads, a breakpoint,
# reverse-continue back to the attach point (no further), detach: spin
# runs on untraced; gdb's quit after attaching detaches too.
# vattach: gdb's attach PID (vAttach) on a --multi server; kill ends spin;
# attaching to it again fails (no such process, said on the server's
# stderr), and the server goes on: a run after that works.
# Errors: a missing process, one traced by another tracer, a 32-bit
# program, the QEMU backend, usage.
. "${top_srcdir:-..}/tests/lib.sh"
gdb_work_dir gdb-multi

# xconnect NAME: gdb -batch in extended-remote mode on 127.0.0.1:$port,
# then the commands on standard input; the output in $work/NAME.out.
xconnect() {
	name=$1
	set --
	while IFS= read -r line; do
		set -- "$@" -ex "$line"
	done
	timeout 120 "$GDB" -nx -batch -ex 'set remotetimeout 60' \
		-ex 'set sysroot' \
		-ex "target extended-remote 127.0.0.1:$port" "$@" \
		>"$work/$name.out" 2>&1
}

# refused: true once nothing listens on $port (gdb cannot connect).
refused() {
	"$GDB" -nx -batch -ex 'set tcp auto-retry off' \
		-ex "target extended-remote 127.0.0.1:$port" \
		>"$work/refused.out" 2>&1
	grep -q 'Connection refused' "$work/refused.out"
}

# proc_state PID: the State letter of /proc/PID/status, or "gone".
proc_state() {
	sed -n 's/^State:[[:space:]]*\([A-Za-z]\).*/\1/p' \
		"/proc/$1/status" 2>/dev/null | grep . || echo gone
}

# tracer PID: the TracerPid of /proc/PID/status.
tracer() {
	sed -n 's/^TracerPid:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null
}

# ticks PID: the CPU time process PID has used (user and system).
ticks() {
	awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null
}

# ran_since PID TICKS: true once process PID has used more than TICKS.
ran_since() {
	[ "$(ticks "$1")" -gt "$2" ] 2>/dev/null
}

# runs_untraced NAME PID: process PID runs on (uses CPU), untraced.
runs_untraced() {
	t1=$(ticks "$2")
	wait_until 10 ran_since "$2" "${t1:-0}" ||
		fail "$1: process $2 does not run on (state $(proc_state "$2"))"
	[ "$(tracer "$2")" = 0 ] ||
		fail "$1: process $2 is still traced by $(tracer "$2")"
}

# three_threads PID: true once process PID has its three threads.
three_threads() {
	[ "$(ls "/proc/$1/task" 2>/dev/null | wc -l)" -ge 3 ]
}

# ---- multi: no program, then runs, kill, detach, a second gdb ----
ptrr_listening multi gdbserver --multi --record-from-start localhost:0
grep -q '^listening on 127\.0\.0\.1:' "$work/multi.serve" ||
	fail "multi: not on the loopback: $(cat "$work/multi.serve")"
rm -f "$work/done"
xconnect multi <<EOF
info threads
set remote exec-file $progs/greet
file $progs/greet
break greet
run
continue
run one
reverse-continue
continue
continue
run two
kill
run -o $work/done
detach
disconnect
EOF
in_order multi '^No threads\.$' '^Breakpoint 1, greet \(argc=' \
	'exited normally' '^Breakpoint 1, greet \(argc=argc@entry=2' \
	'^No more reverse-execution history\.$' \
	'^Breakpoint 1, greet \(argc=argc@entry=2' 'exited normally' \
	'^Breakpoint 1, greet \(argc=argc@entry=2' \
	'\) killed\]$' '^Breakpoint 1, greet \(argc=argc@entry=3' \
	'\) detached\]$'
# Reverse execution on each run: from the breakpoint of the second run
# back to its start (_start), never into the first run.
in_order multi '^Breakpoint 1, greet \(argc=argc@entry=2' \
	'^No more reverse-execution history\.$' '_start \(\)'
lacks multi 'not being run|Remote communication error|failed'
# The server is the same process after the detach (it forked itself
# away before, and whatever waited for its pid saw it end).
pid_gone $server &&
	fail "multi: the server's process ended at the detach"
wait_until 10 test -s "$work/done" ||
	fail "multi: detached greet did not finish: $(cat "$work/multi.serve")"
# Each run printed its line once (the reverse-continue and the continue
# after it went through the run's history, not the program again).
for line in 'greet: one' "greet: -o $work/done"; do
	grep -cx "$line" "$work/multi.prog" | grep -qx 1 ||
		fail "multi: '$line' not printed once: $(cat "$work/multi.prog")"
done

# The server listens again; the next gdb runs another program.
xconnect multi2 <<EOF
set remote exec-file $progs/loops
file $progs/loops
break step
run
reverse-continue
info threads
echo ==exit==\n
monitor exit
EOF
in_order multi2 '^Breakpoint 1[.0-9]*, step \(' \
	'^No more reverse-execution history\.$' '_start \(\)' '^==exit==$'
# After monitor exit the server is gone: what gdb -batch prints when it
# then kills the program on its way out (a reset connection, if its
# acknowledgement of the OK reached a closed socket) is what it prints
# with gdbserver too, and is not checked.
sed '/^==exit==$/q' "$work/multi2.out" >"$work/multi2-before.out"
lacks multi2-before 'Remote communication error|failed'
wait_until 10 refused ||
	fail "multi: monitor exit did not end the server: $(cat "$work/refused.out")"
grep -c '^Listening on port' "$work/multi.serve" | grep -qx 2 ||
	fail "multi: not listening twice: $(cat "$work/multi.serve")"

# ---- attach: ptrr gdbserver --attach, then detach ----
"$progs/spin" &
spin=$!
wait_until 10 three_threads $spin ||
	fail "attach: spin did not start its threads"
scope=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0)
if [ "$scope" -gt 0 ] && [ "$(id -u)" != 0 ]; then
	echo "yama's ptrace_scope is $scope: attaching skipped"
	kill -9 $spin
	finish
	exit
fi
ptrr_listening attach gdbserver --attach localhost:0 $spin
port_attach=$port
timeout 120 "$GDB" -nx -batch -ex 'set remotetimeout 60' \
	-ex 'set sysroot' -ex "target remote 127.0.0.1:$port" \
	-ex 'info threads' -ex 'break mix' -ex continue \
	-ex 'reverse-continue' -ex 'reverse-stepi' -ex 'info threads' \
	-ex detach >"$work/attach.out" 2>&1
in_order attach "^\\* 1 +Thread $spin\\.$spin " '^  3 +Thread ' \
	'hit Breakpoint 1, mix \(' '^No more reverse-execution history\.$' \
	'^No more reverse-execution history\.$' "^\\[Inferior 1 \\(process $spin\\) detached\\]\$"
lacks attach 'failed|Remote communication error'
runs_untraced attach $spin
wait_until 10 pid_gone $server ||
	fail "attach: the server is still there after the detach"

# gdb's end after attaching (its quit) detaches too.
ptrr_listening quit gdbserver --attach localhost:0 $spin
timeout 120 "$GDB" -nx -batch -ex 'set remotetimeout 60' \
	-ex 'set sysroot' -ex "target remote 127.0.0.1:$port" \
	-ex 'info threads' >"$work/quit.out" 2>&1
has quit "^\\* 1 +Thread $spin\\.$spin "
wait_until 10 pid_gone $server ||
	fail "quit: the server is still there after gdb ended"
runs_untraced quit $spin

# ---- vattach: attach in extended-remote mode, kill, bad pid ----
ptrr_listening vattach gdbserver --multi localhost:0
xconnect vattach <<EOF
attach $spin
info threads
break mix
continue
reverse-stepi
shell "$ptrr" serve --listen 127.0.0.1:0 --attach $spin 2>$work/traced.err; echo \$? >$work/traced.status
kill
attach $spin
file $progs/greet
set remote exec-file $progs/greet
run
monitor exit
EOF
in_order vattach "^\\* 1 +Thread $spin\\.$spin " '^  3 +Thread ' \
	'hit Breakpoint 1, mix \(' "^\\[Inferior 1 \\(process $spin\\) killed\\]\$" \
	"^Attaching to process $spin failed\$" 'exited normally'
wait_until 10 pid_gone $spin || {
	fail "vattach: spin is still there after kill ($(proc_state $spin))"
	kill -9 $spin
}
grep -q "cannot attach to process $spin: no such process" \
	"$work/vattach.serve" ||
	fail "vattach: no reason on the server's stderr: $(cat "$work/vattach.serve")"
grep -qx 2 "$work/traced.status" &&
	grep -q "cannot attach to process $spin: it is already traced by process [0-9]*: detach that debugger" \
	"$work/traced.err" ||
	fail "vattach: a traced process: $(cat "$work/traced.status" "$work/traced.err")"
wait_until 10 refused ||
	fail "vattach: monitor exit did not end the server"

# ---- Errors ----
# A 32-bit (i386) program that loops: ELF header, one program header,
# `jmp .`.
printf '\177\105\114\106\001\001\001\000\000\000\000\000\000\000\000\000\002\000\003\000\001\000\000\000\124\200\004\010\064\000\000\000\000\000\000\000\000\000\000\000\064\000\040\000\001\000\000\000\000\000\000\000\001\000\000\000\000\000\000\000\000\200\004\010\000\200\004\010\126\000\000\000\126\000\000\000\005\000\000\000\000\020\000\000\353\376' \
	>"$work/loop32"
chmod +x "$work/loop32"
"$work/loop32" 2>/dev/null &
loop32=$!
sleep 0.2
if [ "$(proc_state $loop32)" = R ]; then
	expect_exit 2 "^ptrr serve: cannot attach to process $loop32: it runs 32-bit \\(i386\\) code, not x86-64" \
		"$ptrr" serve --listen 127.0.0.1:0 --attach $loop32
	runs_untraced loop32 $loop32
else
	echo "this kernel runs no 32-bit program: not checked"
fi
kill -9 $loop32 2>/dev/null

expect_exit 2 "^ptrr serve: cannot attach to process $spin: no such process\$" \
	"$ptrr" gdbserver --attach localhost:0 $spin
if command -v qemu-x86_64 >/dev/null; then
	expect_exit 2 '^ptrr serve: cannot attach with the qemu backend, which traces only the programs it starts: use --backend=soft$' \
		"$ptrr" serve --backend=qemu --listen 127.0.0.1:0 --attach $$
fi
expect_exit 1 '^ptrr gdbserver: --attach wants \[HOST\]:PORT and one PID$' \
	"$ptrr" gdbserver --attach :0
expect_exit 1 '^ptrr serve: --attach wants a process id, not x$' \
	"$ptrr" serve --attach x
expect_exit 1 '^ptrr serve: --attach PID is the program' \
	"$ptrr" serve --attach 1 -- "$progs/greet"
expect_exit 1 'are for a live session, not a recording' \
	"$ptrr" serve --multi "$work/no.ptrr"
expect_exit 1 '^ptrr gdbserver: missing PROG' "$ptrr" gdbserver :0

finish
