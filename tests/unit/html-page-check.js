// SPDX-License-Identifier: MIT
// node html-page-check.js PAGE.html: run memleakctl html's page script (tests/unit/data/html-fixture.json
// as its data) against a small DOM of its own, and check what it draws: the suspects, the processes,
// the chart, the flame graph (merged frames, their bytes, a click zooming in and out, the highlight),
// the diff of two snapshots (its order and bytes, other snapshots picked), the table's rows, their
// order, the search, a row opened onto its frames; and that no name reaches the page as markup (the
// script never parses HTML).
'use strict';
const assert = require('assert');
const fs = require('fs');

const html = fs.readFileSync(process.argv[2], 'utf8');
const dataText = html.match(/<script type="application\/json" id="memleakd-data">([\s\S]*?)<\/script>/)[1];
const scripts = html.match(/<script>([\s\S]*?)<\/script>/g);
assert.strictEqual(scripts.length, 1, 'one script');
const script = scripts[0].replace(/^<script>|<\/script>$/g, '');
for (const sink of ['innerHTML', 'outerHTML', 'insertAdjacentHTML', 'document.write', 'eval(', 'Function('])
  assert(!script.includes(sink), `the page's script uses ${sink}`);

class Node {
  constructor(tag) {
    this.tag = tag; this.children = []; this.own = ''; this.className = ''; this.style = {}; this.dataset = {};
    this.attrs = {}; this.listeners = {}; this.parent = null; this.colSpan = 1;
    const self = this;
    this.classList = {
      add(...c) { for (const x of c) if (!self.classes().includes(x)) self.className = (self.className + ' ' + x).trim(); },
      remove(...c) { self.className = self.classes().filter(x => !c.includes(x)).join(' '); },
      contains(c) { return self.classes().includes(c); },
    };
  }
  classes() { return this.className.split(' ').filter(Boolean); }
  set textContent(v) { this.own = String(v); this.children = []; }
  get textContent() { return this.own + this.children.map(c => c.textContent).join(''); }
  appendChild(c) { c.parent = this; this.children.push(c); return c; }
  prepend(c) { c.parent = this; this.children.unshift(c); }
  replaceChildren(...c) { this.children = []; for (const x of c) this.appendChild(x); }
  setAttribute(k, v) { this.attrs[k] = String(v); }
  addEventListener(e, f) { this.listeners[e] = f; }
  after(n) { const p = this.parent; n.parent = p; p.children.splice(p.children.indexOf(this) + 1, 0, n); }
  remove() { const p = this.parent; p.children.splice(p.children.indexOf(this), 1); }
  get nextSibling() { const p = this.parent; return p.children[p.children.indexOf(this) + 1] || null; }
  all(tag) { return [].concat(...this.children.map(c => (c.tag === tag ? [c] : []).concat(c.all(tag)))); }
}

const byId = {};
for (const id of ['generated', 'alerts', 'charts', 'shown', 'other', 'flame', 'flame-crumbs', 'flame-match', 'diff'])
  byId[id] = new Node('div');
for (const id of ['search', 'flame-search']) {
  byId[id] = new Node('input');
  byId[id].value = '';
}
byId['memleakd-data'] = { textContent: dataText };
const targetsBody = new Node('tbody'), stacksBody = new Node('tbody');
const heads = ['bytes', 'allocs', 'verdict', 'growth', 'pid', 'site'].map(k => {
  const th = new Node('th'); th.dataset.key = k; return th;
});
global.document = {
  getElementById: id => byId[id],
  createElement: tag => new Node(tag),
  createElementNS: (ns, tag) => { assert.strictEqual(ns, 'http://www.w3.org/2000/svg'); return new Node(tag); },
  querySelector: s => ({ '#targets tbody': targetsBody, '#stacks tbody': stacksBody,
                         '#stacks th[data-key="bytes"]': heads[0] })[s],
  querySelectorAll: s => { assert.strictEqual(s, '#stacks th'); return heads; },
};
new Function(script)();        // eslint-disable-line no-new-func

