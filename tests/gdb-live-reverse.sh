#!/bin/sh
# Reverse execution in a live session: `ptrr gdb -- PROG` with tracing
# started by `pt start` or --record-from-start, then gdb's reverse
# commands over the trace so far, forward again through the history to
# the present and on into the live process, `pt save` of the trace so far
# and `ptrr replay` of what it saved.
#
# recursion: fact(5) recurses to fact(1).  (In the past, a write and
# an inferior call are refused: gdb cannot write the call's frame, or,
# where rsp is not proven, has no rsp to put it.)  A breakpoint at fact is hit
# live five times (n = 5 .. 1); backward, it is hit again at fact(2) ..
# fact(5), with one call frame fewer each time, then at main, where
# tracing began, then the start of the trace; forward, the same four in history and then fact(1) at the
# present, where n is known again (the registers are known there);
# with the breakpoint gone the program runs on to its end.
#
# crash: traced from its first instruction; from the SIGSEGV in lookup,
# reverse-finish returns to the call in main, reverse-next steps back
# over clobber() and lookup(), reverse-step into make_record(); forward
# again it arrives at the SIGSEGV. The bundle pt save writes says
# the fault address; and 0 for a general protection fault (gpfault).
#
# threads: a breakpoint hit in a second thread; that thread's history
# starts where it was created, and the main thread has its own.
. "${top_srcdir:-..}/tests/lib.sh"
gdb_work_dir gdb-live-reverse

# ---- the live options ----
expect_exit 1 'are for a live session' "$ptrr" serve --record-from-start \
	"$work/none.ptrr"
expect_exit 1 '^ptrr serve: --backend wants auto, soft, perf or qemu, not x$' \
	"$ptrr" serve --backend=x -- "$progs/loops"
PTRR_QEMU=/nonexistent expect_exit 2 \
	'^ptrr serve: no qemu-x86_64 found; use --backend=soft$' \
	"$ptrr" serve --backend=qemu -- "$progs/loops"
expect_exit 1 '^ptrr serve: --buffer-size wants a size of 4K or more' \
	"$ptrr" serve --buffer-size=1 -- "$progs/loops"
if [ ! -d /sys/bus/event_source/devices/intel_pt ]; then
	expect_exit 2 'intel_pt PMU not found.*use --backend=soft' \
		"$ptrr" serve --backend=perf -- "$progs/loops"
	# --backend=auto: perf, then QEMU, then the software backend, in
	# one line.
	auto='exec "$0" serve --backend=auto -- "$1" </dev/null'
	PTRR_QEMU=/nonexistent expect_exit 0 \
		'^ptrr serve: intel_pt PMU not found \(.*\): this CPU or VM has no Intel PT; no qemu-x86_64 found; using the software backend$' \
		sh -c "$auto" "$ptrr" "$progs/loops"
	if command -v qemu-x86_64 >/dev/null 2>&1; then
		expect_exit 0 \
			'^ptrr serve: intel_pt PMU not found \(.*\): this CPU or VM has no Intel PT; using QEMU \(.*qemu-x86_64\)$' \
			sh -c "$auto" "$ptrr" "$progs/loops"
	fi
fi

# ---- recursion: pt start at main, breakpoints backward and forward ----

