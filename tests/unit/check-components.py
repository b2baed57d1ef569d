#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Hold memleakd's source to its architecture (docs/architecture.md):

- each daemon component (a folder of daemon/, a static library) includes headers only from itself,
  from common/, and from the components its meson.build declares as dependencies;
- those declarations form no cycle, and daemon/meson.build builds each component after the ones it
  uses;
- memleakctl (client/) includes only its own headers and common/'s: the wire protocol is its one
  contract with the daemon;
- a header's functions are named for its file: daemon/targets/probes.h exports probes_*
  (`file name = exported prefix`);
- JSON field names are the contract's (common/reply-fields.h, common/protocol.h): no file of
  daemon/ or client/ adds or reads an object member by a string literal.

usage: check-components.py SOURCE_ROOT"""

import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
DEP = re.compile(r'\b(\w+)_dep\b')
# A function declaration in a header: "type name(args);" at the start of a line (no typedef).
DECL = re.compile(r'^(?!typedef|#|\s|/|\*|struct \w+ \{|enum|union)[^;{}()]*?\b(\w+)\s*\([^;{}]*\)\s*(?:__attribute__\(\(.*\)\))?\s*;',
                  re.M)


def read(path):
    with open(path) as f:
        return f.read()


def components(daemon):
    order = re.findall(r"subdir\('(\w+)'\)", read(os.path.join(daemon, 'meson.build')))
    deps = {}
    for comp in order:
        text = read(os.path.join(daemon, comp, 'meson.build'))
        m = re.search(r'declare_dependency\((.*?)\)\s*$', text, re.S | re.M)
        declared = set()
        if m:
            dm = re.search(r'dependencies\s*:\s*\[([^\]]*)\]', m.group(1), re.S)
            if dm:
                declared = {d for d in DEP.findall(dm.group(1)) if d in order}
        deps[comp] = declared
    return order, deps


def headers_of(directory):
    return {f for f in os.listdir(directory) if f.endswith('.h')}


def check_order_and_cycles(order, deps, problems):
    seen = set()
    for comp in order:
        for d in sorted(deps[comp]):
            if d not in seen:
                problems.append(f'daemon/{comp} uses daemon/{d}, which daemon/meson.build builds after it '
                                f'(a cycle, or the order is wrong)')
        seen.add(comp)


def check_includes(root, order, deps, problems):
    daemon = os.path.join(root, 'daemon')
    owner = {}
    for comp in order:
        for h in headers_of(os.path.join(daemon, comp)):
            owner[h] = comp
    # common/'s headers, and those protoc-c makes from its .proto files (profile.pb-c.h)
    common = (headers_of(os.path.join(root, 'common'))
              | {f[:-len('.proto')] + '.pb-c.h' for f in os.listdir(os.path.join(root, 'common')) if f.endswith('.proto')})
    generated = {'memleak.skel.h'}
    for comp in order:
        directory = os.path.join(daemon, comp)
        for name in sorted(os.listdir(directory)):
            if not name.endswith(('.c', '.h')):
                continue
            for inc in INCLUDE.findall(read(os.path.join(directory, name))):
                if inc in common or owner.get(inc) == comp:
                    continue
                if inc in generated and comp == 'bpf':
                    continue
                if inc not in owner:
                    problems.append(f'daemon/{comp}/{name} includes "{inc}", which no component or common/ has')
                elif owner[inc] not in deps[comp]:
                    problems.append(f'daemon/{comp}/{name} includes "{inc}" of daemon/{owner[inc]}, '
                                    f'which daemon/{comp}/meson.build does not declare')
    client = os.path.join(root, 'client')
    # and the headers the build makes from its pages (embed-text.py: html-report.html.h)
    own = headers_of(client) | {f + '.h' for f in os.listdir(client) if f.endswith('.html')}
    for name in sorted(os.listdir(client)):
        if name.endswith(('.c', '.h')):
            for inc in INCLUDE.findall(read(os.path.join(client, name))):
                if inc not in own and inc not in common:
                    problems.append(f'client/{name} includes "{inc}": memleakctl links only common/')


def strip_comments(text):
    return re.sub(r'/\*.*?\*/', '', text, flags=re.S)


def check_prefixes(root, order, problems):
    daemon = os.path.join(root, 'daemon')
    for comp in order:
        directory = os.path.join(daemon, comp)
        for name in sorted(headers_of(directory)):
            prefix = name[:-2].replace('-', '_') + '_'
            text = strip_comments(read(os.path.join(directory, name)))
            # one declaration per statement, joined onto a line
            for stmt in re.split(r';', text):
                stmt = ' '.join(stmt.split())
                m = re.match(r'^(?!typedef\b|#|struct \w+ \{|enum\b|union\b)(?:[\w\s\*]+?)\b(\w+)\s*\(', stmt)
                if not m or '{' in stmt or stmt.startswith('DEFINE_'):
                    continue
                fn = m.group(1)
                if not fn.startswith(prefix) and fn != prefix[:-1]:
                    problems.append(f'daemon/{comp}/{name} exports {fn}(), not {prefix}*')


# A member added to or read from a JSON object by name: the name is the call's second argument.
JSON_MEMBER = re.compile(r'\b(cJSON_Add\w*ToObject|cJSON_AddItemToObject(?:CS)?|cJSON_GetObjectItem(?:CaseSensitive)?|'
                         r'cJSON_HasObjectItem|cJSON_(?:Detach|Delete|Replace)ItemInObject(?:CaseSensitive)?|'
                         r'cJSON_(?:Detach|Delete)ItemFromObject(?:CaseSensitive)?|json_add_\w+|get_u64|get_str|'
                         r'get_double|get_bool)\(\s*(?:[^(),]|\([^()]*\))+,\s*"([^"]*)"')


def check_field_names(root, problems):
    for top in ('daemon', 'client'):
        for directory, _, files in sorted(os.walk(os.path.join(root, top))):
            for name in sorted(files):
                if not name.endswith('.c'):
                    continue
                path = os.path.join(directory, name)
                for m in JSON_MEMBER.finditer(strip_comments(read(path))):
                    problems.append(f'{os.path.relpath(path, root)}: {m.group(1)}() names "{m.group(2)}" by a literal: '
                                    f'use its name from common/reply-fields.h (the reply contract)')


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else '.'
    order, deps = components(os.path.join(root, 'daemon'))
    problems = []
    check_order_and_cycles(order, deps, problems)
    check_includes(root, order, deps, problems)
    check_prefixes(root, order, problems)
    check_field_names(root, problems)
    for p in problems:
        print(p)
    if problems:
        print(f'{len(problems)} problem(s): see docs/architecture.md')
        return 1
    print(f'{len(order)} components, their includes and exported names as declared; JSON field names '
          f'from the contract')
    return 0


if __name__ == '__main__':
    sys.exit(main())
