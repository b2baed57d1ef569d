#!/usr/bin/env bash
# Install the dependencies, build with -Werror, and run every test (unit and integration).
set -uo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "tests/run.sh: run me as root (the integration tests load BPF)" >&2; exit 1; }
scripts/install-deps.sh || exit 1
builddir=${BUILDDIR:-build-test}
if [ ! -f "$builddir/build.ninja" ]; then
        meson setup "$builddir" -Dwerror=true || exit 1
fi
ninja -C "$builddir" || exit 1
meson test -C "$builddir" --print-errorlogs --num-processes 1
status=$?
python3 - "$builddir/meson-logs/testlog.json" <<'PY'
import json, sys
passed = failed = 0
with open(sys.argv[1]) as f:
    for line in f:
        r = json.loads(line)["result"]
        if r in ("OK", "EXPECTEDFAIL"):
            passed += 1
        else:
            failed += 1
print(f"{passed} passed, {failed} failed")
PY
exit $status
