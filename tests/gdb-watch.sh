#!/bin/sh
# Watchpoints in a replay (issue 19): `watch` then reverse-continue and
# continue stop where gdb's own `record full` of the same run stops,
# with the same old and new values.
#
# tests/progs/values (-O2 with frame pointers, -O0, -O2 without) writes
# globals and heap fields in a loop, then crashes.  gdb stops at the
# crash, sets a watchpoint (a global, or `watch -l` a heap field), then
# reverse-continues four times, continues twice and reverse-continues
# once more.  The same commands run on `ptrr replay` of a recording and
# in plain gdb with `record full` from main.  Record full's hardware
# watchpoints fire in its replay only where the machine's debug
# registers do, so its software watchpoint (which checks the value after
# every instruction) is the reference: ptrr's must stop at the same
# instructions and print the same values, through its own search for
# writes (gdb's Z2) and, for the first program, as software watchpoints
# too (gdb steps and reads the values ptrr recovers).  Also in a live
# session traced from the start, once at its crash.
#
# tests/progs/watchloop is watch-reverse.exp's loop: the register the
# last store wrote was loaded from a global written since (ptrr showed
# the global's value at the end there, a wrong value), as hardware and
# software watchpoints, replayed and live.
#
# tests/progs/watchfog: stops gdb goes on from (the value unknown on
# both sides), which ptrr passes over itself (below).
#
# tests/progs/watchrep writes its watched global with a rep string (or,
# given an argument, read(2) into it), writes ptrr cannot bound: the
# reverse-continue from the crash must stop there, say why on gdb's
# console and in `monitor pt info`, and show no value record full does
# not show.
. "${top_srcdir:-..}/tests/lib.sh"
gdb_work_dir gdb-watch
set -f

# commands HW EXPR: the watchpoint on EXPR (a hardware one if HW is 1)
# and the moves, after "@@ watch".
commands() {
	echo 'set pagination off'
	[ "$1" = 1 ] || echo 'set can-use-hw-watchpoints 0'
	echo 'echo @@ watch\n'
	echo "watch $2"
	for m in reverse-continue reverse-continue reverse-continue \
		 reverse-continue continue continue reverse-continue; do
		echo "$m"
	done
}

# full PROG HW EXPR: record full's run of commands, from main to the
# crash, in $work/full.
full() {
	{ echo 'set startup-with-shell off'
	  echo 'unset environment'
	  echo "set environment PATH $PATH"
	  echo "set environment HOME $work"
	  echo "set environment PTRR_GDB $GDB"
	  echo 'break main'; echo 'run'; echo 'record full'
	  echo 'continue'; echo 'delete'
	  commands "$2" "$3"; } >"$work/cmds"
	run_gdb full 1 "$GDB" -nx -batch "$1"
}

# stops FILE: what gdb printed after the watchpoint was set, with the
# watchpoint's kind and number left out.
stops() {
	sed -n '/^@@ watch/,$p' "$1" |
	sed -e '/^@@ watch/d' -e '/^\[Inferior 1 (process [0-9]*) detached\]/d' \
	    -e 's/^Hardware watchpoint [0-9]*:/Watchpoint:/' \
	    -e 's/^Watchpoint [0-9]*:/Watchpoint:/'
}

# same NAME: $work/NAME's stops are record full's ($work/full).
same() {
	stops "$work/full" >"$work/full.stops"
	stops "$work/$1" >"$work/$1.stops"
	grep -q 'Old value' "$work/full.stops" ||
		fail "$1: record full stopped at no write"
	cmp -s "$work/full.stops" "$work/$1.stops" ||
		fail "$1: stops differ from record full's:" \
		     "$(diff "$work/full.stops" "$work/$1.stops" | head -n 20)"
}

# record NAME PROG [ARG]: a recording of PROG in $work/NAME.ptrr, with
# the environment PATH and HOME only.
record() {
	rm -rf "$work/$1.ptrr"
	env -i PATH="$PATH" HOME="$work" PTRR_GDB="$GDB" \
		"$ptrr" record --backend=soft -o "$work/$1.ptrr" -- "$2" \
		${3:+"$3"} >/dev/null 2>&1
	[ -d "$work/$1.ptrr" ] || fail "$1: no recording"
}

for prog in values values_O0 values_nofp; do
	p="$progs/$prog"
	record "$prog" "$p"
	for e in counter total '-l heap_acc->calls'; do
		full "$p" 0 "$e"
		commands 1 "$e" >"$work/cmds"
		run_gdb replay 1 "$ptrr" replay --batch "$work/$prog.ptrr"
		same replay
		cp "$work/replay" "$work/$prog.${e#-l }.out"
		[ "$prog" = values ] || continue
		commands 0 "$e" >"$work/cmds"
		run_gdb replay_sw 1 "$ptrr" replay --batch "$work/$prog.ptrr"
		same replay_sw
	done
done

# A live session, from its crash: the history so far is replayed.
p="$progs/values"
full "$p" 0 counter
{ echo 'continue'; commands 1 counter; } >"$work/cmds"
run_gdb live 2 "$ptrr" gdb --backend=soft --record-from-start --batch -- "$p"
same live

