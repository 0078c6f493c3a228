"""The runner behind run_python and the graded script: limits hold and results say so."""

from __future__ import annotations

import time
from pathlib import Path

from datagauntlet.envs.event_recon.sandbox_run import STDOUT_CHARS, Walls, run_script


def _run(tmp_path: Path, code: str, wall: float = 5.0, cpu: float = 5.0):  # type: ignore[no-untyped-def]
    (tmp_path / "s.py").write_text(code)
    return run_script(tmp_path, "s.py", Walls(wall, cpu))


def test_clean_run_reports_exit_and_output(tmp_path: Path) -> None:
    r = _run(tmp_path, "import os; print('hi', os.getcwd())")
    assert r.clean and r.exit_code == 0
    assert r.stdout.startswith("hi ") and str(tmp_path.resolve()) in r.stdout


def test_nonzero_exit_is_not_clean(tmp_path: Path) -> None:
    r = _run(tmp_path, "raise SystemExit(3)")
    assert r.exit_code == 3 and not r.clean


def test_sleeping_forever_is_killed_at_the_wall(tmp_path: Path) -> None:
    start = time.monotonic()
    r = _run(tmp_path, "import time\ntime.sleep(60)", wall=0.5)
    assert r.timed_out and not r.clean and r.exit_code is None
    assert time.monotonic() - start < 5


def test_cpu_spin_hits_the_cpu_limit(tmp_path: Path) -> None:
    r = _run(tmp_path, "while True: pass", wall=20.0, cpu=1.0)
    assert r.timed_out and not r.clean


def test_stdout_flood_is_capped_and_flagged(tmp_path: Path) -> None:
    r = _run(tmp_path, "import sys\nfor _ in range(2000): sys.stdout.write('x' * 1000)")
    assert r.truncated and len(r.stdout) == STDOUT_CHARS


def test_environment_is_scrubbed_and_package_not_importable(tmp_path: Path) -> None:
    r = _run(tmp_path, "import os; print(sorted(os.environ)); import datagauntlet")
    assert "PYTHONPATH" not in r.stdout
    assert r.exit_code != 0 and "ModuleNotFoundError" in r.stderr


def test_host_paths_hidden_from_the_agent(tmp_path: Path) -> None:
    r = _run(tmp_path, "import os; print(os.getcwd()); raise ValueError('x')")
    shown = r.for_agent(hide=str(tmp_path.resolve()), shown_as="/workspace")
    assert "/workspace" in shown["stdout"] and str(tmp_path) not in str(shown)
    assert "wall_s" not in shown  # timing varies; results must replay identically
