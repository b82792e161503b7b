#!/bin/sh
# Never a wrong value in the past: what gdb shows through ptrr at past
# positions, held against gdb's own `record full` of the same run.
#
# tests/progs/values (built -O2 with frame pointers, -O0, and -O2
# without) updates globals and a heap struct nine times in a loop, then
# crashes.  gdb stops at the crash, then reverse-continues to the
# breakpoint in update() six times (i = 9 .. 4); at each stop it prints
# arguments and locals, globals, heap fields and registers, then the
# same in the caller after `up`; then it reverse-steps 30 lines from the
# last stop (through update, run and the call of update before),
# printing at each line.  The same commands run three ways: on
# `ptrr replay` of a recording, in a live `ptrr gdb --record-from-start`
# session, and in plain gdb with `record full` from main (which knows
# every past value).  All three run the program with the same
# environment and without address randomisation, so addresses agree.
#
# Each value ptrr prints must be record full's at the same stop; what it
# cannot prove must show as unavailable: `<unavailable>` (wholly or in
# part, the rest equal), `<optimized out>`, "value is not available", or
# "Cannot access memory at address A" where A lies in an object the
# expression reads (record full's address of it at that stop), never an
# address ptrr made up.  At the crash every value must be record full's,
# and so must read-only data (a string, a const array) everywhere.  Of
# the crash recordings' values, at least 90% must equal record full's,
# in all and in each expression class (issue 19's bar, with nothing but
# the end state: the hardware case, recorded with --regs-every=0;
# tests/gdb-values-regs.sh adds the registers recorded on the way).
. "${top_srcdir:-..}/tests/lib.sh"
. "${top_srcdir:-..}/tests/values-lib.sh"
gdb_work_dir gdb-values
set -f

. "${top_srcdir:-..}/tests/values-prog.sh"

# recovered NAME FULL: what recovery (replay/recover.c) must prove at the
# first past stop, the 9th call of update(): counter and total, written
# since only by counter++ and total += sq, which its model undoes,
# equal record full's.
# At -O2 also the loop counter i, at every stop and after `up`.
# At -O0 also update's argument a at the 8th call (p2): its stack slot
# was written since by the 9th call's prologue, so only what the 8th
# call's own prologue stored there proves it (the pointer run loaded
# from heap_acc).
# must_equal NAME FULL LABEL EXPR WHAT: EXPR at stop LABEL of NAME is
# record full's.
must_equal() {
	v=$(grep -F "$3 $4	" "$work/$1.rec" | cut -f 2-)
	f=$(grep -F "$3 $4	" "$work/$2.rec" | cut -f 2-)
	[ -n "$f" ] && [ "$v" = "$f" ] ||
		fail "$1: $5 is '$v', record full: '$f' (not recovered)"
}

recovered() {
	for e in counter total; do
		must_equal "$1" "$2" p1 "$e" "$e at the 9th call"
	done
	if [ "$prog" != values_O0 ]; then
		# -O2: the loop counter i, in esi, at every stop and in the
		# caller after `up`: the walk back undoes each `add $1,%esi`
		# for the low half, and the upper half is zero after the
		# 32-bit write before it; the caller's esi is its callee's,
		# which nothing wrote since the call.
		# So are total and the heap field a->sum at every stop:
		# `total += sq` and `a->sum += sq + i` undone with sq
		# computed forward from that i (a 32-bit multiply and add
		# need only the low half of esi).
		for k in 1 2 3 4 5 6; do
			must_equal "$1" "$2" "p$k" i "i at stop p$k"
			must_equal "$1" "$2" "p${k}up" i "i at stop p${k}up"
			must_equal "$1" "$2" "p$k" total "total at stop p$k"
			must_equal "$1" "$2" "p$k" a-\>sum "a->sum at stop p$k"
		done
		return 0
	fi
	must_equal "$1" "$2" p2 a "a at the 8th call"
}

prog_args=

for prog in values values_O0 values_nofp; do
	p="$progs/$prog"

	# ptrr replay of a recording, against record full of the same run.
	printf 'PATH=%s\nHOME=%s\nPTRR_GDB=%s\n' "$PATH" "$work" "$GDB" \
		>"$work/env"
	record_full "$p" full
	rm -rf "$work/$prog.ptrr"
	env -i PATH="$PATH" HOME="$work" PTRR_GDB="$GDB" \
		"$ptrr" record --backend=soft --regs-every=0 \
		-o "$work/$prog.ptrr" -- "$p" \
		>/dev/null 2>&1
	[ -d "$work/$prog.ptrr" ] || fail "$prog: no recording"
	commands >"$work/cmds"
	run_gdb replay 1 "$ptrr" replay --batch "$work/$prog.ptrr"
	records "$work/replay" >"$work/replay.rec"
	judge replay full
	available "$prog replay"
	recovered replay full

	# A live session traced from the start, from its crash, against
	# record full with the environment the live program had (gdb, which
	# starts ptrr's server, adds to it).
	{ echo 'continue'
	  echo 'set print elements unlimited'
	  echo 'set print repeats unlimited'
	  k=0
	  while [ "$k" -lt 32 ]; do
		printf 'echo @@env \\n\noutput environ[%d]\necho \\n\n' "$k"
		k=$((k + 1))
	  done
	  commands; } >"$work/cmds"
	run_gdb live 2 "$ptrr" gdb --backend=soft --record-from-start \
		--batch -- "$p"
	awk '/^@@env / && !done { getline
	     if (sub(/^0x[0-9a-f]+ "/, "") && sub(/"$/, "")) print
	     else done = 1 }' "$work/live" >"$work/env"
	grep -q '^PTRR_GDB=' "$work/env" ||
		fail "$prog: the live program's environment was not read"
	record_full "$p" full_live
	records "$work/live" >"$work/live.rec"
	judge live full_live
	available "$prog live"
	recovered live full_live
	for n in full replay full_live live; do
		cp "$work/$n" "$work/$prog.$n.out"
	done
