#!/bin/sh
# gdb on recordings through `ptrr replay` (ptrr serve + the JIT-reader
# unwinder + the pt commands): reverse execution from a crash, breakpoints
# hit backwards, both ends of history, threads, shared libraries, the pt
# listings, and malformed packets to the server.  Every place gdb stops
# is checked against the history ptrr's own commands list and against
# the sources, never against numbers taken from gdb.
. "${top_srcdir:-..}/tests/lib.sh"
gdb_work_dir gdb-replay
src="$top_srcdir/tests/progs"

# gdb_run NAME BUNDLE CMD...: ptrr replay --batch with -ex CMD each; the
# output in $work/NAME.out.
gdb_run() {
	name=$1 bundle=$2
	shift 2
	for c in "$@"; do
		set -- "$@" -ex "$c"
		shift
	done
	PTRR_GDB=$GDB timeout 120 "$ptrr" replay --batch "$@" "$bundle" \
		>"$work/$name.out" 2>&1 ||
		fail "$name: ptrr replay failed: $(tail -n 3 "$work/$name.out")"
}

# line_of FILE TEXT: the number of the line of FILE holding TEXT.
line_of() {
	grep -nF -- "$2" "$1" | head -n 1 | cut -d: -f1
}

# rips NAME: the values of $pc printed by "p/x $pc" in NAME's output.
rips() {
	sed -n 's/^\$[0-9]* = \(0x[0-9a-f]*\)$/\1/p' "$work/$1.out"
}

# entry BUNDLE N [TID]: the address of history entry N.
entry() {
	"$ptrr" insn-history --raw ${3:+--thread=$3} "$1" |
		awk -v n="$2" '$1 == n { print $2 }'
}

# position NAME: the instruction the selected thread is at, as pt info
# (printed last in NAME's output) says.
positions() {
	sed -n 's/^Thread [0-9]* (LWP [0-9]*) is at instruction \([0-9]*\) .*/\1/p' \
		"$work/$1.out"
}

# ---- A crash: gdb starts at it; reverse-step, bt, reverse-finish,
# reverse-next lead back to the line that made the bad pointer.
record crash --start=main -- "$progs/crash" || true
crash=$work/crash.ptrr
n=$("$ptrr" insn-history --raw "$crash" | tail -n 1 | cut -d' ' -f1)
crash_c=$src/crash.c
bad=$(line_of "$crash_c" "the bad pointer is produced here")
used=$(line_of "$crash_c" "and used here: SIGSEGV")
call=$(line_of "$crash_c" "clobber(r);")
gdb_run crash "$crash" 'p/x $pc' 'reverse-stepi' 'p/x $pc' \
	'reverse-step' 'bt' 'reverse-step' 'reverse-finish' \
	'p/x $pc' 'reverse-next' 'reverse-next' 'p/x $pc' 'pt info'
out=$work/crash.out
set -- $(rips crash)
[ "$1" = "$(entry "$crash" "$n")" ] ||
	fail "crash: gdb starts at $1, not at the last instruction $(entry "$crash" "$n")"
[ "$2" = "$(entry "$crash" $((n - 1)))" ] ||
	fail "crash: reverse-stepi went to $2, not $(entry "$crash" $((n - 1)))"
grep -q "^$used[[:space:]].*SIGSEGV" "$out" ||
	fail "crash: gdb does not show line $used at the start: $(head -n 5 "$out")"
grep -q "^#0 .* clobber (.*crash.c:$((bad + 1))" "$out" ||
	fail "crash: reverse-step does not reach the end of clobber: $(cat "$out")"
grep -q "^#1 .* in main () at .*crash.c:$call" "$out" ||
	fail "crash: bt in clobber does not show main at line $call"
grep -q "^$bad[[:space:]]" "$out" ||
	fail "crash: reverse-step does not reach line $bad (the bad pointer)"
grep -q "in main () at .*crash.c:$call\$" "$out" ||
	fail "crash: reverse-finish did not run back to main at line $call"
# reverse-finish stops on the call instruction: the entry just before
# clobber's first, by the history.
clobber=$(nm "$progs/crash" | awk '$3 == "clobber" { print $1 }')
base=$(entry "$crash" 1)
main_crash=$(nm "$progs/crash" | awk '$3 == "main" { print $1 }')
clobber_at=$(printf '0x%x' $((base - 0x$main_crash + 0x$clobber)))
first_clobber=$("$ptrr" insn-history --raw "$crash" |
	awk -v a="$clobber_at" '$2 == a { print $1; exit }')
[ "$3" = "$(entry "$crash" $((first_clobber - 1)))" ] ||
	fail "crash: reverse-finish went to $3, not the call at $(entry "$crash" $((first_clobber - 1)))"
