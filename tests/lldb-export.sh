#!/bin/sh
# `ptrr export --lldb` and `ptrr import --lldb` (docs/lldb.md): LLDB's own
# Intel PT decoder, reading the exported bundle, lists exactly the
# instructions `ptrr insn-history --raw` lists, thread by thread, and its
# function calls agree with `ptrr call-history` modulo the documented
# differences (normalize below); an export imported again decodes to the
# same history; bad input gets one-line errors.
#
# LLDB: $PTRR_TRACE_LLDB if set, else the first of .deps/lldb-22 (which
# ./quickstart unpacks), lldb-22, lldb-21, lldb-20, $LLDB (lldb-19) and
# lldb whose `trace load` works (lldb-19 19.1.7 crashes on every bundle
# with a process: ProcessTrace::CreateInstance dereferences the null
# crash_file that the bundle loader passes, fixed in later releases).
set -u
. "$top_srcdir/tests/lib.sh"
work_dir lldb-export
# No symbol server lookups from LLDB: the test runs offline.
DEBUGINFOD_URLS= ; export DEBUGINFOD_URLS

# The plt program finds its library relative to the build directory.
cd "$top_builddir" || exit 99

# lldb_cmds BUNDLE-DIR CMD...: LLDB's output of CMDs on the exported trace.
lldb_cmds() {
	dir=$1
	shift
	first=1
	for c in "$@"; do
		[ $first = 1 ] && set -- -o "trace load $dir/trace.json"
		set -- "$@" -o "$c"
		first=0
	done
	"$lldb" --no-lldbinit -b "$@" 2>&1
}

# find_lldb: sets $lldb to an LLDB that loads a trace, or to "".
find_lldb() {
	record probe --start=main -- tests/progs/recursion &&
	"$ptrr" export --lldb="$work/probe.lldb" "$work/probe.ptrr" >/dev/null ||
		{ lldb=; return; }
	for lldb in ${PTRR_TRACE_LLDB:-\
	    "$top_srcdir/.deps/lldb-22/usr/lib/llvm-22/bin/lldb" \
	    lldb-22 lldb-21 lldb-20 "${LLDB:-lldb-19}" lldb}; do
		command -v "$lldb" >/dev/null 2>&1 || continue
		lldb_cmds "$work/probe.lldb" \
			"thread trace dump instructions --raw --count 1" |
			grep -q '^    [0-9]*: 0x' && return
		echo "note: $lldb cannot load an Intel PT trace bundle"
	done
	lldb=
}

# tids BUNDLE-DIR: the task ids of the exported threads, in LLDB's order.
tids() {
	sed -n 's/^ *"tid": \([0-9]*\),*$/\1/p' "$1/trace.json"
}

# lldb_insns DIR INDEX COUNT: the addresses of the first COUNT items of
# LLDB's instruction list of thread INDEX (1-based, in trace.json order).
lldb_insns() {
	lldb_cmds "$1" \
		"thread trace dump instructions $2 --raw --forwards --count $3" |
		sed -n 's/^    [0-9]*: 0x0*\([0-9a-f]*\)$/0x\1/p'
}

# lldb_calls DIR INDEX: LLDB's call segments of thread INDEX, in execution
# order, one a line: the first item number and the function's name.  An
# inlined function's segment is named by the function it is inlined into
# (the symbol, as ptrr names it); a PLT stub, "symbol stub for: NAME", is
# NAME@plt as ptrr and GDB name it; code without a symbol, which LLDB
# names ___lldb_unnamed_symbol_N or MODULE[0xOFFSET], is ??.
lldb_calls() {
	lldb_cmds "$1" "thread select $2" "thread trace dump function-calls" |
		sed -e 's/`symbol stub for: \([^ ]*\)/`\1@plt/' \
		    -e 's/`___lldb_unnamed_symbol[^ ]*/`??/' \
		    -e 's/`[^ `]*\[0x[0-9a-f]*\]/`??/' |
		sed -n 's/^ *[^ `]*`\([^ ]*\).* \[\([0-9]*\), [0-9]*\]$/\2 \1/p' |
		sort -n
}

# ptrr_calls BUNDLE TID: the same for ptrr's call history.
ptrr_calls() {
	"$ptrr" call-history --insn-range --thread="$2" "$1" |
		awk -F'\t' '{ split($3, r, /[ ,]/); print r[2], $2 }'
}

