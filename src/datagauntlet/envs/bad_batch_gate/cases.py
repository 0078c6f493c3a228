"""Cases in the original project's JSONL format: one warehouse, its staged batches and their
hidden truth. Generated cases use the same shape, so one loader and one grader serve both."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datagauntlet.envs.bad_batch_gate.contract import COLUMNS, DEFECT_TYPES

Citation = tuple[str, str]  # (column, defect type)


@dataclass(frozen=True)
class Truth:
    """What is really wrong with a batch. Never shown to an agent.

    `groups` holds one set of acceptable citations per defect (a blank amount is both missing
    and out of range, so either names it). `bad_rows` (staging rowids) is set for generated
    cases; `action` is "load", "hold" (load with the bad rows held back) or "quarantine".
    """

    defective: bool
    groups: tuple[frozenset[Citation], ...] = ()
    bad_rows: tuple[int, ...] = ()
    action: str = "load"

    def accepts(self, citation: Citation) -> bool:
        return any(citation in g for g in self.groups)

    def covered_by(self, citations: set[Citation]) -> bool:
        """Every defect named, and nothing named that is not in the batch."""
        return all(g & citations for g in self.groups) and all(self.accepts(c) for c in citations)

    def first_citation(self) -> Citation:
        return sorted(self.groups[0])[0] if self.groups else ("", "")

    def as_dict(self) -> dict[str, Any]:
        return {
            "defective": self.defective,
            "defects": [sorted(g) for g in self.groups],
            "bad_rows": list(self.bad_rows),
            "action": self.action,
        }


@dataclass(frozen=True)
class Batch:
    batch_id: str
    table: str
    rows: tuple[dict[str, str], ...]
    source: str
    truth: Truth


@dataclass(frozen=True)
class Case:
    case_id: str
    family: str
    variant: int
    seed: int
    prompt: str
    contract: dict[str, Any]
    customers: tuple[dict[str, str], ...]
    orders: tuple[dict[str, str], ...]
    batches: tuple[Batch, ...]
    extended: bool = False
    meta: dict[str, Any] = field(default_factory=dict)


class CaseFormatError(ValueError):
    pass


def _truth_from_json(raw: dict[str, Any], where: str) -> Truth:
    if not isinstance(raw, dict) or "defective" not in raw:
        raise CaseFormatError(f"{where}: truth must be an object with 'defective'")
    defects = raw.get("defects") or []
    accepted = raw.get("accepted")
    pairs = [(d["column"], d["type"]) for d in defects]
    for _col, kind in pairs:
        if kind not in DEFECT_TYPES:
            raise CaseFormatError(f"{where}: unknown defect type {kind!r}")
    if accepted:
        # The original lists alternatives for its single defect in one flat `accepted` list.
        groups: tuple[frozenset[Citation], ...] = (
            frozenset((a["column"], a["type"]) for a in accepted),
        )
    else:
        groups = tuple(frozenset([p]) for p in pairs)
    defective = bool(raw["defective"])
    return Truth(defective, groups, (), "quarantine" if defective else "load")


def case_from_json(obj: dict[str, Any], where: str = "case") -> Case:
    try:
        batches = []
        for i, b in enumerate(obj["batches"]):
            table = b["table"]
            if table not in COLUMNS:
                raise CaseFormatError(f"{where}: batch {i} has unknown table {table!r}")
            rows = tuple({k: str(v) for k, v in row.items()} for row in b["rows"])
            truth = _truth_from_json(b.get("truth", {}), f"{where} batch {b['batch_id']}")
            batches.append(Batch(str(b["batch_id"]), table, rows, str(b["source"]), truth))
        wh = obj["warehouse"]
        return Case(
            case_id=str(obj["case_id"]),
            family=str(obj.get("family", "")),
            variant=int(obj.get("variant", 0)),
            seed=int(obj.get("seed", 0)),
            prompt=str(obj["prompt"]),
            contract=dict(obj["contract"]),
            customers=tuple({k: str(v) for k, v in r.items()} for r in wh["customers"]),
            orders=tuple({k: str(v) for k, v in r.items()} for r in wh["orders"]),
            batches=tuple(batches),
        )
    except CaseFormatError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        problem = f"{type(exc).__name__}: {exc}"
        raise CaseFormatError(f"{where}: not a bad-batch-gate case ({problem})") from None


def load_cases(path: str | Path) -> list[Case]:
    """Read a JSONL file of cases (the original's format); errors name the line."""
    p = Path(path)
    cases = []
    with p.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except ValueError as exc:
                raise CaseFormatError(f"{p}:{n}: not JSON: {exc}") from None
            cases.append(case_from_json(obj, f"{p}:{n}"))
    if not cases:
        raise CaseFormatError(f"{p}: no cases")
    return cases


def split_of(case_id: str) -> str:
    """Cases named train-/test- belong to those splits; every other case is eval."""
    for split in ("train", "test"):
        if case_id.startswith(split + "-"):
            return split
    return "eval"
