#!/bin/sh
# `ptrr record` with the software backend on every test program, from
# main: the bundle is written, the ground truth (one line per instruction
# the recorder single-stepped) starts at main, the crash is recorded as a
# fault before delivery; and decoding the bundle (`ptrr insn-history
# --raw`) gives back exactly the ground truth.  Also the one-line errors
# of DESIGN.md §4 (exit 1 usage, 2 runtime).
set -u
ptrr="$top_builddir/ptrr"
work="$PWD/record-truth.dir"
rm -rf "$work" && mkdir -p "$work" || exit 99
trap 'rm -rf "$work"' EXIT
failures=0

fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

# main_low NAME: the low 12 bits of main's address in tests/progs/NAME
# (the same in the file and in memory, page-aligned load bases).
main_low() {
	nm "tests/progs/$1" | awk '$3 == "main" { print substr($1, length($1) - 2) }'
}

# expected NAME: what decoding NAME's bundle must list: the ground truth
# and, for a thread that did not exit (a crash, an interrupt), its final
# PC — the instruction it was about to execute, which history lists last.
expected() {
	cat "$work/$1.gt"
	grep -q '"fault"\|"interrupted"' "$work/$1.ptrr/manifest.json" &&
		sed -n 's/.*"rip": "\(0x[0-9a-f]*\)".*/\1/p' \
			"$work/$1.ptrr/manifest.json" | head -n 1
}

# check_program NAME: records tests/progs/NAME and checks the result.
check_program() {
	b="$work/$1.ptrr" gt="$work/$1.gt"
	"$ptrr" record --backend=soft --start=main --ground-truth="$gt" \
		-o "$b" -- "tests/progs/$1" >"$work/$1.log" 2>&1 ||
		{ fail "$1: ptrr record failed: $(cat "$work/$1.log")"; return; }
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
	expected "$1" >"$work/$1.want"
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
"$ptrr" record --backend=soft --ground-truth="$work/whole.gt" \
	-o "$work/whole.ptrr" -- tests/progs/loops >"$work/whole.log" 2>&1 ||
	fail "whole run: $(cat "$work/whole.log")"
"$ptrr" insn-history --raw "$work/whole.ptrr" | awk '{ print $2 }' |
	cmp -s - "$work/whole.gt" || fail "whole run: decoding differs"

# Interrupted (SIGINT to ptrr) in the middle of a whole run: the bundle
# ends where the program was, and still decodes to the ground truth.
"$ptrr" record --backend=soft --ground-truth="$work/int.gt" \
	-o "$work/int.ptrr" -- tests/progs/loops >"$work/int.log" 2>&1 &
sleep 1
kill -INT $!
wait $! || fail "interrupted: ptrr record failed: $(cat "$work/int.log")"
if grep -q '"interrupted"' "$work/int.ptrr/manifest.json"; then
	expected int >"$work/int.want"
	"$ptrr" insn-history --raw "$work/int.ptrr" | awk '{ print $2 }' |
		cmp -s - "$work/int.want" || fail "interrupted: decoding differs"
else
	echo "note: the run ended before SIGINT; interrupt not checked"
fi

# Full mode past its cap: an overflow gap, and before it a prefix of the
# ground truth.
"$ptrr" record --backend=soft --start=main --mode=full --buffer-size=64 \
	--ground-truth="$work/cap.gt" -o "$work/cap.ptrr" \
	-- tests/progs/loops >"$work/cap.log" 2>&1 ||
	fail "full mode cap: $(cat "$work/cap.log")"
"$ptrr" insn-history --raw "$work/cap.ptrr" >"$work/cap.raw"
grep -q '\[gap\]' "$work/cap.raw" || fail "full mode cap: no gap"
sed '/\[gap\]/,$d' "$work/cap.raw" | awk '{ print $2 }' >"$work/cap.before"
[ -s "$work/cap.before" ] &&
	head -n "$(wc -l <"$work/cap.before")" "$work/cap.gt" |
	cmp -s - "$work/cap.before" ||
	fail "full mode cap: what precedes the gap is not the ground truth"

# expect STATUS TEXT ARGS...: ptrr ARGS exits with STATUS, saying TEXT.
expect() {
	status=$1 text=$2
	shift 2
	"$ptrr" "$@" >"$work/out" 2>&1
	rc=$?
	[ "$rc" -eq "$status" ] || fail "ptrr $*: exit $rc, not $status"
	grep -q -- "$text" "$work/out" ||
		fail "ptrr $*: no '$text' in: $(cat "$work/out")"
}

expect 2 "cannot run ./nope: No such file or directory" \
	record --backend=soft -o "$work/nope.ptrr" -- ./nope
expect 2 "use --backend=soft" record --backend=perf -- tests/progs/loops
expect 1 "Usage: ptrr record" record --mode=sideways -- tests/progs/loops
expect 1 "Usage: ptrr record" record --backend=soft
expect 2 "no symbol 'no_such_fn'" \
	record --backend=soft --start=no_such_fn -o "$work/x.ptrr" \
	-- tests/progs/loops

[ "$failures" -eq 0 ] || exit 1
echo "record-truth: all passed"
