#!/bin/sh
# LLDB (lldb-19) on ptrr serve over gdb-remote, by hand and through the
# launchers: a recorded crash shows its call stack with source lines, the
# recorded final pc, and the pt listings; a live recursion stops at a
# breakpoint, shows its stack and runs to its exit; a live crash stops
# with SIGSEGV in lookup; pt goto moves LLDB's view through a recording;
# LLDB loads libc and ld.so where they were and names the libc
# functions, in a recorded and a live crash inside libc.  Every place
# LLDB stops is checked against the sources and against what ptrr's own
# commands say.
. "${top_srcdir:-..}/tests/lib.sh"
work_dir lldb-remote
progs="$top_builddir/tests/progs"
src="$top_srcdir/tests/progs"
LLDB=${PTRR_LLDB:-$LLDB}
[ -x "$LLDB" ] || LLDB=$(command -v lldb-19 || command -v lldb)
[ -x "$LLDB" ] || { echo "lldb not found: skipped"; exit 77; }
# No user lldbinit: the session is ptrr's alone.
HOME=$work
export HOME
# The live backend: the software one, or $PTRR_TEST_BACKEND's
# (tests/qemu-lldb-remote.sh); recordings are made with it too.
backend=--backend=${PTRR_TEST_BACKEND:-soft}
# platform, given PROG: what LLDB is given before it connects to a live
# session of PROG by hand.  Nothing natively: LLDB on this host finds
# the program by the process id (/proc/PID/exe).  Under QEMU that is
# qemu-x86_64 (the guest's process is QEMU's), so LLDB is given the
# platform and the program, as for a recording (docs/lldb.md).
platform=
[ "${PTRR_TEST_BACKEND:-soft}" = qemu ] &&
	platform="platform select remote-linux"
given() {
	[ -n "$platform" ] && echo "target create $1"
}
# Link maps: where ld.so keeps them, at the top of the address space
# natively, near QEMU's guest base under QEMU.
case ${PTRR_TEST_BACKEND:-soft} in
qemu) lm_addr='0x40[0-9a-f]{8}' ;;
*) lm_addr='0x7f[0-9a-f]{10}' ;;
esac

# serve NAME SERVE-ARGS...: starts ptrr serve --listen 127.0.0.1:0 in
# the background (pid $server, stderr in $work/NAME.serve); its port in
# $port once it listens.
serve() {
	name=$1
	shift
	timeout 180 "$ptrr" serve --listen 127.0.0.1:0 "$@" \
		</dev/null 2>"$work/$name.serve" &
	server=$!
	port=
	for _ in $(seq 100); do
		port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' \
			"$work/$name.serve")
		[ -n "$port" ] && return
		sleep 0.1
	done
	fail "$name: ptrr serve does not listen: $(cat "$work/$name.serve")"
}

# lldb_run NAME LLDB-ARGS...: lldb -b connected to the server on $port
# after LLDB-ARGS (each -o CMD, -k CMD ...); the output in $work/NAME.out.
# Then the server must end with status 0.
lldb_run() {
	name=$1
	shift
	timeout 120 "$LLDB" -b -o "gdb-remote 127.0.0.1:$port" "$@" \
		>"$work/$name.out" 2>&1 ||
		fail "$name: lldb failed: $(tail -n 3 "$work/$name.out")"
	wait "$server" ||
		fail "$name: ptrr serve ended with $?: $(cat "$work/$name.serve")"
}

# launch NAME PTRR-ARGS...: ptrr PTRR-ARGS (a launcher) with LLDB; the
# output in $work/NAME.out.
launch() {
	name=$1
	shift
	PTRR_LLDB=$LLDB timeout 120 "$ptrr" "$@" >"$work/$name.out" 2>&1 ||
		fail "$name: ptrr $1 failed: $(tail -n 3 "$work/$name.out")"
}

# expect NAME REGEX: the output of NAME has a line matching REGEX.
expect() {
	grep -Eq -- "$2" "$work/$1.out" ||
		fail "$1: no line matching '$2' in $work/$1.out"
}

# line_of FILE TEXT: the number of the line of FILE holding TEXT.
line_of() {
	grep -nF -- "$2" "$1" | head -n 1 | cut -d: -f1
}

crash_c=$src/crash.c
deref=$(line_of "$crash_c" "and used here: SIGSEGV")
second=$(line_of "$crash_c" "v += lookup(r);")
rec_c=$src/recursion.c
fact=$(line_of "$rec_c" "if (n <= 1)")
call=$(line_of "$rec_c" "return fact(5)")

