#!/bin/sh
# ptrr-unwind.so through fake gdb callbacks: tests/unit/test-unwind
# loads the module the build made, where `ptrr replay` finds it.
. "${top_srcdir:-..}/tests/lib.sh"
so="$top_builddir/plugin/jit-reader/.libs/ptrr-unwind.so"
[ -f "$so" ] || { echo "$so not built"; exit 99; }
"$top_builddir/tests/unit/test-unwind" "$so" || fail "test-unwind"
finish
