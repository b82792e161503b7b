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
. "${top_srcdir:-..}/tests/lib.sh"
gdb_work_dir gdb-live-block

# session NAME [OPTIONS]: the session, its output in $work/NAME.out, its
# history in $work/NAME.ptrr.
session() {
	name=$1
	shift
	set -- "$@" --record-from-start -ex 'break *((char *) main + 6)' \
		-ex 'break *((char *) fact + 10)' \
		-ex 'break *((char *) fact + 19)'
	for i in 1 2 3 4 5 6 7; do
		set -- "$@" -ex continue -ex 'info symbol $pc'
	done
	PTRR_GDB=$GDB timeout 600 "$ptrr" gdb --batch "$@" \
		-ex "pt save $work/$name.ptrr" -ex 'pt info' \
		-- "$progs/recursion" >"$work/$name.out" 2>&1 </dev/null ||
		fail "$name: ptrr gdb failed: $(tail -n 3 "$work/$name.out")"
}
session block
session insn --soft-step=insn

want='main + 6
fact + 10
fact + 19
fact + 10
fact + 19
fact + 10
fact + 19'
for s in block insn; do
	got=$(sed -n 's/^\([a-z]* + [0-9]*\) in section \.text .*/\1/p' "$work/$s.out")
	[ "$got" = "$want" ] ||
		fail "$s: stopped at $(echo $got | tr '\n' ' '), not at $(echo $want)"
done
"$ptrr" insn-history --raw "$work/block.ptrr" >"$work/block.raw" 2>&1
"$ptrr" insn-history --raw "$work/insn.ptrr" >"$work/insn.raw" 2>&1
[ "$(wc -l <"$work/block.raw")" -gt 100000 ] ||
	fail "block: a history of $(wc -l <"$work/block.raw") lines"
cmp -s "$work/block.raw" "$work/insn.raw" ||
	fail "the histories differ: $(diff "$work/block.raw" "$work/insn.raw" | head -n 5)"

# counts NAME: "INSNS STEPS" from pt info's Stepping line.
counts() {
	sed -n 's/^Stepping: .*: \([0-9]*\) instructions, \([0-9]*\) of them single-stepped\.$/\1 \2/p' \
		"$work/$1.out"
}
set -- $(counts block)
[ $# = 2 ] && [ "$2" -lt $(($1 / 2)) ] ||
	fail "block: pt info says '$(grep '^Stepping' "$work/block.out")'"
grep -q '^Stepping: blocks' "$work/block.out" ||
	fail "block: not stepping in blocks"
set -- $(counts insn)
[ $# = 2 ] && [ "$2" -ge "$1" ] ||
	fail "insn: pt info says '$(grep '^Stepping' "$work/insn.out")'"

expect_exit 1 "--soft-step wants block or insn, not other" "$ptrr" serve \
	--stdio --soft-step=other -- "$progs/recursion"
finish
