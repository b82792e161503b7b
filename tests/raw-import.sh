#!/bin/sh
# `ptrr import --raw=TRACE --image=FILE@ADDR[,OFFSET,SIZE]... [--cpu=F/M/S]`
# (docs/manual.md): a raw Intel PT stream and the code images it ran
# decode in ptrr as in a plain libipt decode of the same bytes
# (tests/pt-insns, libipt's instruction decoder alone): the same
# instructions, and on a corrupted stream the same instructions up to
# the same first gap.  Bad input: one line, exit status 1 or 2, no
# bundle.
set -u
. "$top_srcdir/tests/lib.sh"
work_dir raw-import
cd "$top_builddir" || exit 99

# images BUNDLE: FILE@ADDR,OFFSET,SIZE for each module and each copy of
# code of BUNDLE's manifest, one a line.
images() {
	awk -v dir="$1" '
		/^  "modules": \[/ { s = "m" } /^  "code": \[/ { s = "c" }
		/^  \]/ { s = "" }
		s && /"path":/ { p = $2; gsub(/[",]/, "", p) }
		s && /"file":/ { f = $2; gsub(/[",]/, "", f) }
		s && /"start":/ { st = $2; gsub(/[",]/, "", st) }
		s && /"size":/ { sz = $2; gsub(/[",]/, "", sz) }
		s && /"offset":/ { o = $2; gsub(/[",]/, "", o) }
		s && /^    }/ {
			if (s == "c") print dir "/" f "@" st ",0," sz
			else print p "@" st "," o "," sz
			p = f = st = sz = o = ""
		}' "$1/manifest.json"
}

# check_raw NAME TRACE BUNDLE: imports TRACE with BUNDLE's images and
# compares ptrr's history with libipt's decode, up to the first gap.
check_raw() {
	set -- "$1" "$2" "$3" $(images "$3" | sed 's/^/--image=/')
	name=$1 trace=$2
	shift 3
	"$ptrr" import --raw="$trace" "$@" --cpu=6/122/1 \
		-o "$work/$name.raw.ptrr" >"$work/$name.import" 2>&1 ||
		{ fail "$name: import: $(cat "$work/$name.import")"; return; }
	"$ptrr" insn-history --raw "$work/$name.raw.ptrr" |
		awk '{ print $2 } $2 == "[gap]" { exit }' >"$work/got"
	tests/pt-insns "$trace" $(printf '%s\n' "$@" | sed 's/^--image=//') |
		awk '{ print } $1 == "[gap]" { exit }' >"$work/want"
	[ -s "$work/want" ] || { fail "$name: libipt decodes nothing"; return; }
	# At a gap, libipt's instruction decoder reports the error in place
	# of the branch whose packet was lost, ptrr's block decoder lists
	# the branch (it ran: its address is known) and then the gap.
	sed '$d' "$work/want" >"$work/want.head"
	sed '$d' "$work/got" | sed '$d' >"$work/got.head"
	if [ "$(tail -n 1 "$work/want")" = "[gap]" ] &&
	   [ "$(tail -n 1 "$work/got")" = "[gap]" ] &&
	   cmp -s "$work/want.head" "$work/got.head"; then
		cp "$work/got" "$work/want"
	fi
	cmp -s "$work/want" "$work/got" ||
		fail "$name: ptrr and libipt differ (libipt < > ptrr):" \
			"$(diff "$work/want" "$work/got" | head -n 4)"
}

p=tests/progs
record exceptions -- $p/exceptions || exit 1
t=$(ls "$work"/exceptions.ptrr/threads/*.pt)
check_raw exceptions "$t" "$work/exceptions.ptrr"
[ "$(wc -l <"$work/got")" -gt 50000 ] ||
	fail "exceptions: only $(wc -l <"$work/got") instructions"
"$ptrr" info "$work/exceptions.raw.ptrr" >"$work/info.out" 2>&1
has info '^CPU: GenuineIntel family 6 model 122 stepping 1$'
has info '^Note: imported from the raw trace .*: no registers or memory'

# A corrupted stream: the same instructions up to the same gap.
size=$(wc -c <"$t")
cp "$t" "$work/bad.pt"
printf '\231\231\231\231' |
	dd of="$work/bad.pt" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
check_raw bad "$work/bad.pt" "$work/exceptions.ptrr"
tail -n 1 "$work/got" | grep -qx '\[gap\]' || fail "bad: no gap"

# Threads of a static program, each on its own.
record static -- $p/threads_static || exit 1
for t in "$work"/static.ptrr/threads/*.pt; do
	check_raw static "$t" "$work/static.ptrr"
	rm -rf "$work/static.raw.ptrr"
done

# Bad input.
img="--image=$p/recursion@0x555555554000"
expect_exit 2 "cannot read .*missing.pt: No such file" \
	"$ptrr" import --raw="$work/missing.pt" "$img" -o "$work/x.ptrr"
printf 'no trace here\n' >"$work/text.pt"
expect_exit 2 "text.pt holds no PSB packet" \
	"$ptrr" import --raw="$work/text.pt" "$img" -o "$work/x.ptrr"
expect_exit 2 "cannot read the image .*nothere: No such file" \
	"$ptrr" import --raw="$t" --image="$work/nothere@0x1000" -o "$work/x.ptrr"
expect_exit 2 "do not fit in it" \
	"$ptrr" import --raw="$t" "$img,0x100000000,0x10" -o "$work/x.ptrr"
[ ! -e "$work/x.ptrr" ] || fail "a failed import left $work/x.ptrr"
expect_exit 1 "bad --image=FILE@ADDR" \
	"$ptrr" import --raw="$t" --image=file-without-address -o "$work/x.ptrr"
expect_exit 1 "bad --cpu=FAMILY/MODEL/STEPPING" \
	"$ptrr" import --raw="$t" "$img" --cpu=6 -o "$work/x.ptrr"
expect_exit 1 "--raw needs --image" \
	"$ptrr" import --raw="$t" -o "$work/x.ptrr"
expect_exit 1 "--image and --cpu go with --raw" \
	"$ptrr" import --perf="$work/x.data" "$img" -o "$work/x.ptrr"
expect_exit 1 "import one of --lldb, --perf and --raw" \
	"$ptrr" import --perf="$work/x.data" --raw="$t" "$img" -o "$work/x.ptrr"
"$ptrr" --help | grep -q -- '--raw=TRACE --image=FILE@ADDR\[,OFFSET,SIZE\]\.\.\. \[--cpu=F/M/S\]) -o BUNDLE$' ||
	fail "ptrr --help does not list import --raw"

finish
