#!/bin/sh
# tests/live-gdb-watch.sh with the live session on QEMU (ptrr serve
# --backend=qemu): watchpoints (writes, by single-stepping through QEMU's
# stub; reads and accesses refused), hardware breakpoints, the faulting
# breakpoint, passed signals.  Skipped (77) where qemu-x86_64 is absent.
command -v qemu-x86_64 >/dev/null 2>&1 ||
	{ echo "qemu-x86_64 not found: skipped"; exit 77; }
PTRR_TEST_BACKEND=qemu
export PTRR_TEST_BACKEND
exec sh "$top_srcdir/tests/live-gdb-watch.sh"
