# SPDX-License-Identifier: MIT
"""What several bench scripts share: a daemon of their own, a process's RSS, a report's output."""

import os
import subprocess
import time


def start_memleakd(build, workdir, config='', stderr=None, timeout=30):
    """memleakd from build, with its socket in workdir and config's lines added to its file:
    (its Popen, its socket) once the socket is there. Its log goes to workdir/memleakd.log
    unless stderr says otherwise."""
    sock = os.path.join(workdir, 'memleakd.sock')
    conf = os.path.join(workdir, 'memleakd.conf')
    with open(conf, 'w') as f:
        # no pins (a directory off bpffs): a bench's daemon leaves nothing for the next to adopt
        f.write(f'socket_path = {sock}\nstate_directory = {workdir}/state\n'
                f'bpf_pin_directory = {workdir}/no-pins\n{config}')
    if stderr is None:
        stderr = open(os.path.join(workdir, 'memleakd.log'), 'w')
    daemon = subprocess.Popen([os.path.join(build, 'daemon', 'memleakd'), '--config', conf, '--socket', sock],
                              stderr=stderr)
    deadline = time.monotonic() + timeout
    while not os.path.exists(sock):
        if time.monotonic() > deadline or daemon.poll() is not None:
            daemon.kill()
            raise RuntimeError(f'memleakd did not listen on {sock} (see {workdir}/memleakd.log)')
        time.sleep(0.1)
    return daemon, sock


def rss_mib(pid):
    """VmRSS of pid in MiB, or None once it is gone."""
    try:
        with open(f'/proc/{pid}/status') as f:
            for line in f:
                if line.startswith('VmRSS:'):
                    return int(line.split()[1]) / 1024
    except FileNotFoundError:
        pass
    return None


def print_and_write(text, path=None):
    """A bench's report: printed, and written to path if one was given (--output)."""
    print(text)
    if path:
        with open(path, 'w') as f:
            f.write(text)
