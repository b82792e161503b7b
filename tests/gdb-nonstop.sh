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
# late-sigint: the threads mode again with the server's interrupt slow
# to arrive (its SIGINT sent 30 ms after it is counted): gdb's next
# request comes as the threads resume after the last, the server
# interrupts them at once, and the resume must still know that SIGINT
# for its own when it comes (it was taken for the program's, and gdb
# saw "Thread 1 received signal SIGINT": gdb.btrace/enable-running.exp
# failed that way now and then).
for mode in threads reverse late-sigint; do
	case $mode in
	late-sigint) delay=30000 m=threads ;;
	*) delay= m=$mode ;;
	esac
	PTRR_TEST_SIGINT_DELAY_US=$delay TERM=xterm \
		expect "$top_srcdir/tests/gdb-nonstop.exp" "$m" \
		"$ptrr" "$progs/nonstop" >"$work/$mode.out" 2>&1 || {
		tail -n 40 "$work/$mode.out"
		fail "$mode: see above"
	}
done
finish
