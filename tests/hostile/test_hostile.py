# SPDX-License-Identifier: MIT
"""A traced process, or a client, that turns on memleakd: it must not hang the daemon, grow it past
its configured bounds, or lock root out. Real daemon, real BPF; as root, with an unprivileged user
(and group) the test creates for the client side.

Each test says what it does in its name; the figures a reader wants (the daemon's RSS after the
bomb and after fifteen exiting runs) are printed on stderr and kept in bench/RESULTS.md."""

import grp
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import zlib

sys.path.insert(0, os.path.join(os.environ.get('SOURCE_ROOT', '.'), 'tests', 'integration'))
import harness  # noqa: E402

TARGET = 'hostile-target'
LIBRARY = os.path.join(harness.PROGRAMS_DIR, 'libhostile-lib.so')
LEAK_SIZE = 4242                # hostile_leak() in tests/programs/hostile-lib.c
HOSTILE_USER = 'memleakd-hostile'
ANSWER_TIMEOUT_S = 5            # a daemon that answers at all answers status within this
SHF_COMPRESSED = 0x800
# Under the ASan build, freed memory waits in a quarantine (256 MiB by default) before it is reused:
# the daemon's RSS then says nothing about what it holds. Tests that measure it turn that off.
NO_QUARANTINE = {'ASAN_OPTIONS': ':'.join(filter(None, [os.environ.get('ASAN_OPTIONS'), 'quarantine_size_mb=0']))}


def daemon_rss_kib(daemon):
    with open(f'/proc/{daemon.proc.pid}/status') as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1])
    raise AssertionError('no VmRSS')


def daemon_fds(daemon):
    return len(os.listdir(f'/proc/{daemon.proc.pid}/fd'))


def daemon_cpu_s(daemon):
    with open(f'/proc/{daemon.proc.pid}/stat') as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def answers_status(daemon, timeout=ANSWER_TIMEOUT_S):
    """Whether the daemon answers a status request within timeout seconds (it must never hang)."""
    with harness.RawClient(daemon.socket_path, timeout=timeout) as c:
        return c.request({'v': 1, 'cmd': 'status'}).get('ok') is True


