# SPDX-License-Identifier: MIT
"""attach --cgroup (tests/programs/leak-service.c): every process of a cgroup v2 directory is
traced, each a target of its own under its pid with the exact bytes it leaked: one moved in before
the attach, one that moves itself in and execs (BPF's exec event), the workers they fork, one moved
in later (the snapshot tick's rescan); report --cgroup sums them; a process outside is not traced;
the churn never shows. The directory removed and made again (a unit's restart: a new cgroup id) is
watched again and a process started in it traced. Bad names, paths that are no cgroup, an empty
cgroup and a cgroup that disappears are answered clearly."""

import json
import os
import signal
import subprocess
import time
import unittest

import harness

PROGRAM = 'leak-service'
NAMES = {'service_leak', 'worker_leak', 'service_churn'}
SERVICE = {'service_leak': {'bytes': 4 * 500, 'allocs': 4}}
WORKER = {'worker_leak': {'bytes': 3 * 256, 'allocs': 3}}


# Where memleakd mounts cgroup2 when none is (daemon/core/mounts.h): a container that shows only
# cgroup v1 (CI's), a host booted in the legacy layout. The tests mount it there too.
CGROUP2_FALLBACK = '/run/memleakd/cgroup2'


def cgroup2_mount():
    with open('/proc/self/mountinfo') as f:
        for line in f:
            left, right = line.split(' - ', 1)
            if right.split()[0] == 'cgroup2':
                return left.split()[4]
    os.makedirs(CGROUP2_FALLBACK, mode=0o755, exist_ok=True)
    subprocess.run(['mount', '-t', 'cgroup2', 'cgroup2', CGROUP2_FALLBACK], check=True)
    return CGROUP2_FALLBACK


class CgroupTestCase(harness.DaemonTestCase):
    def make_cgroup(self, *below):
        """A cgroup directory of the test's own (removed at cleanup, once its processes left)."""
        root = cgroup2_mount()
        path = os.path.join(root, f'memleakd-it-{os.getpid()}-{time.monotonic_ns()}', *below)
        parts = []
        for part in os.path.relpath(path, root).split('/'):
            parts.append(part)
            d = os.path.join(root, *parts)
            if not os.path.isdir(d):
                os.mkdir(d)
                self.addCleanup(self.remove_cgroup, d)
        return path

    @staticmethod
    def remove_cgroup(path):
        for _ in range(200):
            try:
                os.rmdir(path)
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.025)   # killed processes leave it as they are reaped
        os.rmdir(path)

    def start_in(self, cgroup):
        """leak-service started by a shell that moves itself into cgroup and execs it: it enters
        the cgroup without a fork there, and execs in it."""
        command = ['sh', '-c', f'echo $$ > {cgroup}/cgroup.procs && exec {os.path.join(harness.PROGRAMS_DIR, PROGRAM)}']
        p = harness.LeakProgram(PROGRAM, command=command)
        self.addCleanup(p.kill)
        p.expect('ready')
        return p

    @staticmethod
    def move(pid, cgroup):
        with open(os.path.join(cgroup, 'cgroup.procs'), 'w') as f:
            f.write(f'{pid}\n')

    def wait_target(self, daemon, pid, what):
        def traced():
            return any(t['pid'] == pid and not t['exited'] and t['phase'] == 'recording'
                       for t in daemon.status()['targets'])
        if not harness.wait_until(traced, harness.REPORT_TIMEOUT_S):
            self.fail(f'{what} (pid {pid}) was not traced; status: {json.dumps(daemon.status()["targets"])}')
        return next(t for t in daemon.status()['targets'] if t['pid'] == pid)

    def leak(self, program):
        program.proc.stdin.write(b'leak\n')
        program.proc.stdin.flush()
        program.expect('leaked')

    def fork_worker(self, daemon, program):
        program.proc.stdin.write(b'fork\n')
        program.proc.stdin.flush()
        word, pid = program.line('"forked PID"').split()
        self.assertEqual(word, 'forked')
        pid = int(pid)
        self.wait_target(daemon, pid, 'a worker forked in the cgroup')
        os.kill(pid, signal.SIGUSR1)
        self.assertEqual(program.line('"worker PID"'), f'worker {pid}')
        return pid

    def assert_exact(self, daemon, pid, expected, what):
        report, totals = self.wait_for_totals(daemon, pid, NAMES, expected)
        self.assert_totals(report, totals, expected, what)

    def cgroup_report(self, daemon, cgroup):
        return daemon.ctl_json('report', '--cgroup', cgroup, '--top', harness.UNLIMITED_TOP)


