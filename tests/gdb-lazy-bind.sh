#!/bin/sh
# Frames entered by a jump that pushed more than a return address: the
# first call of a library function through the PLT (lazy binding) runs
# PLT0, which pushes two words and jumps to ld.so's
# _dl_runtime_resolve_xsavec; its call frame information counts them
# (CFA = rsp + 24 at its first instruction), and after resolving it
# jumps to the function with rsp back at the return address.
#
# tests/progs/plt calls ptrr_lib_twice twice, the first time through
# lazy binding.  Plain gdb runs it to that first call's first
# instruction and prints $sp (the truth).  ptrr replay of a recording
# of the same run goes to the same place (from the history's beginning,
# `continue` to `break *ptrr_lib_twice`), then one instruction back into
# _dl_runtime_resolve_xsavec's final jump: at both, $sp must be the
# truth or unavailable, and the frame's CFA ("frame at") the truth + 8
# (both frames return to main through the same return address) or not
# shown — never an address off by what PLT0 pushed.
. "${top_srcdir:-..}/tests/lib.sh"
gdb_work_dir gdb-lazy-bind
p="$progs/plt"

# The program's environment is PATH, HOME and PTRR_GDB in both runs, and
# neither randomizes addresses, so the stack is where it was.
env -i PATH="$PATH" HOME="$work" PTRR_GDB="$GDB" timeout 120 \
	"$GDB" -nx -batch -ex 'set startup-with-shell off' \
	-ex 'unset environment' -ex "set environment PATH $PATH" \
	-ex "set environment HOME $work" -ex "set environment PTRR_GDB $GDB" \
	-ex 'break *ptrr_lib_twice' -ex 'run' -ex 'p/x $sp' "$p" \
	>"$work/native.out" 2>&1
truth=$(awk '/^\$1 = 0x/ { print $3 }' "$work/native.out")
[ -n "$truth" ] || { fail "native: no \$sp: $(tail -n 3 "$work/native.out")"; finish; exit; }
cfa=$(printf '0x%x' $((truth + 8)))

env -i PATH="$PATH" HOME="$work" PTRR_GDB="$GDB" timeout 120 \
	"$ptrr" record --backend=soft -o "$work/plt.ptrr" -- "$p" \
	>"$work/record.out" 2>&1 || fail "record: $(tail -n 2 "$work/record.out")"
timeout 120 "$ptrr" replay --batch -ex 'pt goto begin' \
	-ex 'break *ptrr_lib_twice' -ex 'continue' \
	-ex 'echo @@ entry\n' -ex 'p/x $pc == ptrr_lib_twice' -ex 'p/x $sp' \
	-ex 'info frame' -ex 'reverse-stepi' \
	-ex 'echo @@ resolver\n' -ex 'x/i $pc' -ex 'p/x $sp' -ex 'info frame' \
	"$work/plt.ptrr" >"$work/replay.out" 2>&1 ||
	fail "replay: exit status $?: $(tail -n 3 "$work/replay.out")"

# check TAG: $sp and "frame at" after TAG.
check() {
	awk -v tag="@@ $1" '$0 == tag { on = 1; next } /^@@ / { on = 0 } on' \
		"$work/replay.out" >"$work/$1.out"
	sp=$(awk '/^\$[0-9]+ = / { v = $3 } END { print v }' "$work/$1.out")
	case $sp in
	"$truth"|'<unavailable>') ;;
	*) fail "$1: \$sp is '$sp', the program's was $truth" ;;
	esac
	at=$(sed -n 's/^Stack level 0, frame at \(0x[0-9a-f]*\).*/\1/p' \
		"$work/$1.out")
	case $at in
	"$cfa") ;;
	*) fail "$1: frame at '$at', the CFA is $cfa: $(cat "$work/$1.out")" ;;
	esac
}
grep -q '^\$[0-9]* = 0x1$' "$work/replay.out" ||
	fail "entry: not at ptrr_lib_twice: $(cat "$work/replay.out")"
grep -q '_dl_runtime_resolve.*jmp' "$work/replay.out" ||
	fail "resolver: not at the resolver's jump: $(cat "$work/replay.out")"
check entry
check resolver
finish