const cells = row => row.children.map(c => c.textContent);
const rows = () => stacksBody.children.filter(r => r.classList.contains('stack'));

// the suspects: the growing stack, and the lost one of the exited process
const alerts = byId.alerts.textContent;
assert(alerts.startsWith('2 suspected leaks'), alerts);
assert(alerts.includes('leaky (pid 1234, leaky.service): leak_session+0x18 [leaky] leaky.c:14 grew from 19.5 KiB to 39.1 KiB (666.7 B/s)'), alerts);
assert(alerts.includes('gone (pid 77, cgroup /batch/gone): </script><img src=x onerror=alert(1)>+0x1 [gone]: 400 B definitely lost'), alerts);

// the processes
assert.deepStrictEqual(targetsBody.children.map(cells), [
  ['1234', 'leaky in leaky.service', '58.6 KiB', '110', '+19.5 KiB over 30 s', 'running'],
  // memleakd sampled it as its share of the allocation table filled: since when, at what mean
  ['77', 'gone in cgroup /batch/gone', '492 B', '2', '', 'exited, sampled since ' + new Date(1794999990 * 1000).toLocaleTimeString() +
   ' (its share of the allocation table 85% full), 1 in ~4.0 KiB (estimates)'],
]);

// one chart (the exited process has no series): the total and the three stacks, one line each
const svgs = byId.charts.all('svg');
assert.strictEqual(svgs.length, 1);
assert.strictEqual(svgs[0].all('polyline').length, 4);
assert(byId.charts.textContent.includes('Outstanding memory of leaky (pid 1234, leaky.service) over 30 s, 3 snapshots'));
const legend = byId.charts.children.find(c => c.className === 'legend').children.map(c => c.textContent);
assert.deepStrictEqual(legend, ['total', 'leak_session+0x18 [leaky] leaky.c:14', 'fill_cache+0x9 [leaky] cache.c:7', 'stack 99']);
// the total's line: from the first snapshot at the left to the last at the right
const total = svgs[0].all('polyline')[0].attrs.points.split(' ').map(p => p.split(',').map(Number));
assert.strictEqual(total.length, 3);
assert(total[0][0] < total[1][0] && total[1][0] < total[2][0] && total[0][1] > total[2][1], total);

// the table: by bytes, largest first; the stack of no frames says why
assert.deepStrictEqual(rows().map(r => cells(r)[0]), ['39.1 KiB', '19.5 KiB', '1000 B', '400 B', '92 B']);
assert.deepStrictEqual(cells(rows()[0]), ['39.1 KiB', '100', 'growing', '666.7', '1234 leaky (leaky.service)', 'leak_session+0x18 [leaky] leaky.c:14']);
assert.strictEqual(cells(rows()[4])[5], 'user stack unreadable (EFAULT)');
assert.strictEqual(byId.shown.textContent, '5 of 5 stacks');
assert(byId.other.textContent.startsWith('... and 3 more stacks: 96 B in 3 allocations'));

// a row opens onto its frames, and closes
rows()[0].listeners.click();
assert.strictEqual(stacksBody.children[1].textContent, [
  'leak_session+0x18 [leaky] leaky.c:14', 'handle_request+0x7d [leaky] leaky.c:29', '?? [libfoo.so+0x1234]',
  'JS:^onRequest /srv/app.js:3:9+0xfd [jit]'].join('\n'));
rows()[0].listeners.click();
assert.strictEqual(stacksBody.children.length, 5);
rows()[1].listeners.click();
assert(stacksBody.children[2].textContent.endsWith('[2 more addresses not shown: the frame-pointer chain broke there]'));

// sorted by allocations, then the other way
heads[1].listeners.click();
assert.deepStrictEqual(rows().map(r => cells(r)[1]), ['100', '10', '5', '1', '1']);
heads[1].listeners.click();
assert.deepStrictEqual(rows().map(r => cells(r)[1]), ['1', '1', '5', '10', '100']);

