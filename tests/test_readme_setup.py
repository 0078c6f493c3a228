"""The README's set-up facts are true: its first two commands, where the command is, the
fixture's origin; and docs/security.md's defaults and bounds are the code's."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
SECTION = README.split("## Getting set up\n", 1)[1].split("\n## ")[0]
SECURITY = (ROOT / "docs" / "security.md").read_text()


def test_the_readme_starts_with_the_two_commands_a_new_user_runs() -> None:
    first = README.split("\n\n", 2)[1]  # the block right under the title
    lines = first.splitlines()
    assert lines[0] == "```bash" and lines[-1] == "```", first
    assert [line.split("#")[0].strip() for line in lines[1:-1]] == ["make run", "make test"]
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^run: \$\(STAMP\)$", makefile, re.M)
    assert re.search(r"^test: \$\(STAMP\)$", makefile, re.M)


def test_the_readme_fits_on_a_few_screens_and_holds_what_a_user_wants() -> None:
    assert len(README.splitlines()) <= 250  # each env's page, the doors, speed: in docs/
    headings = re.findall(r"^## (.+)$", README, re.M)
    assert headings[:2] == ["The protocol", "Command line"], headings
    assert "Documentation" in headings
    assert all(f"(docs/envs/{env}.md)" in README for env in _ENVS)


_ENVS = ("dirty-integration", "bad-batch-gate", "dataclean", "event-recon")


def test_the_command_lives_where_the_readme_says() -> None:
    assert "`.venv/bin/datagauntlet`" in SECTION
    assert re.search(r"^VENV := \.venv$", (ROOT / "Makefile").read_text(), re.M)
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["datagauntlet"] == "datagauntlet.cli.main:main"


def _fixture() -> Path | None:
    rel = Path("fixtures") / "bad-batch-gate" / "eval_curated.jsonl"
    for root in (os.environ.get("DATAGAUNTLET_SHARED"), str(ROOT / ".." / "shared")):
        if root and (Path(root) / rel).is_file():
            return Path(root) / rel
    return None


def test_the_fixture_named_in_the_readme_is_the_one_the_tests_read() -> None:
    sha = re.search(r"sha256 `([0-9a-f]{64})`", SECTION)
    assert sha and "`jigonyoo/bad-batch-gate`" in SECTION
    assert "`bad_batch_gate/data/eval_curated.jsonl`" in SECTION
    bbg = (ROOT / "docs" / "envs" / "bad-batch-gate.md").read_text()
    assert sha.group(1).startswith(re.search(r"sha256 `([0-9a-f]+)…`", bbg).group(1))  # type: ignore[union-attr]
    path = _fixture()
    if path is None:
        pytest.skip("the original's fixture is not here: set DATAGAUNTLET_SHARED (see README)")
    assert hashlib.sha256(path.read_bytes()).hexdigest() == sha.group(1)


def test_eval_defaults_in_the_docs_are_the_codes() -> None:
    from datagauntlet.frontdoors.evaluate import DEFAULT_ROLLOUT_TIMEOUT
    from datagauntlet.frontdoors.models import DEFAULT_REQUEST_TIMEOUT

    assert f"`--request-timeout`, default {DEFAULT_REQUEST_TIMEOUT:g} s" in SECURITY
    assert f"`--rollout-timeout`, default {DEFAULT_ROLLOUT_TIMEOUT:g} s" in SECURITY


def test_the_suite_says_why_a_test_skipped(tmp_path: Path) -> None:
    probe = tmp_path / "test_probe.py"
    probe.write_text(
        "import pytest\n\ndef test_x():\n    pytest.skip('fixture not here: see README')\n"
    )
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), "--rootdir",
         str(tmp_path), "-p", "no:cacheprovider", str(probe)],
        capture_output=True, text=True, cwd=tmp_path, env=os.environ,
    ).stdout  # fmt: skip
    assert "SKIPPED" in out and "fixture not here: see README" in out


def test_the_memory_bounds_in_the_docs_are_the_codes() -> None:
    from datagauntlet.core.call_text import REFUSED_ARGS_CHARS

    sys.path.insert(0, str(ROOT / "tests" / "frontdoors"))
    try:
        from test_fd_serve_memory import RSS_LIMIT_MB
    finally:
        sys.path.pop(0)
    assert f"only up to {REFUSED_ARGS_CHARS:,} characters" in SECURITY
    assert f"under {RSS_LIMIT_MB} MB" in SECURITY
