#!/bin/sh
# Usage errors and exit statuses of `ptrr`, `ptrr info`, `ptrr insn-history`,
# `ptrr call-history` and `ptrr shell` (DESIGN.md §4: 0 success, 1 usage
# error, 2 runtime failure with a one-line message).
set -u
ptrr="$top_builddir/ptrr"
progs="$top_builddir/tests/progs"
work="$PWD/cli-usage.dir"
rm -rf "$work" && mkdir -p "$work" || exit 99
trap 'rm -rf "$work"' EXIT
failures=0

# expect STATUS PATTERN CMD...: runs CMD, checks its exit status and that
# its stderr matches the extended regular expression PATTERN.
expect() {
	want=$1 pattern=$2
	shift 2
	"$@" >"$work/out" 2>"$work/err"
	got=$?
	if [ "$got" != "$want" ]; then
		echo "FAIL: $*: exit $got, wanted $want"; cat "$work/err"
		failures=$((failures + 1))
	elif [ -n "$pattern" ] && ! grep -Eq -- "$pattern" "$work/err"; then
		echo "FAIL: $*: stderr does not match '$pattern':"
		cat "$work/err"
		failures=$((failures + 1))
	fi
}

# one_line: the last command's stderr was one line (besides warnings
# about the bundle).
one_line() {
	if [ "$(grep -vc '^warning: ' "$work/err")" -ne 1 ]; then
		echo "FAIL: $1: wanted a one-line message, got:"; cat "$work/err"
		failures=$((failures + 1))
	fi
}

# The program itself.
expect 1 'Usage:' "$ptrr"
expect 1 "unknown subcommand 'frobnicate'" "$ptrr" frobnicate
expect 0 '' "$ptrr" --help
for cmd in info insn-history call-history shell; do
	grep -q "ptrr $cmd " "$work/out" || {
		echo "FAIL: ptrr --help does not list $cmd"
		failures=$((failures + 1))
	}
done
expect 0 '' "$ptrr" help
expect 0 '' "$ptrr" --version
grep -Eq '^ptrr [0-9]+\.[0-9]+' "$work/out" || {
	echo "FAIL: ptrr --version printed: $(cat "$work/out")"
	failures=$((failures + 1))
}

# Usage errors of each browsing subcommand.
for cmd in info insn-history call-history shell; do
	expect 1 'missing BUNDLE' "$ptrr" $cmd
	expect 1 "usage: ptrr $cmd" "$ptrr" $cmd --no-such-option x.ptrr
	expect 1 "usage: ptrr $cmd" "$ptrr" $cmd a.ptrr b.ptrr
	expect 0 '' "$ptrr" $cmd --help
	expect 2 '^ptrr: .*missing\.ptrr' "$ptrr" $cmd "$work/missing.ptrr"
	one_line "$cmd missing.ptrr"
done
expect 1 '--from wants a number' "$ptrr" insn-history --from=0 x.ptrr
expect 1 '--count wants a number' "$ptrr" insn-history --count=-3 x.ptrr
expect 1 '--thread wants a number' "$ptrr" call-history --thread=abc x.ptrr
expect 1 'usage: ptrr call-history' "$ptrr" call-history --raw x.ptrr

# A directory that is no bundle is a runtime failure, not a crash.
mkdir "$work/empty.ptrr"
expect 2 '^ptrr: ' "$ptrr" info "$work/empty.ptrr"
one_line "info empty.ptrr"

# Errors that need a real recording.
bundle="$work/loops.ptrr"
"$ptrr" record --backend=soft --start=main -o "$bundle" -- "$progs/loops" \
	>"$work/record.log" 2>&1 || {
	echo "FAIL: ptrr record loops:"; cat "$work/record.log"; exit 1
}
tid=$("$ptrr" info "$bundle" | sed -n 's/^Thread 1 (LWP \([0-9]*\)).*/\1/p')
expect 2 "^ptrr: no thread 999999 in $bundle \(threads: $tid\)$" \
	"$ptrr" insn-history --thread=999999 "$bundle"
one_line "insn-history --thread=999999"
expect 2 "no thread 999999" "$ptrr" call-history --thread=999999 "$bundle"
expect 0 '' "$ptrr" call-history --thread="$tid" "$bundle"
expect 2 '^ptrr: instruction 999999999 is outside the history' \
	"$ptrr" insn-history --from=999999999 "$bundle"
one_line "insn-history --from=999999999"

[ "$failures" -eq 0 ] || { echo "$failures failures"; exit 1; }
