#!/usr/bin/env python3
"""The repository's files on an echoed line's path, from callgrind's output.

Usage: echo_path.py ROOT CALLGRIND_OUT... (one file per thread, from
`--separate-threads=yes`). Prints the files, one per line, relative to
ROOT. ARCHITECTURE.md states the rule it applies:

- a file counts when a function defined in it runs on the loop thread for
  the line, inlined or not: the loop thread is the one that ran
  `StreamReader::read_line`, and an instruction belongs to the file its
  line-table entry names (an inlined function's instructions name the
  file it is written in);
- instructions with no source line (line 0: glue the compiler writes)
  count for no file;
- code a `macro_rules!` macro generates counts for the file that defines
  the macro (its line-table entries are there) and for the file that
  invokes it: the one file that invokes it, or, of several, the one whose
  module a function that ran the macro's lines is named after
  (`<&ioloop_net::tcp::stream::TcpStream as AsyncRead>::poll_read` ran
  `stream!`'s lines, so `net/src/tcp/stream.rs`);
- other crates do not count (their files are outside ROOT).
"""

import collections
import os
import re
import sys

CRATES = {
    "ioloop_runtime": "runtime/src",
    "ioloop_net": "net/src",
    "ioloop_compat": "compat/src",
    "line_echo": "examples/line_echo",
}


def parse(path, root):
    """{file: {function: set of lines}} for the files under root."""
    names = {}

    def name(value, kind):
        m = re.match(r"\((\d+)\)(?: (.*))?$", value)
        if not m:
            return value
        key = (kind, m.group(1))
        if m.group(2) is not None:
            names[key] = m.group(2)
        return names[key]

    ran = collections.defaultdict(lambda: collections.defaultdict(set))
    current = function_file = function = None
    after_call = False
    line = 0
    for raw in open(path, encoding="utf-8", errors="replace"):
        raw = raw.rstrip("\n")
        if raw.startswith(("fl=", "fi=", "fe=")):
            current = name(raw[3:], "fl")
            if raw.startswith("fl="):
                function_file = current
        elif raw.startswith("fn="):
            function = name(raw[3:], "fn")
            current = function_file
        elif raw.startswith("cfn="):
            name(raw[4:], "fn")
        elif raw.startswith(("cfl=", "cfi=")):
            name(raw[4:], "fl")
        elif raw.startswith("calls="):
            after_call = True
        elif raw[:1].isdigit() or raw[:1] in ("+", "-", "*"):
            fields = raw.split()
            pos = fields[0]
            if pos[0] in "+-":
                line += int(pos)
            elif pos != "*":
                line = int(pos)
            if after_call:
                # The call's inclusive cost, booked at the call site.
                after_call = False
                continue
            cost = int(fields[1]) if len(fields) > 1 else 0
            if cost and line > 0 and current and current.startswith(root):
                ran[current[len(root):]][function].add(line)
    return ran


def macros(root):
    """{name: (file, first line, last line)} of every macro_rules! in ROOT."""
    found = {}
    for top in ("runtime/src", "net/src", "compat/src", "examples"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if not f.endswith(".rs"):
                    continue
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, root)
                text = open(path, encoding="utf-8").read().split("\n")
                for i, l in enumerate(text):
                    m = re.match(r"\s*macro_rules!\s*(\w+)", l)
                    if not m:
                        continue
                    depth, j = 0, i
                    while True:
                        depth += text[j].count("{") - text[j].count("}")
                        if depth <= 0 and j > i:
                            break
                        j += 1
                    found[(m.group(1), rel)] = (i + 1, j + 1)
    return found


def invokers(root, macro):
    """The library and example files that invoke macro!."""
    out = []
    pattern = re.compile(r"(?<![\w!])" + re.escape(macro) + r"!\s*[({\[]")
    for top in ("runtime/src", "net/src", "compat/src", "examples/line_echo"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if f.endswith(".rs"):
                    path = os.path.join(dirpath, f)
                    text = open(path, encoding="utf-8").read()
                    body = re.sub(r"macro_rules!\s*" + re.escape(macro) + r"\b", "", text)
                    if pattern.search(body):
                        out.append(os.path.relpath(path, root))
    return sorted(out)


def module_files(function):
    """The files of the modules a function's name mentions."""
    out = set()
    for crate, src in CRATES.items():
        for m in re.finditer(re.escape(crate) + r"((?:::[a-z_][a-z0-9_]*)+)::", function):
            parts = m.group(1).strip(":").split("::")
            for k in range(len(parts), 0, -1):
                out.add(src + "/" + "/".join(parts[:k]) + ".rs")
                out.add(src + "/" + "/".join(parts[:k]) + "/mod.rs")
    return out


def main():
    root = os.path.abspath(sys.argv[1]) + "/"
    threads = [parse(p, root) for p in sys.argv[2:]]
    loop = [t for t in threads if any("read_line" in fn for f in t.values() for fn in f)]
    if len(loop) != 1:
        sys.exit(f"echo_path.py: {len(loop)} threads ran read_line; expected the loop's alone")
    ran = loop[0]
    files = set(ran)
    known = macros(root)
    for (macro, defined_in), (first, last) in sorted(known.items()):
        if defined_in not in ran:
            continue
        functions = [fn for fn, lines in ran[defined_in].items() if any(first <= l <= last for l in lines)]
        if not functions:
            continue
        candidates = invokers(root, macro)
        if len(candidates) > 1:
            named = set().union(*(module_files(fn) for fn in functions))
            candidates = [c for c in candidates if c in named]
        if len(candidates) != 1:
            sys.exit(f"echo_path.py: cannot tell which invocation of {macro}! ran ({candidates}; functions {functions})")
        files.add(candidates[0])
    for f in sorted(files):
        print(f)


main()
