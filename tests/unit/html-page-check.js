// SPDX-License-Identifier: MIT
// node html-page-check.js PAGE.html: run memleakctl html's page script (tests/unit/data/html-fixture.json
// as its data) against a small DOM of its own, and check what it draws: the suspects, the processes,
// the chart, the table's rows, their order, the search, a row opened onto its frames; and that no
// name reaches the page as markup (the script never parses HTML).
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
  replaceChildren() { this.children = []; }
  setAttribute(k, v) { this.attrs[k] = String(v); }
  addEventListener(e, f) { this.listeners[e] = f; }
  after(n) { const p = this.parent; n.parent = p; p.children.splice(p.children.indexOf(this) + 1, 0, n); }
  remove() { const p = this.parent; p.children.splice(p.children.indexOf(this), 1); }
  get nextSibling() { const p = this.parent; return p.children[p.children.indexOf(this) + 1] || null; }
  all(tag) { return [].concat(...this.children.map(c => (c.tag === tag ? [c] : []).concat(c.all(tag)))); }
}

const byId = {};
for (const id of ['generated', 'alerts', 'charts', 'shown', 'other']) byId[id] = new Node('div');
byId.search = new Node('input');
byId.search.value = '';
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
assert.deepStrictEqual(rows().map(r => cells(r)[0]), ['39.1 KiB', '19.5 KiB', '400 B', '92 B']);
assert.deepStrictEqual(cells(rows()[0]), ['39.1 KiB', '100', 'growing', '666.7', '1234 leaky (leaky.service)', 'leak_session+0x18 [leaky] leaky.c:14']);
assert.strictEqual(cells(rows()[3])[5], 'user stack unreadable (EFAULT)');
assert.strictEqual(byId.shown.textContent, '4 of 4 stacks');
assert(byId.other.textContent.startsWith('... and 3 more stacks: 96 B in 3 allocations'));

// a row opens onto its frames, and closes
rows()[0].listeners.click();
assert.strictEqual(stacksBody.children[1].textContent, [
  'leak_session+0x18 [leaky] leaky.c:14', 'handle_request+0x7d [leaky] leaky.c:29', '?? [libfoo.so+0x1234]',
  'JS:^onRequest /srv/app.js:3:9+0xfd [jit]'].join('\n'));
rows()[0].listeners.click();
assert.strictEqual(stacksBody.children.length, 4);
rows()[1].listeners.click();
assert(stacksBody.children[2].textContent.endsWith('[2 more addresses not shown: the frame-pointer chain broke there]'));

// sorted by allocations, then the other way
heads[1].listeners.click();
assert.deepStrictEqual(rows().map(r => cells(r)[1]), ['100', '10', '1', '1']);
heads[1].listeners.click();
assert.deepStrictEqual(rows().map(r => cells(r)[1]), ['1', '1', '10', '100']);

// searched by a function anywhere in a stack, a module, a file,
// and by the unit or cgroup its process was traced in
for (const [q, n] of [['handle_request', 1], ['LIBFOO', 1], ['cache.c', 1], ['onerror', 1], ['nothing such', 0],
                      ['leaky.service', 2], ['/batch/gone', 2]]) {
  byId.search.value = q;
  byId.search.listeners.input();
  assert.strictEqual(rows().length, n, q);
  assert.strictEqual(byId.shown.textContent, `${n} of 4 stacks`);
}
console.log('html page: every check passed');
