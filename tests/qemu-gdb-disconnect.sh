#!/bin/sh
# tests/gdb-disconnect.sh with the live session on QEMU (ptrr serve
# --backend=qemu): gdb killed while the program runs, the program
# killed, left stopped or let go as --on-disconnect says.  Skipped (77)
# where qemu-x86_64 is absent.
command -v qemu-x86_64 >/dev/null 2>&1 ||
	{ echo "qemu-x86_64 not found: skipped"; exit 77; }
PTRR_TEST_BACKEND=qemu
export PTRR_TEST_BACKEND
exec sh "$top_srcdir/tests/gdb-disconnect.sh"
