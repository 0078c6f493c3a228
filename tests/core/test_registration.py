"""One registration per env; everything else that names an env is checked against it."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import datagauntlet as dg
from datagauntlet.core import registry
from datagauntlet.core.registration import Registration, load
from datagauntlet.core.version import PACKAGE_VERSION

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
CALIBRATION = (ROOT / "docs" / "calibration.md").read_text()
REGS = registry.registrations()


def test_every_env_folder_registers_once() -> None:
    folders = sorted(
        p.parent.name for p in (SRC / "datagauntlet" / "envs").glob("*/registration.py")
    )
    assert len(folders) == len(REGS) == len(dg.list_envs())
    for reg in REGS.values():
        folder = reg.entry_point.split(":")[0].split(".")[2]
        assert folder in folders
        assert load(f"datagauntlet.envs.{folder}.registration:REGISTRATION") is reg


@pytest.mark.parametrize("env_id", sorted(REGS))
def test_the_env_class_takes_id_reference_and_limits_from_it(env_id: str) -> None:
    reg = REGS[env_id]
    cls = registry.env_class(env_id)
    assert cls.registration is reg
    assert (cls.id, cls.reference, cls.limits) == (reg.id, reg.reference, reg.limits)
    env = dg.make(env_id)
    assert env.reference in env.policies()
    assert env.config.max_turns == reg.limits.max_turns == env.max_turns
    assert env.versions()["env_version"] == reg.version


@pytest.mark.parametrize("env_id", sorted(REGS))
def test_hooks_name_what_exists(env_id: str) -> None:
    reg = REGS[env_id]
    env = dg.make(env_id)
    handler = env.http_api()
    assert (handler is None) == (reg.http_api is None) and (handler is None or callable(handler))
    answer = env.final_answer
    assert (answer is None) == (reg.final_answer is None)
    if reg.command:
        command = importlib.import_module(reg.command)
        assert reg.id == command.NAME and callable(command.add_arguments)
        assert callable(command.run)


def test_per_env_distributions_are_derived_from_the_registrations() -> None:
    """environments/<id>/ is written by scripts/env_packages.py; the package ships no
    top-level module of its own (one distribution per env)."""
    wanted = sorted(r.id for r in REGS.values() if r.has_verifiers_module)
    assert sorted(p.name for p in (ROOT / "environments").iterdir() if p.is_dir()) == wanted
    assert not list(SRC.glob("*.py"))
    assert "py-modules" not in PYPROJECT.get("tool", {}).get("setuptools", {})
    check = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "env_packages.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0, check.stdout


def test_the_docs_name_every_env() -> None:
    for env_id in REGS:
        assert f"<!-- calibration:{env_id} -->" in CALIBRATION
        assert (ROOT / "docs" / "envs" / f"{env_id}.md").is_file()
    named = set(re.findall(r"<!-- calibration:(\S+?) -->", CALIBRATION))
    assert named <= set(REGS)


def test_the_package_version_is_pyprojects() -> None:
    assert PYPROJECT["project"]["version"] == PACKAGE_VERSION == dg.__version__


def test_env_commands_list_only_registered_hooks() -> None:
    assert registry.env_commands() == {r.id: r.command for r in REGS.values() if r.command}


def test_a_bad_registration_is_refused() -> None:
    with pytest.raises(ValueError, match="lower-case"):
        Registration("Bad_Id", "x:Y")
    with pytest.raises(ValueError, match="module:Class"):
        Registration("fine", "no-colon")
