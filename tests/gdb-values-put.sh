#!/bin/sh
# Values in the past before a store through a function's argument kept
# in a callee-saved register (issue 19): tests/progs/valuesput, recorded
# by the software backend without registers on the way (the hardware
# case), ending in a crash.  put() keeps its argument f in r12 (`mov
# %rsi,%r12` at its entry, rsi from keep()'s rbx), calls emit(), whose
# write(2) makes all memory unknown before it, and stores f->last at its
# tail.  Walking back, that store's address needs put()'s r12, set at
# its entry: the look-up goes back past emit() and mark_put() (a
# callee-saved register across a call) to the entry and keep()'s `mov
# %rbx,%rsi`, where keep()'s rbx is unknown (loaded from memory before a
# callee) — but put()'s `push %rbx` saved it in a slot the walk knows
# (its `pop %rbx` reloaded it, and keep() stores rbx to kept after the
# return).  At mark_put(), before the store, `up`: f, the global
# open_file and the fields main() stored through it must be shown with
# the values they had (before, all memory there was unknown:
# `<unavailable>`, `<optimized out>`).  Bzip2's BZ2_bzWrite has the same
# shape (docs/replay.md, "Loss 2").
. "${top_srcdir:-..}/tests/lib.sh"
. "${top_srcdir:-..}/tests/values-far-lib.sh"
gdb_work_dir gdb-values-put
record_bare valuesput

{ echo 'set pagination off'
  show end_file open_file
  echo 'break mark_put'
  echo 'reverse-continue'
  echo 'up'
  show f f
  show open_file open_file
  show used 'f->used'
  show total 'f->total'
  show buf 'f->buf[3]'
} >"$work/cmds"
run_gdb replay 1 "$ptrr" replay --batch "$bundle"

grep -q 'Breakpoint 1, mark_put' "$work/replay" ||
	fail "no stop in mark_put: $(tail -n 3 "$work/replay")"
# At the end (the crash: its memory), open_file as main() set it.
file=$(printed end_file)
case $file in
'(struct file *) 0x'*)
	expect f "$file"
	expect open_file "$file" ;;
*) fail "open_file at the end: '$file'" ;;
esac
expect used 3
expect total 1234
expect buf "97 'a'"
finish
