"""The cost-growth tables of docs/envs/ENV.md are the benchmark's output (no timing here).

`benchmarks/bench_growth.py --write-docs` measures and rewrites them; these tests hold each
env's page to what the script declares (sizes, units, what is not measured and why) and
check the script's own arithmetic on made-up measurements.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load() -> ModuleType:
    path = ROOT / "benchmarks" / "bench_growth.py"
    spec = importlib.util.spec_from_file_location("dg_bench_growth", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


growth = _load()
PAGES = {p: p.read_text("utf-8") for p in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]}


def block(env_id: str, text: str | None = None) -> list[str]:
    text = PAGES[growth.env_page(env_id)] if text is None else text
    start, end = growth.block_markers(env_id)
    assert text.count(start) == 1 and text.count(end) == 1, env_id
    return text.split(start)[1].split(end)[0].strip().splitlines()


@pytest.mark.parametrize("env_id", sorted(growth.GROWTH))
def test_page_table_has_every_size_of_the_benchmark(env_id: str) -> None:
    spec = growth.GROWTH[env_id]
    lines = block(env_id)
    rows = [line for line in lines if re.match(r"\| \d+x \|", line)]
    assert [r.split("|")[1].strip() for r in rows] == [f"{m}x" for m in growth.SIZES]
    for multiple, row in zip(growth.SIZES, rows, strict=True):
        cells = [c.strip() for c in row.split("|")[1:-1]]
        assert cells[1] == f"{spec.default * multiple:,}"
        if multiple > spec.largest:
            assert cells[2] == f"not measured: {spec.why_not}"
        else:
            assert all(re.fullmatch(r"[\d.,]+( ms| us)?", c) for c in cells[2:] if c), row
    assert f"--markdown {env_id}` (" in lines[-1] or any(
        f"--markdown {env_id}` (" in line and "load average" in line for line in lines
    )


@pytest.mark.parametrize("env_id", sorted(growth.GROWTH))
def test_the_block_sits_on_its_own_env_page_only(env_id: str) -> None:
    start = growth.block_markers(env_id)[0]
    assert [p for p, text in PAGES.items() if start in text] == [growth.env_page(env_id)]
    assert growth.env_page(env_id) == ROOT / "docs" / "envs" / f"{env_id}.md"


def test_each_added_unit_is_flat_for_linear_cost_and_skips_unmeasured_sizes() -> None:
    rows = [
        {"units": 10, "cpu_s": 0.5 + 10 * 0.01},
        {"units": 100, "cpu_s": 0.5 + 100 * 0.01},
        {"units": 1000, "cpu_s": 0.5 + 1000 * 0.01},
        {"multiple": 1000, "skipped": "too long"},
    ]
    added = growth.marginal(rows)
    assert added[0] is None and added[3] is None
    assert added[1] == pytest.approx(0.01) and added[2] == pytest.approx(0.01)


def test_write_tables_replaces_only_the_block_and_refuses_a_missing_one(tmp_path: Path) -> None:
    start, end = growth.block_markers("dataclean")
    path = tmp_path / "README.md"
    path.write_text(f"before\n{start}\nold\n{end}\nafter\n", encoding="utf-8")
    growth.write_tables(path, {"dataclean": "| new |"})
    assert path.read_text(encoding="utf-8") == f"before\n{start}\n| new |\n{end}\nafter\n"
    with pytest.raises(ValueError, match="growth:event-recon"):
        growth.write_tables(path, {"event-recon": "x"})


def test_cli_mistakes_exit_2_without_measuring(capsys: pytest.CaptureFixture[str]) -> None:
    assert growth.main(["--markdown", "no-such-env"]) == 2
    assert growth.main(["--write-readme"]) == 2
    assert growth.main(["--write-readme", "README.md", "no-such-env"]) == 2
    assert growth.main(["--write-docs", "no-such-env"]) == 2
    assert "no-such-env" in capsys.readouterr().err


def test_write_docs_writes_each_table_into_its_own_env_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(growth, "DOCS", tmp_path)
    for env_id in ("dataclean", "event-recon"):
        start, end = growth.block_markers(env_id)
        (tmp_path / f"{env_id}.md").write_text(f"# {env_id}\n{start}\nold\n{end}\n", "utf-8")
    growth.write_docs({"dataclean": "| a |", "event-recon": "| b |"})
    assert block("dataclean", (tmp_path / "dataclean.md").read_text()) == ["| a |"]
    assert block("event-recon", (tmp_path / "event-recon.md").read_text()) == ["| b |"]
