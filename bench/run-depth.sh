#!/bin/sh
# Call depth and call stacks on real programs (docs/performance.md, "Call
# depth and call stacks of real programs", issue 17).  Records each
# program with the soft backend from its first instruction, then
#  - checks that every return to a call seen lands at the level of the
#    call (tests/unit/call-depth), and
#  - compares the call stack ptrr gives (tests/unit/test-replay --frames:
#    replay_frames, which gdb's unwinder shows) with gdb's backtrace of
#    the program itself run to the same breakpoint hit: the PCs of the
#    frames, one a line, and prints "equal" or the difference.
#
# usage: run-depth.sh [--builddir DIR] [--dir SCRATCH] [PROGRAM...]
# PROGRAM: python (python3.11, with python3.11-dbg for its symbols),
# sqlite3, jq (171M instructions: about 20 minutes to record here).
# Default: python sqlite3.  Bundles already in SCRATCH are used again.
set -u

builddir=.
scratch=${TMPDIR:-/tmp}/ptrr-bench-depth

while [ $# -gt 0 ]; do
	case $1 in
	--builddir) builddir=$2; shift 2 ;;
	--dir) scratch=$2; shift 2 ;;
	-*) sed -n '/^# usage:/,/^# Default/s/^# \{0,1\}//p' "$0" >&2
	    exit 1 ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || set -- python sqlite3
ptrr=$builddir/ptrr
depth=$builddir/tests/unit/call-depth
frames=$builddir/tests/unit/test-replay
for f in "$ptrr" "$depth" "$frames"; do
	[ -x "$f" ] || { echo "$f not built (make; make tests/unit/call-depth)" >&2
			 exit 1; }
done
mkdir -p "$scratch" || exit 1
bad=0

# gdb_pcs SYMBOL HITS PROG ARGS...: the PCs of gdb's backtrace of PROG
# at the HITS-th execution of SYMBOL ("-": where it stops by itself).
gdb_pcs() {
	sym=$1 hits=$2
	shift 2
	{
		echo 'set backtrace past-main on'
		echo 'set backtrace past-entry on'
		[ "$sym" = - ] || echo "break *$sym"
		echo run
		[ "$hits" -le 1 ] || echo "continue $((hits - 1))"
		echo 'p/x $pc'
		echo bt
	} >"$scratch/gdb.cmd"
	gdb -nx -batch -x "$scratch/gdb.cmd" --args "$@" </dev/null 2>&1 |
		sed -n -e 's/^\$1 = \(0x[0-9a-f]*\)$/\1/p' \
		    -e 's/^#[1-9][0-9]* *0x0*\([0-9a-f]*\) in .*/0x\1/p'
}

# check NAME SPECS -- PROG ARGS...: records PROG as NAME, checks the call
# depth and the call stacks at each "SYMBOL HITS" of SPECS (";"-separated).
check() {
	name=$1 specs=$2
	shift 3
	b=$scratch/$name.ptrr
	if [ ! -d "$b" ]; then
		echo "recording $name: $*"
		"$ptrr" record --backend=soft -o "$b" -- "$@" \
			>"$scratch/$name.log" 2>&1 </dev/null
		tail -n 1 "$scratch/$name.log"
		[ -d "$b" ] || { bad=1; return; }
	fi
	"$depth" "$b" || bad=1
	echo "$specs" | tr ';' '\n' | while read -r sym hits; do
		[ -n "$sym" ] || continue
		gdb_pcs "$sym" "$hits" "$@" >"$scratch/$name.gdb"
		"$frames" --frames "$b" "$sym" "$hits" >"$scratch/$name.ptrr-bt" \
			2>&1
		if cmp -s "$scratch/$name.gdb" "$scratch/$name.ptrr-bt"; then
			echo "$name at $sym ($hits): $(wc -l <"$scratch/$name.gdb") frames, equal"
		else
			echo "$name at $sym ($hits): gdb (<) and ptrr (>) differ:"
			diff "$scratch/$name.gdb" "$scratch/$name.ptrr-bt"
		fi
	done
}

for prog; do
	case $prog in
	python)
		check python "PyRun_SimpleStringFlags 1; PyImport_ImportModuleLevelObject 20; _PyEval_EvalFrameDefault 40; PyObject_CallMethod 1; - 0" \
			-- /usr/bin/python3.11 -S -I -c 'import os; os.abort()' ;;
	sqlite3)
		check sqlite3 "sqlite3_prepare_v2 2; sqlite3_step 3; sqlite3_finalize 2" \
			-- /usr/bin/sqlite3 :memory: \
			'create table t(a); insert into t values(1),(2); select sum(a) from t;' ;;
	jq)
		echo '{"a":[1,2,3]}' >"$scratch/in.json"
		check jq "jv_number 2; jv_array_append 3" \
			-- /usr/bin/jq '.a | map(.*2)' "$scratch/in.json" ;;
	*) echo "unknown program $prog" >&2; bad=1 ;;
	esac
done
exit $bad
