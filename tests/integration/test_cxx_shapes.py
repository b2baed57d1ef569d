# SPDX-License-Identifier: MIT
"""C++ as services are built (-O2 -g, frame pointers): a class hierarchy leaking through a virtual
factory, a constructor that leaks, and a leak inside an inlined helper, which shows as a frame of
its own marked inlined, at the helper's line, above the function it was inlined into at the line
of the call."""

import os
import unittest

import harness

PROGRAM = 'leak-cxx-shapes'
SOURCE = os.path.join(os.path.realpath(harness.SOURCE_ROOT), 'tests', 'programs', PROGRAM + '.cpp')

# (bytes per block, blocks) by the demangled name of the function that called new.
LEAKS = {
    'CircleFactory::create(double)': (16, 4),
    'Polygon::Polygon(int)': (48, 3),
    # a static function has no linkage name in DWARF (nor a symbol once inlined): its plain name
    'make_buffer': (40, 5),
}
EXPECTED = {name: {'bytes': size * count, 'allocs': count} for name, (size, count) in LEAKS.items()}


def site_line(marker):
    with open(SOURCE) as f:
        lines = [n for n, text in enumerate(f, 1) if f'// site: {marker}' in text]
    assert len(lines) == 1, (marker, lines)
    return lines[0]


class CxxShapesTest(harness.DaemonTestCase):

    def test_virtual_factory_constructor_and_inlined_helper_leaks_are_exact(self):
        def scenario():
            daemon = self.start_daemon()
            program = self.start_program(PROGRAM)
            daemon.attach(program.pid)
            program.run_leaks()
            return daemon, program, daemon.report(pid=program.pid)

        daemon, program, report = scenario()
        stacks = harness.format_stacks(report)
        # exactly the leaks: the squares (deleted through Shape*) and the Polygon objects are gone
        self.assertEqual(harness.per_first_frame(report, program.pid), EXPECTED, stacks)
        self.assertEqual(report['targets'][0]['outstanding_bytes'], sum(t['bytes'] for t in EXPECTED.values()))
        self.assertEqual({k: v for k, v in report['lost'].items() if v}, {}, 'nothing lost, nothing counted twice')

        def only_stack(first):
            found = [s for s in report['stacks'] if s['frames'][0]['symbol'] == first]
            self.assertEqual(len(found), 1, stacks)
            return found[0]['frames']

        # the virtual call: create() at its line, then the function that called it through the vtable
        frames = only_stack('CircleFactory::create(double)')
        self.assertEqual((frames[0]['file'], frames[0]['line']), (SOURCE, site_line('CircleFactory::create')))
        self.assertFalse(frames[0]['inlined'])
        self.assertEqual([f['symbol'] for f in frames[1:3]], ['build_scene(ShapeFactory* const*, int)', 'main'])

        frames = only_stack('Polygon::Polygon(int)')
        self.assertEqual(frames[0]['line'], site_line('Polygon::Polygon'))
        self.assertEqual(frames[1]['symbol'], 'polygons()')

        # the inlined helper: a frame of its own at the helper's line, sharing its address with
        # the real frame of the function it was inlined into, at the line of the call
        frames = only_stack('make_buffer')
        helper, holder = frames[0], frames[1]
        self.assertTrue(helper['inlined'], helper)
        self.assertIsNone(helper['offset'], helper)
        self.assertEqual((helper['file'], helper['line']), (SOURCE, site_line('make_buffer')))
        self.assertEqual(holder['symbol'], 'fill_buffers()')
        self.assertFalse(holder['inlined'])
        self.assertIsNotNone(holder['offset'])
        self.assertEqual((holder['file'], holder['line']), (SOURCE, site_line('fill_buffers')))
        self.assertEqual(helper['addr'], holder['addr'])
        self.assertEqual(frames[2]['symbol'], 'main')

        # the text report says so too
        text = daemon.ctl_ok('report', '--pid', str(program.pid)).stdout
        self.assertIn(f'make_buffer [inlined] [{PROGRAM}] {SOURCE}:{site_line("make_buffer")}\n', text)
        self.assertIn(f'fill_buffers()+0x', text)
        self.assertIn(f'{SOURCE}:{site_line("fill_buffers")}\n', text)


if __name__ == '__main__':
    unittest.main(verbosity=2)
