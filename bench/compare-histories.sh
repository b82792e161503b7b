#!/bin/sh
# Compares what two builds of ptrr say about the same recordings: for
# each bundle, with its saved index left out (each build indexes the
# trace itself), `ptrr info`, `ptrr call-history --insn-range` and
# `ptrr insn-history --raw` of every thread must be the same.  For
# changes to the index and the history's decoding, which must not change
# any answer (docs/performance.md).
#
# usage: compare-histories.sh OLD_PTRR NEW_PTRR BUNDLE...
set -eu
[ $# -ge 3 ] || { sed -n '/^# usage:/s/^# //p' "$0" >&2; exit 1; }
old=$1 new=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for b in "$@"; do
	rm -rf "$tmp/b.ptrr"
	cp -r "$b" "$tmp/b.ptrr"
	rm -f "$tmp/b.ptrr"/threads/*.idx
	tids=$(ls "$tmp/b.ptrr/threads" | sed -n 's/\.pt$//p')
	for v in old new; do
		eval p=\$$v
		{
			"$p" info "$tmp/b.ptrr" | grep -v 'index: '
			for t in $tids; do
				"$p" call-history --insn-range --thread="$t" \
					"$tmp/b.ptrr" | md5sum
				"$p" insn-history --raw --thread="$t" \
					"$tmp/b.ptrr" | md5sum
			done
		} >"$tmp/$v.out" 2>&1
	done
	if cmp -s "$tmp/old.out" "$tmp/new.out"; then
		echo "same: $b ($(echo $tids | wc -w) threads)"
	else
		echo "DIFFERENT: $b"
		diff "$tmp/old.out" "$tmp/new.out" | head -n 20
		status=1
	fi
done
exit $status
