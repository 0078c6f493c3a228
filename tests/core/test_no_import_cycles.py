"""No two modules of the package import each other, directly or around a longer circle.

Every import counts: module level, under TYPE_CHECKING and inside functions. A lazy import
hides a circle from Python but not from a reader, who still cannot understand one module
without the other. The scan is an AST walk (nothing is imported), and a circle is reported as
the strongly connected component of the import graph that holds it.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "datagauntlet"

# Circles allowed, each with the work that removes it: none. The test fails on a new circle, and
# on an allowance whose circle is gone.
KNOWN_CYCLES: frozenset[frozenset[str]] = frozenset()


def modules(root: Path) -> dict[str, Path]:
    """Dotted name -> file, for every module and package under `root` (a package folder)."""
    out = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _within(name: str, known: dict[str, Path]) -> str | None:
    """The module of the package that `name` names: itself or its longest known prefix."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package's modules that `path` imports (`from p import x` names `p.x` when x is a
    module, else `p`)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str | None] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {_within(alias.name, known) for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            found |= {_within(f"{module}.{alias.name}", known) for alias in node.names}
    return {m for m in found if m is not None and m != name}


def cycles(root: Path = PACKAGE) -> set[frozenset[str]]:
    """Every group of two or more modules that reach one another through imports (Tarjan)."""
    known = modules(root)
    graph = {name: sorted(imports_of(name, path, known)) for name, path in sorted(known.items())}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: set[frozenset[str]] = set()

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                out.add(frozenset(group))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def _named(groups: set[frozenset[str]]) -> list[list[str]]:
    return sorted(sorted(g) for g in groups)


@functools.cache
def package_cycles() -> set[frozenset[str]]:
    return cycles()


def test_no_import_cycle_in_the_package() -> None:
    found = package_cycles()
    new = found - KNOWN_CYCLES
    assert not new, f"modules that import each other (break the circle): {_named(new)}"


def test_every_allowed_cycle_is_still_there() -> None:
    stale = KNOWN_CYCLES - package_cycles()
    assert not stale, f"these circles are gone: delete them from KNOWN_CYCLES: {_named(stale)}"


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_scan_sees_lazy_typing_and_relative_circles(tmp_path: Path) -> None:
    root = tmp_path / "datagauntlet"
    _write(
        root,
        {
            "__init__.py": "",
            "core/__init__.py": "",
            # a -> b at module level, b -> a only inside a function
            "core/a.py": "from datagauntlet.core.b import thing\n",
            "core/b.py": "def thing():\n    from datagauntlet.core import a\n",
            # c -> d under TYPE_CHECKING, d -> e -> c through relative imports
            "core/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from datagauntlet.core.d import D\n",
            "core/d.py": "from . import e\nclass D: ...\n",
            "core/e.py": "from .c import x\n",
            # a chain with no way back is no circle; nor is a package importing its module
            "core/f.py": "import datagauntlet.core.a\n",
            "kits/__init__.py": "from datagauntlet.kits import g\n",
            "kits/g.py": "import datagauntlet.core.f\n",
        },
    )
    assert _named(cycles(root)) == [
        ["datagauntlet.core.a", "datagauntlet.core.b"],
        ["datagauntlet.core.c", "datagauntlet.core.d", "datagauntlet.core.e"],
    ]
