#!/bin/sh
# `ptrr record --backend=soft` on what programs do beyond plain code —
# vDSO calls, system calls and a vfork, signal handlers, group-stops, C++
# exceptions, threads, execve (also from a second thread), a crash — each
# thread's decoded history checked against the ground truth the recorder
# single-stepped, instruction for instruction.  Then attaching to a
# running process, and the faults around a recording: a program that
# cannot be run, a process that cannot be traced, the program killed,
# ptrr interrupted or killed while saving, and a full disk.
set -u
. "$top_srcdir/tests/lib.sh"
work_dir record-fidelity
cd "$top_builddir" || exit 99
progs=tests/progs

# fidelity NAME [RECORD-OPTIONS] -- PROG [ARGS]: records into
# $work/NAME.ptrr with ground truth $work/NAME.gt[.TID] and checks every
# thread against it.
fidelity() {
	name=$1
	shift
	record "$name" --ground-truth="$work/$name.gt" "$@" &&
		check_threads "$work/$name.ptrr" "$work/$name.gt"
}

# calls BUNDLE [TID]: the function names of the call history.
calls() {
	"$ptrr" call-history ${2:+--thread=$2} "$1" | cut -f2
}

# in_range ADDR START SIZE: START <= ADDR < START + SIZE.
in_range() {
	[ $(($1 - $2)) -ge 0 ] && [ $(($1 - $2)) -lt $(($3)) ]
}

# ---- vDSO: the clocks run in the vDSO's code, copied into the bundle.
fidelity vdso --start=main -- $progs/vdso
vdso=$(awk '/"name": "\[vdso\]"/ { v = 1 } v && /"start":/ { s = $2 }
	    v && /"size":/ { print s, $2; exit }' "$work/vdso.ptrr/manifest.json" |
       tr -d '",')
[ -n "$vdso" ] || fail "vdso: no copy of [vdso] in the bundle"
n=0
for a in $(raw_addrs "$work/vdso.ptrr"); do
	in_range "$a" $vdso && n=$((n + 1))
done
[ "$n" -gt 100 ] || fail "vdso: only $n instructions ran in the vDSO"

# ---- System calls, and a posix_spawn child (vfork) left untraced.
fidelity syscalls --start=main -- $progs/syscalls
n=$("$ptrr" insn-history "$work/syscalls.ptrr" | grep -c 'syscall *$')
[ "$n" -ge 10 ] || fail "syscalls: $n syscall instructions in the history"
grep -q '"fork: child [0-9]* not traced"' "$work/syscalls.ptrr/manifest.json" ||
	fail "syscalls: no note on the untraced child"

# ---- Signals: handlers traced in between, sigreturn back; an ignored and
# a blocked signal; a timer ending sigsuspend; a SIGSTOP continued by a
# forked child.
fidelity signals --start=main -- $progs/signals
calls "$work/signals.ptrr" >"$work/signals.calls"
[ "$(grep -c '^on_usr$' "$work/signals.calls")" -ge 3 ] ||
	fail "signals: on_usr did not run for raise, kill and the unblock"
grep -q '^on_alarm$' "$work/signals.calls" ||
	fail "signals: the SIGALRM handler is not in the history"
grep -q '^__restore_rt$' "$work/signals.calls" ||
	fail "signals: no sigreturn through __restore_rt"
grep -q '"fork: child' "$work/signals.ptrr/manifest.json" ||
	fail "signals: no note on the forked child"

# ---- C++: thrown two frames down, unwound through a destructor, caught;
# rethrown and caught again.
fidelity exceptions --start=main -- $progs/exceptions
calls "$work/exceptions.ptrr" >"$work/exceptions.calls"
for f in __cxa_throw _Unwind_RaiseException __cxa_begin_catch __cxa_rethrow; do
	grep -q "^$f\$" "$work/exceptions.calls" ||
		fail "exceptions: no $f in the call history"
done

