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
    with pytest.raises(ValueError, match="of your own"):
        dg.make("dataclean", family_module="datagauntlet")


def test_a_module_beside_the_package_is_not_the_package() -> None:
    """`datagauntlet_heldout` is a distribution of its own: its name only starts alike."""
    env = dg.make("event-recon", family_module="datagauntlet_heldout.event_recon")
    assert env.family_module is not None and len(env.family_module.families) == 3


def test_dataclean_module_layouts_join_only_the_module_split(user_modules: Path) -> None:
    name = _write(
        user_modules,
        "dg_user_dc_layout",
        """
        from dataclasses import replace
        from datagauntlet.envs.dataclean.world import families as fam

        FAMILIES = [replace(fam.CRM, id="members", title="club member export")]
        SPLITS = {"holdout": list(range(1, 41))}
    """,
    )
    env = dg.make("dataclean", family_module=name)
    seen = set()
    for task in env.tasks("holdout"):
        ep = env.episode(task)
        seen.add(ep.world.family.id)
        env.policies()["oracle"](ep)
        assert ep.score().reward == 1.0
    assert "members" in seen and len(seen) > 1
    public = {env.episode(t).world.family.id for t in env.tasks("eval", 40)}
    assert "members" not in public


def test_bad_batch_gate_module_families_join_only_the_module_split(user_modules: Path) -> None:
    name = _write(
        user_modules,
        "dg_user_bbg_family",
        """
        from datagauntlet.envs.bad_batch_gate.world.families import Family, dimension_fanout

        def double_fanout(draft, variant):
            return dimension_fanout(draft, variant)

        FAMILIES = [Family("fanout-again", double_fanout)]
        SPLITS = {"holdout": list(range(100, 160))}
    """,
    )
    env = dg.make("bad-batch-gate", family_module=name)
    families = set()
    for task in env.tasks("holdout"):
        ep = env.episode(task)
        families.add(ep.case.family)
        env.policies()["careful"](ep)
        assert ep.score().reward == 1.0
    assert "fanout-again" in families
    assert "fanout-again" not in {env.case(t).family for t in env.tasks("eval")}


@pytest.mark.parametrize("env_id", ["dataclean", "bad-batch-gate"])
def test_module_families_of_the_wrong_type_are_refused(user_modules: Path, env_id: str) -> None:
    name = _write(
        user_modules,
        f"dg_user_wrong_{env_id.replace('-', '_')}",
        """
        FAMILIES = ["not a family"]
    """,
    )
    with pytest.raises(ValueError, match="family"):
        dg.make(env_id, family_module=name)
