# The program tests/gdb-values.sh and tests/gdb-values-regs.sh hold
# against gdb's `record full`, tests/progs/values: what is printed where
# (commands), the expression classes of the report (class), and record
# full's run (full_run, record_full).  Sourced after tests/lib.sh and
# tests/values-lib.sh, with $work, $GDB and $endl set.
stops=6
# What is printed where, and the objects whose addresses errors may name.
at_end='counter total heap_acc *heap_acc bad $pc $sp $rbp'
addrs_end='counter total heap_acc bad'
in_update='a i sq counter total heap_acc *heap_acc a->sum a->calls $pc $sp $rbp greeting squares[3] motto'
addrs_update='a i sq counter total heap_acc *heap_acc motto'
in_run='n local_n i counter *heap_acc $pc $sp'
addrs_run='n local_n i counter heap_acc *heap_acc'
# What is shown everywhere: it cannot change.
always='greeting squares[3]'

# What is printed at each line of a reverse-step walk from the last stop
# (through update, run and the calls of update before): what exists in
# the frame there, the rest gdb refuses alike in both runs (not
# compared).
steps=30
in_step='a i sq n local_n counter total *heap_acc $pc $sp $rbp'
addrs_step='a i sq n local_n counter total heap_acc *heap_acc'

# commands: the stops and what is printed at each; the first at the end
# (label $endl: "end" at the crash, where everything is known; "exit"
# at the exit system call, where the registers are and memory is not).
endl=end
commands() {
	echo 'set pagination off'
	show "$endl" "$at_end" "$addrs_end"
	stops_and_walk update "$in_update" "$addrs_update" "$in_run" \
		"$addrs_run"
}

# class LABEL EXPR: the expression class of EXPR printed at stop LABEL,
# for the report: registers, args (arguments and locals), globals, heap
# (through a pointer), const (read-only data); "up_" before it after `up`,
# "step_" in the reverse-step walk.
class() {
	case $2 in
	'$'*) c=registers ;;
	a|i|sq|n|local_n) c=args ;;
	counter|total|heap_acc|motto|bad) c=globals ;;
	'*heap_acc'|a-\>*) c=heap ;;
	*) c=const ;;
	esac
	case $1 in *up) c=up_$c ;; s[0-9]*) c=step_$c ;; esac
	echo "$c"
}

# full_run PROG OUT: gdb's record full of PROG ($prog_args its
# arguments) from main to the crash or the exit system call,
# the program's environment $work/env (NAME=VALUE lines, in order), then
# the commands of $work/cmds; its output in $work/OUT.
full_run() {
	{ echo 'set startup-with-shell off'
	  echo 'unset environment'
	  while IFS= read -r v; do
		echo "set environment ${v%%=*} ${v#*=}"
	  done <"$work/env"
	  echo 'break main'; echo "run $prog_args"; echo 'record full'
	  echo 'continue'
	  echo 'delete'
	  cat "$work/cmds"; } >"$work/cmds.full"
	mv "$work/cmds.full" "$work/cmds"
	run_gdb "$2" 1 "$GDB" -nx -batch "$1"
}

# record_full PROG OUT: full_run of commands' stops and values, and its
# "LABEL EXPR<TAB>VALUE" records in $work/OUT.rec.
record_full() {
	commands >"$work/cmds"
	full_run "$1" "$2"
	records "$work/$2" >"$work/$2.rec"
	grep -q "^$endl counter	9\$" "$work/$2.rec" ||
		fail "$2: record full did not reach the $endl"
}
