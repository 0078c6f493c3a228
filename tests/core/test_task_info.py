"""Task descriptors say what an episode would say, without building the world."""

from __future__ import annotations

import json

import pytest

import datagauntlet as dg

CONFIGS = [
    ("bad-batch-gate", {}),
    ("bad-batch-gate", {"families": "extended"}),
    ("dataclean", {"previews": 2}),
    ("dataclean", {"family": "inventory", "rows": 120}),
    ("dirty-integration", {"profile": "hostile"}),
]


@pytest.mark.parametrize("env_id", dg.list_envs())
def test_every_env_describes_its_tasks_as_its_episodes_do(env_id: str) -> None:
    env = dg.make(env_id)
    for task in env.tasks("eval", 3):
        info = env.task_info(task)
        ep = env.episode(task)
        try:
            assert (info.system_prompt, info.prompt) == (ep.system_prompt, ep.prompt)
        finally:
            ep.close()
        assert info.task == task and json.loads(json.dumps(info.as_dict())) == info.as_dict()
        assert info.metadata == env.task_metadata(task)


@pytest.mark.parametrize(("env_id", "config"), CONFIGS)
def test_configs_describe_the_same_text(env_id: str, config: dict[str, object]) -> None:
    env = dg.make(env_id, **config)
    for task in env.tasks("train", 2):
        ep = env.episode(task)
        assert env.task_info(task).prompt == ep.prompt
        ep.close()


def test_descriptors_build_no_world(monkeypatch: pytest.MonkeyPatch) -> None:
    from datagauntlet.envs.bad_batch_gate import episode as bbg_episode
    from datagauntlet.envs.dirty_integration import episode as di_episode

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("a descriptor built a world")

    monkeypatch.setattr(bbg_episode, "Warehouse", refuse)
    monkeypatch.setattr(di_episode, "World", refuse)
    bbg, di = dg.make("bad-batch-gate"), dg.make("dirty-integration", profile="clean")
    assert bbg.task_info(bbg.tasks()[0]).metadata["families"] == "standard"
    assert di.task_info(di.tasks()[0]).metadata == {
        "profile": "clean",
        "num_records": 40,
        "page_size": 4,
    }
    with pytest.raises(AssertionError, match="built a world"):
        bbg.episode(bbg.tasks()[0])


def test_labels_carry_no_answer() -> None:
    env = dg.make("bad-batch-gate")
    for task in env.tasks("eval", 8):
        case = env.case(task)
        assert case.family not in json.dumps(env.task_metadata(task))
