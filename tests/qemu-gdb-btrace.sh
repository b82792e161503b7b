#!/bin/sh
# tests/gdb-btrace.sh on recordings made with --backend=qemu: gdb's own
# `record pt` decoder (through ptrr serve) lists the instructions and
# calls ptrr lists.  Skipped (77) where qemu-x86_64 is absent.
command -v qemu-x86_64 >/dev/null 2>&1 ||
	{ echo "qemu-x86_64 not found: skipped"; exit 77; }
PTRR_TEST_BACKEND=qemu
export PTRR_TEST_BACKEND
exec sh "$top_srcdir/tests/gdb-btrace.sh"
