#!/bin/sh
# make fuzz: runs each libFuzzer harness named (serve, bundle, pt, index) for
# $FUZZ_TIME seconds, in turn, on its corpus in fuzz/NAME, with the
# options in $FUZZ_FLAGS (e.g. -runs=10000000).  Run from the build
# directory of configure --enable-fuzz; $1 is the source directory.
# The corpora start from a recording of tests/progs/crash (the traces,
# the bundle) and the inputs kept in tests/fuzz/NAME/; inputs that crash
# a harness are written to fuzz/NAME-crash-*.
set -u
srcdir=$1
shift
dir=$PWD/fuzz
mkdir -p "$dir" || exit 1
if ! [ -f "$dir/crash.ptrr/manifest.json" ]; then
	./ptrr record --backend=soft -o "$dir/crash.ptrr" tests/progs/crash ||
		exit 1
fi
PTRR_FUZZ_BUNDLE=$dir/crash.ptrr
export PTRR_FUZZ_BUNDLE
status=0
for name in "$@"; do
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
	# shellcheck disable=SC2086
	"tests/fuzz/fuzz-$name" -max_total_time="$FUZZ_TIME" \
		-max_len="$max_len" -timeout=10 -rss_limit_mb=1024 \
		-artifact_prefix="$dir/$name-" -print_final_stats=1 \
		$extra $FUZZ_FLAGS "$corpus" || status=1
done
exit $status
