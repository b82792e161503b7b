#!/bin/sh
# Running a live program again: `ptrr gdb -- PROG` connects in gdb's
# extended-remote mode, where run, start and starti start the program
# again (vRun), kill leaves the server waiting for that, detach lets the
# program go on to its end, and quit kills it.
#
# again: greet, run three times (with its own arguments twice, then with
# new ones): each run prints its line and stops at the breakpoint.
# kill: start, kill (pt info then says there is no program), run again
# to the end, starti and reverse-stepi at the new start (no history).
# traced: --record-from-start; loops' breakpoint hit twice, then run
# again: reverse-step works at the first hit, and reverse-continue stops
# at the start of the new run, not at a hit of the old one.
# btrace: gdb's record pt in threads's second thread (the server's flags
# for it grow with the threads), in the first run and again in a second.
# detach: greet -o FILE let go at its breakpoint writes FILE; then run
# again, to the end.  quit: spin, stopped at a breakpoint, is killed by
# gdb's quit, and the server ends.
# Packets: vRun malformed, refused by a recording and outside extended
# mode, of a missing program; R; kill and detach between runs.
. "${top_srcdir:-..}/tests/lib.sh"
work_dir gdb-live-restart
progs="$top_builddir/tests/progs"
[ -x "$GDB" ] || { echo "gdb not found: skipped"; exit 77; }
export HOME="$work"

# ---- again: run three times ----
session again -- "$progs/greet" one two <<'EOF'
break greet
continue
continue
run
continue
run three
continue
EOF
count again '^Breakpoint 1, greet \(argc=argc@entry=3' 2
count again '^Breakpoint 1, greet \(argc=argc@entry=2' 1
count again '^greet: one two$' 2
count again '^greet: three$' 1
count again 'exited normally' 3
in_order again '^Breakpoint 1, greet \(argc=argc@entry=3' '^greet: one two$' \
	'exited normally' '^Breakpoint 1, greet \(argc=argc@entry=3' '^greet: one two$' \
	'exited normally' '^Breakpoint 1, greet \(argc=argc@entry=2' '^greet: three$' \
	'exited normally'

# ---- kill: start, kill, run again; no history at the new start ----
session kill -- "$progs/greet" four <<'EOF'
start
kill
info threads
pt info
run
starti
reverse-stepi
pt info
EOF
in_order kill '^Temporary breakpoint 1, main \(' '\) killed\]$' \
	'^No threads\.$' 'the program is not being run \(run starts it again\)' \
	'^greet: four$' 'exited normally' \
	'^Program stopped\.$' '^No more reverse-execution history\.$' \
	'nothing traced yet' 'started again \(run 4\)'

# ---- traced: the new run's history is its own ----
session traced --record-from-start -- "$progs/loops" <<'EOF'
break step
continue
continue
run
reverse-step
pt info
reverse-continue
pt info
EOF
in_order traced '^Breakpoint 1[.0-9]*, step \(i=i@entry=0\)' \
	'^Breakpoint 1[.0-9]*, step \(i=i@entry=1\)' \
	'^Breakpoint 1[.0-9]*, step \(i=i@entry=0\)' \
	'^main \(\) at .*loops\.c' 'is at instruction [0-9]+ of [0-9]+ \(replaying\)' \
	'started again \(run 2\)' \
	'^No more reverse-execution history\.$' '_start \(\)' \
	'is at instruction 1 of [0-9]+ \(replaying\)' 'started again \(run 2\)'
count traced '^Breakpoint 1[.0-9]*, step' 3

# ---- btrace: gdb's record pt in a thread made later, in two runs ----
session btrace -- "$progs/threads" <<'EOF'
break fib
continue
record pt
stepi
info record
run
info record
record pt
stepi
info record
EOF
in_order btrace '^Thread [0-9]+ hit Breakpoint 1, fib \(' \
	'^Recorded 1 instructions in 1 functions \(0 gaps\) for thread [0-9]+ ' \
	'^Thread [0-9]+ hit Breakpoint 1, fib \(' \
	'^No recording is currently active\.$' \
	'^Recorded 1 instructions in 1 functions \(0 gaps\) for thread [0-9]+ '

