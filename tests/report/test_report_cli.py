"""The report, show and rescore commands on real runs, and on paths that are not runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from report_helpers import cli, eval_run, records

from datagauntlet.frontdoors.report.runs import RunError, load_runs


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return eval_run(tmp_path_factory.mktemp("cli") / "dc", "dataclean", "oracle", 3)


def test_show_prints_the_trajectory(run: Path) -> None:
    first = sorted(records(run), key=lambda r: r["task_id"])[0]
    out = cli("show", str(run), "--rollout", "0").stdout
    assert first["task_id"] in out and f"{first['reward']:.4f}" in out
    for m in first["messages"]:
        for call in m.get("tool_calls") or []:
            assert call["function"]["name"] in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["show", "{run}", "--rollout", "99"], "out of range"),
        (["show", "/nonexistent/run"], "no such file"),
        (["report", "/etc/hostname", "-o", "{tmp}/r.html"], "not a run file"),
        (["report", "{run}", "-o", "/"], "not a regular file"),
        (["rescore", "{tmp}"], "not a run directory"),
    ],
)
def test_mistakes_end_in_one_line_and_exit_2(run: Path, tmp_path: Path, args, message) -> None:
    argv = [a.format(run=run, tmp=tmp_path) for a in args]
    proc = cli(*argv, check=False)
    assert proc.returncode == 2, proc.stdout
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_a_torn_last_line_is_skipped_not_fatal(run: Path, tmp_path: Path) -> None:
    torn = tmp_path / "torn"
    torn.mkdir()
    text = (run / "results.jsonl").read_text()
    (torn / "results.jsonl").write_text(text + '{"task_id": "eval-0000')
    (loaded,) = load_runs([str(torn)])
    assert len(loaded.rollouts) == len(records(run))


def test_vf_traces_are_read_in_the_chat_shape(tmp_path: Path) -> None:
    trace = {
        "task": {
            "data": {
                "id": "eval-00000",
                "seed": 1,
                "split": "eval",
                "env_id": "dataclean",
                "env_config": {"family": "crm"},
            }
        },
        "agent": {"config": {"model": "m"}},
        "rewards": {
            "repair_recall": {"score": 0.5, "weight": 0.6},
            "preservation": {"score": 1.0, "weight": 0.2},
            "row_integrity": {"score": 1.0, "weight": 0.2},
        },
        "metrics": {"cells_repaired": 3.0},
        "nodes": [
            {"message": {"role": "user", "content": "hi"}},
            {
                "message": {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "id": "c0",
                            "type": "function",
                            "name": "submit_program",
                            "arguments": "{}",
                        }
                    ],
                }
            },
        ],
        "errors": [],
        "ok": True,
        "stop_condition": "episode_done",
    }
    path = tmp_path / "traces.jsonl"
    path.write_text(json.dumps({"traces": [trace]}) + "\n")
    (loaded,) = load_runs([str(path)])
    r = loaded.rollouts[0]
    assert (
        loaded.kind == "verifiers"
        and loaded.env == "dataclean"
        and r.attrs == {"family": "crm", "split": "eval"}
    )
    assert r.reward == pytest.approx(0.7)
    assert r.messages[1]["tool_calls"][0]["function"] == {
        "name": "submit_program",
        "arguments": "{}",
    }


def test_a_directory_that_is_not_a_run_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(RunError, match="not a run directory"):
        load_runs([str(tmp_path)])


def test_calibrate_writes_a_report_of_what_it_ran(tmp_path: Path) -> None:
    out = tmp_path / "runs" / "report.html"
    proc = cli("calibrate", "--env", "bad-batch-gate", "--seeds", "2", "--report", str(out))
    assert f"report: {out}" in proc.stderr
    html = out.read_text()
    assert "bad-batch-gate" in html and '"kind":"calibrate"' in html
    assert "https://" not in html.split('id="report-data"')[1]  # the data holds no link out


def test_ten_thousand_rollouts_stay_under_50_mb(run: Path, tmp_path: Path) -> None:
    from datagauntlet.frontdoors.report.html import write_report

    base = records(run)
    big = tmp_path / "big"
    big.mkdir()
    with (big / "results.jsonl").open("w") as fh:
        for i in range(10_000):
            r = dict(base[i % len(base)])
            r["task_id"], r["rollout"] = f"eval-{i // 4:05d}", i % 4
            fh.write(json.dumps(r) + "\n")
    runs = load_runs([str(big)])
    assert len(runs[0].rollouts) == 10_000
    assert write_report(runs, tmp_path / "r.html") < 50_000_000
