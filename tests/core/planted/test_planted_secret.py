"""The secret behind the held-out splits: when it counts as given, what a missing or empty one
says, and that it always yields the same private seeds (rules that survived planted bugs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from datagauntlet.core import seeding
from datagauntlet.core.seeding import SecretMissing, task_seed

SECRET = "a-secret-of-the-leaderboard-0001"
PRIVATE_SEEDS = [1570820098733745426, 5807438047091872421]
PRIVATE_SPLIT_KEY = "private:5fef99dd0f1b04495d0f73cd126b5790"


@pytest.fixture
def no_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(seeding.SECRET_FILE_ENV, raising=False)
    monkeypatch.delenv(seeding.SECRET_ENV, raising=False)


def test_has_secret_says_whether_one_is_set(
    no_secret: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert not seeding.has_secret()
    monkeypatch.setenv(seeding.SECRET_ENV, SECRET)
    assert seeding.has_secret()


def test_a_secret_of_exactly_the_minimum_length_is_accepted(
    no_secret: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(seeding.SECRET_ENV, "k" * seeding.MIN_SECRET_BYTES)
    assert task_seed("dataclean", "private", 0) > 0
    monkeypatch.setenv(seeding.SECRET_ENV, "k" * (seeding.MIN_SECRET_BYTES - 1))
    with pytest.raises(SecretMissing, match="at least 16 bytes"):
        task_seed("dataclean", "private", 0)


def test_the_missing_secret_message_names_both_ways_to_give_one(no_secret: None) -> None:
    with pytest.raises(SecretMissing) as caught:
        task_seed("dataclean", "private", 0)
    assert str(caught.value) == (
        "held-out splits (private, private-train) need a secret: set DATAGAUNTLET_SECRET "
        "or pass --secret-file PATH"
    )


def test_an_empty_secret_file_is_refused_by_name(
    no_secret: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    empty = tmp_path / "empty"
    empty.write_text("  \n")
    monkeypatch.setenv(seeding.SECRET_FILE_ENV, str(empty))
    with pytest.raises(SecretMissing) as caught:
        task_seed("dataclean", "private", 0)
    assert str(caught.value) == f"the secret file {str(empty)!r} is empty"


def test_held_out_seeds_stay_what_they_were_for_a_given_secret(
    no_secret: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A leaderboard regenerates its private tasks from its secret: the key derivation (its
    # personalisation included) must never move them.
    monkeypatch.setenv(seeding.SECRET_ENV, SECRET)
    assert [task_seed("dataclean", "private", i) for i in range(2)] == PRIVATE_SEEDS
    assert seeding.split_key("dataclean", "private") == PRIVATE_SPLIT_KEY


def test_an_unknown_split_is_refused_naming_every_choice() -> None:
    from datagauntlet.core.seeding import ALL_SPLITS, check_split

    check_split("train")
    check_split("extra", ("extra",))
    with pytest.raises(ValueError) as caught:
        check_split("nope", ("extra",))
    assert (
        str(caught.value) == f"unknown split 'nope'; expected one of {', '.join(ALL_SPLITS)}, extra"
    )
