"""The public package holds nothing of the held-out families: not their names, not their
contract lines, not their code. Scanned in the installed `datagauntlet` and in its wheel."""

from __future__ import annotations

import ast
import inspect
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import datagauntlet_heldout
import datagauntlet_heldout.event_recon as heldout

import datagauntlet

ROOT = Path(__file__).resolve().parents[2]


def _needles() -> list[bytes]:
    """What would give a held-out family away: its name, its class and its contract line."""
    out = []
    for family in heldout.FAMILIES:
        out += [family.name, type(family).__name__, family.summary]
    return [n.encode() for n in out]


def _bodies(source: str) -> set[str]:
    """Every function's body, as a normalised syntax tree (a copy reads the same)."""
    tree = ast.parse(source)
    return {
        ast.dump(ast.Module(body=node.body, type_ignores=[]))
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }


def _heldout_bodies() -> set[str]:
    root = Path(inspect.getfile(datagauntlet_heldout)).parent
    out: set[str] = set()
    for path in root.rglob("*.py"):
        out |= _bodies(path.read_text())
    return {b for b in out if len(b) > 200}  # a one-line `return ...` proves nothing


def _installed() -> Iterator[tuple[str, bytes]]:
    root = Path(datagauntlet.__file__).parent
    for path in sorted(root.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            yield str(path.relative_to(root)), path.read_bytes()


def _scan(files: Iterator[tuple[str, bytes]]) -> list[str]:
    needles, bodies = _needles(), _heldout_bodies()
    found = []
    count = 0
    for name, data in files:
        count += 1
        found += [f"{name}: {n.decode()!r}" for n in needles if n in data]
        if name.endswith(".py"):
            found += [f"{name}: a held-out function body" for b in _bodies(data.decode()) & bodies]
    assert count > 100  # the package was there to scan
    return found


def test_the_scan_sees_a_family_when_it_is_there() -> None:
    family = Path(inspect.getfile(type(heldout.FAMILIES[0])))
    assert _scan(iter([(family.name, family.read_bytes())] * 101))
    renamed = family.read_bytes()  # the code alone, every name and line of it changed
    for needle in _needles():
        renamed = renamed.replace(needle, b"x")
    assert not [n for n in _needles() if n in renamed]
    assert _scan(iter([("copy.py", renamed)] * 101))


def test_the_installed_package_holds_no_held_out_family() -> None:
    assert _scan(_installed()) == []


def test_the_wheel_holds_no_held_out_family(tmp_path: Path) -> None:
    """Built from a clean copy of the project (a stale build/ could hide or add files)."""
    src = tmp_path / "project"
    ignore = shutil.ignore_patterns("*.egg-info", "__pycache__")
    shutil.copytree(ROOT / "src", src / "src", ignore=ignore)
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, src / name)
    dist = tmp_path / "dist"
    cmd = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation"]
    proc = subprocess.run(
        [*cmd, "-w", str(dist), str(src)], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    (wheel,) = dist.glob("datagauntlet-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = [n for n in zf.namelist() if not n.endswith("/")]
        assert not [n for n in names if n.startswith("datagauntlet_heldout")]
        files = iter([(n, zf.read(n)) for n in names if n.startswith("datagauntlet/")])
        assert _scan(files) == []
