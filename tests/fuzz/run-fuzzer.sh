#!/bin/sh
# One fuzz target's bounded run for meson test: every kept regression input once, then fuzzing
# from the seed corpus for at most RUNS inputs or SECONDS. The seed corpus is only read: what
# libFuzzer adds goes to a scratch directory, a crash to ARTIFACTS (kept for a regression).
# usage: run-fuzzer.sh FUZZER CORPUS REGRESSIONS ARTIFACTS RUNS SECONDS [DICT]
set -eu
fuzzer=$1 corpus=$2 regressions=$3 artifacts=$4 runs=$5 seconds=$6 dict=${7:-}

# UB is a crash; so is a leak (LeakSanitizer runs after each input).
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export DEBUGINFOD_URLS=

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$artifacts"

set --
if [ -d "$regressions" ]; then
        for f in "$regressions"/*; do
                [ -f "$f" ] && set -- "$@" "$f"
        done
fi
if [ $# -gt 0 ]; then
        echo "== $# regression input(s) from $regressions"
        "$fuzzer" -artifact_prefix="$artifacts/" "$@"
fi

set -- -runs="$runs" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 \
        -artifact_prefix="$artifacts/" -print_final_stats=1
[ -n "$dict" ] && set -- "$@" -dict="$dict"
echo "== fuzzing from $corpus: at most $runs inputs or ${seconds}s"
if ! "$fuzzer" "$@" "$scratch" "$corpus"; then
        echo "A crash is kept in $artifacts/: fix it, then add it to $regressions/" >&2
        exit 1
fi
