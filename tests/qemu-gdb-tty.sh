#!/bin/sh
# tests/gdb-tty.sh with QEMU: the replay of a QEMU recording, and live
# sessions on QEMU (ptrr gdb --backend=qemu -- spin) interrupted with
# Ctrl-C, traced, back and forth.  Skipped (77) where qemu-x86_64 is
# absent.
command -v qemu-x86_64 >/dev/null 2>&1 ||
	{ echo "qemu-x86_64 not found: skipped"; exit 77; }
PTRR_TEST_BACKEND=qemu
export PTRR_TEST_BACKEND
exec sh "$top_srcdir/tests/gdb-tty.sh"
