#!/bin/sh
# What ./quickstart installs: a copy of it runs with apt-get, sudo and
# dpkg-query replaced by stubs that log (every package missing) and a
# configure that fails, so it stops after installing.
# - demo: what builds ptrr and runs gdb (gdb, libipt-dev ...), not what
#   only the tests use (chromium, tesseract-ocr, lldb, expect, dejagnu);
# - test and asan: those as well;
# - PTRR_AWK=gawk ./quickstart test installs gawk too.
. "${top_srcdir:-..}/tests/lib.sh"
work_dir quickstart-packages

mkdir -p "$work/bin" "$work/qs"
cp "$top_srcdir/quickstart" "$work/qs/quickstart"
printf '#!/bin/sh\nexit 1\n' >"$work/qs/configure"
printf '#!/bin/sh\nexit 1\n' >"$work/bin/dpkg-query"
printf '#!/bin/sh\nexec "$@"\n' >"$work/bin/sudo"
printf '#!/bin/sh\necho "$*" >>"%s/apt.log"\n' "$work" >"$work/bin/apt-get"
chmod +x "$work/qs/configure" "$work/bin/"*

# installed MODE [VAR=VALUE]: the packages `./quickstart MODE` installs,
# one a line (PTRR_AWK only if given: .ci/run sets it for make check).
installed() {
	rm -f "$work/apt.log"
	env -u PTRR_AWK PATH="$work/bin:$PATH" ${2:+"$2"} \
		sh "$work/qs/quickstart" "$1" \
		>"$work/$1.out" 2>&1
	sed -n 's/^install -y -q //p' "$work/apt.log" 2>/dev/null | tr ' ' '\n'
}

# has LIST PACKAGE: LIST has PACKAGE on a line of its own.
has() {
	printf '%s\n' "$1" | grep -qx -- "$2"
}

demo=$(installed demo)
for p in gdb build-essential libipt-dev libzydis-dev; do
	has "$demo" $p || fail "demo: $p not installed ($(echo $demo))"
done
for p in chromium tesseract-ocr lldb-19 expect linux-perf dejagnu gawk; do
	has "$demo" $p && fail "demo: installs $p, which only the tests use"
done
for mode in test asan; do
	list=$(installed $mode)
	for p in gdb chromium tesseract-ocr lldb-19 expect libc6-dbg linux-perf \
		 dejagnu; do
		has "$list" $p || fail "$mode: $p not installed ($(echo $list))"
	done
	has "$list" gawk && fail "$mode: installs gawk, not asked for"
done
has "$(installed test PTRR_AWK=gawk)" gawk ||
	fail "PTRR_AWK=gawk ./quickstart test: gawk not installed"
finish
