#!/bin/sh
# tests/gdb-conformance.sh with the live sessions on QEMU (ptrr serve,
# ptrr gdb and ptrr gdbserver --backend=qemu): gdb's record pt (empty,
# a window, new trace), reconnecting, --once, a shell's child left
# behind, monitor exit.  Skipped (77) where qemu-x86_64 is absent.
command -v qemu-x86_64 >/dev/null 2>&1 ||
	{ echo "qemu-x86_64 not found: skipped"; exit 77; }
PTRR_TEST_BACKEND=qemu
export PTRR_TEST_BACKEND
exec sh "$top_srcdir/tests/gdb-conformance.sh"