class CgroupWatch(CgroupTestCase):
    def test_every_process_of_a_cgroup_is_traced_with_its_own_exact_bytes(self):
        cgroup = self.make_cgroup('service')
        d = self.start_daemon()
        before = self.start_program(PROGRAM)
        self.move(before.pid, cgroup)
        outside = self.start_program(PROGRAM)

        reply = d.ctl_json('attach', '--cgroup', cgroup)
        self.assertEqual(reply['watch']['cgroup'], cgroup)
        self.assertEqual(reply['watch']['path'], cgroup)
        self.assertEqual([t['pid'] for t in reply['targets']], [before.pid])
        self.assertEqual(reply['targets'][0]['cgroup'], cgroup)
        self.assertIsNone(reply['targets'][0]['unit'])
        self.wait_target(d, before.pid, 'the process moved in before the attach')

        # enters by an exec in it: BPF's exec event
        execd = self.start_in(cgroup)
        self.wait_target(d, execd.pid, 'the process that moved itself in and exec\'d')
        # moved in after the attach, no exec: the snapshot tick's rescan
        later = self.start_program(PROGRAM)
        self.move(later.pid, cgroup)
        self.wait_target(d, later.pid, 'the process moved in after the attach')

        services = [before, execd, later]
        workers = [self.fork_worker(d, before), self.fork_worker(d, execd)]
        for p in services:
            self.leak(p)
        self.leak(outside)
        for p in services:
            self.assert_exact(d, p.pid, SERVICE, f'pid {p.pid} of the cgroup')
        for pid in workers:
            self.assert_exact(d, pid, WORKER, f'worker {pid} of the cgroup')

        report = self.cgroup_report(d, cgroup)
        pids = sorted(t['pid'] for t in report['targets'])
        self.assertEqual(pids, sorted([p.pid for p in services] + workers))
        self.assertTrue(all(t['cgroup'] == cgroup for t in report['targets']), report['targets'])
        self.assertEqual(harness.per_function(report, NAMES), {
            'service_leak': {'bytes': 3 * 4 * 500, 'allocs': 3 * 4},
            'worker_leak': {'bytes': 2 * 3 * 256, 'allocs': 2 * 3},
        })

        status = d.status()
        self.assertNotIn(outside.pid, [t['pid'] for t in status['targets']])
        # attached by its pid, it is no process of the cgroup: status, report and html --cgroup
        # leave it out
        d.attach(outside.pid)
        only = d.ctl_json('status', '--cgroup', cgroup)
        self.assertEqual(sorted(t['pid'] for t in only['targets']), pids)
        self.assertEqual([w['cgroup'] for w in only['watches']], [cgroup])
        self.assertEqual(sorted(t['pid'] for t in self.cgroup_report(d, cgroup)['targets']), pids)
        page = os.path.join(self.workdir, 'service.html')
        d.ctl_ok('html', '--cgroup', cgroup, '--output', page)
        with open(page) as f:
            html = f.read()
        self.assertIn('worker_leak', html)
        self.assertIn(f'"pid":{before.pid},', html.replace(' ', ''))
        self.assertNotIn(f'"pid":{outside.pid},', html.replace(' ', ''))
        self.assertEqual(len(status['watches']), 1)
        watch = status['watches'][0]
        # attached: the three found in the cgroup; processes: with the workers followed from them
        self.assertEqual((watch['cgroup'], watch['processes'], watch['attached'], watch['missed'],
                          watch['failed'], watch['events_lost']), (cgroup, 5, 3, 0, 0, 0))

        # detach --cgroup: the watch ends, its processes are let go
        reply = d.ctl_json('detach', '--cgroup', cgroup)
        self.assertEqual(sorted(t['pid'] for t in reply['targets']), pids)
        status = d.status()
        self.assertEqual(status['watches'], [])
        self.assertEqual([t['pid'] for t in status['targets'] if not t['exited']], [outside.pid])
        for p in services + [outside]:
            self.assertEqual(p.finish(), 0)

    def test_processes_entering_are_found_by_bpf_between_ticks(self):
        """With a snapshot tick far away, only BPF's events find them: the exec in the cgroup, and
        the fork of a process there that is no target (a shell that does not exec)."""
        cgroup = self.make_cgroup('events')
        d = self.start_daemon(config={'snapshot_interval_ms': 600000})
        d.ctl_json('attach', '--cgroup', cgroup)
        execd = self.start_in(cgroup)
        self.wait_target(d, execd.pid, 'the process that moved itself in and exec\'d')
        program = os.path.join(harness.PROGRAMS_DIR, PROGRAM)
        # the shell execs no program of its own: it is no target (no allocator of its own
        # probed in time? it is dash, with glibc: it may be one); its child leak-service is found
        # by its fork, or by its exec, either way between ticks
        forked = harness.LeakProgram(PROGRAM, command=['sh', '-c', f'echo $$ > {cgroup}/cgroup.procs; {program}; :'])
        self.addCleanup(forked.kill)
        forked.expect('ready')
        # its child running the program (no procps on a fresh machine: /proc read here)
        with open(f'/proc/{forked.pid}/task/{forked.pid}/children') as f:
            children = [int(c) for c in f.read().split()]
        [child] = [c for c in children if open(f'/proc/{c}/comm').read().strip() == PROGRAM[:15]]
        self.wait_target(d, child, 'the process forked in the cgroup by a shell')
        self.leak(execd)
        self.assert_exact(d, execd.pid, SERVICE, 'the process that exec\'d in the cgroup')
        forked.proc.stdin.write(b'leak\n')
        forked.proc.stdin.flush()
        forked.expect('leaked')
        self.assert_exact(d, child, SERVICE, 'the process forked in the cgroup')

    def test_a_cgroup_made_again_is_watched_again(self):
        """A unit's restart: systemd removes its cgroup and makes it again (a new id); the process
        that execs in the new one is traced from its first allocations, found by BPF with the new
        id put in its map as the directory is made (inotify), long before the next tick."""
        cgroup = self.make_cgroup('restarted')
        d = self.start_daemon(config={'snapshot_interval_ms': 600000})
        first = self.start_in(cgroup)
        d.ctl_json('attach', '--cgroup', cgroup)
        self.wait_target(d, first.pid, 'the first process')
        first.kill()
        self.remove_cgroup(cgroup)
        self.assertTrue(harness.wait_until(lambda: d.status()['watches'][0]['path'] is None, harness.REPORT_TIMEOUT_S),
                        'the removal was not noticed')
        os.mkdir(cgroup)
        self.assertTrue(harness.wait_until(lambda: d.status()['watches'][0]['path'] == cgroup,
                                           harness.REPORT_TIMEOUT_S), 'the directory made again was not noticed')
        second = self.start_in(cgroup)
        self.wait_target(d, second.pid, 'the process started in the cgroup made again')
        self.leak(second)
        self.assert_exact(d, second.pid, SERVICE, 'the process of the cgroup made again')
        self.assertEqual(second.finish(), 0)

    def test_a_watch_ended_leaves_its_sibling_s_directory_watched(self):
        """Two cgroups side by side share their parent's inotify watch: the one that ends must not
        take it from the other, whose directory made again is still noticed between ticks."""
        stays = self.make_cgroup('stays')
        goes = os.path.join(os.path.dirname(stays), 'goes')
        os.mkdir(goes)
        self.addCleanup(self.remove_cgroup, goes)
        d = self.start_daemon(config={'snapshot_interval_ms': 600000})
        d.ctl_json('attach', '--cgroup', stays)
        d.ctl_json('attach', '--cgroup', goes)
        d.ctl_json('detach', '--cgroup', goes)
        self.remove_cgroup(stays)
        self.assertTrue(harness.wait_until(lambda: d.status()['watches'][0]['path'] is None, harness.REPORT_TIMEOUT_S),
                        d.status()['watches'])
        os.mkdir(stays)
        self.assertTrue(harness.wait_until(lambda: d.status()['watches'][0]['path'] == stays, harness.REPORT_TIMEOUT_S),
                        d.status()['watches'])

    def test_processes_gone_before_they_could_be_attached_are_counted(self):
        """memleakd stopped while a process in the cgroup that is no target runs five commands
        (each forked and exec'd there, gone and reaped before memleakd runs again): BPF's events
        wait in their ring; each command is counted missed, once."""
        cgroup = self.make_cgroup('missed')
        d = self.start_daemon()
        d.ctl_json('attach', '--cgroup', cgroup)
        stopped = True
        os.kill(d.proc.pid, signal.SIGSTOP)

        def resume():
            if stopped:
                os.kill(d.proc.pid, signal.SIGCONT)
        self.addCleanup(resume)
        shell = subprocess.Popen(['sh', '-c', f'echo $$ > {cgroup}/cgroup.procs; echo in; read x; '
                                  'for i in 1 2 3 4 5; do /bin/true; done; echo done; read y'],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.addCleanup(shell.wait)
        self.addCleanup(shell.kill)
        self.assertEqual(shell.stdout.readline(), b'in\n')
        shell.stdin.write(b'go\n')
        shell.stdin.flush()
        self.assertEqual(shell.stdout.readline(), b'done\n')
        os.kill(d.proc.pid, signal.SIGCONT)
        stopped = False
        self.assertTrue(harness.wait_until(lambda: d.status()['watches'][0]['missed'] >= 5, harness.REPORT_TIMEOUT_S),
                        d.status()['watches'])
        # the shell itself, moved in, is found by the tick's rescan
        self.wait_target(d, shell.pid, 'the shell in the cgroup')
        watch = d.status()['watches'][0]
        self.assertEqual((watch['missed'], watch['attached'], watch['failed'], watch['events_lost']), (5, 1, 0, 0),
                         watch)
        shell.stdin.close()

    def test_churn_alone_shows_nothing(self):
        cgroup = self.make_cgroup('churn')
        d = self.start_daemon()
        d.ctl_json('attach', '--cgroup', cgroup)
        p = self.start_in(cgroup)
        self.wait_target(d, p.pid, 'the process started in the cgroup')
        # a worker that only churns would still leak worker_leak: churn in the service alone,
        # through its "leak" path's churn, then free nothing else; compare against SERVICE only
        self.leak(p)
        self.assert_exact(d, p.pid, SERVICE, 'the service (its churn left out)')
        report = self.cgroup_report(d, cgroup)
        self.assertNotIn('service_churn', harness.per_function(report, NAMES))


class CgroupRequests(CgroupTestCase):
    def refused(self, d, args, code, words):
        r = d.ctl(*args, '--json')
        self.assertNotEqual(r.returncode, 0, r.stdout)
        reply = harness.load_json(r.stdout)
        self.assertEqual(reply['error']['code'], code, reply)
        self.assertIn(words, reply['error']['message'])

    def test_bad_units_and_paths_are_refused_clearly(self):
        d = self.start_daemon()
        self.refused(d, ['attach', '--cgroup', '/tmp'], 'ENOENT', 'No cgroup /tmp')
        self.refused(d, ['attach', '--cgroup', '../etc'], 'EINVAL', '')
        self.refused(d, ['attach', '--unit', 'no-such-memleakd-test.service'], 'ENOENT',
                     'No cgroup of unit no-such-memleakd-test.service')
        self.refused(d, ['attach', '--unit', 'nginx'], 'EINVAL', 'not a unit')
        self.refused(d, ['report', '--cgroup', 'not/watched'], 'ESRCH', 'Not watching cgroup not/watched')
        self.refused(d, ['history', '--unit', 'x.service'], 'ESRCH', 'Not watching')
        self.refused(d, ['detach', '--unit', 'x.service'], 'ESRCH', 'Not watching unit x.service')
        raw = d.request({'v': 1, 'id': 3, 'cmd': 'attach', 'pid': 1, 'cgroup': 'x'})
        self.assertEqual(raw['error']['code'], 'EINVAL')
        self.assertEqual(d.status()['watches'], [])

    def test_an_empty_cgroup_is_watched_and_one_that_goes_is_said(self):
        cgroup = self.make_cgroup('empty')
        d = self.start_daemon()
        reply = d.ctl_json('attach', '--cgroup', cgroup)
        self.assertEqual(reply['targets'], [])
        self.refused(d, ['attach', '--cgroup', cgroup], 'EEXIST', 'Already watching')
        # relative to the mount, as systemd names cgroups
        relative = os.path.relpath(cgroup, cgroup2_mount())
        self.refused(d, ['report', '--cgroup', relative], 'ESRCH', 'Not watching')
        self.remove_cgroup(cgroup)
        self.assertTrue(harness.wait_until(lambda: d.status()['watches'][0]['path'] is None,
                                           harness.REPORT_TIMEOUT_S), d.status()['watches'])
        status = d.status()['watches'][0]
        self.assertEqual((status['processes'], status['cgroups'], status['missed']), (0, 0, 0))
        text = d.ctl_ok('status').stdout
        self.assertIn(f'cgroup {cgroup} (no cgroup now', text)


if __name__ == '__main__':
    unittest.main()
