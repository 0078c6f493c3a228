"""The command line: help, list, calibrate --json, play at a prompt, clear errors."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

import datagauntlet as dg
from datagauntlet.cli.main import main
from datagauntlet.cli.play_cmd import play_loop


def test_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    for command in ("list", "calibrate", "play", "serve"):
        assert command in out


def test_console_script_runs() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "datagauntlet.cli.main", "list", "--ids"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.split() == dg.list_envs()


def test_calibrate_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calibrate", "--env", "dirty-integration", "--seeds", "4", "--json"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1
    doc = json.loads(lines[0])
    assert doc["env"] == "dirty-integration"
    row = doc["rows"][0]
    assert set(row) >= {"config", "policy", "n", "mean_reward", "min_reward", "components"}
    assert row["n"] == 4 and row["config"] == {"profile": "clean"}
    assert set(row["components"]) == {"completeness", "type_handling", "budget_discipline"}


def test_calibrate_workers_match_one_process(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["calibrate", "--env", "dirty-integration", "--seeds", "6", "--json"]
    main(args)
    one = capsys.readouterr().out
    main([*args, "--workers", "2"])
    assert capsys.readouterr().out == one


def test_calibrate_workers_across_envs_match_one_process(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Every env's jobs are queued at once with workers: the output is still env by env."""
    args = ["calibrate", "--env", "dirty-integration", "--env", "bad-batch-gate", "--seeds", "3",
            "--json"]  # fmt: skip
    main(args)
    one = capsys.readouterr().out
    assert [json.loads(line)["env"] for line in one.splitlines()] == [
        "dirty-integration", "bad-batch-gate"
    ]  # fmt: skip
    main([*args, "--workers", "2"])
    assert capsys.readouterr().out == one


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["calibrate", "--env", "nope"], "unknown environment 'nope'"),
        (["calibrate", "--seeds", "0"], "--seeds must be >= 1"),
        (["play", "dirty-integration", "profile=nightmare"], "must be one of"),
        (["play", "dirty-integration", "--seed", "-1"], "--seed must be >= 0"),
        (["serve", "dirty-integration", "colour=red"], "unknown config field 'colour'"),
    ],
)
def test_bad_arguments_exit_2_with_a_message(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:  # a mistake argparse catches exits while parsing; one found later is returned
        code = main(argv)
    except SystemExit as exit_:
        code = exit_.code
    assert code == 2
    assert message in capsys.readouterr().err


def test_play_at_a_prompt_shows_the_score() -> None:
    env = dg.make("dirty-integration", profile="clean", num_records=4, page_size=4)
    ep = env.episode(env.tasks("eval", 1)[0])
    ids = [r.id for r in ep.world.records]  # the player copies them from the page shown
    amounts = [r.amount for r in ep.world.records]
    records = json.dumps([{"id": i, "amount": a} for i, a in zip(ids, amounts, strict=True)])
    typed = "\n".join(
        [
            "tools",
            "fetch_page cursor=null",
            "bogus_tool {}",
            'fetch_page {"cursor": "forged"}',
            f'submit_records {{"records": {records}}}',
        ]
    )
    out = io.StringIO()
    play_loop(ep, io.StringIO(typed + "\n"), out)
    text = out.getvalue()
    assert "fetch_page(cursor)" in text
    assert "unknown tool 'bogus_tool'" in text and "unknown cursor" in text
    assert "episode over (submitted): reward 1.000" in text
