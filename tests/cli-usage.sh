#!/bin/sh
# Usage errors and exit statuses of `ptrr`, `ptrr info`, `ptrr insn-history`,
# `ptrr call-history` and `ptrr shell` (DESIGN.md §4: 0 success, 1 usage
# error, 2 runtime failure with a one-line message).
set -u
. "$top_srcdir/tests/lib.sh"
work_dir cli-usage
progs="$top_builddir/tests/progs"

# one_line WHAT: the last command's stderr was one line (besides warnings
# about the bundle).
one_line() {
	if [ "$(grep -vc '^warning: ' "$work/err")" -ne 1 ]; then
		fail "$1: wanted a one-line message, got:"; cat "$work/err"
	fi
}

# The program itself.
expect_exit 1 'Usage:' "$ptrr"
expect_exit 1 "unknown subcommand 'frobnicate'" "$ptrr" frobnicate
expect_exit 0 '' "$ptrr" --help
for cmd in info insn-history call-history shell; do
	grep -q "ptrr $cmd " "$work/out" || fail "ptrr --help does not list $cmd"
done
# Each subcommand's options, as its own --help lists them, are in its
# synopsis in ptrr --help (record's --filter, --psb-period, --tsc,
# --noretcomp and --soft-step were not).
"$ptrr" --help >"$work/help"
for cmd in record info insn-history call-history shell serve replay gdb \
	   lldb export import; do
	# The options of ptrr CMD --help not in CMD's lines of ptrr --help.
	"$ptrr" $cmd --help 2>&1 | grep -o -- '--[a-z][a-z-]*' | sort -u |
		grep -vx -e --help -e --version >"$work/own"
	cmd="$cmd" awk '/^  ptrr / { on = $2 == ENVIRON["cmd"] } on' \
		"$work/help" | grep -o -- '--[a-z][a-z-]*' | sort -u \
		>"$work/listed"
	missing=$(comm -23 "$work/own" "$work/listed" | tr '\n' ' ')
	[ -z "$missing" ] ||
		fail "ptrr --help omits $cmd's $missing"
done
expect_exit 0 '' "$ptrr" help
expect_exit 0 '' "$ptrr" --version
grep -Eq '^ptrr [0-9]+\.[0-9]+' "$work/out" ||
	fail "ptrr --version printed: $(cat "$work/out")"

# Usage errors of each browsing subcommand.
for cmd in info insn-history call-history shell; do
	expect_exit 1 'missing BUNDLE' "$ptrr" $cmd
	expect_exit 1 "usage: ptrr $cmd" "$ptrr" $cmd --no-such-option x.ptrr
	expect_exit 1 "usage: ptrr $cmd" "$ptrr" $cmd a.ptrr b.ptrr
	expect_exit 0 '' "$ptrr" $cmd --help
	expect_exit 2 '^ptrr: .*missing\.ptrr' "$ptrr" $cmd "$work/missing.ptrr"
	one_line "$cmd missing.ptrr"
done
expect_exit 1 '--from wants a number' "$ptrr" insn-history --from=0 x.ptrr
expect_exit 1 '--count wants a number' "$ptrr" insn-history --count=-3 x.ptrr
expect_exit 1 '--thread wants a number' "$ptrr" call-history --thread=abc x.ptrr
expect_exit 1 'usage: ptrr call-history' "$ptrr" call-history --raw x.ptrr

# A directory that is no bundle is a runtime failure, not a crash.
mkdir "$work/empty.ptrr"
expect_exit 2 '^ptrr: ' "$ptrr" info "$work/empty.ptrr"
one_line "info empty.ptrr"

# Errors that need a real recording.
bundle="$work/loops.ptrr"
record loops --start=main -- "$progs/loops" || exit 1
tid=$("$ptrr" info "$bundle" | sed -n 's/^Thread 1 (LWP \([0-9]*\)).*/\1/p')
expect_exit 2 "^ptrr: no thread 999999 in $bundle \(threads: $tid\)$" \
	"$ptrr" insn-history --thread=999999 "$bundle"
one_line "insn-history --thread=999999"
expect_exit 2 "no thread 999999" "$ptrr" call-history --thread=999999 "$bundle"
expect_exit 0 '' "$ptrr" call-history --thread="$tid" "$bundle"
expect_exit 2 '^ptrr: instruction 999999999 is outside the history' \
	"$ptrr" insn-history --from=999999999 "$bundle"
one_line "insn-history --from=999999999"

finish
