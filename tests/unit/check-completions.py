#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
# memleakctl's shell completions offer exactly its commands and each command's options, as
# 'memleakctl --help' and 'memleakctl COMMAND --help' list them: bash's by running the completion
# function (with bash-completion loaded, as an interactive shell has it), zsh's from its spec.
#   check-completions.py MEMLEAKCTL BASH_COMPLETION_FILE ZSH_COMPLETION_FILE BASH_COMPLETION_LIB
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from help_options import commands_of, main_options, options_of, run_help  # noqa: E402

memleakctl, bash_file, zsh_file, bash_completion_lib = sys.argv[1:5]
errors = []

main_help = run_help(memleakctl)
commands = sorted(commands_of(main_help))
options = {c: options_of(run_help(memleakctl, c)) for c in commands}
if len(commands) < 2:
    errors.append(f"memleakctl --help lists too few commands: {commands}")


def compare(what, expected, offered):
    for o in sorted(expected - offered):
        errors.append(f"{what}: {o} is in --help but not offered")
    for o in sorted(offered - expected):
        errors.append(f"{what}: {o} is offered but not in --help")


# bash: load it, then complete 'memleakctl <TAB>', 'memleakctl CMD -<TAB>', and the global options.
def bash_complete(words):
    script = f"""
source {bash_completion_lib!r} || exit 3
source {bash_file!r} || exit 4
complete -p memleakctl | grep -qx 'complete -F _memleakctl memleakctl' || exit 5
COMP_WORDS=({' '.join(repr(w) for w in words)})
COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
COMP_LINE="${{COMP_WORDS[*]}}"
COMP_POINT=${{#COMP_LINE}}
_memleakctl
printf '%s\\n' "${{COMPREPLY[@]}}"
"""
    out = subprocess.run(["bash", "--norc", "--noprofile", "-c", script],
                         capture_output=True, text=True, timeout=20)
    if out.returncode != 0 or out.stderr:
        errors.append(f"bash completion of {words}: exit {out.returncode}: {out.stderr.strip()}")
    return set(out.stdout.split())


compare("bash: memleakctl <TAB>", set(commands), bash_complete(["memleakctl", ""]))
compare("bash: memleakctl -<TAB>", main_options(main_help), bash_complete(["memleakctl", "-"]))
for c in commands:
    offered = bash_complete(["memleakctl", "--socket", "/run/x.sock", c, "-"]) - {"--"}
    compare(f"bash: memleakctl {c} -<TAB>", options[c], offered)
compare("bash: memleakctl attach --unwind <TAB>", {"auto", "dwarf", "fp"},
        bash_complete(["memleakctl", "attach", "--unwind", ""]))
compare("bash: memleakctl top --sort <TAB>", {"growth", "bytes", "count"},
        bash_complete(["memleakctl", "top", "--sort", ""]))

# zsh: the file parses, lists every command, and each command's branch of the case offers its
# options (the spec's variables expanded, the descriptions and exclusion lists left out).
out = subprocess.run(["zsh", "-n", zsh_file], capture_output=True, text=True, timeout=20)
if out.returncode != 0:
    errors.append(f"zsh -n {zsh_file}: {out.stderr.strip()}")
with open(zsh_file, encoding="utf-8") as f:
    zsh = f.read()
variables = dict(re.findall(r"^\s*([a-z_]+)=\((.*)\)$", zsh, re.M))
listed = re.search(r"^commands=\((.*?)^\)", zsh, re.M | re.S)
compare("zsh: commands", set(commands),
        set(re.findall(r"'([a-z]+):", listed.group(1))) if listed else set())
for c in commands:
    m = re.search(rf"^\s+{c}\)\n(.*?);;", zsh, re.M | re.S)
    if not m:
        errors.append(f"zsh: no branch for the command {c}")
        continue
    spec = re.sub(r"\$([a-z_]+)", lambda v: variables.get(v.group(1), ""), m.group(1))
    spec = re.sub(r"\[[^\]]*\]", "", spec)          # descriptions
    spec = re.sub(r"'\([^)]*\)", "'", spec)         # exclusion lists
    spec = re.sub(r":[^'\n]*'", "'", spec)           # actions (':file:_files -g ...')
    offered = set(re.findall(r"(?<![\w-])(--?[A-Za-z][a-z0-9-]*)", spec))
    compare(f"zsh: memleakctl {c}", options[c], offered)

for e in errors:
    print(e)
print(f"{len(commands)} commands checked in bash and zsh; {len(errors)} problems")
sys.exit(1 if errors else 0)