# ---- detach: the program goes on to its end, then runs again ----
rm -f "$work/done"
session detach -- "$progs/greet" -o "$work/done" <<EOF
break greet
continue
detach
shell i=0; while [ ! -s $work/done ] && [ \$i -lt 200 ]; do sleep 0.1; i=\$((i + 1)); done
shell cat $work/done
shell rm -f $work/done
run
continue
shell cat $work/done
EOF
# (Not where gdb's "detached" line falls among the shell's output: gdb
# may print it after the next shell command's, as under make check with
# SHELL unset.)
in_order detach '^Breakpoint 1, greet \(' '^Breakpoint 1, greet \(' \
	'exited normally' '^done$'
in_order detach '\) detached\]$'
count detach '^done$' 2
count detach "^greet: -o $work/done\$" 2

# ---- quit: kills the program, and the server ends ----
session quit -- "$progs/spin" <<EOF
break mix
continue
pipe info threads | sed -n 's/.*Thread \([0-9]*\).*/\1/p' | head -n 1 >$work/quit.tid
shell sed -n 's/^Tgid:[[:space:]]*//p' /proc/\$(cat $work/quit.tid)/status >$work/quit.pid
shell ps -o ppid= -p \$(cat $work/quit.pid) >$work/quit.server
EOF
pid=$(cat "$work/quit.pid" 2>/dev/null)
server=$(tr -d ' ' <"$work/quit.server" 2>/dev/null)
if [ -z "$pid" ] || [ -z "$server" ]; then
	fail "quit: no program or server pid: $(tail -n 5 "$work/quit.out")"
else
	i=0
	while { kill -0 "$pid" || kill -0 "$server"; } 2>/dev/null &&
	      [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -0 "$pid" 2>/dev/null && {
		fail "quit: the program (process $pid) is still there"
		kill -9 "$pid"
	}
	kill -0 "$server" 2>/dev/null &&
		fail "quit: the server (process $server) is still there"
fi

# ---- Packets: vRun and the process's end, to ptrr serve itself ----
# reply_count NAME PACKET N: the server's output NAME has N replies
# PACKET (without its checksum).
reply_count() {
	got=$(grep -o "\$$2#" "$work/$1.out" | wc -l)
	[ "$got" -eq "$3" ] ||
		fail "$1: $got replies '$2', wanted $3: $(head -c 600 "$work/$1.out")"
}

# serve_packets NAME SERVE-ARG...: sends the packets on standard input
# (written '$DATA' one after the other) to ptrr serve --stdio, in no-ack
# mode; its output in $work/NAME.out, its status checked.
serve_packets() {
	name=$1
	shift
	{ printf '$QStartNoAckMode'; cat; } | fix_checksums >"$work/$name.in"
	timeout 60 "$ptrr" serve --stdio "$@" <"$work/$name.in" \
		>"$work/$name.out" 2>"$work/$name.err" ||
		fail "$name: ptrr serve failed: $(cat "$work/$name.err")"
}

# Malformed (not hex, odd, no ';', a NUL), then good ones (the same
# program; new arguments), R, a kill; between runs the process's
# requests, vKill and D are refused, `?` says killed and no thread is
# left; a missing program.
printf '%s' '$!$vRun;zz$vRun;6$vRun$vRun;;00$vRun;$vRun;;6f6e65$R00' \
	'$vKill;1$g$m0,1$vCont;c$vKill;1$D$?$qfThreadInfo' \
	'$vRun;2f6e6f2f73756368' | serve_packets live -- "$progs/loops"
reply_count live 'OK' 3
reply_count live 'E01' 9
reply_count live 'X09' 1
reply_count live 'l' 1
reply_count live 'T05thread:[0-9a-f]*;[0-9a-f:;]*' 2
grep -q '\$E\.cannot run /no/such: No such file or directory#' \
	"$work/live.out" ||
	fail "live: no error for a missing program: $(cat "$work/live.out")"

# Outside extended mode, and on a recording.
printf '%s' '$vRun;$R00' | serve_packets plain -- "$progs/loops"
grep -q '\$E\.vRun needs extended mode (target extended-remote)\.#' \
	"$work/plain.out" || fail "plain: vRun accepted: $(cat "$work/plain.out")"
reply_count plain '' 1
record loops -- "$progs/loops" &&
	printf '%s' '$!$vRun;$qAttached' |
	serve_packets recording "$work/loops.ptrr"
grep -q '\$E\.A recording cannot run again: ptrr gdb -- PROG debugs a program live\.#' \
	"$work/recording.out" ||
	fail "recording: vRun not refused: $(cat "$work/recording.out")"
reply_count recording '' 1
reply_count recording '1' 1

finish
