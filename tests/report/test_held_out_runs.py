"""A held-out run writes no seed: `eval` (plain and in shards), `calibrate --json`, `show`,
`report`, `merge` and `rescore` on private tasks leave no decimal or hex form of a held-out
seed in any file they write or any line they print. The run stays re-scorable by whoever
holds the secret (the saved task refs match), and by nobody else: without the secret, or under
another, `rescore` refuses in one line. Public runs keep their seeds and round-trip as before.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from report_helpers import cli, records

import datagauntlet as dg
from datagauntlet.core import seeding

SECRET = "held-out-runs-test-secret-00001"
ENV = "dirty-integration"
N = 3


def _seeds() -> dict[int, str]:
    out = {}
    for env_id in dg.list_envs():
        env = dg.make(env_id)
        for split in seeding.HELD_OUT_SPLITS:
            out |= {t.seed: f"{env_id} {t.id}" for t in env.tasks(split, N)}
    return out


def _leaks(blobs: list[bytes], seeds: dict[int, str]) -> list[str]:
    found = []
    for seed, where in seeds.items():
        for form in {str(seed), f"{seed:x}", f"{seed:X}", f"{seed:016x}"}:
            if any(form.encode() in b for b in blobs):
                found.append(f"{where}: {form}")
    return found


def _written(*roots: Path) -> list[bytes]:
    return [p.read_bytes() for root in roots for p in sorted(root.rglob("*")) if p.is_file()]


@pytest.fixture(scope="module")
def secret_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != seeding.SECRET_FILE_ENV}
    return {**env, seeding.SECRET_ENV: SECRET}


@pytest.fixture(scope="module")
def seeds(secret_env: dict[str, str]) -> dict[int, str]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(seeding.SECRET_ENV, SECRET)
        return _seeds()


@pytest.fixture(scope="module")
def private_run(tmp_path_factory: pytest.TempPathFactory, secret_env: dict[str, str]) -> Path:
    out = tmp_path_factory.mktemp("held-out") / "private"
    cli("eval", "--env", ENV, "--agent", "careful", "-n", str(N), "--split", "private",
        "--out", str(out), env=secret_env)  # fmt: skip
    return out


def test_eval_run_files_hold_no_held_out_seed(
    private_run: Path, seeds: dict[int, str], secret_env: dict[str, str]
) -> None:
    rows = records(private_run)
    assert len(rows) == N and all(r["task_ref"].startswith("ref-") for r in rows)
    assert all("seed" not in r for r in rows)
    assert _leaks(_written(private_run), seeds) == []


def test_the_secret_holder_rescores_a_private_run(
    private_run: Path, seeds: dict[int, str], secret_env: dict[str, str]
) -> None:
    proc = cli("rescore", str(private_run), "--json", env=secret_env)
    out = json.loads(proc.stdout)
    assert out["rollouts"] == N and out["changed"] == [] and out["diverged"] == 0
    assert _leaks([proc.stdout.encode(), proc.stderr.encode()], seeds) == []


@pytest.mark.parametrize("secret", [None, "another-secret-entirely-0002"])
def test_nobody_else_rescores_a_private_run(
    private_run: Path, seeds: dict[int, str], secret_env: dict[str, str], secret: str | None
) -> None:
    env = {k: v for k, v in secret_env.items() if k != seeding.SECRET_ENV}
    if secret:
        env[seeding.SECRET_ENV] = secret
    proc = cli("rescore", str(private_run), env=env, check=False)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert ("secret" if secret is None else "another task ref") in proc.stderr
    assert _leaks([proc.stdout.encode(), proc.stderr.encode()], seeds) == []


def test_show_report_and_merge_of_a_private_run_write_no_seed(
    private_run: Path, seeds: dict[int, str], secret_env: dict[str, str], tmp_path: Path
) -> None:
    shards = [tmp_path / f"shard{i}" for i in range(2)]
    for i, shard in enumerate(shards):
        cli("eval", "--env", ENV, "--agent", "careful", "-n", str(N), "--split", "private",
            "--shard", f"{i}/2", "--out", str(shard), env=secret_env)  # fmt: skip
    merged = tmp_path / "merged"
    printed = [
        cli("merge", *map(str, shards), "--out", str(merged), env=secret_env),
        cli("show", str(private_run), "--rollout", "0", "--full", env=secret_env),
        cli(
            "report",
            str(private_run),
            str(merged),
            "--out",
            str(tmp_path / "r.html"),
            env=secret_env,
        ),
    ]
    assert sorted(r["task_ref"] for r in records(merged)) == sorted(
        r["task_ref"] for r in records(private_run)
    )
    blobs = _written(tmp_path) + [p.stdout.encode() + p.stderr.encode() for p in printed]
    assert "ref-" in printed[1].stdout
    assert _leaks(blobs, seeds) == []


def test_calibrate_json_of_a_private_split_holds_no_seed(
    seeds: dict[int, str], secret_env: dict[str, str]
) -> None:
    proc = cli("calibrate", "--env", ENV, "--seeds", "2", "--split", "private", "--json",
               env=secret_env)  # fmt: skip
    assert json.loads(proc.stdout.splitlines()[0])["rows"]
    assert _leaks([proc.stdout.encode(), proc.stderr.encode()], seeds) == []


def test_a_public_run_keeps_its_seeds_and_rescores(tmp_path: Path) -> None:
    out = tmp_path / "public"
    cli("eval", "--env", ENV, "--agent", "careful", "-n", "2", "--out", str(out))
    env = dg.make(ENV)
    assert [r["seed"] for r in records(out)] == [t.seed for t in env.tasks("eval", 2)]
    assert all("task_ref" not in r for r in records(out))
    rescored = json.loads(cli("rescore", str(out), "--json").stdout)
    assert rescored["rollouts"] == 2 and rescored["changed"] == []
