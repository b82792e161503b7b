#!/bin/sh
# tests/perf-export.sh on recordings made with --backend=qemu: perf's own
# Intel PT decoder, on `ptrr export --perf`, lists the instructions and
# branches ptrr lists, thread by thread.  Skipped (77) where qemu-x86_64
# is absent.
command -v qemu-x86_64 >/dev/null 2>&1 ||
	{ echo "qemu-x86_64 not found: skipped"; exit 77; }
PTRR_TEST_BACKEND=qemu
export PTRR_TEST_BACKEND
exec sh "$top_srcdir/tests/perf-export.sh"
