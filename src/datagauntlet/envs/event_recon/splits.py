"""Task records of event-recon: the public split, the secret-keyed held-out splits, and the
splits and families a user's `family_module` brings.

A record carries the contamination canary; no workspace ever does (a test checks both), so a
model that can recite the canary has read published task records, not played the tasks.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType

from datagauntlet.core import seeding
from datagauntlet.envs.event_recon.world.families import Family, builtin_families
from datagauntlet.envs.event_recon.world.records import TIERS

ENV_ID = "event-recon"
# The held-out families' own distribution (`heldout/` in the repository, `datagauntlet-heldout`):
# when it is installed the held-out splits draw its families too; this package has none of them.
HELDOUT_MODULE = "datagauntlet_heldout.event_recon"
HELDOUT_SPLITS = ("private", "private-train")
CANARY = "event-recon-canary:ba7339da-dd5a-40db-8ee4-415fb7df5e72"
PER_TIER = 30
PUBLIC = "public"
SPLIT_SIZES = {PUBLIC: 4 * PER_TIER, "private": 4 * PER_TIER, "private-train": 40 * PER_TIER}
FAMILY_ATTRIBUTES = ("name", "where", "rule", "latent_bug", "contract_reasoning", "plan", "apply")


@dataclass(frozen=True)
class TaskRecord:
    index: int
    seed: int
    tier: int
    split: str = PUBLIC
    canary: str = CANARY
    family_module: str | None = None

    @property
    def task_id(self) -> str:
        return f"{ENV_ID}/{self.split}/{self.index}"


def tier_of(index: int, size: int) -> int:
    """The public split and a module's come in four equal quarters, T1 first."""
    return 1 + min(3, index * 4 // max(size, 1))


def interleaved_tier(index: int) -> int:
    """Held-out splits take tiers in turn (T1, T2, T3, T4, T1, ...), so the first N of one
    (`gates --split private -n N`) is as balanced as N allows, as `eval` is for public."""
    return TIERS[index % len(TIERS)]


def public_seed(index: int) -> int:
    return seeding.hash64("task-seed", ENV_ID, PUBLIC, index) >> 1


@lru_cache(maxsize=1)
def public_tasks() -> tuple[TaskRecord, ...]:
    """The published 120: 30 per tier, reproducible by anyone."""
    n = SPLIT_SIZES[PUBLIC]
    return tuple(TaskRecord(i, public_seed(i), tier_of(i, n)) for i in range(n))


@lru_cache(maxsize=1)
def heldout_module() -> str | None:
    """The held-out family module, if its distribution is installed (else None)."""
    try:
        importlib.import_module(HELDOUT_MODULE)
    except ImportError:
        return None
    return HELDOUT_MODULE


def heldout_status(family_module: str | None = None) -> str:
    """One line on which families the held-out splits draw beyond the public twelve."""
    module = family_module or heldout_module()
    if module is None:
        return (
            "held-out families: none installed, so the private splits draw the 12 public "
            "families on unpublished seeds (install ./heldout: pip install ./heldout)"
        )
    extra = sorted(set(families_for(module)) - set(builtin_families()))
    return f"held-out families: {len(extra)} from {module}"


def _split_module(split: str, family_module: str | None) -> str | None:
    """The family module a split's tasks use: held-out splits fall back to the installed one."""
    if family_module is None and split in HELDOUT_SPLITS:
        return heldout_module()
    return family_module


def split_names(family_module: str | None = None) -> tuple[str, ...]:
    extra = tuple(module_splits(family_module)) if family_module else ()
    return (*SPLIT_SIZES, *extra)


def split_tasks(split: str, family_module: str | None = None) -> tuple[TaskRecord, ...]:
    """Every task of `split`. Held-out splits need the secret (`seeding.SecretMissing`
    otherwise); a family module's splits take their seeds from the module."""
    if split == PUBLIC:
        return public_tasks()
    if family_module and split in module_splits(family_module):
        seeds = module_splits(family_module)[split]
        return tuple(
            TaskRecord(i, s, tier_of(i, len(seeds)), split, CANARY, family_module)
            for i, s in enumerate(seeds)
        )
    if split not in SPLIT_SIZES:
        raise ValueError(
            f"unknown split {split!r}; expected one of {', '.join(split_names(family_module))}"
        )
    module = _split_module(split, family_module)
    return tuple(
        TaskRecord(
            i, seeding.task_seed(ENV_ID, split, i), interleaved_tier(i), split, CANARY, module
        )
        for i in range(SPLIT_SIZES[split])
    )


def task(
    split: str, index: int, tier: int | None = None, family_module: str | None = None
) -> TaskRecord:
    """Task `index` of a split, or with `tier` the index-th task of that tier."""
    tasks = split_tasks(split, family_module)
    if tier is not None:
        if tier not in TIERS:
            raise ValueError(f"tier must be 1, 2, 3 or 4, not {tier!r}")
        tasks = tuple(t for t in tasks if t.tier == tier)
    if not 0 <= index < len(tasks):
        where = f"tier {tier} of {split!r}" if tier else repr(split)
        raise ValueError(
            f"task {index} is out of range: {where} has {len(tasks)} tasks (0-{len(tasks) - 1})"
        )
    return tasks[index]


def _module(path: str):  # -> core.family_module.FamilyModule (imported lazily)
    from datagauntlet.core.family_module import load_family_module

    return load_family_module(path, ENV_ID)


def module_splits(family_module: str) -> Mapping[str, tuple[int, ...]]:
    return _module(family_module).splits


@lru_cache(maxsize=32)
def families_for(family_module: str | None = None) -> Mapping[str, Family]:
    """The built-in twelve, plus a module's own (checked for shape and clashing names)."""
    families = builtin_families()
    if not family_module:
        return MappingProxyType(families)
    for fam in _module(family_module).families:
        missing = [a for a in FAMILY_ATTRIBUTES if not hasattr(fam, a)]
        if missing:
            raise ValueError(
                f"family_module {family_module!r}: a family lacks {', '.join(missing)}"
            )
        if not isinstance(fam.name, str) or not fam.name.isidentifier():
            raise ValueError(
                f"family_module {family_module!r}: family name {fam.name!r} is not an identifier"
            )
        if fam.name in families:
            raise ValueError(f"family_module {family_module!r}: family {fam.name!r} already exists")
        families[fam.name] = fam
    return MappingProxyType(families)


def reference_steps(family_module: str | None = None) -> Mapping[str, Family]:
    """The families a module adds (by name): their reference steps are how the env's
    reference knows them (the public solver knows only the built-in twelve)."""
    module = family_module or heldout_module()
    if module is None:
        return MappingProxyType({})
    builtin = builtin_families()
    return MappingProxyType({n: f for n, f in families_for(module).items() if n not in builtin})


def families_of(record: TaskRecord) -> Mapping[str, Family]:
    """Public tasks never change: a module's families join only its own and held-out splits."""
    return families_for(None if record.split == PUBLIC else record.family_module)
