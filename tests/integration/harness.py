# SPDX-License-Identifier: MIT
"""Shared pieces of the integration tests: a real memleakd, memleakctl, leaking programs, reports.

Paths come from the environment meson's test() sets: MEMLEAKD, MEMLEAKCTL, PROGRAMS_DIR and
SOURCE_ROOT. Every wait polls with short sleeps against a deadline.
"""

import ctypes
import hashlib
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest


def _path_from_env(name):
    value = os.environ.get(name)
    if not value:
        sys.exit(f'{name} is not set: run the integration tests through "meson test --suite integration"')
    return value


MEMLEAKD = _path_from_env('MEMLEAKD')
MEMLEAKCTL = _path_from_env('MEMLEAKCTL')
PROGRAMS_DIR = _path_from_env('PROGRAMS_DIR')
SOURCE_ROOT = _path_from_env('SOURCE_ROOT')

# Small maps keep the daemon quick to start (the stack table takes memory only for the stacks
# there are; a full one would be counted as lost.stack_table_full).
TEST_CONFIG = {
    'snapshot_interval_ms': 100,
    'ring_depth': 16,
    'max_targets': 8,
    'max_allocs': 65536,
    'max_stacks': 65536,
    'max_combined': 8192,
    'max_inflight': 4096,
}

DAEMON_START_TIMEOUT_S = 30
REPORT_TIMEOUT_S = 15
PROGRAM_TIMEOUT_S = 30
CTL_TIMEOUT_S = 30
UNLIMITED_TOP = 1000000             # MEMLEAK_MAX_TOP: every stack listed, none folded
RUN_TIMEOUT_S = 60                  # memleakctl run -- CMD, from start to report



def go_tool_pprof(workdir, profile, *args, timeout=120):
    """go tool pprof -symbolize=none ARGS PROFILE (Debian's golang-go), told not to symbolize
    anything itself, its caches and files in workdir: the CompletedProcess (text)."""
    home = os.path.join(workdir, 'go-home')
    os.makedirs(home, exist_ok=True)
    env = dict(os.environ, HOME=home, GOCACHE=os.path.join(home, 'cache'), PPROF_TMPDIR=home,
               GOFLAGS='', GOTOOLCHAIN='local')
    return subprocess.run(['go', 'tool', 'pprof', '-symbolize=none', *args, profile], capture_output=True,
                          text=True, env=env, timeout=timeout)


def with_frames(doc):
    """memleakctl's report JSON names each frame once, in "locations", and each stack's frames by
    their indices there: give each stack its "frames" too (the entries themselves), as the tests
    read them. Any other document is returned as it is."""
    if isinstance(doc, dict):
        for value in doc.values():
            with_frames(value)
        locations = doc.get('locations')
        if isinstance(locations, list) and isinstance(doc.get('stacks'), list):
            for stack in doc['stacks']:
                if isinstance(stack, dict) and 'frames' not in stack and isinstance(stack.get('locations'), list):
                    stack['frames'] = [locations[i] for i in stack['locations']]
    elif isinstance(doc, list):
        for value in doc:
            with_frames(value)
    return doc


def load_json(text):
    """json.loads, each report's stacks given their frames (with_frames)."""
    return with_frames(json.loads(text))


def load_json_file(f):
    """json.load, each report's stacks given their frames (with_frames)."""
    return with_frames(json.load(f))

