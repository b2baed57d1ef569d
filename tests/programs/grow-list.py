# SPDX-License-Identifier: MIT
# A program nobody here wrote, doing what leaking services do: the CPython interpreter (Debian's,
# built without frame pointers) growing a list. tests/integration/test_unwind.py traces it; the
# list's buffer is one block realloc'ed as it grows, its stack deep in the interpreter.
# Protocol: print "ready", wait for a line, grow, print "done", wait for a line or EOF.
import sys

APPENDS = 200000

print('ready', flush=True)
sys.stdin.readline()
kept = []
for i in range(APPENDS):
    kept.append(i)
print('done', flush=True)
sys.stdin.readline()
