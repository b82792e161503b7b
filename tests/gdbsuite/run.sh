#!/bin/sh
# GDB's own testsuite through ptrr serve: gdb.btrace (record pt, gdb
# decoding ptrr's trace) or, with --reverse, gdb.reverse (reverse
# execution by ptrr itself, the board declaring gdb,can_reverse).
#
#   tests/gdbsuite/run.sh [--reverse] [TEST.exp]...
#
# GDB_SRC: GDB's unpacked source; default: Debian's source of the
#   installed gdb, fetched once into a cache by gdb-source.sh (PTRR_CACHE).
# GDB: the gdb under test, default /usr/bin/gdb.
# PTRR: the ptrr to serve with, default ./ptrr (run from the build dir).
# GDBSUITE_DIR: where the testsuite is configured and run, default
#   ./gdbsuite (gdb.sum and gdb.log end up there; those of the tests run
#   in extended-remote mode in its extended/).
# PTRR_UNWIND: with --reverse, ptrr's JIT-reader unwinder, which gdb
#   loads as ptrr gdb has it do (frames in the past); default: the build
#   tree's next to PTRR, else the installed one; "" for none.
# Needs runtest (Debian package dejagnu).  Prints DejaGnu's summary and
# one line per .exp: its expected passes and unexpected failures.
# `make check-gdb-btrace` and `make check-gdb-reverse` run it.
# Exit status: 0 no unexpected failure, 1 some (or no summary: the run
# broke, see runtest.out), 2 it could not run (the cause on one line).
set -e
here=$(cd "$(dirname "$0")" && pwd)
suite=gdb.btrace
serve_opts=
can_reverse=0
if [ "$1" = --reverse ]; then
	suite=gdb.reverse
	serve_opts=--record-from-start
	can_reverse=1
	shift
fi
src=$(sh "$here/gdb-source.sh") || exit 2
gdb=${GDB:-/usr/bin/gdb}
ptrr=$(cd "$(dirname "${PTRR:-./ptrr}")" && pwd)/$(basename "${PTRR:-./ptrr}")
dir=${GDBSUITE_DIR:-gdbsuite}
command -v runtest >/dev/null || {
	echo "run.sh: runtest not found: apt-get install dejagnu" >&2
	exit 2
}
[ -x "$ptrr" ] || { echo "run.sh: $ptrr is not ptrr: set PTRR" >&2; exit 2; }
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
# Configured once per GDB source.
if [ ! -f "$dir/Makefile" ] || [ "$(cat "$dir/source" 2>/dev/null)" != "$src" ]
then
	rm -f "$dir/source"
	(cd "$dir" && "$src/gdb/testsuite/configure" >configure.log 2>&1) || {
		echo "run.sh: configuring the testsuite failed: $dir/configure.log" >&2
		exit 2
	}
	echo "$src" >"$dir/source"
fi
(cd "$dir" && rm -f site.exp && make site.exp >/dev/null &&
	echo "lappend boards_dir \"$here\"" >>site.exp)
if [ $# -eq 0 ]; then
	(cd "$src/gdb/testsuite" && ls $suite/*.exp) >"$dir/list"
	set -- $(cat "$dir/list")
fi
unwind=
if [ $can_reverse = 1 ]; then
	unwind=${PTRR_UNWIND-$(dirname "$ptrr")/plugin/jit-reader/.libs/ptrr-unwind.so}
	[ -z "$unwind" ] || [ -f "$unwind" ] ||
		unwind=$(dirname "$ptrr")/../lib/ptrr/ptrr-unwind.so
	[ -z "$unwind" ] || [ -f "$unwind" ] || {
		echo "run.sh: no ptrr-unwind.so: set PTRR_UNWIND (\"\" for none)" >&2
		exit 2
	}
fi
export PTRR_UNWIND="$unwind"
export PTRR="$ptrr"
export PTRR_SERVE_OPTS="$serve_opts" PTRR_CAN_REVERSE=$can_reverse
# The tests that debug several processes at once run in extended-remote
# mode against ptrr gdbserver --multi (board ptrr-extended.exp, as
# gdbserver's native-extended-gdbserver.exp); the others with the remote
# board (ptrr.exp, as native-gdbserver.exp), each in its own runtest.
remote= extended=
for t; do
	case $t in
	*/multi-inferior.exp) extended="$extended $t" ;;
	*) remote="$remote $t" ;;
	esac
done
cd "$dir"
rm -f gdb.sum extended/gdb.sum
sums=
# run_board BOARD OUTDIR TEST...: runtest with BOARD, gdb.sum and
# runtest.out in OUTDIR; says if it ended without a summary.
run_board() {
	board=$1 out=$2
	shift 2
	mkdir -p "$out"
	runtest --tool gdb --srcdir "$src/gdb/testsuite" --outdir "$out" \
		--target_board="$board" GDB="$gdb" "$@" >"$out/runtest.out" \
		2>&1 || true
	grep -q '=== gdb Summary' "$out/gdb.sum" 2>/dev/null || {
		echo "run.sh: runtest ended without a summary: see" \
		     "$dir/$out/runtest.out" >&2
		exit 1
	}
	sums="$sums $out/gdb.sum"
	[ -z "$extended" ] || echo "board $board:"
	sed -n '/===.*Summary/,$p' "$out/gdb.sum"
}
[ -z "$remote" ] || run_board ptrr . $remote
[ -z "$extended" ] || run_board ptrr-extended extended $extended
echo
echo "per test: expected passes, unexpected failures (FAIL, UNRESOLVED), other"
awk '/^(PASS|FAIL|XFAIL|KFAIL|UNRESOLVED|UNSUPPORTED|UNTESTED|XPASS): / {
	split($2, f, ":"); t = f[1]
	if (!(t in seen)) { seen[t] = 1; order[++n] = t }
	if ($1 == "PASS:") p[t]++
	else if ($1 == "FAIL:" || $1 == "UNRESOLVED:") u[t]++
	else o[t]++
} END {
	for (i = 1; i <= n; i++)
		printf "%-45s %4d %4d %4d\n", order[i], p[order[i]] + 0,
		       u[order[i]] + 0, o[order[i]] + 0
}' $sums
! grep -q -E '^(FAIL|UNRESOLVED): ' $sums
