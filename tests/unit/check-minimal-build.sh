#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# A packager's build: with -Dtests=false -Dbench=false meson sets up memleakd and memleakctl
# without looking for any tool or library only the tests and benchmarks use. The same patterns
# must match this (full) build's log, so the check cannot pass by matching nothing.
#   check-minimal-build.sh SOURCE_ROOT FULL_BUILD_DIR
set -u
source_root=$1
full_build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# What the tests and benchmarks need, as meson's log or build.ninja names it.
test_only='rustc|musl-gcc|Program node|nodejs|C\+\+ compiler|-ltcmalloc|-ljemalloc|-lmimalloc|valgrind'

if ! meson setup "$tmp/build" "$source_root" -Dtests=false -Dbench=false >"$tmp/setup.log" 2>&1; then
        cat "$tmp/setup.log"
        echo "meson setup -Dtests=false -Dbench=false failed"
        exit 1
fi
status=0
for f in meson-logs/meson-log.txt build.ninja; do
        if grep -E "$test_only" "$tmp/build/$f" >"$tmp/found"; then
                echo "-Dtests=false -Dbench=false: $f still names test-only tools:"
                head -5 "$tmp/found"
                status=1
        fi
done
for t in daemon/memleakd client/memleakctl; do
        grep -q "^build $t:" "$tmp/build/build.ninja" || { echo "-Dtests=false: no target $t"; status=1; }
done
for p in rustc musl-gcc 'C\+\+ compiler' -ltcmalloc; do
        cat "$full_build/meson-logs/meson-log.txt" "$full_build/build.ninja" | grep -Eq -- "$p" ||
                { echo "the full build's log does not name $p: the check's patterns are stale"; status=1; }
done
[ $status -eq 0 ] && echo "-Dtests=false -Dbench=false: memleakd and memleakctl, none of the test-only tools"
exit $status
