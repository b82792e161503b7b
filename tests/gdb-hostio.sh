#!/bin/sh
# gdb reads the program and its libraries through ptrr serve (the Host I/O
# packets, vFile, behind gdb's default sysroot "target:"), and nothing
# else.
#
# crash, in a recording (ptrr replay), live (ptrr gdb) and a recording
# gdb connects to by itself (its sysroot "target:": ptrr replay and ptrr
# gdb set it to read this machine's files): no "remote target does not
# support file transfer" warning; the libraries listed with their
# symbols (as target: files in the last); bt with symbols; remote get of the
# program and of libc (also by a path with ".." and through a symbolic
# link that resolve to it) gives the file.  Refused, with nothing
# written and one line from the server: /etc/passwd, a file outside the
# program's, a ".." path that resolves outside, a symbolic link named as
# a library that leads elsewhere, remote put, remote delete.
#
# plt and its library, copied, recorded with --pack and moved away: gdb
# reads the packed copies, bt shows their symbols.
#
# crashcopy, a copy of crash recorded without --pack and then replaced by
# a symbolic link to /etc/passwd: its module path is refused.
. "${top_srcdir:-..}/tests/lib.sh"
gdb_work_dir gdb-hostio

# run NAME ptrr-COMMAND ARGS...: runs ptrr gdb or ptrr replay with --batch
# and ARGS; the output (gdb's and the server's) in $work/NAME.out.
run() {
	name=$1 cmd=$2
	shift 2
	PTRR_GDB=$GDB timeout 300 "$ptrr" "$cmd" --batch "$@" \
		>"$work/$name.out" 2>&1 ||
		fail "$name: ptrr $cmd failed: $(tail -n 3 "$work/$name.out")"
}

libc=$(ldd "$progs/crash" | sed -n 's/.*=> \(\/[^ ]*libc\.so[^ ]*\) .*/\1/p')
libc=$(realpath "$libc")
libdir=$(dirname "$libc")
exe=$(realpath "$progs/crash")
echo "a file of the host's" >"$work/outside"
mkdir "$work/trap" "$work/got"
ln -s /etc/passwd "$work/trap/$(basename "$libc")"
ln -s "$libc" "$work/trap/alias"
up=$(echo "$libdir" | sed 's|/[^/]*|/..|g')

# The gdb commands of the refusals and the reads that go through; the
# refusals' files must not appear in $work/got.
set -- -ex 'info sharedlibrary' -ex bt \
	-ex "remote get /etc/passwd $work/got/passwd" \
	-ex "remote get $work/outside $work/got/outside" \
	-ex "remote get $libdir/$up/etc/passwd $work/got/dotdot" \
	-ex "remote get $work/trap/$(basename "$libc") $work/got/trap" \
	-ex "remote put $work/outside $work/got/put" \
	-ex "remote delete $exe" \
	-ex "remote get $exe $work/exe" \
	-ex "remote get $libdir/../$(basename "$libdir")/$(basename "$libc") $work/libc" \
	-ex "remote get $work/trap/alias $work/alias"

# checks NAME [PREFIX]: what every session shows; PREFIX before the
# libraries' names.
checks() {
	lacks "$1" 'does not support file transfer'
	has "$1" "^0x[0-9a-f]+ +0x[0-9a-f]+ +Yes[ (*)]* +${2-}$libc\$"
	has "$1" '^#0 +lookup \(r=0x[0-9a-f]+\) at .*crash\.c:29'
	has "$1" '^#1 .* in main \(\) at .*crash\.c:3[58]'
	for f in /etc/passwd "$work/outside" "$libdir/$up/etc/passwd" \
		 "$work/trap/$(basename "$libc")" "$work/got/put"; do
		has "$1" "^ptrr serve: refused vFile:open of $f: "
	done
	has "$1" "^ptrr serve: refused vFile:unlink of $exe: "
	[ "$(grep -c '^Remote I/O error: Permission denied' "$work/$1.out")" = 6 ] ||
		fail "$1: not 6 refusals: $(grep -i 'error' "$work/$1.out")"
	[ -z "$(ls "$work/got")" ] ||
		fail "$1: refused files were written: $(ls "$work/got")"
	[ -f "$exe" ] || fail "$1: remote delete deleted $exe"
	cmp -s "$exe" "$work/exe" || fail "$1: remote get of the program"
	cmp -s "$libc" "$work/libc" || fail "$1: remote get of libc by .."
	cmp -s "$libc" "$work/alias" || fail "$1: remote get of a link to libc"
	rm -f "$work/exe" "$work/libc" "$work/alias"
}

# ---- A recording.
record crash -- "$progs/crash" || { finish; exit; }
run replay replay "$@" "$work/crash.ptrr"
checks replay

# ---- The recording, gdb connected by hand.
HOME=$work $GDB -nx -batch \
	-ex "target remote | '$ptrr' serve --stdio '$work/crash.ptrr'" "$@" \
	>"$work/remote.out" 2>&1 </dev/null
checks remote target:

# ---- Live, stopped at the crash's breakpoint.
run live gdb -ex 'break lookup' -ex continue "$@" -- "$progs/crash"
checks live

# ---- A recording made with --pack, its program and library moved away.
mkdir "$work/pk"
cp "$progs/plt" "$progs/libptrrplt.so" "$work/pk/" || exit 99
LD_LIBRARY_PATH=$work/pk "$ptrr" record --backend=soft --start=main --pack \
	-o "$work/packed.ptrr" -- "$work/pk/plt" >"$work/packed.log" 2>&1 ||
	{ fail "packed: ptrr record: $(tail -n 2 "$work/packed.log")"; finish; exit; }
mv "$work/pk" "$work/pk.moved"
run packed replay -ex 'info sharedlibrary' -ex 'break ptrr_lib_sum' \
	-ex reverse-continue -ex bt "$work/packed.ptrr"
lacks packed 'does not support file transfer'
lacks packed '^ptrr serve: warning'
has packed "^Reading symbols from $work/packed\.ptrr/modules/"
has packed "^0x[0-9a-f]+ +0x[0-9a-f]+ +Yes +$work/packed\.ptrr/modules/.*libptrrplt\.so\$"
has packed '^#0 +ptrr_lib_sum \(n=.*5\) at .*plt_lib\.c:[0-9]+'
has packed '^#1 +0x[0-9a-f]+ in main \(.*\) at .*plt\.c:[0-9]+'

# ---- A module path made a symbolic link to another file after the
# recording: not the module any more.
cp "$progs/crash" "$work/crashcopy" || exit 99
record swapped -- "$work/crashcopy" || { finish; exit; }
rm "$work/crashcopy"
ln -s /etc/passwd "$work/crashcopy"
run swapped replay -ex "remote get $work/crashcopy $work/got/swapped" \
	-ex 'pt info' "$work/swapped.ptrr"
has swapped "^ptrr serve: refused vFile:open of $work/crashcopy: module $work/crashcopy: the file has no build-id"
has swapped '^Remote I/O error: Permission denied'
[ ! -e "$work/got/swapped" ] || fail "swapped: the link's file was written"
finish