# normalize: "FIRST NAME" lines to the functions run, one name a line,
# under the differences docs/lldb.md explains:
#  - the same address has several names: glibc's aliases (__GI_X,
#    __libc_X, ___X, X64 for the large-file X, _IO_new_X, and versioned
#    implementations such as
#    __pthread_create_2_1 for pthread_create) and GCC's .part/.isra/
#    .constprop/.cold clones, named by DWARF in LLDB and by the symbol
#    table in ptrr: these prefixes and suffixes are dropped;
#  - LLDB makes up a symbol (___lldb_unnamed_symbol_N, "??" here) for
#    code that has an unwind entry of its own but no symbol (the child's
#    half of clone3), ptrr names it by the symbol around it: a "??"
#    between two pieces of one function is dropped;
#  - a PLT stub jumps to the PLT header (PLT0) to bind lazily: ptrr
#    names them NAME@plt and ??, LLDB the same or, where it has no
#    symbol for the stub (.plt.sec, .plt.got), one ?? for both: a ?? after
#    NAME@plt is dropped, and LLDB's ?? matches ptrr's NAME@plt;
#  - LLDB starts a segment at a call and where the (inlined) function
#    changes; ptrr, like GDB's btrace, at every call and return, so a
#    return into another instance of the same function (recursion) is a
#    new segment for ptrr only: adjacent repeats of a name are merged.
normalize() {
	awk '{ n = $2
	       sub(/^__GI_/, "", n); sub(/^_+/, "", n); sub(/^libc_/, "", n)
	       sub(/_[0-9]+_[0-9]+$/, "", n); sub(/64$/, "", n)
	       sub(/^IO_new_/, "IO_", n)
	       while (sub(/\.(part|isra|constprop|cold)(\.[0-9]+)*$/, "", n)) ;
	       name[NR] = n }
	     END { for (i = 1; i <= NR; i++) {
			if (name[i] == "??" && i > 1 && i < NR &&
			    name[i - 1] == name[i + 1]) { i++; continue }
			if (name[i] == "??" && last ~ /@plt$/) continue
			if (name[i] != last) print name[i]
			last = name[i] } }'
}

# same_calls WANT GOT: true if the function lists WANT (ptrr's) and GOT
# (LLDB's) are the same, where "??" (code without a symbol: LLDB
# names it ___lldb_unnamed_symbol_N) also matches NAME@plt: ptrr
# names the stubs of .plt.got (lazy binding off, as for __cxa_finalize)
# from their relocations, LLDB only those of .plt; and the other way
# round for some stubs of ld.so (__tls_get_addr@plt).  LLDB's list may
# also have a "??" of its own right after a function: an unwind region
# that ends it, which ptrr names by the enclosing symbol (the error
# path of __clone3, which fails under QEMU, comes last in it).
same_calls() {
	[ -s "$1" ] &&
	awk 'NR == FNR { want[++n] = $0; next }
	     { got[++m] = $0 }
	     END {
		for (j = k = 1; j <= n && k <= m; ) {
			w = want[j]; g = got[k]
			if (w == g || (w g ~ /^[?][?].*@plt$|@plt[?][?]$/)) {
				j++; k++
			} else if (g == "??" && k > 1 && got[k - 1] != "??" &&
				   got[k - 1] !~ /@plt$/) {
				k++
			} else
				exit 1
		}
		exit (j <= n || k <= m)
	     }' "$1" "$2"
}

# check_program NAME: records tests/progs/NAME from main, exports it and
# compares LLDB's view of every thread with ptrr's.
check_program() {
	b="$work/$1.ptrr" d="$work/$1.lldb"
	record "$1" --start=main -- "tests/progs/$1" || return
	"$ptrr" export --lldb="$d" "$b" >"$work/$1.export" 2>&1 ||
		{ fail "$1: export: $(cat "$work/$1.export")"; return; }
	[ -f "$d/trace.json" ] || { fail "$1: no $d/trace.json"; return; }
	i=0
	for tid in $(tids "$d"); do
		i=$((i + 1))
		"$ptrr" insn-history --raw --thread="$tid" "$b" >"$work/want"
		grep -q ' \[gap\] ' "$work/want" &&
			fail "$1: thread $tid: ptrr's history has gaps"
		check_import "$1" "$tid"
		[ -n "$lldb" ] || continue
		lldb_insns "$d" $i $((2 * $(wc -l <"$work/want") + 10)) \
			>"$work/got"
		# LLDB numbers trace items, and events are items too (tracing
		# disabled by a system call): compare the addresses.
		awk '{ print $2 }' "$work/want" >"$work/want.addrs"
		cmp -s "$work/want.addrs" "$work/got" ||
			fail "$1: thread $tid: $lldb lists other instructions:" \
				"$(diff "$work/want.addrs" "$work/got" | head -n 4)"
		ptrr_calls "$b" "$tid" | normalize >"$work/want.calls.$tid"
		lldb_calls "$d" $i | normalize >"$work/got.calls.$tid"
		same_calls "$work/want.calls.$tid" "$work/got.calls.$tid" ||
			fail "$1: thread $tid: $lldb's function calls differ" \
				"(ptrr < > lldb):" \
				"$(diff "$work/want.calls.$tid" "$work/got.calls.$tid" |
				   grep -v -x -e '[<>] .*@plt' -e '[<>] ??' -e '---' |
				   head -n 8)"
	done
	[ "$i" -gt 0 ] || fail "$1: no threads in $d/trace.json"
}

