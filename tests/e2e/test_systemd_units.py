# SPDX-License-Identifier: MIT
"""memleakd's installed units under a real systemd: boot Debian 12 in systemd-nspawn, install this
build into it, and drive memleakd the way users do (systemctl, memleakctl).

Run it through "meson test -C BUILD --suite e2e" (as root), which sets BUILD_ROOT and LEAK_PROGRAM.

The container root is debootstrapped once into /var/cache/memleakd-e2e/root-KEY (KEY hashes the
suite, variant, architecture and package list) and never written again: each run installs this
build into a fresh upper layer (runs/PID-*/upper) and boots an overlay of the two, mounted in a
mount namespace of nspawn's own, so each run starts clean and nothing can stay mounted. The
container, every process in it and the run directory are gone when the test ends; if the test is
killed outright, nspawn gets SIGTERM (PR_SET_PDEATHSIG) and the next run removes the directory.

Two container settings matter for memleakd:
- --system-call-filter='bpf perf_event_open': systemd-nspawn's own seccomp allow list leaves out
  bpf() and perf_event_open() ("bpffs is not namespaced", src/nspawn/nspawn-seccomp.c) and fails
  them with EPERM for every process the container's systemd starts. (A process that nsenter puts
  into the container is not under that filter, which is why BPF "works inside" from a shell.)
- Nothing beyond memleakd's runtime libraries in the minbase root (no procps): the unit must work
  on the most minimal Debian, so ExecReload= uses the shell's kill builtin, not /bin/kill.
"""

import ctypes
import fcntl
import glob
import hashlib
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

SUITE = 'bookworm'
VARIANT = 'minbase'
PACKAGES = sorted([
    'systemd', 'systemd-sysv', 'dbus',          # a booting systemd with a system bus
    'libbpf1', 'libelf1', 'libdw1', 'libsystemd0', 'libcjson1', 'zlib1g',   # memleakd's runtime
    'libprotobuf-c1',                           # pprof profiles (memleakctl report --format pprof, export_dir)
])
HOST_TOOLS = {'debootstrap': 'debootstrap', 'systemd-nspawn': 'systemd-container', 'nsenter': 'util-linux'}
DEFAULT_MIRROR = 'http://deb.debian.org/debian'
CACHE_DIR = os.environ.get('MEMLEAKD_E2E_CACHE_DIR', '/var/cache/memleakd-e2e')
CACHE_FORMAT = 2                # bump when the way a root is made changes

# Ground truth: tests/e2e/leak-fixed-blocks.c leaks LEAK_COUNT blocks of LEAK_SIZE bytes from
# leak_fixed_blocks() and allocates nothing else after "go".
LEAK_FUNCTION = 'leak_fixed_blocks'
LEAK_SIZE = 1234
LEAK_COUNT = 7
LEAK_PROGRAM_IN_CONTAINER = '/usr/local/libexec/memleakd-e2e/leak-fixed-blocks'

SOCKET_PATH = '/run/memleakd/memleakd.sock'
SERVICE = 'memleakd.service'
SOCKET = 'memleakd.socket'

DEBOOTSTRAP_TIMEOUT_S = 240
BOOT_TIMEOUT_S = 90
SHUTDOWN_TIMEOUT_S = 20
COMMAND_TIMEOUT_S = 60
PROGRAM_TIMEOUT_S = 30
REPORT_TIMEOUT_S = 15
WATCHDOG_WAIT_S = 4             # four periods of the test's WatchdogSec=1s


def log(message):
    sys.stderr.write(f'[e2e {time.strftime("%H:%M:%S")}] {message}\n')
    sys.stderr.flush()


def env_path(name):
    value = os.environ.get(name)
    if not value:
        sys.exit(f'{name} is not set: run this test through "meson test --suite e2e"')
    return value


def wait_until(predicate, timeout, interval=0.1):
    """Call predicate until it returns something true or timeout seconds pass; return its last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# ---------------------------------------------------------------------------------------------
# Host side: tools, mirror, the cached root.

def ensure_host_tools():
    missing = sorted({pkg for tool, pkg in HOST_TOOLS.items() if not shutil.which(tool)})
    if not missing:
        return
    log(f'installing {" ".join(missing)}')
    env = dict(os.environ, DEBIAN_FRONTEND='noninteractive')
    install = ['apt-get', 'install', '-y', '-qq', '--no-install-recommends'] + missing
    if subprocess.run(install, env=env, stdout=subprocess.DEVNULL).returncode != 0:
        subprocess.run(['apt-get', 'update', '-qq'], env=env, check=True)
        subprocess.run(install, env=env, stdout=subprocess.DEVNULL, check=True)
    still_missing = [tool for tool in HOST_TOOLS if not shutil.which(tool)]
    if still_missing:
        raise RuntimeError(f'{", ".join(still_missing)} still missing after apt-get install {" ".join(missing)}')


def _sources_stanzas():
    """(types, uris, suites) of every apt source on this machine, deb822 and one-line formats."""
    for path in sorted(glob.glob('/etc/apt/sources.list.d/*.sources')):
        with open(path) as f:
            for stanza in re.split(r'\n\s*\n', f.read()):
                fields = {}
                for line in stanza.splitlines():
                    m = re.match(r'^([A-Za-z-]+):\s*(.*)$', line)
                    if m:
                        fields[m.group(1).lower()] = m.group(2).split()
                yield fields.get('types', []), fields.get('uris', []), fields.get('suites', [])
    for path in ['/etc/apt/sources.list'] + sorted(glob.glob('/etc/apt/sources.list.d/*.list')):
        try:
            with open(path) as f:
                lines = f.read().splitlines()
        except FileNotFoundError:
            continue
        for line in lines:
            line = re.sub(r'\[[^\]]*\]', ' ', line.split('#', 1)[0]).split()
            if len(line) >= 3:
                yield [line[0]], [line[1]], [line[2]]


def pick_mirror():
    """The Debian mirror this machine's apt uses for SUITE (MEMLEAKD_E2E_MIRROR overrides it)."""
    if os.environ.get('MEMLEAKD_E2E_MIRROR'):
        return os.environ['MEMLEAKD_E2E_MIRROR']
    for types, uris, suites in _sources_stanzas():
        if 'deb' in types and SUITE in suites and uris:
            return uris[0]
    return DEFAULT_MIRROR


def cache_key():
    arch = subprocess.run(['dpkg', '--print-architecture'], capture_output=True, text=True,
                          check=True).stdout.strip()
    what = json.dumps({'format': CACHE_FORMAT, 'suite': SUITE, 'variant': VARIANT, 'arch': arch,
                       'packages': PACKAGES}, sort_keys=True)
    return hashlib.sha256(what.encode()).hexdigest()[:16]


