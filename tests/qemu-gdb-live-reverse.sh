#!/bin/sh
# tests/gdb-live-reverse.sh with the live session on QEMU (ptrr gdb
# --backend=qemu): reverse execution over the plugin's trace, forward
# through the history back to the live program, pt save.  Skipped (77)
# where qemu-x86_64 is absent.
command -v qemu-x86_64 >/dev/null 2>&1 ||
	{ echo "qemu-x86_64 not found: skipped"; exit 77; }
PTRR_TEST_BACKEND=qemu
export PTRR_TEST_BACKEND
exec sh "$top_srcdir/tests/gdb-live-reverse.sh"
