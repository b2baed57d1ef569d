# SPDX-License-Identifier: MIT
"""memleakctl run -- CMD: the program runs traced from its first allocation (a constructor's leak
included), its report at exit matches its ground truth with every frame named even though it
exits at once, its exit status, stdin and stdout pass through, and when anything fails CMD never
runs untraced and nothing is left behind."""

import json
import os
import signal
import socket
import subprocess
import threading
import time
import unittest

import harness
import test_allocators
import test_mmap

LEAK_RUN = {
    'leak_in_constructor': {'bytes': 3 * 111, 'allocs': 3},
    'leak_malloc': {'bytes': 5 * 100, 'allocs': 5},
    'leak_calloc': {'bytes': 2 * 200, 'allocs': 2},
}
LEAK_RUN_NAMES = set(LEAK_RUN) | {'churn'}
THREADS = {'thread_leak': {'bytes': 8 * 10 * 64, 'allocs': 80}}
RUN_TIMEOUT_S = harness.RUN_TIMEOUT_S


def program(name):
    return os.path.join(harness.PROGRAMS_DIR, name)


class RunTest(harness.DaemonTestCase):

    def assert_every_frame_named(self, report, names):
        """Every frame of the stacks through names has a symbol and a module: the mappings the
        program made were known though it exited before any refresh."""
        hint = ('\n(glibc\'s start_thread and __libc_start_call_main are local symbols, named only with '
                'its debug symbols: libc6-dbg, which scripts/install-deps.sh installs)')
        for stack in report['stacks']:
            if not any(f.get('symbol') in names for f in stack['frames']):
                continue
            for frame in stack['frames']:
                self.assertIsNotNone(frame.get('module'), harness.format_stacks(report))
                self.assertIsNotNone(frame.get('symbol'), harness.format_stacks(report) + hint)

    def test_leaks_before_and_after_main_reported_exactly_with_every_frame_named(self):
        def scenario():
            daemon = self.start_daemon(config={'snapshot_interval_ms': 60000})
            r, report = self.run_json(daemon, program('leak-run'))
            self.assertEqual(r.returncode, 0, r.stderr)
            pid = report['targets'][0]['pid']
            self.assertTrue(report['targets'][0]['exited'], report['targets'])
            totals = harness.per_function(report, LEAK_RUN_NAMES, pid=pid)
            self.assert_totals(report, totals, LEAK_RUN, 'leak-run under memleakctl run')
            return daemon, report, pid

        daemon, report, pid = scenario()
        self.assert_every_frame_named(report, LEAK_RUN_NAMES)
        # the constructor ran before main: its stack does not pass through main
        ctor = [s for s in report['stacks'] if s['frames'] and s['frames'][0]['symbol'] == 'leak_in_constructor']
        self.assertEqual(len(ctor), 1, harness.format_stacks(report))
        self.assertNotIn('main', [f['symbol'] for f in ctor[0]['frames']])
        sites = harness.call_sites('leak-run')
        self.assertIn(ctor[0]['frames'][0]['line'], sites['leak_in_constructor'])
        # the target stays, exited: report --pid and status show it
        again = daemon.report(pid=pid)
        self.assertEqual(harness.per_function(again, LEAK_RUN_NAMES, pid=pid), LEAK_RUN)
        target = [t for t in daemon.status()['targets'] if t['pid'] == pid][0]
        self.assertTrue(target['exited'])
        self.assertEqual(target['comm'], 'leak-run')
        self.assertEqual(target['allocator'], 'glibc')
        self.assertEqual((target['children_forked'], report['targets'][0]['children_forked']), (0, 0))

    def test_text_report_on_stderr_and_stdin_stdout_pass_through(self):
        daemon = self.start_daemon()
        data = b''.join(b'line %d of the input\n' % i for i in range(2000))
        r = self.run_ctl(daemon.socket_path, '--', program('leak-run'), '--echo', input=data)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, data)
        text = r.stderr.decode()
        self.assertIn('leak_malloc+', text)
        self.assertIn('leak_in_constructor+', text)
        self.assertRegex(text, r'\(leak-run, exited\): 1233 bytes in 10 allocations outstanding')

    def test_exit_status_passes_through(self):
        daemon = self.start_daemon()
        for args, status in ((['--exit', '0'], 0), (['--exit', '3'], 3), (['--kill', '9'], 128 + 9),
                             (['--kill', '15'], 128 + 15)):
            with self.subTest(args=args):
                r, report = self.run_json(daemon, program('leak-run'), *args)
                self.assertEqual(r.returncode, status, r.stderr)
                pid = report['targets'][0]['pid']
                self.assertEqual(harness.per_function(report, LEAK_RUN_NAMES, pid=pid), LEAK_RUN)

    def assert_wrapped_leak_run(self, report):
        target = report['targets'][0]
        self.assertEqual(harness.per_function(report, LEAK_RUN_NAMES, pid=target['pid']), LEAK_RUN,
                         harness.format_stacks(report))
        self.assertEqual((target['comm'], target['outstanding_allocs']), ('leak-run', 3 + 5 + 2),
                         harness.format_stacks(report))

    def test_program_a_wrapper_execs_is_reported_under_its_own_name(self):
        # sh runs first (the wrapper allocates), then becomes leak-run, which was not planned: the
        # report is leak-run's, exact, under its name, with its frames named
        daemon = self.start_daemon()
        wrapped = f'x=$(echo wrapped); exec {program("leak-run")}'
        # it exits at once: its maps are the ones read while it was held at its exit
        r, report = self.run_json(daemon, '/bin/sh', '-c', wrapped)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assert_wrapped_leak_run(report)
        # not held at its exit: its maps are read while it lingers, right after its exec
        r, report = self.run_json(daemon, '/bin/sh', '-c', wrapped + ' --linger 300', options=('--no-reachability',))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assert_wrapped_leak_run(report)

    def test_children_it_forks_are_counted_and_not_traced(self):
        # leak-run forks two children, each leaking 4 blocks before it exits: processes of their
        # own, not traced (nothing of theirs in leak-run's totals); the report counts them
        daemon = self.start_daemon()
        r, report = self.run_json(daemon, program('leak-run'), '--fork', '2')
        self.assertEqual(r.returncode, 0, r.stderr)
        target = report['targets'][0]
        self.assertEqual(harness.per_function(report, LEAK_RUN_NAMES | {'leak_in_child'}, pid=target['pid']),
                         LEAK_RUN, harness.format_stacks(report))
        self.assertEqual(len(report['targets']), 1, report['targets'])
        self.assertEqual(target['children_forked'], 2, target)
        status = [t for t in daemon.status()['targets'] if t['pid'] == target['pid']][0]
        self.assertEqual(status['children_forked'], 2, status)
        r = self.run_ctl(daemon.socket_path, '--', program('leak-run'), '--fork', '1')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('It forked 1 process while traced, which is not traced', r.stderr.decode())

    def test_signals_to_memleakctl_reach_the_program(self):
        daemon = self.start_daemon()
        proc = subprocess.Popen([harness.MEMLEAKCTL, '--socket', daemon.socket_path, 'run', '--',
                                 program('leak-run'), '--echo'],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.addCleanup(lambda: proc.poll() is None and proc.kill())
        # the program runs once it echoes
        proc.stdin.write(b'ping\n')
        proc.stdin.flush()
        self.assertEqual(proc.stdout.readline(), b'ping\n')
        proc.send_signal(signal.SIGTERM)
        # stdin stays open: the program ends by the signal, not by EOF
        proc.wait(RUN_TIMEOUT_S)
        err = proc.stderr.read()
        proc.stdin.close()
        self.assertEqual(proc.returncode, 128 + signal.SIGTERM, err)
        self.assertIn(b'leak_malloc+', err)

    def test_eight_threads_leak_and_exit_at_once(self):
        def scenario():
            daemon = self.start_daemon(config={'snapshot_interval_ms': 60000})
            r, report = self.run_json(daemon, program('leak-run-threads'))
            self.assertEqual(r.returncode, 0, r.stderr)
            pid = report['targets'][0]['pid']
            totals = harness.per_function(report, set(THREADS), pid=pid)
            self.assert_totals(report, totals, THREADS, 'leak-run-threads under memleakctl run')
            return report

        report = scenario()
        self.assert_every_frame_named(report, set(THREADS))

    def test_cxx_program_linked_with_tcmalloc(self):
        def scenario():
            daemon = self.start_daemon()
            r, report = self.run_json(daemon, program('leak-alloc-tcmalloc'), input=b'go\n')
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout, b'ready\ndone\n')
            pid = report['targets'][0]['pid']
            totals = harness.per_function(report, test_allocators.NAMES, pid=pid)
            self.assert_totals(report, totals, test_allocators.expected_for('tcmalloc'),
                               'leak-alloc-tcmalloc under memleakctl run')
            return daemon, pid

        daemon, pid = scenario()
        target = [t for t in daemon.status()['targets'] if t['pid'] == pid][0]
        self.assertEqual(target['allocator'], 'tcmalloc', target)
        self.assertIn('libtcmalloc.so.4', [os.path.basename(o['path']) for o in target['objects']
                                           if o['role'] == 'allocator'][0])

    def test_mmap_tracks_the_programs_own_mappings(self):
        def scenario():
            daemon = self.start_daemon()
            r, report = self.run_json(daemon, program('leak-mmap'), input=b'go\n', options=('--mmap',))
            self.assertEqual(r.returncode, 0, r.stderr)
            pid = report['targets'][0]['pid']
            mappings = {'stacks': [s for s in report['stacks'] if s['mmap']]}
            heap = {'stacks': [s for s in report['stacks'] if not s['mmap']]}
            self.assert_totals(report, harness.per_function(mappings, test_mmap.NAMES, pid=pid), test_mmap.MAPPINGS,
                               'leak-mmap mappings under memleakctl run --mmap')
            self.assert_totals(report, harness.per_function(heap, test_mmap.NAMES, pid=pid), test_mmap.HEAP,
                               'leak-mmap heap under memleakctl run --mmap')
            return report

        report = scenario()
        self.assertEqual(report['targets'][0]['outstanding_mmap_bytes'],
                         sum(m['bytes'] for m in test_mmap.MAPPINGS.values()))

    def assert_never_ran(self, marker):
        time.sleep(0.5)
        self.assertFalse(os.path.exists(marker), 'CMD ran untraced')

    def test_command_not_found_or_not_elf(self):
        daemon = self.start_daemon()
        script = os.path.join(self.workdir, 'script.sh')
        with open(script, 'w') as f:
            f.write('#!/bin/sh\nexit 0\n')
        os.chmod(script, 0o755)
        not_executable = os.path.join(self.workdir, 'not-executable')
        with open(program('leak-run'), 'rb') as src, open(not_executable, 'wb') as dst:
            dst.write(src.read())
        os.chmod(not_executable, 0o644)
        for cmd, status, message in (('no-such-command-anywhere', 127, 'command not found'),
                                     (os.path.join(self.workdir, 'missing'), 127, 'command not found'),
                                     (not_executable, 126, 'not an executable file'),
                                     (script, 126, 'not an ELF program')):
            with self.subTest(cmd=cmd):
                r = self.run_ctl(daemon.socket_path, '--', cmd)
                self.assertEqual(r.returncode, status, r.stderr)
                lines = r.stderr.decode().splitlines()
                self.assertEqual(len(lines), 1, lines)
                self.assertIn(message, lines[0])
        self.assertEqual(daemon.status()['targets'], [])

    def test_32_bit_program_is_refused_and_never_runs_untraced(self):
        # its calls pass their arguments on the stack: read as x86-64 registers they were garbage
        daemon = self.start_daemon()
        r = self.run_ctl(daemon.socket_path, '--', program('i386-pause'), timeout=60)
        self.assertEqual(r.returncode, 125, r.stderr)
        self.assertIn('is a 32-bit x86 (i386) program: memleakd traces x86-64 programs only', r.stderr.decode())
        self.assertEqual(daemon.status()['targets'], [])

    def test_daemon_not_running(self):
        marker = os.path.join(self.workdir, 'ran')
        missing = os.path.join(self.workdir, 'no-daemon.sock')
        r = self.run_ctl(missing, '--', program('leak-run'), env={'LEAK_RUN_MARKER': marker})
        self.assertEqual(r.returncode, 125, r.stderr)
        self.assertEqual(len(r.stderr.decode().splitlines()), 1, r.stderr)
        self.assertIn('memleakd is not running', r.stderr.decode())
        self.assert_never_ran(marker)
        # --untraced-ok runs it anyway, with a warning, and its status
        r = self.run_ctl(missing, '--untraced-ok', '--', program('leak-run'), '--exit', '5',
                         env={'LEAK_RUN_MARKER': marker})
        self.assertEqual(r.returncode, 5, r.stderr)
        self.assertIn('running it untraced', r.stderr.decode())
        self.assertTrue(os.path.exists(marker))

    def test_daemon_refusing_the_attach_leaves_nothing_behind(self):
        daemon = self.start_daemon()
        marker = os.path.join(self.workdir, 'ran')
        r = self.run_ctl(daemon.socket_path, '--obj', '/etc/hostname', '--', program('leak-run'),
                         env={'LEAK_RUN_MARKER': marker})
        self.assertEqual(r.returncode, 125, r.stderr)
        self.assertIn('cannot trace', r.stderr.decode())
        self.assert_never_ran(marker)
        self.assertEqual(daemon.status()['targets'], [])

    def test_client_killed_while_cmd_is_held(self):
        """A daemon that takes the attach and never answers holds CMD; SIGKILL memleakctl then:
        the held child dies with it and CMD never runs."""
        marker = os.path.join(self.workdir, 'ran')
        sock_path = os.path.join(self.workdir, 'silent.sock')
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(sock_path)
        listener.listen(4)
        self.addCleanup(listener.close)
        requests = []

        def silent_daemon():
            conn, _ = listener.accept()
            data = b''
            while b'\n' not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                data += chunk
            requests.append(harness.load_json(data.split(b'\n')[0]))
            time.sleep(30)
            conn.close()

        threading.Thread(target=silent_daemon, daemon=True).start()
        proc = subprocess.Popen([harness.MEMLEAKCTL, '--socket', sock_path, 'run', '--', program('leak-run')],
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=dict(os.environ, LEAK_RUN_MARKER=marker))
        self.addCleanup(lambda: proc.poll() is None and proc.kill())
        self.assertTrue(harness.wait_until(lambda: requests, 10), 'memleakctl sent no attach')
        attach = requests[0]
        self.assertEqual(attach['cmd'], 'attach')
        self.assertEqual(attach['exec'], program('leak-run'))
        held = attach['pid']
        self.assertTrue(os.path.exists(f'/proc/{held}'), 'the held child is not there')
        proc.kill()
        proc.wait(10)

        def gone():
            try:
                with open(f'/proc/{held}/stat') as f:
                    return f.read().split(')')[1].split()[0] in ('Z', 'X')
            except (FileNotFoundError, ProcessLookupError):
                return True     # reaped between the open and the read: gone too

        self.assertTrue(harness.wait_until(gone, 10), 'the held child outlived memleakctl')
        self.assert_never_ran(marker)


if __name__ == '__main__':
    unittest.main(verbosity=2)
