#!/bin/sh
# `ptrr record` with the software backend on every test program, from
# main: the bundle is written, the ground truth (one line per instruction
# the recorder single-stepped) starts at main, the crash is recorded as a
# fault before delivery; and decoding the bundle (`ptrr insn-history
# --raw`) gives back exactly the ground truth.  Also the one-line errors
# of DESIGN.md §4 (exit 1 usage, 2 runtime).
set -u
. "$top_srcdir/tests/lib.sh"
work_dir record-truth

# main_low NAME: the low 12 bits of main's address in tests/progs/NAME
# (the same in the file and in memory, page-aligned load bases).
main_low() {
	nm "tests/progs/$1" | awk '$3 == "main" { print substr($1, length($1) - 2) }'
}

# check_program NAME: records tests/progs/NAME and checks the result.
check_program() {
	b="$work/$1.ptrr" gt="$work/$1.gt"
	record_truth "$1" --start=main -- "tests/progs/$1" || return
	[ -f "$b/manifest.json" ] || { fail "$1: no bundle"; return; }
	[ -s "$gt" ] || { fail "$1: empty ground truth"; return; }
	first=$(head -n 1 "$gt")
	case "$first" in
	*"$(main_low "$1")") ;;
	*) fail "$1: ground truth starts at $first, not at main" ;;
	esac
	grep -v -q '^0x[0-9a-f]*$' "$gt" && fail "$1: malformed ground truth"
	"$ptrr" insn-history --raw "$b" >"$work/$1.raw" 2>"$work/$1.err" ||
		{ fail "$1: insn-history: $(cat "$work/$1.err")"; return; }
	awk '{ print $2 }' "$work/$1.raw" | cmp -s - "$work/$1.want" ||
		fail "$1: decoding differs from the ground truth:" \
			"$(awk '{ print $2 }' "$work/$1.raw" |
			   diff "$work/$1.want" - | head -n 4)"
}

# The plt program finds its library relative to the build directory.
cd "$top_builddir" || exit 99
for p in loops recursion fnptr jumptable tailcall plt longjmp crash; do
	check_program "$p"
done
grep -q '"fault"' "$work/crash.ptrr/manifest.json" ||
	fail "crash: the bundle does not record a fault"
grep -q '"exited"' "$work/loops.ptrr/manifest.json" ||
	fail "loops: the bundle does not record the exit"

# A whole run, from the dynamic loader's first instruction: its CPUID
# steps, vDSO and exit path decode exactly too.
record_truth whole -- tests/progs/loops
raw_addrs "$work/whole.ptrr" | cmp -s - "$work/whole.gt" ||
	fail "whole run: decoding differs"

# Interrupted (SIGINT to ptrr) in the middle of a whole run: the bundle
# ends where the program was, and still decodes to the ground truth.
"$ptrr" record --backend=soft --ground-truth="$work/int.gt" \
	-o "$work/int.ptrr" -- tests/progs/loops >"$work/int.log" 2>&1 &
sleep 1
kill -INT $!
wait $! || fail "interrupted: ptrr record failed: $(cat "$work/int.log")"
if grep -q '"interrupted"' "$work/int.ptrr/manifest.json"; then
	{ cat "$work/int.gt"; final_pc "$work/int.ptrr"; } >"$work/int.want"
	raw_addrs "$work/int.ptrr" | cmp -s - "$work/int.want" ||
		fail "interrupted: decoding differs"
else
	echo "note: the run ended before SIGINT; interrupt not checked"
fi

# Full mode past its cap: an overflow gap, and before it a prefix of the
# ground truth.
record_truth cap --start=main --mode=full --buffer-size=64 \
	-- tests/progs/loops
"$ptrr" insn-history --raw "$work/cap.ptrr" >"$work/cap.raw"
grep -q '\[gap\]' "$work/cap.raw" || fail "full mode cap: no gap"
sed '/\[gap\]/,$d' "$work/cap.raw" | awk '{ print $2 }' >"$work/cap.before"
[ -s "$work/cap.before" ] &&
	head -n "$(wc -l <"$work/cap.before")" "$work/cap.gt" |
	cmp -s - "$work/cap.before" ||
	fail "full mode cap: what precedes the gap is not the ground truth"

expect_exit 2 "cannot run \./nope: No such file or directory" \
	"$ptrr" record --backend=soft -o "$work/nope.ptrr" -- ./nope
expect_exit 2 "use --backend=soft" \
	"$ptrr" record --backend=perf -- tests/progs/loops
expect_exit 1 "Usage: ptrr record" \
	"$ptrr" record --mode=sideways -- tests/progs/loops
expect_exit 1 "Usage: ptrr record" "$ptrr" record --backend=soft
expect_exit 2 "no symbol 'no_such_fn'" \
	"$ptrr" record --backend=soft --start=no_such_fn -o "$work/x.ptrr" \
	-- tests/progs/loops

finish
