"""Held-out splits keyed by a secret: only its holder can regenerate them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import datagauntlet as dg
from datagauntlet.core import seeding
from datagauntlet.core.seeding import SecretMissing, task_seed

SECRET = "a-secret-of-the-leaderboard-0001"
OTHER = "another-secret-nobody-knows-0002"

# Public seeds as published: the secret mechanism must never move them.
PUBLIC_SEEDS = {
    ("dataclean", "eval", 0): 6087698596074237929,
    ("dataclean", "eval", 1): 3810652245320742914,
    ("bad-batch-gate", "eval", 0): 7034409059421508988,
    ("dirty-integration", "eval", 1): 4462928105667675202,
}


@pytest.fixture
def secret(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.delenv(seeding.SECRET_FILE_ENV, raising=False)
    monkeypatch.setenv(seeding.SECRET_ENV, SECRET)
    return SECRET


@pytest.fixture
def no_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(seeding.SECRET_FILE_ENV, raising=False)
    monkeypatch.delenv(seeding.SECRET_ENV, raising=False)


@pytest.mark.parametrize(("key", "seed"), sorted(PUBLIC_SEEDS.items()))
def test_public_seeds_are_unchanged_with_or_without_a_secret(
    key: tuple[str, str, int], seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(seeding.SECRET_ENV, raising=False)
    assert task_seed(*key) == seed
    monkeypatch.setenv(seeding.SECRET_ENV, SECRET)
    assert task_seed(*key) == seed
    assert dg.make(key[0]).tasks(key[1], 1, start=key[2])[0].seed == seed


def test_held_out_split_needs_a_secret(no_secret: None) -> None:
    with pytest.raises(SecretMissing, match="DATAGAUNTLET_SECRET"):
        dg.make("dataclean").tasks("private", 2)


def test_short_secret_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(seeding.SECRET_FILE_ENV, raising=False)
    monkeypatch.setenv(seeding.SECRET_ENV, "short")
    with pytest.raises(SecretMissing, match="at least 16 bytes"):
        task_seed("dataclean", "private", 0)


def test_private_seeds_depend_on_the_secret_and_never_meet_public_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(seeding.SECRET_ENV, SECRET)
    mine = [task_seed("dataclean", "private", i) for i in range(300)]
    monkeypatch.setenv(seeding.SECRET_ENV, OTHER)
    theirs = [task_seed("dataclean", "private", i) for i in range(300)]
    public = {task_seed("dataclean", s, i) for s in seeding.SPLITS for i in range(300)}
    assert len(set(mine)) == 300 and not set(mine) & set(theirs) and not set(mine) & public
    assert task_seed("dataclean", "private", 0) != task_seed("bad-batch-gate", "private", 0)


def test_every_env_offers_the_private_split(secret: str) -> None:
    for env_id in dg.list_envs():
        env = dg.make(env_id)
        tasks = env.tasks("private", 3)
        assert [t.id for t in tasks] == ["private-00000", "private-00001", "private-00002"]
        ep = env.episode(tasks[0])
        assert ep.prompt and SECRET not in ep.prompt


def test_secret_file_keys_the_same_seeds_as_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "secret"
    path.write_text(SECRET + "\n")
    monkeypatch.delenv(seeding.SECRET_ENV, raising=False)
    # use_secret_file sets the variable itself: setting it through monkeypatch first records
    # its prior state, so the file's path does not outlive this test.
    monkeypatch.setenv(seeding.SECRET_FILE_ENV, "")
    seeding.use_secret_file(path)
    assert os.environ[seeding.SECRET_FILE_ENV] == str(path)
    from_file = task_seed("dataclean", "private", 4)
    monkeypatch.delenv(seeding.SECRET_FILE_ENV)
    monkeypatch.setenv(seeding.SECRET_ENV, SECRET)
    assert task_seed("dataclean", "private", 4) == from_file
    with pytest.raises(SecretMissing, match="cannot read"):
        seeding.use_secret_file(tmp_path / "missing")


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "datagauntlet.cli.main", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_the_secret_never_appears_in_results_logs_or_traces(tmp_path: Path) -> None:
    path = tmp_path / "secret"
    path.write_text(SECRET)
    env = {k: v for k, v in os.environ.items() if not k.startswith("DATAGAUNTLET_SECRET")}
    out = tmp_path / "run"
    runs = [
        _cli("calibrate", "--env", "dataclean", "--split", "private", "--seeds", "3",
             "--secret-file", str(path), "--json", "--workers", "2", env=env),
        _cli("eval", "--env", "bad-batch-gate", "--split", "private", "-n", "2",
             "--secret-file", str(path), "--out", str(out), "--json", env=env),
    ]  # fmt: skip
    for proc in runs:
        assert proc.returncode == 0, proc.stderr
    texts = [p.stdout + p.stderr for p in runs]
    texts += [f.read_text(errors="replace") for f in out.rglob("*") if f.is_file()]
    assert len(texts) > 2
    digest_forms = {SECRET, SECRET.encode().hex(), str(path.read_bytes())}
    for text in texts:
        for form in digest_forms:
            assert form not in text
    missing = _cli("calibrate", "--env", "dataclean", "--split", "private", env=env)
    assert missing.returncode == 2 and "secret" in missing.stderr
    assert "Traceback" not in missing.stderr
