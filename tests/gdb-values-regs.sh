#!/bin/sh
# Registers recorded on the way (`ptrr record --regs-every=N`, the
# software backend) prove values in the past that the end state alone
# does not, and never a wrong one.
#
# tests/progs/values (-O0, and -O2 without frame pointers) is recorded
# twice by the software backend: without them (--regs-every=0, the
# hardware case) and with them every 64 instructions.  gdb stops at the
# end and six times in update() by reverse-continue, shows arguments,
# locals, globals, heap fields and registers there and in the caller,
# then walks back 30 lines with reverse-step (tests/values-prog.sh), on
# both recordings and on gdb's own `record full` of the same run.  Each
# value ptrr prints must be record full's (tests/values-lib.sh's judge:
# a test fails on any value that differs); with the registers, more of
# them must be available (as many at the crash, where the end state
# proves nearly all of the -O0 build's).  Run two ways: ending in a crash (memory
# recorded at the end), and in the exit system call (no memory at the
# end: what the recovery knows least of).  `pt info` at the last
# position says how much is known there, and names the next set of
# registers recorded on the way.
. "${top_srcdir:-..}/tests/lib.sh"
. "${top_srcdir:-..}/tests/values-lib.sh"
gdb_work_dir gdb-values-regs
set -f
. "${top_srcdir:-..}/tests/values-prog.sh"

printf 'PATH=%s\nHOME=%s\nPTRR_GDB=%s\n' "$PATH" "$work" "$GDB" >"$work/env"
for run in crash exit; do
	if [ $run = exit ]; then endl=exit prog_args=exit; else
		endl=end prog_args=; fi
	for prog in values_O0 values_nofp; do
		p="$progs/$prog"
		record_full "$p" full
		for every in 0 64; do
			bundle="$work/r$every.ptrr"
			rm -rf "$bundle"
			# shellcheck disable=SC2086
			env -i PATH="$PATH" HOME="$work" PTRR_GDB="$GDB" \
				"$ptrr" record --backend=soft \
				--regs-every=$every -o "$bundle" -- "$p" \
				$prog_args >"$work/rec$every" 2>&1
			[ -d "$bundle" ] || fail "$prog $run: no recording" \
				"($(tail -n 1 "$work/rec$every"))"
			set +f
			if [ "$every" = 0 ]; then
				! ls "$bundle"/threads/*.regs >/dev/null 2>&1 ||
					fail "$prog $run: registers recorded" \
					     "with --regs-every=0"
			else
				ls "$bundle"/threads/*.regs >/dev/null 2>&1 ||
					fail "$prog $run: no threads/TID.regs"
			fi
			set -f
			{ commands; echo 'monitor pt info'; } >"$work/cmds"
			run_gdb "r$every" 1 "$ptrr" replay --batch "$bundle"
			info=$(grep '^Value recovery here: ' "$work/r$every")
			case $every:$info in
			0:*'recorded on the way'*|*:) fail "$prog $run:" \
				"pt info at the last stop: '$info'" ;;
			64:*'recorded on the way (the next at instruction'*) ;;
			64:*) fail "$prog $run: pt info at the last stop" \
				"names no registers recorded on the way" \
				"after it: '$info'" ;;
			esac
			records "$work/r$every" >"$work/r$every.rec"
			judge "r$every" full >"$work/judge$every"
			sed "s/^/$prog $run /" "$work/judge$every"
			eval "eq_$every=\$(sed -n \
				's/.*: \([0-9]*\) values equal.*/\1/p' \
				\"\$work/judge$every\")"
			cp "$work/r$every" "$work/$prog.$run.r$every.out"
		done
		# shellcheck disable=SC2154
		echo "$prog $run: $eq_0 values equal record full's without" \
		     "the registers recorded on the way, $eq_64 with them"
		# At the crash the end state proves most already (-O0: all
		# but what the walk cannot prove from registers either).
		[ "$eq_64" -gt "$eq_0" ] ||
			{ [ $run = crash ] && [ "$eq_64" -eq "$eq_0" ]; } ||
			fail "$prog $run: $eq_64 values available with the" \
			     "registers recorded on the way, $eq_0 without"
	done
done
finish
