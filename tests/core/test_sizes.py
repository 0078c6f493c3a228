"""Small files with one job: no Python file of the repository over 400 lines (the package,
its tests, benchmarks, scripts, environments and held-out families), no function over 80.

A function counts from its `def` line to its last line, nested functions included (a factory
that defines a 150-line closure is a 150-line function). Files and functions still over are
listed in ALLOWED with the work that splits them; the test fails when one of them is back
under its limit (delete it here) as well as when anything new goes over.
"""

from __future__ import annotations

import ast
import functools
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "src" / "datagauntlet"
# Every folder of Python the repository keeps; the last test fails on a file outside them.
SCANNED = tuple(
    REPO / d
    for d in ("src/datagauntlet", "tests", "benchmarks", "scripts", "environments", "heldout")
)
# What building a distribution in place leaves beside its sources: copies, not sources
# (`pip install environments/<id>` leaves environments/<id>/build/lib/<id>.py)
BUILT = ("build", "dist")
MAX_FILE_LINES = 400
MAX_FUNCTION_LINES = 80

# (file relative to the repository, qualified function name or "" for the whole file)
ALLOWED: frozenset[tuple[str, str]] = frozenset()


def _functions(node: ast.AST, prefix: str = "") -> list[tuple[str, int]]:
    """(qualified name, lines) of every function under `node`, methods and nested ones too."""
    out = []
    for child in ast.iter_child_nodes(node):
        name = prefix
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            name = f"{prefix}{child.name}"
            if not isinstance(child, ast.ClassDef):
                lines = (child.end_lineno or child.lineno) - child.lineno + 1
                out.append((name, lines))
            name += "."
        out += _functions(child, name)
    return out


def oversized(root: Path = PACKAGE) -> dict[tuple[str, str], int]:
    """Every file over MAX_FILE_LINES and function over MAX_FUNCTION_LINES, with its lines."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).parts
        if any(p in BUILT or p.endswith(".egg-info") for p in parts[:-1]):
            continue
        rel = path.relative_to(root).as_posix()
        text = path.read_text()
        lines = len(text.splitlines())
        if lines > MAX_FILE_LINES:
            found[(rel, "")] = lines
        for name, length in _functions(ast.parse(text, str(path))):
            if length > MAX_FUNCTION_LINES:
                found[(rel, name)] = length
    return found


@functools.cache
def repository_oversized() -> dict[tuple[str, str], int]:
    """oversized() of every scanned folder, each file named relative to the repository."""
    found = {}
    for root in SCANNED:
        prefix = root.relative_to(REPO).as_posix()
        for (rel, name), lines in oversized(root).items():
            found[(f"{prefix}/{rel}", name)] = lines
    return found


def test_no_file_or_function_is_too_long() -> None:
    over = {k: v for k, v in repository_oversized().items() if k not in ALLOWED}
    assert not over, f"split these by job (file, function): lines {sorted(over.items())}"


def test_every_allowance_is_still_needed() -> None:
    stale = sorted(ALLOWED - repository_oversized().keys())
    assert not stale, f"back under the limit or gone: delete from ALLOWED: {stale}"


def test_the_scan_counts_files_methods_and_nested_functions(tmp_path: Path) -> None:
    body, deeper = "    x = 1\n", "        x = 1\n"
    (tmp_path / "long.py").write_text("# a line\n" * 401)
    (tmp_path / "fine.py").write_text("def f():\n" + body * 79)  # 80 lines: at the limit
    (tmp_path / "deep").mkdir()
    (tmp_path / "deep" / "m.py").write_text(
        "class C:\n    async def m(self):\n"
        + deeper * 80
        + "def outer():\n    def inner():\n"
        + deeper * 80
    )
    assert oversized(tmp_path) == {
        ("long.py", ""): 401,
        ("deep/m.py", "C.m"): 81,
        ("deep/m.py", "outer"): 82,
        ("deep/m.py", "outer.inner"): 81,
    }


def test_what_a_build_leaves_beside_the_sources_is_not_scanned(tmp_path: Path) -> None:
    long = "# a line\n" * 401
    for copy in ("build/lib/long.py", "dist/long.py", "env.egg-info/long.py"):
        (tmp_path / copy).parent.mkdir(parents=True)
        (tmp_path / copy).write_text(long)
    (tmp_path / "long.py").write_text(long)
    assert oversized(tmp_path) == {("long.py", ""): 401}


def test_every_python_file_the_repository_keeps_is_scanned() -> None:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout: no list of the files it keeps")
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--", "*.py"], cwd=REPO, capture_output=True, check=True
    ).stdout.decode()
    kept = [REPO / name for name in listed.split("\0") if name]
    assert kept
    outside = [p for p in kept if not any(p.is_relative_to(root) for root in SCANNED)]
    assert not outside, f"add their folder to SCANNED: {outside}"
