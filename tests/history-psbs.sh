#!/bin/sh
# Histories numbered from the table of PSBs the emitter writes
# (threads/TID.psbs; history/index.c): recordings of programs with loops
# and calls, threads, signal handlers (tracing off and on), a crash (the
# history ends at the faulting instruction), faults that handlers catch
# (under QEMU, the instructions of a block before its faulting one are
# counted apart) and a wrapped snapshot ring,
# by the software backend and, where qemu-x86_64 is installed, the QEMU
# backend, with short PSB periods for many segments.
# tests/unit/test-psbs compares each history numbered from the table
# with the one numbered by decoding every segment, and checks that a
# wrong table is found out.  A bundle without a table (an older one)
# opens as before: the same recording with its table (and saved index)
# removed lists the same instructions and calls.
set -u
. "$top_srcdir/tests/lib.sh"
work_dir history-psbs
progs="$top_builddir/tests/progs"

backends=soft
command -v qemu-x86_64 >/dev/null 2>&1 && backends="soft qemu"
for b in $backends; do
	for prog in loops threads signals crash faults; do
		PTRR_TEST_BACKEND=$b record $b-$prog --psb-period=2K \
			-- "$progs/$prog" || continue
		bundles="${bundles:-} $work/$b-$prog.ptrr"
	done
	PTRR_TEST_BACKEND=$b record $b-ring --psb-period=2K \
		--buffer-size=64K -- "$progs/loops" 3000 &&
		bundles="${bundles:-} $work/$b-ring.ptrr"
done
for b in ${bundles:-}; do
	ls "$b"/threads/*.psbs >/dev/null 2>&1 ||
		fail "$b: no threads/*.psbs written"
done
"$top_builddir/tests/unit/test-psbs" ${bundles:-} || fail "test-psbs"

# An older bundle: no table, no saved index.
for b in ${bundles:-}; do
	old="$b.old"
	cp -r "$b" "$old" && rm -f "$old"/threads/*.psbs "$old"/threads/*.idx
	"$ptrr" insn-history --raw "$b" >"$b.insns" 2>&1 &&
	"$ptrr" insn-history --raw "$old" >"$old.insns" 2>&1 ||
		fail "$b: insn-history failed"
	cmp -s "$b.insns" "$old.insns" ||
		fail "$b: instructions differ without the table"
	"$ptrr" call-history --insn-range "$b" >"$b.calls" 2>&1 &&
	"$ptrr" call-history --insn-range "$old" >"$old.calls" 2>&1 ||
		fail "$b: call-history failed"
	cmp -s "$b.calls" "$old.calls" ||
		fail "$b: calls differ without the table"
done

finish
