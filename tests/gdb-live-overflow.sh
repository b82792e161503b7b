#!/bin/sh
# A live session's trace buffer filled by one run (docs/server.md): with
# `ptrr gdb --buffer-size=4K`, fnptr's 10,000 indirect calls (tens of KiB
# of trace) from main to its return statement overfill the buffer.  The
# server says so at the stop, `pt info` counts the lost instructions,
# and the history has one overflow gap just before the stop.  The runs
# after it are traced again: three stepi and three reverse-stepi land on
# the same addresses, a fourth reverse-stepi crosses the gap into the
# loop (line 17), reverse-continue goes on to main, where tracing began.
# `pt save` keeps a note of the loss, and the saved history lists the
# gap, then the stop and the three steps after it.
. "${top_srcdir:-..}/tests/lib.sh"
gdb_work_dir gdb-live-overflow

session fnptr --buffer-size=4K -- "$progs/fnptr" x <<EOF2
break main
continue
pt start
break 18
continue
pt info
p/x \$pc
stepi
stepi
stepi
p/x \$pc
reverse-stepi
reverse-stepi
reverse-stepi
p/x \$pc
reverse-stepi
p \$pc
reverse-continue
p \$pc
pt save $work/saved.ptrr
EOF2
warn='^ptrr serve: warning: thread [0-9]+ filled its 4096-byte trace buffer in this run: its last ([0-9]+) instructions before the stop were not traced'
grep -Eq "$warn" "$work/fnptr.out" ||
	fail "fnptr: no warning at the stop in $work/fnptr.out"
lost=$(sed -En "s/$warn.*/\\1/p" "$work/fnptr.out")
[ -n "$lost" ] && [ "$lost" -gt 10000 ] ||
	fail "fnptr: $lost instructions lost, wanted more than the 10,000 calls"
in_order fnptr 'tracing on' \
	"$warn" \
	'^Breakpoint 2, main .*fnptr\.c:18' \
	'Recorded [0-9]+ instructions in .* \(1 gaps\)' \
	"^Thread [0-9]+ filled its 4096-byte trace buffer in 1 run: $lost instructions were not traced" \
	'^\$1 = (0x[0-9a-f]+)' \
	'^\$2 = 0x[0-9a-f]+' \
	'^\$3 = ' \
	'^\$4 = .*<main\+[0-9]+>' \
	'^Breakpoint 1, main ' \
	'^\$5 = .*<main>' \
	"^Saved 1 thread, [0-9]+ instructions, to $work/saved.ptrr"
bp=$(sed -n 's/^\$1 = \(0x[0-9a-f]*\)$/\1/p' "$work/fnptr.out")
stepped=$(sed -n 's/^\$2 = \(0x[0-9a-f]*\)$/\1/p' "$work/fnptr.out")
back=$(sed -n 's/^\$3 = \(0x[0-9a-f]*\)$/\1/p' "$work/fnptr.out")
[ -n "$bp" ] && [ "$back" = "$bp" ] ||
	fail "fnptr: three stepi and three reverse-stepi: $back, not $bp"
grep -Eq '^0x[0-9a-f]+ in main \(.*fnptr\.c:17$' "$work/fnptr.out" ||
	fail "fnptr: the reverse-stepi across the gap did not reach line 17"

# The saved session: the note, and the history around the gap.
"$ptrr" info "$work/saved.ptrr" >"$work/info.out" 2>&1 ||
	fail "ptrr info: $(cat "$work/info.out")"
grep -Eq "^Note: thread [0-9]+: 1 run filled the live session's 4096-byte trace buffer: $lost instructions were lost \\(OVF\\)" \
	"$work/info.out" || fail "ptrr info: no note of the loss"
"$ptrr" insn-history --raw "$work/saved.ptrr" >"$work/raw.out" 2>&1 ||
	fail "ptrr insn-history: $(tail -n 1 "$work/raw.out")"
[ "$(grep -c '\[gap\]' "$work/raw.out")" -eq 1 ] ||
	fail "insn-history: $(grep -c '\[gap\]' "$work/raw.out") gaps, not 1"
after=$(sed -n '/\[gap\] trace overflow (OVF)/,$p' "$work/raw.out" |
	sed 1d | awk '{ print $2 }' | tr '\n' ' ')
set -- $after
[ $# -eq 4 ] && [ "$1" = "$bp" ] && [ "$4" = "$stepped" ] ||
	fail "insn-history: after the gap '$after', wanted $bp, two more, $stepped"
finish
