"""Built-in policies. Each reads only what an agent reads: the prompt and its own results.

- oracle (the reference): reads the policy text carefully (each column's target format, the
  missing-value markers, the standing and per-batch aliases, the date order) and writes the
  program that follows it. It holds no truth; it scores 1.0 because the policy is enough.
- noop: submits an empty program.
- generic: one fixed plan per table layout, written once from the standing conventions; it
  ignores the per-batch aliases and always reads dates month first.
- overeager: follows the policy, then applies every operation to every column it may touch:
  lower-cases names, formats counts as money, treats zeros as missing, dedupes on every key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from datagauntlet.core.episode import Episode
from datagauntlet.core.gates import ceiling, null
from datagauntlet.envs.dataclean.world import families as fam

_COLUMN_LINE = re.compile(r"^- (\w+): (.*)$")
_ALIAS = re.compile(r'"([^"]+)" means ([\w-]+)')
_QUOTED = re.compile(r'"([^"]*)"')
EXTRA_MISSING = ("0", "0.00", "none", "unknown", "TBD")


@dataclass
class ReadPolicy:
    """What a careful reader takes from the prompt."""

    kinds: dict[str, str] = field(default_factory=dict)  # editable column -> kind
    missing_tokens: list[str] = field(default_factory=list)
    nullable: list[str] = field(default_factory=list)
    standing: dict[str, str] = field(default_factory=dict)
    batch: dict[str, str] = field(default_factory=dict)
    month_first: bool = True

    def of(self, kind: str) -> list[str]:
        return [c for c, k in self.kinds.items() if k == kind]


def _kind(description: str) -> str | None:
    rules = (
        ("Protected", None),
        ("e-mail address", fam.EMAIL),
        ("US phone number", fam.PHONE),
        ("ISO 8601", fam.DATE),
        ("two places", fam.AMOUNT),
        ("whole number", fam.QUANTITY),
        ("in upper case", fam.CODE),
        ("leading zeros included", fam.DIGITS),
        ("exactly as printed", fam.PRINTED),
        ("only trim", fam.NAME),
    )
    for marker, kind in rules:
        if marker in description:
            return kind
    if description.startswith("one of "):
        return fam.CATEGORY
    return None


def read_policy(prompt: str) -> ReadPolicy:
    policy = ReadPolicy()
    section = ""
    for line in prompt.splitlines():
        if line.endswith(":") and not line.startswith("-"):
            section = line
            continue
        if section.startswith("Target format") and (m := _COLUMN_LINE.match(line)):
            kind = _kind(m.group(2))
            if kind is not None:
                policy.kinds[m.group(1)] = kind
                if "null when missing" in m.group(2):
                    policy.nullable.append(m.group(1))
        elif line.startswith("- Missing values are written as"):
            policy.missing_tokens = _QUOTED.findall(line.partition(":")[2])
        elif line.startswith("- Standing aliases"):
            policy.standing.update(_ALIAS.findall(line))
        elif line.startswith("- Aliases used only by this batch"):
            policy.batch.update(_ALIAS.findall(line))
        elif line.startswith("- Dates in this batch"):
            policy.month_first = "month first" in line
    return policy


def _cols(op: str, columns: list[str]) -> list[dict[str, Any]]:
    return [{"op": op, "columns": columns}] if columns else []


def careful_program(policy: ReadPolicy, *, batch_aliases: bool, month_first: bool) -> list[Any]:
    program: list[dict[str, Any]] = []
    program += _cols("strip", list(policy.kinds))  # kept kinds: trimmed, then left alone
    if policy.nullable and policy.missing_tokens:
        program.append(
            {"op": "replace_missing", "columns": policy.nullable, "tokens": policy.missing_tokens}
        )
    aliases = {**policy.standing, **(policy.batch if batch_aliases else {})}
    for column in policy.of(fam.CATEGORY):
        if aliases:
            program.append({"op": "map", "column": column, "mapping": aliases})
    program += _cols("lower", policy.of(fam.EMAIL) + policy.of(fam.CATEGORY))
    program += _cols("upper", policy.of(fam.CODE))
    program += _cols("phone_us", policy.of(fam.PHONE))
    program += _cols("date_us" if month_first else "date_eu", policy.of(fam.DATE))
    program += _cols("decimal2", policy.of(fam.AMOUNT))
    program += _cols("integer", policy.of(fam.QUANTITY))
    program.append({"op": "dedupe", "keys": [fam.PRIMARY_KEY]})
    return program


def oracle(ep: Episode) -> None:
    policy = read_policy(ep.prompt)
    program = careful_program(policy, batch_aliases=True, month_first=policy.month_first)
    ep.call("submit_program", {"operations": program})


@ceiling(0.45)  # the original's formula: nothing repaired, everything preserved
def noop(ep: Episode) -> None:
    ep.call("submit_program", {"operations": []})


def _layout(prompt: str) -> fam.Family | None:
    for line in prompt.splitlines():
        if line.startswith("Columns: "):
            names = tuple(n.strip() for n in line[9:].split(".")[0].split(","))
            for family in fam.FAMILIES.values():
                if family.names == names:
                    return family
    return None


def _fixed_plan(family: fam.Family) -> list[Any]:
    """The plan a script author writes once per layout, from the standing conventions only."""
    policy = ReadPolicy(
        kinds={c.name: c.kind for c in family.editable},
        missing_tokens=list(fam.MISSING_TOKENS),
        nullable=[c.name for c in family.editable if c.missing_rate > 0],
        standing={a: t for c in family.category_columns for a, t in c.standing_aliases.items()},
    )
    return careful_program(policy, batch_aliases=False, month_first=True)


GENERIC_PLANS = {family.id: _fixed_plan(family) for family in fam.FAMILIES.values()}


@ceiling(0.85)
def generic(ep: Episode) -> None:
    family = _layout(ep.prompt)
    ep.call("submit_program", {"operations": GENERIC_PLANS[family.id] if family else []})


@ceiling(0.70)
def overeager(ep: Episode) -> None:
    policy = read_policy(ep.prompt)
    editable = list(policy.kinds)
    codes = policy.of(fam.CODE)
    aliases = {**policy.standing, **policy.batch}
    program: list[dict[str, Any]] = [
        {"op": "strip", "columns": editable},
        {
            "op": "replace_missing",
            "columns": editable,
            "tokens": [*policy.missing_tokens, *EXTRA_MISSING],
        },
        *({"op": "map", "column": c, "mapping": aliases} for c in policy.of(fam.CATEGORY)),
        {"op": "lower", "columns": [c for c in editable if c not in codes]},
        *_cols("upper", codes),
        {"op": "phone_us", "columns": editable},
        {"op": "date_us" if policy.month_first else "date_eu", "columns": editable},
        *_cols("decimal2", policy.of(fam.AMOUNT) + policy.of(fam.QUANTITY)),
    ]
    family = _layout(ep.prompt)
    for key in family.dedupe_keys if family else (fam.PRIMARY_KEY,):
        program.append({"op": "dedupe", "keys": [key]})
    ep.call("submit_program", {"operations": program})


@null
def garbage_program(ep: Episode) -> None:
    """Submits a program the validator refuses (an operation that does not exist)."""
    ep.call("submit_program", {"operations": [{"op": "delete_everything", "columns": []}]})


POLICIES = {
    "oracle": oracle,
    "noop": noop,
    "generic": generic,
    "overeager": overeager,
    "garbage-program": garbage_program,
}