# ---- A recording of the crash, served by hand.  LLDB is given the
# program (a recording's pid is no process of this host).
record crash -- "$progs/crash" || true
crash=$work/crash.ptrr
final=$(final_pc "$crash")
n=$("$ptrr" insn-history --raw "$crash" | tail -n 1 | cut -d' ' -f1)
serve replay "$crash"
lldb_run replay -O "target create $progs/crash" -o bt \
	-o "register read pc" -o "process plugin packet monitor pt info" \
	-o "process plugin packet monitor pt call-history"
expect replay "stop reason = signal SIGSEGV"
expect replay "frame #0: 0x[0-9a-f]+ crash\`lookup.* at crash\.c:$deref:"
expect replay "frame #1: 0x[0-9a-f]+ crash\`main at crash\.c:$second:"
pc=$(sed -n 's/^ *rip = \(0x[0-9a-f]*\).*/\1/p' "$work/replay.out")
[ -n "$final" ] && [ -n "$pc" ] && [ $((pc)) -eq $((final)) ] ||
	fail "replay: register read pc gives '$pc', the bundle ends at '$final'"
expect replay "^Stop reason: stopped by SIGSEGV at $final"
expect replay "is at instruction $n of $n "
"$ptrr" call-history "$crash" | tail -n 10 >"$work/calls.want"
grep -E '^[0-9]+	' "$work/replay.out" | tail -n 10 >"$work/calls.got"
cmp -s "$work/calls.want" "$work/calls.got" ||
	fail "replay: pt call-history differs from ptrr call-history:" \
	     "$(diff "$work/calls.want" "$work/calls.got")"
expect replay "^[0-9]+	clobber$"

# pt goto: LLDB drops the registers and frames it read (ptrr.lldb writes
# the server's ptrr_goto register), so register read and bt show the new
# position, and the end again after pt goto end.
at100=$("$ptrr" insn-history --raw --from=100 --count=1 "$crash" | cut -d' ' -f2)
serve goto "$crash"
lldb_run goto -O "command source $top_srcdir/plugin/lldb/ptrr.lldb" \
	-O "target create $progs/crash" -o "pt goto 100" -o "register read pc" \
	-o bt -o "pt info" -o "pt goto end" -o "register read pc" -o bt
[ "$(grep -c '^ *rip = ' "$work/goto.out")" = 2 ] ||
	fail "goto: register read pc does not answer twice"
set -- $(sed -n 's/^ *rip = \(0x[0-9a-f]*\).*/\1/p' "$work/goto.out")
[ -n "$at100" ] && [ $(($1)) -eq $((at100)) ] ||
	fail "goto: pc after pt goto 100 is '$1', instruction 100 is at '$at100'"
[ $(($2)) -eq $((final)) ] ||
	fail "goto: pc after pt goto end is '$2', the bundle ends at '$final'"
expect goto "frame #0: $(printf '0x%016x' $((at100))) "
expect goto "is at instruction 100 of $n \(replaying\)"
expect goto "frame #1: 0x[0-9a-f]+ crash\`main at crash\.c:$second:"

# ---- Live: recursion stops at fact(5), shows its caller, and exits.
"$progs/recursion"
status=$?
serve live $backend -- "$progs/recursion"
lldb_run live -O "$platform" -O "$(given "$progs/recursion")" \
	-o "breakpoint set -n fact" -o continue -o bt \
	-o "breakpoint delete 1" -o continue
expect live "stop reason = breakpoint 1\.1"
expect live "frame #0: 0x[0-9a-f]+ recursion\`fact\(n=5\) at recursion\.c:$fact:"
expect live "frame #1: 0x[0-9a-f]+ recursion\`main at recursion\.c:$call:"
expect live "^Process [0-9]+ exited with status = $status "

# ---- Live: the crash stops with SIGSEGV at the dereference in lookup.
# LLDB -b runs the -k commands, not the -o ones, after a crash.
serve live-crash $backend -- "$progs/crash"
lldb_run live-crash -O "$platform" -O "$(given "$progs/crash")" \
	-o continue -k bt -k "process kill"
expect live-crash "stop reason = signal SIGSEGV"
expect live-crash "frame #0: 0x[0-9a-f]+ crash\`lookup.* at crash\.c:$deref:"
expect live-crash "frame #1: 0x[0-9a-f]+ crash\`main at crash\.c:$second:"