# ---- Threads: four histories, each its own work.
fidelity threads --start=main -- $progs/threads
[ "$(wc -l <"$work/threads")" -eq 4 ] ||
	fail "threads: $(wc -l <"$work/threads") threads recorded, not 4"
for f in producer waiter caller; do
	found=
	for tid in $(awk '{ print $1 }' "$work/threads"); do
		calls "$work/threads.ptrr" "$tid" | grep -q "^$f\$" &&
			found=$found$tid
	done
	[ -n "$found" ] || fail "threads: no thread ran $f"
done
[ "$(grep -c ' exited ' "$work/threads")" -eq 4 ] ||
	fail "threads: not every thread exited: $(cat "$work/threads")"

# ---- execve: the program after it from its first instruction, and the
# one before it, up to its execve, as a bundle inside.
# check_exec NAME: the bundle of NAME and the one before its execve.
check_exec() {
	b="$work/$1.ptrr"
	grep -q '"exe": ".*/loops"' "$b/manifest.json" ||
		fail "$1: the bundle is not of the exec'd program"
	grep -q '"before_exec": "before-exec.ptrr"' "$b/manifest.json" ||
		fail "$1: the manifest does not name the bundle before execve"
	[ "$(stop_of "$b/before-exec.ptrr")" = "exec " ] ||
		fail "$1: before execve: stop $(stop_of "$b/before-exec.ptrr")"
	check_threads "$b/before-exec.ptrr" "$work/$1.gt.before-exec"
	tid=$(awk '$2 == "exec" { print $1 }' "$work/threads")
	"$ptrr" insn-history --thread="$tid" "$b/before-exec.ptrr" |
		tail -n 1 | grep -q 'syscall' ||
		fail "$1: the old history does not end with the execve"
}
fidelity exec --start=main -- $progs/exec "$PWD/$progs/loops"
check_exec exec
fidelity exec-thread --start=main -- $progs/exec --from-thread \
	"$PWD/$progs/loops"
check_exec exec-thread
[ "$(thread_ends "$work/exec-thread.ptrr/before-exec.ptrr" |
     awk '{ print $2 }' | sort | tr '\n' ' ')" = "exec signaled " ] ||
	fail "exec-thread: before execve, threads ended as" \
		"$(thread_ends "$work/exec-thread.ptrr/before-exec.ptrr")"

# ---- A crash: the faulting instruction last, the registers at the fault,
# the other thread stopped in its system call, the memory snapshot.
fidelity segv --start=main -- $progs/segv
[ "$(stop_of "$work/segv.ptrr")" = "fault SIGSEGV" ] ||
	fail "segv: stop $(stop_of "$work/segv.ptrr")"
set -- $(head -n 1 "$work/threads")
"$ptrr" insn-history --thread="$1" "$work/segv.ptrr" | tail -n 1 |
	grep -q "^[0-9]*.*$(printf %016x $(($3))) <crash[.a-z0-9]*+[0-9]*>:.*mov" ||
	fail "segv: the last instruction is not the faulting store at $3"
grep -q '"addr": "0x10"' "$work/segv.ptrr/manifest.json" ||
	fail "segv: the fault address is not recorded"
[ "$(sed -n 2p "$work/threads" | awk '{ print $2 }')" = none ] ||
	fail "segv: the reading thread: $(sed -n 2p "$work/threads")"
base=$(awk '/"path": ".*\/segv"/ { m = 1 } m && /"start":/ { s = $2 }
	    m && /"offset":/ { print s, $2; exit }' "$work/segv.ptrr/manifest.json" |
       tr -d '",' | { read -r s o && echo $((s - o)); })
marker=$(nm $progs/segv | awk '$3 == "ptrr_marker" { print "0x" $1 }')
[ "$(blob_at "$work/segv.ptrr" snapshot $((base + marker)) 8)" = "SEG!RRTP" ] ||
	fail "segv: the snapshot does not hold ptrr_marker's bytes at" \
		"$(printf 0x%x $((base + marker)))"
