# SPDX-License-Identifier: MIT
"""Bad requests over a raw socket: each gets the right error code, and one daemon survives them all."""

import errno
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import harness

MAX_REQUEST_BYTES = 64 * 1024       # MEMLEAK_MAX_REQUEST_BYTES, newline included
MAX_CONNECTIONS = 64                # docs/protocol.md: more are closed at accept
MAX_OBJS = 16


def nonexistent_pid():
    with open('/proc/sys/kernel/pid_max') as f:
        pid = int(f.read()) - 1
    while os.path.exists(f'/proc/{pid}'):
        pid -= 1
    return pid


class BadRequestsTest(unittest.TestCase):
    """One daemon for the whole class: every test abuses it, and it must keep serving."""

    maxDiff = None

    @classmethod
    def setUpClass(cls):
        cls.workdir = tempfile.mkdtemp(prefix='memleakd-it-')
        cls.daemon = harness.Daemon(cls.workdir)
        try:
            cls.daemon.start()
            cls.program = harness.LeakProgram('leak-every-hook')
            cls.program.expect('ready')
        except BaseException:
            sys.stderr.write(f'----- memleakd stderr -----\n{cls.daemon.log()}\n')
            cls.daemon.stop()
            raise
        cls.not_elf = os.path.join(cls.workdir, 'not-an-elf.so')
        with open(cls.not_elf, 'w') as f:
            f.write('this is text, not an ELF object\n' * 100)

    @classmethod
    def tearDownClass(cls):
        cls.program.kill()
        try:
            alive = cls.daemon.alive()
            status = cls.daemon.stop()
            if not alive:
                raise AssertionError(f'memleakd died during the bad requests (status {status}); its stderr:\n'
                                     f'{cls.daemon.log()}')
            if status != 0:
                raise AssertionError(f'memleakd exited {status} on SIGTERM after the bad requests; its stderr:\n'
                                     f'{cls.daemon.log()}')
        finally:
            shutil.rmtree(cls.workdir, ignore_errors=True)

    def tearDown(self):
        if harness.has_failed(self):
            sys.stderr.write(f'\n----- memleakd stderr so far -----\n{self.daemon.log()}'
                             f'----- end of memleakd stderr -----\n')

    def client(self):
        return harness.RawClient(self.daemon.socket_path)

    def assert_still_serving(self):
        self.assertTrue(self.daemon.alive(), f'memleakd died; its stderr:\n{self.daemon.log()}')
        with self.client() as c:
            reply = c.request({'v': 1, 'id': 4242, 'cmd': 'status'})
        self.assertIs(reply.get('ok'), True, reply)
        self.assertEqual(reply['v'], 1, reply)
        self.assertEqual(reply['id'], 4242, reply)
        self.assertEqual(reply['targets'], [], 'no bad request may leave a target behind')

    def assert_error(self, request, code, request_id=None):
        """Send request (an object, or raw text/bytes sent as they are) on a fresh connection and
        check the error reply; then check the daemon still serves."""
        if isinstance(request, dict):
            request = json.dumps(request) + '\n'
        with self.client() as c:
            c.send(request)
            reply = c.read_reply()
        self.assertIs(reply.get('ok'), False, f'request {request!r} got {reply}')
        self.assertEqual(reply.get('v'), 1, reply)
        self.assertIsInstance(reply.get('error'), dict, reply)
        if isinstance(code, str):
            self.assertEqual(reply['error'].get('code'), code, f'request {request!r} got {reply}')
        else:
            self.assertIn(reply['error'].get('code'), code, f'request {request!r} got {reply}')
        self.assertIsInstance(reply['error'].get('message'), str, reply)
        if request_id is not None:
            self.assertEqual(reply.get('id'), request_id, f'the error reply must carry the request id: {reply}')
        self.assert_still_serving()
        return reply

    # Framing and version.

    def test_malformed_json_is_einval(self):
        self.assert_error('{"v": 1, "cmd": "status"\n', 'EINVAL')
        self.assert_error('not json at all\n', 'EINVAL')

    def test_json_array_is_einval(self):
        self.assert_error('[{"v": 1, "cmd": "status"}]\n', 'EINVAL')

    def test_json_scalar_is_einval(self):
        self.assert_error('42\n', 'EINVAL')

    def test_missing_version_is_einval(self):
        self.assert_error({'id': 5, 'cmd': 'status'}, 'EINVAL', request_id=5)

    def test_wrong_version_is_eprotonosupport(self):
        self.assert_error({'v': 2, 'id': 6, 'cmd': 'status'}, 'EPROTONOSUPPORT', request_id=6)

    def test_unknown_command_is_eopnotsupp(self):
        self.assert_error({'v': 1, 'id': 7, 'cmd': 'explode'}, 'EOPNOTSUPP', request_id=7)

    def test_missing_command_is_einval(self):
        self.assert_error({'v': 1, 'id': 8}, 'EINVAL', request_id=8)

    # Fields.

    def test_missing_pid_is_einval(self):
        self.assert_error({'v': 1, 'id': 9, 'cmd': 'attach'}, 'EINVAL', request_id=9)
        self.assert_error({'v': 1, 'id': 10, 'cmd': 'detach'}, 'EINVAL', request_id=10)

    def test_ill_typed_or_out_of_range_pid_is_einval(self):
        for pid in (str(self.program.pid), -self.program.pid, 0, self.program.pid + 0.5, 2 ** 40, None,
                    [self.program.pid], True):
            with self.subTest(pid=pid):
                self.assert_error({'v': 1, 'id': 11, 'cmd': 'attach', 'pid': pid}, 'EINVAL', request_id=11)

    def test_unknown_fields_are_ignored_and_named_in_the_reply(self):
        # a newer client's fields: the request is served, the reply says what was ignored; the
        # report's reply is made off the event loop, as a frame, and says so too
        for cmd in ('status', 'report'):
            with self.subTest(cmd=cmd), self.client() as c:
                reply = c.request({'v': 1, 'id': 12, 'cmd': cmd, 'colour': 'blue',
                                   'newer_\x1b': {'a': [1, None]}})
                self.assertIs(reply.get('ok'), True, reply)
                self.assertEqual(reply['id'], 12, reply)
                self.assertRegex(reply.get('version', ''), r'^\d+\.\d+', reply)
                self.assertEqual(reply.get('warnings'), ['unknown field "colour" ignored',
                                                         'unknown field "newer_\x1b" ignored'], reply)
        with self.client() as c:
            reply = c.request({'v': 1, 'id': 13, 'cmd': 'status'})
        self.assertNotIn('warnings', reply)
        self.assert_still_serving()

    def test_field_of_another_command_is_einval(self):
        self.assert_error({'v': 1, 'id': 13, 'cmd': 'status', 'top': 5}, 'EINVAL', request_id=13)
        self.assert_error({'v': 1, 'id': 14, 'cmd': 'detach', 'pid': self.program.pid, 'min_size': 1},
                          'EINVAL', request_id=14)

    def test_negative_sizes_and_top_are_einval(self):
        self.assert_error({'v': 1, 'id': 15, 'cmd': 'attach', 'pid': self.program.pid, 'min_size': -1},
                          'EINVAL', request_id=15)
        self.assert_error({'v': 1, 'id': 16, 'cmd': 'report', 'top': -1}, 'EINVAL', request_id=16)
        self.assert_error({'v': 1, 'id': 17, 'cmd': 'report', 'min_age_s': 'old'}, 'EINVAL', request_id=17)

    def test_relative_or_too_many_objs_are_einval(self):
        self.assert_error({'v': 1, 'id': 18, 'cmd': 'attach', 'pid': self.program.pid,
                           'objs': ['libc.so.6']}, 'EINVAL', request_id=18)
        self.assert_error({'v': 1, 'id': 19, 'cmd': 'attach', 'pid': self.program.pid,
                           'objs': ['/usr/lib/x86_64-linux-gnu/libc.so.6'] * (MAX_OBJS + 1)},
                          'EINVAL', request_id=19)

    # Targets that cannot be.

    def test_pid_that_does_not_exist_is_esrch(self):
        self.assert_error({'v': 1, 'id': 20, 'cmd': 'attach', 'pid': nonexistent_pid()}, 'ESRCH', request_id=20)

    def test_thread_id_is_einval_naming_its_process(self):
        # a tid (top -H, /proc/PID/task) is not a process: the error names the pid to attach
        started, done = threading.Event(), threading.Event()
        tid = []

        def wait():
            tid.append(threading.get_native_id())
            started.set()
            done.wait(30)
        thread = threading.Thread(target=wait)
        thread.start()
        try:
            started.wait(10)
            reply = self.assert_error({'v': 1, 'id': 25, 'cmd': 'attach', 'pid': tid[0]}, 'EINVAL', request_id=25)
        finally:
            done.set()
            thread.join()
        self.assertIn(f'thread of process {os.getpid()}', reply['error']['message'], reply)

    def start_32_bit_process(self):
        """A process running i386-pause; on a kernel that refuses to run 32-bit programs (ENOEXEC),
        one that names i386-pause as its executable (exe-as), as /proc/PID/exe shows it."""
        i386 = os.path.join(harness.PROGRAMS_DIR, 'i386-pause')
        try:
            return subprocess.Popen([i386])
        except OSError as e:
            if e.errno != errno.ENOEXEC:
                raise
        proc = subprocess.Popen(['/lib64/ld-linux-x86-64.so.2', os.path.join(harness.PROGRAMS_DIR, 'exe-as'), i386],
                                stdout=subprocess.PIPE)
        self.assertEqual(proc.stdout.readline(), b'ready\n')
        self.assertEqual(os.readlink(f'/proc/{proc.pid}/exe'), i386)
        return proc

    def test_32_bit_process_is_einval(self):
        proc = self.start_32_bit_process()
        try:
            reply = self.assert_error({'v': 1, 'id': 27, 'cmd': 'attach', 'pid': proc.pid}, 'EINVAL', request_id=27)
        finally:
            proc.kill()
            proc.wait()
            if proc.stdout:
                proc.stdout.close()
        self.assertIn('runs a 32-bit x86 (i386) program: memleakd traces x86-64 programs only',
                      reply['error']['message'], reply)

    def test_memleakd_itself_is_einval(self):
        reply = self.assert_error({'v': 1, 'id': 26, 'cmd': 'attach', 'pid': self.daemon.proc.pid}, 'EINVAL',
                                  request_id=26)
        self.assertIn('memleakd itself', reply['error']['message'], reply)

    def test_detach_or_report_of_a_pid_not_attached_is_esrch(self):
        self.assert_error({'v': 1, 'id': 21, 'cmd': 'detach', 'pid': self.program.pid}, 'ESRCH', request_id=21)
        self.assert_error({'v': 1, 'id': 22, 'cmd': 'report', 'pid': self.program.pid}, 'ESRCH', request_id=22)

    def test_non_elf_obj_is_einval(self):
        self.assert_error({'v': 1, 'id': 23, 'cmd': 'attach', 'pid': self.program.pid, 'objs': [self.not_elf]},
                          'EINVAL', request_id=23)
        r = self.daemon.ctl('attach', '--pid', self.program.pid, '--obj', self.not_elf)
        self.assertNotEqual(r.returncode, 0, f'memleakctl attach --obj {self.not_elf}: {r.stdout}{r.stderr}')
        self.assert_still_serving()

    def test_nonexistent_obj_is_refused(self):
        # protocol.md names no code for a missing file: ENOENT says it best, EINVAL is acceptable.
        self.assert_error({'v': 1, 'id': 24, 'cmd': 'attach', 'pid': self.program.pid,
                           'objs': [os.path.join(self.workdir, 'no-such-lib.so')]},
                          ('ENOENT', 'EINVAL'), request_id=24)

    # Size limit, boundary included.

    def test_oversized_request_is_e2big_and_closes_the_connection(self):
        line = b'{"v": 1, "id": 25, "cmd": "status", "pad": "' + b'x' * (70 * 1024) + b'"}\n'
        with self.client() as c:
            try:
                c.send(line)
            except (BrokenPipeError, ConnectionResetError):
                pass        # the daemon may close before reading it all; its reply is still queued
            reply = c.read_reply()
            self.assertIs(reply.get('ok'), False, reply)
            self.assertEqual(reply['error']['code'], 'E2BIG', reply)
            self.assertTrue(c.at_eof(), 'the daemon must close the connection after E2BIG')
        self.assert_still_serving()

    def test_oversized_request_without_newline_is_e2big(self):
        with self.client() as c:
            try:
                c.send(b'{"v": 1, "cmd": "status", "pad": "' + b'y' * (MAX_REQUEST_BYTES + 10))
            except (BrokenPipeError, ConnectionResetError):
                pass
            reply = c.read_reply()
            self.assertEqual(reply['error']['code'], 'E2BIG', reply)
            self.assertTrue(c.at_eof(), 'the daemon must close the connection after E2BIG')
        self.assert_still_serving()

    def test_request_of_exactly_the_limit_is_served_one_more_byte_is_e2big(self):
        head, tail = b'{"v": 1, "id": 26, "cmd": "status"', b'}\n'
        exact = head + b' ' * (MAX_REQUEST_BYTES - len(head) - len(tail)) + tail
        self.assertEqual(len(exact), MAX_REQUEST_BYTES)
        with self.client() as c:
            c.send(exact)
            reply = c.read_reply()
        self.assertIs(reply.get('ok'), True, f'a request of exactly {MAX_REQUEST_BYTES} bytes: {reply}')
        self.assertEqual(reply['id'], 26)

        over = head + b' ' * (MAX_REQUEST_BYTES + 1 - len(head) - len(tail)) + tail
        with self.client() as c:
            c.send(over)
            reply = c.read_reply()
        self.assertEqual(reply['error']['code'], 'E2BIG', reply)
        self.assert_still_serving()

    # Connections.

    def test_client_hanging_up_mid_request_is_harmless(self):
        for fragment in (b'{"v": 1, "cmd": "sta', b'{"v": 1, "cmd": "attach", "pid": ', b'{'):
            c = self.client()
            c.send(fragment)
            c.close()
            self.assert_still_serving()

    def test_pipelined_requests_answered_in_order(self):
        with self.client() as c:
            c.send(''.join(json.dumps({'v': 1, 'id': i, 'cmd': 'status'}) + '\n' for i in (31, 32, 33)))
            self.assertEqual([c.read_reply()['id'] for _ in range(3)], [31, 32, 33])

    def test_connection_keeps_serving_after_a_bad_request(self):
        with self.client() as c:
            c.send('{"v": 1, "id": 34, "cmd": \n')
            self.assertEqual(c.read_reply()['error']['code'], 'EINVAL')
            c.send({'v': 1, 'id': 35, 'cmd': 'explode'})
            self.assertEqual(c.read_reply()['error']['code'], 'EOPNOTSUPP')
            reply = c.request({'v': 1, 'id': 36, 'cmd': 'status'})
            self.assertIs(reply['ok'], True, reply)
            self.assertEqual(reply['id'], 36)

    def test_fifty_clients_at_once_each_get_status(self):
        clients = [self.client() for _ in range(50)]
        try:
            for i, c in enumerate(clients):
                c.send({'v': 1, 'id': 1000 + i, 'cmd': 'status'})
            for i, c in enumerate(clients):
                reply = c.read_reply()
                self.assertIs(reply.get('ok'), True, reply)
                self.assertEqual(reply['id'], 1000 + i)
        finally:
            for c in clients:
                c.close()
        self.assert_still_serving()

    def test_silent_clients_do_not_stall_others(self):
        silent = self.client()                  # connects, sends nothing
        half = self.client()
        half.send(b'{"v": 1, "id": 37, "cmd": "st')     # half a request, then nothing
        try:
            for i in range(5):
                started = time.monotonic()
                with self.client() as c:
                    reply = c.request({'v': 1, 'id': 40 + i, 'cmd': 'status'})
                self.assertIs(reply['ok'], True, reply)
                self.assertLess(time.monotonic() - started, 2.0, 'status took long while a client was silent')
            # The half-sent request completes normally once the rest arrives.
            half.send(b'atus"}\n')
            reply = half.read_reply()
            self.assertIs(reply['ok'], True, reply)
            self.assertEqual(reply['id'], 37)
        finally:
            silent.close()
            half.close()
        self.assert_still_serving()

    def test_connections_past_the_limit_are_closed_and_the_rest_served(self):
        # One at a time, each served before the next connects, all kept open: the first 64 are
        # served, every one past them is told why (EUSERS) and closed at accept.
        clients, served, closed = [], 0, 0
        try:
            for i in range(MAX_CONNECTIONS + 6):
                c = self.client()
                clients.append(c)
                try:
                    c.send({'v': 1, 'id': 2000 + i, 'cmd': 'status'})
                    line = c.read_line()
                except (BrokenPipeError, ConnectionResetError):
                    line = None
                if line is None or harness.load_json(line).get('error', {}).get('code') == 'EUSERS':
                    if line is not None:
                        self.assertTrue(c.at_eof(), 'a refused connection stays open')
                    closed += 1
                else:
                    reply = harness.load_json(line)
                    self.assertIs(reply['ok'], True, line)
                    self.assertEqual(reply['id'], 2000 + i)
                    served += 1
                    self.assertEqual(closed, 0, f'connection {i} served after an earlier one was refused')
            self.assertEqual((served, closed), (MAX_CONNECTIONS, 6))
        finally:
            for c in clients:
                c.close()
        # Connections are released when clients leave: a new one is served.
        self.assertTrue(harness.wait_until(self._status_ok, 5, interval=0.05))
        self.assert_still_serving()

    def _status_ok(self):
        try:
            with self.client() as c:
                return c.request({'v': 1, 'cmd': 'status'}).get('ok') is True
        except (OSError, AssertionError):
            return False


if __name__ == '__main__':
    unittest.main(verbosity=2)
