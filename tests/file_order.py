"""Longest test files first, so the two `make test` workers finish together.

`--dist loadfile` hands whole files to whichever worker is free, in the order of the work
queue. pytest-xdist's default queue puts the files with most tests first, so a slow file of few
tests came last and one worker ran it alone while the other sat idle. Here the items are sorted
by each file's expected seconds (longest first, the rest in collection order) and xdist is told
to keep that order. A file's expected seconds are those the last run on this checkout measured
(kept in the pytest cache), else the ones below, measured on a 2-core machine.
"""

from __future__ import annotations

import pytest

CACHE_KEY = "datagauntlet/file-seconds"
# Seconds each slow file took in `make test` on 2 cores (files under ~5 s need no place).
MEASURED: dict[str, float] = {
    "tests/frontdoors/test_fd_vf_cli.py": 120.0,
    "tests/kits/sandbox/test_sandbox_escape_battery.py": 65.0,
    "tests/core/test_gates.py": 55.0,
    "tests/frontdoors/test_fd_eval.py": 40.0,
    "tests/frontdoors/test_fd_vf_rollouts.py": 38.0,
    "tests/server/test_ray_sweeps.py": 36.0,
    "tests/bad_batch_gate/test_bbg_reference_counts.py": 34.0,
    "tests/test_readme_tables.py": 30.0,
    "tests/frontdoors/test_fd_serve_memory.py": 29.0,
    "tests/frontdoors/test_fd_closing.py": 28.0,
    "tests/report/test_run_schema_battery.py": 27.0,
    "tests/dataclean/test_dataclean_traps.py": 25.0,
    "tests/report/test_report_cli.py": 24.0,
    "tests/report/test_hostile_run_files.py": 22.0,
    "tests/frontdoors/test_fd_mcp.py": 21.0,
    "tests/frontdoors/test_fd_held_out_doors.py": 21.0,
    "tests/event_recon/test_world_generation.py": 20.0,
    "tests/event_recon/test_er_solver.py": 19.0,
    "tests/event_recon/test_er_doors.py": 18.0,
    "tests/dataclean/test_dataclean_calibration.py": 18.0,
    "tests/server/test_server_worker_lifecycle.py": 17.0,
    "tests/server/test_server_doors.py": 14.0,
    "tests/event_recon/test_er_gate_report.py": 14.0,
    "tests/kits/sandbox/test_sandbox_supervisor.py": 10.0,
    "tests/server/test_server_worker_routing.py": 5.0,
    "tests/bad_batch_gate/test_bbg_generated.py": 4.0,
}


def file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def ordered(items: list[pytest.Item], seconds: dict[str, float]) -> list[pytest.Item]:
    """Whole files, longest expected first; files of equal weight keep collection order."""
    first_seen: dict[str, int] = {}
    for item in items:
        first_seen.setdefault(file_of(item.nodeid), len(first_seen))

    def key(item: pytest.Item) -> tuple[float, int]:
        name = file_of(item.nodeid)
        return (-seconds.get(name, MEASURED.get(name, 0.0)), first_seen[name])

    return sorted(items, key=key)  # stable: a file's tests keep their order


def _distributed(config: pytest.Config) -> bool:
    return getattr(config.option, "dist", "no") == "loadfile"


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    if _distributed(config) and hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False  # keep the order sorted below


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not _distributed(config) and not hasattr(config, "workerinput"):
        return
    cache = getattr(config, "cache", None)
    seconds = cache.get(CACHE_KEY, {}) if cache is not None else {}
    items[:] = ordered(items, seconds if isinstance(seconds, dict) else {})


_spent: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _spent[file_of(report.nodeid)] = _spent.get(file_of(report.nodeid), 0.0) + report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    cache = getattr(session.config, "cache", None)
    whole = not session.config.args or session.config.args == ["tests"]
    if cache is None or hasattr(session.config, "workerinput") or not whole or not _spent:
        return
    if session.testsfailed == 0:  # a run cut short would teach a wrong order
        cache.set(CACHE_KEY, {k: round(v, 1) for k, v in _spent.items()})
