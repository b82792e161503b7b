#!/bin/sh
# make fuzz: runs each libFuzzer harness named (serve, bundle, pt, index) for
# $FUZZ_TIME seconds, in turn, on its corpus in fuzz/NAME, with the
# options in $FUZZ_FLAGS (e.g. -runs=10000000).  Run from the build
# directory of configure --enable-fuzz; $1 is the source directory.
# The corpora start from a recording of tests/progs/crash (the traces,
# the bundle) and the inputs kept in tests/fuzz/NAME/; inputs that crash
# a harness are written to fuzz/NAME-crash-*.  The index harness has a
# recording of its own (fuzz/index.ptrr, below).
set -u
srcdir=$1
shift
dir=$PWD/fuzz
mkdir -p "$dir" || exit 1
if ! [ -f "$dir/crash.ptrr/manifest.json" ]; then
	./ptrr record --backend=soft -o "$dir/crash.ptrr" tests/progs/crash ||
		exit 1
fi
# The index harness reads the saved index of fnptr's last 8 KiB of trace,
# a PSB every 2 KiB, returns not compressed: four segments and about
# 6,000 call segments in 18,000 instructions.  Each input is used by
# walking and searching the history it gives, which on crash's 110,000
# instructions took a millisecond (1,200 inputs/s); here it is five times
# quicker, with the same parts of the file.
if ! [ -f "$dir/index.ptrr/manifest.json" ]; then
	./ptrr record --backend=soft --mode=snapshot --buffer-size=8K \
		--psb-period=2K --noretcomp -o "$dir/index.ptrr" \
		tests/progs/fnptr x || exit 1
fi
status=0
for name in "$@"; do
	PTRR_FUZZ_BUNDLE=$dir/crash.ptrr
	[ "$name" = index ] && PTRR_FUZZ_BUNDLE=$dir/index.ptrr
	export PTRR_FUZZ_BUNDLE
	case $name in
	serve) max_len=4096 extra="-dict=$srcdir/tests/fuzz/serve.dict" ;;
	bundle) max_len=4096 extra="-dict=$srcdir/tests/fuzz/bundle.dict" ;;
	pt) max_len=512 extra= ;;
	index) max_len=65536 extra= ;;
	*) echo "make fuzz: no harness $name (serve, bundle, pt, index)" >&2
	   exit 1 ;;
	esac
	corpus=$dir/$name
	if ! [ -d "$corpus" ]; then
		mkdir -p "$corpus" &&
		cp "$srcdir/tests/fuzz/$name"/* "$corpus"/ 2>/dev/null
		PTRR_FUZZ_SEEDS=$corpus "tests/fuzz/fuzz-$name" >/dev/null 2>&1
	fi
	echo "fuzz-$name: $FUZZ_TIME s on $corpus"
	# Freed memory is not given back to the system every second
	# (-purge_allocator_interval), and ASan does not fill each new
	# block with a pattern (max_malloc_fill_size).  With both, as by
	# default, fuzz-pt spent its time in page faults, madvise and memset:
	# 280 inputs/s on its corpus, against 3,000 to 3,300 with either or
	# both turned off (30 s each, the same corpus, 26 Nov 2026).
	# shellcheck disable=SC2086
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}max_malloc_fill_size=0 \
	"tests/fuzz/fuzz-$name" -max_total_time="$FUZZ_TIME" \
		-purge_allocator_interval=-1 \
		-max_len="$max_len" -timeout=10 -rss_limit_mb=1024 \
		-artifact_prefix="$dir/$name-" -print_final_stats=1 \
		$extra $FUZZ_FLAGS "$corpus" || status=1
done
exit $status
