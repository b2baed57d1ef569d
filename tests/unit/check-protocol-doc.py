#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Hold docs/protocol.md to the wire contract in common/:

- every reply field common/reply-fields.h lists for an entity (REPLY_<ENTITY>(X)) is documented in
  the protocol.md section its "docs:" line names (a heading whose first word is that name, with
  its subsections): as a key in a JSON example there, or in backticks (`field`, `a.field`);
- every request and envelope field common/protocol.h names (F_*) is documented under
  "## Requests" or "## Responses";
- every key of protocol.md's JSON examples, and every field its tables list, is a field of the
  contract (reply-fields.h or protocol.h): the docs show nothing the daemon does not send.

usage: check-protocol-doc.py SOURCE_ROOT [--self-test]
(--self-test: check that the check fails on a contract with a field protocol.md does not document,
and on one that lacks a field protocol.md shows)"""

import contextlib
import io
import os
import re
import sys
import tempfile

FIELD = re.compile(r'^#define\s+(RF_\w+)\s+"([^"]+)"', re.M)
REQUEST_FIELD = re.compile(r'^#define\s+(F_\w+)\s+"([^"]+)"', re.M)
# /* what it is.
#  * docs: section section */
# #define REPLY_NAME(X) \
#         X(RF_A) X(RF_B) ...
ENTITY = re.compile(r'^#define\s+REPLY_(\w+)\(X\)((?:[^\n]*\\\n)*[^\n]*)', re.M)
DOCS = re.compile(r'\*\s*docs:\s*([^*]*?)\s*\*/')
USE = re.compile(r'X\((RF_\w+)\)')
HEADING = re.compile(r'^(#{2,6})\s+(.*)$', re.M)
JSON_BLOCK = re.compile(r'```json\n(.*?)```', re.S)
JSON_KEY = re.compile(r'"([A-Za-z_][A-Za-z0-9_]*)"\s*:')
BACKTICKS = re.compile(r'`([^`\n]+)`')
IDENT = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')
TABLE_FIELD = re.compile(r'^\|\s*((?:`[^`]+`(?:,\s*)?)+)\s*\|', re.M)


def read(path):
    with open(path) as f:
        return f.read()


def contract(header):
    """{constant: name}, [(entity, [sections], [names])]"""
    fields = dict(FIELD.findall(header))
    entities = []
    start = 0
    for m in ENTITY.finditer(header):
        name, body = m.group(1), m.group(2)
        docs = DOCS.findall(header, start, m.start())  # the comment above it, after the last entity
        start = m.end()
        if not docs:
            sys.exit(f'reply-fields.h: REPLY_{name} has no "docs:" line in the comment above it')
        names = []
        for const in USE.findall(body):
            if const not in fields:
                sys.exit(f'reply-fields.h: REPLY_{name} lists {const}, which is not defined')
            names.append(fields[const])
        sections = [] if docs[-1].strip() == '-' else docs[-1].split()
        entities.append((name, sections, names))
    return fields, entities


def sections(doc):
    """[(level, first word of the title, text up to the next heading of its level or above)]"""
    heads = list(HEADING.finditer(doc))
    out = []
    for i, h in enumerate(heads):
        level = len(h.group(1))
        end = len(doc)
        for nxt in heads[i + 1:]:
            if len(nxt.group(1)) <= level:
                end = nxt.start()
                break
        word = re.sub(r'[^a-z_]', '', h.group(2).split()[0].lower())
        out.append((level, word, doc[h.start():end]))
    return out


def documented(text):
    """The names a piece of protocol.md documents: JSON keys, identifiers in backticks."""
    names = set(JSON_KEY.findall(text))
    for tick in BACKTICKS.findall(text):
        names.update(IDENT.findall(tick))
    return names


def check(root, header_path):
    fields, entities = contract(read(header_path))
    requests = dict(REQUEST_FIELD.findall(read(os.path.join(root, 'common', 'protocol.h'))))
    doc = read(os.path.join(root, 'docs', 'protocol.md'))
    secs = sections(doc)
    problems = []

    if not entities:
        problems.append('reply-fields.h lists no entity (REPLY_<ENTITY>(X) with a "docs:" line)')
    listed = {n for _, _, names in entities for n in names}
    for const, name in sorted(fields.items()):
        if name not in listed:
            problems.append(f'reply-fields.h: {const} ("{name}") is in no entity\'s REPLY_*(X) list')

    for entity, wanted, names in entities:
        text = ''
        for section in wanted:
            found = [t for _, word, t in secs if word == section]
            if not found:
                problems.append(f'reply-fields.h: REPLY_{entity} is documented under "{section}", '
                                f'which is no heading of docs/protocol.md')
            text += ''.join(found)
        have = documented(text)
        for name in names:
            if wanted and name not in have:
                problems.append(f'docs/protocol.md does not document "{name}" (REPLY_{entity}) under '
                                f'{" or ".join(wanted)}: add it to a JSON example or say what it means there')

    envelope = ''.join(t for _, word, t in secs if word in ('requests', 'responses'))
    have = documented(envelope)
    for const, name in sorted(requests.items()):
        if name not in have:
            problems.append(f'docs/protocol.md does not document "{name}" ({const}, common/protocol.h) '
                            f'under Requests or Responses')

    known = set(fields.values()) | set(requests.values())
    for block in JSON_BLOCK.findall(doc):
        for key in sorted(set(JSON_KEY.findall(block))):
            if key not in known:
                problems.append(f'docs/protocol.md shows "{key}" in a JSON example: no field of the '
                                f'contract (common/reply-fields.h, common/protocol.h) has that name')
    for cell in TABLE_FIELD.findall(doc):
        for key in BACKTICKS.findall(cell):
            if key not in known and key != 'field':
                problems.append(f'docs/protocol.md lists `{key}` in a table of fields: no field of the '
                                f'contract has that name')

    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        return 1
    print(f'{len(entities)} reply entities, {len(fields)} reply fields and {len(requests)} request and '
          f'envelope fields: each documented in docs/protocol.md, which documents no other')
    return 0


def fails_on(root, header, expected):
    """Whether the check, run on header instead of common/'s, fails saying expected."""
    with tempfile.NamedTemporaryFile('w', suffix='.h') as f:
        f.write(header)
        f.flush()
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            r = check(root, f.name)
    if r == 0 or expected not in err.getvalue():
        print(f'self-test: the check passed, or failed without saying {expected!r}:\n{err.getvalue()}',
              file=sys.stderr)
        return False
    return True


def self_test(root):
    header = read(os.path.join(root, 'common', 'reply-fields.h'))
    undocumented = header.replace('#define REPLY_STACK(X) \\\n',
                                  '#define REPLY_STACK(X) X(RF_NO_SUCH_FIELD) \\\n') + \
        '#define RF_NO_SUCH_FIELD "no_such_field"\n'
    missing = re.sub(r'^#define RF_BYTES_DELTA .*\n', '', header, flags=re.M).replace(' X(RF_BYTES_DELTA)', '')
    if undocumented == header or missing == header:
        print('self-test: REPLY_STACK or RF_BYTES_DELTA is not where the self-test expects it', file=sys.stderr)
        return 1
    ok = fails_on(root, undocumented, 'does not document "no_such_field" (REPLY_STACK)')
    ok = fails_on(root, missing, 'shows "bytes_delta" in a JSON example') and ok
    if ok:
        print('self-test: an undocumented field and a documented field the contract lacks both fail the check')
    return 0 if ok else 1


def main():
    root = sys.argv[1]
    if sys.argv[2:] == ['--self-test']:
        return self_test(root)
    return check(root, os.path.join(root, 'common', 'reply-fields.h'))


if __name__ == '__main__':
    sys.exit(main())
