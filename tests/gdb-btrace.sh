#!/bin/sh
# gdb's own `record pt` through ptrr serve: gdb reads the recorded trace
# with qXfer:btrace:read and decodes it with its own libipt decoder,
# which makes it an independent check of ptrr's.  For each thread of
# recordings of the test programs: gdb's instruction count, function
# count, instruction addresses and function-call history (levels, and
# names of the program's own functions) equal ptrr's, and reverse-stepi
# in gdb's btrace replay moves one instruction back.  (Programs that
# crash are left out: gdb does not count the faulting instruction as
# executed, ptrr lists it last as where the thread stands.)  gdb is told
# to keep all of the trace: its buffer size would keep only the end.
. "${top_srcdir:-..}/tests/lib.sh"
gdb_work_dir gdb-btrace

# compare NAME THREAD-NUMBER TID PROG [no-levels]: gdb's view of thread
# THREAD-NUMBER of bundle NAME against ptrr's view of task TID; with
# no-levels, the call levels are not compared.
compare() {
	b=$work/$1.ptrr
	recorded=$("$ptrr" info "$b" | sed -n "s/^  \(Recorded .*\) for thread .*(LWP $3)\.\$/\1/p")
	n=$(echo "$recorded" | awk '{ print $2 }')
	m=$(echo "$recorded" | awk '{ print $5 }')
	[ -n "$n" ] || { fail "$1/$3: ptrr info has no 'Recorded' line"; return; }
	timeout 300 "$GDB" -nx -batch \
		-ex 'set remotetimeout 60' \
		-ex "target remote | '$ptrr' serve --stdio '$b'" \
		-ex 'set record btrace pt buffer-size unlimited' \
		-ex "thread $2" -ex 'record pt' -ex 'info record' \
		-ex "record instruction-history 1,$n" \
		-ex "record function-call-history /c 1,$m" \
		-ex 'reverse-stepi' -ex 'info record' -ex 'p/x $pc' \
		>"$work/$1.$3.gdb" 2>&1
	out=$work/$1.$3.gdb
	grep -q "^$recorded for thread $2 (Thread \([0-9]*\.\)\{0,1\}$3)\.\$" "$out" ||
		fail "$1/$3: gdb did not say '$recorded': $(grep Recorded "$out")"
	sed -n 's/^\([0-9][0-9]*\)	\(=> \)* *\(0x[0-9a-f]*\)[ :].*/\1 \3/p' \
		"$out" | sed 's/ 0x0*/ 0x/' >"$work/gdb.insns"
	"$ptrr" insn-history --raw --thread="$3" "$b" >"$work/ptrr.insns"
	cmp -s "$work/gdb.insns" "$work/ptrr.insns" ||
		fail "$1/$3: gdb's instructions differ from ptrr's: $(diff \
			"$work/gdb.insns" "$work/ptrr.insns" | head -n 5)"
	# Call segments: number and level alike; names alike where the
	# function is the program's (libraries' aliases may differ).
	awk -F'\t' -v m="$m" '$1 ~ /^[0-9]+$/ && $1 <= m && NF == 2 &&
		$2 ~ /^ *[^ ]+$/' "$out" \
		>"$work/gdb.calls"
	"$ptrr" call-history --indent --thread="$3" "$b" >"$work/ptrr.calls"
	awk -F'\t' '{ s = $2; sub(/[^ ].*/, "", s); print $1, length(s) }' \
		"$work/gdb.calls" >"$work/gdb.levels"
	awk -F'\t' '{ s = $2; sub(/[^ ].*/, "", s); print $1, length(s) }' \
		"$work/ptrr.calls" >"$work/ptrr.levels"
	[ "$5" = no-levels ] || cmp -s "$work/gdb.levels" "$work/ptrr.levels" ||
		fail "$1/$3: gdb's call levels differ from ptrr's: $(diff \
			"$work/gdb.levels" "$work/ptrr.levels" | head -n 5)"
	nm "$4" | awk '$2 ~ /^[tT]$/ { print $3 }' >"$work/own"
	paste "$work/gdb.calls" "$work/ptrr.calls" | awk -F'\t' '
		NR == FNR { own[$1] = 1; next }
		{ g = $2; p = $4; gsub(/ /, "", g); gsub(/ /, "", p)
		  # GCC names its clones f.constprop.0, f.isra.0, f.part.0,
		  # f.cold; gdb names them by their DWARF function, f.
		  sub(/\.(constprop|isra|part|cold)(\.[0-9]+)*$/, "", p) }
		(p in own) && g != p { print "segment " $1 ": gdb " g ", ptrr " p }
	' "$work/own" - >"$work/names"
	[ ! -s "$work/names" ] ||
		fail "$1/$3: function names differ: $(head -n 3 "$work/names")"
	# gdb counts the last instruction as executed (these threads ran
	# their last system call): one step back is before it.
	grep -q "^Replay in progress\.  At instruction $n\.\$" "$out" ||
		fail "$1/$3: reverse-stepi did not go to instruction $n"
	pc=$(sed -n 's/^\$1 = \(0x[0-9a-f]*\)$/\1/p' "$out")
	want=$(awk -v k=$n '$1 == k { print $2 }' "$work/ptrr.insns")
	[ "$pc" = "$want" ] ||
		fail "$1/$3: after reverse-stepi gdb is at $pc, not $want"
}

# Left out, as their differences are gdb's way, not errors: jumptable
# (gdb names classify.cold by its DWARF function, classify, and so sees
# no new function where ptrr, by ELF symbols, sees one) and signals (gdb
# makes a gap of each TIP.PGE that does not resume where tracing stopped:
# a signal handler's entry and its sigreturn; ptrr knows them for what
# they are).
# And longjmp's levels: gdb takes the jump back into main for a call of
# main one level down; ptrr finds main's frame on its stack.
for prog in recursion fnptr longjmp; do
	record "$prog" --start=main -- "$progs/$prog" || continue
	compare "$prog" 1 "$(thread_ends "$work/$prog.ptrr" | awk 'NR == 1 { print $1 }')" \
		"$progs/$prog" $([ $prog = longjmp ] && echo no-levels)
done
record threads -- "$progs/threads" || true
k=0
for tid in $(thread_ends "$work/threads.ptrr" | awk '{ print $1 }'); do
	k=$((k + 1))
	compare threads $k "$tid" "$progs/threads"
done
[ "$k" -ge 3 ] || fail "threads: $k threads recorded"

finish
