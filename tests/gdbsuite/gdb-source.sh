#!/bin/sh
# Prints the directory of GDB's source for the gdb under test (its
# testsuite is gdb/testsuite there), fetching it the first time:
# Debian's source package of the installed gdb (`apt-get source`),
# unpacked once into a cache and reused.
#
#   tests/gdbsuite/gdb-source.sh
#
# GDB_SRC: an unpacked GDB source to use instead (nothing is fetched).
# PTRR_CACHE: the cache, default ${XDG_CACHE_HOME:-$HOME/.cache}/ptrr;
#   the source goes to PTRR_CACHE/gdb_VERSION/gdb/.
# apt's own sources are used if they have a deb-src line; if not, apt
# reads this release's Sources from deb.debian.org into the cache, as
# any user, without changing the system's apt configuration.
# Exit status: 0 (the directory on stdout), 2 with a one-line message
# naming the cause when the source cannot be had.
set -u
fail() { echo "gdb-source.sh: $*" >&2; exit 2; }

if [ -n "${GDB_SRC:-}" ]; then
	[ -f "$GDB_SRC/gdb/testsuite/configure" ] ||
		fail "no GDB source at GDB_SRC=$GDB_SRC (gdb/testsuite/configure missing)"
	(cd "$GDB_SRC" && pwd)
	exit 0
fi

command -v apt-get >/dev/null && command -v dpkg-source >/dev/null ||
	fail "apt-get and dpkg-source (dpkg-dev) are needed to fetch GDB's source; or set GDB_SRC"
ver=$(dpkg-query -W -f='${source:Version}' gdb 2>/dev/null) && [ -n "$ver" ] ||
	fail "the gdb package is not installed: apt-get install gdb; or set GDB_SRC"
cache=${PTRR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ptrr}
dest=$cache/gdb_$ver/gdb
if [ -f "$dest/gdb/testsuite/configure" ]; then
	echo "$dest"
	exit 0
fi

mkdir -p "$cache" || fail "cannot create the cache $cache: set PTRR_CACHE"
tmp=$(mktemp -d "$cache/.gdb-source.XXXXXX") ||
	fail "cannot write in the cache $cache: set PTRR_CACHE"
trap 'rm -rf "$tmp"' EXIT
echo "gdb-source.sh: fetching the source of gdb $ver into $dest (once)" >&2

# apt-get source with this machine's apt sources, else with a private
# list of this release's deb-src alone (state and cache in $tmp).
fetch() {
	(cd "$tmp" && apt-get -q "$@" source --download-only "gdb=$ver") \
		>"$tmp/apt.log" 2>&1
}
if ! fetch; then
	. /etc/os-release 2>/dev/null
	[ -n "${VERSION_CODENAME:-}" ] ||
		fail "no deb-src for gdb in apt's sources and no VERSION_CODENAME in /etc/os-release: add a deb-src line, apt-get update; or set GDB_SRC"
	mkdir -p "$tmp/apt/lists/partial" "$tmp/apt/cache/archives/partial"
	echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $VERSION_CODENAME main" \
		>"$tmp/apt/sources.list"
	set -- -o "Dir::Etc::SourceList=$tmp/apt/sources.list" \
		-o Dir::Etc::SourceParts=/nonexistent \
		-o "Dir::State::Lists=$tmp/apt/lists" \
		-o "Dir::Cache=$tmp/apt/cache" -o Debug::NoLocking=1
	apt-get -q "$@" update >"$tmp/apt-update.log" 2>&1 && fetch "$@" ||
		fail "apt-get source gdb=$ver failed (no network, or no such version on deb.debian.org?): $(grep -h '^E:' "$tmp"/apt*.log | head -n 1)"
fi
(cd "$tmp" && dpkg-source --no-check -x gdb_*.dsc src >"$tmp/unpack.log" 2>&1) ||
	fail "dpkg-source -x failed: see $(tail -n 1 "$tmp/unpack.log")"
[ -f "$tmp/src/gdb/testsuite/configure" ] ||
	fail "the gdb source package has no gdb/testsuite/configure"
# Another run may have put it there meanwhile: mv -T then refuses.
mkdir -p "${dest%/gdb}" && { mv -T "$tmp/src" "$dest" 2>/dev/null ||
	[ -f "$dest/gdb/testsuite/configure" ]; } ||
	fail "cannot move the source into $dest"
echo "$dest"
