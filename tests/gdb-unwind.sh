#!/bin/sh
# The JIT-reader unwinder (plugin/jit-reader/ptrr-unwind.so) in real gdb,
# loaded by hand as docs/unwinder.md says: `target remote | ptrr serve
# --stdio BUNDLE` and `jit-reader-load /abs/path/ptrr-unwind.so` on
# recordings of tests/progs/recursion, loops, crash and threads.  While
# replaying, bt lists the frames of the call history (checked against
# ptrr call-history, the disassembly and the sources) and ends at pc 0
# without complaint, up/frame N show the callers' lines, reverse-step
# enters the recursion, reverse-finish runs back to the call,
# reverse-next steps over calls, finish returns to the caller; at the
# end of history and in a live session the reader declines and gdb
# unwinds as usual.  Every place gdb stops is checked against ptrr's
# own history listings.
. "${top_srcdir:-..}/tests/lib.sh"
work_dir gdb-unwind
progs="$top_builddir/tests/progs"
src="$top_srcdir/tests/progs"
so="$top_builddir/plugin/jit-reader/.libs/ptrr-unwind.so"
[ -x "$GDB" ] || { echo "gdb not found: skipped"; exit 77; }
[ -f "$so" ] || { echo "$so not built"; exit 99; }
# No user gdbinit: the session is ours alone.
HOME=$work
export HOME

# gdb_replay NAME PROG BUNDLE CMD...: gdb on PROG, connected to ptrr's
# server for BUNDLE with the unwinder loaded, runs each CMD; its output
# in $work/NAME.out.  A CMD "@ TAG" marks where the output of the
# commands after it begins (see part).
gdb_replay() {
	name=$1 prog=$2 bundle=$3
	shift 3
	gdb_cmds "$@"
	timeout 120 "$GDB" -batch -nx -ex 'set pagination off' \
		-ex 'set remotetimeout 60' \
		-ex "target remote | \"$ptrr\" serve --stdio \"$bundle\"" \
		-ex "jit-reader-load $so" -x "$work/cmds" "$prog" \
		>"$work/$name.out" 2>&1 ||
		fail "$name: gdb failed: $(tail -n 3 "$work/$name.out")"
}

# gdb_cmds CMD...: writes the commands to $work/cmds, "@ TAG" as an echo
# of "@@ TAG".
gdb_cmds() {
	for cmd in "$@"; do
		case $cmd in
		"@ "*) printf 'echo @@ %s\\n\n' "${cmd#@ }" ;;
		*) printf '%s\n' "$cmd" ;;
		esac
	done >"$work/cmds"
}

# part NAME TAG: the output of NAME's commands after "@ TAG", up to the
# next tag.
part() {
	awk -v t="@@ $2" '$0 == t { on = 1; next } /^@@ / { on = 0 } on' \
		"$work/$1.out"
}

# line_of FILE TEXT: the number of the line of FILE holding TEXT.
line_of() {
	grep -nF -- "$2" "$1" | head -n 1 | cut -d: -f1
}

# entry BUNDLE N: the address of history entry N.
entry() {
	"$ptrr" insn-history --raw "$1" | awk -v n="$2" '$1 == n { print $2 }'
}

# entries_at BUNDLE ADDR: the numbers of the history entries at ADDR,
# oldest first.
entries_at() {
	"$ptrr" insn-history --raw "$1" | awk -v a="$2" '$2 == a { print $1 }'
}

# position NAME TAG: the instruction the thread is at after TAG, as the
# server's pt info says.
position() {
	part "$1" "$2" |
		sed -n 's/^Thread [0-9]* (LWP [0-9]*) is at instruction \([0-9]*\) .*/\1/p'
}

# pcs NAME TAG: the values "p/x $pc" printed after TAG.
pcs() {
	part "$1" "$2" | sed -n 's/^\$[0-9]* = \(0x[0-9a-f]*\)$/\1/p'
}