session recursion -- "$progs/recursion" <<'EOF'
break main
continue
pt start
break fact
continue
continue
continue
continue
continue
bt
reverse-step
bt
reverse-continue
bt
pt info
set var unwound = 3
print fact(3)
reverse-continue
reverse-continue
reverse-continue
bt
reverse-continue
reverse-continue
continue
continue
continue
continue
continue
bt
print unwound
delete
continue
EOF
hit='^Breakpoint 2, fact \(n='
in_order recursion 'tracing on' \
	"${hit}n@entry=5\)" "${hit}n@entry=4\)" "${hit}n@entry=3\)" \
	"${hit}n@entry=2\)" "${hit}n@entry=1\)" \
	'^#5 .* in main \(\)' \
	'^11[[:space:]]+r = fact\(n - 1\);' \
	'^#3 .* in fact ' '^#4 .* in main \(\)' \
	"${hit}" '^#4 .* in main \(\)' \
	'is at instruction [0-9]+ of [0-9]+ \(replaying\)' \
	'^Cannot access memory at address 0x[0-9a-f]+' \
	'^(Register [0-9]+ is not available|Cannot access memory at address 0x[0-9a-f]+)' \
	"${hit}" "${hit}" "${hit}" \
	'^#0 .*fact ' '^#1 .* in main \(\)' \
	'^Breakpoint 1, main \(\)' \
	'^No more reverse-execution history\.' \
	"${hit}" "${hit}" "${hit}" "${hit}" "${hit}n@entry=1\)" \
	'^#5 .* in main \(\)' \
	'^\$1 = 0$' 'exited normally'
# n at each hit, in order: live 5 .. 1, back 2 .. 5, forward again 5 ..
# 1; in the past what the value recovery proves (it goes on across the
# live stops: the walk from the present back), or <unavailable>, never
# another number.
count recursion "${hit}n@entry=1\)" 2
got=$(sed -n 's/^Breakpoint 2, fact (n=\(n@entry=\)\{0,1\}\([0-9]*\|<unavailable>\)[,)].*/\2/p' \
	"$work/recursion.out" | tr '\n' ' ')
want='5 4 3 2 1 2 3 4 5 5 4 3 2 1 '
set -- $want
for n in $got; do
	[ "$n" = "$1" ] || [ "$n" = '<unavailable>' ] ||
		fail "recursion: n is $n at a hit of fact, wanted $1 (all: $got)"
	shift