grep -q "^$(line_of "$crash_c" "int v = lookup(r);")[[:space:]]" "$out" ||
	fail "crash: reverse-next did not step over lookup to its line"

# ---- Breakpoints hit backwards, many calls earlier: fact's entry in
# the recursion; each reverse-continue stops at the previous execution
# of it (by the history), then the start ("No more reverse-execution
# history"), then forward to the end.
record rec --start=main -- "$progs/recursion" || true
rec=$work/rec.ptrr
fact_off=$(nm "$progs/recursion" | awk '$3 == "fact" { print $1 }')
main_off=$(nm "$progs/recursion" | awk '$3 == "main" { print $1 }')
first=$(entry "$rec" 1)
fact=$(printf '0x%x' $((first - 0x$main_off + 0x$fact_off)))
"$ptrr" insn-history --raw "$rec" | awk -v a="$fact" '$2 == a { print $1 }' |
	sort -rn >"$work/fact.hits"
[ "$(wc -l <"$work/fact.hits")" -eq 5 ] ||
	fail "rec: fact ran $(wc -l <"$work/fact.hits") times, not 5"
gdb_run rec "$rec" 'bt' 'break fact' 'reverse-continue' 'pt info' \
	'reverse-continue' 'pt info' 'reverse-continue' 'reverse-continue' \
	'reverse-continue' 'pt info' 'reverse-continue' 'p/x $pc' \
	'continue' 'pt info' 'delete' 'continue' 'pt info' 'continue'
set -- $(positions rec)
[ "$1 $2 $3" = "$(sed -n '1p;2p;5p' "$work/fact.hits" | tr '\n' ' ' |
	sed 's/ $//')" ] ||
	fail "rec: reverse-continue stopped at $1 $2 $3, not at fact's last, next-to-last and first calls: $(tr '\n' ' ' <"$work/fact.hits")"
grep -q "No more reverse-execution history" "$work/rec.out" ||
	fail "rec: no 'No more reverse-execution history' at the start"
# At the end of a thread that exited its registers are not known: the
# frames come from the call history (the exit path back to libc's start).
grep -q '^#1 ' "$work/rec.out" && ! grep -q 'Backtrace stopped' "$work/rec.out" ||
	fail "rec: no backtrace at the end of an exited program: $(grep '^#' "$work/rec.out")"
[ "$(rips rec)" = "$first" ] ||
	fail "rec: the start of history is $(rips rec), not $first"
[ "$4" = "$(sed -n 5p "$work/fact.hits")" ] ||
	fail "rec: continue from the start stopped at $4, not at fact's first call"
last=$("$ptrr" insn-history --raw "$rec" | tail -n 1 | cut -d' ' -f1)
[ "$5" = "$last" ] || fail "rec: continue did not reach the end ($5, not $last)"
[ "$(grep -c "No more reverse-execution history" "$work/rec.out")" -ge 2 ] ||
	fail "rec: continuing at the end does not say the history ended"
# The end of an exited program is a plain stop: no signal, no exit.
! grep -Eq "Program received signal|exited (normally|with code)" \
	"$work/rec.out" ||
	fail "rec: the end of an exited recording is not a plain stop: $(grep -E 'signal|exited' "$work/rec.out")"

# ---- Threads: each has its own history and position.
record thr -- "$progs/threads" || true
thr=$work/thr.ptrr
tids=$(thread_ends "$thr" | awk '{ print $1 }')
ntids=$(echo $tids | wc -w)
tid2=$(echo $tids | cut -d' ' -f2)
n2=$("$ptrr" insn-history --raw --thread="$tid2" "$thr" | tail -n 1 |
	cut -d' ' -f1)
gdb_run thr "$thr" 'info threads' 'thread 2' 'p/x $pc' 'reverse-stepi' \
	'p/x $pc' 'reverse-stepi' 'p/x $pc' 'pt info'
[ "$(grep -c '^[* ] [0-9]* *Thread ' "$work/thr.out")" -eq "$ntids" ] ||
	fail "thr: info threads does not list $ntids threads: $(cat "$work/thr.out")"
set -- $(rips thr)
[ "$1 $2 $3" = "$(entry "$thr" "$n2" "$tid2") $(entry "$thr" $((n2 - 1)) "$tid2") $(entry "$thr" $((n2 - 2)) "$tid2")" ] ||
	fail "thr: thread $tid2 went $1 $2 $3 in reverse, not as its history"
grep -q "LWP $tid2) is at instruction $((n2 - 2)) " "$work/thr.out" ||
	fail "thr: pt info does not show thread $tid2 at $((n2 - 2))"

