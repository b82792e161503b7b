#!/bin/sh
# The traced program killed by SIGKILL from outside, mid-trace.
#
# ptrr record (software backend): ptrr says so in one line, saves what
# was recorded up to the kill, and the bundle lists (ptrr insn-history)
# and replays (ptrr replay --batch); also when the kill lands while ptrr
# reads a stop.
#
# A live session (ptrr gdb, through ptrr serve), traced after `pt start`
# or gdb's `record pt`, the program running: gdb says the program was
# killed, the server says in one line that the history is kept; pt info
# says killed by SIGKILL, pt insn-history lists the history, pt save
# writes it with that stop, and the saved bundle lists and replays.
# Nothing hangs: every gdb and ptrr runs under a timeout, and the server
# is gone when gdb is.
#
# With $PTRR_TEST_BACKEND=qemu (tests/qemu-fault-kill.sh): the live
# sessions only, on QEMU, whose process (the program's) is killed.
. "${top_srcdir:-..}/tests/lib.sh"
work_dir fault-kill
progs="$top_builddir/tests/progs"
HOME=$work
export HOME

# spin_below PID: the pid of a spin process among PID's descendants
# (under QEMU, the qemu-x86_64 that runs spin).
spin_below() {
	for c in $(pgrep -P "$1"); do
		if [ "$(cat "/proc/$c/comm" 2>/dev/null)" = spin ] ||
		   { [ "$(cat "/proc/$c/comm" 2>/dev/null)" = qemu-x86_64 ] &&
		     tr '\0' '\n' <"/proc/$c/cmdline" | grep -q '/spin$'; }; then
			echo "$c"
		else
			spin_below "$c"
		fi
	done
}

# spin_under PID: spin_below, once there is one (empty after 30 s).
spin_under() {
	tries=0
	while [ $tries -lt 300 ]; do
		s=$(spin_below "$1" | head -n 1)
		[ -n "$s" ] && { echo "$s"; return; }
		tries=$((tries + 1))
		sleep 0.1
	done
}

# threads_of PID: waits (30 s at most) until process PID has its three
# threads, which spin makes in main.
threads_of() {
	tries=0
	while [ $tries -lt 300 ] &&
	      [ "$(ls "/proc/$1/task" 2>/dev/null | wc -l)" -lt 3 ]; do
		tries=$((tries + 1))
		sleep 0.1
	done
}

# replays NAME BUNDLE: BUNDLE lists its history and opens in gdb.
replays() {
	"$ptrr" insn-history --count=5 "$2" >"$work/$1.insns" 2>&1 &&
		[ "$(wc -l <"$work/$1.insns")" -eq 5 ] ||
		fail "$1: insn-history: $(cat "$work/$1.insns")"
	[ -x "${GDB:-}" ] || return 0
	PTRR_GDB=$GDB timeout 120 "$ptrr" replay --batch \
		-ex 'set remotetimeout 60' -ex 'info threads' \
		-ex 'reverse-stepi' -ex 'pt info' "$2" >"$work/$1.replay" 2>&1 ||
		fail "$1: ptrr replay: $(tail -n 3 "$work/$1.replay")"
	grep -q 'Thread .* killed by SIGKILL' "$work/$1.replay" ||
		fail "$1: replay: no thread killed by SIGKILL:" \
			"$(tail -n 5 "$work/$1.replay")"
}

