#!/bin/sh
# docs/manual.md's table of contents: one line "N. [TITLE](#ANCHOR)" for
# each section "## N. TITLE", in order, ANCHOR as GitHub makes it from the
# heading; and the table of commands at the top is one table (a blank
# line in it ended it, the rows after it shown as text).
. "${top_srcdir:-..}/tests/lib.sh"
work_dir manual-toc
manual="$top_srcdir/docs/manual.md"

# The sections, as the contents should list them.
sed -n 's/^## \([0-9][0-9]*\)\. \(.*\)$/\1 \2/p' "$manual" |
while read -r n title; do
	anchor=$(printf '%s %s' "$n" "$title" | tr 'A-Z' 'a-z' |
		sed 's/[^a-z0-9 _-]//g; s/ /-/g')
	printf '%s. [%s](#%s)\n' "$n" "$title" "$anchor"
done >"$work/want"
[ -s "$work/want" ] || fail "no '## N. TITLE' section in $manual"
# The contents: the numbered lines after "Contents:", up to the first
# blank line after them.
awk '/^Contents:$/ { on = 1; next } on && /^$/ && n { exit }
	on && NF { n++; print }' "$manual" >"$work/got"
cmp -s "$work/want" "$work/got" ||
	fail "the contents differ from the sections: $(diff "$work/want" \
		"$work/got" | grep '^[<>]' | head -n 4)"

# The table of commands: from its header to the line before "Contents:",
# every line a row (blank lines at its end aside).
awk '/^\| command \|/ { on = 1 } /^Contents:$/ { exit } on' "$manual" |
	sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' >"$work/table"
grep -vn '^|' "$work/table" >"$work/bad" &&
	fail "the table of commands has lines that are not rows:" \
	     "$(head -n 2 "$work/bad")"
finish
