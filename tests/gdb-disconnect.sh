#!/bin/sh
# gdb going away mid-command (issue 6, faults): gdb is killed (SIGKILL)
# while the program runs after `continue`, and the program must be left
# as --on-disconnect says, never running on unwatched; the server ends.
#
# kill (the default, as gdbserver does with a program it started):
# spin, untraced and traced from the start (the software backend), is
# gone.  stop: spin is left stopped (state T) and untraced (traced, the
# SIGINT that stopped the run must not be left pending to kill it).  detach:
# spin runs on, untraced.  replay: gdb killed while it steps back
# through a recording (reverse-stepi 100000); the server ends.  Usage
# errors.
. "${top_srcdir:-..}/tests/lib.sh"
work_dir gdb-disconnect
progs="$top_builddir/tests/progs"
[ -x "$GDB" ] || { echo "gdb not found: skipped"; exit 77; }
export HOME="$work"

# A number no other test's spin has in its arguments: how ours is found.
tag=7$$

# proc_state PID: the State letter of /proc/PID/status, or "gone".
proc_state() {
	sed -n 's/^State:[[:space:]]*\([A-Za-z]\).*/\1/p' \
		"/proc/$1/status" 2>/dev/null | grep . || echo gone
}

# ran_since PID TICKS: true if process PID has used more than TICKS
# ticks of CPU time (user and system); its ticks now in $t2.
ran_since() {
	t2=$(awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null)
	[ -n "$2" ] && [ "${t2:-0}" -gt "$2" ]
}

# stopped PID: true if process PID is stopped (state T).
stopped() {
	[ "$(proc_state "$1")" = T ]
}

# tracer PID: the TracerPid of /proc/PID/status.
tracer() {
	sed -n 's/^TracerPid:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null
}

# find_spin ROUNDS: the pid of `spin ROUNDS`, once there (under QEMU,
# of the qemu-x86_64 running it).
find_spin() {
	ps -eo pid=,args= | awk -v a="$progs/spin $1" \
		'substr($0, index($0, $2)) == a ||
		 ($2 ~ /qemu-x86_64$/ &&
		  substr($0, length($0) - length(a)) == " " a) {
			print $1; exit }'
}

# The live backend: the software one, or $PTRR_TEST_BACKEND
# (tests/qemu-gdb-disconnect.sh).
backend=${PTRR_TEST_BACKEND:+--backend=$PTRR_TEST_BACKEND}

# wait_gone PID SECONDS: waits for process PID to end (a zombie has
# ended); false if it is still there after SECONDS.
wait_gone() {
	i=0
	while [ "$(proc_state "$1")" != gone ] &&
	      [ "$(proc_state "$1")" != Z ]; do
		[ $i -ge $(($2 * 10)) ] && return 1
		sleep 0.1
		i=$((i + 1))
	done
}

# dropped NAME SERVE-OPTS...: gdb runs spin through `target
# extended-remote | ptrr serve --stdio SERVE-OPTS -- spin` and continues;
# once spin has run for a second, gdb is killed.  Sets $spin (its pid)
# and $server, and checks that the server ends.
dropped() {
	name=$1
	shift
	rounds=9$tag${name_no}000000
	name_no=$((name_no + 1))
	"$GDB" -nx -batch -ex 'set remotetimeout 60' \
		-ex "target extended-remote | $ptrr serve --stdio $backend $* -- \
$progs/spin $rounds" -ex continue >"$work/$name.out" 2>&1 &
	gdb=$!
	# Running: spin has started its two threads.
	i=0
	while [ $i -lt 600 ]; do
		spin=$(find_spin "$rounds")
		[ -n "$spin" ] &&
		[ "$(ls "/proc/$spin/task" 2>/dev/null | wc -l)" -ge 3 ] && break
		sleep 0.1
		i=$((i + 1))
	done
	server=$(ps -o ppid= -p "$spin" 2>/dev/null | tr -d ' ')
	if [ $i -ge 600 ] || [ -z "$server" ]; then
		fail "$name: spin did not start: $(cat "$work/$name.out")"
		kill -9 $gdb $spin 2>/dev/null
		wait $gdb
		return 1
	fi
	sleep 1
	[ "$(proc_state "$spin")" != gone ] ||
		fail "$name: spin ended before gdb was killed"
	kill -9 $gdb
	wait $gdb 2>/dev/null
	wait_gone "$server" 20 ||
		fail "$name: the server is still there 20 s after gdb died"
}
name_no=0