# ---- Shared libraries: LLDB loads libc and ld.so at their load
# addresses (it reads the dynamic linker's r_debug where qShlibInfoAddr
# says, then the svr4 list) and names the libc functions, in a recording
# and live.  LLDB reads no detached debug files here (libc6-dbg may be
# installed or not): lldb-19 unwinds out of a libc function that has
# them no further than frame 0, with lldb-server too; libc's own
# symbols and eh_frame unwind to main.
nodbg="settings set symbols.enable-external-lookup false"
lc_c=$src/libc_crash.c
flush=$(line_of "$lc_c" "err = fflush(log_file());")
record libc -- "$progs/libc_crash" || true
libc_rec=$work/libc.ptrr
# libc's load address (its ELF header): its code mapping less the file
# offset of the code, as the recording saw /proc/PID/maps.
libc_base=$(awk '/"path": ".*\/libc\.so\.6"/ { m = 1 }
	m && /"start"/ { gsub(/[",]/, "", $2); s = $2 }
	m && /"offset"/ { gsub(/[",]/, "", $2); print s, $2; exit }' \
	"$libc_rec/manifest.json" | { read -r s o; printf '0x%016x' $((s - o)); })
[ "$libc_base" != 0x0000000000000000 ] ||
	fail "libc: no libc.so.6 among the recording's modules"
# expect_libs NAME: the image list of NAME has libc at its load address
# and ld.so.
expect_libs() {
	expect "$1" "^\[ *[0-9]+\] [0-9A-F-]+ $libc_base .*/libc\.so\.6 *$"
	expect "$1" "^\[ *[0-9]+\] [0-9A-F-]+ 0x[0-9a-f]+ .*/ld-linux-x86-64\.so\.2 *$"
}
in_fflush="frame #0: 0x[0-9a-f]+ libc\.so\.6\`[_A-Za-z]*fflush"
in_puts="frame #0: 0x[0-9a-f]+ libc\.so\.6\`[_A-Za-z]*puts"
from_main="frame #1: 0x[0-9a-f]+ libc_crash\`main at libc_crash\.c:$flush"

serve libs-replay "$libc_rec"
lldb_run libs-replay -O "$nodbg" -O "target create $progs/libc_crash" \
	-o "image list" -o bt \
	-o "process plugin packet send qXfer:libraries-svr4:read::0,fff"
expect_libs libs-replay
expect libs-replay "stop reason = signal SIGSEGV"
expect libs-replay "$in_fflush"
expect libs-replay "$from_main"
# The link_maps are where ld.so keeps them (in the crash's snapshot), not
# numbers.
expect libs-replay "main-lm=\"$lm_addr\">(<library [^>]*>)*<library name=\"[^\"]*/libc\.so\.6\" lm=\"$lm_addr\""

# Live: a breakpoint on puts, resolved once LLDB loaded libc at the
# program's entry; libc where the recording had it (ptrr runs programs
# without address randomization); then the crash in fflush.
serve libs-live $backend -- "$progs/libc_crash"
lldb_run libs-live -O "$nodbg" -O "$platform" \
	-O "$(given "$progs/libc_crash")" -o "breakpoint set -n puts" -o continue \
	-o bt -o "image list" -o continue -k bt -k "process kill"
expect libs-live "stop reason = breakpoint 1\.1"
expect libs-live "$in_puts"
expect libs-live "frame #1: 0x[0-9a-f]+ libc_crash\`main at libc_crash\.c:"
expect_libs libs-live
expect libs-live "stop reason = signal SIGSEGV"
expect libs-live "$in_fflush"
expect libs-live "$from_main"

# ---- The launchers, with the pt commands of ptrr.lldb, -ex and -x.
echo "register read pc" >"$work/cmds.lldb"
launch launch-replay replay --lldb --batch -ex bt -x "$work/cmds.lldb" \
	-ex "pt info" -ex "pt call-history" "$crash"
expect launch-replay "frame #0: 0x[0-9a-f]+ crash\`lookup.* at crash\.c:$deref:"
expect launch-replay "frame #1: 0x[0-9a-f]+ crash\`main at crash\.c:$second:"
expect launch-replay "^ *rip = 0x0*${final#0x} "
expect launch-replay "is at instruction $n of $n "
expect launch-replay "^[0-9]+	clobber$"

launch launch-live lldb $backend --batch -ex "breakpoint set -n fact" \
	-ex continue -ex bt -ex "pt info" -ex "breakpoint delete 1" \
	-ex continue -- "$progs/recursion"
expect launch-live "frame #0: 0x[0-9a-f]+ recursion\`fact\(n=5\) at recursion\.c:$fact:"
expect launch-live "frame #1: 0x[0-9a-f]+ recursion\`main at recursion\.c:$call:"
expect launch-live "live session of .*recursion"
expect launch-live "^Process [0-9]+ exited with status = $status "

launch libs-launch-replay replay --lldb --batch -ex "image list" -ex bt \
	"$libc_rec"
expect_libs libs-launch-replay
expect libs-launch-replay "$in_fflush"
launch libs-launch-live lldb $backend --batch -ex "breakpoint set -n puts" \
	-ex continue -ex "image list" -ex "process kill" -- "$progs/libc_crash"
expect_libs libs-launch-live
expect libs-launch-live "$in_puts"

# The servers the launchers started are gone (within 10 s).
# servers_gone: true once ps lists neither; the list in $work/ps.
servers_gone() {
	ps -eo args >"$work/ps"
	! grep -qF -e "serve --listen 127.0.0.1:0 --once $crash" \
		-e "serve --listen 127.0.0.1:0 --once -- $progs/recursion" \
		"$work/ps"
}
wait_until 10 servers_gone
grep -F -- "serve --listen 127.0.0.1:0 --once $crash" "$work/ps" &&
	fail "the server of ptrr replay --lldb is still running"
grep -F -- "serve --listen 127.0.0.1:0 --once -- $progs/recursion" "$work/ps" &&
	fail "the server of ptrr lldb is still running"

# ---- Reverse execution: LLDB 21 and later send bc for `process continue
# --reverse` (lldb-19 has no reverse execution).  The first LLDB that has
# it: $PTRR_REVERSE_LLDB, .deps/lldb-22 (./quickstart unpacks it), lldb-22,
# lldb-21.
rlldb=
for l in ${PTRR_REVERSE_LLDB:-"$top_srcdir/.deps/lldb-22/usr/lib/llvm-22/bin/lldb" \
    lldb-22 lldb-21}; do
	if command -v "$l" >/dev/null &&
	   timeout 60 "$l" -b -o "help process continue" 2>/dev/null |
	   grep -q -- --reverse; then
		rlldb=$l
		break
	fi
done
if [ -n "$rlldb" ]; then
	# The recorded crash: back to make_record (the SIGSEGV must not be
	# delivered: LLDB refuses to send a signal backward), forward to
	# clobber, forward to the crash.
	LLDB=$rlldb launch reverse-replay replay --lldb --batch \
		-ex "process handle -p false SIGSEGV" \
		-ex "breakpoint set -n make_record" \
		-ex "process continue --reverse" -ex "pt info" \
		-ex "breakpoint set -n clobber" -ex "process continue -F" \
		-ex "process continue" "$crash"
	made=$(sed -n 's/^Breakpoint 1: where = crash`make_record.*address = \(0x[0-9a-f]*\)$/\1/p' \
		"$work/reverse-replay.out")
	# LLDB's 0x%016x as insn-history's 0x%x: awk compares them as
	# strings (gawk) or as numbers (mawk).
	made=$(printf '0x%x' "$made")
	at=$("$ptrr" insn-history --raw "$crash" |
		awk -v a="$made" '$2 == a { n = $1 } END { print n }')
	expect reverse-replay "stop reason = breakpoint 1\.1"
	expect reverse-replay "frame #0: $(printf '0x%016x' $((made))) crash\`make_record"
	expect reverse-replay "is at instruction $at of $n \(replaying\)"
	expect reverse-replay "frame #0: 0x[0-9a-f]+ crash\`clobber"
	[ "$(grep -c 'stop reason = signal SIGSEGV' "$work/reverse-replay.out")" = 2 ] ||
		fail "reverse-replay: forward from clobber does not end at the crash"

	# Live, traced from the start: fact(5), fact(4), back to fact(5),
	# forward to fact(4) again, and the exit.
	LLDB=$rlldb launch reverse-live lldb $backend --record-from-start --batch \
		-ex "breakpoint set -n fact" -ex continue -ex continue \
		-ex "process continue --reverse" -ex "pt info" \
		-ex "process continue -F" -ex "frame variable n" \
		-ex "breakpoint delete 1" -ex continue -- "$progs/recursion"
	expect reverse-live "fact\(n=4\) at recursion\.c:$fact:"
	expect reverse-live "is at instruction [0-9]+ of [0-9]+ \(replaying\)"
	expect reverse-live "^\(int\) n = 4$"
	expect reverse-live "^Process [0-9]+ exited with status = $status "
else
	echo "no LLDB with process continue --reverse (lldb-21 or later):" \
	     "reverse execution from LLDB not tested"
fi

# Usage errors and a bundle that is not there.
expect_exit 1 "missing -- PROG" "$ptrr" lldb --batch
expect_exit 2 "cannot open bundle" "$ptrr" replay --lldb "$work/none.ptrr"

finish
