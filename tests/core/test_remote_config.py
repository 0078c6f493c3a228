"""Each env's remote-safe config keys (Registration.remote_config): real fields, none that can
name a module or a path, and the table in docs/security.md is the code's."""

from __future__ import annotations

import re
import typing
from pathlib import Path

import pytest

import datagauntlet as dg
from datagauntlet.core.config import _allowed_types
from datagauntlet.core.limits import Limits
from datagauntlet.core.registration import Registration
from datagauntlet.core.registry import env_class
from datagauntlet.core.remote_config import UntrustedConfig, check_remote_config, safe_keys

DOC = Path(__file__).resolve().parents[2] / "docs" / "security.md"


@pytest.mark.parametrize("env_id", dg.list_envs())
def test_declared_keys_are_fields_that_name_no_module_or_path(env_id: str) -> None:
    config_cls = env_class(env_id).config_cls
    hints = typing.get_type_hints(config_cls)
    for key in safe_keys(env_id):
        assert key in config_cls.field_names(), key
        hint = hints[key]
        # free text could be a module or a path; a Literal's choices cannot
        if typing.get_origin(hint) is not typing.Literal:
            assert str not in _allowed_types(hint), f"{env_id}.{key} is free text"


def test_family_module_can_never_be_declared_safe() -> None:
    with pytest.raises(ValueError, match="never remote-safe"):
        Registration("toy", "x:Y", limits=Limits(), remote_config=("family_module",))


def test_only_undeclared_keys_off_their_default_are_refused() -> None:
    check_remote_config("bad-batch-gate", {"families": "extended", "cases": None}, trust_hint="")
    check_remote_config("bad-batch-gate", {"nope": 1}, trust_hint="")  # the config names it
    with pytest.raises(UntrustedConfig, match=r"'cases'.*safe keys: max_turns, families\); hint"):
        check_remote_config("bad-batch-gate", {"cases": "/etc/shadow"}, trust_hint="hint")


def test_the_docs_table_is_the_declaration() -> None:
    rows = re.findall(r"^\| ([a-z-]+) \| (`max_turns`[^|]*)\|", DOC.read_text(), re.M)
    documented = {env: re.findall(r"`([a-z_]+)`", keys) for env, keys in rows}
    assert documented == {e: list(safe_keys(e)) for e in dg.list_envs()}