# Traced from the start under QEMU, one second of spin is some hundred
# million instructions, whose history takes ptrr longer to build than
# the 20 s the server is given to end here (docs/performance.md, "Live
# sessions on QEMU"): QEMU's sessions run untraced here.
modes="untraced traced"
[ "$PTRR_TEST_BACKEND" = qemu ] && modes=untraced

# ---- kill: untraced, then traced from the start ----
for mode in $modes; do
	opt=
	[ $mode = traced ] && opt=--record-from-start
	dropped kill-$mode $opt || continue
	wait_gone "$spin" 10 ||
		fail "kill-$mode: spin is still there ($(proc_state "$spin")) \
after the server ended"
	kill -9 "$spin" "$server" 2>/dev/null
done

# ---- stop: left stopped, untraced, for another debugger ----
for mode in $modes; do
	opt=
	[ $mode = traced ] && opt=--record-from-start
	dropped stop-$mode --on-disconnect=stop $opt || continue
	wait_until 10 stopped "$spin"
	st=$(proc_state "$spin")
	[ "$st" = T ] ||
		fail "stop-$mode: spin is in state '$st', not stopped (T);" \
			"gdb and the server printed: $(tail -n 20 \
			"$work/stop-$mode.out")"
	[ "$(tracer "$spin")" = 0 ] ||
		fail "stop-$mode: spin is still traced by $(tracer "$spin")"
	kill -9 "$spin" 2>/dev/null
done

# ---- detach: runs on, untraced ----
if dropped detach --on-disconnect=detach; then
	t1=$(awk '{ print $14 + $15 }' "/proc/$spin/stat" 2>/dev/null)
	wait_until 10 ran_since "$spin" "$t1"
	st=$(proc_state "$spin")
	[ "$st" = R ] || [ "$st" = S ] ||
		fail "detach: spin is in state '$st', not running"
	[ "$(tracer "$spin")" = 0 ] ||
		fail "detach: spin is still traced by $(tracer "$spin")"
	[ -n "$t1" ] && [ "${t2:-0}" -gt "$t1" ] ||
		fail "detach: spin does not run on (CPU ticks $t1, then $t2)"
	kill -9 "$spin" 2>/dev/null
fi

# ---- replay: gdb killed while it steps back through a recording ----
# reverse-stepi 100000 in one thread: one request per instruction, for
# minutes.
"$ptrr" record -o "$work/spin.ptrr" -- "$progs/spin" 1000 \
	>"$work/record.log" 2>&1 ||
	fail "replay: ptrr record: $(tail -n 2 "$work/record.log")"
"$GDB" -nx -batch -ex 'set remotetimeout 60' \
	-ex "target remote | $ptrr serve --stdio $work/spin.ptrr" \
	-ex 'set scheduler-locking on' -ex 'reverse-stepi 100000' \
	>"$work/replay.out" 2>"$work/replay.err" &
gdb=$!
server=
i=0
while [ -z "$server" ] || ! grep -q '^0x.* in ' "$work/replay.out"; do
	server=$(ps -eo pid=,args= | awk -v a="$work/spin.ptrr" \
		'$NF == a && /serve --stdio/ && !/-batch/ && $2 !~ /sh$/ {
			print $1; exit }')
	[ $i -ge 600 ] || ! kill -0 $gdb 2>/dev/null && break
	sleep 0.1
	i=$((i + 1))
done
sleep 2
if ! kill -0 $gdb 2>/dev/null; then
	fail "replay: gdb was done before it was killed: \
$(cat "$work/replay.out")"
elif [ -z "$server" ]; then
	fail "replay: no server found"
	kill -9 $gdb
else
	kill -9 $gdb
	wait_gone "$server" 20 ||
		fail "replay: the server is still there 20 s after gdb died"
	kill -9 "$server" 2>/dev/null
fi
wait $gdb 2>/dev/null

# ---- Usage errors ----
expect_exit 1 '--on-disconnect wants kill, detach or stop, not later' \
	"$ptrr" serve --on-disconnect=later -- "$progs/spin"
expect_exit 1 'are for a live session' \
	"$ptrr" serve --on-disconnect=stop "$work/spin.ptrr"

finish
