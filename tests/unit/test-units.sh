#!/bin/sh
# Check the generated memleakd.service and memleakd.socket with `systemd-analyze verify`, which
# exits 0 even when it warns: any output at all fails the test.
# Usage: test-units.sh BUILT_SERVICE SOCKET
set -eu

service=$1
socket=$2

dir=$(mktemp -d "${TMPDIR:-/tmp}/test-units.XXXXXX")
trap 'rm -rf "$dir"' EXIT

# The installed ExecStart path need not exist yet; verify checks that it does.
grep -q '^ExecStart=/.*/memleakd$' "$service" || {
        echo "no ExecStart=<absolute path>/memleakd in $service" >&2
        exit 1
}
sed 's|^ExecStart=.*|ExecStart=/bin/true|' "$service" >"$dir/memleakd.service"
cp "$socket" "$dir/memleakd.socket"

# Nothing left unsubstituted.
if grep -n '@[a-z_]*@' "$dir/memleakd.service"; then
        echo "unsubstituted @variables@ in $service" >&2
        exit 1
fi

out=$(cd "$dir" && systemd-analyze verify \
        "$dir/memleakd.service" "$dir/memleakd.socket" 2>&1) || rc=$?
if [ "${rc:-0}" -ne 0 ] || [ -n "$out" ]; then
        echo "systemd-analyze verify (exit ${rc:-0}) said:" >&2
        printf '%s\n' "$out" >&2
        exit 1
fi
echo "systemd-analyze verify: no complaints about memleakd.service and memleakd.socket"
