#!/usr/bin/env bash
# Install the dependencies, build with -Werror, and run every test (unit and integration), then
# run them again against an ASan+UBSan build: a leak or undefined behaviour in memleakd or
# memleakctl fails the run (the daemon must exit 0 after SIGTERM, which LeakSanitizer denies).
# Last, the fuzz targets (tests/fuzz/) for a bounded run each, in a clang tree.
#
# tests/run.sh --quick: the tier to run before a commit (about a minute): the plain build, the
# unit tests and a few integration suites that touch every component (attach, report, verdicts,
# dlopen, bad requests). CI and a bare tests/run.sh run everything.
set -uo pipefail
cd "$(dirname "$0")/.."
quick=false
case "${1:-}" in
--quick) quick=true ;;
"") ;;
*) echo "usage: tests/run.sh [--quick]" >&2; exit 2 ;;
esac
[ "$(id -u)" -eq 0 ] || { echo "tests/run.sh: run me as root (the integration tests load BPF)" >&2; exit 1; }
scripts/install-deps.sh || exit 1

summary() {
        python3 - "$@" <<'PY'
import json, sys
passed = failed = 0
for path in sys.argv[1:]:
    with open(path) as f:
        for line in f:
            r = json.loads(line)["result"]
            if r in ("OK", "EXPECTEDFAIL"):
                passed += 1
            else:
                failed += 1
print(f"{passed} passed, {failed} failed")
PY
}

# Integration tests that start their own daemons run side by side, as many as there are cores
# (at most four): those that must run alone say so in tests/integration/meson.build.
jobs=$(nproc)
[ "$jobs" -le 4 ] || jobs=4

run_suite() {  # builddir "meson test suite options" [meson setup options...]
        local builddir=$1 suites=$2; shift 2
        if [ ! -f "$builddir/build.ninja" ]; then
                meson setup "$builddir" --sysconfdir=/etc -Dwerror=true "$@" || return 1
        fi
        ninja -C "$builddir" || return 1
        meson test -C "$builddir" --print-errorlogs --num-processes "$jobs" $suites
}

plain=${BUILDDIR:-build-test}
asan=${BUILDDIR:-build-test}-asan
status=0
if $quick; then
        run_suite "$plain" "--suite unit --suite quick" || status=1
        summary "$plain/meson-logs/testlog.json"
        exit $status
fi
run_suite "$plain" "" || status=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=23
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# The e2e suite installs memleakd into a container without the sanitizer runtime: it runs once,
# above, against the plain build.
run_suite "$asan" "--suite unit --suite integration --suite hostile" -Db_sanitize=address,undefined -Db_lundef=false || status=1
# The fuzz targets (tests/fuzz/), each for a bounded run: libFuzzer needs clang, so a tree of
# their own, with ASan and UBSan; only the libraries they link are what they test.
fuzz=${BUILDDIR:-build-test}-fuzz
CC=clang run_suite "$fuzz" "--suite fuzz" -Dfuzz=true -Dtests=false -Dbench=false -Dman=disabled \
        -Db_sanitize=address,undefined -Db_lundef=false || status=1
logs=("$plain/meson-logs/testlog.json")
for l in "$asan/meson-logs/testlog.json" "$fuzz/meson-logs/testlog.json"; do
        [ -f "$l" ] && logs+=("$l")
done
summary "${logs[@]}"
exit $status