// searched by a function anywhere in a stack, a module, a file,
// and by the unit or cgroup its process was traced in
for (const [q, n] of [['handle_request', 2], ['LIBFOO', 2], ['cache.c', 1], ['onerror', 1], ['nothing such', 0],
                      ['leaky.service', 3], ['/batch/gone', 2]]) {
  byId.search.value = q;
  byId.search.listeners.input();
  assert.strictEqual(rows().length, n, q);
  assert.strictEqual(byId.shown.textContent, `${n} of 5 stacks`);
}

// the flame graph: all processes, each process, then its frames from the outermost down to the one
// that allocated, merged by function (else module+offset), each as wide as its bytes
const flameSvg = () => { const [s] = byId.flame.all('svg'); return s; };
const frames = () => flameSvg().all('g').map(g => ({ name: g.attrs['data-name'], bytes: Number(g.attrs['data-bytes']),
                                                     width: Number(g.attrs['data-width']), depth: Number(g.attrs['data-depth']),
                                                     g: g }));
const frameNamed = name => { const f = frames().filter(x => x.name === name); assert.strictEqual(f.length, 1, name); return f[0]; };
assert.strictEqual(flameSvg().attrs['data-focus'], 'all processes');
assert.deepStrictEqual(frames().map(f => [f.depth, f.name, f.bytes]), [
  [0, 'all processes', 61588],                                  // every stack listed, and the 96 B of the rest
  [1, 'leaky (pid 1234, leaky.service)', 61000],
  [2, 'JS:^onRequest /srv/app.js:3:9', 41000],                  // two stacks through one caller: merged
  [3, 'libfoo.so+0x1234', 41000],                               // no symbol: module and offset
  [4, 'handle_request', 41000],                                 // at two lines, one function
  [5, 'leak_session', 40000],
  [5, 'parse_header', 1000],
  [2, 'fill_cache', 20000],
  [1, 'gone (pid 77, cgroup /batch/gone)', 492],
  [2, '</script><img src=x onerror=alert(1)>', 400],
  [2, '(user stack unreadable (EFAULT))', 92],
  [1, '(3 more stacks, not listed: --top)', 96],
]);
assert.strictEqual(frameNamed('all processes').width, 1000);
assert.strictEqual(frameNamed('handle_request').width, Number((1000 * 41000 / 61588).toFixed(2)));
const tip = f => f.g.all('title')[0].textContent;
assert.strictEqual(tip(frameNamed('handle_request')), 'handle_request\nmodule: /srv/leaky\nat: leaky.c:29, leaky.c:31\n' +
                   '40.0 KiB (41000 bytes) in 105 allocations, 2 stacks, 66.6% of the total');
assert(tip(frameNamed('fill_cache')).endsWith('19.5 KiB (20000 bytes) in 10 allocations, 1 stack, 32.5% of the total'));
// labels fit their frame (too narrow: none); a name is text, never markup
assert.strictEqual(frameNamed('leak_session').g.all('text')[0].textContent, 'leak_session');
assert.strictEqual(frameNamed('</script><img src=x onerror=alert(1)>').g.all('text').length, 0);
assert(tip(frameNamed('</script><img src=x onerror=alert(1)>')).startsWith('</script><img src=x onerror=alert(1)>\nmodule: /srv/gone'));
assert.strictEqual(byId['flame-crumbs'].textContent, 'all processes');

// a click zooms on handle_request: it takes the whole width, its callers above it too, its callees
// share it, the other branches are gone; the path to it is in the crumbs
frameNamed('handle_request').g.listeners.click();
assert.strictEqual(flameSvg().attrs['data-focus'], 'handle_request');
assert.deepStrictEqual(frames().map(f => [f.name, f.width]), [
  ['all processes', 1000], ['leaky (pid 1234, leaky.service)', 1000], ['JS:^onRequest /srv/app.js:3:9', 1000],
  ['libfoo.so+0x1234', 1000], ['handle_request', 1000],
  ['leak_session', Number((1000 * 40000 / 41000).toFixed(2))], ['parse_header', Number((1000 * 1000 / 41000).toFixed(2))],
]);
assert.strictEqual(byId['flame-crumbs'].textContent,
                   'all processes \u203a leaky (pid 1234, leaky.service) \u203a JS:^onRequest /srv/app.js:3:9 \u203a libfoo.so+0x1234 \u203a handle_request');
