"""`rescore` of a run file someone else wrote never imports a module named in it, nor opens a
path named in it: its config may set only the keys its env declares remote-safe, unless the
operator passes --trust-run-config. A module that leaves a marker file when imported proves
which happened."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from report_helpers import cli, eval_run

MODULE = "dg_rescore_marker"


@pytest.fixture
def tampered(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A real run whose saved config names a marker module; the environ that can import it."""
    root = tmp_path / "lib"
    root.mkdir()
    flag = tmp_path / "imported"
    (root / f"{MODULE}.py").write_text(
        f"from pathlib import Path\nPath({str(flag)!r}).write_text('imported')\n"
    )
    run = eval_run(tmp_path / "run", "dirty-integration", "careful", 2)
    results = run / "results.jsonl"
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    for row in rows:
        row["config"]["family_module"] = MODULE
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    path = os.pathsep.join(p for p in (str(root), os.environ.get("PYTHONPATH")) if p)
    return run, flag, {**os.environ, "PYTHONPATH": path}


def test_rescore_refuses_a_module_named_by_the_run_file(
    tampered: tuple[Path, Path, dict[str, str]],
) -> None:
    run, flag, environ = tampered
    proc = cli("rescore", str(run), check=False, env=environ)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "'family_module'" in proc.stderr and "--trust-run-config" in proc.stderr
    assert not flag.exists()


def test_trust_run_config_imports_it(tampered: tuple[Path, Path, dict[str, str]]) -> None:
    run, flag, environ = tampered
    proc = cli("rescore", str(run), "--trust-run-config", "--json", env=environ)
    assert flag.exists()
    assert json.loads(proc.stdout)["changed"] == []


def test_rescore_refuses_a_path_named_by_the_run_file(tmp_path: Path) -> None:
    run = eval_run(tmp_path / "run", "bad-batch-gate", "careful", 1)
    results = run / "results.jsonl"
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    for row in rows:
        row["config"]["cases"] = "/etc/shadow"
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    proc = cli("rescore", str(run), check=False)
    assert proc.returncode != 0 and "'cases'" in proc.stderr
    assert "shadow" not in proc.stderr.replace("'cases'", "")  # nothing read from the path
