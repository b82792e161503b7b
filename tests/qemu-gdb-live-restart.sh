#!/bin/sh
# tests/gdb-live-restart.sh with the live sessions on QEMU (ptrr gdb
# --backend=qemu): run, start and starti again, kill, detach, quit; the
# packets sent to ptrr serve itself stay the software backend's.
# Skipped (77) where qemu-x86_64 is absent.
command -v qemu-x86_64 >/dev/null 2>&1 ||
	{ echo "qemu-x86_64 not found: skipped"; exit 77; }
PTRR_TEST_BACKEND=qemu
export PTRR_TEST_BACKEND
exec sh "$top_srcdir/tests/gdb-live-restart.sh"
