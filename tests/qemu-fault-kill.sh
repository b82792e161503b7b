#!/bin/sh
# tests/fault-kill.sh's live sessions on QEMU (ptrr gdb --backend=qemu):
# QEMU, the program's process, killed by SIGKILL while traced after pt
# start or gdb's record pt; the history kept, listed, saved, replayed.
# Skipped (77) where qemu-x86_64 is absent.
command -v qemu-x86_64 >/dev/null 2>&1 ||
	{ echo "qemu-x86_64 not found: skipped"; exit 77; }
PTRR_TEST_BACKEND=qemu
export PTRR_TEST_BACKEND
exec sh "$top_srcdir/tests/fault-kill.sh"
