#!/bin/sh
# Values in the past across writes whose address the value recovery
# cannot compute exactly (issue 19): tests/progs/valuesfar, recorded by
# the software backend without registers on the way (the hardware
# case), ending in a crash.  Between fill()'s entry and the end, deep()
# recurses five levels deep, each writing pad[n] at rbp - 0x50 + n, n
# sign-extended from 32 bits (movslq) and set five calls up: the walk
# back cannot prove n, but its bounds — within 2^31 of the frame's
# rbp, the stack — and must make only that unknown, not the heap and
# the globals far below (before, all memory was unknown before such a
# write).  At fill()'s entry the heap fields add_run() wrote and a
# global must be shown with their values.
. "${top_srcdir:-..}/tests/lib.sh"
gdb_work_dir gdb-values-far

p=$progs/valuesfar
bundle=$work/far.ptrr
env -i PATH="$PATH" HOME="$work" "$ptrr" record --backend=soft \
	--regs-every=0 -o "$bundle" -- "$p" >"$work/rec" 2>&1
[ -d "$bundle" ] || { fail "no recording ($(tail -n 1 "$work/rec"))"; finish
		      exit; }

# show LABEL EXPR: the value of EXPR on the line after "@@ LABEL".
show() {
	printf 'echo @@ %s\\n\noutput %s\necho \\n\n' "$1" "$2"
}
{ echo 'set pagination off'
  echo 'break fill'
  echo 'reverse-continue'
  show fill_n 'blk->n'
  show fill_buf 'blk->buf[3]'
  show fill_verbosity verbosity
} >"$work/cmds"
run_gdb replay 1 "$ptrr" replay --batch "$bundle"

# expect LABEL VALUE: what gdb printed for LABEL is VALUE.
expect() {
	got=$(awk -v l="@@ $1" '$0 == l { getline; print; exit }' \
		"$work/replay")
	[ "$got" = "$2" ] || fail "$1: '$got', not '$2'"
}
grep -q 'Breakpoint 1, fill' "$work/replay" ||
	fail "no stop in fill: $(tail -n 3 "$work/replay")"
# At fill(): add_run() added five bytes to the three; buf[3] is its
# first ('a').
expect fill_n 8
expect fill_buf "97 'a'"
expect fill_verbosity 7
finish
