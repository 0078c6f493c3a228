"""Every registered env has its one-line top-level module, in its own distribution under
environments/<id>/, and verifiers finds it."""

from __future__ import annotations

import importlib
import importlib.util
import tomllib
from pathlib import Path

import pytest

import datagauntlet as dg

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "environments" / "dirty-integration" / "dirty_integration.py"


def _module(env_id: str) -> str:
    return env_id.replace("-", "_")


@pytest.mark.parametrize("env_id", dg.list_envs())
def test_every_env_has_its_one_line_module(env_id: str) -> None:
    folder = ROOT / "environments" / env_id
    path = folder / f"{_module(env_id)}.py"
    assert path.exists(), "run python scripts/env_packages.py"
    text = path.read_text()
    assert text == TEMPLATE.read_text() and text.count("\n") == 1
    project = tomllib.loads((folder / "pyproject.toml").read_text())
    assert project["project"]["name"] == env_id
    assert project["tool"]["setuptools"]["py-modules"] == [_module(env_id)]
    assert importlib.util.find_spec(_module(env_id)) is not None, "pip install -e " + str(folder)


@pytest.mark.parametrize("env_id", dg.list_envs())
def test_verifiers_discovers_the_taskset_the_harness_and_a_local_env(env_id: str) -> None:
    vf = pytest.importorskip("verifiers.v1")
    from verifiers.v1.utils.loaders import default_harness_id, harness_class, taskset_class

    from datagauntlet.frontdoors.vf.env import LocalEnv
    from datagauntlet.frontdoors.vf.harness import LoopHarness

    module = importlib.import_module(_module(env_id))
    assert len(module.__all__) == 3
    taskset = taskset_class(env_id)
    assert env_id == taskset.ENV_ID
    assert default_harness_id(env_id) == env_id and harness_class(env_id) is LoopHarness
    assert vf.environment_class(env_id) is LocalEnv
    config = vf.resolve_env_config({"taskset": {"id": env_id, "num_tasks": 2}})
    assert config.agent.runtime.type == "subprocess"  # verifiers' own default is remote
    env = vf.load_environment(config)
    tasks = list(env.taskset)
    expected = dg.make(env_id).tasks("eval", 2)
    assert [t.data.id for t in tasks] == [t.id for t in expected]
    assert [t.data.seed for t in tasks] == [t.seed for t in expected]
    ep = dg.make(env_id).episode(expected[0])
    assert tasks[0].data.prompt == ep.prompt and tasks[0].data.system_prompt == ep.system_prompt


def test_a_module_for_an_unregistered_id_fails_loudly() -> None:
    pytest.importorskip("verifiers.v1")
    from datagauntlet.frontdoors.vf import module_env_id

    with pytest.raises(ValueError, match="no registered environment"):
        module_env_id("not_an_env")
