# SPDX-License-Identifier: MIT
# A service leaking without pause while memleakd attaches: the CPython interpreter (Debian's, built
# without frame pointers) keeps 600-byte bytearrays (malloc'ed: past pymalloc's 512 bytes), about
# ten between millisecond sleeps. tests/integration/test_unwind.py attaches to it mid-stride.
# Protocol: print "ready", leak until a line comes (looked for every ten blocks), print "done",
# wait for a line or EOF.
import select
import sys
import time

kept = []
print('ready', flush=True)
while not select.select([sys.stdin], [], [], 0)[0]:
    for _ in range(10):
        kept.append(bytearray(600))
    time.sleep(0.001)
sys.stdin.readline()
print('done', flush=True)
sys.stdin.readline()
