#!/bin/sh
# Several processes under one `ptrr gdbserver --multi` (issue 22), as
# gdbserver --multi debugs them with gdb's multiprocess extensions: gdb
# runs greet (inferior 1), adds spin (inferior 2) and runs it while greet
# stays stopped at its breakpoint.  Each is traced from its start
# (--record-from-start): reverse-continue in each goes back to its own
# start (_start), and continue in spin's history to its breakpoint;
# info threads lists each process's threads under its own pid.  Killing
# spin leaves greet; a second spin (inferior 3) detached runs on
# untraced, the server (and greet) still there; greet then runs through
# its history and on to its end, printing its line once.  Then gdb's
# non-stop mode on a --multi server: run to a breakpoint, on to the end.
. "${top_srcdir:-..}/tests/lib.sh"
gdb_work_dir gdb-multiproc

# inferior_pid N: the process id of inferior N in `info inferiors`.
inferior_pid() {
	sed -n "s/^[* ] *$1 *process \\([0-9]*\\) .*/\\1/p" "$work/two.out" |
		head -n 1
}

ptrr_listening two gdbserver --multi --record-from-start localhost:0
timeout 200 "$GDB" -nx -batch -ex 'set remotetimeout 60' -ex 'set sysroot' \
	-ex "target extended-remote 127.0.0.1:$port" \
	-ex "set remote exec-file $progs/greet" -ex "file $progs/greet" \
	-ex 'break greet' -ex 'run one' \
	-ex "add-inferior -exec $progs/spin" -ex 'inferior 2' \
	-ex "set remote exec-file $progs/spin" -ex 'break mix' -ex 'run' \
	-ex 'info inferiors' -ex 'echo ==threads==\n' -ex 'info threads' \
	-ex 'echo ==reverse 2==\n' -ex 'reverse-continue' -ex 'continue' \
	-ex 'inferior 1' -ex 'echo ==reverse 1==\n' -ex 'reverse-continue' \
	-ex 'echo ==threads==\n' -ex 'info threads' \
	-ex 'kill inferiors 2' -ex 'echo ==killed 2==\n' -ex 'info threads' \
	-ex "add-inferior -exec $progs/spin" -ex 'inferior 3' \
	-ex "set remote exec-file $progs/spin" -ex 'run' \
	-ex 'info inferiors' -ex 'detach inferiors 3' \
	-ex 'echo ==detached 3==\n' -ex 'info threads' \
	-ex 'inferior 1' -ex 'continue' -ex 'continue' \
	-ex 'echo ==exit==\n' -ex 'monitor exit' \
	>"$work/two.out" 2>&1
in_order two '^Breakpoint 1, greet \(argc=argc@entry=2' \
	'^Thread 2\.[0-9]+ hit Breakpoint 2, mix \(' \
	'^==reverse 2==$' '^No more reverse-execution history\.$' \
	'^0x[0-9a-f]* in _start \(\)' \
	'^Thread 2\.[0-9]+ hit Breakpoint 2, mix \(' \
	'^==reverse 1==$' '^No more reverse-execution history\.$' \
	'^0x[0-9a-f]* in _start \(\)' \
	'^==killed 2==$' \
	'^\[Inferior 3 \(process [0-9]*\) detached\]$' '^==detached 3==$' \
	'^Thread 1\.1 hit Breakpoint 1, greet \(argc=argc@entry=2' \
	'^\[Inferior 1 \(process [0-9]*\) exited normally\]$' '^==exit==$'
sed '/^==exit==$/q' "$work/two.out" >"$work/two-before.out"
lacks two-before 'Remote communication error|failed|not being run'
greet=$(inferior_pid 1)
spin=$(inferior_pid 2)
spin3=$(sed -n 's/^\[Inferior 3 (process \([0-9]*\)) detached\]$/\1/p' \
	"$work/two.out")
[ -n "$greet" ] && [ -n "$spin" ] && [ -n "$spin3" ] &&
	[ "$greet" != "$spin" ] ||
	fail "two: no two processes: $(cat "$work/two.out")"
# Each process's threads under its own pid: greet's one, and spin's
# main thread and at least its computer thread (at mix).
for n in 1 2; do
	sed -n '/^==threads==$/,/^==[rk]/p' "$work/two.out" | awk -v n=$n '
		/^==threads==$/ { block++ } block == n' >"$work/threads$n.out"
	in_order threads$n "^[* ] 1\\.1 +Thread $greet\\.$greet " \
		"^[* ] 2\\.1 +Thread $spin\\.$spin " \
		"^[* ] 2\\.[0-9] +Thread $spin\\.[0-9]+ .*mix \\("
	lacks threads$n "^[* ] 1\\.[02-9]|Thread ($greet\\.[^$greet]|$spin\\.$greet)"
done
# After the kill: greet's thread alone; spin is gone.
sed -n '/^==killed 2==$/,/^\[New inferior 3/p' "$work/two.out" \
	>"$work/killed.out"
has killed "^[* ] 1\\.1 +Thread $greet\\.$greet "
lacks killed "Thread $spin\\."
pid_gone "$spin" || fail "two: spin ($spin) is still there after kill"
# The detached spin runs on, untraced; the server stayed (no fork: it
# is still the tracer greet needs), and greet printed its line once.
[ "$(sed -n 's/^TracerPid:[[:space:]]*//p' "/proc/$spin3/status")" = 0 ] ||
	fail "two: detached spin ($spin3) is still traced"
kill -9 "$spin3"
grep -cx 'greet: one' "$work/two.prog" | grep -qx 1 ||
	fail "two: greet's line not printed once: $(cat "$work/two.prog")"
wait_until 10 pid_gone $server ||
	fail "two: monitor exit did not end the server"

# gdb's non-stop mode on a --multi server: no process at first (`?` is
# OK: "W00;process:0" made gdb fail an assertion at the run), and the
# run's stop is vRun's reply (queued as a notification too, it kept the
# thread from running on).
ptrr_listening nonstop gdbserver --multi localhost:0
timeout 120 "$GDB" -nx -batch -ex 'set remotetimeout 60' -ex 'set sysroot' \
	-ex 'set non-stop on' -ex "target extended-remote 127.0.0.1:$port" \
	-ex "set remote exec-file $progs/greet" -ex "file $progs/greet" \
	-ex 'break greet' -ex 'run one' -ex 'info threads' -ex 'continue' \
	-ex 'echo ==exit==\n' -ex 'monitor exit' >"$work/nonstop.out" 2>&1
in_order nonstop '^Breakpoint 1, greet \(argc=argc@entry=2' \
	'^\* 1 +Thread [0-9.]+ +greet \(' \
	'^\[Inferior 1 \(process [0-9]*\) exited normally\]$' '^==exit==$'
lacks nonstop 'internal-error|Remote communication error'
finish