# ---- Shared libraries where they were loaded (read from this machine:
# ptrr replay sets gdb's sysroot to ""); the pt listings.
record plt --start=main -- "$progs/plt" || true
lib=$(realpath "$progs/libptrrplt.so")
gdb_run plt "$work/plt.ptrr" 'info sharedlibrary' 'pt call-history /c all' \
	'pt insn-history /r 1,+20'
start=$("$ptrr" info "$work/plt.ptrr" | awk -v l="$lib" '$2 == l { print $1 }' |
	head -n 1 | cut -d- -f1)
from=$(awk -v l="$lib" '$NF == l { print $1 }' "$work/plt.out")
[ -n "$from" ] && [ $((from)) -ge $((start)) ] &&
	[ $((from - start)) -lt 65536 ] ||
	fail "plt: $lib is at '$from' in gdb, mapped at '$start'"
"$ptrr" call-history --indent "$work/plt.ptrr" >"$work/plt.calls"
grep -Fxf "$work/plt.calls" "$work/plt.out" | cmp -s - "$work/plt.calls" ||
	fail "plt: pt call-history /c all is not ptrr call-history --indent"
"$ptrr" insn-history --raw --count=20 "$work/plt.ptrr" >"$work/plt.raw"
grep -Fxf "$work/plt.raw" "$work/plt.out" | cmp -s - "$work/plt.raw" ||
	fail "plt: pt insn-history /r 1,+20 is not ptrr insn-history --raw"

# A library whose file name has XML's special characters: escaped in
# the library list, gdb still finds it.
odd="$work/odd&<\"'lib.so"
cp "$progs/libptrrplt.so" "$odd"
# (A sanitizer build's runtime would refuse to come after it.)
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
LD_PRELOAD=$odd "$ptrr" record --backend=soft --start=main \
	-o "$work/odd.ptrr" -- "$progs/loops" >"$work/odd.log" 2>&1 ||
	fail "odd: ptrr record: $(tail -n 2 "$work/odd.log")"
gdb_run odd "$work/odd.ptrr" 'info sharedlibrary'
grep -qF "$odd" "$work/odd.out" ||
	fail "odd: gdb does not list $odd: $(cat "$work/odd.out")"

# ---- Over TCP: --listen binds loopback (port 0: any free one) and says
# where, which /proc/net/tcp confirms; another address gets a warning and
# is bound as asked; a malformed one is a usage error.

# listening NAME: waits for NAME.err's "listening on ADDR:PORT" line and
# prints PORT.
listening() {
	i=0
	while ! grep -qs '^listening on' "$work/$1.err" && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	sed -n 's/^listening on [0-9.]*:\([0-9][0-9]*\)$/\1/p' "$work/$1.err"
}

# bound PORT: the local addresses (hex, as /proc/net/tcp and tcp6 have
# them) listening on PORT.
bound() {
	awk -v p="$(printf ':%04X' "$1")" \
		'$4 == "0A" && substr($2, length($2) - 4) == p {
			print substr($2, 1, length($2) - 5) }' \
		/proc/net/tcp /proc/net/tcp6 2>/dev/null
}

"$ptrr" serve --listen 127.0.0.1:0 "$crash" 2>"$work/listen.err" &
server=$!
port=$(listening listen)
grep -q '^listening on 127\.0\.0\.1:' "$work/listen.err" || port=
if [ -z "$port" ]; then
	fail "listen: no 'listening on 127.0.0.1:PORT': $(cat "$work/listen.err")"
	kill $server 2>/dev/null
else
	[ "$(bound "$port")" = 0100007F ] ||
		fail "listen: port $port is bound to '$(bound "$port")', not 127.0.0.1"
	timeout 60 "$GDB" -nx -batch -ex 'set remotetimeout 60' \
		-ex "target remote 127.0.0.1:$port" \
		-ex 'p/x $pc' >"$work/listen.out" 2>&1
	[ "$(rips listen)" = "$(entry "$crash" "$n")" ] ||
		fail "listen: gdb over TCP is at '$(rips listen)', not at the crash"
fi
wait $server || fail "listen: the server did not end cleanly"
"$ptrr" serve --listen 0.0.0.0:0 "$crash" >/dev/null 2>"$work/any.err" \
	</dev/null &
server=$!
port=$(listening any)
grep -q "warning: listening on a non-loopback address" "$work/any.err" ||
	fail "listen: no warning for 0.0.0.0: $(cat "$work/any.err")"
[ -n "$port" ] && [ "$(bound "$port")" = 00000000 ] ||
	fail "listen: 0.0.0.0:${port:-?} is bound to '$(bound "${port:-0}")'"
kill $server 2>/dev/null
wait $server 2>/dev/null
expect_exit 1 "--listen wants ADDRESS:PORT" "$ptrr" serve --listen bogus "$crash"

