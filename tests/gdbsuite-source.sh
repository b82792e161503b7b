#!/bin/sh
# tests/gdbsuite/gdb-source.sh, which make check-gdb-btrace and .ci/run
# use to get GDB's source, with apt-get, dpkg-source and dpkg-query
# replaced by stubs that log: GDB_SRC is used as given (and refused with
# one line when it has no testsuite); without a deb-src line in apt's
# sources it fetches from a private list of this release's sources; the
# second time it uses the cache; when apt cannot fetch it says so in one
# line and leaves nothing half-made in the cache.
. "${top_srcdir:-..}/tests/lib.sh"
work_dir gdbsuite-source

script="$top_srcdir/tests/gdbsuite/gdb-source.sh"
mkdir -p "$work/bin" "$work/given/gdb/testsuite" || exit 99
touch "$work/given/gdb/testsuite/configure"
printf '#!/bin/sh\necho 13.1-3\n' >"$work/bin/dpkg-query"
# apt-get: "source" fails with apt's own sources (no deb-src) and, with
# $work/offline, always; else it downloads a .dsc.
cat >"$work/bin/apt-get" <<STUB
#!/bin/sh
echo "\$*" >>"$work/apt.log"
[ -f "$work/offline" ] && { echo "E: Failed to fetch"; exit 100; }
case "\$*" in
*SourceList=*update*) exit 0 ;;
*SourceList=*source*) touch gdb_13.1-3.dsc; exit 0 ;;
*) echo "E: You must put some 'deb-src' URIs in your sources.list"; exit 100 ;;
esac
STUB
# dpkg-source --no-check -x DSC DIR: DIR with a testsuite.
cat >"$work/bin/dpkg-source" <<'STUB'
#!/bin/sh
mkdir -p "$4/gdb/testsuite" && touch "$4/gdb/testsuite/configure"
STUB
chmod +x "$work/bin/"*
PATH="$work/bin:$PATH"
PTRR_CACHE="$work/cache"
export PATH PTRR_CACHE

# run NAME [VAR=VALUE]: the script's stdout in NAME.out, stderr in
# NAME.err, its status in $status.
run() {
	env -u GDB_SRC ${2:+"$2"} sh "$script" >"$work/$1.out" 2>"$work/$1.err"
	status=$?
}

run given GDB_SRC="$work/given"
[ $status = 0 ] && [ "$(cat "$work/given.out")" = "$work/given" ] ||
	fail "GDB_SRC: status $status, printed '$(cat "$work/given.out")'"
[ -f "$work/apt.log" ] && fail "GDB_SRC: apt-get was run"

run bad GDB_SRC="$work/nothing"
[ $status = 2 ] && [ "$(wc -l <"$work/bad.err")" = 1 ] &&
	grep -q 'GDB_SRC' "$work/bad.err" ||
	fail "a GDB_SRC without source: status $status, $(cat "$work/bad.err")"

touch "$work/offline"
run offline
[ $status = 2 ] && [ "$(wc -l <"$work/offline.err")" = 2 ] &&
	grep -q 'apt-get source gdb=13.1-3 failed.*E: Failed to fetch' \
		"$work/offline.err" ||
	fail "offline: status $status, $(cat "$work/offline.err")"
[ -z "$(ls -A "$work/cache")" ] ||
	fail "offline: left in the cache: $(ls -A "$work/cache")"
rm -f "$work/offline" "$work/apt.log"

run fetch
want="$work/cache/gdb_13.1-3/gdb"
[ $status = 0 ] && [ "$(cat "$work/fetch.out")" = "$want" ] &&
	[ -f "$want/gdb/testsuite/configure" ] ||
	fail "fetch: status $status, $(cat "$work/fetch.out" "$work/fetch.err")"
grep -q 'SourceList=.*update' "$work/apt.log" &&
	grep -q 'SourceList=.*source --download-only gdb=13.1-3' "$work/apt.log" ||
	fail "fetch: not from a private list of sources: $(cat "$work/apt.log")"
[ "$(ls -A "$work/cache")" = gdb_13.1-3 ] ||
	fail "fetch: left in the cache: $(ls -A "$work/cache")"

rm -f "$work/apt.log"
run again
[ $status = 0 ] && [ "$(cat "$work/again.out")" = "$want" ] ||
	fail "the second time: status $status, $(cat "$work/again.err")"
[ -f "$work/apt.log" ] && fail "the second time: apt-get was run again"
finish
