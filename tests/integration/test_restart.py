# SPDX-License-Identifier: MIT
"""A restart loses nothing: memleakd killed (or stopped) while a traced program goes on leaking and
freeing, started again with the same state and pin directories, adopts it and reports exactly
what it holds; a target that exited meanwhile is reaped, a child one forked meanwhile followed; a
corrupt state file is set aside; an other BPF layout starts clean; memleakd --forget leaves no
pin. The last report of a target that exited before the restart is read back: the same bytes and
allocations per stack, the same symbols (none from a file rebuilt since), until it is detached; a
corrupt one is set aside."""

import glob
import os
import re
import shutil
import signal
import subprocess
import time
import unittest

import harness

PROGRAM = 'leak-restart'
# tests/programs/leak-restart.c
BEFORE = {'leak_before': {'bytes': 1001 * 16, 'allocs': 16}}
HELD = {'held_then_freed': {'bytes': 3003 * 8, 'allocs': 8}}
DOWN = {'leak_while_down': {'bytes': 2002 * 24, 'allocs': 24}}
AFTER = {'leak_after': {'bytes': 4004 * 4, 'allocs': 4}}
# room for every snapshot of a test (100 ms apart): the history before a restart is still there
CONFIG = {'ring_depth': 1000}
NAMES = {'leak_before', 'held_then_freed', 'leak_while_down', 'churn', 'leak_after'}


def read_text(path):
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        return ''


def readelf_build_id(path):
    """The GNU build ID readelf -n prints for the file at path."""
    out = subprocess.run(['readelf', '-n', '--wide', path], capture_output=True, text=True, check=True).stdout
    [build_id] = re.findall(r'Build ID: ([0-9a-f]+)', out)
    return build_id


def fnv1a64(data):
    """common/util.c's fnv1a64 from FNV1A64_INIT: the exited files' checksum."""
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
    return h


def merged(*parts):
    out = {}
    for p in parts:
        out.update(p)
    return out


class Restarts(harness.DaemonTestCase):
    """What the restart tests share (no test of its own)."""

    def same_daemon_again(self, old):
        """A new memleakd with old's configuration, state and pin directories (old is down)."""
        os.replace(old.log_path, old.log_path + '.before-restart')
        d = harness.Daemon(old.workdir, config=CONFIG)
        self.assertEqual((d.pin_directory, d.state_directory), (old.pin_directory, old.state_directory))
        self.daemons.append(d)
        self.addCleanup(self._stop_daemon_at_cleanup, d)
        d.start()
        return d

    def exited_files(self, daemon, pid):
        return sorted(os.path.basename(p) for p in glob.glob(os.path.join(daemon.state_directory,
                                                                          f'exited-{pid}-*.bin')))

    def exited_of(self, daemon, pid):
        """pid's target in the report, if it says exited."""
        targets = [t for t in daemon.report(pid=pid)['targets'] if t['pid'] == pid]
        return targets[0] if targets and targets[0]['exited'] else None

    def kill(self, daemon, sig=signal.SIGKILL):
        """Take daemon down as a crash (SIGKILL) or a stop (SIGTERM) would, its pins left."""
        daemon.stopped_on_purpose = True
        daemon.proc.send_signal(sig)
        status = daemon.proc.wait(15)
        if sig == signal.SIGTERM:
            self.assertEqual(status, 0, f'memleakd exited {status} on SIGTERM; its stderr:\n{daemon.log()}')


