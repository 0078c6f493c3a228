"""Find registered environments and build them, importing an env only when it is made.

An env registers by having a `registration.py` (defining `REGISTRATION`) in its folder under
one of `ENV_PACKAGES`; nothing else names it. Only those small modules are imported to list
envs; the env itself is imported by `make`.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from typing import Any

from datagauntlet.core.env import Environment
from datagauntlet.core.registration import Registration

# Packages whose sub-packages are env folders. Out-of-tree envs (and the test suite's toy env)
# add theirs with `add_env_package`.
ENV_PACKAGES: list[str] = ["datagauntlet.envs"]
_found: dict[str, Registration] | None = None


def add_env_package(package: str) -> None:
    if package not in ENV_PACKAGES:
        ENV_PACKAGES.append(package)
    forget()


def remove_env_package(package: str) -> None:
    if package in ENV_PACKAGES and package != ENV_PACKAGES[0]:
        ENV_PACKAGES.remove(package)
    forget()


def forget() -> None:
    """Scan again at the next look-up."""
    global _found
    _found = None


def registrations() -> dict[str, Registration]:
    """Every registration, by env id."""
    global _found
    if _found is None:
        found: dict[str, Registration] = {}
        for package in ENV_PACKAGES:
            for reg in _scan(package):
                if reg.id in found:
                    raise ValueError(f"env id {reg.id!r} is registered twice")
                found[reg.id] = reg
        _found = found
    return _found


def _scan(package: str) -> list[Registration]:
    parent = importlib.import_module(package)
    out = []
    for info in sorted(pkgutil.iter_modules(parent.__path__), key=lambda i: i.name):
        name = f"{package}.{info.name}.registration"
        if not info.ispkg or importlib.util.find_spec(name) is None:
            continue
        reg = getattr(importlib.import_module(name), "REGISTRATION", None)
        if not isinstance(reg, Registration):
            raise TypeError(f"{name} must define REGISTRATION = Registration(...)")
        out.append(reg)
    return out


def list_envs() -> list[str]:
    return sorted(registrations())


def registration(env_id: str) -> Registration:
    reg = registrations().get(env_id)
    if reg is None:
        raise ValueError(f"unknown environment {env_id!r}; registered: {', '.join(list_envs())}")
    return reg


def env_class(env_id: str) -> type[Environment[Any]]:
    reg = registration(env_id)
    cls = reg.load_class()
    if getattr(cls, "registration", None) is not reg:
        raise TypeError(f"{reg.entry_point} does not name {env_id}'s REGISTRATION")
    return cls  # type: ignore[no-any-return]


def env_commands() -> dict[str, str]:
    """{subcommand name: module} of the envs with a CLI subcommand (named after the env)."""
    return {reg.id: reg.command for reg in registrations().values() if reg.command}


def make(env_id: str, **config: Any) -> Environment[Any]:
    """Build an environment; an unknown id or a bad config raises a ValueError that says why."""
    return env_class(env_id).from_kwargs(**config)
