#!/bin/sh
# `ptrr record`'s option contract on real recordings: --filter (one and
# two ranges, a symbol, SYMBOL+OFFSET/SIZE, an address, a file offset, a
# range in a shared library mapped after the start) checked against the
# single-stepped ground truth cut to the ranges; the usage errors of
# --filter and --start; a bundle name that cannot be written, refused
# before the program runs; the full-mode cap reported; the program killed
# by SIGKILL ending the history exactly at its last instruction.
set -u
. "$top_srcdir/tests/lib.sh"
work_dir record-options
cd "$top_builddir" || exit 99
progs=tests/progs
lib="$PWD/$progs/libptrrplt.so"

# filtered NAME WANT-RANGES [RECORD-OPTIONS] -- PROG [ARGS]: records with
# ground truth; the bundle's ranges must be WANT-RANGES (if not empty)
# and its history exactly the ground truth inside them: no instruction
# outside, none missing, no gap.
filtered() {
	name=$1 want_ranges=$2
	shift 2
	record "$name" --ground-truth="$work/$name.gt" "$@" || return
	got_ranges=$(filter_ranges "$work/$name.ptrr")
	[ -z "$want_ranges" ] || [ "$got_ranges" = "$want_ranges " ] ||
		fail "$name: ranges '$got_ranges', wanted '$want_ranges'"
	in_ranges $got_ranges <"$work/$name.gt" >"$work/$name.want"
	raw_addrs "$work/$name.ptrr" >"$work/$name.got"
	[ -s "$work/$name.want" ] || fail "$name: nothing ran in the ranges"
	cmp -s "$work/$name.want" "$work/$name.got" ||
		fail "$name: history is not the ground truth in $got_ranges:" \
			"$(diff "$work/$name.want" "$work/$name.got" | head -n 4)"
}

# fact's run-time range, START/SIZE in hex (a program ptrr starts runs
# without ASLR: a PIE is loaded at 0x555555554000).
fact=$(nm -S $progs/recursion | while read -r a z t n; do
	[ "$n" = fact ] && printf '0x%x/0x%x\n' $((0x$a + 0x555555554000)) $((0x$z))
done)
[ -n "$fact" ] || { echo "no fact in $progs/recursion"; exit 99; }

# ---- --filter=SYMBOL: a recursive function, entered and left by calls
# and returns; the history is only its instructions.
filtered fact "$fact" --filter=fact --start=main -- $progs/recursion
"$ptrr" info "$work/fact.ptrr" |
	grep -q "^Note: IP filter --filter=fact: ${fact%/*}-" ||
	fail "fact: no note naming the filter and its range"
grep -q '\[gap\]' "$work/fact.got" && fail "fact: a gap in the history"
# The same range as an address, and as an offset in the program's file.
filtered fact-addr "$fact" --filter="$fact" --start=main -- $progs/recursion
off=$(nm $progs/recursion | awk '$3 == "fact" { print "0x" $1 }')
filtered fact-file "$fact" --filter="$off/${fact#*/}@$progs/recursion" \
	--start=main -- $progs/recursion