def wait_until(predicate, timeout, interval=0.05):
    """Call predicate until it returns something true or timeout seconds pass; return its last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)


def can_take_fds():
    """Whether this process may take another's file descriptor (pidfd_getfd). A container's seccomp
    filter (CI's systemd-nspawn) refuses it to every process in it, the daemon and the tests alike:
    there memleakd holds a concurrent scan's userfaultfd in the process scanned."""
    libc = ctypes.CDLL(None, use_errno=True)
    pidfd = libc.syscall(434, os.getpid(), 0)           # pidfd_open
    if pidfd < 0:
        return False
    fd = libc.syscall(438, pidfd, 0, 0)                 # pidfd_getfd: our own stdin
    os.close(pidfd)
    if fd < 0:
        return False
    os.close(fd)
    return True


CAN_TAKE_FDS = can_take_fds()


def under_no_take_fds(daemon):
    """The command that starts daemon where pidfd_getfd is refused (tests/programs/no-take-fds.c),
    as a container's seccomp filter refuses it to every process in it: a concurrent scan's
    userfaultfd is then held in the process scanned. Daemon(command=...). Where this process may
    not take fds already (CI's systemd-nspawn), the daemon is started as always: a filter of its
    own on top would make it one the processes it scans do not have, whose filters the kernel then
    shows it no longer (seccomp-check.h)."""
    command = [MEMLEAKD, '--config', daemon.config_path, '--socket', daemon.socket_path]
    return [os.path.join(PROGRAMS_DIR, 'no-take-fds')] + command if CAN_TAKE_FDS else command


def kernel_at_least(major, minor):
    """Whether the running kernel is at least major.minor (os.uname's release, "6.18.0-...")."""
    m = re.match(r'(\d+)\.(\d+)', os.uname().release)
    return bool(m) and (int(m.group(1)), int(m.group(2))) >= (major, minor)


def write_config(path, settings, extra_lines=()):
    with open(path, 'w') as f:
        f.write('# memleakd integration test configuration\n')
        for key, value in settings.items():
            f.write(f'{key} = {value}\n')
        for line in extra_lines:
            f.write(line + '\n')


class RawClient:
    """One connection to the daemon's socket, speaking (or abusing) newline-delimited JSON."""

    def __init__(self, socket_path, timeout=10):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        try:
            self.sock.connect(socket_path)
        except BaseException:
            self.sock.close()
            raise
        self.pending = b''

    def send(self, data):
        if isinstance(data, (dict, list)):
            data = json.dumps(data) + '\n'
        if isinstance(data, str):
            data = data.encode()
        self.sock.sendall(data)

    def read_line(self):
        """The next line from the daemon, or None at EOF."""
        while b'\n' not in self.pending:
            chunk = self.sock.recv(65536)
            if not chunk:
                return None
            self.pending += chunk
        line, self.pending = self.pending.split(b'\n', 1)
        return line

    def read_reply(self):
        line = self.read_line()
        if line is None:
            raise AssertionError('daemon closed the connection without a reply')
        try:
            reply = json.loads(line)
        except ValueError as e:
            raise AssertionError(f'daemon replied with something that is not JSON ({e}): {line!r}')
        if not isinstance(reply, dict):
            raise AssertionError(f'daemon replied with a non-object: {line!r}')
        return reply

    def at_eof(self, timeout=5):
        """True when the daemon closed the connection (after any replies still buffered)."""
        self.sock.settimeout(timeout)
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    return True
                self.pending += chunk
        except socket.timeout:
            return False
        except ConnectionResetError:
            return True

    def request(self, msg):
        self.send(msg)
        return self.read_reply()

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def pin_directory_of(workdir):
    """The bpffs directory a test daemon in workdir pins its maps and links in."""
    return '/sys/fs/bpf/memleakd-it-' + hashlib.sha256(os.path.abspath(workdir).encode()).hexdigest()[:16]


def remove_pins(pin_directory):
    """What memleakd --forget does to the pins (bpffs: unlink each, then the directories)."""
    if not os.path.isdir(pin_directory):
        return
    for root, dirs, files in os.walk(pin_directory, topdown=False):
        for name in files:
            os.unlink(os.path.join(root, name))
        for name in dirs:
            os.rmdir(os.path.join(root, name))
    os.rmdir(pin_directory)


class Daemon:
    """A memleakd of our own: temp socket, temp config, stderr kept in a file."""

    def __init__(self, workdir, config=None, extra_config_lines=(), env=None, socket_path=None,
                 command=None):
        self.workdir = workdir
        self.socket_path = socket_path or os.path.join(workdir, 'memleakd.sock')
        self.config_path = os.path.join(workdir, 'memleakd.conf')
        settings = dict(TEST_CONFIG)
        # a cache of its own: no test takes unwind tables another test (or the machine's memleakd) stored
        settings['cache_directory'] = os.path.join(workdir, 'cache')
        # its own state and pins: daemons run side by side, and none may adopt another's targets
        settings['state_directory'] = os.path.join(workdir, 'state')
        settings['bpf_pin_directory'] = pin_directory_of(workdir)
        settings.update(config or {})
        self.pin_directory = settings['bpf_pin_directory']
        self.state_directory = settings['state_directory']
        write_config(self.config_path, settings, extra_config_lines)
        self.log_path = os.path.join(workdir, 'memleakd.stderr')
        self.env = dict(os.environ)
        self.env.pop('NOTIFY_SOCKET', None)
        self.env.pop('WATCHDOG_USEC', None)
        self.env.pop('WATCHDOG_PID', None)
        self.env.pop('LISTEN_FDS', None)
        self.env.pop('LISTEN_PID', None)
        self.env.update(env or {})
        if callable(command):
            self.command = command(self)
        else:
            self.command = command or [MEMLEAKD, '--config', self.config_path, '--socket', self.socket_path]
        self.proc = None
        self.stopped_on_purpose = False

    def start(self, wait=True):
        with open(self.log_path, 'wb') as log:
            self.proc = subprocess.Popen(self.command, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, env=self.env)
        if wait:
            self.wait_ready()
        return self

    def log(self):
        try:
            with open(self.log_path, errors='replace') as f:
                return f.read()
        except FileNotFoundError:
            return ''

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def _answers_status(self):
        if not self.alive():
            raise AssertionError(f'memleakd exited with status {self.proc.returncode} while starting; '
                                 f'its stderr:\n{self.log()}')
        try:
            with RawClient(self.socket_path, timeout=5) as c:
                return c.request({'v': 1, 'id': 1, 'cmd': 'status'}).get('ok') is True
        except (FileNotFoundError, ConnectionRefusedError, socket.timeout, AssertionError):
            return False

    def wait_ready(self, timeout=DAEMON_START_TIMEOUT_S):
        if not wait_until(self._answers_status, timeout, interval=0.05):
            raise AssertionError(f'memleakd did not answer status on {self.socket_path} within {timeout} s; '
                                 f'its stderr:\n{self.log()}')

    def stop(self, sig=signal.SIGTERM, timeout=15):
        """Signal the daemon and return its exit status (killing it if it hangs). What it left
        pinned for a restart is removed (its targets' probes with it)."""
        self.stopped_on_purpose = True
        if self.proc is None:
            return None
        try:
            if self.proc.poll() is None:
                self.proc.send_signal(sig)
                try:
                    self.proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
                    raise AssertionError(f'memleakd did not exit within {timeout} s of signal {sig}; '
                                         f'its stderr:\n{self.log()}')
        finally:
            remove_pins(self.pin_directory)
        return self.proc.returncode

    def request(self, msg):
        with RawClient(self.socket_path) as c:
            return c.request(msg)

    def ctl(self, *args, timeout=CTL_TIMEOUT_S):
        """Run memleakctl against this daemon; returns the CompletedProcess (text)."""
        cmd = [MEMLEAKCTL, '--socket', self.socket_path] + [str(a) for a in args]
        return subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=timeout)

    def ctl_ok(self, *args):
        r = self.ctl(*args)
        if r.returncode != 0:
            raise AssertionError(f'memleakctl {" ".join(map(str, args))} failed with status {r.returncode}\n'
                                 f'stdout: {r.stdout}\nstderr: {r.stderr}\nmemleakd stderr:\n{self.log()}')
        return r

    def ctl_json(self, *args):
        r = self.ctl_ok(*args, '--json')
        try:
            return load_json(r.stdout)
        except ValueError as e:
            raise AssertionError(f'memleakctl {" ".join(map(str, args))} --json printed something that is '
                                 f'not JSON ({e}):\n{r.stdout}')

    def attach(self, pid, *args):
        return self.ctl_json('attach', '--pid', pid, *args)

    def status(self):
        return self.ctl_json('status')

    def report(self, pid=None, top=UNLIMITED_TOP, min_age_s=None):
        args = ['report', '--top', top]
        if pid is not None:
            args += ['--pid', pid]
        if min_age_s is not None:
            args += ['--min-age', min_age_s]
        return self.ctl_json(*args)


