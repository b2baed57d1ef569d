#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Hold the docs to the tree they describe:

- README.md opens with the title and the two commands CI and newcomers rely on (scripts/demo.sh,
  tests/run.sh), and stays a five-minute read (at most 150 lines; the rest lives in docs/);
- every relative link in README.md, CONTRIBUTING.md and docs/*.md names a file that exists;
- docs/architecture.md counts the components daemon/meson.build builds, and its table lists each
  of them, in the build's order, with the components its meson.build declares ("uses").

usage: check-docs.py SOURCE_ROOT"""

import glob
import importlib.util
import os
import re
import sys

README_MAX_LINES = 150
README_HEAD = [r'# memleakd$', r'$', r'```sh$', r'scripts/demo\.sh\s+#', r'tests/run\.sh\s+#', r'```$']
NUMBERS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten',
           'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen',
           'nineteen', 'twenty']
LINK = re.compile(r'\]\(([^)\s]+)\)')


def read(path):
    with open(path) as f:
        return f.read()


def component_graph(root):
    """daemon/meson.build's components in build order and each one's declared dependencies, as
    check-components.py reads them."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'check-components.py')
    spec = importlib.util.spec_from_file_location('check_components', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.components(os.path.join(root, 'daemon'))


def check_readme(root, problems):
    lines = read(os.path.join(root, 'README.md')).split('\n')
    for i, pattern in enumerate(README_HEAD):
        if i >= len(lines) or not re.match(pattern, lines[i]):
            problems.append(f'README.md line {i + 1} should match {pattern!r}: the title and the two '
                            f'commands open the README')
    length = len(lines) - (1 if lines[-1] == '' else 0)
    if length > README_MAX_LINES:
        problems.append(f'README.md has {length} lines, more than {README_MAX_LINES}: move details to docs/')


def check_links(root, problems):
    pages = ['README.md', 'CONTRIBUTING.md'] + sorted(
        os.path.relpath(p, root) for p in glob.glob(os.path.join(root, 'docs', '*.md')))
    for page in pages:
        path = os.path.join(root, page)
        if not os.path.exists(path):
            problems.append(f'{page} is missing')
            continue
        text = re.sub(r'```.*?```', '', read(path), flags=re.S)
        for target in LINK.findall(text):
            if re.match(r'[a-z]+:', target) or target.startswith('#'):
                continue
            file = target.split('#', 1)[0]
            if not os.path.exists(os.path.join(os.path.dirname(path), file)):
                problems.append(f'{page} links to {target}, which does not exist')


def uses_cell(cell, comp, order):
    """The components a table row's "uses" cell names: "all", "all above", or a list."""
    cell = cell.strip()
    above = order[:order.index(comp)]
    if cell == 'all above':
        return set(above)
    if cell == 'all':
        return set(order) - {comp}
    return {c.strip() for c in cell.split(',')} - {'common'}


def check_architecture(root, problems):
    order, deps = component_graph(root)
    text = read(os.path.join(root, 'docs', 'architecture.md'))
    m = re.search(r'memleakd is (\w+) components', text)
    want = NUMBERS[len(order)] if len(order) < len(NUMBERS) else str(len(order))
    if not m:
        problems.append('docs/architecture.md does not say "memleakd is N components"')
    elif m.group(1) != want:
        problems.append(f'docs/architecture.md says {m.group(1)} components; daemon/meson.build builds '
                        f'{len(order)} ({want})')
    rows = []
    for line in text.split('\n'):
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        if line.startswith('|') and len(cells) == 3 and re.fullmatch(r'[a-z]+', cells[0]) and cells[2] != 'uses':
            rows.append(cells)
    listed = [r[0] for r in rows]
    if listed != order:
        problems.append(f'docs/architecture.md lists the components {listed}; daemon/meson.build builds '
                        f'{order}')
    for comp, _, uses in rows:
        if comp not in order:
            continue
        said = uses_cell(uses, comp, order)
        if said != deps[comp]:
            problems.append(f'docs/architecture.md says {comp} uses {sorted(said)}; daemon/{comp}/meson.build '
                            f'declares {sorted(deps[comp])}')


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else '.'
    problems = []
    check_readme(root, problems)
    check_links(root, problems)
    check_architecture(root, problems)
    for p in problems:
        print(p)
    if problems:
        print(f'{len(problems)} problem(s) in the docs')
        return 1
    print('README.md, the links in the docs and docs/architecture.md agree with the tree')
    return 0


if __name__ == '__main__':
    sys.exit(main())
