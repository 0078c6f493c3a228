"""Per-file test selection for `make mutants` (inert in every other run).

mutmut runs, for each mutant, every test that reached the mutated function. For the core
layer that is nearly the whole suite, so a surviving core mutant would cost minutes. While a
mutant is under test, this keeps only the tests `[tool.datagauntlet.mutation] tests` names
for that mutant's source file: the tests whose job is that file's rules. An entry is a
test id prefix (a file, or `file::test`); one starting with `!` leaves those tests out.
"""

from __future__ import annotations

import os
import resource
import time
import tomllib
from fnmatch import fnmatch
from pathlib import Path

import pytest

_MUTANT_MARK = "__mutmut_"
# CPU seconds one mutant's tests may use: mutmut's own limits scale with the wall clock, which a
# loaded machine stretches, so a mutant that loops is stopped here instead (SIGXCPU: a timeout).
# The slowest file's chosen tests use under 10 CPU s; each looping mutant costs this much.
MUTANT_CPU_SECONDS = 30


def _module_path(mutant: str) -> str:
    """`datagauntlet.core.episode.xǁEpisodeǁcall__mutmut_3` -> src/datagauntlet/core/episode.py"""
    dotted = mutant.split(".x", 1)[0]
    return "src/" + dotted.replace(".", "/") + ".py"


def _selection(rootdir: Path) -> dict[str, list[str]]:
    pyproject = rootdir / "pyproject.toml"
    if not pyproject.is_file():
        return {}
    data = tomllib.loads(pyproject.read_text("utf-8"))
    return data.get("tool", {}).get("datagauntlet", {}).get("mutation", {}).get("tests", {})


def tests_for_source(path: str, selection: dict[str, list[str]]) -> list[str] | None:
    """The test path prefixes chosen for a source file; None when no pattern names it."""
    for pattern, tests in selection.items():
        if fnmatch(path, pattern):
            return tests
    return None


def _cap_cpu(seconds: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    cap = int(time.process_time()) + seconds
    if soft == resource.RLIM_INFINITY or cap < soft:
        resource.setrlimit(resource.RLIMIT_CPU, (cap, hard))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    mutant = os.environ.get("MUTANT_UNDER_TEST", "")
    if _MUTANT_MARK not in mutant:
        return
    _cap_cpu(MUTANT_CPU_SECONDS)
    prefixes = tests_for_source(_module_path(mutant), _selection(config.rootpath))
    if prefixes is None:
        return
    chosen = tuple(p for p in prefixes if not p.startswith("!"))
    left_out = tuple(p[1:] for p in prefixes if p.startswith("!"))
    kept, dropped = [], []
    for item in items:
        keep = item.nodeid.startswith(chosen) and not item.nodeid.startswith(left_out)
        (kept if keep else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
