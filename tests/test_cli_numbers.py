"""Every numeric option of every command refuses inf, nan, a negative number and an overflow
(1e309) with exit 2 and one line, through the one shared parser (cli/options.py)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

import pytest

from datagauntlet.cli.main import build_parser, main

BAD = ("inf", "nan", "-1", "1e309", "-inf")


def _numeric_options() -> list[tuple[list[str], str]]:
    """(command path, option) for every option whose parser is a number type."""
    parser, _ = build_parser()
    found: list[tuple[list[str], str]] = []

    def walk(p: argparse.ArgumentParser, path: list[str]) -> None:
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, [*path, name])
            elif action.option_strings and getattr(action.type, "__name__", "") in ("int", "float"):
                found.append((path, action.option_strings[0]))

    walk(parser, [])
    return found


OPTIONS = _numeric_options()


def test_the_options_are_found() -> None:
    names = {(" ".join(p), o) for p, o in OPTIONS}
    for expected in [("sandbox run", "--timeout"), ("eval", "--request-timeout"),
                     ("server", "--idle-seconds"), ("calibrate", "--seeds")]:  # fmt: skip
        assert expected in names, sorted(names)


@pytest.mark.parametrize(("path", "option"), OPTIONS, ids=lambda v: str(v))
def test_a_bad_number_is_one_line_and_exit_2(
    path: list[str], option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for value in BAD:
        with pytest.raises(SystemExit) as exc:
            main([*path, *_positionals(path), f"{option}={value}"])
        err = capsys.readouterr().err.strip().splitlines()
        assert exc.value.code == 2, (path, option, value)
        assert len(err) == 1 and option.lstrip("-") in err[0], (path, option, value, err)


def _positionals(path: list[str]) -> list[str]:
    return {"sandbox run": ["s.py"], "show": ["r"], "rescore": ["r"], "play": ["dataclean"],
            "event-recon materialize": ["--out", "x"],
            "gates": []}.get(" ".join(path), [])  # fmt: skip


@pytest.mark.parametrize("value", BAD)
def test_sandbox_timeout_as_a_real_process(value: str, tmp_path) -> None:
    script = tmp_path / "s.py"
    script.write_text("print(1)\n")
    proc = subprocess.run(
        [sys.executable, "-m", "datagauntlet.cli.main", "sandbox", "run", str(script),
         "--workspace", str(tmp_path), "--timeout", value],
        capture_output=True, text=True, timeout=60, env=os.environ,
    )  # fmt: skip
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "--timeout" in proc.stderr
