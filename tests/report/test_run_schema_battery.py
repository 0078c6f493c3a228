"""Wrong types at every field a run reader reads, through the CLI's entry point: each is refused
by `show`, `rescore`, `report` and `merge` with exit 2 and one line naming the field; the
same record untouched is read (the battery is not refusing everything)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from report_helpers import eval_run, records

from datagauntlet.cli.main import main

# field path -> the kinds it may hold; every other kind of value must be refused
FIELDS: dict[str, tuple[str, ...]] = {
    "task_id": ("str", "int"),
    "rollout": ("int",),
    "reward": ("int", "float"),
    "components.repair_recall": ("int", "float"),
    "seed": ("int",),
    "split": ("str", "int"),
    "status": ("str",),
    "stop": ("str",),
    "env": ("str",),
    "model": ("str",),
    "turns": ("int",),
    "error": ("str",),
    "config": ("dict",),
    "metrics": ("dict",),
    "versions": ("dict",),
    "task": ("dict",),
    "usage": ("dict",),
    "usage.total_tokens": ("int",),
    "messages": ("list",),
    "messages.0": ("dict",),
    "messages.0.role": ("str",),
    "messages.0.content": ("str", "list"),
    "messages.2.tool_calls": ("list",),
    "messages.2.tool_calls.0": ("dict",),
    "messages.2.tool_calls.0.function": ("dict",),
    "messages.2.tool_calls.0.function.name": ("str",),
    "messages.2.tool_calls.0.function.arguments": ("str", "dict"),
}
VALUES: dict[str, Any] = {"str": "x", "int": -3, "float": 1.5, "bool": True, "list": [], "dict": {}}


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    run = eval_run(tmp_path_factory.mktemp("good") / "run", "dataclean", "oracle", 1)
    record = records(run)[0]
    assert record["messages"][2].get("tool_calls"), "the battery needs a tool call at message 2"
    return record


def _set(record: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(record)
    node: Any = out
    *head, last = path.split(".")
    for key in head:
        node = node[int(key)] if isinstance(node, list) else node[key]
    node[int(last) if isinstance(node, list) else last] = value
    return out


def _cases() -> list[tuple[str, str]]:
    out = []
    for path, allowed in FIELDS.items():
        for kind in VALUES:
            if kind not in allowed and not (kind == "int" and "float" in allowed):
                if kind == "int" and path in ("rollout", "turns", "usage.total_tokens"):
                    out.append((path, kind))  # -3: a count below 0
                elif kind != "int" or "int" not in allowed:
                    out.append((path, kind))
    return out


def _commands(run: Path, out: Path) -> list[list[str]]:
    return [
        ["show", str(run)],
        ["rescore", str(run)],
        ["report", str(run), "-o", str(out / "r.html")],
        ["merge", str(run), "--out", str(out / "merged")],
    ]


@pytest.mark.parametrize(("path", "kind"), _cases(), ids=lambda v: str(v))
def test_a_wrong_type_is_refused_by_every_reader(
    good: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str], path: str, kind: str
) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.jsonl").write_text(json.dumps(_set(good, path, VALUES[kind])) + "\n")
    for argv in _commands(run, tmp_path):
        assert main(argv) == 2, (argv[0], path, kind, capsys.readouterr())
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "error" in err[0], (argv[0], err)
        assert path.split(".")[-1] in err[0] or "missing" in err[0], (argv[0], path, err)
    assert not (tmp_path / "r.html").exists() and not (tmp_path / "merged").exists()


def test_the_untouched_record_is_read_by_every_reader(
    good: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.jsonl").write_text(json.dumps(good) + "\n")
    for argv in _commands(run, tmp_path):
        if argv[0] == "report":
            pytest.importorskip("plotly")
        assert main(argv) == 0, (argv[0], capsys.readouterr().err)
