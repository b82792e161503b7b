#!/bin/sh
# gdb single-stepping a live session (docs/performance.md, "Single steps
# in a live session"): `stepi N` from main, as gdb's software
# watchpoints and its own `record full` step (GDB's gdb.reverse
# watch-reverse.exp and test_ioctl_TCSETSW.exp), three ways:
#   native   plain gdb on the program (gdb's own ptrace)
#   live     ptrr gdb (not traced)
#   traced   ptrr gdb --record-from-start
# The time of the stepi alone, from `shell date` marks in the session,
# and the steps per second.
#
# usage: run-live-stepi.sh [--builddir DIR] [--steps N] [--gdb GDB]
set -eu

builddir=.
steps=2000
gdb=gdb

while [ $# -gt 0 ]; do
	case $1 in
	--builddir) builddir=$2; shift 2 ;;
	--steps) steps=$2; shift 2 ;;
	--gdb) gdb=$2; shift 2 ;;
	*) sed -n '/^# usage:/s/^# //p' "$0" >&2; exit 1 ;;
	esac
done
ptrr=$(realpath "$builddir/ptrr")
mixed=$(realpath "$builddir/bench/progs/mixed")
for f in "$ptrr" "$mixed"; do
	[ -x "$f" ] || { echo "run-live-stepi.sh: $f not found: run 'make &&" \
		"make bench' (or pass --builddir)" >&2; exit 2; }
done
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# row LABEL: a table row from the session's output in $out.
row() {
	awk -v label="$1" -v n="$steps" -F= '
		/^t0=/ { a = $2 } /^t1=/ { b = $2 }
		END { if (!a || !b) exit 1
		      printf "| %s | %d | %.2f s | %.0f |\n", label, n, b - a,
			     n / (b - a) }' "$out" ||
		{ echo "run-live-stepi.sh: $1 failed:" >&2;
		  tail -n 5 "$out" >&2; exit 1; }
}

echo "| session | steps | time | steps/s |"
echo "|---|---|---|---|"
"$gdb" -nx -batch -ex 'break main' -ex run -ex 'shell date +t0=%s.%N' \
	-ex "stepi $steps" -ex 'shell date +t1=%s.%N' --args "$mixed" 50 \
	>"$out" 2>&1 </dev/null || true
row "gdb (native)"
for opt in "" --record-from-start; do
	PTRR_GDB="$gdb" "$ptrr" gdb --batch $opt -ex 'break main' \
		-ex continue -ex 'shell date +t0=%s.%N' -ex "stepi $steps" \
		-ex 'shell date +t1=%s.%N' -- "$mixed" 50 \
		>"$out" 2>&1 </dev/null || true
	row "ptrr gdb${opt:+ $opt}"
done
