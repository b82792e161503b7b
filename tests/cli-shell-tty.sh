#!/bin/sh
# `ptrr shell` on a real terminal: completion and history (see
# tests/cli-shell-tty.exp); the piped, non-terminal shell is
# tests/cli-shell.sh.
set -u
. "$top_srcdir/tests/lib.sh"
work_dir cli-shell-tty
command -v expect >/dev/null || { echo "SKIP: expect is not installed"; exit 77; }
cd "$top_builddir" || exit 99
"$ptrr" record --backend=soft --start=main -o "$work/rec.ptrr" \
	-- tests/progs/recursion >"$work/record.log" 2>&1 ||
	{ cat "$work/record.log"; exit 1; }
TERM=xterm expect "$top_srcdir/tests/cli-shell-tty.exp" "$work/rec.ptrr" ||
	fail "the shell on a terminal"
finish