def cached_root():
    """The path of a complete debootstrapped root for PACKAGES, made now if there is none."""
    os.makedirs(CACHE_DIR, mode=0o700, exist_ok=True)
    root = os.path.join(CACHE_DIR, f'root-{cache_key()}')
    with open(os.path.join(CACHE_DIR, 'lock'), 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.isdir(root):
            log(f'using cached root {root}')
            return root
        # Leftovers of an interrupted build are never complete: a root only gets its name at the end.
        for partial in glob.glob(os.path.join(CACHE_DIR, 'root-*.partial')):
            shutil.rmtree(partial, ignore_errors=True)
        partial = root + '.partial'
        mirror = pick_mirror()
        log(f'debootstrapping {SUITE} ({VARIANT}, {len(PACKAGES)} extra packages) from {mirror} into {partial}')
        started = time.monotonic()
        result = subprocess.run(['debootstrap', f'--variant={VARIANT}', '--include=' + ','.join(PACKAGES),
                                 SUITE, partial, mirror],
                                capture_output=True, text=True, timeout=DEBOOTSTRAP_TIMEOUT_S)
        if result.returncode != 0:
            details = result.stdout[-3000:] + result.stderr[-3000:]
            try:
                with open(os.path.join(partial, 'debootstrap', 'debootstrap.log')) as f:
                    details += '\n--- debootstrap.log (end) ---\n' + f.read()[-4000:]
            except OSError:
                pass
            shutil.rmtree(partial, ignore_errors=True)
            raise RuntimeError(f'debootstrap failed ({result.returncode}):\n{details}')
        # Old roots (another package list) are dead weight: only the current one is kept.
        for old in glob.glob(os.path.join(CACHE_DIR, 'root-*')):
            if old != partial and not old.endswith('.partial'):
                shutil.rmtree(old, ignore_errors=True)
        os.rename(partial, root)
        log(f'debootstrap took {time.monotonic() - started:.0f} s')
        return root


def remove_stale_runs(runs_dir):
    """Run directories whose test process is gone (killed before it could clean up)."""
    for path in glob.glob(os.path.join(runs_dir, '*')):
        m = re.match(r'^(\d+)-', os.path.basename(path))
        if m and not pid_alive(int(m.group(1))):
            log(f'removing stale run directory {path}')
            shutil.rmtree(path, ignore_errors=True)


def mounts_under(path):
    """Mount points at or below path in the host's mount namespace, deepest first."""
    path = os.path.realpath(path)
    found = []
    with open('/proc/self/mountinfo') as f:
        for line in f:
            point = line.split()[4].encode().decode('unicode_escape')
            if point == path or point.startswith(path + '/'):
                found.append(point)
    return sorted(found, key=len, reverse=True)


def processes_rooted_under(path):
    path = os.path.realpath(path)
    found = []
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            root = os.readlink(f'/proc/{entry}/root')
        except OSError:
            continue
        if root == path or root.startswith(path + '/'):
            found.append(int(entry))
    return found


def installed_paths(build_root):
    """{basename: path as installed} for everything "meson install" puts in place."""
    result = subprocess.run(['meson', 'introspect', '--installed', build_root], capture_output=True,
                            text=True, check=True)
    paths = {}
    for dest in json.loads(result.stdout).values():
        name = os.path.basename(dest)
        # a program's name is also its bash completion's: the program wins
        if name not in paths or os.path.basename(os.path.dirname(dest)) in ('bin', 'sbin'):
            paths[name] = dest
    return paths


# ---------------------------------------------------------------------------------------------
# The container.

PR_SET_PDEATHSIG = 1


def die_with_parent():
    """In the child before exec: get SIGTERM when the test process dies, whatever kills it."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class Container:
    """The cached root with this build laid over it, booted with systemd-nspawn."""

    def __init__(self, build_root, leak_program, install_build=True):
        self.build_root = build_root
        self.install_build = install_build      # False: the test installs memleakd itself (a .deb)
        self.leak_program = leak_program
        self.runs_dir = os.path.join(CACHE_DIR, 'runs')
        self.run_dir = None
        self.base = None
        self.upper = None
        self.root = None
        self.nspawn = None
        self.nspawn_log = None
        self.pid1 = None
        self.machine = f'memleakd-e2e-{os.getpid()}'
        self.paths = {}
        self.entered = []           # commands started through nsenter and not yet reaped (Popen)

    def create(self):
        """A run directory with this build installed in upper/, to be laid over the cached root."""
        ensure_host_tools()
        self.base = cached_root()
        os.makedirs(self.runs_dir, mode=0o700, exist_ok=True)
        remove_stale_runs(self.runs_dir)
        self.run_dir = tempfile.mkdtemp(prefix=f'{os.getpid()}-', dir=self.runs_dir)
        if re.search(r'[,:\\\s]', self.run_dir + self.base):
            raise RuntimeError(f'overlayfs options cannot name {self.base} and {self.run_dir}')
        self.upper = os.path.join(self.run_dir, 'upper')
        self.root = os.path.join(self.run_dir, 'root')
        for d in (self.upper, self.root, os.path.join(self.run_dir, 'work')):
            os.mkdir(d, 0o755)
        # A directory in upper hides whatever the root has at that path: the merged-/usr links
        # (/lib -> usr/lib, ...) must be links in upper too, so installing through them lands in usr/.
        for name in os.listdir(self.base):
            if os.path.islink(os.path.join(self.base, name)):
                target = os.readlink(os.path.join(self.base, name))
                os.symlink(target, os.path.join(self.upper, name))
                if os.path.isdir(os.path.join(self.base, name)) and not os.path.isabs(target):
                    os.makedirs(os.path.join(self.upper, target), exist_ok=True)

        program = self.upper_path(LEAK_PROGRAM_IN_CONTAINER)
        os.makedirs(os.path.dirname(program), exist_ok=True)
        shutil.copy2(self.leak_program, program)
        if self.install_build:
            self._install_build()
        for top, dirs, files in os.walk(self.upper):
            for d in dirs:
                lower = os.path.join(self.base, os.path.relpath(os.path.join(top, d), self.upper))
                if os.path.islink(lower) and not os.path.islink(os.path.join(top, d)):
                    raise RuntimeError(f'installing made a directory where the root has a link: {lower}')

    def _install_build(self):
        subprocess.run(['meson', 'install', '-C', self.build_root, '--no-rebuild', '--quiet',
                        '--destdir', self.upper], check=True, stdout=subprocess.DEVNULL)
        self.paths = installed_paths(self.build_root)
        for name in ('memleakd', 'memleakctl', 'memleakd.service', 'memleakd.socket', 'memleakd.conf'):
            if name not in self.paths:
                raise RuntimeError(f'meson install does not install {name}: {self.paths}')
            if not os.path.lexists(self.upper_path(self.paths[name])):
                raise RuntimeError(f'{name} is not at {self.paths[name]} in the container root')

    def upper_path(self, path):
        """Where a path of the container's root goes in the layer over the cached root."""
        return os.path.join(self.upper, path.lstrip('/'))

    def path(self, path):
        """A path inside the booted container, as the host reaches it."""
        return f'/proc/{self.pid1}/root{path}'

    def boot(self):
        self.nspawn_log = open(os.path.join(self.run_dir, 'nspawn.log'), 'w+')
        # The overlay exists only in a mount namespace of its own, which goes away with nspawn:
        # nothing can be left mounted on the host, and the cached root is never written.
        overlay = (f'lowerdir={self.base},upperdir={self.upper},'
                   f'workdir={os.path.join(self.run_dir, "work")}')
        # A booted Debian's systemd mounts bpffs at /sys/fs/bpf, where memleakd pins what a restart
        # keeps; nspawn's /sys has none: a bpffs of the container's own, as a host has.
        bpffs = os.path.join(self.run_dir, 'bpffs')
        os.makedirs(bpffs, exist_ok=True)
        command = [
            'unshare', '--mount', '--propagation', 'private', '--',
            'sh', '-c', 'mount -t overlay memleakd-e2e -o "$0" "$1" && mount -t bpf memleakd-e2e "$2" && '
            'shift 2 && exec "$@"', overlay, self.root, bpffs,
            'systemd-nspawn', '--directory', self.root, '--machine', self.machine, '--boot',
            '--register=no', '--keep-unit', '--capability=all', '--private-network',
            '--link-journal=no', '--console=read-only',
            '--system-call-filter=bpf perf_event_open', f'--bind={bpffs}:/sys/fs/bpf',
        ]
        log(f'booting: {" ".join(command)}')
        started = time.monotonic()
        # If this test dies without cleaning up, the container still halts.
        # A booted Debian 12 has cgroup2 alone; nspawn would give the container its host's layout,
        # which in a container that shows cgroup v1 alone (CI's) is the legacy one, where systemd
        # keeps units out of cgroup2 and no unit could be watched.
        self.nspawn = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=self.nspawn_log,
                                       stderr=subprocess.STDOUT, preexec_fn=die_with_parent,
                                       env=dict(os.environ, SYSTEMD_NSPAWN_UNIFIED_HIERARCHY='1'))
        self.pid1 = wait_until(self._find_pid1, BOOT_TIMEOUT_S)
        if not self.pid1:
            raise RuntimeError(f'no systemd under systemd-nspawn (pid {self.nspawn.pid}):\n{self.nspawn_output()}')
        state = wait_until(self._booted, BOOT_TIMEOUT_S, interval=0.25)
        if state not in ('running', 'degraded'):
            raise RuntimeError(f'the container did not boot (state {state!r}):\n{self.nspawn_output()}')
        if state == 'degraded':
            log('container booted degraded:\n' + self.run('systemctl', '--failed', '--no-pager', check=False).stdout)
        log(f'container booted ({state}) in {time.monotonic() - started:.1f} s, systemd is pid {self.pid1}')

    def _find_pid1(self):
        if self.nspawn.poll() is not None:
            raise RuntimeError(f'systemd-nspawn exited with {self.nspawn.returncode}:\n{self.nspawn_output()}')
        try:
            with open(f'/proc/{self.nspawn.pid}/task/{self.nspawn.pid}/children') as f:
                children = [int(c) for c in f.read().split()]
        except OSError:
            return None
        for child in children:
            try:
                with open(f'/proc/{child}/comm') as f:
                    if f.read().strip() == 'systemd':
                        return child
            except OSError:
                pass
        return None

    def _booted(self):
        if self.nspawn.poll() is not None:
            raise RuntimeError(f'systemd-nspawn exited with {self.nspawn.returncode}:\n{self.nspawn_output()}')
        # Fails fast until the container's systemd listens on its private bus, then blocks until boot is done.
        result = self.run('systemctl', 'is-system-running', '--wait', check=False, timeout=BOOT_TIMEOUT_S)
        state = result.stdout.strip()
        return state if state in ('running', 'degraded', 'maintenance', 'stopping') else None

    def nspawn_output(self):
        if not self.nspawn_log:
            return ''
        self.nspawn_log.flush()
        self.nspawn_log.seek(0)
        return self.nspawn_log.read()[-6000:]

    def command(self, *args):
        return ['nsenter', '--target', str(self.pid1), '--all'] + [str(a) for a in args]

    def popen(self, *args, **kwargs):
        """Start a command inside the container; destroy() kills it if it is still running."""
        proc = subprocess.Popen(self.command(*args), **kwargs)
        self.entered.append(proc)
        return proc

    def kill_entered(self, proc):
        """Kill a command started through nsenter: first its child in the container, which nsenter
        then reaps before it exits itself; only then, if need be, nsenter. Killing nsenter first
        would hand the child to the host's init (nsenter's PID namespace), whose zombie could
        hold up the container's halt; and nsenter must not outlive its child either: systemd-shutdown
        SIGSTOPs every process in the container, nsenter (outside it) sees its child stop, stops
        itself for good, and the child's zombie holds up the halt for 90 s."""
        if proc.poll() is None:
            try:
                with open(f'/proc/{proc.pid}/task/{proc.pid}/children') as f:
                    children = [int(c) for c in f.read().split()]
            except OSError:
                children = []
            for pid in children:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc in self.entered:
            self.entered.remove(proc)

    def run(self, *args, check=True, timeout=COMMAND_TIMEOUT_S):
        """Run a command inside the container; return the CompletedProcess (text)."""
        proc = self.popen(*args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except BaseException:
            self.kill_entered(proc)
            raise
        finally:
            if proc.poll() is not None and proc in self.entered:
                self.entered.remove(proc)
        result = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
        if check and result.returncode != 0:
            raise AssertionError(f'{" ".join(map(str, args))} failed ({result.returncode}) in the container:\n'
                                 f'{result.stdout}{result.stderr}')
        return result

    def destroy(self):
        """Halt the container (kill it if it does not halt), check nothing is left, remove the run
        directory. Returns a list of problems found (empty when everything was clean)."""
        problems = []
        for proc in list(self.entered):
            self.kill_entered(proc)
        if self.nspawn and self.nspawn.poll() is None:
            started = time.monotonic()
            self.nspawn.send_signal(signal.SIGTERM)         # nspawn halts the container cleanly
            try:
                self.nspawn.wait(SHUTDOWN_TIMEOUT_S)
                took = time.monotonic() - started
                log(f'container halted in {took:.1f} s')
                if took > 5:
                    log(f'slow halt; console:\n{self.nspawn_output()[-3000:]}')
            except subprocess.TimeoutExpired:
                problems.append(f'the container did not halt within {SHUTDOWN_TIMEOUT_S} s: killed; '
                                f'console:\n{self.nspawn_output()[-2000:]}')
                if self.pid1 and pid_alive(self.pid1):
                    os.kill(self.pid1, signal.SIGKILL)      # the PID namespace goes with its init
                self.nspawn.kill()
                self.nspawn.wait(SHUTDOWN_TIMEOUT_S)
        if self.root:
            wait_until(lambda: not processes_rooted_under(self.root), 5)
            left = processes_rooted_under(self.root)
            if left:
                problems.append(f'processes left in the container root: {left}: killed')
                for pid in left:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
            for point in mounts_under(self.run_dir):
                problems.append(f'{point} was left mounted: unmounted')
                subprocess.run(['umount', '--lazy', point], check=False)
        propagate = f'/run/systemd/nspawn/propagate/{self.machine}'
        for point in mounts_under(propagate):
            problems.append(f'{point} was left mounted: unmounted')
            subprocess.run(['umount', '--lazy', point], check=False)
        if os.path.isdir(propagate):
            try:
                os.rmdir(propagate)
            except OSError as e:
                problems.append(f'{propagate} could not be removed: {e}')
        if self.nspawn_log:
            self.nspawn_log.close()
        if self.run_dir:
            shutil.rmtree(self.run_dir, ignore_errors=True)
            if os.path.exists(self.run_dir):
                problems.append(f'{self.run_dir} could not be removed')
        self.nspawn = None
        return problems


class LeakProgram:
    """leak-fixed-blocks started inside the container through nsenter, spoken to over pipes."""

    def __init__(self, container, user=None):
        """user: run it as that user of the container's (setpriv), else as root."""
        command = [LEAK_PROGRAM_IN_CONTAINER]
        if user:
            command = ['setpriv', f'--reuid={user}', f'--regid={user}', '--init-groups', *command]
        self.proc = container.popen(*command, stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.pending = b''
        line = self.read_line()
        m = re.fullmatch(r'ready (\d+)', line)
        if not m:
            raise AssertionError(f'leak-fixed-blocks said {line!r}, expected "ready PID"')
        self.pid = int(m.group(1))      # as the container sees it

    def read_line(self):
        deadline = time.monotonic() + PROGRAM_TIMEOUT_S
        fd = self.proc.stdout.fileno()
        while b'\n' not in self.pending:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise AssertionError(f'leak-fixed-blocks said nothing for {PROGRAM_TIMEOUT_S} s')
            chunk = os.read(fd, 4096)
            if not chunk:
                raise AssertionError(f'leak-fixed-blocks exited: {self.proc.stderr.read().decode(errors="replace")}')
            self.pending += chunk
        line, self.pending = self.pending.split(b'\n', 1)
        return line.decode()

    def leak(self):
        self.proc.stdin.write(b'go\n')
        self.proc.stdin.flush()
        line = self.read_line()
        if line != 'done':
            raise AssertionError(f'leak-fixed-blocks said {line!r}, expected "done"')

    def stop(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()         # EOF: the program exits 0
                self.proc.wait(10)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if f and not f.closed:
                f.close()


def write_file(path, text):
    with open(path, 'w') as f:
        f.write(text)


def leak_call_sites():
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'leak-fixed-blocks.c')) as f:
        return {n for n, line in enumerate(f, 1) if f'/* site: {LEAK_FUNCTION} */' in line}


# ---------------------------------------------------------------------------------------------
# The tests.

class SystemdUnitsTest(unittest.TestCase):
    """One booted container for all tests; each test starts from memleakd.service and
    memleakd.socket stopped."""

    maxDiff = None
    container = None

    @classmethod
    def setUpClass(cls):
        if os.geteuid() != 0:
            raise RuntimeError('the e2e test boots a container and loads BPF: run it as root')
        cls.container = Container(env_path('BUILD_ROOT'), env_path('LEAK_PROGRAM'))
        cls.addClassCleanup(cls._destroy_container)
        cls.container.create()
        cls.container.boot()
        # The manager logs each main process's exit status only at debug level.
        cls.container.run('systemd-analyze', 'log-level', 'debug')
        cls.ctl_path = cls.container.paths['memleakctl']
        cls.config = cls.container.paths['memleakd.conf']

    @classmethod
    def _destroy_container(cls):
        problems = cls.container.destroy()
        if problems:
            raise AssertionError('teardown: ' + '; '.join(problems))

    def setUp(self):
        self.programs = []
        self.addCleanup(self._stop_programs)
        self.systemctl('stop', SERVICE, SOCKET)
        self.systemctl('reset-failed', SERVICE, SOCKET, check=False)
        self.assertEqual(self.active_state(SERVICE), 'inactive')
        self.assertEqual(self.active_state(SOCKET), 'inactive')
        # each test starts clean: a stop keeps the pins and the state (targets, watches, the
        # reports of exited targets) for the next start to take back, as a restart does
        self.container.run(self.container.paths['memleakd'], '--forget')

    def _stop_programs(self):
        for program in self.programs:
            program.stop()

    def run(self, result=None):
        """Print the units' status and journal when a test fails."""
        failures_before = len(result.failures) + len(result.errors) if result else 0
        outcome = super().run(result)
        if result and len(result.failures) + len(result.errors) > failures_before and self.container.pid1:
            c = self.container
            status = c.run('systemctl', 'status', '--no-pager', '--full', SERVICE, SOCKET, check=False)
            # The manager logs at debug level: -p info leaves its chatter out. memleakd's own lines
            # are picked by identifier (journald in the container often files them under init.scope).
            units = c.run('journalctl', '--no-pager', '-o', 'short-monotonic', '-n', '60', '-p', 'info',
                          '-u', SERVICE, '-u', SOCKET, check=False)
            daemon = c.run('journalctl', '--no-pager', '-o', 'short-monotonic', '-n', '60', '-t', 'memleakd',
                           check=False)
            sys.stderr.write(f'\n----- {self.id()}: systemctl status -----\n{status.stdout}{status.stderr}'
                             f'----- journal of the units -----\n{units.stdout}{units.stderr}'
                             f'----- memleakd\'s log -----\n{daemon.stdout}{daemon.stderr}----- end -----\n')
        return outcome

    # helpers

    def systemctl(self, *args, check=True):
        return self.container.run('systemctl', '--no-pager', *args, check=check)

    def show(self, unit, *props):
        out = self.systemctl('show', unit, '--property=' + ','.join(props)).stdout
        values = dict(line.split('=', 1) for line in out.splitlines() if '=' in line)
        missing = [p for p in props if p not in values]
        self.assertEqual(missing, [], f'systemctl show {unit}: {out}')
        return values

    def active_state(self, unit):
        return self.show(unit, 'ActiveState')['ActiveState']

    def ctl(self, *args):
        result = self.container.run(self.ctl_path, *args, check=False)
        self.assertEqual(result.returncode, 0, f'memleakctl {" ".join(map(str, args))}: {result.stdout}{result.stderr}')
        return result.stdout

    def socket_inode(self):
        """The inode of the socket file, read through the container's root (its /run is a tmpfs)."""
        return os.stat(self.container.path(SOCKET_PATH)).st_ino

    def start_program(self, user=None):
        program = LeakProgram(self.container, user)
        self.programs.append(program)
        return program

    def attach_and_leak(self):
        """Start leak-fixed-blocks, attach with memleakctl, let it leak; return the program."""
        program = self.start_program()
        out = self.ctl('attach', '--pid', program.pid)
        self.assertIn(f'Attached to pid {program.pid} ', out)
        program.leak()
        return program

    def assert_report_shows_exact_leak(self, program):
        """memleakctl report --json (no --pid: the whole daemon) shows exactly the ground truth."""
        expected = (LEAK_SIZE * LEAK_COUNT, LEAK_COUNT)

        def report():
            r = json.loads(self.ctl('report', '--json'))
            targets = [t for t in r['targets'] if t['pid'] == program.pid]
            if targets and (targets[0]['outstanding_bytes'], targets[0]['outstanding_allocs']) == expected:
                return r
            return None

        r = wait_until(report, REPORT_TIMEOUT_S) or json.loads(self.ctl('report', '--json'))
        self.assertEqual([(t['pid'], t['outstanding_bytes'], t['outstanding_allocs'], t['exited'])
                          for t in r['targets']],
                         [(program.pid, LEAK_SIZE * LEAK_COUNT, LEAK_COUNT, False)], json.dumps(r, indent=1))
        self.assertEqual(len(r['stacks']), 1, json.dumps(r['stacks'], indent=1))
        stack = r['stacks'][0]
        self.assertEqual((stack['pid'], stack['bytes'], stack['allocs'], stack['stack_error']),
                         (program.pid, LEAK_SIZE * LEAK_COUNT, LEAK_COUNT, None), stack)
        frames = [r['locations'][i] for i in stack['locations']]    # each frame once, by index
        top = frames[0]
        self.assertEqual(top['symbol'], LEAK_FUNCTION, stack)
        self.assertEqual(top['module'], LEAK_PROGRAM_IN_CONTAINER, stack)
        self.assertEqual(os.path.basename(top['file'] or ''), 'leak-fixed-blocks.c', stack)
        self.assertIn(top['line'], leak_call_sites(), stack)
        self.assertEqual(frames[1]['symbol'], 'main', stack)
        self.assertEqual(r['other'], {'stacks': 0, 'bytes': 0, 'allocs': 0})
        self.assertEqual({k: v for k, v in r['lost'].items() if v}, {}, r['lost'])

    def assert_running(self, unit=SERVICE):
        props = self.show(unit, 'ActiveState', 'SubState', 'MainPID', 'NRestarts')
        self.assertEqual((props['ActiveState'], props['SubState'], props['NRestarts']),
                         ('active', 'running', '0'), props)
        self.assertNotEqual(props['MainPID'], '0', props)
        return int(props['MainPID'])

    def journal_cursor(self):
        out = self.container.run('journalctl', '--no-pager', '--quiet', '--lines=1', '--show-cursor').stdout
        m = re.search(r'^-- cursor: (\S+)$', out, re.M)
        self.assertTrue(m, f'no journal cursor in {out!r}')
        return m.group(1)

    def journal_since(self, cursor, *needles):
        """The journal after cursor, once it holds every one of needles (journald takes a moment
        to pass on what memleakd writes to stderr); asserts they all show up. Not filtered by unit:
        in the container journald often files memleakd's stderr under init.scope."""

        def read():
            return self.container.run('journalctl', '--no-pager', '--output=cat',
                                      f'--after-cursor={cursor}').stdout

        journal = wait_until(lambda: (lambda j: j if all(n in j for n in needles) else None)(read()), 10) or read()
        for needle in needles:
            self.assertIn(needle, journal)
        return journal

    def assert_stops_cleanly(self):
        """systemctl stop: memleakd exits 0 by itself on SIGTERM, the unit ends inactive, not failed.

        An inactive unit nothing refers to is unloaded at once, and with it ExecMainCode and
        ExecMainStatus; so the exit status is read from the manager's debug log instead."""
        cursor = self.journal_cursor()
        self.systemctl('stop', SERVICE)
        self.assertEqual(self.show(SERVICE, 'ActiveState', 'SubState', 'MainPID'),
                         {'ActiveState': 'inactive', 'SubState': 'dead', 'MainPID': '0'})
        self.assertEqual(self.systemctl('is-failed', SERVICE, check=False).stdout.strip(), 'inactive')
        self.journal_since(cursor, 'Received Terminated, shutting down',
                           f'{SERVICE}: Main process exited, code=exited, status=0/SUCCESS',
                           f'{SERVICE}: Deactivated successfully.')

    # tests

    def test_socket_activation_starts_memleakd_which_reports_the_exact_leak(self):
        self.systemctl('start', SOCKET)
        self.assertEqual(self.show(SOCKET, 'ActiveState', 'SubState'),
                         {'ActiveState': 'active', 'SubState': 'listening'})
        self.assertEqual(self.active_state(SERVICE), 'inactive', 'memleakd started before anyone connected')
        inode = self.socket_inode()
        cursor = self.journal_cursor()

        program = self.attach_and_leak()        # the first connection starts memleakd
        self.assert_running()
        self.journal_since(cursor, f'{SERVICE}: Passing 1 fds to service')
        self.assert_report_shows_exact_leak(program)
        self.assertEqual(self.show(SERVICE, 'StatusText')['StatusText'], 'Tracing 1 process')
        # the unit keeps what a reachability scan needs (ptrace, process_vm_readv): a static array
        # holds every block, and the program runs on
        r = json.loads(self.ctl('report', '--pid', program.pid, '--reachability', '--json'))
        reach = r['targets'][0]['reachability']
        self.assertIsNone(reach['error'], reach)
        self.assertEqual(reach['still_reachable'], {'bytes': LEAK_SIZE * LEAK_COUNT, 'allocs': LEAK_COUNT}, reach)
        self.assertEqual(reach['definitely_lost'], {'bytes': 0, 'allocs': 0}, reach)
        self.assertIsNone(program.proc.poll())
        # memleakd serves the socket systemd made (it would unlink and bind anew otherwise).
        self.assertEqual(self.socket_inode(), inode, 'memleakd replaced the socket systemd passed it')
        self.assertEqual(self.active_state(SOCKET), 'active')

    def test_a_member_of_the_socket_s_group_traces_its_own_process_and_no_other(self):
        # the socket's group, made by sysusers.d/memleakd.conf at boot; a user in it
        self.container.run('useradd', '--no-create-home', '--user-group', '--groups', 'memleakd', 'tracer')
        self.addCleanup(self.container.run, 'userdel', 'tracer', check=False)
        self.systemctl('start', SOCKET)
        st = os.stat(self.container.path(SOCKET_PATH))
        with open(self.container.path('/etc/group')) as f:
            gid = {line.split(':')[0]: int(line.split(':')[2]) for line in f if line.count(':') >= 3}['memleakd']
        self.assertEqual((st.st_mode & 0o777, st.st_gid), (0o660, gid))
        roots = self.attach_and_leak()
        mine = self.start_program(user='tracer')

        def ctl_as_tracer(*args):
            return self.container.run('setpriv', '--reuid=tracer', '--regid=tracer', '--init-groups',
                                      self.ctl_path, *map(str, args), check=False)

        r = ctl_as_tracer('attach', '--pid', mine.pid)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        mine.leak()
        r = ctl_as_tracer('attach', '--pid', roots.pid)
        self.assertNotEqual(r.returncode, 0, r.stdout)
        self.assertIn('(EPERM)', r.stderr)
        status = json.loads(ctl_as_tracer('status', '--json').stdout)
        self.assertEqual([t['pid'] for t in status['targets']], [mine.pid])

        def exact():
            report = json.loads(ctl_as_tracer('report', '--json').stdout)
            return [(t['pid'], t['outstanding_bytes'], t['outstanding_allocs']) for t in report['targets']]

        expected = [(mine.pid, LEAK_SIZE * LEAK_COUNT, LEAK_COUNT)]
        self.assertEqual(wait_until(lambda: exact() == expected, REPORT_TIMEOUT_S) and exact(), expected)
        # root sees both
        self.assertEqual(sorted(t['pid'] for t in json.loads(self.ctl('status', '--json'))['targets']),
                         sorted([mine.pid, roots.pid]))
        self.assert_stops_cleanly()

    def test_systemctl_start_runs_memleakd_without_its_socket_unit(self):
        cursor = self.journal_cursor()
        self.systemctl('start', SERVICE)        # Type=notify: returns once memleakd sent READY=1
        self.assert_running()
        # memleakd binds the socket itself.
        self.journal_since(cursor, f'{SERVICE}: Passing 0 fds to service', f'ready on {SOCKET_PATH}')
        self.assertEqual(self.active_state(SOCKET), 'inactive', 'starting the service started the socket')
        self.assertEqual(self.show(SERVICE, 'StatusText')['StatusText'], 'Tracing 0 processes')
        program = self.attach_and_leak()
        self.assert_report_shows_exact_leak(program)
        # its unwind tables went to the directory systemd made for it (CacheDirectory=), the one
        # place under /var it may write (ProtectSystem=strict), root's alone; written by this
        # memleakd, or by one before it in the same container (then taken from it)
        cache = json.loads(self.ctl('status', '--json'))['limits']['unwind_tables']['disk_cache']
        self.assertEqual(cache['directory'], '/var/cache/memleakd', cache)
        self.assertGreaterEqual(cache['files'], 1, cache)
        self.assertGreaterEqual(cache['written'] + cache['hits'], 1, cache)
        self.assertEqual(cache['write_failed'], 0, cache)
        self.assertEqual(os.stat(self.container.path('/var/cache/memleakd')).st_mode & 0o777, 0o700)

    def test_systemctl_stop_leaves_memleakd_inactive_after_a_clean_exit(self):
        for how in ('socket-activated', 'started directly'):
            with self.subTest(how=how):
                if how == 'socket-activated':
                    self.systemctl('start', SOCKET)
                    self.ctl('status')
                else:
                    self.systemctl('stop', SOCKET)
                    self.systemctl('start', SERVICE)
                self.assert_running()
                program = self.attach_and_leak()
                self.assert_stops_cleanly()
                program.stop()
                self.assertEqual(program.proc.returncode, 0, 'the traced program outlives memleakd')
        # The socket stays, and the next connection starts memleakd again.
        self.systemctl('start', SOCKET)
        self.ctl('status')
        self.assert_running()

    def use_one_second_watchdog(self):
        """WatchdogSec=30s in the unit: a one-second drop-in makes a missed ping show within seconds."""
        dropin_dir = self.container.path(f'/run/systemd/system/{SERVICE}.d')
        os.makedirs(dropin_dir, exist_ok=True)
        write_file(os.path.join(dropin_dir, 'e2e-watchdog.conf'), '[Service]\nWatchdogSec=1s\n')
        self.addCleanup(self.systemctl, 'daemon-reload')
        self.addCleanup(shutil.rmtree, dropin_dir)
        self.systemctl('daemon-reload')

    def memleakd_loading_bpf(self):
        """The host pid of a memleakd in the container that holds BPF maps but may still be loading
        its programs (the longest part of its start-up), or None."""
        container_ns = os.readlink(f'/proc/{self.container.pid1}/ns/pid')
        for entry in os.listdir('/proc'):
            if not entry.isdigit():
                continue
            try:
                with open(f'/proc/{entry}/comm') as f:
                    if f.read().strip() != 'memleakd' or os.readlink(f'/proc/{entry}/ns/pid') != container_ns:
                        continue
                fds = os.listdir(f'/proc/{entry}/fd')
                if any(os.readlink(f'/proc/{entry}/fd/{fd}') == 'anon_inode:bpf-map' for fd in fds):
                    return int(entry)
            except OSError:
                continue
        return None

    def test_watchdog_outlasts_a_start_up_stalled_for_three_periods(self):
        # systemd arms the watchdog when it forks memleakd: a machine slow enough to take three
        # periods over start-up must not get it killed. SIGSTOP stands in for that machine.
        self.use_one_second_watchdog()
        cursor = self.journal_cursor()
        for attempt in range(3):
            self.systemctl('start', '--no-block', SERVICE)
            pid = wait_until(self.memleakd_loading_bpf, COMMAND_TIMEOUT_S, interval=0.005)
            self.assertTrue(pid, 'no memleakd holding BPF maps appeared in the container')
            os.kill(pid, signal.SIGSTOP)
            time.sleep(0.2)                     # let systemd read a READY=1 sent just before
            if self.active_state(SERVICE) != 'activating':
                os.kill(pid, signal.SIGCONT)    # too late: it was ready already; try once more
                log(f'memleakd was ready before the stall (attempt {attempt + 1}); again')
                self.systemctl('stop', SERVICE)
                continue
            time.sleep(3)
            os.kill(pid, signal.SIGCONT)
            state = wait_until(lambda: self.active_state(SERVICE) != 'activating', COMMAND_TIMEOUT_S)
            self.assertTrue(state)
            self.assert_running()
            journal = self.journal_since(cursor, f'{SERVICE}: Got notification message from PID')
            self.assertNotIn('Watchdog timeout', journal)
            self.assertNotIn('failed to send watchdog ping', journal)
            self.assert_stops_cleanly()
            return
        self.fail('memleakd was ready three times before the test could stall its start-up')

    def test_watchdog_pings_keep_memleakd_running(self):
        self.use_one_second_watchdog()
        cursor = self.journal_cursor()
        self.systemctl('start', SERVICE)
        main_pid = self.assert_running()
        self.assertEqual(self.show(SERVICE, 'WatchdogUSec')['WatchdogUSec'], '1s')
        time.sleep(WATCHDOG_WAIT_S)
        self.assertEqual(self.assert_running(), main_pid)
        ping = f'{SERVICE}: Got notification message from PID {main_pid} (WATCHDOG=1)'
        journal = self.journal_since(cursor, ping)
        self.assertNotIn('Watchdog timeout', journal)
        # At least one ping per second after the one memleakd sends as it starts.
        self.assertGreater(journal.count(ping), WATCHDOG_WAIT_S, journal)
        self.assert_stops_cleanly()

    def test_systemctl_reload_applies_the_config_and_keeps_memleakd_running(self):
        # The administrator's drop-in, over the shipped defaults (which installing put under
        # /usr/share, and nothing under /etc but the empty drop-in directory).
        self.assertTrue(self.config.startswith('/usr/'), self.config)
        dropin_dir = self.container.path('/etc/memleakd/memleakd.conf.d')
        self.assertEqual(os.listdir(dropin_dir), [])
        self.assertFalse(os.path.exists(self.container.path('/etc/memleakd/memleakd.conf')))
        dropin = '/etc/memleakd/memleakd.conf.d/50-interval.conf'
        self.addCleanup(lambda: os.path.exists(self.container.path(dropin)) and os.unlink(self.container.path(dropin)))

        self.systemctl('start', SERVICE)
        main_pid = self.assert_running()
        program = self.attach_and_leak()
        self.assertEqual(json.loads(self.ctl('status', '--json'))['snapshot_interval_ms'], 1000)

        write_file(self.container.path(dropin), 'snapshot_interval_ms = 250\n')
        cursor = self.journal_cursor()
        self.systemctl('reload', SERVICE)
        interval = wait_until(lambda: json.loads(self.ctl('status', '--json'))['snapshot_interval_ms'] == 250, 10)
        self.assertTrue(interval, 'snapshot_interval_ms is not 250 after systemctl reload')
        self.assertEqual(json.loads(self.ctl('status', '--json'))['restart_pending'], [])
        self.assertEqual(self.assert_running(), main_pid, 'reload restarted memleakd')
        self.journal_since(cursor, f'{SERVICE}: Control process exited, code=exited, status=0/SUCCESS',
                           f'Reloaded {self.config}, {dropin}\n')
        # The target stays attached through the reload, and its leak is still exact.
        self.assert_report_shows_exact_leak(program)

        self.assert_stops_cleanly()

    def test_attach_unit_traces_a_service_and_its_new_main_process_after_a_restart(self):
        """memleakctl attach --unit: the service's main process traced, its leak exact; after
        systemctl restart (its cgroup made anew, a new main pid) the new one is traced too."""
        unit = 'e2e-leaky.service'
        unit_path = self.container.path(f'/run/systemd/system/{unit}')
        write_file(unit_path, f'[Unit]\nDescription=memleakd e2e: a leaking service\n\n'
                              f'[Service]\nExecStart={LEAK_PROGRAM_IN_CONTAINER} --service\n')
        self.addCleanup(self.systemctl, 'daemon-reload')
        self.addCleanup(os.unlink, unit_path)
        self.addCleanup(self.systemctl, 'stop', unit, check=False)
        self.systemctl('daemon-reload')
        self.systemctl('start', unit)
        self.systemctl('start', SOCKET)
        expected = (LEAK_SIZE * LEAK_COUNT, LEAK_COUNT)

        def main_pid():
            return int(self.show(unit, 'MainPID')['MainPID'])

        def traced(pid):
            def recording():
                return any(t['pid'] == pid and t['unit'] == unit and t['phase'] == 'recording'
                           for t in json.loads(self.ctl('status', '--json'))['targets'])
            self.assertTrue(wait_until(recording, REPORT_TIMEOUT_S),
                            f'pid {pid} of {unit} is not traced: {self.ctl("status")}')

        def leaked_exactly(pid):
            def report():
                r = json.loads(self.ctl('report', '--unit', unit, '--json'))
                return [(t['pid'], t['outstanding_bytes'], t['outstanding_allocs']) for t in r['targets']
                        if t['pid'] == pid] == [(pid, *expected)] and r
            r = wait_until(report, REPORT_TIMEOUT_S) or json.loads(self.ctl('report', '--unit', unit, '--json'))
            mine = [(t['pid'], t['unit'], t['outstanding_bytes'], t['outstanding_allocs']) for t in r['targets']
                    if t['pid'] == pid]
            self.assertEqual(mine, [(pid, unit, *expected)], json.dumps(r, indent=1))
            stacks = [s for s in r['stacks'] if s['pid'] == pid]
            self.assertEqual([(s['bytes'], s['allocs'], r['locations'][s['locations'][0]]['symbol']) for s in stacks],
                             [(*expected, LEAK_FUNCTION)], json.dumps(stacks, indent=1))

        first = main_pid()
        reply = json.loads(self.ctl('attach', '--unit', unit, '--json'))
        self.assertEqual(reply['watch']['unit'], unit)
        self.assertEqual([t['pid'] for t in reply['targets']], [first])
        traced(first)
        self.systemctl('kill', '--signal=USR1', unit)
        leaked_exactly(first)

        self.systemctl('restart', unit)
        second = main_pid()
        self.assertNotEqual(second, first)
        traced(second)
        self.systemctl('kill', '--signal=USR1', unit)
        leaked_exactly(second)
        watch = json.loads(self.ctl('status', '--json'))['watches']
        self.assertEqual([(w['unit'], w['processes'], w['attached'], w['missed']) for w in watch],
                         [(unit, 1, 2, 0)], watch)
        reply = json.loads(self.ctl('detach', '--unit', unit, '--json'))
        self.assertEqual([t['pid'] for t in reply['targets']], [second])
        self.assert_stops_cleanly()

    def test_attach_unit_traces_a_forking_server_s_workers_each_exactly_across_its_restart(self):
        """A master and 4 workers, leaking in the workers: attach --unit traces the five, each
        worker's leak exact under its pid, the master's nothing; after systemctl restart, the new
        master and workers are traced the same."""
        unit = 'e2e-server.service'
        unit_path = self.container.path(f'/run/systemd/system/{unit}')
        write_file(unit_path, f'[Unit]\nDescription=memleakd e2e: a forking server\n\n'
                              f'[Service]\nExecStart={LEAK_PROGRAM_IN_CONTAINER} --service-workers 4\n')
        self.addCleanup(self.systemctl, 'daemon-reload')
        self.addCleanup(os.unlink, unit_path)
        self.addCleanup(self.systemctl, 'stop', unit, check=False)
        self.systemctl('daemon-reload')
        self.systemctl('start', SOCKET)

        def workers_of(main):
            out = self.container.run('cat', f'/proc/{main}/task/{main}/children', check=False).stdout
            return sorted(int(p) for p in out.split())

        def started():
            self.systemctl('start', unit)
            main = int(self.show(unit, 'MainPID')['MainPID'])
            workers = wait_until(lambda: (lambda w: w if len(w) == 4 else None)(workers_of(main)), REPORT_TIMEOUT_S)
            self.assertTrue(workers, workers_of(main))
            return main, workers

        def traced(pids):
            def recording():
                return sorted(t['pid'] for t in json.loads(self.ctl('status', '--json'))['targets']
                              if t['unit'] == unit and t['phase'] == 'recording') == sorted(pids)
            self.assertTrue(wait_until(recording, REPORT_TIMEOUT_S), f'{pids} not all traced: {self.ctl("status")}')

        main, workers = started()
        reply = json.loads(self.ctl('attach', '--unit', unit, '--json'))
        self.assertEqual(sorted(t['pid'] for t in reply['targets']), sorted([main] + workers))
        for generation in range(2):
            traced([main] + workers)
            self.systemctl('kill', '--signal=USR1', unit)
            want = sorted([(main, 0, 0)] + [(w, LEAK_SIZE * LEAK_COUNT, LEAK_COUNT) for w in workers])

            def per_process():
                r = json.loads(self.ctl('report', '--unit', unit, '--json'))
                return sorted((t['pid'], t['outstanding_bytes'], t['outstanding_allocs']) for t in r['targets']
                              if not t['exited'])
            self.assertTrue(wait_until(lambda: per_process() == want, REPORT_TIMEOUT_S),
                            f'generation {generation}: {per_process()} != {want}')
            if generation == 0:
                self.systemctl('restart', unit)
                old = [main] + workers
                main, workers = started()
                self.assertFalse(set(old) & set([main] + workers))
        self.ctl('detach', '--unit', unit)
        self.assert_stops_cleanly()

    def test_a_declared_unit_is_traced_at_start_and_its_leak_outlives_a_kill_of_memleakd(self):
        """memleakd.conf's [target] unit=: the service traced from memleakd's start; memleakd
        killed (SIGKILL), restarted by systemd (Restart=on-failure), adopts it: what it leaked
        before, and while memleakd was down (its probes pinned), reported exactly."""
        unit = 'e2e-declared.service'
        unit_path = self.container.path(f'/run/systemd/system/{unit}')
        dropin = '/etc/memleakd/memleakd.conf.d/60-targets.conf'
        write_file(unit_path, f'[Unit]\nDescription=memleakd e2e: a service memleakd.conf declares\n\n'
                              f'[Service]\nExecStart={LEAK_PROGRAM_IN_CONTAINER} --service\n')
        self.addCleanup(self.systemctl, 'daemon-reload')
        self.addCleanup(os.unlink, unit_path)
        self.addCleanup(self.systemctl, 'stop', unit, check=False)
        write_file(self.container.path(dropin), f'[target]\nunit = {unit}\n')
        self.addCleanup(os.unlink, self.container.path(dropin))
        # nothing pinned is left for the next test
        self.addCleanup(self.container.run, self.container.paths['memleakd'], '--forget', check=False)
        self.addCleanup(self.systemctl, 'stop', SERVICE, check=False)
        self.systemctl('daemon-reload')
        self.systemctl('start', unit)
        pid = int(self.show(unit, 'MainPID')['MainPID'])
        self.systemctl('start', SERVICE)

        def targets():
            return [(t['pid'], t['unit'], t['exited'], t['outstanding_bytes'], t['outstanding_allocs'])
                    for t in json.loads(self.ctl('report', '--unit', unit, '--json'))['targets']]

        def leaked(rounds, adopted):
            want = [(pid, unit, False, LEAK_SIZE * LEAK_COUNT * rounds, LEAK_COUNT * rounds)]
            self.assertTrue(wait_until(lambda: targets() == want, REPORT_TIMEOUT_S),
                            f'{targets()} != {want}; {self.ctl("status")}')
            status = json.loads(self.ctl('status', '--json'))
            self.assertEqual([(t['pid'], t['phase'], t['adopted']) for t in status['targets']],
                             [(pid, 'recording', adopted)], status['targets'])

        self.assertTrue(wait_until(lambda: self.ctl('status', '--json') and
                                   [t for t in json.loads(self.ctl('status', '--json'))['targets'] if t['pid'] == pid],
                                   REPORT_TIMEOUT_S), self.ctl('status'))
        self.systemctl('kill', '--signal=USR1', unit)
        leaked(1, False)

        self.systemctl('kill', '--kill-who=main', '--signal=KILL', SERVICE)
        self.systemctl('kill', '--signal=USR1', unit)       # while memleakd is down, or just back
        self.assertTrue(wait_until(lambda: self.show(SERVICE, 'NRestarts')['NRestarts'] == '1' and
                                   self.active_state(SERVICE) == 'active', REPORT_TIMEOUT_S),
                        self.show(SERVICE, 'ActiveState', 'NRestarts'))
        leaked(2, True)
        self.assert_stops_cleanly()


def run_tests(test_class):
    """unittest.main(), the class's container torn down whatever ends the run: SIGTERM (meson's
    timeout, a kill) unwinds like Ctrl-C."""
    def on_sigterm(signo, frame):
        log('SIGTERM: stopping, tearing the container down')
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_sigterm)
    started = time.monotonic()
    try:
        unittest.main(module='__main__', verbosity=2)
    finally:
        container = test_class.container
        if container and container.nspawn:
            for problem in container.destroy():
                log(f'teardown: {problem}')
        log(f'total {time.monotonic() - started:.0f} s')


def main():
    run_tests(SystemdUnitsTest)


if __name__ == '__main__':
    main()
