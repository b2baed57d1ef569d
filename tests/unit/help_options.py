# SPDX-License-Identifier: GPL-2.0-only
# What memleakctl's and memleakd's --help say: the commands and each one's options, so that the
# man pages and the shell completions can be held to them (check-man-pages.py,
# check-completions.py).
import re
import subprocess

# An option's own line: "  -p --pid PID   ...", "     --mmap   ...", "  -c, --config FILE ...".
# Its description's continuation lines are indented further.
OPTION_LINE = re.compile(r"^ {1,6}(?:(-[A-Za-z0-9]),?\s+)?(--[a-z][a-z0-9-]*)")


def run_help(exe, *args):
    out = subprocess.run([exe, *args, "--help"], capture_output=True, text=True, timeout=10)
    if out.returncode != 0:
        raise SystemExit(f"{exe} {' '.join(args)} --help exited {out.returncode}: {out.stderr}")
    return out.stdout


def options_of(help_text):
    """The options a help text defines, as a set of '-x' and '--long' strings."""
    options = set()
    for line in help_text.splitlines():
        m = OPTION_LINE.match(line)
        if m:
            options.update(o for o in m.groups() if o)
    return options


def commands_of(main_help):
    """memleakctl's commands, and the usage lines under each, from 'memleakctl --help'."""
    commands = {}
    section = None
    current = None
    for line in main_help.splitlines():
        if re.match(r"^\S.*:$", line):
            section = line[:-1]
            current = None
            continue
        if section != "Commands":
            continue
        m = re.match(r"^  ([a-z]+)\b(.*)", line)
        if m:
            current = m.group(1)
            commands.setdefault(current, "")
            commands[current] += m.group(2) + "\n"
        elif current and re.match(r"^ {3,12}\[", line):   # a usage line carried on
            commands[current] += line + "\n"
        elif current and line.strip() and not line.startswith(" " * 13):
            current = None
    return commands


def main_options(main_help):
    """The global options: the 'Options:' section of 'memleakctl --help' (or all of memleakd's)."""
    text = main_help.split("\nOptions:\n", 1)[1] if "\nOptions:\n" in main_help else main_help
    return options_of(text)


def long_options_in(text):
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", text))