# watch-reverse.exp's loop (tests/progs/watchloop, -O0): the value
# before the last store is the loop's, not the one count has at the end.
p="$progs/watchloop"
record loop "$p"
full "$p" 0 ival3
for hw in 1 0; do
	commands "$hw" ival3 >"$work/cmds"
	run_gdb loop 1 "$ptrr" replay --batch "$work/loop.ptrr"
	same loop
	{ echo 'continue'; commands "$hw" ival3; } >"$work/cmds"
	run_gdb loop_live 2 "$ptrr" gdb --backend=soft --record-from-start \
		--batch -- "$p"
	same loop_live
done

# Stops gdb goes on from: back through tests/progs/watchfog's 400 rep
# strings, each a write that cannot be ruled out where the watched value
# is unknown on both sides.  ptrr passes over them itself: gdb shows the
# same as when every stop goes to it (PTRR_WATCH_PASS=0), with 2 or so
# watchpoint stops on the wire instead of 400, and pt info counts them.
rm -rf "$work/fog.ptrr"
env -i PATH="$PATH" HOME="$work" "$ptrr" record --backend=soft \
	--start=main -o "$work/fog.ptrr" -- "$progs/watchfog" >/dev/null 2>&1
[ -d "$work/fog.ptrr" ] || fail "watchfog: no recording"
printf '%s\n' 'set pagination off' 'set debug remote 1' 'watch target' \
	reverse-continue reverse-continue reverse-continue reverse-continue \
	'monitor pt info' >"$work/cmds"
run_gdb fog 1 "$ptrr" replay --batch "$work/fog.ptrr"
run_env=PTRR_WATCH_PASS=0
run_gdb fog_all 1 "$ptrr" replay --batch "$work/fog.ptrr"
run_env=
for f in fog fog_all; do
	grep -v '^ *\[remote\]\|passed over' "$work/$f" >"$work/$f.shown"
	grep -c 'Packet received: T05.*watch:' "$work/$f" >"$work/$f.n"
done
cmp -s "$work/fog.shown" "$work/fog_all.shown" ||
	fail "watchfog: gdb shows other stops when ptrr passes over some:" \
		"$(diff "$work/fog_all.shown" "$work/fog.shown" | head -n 8)"
grep -q '^New value = <unreadable>' "$work/fog.shown" ||
	fail "watchfog: the value never became unknown: $(tail -n 5 "$work/fog.shown")"
[ "$(cat "$work/fog_all.n")" -ge 400 ] && [ "$(cat "$work/fog.n")" -lt 10 ] ||
	fail "watchfog: $(cat "$work/fog.n") watchpoint stops sent, " \
		"$(cat "$work/fog_all.n") with every stop sent"
grep -q 'Watchpoint stops passed over .*: [1-9]' "$work/fog" ||
	fail "watchfog: pt info does not count the stops passed over"

# Writes that cannot be bounded: a rep string, a read(2).
p="$progs/watchrep"
for arg in '' read; do
	record rep "$p" $arg
	printf '%s\n' 'set pagination off' 'echo @@ watch\n' 'watch target' \
		'reverse-continue' 'echo @@ info\n' 'monitor pt info' \
		>"$work/cmds"
	run_gdb rep 1 "$ptrr" replay --batch "$work/rep.ptrr"
	case $arg in
	# read(2) is system call 0: libc's read sets it with xor, a
	# constant the value recovery follows (HIST_EFF_SET).
	read) why='system call 0 at 0x[0-9a-f]* may write it' ;;
	*) why='the instruction at 0x[0-9a-f]* writes memory its operands do not bound' ;;
	esac
	grep -q "^ptrr: the watched memory may have been written here: $why" \
		"$work/rep" || fail "watchrep $arg: no console message:" \
		"$(stops "$work/rep" | head -n 8)"
	sed -n '/^@@ info/,$p' "$work/rep" | grep -q "The last watchpoint stop is where the watched memory may have been written: $why" ||
		fail "watchrep $arg: pt info does not say why"
	# Stopped there: at the rep string, in read().
	case $arg in
	read) stops "$work/rep" | grep -q '__GI___libc_read\|in read' ;;
	*) stops "$work/rep" | grep -q 'rep stosb' ;;
	esac || fail "watchrep $arg: not stopped at the write:" \
		"$(stops "$work/rep" | head -n 8)"
	# The values shown are record full's, or unknown.  Record full steps
	# a rep string an iteration at a time and stops between two of them
	# (one byte written): ptrr's instruction is the whole string, so the
	# value before it is the one the program stored before, 1.
	printf '%s\n' 'set pagination off' 'set can-use-hw-watchpoints 0' \
		'echo @@ watch\n' 'watch target' 'reverse-continue' \
		>"$work/cmds.rep"
	{ echo 'set startup-with-shell off'; echo 'break main'
	  echo "run $arg"; echo 'record full'; echo 'continue'
	  echo 'delete'; cat "$work/cmds.rep"; } >"$work/cmds"
	run_gdb full 1 "$GDB" -nx -batch "$p"
	for v in Old New; do
		pv=$(stops "$work/rep" | grep "^$v value = " | head -n 1)
		fv=$(stops "$work/full" | grep "^$v value = " | head -n 1)
		[ "$arg$v" != New ] || fv='New value = 1'
		case $pv in
		"$fv"|*'<unreadable>'|*'<unavailable>') ;;
		*) fail "watchrep $arg: '$pv', record full: '$fv'" ;;
		esac
	done
	cp "$work/rep" "$work/watchrep$arg.out"
done
finish
