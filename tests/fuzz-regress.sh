#!/bin/sh
# The fuzzing harnesses (tests/fuzz/, docs/reliability.md) replayed
# without libFuzzer on every input kept in tests/fuzz/NAME/: the crash
# inputs the fuzzers found (crash-*), each a bug fixed since, and the
# seeds; against the recordings `make fuzz` uses (tests/fuzz/run.sh): of
# tests/progs/crash, and for the index harness the end of fnptr's.
# Run under ASan and UBSan by the sanitizer build.
set -u
. "$top_srcdir/tests/lib.sh"
work_dir fuzz-regress

record crash -- "$top_builddir/tests/progs/crash" || { finish; exit; }
record index --mode=snapshot --buffer-size=8K --psb-period=2K \
	--noretcomp -- "$top_builddir/tests/progs/fnptr" x || { finish; exit; }
for name in serve bundle pt index; do
	PTRR_FUZZ_BUNDLE=$work/crash.ptrr
	[ "$name" = index ] && PTRR_FUZZ_BUNDLE=$work/index.ptrr
	export PTRR_FUZZ_BUNDLE
	inputs=$top_srcdir/tests/fuzz/$name
	ls "$inputs"/crash-* >/dev/null 2>&1 ||
		echo "fuzz-$name: no crash input kept (yet)"
	if ! "$top_builddir/tests/fuzz/replay-$name" "$inputs" \
		>"$work/$name.out" 2>&1; then
		cat "$work/$name.out"
		fail "fuzz-$name on $(grep ' bytes)$' "$work/$name.out" |
			tail -n 1)"
	fi
	grep -c ' bytes)$' "$work/$name.out" | sed "s/^/fuzz-$name: inputs: /"
done

finish
