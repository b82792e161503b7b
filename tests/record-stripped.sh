#!/bin/sh
# `ptrr record --start=SYMBOL` on stripped programs finds the symbol as
# gdb does, and starts where gdb says it is:
#
# - recursion stripped, its debug file laid out by build-id under a
#   directory PTRR_DEBUG_FILE_DIRECTORY names (gdb: set
#   debug-file-directory): fact and main from the debug file; fact is
#   unknown without it;
# - recursion stripped with a .gnu_debuglink to a debug file in .debug/
#   next to it: fact from the debug file;
# - recursion stripped with no debug file: main is the first argument
#   the entry code passes to __libc_start_main, which gdb's disassembly
#   of the entry point shows;
# - Debian's own stripped programs that are installed (xz, bc, jq,
#   sqlite3, git), main as for the last one.
#
# The recording's first instruction is compared with gdb's address of
# the symbol in the program started by `starti` (gdb and ptrr both run
# programs without address randomization).
. "${top_srcdir:-..}/tests/lib.sh"
gdb_work_dir record-stripped

# gdb_addr PROG SYM [GDB-OPTIONS...]: the address gdb gives SYM in PROG,
# started; nothing if gdb knows no such symbol.
gdb_addr() {
	prog=$1 sym=$2
	shift 2
	$GDB -nx -batch "$@" -ex starti -ex "info address $sym" "$prog" \
		2>/dev/null |
		sed -n 's/^Symbol "[^"]*" is .* at address \(0x[0-9a-f]*\)\.$/\1/p'
}

# gdb_entry_arg PROG: the address the entry code of PROG, started, loads
# into %rdi before its first call (gdb's disassembly, "lea ...,%rdi  #
# ADDR" or "mov $ADDR,%rdi").
gdb_entry_arg() {
	entry=$($GDB -nx -batch -ex starti -ex 'info files' "$1" 2>/dev/null |
		sed -n 's/^[[:space:]]*Entry point: \(0x[0-9a-f]*\)$/\1/p')
	[ -n "$entry" ] || return
	$GDB -nx -batch -ex starti -ex "x/16i $entry" "$1" 2>/dev/null |
		sed -n -e '/call/q' \
		    -e 's/.*lea .*,%rdi *# \(0x[0-9a-f]*\).*/\1/p' \
		    -e 's/.*mov  *\$\(0x[0-9a-f]*\),%[re]di.*/\1/p' | tail -n 1
}

# starts NAME SPEC WANT PROG [ARGS]: records PROG with --start=SPEC into
# NAME and checks that the history starts at WANT.
starts() {
	name=$1 spec=$2 want=$3
	shift 3
	[ -n "$want" ] || { fail "$name: gdb gives no address for $spec"; return; }
	"$ptrr" record --backend=soft -o "$work/$name.ptrr" \
		--start="$spec" -- "$@" >"$work/$name.log" 2>&1 </dev/null ||
		{ fail "$name: ptrr record: $(tail -n 2 "$work/$name.log")"; return; }
	got=$("$ptrr" insn-history --raw --count=1 "$work/$name.ptrr" |
		sed -n 's/^[0-9]* \(0x[0-9a-f]*\)$/\1/p')
	[ "$got" = "$want" ] ||
		fail "$name: --start=$spec began at '$got', gdb says $want"
}

command -v strip >/dev/null && command -v objcopy >/dev/null ||
	{ echo "binutils (strip, objcopy) not found: skipped"; exit 77; }
prog=$progs/recursion
objcopy --only-keep-debug "$prog" "$work/recursion.debug" || exit 99
id=$(readelf -n "$prog" | sed -n 's/.*Build ID: \([0-9a-f]*\)$/\1/p')
[ -n "$id" ] || { echo "no build-id in $prog: skipped"; exit 77; }
mkdir -p "$work/debug/.build-id/${id%"${id#??}"}" "$work/linked/.debug"
cp "$work/recursion.debug" "$work/debug/.build-id/${id%"${id#??}"}/${id#??}.debug"
strip -o "$work/stripped" "$prog" || exit 99
cp "$work/recursion.debug" "$work/linked/.debug/recursion.debug"
objcopy --add-gnu-debuglink="$work/linked/.debug/recursion.debug" \
	"$work/stripped" "$work/linked/recursion" || exit 99

# ---- A debug file found by build-id.
PTRR_DEBUG_FILE_DIRECTORY=$work/debug
export PTRR_DEBUG_FILE_DIRECTORY
want=$(gdb_addr "$work/stripped" fact -iex "set debug-file-directory $work/debug")
starts buildid-fact fact "$want" "$work/stripped"
want=$(gdb_addr "$work/stripped" main -iex "set debug-file-directory $work/debug")
starts buildid-main main "$want" "$work/stripped"
unset PTRR_DEBUG_FILE_DIRECTORY
expect_exit 2 "no symbol 'fact' in .*stripped" "$ptrr" record \
	--backend=soft -o "$work/none.ptrr" --start=fact -- "$work/stripped"

# ---- A debug file found by .gnu_debuglink.
want=$(gdb_addr "$work/linked/recursion" fact)
starts debuglink-fact fact "$want" "$work/linked/recursion"

# ---- No symbols: main from the entry code, where gdb finds none.
[ -z "$(gdb_addr "$work/stripped" main)" ] ||
	fail "gdb knows main in the stripped program: the test proves nothing"
starts entry-main main "$(gdb_entry_arg "$work/stripped")" "$work/stripped"

# ---- Debian's programs, if installed (their --version runs from main
# in well under a million instructions).
for cmd in "xz --version" "bc --version" "jq --version" \
	   "sqlite3 -version" "git --version"; do
	set -- $cmd
	path=$(command -v "$1") || continue
	readelf -S "$path" 2>/dev/null | grep -q '\.symtab' && continue
	starts "debian-$1" main "$(gdb_entry_arg "$path")" "$path" "$2"
done

finish
