#!/bin/sh
# The fuzzing harnesses (tests/fuzz/, docs/reliability.md) replayed
# without libFuzzer on every input kept in tests/fuzz/NAME/: the crash
# inputs the fuzzers found (crash-*), each a bug fixed since, and the
# seeds; against a recording of tests/progs/crash as `make fuzz` uses.
# Run under ASan and UBSan by the sanitizer build.
set -u
. "$top_srcdir/tests/lib.sh"
work_dir fuzz-regress

record crash -- "$top_builddir/tests/progs/crash" || { finish; exit; }
PTRR_FUZZ_BUNDLE=$work/crash.ptrr
export PTRR_FUZZ_BUNDLE
for name in serve bundle pt index; do
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