# frames NAME TAG: the backtrace after TAG as "LEVEL FUNCTION LINE PC"
# lines (PC "-" when gdb shows none: frame 0 at a line's start).
frames() {
	part "$1" "$2" | sed -n \
		-e 's/^#\([0-9]*\) *\(0x[0-9a-f]*\) in \([A-Za-z_0-9]*\) (.*:\([0-9]*\)$/\1 \3 \4 \2/p' \
		-e 's/^#\([0-9]*\) *\([A-Za-z_0-9]*\) (.*:\([0-9]*\)$/\1 \2 \3 -/p' |
	while read -r level func line pc; do
		[ "$pc" = - ] || pc=$(printf '0x%x' $((pc)))
		echo "$level $func $line $pc"
	done
}

# addr BIN SYM: where SYM of BIN was in the recording, which starts at
# main: the program's load base is the first entry's address less
# main's.
addr() {
	at "$1" "$(nm "$1" | awk -v s="$2" '$3 == s { print $1 }')"
}

# at BIN ADDR: where address ADDR (hex, no 0x) of BIN was in the
# recording.
at() {
	main=$(nm "$1" | awk '$3 == "main" { print $1 }')
	printf '0x%x\n' $((base - 0x$main + 0x$2))
}

# after_call BIN CALLER CALLEE: where the instruction after CALLER's call
# to CALLEE was in the recording (the return address), by the
# disassembly.
after_call() {
	at "$1" "$(objdump -d --no-show-raw-insn "$1" |
	awk -v f="<$2>:" -v c="<$3>" '
		$2 == f { on = 1; next }
		on && /^$/ { on = 0 }
		on && found { sub(/:/, "", $1); print $1; exit }
		on && $2 == "call" && $NF == c { found = 1 }')"
}

# recording PROG: records tests/progs/PROG from main on into
# $work/PROG.ptrr; sets prog (the program), bundle and base (where the
# program was loaded).
recording() {
	record "$1" --start=main -- "$progs/$1" || true
	prog=$progs/$1 bundle=$work/$1.ptrr
	base=$(entry "$bundle" 1)
}

# synthetic ADDR: true if ADDR is one of the unwinder's synthetic stack
# addresses (unwind_abi.h: just below 0x7fff00000000000, above every
# user-space address).
synthetic() {
	[ $(($1)) -lt $((0x7fff00000000000)) ] &&
	[ $(($1)) -ge $((0x7fff00000000000 - (1 << 48))) ]
}

# frame_at NAME TAG: the stack address of the selected frame after TAG,
# as "info frame" says ("frame at ADDR").
frame_at() {
	part "$1" "$2" | sed -n 's/^Stack level [0-9]*, frame at \(0x[0-9a-f]*\):$/\1/p'
}

