#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Turn a text file into a C header holding it as one string: embed-text.py NAME INPUT OUTPUT
writes `static const char NAME[] = "...";` (memleakctl html's page, kept as a page in the tree)."""
import sys


def c_string_lines(text):
    for line in text.splitlines(keepends=True):
        out = []
        for ch in line:
            if ch == '\\':
                out.append('\\\\')
            elif ch == '"':
                out.append('\\"')
            elif ch == '\n':
                out.append('\\n')
            elif ch == '?':
                out.append('\\?')          # no trigraphs
            elif ord(ch) < 0x20 or ord(ch) == 0x7f:
                out.append('\\%03o' % ord(ch))
            elif ord(ch) > 0x7e:
                out.append(''.join('\\%03o' % b for b in ch.encode('utf-8')))
            else:
                out.append(ch)
        yield '"' + ''.join(out) + '"'


def main():
    name, source, target = sys.argv[1:4]
    with open(source, encoding='utf-8') as f:
        text = f.read()
    with open(target, 'w', encoding='ascii') as f:
        f.write(f'/* Generated from {source.split("/")[-1]} by embed-text.py: edit that file. */\n')
        f.write(f'static const char {name}[] =\n')
        for line in c_string_lines(text):
            f.write('        ' + line + '\n')
        f.write('        ;\n')


if __name__ == '__main__':
    main()
