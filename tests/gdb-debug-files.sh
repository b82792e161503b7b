#!/bin/sh
# gdb's files in ptrr's sessions, quietly:
#
# - `ptrr replay` and `ptrr gdb` (libc_crash, a crash inside libc): no
#   "Reading ... from remote target..." line, no warning about "set
#   sysroot", no "ptrr serve: refused" line; the libraries are read from
#   this machine (not target:), and with libc's separate debug file
#   installed (libc6-dbg) the libc frame has its file and line.
# - gdb connected to `ptrr serve` by hand (sysroot "target:", every file
#   read through the server): a stripped program whose .gnu_debuglink
#   names a debug file in .debug/ next to it gets the debug file through
#   the server (bt with file:line); gdb's searches for the debug files
#   nobody has print no line; `remote get` gives that debug file, and
#   refuses a debug file of another program, one named with "..", and
#   a file that is not a debug file.
. "${top_srcdir:-..}/tests/lib.sh"
gdb_work_dir gdb-debug-files

# quiet NAME: what no session prints.
quiet() {
	lacks "$1" 'from remote target'
	lacks "$1" 'set sysroot'
	lacks "$1" '^ptrr serve: refused'
}

libc=$(ldd "$progs/libc_crash" | sed -n 's/.*=> \(\/[^ ]*libc\.so[^ ]*\) .*/\1/p')
libc=$(realpath "$libc")
id=$(readelf -n "$libc" | sed -n 's/.*Build ID: \([0-9a-f]*\)$/\1/p')
dbg=/usr/lib/debug/.build-id/${id%"${id#??}"}/${id#??}.debug
# libc_line NAME: the libc frame has a source line, if libc6-dbg is there.
libc_line() {
	[ -n "$id" ] && [ -f "$dbg" ] || return 0
	has "$1" '^#0 .* in [_A-Za-z]*fflush \(fp=0x10\) at .*\.c:[0-9]+$'
}

# ---- A replay and a live session, through ptrr.
record crash -- "$progs/libc_crash" || { finish; exit; }
PTRR_GDB=$GDB timeout 300 "$ptrr" replay --batch -ex bt \
	-ex 'info sharedlibrary' "$work/crash.ptrr" >"$work/replay.out" 2>&1 ||
	fail "replay: ptrr replay failed: $(tail -n 3 "$work/replay.out")"
PTRR_GDB=$GDB timeout 300 "$ptrr" gdb --batch -ex continue -ex bt \
	-ex 'info sharedlibrary' -- "$progs/libc_crash" >"$work/live.out" 2>&1 ||
	fail "live: ptrr gdb failed: $(tail -n 3 "$work/live.out")"
for s in replay live; do
	quiet $s
	libc_line $s
	has $s "^#1 .* in main \(\) at .*libc_crash\.c:[0-9]+$"
	has $s "^0x[0-9a-f]+ +0x[0-9a-f]+ +Yes[ (*)]* +$libc\$"
done

# ---- gdb reading through the server: a debug file found by the
# program's .gnu_debuglink, next to it.
command -v strip >/dev/null && command -v objcopy >/dev/null ||
	{ echo "binutils (strip, objcopy) not found: the rest skipped"; finish; exit; }
mkdir -p "$work/linked/.debug" "$work/other" "$work/got"
objcopy --only-keep-debug "$progs/recursion" \
	"$work/linked/.debug/recursion.debug" || exit 99
strip -o "$work/stripped" "$progs/recursion" || exit 99
objcopy --add-gnu-debuglink="$work/linked/.debug/recursion.debug" \
	"$work/stripped" "$work/linked/recursion" || exit 99
objcopy --only-keep-debug "$progs/crash" "$work/other/crash.debug" || exit 99
echo "not a debug file" >"$work/other/text.debug"
record linked --start=main -- "$work/linked/recursion" || { finish; exit; }
got=$work/got
$GDB -nx -batch -ex "target remote | '$ptrr' serve --stdio '$work/linked.ptrr'" \
	-ex 'break fact' -ex reverse-continue -ex bt \
	-ex "remote get $work/linked/.debug/recursion.debug $got/linked" \
	-ex "remote get $work/other/crash.debug $got/other" \
	-ex "remote get $work/linked/../linked/.debug/recursion.debug $got/dotdot" \
	-ex "remote get $work/other/text.debug $got/text" \
	>"$work/remote.out" 2>&1 </dev/null
has remote "Reading $work/linked/\.debug/recursion\.debug from remote target"
lacks remote '^ptrr serve: refused'
has remote '^#0 +fact \(n=[^)]*\) at .*recursion\.c:[0-9]+$'
cmp -s "$work/linked/.debug/recursion.debug" "$got/linked" ||
	fail "remote: remote get of the debug file"
for f in other dotdot text; do
	[ ! -e "$got/$f" ] || fail "remote: $f was given"
done
[ "$(grep -c '^Remote I/O error: Permission denied' "$work/remote.out")" = 3 ] ||
	fail "remote: not 3 refusals: $(grep -i 'error' "$work/remote.out")"
finish
