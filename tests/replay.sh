#!/bin/sh
# The replay engine (replay/) on real recordings: stepping, continuing to
# breakpoints, registers and call stacks of every thread, checked by
# tests/unit/test-replay against the ground truth, a linear scan and a
# simulation of the stack.  Programs with loops, recursion, calls
# through pointers, tail calls, longjmp, threads, a crash, a crash in one
# of several threads, signal handlers, calls through the PLT (lazily
# bound), a jump table, C++ exceptions (unwinding; libstdc++ code
# without symbols) and jumps inside recursions (tail calls, a cold
# part); one with a short PSB period (many segments; a live
# session: a history extended and the replay refreshed), and copies of
# it with gaps (a corrupted byte).  The call depth at every return
# (tests/unit/call-depth).  And the call stack against gdb's
# backtrace of the program itself at a crash and at breakpoints.  The
# registers recorded on the way (--regs-every) against the instructions
# they name and the value recovery without them.
set -u
. "$top_srcdir/tests/lib.sh"
work_dir replay
progs="$top_builddir/tests/progs"

bundles=
for prog in loops recursion fnptr tailcall longjmp threads crash segv \
	    signals plt jumptable exceptions recjump; do
	record $prog --ground-truth="$work/$prog.gt" --regs-every=50 -- \
		"$progs/$prog" || continue
	bundles="$bundles $work/$prog.ptrr"
done
# Registers recorded before every instruction: one is before the last,
# exit_group's `syscall`, where the end's registers lack rcx, r11 and
# the flags (test-replay checks the last recorded set always).
record loops-each --regs-every=1 -- "$progs/loops" &&
	bundles="$bundles $work/loops-each.ptrr"
# Registers recorded on the way in block mode (no ground truth, which
# single-steps): read at the stops of blocks, signals and threads.
for prog in threads signals exceptions; do
	record $prog-blocks --regs-every=50 -- "$progs/$prog" ||
		continue
	bundles="$bundles $work/$prog-blocks.ptrr"
done

# corrupt NAME K: a copy of $work/short.ptrr as $work/NAME.ptrr whose
# K-th PSB (1-based) is followed by an invalid opcode: a gap there.
corrupt() {
	cp -r "$work/short.ptrr" "$work/$1.ptrr" || return
	trace=$(ls "$work/$1.ptrr"/threads/*.pt)
	offset=$(LC_ALL=C grep -obUaP "$psb" "$trace" | sed -n "$2p" |
		 cut -d: -f1)
	[ -n "$offset" ] || { fail "$1: no PSB $2"; return 1; }
	printf '\331' | dd of="$trace" bs=1 seek=$((offset + 16)) \
		conv=notrunc 2>/dev/null
	"$ptrr" insn-history --raw "$work/$1.ptrr" | grep -q '\[gap\]' ||
		{ fail "$1: no gap in the history"; return 1; }
	bundles="$bundles $work/$1.ptrr"
}

# A short PSB period (many segments); copies with a gap at the start
# (the history begins in the middle of the program) and in the middle.
psb='\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82'
if record short --psb-period=2K --ground-truth="$work/short.gt" -- \
		"$progs/recursion"; then
	bundles="$bundles $work/short.ptrr"
	npsb=$(LC_ALL=C grep -obUaP "$psb" "$work"/short.ptrr/threads/*.pt |
	       wc -l)
	corrupt gap-first 1
	corrupt gap-middle $(((npsb + 1) / 2))
fi

"$top_builddir/tests/unit/test-replay" $bundles >"$work/out" 2>&1 ||
	fail "test-replay: $(cat "$work/out")"

# Every return to a call seen lands at the level of the call.
"$top_builddir/tests/unit/call-depth" $bundles >"$work/depth" 2>&1 ||
	fail "call-depth: $(cat "$work/depth")"

# gdb_frames PROG SYMBOL HITS: the PCs of gdb's backtrace (past main and
# the entry point) of PROG run at the HITS-th execution of SYMBOL, or
# where it crashes if SYMBOL is "-", one a line.
gdb_frames() {
	prog=$1 sym=$2 hits=$3
	set -- -ex 'set backtrace past-main on' -ex 'set backtrace past-entry on'
	[ "$sym" = - ] || set -- "$@" -ex "break *$sym"
	set -- "$@" -ex run
	[ "$sym" = - ] || [ "$hits" -le 1 ] ||
		set -- "$@" -ex "continue $((hits - 1))"
	timeout 300 "$GDB" -nx -batch "$@" -ex 'p/x $pc' -ex bt "$prog" 2>&1 |
		sed -n -e 's/^\$1 = \(0x[0-9a-f]*\)$/\1/p' \
		    -e 's/^#[1-9][0-9]* *0x0*\([0-9a-f]*\) in .*/0x\1/p'
}

# The call stack against gdb's own (DWARF unwinding of the live program)
# where gdb stops: at a crash, in a recursion, before a longjmp, in a
# function called through a pointer, in a recursion through a function's
# cold part.  (Not after a tail call: gdb shows
# the function that made it as a frame of its own, from DWARF call-site
# information; replay_frames, as the stack does, does not.)
[ -x "${GDB:-}" ] || echo "gdb not found: backtraces not compared"
for spec in "crash - 0" "recursion fact 4" "longjmp deep 4" "fnptr mul 1" \
	    "recjump walk 6"; do
	set -- $spec
	[ -x "${GDB:-}" ] && [ -d "$work/$1.ptrr" ] || continue
	gdb_frames "$progs/$1" "$2" "$3" >"$work/$1.gdb-bt"
	"$top_builddir/tests/unit/test-replay" --frames "$work/$1.ptrr" \
		"$2" "$3" >"$work/$1.bt" 2>&1 ||
		fail "$1: test-replay --frames: $(cat "$work/$1.bt")"
	[ "$(wc -l <"$work/$1.gdb-bt")" -ge 3 ] ||
		fail "$1: no backtrace from gdb at $2"
	cmp -s "$work/$1.gdb-bt" "$work/$1.bt" ||
		fail "$1: frames at $2 ($3) differ from gdb's:" \
			"$(diff "$work/$1.gdb-bt" "$work/$1.bt")"
done

finish
