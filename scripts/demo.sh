#!/usr/bin/env bash
# Newcomer's first run: install, build, start memleakd, attach it to a leaking demo, show the report.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "demo.sh: run me as root (BPF needs it)" >&2; exit 1; }
scripts/install-deps.sh
scripts/build.sh
ctl=build/client/memleakctl

if [ "$(cat /proc/1/comm 2>/dev/null)" = systemd ]; then
        echo "== systemd is PID 1: installing and starting memleakd.service"
        meson install -C build --quiet
        systemctl daemon-reload
        systemctl start memleakd.socket memleakd.service
        ctl=/usr/local/bin/memleakctl
else
        echo "== systemd is not PID 1: starting memleakd in the background (log: /run/memleakd.log)"
        if ! $ctl status >/dev/null 2>&1; then
                nohup build/daemon/memleakd >/run/memleakd.log 2>&1 &
                for _ in $(seq 50); do $ctl status >/dev/null 2>&1 && break; sleep 0.1; done
        fi
fi

echo "== starting the demo program, which leaks from leak_session_buffer() and churns elsewhere"
build/demo/leaky-demo &
demo=$!
trap 'kill $demo 2>/dev/null || true' EXIT
sleep 0.5
$ctl attach --pid "$demo"
echo "== letting it run for 5 seconds"
sleep 5
$ctl report --top 5
$ctl html --pid "$demo" --output /tmp/memleakd-demo.html
echo "== the same as a page to open in a browser: /tmp/memleakd-demo.html (memleakctl html)"
