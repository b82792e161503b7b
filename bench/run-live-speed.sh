#!/bin/sh
# Tracing speed of a live session against `ptrr record` (docs/performance.md,
# "Tracing in a live session"): the same program traced from its first
# instruction to its exit, side by side, one run each:
#   record   ptrr record --backend=soft (block stepping, its default)
#   insn     ptrr gdb --record-from-start --soft-step=insn, continue
#            (how live sessions stepped before they stepped in blocks)
#   block    ptrr gdb --record-from-start, continue (block stepping)
# Wall seconds of the whole command (the gdb sessions include gdb's start,
# about a second) and the instructions each traced.
#
# usage: run-live-speed.sh [--builddir DIR] [--rounds N] [--gdb GDB]
#
# The programs: bench/progs/mixed N (N = 50 is about 400,000
# instructions), and sqlite3 on an in-memory table, if installed.
set -eu

builddir=.
rounds=50
gdb=gdb

while [ $# -gt 0 ]; do
	case $1 in
	--builddir) builddir=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--gdb) gdb=$2; shift 2 ;;
	*) sed -n '/^# usage:/s/^# //p' "$0" >&2; exit 1 ;;
	esac
done
ptrr=$(realpath "$builddir/ptrr")
mixed=$(realpath "$builddir/bench/progs/mixed")
for f in "$ptrr" "$mixed"; do
	[ -x "$f" ] || { echo "run-live-speed.sh: $f not found: run 'make &&" \
		"make bench' (or pass --builddir)" >&2; exit 2; }
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# timed NAME CMD...: runs CMD, its output in $out/NAME, and prints its
# wall time in seconds.
timed() {
	name=$1
	shift
	t0=$(date +%s.%N)
	"$@" >"$out/$name" 2>&1 </dev/null ||
		{ echo "run-live-speed.sh: $name failed:" >&2;
		  tail -n 5 "$out/$name" >&2; exit 1; }
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'
}

# live NAME [OPTIONS] -- PROG ARGS: a traced gdb session to the exit.
live() {
	name=$1
	shift
	timed "$name" env PTRR_GDB="$gdb" "$ptrr" gdb --batch \
		--record-from-start -ex continue -ex 'pt info' "$@"
}

# row LABEL -- PROG ARGS: the three runs of PROG, one table row.
row() {
	label=$1
	shift
	r=$(timed record "$ptrr" record --backend=soft -o "$out/r.ptrr" "$@")
	i=$(live insn --soft-step=insn "$@")
	b=$(live block "$@")
	rn=$(sed -n 's/^ptrr record: \([0-9]*\) instructions.*/\1/p' "$out/record")
	bn=$(sed -n 's/^Stepping: .*: \([0-9]*\) instructions, \([0-9]*\) of.*/\1 (\2 single-stepped)/p' "$out/block")
	in=$(sed -n 's/^Stepping: .*: \([0-9]*\) instructions, .*/\1/p' "$out/insn")
	echo "| $label | $rn | $r s | $in | $i s | $bn | $b s |" \
	     "$(awk -v a="$i" -v b="$b" 'BEGIN { printf "%.1f×", a / b }') |"
	rm -rf "$out/r.ptrr"
}

echo "| program | record: instructions | record | live insn: instructions | live insn | live block: instructions | live block | insn / block |"
echo "|---|---|---|---|---|---|---|---|"
row "mixed $rounds" -- "$mixed" "$rounds"
if command -v sqlite3 >/dev/null; then
	row "sqlite3" -- "$(command -v sqlite3)" :memory: \
		"create table t(a, b); with recursive c(x) as (select 1 union all select x + 1 from c where x < 200) insert into t select x, x * x from c; select count(*), sum(b) from t where a % 3 = 0;"
fi
