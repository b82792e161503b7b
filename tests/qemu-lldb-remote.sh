#!/bin/sh
# tests/lldb-remote.sh with the live sessions on QEMU (ptrr serve and
# ptrr lldb --backend=qemu) and recordings made with --backend=qemu:
# breakpoints, the crash, the libraries, the launchers, reverse
# execution from LLDB 21 and later.  Skipped (77) where qemu-x86_64 is
# absent.
command -v qemu-x86_64 >/dev/null 2>&1 ||
	{ echo "qemu-x86_64 not found: skipped"; exit 77; }
PTRR_TEST_BACKEND=qemu
export PTRR_TEST_BACKEND
exec sh "$top_srcdir/tests/lldb-remote.sh"