grep -q '"name": "\[stack\]"' "$work/segv.ptrr/manifest.json" &&
	LC_ALL=C grep -q PTRSTACK "$work"/segv.ptrr/snapshot/*.bin ||
	fail "segv: the stack is not in the snapshot"

# ---- The program killed by SIGKILL while recording: what was recorded is
# kept.
# record_spin NAME [RECORD-OPTIONS]: starts recording spin in the
# background (pid in $rec); returns once it runs main.
record_spin() {
	name=$1
	shift
	"$ptrr" record --backend=soft --ground-truth="$work/$name.gt" \
		-o "$work/$name.ptrr" "$@" >"$work/$name.log" 2>&1 &
	rec=$!
	sleep 1
}
record_spin killed --start=main -- $progs/spin
kill -KILL "$(pgrep -P "$rec" -x spin)"
wait $rec || fail "killed: ptrr record: $(cat "$work/killed.log")"
[ "$(stop_of "$work/killed.ptrr")" = "signaled SIGKILL" ] ||
	fail "killed: stop $(stop_of "$work/killed.ptrr")"
check_threads "$work/killed.ptrr" "$work/killed.gt"

# ---- ptrr interrupted (SIGINT): every thread stops where it is, also
# those waiting in the kernel, and the bundle is written; the program is
# killed.
record_spin int --start=main -- $progs/spin
prog=$(pgrep -P "$rec" -x spin)
kill -INT $rec
wait $rec || fail "interrupted: ptrr record: $(cat "$work/int.log")"
[ "$(stop_of "$work/int.ptrr")" = "interrupted " ] ||
	fail "interrupted: stop $(stop_of "$work/int.ptrr")"
check_threads "$work/int.ptrr" "$work/int.gt"
[ "$(wc -l <"$work/threads")" -eq 3 ] ||
	fail "interrupted: $(wc -l <"$work/threads") threads, not 3"
[ -n "$prog" ] || fail "interrupted: spin was not running"
[ -n "$prog" ] && [ -d "/proc/$prog" ] &&
	fail "interrupted: the program still runs"

# ---- Attaching to a running process, then detaching: it runs on,
# untraced.
# allowed PID: the CPUs PID's threads may run on (each distinct list).
allowed() {
	for t in /proc/"$1"/task/*; do
		sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$t/status"
	done | sort -u | tr '\n' ' '
}
$progs/spin &
spin=$!
sleep 0.2
before=$(allowed $spin)
"$ptrr" record --backend=soft --pid=$spin --ground-truth="$work/att.gt" \
	-o "$work/att.ptrr" >"$work/att.log" 2>&1 &
rec=$!
sleep 1
# While it steps, ptrr keeps the process's threads on its own CPU
# (plugin/capture/affinity.h); they get their CPUs back when it detaches.
# (Pinned once ptrr has attached, which under load may take more than
# that second: within 10 s.)
pinned() {
	[ "$(allowed $spin)" != "$before" ]
}
[ "$(nproc)" -gt 1 ] && ! wait_until 10 pinned &&
	fail "attach: the threads were not pinned to one CPU: $(allowed $spin)"
# A process traced already (by that recording) cannot be attached to.
expect_exit 2 "cannot attach to process $spin: it is already traced by process $rec" \
	"$ptrr" record --backend=soft --pid=$spin -o "$work/no.ptrr"
[ "$(grep -vc warning "$work/err")" -eq 1 ] || fail "attach: not one line"
kill -INT $rec
wait $rec || fail "attach: ptrr record: $(cat "$work/att.log")"
check_threads "$work/att.ptrr" "$work/att.gt"
grep -q "attached to running process $spin" "$work/att.ptrr/manifest.json" ||
	fail "attach: no note on attaching"
[ "$(allowed $spin)" = "$before" ] ||
	fail "attach: the threads' CPUs were not given back: $(allowed $spin)"
check_let_go attach $spin

# ---- Programs and processes that cannot be recorded: one line each.
expect_exit 2 "^ptrr record: cannot run $work/notexec: Permission denied$" \
	sh -c ": >'$work/notexec' && '$ptrr' record --backend=soft \
		-o '$work/x.ptrr' -- '$work/notexec'"
expect_exit 2 "^ptrr record: cannot run ./no-such-program: No such file" \
	"$ptrr" record --backend=soft -o "$work/x.ptrr" -- ./no-such-program
expect_exit 2 "^ptrr record: cannot attach to process 999999999: no such process$" \
	"$ptrr" record --backend=soft --pid=999999999 -o "$work/x.ptrr"
expect_exit 1 "give either --pid or a program" \
	"$ptrr" record --backend=soft --pid=1 -- $progs/loops
[ ! -e "$work/x.ptrr" ] || fail "a failed recording left $work/x.ptrr"

# ---- ptrr killed while it saves: the old bundle is untouched, and what
# the killed writer left is no bundle (and goes with the next save).
record save --start=main -- $progs/loops
cp "$work/save.ptrr/manifest.json" "$work/save.before"
if [ -n "${GDB:-}" ] && [ "$GDB" != no ]; then
	"$GDB" -nx -batch -ex 'set breakpoint pending on' \
		-ex 'break bundle_write_file' -ex 'run' -ex 'continue' \
		-ex 'kill' --args "$ptrr" record --backend=soft --start=main \
		-o "$work/save.ptrr" -- $progs/fnptr >"$work/gdb.log" 2>&1
	cmp -s "$work/save.before" "$work/save.ptrr/manifest.json" ||
		fail "killed save: the old bundle changed"
	ls -d "$work"/save.ptrr.tmp.* >/dev/null 2>&1 ||
		fail "killed save: the writer was not stopped mid-save:" \
			"$(tail -n 3 "$work/gdb.log")"
	for t in "$work"/save.ptrr.tmp.*; do
		"$ptrr" info "$t" >/dev/null 2>&1 &&
			fail "killed save: $t opens as a bundle"
	done
	record save --start=main -- $progs/fnptr
	ls -d "$work"/save.ptrr.tmp.* >/dev/null 2>&1 &&
		fail "killed save: the next save left $(ls -d "$work"/save.ptrr.tmp.*)"
else
	echo "note: no gdb; ptrr killed while saving not checked"
fi

# ---- A full disk: one line, the previous bundle untouched.  A 48 KiB
# tmpfs if this may mount one, else a file size limit (16 or 32 KiB: the
# trace of `fnptr long` from main is 40 KiB).
# full_disk DIR: records into DIR/full.ptrr twice, the second one larger
# than what DIR can take.
full_disk() {
	record full --start=main -o "$1/full.ptrr" -- $progs/loops || return
	cp "$1/full.ptrr/manifest.json" "$work/full.before"
	expect_exit 2 "cannot write bundle $1/full.ptrr: .*(No space left|too large).*previous recording is untouched" \
		sh -c "${2:-} '$ptrr' record --backend=soft --start=main \
			-o '$1/full.ptrr' -- $progs/fnptr long"
	[ "$(grep -vc warning "$work/err")" -eq 1 ] ||
		fail "full disk: not one line: $(cat "$work/err")"
	cmp -s "$work/full.before" "$1/full.ptrr/manifest.json" ||
		fail "full disk: the previous bundle changed"
	"$ptrr" info "$1/full.ptrr" >/dev/null ||
		fail "full disk: the previous bundle does not open"
	ls -d "$1"/full.ptrr.tmp.* >/dev/null 2>&1 &&
		fail "full disk: a temporary directory was left"
}
mkdir -p "$work/small"
if mount -t tmpfs -o size=48k ptrr-test "$work/small" 2>/dev/null; then
	full_disk "$work/small"
	umount "$work/small"
else
	full_disk "$work/small" "ulimit -f 32;"
fi

finish
