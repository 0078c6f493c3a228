"""The contract's parameters, read from INTEGRATION.md as written.

Everything a per-seed world varies that the rules need is in the contract's text: the five
payload field names, the two ledger column names, each program's basis, bar, zone and
currency, and the commission schedule. The parser reads the Markdown tables by their headers
and the rules by their bold numbers, so a reworded sentence does not break it, and a missing
table is a clear error rather than a silent default.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

RULE_IDS = (*(f"R{i}" for i in range(1, 15)), "W1", "W2")
FIELD_ROLES = {
    "order id": "order",
    "referral code": "code",
    "gross amount": "gross",
    "tax part": "tax",
    "when it happened": "time",
}


class ContractUnreadable(ValueError):
    """INTEGRATION.md lacks a part the rules need."""


@dataclass(frozen=True)
class ProgramTerms:
    program_id: str
    basis: str  # "gross" or "net"
    bar_minor: int
    zone: str
    currency: str


@dataclass(frozen=True)
class RateRow:
    program_id: str
    tier: str
    rate_bps: int
    effective_from: str


@dataclass(frozen=True)
class Terms:
    fields: dict[str, str]  # role -> payload field name
    amount_column: str
    period_column: str
    programs: dict[str, ProgramTerms]
    schedule: tuple[RateRow, ...]
    rules: dict[str, str]  # rule id -> its text
    families: tuple[str, ...]
    family_lines: dict[str, str]  # family -> what the contract says went wrong
    cutover: str | None

    def field(self, role: str) -> str:
        return self.fields[role]


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """Every Markdown table: (lower-cased header cells, body rows)."""
    out: list[tuple[list[str], list[list[str]]]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if line.lstrip().startswith("|") and re.fullmatch(r"\s*\|[\s|:-]+\|\s*", nxt):
            header = [c.lower() for c in _cells(line)]
            body = []
            i += 2
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                body.append(_cells(lines[i]))
                i += 1
            out.append((header, body))
            continue
        i += 1
    return out


def _table(text: str, *must: str) -> tuple[list[str], list[list[str]]]:
    for header, body in _tables(text):
        if all(any(m in h for h in header) for m in must):
            return header, body
    raise ContractUnreadable(f"INTEGRATION.md has no table with columns {', '.join(must)}")


def _col(header: list[str], name: str) -> int:
    for i, h in enumerate(header):
        if name in h:
            return i
    raise ContractUnreadable(f"INTEGRATION.md table lacks a {name!r} column")


def _code(cell: str) -> str:
    m = re.search(r"`([^`]+)`", cell)
    return (m.group(1) if m else cell).strip()


def _rules(text: str) -> dict[str, str]:
    rules: dict[str, str] = {}
    pattern = re.compile(r"^- \*\*([RW]\d+)\.\*\*\s*(.*)$")
    current: str | None = None
    for line in text.splitlines():
        m = pattern.match(line)
        if m:
            current = m.group(1)
            rules[current] = m.group(2).strip()
        elif current and line.startswith("  ") and line.strip():
            rules[current] += " " + line.strip()
        else:
            current = None
    return rules


def read_terms(text: str) -> Terms:
    header, body = _table(text, "meaning", "field")
    fields: dict[str, str] = {}
    m_col, f_col = _col(header, "meaning"), _col(header, "field")
    for row in body:
        for prefix, role in FIELD_ROLES.items():
            if row[m_col].lower().startswith(prefix):
                fields[role] = _code(row[f_col])
    missing = sorted(set(FIELD_ROLES.values()) - set(fields))
    if missing:
        raise ContractUnreadable(f"INTEGRATION.md names no payload field for {missing}")

    m = re.search(r"sum of\s+`([^`]+)`\s+per\s+`([^`]+)`", text)
    if not m:
        raise ContractUnreadable("INTEGRATION.md does not say which ledger columns to sum")
    amount_column, period_column = m.group(1), m.group(2)

    header, body = _table(text, "program_id", "basis", "zone")
    cols = {k: _col(header, k) for k in ("program_id", "basis", "bar", "zone", "currency")}
    programs: dict[str, ProgramTerms] = {}
    for row in body:
        bar = re.match(r"\s*(\d+)", row[cols["bar"]])
        if not bar:
            raise ContractUnreadable(f"unreadable bar {row[cols['bar']]!r}")
        pid = _code(row[cols["program_id"]])
        programs[pid] = ProgramTerms(
            pid,
            row[cols["basis"]].strip().lower(),
            int(bar.group(1)),
            row[cols["zone"]].strip(),
            row[cols["currency"]].strip(),
        )

    header, body = _table(text, "program_id", "tier", "rate_bps", "effective_from")
    cols = {k: _col(header, k) for k in ("program_id", "tier", "rate_bps", "effective_from")}
    schedule = tuple(
        RateRow(
            _code(r[cols["program_id"]]),
            r[cols["tier"]].strip(),
            int(r[cols["rate_bps"]]),
            r[cols["effective_from"]].strip(),
        )
        for r in body
    )
    families = tuple(re.findall(r"^- `([a-z_]+)`\s*$", text, flags=re.M))
    family_lines: dict[str, str] = {}
    for header, body in _tables(text):
        if header[:1] == ["family"] and len(header) > 1:
            family_lines = {_code(r[0]): r[1] for r in body if len(r) > 1}
    cut = re.search(r"version 1 to version 2 at (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)", text)
    return Terms(
        fields=fields,
        amount_column=amount_column,
        period_column=period_column,
        programs=programs,
        schedule=schedule,
        rules=_rules(text),
        families=families,
        family_lines=family_lines,
        cutover=cut.group(1) if cut else None,
    )
