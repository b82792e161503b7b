#!/bin/sh
# The decoded history of real recordings of the test programs, checked
# exactly: the call tree of each program's main (against trees written
# from the programs' source), a trace that starts in the middle of a
# function, a snapshot ring that wrapped (garbage before the first PSB), a
# corrupted byte in the middle of a trace, and a module that went missing
# after recording.  Instruction sequences are checked against the ground
# truth the recorder single-stepped.
set -u
. "$top_srcdir/tests/lib.sh"
work_dir history-fidelity
expected="$top_srcdir/tests/expected"
cd "$top_builddir" || exit 99

# main_calls BUNDLE: call-history --indent up to main's return, names only.
main_calls() {
	"$ptrr" call-history --indent "$1" | cut -f2 |
		sed '/^__libc_start_call_main$/,$d'
}

# check_tree NAME FILTER: records tests/progs/NAME from main; its decoded
# instructions must be the ground truth and its main's calls, passed
# through FILTER, tests/expected/NAME.calls.
check_tree() {
	record_truth "$1" --start=main -- "tests/progs/$1" || return
	raw_addrs "$work/$1.ptrr" | cmp -s - "$work/$1.want" ||
		fail "$1: decoded instructions differ from the ground truth"
	main_calls "$work/$1.ptrr" | eval "$2" >"$work/$1.calls"
	diff -u "$expected/$1.calls" "$work/$1.calls" >"$work/$1.diff" ||
		fail "$1: call tree differs: $(head -n 12 "$work/$1.diff")"
}

for p in loops recursion fnptr jumptable tailcall; do
	check_tree "$p" cat
done
# Through the PLT into a shared library: the library's functions in the
# order the program calls them (the dynamic linker's lazy binding between
# them is glibc's business).
check_tree plt "sed 's/^ *//' | grep -E '^(main|ptrr_lib_twice|ptrr_lib_sum)\$'"
# longjmp from four frames down lands in main's own instance again.
check_tree longjmp "sed 's/deep\\..*/deep/' | grep -E '^ *(main|deep)\$'"

