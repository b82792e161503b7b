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
