# SPDX-License-Identifier: MIT
"""Who may do what, as real users: root (and admin_group) everything; any other member of the
socket's group only what ptrace would let it do, to its own processes, and it sees only those."""

import grp
import json
import os
import pwd
import shutil
import subprocess
import unittest

import harness

PROGRAM = 'leak-exit'
EXPECTED = {'leak_then_exit': {'bytes': 3001 * 13, 'allocs': 13}}     # tests/programs/leak-exit.c
NAMES = {'leak_then_exit', 'main'}


def run(*cmd):
    subprocess.run(cmd, check=True, capture_output=True)


class AccessTest(harness.DaemonTestCase):

    def setUp(self):
        super().setUp()
        # a group for the socket and a user in it, and another user outside it (each test's own)
        tag = f'{os.getpid() % 100000}'
        self.group = f'mlkit{tag}'
        self.user = f'mlkitu{tag}'
        self.other = f'mlkito{tag}'
        run('groupadd', self.group)
        self.addCleanup(run, 'groupdel', self.group)
        for name, groups in ((self.user, [self.group]), (self.other, [])):
            run('useradd', '--no-create-home', '--shell', '/bin/sh', '--user-group',
                *(['--groups', ','.join(groups)] if groups else []), name)
            self.addCleanup(run, 'userdel', name)
        # what the users run, where they can (the build tree may sit under a directory only root
        # may enter); the test's directory searchable by them
        os.chmod(self.workdir, 0o711)
        self.bin = os.path.join(self.workdir, 'bin')
        os.mkdir(self.bin, 0o755)
        for path in (os.path.join(harness.PROGRAMS_DIR, PROGRAM), harness.MEMLEAKCTL):
            shutil.copy(path, self.bin)
        self.home = os.path.join(self.workdir, 'home')
        os.mkdir(self.home, 0o700)
        os.chown(self.home, pwd.getpwnam(self.user).pw_uid, pwd.getpwnam(self.user).pw_gid)
        self.daemon = self.start_daemon(extra_config_lines=[f'socket_group = {self.group}', 'socket_mode = 0660'])
        os.chmod(os.path.dirname(self.daemon.socket_path), 0o711)

    def as_user(self, user, *cmd):
        """cmd run as user (its own groups), its argv unchanged: setpriv execs it."""
        return ['setpriv', f'--reuid={user}', f'--regid={user}', '--init-groups', '--reset-env', *cmd]

    def program_as(self, user):
        p = harness.LeakProgram(PROGRAM, command=self.as_user(user, os.path.join(self.bin, PROGRAM)))
        self.addCleanup(p.kill)
        p.expect('ready')
        return p

    def ctl_as(self, user, *args):
        return subprocess.run(self.as_user(user, os.path.join(self.bin, 'memleakctl'), '--socket',
                                           self.daemon.socket_path, *map(str, args)),
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=harness.CTL_TIMEOUT_S)

    def json_as(self, user, *args):
        r = self.ctl_as(user, *args, '--json')
        self.assertEqual(r.returncode, 0, (args, r.stderr, self.daemon.log()))
        return harness.load_json(r.stdout)

    def assert_refused(self, r, what):
        self.assertNotEqual(r.returncode, 0, (what, r.stdout))
        self.assertIn('(EPERM)', r.stderr, what)

    def test_a_user_traces_its_own_processes_and_sees_no_one_else_s(self):
        mine = self.program_as(self.user)
        theirs = self.program_as(self.other)
        roots = harness.LeakProgram(PROGRAM)
        self.addCleanup(roots.kill)
        roots.expect('ready')
        self.daemon.attach(roots.pid)

        # its own process: attached, reported exactly
        reply = self.json_as(self.user, 'attach', '--pid', mine.pid)
        self.assertEqual(reply['target']['pid'], mine.pid)
        mine.go()
        mine.expect('done')
        report = self.json_as(self.user, 'report', '--pid', mine.pid, '--top', harness.UNLIMITED_TOP)
        self.assertEqual(harness.per_function(report, NAMES, pid=mine.pid), EXPECTED, report)

        # another user's and root's: refused, as ptrace would; the kernel too
        self.assert_refused(self.ctl_as(self.user, 'attach', '--pid', theirs.pid), "another user's")
        self.assert_refused(self.ctl_as(self.user, 'attach', '--pid', os.getpid()), "root's")
        # root's target: not even told it is traced already
        self.assert_refused(self.ctl_as(self.user, 'attach', '--pid', roots.pid), "root's target")
        self.assert_refused(self.ctl_as(self.user, 'attach', '--kernel'), 'the kernel')
        self.assertIn('Refused uid', self.daemon.log())
        # root's target: not shown to it anywhere, and not its to detach or read
        self.assertEqual([t['pid'] for t in self.json_as(self.user, 'status')['targets']], [mine.pid])
        self.assertEqual({t['pid'] for t in self.json_as(self.user, 'report')['targets']}, {mine.pid})
        self.assertEqual({t['pid'] for t in self.json_as(self.user, 'history')['targets']}, {mine.pid})
        for args in (('report', '--pid', roots.pid), ('history', '--pid', roots.pid),
                     ('detach', '--pid', roots.pid)):
            self.assert_refused(self.ctl_as(self.user, *args), args)
        # a user outside the socket's group cannot even connect
        r = self.ctl_as(self.other, 'status')
        self.assertNotEqual(r.returncode, 0, r.stdout)
        # root sees all
        self.assertEqual({t['pid'] for t in self.daemon.status()['targets']}, {mine.pid, roots.pid})
        # its own one, exited, is still its to read and detach
        self.assertEqual(mine.proc.wait(harness.PROGRAM_TIMEOUT_S), 0)
        self.assertTrue(harness.wait_until(
            lambda: [t for t in self.json_as(self.user, 'status')['targets'] if t['exited']], harness.REPORT_TIMEOUT_S))
        report = self.json_as(self.user, 'report', '--pid', mine.pid, '--top', harness.UNLIMITED_TOP)
        self.assertEqual(harness.per_function(report, NAMES, pid=mine.pid), EXPECTED, report)
        self.assertEqual(self.json_as(self.user, 'detach', '--pid', mine.pid)['target']['pid'], mine.pid)

    def test_a_user_runs_its_own_program_under_memleakd(self):
        out = os.path.join(self.home, 'report.json')
        r = subprocess.run(self.as_user(self.user, os.path.join(self.bin, 'memleakctl'), '--socket',
                                        self.daemon.socket_path, 'run', '--json', '--top', str(harness.UNLIMITED_TOP),
                                        '--output', out, '--', os.path.join(self.bin, PROGRAM)),
                           input=b'go\n', capture_output=True, timeout=harness.RUN_TIMEOUT_S)
        self.assertEqual(r.returncode, 0, (r.stderr, self.daemon.log()))
        with open(out) as f:
            report = harness.load_json_file(f)
        [target] = report['targets']
        self.assertEqual(harness.per_function(report, NAMES, pid=target['pid']), EXPECTED, report)
        self.assertEqual(pwd.getpwuid(os.stat(out).st_uid).pw_name, self.user)


    def test_a_user_s_child_that_execs_a_set_user_id_program_is_let_go(self):
        # traced on a user's behalf, a followed child that execs mount (set-user-ID root) would
        # have been traced as root's; it is let go at its exec, as ptrace would not let that user
        # trace it
        out = os.path.join(self.home, 'report.json')
        r = subprocess.run(self.as_user(self.user, os.path.join(self.bin, 'memleakctl'), '--socket',
                                        self.daemon.socket_path, 'run', '--follow-forks', '--json', '--output', out,
                                        '--', '/bin/sh', '-c', '/usr/bin/mount >/dev/null; exit 0'),
                           capture_output=True, timeout=harness.RUN_TIMEOUT_S)
        self.assertEqual(r.returncode, 0, (r.stderr, self.daemon.log()))
        self.assertRegex(self.daemon.log(), r"exec'd mount, which uid \d+, who asked for it, could not trace")
        with open(out) as f:
            report = harness.load_json_file(f)
        self.assertNotIn('mount', [t['comm'] for t in report['targets']], report['targets'])

if __name__ == '__main__':
    unittest.main()
