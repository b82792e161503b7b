#!/bin/sh
# The server's work for the first reverse-stepi of a live QEMU session,
# counted in instructions by callgrind (not timed: the count does not
# depend on the machine's load), for one or more builds side by side
# (docs/performance.md, "The first reverse step's value recovery"):
# bench/progs/mixed ROUNDS under `ptrr gdb --backend=qemu
# --record-from-start`, break exit, continue, then reverse-stepi with
# the server's instrumentation on (callgrind_control -i on/off around
# it), as in bench/run-live-qemu.sh.  gdb's reads while it prints the
# new frame are what costs: value recovery's window (replay/forward.c).
# Each build's own ptrr runs the same copy of the program from the same
# directory with the same environment, so the stack (and what gdb reads
# there) is the same.
#
# usage: run-first-step-cost.sh [--rounds N] BUILDDIR...
set -eu

rounds=2000
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) rounds=$2; shift 2 ;;
	-*) sed -n '/^# usage:/s/^# //p' "$0" >&2; exit 1 ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || { sed -n '/^# usage:/s/^# //p' "$0" >&2; exit 1; }
for t in valgrind callgrind_control callgrind_annotate qemu-x86_64 gdb; do
	command -v "$t" >/dev/null ||
		{ echo "run-first-step-cost.sh: no $t (apt-get install" \
		  "valgrind qemu-user gdb)" >&2; exit 2; }
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cp "$1/bench/progs/mixed" "$out/mixed"
# gdb, with the server's command put under callgrind (instrumentation
# off until callgrind_control turns it on).
cat >"$out/gdb" <<'WRAP'
#!/bin/sh
n=$#
while [ "$n" -gt 0 ]; do
	a=$1
	shift
	case $a in
	*"'serve' '--stdio'"*)
		a=$(printf '%s' "$a" | sed "s#| #| valgrind --tool=callgrind --separate-threads=yes --instr-atstart=no --callgrind-out-file=$CGOUT #") ;;
	esac
	set -- "$@" "$a"
	n=$((n - 1))
done
exec gdb "$@"
WRAP
chmod +x "$out/gdb"

echo "| build | instructions of the server's main thread | of them, value recovery's window (recover_window) |"
echo "|---|---|---|"
for b in "$@"; do
	ptrr=$(realpath "$b/ptrr")
	rm -f "$out"/cg*
	(cd "$out" && env -i PATH=/usr/bin:/bin HOME="$HOME" \
		CGOUT="$out/cg" PTRR_GDB="$out/gdb" "$ptrr" gdb \
		--backend=qemu --record-from-start --batch \
		-ex 'set breakpoint pending on' -ex 'break exit' \
		-ex continue -ex 'shell callgrind_control -i on >/dev/null' \
		-ex reverse-stepi \
		-ex 'shell callgrind_control -i off >/dev/null' \
		-- ./mixed "$rounds" >"$out/log" 2>&1) ||
		{ echo "run-first-step-cost.sh: the session with $b failed:" >&2
		  tail -n 5 "$out/log" >&2; exit 1; }
	# The thread that answers gdb: the one with rsp_server_run.
	main=$(for f in "$out"/cg-*; do
		callgrind_annotate --inclusive=yes "$f" 2>/dev/null |
			grep -q 'rsp_server_run' && echo "$f"; done | head -n 1)
	[ -n "$main" ] || { echo "run-first-step-cost.sh: no counts" >&2; exit 1; }
	callgrind_annotate --inclusive=yes "$main" 2>/dev/null | awk -v b="$b" '
		/PROGRAM TOTALS/ { total = $1 }
		/recover_window \[/ && !win { win = $1 }
		END { printf "| %s | %s | %s |\n", b, total,
			win ? win : "0" }'
done
