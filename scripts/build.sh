#!/usr/bin/env bash
# Configure (once) and build memleakd into ./build.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f build/build.ninja ]; then
        meson setup build --prefix=/usr/local --sysconfdir=/etc -Dwerror=true "$@"
fi
ninja -C build