# SYMBOL+OFFSET/SIZE: its second half, from the return of the recursive
# call to its own return (a range is entered and left at taken branches,
# as on the hardware).
start=$((${fact%/*} + 0x18))
filtered fact-slice "$(printf '0x%x/0xf' $start)" --filter=fact+0x18/0xf \
	--start=main -- $progs/recursion

# ---- Two ranges at once: two leaves called through a function pointer.
filtered two "" --filter=add --filter=mul --start=main -- $progs/fnptr
[ "$(filter_ranges "$work/two.ptrr" | wc -w)" -eq 2 ] ||
	fail "two: ranges $(filter_ranges "$work/two.ptrr")"

# ---- A range in a shared library, mapped by the dynamic linker after the
# recording starts (no --start), with one in the program calling it
# through the PLT.
filtered lib "" --filter="ptrr_lib_sum@$lib" --filter=main -- $progs/plt
[ "$(filter_ranges "$work/lib.ptrr" | wc -w)" -eq 2 ] ||
	fail "lib: ranges $(filter_ranges "$work/lib.ptrr")"
grep -q 0x7f "$work/lib.got" || fail "lib: nothing of the library traced"
# The same without the ground truth, which single-steps: whatever
# --soft-step is the default, the ranges are the same.
record lib-fast --filter="ptrr_lib_sum@$lib" --filter=main -- $progs/plt &&
	raw_addrs "$work/lib-fast.ptrr" | cmp -s - "$work/lib.got" ||
	fail "lib-fast: not the history of the single-stepped recording"

# ---- execve: each image gets the ranges of the files it maps.  main of
# tests/progs/exec (a symbol of PROG) is traced before the execve and
# nothing after it, though recursion has code at those addresses; fact
# of recursion (@FILE) is traced only after it.
# exec_filtered NAME FILTER: records `exec recursion` with FILTER, the
# histories of both images in $work/NAME.got (before the execve) and
# $work/NAME.got2 (after), the ground truths cut to the bundle's ranges
# of each image in NAME.want and NAME.want2.
exec_filtered() {
	record "$1" --ground-truth="$work/$1.gt" "$2" -- $progs/exec \
		"$PWD/$progs/recursion" || return
	in_ranges $(filter_ranges "$work/$1.ptrr/before-exec.ptrr") \
		<"$work/$1.gt.before-exec" >"$work/$1.want"
	in_ranges $(filter_ranges "$work/$1.ptrr") <"$work/$1.gt" >"$work/$1.want2"
	raw_addrs "$work/$1.ptrr/before-exec.ptrr" >"$work/$1.got"
	raw_addrs "$work/$1.ptrr" >"$work/$1.got2"
	for i in "" 2; do
		cmp -s "$work/$1.want$i" "$work/$1.got$i" ||
			fail "$1: image ${i:-1} is not the ground truth in its" \
			     "ranges: $(diff "$work/$1.want$i" "$work/$1.got$i" |
					head -n 4)"
	done
}
exec_filtered exec-main --filter=main
[ -s "$work/exec-main.got" ] || fail "exec-main: nothing traced in main"
[ -s "$work/exec-main.got2" ] && fail "exec-main: traced after the execve"
in_ranges $(filter_ranges "$work/exec-main.ptrr/before-exec.ptrr") \
	<"$work/exec-main.gt" | grep -q . ||
	fail "exec-main: recursion has no code where exec's main was: the" \
	     "check proves nothing"
"$ptrr" info "$work/exec-main.ptrr" |
	grep -q "^Note: IP filter --filter=main: .*/exec was never mapped" ||
	fail "exec-main: no note that exec's main is not in the new image"
exec_filtered exec-fact "--filter=fact@$progs/recursion"
[ -s "$work/exec-fact.got" ] && fail "exec-fact: traced before the execve"
[ -s "$work/exec-fact.got2" ] || fail "exec-fact: nothing traced in fact"

# ---- Usage errors (exit 1, one line naming the cause), before the
# program runs: a program that cannot be run would be exit 2.
nope=$work/no-such-program
expect_exit 1 "no symbol 'nosuch'" "$ptrr" record --backend=soft \
	-o "$work/u.ptrr" --filter=nosuch -- $progs/recursion
expect_exit 1 "at most 4" "$ptrr" record --filter=add --filter=sub \
	--filter=mul --filter=main --filter=add -- "$nope"
for bad in fact/zz fact/0 fact/-1 fact/ 0x1234 /8 fact+zz "fact@$nope"; do
	expect_exit 1 "^ptrr record: --filter" "$ptrr" record \
		--filter="$bad" -- "$nope"
	[ "$(grep -c 'ptrr record:' "$work/err")" -eq 1 ] &&
		grep -qF -- "$bad" "$work/err" ||
		fail "--filter=$bad: not one line naming it: $(cat "$work/err")"
done
expect_exit 1 "has 0 bytes|give START/SIZE" "$ptrr" record --backend=soft \
	-o "$work/u.ptrr" --filter=fact+0x1000 -- $progs/recursion
for bad in main+zz main+ ""; do
	expect_exit 1 "--start: expected SYMBOL" "$ptrr" record \
		--start="$bad" -- "$nope"
done
[ ! -e "$work/u.ptrr" ] || fail "a usage error wrote a bundle"

# ---- A bundle name that is not a bundle is refused before recording
# (exit 2, naming it and the fix), not after the program has run.
: >"$work/file"
mkdir -p "$work/dir" && : >"$work/dir/keep"
for out in "$work/file" "$work/dir" "$work/dir/"; do
	expect_exit 2 "cannot write bundle $out: it exists and is not a ptrr recording: remove it or choose another name" \
		"$ptrr" record --backend=soft -o "$out" -- "$nope"
done
expect_exit 2 "cannot write bundle $work/none/x.ptrr: $work/none: .*create that directory" \
	"$ptrr" record --backend=soft -o "$work/none/x.ptrr" -- "$nope"
[ -f "$work/file" ] && [ -f "$work/dir/keep" ] || fail "-o removed a file"

# ---- --mode=full at its cap: told once on stderr, where the overflow gap
# is, and counted in the summary.
record full --mode=full --buffer-size=256 --ground-truth="$work/full.gt" \
	--start=main -- $progs/plt x
[ "$(grep -c 'reached its 256-byte cap' "$work/full.log")" -eq 1 ] ||
	fail "full: the cap is not told once: $(cat "$work/full.log")"
entry=$(sed -n 's/.*an overflow gap, entry \([0-9]*\) of its history.*/\1/p' \
	"$work/full.log")
"$ptrr" insn-history --raw "$work/full.ptrr" >"$work/full.raw"
[ -n "$entry" ] && grep -q "^$entry \[gap\] trace overflow" "$work/full.raw" ||
	fail "full: no overflow gap at entry '$entry': $(grep gap "$work/full.raw")"
head -n $((entry - 1)) "$work/full.raw" | awk '{ print $2 }' |
	cmp -s - "$(head -n $((entry - 1)) "$work/full.gt" >"$work/full.head" &&
		    echo "$work/full.head")" ||
	fail "full: the history before the gap is not the ground truth"
untraced=$(($(wc -l <"$work/full.gt") - entry + 1))
grep -q "(truncated at the cap: $untraced instructions not traced)" \
	"$work/full.log" ||
	fail "full: the summary does not count $untraced: $(tail -n 2 "$work/full.log")"

# ---- The program killed by SIGKILL: its history ends with the last
# instruction it retired (the ground truth's last), with no gap, and the
# stop says so.
"$ptrr" record --backend=soft --ground-truth="$work/killed.gt" --start=main \
	-o "$work/killed.ptrr" -- $progs/spin >"$work/killed.log" 2>&1 &
rec=$!
sleep 1
# Only our own spin (ptrr's child): tests running beside this one have
# theirs.
kill -KILL "$(pgrep -P "$rec" -x spin)"
wait $rec || fail "killed: ptrr record: $(cat "$work/killed.log")"
check_threads "$work/killed.ptrr" "$work/killed.gt"
"$ptrr" info "$work/killed.ptrr" >"$work/killed.info"
grep -q "^Stop reason: killed by SIGKILL" "$work/killed.info" ||
	fail "killed: $(grep 'Stop reason' "$work/killed.info")"
"$ptrr" insn-history --raw "$work/killed.ptrr" | grep '\[gap\]' &&
	fail "killed: a gap in the history"

finish