def build_id_of(path):
    out = subprocess.run(['readelf', '-n', path], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        if 'Build ID:' in line:
            return bytes.fromhex(line.split('Build ID:')[1].strip())
    raise AssertionError(f'{path} has no build ID')


def elf_section_set_flags(path, name, flags):
    """OR flags into the sh_flags of section name of the ELF64 file at path."""
    import struct
    with open(path, 'r+b') as f:
        data = bytearray(f.read())
        shoff, = struct.unpack_from('<Q', data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from('<HHH', data, 0x3a)
        strtab_off, = struct.unpack_from('<Q', data, shoff + shstrndx * shentsize + 0x18)
        for i in range(shnum):
            base = shoff + i * shentsize
            name_off, = struct.unpack_from('<I', data, base)
            end = data.index(b'\0', strtab_off + name_off)
            if data[strtab_off + name_off:end].decode() == name:
                old, = struct.unpack_from('<Q', data, base + 8)
                struct.pack_into('<Q', data, base + 8, old | flags)
                f.seek(0)
                f.write(data)
                return
    raise AssertionError(f'no section {name} in {path}')


class HostileTarget:
    """hostile-target, driven a command at a time."""

    def __init__(self, test):
        self.program = test.start_program(TARGET)
        self.pid = self.program.pid

    def do(self, command, timeout=harness.PROGRAM_TIMEOUT_S):
        self.program.proc.stdin.write(command.encode() + b'\n')
        self.program.proc.stdin.flush()
        self.program.expect('done', timeout=timeout)


class HostileTest(harness.DaemonTestCase):

    def setUp(self):
        super().setUp()
        self.files = tempfile.mkdtemp(prefix='memleakd-hostile-')
        os.chmod(self.files, 0o755)
        self.addCleanup(shutil.rmtree, self.files, ignore_errors=True)

    def library_copy(self, name):
        path = os.path.join(self.files, name)
        shutil.copy(LIBRARY, path)
        return path

    def assert_leak_through_library(self, daemon, program, want_file):
        """The report of program shows hostile_leak's 4242 bytes, named, within the timeout."""
        def found():
            r = daemon.report(pid=program.pid)
            stacks = [s for s in r['stacks'] if s['frames'] and s['frames'][0]['symbol'] == 'hostile_leak']
            return (r, stacks) if stacks else None

        got = harness.wait_until(found, harness.REPORT_TIMEOUT_S, interval=0.1)
        self.assertTrue(got, harness.format_stacks(daemon.report(pid=program.pid)))
        report, stacks = got
        self.assertEqual(sum(s['bytes'] for s in stacks), LEAK_SIZE, harness.format_stacks(report))
        top = stacks[0]['frames'][0]
        if want_file:
            self.assertEqual(os.path.basename(top['file'] or ''), 'hostile-lib.c', top)
        else:
            self.assertIsNone(top['file'], top)
        return report

    # --- files the target names -----------------------------------------------------------------

    def test_fifo_where_a_mapped_library_was_does_not_hang_attach(self):
        daemon = self.start_daemon()
        program = HostileTarget(self)
        lib = self.library_copy('fifo-at-attach.so')
        program.do(f'dlopen {lib}')
        program.do(f'fifo {lib}')
        self.assertTrue(os.path.exists(lib) and not os.path.isfile(lib))
        daemon.attach(program.pid)      # fails the test if it does not answer within 30 s
        self.assertTrue(answers_status(daemon))
        program.do('leak-lib')
        # The mapping itself still names the library (/proc/PID/map_files): its frames resolve.
        self.assert_leak_through_library(daemon, program, want_file=True)

    def test_fifo_where_a_library_mapped_after_attach_was_does_not_hang_the_tick(self):
        daemon = self.start_daemon()
        program = HostileTarget(self)
        daemon.attach(program.pid)
        lib = self.library_copy('fifo-at-tick.so')
        program.do(f'dlopen-fifo {lib}')
        time.sleep(3 * harness.TEST_CONFIG['snapshot_interval_ms'] / 1000)   # ticks look at it
        self.assertTrue(answers_status(daemon))
        program.do('leak-lib')
        self.assert_leak_through_library(daemon, program, want_file=True)

    def test_fifo_named_by_a_debuglink_does_not_hang_report(self):
        daemon = self.start_daemon()
        debug = os.path.join(self.files, 'hostile.debug')
        lib = os.path.join(self.files, 'debuglinked.so')
        subprocess.run(['objcopy', '--only-keep-debug', LIBRARY, debug], check=True)
        subprocess.run(['objcopy', '--strip-debug', f'--add-gnu-debuglink={debug}', LIBRARY, lib], check=True)
        os.unlink(debug)
        os.mkfifo(debug)
        program = HostileTarget(self)
        program.do(f'dlopen {lib}')
        daemon.attach(program.pid)
        program.do('leak-lib')
        # Named from its symbol table; the FIFO is not its debug file, and nothing waits on it.
        self.assert_leak_through_library(daemon, program, want_file=False)
        self.assertTrue(answers_status(daemon))

    def test_a_thousand_copies_of_a_library_take_one_open_file(self):
        daemon = self.start_daemon()
        copies = os.path.join(self.files, 'copies')
        os.mkdir(copies)
        for i in range(1100):
            shutil.copy(LIBRARY, os.path.join(copies, f'copy{i:04}.so'))
        baseline = daemon_fds(daemon)
        program = HostileTarget(self)
        program.do(f'map-files {copies}')
        daemon.attach(program.pid)
        symbols = daemon.status()['limits']['symbols']
        self.assertGreaterEqual(symbols['files'], 1100, symbols)
        self.assertLessEqual(symbols['distinct'], 10, symbols)     # one build ID: one library
        self.assertLess(daemon_fds(daemon), baseline + 40)
        # The daemon still has fds to spare: another process attaches, and the copies go with it.
        other = HostileTarget(self)
        daemon.attach(other.pid)
        daemon.ctl_ok('detach', '--pid', program.pid)
        symbols = daemon.status()['limits']['symbols']
        self.assertLess(symbols['files'], 100, symbols)

    def test_a_thousand_distinct_libraries_stay_within_the_open_file_limit(self):
        max_open = 64
        daemon = self.start_daemon(config={'symbols_max_open_files': max_open})
        copies = os.path.join(self.files, 'distinct')
        os.mkdir(copies)
        with open(LIBRARY, 'rb') as f:
            data = f.read()
        build_id = build_id_of(LIBRARY)
        for i in range(1100):
            new_id = build_id[:-4] + i.to_bytes(4, 'big')
            with open(os.path.join(copies, f'lib{i:04}.so'), 'wb') as f:
                f.write(data.replace(build_id, new_id, 1))
        baseline = daemon_fds(daemon)
        program = HostileTarget(self)
        program.do(f'map-files {copies}')
        daemon.attach(program.pid)
        program.do(f'dlopen {LIBRARY}')
        program.do('leak-lib')
        self.assert_leak_through_library(daemon, program, want_file=True)
        symbols = daemon.status()['limits']['symbols']
        self.assertGreaterEqual(symbols['distinct'], 1100, symbols)
        self.assertLessEqual(symbols['open'], max_open, symbols)
        self.assertLessEqual(daemon_fds(daemon), baseline + max_open + 40)
        other = HostileTarget(self)
        daemon.attach(other.pid)
        daemon.ctl_ok('detach', '--pid', program.pid)
        symbols = daemon.status()['limits']['symbols']
        self.assertLess(symbols['distinct'], 100, symbols)
        self.assertLess(daemon_fds(daemon), baseline + 40)

    def make_bomb(self):
        """hostile-lib with a .debug_str of 1 GiB of zeros, zlib-compressed to about 1 MB."""
        section = os.path.join(self.files, 'bomb.section')
        bomb = os.path.join(self.files, 'bomb.so')
        inflated = 1 << 30
        c = zlib.compressobj(9)
        chunk = bytes(1 << 24)
        with open(section, 'wb') as f:
            # Elf64_Chdr: ch_type ELFCOMPRESS_ZLIB, ch_reserved, ch_size, ch_addralign
            f.write((1).to_bytes(4, 'little') + bytes(4) + inflated.to_bytes(8, 'little') +
                    (1).to_bytes(8, 'little'))
            for _ in range(inflated // len(chunk)):
                f.write(c.compress(chunk))
            f.write(c.flush())
        subprocess.run(['objcopy', f'--update-section=.debug_str={section}', LIBRARY, bomb], check=True)
        elf_section_set_flags(bomb, '.debug_str', SHF_COMPRESSED)
        self.assertLess(os.path.getsize(bomb), 4 << 20)
        return bomb

    def test_decompression_bomb_is_refused_and_the_daemon_stays_small(self):
        bomb = self.make_bomb()
        daemon = self.start_daemon(env=NO_QUARANTINE)
        program = HostileTarget(self)
        program.do(f'dlopen {bomb}')
        daemon.attach(program.pid)
        before = daemon_rss_kib(daemon)
        program.do('leak-lib')
        # Named from its symbol table; its DWARF would inflate to 1 GiB: refused, and said.
        self.assert_leak_through_library(daemon, program, want_file=False)
        after = daemon_rss_kib(daemon)
        sys.stderr.write(f'daemon RSS around the decompression bomb: {before} KiB before, {after} KiB after\n')
        self.assertLess(after - before, 64 * 1024)
        self.assertIn('inflate', daemon.log())
        self.assertGreaterEqual(daemon.status()['limits']['symbols']['refused'], 1)

    # --- exited targets ---------------------------------------------------------------------------

    def test_fifteen_exiting_runs_leave_the_daemon_small(self):
        daemon = self.start_daemon(config={'max_allocs': 262144, 'exited_max_mb': 64}, env=NO_QUARANTINE)
        rss = []
        for i in range(15):
            r = subprocess.run([harness.MEMLEAKCTL, '--socket', daemon.socket_path, 'run', '--json', '--top', '3',
                                '--', os.path.join(harness.PROGRAMS_DIR, TARGET), '--leak', '200000'],
                               stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            report = harness.load_json(r.stderr)
            leaked = [s for s in report['stacks'] if s['frames'] and s['frames'][0]['symbol'] == 'leak_block']
            self.assertEqual(sum(s['allocs'] for s in leaked), 200000, harness.format_stacks(report))
            rss.append(daemon_rss_kib(daemon))
        sys.stderr.write(f'daemon RSS after each of 15 runs leaking 200,000 blocks: {rss} KiB\n')
        self.assertLess(rss[-1] - rss[0], 32 * 1024)
        exited = daemon.status()['limits']['exited']
        self.assertLessEqual(exited['bytes'], exited['max_bytes'], exited)

    # --- clients ----------------------------------------------------------------------------------

    def hostile_user(self):
        """An unprivileged user and a group of its own (the socket's group), made once."""
        if subprocess.run(['getent', 'group', HOSTILE_USER], capture_output=True).returncode != 0:
            subprocess.run(['groupadd', '--system', HOSTILE_USER], check=True)
        if subprocess.run(['getent', 'passwd', HOSTILE_USER], capture_output=True).returncode != 0:
            subprocess.run(['useradd', '--system', '--no-create-home', '--gid', HOSTILE_USER,
                            '--shell', '/usr/sbin/nologin', HOSTILE_USER], check=True)
        return pwd.getpwnam(HOSTILE_USER).pw_uid, grp.getgrnam(HOSTILE_USER).gr_gid

    def group_daemon(self):
        uid, gid = self.hostile_user()
        sockdir = os.path.join(self.files, 'run')
        os.mkdir(sockdir, 0o755)
        daemon = self.start_daemon(socket_path=os.path.join(sockdir, 'memleakd.sock'),
                                   config={'socket_mode': '0660', 'socket_group': HOSTILE_USER})
        return daemon, uid, gid

    SLOW_CLIENTS = r'''
import json, socket, sys, time
path, n, every, duration = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
held, refused = [], 0
for i in range(n):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.settimeout(0.2)
    try:
        line = s.recv(4096)
        if b'EUSERS' in line:
            refused += 1
            s.close()
            continue
    except socket.timeout:
        pass
    held.append([s, None, None])          # socket, first byte sent, closed by the daemon at
start = time.monotonic()
while time.monotonic() - start < duration:
    for h in held:
        if h[2] is not None:
            continue
        try:
            h[0].send(b'{')
            if h[1] is None:
                h[1] = time.monotonic()
            h[0].settimeout(0.01)
            if h[0].recv(4096) == b'':
                h[2] = time.monotonic()
        except socket.timeout:
            pass
        except OSError:
            h[2] = time.monotonic()
    time.sleep(every)
print(json.dumps({'held': len(held), 'refused': refused,
                  'lived': [None if h[2] is None else h[2] - h[1] for h in held]}))
'''

    def test_slow_clients_of_another_user_cannot_lock_root_out(self):
        daemon, uid, gid = self.group_daemon()
        helper = subprocess.Popen(['/usr/bin/python3', '-c', self.SLOW_CLIENTS, daemon.socket_path, '64', '2', '16'],
                                  user=uid, group=gid, extra_groups=[gid], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: helper.poll() is None and helper.kill())
        answered, deadline = 0, time.monotonic() + 16
        while time.monotonic() < deadline:
            self.assertTrue(answers_status(daemon, timeout=2), 'root got no answer while a user held connections')
            answered += 1
            time.sleep(0.25)
        out, err = helper.communicate(timeout=30)
        self.assertEqual(helper.returncode, 0, err)
        got = json.loads(out)
        self.assertLessEqual(got['held'], 8, got)             # a uid's share
        self.assertEqual(got['held'] + got['refused'], 64, got)
        # Every byte-a-time request was cut 10 s after its first byte, however the bytes came.
        for lived in got['lived']:
            self.assertIsNotNone(lived, got)
            self.assertLess(lived, 13, got)
        self.assertGreater(answered, 40)

    def test_requests_sent_and_never_read_hold_one_reply_each(self):
        daemon = self.start_daemon(env=NO_QUARANTINE)
        before = daemon_rss_kib(daemon)
        clients = []
        for _ in range(30):
            c = harness.RawClient(daemon.socket_path)
            clients.append(c)
            burst = (json.dumps({'v': 1, 'cmd': 'status'}) + '\n') * 2000
            c.sock.setblocking(False)
            try:
                c.sock.send(burst[:60000].encode())
            except BlockingIOError:
                pass
        time.sleep(1)
        self.assertTrue(answers_status(daemon))
        grown = daemon_rss_kib(daemon) - before
        for c in clients:
            c.close()
        self.assertLess(grown, 16 * 1024, f'{grown} KiB for 30 connections that never read')

    def test_emfile_on_accept_pauses_instead_of_spinning(self):
        daemon = self.start_daemon(command=lambda d: ['prlimit', '--nofile=100:100', '--', harness.MEMLEAKD,
                                                      '--config', d.config_path, '--socket', d.socket_path])
        clients = []
        try:
            # About 50 fds are the daemon's own (BPF programs, maps): the rest go before the 64
            # connections it would serve, and the backlog takes the others while accept() fails.
            for _ in range(90):
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(daemon.socket_path)
                clients.append(s)
            time.sleep(0.5)
            cpu = daemon_cpu_s(daemon)
            time.sleep(2)
            spent = daemon_cpu_s(daemon) - cpu
            self.assertLess(spent, 0.5, f'{spent:.2f} s of CPU in 2 s with accept() failing')
            pauses = daemon.log().count('Cannot accept clients')
            self.assertGreater(pauses, 0, daemon.log())
            self.assertLess(pauses, 40, daemon.log()[-2000:])
        finally:
            for s in clients:
                s.close()
        self.assertTrue(harness.wait_until(lambda: answers_status(daemon), 10, interval=0.3))

    # --- what the target chooses to be called ---------------------------------------------------

    def test_comm_with_escape_sequences_is_printed_inert_and_json_stays_utf8(self):
        daemon = self.start_daemon()
        program = HostileTarget(self)
        program.do('comm ' + b'\x1b]0;pwn\x07\xff\xfe'.hex())
        daemon.attach(program.pid)
        text = subprocess.run([harness.MEMLEAKCTL, '--socket', daemon.socket_path, 'status'],
                              capture_output=True, timeout=30)
        self.assertEqual(text.returncode, 0, text.stderr)
        self.assertNotIn(b'\x1b', text.stdout)
        self.assertNotIn(b'\x07', text.stdout)
        self.assertIn(b'\\x1b]0;pwn\\x07', text.stdout)
        raw = subprocess.run([harness.MEMLEAKCTL, '--socket', daemon.socket_path, 'status', '--json'],
                             capture_output=True, timeout=30)
        status = json.loads(raw.stdout.decode('utf-8', errors='strict'))
        comm = [t['comm'] for t in status['targets'] if t['pid'] == program.pid]
        self.assertEqual(comm, ['\x1b]0;pwn\x07\ufffd\ufffd'])

    # --- what the daemon is asked to hold ----------------------------------------------------------

    def test_map_sizes_the_machine_cannot_hold_are_refused_at_start(self):
        daemon = self.start_daemon(wait=False, config={
            'max_allocs': 100000000, 'max_stacks': 16777216, 'max_combined': 16777216,
            'max_inflight': 16777216, 'max_mmaps': 16777216})
        daemon.stopped_on_purpose = True
        self.assertEqual(daemon.proc.wait(60), 1, daemon.log())
        self.assertIn('more than this machine can hold', daemon.log())

    @staticmethod
    def kernel_thread():
        """A kernel thread this pid namespace sees (none inside a container's), or None."""
        for entry in sorted(os.listdir('/proc'), key=lambda e: (len(e), e)):
            try:
                with open(f'/proc/{entry}/stat') as f:
                    if int(f.read().rsplit(')', 1)[1].split()[6]) & 0x00200000:       # PF_KTHREAD
                        return int(entry)
            except (OSError, ValueError, IndexError):
                continue
        return None

    def test_kernel_thread_and_device_are_refused_with_the_reason(self):
        daemon = self.start_daemon()
        kthread = self.kernel_thread()
        r = daemon.ctl('attach', '--pid', kthread or 2)
        self.assertNotEqual(r.returncode, 0)
        if kthread:
            self.assertIn('kernel thread', r.stderr)
        else:
            # In a pid namespace no kernel thread is visible: pid 2 is no process at all here.
            self.assertFalse(os.path.exists('/proc/2'))
            self.assertIn('No process with pid 2', r.stderr)
        program = HostileTarget(self)
        r = daemon.ctl('attach', '--pid', program.pid, '--obj', '/dev/null')
        self.assertNotEqual(r.returncode, 0)
        self.assertIn('not a regular file', r.stderr)

    def test_stacks_of_a_target_that_went_leave_the_stack_map(self):
        # 1271 stacks into a 1024-entry stack table: the ones that find it full are counted
        # (stack_table_full); a second such target must not lose more because the first one's
        # stacks stayed behind.
        daemon = self.start_daemon(config={'max_stacks': 1024})

        def run_one():
            before = daemon.status()['lost']['stack_table_full']
            program = self.start_program('leak-many-stacks')
            daemon.attach(program.pid)
            program.run_leaks()
            report = daemon.report(pid=program.pid)
            lost = daemon.status()['lost']['stack_table_full'] - before
            # each allocation whose stack found no room is still counted, under a visible error
            unplaced = sum(s['allocs'] for s in report['stacks'] if s['stack_error'] == 'stack table full (ENOSPC)')
            self.assertEqual(unplaced, lost, report['lost'])
            daemon.ctl_ok('detach', '--pid', program.pid)
            program.finish()
            return lost

        first, second = run_one(), run_one()
        self.assertGreater(first, 0, 'a 1024-entry table held 1271 stacks')
        self.assertLessEqual(second, first, f'table full: {first} for the first target, {second} for the second')


if __name__ == '__main__':
    unittest.main(verbosity=2)