done

# A program that exits: at the end of its history, the exit_group system
# call, the registers read as it left are known (all but rcx, r11 and the
# flags) and writable memory is not (it was not recorded); every frame
# and every past stop is then proven from them, so no value names an
# address ptrr made up, and $sp and $rbp at the end equal record full's.
endl=exit prog_args=exit
printf 'PATH=%s\nHOME=%s\nPTRR_GDB=%s\n' "$PATH" "$work" "$GDB" >"$work/env"
for prog in values_O0 values_nofp; do
	p="$progs/$prog"
	record_full "$p" exit_full
	rm -rf "$work/exit.ptrr"
	env -i PATH="$PATH" HOME="$work" PTRR_GDB="$GDB" \
		"$ptrr" record --backend=soft --regs-every=0 \
		-o "$work/exit.ptrr" -- "$p" exit \
		>/dev/null 2>&1
	[ -d "$work/exit.ptrr" ] || fail "$prog exit: no recording"
	commands >"$work/cmds"
	run_gdb exit 1 "$ptrr" replay --batch "$work/exit.ptrr"
	records "$work/exit" >"$work/exit.rec"
	judge exit exit_full
	for r in '$pc' '$sp' '$rbp'; do
		grep -qxF "exit $r	$(grep -F "exit $r	" "$work/exit_full.rec" |
				      cut -f 2-)" "$work/exit.rec" ||
			fail "$prog exit: $r at the exit differs from record" \
			     "full's: $(grep -F "exit $r	" "$work/exit.rec")"
	done
	cp "$work/exit" "$work/$prog.exit.out"
	cp "$work/exit_full" "$work/$prog.exit_full.out"
done
endl=end prog_args=

# Frames outside the recorded stretch: recorded from update's first call
# (--start=update), the program's callers of it (run, main, and past
# main __libc_start_call_main, __libc_start_main_impl, _start) are in
# the history only by their returns, or not at all; they are alive at
# the crash, so a past backtrace shows them as gdb does: the same
# functions at the same return addresses as record full's at that stop.
# bt_frames FILE: "#N PC FUNCTION" of each frame of the bt after "@@ bt".
bt_frames() {
	awk '/^@@ bt/ { on = 1; next } on && /^#/ {
		pc = ($2 ~ /^0x/) ? $2 : "-"; f = ($2 ~ /^0x/) ? $4 : $2
		print $1, pc, f }' "$1"
}
# Memory in a process of several threads: in tests/progs/loadrace the
# reader loads `shared` (1), the writer stores 2, the reader loads it
# again and crashes with 2 in a register.  Walking back, the second load
# says what `shared` held then, not at the first load: `a` right after
# the first load is 1 or unavailable, never 2 (it was 2 before, the
# walk having given the first load the second one's value).
rm -rf "$work/race.ptrr"
"$ptrr" record --backend=soft -o "$work/race.ptrr" -- "$progs/loadrace" \
	>"$work/race.log" 2>&1
line=$(grep -n 'after the first load' "$top_srcdir/tests/progs/loadrace.c" |
	cut -d: -f1)
printf '%s\n' "break loadrace.c:$line" 'reverse-continue' 'echo @@ a\n' \
	'output a' 'echo \n' 'output $rax' 'echo \n' >"$work/cmds"
run_gdb race 1 "$ptrr" replay --batch "$work/race.ptrr"
race=$(awk '/^@@ a/ { on = 1; next } on && n++ < 2' "$work/race" |
	tr '\n' ' ')
case $race in
"1 1 "|"<unavailable> <unavailable> ") ;;
*) fail "loadrace: a after the first load is '$race', not 1 or <unavailable>:" \
	"$(tail -n 5 "$work/race")" ;;
esac

printf 'PATH=%s\nHOME=%s\nPTRR_GDB=%s\n' "$PATH" "$work" "$GDB" >"$work/env"
for prog in values_nofp values_O0; do
	p="$progs/$prog"
	rm -rf "$work/start.ptrr"
	env -i PATH="$PATH" HOME="$work" PTRR_GDB="$GDB" \
		"$ptrr" record --backend=soft --start=update \
		-o "$work/start.ptrr" -- "$p" >/dev/null 2>&1
	printf '%s\n' 'set backtrace past-main on' 'break update' \
		'reverse-continue' 'reverse-continue' 'echo @@ bt\n' 'bt' \
		>"$work/cmds"
	run_gdb start 1 "$ptrr" replay --batch "$work/start.ptrr"
	full_run "$p" start_full
	bt_frames "$work/start" >"$work/start.bt"
	bt_frames "$work/start_full" >"$work/start_full.bt"
	grep -q ' _start$' "$work/start_full.bt" ||
		fail "$prog --start=update: record full's bt has no _start"
	cmp -s "$work/start.bt" "$work/start_full.bt" ||
		fail "$prog --start=update: bt differs from record full's:" \
			"$(cat "$work/start.bt")" "--- record full:" \
			"$(cat "$work/start_full.bt")"
done
finish
