#!/bin/sh
# Values in the past across writes whose address the value recovery
# cannot compute exactly (issue 19): tests/progs/valuesfar, recorded by
# the software backend without registers on the way (the hardware
# case), ending in a crash.  Between fill()'s entry and the end, deep()
# recurses five levels deep, each writing pad[n] at rbp - 0x50 + n, n
# sign-extended from 32 bits (movslq) and set five calls up: the walk
# back cannot prove n, but its bounds — within 2^31 of the frame's
# rbp, the stack — and must make only that unknown, not the heap and
# the globals far below (before, all memory was unknown before such a
# write).  At fill()'s entry the heap fields add_run() wrote and a
# global must be shown with their values.
# Before that, stamp() keeps blk (from pick(), loaded 200 instructions
# before its return) in rbx across note(), which saves and restores rbx
# around a write(2): the walk back loses rbx in note() (its save slot,
# like all memory, is unknown before the system call) and knows it right
# after the return (stored to last).  At mark(), before the call, `up`
# in stamp(): s (rbx) must be blk, and the fields stamp() stored through
# it before mark() must be shown (issue 19: a callee-saved register is
# the same at a call and after its return, by the callee's CFI).
# Before that, stamp_after() keeps &gblock (lea gblock(%rip)) in rbx
# across note() too, through a stack slot (a volatile local) before the
# call, and stores s->h through it after: nothing after the return says
# what rbx held (its save slots are overwritten later); the look-up for
# the store's address must go from the return to the call, past the
# callee, and find it before; at mark_after(), `up`: s and s->h.
. "${top_srcdir:-..}/tests/lib.sh"
. "${top_srcdir:-..}/tests/values-far-lib.sh"
gdb_work_dir gdb-values-far
record_bare valuesfar

{ echo 'set pagination off'
  echo 'break fill'
  echo 'reverse-continue'
  show fill_n 'blk->n'
  show fill_buf 'blk->buf[3]'
  show fill_verbosity verbosity
  show fill_blk blk
  echo 'break mark'
  echo 'reverse-continue'
  echo 'up'
  show stamp_s s
  show stamp_e 's->e'
  show stamp_g 's->g'
  echo 'break mark_after'
  echo 'reverse-continue'
  echo 'up'
  show after_s s
  show after_gblock '&gblock'
  show after_h 's->h'
} >"$work/cmds"
run_gdb replay 1 "$ptrr" replay --batch "$bundle"

grep -q 'Breakpoint 1, fill' "$work/replay" ||
	fail "no stop in fill: $(tail -n 3 "$work/replay")"
# At fill(): add_run() added five bytes to the three; buf[3] is its
# first ('a').
expect fill_n 8
expect fill_buf "97 'a'"
expect fill_verbosity 7
grep -q 'Breakpoint 2, mark ' "$work/replay" ||
	fail "no stop in mark: $(tail -n 3 "$work/replay")"
blk=$(printed fill_blk)
case $blk in
'(struct block *) 0x'*) expect stamp_s "$blk" ;;
*) fail "blk at fill: '$blk'" ;;
esac
expect stamp_e 50
expect stamp_g 70
grep -q 'Breakpoint 3, mark_after' "$work/replay" ||
	fail "no stop in mark_after: $(tail -n 3 "$work/replay")"
gblock=$(printed after_gblock)
case $gblock in
'(struct block *) 0x'*) expect after_s "$gblock" ;;
*) fail "&gblock: '$gblock'" ;;
esac
expect after_h 80
finish
