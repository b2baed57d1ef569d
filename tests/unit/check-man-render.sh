#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Each man page the build made renders with man(1) without a warning, and has no @VARIABLE@ left
# that meson should have filled in.
#   check-man-render.sh PAGE...
status=0
for page in "$@"; do
        warnings=$(MANWIDTH=80 LC_ALL=C.UTF-8 man --warnings -E UTF-8 -l "$page" 2>&1 >/dev/null)
        rc=$?
        text=$(MANWIDTH=80 LC_ALL=C.UTF-8 man -E UTF-8 -l "$page" 2>/dev/null)
        if [ $rc -ne 0 ] || [ -n "$warnings" ]; then
                echo "$page: man exited $rc: $warnings"
                status=1
        elif ! printf '%s\n' "$text" | grep -q '^NAME'; then
                echo "$page: no NAME section in what man printed"
                status=1
        elif printf '%s\n' "$text" | grep -q '@[A-Z_]*@'; then
                echo "$page: unsubstituted: $(printf '%s\n' "$text" | grep '@[A-Z_]*@')"
                status=1
        else
                echo "$page: $(printf '%s\n' "$text" | wc -l) lines, no warnings"
        fi
done
exit $status