# check_import NAME TID: the export of NAME imported again lists thread
# TID's instructions as the original does ($work/want).
check_import() {
	r="$work/$1.back.ptrr"
	[ -d "$r" ] ||
		"$ptrr" import --lldb="$work/$1.lldb/trace.json" -o "$r" \
			>"$work/$1.import" 2>&1 ||
		{ fail "$1: import: $(cat "$work/$1.import")"; return; }
	"$ptrr" insn-history --raw --thread="$2" "$r" | cmp -s - "$work/want" ||
		fail "$1: thread $2: the imported bundle decodes differently"
}

find_lldb
[ -n "$lldb" ] || fail "no LLDB loads an Intel PT trace bundle (install lldb-22; lldb-19 19.1.7 crashes on trace load)"
for p in recursion fnptr plt threads; do
	check_program $p
done
[ "$(tids "$work/threads.lldb" | wc -l)" -ge 3 ] ||
	fail "threads: fewer than 3 threads exported"

# The export points modules at the bundle's packed copies when it has
# them, and the import packs them: the result does not need the originals.
record packed --start=main --pack -- tests/progs/plt &&
"$ptrr" export --lldb="$work/packed.lldb" "$work/packed.ptrr" >/dev/null &&
grep -q "\"file\": \"$work/packed.ptrr/modules/" "$work/packed.lldb/trace.json" ||
	fail "packed: the export does not point at the packed modules"

# What is written: DIR only, and only a new or empty one.
expect_exit 2 "exists and is not empty" \
	"$ptrr" export --lldb="$work/recursion.lldb" "$work/recursion.ptrr"
mkdir "$work/empty.lldb"
expect_exit 0 "" "$ptrr" export --lldb="$work/empty.lldb" "$work/recursion.ptrr"
[ -f "$work/empty.lldb/trace.json" ] || fail "export into an empty DIR"
expect_exit 2 "no-such.ptrr" \
	"$ptrr" export --lldb="$work/x.lldb" "$work/no-such.ptrr"
[ ! -e "$work/x.lldb" ] || fail "a failed export left $work/x.lldb"
expect_exit 1 "missing --lldb=DIR" "$ptrr" export "$work/recursion.ptrr"
expect_exit 1 "usage: ptrr export" "$ptrr" export --dot=x "$work/recursion.ptrr"

# Bad LLDB bundles: one line naming the cause, exit 2, no bundle.
t="$work/bad"
mkdir "$t"
cp "$work/recursion.lldb/trace.json" "$t/good.json"
cp -r "$work/recursion.lldb/threads" "$t/"
bad_import() {
	pattern=$1
	shift
	expect_exit 2 "$pattern" "$ptrr" import --lldb="$t/$1" -o "$t/out.ptrr"
	[ "$(wc -l <"$work/err")" -eq 1 ] ||
		fail "import $1: not one line: $(cat "$work/err")"
	[ ! -e "$t/out.ptrr" ] || fail "import $1: a bundle was written"
}
bad_import "missing.json: No such file" missing.json
printf '{"type": "intel-pt", ' >"$t/trunc.json"
bad_import "trunc.json is not JSON" trunc.json
sed 's/"intel-pt"/"perf"/' "$t/good.json" >"$t/type.json"
bad_import "not an LLDB Intel PT trace bundle" type.json
sed '/"family"/d' "$t/good.json" >"$t/family.json"
bad_import "cpuInfo.family is missing" family.json
sed 's/"tid": [0-9]*/"tid": "x"/' "$t/good.json" >"$t/tid.json"
bad_import "threads\[0\]\.tid is missing or not" tid.json
sed 's/"iptTrace": "threads/"iptTrace": "nothere/' "$t/good.json" >"$t/trace.json"
bad_import "cannot read the trace file .*nothere" trace.json
sed 's/"loadAddress": "0x/"loadAddress": "zz/' "$t/good.json" >"$t/load.json"
bad_import "loadAddress is missing or not an address" load.json
sed 's/"processes"/"cpus": [], "processes"/; s/"iptTrace": "[^"]*"/"x": 1/' \
	"$t/good.json" >"$t/cpus.json"
bad_import "per-thread traces only" cpus.json
expect_exit 1 "missing -o BUNDLE" "$ptrr" import --lldb="$t/good.json"
"$ptrr" --help | grep -q '^  ptrr export  *\[--lldb=DIR\] .*BUNDLE$' ||
	fail "ptrr --help does not list export"
"$ptrr" --help | grep -q '^  ptrr import  *(--lldb=TRACE.json | ' ||
	fail "ptrr --help does not list import"

finish
