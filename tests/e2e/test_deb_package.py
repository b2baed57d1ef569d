# SPDX-License-Identifier: MIT
"""memleakd's .deb, the way a packager and an administrator meet it: scripts/build-deb.sh builds it
with dpkg-buildpackage and checks it with lintian (an error fails), then it is installed with dpkg
into a booted Debian 12 container (the root test_systemd_units.py caches), where installing must
enable and start the socket only, memleakd must start on the first request and report a leak
exactly, `systemctl start memleakd` must work, and `dpkg --purge` must leave nothing behind.

Run it through "meson test -C BUILD --suite e2e" (as root), which sets SOURCE_ROOT, BUILD_ROOT and
LEAK_PROGRAM.
"""

import glob
import json
import os
import shutil
import subprocess
import time
import unittest

from test_systemd_units import (Container, LeakProgram, LEAK_COUNT, LEAK_FUNCTION, LEAK_SIZE, REPORT_TIMEOUT_S,
                                SERVICE, SOCKET, env_path, log, run_tests, wait_until)

DEB_IN_CONTAINER = '/memleakd.deb'        # at the top: no directory of the root's to shadow
BUILD_TIMEOUT_S = 600
# What the package installs, and so what a purge must take away.
PACKAGE_FILES = ['/usr/sbin/memleakd', '/usr/bin/memleakctl', '/lib/systemd/system/memleakd.service',
                 '/lib/systemd/system/memleakd.socket', '/usr/share/memleakd/memleakd.conf']


def build_deb(source_root, out_dir):
    started = time.monotonic()
    result = subprocess.run([os.path.join(source_root, 'scripts', 'build-deb.sh'), out_dir],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=BUILD_TIMEOUT_S)
    if result.returncode != 0:
        raise AssertionError(f'scripts/build-deb.sh failed ({result.returncode}):\n{result.stdout[-6000:]}')
    debs = [d for d in glob.glob(os.path.join(out_dir, 'memleakd_*.deb'))]
    if len(debs) != 1:
        raise AssertionError(f'expected one memleakd_*.deb in {out_dir}, found {debs}')
    log(f'built {os.path.basename(debs[0])} in {time.monotonic() - started:.0f} s')
    return debs[0], result.stdout


class DebPackageTest(unittest.TestCase):
    container = None

    @classmethod
    def setUpClass(cls):
        if os.geteuid() != 0:
            raise RuntimeError('the .deb test installs build tools and boots a container: run it as root')
        out_dir = os.path.join(env_path('BUILD_ROOT'), 'deb')
        cls.deb, cls.build_log = build_deb(env_path('SOURCE_ROOT'), out_dir)
        cls.container = Container(env_path('BUILD_ROOT'), env_path('LEAK_PROGRAM'), install_build=False)
        cls.addClassCleanup(cls._destroy_container)
        cls.container.create()
        shutil.copy2(cls.deb, cls.container.upper_path(DEB_IN_CONTAINER))
        cls.container.boot()

    @classmethod
    def _destroy_container(cls):
        problems = cls.container.destroy()
        if problems:
            raise AssertionError('teardown: ' + '; '.join(problems))

    def run_in(self, *args, check=True):
        return self.container.run(*args, check=check)

    def state(self, unit, prop='ActiveState'):
        return self.run_in('systemctl', 'show', '-P', prop, unit).stdout.strip()

    def exists(self, path):
        return os.path.lexists(self.container.path(path))

    def test_install_use_and_purge(self):
        c = self.container
        # lintian ran in build-deb.sh and failed it on any error; its warnings are in the log.
        self.assertIn('build-deb.sh: ', self.build_log)

        self.run_in('dpkg', '-i', DEB_IN_CONTAINER)
        for path in PACKAGE_FILES:
            self.assertTrue(self.exists(path), f'{path} is not installed')
        self.assertFalse(self.exists('/etc/memleakd/memleakd.conf'), 'the package ships an /etc file')
        # The socket is enabled and listening; no idle daemon holds BPF maps.
        self.assertEqual(self.run_in('systemctl', 'is-enabled', SOCKET, check=False).stdout.strip(), 'enabled')
        self.assertEqual(self.state(SOCKET), 'active')
        self.assertEqual(self.run_in('systemctl', 'is-enabled', SERVICE, check=False).stdout.strip(), 'disabled')
        self.assertEqual(self.state(SERVICE), 'inactive')

        # The first request starts memleakd through its socket; it traces a leak exactly.
        program = LeakProgram(c)
        try:
            out = self.run_in('memleakctl', 'attach', '--pid', program.pid).stdout
            self.assertIn(f'Attached to pid {program.pid} ', out)
            self.assertEqual(self.state(SERVICE), 'active')
            program.leak()

            def exact():
                r = json.loads(self.run_in('memleakctl', 'report', '--json', '--pid', program.pid).stdout)
                t = [t for t in r['targets'] if t['pid'] == program.pid]
                return r if t and (t[0]['outstanding_bytes'], t[0]['outstanding_allocs']) == \
                    (LEAK_SIZE * LEAK_COUNT, LEAK_COUNT) else None

            r = wait_until(exact, REPORT_TIMEOUT_S)
            self.assertTrue(r, self.run_in('memleakctl', 'report', '--pid', program.pid).stdout)
            # each frame once, in locations: a stack names its frames by index
            self.assertEqual(r['locations'][r['stacks'][0]['locations'][0]]['symbol'], LEAK_FUNCTION, r)
        finally:
            program.stop()

        # Stopped and started by hand, as an administrator does.
        self.run_in('systemctl', 'stop', SERVICE, SOCKET)
        self.run_in('systemctl', 'start', SERVICE)
        self.assertEqual(self.state(SERVICE), 'active')
        self.assertIn('"targets"', self.run_in('memleakctl', 'status', '--json').stdout)

        # Removal stops both units and takes every file; purge leaves no trace in /etc or systemd.
        self.run_in('dpkg', '-r', 'memleakd')
        self.assertEqual(self.state(SERVICE), 'inactive')
        self.assertEqual(self.state(SOCKET), 'inactive')
        for path in PACKAGE_FILES:
            self.assertFalse(self.exists(path), f'{path} is left after dpkg -r')
        # nor the maps and links memleakd keeps pinned for its next start
        pinned = self.run_in('sh', '-c', 'ls -A /sys/fs/bpf/memleakd 2>/dev/null', check=False).stdout
        self.assertEqual(pinned, '', 'dpkg -r left pins in /sys/fs/bpf/memleakd')
        self.run_in('dpkg', '--purge', 'memleakd')
        self.assertFalse(self.exists('/etc/memleakd'), 'dpkg --purge left /etc/memleakd')
        left = glob.glob(c.path('/etc/systemd/system/**/memleakd*'), recursive=True)
        self.assertEqual(left, [], 'dpkg --purge left unit links')
        self.assertEqual(self.run_in('dpkg-query', '-W', 'memleakd', check=False).returncode, 1)


def main():
    run_tests(DebPackageTest)


if __name__ == '__main__':
    main()
