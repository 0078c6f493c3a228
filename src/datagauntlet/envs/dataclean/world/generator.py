"""Generate one task: the clean table first, then independent corruptions, then duplicates.

The cells come from `cells.py` (drawn a column at a time by `columns.py`); this module adds
what spans a table: the task's own aliases, unique keys, the shuffle and the duplicates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import eq, itemgetter

from datagauntlet.core.seeding import index_feeds
from datagauntlet.envs.dataclean.config import DatacleanConfig
from datagauntlet.envs.dataclean.tool.engine import Cell, Table
from datagauntlet.envs.dataclean.world.cells import CellMaker
from datagauntlet.envs.dataclean.world.columns import clean_column, corrupt_column
from datagauntlet.envs.dataclean.world.families import Column, Family
from datagauntlet.envs.dataclean.world.policy_text import render_policy

TASK_ALIASES = 3  # every category a table shows has an alias of this task
_ALIAS_LETTERS = "BCDFGHJKLMNPQRSTVWXZ"


@dataclass(frozen=True)
class CleaningTask:
    """One generated task: the clean table, its corrupted copy and the policy that explains it."""

    family: Family
    truth: Table  # one clean row per record, in generation order: never shown
    dirty: Table  # what the agent sees: corrupted, shuffled, with duplicate rows
    task_aliases: dict[str, str]  # every task alias -> its category, all columns together
    column_aliases: dict[str, dict[str, str]]  # category column -> its task aliases
    date_order: str  # "US" (month first) or "EU" (day first)
    policy_text: str
    # Per editable column, one byte a truth record: 1 where the dirty table (the record's
    # first row) already holds the clean value: grader.arrived_right(truth, dirty, ...), made
    # while the columns are still aligned, so scoring needs no lookup on the dirty side.
    arrived_right: dict[str, bytes] = field(default_factory=dict, compare=False, repr=False)


class _Generator(CellMaker):
    # --- the task's own aliases ------------------------------------------------------------
    def task_aliases(self, truth: Table, col: Column, taken: set[str]) -> dict[str, str]:
        """Aliases of this task for one category column; `taken` grows with every alias."""
        present = sorted(set(v for v in truth.data[col.name] if v is not None))
        taken |= {*col.categories, *col.standing_aliases}
        taken |= {t.lower() for t in taken}
        aliases: dict[str, str] = {}
        # Different targets when the table allows, so every alias can be shown.
        k = min(TASK_ALIASES, len(present))
        targets = self.keyed.sample("alias-target", present, k) if k > 1 else present * 2
        for k, target in enumerate(targets):
            for attempt in range(50):
                stream = self.keyed.stream(f"alias-{col.name}-{k}-{attempt}")
                letters = "".join(stream.choice(_ALIAS_LETTERS) for _ in range(3))
                digits = f"{stream.randint(0, 99):02d}"
                shape = stream.randint(0, 2)
                alias = (f"{letters}-{digits}", f"{letters.lower()}/{digits}", letters + digits)[
                    shape
                ]
                if alias not in taken and alias.lower() not in taken:
                    break
            taken |= {alias, alias.lower()}
            aliases[alias] = target
        return aliases

    # --- the whole task --------------------------------------------------------------------
    def build(self) -> CleaningTask:

        family = self.family
        feeds = index_feeds(self.n)
        clean: dict[str, list[Cell]] = {}
        for col in family.columns:
            clean[col.name] = clean_column(self, col, feeds, clean)
        self._unique_keys(clean["record_id"])
        truth = Table(family.names, {c: list(v) for c, v in clean.items()})
        taken: set[str] = set()
        by_column = {c.name: self.task_aliases(truth, c, taken) for c in family.category_columns}
        dirty_cols = {
            col.name: corrupt_column(self, col, feeds, clean[col.name], by_column.get(col.name, {}))
            for col in family.columns
        }
        for col in family.category_columns:
            self._ensure_aliases_shown(truth, dirty_cols[col.name], col, by_column[col.name])
        aliases = {a: t for column in by_column.values() for a, t in column.items()}
        # Before the shuffle, dirty row i is record i, and every duplicate is an exact copy
        # placed after its original: the first occurrence of record i holds dirty_cols[.][i].
        right = {c.name: bytes(map(eq, clean[c.name], dirty_cols[c.name])) for c in family.editable}
        order = self._order()
        if len(order) > 1:  # one C-level gather a column (itemgetter of one index is no tuple)
            take = itemgetter(*order)
            shown = {c: list(take(v)) for c, v in dirty_cols.items()}
        else:
            shown = {c: [v[i] for i in order] for c, v in dirty_cols.items()}
        dirty = Table(family.names, shown)
        text = render_policy(family, by_column, self.date_order, len(dirty))
        return CleaningTask(family, truth, dirty, aliases, by_column, self.date_order, text, right)

    def _unique_keys(self, ids: list[Cell]) -> None:
        seen: set[Cell] = set()
        for i, rid in enumerate(ids):
            attempt = 0
            while rid in seen:
                attempt += 1
                rid = ids[i] = "r" + self.keyed.token("record-id", f"{i}-{attempt}", 12)
            seen.add(rid)

    def _ensure_aliases_shown(
        self, truth: Table, dirty: list[Cell], col: Column, aliases: dict[str, str]
    ) -> None:
        """Each documented alias appears at least once (in its first eligible row)."""
        values = truth.data[col.name]
        for alias, target in aliases.items():
            if any(isinstance(v, str) and v.strip() == alias for v in dirty):
                continue
            for i, value in enumerate(values):
                if value == target and dirty[i] not in aliases:
                    dirty[i] = alias
                    break

    def _order(self) -> list[int]:
        """Shuffled rows; each duplicate is an exact copy placed somewhere after its original."""
        shuffled = self.keyed.shuffled("order", list(range(self.n)))
        position = {row: p for p, row in enumerate(shuffled)}
        sources = self.keyed.sample("duplicate-of", list(range(self.n)), min(self.n_dups, self.n))
        dups: list[tuple[float, int, int]] = []
        for k, src in enumerate(sources):
            p = position[src]
            spot = p + 0.5 + self.keyed.unit("duplicate-at", k) * (self.n - p - 0.5)
            dups.append((spot, 1 + k, src))
        dups.sort()
        # Rows sort by (position, 0, row) and copies by (spot, 1 + k, source): a copy goes
        # before the row at position p exactly when its spot is below p.
        order: list[int] = []
        d = 0
        for p, row in enumerate(shuffled):
            while d < len(dups) and dups[d][0] < p:
                order.append(dups[d][2])
                d += 1
            order.append(row)
        order += [src for _, _, src in dups[d:]]
        return order


def generate(seed: int, config: DatacleanConfig, extra: tuple[Family, ...] = ()) -> CleaningTask:
    """The world of one task; `extra` are a family module's layouts (its own splits only)."""
    return _Generator(seed, config, extra).build()
