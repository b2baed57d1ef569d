#!/bin/sh
# Check the generated memleakd.service and memleakd.socket with `systemd-analyze verify`, which
# exits 0 even when it warns: any output at all fails the test.
# Usage: test-units.sh BUILT_SERVICE SOCKET [BUILT_MAN_PAGE...]
# verify runs `man` on each Documentation=man:PAGE(N): it finds the pages this build made (given
# after the units); without them (-Dman=disabled) the man: links are not checked.
set -eu

service=$1
socket=$2
shift 2

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

# Every other program the service runs must be on every Debian system, a minimal one included:
# from a package marked Essential (the shell, coreutils), not one a system may lack (procps's kill).
status=0
for prog in $(sed -n 's/^Exec[A-Za-z]*=[-@:+!]*\([^ ]*\).*/\1/p' "$dir/memleakd.service"); do
        [ "$prog" = /bin/true ] && continue      # ExecStart, replaced above
        pkg=$(dpkg-query -S "$prog" 2>/dev/null | grep -v '^diversion by' | sed -n '1s/: .*//p')
        essential=$(dpkg-query -W -f='${Essential}' "$pkg" 2>/dev/null || true)
        if [ "$essential" != yes ]; then
                echo "memleakd.service runs $prog, which comes from ${pkg:-no package}, not an Essential one" >&2
                status=1
        fi
done
[ $status -eq 0 ] || exit 1

man=--man=no
if [ $# -gt 0 ]; then
        man=--man=yes
        for page in "$@"; do
                section=${page##*.}
                mkdir -p "$dir/man/man$section"
                ln -s "$(realpath "$page")" "$dir/man/man$section/"
        done
fi
out=$(cd "$dir" && MANPATH="$dir/man" systemd-analyze verify $man \
        "$dir/memleakd.service" "$dir/memleakd.socket" 2>&1) || rc=$?
if [ "${rc:-0}" -ne 0 ] || [ -n "$out" ]; then
        echo "systemd-analyze verify (exit ${rc:-0}) said:" >&2
        printf '%s\n' "$out" >&2
        exit 1
fi
echo "systemd-analyze verify: no complaints about memleakd.service and memleakd.socket"