# ---- Usage errors (1) and runtime failures (2), one line each, before
# gdb starts.
expect_exit 1 "^ptrr replay: missing BUNDLE" "$ptrr" replay
expect_exit 1 "invalid option --nope" "$ptrr" replay --nope "$crash"
expect_exit 2 "cannot open bundle $work/none.ptrr: No such file" \
	"$ptrr" replay "$work/none.ptrr"
expect_exit 1 "^ptrr serve: missing BUNDLE" "$ptrr" serve --stdio
expect_exit 1 "missing PROG after --" "$ptrr" serve --stdio --
expect_exit 1 "a BUNDLE or -- PROG, not both" \
	"$ptrr" serve --stdio "$crash" -- "$progs/crash"
expect_exit 2 "cannot open bundle" "$ptrr" serve --stdio "$work/none.ptrr"
expect_exit 1 "missing -- PROG" "$ptrr" gdb --batch

# ---- ptrr gdb -- PROG: a live session, stopped at the program's first
# instruction (in ld.so); forward to each call of lookup; a breakpoint
# in clobber, which runs between them, is not hit again after the
# second lookup; then the crash.  (Reverse
# execution in a live session is not there yet: docs/live.md.)
# (The crash is reached with the breakpoint deleted: stepping over a
# breakpoint whose instruction faults is reported as a plain stop, a
# known bug of the live target.)
PTRR_GDB=$GDB timeout 120 "$ptrr" gdb --batch -ex 'p/x $pc' \
	-ex 'break lookup' -ex 'continue' -ex 'continue' -ex 'delete' \
	-ex 'break clobber' -ex 'continue' -ex 'delete' -ex 'continue' \
	-- "$progs/crash" >"$work/live.out" 2>&1
[ "$(grep -c '^Breakpoint 1, lookup' "$work/live.out")" -eq 2 ] ||
	fail "live: lookup was not hit twice: $(cat "$work/live.out")"
grep -q "^Program received signal SIGSEGV" "$work/live.out" ||
	fail "live: no SIGSEGV after the second lookup: $(cat "$work/live.out")"
grep -q '^\$1 = 0x7ffff7fe' "$work/live.out" ||
	fail "live: gdb did not start at the first instruction (ld.so): $(head -n 5 "$work/live.out")"

# ---- A stripped program (no symbols, no debug file): reverse-finish out
# of libc's fflush stops on the call to it in the program, the last time
# that instruction ran, not at the start of the history.
if command -v strip >/dev/null &&
   strip -o "$work/stripped" "$progs/libc_crash" &&
   record stripped -- "$work/stripped"; then
	gdb_run stripped "$work/stripped.ptrr" 'reverse-finish' 'x/i $pc' \
		'pt info'
	at=$(sed -n 's/^=> \(0x[0-9a-f]*\):[[:space:]]*call .*<fflush@plt>$/\1/p' \
	     "$work/stripped.out")
	want=$("$ptrr" insn-history --raw "$work/stripped.ptrr" |
	       awk -v a="$at" '$2 == a { n = $1 } END { print n }')
	[ -n "$at" ] && [ "$(positions stripped)" = "$want" ] ||
		fail "stripped: reverse-finish did not stop on the call to fflush (entry ${want:-?} at ${at:-?}): $(grep -v '^Reading' "$work/stripped.out" | tail -n 8)"
else
	echo "strip not found or the stripped program not recorded: reverse-finish into stripped code not tested"
fi

# ---- Malformed packets to the server: a bad checksum is refused with
# '-', garbage is skipped, unknown packets get the empty reply, broken
# arguments an error, writes are refused; the server answers on and
# ends cleanly when the stream does.
{ printf 'garbage$qSupported#00'
  printf '%s' '$m,$mzz,4$qFoo$Z0,1$M0,1:00$vMustReplyEmpty$qC' | fix_checksums
  printf '$truncated#4'; } >"$work/bad.in"
timeout 20 "$ptrr" serve --stdio "$crash" <"$work/bad.in" >"$work/bad.out" \
	2>"$work/bad.err"
status=$?
[ $status -eq 0 ] || fail "malformed: the server exited $status: $(cat "$work/bad.err")"
reply=$(cat "$work/bad.out")
case $reply in
-*) ;;
*) fail "malformed: a bad checksum was not refused with '-': $reply" ;;
esac
for want in '$E01#a6' '$#00' '$E.memory cannot be written in a recording' "\$QC$(printf %x \
	"$(thread_ends "$crash" | awk '{ print $1 }')")#"; do
	case $reply in
	*"$want"*) ;;
	*) fail "malformed: no reply '$want' in: $reply" ;;
	esac
done

finish
