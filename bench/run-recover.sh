#!/bin/sh
# Value recovery's cost at a past position far from the end of a long
# history (docs/performance.md, "Value recovery at past positions"):
# records bench/progs/recover N AT (N calls of update(), marker() once
# after call AT, then a crash) with the soft backend, then replays it in
# gdb twice: break marker, reverse-continue, then
#   - with the window: print last (a global set since by plain stores,
#     which only replay/forward.c's window recovers), print last again,
#     print counter, reverse-stepi, print last;
#   - without it: print counter (the walk back answers), reverse-stepi,
#     print counter;
# each command timed between `shell date` marks, and the server's peak
# resident memory (VmHWM) at the end of each session; and a session at
# the end of history only (no recovery: the memory it adds is the
# difference).
#
# usage: run-recover.sh [--builddir DIR] [--dir SCRATCH]
#                        [--regs-every K] [N [AT]]
# Default N 1000000, AT 900000 (about 13 M instructions, 1.3 M of them
# after marker); --regs-every is ptrr record's (default its own).  A
# bundle already in SCRATCH is used again.
set -u

builddir=.
scratch=${TMPDIR:-/tmp}/ptrr-bench-recover
every=

while [ $# -gt 0 ]; do
	case $1 in
	--builddir) builddir=$2; shift 2 ;;
	--dir) scratch=$2; shift 2 ;;
	--regs-every) every=$2; shift 2 ;;
	-*) sed -n '/^# usage:/,/^# bundle already/s/^# \{0,1\}//p' "$0" >&2
	    exit 1 ;;
	*) break ;;
	esac
done
n=${1:-1000000}
at=${2:-900000}
ptrr=$builddir/ptrr
prog=$builddir/bench/progs/recover
for f in "$ptrr" "$prog"; do
	[ -x "$f" ] || { echo "$f not built (make; make bench)" >&2; exit 1; }
done
mkdir -p "$scratch" || exit 1
b=$scratch/recover-$n-$at${every:+-regs$every}.ptrr
if [ ! -d "$b" ]; then
	"$ptrr" record --backend=soft ${every:+--regs-every=$every} \
		-o "$b" -- "$prog" "$n" "$at" >/dev/null 2>&1
	[ -d "$b" ] || { echo "cannot record $prog $n $at" >&2; exit 1; }
fi
"$ptrr" info "$b" | grep -i 'instructions' | head -n 3

# session LABEL CMD...: gdb on the bundle with a time mark between the
# commands; prints each command's time and output, then the server's
# peak memory.
session() {
	label=$1
	shift
	cmds=$scratch/cmds
	{ printf '%s\n' 'set pagination off' 'break marker' \
		'shell date +@@t%s.%N'
	  for c in $first "$@"; do
		printf 'echo @@ %s\\n\n%s\n' "$c" "$c"
		printf '%s\n' 'shell date +@@t%s.%N'
	  done
	  # The server: gdb's child named ptrr.
	  printf '%s\n' 'shell for p in $(ps -o pid= --ppid $PPID); do [ "$(cat /proc/$p/comm)" = ptrr ] && grep VmHWM /proc/$p/status; done'
	} >"$cmds"
	"$ptrr" replay --batch -x "$cmds" "$b" 2>&1 |
	awk -v label="$label" '
		/^@@ / { cmd = substr($0, 4); next }
		/^@@t/ { t = substr($0, 4) + 0
			 if (prev) printf "%s: %-16s %8.1f ms   %s\n", label, \
				cmd, (t - prev) * 1000, out
			 prev = t; out = ""; next }
		/^VmHWM/ { print label ": server peak RSS " $2 " kB"; next }
		/^\$[0-9]+ = / { out = $0 }'
}

# The server's memory without value recovery: at the end of history,
# where everything is recorded.
first= session base 'info registers rip'
first=reverse-continue
session window 'print last' 'print last' 'print counter' 'reverse-stepi' \
	'print last'
session walk 'print counter' 'reverse-stepi' 'print counter'