# Tracing that starts in the middle of a function (after fact's recursive
# call returns): the history returns up through frames it never saw being
# called, each one level up, to main.
after_call=$(objdump -d --no-show-raw-insn tests/progs/recursion | awk '
	/^[0-9a-f]+ <fact>:/ { start = $1; infact = 1; next }
	infact && found { sub(":", "", $1); print start, $1; exit }
	infact && /call.*<fact>/ { found = 1 }
	/^$/ { infact = 0 }' | { read -r a b && echo $((0x$b - 0x$a)); })
[ -n "$after_call" ] || fail "mid-function start: no recursive call in fact"
record_truth mid --start="fact+$after_call" -- tests/progs/recursion
raw_addrs "$work/mid.ptrr" | cmp -s - "$work/mid.want" ||
	fail "mid-function start: decoded instructions differ"
main_calls "$work/mid.ptrr" >"$work/mid.calls"
diff -u "$expected/recursion-mid.calls" "$work/mid.calls" >"$work/mid.diff" ||
	fail "mid-function start: call tree differs: $(cat "$work/mid.diff")"

# fnptr with an argument makes 10,000 indirect calls: tens of KiB of trace.
# Into an 8 KiB snapshot ring (the smallest, two PSB periods) it wraps
# several times, the saved trace starts with a partial packet, and what
# decodes is exactly the end of the ground truth, from the first PSB on.
record_truth wrap --buffer-size=8192 --start=main -- tests/progs/fnptr long
raw_addrs "$work/wrap.ptrr" >"$work/wrap.raw"
n=$(wc -l <"$work/wrap.raw")
total=$(wc -l <"$work/wrap.want")
[ "$n" -gt 100 ] && [ "$n" -lt "$total" ] ||
	fail "wrap: decoded $n of $total instructions"
tail -n "$n" "$work/wrap.want" | cmp -s - "$work/wrap.raw" ||
	fail "wrap: the decoded history is not the end of the ground truth"
grep -q '"trace_lost": [1-9]' "$work/wrap.ptrr/manifest.json" ||
	fail "wrap: the bundle does not say trace was overwritten"

# psb_offsets FILE: byte offsets of the PSB packets in a raw trace.
psb_offsets() {
	LC_ALL=C grep -obUaP '\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82' \
		"$1" | cut -d: -f1
}

# A corrupted byte in the middle: the packet after a PSB in the middle of
# the trace becomes an invalid opcode.  Decoding gives a gap; before it a
# prefix of the ground truth, after it exactly its end.
record_truth whole --start=main -- tests/progs/fnptr long
cp -r "$work/whole.ptrr" "$work/corrupt.ptrr"
trace=$(ls "$work"/corrupt.ptrr/threads/*.pt)
set -- $(psb_offsets "$trace")
[ $# -ge 4 ] || fail "corrupt: only $# PSBs in the trace"
mid=$(eval echo "\${$(($# / 2))}")
printf '\331' | dd of="$trace" bs=1 seek=$((mid + 16)) conv=notrunc \
	2>/dev/null
raw_addrs "$work/corrupt.ptrr" >"$work/corrupt.raw"
gaps=$(grep -c '^\[gap\]$' "$work/corrupt.raw")
[ "$gaps" -eq 1 ] || fail "corrupt: $gaps gaps, expected 1"
head_n=$(grep -n '^\[gap\]$' "$work/corrupt.raw" | head -n 1 | cut -d: -f1)
tail_n=$(($(wc -l <"$work/corrupt.raw") - head_n))
head -n $((head_n - 1)) "$work/corrupt.raw" |
	cmp -s - "$(head -n $((head_n - 1)) "$work/whole.want" >"$work/p" &&
		    echo "$work/p")" ||
	fail "corrupt: before the gap is not a prefix of the ground truth"
tail -n "$tail_n" "$work/corrupt.raw" |
	cmp -s - "$(tail -n "$tail_n" "$work/whole.want" >"$work/s" &&
		    echo "$work/s")" ||
	fail "corrupt: after the gap is not the end of the ground truth"
[ "$tail_n" -gt 1000 ] || fail "corrupt: only $tail_n entries after the gap"
"$ptrr" insn-history "$work/corrupt.ptrr" | grep -q 'decode error' ||
	fail "corrupt: insn-history does not show the decode error"

# A module gone after recording: the program's library is loaded from a
# copy that is deleted before decoding.  Opening warns and names it;
# decoding has gaps where the library ran; before the first gap and from
# the next PSB after the last one (the program's long own work) it is
# exact.
mkdir -p "$work/lib"
cp tests/progs/libptrrplt.so "$work/lib/"
LD_LIBRARY_PATH="$work/lib" record_truth nolib --start=main -- \
	tests/progs/plt long
rm "$work/lib/libptrrplt.so"
"$ptrr" info "$work/nolib.ptrr" >/dev/null 2>"$work/nolib.info" ||
	fail "missing module: ptrr info failed: $(cat "$work/nolib.info")"
grep -q 'warning: .*libptrrplt.so' "$work/nolib.info" ||
	fail "missing module: no warning naming it: $(cat "$work/nolib.info")"
raw_addrs "$work/nolib.ptrr" >"$work/nolib.raw"
grep -q '^\[gap\]$' "$work/nolib.raw" || fail "missing module: no gap"
first_gap=$(grep -n '^\[gap\]$' "$work/nolib.raw" | head -n 1 | cut -d: -f1)
head -n $((first_gap - 1)) "$work/nolib.raw" >"$work/nolib.head"
head -n $((first_gap - 1)) "$work/nolib.want" | cmp -s - "$work/nolib.head" ||
	fail "missing module: before the first gap is not the ground truth"
last_tail=$(($(wc -l <"$work/nolib.raw") - $(grep -n '^\[gap\]$' \
	"$work/nolib.raw" | tail -n 1 | cut -d: -f1)))
tail -n "$last_tail" "$work/nolib.raw" >"$work/nolib.tail"
tail -n "$last_tail" "$work/nolib.want" | cmp -s - "$work/nolib.tail" ||
	fail "missing module: after the last gap is not the ground truth"
[ "$last_tail" -gt 1000 ] ||
	fail "missing module: only $last_tail entries after the last gap"

finish
