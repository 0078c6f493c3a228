"""Per-file test selection for `make mutants` (inert in every other run).

mutmut runs, for each mutant, every test that reached the mutated function. For the core
layer that is nearly the whole suite, so a surviving core mutant would cost minutes. This
keeps only the tests `[tool.datagauntlet.mutation] tests` names for the mutated function's
source file: the tests whose job is that file's rules. An entry is a test id prefix (a file,
or `file::test`); one starting with `!` leaves those tests out.

It acts twice. In mutmut's stats pass it drops, after each test, the functions that test
reached but is not chosen for, so mutmut records only chosen tests per function: each mutant
is handed (and collects) only those, and mutmut's time estimates, its ordering and its
timeouts are those of the tests that run. While a mutant is under test it deselects every
test not chosen for the mutant's file, which holds even if mutmut's records were made
without the first step (an older stats file).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import json
import os
import resource
import signal
import time
import tomllib
from fnmatch import fnmatch
from pathlib import Path

import pytest

pytest_plugins = ("secret_isolation", "shared_results", "file_order")

_MUTANT_MARK = "__mutmut_"
# CPU seconds one mutant's tests may use: mutmut's own limits scale with the wall clock, which a
# loaded machine stretches, so a mutant that loops is stopped here instead (SIGXCPU: a timeout).
# The slowest file's chosen tests use under 10 CPU s; each looping mutant costs this much.
MUTANT_CPU_SECONDS = 30
# One line per judged mutant, `{"mutant": NAME, "cpu_s": ...}`, in mutmut's copy of the
# project: the CPU its tests used, sandboxed children included (scripts/mutation_report.py).
CPU_LOG = "cpu-by-mutant.jsonl"


def _module_path(mutant: str) -> str:
    """`datagauntlet.core.episode.xǁEpisodeǁcall__mutmut_3` -> src/datagauntlet/core/episode.py"""
    dotted = mutant.split(".x", 1)[0]
    return "src/" + dotted.replace(".", "/") + ".py"


@functools.cache
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


def is_chosen(nodeid: str, prefixes: list[str]) -> bool:
    chosen = tuple(p for p in prefixes if not p.startswith("!"))
    left_out = tuple(p[1:] for p in prefixes if p.startswith("!"))
    return nodeid.startswith(chosen) and not nodeid.startswith(left_out)


def drop_unchosen_hits(nodeid: str, hits: set[str], selection: dict[str, list[str]]) -> None:
    """Forget the functions `nodeid` reached whose file does not choose it (`hits` in place)."""
    for function in list(hits):
        prefixes = tests_for_source(_module_path(function), selection)
        if prefixes is not None and not is_chosen(nodeid, prefixes):
            hits.discard(function)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    # Runs before mutmut's own teardown hook, which files the functions hit under this test.
    if os.environ.get("MUTANT_UNDER_TEST") != "stats":
        return
    from mutmut.state import state

    drop_unchosen_hits(item.nodeid, state()._stats, _selection(item.config.rootpath))


def _cap_cpu(seconds: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    cap = int(time.process_time()) + seconds
    if soft == resource.RLIM_INFINITY or cap < soft:
        resource.setrlimit(resource.RLIMIT_CPU, (cap, hard))


# Mutants of these modules run their tests as the init of a PID namespace of their own: the
# sandbox's process sweeps (sweeps.py, called from runner.py and supervise.py) run as root, and
# a mutated sweep can signal every process it sees. In its own namespace (with its own /proc) it
# sees only its own tests' processes, so it can kill neither mutmut nor the other mutants'
# tests; its own verdict stays its own.
OWN_NAMESPACE = (
    "datagauntlet.kits.sandbox.runner",
    "datagauntlet.kits.sandbox.supervise",
    "datagauntlet.kits.sandbox.sweeps",
)
_CLONE_NEWNS, _CLONE_NEWPID = 0x00020000, 0x20000000
_MS_REC, _MS_PRIVATE = 0x4000, 1 << 18


def _in_own_pid_namespace() -> bool:
    """Go on in a child that is the init of a new PID namespace with its own /proc; this
    process waits for it and ends as it ended. False (nothing done) where that is not allowed."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(_CLONE_NEWNS | _CLONE_NEWPID) != 0:
        return False
    pid = os.fork()
    if pid == 0:  # pid 1 here: no process inside can kill it
        libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None)
        libc.mount(b"proc", b"/proc", b"proc", 0, None)
        return True
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code < 0:  # killed by a signal: end the same way, so mutmut reads the same verdict
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    mutant = os.environ.get("MUTANT_UNDER_TEST", "")
    if _MUTANT_MARK in mutant and mutant.startswith(OWN_NAMESPACE):
        _in_own_pid_namespace()


def pytest_unconfigure(config: pytest.Config) -> None:
    mutant = os.environ.get("MUTANT_UNDER_TEST", "")
    if _MUTANT_MARK not in mutant:
        return
    # A forked child's counters start at zero, so these are this mutant's alone.
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
    if not (config.rootpath / "mutmut-stats.json").is_file():
        return  # not mutmut's copy of the project (a mutant's name set by hand): no log
    line = json.dumps({"mutant": mutant, "cpu_s": round(cpu, 3)}) + "\n"
    with contextlib.suppress(OSError):  # one short O_APPEND write: workers do not interleave
        fd = os.open(config.rootpath / CPU_LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    mutant = os.environ.get("MUTANT_UNDER_TEST", "")
    if _MUTANT_MARK not in mutant:
        return
    _cap_cpu(MUTANT_CPU_SECONDS)
    prefixes = tests_for_source(_module_path(mutant), _selection(config.rootpath))
    if prefixes is None:
        return
    kept, dropped = [], []
    for item in items:
        (kept if is_chosen(item.nodeid, prefixes) else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
