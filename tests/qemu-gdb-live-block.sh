#!/bin/sh
# tests/gdb-live-block.sh with the live session on QEMU (ptrr gdb
# --backend=qemu): breakpoints inside a block and on the branch that
# ends one, the history from the interpreter's entry, --soft-step
# refused.  Skipped (77) where qemu-x86_64 is absent.
command -v qemu-x86_64 >/dev/null 2>&1 ||
	{ echo "qemu-x86_64 not found: skipped"; exit 77; }
PTRR_TEST_BACKEND=qemu
export PTRR_TEST_BACKEND
exec sh "$top_srcdir/tests/gdb-live-block.sh"
