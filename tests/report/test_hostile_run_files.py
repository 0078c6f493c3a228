"""Hostile run files through every run-reading command, each a real subprocess of the CLI.

Every case is a run directory whose results.jsonl is hostile (nested past any parser's stack,
over the size cap, a FIFO, /dev/zero, a directory, a link to one of those, invalid UTF-8, NaN,
Infinity, an overflowing number, duplicate keys, not JSON, wrong types), or such a path given
directly. `show`, `rescore`, `report` and `merge` must each answer with exit 2 and one line on
stderr, no traceback, within a bounded time, and write nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from report_helpers import CLI, eval_run, records

from datagauntlet.frontdoors.report.runs import MAX_RUN_FILE_BYTES

COMMANDS = ("show", "rescore", "report", "merge")
DEADLINE_S = 60.0  # wall clock under a loaded machine; a hang or an unbounded read is minutes


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    run = eval_run(tmp_path_factory.mktemp("good") / "run", "dataclean", "oracle", 1)
    return records(run)[0]


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record) + "\n"


def _hostile(root: Path, good: dict[str, Any]) -> dict[str, Path]:
    """name -> a run directory whose results.jsonl is that attack."""
    fifo = root / "the-fifo"
    os.mkfifo(fifo)
    text = _line(good)
    deep_field = '"metrics": {"x": ' + "[" * 50_000 + "]" * 50_000 + ", "
    assistant = {"role": "assistant", "tool_calls": ["x"]}
    contents: dict[str, str | bytes] = {
        "deep-open": "[" * 100_000,
        "deep-closed": "[" * 100_000 + "]" * 100_000,
        "deep-object": '{"a":' * 100_000 + "1" + "}" * 100_000,
        "deep-in-field": text.replace('"metrics": {', deep_field, 1),
        "invalid-utf8": text.encode().replace(b'"agent:oracle"', b'"agent:or\xff\xfeacle"'),
        "nan": text.replace('"reward": 1.0', '"reward": NaN'),
        "infinity": text.replace('"reward": 1.0', '"reward": -Infinity'),
        "overflow": text.replace('"reward": 1.0', '"reward": 1e309'),
        "duplicate-keys": text.replace('"reward": 1.0', '"reward": 1.0, "reward": 0.0'),
        "not-json": "this is not a run\n" + text,
        "an-array-line": "[1, 2, 3]\n",
        "wrong-type-messages": _line({**good, "messages": "hello"}),
        "wrong-type-reward": _line({**good, "reward": "1.0"}),
        "wrong-type-components": _line({**good, "components": {"repair_recall": [1]}}),
        "wrong-type-tool-call": _line({**good, "messages": [assistant]}),
    }  # fmt: skip
    cases: dict[str, Path] = {}
    for name, content in contents.items():
        d = root / name
        d.mkdir()
        data = content.encode() if isinstance(content, str) else content
        (d / "results.jsonl").write_bytes(data)
        cases[name] = d
    links = {"fifo": fifo, "dev-zero": Path("/dev/zero"), "link-to-fifo": fifo}
    for name, target in links.items():
        d = root / name
        d.mkdir()
        if name == "fifo":
            os.mkfifo(d / "results.jsonl")
        else:
            (d / "results.jsonl").symlink_to(target)
        cases[name] = d
    (root / "directory").mkdir()
    (root / "directory" / "results.jsonl").mkdir()
    cases["directory"] = root / "directory"
    huge = root / "huge"
    huge.mkdir()
    with (huge / "results.jsonl").open("wb") as fh:  # sparse: no disk spent
        fh.write(text.encode())
        fh.truncate(MAX_RUN_FILE_BYTES + 1)
    cases["huge"] = huge
    return cases


def _argv(command: str, target: Path, out: Path) -> list[str]:
    if command == "report":
        return [*CLI, "report", str(target), "-o", str(out / "r.html")]
    if command == "merge":
        return [*CLI, "merge", str(target), "--out", str(out / "merged")]
    return [*CLI, command, str(target)]


def _run(argv: list[str]) -> tuple[subprocess.CompletedProcess[str], float]:
    start = time.monotonic()
    proc = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        timeout=DEADLINE_S,
        env=os.environ,
        stdin=subprocess.DEVNULL,
    )
    return proc, time.monotonic() - start


def _assert_one_line_refusal(proc: subprocess.CompletedProcess[str], what: str) -> None:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, f"{what}: rc {proc.returncode}\n{proc.stderr[-1500:]}"
    assert "Traceback" not in proc.stderr, f"{what}: {proc.stderr[-1500:]}"
    assert len(lines) == 1 and lines[0].startswith("datagauntlet "), f"{what}: {proc.stderr}"


def test_every_hostile_run_is_one_line_and_exit_2_for_every_command(
    good: dict[str, Any], tmp_path: Path
) -> None:
    cases = _hostile(tmp_path, good)
    jobs = []
    for name, target in cases.items():
        for command in COMMANDS:
            out = tmp_path / "out" / f"{name}-{command}"
            out.mkdir(parents=True)
            jobs.append((f"{command} {name}", _argv(command, target, out), out))
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda job: _run(job[1]), jobs))
    for (what, _, out), (proc, seconds) in zip(jobs, results, strict=True):
        _assert_one_line_refusal(proc, what)
        assert seconds < DEADLINE_S, what
        assert not any(out.iterdir()), f"{what} wrote {list(out.iterdir())}"


@pytest.mark.parametrize(
    "target", ["/dev/zero", "{fifo}", "{link}", "{tmp}", "{bad_utf8}"], ids=str
)
@pytest.mark.parametrize("command", ["show", "rescore", "report"])
def test_a_hostile_path_given_directly(command: str, target: str, tmp_path: Path) -> None:
    fifo = tmp_path / "f.jsonl"
    os.mkfifo(fifo)
    (tmp_path / "l.jsonl").symlink_to("/dev/zero")
    (tmp_path / "u.jsonl").write_bytes(b'{"traces": ["\xff"]}\n')
    path = target.format(
        fifo=fifo, link=tmp_path / "l.jsonl", tmp=tmp_path, bad_utf8=tmp_path / "u.jsonl"
    )
    proc, seconds = _run(_argv(command, Path(path), tmp_path))
    _assert_one_line_refusal(proc, f"{command} {target}")
    assert seconds < DEADLINE_S