# ---- Recursion: fact(5) down to fact(1).
recording recursion
rec=$bundle
fact=$(addr "$prog" fact)
fact_ret=$(after_call "$prog" fact fact)
main_ret=$(after_call "$prog" main fact)
c=$src/recursion.c
l_test=$(line_of "$c" "if (n <= 1)")
l_call=$(line_of "$c" "r = fact(n - 1);")
l_after=$(line_of "$c" "unwound = n;")
l_main=$(line_of "$c" "return fact(5) != 120;")
entries_at "$rec" "$fact" >"$work/fact.entries"
# The depth of the deepest call of fact, by the call history: the
# indentation of its deepest line less main's, two spaces a level.
depth=$("$ptrr" call-history --indent "$rec" | awk -F'\t' '
	{ n = match($2, /[^ ]/) - 1; f = substr($2, n + 1) }
	f == "main" && m == "" { m = n }
	f == "fact" && n > d { d = n }
	END { print (d - m) / 2 }')
[ "$depth" -eq 5 ] && [ "$(wc -l <"$work/fact.entries")" -eq 5 ] ||
	fail "rec: fact nests $depth deep and runs $(wc -l <"$work/fact.entries") times, not 5"
last_fact=$(tail -n 1 "$work/fact.entries")

# The deepest fact: bt, up, frame N, info frame, then reverse-finish.
gdb_replay rec1 "$prog" "$rec" 'break fact' 'reverse-continue' \
	'@ bt' 'bt' '@ up' 'up' '@ frame4' 'frame 4' '@ frame5' 'frame 5' \
	'@ info5' 'info frame' '@ info0' 'frame 0' 'info frame' 'delete' \
	'@ rfinish' 'reverse-finish' 'p/x $pc' 'monitor pt info' '@ bt2' 'bt'
frames rec1 bt >"$work/rec1.bt"
{ echo "0 fact $l_test -"
  for i in 1 2 3 4; do echo "$i fact $l_call $fact_ret"; done
  echo "5 main $l_main $main_ret"; } >"$work/rec1.want"
cmp -s "$work/rec1.bt" "$work/rec1.want" ||
	fail "rec: bt in the deepest fact is not fact x5 and main at their calls:" \
		"$(diff "$work/rec1.want" "$work/rec1.bt")"
[ "$(frames rec1 up)" = "1 fact $l_call $fact_ret" ] &&
part rec1 up | grep -q "^$l_call[[:space:]]*r = fact(n - 1);" ||
	fail "rec: up does not show the caller fact at line $l_call: $(part rec1 up)"
[ "$(frames rec1 frame4)" = "4 fact $l_call $fact_ret" ] &&
part rec1 frame4 | grep -q "^#4 .*n@entry=5" ||
	fail "rec: frame 4 is not fact(5) at line $l_call: $(part rec1 frame4)"
part rec1 frame5 | grep -q "^$l_main[[:space:]]*return fact(5) != 120;" ||
	fail "rec: frame 5 does not show main's line $l_main: $(part rec1 frame5)"
# Frame ids: the frames' CFAs, proven from the registers the recorder
# read where the history begins (main's entry) and the calls since:
# real stack addresses growing outward, never the unwinder's synthetic
# ones; main's is 8 above the rsp recorded at its entry (the rsp before
# the call that entered it).
f0=$(frame_at rec1 info0)
f5=$(frame_at rec1 info5)
rsp0=$(sed -n '/"start_regs"/,/}/s/.*"rsp": "\(0x[0-9a-f]*\)".*/\1/p' \
	"$rec/manifest.json" | head -n 1)
! synthetic "${f0:-0}" && ! synthetic "${f5:-0}" &&
	[ $((f0)) -gt 0 ] && [ $((f5)) -gt $((f0)) ] &&
	[ $((f5)) -eq $((${rsp0:-0} + 8)) ] ||
	fail "rec: frame ids '$f0' (frame 0) and '$f5' (main) are not CFAs growing outward from main's at $rsp0 + 8"
# reverse-finish: on fact(2)'s call of fact(1), the entry before it.
set -- $(pcs rec1 rfinish)
[ "${1:-}" = "$(entry "$rec" $((last_fact - 1)))" ] &&
	[ "$(position rec1 rfinish)" = $((last_fact - 1)) ] ||
	fail "rec: reverse-finish went to ${1:-nowhere} ($(position rec1 rfinish)), not the call at $((last_fact - 1))"
frames rec1 bt2 | awk '{ print $1, $2, $3 }' >"$work/rec1.bt2"
{ for i in 0 1 2 3; do echo "$i fact $l_call"; done
  echo "4 main $l_main"; } >"$work/rec1.want2"
cmp -s "$work/rec1.bt2" "$work/rec1.want2" ||
	fail "rec: bt after reverse-finish is not fact x4 and main:" \
		"$(diff "$work/rec1.want2" "$work/rec1.bt2")"

# finish from the deepest fact: forward to its return address in fact(2).
gdb_replay rec2 "$prog" "$rec" 'break fact' 'reverse-continue' 'delete' \
	'@ finish' 'finish' 'p/x $pc' 'monitor pt info' '@ bt' 'bt'
set -- $(pcs rec2 finish)
ret_at=$("$ptrr" insn-history --raw "$rec" |
	awk -v n="$last_fact" -v a="$fact_ret" '$1 > n && $2 == a { print $1; exit }')
[ "${1:-}" = "$fact_ret" ] && [ "$(position rec2 finish)" = "$ret_at" ] ||
	fail "rec: finish went to ${1:-nowhere} ($(position rec2 finish)), not $fact_ret at $ret_at"
[ "$(frames rec2 bt | awk '{ print $2 }' | tr '\n' ' ')" = \
  "fact fact fact fact main " ] ||
	fail "rec: bt after finish is not fact x4 and main: $(part rec2 bt)"

# Past main: the caller main returns to (by the call history: the
# first function after main's lines, one level up), then the frame at
# pc 0 where the frames the reader knows end, and nothing more: no
# "Backtrace stopped".
caller=$("$ptrr" call-history --indent "$rec" | awk -F'\t' '
	{ n = match($2, /[^ ]/) - 1; f = substr($2, n + 1) }
	f == "main" && m == "" { m = n; next }
	m != "" && n < m { print f; exit }')
gdb_replay rec4 "$prog" "$rec" 'break fact' 'reverse-continue' \
	'set backtrace past-main on' '@ bt' 'bt -frame-arguments none'
[ -n "$caller" ] &&
[ "$(frames rec4 bt | awk '{ print $2 }' | tr '\n' ' ')" = \
  "fact fact fact fact fact main $caller " ] &&
	[ "$(part rec4 bt | grep "^#" | tail -n 1)" = \
	  "#7  0x0000000000000000 in ?? ()" ] ||
	fail "rec: bt past main does not end with $caller and pc 0: $(part rec4 bt)"

# reverse-step into the recursion: from main just after fact(5)
# returned, back through fact(5)'s lines after its call, in reverse
# order of the source, then into the end of fact(4), whose caller is
# fact(5) at the call.  Arguments are not printed: n's location at
# fact's last instruction is the global unwound, whose memory an exited
# process's recording does not have.
l_ret=$(line_of "$c" "return n * r;")
gdb_replay rec5 "$prog" "$rec" 'set print frame-arguments none' \
	"break *$main_ret" 'reverse-continue' 'delete' \
	'reverse-step' '@ rs1' 'bt' 'reverse-step' '@ rs2' 'bt' \
	'reverse-step' '@ rs3' 'bt' 'reverse-step' '@ rs4' 'bt'
i=0
for want in "fact $((l_ret + 1))" "fact $l_ret" "fact $l_after"; do
	i=$((i + 1))
	[ "$(frames rec5 rs$i | awk '{ print $2, $3 }' | tr '\n' ' ')" = \
	  "$want main $l_main " ] ||
		fail "rec: reverse-step $i is not in fact(5) at $want: $(part rec5 rs$i)"
done
frames rec5 rs4 | awk '{ print $1, $2, ($1 ? $3 " " $4 : $3) }' \
	>"$work/rec5.bt"
printf '0 fact %s\n1 fact %s %s\n2 main %s %s\n' $((l_ret + 1)) \
	"$l_call" "$fact_ret" "$l_main" "$main_ret" >"$work/rec5.want"
cmp -s "$work/rec5.bt" "$work/rec5.want" ||
	fail "rec: reverse-step from line $l_after did not enter the end of fact(4):" \
		"$(diff "$work/rec5.want" "$work/rec5.bt")"

# reverse-next over a call: from line $l_after of fact(5), back over
# fact(4) and everything under it to its call, line $l_call, in fact(5).
gdb_replay rec3 "$prog" "$rec" "break recursion.c:$l_after" 'reverse-continue' \
	'@ bt' 'bt' 'monitor pt info' 'delete' '@ rnext' 'reverse-next' \
	'bt' 'monitor pt info'
second=$(sed -n 2p "$work/fact.entries")
[ "$(frames rec3 bt | awk '{ print $2, $3 }' | tr '\n' ' ')" = \
  "fact $l_after main $l_main " ] ||
	fail "rec: the last stop at line $l_after is not in fact(5): $(part rec3 bt)"
[ "$(frames rec3 rnext | awk '{ print $2, $3 }' | tr '\n' ' ')" = \
  "fact $l_call main $l_main " ] ||
	fail "rec: reverse-next did not stay in fact(5) at line $l_call: $(part rec3 rnext)"
p=$(position rec3 rnext)
[ -n "$p" ] && [ "$p" -lt "$second" ] && [ "$p" -gt "$(head -n 1 "$work/fact.entries")" ] ||
	fail "rec: reverse-next stopped at ${p:-?}, not before fact(4)'s start ($second) in fact(5)"

# ---- Loops: main calls step 20 times.
recording loops
loops=$bundle
step=$(addr "$prog" step)
step_ret=$(after_call "$prog" main step)
c=$src/loops.c
l_call=$(line_of "$c" "sum += step(i);")
entries_at "$loops" "$step" >"$work/step.entries"
[ "$(wc -l <"$work/step.entries")" -eq 20 ] ||
	fail "loops: step ran $(wc -l <"$work/step.entries") times, not 20"
s18=$(sed -n 18p "$work/step.entries")
s19=$(sed -n 19p "$work/step.entries")
s20=$(sed -n 20p "$work/step.entries")
gdb_replay loops "$prog" "$loops" 'break step' 'reverse-continue' \
	'@ bt' 'bt' '@ up' 'up' 'frame 0' 'delete' '@ rfinish' \
	'reverse-finish' 'p/x $pc' 'monitor pt info' '@ rnext1' \
	'reverse-next' 'bt' 'monitor pt info' '@ rnext2' 'reverse-next' 'bt' \
	'monitor pt info'
[ "$(frames loops bt | awk '{ print $1, $2, $4 }' | tr '\n' ' ')" = \
  "0 step - 1 main $step_ret " ] ||
	fail "loops: bt in step is not step and main at $step_ret: $(part loops bt)"
part loops up | grep -q "^$l_call[[:space:]]*sum += step(i);" ||
	fail "loops: up does not show main's line $l_call: $(part loops up)"
set -- $(pcs loops rfinish)
[ "${1:-}" = "$(entry "$loops" $((s20 - 1)))" ] ||
	fail "loops: reverse-finish went to ${1:-nowhere}, not the call at $((s20 - 1))"
# Each reverse-next stays in main; the two together step back over one
# whole call of step (the 19th), as the loop's lines come in turn.
for t in rnext1 rnext2; do
	[ "$(frames loops $t | awk '{ print $1, $2 }' | tr '\n' ' ')" = \
	  "0 main " ] ||
		fail "loops: $t left main: $(part loops $t)"
done
p1=$(position loops rnext1)
p2=$(position loops rnext2)
[ -n "$p1" ] && [ "$p1" -gt "$s19" ] && [ "$p1" -lt $((s20 - 1)) ] ||
	fail "loops: the first reverse-next went to ${p1:-?}, not between step's 19th and 20th calls ($s19, $s20)"
[ -n "$p2" ] && [ "$p2" -gt "$s18" ] && [ "$p2" -lt "$s19" ] ||
	fail "loops: the second reverse-next went to ${p2:-?}, not over step's 19th call ($s18, $s19)"
frames loops rnext2 | grep -q "^0 main $l_call " ||
	fail "loops: reverse-next over step does not end on the line calling it ($l_call)"

# ---- A crash: at the end of history (not replaying) the reader
# declines and gdb unwinds by the DWARF CFI over the recorded stack; one
# instruction back (the call of lookup) the reader's frames take over,
# and forward again gdb's; reverse-step goes back into clobber, whose
# caller the reader gives.
recording crash
crash=$bundle
n=$("$ptrr" insn-history --raw "$crash" | tail -n 1 | cut -d' ' -f1)
c=$src/crash.c
l_use=$(line_of "$c" "and used here: SIGSEGV")
l_call=$(line_of "$c" "v += lookup(r);")
l_clobber=$(line_of "$c" "clobber(r);")
gdb_replay crash "$prog" "$crash" '@ end' 'bt' 'info frame' \
	'monitor pt info' 'reverse-stepi' '@ back' 'bt' 'info frame' \
	'p/x $pc' 'stepi' '@ again' 'bt' 'info frame' 'monitor pt info' \
	'reverse-step' 'reverse-step' '@ clobber' 'bt' 'info frame'
part crash end | grep -q "(the end of its history: not replaying)" ||
	fail "crash: gdb does not start at the end of history: $(part crash end)"
frames crash end | awk '{ print $1, $2, $3 }' >"$work/crash.end"
printf '0 lookup %s\n1 main %s\n' "$l_use" "$l_call" >"$work/crash.want"
cmp -s "$work/crash.end" "$work/crash.want" ||
	fail "crash: gdb's own bt at the end is not lookup and main:" \
		"$(part crash end)"
for t in end again; do
	f=$(frame_at crash $t)
	[ -n "$f" ] && ! synthetic "$f" && [ $((f)) -lt $((1 << 47)) ] ||
		fail "crash: at the end ($t) frame 0 is at '$f', not on the real stack (the reader did not decline)"
done
[ "$(frames crash again)" = "$(frames crash end)" ] ||
	fail "crash: back at the end, bt differs: $(part crash again)"
# One instruction back the reader's frames take over, with main's CFA
# where gdb's own unwinding put main at the end ("called by frame at"):
# the same frame id on both sides of the end.
f=$(frame_at crash back)
called_by=$(part crash end |
	sed -n 's/^ called by frame at \(0x[0-9a-f]*\).*$/\1/p' | head -n 1)
[ -n "$f" ] && [ "$f" = "$called_by" ] ||
	fail "crash: one instruction back frame 0 (main) is at '$f', not at main's CFA at the end ('$called_by')"
[ "$(pcs crash back)" = "$(entry "$crash" $((n - 1)))" ] &&
	[ "$(frames crash back | awk '{ print $1, $2, $3 }')" = "0 main $l_call" ] ||
	fail "crash: one instruction back is not main's call of lookup: $(part crash back)"
[ "$(frames crash clobber | awk '{ print $1, $2 }' | tr '\n' ' ')" = \
  "0 clobber 1 main " ] &&
	[ "$(frames crash clobber | sed -n 2p)" = \
	  "1 main $l_clobber $(after_call "$prog" main clobber)" ] ||
	fail "crash: reverse-step into clobber: bt is not clobber called by main at line $l_clobber: $(part crash clobber)"

# ---- Threads: the thread that runs square_sum, selected, replays back
# to it; bt is its stack by its call history (the functions enclosing
# square_sum's first line in ptrr call-history --indent), then pc 0;
# reverse-finish lands on producer's call (the entry before
# square_sum's first in that thread's history).  Names are compared
# without leading underscores and clone suffixes: gdb says clone3 and
# square_sum where ptrr says __clone3 and square_sum.constprop.0.
recording threads
thr=$bundle
c=$src/threads.c
sq=$(nm "$prog" | awk '$3 ~ /^square_sum($|\.)/ { print $3; exit }')
square=$(addr "$prog" "$sq")
n=0
for tid in $(thread_ends "$thr" | awk '{ print $1 }'); do
	n=$((n + 1))
	"$ptrr" call-history --indent --thread="$tid" "$thr" | awk -F'\t' '
		{ i = match($2, /[^ ]/) - 1; f = substr($2, i + 1); at[i] = f }
		f ~ /^square_sum($|\.)/ {
			for (; i >= 0; i -= 2) if (i in at) print at[i]
			exit
		}' | sed 's/^_*//; s/\..*//' >"$work/thr.want"
	[ -s "$work/thr.want" ] && break
done
[ -s "$work/thr.want" ] || fail "threads: no thread calls square_sum"
first=$("$ptrr" insn-history --raw --thread="$tid" "$thr" |
	awk -v a="$square" '$2 == a { print $1; exit }')
call=$("$ptrr" insn-history --raw --thread="$tid" "$thr" |
	awk -v n="$((first - 1))" '$1 == n { print $2 }')
gdb_replay threads "$prog" "$thr" "thread $n" 'break square_sum' \
	'reverse-continue' '@ bt' 'bt' 'delete' '@ rfinish' \
	'reverse-finish' 'p/x $pc' 'bt'
frames threads bt | awk '{ print $2 }' | sed 's/^_*//' >"$work/thr.got"
cmp -s "$work/thr.got" "$work/thr.want" &&
	[ "$(part threads bt | grep '^#' | tail -n 1 | sed 's/^#[0-9]* *//')" = \
	  "0x0000000000000000 in ?? ()" ] ||
	fail "threads: bt in square_sum is not $(tr '\n' ' ' <"$work/thr.want")then pc 0: $(part threads bt)"
[ "$(frames threads bt | sed -n 2p | cut -d' ' -f2-)" = \
  "producer $(line_of "$c" "long v = square_sum(200);") $(after_call "$prog" producer "$sq")" ] ||
	fail "threads: square_sum's caller is not producer at its call: $(part threads bt)"
[ "$(frames threads rfinish | sed -n 1p | cut -d' ' -f2)" = producer ] &&
	[ -n "$call" ] && [ "$(pcs threads rfinish)" = "$call" ] ||
	fail "threads: reverse-finish did not land on producer's call of square_sum ($call): $(part threads rfinish)"

# ---- From the program's first instruction: the history begins at the
# dynamic loader's entry point, which has no call frame information; its
# frame is at rsp + 8 there (what a call would have left, and what gdb's
# own unwinding shows at `starti`), never a synthetic address, and stays
# the same for the loader's first callee (its caller's frame).
record entry -- "$progs/loops" || true
gdb_replay entry "$progs/loops" "$work/entry.ptrr" 'reverse-continue' \
	'@ first' 'info frame' 'p/x $sp' 'monitor pt info' 'stepi 3' \
	'@ later' 'up' 'info frame' 'monitor pt info'
sp=$(part entry first | sed -n 's/^\$[0-9]* = \(0x[0-9a-f]*\)$/\1/p')
fe=$(frame_at entry first)
fl=$(frame_at entry later)
[ "$(position entry first)" = 1 ] ||
	fail "entry: reverse-continue did not reach the first instruction: $(part entry first)"
[ -n "$sp" ] && [ -n "$fe" ] && ! synthetic "$fe" &&
	[ $((fe)) -eq $((sp + 8)) ] && [ "$fl" = "$fe" ] ||
	fail "entry: the entry point's frame is at '$fe' then '$fl', not rsp + 8 ($sp + 8): $(part entry first) $(part entry later)"

# ---- A signal handler at -O0: busy() called from on_usr(), which a
# signal entered, has no proven CFA (the history does not say where the
# kernel put the handler's frame), and busy's argument lives in a stack
# slot gdb finds from the CFA.  The reader declines that frame 0 rather
# than give gdb an invented frame base: the argument prints
# <unavailable>, never a read error at a made-up address, and the stack
# ends there (docs/unwinder.md).  busy(5), called from main, has its
# caller and real frame address.
prog=$progs/signals_O0
record sigO0 -- "$prog" || true
gdb_replay sigO0 "$prog" "$work/sigO0.ptrr" 'break busy' \
	'reverse-continue' '@ handler' 'bt' 'info frame' 'p n' \
	'monitor pt info' 'reverse-continue' '@ main' 'bt' 'info frame'
mv "$work/sigO0.out" "$work/sigO0.txt"
# txtpart NAME TAG: part() of $work/NAME.txt (an output kept out of the
# check for complaints at the end: gdb's "Backtrace stopped" is wanted).
txtpart() {
	awk -v t="@@ $2" '$0 == t { on = 1; next } /^@@ / { on = 0 } on' \
		"$work/$1.txt"
}
sigpart() {
	txtpart sigO0 "$1"
}
sigpart handler | grep -q '^#0  busy (n=<unavailable>) at ' &&
	! sigpart handler | grep -q '^#1 ' &&
	[ "$(sigpart handler | sed -n 's/^\$[0-9]* = //p')" = '<unavailable>' ] ||
	fail "sigO0: busy in the handler is not shown with n <unavailable> and no caller: $(sigpart handler)"
grep -E 'Cannot access memory at address 0x7ffef|frame at 0x7ffef|0x7fff00000000000' \
	"$work/sigO0.txt" &&
	fail "sigO0: a synthetic frame address reached the user (above)"
sigpart main | grep -q '^#1 .* in main () at ' ||
	fail "sigO0: busy(5) is not shown called from main: $(sigpart main)"
fm=$(sigpart main | sed -n 's/^Stack level 0, frame at \(0x[0-9a-f]*\):$/\1/p')
[ -n "$fm" ] && ! synthetic "$fm" && [ $((fm)) -lt $((1 << 47)) ] ||
	fail "sigO0: busy(5)'s frame is at '$fm', not on the real stack"

# ---- The same in code without debug information: scramble(), called
# from a signal handler, has no line information and no proven CFA, nor
# has its caller on_usr.  Once both kept invented frame addresses: bt
# showed on_usr's argument as a read error at one, `info frame` showed
# another.  Now the stack ends at scramble, which
# has no frame address, and nothing invented reaches the user.
prog=$progs/handler
record handler -- "$prog" || true
gdb_replay handler "$prog" "$work/handler.ptrr" 'break scramble' \
	'reverse-continue' '@ past' 'bt' 'info frame' 'p $rsp' 'p $pc' \
	'monitor pt info'
mv "$work/handler.out" "$work/handler.txt"
hpart() {
	txtpart handler "$1"
}
hpart past | grep -q '^#0  .* in scramble ()' &&
	! hpart past | grep -q '^#1 ' &&
	hpart past | grep -q '^Stack level 0, frame at 0x0:' &&
	hpart past | grep -q '^\$[0-9]* = <unavailable>$' ||
	fail "handler: scramble in the past is not shown alone, without a frame address and rsp: $(hpart past)"
hpart past | grep -q '^\$[0-9]* = (void (\*)()) 0x[0-9a-f]* <scramble' ||
	fail "handler: the pc in scramble is not shown: $(hpart past)"
grep -E 'Cannot access memory at address 0x(7ffef|7fff0000|f[0-9a-f]{3}$)|frame at 0x(7ffef|f[0-9a-f]{3}:)|= 0x7ffef|0x7fff00000000000' \
	"$work/handler.txt" &&
	fail "handler: a synthetic frame address reached the user (above)"

# ---- Live: gdb running the program itself, the reader loaded; it
# declines (no server answers its range) and gdb's frames are the real
# ones, arguments and all.
c=$src/recursion.c
timeout 120 "$GDB" -batch -nx -ex "jit-reader-load $so" \
	-ex 'break fact if n == 1' -ex run -ex 'echo @@ bt\n' -ex bt \
	-ex 'info frame' -ex kill "$progs/recursion" >"$work/live.out" 2>&1 ||
	fail "live: gdb failed: $(tail -n 3 "$work/live.out")"
part live bt |
	sed -n 's/^#\([0-9]\) .*fact (n=\(n@entry=\)*\([0-9]\)).*/\1 \3/p' |
	tr '\n' ' ' >"$work/live.args"
[ "$(cat "$work/live.args")" = "0 1 1 2 2 3 3 4 4 5 " ] ||
	fail "live: bt does not show fact(1)..fact(5): $(part live bt)"
fl=$(frame_at live bt)
[ -n "$fl" ] && ! synthetic "$fl" ||
	fail "live: frame 0 is at '$fl', not on the real stack"

# ---- Nothing gdb said anywhere is a complaint about the frames.
for out in "$work"/*.out; do
	grep -E "previous frame inner|Backtrace stopped|Cannot access memory|Error|[Pp]ython|jit-reader" "$out" &&
		fail "$(basename "$out"): gdb complained (above)"
done

finish
