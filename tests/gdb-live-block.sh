#!/bin/sh
# A traced live session steps in blocks, as `ptrr record` does:
# straight-line code runs natively up to each branch, and stops are
# where single-stepping would have them.
#
# recursion under `ptrr gdb --record-from-start`, with breakpoints in
# the middle of a block (main+6, fact+10) and on the branch that ends one
# (fact+19, the recursive call), continued seven times, once with the
# default stepping and once with --soft-step=insn:
# - both stop at the same places, in the order the program runs them
#   (main+6, then fact+10 and fact+19 for n = 5, 4, 3);
# - the histories saved at the last stop (pt save) are the same,
#   instruction by instruction;
# - pt info says how it stepped: in blocks, fewer than half of the
#   instructions single-stepped; with --soft-step=insn, all of them.
# And a usage error for --soft-step=other.
#
# With $PTRR_TEST_BACKEND=qemu (tests/qemu-gdb-live-block.sh) the same
# stops, the history from the interpreter's entry, and pt info's count
# of the instructions QEMU's plugin traced, which the history holds
# (all of them but the breakpoint's, not run yet); --soft-step is refused
# in one line.
. "${top_srcdir:-..}/tests/lib.sh"
gdb_work_dir gdb-live-block
backend=--backend=${PTRR_TEST_BACKEND:-soft}

# session NAME [OPTIONS]: the session, its output in $work/NAME.out, its
# history in $work/NAME.ptrr.
session() {
	name=$1
	shift
	set -- "$@" $backend --record-from-start -ex 'break *((char *) main + 6)' \
		-ex 'break *((char *) fact + 10)' \
		-ex 'break *((char *) fact + 19)'
	for i in 1 2 3 4 5 6 7; do
		set -- "$@" -ex continue -ex 'info symbol $pc'
	done
	PTRR_GDB=$GDB timeout 600 "$ptrr" gdb --batch "$@" \
		-ex "pt save $work/$name.ptrr" -ex 'pt info' -ex 'info auxv' \
		-- "$progs/recursion" >"$work/$name.out" 2>&1 </dev/null ||
		fail "$name: ptrr gdb failed: $(tail -n 3 "$work/$name.out")"
}
session block
if [ "$backend" = --backend=qemu ]; then
	expect_exit 2 '^ptrr serve: --soft-step is for the software backend: .*\(use --backend=soft\)$' \
		"$ptrr" serve --stdio $backend --soft-step=insn -- \
		"$progs/recursion"
	steps=block
else
	session insn --soft-step=insn
	steps="block insn"
fi

want='main + 6
fact + 10
fact + 19
fact + 10
fact + 19
fact + 10
fact + 19'
for s in $steps; do
	got=$(sed -n 's/^\([a-z]* + [0-9]*\) in section \.text .*/\1/p' "$work/$s.out")
	[ "$got" = "$want" ] ||
		fail "$s: stopped at $(echo $got | tr '\n' ' '), not at $(echo $want)"
done
for s in $steps; do
	"$ptrr" insn-history --raw "$work/$s.ptrr" >"$work/$s.raw" 2>&1
done
# The history is the whole run, from the first instruction the program
# ran (the interpreter's entry: AT_BASE plus its ELF entry) through the
# program's own entry (AT_ENTRY). (Not a count of instructions: most
# are ld.so's, which compares every environment variable with each of
# its tunables' names: 90,724 instructions with the few variables of
# CI's env -i, 107,838 with the 40 or so of a developer's shell.)
auxv() {
	sed -n "s/^[0-9]* *$1 .* \(0x[0-9a-f]*\)\$/\1/p" "$work/block.out"
}
interp=$(readelf -lW "$progs/recursion" |
	sed -n 's/.*Requesting program interpreter: \(.*\)\]$/\1/p')
at_base=$(auxv AT_BASE)
at_entry=$(auxv AT_ENTRY)
interp_entry=$(readelf -hW "$interp" | sed -n 's/^ *Entry point address: *//p')
if [ -z "$interp" ] || [ -z "$at_base" ] || [ -z "$at_entry" ] ||
   [ -z "$interp_entry" ]; then
	fail "block: no interpreter ($interp, entry $interp_entry) or auxv (AT_BASE $at_base, AT_ENTRY $at_entry)"
else
	first=$(printf '1 0x%x' $((at_base + interp_entry)))
	[ "$(head -n 1 "$work/block.raw")" = "$first" ] ||
		fail "block: the history begins with '$(head -n 1 "$work/block.raw")', not '$first' ($interp's entry)"
	grep -q "^[0-9]* $at_entry\$" "$work/block.raw" ||
		fail "block: the program's entry $at_entry is not in the history"
fi

# counts NAME: "INSNS STEPS" from pt info's Stepping line.
counts() {
	sed -n 's/^Stepping: .*: \([0-9]*\) instructions, \([0-9]*\) of them single-stepped\.$/\1 \2/p' \
		"$work/$1.out"
}
if [ "$backend" = --backend=qemu ]; then
	traced=$(sed -n 's/^Tracing: qemu-x86_64 runs the program .*: \([0-9]*\) instructions\.$/\1/p' \
		"$work/block.out")
	[ -n "$traced" ] &&
	[ "$(($(wc -l <"$work/block.raw") - 1))" = "$traced" ] ||
		fail "block: the history holds $(wc -l <"$work/block.raw")" \
			"instructions, pt info says '$(grep '^Tracing' \
			"$work/block.out")'"
else
	cmp -s "$work/block.raw" "$work/insn.raw" ||
		fail "the histories differ: $(diff "$work/block.raw" "$work/insn.raw" | head -n 5)"
	set -- $(counts block)
	[ $# = 2 ] && [ "$2" -lt $(($1 / 2)) ] ||
		fail "block: pt info says '$(grep '^Stepping' "$work/block.out")'"
	grep -q '^Stepping: blocks' "$work/block.out" ||
		fail "block: not stepping in blocks"
	set -- $(counts insn)
	[ $# = 2 ] && [ "$2" -ge "$1" ] ||
		fail "insn: pt info says '$(grep '^Stepping' "$work/insn.out")'"
fi

expect_exit 1 "--soft-step wants block or insn, not other" "$ptrr" serve \
	--stdio --soft-step=other -- "$progs/recursion"
finish
