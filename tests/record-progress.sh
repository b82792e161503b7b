#!/bin/sh
# ptrr record's progress: on a terminal, a line rewritten in place while
# the program runs (tests/record-progress.exp, through a pty); with
# stderr not a terminal, none: only the summary, whose rates never read
# "0 .../s" (a recording that never single-steps said "0 steps/s").
set -u
. "$top_srcdir/tests/lib.sh"
work_dir record-progress
progs="$top_builddir/tests/progs"

# summary_ok NAME: $work/NAME.err is the summary alone, with no progress
# line, no carriage return, and no rate of 0.
summary_ok() {
	if grep -q "$(printf '\r')" "$work/$1.err" ||
	   grep -q 'elapsed' "$work/$1.err"; then
		fail "$1: progress on stderr, not a terminal: $(cat -A "$work/$1.err" | head -n 3)"
	fi
	grep -Eq '^ptrr record: [0-9]+ instructions in [0-9]+ threads?, [0-9]+ bytes of trace \([^)]*\) in [0-9.]+ s( \([0-9.]+ instructions/s(, [0-9.]+ steps/s)?\))?: ' \
		"$work/$1.err" || fail "$1: no summary: $(cat "$work/$1.err")"
	grep -Eq '[ (]0 [a-z]+/s' "$work/$1.err" &&
		fail "$1: a rate of 0: $(grep -E ' 0 [a-z]+/s' "$work/$1.err")"
}

"$ptrr" record --backend=soft -o "$work/loops.ptrr" -- "$progs/loops" \
	>/dev/null 2>"$work/loops.err" || fail "loops: ptrr record failed"
summary_ok loops
"$ptrr" record --backend=soft --start=main -o "$work/recursion.ptrr" -- \
	"$progs/recursion" >/dev/null 2>"$work/recursion.err" ||
	fail "recursion: ptrr record failed"
summary_ok recursion
# 9 s for four single-steps: their rate, under 0.5 a second, read "0
# steps/s".
"$ptrr" record --backend=soft --start=main -o "$work/nap.ptrr" -- \
	"$progs/nap" 9 >/dev/null 2>"$work/nap.err" ||
	fail "nap: ptrr record failed"
summary_ok nap

if command -v expect >/dev/null; then
	TERM=xterm expect "$top_srcdir/tests/record-progress.exp" "$ptrr" \
		"$work/spin.ptrr" "$progs/spin" >"$work/tty.log" 2>&1 ||
		fail "on a terminal: $(tail -n 3 "$work/tty.log")"
else
	echo "expect is not installed: the terminal's part skipped"
fi
finish
