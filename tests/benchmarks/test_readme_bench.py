"""docs/speed.md's block matches what the benchmarks declare (nothing is timed here), and
the bench format's ratios and verdicts read the way the page explains them."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
PAGE = BENCH.parent / "docs" / "speed.md"


def _load(name: str) -> ModuleType:
    """A script of benchmarks/ as a module, without running it (its main is guarded)."""
    # the scripts import benchlib by its own name
    key = name if name in ("benchlib", "run_all") else f"dg_bench_{name}"
    if key in sys.modules:
        return sys.modules[key]
    spec = importlib.util.spec_from_file_location(key, BENCH / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[key] = module
    sys.path.insert(0, str(BENCH))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCH))
    return module


@pytest.fixture(scope="module")
def lib() -> tuple[ModuleType, ModuleType]:
    return _load("benchlib"), _load("run_all")


def declared() -> dict[str, tuple]:
    out = {}
    for script in sorted(BENCH.glob("bench_*.py")):
        figures = getattr(_load(script.stem), "FIGURES", ())
        if figures:
            out[script.stem] = figures
    return out


def table_rows(section: str) -> list[list[str]]:
    lines = [ln for ln in section.splitlines() if ln.startswith("| ")][1:]  # minus the header
    return [[c.strip() for c in ln.strip("|").split(" | ")] for ln in lines]


def test_every_declared_figure_has_its_row_in_the_speed_page_and_nothing_else(lib) -> None:
    _, run_all = lib
    sections = run_all.split_sections(run_all.page_block(PAGE.read_text()))
    figures = declared()
    assert "bench_frontdoors" in figures
    assert set(sections) == set(figures), "run `run_all.py --write-docs` after declaring"
    for script, decls in figures.items():
        rows = table_rows(sections[script])
        assert [r[0] for r in rows] == [f.label for f in decls], script
        for row, f in zip(rows, decls, strict=True):
            ours, floor, ratio, target = row[1:]
            assert ours == "not measured" or ours.endswith(f" {f.unit}".rstrip()), (script, row)
            assert (f.floor in floor) if f.floor else floor == "", (script, row)
            assert (ratio != "") == bool(f.floor and floor and "not measured" not in floor)
            assert target.startswith(f.target_text()), (script, row)
            if f.target_text() and ours != "not measured":
                assert target.endswith((": met", ": NOT met")), (script, row)


def test_ratio_is_a_cost_either_way_and_targets_judge_both_bounds(lib) -> None:
    benchlib, _ = lib
    Figure = benchlib.Figure
    time_ = Figure("t", "time", "ms", "floor", max_ratio=2, target=10)
    rate = Figure("r", "rate", "/s", "floor", better="higher", target=1000)
    assert time_.ratio(6.0, 2.0) == 3.0 and rate.ratio(500.0, 2000.0) == 4.0
    assert time_.verdict(3.0, 2.0) == "met"
    assert time_.verdict(5.0, 2.0) == "NOT met"  # under 10 ms but 2.5x its floor
    assert time_.verdict(12.0, 100.0) == "NOT met"  # under its ratio but over 10 ms
    assert time_.verdict(3.0, None) == "NOT met"  # a ratio target without its floor
    assert rate.verdict(1200.0, 2000.0) == "met" and rate.verdict(900.0, 900.0) == "NOT met"
    assert Figure("n", "no target", "s").verdict(1.0, None) == ""
    with pytest.raises(ValueError, match="needs a floor"):
        Figure("x", "x", "s", max_ratio=2)


def test_a_report_refuses_what_would_make_the_page_wrong(lib) -> None:
    benchlib, _ = lib
    report = benchlib.Report("t", (benchlib.Figure("a", "A", "s"),))
    report.add("a", 1.0)
    with pytest.raises(ValueError, match="twice"):
        report.add("a", 2.0)
    with pytest.raises(ValueError, match="without a floor"):
        benchlib.Report("t", (benchlib.Figure("b", "B", "s"),)).add("b", 1.0, floor=0.5)
    with pytest.raises(ValueError, match="repeat"):
        benchlib.Report("t", (benchlib.Figure("a", "A", "s"),) * 2)


def test_write_page_rewrites_only_the_reported_sections(lib, tmp_path: Path) -> None:
    benchlib, run_all = lib
    page = tmp_path / "speed.md"
    kept = "#### `bench_kept`: kept\n\n| figure | ours |\n|---|---|\n| old | 1 s |"
    page.write_text(f"before\n{run_all.START}\nintro\n\n{kept}\n{run_all.END}\nafter\n")
    figures = (benchlib.Figure("x", "X time", "ms", "raw", max_ratio=2),
               benchlib.Figure("y", "Y rate", "/s", better="higher"))  # fmt: skip
    report = benchlib.Report("demo", figures)
    report.add("x", 3.0, floor=1.0)
    report.add("undeclared", 7.0, "s")
    data = report.as_dict() | {"script": "bench_demo"}
    results = tmp_path / "bench.jsonl"
    results.write_text(json.dumps(data) + "\n")
    assert run_all.write_page(results, page, tmp_path) == ["bench_demo"]
    text = page.read_text()
    assert text.startswith("before\n") and text.endswith("\nafter\n")
    sections = run_all.split_sections(run_all.page_block(text))
    assert sections["bench_kept"] == kept
    rows = table_rows(sections["bench_demo"])
    assert rows == [
        ["X time", "3.00 ms", "1.00 ms (raw)", "3.00x", "<= 2x floor: NOT met"],
        ["Y rate", "not measured", "", "", ""],
    ]
    assert "undeclared" not in text
    run_all.write_page(results, page, tmp_path)
    assert page.read_text() == text  # the same results write the same block