class LeakProgram:
    """A leaking test program from tests/programs, driven over its stdin/stdout handshake."""

    def __init__(self, name, command=None):
        """command: run it instead of the program itself (e.g. a namespace wrapper that execs the
        program); the traced pid is then the program's, found with find_pid."""
        self.name = name
        self.path = os.path.join(PROGRAMS_DIR, name)
        self.proc = subprocess.Popen(command or [self.path], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.pid = self.proc.pid
        self.buffer = b''

    def expect(self, word, timeout=PROGRAM_TIMEOUT_S):
        """Wait for the program to print word on a line of its own."""
        line = self.line(f'"{word}"', timeout)
        if line != word:
            raise AssertionError(f'{self.name} printed {line!r}, expected "{word}"')

    def line(self, what='a line', timeout=PROGRAM_TIMEOUT_S):
        """The next line the program prints (what: said when it does not come)."""
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b'\n' not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f'{self.name} (pid {self.pid}) did not print {what} within {timeout} s')
            readable, _, _ = select.select([fd], [], [], left)
            if not readable:
                continue
            chunk = os.read(fd, 4096)
            if not chunk:
                self.proc.wait(5)
                raise AssertionError(f'{self.name} (pid {self.pid}) exited with status {self.proc.returncode} '
                                     f'before printing {what}; its stderr:\n'
                                     f'{self.proc.stderr.read().decode(errors="replace")}')
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b'\n', 1)
        return line.decode(errors='replace')

    def go(self):
        self.proc.stdin.write(b'go\n')
        self.proc.stdin.flush()

    def run_leaks(self):
        """Send go and wait until the program has made all its allocations."""
        self.go()
        self.expect('done')

    def finish(self, timeout=PROGRAM_TIMEOUT_S):
        """Let the program exit (EOF on stdin) and return its exit status."""
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
            except BrokenPipeError:
                pass
        return self.proc.wait(timeout)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                f.close()
            except BrokenPipeError:
                pass


