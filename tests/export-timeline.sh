#!/bin/sh
# `ptrr export --perfetto` and `--svg` (docs/manual.md section 13): the
# Chrome trace-event JSON is JSON (jansson reads it, in
# tests/timeline-check), its events nest thread by thread, and its
# activations are the function instances `ptrr call-history` lists: every
# line inside an activation of its name, every activation holding a line
# of its name and starting where a line starts (its own, or its callee's
# when a caller found late was widened to hold it).  The SVG is self-contained; headless Chromium draws it
# and OCR (tesseract) reads the names of tests/progs/timeline's functions
# off the picture.  Bad input gets one-line errors and leaves no file.
#
# Chromium and tesseract-ocr are Debian packages ./quickstart installs;
# where they are not installed the drawing checks are skipped (exit 77 at
# the end if all else passed); where dpkg has them but they do not work,
# that is a failure.
set -u
. "$top_srcdir/tests/lib.sh"
work_dir export-timeline
check="$top_builddir/tests/timeline-check"
cd "$top_builddir" || exit 99

# tids BUNDLE: the task ids of BUNDLE's threads.
tids() {
	sed -n 's/^ *"tid": \([0-9]*\),*$/\1/p' "$1/manifest.json"
}

# compare_calls NAME TID: thread TID's activations in $work/NAME.acts
# against its call history.
compare_calls() {
	"$ptrr" call-history --thread="$2" --insn-range "$work/$1.ptrr" \
		>"$work/$1.$2.calls" || { fail "$1: call-history $2"; return; }
	awk -v tid="$2" -F'\t' '
		FILENAME == ARGV[1] {
			if ($2 ~ /^\[decode error/) next
			split($3, r, /[ ,]/); n++
			cname[n] = $2; cfirst[n] = r[2]; clast[n] = r[3]; next }
		{ split($0, f, " "); if (f[1] != tid) next
		  a++; afirst[a] = f[2]; alast[a] = f[3]
		  aname[a] = substr($0, length(f[1] f[2] f[3] f[4]) + 5) }
		END {
			for (i = 1; i <= n; i++) {
				ok = 0
				for (j = 1; j <= a && !ok; j++)
					ok = aname[j] == cname[i] &&
					     afirst[j] <= cfirst[i] && clast[i] <= alast[j]
				if (!ok) { print "call line " i " (" cname[i] \
					") is in no activation of its name"; exit 1 }
			}
			for (j = 1; j <= a; j++) {
				own = starts = 0
				for (i = 1; i <= n; i++) {
					own += aname[j] == cname[i] &&
					       afirst[j] <= cfirst[i] && cfirst[i] <= alast[j]
					starts += afirst[j] == cfirst[i]
				}
				if (!own || !starts) { print "activation " aname[j] \
					" at " afirst[j] " has no call line of its" \
					" name or starts no call line"; exit 1 }
			}
			if (!a) { print "no activations"; exit 1 }
		}' "$work/$1.$2.calls" "$work/$1.acts" >"$work/cmp" ||
		fail "$1: thread $2: $(cat "$work/cmp")"
}

# check_json NAME: exports NAME's recording and checks the JSON.
check_json() {
	b="$work/$1.ptrr"
	"$ptrr" export --perfetto="$work/$1.json" --svg="$work/$1.svg" "$b" \
		>"$work/out" 2>"$work/err" ||
		{ fail "$1: export: $(cat "$work/err")"; return; }
	"$check" "$work/$1.json" >"$work/$1.acts" 2>"$work/err" ||
		{ fail "$1: $(cat "$work/err")"; return; }
	grep -q '"displayTimeUnit": *"ms"' "$work/$1.json" &&
		grep -q '"time_unit": *"instructions"' "$work/$1.json" ||
		fail "$1: no timing packets, yet the time unit is not instructions"
	n=0
	for t in $(tids "$b"); do
		n=$((n + 1))
		compare_calls "$1" "$t"
	done
	[ "$(cut -d' ' -f1 "$work/$1.acts" | sort -u | wc -l)" -eq "$n" ] ||
		fail "$1: not one track per thread ($n threads)"
	check_svg "$1"
}

# check_svg NAME: the SVG of NAME stands alone and names every function.
check_svg() {
	s="$work/$1.svg"
	head -c 200 "$s" | grep -q '<svg xmlns="http://www.w3.org/2000/svg"' ||
		fail "$1: not an SVG document"
	grep -Eqi '<script|href=|url\(|@import' "$s" &&
		fail "$1: the SVG refers to something outside itself"
	cut -d' ' -f5- "$work/$1.acts" | sort -u | while read -r name; do
		grep -qF "<title>$name (0x" "$s" ||
			echo "$name"
	done >"$work/missing"
	[ -s "$work/missing" ] &&
		fail "$1: the SVG has no title for $(head -1 "$work/missing")"
}

for p in timeline recursion longjmp crash threads; do
	record $p --start=main -- "tests/progs/$p" && check_json $p
done
# crash: the faulting function never returns, its callers hold it.
grep -q ' clobber$' "$work/crash.acts" ||
	fail "crash: no activation of clobber"
# threads: a track per thread, each named.
[ "$(grep -c '"thread_name"' "$work/threads.json")" -eq \
  "$(tids "$work/threads.ptrr" | wc -l)" ] ||
	fail "threads: not a thread_name event per thread"

# Timing packets (record --tsc: a TSC packet in every PSB+): the trace
# still decodes to the ground truth, the timeline is in TSC ticks, its
# activations are those of the count-timed timeline, and the time it
# spans is the recording's (the software backend takes thousands of
# ticks an instruction), not an instruction count.  (The activations are
# those of the call history, as for the timelines above.)  The whole
# program with short PSB periods: TSC comes only with each PSB+, and a
# trace with one PSB has one anchor, which times by instruction count.
if record_truth tsc --tsc --psb-period=2K -- tests/progs/timeline; then
	check_threads "$work/tsc.ptrr" "$work/tsc.gt"
	"$ptrr" export --perfetto="$work/tsc.json" "$work/tsc.ptrr" \
		>"$work/out" 2>"$work/err" &&
		"$check" "$work/tsc.json" >"$work/tsc.acts" 2>"$work/err" ||
		fail "tsc: $(cat "$work/err")"
	grep -q '"time_unit": *"tsc"' "$work/tsc.json" &&
		grep -q '"displayTimeUnit": *"ns"' "$work/tsc.json" ||
		fail "tsc: the timeline is not in TSC ticks"
	for t in $(tids "$work/tsc.ptrr"); do
		compare_calls tsc "$t"
	done
	last=$(awk '$3 > m { m = $3 } END { print m + 0 }' "$work/tsc.acts")
	grep -o '"ts": *[0-9.]*' "$work/tsc.json" | tr -d '" ' |
		cut -d: -f2 | awk -v n="$last" '
			$1 > m { m = $1 }
			END { exit !(n > 0 && m * 1000 > 100 * n) }' ||
		fail "tsc: the timeline spans no more ticks than its $last" \
		     "instructions"
fi

# The picture: Chromium draws the SVG of tests/progs/timeline, tesseract
# reads it; the names of its functions must be there.
skip=0
draw_and_read() {
	for tool in chromium:chromium tesseract:tesseract-ocr; do
		cmd=${tool%%:*} pkg=${tool#*:}
		if ! command -v "$cmd" >/dev/null 2>&1; then
			if dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null |
				grep -q "install ok installed"; then
				fail "$pkg is installed but $cmd is not on PATH"
			else
				echo "SKIP: $cmd not installed (Debian package $pkg;" \
					"./quickstart test installs it)"
				skip=1
			fi
			return
		fi
	done
	h=$(sed -n 's/.*<svg [^>]* height="\([0-9]*\)".*/\1/p' "$work/timeline.svg")
	timeout 120 chromium --headless --disable-gpu --no-sandbox \
		--hide-scrollbars --user-data-dir="$work/chromium" \
		--force-device-scale-factor=2 --window-size="1200,$h" \
		--screenshot="$work/timeline.png" "file://$work/timeline.svg" \
		>"$work/chromium.log" 2>&1
	[ -s "$work/timeline.png" ] ||
		{ fail "chromium drew no screenshot: $(tail -3 "$work/chromium.log")"
		  return; }
	# One block of uniform text (--psm 6) reads the rows of a flame chart.
	tesseract "$work/timeline.png" - --psm 6 2>/dev/null >"$work/ocr.txt" ||
		{ fail "tesseract failed on the screenshot"; return; }
	tr -cd 'a-zA-Z0-9\n' <"$work/ocr.txt" | tr 'A-Z' 'a-z' >"$work/ocr.words"
	for name in main parse_records compute_checksum render_summary; do
		grep -q "$(echo "$name" | tr -d _)" "$work/ocr.words" ||
			fail "OCR of the timeline does not show $name:" \
				"$(tr '\n' ' ' <"$work/ocr.txt")"
	done
}
draw_and_read

# Bad input: one line, exit 2, no file written, an old file kept.
echo old >"$work/old.json"
expect_exit 2 '^ptrr: .*missing\.ptrr' "$ptrr" export \
	--perfetto="$work/old.json" --svg="$work/new.svg" "$work/missing.ptrr"
[ "$(grep -vc '^warning: ' "$work/err")" -eq 1 ] ||
	fail "missing bundle: not a one-line message"
[ "$(cat "$work/old.json")" = old ] && [ ! -e "$work/new.svg" ] ||
	fail "missing bundle: a file was written"
expect_exit 2 "^ptrr: cannot write $work/no/such/dir/t.json: No such file" \
	"$ptrr" export --perfetto="$work/no/such/dir/t.json" \
	"$work/recursion.ptrr"
mkdir -p "$work/isdir.svg"
expect_exit 2 "^ptrr: cannot write $work/isdir.svg: Is a directory" \
	"$ptrr" export --svg="$work/isdir.svg" "$work/recursion.ptrr"
[ "$(grep -vc '^warning: ' "$work/err")" -eq 1 ] ||
	fail "unwritable FILE: not a one-line message"
ls "$work" | grep -q '\.[A-Za-z0-9]\{6\}$' &&
	fail "a temporary file was left: $(ls "$work" | grep '\.[A-Za-z0-9]\{6\}$')"
expect_exit 1 'usage: ptrr export' "$ptrr" export --perfetto= \
	"$work/recursion.ptrr"
expect_exit 1 'missing BUNDLE' "$ptrr" export --svg="$work/x.svg"
"$ptrr" --help | grep -q -- '--perfetto=FILE.*--svg=FILE' ||
	fail "ptrr --help does not list --perfetto and --svg"

finish || exit 1
[ "$skip" -eq 0 ] || exit 77
