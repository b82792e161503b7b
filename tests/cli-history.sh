#!/bin/sh
# `ptrr info`, `ptrr insn-history` and `ptrr call-history` on real
# recordings of the test programs (software backend): the GDB-style and
# raw listings have their shapes and agree with each other and with
# `info`, and the call history has the calls each program makes.
# (record-truth.sh compares the raw listing with the ground truth.)
set -u
. "$top_srcdir/tests/lib.sh"
work_dir cli-history
tab=$(printf '\t')

# check_listings NAME: the instruction listings of NAME's recording.
check_listings() {
	b="$work/$1.ptrr"
	"$ptrr" insn-history --raw "$b" >"$work/$1.raw" || fail "$1: --raw"
	awk '$1 != NR' "$work/$1.raw" | grep -q . &&
		fail "$1: --raw entries are not numbered 1, 2, 3..."
	"$ptrr" insn-history "$b" >"$work/$1.gdb" || fail "$1: insn-history"
	if grep -Evq "^[0-9]+$tab(   |=> )0x[0-9a-f]{16}( <[^>]+\+[0-9]+>)?:$tab.+\$|^[0-9]+$tab\[decode error \(-?[0-9]+\): .+\]\$" \
		"$work/$1.gdb"; then
		fail "$1: a line not in GDB's format:" \
			"$(grep -Ev "^[0-9]+$tab(   |=> )0x|decode error" \
				"$work/$1.gdb" | head -1)"
	fi
	sed -e 's/^\([0-9]*\)\t...0x0*\([0-9a-f]*\).*/\1 0x\2/' \
	    -e 's/^\([0-9]*\)\t\[decode error.*/\1 gap/' "$work/$1.gdb" \
		>"$work/$1.gdb.short"
	sed 's/ \[gap\] .*/ gap/' "$work/$1.raw" | cmp -s - "$work/$1.gdb.short" ||
		fail "$1: the default and --raw listings disagree"
	n=$(grep -vc ' \[gap\] ' "$work/$1.raw")
	"$ptrr" info "$b" | grep -q "Recorded $n instructions in [0-9]* functions" ||
		fail "$1: info does not count $n instructions"
	"$ptrr" insn-history --raw --from=3 --count=4 "$b" >"$work/part"
	sed -n 3,6p "$work/$1.raw" | cmp -s - "$work/part" ||
		fail "$1: --from=3 --count=4 is not lines 3-6"
}

# check_calls NAME: the call segments tile the history: ranges follow
# each other from 1 to the last entry.
check_calls() {
	b="$work/$1.ptrr"
	size=$(wc -l <"$work/$1.raw")
	"$ptrr" call-history --insn-range "$b" >"$work/$1.calls" ||
		fail "$1: call-history --insn-range"
	awk -v size="$size" -F'\t' '
		BEGIN { next_first = 1 }
		$2 ~ /^\[decode error/ { gap = 1; next }
		{ split($3, r, /[ ,]/)
		  if (gap ? r[2] < next_first : r[2] != next_first) bad = bad " " $1
		  next_first = r[3] + 1; gap = 0 }
		END { if (!gap && next_first != size + 1) bad = bad " end"
		      if (bad) { print bad; exit 1 } }' "$work/$1.calls" >/dev/null ||
		fail "$1: call segments do not tile 1..$size"
}

# names NAME: the function names of NAME's call history, one per line.
names() {
	"$ptrr" call-history "$work/$1.ptrr" | cut -f2 | sed 's/\..*//'
}

# The plt program finds its library relative to the build directory.
cd "$top_builddir" || exit 99
for p in loops recursion fnptr jumptable tailcall plt longjmp crash; do
	record $p --start=main -- "tests/progs/$p" || exit 1
	check_listings $p
	check_calls $p
done

# recursion: main calls fact five deep and returns to main; with --indent
# each level is two more spaces (gdb's /c).
"$ptrr" call-history --indent "$work/recursion.ptrr" >"$work/rec.calls"
awk -F'\t' '
	{ name = $2; sub(/^ */, "", name); depth[NR] = (length($2) - length(name)) / 2
	  fn[NR] = name }
	END { for (i = 1; i <= NR && fn[i] != "main"; i++) ;
	      want = "1 2 3 4 5 4 3 2 1 0"; got = ""
	      for (j = 1; j <= 10; j++) got = got (j > 1 ? " " : "") depth[i + j] - depth[i]
	      ok = got == want && fn[i + 10] == "main"
	      for (j = 1; j <= 9; j++) ok = ok && fn[i + j] == "fact"
	      if (!ok) { print got; exit 1 } }' "$work/rec.calls" >/dev/null ||
	fail "recursion: call-history --indent is not main > fact x5 > main:" \
		"$(cat "$work/rec.calls")"
"$ptrr" call-history --lines "$work/recursion.ptrr" |
	grep -Eq "${tab}fact${tab}at .*recursion\.c:[0-9]+,[0-9]+$" ||
	fail "recursion: call-history --lines has no fact line range"

# tailcall: leaf is entered from middle by a jump, three times.
[ "$(names tailcall | grep -A1 '^middle$' | grep -c '^leaf$')" = 3 ] ||
	fail "tailcall: middle -> leaf not seen three times"

# fnptr: each operation is called through the table.
for f in add sub mul; do
	names fnptr | grep -qx $f || fail "fnptr: $f not in the call history"
done

# crash: the stop reason and the function that faulted.
"$ptrr" info "$work/crash.ptrr" |
	grep -Eq '^Stop reason: stopped by SIGSEGV at 0x[0-9a-f]+ \(fault address 0x10\)$' ||
	fail "crash: info has no SIGSEGV stop reason"
[ "$(names crash | grep -v '^??$' | tail -1)" = lookup ] ||
	fail "crash: the last function called is not lookup"

# info's Arguments: words as the shell reads them back, quoted only where
# needed (a jq filter with spaces and a pipe was printed bare).
set -- "$top_builddir/tests/progs/greet" 'a b' "it's" '.a | map(.*2)' '$HOME' '' plain --opt=v
"$ptrr" record --start=main -o "$work/args.ptrr" -- "$@" >/dev/null 2>&1 ||
	fail "args: ptrr record failed"
line=$("$ptrr" info "$work/args.ptrr" | sed -n 's/^Arguments: //p')
case $line in
*" 'a b' "*" plain --opt=v") ;;
*) fail "args: Arguments: $line" ;;
esac
want=$(printf '<%s>' "$@")
eval "set -- $line"
[ "$(printf '<%s>' "$@")" = "$want" ] ||
	fail "args: Arguments: $line reads back as $(printf '<%s>' "$@")," \
	     "not $want"

finish
