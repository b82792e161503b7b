#!/bin/sh
# The cost of the registers recorded on the way (`ptrr record
# --regs-every=N`, docs/performance.md, "Registers recorded on the
# way"): records bench/progs/recover with the software backend, in
# block and in single-step mode, with --regs-every=0 (none) and the
# intervals given, ROUNDS times each (interleaved), and prints per
# setting the median recording speed (ptrr's own summary line), trace
# bytes and register bytes (threads/*.regs) per instruction.
#
# usage: run-regs.sh [--builddir DIR] [--dir SCRATCH] [--rounds R]
#                    [--block-n N] [--insn-n N] [EVERY...]
# Defaults: 3 rounds, recover 400000 in block mode (about 4.9 M
# instructions), 20000 single-stepped (about 0.35 M); EVERY 0 4096 1024
# 256 64.  Run from a build directory after `make bench`.
set -u

builddir=.
scratch=${TMPDIR:-/tmp}/ptrr-bench-regs
rounds=3 block_n=400000 insn_n=20000

while [ $# -gt 0 ]; do
	case $1 in
	--builddir) builddir=$2; shift 2 ;;
	--dir) scratch=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--block-n) block_n=$2; shift 2 ;;
	--insn-n) insn_n=$2; shift 2 ;;
	-*) sed -n '/^# usage:/,/^# 256 64/s/^# \{0,1\}//p' "$0" >&2
	    exit 1 ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || set -- 0 4096 1024 256 64
ptrr=$builddir/ptrr
prog=$builddir/bench/progs/recover
for f in "$ptrr" "$prog"; do
	[ -x "$f" ] || { echo "$f not built (make; make bench)" >&2; exit 1; }
done
mkdir -p "$scratch" || exit 1
res=$scratch/results
: >"$res"

# one MODE N EVERY: records once; appends "MODE EVERY INSNS RATE TRACE
# REGS" to $res.
one() {
	b=$scratch/b.ptrr
	rm -rf "$b"
	line=$("$ptrr" record --backend=soft --soft-step="$1" \
		--regs-every="$3" -o "$b" -- "$prog" "$2" 2>&1 >/dev/null |
		grep 'instructions in')
	insns=$(echo "$line" | sed 's/.*record: \([0-9]*\) instructions.*/\1/')
	rate=$(echo "$line" | sed 's/.*(\([0-9]*\) instructions\/s.*/\1/')
	trace=$(echo "$line" | sed 's/.*, \([0-9]*\) bytes of trace.*/\1/')
	regs=$(cat "$b"/threads/*.regs 2>/dev/null | wc -c)
	echo "$1 $3 $insns $rate $trace $regs" >>"$res"
}

r=0
while [ "$r" -lt "$rounds" ]; do
	for every in "$@"; do
		one block "$block_n" "$every"
		one insn "$insn_n" "$every"
	done
	r=$((r + 1))
done

echo "| mode | --regs-every | instructions | instructions/s (median) | trace B/insn | registers B/insn |"
echo "|---|---|---|---|---|---|"
for mode in block insn; do
	for every in "$@"; do
		awk -v m="$mode" -v e="$every" '$1 == m && $2 == e' "$res" |
		sort -k4n | awk -v m="$mode" -v e="$every" '
			{ v[NR] = $4; n = $3; t = $5; g = $6 }
			END { printf "| %s | %s | %d | %d | %.4f | %.4f |\n",
				m, e, n, v[int((NR + 1) / 2)], t / n, g / n }'
	done
done