done
[ $# -eq 0 ] || fail "recursion: hits of fact: $got, wanted $want"
# bt in the past ends at main: no frame beyond the call history's.
if grep -q '^#[0-9]* .* in ?? ()' "$work/recursion.out"; then
	fail "recursion: a frame gdb could not place"
fi
# pt info names the trace's format and CPU as ptrr info does for ptrr
# record's (the same backend's: not "CPU: unknown", "return
# compression off").
"$ptrr" record --backend="${PTRR_TEST_BACKEND:-soft}" \
	-o "$work/recursion.ptrr" -- "$progs/recursion" >/dev/null 2>&1 ||
	fail "recursion: ptrr record failed"
"$ptrr" info "$work/recursion.ptrr" >"$work/recursion.info" 2>&1
for f in 'Recording format' CPU; do
	want=$(grep "^$f: " "$work/recursion.info")
	[ -n "$want" ] && grep -qxF "$want" "$work/recursion.out" ||
		fail "recursion: pt info's '$(grep "^$f: " \
		     "$work/recursion.out")', not ptrr info's '$want'"
done

# ---- the call segments, computed in the background at a stop ----
# At a stop, the pass over the call segments of what the run added goes
# on in a background thread while gdb waits for its user (live_target.c,
# replay_prepare): two seconds later, pt info (which says so before it
# lists anything, as listing waits for them) finds them up to date, and
# the first reverse step has none of the pass to wait for.  Before, the
# pass ran only when something asked for a call stack.
session background --record-from-start -- "$progs/recursion" <<'EOF'
break fact
continue
shell sleep 2
pt info
reverse-stepi
bt
EOF
in_order background '^Breakpoint 1, fact \(n=n@entry=5\)' \
	'^Call segments of thread 1: up to date\.$' '^#0 .* in main \(\)'

# ---- crash: --record-from-start, the SIGSEGV, back to its cause, save ---

session crash --record-from-start -- "$progs/crash" <<EOF
continue
reverse-finish
reverse-next
reverse-next
reverse-step
bt
pt save $work/crash.ptrr
continue
EOF
in_order crash '^Program received signal SIGSEGV' \
	'^29[[:space:]]+return \*r->value;' \
	'^38[[:space:]]+v \+= lookup\(r\);' \
	'37[[:space:]]+clobber\(r\);' \
	'^35[[:space:]]+int v = lookup\(r\);' \
	'in make_record \(' \
	'^#1 .* in main \(\) at .*crash\.c:34' \
	"^Saved 1 thread, [0-9]+ instructions, to $work/crash.ptrr" \
	'^Program received signal SIGSEGV' \
	'^29[[:space:]]+return \*r->value;'

# What pt save wrote opens in ptrr replay: the crash, and back to the line
# that produced the bad pointer.
PTRR_GDB=$GDB timeout 120 "$ptrr" replay --batch -ex bt -ex reverse-step \
	-ex reverse-step -ex reverse-step "$work/crash.ptrr" \
	>"$work/replay.out" 2>&1 ||
	fail "ptrr replay of the saved bundle: $(tail -n 3 "$work/replay.out")"
in_order replay '^#0 +lookup \(' '^#1 .* in main \(\) at .*crash\.c:38' \
	'^24[[:space:]]+r->value = \(int \*\) 0x10;'
# ... and says how it was traced, as the session did.
"$ptrr" info "$work/crash.ptrr" >"$work/crash.info" 2>&1
for f in 'Recording format' CPU; do
	want=$(grep "^$f: " "$work/recursion.info")
	grep -qxF "$want" "$work/crash.info" ||
		fail "crash: pt save's bundle says '$(grep "^$f: " \
		     "$work/crash.info")', not '$want'"
done
# ... with the fault's address: 0x10, the bad pointer (under QEMU, whose
# gdb stub has no siginfo, from the vCPU's CR2, where QEMU keeps it).
grep -q '^Stop reason: stopped by SIGSEGV at 0x[0-9a-f]* (fault address 0x10)$' \
	"$work/crash.info" ||
	fail "crash: pt save's bundle says '$(grep '^Stop reason' \
	     "$work/crash.info")', not fault address 0x10"
# gpfault: a general protection fault (hlt) after a page fault at 0x20
# that a handler caught: its address is 0, as the kernel's and QEMU's
# siginfo say (CR2 still holds 0x20 then: no instruction at the fault
# accesses it).
session gpfault --record-from-start -- "$progs/gpfault" <<EOF
continue
continue
pt save $work/gpfault.ptrr
EOF
count gpfault '^Program received signal SIGSEGV' 2
"$ptrr" info "$work/gpfault.ptrr" >"$work/gpfault.info" 2>&1
grep -q '^Stop reason: stopped by SIGSEGV at 0x[0-9a-f]* (fault address 0x0)$' \
	"$work/gpfault.info" ||
	fail "gpfault: pt save's bundle says '$(grep '^Stop reason' \
	     "$work/gpfault.info")', not fault address 0x0"

# pt save refuses a directory that is not a bundle, and says so.
mkdir "$work/taken" && : >"$work/taken/file"
session nosave --record-from-start -- "$progs/loops" <<EOF
stepi
pt save $work/taken
EOF
grep -q "$work/taken" "$work/nosave.out" ||
	fail "nosave: pt save into a used directory did not name it"
[ -f "$work/taken/file" ] && [ ! -f "$work/taken/manifest.json" ] ||
	fail "nosave: pt save wrote into a used directory"

# ---- jit: code generated at run time decodes ----
# jit writes two functions into an anonymous page and calls each 20
# times: 650 of sum's instructions (4 + 3i for sum(i), i = 0 .. 19) and
# 80 of call's (4 each) run there.  Traced from main to printf, the
# history has them all and no gap (the session keeps the code: QEMU's
# plugin the blocks it translated there, natively the page's bytes at
# the stop).
session jit -- "$progs/jit" <<EOF
break main
continue
pt start
break printf
continue
pt save $work/jit.ptrr
EOF
page=$("$ptrr" info "$work/jit.ptrr" |
	sed -n 's/^  0x0*\([0-9a-f]*\)-0x[0-9a-f]*  \[copy\]$/\1/p' | head -n 1)
if [ -z "$page" ]; then
	fail "jit: no code of the anonymous page in the bundle:" \
		"$("$ptrr" info "$work/jit.ptrr" | grep '^  0x')"
else
	page=$(($(printf '%d' "0x$page") / 4096 * 4096))
	"$ptrr" insn-history --raw "$work/jit.ptrr" >"$work/jit.raw" 2>&1
	n=$(awk "$awk_hex"'
		$2 != "[gap]" && hex($2) >= p && hex($2) < p + 4096 { n++ }
		END { print n + 0 }' p="$page" "$work/jit.raw")
	[ "$n" = 730 ] && ! grep -q '\[gap\]' "$work/jit.raw" ||
		fail "jit: $n instructions in the generated code, not 730," \
			"$(grep -c '\[gap\]' "$work/jit.raw") gaps"
fi

# ---- gdb's own record pt in a live session: gdb decodes the trace ----
# With its own libipt decoder: the instructions gdb lists are ptrr's, but
# for the last one ptrr lists, where the thread stands now (gdb counts
# only what was executed).

session btrace -- "$progs/recursion" <<'EOF'
break main
continue
set record btrace pt buffer-size unlimited
record pt
break fact
continue
continue
continue
info record
record instruction-history 1,1000
pt insn-history /r 1,1000
reverse-stepi
info record
EOF
sed -n 's/^\([0-9][0-9]*\)	\(=> \)* *\(0x[0-9a-f]*\)[ :].*/\1 \3/p' \
	"$work/btrace.out" | sed 's/ 0x0*/ 0x/' >"$work/gdb.insns"
sed -n 's/^\([0-9][0-9]*\) \(0x[0-9a-f]*\)$/\1 \2/p' "$work/btrace.out" |
	sed 's/ 0x0*/ 0x/' >"$work/ptrr.insns"
n=$(wc -l <"$work/gdb.insns")
[ "$n" -gt 10 ] || fail "btrace: gdb listed $n instructions"
[ "$(wc -l <"$work/ptrr.insns")" -eq $((n + 1)) ] &&
	head -n "$n" "$work/ptrr.insns" | cmp -s - "$work/gdb.insns" ||
	fail "btrace: gdb's instructions differ from ptrr's:" \
	     "$(diff "$work/gdb.insns" "$work/ptrr.insns" | head -n 5)"
in_order btrace "^Recorded $n instructions in" \
	'^Replay in progress\.  At instruction '"$n"'\.'

# ---- threads: a breakpoint in the second thread ----
# (The waiter, made first, is not always the recording's thread 2: the
# tracer numbers threads as it first sees them, and may see another of
# the three new ones first.)

session threads --record-from-start -- "$progs/threads" <<'EOF'
break fib
continue
reverse-stepi
bt
reverse-continue
pt info
thread 1
reverse-stepi
pt info
EOF
in_order threads 'hit Breakpoint 1, fib \(n=n@entry=8\)' \
	'in waiter \(arg=' \
	'^No more reverse-execution history\.' \
	'^Thread [2-4] \(LWP [0-9]+\) is at instruction 1 of [0-9]+ \(replaying\)' \
	'^Thread 1 \(LWP [0-9]+\) is at instruction [0-9]+ of [0-9]+ \(replaying\)'
# All-stop: while gdb looks at one thread, the others do not run (QEMU's
# user-mode stub stops only the thread that stopped: ptrr holds the
# others).  spin's computing thread adds to sink without end.
session allstop -- "$progs/spin" <<'EOF'
break sleeper
continue
print sink
shell sleep 1
print sink
kill
EOF
first=$(sed -n 's/^\$1 = //p' "$work/allstop.out")
second=$(sed -n 's/^\$2 = //p' "$work/allstop.out")
[ -n "$first" ] && [ "$first" = "$second" ] ||
	fail "allstop: sink went from '$first' to '$second' while stopped"

# The main thread waits in pthread_join, inside a system call, when the
# program stops: its history ends there without a gap (it once ended with
# "the trace does not lead to the thread's final PC").
count threads 'Recorded [0-9]+ instructions in [0-9]+ functions \(0 gaps\) for thread 1 ' 2
finish