def source_path(program_name):
    return os.path.join(SOURCE_ROOT, 'tests', 'programs', program_name + '.c')


def call_sites(program_name):
    """{function: {line, ...}} for the lines marked "site: function" in a program's source."""
    sites = {}
    with open(source_path(program_name)) as f:
        for number, line in enumerate(f, 1):
            m = re.search(r'/\* site: (\w+) \*/', line)
            if m:
                sites.setdefault(m.group(1), set()).add(number)
    return sites


def per_function(report, names, pid=None):
    """Sum bytes/allocs per known function: each stack goes to the first frame whose symbol is
    one of names (stacks naming none of them, e.g. libc's own, are not counted)."""
    totals = {}
    for stack in report['stacks']:
        if pid is not None and stack['pid'] != pid:
            continue
        for frame in stack['frames']:
            if frame.get('symbol') in names:
                t = totals.setdefault(frame['symbol'], {'bytes': 0, 'allocs': 0})
                t['bytes'] += stack['bytes']
                t['allocs'] += stack['allocs']
                break
    return totals


def per_first_frame(report, pid):
    """Totals per the symbol of each stack's first frame: the function that called the
    allocator, with or without frame pointers further up."""
    totals = {}
    for stack in report['stacks']:
        if stack['pid'] != pid or not stack['frames']:
            continue
        t = totals.setdefault(stack['frames'][0]['symbol'], {'bytes': 0, 'allocs': 0})
        t['bytes'] += stack['bytes']
        t['allocs'] += stack['allocs']
    return totals


def format_totals(totals):
    if not totals:
        return '    (nothing)\n'
    return ''.join(f'    {name:32} {t["bytes"]:>10} bytes in {t["allocs"]:>6} allocs\n'
                   for name, t in sorted(totals.items()))


def format_stacks(report, limit=60):
    out = []
    for stack in report['stacks'][:limit]:
        frames = ' <- '.join(f'{f.get("symbol")}' for f in stack['frames'][:6])
        out.append(f'    pid {stack["pid"]}: {stack["bytes"]} bytes in {stack["allocs"]} allocs'
                   f' [{stack.get("stack_error") or "ok"}] {frames}')
    return '\n'.join(out) + '\n'


def has_failed(test):
    """Whether test has failed so far; usable from tearDown and cleanups (where unittest's own
    outcome.success reads True while that part runs)."""
    outcome = getattr(test, '_outcome', None)
    if outcome is None:
        return True
    result = getattr(outcome, 'result', None)
    for failed, _ in getattr(result, 'failures', []) + getattr(result, 'errors', []):
        if failed is test or getattr(failed, 'test_case', None) is test:
            return True
    return any(exc_info is not None for _, exc_info in getattr(outcome, 'errors', []))   # Python < 3.11


