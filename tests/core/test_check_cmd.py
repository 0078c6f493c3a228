"""`datagauntlet check` reports every named check of every env; a failing env exits 1."""

from __future__ import annotations

import json

import pytest

from datagauntlet.cli.main import main
from datagauntlet.core.checks import CHECKS


def test_check_reports_every_check_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--env", "dirty-integration", "--tasks", "1", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["env"] == "dirty-integration" and report["passed"]
    assert [c["name"] for c in report["checks"]] == [name for name, _ in CHECKS]


def test_check_prints_a_line_per_check(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--env", "dataclean", "--tasks", "1", "previews=1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "check_env dataclean: passed" and len(out) == 1 + len(CHECKS)
    assert "  ok   close is safe twice" in out


def test_check_refuses_nonsense(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:  # refused by the option's parser
        main(["check", "--tasks", "0"])
    assert exc.value.code == 2
    assert main(["check", "--env", "dataclean", "--env", "bad-batch-gate", "rows=3"]) == 2
    assert "error" in capsys.readouterr().err
