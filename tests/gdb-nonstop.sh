#!/bin/sh
# gdb's non-stop mode (`set non-stop on`) on live sessions of
# tests/progs/nonstop, driven through expect (tests/gdb-nonstop.exp) as
# GDB's gdb.btrace/non-stop.exp and enable-running.exp drive gdbserver:
# threads resumed and stopped apart, each stop told when it comes, a
# running thread interrupted, gdb's record pt per thread, and ptrr's
# reverse execution of one thread while another runs.  (ptrr serve said
# "remote does not support non-stop" before.)
set -u
. "$top_srcdir/tests/lib.sh"
gdb_work_dir gdb-nonstop

# A QEMU session is all-stop (QEMU 7.2's user-mode stub stops one thread
# and cannot run the others apart): non-stop mode is refused in one line
# that names the backend that has it.
if command -v qemu-x86_64 >/dev/null 2>&1; then
	timeout 120 "$GDB" -nx -batch -ex "set non-stop on" \
		-ex "target remote | $ptrr serve --stdio --backend=qemu -- $progs/nonstop" \
		"$progs/nonstop" >"$work/qemu.out" 2>&1
	has qemu '^Remote refused setting non-stop mode with: E\.non-stop mode needs threads that run apart: this backend.s sessions are all-stop \(use --backend=soft\)$'
fi
command -v expect >/dev/null || { echo "SKIP: expect is not installed"; exit 77; }
src=$top_srcdir/tests/progs/nonstop.c
for bp in 1 2 3; do
	eval "bp$bp=\$(grep -n 'bp\\.$bp' \"\$src\" | cut -d: -f1)"
done
export bp1 bp2 bp3
for mode in threads reverse; do
	TERM=xterm expect "$top_srcdir/tests/gdb-nonstop.exp" "$mode" \
		"$ptrr" "$progs/nonstop" >"$work/$mode.out" 2>&1 || {
		tail -n 40 "$work/$mode.out"
		fail "$mode: see above"
	}
done
finish
