#!/usr/bin/env python3
"""Lists the functions longer than a limit outside tests (issue 15's bar: 120 lines).

Usage: scripts/long-functions.py [--max N] DIR...   (exit 1 if any function is longer)

A function runs from its `fn` line to the line that closes its body. Braces inside string
literals, raw strings, character literals and comments are not counted. Code from a file's
first `#[cfg(test)]` on is left out (tests). Approximate by design: it reads text, not the
compiler's syntax tree.
"""

import re
import sys
from pathlib import Path

FN = re.compile(r'\s*(pub(\([a-z]+\))? )?(async )?(const )?(unsafe )?(extern "C" )?fn (\w+)')
CHAR = re.compile(r"'(\\.|\\u\{[0-9a-fA-F]+\}|[^\\'])'")
RAW = re.compile(r'r(#*)"')


def blank_literals(src: str) -> str:
    """The source with comments, strings and chars emptied, line breaks kept."""
    out, i, n = [], 0, len(src)
    while i < n:
        if src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
            continue
        raw = RAW.match(src, i) if src[i] == "r" and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")) else None
        if raw:
            end = '"' + raw.group(1)
            j = src.find(end, raw.end())
            j = n if j < 0 else j + len(end)
            out.append("\n" * src.count("\n", i, j))
            i = j
            continue
        if src[i] == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            out.append('""' + "\n" * src.count("\n", i, j))
            i = j + 1
            continue
        if src[i] == "'":
            c = CHAR.match(src, i)
            if c:
                out.append("' '")
                i = c.end()
                continue
        out.append(src[i])
        i += 1
    return "".join(out)


def long_functions(path: Path, limit: int):
    lines = blank_literals(path.read_text()).split("\n")
    end = next((k for k, l in enumerate(lines) if l.startswith("#[cfg(test)]")), len(lines))
    for i in range(end):
        m = FN.match(lines[i])
        if not m:
            continue
        depth, opened, j = 0, False, i
        while j < end:
            depth += lines[j].count("{") - lines[j].count("}")
            opened = opened or "{" in lines[j]
            if (opened and depth <= 0) or (not opened and lines[j].rstrip().endswith(";")):
                break
            j += 1
        if j - i + 1 > limit:
            yield m.group(7), i + 1, j - i + 1


def main() -> int:
    args = sys.argv[1:]
    limit = 120
    if args[:1] == ["--max"]:
        limit, args = int(args[1]), args[2:]
    found = 0
    for d in args:
        files = sorted(Path(d).rglob("*.rs"))
        for f in files:
            for name, line, length in long_functions(f, limit):
                print(f"{f}:{line}: fn {name} is {length} lines (at most {limit})")
                found += 1
        if not found:
            print(f"{d}: {len(files)} files, no function over {limit} lines outside tests")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