class DaemonTestCase(unittest.TestCase):
    """Each test gets a temp dir, starts its own daemon(s) and programs; all are cleaned up, and
    the daemons' stderr is printed when the test fails."""

    maxDiff = None

    def setUp(self):
        self.workdir = tempfile.mkdtemp(prefix='memleakd-it-')
        self.daemons = []
        self.addCleanup(shutil.rmtree, self.workdir, ignore_errors=True)
        self.addCleanup(self._print_logs_on_failure)

    def _print_logs_on_failure(self):
        if not has_failed(self):
            return
        for d in self.daemons:
            sys.stderr.write(f'\n----- memleakd stderr ({" ".join(d.command)}) -----\n{d.log()}'
                             f'----- end of memleakd stderr -----\n')

    def _stop_daemon_at_cleanup(self, daemon):
        crashed = daemon.proc is not None and daemon.proc.poll() is not None and not daemon.stopped_on_purpose
        alive = daemon.proc is not None and daemon.proc.poll() is None
        status = daemon.stop()
        if crashed:
            raise AssertionError(f'memleakd died during the test with status {daemon.proc.returncode}')
        # A clean SIGTERM exit is 0; under the ASan build, a leak makes it 23.
        if alive and status != 0:
            raise AssertionError(f'memleakd exited {status} on SIGTERM at the end of the test; '
                                 f'its stderr:\n{daemon.log()}')

    def start_daemon(self, wait=True, **kwargs):
        """A new daemon in a directory of its own (socket, config, stderr)."""
        workdir = os.path.join(self.workdir, f'daemon-{len(self.daemons) + 1}')
        os.mkdir(workdir, 0o700)
        d = Daemon(workdir, **kwargs)
        self.daemons.append(d)
        self.addCleanup(self._stop_daemon_at_cleanup, d)
        d.start(wait=wait)
        return d

    def start_program(self, name):
        p = LeakProgram(name)
        self.addCleanup(p.kill)
        p.expect('ready')
        return p

    def run_ctl(self, socket_path, *args, input=b'', env=None, timeout=RUN_TIMEOUT_S):
        """memleakctl run ARGS with input on its stdin; returns the CompletedProcess (bytes)."""
        cmd = [MEMLEAKCTL, '--socket', socket_path, 'run'] + [str(a) for a in args]
        return subprocess.run(cmd, input=input, capture_output=True, timeout=timeout,
                              env=dict(os.environ, **(env or {})))

    def run_json(self, daemon, *cmd, input=b'', env=None, options=()):
        """Run cmd traced, the JSON report written to a file; returns (CompletedProcess, report)."""
        out = os.path.join(self.workdir, f'report-{time.monotonic_ns()}.json')
        r = self.run_ctl(daemon.socket_path, '--json', '--top', UNLIMITED_TOP, '--output', out,
                         *options, '--', *cmd, input=input, env=env)
        try:
            with open(out) as f:
                report = load_json_file(f)
        except (OSError, ValueError) as e:
            self.fail(f'memleakctl run wrote no JSON report ({e}); status {r.returncode}\n'
                      f'stderr: {r.stderr.decode(errors="replace")}\nmemleakd stderr:\n{daemon.log()}')
        return r, report

    def wait_for_totals(self, daemon, pid, names, expected, timeout=REPORT_TIMEOUT_S):
        """Poll the report for pid until the per-function totals equal expected (or time runs
        out); return (report, totals) from the last poll."""
        last = {}

        def matches():
            last['report'] = daemon.report(pid=pid)
            last['totals'] = per_function(last['report'], names, pid=pid)
            return last['totals'] == expected

        wait_until(matches, timeout, interval=0.1)
        return last['report'], last['totals']

    def assert_totals(self, report, totals, expected, what):
        if totals == expected:
            return
        lost = {k: v for k, v in report.get('lost', {}).items() if v}
        msg = (f'{what}: per-function totals differ from the ground truth\n'
               f'  expected:\n{format_totals(expected)}'
               f'  reported:\n{format_totals(totals)}'
               f'  non-zero lost counters: {lost}\n'
               f'  stacks in the report:\n{format_stacks(report)}')
        self.fail(msg)

