#!/bin/sh
# tests/live-gdb.sh with the live session on QEMU (ptrr serve --stdio
# --backend=qemu): breakpoints, stepi, monitor pt start and stop, a
# crash.  Skipped (77) where qemu-x86_64 is absent.
command -v qemu-x86_64 >/dev/null 2>&1 ||
	{ echo "qemu-x86_64 not found: skipped"; exit 77; }
PTRR_TEST_BACKEND=qemu
export PTRR_TEST_BACKEND
exec sh "$top_srcdir/tests/live-gdb.sh"
