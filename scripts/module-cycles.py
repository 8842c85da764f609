#!/usr/bin/env python3
"""Finds import cycles between the modules (files) of a Rust crate.

Usage: scripts/module-cycles.py CRATE_SRC_DIR...   (exit 1 if any crate has a cycle)

A module is a file: lib.rs is `crate`, a/mod.rs and a.rs are `a`, a/b.rs is `a::b`. An edge
A -> B is any path in A's code (not its `#[cfg(test)]` tests) that names B: `crate::b::...`,
`super::...`, or a child module declared in A. Declaring a child (`mod b;`) is not an edge:
a parent may hold its children; what makes a cycle is using each other. Approximate by
design (it reads text, not the compiler's resolution), and strict: a false edge can only
report a cycle that is not there, never hide one.
"""

import re
import sys
from pathlib import Path


def module_of(src: Path, f: Path) -> str:
    rel = f.relative_to(src).with_suffix("")
    parts = list(rel.parts)
    if parts == ["lib"] or parts == ["main"]:
        return "crate"
    if parts[-1] == "mod":
        parts = parts[:-1]
    return "::".join(parts)


def code_without_tests(text: str) -> str:
    m = re.search(r"#\[cfg\(test\)\]\s*(pub(\(crate\))?\s+)?mod\s+tests", text)
    text = text[: m.start()] if m else text
    # Comments and strings name modules without using them.
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r'"(\\.|[^"\\])*"', '""', text)


def resolve(path: list, modules: set) -> str | None:
    """The longest prefix of `path` that is a module."""
    for n in range(len(path), 0, -1):
        name = "::".join(path[:n])
        if name in modules:
            return name
    return None


def edges(src: Path) -> dict:
    files = sorted(src.rglob("*.rs"))
    modules = {module_of(src, f) for f in files}
    graph = {m: set() for m in modules}
    for f in files:
        me = module_of(src, f)
        here = [] if me == "crate" else me.split("::")
        code = code_without_tests(f.read_text())
        children = set(re.findall(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", code, re.M))
        for m in re.finditer(r"\b(crate|super|self)((?:::\w+)+)", code):
            head, rest = m.group(1), m.group(2).split("::")[1:]
            if head == "crate":
                base = []
            elif head == "super":
                base = here[:-1]
            else:
                base = here
            while rest and rest[0] == "super":
                base, rest = base[:-1], rest[1:]
            target = resolve(base + rest, modules) or ("crate" if not base else None)
            if target and target != me:
                graph[me].add(target)
        # `use child::X` and `child::f()` name a declared child module directly.
        for c in children:
            if re.search(rf"(?<![:\w]){c}::", code):
                target = resolve(here + [c], modules)
                if target:
                    graph[me].add(target)
        # Braced groups: `use crate::{a, b::c}` and `use super::{x, y}`.
        for m in re.finditer(r"\b(crate|super)::\{([^}]*)\}", code):
            base = [] if m.group(1) == "crate" else here[:-1]
            for item in m.group(2).split(","):
                name = item.strip().split("::")
                target = resolve(base + [n for n in name if n and n != "self"], modules)
                if target and target != me:
                    graph[me].add(target)
    return graph


def cycles(graph: dict) -> list:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    bad = 0
    for arg in sys.argv[1:]:
        src = Path(arg)
        graph = edges(src)
        found = cycles(graph)
        for comp in found:
            inside = {m: sorted(graph[m] & set(comp)) for m in comp}
            detail = "; ".join(f"{m} -> {', '.join(t)}" for m, t in inside.items())
            print(f"{src}: import cycle among {len(comp)} modules: {detail}")
        if not found:
            print(f"{src}: {len(graph)} modules, no import cycle")
        bad += len(found)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
