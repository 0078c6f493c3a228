"""`make bench` runs every benchmark script, even after one exits early or fails."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"dg_bench_{name}", BENCH / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(BENCH))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCH))
    return module


def test_every_script_runs_and_a_failure_is_reported(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "bench_a.py").write_text("print('a ran')\nraise SystemExit(0)\n")
    (tmp_path / "bench_b.py").write_text("raise SystemExit(3)\n")
    (tmp_path / "bench_c.py").write_text("print('c ran')\n")
    (tmp_path / "helper.py").write_text("raise RuntimeError('not a benchmark')\n")
    assert _load("run_all").main(tmp_path) == 1
    out = capfd.readouterr().out
    assert "a ran" in out and "c ran" in out
    assert "FAILED (exit 3)" in out and "bench_c" in out


def test_every_benchmark_reports_through_a_table() -> None:
    scripts = sorted(BENCH.glob("bench_*.py"))
    assert len(scripts) >= 4
    for script in scripts:
        text = script.read_text()
        assert "Report(" in text and ".show()" in text, script.name


def test_a_report_prints_a_table_with_floors() -> None:
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "from benchlib import Report; r = Report('demo'); r.add('round trip', 0.5, 'ms', 0.1,"
        " 'socket'); r.add('rate', 1234.5, '/s'); r.show()"
    )
    out = subprocess.run([sys.executable, "-c", code, str(BENCH)], capture_output=True,
                         text=True, check=True).stdout  # fmt: skip
    assert "round trip" in out and "0.1 (socket)" in out and "5.0" in out and "1,234" in out