# ---- ptrr record (the software backend's) ----
if [ -z "${PTRR_TEST_BACKEND:-}" ]; then
	"$ptrr" record --backend=soft --start=main -o "$work/rec.ptrr" \
		-- "$progs/spin" >"$work/rec.out" 2>"$work/rec.err" &
	rec=$!
	spin=$(spin_under $rec)
	threads_of "$spin"
	sleep 1
	[ -n "$spin" ] && kill -KILL "$spin"
	wait $rec || fail "record: exit $?: $(cat "$work/rec.err")"
	grep -qx 'ptrr record: the program was killed by SIGKILL; the recording keeps its history up to there' \
		"$work/rec.err" ||
		fail "record: no line says the program was killed: $(cat "$work/rec.err")"
	[ "$(stop_of "$work/rec.ptrr")" = "signaled SIGKILL" ] ||
		fail "record: stop $(stop_of "$work/rec.ptrr")"
	replays record "$work/rec.ptrr"

	# The kill landing while ptrr handles a stop: between its wait and its
	# PTRACE_GETSIGINFO, the program is killed and its thread moves on to
	# its exit stop (libfaultio.so, PTRR_FAULT_KILL_STOPPED=N, makes the Nth
	# such read come after the kill).  The siginfo read there is the exit
	# stop's, which ptrr once took for a fatal SIGTRAP: "stop fault
	# SIGTRAP" and no line saying the program was killed.  N = 50: main
	# thread alone, stepping; 3000: three threads, in blocks.  (The shim
	# comes before the ASan runtime of an --enable-asan ptrr.)
	for n in 50 3000; do
		env PTRR_FAULT_CMD=record PTRR_FAULT_KILL_STOPPED=$n \
			LD_PRELOAD="$top_builddir/tests/unit/libfaultio.so" \
			ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
			timeout 120 "$ptrr" record --backend=soft --start=main \
			-o "$work/race$n.ptrr" -- "$progs/spin" \
			>"$work/race$n.out" 2>"$work/race$n.err" ||
			fail "race $n: record: exit $?: $(cat "$work/race$n.err")"
		grep -qx 'ptrr record: the program was killed by SIGKILL; the recording keeps its history up to there' \
			"$work/race$n.err" ||
			fail "race $n: no line says the program was killed:" \
				"$(cat "$work/race$n.err")"
		[ "$(stop_of "$work/race$n.ptrr")" = "signaled SIGKILL" ] ||
			fail "race $n: stop $(stop_of "$work/race$n.ptrr")"
		! grep -q '"kind": "fault"' "$work/race$n.ptrr/manifest.json" ||
			fail "race $n: a thread stopped by a fault"
		"$ptrr" insn-history --count=5 "$work/race$n.ptrr" \
			>"$work/race$n.insns" 2>&1 &&
			[ "$(wc -l <"$work/race$n.insns")" -eq 5 ] ||
			fail "race $n: insn-history: $(cat "$work/race$n.insns")"
	done
fi

[ -x "${GDB:-}" ] || { echo "gdb not found: live sessions skipped"; finish; exit; }

# live NAME TRACE-COMMAND: ptrr gdb on spin, stopped at main, traced
# from there by TRACE-COMMAND, continued, and killed from outside; then
# pt info, pt insn-history and pt save to $work/NAME.ptrr.
live() {
	PTRR_GDB=$GDB timeout 120 "$ptrr" gdb \
		--backend="${PTRR_TEST_BACKEND:-soft}" --batch \
		-ex 'set remotetimeout 60' -ex 'break main' -ex 'continue' \
		-ex "$2" -ex 'continue' \
		-ex 'info threads' -ex 'pt info' -ex 'pt insn-history' \
		-ex "pt save $work/$1.ptrr" -- "$progs/spin" \
		>"$work/$1.out" 2>&1 &
	gdb=$!
	spin=$(spin_under $gdb)
	# Traced for a while: past main's breakpoint and into the threads.
	threads_of "$spin"
	sleep 1
	if [ -n "$spin" ]; then
		server=$(ps -o ppid= -p "$spin" | tr -d ' ')
		kill -KILL "$spin"
	else
		fail "$1: spin did not start"
	fi
	wait $gdb
	rc=$?
	[ $rc -ne 124 ] || fail "$1: gdb hung"
	has "$1" '^Program terminated with signal SIGKILL, Killed\.$'
	has "$1" '^ptrr serve: the program was killed by SIGKILL; its history is kept \(pt insn-history, pt save DIR\)$'
	has "$1" '^Stop reason: killed by SIGKILL$'
	has "$1" '^Thread 1 \(LWP [0-9]+\).*: killed by SIGKILL$'
	has "$1" '^[0-9]+[[:space:]]+=> 0x[0-9a-f]+ <'
	has "$1" "^Saved [0-9]+ threads?, [0-9]+ instructions, to $work/$1.ptrr"
	[ -n "${server:-}" ] && ! wait_until 10 pid_gone "$server" &&
		fail "$1: the server still runs 10 s after" && kill "$server"
	[ "$(stop_of "$work/$1.ptrr")" = "signaled SIGKILL" ] ||
		fail "$1: saved stop $(stop_of "$work/$1.ptrr")"
	replays "$1" "$work/$1.ptrr"
}

# ---- live, pt start ----
live pt-start 'pt start'

# ---- live, gdb's record pt (gdb drops its own recording as the
# program goes; the server's stays) ----
live record-pt 'record pt'

finish
