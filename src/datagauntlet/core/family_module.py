"""The `family_module` hook: a user's own module adds families and splits to an env.

Set the config key `family_module="pkg.mod"` (any importable module, outside this package).
The module defines:

    ENV = "dataclean"                  # optional: the env it is written for (checked)
    FAMILIES = [...]                   # optional: extra families, in the env's own family type
    SPLITS = {"holdout": [seed, ...]}  # optional: named splits and their task seeds

Its splits become splits of the env (`env.tasks("holdout")`), each task seeded by the module,
so a held-back split needs nothing in this package: not its seeds, not its families. How an
env uses `FAMILIES` is the env's own rule (documented in `docs/envs/<id>.md`); tasks of public
splits never change.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from datagauntlet.core.seeding import ALL_SPLITS

MAX_SPLIT_SEEDS = 1_000_000
SEED_BITS = 63


@dataclass(frozen=True)
class FamilyModule:
    path: str
    families: tuple[Any, ...]
    splits: Mapping[str, tuple[int, ...]]


def _splits(path: str, raw: Any) -> dict[str, tuple[int, ...]]:
    if not isinstance(raw, Mapping):
        raise ValueError(f"family_module {path!r}: SPLITS must be a dict of name -> seeds")
    out: dict[str, tuple[int, ...]] = {}
    for name, seeds in raw.items():
        if not isinstance(name, str) or not name or len(name) > 40 or not name.isprintable():
            raise ValueError(f"family_module {path!r}: split names must be short text")
        if name in ALL_SPLITS:
            raise ValueError(f"family_module {path!r}: split {name!r} is built in; rename it")
        if not isinstance(seeds, Sequence) or isinstance(seeds, (str, bytes)):
            raise ValueError(f"family_module {path!r}: SPLITS[{name!r}] must be a list of seeds")
        if len(seeds) > MAX_SPLIT_SEEDS:
            raise ValueError(f"family_module {path!r}: SPLITS[{name!r}] has too many seeds")
        for seed in seeds:
            if isinstance(seed, bool) or not isinstance(seed, int):
                raise ValueError(f"family_module {path!r}: seed {seed!r} is not an int")
            if not 0 <= seed < 1 << SEED_BITS:
                raise ValueError(f"family_module {path!r}: seed {seed} is outside 0..2**63-1")
        out[name] = tuple(seeds)
    return out


@lru_cache(maxsize=32)
def load_family_module(path: str, env_id: str) -> FamilyModule:
    """Import and check a family module; every problem is a ValueError naming the module."""
    if path == "datagauntlet" or path.startswith("datagauntlet."):
        raise ValueError(f"family_module {path!r}: must be a module of your own")
    try:
        module = importlib.import_module(path)
    except ImportError as exc:
        raise ValueError(f"family_module {path!r} cannot be imported: {exc}") from None
    target = getattr(module, "ENV", env_id)
    if target != env_id:
        raise ValueError(f"family_module {path!r} is written for {target!r}, not {env_id!r}")
    families = getattr(module, "FAMILIES", ())
    if not isinstance(families, Sequence) or isinstance(families, (str, bytes)):
        raise ValueError(f"family_module {path!r}: FAMILIES must be a list")
    return FamilyModule(path, tuple(families), _splits(path, getattr(module, "SPLITS", {})))
