#!/bin/sh
# What is known at past positions, and what it costs (docs/performance.md,
# "What is known at past positions"): records each test program with the
# soft backend from its first instruction, then runs bench/known-coverage
# over each whole history and over its last 3,000 entries, one bundle at
# a time under a time limit, so that a proof or a walk that has become
# costly shows as "over N s" instead of a bench that never ends (the
# regression of session 12: 14 minutes of CPU for what took 4 s).
#
# usage: run-known.sh [--builddir DIR] [--dir SCRATCH] [--limit SECONDS]
#                     [-n POSITIONS] [PROGRAM...]
# PROGRAM: a program of tests/progs.  Default: crash libc_crash segv
# values fnptr tailcall longjmp plt exceptions signals threads.  Bundles
# already in SCRATCH are used again.
set -u

builddir=.
scratch=${TMPDIR:-/tmp}/ptrr-bench-known
limit=60
n=200

while [ $# -gt 0 ]; do
	case $1 in
	--builddir) builddir=$2; shift 2 ;;
	--dir) scratch=$2; shift 2 ;;
	--limit) limit=$2; shift 2 ;;
	-n) n=$2; shift 2 ;;
	-*) sed -n '/^# usage:/,/^# already/s/^# \{0,1\}//p' "$0" >&2
	    exit 1 ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] ||
	set -- crash libc_crash segv values fnptr tailcall longjmp plt \
		exceptions signals threads
ptrr=$builddir/ptrr
kc=$builddir/bench/known-coverage
for f in "$ptrr" "$kc"; do
	[ -x "$f" ] || { echo "$f not built (make; make bench/known-coverage)" >&2
			 exit 1; }
done
mkdir -p "$scratch" || exit 1

slow=0
for last in 0 3000; do
	if [ "$last" -eq 0 ]; then
		echo "Whole histories, $n positions each:"
	else
		echo "The last $last entries, $n positions each:"
	fi
	echo '| recording | positions | frames with a proven CFA | rsp proven | time per position |'
	echo '|---|---|---|---|---|'
	for p in "$@"; do
		b=$scratch/$p.ptrr
		if [ ! -d "$b" ]; then
			"$ptrr" record --backend=soft -o "$b" -- \
				"$builddir/tests/progs/$p" >/dev/null 2>&1
			[ -d "$b" ] || { echo "| $p.ptrr | cannot record |"; continue; }
		fi
		out=$(timeout "$limit" "$kc" -n "$n" -l "$last" "$b" | tail -n 1)
		case $out in
		"| $p.ptrr "*) echo "$out" ;;
		*) echo "| $p.ptrr | over $limit s |"; slow=$((slow + 1)) ;;
		esac
	done
	echo
done
[ "$slow" -eq 0 ] || { echo "$slow runs over the limit of $limit s"; exit 1; }
