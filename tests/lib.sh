# Shell helpers for ptrr's end-to-end tests; sourced by tests/*.sh, which
# run under automake's harness with top_srcdir and top_builddir set.

ptrr="$top_builddir/ptrr"
failures=0

# fail MESSAGE...: records a failed check and says which.
fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

# work_dir NAME: makes a fresh scratch directory $work, removed on exit.
work_dir() {
	work="$PWD/$1.dir"
	rm -rf "$work" && mkdir -p "$work" || exit 99
	trap 'rm -rf "$work"' EXIT
}

# finish: the test's exit status from the failures counted.
finish() {
	[ "$failures" -eq 0 ] && echo "all checks passed"
	[ "$failures" -eq 0 ]
}

# final_pc BUNDLE: the final PC of a thread that did not exit (a crash,
# an interrupt), which the history lists last; nothing otherwise.
final_pc() {
	grep -q '"fault"\|"interrupted"' "$1/manifest.json" &&
		sed -n 's/.*"rip": "\(0x[0-9a-f]*\)".*/\1/p' \
			"$1/manifest.json" | head -n 1
}

# record_truth NAME [RECORD-OPTIONS] -- PROG [ARGS]: records into
# $work/NAME.ptrr with the single-stepped ground truth in $work/NAME.gt,
# and writes what decoding must list to $work/NAME.want.
record_truth() {
	name=$1
	shift
	"$ptrr" record --backend=soft --ground-truth="$work/$name.gt" \
		-o "$work/$name.ptrr" "$@" >"$work/$name.log" 2>&1 ||
		{ fail "$name: ptrr record: $(tail -n 2 "$work/$name.log")"
		  return 1; }
	{ cat "$work/$name.gt"; final_pc "$work/$name.ptrr"; } \
		>"$work/$name.want"
}

# raw_addrs BUNDLE: the decoded history, one address (or "[gap]") a line.
raw_addrs() {
	"$ptrr" insn-history --raw "$1" | awk '{ print $2 }'
}
