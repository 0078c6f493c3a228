"""`datagauntlet rescore`: replays saved tool calls on today's code and lists what moved."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from report_helpers import cli, eval_run, records

SRC = Path(__file__).resolve().parents[2] / "src"
OLD = {"completeness": 0.6, "type_handling": 0.2, "budget_discipline": 0.2}
NEW = {"completeness": 0.5, "type_handling": 0.3, "budget_discipline": 0.2}


@pytest.fixture(scope="module")
def naive_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return eval_run(tmp_path_factory.mktemp("rescore") / "naive", "dirty-integration", "naive", 6)


def test_unchanged_code_changes_no_score(naive_run: Path) -> None:
    out = json.loads(cli("rescore", str(naive_run), "--json").stdout)
    assert out["rollouts"] == 6 and out["changed"] == [] and out["diverged"] == 0


def test_a_grader_weight_change_lists_exactly_the_rollouts_that_moved(
    naive_run: Path, tmp_path: Path
) -> None:
    scratch = tmp_path / "src"
    shutil.copytree(SRC, scratch, ignore=shutil.ignore_patterns("__pycache__"))
    grader = scratch / "datagauntlet" / "envs" / "dirty_integration" / "grader.py"
    text = grader.read_text()
    old_line = f"WEIGHTS = {json.dumps(OLD).replace(chr(34), chr(34))}"
    assert old_line in text
    grader.write_text(text.replace(old_line, f"WEIGHTS = {json.dumps(NEW)}"))
    env = {**os.environ, "PYTHONPATH": str(scratch)}
    proc = subprocess.run(
        [sys.executable, "-m", "datagauntlet.cli.main", "rescore", str(naive_run), "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    saved = sorted(records(naive_run), key=lambda r: r["task_id"])
    moved = {
        r["task_id"]
        for r in saved
        if abs(sum(NEW[k] * v for k, v in r["components"].items()) - r["reward"]) > 1e-6
    }
    assert moved, "the sample must hold a rollout whose score moves"
    assert {c["task_id"] for c in out["changed"]} == moved
    for c in out["changed"]:
        assert c["now"] == pytest.approx(
            sum(NEW[k] * v for k, v in c["components_saved"].items()), abs=1e-6
        )
    assert "current_versions" in out and "saved_versions" in out
    flagged = subprocess.run(
        [
            sys.executable,
            "-m",
            "datagauntlet.cli.main",
            "rescore",
            str(naive_run),
            "--fail-on-change",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert flagged.returncode == 1 and f"{len(moved)} changed" in flagged.stdout


def test_a_run_whose_tasks_cannot_be_rebuilt_is_refused(naive_run: Path, tmp_path: Path) -> None:
    forged = tmp_path / "forged"
    forged.mkdir()
    lines = []
    for r in records(naive_run):
        r["seed"] = int(r["seed"]) + 1
        lines.append(json.dumps(r))
    (forged / "results.jsonl").write_text("\n".join(lines) + "\n")
    proc = cli("rescore", str(forged), check=False)
    assert proc.returncode == 2
    assert "can no longer be rebuilt" in proc.stderr and "Traceback" not in proc.stderr
    unknown = tmp_path / "unknown"
    unknown.mkdir()
    r = records(naive_run)[0]
    r["env"] = "no-such-env"
    (unknown / "results.jsonl").write_text(json.dumps(r) + "\n")
    proc = cli("rescore", str(unknown), check=False)
    assert proc.returncode == 2 and "unknown environment" in proc.stderr