// deeper, then back out by a crumb (the process), then by the root
frameNamed('parse_header').g.listeners.click();
assert.strictEqual(flameSvg().attrs['data-focus'], 'parse_header');
assert.strictEqual(frames().length, 6);
byId['flame-crumbs'].children.find(c => c.textContent === 'leaky (pid 1234, leaky.service)').listeners.click();
assert.strictEqual(flameSvg().attrs['data-focus'], 'leaky (pid 1234, leaky.service)');
assert.strictEqual(frameNamed('fill_cache').width, Number((1000 * 20000 / 61000).toFixed(2)));
frameNamed('all processes').g.listeners.click();
assert.strictEqual(flameSvg().attrs['data-focus'], 'all processes');
assert.strictEqual(frames().length, 12);

// highlighted: the frames a search matches (by name, module or file), their bytes counted once
byId['flame-search'].value = 'leaky.c';
byId['flame-search'].listeners.input();
const lit = frames().filter(f => f.g.all('rect')[0].attrs.fill === '#c45cd6').map(f => f.name);
assert.deepStrictEqual(lit, ['handle_request', 'leak_session', 'parse_header']);
assert.strictEqual(byId['flame-match'].textContent, 'matched 40.0 KiB (66.6% of the total)');
byId['flame-search'].value = '';
byId['flame-search'].listeners.input();
assert.strictEqual(byId['flame-match'].textContent, '');

// the diff: one per process with two snapshots or more; the oldest and the newest at first
const [part] = byId.diff.children;
assert.strictEqual(byId.diff.children.length, 1);
assert.strictEqual(part.all('h3')[0].textContent, 'leaky (pid 1234, leaky.service): 3 snapshots in the ring, over 30 s');
const [from, to] = part.all('select');
assert.strictEqual(from.all('option').length, 3);
assert.deepStrictEqual([from.value, to.value], ['0', '2']);
const diffRows = () => part.all('tbody')[0].children.map(cells);
const summary = () => part.children.find(c => c.className === 'muted').textContent;
assert.deepStrictEqual(diffRows(), [['+19.5 KiB', '19.5 KiB', '39.1 KiB', '50', 'growing', 'leak_session+0x18 [leaky] leaky.c:14']]);
assert.strictEqual(summary(), 'Total 39.1 KiB \u2192 58.6 KiB (+19.5 KiB) over 30 s; 1 stack grew by 19.5 KiB (of the 3 largest now)');
// the oldest to the middle one: the churn gained more than the leak, so it comes first
to.value = '1';
to.listeners.change();
assert.deepStrictEqual(diffRows(), [['+14.6 KiB', '0 B', '14.6 KiB', '30', 'churn', 'stack 99'],
                                    ['+9.8 KiB', '19.5 KiB', '29.3 KiB', '25', 'growing', 'leak_session+0x18 [leaky] leaky.c:14']]);
assert.deepStrictEqual(part.all('tbody')[0].children.map(r => r.attrs['data-gained']), ['15000', '10000']);
// the middle to the newest: the churn shrank
from.value = '1';
to.value = '2';
from.listeners.change();
assert.deepStrictEqual(diffRows().map(r => r[0]), ['+9.8 KiB']);
assert(summary().endsWith('1 stack grew by 9.8 KiB, 1 shrank by 14.6 KiB (of the 3 largest now)'), summary());
// a row opens onto its frames
part.all('tbody')[0].children[0].listeners.click();
assert.strictEqual(part.all('tbody')[0].children[1].textContent.split('\n')[1], 'handle_request+0x7d [leaky] leaky.c:29');
// nothing grew: said so
from.value = '2';
from.listeners.change();
assert.deepStrictEqual(diffRows(), [['No listed stack grew between these snapshots.']]);

console.log('html page: every check passed');
