"""No command writes over an existing file without --force, nor over its own input even with
it: report, calibrate --report, merge, eval (one shared writer, core/output_files.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from report_helpers import cli, eval_run

pytest.importorskip("plotly")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return eval_run(tmp_path_factory.mktemp("ow") / "run", "dataclean", "oracle", 1)


def _refused(proc, words: str) -> None:
    assert proc.returncode == 2 and words in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


def test_report_keeps_an_existing_file_unless_forced(run: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    out.write_text("mine")
    _refused(cli("report", str(run), "-o", str(out), check=False), "--force")
    assert out.read_text() == "mine"
    cli("report", str(run), "-o", str(out), "--force")
    assert out.read_text().startswith("<!DOCTYPE html>")


@pytest.mark.parametrize("name", ["results.jsonl", "summary.json"])
def test_report_never_writes_over_its_own_input(run: Path, name: str) -> None:
    before = (run / name).read_bytes()
    for extra in ([], ["--force"]):
        _refused(cli("report", str(run), "-o", str(run / name), *extra, check=False), "inputs")
    assert (run / name).read_bytes() == before


def test_report_refuses_a_link_to_its_input(run: Path, tmp_path: Path) -> None:
    link = tmp_path / "link.html"
    link.symlink_to(run / "results.jsonl")
    before = (run / "results.jsonl").read_bytes()
    _refused(cli("report", str(run), "-o", str(link), "--force", check=False), "regular file")
    assert (run / "results.jsonl").read_bytes() == before


def test_calibrate_refuses_an_existing_report_before_any_work(tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    out.write_text("mine")
    proc = cli("calibrate", "--env", "dataclean", "--seeds", "1", "--report", str(out), check=False)
    _refused(proc, "--force")
    assert out.read_text() == "mine" and "dataclean" not in proc.stdout


def test_merge_never_writes_over_a_shard(run: Path) -> None:
    before = (run / "results.jsonl").read_bytes()
    _refused(cli("merge", str(run), "--out", str(run), "--force", check=False), "inputs")
    assert (run / "results.jsonl").read_bytes() == before


def test_eval_never_writes_through_a_link(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    os.symlink(victim, out / "results.jsonl")
    proc = cli("eval", "--env", "dataclean", "--agent", "oracle", "-n", "1", "--out", str(out),
               "--overwrite", check=False)  # fmt: skip
    _refused(proc, "not a regular file")
    assert victim.read_text() == "keep"
