#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
# The man pages cannot drift from the code: every command and option memleakctl's and memleakd's
# --help list has an entry in memleakctl(1) / memleakd(8), and no entry names one they lack;
# every key of daemon/core/config.c is in memleakd.conf(5) with conf/memleakd.conf's default;
# memleakctl --help's line for each command names that command's options.
#   check-man-pages.py MEMLEAKCTL MEMLEAKD SOURCE_ROOT
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from help_options import commands_of, long_options_in, main_options, options_of, run_help  # noqa: E402

memleakctl, memleakd, root = sys.argv[1:4]
errors = []


def read(*path):
    with open(os.path.join(root, *path), encoding="utf-8") as f:
        return f.read()


def sections(scd, level):
    """An scdoc page split at its '# ' (level 1) or '## ' (level 2) headings: {title: text}."""
    out = {}
    title = None
    for line in scd.splitlines():
        m = re.match(r"^(#+) (.*)", line)
        if m and len(m.group(1)) <= level:
            title = m.group(2).strip() if len(m.group(1)) == level else None
            if title is not None:
                out[title] = ""
            continue
        if title is not None:
            out[title] += line + "\n"
    return out


def entries(text):
    """The options an scdoc section documents: lines '*-x*, *--long* ...' or '*--long* ...'."""
    found = set()
    for line in text.splitlines():
        m = re.match(r"^\*(-[A-Za-z0-9])\*, \*(--[a-z][a-z0-9-]*)\*|^\*(--[a-z][a-z0-9-]*)\*", line)
        if m:
            found.update(o for o in m.groups() if o)
    return found


def compare(what, helped, documented):
    for o in sorted(helped - documented):
        errors.append(f"{what}: {o} is in --help but has no entry in the page")
    for o in sorted(documented - helped):
        errors.append(f"{what}: the page has an entry for {o}, which --help does not list")


# memleakctl(1)
ctl_page = read("docs", "man", "memleakctl.1.scd")
main_help = run_help(memleakctl)
commands = commands_of(main_help)
if not commands:
    errors.append("memleakctl --help lists no commands")
top = sections(ctl_page, 1)
compare("memleakctl global options", main_options(main_help), entries(top.get("GLOBAL OPTIONS", "")))
per_command = sections(top.get("COMMANDS", ""), 2)
for name in sorted(set(per_command) - set(commands)):
    errors.append(f"memleakctl(1) documents a command '{name}' that memleakctl --help does not list")
for name, usage in commands.items():
    if name not in per_command:
        errors.append(f"memleakctl(1) has no section for the command '{name}'")
        continue
    # -h/--help: once, in the SYNOPSIS ("memleakctl COMMAND --help").
    own = options_of(run_help(memleakctl, name)) - {"-h", "--help"}
    compare(f"memleakctl {name}", own, entries(per_command[name]))
    # The summary in 'memleakctl --help' names the same options as the command's own help.
    own_long = {o for o in own if o.startswith("--")}
    for o in sorted(own_long - long_options_in(usage)):
        errors.append(f"memleakctl --help: the line for '{name}' lacks {o}")
    for o in sorted(long_options_in(usage) - own_long):
        errors.append(f"memleakctl --help: the line for '{name}' names {o}, which '{name} --help' lacks")

# memleakd(8)
d_page = sections(read("docs", "man", "memleakd.8.scd"), 1)
compare("memleakd", main_options(run_help(memleakd)), entries(d_page.get("OPTIONS", "")))

# memleakd.conf(5): the keys config.c parses, each with the default conf/memleakd.conf shows.
config_c = read("daemon", "core", "config.c")
table = config_c.split("config_keys[] = {", 1)[1].split("\n};", 1)[0]
parsed_keys = set(re.findall(r'\{\s*"([a-z_]+)",\s*KEY_', table))
conf_defaults = dict(re.findall(r"^#([a-z_]+) = ?(.*)$", read("conf", "memleakd.conf"), re.M))
if not parsed_keys:
    errors.append("found no keys in daemon/core/config.c's config_keys table")
for k in sorted(parsed_keys ^ set(conf_defaults)):
    errors.append(f"conf/memleakd.conf and daemon/core/config.c disagree on the key {k}")
conf_page = read("docs", "man", "memleakd.conf.5.scd")
blocks = {}
key = None
for line in conf_page.splitlines():
    m = re.match(r"^\*([a-z_]+) =\*", line)
    if m:
        key = m.group(1)
        blocks[key] = ""
    elif not line.startswith("\t") and line.strip():
        key = None
    if key:
        blocks[key] += line + "\n"
for k in sorted(parsed_keys - set(blocks)):
    errors.append(f"memleakd.conf(5) has no entry for the key {k}")
for k in sorted(set(blocks) - parsed_keys):
    errors.append(f"memleakd.conf(5) documents a key {k} that daemon/core/config.c does not parse")
for k, default in conf_defaults.items():
    if k not in blocks:
        continue
    expected = f"Default: *{default}*" if default else "Default: empty"
    if expected not in " ".join(blocks[k].split()):
        errors.append(f"memleakd.conf(5): {k}'s entry does not say '{expected}' (conf/memleakd.conf)")

for e in errors:
    print(e)
print(f"{len(commands)} commands, {len(parsed_keys)} configuration keys checked; {len(errors)} problems")
sys.exit(1 if errors else 0)
