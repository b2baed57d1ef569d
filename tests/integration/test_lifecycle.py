# SPDX-License-Identifier: MIT
"""memleakd's life: sd_notify READY/STATUS/WATCHDOG/STOPPING, socket activation, signals,
memleakctl without a daemon, a config file it must refuse."""

import grp
import json
import os
import signal
import socket
import stat
import subprocess
import time
import unittest

import harness

NOTIFY_TIMEOUT_S = 30


class NotifySocket:
    """The $NOTIFY_SOCKET end a service manager would own: records every assignment received."""

    def __init__(self, path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.messages = []          # (monotonic time, "KEY=value")

    def poll(self, timeout):
        """Receive what arrives within timeout seconds."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                return
            now = time.monotonic()
            for assignment in data.decode(errors='replace').split('\n'):
                if assignment:
                    self.messages.append((now, assignment))

    def wait_for(self, assignment, timeout=NOTIFY_TIMEOUT_S, daemon=None):
        """Wait until assignment (e.g. "READY=1") has arrived; return the time it did."""
        deadline = time.monotonic() + timeout
        while True:
            for when, a in self.messages:
                if a == assignment:
                    return when
            if time.monotonic() >= deadline:
                raise AssertionError(f'no {assignment} on $NOTIFY_SOCKET within {timeout} s; got '
                                     f'{[a for _, a in self.messages]}'
                                     + (f'; memleakd stderr:\n{daemon.log()}' if daemon else ''))
            self.poll(0.1)

    def assignments(self, prefix):
        return [a for _, a in self.messages if a.startswith(prefix)]

    def close(self):
        self.sock.close()


class LifecycleTest(harness.DaemonTestCase):

    def notify_socket(self):
        n = NotifySocket(os.path.join(self.workdir, 'notify.sock'))
        self.addCleanup(n.close)
        return n

    def test_ready_status_and_stopping_are_notified_and_sigterm_exits_0(self):
        notify = self.notify_socket()
        daemon = self.start_daemon(wait=False, env={'NOTIFY_SOCKET': notify.path})
        notify.wait_for('READY=1', daemon=daemon)
        # READY means serving: the very first request must be answered, no retry.
        reply = daemon.request({'v': 1, 'id': 1, 'cmd': 'status'})
        self.assertIs(reply['ok'], True, reply)
        notify.poll(0.3)
        self.assertTrue(notify.assignments('STATUS='), f'no STATUS= among {notify.messages}')
        self.assertTrue(all(len(s) > len('STATUS=') for s in notify.assignments('STATUS=')))

        self.assertEqual(daemon.stop(signal.SIGTERM), 0, 'exit status after SIGTERM')
        notify.poll(0.2)
        self.assertIn('STOPPING=1', notify.assignments('STOPPING='), f'got {notify.messages}')
        ready_at = notify.wait_for('READY=1')
        stopping_at = notify.wait_for('STOPPING=1')
        self.assertLessEqual(ready_at, stopping_at)
        # Whatever it leaves behind, a new daemon can take the same socket path.
        again = self.start_daemon(socket_path=daemon.socket_path)
        self.assertEqual(again.stop(), 0)

    def test_sigint_exits_0(self):
        daemon = self.start_daemon()
        self.assertEqual(daemon.stop(signal.SIGINT), 0, 'exit status after SIGINT')

    def test_watchdog_pings_arrive_at_half_the_period(self):
        notify = self.notify_socket()
        daemon = self.start_daemon(wait=False, env={'NOTIFY_SOCKET': notify.path, 'WATCHDOG_USEC': '200000'})
        ready_at = notify.wait_for('READY=1', daemon=daemon)
        notify.poll(max(0.0, ready_at + 1.5 - time.monotonic()))
        pings = [when for when, a in notify.messages if a == 'WATCHDOG=1' and when >= ready_at]
        # Every 100 ms: about 15 in 1.5 s; a generous floor, and nowhere near a busy loop.
        self.assertGreaterEqual(len(pings), 8, f'WATCHDOG=1 pings in 1.5 s after READY: {len(pings)}')
        self.assertLessEqual(len(pings), 60, f'WATCHDOG=1 pings in 1.5 s after READY: {len(pings)}')
        gaps = [b - a for a, b in zip(pings, pings[1:])]
        self.assertLess(max(gaps), 0.2, f'a gap between pings reached the whole watchdog period: {gaps}')
        self.assertEqual(daemon.stop(), 0)

    def test_watchdog_outlasts_a_start_up_stalled_for_three_periods(self):
        # systemd's watchdog runs from the fork, so a slow machine's start-up (verifying the BPF
        # programs takes a second or more) must not count against it: memleakd stretches it first.
        period_usec = 1000000
        notify = self.notify_socket()
        daemon = self.start_daemon(wait=False, env={'NOTIFY_SOCKET': notify.path,
                                                    'WATCHDOG_USEC': str(period_usec)})
        notify.sock.settimeout(NOTIFY_TIMEOUT_S)
        first = notify.sock.recv(65536).decode()
        os.kill(daemon.proc.pid, signal.SIGSTOP)        # a machine that stalls memleakd's start-up
        stopped_at = time.monotonic()
        self.addCleanup(lambda: daemon.alive() and os.kill(daemon.proc.pid, signal.SIGCONT))
        self.assertEqual(first, 'WATCHDOG_USEC=120000000', 'the first word to systemd stretches the watchdog')
        notify.poll(0.05)
        self.assertNotIn('READY=1', [a for _, a in notify.messages],
                         'memleakd was ready before the stall: the test proves nothing')
        time.sleep(3 * period_usec / 1e6)
        os.kill(daemon.proc.pid, signal.SIGCONT)
        ready_at = notify.wait_for('READY=1', daemon=daemon)
        self.assertGreater(ready_at - stopped_at, 3)
        # READY restores the unit's period and pings in the same message.
        ready = [a for when, a in notify.messages if when == ready_at]
        self.assertIn(f'WATCHDOG_USEC={period_usec}', ready, notify.messages)
        self.assertIn('WATCHDOG=1', ready, notify.messages)
        notify.poll(2.0)
        pings = [when for when, a in notify.messages if a == 'WATCHDOG=1' and when >= ready_at]
        gaps = [b - a for a, b in zip(pings, pings[1:])]
        self.assertGreaterEqual(len(pings), 4, notify.messages)
        self.assertLess(max(gaps), period_usec / 1e6, f'a gap between pings reached the watchdog period: {gaps}')
        self.assertEqual(daemon.stop(), 0)

    def test_socket_activation_serves_on_the_passed_socket(self):
        daemon = self.start_daemon(
            wait=False,
            command=lambda d: ['systemd-socket-activate', '-l', d.socket_path,
                               harness.MEMLEAKD, '--config', d.config_path])
        # systemd-socket-activate listens, and execs memleakd on the first connection.
        daemon.wait_ready()
        status = daemon.status()
        self.assertEqual(status['targets'], [])

        program = self.start_program('leak-exit')
        reply = daemon.attach(program.pid)
        self.assertEqual(reply['target']['pid'], program.pid)
        self.assertEqual([t['pid'] for t in daemon.status()['targets']], [program.pid])
        self.assertEqual(daemon.stop(), 0)

    def test_sigterm_with_a_target_attached_releases_it_and_exits_0(self):
        daemon = self.start_daemon()
        program = self.start_program('leak-every-hook')
        daemon.attach(program.pid)
        self.assertEqual(daemon.stop(), 0)
        # With the probes gone the program runs to its end unharmed.
        program.run_leaks()
        self.assertEqual(program.finish(), 0)

    def test_memleakctl_without_a_daemon_says_not_running(self):
        socket_path = os.path.join(self.workdir, 'nobody-here.sock')
        r = subprocess.run([harness.MEMLEAKCTL, '--socket', socket_path, 'status'], capture_output=True,
                           text=True, timeout=harness.CTL_TIMEOUT_S, stdin=subprocess.DEVNULL)
        self.assertNotEqual(r.returncode, 0)
        lines = [line for line in (r.stdout + r.stderr).splitlines() if line.strip()]
        self.assertEqual(len(lines), 1, f'expected one line, got: {lines}')
        self.assertIn('not running (no socket at', lines[0])

        # A socket nothing listens on (a daemon killed with SIGKILL leaves its socket) is told apart.
        stale = os.path.join(self.workdir, 'stale.sock')
        with socket.socket(socket.AF_UNIX) as s:
            s.bind(stale)
        r = subprocess.run([harness.MEMLEAKCTL, '--socket', stale, 'status'], capture_output=True,
                           text=True, timeout=harness.CTL_TIMEOUT_S, stdin=subprocess.DEVNULL)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn(f'not running (nothing listens on {stale})', r.stderr)

        # In JSON mode the error is JSON on stdout.
        r = subprocess.run([harness.MEMLEAKCTL, '--socket', socket_path, 'status', '--json'],
                           capture_output=True, text=True, timeout=harness.CTL_TIMEOUT_S, stdin=subprocess.DEVNULL)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn('not running', json.dumps(harness.load_json(r.stdout)), r.stdout)

    def test_unknown_config_key_is_fatal_and_named_with_file_and_line(self):
        daemon = self.start_daemon(wait=False, extra_config_lines=['snapshot_intervall_ms = 500'])
        with open(daemon.config_path) as f:
            line_no = 1 + [line.split('=')[0].strip() for line in f].index('snapshot_intervall_ms')
        try:
            status = daemon.proc.wait(harness.DAEMON_START_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.fail(f'memleakd kept running with an unknown key in its config; stderr:\n{daemon.log()}')
        daemon.stopped_on_purpose = True
        self.assertNotEqual(status, 0)
        log = daemon.log()
        self.assertIn(daemon.config_path, log)
        self.assertIn('snapshot_intervall_ms', log)
        self.assertRegex(log, rf'(:{line_no}\b|line {line_no}\b)', f'line {line_no} not named:\n{log}')
        self.assertFalse(os.path.exists(daemon.socket_path))

    def test_sighup_reloads_the_config_and_a_bad_one_is_refused_without_harm(self):
        daemon = self.start_daemon()
        self.assertEqual(daemon.status()['snapshot_interval_ms'], harness.TEST_CONFIG['snapshot_interval_ms'])
        settings = dict(harness.TEST_CONFIG, socket_path=daemon.socket_path, snapshot_interval_ms=250)
        harness.write_config(daemon.config_path, settings)
        daemon.proc.send_signal(signal.SIGHUP)
        reloaded = harness.wait_until(lambda: daemon.status()['snapshot_interval_ms'] == 250, 10)
        self.assertTrue(reloaded, f'interval not reloaded; stderr:\n{daemon.log()}')

        # A broken file is reported and ignored: the daemon keeps serving with what it had.
        harness.write_config(daemon.config_path, settings, ['ring_depth = lots'])
        daemon.proc.send_signal(signal.SIGHUP)
        self.assertTrue(harness.wait_until(lambda: 'Not reloading' in daemon.log(), 10), daemon.log())
        self.assertIn('ring_depth', daemon.log())
        self.assertEqual(daemon.status()['snapshot_interval_ms'], 250)
        self.assertTrue(daemon.alive())

    def test_a_reload_applies_every_run_time_key_and_names_those_needing_a_restart(self):
        # a reload logged "Reloaded" yet left reachability_max_pause_ms (and the verdicts' and
        # the attach's defaults) at their old values; a changed map size went unmentioned
        daemon = self.start_daemon()
        status = daemon.status()
        self.assertEqual((status['reachability_max_pause_ms'], status['restart_pending']), (200, []), status)
        settings = dict(harness.TEST_CONFIG, cache_directory=os.path.join(daemon.workdir, 'cache'),
                        state_directory=daemon.state_directory, bpf_pin_directory=daemon.pin_directory,
                        reachability_max_pause_ms=50, max_allocs=harness.TEST_CONFIG['max_allocs'] // 2)
        harness.write_config(daemon.config_path, settings)
        daemon.proc.send_signal(signal.SIGHUP)
        self.assertTrue(harness.wait_until(lambda: daemon.status()['reachability_max_pause_ms'] == 50, 10),
                        daemon.log())
        # --socket wins over the files at a reload too: not named as changed
        self.assertEqual(daemon.status()['restart_pending'], ['max_allocs'], daemon.log())
        self.assertRegex(daemon.log(), r'take effect only when memleakd restarts.*: max_allocs\n')
        self.assertIn('in force only after a restart of memleakd: max_allocs', daemon.ctl_ok('status').stdout)
        # the file back as it runs: nothing pending
        harness.write_config(daemon.config_path, dict(settings, max_allocs=harness.TEST_CONFIG['max_allocs']))
        daemon.proc.send_signal(signal.SIGHUP)
        self.assertTrue(harness.wait_until(lambda: daemon.status()['restart_pending'] == [], 10), daemon.log())
        self.assertEqual(daemon.status()['reachability_max_pause_ms'], 50)

    def test_a_second_daemon_on_the_same_socket_refuses_to_start(self):
        # it used to take the socket over: the first one, probes and all, could no longer be reached
        daemon = self.start_daemon()
        second = subprocess.run([harness.MEMLEAKD, '--config', daemon.config_path, '--socket', daemon.socket_path],
                                capture_output=True, text=True, timeout=60)
        self.assertNotEqual(second.returncode, 0, second.stderr)
        self.assertIn(f'Another memleakd answers on {daemon.socket_path}', second.stderr)
        self.assertTrue(daemon.alive(), daemon.log())
        self.assertIn('targets', daemon.status())

    def refused_socket(self, socket_path, why):
        """A daemon told to listen on socket_path refuses to start, naming the directory and why,
        and makes nothing there."""
        daemon = self.start_daemon(wait=False, socket_path=socket_path)
        try:
            status = daemon.proc.wait(harness.DAEMON_START_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.fail(f'memleakd listened on {socket_path}; stderr:\n{daemon.log()}')
        daemon.stopped_on_purpose = True
        self.assertNotEqual(status, 0, daemon.log())
        self.assertIn(why, daemon.log())
        self.assertIn('refusing to put the socket', daemon.log())
        self.assertFalse(os.path.lexists(socket_path), daemon.log())

    def test_a_socket_where_another_user_could_swap_it_is_refused(self):
        # memleakd chmod()ed and chown()ed its socket by path after bind(): in a directory another
        # user owns, a symbolic link swapped in there gave that user's choice of root file the
        # socket's mode and group. Now the directory and all above it must be root's and not
        # writable by others (sticky ones above it, as /tmp, will do), and the mode is given at
        # the socket's making.
        nobody = 65534
        theirs = os.path.join(self.workdir, 'theirs')
        os.mkdir(theirs, 0o755)
        os.chown(theirs, nobody, nobody)
        self.refused_socket(os.path.join(theirs, 'memleakd.sock'), f'{theirs} is owned by another user')
        # a root directory made for it under theirs: not made
        self.refused_socket(os.path.join(theirs, 'sub', 'memleakd.sock'), f'{theirs} is owned by another user')
        self.assertFalse(os.path.exists(os.path.join(theirs, 'sub')))
        # root's but writable by everyone, sticky or not
        for mode in (0o777, 0o1777):
            shared = os.path.join(self.workdir, f'shared-{mode:o}')
            os.mkdir(shared)
            os.chmod(shared, mode)
            self.refused_socket(os.path.join(shared, 'memleakd.sock'), f'{shared} is writable by others')
        # root's and only root's: the socket with its mode and group from its making
        mine = os.path.join(self.workdir, 'mine')
        os.mkdir(mine, 0o755)
        socket_path = os.path.join(mine, 'memleakd.sock')
        daemon = self.start_daemon(socket_path=socket_path,
                                   extra_config_lines=['socket_mode = 0640', 'socket_group = nogroup'])
        st = os.lstat(socket_path)
        self.assertTrue(stat.S_ISSOCK(st.st_mode), st)
        self.assertEqual((stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid), (0o640, 0, grp.getgrnam('nogroup').gr_gid))
        self.assertIn('targets', daemon.status())

    def test_daemon_mounts_tracefs_and_bpffs_when_absent(self):
        # A private mount namespace with neither mounted, as on a minimal host or in a container.
        def command(d):
            inner = ' '.join([harness.MEMLEAKD, '--config', d.config_path, '--socket', d.socket_path])
            return ['unshare', '--mount', '--propagation', 'private', 'sh', '-c',
                    'umount /sys/kernel/tracing 2>/dev/null; umount /sys/fs/bpf 2>/dev/null; '
                    'if grep -qE " /sys/kernel/tracing | /sys/fs/bpf " /proc/self/mountinfo; then exit 99; fi; '
                    f'exec {inner}']

        daemon = self.start_daemon(command=command)
        with open(f'/proc/{daemon.proc.pid}/mountinfo') as f:
            mounts = {fields[4]: line.split(' - ')[1].split()[0]
                      for line in f for fields in [line.split()]}
        self.assertEqual(mounts.get('/sys/kernel/tracing'), 'tracefs', daemon.log())
        self.assertEqual(mounts.get('/sys/fs/bpf'), 'bpf', daemon.log())
        self.assertIn('Mounted tracefs on /sys/kernel/tracing', daemon.log())
        # and it still traces
        program = self.start_program('leak-exit')
        self.assertEqual(daemon.attach(program.pid)['target']['pid'], program.pid)


if __name__ == '__main__':
    unittest.main(verbosity=2)
