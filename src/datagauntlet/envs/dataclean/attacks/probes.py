"""Attack probes: cheap programs that try to score without following the task's own lines.

- everything-everywhere: reads the policy like the oracle, then widens every operation that
  "leaves what it does not recognise alone" (phone_us, the date operation, integer,
  replace_missing) to every editable column, integer before decimal2.
- blind-plan: one plan per layout from the standing conventions, like generic, but it reads
  the values: it guesses the date order from the dates, the task's aliases from how often
  each category shows, and missing markers from cells that cannot be what their column holds.
  It never reads the task's alias, date or marker lines.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

from datagauntlet.core.episode import Episode
from datagauntlet.core.gates import ceiling
from datagauntlet.envs.dataclean.solver.policies import (
    ReadPolicy,
    _cols,
    _layout,
    careful_program,
    read_policy,
)
from datagauntlet.envs.dataclean.world import families as fam

_DATE = re.compile(r"(\d{1,2})([/.-])(\d{1,2})\2(\d{4})")


# The target is 0.60; measured 0.78 on eval and test. Under the original's weights
# (0.60 recall, 0.20 preservation, 0.20 rows) it cannot get there while blind-plan stays
# <= 0.80: see docs/envs/dataclean.md, "What the traps can and cannot do".
@ceiling(0.80)
def everything_everywhere(ep: Episode) -> None:
    """Follows the policy, then runs phone_us, dates, integer and replace_missing everywhere."""
    policy = read_policy(ep.prompt)
    editable = list(policy.kinds)
    program: list[dict[str, Any]] = [
        {"op": "strip", "columns": editable},
        {"op": "replace_missing", "columns": editable, "tokens": policy.missing_tokens},
        *(
            {"op": "map", "column": c, "mapping": {**policy.standing, **policy.batch}}
            for c in policy.of(fam.CATEGORY)
        ),
        *_cols("lower", policy.of(fam.EMAIL) + policy.of(fam.CATEGORY)),
        *_cols("upper", policy.of(fam.CODE)),
        {"op": "phone_us", "columns": editable},
        {"op": "date_us" if policy.month_first else "date_eu", "columns": editable},
        {"op": "integer", "columns": editable},
        *_cols("decimal2", policy.of(fam.AMOUNT)),
        {"op": "dedupe", "keys": [fam.PRIMARY_KEY]},
    ]
    ep.call("submit_program", {"operations": program})


def _rows(ep: Episode) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in ep.prompt.splitlines() if line.startswith("{")]
    if rows:
        return rows
    out: list[dict[str, Any]] = []
    offset: int | None = 0
    while offset is not None:
        page = ep.call("read_table", {"offset": offset, "limit": 500})
        out += page.get("rows", [])
        offset = page.get("next_offset")
    return out


def _strip(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) else None


def guess_month_first(rows: list[dict[str, Any]], dates: list[str]) -> bool:
    """Month first unless the values say otherwise: a part above 12, or the two date columns
    in the usual order (first <= second) more often read day first."""
    votes = Counter()
    for r in rows:
        for c in dates:
            m = _DATE.fullmatch(_strip(r.get(c)) or "")
            if m:
                a, b = int(m.group(1)), int(m.group(3))
                votes["eu"] += a > 12
                votes["us"] += b > 12
    if votes["eu"] != votes["us"]:
        return votes["us"] > votes["eu"]
    if len(dates) >= 2:
        order = {True: 0, False: 0}
        for month_first in (True, False):
            for r in rows:
                pair = [_iso(_strip(r.get(c)) or "", month_first) for c in dates[:2]]
                if pair[0] and pair[1]:
                    order[month_first] += pair[0] <= pair[1]
        if order[True] != order[False]:
            return order[True] > order[False]
    return True


def _iso(value: str, month_first: bool) -> str | None:
    if re.fullmatch(r"\d{4}-\d\d-\d\d", value):
        return value
    m = _DATE.fullmatch(value)
    if not m:
        return None
    a, b = int(m.group(1)), int(m.group(3))
    month, day = (a, b) if month_first else (b, a)
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return None
    return f"{m.group(4)}-{month:02d}-{day:02d}"


def guess_aliases(rows: list[dict[str, Any]], col: fam.Column) -> dict[str, str]:
    """Each unknown category value goes to the category most under-represented in plain form."""
    known: dict[str, str] = {}
    for c in col.categories:
        known[c] = known[c.upper()] = known[c.capitalize()] = c
    known.update(col.standing_aliases)
    seen = Counter(known.get(v) for r in rows if (v := _strip(r.get(col.name))) in known)
    unknown = Counter(
        v for r in rows if (v := _strip(r.get(col.name))) and v not in known and v is not None
    )
    expected = len(rows) / max(1, len(col.categories))
    deficit = {c: expected - seen.get(c, 0) for c in col.categories}
    out: dict[str, str] = {}
    for value, _n in unknown.most_common():
        if not deficit:
            break
        target = max(sorted(deficit), key=lambda c: deficit[c])
        out[value] = target
        deficit.pop(target)
    return out


def _implausible(values: list[str | None], kind: str) -> list[str]:
    """Cells that cannot be what a nullable column holds: missing markers, by elimination."""
    out = set()
    for v in values:
        if v is None:
            continue
        digits = sum(ch.isdigit() for ch in v)
        if (kind == fam.EMAIL and "@" not in v) or (kind == fam.PHONE and digits < 10):
            out.add(v)
    return sorted(out)


@ceiling(0.80)
def blind_plan(ep: Episode) -> None:
    """Generic's plan, with the date order, aliases and markers guessed from the values."""
    family = _layout(ep.prompt)
    if family is None:
        ep.call("submit_program", {"operations": []})
        return
    rows = _rows(ep)
    nullable = [c for c in family.editable if c.missing_rate > 0]
    tokens = set(fam.MISSING_TOKENS)
    for c in nullable:
        tokens.update(_implausible([_strip(r.get(c.name)) for r in rows], c.kind))
    dates = [c.name for c in family.editable if c.kind == fam.DATE]
    standing: dict[str, str] = {}
    guessed: dict[str, str] = {}
    for col in family.category_columns:
        standing.update(col.standing_aliases)
        guessed.update(guess_aliases(rows, col))
    policy = ReadPolicy(
        kinds={c.name: c.kind for c in family.editable},
        missing_tokens=sorted(tokens),
        nullable=[c.name for c in nullable],
        standing=standing,
        batch=guessed,
    )
    month_first = guess_month_first(rows, dates)
    program = careful_program(policy, batch_aliases=True, month_first=month_first)
    ep.call("submit_program", {"operations": program})


PROBES = {"everything-everywhere": everything_everywhere, "blind-plan": blind_plan}