class RestartTest(Restarts):

    def link_pins(self, daemon):
        """The probe links pinned for targets (not the daemon's own exec watch, x-...)."""
        links = os.path.join(daemon.pin_directory, 'links')
        return sorted(n for n in os.listdir(links) if n.startswith('s')) if os.path.isdir(links) else []

    def traced_before_the_restart(self):
        """A daemon with leak-restart attached, which has leaked BEFORE and holds HELD."""
        daemon = self.start_daemon(config=CONFIG)
        program = self.start_program(PROGRAM)
        daemon.attach(program.pid)
        program.go()
        program.expect('before')
        expected = merged(BEFORE, HELD)
        report, totals = self.wait_for_totals(daemon, program.pid, NAMES, expected)
        self.assert_totals(report, totals, expected, 'before the restart')
        self.assertTrue(self.link_pins(daemon), 'no probe link pinned for the target')
        # the state file lists it once a snapshot tick saw it recording
        state = os.path.join(daemon.state_directory, 'targets.json')
        self.assertTrue(harness.wait_until(lambda: f'"pid":{program.pid},' in read_text(state), 5),
                        f'{state} does not list pid {program.pid}: {read_text(state)}')
        return daemon, program

    def history_totals(self, daemon, pid):
        entries = daemon.ctl_json('history', '--pid', pid)['targets']
        self.assertEqual([e['pid'] for e in entries], [pid])
        return [(p['t'], p['bytes']) for p in entries[0]['totals']]

    def assert_adopted_and_exact(self, sig):
        daemon, program = self.traced_before_the_restart()
        # the ring holds snapshots of what it leaked, written at each tick with the state
        before_bytes = 1001 * 16 + 3003 * 8
        self.assertTrue(harness.wait_until(
            lambda: sum(1 for _, b in self.history_totals(daemon, program.pid) if b == before_bytes) >= 3, 10))
        time.sleep(0.5)     # a tick or two: the ring file written since
        history = self.history_totals(daemon, program.pid)
        self.kill(daemon, sig)
        # while no daemon runs: more leaks, the held blocks freed, a balanced churn
        program.go()
        program.expect('down')
        daemon = self.same_daemon_again(daemon)
        targets = daemon.status()['targets']
        self.assertEqual([(t['pid'], t['phase'], t['adopted']) for t in targets],
                         [(program.pid, 'recording', True)], f'status after the restart: {targets}')
        self.assertIn(f'Adopted pid {program.pid}', daemon.log())
        # its history goes on: the snapshots taken before the restart come first
        after = self.history_totals(daemon, program.pid)
        self.assertGreaterEqual(len(history), 3)
        self.assertEqual(after[:len(history)], history, f'history before the restart: {history}\nafter: {after}')
        expected = merged(BEFORE, DOWN)
        report, totals = self.wait_for_totals(daemon, program.pid, NAMES, expected)
        self.assert_totals(report, totals, expected, f'after the restart ({signal.Signals(sig).name})')
        # and its probes, the pinned links taken back, go on recording
        program.go()
        program.expect('after')
        expected = merged(BEFORE, DOWN, AFTER)
        report, totals = self.wait_for_totals(daemon, program.pid, NAMES, expected)
        self.assert_totals(report, totals, expected, 'after the restart, leaks made since')
        # a detach removes its pins
        daemon.ctl_ok('detach', '--pid', program.pid)
        harness.wait_until(lambda: not self.link_pins(daemon), 5)
        self.assertEqual(self.link_pins(daemon), [])
        self.assertNotIn(f'"pid":{program.pid},', read_text(os.path.join(daemon.state_directory, 'targets.json')))

    def test_a_sigkilled_daemon_s_target_is_adopted_with_every_block_and_no_freed_one(self):
        self.assert_adopted_and_exact(signal.SIGKILL)

    def test_a_stopped_daemon_s_target_is_adopted_at_the_next_start(self):
        self.assert_adopted_and_exact(signal.SIGTERM)

    def test_a_library_an_adopted_target_loads_after_the_restart_is_walked(self):
        # tests/programs/leak-unwind-dlopen.c (-O2, no frame pointers), adopted, then dlopens
        # libleak-unwind-lib.so and leaks 6 x 111 bytes in lib_leak <- call_plugin <- main. The
        # earlier daemon's probes walk by the tables they had, never this library's: the adopted
        # target is moved to the new daemon's own probes once its tables are in.
        daemon = self.start_daemon(config=CONFIG)
        program = self.start_program('leak-unwind-dlopen')
        daemon.attach(program.pid)
        state = os.path.join(daemon.state_directory, 'targets.json')
        self.assertTrue(harness.wait_until(lambda: f'"pid":{program.pid},' in read_text(state), 5), read_text(state))
        pins_before = self.link_pins(daemon)
        self.kill(daemon)
        daemon = self.same_daemon_again(daemon)
        moved = f'Pid {program.pid} (leak-unwind-dlo) is recorded by this memleakd\'s probes from now on'
        self.assertTrue(harness.wait_until(lambda: moved in daemon.log(), 10), daemon.log())
        # the earlier probes' pins gone, its own pinned: one generation, not the earlier one
        self.assertTrue(harness.wait_until(
            lambda: len({n.split('-')[1] for n in self.link_pins(daemon)}) == 1, 5), self.link_pins(daemon))
        gens = {n.split('-')[1] for n in self.link_pins(daemon)}
        self.assertFalse(gens & {n.split('-')[1] for n in pins_before}, (pins_before, self.link_pins(daemon)))
        def tables():
            status = daemon.status()
            [target] = [t for t in status['targets'] if t['pid'] == program.pid]
            return target['unwind']['tables'], status['limits']['unwind_tables']['building']

        before, _ = tables()
        program.go()
        program.expect('loaded')
        # the snapshot tick sees the library mapped and builds its table: leak once it is in
        self.assertTrue(harness.wait_until(lambda: tables()[0] > before and tables()[1] == 0, 10),
                        f'tables before the dlopen: {before}, now (tables, building): {tables()}')
        program.run_leaks()
        expected = {'lib_leak': {'bytes': 6 * 111, 'allocs': 6}}
        report, totals = self.wait_for_totals(daemon, program.pid, {'lib_leak', 'lib_churn', 'churn'}, expected)
        self.assert_totals(report, totals, expected, 'a library loaded after the restart')
        text = harness.format_stacks(report)
        leaks = [s for s in report['stacks'] if s['frames'] and s['frames'][0]['symbol'] == 'lib_leak']
        self.assertTrue(leaks, text)
        for stack in leaks:
            self.assertEqual([f['symbol'] for f in stack['frames'][:3]], ['lib_leak', 'call_plugin', 'main'], text)
            self.assertIsNone(stack['unwind_stopped'], text)
            self.assertEqual(stack['frames'][-1]['symbol'], '_start', text)
        [target] = report['targets']
        self.assertEqual(target['counters']['unwind_stop_no_table'], 0, target['counters'])
        for counter in ('return_without_entry', 'inflight_stale'):
            self.assertEqual(target['lost'].get(counter, target['counters'].get(counter)), 0, target)

    def test_a_target_that_exited_while_the_daemon_was_down_is_reaped(self):
        daemon, program = self.traced_before_the_restart()
        pid = program.pid
        self.kill(daemon)
        program.kill()
        daemon = self.same_daemon_again(daemon)
        self.assertEqual(daemon.status()['targets'], [])
        self.assertIn(f'pid {pid} exited while memleakd was down', daemon.log())
        self.assertEqual(self.link_pins(daemon), [])
        r = daemon.ctl('report', '--pid', pid)
        self.assertNotEqual(r.returncode, 0, f'a reaped target still reported:\n{r.stdout}')

    def test_a_child_forked_while_the_daemon_was_down_is_followed_after_it(self):
        # tests/programs/leak-service.c: a worker it forks leaks 3 x 256 bytes in worker_leak
        # once sent SIGUSR1
        daemon = self.start_daemon(config=CONFIG)
        service = self.start_program('leak-service')
        daemon.ctl_json('attach', '--pid', service.pid, '--follow-forks')
        state = os.path.join(daemon.state_directory, 'targets.json')
        self.assertTrue(harness.wait_until(lambda: f'"pid":{service.pid},' in read_text(state), 5), read_text(state))
        self.kill(daemon)
        service.proc.stdin.write(b'fork\n')
        service.proc.stdin.flush()
        worker = int(service.line('"forked PID"').split()[1])
        daemon = self.same_daemon_again(daemon)
        self.assertIn(f'pid {service.pid} (leak-service) forked 1 children while memleakd was down', daemon.log())
        self.assertTrue(harness.wait_until(lambda: [t for t in daemon.status()['targets'] if t['pid'] == worker],
                                           harness.REPORT_TIMEOUT_S), daemon.status()['targets'])
        [child] = [t for t in daemon.status()['targets'] if t['pid'] == worker]
        self.assertEqual(child['forked_from'], service.pid, child)
        [parent] = [t for t in daemon.status()['targets'] if t['pid'] == service.pid]
        self.assertEqual((parent['children_forked'], parent['children_followed']), (1, 1), parent)
        os.kill(worker, signal.SIGUSR1)
        self.assertEqual(service.line('"worker PID"'), f'worker {worker}')
        expected = {'worker_leak': {'bytes': 3 * 256, 'allocs': 3}}
        report, totals = self.wait_for_totals(daemon, worker, ('worker_leak', 'service_churn'), expected)
        self.assert_totals(report, totals, expected, 'the worker forked while memleakd was down')

    def test_a_truncated_state_file_is_set_aside_and_the_daemon_starts_clean(self):
        daemon, program = self.traced_before_the_restart()
        self.kill(daemon)
        state = os.path.join(daemon.state_directory, 'targets.json')
        with open(state, 'rb') as f:
            text = f.read()
        with open(state, 'wb') as f:
            f.write(text[:len(text) // 2])
        daemon = self.same_daemon_again(daemon)
        self.assertEqual(daemon.status()['targets'], [])
        self.assertIn('is corrupt', daemon.log())
        self.assertTrue(os.path.exists(state + '.corrupt'))
        self.assertEqual(self.link_pins(daemon), [], 'the probes of a target not adopted stay')
        # and it traces the program anew, from nothing
        daemon.attach(program.pid)
        program.go()
        program.expect('down')
        report, totals = self.wait_for_totals(daemon, program.pid, NAMES, DOWN)
        self.assert_totals(report, totals, DOWN, 'attached anew after a corrupt state file')

    def test_another_bpf_layout_starts_clean(self):
        daemon, program = self.traced_before_the_restart()
        self.kill(daemon)
        layouts = [n for n in os.listdir(daemon.pin_directory) if n.startswith('layout-')]
        self.assertEqual(len(layouts), 1, os.listdir(daemon.pin_directory))
        # what an upgrade would have written: another object's hash
        os.rmdir(os.path.join(daemon.pin_directory, layouts[0]))
        os.mkdir(os.path.join(daemon.pin_directory, 'layout-0123456789abcdef'))
        daemon = self.same_daemon_again(daemon)
        self.assertIn('BPF layout changed: starting clean', daemon.log())
        self.assertEqual(daemon.status()['targets'], [])
        self.assertEqual(self.link_pins(daemon), [])
        daemon.attach(program.pid)
        program.go()
        program.expect('down')
        report, totals = self.wait_for_totals(daemon, program.pid, NAMES, DOWN)
        self.assert_totals(report, totals, DOWN, 'attached anew after a layout change')

    def test_forget_removes_every_pin_and_the_state(self):
        daemon, program = self.traced_before_the_restart()
        self.kill(daemon, signal.SIGTERM)
        self.assertTrue(self.link_pins(daemon))
        r = subprocess.run([harness.MEMLEAKD, '--config', daemon.config_path, '--forget'], capture_output=True,
                           text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertFalse(os.path.exists(daemon.pin_directory), os.listdir(daemon.pin_directory)
                         if os.path.exists(daemon.pin_directory) else '')
        self.assertFalse(os.path.exists(os.path.join(daemon.state_directory, 'targets.json')))
        daemon = self.same_daemon_again(daemon)
        self.assertEqual(daemon.status()['targets'], [])

    def test_a_pin_directory_off_bpffs_is_reported_and_tracing_goes_on(self):
        daemon = self.start_daemon(config={'bpf_pin_directory': os.path.join(self.workdir, 'not-bpffs')})
        self.assertIn('not-bpffs for the pinned BPF maps and links', daemon.log())
        program = self.start_program(PROGRAM)
        daemon.attach(program.pid)
        program.go()
        program.expect('before')
        expected = merged(BEFORE, HELD)
        report, totals = self.wait_for_totals(daemon, program.pid, NAMES, expected)
        self.assert_totals(report, totals, expected, 'with nowhere to pin')
        self.assertEqual(os.listdir(os.path.join(self.workdir, 'not-bpffs')), [])

    def test_a_second_daemon_on_the_same_pin_directory_keeps_off_it(self):
        # sharing the maps would have each purge the other's targets as not its own
        first = self.start_daemon(config=CONFIG)
        second = self.start_daemon(config=dict(CONFIG, bpf_pin_directory=first.pin_directory))
        self.assertIn('another memleakd uses it', second.log())
        self.assertNotIn('another memleakd uses it', first.log())
        program = self.start_program(PROGRAM)
        second.attach(program.pid)
        program.go()
        program.expect('before')
        expected = merged(BEFORE, HELD)
        report, totals = self.wait_for_totals(second, program.pid, NAMES, expected)
        self.assert_totals(report, totals, expected, 'traced by the second daemon, without pins')
        self.assertEqual(self.link_pins(first), [])



class ExitedRestartTest(Restarts):
    """The last report of a target that exited before the restart, kept across it."""

    def leak_and_exit(self, daemon, command=None):
        """leak-restart (or command running it) attached, leaking BEFORE and HELD, then exiting
        with both outstanding; returns it and its last report (polled until it says exited)."""
        program = harness.LeakProgram(PROGRAM, command=command)
        self.addCleanup(program.kill)
        program.expect('ready')
        daemon.attach(program.pid)
        program.go()
        program.expect('before')
        expected = merged(BEFORE, HELD)
        report, totals = self.wait_for_totals(daemon, program.pid, NAMES, expected)
        self.assert_totals(report, totals, expected, 'before its exit')
        # a snapshot of it, for its history
        leaked = sum(v['bytes'] for v in expected.values())
        self.assertTrue(harness.wait_until(
            lambda: any(p['bytes'] == leaked for p in self.history_of(daemon, program.pid)), 10))
        program.proc.stdin.close()      # it exits at the end of its input
        self.assertEqual(program.proc.wait(PROGRAM_WAIT_S), 1)
        self.assertTrue(harness.wait_until(lambda: self.exited_of(daemon, program.pid) is not None, 10),
                        f'pid {program.pid} not reported exited: {daemon.status()}')
        self.assertEqual(len(self.exited_files(daemon, program.pid)), 1,
                         f'no report of pid {program.pid} in {os.listdir(daemon.state_directory)}')
        report = daemon.report(pid=program.pid)
        report['history'] = self.history_of(daemon, program.pid)
        # each heap stack keeps the verdict it had at the exit
        verdicts = [s['verdict'] for s in report['stacks'] if s['pid'] == program.pid and not s['mmap']]
        self.assertTrue(verdicts and all(v in ('growing', 'plateau', 'churn', 'pending') for v in verdicts),
                        harness.format_stacks(report))
        return program, report

    def history_of(self, daemon, pid):
        entries = daemon.ctl_json('history', '--pid', pid)['targets']
        self.assertEqual([e['pid'] for e in entries], [pid])
        return entries[0]['totals']

    def stacks_of(self, report, pid):
        """Each stack of pid: its bytes, blocks, frames and the verdict it had at its exit."""
        return sorted((s['bytes'], s['allocs'], [(f.get('symbol'), f.get('module'), f.get('module_offset'),
                                                  f['build_id']) for f in s['frames']],
                       [s.get(k) for k in ('verdict', 'growth_bytes_per_s', 'snapshots_missing', 'first_bytes')])
                      for s in report['stacks'] if s['pid'] == pid)

    def assert_report_kept(self, daemon, pid, before, what):
        report = daemon.report(pid=pid)
        totals = harness.per_function(report, NAMES, pid=pid)
        self.assert_totals(report, totals, merged(BEFORE, HELD), what)
        self.assertEqual(self.stacks_of(report, pid), self.stacks_of(before, pid), what)
        target = [t for t in report['targets'] if t['pid'] == pid]
        self.assertEqual(len(target), 1, report['targets'])
        self.assertTrue(target[0]['exited'], target[0])
        status = [(t['pid'], t['phase'], t['exited']) for t in daemon.status()['targets']]
        self.assertIn((pid, 'exited', True), status, what)
        # its ring's sums: the same history
        self.assertTrue(before['history'], 'no history before the restart')
        self.assertEqual(self.history_of(daemon, pid), before['history'], what)

    def assert_exited_report_survives(self, sig):
        daemon = self.start_daemon(config=CONFIG)
        program, before = self.leak_and_exit(daemon)
        pid = program.pid
        self.kill(daemon, sig)
        daemon = self.same_daemon_again(daemon)
        self.assert_report_kept(daemon, pid, before, f'after a restart ({signal.Signals(sig).name})')
        self.assertIn('Read back the last reports of 1 targets', daemon.log())
        # and a second restart
        self.kill(daemon, signal.SIGTERM)
        daemon = self.same_daemon_again(daemon)
        self.assert_report_kept(daemon, pid, before, 'after a second restart')
        # a detach removes it, and its file
        daemon.ctl_ok('detach', '--pid', pid)
        self.assertEqual(self.exited_files(daemon, pid), [])
        self.assertNotEqual(daemon.ctl('report', '--pid', pid).returncode, 0)
        self.kill(daemon, signal.SIGTERM)
        daemon = self.same_daemon_again(daemon)
        self.assertEqual(daemon.status()['targets'], [])

    def test_an_exited_target_s_report_survives_a_sigkill_and_another_restart(self):
        self.assert_exited_report_survives(signal.SIGKILL)

    def test_an_exited_target_s_report_survives_a_stop_and_a_start(self):
        self.assert_exited_report_survives(signal.SIGTERM)

    def test_a_corrupt_exited_report_is_set_aside_and_the_others_are_kept(self):
        daemon = self.start_daemon(config=CONFIG)
        first, first_before = self.leak_and_exit(daemon)
        second, second_before = self.leak_and_exit(daemon)
        self.kill(daemon)
        [name] = self.exited_files(daemon, first.pid)
        path = os.path.join(daemon.state_directory, name)
        with open(path, 'rb') as f:
            data = f.read()
        with open(path, 'wb') as f:
            f.write(data[:len(data) - 40])
        daemon = self.same_daemon_again(daemon)
        self.assertIn(f'{name} (corrupt or truncated)', daemon.log())
        self.assertTrue(os.path.exists(path + '.corrupt'))
        self.assertEqual([t['pid'] for t in daemon.status()['targets']], [second.pid])
        self.assert_report_kept(daemon, second.pid, second_before, 'beside a corrupt one')
        self.assertNotEqual(daemon.ctl('report', '--pid', first.pid).returncode, 0)

    def test_a_program_rebuilt_since_its_exit_is_named_by_file_and_offset_only(self):
        daemon = self.start_daemon(config=CONFIG)
        copy = os.path.join(self.workdir, 'leak-restart-copy')
        shutil.copy(os.path.join(harness.PROGRAMS_DIR, PROGRAM), copy)
        program, before = self.leak_and_exit(daemon, command=[copy])
        self.kill(daemon)
        # another build at its path (another build ID): none of its frames may be named after it
        os.unlink(copy)
        shutil.copy(os.path.join(harness.PROGRAMS_DIR, 'leak-exit'), copy)
        daemon = self.same_daemon_again(daemon)
        report = daemon.report(pid=program.pid)
        self.assertEqual(harness.per_function(report, NAMES, pid=program.pid), {})
        stacks = [s for s in report['stacks'] if s['pid'] == program.pid]
        # the same stacks, their frames in the program by file and offset, the library's named
        self.assertEqual(sorted((s['bytes'], s['allocs']) for s in stacks),
                         sorted((s['bytes'], s['allocs']) for s in before['stacks'] if s['pid'] == program.pid))
        in_copy = [f for s in stacks for f in s['frames'] if f.get('module') == copy]
        self.assertTrue(in_copy, stacks)
        self.assertTrue(all(f.get('symbol') is None and f.get('module_offset') is not None for f in in_copy),
                        in_copy)
        before_copy = [(f.get('module'), f.get('module_offset')) for s in before['stacks'] for f in s['frames']
                       if f.get('module') == copy]
        self.assertEqual(sorted((f['module'], f['module_offset']) for f in in_copy), sorted(before_copy))
        self.assertIn(f'pid {program.pid} (leak-restart-co', daemon.log())
        # which build they are in is still said: the one it ran, as its record kept it
        built = readelf_build_id(os.path.join(harness.PROGRAMS_DIR, PROGRAM))
        self.assertNotEqual(built, readelf_build_id(copy))
        self.assertEqual({f['build_id'] for f in in_copy}, {built}, in_copy)

    def test_a_program_reinstalled_since_its_exit_is_named_as_before(self):
        daemon = self.start_daemon(config=CONFIG)
        copy = os.path.join(self.workdir, 'leak-restart-copy')
        shutil.copy(os.path.join(harness.PROGRAMS_DIR, PROGRAM), copy)
        program, before = self.leak_and_exit(daemon, command=[copy])
        self.kill(daemon)
        # the same build at its path, another file (inode): its build ID says it is the same
        inode = os.stat(copy).st_ino
        os.rename(copy, copy + '.old')
        shutil.copy(copy + '.old', copy)
        os.unlink(copy + '.old')
        self.assertNotEqual(os.stat(copy).st_ino, inode)
        daemon = self.same_daemon_again(daemon)
        self.assert_report_kept(daemon, program.pid, before, 'after its program was reinstalled')
        self.assertNotIn('no longer the ones at their paths', daemon.log())

    def test_forget_removes_the_exited_reports(self):
        daemon = self.start_daemon(config=CONFIG)
        program, _ = self.leak_and_exit(daemon)
        self.kill(daemon, signal.SIGTERM)
        r = subprocess.run([harness.MEMLEAKD, '--config', daemon.config_path, '--forget'], capture_output=True,
                           text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.exited_files(daemon, program.pid), [])
        daemon = self.same_daemon_again(daemon)
        self.assertEqual(daemon.status()['targets'], [])


class ExitedRestartKeepsMoreTest(Restarts):
    """What an exited target's kept report holds beyond its rows: the names of its JIT code, the
    target it was followed from, its scan at exit (memleakctl run)."""

    # tests/programs/leak-jit.c (test_jit.py keeps the same numbers)
    JIT = {'jit_leak': {'bytes': 7 * 131, 'allocs': 7}, 'jit_leak_unnamed': {'bytes': 5 * 137, 'allocs': 5},
           'jit_leak_frameless': {'bytes': 3 * 139, 'allocs': 3}}

    def frames_of(self, report, pid):
        return sorted((s['bytes'], s['allocs'], [(f['addr'], f['symbol'], f['offset'], f['module'],
                                                  f['module_offset']) for f in s['frames']])
                      for s in report['stacks'] if s['pid'] == pid)

    def test_an_exited_target_s_jit_frames_are_named_after_a_restart(self):
        daemon = self.start_daemon(config=CONFIG)
        program = harness.LeakProgram('leak-jit', command=[os.path.join(harness.PROGRAMS_DIR, 'leak-jit'),
                                                           '--keep-perf-map'])
        perf_map = f'/tmp/perf-{program.pid}.map'
        self.addCleanup(program.kill)
        self.addCleanup(lambda: os.path.lexists(perf_map) and os.unlink(perf_map))
        program.expect('ready')
        daemon.attach(program.pid)
        program.run_leaks()
        names = set(self.JIT) | {'jit_churn'}
        self.wait_for_totals(daemon, program.pid, names, self.JIT)
        self.assertEqual(program.finish(), 0)
        last = {}

        def named_after_exit():
            last['report'] = daemon.report(pid=program.pid)
            named = [s for s in last['report']['stacks'] if s['frames'][0]['symbol'] == 'jit_leak']
            return last['report']['targets'][0]['exited'] and named and named[0]['frames'][1]['symbol'] == \
                'jit_named_stub'

        self.assertTrue(harness.wait_until(named_after_exit, harness.REPORT_TIMEOUT_S),
                        harness.format_stacks(last['report']))
        before = last['report']
        self.kill(daemon)
        # what names its JIT code after the restart is its kept report, not the map it left
        os.unlink(perf_map)
        daemon = self.same_daemon_again(daemon)
        after = daemon.report(pid=program.pid)
        self.assert_totals(after, harness.per_function(after, names, pid=program.pid), self.JIT, 'after a restart')
        self.assertEqual(self.frames_of(after, program.pid), self.frames_of(before, program.pid),
                         harness.format_stacks(after))
        [named] = [s for s in after['stacks'] if s['frames'][0]['symbol'] == 'jit_leak']
        self.assertEqual([(f['symbol'], f['offset'], f['module']) for f in named['frames'][1:2]],
                         [('jit_named_stub', 6, '[jit]')], named)
        # a second restart: it was written back as it was read
        self.kill(daemon, signal.SIGTERM)
        daemon = self.same_daemon_again(daemon)
        self.assertEqual(self.frames_of(daemon.report(pid=program.pid), program.pid),
                         self.frames_of(before, program.pid))

    def test_a_run_family_s_scans_at_exit_are_the_same_after_a_restart(self):
        # tests/programs/leak-fork-classes.c under memleakctl run --follow-forks: the program and
        # each child it forks (one execs, one is killed) scanned at its exit
        from test_follow_forks import CLASSES_OF, classes_per_function
        daemon = self.start_daemon(config=CONFIG)
        r, run_report = self.run_json(daemon, os.path.join(harness.PROGRAMS_DIR, 'leak-fork-classes'),
                                      options=('--follow-forks',))
        self.assertEqual(r.returncode, 0, r.stderr)
        pids = {what: int(pid) for what, pid in (line.split() for line in r.stdout.decode().splitlines())}
        [pids['parent']] = [t['pid'] for t in run_report['targets'] if t['forked_from'] is None]
        for pid in pids.values():
            self.assertTrue(harness.wait_until(lambda: self.exited_files(daemon, pid), 10), pid)

        def scans(daemon):
            report = daemon.ctl_json('report', '--pid', pids['parent'], '--children', '--top',
                                     harness.UNLIMITED_TOP)
            targets = {t['pid']: t for t in report['targets']}
            self.assertEqual(set(targets), set(pids.values()), report['targets'])
            for what, pid in pids.items():
                self.assertEqual(classes_per_function(report, pid), CLASSES_OF[what],
                                 (what, harness.format_stacks(report)))
            return {pid: (t['forked_from'], t['reachability']) for pid, t in targets.items()}

        before = scans(daemon)
        self.assertTrue(all(reach and reach['at_exit'] for _, reach in before.values()), before)
        self.kill(daemon)
        daemon = self.same_daemon_again(daemon)
        self.assertEqual(scans(daemon), before)

    def test_an_exited_report_an_earlier_version_wrote_is_set_aside(self):
        # MEMEXIT1 (before JIT names, the parent link and the scan were kept): refused as a corrupt
        # file is, not misread (MEMEXIT2, before the verdicts, is read: tests/unit/test-exited-file.c)
        daemon = self.start_daemon(config=CONFIG)
        program = self.start_program('leak-jit')
        daemon.attach(program.pid)
        program.run_leaks()
        self.wait_for_totals(daemon, program.pid, set(self.JIT) | {'jit_churn'}, self.JIT)
        self.assertEqual(program.finish(), 0)
        self.assertTrue(harness.wait_until(lambda: self.exited_files(daemon, program.pid), 10))
        self.kill(daemon)
        [name] = self.exited_files(daemon, program.pid)
        path = os.path.join(daemon.state_directory, name)
        with open(path, 'rb') as f:
            data = bytearray(f.read())
        self.assertEqual(bytes(data[:8]), b'MEMEXIT3')
        data[:8] = b'MEMEXIT1'
        data[-8:] = fnv1a64(bytes(data[:-8])).to_bytes(8, 'little')
        with open(path, 'wb') as f:
            f.write(data)
        daemon = self.same_daemon_again(daemon)
        self.assertIn(f'{name} (corrupt or truncated)', daemon.log())
        self.assertTrue(os.path.exists(path + '.corrupt'))
        self.assertEqual(daemon.status()['targets'], [])

    def family(self, daemon, pid):
        """{pid: (exited, forked_from, worker_leak bytes and allocs)} of report --pid PID --children."""
        report = daemon.ctl_json('report', '--pid', pid, '--children', '--top', harness.UNLIMITED_TOP)
        out = {}
        for t in report['targets']:
            totals = harness.per_function(report, {'worker_leak', 'service_leak', 'service_churn'}, pid=t['pid'])
            out[t['pid']] = (t['exited'], t['forked_from'], totals.get('worker_leak'))
        return out

    def fork_worker(self, daemon, service):
        """A worker leak-service forks, followed, once it leaked 3 x 256 bytes in worker_leak."""
        service.proc.stdin.write(b'fork\n')
        service.proc.stdin.flush()
        worker = int(service.line('"forked PID"').split()[1])
        self.assertTrue(harness.wait_until(lambda: [t for t in daemon.status()['targets'] if t['pid'] == worker],
                                           harness.REPORT_TIMEOUT_S), daemon.status()['targets'])
        os.kill(worker, signal.SIGUSR1)
        self.assertEqual(service.line('"worker PID"'), f'worker {worker}')
        self.wait_for_totals(daemon, worker, ('worker_leak', 'service_churn'), {'worker_leak': WORKER_LEAKED})
        return worker

    def test_followed_children_are_in_their_parent_s_family_after_a_restart(self):
        # tests/programs/leak-service.c: a worker it forks leaks 3 x 256 bytes in worker_leak once
        # sent SIGUSR1, then waits to be killed (at the end of the service's input, if not before)
        daemon = self.start_daemon(config=CONFIG)
        service = self.start_program('leak-service')
        daemon.ctl_json('attach', '--pid', service.pid, '--follow-forks')
        gone, alive = self.fork_worker(daemon, service), self.fork_worker(daemon, service)
        os.kill(gone, signal.SIGKILL)
        self.assertTrue(harness.wait_until(lambda: self.exited_of(daemon, gone) is not None, 10))
        self.assertEqual(len(self.exited_files(daemon, gone)), 1, os.listdir(daemon.state_directory))
        state = os.path.join(daemon.state_directory, 'targets.json')
        self.assertTrue(harness.wait_until(lambda: f'"pid":{alive},' in read_text(state), 5), read_text(state))
        expected = {service.pid: (False, None, None), gone: (True, service.pid, WORKER_LEAKED),
                    alive: (False, service.pid, WORKER_LEAKED)}
        self.assertEqual(self.family(daemon, service.pid), expected, 'before the restart')
        # its parent and the other child live on, adopted
        self.kill(daemon)
        daemon = self.same_daemon_again(daemon)
        self.assertIn(f'Adopted pid {service.pid}', daemon.log())
        self.assertIn(f'Adopted pid {alive}', daemon.log())
        self.assertEqual(self.family(daemon, service.pid), expected, 'after a restart, its parent adopted')
        # the service kills the other at its exit and exits: each kept as it is, all read back
        service.proc.stdin.close()
        self.assertEqual(service.proc.wait(PROGRAM_WAIT_S), 0)
        self.assertTrue(harness.wait_until(lambda: self.exited_of(daemon, service.pid) is not None and
                                           self.exited_of(daemon, alive) is not None, 10))
        expected[service.pid] = (True, None, None)
        expected[alive] = (True, service.pid, WORKER_LEAKED)
        self.assertEqual(self.family(daemon, service.pid), expected, 'its parent exited')
        self.kill(daemon)
        daemon = self.same_daemon_again(daemon)
        self.assertEqual(self.family(daemon, service.pid), expected, 'after a restart, its parent exited')
        # a child alone, as before
        self.assertEqual(set(self.family(daemon, gone)), {gone})

    def test_a_record_written_again_after_a_restart_keeps_the_build_its_frames_are_in(self):
        # a worker of a copy of leak-service exits, then the service; the copy is rebuilt while
        # memleakd is down
        daemon = self.start_daemon(config=CONFIG)
        copy = os.path.join(self.workdir, 'leak-service-copy')
        shutil.copy(os.path.join(harness.PROGRAMS_DIR, 'leak-service'), copy)
        built = readelf_build_id(copy)
        service = harness.LeakProgram('leak-service', command=[copy])
        self.addCleanup(service.kill)
        service.expect('ready')
        daemon.ctl_json('attach', '--pid', service.pid, '--follow-forks')
        gone = self.fork_worker(daemon, service)
        os.kill(gone, signal.SIGKILL)
        self.assertTrue(harness.wait_until(lambda: self.exited_of(daemon, gone) is not None, 10))
        service.proc.stdin.close()
        self.assertEqual(service.proc.wait(PROGRAM_WAIT_S), 0)
        self.assertTrue(harness.wait_until(lambda: self.exited_of(daemon, service.pid) is not None, 10))
        self.kill(daemon)
        os.unlink(copy)
        shutil.copy(os.path.join(harness.PROGRAMS_DIR, 'leak-exit'), copy)
        self.assertNotEqual(readelf_build_id(copy), built)

        def frames_in_copy(daemon):
            report = daemon.report(pid=gone)
            self.assertEqual(harness.per_function(report, {'worker_leak'}, pid=gone), {})
            frames = [f for s in report['stacks'] if s['pid'] == gone for f in s['frames'] if f['module'] == copy]
            self.assertTrue(frames, report['stacks'])
            return {(f['symbol'], f['build_id']) for f in frames}

        daemon = self.same_daemon_again(daemon)
        self.assertEqual(frames_in_copy(daemon), {(None, built)})
        # its parent's record goes: the worker's is written again (it moves up), with the identity
        # of its files it kept, not that of the file at their path now
        [name] = self.exited_files(daemon, gone)
        with open(os.path.join(daemon.state_directory, name), 'rb') as f:
            record = f.read()
        daemon.ctl_ok('detach', '--pid', service.pid)
        with open(os.path.join(daemon.state_directory, name), 'rb') as f:
            self.assertNotEqual(f.read(), record, 'the record was not written again')
        self.kill(daemon)
        daemon = self.same_daemon_again(daemon)
        self.assertEqual(frames_in_copy(daemon), {(None, built)})

    def test_a_run_program_s_scan_at_exit_is_the_same_after_a_restart(self):
        from test_reachability import EXPECTED, classes_by_first_frame
        daemon = self.start_daemon(config=CONFIG)
        r, run_report = self.run_json(daemon, os.path.join(harness.PROGRAMS_DIR, 'leak-reach'), 'exit',
                                      input=b'go\n')
        self.assertEqual(r.returncode, 0, r.stderr)
        pid = run_report['targets'][0]['pid']
        self.assertTrue(harness.wait_until(lambda: self.exited_files(daemon, pid), 10),
                        os.listdir(daemon.state_directory))
        before = daemon.report(pid=pid)
        names = set(EXPECTED) | {'free_block'}
        self.assertEqual(classes_by_first_frame(before, names), EXPECTED, harness.format_stacks(before))
        [target] = before['targets']
        self.assertTrue(target['reachability']['at_exit'], target['reachability'])
        self.assertEqual(target['reachability']['definitely_lost'], {'bytes': 200492, 'allocs': 3})
        self.assertEqual(target['reachability']['indirectly_lost'], {'bytes': 1221, 'allocs': 2})
        for sig in (signal.SIGKILL, signal.SIGTERM):
            self.kill(daemon, sig)
            daemon = self.same_daemon_again(daemon)
            after = daemon.report(pid=pid)
            self.assertEqual(classes_by_first_frame(after, names), EXPECTED, harness.format_stacks(after))
            self.assertEqual(after['targets'][0]['reachability'], target['reachability'],
                             f'after a restart ({signal.Signals(sig).name})')
            self.assertEqual([(s['bytes'], s['reachability']) for s in after['stacks']],
                             [(s['bytes'], s['reachability']) for s in before['stacks']])
            # the text report leads with the lost blocks, as memleakctl run's did
            text = daemon.ctl_ok('report', '--pid', pid).stdout
            self.assertIn('definitely lost: 200492 bytes in 3 blocks, indirectly lost: 1221 bytes in 2 blocks', text)


PROGRAM_WAIT_S = 10
WORKER_LEAKED = {'bytes': 3 * 256, 'allocs': 3}     # tests/programs/leak-service.c's worker_leak


if __name__ == '__main__':
    unittest.main(verbosity=2)
