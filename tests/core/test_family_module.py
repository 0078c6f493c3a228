"""The family_module hook: a user's module adds splits (and families) to any env."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

import datagauntlet as dg


@pytest.fixture
def user_modules(tmp_path: Path) -> Iterator[Path]:
    sys.path.insert(0, str(tmp_path))
    yield tmp_path
    sys.path.remove(str(tmp_path))
    for name in [m for m in sys.modules if m.startswith("dg_user_")]:
        del sys.modules[name]


def _write(root: Path, name: str, body: str) -> str:
    (root / f"{name}.py").write_text(textwrap.dedent(body))
    return name


@pytest.mark.parametrize("env_id", ["dataclean", "bad-batch-gate", "dirty-integration"])
def test_a_module_adds_a_split_with_its_own_seeds(user_modules: Path, env_id: str) -> None:
    name = _write(
        user_modules,
        f"dg_user_{env_id.replace('-', '_')}",
        """
        SPLITS = {"holdout": [11, 12, 13]}
    """,
    )
    env = dg.make(env_id, family_module=name)
    tasks = env.tasks("holdout")
    assert [t.seed for t in tasks] == [11, 12, 13]
    assert [t.id for t in tasks] == ["holdout-00000", "holdout-00001", "holdout-00002"]
    ep = env.episode(tasks[1])
    assert ep.prompt
    policy = env.policies()[env.reference]
    policy(ep)
    assert ep.score().reward == 1.0
    assert env.tasks("eval", 2) == dg.make(env_id).tasks("eval", 2)  # public splits untouched


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("SPLITS = {'eval': [1]}", "built in"),
        ("SPLITS = {'x': ['1']}", "not an int"),
        ("SPLITS = {'x': [-1]}", "outside"),
        ("SPLITS = [1, 2]", "must be a dict"),
        ("ENV = 'dirty-integration'", "written for"),
        ("FAMILIES = 'abc'", "must be a list"),
    ],
)
def test_bad_modules_fail_at_make_with_a_reason(
    user_modules: Path, body: str, message: str
) -> None:
    name = _write(user_modules, f"dg_user_bad_{abs(hash(body)) % 10**6}", body)
    with pytest.raises(ValueError, match=message):
        dg.make("dataclean", family_module=name)


def test_missing_module_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="cannot be imported"):
        dg.make("dataclean", family_module="dg_user_nowhere_to_be_found")
    with pytest.raises(ValueError, match="of your own"):
        dg.make("dataclean", family_module="datagauntlet.core.seeding")
